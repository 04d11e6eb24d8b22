// rnea_derivatives against forward-mode AD of rnea along the same tangent directions, on random
// trees with every joint kind, fixed and floating bases; and its M against crba.
#include <gtest/gtest.h>

#include <random>

#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/rnea.hpp"
#include "gradyn/dynamics/rnea_derivatives.hpp"
#include "gradyn/sim/integrate.hpp"
#include "../support/ad_jacobian.hpp"
#include "../support/random_model.hpp"

namespace gradyn {
namespace {

struct RneaJacobians {
  Eigen::MatrixXd dq, dv;
};

// d rnea / d(dq, v) at (q (+) dq, v, a), dq = 0, by AD.
RneaJacobians rnea_jacobians_ad(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                const Eigen::VectorXd& a) {
  const ModelTpl<ADScalar> m = model.cast<ADScalar>();
  DataTpl<ADScalar> d(m);
  const VectorX<ADScalar> qa = q.cast<ADScalar>(), aa = a.cast<ADScalar>();
  Eigen::VectorXd x0(2 * model.nv);
  x0 << Eigen::VectorXd::Zero(model.nv), v;
  auto f = [&](const VectorX<ADScalar>& x) {
    VectorX<ADScalar> qp(model.nq);
    integrate<ADScalar>(m, qa, x.head(model.nv), qp);
    return VectorX<ADScalar>(rnea<ADScalar>(m, d, qp, x.tail(model.nv), aa));
  };
  const Eigen::MatrixXd J = test::ad_jacobian(f, x0);
  return {J.leftCols(model.nv), J.rightCols(model.nv)};
}

void expect_matches_ad(const Model& model, unsigned seed) {
  std::mt19937 rng(seed);
  const Eigen::VectorXd q = test::random_configuration(model, rng);
  const Eigen::VectorXd v = test::random_vector(model.nv, rng, 2.0), a = test::random_vector(model.nv, rng, 3.0);
  Data data(model);
  Eigen::MatrixXd dq(model.nv, model.nv), dv(model.nv, model.nv);
  rnea_derivatives<double>(model, data, q, v, a, dq, dv);
  const RneaJacobians ref = rnea_jacobians_ad(model, q, v, a);
  const double scale = 1.0 + ref.dq.cwiseAbs().maxCoeff() + ref.dv.cwiseAbs().maxCoeff();
  EXPECT_LT((dq - ref.dq).cwiseAbs().maxCoeff() / scale, 1e-12) << "d/dq\n" << dq << "\nAD\n" << ref.dq;
  EXPECT_LT((dv - ref.dv).cwiseAbs().maxCoeff() / scale, 1e-12) << "d/dv\n" << dv << "\nAD\n" << ref.dv;
  const Eigen::MatrixXd M = data.M;
  Data data2(model);
  const Eigen::MatrixXd M_crba = crba<double>(model, data2, q);
  EXPECT_LT((M - M_crba).cwiseAbs().maxCoeff(), 1e-12 * (1 + M_crba.cwiseAbs().maxCoeff()));
}

TEST(RneaDerivatives, MatchForwardModeADOnFixedBaseTrees) {
  for (unsigned seed = 1; seed <= 6; ++seed) expect_matches_ad(test::random_model(9, seed, false, true), seed);
}

TEST(RneaDerivatives, MatchForwardModeADOnFloatingBaseTrees) {
  for (unsigned seed = 1; seed <= 6; ++seed) expect_matches_ad(test::random_model(8, seed, true, true), 10 + seed);
}

TEST(RneaDerivatives, RejectWrongShapes) {
  const Model model = test::random_model(3, 1);
  Data data(model);
  std::mt19937 rng(1);
  const Eigen::VectorXd q = test::random_configuration(model, rng), v = Eigen::VectorXd::Zero(model.nv);
  Eigen::MatrixXd dq(model.nv, model.nv + 1), dv(model.nv, model.nv);
  EXPECT_THROW(rnea_derivatives<double>(model, data, q, v, v, dq, dv), ArgumentError);
}

}  // namespace
}  // namespace gradyn
