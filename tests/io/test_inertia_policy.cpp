// Inertias: welded massless links and point masses load (the check runs after fixed joints are
// merged, on the composite inertia of each joint's subtree at q0); a joint that moves no inertia
// along its motion is refused naming the joint; a tensor no rigid body has is refused naming the
// options that repair it (MuJoCo's balanceinertia) or accept it as written (as Pinocchio does), and
// both options work.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <sstream>
#include <string>
#include <vector>

#include "gradyn/dynamics/crba.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/data.hpp"

namespace gradyn {
namespace {

std::string link(const std::string& name, const std::string& mass, const std::string& moments,
                 const std::string& com = "0 0 0") {
  std::string m[3];
  std::istringstream(moments) >> m[0] >> m[1] >> m[2];
  return "<link name='" + name + "'><inertial><origin xyz='" + com + "'/><mass value='" + mass + "'/><inertia ixx='" +
         m[0] + "' iyy='" + m[1] + "' izz='" + m[2] + "' ixy='0' ixz='0' iyz='0'/></inertial></link>\n";
}

std::string joint(const std::string& name, const std::string& type, const std::string& parent, const std::string& child,
                  const std::string& axis = "0 0 1", const std::string& xyz = "0 0 0") {
  return "<joint name='" + name + "' type='" + type + "'><origin xyz='" + xyz + "'/><parent link='" + parent +
         "'/><child link='" + child + "'/><axis xyz='" + axis + "'/></joint>\n";
}

Model load(const std::string& body, InertiaPolicy policy = InertiaPolicy::Strict,
           std::vector<std::string>* warnings = nullptr, bool floating = false) {
  std::vector<std::string> sink;
  LoadOptions options;
  options.inertia = policy;
  options.floating_base = floating;
  options.warnings = warnings ? warnings : &sink;
  BuildOptions build;
  build.floating_base = floating;
  return parse_urdf_string("<robot name='r'>\n" + body + "</robot>\n", "i.urdf", options).build(build);
}

std::string error_of(const std::string& body, InertiaPolicy policy = InertiaPolicy::Strict, bool floating = false) {
  try {
    load(body, policy, nullptr, floating);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

void expect_has(const std::string& text, const std::vector<std::string>& words) {
  ASSERT_FALSE(text.empty()) << "no error";
  for (const std::string& w : words) EXPECT_NE(text.find(w), std::string::npos) << "'" << w << "' not in: " << text;
}

TEST(InertiaPolicy, WeldedPointMassAndMasslessTipsLoad) {
  // baxter's gripper tip: mass 1e-4, zero rotational inertia, welded to a hand that is fine
  const Model m = load("<link name='base'/>\n" + link("hand", "1", "0.01 0.01 0.01") + link("tip", "1e-4", "0 0 0") +
                       "<link name='frame'/>\n" + link("tool", "0", "0 0 0") + joint("j", "revolute", "base", "hand") +
                       joint("weld", "fixed", "hand", "tip", "0 0 1", "0 0.1 0") +
                       joint("weld2", "fixed", "hand", "frame") + joint("weld3", "fixed", "tip", "tool"));
  ASSERT_EQ(m.nbodies(), 1);
  EXPECT_DOUBLE_EQ(m.body_inertia[0].mass, 1 + 1e-4);
}

TEST(InertiaPolicy, PointMassesOnMovingBodiesLoadWhenTheJointsCarryInertia) {
  // a pendulum bob (a point mass off the axis) and a point mass at the end of a massless link
  const Model m = load("<link name='base'/>\n" + link("bob", "2", "0 0 0", "0.5 0 0") + "<link name='arm'/>\n" +
                       link("tip", "1", "0 0 0") + joint("j1", "revolute", "base", "bob") +
                       joint("j2", "revolute", "base", "arm", "0 1 0") +
                       joint("j3", "fixed", "arm", "tip", "0 0 1", "0 0 -1"));
  Data data(m);
  const Eigen::MatrixXd M = crba(m, data, m.q0);
  EXPECT_NEAR(M(0, 0), 2 * 0.25, 1e-12);
  EXPECT_NEAR(M(1, 1), 1.0, 1e-12);
}

TEST(InertiaPolicy, AJointThatMovesNoInertiaIsRefusedNamingIt) {
  // a point mass on the hinge's own axis has no moment about it
  expect_has(error_of("<link name='base'/>\n" + link("bob", "2", "0 0 0", "0 0 0.5") +
                      joint("spin", "revolute", "base", "bob")),
             {"i.urdf:4", "<joint name='spin'>", "moves no inertia", "armature"});
  // a massless link (the old check)
  expect_has(error_of("<link name='base'/>\n<link name='ghost'/>\n" + joint("j", "revolute", "base", "ghost")),
             {"<joint name='j'>", "moves only massless links"});
  // a floating base that is one point mass: it does not turn
  expect_has(error_of(link("ball", "1", "0 0 0"), InertiaPolicy::Strict, true), {"joint 'root' (free)", "moves no inertia"});
}

TEST(InertiaPolicy, ImpossibleTensorsNameTheOptions) {
  const std::string arm = "<link name='base'/>\n" + link("arm", "1", "0.1 0.1 1") + joint("j", "revolute", "base", "arm");
  expect_has(error_of(arm), {"i.urdf:3", "<link name='arm'>", "triangle inequality", "inertia='repair'",
                             "inertia='accept'", "InertiaPolicy::Repair"});
  const std::string negative =
      "<link name='base'/>\n" + link("arm", "1", "-0.1 0.2 0.2") + joint("j", "revolute", "base", "arm");
  expect_has(error_of(negative), {"<link name='arm'>", "negative", "inertia='repair'"});
  const std::string massless = "<link name='base'/>\n" + link("arm", "0", "1 1 1") + joint("j", "revolute", "base", "arm");
  expect_has(error_of(massless), {"<link name='arm'>", "without mass", "inertia='accept'"});
}

TEST(InertiaPolicy, RepairBalancesTheMomentsAsMuJoCoDoes) {
  std::vector<std::string> warnings;
  const std::string arm = "<link name='base'/>\n" + link("arm", "1", "0.1 0.1 1") + joint("j", "revolute", "base", "arm");
  const Model m = load(arm, InertiaPolicy::Repair, &warnings);
  // MuJoCo's balanceinertia: all three moments set to their mean, (0.1 + 0.1 + 1) / 3 = 0.4
  EXPECT_TRUE(m.body_inertia[0].inertia_com.isApprox(0.4 * Matrix3<double>::Identity(), 1e-14));
  ASSERT_EQ(warnings.size(), 1u);
  expect_has(warnings[0], {"i.urdf:3", "<link name='arm'>", "repaired (inertia='repair')", "balanceinertia"});
  // a negative moment too; a massless tensor is zeroed (and then the joint moves nothing)
  EXPECT_TRUE(load("<link name='base'/>\n" + link("arm", "1", "-0.1 0.4 0.3") + joint("j", "revolute", "base", "arm"),
                   InertiaPolicy::Repair)
                  .body_inertia[0]
                  .inertia_com.isApprox(0.2 * Matrix3<double>::Identity(), 1e-14));
  expect_has(error_of("<link name='base'/>\n" + link("arm", "0", "1 1 1") + joint("j", "revolute", "base", "arm"),
                      InertiaPolicy::Repair),
             {"moves only massless links"});
  // all negative: no repair
  expect_has(error_of("<link name='base'/>\n" + link("arm", "1", "-1 -1 -1") + joint("j", "revolute", "base", "arm"),
                      InertiaPolicy::Repair),
             {"cannot be repaired"});
}

TEST(InertiaPolicy, AcceptKeepsTheTensorAsWritten) {
  std::vector<std::string> warnings;
  const std::string two = "<link name='base'/>\n" + link("a", "1", "0.1 0.1 1") + link("b", "1", "0.1 0.1 1") +
                          joint("j", "revolute", "base", "a") + joint("k", "revolute", "a", "b", "1 0 0");
  const Model m = load(two, InertiaPolicy::Accept, &warnings);
  EXPECT_TRUE(m.body_inertia[1].inertia_com.isApprox(Eigen::Vector3d(0.1, 0.1, 1).asDiagonal().toDenseMatrix(), 1e-14));
  ASSERT_EQ(warnings.size(), 1u) << warnings[0];
  expect_has(warnings[0], {"i.urdf:3", "<link name='a'>", "kept as written (inertia='accept')", "2 in all",
                           "at line 4 <link name='b'>"});
}

TEST(InertiaPolicy, MjcfBalanceInertiaRepairs) {
  const std::string body = "<worldbody>\n<body name='b'><joint type='hinge'/>\n"
                           "<inertial pos='0 0 0' mass='1' diaginertia='1 1 5'/></body>\n</worldbody>\n</mujoco>\n";
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  try {
    parse_mjcf_string("<mujoco>\n" + body, "b.xml", options).build();
    ADD_FAILURE() << "an impossible diaginertia loaded";
  } catch (const ModelError& e) {
    expect_has(e.what(), {"b.xml:4: <inertial>", "triangle inequality", "inertia='repair'"});
  }
  const Model m =
      parse_mjcf_string("<mujoco>\n<compiler balanceinertia='true'/>\n" + body, "b.xml", options).build();
  EXPECT_TRUE(m.body_inertia[0].inertia_com.isApprox((7.0 / 3) * Matrix3<double>::Identity(), 1e-14));
  ASSERT_EQ(warnings.size(), 1u);
  expect_has(warnings[0], {"b.xml:5: <inertial>", "repaired"});
  // an explicit accept wins over the file's balanceinertia
  warnings.clear();
  options.inertia = InertiaPolicy::Accept;
  const Model kept =
      parse_mjcf_string("<mujoco>\n<compiler balanceinertia='true'/>\n" + body, "b.xml", options).build();
  EXPECT_NEAR(kept.body_inertia[0].inertia_com(2, 2), 5, 1e-14);
}

}  // namespace
}  // namespace gradyn
