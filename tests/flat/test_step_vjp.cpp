// The flat step's reverse mode (flat/step_vjp.hpp) against the engine's step_vjp (itself checked
// against forward-mode AD and finite differences): the laikago landing on its toes, the humanoid
// with motors, limits and self-contact, and free boxes, spheres and capsules on a plane.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "../support/laikago_scene.hpp"
#include "flat_checks.hpp"
#include "gradyn/flat/export.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

using test::worst_vjp_deviation;

TEST(FlatStepVjp, LaikagoOnItsToes) {
  test::LaikagoScene s = test::laikago_standing(ContactModel::Penalty);
  s.model.contact.velocity_scale = 0.3;
  Eigen::VectorXd v0 = Eigen::VectorXd::Zero(s.model.nv);
  v0.head(6) << 0.3, -0.2, 0.1, 0.5, -0.4, 0.2;
  s.q[2] += 0.01;
  int contacts = 0;
  EXPECT_LT(worst_vjp_deviation(s.model, s.q, v0, MatrixXr<double>(300, 0), 1e-3, 7, &contacts), 1e-9);
  EXPECT_GT(contacts, 20);
}

TEST(FlatStepVjp, HumanoidWithMotorsLimitsAndSelfContact) {
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  Model model = load(std::string(GRADYN_MODELS) + "/mujoco/humanoid.xml", options);
  model.tendons.clear();  // the flat kernels do not simulate tendons (export refuses them): without its hamstrings
  model.contact.model = ContactModel::Penalty;
  Eigen::VectorXd v0 = Eigen::VectorXd::Zero(model.nv);
  v0.head(6) << 0.5, 0.0, -0.5, 1.0, 2.0, -1.0;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> uni(-1, 1);
  MatrixXr<double> ctrls(800, model.nu());
  for (int t = 0; t < ctrls.rows(); ++t)
    for (int k = 0; k < model.nu(); ++k) ctrls(t, k) = uni(rng);
  int contacts = 0;
  EXPECT_LT(worst_vjp_deviation(model, model.q0, v0, ctrls, 1e-3, 9, &contacts), 1e-9);
  EXPECT_GT(contacts, 10);
}

TEST(FlatStepVjp, BoxesSpheresAndCapsules) {
  const std::string xml = R"(<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1" friction=".8" contype="3" conaffinity="3"/>
    <body pos="0 0 .12" euler="5 3 0"><freejoint/><geom type="box" size=".1 .2 .1" mass="1"/></body>
    <body pos=".6 0 .06"><freejoint/><geom type="capsule" fromto="-.2 0 0 .2 0 0" size=".05" mass="1" contype="2" conaffinity="2"/></body>
    <body pos=".6 0.02 .17"><freejoint/><geom type="capsule" fromto="-.2 0 0 .2 0 0" size=".05" mass="1" contype="2" conaffinity="2"/></body>
    <body pos=".9 0.3 .2" euler="0 0 50"><freejoint/><geom type="capsule" fromto="-.2 0 0 .2 0 0" size=".05" mass="1" contype="2" conaffinity="2"/></body>
    <body pos="-.6 0 .3"><freejoint/><geom type="sphere" size=".08" mass="1" contype="2" conaffinity="2"/></body>
    <body pos="-.6 0.03 .45"><freejoint/><geom type="capsule" fromto="0 -.15 0 0 .15 0" size=".04" mass="1" contype="2" conaffinity="2"/></body>
    <body pos="-.62 0.0 .6"><freejoint/><geom type="sphere" size=".05" mass="1" contype="2" conaffinity="2"/></body>
  </worldbody></mujoco>)";
  const std::string path = (std::filesystem::temp_directory_path() / "gradyn_flat_vjp_scene.xml").string();
  std::ofstream(path) << xml;
  Model model = load_mjcf(path);
  model.contact.model = ContactModel::Penalty;
  model.contact.velocity_scale = 0.2;
  Eigen::VectorXd v0 = Eigen::VectorXd::Zero(model.nv);
  v0.segment(0, 6) << 0.2, 0.1, 0.0, 0.5, 0.3, 0.2;
  v0.segment(18, 6) << -0.5, 0.0, -0.2, 0.0, 0.0, 1.0;
  int contacts = 0;
  EXPECT_LT(worst_vjp_deviation(model, model.q0, v0, MatrixXr<double>(600, 0), 1e-3, 5, &contacts), 1e-9);
  EXPECT_GT(contacts, 50);
}

}  // namespace
}  // namespace gradyn

namespace gradyn {
namespace {

// The flat reverse step on its own, against central differences of the flat forward step: for a
// random direction (dq, dv, dtau) and random seeds, seed . (step(x + h d) - step(x - h d)) / 2h must
// equal q_bar . dq + v_bar . dv + tau_bar . dtau, on laikago states in contact.
TEST(FlatStepVjp, MatchesFiniteDifferencesOfTheFlatStep) {
  test::LaikagoScene s = test::laikago_standing(ContactModel::Penalty);
  s.model.contact.velocity_scale = 0.3;
  const Model& m = s.model;
  const flat::FlatArrays fm = flat::export_flat_model(m);
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 6; ++trial) {
    Eigen::VectorXd q = s.q, v(m.nv), tau(m.nv);
    q[2] -= 0.002 * trial;
    for (int k = 0; k < m.nv; ++k) v[k] = 0.2 * normal(rng), tau[k] = normal(rng);
    test::expect_flat_vjp_matches_central_differences(m, fm, q, v, tau, 1e-3, rng, "trial " + std::to_string(trial));
  }
}

}  // namespace
}  // namespace gradyn
