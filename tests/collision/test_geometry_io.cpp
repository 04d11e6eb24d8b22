// Collision geometry from files: URDF <collision>, MJCF <geom> and <contact><exclude>, the shipped
// robots, and bad contact parameters (errors name the file, line and geom).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "gradyn/collision/collide.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/io/load.hpp"

namespace gradyn::test {
namespace {

using V3 = Vector3<double>;
const std::string kModels = GRADYN_MODELS;

void expect_error(const std::function<void()>& f, std::initializer_list<std::string> mentions) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    for (const std::string& m : mentions) EXPECT_NE(std::string(e.what()).find(m), std::string::npos) << e.what();
  }
}

const char* kUrdf = R"(<robot name="r">
  <link name="base">
    <contact><lateral_friction value="0.7"/><restitution value="0.2"/></contact>
    <inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
    <collision name="body"><origin xyz="0 0 0.1" rpy="0 0 0"/><geometry><box size="0.4 0.2 0.1"/></geometry></collision>
    <collision><geometry><cylinder radius="0.05" length="0.3"/></geometry></collision>
    <collision><geometry><mesh filename="nothing_here.stl"/></geometry></collision>
  </link>
  <link name="foot">
    <inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
    <collision><geometry><sphere radius="0.03"/></geometry></collision>
  </link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="foot"/><origin xyz="0 0 -0.5"/></joint>
</robot>)";

TEST(GeometryIo, UrdfCollisionsWithSizesFrictionAndRestitution) {
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  options.floating_base = true;
  const Model m = parse_urdf_string(kUrdf, "r.urdf", options).build({true});
  ASSERT_EQ(m.ngeoms(), 3);  // the mesh is skipped
  const Geom& box = m.geoms[m.geom_id("body")];
  EXPECT_EQ(box.type, GeomType::Box);
  EXPECT_LT((box.size - V3(0.2, 0.1, 0.05)).norm(), 1e-15);  // URDF gives full extents
  EXPECT_LT((box.placement.p - V3(0, 0, 0.1)).norm(), 1e-15);
  EXPECT_DOUBLE_EQ(box.friction, 0.7);
  EXPECT_DOUBLE_EQ(box.restitution, 0.2);
  const Geom& cyl = m.geoms[m.geom_id("base/collision1")];
  EXPECT_EQ(cyl.type, GeomType::Cylinder);
  EXPECT_DOUBLE_EQ(cyl.size[1], 0.15);  // half of the URDF length
  const Geom& foot = m.geoms[m.geom_id("foot/collision0")];
  EXPECT_DOUBLE_EQ(foot.friction, kDefaultFriction);
  EXPECT_DOUBLE_EQ(foot.restitution, kDefaultRestitution);
  EXPECT_EQ(foot.body, m.body_id("foot"));
  ASSERT_EQ(warnings.size(), 1u);  // the missing mesh file, as before
}

TEST(GeometryIo, UrdfBadContactParametersNameTheGeom) {
  std::string bad = kUrdf;
  bad.replace(bad.find("0.7"), 3, "-0.7");
  expect_error([&] { parse_urdf_string(bad, "r.urdf"); }, {"r.urdf:5", "'body'", "friction"});
  bad = kUrdf;
  bad.replace(bad.find("\"0.2\"/></contact>"), 5, "\"1.2\"");
  expect_error([&] { parse_urdf_string(bad, "r.urdf"); }, {"r.urdf:5", "restitution"});
  bad = kUrdf;
  bad.replace(bad.find("radius=\"0.03\""), 13, "radius=\"-1\"");
  expect_error([&] { parse_urdf_string(bad, "r.urdf"); }, {"r.urdf:11", "foot/collision0", "radius"});
}

TEST(GeometryIo, LaikagoToesAreSpheresOnTheLowerLegs) {
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  options.floating_base = true;
  const Model m = load_urdf(kModels + "/laikago/laikago_toes_zup.urdf", options);
  int toes = 0;
  for (const Geom& g : m.geoms) {
    ASSERT_EQ(g.type, GeomType::Sphere) << g.name;  // every other collision is a mesh
    EXPECT_DOUBLE_EQ(g.size[0], 0.03);
    EXPECT_DOUBLE_EQ(g.friction, 1.0);
    EXPECT_NE(m.body_names[g.body].find("lower_leg"), std::string::npos) << m.body_names[g.body];
    ++toes;
  }
  EXPECT_EQ(toes, 4);
}

const char* kMjcf = R"(<mujoco>
  <default><geom friction="0.8 0.1 0.1" contype="2"/>
    <default class="soft"><geom friction="0.3"/></default></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1" conaffinity="3"/>
    <body name="torso" pos="0 0 1">
      <freejoint/>
      <geom name="trunk" type="capsule" fromto="0 0 0 0.4 0 0" size="0.1"/>
      <geom name="belly" type="box" size="0.1 0.2 0.3" pos="0 0 -0.1" class="soft"/>
      <geom name="egg" type="ellipsoid" size="0.1 0.2 0.3"/>
      <body name="leg" pos="0.4 0 0">
        <joint type="hinge" axis="0 1 0"/>
        <geom name="shin" type="cylinder" size="0.05 0.2"/>
      </body>
    </body>
  </worldbody>
  <contact><exclude body1="torso" body2="leg"/></contact>
</mujoco>)";

TEST(GeometryIo, MjcfGeomsDefaultsFromtoAndExclusions) {
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  const Model m = parse_mjcf_string(kMjcf, "m.xml", options).build();
  ASSERT_EQ(m.ngeoms(), 4);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("egg"), std::string::npos) << warnings[0];
  const Geom& floor = m.geoms[m.geom_id("floor")];
  EXPECT_EQ(floor.type, GeomType::Plane);
  EXPECT_EQ(floor.body, -1);
  EXPECT_EQ(floor.contype, 2u);
  EXPECT_EQ(floor.conaffinity, 3u);
  const Geom& trunk = m.geoms[m.geom_id("trunk")];
  EXPECT_EQ(trunk.type, GeomType::Capsule);
  EXPECT_DOUBLE_EQ(trunk.size[1], 0.2);
  EXPECT_LT((trunk.placement.p - V3(0.2, 0, 0)).norm(), 1e-15);
  EXPECT_LT((trunk.placement.R.col(2) - V3(1, 0, 0)).norm(), 1e-12);
  EXPECT_DOUBLE_EQ(trunk.friction, 0.8);
  EXPECT_DOUBLE_EQ(m.geoms[m.geom_id("belly")].friction, 0.3);
  EXPECT_EQ(m.geoms[m.geom_id("shin")].type, GeomType::Cylinder);
  ASSERT_EQ(m.excluded_pairs.size(), 1u);
  EXPECT_EQ(m.excluded_pairs[0], std::make_pair(m.body_id("torso"), m.body_id("leg")));
}

TEST(GeometryIo, MjcfBadContactParametersNameTheGeom) {
  std::string bad = kMjcf;
  bad.replace(bad.find("friction=\"0.3\""), 14, "friction=\"-0.3\"");
  expect_error([&] { parse_mjcf_string(bad, "m.xml"); }, {"m.xml:9", "<geom name='belly'>", "friction"});
  bad = kMjcf;
  bad.replace(bad.find("size=\"0.05 0.2\""), 15, "size=\"0.05 0\"");
  expect_error([&] { parse_mjcf_string(bad, "m.xml"); }, {"m.xml:13", "shin", "half-length"});
}

TEST(GeometryIo, AntFeetTouchTheFloorAndNothingElseDoes) {
  const Model m = load_mjcf(kModels + "/mujoco/ant.xml");
  EXPECT_EQ(m.ngeoms(), 18);
  EXPECT_EQ(m.geoms[m.geom_id("floor")].type, GeomType::Plane);
  EXPECT_EQ(m.geoms[m.geom_id("left_ankle_geom")].type, GeomType::Capsule);
  EXPECT_DOUBLE_EQ(m.geoms[m.geom_id("left_ankle_geom")].size[0], 0.08);
  // Lower the ant until its body is in the floor: only the four feet (contype 1) may touch it.
  Data d(m);
  Eigen::VectorXd q = m.q0;
  q[2] = 0.05;
  forward_kinematics(m, d, q);
  collide(m, d);
  ASSERT_EQ(d.ncontacts, 4);
  for (int k = 0; k < d.ncontacts; ++k) {
    EXPECT_EQ(m.geoms[d.contacts[k].geom_a].name, "floor");
    EXPECT_NE(m.geoms[d.contacts[k].geom_b].name.find("foot"), std::string::npos);
    EXPECT_NEAR(d.contacts[k].depth, 0.08 - 0.05, 1e-12);  // feet spheres of radius 0.08 at the torso's height
  }
}

TEST(GeometryIo, HumanoidGeomsAndExclusions) {
  const Model m = load_mjcf(kModels + "/mujoco/humanoid.xml");
  EXPECT_EQ(m.geoms[m.geom_id("floor")].type, GeomType::Plane);
  EXPECT_EQ(m.geoms[m.geom_id("head")].type, GeomType::Sphere);
  EXPECT_DOUBLE_EQ(m.geoms[m.geom_id("head")].size[0], 0.09);
  EXPECT_DOUBLE_EQ(m.geoms[m.geom_id("torso")].friction, 0.7);
  EXPECT_GE(m.excluded_pairs.size(), 2u);
  // Standing at its reference pose above the floor: the feet are the only contacts with it.
  Data d(m);
  forward_kinematics(m, d, m.q0);
  collide(m, d, 0.05);
  for (int k = 0; k < d.ncontacts; ++k) {
    const std::string a = m.geoms[d.contacts[k].geom_a].name, b = m.geoms[d.contacts[k].geom_b].name;
    if (a == "floor") EXPECT_NE(b.find("foot"), std::string::npos) << b;
  }
}

}  // namespace
}  // namespace gradyn::test
