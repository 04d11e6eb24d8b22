// PGS contact in the flat kernels (flat/pgs.hpp, flat/pgs_vjp.hpp) against the engine's
// ContactModel::Pgs: one step from each state of the engine's rollout (both from a cold start),
// whole rollouts (warm-started from step to step as the engine), the reverse step against the
// engine's step_vjp (implicit adjoint), and the reverse step against central differences of the
// flat step. Scenes: the laikago landing on its toes, the MJCF humanoid with motors, joint limits
// (limit rows) and self-contact, and bouncing boxes, spheres and capsules.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "../support/laikago_scene.hpp"
#include "flat_checks.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/flat/export.hpp"
#include "gradyn/flat/flat_model.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

struct Scene {
  Model model;
  Eigen::VectorXd q0, v0;
  MatrixXr<double> ctrls;
  double dt;
};

using test::random_controls;

Scene laikago_landing(int T) {
  test::LaikagoScene s = test::laikago_standing(ContactModel::Pgs);
  Eigen::VectorXd v0 = Eigen::VectorXd::Zero(s.model.nv);
  v0.head(6) << 0.3, -0.2, -0.4, 0.5, -0.4, 0.2;  // sliding and spinning while it lands
  s.q[2] += 0.01;
  return {s.model, s.q, v0, MatrixXr<double>(T, 0), 1e-3};
}

Scene humanoid(int T) {
  std::vector<std::string> warnings;  // what the loader does not simulate
  LoadOptions options;
  options.warnings = &warnings;
  Model model = load(std::string(GRADYN_MODELS) + "/mujoco/humanoid.xml", options);
  model.tendons.clear();  // the flat kernels do not simulate tendons (export refuses them): without its hamstrings
  model.contact.model = ContactModel::Pgs;
  Eigen::VectorXd v0 = Eigen::VectorXd::Zero(model.nv);
  v0.head(6) << 0.5, 0.0, -0.5, 1.0, 2.0, -1.0;
  // 2 ms steps under random motor commands: it falls, touches the floor, bends to its limits
  return {model, model.q0, v0, random_controls(model, T, 3, 1.0), 2e-3};
}

Scene bouncing_pile(int T) {
  Model model = test::free_primitives_on_a_plane("gradyn_flat_pgs_scene.xml");
  model.contact.model = ContactModel::Pgs;
  for (Geom& g : model.geoms) g.restitution = 0.5;  // bounces (restitution rows) and Baumgarte rows
  Eigen::VectorXd v0 = Eigen::VectorXd::Zero(model.nv);
  v0.segment(0, 6) << 0.2, 0.1, -1.0, 0.5, 0.3, 0.2;  // the box lands tilted
  v0[6 * 3 + 2] = -1.5;                                // the sphere falls fast
  return {model, model.q0, v0, MatrixXr<double>(T, 0), 1e-3};
}

struct Rollout {
  MatrixXr<double> qs, vs, taus;
};

Rollout engine_rollout(const Scene& s) {
  const int T = static_cast<int>(s.ctrls.rows());
  Rollout r;
  r.taus = MatrixXr<double>::Zero(T, s.model.nv);
  Data data(s.model);
  rollout<double>(s.model, data, s.q0, s.v0, r.taus, s.ctrls, s.dt, Integrator::SemiImplicitEuler, r.qs, r.vs);
  return r;
}

double relative(const Eigen::RowVectorXd& a, const Eigen::RowVectorXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / (1 + b.cwiseAbs().maxCoeff());
}

// From each state of the engine's rollout, one engine step and one flat step, both from a cold
// start. Returns the worst relative deviation of the next state; counts the states in contact.
double worst_cold_step(const Scene& s, int* contact_states = nullptr) {
  const Rollout r = engine_rollout(s);
  const flat::FlatArrays fm = flat::export_flat_model(s.model);
  const Model& m = s.model;
  Data data(m);
  double worst = 0;
  int touching = 0;
  Eigen::VectorXd qn(m.nq), vn(m.nv);
  for (int t = 0; t + 1 < r.qs.rows(); ++t) {
    const Eigen::VectorXd q = r.qs.row(t).transpose(), v = r.vs.row(t).transpose(), tau = r.taus.row(t).transpose();
    const Eigen::VectorXd u = m.nu() ? Eigen::VectorXd(s.ctrls.row(t).transpose()) : Eigen::VectorXd();
    pgs_forget_warm_start(data);
    step<double>(m, data, q, v, tau, u, s.dt, Integrator::SemiImplicitEuler, qn, vn);
    touching += data.ncontacts > 0;
    MatrixXr<double> fq(2, m.nq), fv(2, m.nv);
    std::uint32_t status = 0;
    flat::flat_rollout_cpu(fm, 1, 1, q.data(), v.data(), tau.data(), m.nu() ? u.data() : nullptr, s.dt, fq.data(),
                           fv.data(), &status);
    worst = std::max({worst, relative(fq.row(1), qn.transpose()), relative(fv.row(1), vn.transpose())});
  }
  if (contact_states) *contact_states = touching;
  return worst;
}

// The engine's rollout and the flat rollout (warm-started alike), state by state.
double worst_rollout_deviation(const Scene& s, std::uint32_t* engine_status, std::uint32_t* flat_status) {
  const int T = static_cast<int>(s.ctrls.rows());
  const Model& m = s.model;
  Data data(m);
  MatrixXr<double> qs, vs, taus = MatrixXr<double>::Zero(T, m.nv);
  rollout<double>(m, data, s.q0, s.v0, taus, s.ctrls, s.dt, Integrator::SemiImplicitEuler, qs, vs);
  *engine_status = data.status;
  const flat::FlatArrays fm = flat::export_flat_model(m);
  MatrixXr<double> fq(T + 1, m.nq), fv(T + 1, m.nv);
  flat::flat_rollout_cpu(fm, 1, T, s.q0.data(), s.v0.data(), taus.data(), m.nu() ? s.ctrls.data() : nullptr, s.dt,
                         fq.data(), fv.data(), flat_status);
  double worst = 0;
  for (int t = 0; t <= T; ++t) worst = std::max({worst, relative(fq.row(t), qs.row(t)), relative(fv.row(t), vs.row(t))});
  return worst;
}

TEST(FlatPgs, LaikagoLandingStepsAsTheEngine) {
  int touching = 0;
  const double worst = worst_cold_step(laikago_landing(300), &touching);
  std::cout << "worst relative deviation " << worst << " over " << touching << " states in contact\n";
  EXPECT_LT(worst, 1e-12);
  EXPECT_GT(touching, 250);
}

TEST(FlatPgs, HumanoidWithJointLimitRowsStepsAsTheEngine) {
  int touching = 0;
  const double worst = worst_cold_step(humanoid(300), &touching);
  std::cout << "worst relative deviation " << worst << " over " << touching << " states in contact\n";
  EXPECT_LT(worst, 1e-12);
  EXPECT_GT(touching, 50);
}

TEST(FlatPgs, BouncingBoxesSpheresAndCapsulesStepAsTheEngine) {
  int touching = 0;
  const double worst = worst_cold_step(bouncing_pile(400), &touching);
  std::cout << "worst relative deviation " << worst << " over " << touching << " states in contact\n";
  EXPECT_LT(worst, 1e-12);
  EXPECT_GT(touching, 300);
}

TEST(FlatPgs, WarmStartedRolloutsFollowTheEngine) {
  for (const Scene& s : {laikago_landing(200), bouncing_pile(200)}) {
    std::uint32_t engine_status = 0, flat_status = 0;
    const double worst = worst_rollout_deviation(s, &engine_status, &flat_status);
    std::cout << "worst relative deviation over 200 steps " << worst << "\n";
    EXPECT_LT(worst, 1e-11);
    EXPECT_EQ(engine_status, flat_status);
  }
}

TEST(FlatPgs, ExportSizesTheRowsAndRefusesTheSweepsGradient) {
  test::LaikagoScene s = test::laikago_standing(ContactModel::Pgs);
  const flat::FlatArrays fm = flat::export_flat_model(s.model);
  const auto view = flat::FlatModel<double>::view(fm.ints.data(), fm.reals.data());
  EXPECT_TRUE(view.pgs_on());
  EXPECT_GE(view.max_contacts(), 4);                      // four toe spheres on the plane, and more
  EXPECT_EQ(view.max_rows(), 3 * view.max_contacts());  // no joint limits
  s.model.contact.pgs_gradient = PgsGradient::Sweeps;
  try {
    flat::export_flat_model(s.model);
    FAIL() << "expected a refusal";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("pgs_gradient='implicit'"), std::string::npos) << e.what();
  }
}

// The flat reverse step against the engine's step_vjp along the engine's rollout under random seeds
// (both recompute the step from a cold start and differentiate the active set).
double worst_vjp_deviation(const Scene& s, int every, int* contact_states) {
  return test::worst_vjp_deviation(s.model, s.q0, s.v0, s.ctrls, s.dt, every, contact_states, 1e-6);
}

TEST(FlatPgsVjp, LaikagoLanding) {
  int touching = 0;
  const double worst = worst_vjp_deviation(laikago_landing(300), 7, &touching);
  std::cout << "worst relative deviation " << worst << " over " << touching << " states in contact\n";
  EXPECT_LT(worst, 1e-11);
  EXPECT_GT(touching, 30);
}

TEST(FlatPgsVjp, HumanoidWithJointLimitRows) {
  int touching = 0;
  const double worst = worst_vjp_deviation(humanoid(300), 5, &touching);
  std::cout << "worst relative deviation " << worst << " over " << touching << " states in contact\n";
  EXPECT_LT(worst, 1e-11);
  EXPECT_GT(touching, 10);
}

TEST(FlatPgsVjp, BouncingBoxesSpheresAndCapsules) {
  int touching = 0;
  const double worst = worst_vjp_deviation(bouncing_pile(400), 5, &touching);
  std::cout << "worst relative deviation " << worst << " over " << touching << " states in contact\n";
  // a box's corners and capsules lying flat make redundant rows, whose least-norm adjoint the flat
  // kernels find by a Jacobi SVD and the engine by a complete orthogonal decomposition
  EXPECT_LT(worst, 1e-7);
  EXPECT_GT(touching, 50);
}

// The flat reverse step against central differences of the flat forward step on laikago states in
// contact (PGS converged tightly, so that the difference quotient sees the solution, not the sweeps).
TEST(FlatPgsVjp, MatchesFiniteDifferencesOfTheFlatStep) {
  Scene s = laikago_landing(120);
  s.model.contact.pgs_tolerance = 1e-15;
  s.model.contact.pgs_iterations = 2000;
  const Rollout r = engine_rollout(s);
  const flat::FlatArrays fm = flat::export_flat_model(s.model);
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  for (int t = 40; t < 120; t += 10) {
    Eigen::VectorXd tau(s.model.nv);
    for (int k = 0; k < s.model.nv; ++k) tau[k] = normal(rng);
    test::expect_flat_vjp_matches_central_differences(s.model, fm, r.qs.row(t).transpose(), r.vs.row(t).transpose(),
                                                      tau, s.dt, rng, "state " + std::to_string(t));
  }
}

}  // namespace
}  // namespace gradyn
