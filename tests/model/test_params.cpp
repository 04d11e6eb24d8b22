// The flat parameter vector: names, get/with round trips (geoms and contact settings included),
// range checks, and the chain rule of params_gradient, checked against forward-mode AD (through
// with_params, and w.r.t. the Model's own fields) and central finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <numbers>
#include <set>

#include "../support/random_model.hpp"
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {
namespace {

const std::string kModels = GRADYN_MODELS;

std::vector<Model> shipped_models() {
  std::vector<Model> models;
  for (const char* f : {"/pendulums/pendulum7.urdf", "/grid/iiwa.urdf", "/grid/hyq.urdf",
                        "/laikago/laikago_toes_zup.urdf", "/simple_humanoid.urdf", "/swimmer05/swimmer05.urdf"}) {
    std::vector<std::string> warnings;
    models.push_back(load(kModels + f, {.floating_base = true, .warnings = &warnings}));
  }
  for (const char* f : {"/mujoco/ant.xml", "/mujoco/humanoid.xml", "/mujoco/swimmer.xml", "/swimmer05/model.xml"}) {
    std::vector<std::string> warnings;
    models.push_back(load(kModels + f, {.warnings = &warnings}));
  }
  return models;
}

std::vector<Model> random_models() {
  return {test::random_model(8, 1, false, true), test::random_model(8, 2, true, true),
          test::random_model(9, 3, false, true), test::random_model(7, 4, true, false)};
}

double max_abs(const Eigen::MatrixXd& x) { return x.size() ? x.cwiseAbs().maxCoeff() : 0.0; }

// Every parameter field of a, compared with b's.
void expect_same_parameters(const Model& a, const Model& b, double tol, const std::string& what) {
  ASSERT_EQ(a.nbodies(), b.nbodies());
  for (int i = 0; i < a.nbodies(); ++i) {
    EXPECT_NEAR(a.body_inertia[i].mass, b.body_inertia[i].mass, tol) << what << " body " << i;
    EXPECT_LE(max_abs(a.body_inertia[i].com - b.body_inertia[i].com), tol) << what << " body " << i;
    EXPECT_LE(max_abs(a.body_inertia[i].inertia_com - b.body_inertia[i].inertia_com), tol) << what << " body " << i;
    EXPECT_LE(max_abs(a.joint_placement[i].R - b.joint_placement[i].R), tol) << what << " body " << i;
    EXPECT_LE(max_abs(a.joint_placement[i].p - b.joint_placement[i].p), tol) << what << " body " << i;
    EXPECT_LE(max_abs(a.joint_axis[i] - b.joint_axis[i]), tol) << what << " body " << i;
  }
  EXPECT_LE(max_abs(a.damping - b.damping), tol) << what;
  EXPECT_LE(max_abs(a.armature - b.armature), tol) << what;
  EXPECT_LE(max_abs(a.stiffness - b.stiffness), tol) << what;
  EXPECT_LE(max_abs(a.q_rest - b.q_rest), tol) << what;
  EXPECT_LE(max_abs(a.gravity - b.gravity), tol) << what;
  ASSERT_EQ(a.ngeoms(), b.ngeoms());
  for (int g = 0; g < a.ngeoms(); ++g) {
    EXPECT_NEAR(a.geoms[g].friction, b.geoms[g].friction, tol) << what << " geom " << g;
    EXPECT_NEAR(a.geoms[g].restitution, b.geoms[g].restitution, tol) << what << " geom " << g;
    EXPECT_LE(max_abs(a.geoms[g].size - b.geoms[g].size), tol) << what << " geom " << g;
    EXPECT_LE(max_abs(a.geoms[g].placement.R - b.geoms[g].placement.R), tol) << what << " geom " << g;
    EXPECT_LE(max_abs(a.geoms[g].placement.p - b.geoms[g].placement.p), tol) << what << " geom " << g;
  }
  const ContactSettings &x = a.contact, &y = b.contact;
  for (auto [u, v] : {std::pair{x.stiffness, y.stiffness}, {x.exponent, y.exponent}, {x.damping, y.damping},
                      {x.velocity_scale, y.velocity_scale}, {x.static_friction_ratio, y.static_friction_ratio},
                      {x.viscous_friction, y.viscous_friction}, {x.erp, y.erp}, {x.slop, y.slop}, {x.cfm, y.cfm}})
    EXPECT_NEAR(u, v, tol * (1 + std::abs(v))) << what << " contact settings";
}

// The names of the contact settings at the end of every parameter vector.
const std::vector<std::string> kContactNames = {
    "contact.stiffness",        "contact.exponent",         "contact.damping", "contact.velocity_scale",
    "contact.static_friction_ratio", "contact.viscous_friction", "contact.erp", "contact.slop", "contact.cfm"};

// Index of a parameter by name (p.size() if absent).
int index_of(const std::vector<std::string>& names, const std::string& name) {
  return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
}

// Two links on a revolute joint, with every geom type: a world plane, a sphere and a box on the
// base, a capsule and a cylinder on the arm; the contact settings set away from their defaults.
Model geom_model() {
  ModelBuilder b;
  auto geom = [](const std::string& name, GeomType type, Eigen::Vector3d size, const Pose<double>& at, double friction,
                 double restitution) {
    GeomSpec g;
    g.name = name;
    g.type = type;
    g.size = size;
    g.placement = at;
    g.friction = friction;
    g.restitution = restitution;
    return g;
  };
  LinkSpec world{"world", std::nullopt, {}, {}};
  world.collisions.push_back(geom("floor", GeomType::Plane, Eigen::Vector3d::Zero(),
                                  Pose<double>(rpy_to_matrix<double>(Eigen::Vector3d(0.1, -0.05, 0.3)), Eigen::Vector3d(0, 0, -1)),
                                  0.8, 0.1));
  LinkSpec base{"base", Inertia<double>(2.0, Eigen::Vector3d::Zero(), Eigen::Matrix3d::Identity() * 0.1), {}, {}};
  base.collisions.push_back(geom("ball", GeomType::Sphere, Eigen::Vector3d(0.2, 0, 0),
                                 Pose<double>(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0.1, 0, 0)), 0.5, 0.3));
  base.collisions.push_back(geom("block", GeomType::Box, Eigen::Vector3d(0.3, 0.2, 0.1),
                                 Pose<double>(rpy_to_matrix<double>(Eigen::Vector3d(0.4, 0.2, -0.6)), Eigen::Vector3d(0, 0.1, 0.2)),
                                 1.2, 0.0));
  LinkSpec arm{"arm", Inertia<double>(1.0, Eigen::Vector3d(0, 0, -0.2), Eigen::Matrix3d::Identity() * 0.05), {}, {}};
  arm.collisions.push_back(geom("rod", GeomType::Capsule, Eigen::Vector3d(0.05, 0.3, 0),
                                Pose<double>(rpy_to_matrix<double>(Eigen::Vector3d(-0.3, 0.7, 1.1)), Eigen::Vector3d(0, 0, -0.3)),
                                0.9, 0.5));
  arm.collisions.push_back(geom("drum", GeomType::Cylinder, Eigen::Vector3d(0.1, 0.05, 0),
                                Pose<double>(rpy_to_matrix<double>(Eigen::Vector3d(2.0, -1.0, 0.5)), Eigen::Vector3d(0.1, 0, -0.6)),
                                0.7, 1.0));
  b.add_link(world).add_link(base).add_link(arm);
  JointSpec free{.name = "float", .type = JointType::Free, .parent = "world", .child = "base"};
  JointSpec hinge{.name = "hinge", .type = JointType::Revolute, .parent = "base", .child = "arm"};
  hinge.axis = Eigen::Vector3d(0, 1, 0);
  b.add_joint(free).add_joint(hinge);
  Model m = b.build();
  m.contact.stiffness = 2e4;
  m.contact.exponent = 1.3;
  m.contact.damping = 0.7;
  m.contact.velocity_scale = 0.02;
  m.contact.static_friction_ratio = 1.4;
  m.contact.viscous_friction = 0.3;
  m.contact.erp = 0.25;
  m.contact.slop = 2e-4;
  m.contact.cfm = 1e-6;
  return m;
}

TEST(Params, NamesAreUniqueAndMatchTheVector) {
  std::vector<Model> models = random_models();
  for (Model& m : shipped_models()) models.push_back(std::move(m));
  for (const Model& m : models) {
    const std::vector<std::string> names = param_names(m);
    EXPECT_EQ(static_cast<Eigen::Index>(names.size()), get_params(m).size()) << m.name;
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << m.name;
    EXPECT_EQ(names.front(), m.body_names[0] + ".mass");
    // ... gravity, 8 + used sizes per geom, the contact settings, then per actuator its kind's gains,
    // its gear and its ranges when limited (frictional DoFs' bounds are in the per-body block, so
    // gravity.z is found by counting from the end)
    int actuator_entries = 0;
    for (const Actuator& a : m.actuators) {
      const int gains = a.kind == ActuatorKind::Motor      ? 0
                        : a.kind == ActuatorKind::Position ? 2
                        : a.kind == ActuatorKind::Velocity ? 1
                        : a.kind == ActuatorKind::General  ? 6
                                                           : 3;
      actuator_entries += gains + 1 + (a.ctrl_limited ? 2 : 0) + (a.force_limited ? 2 : 0);
      EXPECT_EQ(index_of(names, a.name + ".gear") >= 0, true) << a.name;
    }
    // ... then 5 per joint coupling, 6 per body connection (+3 for a weld), 3 per fixed tendon
    int constraint_entries = 5 * static_cast<int>(m.joint_couplings.size()) + 3 * static_cast<int>(m.tendons.size());
    for (const BodyConnection& c : m.body_connections) constraint_entries += c.weld ? 9 : 6;
    actuator_entries += constraint_entries;
    ASSERT_GE(names.size(), kContactNames.size() + actuator_entries);
    const auto contact_end = names.end() - actuator_entries;
    EXPECT_EQ(std::vector<std::string>(contact_end - kContactNames.size(), contact_end), kContactNames) << m.name;
    int geom_entries = 0;
    for (const Geom& g : m.geoms) geom_entries += 8 + geom_size_count(g.type);
    EXPECT_EQ(index_of(names, "gravity.z"),
              static_cast<int>(names.size() - kContactNames.size() - actuator_entries) - geom_entries - 1)
        << m.name;
  }
}

TEST(Params, LayoutOfTheGeomsAndContactSettings) {
  const Model m = geom_model();
  const std::vector<std::string> names = param_names(m);
  const int first = index_of(names, "gravity.z") + 1;
  std::vector<std::string> expected;
  for (const Geom& g : m.geoms) {  // model order
    for (const char* c : {".friction", ".restitution"}) expected.push_back(g.name + c);
    for (int k = 0; k < geom_size_count(g.type); ++k) expected.push_back(g.name + ".size[" + std::to_string(k) + "]");
    for (const char* c : {"x", "y", "z", "roll", "pitch", "yaw"}) expected.push_back(g.name + ".origin." + c);
  }
  expected.insert(expected.end(), kContactNames.begin(), kContactNames.end());
  EXPECT_EQ(std::vector<std::string>(names.begin() + first, names.end()), expected);
  ASSERT_EQ(m.ngeoms(), 5);
  const Eigen::VectorXd p = get_params(m);
  const int ball = index_of(names, "ball.friction");
  ASSERT_LT(ball, p.size());
  EXPECT_EQ(p.segment<3>(ball), Eigen::Vector3d(0.5, 0.3, 0.2));  // friction, restitution, radius
  EXPECT_EQ(p.segment<3>(ball + 3), Eigen::Vector3d(0.1, 0, 0));   // origin
  EXPECT_EQ(p[index_of(names, "floor.origin.z")], -1.0);
  EXPECT_EQ(p.segment<3>(index_of(names, "block.size[0]")), Eigen::Vector3d(0.3, 0.2, 0.1));
  EXPECT_LE(max_abs(p.segment<3>(index_of(names, "rod.origin.roll")) - Eigen::Vector3d(-0.3, 0.7, 1.1)), 1e-14);
  EXPECT_EQ(p.segment<2>(index_of(names, "drum.size[0]")), Eigen::Vector2d(0.1, 0.05));
  EXPECT_EQ(p[index_of(names, "drum.restitution")], 1.0);
  EXPECT_EQ(p.tail<9>(), (Eigen::Matrix<double, 9, 1>() << 2e4, 1.3, 0.7, 0.02, 1.4, 0.3, 0.25, 2e-4, 1e-6).finished());
  EXPECT_EQ(index_of(names, "floor.size[0]"), static_cast<int>(names.size()));  // a plane has no size
}

TEST(Params, LayoutOfOneRevoluteAndOnePlanarJoint) {
  ModelBuilder b;
  b.add_link({"a", Inertia<double>(1.0, Eigen::Vector3d::Zero(), Eigen::Matrix3d::Identity()), {}});
  b.add_link({"b", Inertia<double>(2.0, Eigen::Vector3d(0.1, 0.2, 0.3), Eigen::Vector3d(1, 2, 3).asDiagonal()), {}});
  b.add_link({"c", Inertia<double>(1.5, Eigen::Vector3d::Zero(), Eigen::Matrix3d::Identity()), {}});
  JointSpec j1{.name = "hinge", .type = JointType::Revolute, .parent = "a", .child = "b"};
  j1.axis = Eigen::Vector3d(0, 0, 1);
  j1.damping = 0.7;
  j1.rest = 0.25;
  JointSpec j2{.name = "slide", .type = JointType::Planar, .parent = "b", .child = "c"};
  j2.stiffness = 3.0;
  b.add_joint(j1).add_joint(j2);
  const Model m = b.build();
  const std::vector<std::string> expected = {
      "b.mass", "b.com.x", "b.com.y", "b.com.z", "b.inertia.ixx", "b.inertia.iyy", "b.inertia.izz",
      "b.inertia.ixy", "b.inertia.ixz", "b.inertia.iyz", "hinge.origin.x", "hinge.origin.y", "hinge.origin.z",
      "hinge.origin.roll", "hinge.origin.pitch", "hinge.origin.yaw", "hinge.axis.x", "hinge.axis.y",
      "hinge.axis.z", "hinge.damping", "hinge.armature", "hinge.stiffness", "hinge.rest", "c.mass", "c.com.x",
      "c.com.y", "c.com.z", "c.inertia.ixx", "c.inertia.iyy", "c.inertia.izz", "c.inertia.ixy", "c.inertia.ixz",
      "c.inertia.iyz", "slide.origin.x", "slide.origin.y", "slide.origin.z", "slide.origin.roll",
      "slide.origin.pitch", "slide.origin.yaw", "slide.damping[0]", "slide.armature[0]", "slide.stiffness[0]",
      "slide.damping[1]", "slide.armature[1]", "slide.stiffness[1]", "slide.damping[2]", "slide.armature[2]",
      "slide.stiffness[2]", "slide.rest[0]", "slide.rest[1]", "slide.rest[2]", "gravity.x", "gravity.y",
      "gravity.z", "contact.stiffness", "contact.exponent", "contact.damping", "contact.velocity_scale",
      "contact.static_friction_ratio", "contact.viscous_friction", "contact.erp", "contact.slop", "contact.cfm"};
  EXPECT_EQ(param_names(m), expected);
  const Eigen::VectorXd p = get_params(m);
  ASSERT_EQ(p.size(), static_cast<Eigen::Index>(expected.size()));
  EXPECT_EQ(p[0], 2.0);
  EXPECT_EQ(p.segment<3>(1), Eigen::Vector3d(0.1, 0.2, 0.3));
  EXPECT_EQ(p.segment<6>(4), (Vector6<double>() << 1, 2, 3, 0, 0, 0).finished());
  EXPECT_EQ(p.segment<3>(16), Eigen::Vector3d(0, 0, 1));
  EXPECT_EQ(p[19], 0.7);
  EXPECT_EQ(p[22], 0.25);
  EXPECT_EQ(p[41], 3.0);
  EXPECT_EQ(p[47], 3.0);
  EXPECT_EQ(p.segment<3>(51), Eigen::Vector3d(0, 0, -9.81));
  const ContactSettings defaults;
  EXPECT_EQ(p.tail<9>(), (Eigen::Matrix<double, 9, 1>() << defaults.stiffness, defaults.exponent, defaults.damping,
                          defaults.velocity_scale, defaults.static_friction_ratio, defaults.viscous_friction,
                          defaults.erp, defaults.slop, defaults.cfm)
                             .finished());
}

TEST(Params, RoundTripOnRandomAndShippedModels) {
  std::vector<Model> models = random_models();
  models.push_back(geom_model());
  for (Model& m : shipped_models()) models.push_back(std::move(m));
  for (const Model& m : models) {
    const Eigen::VectorXd p = get_params(m);
    const Model m2 = with_params(m, p);
    expect_same_parameters(m, m2, 1e-12, m.name);
    EXPECT_LE(max_abs(get_params(m2) - p), 1e-12) << m.name;
  }
}

// with_params then get_params gives back any p (inside the rpy chart's ranges).
TEST(Params, PerturbedParametersComeBack) {
  std::vector<Model> models = random_models();
  models.push_back(geom_model());
  for (const Model& m : models) {
    const std::vector<std::string> names = param_names(m);
    std::mt19937 rng(5);
    Eigen::VectorXd p = get_params(m);
    const Eigen::VectorXd dp = test::random_vector(p.size(), rng, 0.05);
    for (int k = 0; k < p.size(); ++k) {
      const bool angle = names[k].ends_with(".roll") || names[k].ends_with(".pitch") || names[k].ends_with(".yaw");
      const double limit = names[k].ends_with(".pitch") ? std::numbers::pi / 2 : std::numbers::pi;
      // Keep angles inside the ranges get_params returns.
      p[k] = angle ? std::clamp(p[k] + dp[k], -limit + 0.1, limit - 0.1) : p[k] + dp[k];
      if (names[k].ends_with(".restitution")) p[k] = std::clamp(p[k], 0.0, 1.0);
    }
    // Axes are directions: with_params normalises them.
    for (int k = 0; k < p.size(); ++k)
      if (names[k].ends_with(".axis.x")) p.segment<3>(k).normalize();
    EXPECT_LE(max_abs(get_params(with_params(m, p)) - p), 1e-12) << m.name;
  }
}

// rpy_to_matrix(rpy of R) == R everywhere, gimbal lock included.
TEST(Params, AxesAreNormalisedAndTheirGradientIsTangent) {
  const Model m = test::random_model(6, 3);
  const std::vector<std::string> names = param_names(m);
  Eigen::VectorXd p = get_params(m);
  int axis = -1;
  for (int k = 0; k < p.size() && axis < 0; ++k)
    if (names[k].ends_with(".axis.x")) axis = k;
  ASSERT_GE(axis, 0);
  const Eigen::Vector3d a = p.segment<3>(axis);
  p.segment<3>(axis) = 2.5 * a;  // the same direction, not unit
  const Model scaled = with_params(m, p);
  EXPECT_LE(max_abs(get_params(scaled) - get_params(m)), 1e-14);
  p.segment<3>(axis).setZero();
  EXPECT_THROW(with_params(m, p), ModelError);
  ModelTangent t(m);
  for (auto& x : t.axis) x = Eigen::Vector3d(0.3, -1.0, 2.0);
  const Eigen::VectorXd g = params_gradient(m, t);
  EXPECT_NEAR(g.segment<3>(axis).dot(a), 0.0, 1e-14);  // no component along the axis
}

TEST(Params, RollPitchYawRoundTripIncludingGimbalLock) {
  Model m = test::random_model(3, 7);
  const double half_pi = std::numbers::pi / 2;
  std::mt19937 rng(3);
  for (double pitch : {half_pi, -half_pi, half_pi - 1e-9, -half_pi + 1e-13, 0.3, -1.2}) {
    for (int trial = 0; trial < 5; ++trial) {
      const Eigen::Vector3d r = test::random_vector(3, rng, 3.0);
      m.joint_placement[1].R = rpy_to_matrix<double>(Eigen::Vector3d(r.x(), pitch, r.z()));
      const Eigen::VectorXd p = get_params(m);
      const Model m2 = with_params(m, p);
      EXPECT_LE(max_abs(m2.joint_placement[1].R - m.joint_placement[1].R), 1e-14) << "pitch " << pitch;
      const std::vector<std::string> names = param_names(m);
      const auto ip = std::find(names.begin(), names.end(), m.joint_names[1] + ".origin.pitch") - names.begin();
      ASSERT_LT(ip, p.size());
      EXPECT_NEAR(p[ip], pitch, 1e-6);
      EXPECT_LE(std::abs(p[ip]), half_pi);
    }
  }
}

Model two_link_chain(double mass1) {
  ModelBuilder b;
  b.add_link({"base", std::nullopt, {}});
  b.add_link({"upper", Inertia<double>(1.2, Eigen::Vector3d(0, 0, -0.3), Eigen::Vector3d(0.05, 0.04, 0.01).asDiagonal()), {}});
  b.add_link({"lower", Inertia<double>(mass1, Eigen::Vector3d(0.02, 0, -0.25), Eigen::Vector3d(0.03, 0.03, 0.005).asDiagonal()), {}});
  JointSpec shoulder{.name = "shoulder", .type = JointType::Revolute, .parent = "base", .child = "upper"};
  shoulder.axis = Eigen::Vector3d(0, 1, 0);
  JointSpec elbow{.name = "elbow", .type = JointType::Revolute, .parent = "upper", .child = "lower"};
  elbow.origin = Pose<double>(rpy_to_matrix<double>(Eigen::Vector3d(0.1, 0.2, 0.3)), Eigen::Vector3d(0, 0, -0.6));
  elbow.axis = Eigen::Vector3d(0, 1, 0);
  b.add_joint(shoulder).add_joint(elbow);
  return b.build();
}

TEST(Params, ChangedMassChangesAbaLikeARebuiltModel) {
  const Model light = two_link_chain(0.8), heavy = two_link_chain(2.5);
  Eigen::VectorXd p = get_params(light);
  const std::vector<std::string> names = param_names(light);
  const int k = static_cast<int>(std::find(names.begin(), names.end(), "lower.mass") - names.begin());
  ASSERT_LT(k, p.size());
  p[k] = 2.5;
  const Model changed = with_params(light, p);
  Data d_light(light), d_heavy(heavy), d_changed(changed);
  const Eigen::Vector2d q(0.4, -0.9), v(0.3, 1.1), tau(0.5, -0.2);
  const Eigen::VectorXd a_light = aba(light, d_light, q, v, tau);
  const Eigen::VectorXd a_heavy = aba(heavy, d_heavy, q, v, tau);
  const Eigen::VectorXd a_changed = aba(changed, d_changed, q, v, tau);
  EXPECT_GT((a_light - a_heavy).norm(), 1e-2);  // the change matters
  EXPECT_LE((a_changed - a_heavy).cwiseAbs().maxCoeff(), 1e-13);
}

// Scaling every mass, inertia and armature by c scales M, C and g by c: with v = 0 and no
// gravity, the acceleration under the same tau is divided by c.
TEST(Params, ScaledInertialParametersDivideTheAcceleration) {
  const Model m = test::random_model(8, 9, true, true);
  const std::vector<std::string> names = param_names(m);
  const double c = 3.0;
  Eigen::VectorXd p = get_params(m);
  for (int k = 0; k < p.size(); ++k)
    if (names[k].ends_with(".mass") || names[k].find(".inertia.") != std::string::npos ||
        names[k].find(".armature") != std::string::npos)
      p[k] *= c;
  p.segment<3>(index_of(names, "gravity.x")).setZero();
  const Model scaled = with_params(m, p);
  Model unscaled = m;
  unscaled.gravity.setZero();
  std::mt19937 rng(2);
  const Eigen::VectorXd q = test::random_configuration(m, rng), v = Eigen::VectorXd::Zero(m.nv);
  const Eigen::VectorXd tau = test::random_vector(m.nv, rng);
  Data d1(unscaled), d2(scaled);
  const Eigen::VectorXd a1 = aba(unscaled, d1, q, v, tau);
  const Eigen::VectorXd a2 = aba(scaled, d2, q, v, tau);
  EXPECT_LE((a2 * c - a1).cwiseAbs().maxCoeff(), 1e-10 * (1 + a1.cwiseAbs().maxCoeff()));
}

TEST(Params, BadParametersThrow) {
  const Model m = test::random_model(4, 1);
  Eigen::VectorXd p = get_params(m);
  EXPECT_THROW(with_params(m, Eigen::VectorXd(p.head(p.size() - 1))), ArgumentError);
  try {
    with_params(m, Eigen::VectorXd(p.head(3)));
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("expected shape (" + std::to_string(p.size()) + ",), got (3,)"),
              std::string::npos) << e.what();
  }
  const std::vector<std::string> names = param_names(m);
  const int k = static_cast<int>(std::find(names.begin(), names.end(), m.body_names[2] + ".mass") - names.begin());
  p[k] = -1.0;
  try {
    with_params(m, p);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(m.body_names[2] + ".mass"), std::string::npos) << e.what();
  }
  p[k] = 0.0;
  EXPECT_THROW(with_params(m, p), ModelError);
  p[k] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(with_params(m, p), ModelError);
}

// Geom parameters out of range (negative friction, restitution above 1, sizes not positive) fail
// naming the geom and the parameter; contact settings are checked while contact is on.
TEST(Params, BadGeomAndContactParametersThrow) {
  Model m = geom_model();
  const std::vector<std::string> names = param_names(m);
  const Eigen::VectorXd p0 = get_params(m);
  auto expect_error = [&](const std::string& name, double value, const std::string& geom) {
    Eigen::VectorXd p = p0;
    const int k = index_of(names, name);
    ASSERT_LT(k, p.size()) << name;
    p[k] = value;
    try {
      with_params(m, p);
      FAIL() << "expected ModelError for " << name << " = " << value;
    } catch (const ModelError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("geom '" + geom + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + name + "'"), std::string::npos) << what;
    }
  };
  expect_error("ball.friction", -0.1, "ball");
  expect_error("block.friction", std::numeric_limits<double>::infinity(), "block");
  expect_error("rod.restitution", 1.01, "rod");
  expect_error("floor.restitution", std::numeric_limits<double>::quiet_NaN(), "floor");
  expect_error("ball.size[0]", 0.0, "ball");
  expect_error("block.size[2]", -0.1, "block");
  expect_error("drum.size[1]", std::numeric_limits<double>::quiet_NaN(), "drum");
  // In range (bounds included): fine.
  Eigen::VectorXd p = p0;
  p[index_of(names, "ball.friction")] = 0.0;
  p[index_of(names, "rod.restitution")] = 1.0;
  p[index_of(names, "drum.restitution")] = 0.0;
  EXPECT_NO_THROW(with_params(m, p));
  // Below 0 too: central differences around the default 0 step there.
  p[index_of(names, "drum.restitution")] = -1e-6;
  EXPECT_EQ(with_params(m, p).geoms[m.geom_id("drum")].restitution, -1e-6);
  // Contact settings: inert (and unchecked) while contact is off, checked once it is on.
  p = p0;
  p[index_of(names, "contact.cfm")] = -1e-6;
  EXPECT_EQ(m.contact.model, ContactModel::None);
  EXPECT_EQ(with_params(m, p).contact.cfm, -1e-6);
  m.contact.model = ContactModel::Penalty;
  try {
    with_params(m, p);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("cfm"), std::string::npos) << e.what();
  }
  p = p0;
  p[index_of(names, "contact.exponent")] = 0.5;
  EXPECT_THROW(with_params(m, p), ModelError);
  p[index_of(names, "contact.exponent")] = 2.0;
  EXPECT_EQ(with_params(m, p).contact.exponent, 2.0);
}

// --- gradients --------------------------------------------------------------------------------

struct Problem {
  Model model;
  Eigen::VectorXd q, v, tau, w;
};

// Every spring made non-zero (the free base of a random model has none): passive_forces skips a
// joint whose stiffness is exactly 0, which in forward mode also drops d/d stiffness there.
Problem make_problem(const Model& model, unsigned seed) {
  std::mt19937 rng(seed);
  Eigen::VectorXd p = get_params(model);
  const std::vector<std::string> names = param_names(model);
  for (int k = 0; k < p.size(); ++k)
    if (names[k].find(".stiffness") != std::string::npos && p[k] == 0.0) p[k] = 0.8;
  const Model sprung = with_params(model, p);
  Problem pr{sprung, test::random_configuration(sprung, rng), test::random_vector(sprung.nv, rng),
             test::random_vector(sprung.nv, rng), test::random_vector(sprung.nv, rng)};
  return pr;
}

// L(model) = w . forward_dynamics(model, q, v, tau): aba plus springs and dampers, so that every
// parameter kind (rest positions, damping, stiffness) enters.
template <class S>
S loss(const ModelTpl<S>& model, const Problem& pr) {
  DataTpl<S> data(model);  // built from this model: its joint_S carries this model's axes
  const VectorX<S> a = forward_dynamics<S>(model, data, pr.q.cast<S>(), pr.v.cast<S>(), pr.tau.cast<S>());
  S l = S(0);
  for (int k = 0; k < a.size(); ++k) l += pr.w[k] * a[k];
  return l;
}

// dL/dp by forward mode through with_params, kADChunk parameters per pass.
Eigen::VectorXd gradient_ad_params(const Problem& pr) {
  const Eigen::VectorXd p = get_params(pr.model);
  const ModelTpl<ADScalar> ad_model = pr.model.cast<ADScalar>();
  Eigen::VectorXd g(p.size());
  for (int first = 0; first < p.size(); first += kADChunk) {
    VectorX<ADScalar> ad_p(p.size());
    for (int k = 0; k < p.size(); ++k) ad_p[k] = ad_seed(p[k], k >= first && k < first + kADChunk ? k - first : -1);
    const ADScalar l = loss(with_params<ADScalar>(ad_model, ad_p), pr);
    for (int k = first; k < std::min<int>(p.size(), first + kADChunk); ++k) g[k] = l.derivatives()[k - first];
  }
  return g;
}

Eigen::VectorXd gradient_fd_params(const Problem& pr, double h) {
  const Eigen::VectorXd p = get_params(pr.model);
  Eigen::VectorXd g(p.size());
  for (int k = 0; k < p.size(); ++k) {
    Eigen::VectorXd pp = p, pm = p;
    pp[k] += h;
    pm[k] -= h;
    g[k] = (loss(with_params(pr.model, pp), pr) - loss(with_params(pr.model, pm), pr)) / (2 * h);
  }
  return g;
}

// Every scalar of the Model's parameter fields, in one fixed order, for a model (to seed) and a
// tangent (to fill). The two lists line up entry by entry.
template <class S, class Visit>
void visit_fields(ModelTpl<S>& m, Visit&& visit) {
  for (int i = 0; i < m.nbodies(); ++i) {
    visit(m.body_inertia[i].mass);
    for (int r = 0; r < 3; ++r) visit(m.body_inertia[i].com[r]);
    for (int r = 0; r < 9; ++r) visit(m.body_inertia[i].inertia_com.data()[r]);
    for (int r = 0; r < 9; ++r) visit(m.joint_placement[i].R.data()[r]);
    for (int r = 0; r < 3; ++r) visit(m.joint_placement[i].p[r]);
    for (int r = 0; r < 3; ++r) visit(m.joint_axis[i][r]);
  }
  for (auto* x : {&m.damping, &m.armature, &m.stiffness, &m.q_rest})
    for (int r = 0; r < x->size(); ++r) visit((*x)[r]);
  for (int r = 0; r < 3; ++r) visit(m.gravity[r]);
}

template <class Visit>
void visit_fields(ModelTangent& t, Visit&& visit) {
  for (size_t i = 0; i < t.mass.size(); ++i) {
    visit(t.mass[i]);
    for (int r = 0; r < 3; ++r) visit(t.com[i][r]);
    for (int r = 0; r < 9; ++r) visit(t.inertia_com[i].data()[r]);
    for (int r = 0; r < 9; ++r) visit(t.placement_R[i].data()[r]);
    for (int r = 0; r < 3; ++r) visit(t.placement_p[i][r]);
    for (int r = 0; r < 3; ++r) visit(t.axis[i][r]);
  }
  for (auto* x : {&t.damping, &t.armature, &t.stiffness, &t.q_rest})
    for (int r = 0; r < x->size(); ++r) visit((*x)[r]);
  for (int r = 0; r < 3; ++r) visit(t.gravity[r]);
}

// The Model-shaped adjoint dL/d(model fields), by forward mode, each field seeded on its own
// (the 9 entries of a rotation or inertia matrix independently).
ModelTangent tangent_ad(const Problem& pr) {
  ModelTangent t(pr.model);
  std::vector<double*> slots;
  visit_fields(t, [&](double& x) { slots.push_back(&x); });
  const int n = static_cast<int>(slots.size());
  for (int first = 0; first < n; first += kADChunk) {
    ModelTpl<ADScalar> ad_model = pr.model.cast<ADScalar>();
    int k = 0;
    visit_fields(ad_model, [&](ADScalar& x) {
      x = ad_seed(x.value(), k >= first && k < first + kADChunk ? k - first : -1);
      ++k;
    });
    const ADScalar l = loss(ad_model, pr);
    for (int j = first; j < std::min(n, first + kADChunk); ++j) *slots[j] = l.derivatives()[j - first];
  }
  return t;
}

std::vector<Problem> gradient_problems() {
  return {make_problem(test::random_model(6, 21, false, true), 1),
          make_problem(test::random_model(6, 22, true, true), 2),
          make_problem(test::random_model(7, 25, false, true), 3)};
}

TEST(ParamsGradient, ForwardModeThroughWithParamsMatchesFiniteDifferences) {
  for (const Problem& pr : gradient_problems()) {
    const Eigen::VectorXd g_ad = gradient_ad_params(pr);
    const Eigen::VectorXd g_fd = gradient_fd_params(pr, 1e-6);
    const double scale = 1.0 + g_ad.cwiseAbs().maxCoeff();
    const std::vector<std::string> names = param_names(pr.model);
    for (int k = 0; k < g_ad.size(); ++k)
      EXPECT_LE(std::abs(g_ad[k] - g_fd[k]) / scale, 1e-6) << names[k] << " ad " << g_ad[k] << " fd " << g_fd[k];
  }
}

TEST(ParamsGradient, ChainRuleFromTheModelTangentMatchesForwardMode) {
  for (const Problem& pr : gradient_problems()) {
    const Eigen::VectorXd expected = gradient_ad_params(pr);
    const Eigen::VectorXd g = params_gradient(pr.model, tangent_ad(pr));
    const double scale = 1.0 + expected.cwiseAbs().maxCoeff();
    const std::vector<std::string> names = param_names(pr.model);
    for (int k = 0; k < g.size(); ++k) EXPECT_NEAR(g[k], expected[k], 1e-10 * scale) << names[k];
  }
}

// The chain rule near gimbal lock: the rpy gradient still matches (pitch just inside +-pi/2).
TEST(ParamsGradient, ChainRuleNearGimbalLock) {
  Problem pr = make_problem(test::random_model(5, 31, false, true), 4);
  pr.model.joint_placement[2].R = rpy_to_matrix<double>(Eigen::Vector3d(0.4, std::numbers::pi / 2 - 1e-3, -0.7));
  pr.model.joint_placement[3].R = rpy_to_matrix<double>(Eigen::Vector3d(-1.1, -std::numbers::pi / 2 + 1e-3, 2.0));
  const Eigen::VectorXd expected = gradient_ad_params(pr);
  const Eigen::VectorXd g = params_gradient(pr.model, tangent_ad(pr));
  const double scale = 1.0 + expected.cwiseAbs().maxCoeff();
  EXPECT_LE((g - expected).cwiseAbs().maxCoeff() / scale, 1e-9);
}

// The chain rule for the geom and contact entries: a loss linear in the raw geom fields (its
// tangent is its coefficients, R's adjoint a full, non-tangent matrix) and in the contact
// settings, against forward mode through with_params (geoms) and central differences (the
// settings are doubles: forward mode cannot see them).
TEST(ParamsGradient, ChainRuleForGeomsAndContactSettings) {
  const Model m = geom_model();
  std::mt19937 rng(8);
  ModelTangent t(m);
  for (int g = 0; g < m.ngeoms(); ++g) {
    t.geom_friction[g] = test::random_vector(1, rng)[0];
    t.geom_restitution[g] = test::random_vector(1, rng)[0];
    t.geom_size[g] = test::random_vector(3, rng);
    t.geom_placement_R[g] = Eigen::Map<const Eigen::Matrix3d>(test::random_vector(9, rng).data());
    t.geom_placement_p[g] = test::random_vector(3, rng);
  }
  const Eigen::VectorXd w = test::random_vector(9, rng);
  t.contact = {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8]};
  auto loss = [&](const auto& model) {
    using S = typename std::decay_t<decltype(model)>::Scalar;
    S l = S(0);
    for (int g = 0; g < model.ngeoms(); ++g) {
      const GeomTpl<S>& geom = model.geoms[g];
      l += t.geom_friction[g] * geom.friction + t.geom_restitution[g] * geom.restitution;
      for (int k = 0; k < 3; ++k) l += t.geom_size[g][k] * geom.size[k] + t.geom_placement_p[g][k] * geom.placement.p[k];
      for (int k = 0; k < 9; ++k) l += t.geom_placement_R[g].data()[k] * geom.placement.R.data()[k];
    }
    const ContactSettings& c = model.contact;
    l += w[0] * c.stiffness + w[1] * c.exponent + w[2] * c.damping + w[3] * c.velocity_scale +
         w[4] * c.static_friction_ratio + w[5] * c.viscous_friction + w[6] * c.erp + w[7] * c.slop + w[8] * c.cfm;
    return l;
  };
  const Eigen::VectorXd g = params_gradient(m, t);
  const std::vector<std::string> names = param_names(m);
  const Eigen::VectorXd p0 = get_params(m);
  const int first = index_of(names, "gravity.z") + 1, n = static_cast<int>(p0.size()) - first;
  const ModelTpl<ADScalar> ad_model = m.cast<ADScalar>();
  for (int chunk = 0; chunk < n; chunk += kADChunk) {
    VectorX<ADScalar> p(p0.size());
    for (int k = 0; k < p0.size(); ++k) {
      const int j = k - first - chunk;
      p[k] = ad_seed(p0[k], j >= 0 && j < kADChunk ? j : -1);
    }
    const ADScalar l = loss(with_params<ADScalar>(ad_model, p));
    for (int j = chunk; j < std::min(n, chunk + kADChunk); ++j) {
      if (names[first + j].starts_with("contact.")) continue;
      EXPECT_NEAR(g[first + j], l.derivatives()[j - chunk], 1e-12) << names[first + j];
    }
  }
  for (int k = index_of(names, "contact.stiffness"); k < p0.size(); ++k) {
    const double h = 1e-3 * (1 + std::abs(p0[k]));  // the loss is linear: a large step only lowers rounding
    Eigen::VectorXd pp = p0, pm = p0;
    pp[k] += h;
    pm[k] -= h;
    EXPECT_NEAR(g[k], (loss(with_params(m, pp)) - loss(with_params(m, pm))) / (2 * h), 1e-8) << names[k];
    EXPECT_EQ(g[k], w[k - index_of(names, "contact.stiffness")]) << names[k];
  }
}

TEST(ParamsGradient, TangentStartsAtZeroAndSetZeroClears) {
  const Model m = test::random_model(5, 3, true, true);
  ModelTangent t(m);
  EXPECT_EQ(params_gradient(m, t).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(t.damping.size(), m.nv);
  EXPECT_EQ(t.q_rest.size(), m.nq);
  EXPECT_EQ(static_cast<int>(t.placement_R.size()), m.nbodies());
  t.placement_R[1](0, 2) = 2.0;
  t.inertia_com[0](1, 0) = 1.0;
  t.gravity.z() = 3.0;
  EXPECT_GT(params_gradient(m, t).cwiseAbs().maxCoeff(), 0.0);
  t.setZero();
  EXPECT_EQ(params_gradient(m, t).cwiseAbs().maxCoeff(), 0.0);

  const Model gm = geom_model();
  ModelTangent gt(gm);
  EXPECT_EQ(static_cast<int>(gt.geom_size.size()), gm.ngeoms());
  EXPECT_EQ(gt.geom_friction.size(), gm.ngeoms());
  EXPECT_EQ(params_gradient(gm, gt).cwiseAbs().maxCoeff(), 0.0);
  gt.geom_restitution[2] = 1.0;
  gt.geom_placement_R[4](1, 1) = 2.0;
  gt.contact.slop = 4.0;
  EXPECT_GT(params_gradient(gm, gt).cwiseAbs().maxCoeff(), 0.0);
  gt.setZero();
  EXPECT_EQ(params_gradient(gm, gt).cwiseAbs().maxCoeff(), 0.0);
}

}  // namespace
}  // namespace gradyn

namespace gradyn {
namespace {

// Two hinges with dry friction on one, a coupling between them, a weld of a free box to the second
// link and a tendon over both: every constraint's parameter group.
Model constrained_model() {
  using V3 = Vector3<double>;
  ModelBuilder b;
  b.add_link({"base", std::nullopt, {}});
  b.add_link({"l1", Inertia<double>(1.0, V3(0.2, 0, 0), Matrix3<double>::Identity() * 0.01), {}});
  b.add_link({"l2", Inertia<double>(0.5, V3(0.2, 0, 0), Matrix3<double>::Identity() * 0.01), {}});
  b.add_link({"box", Inertia<double>(1.0, V3::Zero(), Matrix3<double>::Identity() * 0.01), {}});
  JointSpec j;
  j.name = "a", j.type = JointType::Revolute, j.parent = "base", j.child = "l1", j.axis = V3::UnitY();
  j.frictionloss = 0.3;
  b.add_joint(j);
  j.name = "b", j.parent = "l1", j.child = "l2", j.origin.p = V3(0.4, 0, 0), j.frictionloss = 0.0;
  b.add_joint(j);
  JointSpec free;
  free.name = "float", free.type = JointType::Free, free.parent = "base", free.child = "box";
  free.origin.p = V3(0.8, 0, 0);
  b.add_joint(free);
  JointCouplingSpec c;
  c.name = "cam", c.joint1 = "b", c.joint2 = "a", c.polycoef = {0.1, -0.5, 0.2, 0.0, 0.01};
  b.add_joint_coupling(c);
  ConnectionSpec weld;
  weld.name = "hold", weld.frame1 = "box", weld.frame2 = "l2", weld.weld = true, weld.anchor1 = V3::Zero();
  b.add_connection(weld);
  TendonSpec t;
  t.name = "strap", t.joints = {"a", "b"}, t.coefs = {0.5, -1.0}, t.stiffness = 2.0, t.damping = 0.1;
  b.add_tendon(t);
  return b.build();
}

TEST(Params, ConstraintGroupsHaveNamesAndRoundTrip) {
  const Model m = constrained_model();
  const std::vector<std::string> names = param_names(m);
  const Eigen::VectorXd p = get_params(m);
  const auto at = [&](const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return static_cast<int>(it - names.begin());
  };
  EXPECT_EQ(p[at("a.frictionloss")], 0.3);
  EXPECT_EQ(std::count(names.begin(), names.end(), "b.frictionloss"), 0);  // no friction row, no parameter
  EXPECT_EQ(p[at("cam.polycoef[4]")], 0.01);
  EXPECT_EQ(p.segment<3>(at("hold.anchor1.x")), m.body_connections[0].anchor1);
  EXPECT_EQ(p.segment<3>(at("hold.anchor2.x")), m.body_connections[0].anchor2);
  EXPECT_LT((rpy_to_matrix<double>(p.segment<3>(at("hold.rotation.roll"))) - m.body_connections[0].rotation).norm(),
            1e-12);
  EXPECT_EQ(p.segment<3>(at("strap.stiffness")), Eigen::Vector3d(2.0, 0.1, m.tendons[0].spring_length));
  // they follow the actuators (none here) and precede nothing but networks
  EXPECT_EQ(at("strap.spring_length"), static_cast<int>(names.size()) - 1);
  // with_params writes them
  Eigen::VectorXd q = p;
  q[at("a.frictionloss")] = 0.7, q[at("cam.polycoef[2]")] = -0.3, q[at("hold.anchor2.y")] += 0.01;
  q[at("hold.rotation.yaw")] += 0.1, q[at("strap.damping")] = 0.4;
  const Model m2 = with_params(m, q);
  EXPECT_EQ(m2.frictionloss[0], 0.7);
  EXPECT_EQ(m2.joint_couplings[0].polycoef[2], -0.3);
  EXPECT_EQ(m2.body_connections[0].anchor2.y(), q[at("hold.anchor2.y")]);
  EXPECT_EQ(m2.tendons[0].damping, 0.4);
  EXPECT_LE(max_abs(get_params(m2) - q), 1e-12);
  // these are doubles in the Model: forward-mode AD cannot see them (gradcheck skips them there)
  const std::vector<int> doubles = double_valued_params(m);
  EXPECT_TRUE(std::binary_search(doubles.begin(), doubles.end(), at("cam.polycoef[0]")));
  EXPECT_TRUE(std::binary_search(doubles.begin(), doubles.end(), at("strap.spring_length")));
  EXPECT_TRUE(std::binary_search(doubles.begin(), doubles.end(), at("contact.cfm")));
  EXPECT_FALSE(std::binary_search(doubles.begin(), doubles.end(), at("a.frictionloss")));  // a Model field of S
  // out of range: named
  Eigen::VectorXd bad = p;
  bad[at("a.frictionloss")] = 0.0;
  try {
    with_params(m, bad);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("'a.frictionloss'"), std::string::npos) << e.what();
  }
  bad = p;
  bad[at("strap.stiffness")] = -1.0;
  try {
    with_params(m, bad);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("'strap.stiffness'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gradyn
