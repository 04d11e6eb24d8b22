// MJCF (MuJoCo XML) loader: the subset of MuJoCo's compiler that the rigid-body dynamics need.
//
// What is read, and how it maps onto gradyn (checked against the mujoco Python package, see
// tests/io/test_mjcf.cpp and tests/python/test_mujoco_oracle.py):
//  * <worldbody> body tree. Each <body> is placed by pos and one of quat / axisangle / euler /
//    xyaxes / zaxis in its parent's frame; <compiler angle> (default: degree) and eulerseq
//    (default "xyz"; lower case = moving axes, upper case = fixed axes) as in MuJoCo.
//  * <default> classes (nested, inherited), element `class` and body `childclass`. Attributes
//    that are arrays (size, pos, ...) are overlaid component by component, like MuJoCo does.
//  * <include file> anywhere, relative to the including file's directory.
//  * Joints: hinge -> Revolute (Continuous when not limited), slide -> Prismatic, ball ->
//    Spherical, free / <freejoint> -> Free. A body with several joints composes them in order,
//    as mj_kinematics does: body frame = parent * T(body pos, quat) * J_1 * ... * J_n with
//      hinge  J = T(p) Rot(axis, q - ref) T(-p)     slide  J = T(axis (q - ref))
//      ball   J = T(p) Rot(quat) T(-p)              (p: joint pos, axis: joint axis, body frame)
//    Every joint but the last moves a massless intermediate link named "<body>/<joint>"; the
//    last one moves the link named after the body, whose frame is MuJoCo's body frame. Each
//    J_k is split as joint origin T(p) (after the body placement for k = 1), the joint motion
//    Rot(axis, q) / T(axis q), and child_offset Rot(axis, -ref) T(-p) (hinge) or
//    T(-axis ref - p) (slide), so that gradyn's q equals MuJoCo's qpos and model.q0 = qpos0.
//    A body without joints is welded to its parent by a fixed joint named "weld:<body>".
//  * Per joint: armature, damping, stiffness, frictionloss (dry friction), springref (-> rest), ref
//    (-> reference), range + limited (autolimits) -> lower/upper (radians for hinges). Ball springs
//    pull toward the identity, as MuJoCo's (qpos_spring = qpos0 = identity). Stiffness on a free
//    joint and springdamper are not supported (ModelError). actuatorgravcomp and MuJoCo's
//    constraint softness (solref*, solimp*, margin) are not simulated: they warn (note_joint_attributes).
//  * <equality><joint joint1 joint2 polycoef> and <equality><tendon tendon1 tendon2 polycoef> ->
//    model.joint_couplings, <equality><connect> and <weld> -> model.body_connections (parse_equality).
//  * <tendon><fixed> (its <joint joint coef> on hinge and slide joints; range + limited (autolimits),
//    stiffness, damping, springlength) -> model.tendons (parse_tendons). Spatial tendons, tendon
//    frictionloss and armature, a springlength dead band and actuators on tendons warn.
//  * Inertia: <inertial pos quat mass diaginertia|fullinertia>, or from the geoms following
//    <compiler inertiafromgeom> (auto: only when the body has no <inertial>) and
//    inertiagrouprange: sphere, capsule, cylinder, ellipsoid, box, by density (default 1000)
//    or the geom's mass; fromto for capsule/cylinder/ellipsoid/box. Planes and hfields carry no
//    mass; mesh geoms the solid inertia of their convex hull (MuJoCo's for convex meshes).
//    boundmass, boundinertia and settotalmass are applied as MuJoCo does. A tensor no rigid body
//    has is refused, repaired (LoadOptions::inertia = Repair, or <compiler balanceinertia="true">,
//    as MuJoCo's balanceinertia) or accepted as written, by ModelBuilder::add_link.
//  * <camera>s become model.cameras (parse_camera): a frame of kind Camera on their body's link and
//    the vertical field of view fovy; unnamed ones are named "camera<k>", k their MuJoCo id (the
//    world's first, then each body's in tree order). Modes other than fixed (track, targetbody...)
//    and the intrinsics gradyn's pinhole camera has no room for (focal, principal, sensorsize,
//    resolution, ipd, orthographic) are kept in ModelCamera::unsupported and said when the camera
//    is used (gradyn.Camera.named): it stays fixed to its body, square pixels, the principal point
//    at the image centre.
//  * Named <site>s become frames (kind Site) of their body's link (parse_site). <sensor>: jointpos,
//    jointvel, framepos, framequat, framelinvel, frameangvel (objtype/reftype site, xbody or a
//    primitive geom, whose frame becomes a model frame of kind Geom), gyro, accelerometer and touch
//    become model.sensors (parse_sensors; sensors/sensors.hpp); other sensors, and frame sensors on
//    body (inertial) frames, cameras and mesh geoms, warn and are skipped.
//  * Not simulated, with one warning per kind and load (note_section, note_joint_attributes,
//    collision_geom, parse_body, parse_sensors, parse_equality, parse_tendons): <equality> flex
//    and inactive ones, spatial tendons, <keyframe>, <deformable>,
//    <extension>, body <plugin>, gravcomp and mocap, geom condim != 3 and softness, the sensors above;
//    silent: drawing (<visual>, <statistic>, <light>, <camera> at load), <size>, <custom> and <option>'s solver
//    settings.
//  * Collision meshes: <asset><mesh name file|vertex scale> (file: STL, OBJ or any format
//    Open Asset Import reads, relative to <compiler meshdir>, else assetdir, else the main
//    file's directory; relative meshdir/assetdir are relative to the main file's directory, as
//    in MuJoCo) used by <geom type="mesh" mesh="name"> become ConvexHull geoms: the convex hull
//    of the mesh's vertices, which is also what MuJoCo collides. The vertices stay in the mesh's
//    own frame, placed by the geom's pos/quat (MuJoCo re-centres the mesh at its centroid and
//    moves the geom frame to match: the world vertices are the same). A missing or unreadable
//    mesh file is a ModelError naming the <mesh> element.
//  * Gravity from <option gravity> (and <flag gravity="disable">), default (0, 0, -9.81).
//  * Unnamed bodies and joints are called "body<i>" / "joint<i>", i being MuJoCo's id
//    (depth-first order, the world is body 0).
//
// State conventions. MuJoCo and gradyn order joints, q and v the same way (depth-first over
// bodies, joints in document order), and scalar joints agree entry by entry. Quaternion joints
// differ:
//   ball:  MuJoCo qpos = (w, x, y, z)              gradyn q = (x, y, z, w)
//          MuJoCo qvel = angular velocity in the child (body) frame = gradyn v
//   free:  MuJoCo qpos = (p, w, x, y, z)           gradyn q = (p, x, y, z, w), p in the world
//          MuJoCo qvel = (p_dot in the WORLD frame, omega in the BODY frame)
//          gradyn v    = (R^T p_dot, omega), both in the body frame (R: the body's rotation)
//          accelerations: gradyn a_lin = R^T qacc_lin - omega x (R^T p_dot); a_ang = qacc_ang
//          generalized forces: gradyn tau_lin = R^T qfrc_lin; tau_ang = qfrc_ang
// Free joints are only allowed in top-level bodies (as in MuJoCo), so p and R are the joint's
// own position and rotation. The free joints' entries of q0 (and q_rest) are the body's initial
// pose, like MuJoCo's qpos0 (JointSpec::free_pose).
#include <tinyxml2.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>

#include "gradyn/io/load.hpp"
#include "gradyn/model/detail/grouped_warnings.hpp"
#include "mesh_file.hpp"
#include "xml_error.hpp"

namespace gradyn {
namespace {

using tinyxml2::XMLDocument;
using tinyxml2::XMLElement;
using Vec3 = Vector3<double>;
using Mat3 = Matrix3<double>;
using Quat = Eigen::Quaterniond;
using AttrMap = std::map<std::string, std::string>;

constexpr double kPi = std::numbers::pi;

struct Compiler {
  bool degrees = true;
  std::string eulerseq = "xyz";
  enum class FromGeom { False, True, Auto } inertia_from_geom = FromGeom::Auto;
  bool autolimits = true;
  std::string meshdir, assetdir;
  int group_min = 0, group_max = 5;
  double boundmass = 0, boundinertia = 0, settotalmass = -1;
};

struct DefaultClass {
  std::string name;
  int parent = -1;
  std::map<std::string, AttrMap> attributes;  // element kind (joint, geom, ...) -> attributes
};

struct ParseResult {
  ModelBuilder builder;
};

class MjcfParser {
 public:
  explicit MjcfParser(const LoadOptions& options) : warnings_(options.warnings), inertia_policy_(options.inertia) {}

  ParseResult parse_file(const std::string& path) {
    main_file_ = path;
    const XMLDocument& doc = load_document(path, SourceLocation{path, 0, ""});
    return parse_root(doc);
  }

  ParseResult parse_string(const std::string& xml, const std::string& source_name) {
    main_file_ = source_name;
    auto doc = std::make_unique<XMLDocument>();
    if (doc->Parse(xml.c_str(), xml.size()) != tinyxml2::XML_SUCCESS)
      throw ModelError(SourceLocation{source_name, doc->ErrorLineNum(), ""}, io_detail::xml_error_message(*doc));
    doc_file_[doc.get()] = source_name;
    docs_.push_back(std::move(doc));
    return parse_root(*docs_.back());
  }

 private:
  // ---- documents, includes and error locations -------------------------------------------------

  const XMLDocument& load_document(const std::string& path, const SourceLocation& from) {
    auto doc = std::make_unique<XMLDocument>();
    const tinyxml2::XMLError err = doc->LoadFile(path.c_str());
    if (err == tinyxml2::XML_ERROR_FILE_NOT_FOUND || err == tinyxml2::XML_ERROR_FILE_COULD_NOT_BE_OPENED)
      throw ModelError(from, "cannot open file '" + path + "'");
    if (err != tinyxml2::XML_SUCCESS)
      throw ModelError(SourceLocation{path, doc->ErrorLineNum(), ""}, io_detail::xml_error_message(*doc));
    doc_file_[doc.get()] = path;
    docs_.push_back(std::move(doc));
    return *docs_.back();
  }

  SourceLocation where(const XMLElement* e) const {
    std::string element = std::string("<") + e->Name();
    if (const char* n = e->Attribute("name")) element += std::string(" name='") + n + "'";
    element += ">";
    auto it = doc_file_.find(e->GetDocument());
    return SourceLocation{it == doc_file_.end() ? main_file_ : it->second, e->GetLineNum(), element};
  }

  [[noreturn]] void fail(const XMLElement* e, const std::string& message) const { throw ModelError(where(e), message); }

  // One occurrence of a kind of warning; a load issues one warning per kind (detail::GroupedWarnings):
  // "<file>:<line>: <element>: <what> <why>", then how many and where the others are.
  void warn(const std::string& kind, const XMLElement* e, const std::string& what, const std::string& why) const {
    notes_.add(kind, where(e), what, why);
  }

  // Children of an element with <include file="..."/> replaced by the children of the included
  // file's <mujoco> root, recursively.
  std::vector<const XMLElement*> children(const XMLElement* parent) {
    std::vector<const XMLElement*> out;
    append_children(parent, out);
    return out;
  }

  // Limits on includes, which are expanded wherever the body tree meets them (an <include> inside
  // a <body> of an included file too): a file may not include itself through any chain, chains
  // are at most kMaxIncludeDepth files long, and one model reads at most kMaxIncludes included
  // files (files that include the same file many times multiply).
  static constexpr int kMaxIncludeDepth = 32;
  static constexpr size_t kMaxIncludes = 1000;

  void append_children(const XMLElement* parent, std::vector<const XMLElement*>& out) {
    for (const XMLElement* c = parent->FirstChildElement(); c; c = c->NextSiblingElement()) {
      if (std::string(c->Name()) != "include") {
        out.push_back(c);
        continue;
      }
      const char* file = c->Attribute("file");
      if (!file) fail(c, "<include> needs a 'file' attribute");
      std::filesystem::path p(file);
      if (p.is_relative()) p = std::filesystem::path(where(c).file).parent_path() / p;
      const std::string path = p.lexically_normal().string();
      // The chain of files that includes this one, innermost first.
      std::vector<std::string> chain;
      for (const XMLDocument* d = c->GetDocument(); d;) {
        auto f = doc_file_.find(d);
        chain.push_back(f == doc_file_.end() ? main_file_ : f->second);
        auto up = included_from_.find(d);
        d = up == included_from_.end() ? nullptr : up->second;
      }
      const auto same_file = [&](const std::string& other) {
        if (std::filesystem::path(other).lexically_normal() == std::filesystem::path(path)) return true;
        std::error_code ec;
        return std::filesystem::equivalent(other, path, ec);
      };
      for (const std::string& f : chain) {
        if (!same_file(f)) continue;
        std::string cycle = "'" + path + "'";
        for (const std::string& g : chain) {
          cycle = "'" + g + "' -> " + cycle;
          if (same_file(g)) break;
        }
        fail(c, "include cycle: " + cycle + " (a file may not include itself)");
      }
      if (static_cast<int>(chain.size()) > kMaxIncludeDepth)
        fail(c, "includes nested more than " + std::to_string(kMaxIncludeDepth) + " files deep");
      if (++include_count_ > kMaxIncludes)
        fail(c, "more than " + std::to_string(kMaxIncludes) +
                    " <include> elements expanded in one model (files that include the same files many times?)");
      const XMLDocument& doc = load_document(path, where(c));
      included_from_[&doc] = c->GetDocument();
      const XMLElement* root = doc.RootElement();
      if (!root || std::string(root->Name()) != "mujoco")
        fail(c, "included file '" + p.string() + "' must have a <mujoco> root element");
      append_children(root, out);
    }
  }

  // ---- attribute reading --------------------------------------------------------------------------

  // Attributes of one element resolved through its default class chain (root class first).
  struct Attrs {
    const XMLElement* element = nullptr;
    std::vector<const AttrMap*> chain;

    // The element's own value, else the nearest default class's.
    std::optional<std::string> raw(const char* name) const {
      if (const char* v = element->Attribute(name)) return std::string(v);
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        auto f = (*it)->find(name);
        if (f != (*it)->end()) return f->second;
      }
      return std::nullopt;
    }
    bool has(const char* name) const { return raw(name).has_value(); }
  };

  std::vector<double> parse_numbers(const XMLElement* e, const char* name, const std::string& text) const {
    std::vector<double> out;
    const char* s = text.c_str();
    while (true) {
      while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == ',') ++s;
      if (!*s) break;
      char* end = nullptr;
      const double x = std::strtod(s, &end);
      if (end == s || !std::isfinite(x))
        fail(e, std::string("attribute '") + name + "' must hold numbers, got '" + text + "'");
      out.push_back(x);
      s = end;
    }
    return out;
  }

  // Reads an array attribute: `fallback` overlaid by each default class in the chain and then by
  // the element, component by component (MuJoCo reads at most n values and keeps the rest).
  // exact: every level must give all n values.
  std::vector<double> numbers(const Attrs& a, const char* name, std::vector<double> fallback, bool exact = true) const {
    const size_t n = fallback.size();
    auto overlay = [&](const std::string& text) {
      const std::vector<double> x = parse_numbers(a.element, name, text);
      if (x.size() > n || (exact && x.size() != n) || x.empty()) {
        std::ostringstream s;
        s << "attribute '" << name << "' expects " << (exact ? "" : "up to ") << n << " number" << (n > 1 ? "s" : "")
          << ", got '" << text << "'";
        fail(a.element, s.str());
      }
      for (size_t i = 0; i < x.size(); ++i) fallback[i] = x[i];
    };
    for (const AttrMap* m : a.chain) {
      auto f = m->find(name);
      if (f != m->end()) overlay(f->second);
    }
    if (const char* v = a.element->Attribute(name)) overlay(v);
    return fallback;
  }

  double number(const Attrs& a, const char* name, double fallback) const { return numbers(a, name, {fallback})[0]; }

  Vec3 vec3(const Attrs& a, const char* name, const Vec3& fallback) const {
    const auto x = numbers(a, name, {fallback.x(), fallback.y(), fallback.z()});
    return Vec3(x[0], x[1], x[2]);
  }

  std::string keyword(const Attrs& a, const char* name, const std::string& fallback,
                      std::initializer_list<const char*> allowed) const {
    const auto r = a.raw(name);
    if (!r) return fallback;
    for (const char* k : allowed)
      if (*r == k) return *r;
    std::string list;
    for (const char* k : allowed) list += std::string(list.empty() ? "" : ", ") + "'" + k + "'";
    fail(a.element, std::string("attribute '") + name + "' must be one of " + list + ", got '" + *r + "'");
  }

  Attrs plain(const XMLElement* e) const { return Attrs{e, {}}; }

  // Attributes of element `e` of kind `kind` (joint, geom, ...) with the class named by its
  // `class` attribute, else the active childclass.
  Attrs with_defaults(const XMLElement* e, const std::string& kind, int active_class) const {
    int cls = active_class;
    if (const char* c = e->Attribute("class")) {
      auto it = class_index_.find(c);
      if (it == class_index_.end()) fail(e, std::string("unknown default class '") + c + "'");
      cls = it->second;
    }
    Attrs a{e, {}};
    std::vector<const AttrMap*> reversed;
    for (int k = cls; k >= 0; k = classes_[k].parent) {
      auto f = classes_[k].attributes.find(kind);
      if (f != classes_[k].attributes.end()) reversed.push_back(&f->second);
    }
    a.chain.assign(reversed.rbegin(), reversed.rend());
    return a;
  }

  double angle(double x) const { return compiler_.degrees ? x * kPi / 180.0 : x; }

  // Orientation from quat, axisangle, euler, xyaxes or zaxis (at most one), as a unit quaternion
  // computed the way MuJoCo's compiler does.
  Quat orientation(const Attrs& a) const {
    static const char* kinds[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
    // The element's own specifiers win over its defaults'.
    const char* chosen = nullptr;
    int own = 0;
    for (const char* k : kinds)
      if (a.element->Attribute(k)) {
        ++own;
        chosen = k;
      }
    if (own > 1) fail(a.element, "at most one of quat, axisangle, euler, xyaxes, zaxis may be given");
    if (!chosen)
      for (const char* k : kinds)
        if (a.has(k)) chosen = k;
    if (!chosen) return Quat::Identity();
    const std::string k = chosen;
    if (k == "quat") {
      const auto v = numbers(a, "quat", {1, 0, 0, 0});
      Quat q(v[0], v[1], v[2], v[3]);
      if (q.norm() < 1e-12) fail(a.element, "quat must not be zero");
      return q.normalized();
    }
    if (k == "axisangle") {
      const auto v = numbers(a, "axisangle", {0, 0, 1, 0});
      const Vec3 axis(v[0], v[1], v[2]);
      if (axis.norm() < 1e-12) fail(a.element, "axisangle axis must not be zero");
      const double th = angle(v[3]);
      const Vec3 u = axis.normalized() * std::sin(th / 2);
      return Quat(std::cos(th / 2), u.x(), u.y(), u.z());
    }
    if (k == "euler") {
      const auto v = numbers(a, "euler", {0, 0, 0});
      Quat q = Quat::Identity();
      for (int i = 0; i < 3; ++i) {
        const double th = angle(v[i]);
        const char axis = compiler_.eulerseq[i];
        Vec3 u = Vec3::Zero();
        u[std::tolower(axis) - 'x'] = std::sin(th / 2);
        const Quat r(std::cos(th / 2), u.x(), u.y(), u.z());
        q = std::islower(axis) ? Quat(q * r) : Quat(r * q);  // moving axes: post-multiply
      }
      return q;
    }
    if (k == "xyaxes") {
      const auto v = numbers(a, "xyaxes", {1, 0, 0, 0, 1, 0});
      Vec3 x(v[0], v[1], v[2]), y(v[3], v[4], v[5]);
      if (x.norm() < 1e-12) fail(a.element, "xyaxes: the x axis must not be zero");
      x.normalize();
      y -= x * x.dot(y);
      if (y.norm() < 1e-12) fail(a.element, "xyaxes: the y axis must not be parallel to the x axis");
      y.normalize();
      Mat3 R;
      R.col(0) = x;
      R.col(1) = y;
      R.col(2) = x.cross(y);
      Quat q(R);
      if (q.w() < 0) q.coeffs() = -q.coeffs();
      return q.normalized();
    }
    const Vec3 z = vec3(a, "zaxis", Vec3(0, 0, 1));
    if (z.norm() < 1e-12) fail(a.element, "zaxis must not be zero");
    return z_to_quat(z);
  }

  // Rotation taking (0, 0, 1) to direction z by the shortest arc (MuJoCo's mjuu_z2quat).
  static Quat z_to_quat(const Vec3& z) {
    Vec3 axis = Vec3(0, 0, 1).cross(z);
    const double s = axis.norm();
    if (s < 1e-10)
      axis = Vec3(1, 0, 0);
    else
      axis /= s;
    const double th = std::atan2(s, z.z());
    const Vec3 u = axis * std::sin(th / 2);
    return Quat(std::cos(th / 2), u.x(), u.y(), u.z());
  }

  // ---- sections -----------------------------------------------------------------------------------

  ParseResult parse_root(const XMLDocument& doc) {
    const XMLElement* root = doc.RootElement();
    if (!root) throw ModelError(SourceLocation{main_file_, 0, ""}, "empty document");
    if (std::string(root->Name()) != "mujoco")
      fail(root, std::string("the root element must be <mujoco>, got <") + root->Name() + ">");
    if (const char* n = root->Attribute("model")) result_.builder.set_name(n);
    result_.builder.set_source(main_file_);

    std::vector<const XMLElement*> worldbodies, defaults, assets, sensor_sections, equality_sections, tendon_sections;
    for (const XMLElement* s : children(root)) {
      const std::string name = s->Name();
      if (name == "asset")
        assets.push_back(s);
      else if (name == "compiler")
        parse_compiler(s);
      else if (name == "option")
        parse_option(s);
      else if (name == "default")
        defaults.push_back(s);
      else if (name == "worldbody")
        worldbodies.push_back(s);
      else if (name == "sensor")
        sensor_sections.push_back(s);
      else if (name == "equality")
        equality_sections.push_back(s);
      else if (name == "tendon")
        tendon_sections.push_back(s);
      else
        note_section(s);
    }
    classes_.push_back(DefaultClass{"main", -1, {}});
    class_index_["main"] = 0;
    for (const XMLElement* d : defaults) parse_default(d, 0, true);
    for (const XMLElement* a : assets) parse_assets(a);

    LinkSpec world{"world", std::nullopt, worldbodies.empty() ? where(root) : where(worldbodies[0]), {}};
    for (const XMLElement* w : worldbodies) parse_children(w, "world", 0, /*world=*/true);
    world.collisions = std::move(world_geoms_);
    result_.builder.add_link(std::move(world));
    for (const XMLElement* s : children(root))
      if (std::string(s->Name()) == "contact") parse_contact(s);
    for (const XMLElement* s : children(root))
      if (std::string(s->Name()) == "actuator") parse_actuators(s);
    for (const XMLElement* s : equality_sections) parse_equality(s);
    for (const XMLElement* s : tendon_sections) parse_tendons(s);
    for (const XMLElement* s : sensor_sections) parse_sensors(s);

    finish_masses();
    result_.builder.set_inertia_policy(
        balance_inertia_ && inertia_policy_ == InertiaPolicy::Strict ? InertiaPolicy::Repair : inertia_policy_,
        warnings_);
    for (const PendingLink& l : pending_) result_.builder.add_link(l.spec);
    for (JointSpec& j : pending_joints_) result_.builder.add_joint(std::move(j));
    notes_.emit(warnings_);
    return std::move(result_);
  }

  // What gradyn does not simulate warns, once per kind. Top-level sections:
  //  * warn: <keyframe> (named states: model.q0 is qpos0, a key is
  //    not read), <deformable> (flexes), <extension> (plugins), and any section MJCF does not define;
  //  * silent, as they change no dynamics: <visual> and <statistic> (drawing), <size> (MuJoCo's
  //    memory sizes), <custom> (user numbers and text). <contact> and <actuator> are read below.
  void note_section(const XMLElement* s) {
    const std::string name = s->Name();
    static const std::map<std::string, std::string> why = {
        {"keyframe", "is not read by gradyn: model.q0 is qpos0, and no named state is kept (set q yourself)"},
        {"deformable", "(flexes, skins) is not simulated by gradyn"},
        {"extension", "(plugins) is not simulated by gradyn"},
    };
    if (name == "visual" || name == "statistic" || name == "size" || name == "custom" || name == "contact" ||
        name == "actuator")
      return;
    auto it = why.find(name);
    if (it == why.end()) {
      warn("unknown section", s, "<" + name + ">", "is not a section of MJCF that gradyn reads, and is ignored");
      return;
    }
    // one occurrence per element inside (a <connect>, a <fixed> tendon, a <jointpos> sensor ...)
    bool any = false;
    for (const XMLElement* c : children(s)) {
      warn(name, c, "<" + name + "><" + c->Name() + ">", it->second);
      any = true;
    }
    if (!any && name != "keyframe") warn(name, s, "<" + name + ">", it->second);
  }

  // Attributes of bodies, joints and geoms that change the dynamics in MuJoCo but are not simulated
  // by gradyn (each warns once per load). MuJoCo's constraint softness (solref, solimp, margin, gap,
  // solmix, priority) is listed on joints and colliding geoms: gradyn's limits and contacts have
  // their own stiffness (Model.with_contact). Purely visual attributes (rgba, material, group) and
  // user data are silent.
  void note_joint_attributes(const Attrs& a, const XMLElement* e, bool free_joint) const {
    if (number(a, "frictionloss", 0) != 0) note_softness(a, e, "joint", {"solreffriction", "solimpfriction"});
    if (a.has("actuatorgravcomp") && keyword(a, "actuatorgravcomp", "false", {"true", "false"}) == "true")
      warn("actuatorgravcomp", e, "joint actuatorgravcomp=\"true\"",
           "(gravity compensation through the actuators) is not simulated by gradyn");
    // the limit's softness matters on a limited joint only (a free joint's margin, say, does nothing);
    // the friction's softness only with frictionloss
    const bool limited = !free_joint && (keyword(a, "limited", "auto", {"true", "false", "auto"}) == "true" ||
                                         (keyword(a, "limited", "auto", {"true", "false", "auto"}) == "auto" &&
                                          a.has("range")));
    if (limited) note_softness(a, e, "joint", {"solreflimit", "solimplimit", "margin"});
  }

  void note_softness(const Attrs& a, const XMLElement* e, const char* kind,
                     std::initializer_list<const char*> names) const {
    std::string present;
    for (const char* n : names)
      if (a.has(n)) present += std::string(present.empty() ? "" : ", ") + n;
    if (!present.empty())
      warn("softness", e, std::string(kind) + " " + present,
           "(MuJoCo's constraint softness and margins) are not read by gradyn: its joint limits and contacts have "
           "their own stiffness and damping (Model.with_contact)");
  }

  void parse_compiler(const XMLElement* e) {
    const Attrs a = plain(e);
    compiler_.degrees = keyword(a, "angle", compiler_.degrees ? "degree" : "radian", {"degree", "radian"}) == "degree";
    if (const char* s = e->Attribute("eulerseq")) {
      const std::string seq = s;
      bool ok = seq.size() == 3;
      for (char c : seq) ok = ok && std::string("xyzXYZ").find(c) != std::string::npos;
      if (!ok) fail(e, "eulerseq must be three of x, y, z, X, Y, Z, got '" + seq + "'");
      compiler_.eulerseq = seq;
    }
    if (e->Attribute("inertiafromgeom")) {
      const std::string v = keyword(a, "inertiafromgeom", "auto", {"true", "false", "auto"});
      compiler_.inertia_from_geom = v == "true"    ? Compiler::FromGeom::True
                                    : v == "false" ? Compiler::FromGeom::False
                                                   : Compiler::FromGeom::Auto;
    }
    if (e->Attribute("coordinate") && keyword(a, "coordinate", "local", {"local", "global"}) == "global")
      fail(e, "coordinate=\"global\" is not supported (MuJoCo removed it too); use local coordinates");
    if (const char* dir = e->Attribute("meshdir")) compiler_.meshdir = dir;
    if (const char* dir = e->Attribute("assetdir")) compiler_.assetdir = dir;
    if (e->Attribute("autolimits")) compiler_.autolimits = keyword(a, "autolimits", "true", {"true", "false"}) == "true";
    if (e->Attribute("inertiagrouprange")) {
      const auto g = numbers(a, "inertiagrouprange", {0, 5});
      compiler_.group_min = static_cast<int>(whole_number(e, "inertiagrouprange", g[0], -1e9, 1e9));
      compiler_.group_max = static_cast<int>(whole_number(e, "inertiagrouprange", g[1], -1e9, 1e9));
    }
    compiler_.boundmass = number(a, "boundmass", compiler_.boundmass);
    compiler_.boundinertia = number(a, "boundinertia", compiler_.boundinertia);
    compiler_.settotalmass = number(a, "settotalmass", compiler_.settotalmass);
    // balanceinertia: impossible inertias are repaired, as LoadOptions::inertia = Repair does (an
    // explicit Accept wins).
    if (e->Attribute("balanceinertia"))
      balance_inertia_ = keyword(a, "balanceinertia", "false", {"true", "false"}) == "true";
  }

  // <asset>: <mesh> elements become convex hulls (other assets are not needed).
  void parse_assets(const XMLElement* e) {
    for (const XMLElement* c : children(e)) {
      if (std::string(c->Name()) != "mesh") continue;
      const Attrs a = with_defaults(c, "mesh", 0);
      const char* file = c->Attribute("file");
      std::string name;
      if (const char* n = c->Attribute("name")) name = n;
      else if (file) name = std::filesystem::path(file).stem().string();  // MuJoCo: the file name without extension
      else fail(c, "a <mesh> needs a 'name' or a 'file'");
      if (meshes_.count(name)) fail(c, "mesh '" + name + "' is defined twice");
      const Vec3 scale = vec3(a, "scale", Vec3::Ones());
      std::vector<Vec3> vertices;
      if (a.has("vertex")) {
        if (file) fail(c, "a <mesh> takes either 'file' or 'vertex', not both");
        const std::vector<double> v = parse_numbers(c, "vertex", *a.raw("vertex"));
        if (v.size() % 3 != 0) fail(c, "attribute 'vertex' must hold x y z triples, got " + std::to_string(v.size()) + " numbers");
        for (size_t k = 0; k + 2 < v.size(); k += 3) vertices.push_back(Vec3(v[k], v[k + 1], v[k + 2]).cwiseProduct(scale));
      } else if (file) {
        const std::filesystem::path mesh_dir = mesh_path(".");  // meshdir, else assetdir, else the model's folder
        if (io_detail::outside(mesh_path(file), mesh_dir))
          warn("mesh outside", c, std::string("mesh file '") + file + "'",
               "is outside the model's mesh folder " + mesh_dir.string() +
                   " (it is read all the same: check where it points)");
        try {
          vertices = io_detail::read_mesh_vertices(mesh_path(file).string(), scale);
        } catch (const std::runtime_error& err) {
          fail(c, err.what());
        }
      } else {
        fail(c, "a <mesh> needs a 'file' or a 'vertex' list");
      }
      try {
        meshes_[name] = make_convex_hull(vertices);
      } catch (const ArgumentError& err) {
        fail(c, "mesh '" + name + "': " + err.what());
      }
    }
  }

  // A <mesh file>: absolute, else relative to meshdir, else assetdir, else the main file's
  // directory (meshdir and assetdir themselves relative to the main file's directory).
  std::filesystem::path mesh_path(const std::string& file) const {
    namespace fs = std::filesystem;
    fs::path p(file);
    if (p.is_absolute()) return p;
    fs::path dir = fs::path(main_file_).parent_path();
    const std::string& sub = !compiler_.meshdir.empty() ? compiler_.meshdir : compiler_.assetdir;
    if (!sub.empty()) dir = fs::path(sub).is_absolute() ? fs::path(sub) : dir / sub;
    return (dir / p).lexically_normal();
  }

  // The hull of the mesh a mesh geom names.
  std::shared_ptr<const ConvexHull> geom_mesh(const Attrs& a) const {
    const auto name = a.raw("mesh");
    if (!name) fail(a.element, "a mesh geom needs a 'mesh' attribute naming an <asset><mesh>");
    auto it = meshes_.find(*name);
    if (it == meshes_.end()) fail(a.element, "unknown mesh '" + *name + "' (no <asset><mesh name='" + *name + "'>)");
    return it->second;
  }

  void parse_option(const XMLElement* e) {
    const Attrs a = plain(e);
    result_.builder.set_gravity(gravity_ = vec3(a, "gravity", gravity_));
    // MuJoCo's fluid forces act on every body of a model with a medium; gradyn has none of them
    if (number(a, "density", 0.0) != 0.0 || number(a, "viscosity", 0.0) != 0.0 || !vec3(a, "wind", Vec3::Zero()).isZero())
      warn("medium", e, "the medium's fluid forces (option density, viscosity, wind)",
           "are not simulated by gradyn: the model moves as in vacuum. To learn them, add a network to the dynamics "
           "(Model.with_network)");
    // timestep, integrator and the solver's settings (cone, impratio, iterations, tolerance, noslip, ...)
    // are how MuJoCo steps, not the machine: gradyn's step takes dt, and the contact model and its
    // settings come from gradyn.load(contact=...) and Model.with_contact. They are not read, silently.
    for (const XMLElement* c : children(e)) {
      if (std::string(c->Name()) != "flag") continue;
      if (c->Attribute("gravity") && keyword(plain(c), "gravity", "enable", {"enable", "disable"}) == "disable")
        result_.builder.set_gravity(Vec3::Zero());
      // flags that switch off a force gradyn models warn; the others tune MuJoCo's solver and
      // integrator (warmstart, eulerdamp, energy, island, ...) and are silent
      static const std::set<std::string> forces = {"constraint", "limit", "contact", "passive", "spring", "damper",
                                                   "actuation", "clampctrl", "filterparent"};
      for (const tinyxml2::XMLAttribute* at = c->FirstAttribute(); at; at = at->Next()) {
        const std::string name = at->Name();
        const bool changed = (forces.count(name) && std::string_view(at->Value()) == "disable") ||
                             (name == "override" && std::string_view(at->Value()) == "enable");
        if (changed)
          warn("flag", c, std::string("<flag ") + name + "=\"" + at->Value() + "\">",
               "is not read by gradyn, which simulates every force it models (contact, limits, damping, "
               "actuation, springs) whatever the flag says");
      }
    }
  }

  void parse_default(const XMLElement* e, int parent, bool top) {
    const NestingGuard nesting(default_depth_);
    if (default_depth_ > kMaxNesting)
      fail(e, "default classes nested more than " + std::to_string(kMaxNesting) + " deep (through <include>s)");
    int index = parent;
    const char* cls = e->Attribute("class");
    if (!top || (cls && std::string(cls) != "main")) {
      if (!cls) fail(e, "a nested <default> needs a 'class' attribute");
      if (class_index_.count(cls)) fail(e, std::string("default class '") + cls + "' is defined twice");
      index = static_cast<int>(classes_.size());
      classes_.push_back(DefaultClass{cls, parent, {}});
      class_index_[cls] = index;
    }
    for (const XMLElement* c : children(e)) {
      const std::string kind = c->Name();
      if (kind == "default") {
        parse_default(c, index, false);
        continue;
      }
      // MuJoCo keeps one default actuator per class, which every actuator element of the class edits.
      AttrMap& m = classes_[index].attributes[is_actuator_kind(kind) ? "actuator" : kind];
      for (const tinyxml2::XMLAttribute* at = c->FirstAttribute(); at; at = at->Next()) m[at->Name()] = at->Value();
    }
  }

  // ---- bodies -------------------------------------------------------------------------------------

  struct PendingLink {
    LinkSpec spec;
    const XMLElement* element = nullptr;  // the <body>, null for intermediate links
  };

  void parse_children(const XMLElement* e, const std::string& link, int active_class, bool world) {
    if (world)  // MuJoCo numbers the world's cameras before any body's
      for (const XMLElement* c : children(e))
        if (std::string(c->Name()) == "camera") parse_camera(c, link, active_class);
    for (const XMLElement* c : children(e)) {
      const std::string kind = c->Name();
      if (kind == "body")
        parse_body(c, link, active_class, world);
      else if (world && kind == "geom") {
        if (const char* gn = c->Attribute("name")) geom_elements_[gn] = GeomPlace{link, c, active_class};
        if (auto g = collision_geom(c, active_class, link, static_cast<int>(world_geoms_.size())))
          world_geoms_.push_back(std::move(*g));
      }
      else if (world && (kind == "joint" || kind == "freejoint"))
        fail(c, "the world body cannot have joints");
      else if (world && kind == "site")
        parse_site(c, link, active_class);
      else if (kind == "frame" || kind == "replicate" || kind == "composite" || kind == "flexcomp" ||
               kind == "attach")
        fail(c, "<" + kind + "> is not supported by the gradyn MJCF loader");
    }
  }

  // Bodies (and default classes) nest at most this deep. One file cannot go deeper than tinyxml2's
  // element depth (100), but includes inside bodies chain files; the parser recurses per level.
  static constexpr int kMaxNesting = 1000;
  struct NestingGuard {
    int& depth;
    explicit NestingGuard(int& d) : depth(++d) {}
    ~NestingGuard() { --depth; }
  };

  // The body's chain of joints (every joint but the last moves an intermediate massless link), or
  // a fixed joint when it has none. Out of line, so that its JointSpecs stay off parse_body's
  // recursive frame (deeply nested bodies overflowed the stack under AddressSanitizer).
  [[gnu::noinline]] void add_body_joints(const XMLElement* e, const std::string& name, const std::string& parent_link,
                                          const std::vector<const XMLElement*>& joints, const Pose<double>& placement,
                                          int active_class, bool parent_is_world) {
    std::string previous = parent_link;
    Pose<double> previous_offset = placement;  // pose of the next joint's frame origin before T(p)
    if (joints.empty()) {
      JointSpec weld;
      weld.name = "weld:" + name;
      weld.type = JointType::Fixed;
      weld.parent = parent_link;
      weld.child = name;
      weld.origin = placement;
      weld.where = where(e);
      pending_joints_.push_back(std::move(weld));
    }
    for (size_t k = 0; k < joints.size(); ++k) {
      const std::string child = k + 1 == joints.size() ? name : name + "/" + joint_name(joints[k], joint_count_);
      JointSpec js = parse_joint(joints[k], active_class, parent_is_world, joints.size(), e);
      js.parent = previous;
      js.child = child;
      if (js.type == JointType::Free) {
        js.free_pose = placement;
        js.origin = Pose<double>();  // q is the body's pose in the world, like MuJoCo's qpos
      } else {
        js.origin = previous_offset * js.origin;
      }
      if (k + 1 < joints.size()) pending_.push_back(PendingLink{LinkSpec{child, std::nullopt, where(joints[k]), {}}, nullptr});
      pending_joints_.push_back(std::move(js));
      previous = child;
      previous_offset = Pose<double>();
    }

    // MuJoCo never lets a body's geoms touch its parent body's (unless the parent is the world).
    // gradyn filters parent and child bodies too, but a chain of joints puts massless links
    // between this body and its MJCF parent: exclude the pair explicitly.
    if (joints.size() > 1 && !parent_is_world) result_.builder.exclude_collision(parent_link, name, where(e));
  }

  void parse_body(const XMLElement* e, const std::string& parent_link, int parent_class, bool parent_is_world) {
    const NestingGuard nesting(body_depth_);
    if (body_depth_ > kMaxNesting)
      fail(e, "bodies nested more than " + std::to_string(kMaxNesting) + " deep (through <include>s)");
    const int body_id = ++body_count_;
    const char* n = e->Attribute("name");
    const std::string name = n ? n : "body" + std::to_string(body_id);
    body_names_.insert(name);
    int active_class = parent_class;
    if (const char* c = e->Attribute("childclass")) {
      auto it = class_index_.find(c);
      if (it == class_index_.end()) fail(e, std::string("unknown default class '") + c + "'");
      active_class = it->second;
    }
    const Attrs body_attrs = plain(e);
    const Pose<double> placement(orientation(body_attrs).toRotationMatrix(), vec3(body_attrs, "pos", Vec3::Zero()));

    std::vector<const XMLElement*> joints, geoms, bodies;
    const XMLElement* inertial = nullptr;
    for (const XMLElement* c : children(e)) {
      const std::string kind = c->Name();
      if (kind == "joint" || kind == "freejoint")
        joints.push_back(c);
      else if (kind == "geom")
        geoms.push_back(c);
      else if (kind == "inertial") {
        if (inertial) fail(c, "a body may have only one <inertial>");
        inertial = c;
      } else if (kind == "plugin") {
        warn("plugin", c, "<body><plugin>", "(an engine plugin's forces) is not simulated by gradyn");
      } else if (kind != "body" && kind != "site" && kind != "camera" && kind != "light" && kind != "frame" &&
                 kind != "replicate" && kind != "composite" && kind != "flexcomp" && kind != "attach") {
        // <site>s and <camera>s become frames (parse_site, parse_camera); <light> is drawing: silent
        warn("unknown body element", c, "<body><" + kind + ">",
             "is not an element of an MJCF body that gradyn reads, and is ignored");
      }
    }
    if (number(body_attrs, "gravcomp", 0) != 0)
      warn("gravcomp", e, "body gravcomp=\"" + *body_attrs.raw("gravcomp") + "\"",
           "(gravity compensation) is not simulated by gradyn: gravity acts on the whole body");
    if (e->Attribute("mocap") && keyword(body_attrs, "mocap", "false", {"true", "false"}) == "true")
      warn("mocap", e, "body mocap=\"true\"",
           "(a body the user moves) is welded to its parent by gradyn, which has no mocap bodies");

    add_body_joints(e, name, parent_link, joints, placement, active_class, parent_is_world);

    // The body's own link; its inertia is filled in by finish_masses().
    body_links_.push_back(pending_.size());
    pending_.push_back(PendingLink{LinkSpec{name, std::nullopt, where(e), {}}, e});
    for (const XMLElement* g : geoms) {
      if (const char* gn = g->Attribute("name")) geom_elements_[gn] = GeomPlace{name, g, active_class};
      auto& collisions = pending_.back().spec.collisions;
      if (auto geom = collision_geom(g, active_class, name, static_cast<int>(collisions.size())))
        collisions.push_back(std::move(*geom));
    }
    pending_inertia_.push_back(body_inertia(inertial, geoms, active_class));

    for (const XMLElement* c : children(e)) {
      const std::string kind = c->Name();
      if (kind == "site") parse_site(c, name, active_class);
      if (kind == "camera") parse_camera(c, name, active_class);
    }
    for (const XMLElement* c : children(e)) {
      const std::string kind = c->Name();
      if (kind == "body")
        parse_body(c, name, active_class, false);
      else if (kind == "frame" || kind == "replicate" || kind == "composite" || kind == "flexcomp" ||
               kind == "attach")
        fail(c, "<" + kind + "> is not supported by the gradyn MJCF loader");
    }
  }

  std::string joint_name(const XMLElement* j, int id) const {
    const char* n = j->Attribute("name");
    return n ? n : "joint" + std::to_string(id);
  }

  // One joint. origin is T(p) in the body frame (the caller prepends the body placement).
  JointSpec parse_joint(const XMLElement* e, int active_class, bool parent_is_world, size_t joints_in_body,
                        const XMLElement* body) {
    const int id = joint_count_++;
    const bool freejoint = std::string(e->Name()) == "freejoint";
    const Attrs a = freejoint ? plain(e) : with_defaults(e, "joint", active_class);
    JointSpec js;
    js.name = joint_name(e, id);
    joint_names_.insert(js.name);
    js.where = where(e);
    const std::string type = freejoint ? "free" : keyword(a, "type", "hinge", {"hinge", "slide", "ball", "free"});
    if (type == "free") {
      if (!parent_is_world) fail(e, "a free joint can only be used in a top-level body (a child of <worldbody>)");
      if (joints_in_body > 1) fail(e, "a free joint must be the only joint of its body '" + where(body).element + "'");
    }
    if (!freejoint) {
      note_joint_attributes(a, e, keyword(a, "type", "hinge", {"hinge", "slide", "ball", "free"}) == "free");
      js.damping = number(a, "damping", 0);
      js.armature = number(a, "armature", 0);
      js.stiffness = number(a, "stiffness", 0);
      js.frictionloss = number(a, "frictionloss", 0);
      const auto sd = numbers(a, "springdamper", {0, 0});
      if (sd[0] != 0 || sd[1] != 0) fail(e, "springdamper is not supported; give stiffness and damping instead");
    }
    auto nonneg = [&](double x, const char* what) {
      if (x < 0) fail(e, std::string(what) + " must be non-negative, got " + std::to_string(x));
    };
    nonneg(js.damping, "damping");
    nonneg(js.armature, "armature");
    nonneg(js.stiffness, "stiffness");
    nonneg(js.frictionloss, "frictionloss");
    if (type == "free") {
      js.type = JointType::Free;
      if (js.stiffness > 0)
        fail(e, "stiffness on a free joint is not supported (set stiffness=\"0\" on it, or use <freejoint/>, "
                "which takes no defaults)");
      return js;
    }

    if (a.has("actuatorfrcrange") && keyword(a, "actuatorfrclimited", "auto", {"true", "false", "auto"}) != "false")
      warn("actuatorfrcrange", e, "actuatorfrcrange on joint '" + js.name + "'",
           "is not simulated by gradyn: the total actuator force on the joint is not clamped (each actuator's own "
           "forcerange is)");
    const Vec3 p = vec3(a, "pos", Vec3::Zero());
    const Vec3 axis = vec3(a, "axis", Vec3(0, 0, 1));
    if (type == "ball") {
      js.type = JointType::Spherical;
      js.origin = Pose<double>(Mat3::Identity(), p);
      js.child_offset = Pose<double>(Mat3::Identity(), -p);
      return js;
    }
    if (axis.norm() < 1e-12) fail(e, "joint axis must not be zero");
    js.axis = axis.normalized();
    const bool hinge = type == "hinge";
    const double unit = hinge && compiler_.degrees ? kPi / 180.0 : 1.0;
    js.reference = number(a, "ref", 0) * unit;
    js.rest = number(a, "springref", 0) * unit;

    const auto range = limited_range(a, e, "joint");
    const bool is_limited = range.has_value();
    if (range) {
      js.lower = range->first * unit;
      js.upper = range->second * unit;
    }
    js.type = hinge ? (is_limited ? JointType::Revolute : JointType::Continuous) : JointType::Prismatic;
    js.origin = Pose<double>(Mat3::Identity(), p);
    if (hinge)
      js.child_offset = Pose<double>(axis_angle_to_matrix<double>(js.axis, -js.reference), Vec3::Zero()) *
                        Pose<double>(Mat3::Identity(), -p);
    else
      js.child_offset = Pose<double>(Mat3::Identity(), -js.axis * js.reference - p);
    return js;
  }

  // ---- sites and sensors ----------------------------------------------------------------------------

  // A named <site> becomes a frame (kind Site) of its body's link, named like the site; its shape and
  // size are kept for touch sensors. Unnamed sites cannot be read by a sensor and are skipped.
  struct SiteInfo {
    ZoneShape shape = ZoneShape::Sphere;
    Vec3 size = Vec3::Constant(0.005);
  };

  void parse_site(const XMLElement* e, const std::string& link, int active_class) {
    const Attrs a = with_defaults(e, "site", active_class);
    const char* n = e->Attribute("name");
    if (!n) return;
    if (sites_.count(n)) fail(e, std::string("site '") + n + "' is defined twice");
    SiteInfo info;
    const std::string type = keyword(a, "type", "sphere", {"sphere", "capsule", "ellipsoid", "cylinder", "box"});
    info.shape = type == "capsule"     ? ZoneShape::Capsule
                 : type == "ellipsoid" ? ZoneShape::Ellipsoid
                 : type == "cylinder"  ? ZoneShape::Cylinder
                 : type == "box"       ? ZoneShape::Box
                                       : ZoneShape::Sphere;
    auto size = numbers(a, "size", {0.005, 0.005, 0.005}, /*exact=*/false);
    for (size_t k = size.size(); k < 3; ++k) size.push_back(0.005);
    Vec3 pos;
    Quat quat;
    if (a.has("fromto")) {
      const auto f = numbers(a, "fromto", {0, 0, 0, 0, 0, 0});
      const Vec3 from(f[0], f[1], f[2]), to(f[3], f[4], f[5]);
      const Vec3 dir = to - from;
      if (dir.norm() < 1e-10) fail(e, "fromto points are too close together");
      if (type == "sphere") fail(e, "fromto cannot be used with a sphere site");
      pos = (from + to) / 2;
      quat = z_to_quat(-dir);  // MuJoCo: z from "to" towards "from"
      if (type == "capsule" || type == "cylinder") {
        size[1] = dir.norm() / 2;
      } else {
        size[1] = size[0];
        size[2] = dir.norm() / 2;
      }
    } else {
      pos = vec3(a, "pos", Vec3::Zero());
      quat = orientation(a);
    }
    for (double x : size)
      if (!(x >= 0)) fail(e, "site size must be non-negative");
    info.size = Vec3(size[0], size[1], size[2]);
    sites_[n] = info;
    result_.builder.add_site(SiteSpec{n, FrameKind::Site, link, Pose<double>(quat.toRotationMatrix(), pos), where(e)});
  }

  void parse_camera(const XMLElement* e, const std::string& link, int active_class) {
    const Attrs a = with_defaults(e, "camera", active_class);
    const char* n = e->Attribute("name");
    const std::string name = n ? std::string(n) : "camera" + std::to_string(cameras_);
    ++cameras_;
    // What the renderer does not reproduce is said when the camera is used (gradyn.Camera.named),
    // not here: a camera is drawing, and most MuJoCo models carry a tracking camera.
    std::string unsupported;
    const std::string mode = keyword(a, "mode", "fixed", {"fixed", "track", "trackcom", "targetbody", "targetbodycom"});
    if (mode != "fixed") unsupported = "mode=\"" + mode + "\" (gradyn keeps the camera fixed to its body)";
    for (const char* attr : {"focal", "focalpixel", "principal", "principalpixel", "sensorsize", "resolution", "ipd",
                             "orthographic"})
      if (a.has(attr))
        unsupported += std::string(unsupported.empty() ? "" : ", ") + attr +
                       " (gradyn's pinhole camera: square pixels, the principal point at the image centre, fovy)";
    const double fovy = number(a, "fovy", 45.0);
    if (!(fovy > 0.0 && fovy < 180.0)) fail(e, "fovy must be in (0, 180) degrees, got " + std::to_string(fovy));
    const Quat quat = orientation(a);
    result_.builder.add_camera(name, link, Pose<double>(quat.toRotationMatrix(), vec3(a, "pos", Vec3::Zero())), fovy,
                               where(e), unsupported);  // a repeated name: a ModelError at this element
  }

  // <sensor>: jointpos, jointvel, framepos, framequat, framelinvel, frameangvel (objtype site, xbody
  // or geom; reftype likewise), gyro, accelerometer and touch (site) are computed (sensors/sensors.hpp);
  // every other sensor, and frame sensors on other objects, warn once per load and are skipped.
  // noise is kept (not applied, as in MuJoCo), cutoff clamps as in MuJoCo. A sensor that names what
  // does not exist is a ModelError naming its element.
  void parse_sensors(const XMLElement* section) {
    static const std::map<std::string, SensorKind> kinds = {
        {"jointpos", SensorKind::JointPos},       {"jointvel", SensorKind::JointVel},
        {"framepos", SensorKind::FramePos},       {"framequat", SensorKind::FrameQuat},
        {"framelinvel", SensorKind::FrameLinVel}, {"frameangvel", SensorKind::FrameAngVel},
        {"gyro", SensorKind::Gyro},               {"accelerometer", SensorKind::Accelerometer},
        {"touch", SensorKind::Touch}};
    for (const XMLElement* c : children(section)) {
      const std::string type = c->Name();
      auto it = kinds.find(type);
      if (it == kinds.end()) {
        warn("sensor", c, "<sensor><" + type + ">",
             "is not computed by gradyn, which reads jointpos, jointvel, framepos, framequat, framelinvel, "
             "frameangvel, gyro, accelerometer and touch; it has no entry in gradyn.sensors");
        continue;
      }
      const Attrs a = plain(c);
      SensorSpec spec;
      spec.kind = it->second;
      if (const char* n = c->Attribute("name")) spec.name = n;
      spec.noise = number(a, "noise", 0);
      spec.cutoff = number(a, "cutoff", 0);
      if (spec.noise < 0 || spec.cutoff < 0) fail(c, "noise and cutoff must be non-negative");
      spec.where = where(c);
      auto required = [&](const char* attr) {
        const char* x = c->Attribute(attr);
        if (!x) fail(c, "<" + type + "> needs a '" + attr + "' attribute");
        return std::string(x);
      };
      switch (spec.kind) {
        case SensorKind::JointPos:
        case SensorKind::JointVel:
          spec.object = required("joint");
          if (!joint_names_.count(spec.object)) fail(c, "unknown joint '" + spec.object + "'");
          break;
        case SensorKind::Gyro:
        case SensorKind::Accelerometer:
        case SensorKind::Touch: {
          spec.object = required("site");
          auto s = sites_.find(spec.object);
          if (s == sites_.end()) fail(c, "unknown site '" + spec.object + "'");
          spec.object_kind = FrameKind::Site;
          spec.zone = s->second.shape;
          spec.zone_size = s->second.size;
          break;
        }
        default: {
          const std::string objtype = required("objtype"), objname = required("objname");
          if (!frame_object(c, "objtype", objtype, objname, spec.object_kind)) continue;
          spec.object = objname;
          const char* reftype = c->Attribute("reftype");
          const char* refname = c->Attribute("refname");
          if ((reftype == nullptr) != (refname == nullptr)) fail(c, "reftype and refname go together");
          if (reftype) {
            if (!frame_object(c, "reftype", reftype, refname, spec.reference_kind)) continue;
            spec.reference = refname;
          }
        }
      }
      result_.builder.add_sensor(std::move(spec));
    }
  }

  // The frame a frame sensor's objtype/objname (or reftype/refname) names: a site, an MJCF body's
  // frame (xbody: the link named after the body) or a primitive geom's frame (added as a frame of kind
  // Geom, named like the geom, the first time a sensor reads it). "body" (MuJoCo: the body's inertial
  // frame), "camera" and mesh geoms are not read: the sensor warns and is skipped (false).
  bool frame_object(const XMLElement* c, const char* attr, const std::string& type, const std::string& name,
                    FrameKind& kind) {
    if (type == "site") {
      if (!sites_.count(name)) fail(c, "unknown site '" + name + "'");
      kind = FrameKind::Site;
      return true;
    }
    if (type == "xbody") {
      if (name != "world" && !body_names_.count(name)) fail(c, "unknown body '" + name + "'");
      kind = FrameKind::Link;
      return true;
    }
    if (type == "geom") {
      auto g = geom_elements_.find(name);
      if (g == geom_elements_.end()) fail(c, "unknown geom '" + name + "'");
      const Attrs a = with_defaults(g->second.element, "geom", g->second.active_class);
      const std::string gtype = a.has("type") ? *a.raw("type") : "sphere";
      if (gtype == "mesh" || gtype == "sdf" || gtype == "hfield") {
        // MuJoCo moves a mesh geom's frame to the mesh's centroid and principal axes
        warn("sensor frame", c, std::string("<") + c->Name() + " " + attr + "=\"geom\"> on " + gtype + " geom '" +
                                    name + "'",
             "is not computed by gradyn, whose frame sensors read sites, bodies' frames and the frames of "
             "primitive geoms; it has no entry in gradyn.sensors");
        return false;
      }
      if (!geom_frames_.count(name)) {
        Vec3 pos;
        Quat quat;
        if (a.has("fromto") && gtype != "sphere" && gtype != "plane") {
          const auto f = numbers(a, "fromto", {0, 0, 0, 0, 0, 0});
          const Vec3 from(f[0], f[1], f[2]), to(f[3], f[4], f[5]);
          pos = (from + to) / 2;
          quat = z_to_quat(from - to);  // MuJoCo: z from "to" towards "from"
        } else {
          pos = vec3(a, "pos", Vec3::Zero());
          quat = orientation(a);
        }
        result_.builder.add_site(SiteSpec{name, FrameKind::Geom, g->second.link, Pose<double>(quat.toRotationMatrix(), pos),
                                          where(g->second.element)});
        geom_frames_.insert(name);
      }
      kind = FrameKind::Geom;
      return true;
    }
    if (type == "body" || type == "camera") {
      warn("sensor frame", c, std::string("<") + c->Name() + " " + attr + "=\"" + type + "\">",
           "is not computed by gradyn, whose frame sensors read sites, bodies' frames and geoms (objtype \"site\", "
           "\"xbody\" or \"geom\"); it has no entry in gradyn.sensors");
      return false;
    }
    fail(c, std::string(attr) + " must be one of 'site', 'xbody', 'body', 'geom', 'camera', got '" + type + "'");
  }

  // ---- collision geometry ---------------------------------------------------------------------------

  // A <geom> as collision geometry in its body's frame, or nothing (with a warning) for the types
  // gradyn does not collide (ellipsoid, hfield, sdf). Meshes: the convex hull of the mesh asset,
  // scale 1 (the asset's scale is in its vertices), size ignored as MuJoCo does. Sizes follow MuJoCo: sphere radius;
  // capsule and cylinder radius, half-length; box half-extents; planes are infinite (size is only
  // for drawing). fromto sets position, orientation and the half-length (box, ellipsoid: square
  // section of half-width size[0]). friction: the first (sliding) component; restitution: 0
  // (MuJoCo has none: it uses solref).
  std::optional<GeomSpec> collision_geom(const XMLElement* e, int active_class, const std::string& body, int index) {
    const Attrs a = with_defaults(e, "geom", active_class);
    const std::string type =
        keyword(a, "type", "sphere", {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf"});
    GeomSpec g;
    const char* n = e->Attribute("name");
    g.name = n ? n : body + "/geom" + std::to_string(index);
    g.where = where(e);
    if (number(a, "contype", 1) != 0 || number(a, "conaffinity", 1) != 0) {  // it collides: how matters
      const double condim = number(a, "condim", 3);
      if (condim != 3)
        warn("condim", e, "geom condim=\"" + *a.raw("condim") + "\"",
             "is not simulated by gradyn, whose contacts have normal and sliding friction (condim 3): condim 1 "
             "(frictionless) gets friction, and torsional or rolling friction (4, 6) is left out");
      note_softness(a, e, "geom", {"solref", "solimp", "solmix", "priority", "margin", "gap"});
    }
    if (type == "ellipsoid" || type == "hfield" || type == "sdf") {
      warn("geom type " + type, e, type + " geom '" + g.name + "'",
           "is not collision geometry in gradyn yet, and is skipped (its mass still counts)");
      return std::nullopt;
    }
    if (type == "mesh") {
      g.type = GeomType::ConvexHull;
      g.hull = geom_mesh(a);
      if (a.has("fromto")) fail(e, "fromto cannot be used with a mesh geom");
      g.placement = Pose<double>(orientation(a).toRotationMatrix(), vec3(a, "pos", Vec3::Zero()));
      g.size = Vec3::Ones();
      g.friction = numbers(a, "friction", {1, 0.005, 0.0001}, /*exact=*/false)[0];
      g.restitution = 0;
      set_collision_filter(a, g);
      check_geom(g, g.where);
      return g;
    }
    g.type = type == "plane"     ? GeomType::Plane
             : type == "sphere"  ? GeomType::Sphere
             : type == "capsule" ? GeomType::Capsule
             : type == "box"     ? GeomType::Box
                                 : GeomType::Cylinder;
    auto size = numbers(a, "size", {0, 0, 0}, /*exact=*/false);
    if (a.has("fromto") && g.type != GeomType::Plane) {
      if (g.type == GeomType::Sphere) fail(e, "fromto cannot be used with a sphere");
      const auto f = numbers(a, "fromto", {0, 0, 0, 0, 0, 0});
      const Vec3 from(f[0], f[1], f[2]), to(f[3], f[4], f[5]);
      const Vec3 dir = to - from;
      if (dir.norm() < 1e-10) fail(e, "fromto points are too close together");
      g.placement = Pose<double>(z_to_quat(dir).toRotationMatrix(), (from + to) / 2);
      if (g.type == GeomType::Box) {
        size[1] = size[0];
        size[2] = dir.norm() / 2;
      } else {
        size[1] = dir.norm() / 2;
      }
    } else {
      g.placement = Pose<double>(orientation(a).toRotationMatrix(), vec3(a, "pos", Vec3::Zero()));
    }
    if (g.type == GeomType::Plane) size.assign(3, 0.0);
    if (g.type == GeomType::Sphere) size[1] = size[2] = 0;
    if (g.type == GeomType::Capsule || g.type == GeomType::Cylinder) size[2] = 0;
    g.size = Vec3(size[0], size[1], size[2]);
    g.friction = numbers(a, "friction", {1, 0.005, 0.0001}, /*exact=*/false)[0];
    g.restitution = 0;
    set_collision_filter(a, g);
    check_geom(g, g.where);
    return g;
  }

  // A value that must be a whole number from lo to hi (collision bit masks, geom groups): checked
  // before it is converted to an integer type (a value out of that type's range is undefined).
  double whole_number(const XMLElement* e, const char* name, double v, double lo, double hi) const {
    if (!(v >= lo && v <= hi) || v != std::floor(v)) {
      std::ostringstream s;
      s << "attribute '" << name << "' must be a whole number from " << std::fixed << std::setprecision(0) << lo
        << " to " << hi << ", got " << std::defaultfloat << std::setprecision(10) << v;
      fail(e, s.str());
    }
    return v;
  }

  void set_collision_filter(const Attrs& a, GeomSpec& g) const {
    // 32-bit masks, as MuJoCo's
    g.contype = static_cast<std::uint32_t>(whole_number(a.element, "contype", number(a, "contype", 1), 0, 4294967295.0));
    g.conaffinity =
        static_cast<std::uint32_t>(whole_number(a.element, "conaffinity", number(a, "conaffinity", 1), 0, 4294967295.0));
  }

  // ---- actuators -------------------------------------------------------------------------------------

  static bool is_actuator_kind(const std::string& kind) {
    for (const char* k : {"general", "motor", "position", "velocity", "damper", "intvelocity", "cylinder", "muscle",
                          "adhesion", "plugin"})
      if (kind == k) return true;
    return false;
  }

  // A joint's or tendon's range with MuJoCo's limited="auto" rule (autolimits); nullopt when unlimited.
  std::optional<std::pair<double, double>> limited_range(const Attrs& a, const XMLElement* e, const std::string& kind) const {
    const std::string limited = keyword(a, "limited", "auto", {"true", "false", "auto"});
    const bool has_range = a.has("range");
    bool is_limited = limited == "true";
    if (limited == "auto") {
      if (has_range && !compiler_.autolimits)
        fail(e, kind + " has 'range' but not 'limited'; set limited, or <compiler autolimits=\"true\">");
      is_limited = has_range;
    }
    if (!is_limited) return std::nullopt;
    const auto r = numbers(a, "range", {0, 0});
    if (!(r[0] < r[1])) fail(e, "range[0] must be smaller than range[1] in a limited " + kind);
    return std::pair{r[0], r[1]};
  }

  // A limited range attribute ("ctrl" or "force") with MuJoCo's limited="auto" rule; nullopt when
  // unlimited.
  std::optional<std::pair<double, double>> actuator_range(const Attrs& a, const std::string& what) const {
    const std::string limited_name = what + "limited", range_name = what + "range";
    const std::string limited = keyword(a, limited_name.c_str(), "auto", {"true", "false", "auto"});
    const bool has_range = a.has(range_name.c_str());
    bool is_limited = limited == "true";
    if (limited == "auto") {
      if (has_range && !compiler_.autolimits)
        fail(a.element, "actuator has '" + range_name + "' but not '" + limited_name +
                            "'; set it, or <compiler autolimits=\"true\">");
      is_limited = has_range;
    }
    if (!is_limited) return std::nullopt;
    const auto r = numbers(a, range_name.c_str(), {0, 0});
    if (!(r[0] < r[1])) fail(a.element, range_name + "[0] must be smaller than " + range_name + "[1] when limited");
    return std::pair{r[0], r[1]};
  }

  // <actuator>: motor, position, velocity, damper and general (no activation dynamics) on joints.
  void parse_actuators(const XMLElement* e) {
    for (const XMLElement* c : children(e)) {
      const std::string kind = c->Name();
      const Attrs a = with_defaults(c, "actuator", 0);
      const std::string label = "<" + kind + (c->Attribute("name") ? std::string(" name='") + c->Attribute("name") + "'" : "") + ">";
      if (kind == "intvelocity" || kind == "cylinder" || kind == "muscle" || kind == "adhesion" || kind == "plugin" ||
          !is_actuator_kind(kind)) {
        warn("actuator kind", c, "actuator " + label,
             "is not simulated by gradyn (it has activation dynamics, or acts through a body or a plugin) and is "
             "skipped: the model has no control for it");
        continue;
      }
      const char* joint = c->Attribute("joint");
      if (!joint) {
        const char* other = nullptr;
        for (const char* t : {"jointinparent", "tendon", "site", "body", "cranksite"})
          if (c->Attribute(t)) other = t;
        if (other) {
          warn(std::string("actuator through ") + other, c, std::string("actuator ") + label,
               std::string("acts through its ") + other +
                   "; gradyn actuates joints only, and skips it: the model has no control for it");
          continue;
        }
        fail(c, "actuator " + label + " names no joint (give joint=\"...\")");
      }
      if (const JointSpec* j = pending_joint(joint); j && j->type != JointType::Revolute &&
                                                      j->type != JointType::Continuous && j->type != JointType::Prismatic) {
        warn(std::string("actuator on joint ") + joint, c, "actuator " + label,
             "drives the " + std::string(joint_type_name(j->type)) + " joint '" + joint +
                 "'; gradyn actuates hinge and slide joints only, and skips it: the model has no control for it");
        continue;
      }
      ActuatorSpec spec;
      if (const char* n = c->Attribute("name")) spec.name = n;
      spec.joint = joint;
      spec.where = where(c);
      const auto gear = numbers(a, "gear", {1, 0, 0, 0, 0, 0}, /*exact=*/false);
      spec.gear = gear[0];
      spec.ctrl_range = actuator_range(a, "ctrl");
      spec.force_range = actuator_range(a, "force");
      if (kind == "motor") {
        spec.kind = ActuatorKind::Motor;
      } else if (kind == "position") {
        spec.kind = ActuatorKind::Position;
        spec.kp = number(a, "kp", 1);
        spec.kv = number(a, "kv", 0);
        if (spec.kp < 0 || spec.kv < 0) fail(c, "kp and kv must be non-negative");
        if (number(a, "dampratio", 0) != 0)
          warn("dampratio", c, "dampratio of actuator " + label,
               "is not supported by gradyn and is ignored (give kv instead)");
        if (number(a, "timeconst", 0) > 0) {
          warn("timeconst", c, "actuator " + label + " (with a timeconst: activation dynamics)",
               "is not simulated by gradyn, and is skipped: the model has no control for it");
          continue;
        }
        const double inherit = number(a, "inheritrange", 0);
        if (inherit > 0) spec.ctrl_range = inherited_range(c, joint, inherit);
      } else if (kind == "velocity") {
        spec.kind = ActuatorKind::Velocity;
        spec.kv = number(a, "kv", 1);
        if (spec.kv < 0) fail(c, "kv must be non-negative");
      } else if (kind == "damper") {
        const double kv = number(a, "kv", 1);
        if (kv < 0) fail(c, "kv must be non-negative");
        if (!spec.ctrl_range || spec.ctrl_range->first < 0)
          fail(c, "a damper needs a non-negative ctrlrange (its control scales the damping)");
        spec.kind = ActuatorKind::General;
        spec.gain = Vec3(0, 0, -kv);
        spec.bias.setZero();
      } else {  // general
        const std::string dyntype = keyword(a, "dyntype", "none", {"none", "integrator", "filter", "filterexact", "muscle", "user"});
        const std::string gaintype = keyword(a, "gaintype", "fixed", {"fixed", "affine", "muscle", "user"});
        const std::string biastype = keyword(a, "biastype", "none", {"none", "affine", "muscle", "user"});
        if (dyntype != "none" || (gaintype != "fixed" && gaintype != "affine") ||
            (biastype != "none" && biastype != "affine")) {
          warn("general actuator", c,
               "actuator " + label + " (dyntype '" + dyntype + "', gaintype '" + gaintype + "', biastype '" + biastype +
                   "')",
               "is not simulated by gradyn, which has the affine gain and bias without activation dynamics; it is "
               "skipped: the model has no control for it");
          continue;
        }
        const auto g = numbers(a, "gainprm", {1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, /*exact=*/false);
        const auto b = numbers(a, "biasprm", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, /*exact=*/false);
        spec.kind = ActuatorKind::General;
        spec.gain = gaintype == "fixed" ? Vec3(g[0], 0, 0) : Vec3(g[0], g[1], g[2]);
        spec.bias = biastype == "none" ? Vec3::Zero() : Vec3(b[0], b[1], b[2]);
      }
      result_.builder.add_actuator(std::move(spec));
    }
  }

  const JointSpec* pending_joint(const std::string& name) const {
    for (const JointSpec& j : pending_joints_)
      if (j.name == name) return &j;
    return nullptr;
  }

  // Position actuators' inheritrange: the joint's range, about its middle, scaled.
  std::pair<double, double> inherited_range(const XMLElement* c, const std::string& joint, double scale) const {
    for (const JointSpec& j : pending_joints_)
      if (j.name == joint) {
        if (!std::isfinite(j.lower) || !std::isfinite(j.upper))
          fail(c, "inheritrange needs a limited joint, and joint '" + joint + "' has no range");
        const double mid = 0.5 * (j.lower + j.upper), half = 0.5 * (j.upper - j.lower) * scale;
        return {mid - half, mid + half};
      }
    fail(c, "actuator joint '" + joint + "' is not a joint of the model");
  }

  // <contact>: <exclude body1 body2/> becomes an excluded body pair; <pair> is not supported.
  // <equality>: <joint> couplings become model.joint_couplings, <connect> (body1 body2 anchor, or
  // site1 site2) and <weld> (parse_weld) model.body_connections (stiff: MuJoCo's solref and solimp
  // softness warns); <tendon>, <flex> and inactive equalities (active="false") warn and are skipped.
  // <tendon>: fixed tendons become model.tendons; spatial ones (paths through sites and around geoms)
  // warn and are skipped.
  void parse_tendons(const XMLElement* section) {
    for (const XMLElement* c : children(section)) {
      const std::string kind = c->Name();
      const std::string label = "<tendon><" + kind + (c->Attribute("name") ? std::string(" name='") + c->Attribute("name") + "'" : "") + ">";
      if (kind != "fixed") {
        warn("tendon " + kind, c, label,
             kind == "spatial" ? "is not simulated by gradyn (spatial tendons, through sites and around geoms, are "
                                 "not supported; fixed ones are): the model moves without it, unlike in MuJoCo"
                               : "is not an element of MJCF's <tendon> that gradyn reads, and is ignored");
        continue;
      }
      const Attrs a = with_defaults(c, "tendon", 0);
      TendonSpec spec;
      spec.name = c->Attribute("name") ? c->Attribute("name") : "";
      spec.where = where(c);
      for (const XMLElement* j : children(c)) {
        if (std::string(j->Name()) != "joint") {
          warn("tendon element", j, "<fixed><" + std::string(j->Name()) + ">",
               "is not an element of a fixed tendon (only <joint joint coef>), and is ignored");
          continue;
        }
        const char* joint = j->Attribute("joint");
        if (!joint) fail(j, label + " <joint> needs 'joint' (the name of a hinge or slide joint)");
        if (!j->Attribute("coef")) fail(j, label + " <joint joint='" + std::string(joint) + "'> needs 'coef'");
        spec.joints.push_back(joint);
        spec.coefs.push_back(number(Attrs{j, {}}, "coef", 0));
      }
      if (spec.joints.empty()) fail(c, label + " lists no <joint>; a fixed tendon needs at least one");
      // tendon lengths are not angles: the range is read as written (no degrees)
      if (const auto range = limited_range(a, c, "tendon")) {
        spec.lower = range->first;
        spec.upper = range->second;
        note_softness(a, c, "tendon", {"solreflimit", "solimplimit", "margin"});
      }
      spec.stiffness = number(a, "stiffness", 0);
      spec.damping = number(a, "damping", 0);
      if (const auto text = a.raw("springlength")) {
        const std::vector<double> L = parse_numbers(c, "springlength", *text);
        if (L.empty() || L.size() > 2) fail(c, "attribute 'springlength' expects 1 or 2 numbers, got '" + *text + "'");
        const double lo = L[0], hi = L.back();  // one value: both ends
        if (lo > hi) fail(c, "springlength: expected lower <= upper, got " + std::to_string(lo) + " " + std::to_string(hi));
        if (!(lo == -1 && hi == -1)) {  // -1 -1: MuJoCo's default, the length at the springs' rest
          spec.spring_length = lo;
          if (hi != lo)
            warn("tendon springlength dead band", c, label + " springlength=\"" + *text + "\"",
                 "is a dead band in MuJoCo (no spring force between the two lengths); gradyn's spring pulls "
                 "towards the first one");
        }
      }
      if (number(a, "frictionloss", 0) != 0)
        warn("tendon frictionloss", c, label + " frictionloss",
             "(dry friction along the tendon) is not simulated by gradyn; joint frictionloss is");
      if (number(a, "armature", 0) != 0)
        warn("tendon armature", c, label + " armature", "(inertia along the tendon) is not simulated by gradyn");
      result_.builder.add_tendon(std::move(spec));
    }
  }

  void parse_equality(const XMLElement* section) {
    for (const XMLElement* c : children(section)) {
      const std::string kind = c->Name();
      if (kind != "joint" && kind != "tendon" && kind != "connect" && kind != "weld") {
        warn("equality", c, "<equality><" + kind + ">",
             "is not simulated by gradyn (flex equalities are not constraints yet): the model moves "
             "without it, unlike in MuJoCo");
        continue;
      }
      const Attrs a = with_defaults(c, "equality", 0);
      if (keyword(a, "active", "true", {"true", "false"}) == "false") {
        warn("inactive equality", c, "<equality><" + kind + " active=\"false\">",
             "starts inactive in MuJoCo; gradyn cannot switch constraints on, so it is skipped");
        continue;
      }
      note_softness(a, c, "equality", {"solref", "solimp"});
      const std::string name = c->Attribute("name") ? c->Attribute("name") : "";
      if (kind == "connect")
        parse_connect(c, a, name);
      else if (kind == "weld")
        parse_weld(c, a, name);
      else
        parse_joint_equality(c, a, name, /*tendons=*/kind == "tendon");
    }
  }

  void parse_connect(const XMLElement* c, const Attrs& a, const std::string& name) {
    ConnectionSpec spec;
    spec.name = name;
    const char* b1 = c->Attribute("body1");
    const char* s1 = c->Attribute("site1");
    if (b1 && s1) fail(c, "<connect> takes body1 (with anchor) or site1 (with site2), not both");
    if (b1) {
      spec.frame1 = b1;
      if (const char* b2 = c->Attribute("body2")) spec.frame2 = b2;
      if (!c->Attribute("anchor")) fail(c, "<connect body1> needs 'anchor' (a point in body1's frame)");
      spec.anchor1 = vec3(a, "anchor", Vec3::Zero());
    } else if (s1) {
      const char* s2 = c->Attribute("site2");
      if (!s2) fail(c, "<connect site1> needs 'site2'");
      spec.frame1 = s1;
      spec.frame2 = s2;
      spec.anchor1 = spec.anchor2 = Vec3::Zero();  // the two sites' origins meet
    } else {
      fail(c, "<connect> needs 'body1' and 'anchor', or 'site1' and 'site2'");
    }
    spec.where = where(c);
    result_.builder.add_connection(std::move(spec));
  }

  // <weld body1 body2 anchor relpose torquescale> (MuJoCo's rule: anchor, in body2's frame, meets
  // relpose's pos, in body1's frame, and body2's orientation in body1's is relpose's quat; a zero
  // quat, the default, takes both from qpos0), or <weld site1 site2> (the sites' frames coincide).
  // torquescale 0 holds no orientation (a connect); other values weigh MuJoCo's soft rows only.
  void parse_weld(const XMLElement* c, const Attrs& a, const std::string& name) {
    ConnectionSpec spec;
    spec.name = name;
    spec.weld = true;
    spec.where = where(c);
    const double torquescale = number(a, "torquescale", 1);
    if (!(torquescale >= 0)) fail(c, "torquescale must be non-negative");
    if (torquescale == 0)
      spec.weld = false;
    else if (torquescale != 1)
      warn("weld torquescale", c, "torquescale of <weld" + (name.empty() ? std::string() : " name='" + name + "'") + ">",
           "weighs the orientation rows of MuJoCo's soft weld; gradyn's weld is stiff and holds the orientation fully");
    const char* b1 = c->Attribute("body1");
    const char* s1 = c->Attribute("site1");
    if (b1 && s1) fail(c, "<weld> takes body1 (with body2, anchor, relpose) or site1 (with site2), not both");
    if (s1) {
      const char* s2 = c->Attribute("site2");
      if (!s2) fail(c, "<weld site1> needs 'site2'");
      spec.frame1 = s1;
      spec.frame2 = s2;
      spec.anchor1 = spec.anchor2 = Vec3::Zero();
      if (spec.weld) spec.rotation = Mat3::Identity();
      result_.builder.add_connection(std::move(spec));
      return;
    }
    if (!b1) fail(c, "<weld> needs 'body1' (and optionally body2, anchor, relpose), or 'site1' and 'site2'");
    const char* b2 = c->Attribute("body2");
    const auto is_world = [](const char* b) { return !b || std::string(b) == "world"; };
    spec.anchor2 = vec3(a, "anchor", Vec3::Zero());
    const std::vector<double> relpose = numbers(a, "relpose", {0, 1, 0, 0, 0, 0, 0});
    const Quat rel(relpose[3], relpose[4], relpose[5], relpose[6]);
    const bool given = rel.coeffs().norm() > 0;
    if (given) {
      spec.anchor1 = Vec3(relpose[0], relpose[1], relpose[2]);
      if (spec.weld) spec.rotation = rel.normalized().toRotationMatrix();
    }
    if (!is_world(b1)) {
      spec.frame1 = b1;
      if (!is_world(b2)) spec.frame2 = b2;
    } else {  // body1 is the world: body2 is the moving one, the roles swap
      if (is_world(b2)) fail(c, "<weld> welds the world to itself: name a moving body as body1 or body2");
      spec.frame1 = b2;
      std::swap(spec.anchor1, spec.anchor2);
      if (spec.rotation) spec.rotation = Mat3(spec.rotation->transpose());
    }
    result_.builder.add_connection(std::move(spec));
  }

  // <equality><joint joint1 joint2 polycoef>, or <equality><tendon tendon1 tendon2 polycoef> (tendons:
  // the same polynomial on the two fixed tendons' lengths, from their lengths at qpos0).
  void parse_joint_equality(const XMLElement* c, const Attrs& a, const std::string& name, bool tendons = false) {
    JointCouplingSpec spec;
    spec.name = name;
    spec.tendons = tendons;
    const char* first = tendons ? "tendon1" : "joint1";
    const char* j1 = c->Attribute(first);
    if (!j1) fail(c, std::string("<equality><") + (tendons ? "tendon" : "joint") + "> needs '" + first + "'");
    spec.joint1 = j1;
    if (const char* j2 = c->Attribute(tendons ? "tendon2" : "joint2")) spec.joint2 = j2;
    const std::vector<double> coef = numbers(a, "polycoef", {0, 1, 0, 0, 0}, /*exact=*/false);
    for (size_t k = 0; k < 5; ++k) spec.polycoef[k] = coef[k];
    spec.where = where(c);
    result_.builder.add_joint_coupling(std::move(spec));
  }

  void parse_contact(const XMLElement* e) {
    for (const XMLElement* c : children(e)) {
      const std::string kind = c->Name();
      if (kind == "exclude") {
        const char* b1 = c->Attribute("body1");
        const char* b2 = c->Attribute("body2");
        if (!b1 || !b2) fail(c, "<exclude> needs 'body1' and 'body2'");
        result_.builder.exclude_collision(b1, b2, where(c));
      } else {
        warn("contact " + kind, c, "<contact><" + kind + ">",
             "is not supported by gradyn and is ignored (gradyn collides geoms by contype and conaffinity)");
      }
    }
  }

  // ---- inertia ------------------------------------------------------------------------------------

  struct MassSpec {
    double mass = 0;
    Vec3 com = Vec3::Zero();
    Mat3 inertia = Mat3::Zero();  // about the com, in the body frame
    SourceLocation where = {};    // the <inertial> it was written in; empty: computed from geoms
  };

  std::optional<MassSpec> explicit_inertial(const XMLElement* e) const {
    const Attrs a = plain(e);
    if (!e->Attribute("mass")) fail(e, "<inertial> needs a 'mass'");
    if (!e->Attribute("pos")) fail(e, "<inertial> needs a 'pos'");
    MassSpec m;
    m.mass = number(a, "mass", 0);
    if (m.mass < 0) fail(e, "mass must be non-negative, got " + std::to_string(m.mass));
    m.com = vec3(a, "pos", Vec3::Zero());
    const bool diag = e->Attribute("diaginertia"), full = e->Attribute("fullinertia");
    if (diag == full) fail(e, "<inertial> needs exactly one of 'diaginertia' and 'fullinertia'");
    if (diag) {
      // A tensor no rigid body has (a negative moment, A + B < C) is refused, repaired or accepted by
      // ModelBuilder::add_link, as LoadOptions::inertia and balanceinertia say (MassSpec::where).
      const Vec3 d = vec3(a, "diaginertia", Vec3::Zero());
      const Mat3 R = orientation(a).toRotationMatrix();
      m.inertia = R * d.asDiagonal() * R.transpose();
    } else {
      for (const char* k : {"quat", "axisangle", "euler", "xyaxes", "zaxis"})
        if (e->Attribute(k)) fail(e, std::string("fullinertia cannot be combined with '") + k + "'");
      const auto f = numbers(a, "fullinertia", {0, 0, 0, 0, 0, 0});
      m.inertia << f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2];
    }
    m.where = where(e);
    return m;
  }

  MassSpec body_inertia(const XMLElement* inertial, const std::vector<const XMLElement*>& geoms,
                        int active_class) {
    using FG = Compiler::FromGeom;
    const FG mode = compiler_.inertia_from_geom;
    if (inertial && mode != FG::True) return *explicit_inertial(inertial);
    if (mode == FG::False) return MassSpec{};
    MassSpec total;
    Vec3 first_moment = Vec3::Zero();
    struct Part {
      double mass;
      Vec3 pos;
      Mat3 inertia;  // about the geom centre, body axes
    };
    std::vector<Part> parts;
    for (const XMLElement* g : geoms) {
      const Attrs a = with_defaults(g, "geom", active_class);
      const int group = static_cast<int>(whole_number(g, "group", number(a, "group", 0), -1e9, 1e9));
      if (group < compiler_.group_min || group > compiler_.group_max) continue;
      auto part = geom_inertia(a);
      if (!part) continue;
      parts.push_back(Part{part->mass, part->com, part->inertia});
      total.mass += part->mass;
      first_moment += part->mass * part->com;
    }
    if (total.mass <= 0) return MassSpec{};
    total.com = first_moment / total.mass;
    for (const Part& p : parts) {
      const Vec3 d = p.pos - total.com;
      total.inertia += p.inertia + p.mass * (d.squaredNorm() * Mat3::Identity() - d * d.transpose());
    }
    return total;
  }

  // Mass, centre and rotational inertia (body axes) of one geom; nullopt when it has no mass.
  std::optional<MassSpec> geom_inertia(const Attrs& a) const {
    const std::string type =
        keyword(a, "type", "sphere", {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf"});
    if (type == "plane" || type == "hfield") return std::nullopt;
    const bool has_mass = a.has("mass");
    const double given_mass = number(a, "mass", 0);
    if (given_mass < 0) fail(a.element, "geom mass must be non-negative, got " + std::to_string(given_mass));
    if (has_mass && given_mass == 0) return std::nullopt;
    const double density = number(a, "density", 1000);
    if (density < 0) fail(a.element, "density must be non-negative");
    if (!has_mass && density == 0) return std::nullopt;
    if (a.has("shellinertia") && keyword(a, "shellinertia", "false", {"true", "false"}) == "true")
      fail(a.element, "shellinertia is not supported");
    if (type == "sdf")
      fail(a.element, "the inertia of sdf geoms is not supported: give the body an <inertial>, or the geom mass=\"0\"");
    if (type == "mesh") {  // the solid convex hull (MuJoCo's inertia for a convex mesh)
      const ConvexHull& hull = *geom_mesh(a);
      const double mass = has_mass ? given_mass : density * hull.volume;
      if (mass <= 0) return std::nullopt;
      const Mat3 R = orientation(a).toRotationMatrix();
      return MassSpec{mass, vec3(a, "pos", Vec3::Zero()) + R * hull.centroid,
                      R * (hull.inertia * (mass / hull.volume)) * R.transpose(), {}};
    }

    auto size = numbers(a, "size", {0, 0, 0}, /*exact=*/false);
    Vec3 pos;
    Quat quat;
    if (a.has("fromto")) {
      if (type == "sphere") fail(a.element, "fromto cannot be used with a sphere");
      const auto f = numbers(a, "fromto", {0, 0, 0, 0, 0, 0});
      const Vec3 from(f[0], f[1], f[2]), to(f[3], f[4], f[5]);
      const Vec3 dir = to - from;
      if (dir.norm() < 1e-10) fail(a.element, "fromto points are too close together");
      pos = (from + to) / 2;
      quat = z_to_quat(dir);
      if (type == "capsule" || type == "cylinder") {
        size[1] = dir.norm() / 2;
      } else {  // box, ellipsoid: square cross-section of half-width size[0]
        size[1] = size[0];
        size[2] = dir.norm() / 2;
      }
    } else {
      pos = vec3(a, "pos", Vec3::Zero());
      quat = orientation(a);
    }

    // Volume and unit-mass principal moments about the geom centre (MuJoCo's formulas).
    const double r = size[0];
    double volume = 0;
    Vec3 moments = Vec3::Zero();  // per unit mass
    if (type == "sphere") {
      volume = 4.0 / 3.0 * kPi * r * r * r;
      moments.setConstant(2.0 / 5.0 * r * r);
    } else if (type == "capsule") {
      const double h = 2 * size[1];
      volume = kPi * r * r * h + 4.0 / 3.0 * kPi * r * r * r;
      const double sphere_part = 4 * r / (4 * r + 3 * h), cylinder_part = 1 - sphere_part;  // mass shares
      const double cross = cylinder_part * (3 * r * r + h * h) / 12 + sphere_part * 2 * r * r / 5 +
                           sphere_part * h * (3 * r + 2 * h) / 8;
      moments = Vec3(cross, cross, cylinder_part * r * r / 2 + sphere_part * 2 * r * r / 5);
    } else if (type == "cylinder") {
      const double h = 2 * size[1];
      volume = kPi * r * r * h;
      const double cross = (3 * r * r + h * h) / 12;
      moments = Vec3(cross, cross, r * r / 2);
    } else if (type == "ellipsoid") {
      volume = 4.0 / 3.0 * kPi * size[0] * size[1] * size[2];
      moments = Vec3(size[1] * size[1] + size[2] * size[2], size[0] * size[0] + size[2] * size[2],
                     size[0] * size[0] + size[1] * size[1]) / 5.0;
    } else {  // box, half-sizes
      volume = 8 * size[0] * size[1] * size[2];
      moments = Vec3(size[1] * size[1] + size[2] * size[2], size[0] * size[0] + size[2] * size[2],
                     size[0] * size[0] + size[1] * size[1]) / 3.0;
    }
    if (volume < 0 || size[0] < 0 || size[1] < 0 || size[2] < 0) fail(a.element, "geom size must be non-negative");
    const double mass = has_mass ? given_mass : density * volume;
    if (mass <= 0) return std::nullopt;
    const Mat3 R = quat.toRotationMatrix();
    return MassSpec{mass, pos, R * (mass * moments).asDiagonal() * R.transpose(), {}};
  }

  // Applies boundmass / boundinertia / settotalmass and attaches each body's inertia to its link.
  void finish_masses() {
    for (MassSpec& m : pending_inertia_) {
      if (compiler_.boundmass > 0 || compiler_.boundinertia > 0) {
        m.mass = std::max(m.mass, compiler_.boundmass);
        Eigen::SelfAdjointEigenSolver<Mat3> eig(m.inertia);
        const Vec3 ev = eig.eigenvalues().cwiseMax(compiler_.boundinertia);
        m.inertia = eig.eigenvectors() * ev.asDiagonal() * eig.eigenvectors().transpose();
      }
    }
    if (compiler_.settotalmass > 0) {
      double total = 0;
      for (const MassSpec& m : pending_inertia_) total += m.mass;
      if (total > 0)
        for (MassSpec& m : pending_inertia_) {
          m.mass *= compiler_.settotalmass / total;
          m.inertia *= compiler_.settotalmass / total;
        }
    }
    for (size_t i = 0; i < body_links_.size(); ++i) {
      const MassSpec& m = pending_inertia_[i];
      PendingLink& link = pending_[body_links_[i]];
      if (m.mass == 0 && m.inertia.isZero()) continue;
      link.spec.inertia = Inertia<double>(m.mass, m.com, m.inertia);
      link.spec.inertia_where = m.where;
    }
  }

  std::vector<std::string>* warnings_ = nullptr;
  InertiaPolicy inertia_policy_ = InertiaPolicy::Strict;
  bool balance_inertia_ = false;  // <compiler balanceinertia="true">
  mutable detail::GroupedWarnings notes_;
  std::map<std::string, std::shared_ptr<const ConvexHull>> meshes_;  // <asset><mesh> by name
  std::map<std::string, SiteInfo> sites_;  // named sites (parse_site)
  int cameras_ = 0;                         // <camera>s read so far (parse_camera)
  std::set<std::string> body_names_, joint_names_;  // what sensors may name
  struct GeomPlace {
    std::string link;
    const XMLElement* element = nullptr;
    int active_class = 0;
  };
  std::map<std::string, GeomPlace> geom_elements_;  // geoms by name, for sensors on their frames
  std::set<std::string> geom_frames_;               // geoms whose frame a sensor made
  std::vector<GeomSpec> world_geoms_;
  std::string main_file_;
  std::vector<std::unique_ptr<XMLDocument>> docs_;
  std::map<const XMLDocument*, std::string> doc_file_;
  std::map<const XMLDocument*, const XMLDocument*> included_from_;  // an included document -> the one including it
  size_t include_count_ = 0;
  int body_depth_ = 0, default_depth_ = 0;
  Compiler compiler_;
  Vec3 gravity_ = Vec3(0, 0, -9.81);
  std::vector<DefaultClass> classes_;
  std::map<std::string, int> class_index_;
  int body_count_ = 0, joint_count_ = 0;
  std::vector<PendingLink> pending_;
  std::vector<size_t> body_links_;
  std::vector<MassSpec> pending_inertia_;
  std::vector<JointSpec> pending_joints_;
  ParseResult result_;
};

}  // namespace

ModelBuilder parse_mjcf(const std::string& path, const LoadOptions& options) {
  if (options.floating_base)
    throw ModelError(SourceLocation{path, 0, ""}, "floating_base must be false for MJCF: free joints are declared in the file");
  return MjcfParser(options).parse_file(path).builder;
}

ModelBuilder parse_mjcf_string(const std::string& xml, const std::string& source_name, const LoadOptions& options) {
  if (options.floating_base)
    throw ModelError(SourceLocation{source_name, 0, ""},
                     "floating_base must be false for MJCF: free joints are declared in the file");
  return MjcfParser(options).parse_string(xml, source_name).builder;
}

Model load_mjcf(const std::string& path, const LoadOptions& options) {
  if (options.floating_base)
    throw ModelError(SourceLocation{path, 0, ""}, "floating_base must be false for MJCF: free joints are declared in the file");
  return MjcfParser(options).parse_file(path).builder.build();
}

}  // namespace gradyn
