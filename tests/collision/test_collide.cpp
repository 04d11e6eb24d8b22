// The pipeline: broadphase against brute force, the static filter, the contact buffer, geoms from
// the builder (placement through merged links, bad input), and forward-mode AD through
// forward_kinematics + collide.
#include <algorithm>
#include <set>

#include "collision_test_util.hpp"
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/model/builder.hpp"

namespace gradyn::test {
namespace {

using V3 = Vector3<double>;

Inertia<double> unit_inertia() { return Inertia<double>(1.0, V3::Zero(), Matrix3<double>::Identity() * 0.1); }

GeomSpec spec(const std::string& name, GeomType type, V3 size, const Pose<double>& placement = Pose<double>()) {
  GeomSpec g;
  g.name = name;
  g.type = type;
  g.size = size;
  g.placement = placement;
  return g;
}

// n free bodies with random primitive geoms, plus a ground plane and a world box.
Model random_scene(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.05, 0.4);
  ModelBuilder b;
  LinkSpec world{"world", std::nullopt, {}, {}};
  world.collisions.push_back(spec("ground", GeomType::Plane, V3::Zero()));
  world.collisions.push_back(spec("wall", GeomType::Box, V3(0.2, 2, 1), at(1.5, 0, 0.5)));
  b.add_link(world);
  for (int i = 0; i < n; ++i) {
    LinkSpec link{"body" + std::to_string(i), unit_inertia(), {}, {}};
    const int kind = 1 + static_cast<int>(rng() % 4);
    const Pose<double> placement = random_pose(rng, 0.1);  // (drawn before the size, as recorded)
    const V3 size = draw3([&] { return u(rng); });
    link.collisions.push_back(spec("g" + std::to_string(i), static_cast<GeomType>(kind), size, placement));
    if (rng() % 3 == 0) {
      const Pose<double> placement = random_pose(rng, 0.2);  // (drawn before the radius, as recorded)
      link.collisions.push_back(spec("h" + std::to_string(i), GeomType::Sphere, V3(u(rng), 0, 0), placement));
    }
    b.add_link(link);
    JointSpec j;
    j.name = "free" + std::to_string(i);
    j.type = JointType::Free;
    j.parent = "world";
    j.child = link.name;
    b.add_joint(j);
  }
  return b.build();
}

Eigen::VectorXd random_configuration(const Model& m, std::mt19937& rng, double spread) {
  Eigen::VectorXd q = m.q0;
  for (int j = 0; j < m.nbodies(); ++j) {
    const Pose<double> P = random_pose(rng, spread);
    const Eigen::Quaterniond quat(P.R);
    q.segment<7>(m.idx_q[j]) << P.p + V3(0, 0, spread), quat.x(), quat.y(), quat.z(), quat.w();
  }
  return q;
}

TEST(Broadphase, SamePairsAsBruteForceOnRandomScenes) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const Model m = random_scene(25, seed);
    Data d(m);
    std::mt19937 rng(seed);
    for (int frame = 0; frame < 5; ++frame) {
      forward_kinematics(m, d, random_configuration(m, rng, 1.0));
      update_geom_poses(m, d);
      const double margin = frame % 2 ? 0.05 : 0.0;
      broadphase(m, d, margin);
      std::set<std::pair<int, int>> sap(d.broadphase_pairs.begin(), d.broadphase_pairs.begin() + d.nbroadphase_pairs);
      EXPECT_EQ(static_cast<int>(sap.size()), d.nbroadphase_pairs);  // no duplicates
      std::set<std::pair<int, int>> brute;
      for (int a = 0; a < m.ngeoms(); ++a)
        for (int b = a + 1; b < m.ngeoms(); ++b) {
          if (m.geoms[a].type == GeomType::Plane && m.geoms[b].type == GeomType::Plane) continue;
          if (!geoms_may_collide(m, a, b)) continue;
          Eigen::Vector3d alo, ahi, blo, bhi;
          geom_aabb(m.geoms[a], d.oMg[a], margin, alo, ahi);
          geom_aabb(m.geoms[b], d.oMg[b], margin, blo, bhi);
          if ((alo.array() <= bhi.array()).all() && (blo.array() <= ahi.array()).all()) brute.insert({a, b});
        }
      EXPECT_EQ(sap, brute) << "seed " << seed << " frame " << frame;
      EXPECT_GT(brute.size(), 0u);
      // Every contact of the full pairwise narrowphase is found through the broadphase.
      collide(m, d, margin);
      int all = 0;
      Contact buf[kMaxPairContacts];
      for (int a = 0; a < m.ngeoms(); ++a)
        for (int b = a + 1; b < m.ngeoms(); ++b)
          if (geoms_may_collide(m, a, b)) all += collide_geoms(m.geoms[a], d.oMg[a], m.geoms[b], d.oMg[b], margin, buf, a, b);
      EXPECT_EQ(d.ncontacts, all);
    }
  }
}

TEST(Broadphase, AabbsContainTheGeoms) {
  std::mt19937 rng(3);
  for (int t = 0; t < 50; ++t) {
    const int kind = 1 + t % 4;
    const Geom g = make_geom(static_cast<GeomType>(kind), 0.3, 0.5, 0.2);
    const Pose<double> P = random_pose(rng, 1.0);
    Eigen::Vector3d lo, hi;
    geom_aabb(g, P, 0.0, lo, hi);
    // Probe: a tiny sphere just outside each AABB face never touches the geom.
    for (int axis = 0; axis < 3; ++axis)
      for (double side : {-1.0, 1.0}) {
        V3 x = P.p;
        x[axis] = side > 0 ? hi[axis] + 1e-6 : lo[axis] - 1e-6;
        EXPECT_TRUE(collide_pair(make_geom(GeomType::Sphere, 1e-7), at(x.x(), x.y(), x.z()), g, P).empty());
      }
  }
}

// Two bodies: a parent on a free joint and a child on a hinge, both overlapping each other and a
// third body.
Model filter_model(bool parent_child, bool exclude, std::uint32_t contype = 1) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, {spec("ground", GeomType::Plane, V3::Zero())}});
  LinkSpec base{"base", unit_inertia(), {}, {spec("base_g", GeomType::Sphere, V3(0.5, 0, 0))}};
  LinkSpec arm{"arm", unit_inertia(), {}, {spec("arm_g", GeomType::Sphere, V3(0.5, 0, 0))}};
  LinkSpec other{"other", unit_inertia(), {}, {spec("other_g", GeomType::Sphere, V3(0.5, 0, 0))}};
  other.collisions[0].contype = contype;
  other.collisions[0].conaffinity = contype;
  b.add_link(base).add_link(arm).add_link(other);
  JointSpec f{"free", JointType::Free, "world", "base"};
  JointSpec h{"hinge", JointType::Revolute, "base", "arm"};
  h.origin.p = V3(0.3, 0, 0);
  JointSpec g{"free2", JointType::Free, "world", "other"};
  b.add_joint(f).add_joint(h).add_joint(g);
  b.set_collide_parent_child(parent_child);
  if (exclude) b.exclude_collision("base", "other");
  return b.build();
}

std::set<std::pair<std::string, std::string>> contact_pairs(const Model& m) {
  Data d(m);
  Eigen::VectorXd q = m.q0;
  q.segment<3>(m.idx_q[0]) = V3(0, 0, 0.4);   // base: touches the ground
  q.segment<3>(m.idx_q[2]) = V3(0.2, 0.3, 0.4);  // other: overlaps base and arm, touches the ground
  forward_kinematics(m, d, q);
  collide(m, d);
  std::set<std::pair<std::string, std::string>> out;
  for (int k = 0; k < d.ncontacts; ++k) out.insert({m.geoms[d.contacts[k].geom_a].name, m.geoms[d.contacts[k].geom_b].name});
  return out;
}

TEST(CollisionFilter, ParentChildContypeAndExclusions) {
  using P = std::set<std::pair<std::string, std::string>>;
  // Default: the hinge's parent and child do not collide; free bodies touch the world's plane.
  EXPECT_EQ(contact_pairs(filter_model(false, false)),
            (P{{"ground", "base_g"}, {"ground", "arm_g"}, {"ground", "other_g"}, {"base_g", "other_g"}, {"arm_g", "other_g"}}));
  EXPECT_EQ(contact_pairs(filter_model(true, false)).count({"base_g", "arm_g"}), 1u);
  EXPECT_EQ(contact_pairs(filter_model(false, true)).count({"base_g", "other_g"}), 0u);
  EXPECT_EQ(contact_pairs(filter_model(false, true)).count({"arm_g", "other_g"}), 1u);
  // contype 2 / conaffinity 2 against the defaults (1, 1): no bit in common, nothing touches it.
  for (const auto& p : contact_pairs(filter_model(false, false, 2))) {
    EXPECT_NE(p.first, "other_g");
    EXPECT_NE(p.second, "other_g");
  }
}

TEST(Collide, GeomsOfMergedLinksAreReExpressedInTheBodyFrame) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, {}});
  b.add_link({"base", unit_inertia(), {}, {}});
  b.add_link({"tip", std::nullopt, {}, {spec("tip_ball", GeomType::Sphere, V3(0.1, 0, 0), at(0, 0, 0.2))}});
  JointSpec f{"free", JointType::Free, "world", "base"};
  JointSpec w{"weld", JointType::Fixed, "base", "tip"};
  w.origin = at(1, 0, 0, rot(V3::UnitY(), std::numbers::pi / 2));
  b.add_joint(f).add_joint(w);
  const Model m = b.build();
  ASSERT_EQ(m.ngeoms(), 1);
  EXPECT_EQ(m.geoms[0].body, 0);
  EXPECT_LT((m.geoms[0].placement.p - V3(1.2, 0, 0)).norm(), 1e-12);  // the weld turns the link's z into x
  EXPECT_EQ(m.geom_id("tip_ball"), 0);
}

TEST(Collide, BuilderRejectsBadContactParametersNamingTheGeom) {
  auto add = [](GeomSpec g) {
    ModelBuilder b;
    b.add_link({"base", unit_inertia(), {}, {std::move(g)}});
  };
  auto expect_error = [&](GeomSpec g, const std::string& what) {
    try {
      add(std::move(g));
      ADD_FAILURE() << "no error for " << what;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("'foot'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  GeomSpec g = spec("foot", GeomType::Sphere, V3(0.1, 0, 0));
  g.friction = -0.5;
  expect_error(g, "friction");
  g = spec("foot", GeomType::Sphere, V3(0.1, 0, 0));
  g.restitution = 1.5;
  expect_error(g, "restitution");
  expect_error(spec("foot", GeomType::Box, V3(0.1, 0, 0.1)), "half-extent y");
  expect_error(spec("foot", GeomType::Capsule, V3(0.1, -1, 0)), "half-length");
  // Unnamed geoms get a name from their link.
  ModelBuilder b;
  b.add_link({"base", unit_inertia(), {}, {spec("", GeomType::Sphere, V3(0.1, 0, 0))}});
  EXPECT_EQ(b.build().geoms.at(0).name, "base/collision0");
}

TEST(Collide, OverflowSetsTheStatusFlagAndKeepsTheCapacity) {
  Model m = random_scene(10, 11);
  m.max_contacts = 3;
  Data d(m);
  Eigen::VectorXd q = m.q0;
  for (int j = 0; j < m.nbodies(); ++j) q.segment<3>(m.idx_q[j]) = V3(0.01 * j, 0, 0.05);  // a heap on the floor
  forward_kinematics(m, d, q);
  collide(m, d);
  EXPECT_EQ(d.ncontacts, 3);
  EXPECT_TRUE(d.status & kStatusContactOverflow);
}

TEST(Collide, ForwardModeThroughKinematicsMatchesCentralDifferences) {
  // A tilted box on a free joint resting on the ground, and a sphere hanging off it by a hinge.
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, {spec("ground", GeomType::Plane, V3::Zero())}});
  b.add_link({"box", unit_inertia(), {}, {spec("box_g", GeomType::Box, V3(0.3, 0.2, 0.1))}});
  b.add_link({"ball", unit_inertia(), {}, {spec("ball_g", GeomType::Sphere, V3(0.15, 0, 0), at(0, 0, -0.4))}});
  JointSpec f{"free", JointType::Free, "world", "box"};
  JointSpec h{"hinge", JointType::Revolute, "box", "ball"};
  h.origin.p = V3(0.3, 0, 0);
  h.axis = V3(0, 1, 0);
  b.add_joint(f).add_joint(h);
  const Model m = b.build();
  Eigen::VectorXd q(m.nq);
  const Eigen::Quaterniond tilt(rot(V3(1, 0.5, 0), 0.2));
  q << 0, 0, 0.15, tilt.x(), tilt.y(), tilt.z(), tilt.w(), 0.3;
  Data d(m);
  forward_kinematics(m, d, q);
  collide(m, d);
  ASSERT_GT(d.ncontacts, 1);

  using AD = ADScalar;
  const ModelTpl<AD> mad = m.cast<AD>();
  DataTpl<AD> dad(mad);
  VectorX<AD> qad = q.cast<AD>();
  const int dirs[] = {0, 1, 2, 7};  // base translation and the hinge angle
  for (int k = 0; k < 4; ++k) qad[dirs[k]] = ad_seed(q[dirs[k]], k);
  forward_kinematics(mad, dad, qad);
  collide(mad, dad);
  ASSERT_EQ(dad.ncontacts, d.ncontacts);
  const double h_fd = 1e-6;
  for (int k = 0; k < 4; ++k) {
    Eigen::VectorXd qp = q, qm = q;
    qp[dirs[k]] += h_fd;
    qm[dirs[k]] -= h_fd;
    Data dp(m), dm(m);
    forward_kinematics(m, dp, qp);
    collide(m, dp);
    forward_kinematics(m, dm, qm);
    collide(m, dm);
    ASSERT_EQ(dp.ncontacts, d.ncontacts);
    ASSERT_EQ(dm.ncontacts, d.ncontacts);
    for (int c = 0; c < d.ncontacts; ++c) {
      EXPECT_NEAR(dad.contacts[c].depth.derivatives()[k], (dp.contacts[c].depth - dm.contacts[c].depth) / (2 * h_fd), 1e-6);
      for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(dad.contacts[c].point[i].derivatives()[k],
                    (dp.contacts[c].point[i] - dm.contacts[c].point[i]) / (2 * h_fd), 1e-6);
        EXPECT_NEAR(dad.contacts[c].normal[i].derivatives()[k],
                    (dp.contacts[c].normal[i] - dm.contacts[c].normal[i]) / (2 * h_fd), 1e-6);
      }
    }
  }
}

}  // namespace
}  // namespace gradyn::test
