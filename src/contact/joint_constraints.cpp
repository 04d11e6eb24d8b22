#include "gradyn/contact/joint_constraints.hpp"

#include <cmath>

namespace gradyn {

template <class S>
bool has_joint_constraints(const ModelTpl<S>& model) {
  return !model.joint_couplings.empty() || !model.body_connections.empty() || joint_friction_rows<S>(model) > 0;
}

template <class S>
int joint_friction_rows(const ModelTpl<S>& model) {
  int count = 0;
  for_each_joint_friction_row<S>(model, [&](int, int) { ++count; });
  return count;
}

namespace {

// x = q2 - q2_ref (0 without joint2), and p(x) with its first three derivatives by Horner's rule.
template <class S>
void coupling_polynomial(const ModelTpl<S>& model, const JointCoupling& c, const VecRef<S>& q, S& p, S& dp, S& ddp,
                         S* dddp = nullptr) {
  const S x = c.joint2 >= 0 ? S(coupling_coordinate<S>(model, c, 2, q) - c.q2_ref) : S(0);
  p = S(c.polycoef[4]), dp = S(0), ddp = S(0);
  S d3 = S(0);
  for (int k = 3; k >= 0; --k) {
    d3 = d3 * x + S(3) * ddp;
    ddp = ddp * x + S(2) * dp;
    dp = dp * x + p;
    p = p * x + S(c.polycoef[static_cast<size_t>(k)]);
  }
  if (c.joint2 < 0) dp = S(0), ddp = S(0), d3 = S(0);
  if (dddp) *dddp = d3;
}

}  // namespace

template <class S>
S joint_coupling_error(const ModelTpl<S>& model, const JointCoupling& coupling, const VecRef<S>& q, S& slope) {
  S p, ddp;
  coupling_polynomial<S>(model, coupling, q, p, slope, ddp);
  return coupling_coordinate<S>(model, coupling, 1, q) - coupling.q1_ref - p;
}

template <class S>
S joint_coupling_target(const ModelTpl<S>& model, const JointCoupling& coupling, const VecRef<S>& q,
                        const VecRef<S>& v, const NoDeduce<S>& dt) {
  S p, slope, curvature;
  coupling_polynomial<S>(model, coupling, q, p, slope, curvature);
  const S g = coupling_coordinate<S>(model, coupling, 1, q) - coupling.q1_ref - p;
  S target = -S(model.contact.erp) / dt * g;
  if (coupling.joint2 >= 0) {
    const S v2 = coupling_coordinate<S>(model, coupling, 2, v, /*rate=*/true);
    target += S(0.5) * dt * curvature * v2 * v2;
  }
  return target;
}

namespace {

// Index of a coupling of model.joint_couplings.
size_t coupling_index(const Model& model, const JointCoupling& coupling) {
  return static_cast<size_t>(&coupling - model.joint_couplings.data());
}

// x = q2 - q2_ref (0 without joint2).
double coupling_argument(const Model& model, const JointCoupling& c, const VecRef<double>& q) {
  return c.joint2 >= 0 ? coupling_coordinate<double>(model, c, 2, q) - c.q2_ref : 0.0;
}

}  // namespace

void joint_coupling_jacobian_vjp(const Model& model, const JointCoupling& coupling, const VecRef<double>& q,
                                 double weight, const VecRef<double>& z, VecOut<double> q_bar, ModelTangent* model_bar) {
  if (coupling.joint2 < 0 || weight == 0.0) return;
  double p, dp, ddp;
  coupling_polynomial<double>(model, coupling, q, p, dp, ddp);
  // J_bar(v2) = weight z[v2], J(v2) = -p'(x), p'(x) = sum_k k c_k x^(k-1) (a tendon's: its terms')
  const double J_bar = weight * coupling_coordinate<double>(model, coupling, 2, z, /*rate=*/true);
  for_each_coupling_term(model, coupling, 2, [&](int iq, int, double coef) { q_bar[iq] -= J_bar * ddp * coef; });
  if (!model_bar) return;
  const double x = coupling_argument(model, coupling, q);
  Eigen::Matrix<double, 5, 1>& c_bar = model_bar->coupling_polycoef[coupling_index(model, coupling)];
  for (int k = 1; k < 5; ++k) c_bar[k] -= J_bar * k * std::pow(x, k - 1);
}

void joint_coupling_target_vjp(const Model& model, const JointCoupling& coupling, const VecRef<double>& q,
                               const VecRef<double>& v, double dt, double target_bar, VecOut<double> q_bar,
                               VecOut<double> v_bar, ModelTangent& model_bar) {
  double p, slope, curvature, third;
  coupling_polynomial<double>(model, coupling, q, p, slope, curvature, &third);
  const double g = coupling_coordinate<double>(model, coupling, 1, q) - coupling.q1_ref - p;
  const double erp = model.contact.erp;
  model_bar.contact.erp -= target_bar * g / dt;
  const double g_bar = -target_bar * erp / dt;
  for_each_coupling_term(model, coupling, 1, [&](int iq, int, double coef) { q_bar[iq] += g_bar * coef; });
  const double v2 = coupling.joint2 >= 0 ? coupling_coordinate<double>(model, coupling, 2, v, /*rate=*/true) : 0.0;
  // g = q1 - ref - sum_k c_k x^k; the drift 1/2 dt p''(x) v2^2, p'' = sum_k k (k - 1) c_k x^(k-2)
  {
    const double x = coupling_argument(model, coupling, q);
    Eigen::Matrix<double, 5, 1>& c_bar = model_bar.coupling_polycoef[coupling_index(model, coupling)];
    for (int k = 0; k < 5; ++k) {
      c_bar[k] -= g_bar * std::pow(x, k);
      if (k >= 2) c_bar[k] += target_bar * 0.5 * dt * k * (k - 1) * std::pow(x, k - 2) * v2 * v2;
    }
  }
  if (coupling.joint2 < 0) return;
  // g through -p'(x); the drift term 1/2 dt p''(x) v2^2 through the third derivative and v2
  const double x_bar = -g_bar * slope + target_bar * 0.5 * dt * third * v2 * v2, v2_bar = target_bar * dt * curvature * v2;
  for_each_coupling_term(model, coupling, 2, [&](int iq, int iv, double coef) {
    q_bar[iq] += x_bar * coef;
    v_bar[iv] += v2_bar * coef;
  });
}

namespace {

// A point x on body i with adjoint x_bar: the pose adjoint [x x x_bar; x_bar].
void add_point_adjoint(Data& data, int body, const Eigen::Vector3d& x, const Eigen::Vector3d& x_bar) {
  if (body < 0) return;
  data.adj_pose_bar[body].head<3>() += x.cross(x_bar);
  data.adj_pose_bar[body].tail<3>() += x_bar;
}

// A connection's anchor point p (oM(body) anchor, or the anchor itself on the world; second: anchor2)
// with adjoint p_bar: its body's pose adjoint, and the anchor's (model_bar, p = R anchor + t).
void add_anchor_adjoint(const Model& model, Data& data, const BodyConnection& c, bool second, const Eigen::Vector3d& p,
                        const Eigen::Vector3d& p_bar, ModelTangent& model_bar) {
  const auto k = static_cast<size_t>(&c - model.body_connections.data());
  const int body = second ? c.body2 : c.body1;
  Vector3<double>& anchor_bar = second ? model_bar.connection_anchor2[k] : model_bar.connection_anchor1[k];
  if (body < 0) {
    anchor_bar += p_bar;
    return;
  }
  add_point_adjoint(data, body, p, p_bar);
  anchor_bar += data.oMi[body].R.transpose() * p_bar;
}

// Adjoint of the spatial bias acceleration A = sum_j oc_j over body b's joints given A_bar: the
// world velocities' adjoints (data.adj_ow_bar, velocities data.adj_ow under v), every joint's term
// oc_j = ow_parent x s_j (s_j = ow_j - ow_parent) through both.
void bias_acceleration_vjp(const Model& model, Data& data, int b, const Vector6<double>& A_bar) {
  const std::vector<Vector6<double>>& ow = data.adj_ow;
  for (int j = b; j >= 0; j = model.parent[j]) {
    const int pj = model.parent[j];
    if (pj < 0) continue;  // the root's parent is at rest: no term
    const Vector6<double> s = ow[j] - ow[pj];
    const Vector6<double> s_bar = -cross_force<double>(ow[pj], A_bar);
    data.adj_ow_bar[pj] += cross_force<double>(s, A_bar) - s_bar;
    data.adj_ow_bar[j] += s_bar;
  }
}

// Adjoint of a = point_bias_acceleration(b, p) given a_bar: p_bar (returned), and the world
// velocities' adjoints: the body's own velocity directly, and the bias terms (bias_acceleration_vjp).
Eigen::Vector3d point_bias_acceleration_vjp(const Model& model, Data& data, int b, const Eigen::Vector3d& p,
                                            const Eigen::Vector3d& a_bar) {
  const std::vector<Vector6<double>>& ow = data.adj_ow;
  Vector6<double> A = Vector6<double>::Zero();
  for (int j = b; j >= 0; j = model.parent[j]) {
    const Vector6<double> parent = model.parent[j] >= 0 ? ow[model.parent[j]] : Vector6<double>::Zero();
    A += cross_motion<double>(parent, ow[j] - parent);
  }
  const Eigen::Vector3d alpha = A.head<3>(), w = ow[b].head<3>(), v0 = ow[b].tail<3>();
  const Eigen::Vector3d u = v0 + w.cross(p);
  // a = A_lin + alpha x p + w x u
  Vector6<double> A_bar;
  A_bar << p.cross(a_bar), a_bar;
  Eigen::Vector3d p_bar = a_bar.cross(alpha);
  Eigen::Vector3d w_bar = u.cross(a_bar);
  const Eigen::Vector3d u_bar = a_bar.cross(w);
  // u = v0 + w x p
  const Eigen::Vector3d v0_bar = u_bar;
  w_bar += p.cross(u_bar);
  p_bar += u_bar.cross(w);
  data.adj_ow_bar[b].head<3>() += w_bar;
  data.adj_ow_bar[b].tail<3>() += v0_bar;
  bias_acceleration_vjp(model, data, b, A_bar);
  return p_bar;
}

// Adjoint of a weld's orientation error g = axial(skew(T)), T = R1 R_c R2^T, given g_bar, into the
// bodies' pose adjoints (rotations about the world axes: R -> exp(d) R): dg = D1 d1 + D2 d2 with
// D1 = (tr T I - T) / 2 and D2 = -(tr T I - T^T) / 2; and into R_c's entries: T_bar = skew(g_bar) / 2,
// R_c_bar = R1^T T_bar R2.
void weld_rotation_error_vjp(const Model& model, Data& data, const BodyConnection& c, const Eigen::Vector3d& g_bar,
                             ModelTangent& model_bar) {
  const Eigen::Matrix3d& R1 = data.oMi[c.body1].R;
  const Eigen::Matrix3d R2 = c.body2 >= 0 ? Eigen::Matrix3d(data.oMi[c.body2].R) : Eigen::Matrix3d::Identity();
  const Eigen::Matrix3d T = R1 * c.rotation * R2.transpose();
  const Eigen::Matrix3d trace = T.trace() * Eigen::Matrix3d::Identity();
  data.adj_pose_bar[c.body1].head<3>() += 0.5 * (trace - T).transpose() * g_bar;
  if (c.body2 >= 0) data.adj_pose_bar[c.body2].head<3>() -= 0.5 * (trace - T.transpose()).transpose() * g_bar;
  const auto k = static_cast<size_t>(&c - model.body_connections.data());
  model_bar.connection_rotation[k] += R1.transpose() * (0.5 * skew<double>(g_bar)) * R2;
}

}  // namespace

void connection_rows_vjp(const Model& model, Data& data, const std::vector<Eigen::Matrix3d>& axes,
                         const Eigen::VectorXd& a, double a_scale, int first, const VecRef<double>& z,
                         Eigen::VectorXd& z_bar_scratch, ModelTangent& model_bar) {
  const int nb = model.nbodies();
  if (model.body_connections.empty()) return;
  // J w = u_b1(p1) - u_b2(p2), u_b(p) = v0_b + omega_b x p: a . u_b(p) reads the world velocity of b
  // against the wrench [p x a; a], and p against a x omega_b (contact_jacobian.hpp's derivation);
  // a weld's rotation rows J w = omega_b1 - omega_b2 read it against [a; 0], and nothing else
  world_velocities<double>(model, data, z, data.adj_ow);
  for (int i = 0; i < nb; ++i) data.adj_ow_bar[i].setZero();
  bool any = false;
  for_each_connection_block(model, [&](int block, const BodyConnection& c, bool rotational) {
    // rows along axes' columns: their weights are a world-axis weight vector axes a
    const Eigen::Vector3d w = a_scale * (axes[static_cast<size_t>(block)] * a.segment<3>(first + 3 * block));
    if (w.isZero(0.0)) return;
    any = true;
    if (rotational) {
      data.adj_ow_bar[c.body1].head<3>() += w;
      if (c.body2 >= 0) data.adj_ow_bar[c.body2].head<3>() -= w;
      return;
    }
    Eigen::Vector3d p1, p2;
    connection_points<double>(data, c, p1, p2);
    Vector6<double> wrench;
    wrench << p1.cross(w), w;
    data.adj_ow_bar[c.body1] += wrench;
    add_anchor_adjoint(model, data, c, false, p1, w.cross(data.adj_ow[c.body1].head<3>()), model_bar);
    if (c.body2 >= 0) {
      wrench << p2.cross(w), w;
      data.adj_ow_bar[c.body2] -= wrench;
      add_anchor_adjoint(model, data, c, true, p2, -w.cross(data.adj_ow[c.body2].head<3>()), model_bar);
    }
  });
  if (!any) return;
  z_bar_scratch.setZero();
  world_velocities_vjp<double>(model, data, z, data.adj_ow_bar, z_bar_scratch, data.adj_pose_bar, &model_bar);
}

void connection_targets_vjp(const Model& model, Data& data, const std::vector<Eigen::Matrix3d>& axes,
                            const double* target_bar, double target_scale, const VecRef<double>& v, double dt,
                            VecOut<double> v_bar, ModelTangent& model_bar) {
  const int nb = model.nbodies();
  if (model.body_connections.empty()) return;
  world_velocities<double>(model, data, v, data.adj_ow);
  for (int i = 0; i < nb; ++i) data.adj_ow_bar[i].setZero();
  for_each_connection_block(model, [&](int block, const BodyConnection& c, bool rotational) {
    const double* tb = target_bar + 3 * block;
    const Eigen::Vector3d t_bar = target_scale * (axes[static_cast<size_t>(block)] * Eigen::Vector3d(tb[0], tb[1], tb[2]));
    if (t_bar.isZero(0.0)) return;
    const Eigen::Vector3d g_bar = -model.contact.erp / dt * t_bar, drift_bar = -0.5 * dt * t_bar;
    if (rotational) {
      // target = -erp / dt g - dt / 2 (alpha1 - alpha2)
      model_bar.contact.erp -= t_bar.dot(weld_rotation_error<double>(data, c)) / dt;
      weld_rotation_error_vjp(model, data, c, g_bar, model_bar);
      Vector6<double> A_bar = Vector6<double>::Zero();
      A_bar.head<3>() = drift_bar;
      bias_acceleration_vjp(model, data, c.body1, A_bar);
      if (c.body2 >= 0) bias_acceleration_vjp(model, data, c.body2, -A_bar);
      return;
    }
    Eigen::Vector3d p1, p2;
    connection_points<double>(data, c, p1, p2);
    // target = -erp / dt (p1 - p2) - dt / 2 (a1 - a2)
    model_bar.contact.erp -= t_bar.dot(p1 - p2) / dt;
    add_anchor_adjoint(model, data, c, false, p1,
                       g_bar + point_bias_acceleration_vjp(model, data, c.body1, p1, drift_bar), model_bar);
    add_anchor_adjoint(model, data, c, true, p2,
                       c.body2 >= 0 ? Eigen::Vector3d(-g_bar + point_bias_acceleration_vjp(model, data, c.body2, p2,
                                                                                              -drift_bar))
                                    : Eigen::Vector3d(-g_bar),
                       model_bar);
  });
  world_velocities_vjp<double>(model, data, v, data.adj_ow_bar, v_bar, data.adj_pose_bar, &model_bar);
}

template <class S>
void add_joint_constraint_forces(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v, VecOut<S> tau) {
  using std::sqrt;
  const ContactSettings& settings = model.contact;
  const S eps2 = S(settings.velocity_scale * settings.velocity_scale);
  for_each_joint_friction_row<S>(model, [&](int, int k) {
    tau[k] -= model.frictionloss[k] * v[k] / sqrt(v[k] * v[k] + eps2);
  });
  for (const JointCoupling& c : model.joint_couplings) {
    S slope;
    const S g = joint_coupling_error<S>(model, c, q, slope);
    S rate = coupling_coordinate<S>(model, c, 1, v, /*rate=*/true);
    if (c.joint2 >= 0) rate -= slope * coupling_coordinate<S>(model, c, 2, v, /*rate=*/true);
    const S f = S(settings.limit_stiffness) * g + S(settings.limit_damping) * rate;
    // tau -= J^T f, J = e_1 - slope e_2 (each coordinate's terms)
    for_each_coupling_term(model, c, 1, [&](int, int iv, double coef) { tau[iv] -= coef * f; });
    for_each_coupling_term(model, c, 2, [&](int, int iv, double coef) { tau[iv] += coef * slope * f; });
  }
}

template <class S>
void add_joint_constraint_forces_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v,
                                     const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                                     ModelTangentTpl<S>* model_bar) {
  using std::sqrt;
  const ContactSettings& settings = model.contact;
  const S eps2 = S(settings.velocity_scale * settings.velocity_scale);
  for_each_joint_friction_row<S>(model, [&](int, int k) {
    // d/dv [v / sqrt(v^2 + e^2)] = e^2 / (v^2 + e^2)^(3/2)
    const S r2 = v[k] * v[k] + eps2;
    v_bar[k] -= tau_bar[k] * model.frictionloss[k] * eps2 / (r2 * sqrt(r2));
    if (model_bar) model_bar->frictionloss[k] -= tau_bar[k] * v[k] / sqrt(r2);
  });
  const S k_l = S(settings.limit_stiffness), c_l = S(settings.limit_damping);
  for (const JointCoupling& c : model.joint_couplings) {
    S p, slope, curvature;
    coupling_polynomial<S>(model, c, q, p, slope, curvature);
    const S g = coupling_coordinate<S>(model, c, 1, q) - c.q1_ref - p;
    const bool two = c.joint2 >= 0;
    const S v2 = two ? coupling_coordinate<S>(model, c, 2, v, /*rate=*/true) : S(0);
    const S rate = coupling_coordinate<S>(model, c, 1, v, /*rate=*/true) - slope * v2;
    const S f = k_l * g + c_l * rate;
    // tau -= f J_1^T; tau += slope f J_2^T (J_i: coordinate i's terms)
    S f_bar = -coupling_coordinate<S>(model, c, 1, tau_bar, /*rate=*/true);
    S slope_bar = S(0);
    if (two) {
      const S tau2_bar = coupling_coordinate<S>(model, c, 2, tau_bar, /*rate=*/true);
      f_bar += slope * tau2_bar, slope_bar += f * tau2_bar;
    }
    // f = k g + c (v1 - slope v2)
    const S g_bar = k_l * f_bar, rate_bar = c_l * f_bar;
    for_each_coupling_term(model, c, 1, [&](int iq, int iv, double coef) {
      v_bar[iv] += coef * rate_bar;
      q_bar[iq] += coef * g_bar;
    });
    if (two) slope_bar -= rate_bar * v2;
    if (model_bar) {  // g = q1 - ref - sum_k c_k x^k, slope = sum_k k c_k x^(k-1)
      const S x = two ? S(coupling_coordinate<S>(model, c, 2, q) - c.q2_ref) : S(0);
      Eigen::Matrix<S, 5, 1>& c_bar = model_bar->coupling_polycoef[static_cast<size_t>(&c - model.joint_couplings.data())];
      S x_k = S(1), x_k1 = S(0);  // x^k, x^(k-1)
      for (int k = 0; k < 5; ++k) {
        c_bar[k] -= g_bar * x_k;
        if (two) c_bar[k] += slope_bar * S(k) * x_k1;
        x_k1 = x_k;
        x_k = x_k * x;
      }
    }
    if (!two) continue;
    // v2's terms: -slope rate_bar; x = q2 - ref: g through -slope, slope = p'(x) through p''(x)
    const S x_bar = -slope * g_bar + curvature * slope_bar;
    for_each_coupling_term(model, c, 2, [&](int iq, int iv, double coef) {
      v_bar[iv] -= coef * slope * rate_bar;
      q_bar[iq] += coef * x_bar;
    });
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                  \
  template bool has_joint_constraints<S>(const ModelTpl<S>&);                                                 \
  template int joint_friction_rows<S>(const ModelTpl<S>&);                                                    \
  template S joint_coupling_error<S>(const ModelTpl<S>&, const JointCoupling&, const VecRef<S>&, S&);         \
  template S joint_coupling_target<S>(const ModelTpl<S>&, const JointCoupling&, const VecRef<S>&,             \
                                      const VecRef<S>&, const NoDeduce<S>&);                                   \
  template void add_joint_constraint_forces<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&, VecOut<S>); \
  template void add_joint_constraint_forces_vjp<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&,    \
                                                   const VecRef<S>&, VecOut<S>, VecOut<S>, ModelTangentTpl<S>*);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
