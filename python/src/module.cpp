// gradyn._core: the module, its exceptions and the NumPy conversion helpers.
#include <cmath>
#include <sstream>

#include "common.hpp"

namespace gradyn::python {

// Raises unless `x` (anything with a NumPy dtype) holds real numbers (bool, integers, floats): complex
// numbers would lose their imaginary part and strings would be parsed, both without a word.
static void check_real_dtype(nb::handle x, const char* name) {
  if (!nb::hasattr(x, "dtype")) return;
  const nb::object dtype = x.attr("dtype");
  if (!nb::hasattr(dtype, "kind")) return;  // not a NumPy dtype (a torch tensor's): its conversion decides
  const std::string kind = nb::cast<std::string>(nb::str(dtype.attr("kind")));
  if (kind == "b" || kind == "i" || kind == "u" || kind == "f") return;
  const std::string what = kind == "c"   ? "complex numbers (pass the real part, x.real, if that is what you mean)"
                           : kind == "U" || kind == "S" ? "strings (convert them first, e.g. np.asarray(x, dtype=float))"
                           : kind == "O" ? "Python objects (None or mixed types?)"
                                         : "dtype " + std::string(nb::str(dtype).c_str());
  throw ArgumentError(std::string(name) + ": expected an array of real numbers, got " + what + ", dtype " +
                      nb::str(dtype).c_str());
}

ConstArray as_array(nb::handle h, const char* name) {
  ConstArray a;
  // Fast path: a C-contiguous float64 NumPy array, taken as it is.
  if (nb::try_cast(h, a, /*convert=*/false)) return a;
  // Other NumPy arrays are converted when they hold real numbers (any order, any real dtype).
  check_real_dtype(h, name);
  if (nb::try_cast(h, a, /*convert=*/true)) return a;
  // Lists, tuples and scalars go through NumPy.
  nb::object converted;
  try {
    nb::object np = nb::module_::import_("numpy");
    nb::object as_is = np.attr("asarray")(h);
    check_real_dtype(as_is, name);
    converted = np.attr("asarray")(as_is, nb::arg("dtype") = "float64", nb::arg("order") = "C");  // keeps 0-d
  } catch (nb::python_error&) {
    throw ArgumentError(std::string(name) + ": expected an array of numbers, got " +
                        nb::type_name(h.type()).c_str());
  }
  if (!nb::try_cast(converted, a, /*convert=*/false))
    throw ArgumentError(std::string(name) + ": expected an array of numbers, got " + nb::type_name(h.type()).c_str());
  return a;
}

std::string shape_string(const ConstArray& a) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < a.ndim(); ++i) s << (i ? ", " : "") << a.shape(i);
  s << (a.ndim() == 1 ? ",)" : ")");
  return s.str();
}

void check_shape(const ConstArray& a, const char* name, std::initializer_list<Eigen::Index> shape) {
  bool ok = a.ndim() == shape.size();
  size_t i = 0;
  for (Eigen::Index n : shape) {
    if (ok && n >= 0 && static_cast<Eigen::Index>(a.shape(i)) != n) ok = false;
    ++i;
  }
  if (ok) return;
  std::ostringstream s;
  s << name << ": expected shape (";
  i = 0;
  for (Eigen::Index n : shape) {
    s << (i++ ? ", " : "");
    if (n >= 0)
      s << n;
    else
      s << "*";
  }
  s << (shape.size() == 1 ? ",)" : ")") << ", got " << shape_string(a);
  throw ArgumentError(s.str());
}

static std::string vector_string(const Eigen::Ref<const Eigen::VectorXd>& x) {
  std::ostringstream s;
  s << "(";
  for (Eigen::Index i = 0; i < x.size(); ++i) s << (i ? ", " : "") << x[i];
  s << ")";
  return s.str();
}

void check_finite(const Eigen::Ref<const Eigen::VectorXd>& x, const char* name) {
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) {
      std::ostringstream s;
      s << name << ": expected finite numbers, got " << x[i] << " at index " << i;
      throw ArgumentError(s.str());
    }
}

static const double* checked_vector(const ConstArray& a, const char* name, Eigen::Index n) {
  check_shape(a, name, {n});
  return a.data();
}

VectorArg::VectorArg(nb::handle h, const char* name, Eigen::Index n)
    : array(as_array(h, name)), x(checked_vector(array, name, n), n) {}

Eigen::Vector3d vector3_arg(nb::handle h, const char* name) {
  const Eigen::Vector3d x = VectorArg(h, name, 3).x;
  if (!x.allFinite()) throw ArgumentError(std::string(name) + ": expected 3 finite numbers, got " + vector_string(x));
  return x;
}

OptionalVectorArg::OptionalVectorArg(nb::handle h, const char* name, Eigen::Index n, bool zeros_when_none) {
  if (!h.is_none()) arg_.emplace(h, name, n);
  else if (zeros_when_none) fallback_ = Eigen::VectorXd::Zero(n);
}

OptionalRowsArg::OptionalRowsArg(nb::handle h, const char* name, Eigen::Index T, Eigen::Index n, bool zeros_when_none) {
  if (h.is_none()) {
    if (zeros_when_none) fallback_ = MatrixXr<double>::Zero(T, n), rows_ = T, cols_ = n;
    return;
  }
  array_ = as_array(h, name);
  check_shape(array_, name, {-1, n});  // its number of rows was checked against the others' (steps_of)
  rows_ = static_cast<Eigen::Index>(array_.shape(0));
  cols_ = n;
}

Eigen::Index steps_of(nb::handle taus, nb::handle ctrls) {
  if (taus.is_none() && ctrls.is_none())
    throw ArgumentError("taus and ctrls are both None: give at least one of them (one row per step)");
  std::optional<ConstArray> t, c;
  if (!taus.is_none()) t = as_array(taus, "taus");
  if (!ctrls.is_none()) c = as_array(ctrls, "ctrls");
  if (t && c && t->ndim() >= 1 && c->ndim() >= 1 && t->shape(0) != c->shape(0))
    throw ArgumentError("taus and ctrls disagree on the number of steps: taus has shape " + shape_string(*t) +
                        ", ctrls " + shape_string(*c) + " (one row per step in both)");
  const ConstArray& first = t ? *t : *c;
  // (a shape other than (T, n) is reported with the array's expected shape by its own check)
  return first.ndim() >= 1 ? static_cast<Eigen::Index>(first.shape(0)) : 0;
}

NumpyArray new_array(std::initializer_list<size_t> shape, double** data) {
  size_t n = 1;
  for (size_t s : shape) n *= s;
  double* buffer = new double[n > 0 ? n : 1];
  nb::capsule owner(buffer, [](void* p) noexcept { delete[] static_cast<double*>(p); });
  *data = buffer;
  return NumpyArray(buffer, shape.size(), shape.begin(), owner);
}

NumpyArray to_numpy(const Eigen::Ref<const Eigen::VectorXd>& x) {
  double* d;
  NumpyArray out = new_array({static_cast<size_t>(x.size())}, &d);
  Eigen::Map<Eigen::VectorXd>(d, x.size()) = x;
  return out;
}

NumpyArray matrix_to_numpy(const Eigen::Ref<const Eigen::MatrixXd>& m) {
  double* d;
  NumpyArray out = new_array({static_cast<size_t>(m.rows()), static_cast<size_t>(m.cols())}, &d);
  Eigen::Map<MatrixXr<double>>(d, m.rows(), m.cols()) = m;
  return out;
}

NumpyArray to_numpy(const Pose<double>& pose) {
  double* d;
  NumpyArray out = new_array({4, 4}, &d);
  Eigen::Map<Eigen::Matrix<double, 4, 4, Eigen::RowMajor>> T(d);
  T.setIdentity();
  T.topLeftCorner<3, 3>() = pose.R;
  T.topRightCorner<3, 1>() = pose.p;
  return out;
}

NumpyArray take_numpy(MatrixXr<double>&& m) {
  auto* owned = new MatrixXr<double>(std::move(m));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<MatrixXr<double>*>(p); });
  return NumpyArray(owned->data(), {static_cast<size_t>(owned->rows()), static_cast<size_t>(owned->cols())}, owner);
}

Integrator parse_integrator(const std::string& name) {
  if (name == "euler" || name == "semi_implicit_euler") return Integrator::SemiImplicitEuler;
  if (name == "rk4") return Integrator::RK4;
  throw ArgumentError("integrator: expected 'euler' or 'rk4', got '" + name + "'");
}

StepOptions step_options(const Model& model, double dt, const std::string& integrator) {
  const StepOptions options{dt, parse_integrator(integrator)};
  check_step_options(model.contact, options);
  return options;
}

}  // namespace gradyn::python

NB_MODULE(_core, m) {
  using namespace gradyn::python;
  m.doc() = "gradyn's compiled core; use the `gradyn` package, which re-exports everything here.";
  // Bad model files and builder input: a ValueError whose message names file, line and element.
  nb::exception<gradyn::ModelError>(m, "ModelError", PyExc_ValueError);
  // gradyn::ArgumentError derives from std::invalid_argument, which nanobind raises as ValueError.
  bind_model(m);
  bind_dynamics(m);
  bind_gradients(m);
  bind_sensors(m);
  bind_params(m);
  bind_model_data(m);
  bind_collision(m);
  bind_contact(m);
  bind_actuators(m);
  bind_networks(m);
  bind_control(m);
  bind_pickle(m);
  bind_flat(m);
  bind_render(m);
}
