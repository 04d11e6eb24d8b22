// Read-only views of a Model's per-body parameters (joint placements, axes, inertias), so that
// Python code can re-implement or inspect the dynamics (e.g. the PyTorch tape baseline in
// bench/tape_baseline). Every property returns a new array; the Model stays immutable.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"

namespace gradyn::python {

namespace {

nb::object owned(NumpyArray a) { return nb::cast(std::move(a), nb::rv_policy::move); }

/// One row-major (rows x cols) block per body, stacked into shape (nbodies, rows, cols), or
/// (nbodies, rows) when cols == 0.
template <class Fill>
nb::object per_body(const Model& model, size_t rows, size_t cols, Fill fill) {
  const size_t nb = static_cast<size_t>(model.nbodies());
  double* d;
  NumpyArray out = cols == 0 ? new_array({nb, rows}, &d) : new_array({nb, rows, cols}, &d);
  const size_t block = rows * (cols == 0 ? 1 : cols);
  for (size_t i = 0; i < nb; ++i) fill(static_cast<int>(i), d + i * block);
  return owned(std::move(out));
}

void write_matrix3(const Matrix3<double>& m, double* d) {
  Eigen::Map<Eigen::Matrix<double, 3, 3, Eigen::RowMajor>> out(d);
  out = m;
}

void write_vector3(const Vector3<double>& x, double* d) {
  Eigen::Map<Eigen::Vector3d> out(d);
  out = x;
}

}  // namespace

void bind_model_data(nb::module_& m) {
  nb::class_<PyModel> cls = nb::borrow<nb::class_<PyModel>>(m.attr("Model"));
  cls.def_prop_ro(
         "joint_types",
         [](const PyModel& s) {
           std::vector<std::string> types;
           for (JointType t : s.model.joint_type) types.emplace_back(joint_type_name(t));
           return types;
         },
         "Kind of each body's joint ('free', 'revolute', ...), in body order.")
      .def_prop_ro("idx_q", [](const PyModel& s) { return s.model.idx_q; },
                   "Index of each body's joint's first entry in q, in body order.")
      .def_prop_ro("idx_v", [](const PyModel& s) { return s.model.idx_v; },
                   "Index of each body's joint's first entry in v, in body order.")
      .def_prop_ro(
          "joint_placements",
          [](const PyModel& s) {
            return per_body(s.model, 4, 4, [&](int i, double* d) {
              Eigen::Map<Eigen::Matrix<double, 4, 4, Eigen::RowMajor>> T(d);
              T.setIdentity();
              T.topLeftCorner<3, 3>() = s.model.joint_placement[i].R;
              T.topRightCorner<3, 1>() = s.model.joint_placement[i].p;
            });
          },
          "Joint frame of each body in its parent body's frame, shape (nbodies, 4, 4) homogeneous.")
      .def_prop_ro(
          "joint_axes",
          [](const PyModel& s) {
            return per_body(s.model, 3, 0, [&](int i, double* d) { write_vector3(s.model.joint_axis[i], d); });
          },
          "Axis of each body's joint in the joint frame, shape (nbodies, 3) (revolute, prismatic; "
          "unused by other joint kinds).")
      .def_prop_ro(
          "body_masses",
          [](const PyModel& s) {
            Eigen::VectorXd masses(s.model.nbodies());
            for (int i = 0; i < s.model.nbodies(); ++i) masses[i] = s.model.body_inertia[i].mass;
            return owned(to_numpy(masses));
          },
          "Mass of each body (links welded by fixed joints merged), shape (nbodies,).")
      .def_prop_ro(
          "body_coms",
          [](const PyModel& s) {
            return per_body(s.model, 3, 0, [&](int i, double* d) { write_vector3(s.model.body_inertia[i].com, d); });
          },
          "Centre of mass of each body in its body frame, shape (nbodies, 3).")
      .def_prop_ro(
          "body_inertias",
          [](const PyModel& s) {
            return per_body(s.model, 3, 3,
                            [&](int i, double* d) { write_matrix3(s.model.body_inertia[i].inertia_com, d); });
          },
          "Rotational inertia of each body about its centre of mass, body axes, shape (nbodies, 3, 3).");
}

}  // namespace gradyn::python
