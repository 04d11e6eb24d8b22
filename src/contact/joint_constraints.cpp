#include "gradyn/contact/joint_constraints.hpp"

#include <cmath>

namespace gradyn {

template <class S>
bool has_joint_constraints(const ModelTpl<S>& model) {
  return !model.joint_couplings.empty() || joint_friction_rows<S>(model) > 0;
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
  const S x = c.joint2 >= 0 ? S(q[model.idx_q[c.joint2]] - c.q2_ref) : S(0);
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
  return q[model.idx_q[coupling.joint1]] - coupling.q1_ref - p;
}

template <class S>
S joint_coupling_target(const ModelTpl<S>& model, const JointCoupling& coupling, const VecRef<S>& q,
                        const VecRef<S>& v, const NoDeduce<S>& dt) {
  S p, slope, curvature;
  coupling_polynomial<S>(model, coupling, q, p, slope, curvature);
  const S g = q[model.idx_q[coupling.joint1]] - coupling.q1_ref - p;
  S target = -S(model.contact.erp) / dt * g;
  if (coupling.joint2 >= 0) {
    const S v2 = v[model.idx_v[coupling.joint2]];
    target += S(0.5) * dt * curvature * v2 * v2;
  }
  return target;
}

void joint_coupling_jacobian_vjp(const Model& model, const JointCoupling& coupling, const VecRef<double>& q,
                                 double weight, const VecRef<double>& z, VecOut<double> q_bar) {
  if (coupling.joint2 < 0 || weight == 0.0) return;
  double p, dp, ddp;
  coupling_polynomial<double>(model, coupling, q, p, dp, ddp);
  // J_bar(v2) = weight z[v2], J(v2) = -p'(x)
  q_bar[model.idx_q[coupling.joint2]] -= weight * z[model.idx_v[coupling.joint2]] * ddp;
}

void joint_coupling_target_vjp(const Model& model, const JointCoupling& coupling, const VecRef<double>& q,
                               const VecRef<double>& v, double dt, double target_bar, VecOut<double> q_bar,
                               VecOut<double> v_bar, ModelTangent& model_bar) {
  double p, slope, curvature, third;
  coupling_polynomial<double>(model, coupling, q, p, slope, curvature, &third);
  const double g = q[model.idx_q[coupling.joint1]] - coupling.q1_ref - p;
  const double erp = model.contact.erp;
  model_bar.contact.erp -= target_bar * g / dt;
  const double g_bar = -target_bar * erp / dt;
  q_bar[model.idx_q[coupling.joint1]] += g_bar;
  if (coupling.joint2 < 0) return;
  const int q2 = model.idx_q[coupling.joint2], v2 = model.idx_v[coupling.joint2];
  // g through -p'(x); the drift term 1/2 dt p''(x) v2^2 through the third derivative and v2
  q_bar[q2] += -g_bar * slope + target_bar * 0.5 * dt * third * v[v2] * v[v2];
  v_bar[v2] += target_bar * dt * curvature * v[v2];
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
    const int v1 = model.idx_v[c.joint1];
    S rate = v[v1];
    if (c.joint2 >= 0) rate -= slope * v[model.idx_v[c.joint2]];
    const S f = S(settings.limit_stiffness) * g + S(settings.limit_damping) * rate;
    tau[v1] -= f;
    if (c.joint2 >= 0) tau[model.idx_v[c.joint2]] += slope * f;
  }
}

template <class S>
void add_joint_constraint_forces_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v,
                                     const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar) {
  using std::sqrt;
  const ContactSettings& settings = model.contact;
  const S eps2 = S(settings.velocity_scale * settings.velocity_scale);
  for_each_joint_friction_row<S>(model, [&](int, int k) {
    // d/dv [v / sqrt(v^2 + e^2)] = e^2 / (v^2 + e^2)^(3/2)
    const S r2 = v[k] * v[k] + eps2;
    v_bar[k] -= tau_bar[k] * model.frictionloss[k] * eps2 / (r2 * sqrt(r2));
  });
  const S k_l = S(settings.limit_stiffness), c_l = S(settings.limit_damping);
  for (const JointCoupling& c : model.joint_couplings) {
    S p, slope, curvature;
    coupling_polynomial<S>(model, c, q, p, slope, curvature);
    const int q1 = model.idx_q[c.joint1], v1 = model.idx_v[c.joint1];
    const S g = q[q1] - c.q1_ref - p;
    S rate = v[v1];
    const bool two = c.joint2 >= 0;
    const int q2 = two ? model.idx_q[c.joint2] : -1, v2 = two ? model.idx_v[c.joint2] : -1;
    if (two) rate -= slope * v[v2];
    const S f = k_l * g + c_l * rate;
    // tau[v1] -= f; tau[v2] += slope f
    S f_bar = -tau_bar[v1];
    S slope_bar = S(0);
    if (two) f_bar += slope * tau_bar[v2], slope_bar += f * tau_bar[v2];
    // f = k g + c (v1 - slope v2)
    const S g_bar = k_l * f_bar, rate_bar = c_l * f_bar;
    v_bar[v1] += rate_bar;
    q_bar[q1] += g_bar;
    if (!two) continue;
    v_bar[v2] -= slope * rate_bar;
    slope_bar -= rate_bar * v[v2];
    // g = q1 - ref - p(x): dg/dq2 = -slope; slope = p'(x): dslope/dq2 = p''(x)
    q_bar[q2] += -slope * g_bar + curvature * slope_bar;
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
                                                   const VecRef<S>&, VecOut<S>, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
