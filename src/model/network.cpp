// Networks inside the dynamics (model/network.hpp): the names a network may read and drive, and
// with_network, which checks a user's request against them and adds the network to a model copy.
#include "gradyn/model/network.hpp"

#include <algorithm>
#include <sstream>

#include "gradyn/model/detail/joint_quantities.hpp"
#include "gradyn/model/model.hpp"

namespace gradyn {

const char* network_site_name(NetworkSite site) {
  switch (site) {
    case NetworkSite::JointForce: return "joint_force";
    case NetworkSite::BodyWrench: return "body_wrench";
    case NetworkSite::ContactForce: return "contact_force";
    case NetworkSite::ContactFriction: return "contact_friction";
  }
  return "unknown";
}

NetworkSite network_site_from_name(const std::string& name) {
  if (name == "joint_force") return NetworkSite::JointForce;
  if (name == "body_wrench") return NetworkSite::BodyWrench;
  if (name == "contact_force") return NetworkSite::ContactForce;
  if (name == "contact_friction") return NetworkSite::ContactFriction;
  throw ArgumentError("site: expected one of 'joint_force', 'body_wrench', 'contact_force', 'contact_friction', got '" +
                      name + "'");
}

namespace {

std::string dof_name(const Model& model, int body, int k) {
  const std::string& joint = model.joint_names[body];
  return model.joint_nv(body) == 1 ? joint : joint + "[" + std::to_string(k) + "]";
}

// Every input a network at a joint_force site may read, in model order: positions of the 1-DoF
// joints, then every DoF's velocity (model/detail/joint_quantities.hpp), then the controls.
std::vector<NetworkInput> joint_force_inputs(const Model& model) {
  std::vector<NetworkInput> all;
  for (const detail::JointQuantity& x : detail::joint_quantities(model))
    all.push_back({x.position ? NetworkInput::Kind::Position : NetworkInput::Kind::Velocity,
                   x.position ? x.q_index : x.v_index, x.v_index, x.name});
  for (int a = 0; a < model.nu(); ++a)
    all.push_back({NetworkInput::Kind::Control, a, 0, model.actuators[a].name + ".ctrl"});
  return all;
}

// The inputs a network at `site` may read: at body_wrench its body's pose and velocity, then the
// joint quantities; at a contact site the contact's quantities, then its body's pose and velocity.
std::vector<NetworkInput> site_inputs(const Model& model, NetworkSite site) {
  std::vector<NetworkInput> all;
  using K = NetworkInput::Kind;
  const char* xyz[] = {"x", "y", "z"};
  if (is_contact_site(site)) {
    all.push_back({K::ContactDepth, 0, 0, "contact.depth"});
    for (int k = 0; k < 3; ++k) all.push_back({K::ContactNormal, k, 0, std::string("contact.normal.") + xyz[k]});
    for (int k = 0; k < 3; ++k) all.push_back({K::ContactPosition, k, 0, std::string("contact.pos.") + xyz[k]});
    for (int k = 0; k < 3; ++k) all.push_back({K::ContactVelocity, k, 0, std::string("contact.vel.") + xyz[k]});
  }
  if (site != NetworkSite::JointForce) {
    for (int k = 0; k < 3; ++k) all.push_back({K::BodyPosition, k, 0, std::string("pos.") + xyz[k]});
    for (int k = 0; k < 9; ++k)
      all.push_back({K::BodyRotation, k, 0, "rot[" + std::to_string(k / 3) + "," + std::to_string(k % 3) + "]"});
    for (int k = 0; k < 3; ++k) all.push_back({K::BodyAngularVelocity, k, 0, std::string("vel.ang.") + xyz[k]});
    for (int k = 0; k < 3; ++k) all.push_back({K::BodyLinearVelocity, k, 0, std::string("vel.lin.") + xyz[k]});
  }
  if (is_contact_site(site)) return all;  // evaluated per contact, inside the contact model
  for (NetworkInput& x : joint_force_inputs(model)) all.push_back(std::move(x));
  return all;
}

std::string joined(const std::vector<std::string>& names) {
  std::ostringstream s;
  for (size_t k = 0; k < names.size(); ++k) s << (k ? ", " : "") << "'" << names[k] << "'";
  return s.str();
}

const std::vector<std::string> kWrenchOutputs = {"torque.x", "torque.y", "torque.z", "force.x", "force.y", "force.z"};
const std::vector<std::string> kContactForceOutputs = {"normal", "force.x", "force.y", "force.z"};
const std::vector<std::string> kContactFrictionOutputs = {"friction"};

// A body a network names (the one it acts on, or a contact site's other side); throws naming the
// network and `what` was asked for otherwise.
int network_body(const Model& model, const std::string& who, const std::string& what, const std::string& body,
                 const char* welded_hint = "") {
  const int id = model.body_id(body);
  const int frame = id < 0 ? model.frame_id(body) : -1;
  if (frame >= 0 && model.frames[frame].body >= 0)  // a link welded to a body: its name survives as a frame
    throw ArgumentError(who + ": '" + body + "' is welded to body '" + model.body_names[model.frames[frame].body] +
                        "' (gradyn merges links joined by fixed joints); give that body" + welded_hint);
  if (id < 0)
    throw ArgumentError(who + ": " + what + "; body '" + body + "' is not one of the model's bodies: " +
                        joined(model.body_names));
  return id;
}

template <class T, class NameOf>
std::vector<std::string> names_of(const std::vector<T>& xs, NameOf name_of) {
  std::vector<std::string> out;
  for (const T& x : xs) out.push_back(name_of(x));
  return out;
}

}  // namespace

std::vector<std::string> network_inputs(const Model& model, const std::string& site) {
  return names_of(site_inputs(model, network_site_from_name(site)), [](const NetworkInput& x) { return x.name; });
}

std::vector<std::string> network_outputs(const Model& model, const std::string& site) {
  switch (network_site_from_name(site)) {
    case NetworkSite::BodyWrench: return kWrenchOutputs;
    case NetworkSite::ContactForce: return kContactForceOutputs;
    case NetworkSite::ContactFriction: return kContactFrictionOutputs;
    case NetworkSite::JointForce: break;
  }
  std::vector<std::string> out;
  for (int i = 0; i < model.nbodies(); ++i)
    for (int k = 0; k < model.joint_nv(i); ++k) out.push_back(dof_name(model, i, k));
  return out;
}

Model with_network(const Model& model, const NetworkSpec& spec) {
  const std::string who = "network '" + spec.name + "'";
  if (spec.name.empty()) throw ArgumentError("network: give it a name (it prefixes its parameters' names)");
  if (spec.name.find('.') != std::string::npos)
    throw ArgumentError(who + ": a network's name may not contain '.' (it prefixes its parameters' names)");
  for (const Network& n : model.networks)
    if (n.name == spec.name)
      throw ArgumentError(who + ": the model has a network of that name already; networks: " +
                          joined(names_of(model.networks, [](const Network& x) { return x.name; })));
  Network net;
  net.name = spec.name;
  net.site = network_site_from_name(spec.site);

  if (net.site == NetworkSite::BodyWrench) {
    net.body = network_body(model, who, "site 'body_wrench' needs the body it acts on", spec.body,
                            ", whose origin the wrench then acts at");
    if (spec.frame != "body" && spec.frame != "world")
      throw ArgumentError(who + ": frame: expected 'body' or 'world', got '" + spec.frame + "'");
    net.world_frame = spec.frame == "world";
  } else if (is_contact_site(net.site)) {
    net.body = network_body(model, who, "site '" + spec.site + "' needs the body whose contacts it acts on", spec.body);
    if (spec.other == "world") {
      net.other_body = -1;
    } else if (!spec.other.empty()) {
      net.other_body = network_body(model, who, "other: expected 'world' or the body on the contacts' other side",
                                    spec.other);
      if (net.other_body == net.body)
        throw ArgumentError(who + ": other: a body does not touch itself; give another body, 'world' or none");
    }
  } else if (!spec.body.empty()) {
    throw ArgumentError(who + ": site '" + spec.site + "' acts on joints; body '" + spec.body +
                        "' is for site 'body_wrench' (or a contact site)");
  }
  if (!is_contact_site(net.site) && !spec.other.empty())
    throw ArgumentError(who + ": other ('" + spec.other + "') is for sites 'contact_force' and 'contact_friction'");

  const std::vector<NetworkInput> valid_inputs = site_inputs(model, net.site);
  if (spec.inputs.empty())
    throw ArgumentError(who + ": give it at least one input; valid inputs at site '" + spec.site +
                        "': " + joined(network_inputs(model, spec.site)));
  for (const std::string& name : spec.inputs) {
    const auto it = std::find_if(valid_inputs.begin(), valid_inputs.end(),
                                 [&](const NetworkInput& x) { return x.name == name; });
    if (it == valid_inputs.end())
      throw ArgumentError(who + ": unknown input '" + name + "' at site '" + spec.site +
                          "'; valid inputs: " + joined(network_inputs(model, spec.site)));
    if (std::count(spec.inputs.begin(), spec.inputs.end(), name) > 1)
      throw ArgumentError(who + ": input '" + name + "' is listed twice");
    net.inputs.push_back(*it);
  }

  const std::vector<std::string> valid_outputs = network_outputs(model, spec.site);
  std::vector<int> output_dof;  // beside valid_outputs: the entry of v (the wrench component) each names
  if (net.site != NetworkSite::JointForce)
    for (int k = 0; k < static_cast<int>(valid_outputs.size()); ++k) output_dof.push_back(k);
  else
    for (int i = 0; i < model.nbodies(); ++i)
      for (int k = 0; k < model.joint_nv(i); ++k) output_dof.push_back(model.idx_v[i] + k);
  const std::vector<std::string>& outputs = spec.outputs.empty() ? valid_outputs : spec.outputs;
  if (outputs.empty()) throw ArgumentError(who + ": the model has no degree of freedom for it to drive");
  const char* what_outputs = net.site == NetworkSite::JointForce     ? "degrees of freedom"
                             : net.site == NetworkSite::BodyWrench ? "wrench components"
                                                                   : "contact quantities";
  for (const std::string& name : outputs) {
    const auto it = std::find(valid_outputs.begin(), valid_outputs.end(), name);
    if (it == valid_outputs.end())
      throw ArgumentError(who + ": unknown output '" + name + "' at site '" + spec.site +
                          "' (outputs are " + what_outputs + "); valid outputs: " + joined(valid_outputs));
    if (std::count(outputs.begin(), outputs.end(), name) > 1)
      throw ArgumentError(who + ": output '" + name + "' is listed twice");
    net.output_dofs.push_back(output_dof[it - valid_outputs.begin()]);
    net.output_names.push_back(name);
  }

  net.shape.widths.push_back(static_cast<int>(net.inputs.size()));
  for (size_t l = 0; l < spec.hidden.size(); ++l) {
    if (spec.hidden[l] <= 0)
      throw ArgumentError(who + ": hidden layer " + std::to_string(l) + " needs at least one unit, got " +
                          std::to_string(spec.hidden[l]));
    net.shape.widths.push_back(spec.hidden[l]);
  }
  net.shape.widths.push_back(static_cast<int>(net.output_dofs.size()));
  try {
    net.shape.hidden = activation_from_name(spec.activation);
    net.shape.output = activation_from_name(spec.output_activation);
  } catch (const ArgumentError& e) {
    throw ArgumentError(who + ": " + e.what());
  }
  check_dense_shape(net.shape, who);
  net.weights = dense_initial_weights(net.shape, spec.seed, spec.zero_last_layer);

  Model out = model;
  out.networks.push_back(std::move(net));
  return out;
}

Model with_network_inputs(const Model& model, const std::string& name, const std::vector<std::string>& inputs) {
  const auto it = std::find_if(model.networks.begin(), model.networks.end(),
                               [&](const Network& n) { return n.name == name; });
  if (it == model.networks.end())
    throw ArgumentError("no network named '" + name + "'; networks: " +
                        joined(names_of(model.networks, [](const Network& x) { return x.name; })));
  const Network& net = *it;
  const std::string who = "network '" + name + "'";
  if (inputs.empty()) throw ArgumentError(who + ": keep at least one input");
  std::vector<int> kept;  // old input index of each new input
  for (const std::string& input : inputs) {
    const auto at = std::find_if(net.inputs.begin(), net.inputs.end(), [&](const NetworkInput& x) { return x.name == input; });
    if (at == net.inputs.end())
      throw ArgumentError(who + ": '" + input + "' is not one of its inputs; inputs: " +
                          joined(names_of(net.inputs, [](const NetworkInput& x) { return x.name; })));
    if (std::count(inputs.begin(), inputs.end(), input) > 1) throw ArgumentError(who + ": input '" + input + "' is listed twice");
    kept.push_back(static_cast<int>(at - net.inputs.begin()));
  }
  Network pruned = net;
  pruned.inputs.clear();
  for (int j : kept) pruned.inputs.push_back(net.inputs[j]);
  pruned.shape.widths[0] = static_cast<int>(kept.size());
  pruned.weights.resize(pruned.shape.param_count());
  const int out = net.shape.widths[1], in = net.shape.widths[0];
  for (int i = 0; i < out; ++i)
    for (size_t j = 0; j < kept.size(); ++j) pruned.weights[i * kept.size() + j] = net.weights[i * in + kept[j]];
  const int rest = net.shape.param_count() - net.shape.bias_offset(0);  // layer 0's bias and every later layer
  pruned.weights.tail(rest) = net.weights.tail(rest);
  Model result = model;
  result.networks[it - model.networks.begin()] = std::move(pruned);
  return result;
}

}  // namespace gradyn
