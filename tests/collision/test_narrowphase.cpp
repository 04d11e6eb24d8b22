// Pair routines: analytic cases for every pair type (depth, normal, point), swap symmetry,
// invariance under a rigid motion of both geoms, the margin, and forward-mode AD derivatives of
// point/normal/depth against central differences.
#include <cmath>
#include <numbers>

#include "collision_test_util.hpp"
#include "gradyn/autodiff.hpp"

namespace gradyn::test {
namespace {

using V3 = Vector3<double>;
const V3 X = V3::UnitX(), Y = V3::UnitY(), Z = V3::UnitZ();
constexpr double kPi = std::numbers::pi;

void expect_contact(const Contact& c, const V3& point, const V3& normal, double depth, double tol = 1e-9) {
  EXPECT_NEAR(c.depth, depth, tol);
  EXPECT_LT((c.normal - normal).norm(), tol) << c.normal.transpose() << " vs " << normal.transpose();
  EXPECT_LT((c.point - point).norm(), tol) << c.point.transpose() << " vs " << point.transpose();
  // The frame is orthonormal, right-handed, its first column the normal.
  EXPECT_LT((c.frame.transpose() * c.frame - Matrix3<double>::Identity()).norm(), 1e-12);
  EXPECT_NEAR(c.frame.determinant(), 1.0, 1e-12);
  EXPECT_LT((c.frame.col(0) - c.normal).norm(), 1e-12);
}

// ---- analytic cases -------------------------------------------------------------------------

TEST(Narrowphase, SphereSphere) {
  const auto c = collide_pair(make_geom(GeomType::Sphere, 0.5), at(0, 0, 0), make_geom(GeomType::Sphere, 0.3), at(0.7, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], V3(0.45, 0, 0), X, 0.1);
  EXPECT_TRUE(collide_pair(make_geom(GeomType::Sphere, 0.5), at(0, 0, 0), make_geom(GeomType::Sphere, 0.3), at(0.81, 0, 0)).empty());
}

TEST(Narrowphase, PlaneSphere) {
  // A tilted plane: rotate the whole case about x by 30 degrees.
  const Matrix3<double> R = rot(X, kPi / 6);
  const auto c = collide_pair(make_geom(GeomType::Plane), Pose<double>(R, V3::Zero()), make_geom(GeomType::Sphere, 0.5),
                              Pose<double>(Matrix3<double>::Identity(), R * V3(1, 2, 0.4)));
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], R * V3(1, 2, -0.05), R * Z, 0.1);
}

TEST(Narrowphase, PlaneCapsuleLyingFlatTouchesAtBothEnds) {
  const auto c = collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), make_geom(GeomType::Capsule, 0.1, 0.5),
                              at(0, 0, 0.08, rot(Y, kPi / 2)));
  ASSERT_EQ(c.size(), 2u);
  expect_contact(c[0], V3(-0.5, 0, -0.01), Z, 0.02);
  expect_contact(c[1], V3(0.5, 0, -0.01), Z, 0.02);
}

TEST(Narrowphase, PlaneBoxFlatGivesFourCornersAndTiltedOne) {
  auto c = collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), make_geom(GeomType::Box, 0.5, 0.4, 0.3), at(1, 0, 0.25));
  ASSERT_EQ(c.size(), 4u);
  for (const Contact& k : c) {
    EXPECT_NEAR(k.depth, 0.05, 1e-12);
    EXPECT_NEAR(k.point.z(), -0.025, 1e-12);
    EXPECT_NEAR(std::abs(k.point.x() - 1), 0.5, 1e-12);
    EXPECT_NEAR(std::abs(k.point.y()), 0.4, 1e-12);
  }
  // A cube balanced on a corner (body diagonal vertical): one corner, sqrt(3)/2 below the centre.
  const Matrix3<double> R = Eigen::Quaterniond::FromTwoVectors(V3(1, 1, 1), -Z).toRotationMatrix();
  c = collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), make_geom(GeomType::Box, 0.5, 0.5, 0.5),
                   at(0, 0, std::sqrt(3.0) / 2 - 0.01, R));
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], V3(0, 0, -0.005), Z, 0.01, 1e-12);
}

TEST(Narrowphase, PlaneCylinderUprightAndOnItsSide) {
  auto c = collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), make_geom(GeomType::Cylinder, 0.3, 0.4), at(0, 0, 0.39));
  ASSERT_EQ(c.size(), 3u);  // three rim points of the lower cap; the upper cap is far
  V3 centroid = V3::Zero();
  for (const Contact& k : c) {
    EXPECT_NEAR(k.depth, 0.01, 1e-12);
    EXPECT_NEAR(std::hypot(k.point.x(), k.point.y()), 0.3, 1e-12);
    centroid += k.point / 3;
  }
  EXPECT_LT(centroid.head<2>().norm(), 1e-12);  // the support triangle is centred under the cylinder
  c = collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), make_geom(GeomType::Cylinder, 0.3, 0.4),
                   at(0, 0, 0.29, rot(Y, kPi / 2)));
  ASSERT_EQ(c.size(), 2u);  // the lowest line, at both caps
  for (const Contact& k : c) {
    EXPECT_NEAR(k.depth, 0.01, 1e-12);
    EXPECT_NEAR(std::abs(k.point.x()), 0.4, 1e-12);
  }
}

TEST(Narrowphase, SphereCapsule) {
  const auto c = collide_pair(make_geom(GeomType::Sphere, 0.3), at(0.45, 0, 0.3), make_geom(GeomType::Capsule, 0.2, 0.5),
                              at(0, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], V3(0.175, 0, 0.3), -X, 0.05);
  // Beyond the end of the segment: the end cap.
  const auto d = collide_pair(make_geom(GeomType::Sphere, 0.3), at(0, 0, 0.95), make_geom(GeomType::Capsule, 0.2, 0.5),
                              at(0, 0, 0));
  ASSERT_EQ(d.size(), 1u);
  expect_contact(d[0], V3(0, 0, 0.675), -Z, 0.05);
}

TEST(Narrowphase, CapsuleCapsuleCrossedAndParallel) {
  auto c = collide_pair(make_geom(GeomType::Capsule, 0.2, 1.0), at(0, 0, 0, rot(Y, kPi / 2)),
                        make_geom(GeomType::Capsule, 0.2, 1.0), at(0.3, 0, 0.35, rot(X, kPi / 2)));
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], V3(0.3, 0, 0.175), Z, 0.05);
  // Parallel, overlapping over x in [0.2, 1]: two contacts at the ends of the overlap.
  c = collide_pair(make_geom(GeomType::Capsule, 0.2, 1.0), at(0, 0, 0, rot(Y, kPi / 2)),
                   make_geom(GeomType::Capsule, 0.2, 0.4), at(0.6, 0, 0.35, rot(Y, kPi / 2)));
  ASSERT_EQ(c.size(), 2u);
  expect_contact(c[0], V3(0.2, 0, 0.175), Z, 0.05);
  expect_contact(c[1], V3(1.0, 0, 0.175), Z, 0.05);
}

TEST(Narrowphase, SphereBoxFaceEdgeAndInside) {
  const Geom box = make_geom(GeomType::Box, 1, 1, 1);
  auto c = collide_pair(make_geom(GeomType::Sphere, 0.5), at(0.3, 0.2, 1.4), box, at(0, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], V3(0.3, 0.2, 0.95), -Z, 0.1);
  c = collide_pair(make_geom(GeomType::Sphere, 0.5), at(1.3, 1.3, 0), box, at(0, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  const double dist = 0.3 * std::sqrt(2.0);
  const V3 n = V3(1, 1, 0).normalized();
  EXPECT_NEAR(c[0].depth, 0.5 - dist, 1e-12);
  EXPECT_LT((c[0].normal + n).norm(), 1e-12);
  EXPECT_LT((c[0].point - (V3(1, 1, 0) + n * (dist - 0.5) / 2)).norm(), 1e-12);  // midway: corner edge and sphere surface
  c = collide_pair(make_geom(GeomType::Sphere, 0.1), at(0.1, 0, 0.8), box, at(0, 0, 0));  // centre inside
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], V3(0.1, 0, 0.85), -Z, 0.3);
}

TEST(Narrowphase, CapsuleBoxLyingOnAFaceAndAcrossAnEdge) {
  const Geom box = make_geom(GeomType::Box, 1, 1, 1);
  auto c = collide_pair(make_geom(GeomType::Capsule, 0.2, 0.3), at(0.2, 0.1, 1.19, rot(Y, kPi / 2)), box, at(0, 0, 0));
  ASSERT_EQ(c.size(), 2u);
  expect_contact(c[0], V3(-0.1, 0.1, 0.995), -Z, 0.01);
  expect_contact(c[1], V3(0.5, 0.1, 0.995), -Z, 0.01);
  // Across the edge x = z = 1, segment perpendicular to the edge's diagonal: the deepest point is
  // the segment's middle, 0.15 sqrt(2) from the edge.
  c = collide_pair(make_geom(GeomType::Capsule, 0.25, 0.5), at(1.15, 0.3, 1.15, rot(Y, -kPi / 4)), box, at(0, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  const V3 n = V3(1, 0, 1).normalized();
  const double gap = 0.15 * std::sqrt(2.0);
  expect_contact(c[0], V3(1, 0.3, 1) + n * (gap - 0.25) / 2, -n, 0.25 - gap, 1e-7);
}

TEST(Narrowphase, BoxBoxFaceStackAndEdgeEdge) {
  auto c = collide_pair(make_geom(GeomType::Box, 1, 1, 1), at(0, 0, 0), make_geom(GeomType::Box, 0.5, 0.5, 0.5),
                        at(0.2, 0.1, 1.45, rot(Z, 0.3)));
  ASSERT_EQ(c.size(), 4u);
  for (const Contact& k : c) {
    EXPECT_NEAR(k.depth, 0.05, 1e-12);
    EXPECT_LT((k.normal - Z).norm(), 1e-12);
    EXPECT_NEAR(k.point.z(), 0.975, 1e-12);
  }
  // Overhanging: the top box sticks out over the edge x = 1; the clipped manifold stays on A's top.
  c = collide_pair(make_geom(GeomType::Box, 1, 1, 1), at(0, 0, 0), make_geom(GeomType::Box, 0.5, 0.5, 0.5),
                   at(0.8, 0, 1.45));
  ASSERT_EQ(c.size(), 4u);
  for (const Contact& k : c) EXPECT_LE(k.point.x(), 1.0 + 1e-12);
  // Edge on edge: A's top edge along x (A turned 45 degrees about x), B's bottom edge along y.
  const double s2 = std::sqrt(2.0);
  c = collide_pair(make_geom(GeomType::Box, 1, 1, 1), at(0, 0, 0, rot(X, kPi / 4)), make_geom(GeomType::Box, 1, 1, 1),
                   at(0, 0, 2 * s2 - 0.1, rot(Y, kPi / 4)));
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], V3(0, 0, s2 - 0.05), Z, 0.1, 1e-9);
}

TEST(Narrowphase, SphereCylinderSideAndCap) {
  const Geom cyl = make_geom(GeomType::Cylinder, 0.3, 0.5);
  auto c = collide_pair(make_geom(GeomType::Sphere, 0.2), at(0.45, 0, 0.1), cyl, at(0, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], V3(0.275, 0, 0.1), -X, 0.05);
  c = collide_pair(make_geom(GeomType::Sphere, 0.2), at(0.1, 0, 0.65), cyl, at(0, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  expect_contact(c[0], V3(0.1, 0, 0.475), -Z, 0.05);
}

TEST(Narrowphase, CapsuleCylinderLyingOnTheCap) {
  const auto c = collide_pair(make_geom(GeomType::Capsule, 0.1, 0.2), at(0, 0.05, 0.58, rot(Y, kPi / 2)),
                              make_geom(GeomType::Cylinder, 0.3, 0.5), at(0, 0, 0));
  ASSERT_EQ(c.size(), 2u);
  expect_contact(c[0], V3(-0.2, 0.05, 0.49), -Z, 0.02);
  expect_contact(c[1], V3(0.2, 0.05, 0.49), -Z, 0.02);
}

TEST(Narrowphase, SampledCylinderPairsStandingOnEachOther) {
  // A cylinder standing on a box, and on another cylinder: the 4 deepest samples, all on the cap.
  auto c = collide_pair(make_geom(GeomType::Box, 1, 1, 1), at(0, 0, 0), make_geom(GeomType::Cylinder, 0.3, 0.5),
                        at(0.1, 0.2, 1.48));
  ASSERT_EQ(c.size(), 4u);
  for (const Contact& k : c) {
    EXPECT_NEAR(k.depth, 0.02, 1e-12);
    EXPECT_LT((k.normal - Z).norm(), 1e-12);
    EXPECT_NEAR(k.point.z(), 0.99, 1e-12);
  }
  c = collide_pair(make_geom(GeomType::Cylinder, 0.4, 0.5), at(0, 0, 0), make_geom(GeomType::Cylinder, 0.3, 0.5),
                   at(0, 0, 0.98));
  ASSERT_EQ(c.size(), 4u);
  for (const Contact& k : c) {
    EXPECT_NEAR(k.depth, 0.02, 1e-12);
    EXPECT_LT((k.normal - Z).norm(), 1e-12);
  }
  // A box corner poking into a cylinder's side.
  const Matrix3<double> R = Eigen::Quaterniond::FromTwoVectors(V3(1, 1, 1), -X).toRotationMatrix();
  c = collide_pair(make_geom(GeomType::Box, 0.2, 0.2, 0.2), at(0.3 + 0.2 * std::sqrt(3.0) - 0.03, 0, 0, R),
                   make_geom(GeomType::Cylinder, 0.3, 0.5), at(0, 0, 0));
  ASSERT_GE(c.size(), 1u);
  EXPECT_NEAR(c[0].depth, 0.03, 1e-9);
  EXPECT_LT((c[0].normal + X).norm(), 1e-9);
}

TEST(Narrowphase, PlanePlaneNeverCollides) {
  EXPECT_TRUE(collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), make_geom(GeomType::Plane), at(0, 0, 0.1, rot(X, 1))).empty());
}

TEST(Narrowphase, MarginReportsNearContactsWithNegativeDepth) {
  const Geom a = make_geom(GeomType::Sphere, 0.5), b = make_geom(GeomType::Box, 0.5, 0.5, 0.5);
  EXPECT_TRUE(collide_pair(a, at(0, 0, 0), b, at(1.05, 0, 0)).empty());
  const auto c = collide_pair(a, at(0, 0, 0), b, at(1.05, 0, 0), 0.1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].depth, -0.05, 1e-12);
}

// ---- symmetry and invariance -------------------------------------------------------------------

struct PairCase {
  Geom a, b;
  Pose<double> A, B;
};

// One overlapping configuration per pair type, away from ties in the discrete choices.
std::vector<PairCase> overlapping_cases() {
  using T = GeomType;
  const Geom plane = make_geom(T::Plane), sphere = make_geom(T::Sphere, 0.3), capsule = make_geom(T::Capsule, 0.2, 0.4),
             box = make_geom(T::Box, 0.4, 0.3, 0.25), cyl = make_geom(T::Cylinder, 0.25, 0.35);
  const Matrix3<double> tilt = rot(V3(1, 2, 3), 0.4);
  return {
      {plane, sphere, at(0, 0, 0), at(0.1, 0.2, 0.25)},
      {plane, capsule, at(0, 0, 0), at(0, 0, 0.3, tilt)},
      {plane, box, at(0, 0, 0), at(0, 0, 0.3, tilt)},
      {plane, cyl, at(0, 0, 0), at(0, 0, 0.3, tilt)},
      {sphere, sphere, at(0, 0, 0), at(0.3, 0.2, 0.1)},
      {sphere, capsule, at(0.3, 0.1, 0.2), at(0, 0, 0, tilt)},
      {sphere, box, at(0.3, 0.5, 0.1), at(0, 0, 0, tilt)},
      {sphere, cyl, at(0.4, 0.1, 0.2), at(0, 0, 0, tilt)},
      {capsule, capsule, at(0, 0, 0, rot(X, 0.3)), at(0.2, 0.3, 0.1, tilt)},
      {capsule, box, at(0.3, 0.4, 0.3, rot(X, 1.0)), at(0, 0, 0, tilt)},
      {capsule, cyl, at(0.4, 0.05, 0.02, rot(X, kPi / 2)), at(0, 0, 0, tilt)},  // across the side
      {box, box, at(0, 0, 0, rot(Z, 0.2)), at(0.2, 0.1, 0.5, tilt)},
      {box, cyl, at(0, 0, 0, rot(Z, 0.2)), at(0.1, 0.2, 0.55, tilt)},
      {cyl, cyl, at(0, 0, 0), at(0.1, 0.2, 0.6, tilt)},
  };
}

TEST(Narrowphase, EveryPairTypeIsCoveredAndOverlaps) {
  for (const PairCase& p : overlapping_cases()) {
    const auto c = collide_pair(p.a, p.A, p.b, p.B);
    EXPECT_FALSE(c.empty()) << p.a.name << "-" << p.b.name;
    for (const Contact& k : c) {
      EXPECT_GT(k.depth, 0) << p.a.name << "-" << p.b.name;
      EXPECT_NEAR(k.normal.norm(), 1.0, 1e-12);
    }
  }
}

TEST(Narrowphase, SwappingTheGeomsFlipsTheNormal) {
  for (const PairCase& p : overlapping_cases()) {
    const auto ab = collide_pair(p.a, p.A, p.b, p.B);
    auto ba = collide_pair(p.b, p.B, p.a, p.A);
    for (Contact& c : ba) c.normal = -c.normal;
    SCOPED_TRACE(p.a.name + "-" + p.b.name);
    expect_same_contacts(ab, ba, 1e-12);
  }
}

TEST(Narrowphase, RigidMotionOfBothGeomsMovesTheContacts) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    const Pose<double> T = random_pose(rng, 3.0);
    for (const PairCase& p : overlapping_cases()) {
      auto moved = collide_pair(p.a, T * p.A, p.b, T * p.B);
      auto here = collide_pair(p.a, p.A, p.b, p.B);
      for (Contact& c : here) {
        c.point = T.act_point(c.point);
        c.normal = T.R * c.normal;
      }
      SCOPED_TRACE(p.a.name + "-" + p.b.name);
      expect_same_contacts(here, moved, 1e-8);
    }
  }
}

// ---- forward-mode AD against central differences ----------------------------------------------

// d(depth, point, normal)/d(translation of B, first size of each geom) by ADScalar and by central
// differences, on the overlapping configurations (smooth there: no branch switches nearby).
TEST(Narrowphase, ForwardModeDerivativesMatchCentralDifferences) {
  using AD = ADScalar;
  for (const PairCase& p : overlapping_cases()) {
    SCOPED_TRACE(p.a.name + "-" + p.b.name);
    GeomTpl<AD> a = p.a.cast<AD>(), b = p.b.cast<AD>();
    Pose<AD> A = p.A.cast<AD>(), B = p.B.cast<AD>();
    for (int k = 0; k < 3; ++k) B.p[k] = ad_seed(p.B.p[k], k);
    a.size[0] = ad_seed(p.a.size[0], 3);
    b.size[0] = ad_seed(p.b.size[0], 4);
    ContactTpl<AD> out[kMaxPairContacts];
    const int n = collide_geoms(a, A, b, B, 0.0, out);
    const auto base = collide_pair(p.a, p.A, p.b, p.B);
    ASSERT_EQ(n, static_cast<int>(base.size()));
    const double h = 1e-6;
    for (int dir = 0; dir < 5; ++dir) {
      if (dir == 3 && p.a.type == GeomType::Plane) continue;  // a plane has no size
      auto perturbed = [&](double eps) {
        Geom ga = p.a, gb = p.b;
        Pose<double> PB = p.B;
        if (dir < 3) PB.p[dir] += eps;
        if (dir == 3) ga.size[0] += eps;
        if (dir == 4) gb.size[0] += eps;
        return collide_pair(ga, p.A, gb, PB);
      };
      const auto plus = perturbed(h), minus = perturbed(-h);
      ASSERT_EQ(plus.size(), base.size());
      ASSERT_EQ(minus.size(), base.size());
      for (int c = 0; c < n; ++c) {
        // The same contact in the perturbed sets: the one nearest in point.
        auto nearest = [&](const std::vector<Contact>& set) {
          int best = 0;
          for (int j = 1; j < static_cast<int>(set.size()); ++j)
            if ((set[j].point - base[c].point).norm() < (set[best].point - base[c].point).norm()) best = j;
          return set[best];
        };
        const Contact cp = nearest(plus), cm = nearest(minus);
        const double tol = 1e-6;
        EXPECT_NEAR(out[c].depth.derivatives()[dir], (cp.depth - cm.depth) / (2 * h), tol) << "depth, dir " << dir;
        for (int i = 0; i < 3; ++i) {
          EXPECT_NEAR(out[c].point[i].derivatives()[dir], (cp.point[i] - cm.point[i]) / (2 * h), tol)
              << "point " << i << ", dir " << dir;
          EXPECT_NEAR(out[c].normal[i].derivatives()[dir], (cp.normal[i] - cm.normal[i]) / (2 * h), tol)
              << "normal " << i << ", dir " << dir;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gradyn::test
