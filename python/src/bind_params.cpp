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
    <j>.axis.x|y|z                      revolute, continuous, prismatic (used as given)
    <j>.damping, <j>.armature, <j>.stiffness  per DoF, interleaved ([k] suffix if several DoFs)
    <j>.rest                            revolute, continuous, prismatic, planar ([k] for planar)

then gravity.x|y|z.)doc";

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
      "inverse of ``model.params``. Joint origins are rebuilt from roll, pitch, yaw; axes are used as\n"
      "given (not renormalised). Raises ValueError naming the expected and actual shape, and\n"
      "ModelError (a ValueError naming the body) if a mass is negative, not finite, or zero on a\n"
      "body that had mass.");

  m.def("param_index", &param_index, nb::arg("model"), nb::arg("name"),
        "Index of the parameter `name` in ``model.params`` (e.g. ``'link1.mass'``, ``'gravity.z'``).\n"
        "Raises KeyError if the model has no such parameter.");
}

}  // namespace gradyn::python
