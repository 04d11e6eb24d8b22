// The numerical kernels of box-constrained iLQR (Tassa, Mansard and Todorov, "Control-limited
// differential dynamic programming", ICRA 2014) for gradyn.control (python/gradyn/control.py),
// which owns the outer loop, the costs, the regularisation schedule and the stopping rules:
//
//   box_qp               the control-limited QP of one step (projected Newton)
//   ilqr_backward_pass   the Riccati-like sweep over the step Jacobians and the cost's derivatives
//   feedback_rollout     one line-search candidate: the plan's closed loop rolled out
//
// State errors are tangent vectors x = [q_ref (-) q; v - v_ref] of 2 nv numbers (sim/integrate.hpp).
// Control is not differentiated through, so these are for double only.
#pragma once

#include <cstdint>
#include <span>

#include "gradyn/sim/step.hpp"

namespace gradyn {

/// Scratch of box_qp for problems of up to n controls: sized once, reused across calls.
struct BoxQpWorkspace {
  explicit BoxQpWorkspace(int n);
  Eigen::MatrixXd H_free;         // H restricted to the free controls
  Eigen::LLT<Eigen::MatrixXd> llt;  // its Cholesky factor
  Eigen::VectorXd grad, direction, candidate, rhs, solution;
  Eigen::VectorXi free_index;  // the free controls' indices, free_count of them
  int free_count = 0;
};

/// Minimises 1/2 x'Hx + g'x subject to lower <= x <= upper (bounds may be -inf / inf) by projected
/// Newton: Newton steps on the controls not held at a bound, an Armijo search along the projected
/// path (Tassa et al. 2014, Algorithm 1). x holds the warm start on entry and the minimiser on
/// return; free[i] says whether control i is off its bounds at the solution. On success
/// ws.llt holds the Cholesky factor of H on the free controls (ws.free_index, ws.free_count).
/// Returns false, leaving x at the best point reached, when H is not positive definite there.
bool box_qp(const Eigen::Ref<const Eigen::MatrixXd>& H, const Eigen::Ref<const Eigen::VectorXd>& g,
            const Eigen::Ref<const Eigen::VectorXd>& lower, const Eigen::Ref<const Eigen::VectorXd>& upper,
            Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::Array<bool, Eigen::Dynamic, 1>> free, BoxQpWorkspace& ws,
            int max_iterations = 100);

/// The derivatives one backward pass reads, as row-major stacks over the T steps (nx = 2 nv):
/// A (T nx, nx) and B (T nx, nu) the step Jacobians; the cost's lx (T+1, nx), lu (T, nu),
/// lxx ((T+1) nx, nx), luu (T nu, nu), lux (T nu, nx) (row T of lx, lxx: the terminal cost); u (T, nu)
/// the plan's controls and u_min, u_max (nu) their limits.
struct LqrProblem {
  RowsRef<double> A, B, lx, lu, lxx, luu, lux, u;
  VecRef<double> u_min, u_max;
};

/// The backward sweep with regularisation mu (added to V_xx, Tassa et al. 2012): writes the
/// feed-forward controls k (T, nu; on entry the warm starts of the QPs) and the feedback gains K
/// (T nu, nx), and expected = (sum k'Q_u, sum 1/2 k'Q_uu k), so that a step of size alpha is
/// expected to change the cost by alpha expected[0] + alpha^2 expected[1]. Returns false when a
/// regularised Q_uu is not positive definite on its free controls (raise mu and sweep again).
/// Throws ArgumentError naming the array when the shapes disagree.
bool ilqr_backward_pass(const LqrProblem& problem, double mu, RowsOut<double> k, RowsOut<double> K,
                        Eigen::Vector2d& expected);

/// Where a plan's controls enter the step: the actuators' ctrl, or generalised forces tau.
enum class ControlInput : std::uint8_t { Ctrl, Tau };

/// One line-search candidate: from (q_ref[0], v_ref[0]), T steps of the closed loop
///   u_t = clamp(u_ref[t] + alpha k[t] + K_t [q_ref[t] (-) q_t; v_t - v_ref[t]], u_min, u_max)
/// into qs (T+1, nq), vs (T+1, nv), us (T, nu) and status[t] (the step's Status flags). The step
/// never throws for numerical trouble (a diverging candidate flags its steps and goes on).
void feedback_rollout(const Model& model, Data& data, const RowsRef<double>& q_ref, const RowsRef<double>& v_ref,
                      const RowsRef<double>& u_ref, const RowsRef<double>& k, const RowsRef<double>& K, double alpha,
                      const VecRef<double>& u_min, const VecRef<double>& u_max, ControlInput input,
                      const StepOptions& options, RowsOut<double> qs, RowsOut<double> vs, RowsOut<double> us,
                      std::span<std::uint32_t> status);

}  // namespace gradyn
