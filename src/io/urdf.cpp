// URDF loader: <robot> with <link>s and <joint>s, read with tinyxml2 into a ModelBuilder.
// Every error carries the file, the line of the offending element and the link or joint it
// belongs to; the builder's own checks (inertia, tree shape) reuse the locations set here.
#include <Eigen/Eigenvalues>
#include <tinyxml2.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "gradyn/io/load.hpp"
#include "gradyn/model/detail/grouped_warnings.hpp"
#include "mesh_file.hpp"
#include "xml_error.hpp"

namespace gradyn {
namespace {

// The folder a URDF's relative mesh paths may reach without a warning: the URDF's folder's parent,
// where ROS packages keep meshes/ beside urdf/ (so '../meshes/x.stl' is the usual layout, not an escape).
std::filesystem::path model_folder(const std::filesystem::path& urdf_folder) {
  const std::filesystem::path absolute = std::filesystem::absolute(urdf_folder.empty() ? "." : urdf_folder);
  return absolute.lexically_normal().parent_path();
}


namespace fs = std::filesystem;
using tinyxml2::XMLElement;

struct UrdfContext {
  std::string file;     // what error messages call the input
  fs::path base_dir;    // relative mesh paths are resolved against this
  const LoadOptions& options;
  // Warnings of this load, issued once per kind at its end (warn()).
  mutable detail::GroupedWarnings notes = {};
  // Collision mesh hulls already built, by resolved path and scale (robots reuse a mesh per leg).
  mutable std::map<std::pair<std::string, std::array<double, 3>>, std::shared_ptr<const ConvexHull>> hulls = {};
};

SourceLocation locate(const UrdfContext& ctx, const XMLElement* e, const std::string& owner) {
  return SourceLocation{ctx.file, e ? e->GetLineNum() : 0, owner};
}

std::string describe(const char* tag, const char* name) {
  return std::string("<") + tag + " name='" + (name ? name : "") + "'>";
}

// One occurrence of a kind of warning (see detail::GroupedWarnings): "<where>: <what> <why>".
void warn(const UrdfContext& ctx, const std::string& kind, const SourceLocation& where, const std::string& what,
          const std::string& why) {
  ctx.notes.add(kind, where, what, why);
}

// Numbers the way URDF writes them ("1.", ".5", "+2", "1e-3"), independent of the C locale.
bool parse_number(std::string_view token, double& out) {
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  if (token.empty()) return false;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  return ec == std::errc() && end == token.data() + token.size() && !std::isnan(out);
}

// Reads exactly `count` whitespace-separated numbers from attribute `attr` of `e`. A missing
// attribute leaves `out` untouched (callers preset the URDF default).
void read_numbers(const UrdfContext& ctx, const XMLElement* e, const char* attr, const std::string& owner,
                  double* out, int count) {
  const char* text = e->Attribute(attr);
  if (!text) return;
  std::vector<double> values;
  std::string_view rest(text);
  bool ok = true;
  while (ok) {
    const auto start = rest.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const auto stop = std::min(rest.find_first_of(" \t\r\n"), rest.size());
    double x = 0;
    ok = parse_number(rest.substr(0, stop), x);
    values.push_back(x);
    rest.remove_prefix(stop);
  }
  if (!ok || static_cast<int>(values.size()) != count) {
    std::ostringstream s;
    s << "attribute " << attr << "=\"" << text << "\" of <" << e->Name() << "> must be " << count
      << (count == 1 ? " number" : " numbers");
    throw ModelError(locate(ctx, e, owner), s.str());
  }
  for (int i = 0; i < count; ++i) out[i] = values[i];
}

double read_number(const UrdfContext& ctx, const XMLElement* e, const char* attr, const std::string& owner,
                   double fallback) {
  double x = fallback;
  read_numbers(ctx, e, attr, owner, &x, 1);
  return x;
}

double require_number(const UrdfContext& ctx, const XMLElement* e, const char* attr, const std::string& owner) {
  if (!e->Attribute(attr))
    throw ModelError(locate(ctx, e, owner), std::string("<") + e->Name() + "> needs attribute " + attr);
  return read_number(ctx, e, attr, owner, 0.0);
}

Vector3<double> read_vector3(const UrdfContext& ctx, const XMLElement* e, const char* attr, const std::string& owner,
                             const Vector3<double>& fallback) {
  Vector3<double> v = fallback;
  if (e) read_numbers(ctx, e, attr, owner, v.data(), 3);
  return v;
}

// <origin xyz rpy>: pose of a child frame in its parent frame; identity when absent.
Pose<double> read_origin(const UrdfContext& ctx, const XMLElement* parent, const std::string& owner) {
  const XMLElement* origin = parent->FirstChildElement("origin");
  if (!origin) return Pose<double>();
  const Vector3<double> xyz = read_vector3(ctx, origin, "xyz", owner, Vector3<double>::Zero());
  const Vector3<double> rpy = read_vector3(ctx, origin, "rpy", owner, Vector3<double>::Zero());
  return Pose<double>(rpy_to_matrix(rpy), xyz);
}

std::string require_attribute(const UrdfContext& ctx, const XMLElement* e, const char* attr,
                              const std::string& owner) {
  const char* value = e->Attribute(attr);
  if (!value || !*value)
    throw ModelError(locate(ctx, e, owner), std::string("<") + e->Name() + "> needs attribute " + attr);
  return value;
}

// package://pkg/rest: an ancestor of the URDF's directory that is, or contains, a folder named
// pkg, then the ROS_PACKAGE_PATH entries. Returns the first candidate that exists, else empty.
fs::path resolve_package(const UrdfContext& ctx, const std::string& package, const std::string& rest) {
  std::error_code ec;
  std::vector<fs::path> roots;
  for (fs::path dir = fs::absolute(ctx.base_dir, ec);; dir = dir.parent_path()) {
    roots.push_back(dir);
    if (dir == dir.parent_path()) break;
  }
  if (const char* env = std::getenv("ROS_PACKAGE_PATH")) {
    std::string_view paths(env);
    while (!paths.empty()) {
      const auto colon = std::min(paths.find(':'), paths.size());
      if (colon > 0) roots.emplace_back(std::string(paths.substr(0, colon)));
      paths.remove_prefix(std::min(colon + 1, paths.size()));
    }
  }
  for (const fs::path& root : roots) {
    for (const fs::path& candidate : {root / package / rest, root.filename() == package ? root / rest : fs::path()}) {
      if (!candidate.empty() && fs::is_regular_file(candidate, ec)) return candidate;
    }
  }
  return {};
}

// A <mesh filename>: package://, file:// or a path relative to the URDF's directory. Empty when
// the file does not exist.
fs::path resolve_mesh(const UrdfContext& ctx, const std::string& filename) {
  fs::path resolved;
  std::error_code ec;
  constexpr std::string_view package_scheme = "package://", file_scheme = "file://";
  if (filename.starts_with(package_scheme)) {
    const std::string spec = filename.substr(package_scheme.size());
    const auto slash = spec.find('/');
    if (slash != std::string::npos && slash > 0)
      resolved = resolve_package(ctx, spec.substr(0, slash), spec.substr(slash + 1));
  } else {
    fs::path p = filename.starts_with(file_scheme) ? fs::path(filename.substr(file_scheme.size())) : fs::path(filename);
    if (p.is_relative()) p = ctx.base_dir / p;
    if (fs::is_regular_file(p, ec)) resolved = p;
  }
  return resolved;
}

// A missing mesh file must not stop a model whose dynamics need only the inertials (URDFs are
// often shipped without their meshes), so it only warns; a collision mesh that is there is read
// (read_collisions), and a malformed one is an error.
void check_meshes(const UrdfContext& ctx, const XMLElement* link, const std::string& owner) {
  for (const char* kind : {"visual", "collision"}) {
    for (const XMLElement* shape = link->FirstChildElement(kind); shape; shape = shape->NextSiblingElement(kind)) {
      const XMLElement* geometry = shape->FirstChildElement("geometry");
      const XMLElement* mesh = geometry ? geometry->FirstChildElement("mesh") : nullptr;
      if (!mesh) continue;
      const std::string filename = require_attribute(ctx, mesh, "filename", owner);
      const fs::path resolved = resolve_mesh(ctx, filename);
      const std::string what = std::string("<") + kind + "> mesh file '" + filename + "'";
      if (resolved.empty())
        warn(ctx, std::string("missing ") + kind + " mesh", locate(ctx, mesh, owner), what,
             std::string("not found; the mesh is ignored") +
                 (std::string_view(kind) == "collision" ? " (the link has no collision shape for it)" : ""));
      else if (!filename.starts_with("package://") && io_detail::outside(resolved, model_folder(ctx.base_dir)))
        warn(ctx, "mesh outside", locate(ctx, mesh, owner), what,
             "is outside the model's folder " + model_folder(ctx.base_dir).string() +
                 " (it is read all the same: check where it points)");
    }
  }
}

// <collision> elements -> geoms in the link frame. URDF sizes are full extents (box size,
// cylinder length); gradyn's are halves. <capsule radius length> (a common extension) is read
// too. <mesh filename scale>: the convex hull of the mesh's vertices (scaled), a ConvexHull geom
// (PyBullet and MuJoCo collide meshes as their hulls too); a missing file is skipped (check_meshes
// warned), an unreadable one is a ModelError. Friction and restitution come from PyBullet's link-level extension
// <contact><lateral_friction value/><restitution value/></contact>, else the defaults
// (friction 1, restitution 0; geometry.hpp).
std::vector<GeomSpec> read_collisions(const UrdfContext& ctx, const XMLElement* link, const std::string& link_name,
                                      const std::string& owner) {
  double friction = kDefaultFriction, restitution = kDefaultRestitution;
  if (const XMLElement* contact = link->FirstChildElement("contact")) {
    if (const XMLElement* f = contact->FirstChildElement("lateral_friction"))
      friction = require_number(ctx, f, "value", owner);
    if (const XMLElement* r = contact->FirstChildElement("restitution"))
      restitution = require_number(ctx, r, "value", owner);
  }
  std::vector<GeomSpec> geoms;
  int index = 0;
  for (const XMLElement* c = link->FirstChildElement("collision"); c; c = c->NextSiblingElement("collision"), ++index) {
    GeomSpec g;
    const char* name = c->Attribute("name");
    g.name = name && *name ? std::string(name) : link_name + "/collision" + std::to_string(index);
    g.where = locate(ctx, c, owner + " <collision name='" + g.name + "'>");
    g.placement = read_origin(ctx, c, owner);
    g.friction = friction;
    g.restitution = restitution;
    const XMLElement* geometry = c->FirstChildElement("geometry");
    if (!geometry) throw ModelError(g.where, "<collision> needs a <geometry>");
    const XMLElement* shape = geometry->FirstChildElement();
    if (!shape) throw ModelError(g.where, "<geometry> needs a shape (sphere, box, cylinder, capsule or mesh)");
    const std::string kind = shape->Name();
    if (kind == "sphere") {
      g.type = GeomType::Sphere;
      g.size[0] = require_number(ctx, shape, "radius", owner);
    } else if (kind == "box") {
      g.type = GeomType::Box;
      if (!shape->Attribute("size")) throw ModelError(locate(ctx, shape, owner), "<box> needs attribute size");
      g.size = read_vector3(ctx, shape, "size", owner, Vector3<double>::Zero()) / 2;
    } else if (kind == "cylinder" || kind == "capsule") {
      g.type = kind == "cylinder" ? GeomType::Cylinder : GeomType::Capsule;
      g.size[0] = require_number(ctx, shape, "radius", owner);
      g.size[1] = require_number(ctx, shape, "length", owner) / 2;
    } else if (kind == "mesh") {
      const fs::path path = resolve_mesh(ctx, require_attribute(ctx, shape, "filename", owner));
      if (path.empty()) continue;  // missing: check_meshes warned
      const Vector3<double> scale = read_vector3(ctx, shape, "scale", owner, Vector3<double>::Ones());
      const auto key = std::make_pair(fs::absolute(path).lexically_normal().string(),
                                      std::array<double, 3>{scale.x(), scale.y(), scale.z()});
      auto it = ctx.hulls.find(key);
      if (it == ctx.hulls.end()) {
        const SourceLocation at = locate(ctx, shape, owner + " <collision name='" + g.name + "'>");
        try {
          it = ctx.hulls.emplace(key, make_convex_hull(io_detail::read_mesh_vertices(path.string(), scale))).first;
        } catch (const std::runtime_error& err) {  // unreadable file
          throw ModelError(at, err.what());
        } catch (const std::invalid_argument& err) {  // no hull (ArgumentError)
          throw ModelError(at, "mesh file '" + path.string() + "': " + err.what());
        }
      }
      g.type = GeomType::ConvexHull;
      g.hull = it->second;
      g.size = Vector3<double>::Ones();
    } else {
      throw ModelError(locate(ctx, shape, owner), "unknown collision geometry <" + kind +
                                                      "> (expected sphere, box, cylinder, capsule or mesh)");
    }
    check_geom(g, g.where);
    geoms.push_back(std::move(g));
  }
  return geoms;
}

// <inertial>: mass, and the inertia tensor given in the inertial frame <origin xyz rpy>;
// returned in the link frame (centre of mass xyz, rotational inertia R I R^T about it), with the
// <inertia> line in `where` for the builder's checks (ModelBuilder::add_link: a tensor no rigid
// body has is refused, repaired or accepted as LoadOptions::inertia says). Zero mass and zero or
// semidefinite tensors are fine (frames, point masses: Pinocchio and MuJoCo load them); the
// builder checks that every moving joint carries inertia once the welded links are merged. A
// zero-mass link welded to the world (PyBullet's convention for a static base) carries no dynamics
// and is kept massless.
std::optional<Inertia<double>> read_inertial(const UrdfContext& ctx, const XMLElement* link, const std::string& owner,
                                             bool welded_to_world, SourceLocation& where) {
  const XMLElement* inertial = link->FirstChildElement("inertial");
  if (!inertial) return std::nullopt;
  const XMLElement* mass_element = inertial->FirstChildElement("mass");
  if (!mass_element) throw ModelError(locate(ctx, inertial, owner), "<inertial> needs a <mass value=..>");
  const double mass = require_number(ctx, mass_element, "value", owner);
  if (mass == 0 && welded_to_world) return std::nullopt;
  if (!(mass >= 0) || !std::isfinite(mass)) {
    std::ostringstream s;
    s << "<mass value=\"" << mass_element->Attribute("value") << "\">: mass must be zero or positive and finite";
    throw ModelError(locate(ctx, mass_element, owner), s.str());
  }
  const XMLElement* tensor = inertial->FirstChildElement("inertia");
  if (!tensor) throw ModelError(locate(ctx, inertial, owner), "<inertial> needs an <inertia ixx=.. ..>");
  const double ixx = require_number(ctx, tensor, "ixx", owner), ixy = require_number(ctx, tensor, "ixy", owner),
               ixz = require_number(ctx, tensor, "ixz", owner), iyy = require_number(ctx, tensor, "iyy", owner),
               iyz = require_number(ctx, tensor, "iyz", owner), izz = require_number(ctx, tensor, "izz", owner);
  Matrix3<double> I;
  I << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
  const Pose<double> frame = read_origin(ctx, inertial, owner);
  where = locate(ctx, tensor, owner);
  return Inertia<double>(mass, frame.p, frame.R * I * frame.R.transpose());
}

JointType read_joint_type(const UrdfContext& ctx, const XMLElement* joint, const std::string& owner) {
  const std::string type = require_attribute(ctx, joint, "type", owner);
  std::optional<JointType> found;
  std::string expected;  // the URDF names of the registered joint kinds (joint.hpp)
  for_each_joint_type([&](JointType t) {
    const std::string_view urdf = joint_urdf_type(t);
    if (urdf.empty()) return;
    if (urdf == type) found = t;
    expected += (expected.empty() ? "" : ", ") + std::string(urdf);
  });
  if (found) return *found;
  throw ModelError(locate(ctx, joint, owner), "unknown joint type '" + type + "' (expected one of " + expected + ")");
}

JointSpec read_joint(const UrdfContext& ctx, const XMLElement* joint) {
  JointSpec spec;
  spec.name = require_attribute(ctx, joint, "name", describe("joint", nullptr));
  const std::string owner = describe("joint", spec.name.c_str());
  spec.where = locate(ctx, joint, owner);
  spec.type = read_joint_type(ctx, joint, owner);

  for (const auto& [tag, target] : {std::pair{"parent", &spec.parent}, std::pair{"child", &spec.child}}) {
    const XMLElement* e = joint->FirstChildElement(tag);
    if (!e) throw ModelError(spec.where, std::string("joint needs a <") + tag + " link=..>");
    *target = require_attribute(ctx, e, "link", owner);
  }
  spec.origin = read_origin(ctx, joint, owner);
  spec.axis = read_vector3(ctx, joint->FirstChildElement("axis"), "xyz", owner, Vector3<double>(1, 0, 0));

  if (spec.type == JointType::Planar) {
    // A planar joint moves in the x-y plane of its frame; URDF gives the plane normal as the
    // axis. Turn the joint frame so its z is that normal, and turn the child back so the
    // child link frame is where the file puts it.
    const double n = spec.axis.norm();
    if (!std::isfinite(n) || n < 1e-12)
      throw ModelError(spec.where, "planar joint needs a non-zero <axis> (the plane normal)");
    const Vector3<double> normal = spec.axis / n;
    const Vector3<double> z = Vector3<double>::UnitZ();
    Matrix3<double> align;  // maps z onto the normal
    const Vector3<double> c = z.cross(normal);
    if (c.norm() < 1e-12) {  // normal along +z or -z
      align = normal.z() > 0 ? Matrix3<double>::Identity()
                             : axis_angle_to_matrix<double>(Vector3<double>::UnitX(), std::numbers::pi);
    } else {
      align = axis_angle_to_matrix<double>(c.normalized(), std::atan2(c.norm(), z.dot(normal)));
    }
    spec.origin = spec.origin * Pose<double>(align, Vector3<double>::Zero());
    spec.child_offset = Pose<double>(align.transpose(), Vector3<double>::Zero());
    spec.axis = z;
  }

  if (const XMLElement* limit = joint->FirstChildElement("limit")) {
    // URDF defaults lower/upper to 0; they only bind revolute and prismatic joints.
    spec.lower = read_number(ctx, limit, "lower", owner, 0.0);
    spec.upper = read_number(ctx, limit, "upper", owner, 0.0);
    spec.effort_limit = read_number(ctx, limit, "effort", owner, spec.effort_limit);
    spec.velocity_limit = read_number(ctx, limit, "velocity", owner, spec.velocity_limit);
    if (spec.type != JointType::Revolute && spec.type != JointType::Prismatic) {
      spec.lower = -std::numeric_limits<double>::infinity();
      spec.upper = std::numeric_limits<double>::infinity();
    }
  }
  if (const XMLElement* dynamics = joint->FirstChildElement("dynamics")) {
    spec.damping = read_number(ctx, dynamics, "damping", owner, 0.0);
    // Coulomb (dry) friction: the joint's frictionloss (contact/joint_constraints.hpp)
    spec.frictionloss = read_number(ctx, dynamics, "friction", owner, 0.0);
    // gradyn extension (not standard URDF): a linear spring stiffness*(rest - q).
    spec.stiffness = read_number(ctx, dynamics, "stiffness", owner, 0.0);
    spec.rest = read_number(ctx, dynamics, "rest", owner, 0.0);
  }
  return spec;
}

// What gradyn does not simulate warns, once per kind (file, line, element, how many, where):
//  * <transmission> and ros2_control's <ros2_control> (actuator maps: gradyn's motors come from <limit effort>),
//    <gazebo> (Gazebo's friction, contact stiffness, plugins, ...), PyBullet <contact> entries other
//    than lateral_friction and restitution, <joint_properties> (an old form of <dynamics>) unless
//    it is all zero, and any element URDF does not define;
//  * silently ignored, as they change no dynamics: <material> and <visual> (drawing only),
//    <joint><calibration> (encoder homing references) and <joint><safety_controller> (soft limits
//    that a ROS controller enforces in software, not the joint).
void note_unsupported(const UrdfContext& ctx, const XMLElement* robot) {
  auto unknown = [&](const XMLElement* e, const std::string& owner, const std::string& parent) {
    warn(ctx, "unknown element", locate(ctx, e, owner), "<" + parent + "><" + e->Name() + ">",
         "is not an element of URDF that gradyn reads, and is ignored");
  };
  for (const XMLElement* e = robot->FirstChildElement(); e; e = e->NextSiblingElement()) {
    const std::string tag = e->Name();
    const char* name = e->Attribute("name");
    const std::string owner = describe(tag.c_str(), name);
    if (tag == "link") {
      for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
        const std::string child = c->Name();
        if (child == "contact") {
          for (const XMLElement* k = c->FirstChildElement(); k; k = k->NextSiblingElement())
            if (std::string_view(k->Name()) != "lateral_friction" && std::string_view(k->Name()) != "restitution")
              warn(ctx, "pybullet contact", locate(ctx, k, owner), std::string("<contact><") + k->Name() + ">",
                   "(PyBullet's contact setting) is not simulated by gradyn, which reads lateral_friction and "
                   "restitution only");
        } else if (child != "inertial" && child != "visual" && child != "collision") {
          unknown(c, owner, "link");
        }
      }
    } else if (tag == "joint") {
      for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
        const std::string child = c->Name();
        if (child == "mimic" || child == "dynamics") {
          // read by read_joint and the couplings (parse_document)
        } else if (child == "joint_properties") {
          // an old form of <dynamics> (early URDF, some PyBullet files): not read; silent when it is all zero
          double damping = 0, friction = 0;
          read_numbers(ctx, c, "damping", owner, &damping, 1);
          read_numbers(ctx, c, "friction", owner, &friction, 1);
          if (damping != 0 || friction != 0)
            warn(ctx, "joint_properties", locate(ctx, c, owner), "<joint_properties>",
                 "(an old form of <dynamics>) is not read by gradyn: give <dynamics damping=..> instead");
        } else if (child != "origin" && child != "parent" && child != "child" && child != "axis" && child != "limit" &&
                   child != "calibration" && child != "safety_controller") {
          unknown(c, owner, "joint");
        }
      }
    } else if (tag == "transmission" || tag == "ros2_control") {
      warn(ctx, "transmission", locate(ctx, e, owner), "<" + tag + ">",
           "(the actuators' description for ROS control) is not read by gradyn: each joint with a <limit effort> "
           "gets a motor of gear 1 instead");
    } else if (tag == "gazebo") {
      const char* ref = e->Attribute("reference");
      warn(ctx, "gazebo", locate(ctx, e, ref ? describe("link", ref) : std::string("<gazebo>")), "<gazebo>",
           "(Gazebo's own settings: friction, contact stiffness, damping, plugins, ...) is not read by gradyn");
    } else if (tag != "material") {
      unknown(e, owner, "robot");
    }
  }
}

ModelBuilder parse_document(const std::string& xml, const std::string& file, const fs::path& base_dir,
                            const LoadOptions& options) {
  const UrdfContext ctx{file, base_dir, options};
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS)
    throw ModelError(SourceLocation{file, doc.ErrorLineNum(), ""}, io_detail::xml_error_message(doc));
  const XMLElement* robot = doc.RootElement();
  if (!robot || std::string_view(robot->Name()) != "robot")
    throw ModelError(locate(ctx, robot, robot ? std::string("<") + robot->Name() + ">" : ""),
                     "a URDF file must have a <robot> root element");

  ModelBuilder builder;
  builder.set_inertia_policy(options.inertia, options.warnings);
  builder.set_name(robot->Attribute("name") ? robot->Attribute("name") : "");
  builder.set_source(file);

  // Joints first: a link that is no joint's child is a root, welded to the world unless the
  // base floats (see read_inertial).
  std::vector<JointSpec> joints;
  std::set<std::string> children;
  for (const XMLElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    joints.push_back(read_joint(ctx, j));
    children.insert(joints.back().child);
  }
  for (const XMLElement* l = robot->FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
    LinkSpec link;
    link.name = require_attribute(ctx, l, "name", describe("link", nullptr));
    const std::string owner = describe("link", link.name.c_str());
    link.where = locate(ctx, l, owner);
    const bool welded_to_world = !options.floating_base && !children.count(link.name);
    link.inertia = read_inertial(ctx, l, owner, welded_to_world, link.inertia_where);
    check_meshes(ctx, l, owner);
    link.collisions = read_collisions(ctx, l, link.name, owner);
    builder.add_link(std::move(link));
  }
  // A joint with an effort limit has a motor behind it: one actuator per such joint, its
  // control the joint torque (or force), clamped to the limit.
  std::vector<ActuatorSpec> motors;
  if (options.urdf_effort_motors)
    for (const JointSpec& joint : joints) {
      if (joint_nv(joint.type) != 1 || !(joint.effort_limit > 0) || !std::isfinite(joint.effort_limit)) continue;
      ActuatorSpec motor;
      motor.name = joint.name;
      motor.kind = ActuatorKind::Motor;
      motor.joint = joint.name;
      motor.force_range = std::pair{-joint.effort_limit, joint.effort_limit};
      motor.where = joint.where;
      motors.push_back(std::move(motor));
    }
  // <mimic joint multiplier offset>: q = multiplier q_leader + offset, a joint coupling (URDF's rule
  // has no reference configuration: both references 0). A fixed joint that mimics does not move,
  // and a mimic of a joint the file does not have (or of a multi-DoF one) couples nothing: both
  // warn and are skipped. A joint that mimics a fixed joint is held at the offset.
  std::map<std::string, JointType> joint_types;
  for (const JointSpec& joint : joints) joint_types[joint.name] = joint.type;
  const auto one_dof = [&](const std::string& name) {
    const auto it = joint_types.find(name);
    return it != joint_types.end() && joint_nv(it->second) == 1;
  };
  for (const XMLElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    const XMLElement* mimic = j->FirstChildElement("mimic");
    if (!mimic) continue;
    const std::string name = j->Attribute("name") ? j->Attribute("name") : "";
    const std::string owner = describe("joint", name.c_str());
    const std::string leader = require_attribute(ctx, mimic, "joint", owner);
    if (!one_dof(name)) {
      warn(ctx, "mimic on a joint that does not move", locate(ctx, mimic, owner),
           "<mimic joint='" + leader + "'>",
           "is on a joint that is not revolute, continuous or prismatic: it has nothing to couple, and is ignored");
      continue;
    }
    const auto leader_type = joint_types.find(leader);
    const bool fixed_leader = leader_type != joint_types.end() && leader_type->second == JointType::Fixed;
    if (!fixed_leader && !one_dof(leader)) {  // files in the wild name joints that are not there
      warn(ctx, "mimic of an unknown joint", locate(ctx, mimic, owner), "<mimic joint='" + leader + "'>",
           leader_type == joint_types.end()
               ? "names no joint of this file: the coupling is ignored, and the joint moves on its own"
               : "names a joint that is not revolute, continuous or prismatic: the coupling is ignored");
      continue;
    }
    JointCouplingSpec coupling;
    coupling.name = "mimic:" + name;
    coupling.joint1 = name;
    const double offset = read_number(ctx, mimic, "offset", owner, 0.0);
    const double multiplier = read_number(ctx, mimic, "multiplier", owner, 1.0);
    if (fixed_leader) {
      coupling.polycoef = {offset, 0.0, 0.0, 0.0, 0.0};  // the leader stays at 0
    } else {
      coupling.joint2 = leader;
      coupling.polycoef = {offset, multiplier, 0.0, 0.0, 0.0};
    }
    coupling.q1_ref = 0.0;
    coupling.q2_ref = 0.0;
    coupling.where = locate(ctx, mimic, owner);
    builder.add_joint_coupling(std::move(coupling));
  }
  for (JointSpec& joint : joints) builder.add_joint(std::move(joint));
  for (ActuatorSpec& motor : motors) builder.add_actuator(std::move(motor));
  note_unsupported(ctx, robot);
  ctx.notes.emit(options.warnings);
  return builder;
}

}  // namespace

ModelBuilder parse_urdf_string(const std::string& xml, const std::string& source_name, const LoadOptions& options) {
  // Relative mesh paths of an in-memory document resolve against the named file's directory
  // when it has one, else against the working directory.
  const fs::path base = fs::path(source_name).parent_path();
  return parse_document(xml, source_name, base.empty() ? fs::path(".") : base, options);
}

ModelBuilder parse_urdf(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(SourceLocation{path, 0, ""}, "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_urdf_string(text.str(), path, options);
}

Model load_urdf(const std::string& path, const LoadOptions& options) {
  BuildOptions build;
  build.floating_base = options.floating_base;
  return parse_urdf(path, options).build(build);
}

}  // namespace gradyn
