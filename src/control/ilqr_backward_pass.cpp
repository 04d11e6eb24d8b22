// The backward sweep of box-constrained iLQR (control/ilqr.hpp): from the terminal cost back to the
// first step, the quadratic model Q of each step, its control-limited minimiser k and gains K.
#include <sstream>
#include <string>

#include "gradyn/control/ilqr.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {

void check_rows_cols(const char* name, const RowsRef<double>& a, Eigen::Index rows, Eigen::Index cols) {
  if (a.rows() == rows && a.cols() == cols) return;
  std::ostringstream s;
  s << name << ": expected " << rows << " x " << cols << " (stacked over the steps), got " << a.rows() << " x "
    << a.cols();
  throw ArgumentError(s.str());
}

}  // namespace

bool ilqr_backward_pass(const LqrProblem& p, double mu, RowsOut<double> k, RowsOut<double> K,
                        Eigen::Vector2d& expected) {
  const Eigen::Index T = p.u.rows(), nu = p.u.cols(), nx = p.A.cols();
  check_rows_cols("A", p.A, T * nx, nx);
  check_rows_cols("B", p.B, T * nx, nu);
  check_rows_cols("lx", p.lx, T + 1, nx);
  check_rows_cols("lu", p.lu, T, nu);
  check_rows_cols("lxx", p.lxx, (T + 1) * nx, nx);
  check_rows_cols("luu", p.luu, T * nu, nu);
  check_rows_cols("lux", p.lux, T * nu, nx);
  if (p.u_min.size() != nu || p.u_max.size() != nu || k.rows() != T || k.cols() != nu || K.rows() != T * nu ||
      K.cols() != nx)
    throw ArgumentError("u_min, u_max, k, K: expected " + std::to_string(nu) + ", " + std::to_string(nu) + ", " +
                        std::to_string(T) + " x " + std::to_string(nu) + " and " + std::to_string(T * nu) + " x " +
                        std::to_string(nx));

  // Every matrix is sized once here: the sweep allocates nothing per step.
  Eigen::VectorXd Vx = p.lx.row(T).transpose();
  Eigen::MatrixXd Vxx = p.lxx.middleRows(T * nx, nx);
  Eigen::VectorXd Qx(nx), Qu(nu), kt(nu), lower(nu), upper(nu), Quu_k(nu);
  Eigen::MatrixXd Qxx(nx, nx), Quu(nu, nu), Qux(nu, nx), Quu_reg(nu, nu), Qux_reg(nu, nx), VxxA(nx, nx), VxxB(nx, nu),
      Kt(nu, nx), free_rows(nu, nx), M(nu, nx);
  Eigen::Array<bool, Eigen::Dynamic, 1> free(nu);
  BoxQpWorkspace qp(static_cast<int>(nu));
  expected.setZero();
  for (Eigen::Index t = T - 1; t >= 0; --t) {
    const auto A = p.A.middleRows(t * nx, nx);
    const auto B = p.B.middleRows(t * nx, nx);
    Qx.noalias() = A.transpose() * Vx;
    Qx += p.lx.row(t).transpose();
    Qu.noalias() = B.transpose() * Vx;
    Qu += p.lu.row(t).transpose();
    VxxA.noalias() = Vxx * A;
    VxxB.noalias() = Vxx * B;
    // Qxx = lxx + A^T Vxx A is symmetric: its lower half is computed, then mirrored.
    Qxx.triangularView<Eigen::Lower>() = p.lxx.middleRows(t * nx, nx);
    Qxx.triangularView<Eigen::Lower>() += A.transpose() * VxxA;
    Qxx.triangularView<Eigen::StrictlyUpper>() = Qxx.transpose();
    Quu.noalias() = B.transpose() * VxxB;
    Quu += p.luu.middleRows(t * nu, nu);
    Qux.noalias() = VxxB.transpose() * A;  // B^T Vxx A, Vxx symmetric
    Qux += p.lux.middleRows(t * nu, nu);
    // State-space regularisation: the sweep as if V_xx had mu I added (Tassa et al. 2012).
    Quu_reg = Quu;
    Qux_reg = Qux;
    if (mu > 0) {
      Quu_reg.noalias() += mu * B.transpose() * B;
      Qux_reg.noalias() += mu * B.transpose() * A;
    }
    Quu_reg = 0.5 * (Quu_reg + Quu_reg.transpose()).eval();
    lower = p.u_min - p.u.row(t).transpose();
    upper = p.u_max - p.u.row(t).transpose();
    kt = k.row(t).transpose();
    if (!box_qp(Quu_reg, Qu, lower, upper, kt, free, qp)) return false;
    // Gains on the free controls only: a control held at its bound does not respond to the state.
    Kt.setZero();
    if (qp.free_count > 0) {
      auto rows = free_rows.topRows(qp.free_count);
      for (int a = 0; a < qp.free_count; ++a) rows.row(a) = Qux_reg.row(qp.free_index[a]);
      qp.llt.solveInPlace(rows);
      for (int a = 0; a < qp.free_count; ++a) Kt.row(qp.free_index[a]) = -rows.row(a);
    }
    k.row(t) = kt.transpose();
    K.middleRows(t * nu, nu) = Kt;
    Quu_k.noalias() = Quu * kt;
    expected[0] += kt.dot(Qu);
    expected[1] += 0.5 * kt.dot(Quu_k);
    // The value function at step t (unregularised Q: Tassa et al.'s improved value update):
    //   Vx  = Qx + Kt^T Quu kt + Kt^T Qu + Qux^T kt
    //   Vxx = Qxx + Kt^T (Quu Kt + Qux) + Qux^T Kt, symmetric: its lower half, then mirrored.
    Vx = Qx;
    Quu_k += Qu;
    Vx.noalias() += Kt.transpose() * Quu_k;
    Vx.noalias() += Qux.transpose() * kt;
    M = Qux;
    M.noalias() += Quu * Kt;
    Vxx.triangularView<Eigen::Lower>() = Qxx;
    Vxx.triangularView<Eigen::Lower>() += Kt.transpose() * M;
    Vxx.triangularView<Eigen::Lower>() += Qux.transpose() * Kt;
    Vxx.triangularView<Eigen::StrictlyUpper>() = Vxx.transpose();
  }
  return true;
}

}  // namespace gradyn
