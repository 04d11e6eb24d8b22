// The forward-mode AD scalar that gradyn instantiates its algorithms for (besides double):
// Eigen's AutoDiffScalar with a dynamic derivative vector. Slow (it allocates), but exact; it is
// the reference that the hand-written gradients are checked against, never the fast path.
#pragma once

#include <unsupported/Eigen/AutoDiff>

namespace gradyn {

using ADScalar = Eigen::AutoDiffScalar<Eigen::VectorXd>;

/// Value of a scalar, whether double or ADScalar.
inline double value_of(double x) { return x; }
inline double value_of(const ADScalar& x) { return x.value(); }

}  // namespace gradyn

// Instantiate X(Scalar) for every scalar the library is compiled for.
#define GRADYN_FOR_EACH_SCALAR(X) \
  X(double)                       \
  X(::gradyn::ADScalar)
