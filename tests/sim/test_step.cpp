// Integrators: energy conservation of a passive pendulum chain, momentum of a free body,
// the manifold operations, and numerical trouble reported through flags.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../support/random_model.hpp"
#include "gradyn/dynamics/energy.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

// An n-link pendulum swinging about x, links 0.5 m long along y (like shared/models/pendulums).
Model pendulum_chain(int n) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  for (int i = 0; i < n; ++i) {
    const std::string link = "link" + std::to_string(i);
    b.add_link({link, Inertia<double>(1.0 + 0.2 * i, Eigen::Vector3d(0, 0.5, 0),
                                      Eigen::Vector3d(0.005, 0.004, 0.002).asDiagonal().toDenseMatrix()), {}});
    JointSpec j;
    j.name = "joint" + std::to_string(i);
    j.type = JointType::Continuous;
    j.parent = i == 0 ? "world" : "link" + std::to_string(i - 1);
    j.child = link;
    j.origin.p = Eigen::Vector3d(0, i == 0 ? 0.0 : 0.5, 0);
    j.axis = Eigen::Vector3d::UnitX();
    b.add_joint(j);
  }
  return b.build();
}

double total_energy(const Model& m, Data& d, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  return kinetic_energy<double>(m, d, q, v) + potential_energy<double>(m, d, q);
}

// The shipped 7-link pendulum (shared/models/pendulums) with its damping removed. Energy is
// measured from the pivot. Returns the worst relative energy error over `seconds`.
double pendulum7_energy_drift(double first_angle, double dt, double seconds, double* max_speed) {
  Model model = load_urdf(GRADYN_MODELS "/pendulums/pendulum7.urdf");
  EXPECT_EQ(model.nv, 7);
  model.damping.setZero();
  Data data(model);
  Eigen::VectorXd q = Eigen::VectorXd::Constant(7, 0.2), v = Eigen::VectorXd::Zero(7);
  q[0] = first_angle;
  const Eigen::VectorXd tau = Eigen::VectorXd::Zero(7);
  const double e0 = total_energy(model, data, q, v);
  double worst = 0;
  *max_speed = 0;
  for (int t = 0; t < static_cast<int>(std::lround(seconds / dt)); ++t) {
    step<double>(model, data, q, v, tau, dt, Integrator::RK4, q, v);
    *max_speed = std::max(*max_speed, v.cwiseAbs().maxCoeff());
    worst = std::max(worst, std::abs(total_energy(model, data, q, v) - e0) / std::abs(e0));
  }
  EXPECT_EQ(data.status, kStatusOk);
  return worst;
}

TEST(Step, Rk4KeepsEnergyOfPassiveSevenLinkPendulum) {
  // Released 0.6 rad from hanging straight down; the light tip link whips at over 10 rad/s.
  double max_speed = 0;
  EXPECT_LE(pendulum7_energy_drift(-M_PI / 2 + 0.6, 1e-3, 10.0, &max_speed), 1e-6);
  EXPECT_GT(max_speed, 10.0);
}

TEST(Step, Rk4IsFourthOrderOnAChaoticPendulum) {
  // Released from near horizontal: chaotic, tip speeds above 10 rad/s. Halving dt must divide
  // the energy error by about 2^4.
  double max_speed = 0;
  const double coarse = pendulum7_energy_drift(-0.8, 2e-3, 3.0, &max_speed);
  const double fine = pendulum7_energy_drift(-0.8, 1e-3, 3.0, &max_speed);
  EXPECT_GT(coarse / fine, 12.0) << coarse << " vs " << fine;
  EXPECT_GT(max_speed, 10.0);
}

TEST(Step, SemiImplicitEulerEnergyErrorDoesNotDrift) {
  // A single pendulum: semi-implicit Euler is symplectic, so its energy error oscillates at O(dt)
  // and stays as small after 100 s as in the first second.
  const Model model = pendulum_chain(1);
  Data data(model);
  Eigen::VectorXd q = Eigen::VectorXd::Constant(1, -0.5), v = Eigen::VectorXd::Zero(1);
  const double e0 = total_energy(model, data, q, v);
  double first_second = 0, last_second = 0;
  for (int t = 0; t < 100000; ++t) {
    step<double>(model, data, q, v, Eigen::VectorXd::Zero(1), 1e-3, Integrator::SemiImplicitEuler, q, v);
    const double err = std::abs(total_energy(model, data, q, v) - e0) / std::abs(e0);
    if (t < 1000) first_second = std::max(first_second, err);
    if (t >= 99000) last_second = std::max(last_second, err);
  }
  EXPECT_LE(first_second, 1e-2);
  EXPECT_LE(last_second, 1.5 * first_second);
}

TEST(Step, FreeBodyInZeroGravityKeepsMomentum) {
  ModelBuilder b;
  b.add_link({"body", Inertia<double>(2.0, Eigen::Vector3d(0.1, -0.2, 0.05),
                                      (Eigen::Matrix3d() << 0.3, 0.02, 0.01, 0.02, 0.2, -0.03, 0.01, -0.03, 0.1)
                                          .finished()), {}});
  b.set_gravity(Eigen::Vector3d::Zero());
  const Model model = b.build({.floating_base = true});
  ASSERT_EQ(model.nq, 7);
  Data data(model);
  Eigen::VectorXd q = neutral_configuration<double>(model), v(6);
  v << 0.5, -0.3, 0.2, 2.0, -1.0, 3.0;  // tumbling
  const Vector6<double> h0 = spatial_momentum<double>(model, data, q, v);
  const double e0 = kinetic_energy<double>(model, data, q, v);
  // Momentum error after 2 s for a given integrator and step.
  auto momentum_error = [&](Integrator integrator, double dt) {
    Eigen::VectorXd qi = q, vi = v;
    for (int t = 0; t < static_cast<int>(std::lround(2.0 / dt)); ++t)
      step<double>(model, data, qi, vi, Eigen::VectorXd::Zero(6), dt, integrator, qi, vi);
    EXPECT_NEAR(qi.tail<4>().norm(), 1.0, 1e-12);
    if (integrator == Integrator::RK4 && dt <= 1e-3) EXPECT_NEAR(kinetic_energy<double>(model, data, qi, vi), e0, 1e-9 * e0);
    return (spatial_momentum<double>(model, data, qi, vi) - h0).norm() / h0.norm();
  };
  EXPECT_LE(momentum_error(Integrator::RK4, 1e-3), 1e-10);
  // RK4 stays fourth order on the manifold: halving dt divides the error by about 16.
  const double rk_coarse = momentum_error(Integrator::RK4, 2e-2), rk_fine = momentum_error(Integrator::RK4, 1e-2);
  EXPECT_GT(rk_coarse / rk_fine, 12.0) << rk_coarse << " " << rk_fine;
  // Semi-implicit Euler is first order: halving dt halves the error.
  const double eu_coarse = momentum_error(Integrator::SemiImplicitEuler, 2e-3);
  const double eu_fine = momentum_error(Integrator::SemiImplicitEuler, 1e-3);
  EXPECT_LE(eu_fine, 2e-2);
  EXPECT_NEAR(eu_coarse / eu_fine, 2.0, 0.3);
}

TEST(Integrate, DifferenceInvertsIntegrateOnEveryJointKind) {
  const Model model = test::random_model(14, 21, true);
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::VectorXd q = test::random_configuration(model, rng);
    const Eigen::VectorXd dv = test::random_vector(model.nv, rng, 0.8);
    Eigen::VectorXd q1(model.nq), d(model.nv);
    integrate<double>(model, q, dv, q1);
    difference<double>(model, q, q1, d);
    EXPECT_LE((d - dv).norm(), 1e-10) << "trial " << trial;
  }
}

TEST(Step, NonFiniteStateSetsFlagWithoutThrowing) {
  const Model model = pendulum_chain(2);
  Data data(model);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(2), v = Eigen::VectorXd::Zero(2);
  Eigen::VectorXd tau(2);
  tau << std::numeric_limits<double>::quiet_NaN(), 0.0;
  EXPECT_NO_THROW(step<double>(model, data, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v));
  EXPECT_TRUE(data.status & kStatusNonFinite);
}

// step_status: the flags of each step alone; data.status keeps what it held and gathers them.
TEST(Rollout, StepStatusMarksTheStepsThatRaisedFlags) {
  const Model model = pendulum_chain(2);
  Data data(model);
  data.status = kStatusDeepPenetration;  // from some earlier call
  const Eigen::VectorXd q0 = Eigen::VectorXd::Zero(2), v0 = Eigen::VectorXd::Zero(2);
  MatrixXr<double> taus = MatrixXr<double>::Zero(5, 2);
  taus(2, 1) = std::numeric_limits<double>::quiet_NaN();
  MatrixXr<double> qs, vs;
  std::vector<std::uint32_t> status(5, 99);
  rollout<double>(model, data, q0, v0, taus, 1e-3, Integrator::SemiImplicitEuler, qs, vs, status);
  EXPECT_EQ(status[0], kStatusOk);
  EXPECT_EQ(status[1], kStatusOk);
  EXPECT_EQ(status[2], kStatusNonFinite);
  std::uint32_t raised = kStatusOk;
  for (int t = 0; t < 5; ++t) raised |= status[static_cast<size_t>(t)];
  for (int t = 3; t < 5; ++t) EXPECT_TRUE(status[static_cast<size_t>(t)] & kStatusNonFinite) << "step " << t;  // from NaN
  EXPECT_EQ(data.status, kStatusDeepPenetration | raised);
  std::vector<std::uint32_t> short_status(4);
  EXPECT_THROW(rollout<double>(model, data, q0, v0, taus, 1e-3, Integrator::SemiImplicitEuler, qs, vs, short_status),
               ArgumentError);
}

TEST(Rollout, StoresInitialStateFirstAndMatchesRepeatedSteps) {
  const Model model = test::random_model(5, 3, true, true);
  Data data(model);
  std::mt19937 rng(1);
  const Eigen::VectorXd q0 = test::random_configuration(model, rng);
  const Eigen::VectorXd v0 = test::random_vector(model.nv, rng);
  MatrixXr<double> taus = MatrixXr<double>::Random(20, model.nv);
  MatrixXr<double> qs, vs;
  rollout<double>(model, data, q0, v0, taus, 1e-3, Integrator::RK4, qs, vs);
  ASSERT_EQ(qs.rows(), 21);
  ASSERT_EQ(vs.cols(), model.nv);
  EXPECT_EQ(Eigen::VectorXd(qs.row(0).transpose()), q0);
  Eigen::VectorXd q = q0, v = v0;
  for (int t = 0; t < 20; ++t)
    step<double>(model, data, q, v, Eigen::VectorXd(taus.row(t).transpose()), 1e-3, Integrator::RK4, q, v);
  EXPECT_LE((Eigen::VectorXd(qs.row(20).transpose()) - q).norm(), 1e-14);
}


// StepOptions are checked once, by check_step_options, for every step function: dt positive and
// finite, and semi-implicit Euler under velocity-level contact; the message says what was passed.
TEST(StepOptions, DtAndIntegratorAreCheckedForEveryStepFunction) {
  ContactSettings none, pgs, ipm, penalty;
  pgs.model = ContactModel::Pgs;
  ipm.model = ContactModel::Ipm;
  penalty.model = ContactModel::Penalty;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double dt : {0.0, -1e-3, inf, nan})
    for (const ContactSettings& c : {none, penalty, pgs})
      EXPECT_THROW(check_step_options(c, {dt, Integrator::SemiImplicitEuler}), ArgumentError) << dt;
  EXPECT_NO_THROW(check_step_options(none, {1e-3, Integrator::RK4}));
  EXPECT_NO_THROW(check_step_options(penalty, {1e-3, Integrator::RK4}));
  EXPECT_NO_THROW(check_step_options(pgs, {1e-3, Integrator::SemiImplicitEuler}));
  for (const ContactSettings& c : {pgs, ipm}) {
    try {
      check_step_options(c, {1e-3, Integrator::RK4});
      ADD_FAILURE() << "expected ArgumentError";
    } catch (const ArgumentError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("integrator 'rk4'"), std::string::npos) << what;
      EXPECT_NE(what.find(contact_model_name(c.model)), std::string::npos) << what;
      EXPECT_NE(what.find("'euler'"), std::string::npos) << what;
    }
  }
  try {
    check_step_options(none, {-0.5, Integrator::SemiImplicitEuler});
    ADD_FAILURE() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("dt: expected a positive finite time step [s], got -0.5"), std::string::npos)
        << e.what();
  }

  // step, rollout (of no steps too) and step_vjp run the same check.
  const Model m = test::random_model(3, 7u, false, true);
  Data d(m);
  const Eigen::VectorXd q = neutral_configuration<double>(m), z = Eigen::VectorXd::Zero(m.nv);
  Eigen::VectorXd qn(m.nq), vn(m.nv), qb = Eigen::VectorXd::Zero(m.nq), vb = Eigen::VectorXd::Zero(m.nv), tb = vb;
  MatrixXr<double> qs, vs, none_taus(0, m.nv);
  ModelTangent t(m);
  EXPECT_THROW(step<double>(m, d, q, z, z, 0.0, Integrator::SemiImplicitEuler, qn, vn), ArgumentError);
  EXPECT_THROW(rollout<double>(m, d, q, z, none_taus, nan, Integrator::RK4, qs, vs), ArgumentError);
  EXPECT_THROW(step_vjp<double>(m, d, q, z, z, -1.0, Integrator::RK4, qb, vb, qb, vb, tb, t), ArgumentError);
}

}  // namespace
}  // namespace gradyn
