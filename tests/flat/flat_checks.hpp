// Shared by the flat kernels' tests (tests/flat/): seeded random motor commands, and the check of a
// flat reverse step against central differences of the flat forward step.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gradyn/flat/export.hpp"
#include "gradyn/model/model.hpp"

namespace gradyn::test {

/// T rows of nu controls, uniform in [-scale, scale], from seed.
inline MatrixXr<double> random_controls(const Model& model, int T, unsigned seed, double scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  MatrixXr<double> ctrls(T, model.nu());
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < model.nu(); ++k) ctrls(t, k) = u(rng);
  return ctrls;
}

/// For a random direction (dq, dv, dtau) and random seeds (drawn from rng), the flat reverse step
/// at (q, v, tau) must give q_bar . dq + v_bar . dv + tau_bar . dtau equal to
/// seed . (step(x + h d) - step(x - h d)) / 2h (h = 1e-7), to 1e-5 relative. Checked with EXPECT.
inline void expect_flat_vjp_matches_central_differences(const Model& m, const flat::FlatArrays& fm,
                                                         const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                                         const Eigen::VectorXd& tau, double dt, std::mt19937& rng,
                                                         const std::string& where) {
  std::normal_distribution<double> normal;
  auto random = [&](int n) {
    Eigen::VectorXd x(n);
    for (int k = 0; k < n; ++k) x[k] = normal(rng);
    return x;
  };
  auto flat_step = [&](const Eigen::VectorXd& qa, const Eigen::VectorXd& va, const Eigen::VectorXd& ta,
                       Eigen::VectorXd& qn, Eigen::VectorXd& vn) {
    Eigen::VectorXd qs(2 * m.nq), vs(2 * m.nv);
    std::uint32_t status = 0;
    flat::flat_rollout_cpu(fm, 1, 1, qa.data(), va.data(), ta.data(), nullptr, dt, qs.data(), vs.data(), &status);
    qn = qs.tail(m.nq), vn = vs.tail(m.nv);
  };
  const Eigen::VectorXd dq = random(m.nq), dv = random(m.nv), dtau = random(m.nv);
  const Eigen::VectorXd sq = random(m.nq), sv = random(m.nv);
  Eigen::VectorXd qb(m.nq), vb(m.nv), tb(m.nv);
  flat::flat_step_vjp_cpu(fm, q.data(), v.data(), tau.data(), nullptr, dt, sq.data(), sv.data(), qb.data(), vb.data(),
                          tb.data(), nullptr);
  const double h = 1e-7;
  Eigen::VectorXd qp, vp, qm, vm;
  flat_step(q + h * dq, v + h * dv, tau + h * dtau, qp, vp);
  flat_step(q - h * dq, v - h * dv, tau - h * dtau, qm, vm);
  const double fd = (sq.dot(qp - qm) + sv.dot(vp - vm)) / (2 * h);
  const double adjoint = qb.dot(dq) + vb.dot(dv) + tb.dot(dtau);
  EXPECT_NEAR(adjoint, fd, 1e-5 * (1 + std::abs(fd))) << where;
}

}  // namespace gradyn::test
