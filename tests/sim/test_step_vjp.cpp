// Adjoints of integrate and step against forward-mode AD (exact to rounding) and central
// differences: full Jacobians rebuilt from one VJP per output, on random models cycling through
// every joint kind, fixed and floating base, with and without springs and dampers.
#include <gtest/gtest.h>

#include "../support/ad_jacobian.hpp"
#include "../support/random_model.hpp"
#include "gradyn/autodiff.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

// max |A - B| relative to the largest entry of B (at least 1).
double relative_error(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  EXPECT_EQ(A.rows(), B.rows());
  EXPECT_EQ(A.cols(), B.cols());
  return (A - B).cwiseAbs().maxCoeff() / std::max(1.0, B.cwiseAbs().maxCoeff());
}

// Quaternions scaled off the unit sphere: integrate's adjoints are ambient, so they must hold there too.
Eigen::VectorXd off_sphere(const Model& model, Eigen::VectorXd q, double scale) {
  for (int i = 0; i < model.nbodies(); ++i) {
    if (model.joint_type[i] == JointType::Spherical) q.segment(model.idx_q[i], 4) *= scale;
    if (model.joint_type[i] == JointType::Free) q.segment(model.idx_q[i] + 3, 4) *= scale;
  }
  return q;
}

// d integrate / d (q, dv), one VJP per output row.
Eigen::MatrixXd integrate_jacobian_vjp(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& dv) {
  Eigen::MatrixXd J(model.nq, model.nq + model.nv);
  for (int r = 0; r < model.nq; ++r) {
    Eigen::VectorXd seed = Eigen::VectorXd::Unit(model.nq, r), q_bar = Eigen::VectorXd::Zero(model.nq),
                    dv_bar = Eigen::VectorXd::Zero(model.nv);
    integrate_vjp<double>(model, q, dv, seed, q_bar, dv_bar);
    J.row(r) << q_bar.transpose(), dv_bar.transpose();
  }
  return J;
}

TEST(IntegrateVjp, EveryJointKindMatchesADAndFiniteDifferences) {
  for (unsigned seed = 0; seed < 7; ++seed) {  // seeds shift the joint kinds: every kind at every depth
    for (bool floating : {false, true}) {
      const Model model = test::random_model(8, seed, floating);
      std::mt19937 rng(seed);
      const Eigen::VectorXd q = off_sphere(model, test::random_configuration(model, rng), 1.3);
      // large, tiny (Taylor branches of exp, V and SE(2)) and zero increments
      for (double scale : {1.5, 1e-7, 0.0}) {
        const Eigen::VectorXd dv = test::random_vector(model.nv, rng, scale);
        Eigen::VectorXd x0(model.nq + model.nv);
        x0 << q, dv;
        auto f = [&](const auto& x) {
          using S = typename std::decay_t<decltype(x)>::Scalar;
          const ModelTpl<S> m = model.cast<S>();
          VectorX<S> out(model.nq);
          integrate<S>(m, x.head(model.nq), x.tail(model.nv), out);
          return out;
        };
        const Eigen::MatrixXd J = integrate_jacobian_vjp(model, q, dv);
        const Eigen::MatrixXd J_ad = test::ad_jacobian(f, x0);
        EXPECT_LE(relative_error(J, J_ad), 1e-12) << "seed " << seed << " floating " << floating << " |dv| " << scale;
        if (scale > 1e-3) {  // away from the branch switches, where the Taylor cut-off makes FD meaningless
          const Eigen::MatrixXd J_fd = test::fd_jacobian(f, x0, 1e-6);
          EXPECT_LE(relative_error(J, J_fd), 1e-7) << "seed " << seed;
        }
      }
    }
  }
}

TEST(IntegrateVjp, AccumulatesAndChecksSizes) {
  const Model model = test::random_model(5, 3, true);
  std::mt19937 rng(1);
  const Eigen::VectorXd q = test::random_configuration(model, rng), dv = test::random_vector(model.nv, rng);
  const Eigen::VectorXd seed = test::random_vector(model.nq, rng);
  Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), dv_bar = Eigen::VectorXd::Zero(model.nv);
  integrate_vjp<double>(model, q, dv, seed, q_bar, dv_bar);
  Eigen::VectorXd q_bar2 = q_bar, dv_bar2 = dv_bar;
  integrate_vjp<double>(model, q, dv, seed, q_bar2, dv_bar2);
  EXPECT_LE((q_bar2 - 2 * q_bar).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LE((dv_bar2 - 2 * dv_bar).cwiseAbs().maxCoeff(), 1e-14);
  Eigen::VectorXd short_bar = Eigen::VectorXd::Zero(model.nv - 1);
  EXPECT_THROW(integrate_vjp<double>(model, q, dv, seed, q_bar, short_bar), ArgumentError);
}

struct StepJacobians {
  Eigen::MatrixXd vjp, ad, fd;
};

// d (q_next, v_next) / d (q, v, tau): from VJPs, AD and central differences, raw ambient
// columns (quaternion entries perturbed one at a time, off the unit sphere).
StepJacobians step_jacobians(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                             const Eigen::VectorXd& tau, double dt, Integrator integrator, bool with_fd) {
  const int nq = model.nq, nv = model.nv, n_out = nq + nv, n_in = nq + 2 * nv;
  Data data(model);
  StepJacobians J;
  J.vjp.resize(n_out, n_in);
  for (int r = 0; r < n_out; ++r) {
    const Eigen::VectorXd seed = Eigen::VectorXd::Unit(n_out, r);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(nq), v_bar = Eigen::VectorXd::Zero(nv),
                    tau_bar = Eigen::VectorXd::Zero(nv);
    ModelTangent model_bar(model);
    step_vjp<double>(model, data, q, v, tau, dt, integrator, seed.head(nq), seed.tail(nv), q_bar, v_bar, tau_bar,
                     model_bar);
    J.vjp.row(r) << q_bar.transpose(), v_bar.transpose(), tau_bar.transpose();
  }
  Eigen::VectorXd x0(n_in);
  x0 << q, v, tau;
  auto f = [&](const auto& x) {
    using S = typename std::decay_t<decltype(x)>::Scalar;
    const ModelTpl<S> m = model.cast<S>();
    DataTpl<S> d(m);
    VectorX<S> out(n_out);
    step<S>(m, d, x.head(nq), x.segment(nq, nv), x.tail(nv), S(dt), integrator, out.head(nq), out.tail(nv));
    return out;
  };
  J.ad = test::ad_jacobian(f, x0);
  if (with_fd) J.fd = test::fd_jacobian(f, x0, 1e-6);
  return J;
}

class StepVjp : public ::testing::TestWithParam<Integrator> {};

// The q columns are compared raw: the dynamics read quaternions normalised, so the adjoint is
// exact in every direction, the radial one (where the Jacobian vanishes) included, also for an
// input q whose quaternions are off the unit sphere.
TEST_P(StepVjp, RandomModelsMatchADAndFiniteDifferences) {
  for (unsigned seed = 0; seed < 7; ++seed) {
    const bool floating = seed % 2 == 1, passive = seed % 3 != 0;
    const Model model = test::random_model(7, seed, floating, passive);
    std::mt19937 rng(100 + seed);
    const Eigen::VectorXd q_unit = test::random_configuration(model, rng);
    const Eigen::VectorXd v = test::random_vector(model.nv, rng), tau = test::random_vector(model.nv, rng);
    for (double sphere_scale : {1.0, 1.3}) {
      const Eigen::VectorXd q = off_sphere(model, q_unit, sphere_scale);
      const StepJacobians J = step_jacobians(model, q, v, tau, 0.01, GetParam(), true);
      EXPECT_LE(relative_error(J.vjp, J.ad), 1e-9) << "seed " << seed << " |quaternion| " << sphere_scale;
      EXPECT_LE(relative_error(J.vjp, J.fd), 1e-6) << "seed " << seed << " |quaternion| " << sphere_scale;
    }
  }
}

TEST_P(StepVjp, ZeroVelocityTakesTheSmallAngleBranches) {
  const Model model = test::random_model(7, 4, true, true);
  std::mt19937 rng(7);
  const Eigen::VectorXd q = test::random_configuration(model, rng);
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(model.nv), tau = test::random_vector(model.nv, rng);
  const StepJacobians J = step_jacobians(model, q, v, tau, 1e-3, GetParam(), false);
  EXPECT_LE(relative_error(J.vjp, J.ad), 1e-9);
}

TEST_P(StepVjp, ParameterGradientMatchesADThroughWithParams) {
  for (unsigned seed : {2u, 5u}) {
    const Model model = test::random_model(6, seed, seed == 5u, true);
    std::mt19937 rng(seed);
    const Eigen::VectorXd q = test::random_configuration(model, rng);
    const Eigen::VectorXd v = test::random_vector(model.nv, rng), tau = test::random_vector(model.nv, rng);
    const Eigen::VectorXd qn_bar = test::random_vector(model.nq, rng), vn_bar = test::random_vector(model.nv, rng);
    const double dt = 0.01;
    Data data(model);
    ModelTangent model_bar(model);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), v_bar = Eigen::VectorXd::Zero(model.nv),
                    tau_bar = Eigen::VectorXd::Zero(model.nv);
    step_vjp<double>(model, data, q, v, tau, dt, GetParam(), qn_bar, vn_bar, q_bar, v_bar, tau_bar, model_bar);
    const Eigen::VectorXd p_bar = params_gradient<double>(model, model_bar);

    const ModelTpl<ADScalar> ad_base = model.cast<ADScalar>();
    auto f = [&](const VectorX<ADScalar>& p) {
      const ModelTpl<ADScalar> m = with_params<ADScalar>(ad_base, p);
      DataTpl<ADScalar> d(m);
      VectorX<ADScalar> qn(model.nq), vn(model.nv);
      step<ADScalar>(m, d, q.cast<ADScalar>(), v.cast<ADScalar>(), tau.cast<ADScalar>(), ADScalar(dt), GetParam(),
                     qn, vn);
      VectorX<ADScalar> loss(1);
      loss[0] = qn.dot(qn_bar.cast<ADScalar>()) + vn.dot(vn_bar.cast<ADScalar>());
      return loss;
    };
    // Raw ambient entries, joint axes included: with_params normalises the axis, so its adjoint
    // is exact in every direction of the three numbers.
    const Eigen::VectorXd p_bar_ad = test::ad_jacobian(f, get_params<double>(model)).row(0).transpose();
    EXPECT_LE(relative_error(p_bar, p_bar_ad), 1e-9) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Integrators, StepVjp, ::testing::Values(Integrator::SemiImplicitEuler, Integrator::RK4),
                         [](const auto& info) {
                           return info.param == Integrator::RK4 ? std::string("RK4") : std::string("Euler");
                         });

}  // namespace
}  // namespace gradyn
