// Sensors (sensors/sensors.hpp): readings against closed forms on small models, the MJCF sensors the
// loader reads, its errors and warnings. MuJoCo's own sensordata is the oracle in
// tests/python/test_sensors.py.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradyn/gradyn.hpp"
#include "gradyn/model/serialize.hpp"

namespace gradyn {
namespace {

using V3 = Eigen::Vector3d;

// A pendulum (hinge about y at the origin) with a site at (l, 0, 0) on its rod, and a free box.
const char* kPendulum = R"(<mujoco model='p'>
  <option gravity='0 0 -9.81'/>
  <worldbody>
    <site name='anchor' pos='0 0 0.5'/>
    <body name='rod'>
      <joint name='hinge' type='hinge' axis='0 1 0'/>
      <geom type='capsule' fromto='0 0 0 1 0 0' size='0.05'/>
      <site name='tip' pos='1 0 0' size='0.1'/>
    </body>
    <body name='box' pos='0 0 3'>
      <freejoint name='float'/>
      <geom type='box' size='0.1 0.2 0.3'/>
      <site name='imu' pos='0.1 0 0' euler='0 0 90'/>
    </body>
  </worldbody>
  <sensor>
    <jointpos name='angle' joint='hinge'/>
    <jointvel name='rate' joint='hinge' cutoff='2'/>
    <framepos name='tip_pos' objtype='site' objname='tip'/>
    <framepos name='tip_from_anchor' objtype='site' objname='tip' reftype='site' refname='anchor'/>
    <framequat name='tip_quat' objtype='site' objname='tip'/>
    <framelinvel name='tip_vel' objtype='site' objname='tip'/>
    <frameangvel name='rod_omega' objtype='xbody' objname='rod'/>
    <gyro name='gyro' site='imu'/>
    <accelerometer name='acc' site='imu' noise='0.01'/>
    <accelerometer name='tip_acc' site='tip'/>
  </sensor>
</mujoco>
)";

Model pendulum(std::vector<std::string>* warnings = nullptr) {
  LoadOptions options;
  options.warnings = warnings;
  return parse_mjcf_string(kPendulum, "p.xml", options).build();
}

Eigen::VectorXd read(const Model& m, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& qacc) {
  Data data(m);
  Eigen::VectorXd r(m.nsensordata());
  sensor_readings<double>(m, data, q, v, qacc, Eigen::VectorXd(), r);
  return r;
}

TEST(Sensors, LoaderReadsNamesSizesAndAttributes) {
  std::vector<std::string> warnings;
  const Model m = pendulum(&warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(m.sensors.size(), 10u);
  const char* names[] = {"angle", "rate", "tip_pos", "tip_from_anchor", "tip_quat", "tip_vel", "rod_omega", "gyro",
                         "acc", "tip_acc"};
  const int dims[] = {1, 1, 3, 3, 4, 3, 3, 3, 3, 3};
  int adr = 0;
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(m.sensors[k].name, names[k]);
    EXPECT_EQ(m.sensors[k].dim(), dims[k]) << names[k];
    EXPECT_EQ(m.sensors[k].adr, adr) << names[k];
    adr += dims[k];
  }
  EXPECT_EQ(m.nsensordata(), adr);
  EXPECT_EQ(m.sensors[1].cutoff, 2.0);
  EXPECT_EQ(m.sensors[8].noise, 0.01);
  EXPECT_EQ(m.frames[m.sensors[2].object].name, "tip");
  EXPECT_EQ(m.frames[m.sensors[2].object].kind, FrameKind::Site);
  EXPECT_EQ(m.frames[m.sensors[3].reference].name, "anchor");
  EXPECT_EQ(m.frames[m.sensors[3].reference].body, -1);
  EXPECT_EQ(m.frames[m.sensors[6].object].kind, FrameKind::Link);
  EXPECT_EQ(m.sensors[8].where.line, 25);
  EXPECT_GE(m.frame_id("imu"), 0);
}

TEST(Sensors, PendulumReadingsMatchClosedForms) {
  const Model m = pendulum();
  const double th = 0.4, w = 1.5, alpha = -0.7;
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(m.nv), a = Eigen::VectorXd::Zero(m.nv);
  q[0] = th, v[0] = w, a[0] = alpha;
  const Eigen::VectorXd r = read(m, q, v, a);
  // rotation about +y by th takes (1, 0, 0) to (cos th, 0, -sin th)
  const V3 tip(std::cos(th), 0, -std::sin(th));
  EXPECT_NEAR(r[0], th, 1e-15);
  EXPECT_NEAR(r[1], w, 1e-15);
  EXPECT_LT((r.segment<3>(2) - tip).norm(), 1e-14);
  EXPECT_LT((r.segment<3>(5) - (tip - V3(0, 0, 0.5))).norm(), 1e-14);
  const Eigen::Vector4d quat(std::cos(th / 2), 0, std::sin(th / 2), 0);  // (w, x, y, z)
  EXPECT_LT((r.segment<4>(8) - quat).norm(), 1e-14);
  const V3 omega(0, w, 0);
  EXPECT_LT((r.segment<3>(12) - omega.cross(tip)).norm(), 1e-14);
  EXPECT_LT((r.segment<3>(15) - omega).norm(), 1e-14);
  // tip accelerometer: alpha x r + omega x (omega x r) - g, in the tip frame (rotated by th about y)
  const V3 a_world = V3(0, alpha, 0).cross(tip) + omega.cross(omega.cross(tip)) - m.gravity;
  const Matrix3<double> R = Eigen::AngleAxisd(th, V3::UnitY()).toRotationMatrix();
  EXPECT_LT((r.segment<3>(24) - R.transpose() * a_world).norm(), 1e-13);
}

TEST(Sensors, ImuOnAFreeBody) {
  const Model m = pendulum();
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(m.nv), a = Eigen::VectorXd::Zero(m.nv);
  // at rest (qacc = 0, supported): the accelerometer reads +g up, in the site's axes (yawed 90 degrees)
  Eigen::VectorXd r = read(m, q, v, a);
  EXPECT_LT((r.segment<3>(18)).norm(), 1e-15);
  EXPECT_LT((r.segment<3>(21) - V3(0, 0, 9.81)).norm(), 1e-14);
  // free fall: it reads zero
  a.segment<3>(1) = m.gravity;  // the box's linear acceleration (body frame = world at q0)
  r = read(m, q, v, a);
  EXPECT_LT(r.segment<3>(21).norm(), 1e-14);
  // spinning about the body z at rate s: the gyro reads it in the site's axes (z stays z), and the
  // site 0.1 m off the axis feels the centripetal pull -s^2 0.1 along body x = site -y
  const double s = 3;
  a.setZero();
  v[1 + 5] = s;  // free joint v = (v_lin body, omega body); the box's dofs start at 1
  r = read(m, q, v, a);
  EXPECT_LT((r.segment<3>(18) - V3(0, 0, s)).norm(), 1e-14);
  EXPECT_LT((r.segment<3>(21) - V3(0, s * s * 0.1, 9.81)).norm(), 1e-13);
}

TEST(Sensors, CutoffClampsAsMuJoCo) {
  const Model m = pendulum();
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(m.nv), a = Eigen::VectorXd::Zero(m.nv);
  v[0] = -5;
  EXPECT_EQ(read(m, q, v, a)[1], -2.0);
  v[0] = 1.9;
  EXPECT_EQ(read(m, q, v, a)[1], 1.9);
}

TEST(Sensors, SizesAreChecked) {
  const Model m = pendulum();
  Data data(m);
  Eigen::VectorXd r(m.nsensordata());
  const Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(m.nv);
  // an accelerometer needs qacc
  EXPECT_THROW(sensor_readings<double>(m, data, q, v, Eigen::VectorXd(), Eigen::VectorXd(), r), ArgumentError);
  Eigen::VectorXd short_r(3);
  EXPECT_THROW(sensor_readings<double>(m, data, q, v, v, Eigen::VectorXd(), short_r), ArgumentError);
}

TEST(Sensors, TouchZoneRays) {
  // sphere of radius 1 at the origin: rays from outside towards it hit, away from it miss, inside hit at 0
  const V3 r1(1, 1, 1);
  EXPECT_NEAR(ray_zone_distance(ZoneShape::Sphere, r1, V3(0, 0, 3), V3(0, 0, -1)), 2.0, 1e-15);
  EXPECT_LT(ray_zone_distance(ZoneShape::Sphere, r1, V3(0, 0, 3), V3(0, 0, 1)), 0);
  EXPECT_EQ(ray_zone_distance(ZoneShape::Sphere, r1, V3(0.1, 0, 0), V3(0, 0, 1)), 0.0);
  EXPECT_NEAR(ray_zone_distance(ZoneShape::Box, V3(1, 2, 3), V3(5, 0, 0), V3(-1, 0, 0)), 4.0, 1e-15);
  EXPECT_LT(ray_zone_distance(ZoneShape::Box, V3(1, 2, 3), V3(5, 2.5, 0), V3(-1, 0, 0)), 0);
  EXPECT_NEAR(ray_zone_distance(ZoneShape::Ellipsoid, V3(1, 2, 3), V3(0, 0, 5), V3(0, 0, -1)), 2.0, 1e-15);
  EXPECT_NEAR(ray_zone_distance(ZoneShape::Cylinder, V3(1, 2, 0), V3(0, 0, 5), V3(0, 0, -1)), 3.0, 1e-15);
  EXPECT_NEAR(ray_zone_distance(ZoneShape::Cylinder, V3(1, 2, 0), V3(3, 0, 0), V3(-1, 0, 0)), 2.0, 1e-15);
  EXPECT_NEAR(ray_zone_distance(ZoneShape::Capsule, V3(1, 2, 0), V3(0, 0, 5), V3(0, 0, -1)), 2.0, 1e-15);
  EXPECT_LT(ray_zone_distance(ZoneShape::Capsule, V3(1, 2, 0), V3(0, 1.5, 5), V3(0, 0, 1)), 0);
}

TEST(Sensors, TouchSumsTheNormalForceOfABoxResting) {
  // a 1 kg box resting on the floor under PGS contact: the touch zone around its bottom face reads m g
  const char* xml = R"(<mujoco>
    <worldbody>
      <geom name='floor' type='plane' size='5 5 0.1'/>
      <body name='box' pos='0 0 0.1'>
        <freejoint/>
        <geom type='box' size='0.1 0.1 0.1' mass='1'/>
        <site name='sole' type='box' pos='0 0 -0.1' size='0.11 0.11 0.01'/>
        <site name='top' type='box' pos='0 0 0.1' size='0.11 0.11 0.01'/>
      </body>
    </worldbody>
    <sensor><touch name='sole' site='sole'/><touch name='top' site='top'/><touch name='capped' site='sole' cutoff='5'/>
      <accelerometer name='imu' site='top'/></sensor>
  </mujoco>)";
  // PGS and penalty contact: at rest the sole carries the weight, and the accelerometer, which reads
  // the step's acceleration with the contact's impulses or forces in it, reads +g (the floor holds the
  // box up), not the free fall's zero
  for (ContactModel model : {ContactModel::Pgs, ContactModel::Penalty}) {
    Model m = parse_mjcf_string(xml, "box.xml").build();
    m.contact.model = model;
    Data data(m);
    Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(m.nv), r(m.nsensordata());
    q[2] = 0.1;
    const double dt = model == ContactModel::Pgs ? 1e-3 : 1e-4;
    for (int t = 0; t < (model == ContactModel::Pgs ? 500 : 20000); ++t) {  // settle
      Eigen::VectorXd qn(m.nq), vn(m.nv);
      step<double>(m, data, q, v, Eigen::VectorXd::Zero(m.nv), dt, Integrator::SemiImplicitEuler, qn, vn);
      q = qn, v = vn;
    }
    step_sensor_readings<double>(m, data, q, v, Eigen::VectorXd::Zero(m.nv), Eigen::VectorXd(), dt,
                                 Integrator::SemiImplicitEuler, r);
    const char* name = contact_model_name(model);
    EXPECT_NEAR(r[0], 9.81, 1e-3 * 9.81) << name;
    EXPECT_EQ(r[1], 0.0) << name;
    EXPECT_EQ(r[2], 5.0) << name;
    EXPECT_LT((r.segment<3>(3) - V3(0, 0, 9.81)).norm(), 1e-2) << name << ": " << r.segment<3>(3).transpose();
    // no contact model: no contacts, nothing touches, and the box falls freely
    m.contact.model = ContactModel::None;
    step_sensor_readings<double>(m, data, q, v, Eigen::VectorXd::Zero(m.nv), Eigen::VectorXd(), dt,
                                 Integrator::SemiImplicitEuler, r);
    EXPECT_EQ(r[0], 0.0);
    EXPECT_LT(r.segment<3>(3).norm(), 1e-9);
  }
}

TEST(Sensors, MalformedSensorsNameTheirElement) {
  auto error_of = [](const std::string& sensor) -> std::string {
    const std::string xml = "<mujoco>\n<worldbody>\n<body name='b'><joint name='h' type='hinge'/><joint name='ball' "
                            "type='ball'/><geom size='0.1'/><site name='s'/></body>\n</worldbody>\n<sensor>\n" +
                            sensor + "\n</sensor>\n</mujoco>\n";
    try {
      parse_mjcf_string(xml, "bad.xml").build();
    } catch (const ModelError& e) {
      return e.what();
    }
    return "(no error)";
  };
  struct Case {
    std::string sensor, words[2];
  };
  const Case cases[] = {
      {"<jointpos name='x' joint='nowhere'/>", {"bad.xml:6: <jointpos name='x'>", "unknown joint 'nowhere'"}},
      {"<jointvel name='x'/>", {"bad.xml:6: <jointvel name='x'>", "needs a 'joint'"}},
      {"<jointpos name='x' joint='ball'/>", {"bad.xml:6: <jointpos name='x'>", "hinge and slide joints only"}},
      {"<gyro name='x' site='nosite'/>", {"bad.xml:6: <gyro name='x'>", "unknown site 'nosite'"}},
      {"<touch name='x'/>", {"bad.xml:6: <touch name='x'>", "needs a 'site'"}},
      {"<framepos name='x' objtype='site' objname='t'/>", {"bad.xml:6: <framepos name='x'>", "unknown site 't'"}},
      {"<framepos name='x' objtype='xbody' objname='c'/>", {"bad.xml:6: <framepos name='x'>", "unknown body 'c'"}},
      {"<framequat name='x' objtype='site' objname='s' reftype='site'/>", {"<framequat name='x'>", "go together"}},
      {"<framepos name='x' objtype='wheel' objname='s'/>", {"<framepos name='x'>", "objtype must be one of"}},
      {"<jointpos name='x' joint='h'/><jointvel name='x' joint='h'/>", {"<jointvel name='x'>", "used twice"}},
      {"<jointpos name='x' joint='h' cutoff='-1'/>", {"<jointpos name='x'>", "non-negative"}},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(c.sensor);
    for (const std::string& w : c.words) EXPECT_NE(e.find(w), std::string::npos) << c.sensor << ": '" << w << "' not in " << e;
  }
}

TEST(Sensors, UnsupportedSensorsWarnOnceAndAreSkipped) {
  const std::string xml = "<mujoco>\n<worldbody>\n<body name='b'><joint name='h' type='hinge'/><geom name='g' "
                          "size='0.1'/><site name='s'/></body>\n</worldbody>\n<sensor>\n"
                          "<velocimeter site='s'/>\n<jointpos joint='h'/>\n<subtreecom body='b'/>\n"
                          "<framepos objtype='body' objname='b'/>\n<framepos objtype='geom' objname='g' reftype='geom' "
                          "refname='g'/>\n</sensor>\n</mujoco>\n";
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warnings = &warnings;
  const Model m = parse_mjcf_string(xml, "w.xml", options).build();
  ASSERT_EQ(m.sensors.size(), 2u);
  EXPECT_EQ(m.sensors[0].kind, SensorKind::JointPos);
  EXPECT_EQ(m.sensors[0].name, "sensor0");
  EXPECT_EQ(m.sensors[1].kind, SensorKind::FramePos);  // on a geom's frame, seen from itself
  EXPECT_EQ(m.frames[m.sensors[1].object].kind, FrameKind::Geom);
  EXPECT_EQ(m.sensors[1].object, m.sensors[1].reference);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("w.xml:6: <velocimeter>: <sensor><velocimeter>"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("2 in all"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("<sensor><subtreecom> at line 8"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("w.xml:9: <framepos>"), std::string::npos) << warnings[1];
}

TEST(Sensors, SurviveCastsAndSerialization) {
  const Model m = pendulum();
  const Model back = deserialize_model(serialize_model(m));
  ASSERT_EQ(back.sensors.size(), m.sensors.size());
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Constant(m.nv, 0.3), a = Eigen::VectorXd::Constant(m.nv, -0.2);
  q[0] = 0.7;
  EXPECT_EQ(read(m, q, v, a), read(back, q, v, a));
  EXPECT_EQ(m.cast<ADScalar>().sensors.size(), m.sensors.size());
}

}  // namespace
}  // namespace gradyn
