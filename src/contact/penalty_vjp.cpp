// Reverse mode of the penalty contact forces (the derivation is in contact/penalty_vjp.hpp).
#include "gradyn/contact/penalty_vjp.hpp"

#include <cmath>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide_vjp.hpp"
#include "gradyn/contact/detail/contact_networks.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/penalty.hpp"
#include "gradyn/dynamics/kinematics_vjp.hpp"

namespace gradyn {

template <class S>
void friction_force_vjp(const ContactSettings& settings, const S& mu, const S& normal_force,
                        const Vector3<S>& ut, const Vector3<S>& f_bar, S& mu_bar, S& fn_bar, Vector3<S>& ut_bar,
                        typename ModelTangentTpl<S>::ContactSettingsBar& settings_bar) {
  using std::sqrt;
  using std::tanh;
  const double vs = settings.velocity_scale;
  const S s2 = ut.squaredNorm();
  const S ut_dot_fbar = ut.dot(f_bar);
  if (settings.friction == FrictionModel::SmoothCoulomb) {
    // f_t = -mu f_n g u_t,  g = (s2 + vs^2)^(-1/2)
    const S g = S(1) / sqrt(s2 + S(vs * vs));
    const S g3 = g * g * g;
    mu_bar += -normal_force * g * ut_dot_fbar;
    fn_bar += -mu * g * ut_dot_fbar;
    ut_bar += (-mu * normal_force * g) * f_bar + (mu * normal_force * g3 * ut_dot_fbar) * ut;
    settings_bar.velocity_scale += mu * normal_force * g3 * ut_dot_fbar * S(vs);
    return;
  }
  // Brown & McPhee, as friction_force computes it:
  //   s = sqrt(s2 + 1e-24 vs^2), r = s / vs, den = r^2/4 + 3/4, B = mu tanh(4 r) + (mu_s - mu) r / den^2,
  //   mag = f_n B (+ mu_v s while f_n > 0),  f_t = -(mag / s) u_t.
  const S s = sqrt(s2 + S(1e-24 * vs * vs));
  const S r = s / S(vs);
  const S den = r * r / S(4) + S(0.75);
  const S th = tanh(S(4) * r);
  const S ratio = S(settings.static_friction_ratio);
  const S mu_s = mu * ratio;
  const S peak = r / (den * den);
  const S B = mu * th + (mu_s - mu) * peak;
  const bool viscous = value_of(normal_force) > 0.0;
  S mag = normal_force * B;
  if (viscous) mag += S(settings.viscous_friction) * s;
  // f_t = -(mag / s) u_t
  ut_bar += (-mag / s) * f_bar;
  const S mag_bar = -ut_dot_fbar / s;
  S s_bar = ut_dot_fbar * mag / (s * s);
  fn_bar += mag_bar * B;
  const S B_bar = mag_bar * normal_force;
  if (viscous) {
    settings_bar.viscous_friction += mag_bar * s;
    s_bar += mag_bar * S(settings.viscous_friction);
  }
  mu_bar += B_bar * (th - peak + ratio * peak);
  settings_bar.static_friction_ratio += B_bar * mu * peak;
  const S dB_dr = mu * S(4) * (S(1) - th * th) + (mu_s - mu) * (den - r * r) / (den * den * den);
  const S r_bar = B_bar * dB_dr;
  s_bar += r_bar / S(vs);
  settings_bar.velocity_scale += -r_bar * s / S(vs * vs) + s_bar * S(1e-24 * vs) / s;
  ut_bar += (s_bar / s) * ut;
}

namespace {
// Velocity of the world point p carried by a body moving with world spatial velocity V ([omega; v0]).
template <class S>
Vector3<S> point_velocity(const Vector6<S>& V, const Vector3<S>& p) {
  return V.template tail<3>() + V.template head<3>().cross(p);
}
}  // namespace

template <class S>
void penalty_contact_forces_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                                const VecRef<S>& tau_c_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                                ModelTangentTpl<S>& model_bar) {
  using std::log;
  using std::pow;
  check_size("tau_c_bar", tau_c_bar.size(), model.nv);
  const ContactSettings& settings = model.contact;
  const int nb = model.nbodies();
  auto& pose_bar = data.adj_pose_bar;
  auto& ov_bar = data.adj_ow_bar;
  for (int i = 0; i < nb; ++i) pose_bar[i].setZero(), ov_bar[i].setZero();
  // The velocities the contact Jacobians give under w = tau_c_bar: f_bar = J w.
  world_velocities<S>(model, data, tau_c_bar, data.adj_ow);
  const Vector6<S> at_rest = Vector6<S>::Zero();
  const bool networks = detail::has_contact_networks(model);
  auto state_of = [&](int body) { return detail::network_body_state<S>(data.oMi[body], data.ov[body]); };
  for (int k = 0; k < data.ncontacts; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    ContactBarTpl<S>& cbar = data.contact_bar[k];
    cbar.setZero();
    const GeomTpl<S>& ga = model.geoms[c.geom_a];
    const GeomTpl<S>& gb = model.geoms[c.geom_b];
    const S d = c.depth;
    if (!(value_of(d) > 0.0)) continue;  // no force: the law is 0 and networks act while overlapping
    const Vector3<S>& f = data.contact_force[k];
    const Vector3<S>& p = c.point;
    const Vector3<S>& n = c.normal;
    const Vector6<S>& Wa = ga.body >= 0 ? data.adj_ow[ga.body] : at_rest;
    const Vector6<S>& Wb = gb.body >= 0 ? data.adj_ow[gb.body] : at_rest;
    // force law, forward again
    const Vector6<S>& Va = ga.body >= 0 ? data.ov[ga.body] : at_rest;
    const Vector6<S>& Vb = gb.body >= 0 ? data.ov[gb.body] : at_rest;
    const Vector3<S> u = point_velocity(Vb, p) - point_velocity(Va, p);
    const S un = u.dot(n);
    const S k_stiff = S(settings.stiffness), c_damp = S(settings.damping);
    const S dp = pow(d, settings.exponent);
    const S fn = k_stiff * dp * (S(1) - c_damp * un);
    const bool pressing = value_of(fn) > 0.0;  // else hunt_crossley_force clamped f_n at 0
    if (!pressing && !networks) continue;
    // J^T f: f_bar and the point's adjoint; the Jacobians' own q-dependence comes below (ov_bar = W).
    const Vector3<S> f_bar = point_velocity(Wb, p) - point_velocity(Wa, p);
    Vector3<S> p_bar = f.cross(Vector3<S>(Wb.template head<3>() - Wa.template head<3>()));
    S mu = model.geoms[c.friction_geom].friction;
    if (networks && pressing) mu = detail::friction_with_networks<S>(model, data, c, ga.body, gb.body, u, mu, state_of);
    const bool mu_free = !networks || value_of(mu) > 0.0;  // not clamped at 0
    if (!mu_free) mu = S(0);
    Vector3<S> n_bar = Vector3<S>::Zero(), u_bar = Vector3<S>::Zero();
    S un_bar = S(0), d_bar = S(0), mu_bar = S(0);
    if (pressing) {
      // reverse: f = fn n + f_t(mu, fn, ut)
      S fn_bar = n.dot(f_bar);
      n_bar = fn * f_bar;
      const Vector3<S> ut = u - un * n;
      Vector3<S> ut_bar = Vector3<S>::Zero();
      friction_force_vjp<S>(settings, mu, fn, ut, f_bar, mu_bar, fn_bar, ut_bar, model_bar.contact);
      if (mu_free) model_bar.geom_friction[c.friction_geom] += mu_bar;
      // ut = u - un n
      u_bar = ut_bar;
      un_bar = -n.dot(ut_bar);
      n_bar -= un * ut_bar;
      // fn = k d^p (1 - c un)
      const S rate_term = S(1) - c_damp * un;
      model_bar.contact.stiffness += fn_bar * dp * rate_term;
      model_bar.contact.exponent += fn_bar * k_stiff * dp * log(d) * rate_term;
      model_bar.contact.damping += fn_bar * k_stiff * dp * (-un);
      d_bar = fn_bar * k_stiff * S(settings.exponent) * pow(d, settings.exponent - 1.0) * rate_term;
      un_bar += fn_bar * k_stiff * dp * (-c_damp);
    }
    if (networks) {
      detail::ContactNetworkBars<S> bars;
      detail::contact_networks_vjp<S>(model, data, c, ga.body, gb.body, u, state_of, pressing && mu_free, mu_bar,
                                      /*force=*/true, f_bar, bars, pose_bar, ov_bar, model_bar);
      d_bar += bars.depth, n_bar += bars.normal, p_bar += bars.point, u_bar += bars.velocity;
    }
    // un = u . n
    u_bar += un_bar * n;
    n_bar += un_bar * u;
    // u = ov_b(p) - ov_a(p)
    auto add_velocity_bar = [&](int body, const Vector6<S>& V, const S& sign) {
      if (body < 0) return;
      ov_bar[body].template tail<3>() += sign * u_bar;
      ov_bar[body].template head<3>() += sign * p.cross(u_bar);
      p_bar += sign * u_bar.cross(Vector3<S>(V.template head<3>()));
    };
    add_velocity_bar(gb.body, Vb, S(1));
    add_velocity_bar(ga.body, Va, S(-1));
    cbar.point = p_bar;
    cbar.frame.col(0) = n_bar;
    cbar.depth = d_bar;
  }
  // The body connections' spring-dampers (penalty.cpp), backwards.
  const S k_c = S(settings.limit_stiffness), c_c = S(settings.limit_damping);
  for_each_connection_block<S>(model, [&](int, const BodyConnection& c, bool rotational) {
    const int b1 = c.body1, b2 = c.body2;
    const auto index = static_cast<size_t>(&c - model.body_connections.data());
    const Vector6<S>& W1 = data.adj_ow[b1];
    const Vector6<S>& W2 = b2 >= 0 ? data.adj_ow[b2] : at_rest;
    const Vector6<S>& V1 = data.ov[b1];
    const Vector6<S>& V2 = b2 >= 0 ? data.ov[b2] : at_rest;
    if (rotational) {
      // J^T [t; 0] on body1, [-t; 0] on body2: t_bar = omega_W1 - omega_W2;
      // t = -(k e + c (omega1 - omega2))
      const Vector3<S> t_bar = W1.template head<3>() - W2.template head<3>();
      const Vector3<S> e_bar = -k_c * t_bar, rate_bar = -c_c * t_bar;
      ov_bar[b1].template head<3>() += rate_bar;
      if (b2 >= 0) ov_bar[b2].template head<3>() -= rate_bar;
      // e = axial(skew(T)), T = R1 R_c R2^T: de = D1 d1 + D2 d2 (joint_constraints.cpp's weld adjoint)
      Matrix3<S> T = data.oMi[b1].R * c.rotation.template cast<S>();
      if (b2 >= 0) T = T * data.oMi[b2].R.transpose();
      const Matrix3<S> trace = T.trace() * Matrix3<S>::Identity();
      pose_bar[b1].template head<3>() += S(0.5) * (trace - T).transpose() * e_bar;
      if (b2 >= 0) pose_bar[b2].template head<3>() -= S(0.5) * (trace - T.transpose()).transpose() * e_bar;
      // and R_c's entries: T_bar = skew(e_bar) / 2, R_c_bar = R1^T T_bar R2
      const Matrix3<S> R2 = b2 >= 0 ? Matrix3<S>(data.oMi[b2].R) : Matrix3<S>::Identity();
      model_bar.connection_rotation[index] += data.oMi[b1].R.transpose() * (S(0.5) * skew<S>(e_bar)) * R2;
      return;
    }
    Vector3<S> p1, p2;
    connection_points<S>(data, c, p1, p2);
    const Vector3<S> u = point_velocity(V1, p1) - point_velocity(V2, p2);
    const Vector3<S> f = -(k_c * Vector3<S>(p1 - p2) + c_c * u);
    // J^T f: f at p1 on body1, -f at p2 on body2
    const Vector3<S> f_bar = point_velocity(W1, p1) - point_velocity(W2, p2);
    Vector3<S> p1_bar = f.cross(Vector3<S>(W1.template head<3>()));
    Vector3<S> p2_bar = Vector3<S>(-f).cross(Vector3<S>(W2.template head<3>()));
    // f = -(k (p1 - p2) + c u), u = u1(p1) - u2(p2)
    const Vector3<S> g_bar = -k_c * f_bar, u_bar = -c_c * f_bar;
    p1_bar += g_bar;
    p2_bar -= g_bar;
    ov_bar[b1].template tail<3>() += u_bar;
    ov_bar[b1].template head<3>() += p1.cross(u_bar);
    p1_bar += u_bar.cross(Vector3<S>(V1.template head<3>()));
    // the anchors ride on their bodies: p = oM(b) a, pose adjoint [p x p_bar; p_bar], anchor's R^T p_bar
    pose_bar[b1].template head<3>() += p1.cross(p1_bar);
    pose_bar[b1].template tail<3>() += p1_bar;
    model_bar.connection_anchor1[index] += data.oMi[b1].R.transpose() * p1_bar;
    if (b2 >= 0) {
      ov_bar[b2].template tail<3>() -= u_bar;
      ov_bar[b2].template head<3>() -= p2.cross(u_bar);
      p2_bar -= u_bar.cross(Vector3<S>(V2.template head<3>()));
      pose_bar[b2].template head<3>() += p2.cross(p2_bar);
      pose_bar[b2].template tail<3>() += p2_bar;
      model_bar.connection_anchor2[index] += data.oMi[b2].R.transpose() * p2_bar;
    } else {
      model_bar.connection_anchor2[index] += p2_bar;  // a point of the world
    }
  });
  // Velocity adjoints -> v_bar and pose adjoints.
  world_velocities_vjp<S>(model, data, v, ov_bar, v_bar, pose_bar, &model_bar);
  // The Jacobians' q-dependence: sum_i W_i . ow_i(q; w) with the wrenches W fixed. Its w-adjoint
  // (J^T f again) is not wanted: it goes to scratch.
  data.adj_contact_tau_bar.setZero();
  world_velocities_vjp<S>(model, data, tau_c_bar, data.contact_body_force, data.adj_contact_tau_bar, pose_bar,
                          &model_bar);
  collide_vjp<S>(model, data, data.contact_bar, pose_bar, model_bar);
  body_poses_vjp<S>(model, data, q, pose_bar, q_bar, model_bar);
}

#define GRADYN_INSTANTIATE(S)                                                                                     \
  template void penalty_contact_forces_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, \
                                              const VecRef<S>&, VecOut<S>, VecOut<S>, ModelTangentTpl<S>&);       \
  template void friction_force_vjp<S>(const ContactSettings&, const S&, const S&, const Vector3<S>&,              \
                                      const Vector3<S>&, S&, S&, Vector3<S>&,                                     \
                                      typename ModelTangentTpl<S>::ContactSettingsBar&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
