// Model serialization (model/serialize.hpp, what Python's pickle uses): a round trip keeps every
// field bit for bit (compared field by field below, independently of the format's code), rollouts
// and their gradients under every contact model are bitwise identical on the copy, convex hulls
// shared by geoms stay shared, and damaged bytes raise ModelError saying what is wrong: wrong
// magic, another version, truncation, trailing bytes, a changed byte; bytes changed and re-summed
// (so that the checksum passes) are either rejected or read back as exactly what they say.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../support/contact_scenes.hpp"
#include "../support/laikago_scene.hpp"
#include "gradyn/collision/collide.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/network.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/model/serialize.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

// --- field-by-field equality, bit for bit -------------------------------------------------------

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

void expect_same(double a, double b, const std::string& what) {
  EXPECT_TRUE(same_bits(a, b)) << what << ": " << a << " vs " << b;
}

template <class A, class B>
void expect_same(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b, const std::string& what) {
  ASSERT_EQ(a.rows(), b.rows()) << what;
  ASSERT_EQ(a.cols(), b.cols()) << what;
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j)
      if (!same_bits(a(i, j), b(i, j))) {
        ADD_FAILURE() << what << "(" << i << ", " << j << "): " << a(i, j) << " vs " << b(i, j);
        return;
      }
}

void expect_same(const Pose<double>& a, const Pose<double>& b, const std::string& what) {
  expect_same(a.R, b.R, what + ".R");
  expect_same(a.p, b.p, what + ".p");
}

void expect_same(const SourceLocation& a, const SourceLocation& b, const std::string& what) {
  EXPECT_EQ(a.file, b.file) << what;
  EXPECT_EQ(a.line, b.line) << what;
  EXPECT_EQ(a.element, b.element) << what;
}

void expect_same(const ConvexHull& a, const ConvexHull& b, const std::string& what) {
  ASSERT_EQ(a.vertices.size(), b.vertices.size()) << what;
  for (size_t k = 0; k < a.vertices.size(); ++k) expect_same(a.vertices[k], b.vertices[k], what + ".vertices");
  ASSERT_EQ(a.faces.size(), b.faces.size()) << what;
  for (size_t k = 0; k < a.faces.size(); ++k) {
    expect_same(a.faces[k].normal, b.faces[k].normal, what + ".faces.normal");
    expect_same(a.faces[k].offset, b.faces[k].offset, what + ".faces.offset");
    EXPECT_EQ(a.faces[k].first, b.faces[k].first) << what;
    EXPECT_EQ(a.faces[k].count, b.faces[k].count) << what;
  }
  EXPECT_EQ(a.face_vertices, b.face_vertices) << what;
  EXPECT_EQ(a.edges, b.edges) << what;
  EXPECT_EQ(a.edge_faces, b.edge_faces) << what;
  expect_same(a.interior, b.interior, what + ".interior");
  expect_same(a.aabb_min, b.aabb_min, what + ".aabb_min");
  expect_same(a.aabb_max, b.aabb_max, what + ".aabb_max");
  expect_same(a.volume, b.volume, what + ".volume");
  expect_same(a.centroid, b.centroid, what + ".centroid");
  expect_same(a.inertia, b.inertia, what + ".inertia");
}

// Every field of ModelTpl (model.hpp), in declaration order. A field added there belongs here too
// (and in the format: src/model/serialize.cpp's size checks stop the build until it is).
void expect_models_equal(const Model& a, const Model& b) {
  EXPECT_EQ(a.nq, b.nq);
  EXPECT_EQ(a.nv, b.nv);
  EXPECT_EQ(a.parent, b.parent);
  EXPECT_EQ(a.joint_type, b.joint_type);
  EXPECT_EQ(a.idx_q, b.idx_q);
  EXPECT_EQ(a.idx_v, b.idx_v);
  EXPECT_EQ(a.joint_nq_, b.joint_nq_);
  EXPECT_EQ(a.joint_nv_, b.joint_nv_);
  EXPECT_EQ(a.joint_names, b.joint_names);
  EXPECT_EQ(a.body_names, b.body_names);
  EXPECT_EQ(a.children, b.children);
  ASSERT_EQ(a.nbodies(), b.nbodies());
  ASSERT_EQ(a.joint_placement.size(), b.joint_placement.size());
  ASSERT_EQ(a.joint_axis.size(), b.joint_axis.size());
  ASSERT_EQ(a.body_inertia.size(), b.body_inertia.size());
  for (int i = 0; i < a.nbodies(); ++i) {
    const std::string body = "body " + std::to_string(i);
    expect_same(a.joint_placement[i], b.joint_placement[i], body + " joint_placement");
    expect_same(a.joint_axis[i], b.joint_axis[i], body + " joint_axis");
    expect_same(a.body_inertia[i].mass, b.body_inertia[i].mass, body + " mass");
    expect_same(a.body_inertia[i].com, b.body_inertia[i].com, body + " com");
    expect_same(a.body_inertia[i].inertia_com, b.body_inertia[i].inertia_com, body + " inertia_com");
  }
  expect_same(a.damping, b.damping, "damping");
  expect_same(a.armature, b.armature, "armature");
  expect_same(a.stiffness, b.stiffness, "stiffness");
  expect_same(a.frictionloss, b.frictionloss, "frictionloss");
  ASSERT_EQ(a.joint_couplings.size(), b.joint_couplings.size());
  for (size_t k = 0; k < a.joint_couplings.size(); ++k) {
    const JointCoupling &x = a.joint_couplings[k], &y = b.joint_couplings[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.joint1, y.joint1) << x.name;
    EXPECT_EQ(x.joint2, y.joint2) << x.name;
    for (size_t c = 0; c < 5; ++c) expect_same(x.polycoef[c], y.polycoef[c], x.name + " polycoef");
    expect_same(x.q1_ref, y.q1_ref, x.name + " q1_ref");
    expect_same(x.q2_ref, y.q2_ref, x.name + " q2_ref");
    EXPECT_EQ(x.tendons, y.tendons) << x.name;
    EXPECT_EQ(x.where.file, y.where.file) << x.name;
    EXPECT_EQ(x.where.line, y.where.line) << x.name;
    EXPECT_EQ(x.where.element, y.where.element) << x.name;
  }
  ASSERT_EQ(a.body_connections.size(), b.body_connections.size());
  for (size_t k = 0; k < a.body_connections.size(); ++k) {
    const BodyConnection &x = a.body_connections[k], &y = b.body_connections[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.body1, y.body1) << x.name;
    EXPECT_EQ(x.body2, y.body2) << x.name;
    expect_same(x.anchor1, y.anchor1, x.name + " anchor1");
    expect_same(x.anchor2, y.anchor2, x.name + " anchor2");
    EXPECT_EQ(x.weld, y.weld) << x.name;
    expect_same(x.rotation, y.rotation, x.name + " rotation");
    expect_same(x.where, y.where, x.name + " where");
  }
  ASSERT_EQ(a.tendons.size(), b.tendons.size());
  for (size_t k = 0; k < a.tendons.size(); ++k) {
    const FixedTendon &x = a.tendons[k], &y = b.tendons[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.joints, y.joints) << x.name;
    ASSERT_EQ(x.coefs.size(), y.coefs.size()) << x.name;
    for (size_t c = 0; c < x.coefs.size(); ++c) expect_same(x.coefs[c], y.coefs[c], x.name + " coef");
    expect_same(x.lower, y.lower, x.name + " lower");
    expect_same(x.upper, y.upper, x.name + " upper");
    expect_same(x.stiffness, y.stiffness, x.name + " stiffness");
    expect_same(x.damping, y.damping, x.name + " damping");
    expect_same(x.spring_length, y.spring_length, x.name + " spring_length");
    expect_same(x.where, y.where, x.name + " where");
  }
  expect_same(a.effort_limit, b.effort_limit, "effort_limit");
  expect_same(a.velocity_limit, b.velocity_limit, "velocity_limit");
  expect_same(a.q_rest, b.q_rest, "q_rest");
  expect_same(a.lower_limit, b.lower_limit, "lower_limit");
  expect_same(a.upper_limit, b.upper_limit, "upper_limit");
  expect_same(a.q0, b.q0, "q0");
  expect_same(a.gravity, b.gravity, "gravity");

  ASSERT_EQ(a.frames.size(), b.frames.size());
  for (size_t k = 0; k < a.frames.size(); ++k) {
    EXPECT_EQ(a.frames[k].name, b.frames[k].name);
    EXPECT_EQ(a.frames[k].kind, b.frames[k].kind) << a.frames[k].name;
    EXPECT_EQ(a.frames[k].body, b.frames[k].body) << a.frames[k].name;
    expect_same(a.frames[k].placement, b.frames[k].placement, "frame " + a.frames[k].name);
  }

  ASSERT_EQ(a.actuators.size(), b.actuators.size());
  for (size_t k = 0; k < a.actuators.size(); ++k) {
    const Actuator &x = a.actuators[k], &y = b.actuators[k];
    const std::string what = "actuator " + x.name;
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind) << what;
    EXPECT_EQ(x.joint, y.joint) << what;
    expect_same(x.gear, y.gear, what + " gear");
    expect_same(x.gain, y.gain, what + " gain");
    expect_same(x.bias, y.bias, what + " bias");
    expect_same(x.servo_kp, y.servo_kp, what + " servo_kp");
    expect_same(x.servo_kv, y.servo_kv, what + " servo_kv");
    expect_same(x.servo_velocity_limit, y.servo_velocity_limit, what + " servo_velocity_limit");
    EXPECT_EQ(x.ctrl_limited, y.ctrl_limited) << what;
    expect_same(x.ctrl_lower, y.ctrl_lower, what + " ctrl_lower");
    expect_same(x.ctrl_upper, y.ctrl_upper, what + " ctrl_upper");
    EXPECT_EQ(x.force_limited, y.force_limited) << what;
    expect_same(x.force_lower, y.force_lower, what + " force_lower");
    expect_same(x.force_upper, y.force_upper, what + " force_upper");
    expect_same(x.where, y.where, what + " where");
  }

  ASSERT_EQ(a.sensors.size(), b.sensors.size());
  for (size_t k = 0; k < a.sensors.size(); ++k) {
    const Sensor &x = a.sensors[k], &y = b.sensors[k];
    const std::string what = "sensor " + x.name;
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind) << what;
    EXPECT_EQ(x.object, y.object) << what;
    EXPECT_EQ(x.reference, y.reference) << what;
    EXPECT_EQ(x.adr, y.adr) << what;
    expect_same(x.cutoff, y.cutoff, what + " cutoff");
    expect_same(x.noise, y.noise, what + " noise");
    EXPECT_EQ(x.zone, y.zone) << what;
    expect_same(x.zone_size, y.zone_size, what + " zone_size");
    expect_same(x.where, y.where, what + " where");
  }

  ASSERT_EQ(a.cameras.size(), b.cameras.size());
  for (size_t k = 0; k < a.cameras.size(); ++k) {
    EXPECT_EQ(a.cameras[k].name, b.cameras[k].name);
    EXPECT_EQ(a.cameras[k].frame, b.cameras[k].frame);
    EXPECT_EQ(a.cameras[k].fovy, b.cameras[k].fovy);
    EXPECT_EQ(a.cameras[k].unsupported, b.cameras[k].unsupported);
    EXPECT_EQ(a.cameras[k].where.file, b.cameras[k].where.file);
    EXPECT_EQ(a.cameras[k].where.line, b.cameras[k].where.line);
  }

  ASSERT_EQ(a.networks.size(), b.networks.size());
  for (size_t k = 0; k < a.networks.size(); ++k) {
    const Network &x = a.networks[k], &y = b.networks[k];
    const std::string what = "network " + x.name;
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.site, y.site) << what;
    ASSERT_EQ(x.inputs.size(), y.inputs.size()) << what;
    for (size_t j = 0; j < x.inputs.size(); ++j) {
      EXPECT_EQ(x.inputs[j].kind, y.inputs[j].kind) << what;
      EXPECT_EQ(x.inputs[j].index, y.inputs[j].index) << what;
      EXPECT_EQ(x.inputs[j].tangent, y.inputs[j].tangent) << what;
      EXPECT_EQ(x.inputs[j].name, y.inputs[j].name) << what;
    }
    EXPECT_EQ(x.output_dofs, y.output_dofs) << what;
    EXPECT_EQ(x.body, y.body) << what;
    EXPECT_EQ(x.other_body, y.other_body) << what;
    EXPECT_EQ(x.world_frame, y.world_frame) << what;
    EXPECT_EQ(x.output_names, y.output_names) << what;
    EXPECT_EQ(x.shape.widths, y.shape.widths) << what;
    EXPECT_EQ(x.shape.hidden, y.shape.hidden) << what;
    EXPECT_EQ(x.shape.output, y.shape.output) << what;
    expect_same(x.weights, y.weights, what + " weights");
  }

  ASSERT_EQ(a.geoms.size(), b.geoms.size());
  for (size_t k = 0; k < a.geoms.size(); ++k) {
    const Geom &x = a.geoms[k], &y = b.geoms[k];
    const std::string what = "geom " + x.name;
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type) << what;
    EXPECT_EQ(x.body, y.body) << what;
    expect_same(x.placement, y.placement, what + " placement");
    expect_same(x.size, y.size, what + " size");
    expect_same(x.friction, y.friction, what + " friction");
    expect_same(x.restitution, y.restitution, what + " restitution");
    EXPECT_EQ(x.contype, y.contype) << what;
    EXPECT_EQ(x.conaffinity, y.conaffinity) << what;
    ASSERT_EQ(x.hull == nullptr, y.hull == nullptr) << what;
    if (x.hull) expect_same(*x.hull, *y.hull, what + " hull");
    expect_same(x.where, y.where, what + " where");
  }
  EXPECT_EQ(a.excluded_pairs, b.excluded_pairs);
  EXPECT_EQ(a.collide_parent_child, b.collide_parent_child);
  EXPECT_EQ(a.max_contacts, b.max_contacts);

  const ContactSettings &c = a.contact, &d = b.contact;
  EXPECT_EQ(c.model, d.model);
  expect_same(c.stiffness, d.stiffness, "contact.stiffness");
  expect_same(c.exponent, d.exponent, "contact.exponent");
  expect_same(c.damping, d.damping, "contact.damping");
  EXPECT_EQ(c.friction, d.friction);
  expect_same(c.velocity_scale, d.velocity_scale, "contact.velocity_scale");
  expect_same(c.static_friction_ratio, d.static_friction_ratio, "contact.static_friction_ratio");
  expect_same(c.viscous_friction, d.viscous_friction, "contact.viscous_friction");
  expect_same(c.margin, d.margin, "contact.margin");
  EXPECT_EQ(c.pgs_iterations, d.pgs_iterations);
  expect_same(c.pgs_tolerance, d.pgs_tolerance, "contact.pgs_tolerance");
  EXPECT_EQ(c.pgs_gradient, d.pgs_gradient);
  expect_same(c.erp, d.erp, "contact.erp");
  expect_same(c.slop, d.slop, "contact.slop");
  expect_same(c.cfm, d.cfm, "contact.cfm");
  expect_same(c.restitution_threshold, d.restitution_threshold, "contact.restitution_threshold");
  expect_same(c.limit_stiffness, d.limit_stiffness, "contact.limit_stiffness");
  expect_same(c.limit_damping, d.limit_damping, "contact.limit_damping");
  expect_same(c.limit_margin, d.limit_margin, "contact.limit_margin");
  EXPECT_EQ(c.ipm_iterations, d.ipm_iterations);
  expect_same(c.ipm_tolerance, d.ipm_tolerance, "contact.ipm_tolerance");
  expect_same(c.ipm_kappa, d.ipm_kappa, "contact.ipm_kappa");
  EXPECT_EQ(c.ipm_friction_directions, d.ipm_friction_directions);
  EXPECT_EQ(c.ipm_warm_start, d.ipm_warm_start);
  expect_same(c.max_penetration, d.max_penetration, "contact.max_penetration");

  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.source, b.source);
}

// --- models -------------------------------------------------------------------------------------

Model load_quietly(const std::string& path, bool floating_base = false) {
  std::vector<std::string> warnings;  // e.g. the swimmer's fluid forces
  LoadOptions options;
  options.warnings = &warnings;
  options.floating_base = floating_base;
  return load(path, options);
}

// Every kind of actuator, every network site, non-default contact settings, exclusions, a changed
// gravity, -0.0, infinities and a NaN: every field away from its default.
Model everything() {
  ContactSettings contact;
  contact.model = ContactModel::Penalty;
  contact.stiffness = 2e5, contact.exponent = 1.25, contact.damping = 0.7, contact.friction = FrictionModel::Brown;
  contact.velocity_scale = 0.02, contact.static_friction_ratio = 1.3, contact.viscous_friction = 0.05;
  contact.margin = 1e-3, contact.pgs_iterations = 300, contact.pgs_tolerance = 1e-11;
  contact.pgs_gradient = PgsGradient::Sweeps, contact.erp = 0.3, contact.slop = 2e-4, contact.cfm = 1e-6;
  contact.restitution_threshold = 0.2, contact.limit_stiffness = 2e4, contact.limit_damping = 10;
  contact.limit_margin = 2e-3, contact.ipm_iterations = 60, contact.ipm_tolerance = 1e-9, contact.ipm_kappa = 1e-8;
  contact.ipm_friction_directions = 6, contact.ipm_warm_start = true, contact.max_penetration = 0.04;
  Model m = test::arm_on_box(contact);
  m.name = "everything";
  m.source = "built in code";
  m.gravity = Vector3<double>(0.1, -0.0, -9.7);
  m.lower_limit[0] = -1.2, m.upper_limit[0] = 1.3;
  m.damping[1] = 0.05, m.armature[0] = 0.01, m.stiffness[1] = 0.4, m.q_rest[1] = 0.1, m.q0[0] = 0.2;
  m.velocity_limit[1] = std::nan("");
  m.frictionloss[0] = 0.25;
  {
    JointCoupling c;
    // both hold at the state the runs below start from, (0.68, 0.05): the shoulder at q0 + 0.48, the
    // elbow at its reference + p(shoulder - 0.68)
    c.name = "cam", c.joint1 = 1, c.joint2 = 0, c.polycoef = {0.0, -0.5, 0.2, 0.03, -0.004};
    c.q1_ref = 0.05, c.q2_ref = 0.68;
    c.where = SourceLocation{"arm.xml", 60, "<joint name='cam'>"};
    JointCoupling held;
    held.name = "held", held.joint1 = 0, held.polycoef = {0.48, 0, 0, 0, 0}, held.q1_ref = 0.2;
    m.joint_couplings = {c, held};
    BodyConnection loop;
    loop.name = "loop", loop.body1 = 1, loop.body2 = 0;
    loop.anchor1 = Vector3<double>(0.3, -0.0, 0.01), loop.anchor2 = Vector3<double>(0.6, 0.02, -0.01);
    loop.where = SourceLocation{"arm.xml", 70, "<connect name='loop'>"};
    BodyConnection pin;
    pin.name = "pin", pin.body1 = 0, pin.anchor1 = Vector3<double>(0.1, 0, 0), pin.anchor2 = Vector3<double>(0.1, 0, 0.5);
    pin.weld = true, pin.rotation = rpy_to_matrix<double>(Vector3<double>(0.3, -0.2, 0.1));
    m.body_connections = {loop, pin};
    FixedTendon hamstring;  // every field away from its default
    hamstring.name = "hamstring", hamstring.joints = {0, 1}, hamstring.coefs = {0.5, -0.25};
    hamstring.lower = -0.3, hamstring.upper = 2.0, hamstring.stiffness = 3.0, hamstring.damping = 0.2;
    hamstring.spring_length = 0.1;
    hamstring.where = SourceLocation{"arm.xml", 80, "<fixed name='hamstring'>"};
    FixedTendon open;
    open.name = "open", open.joints = {1}, open.coefs = {1.0}, open.upper = 0.4;
    m.tendons = {hamstring, open};
    JointCoupling lengths;  // the tendons' lengths coupled (MJCF <equality><tendon>)
    lengths.name = "lengths", lengths.tendons = true, lengths.joint1 = 1, lengths.joint2 = 0;
    lengths.polycoef = {0.01, 0.3, 0.0, 0.0, 0.0}, lengths.q1_ref = 0.05, lengths.q2_ref = 0.3275;
    m.joint_couplings.push_back(lengths);
  }
  m.frames.push_back({"tool", FrameKind::Site, 1, Pose<double>(rpy_to_matrix<double>(Vector3<double>(0.1, 0.2, 0.3)),
                                                               Vector3<double>(0.3, 0, 0))});
  {
    Sensor touch;  // every field away from its default
    touch.name = "palm", touch.kind = SensorKind::Touch, touch.object = static_cast<int>(m.frames.size()) - 1;
    touch.adr = 0, touch.cutoff = 50, touch.noise = 0.1, touch.zone = ZoneShape::Capsule;
    touch.zone_size = Vector3<double>(0.02, 0.05, 0.005);
    touch.where = SourceLocation{"arm.xml", 40, "<touch name='palm'>"};
    Sensor pos;
    pos.name = "tool_in_base", pos.kind = SensorKind::FramePos, pos.object = touch.object, pos.reference = 0;
    pos.adr = 1, pos.cutoff = 2;
    m.sensors = {touch, pos};
  }
  const ActuatorKind kinds[] = {ActuatorKind::Motor, ActuatorKind::Position, ActuatorKind::Velocity,
                                ActuatorKind::General, ActuatorKind::Servo};
  for (int k = 0; k < 5; ++k) {
    Actuator a;
    a.name = std::string(actuator_kind_name(kinds[k])) + "_" + std::to_string(k);
    a.kind = kinds[k];
    a.joint = k % 2;
    a.gear = 1.0 + 0.1 * k;
    a.gain = Vector3<double>(2.0 + k, 0.1 * k, -0.01 * k);
    a.bias = Vector3<double>(0.01 * k, -1.0 * k, -0.1 * k);
    a.servo_kp = 3.0 + k, a.servo_kv = 0.5 + k, a.servo_velocity_limit = 2.0;
    a.ctrl_limited = k % 2 == 0, a.ctrl_lower = -1.5, a.ctrl_upper = 1.5;
    a.force_limited = k % 3 == 0, a.force_lower = -20.0 - k, a.force_upper = 25.0;
    a.where = SourceLocation{"arm.xml", 10 + k, "<actuator name='" + a.name + "'>"};
    m.actuators.push_back(a);
  }
  NetworkSpec joint_force;
  joint_force.name = "residual";
  joint_force.inputs = {"shoulder.q", "elbow.v", "motor_0.ctrl", "servo_4.ctrl"};
  joint_force.outputs = {"elbow"};
  joint_force.hidden = {5, 4};
  joint_force.activation = "elu";
  joint_force.seed = 7;
  joint_force.zero_last_layer = false;
  m = with_network(m, joint_force);
  NetworkSpec wrench;
  wrench.name = "drag";
  wrench.site = "body_wrench";
  wrench.body = "lower";
  wrench.frame = "world";
  wrench.inputs = {"rot[0,1]", "vel.ang.y", "vel.lin.z", "pos.z"};
  wrench.hidden = {3};
  wrench.activation = "softplus";
  wrench.output_activation = "tanh";
  wrench.seed = 11;
  wrench.zero_last_layer = false;
  m = with_network(m, wrench);
  NetworkSpec friction;
  friction.name = "surface";
  friction.site = "contact_friction";
  friction.body = "lower";
  friction.other = "world";
  friction.inputs = {"contact.pos.x", "contact.depth", "rot[2,2]"};
  friction.hidden = {2};
  m = with_network(m, friction);
  NetworkSpec push;
  push.name = "push";
  push.site = "contact_force";
  push.body = "upper";
  push.inputs = {"contact.vel.y", "contact.normal.z", "vel.lin.x"};
  push.outputs = {"force.x", "normal"};
  push.zero_last_layer = false;
  m = with_network(m, push);
  {
    Frame eye{"eye", FrameKind::Camera, 1, Pose<double>(rpy_to_matrix<double>(Vector3<double>(0.1, -0.2, 0.3)),
                                                          Vector3<double>(0.05, 0.0, 0.2))};
    m.cameras.push_back({"eye", static_cast<int>(m.frames.size()), 62.5, "mode=\"track\"",
                         SourceLocation{"arm.xml", 80, "<camera name='eye'>"}});
    m.frames.push_back(eye);
  }
  m.excluded_pairs.emplace_back(-1, 0);
  m.collide_parent_child = true;
  m.max_contacts = 40;
  m.geoms[0].restitution = 0.3, m.geoms[0].contype = 3, m.geoms[0].conaffinity = 5;
  m.geoms[0].where = SourceLocation{"arm.xml", 3, "<geom name='box'>"};
  return m;
}

std::vector<std::pair<std::string, Model>> models() {
  std::vector<std::pair<std::string, Model>> out;
  out.emplace_back("pendulum2.urdf", load_quietly(std::string(GRADYN_MODELS) + "/pendulums/pendulum2.urdf"));
  for (const char* name : {"ant", "humanoid", "swimmer"})
    out.emplace_back(name, load_quietly(std::string(GRADYN_MODELS) + "/mujoco/" + name + ".xml"));
  for (const char* name : {"features.xml", "actuated_arm.xml", "hull_scene.xml"})
    out.emplace_back(name, load_quietly(std::string(GRADYN_TEST_DATA) + "/mjcf/" + name));
  out.emplace_back("hull_robot.urdf", load_quietly(std::string(GRADYN_TEST_DATA) + "/urdf/hull_robot.urdf"));
  // The laikago with its collision meshes (convex hulls), where the shared models are present.
  const std::string laikago = std::string(GRADYN_SHARED_MODELS) + "/laikago/laikago_toes_zup.urdf";
  if (std::filesystem::exists(laikago)) out.emplace_back("laikago with meshes", load_quietly(laikago, true));
  out.emplace_back("everything", everything());
  Model perturbed = everything();
  Eigen::VectorXd p = get_params(perturbed);
  for (Eigen::Index k = 0; k < p.size(); ++k) p[k] *= 1.0 + 0.01 * std::sin(1.0 + k);
  out.emplace_back("everything.with_params", with_params<double>(perturbed, p));
  return out;
}

Model round_trip(const Model& m) {
  const std::string bytes = serialize_model(m);
  Model copy = deserialize_model(bytes);
  EXPECT_EQ(serialize_model(copy), bytes) << "writing the copy gives other bytes";
  return copy;
}

TEST(ModelSerialize, RoundTripKeepsEveryField) {
  int hulls = 0;
  for (const auto& [name, m] : models()) {
    SCOPED_TRACE(name);
    expect_models_equal(m, round_trip(m));
    for (const Geom& g : m.geoms) hulls += g.hull != nullptr;
  }
  EXPECT_GT(hulls, 2);  // meshes were among them
}

TEST(ModelSerialize, SharedHullsStayShared) {
  Model m = load_quietly(std::string(GRADYN_TEST_DATA) + "/mjcf/hull_scene.xml");
  ASSERT_EQ(m.geoms.size(), 3u);
  m.geoms[2].hull = m.geoms[1].hull;  // both bodies the same brick
  const Model copy = round_trip(m);
  ASSERT_TRUE(copy.geoms[1].hull && copy.geoms[2].hull);
  EXPECT_EQ(copy.geoms[1].hull.get(), copy.geoms[2].hull.get());
  expect_models_equal(m, copy);
  // Written once: smaller than the same model with two distinct (equal) hulls.
  Model unshared = m;
  unshared.geoms[2].hull = std::make_shared<ConvexHull>(*m.geoms[1].hull);
  EXPECT_LT(serialize_model(m).size(), serialize_model(unshared).size());
}

// --- rollouts and their gradients, bit for bit ---------------------------------------------------

struct Run {
  MatrixXr<double> qs, vs, taus_bar, ctrls_bar;
  std::vector<std::uint32_t> status;
  Eigen::VectorXd q0_bar, v0_bar, params_bar;
  int states_in_contact = 0;
};

Run run(const Model& m, const Eigen::VectorXd& q0, int T, double dt, Integrator integrator) {
  Run r;
  Eigen::VectorXd v0(m.nv);
  for (int i = 0; i < m.nv; ++i) v0[i] = 0.1 * std::sin(1.0 + i);
  MatrixXr<double> taus(T, m.nv), ctrls(T, m.nu());
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < m.nv; ++i) taus(t, i) = 2.0 * std::sin(0.05 * t + 0.7 * i);
    for (int i = 0; i < m.nu(); ++i) ctrls(t, i) = 0.5 * std::cos(0.03 * t + i);
  }
  Data data(m);
  r.status.resize(T);
  rollout<double>(m, data, q0, v0, taus, ctrls, dt, integrator, r.qs, r.vs, r.status);
  for (int t = 0; t <= T; ++t) {
    forward_kinematics<double>(m, data, r.qs.row(t).transpose());
    collide<double>(m, data, m.contact.margin);
    r.states_in_contact += data.ncontacts > 0;
  }
  MatrixXr<double> qs_bar(T + 1, m.nq), vs_bar(T + 1, m.nv);
  for (Eigen::Index i = 0; i < qs_bar.size(); ++i) qs_bar.data()[i] = std::cos(0.1 * i);
  for (Eigen::Index i = 0; i < vs_bar.size(); ++i) vs_bar.data()[i] = 0.01 * std::sin(0.2 * i);
  r.q0_bar = Eigen::VectorXd::Zero(m.nq), r.v0_bar = Eigen::VectorXd::Zero(m.nv);
  r.taus_bar = MatrixXr<double>::Zero(T, m.nv), r.ctrls_bar = MatrixXr<double>::Zero(T, m.nu());
  ModelTangent tangent(m);
  Data fresh(m);
  rollout_vjp<double>(m, fresh, q0, v0, taus, ctrls, dt, integrator, qs_bar, vs_bar, r.q0_bar, r.v0_bar, r.taus_bar,
                      r.ctrls_bar, tangent);
  r.params_bar = params_gradient<double>(m, tangent);
  return r;
}

// Returns how many states of the run had a contact.
int expect_bitwise_same_runs(const Model& m, const Eigen::VectorXd& q0, int T, double dt, Integrator integrator) {
  SCOPED_TRACE(m.name + ", " + integrator_name(integrator));
  const Run a = run(m, q0, T, dt, integrator), b = run(round_trip(m), q0, T, dt, integrator);
  expect_same(a.qs, b.qs, "qs");
  expect_same(a.vs, b.vs, "vs");
  EXPECT_EQ(a.status, b.status);
  expect_same(a.q0_bar, b.q0_bar, "q0_bar");
  expect_same(a.v0_bar, b.v0_bar, "v0_bar");
  expect_same(a.taus_bar, b.taus_bar, "taus_bar");
  expect_same(a.ctrls_bar, b.ctrls_bar, "ctrls_bar");
  expect_same(a.params_bar, b.params_bar, "params_bar");
  EXPECT_TRUE(a.qs.allFinite());  // a run worth comparing
  EXPECT_TRUE(a.params_bar.allFinite());
  return a.states_in_contact;
}

TEST(ModelSerialize, RolloutsAndGradientsBitwiseUnderEveryContactModel) {
  for (ContactModel contact : {ContactModel::None, ContactModel::Penalty, ContactModel::Pgs, ContactModel::Ipm}) {
    SCOPED_TRACE(contact_model_name(contact));
    const test::LaikagoScene scene = test::laikago_standing(contact);
    EXPECT_GT(expect_bitwise_same_runs(scene.model, scene.q, 80, 1e-3, Integrator::SemiImplicitEuler), 0);
    if (!has_impulses(contact)) expect_bitwise_same_runs(scene.model, scene.q, 40, 1e-3, Integrator::RK4);

    Model arm = everything();
    arm.contact.model = contact;
    arm.contact.ipm_warm_start = false;  // warm starts make a rollout depend on the Data's history
    // this run throws the arm onto its box at tens of rad/s; the couplings' stiff penalty springs
    // make it diverge there, so the runs go without them (the field comparison above covers them)
    arm.joint_couplings.clear();
    arm.body_connections.clear();
    if (contact != ContactModel::Penalty)  // only the penalty model evaluates networks at contact sites
      std::erase_if(arm.networks, [](const Network& n) { return is_contact_site(n.site); });
    EXPECT_GT(expect_bitwise_same_runs(arm, (Eigen::VectorXd(2) << 0.68, 0.05).finished(), 100, 1e-3,
                                       Integrator::SemiImplicitEuler),
              0);

    Model hulls = load_quietly(std::string(GRADYN_TEST_DATA) + "/mjcf/hull_scene.xml");
    hulls.contact.model = contact;
    Eigen::VectorXd q = hulls.q0;
    q[2] = 0.1, q[9] = 0.02;  // brick and pyramid low enough to land within the run
    EXPECT_GT(expect_bitwise_same_runs(hulls, q, 60, 2e-3, Integrator::SemiImplicitEuler), 0);  // hull contacts
  }
}

// --- damaged bytes ------------------------------------------------------------------------------

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(no ModelError)";
}

std::string error_of(const std::string& bytes) { return error_of([&] { deserialize_model(bytes); }); }

constexpr size_t kHeader = 12 + 4 + 8 + 8;

// The header's checksum (FNV-1a of the payload) set to match the payload, as a writer would.
void resum(std::string& bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (size_t k = kHeader; k < bytes.size(); ++k) {
    h ^= static_cast<unsigned char>(bytes[k]);
    h *= 1099511628211ull;
  }
  for (int k = 0; k < 8; ++k) bytes[24 + k] = static_cast<char>((h >> (8 * k)) & 0xffu);
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(ModelSerialize, DamagedBytesSayWhatIsWrong) {
  const std::string good = serialize_model(everything());
  EXPECT_CONTAINS(error_of(std::string()), "serialized model: not a gradyn model pickle");
  EXPECT_CONTAINS(error_of(std::string("hello, world")), "not a gradyn model pickle");
  EXPECT_CONTAINS(error_of(std::string("hello, world")), "starting 0x68656c6c6f");

  std::string version = good;
  version[12] = static_cast<char>(kModelFormatVersion + 1);
  EXPECT_CONTAINS(error_of(version), "made by format version " + std::to_string(kModelFormatVersion + 1) +
                                         ", this gradyn reads format version " + std::to_string(kModelFormatVersion));

  EXPECT_CONTAINS(error_of(good.substr(0, 20)), "shorter than the 32-byte header");
  for (size_t cut : {kHeader, kHeader + 1, good.size() / 2, good.size() - 1})
    EXPECT_CONTAINS(error_of(good.substr(0, cut)), "truncated: the header announces");
  EXPECT_CONTAINS(error_of(good + "x"), "too long");

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  EXPECT_CONTAINS(error_of(flipped), "corrupted: the checksum of the model data does not match");

  // Contents that pass the checksum but do not form a model: the first body's parent set to 5.
  std::string crafted = good;
  const size_t parent = kHeader + 8 + 10 + 8 + 13 + 8;  // after name "everything", source "built in code", count
  ASSERT_EQ(crafted.substr(parent, 4), std::string(4, char(-1)));  // -1 (the world), little-endian
  crafted.replace(parent, 4, std::string("\x05\0\0\0", 4));
  resum(crafted);
  EXPECT_CONTAINS(error_of(crafted), "the parent of body 0 is 5, expected -1 to -1");
  EXPECT_CONTAINS(error_of(crafted), "do not form a consistent model");
}

// Every byte of the payload changed (three ways) with the checksum made to match: the reader
// either refuses with a ModelError or returns a model that writes exactly those bytes again; it
// never reads out of range, allocates from a damaged count, or throws anything else.
TEST(ModelSerialize, ChangedBytesWithMatchingChecksumAreRefusedOrReadExactly) {
  const std::string good = serialize_model(everything());
  int refused = 0, read = 0;
  for (size_t k = kHeader; k < good.size(); ++k)
    for (unsigned char change : {0x01, 0x80, 0xff}) {
      std::string bytes = good;
      bytes[k] = static_cast<char>(static_cast<unsigned char>(bytes[k]) ^ change);
      resum(bytes);
      try {
        const Model m = deserialize_model(bytes);
        ++read;
        ASSERT_EQ(serialize_model(m), bytes) << "byte " << k;
      } catch (const ModelError&) {
        ++refused;
      }
    }
  EXPECT_GT(refused, 100);  // counts, indices, enums and flags
  EXPECT_GT(read, 1000);    // numbers and names
}

}  // namespace
}  // namespace gradyn
