#include "gradyn/spatial/spatial.hpp"

#include <gtest/gtest.h>

namespace gradyn {
namespace {

Pose<double> some_pose() {
  return Pose<double>(rpy_to_matrix<double>(Eigen::Vector3d(0.3, -1.1, 2.0)), Eigen::Vector3d(0.4, -0.7, 1.3));
}

TEST(Spatial, MotionTransformsMatchTheir6x6Matrix) {
  const Pose<double> X = some_pose();
  const Vector6<double> m = Vector6<double>::Random();
  EXPECT_LE((X.act_motion(m) - X.motion_matrix() * m).norm(), 1e-14);
  EXPECT_LE((X.act_inv_motion(X.act_motion(m)) - m).norm(), 1e-14);
  EXPECT_LE((X.inverse().act_motion(m) - X.act_inv_motion(m)).norm(), 1e-14);
}

TEST(Spatial, ForceTransformIsDualOfMotionTransform) {
  const Pose<double> X = some_pose();
  const Vector6<double> m = Vector6<double>::Random(), f = Vector6<double>::Random();
  // power is frame independent: (X f) . (X m) = f . m
  EXPECT_NEAR(X.act_force(f).dot(X.act_motion(m)), f.dot(m), 1e-13);
  EXPECT_LE((X.act_inv_force(X.act_force(f)) - f).norm(), 1e-14);
}

TEST(Spatial, InertiaTransformsConsistently) {
  const Pose<double> X = some_pose();
  Eigen::Matrix3d A = Eigen::Matrix3d::Random();
  const Inertia<double> I(2.5, Eigen::Vector3d(0.1, 0.2, -0.3), A * A.transpose() + Eigen::Matrix3d::Identity());
  const Vector6<double> v = Vector6<double>::Random();
  EXPECT_LE((I * v - I.matrix() * v).norm(), 1e-13);
  // I in A = X* I X^-1, both through the rigid inertia and the 6x6 block formula.
  const Matrix6<double> Xm = X.motion_matrix(), Xinv = X.inverse().motion_matrix();
  const Matrix6<double> expected = Xinv.transpose() * I.matrix() * Xinv;
  EXPECT_LE((I.transformed(X).matrix() - expected).norm(), 1e-12);
  EXPECT_LE((transform_inertia_to_parent<double>(X, I.matrix()) - expected).norm(), 1e-12);
  (void)Xm;
}

TEST(Spatial, OriginInertiaFromBodyIsTheTransformedInertiaAndExactlySymmetric) {
  const Pose<double> X = some_pose();
  Eigen::Matrix3d A = Eigen::Matrix3d::Random();
  const Inertia<double> I(2.5, Eigen::Vector3d(0.1, 0.2, -0.3), A * A.transpose() + Eigen::Matrix3d::Identity());
  const OriginInertia<double> Y = OriginInertia<double>::from_body(I, X);
  EXPECT_LE((Y.matrix() - I.transformed(X).matrix()).norm(), 1e-13);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(Y.Io(r, c), Y.Io(c, r));
  // the ten numbers add as the 6x6 matrices do
  OriginInertia<double> sum = Y;
  sum += OriginInertia<double>::from_body(I, Pose<double>::Identity());
  EXPECT_LE((sum.matrix() - Y.matrix() - I.matrix()).norm(), 1e-13);
}

TEST(Spatial, CrossProductsAreDual) {
  const Vector6<double> v = Vector6<double>::Random(), m = Vector6<double>::Random(), f = Vector6<double>::Random();
  // (v x* f) . m = -f . (v x m)
  EXPECT_NEAR(cross_force<double>(v, f).dot(m), -f.dot(cross_motion<double>(v, m)), 1e-13);
}

TEST(Spatial, InertiaSumKeepsMassAndCentreOfMass) {
  const Inertia<double> a(1.0, Eigen::Vector3d(1, 0, 0), Eigen::Matrix3d::Identity() * 0.1);
  const Inertia<double> b(3.0, Eigen::Vector3d(-1, 0, 0), Eigen::Matrix3d::Identity() * 0.2);
  const Inertia<double> s = a + b;
  EXPECT_DOUBLE_EQ(s.mass, 4.0);
  EXPECT_LE((s.com - Eigen::Vector3d(-0.5, 0, 0)).norm(), 1e-15);
  EXPECT_LE((s.matrix() - a.matrix() - b.matrix()).norm(), 1e-13);
}

TEST(Spatial, RpyMatchesComposedAxisRotations) {
  const Eigen::Vector3d rpy(0.3, -0.4, 1.2);
  const Eigen::Matrix3d expected = (Eigen::AngleAxisd(rpy.z(), Eigen::Vector3d::UnitZ()) *
                                    Eigen::AngleAxisd(rpy.y(), Eigen::Vector3d::UnitY()) *
                                    Eigen::AngleAxisd(rpy.x(), Eigen::Vector3d::UnitX()))
                                       .toRotationMatrix();
  EXPECT_LE((rpy_to_matrix<double>(rpy) - expected).norm(), 1e-15);
}

}  // namespace
}  // namespace gradyn
