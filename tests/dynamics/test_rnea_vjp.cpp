// rnea_vjp against forward-mode AD and central differences of rnea, for every input: ambient q
// (quaternions off the unit sphere in the random cases, read normalised by the forward), v, a and
// every model parameter (unrestricted directions: RNEA's formula is differentiated as is).
#include <gtest/gtest.h>

#include "../support/gradient_check.hpp"
#include "gradyn/dynamics/rnea.hpp"

namespace gradyn {
namespace {

TEST(RneaVjp, MatchesForwardModeAndFiniteDifferences) {
  for (const test::GradientCase& c : test::gradient_cases()) {
    const Model& m = c.model;
    std::mt19937 rng(1);
    const Eigen::VectorXd tau_bar = test::random_vector(m.nv, rng);
    auto f = [](const auto& model, auto& data, const auto& q, const auto& v, const auto& a) {
      return rnea(model, data, q, v, a);
    };
    const auto [want_ad, want_fd] = test::reference_vjps(c, f, tau_bar);

    // Outputs start non-zero: the VJP must add to them.
    Data data(m);
    ModelTangent t(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Constant(m.nq, 0.5), v_bar = Eigen::VectorXd::Constant(m.nv, 0.5),
                    a_bar = Eigen::VectorXd::Constant(m.nv, 0.5);
    rnea_vjp(m, data, c.q, c.v, c.u, tau_bar, q_bar, v_bar, a_bar, t);
    Eigen::VectorXd got(want_ad.size());
    got << q_bar.array() - 0.5, v_bar.array() - 0.5, a_bar.array() - 0.5, test::pack_tangent(m, t);

    test::expect_gradient_close(m, m.nv, "a", got, want_ad, 1e-9, c.name + " vs AD");
    test::expect_gradient_close(m, m.nv, "a", got, want_fd, 1e-6, c.name + " vs finite differences");
  }
}

TEST(RneaVjp, LeavesTheForwardResultsInData) {
  const Model m = test::random_model(8, 5, true, true);
  std::mt19937 rng(2);
  const Eigen::VectorXd q = test::random_configuration(m, rng), v = test::random_vector(m.nv, rng),
                        a = test::random_vector(m.nv, rng);
  Data d1(m), d2(m);
  const Eigen::VectorXd tau = rnea(m, d1, q, v, a);
  ModelTangent t(m);
  Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(m.nq), v_bar = Eigen::VectorXd::Zero(m.nv), a_bar = v_bar;
  rnea_vjp(m, d2, q, v, a, Eigen::VectorXd::Ones(m.nv), q_bar, v_bar, a_bar, t);
  for (int i = 0; i < m.nbodies(); ++i) {
    EXPECT_LE((d1.v[i] - d2.v[i]).norm(), 1e-12);
    EXPECT_LE((d1.a[i] - d2.a[i]).norm(), 1e-12);
    EXPECT_LE((d1.f[i] - d2.f[i]).norm(), 1e-12);
  }
  // a_bar = M^T tau_bar: d rnea / d a is the joint-space inertia matrix (armature included).
  Data d3(m);
  Eigen::MatrixXd M(m.nv, m.nv);
  for (int k = 0; k < m.nv; ++k) {
    Eigen::VectorXd e = Eigen::VectorXd::Zero(m.nv);
    e[k] = 1;
    M.col(k) = rnea(m, d3, q, v, a + e) - tau;
  }
  EXPECT_LE((a_bar - M.transpose() * Eigen::VectorXd::Ones(m.nv)).norm(), 1e-9 * (1 + M.norm()));
}

}  // namespace
}  // namespace gradyn
