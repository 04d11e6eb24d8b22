// The control-limited QP of one iLQR step (control/ilqr.hpp): projected Newton, Tassa et al. 2014.
#include <cmath>

#include "gradyn/control/ilqr.hpp"

namespace gradyn {

BoxQpWorkspace::BoxQpWorkspace(int n)
    : H_free(n, n), llt(n), grad(n), direction(n), candidate(n), rhs(n), solution(n), free_index(n) {}

namespace {

double qp_value(const Eigen::Ref<const Eigen::MatrixXd>& H, const Eigen::Ref<const Eigen::VectorXd>& g,
                const Eigen::VectorXd& x) {
  return x.dot(g) + 0.5 * x.dot(H * x);
}

// Factorises H on the controls marked free (ws.free_index); false when it is not positive definite.
bool factor_free_block(const Eigen::Ref<const Eigen::MatrixXd>& H,
                       const Eigen::Ref<const Eigen::Array<bool, Eigen::Dynamic, 1>>& free, BoxQpWorkspace& ws) {
  ws.free_count = 0;
  for (Eigen::Index i = 0; i < free.size(); ++i)
    if (free[i]) ws.free_index[ws.free_count++] = static_cast<int>(i);
  const int nf = ws.free_count;
  ws.H_free.resize(nf, nf);
  for (int a = 0; a < nf; ++a)
    for (int b = 0; b < nf; ++b) ws.H_free(a, b) = H(ws.free_index[a], ws.free_index[b]);
  if (nf == 0) return true;
  ws.llt.compute(ws.H_free);
  return ws.llt.info() == Eigen::Success;
}

// Free: not held at a bound by a gradient pushing outwards.
void mark_free(const Eigen::VectorXd& x, const Eigen::VectorXd& grad, const Eigen::Ref<const Eigen::VectorXd>& lower,
               const Eigen::Ref<const Eigen::VectorXd>& upper, Eigen::Ref<Eigen::Array<bool, Eigen::Dynamic, 1>> free) {
  for (Eigen::Index i = 0; i < x.size(); ++i)
    free[i] = !((x[i] <= lower[i] && grad[i] > 0) || (x[i] >= upper[i] && grad[i] < 0));
}

}  // namespace

bool box_qp(const Eigen::Ref<const Eigen::MatrixXd>& H, const Eigen::Ref<const Eigen::VectorXd>& g,
            const Eigen::Ref<const Eigen::VectorXd>& lower, const Eigen::Ref<const Eigen::VectorXd>& upper,
            Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::Array<bool, Eigen::Dynamic, 1>> free, BoxQpWorkspace& ws,
            int max_iterations) {
  const Eigen::Index n = g.size();
  constexpr double kTolerance = 1e-10;  // on the free gradient and on the relative change of the value
  constexpr double kArmijo = 0.1, kBacktrack = 0.6, kMinStep = 1e-20;

  // The common case first: the unconstrained minimiser already satisfies the bounds.
  free.setConstant(true);
  if (factor_free_block(H, free, ws)) {
    ws.solution = -ws.llt.solve(g);
    if ((ws.solution.array() >= lower.array()).all() && (ws.solution.array() <= upper.array()).all()) {
      x = ws.solution;
      return true;
    }
  }
  Eigen::VectorXd& point = ws.solution;
  point = x.cwiseMax(lower).cwiseMin(upper);
  double value = qp_value(H, g, point);
  bool have_factor = false;
  Eigen::Array<bool, Eigen::Dynamic, 1> previous_free = free;
  for (int iteration = 0; iteration < max_iterations; ++iteration) {
    ws.grad.noalias() = H * point;
    ws.grad += g;
    mark_free(point, ws.grad, lower, upper, free);
    if (!free.any()) {
      ws.free_count = 0;
      x = point;
      return true;
    }
    if (!have_factor || (free != previous_free).any()) {
      if (!factor_free_block(H, free, ws)) {
        x = point;
        return false;
      }
      have_factor = true;
      previous_free = free;
    }
    double free_gradient_norm = 0;
    for (int a = 0; a < ws.free_count; ++a) free_gradient_norm += ws.grad[ws.free_index[a]] * ws.grad[ws.free_index[a]];
    if (std::sqrt(free_gradient_norm) < kTolerance) break;
    // Newton step on the free controls, the clamped ones held: H_ff x_f = -(g_f + H_fc x_c).
    ws.rhs.resize(ws.free_count);
    for (int a = 0; a < ws.free_count; ++a) {
      const int i = ws.free_index[a];
      double r = g[i];
      for (Eigen::Index j = 0; j < n; ++j)
        if (!free[j]) r += H(i, j) * point[j];
      ws.rhs[a] = r;
    }
    ws.rhs = ws.llt.solve(ws.rhs);
    ws.direction.setZero(n);
    for (int a = 0; a < ws.free_count; ++a) ws.direction[ws.free_index[a]] = -ws.rhs[a] - point[ws.free_index[a]];
    const double slope = ws.direction.dot(ws.grad);
    if (slope >= 0) break;  // no descent left along the projected Newton direction
    double step = 1.0, candidate_value = value;
    bool found = false;
    for (; step > kMinStep; step *= kBacktrack) {
      ws.candidate = (point + step * ws.direction).cwiseMax(lower).cwiseMin(upper);
      candidate_value = qp_value(H, g, ws.candidate);
      if ((candidate_value - value) / (step * slope) > kArmijo) {
        found = true;
        break;
      }
    }
    if (!found) break;
    const double change = value - candidate_value;
    point = ws.candidate;
    value = candidate_value;
    if (std::abs(change) <= kTolerance * (1 + std::abs(value))) break;
  }
  // The free set and its factor at the returned point.
  ws.grad.noalias() = H * point;
  ws.grad += g;
  mark_free(point, ws.grad, lower, upper, free);
  x = point;
  if (!have_factor || (free != previous_free).any()) return factor_free_block(H, free, ws);
  return true;
}

}  // namespace gradyn
