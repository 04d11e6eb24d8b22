// Networks at contact sites (model/network.hpp) inside the penalty contact model: per contact, the
// contact_friction networks' residual on the pair's Coulomb coefficient and the contact_force
// networks' residual force, and their adjoint. Shared by penalty.cpp and penalty_vjp.cpp.
//
// Per contact between bodies A (geom a) and B (geom b), normal n from a to b, and a network on
// body N in {A, B}, side s = +1 when N is B and -1 when N is A:
//   inputs      depth, s n (the way the other side pushes N), the point p, s u (u = v_B(p) - v_A(p)),
//               and N's pose and velocity (NetworkBodyState)
//   friction    mu = max(0, mu_pair + sum of the contact_friction outputs), used while f_n > 0
//   force       on N: y_normal s n + y_force (world), while depth > 0; so on B: s (that)
#pragma once

#include "gradyn/dynamics/detail/network_inputs.hpp"
#include "gradyn/nn/dense.hpp"

namespace gradyn::detail {

/// Which side of a contact between bodies body_a and body_b (-1: the world) a contact-site network
/// is on: +1 its body is body_b, -1 body_a, 0 the contact is not one of its.
template <class S>
int contact_network_side(const NetworkTpl<S>& net, int body_a, int body_b) {
  int side = 0, other = 0;
  if (net.body == body_b) side = 1, other = body_a;
  else if (net.body == body_a) side = -1, other = body_b;
  else return 0;
  return net.other_body == kAnyOtherBody || net.other_body == other ? side : 0;
}

template <class S>
NetworkContactState<S> network_contact_state(const ContactTpl<S>& c, int side, const Vector3<S>& u) {
  return {c.depth, Vector3<S>(S(side) * c.normal), c.point, Vector3<S>(S(side) * u)};
}

/// Runs each network at `site` that sees contact c (between bodies body_a and body_b; u its
/// relative velocity) forward and calls visit(n, side, st, y): the network's index, its side, its
/// body's state and its outputs (its layers stay in data.network_work[n]). state_of(body) gives a
/// body's NetworkBodyState.
template <class S, class StateOf, class Visit>
void run_contact_networks(const ModelTpl<S>& model, DataTpl<S>& data, NetworkSite site, const ContactTpl<S>& c,
                          int body_a, int body_b, const Vector3<S>& u, const StateOf& state_of, Visit&& visit) {
  for (size_t n = 0; n < model.networks.size(); ++n) {
    const NetworkTpl<S>& net = model.networks[n];
    if (net.site != site) continue;
    const int side = contact_network_side(net, body_a, body_b);
    if (side == 0) continue;
    DenseWorkspaceTpl<S>& work = data.network_work[n];
    const NetworkBodyState<S> st = state_of(net.body);
    gather_contact_network_inputs(net, st, network_contact_state(c, side, u), work.input);
    visit(n, side, st, dense_forward<S>(net.shape, net.weights, work));
  }
}

/// The pair's Coulomb coefficient mu plus the outputs of the contact_friction networks on contact
/// c (not yet clamped).
template <class S, class StateOf>
S friction_with_networks(const ModelTpl<S>& model, DataTpl<S>& data, const ContactTpl<S>& c, int body_a, int body_b,
                         const Vector3<S>& u, S mu, const StateOf& state_of) {
  run_contact_networks<S>(model, data, NetworkSite::ContactFriction, c, body_a, body_b, u, state_of,
                          [&](size_t, int, const NetworkBodyState<S>&, const auto& y) { mu += y[0]; });
  return mu;
}

/// The force of the contact_force networks on contact c's body b (world).
template <class S, class StateOf>
Vector3<S> network_contact_force(const ModelTpl<S>& model, DataTpl<S>& data, const ContactTpl<S>& c, int body_a,
                                 int body_b, const Vector3<S>& u, const StateOf& state_of) {
  Vector3<S> f = Vector3<S>::Zero();
  run_contact_networks<S>(model, data, NetworkSite::ContactForce, c, body_a, body_b, u, state_of,
                          [&](size_t n, int side, const NetworkBodyState<S>&, const auto& y) {
    const NetworkTpl<S>& net = model.networks[n];
    Vector3<S> on_body = Vector3<S>::Zero();
    for (size_t k = 0; k < net.output_dofs.size(); ++k) {
      const int out = net.output_dofs[k];
      if (out == 0) on_body += (S(side) * y[k]) * c.normal;
      else on_body[out - 1] += y[k];
    }
    f += S(side) * on_body;
  });
  return f;
}

/// The adjoints of one contact's quantities and of the networks' bodies and weights.
template <class S>
struct ContactNetworkBars {
  S depth = S(0);
  Vector3<S> normal = Vector3<S>::Zero(), point = Vector3<S>::Zero(), velocity = Vector3<S>::Zero();
};

/// Adjoint of friction_with_networks (given mu_bar, the adjoint of its result; friction: whether
/// the coefficient acted unclamped) and of network_contact_force (given f_bar, the adjoint of the
/// force on b; force: whether it acted, depth > 0). Adds the contact's adjoints to bars, the
/// networks' bodies' pose and world-velocity adjoints to pose_bar and ow_bar (per body), and the
/// weights' to model_bar.
template <class S, class StateOf>
void contact_networks_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const ContactTpl<S>& c, int body_a, int body_b,
                          const Vector3<S>& u, const StateOf& state_of, bool friction, const S& mu_bar, bool force,
                          const Vector3<S>& f_bar, ContactNetworkBars<S>& bars, std::vector<Vector6<S>>& pose_bar,
                          std::vector<Vector6<S>>& ow_bar, ModelTangentTpl<S>& model_bar) {
  using K = NetworkInput::Kind;
  auto reverse = [&](size_t n, int side, const NetworkBodyState<S>& st, const auto& y) {
    const NetworkTpl<S>& net = model.networks[n];
    const bool is_friction = net.site == NetworkSite::ContactFriction;
    const S sign = S(side);
    DenseWorkspaceTpl<S>& work = data.network_work[n];
    if (is_friction) {
      work.output_bar[0] = mu_bar;
    } else {  // f_b += s (y_normal s n + y_force)
      for (size_t k = 0; k < net.output_dofs.size(); ++k) {
        const int out = net.output_dofs[k];
        if (out == 0) {
          work.output_bar[k] = c.normal.dot(f_bar);
          bars.normal += y[k] * f_bar;
        } else {
          work.output_bar[k] = sign * f_bar[out - 1];
        }
      }
    }
    work.input_bar.setZero();
    dense_vjp<S>(net.shape, net.weights, work, work.output_bar, work.input_bar, model_bar.network_weights[n]);
    Vector3<S> p_bar = Vector3<S>::Zero(), ang_bar = Vector3<S>::Zero(), lin_bar = Vector3<S>::Zero();
    Matrix3<S> R_bar = Matrix3<S>::Zero();
    bool body_read = false;
    for (size_t j = 0; j < net.inputs.size(); ++j) {
      const NetworkInput& in = net.inputs[j];
      const S x_bar = work.input_bar[j];
      switch (in.kind) {
        case K::ContactDepth: bars.depth += x_bar; break;
        case K::ContactNormal: bars.normal[in.index] += sign * x_bar; break;
        case K::ContactPosition: bars.point[in.index] += x_bar; break;
        case K::ContactVelocity: bars.velocity[in.index] += sign * x_bar; break;
        case K::BodyPosition: p_bar[in.index] += x_bar, body_read = true; break;
        case K::BodyRotation: R_bar(in.index / 3, in.index % 3) += x_bar, body_read = true; break;
        case K::BodyAngularVelocity: ang_bar[in.index] += x_bar, body_read = true; break;
        case K::BodyLinearVelocity: lin_bar[in.index] += x_bar, body_read = true; break;
        default: break;  // joint quantities: not at contact sites (model/network.cpp)
      }
    }
    if (body_read) network_body_state_vjp<S>(st, p_bar, R_bar, ang_bar, lin_bar, pose_bar[net.body], ow_bar[net.body]);
  };
  if (friction) run_contact_networks<S>(model, data, NetworkSite::ContactFriction, c, body_a, body_b, u, state_of, reverse);
  if (force) run_contact_networks<S>(model, data, NetworkSite::ContactForce, c, body_a, body_b, u, state_of, reverse);
}

}  // namespace gradyn::detail
