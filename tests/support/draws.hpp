// Random test data that is the same under every compiler.
#pragma once

#include <Eigen/Core>

namespace gradyn::test {

/// Three draws of `draw()` as (x, y, z), drawn in the order z, y, x. The order of a call's
/// arguments is unspecified in C++ (GCC evaluates them right to left, clang left to right), so
/// `Vector3d(u(rng), u(rng), u(rng))` gave every compiler its own test cases; the tests' cases
/// were recorded under GCC, whose order this keeps.
template <class Draw>
Eigen::Vector3d draw3(Draw&& draw) {
  const double z = draw(), y = draw(), x = draw();
  return Eigen::Vector3d(x, y, z);
}

}  // namespace gradyn::test
