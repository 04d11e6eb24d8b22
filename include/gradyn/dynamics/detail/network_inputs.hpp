// Gathers a network's inputs (model/network.hpp) from q, v, ctrl and, at a body_wrench site, its
// body's pose and velocity; and turns a body_wrench network's output into a world wrench. Shared by
// the network forces, their adjoint and their Jacobian.
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

/// Needs data.oMi[body] and data.network_ow[body] current.
template <class S>
NetworkBodyState<S> network_body_state(const DataTpl<S>& data, int body) {
  NetworkBodyState<S> st;
  st.R = data.oMi[body].R, st.p = data.oMi[body].p;
  st.w = data.network_ow[body].template head<3>();
  st.u = data.network_ow[body].template tail<3>() + st.w.cross(st.p);
  st.ang = st.R.transpose() * st.w, st.lin = st.R.transpose() * st.u;
  return st;
}

template <class S, class Q, class V, class C, class Out>
void gather_network_inputs(const NetworkTpl<S>& net, const Q& q, const V& v, const C& ctrl, Out& x,
                           const NetworkBodyState<S>* body = nullptr) {
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
    }
  }
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
