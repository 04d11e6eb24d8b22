// Networks inside the dynamics (paper 001, §III-C): a hybrid model is an analytical model plus small
// dense networks (nn/dense.hpp) at chosen sites, each fed named quantities of the state and the
// controls. Their weights are model parameters (model/params.hpp), so every gradient of the engine
// (step_vjp, rollout_vjp, step_jacobian, the ML bridges, batched per-world params) reaches them.
//
// Sites:
//   joint_force  a residual generalized force on chosen joints' DoFs, added to tau in the
//                accelerations stage (dynamics/network_forces.hpp), from chosen joint positions,
//                velocities and controls.
//   body_wrench  a residual wrench on one body (fluid drag, paper 001's swimmer), applied at the
//                body's origin and expressed in the body frame or in the world frame; it reaches
//                the joints as J^T wrench.
//   contact_force     a residual force at every contact of one body (optionally only those with one
//                     other body, or the world), evaluated per contact by the penalty contact model
//                     (contact/penalty.hpp) while the two surfaces overlap (depth > 0). It acts on
//                     the network's body at the contact point, the opposite force on the other side.
//   contact_friction  a state-dependent parameter (paper 001's "neural scalar"): a residual added to
//                     the pair's Coulomb coefficient at every such contact (the sum is clamped at 0),
//                     so friction can depend on where on a surface a body slides.
//                Under pgs and ipm the contacts are impulses of one coupled problem, not per-contact
//                force laws: a step refuses a model with networks at contact sites unless its
//                contact model is penalty (paper 001 augments its force-level model for the same
//                reason).
//
// Inputs are named (network_inputs lists them for a site):
//   "<joint>.q"       the position of a 1-DoF joint (revolute, continuous, prismatic)
//   "<joint>.v"       the velocity of a 1-DoF joint; "<joint>.v[k]" DoF k of a multi-DoF joint
//   "<actuator>.ctrl" an actuator's control (0 when a step is given no controls)
//   body_wrench and contact sites, of the network's body: "pos.x|y|z" (its origin in the world),
//   "rot[i,j]" (its world rotation matrix), "vel.ang.x|y|z" and "vel.lin.x|y|z" (its spatial
//   velocity in its own frame: angular velocity, and the velocity of its origin)
//   contact sites only, of the contact, seen from the network's body: "contact.depth" (> 0 while
//   overlapping), "contact.normal.x|y|z" (world, unit, the direction the other side pushes the
//   body), "contact.pos.x|y|z" (the contact point, world), "contact.vel.x|y|z" (the velocity of the
//   body's material point there relative to the other side's, world). Contact sites read no joint
//   quantities: they run inside the contact model, per contact.
// Outputs of joint_force are DoFs named the same way as velocities, without the ".v": "<joint>" or
// "<joint>[k]"; of body_wrench the wrench's components "torque.x|y|z", "force.x|y|z"; of
// contact_force "normal" (along contact.normal) and "force.x|y|z" (world axes), all on the
// network's body; of contact_friction "friction".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gradyn/model/errors.hpp"
#include "gradyn/nn/dense.hpp"

namespace gradyn {

template <class S> struct ModelTpl;

enum class NetworkSite : std::uint8_t { JointForce, BodyWrench, ContactForce, ContactFriction };

/// Whether networks at `site` run per contact, inside the penalty contact model.
inline bool is_contact_site(NetworkSite site) {
  return site == NetworkSite::ContactForce || site == NetworkSite::ContactFriction;
}

/// NetworkTpl::other_body at a contact site: every contact of the network's body.
inline constexpr int kAnyOtherBody = -2;

/// "joint_force", "body_wrench", "contact_force", "contact_friction".
const char* network_site_name(NetworkSite site);
/// The site with that name; throws ArgumentError listing the valid names otherwise.
NetworkSite network_site_from_name(const std::string& name);

/// One input of a network: which entry of q, v or ctrl it reads.
struct NetworkInput {
  // Body*: of the network's body (body_wrench, contact sites); Contact*: of the contact (contact
  // sites); index: the component (x, y, z; rot row-major; 0 for the depth)
  enum class Kind : std::uint8_t {
    Position, Velocity, Control, BodyPosition, BodyRotation, BodyAngularVelocity, BodyLinearVelocity,
    ContactDepth, ContactNormal, ContactPosition, ContactVelocity
  } kind = Kind::Velocity;
  int index = 0;    // entry of q (Position), v (Velocity) or ctrl (Control); Body*, Contact*: the component
  int tangent = 0;  // Position: the DoF (entry of v) of the same joint, for step_jacobian's columns
  std::string name;
};

template <class S>
struct NetworkTpl {
  std::string name;  // prefix of its parameters' names: "<name>.layer0.weight[i,j]"
  NetworkSite site = NetworkSite::JointForce;
  std::vector<NetworkInput> inputs;  // one per input unit, in order
  std::vector<int> output_dofs;      // joint_force: the DoF (entry of v) each output unit drives;
                                     // body_wrench: its wrench component (0-2 torque, 3-5 force);
                                     // contact_force: 0 normal, 1-3 force x, y, z; contact_friction: 0
  int body = -1;                     // body_wrench: the body it acts on; contact sites: whose contacts
  int other_body = kAnyOtherBody;    // contact sites: only contacts with this body (-1: the world's
                                     // geoms), or kAnyOtherBody
  bool world_frame = false;          // body_wrench: the wrench's axes (false: the body's own)
  std::vector<std::string> output_names;
  DenseShape shape;  // widths.front() == inputs.size(), widths.back() == output_dofs.size()
  VectorX<S> weights;  // shape.param_count() entries (nn/dense.hpp's layout)

  template <class T> NetworkTpl<T> cast() const {
    NetworkTpl<T> n;
    n.name = name, n.site = site, n.inputs = inputs, n.output_dofs = output_dofs, n.output_names = output_names;
    n.body = body, n.other_body = other_body, n.world_frame = world_frame;
    n.shape = shape;
    n.weights = weights.template cast<T>();
    return n;
  }
};
using Network = NetworkTpl<double>;

/// What a user asks for in with_network.
struct NetworkSpec {
  std::string name;                 // unique among the model's networks and a valid prefix (no '.')
  std::string site = "joint_force";  // or "body_wrench", "contact_force", "contact_friction"
  std::string body;                 // body_wrench, contact sites: the body it acts on (model.body_names)
  std::string other;                // contact sites: only contacts with this body ("world": the world's
                                    // geoms); empty: every contact of `body`
  std::string frame = "body";       // body_wrench: the wrench's axes, "body" or "world"
  std::vector<std::string> inputs;  // names from network_inputs(model, site)
  std::vector<std::string> outputs; // names from network_outputs(model, site); empty: all of them
  std::vector<int> hidden;          // widths of the hidden layers (may be empty: one affine layer)
  std::string activation = "tanh";  // of the hidden layers
  std::string output_activation = "identity";
  std::uint64_t seed = 0;
  bool zero_last_layer = true;      // start at output 0: the hybrid model starts as the analytical one
};

/// The quantities a network at `site` may read, by name (see the file comment).
std::vector<std::string> network_inputs(const ModelTpl<double>& model, const std::string& site);
/// The quantities a network at `site` may drive, by name.
std::vector<std::string> network_outputs(const ModelTpl<double>& model, const std::string& site);

/// A copy of the model with one more network, its weights from dense_initial_weights(seed). Throws
/// ArgumentError naming the network and listing the valid names for an unknown site, input or
/// output, a repeated name, or a shape that does not fit.
ModelTpl<double> with_network(const ModelTpl<double>& model, const NetworkSpec& spec);

/// A copy of the model whose network `name` reads only `inputs` (a subset of its inputs, in any
/// order): its first layer keeps the weight columns of those inputs, every other weight stays.
/// The pruning step of sparse input discovery (paper 001, Eq. 2). Throws ArgumentError naming the
/// network and listing its inputs for a name that is not one of them, or listing the networks for
/// an unknown network.
ModelTpl<double> with_network_inputs(const ModelTpl<double>& model, const std::string& name,
                                     const std::vector<std::string>& inputs);

}  // namespace gradyn
