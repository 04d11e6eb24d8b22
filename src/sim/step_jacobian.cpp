// The step's Jacobian, stage by stage (semi-implicit Euler: v+ = v + dt a, q+ = q (+) dt v+):
//   a solves rnea(q, v, a) = tau + tau_passive(q, v) + tau_c(q, v), so
//   da/dx = M^-1 (d(tau_passive + tau_c)/dx - d rnea/dx)  (x = dq, v),   da/dtau = M^-1,
// M^-1 explicitly from M's sparse LTL factorisation (which without impulses also gives a, so no ABA
// pass), then one product for the 2 nv state columns. Then per joint, with
// the joint's step h = dt v+ and its group exponential exp (joint_integrate),
//   dq+ = Ad(exp(-h)) dq + Jexp(h) dt dv+,
// Ad the group's adjoint and Jexp the right Jacobian of exp (1 for 1-DoF joints).
#include "gradyn/sim/step_jacobian.hpp"

#include <cmath>
#include <unsupported/Eigen/AutoDiff>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/contact_models.hpp"
#include "gradyn/contact/impulse_jacobian.hpp"
#include "gradyn/dynamics/actuation.hpp"
#include "gradyn/dynamics/detail/network_inputs.hpp"
#include "gradyn/dynamics/network_forces.hpp"
#include "gradyn/dynamics/detail/rnea_derivatives_passes.hpp"
#include "gradyn/dynamics/detail/spring.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/dynamics/rnea_derivatives.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/stages.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {

namespace {

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;

// Ad(exp(-h)) and Jexp(h) of a joint's group at the step h, by forward-mode AD of joint_integrate
// and joint_difference: the general path (planar joints, and any group joint without a closed form).
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

[[gnu::flatten]] void group_jacobians(JointType type, const VecIn& q_joint, const VecIn& h, Mat& Ad, Mat& Jexp) {
  switch (type) {
    case JointType::Spherical: {
      Eigen::Matrix3d Rt, Jr;
      so3_jacobians(Eigen::Vector3d(h[0], h[1], h[2]), Rt, Jr);
      Ad = Rt;
      Jexp = Jr;
      return;
    }
    case JointType::Free: free_jacobians(Eigen::Matrix<double, 6, 1>(h), Ad, Jexp); return;
    default:  // closed forms above; any other group joint by forward-mode AD of its own kernels
      if (joint_is_group(type)) {
        group_jacobians_ad(type, q_joint, h, Ad, Jexp);
      } else {  // a vector space: the identity
        Ad.setIdentity(joint_nv(type), joint_nv(type));
        Jexp.setIdentity(joint_nv(type), joint_nv(type));
      }
      return;
  }
}

// out = J X for a 6 x 6 J, column by column with fixed-size vectors: each entry summed over k in
// increasing order, as the dynamic-size product does (the same values), without its per-entry loops.
void free_joint_rows(const Mat& J, const Eigen::Ref<const Eigen::MatrixXd>& X, Eigen::Ref<Eigen::MatrixXd> out) {
  const Eigen::Matrix<double, 6, 6> J6 = J;
  for (Eigen::Index c = 0; c < X.cols(); ++c) {
    const Eigen::Matrix<double, 6, 1> x = X.col(c);
    Eigen::Matrix<double, 6, 1> acc = J6.col(0) * x[0];
    for (int k = 1; k < 6; ++k) acc += J6.col(k) * x[k];
    out.col(c) = acc;
  }
}

// The dofs on each dof's path to the root, as ranges of consecutive dofs (Data::deriv_path).
struct DofPaths {
  const int* begin;
  const int* ranges;
  // f(first, last) for each range of k's ancestors (its path without k).
  template <class F>
  void for_each_ancestor_range(int k, F&& f) const {
    for (int r = begin[k]; r < begin[k + 1]; ++r) {
      const int last = r + 1 == begin[k + 1] ? ranges[2 * r + 1] - 1 : ranges[2 * r + 1];
      if (ranges[2 * r] < last) f(ranges[2 * r], last);
    }
  }
  // f(first, last) for each range of k's path (k and its ancestors), in increasing order.
  template <class F>
  void for_each_path_range(int k, F&& f) const {
    for (int r = begin[k]; r < begin[k + 1]; ++r) f(ranges[2 * r], ranges[2 * r + 1]);
  }
};

// M = L^T L with L lower triangular (Featherstone's LTL factorisation, RBDA 6.5): from the last
// dof up, a dof's row of L updates only entries between its ancestors, so L keeps the tree's
// sparsity. Stored as LT = L^T, column k (row k of L) nonzero on k's path only. The loops run over
// the ancestors i (by ranges) but along whole column heads [0, i]: the entries off the pattern
// are zeros copied from M (whose off-pattern entries are zero), and short dense loops beat
// index lists at this size. False if M is not positive definite.
bool ltl_factor(const Eigen::MatrixXd& M, const DofPaths& paths, Eigen::MatrixXd& LT) {
  const int n = static_cast<int>(M.rows());
  for (int k = 0; k < n; ++k) LT.col(k).head(k + 1) = M.col(k).head(k + 1);
  bool ok = true;
  for (int k = n - 1; k >= 0; --k) {
    double* lk = LT.col(k).data();
    if (!(lk[k] > 0)) ok = false;
    const double d = std::sqrt(lk[k]), inv = 1.0 / d;
    for (int i = 0; i < k; ++i) lk[i] *= inv;
    lk[k] = d;
    paths.for_each_ancestor_range(k, [&](int first, int last) {
      for (int i = first; i < last; ++i) {  // M(j, i) -= L(k, i) L(k, j) for j on i's path
        const double c = lk[i];
        double* li = LT.col(i).data();
        for (int j = 0; j <= i; ++j) li[j] -= c * lk[j];
      }
    });
  }
  return ok;
}

// x <- M^-1 x: L^T y = x (leaves to root), then L x = y (root to leaves).
void ltl_solve_in_place(const Eigen::MatrixXd& LT, Eigen::VectorXd& x) {
  const int n = static_cast<int>(x.size());
  for (int k = n - 1; k >= 0; --k) {
    const double* lk = LT.col(k).data();
    const double xk = x[k] /= lk[k];
    for (int i = 0; i < k; ++i) x[i] -= lk[i] * xk;
  }
  for (int k = 0; k < n; ++k) {
    const double* lk = LT.col(k).data();
    double s = x[k];
    for (int i = 0; i < k; ++i) s -= lk[i] * x[i];
    x[k] = s / lk[k];
  }
}

// f.template operator()<R>(row) for consecutive chunks of R rows covering [first, last), R = 16, 8,
// 4, 2, 1: fixed-size chunks, whose partial sums stay in registers.
template <class F>
[[gnu::always_inline]] inline void for_each_row_chunk(int first, int last, F&& f) {
  int row = first;
  for (; row + 16 <= last; row += 16) f.template operator()<16>(row);
  if (row + 8 <= last) f.template operator()<8>(row), row += 8;
  if (row + 4 <= last) f.template operator()<4>(row), row += 4;
  if (row + 2 <= last) f.template operator()<2>(row), row += 2;
  if (row < last) f.template operator()<1>(row);
}

// M^-1 = L^-1 L^-T. L^-1 has L's sparsity; with W = L^-T (column k nonzero on k's path),
// L(k, k) W(., k) = e_k - sum over k's ancestors i of L(k, i) W(., i), and M^-1(i, j) = W(., i) . W(., j),
// to which only the common ancestors of i and j contribute (W(., j) is zero past j). W's strictly
// lower triangle (unused by that recursion) receives W^T, so that M^-1's column j accumulates
// contiguous columns, sum over k on j's path of W(k, j) W^T(., k): the same products in the same
// order as the dot products, but independent sums a vector unit runs side by side. path: n ints of
// scratch (Data::deriv_index_scratch).
void ltl_inverse(const Eigen::MatrixXd& LT, const DofPaths& paths, Eigen::MatrixXd& W, Eigen::MatrixXd& Minv,
                 int* path) {
  const int n = static_cast<int>(LT.rows());
  for (int k = 0; k < n; ++k) {
    const double* lk = LT.col(k).data();
    double* wk = W.col(k).data();
    for (int j = 0; j <= k; ++j) wk[j] = 0.0;
    paths.for_each_ancestor_range(k, [&](int first, int last) {
      for (int i = first; i < last; ++i) {
        const double c = lk[i];
        const double* wi = W.col(i).data();
        for (int j = 0; j <= i; ++j) wk[j] -= c * wi[j];
      }
    });
    const double inv = 1.0 / lk[k];
    for (int j = 0; j < k; ++j) wk[j] *= inv;
    wk[k] = inv;
    for (int j = 0; j < k; ++j) W(k, j) = wk[j];
  }
  for (int j = 0; j < n; ++j) {
    int path_size = 0;
    paths.for_each_path_range(j, [&](int first, int last) {
      for (int k = first; k < last; ++k) path[path_size++] = k;
    });
    double* mj = Minv.col(j).data();
    for_each_row_chunk(j, n, [&]<int R>(int row) {
      using Chunk = Eigen::Matrix<double, R, 1>;
      Chunk acc = Chunk::Zero();
      for (int t = 0; t < path_size; ++t) acc.noalias() += W(path[t], j) * Eigen::Map<const Chunk>(W.col(path[t]).data() + row);
      Eigen::Map<Chunk>(mj + row) = acc;
    });
    for (int i = j + 1; i < n; ++i) Minv(j, i) = mj[i];
  }
}

// d tau_passive / d dq of joint i's spring: -stiffness (element-wise, by rows) times
// d (q_rest (-) q (+) dq) / d dq, the latter by AD for multi-DoF joints.
[[gnu::flatten]] void add_spring_terms(const Model& model, const VecRef<double>& q, Eigen::Ref<Eigen::MatrixXd> rhs_q) {
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

// d tau_passive / d (dq, v) of the fixed tendons' spring-dampers: -stiffness J^T J and -damping J^T J
// (their joints have one DoF: tangent = coordinate).
void add_tendon_spring_terms(const Model& model, Eigen::Ref<Eigen::MatrixXd> rhs_q, Eigen::Ref<Eigen::MatrixXd> rhs_v) {
  for (const FixedTendon& tendon : model.tendons)
    for (size_t a = 0; a < tendon.joints.size(); ++a)
      for (size_t b = 0; b < tendon.joints.size(); ++b) {
        const int ia = model.idx_v[tendon.joints[a]], ib = model.idx_v[tendon.joints[b]];
        const double cc = tendon.coefs[a] * tendon.coefs[b];
        rhs_q(ia, ib) -= tendon.stiffness * cc;
        rhs_v(ia, ib) -= tendon.damping * cc;
      }
}

// acc = sum over t of x[nz[t]] M^-1(row0 .. row0 + R, nz[t]): R accumulators in registers.
template <int R>
[[gnu::always_inline]] inline void minv_times_sparse_column(const Eigen::MatrixXd& Minv, const double* x, const int* nz,
                                                             int nnz, int row0, Eigen::Matrix<double, R, 1>& acc) {
  acc.setZero();
  for (int t = 0; t < nnz; ++t)
    acc.noalias() += x[nz[t]] * Eigen::Map<const Eigen::Matrix<double, R, 1>>(Minv.col(nz[t]).data() + row0);
}

// Without contact forces, the state columns of both row blocks in one pass over dtau_dx:
//   Av = dt M^-1 dtau_dx + [0 I],   Aq = dt Av + [I 0]
// (Aq as for 1-DoF joints; the multi-DoF joints' rows are redone after). A dof's column of
// dtau_dx is nonzero only on the rows of its path and subtree (rnea's partials, the damping
// diagonal, the springs' joint blocks), so the product runs over each column's nonzeros only:
// about half of laikago's entries, and no packing for a general product. nz: nv ints of scratch.
void state_rows_without_contact(const Eigen::MatrixXd& Minv, const Eigen::MatrixXd& dtau_dx, double dt,
                                Eigen::Ref<Eigen::MatrixXd> A, int* nz) {
  const int nv = static_cast<int>(Minv.rows());
  for (int c = 0; c < 2 * nv; ++c) {
    const double* x = dtau_dx.col(c).data();
    int nnz = 0;
    for (int r = 0; r < nv; ++r)
      if (x[r] != 0.0) nz[nnz++] = r;
    double* av = A.col(c).data() + nv;
    double* aq = A.col(c).data();
    auto rows = [&]<int R>(int row0) {
      Eigen::Matrix<double, R, 1> acc;
      minv_times_sparse_column<R>(Minv, x, nz, nnz, row0, acc);
      for (int s = 0; s < R; ++s) {
        const double y = dt * acc[s];
        av[row0 + s] = y;
        aq[row0 + s] = dt * y;
      }
    };
    for_each_row_chunk(0, nv, rows);
    if (c >= nv) {
      av[c - nv] += 1.0;
      aq[c - nv] = dt * av[c - nv];
    } else {
      aq[c] += 1.0;
    }
  }
}

// The step Jacobian by reverse mode, one step_vjp per output: for networks at contact sites, and
// for what a contact model's jacobian_by_reverse_mode names (the velocity-level models with dry joint
// friction, couplings or connections, whose rows the forward-mode impulse terms of
// contact/impulse_jacobian.hpp do not cover; body connections under penalty, which
// penalty_jacobian's per-contact force-law derivative does not include). Tangent coordinates on
// both sides: an output row r of
// q+'s tangent is read through the ambient cotangent c_r = D (D^T D)^-1 e_r (D = d integrate(q+, d) /
// d d at d = 0: c_r^T D = e_r^T), and the ambient q adjoint goes to q's tangent through integrate_vjp
// at a zero step. Allocates its scratch (2 nv step_vjp calls dominate the cost anyway).
void reverse_mode_step_jacobian(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                                const VecRef<double>& tau, const VecRef<double>& ctrl, double dt, Integrator integrator,
                                Eigen::Ref<Eigen::MatrixXd> A, Eigen::Ref<Eigen::MatrixXd> B,
                                Eigen::Ref<Eigen::MatrixXd> B_ctrl) {
  const int nq = model.nq, nv = model.nv, nu = model.nu();
  const bool with_ctrl = B_ctrl.size() != 0;
  // B_ctrl at no controls given: the derivative at zero controls (step reads an empty ctrl as zeros)
  const Eigen::VectorXd controls = with_ctrl && ctrl.size() == 0 ? Eigen::VectorXd::Zero(nu) : Eigen::VectorXd(ctrl);
  Eigen::VectorXd q_next(nq), v_next(nv);
  step<double>(model, data, q, v, tau, controls, dt, integrator, q_next, v_next);
  const Eigen::VectorXd zero_v = Eigen::VectorXd::Zero(nv);
  // D^T, row by row of the ambient basis: D^T e_i = integrate_vjp's dv_bar for q_out_bar = e_i
  Eigen::MatrixXd DT(nv, nq);
  Eigen::VectorXd unused(nq), column(nv);
  for (int i = 0; i < nq; ++i) {
    unused.setZero();
    column.setZero();
    integrate_vjp<double>(model, q_next, zero_v, Eigen::VectorXd::Unit(nq, i), unused, column);
    DT.col(i) = column;
  }
  const Eigen::MatrixXd C = DT.transpose() * (DT * DT.transpose()).inverse();  // nq x nv: columns c_r
  Eigen::VectorXd q_bar(nq), v_bar(nv), tau_bar(nv), ctrl_bar(nu), tangent(nv), q_next_bar(nq), v_next_bar(nv);
  for (int r = 0; r < 2 * nv; ++r) {
    q_next_bar = r < nv ? Eigen::VectorXd(C.col(r)) : Eigen::VectorXd::Zero(nq);
    v_next_bar = r < nv ? zero_v : Eigen::VectorXd::Unit(nv, r - nv);
    q_bar.setZero();
    v_bar.setZero();
    tau_bar.setZero();
    ctrl_bar.setZero();
    ModelTangent model_bar(model);
    step_vjp<double>(model, data, q, v, tau, controls, dt, integrator, q_next_bar, v_next_bar, q_bar, v_bar, tau_bar,
                     ctrl_bar, model_bar);
    tangent.setZero();
    unused.setZero();
    integrate_vjp<double>(model, q, zero_v, q_bar, unused, tangent);
    A.row(r) << tangent.transpose(), v_bar.transpose();
    B.row(r) = tau_bar.transpose();
    if (with_ctrl) B_ctrl.row(r) = ctrl_bar.transpose();
  }
}

}  // namespace

void step_jacobian(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                   const VecRef<double>& tau, const VecRef<double>& ctrl, double dt, Integrator integrator,
                   Eigen::Ref<Eigen::MatrixXd> A, Eigen::Ref<Eigen::MatrixXd> B, Eigen::Ref<Eigen::MatrixXd> B_ctrl) {
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
  if (B_ctrl.size() != 0) check_shape("B_ctrl", B_ctrl, 2 * nv, model.nu());
  check_step_options(model.contact, StepOptions{dt, integrator});
  if (integrator != Integrator::SemiImplicitEuler)
    throw ArgumentError("step_jacobian: integrator 'rk4' is not supported: the step Jacobian is that of the "
                        "semi-implicit Euler step (integrator 'euler'; Integrator::SemiImplicitEuler in C++); for RK4 use "
                        "step_vjp");
  const ContactModel contact = model.contact.model;
  const ContactLevel level = contact_level(contact);
  if (contact != ContactModel::None) check_contact_settings(model.contact);
  if (detail::has_contact_networks(model) ||
      visit_contact_model(contact, [&](auto m) { return decltype(m)::jacobian_by_reverse_mode(model); })) {
    reverse_mode_step_jacobian(model, data, q, v, tau, ctrl, dt, integrator, A, B, B_ctrl);
    return;
  }

  // Forward: the step's accelerations, as step() computes them. With velocity-level contact the
  // velocity rows are those of the step at the total acceleration (v+ - v) / dt with the impulses
  // held, then corrected by the impulses' response (contact/impulse_jacobian.hpp).
  const bool forces = level == ContactLevel::Force;
  const bool impulses = level == ContactLevel::Impulse;
  Eigen::VectorXd& v_next = data.k_v[0];
  Eigen::VectorXd& h = data.k_q[0];
  Eigen::VectorXd& a = data.k_v[1];
  Eigen::MatrixXd& LT = data.deriv_LT;
  const DofPaths dof_paths{data.deriv_path_begin.data(), data.deriv_path.data()};
  if (impulses) {
    const Eigen::VectorXd& a_free = stage_accelerations<double>(model, data, q, v, tau, ctrl);
    stage_constraints<double>(model, data, q, v, a_free, dt, v_next);
    a = (v_next - v) / dt;
    // The contact stage reads aba's poses and twists but writes none of them (neither does crba,
    // for the ipm, beyond the same poses, which this pass rebuilds; its composite inertias are oYc,
    // not the oIc that rnea_derivatives fills).
    detail::rnea_derivatives_kinematics(model, data, q, v, /*aba_is_current=*/true);
    detail::rnea_derivatives_forces(model, data, a);
    if (!ltl_factor(data.M, dof_paths, LT)) data.status |= kStatusSingularInertia;
  } else {
    // Without impulses no ABA pass: the derivative pass builds M anyway, so a solves
    // M a = tau_total - rnea(q, v, 0) with the factorisation that also gives M^-1.
    // the applied forces as the accelerations stage forms them (sim/stages.cpp)
    const bool actuated = detail::has_applied_forces(model);
    if (actuated) detail::applied_forces<double>(model, data, q, v, tau, ctrl);
    else if (ctrl.size() != 0) actuation<double>(model, data, q, v, ctrl);  // throws: no actuator takes these controls
    const VecRef<double> applied = actuated ? VecRef<double>(data.applied_tau) : tau;
    visit_contact_model(contact, [&](auto contact_model) {
      using Kind = decltype(contact_model);
      if constexpr (Kind::level == ContactLevel::Force)
        data.contact_tau_total = applied + Kind::template generalized_forces<double>(model, data, q, v);
    });
    data.tau_total = (forces ? VecRef<double>(data.contact_tau_total) : applied) + passive_forces<double>(model, data, q, v);
    detail::rnea_derivatives_kinematics(model, data, q, v);
    data.ddq.setZero();
    detail::rnea_derivatives_forces(model, data, data.ddq);  // the bias forces rnea(q, v, 0)
    for (int i = 0; i < model.nbodies(); ++i) {
      const int iv = model.idx_v[i], nvi = model.joint_nv(i);
      // (in two statements: a - B c as one would evaluate into a temporary)
      data.ddq.segment(iv, nvi) = data.tau_total.segment(iv, nvi);
      data.ddq.segment(iv, nvi).noalias() -= data.oS[i].transpose() * data.deriv_Fc[i];
    }
    if (!ltl_factor(data.M, dof_paths, LT)) data.status |= kStatusSingularInertia;
    ltl_solve_in_place(LT, data.ddq);
    detail::rnea_derivatives_forces(model, data, data.ddq);
    a = data.ddq;
    v_next = v + dt * a;
  }
  h = dt * v_next;

  // Right-hand sides: d(tau_passive + tau_c - rnea)/d(dq, v), then M^-1 [., ., I].
  Eigen::MatrixXd& dtau_dx = data.deriv_dtau_dx;
  auto dq = dtau_dx.leftCols(nv);
  auto dv = dtau_dx.rightCols(nv);
  detail::rnea_derivatives_partials(model, data, -1.0, dq, dv);
  dv.diagonal() -= model.damping;
  add_spring_terms(model, q, dq);
  add_tendon_spring_terms(model, dq, dv);
  visit_contact_model(contact, [&](auto contact_model) {
    using Kind = decltype(contact_model);
    if constexpr (Kind::level == ContactLevel::Force) Kind::forces_jacobian(model, data, q, v, dq, dv);
  });
  if (impulses) add_impulse_forces_jacobian(model, data, q, v_next, dt, dq);
  if (model.nu() > 0) actuation_derivatives(model, q, v, ctrl, dtau_dx, data.deriv_dtau_dctrl);
  if (!model.networks.empty()) network_forces_derivatives(model, data, q, v, ctrl, dtau_dx, data.deriv_dtau_dctrl);
  // M^-1 explicitly (its rows are B's), then one product for the state columns.
  Eigen::MatrixXd& Minv = data.deriv_minv;
  ltl_inverse(LT, dof_paths, data.deriv_LinvT, Minv, data.deriv_index_scratch.data());

  // Velocity rows: v+ = v + dt a, i.e. [dt M^-1 dtau_dx + [0 I], dt M^-1] with the impulses held;
  // their response maps those rows by T and adds [QR 0] (impulse_jacobian.hpp), applied to M^-1
  // before the product. T lives in B's configuration rows until those are formed.
  auto Av = A.bottomRows(nv);
  auto Bv = B.bottomRows(nv);
  auto T = B.topRows(nv);
  if (impulses && impulse_response(model, data, q, v, v_next, dt, Minv, T, Av)) {
    Bv.noalias() = (dt * T) * Minv;
    Av.noalias() += Bv * dtau_dx;
    Av.rightCols(nv) += T;
  } else if (level == ContactLevel::None) {
    state_rows_without_contact(Minv, dtau_dx, dt, A, data.deriv_index_scratch.data());
    for (int j = 0; j < nv; ++j) {
      const double* m = Minv.col(j).data();
      double* bq = B.col(j).data();
      double* bv = bq + nv;
      for (int i = 0; i < nv; ++i) {
        bv[i] = dt * m[i];
        bq[i] = dt * bv[i];
      }
    }
  } else {
    Av.noalias() = (dt * Minv) * dtau_dx;
    Av.rightCols(nv).diagonal().array() += 1.0;
    Bv = dt * Minv;
  }

  // Configuration rows: dq+ = Ad dq + Jexp dt dv+. For 1-DoF joints (R) Ad = Jexp = 1: all rows as
  // if every joint were one (column by column, contiguous), then the multi-DoF joints' rows (the
  // path without contact formed the former already).
  if (level != ContactLevel::None) {
    A.topRows(nv) = dt * A.bottomRows(nv);
    A.topLeftCorner(nv, nv).diagonal().array() += 1.0;
    B.topRows(nv) = dt * B.bottomRows(nv);
  }
  Mat Ad, Jexp;
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 7, 1> qj;
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> hj;
  for (int i = 0; i < model.nbodies(); ++i) {
    const int iv = model.idx_v[i], n = model.joint_nv(i);
    if (n <= 1) continue;
    qj = q.segment(model.idx_q[i], model.joint_nq(i));
    hj = h.segment(iv, n);
    group_jacobians(model.joint_type[i], qj, hj, Ad, Jexp);
    const Mat JexpDt = dt * Jexp;
    if (n == 6) {  // free joint: fixed-size columns, the dynamic-size product's sums in its order
      free_joint_rows(JexpDt, A.middleRows(nv + iv, 6), A.middleRows(iv, 6));
      free_joint_rows(JexpDt, B.middleRows(nv + iv, 6), B.middleRows(iv, 6));
    } else {
      A.block(iv, 0, n, 2 * nv).noalias() = JexpDt * A.block(nv + iv, 0, n, 2 * nv);
      B.block(iv, 0, n, nv).noalias() = JexpDt * B.block(nv + iv, 0, n, nv);
    }
    A.block(iv, iv, n, n) += Ad;
  }
  // The controls act through the actuators' forces: B_ctrl = B d tau/d ctrl, one column of B per
  // actuator (it acts on its own DoF) scaled by gear d force/d ctrl; a network fed controls makes
  // d tau/d ctrl a full matrix.
  if (B_ctrl.size() != 0 && !model.networks.empty()) {
    B_ctrl.noalias() = B * data.deriv_dtau_dctrl;
  } else if (B_ctrl.size() != 0) {
    for (int k = 0; k < model.nu(); ++k) {
      const int iv = model.idx_v[model.actuators[k].joint];
      B_ctrl.col(k) = data.deriv_dtau_dctrl(iv, k) * B.col(iv);
    }
  }
}

}  // namespace gradyn
