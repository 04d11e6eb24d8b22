// passive_forces_vjp (dampers and springs through joint_difference of every joint kind) and
// forward_dynamics_vjp against forward-mode AD and central differences.
#include <gtest/gtest.h>

#include "../support/gradient_check.hpp"
#include "gradyn/dynamics/passive.hpp"

namespace gradyn {
namespace {

TEST(PassiveVjp, MatchesForwardModeAndFiniteDifferences) {
  for (test::GradientCase c : test::gradient_cases()) {
    const Model& m = c.model;
    c.u.resize(0);  // passive forces have no third input
    std::mt19937 rng(1);
    const Eigen::VectorXd tau_bar = test::random_vector(m.nv, rng);
    auto f = [](const auto& model, auto& data, const auto& q, const auto& v, const auto&) {
      return passive_forces(model, data, q, v);
    };
    const auto [want_ad, want_fd] = test::reference_vjps(c, f, tau_bar);

    Data data(m);
    ModelTangent t(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Constant(m.nq, 0.5), v_bar = Eigen::VectorXd::Constant(m.nv, 0.5);
    passive_forces_vjp(m, data, c.q, c.v, tau_bar, q_bar, v_bar, t);
    Eigen::VectorXd got(want_ad.size());
    got << q_bar.array() - 0.5, v_bar.array() - 0.5, test::pack_tangent(m, t);

    test::expect_gradient_close(m, 0, "-", got, want_ad, 1e-9, c.name + " vs AD");
    test::expect_gradient_close(m, 0, "-", got, want_fd, 1e-6, c.name + " vs finite differences");
  }
}

// Near the rest configuration the spherical, free and planar differences take their small-angle
// branches; the adjoint follows the same branch.
TEST(PassiveVjp, SmallDisplacementFromRest) {
  for (test::GradientCase c : test::gradient_cases()) {
    if (c.name.rfind("random", 0) != 0) continue;
    const Model& m = c.model;
    std::mt19937 rng(5);
    Eigen::VectorXd q = m.q_rest;
    normalize_configuration<double>(m, q);
    c.model.q_rest = q;
    c.q = q + test::random_vector(m.nq, rng, 1e-9);
    c.u.resize(0);
    const Eigen::VectorXd tau_bar = test::random_vector(m.nv, rng);
    auto f = [](const auto& model, auto& data, const auto& q, const auto& v, const auto&) {
      return passive_forces(model, data, q, v);
    };
    const auto want_ad = test::reference_vjps(c, f, tau_bar, 1e-12).first;
    Data data(c.model);
    ModelTangent t(c.model);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(m.nq), v_bar = Eigen::VectorXd::Zero(m.nv);
    passive_forces_vjp(c.model, data, c.q, c.v, tau_bar, q_bar, v_bar, t);
    Eigen::VectorXd got(want_ad.size());
    got << q_bar, v_bar, test::pack_tangent(c.model, t);
    test::expect_gradient_close(c.model, 0, "-", got, want_ad, 1e-9, c.name + " near rest vs AD");
  }
}

TEST(ForwardDynamicsVjp, MatchesForwardModeAndFiniteDifferences) {
  for (const test::GradientCase& c : test::gradient_cases()) {
    const Model& m = c.model;
    std::mt19937 rng(1);
    const Eigen::VectorXd ddq_bar = test::random_vector(m.nv, rng);
    auto f = [](const auto& model, auto& data, const auto& q, const auto& v, const auto& tau) {
      return forward_dynamics(model, data, q, v, tau);
    };
    auto [want_ad, want_fd] = test::reference_vjps(c, f, ddq_bar);

    Data data(m);
    ModelTangent t(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Constant(m.nq, 0.5), v_bar = Eigen::VectorXd::Constant(m.nv, 0.5),
                    tau_bar = Eigen::VectorXd::Constant(m.nv, 0.5);
    forward_dynamics_vjp(m, data, c.q, c.v, c.u, ddq_bar, q_bar, v_bar, tau_bar, t);
    Eigen::VectorXd got(want_ad.size());
    got << q_bar.array() - 0.5, v_bar.array() - 0.5, tau_bar.array() - 0.5, test::pack_tangent(m, t);

    // q raw, in every ambient direction; the raw model fields (not q) on the manifold of valid
    // models, as in test_aba_vjp.cpp.
    for (Eigen::VectorXd* g : {&got, &want_ad, &want_fd}) test::project_model_fields_to_manifold(m, m.nq + 2 * m.nv, *g);
    test::expect_gradient_close(m, m.nv, "tau", got, want_ad, 1e-9, c.name + " vs AD");
    test::expect_gradient_close(m, m.nv, "tau", got, want_fd, 1e-6, c.name + " vs finite differences");
  }
}

}  // namespace
}  // namespace gradyn

namespace gradyn {
namespace {

// Where a joint has no spring, passive_forces skips it for doubles, but the force is linear in the
// stiffness: its adjoint must still be -tau_bar d (a fit that starts from no spring needs it).
TEST(PassiveVjp, StiffnessGradientWhereThereIsNoSpring) {
  Model m = test::random_model(10, 3, true, true);
  m.stiffness.setZero();
  std::mt19937 rng(8);
  const Eigen::VectorXd q = test::random_configuration(m, rng), v = test::random_vector(m.nv, rng);
  const Eigen::VectorXd tau_bar = test::random_vector(m.nv, rng);
  Data data(m);
  ModelTangent t(m);
  Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(m.nq), v_bar = Eigen::VectorXd::Zero(m.nv);
  passive_forces_vjp(m, data, q, v, tau_bar, q_bar, v_bar, t);
  EXPECT_EQ(q_bar.norm(), 0.0);
  const double h = 1e-6;
  for (int k = 0; k < m.nv; ++k) {
    Model mp = m, mm = m;
    mp.stiffness[k] = h;
    mm.stiffness[k] = -h;
    Data dp(mp), dm(mm);
    const double want = tau_bar.dot(passive_forces(mp, dp, q, v) - passive_forces(mm, dm, q, v)) / (2 * h);
    EXPECT_NEAR(t.stiffness[k], want, 1e-6 * (1 + std::abs(want))) << "stiffness[" << k << "]";
  }
}

}  // namespace
}  // namespace gradyn
