// The step's Jacobian, stage by stage (semi-implicit Euler: v+ = v + dt a, q+ = q (+) dt v+):
//   a solves rnea(q, v, a) = tau + tau_passive(q, v) + tau_c(q, v), so
//   da/dx = M^-1 (d(tau_passive + tau_c)/dx - d rnea/dx)  (x = dq, v),   da/dtau = M^-1,
// M^-1 from one Cholesky factorisation (cheaper than solving for 3 nv right-hand sides). Then per joint, with
// the joint's step h = dt v+ and its group exponential exp (joint_integrate),
//   dq+ = Ad(exp(-h)) dq + Jexp(h) dt dv+,
// Ad the group's adjoint and Jexp the right Jacobian of exp (1 for 1-DoF joints).
#include "gradyn/sim/step_jacobian.hpp"

#include <unsupported/Eigen/AutoDiff>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/impulse_jacobian.hpp"
#include "gradyn/contact/ipm_contact.hpp"
#include "gradyn/contact/penalty.hpp"
#include "gradyn/contact/penalty_jacobian.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/dynamics/detail/spring.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/dynamics/rnea_derivatives.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {

namespace {

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;

// Ad(exp(-h)) and Jexp(h) of a joint's group at the step h, by forward-mode AD of joint_integrate
// and joint_difference: the general path (planar joints).
using VecIn = Eigen::Ref<const Eigen::VectorXd>;

void group_jacobians_ad(JointType type, const VecIn& q_joint, const VecIn& h, Mat& Ad, Mat& Jexp) {
  const int n = joint_nv(type), nq = joint_nq(type);
  using AD = ADScalar;
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 7, 1> q1(nq);
  joint_integrate<double>(type, q_joint, h, q1);
  Ad.resize(n, n);
  Jexp.resize(n, n);
  for (int first = 0; first < 2 * n; first += kADChunk) {
    Eigen::Matrix<AD, Eigen::Dynamic, 1, 0, 6, 1> dq(n), hh(n), d(n);
    for (int k = 0; k < n; ++k) {
      dq[k] = ad_seed(0.0, k >= first && k < first + kADChunk ? k - first : -1);
      hh[k] = ad_seed(h[k], n + k >= first && n + k < first + kADChunk ? n + k - first : -1);
    }
    Eigen::Matrix<AD, Eigen::Dynamic, 1, 0, 7, 1> qa(nq), qp(nq), qn(nq), q1a(nq);
    for (int k = 0; k < nq; ++k) {
      qa[k] = AD(q_joint[k]);
      q1a[k] = AD(q1[k]);
    }
    joint_integrate<AD>(type, qa, dq, qp);
    joint_integrate<AD>(type, qp, hh, qn);
    joint_difference<AD>(type, q1a, qn, d);
    for (int r = 0; r < n; ++r)
      for (int s = 0; s < kADChunk && first + s < 2 * n; ++s) {
        const int c = first + s;
        const double x = d[r].derivatives().size() ? d[r].derivatives()[s] : 0.0;
        if (c < n) Ad(r, c) = x; else Jexp(r, c - n) = x;
      }
  }
}

// SO(3): Ad(exp(-phi)) = exp(phi)^T, Jexp = the right Jacobian Jl(-phi) (se3_V is Jl).
void so3_jacobians(const Eigen::Vector3d& phi, Eigen::Matrix3d& Rt, Eigen::Matrix3d& Jr) {
  Rt = quaternion_exp<double>(phi).toRotationMatrix().transpose();
  Jr = se3_V<double>(Eigen::Vector3d(-phi));
}

// The free joint's SE(3) step h = [l; phi] (joint_integrate: R+ = R exp(phi), p+ = p + R V(phi) l):
//   Ad = [[Rt, -Rt [V l]x], [0, Rt]],   Jexp = [[Rt V, Rt d(V(phi) l)/dphi], [0, Jr]].
void free_jacobians(const Eigen::Matrix<double, 6, 1>& h, Mat& Ad, Mat& Jexp) {
  const Eigen::Vector3d l = h.head<3>(), phi = h.tail<3>();
  Eigen::Matrix3d Rt, Jr;
  so3_jacobians(phi, Rt, Jr);
  using AD3 = Eigen::AutoDiffScalar<Eigen::Vector3d>;
  Vector3<AD3> phi_ad;
  for (int k = 0; k < 3; ++k) phi_ad[k] = AD3(phi[k], 3, k);
  const Vector3<AD3> Vl = se3_V<AD3>(phi_ad) * l.cast<AD3>();
  Eigen::Matrix3d V, dVl;
  for (int r = 0; r < 3; ++r) dVl.row(r) = Vl[r].derivatives().transpose();
  V = se3_V<double>(phi);
  Eigen::Vector3d vl;
  for (int r = 0; r < 3; ++r) vl[r] = Vl[r].value();
  Ad.setZero(6, 6);
  Jexp.setZero(6, 6);
  Ad.topLeftCorner<3, 3>() = Rt;
  Ad.topRightCorner<3, 3>() = -Rt * skew<double>(vl);
  Ad.bottomRightCorner<3, 3>() = Rt;
  Jexp.topLeftCorner<3, 3>() = Rt * V;
  Jexp.topRightCorner<3, 3>() = Rt * dVl;
  Jexp.bottomRightCorner<3, 3>() = Jr;
}

void group_jacobians(JointType type, const VecIn& q_joint, const VecIn& h, Mat& Ad, Mat& Jexp) {
  switch (type) {
    case JointType::Spherical: {
      Eigen::Matrix3d Rt, Jr;
      so3_jacobians(Eigen::Vector3d(h[0], h[1], h[2]), Rt, Jr);
      Ad = Rt;
      Jexp = Jr;
      return;
    }
    case JointType::Free: free_jacobians(Eigen::Matrix<double, 6, 1>(h), Ad, Jexp); return;
    case JointType::Planar: group_jacobians_ad(type, q_joint, h, Ad, Jexp); return;
    default: Ad.setIdentity(1, 1); Jexp.setIdentity(1, 1); return;
  }
}

// d tau_passive / d dq of joint i's spring: -stiffness (element-wise, by rows) times
// d (q_rest (-) q (+) dq) / d dq, the latter by AD for multi-DoF joints.
void add_spring_terms(const Model& model, const VecRef<double>& q, Eigen::Ref<Eigen::MatrixXd> rhs_q) {
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> d;
  for (int i = 0; i < model.nbodies(); ++i) {
    if (!detail::spring_displacement(model, q, i, d)) continue;
    const int iv = model.idx_v[i], nvi = model.joint_nv(i), iq = model.idx_q[i], nqi = model.joint_nq(i);
    if (nvi == 1) {
      rhs_q(iv, iv) -= model.stiffness[iv];
      continue;
    }
    using AD = ADScalar;
    const JointType type = model.joint_type[i];
    Eigen::Matrix<AD, Eigen::Dynamic, 1, 0, 6, 1> dq(nvi), dd(nvi);
    Eigen::Matrix<AD, Eigen::Dynamic, 1, 0, 7, 1> qa(nqi), qp(nqi), qr(nqi);
    for (int k = 0; k < nqi; ++k) {
      qa[k] = AD(q[iq + k]);
      qr[k] = AD(model.q_rest[iq + k]);
    }
    for (int first = 0; first < nvi; first += kADChunk) {
      for (int k = 0; k < nvi; ++k) dq[k] = ad_seed(0.0, k >= first && k < first + kADChunk ? k - first : -1);
      joint_integrate<AD>(type, qa, dq, qp);
      joint_difference<AD>(type, qr, qp, dd);
      for (int r = 0; r < nvi; ++r)
        for (int s = 0; s < kADChunk && first + s < nvi; ++s)
          rhs_q(iv + r, iv + first + s) -= model.stiffness[iv + r] * dd[r].derivatives()[s];
    }
  }
}

}  // namespace

void step_jacobian(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                   const VecRef<double>& tau, double dt, Integrator integrator, Eigen::Ref<Eigen::MatrixXd> A,
                   Eigen::Ref<Eigen::MatrixXd> B) {
  const int nv = model.nv;
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), nv);
  check_size("tau", tau.size(), nv);
  auto check_shape = [](const char* name, const Eigen::Ref<Eigen::MatrixXd>& X, int rows, int cols) {
    if (X.rows() != rows || X.cols() != cols)
      throw ArgumentError(std::string("step_jacobian: ") + name + ": expected shape (" + std::to_string(rows) + ", " +
                          std::to_string(cols) + "), got (" + std::to_string(X.rows()) + ", " +
                          std::to_string(X.cols()) + ")");
  };
  check_shape("A", A, 2 * nv, 2 * nv);
  check_shape("B", B, 2 * nv, nv);
  if (integrator != Integrator::SemiImplicitEuler)
    throw ArgumentError("step_jacobian: only Integrator::SemiImplicitEuler is supported (for RK4 use step_vjp)");
  const ContactModel contact = model.contact.model;
  if (contact != ContactModel::None) check_contact_settings(model.contact);

  // Forward: the step's accelerations, as step() computes them. With velocity-level contact the
  // velocity rows are those of the step at the total acceleration (v+ - v) / dt with the impulses
  // held, then corrected by the impulses' response (contact/impulse_jacobian.hpp).
  const bool penalty = contact == ContactModel::Penalty;
  const bool impulses = contact == ContactModel::Pgs || contact == ContactModel::Ipm;
  if (penalty) data.contact_tau_total = tau + contact_generalized_forces<double>(model, data, q, v);
  const Eigen::VectorXd& a_free =
      forward_dynamics<double>(model, data, q, v, penalty ? VecRef<double>(data.contact_tau_total) : tau);
  Eigen::VectorXd& v_next = data.k_v[0];
  Eigen::VectorXd& h = data.k_q[0];
  Eigen::VectorXd& a = data.k_v[1];
  if (contact == ContactModel::Pgs)
    pgs_contact_velocity<double>(model, data, q, v, a_free, dt, v_next);
  else if (contact == ContactModel::Ipm)
    ipm_contact_velocity<double>(model, data, q, v, a_free, dt, v_next);
  else
    v_next = v + dt * a_free;
  if (impulses)
    a = (v_next - v) / dt;
  else
    a = a_free;
  h = dt * v_next;

  // Right-hand sides: d(tau_passive + tau_c - rnea)/d(dq, v), then M^-1 [., ., I].
  Eigen::MatrixXd& dq = data.deriv_dtau_dq;
  Eigen::MatrixXd& dv = data.deriv_dtau_dv;
  rnea_derivatives<double>(model, data, q, v, a, dq, dv);
  dq = -dq;
  dv = -dv;
  dv.diagonal() -= model.damping;
  add_spring_terms(model, q, dq);
  if (penalty) penalty_forces_jacobian(model, data, q, v, dq, dv);
  if (impulses) add_impulse_forces_jacobian(model, data, q, v_next, dt, dq);
  // M^-1 explicitly (its rows are B's), then one product for the state columns.
  data.deriv_llt.compute(data.M);
  if (data.deriv_llt.info() != Eigen::Success) data.status |= kStatusSingularInertia;
  Eigen::MatrixXd& Minv = data.deriv_minv;
  Minv.setIdentity();
  data.deriv_llt.solveInPlace(Minv);
  Eigen::MatrixXd& X = data.deriv_rhs;
  X.leftCols(nv).noalias() = Minv * dq;
  X.rightCols(nv).noalias() = Minv * dv;

  // Velocity rows: v+ = v + dt a.
  A.bottomLeftCorner(nv, nv) = dt * X.leftCols(nv);
  A.bottomRightCorner(nv, nv) = dt * X.rightCols(nv);
  A.bottomRightCorner(nv, nv).diagonal().array() += 1.0;
  B.bottomRows(nv) = dt * Minv;
  if (impulses) add_impulse_response(model, data, q, v, v_next, dt, Minv, A.bottomRows(nv), B.bottomRows(nv));

  // Configuration rows: dq+ = Ad dq + Jexp dt dv+, joint by joint.
  Mat Ad, Jexp;
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 7, 1> qj;
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> hj;
  for (int i = 0; i < model.nbodies(); ++i) {
    const int iv = model.idx_v[i], n = model.joint_nv(i);
    if (n == 0) continue;
    if (n == 1) {  // R: Ad = 1, Jexp = 1
      A.row(iv) = dt * A.row(nv + iv);
      A(iv, iv) += 1.0;
      B.row(iv) = dt * B.row(nv + iv);
      continue;
    }
    qj = q.segment(model.idx_q[i], model.joint_nq(i));
    hj = h.segment(iv, n);
    group_jacobians(model.joint_type[i], qj, hj, Ad, Jexp);
    const Mat JexpDt = dt * Jexp;
    A.block(iv, 0, n, 2 * nv).noalias() = JexpDt * A.block(nv + iv, 0, n, 2 * nv);
    A.block(iv, iv, n, n) += Ad;
    B.block(iv, 0, n, nv).noalias() = JexpDt * B.block(nv + iv, 0, n, nv);
  }
}

}  // namespace gradyn
