// Nothing is dropped in silence: every URDF and MJCF element or attribute that gradyn reads but does
// not simulate gives one warning per kind and load, naming the file, the line and the element of the
// first occurrence, how many there are and where the others are. Purely visual elements stay silent.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gradyn/io/load.hpp"

namespace gradyn {
namespace {

std::vector<std::string> urdf_warnings(const std::string& xml) {
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  parse_urdf_string(xml, "w.urdf", options).build();
  return warnings;
}

std::vector<std::string> mjcf_warnings(const std::string& xml) {
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  parse_mjcf_string(xml, "w.xml", options).build();
  return warnings;
}

std::string joined(const std::vector<std::string>& w) {
  std::string s;
  for (const std::string& x : w) s += x + "\n";
  return s;
}

// A two-link URDF, line by line: line 1 <robot>, 2 link a, 3 link b (+ link_extra), 4 joint j (+
// joint_extra), 5 the rest (robot_extra).
std::string urdf(const std::string& joint_extra = "", const std::string& robot_extra = "",
                 const std::string& link_extra = "") {
  return "<robot name='r'>\n"
         "<link name='a'/>\n"
         "<link name='b'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/>"
         "</inertial>" + link_extra + "</link>\n"
         "<joint name='j' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/>"
         "<limit lower='-1' upper='1' effort='1' velocity='1'/>" + joint_extra + "</joint>\n" +
         robot_extra + "\n</robot>\n";
}

struct Case {
  const char* id;
  std::string xml;
  int line;                         // the line the warning names
  std::vector<std::string> words;   // the warning holds these too
};

void expect_one_warning(const Case& c, const std::vector<std::string>& warnings, const std::string& file) {
  ASSERT_EQ(warnings.size(), 1u) << c.id << ":\n" << joined(warnings);
  const std::string& w = warnings[0];
  EXPECT_NE(w.find(file + ":" + std::to_string(c.line) + ":"), std::string::npos) << c.id << ": " << w;
  for (const std::string& word : c.words) EXPECT_NE(w.find(word), std::string::npos) << c.id << ": '" << word << "' not in " << w;
}

TEST(LoadWarnings, EachUnsupportedUrdfElementWarns) {
  const std::vector<Case> cases = {
      {"mimic of an unknown joint", urdf("<mimic joint='k' multiplier='2'/>"), 4,
       {"<joint name='j'>", "<mimic joint='k'>", "names no joint", "ignored"}},
      {"mimic on a fixed joint",
       urdf("", "<link name='c'/><joint name='f' type='fixed'><parent link='b'/><child link='c'/><mimic joint='j'/></joint>"),
       5, {"<joint name='f'>", "<mimic joint='j'>", "nothing to couple"}},
      {"transmission", urdf("", "<transmission name='t'><type>x</type></transmission>"), 5,
       {"<transmission name='t'>", "not read by gradyn"}},
      {"ros2_control", urdf("", "<ros2_control name='hw' type='system'/>"), 5, {"<ros2_control>", "not read"}},
      {"gazebo", urdf("", "<gazebo reference='b'><mu1>1000</mu1></gazebo>"), 5,
       {"<link name='b'>", "<gazebo>", "Gazebo"}},
      {"pybullet contact", urdf("", "", "<contact><lateral_friction value='1'/><rolling_friction value='0.1'/></contact>"),
       3, {"<link name='b'>", "<contact><rolling_friction>", "PyBullet"}},
      {"joint_properties", urdf("<joint_properties damping='0.5' friction='0'/>"), 4,
       {"<joint_properties>", "old form of <dynamics>"}},
      {"unknown robot element", urdf("", "<sensor name='cam'/>"), 5, {"<robot><sensor>", "ignored"}},
      {"unknown joint element", urdf("<spring k='3'/>"), 4, {"<joint name='j'>", "<joint><spring>"}},
      {"unknown link element", urdf("", "", "<self_collision_checking/>"), 3, {"<link><self_collision_checking>"}},
  };
  for (const Case& c : cases) expect_one_warning(c, urdf_warnings(c.xml), "w.urdf");
}

TEST(LoadWarnings, HarmlessUrdfElementsAreSilent) {
  // visual, material, calibration, safety_controller, dry friction (simulated), an all-zero <joint_properties>
  const std::string xml = urdf(
      "<dynamics damping='0.1' friction='0.5'/><calibration rising='0'/><safety_controller k_velocity='1'/>"
      "<joint_properties damping='0' friction='0'/>",
      "<material name='m'><color rgba='1 0 0 1'/></material>",
      "<visual><geometry><box size='1 1 1'/></geometry></visual>");
  const std::vector<std::string> w = urdf_warnings(xml);
  EXPECT_TRUE(w.empty()) << joined(w);
}

TEST(LoadWarnings, OneWarningPerKindNamingHowManyAndWhere) {
  std::string xml = "<robot name='r'>\n<link name='l0'/>\n";
  for (int i = 1; i <= 3; ++i)
    xml += "<link name='l" + std::to_string(i) +
           "'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
           "<joint name='j" + std::to_string(i) + "' type='continuous'><parent link='l" + std::to_string(i - 1) +
           "'/><child link='l" + std::to_string(i) + "'/><spring k='1'/></joint>\n";
  xml += "</robot>\n";
  const std::vector<std::string> w = urdf_warnings(xml);
  ASSERT_EQ(w.size(), 1u) << joined(w);
  // first occurrence in full, then the count and the others' lines and elements
  for (const char* word : {"w.urdf:4: <joint name='j1'>", "3 in all", "at line 6 <joint name='j2'>",
                           "at line 8 <joint name='j3'>", "<joint><spring>"})
    EXPECT_NE(w[0].find(word), std::string::npos) << word << " not in " << w[0];
}

// An MJCF model, line by line: 1 <mujoco>, 2 head (sections before the world), 3 <worldbody>, 4 body b
// (+ body_extra inside it), 5 its joint (+ joint attributes), 6 its geom (+ geom attributes), 7
// </body></worldbody>, 8 tail (sections after the world), 9 </mujoco>.
std::string mjcf(const std::string& head = "", const std::string& joint_attrs = "", const std::string& geom_attrs = "",
                 const std::string& tail = "", const std::string& body_attrs = "", const std::string& body_extra = "") {
  return "<mujoco model='m'>\n" + head + "\n<worldbody>\n<body name='b' " + body_attrs + ">" + body_extra +
         "\n<joint name='h' type='hinge' " + joint_attrs + "/>\n<geom name='g' type='sphere' size='0.1' " +
         geom_attrs + "/>\n</body></worldbody>\n" + tail + "\n</mujoco>\n";
}

TEST(LoadWarnings, EachUnsupportedMjcfElementWarns) {
  const std::vector<Case> cases = {
      {"weld torquescale", mjcf("", "", "", "<equality><weld name='e' body1='b' torquescale='0.5'/></equality>"), 8,
       {"<weld name='e'>", "torquescale", "stiff"}},
      {"equality flex", mjcf("", "", "", "<equality><flex name='e' flex='f'/></equality>"), 8,
       {"<flex name='e'>", "<equality><flex>", "not simulated"}},
      {"inactive connect", mjcf("", "", "", "<equality><connect name='e' body1='b' anchor='0 0 0' active='false'/></equality>"),
       8, {"<connect name='e'>", "active=\"false\"", "skipped"}},
      {"inactive equality", mjcf("", "", "", "<equality><joint name='e' joint1='h' active='false'/></equality>"), 8,
       {"<joint name='e'>", "active=\"false\"", "skipped"}},
      {"equality softness", mjcf("", "", "", "<equality><joint name='e' joint1='h' solref='0.02 1'/></equality>"), 8,
       {"<joint name='e'>", "solref", "softness"}},
      {"friction softness", mjcf("", "frictionloss='2' solreffriction='0.02 1'"), 5,
       {"<joint name='h'>", "solreffriction", "softness"}},
      {"spatial tendon", mjcf("", "", "", "<tendon><spatial name='t'><site site='s'/></spatial></tendon>"), 8,
       {"<spatial name='t'>", "<tendon><spatial name='t'>", "spatial tendons"}},
      {"tendon frictionloss", mjcf("", "", "", "<tendon><fixed name='t' frictionloss='1'><joint joint='h' coef='1'/></fixed></tendon>"), 8,
       {"<fixed name='t'>", "frictionloss", "dry friction along the tendon"}},
      {"tendon armature", mjcf("", "", "", "<tendon><fixed name='t' armature='0.1'><joint joint='h' coef='1'/></fixed></tendon>"), 8,
       {"<fixed name='t'>", "armature", "not simulated"}},
      {"tendon dead band", mjcf("", "", "", "<tendon><fixed name='t' stiffness='1' springlength='0 0.5'><joint joint='h' coef='1'/></fixed></tendon>"), 8,
       {"<fixed name='t'>", "dead band", "first one"}},
      {"tendon softness", mjcf("", "", "", "<tendon><fixed name='t' range='-1 1' solreflimit='0.02 1'><joint joint='h' coef='1'/></fixed></tendon>"), 8,
       {"<fixed name='t'>", "solreflimit", "softness"}},
      {"tendon element", mjcf("", "", "", "<tendon><fixed name='t'><joint joint='h' coef='1'/><site site='s'/></fixed></tendon>"), 8,
       {"<fixed><site>", "only <joint joint coef>"}},
      {"sensor", mjcf("", "", "", "<sensor><subtreecom name='s' body='b'/></sensor>"), 8,
       {"<subtreecom name='s'>", "<sensor><subtreecom>", "not computed by gradyn", "gradyn.sensors"}},
      {"sensor frame", mjcf("", "", "", "<sensor><framepos name='s' objtype='body' objname='b'/></sensor>"), 8,
       {"<framepos name='s'>", "objtype=\"body\"", "not computed by gradyn"}},
      {"keyframe", mjcf("", "", "", "<keyframe><key name='home' qpos='0.3'/></keyframe>"), 8,
       {"<key name='home'>", "<keyframe><key>", "q0"}},
      {"deformable", mjcf("", "", "", "<deformable><flex name='f' dim='1'/></deformable>"), 8, {"<deformable><flex>"}},
      {"extension", mjcf("<extension><plugin plugin='p'/></extension>"), 2, {"<extension><plugin>", "plugins"}},
      {"unknown section", mjcf("", "", "", "<wobble/>"), 8, {"<wobble>", "not a section"}},
      {"actuatorgravcomp", mjcf("", "actuatorgravcomp='true'"), 5, {"actuatorgravcomp", "gravity compensation"}},
      {"joint softness", mjcf("", "range='-1 1' solreflimit='0.02 1'"), 5, {"<joint name='h'>", "solreflimit", "softness"}},
      {"geom softness", mjcf("", "", "solref='0.02 1' solimp='0.9 0.95 0.001'"), 6,
       {"<geom name='g'>", "solref, solimp", "softness"}},
      {"condim", mjcf("", "", "condim='1'"), 6, {"<geom name='g'>", "condim=\"1\"", "frictionless"}},
      {"margin", mjcf("", "", "margin='0.01'"), 6, {"<geom name='g'>", "margin"}},
      {"gravcomp", mjcf("", "", "", "", "gravcomp='1'"), 4, {"<body name='b'>", "gravcomp=\"1\"", "gravity compensation"}},
      {"mocap", "<mujoco model='m'>\n\n<worldbody>\n<body name='mc' mocap='true'><geom size='0.1'/></body>\n"
                "<body name='b'><joint type='hinge'/><geom size='0.1'/></body>\n</worldbody>\n</mujoco>\n",
       4, {"<body name='mc'>", "mocap"}},
      {"body plugin", mjcf("", "", "", "", "", "<plugin plugin='p'/>"), 4, {"<body><plugin>"}},
      {"unknown body element", mjcf("", "", "", "", "", "<wheel/>"), 4, {"<body><wheel>"}},
      {"flag", mjcf("<option><flag contact='disable'/></option>"), 2, {"<flag contact=\"disable\">", "not read"}},
      {"contact pair", mjcf("", "", "", "<contact><pair geom1='g' geom2='g'/></contact>"), 8, {"<contact><pair>"}},
  };
  for (const Case& c : cases) expect_one_warning(c, mjcf_warnings(c.xml), "w.xml");
}

TEST(LoadWarnings, HarmlessMjcfElementsAreSilent) {
  // drawing, memory sizes, user data, sites, cameras, lights, MuJoCo's solver settings and solver
  // flags, gravity flags, limit softness on an unlimited joint, and softness on geoms that never collide
  const std::string xml = mjcf(
      "<visual><global fovy='45'/></visual><statistic extent='2'/><size memory='1M'/><custom><numeric name='n' "
      "data='1'/></custom><option timestep='0.002' integrator='RK4' cone='elliptic' impratio='10'><flag "
      "gravity='enable' eulerdamp='disable' warmstart='disable'/></option>",
      "margin='0.1' solreflimit='0.02 1'", "rgba='1 0 0 1' group='1'", "", "",
      "<site name='s'/><camera name='c' mode='trackcom' focal='0.01 0.01'/><light name='l'/>");  // an unlimited
  // joint's limit softness: moot; a camera's mode and intrinsics are said when it is used (Camera.named)
  std::vector<std::string> w = mjcf_warnings(xml);
  EXPECT_TRUE(w.empty()) << joined(w);
  w = mjcf_warnings(mjcf("", "", "contype='0' conaffinity='0' condim='1' solref='0.02 1'"));
  EXPECT_TRUE(w.empty()) << joined(w);
  // simulated: dry friction, joint couplings, connections, welds and fixed tendons
  w = mjcf_warnings(mjcf("", "frictionloss='2'", "", "<equality><joint name='e' joint1='h' polycoef='0.1'/>"
                                                      "<connect body1='b' anchor='0 0 0.3'/><weld body1='b'/></equality>"
                                                      "<tendon><fixed name='t' range='-1 1' stiffness='2' damping='0.1' "
                                                      "springlength='0.2'><joint joint='h' coef='1'/></fixed></tendon>"));
  EXPECT_TRUE(w.empty()) << joined(w);
}

TEST(LoadWarnings, MjcfGroupsPerKindAcrossElements) {
  const std::string xml = mjcf("", "", "", "<equality><flex flex='t'/>\n<flex flex='u'/>\n"
                                           "<flexvert flex='f'/></equality>\n<sensor><subtreecom body='b'/></sensor>");
  const std::vector<std::string> w = mjcf_warnings(xml);
  ASSERT_EQ(w.size(), 2u) << joined(w);
  EXPECT_NE(w[0].find("w.xml:8: <flex>: <equality><flex>"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("3 in all"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("<equality><flex> at line 9 <flex>"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("<equality><flexvert> at line 10 <flexvert>"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("w.xml:11: <subtreecom>: <sensor><subtreecom>"), std::string::npos) << w[1];
}

TEST(LoadWarnings, MissingMeshIsAnErrorInMjcfAndAWarningInUrdf) {
  // MJCF: meshes give bodies their mass, as in MuJoCo a missing file is an error naming the <mesh>
  try {
    mjcf_warnings("<mujoco model='m'>\n<asset><mesh name='m' file='nowhere/missing.stl'/></asset>\n<worldbody>"
                  "<body name='b'><joint type='hinge'/><geom type='mesh' mesh='m'/></body></worldbody>\n</mujoco>\n");
    ADD_FAILURE() << "a missing MJCF mesh loaded";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("w.xml:2: <mesh name='m'>"), std::string::npos) << e.what();
  }
  // URDF: the dynamics come from <inertial>; the link loses that collision shape, with a warning
  const std::vector<std::string> w = urdf_warnings(
      urdf("", "", "<collision><geometry><mesh filename='nowhere/missing.stl'/></geometry></collision>"));
  ASSERT_EQ(w.size(), 1u) << joined(w);
  EXPECT_NE(w[0].find("w.urdf:3: <link name='b'>: <collision> mesh file 'nowhere/missing.stl' not found"),
            std::string::npos)
      << w[0];
}

}  // namespace
}  // namespace gradyn
