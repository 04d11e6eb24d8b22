// Gathers a network's inputs (model/network.hpp) from q, v, ctrl and, at a body_wrench or contact
// site, its body's pose and velocity and the contact's quantities; takes the body state's adjoint
// back to the body's pose and velocity; and turns a body_wrench network's output into a world
// wrench. Shared by the network forces (dynamics/network_forces.hpp), the penalty contact model
// (contact sites), their adjoints and their Jacobian.
#pragma once

#include "gradyn/model/data.hpp"

namespace gradyn::detail {

/// Whether any network acts at a body_wrench site (they need the body kinematics).
template <class S>
bool has_body_wrench(const ModelTpl<S>& model) {
  for (const NetworkTpl<S>& net : model.networks)
    if (net.site == NetworkSite::BodyWrench) return true;
  return false;
}

/// A body's pose and velocity as a body_wrench network reads them. w, u: world angular velocity and
/// world velocity of the body's origin; ang = R^T w, lin = R^T u (the body frame).
template <class S>
struct NetworkBodyState {
  Matrix3<S> R;
  Vector3<S> p, w, u, ang, lin;
};

/// Whether any network runs per contact (contact_force, contact_friction).
template <class S>
bool has_contact_networks(const ModelTpl<S>& model) {
  for (const NetworkTpl<S>& net : model.networks)
    if (is_contact_site(net.site)) return true;
  return false;
}

/// The state of a body at world pose X moving with world spatial velocity ow = [w; v0] (v0: the
/// velocity of the body's material point at the world origin).
template <class S>
NetworkBodyState<S> network_body_state(const Pose<S>& X, const Vector6<S>& ow) {
  NetworkBodyState<S> st;
  st.R = X.R, st.p = X.p;
  st.w = ow.template head<3>();
  st.u = ow.template tail<3>() + st.w.cross(st.p);
  st.ang = st.R.transpose() * st.w, st.lin = st.R.transpose() * st.u;
  return st;
}

/// Needs data.oMi[body] and data.network_ow[body] current.
template <class S>
NetworkBodyState<S> network_body_state(const DataTpl<S>& data, int body) {
  return network_body_state<S>(data.oMi[body], data.network_ow[body]);
}

/// A contact as a network at a contact site reads it, from its body's side (model/network.hpp).
template <class S>
struct NetworkContactState {
  S depth;
  Vector3<S> normal, point, velocity;
};

/// [x x x_bar; x_bar]: the pose adjoint of a world point x fixed on a body (kinematics_vjp.hpp).
template <class S>
Vector6<S> point_adjoint(const Vector3<S>& x, const Vector3<S>& x_bar) {
  Vector6<S> w;
  w << x.cross(x_bar), x_bar;
  return w;
}

/// Adds the adjoints of a body's pose (pose_bar, kinematics_vjp.hpp's convention) and of its world
/// velocity ow (ow_bar) given those of its NetworkBodyState's p, R, ang and lin:
///   p: a point on the body;  R: dR = [dtheta]x R;  ang = R^T w;  lin = R^T u, u = v0 + w x p
template <class S>
void network_body_state_vjp(const NetworkBodyState<S>& st, const Vector3<S>& p_bar, const Matrix3<S>& R_bar,
                            const Vector3<S>& ang_bar, const Vector3<S>& lin_bar, Vector6<S>& pose_bar,
                            Vector6<S>& ow_bar) {
  pose_bar += point_adjoint<S>(st.p, p_bar);
  const Matrix3<S> A = R_bar * st.R.transpose();
  pose_bar.template head<3>() += Vector3<S>(A(2, 1) - A(1, 2), A(0, 2) - A(2, 0), A(1, 0) - A(0, 1));
  const Vector3<S> Ra = st.R * ang_bar, u_bar = st.R * lin_bar;
  pose_bar.template head<3>() += Ra.cross(st.w) + u_bar.cross(st.u);
  pose_bar += point_adjoint<S>(st.p, Vector3<S>(u_bar.cross(st.w)));
  ow_bar.template head<3>() += Ra + st.p.cross(u_bar);
  ow_bar.template tail<3>() += u_bar;
}

template <class S, class Q, class V, class C, class Out>
void gather_network_inputs(const NetworkTpl<S>& net, const Q& q, const V& v, const C& ctrl, Out& x,
                           const NetworkBodyState<S>* body = nullptr,
                           const NetworkContactState<S>* contact = nullptr) {
  using K = NetworkInput::Kind;
  for (size_t j = 0; j < net.inputs.size(); ++j) {
    const NetworkInput& in = net.inputs[j];
    switch (in.kind) {
      case K::Position: x[j] = q[in.index]; break;
      case K::Velocity: x[j] = v[in.index]; break;
      case K::Control: x[j] = ctrl.size() != 0 ? S(ctrl[in.index]) : S(0); break;
      case K::BodyPosition: x[j] = body->p[in.index]; break;
      case K::BodyRotation: x[j] = body->R(in.index / 3, in.index % 3); break;
      case K::BodyAngularVelocity: x[j] = body->ang[in.index]; break;
      case K::BodyLinearVelocity: x[j] = body->lin[in.index]; break;
      case K::ContactDepth: x[j] = contact->depth; break;
      case K::ContactNormal: x[j] = contact->normal[in.index]; break;
      case K::ContactPosition: x[j] = contact->point[in.index]; break;
      case K::ContactVelocity: x[j] = contact->velocity[in.index]; break;
    }
  }
}

/// A contact site network's inputs: its contact's quantities and its body's state.
template <class S, class Out>
void gather_contact_network_inputs(const NetworkTpl<S>& net, const NetworkBodyState<S>& body,
                                   const NetworkContactState<S>& contact, Out& x) {
  const VectorX<S> none;
  gather_network_inputs(net, none, none, none, x, &body, &contact);
}

/// The world spatial force (about the world origin) of a body_wrench network's wrench y =
/// [torque; force] at the body's origin, in the body's axes or the world's.
template <class S>
Vector6<S> network_wrench_in_world(const NetworkBodyState<S>& st, const Vector6<S>& y, bool world_frame) {
  Vector6<S> F;
  const Vector3<S> f = world_frame ? Vector3<S>(y.template tail<3>()) : Vector3<S>(st.R * y.template tail<3>());
  const Vector3<S> n = world_frame ? Vector3<S>(y.template head<3>()) : Vector3<S>(st.R * y.template head<3>());
  F.template head<3>() = n + st.p.cross(f);
  F.template tail<3>() = f;
  return F;
}

}  // namespace gradyn::detail
