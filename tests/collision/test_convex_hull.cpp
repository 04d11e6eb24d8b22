// Convex hulls (src/collision/convex_hull.cpp) and their narrowphase (narrowphase_hull.cpp):
// the hull's topology and mass properties, every pair against analytic answers or against the
// box primitive (a cube given as a hull), separated pairs, deep penetration, and the contacts'
// derivatives by forward-mode AD against central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "collision_test_util.hpp"
#include "gradyn/autodiff.hpp"
#include "gradyn/model/builder.hpp"

namespace gradyn {
namespace {

using namespace test;
using V3 = Vector3<double>;
constexpr double kPi = std::numbers::pi;
const V3 X = V3::UnitX(), Y = V3::UnitY(), Z = V3::UnitZ();

std::vector<V3> box_corners(const V3& half) {
  std::vector<V3> out;
  for (int k = 0; k < 8; ++k)
    out.emplace_back(k & 1 ? half.x() : -half.x(), k & 2 ? half.y() : -half.y(), k & 4 ? half.z() : -half.z());
  return out;
}

Geom hull_geom(const std::vector<V3>& points, const V3& scale = V3::Ones()) {
  Geom g;
  g.type = GeomType::ConvexHull;
  g.name = "hull";
  g.hull = make_convex_hull(points);
  g.size = scale;
  return g;
}

// Regular tetrahedron with its base (an equilateral triangle of circumradius r) on z = 0 and its
// apex at height h.
std::vector<V3> tetrahedron(double r, double h) {
  std::vector<V3> out;
  for (int k = 0; k < 3; ++k) out.emplace_back(r * std::cos(2 * kPi * k / 3), r * std::sin(2 * kPi * k / 3), 0);
  out.emplace_back(0, 0, h);
  return out;
}

TEST(ConvexHull, CubeHasSixQuadFacesTwelveEdgesAndBoxMassProperties) {
  std::vector<V3> points = box_corners(V3(0.3, 0.2, 0.1));
  points.push_back(V3(0.05, -0.02, 0.01));  // interior: dropped
  points.push_back(V3(0.3, 0.0, 0.0));      // on a face: not a vertex of the hull
  const auto hull = make_convex_hull(points);
  EXPECT_EQ(hull->vertices.size(), 8u);
  ASSERT_EQ(hull->faces.size(), 6u);
  EXPECT_EQ(hull->edges.size(), 12u);
  for (const auto& ef : hull->edge_faces) EXPECT_GE(ef[1], 0);
  for (const ConvexHull::Face& f : hull->faces) {
    EXPECT_EQ(f.count, 4);
    // counter-clockwise about the outward normal; every vertex on the face plane
    const V3& a = hull->vertices[hull->face_vertices[f.first]];
    const V3& b = hull->vertices[hull->face_vertices[f.first + 1]];
    const V3& c = hull->vertices[hull->face_vertices[f.first + 2]];
    EXPECT_GT((b - a).cross(c - b).dot(f.normal), 0);
    for (int k = 0; k < f.count; ++k) EXPECT_NEAR(f.normal.dot(hull->vertices[hull->face_vertices[f.first + k]]), f.offset, 1e-12);
    EXPECT_NEAR(f.normal.cwiseAbs().maxCoeff(), 1.0, 1e-12);
  }
  EXPECT_NEAR(hull->volume, 0.6 * 0.4 * 0.2, 1e-12);
  EXPECT_LT(hull->centroid.norm(), 1e-12);
  const double m = hull->volume;
  EXPECT_NEAR(hull->inertia(0, 0), m * (0.4 * 0.4 + 0.2 * 0.2) / 12, 1e-12);
  EXPECT_NEAR(hull->inertia(1, 1), m * (0.6 * 0.6 + 0.2 * 0.2) / 12, 1e-12);
  EXPECT_NEAR(hull->inertia(2, 2), m * (0.6 * 0.6 + 0.4 * 0.4) / 12, 1e-12);
  EXPECT_LT(std::abs(hull->inertia(0, 1)) + std::abs(hull->inertia(0, 2)) + std::abs(hull->inertia(1, 2)), 1e-12);
}

TEST(ConvexHull, TetrahedronVolumeAndCentroid) {
  const auto hull = make_convex_hull(tetrahedron(0.2, 0.3));
  EXPECT_EQ(hull->faces.size(), 4u);
  EXPECT_EQ(hull->edges.size(), 6u);
  const double base = 3 * std::sqrt(3.0) / 4 * 0.2 * 0.2;
  EXPECT_NEAR(hull->volume, base * 0.3 / 3, 1e-12);
  EXPECT_NEAR(hull->centroid.z(), 0.3 / 4, 1e-12);
}

TEST(ConvexHull, DegenerateInputsThrowWithQhullsReason) {
  EXPECT_THROW(make_convex_hull({V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0)}), ArgumentError);
  try {
    make_convex_hull({V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0), V3(1, 1, 0), V3(0.5, 0.5, 0)});  // all in a plane
    ADD_FAILURE() << "a flat point set has no hull";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("qhull"), std::string::npos) << e.what();
  }
}

TEST(ConvexHull, BuilderChecksTheHull) {
  ModelBuilder b;
  GeomSpec g;
  g.type = GeomType::ConvexHull;
  g.name = "blob";
  g.size = V3::Ones();
  EXPECT_THROW(b.add_link({"base", std::nullopt, {}, {g}}), ModelError);  // no hull
  g = convex_hull_geom("blob", box_corners(V3(0.1, 0.1, 0.1)));
  g.size = V3(1, 0, 1);
  try {
    b.add_link({"base", std::nullopt, {}, {g}});
    ADD_FAILURE() << "a zero scale must be refused";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("scale y"), std::string::npos) << e.what();
  }
}

// ---- against a plane ----------------------------------------------------------------------------

TEST(HullNarrowphase, CubeHullOnAPlaneMatchesTheBoxPrimitive) {
  const V3 half(0.3, 0.2, 0.1);
  const Geom plane = make_geom(GeomType::Plane), box = make_geom(GeomType::Box, half.x(), half.y(), half.z());
  const Geom cube = hull_geom(box_corners(half));
  for (const Pose<double>& B : {at(0.1, -0.2, 0.095), at(0.3, 0.1, 0.05, rot(V3(1, 2, 0.5), 0.4)),
                                at(0, 0, 0.1, rot(X, 0.3))}) {
    const auto want = collide_pair(plane, at(0, 0, 0, rot(Y, 0.05)), box, B);
    ASSERT_FALSE(want.empty());
    expect_same_contacts(collide_pair(plane, at(0, 0, 0, rot(Y, 0.05)), cube, B), want, 1e-12);
  }
  // The scale is the box's half-extents on a unit cube.
  expect_same_contacts(collide_pair(plane, at(0, 0, 0), hull_geom(box_corners(V3::Ones()), half), at(0, 0, 0.09)),
                       collide_pair(plane, at(0, 0, 0), box, at(0, 0, 0.09)), 1e-12);
}

TEST(HullNarrowphase, TetrahedronOnAPlaneTouchesWithItsBase) {
  const Geom tet = hull_geom(tetrahedron(0.2, 0.3));
  const auto c = collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), tet, at(1, 2, -0.01));
  ASSERT_EQ(c.size(), 3u);
  for (const Contact& k : c) {
    EXPECT_NEAR(k.depth, 0.01, 1e-12);
    EXPECT_NEAR(k.point.z(), -0.005, 1e-12);
    EXPECT_NEAR((k.point.head<2>() - Eigen::Vector2d(1, 2)).norm(), 0.2, 1e-12);
    EXPECT_TRUE(k.normal.isApprox(Z, 1e-12));
  }
  // Upside down: only the apex.
  const auto apex = collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), tet, at(0, 0, 0.29, rot(X, kPi)));
  ASSERT_EQ(apex.size(), 1u);
  EXPECT_NEAR(apex[0].depth, 0.01, 1e-12);
  // Lifted: nothing, unless within the margin.
  EXPECT_TRUE(collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), tet, at(0, 0, 0.01)).empty());
  EXPECT_EQ(collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), tet, at(0, 0, 0.01), 0.02).size(), 3u);
}

TEST(HullNarrowphase, ManyVerticesOnAPlaneKeepASpreadManifold) {
  // A 24-gon prism lying on its cap: at most kMaxPairContacts contacts, spread around the rim.
  std::vector<V3> prism;
  for (int k = 0; k < 24; ++k)
    for (double z : {0.0, 0.1}) prism.emplace_back(0.2 * std::cos(2 * kPi * k / 24), 0.2 * std::sin(2 * kPi * k / 24), z);
  const auto c = collide_pair(make_geom(GeomType::Plane), at(0, 0, 0), hull_geom(prism), at(0, 0, -0.001));
  ASSERT_EQ(static_cast<int>(c.size()), kMaxPairContacts);
  V3 mean = V3::Zero();
  for (const Contact& k : c) mean += k.point / c.size();
  EXPECT_LT(mean.head<2>().norm(), 0.05);  // around the centre, not bunched on one side
  double closest = 1;
  for (size_t i = 0; i < c.size(); ++i)
    for (size_t j = i + 1; j < c.size(); ++j) closest = std::min(closest, (c[i].point - c[j].point).norm());
  EXPECT_GT(closest, 0.1);  // 8 of 24 rim points: every third
}

// ---- against a sphere and a capsule --------------------------------------------------------------

TEST(HullNarrowphase, SphereAgainstCubeHullMatchesTheBoxPrimitive) {
  const Geom box = make_geom(GeomType::Box, 0.5, 0.4, 0.3), cube = hull_geom(box_corners(V3(0.5, 0.4, 0.3)));
  const Pose<double> B = at(0.1, 0.2, -0.1, rot(V3(1, 1, 0), 0.3));
  // face, edge and corner regions, the centre inside, and a miss
  for (const V3& c : {V3(0.1, 0.2, 0.3), V3(0.7, 0.7, 0.0), V3(0.6, 0.6, 0.35), V3(0.05, 0.1, -0.1), V3(2, 0, 0)}) {
    const auto want = collide_pair(make_geom(GeomType::Sphere, 0.2), at(c.x(), c.y(), c.z()), box, B);
    expect_same_contacts(collide_pair(make_geom(GeomType::Sphere, 0.2), at(c.x(), c.y(), c.z()), cube, B), want, 1e-12);
  }
}

TEST(HullNarrowphase, SphereOnATetrahedronEdgeAndVertex) {
  const Geom tet = hull_geom(tetrahedron(0.2, 0.3));
  // Above the apex: the contact is at the apex, normal straight up (from the hull to the sphere:
  // the sphere is a, so the normal points from the sphere to the hull, -z).
  auto c = collide_pair(make_geom(GeomType::Sphere, 0.1), at(0, 0, 0.39), tet, at(0, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].depth, 0.01, 1e-12);
  EXPECT_TRUE(c[0].normal.isApprox(-Z, 1e-12));
  // Beside a base edge, level with it: the closest point is the edge's midpoint.
  const V3 mid = (V3(0.2, 0, 0) + V3(0.2 * std::cos(2 * kPi / 3), 0.2 * std::sin(2 * kPi / 3), 0)) / 2;
  const V3 out = V3(mid.x(), mid.y(), 0).normalized();
  const V3 centre = mid + out * 0.06;
  c = collide_pair(make_geom(GeomType::Sphere, 0.1), at(centre.x(), centre.y(), -0.05), tet, at(0, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  const V3 to_edge = (mid - V3(centre.x(), centre.y(), -0.05));
  EXPECT_NEAR(c[0].depth, 0.1 - to_edge.norm(), 1e-12);
  EXPECT_TRUE(c[0].normal.isApprox(to_edge.normalized(), 1e-12));
}

TEST(HullNarrowphase, CapsuleLyingOnAHullFaceRestsOnBothEnds) {
  const Geom cube = hull_geom(box_corners(V3(1, 1, 1)));
  const auto c = collide_pair(make_geom(GeomType::Capsule, 0.2, 0.3), at(0.2, 0.1, 1.19, rot(Y, kPi / 2)), cube, at(0, 0, 0));
  const auto want =
      collide_pair(make_geom(GeomType::Capsule, 0.2, 0.3), at(0.2, 0.1, 1.19, rot(Y, kPi / 2)), make_geom(GeomType::Box, 1, 1, 1), at(0, 0, 0));
  ASSERT_EQ(c.size(), 2u);
  expect_same_contacts(c, want, 1e-9);
  for (const Contact& k : c) EXPECT_NEAR(k.depth, 0.01, 1e-12);
}

// ---- against a box and a hull --------------------------------------------------------------------

TEST(HullNarrowphase, BoxAgainstCubeHullMatchesBoxBox) {
  const V3 ha(1, 0.8, 0.6), hb(0.5, 0.4, 0.3);
  const Geom a = make_geom(GeomType::Box, ha.x(), ha.y(), ha.z()), b = make_geom(GeomType::Box, hb.x(), hb.y(), hb.z());
  const Geom hull_b = hull_geom(box_corners(hb));
  struct Pair {
    Pose<double> A, B;
    size_t count;
  };
  // a small box resting on a face (4 corners), tilted on a face (2 corners), a corner dug in
  // (the reference face is the big box's), an edge across an edge
  for (const Pair& p : {Pair{at(0, 0, 0), at(0.2, -0.1, 0.89), 4}, Pair{at(0, 0, 0), at(0.1, 0.1, 0.85, rot(X, 0.2)), 2},
                        Pair{at(0, 0, 0), at(0.2, 0.1, 1.12, rot(V3(1, 1, 0), 0.9)), 1},
                        Pair{at(0, 0, 0, rot(X, kPi / 4)), at(0.3, 0, (1.4 + 0.8) / std::sqrt(2.0) - 0.01, rot(Y, kPi / 4)), 1}}) {
    const auto want = collide_pair(a, p.A, b, p.B);
    ASSERT_EQ(want.size(), p.count);
    expect_same_contacts(collide_pair(a, p.A, hull_b, p.B), want, 1e-9);
    // hull against hull: the same (both cubes as hulls)
    expect_same_contacts(collide_pair(hull_geom(box_corners(ha)), p.A, hull_b, p.B), want, 1e-9);
  }
}

TEST(HullNarrowphase, TetrahedronOnACubeHullIsAFaceManifold) {
  const Geom cube = hull_geom(box_corners(V3(1, 1, 1))), tet = hull_geom(tetrahedron(0.2, 0.3));
  const auto c = collide_pair(cube, at(0, 0, 0), tet, at(0.1, 0.3, 0.995));
  ASSERT_EQ(c.size(), 3u);
  for (const Contact& k : c) {
    EXPECT_NEAR(k.depth, 0.005, 1e-12);
    EXPECT_TRUE(k.normal.isApprox(Z, 1e-12));  // from the cube (a) to the tetrahedron (b)
    EXPECT_NEAR(k.point.z(), 0.9975, 1e-12);
  }
  // Order of the pair: swapped, the normals flip.
  const auto d = collide_pair(tet, at(0.1, 0.3, 0.995), cube, at(0, 0, 0));
  ASSERT_EQ(d.size(), 3u);
  for (const Contact& k : d) EXPECT_TRUE(k.normal.isApprox(-Z, 1e-12));
}

TEST(HullNarrowphase, SeparatedPairsGiveNoContact) {
  const Geom tet = hull_geom(tetrahedron(0.2, 0.3)), cube = hull_geom(box_corners(V3(0.5, 0.5, 0.5)));
  EXPECT_TRUE(collide_pair(cube, at(0, 0, 0), tet, at(0, 0, 0.51)).empty());
  EXPECT_TRUE(collide_pair(cube, at(0, 0, 0), tet, at(0.75, 0, 0.2)).empty());  // beside, on a face axis
  // A vertical edge (x = sqrt 2 / 2) 1 cm from a horizontal one along x: only the edge axis separates.
  const double gap = 0.01;
  const Pose<double> A = at(0, 0, 0, rot(Z, kPi / 4)), B = at(std::sqrt(2.0) + gap, 0, 0, rot(Y, kPi / 4));
  EXPECT_TRUE(collide_pair(cube, A, cube, B).empty());
  const auto within = collide_pair(cube, A, cube, B, 2 * gap);  // within the margin: the gap, exactly
  ASSERT_EQ(within.size(), 1u);
  EXPECT_NEAR(within[0].depth, -gap, 1e-12);
  EXPECT_TRUE(within[0].normal.isApprox(X, 1e-12));
  EXPECT_TRUE(collide_pair(make_geom(GeomType::Sphere, 0.1), at(0, 0, 0.41), tet, at(0, 0, 0)).empty());
  EXPECT_TRUE(
      collide_pair(make_geom(GeomType::Capsule, 0.1, 0.2), at(0, 0, 0.72, rot(Y, kPi / 2)), cube, at(0, 0, 0.1)).empty());
}

TEST(HullNarrowphase, DeepPenetrationPushesOutAlongTheShallowestFace) {
  // A thin slab hull (2 x 2 x 0.2) with a small cube sunk deep into it near its +x side: the
  // normal is the slab's +z face only while that is the shallowest way out.
  std::vector<V3> slab = box_corners(V3(1, 1, 0.1));
  const Geom a = hull_geom(slab), b = hull_geom(box_corners(V3(0.05, 0.05, 0.05)));
  auto c = collide_pair(a, at(0, 0, 0), b, at(0.2, 0.1, 0.1));  // half sunk through the top
  ASSERT_EQ(c.size(), 4u);
  for (const Contact& k : c) {
    EXPECT_TRUE(k.normal.isApprox(Z, 1e-12));
    EXPECT_NEAR(k.depth, 0.05, 1e-12);
  }
  c = collide_pair(a, at(0, 0, 0), b, at(0.2, 0.1, 0.06));  // deeper: still out through the top, depth 0.09
  ASSERT_FALSE(c.empty());
  for (const Contact& k : c) {
    EXPECT_TRUE(k.normal.isApprox(Z, 1e-12));
    EXPECT_NEAR(k.depth, 0.09, 1e-12);
  }
  c = collide_pair(a, at(0, 0, 0), b, at(0.98, 0.1, 0.0));  // inside near the +x side: out through +x
  ASSERT_FALSE(c.empty());
  for (const Contact& k : c) {
    EXPECT_TRUE(k.normal.isApprox(X, 1e-12));
    EXPECT_NEAR(k.depth, 0.07, 1e-12);
  }
  // Sphere centre inside: the nearest face.
  c = collide_pair(make_geom(GeomType::Sphere, 0.05), at(0.3, -0.95, 0.02), a, at(0, 0, 0));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0].normal.isApprox(Y, 1e-12));  // from the sphere into the hull: towards +y
  EXPECT_NEAR(c[0].depth, 0.1, 1e-12);
}

TEST(HullNarrowphase, CylinderAgainstAHullSamplesLikeTheBox) {
  const Geom cyl = make_geom(GeomType::Cylinder, 0.3, 0.5);
  const auto want = collide_pair(make_geom(GeomType::Box, 0.2, 0.2, 0.2), at(0.45, 0, 0), cyl, at(0, 0, 0));
  const auto c = collide_pair(hull_geom(box_corners(V3(0.2, 0.2, 0.2))), at(0.45, 0, 0), cyl, at(0, 0, 0));
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.size(), want.size());
  for (const Contact& k : c) {
    EXPECT_NEAR(k.depth, 0.05, 1e-9);
    EXPECT_TRUE(k.normal.isApprox(-X, 1e-9));  // from the hull (a) into the cylinder (b)
  }
}

// ---- derivatives ---------------------------------------------------------------------------------

// The contacts' derivatives by forward-mode AD (poses seeded by world twists, and the scale)
// against central differences of the double routine.
void expect_derivatives_match(const Geom& a, const Pose<double>& A, const Geom& b, const Pose<double>& B,
                              const std::string& what) {
  const auto base = collide_pair(a, A, b, B);
  ASSERT_FALSE(base.empty()) << what;
  auto moved = [](const Pose<double>& P, const Eigen::Matrix<double, 6, 1>& xi) {
    return Pose<double>(axis_angle_to_matrix<double>(xi.head<3>().normalized(), xi.head<3>().norm()) * P.R,
                        P.p + xi.tail<3>() + (xi.head<3>().norm() > 0 ? V3(xi.head<3>().cross(P.p)) : V3::Zero()));
  };
  for (int dir = 0; dir < 12; ++dir) {
    // AD: d(oMg) = xi^ oMg for the seeded geom
    const int slot = 0;
    Vector3<ADScalar> dth, dp;
    for (int k = 0; k < 3; ++k) {
      dth[k] = ad_seed(0, dir % 6 == k ? slot : -1);
      dp[k] = ad_seed(0, dir % 6 == 3 + k ? slot : -1);
    }
    auto seeded = [&](const Pose<double>& P, bool seed) {
      const Pose<ADScalar> Q = P.cast<ADScalar>();
      if (!seed) return Q;
      return Pose<ADScalar>(Matrix3<ADScalar>(Q.R + skew<ADScalar>(dth) * Q.R), Vector3<ADScalar>(Q.p + dth.cross(Q.p) + dp));
    };
    ContactTpl<ADScalar> out[kMaxPairContacts];
    const GeomTpl<ADScalar> ga = a.cast<ADScalar>(), gb = b.cast<ADScalar>();
    const int n = collide_geoms<ADScalar>(ga, seeded(A, dir < 6), gb, seeded(B, dir >= 6), 0.0, out);
    ASSERT_EQ(n, static_cast<int>(base.size())) << what;
    const double h = 1e-6;
    Eigen::Matrix<double, 6, 1> xi = Eigen::Matrix<double, 6, 1>::Zero();
    xi[dir % 6] = h;
    const auto plus = dir < 6 ? collide_pair(a, moved(A, xi), b, B) : collide_pair(a, A, b, moved(B, xi));
    const auto minus = dir < 6 ? collide_pair(a, moved(A, -xi), b, B) : collide_pair(a, A, b, moved(B, -xi));
    ASSERT_EQ(plus.size(), base.size()) << what;
    ASSERT_EQ(minus.size(), base.size()) << what;
    for (int k = 0; k < n; ++k) {
      EXPECT_NEAR(out[k].depth.derivatives()[slot], (plus[k].depth - minus[k].depth) / (2 * h), 1e-6) << what << " dir " << dir;
      for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(out[k].point[i].derivatives()[slot], (plus[k].point[i] - minus[k].point[i]) / (2 * h), 1e-6)
            << what << " dir " << dir << " contact " << k;
        EXPECT_NEAR(out[k].normal[i].derivatives()[slot], (plus[k].normal[i] - minus[k].normal[i]) / (2 * h), 1e-6)
            << what << " dir " << dir;
      }
    }
  }
}

TEST(HullNarrowphase, ContactDerivativesMatchCentralDifferences) {
  const Geom tet = hull_geom(tetrahedron(0.2, 0.3)), cube = hull_geom(box_corners(V3(0.3, 0.25, 0.2)));
  const Geom box = make_geom(GeomType::Box, 0.3, 0.25, 0.2);
  expect_derivatives_match(make_geom(GeomType::Plane), at(0, 0, 0, rot(V3(1, 2, 0), 0.05)), tet,
                           at(0.1, 0.2, 0.02, rot(V3(1, -1, 3), 0.4)), "plane-hull");
  expect_derivatives_match(make_geom(GeomType::Sphere, 0.1), at(0.05, 0.02, 0.37), tet, at(0, 0, 0, rot(X, 0.05)),
                           "sphere-hull (vertex)");
  expect_derivatives_match(make_geom(GeomType::Sphere, 0.1), at(0.21, 0.01, 0.09), tet, at(0, 0, 0, rot(Z, 0.1)),
                           "sphere-hull (face or edge)");
  expect_derivatives_match(box, at(0, 0, 0, rot(V3(0.2, 0.1, 1), 0.1)), tet, at(0.05, -0.03, 0.19, rot(V3(1, 1, 1), 0.05)),
                           "box-hull (face)");
  expect_derivatives_match(cube, at(0, 0, 0, rot(X, kPi / 4)), cube,
                           at(0.1, 0.05, (0.45 + 0.5) / std::sqrt(2.0) - 0.01, rot(Y, kPi / 4) * rot(Z, 0.02)),
                           "hull-hull (edges)");
}

}  // namespace
}  // namespace gradyn
