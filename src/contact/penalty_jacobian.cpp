// Per contact (geom a on body A, geom b on body B; see penalty.hpp for the force law):
//   W = [p x f; f], the world wrench (about the origin) of the force f on B at the point p; -W on A.
//   tau_c = sum over l on B's path to the root of S_l^T W, minus the same over A's path.
// A column of d/dq moves the subtree of joint j by the world twist xi = S_jk: the geoms of moved
// bodies by xi (collide_jacobian gives d(p, n, depth)), their world twists by xi x (V - V_p)
// (rnea_derivatives.cpp), and every S_l below j is carried, which adds -S_l^T (xi x* W). A column
// of d/dv changes the twist of every moved body by xi. Then
//   du = dV_B(p) - dV_A(p) + (w_B - w_A) x dp,   df = G (d depth, dn, du)   (G: AD of the force law)
//   dW = [dp x f + p x df; df].
#include "gradyn/contact/penalty_jacobian.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide_vjp.hpp"
#include "gradyn/contact/detail/contact_force_derivatives.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/contact/penalty.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {

namespace {

using detail::add_path_column;
using detail::is_ancestor_or_self;
using detail::point_velocity;

// d f / d(depth, normal, u) (3 x 7) of one contact's force law, by forward-mode AD.
Eigen::Matrix<double, 3, 7> force_law_jacobian(const ContactSettings& settings, double mu, double depth,
                                               const Eigen::Vector3d& normal, const Eigen::Vector3d& u) {
  using AD = ADScalar;
  const AD d = ad_seed(depth, 0);
  Vector3<AD> n, uu;
  for (int i = 0; i < 3; ++i) {
    n[i] = ad_seed(normal[i], 1 + i);
    uu[i] = ad_seed(u[i], 4 + i);
  }
  const AD un = uu.dot(n);
  const AD fn = hunt_crossley_force<AD>(settings, d, -un);
  Vector3<AD> f = fn * n;
  if (fn.value() > 0.0) f += friction_force<AD>(settings, AD(mu), fn, Vector3<AD>(uu - un * n));
  Eigen::Matrix<double, 3, 7> G = Eigen::Matrix<double, 3, 7>::Zero();
  for (int i = 0; i < 3; ++i)
    if (f[i].derivatives().size() > 0) G.row(i) = f[i].derivatives().head<7>().transpose();
  return G;
}

// The wrench change dW of one contact for given motions of its two bodies' poses (xi_A, xi_B) and
// twists (dV_A, dV_B).
struct ContactTerms {
  Eigen::Vector3d p, f;
  Vector6<double> V_A, V_B;
  const ContactJacobian* J;
  Eigen::Matrix<double, 3, 7> G;

  Vector6<double> wrench_change(const Vector6<double>& xi_A, const Vector6<double>& xi_B, const Vector6<double>& dV_A,
                                const Vector6<double>& dV_B) const {
    const Eigen::Matrix<double, 13, 1> dc = J->leftCols<6>() * xi_A + J->rightCols<6>() * xi_B;
    const Eigen::Vector3d dp = dc.head<3>();
    const Eigen::Vector3d du = point_velocity(dV_B, p) - point_velocity(dV_A, p) +
                               (V_B.head<3>() - V_A.head<3>()).cross(dp);
    Eigen::Matrix<double, 7, 1> dx;
    dx << dc[12], dc.segment<3>(3), du;
    const Eigen::Vector3d df = G * dx;
    Vector6<double> dW;
    dW << dp.cross(f) + p.cross(df), df;
    return dW;
  }
};

void add_contact_terms(const Model& model, Data& data, int k, Eigen::Ref<Eigen::MatrixXd> dtau_dq,
                       Eigen::Ref<Eigen::MatrixXd> dtau_dv) {
  const Contact& c = data.contacts[k];
  const Geom& ga = model.geoms[c.geom_a];
  const Geom& gb = model.geoms[c.geom_b];
  const int A = ga.body, B = gb.body;
  ContactTerms t;
  t.p = c.point;
  t.f = data.contact_force[k];
  t.V_A = A >= 0 ? data.ov[A] : Vector6<double>::Zero();
  t.V_B = B >= 0 ? data.ov[B] : Vector6<double>::Zero();
  t.J = &data.deriv_contact_jac[k];
  const Eigen::Vector3d u = point_velocity(t.V_B, t.p) - point_velocity(t.V_A, t.p);
  t.G = force_law_jacobian(model.contact, model.geoms[c.friction_geom].friction, c.depth, c.normal, u);
  if (t.G.isZero(0.0) && t.f.isZero(0.0)) return;  // not pressing: no force, no derivative
  Vector6<double> W;
  W << t.p.cross(t.f), t.f;
  const Vector6<double> zero = Vector6<double>::Zero();
  for (int j = 0; j < model.nbodies(); ++j) {
    const bool moves_A = A >= 0 && is_ancestor_or_self(model, j, A);
    const bool moves_B = B >= 0 && is_ancestor_or_self(model, j, B);
    if (!moves_A && !moves_B) continue;
    const int p = model.parent[j];
    const Vector6<double> Vp = p >= 0 ? data.ov[p] : zero;
    for (int m = 0; m < model.joint_nv(j); ++m) {
      const int col = model.idx_v[j] + m;
      const Vector6<double> xi = data.oS[j].col(m);
      // configuration column
      const Vector6<double> xi_A = moves_A ? xi : zero, xi_B = moves_B ? xi : zero;
      const Vector6<double> dV_A = moves_A ? cross_motion<double>(xi, Vector6<double>(t.V_A - Vp)) : zero;
      const Vector6<double> dV_B = moves_B ? cross_motion<double>(xi, Vector6<double>(t.V_B - Vp)) : zero;
      const Vector6<double> dWq = t.wrench_change(xi_A, xi_B, dV_A, dV_B);
      if (B >= 0) add_path_column(model, data, B, j, &xi, dWq, W, 1.0, dtau_dq, col);
      if (A >= 0) add_path_column(model, data, A, j, &xi, dWq, W, -1.0, dtau_dq, col);
      // velocity column
      const Vector6<double> dWv = t.wrench_change(zero, zero, moves_A ? xi : zero, moves_B ? xi : zero);
      if (B >= 0) add_path_column(model, data, B, j, nullptr, dWv, W, 1.0, dtau_dv, col);
      if (A >= 0) add_path_column(model, data, A, j, nullptr, dWv, W, -1.0, dtau_dv, col);
    }
  }
}

bool any_limit_violated(const Model& model, const VecRef<double>& q) {
  for (int i = 0; i < model.nbodies(); ++i) {
    if (!joint_has_limited_coordinates(model.joint_type[i])) continue;
    const int iq = model.idx_q[i];
    for (int k = 0; k < model.joint_nq(i); ++k)
      if (q[iq + k] < model.lower_limit[iq + k] || q[iq + k] > model.upper_limit[iq + k]) return true;
  }
  for (const FixedTendon& tendon : model.tendons) {
    const double length = tendon_length<double>(model, tendon, q);
    if (length < tendon.lower || length > tendon.upper) return true;
  }
  return false;
}

// The joint-limit forces act within one joint each (a tendon's on its joints), the joint friction
// within one DoF and a coupling on its two joints: one adjoint per row of a limited, frictional or coupled joint gives
// that row of the Jacobian; integrate_vjp at dv = 0 turns the ambient q adjoint into a tangent one.
void add_limit_terms(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                     Eigen::Ref<Eigen::MatrixXd> dtau_dq, Eigen::Ref<Eigen::MatrixXd> dtau_dv) {
  const bool limits = any_limit_violated(model, q), constraints = has_joint_constraints(model);
  if (!limits && !constraints) return;
  Eigen::VectorXd& tau_bar = data.v_tmp;
  Eigen::VectorXd& v_bar = data.dv_tmp;
  Eigen::VectorXd& q_bar = data.q_tmp;
  for (int i = 0; i < model.nbodies(); ++i) {
    if (!constraints && !joint_has_limited_coordinates(model.joint_type[i])) continue;
    for (int r = model.idx_v[i]; r < model.idx_v[i] + model.joint_nv(i); ++r) {
      tau_bar.setZero();
      tau_bar[r] = 1.0;
      q_bar.setZero();
      v_bar.setZero();
      if (limits) add_joint_limit_forces_vjp<double>(model, q, v, tau_bar, q_bar, v_bar);
      if (constraints) add_joint_constraint_forces_vjp<double>(model, q, v, tau_bar, q_bar, v_bar);
      dtau_dv.row(r) += v_bar.transpose();
      tau_bar.setZero();  // reused as the zero tangent step, then the tangent adjoint
      Eigen::VectorXd& tangent_bar = data.adj_contact_tau_bar;  // scratch (nv)
      tangent_bar.setZero();
      integrate_vjp<double>(model, q, tau_bar, q_bar, data.step_adj_q_bar, tangent_bar);
      dtau_dq.row(r) += tangent_bar.transpose();
    }
  }
}

}  // namespace

void penalty_forces_jacobian(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                             Eigen::Ref<Eigen::MatrixXd> dtau_dq, Eigen::Ref<Eigen::MatrixXd> dtau_dv) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  if (model.contact.model != ContactModel::Penalty)
    throw ArgumentError("penalty_forces_jacobian: the model's contact model is '" +
                        std::string(contact_model_name(model.contact.model)) + "', not 'penalty'");
  collide_jacobian(model, data, data.deriv_contact_jac);
  for (int k = 0; k < data.ncontacts; ++k) add_contact_terms(model, data, k, dtau_dq, dtau_dv);
  add_limit_terms(model, data, q, v, dtau_dq, dtau_dv);
}

}  // namespace gradyn
