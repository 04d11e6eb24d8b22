// Jacobians against the velocities forward kinematics computes, and energies against M.
#include <gtest/gtest.h>

#include "../support/random_model.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/energy.hpp"
#include "gradyn/dynamics/jacobian.hpp"

namespace gradyn {
namespace {

TEST(Jacobian, FrameJacobianTimesVelocityIsFrameVelocity) {
  Model model = test::random_model(9, 31, true);
  Data data(model);
  std::mt19937 rng(2);
  const Eigen::VectorXd q = test::random_configuration(model, rng);
  const Eigen::VectorXd v = test::random_vector(model.nv, rng);
  forward_kinematics<double>(model, data, q, v);
  update_frames<double>(model, data);
  const std::vector<Vector6<double>> body_v = data.v;
  const std::vector<Pose<double>> oMf = data.oMf;
  for (int f = 0; f < static_cast<int>(model.frames.size()); ++f) {
    const auto& fr = model.frames[f];
    if (fr.body < 0) continue;
    const Vector6<double> v_local = fr.placement.act_inv_motion(body_v[fr.body]);
    Eigen::MatrixXd J;
    frame_jacobian<double>(model, data, q, f, ReferenceFrame::Local, J);
    EXPECT_LE((J * v - v_local).norm(), 1e-12 * (1 + v_local.norm())) << model.frames[f].name;
    frame_jacobian<double>(model, data, q, f, ReferenceFrame::LocalWorldAligned, J);
    Vector6<double> v_lwa;
    v_lwa << oMf[f].R * v_local.head<3>(), oMf[f].R * v_local.tail<3>();
    EXPECT_LE((J * v - v_lwa).norm(), 1e-12 * (1 + v_lwa.norm()));
    frame_jacobian<double>(model, data, q, f, ReferenceFrame::World, J);
    EXPECT_LE((J * v - oMf[f].act_motion(v_local)).norm(), 1e-12 * (1 + v_local.norm()));
  }
}

TEST(Jacobian, PointJacobianMatchesFiniteDifferenceOfPosition) {
  Model model = test::random_model(6, 8);
  Data data(model);
  std::mt19937 rng(3);
  const Eigen::VectorXd q = test::random_configuration(model, rng);
  const Eigen::VectorXd v = test::random_vector(model.nv, rng);
  const int body = model.nbodies() - 1;
  const Eigen::Vector3d point(0.1, -0.2, 0.3);
  Eigen::MatrixXd J;
  point_jacobian<double>(model, data, q, body, point, J);
  const double h = 1e-6;
  Eigen::VectorXd qp(model.nq), qm(model.nq);
  integrate<double>(model, q, h * v, qp);
  integrate<double>(model, q, -h * v, qm);
  forward_kinematics<double>(model, data, qp);
  const Eigen::Vector3d xp = data.oMi[body].act_point(point);
  forward_kinematics<double>(model, data, qm);
  const Eigen::Vector3d xm = data.oMi[body].act_point(point);
  EXPECT_LE((J * v - (xp - xm) / (2 * h)).norm(), 1e-7);
}

TEST(Energy, KineticEnergyIsHalfVMV) {
  Model model = test::random_model(10, 17, true, true);
  Data data(model);
  std::mt19937 rng(4);
  const Eigen::VectorXd q = test::random_configuration(model, rng);
  const Eigen::VectorXd v = test::random_vector(model.nv, rng);
  const double T = kinetic_energy<double>(model, data, q, v);
  const Eigen::MatrixXd M = crba<double>(model, data, q);
  EXPECT_NEAR(T, 0.5 * v.dot(M * v), 1e-10 * (1 + T));
}

}  // namespace
}  // namespace gradyn
