// Networks inside the dynamics (model/network.hpp): Model.with_network, network_inputs,
// network_outputs and networks. Their weights are ordinary parameters (Model.params), so every
// gradient function and both ML bridges reach them without more bindings.
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "gradyn/model/network.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn::python {

namespace {

std::vector<std::string> names_arg(nb::handle h, const char* what) {
  if (nb::isinstance<nb::str>(h))
    throw ArgumentError(std::string(what) + ": expected a list of names, got the single name '" +
                        nb::cast<std::string>(h) + "' (wrap it in a list)");
  try {
    return nb::cast<std::vector<std::string>>(h);
  } catch (const nb::cast_error&) {
    throw ArgumentError(std::string(what) + ": expected a list of names (str), got " +
                        nb::type_name(h.type()).c_str());
  }
}

nb::dict network_dict(const Model& model, size_t n, int offset) {
  const Network& net = model.networks[n];
  nb::dict d;
  d["name"] = net.name;
  d["site"] = network_site_name(net.site);
  if (net.body >= 0) d["body"] = model.body_names[net.body];
  if (net.site == NetworkSite::BodyWrench) d["frame"] = net.world_frame ? "world" : "body";
  if (is_contact_site(net.site))
    d["other"] = net.other_body == kAnyOtherBody ? std::string() : net.other_body < 0 ? std::string("world")
                                                                                       : model.body_names[net.other_body];
  std::vector<std::string> inputs;
  for (const NetworkInput& x : net.inputs) inputs.push_back(x.name);
  d["inputs"] = inputs;
  d["outputs"] = net.output_names;
  d["widths"] = net.shape.widths;
  d["activation"] = activation_name(net.shape.hidden);
  d["output_activation"] = activation_name(net.shape.output);
  d["param_offset"] = offset;
  d["param_count"] = net.shape.param_count();
  d["weights"] = nb::cast(to_numpy(net.weights), nb::rv_policy::move);
  return d;
}

}  // namespace

void bind_networks(nb::module_& m) {
  nb::class_<PyModel> model_class = nb::borrow<nb::class_<PyModel>>(m.attr("Model"));
  model_class
      .def(
          "with_network",
          [](const PyModel& self, const std::string& name, nb::handle inputs, nb::handle outputs,
             const std::vector<int>& hidden, const std::string& activation, const std::string& output_activation,
             const std::string& site, std::uint64_t seed, bool zero_last_layer, const std::string& body,
             const std::string& frame, const std::string& other) {
            NetworkSpec spec;
            spec.name = name;
            spec.site = site;
            spec.body = body;
            spec.frame = frame;
            spec.other = other;
            spec.inputs = names_arg(inputs, "inputs");
            if (!outputs.is_none()) spec.outputs = names_arg(outputs, "outputs");
            spec.hidden = hidden;
            spec.activation = activation;
            spec.output_activation = output_activation;
            spec.seed = seed;
            spec.zero_last_layer = zero_last_layer;
            return std::make_unique<PyModel>(with_network(self.model, spec));
          },
          nb::arg("name"), nb::arg("inputs"), nb::arg("outputs").none() = nb::none(),
          nb::arg("hidden") = std::vector<int>{}, nb::arg("activation") = "tanh",
          nb::arg("output_activation") = "identity", nb::arg("site") = "joint_force", nb::arg("seed") = 0,
          nb::arg("zero_last_layer") = true, nb::arg("body") = "", nb::arg("frame") = "body", nb::arg("other") = "",
          R"doc(
A copy of this model with a small dense network inside its dynamics (a hybrid model, paper 001).

site 'joint_force': the network's outputs are residual generalized forces on the DoFs named in
``outputs`` (None: every DoF; names from ``network_outputs()``), added to tau in every step, from
the quantities named in ``inputs`` (names from ``network_inputs()``: ``'<joint>.q'`` for 1-DoF
joints, ``'<joint>.v'`` or ``'<joint>.v[k]'``, ``'<actuator>.ctrl'``, which reads 0 when a step
gets no controls).

site 'body_wrench': the outputs are a residual wrench on ``body`` at its origin (fluid drag),
``'torque.x|y|z'`` and ``'force.x|y|z'`` (None: all six), in the body's axes (``frame='body'``)
or the world's (``frame='world'``); it reaches the joints as J^T wrench. Besides the joint
quantities its inputs may be the body's pose and velocity: ``'pos.x|y|z'`` (origin, world),
``'rot[i,j]'`` (world rotation), ``'vel.ang.x|y|z'``, ``'vel.lin.x|y|z'`` (its spatial velocity in
its own frame).

site 'contact_force': the outputs are a residual force at every contact of ``body`` (only those
with body ``other`` when given, ``other='world'`` for the world's geoms), evaluated per contact
while the surfaces overlap: ``'normal'`` (along the contact normal, pushing ``body`` away) and
``'force.x|y|z'`` (world axes), on ``body`` at the contact point, the opposite on the other side.
site 'contact_friction': the one output ``'friction'`` is added to the pair's friction coefficient
at every such contact (the sum is clamped at 0): friction that depends on where a body slides.
Inputs at both contact sites: the contact seen from ``body``, ``'contact.depth'``,
``'contact.normal.x|y|z'`` (the way the other side pushes ``body``), ``'contact.pos.x|y|z'``,
``'contact.vel.x|y|z'`` (``body``'s point relative to the other side's), and the body's pose and
velocity as at 'body_wrench'; no joint quantities. Only the penalty contact model evaluates them
(a step under 'pgs', 'ipm' or no contact raises ValueError).

hidden: widths of the hidden layers (empty: one affine layer). activation: of the hidden layers,
one of 'identity', 'tanh', 'relu', 'elu', 'softplus', 'sigmoid'; output_activation: of the last.
Weights start seeded (Glorot uniform for identity/tanh/sigmoid layers, He uniform for
relu/elu/softplus; biases zero); zero_last_layer (default) zeroes the last layer, so the hybrid
model starts exactly as this one.

The weights are parameters: ``param_names`` lists them as ``'<name>.layer<l>.weight[i,j]'``
(output i, input j) and ``'<name>.layer<l>.bias[i]'``, after every other parameter, so
``rollout_vjp``, ``with_params``, per-world ``params`` and gradyn.torch / gradyn.jax train them.
Unknown names raise ValueError listing the valid ones.)doc")
      .def(
          "with_network_inputs",
          [](const PyModel& self, const std::string& name, nb::handle inputs) {
            return std::make_unique<PyModel>(with_network_inputs(self.model, name, names_arg(inputs, "inputs")));
          },
          nb::arg("name"), nb::arg("inputs"), R"doc(
A copy of this model whose network `name` reads only `inputs` (a subset of its inputs): its first
layer keeps those inputs' weight columns, every other weight stays. gradyn.prune_inputs calls it
with the inputs whose group norm survived the lasso.)doc")
      .def(
          "network_inputs", [](const PyModel& self, const std::string& site) { return network_inputs(self.model, site); },
          nb::arg("site") = "joint_force",
          "The quantities a network at `site` ('joint_force', 'body_wrench', 'contact_force' or 'contact_friction') "
          "may read, by name (see with_network).")
      .def(
          "network_outputs", [](const PyModel& self, const std::string& site) { return network_outputs(self.model, site); },
          nb::arg("site") = "joint_force", "The quantities a network at `site` may drive, by name (see with_network).")
      .def_prop_ro(
          "networks",
          [](const PyModel& self) {
            nb::list out;
            int offset = static_cast<int>(get_params(self.model).size());
            for (const Network& net : self.model.networks) offset -= net.shape.param_count();
            for (size_t n = 0; n < self.model.networks.size(); ++n) {
              out.append(network_dict(self.model, n, offset));
              offset += self.model.networks[n].shape.param_count();
            }
            return out;
          },
          R"doc(
The networks inside the dynamics, in the order they were added, one dict each: name, site,
body (body_wrench and contact sites), frame (body_wrench: 'body' or 'world'), other (contact
sites: '' for any), inputs, outputs, widths ([inputs, hidden..., outputs]), activation, output_activation, weights
(a copy, nn layout: each layer's weight matrix row-major, then its bias) and where those weights
sit in ``params``: ``params[param_offset : param_offset + param_count]``.)doc");
}

}  // namespace gradyn::python
