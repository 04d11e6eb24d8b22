#include "gradyn/contact/joint_limits.hpp"

#include <algorithm>
#include <cmath>

#include "gradyn/autodiff.hpp"

namespace gradyn {

template <class S>
Vector3<S> joint_limit_rate_row(const ModelTpl<S>& model, int body, int coordinate, const VecRef<S>& q) {
  return visit_joint(model.joint_type[body], [&]<class J>(J) {
    static_assert(!J::limited || (J::nq <= 3 && J::nv <= 3), "a limit's rate row holds at most 3 velocities");
    return J::template limit_rate_row<S>(q.segment(model.idx_q[body], J::nq), coordinate);
  });
}

namespace {

// The penalty law of the joint limits, walked once for the forces and their adjoint: calls
// visit(i, k, side, r, f) for every coordinate k of joint i beyond a finite bound (side +1 lower,
// -1 upper) whose spring-damper force f = k_l violation - c_l side (r . v) pushes (f > 0), r the
// coordinate's rate row (joint_limit_rate_row).
template <class S, class Visit>
void for_each_pushing_limit(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v, Visit&& visit) {
  const ContactSettings& settings = model.contact;
  for (int i = 0; i < model.nbodies(); ++i) {
    if (!joint_has_limited_coordinates(model.joint_type[i])) continue;
    const int iq = model.idx_q[i], iv = model.idx_v[i], nvi = model.joint_nv(i);
    for (int k = 0; k < model.joint_nq(i); ++k) {
      for (int side : {1, -1}) {
        const S& bound = side > 0 ? model.lower_limit[iq + k] : model.upper_limit[iq + k];
        if (!std::isfinite(value_of(bound))) continue;
        const S violation = S(side) * (bound - q[iq + k]);
        if (!(value_of(violation) > 0.0)) continue;
        const Vector3<S> r = joint_limit_rate_row<S>(model, i, k, q);
        S rate = S(0);
        for (int j = 0; j < nvi; ++j) rate += r[j] * v[iv + j];
        const S f = S(settings.limit_stiffness) * violation - S(settings.limit_damping) * S(side) * rate;
        if (!(value_of(f) > 0.0)) continue;  // no pull towards the limit while leaving it fast
        visit(i, k, side, r, f);
      }
    }
  }
}

// The same law on the fixed tendons' lengths: visit(tendon, side, f) for each pushing tendon limit.
template <class S, class Visit>
void for_each_pushing_tendon_limit(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v, Visit&& visit) {
  const ContactSettings& settings = model.contact;
  for (const FixedTendon& tendon : model.tendons) {
    if (!tendon.limited()) continue;
    const S length = tendon_length<S>(model, tendon, q);
    for (int side : {1, -1}) {
      const double bound = side > 0 ? tendon.lower : tendon.upper;
      if (!std::isfinite(bound)) continue;
      const S violation = S(side) * (bound - length);
      if (!(value_of(violation) > 0.0)) continue;
      const S f = S(settings.limit_stiffness) * violation -
                  S(settings.limit_damping) * S(side) * tendon_rate<S>(model, tendon, v);
      if (!(value_of(f) > 0.0)) continue;
      visit(tendon, side, f);
    }
  }
}

}  // namespace

template <class S>
void add_joint_limit_forces(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v, VecOut<S> tau) {
  for_each_pushing_limit<S>(model, q, v, [&](int i, int, int side, const Vector3<S>& r, const S& f) {
    const int iv = model.idx_v[i];
    for (int j = 0; j < model.joint_nv(i); ++j) tau[iv + j] += S(side) * f * r[j];
  });
  for_each_pushing_tendon_limit<S>(model, q, v, [&](const FixedTendon& tendon, int side, const S& f) {
    add_tendon_force<S>(model, tendon, S(S(side) * f), tau);
  });
}

template <class S>
void add_joint_limit_forces_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v,
                                const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar) {
  const S k_l = S(model.contact.limit_stiffness), c_l = S(model.contact.limit_damping);
  for_each_pushing_limit<S>(model, q, v, [&](int i, int k, int side, const Vector3<S>& r, const S& f) {
    const int iq = model.idx_q[i], iv = model.idx_v[i], nvi = model.joint_nv(i);
    // tau_j += s f r_j
    S f_bar = S(0);
    Vector3<S> r_bar = Vector3<S>::Zero();
    for (int j = 0; j < nvi; ++j) {
      f_bar += S(side) * tau_bar[iv + j] * r[j];
      r_bar[j] += S(side) * f * tau_bar[iv + j];
    }
    // f = k_l s (bound - q_k) - c_l s (r . v)
    q_bar[iq + k] -= S(side) * k_l * f_bar;
    const S rate_bar = -c_l * S(side) * f_bar;
    for (int j = 0; j < nvi; ++j) {
      v_bar[iv + j] += rate_bar * r[j];
      r_bar[j] += rate_bar * v[iv + j];
    }
    visit_joint(model.joint_type[i], [&]<class J>(J) {  // the row's own dependence on q (planar)
      if constexpr (J::limit_rate_varies)
        J::template limit_rate_row_vjp<S>(q.segment(iq, J::nq), k, r_bar, q_bar.segment(iq, J::nq));
    });
  });
  for_each_pushing_tendon_limit<S>(model, q, v, [&](const FixedTendon& tendon, int side, const S&) {
    // tau += s f J_t,  f = k_l s (bound - J_t q) - c_l s J_t v  (J_t constant)
    S f_bar = S(0);
    for (size_t i = 0; i < tendon.joints.size(); ++i) f_bar += S(side) * tendon.coefs[i] * tau_bar[model.idx_v[tendon.joints[i]]];
    for (size_t i = 0; i < tendon.joints.size(); ++i) {
      q_bar[model.idx_q[tendon.joints[i]]] -= S(side) * k_l * f_bar * tendon.coefs[i];
      v_bar[model.idx_v[tendon.joints[i]]] -= c_l * S(side) * f_bar * tendon.coefs[i];
    }
  });
}

template <class S>
int select_joint_limit_rows(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v_free, double dt,
                            std::vector<int>& coord, std::vector<int>& side) {
  const double margin = model.contact.limit_margin;
  int count = 0;
  for (int i = 0; i < model.nbodies(); ++i) {
    if (!joint_has_limited_coordinates(model.joint_type[i])) continue;
    const int iq = model.idx_q[i], iv = model.idx_v[i], nvi = model.joint_nv(i);
    for (int k = 0; k < model.joint_nq(i); ++k) {
      const double lower = value_of(model.lower_limit[iq + k]), upper = value_of(model.upper_limit[iq + k]);
      const bool has_lower = std::isfinite(lower), has_upper = std::isfinite(upper);
      if (!has_lower && !has_upper) continue;
      const Vector3<S> r = joint_limit_rate_row<S>(model, i, k, q);
      double rate = 0.0;
      for (int j = 0; j < nvi; ++j) rate += value_of(r[j]) * value_of(v_free[iv + j]);
      const double qk = value_of(q[iq + k]);
      for (int s : {1, -1}) {
        if (s > 0 ? !has_lower : !has_upper) continue;
        const double gap = s * (qk - (s > 0 ? lower : upper));
        if (std::min(gap, gap + dt * s * rate) >= margin) continue;
        coord[static_cast<size_t>(count)] = iq + k;
        side[static_cast<size_t>(count)] = s;
        ++count;
      }
    }
  }
  for (int t = 0; t < static_cast<int>(model.tendons.size()); ++t) {
    const FixedTendon& tendon = model.tendons[static_cast<size_t>(t)];
    if (!tendon.limited()) continue;
    const double length = value_of(tendon_length<S>(model, tendon, q));
    const double rate = value_of(tendon_rate<S>(model, tendon, v_free));
    for (int s : {1, -1}) {
      const double bound = s > 0 ? tendon.lower : tendon.upper;
      if (!std::isfinite(bound)) continue;
      const double gap = s * (length - bound);
      if (std::min(gap, gap + dt * s * rate) >= margin) continue;
      coord[static_cast<size_t>(count)] = model.nq + t;
      side[static_cast<size_t>(count)] = s;
      ++count;
    }
  }
  return count;
}

namespace {

// The gap side (value - bound) of limit coordinate coord (a coordinate of q, or a tendon's length).
template <class S>
S limit_gap(const ModelTpl<S>& model, const VecRef<S>& q, int coord, int side) {
  if (coord >= model.nq) {
    const FixedTendon& tendon = model.tendons[static_cast<size_t>(coord - model.nq)];
    return S(side) * (tendon_length<S>(model, tendon, q) - (side > 0 ? tendon.lower : tendon.upper));
  }
  return S(side) * (q[coord] - (side > 0 ? model.lower_limit[coord] : model.upper_limit[coord]));
}

}  // namespace

template <class S>
S joint_limit_target(const ModelTpl<S>& model, const VecRef<S>& q, int coord, int side, const NoDeduce<S>& dt) {
  const ContactSettings& settings = model.contact;
  const S gap = limit_gap<S>(model, q, coord, side);
  if (value_of(gap) >= 0.0) return -gap / dt;
  const S excess = -gap - S(settings.slop);
  return value_of(excess) > 0.0 ? S(settings.erp) / dt * excess : S(0);
}

double joint_limit_target_slope(const Model& model, const VecRef<double>& q, int coord, int side, double dt) {
  const ContactSettings& settings = model.contact;
  const double gap = limit_gap<double>(model, q, coord, side);
  if (gap >= 0.0) return -side / dt;  // -gap / dt
  const double excess = -gap - settings.slop;
  return excess > 0.0 ? -settings.erp / dt * side : 0.0;  // erp / dt (-side (q_k - bound) - slop)
}

void joint_limit_target_vjp(const Model& model, const VecRef<double>& q, int coord, int side, double dt,
                            double target_bar, VecOut<double> q_bar, ModelTangent& model_bar) {
  const ContactSettings& settings = model.contact;
  add_limit_coordinate_gradient<double>(model, coord, target_bar * joint_limit_target_slope(model, q, coord, side, dt),
                                        q_bar);
  const double gap = limit_gap<double>(model, q, coord, side);
  const double excess = -gap - settings.slop;
  if (gap >= 0.0 || !(excess > 0.0)) return;
  model_bar.contact.erp += target_bar * excess / dt;
  model_bar.contact.slop -= target_bar * settings.erp / dt;
}

void joint_limit_jacobian_vjp(const Model& model, const VecRef<double>& q, int coord, int side, double weight,
                              const VecRef<double>& z, VecOut<double> q_bar) {
  int body, k;
  limit_coordinate_owner(model, coord, body, k);
  if (weight == 0.0 || body < 0) return;
  visit_joint(model.joint_type[body], [&]<class J>(J) {  // only rows that depend on q (planar)
    if constexpr (J::limit_rate_varies) {
      const int iv = model.idx_v[body], iq = model.idx_q[body];
      Vector3<double> z_joint = Vector3<double>::Zero();
      for (int m = 0; m < J::nv && m < 3; ++m) z_joint[m] = z[iv + m];
      Eigen::Matrix<double, J::nq, 1> g = Eigen::Matrix<double, J::nq, 1>::Zero();
      J::template limit_rate_row_vjp<double>(q.segment(iq, J::nq), k, z_joint, g);
      for (int m = 0; m < J::nq; ++m)
        if (g[m] != 0.0) q_bar[iq + m] += weight * side * g[m];
    }
  });
}

#define GRADYN_INSTANTIATE(S)                                                                          \
  template Vector3<S> joint_limit_rate_row<S>(const ModelTpl<S>&, int, int, const VecRef<S>&);        \
  template void add_joint_limit_forces<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&, VecOut<S>); \
  template void add_joint_limit_forces_vjp<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&,          \
                                              const VecRef<S>&, VecOut<S>, VecOut<S>);      \
  template int select_joint_limit_rows<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&, double,    \
                                          std::vector<int>&, std::vector<int>&);                              \
  template S joint_limit_target<S>(const ModelTpl<S>&, const VecRef<S>&, int, int, const NoDeduce<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
