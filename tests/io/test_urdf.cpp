// URDF loader: the shipped robots load with the right sizes and values read from their files,
// and every kind of bad input fails with a message naming the file, the line and the element.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

#include "gradyn/io/load.hpp"

namespace gradyn {
namespace {

namespace fs = std::filesystem;

const std::string kModels = GRADYN_MODELS;
const std::string kData = std::string(GRADYN_TEST_DATA) + "/urdf";
constexpr double kHalfPi = 1.5707963267948966;

Model load_quietly(const std::string& path, bool floating_base = false, std::vector<std::string>* warnings = nullptr) {
  std::vector<std::string> sink;
  LoadOptions options;
  options.floating_base = floating_base;
  options.warnings = warnings ? warnings : &sink;
  return load_urdf(path, options);
}

// The ModelError message for loading `file` from the test data, or the empty string if none.
std::string load_error(const std::string& file) {
  try {
    load_quietly(kData + "/" + file);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

Matrix3<double> rot_x(double a) { return axis_angle_to_matrix<double>(Vector3<double>::UnitX(), a); }

// ---------------------------------------------------------------------------------------------
// Shipped models

struct ShippedModel {
  std::string path;
  bool floating_base;
  int nq, nv, nbodies;
};

class ShippedUrdf : public ::testing::TestWithParam<ShippedModel> {};

TEST_P(ShippedUrdf, LoadsWithExpectedSizes) {
  const ShippedModel& expected = GetParam();
  const Model model = load_quietly(kModels + "/" + expected.path, expected.floating_base);
  EXPECT_EQ(model.nq, expected.nq);
  EXPECT_EQ(model.nv, expected.nv);
  EXPECT_EQ(model.nbodies(), expected.nbodies);
  EXPECT_EQ(model.source, kModels + "/" + expected.path);
  EXPECT_FALSE(model.name.empty());
  EXPECT_EQ(model.gravity, Vector3<double>(0, 0, -9.81));
}

// Sizes counted from the files: non-fixed joints (x1 each for revolute/continuous/prismatic),
// plus a free joint (7 q, 6 v) when the base floats.
INSTANTIATE_TEST_SUITE_P(
    Models, ShippedUrdf,
    ::testing::Values(ShippedModel{"pendulums/pendulum1.urdf", false, 1, 1, 1},
                      ShippedModel{"pendulums/pendulum2.urdf", false, 2, 2, 2},
                      ShippedModel{"pendulums/pendulum3.urdf", false, 3, 3, 3},
                      ShippedModel{"pendulums/pendulum4.urdf", false, 4, 4, 4},
                      ShippedModel{"pendulums/pendulum5.urdf", false, 5, 5, 5},
                      ShippedModel{"pendulums/pendulum6.urdf", false, 6, 6, 6},
                      ShippedModel{"pendulums/pendulum7.urdf", false, 7, 7, 7},
                      ShippedModel{"grid/iiwa.urdf", false, 7, 7, 7},
                      ShippedModel{"grid/hyq.urdf", false, 12, 12, 12},
                      ShippedModel{"grid/hyq.urdf", true, 19, 18, 13},
                      ShippedModel{"simple_humanoid.urdf", false, 29, 29, 29},
                      ShippedModel{"simple_humanoid.urdf", true, 36, 35, 30},
                      ShippedModel{"cartpole.urdf", false, 2, 2, 2},
                      ShippedModel{"laikago/laikago_toes_zup.urdf", false, 12, 12, 12},
                      ShippedModel{"laikago/laikago_toes_zup.urdf", true, 19, 18, 13},
                      ShippedModel{"swimmer05/swimmer05.urdf", false, 7, 7, 7}),
    [](const ::testing::TestParamInfo<ShippedModel>& info) {
      std::string name = fs::path(info.param.path).stem().string() + (info.param.floating_base ? "_floating" : "");
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST(Urdf, IiwaValuesMatchTheFile) {
  const Model model = load_quietly(kModels + "/grid/iiwa.urdf");
  EXPECT_EQ(model.name, "iiwa14");
  ASSERT_EQ(model.joint_id("iiwa_joint_1"), 0);
  ASSERT_EQ(model.joint_id("iiwa_joint_2"), 1);
  EXPECT_EQ(model.parent[0], -1);  // base and iiwa_link_0 are welded to the world
  EXPECT_EQ(model.parent[1], 0);
  // iiwa_joint_1: <origin xyz="0 0 0.1575"/>, after the identity fixed joint base -> link_0.
  EXPECT_TRUE(model.joint_placement[0].p.isApprox(Vector3<double>(0, 0, 0.1575)));
  EXPECT_TRUE(model.joint_placement[0].R.isIdentity(1e-15));
  // iiwa_joint_2: rpy="pi/2 0 pi" = Rz(pi) Rx(pi/2), xyz="0 0 0.2025".
  Matrix3<double> R2;
  R2 << -1, 0, 0, 0, 0, 1, 0, 1, 0;
  EXPECT_TRUE(model.joint_placement[1].R.isApprox(R2, 1e-12)) << model.joint_placement[1].R;
  EXPECT_TRUE(model.joint_placement[1].p.isApprox(Vector3<double>(0, 0, 0.2025)));
  EXPECT_TRUE(model.joint_axis[1].isApprox(Vector3<double>(0, 0, 1)));
  // iiwa_link_2's inertial has an identity rotation, so the tensor is taken as written.
  const Inertia<double>& link2 = model.body_inertia[1];
  EXPECT_DOUBLE_EQ(link2.mass, 6.35);
  EXPECT_TRUE(link2.com.isApprox(Vector3<double>(0.0003, 0.059, 0.042)));
  Matrix3<double> I2;
  I2 << 0.0638, 0.0001, 0.00008, 0.0001, 0.0416, 0.0157, 0.00008, 0.0157, 0.0331;
  EXPECT_TRUE(link2.inertia_com.isApprox(I2)) << link2.inertia_com;
  // <limit lower="-2.09439510239" upper="2.09439510239" effort="300" velocity="10"/>, damping 0.5.
  EXPECT_DOUBLE_EQ(model.lower_limit[1], -2.09439510239);
  EXPECT_DOUBLE_EQ(model.upper_limit[1], 2.09439510239);
  EXPECT_DOUBLE_EQ(model.effort_limit[1], 300);
  EXPECT_DOUBLE_EQ(model.velocity_limit[1], 10);
  EXPECT_DOUBLE_EQ(model.damping[1], 0.5);
}

TEST(Urdf, PendulumMergesTheFixedTipIntoTheLastLink) {
  // pendulum1: link0 (mass 1, com y=0.5) carries link-1 (mass 0.01 at y=0.5) on a fixed joint.
  const Model model = load_quietly(kModels + "/pendulums/pendulum1.urdf");
  ASSERT_EQ(model.nbodies(), 1);
  EXPECT_EQ(model.joint_names[0], "joint0");
  EXPECT_EQ(model.joint_type[0], JointType::Continuous);
  const Inertia<double>& body = model.body_inertia[0];
  EXPECT_DOUBLE_EQ(body.mass, 1.01);
  EXPECT_TRUE(body.com.isApprox(Vector3<double>(0, 0.5, 0)));
  // Both centres of mass coincide, so the rotational inertias simply add.
  EXPECT_TRUE(body.inertia_com.diagonal().isApprox(Vector3<double>(0.00494875 + 0.0001, 0.00494174 + 0.0001,
                                                                   0.002219 + 0.0001)));
  EXPECT_DOUBLE_EQ(model.damping[0], 1.0);  // <dynamics damping="1.0" friction="1.0"/>
  EXPECT_TRUE(std::isinf(model.lower_limit[0]));  // continuous: no position limits
}

TEST(Urdf, LaikagoFloatingBaseStartsWithTheFreeJoint) {
  const Model model = load_quietly(kModels + "/laikago/laikago_toes_zup.urdf", true);
  EXPECT_EQ(model.joint_type[0], JointType::Free);
  EXPECT_EQ(model.parent[0], -1);
  EXPECT_EQ(model.body_names[0], "chassis");
  // The chassis: <mass value="13.715"/>, and hip/upper/lower legs hang from it.
  EXPECT_DOUBLE_EQ(model.body_inertia[0].mass, 13.715);
  EXPECT_EQ(model.children[0].size(), 4u);
}

TEST(Urdf, JointTypesInertialFramesAndExtensions) {
  const Model model = load_quietly(kData + "/joints.urdf");
  EXPECT_EQ(model.name, "joints");
  ASSERT_EQ(model.nbodies(), 3);
  EXPECT_EQ(model.nq, 1 + 3 + 7);
  EXPECT_EQ(model.nv, 1 + 3 + 6);

  // hinge: origin rpy = Rx(pi/2), axis "0 0 2" normalised.
  const int hinge = model.joint_id("hinge");
  ASSERT_EQ(hinge, 0);
  EXPECT_EQ(model.joint_type[hinge], JointType::Revolute);
  EXPECT_TRUE(model.joint_placement[hinge].R.isApprox(rot_x(kHalfPi)));
  EXPECT_TRUE(model.joint_placement[hinge].p.isApprox(Vector3<double>(0, 0, 1)));
  EXPECT_TRUE(model.joint_axis[hinge].isApprox(Vector3<double>(0, 0, 1)));
  EXPECT_DOUBLE_EQ(model.lower_limit[0], -0.5);
  EXPECT_DOUBLE_EQ(model.upper_limit[0], 0.75);
  EXPECT_DOUBLE_EQ(model.effort_limit[0], 12);
  EXPECT_DOUBLE_EQ(model.velocity_limit[0], 3);
  EXPECT_DOUBLE_EQ(model.damping[0], 0.25);
  EXPECT_DOUBLE_EQ(model.stiffness[0], 4);
  EXPECT_DOUBLE_EQ(model.q_rest[0], 0.1);

  // turned: principal moments 1 2 3 about axes turned 90 degrees about z -> diag(2, 1, 3).
  const Inertia<double>& turned = model.body_inertia[hinge];
  EXPECT_DOUBLE_EQ(turned.mass, 2);
  EXPECT_TRUE(turned.com.isApprox(Vector3<double>(0.1, 0.2, 0.3)));
  EXPECT_TRUE(turned.inertia_com.isApprox(Vector3<double>(2, 1, 3).asDiagonal().toDenseMatrix(), 1e-12))
      << turned.inertia_com;

  // slide_plane: the plane normal y becomes the joint frame's z (turn by -90 degrees about x),
  // and the sled link frame keeps the pose the file gives it (the joint origin).
  const int planar = model.joint_id("slide_plane");
  ASSERT_EQ(planar, 1);
  EXPECT_EQ(model.joint_type[planar], JointType::Planar);
  const Pose<double>& joint_frame = model.joint_placement[planar];
  EXPECT_TRUE((joint_frame.R * Vector3<double>::UnitZ()).isApprox(Vector3<double>::UnitY()));
  EXPECT_TRUE(joint_frame.R.isApprox(rot_x(-kHalfPi)));
  EXPECT_TRUE(joint_frame.p.isApprox(Vector3<double>(0.5, 0, 0)));
  const int sled_frame = model.frame_id("sled");
  ASSERT_GE(sled_frame, 0);
  const Pose<double> sled_in_turned = joint_frame * model.frames[sled_frame].placement;
  EXPECT_TRUE(sled_in_turned.R.isIdentity(1e-12));
  EXPECT_TRUE(sled_in_turned.p.isApprox(Vector3<double>(0.5, 0, 0)));
  // sled inertia: diag(1,2,3) turned by Rx(pi/2) in the link = diag(1,3,2); in the joint frame,
  // turned back by Rx(pi/2) again: diag(1,2,3).
  EXPECT_TRUE(model.body_inertia[planar].inertia_com.isApprox(Vector3<double>(1, 2, 3).asDiagonal().toDenseMatrix(),
                                                              1e-12))
      << model.body_inertia[planar].inertia_com;

  // free_flight: origin z=0.25 in the sled frame = (0, -0.25, 0) in the planar joint's frame.
  const int free_joint = model.joint_id("free_flight");
  ASSERT_EQ(free_joint, 2);
  EXPECT_EQ(model.joint_type[free_joint], JointType::Free);
  EXPECT_EQ(model.parent[free_joint], planar);
  EXPECT_TRUE(model.joint_placement[free_joint].p.isApprox(Vector3<double>(0, -0.25, 0)));
  EXPECT_TRUE(model.joint_placement[free_joint].R.isApprox(rot_x(kHalfPi)));
}

TEST(Urdf, CartpoleStaticZeroMassBaseIsOnlyAllowedWhenWelded) {
  // cartpole.urdf's slideBar has <mass value="0"/> (PyBullet's "static" convention): harmless
  // welded to the world, but a floating zero-mass base is rejected.
  const Model model = load_quietly(kModels + "/cartpole.urdf");
  EXPECT_EQ(model.parent[0], -1);
  EXPECT_EQ(model.joint_type[0], JointType::Prismatic);
  EXPECT_DOUBLE_EQ(model.lower_limit[0], -15);
  EXPECT_DOUBLE_EQ(model.body_inertia[0].mass, 1);
  try {
    load_quietly(kModels + "/cartpole.urdf", true);
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cartpole.urdf:16"), std::string::npos) << what;  // its <inertia>: rotational inertia without mass
    EXPECT_NE(what.find("inertia='accept'"), std::string::npos) << what;
    EXPECT_NE(what.find("<link name='slideBar'>"), std::string::npos) << what;
  }
}

TEST(Urdf, ParseStringKeepsJointNamesAndBuilderSpecs) {
  const std::string xml = R"(<robot name="two">
  <link name="a"/>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="elbow" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>
</robot>)";
  const ModelBuilder builder = parse_urdf_string(xml, "inline.urdf");
  ASSERT_EQ(builder.joints().size(), 1u);
  EXPECT_EQ(builder.joints()[0].name, "elbow");
  EXPECT_EQ(builder.joints()[0].where.file, "inline.urdf");
  EXPECT_EQ(builder.joints()[0].where.line, 4);
  EXPECT_EQ(builder.links()[1].where.line, 3);
  const Model model = builder.build();
  EXPECT_EQ(model.joint_names[0], "elbow");
  EXPECT_EQ(model.name, "two");
}

// ---------------------------------------------------------------------------------------------
// Bad input: each message names the file, the line and the element.

void expect_mentions(const std::string& what, const std::vector<std::string>& parts) {
  ASSERT_FALSE(what.empty()) << "no ModelError was thrown";
  for (const std::string& part : parts)
    EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
}

TEST(UrdfErrors, TruncatedXml) {
  const std::string what = load_error("truncated.urdf");
  expect_mentions(what, {"truncated.urdf:", "malformed XML"});
  // tinyxml2 reports a line inside the file (it has 12 lines).
  const auto colon = what.find("truncated.urdf:") + std::string("truncated.urdf:").size();
  const int line = std::atoi(what.c_str() + colon);
  EXPECT_GE(line, 1);
  EXPECT_LE(line, 12);
}

TEST(UrdfErrors, UnknownJointType) {
  expect_mentions(load_error("unknown_joint_type.urdf"),
                  {"unknown_joint_type.urdf:10", "<joint name='shoulder'>", "unknown joint type 'ball'"});
}

TEST(UrdfErrors, ZeroMass) {
  // Rotational inertia without mass: no body has it (the <inertia> line is named, with the options).
  expect_mentions(load_error("zero_mass.urdf"),
                  {"zero_mass.urdf:8", "<link name='arm'>", "without mass", "inertia='repair'", "inertia='accept'"});
}

TEST(UrdfErrors, NegativeMass) {
  expect_mentions(load_error("negative_mass.urdf"), {"negative_mass.urdf:7", "<link name='arm'>", "-2.5"});
}

TEST(UrdfErrors, NonPositiveDefiniteInertia) {
  expect_mentions(load_error("non_pd_inertia.urdf"),
                  {"non_pd_inertia.urdf:8", "<link name='arm'>", "negative", "not positive semidefinite",
                   "inertia='repair'", "InertiaPolicy::Accept"});
}

TEST(UrdfErrors, MissingParentLink) {
  expect_mentions(load_error("missing_parent.urdf"),
                  {"missing_parent.urdf:10", "<joint name='shoulder'>", "parent link 'bsae' does not exist"});
}

TEST(UrdfErrors, Cycle) {
  expect_mentions(load_error("cycle.urdf"), {"cycle.urdf:15", "<joint name='upper_to_lower'>", "cycle"});
}

TEST(UrdfErrors, MalformedNumber) {
  expect_mentions(load_error("malformed_number.urdf"),
                  {"malformed_number.urdf:13", "<joint name='shoulder'>", "xyz=\"1 2\"", "<origin>"});
}

TEST(UrdfErrors, NotARobot) {
  try {
    parse_urdf_string("<mujoco model='m'/>", "wrong.urdf");
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    expect_mentions(e.what(), {"wrong.urdf:1", "<mujoco>", "<robot>"});
  }
}

TEST(UrdfErrors, MissingFile) {
  try {
    load_urdf(kData + "/no_such_file.urdf");
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    expect_mentions(e.what(), {"no_such_file.urdf", "cannot open"});
  }
}

TEST(UrdfErrors, LoadRejectsUnknownExtensions) {
  try {
    load(kData + "/robot.sdf");
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    expect_mentions(e.what(), {"robot.sdf", "'.sdf'"});
  }
  // .urdf goes to the URDF loader, .xml to the MJCF loader: the swimmer's two files describe the
  // same 7-DoF robot with different joint names.
  const Model from_urdf = load(kModels + "/swimmer05/swimmer05.urdf");
  const Model from_mjcf = load(kModels + "/swimmer05/model.xml");
  EXPECT_EQ(from_urdf.nq, 7);
  EXPECT_EQ(from_mjcf.nq, 7);
  EXPECT_GE(from_urdf.joint_id("world_xslide"), 0);
  EXPECT_GE(from_mjcf.joint_id("rootx"), 0);
}

// ---------------------------------------------------------------------------------------------
// Meshes

TEST(UrdfMeshes, MissingMeshOnlyWarns) {
  std::vector<std::string> warnings;
  const Model model = load_quietly(kData + "/missing_mesh.urdf", false, &warnings);
  EXPECT_EQ(model.nq, 1);
  ASSERT_EQ(warnings.size(), 1u);
  expect_mentions(warnings[0], {"missing_mesh.urdf:11", "<link name='arm'>", "meshes/does_not_exist.stl"});
}

TEST(UrdfMeshes, ShippedLaikagoWithoutMeshesWarnsPerMesh) {
  std::vector<std::string> warnings;
  load_quietly(kModels + "/laikago/laikago_toes_zup.urdf", true, &warnings);
  EXPECT_FALSE(warnings.empty());
  bool chassis = false;
  for (const auto& w : warnings) chassis = chassis || w.find("chassis_zup.obj") != std::string::npos;
  EXPECT_TRUE(chassis);
}

TEST(UrdfMeshes, RelativeMeshesNextToTheFileAreFound) {
  // The shared copy of Laikago keeps its meshes beside the URDF: every one resolves, no mesh warning
  // (its PyBullet <contact> stiffness and damping, which gradyn does not simulate, do warn).
  const std::string path = std::string(GRADYN_SHARED_MODELS) + "/laikago/laikago_toes_zup.urdf";  // optional
  if (!fs::exists(path)) GTEST_SKIP() << "no shared models at " << path;
  std::vector<std::string> warnings;
  load_quietly(path, true, &warnings);
  for (const std::string& w : warnings) EXPECT_EQ(w.find("mesh"), std::string::npos) << w;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("<contact><stiffness>"), std::string::npos) << warnings[0];
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("gradyn_urdf_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string robot_with_meshes(const std::vector<std::string>& filenames) {
  std::string xml = "<robot name='meshy'>\n  <link name='body'>\n";
  for (const auto& f : filenames)
    xml += "    <collision><geometry><mesh filename='" + f + "'/></geometry></collision>\n";
  return xml + "  </link>\n</robot>\n";
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(UrdfMeshes, PackageUrlsResolveThroughAncestorsAndRosPackagePath) {
  TempDir tmp;
  const fs::path package = tmp.path() / "ws" / "my_robot_description";
  // Collision meshes are read (convex hulls): a tetrahedron in ASCII STL.
  const std::string tetrahedron =
      "solid t\n"
      "facet normal 0 0 -1\nouter loop\nvertex 0 0 0\nvertex 0 1 0\nvertex 1 0 0\nendloop\nendfacet\n"
      "facet normal 0 -1 0\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 0 1\nendloop\nendfacet\n"
      "facet normal -1 0 0\nouter loop\nvertex 0 0 0\nvertex 0 0 1\nvertex 0 1 0\nendloop\nendfacet\n"
      "facet normal 1 1 1\nouter loop\nvertex 1 0 0\nvertex 0 1 0\nvertex 0 0 1\nendloop\nendfacet\n"
      "endsolid t\n";
  write_file(package / "meshes" / "body.stl", tetrahedron);
  write_file(tmp.path() / "elsewhere" / "other_pkg" / "arm.stl", tetrahedron);
  const fs::path urdf = package / "urdf" / "robot.urdf";
  write_file(urdf, robot_with_meshes({"package://my_robot_description/meshes/body.stl",  // ancestor is the package
                                      "../meshes/body.stl",                                // relative to the URDF
                                      "package://other_pkg/arm.stl"}));                    // only via ROS_PACKAGE_PATH

  {
    ScopedEnv env("ROS_PACKAGE_PATH", "");
    std::vector<std::string> warnings;
    LoadOptions options;
    options.warnings = &warnings;
    parse_urdf(urdf.string(), options);
    ASSERT_EQ(warnings.size(), 1u);
    expect_mentions(warnings[0], {"robot.urdf:5", "package://other_pkg/arm.stl"});
  }
  {
    ScopedEnv env("ROS_PACKAGE_PATH", "/nonexistent:" + (tmp.path() / "elsewhere").string());
    std::vector<std::string> warnings;
    LoadOptions options;
    options.warnings = &warnings;
    parse_urdf(urdf.string(), options);
    EXPECT_TRUE(warnings.empty()) << warnings.front();
  }
  // A package folder inside an ancestor (a workspace holding the package) is found too.
  const fs::path beside = tmp.path() / "ws" / "robots" / "robot.urdf";
  write_file(beside, robot_with_meshes({"package://my_robot_description/meshes/body.stl",
                                        "package://my_robot_description/meshes/missing.stl"}));
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  parse_urdf(beside.string(), options);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("missing.stl"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace gradyn
