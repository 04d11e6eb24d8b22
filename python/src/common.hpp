// Shared pieces of the Python bindings: the Python-side Model (a C++ Model plus its cached
// Data), NumPy argument checking and NumPy results.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

// The double-precision API only (not gradyn.hpp, which also pulls in the autodiff scalar).
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/energy.hpp"
#include "gradyn/dynamics/jacobian.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/dynamics/rnea.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn::python {

namespace nb = nanobind;

/// What Python calls gradyn.Model: an immutable C++ Model and one Data workspace, allocated once,
/// that every call reuses.
struct PyModel {
  explicit PyModel(Model m) : model(std::move(m)), data(model) {}

  Model model;
  Data data;
  // Guards `data`. Calls made with the GIL held are already serialised; rollout releases the GIL
  // and so must own the workspace while it runs.
  std::mutex data_mutex;
};

/// The workspace for one call: the model's cached Data when it is free, otherwise (another thread
/// is inside a rollout on the same model) a private one. Never blocks.
class DataLease {
 public:
  explicit DataLease(PyModel& m) : lock_(m.data_mutex, std::try_to_lock) {
    if (lock_.owns_lock()) {
      data_ = &m.data;
    } else {
      own_.emplace(m.model);
      data_ = &*own_;
    }
  }
  Data& operator*() { return *data_; }

 private:
  std::unique_lock<std::mutex> lock_;
  std::optional<Data> own_;
  Data* data_;
};

using ConstArray = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;

/// Any array-like (NumPy array of any dtype or order, list, tuple, scalar) as a C-contiguous
/// float64 array. Throws ValueError naming the argument if it is not numeric.
ConstArray as_array(nb::handle h, const char* name);

/// "(7,)", "(3, 4)".
std::string shape_string(const ConstArray& a);

/// Throws ArgumentError ("q: expected shape (7,), got (6,)") unless `a` has exactly `shape`.
/// A -1 in `shape` accepts any size.
void check_shape(const ConstArray& a, const char* name, std::initializer_list<Eigen::Index> shape);

/// A 1-D float64 argument of n entries, viewed as an Eigen vector (no copy for float64 input).
struct VectorArg {
  VectorArg(nb::handle h, const char* name, Eigen::Index n);
  ConstArray array;  // keeps a converted copy alive
  Eigen::Map<const Eigen::VectorXd> x;
};

/// Three finite numbers (a position, an axis, gravity); ArgumentError naming the argument otherwise.
Eigen::Vector3d vector3_arg(nb::handle h, const char* name);

/// Throws ArgumentError ("q: expected finite numbers, got nan at index 3") unless every entry is
/// finite: the one-state functions (aba, crba, frame_pose, ...) refuse NaN and inf, where the step
/// family flags them (Status.NON_FINITE) so that one bad world does not stop a batch.
void check_finite(const Eigen::Ref<const Eigen::VectorXd>& x, const char* name);

/// A 1-D argument that may be None: None gives n zeros (zeros_when_none, e.g. tau) or an empty
/// vector (the C++ functions read an empty ctrl as "every control zero").
class OptionalVectorArg {
 public:
  OptionalVectorArg(nb::handle h, const char* name, Eigen::Index n, bool zeros_when_none);
  Eigen::Ref<const Eigen::VectorXd> x() const {
    if (arg_) return arg_->x;
    return fallback_;
  }
  bool given() const { return arg_.has_value(); }

 private:
  std::optional<VectorArg> arg_;
  Eigen::VectorXd fallback_;
};

/// A (T, n) float64 argument, one row per step, that may be None: None gives zeros of that shape
/// (zeros_when_none, e.g. taus) or an empty matrix (ctrls: every control zero). Any number of rows
/// is accepted: steps_of has checked that the per-step arrays agree.
class OptionalRowsArg {
 public:
  OptionalRowsArg(nb::handle h, const char* name, Eigen::Index T, Eigen::Index n, bool zeros_when_none);
  Eigen::Ref<const MatrixXr<double>> x() const {
    if (array_.is_valid()) return Eigen::Map<const MatrixXr<double>>(array_.data(), rows_, cols_);
    return fallback_;
  }
  bool given() const { return array_.is_valid(); }
  Eigen::Index rows() const { return rows_; }

 private:
  ConstArray array_;
  MatrixXr<double> fallback_;
  Eigen::Index rows_ = 0, cols_ = 0;
};

/// The number of steps T of a rollout given its per-step arrays (taus, ctrls; either may be None):
/// their first dimension, which must agree. Throws ArgumentError naming both shapes otherwise, or
/// when both are None.
Eigen::Index steps_of(nb::handle taus, nb::handle ctrls);

/// New NumPy arrays that own their memory (C order).
using NumpyArray = nb::ndarray<nb::numpy, double>;
NumpyArray new_array(std::initializer_list<size_t> shape, double** data);
NumpyArray to_numpy(const Eigen::Ref<const Eigen::VectorXd>& x);
NumpyArray matrix_to_numpy(const Eigen::Ref<const Eigen::MatrixXd>& m);  // (rows, cols)
NumpyArray to_numpy(const Pose<double>& pose);                     // 4x4 homogeneous matrix
/// Takes the buffer of a row-major matrix without copying it.
NumpyArray take_numpy(MatrixXr<double>&& m);

/// "euler" (semi-implicit Euler) or "rk4"; ValueError otherwise.
Integrator parse_integrator(const std::string& name);
/// The step options a Python call passed, checked as every C++ step function checks them
/// (check_step_options): dt positive and finite, an integrator the model's contact model allows.
StepOptions step_options(const Model& model, double dt, const std::string& integrator);

// Batched calls (bind_batch.cpp): a leading batch dimension B on every per-world array, the worlds
// run on `threads` threads (None: all cores) without the GIL; params (B, nparams): per-world models.
/// True when q (the first per-world argument) has a batch dimension: a 2-D array or nested sequence.
bool is_batched(nb::handle q);
/// The thread count of a batched call: `threads` when positive, all cores for None; ArgumentError
/// otherwise (bind_batch.cpp).
int threads_arg(std::optional<int> threads);
nb::object step_batched(PyModel& s, nb::handle q, nb::handle v, nb::handle tau, nb::handle ctrl, double dt,
                        Integrator scheme, bool return_status, nb::handle params, std::optional<int> threads);
nb::object step_vjp_batched(PyModel& s, nb::handle q, nb::handle v, nb::handle tau, nb::handle ctrl, double dt,
                            nb::handle q_next_bar, nb::handle v_next_bar, Integrator scheme, nb::handle params,
                            std::optional<int> threads);
nb::object step_jacobian_batched(PyModel& s, nb::handle q, nb::handle v, nb::handle tau, nb::handle ctrl, double dt,
                                 Integrator scheme, nb::handle params, std::optional<int> threads);
nb::object rollout_batched(PyModel& s, nb::handle q0, nb::handle v0, nb::handle taus, nb::handle ctrls, double dt,
                           Integrator scheme, bool return_status, nb::handle params, std::optional<int> threads);
nb::object rollout_vjp_batched(PyModel& s, nb::handle q0, nb::handle v0, nb::handle taus, nb::handle ctrls, double dt,
                               nb::handle qs_bar, nb::handle vs_bar, Integrator scheme, const CheckpointOptions& options,
                               nb::handle qs, nb::handle vs, bool return_norms, nb::handle params,
                               std::optional<int> threads);
/// A single world's argument as a batch of one (a leading dimension of 1; None stays None), and a
/// batched call's results for that one world: a single-world call with params runs the batched path.
nb::object one_world(nb::handle x);
nb::object unbatched(nb::handle results);

// Registration, one function per translation unit.
void bind_model(nb::module_& m);
void bind_dynamics(nb::module_& m);
void bind_gradients(nb::module_& m);  // step_vjp, rollout_vjp, gradcheck
void bind_sensors(nb::module_& m);  // sensors, sensors_vjp
void bind_params(nb::module_& m);  // Model.param_names, params, with_params; param_index (after bind_model)
void bind_model_data(nb::module_& m);  // Model.joint_placements & co
void bind_collision(nb::module_& m);  // collide, Model.geom_names, Model.geoms (after bind_model)
void bind_actuators(nb::module_& m);  // actuator_torques, actuator_torques_vjp
void bind_contact(nb::module_& m);  // Model.contact_model, contact_settings, with_contact (after bind_model)
void bind_networks(nb::module_& m);  // Model.with_network, network_inputs, networks (after bind_model)
void bind_control(nb::module_& m);  // _box_qp, _ilqr_backward_pass, _feedback_rollout (gradyn.control)
void bind_pickle(nb::module_& m);  // Model.__getstate__, __setstate__ (after bind_model)
void bind_flat(nb::module_& m);  // _flat_model (gradyn.cuda)
void bind_render(nb::module_& m);  // _render, _render_vjp (gradyn.render)
/// 'penalty' -> ContactModel::Penalty ('none' -> None); ArgumentError otherwise, naming `argument`,
/// the Python argument that gave it (bind_contact.cpp).
ContactModel parse_contact_model(const std::string& name, const char* argument);

}  // namespace gradyn::python
