// The flat parameter vector on gradyn.Model (param_names, params, with_params) and
// gradyn.param_index. Added to the Model class that bind_model() registered.
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn::python {

namespace {

constexpr const char* kLayout = R"doc(
Layout, per body in body order (<b> the body's name, <j> its joint's)::

    <b>.mass, <b>.com.x|y|z, <b>.inertia.ixx|iyy|izz|ixy|ixz|iyz   (body frame, about the CoM)
    <j>.origin.x|y|z, <j>.origin.roll|pitch|yaw                     (joint frame in the parent)
    <j>.axis.x|y|z                      revolute, continuous, prismatic (normalised by with_params)
    <j>.damping, <j>.armature, <j>.stiffness  per DoF, interleaved ([k] suffix if several DoFs)
    <j>.rest                            revolute, continuous, prismatic, planar ([k] for planar)
    <j>.frictionloss                    per DoF with dry friction (frictionloss > 0)

then gravity.x|y|z; then per collision geom, in ``model.geom_names`` order (<g> its name)::

    <g>.friction, <g>.restitution
    <g>.size[k]                         the entries its type uses: sphere 1, capsule/cylinder 2,
                                        box 3 (half-extents), plane none
    <g>.origin.x|y|z, <g>.origin.roll|pitch|yaw   (geom frame in its body frame)

then the contact settings (always present)::

    contact.stiffness, contact.exponent, contact.damping, contact.velocity_scale,
    contact.static_friction_ratio, contact.viscous_friction, contact.erp, contact.slop, contact.cfm

then per actuator, in ``model.actuator_names`` order (<a> its name)::

    <a>.kp, <a>.kv (position), <a>.kv (velocity), <a>.gain[0|1|2], <a>.bias[0|1|2] (general),
    <a>.kp, <a>.kv, <a>.velocity_limit (servo); then <a>.gear; <a>.ctrlrange.lower|upper and
    <a>.forcerange.lower|upper where the actuator clamps them

then per joint coupling (<c>.polycoef[0..4]), per body connection (<c>.anchor1.x|y|z,
<c>.anchor2.x|y|z and, for a weld, <c>.rotation.roll|pitch|yaw) and per fixed tendon
(<t>.stiffness, <t>.damping, <t>.spring_length); last, per network inside the dynamics, in
``model.networks`` order (<n> its name), layer by layer::

    <n>.layer<l>.weight[i,j] (row-major: output i, input j), then <n>.layer<l>.bias[i]
)doc";

int param_index(const PyModel& self, const std::string& name) {
  const std::vector<std::string> names = param_names(self.model);
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return static_cast<int>(k);
  throw nb::key_error(("no parameter named '" + name + "' (model '" + self.model.name + "'; see model.param_names)").c_str());
}

}  // namespace

void bind_params(nb::module_& m) {
  nb::handle model_class = nb::type<PyModel>();
  if (!model_class.is_valid()) throw std::logic_error("bind_params: gradyn.Model is not registered yet");
  auto property = nb::module_::import_("builtins").attr("property");

  model_class.attr("param_names") = property(
      nb::cpp_function([](const PyModel& s) { return param_names(s.model); }, nb::is_method()), nb::none(),
      nb::none(),
      (std::string("Names of the differentiable parameters (list of str), in the order of ``model.params``.") +
       kLayout)
          .c_str());

  model_class.attr("params") = property(
      nb::cpp_function([](const PyModel& s) { return to_numpy(get_params(s.model)); }, nb::is_method()), nb::none(),
      nb::none(),
      "The differentiable parameters as a new float64 array (a copy), named by ``model.param_names``. "
      "Gradients w.r.t. the model come back in this layout.");

  nb::cpp_function_def(
      [](const PyModel& s, nb::handle values) {
        const Eigen::Index n = static_cast<Eigen::Index>(param_names(s.model).size());
        VectorArg p(values, "p", n);
        return std::make_unique<PyModel>(with_params(s.model, p.x));
      },
      nb::scope(model_class), nb::name("with_params"), nb::is_method(), nb::arg("p"),
      "A new Model with every parameter taken from p (shape ``(len(model.param_names),)``); the\n"
      "inverse of ``model.params``. Joint and geom origins are rebuilt from roll, pitch, yaw; axes are\n"
      "normalised (any non-zero vector is valid). Raises ValueError naming the expected and actual\n"
      "shape, and\n"
      "ModelError (a ValueError naming the body) if a mass is negative, not finite, or zero on a\n"
      "body that had mass; ModelError naming the geom if a friction is negative, a restitution\n"
      "above 1 or a size not positive (a restitution below 0 is accepted, so that central differences\n"
      "around the default 0 work); and ModelError for bad contact settings when the model's contact\n"
      "is on.");

  m.def("param_index", &param_index, nb::arg("model"), nb::arg("name"),
        "Index of the parameter `name` in ``model.params`` (e.g. ``'link1.mass'``, ``'gravity.z'``).\n"
        "Raises KeyError if the model has no such parameter.");
}

}  // namespace gradyn::python
