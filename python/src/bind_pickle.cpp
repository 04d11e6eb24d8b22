// Pickling of gradyn.Model (pickle, copy.deepcopy, multiprocessing, Ray): __getstate__ gives the
// bytes of model/serialize.hpp, __setstate__ builds the Model from them. The Data workspace is not
// part of the state: the new Model allocates its own, as every Model does.
#include <string_view>

#include "common.hpp"
#include "gradyn/model/serialize.hpp"

namespace gradyn::python {

void bind_pickle(nb::module_&) {
  nb::handle model_class = nb::type<PyModel>();
  if (!model_class.is_valid()) throw std::logic_error("bind_pickle: gradyn.Model is not registered yet");

  nb::cpp_function_def(
      [](const PyModel& self) {
        const std::string bytes = serialize_model(self.model);
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::scope(model_class), nb::name("__getstate__"), nb::is_method(),
      "The model as bytes (gradyn's versioned model format), for pickle and copy.deepcopy.");

  // nanobind calls __setstate__ on an instance that is not constructed yet (that is how it unpickles):
  // build the Model first, so that bad bytes leave nothing half made, then construct in place.
  nb::cpp_function_def(
      [](PyModel& self, nb::handle state) {
        if (!nb::isinstance<nb::bytes>(state))
          throw ArgumentError(std::string("gradyn.Model.__setstate__: expected the bytes of Model.__getstate__(), got ") +
                              nb::type_name(state.type()).c_str());
        const nb::bytes bytes = nb::borrow<nb::bytes>(state);
        Model model = deserialize_model(std::string_view(bytes.c_str(), bytes.size()));
        new (&self) PyModel(std::move(model));
      },
      nb::scope(model_class), nb::name("__setstate__"), nb::is_method(), nb::arg("state"),
      "Rebuilds the model from the bytes of __getstate__ (pickle calls it). Raises gradyn.ModelError for "
      "bytes that are not such a model or come from another format version.");
}

}  // namespace gradyn::python
