// collide_vjp against forward-mode AD through forward_kinematics' output and collide(): every
// pair type at generic poses, geoms on free bodies with non-identity placements (and planes on
// the world), random contact adjoints. References, all by seeding an ADScalar model/data before
// collide(): a left world twist of each body pose in data.oMi (-> pose_bar), each used size entry
// (-> geom_size), the raw placement entries (-> geom_placement_p, and geom_placement_R's
// component tangent to the rotations), and the flat parameters through with_params (->
// params_gradient's geom entries; central differences too). Also: collide() with another margin
// than the model's, a contact buffer that cuts a pair, several pairs in one scene, accumulation,
// stale data and the ADScalar instantiation.
#include <functional>
#include <numbers>

#include "collision_test_util.hpp"
#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide_vjp.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn::test {
namespace {

using AD = ADScalar;
using V3 = Vector3<double>;
const V3 X = V3::UnitX(), Y = V3::UnitY(), Z = V3::UnitZ();

Inertia<double> unit_inertia() { return Inertia<double>(1.0, V3::Zero(), Matrix3<double>::Identity() * 0.1); }

GeomSpec spec_of(const Geom& g, const std::string& name, const Pose<double>& placement) {
  GeomSpec s;
  s.name = name;
  s.type = g.type;
  s.size = g.size;
  s.placement = placement;
  return s;
}

LinkSpec free_link(const std::string& name) { return LinkSpec{name, unit_inertia(), {}, {}}; }

JointSpec free_joint(const std::string& name, const std::string& child) {
  JointSpec j;
  j.name = name;
  j.type = JointType::Free;
  j.parent = "world";
  j.child = child;
  return j;
}

// q of a model whose joints are all free, from the body poses.
Eigen::VectorXd free_configuration(const Model& m, const std::vector<Pose<double>>& body_poses) {
  Eigen::VectorXd q = m.q0;
  for (int i = 0; i < m.nbodies(); ++i) {
    const Eigen::Quaterniond quat(body_poses[i].R);
    q.segment<7>(m.idx_q[i]) << body_poses[i].p, quat.x(), quat.y(), quat.z(), quat.w();
  }
  return q;
}

struct Scene {
  std::string name;
  Model model;
  Eigen::VectorXd q;
  double margin = 0.0;  // collide()'s
};

// Geom a at world pose Ga (on the world when a_on_world, else on free body A), geom b at Gb on free
// body B; random placements, so the body poses are Ga Ma^-1 and Gb Mb^-1.
Scene pair_scene(const std::string& name, const Geom& a, const Pose<double>& Ga, const Geom& b,
                 const Pose<double>& Gb, bool a_on_world, std::mt19937& rng, double margin) {
  const Pose<double> Ma = random_pose(rng, 0.3), Mb = random_pose(rng, 0.3);
  ModelBuilder builder;
  LinkSpec world{"world", std::nullopt, {}, {}};
  if (a_on_world) world.collisions.push_back(spec_of(a, "geom_a", Ga));
  builder.add_link(world);
  LinkSpec la = free_link("A"), lb = free_link("B");
  if (!a_on_world) la.collisions.push_back(spec_of(a, "geom_a", Ma));
  lb.collisions.push_back(spec_of(b, "geom_b", Mb));
  builder.add_link(la).add_link(lb).add_joint(free_joint("free_a", "A")).add_joint(free_joint("free_b", "B"));
  Scene s{name, builder.build(), {}, margin};
  s.model.contact.margin = margin;
  const Pose<double> A = a_on_world ? random_pose(rng, 1.0) : Ga * Ma.inverse();
  s.q = free_configuration(s.model, {A, Gb * Mb.inverse()});
  return s;
}

std::vector<ContactBar> random_bars(int n, std::mt19937& rng) {
  std::normal_distribution<double> g;
  std::vector<ContactBar> bars(n);
  for (ContactBar& b : bars) {
    for (int i = 0; i < 3; ++i) b.point[i] = g(rng);
    for (int i = 0; i < 9; ++i) b.frame.data()[i] = g(rng);
    b.depth = g(rng);
  }
  return bars;
}

template <class S>
S contact_loss(const DataTpl<S>& d, const std::vector<ContactBar>& bars) {
  S l = S(0);
  for (int c = 0; c < d.ncontacts; ++c) {
    const ContactTpl<S>& k = d.contacts[c];
    l += bars[c].depth * k.depth;
    for (int i = 0; i < 3; ++i) {
      l += bars[c].point[i] * k.point[i];
      for (int j = 0; j < 3; ++j) l += bars[c].frame(i, j) * k.frame(i, j);
    }
  }
  return l;
}

// Directions seeded by `seed(model, data, first)` (slots for directions [first, first + 8)) on
// an AD copy of the scene at the poses of `data`; returns dL/d(direction) for ndir directions.
using Seeder = std::function<void(ModelTpl<AD>&, DataTpl<AD>&, int first)>;

Eigen::VectorXd forward_mode(const Scene& s, const Data& data, const std::vector<ContactBar>& bars, int ndir,
                             const Seeder& seed) {
  Eigen::VectorXd g(ndir);
  for (int first = 0; first < ndir; first += kADChunk) {
    ModelTpl<AD> am = s.model.cast<AD>();
    DataTpl<AD> ad(am);
    for (int i = 0; i < s.model.nbodies(); ++i) ad.oMi[i] = data.oMi[i].cast<AD>();
    seed(am, ad, first);
    collide<AD>(am, ad, s.margin);
    EXPECT_EQ(ad.ncontacts, data.ncontacts) << s.name;
    for (int c = 0; c < std::min(ad.ncontacts, data.ncontacts); ++c)
      EXPECT_LT(std::abs(ad.contacts[c].depth.value() - data.contacts[c].depth), 1e-12) << s.name;
    const AD l = contact_loss(ad, bars);
    for (int j = first; j < std::min(ndir, first + kADChunk); ++j) g[j] = l.derivatives()[j - first];
  }
  return g;
}

int slot(int j, int first) { return j >= first && j < first + kADChunk ? j - first : -1; }

struct Result {
  std::vector<Vector6<double>> pose_bar;
  ModelTangent tangent;
};

Result run_vjp(const Model& m, const Data& d, const std::vector<ContactBar>& bars) {
  Result r{std::vector<Vector6<double>>(m.nbodies(), Vector6<double>::Zero()), ModelTangent(m)};
  collide_vjp(m, d, bars, r.pose_bar, r.tangent);
  return r;
}

void expect_close(const Eigen::VectorXd& got, const Eigen::VectorXd& want, double scale, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (int k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-9 * scale) << what << " entry " << k;
}

// Every check against forward mode for one scene; returns the number of contacts.
int check_scene(const Scene& s, unsigned seed) {
  const Model& m = s.model;
  Data d(m);
  forward_kinematics(m, d, s.q);
  collide(m, d, s.margin);
  std::mt19937 rng(seed);
  const std::vector<ContactBar> bars = random_bars(d.ncontacts, rng);
  const Result r = run_vjp(m, d, bars);
  double scale = 1;
  for (const ContactBar& b : bars) scale = std::max({scale, b.point.cwiseAbs().maxCoeff(), b.frame.cwiseAbs().maxCoeff()});

  // Body poses: a left world twist of each body, d oMi = xi^ oMi.
  const int nb = m.nbodies();
  const Eigen::VectorXd pose_ad = forward_mode(s, d, bars, 6 * nb, [&](ModelTpl<AD>&, DataTpl<AD>& ad, int first) {
    for (int i = 0; i < nb; ++i) {
      Vector3<AD> dtheta, dp0;
      for (int k = 0; k < 3; ++k) {
        dtheta[k] = ad_seed(0.0, slot(6 * i + k, first));
        dp0[k] = ad_seed(0.0, slot(6 * i + 3 + k, first));
      }
      Pose<AD>& P = ad.oMi[i];
      P = Pose<AD>(Matrix3<AD>(P.R + skew<AD>(dtheta) * P.R), Vector3<AD>(P.p + dtheta.cross(P.p) + dp0));
    }
  });
  Eigen::VectorXd pose_got(6 * nb);
  for (int i = 0; i < nb; ++i) pose_got.segment<6>(6 * i) = r.pose_bar[i];
  expect_close(pose_got, pose_ad, scale, s.name + ": pose_bar");

  // Sizes (all three entries: the unused ones must come back 0).
  const int ng = m.ngeoms();
  const Eigen::VectorXd size_ad = forward_mode(s, d, bars, 3 * ng, [&](ModelTpl<AD>& am, DataTpl<AD>&, int first) {
    for (int g = 0; g < ng; ++g)
      for (int k = 0; k < 3; ++k) am.geoms[g].size[k] = ad_seed(m.geoms[g].size[k], slot(3 * g + k, first));
  });
  Eigen::VectorXd size_got(3 * ng);
  for (int g = 0; g < ng; ++g) size_got.segment<3>(3 * g) = r.tangent.geom_size[g];
  expect_close(size_got, size_ad, scale, s.name + ": geom_size");

  // Placements: raw entries of R (column-major) and p; R's adjoint compared on the rotations'
  // tangent space, G -> R skew(R^T G) (the narrowphase reads R as a rotation).
  const Eigen::VectorXd place_ad = forward_mode(s, d, bars, 12 * ng, [&](ModelTpl<AD>& am, DataTpl<AD>&, int first) {
    for (int g = 0; g < ng; ++g) {
      Pose<AD>& M = am.geoms[g].placement;
      for (int k = 0; k < 9; ++k) M.R.data()[k] = ad_seed(m.geoms[g].placement.R.data()[k], slot(12 * g + k, first));
      for (int k = 0; k < 3; ++k) M.p[k] = ad_seed(m.geoms[g].placement.p[k], slot(12 * g + 9 + k, first));
    }
  });
  for (int g = 0; g < ng; ++g) {
    const Matrix3<double>& R = m.geoms[g].placement.R;
    const Matrix3<double> G_ad = Eigen::Map<const Matrix3<double>>(place_ad.data() + 12 * g);
    const Matrix3<double> A = R.transpose() * G_ad;
    const Matrix3<double> tangent_ad = R * (0.5 * (A - A.transpose()));
    const Matrix3<double>& G = r.tangent.geom_placement_R[g];
    const Matrix3<double> B = R.transpose() * G;
    EXPECT_LT((B + B.transpose()).cwiseAbs().maxCoeff(), 1e-12 * scale) << s.name << ": not tangent, geom " << g;
    EXPECT_LT((G - tangent_ad).cwiseAbs().maxCoeff(), 1e-9 * scale) << s.name << ": geom_placement_R, geom " << g;
    expect_close(r.tangent.geom_placement_p[g], place_ad.segment<3>(12 * g + 9), scale,
                 s.name + ": geom_placement_p, geom " + std::to_string(g));
  }
  return d.ncontacts;
}

// A pose of geom b relative to a's frame where the pair has at least min_count contacts: random
// rotation and offset (within reach), the first of a seeded search.
Pose<double> touching_pose(const Geom& a, const Pose<double>& Ga, const Geom& b, int min_count, double margin,
                           std::mt19937& rng) {
  const double reach = a.size.norm() + b.size.norm() + (a.type == GeomType::Plane ? 0.0 : 0.05);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 100000; ++trial) {
    Pose<double> rel = random_pose(rng, 1.0);
    rel.p = draw3([&] { return u(rng); }) * reach;
    if (a.type == GeomType::Plane) {
      const V3 w = draw3([&] { return u(rng); });
      rel.p = V3(w.x(), w.y(), 0.5 * w.z() * reach);
    }
    const Pose<double> Gb = Ga * rel;
    if (static_cast<int>(collide_pair(a, Ga, b, Gb, margin).size()) >= min_count) return Gb;
  }
  ADD_FAILURE() << "no pose with " << min_count << " contacts between " << geom_type_name(a.type) << " and "
                << geom_type_name(b.type);
  return Ga;
}

struct PairCase {
  Geom a, b;
  int min_count;
};

std::vector<PairCase> random_pair_cases() {
  using T = GeomType;
  const Geom plane = make_geom(T::Plane), sphere = make_geom(T::Sphere, 0.3), sphere2 = make_geom(T::Sphere, 0.25),
             capsule = make_geom(T::Capsule, 0.15, 0.4), capsule2 = make_geom(T::Capsule, 0.1, 0.3),
             box = make_geom(T::Box, 0.3, 0.2, 0.4), box2 = make_geom(T::Box, 0.25, 0.35, 0.15),
             cylinder = make_geom(T::Cylinder, 0.2, 0.35), cylinder2 = make_geom(T::Cylinder, 0.25, 0.2);
  return {{plane, sphere, 1},       {plane, capsule, 1},     {plane, capsule, 2},    {plane, box, 1},
          {plane, box, 2},          {plane, cylinder, 1},    {plane, cylinder, 2},   {sphere, sphere2, 1},
          {sphere, capsule, 1},     {sphere, box, 1},        {sphere, cylinder, 1},  {capsule, capsule2, 1},
          {capsule, box, 1},        {capsule, box, 2},       {capsule, cylinder, 1}, {capsule, cylinder, 2},
          {box, box2, 1},           {box, box2, 3},          {box, cylinder, 1},     {box, cylinder, 3},
          {cylinder, cylinder2, 1}, {cylinder, cylinder2, 2}, {cylinder2, sphere, 1}, {box2, capsule, 1},
          {sphere, plane, 1}};  // (the plane second: geom b, its normal reported from the sphere)
}

TEST(CollideVjp, MatchesForwardModeForEveryPairTypeAtRandomPoses) {
  std::mt19937 rng(11);
  int total = 0;
  const std::vector<PairCase> cases = random_pair_cases();
  for (size_t k = 0; k < cases.size(); ++k) {
    const PairCase& c = cases[k];
    for (double margin : {0.0, 0.03}) {
      const Pose<double> Ga = random_pose(rng, 0.5);
      const Pose<double> Gb = touching_pose(c.a, Ga, c.b, c.min_count, margin, rng);
      const std::string name = std::string(geom_type_name(c.a.type)) + "-" + geom_type_name(c.b.type) + " case " +
                               std::to_string(k) + " margin " + std::to_string(margin);
      const int n = check_scene(pair_scene(name, c.a, Ga, c.b, Gb, c.a.type == GeomType::Plane, rng, margin), 100 + k);
      EXPECT_GE(n, c.min_count) << name;
      total += n;
    }
  }
  EXPECT_GT(total, 60);
}

// collide_vjp re-runs the narrowphase in forward-mode AD and looks for the contacts collide()
// reported. The capsule's deepest sphere against a box or a cylinder comes from a golden-section
// search whose comparisons, near a flat minimum, a last-bit difference between the double and the
// AD values could send elsewhere (seen under clang: points 1e-9 apart, so collide_vjp threw). The
// search runs on double values in both, so the AD contacts' values are collide()'s.
TEST(CollideVjp, CapsuleSearchFindsTheSameContactsInAD) {
  using T = GeomType;
  const Geom capsule = make_geom(T::Capsule, 0.15, 0.4);
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> u(-1, 1);
  int interior = 0;
  for (const Geom& other : {make_geom(T::Box, 0.3, 0.2, 0.4), make_geom(T::Cylinder, 0.2, 0.35)}) {
    GeomTpl<AD> capsule_ad, other_ad;
    capsule_ad.type = capsule.type, other_ad.type = other.type;
    for (int k = 0; k < 3; ++k) capsule_ad.size[k] = capsule.size[k], other_ad.size[k] = other.size[k];
    for (int trial = 0; trial < 400; ++trial) {
      const Pose<double> Ga = random_pose(rng, 0.5);
      // Half the trials nearly parallel to the other geom's z axis (flat minima along the segment).
      Pose<double> rel = random_pose(rng, 1.0);
      if (trial % 2 == 0) {
        const V3 w = draw3([&] { return u(rng); });
        rel = at(0, 0, 0, rot(V3(w.x(), w.y(), 0), 1e-3 * w.z()));
      }
      rel.p = draw3([&] { return u(rng); }) * 0.45;
      const Pose<double> Gb = Ga * rel;
      Contact got[kMaxPairContacts];
      ContactTpl<AD> again[kMaxPairContacts];
      const double margin = std::numeric_limits<double>::infinity();
      const int n = collide_geoms(capsule, Ga, other, Gb, margin, got, 0, 1);
      const int n_ad = collide_geoms<AD>(capsule_ad, Ga.cast<AD>(), other_ad, Gb.cast<AD>(), margin, again, 0, 1);
      ASSERT_EQ(n, n_ad) << geom_type_name(other.type) << " trial " << trial;
      interior += n == 3;
      for (int c = 0; c < n; ++c) {
        double err = std::abs(got[c].depth - again[c].depth.value());
        for (int i = 0; i < 3; ++i)
          err = std::max({err, std::abs(got[c].point[i] - again[c].point[i].value()),
                          std::abs(got[c].normal[i] - again[c].normal[i].value())});
        EXPECT_LT(err, 1e-12) << geom_type_name(other.type) << " trial " << trial << " contact " << c;
      }
    }
  }
  EXPECT_GT(interior, 50);  // the searched (third) contact was there to compare
}

// Branches a random search rarely hits, built on purpose (each under a random rigid motion), with
// the contact count each must give.
struct SpecialScene {
  Scene scene;
  int min_count, max_count;
};

std::vector<SpecialScene> special_scenes(std::mt19937& rng) {
  using T = GeomType;
  constexpr double pi = std::numbers::pi;
  std::vector<SpecialScene> scenes;
  auto add = [&](const std::string& name, const Geom& a, const Pose<double>& Ga_local, const Geom& b,
                 const Pose<double>& Gb_local, bool a_on_world, int min_count, int max_count) {
    const Pose<double> W = random_pose(rng, 0.5);
    scenes.push_back({pair_scene(name, a, W * Ga_local, b, W * Gb_local, a_on_world, rng, 0.01), min_count, max_count});
  };
  // A box on a larger box, face contact (the 4 corners of b's face), twisted and slightly tilted.
  const Geom box = make_geom(T::Box, 0.3, 0.3, 0.2), box2 = make_geom(T::Box, 0.2, 0.25, 0.15);
  add("box-box face", make_geom(T::Box, 0.5, 0.5, 0.2), at(0, 0, 0), make_geom(T::Box, 0.2, 0.15, 0.1),
      at(0.05, -0.03, 0.29, rot(Z, 0.3) * rot(V3(1, 2, 0), 0.02)), false, 4, 4);
  // Box-box edge-edge: a's top edge along x crosses b's bottom edge along y.
  add("box-box edge", box, at(0, 0, 0, rot(X, pi / 4) * rot(Y, 0.03)), box2,
      at(0.02, 0.01, (0.3 + 0.2) / std::sqrt(2.0) + (0.2 + 0.15) / std::sqrt(2.0) - 0.03,
         rot(Y, pi / 4 + 0.05) * rot(X, -0.04)),
      false, 1, 1);
  // Parallel capsules (the two-contact branch). b's segment spans z in [-0.25, 0.35] of a's
  // [-0.4, 0.4]: both ends of the overlap lie strictly inside a, away from the clamp at a's end
  // (an end exactly at a's end is a kink, and which side rounding picks differs across compilers).
  const Geom cap = make_geom(T::Capsule, 0.1, 0.4), cap2 = make_geom(T::Capsule, 0.12, 0.3);
  add("capsule-capsule parallel", cap, at(0, 0, 0, rot(X, 0.4)), cap2, at(0.05, 0.0, 0.0, rot(X, 0.4)) * at(0, 0.2, 0.05),
      false, 2, 2);
  // A capsule across a box edge (its ends far): the deepest sphere mid-segment, refined to the edge.
  const double off = 0.08 / std::sqrt(2.0);
  add("capsule over a box edge", box, at(0, 0, 0), cap, at(0.3 + off, 0.02, 0.2 + off, rot(Y, 3 * pi / 4 + 0.05) * rot(Z, 0.1)),
      false, 1, 1);
  // The same over a box corner (refined to the corner).
  const double c = 0.08 / std::sqrt(3.0);
  add("capsule over a box corner", box, at(0, 0, 0), cap, at(0.3 + c, 0.3 + c, 0.2 + c, rot(V3(1, 1, 0), pi / 2 + 0.05)),
      false, 1, 1);
  // A plane on a moving body; an upright cylinder on a world plane (3 rim points).
  add("plane on a body - box", make_geom(T::Plane), at(0, 0, 0), box, at(0.1, 0.2, 0.17, rot(V3(1, 1, 0), 0.15)), false, 1, 4);
  add("plane-cylinder upright", make_geom(T::Plane), at(0, 0, 0, rot(X, 0.2)), make_geom(T::Cylinder, 0.2, 0.3),
      at(0, 0, 0, rot(X, 0.2)) * at(0.1, 0.1, 0.29, rot(V3(1, -1, 0), 0.01)), true, 3, 3);
  // A sphere inside a box (the interior branch of the signed distance).
  add("sphere inside a box", box, at(0, 0, 0), make_geom(T::Sphere, 0.1), at(0.1, -0.05, 0.05), false, 1, 1);
  return scenes;
}

std::vector<Contact> contacts_of(const Scene& s) {
  Data d(s.model);
  forward_kinematics(s.model, d, s.q);
  collide(s.model, d, s.margin);
  return std::vector<Contact>(d.contacts.begin(), d.contacts.begin() + d.ncontacts);
}

TEST(CollideVjp, MatchesForwardModeOnConstructedBranches) {
  std::mt19937 rng(5);
  for (const SpecialScene& k : special_scenes(rng)) {
    const int n = check_scene(k.scene, 7);
    EXPECT_GE(n, k.min_count) << k.scene.name;
    EXPECT_LE(n, k.max_count) << k.scene.name;
  }
  // The edge-edge scene's normal is the cross product of the two edges (a's x, b's y), not a face normal.
  rng.seed(5);
  const SpecialScene edge = special_scenes(rng)[1];
  const Model& m = edge.scene.model;
  Data d(m);
  forward_kinematics(m, d, edge.scene.q);
  update_geom_poses(m, d);
  const V3 expected = d.oMg[0].R.col(0).cross(d.oMg[1].R.col(1)).normalized();
  const std::vector<Contact> c = contacts_of(edge.scene);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(std::abs(c[0].normal.dot(expected)), 1.0, 1e-12);
}

// Free bodies with one or two random geoms each, a ground plane and a world box: several pairs
// (and pairs with several contacts) in one contact list.
Scene random_scene(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.1, 0.35);
  ModelBuilder b;
  LinkSpec world{"world", std::nullopt, {}, {}};
  world.collisions.push_back(spec_of(make_geom(GeomType::Plane), "ground", at(0, 0, 0, rot(V3(1, 2, 3), 0.05))));
  world.collisions.push_back(spec_of(make_geom(GeomType::Box, 0.2, 1.0, 0.5), "wall", at(0.6, 0, 0.3, rot(Z, 0.2))));
  b.add_link(world);
  std::vector<Pose<double>> poses;
  for (int i = 0; i < n; ++i) {
    LinkSpec link = free_link("body" + std::to_string(i));
    const auto type = static_cast<GeomType>(1 + i % 4);
    const Pose<double> placement = random_pose(rng, 0.1);  // (drawn before the size, as recorded)
    const V3 size = draw3([&] { return u(rng); });
    link.collisions.push_back(spec_of(make_geom(type, size.x(), size.y(), size.z()), "g" + std::to_string(i), placement));
    if (i % 3 == 0) {
      const Pose<double> placement = random_pose(rng, 0.2);  // (drawn before the radius, as recorded)
      link.collisions.push_back(spec_of(make_geom(GeomType::Sphere, u(rng)), "h" + std::to_string(i), placement));
    }
    b.add_link(link);
    b.add_joint(free_joint("free" + std::to_string(i), link.name));
    Pose<double> P = random_pose(rng, 0.5);
    P.p.z() = 0.25 + 0.3 * std::abs(P.p.z());
    poses.push_back(P);
  }
  Scene s{"random scene " + std::to_string(seed), b.build(), {}, 0.02};
  s.model.contact.margin = s.margin;
  s.q = free_configuration(s.model, poses);
  return s;
}

TEST(CollideVjp, MatchesForwardModeWithManyPairs) {
  for (unsigned seed : {1u, 2u, 3u}) {
    const Scene s = random_scene(8, seed);
    Data d(s.model);
    forward_kinematics(s.model, d, s.q);
    collide(s.model, d, s.margin);
    int pairs = 0;
    for (int c = 0; c < d.ncontacts; ++c)
      pairs += c == 0 || d.contacts[c].geom_a != d.contacts[c - 1].geom_a || d.contacts[c].geom_b != d.contacts[c - 1].geom_b;
    EXPECT_GE(pairs, 3) << s.name;
    check_scene(s, seed);
  }
}

// collide() called with a larger margin than model.contact.margin: the pair is re-run with an
// unbounded margin and its contacts matched by value.
TEST(CollideVjp, AnotherMarginThanTheModelsIsMatchedByValue) {
  std::mt19937 rng(17);
  const Geom box = make_geom(GeomType::Box, 0.3, 0.3, 0.2);
  // Tilted on the plane: some corners touch, others are within the larger margin only.
  // Tilted about y: the corners at x = +0.3 sink 0.005, those at x = -0.3 float 0.6 sin(0.03) - 0.005 = 0.013 up.
  const Pose<double> Gb = at(0, 0, 0.3 * std::sin(0.03) + 0.2 * std::cos(0.03) - 0.005, rot(Y, 0.03));
  Scene s = pair_scene("plane-box margin", make_geom(GeomType::Plane), at(0, 0, 0), box, Gb, true, rng, 0.05);
  s.model.contact.margin = 0.0;
  Data d(s.model);
  forward_kinematics(s.model, d, s.q);
  collide(s.model, d, 0.0);
  const int strict = d.ncontacts;
  EXPECT_EQ(check_scene(s, 3), 4);
  EXPECT_EQ(strict, 2);  // the model's margin alone gives fewer: the by-value path ran
}

// The buffer holds fewer contacts than the pair has: collide() keeps a prefix.
TEST(CollideVjp, ContactBufferCutInsideAPair) {
  std::mt19937 rng(19);
  Scene s = special_scenes(rng)[0].scene;  // box-box face, 4 contacts
  s.model.max_contacts = 2;
  Data d(s.model);
  forward_kinematics(s.model, d, s.q);
  collide(s.model, d, s.margin);
  EXPECT_TRUE(d.status & kStatusContactOverflow);
  EXPECT_EQ(check_scene(s, 4), 2);
}

TEST(CollideVjp, AccumulatesSkipsZeroAdjointsAndRefusesStaleData) {
  std::mt19937 rng(23);
  const Scene s = special_scenes(rng)[0].scene;  // box-box face, 4 contacts
  Data d(s.model);
  forward_kinematics(s.model, d, s.q);
  collide(s.model, d, s.margin);
  ASSERT_EQ(d.ncontacts, 4);
  const std::vector<ContactBar> bars = random_bars(d.ncontacts, rng);
  Result r = run_vjp(s.model, d, bars);
  const Result once = r;
  collide_vjp(s.model, d, bars, r.pose_bar, r.tangent);
  for (int i = 0; i < s.model.nbodies(); ++i) EXPECT_LT((r.pose_bar[i] - 2 * once.pose_bar[i]).norm(), 1e-12);
  EXPECT_LT((params_gradient(s.model, r.tangent) - 2 * params_gradient(s.model, once.tangent)).norm(), 1e-12);
  EXPECT_GT(once.pose_bar[1].norm(), 0.0);

  const Result zero = run_vjp(s.model, d, std::vector<ContactBar>(d.ncontacts));
  for (const auto& w : zero.pose_bar) EXPECT_EQ(w.norm(), 0.0);
  EXPECT_EQ(params_gradient(s.model, zero.tangent).norm(), 0.0);

  std::vector<Vector6<double>> pose_bar(s.model.nbodies(), Vector6<double>::Zero());
  ModelTangent t(s.model);
  EXPECT_THROW(collide_vjp(s.model, d, std::vector<ContactBar>(2), pose_bar, t), ArgumentError);
  std::vector<Vector6<double>> short_pose_bar(1);
  EXPECT_THROW(collide_vjp(s.model, d, bars, short_pose_bar, t), ArgumentError);
  Data stale = d;
  stale.contacts[1].depth += 0.01;
  try {
    collide_vjp(s.model, stale, bars, pose_bar, t);
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'geom_a' and 'geom_b'"), std::string::npos) << e.what();
  }
}

TEST(CollideVjp, ADScalarIsRefusedWhenThereAreContacts) {
  std::mt19937 rng(29);
  const Scene s = special_scenes(rng)[1].scene;
  const ModelTpl<AD> am = s.model.cast<AD>();
  DataTpl<AD> ad(am);
  forward_kinematics<AD>(am, ad, s.q.cast<AD>());
  std::vector<Vector6<AD>> pose_bar(am.nbodies(), Vector6<AD>::Zero());
  ModelTangentTpl<AD> t(am);
  std::vector<ContactBarTpl<AD>> bars(kMaxPairContacts);
  collide<AD>(am, ad, 0.0);
  const int n = ad.ncontacts;
  ASSERT_GT(n, 0);
  EXPECT_THROW(collide_vjp<AD>(am, ad, bars, pose_bar, t), ArgumentError);
  ad.ncontacts = 0;
  EXPECT_NO_THROW(collide_vjp<AD>(am, ad, bars, pose_bar, t));
}

// The flat parameters of the geoms (friction, restitution, sizes, origin x/y/z/roll/pitch/yaw):
// params_gradient of collide_vjp's tangent against forward mode through with_params, and central
// differences for a smooth pair.
TEST(CollideVjp, ParamsGradientOfGeomParametersMatchesWithParams) {
  std::mt19937 rng(31);
  std::vector<Scene> scenes;
  for (const SpecialScene& k : special_scenes(rng)) scenes.push_back(k.scene);
  for (const PairCase& c : {PairCase{make_geom(GeomType::Sphere, 0.3), make_geom(GeomType::Capsule, 0.15, 0.4), 1},
                            PairCase{make_geom(GeomType::Box, 0.3, 0.2, 0.4), make_geom(GeomType::Cylinder, 0.2, 0.35), 2}}) {
    const Pose<double> Ga = random_pose(rng, 0.5);
    scenes.push_back(pair_scene("with_params pair", c.a, Ga, c.b, touching_pose(c.a, Ga, c.b, c.min_count, 0.0, rng), false, rng, 0.0));
  }
  for (size_t k = 0; k < scenes.size(); ++k) {
    const Scene& s = scenes[k];
    const Model& m = s.model;
    Data d(m);
    forward_kinematics(m, d, s.q);
    collide(m, d, s.margin);
    const std::vector<ContactBar> bars = random_bars(d.ncontacts, rng);
    const Eigen::VectorXd got = params_gradient(m, run_vjp(m, d, bars).tangent);
    const Eigen::VectorXd p0 = get_params(m);
    const std::vector<std::string> names = param_names(m);
    const int first_geom = static_cast<int>(std::find(names.begin(), names.end(), "gravity.z") - names.begin()) + 1;
    const int n = static_cast<int>(p0.size()) - first_geom;
    // The loss at the model with_params(p), body poses held (q fixed).
    auto loss_at = [&](const auto& p) {
      using T = typename std::decay_t<decltype(p)>::Scalar;
      const ModelTpl<T> mt = with_params<T>(m.template cast<T>(), p);
      DataTpl<T> dt(mt);
      forward_kinematics<T>(mt, dt, s.q.template cast<T>());
      collide<T>(mt, dt, s.margin);
      EXPECT_EQ(dt.ncontacts, d.ncontacts) << s.name;
      return contact_loss(dt, bars);
    };
    Eigen::VectorXd want(n);
    for (int first = 0; first < n; first += kADChunk) {
      VectorX<AD> p(p0.size());
      for (int j = 0; j < p0.size(); ++j) p[j] = ad_seed(p0[j], slot(j - first_geom, first));
      const AD l = loss_at(p);
      for (int j = first; j < std::min(n, first + kADChunk); ++j) want[j] = l.derivatives()[j - first];
    }
    const double scale = 1 + want.cwiseAbs().maxCoeff();
    for (int j = 0; j < n; ++j) EXPECT_NEAR(got[first_geom + j], want[j], 1e-9 * scale) << s.name << " " << names[first_geom + j];
    if (k == scenes.size() - 2) {  // sphere-capsule: smooth, central differences agree
      for (int j = 0; j < n; ++j) {
        const double h = 1e-6;
        Eigen::VectorXd pp = p0, pm = p0;
        pp[first_geom + j] += h;
        pm[first_geom + j] -= h;
        const double fd = (loss_at(pp) - loss_at(pm)) / (2 * h);
        EXPECT_NEAR(got[first_geom + j], fd, 1e-6 * scale) << s.name << " " << names[first_geom + j];
      }
    }
  }
}

}  // namespace
}  // namespace gradyn::test
