// gradyn._core._flat_model: a model as the flat arrays the CUDA backend reads (gradyn/flat/export.hpp),
// for gradyn.cuda, which hands them to libgradyn_cuda.so.
#include "common.hpp"
#include "gradyn/flat/export.hpp"

namespace gradyn::python {

void bind_flat(nb::module_& m) {
  m.def(
      "_flat_model",
      [](const PyModel& s) {
        auto* arrays = new flat::FlatArrays(flat::export_flat_model(s.model));
        nb::capsule owner(arrays, [](void* p) noexcept { delete static_cast<flat::FlatArrays*>(p); });
        nb::ndarray<nb::numpy, std::int32_t> ints(arrays->ints.data(), {arrays->ints.size()}, owner);
        nb::ndarray<nb::numpy, double> reals(arrays->reals.data(), {arrays->reals.size()}, owner);
        return nb::make_tuple(ints, reals);
      },
      nb::arg("model"),
      "The model as (ints, reals), the flat arrays of the GPU kernels; ValueError names what they do not run.");
}

}  // namespace gradyn::python
