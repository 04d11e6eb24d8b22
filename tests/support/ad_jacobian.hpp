// Reference Jacobians for gradient tests: chunked forward-mode AD (gradyn::ADScalar) and central
// finite differences, both of a function written once as a lambda over a flat input vector.
//
//   auto f = [&](const VectorX<ADScalar>& x) -> VectorX<ADScalar> { ... };   // any scalar path
//   Eigen::MatrixXd J = test::ad_jacobian(f, x0);        // m x n, exact to rounding
//   auto g = [&](const Eigen::VectorXd& x) -> Eigen::VectorXd { ... };
//   Eigen::MatrixXd Jfd = test::fd_jacobian(g, x0, 1e-6);
//
// To differentiate with respect to model parameters, let the lambda write the entries of x into
// the fields of a cast model (model.cast<ADScalar>()) and build its DataTpl after that, so that
// data fields derived from the model at construction (e.g. joint_S from the axis) carry the seeds.
#pragma once

#include <algorithm>

#include "gradyn/autodiff.hpp"
#include "gradyn/spatial/spatial.hpp"

namespace gradyn::test {

/// Jacobian of f at x0 by forward-mode AD, kADChunk input directions per evaluation of f.
/// f: const VectorX<ADScalar>& -> VectorX<ADScalar> (or anything convertible to it).
template <class F>
Eigen::MatrixXd ad_jacobian(F&& f, const Eigen::VectorXd& x0) {
  const int n = static_cast<int>(x0.size());
  Eigen::MatrixXd J;
  VectorX<ADScalar> x(n);
  for (int first = 0; first < std::max(n, 1); first += kADChunk) {
    for (int k = 0; k < n; ++k) x[k] = ad_seed(x0[k], k >= first && k < first + kADChunk ? k - first : -1);
    const VectorX<ADScalar> y = f(x);
    if (J.size() == 0) J = Eigen::MatrixXd::Zero(y.size(), n);
    for (int i = 0; i < y.size(); ++i) {
      // A constant output has an empty derivative vector in Eigen's AutoDiffScalar: skip it.
      if (y[i].derivatives().size() == 0) continue;
      for (int c = first; c < std::min(n, first + kADChunk); ++c) J(i, c) = y[i].derivatives()[c - first];
    }
  }
  return J;
}

/// Jacobian of f at x0 by central differences with step h. f: const Eigen::VectorXd& -> Eigen::VectorXd.
template <class F>
Eigen::MatrixXd fd_jacobian(F&& f, const Eigen::VectorXd& x0, double h = 1e-6) {
  const int n = static_cast<int>(x0.size());
  Eigen::MatrixXd J;
  Eigen::VectorXd x = x0;
  for (int c = 0; c < n; ++c) {
    x[c] = x0[c] + h;
    const Eigen::VectorXd yp = f(x);
    x[c] = x0[c] - h;
    const Eigen::VectorXd ym = f(x);
    x[c] = x0[c];
    if (J.size() == 0) J = Eigen::MatrixXd::Zero(yp.size(), n);
    J.col(c) = (yp - ym) / (2 * h);
  }
  return J;
}

/// Values of an AD vector.
inline Eigen::VectorXd ad_values(const VectorX<ADScalar>& x) {
  Eigen::VectorXd out(x.size());
  for (int k = 0; k < x.size(); ++k) out[k] = x[k].value();
  return out;
}

}  // namespace gradyn::test
