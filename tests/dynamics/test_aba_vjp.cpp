// aba_vjp (implicit function theorem through rnea_vjp) against forward-mode AD and central
// differences of aba itself, and minv_solve against a dense LDLT solve.
//
// q, v and tau are compared raw, in every ambient direction (quaternions are read normalised, so
// every q gives orthogonal rotations; the random cases' quaternions are off the unit sphere).
// The raw model fields are not: ABA (world frame) and RNEA (body frame) are the same function
// only where the model's rotations are orthogonal, its revolute axes unit and its inertias
// symmetric, so the ModelTangent block is compared on that manifold's tangent space: a revolute
// axis' length, a placement rotation's symmetric deformation and an inertia's antisymmetric part
// are projected out of both sides (test::project_model_fields_to_manifold).
#include <gtest/gtest.h>

#include "../support/gradient_check.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/crba.hpp"

namespace gradyn {
namespace {

TEST(AbaVjp, MatchesForwardModeAndFiniteDifferences) {
  for (const test::GradientCase& c : test::gradient_cases()) {
    const Model& m = c.model;
    std::mt19937 rng(1);
    const Eigen::VectorXd ddq_bar = test::random_vector(m.nv, rng);
    auto f = [](const auto& model, auto& data, const auto& q, const auto& v, const auto& tau) {
      return aba(model, data, q, v, tau);
    };
    auto [want_ad, want_fd] = test::reference_vjps(c, f, ddq_bar);

    Data data(m);
    ModelTangent t(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Constant(m.nq, 0.5), v_bar = Eigen::VectorXd::Constant(m.nv, 0.5),
                    tau_bar = Eigen::VectorXd::Constant(m.nv, 0.5);
    aba_vjp(m, data, c.q, c.v, c.u, ddq_bar, q_bar, v_bar, tau_bar, t);
    Eigen::VectorXd got(want_ad.size());
    got << q_bar.array() - 0.5, v_bar.array() - 0.5, tau_bar.array() - 0.5, test::pack_tangent(m, t);

    // ABA reads quaternions normalised: scaling one changes nothing, so its adjoint has no
    // component along it (checked before any projection: q is never projected).
    for (int i = 0; i < m.nbodies(); ++i) {
      if (!joint_has_quaternion(m.joint_type[i])) continue;
      const int o = m.idx_q[i] + (m.joint_type[i] == JointType::Free ? 3 : 0);
      EXPECT_LE(std::abs(got.segment<4>(o).dot(c.q.segment<4>(o).normalized())),
                1e-12 * std::max(1.0, got.head(m.nq).cwiseAbs().maxCoeff()))
          << c.name << ": quaternion at q[" << o << "]";
    }
    for (Eigen::VectorXd* g : {&got, &want_ad, &want_fd}) test::project_model_fields_to_manifold(m, m.nq + 2 * m.nv, *g);
    test::expect_gradient_close(m, m.nv, "tau", got, want_ad, 1e-9, c.name + " vs AD");
    test::expect_gradient_close(m, m.nv, "tau", got, want_fd, 1e-6, c.name + " vs finite differences");
  }
}

TEST(AbaVjp, MinvSolveMatchesDenseSolve) {
  for (const test::GradientCase& c : test::gradient_cases()) {
    const Model& m = c.model;
    Data data(m);
    const Eigen::MatrixXd M = crba(m, data, c.q);
    aba(m, data, c.q, c.v, c.u);
    std::mt19937 rng(3);
    const Eigen::VectorXd b = test::random_vector(m.nv, rng);
    Eigen::VectorXd x(m.nv);
    minv_solve(m, data, b, x);
    const Eigen::VectorXd want = M.ldlt().solve(b);
    EXPECT_LE((x - want).norm(), 1e-10 * (1 + want.norm())) << c.name;
    EXPECT_LE((M * x - b).norm(), 1e-10 * (1 + b.norm())) << c.name;
  }
}

TEST(AbaVjp, ChecksSizes) {
  const Model m = test::random_model(4, 1);
  Data data(m);
  ModelTangent t(m);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(m.nq), v = Eigen::VectorXd::Zero(m.nv);
  Eigen::VectorXd q_bar = q, v_bar = v, tau_bar = v, short_bar = Eigen::VectorXd::Zero(m.nv - 1);
  EXPECT_THROW(aba_vjp(m, data, q, v, v, short_bar, q_bar, v_bar, tau_bar, t), ArgumentError);
  EXPECT_THROW(aba_vjp(m, data, q, v, v, v, q_bar, v_bar, short_bar, t), ArgumentError);
}

}  // namespace
}  // namespace gradyn
