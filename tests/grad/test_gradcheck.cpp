// gradcheck on the whole pipeline: adjoint (rollout_vjp + params_gradient) against forward-mode
// AD and central differences, every input block (q0, v0, taus, params), both integrators, single
// steps on every shipped robot and on random trees with every joint kind, and 1,000-step
// rollouts on small models (there the AD and FD references cover an evenly spaced subset of
// each block's coordinates, first and last included: ad_max_coords / fd_max_coords). Every block
// is compared raw: quaternion entries of q0 and joint-axis parameters are perturbed one at a
// time, off the unit sphere.
#include "gradyn/grad/gradcheck.hpp"

#include <gtest/gtest.h>

#include "../support/random_model.hpp"
#include "gradyn/io/load.hpp"

namespace gradyn {
namespace {

constexpr double kAdTolerance = 1e-9, kFdTolerance = 1e-6;

Model load_quietly(const std::string& path, bool floating_base = false) {
  std::vector<std::string> warnings;
  LoadOptions options;
  options.floating_base = floating_base;
  options.warnings = &warnings;
  return load(path, options);
}

// A state away from the neutral one: random angles, unit quaternions, random velocities.
void random_state(const Model& model, unsigned seed, Eigen::VectorXd& q, Eigen::VectorXd& v, MatrixXr<double>& taus,
                  int T) {
  std::mt19937 rng(seed);
  q = test::random_configuration(model, rng);
  v = test::random_vector(model.nv, rng);
  taus.resize(T, model.nv);
  for (int t = 0; t < T; ++t) taus.row(t) = test::random_vector(model.nv, rng).transpose();
}

void expect_passes(const GradcheckResult& r, const std::string& what, double fd_tolerance = kFdTolerance) {
  EXPECT_TRUE(r.passed(kAdTolerance, fd_tolerance)) << what << "\n" << r.summary();
  for (const auto& b : r.blocks) {
    EXPECT_GT(b.ad_coords, 0) << what << " " << b.name;
    EXPECT_GT(b.scale, 0) << what << " " << b.name << ": a zero gradient checks nothing";
  }
}

struct Case {
  std::string name;
  Model model;
};

std::vector<Case> single_step_models() {
  const std::string dir = GRADYN_MODELS;
  std::vector<Case> cases;
  cases.push_back({"laikago (floating)", load_quietly(dir + "/laikago/laikago_toes_zup.urdf", true)});
  cases.push_back({"iiwa", load_quietly(dir + "/grid/iiwa.urdf")});
  cases.push_back({"hyq", load_quietly(dir + "/grid/hyq.urdf")});
  cases.push_back({"hyq (floating)", load_quietly(dir + "/grid/hyq.urdf", true)});
  cases.push_back({"pendulum1", load_quietly(dir + "/pendulums/pendulum1.urdf")});
  cases.push_back({"pendulum7", load_quietly(dir + "/pendulums/pendulum7.urdf")});
  cases.push_back({"ant (MJCF)", load_quietly(dir + "/mujoco/ant.xml")});
  for (unsigned seed = 0; seed < 7; ++seed)
    cases.push_back({"random " + std::to_string(seed), test::random_model(7, seed, seed % 2 == 1, seed % 3 != 0)});
  return cases;
}

class Gradcheck : public ::testing::TestWithParam<Integrator> {};

TEST_P(Gradcheck, SingleStepEveryModelEveryBlock) {
  for (const Case& c : single_step_models()) {
    Eigen::VectorXd q, v;
    MatrixXr<double> taus;
    random_state(c.model, 3, q, v, taus, 1);
    GradcheckOptions options;
    options.integrator = GetParam();
    options.seed = 5;
    expect_passes(gradcheck(c.model, q, v, taus, 0.002, options), c.name);
  }
}

// 1,000 steps, running loss on every state. AD covers 16 coordinates per block, FD 6, with a
// larger FD step: the loss sums 1,001 states (~100) while a torque's gradient is ~0.1, so the
// rounding noise eps L / h of h = 1e-6 would be ~1e-6 of the block's scale.
TEST_P(Gradcheck, ThousandStepRolloutsOnSmallModels) {
  std::vector<Case> cases;
  cases.push_back({"pendulum2", load_quietly(std::string(GRADYN_MODELS) + "/pendulums/pendulum2.urdf")});
  cases.push_back({"random tree, spherical + planar + prismatic", test::random_model(3, 1, false, true)});
  cases.push_back({"random floating", test::random_model(2, 5, true, true)});
  for (const Case& c : cases) {
    Eigen::VectorXd q, v;
    MatrixXr<double> taus;
    random_state(c.model, 8, q, v, taus, 1000);
    GradcheckOptions options;
    options.integrator = GetParam();
    options.running_loss = true;
    options.ad_max_coords = 16;
    options.fd_max_coords = 6;
    options.fd_step = 1e-4;
    expect_passes(gradcheck(c.model, q, v, 0.3 * taus, 1e-3, options), c.name);
  }
}

// 1,000-step rollouts on the shipped robots (the long-horizon check that the adjoint agrees with AD and finite differences): pendulum7, iiwa, hyq, laikago
// (floating base) and the MJCF ant, running loss on every state, 1 s at dt = 1e-3 from a random
// state with moderate velocities. AD covers 8 coordinates of the taus and params blocks (q0, v0
// in full), FD 4.
TEST_P(Gradcheck, ThousandStepRolloutsOnShippedRobots) {
  const std::string dir = GRADYN_MODELS;
  std::vector<Case> cases;
  cases.push_back({"pendulum7", load_quietly(dir + "/pendulums/pendulum7.urdf")});
  cases.push_back({"iiwa", load_quietly(dir + "/grid/iiwa.urdf")});
  cases.push_back({"hyq", load_quietly(dir + "/grid/hyq.urdf")});
  cases.push_back({"laikago (floating)", load_quietly(dir + "/laikago/laikago_toes_zup.urdf", true)});
  cases.push_back({"ant (MJCF)", load_quietly(dir + "/mujoco/ant.xml")});
  for (const Case& c : cases) {
    Eigen::VectorXd q, v;
    MatrixXr<double> taus;
    random_state(c.model, 11, q, v, taus, 1000);
    GradcheckOptions options;
    options.integrator = GetParam();
    options.running_loss = true;
    options.ad_max_coords = 8;
    options.fd_max_coords = 4;
    options.fd_step = 2e-5;  // truncation ~h^2 stays below 1e-6 of the scale, rounding eps L / h too
    // Central differences over 1,000 steps carry truncation and rounding errors of a few 1e-6 on
    // some parameters (e.g. hyq's inertias at scale 3e4); AD stays the tight reference (1e-9).
    expect_passes(gradcheck(c.model, q, 0.3 * v, 0.3 * taus, 1e-3, options), c.name + ", 1,000 steps", 2e-5);
  }
}

// q0 with its quaternions off the unit sphere: the adjoint still matches AD and central
// differences entry by entry. The dynamics and integrate read quaternions normalised, and
// integrate normalises its output quaternion, so a loss does not change along any quaternion
// (spherical or free) and its adjoint has no component there.
TEST_P(Gradcheck, QuaternionsOffTheUnitSphere) {
  for (const Case& c : {Case{"random floating", test::random_model(6, 2, true, true)},
                        Case{"random fixed base with free and spherical joints", test::random_model(7, 1, false, true)}}) {
    Eigen::VectorXd q, v;
    MatrixXr<double> taus;
    random_state(c.model, 4, q, v, taus, 3);
    std::vector<int> quaternions;
    bool has_free = false;
    for (int i = 0; i < c.model.nbodies(); ++i) {
      if (!joint_has_quaternion(c.model.joint_type[i])) continue;
      quaternions.push_back(c.model.idx_q[i] + (c.model.joint_type[i] == JointType::Free ? 3 : 0));
      has_free = has_free || c.model.joint_type[i] == JointType::Free;
    }
    ASSERT_TRUE(has_free) << c.name;
    for (size_t j = 0; j < quaternions.size(); ++j) q.segment<4>(quaternions[j]) *= j % 2 ? 0.7 : 1.6;
    GradcheckOptions options;
    options.integrator = GetParam();
    options.seed = 9;
    const GradcheckResult r = gradcheck(c.model, q, v, taus, 0.005, options);
    expect_passes(r, c.name);
    for (int o : quaternions) {
      const Eigen::Vector4d g = r.adjoint_gradient.segment<4>(o);
      EXPECT_LE(std::abs(g.dot(q.segment<4>(o).normalized())), 1e-12 * std::max(1.0, g.norm()))
          << c.name << ": the loss does not change along the quaternion at q[" << o << "]";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Integrators, Gradcheck, ::testing::Values(Integrator::SemiImplicitEuler, Integrator::RK4),
                         [](const auto& info) {
                           return info.param == Integrator::RK4 ? std::string("RK4") : std::string("Euler");
                         });

TEST(GradcheckTool, ReportsEveryBlockAndItsCoverage) {
  const Model model = test::random_model(4, 2, true, true);
  Eigen::VectorXd q, v;
  MatrixXr<double> taus;
  random_state(model, 1, q, v, taus, 5);
  GradcheckOptions options;
  options.ad_max_coords = 3;
  options.fd_max_coords = 2;
  options.max_snapshots = 2;
  const GradcheckResult r = gradcheck(model, q, v, taus, 0.01, options);
  ASSERT_EQ(r.blocks.size(), 4u);
  EXPECT_EQ(r.blocks[0].name, "q0");
  EXPECT_EQ(r.blocks[0].size, model.nq);
  EXPECT_EQ(r.blocks[2].name, "taus");
  EXPECT_EQ(r.blocks[2].size, 5 * model.nv);
  EXPECT_EQ(r.blocks[2].ad_coords, 3);
  EXPECT_EQ(r.blocks[2].fd_coords, 2);
  EXPECT_EQ(r.adjoint_gradient.size(), model.nq + 6 * model.nv + r.blocks[3].size);
  const std::string s = r.summary();
  for (const char* name : {"q0", "v0", "taus", "params"}) EXPECT_NE(s.find(name), std::string::npos) << s;
  EXPECT_TRUE(r.passed()) << s;

  options.check_params = false;
  options.check_fd = false;
  const GradcheckResult no_params = gradcheck(model, q, v, taus, 0.01, options);
  EXPECT_EQ(no_params.blocks.size(), 3u);
  EXPECT_TRUE(std::isnan(no_params.blocks[0].fd_error));
  EXPECT_TRUE(no_params.passed());
}

// The comparison can fail: a finite-difference step far too large for a nonlinear rollout
// shows up as an FD error above tolerance, while AD still agrees.
TEST(GradcheckTool, DetectsADiscrepancy) {
  const Model model = test::random_model(5, 3, true, true);
  Eigen::VectorXd q, v;
  MatrixXr<double> taus;
  random_state(model, 2, q, v, taus, 20);
  GradcheckOptions options;
  options.check_params = false;
  options.fd_step = 0.3;
  const GradcheckResult r = gradcheck(model, q, v, taus, 0.01, options);
  EXPECT_GT(r.worst_fd_error(), 1e-4) << r.summary();
  EXPECT_LE(r.worst_ad_error(), kAdTolerance) << r.summary();
  EXPECT_FALSE(r.passed());
}

TEST(GradcheckTool, WrongShapesThrow) {
  const Model model = test::random_model(3, 1);
  const Eigen::VectorXd q = neutral_configuration<double>(model), v = Eigen::VectorXd::Zero(model.nv);
  const MatrixXr<double> taus = MatrixXr<double>::Zero(2, model.nv + 1);
  try {
    gradcheck(model, q, v, taus, 0.01);
    FAIL() << "no error for wrong taus";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("taus: expected shape (T, " + std::to_string(model.nv) + ")"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(gradcheck(model, v, v, MatrixXr<double>::Zero(2, model.nv), 0.01), ArgumentError);
}

}  // namespace
}  // namespace gradyn
