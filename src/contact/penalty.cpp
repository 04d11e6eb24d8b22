#include "gradyn/contact/penalty.hpp"

#include <cmath>
#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/detail/contact_networks.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/dynamics/detail/body_forces.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

const char* friction_model_name(FrictionModel model) {
  switch (model) {
    case FrictionModel::SmoothCoulomb: return "smooth_coulomb";
    case FrictionModel::Brown: return "brown";
  }
  return "?";
}

template <class S>
S hunt_crossley_force(const ContactSettings& settings, const S& depth, const S& depth_rate) {
  using std::pow;
  if (!(value_of(depth) > 0.0)) return S(0);
  const S f = S(settings.stiffness) * pow(depth, settings.exponent) * (S(1) + S(settings.damping) * depth_rate);
  // A fast separation would make the damper pull the bodies together: clamp (Hunt-Crossley's model
  // has no adhesion).
  return value_of(f) > 0.0 ? f : S(0);
}

template <class S>
Vector3<S> friction_force(const ContactSettings& settings, const S& mu, const S& normal_force,
                          const Vector3<S>& tangential_velocity) {
  using std::sqrt;
  using std::tanh;
  const double vs = settings.velocity_scale;
  const S s2 = tangential_velocity.squaredNorm();
  if (settings.friction == FrictionModel::SmoothCoulomb)
    return (-mu * normal_force / sqrt(s2 + S(vs * vs))) * tangential_velocity;
  // Brown & McPhee. f_t = -(f_n mu_B(s) + mu_v s) u_t / s: mu_B(s) / s stays finite as s -> 0
  // (tanh(4 s/v_s)/s -> 4/v_s) but is 0/0 at s = 0 exactly, so s gets a floor far below v_s.
  const S s = sqrt(s2 + S(1e-24 * vs * vs));
  const S r = s / S(vs);
  const S den = r * r / S(4) + S(0.75);
  const S mu_s = mu * S(settings.static_friction_ratio);
  S magnitude = normal_force * (mu * tanh(S(4) * r) + (mu_s - mu) * r / (den * den));
  if (value_of(normal_force) > 0.0) magnitude += S(settings.viscous_friction) * s;
  return (-magnitude / s) * tangential_velocity;
}

namespace {
// World velocity of the material point `point` of a body (-1: the world, at rest).
template <class S>
Vector3<S> point_velocity(const DataTpl<S>& data, int body, const Vector3<S>& point) {
  if (body < 0) return Vector3<S>::Zero();
  const Pose<S>& X = data.oMi[body];
  const Vector3<S> w = X.R * data.v[body].template head<3>();
  return X.R * data.v[body].template tail<3>() + w.cross(point - X.p);
}

// Adds the force f at world point p to a body's spatial force (about the world origin).
template <class S>
void add_force(DataTpl<S>& data, int body, const Vector3<S>& point, const Vector3<S>& f) {
  if (body < 0) return;
  data.contact_body_force[body].template head<3>() += point.cross(f);
  data.contact_body_force[body].template tail<3>() += f;
}
}  // namespace

template <class S>
const VectorX<S>& penalty_contact_forces(const ModelTpl<S>& model, DataTpl<S>& data) {
  const ContactSettings& settings = model.contact;
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) data.contact_body_force[i].setZero();
  const bool networks = detail::has_contact_networks(model);
  // A body's state as networks read it, from its pose and its body-frame velocity data.v
  auto state_of = [&](int body) {
    const Pose<S>& X = data.oMi[body];
    const Vector3<S> w = X.R * data.v[body].template head<3>();
    Vector6<S> ow;
    ow << w, Vector3<S>(X.R * data.v[body].template tail<3>()) - w.cross(X.p);
    return detail::network_body_state<S>(X, ow);
  };
  for (int k = 0; k < data.ncontacts; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    const GeomTpl<S>& ga = model.geoms[c.geom_a];
    const GeomTpl<S>& gb = model.geoms[c.geom_b];
    const Vector3<S> u = point_velocity(data, gb.body, c.point) - point_velocity(data, ga.body, c.point);
    const S un = u.dot(c.normal);
    const S fn = hunt_crossley_force<S>(settings, c.depth, -un);
    Vector3<S> f = fn * c.normal;
    if (value_of(fn) > 0.0) {
      S mu = model.geoms[c.friction_geom].friction;
      if (networks) {
        mu = detail::friction_with_networks<S>(model, data, c, ga.body, gb.body, u, mu, state_of);
        if (!(value_of(mu) > 0.0)) mu = S(0);
      }
      f += friction_force<S>(settings, mu, fn, Vector3<S>(u - un * c.normal));
    }
    if (networks && value_of(c.depth) > 0.0)
      f += detail::network_contact_force<S>(model, data, c, ga.body, gb.body, u, state_of);
    data.contact_force[k] = f;
    add_force(data, gb.body, c.point, f);
    add_force(data, ga.body, c.point, Vector3<S>(-f));
  }
  // Body connections as stiff spring-dampers (joint_constraints.hpp's rows J, forces J^T f): at the
  // anchors f = -(k g + c g_dot), g = p1 - p2, on body1 and -f on body2; a weld's rotation the torque
  // t = -(k e + c (omega1 - omega2)), e its orientation error, on body1 and -t on body2; k, c the
  // contact settings' limit_stiffness and limit_damping.
  const S k_c = S(settings.limit_stiffness), c_c = S(settings.limit_damping);
  for_each_connection_block<S>(model, [&](int, const BodyConnection& c, bool rotational) {
    if (rotational) {
      Vector3<S> rate = data.oMi[c.body1].R * data.v[c.body1].template head<3>();
      if (c.body2 >= 0) rate -= data.oMi[c.body2].R * data.v[c.body2].template head<3>();
      const Vector3<S> t = -(k_c * weld_rotation_error<S>(data, c) + c_c * rate);
      data.contact_body_force[c.body1].template head<3>() += t;
      if (c.body2 >= 0) data.contact_body_force[c.body2].template head<3>() -= t;
      return;
    }
    Vector3<S> p1, p2;
    connection_points<S>(data, c, p1, p2);
    const Vector3<S> f = -(k_c * Vector3<S>(p1 - p2) +
                           c_c * Vector3<S>(point_velocity(data, c.body1, p1) - point_velocity(data, c.body2, p2)));
    add_force(data, c.body1, p1, f);
    add_force(data, c.body2, p2, Vector3<S>(-f));
  });
  // tau_c = J^T f
  data.contact_tau.setZero();
  detail::add_body_forces_to_tau(model, data, data.contact_body_force, data.contact_subtree_force, data.contact_tau);
  return data.contact_tau;
}

template <class S>
const VectorX<S>& contact_generalized_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                             const VecRef<S>& v) {
  if (model.contact.model == ContactModel::None) {
    data.ncontacts = 0;
    data.contact_tau.setZero();
    return data.contact_tau;
  }
  forward_kinematics<S>(model, data, q, v);
  collide<S>(model, data, model.contact.margin);
  penalty_contact_forces<S>(model, data);
  add_joint_limit_forces<S>(model, q, v, data.contact_tau);
  add_joint_constraint_forces<S>(model, q, v, data.contact_tau);
  return data.contact_tau;
}

// The force laws in forward mode serve the double path too (penalty_jacobian): both scalars always.
#define GRADYN_INSTANTIATE(S)                                                                                  \
  template S hunt_crossley_force<S>(const ContactSettings&, const S&, const S&);                              \
  template Vector3<S> friction_force<S>(const ContactSettings&, const S&, const S&, const Vector3<S>&);
GRADYN_FOR_EACH_SCALAR_ALWAYS(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE
#define GRADYN_INSTANTIATE(S)                                                                                  \
  template const VectorX<S>& penalty_contact_forces<S>(const ModelTpl<S>&, DataTpl<S>&);                      \
  template const VectorX<S>& contact_generalized_forces<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, \
                                                           const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
