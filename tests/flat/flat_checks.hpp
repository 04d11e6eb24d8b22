// Shared by the flat kernels' tests (tests/flat/): seeded random motor commands, the flat reverse
// step against the engine's step_vjp along a rollout, and against central differences of the flat
// forward step.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <string>

#include <filesystem>
#include <fstream>

#include "gradyn/flat/export.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/model.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn::test {

/// A free box, three free capsules and a free sphere over a plane (no contact model set), loaded
/// from a file of this name in the temporary folder (the loader places free bodies where a file
/// says). contype/conaffinity keep the box apart from the capsules: box-capsule has no flat kernel.
inline Model free_primitives_on_a_plane(const std::string& file_name) {
  const std::string xml = R"(<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1" friction=".8" contype="3" conaffinity="3"/>
    <body pos="0 0 .12"><freejoint/><geom type="box" size=".1 .2 .1" mass="1"/></body>
    <body pos=".6 0 .06"><freejoint/><geom type="capsule" fromto="-.2 0 0 .2 0 0" size=".05" mass="1" contype="2" conaffinity="2"/></body>
    <body pos=".6 0.02 .17"><freejoint/><geom type="capsule" fromto="-.2 0 0 .2 0 0" size=".05" mass="1" contype="2" conaffinity="2"/></body>
    <body pos="-.6 0 .3"><freejoint/><geom type="sphere" size=".08" mass="1" contype="2" conaffinity="2"/></body>
    <body pos="-.6 0.05 .5"><freejoint/><geom type="capsule" fromto="0 -.1 0 0 .1 .05" size=".04" mass="1" contype="2" conaffinity="2"/></body>
  </worldbody></mujoco>)";
  const std::string path = (std::filesystem::temp_directory_path() / file_name).string();
  std::ofstream(path) << xml;
  return load_mjcf(path);
}

/// T rows of nu controls, uniform in [-scale, scale], from seed.
inline MatrixXr<double> random_controls(const Model& model, int T, unsigned seed, double scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  MatrixXr<double> ctrls(T, model.nu());
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < model.nu(); ++k) ctrls(t, k) = u(rng);
  return ctrls;
}

// Along the engine's rollout, at every `every`-th state, the flat reverse step and the engine's
// under the same random adjoint seeds. Returns the worst deviation relative to the largest entry.
// States whose deviation exceeds report_above are printed (and the search stops there).
inline double worst_vjp_deviation(const Model& model, const Eigen::VectorXd& q0, const Eigen::VectorXd& v0,
                                  const MatrixXr<double>& ctrls, double dt, int every, int* contact_states = nullptr,
                                  double report_above = 1e-9) {
  const int T = static_cast<int>(ctrls.rows()), nq = model.nq, nv = model.nv, nu = model.nu();
  Data data(model);
  MatrixXr<double> qs, vs, taus(T, nv);
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < nv; ++k) taus(t, k) = normal(rng);
  rollout<double>(model, data, q0, v0, taus, ctrls, dt, Integrator::SemiImplicitEuler, qs, vs);
  const flat::FlatArrays fm = flat::export_flat_model(model);
  double worst = 0;
  int with_contacts = 0;
  for (int t = 0; t < T; t += every) {
    const Eigen::VectorXd q = qs.row(t).transpose(), v = vs.row(t).transpose(), tau = taus.row(t).transpose();
    const Eigen::VectorXd u = nu ? Eigen::VectorXd(ctrls.row(t).transpose()) : Eigen::VectorXd();
    Eigen::VectorXd qnb(nq), vnb(nv);
    for (int k = 0; k < nq; ++k) qnb[k] = normal(rng);
    for (int k = 0; k < nv; ++k) vnb[k] = normal(rng);
    Eigen::VectorXd qb = Eigen::VectorXd::Zero(nq), vb = Eigen::VectorXd::Zero(nv), tb = Eigen::VectorXd::Zero(nv),
                    ub = Eigen::VectorXd::Zero(nu);
    ModelTangent tangent(model);
    step_vjp<double>(model, data, q, v, tau, u, dt, Integrator::SemiImplicitEuler, qnb, vnb, qb, vb, tb, ub, tangent);
    with_contacts += data.ncontacts > 0;
    Eigen::VectorXd fqb(nq), fvb(nv), ftb(nv), fub(nu);
    flat::flat_step_vjp_cpu(fm, q.data(), v.data(), tau.data(), nu ? u.data() : nullptr, dt, qnb.data(), vnb.data(),
                            fqb.data(), fvb.data(), ftb.data(), nu ? fub.data() : nullptr);
    const double scale = 1 + std::max({qb.cwiseAbs().maxCoeff(), vb.cwiseAbs().maxCoeff(), tb.cwiseAbs().maxCoeff()});
    const double dev = std::max({(fqb - qb).cwiseAbs().maxCoeff(), (fvb - vb).cwiseAbs().maxCoeff(),
                                 (ftb - tb).cwiseAbs().maxCoeff(), nu ? (fub - ub).cwiseAbs().maxCoeff() : 0.0});
    if (dev / scale > report_above) {
      std::cout << "t = " << t << " ncontacts " << data.ncontacts << "\n q_bar engine " << qb.transpose()
                << "\n q_bar flat   " << fqb.transpose() << "\n v_bar engine " << vb.transpose() << "\n v_bar flat   "
                << fvb.transpose() << "\n tau_bar engine " << tb.transpose() << "\n tau_bar flat   " << ftb.transpose()
                << "\n";
      return dev / scale;
    }
    worst = std::max(worst, dev / scale);
  }
  if (contact_states) *contact_states = with_contacts;
  return worst;
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
