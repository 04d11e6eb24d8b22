// The flat kernels (flat/step.hpp, compiled here by g++; the CUDA backend compiles the same source)
// against the engine's step: the laikago on its toes and the MJCF humanoid with penalty contact,
// a box and capsules on a plane, and the models they refuse.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "../support/laikago_scene.hpp"
#include "flat_checks.hpp"
#include "gradyn/flat/export.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

struct Trajectories {
  MatrixXr<double> qs, vs;
};

// The engine's rollout of one world and, from each of its states, one flat step: the flat step
// must give the engine's next state (rounding apart). Returns the worst relative deviation.
double worst_one_step_deviation(const Model& model, const Eigen::VectorXd& q0, const Eigen::VectorXd& v0,
                                const MatrixXr<double>& ctrls, double dt, std::uint32_t* engine_status = nullptr) {
  const int T = static_cast<int>(ctrls.rows());
  Data data(model);
  MatrixXr<double> qs, vs, taus = MatrixXr<double>::Zero(T, model.nv);
  rollout<double>(model, data, q0, v0, taus, ctrls, dt, Integrator::SemiImplicitEuler, qs, vs);
  if (engine_status) *engine_status = data.status;
  const flat::FlatArrays flat_model = flat::export_flat_model(model);
  double worst = 0;
  for (int t = 0; t < T; ++t) {
    MatrixXr<double> fq(2, model.nq), fv(2, model.nv);
    std::uint32_t status = 0;
    const Eigen::RowVectorXd q = qs.row(t), v = vs.row(t), u = ctrls.row(t);
    flat::flat_rollout_cpu(flat_model, 1, 1, q.data(), v.data(), nullptr, model.nu() ? u.data() : nullptr, dt,
                           fq.data(), fv.data(), &status);
    const double scale_q = 1 + qs.row(t + 1).cwiseAbs().maxCoeff(), scale_v = 1 + vs.row(t + 1).cwiseAbs().maxCoeff();
    worst = std::max(worst, (fq.row(1) - qs.row(t + 1)).cwiseAbs().maxCoeff() / scale_q);
    worst = std::max(worst, (fv.row(1) - vs.row(t + 1)).cwiseAbs().maxCoeff() / scale_v);
  }
  return worst;
}

using test::random_controls;

TEST(FlatStep, LaikagoOnItsToesStepsAsTheEngine) {
  test::LaikagoScene s = test::laikago_standing(ContactModel::Penalty);
  s.model.contact.velocity_scale = 0.3;
  Eigen::VectorXd v0 = Eigen::VectorXd::Zero(s.model.nv);
  v0.head(6) << 0.3, -0.2, 0.1, 0.5, -0.4, 0.2;  // sliding and spinning while it lands
  s.q[2] += 0.02;
  const MatrixXr<double> no_ctrls(400, 0);
  EXPECT_LT(worst_one_step_deviation(s.model, s.q, v0, no_ctrls, 1e-3), 1e-12);
}

TEST(FlatStep, HumanoidWithMotorsLimitsAndSelfContactStepsAsTheEngine) {
  std::vector<std::string> warnings;  // what the loader does not simulate
  LoadOptions options;
  options.warnings = &warnings;
  Model model = load(std::string(GRADYN_MODELS) + "/mujoco/humanoid.xml", options);
  model.tendons.clear();  // the flat kernels do not simulate tendons (export refuses them): without its hamstrings
  model.contact.model = ContactModel::Penalty;
  Eigen::VectorXd q0 = model.q0, v0 = Eigen::VectorXd::Zero(model.nv);
  v0.head(6) << 0.5, 0.0, -0.5, 1.0, 2.0, -1.0;
  std::uint32_t status = 0;
  // 600 steps of 2 ms under random motor commands: it falls, touches the floor, bends past limits
  EXPECT_LT(worst_one_step_deviation(model, q0, v0, random_controls(model, 600, 3, 1.0), 2e-3, &status), 1e-12);
}

TEST(FlatStep, BoxAndCapsulesOnAPlaneStepAsTheEngine) {
  Model model = test::free_primitives_on_a_plane("gradyn_flat_scene.xml");
  model.contact.model = ContactModel::Penalty;
  model.contact.velocity_scale = 0.2;  // light bodies: the default chatters
  Eigen::VectorXd v0 = Eigen::VectorXd::Zero(model.nv);
  v0.segment(0, 6) << 0.2, 0.1, 0.0, 0.5, 0.3, 0.2;  // the box lands tilted
  const MatrixXr<double> no_ctrls(500, 0);
  EXPECT_LT(worst_one_step_deviation(model, model.q0, v0, no_ctrls, 1e-3), 1e-12);
}

TEST(FlatStep, ABatchIsEachWorldAlone) {
  test::LaikagoScene s = test::laikago_standing(ContactModel::Penalty);
  const Model& m = s.model;
  const flat::FlatArrays fm = flat::export_flat_model(m);
  const int B = 3, T = 50;
  MatrixXr<double> q0(B, m.nq), v0 = MatrixXr<double>::Zero(B, m.nv);
  for (int w = 0; w < B; ++w) q0.row(w) = s.q.transpose(), v0(w, 6 + w) = 0.5 * (w + 1);
  std::vector<double> qs(B * (T + 1) * m.nq), vs(B * (T + 1) * m.nv), one_q((T + 1) * m.nq), one_v((T + 1) * m.nv);
  std::vector<std::uint32_t> status(B), one_status(1);
  flat::flat_rollout_cpu(fm, B, T, q0.data(), v0.data(), nullptr, nullptr, 1e-3, qs.data(), vs.data(), status.data());
  for (int w = 0; w < B; ++w) {
    const Eigen::RowVectorXd q = q0.row(w), v = v0.row(w);
    flat::flat_rollout_cpu(fm, 1, T, q.data(), v.data(), nullptr, nullptr, 1e-3, one_q.data(), one_v.data(),
                           one_status.data());
    EXPECT_TRUE(std::equal(one_q.begin(), one_q.end(), qs.begin() + w * (T + 1) * m.nq)) << w;
    EXPECT_TRUE(std::equal(one_v.begin(), one_v.end(), vs.begin() + w * (T + 1) * m.nv)) << w;
    EXPECT_EQ(status[w], one_status[0]);
  }
}

TEST(FlatStep, AWorldThatDivergesIsFlagged) {
  test::LaikagoScene s = test::laikago_standing(ContactModel::Penalty);
  const flat::FlatArrays fm = flat::export_flat_model(s.model);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(s.model.nv);
  v[8] = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> qs(2 * s.model.nq), vs(2 * s.model.nv);
  std::uint32_t status = 0;
  flat::flat_rollout_cpu(fm, 1, 1, s.q.data(), v.data(), nullptr, nullptr, 1e-3, qs.data(), vs.data(), &status);
  EXPECT_TRUE(status & kStatusNonFinite);
}

void expect_refused(const Model& model, const std::string& fragment) {
  try {
    flat::export_flat_model(model);
    FAIL() << "expected ArgumentError containing: " << fragment;
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(FlatExport, SaysWhatTheKernelsDoNotRun) {
  test::LaikagoScene s = test::laikago_standing(ContactModel::Ipm);
  expect_refused(s.model, "contact model 'ipm'");
  s.model.contact.model = ContactModel::Penalty;
  s.model.contact.friction = FrictionModel::Brown;
  expect_refused(s.model, "Brown friction");
  const std::string boxes = R"(<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
    <body name="a" pos="0 0 .5"><freejoint/><geom name="box_a" type="box" size=".1 .1 .1"/></body>
    <body name="b" pos="0 0 .8"><freejoint/><geom name="box_b" type="box" size=".1 .1 .1"/></body>
  </worldbody></mujoco>)";
  Model two_boxes = parse_mjcf_string(boxes).build();
  two_boxes.contact.model = ContactModel::Penalty;
  expect_refused(two_boxes, "geoms 'box_a' (box) and 'box_b' (box) may touch");
  const std::string ball_joint = R"(<mujoco><worldbody>
    <body name="a"><joint name="shoulder" type="ball"/><geom type="sphere" size=".1"/></body>
  </worldbody></mujoco>)";
  expect_refused(parse_mjcf_string(ball_joint).build(), "joint 'shoulder' is spherical");
}

}  // namespace
}  // namespace gradyn
