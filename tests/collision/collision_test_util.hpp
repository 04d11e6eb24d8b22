// Helpers for the collision tests: geoms, poses, and matching contact sets.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "../support/draws.hpp"
#include "gradyn/collision/collide.hpp"

namespace gradyn::test {

inline Geom make_geom(GeomType type, double s0 = 0, double s1 = 0, double s2 = 0) {
  Geom g;
  g.type = type;
  g.size = Vector3<double>(s0, s1, s2);
  g.name = geom_type_name(type);
  return g;
}

inline Pose<double> at(double x, double y, double z, const Matrix3<double>& R = Matrix3<double>::Identity()) {
  return Pose<double>(R, Vector3<double>(x, y, z));
}

inline Matrix3<double> rot(const Vector3<double>& axis, double angle) {
  return axis_angle_to_matrix<double>(axis.normalized(), angle);
}

inline Pose<double> random_pose(std::mt19937& rng, double spread) {
  std::uniform_real_distribution<double> u(-1, 1);
  const Vector3<double> axis = draw3([&] { return u(rng); });
  const Vector3<double> p = draw3([&] { return u(rng); }) * spread;  // (drawn before the angle, as recorded)
  return Pose<double>(rot(axis, 3.0 * u(rng)), p);
}

inline std::vector<Contact> collide_pair(const Geom& a, const Pose<double>& A, const Geom& b, const Pose<double>& B,
                                         double margin = 0) {
  Contact out[kMaxPairContacts];
  const int n = collide_geoms(a, A, b, B, margin, out, 0, 1);
  return std::vector<Contact>(out, out + n);
}

/// Every contact of `x` has a twin in `y` (same point, normal and depth) and vice versa.
inline void expect_same_contacts(const std::vector<Contact>& x, const std::vector<Contact>& y, double tol = 1e-9) {
  ASSERT_EQ(x.size(), y.size());
  auto twin = [&](const Contact& c, const std::vector<Contact>& set) {
    for (const Contact& d : set)
      if ((c.point - d.point).norm() < tol && (c.normal - d.normal).norm() < tol && std::abs(c.depth - d.depth) < tol)
        return true;
    return false;
  };
  for (const Contact& c : x) EXPECT_TRUE(twin(c, y)) << "point " << c.point.transpose() << " depth " << c.depth;
  for (const Contact& c : y) EXPECT_TRUE(twin(c, x)) << "point " << c.point.transpose() << " depth " << c.depth;
}

}  // namespace gradyn::test
