// The forward-mode AD scalar that gradyn instantiates its algorithms for (besides double):
// Eigen's AutoDiffScalar carrying a fixed-size chunk of kADChunk directional derivatives.
// A Jacobian with more inputs is computed in several passes, kADChunk columns at a time (the
// "chunk mode" of forward-mode AD). Fixed size keeps it allocation-free and avoids the
// size-mismatch pitfalls of AutoDiffScalar with dynamic derivative vectors. It is the
// reference the hand-written gradients are checked against, never the fast path.
#pragma once

#include <cmath>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

namespace gradyn {

inline constexpr int kADChunk = 8;
using ADDerivatives = Eigen::Matrix<double, kADChunk, 1>;
using ADScalar = Eigen::AutoDiffScalar<ADDerivatives>;

/// Value of a scalar, whether double or ADScalar.
inline double value_of(double x) { return x; }
inline double value_of(const ADScalar& x) { return x.value(); }

/// True when every entry's value is finite (no NaN, no inf).
template <class Derived>
bool all_finite(const Eigen::MatrixBase<Derived>& x) {
  for (Eigen::Index k = 0; k < x.size(); ++k)
    if (!std::isfinite(value_of(x[k]))) return false;
  return true;
}

/// True when x is zero and carries no derivative: a term it multiplies can be skipped without
/// losing any derivative.
inline bool is_inert_zero(double x) { return x == 0.0; }
inline bool is_inert_zero(const ADScalar& x) { return x.value() == 0.0 && x.derivatives().isZero(0.0); }

/// An AD scalar with value x whose derivative is 1 in direction `slot` (or none if slot < 0).
inline ADScalar ad_seed(double x, int slot) {
  ADScalar s(x);
  s.derivatives().setZero();
  if (slot >= 0) s.derivatives()[slot] = 1.0;
  return s;
}

}  // namespace gradyn

// Instantiate X(Scalar) for every scalar the library is compiled for: double, and the forward-mode AD
// scalar unless the build leaves out the AD reference (CMake option GRADYN_AD_REFERENCE, on by default
// and required by the tests; off in `scripts/setup.sh demo`'s lean build, which compiles in about a
// quarter less time). Without it, gradcheck says how to rebuild.
#ifndef GRADYN_AD_REFERENCE
#define GRADYN_AD_REFERENCE 1
#endif
#if GRADYN_AD_REFERENCE
#define GRADYN_FOR_EACH_SCALAR(X) \
  X(double)                       \
  X(::gradyn::ADScalar)
#else
#define GRADYN_FOR_EACH_SCALAR(X) X(double)
#endif
// Both scalars whatever the option: code that the double path itself runs in forward mode (the nested
// narrowphase of collide_vjp, the force law of penalty_jacobian).
#define GRADYN_FOR_EACH_SCALAR_ALWAYS(X) \
  X(double)                              \
  X(::gradyn::ADScalar)
