// Adjoint of the sensors (sensors/sensors.hpp, sensors/step_sensors.hpp) against forward-mode AD and
// central differences: random trees with every joint kind, sites on moving and world frames, every
// kind of sensor with and without a reference frame, and a clamped one.
#include <gtest/gtest.h>

#include <random>

#include "gradyn/gradyn.hpp"
#include "../support/ad_jacobian.hpp"
#include "../support/random_model.hpp"

namespace gradyn {
namespace {

/// The model with sites on its bodies (and one on the world) and sensors of every kind reading them.
Model with_sensors(Model m, unsigned seed) {
  std::mt19937 rng(seed);
  const int first_site = static_cast<int>(m.frames.size());
  m.frames.push_back({"world_site", FrameKind::Site, -1, test::random_pose(rng)});
  for (int b = 0; b < m.nbodies(); ++b)
    m.frames.push_back({"site" + std::to_string(b), FrameKind::Site, b, test::random_pose(rng)});
  const int nsites = static_cast<int>(m.frames.size()) - first_site;
  std::uniform_int_distribution<int> pick(first_site + 1, first_site + nsites - 1), any(first_site, first_site + nsites - 1);
  int adr = 0;
  auto add = [&](SensorKind kind, int object, int reference = -1, double cutoff = 0) {
    Sensor s;
    s.name = std::string(sensor_kind_name(kind)) + std::to_string(m.sensors.size());
    s.kind = kind, s.object = object, s.reference = reference, s.adr = adr, s.cutoff = cutoff;
    adr += s.dim();
    m.sensors.push_back(s);
  };
  for (int b = 0; b < m.nbodies(); ++b)
    if (m.joint_nv(b) == 1) {
      add(SensorKind::JointPos, b);
      add(SensorKind::JointVel, b);
    }
  for (SensorKind kind : {SensorKind::FramePos, SensorKind::FrameQuat, SensorKind::FrameLinVel, SensorKind::FrameAngVel}) {
    add(kind, pick(rng));
    add(kind, pick(rng), any(rng));
    add(kind, first_site, pick(rng));  // a world site seen from a moving frame
  }
  for (int k = 0; k < 2; ++k) {
    add(SensorKind::Gyro, pick(rng));
    add(SensorKind::Accelerometer, pick(rng));
  }
  add(SensorKind::FramePos, pick(rng), -1, 1e-3);  // clamped: no gradient
  return m;
}

struct Inputs {
  Eigen::VectorXd q, v, a;
};

Inputs random_inputs(const Model& m, unsigned seed) {
  std::mt19937 rng(seed);
  return {test::random_configuration(m, rng), test::random_vector(m.nv, rng), test::random_vector(m.nv, rng)};
}

// readings as a function of x = [q; v; qacc]
template <class S>
VectorX<S> readings_of(const ModelTpl<S>& m, const VectorX<S>& x) {
  DataTpl<S> data(m);
  VectorX<S> r(m.nsensordata());
  const VectorX<S> none;
  sensor_readings<S>(m, data, x.head(m.nq), x.segment(m.nq, m.nv), x.tail(m.nv), none, r);
  return r;
}

class SensorsVjp : public ::testing::TestWithParam<std::tuple<int, unsigned, bool>> {};

TEST_P(SensorsVjp, MatchesForwardModeAndFiniteDifferences) {
  const auto [n, seed, floating] = GetParam();
  const Model m = with_sensors(test::random_model(n, seed, floating), seed);
  const Model ma = [&] { return m; }();
  const ModelTpl<ADScalar> mad = m.cast<ADScalar>();
  for (unsigned trial = 0; trial < 3; ++trial) {
    const Inputs in = random_inputs(m, 100 * seed + trial);
    Eigen::VectorXd x(m.nq + 2 * m.nv);
    x << in.q, in.v, in.a;
    const Eigen::MatrixXd J_ad = test::ad_jacobian([&](const VectorX<ADScalar>& xa) { return readings_of(mad, xa); }, x);
    const Eigen::MatrixXd J_fd = test::fd_jacobian([&](const Eigen::VectorXd& xd) { return readings_of(m, xd); }, x, 1e-6);
    std::mt19937 rng(seed + trial);
    const Eigen::VectorXd r_bar = test::random_vector(m.nsensordata(), rng);
    Data data(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(m.nq), v_bar = Eigen::VectorXd::Zero(m.nv),
                    a_bar = Eigen::VectorXd::Zero(m.nv), none, none_bar;
    sensor_readings_vjp<double>(m, data, in.q, in.v, in.a, none, r_bar, q_bar, v_bar, a_bar, none_bar);
    Eigen::VectorXd got(x.size());
    got << q_bar, v_bar, a_bar;
    const Eigen::VectorXd want_ad = J_ad.transpose() * r_bar, want_fd = J_fd.transpose() * r_bar;
    EXPECT_LT((got - want_ad).norm(), 1e-10 * (1 + want_ad.norm())) << "n " << n << " seed " << seed << "\n"
                                                                     << got.transpose() << "\n" << want_ad.transpose();
    EXPECT_LT((got - want_fd).norm(), 1e-6 * (1 + want_fd.norm())) << "n " << n << " seed " << seed;
    // the clamped sensor (the last) passes nothing: its column of the AD Jacobian is zero too
    EXPECT_EQ(J_ad.bottomRows(3).norm(), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(RandomTrees, SensorsVjp,
                         ::testing::Values(std::make_tuple(3, 1u, false), std::make_tuple(6, 2u, false),
                                           std::make_tuple(7, 3u, true), std::make_tuple(9, 4u, true),
                                           std::make_tuple(12, 5u, false)));

// Through a step: accelerometers read (v_next - v) / dt; the gradient w.r.t. q, v, tau and ctrl
// against forward mode through step<ADScalar> and finite differences.
TEST(StepSensorsVjp, AccelerometerThroughTheStep) {
  for (unsigned seed : {1u, 2u, 3u}) {
    const Model m = with_sensors(test::random_model(5, seed, seed == 2, /*with_passive=*/true), seed);
    const ModelTpl<ADScalar> mad = m.cast<ADScalar>();
    const double dt = 1e-3;
    std::mt19937 rng(seed);
    const Eigen::VectorXd q = test::random_configuration(m, rng), v = test::random_vector(m.nv, rng),
                          tau = test::random_vector(m.nv, rng);
    auto f = [&](const auto& model, const auto& x) {
      using S = typename std::decay_t<decltype(x)>::Scalar;
      DataTpl<S> data(model);
      VectorX<S> r(model.nsensordata());
      const VectorX<S> none;
      step_sensor_readings<S>(model, data, x.head(model.nq), x.segment(model.nq, model.nv), x.tail(model.nv), none, S(dt),
                              Integrator::SemiImplicitEuler, r);
      return r;
    };
    Eigen::VectorXd x(m.nq + 2 * m.nv);
    x << q, v, tau;
    const Eigen::MatrixXd J_ad = test::ad_jacobian([&](const VectorX<ADScalar>& xa) { return f(mad, xa); }, x);
    const Eigen::MatrixXd J_fd = test::fd_jacobian([&](const Eigen::VectorXd& xd) { return f(m, xd); }, x, 1e-6);
    const Eigen::VectorXd r_bar = test::random_vector(m.nsensordata(), rng);
    Data data(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(m.nq), v_bar = Eigen::VectorXd::Zero(m.nv),
                    tau_bar = Eigen::VectorXd::Zero(m.nv), none;
    step_sensor_readings_vjp<double>(m, data, q, v, tau, none, dt, Integrator::SemiImplicitEuler, r_bar, q_bar, v_bar,
                                     tau_bar, none);
    Eigen::VectorXd got(x.size());
    got << q_bar, v_bar, tau_bar;
    const Eigen::VectorXd want_ad = J_ad.transpose() * r_bar, want_fd = J_fd.transpose() * r_bar;
    EXPECT_LT((got - want_ad).norm(), 1e-8 * (1 + want_ad.norm())) << "seed " << seed << "\n"
                                                                    << got.transpose() << "\n" << want_ad.transpose();
    EXPECT_LT((got - want_fd).norm(), 1e-5 * (1 + want_fd.norm())) << "seed " << seed;
  }
}

}  // namespace
}  // namespace gradyn
