#include "gradyn/model/builder.hpp"
#include "gradyn/model/detail/joint_layout.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>

namespace gradyn {

// Sum of two inertias in one frame. Massless links may still carry rotational inertia (a rotor,
// a frame given a tensor but no mass), which Inertia::operator+ drops when both masses are zero.
static Inertia<double> add_inertia(const Inertia<double>& a, const Inertia<double>& b) {
  if (a.mass + b.mass == 0) return Inertia<double>(0, Vector3<double>::Zero(), a.inertia_com + b.inertia_com);
  return a + b;
}

static SourceLocation or_named(const SourceLocation& where, const char* kind, const std::string& name) {
  if (!where.element.empty() || !where.file.empty()) return where;
  SourceLocation w = where;
  w.element = std::string("<") + kind + " name='" + name + "'>";
  return w;
}

namespace {

// Mass and the tensor's entries: checks that no policy relaxes.
void check_inertia_entries(const Inertia<double>& I, const SourceLocation& where) {
  if (!std::isfinite(I.mass) || I.mass < 0) {
    std::ostringstream s;
    s << "mass must be zero or positive and finite, got " << I.mass;
    throw ModelError(where, s.str());
  }
  if (!I.com.allFinite() || !I.inertia_com.allFinite()) throw ModelError(where, "inertia has non-finite entries");
  const Matrix3<double>& J = I.inertia_com;
  if ((J - J.transpose()).cwiseAbs().maxCoeff() > 1e-12 * (1 + J.cwiseAbs().maxCoeff()))
    throw ModelError(where, "rotational inertia is not symmetric");
}

// Principal moments, ascending.
Vector3<double> principal_moments(const Matrix3<double>& J) {
  return Eigen::SelfAdjointEigenSolver<Matrix3<double>>(J, Eigen::EigenvaluesOnly).eigenvalues();
}

// Why no rigid body has these principal moments (ascending), or "" when one does. Zero moments
// (a point mass, a rod) are physical. The relative tolerance 1e-6 keeps files written with
// rounded numbers (a flat body: A + B = C), and the absolute one, MuJoCo's mjMINVAL (1e-15 kg m^2),
// tensors that are zero but for rounding noise (iCub's head: ixz = 2.4e-35).
std::string impossible_moments(double mass, const Vector3<double>& ev, bool triangle = true) {
  const double scale = ev.cwiseAbs().maxCoeff();
  std::ostringstream s;
  s << "rotational inertia is not that of a rigid body: principal moments " << ev.transpose();
  constexpr double kAbsolute = 1e-15;
  if (mass == 0 && scale > kAbsolute) {
    s << " without mass (a body's moments come from its mass: zero mass, zero inertia)";
    return s.str();
  }
  if (ev[0] < -1e-6 * scale - kAbsolute) {
    s << " include a negative one (the tensor is not positive semidefinite)";
    return s.str();
  }
  if (triangle && ev[0] + ev[1] < ev[2] * (1 - 1e-6) - kAbsolute) {
    s << " violate the triangle inequality A + B >= C (" << ev[0] << " + " << ev[1] << " < " << ev[2] << ")";
    return s.str();
  }
  return "";
}

const char* kInertiaOptions =
    ". Load with inertia='repair' to make it physical (its principal moments replaced by their mean, as MuJoCo's "
    "compiler balanceinertia does; zero for a massless link), or inertia='accept' to keep it as written (as "
    "Pinocchio does), each with a warning (C++: LoadOptions::inertia = InertiaPolicy::Repair or "
    "InertiaPolicy::Accept)";

}  // namespace

void check_inertia(const Inertia<double>& I, const SourceLocation& where) {
  check_inertia_entries(I, where);
  const std::string wrong = impossible_moments(I.mass, principal_moments(I.inertia_com));
  if (!wrong.empty()) throw ModelError(where, wrong + kInertiaOptions);
}

const char* geom_type_name(GeomType type) {
  switch (type) {
    case GeomType::Plane: return "plane";
    case GeomType::Sphere: return "sphere";
    case GeomType::Capsule: return "capsule";
    case GeomType::Box: return "box";
    case GeomType::Cylinder: return "cylinder";
    case GeomType::ConvexHull: return "convex_hull";
  }
  return "unknown";
}

void check_geom(const GeomSpec& g, const SourceLocation& where) {
  const std::string who = std::string(geom_type_name(g.type)) + " geom '" + g.name + "': ";
  auto fail = [&](const std::string& what) { throw ModelError(where, who + what); };
  auto str = [](double x) {
    std::ostringstream s;
    s << x;
    return s.str();
  };
  if (!(g.friction >= 0) || !std::isfinite(g.friction))
    fail("friction must be non-negative and finite, got " + str(g.friction));
  if (!(g.restitution >= 0 && g.restitution <= 1)) fail("restitution must be in [0, 1], got " + str(g.restitution));
  if (!g.placement.R.allFinite() || !g.placement.p.allFinite()) fail("placement is not finite");
  int used = 0;
  const char* names[3] = {"", "", ""};
  switch (g.type) {
    case GeomType::Plane: used = 0; break;
    case GeomType::Sphere: used = 1; names[0] = "radius"; break;
    case GeomType::Capsule:
    case GeomType::Cylinder: used = 2; names[0] = "radius"; names[1] = "half-length"; break;
    case GeomType::Box: used = 3; names[0] = "half-extent x"; names[1] = "half-extent y"; names[2] = "half-extent z"; break;
    case GeomType::ConvexHull:
      if (!g.hull) fail("has no hull (make one with make_convex_hull, or use convex_hull_geom)");
      used = 3; names[0] = "scale x"; names[1] = "scale y"; names[2] = "scale z";
      break;
  }
  for (int k = 0; k < used; ++k)
    if (!(g.size[k] > 0) || !std::isfinite(g.size[k]))
      fail(std::string(names[k]) + " must be positive and finite, got " + str(g.size[k]));
}

ModelBuilder& ModelBuilder::exclude_collision(std::string link_a, std::string link_b, SourceLocation where) {
  exclusions_.push_back({std::move(link_a), std::move(link_b), std::move(where)});
  return *this;
}

ModelBuilder& ModelBuilder::add_link(LinkSpec link) {
  const SourceLocation where = or_named(link.where, "link", link.name);
  if (link.name.empty()) throw ModelError(where, "a link needs a name");
  for (const auto& l : links_)
    if (l.name == link.name) throw ModelError(where, "duplicate link name '" + link.name + "'");
  if (link.inertia) {
    const SourceLocation at =
        link.inertia_where.file.empty() && link.inertia_where.element.empty() ? where : link.inertia_where;
    check_inertia_entries(*link.inertia, at);
    const Vector3<double> moments = principal_moments(link.inertia->inertia_com);
    // The triangle inequality is checked on tensors read from files (a loader sets inertia_where);
    // links built in code (ModelBuilder, random test models) keep the builder's former rule, a
    // positive-semidefinite tensor.
    const bool from_file = !link.inertia_where.file.empty() || !link.inertia_where.element.empty();
    const std::string wrong = impossible_moments(link.inertia->mass, moments, from_file);
    if (!wrong.empty()) {
      switch (inertia_policy_) {
        case InertiaPolicy::Strict: throw ModelError(at, wrong + kInertiaOptions);
        case InertiaPolicy::Repair: {
          std::ostringstream s;
          s << "the rotational inertia of link '" << link.name << "' (principal moments " << moments.transpose() << ")";
          if (link.inertia->mass == 0) {  // no mass, no moments
            link.inertia->inertia_com.setZero();
            inertia_warnings_.add("repaired massless", at, s.str() + " without mass",
                                  "is not that of a rigid body; it was repaired (inertia='repair'): set to zero, as "
                                  "the link has no mass");
            break;
          }
          const double mean = moments.sum() / 3;
          if (!(mean > 0))
            throw ModelError(at, wrong + "; it cannot be repaired: the mean of its moments is not positive");
          link.inertia->inertia_com = mean * Matrix3<double>::Identity();
          inertia_warnings_.add("repaired", at, s.str(),
                                "is not that of a rigid body; it was repaired (inertia='repair'): its moments were "
                                "replaced by their mean, as MuJoCo's balanceinertia does");
          break;
        }
        case InertiaPolicy::Accept: {
          std::ostringstream s;
          s << "the rotational inertia of link '" << link.name << "' (principal moments " << moments.transpose() << ")";
          inertia_warnings_.add("accepted", at, s.str(),
                                "is not that of a rigid body; it is kept as written (inertia='accept'), so the "
                                "model's dynamics are those of no real machine");
          break;
        }
      }
    }
  }
  for (size_t k = 0; k < link.collisions.size(); ++k) {
    GeomSpec& g = link.collisions[k];
    if (g.name.empty()) g.name = link.name + "/collision" + std::to_string(k);
    if (g.where.element.empty() && g.where.file.empty()) g.where = SourceLocation{"", 0, "<geom name='" + g.name + "'>"};
    check_geom(g, g.where);
  }
  link.where = where;
  links_.push_back(std::move(link));
  return *this;
}

ModelBuilder& ModelBuilder::add_site(SiteSpec site) {
  if (site.kind == FrameKind::Camera)
    throw ModelError(or_named(site.where, "camera", site.name), "add a camera with add_camera (it needs its field of view)");
  return push_site(std::move(site));
}

ModelBuilder& ModelBuilder::push_site(SiteSpec site) {
  const SourceLocation where = or_named(site.where, "site", site.name);
  if (site.name.empty())
    throw ModelError(where, site.kind == FrameKind::Camera ? "a camera needs a name" : "a site needs a name");
  if (site.kind != FrameKind::Site && site.kind != FrameKind::Geom && site.kind != FrameKind::Camera)
    throw ModelError(where, "a site's frame is of kind Site, Geom or Camera");
  for (const auto& x : sites_)
    if (x.name == site.name && x.kind == site.kind)
      throw ModelError(where, std::string("duplicate ") +
                                  (site.kind == FrameKind::Site ? "site" : site.kind == FrameKind::Geom ? "geom frame" : "camera") +
                                  " name '" + site.name + "'");
  if (!site.placement.R.allFinite() || !site.placement.p.allFinite()) throw ModelError(where, "placement is not finite");
  site.where = where;
  sites_.push_back(std::move(site));
  return *this;
}

ModelBuilder& ModelBuilder::add_camera(const std::string& name, const std::string& link, const Pose<double>& placement,
                                       double fovy, const SourceLocation& where_, const std::string& unsupported) {
  const SourceLocation where = or_named(where_, "camera", name);
  if (!(fovy > 0.0 && fovy < 180.0))
    throw ModelError(where, "fovy: expected a vertical field of view in (0, 180) degrees, got " + std::to_string(fovy));
  push_site(SiteSpec{name, FrameKind::Camera, link, placement, where});
  cameras_.emplace_back(fovy, unsupported);
  return *this;
}

ModelBuilder& ModelBuilder::add_joint_coupling(JointCouplingSpec coupling) {
  if (coupling.where.element.empty())
    coupling.where = SourceLocation{coupling.where.file.empty() ? source_ : coupling.where.file, coupling.where.line,
                                    "<joint coupling '" + coupling.name + "'>"};
  couplings_.push_back(std::move(coupling));
  return *this;
}

ModelBuilder& ModelBuilder::add_tendon(TendonSpec tendon) {
  if (tendon.where.element.empty())
    tendon.where = SourceLocation{tendon.where.file.empty() ? source_ : tendon.where.file, tendon.where.line,
                                  "<tendon '" + tendon.name + "'>"};
  tendons_.push_back(std::move(tendon));
  return *this;
}

ModelBuilder& ModelBuilder::add_connection(ConnectionSpec connection) {
  if (connection.where.element.empty())
    connection.where = SourceLocation{connection.where.file.empty() ? source_ : connection.where.file,
                                      connection.where.line,
                                      (connection.weld ? "<weld '" : "<connection '") + connection.name + "'>"};
  connections_.push_back(std::move(connection));
  return *this;
}

ModelBuilder& ModelBuilder::add_sensor(SensorSpec sensor) {
  const SourceLocation where =
      sensor.where.element.empty()
          ? SourceLocation{sensor.where.file.empty() ? source_ : sensor.where.file, sensor.where.line,
                           std::string("<") + sensor_kind_name(sensor.kind) + " name='" + sensor.name + "'>"}
          : sensor.where;
  for (double x : {sensor.cutoff, sensor.noise})
    if (!(x >= 0) || !std::isfinite(x))
      throw ModelError(where, "cutoff and noise must be finite and non-negative, got " + std::to_string(x));
  if (sensor.kind == SensorKind::Touch && (!sensor.zone_size.allFinite() || (sensor.zone_size.array() < 0).any()))
    throw ModelError(where, "the touch zone's size must be finite and non-negative");
  sensor.where = where;
  sensors_.push_back(std::move(sensor));
  return *this;
}

ModelBuilder& ModelBuilder::add_joint(JointSpec joint) {
  const SourceLocation where = or_named(joint.where, "joint", joint.name);
  if (joint.name.empty()) throw ModelError(where, "a joint needs a name");
  for (const auto& j : joints_)
    if (j.name == joint.name) throw ModelError(where, "duplicate joint name '" + joint.name + "'");
  if (joint_has_axis(joint.type)) {
    const double n = joint.axis.norm();
    if (!std::isfinite(n) || n < 1e-12) throw ModelError(where, "joint axis must be a non-zero vector");
    joint.axis /= n;
  }
  auto nonneg = [&](double x, const char* what) {
    if (!(x >= 0)) throw ModelError(where, std::string(what) + " must be non-negative, got " + std::to_string(x));
  };
  nonneg(joint.damping, "damping");
  nonneg(joint.armature, "armature");
  nonneg(joint.stiffness, "stiffness");
  nonneg(joint.frictionloss, "frictionloss");
  if (!std::isfinite(joint.frictionloss)) throw ModelError(where, "frictionloss must be finite");
  nonneg(joint.effort_limit, "effort limit");
  nonneg(joint.velocity_limit, "velocity limit");
  if (joint.lower > joint.upper) throw ModelError(where, "lower limit is above the upper limit");
  if (!joint.origin.R.allFinite() || !joint.origin.p.allFinite()) throw ModelError(where, "origin is not finite");
  joint.where = where;
  joints_.push_back(std::move(joint));
  return *this;
}

ModelBuilder& ModelBuilder::add_actuator(ActuatorSpec a) {
  const SourceLocation where =
      a.where.element.empty()
          ? SourceLocation{a.where.file.empty() ? source_ : a.where.file, a.where.line,
                           std::string("<") + actuator_kind_name(a.kind) + " name='" + a.name + "' joint='" + a.joint + "'>"}
          : a.where;
  auto finite = [&](double x, const char* what) {
    if (!std::isfinite(x)) throw ModelError(where, std::string(what) + " must be finite, got " + std::to_string(x));
  };
  finite(a.gear, "gear");
  finite(a.kp, "kp");
  finite(a.kv, "kv");
  for (int k = 0; k < 3; ++k) finite(a.gain[k], "gain"), finite(a.bias[k], "bias");
  if (!(a.velocity_limit >= 0))
    throw ModelError(where, "velocity_limit must be non-negative, got " + std::to_string(a.velocity_limit));
  for (const auto& [range, what] : {std::pair{&a.ctrl_range, "ctrlrange"}, std::pair{&a.force_range, "forcerange"}}) {
    if (!*range) continue;
    const auto [lo, hi] = **range;
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
      throw ModelError(where, std::string(what) + " must be two finite numbers, lower <= upper, got (" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + ")");
  }
  if (a.joint.empty()) throw ModelError(where, "the actuator names no joint");
  a.where = where;
  actuators_.push_back(std::move(a));
  return *this;
}

namespace {

// The model's actuators from their specs: joint names resolved to bodies, each kind's gains
// written as MuJoCo writes them (gain and bias vectors), names made unique.
void add_actuators(const std::vector<ActuatorSpec>& specs, Model& m) {
  for (const ActuatorSpec& spec : specs) {
    const int j = m.joint_id(spec.joint);
    if (j < 0)
      throw ModelError(spec.where, "actuator joint '" + spec.joint +
                                       "' is not a moving joint of the model (no such joint, or a fixed one)");
    const JointType type = m.joint_type[j];
    if (m.joint_nq(j) != 1 || m.joint_nv(j) != 1)
      throw ModelError(spec.where, std::string("actuator joint '") + spec.joint + "' is a " + std::string(joint_type_name(type)) +
                                       " joint; actuators drive 1-DoF joints (revolute, continuous, prismatic)");
    Actuator a;
    a.kind = spec.kind;
    a.joint = j;
    a.gear = spec.gear;
    a.where = spec.where;
    switch (spec.kind) {
      case ActuatorKind::Motor: a.gain = Vector3<double>(1, 0, 0), a.bias.setZero(); break;
      case ActuatorKind::Position: a.gain = Vector3<double>(spec.kp, 0, 0), a.bias = Vector3<double>(0, -spec.kp, -spec.kv); break;
      case ActuatorKind::Velocity: a.gain = Vector3<double>(spec.kv, 0, 0), a.bias = Vector3<double>(0, 0, -spec.kv); break;
      case ActuatorKind::General: a.gain = spec.gain, a.bias = spec.bias; break;
      case ActuatorKind::Servo:
        a.gain.setZero(), a.bias.setZero();
        a.servo_kp = spec.kp, a.servo_kv = spec.kv, a.servo_velocity_limit = spec.velocity_limit;
        break;
    }
    if (spec.ctrl_range) a.ctrl_limited = true, a.ctrl_lower = spec.ctrl_range->first, a.ctrl_upper = spec.ctrl_range->second;
    if (spec.force_range)
      a.force_limited = true, a.force_lower = spec.force_range->first, a.force_upper = spec.force_range->second;
    a.name = spec.name;
    if (a.name.empty()) {
      a.name = spec.joint;
      for (int k = 1; m.actuator_id(a.name) >= 0; ++k)
        a.name = spec.joint + "/" + actuator_kind_name(spec.kind) + (k > 1 ? std::to_string(k) : "");
    } else if (m.actuator_id(a.name) >= 0) {
      throw ModelError(spec.where, "actuator name '" + a.name + "' is used twice");
    }
    m.actuators.push_back(std::move(a));
  }
}

/// The frame of the given kind and name (sites and links), or -1.
int find_frame(const Model& m, FrameKind kind, const std::string& name) {
  for (int f = 0; f < static_cast<int>(m.frames.size()); ++f)
    if (m.frames[f].kind == kind && m.frames[f].name == name) return f;
  return -1;
}

void add_joint_couplings(const std::vector<JointCouplingSpec>& specs, Model& m) {
  for (const JointCouplingSpec& spec : specs) {
    JointCoupling c;
    c.name = spec.name.empty() ? "coupling" + std::to_string(m.joint_couplings.size()) : spec.name;
    c.where = spec.where;
    c.tendons = spec.tendons;
    const char* kind = spec.tendons ? "tendon" : "joint";
    const auto scalar_joint = [&](const std::string& joint, const char* role) {
      if (spec.tendons) {
        for (size_t t = 0; t < m.tendons.size(); ++t)
          if (m.tendons[t].name == joint) return static_cast<int>(t);
        throw ModelError(spec.where, "tendon coupling '" + c.name + "': unknown " + role + " '" + joint + "'" +
                                         (joint.empty() ? " (give it a fixed tendon)" : " (not a fixed tendon)"));
      }
      const int b = m.joint_id(joint);
      if (b < 0)
        throw ModelError(spec.where, "joint coupling '" + c.name + "': unknown " + role + " '" + joint + "'" +
                                         (joint.empty() ? " (give it a joint)" : ""));
      if (m.joint_nv(b) != 1)
        throw ModelError(spec.where, "joint coupling '" + c.name + "': " + role + " '" + joint + "' is " +
                                         std::string(joint_type_name(m.joint_type[b])) +
                                         "; couplings join hinge and slide joints only");
      return b;
    };
    c.joint1 = scalar_joint(spec.joint1, spec.tendons ? "tendon1" : "joint1");
    if (!spec.joint2.empty()) {
      c.joint2 = scalar_joint(spec.joint2, spec.tendons ? "tendon2" : "joint2");
      if (c.joint2 == c.joint1)
        throw ModelError(spec.where, std::string(kind) + " coupling '" + c.name + "' couples " + kind + " '" +
                                         spec.joint1 + "' to itself");
    }
    for (double x : spec.polycoef)
      if (!std::isfinite(x))
        throw ModelError(spec.where, std::string(kind) + " coupling '" + c.name + "': polycoef must be finite");
    c.polycoef = spec.polycoef;
    // the references: the coordinates at q0 (a tendon's length there)
    const auto at_q0 = [&](int id) {
      if (!spec.tendons) return m.q0[m.idx_q[id]];
      double length = 0.0;
      const FixedTendon& t = m.tendons[static_cast<size_t>(id)];
      for (size_t i = 0; i < t.joints.size(); ++i) length += t.coefs[i] * m.q0[m.idx_q[t.joints[i]]];
      return length;
    };
    c.q1_ref = spec.q1_ref ? *spec.q1_ref : at_q0(c.joint1);
    c.q2_ref = c.joint2 < 0 ? 0.0 : spec.q2_ref ? *spec.q2_ref : at_q0(c.joint2);
    if (!std::isfinite(c.q1_ref) || !std::isfinite(c.q2_ref))
      throw ModelError(spec.where, std::string(kind) + " coupling '" + c.name + "': reference values must be finite");
    m.joint_couplings.push_back(std::move(c));
  }
}

void add_tendons(const std::vector<TendonSpec>& specs, Model& m) {
  for (const TendonSpec& spec : specs) {
    FixedTendon t;
    t.name = spec.name.empty() ? "tendon" + std::to_string(m.tendons.size()) : spec.name;
    t.where = spec.where;
    const std::string what = "tendon '" + t.name + "'";
    if (spec.joints.empty()) throw ModelError(spec.where, what + " spans no joint; give it at least one");
    if (spec.coefs.size() != spec.joints.size())
      throw ModelError(spec.where, what + ": expected one coefficient per joint (" + std::to_string(spec.joints.size()) +
                                       "), got " + std::to_string(spec.coefs.size()));
    for (size_t i = 0; i < spec.joints.size(); ++i) {
      const int b = m.joint_id(spec.joints[i]);
      if (b < 0) throw ModelError(spec.where, what + ": unknown joint '" + spec.joints[i] + "'");
      const JointType type = m.joint_type[b];
      if (joint_nv(type) != 1)
        throw ModelError(spec.where, what + ": joint '" + spec.joints[i] + "' is " +
                                         std::string(joint_type_name(type)) +
                                         "; fixed tendons span hinge and slide joints only");
      for (int other : t.joints)
        if (other == b) throw ModelError(spec.where, what + " lists joint '" + spec.joints[i] + "' twice");
      if (!std::isfinite(spec.coefs[i]))
        throw ModelError(spec.where, what + ": the coefficient of joint '" + spec.joints[i] + "' must be finite");
      t.joints.push_back(b);
      t.coefs.push_back(spec.coefs[i]);
    }
    if ((spec.lower && std::isnan(*spec.lower)) || (spec.upper && std::isnan(*spec.upper)))
      throw ModelError(spec.where, what + ": range bounds must be numbers (inf for no bound)");
    t.lower = spec.lower.value_or(-std::numeric_limits<double>::infinity());
    t.upper = spec.upper.value_or(std::numeric_limits<double>::infinity());
    if (!(t.lower <= t.upper))
      throw ModelError(spec.where, what + ": range lower bound " + std::to_string(t.lower) + " is above upper bound " +
                                       std::to_string(t.upper));
    if (!(spec.stiffness >= 0.0 && std::isfinite(spec.stiffness)) || !(spec.damping >= 0.0 && std::isfinite(spec.damping)))
      throw ModelError(spec.where, what + ": stiffness and damping must be finite and >= 0");
    t.stiffness = spec.stiffness;
    t.damping = spec.damping;
    if (spec.spring_length) {
      if (!std::isfinite(*spec.spring_length)) throw ModelError(spec.where, what + ": spring length must be finite");
      t.spring_length = *spec.spring_length;
    } else {
      t.spring_length = 0.0;
      for (size_t i = 0; i < t.joints.size(); ++i) t.spring_length += t.coefs[i] * m.q_rest[m.idx_q[t.joints[i]]];
    }
    m.tendons.push_back(std::move(t));
  }
}

void add_connections(const std::vector<ConnectionSpec>& specs, Model& m) {
  if (specs.empty()) return;
  // world poses of the bodies at q0 (the anchor not given is where the other one is there)
  std::vector<Pose<double>> world(m.nbodies());
  for (int b = 0; b < m.nbodies(); ++b) {
    const Pose<double> X = m.joint_placement[b] * joint_transform<double>(m.joint_type[b], m.joint_axis[b],
                                                                          m.q0.segment(m.idx_q[b], m.joint_nq(b)));
    world[b] = m.parent[b] < 0 ? X : world[m.parent[b]] * X;
  }
  const auto world_pose = [&](int body) { return body < 0 ? Pose<double>() : world[body]; };
  int welds = 0;
  for (const ConnectionSpec& spec : specs) {
    BodyConnection c;
    const int count = spec.weld ? welds++ : static_cast<int>(m.body_connections.size()) - welds;
    c.name = !spec.name.empty() ? spec.name : (spec.weld ? "weld" : "connection") + std::to_string(count);
    c.where = spec.where;
    const std::string what = (spec.weld ? "weld '" : "connection '") + c.name + "'";
    const auto frame_of = [&](const std::string& name, const char* role) {
      for (const Frame& f : m.frames)
        if (f.name == name && (f.kind == FrameKind::Link || f.kind == FrameKind::Site)) return f;
      throw ModelError(spec.where, what + ": unknown " + role + " '" + name + "' (a link or site)" +
                                       (name.empty() ? ": give it one" : ""));
    };
    if ((spec.anchor1 && !spec.anchor1->allFinite()) || (spec.anchor2 && !spec.anchor2->allFinite()))
      throw ModelError(spec.where, what + ": anchors must be finite");
    if (!spec.anchor1 && !spec.anchor2)
      throw ModelError(spec.where, what + ": give anchor1 (in frame1) or anchor2 (in frame2), or both");
    if (spec.rotation && !spec.weld)
      throw ModelError(spec.where, what + ": a rotation is held by a weld only (set weld)");
    if (spec.rotation && !(spec.rotation->allFinite() &&
                           (spec.rotation->transpose() * *spec.rotation - Matrix3<double>::Identity()).norm() < 1e-6 &&
                           spec.rotation->determinant() > 0.0))
      throw ModelError(spec.where, what + ": the rotation is not a rotation matrix");
    const Frame f1 = frame_of(spec.frame1, "body1");
    const bool to_world = spec.frame2.empty() || spec.frame2 == "world";
    const Frame f2 = to_world ? Frame{"world", FrameKind::Link, -1, Pose<double>()} : frame_of(spec.frame2, "body2");
    if (f1.body < 0)
      throw ModelError(spec.where, what + ": body1 '" + spec.frame1 +
                                       "' is welded to the world: name the moving body as body1");
    if (f1.body == f2.body)
      throw ModelError(spec.where, what + ": '" + spec.frame1 + "' and '" + f2.name +
                                       "' move as one body; there is nothing to connect");
    c.body1 = f1.body;
    c.body2 = f2.body;
    const Pose<double> o1 = world_pose(c.body1), o2 = world_pose(c.body2);
    if (spec.anchor1) c.anchor1 = f1.placement.act_point(*spec.anchor1);
    if (spec.anchor2) c.anchor2 = f2.placement.act_point(*spec.anchor2);
    if (!spec.anchor2) c.anchor2 = o2.act_inv_point(o1.act_point(c.anchor1));
    if (!spec.anchor1) c.anchor1 = o1.act_inv_point(o2.act_point(c.anchor2));
    c.weld = spec.weld;
    if (spec.weld) {  // R(body1) rotation = R(body2): frame2 at `rotation` in frame1, or as in q0
      c.rotation = spec.rotation ? Matrix3<double>(f1.placement.R * *spec.rotation * f2.placement.R.transpose())
                                 : Matrix3<double>(o1.R.transpose() * o2.R);
      // Where a weld holds, every point of body1 meets its mate of body2 (x in body1's frame meets
      // rotation^T (x - anchor1) + anchor2 in body2's), so the point rows may use any pair: they use
      // the centre of mass of the body that turns most easily (the smaller largest principal moment;
      // the world never turns), which keeps them apart from its rotation rows: PGS did not converge
      // in 1000 iterations on a 1 kg box welded by a point 0.34 m from its centre.
      const auto largest_moment = [&](int b) {
        return b < 0 ? std::numeric_limits<double>::infinity()
                     : Eigen::SelfAdjointEigenSolver<Matrix3<double>>(m.body_inertia[b].inertia_com,
                                                                      Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
      };
      const bool at_body2 = largest_moment(c.body2) < largest_moment(c.body1);
      if (at_body2) {
        const Vector3<double> y = m.body_inertia[c.body2].com;
        c.anchor1 = c.rotation * (y - c.anchor2) + c.anchor1;
        c.anchor2 = y;
      } else {
        const Vector3<double> x = m.body_inertia[c.body1].com;
        c.anchor2 = c.rotation.transpose() * (x - c.anchor1) + c.anchor2;
        c.anchor1 = x;
      }
    }
    m.body_connections.push_back(std::move(c));
  }
}

void add_sensors(const std::vector<SensorSpec>& specs, Model& m) {
  int adr = 0;
  for (const SensorSpec& spec : specs) {
    Sensor s;
    s.kind = spec.kind;
    s.name = spec.name.empty() ? "sensor" + std::to_string(m.sensors.size()) : spec.name;
    if (m.sensor_id(s.name) >= 0) throw ModelError(spec.where, "sensor name '" + s.name + "' is used twice");
    const auto kind_word = [](FrameKind k) {
      return k == FrameKind::Site ? "site" : k == FrameKind::Geom ? "geom" : k == FrameKind::Link ? "link" : "joint";
    };
    if (s.kind == SensorKind::JointPos || s.kind == SensorKind::JointVel) {
      s.object = m.joint_id(spec.object);
      if (s.object < 0)
        throw ModelError(spec.where, "sensor '" + s.name + "' reads unknown joint '" + spec.object + "'" +
                                         (spec.object.empty() ? " (give it a joint)" : ""));
      if (m.joint_nv(s.object) != 1)
        throw ModelError(spec.where, "sensor '" + s.name + "' reads joint '" + spec.object + "' (" +
                                         std::string(joint_type_name(m.joint_type[s.object])) +
                                         "): jointpos and jointvel read hinge and slide joints only");
    } else {
      const bool site_only = s.kind == SensorKind::Gyro || s.kind == SensorKind::Accelerometer || s.kind == SensorKind::Touch;
      if (site_only && spec.object_kind != FrameKind::Site)
        throw ModelError(spec.where, "sensor '" + s.name + "': gyro, accelerometer and touch read a site");
      s.object = find_frame(m, spec.object_kind, spec.object);
      if (s.object < 0)
        throw ModelError(spec.where, "sensor '" + s.name + "' reads unknown " + kind_word(spec.object_kind) + " '" +
                                         spec.object + "'");
      if (!spec.reference.empty()) {
        if (site_only) throw ModelError(spec.where, "sensor '" + s.name + "': only frame sensors take a reference frame");
        s.reference = find_frame(m, spec.reference_kind, spec.reference);
        if (s.reference < 0)
          throw ModelError(spec.where, "sensor '" + s.name + "' is expressed in unknown " +
                                           kind_word(spec.reference_kind) + " '" + spec.reference + "'");
      }
    }
    s.adr = adr;
    adr += s.dim();
    s.cutoff = spec.cutoff;
    s.noise = spec.noise;
    s.zone = spec.zone;
    s.zone_size = spec.zone_size;
    s.where = spec.where;
    m.sensors.push_back(std::move(s));
  }
}

}  // namespace

Model ModelBuilder::build(const BuildOptions& options) const {
  const SourceLocation file_only{source_, 0, ""};
  if (links_.empty()) throw ModelError(file_only, "the model has no links");

  std::map<std::string, int> link_index;
  for (int i = 0; i < static_cast<int>(links_.size()); ++i) link_index[links_[i].name] = i;

  // The joint that moves each link (at most one: a second parent closes a loop).
  std::vector<int> parent_joint(links_.size(), -1);
  std::vector<std::vector<int>> child_joints(links_.size());
  for (int j = 0; j < static_cast<int>(joints_.size()); ++j) {
    const JointSpec& js = joints_[j];
    auto p = link_index.find(js.parent);
    if (p == link_index.end()) throw ModelError(js.where, "parent link '" + js.parent + "' does not exist");
    auto c = link_index.find(js.child);
    if (c == link_index.end()) throw ModelError(js.where, "child link '" + js.child + "' does not exist");
    if (p->second == c->second) throw ModelError(js.where, "a joint cannot connect link '" + js.parent + "' to itself");
    if (parent_joint[c->second] >= 0)
      throw ModelError(js.where, "link '" + js.child + "' already has parent joint '" +
                                     joints_[parent_joint[c->second]].name + "' (kinematic loops are not supported)");
    parent_joint[c->second] = j;
    child_joints[p->second].push_back(j);
  }

  std::vector<int> roots;
  for (int i = 0; i < static_cast<int>(links_.size()); ++i)
    if (parent_joint[i] < 0) roots.push_back(i);
  if (roots.empty())
    throw ModelError(joints_.front().where, "every link has a parent joint: the joints form a cycle");
  if (roots.size() > 1)
    throw ModelError(links_[roots[1]].where, "more than one root link ('" + links_[roots[0]].name + "' and '" +
                                                 links_[roots[1]].name + "'): the model must be one tree");

  Model m;
  m.name = name_;
  m.source = source_;
  m.gravity = gravity_;

  // Body of each link and the link frame's pose in that body (-1: welded to the world).
  std::vector<int> link_body(links_.size(), -2);
  std::vector<Pose<double>> link_in_body(links_.size());
  std::vector<double> q0_values, lower, upper, rest;
  std::vector<double> damping, armature, stiffness, frictionloss, effort, velocity;
  std::vector<int> body_subtree_massive;

  auto add_body = [&](const std::string& joint_name, JointType type, int parent_body, const Pose<double>& placement,
                      const Vector3<double>& axis, const std::string& body_name) {
    const int b = m.nbodies();
    m.parent.push_back(parent_body);
    m.joint_type.push_back(type);
    detail::append_joint_layout(m, type);
    m.joint_names.push_back(joint_name);
    m.body_names.push_back(body_name);
    m.joint_placement.push_back(placement);
    m.joint_axis.push_back(axis);
    m.body_inertia.push_back(Inertia<double>());
    return b;
  };
  auto push_dof_params = [&](const JointSpec* js, JointType type) {
    const int nq = joint_nq(type), nv = joint_nv(type);
    const double inf = std::numeric_limits<double>::infinity();
    for (int k = 0; k < nv; ++k) {
      damping.push_back(js ? js->damping : 0.0);
      armature.push_back(js ? js->armature : 0.0);
      stiffness.push_back(js ? js->stiffness : 0.0);
      frictionloss.push_back(js ? js->frictionloss : 0.0);
      effort.push_back(js ? js->effort_limit : inf);
      velocity.push_back(js ? js->velocity_limit : inf);
    }
    Eigen::VectorXd qn(nq);
    joint_neutral<double>(type, qn);
    if (type == JointType::Free && js && js->free_pose) {  // position, then the quaternion x, y, z, w
      const Eigen::Quaterniond rotation(js->free_pose->R);
      qn << js->free_pose->p, rotation.x(), rotation.y(), rotation.z(), rotation.w();
    }
    const bool scalar = nq == 1;
    for (int k = 0; k < nq; ++k) {
      const bool limited = scalar && js && type != JointType::Continuous;
      lower.push_back(limited ? js->lower : -inf);
      upper.push_back(limited ? js->upper : inf);
      rest.push_back(scalar && js ? js->rest : qn[k]);
      q0_values.push_back(scalar && js ? js->reference : qn[k]);
    }
  };

  // Depth-first from the root: parents get lower body indices than their children.
  const int root = roots[0];
  if (options.floating_base) {
    const int b = add_body(options.floating_base_name, JointType::Free, -1, Pose<double>(), Vector3<double>::Zero(),
                           links_[root].name);
    push_dof_params(nullptr, JointType::Free);
    link_body[root] = b;
  } else {
    link_body[root] = -1;
  }
  m.frames.push_back({links_[root].name, FrameKind::Link, link_body[root], Pose<double>()});
  if (links_[root].inertia && link_body[root] >= 0) m.body_inertia[link_body[root]] = *links_[root].inertia;

  std::vector<int> stack(child_joints[root].rbegin(), child_joints[root].rend());
  while (!stack.empty()) {
    const int j = stack.back();
    stack.pop_back();
    const JointSpec& js = joints_[j];
    const int pl = link_index.at(js.parent), cl = link_index.at(js.child);
    const Pose<double> joint_in_parent_body = link_in_body[pl] * js.origin;
    if (js.type == JointType::Fixed) {
      link_body[cl] = link_body[pl];
      link_in_body[cl] = joint_in_parent_body * js.child_offset;
    } else {
      const int b = add_body(js.name, js.type, link_body[pl], joint_in_parent_body, js.axis, js.child);
      push_dof_params(&js, js.type);
      link_body[cl] = b;
      link_in_body[cl] = js.child_offset;
      m.frames.push_back({js.name, FrameKind::Joint, b, Pose<double>()});
    }
    m.frames.push_back({js.child, FrameKind::Link, link_body[cl], link_in_body[cl]});
    if (links_[cl].inertia && link_body[cl] >= 0) {
      const int b = link_body[cl];
      m.body_inertia[b] = add_inertia(m.body_inertia[b], links_[cl].inertia->transformed(link_in_body[cl]));
    }
    for (auto it = child_joints[cl].rbegin(); it != child_joints[cl].rend(); ++it) stack.push_back(*it);
  }

  // A link not reached from the root sits on a cycle detached from the tree.
  for (int i = 0; i < static_cast<int>(links_.size()); ++i)
    if (link_body[i] == -2)
      throw ModelError(joints_[parent_joint[i]].where,
                       "link '" + links_[i].name + "' is not connected to the root: the joints form a cycle");

  // Collision geometry, re-expressed in the body frames of the merged links.
  for (int i = 0; i < static_cast<int>(links_.size()); ++i)
    for (const GeomSpec& gs : links_[i].collisions) {
      if (m.geom_id(gs.name) >= 0) throw ModelError(gs.where, "duplicate geom name '" + gs.name + "'");
      Geom g;
      g.name = gs.name;
      g.type = gs.type;
      g.body = link_body[i];
      g.placement = link_in_body[i] * gs.placement;
      g.size = gs.size;
      g.friction = gs.friction;
      g.restitution = gs.restitution;
      g.contype = gs.contype;
      g.conaffinity = gs.conaffinity;
      g.hull = gs.hull;
      g.where = gs.where;
      m.geoms.push_back(std::move(g));
    }
  for (const Exclusion& e : exclusions_) {
    int body[2];
    const std::string* names[2] = {&e.a, &e.b};
    for (int k = 0; k < 2; ++k) {
      auto it = link_index.find(*names[k]);
      if (it == link_index.end()) throw ModelError(e.where, "collision exclusion names unknown link '" + *names[k] + "'");
      body[k] = link_body[it->second];
    }
    m.excluded_pairs.emplace_back(std::min(body[0], body[1]), std::max(body[0], body[1]));
  }
  m.collide_parent_child = collide_parent_child_;

  m.children.assign(m.nbodies(), {});
  for (int b = 0; b < m.nbodies(); ++b)
    if (m.parent[b] >= 0) m.children[m.parent[b]].push_back(b);

  auto to_vec = [](const std::vector<double>& x) { return Eigen::Map<const Eigen::VectorXd>(x.data(), x.size()).eval(); };
  m.damping = to_vec(damping);
  m.armature = to_vec(armature);
  m.stiffness = to_vec(stiffness);
  m.frictionloss = to_vec(frictionloss);
  m.effort_limit = to_vec(effort);
  m.velocity_limit = to_vec(velocity);
  m.q_rest = to_vec(rest);
  m.lower_limit = to_vec(lower);
  m.upper_limit = to_vec(upper);
  m.q0 = to_vec(q0_values);

  // Every moving joint must carry inertia along its motion, or its acceleration is undefined.
  // Checked after the welded links are merged, at q0, on the composite inertia Ic of the bodies the
  // joint moves (its subtree, locked): S^T Ic S + armature must be positive definite. So massless
  // links and point masses are fine wherever the bodies they move with give the joint inertia. (ABA
  // divides by the composite S^T I^A S, which can still be singular where this is not, e.g. a
  // hinge and a ball joint about the same point: those models loaded before and still do.)
  const int nb = m.nbodies();
  std::vector<double> subtree_mass(nb, 0.0);
  std::vector<Matrix6<double>> composite(nb);  // composite (locked) inertia of each subtree
  std::vector<Eigen::VectorXd> pivots(nb);
  for (int b = 0; b < nb; ++b) composite[b] = m.body_inertia[b].matrix();
  for (int b = nb - 1; b >= 0; --b) {
    subtree_mass[b] += m.body_inertia[b].mass;
    const Matrix6X<double> S = joint_subspace<double>(m.joint_type[b], m.joint_axis[b]);
    Eigen::MatrixXd D = S.transpose() * composite[b] * S;
    D.diagonal() += m.armature.segment(m.idx_v[b], m.joint_nv(b));
    pivots[b] = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(D, Eigen::EigenvaluesOnly).eigenvalues();
    const int p = m.parent[b];
    if (p < 0) continue;
    subtree_mass[p] += subtree_mass[b];
    const Matrix6<double>& Ia = composite[b];
    const Pose<double> X = m.joint_placement[b] * joint_transform<double>(m.joint_type[b], m.joint_axis[b],
                                                                          m.q0.segment(m.idx_q[b], m.joint_nq(b)));
    composite[p] += transform_inertia_to_parent(X, Ia);
  }
  detail::GroupedWarnings singular;  // inertia='accept' only
  for (int b = 0; b < nb; ++b) {
    const Eigen::VectorXd& ev = pivots[b];
    if (ev.minCoeff() > 1e-12 * ev.maxCoeff() && ev.minCoeff() > 0) continue;
    SourceLocation where;
    for (const auto& js : joints_)
      if (js.name == m.joint_names[b]) where = js.where;
    if (where.element.empty()) where = links_[root].where;
    if (subtree_mass[b] == 0 && ev.cwiseAbs().maxCoeff() == 0)
      throw ModelError(where, "joint '" + m.joint_names[b] +
                                  "' moves only massless links: give a link in its subtree an <inertial> (or the "
                                  "joint armature)");
    std::ostringstream s;
    s << "joint '" << m.joint_names[b] << "' (" << joint_type_name(m.joint_type[b])
      << ") moves no inertia along some direction of its motion: the inertia of the links it moves, "
         "projected on its motion (with armature), has eigenvalues "
      << ev.transpose() << " at the reference configuration (a point mass on the axis of a hinge, or a "
      << "rod turning about itself?)";
    if (inertia_policy_ == InertiaPolicy::Accept) {
      singular.add("singular", where, s.str() + ",",
                   "is kept as written (inertia='accept'), but its acceleration is undefined there");
      continue;
    }
    throw ModelError(where, s.str() + ": give the links it moves rotational inertia, or the joint armature");
  }
  for (std::string& w : inertia_warnings_.messages()) {
    if (warnings_) warnings_->push_back(std::move(w));
    else std::cerr << "gradyn: warning: " << w << '\n';
  }
  singular.emit(warnings_);
  add_actuators(actuators_, m);

  // Sites: frames after the links' and joints' frames, on the bodies their links were merged into.
  for (const SiteSpec& site : sites_) {
    auto it = link_index.find(site.link);
    if (it == link_index.end())
      throw ModelError(site.where, std::string(site.kind == FrameKind::Camera ? "camera '" : "site '") + site.name +
                                       "' is on unknown link '" + site.link + "'");
    if (site.kind == FrameKind::Camera)
      m.cameras.push_back({site.name, static_cast<int>(m.frames.size()), cameras_[m.cameras.size()].first,
                           cameras_[m.cameras.size()].second, site.where});
    m.frames.push_back({site.name, site.kind, link_body[it->second], link_in_body[it->second] * site.placement});
  }
  add_sensors(sensors_, m);
  add_tendons(tendons_, m);  // before the couplings, which may couple tendons
  add_joint_couplings(couplings_, m);
  add_connections(connections_, m);
  return m;
}

}  // namespace gradyn
