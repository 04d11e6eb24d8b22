// Collision meshes from files: MJCF <asset><mesh> (file under meshdir, inline vertex, scale) used
// by mesh geoms, URDF <mesh filename scale> (relative and package:// paths), both becoming
// ConvexHull geoms; the mesh geoms' inertia against MuJoCo's; malformed and missing meshes.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

#include "gradyn/collision/collide.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/io/load.hpp"

namespace gradyn {
namespace {

namespace fs = std::filesystem;
using V3 = Vector3<double>;
const std::string kData = GRADYN_TEST_DATA;

// World z range of a hull geom's vertices at the model's q0.
std::pair<double, double> z_range(const Model& m, const std::string& geom) {
  Data d(m);
  forward_kinematics<double>(m, d, m.q0);
  update_geom_poses<double>(m, d);
  const int g = m.geom_id(geom);
  double lo = 1e9, hi = -1e9;
  for (const V3& v : m.geoms[g].hull->vertices) {
    const double z = d.oMg[g].act_point(v.cwiseProduct(m.geoms[g].size)).z();
    lo = std::min(lo, z);
    hi = std::max(hi, z);
  }
  return {lo, hi};
}

V3 sorted_principal_moments(const Matrix3<double>& I) {
  V3 ev = Eigen::SelfAdjointEigenSolver<Matrix3<double>>(I).eigenvalues();
  std::sort(ev.data(), ev.data() + 3);
  return ev;
}

void expect_message(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\n lacks: " << p;
  }
}

// Produced with the mujoco Python package 4.0.0 from tests/data/mjcf/hull_scene.xml (body_mass,
// body_ipos, body_inertia; world z range of each mesh's vertices at qpos0).
TEST(HullIo, MjcfMeshGeomsAreHullsWithMujocosPlacementAndInertia) {
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  const Model m = load_mjcf(kData + "/mjcf/hull_scene.xml", options);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(m.ngeoms(), 3);
  const Geom& brick = m.geoms[m.geom_id("brick_mesh")];
  const Geom& pyramid = m.geoms[m.geom_id("pyramid_mesh")];
  ASSERT_EQ(brick.type, GeomType::ConvexHull);
  ASSERT_EQ(pyramid.type, GeomType::ConvexHull);
  EXPECT_EQ(brick.hull->vertices.size(), 8u);
  EXPECT_EQ(brick.hull->faces.size(), 6u);
  EXPECT_EQ(pyramid.hull->vertices.size(), 4u);
  EXPECT_EQ(brick.size, V3::Ones());
  EXPECT_DOUBLE_EQ(brick.friction, 1.0);
  // The STL's float vertices, scaled by (1, 2, 2): a 0.2 x 0.2 x 0.1 box.
  EXPECT_NEAR(brick.hull->aabb_max.x(), 0.1, 1e-7);
  EXPECT_NEAR(brick.hull->aabb_max.y(), 0.1, 1e-7);
  EXPECT_NEAR(brick.hull->aabb_max.z(), 0.05, 1e-7);

  const auto [brick_lo, brick_hi] = z_range(m, "brick_mesh");
  EXPECT_NEAR(brick_lo, 0.2499999992549418, 1e-7);
  EXPECT_NEAR(brick_hi, 0.35000000074505816, 1e-7);
  const auto [pyr_lo, pyr_hi] = z_range(m, "pyramid_mesh");
  // (MuJoCo keeps mesh vertices in single precision: agreement to float rounding)
  EXPECT_NEAR(pyr_lo, 0.1655894631333329, 1e-7);
  EXPECT_NEAR(pyr_hi, 0.49401998503567657, 1e-7);

  const Inertia<double>& Ib = m.body_inertia[m.body_id("brick")];
  EXPECT_NEAR(Ib.mass, 2.000000089406969, 1e-6);
  EXPECT_LT((Ib.com - V3(0.01, 0, 0)).norm(), 1e-7);
  EXPECT_LT((sorted_principal_moments(Ib.inertia_com) - V3(0.008333333954215068, 0.008333333954215068, 0.013333334326744108)).norm(),
            1e-8);
  const Inertia<double>& Ip = m.body_inertia[m.body_id("pyramid")];
  EXPECT_NEAR(Ip.mass, 5.196152613350134, 1e-6);
  EXPECT_LT((Ip.com - V3(0, 0.08509979959828967, 0.07350499625891914)).norm(), 1e-7);
  EXPECT_LT((sorted_principal_moments(Ip.inertia_com) - V3(0.031176915585102563, 0.03312547374425338, 0.03312547476839612)).norm(),
            1e-7);
}

TEST(HullIo, UrdfCollisionMeshesAreScaledHulls) {
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  const Model m = load_urdf(kData + "/urdf/hull_robot.urdf", options);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(m.ngeoms(), 2);  // the visual mesh is not collision geometry
  const Geom& pyramid = m.geoms[m.geom_id("pyramid")];
  ASSERT_EQ(pyramid.type, GeomType::ConvexHull);
  EXPECT_EQ(pyramid.hull->vertices.size(), 4u);
  EXPECT_NEAR(pyramid.hull->aabb_max.z(), 0.6, 1e-7);  // apex 0.3, scaled by 2 (the OBJ is read in floats)
  EXPECT_NEAR(pyramid.hull->aabb_max.x(), 0.4, 1e-7);
  EXPECT_NEAR(pyramid.placement.p.z(), 0.1, 1e-15);
  const Geom& slab = m.geoms[m.geom_id("slab")];  // through package://data/
  ASSERT_EQ(slab.type, GeomType::ConvexHull);
  EXPECT_NEAR(slab.hull->aabb_max.y(), 0.05, 1e-7);
  EXPECT_NEAR(slab.hull->volume, 0.2 * 0.1 * 0.05, 1e-9);
  // The pyramid rests on a plane like any geom: three contacts under its base.
  Geom plane;
  plane.type = GeomType::Plane;
  Contact out[kMaxPairContacts];
  const Pose<double> low(pyramid.placement.R, V3(0, 0, -0.001));
  EXPECT_EQ(collide_geoms<double>(plane, Pose<double>(), pyramid, low, 0.0, out), 3);
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("gradyn_hull_io_" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(HullIo, MalformedOrMissingMeshesNameTheFileLineAndElement) {
  const std::string meshes = kData + "/meshes";
  // MJCF: a malformed file, a missing file, a flat inline mesh, an unknown mesh name.
  auto mjcf = [&](const std::string& asset, const std::string& geom = "<geom type=\"mesh\" mesh=\"m\"/>") {
    return "<mujoco>\n  <compiler meshdir=\"" + meshes + "\"/>\n  <asset>\n    " + asset +
           "\n  </asset>\n  <worldbody>\n    <body>\n      <freejoint/>\n      " + geom +
           "\n    </body>\n  </worldbody>\n</mujoco>\n";
  };
  expect_message([&] { parse_mjcf_string(mjcf("<mesh name=\"m\" file=\"malformed.stl\"/>"), "scene.xml"); },
                 {"scene.xml:4", "<mesh name='m'>", "malformed.stl"});
  expect_message([&] { parse_mjcf_string(mjcf("<mesh name=\"m\" file=\"nowhere.obj\"/>"), "scene.xml"); },
                 {"scene.xml:4", "<mesh name='m'>", "nowhere.obj", "not found"});
  expect_message([&] { parse_mjcf_string(mjcf("<mesh name=\"m\" vertex=\"0 0 0 1 0 0 0 1 0 1 1 0\"/>"), "scene.xml"); },
                 {"scene.xml:4", "<mesh name='m'>", "qhull"});
  expect_message([&] { parse_mjcf_string(mjcf("<mesh name=\"m\" vertex=\"0 0 0 1 0\"/>"), "scene.xml"); },
                 {"scene.xml:4", "triples"});
  expect_message(
      [&] { parse_mjcf_string(mjcf("<mesh name=\"m\" file=\"box.stl\"/>", "<geom type=\"mesh\" mesh=\"nope\"/>"), "scene.xml"); },
      {"scene.xml:9", "<geom>", "unknown mesh 'nope'"});

  // URDF: a malformed collision mesh is an error naming the <mesh> line and the collision; a
  // missing one only warns (URDFs are often shipped without meshes), as before.
  TempDir tmp;
  fs::copy_file(meshes + "/malformed.stl", tmp.path() / "malformed.stl");
  const std::string urdf = "<robot name='r'>\n  <link name='base'>\n    <collision name='shell'>\n      <geometry>\n"
                           "        <mesh filename='malformed.stl'/>\n      </geometry>\n    </collision>\n  </link>\n</robot>\n";
  const std::string source = (tmp.path() / "r.urdf").string();
  expect_message([&] { parse_urdf_string(urdf, source); },
                 {"r.urdf:5", "<link name='base'>", "<collision name='shell'>", "malformed.stl"});
  std::string missing = urdf;
  missing.replace(missing.find("malformed.stl"), 13, "nothing.stl");
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  const Model m = parse_urdf_string(missing, source, options).build();
  EXPECT_EQ(m.ngeoms(), 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("nothing.stl"), std::string::npos);
}

}  // namespace
}  // namespace gradyn
