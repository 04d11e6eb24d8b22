// gradyn's core types: the Eigen aliases every layer uses (fixed-size spatial blocks, dynamic
// vectors, the algorithms' vector arguments) and the size check that guards them. Small on purpose:
// every translation unit includes it, so that it rarely changes.
#pragma once

#include <type_traits>

#include <Eigen/Core>

namespace gradyn {

template <class S> using Vector3 = Eigen::Matrix<S, 3, 1>;
template <class S> using Vector6 = Eigen::Matrix<S, 6, 1>;
template <class S> using Matrix3 = Eigen::Matrix<S, 3, 3>;
template <class S> using Matrix6 = Eigen::Matrix<S, 6, 6>;
template <class S> using VectorX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
template <class S> using MatrixX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
// Row-major, like NumPy arrays: trajectories are stored one time step per row.
template <class S> using MatrixXr = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Vector arguments of the algorithms. The scalar is deduced from the Model alone
// (std::type_identity_t makes these non-deduced), so plain Eigen::VectorXd arguments work:
// aba(model, data, q, v, tau).
template <class S> using VecRef = Eigen::Ref<const VectorX<std::type_identity_t<S>>>;
template <class S> using VecOut = Eigen::Ref<VectorX<std::type_identity_t<S>>>;
template <class S> using NoDeduce = std::type_identity_t<S>;
template <class S> using Quaternion = Eigen::Quaternion<S>;
// A joint motion subspace: 6 rows, up to 6 columns, stored inline (no heap).
template <class S> using Matrix6X = Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6>;

/// Throws ArgumentError unless x has `expected` entries; `what` names the argument.
void check_size(const char* what, Eigen::Index actual, Eigen::Index expected);

}  // namespace gradyn
