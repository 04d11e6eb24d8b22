// serialize_model / deserialize_model: the byte format of model/serialize.hpp, written and read
// field by field in one fixed order (write_payload and read_payload mirror each other line by line).
#include "gradyn/model/serialize.hpp"

#include "gradyn/model/detail/joint_layout.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

namespace gradyn {

// --- Guard against a Model field that the format forgets --------------------------------------
// The payload lists every field by hand, so a field added to Model (or to a struct it holds) is
// silently dropped by pickling unless someone extends write_payload/read_payload. These sizes trip
// the build when a struct changes. The trade-off: they are only checked where they were measured
// (libstdc++ on a 64-bit target; other standard libraries lay std::string and std::vector out
// differently), and a new field that fits into padding (a bool after another bool) changes no
// size; the field-by-field comparison in tests/model/test_serialize.cpp is the second guard.
// When one fires: add the field to write_payload and read_payload (and to the test's comparison),
// bump kModelFormatVersion (model/serialize.hpp), then update the size here.
#if defined(__GLIBCXX__) && __SIZEOF_POINTER__ == 8
#define GRADYN_SERIALIZED_SIZE(type, bytes)                                                                     \
  static_assert(sizeof(type) == (bytes), #type " changed size: extend the model format in src/model/serialize.cpp " \
                                                "(write_payload, read_payload), bump kModelFormatVersion, then update " \
                                                "this size")
GRADYN_SERIALIZED_SIZE(Model, 992);
GRADYN_SERIALIZED_SIZE(FixedTendon, 192);
GRADYN_SERIALIZED_SIZE(BodyConnection, 240);
GRADYN_SERIALIZED_SIZE(ModelCamera, 152);
GRADYN_SERIALIZED_SIZE(JointCoupling, 176);
GRADYN_SERIALIZED_SIZE(Sensor, 168);
GRADYN_SERIALIZED_SIZE(Frame, 136);
GRADYN_SERIALIZED_SIZE(Actuator, 240);
GRADYN_SERIALIZED_SIZE(Geom, 272);
GRADYN_SERIALIZED_SIZE(ConvexHull, 296);
GRADYN_SERIALIZED_SIZE(ConvexHull::Face, 40);
GRADYN_SERIALIZED_SIZE(ContactSettings, 200);
GRADYN_SERIALIZED_SIZE(Network, 176);
GRADYN_SERIALIZED_SIZE(NetworkInput, 48);
GRADYN_SERIALIZED_SIZE(DenseShape, 32);
GRADYN_SERIALIZED_SIZE(SourceLocation, 72);
GRADYN_SERIALIZED_SIZE(Inertia<double>, 104);
GRADYN_SERIALIZED_SIZE(Pose<double>, 96);
#undef GRADYN_SERIALIZED_SIZE
#endif

namespace {

constexpr std::string_view kMagic = "GRADYN-MODEL";
constexpr std::size_t kHeaderSize = kMagic.size() + 4 + 8 + 8;  // magic, version, length, checksum

[[noreturn]] void fail(const std::string& what) { throw ModelError(SourceLocation{"", 0, "serialized model"}, what); }

// FNV-1a: detects bytes changed after writing (a double's bits would otherwise be read as another
// number without complaint). Not cryptographic: pickles are trusted input anyway.
std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

class Writer {
 public:
  std::string out;

  void u8(std::uint8_t x) { out.push_back(static_cast<char>(x)); }
  void u32(std::uint32_t x) {
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>((x >> (8 * k)) & 0xffu));
  }
  void u64(std::uint64_t x) {
    for (int k = 0; k < 8; ++k) out.push_back(static_cast<char>((x >> (8 * k)) & 0xffu));
  }
  void i32(int x) { u32(static_cast<std::uint32_t>(x)); }
  void f64(double x) { u64(std::bit_cast<std::uint64_t>(x)); }
  void flag(bool x) { u8(x ? 1 : 0); }
  template <class E> void enumeration(E e) { u8(static_cast<std::uint8_t>(e)); }
  void count(std::size_t n) { u64(n); }
  void str(const std::string& s) {
    count(s.size());
    out.append(s);
  }
  template <int R, int C>
  void fixed(const Eigen::Matrix<double, R, C>& m) {
    for (Eigen::Index k = 0; k < m.size(); ++k) f64(m.data()[k]);  // column-major, as stored
  }
  void vec(const Eigen::VectorXd& x) {
    count(static_cast<std::size_t>(x.size()));
    for (Eigen::Index k = 0; k < x.size(); ++k) f64(x[k]);
  }
  void ints(const std::vector<int>& x) {
    count(x.size());
    for (int k : x) i32(k);
  }
  void strings(const std::vector<std::string>& x) {
    count(x.size());
    for (const std::string& s : x) str(s);
  }
  void pose(const Pose<double>& p) {
    fixed(p.R);
    fixed(p.p);
  }
  void where(const SourceLocation& w) {
    str(w.file);
    i32(w.line);
    str(w.element);
  }
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  std::size_t remaining() const { return bytes_.size() - pos_; }

  std::uint8_t u8(const char* what) { return static_cast<std::uint8_t>(*take(1, what)); }
  std::uint32_t u32(const char* what) {
    const char* p = take(4, what);
    std::uint32_t x = 0;
    for (int k = 0; k < 4; ++k) x |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[k])) << (8 * k);
    return x;
  }
  std::uint64_t u64(const char* what) {
    const char* p = take(8, what);
    std::uint64_t x = 0;
    for (int k = 0; k < 8; ++k) x |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[k])) << (8 * k);
    return x;
  }
  int i32(const char* what) { return static_cast<int>(u32(what)); }
  double f64(const char* what) { return std::bit_cast<double>(u64(what)); }
  bool flag(const char* what) {
    const std::uint8_t x = u8(what);
    if (x > 1) inconsistent(std::string(what) + " is " + std::to_string(x) + ", expected 0 or 1");
    return x == 1;
  }
  template <class E>
  E enumeration(const char* what, E last) {
    const std::uint8_t x = u8(what);
    if (x > static_cast<std::uint8_t>(last))
      inconsistent(std::string(what) + " is " + std::to_string(x) + ", expected 0 to " +
                   std::to_string(static_cast<int>(last)));
    return static_cast<E>(x);
  }
  // A container's element count, checked against the bytes left before anything is allocated.
  std::size_t count(const char* what, std::size_t bytes_per_element) {
    const std::uint64_t n = u64(what);
    if (bytes_per_element > 0 && n > remaining() / bytes_per_element)
      inconsistent(std::string(what) + " counts " + std::to_string(n) + " entries of at least " +
                   std::to_string(bytes_per_element) + " bytes, but only " + std::to_string(remaining()) +
                   " bytes are left");
    return static_cast<std::size_t>(n);
  }
  std::string str(const char* what) {
    const std::size_t n = count(what, 1);
    return std::string(take(n, what), n);
  }
  template <int R, int C>
  Eigen::Matrix<double, R, C> fixed(const char* what) {
    Eigen::Matrix<double, R, C> m;
    for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = f64(what);
    return m;
  }
  Eigen::VectorXd vec(const char* what) {
    Eigen::VectorXd x(static_cast<Eigen::Index>(count(what, 8)));
    for (Eigen::Index k = 0; k < x.size(); ++k) x[k] = f64(what);
    return x;
  }
  std::vector<int> ints(const char* what) {
    std::vector<int> x(count(what, 4));
    for (int& k : x) k = i32(what);
    return x;
  }
  std::vector<std::string> strings(const char* what) {
    std::vector<std::string> x(count(what, 8));
    for (std::string& s : x) s = str(what);
    return x;
  }
  Pose<double> pose(const char* what) {
    Pose<double> p;
    p.R = fixed<3, 3>(what);
    p.p = fixed<3, 1>(what);
    return p;
  }
  SourceLocation where(const char* what) {
    SourceLocation w;
    w.file = str(what);
    w.line = i32(what);
    w.element = str(what);
    return w;
  }

  // The checksum matched, so bytes that do not form a model were written so (another build with
  // the same format version, a bug) or made by hand.
  [[noreturn]] static void inconsistent(const std::string& what) {
    fail("the bytes do not form a consistent model (" + what +
         "); they were damaged or written by an incompatible gradyn build");
  }

 private:
  const char* take(std::size_t n, const char* what) {
    if (n > remaining())
      inconsistent(std::string("truncated inside ") + what + ": " + std::to_string(n) + " bytes needed at byte " +
                   std::to_string(pos_) + ", " + std::to_string(remaining()) + " left");
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }

  std::string_view bytes_;
  std::size_t pos_ = 0;
};

// Smallest encoded sizes, for Reader::count's bound on element counts.
constexpr std::size_t kPoseBytes = 12 * 8;

void write_payload(const Model& m, Writer& w) {
  w.str(m.name);
  w.str(m.source);

  // Bodies: topology and parameters. nq, nv, idx_q, idx_v, joint_nq_, joint_nv_ and children follow
  // from parent and joint_type.
  w.count(m.parent.size());
  for (int b = 0; b < m.nbodies(); ++b) {
    w.i32(m.parent[b]);
    w.enumeration(m.joint_type[b]);
    w.str(m.joint_names[b]);
    w.str(m.body_names[b]);
    w.pose(m.joint_placement[b]);
    w.fixed(m.joint_axis[b]);
    w.f64(m.body_inertia[b].mass);
    w.fixed(m.body_inertia[b].com);
    w.fixed(m.body_inertia[b].inertia_com);
  }
  for (const Eigen::VectorXd* x : {&m.damping, &m.armature, &m.stiffness, &m.frictionloss, &m.effort_limit, &m.velocity_limit, &m.q_rest,
                                   &m.lower_limit, &m.upper_limit, &m.q0})
    w.vec(*x);
  w.fixed(m.gravity);

  w.count(m.frames.size());
  for (const Frame& f : m.frames) {
    w.str(f.name);
    w.enumeration(f.kind);
    w.i32(f.body);
    w.pose(f.placement);
  }

  w.count(m.actuators.size());
  for (const Actuator& a : m.actuators) {
    w.str(a.name);
    w.enumeration(a.kind);
    w.i32(a.joint);
    w.f64(a.gear);
    w.fixed(a.gain);
    w.fixed(a.bias);
    w.f64(a.servo_kp);
    w.f64(a.servo_kv);
    w.f64(a.servo_velocity_limit);
    w.flag(a.ctrl_limited);
    w.f64(a.ctrl_lower);
    w.f64(a.ctrl_upper);
    w.flag(a.force_limited);
    w.f64(a.force_lower);
    w.f64(a.force_upper);
    w.where(a.where);
  }

  w.count(m.sensors.size());
  for (const Sensor& sn : m.sensors) {
    w.str(sn.name);
    w.enumeration(sn.kind);
    w.i32(sn.object);
    w.i32(sn.reference);
    w.i32(sn.adr);
    w.f64(sn.cutoff);
    w.f64(sn.noise);
    w.enumeration(sn.zone);
    w.fixed(sn.zone_size);
    w.where(sn.where);
  }

  w.count(m.joint_couplings.size());
  for (const JointCoupling& c : m.joint_couplings) {
    w.str(c.name);
    w.i32(c.joint1);
    w.i32(c.joint2);
    for (double x : c.polycoef) w.f64(x);
    w.f64(c.q1_ref);
    w.f64(c.q2_ref);
    w.where(c.where);
    w.flag(c.tendons);
  }

  w.count(m.cameras.size());
  for (const ModelCamera& c : m.cameras) {
    w.str(c.name);
    w.i32(c.frame);
    w.f64(c.fovy);
    w.str(c.unsupported);
    w.where(c.where);
  }

  w.count(m.body_connections.size());
  for (const BodyConnection& c : m.body_connections) {
    w.str(c.name);
    w.i32(c.body1);
    w.i32(c.body2);
    w.fixed(c.anchor1);
    w.fixed(c.anchor2);
    w.flag(c.weld);
    w.fixed(c.rotation);
    w.where(c.where);
  }

  w.count(m.tendons.size());
  for (const FixedTendon& t : m.tendons) {
    w.str(t.name);
    w.ints(t.joints);
    w.count(t.coefs.size());
    for (double c : t.coefs) w.f64(c);
    w.f64(t.lower);
    w.f64(t.upper);
    w.f64(t.stiffness);
    w.f64(t.damping);
    w.f64(t.spring_length);
    w.where(t.where);
  }

  w.count(m.networks.size());
  for (const Network& n : m.networks) {
    w.str(n.name);
    w.enumeration(n.site);
    w.count(n.inputs.size());
    for (const NetworkInput& in : n.inputs) {
      w.enumeration(in.kind);
      w.i32(in.index);
      w.i32(in.tangent);
      w.str(in.name);
    }
    w.ints(n.output_dofs);
    w.i32(n.body);
    w.i32(n.other_body);
    w.flag(n.world_frame);
    w.strings(n.output_names);
    w.ints(n.shape.widths);
    w.enumeration(n.shape.hidden);
    w.enumeration(n.shape.output);
    w.vec(n.weights);
  }

  // Convex hulls once each, in order of first use; geoms refer to them by index.
  std::map<const ConvexHull*, int> hull_index;
  std::vector<const ConvexHull*> hulls;
  for (const Geom& g : m.geoms)
    if (g.hull && hull_index.emplace(g.hull.get(), static_cast<int>(hulls.size())).second) hulls.push_back(g.hull.get());
  w.count(hulls.size());
  for (const ConvexHull* h : hulls) {
    w.count(h->vertices.size());
    for (const Vector3<double>& x : h->vertices) w.fixed(x);
    w.count(h->faces.size());
    for (const ConvexHull::Face& f : h->faces) {
      w.fixed(f.normal);
      w.f64(f.offset);
      w.i32(f.first);
      w.i32(f.count);
    }
    w.ints(h->face_vertices);
    for (const auto* pairs : {&h->edges, &h->edge_faces}) {
      w.count(pairs->size());
      for (const std::array<int, 2>& e : *pairs) {
        w.i32(e[0]);
        w.i32(e[1]);
      }
    }
    w.fixed(h->interior);
    w.fixed(h->aabb_min);
    w.fixed(h->aabb_max);
    w.f64(h->volume);
    w.fixed(h->centroid);
    w.fixed(h->inertia);
  }

  w.count(m.geoms.size());
  for (const Geom& g : m.geoms) {
    w.str(g.name);
    w.enumeration(g.type);
    w.i32(g.body);
    w.pose(g.placement);
    w.fixed(g.size);
    w.f64(g.friction);
    w.f64(g.restitution);
    w.u32(g.contype);
    w.u32(g.conaffinity);
    w.i32(g.hull ? hull_index.at(g.hull.get()) : -1);
    w.where(g.where);
  }
  w.count(m.excluded_pairs.size());
  for (const auto& [a, b] : m.excluded_pairs) {
    w.i32(a);
    w.i32(b);
  }
  w.flag(m.collide_parent_child);
  w.i32(m.max_contacts);

  const ContactSettings& c = m.contact;
  w.enumeration(c.model);
  w.f64(c.stiffness);
  w.f64(c.exponent);
  w.f64(c.damping);
  w.enumeration(c.friction);
  w.f64(c.velocity_scale);
  w.f64(c.static_friction_ratio);
  w.f64(c.viscous_friction);
  w.f64(c.margin);
  w.i32(c.pgs_iterations);
  w.f64(c.pgs_tolerance);
  w.enumeration(c.pgs_gradient);
  w.f64(c.erp);
  w.f64(c.slop);
  w.f64(c.cfm);
  w.f64(c.restitution_threshold);
  w.f64(c.max_correction_velocity);
  w.f64(c.limit_stiffness);
  w.f64(c.limit_damping);
  w.f64(c.limit_margin);
  w.i32(c.ipm_iterations);
  w.f64(c.ipm_tolerance);
  w.f64(c.ipm_kappa);
  w.i32(c.ipm_friction_directions);
  w.flag(c.ipm_warm_start);
  w.f64(c.max_penetration);
}

// Indices read from the bytes are checked before anything uses them, so that no algorithm ever
// indexes out of range on a model read from damaged bytes.
void check_index(int x, int lowest, int end, const std::string& what) {
  if (x < lowest || x >= end)
    Reader::inconsistent(what + " is " + std::to_string(x) + ", expected " + std::to_string(lowest) + " to " +
                         std::to_string(end - 1));
}

void check_size(std::size_t got, std::size_t expected, const std::string& what) {
  if (got != expected)
    Reader::inconsistent(what + " has " + std::to_string(got) + " entries, expected " + std::to_string(expected));
}

Model read_payload(Reader& r) {
  Model m;
  m.name = r.str("name");
  m.source = r.str("source");

  const std::size_t nbodies = r.count("bodies", 4 + 1 + 8 + 8 + kPoseBytes + 3 * 8 + 13 * 8);
  for (std::size_t b = 0; b < nbodies; ++b) {
    const int parent = r.i32("body parent");
    check_index(parent, -1, static_cast<int>(b), "the parent of body " + std::to_string(b));
    const JointType type = r.enumeration("joint type", kLastJointType);
    m.parent.push_back(parent);
    m.joint_type.push_back(type);
    detail::append_joint_layout(m, type);  // derived, as ModelBuilder::build lays it out
    m.joint_names.push_back(r.str("joint name"));
    m.body_names.push_back(r.str("body name"));
    m.joint_placement.push_back(r.pose("joint placement"));
    m.joint_axis.push_back(r.fixed<3, 1>("joint axis"));
    Inertia<double> inertia;
    inertia.mass = r.f64("body mass");
    inertia.com = r.fixed<3, 1>("body com");
    inertia.inertia_com = r.fixed<3, 3>("body inertia");
    m.body_inertia.push_back(inertia);
  }
  m.children.assign(m.nbodies(), {});
  for (int b = 0; b < m.nbodies(); ++b)
    if (m.parent[b] >= 0) m.children[m.parent[b]].push_back(b);

  const std::pair<Eigen::VectorXd*, const char*> per_dof[] = {
      {&m.damping, "damping"}, {&m.armature, "armature"}, {&m.stiffness, "stiffness"},
      {&m.frictionloss, "frictionloss"}, {&m.effort_limit, "effort_limit"}, {&m.velocity_limit, "velocity_limit"}};
  for (const auto& [x, what] : per_dof) {
    *x = r.vec(what);
    check_size(static_cast<std::size_t>(x->size()), static_cast<std::size_t>(m.nv), what);
  }
  const std::pair<Eigen::VectorXd*, const char*> per_coordinate[] = {
      {&m.q_rest, "q_rest"}, {&m.lower_limit, "lower_limit"}, {&m.upper_limit, "upper_limit"}, {&m.q0, "q0"}};
  for (const auto& [x, what] : per_coordinate) {
    *x = r.vec(what);
    check_size(static_cast<std::size_t>(x->size()), static_cast<std::size_t>(m.nq), what);
  }
  m.gravity = r.fixed<3, 1>("gravity");

  m.frames.resize(r.count("frames", 8 + 1 + 4 + kPoseBytes));
  for (Frame& f : m.frames) {
    f.name = r.str("frame name");
    f.kind = r.enumeration("frame kind", FrameKind::Camera);
    f.body = r.i32("frame body");
    check_index(f.body, -1, m.nbodies(), "the body of frame '" + f.name + "'");
    f.placement = r.pose("frame placement");
  }

  m.actuators.resize(r.count("actuators", 8 + 1 + 4 + 14 * 8 + 2 + 8 + 4 + 8));
  for (Actuator& a : m.actuators) {
    a.name = r.str("actuator name");
    a.kind = r.enumeration("actuator kind", ActuatorKind::Servo);
    a.joint = r.i32("actuator joint");
    check_index(a.joint, 0, m.nbodies(), "the joint of actuator '" + a.name + "'");
    if (m.joint_nv(a.joint) != 1)
      Reader::inconsistent("actuator '" + a.name + "' drives joint '" + m.joint_names[a.joint] + "' of " +
                           std::to_string(m.joint_nv(a.joint)) + " DoFs, expected 1");
    a.gear = r.f64("actuator gear");
    a.gain = r.fixed<3, 1>("actuator gain");
    a.bias = r.fixed<3, 1>("actuator bias");
    a.servo_kp = r.f64("actuator servo_kp");
    a.servo_kv = r.f64("actuator servo_kv");
    a.servo_velocity_limit = r.f64("actuator servo_velocity_limit");
    a.ctrl_limited = r.flag("actuator ctrl_limited");
    a.ctrl_lower = r.f64("actuator ctrl_lower");
    a.ctrl_upper = r.f64("actuator ctrl_upper");
    a.force_limited = r.flag("actuator force_limited");
    a.force_lower = r.f64("actuator force_lower");
    a.force_upper = r.f64("actuator force_upper");
    a.where = r.where("actuator source location");
  }

  m.sensors.resize(r.count("sensors", 8 + 1 + 3 * 4 + 2 * 8 + 1 + 3 * 8 + 8 + 4 + 8));
  int sensor_adr = 0;
  for (Sensor& sn : m.sensors) {
    sn.name = r.str("sensor name");
    sn.kind = r.enumeration("sensor kind", SensorKind::Touch);
    sn.object = r.i32("sensor object");
    if (sn.kind == SensorKind::JointPos || sn.kind == SensorKind::JointVel) {
      check_index(sn.object, 0, m.nbodies(), "the joint of sensor '" + sn.name + "'");
      if (m.joint_nv(sn.object) != 1) Reader::inconsistent("sensor '" + sn.name + "' reads a joint without one DoF");
    } else {
      check_index(sn.object, 0, static_cast<int>(m.frames.size()), "the frame of sensor '" + sn.name + "'");
    }
    sn.reference = r.i32("sensor reference");
    check_index(sn.reference, -1, static_cast<int>(m.frames.size()), "the reference frame of sensor '" + sn.name + "'");
    sn.adr = r.i32("sensor adr");
    if (sn.adr != sensor_adr) Reader::inconsistent("sensor '" + sn.name + "' does not follow the one before it");
    sensor_adr += sn.dim();
    sn.cutoff = r.f64("sensor cutoff");
    sn.noise = r.f64("sensor noise");
    sn.zone = r.enumeration("sensor zone", ZoneShape::Box);
    sn.zone_size = r.fixed<3, 1>("sensor zone size");
    sn.where = r.where("sensor source location");
  }

  m.joint_couplings.resize(r.count("joint couplings", 8 + 4 + 4 + 7 * 8 + 8 + 1));
  for (JointCoupling& c : m.joint_couplings) {  // tendon couplings' indices are checked with the tendons
    c.name = r.str("joint coupling name");
    c.joint1 = r.i32("joint coupling joint1");
    c.joint2 = r.i32("joint coupling joint2");
    for (double& x : c.polycoef) x = r.f64("joint coupling polycoef");
    c.q1_ref = r.f64("joint coupling q1_ref");
    c.q2_ref = r.f64("joint coupling q2_ref");
    c.where = r.where("joint coupling source location");
    c.tendons = r.flag("joint coupling tendons");
    if (c.tendons) continue;
    check_index(c.joint1, 0, m.nbodies(), "joint1 of joint coupling '" + c.name + "'");
    check_index(c.joint2, -1, m.nbodies(), "joint2 of joint coupling '" + c.name + "'");
    if (m.joint_nv(c.joint1) != 1 || (c.joint2 >= 0 && m.joint_nv(c.joint2) != 1))
      Reader::inconsistent("joint coupling '" + c.name + "' joins a joint without one DoF");
  }

  m.cameras.resize(r.count("cameras", 8 + 4 + 8 + 8 + 8 + 4 + 8));
  for (ModelCamera& c : m.cameras) {
    c.name = r.str("camera name");
    c.frame = r.i32("camera frame");
    check_index(c.frame, 0, static_cast<int>(m.frames.size()), "the frame of camera '" + c.name + "'");
    if (m.frames[static_cast<size_t>(c.frame)].kind != FrameKind::Camera)
      Reader::inconsistent("camera '" + c.name + "' names a frame that is not a camera's");
    c.fovy = r.f64("camera fovy");
    if (!(c.fovy > 0.0 && c.fovy < 180.0)) Reader::inconsistent("camera '" + c.name + "' has a fovy outside (0, 180)");
    c.unsupported = r.str("camera unsupported");
    c.where = r.where("camera source location");
  }

  m.body_connections.resize(r.count("body connections", 8 + 4 + 4 + 6 * 8 + 1 + 9 * 8 + 8));
  for (BodyConnection& c : m.body_connections) {
    c.name = r.str("body connection name");
    c.body1 = r.i32("body connection body1");
    check_index(c.body1, 0, m.nbodies(), "body1 of body connection '" + c.name + "'");
    c.body2 = r.i32("body connection body2");
    check_index(c.body2, -1, m.nbodies(), "body2 of body connection '" + c.name + "'");
    c.anchor1 = r.fixed<3, 1>("body connection anchor1");
    c.anchor2 = r.fixed<3, 1>("body connection anchor2");
    c.weld = r.flag("body connection weld");
    c.rotation = r.fixed<3, 3>("body connection rotation");
    if (c.weld && !((c.rotation.transpose() * c.rotation - Matrix3<double>::Identity()).norm() < 1e-9 &&
                    c.rotation.determinant() > 0.0))
      Reader::inconsistent("weld '" + c.name + "' holds a rotation that is not a rotation matrix");
    c.where = r.where("body connection source location");
  }

  m.tendons.resize(r.count("tendons", 8 + 8 + 8 + 5 * 8 + 8));
  for (FixedTendon& t : m.tendons) {
    t.name = r.str("tendon name");
    t.joints = r.ints("tendon joints");
    for (int b : t.joints) {
      check_index(b, 0, m.nbodies(), "a joint of tendon '" + t.name + "'");
      if (m.joint_nv(b) != 1) Reader::inconsistent("tendon '" + t.name + "' spans a joint without one DoF");
    }
    t.coefs.resize(r.count("tendon coefficients", 8));
    if (t.coefs.size() != t.joints.size())
      Reader::inconsistent("tendon '" + t.name + "' has not one coefficient per joint");
    for (double& c : t.coefs) c = r.f64("tendon coefficient");
    t.lower = r.f64("tendon lower");
    t.upper = r.f64("tendon upper");
    t.stiffness = r.f64("tendon stiffness");
    t.damping = r.f64("tendon damping");
    t.spring_length = r.f64("tendon spring length");
    if (!(t.lower <= t.upper) || !(t.stiffness >= 0.0) || !(t.damping >= 0.0))
      Reader::inconsistent("tendon '" + t.name + "' has a range or spring-damper that build() refuses");
    t.where = r.where("tendon source location");
  }
  for (const JointCoupling& c : m.joint_couplings)
    if (c.tendons) {
      const int n = static_cast<int>(m.tendons.size());
      check_index(c.joint1, 0, n, "tendon1 of tendon coupling '" + c.name + "'");
      check_index(c.joint2, -1, n, "tendon2 of tendon coupling '" + c.name + "'");
    }

  m.networks.resize(r.count("networks", 8 + 1 + 8 + 8 + 4 + 4 + 1 + 8 + 8 + 2 + 8));
  for (Network& n : m.networks) {
    n.name = r.str("network name");
    const std::string what = "network '" + n.name + "'";
    n.site = r.enumeration("network site", NetworkSite::ContactFriction);
    n.inputs.resize(r.count("network inputs", 1 + 4 + 4 + 8));
    using K = NetworkInput::Kind;
    for (NetworkInput& in : n.inputs) {
      in.kind = r.enumeration("network input kind", K::ContactVelocity);
      in.index = r.i32("network input index");
      in.tangent = r.i32("network input tangent");
      in.name = r.str("network input name");
      const std::string input = "the index of " + what + "'s input '" + in.name + "'";
      switch (in.kind) {
        case K::Position:
          check_index(in.index, 0, m.nq, input);
          check_index(in.tangent, 0, m.nv, "the tangent of " + what + "'s input '" + in.name + "'");
          break;
        case K::Velocity: check_index(in.index, 0, m.nv, input); break;
        case K::Control: check_index(in.index, 0, m.nu(), input); break;
        case K::BodyRotation: check_index(in.index, 0, 9, input); break;
        case K::ContactDepth: check_index(in.index, 0, 1, input); break;
        default: check_index(in.index, 0, 3, input); break;
      }
      const bool contact_site = is_contact_site(n.site);
      if (in.kind >= K::BodyPosition && in.kind <= K::BodyLinearVelocity && n.site == NetworkSite::JointForce)
        Reader::inconsistent(what + " reads its body's state ('" + in.name + "') but is at a joint_force site");
      if (in.kind >= K::ContactDepth && !contact_site)
        Reader::inconsistent(what + " reads a contact ('" + in.name + "') but is not at a contact site");
      if (in.kind <= K::Control && contact_site)
        Reader::inconsistent(what + " reads a joint quantity ('" + in.name + "') but is at a contact site");
    }
    n.output_dofs = r.ints("network output DoFs");
    const int outputs = n.site == NetworkSite::JointForce     ? m.nv
                        : n.site == NetworkSite::BodyWrench   ? 6
                        : n.site == NetworkSite::ContactForce ? 4
                                                              : 1;
    for (int dof : n.output_dofs) check_index(dof, 0, outputs, "an output of " + what);
    n.body = r.i32("network body");
    if (n.site != NetworkSite::JointForce) check_index(n.body, 0, m.nbodies(), "the body of " + what);
    n.other_body = r.i32("network other body");
    check_index(n.other_body, kAnyOtherBody, m.nbodies(), "the other body of " + what);
    n.world_frame = r.flag("network world_frame");
    n.output_names = r.strings("network output names");
    check_size(n.output_names.size(), n.output_dofs.size(), "the output names of " + what);
    n.shape.widths = r.ints("network widths");
    n.shape.hidden = r.enumeration("network hidden activation", Activation::Sigmoid);
    n.shape.output = r.enumeration("network output activation", Activation::Sigmoid);
    n.weights = r.vec("network weights");
    if (n.shape.widths.size() < 2 ||
        std::any_of(n.shape.widths.begin(), n.shape.widths.end(), [](int width) { return width <= 0; }))
      Reader::inconsistent(what + " has a layer of no width or fewer than two layers of units");
    check_size(static_cast<std::size_t>(n.shape.inputs()), n.inputs.size(), "the first layer of " + what);
    check_size(static_cast<std::size_t>(n.shape.outputs()), n.output_dofs.size(), "the last layer of " + what);
    check_size(static_cast<std::size_t>(n.weights.size()), static_cast<std::size_t>(n.shape.param_count()),
               "the weights of " + what);
  }

  std::vector<std::shared_ptr<const ConvexHull>> hulls(r.count("convex hulls", 5 * 8 + 22 * 8));
  for (std::size_t k = 0; k < hulls.size(); ++k) {
    auto h = std::make_shared<ConvexHull>();
    const std::string what = "convex hull " + std::to_string(k);
    h->vertices.resize(r.count("hull vertices", 3 * 8));
    for (Vector3<double>& x : h->vertices) x = r.fixed<3, 1>("hull vertex");
    h->faces.resize(r.count("hull faces", 4 * 8 + 2 * 4));
    for (ConvexHull::Face& f : h->faces) {
      f.normal = r.fixed<3, 1>("hull face normal");
      f.offset = r.f64("hull face offset");
      f.first = r.i32("hull face first vertex");
      f.count = r.i32("hull face vertex count");
    }
    h->face_vertices = r.ints("hull face vertices");
    const int nvertices = static_cast<int>(h->vertices.size()), nfaces = static_cast<int>(h->faces.size());
    const int nface_vertices = static_cast<int>(h->face_vertices.size());
    for (const ConvexHull::Face& f : h->faces) {
      check_index(f.first, 0, nface_vertices + 1, "the first vertex of a face of " + what);
      check_index(f.count, 0, nface_vertices - f.first + 1, "the vertex count of a face of " + what);
    }
    for (int v : h->face_vertices) check_index(v, 0, nvertices, "a face vertex of " + what);
    for (auto [pairs, end, name] : {std::tuple{&h->edges, nvertices, "an edge's vertex"},
                                    std::tuple{&h->edge_faces, nfaces, "an edge's face"}}) {
      pairs->resize(r.count("hull edges", 2 * 4));
      for (std::array<int, 2>& e : *pairs)
        for (int& x : e) {
          x = r.i32("hull edge");
          check_index(x, 0, end, std::string(name) + " in " + what);
        }
    }
    check_size(h->edge_faces.size(), h->edges.size(), "the edge faces of " + what);
    h->interior = r.fixed<3, 1>("hull interior");
    h->aabb_min = r.fixed<3, 1>("hull aabb_min");
    h->aabb_max = r.fixed<3, 1>("hull aabb_max");
    h->volume = r.f64("hull volume");
    h->centroid = r.fixed<3, 1>("hull centroid");
    h->inertia = r.fixed<3, 3>("hull inertia");
    hulls[k] = std::move(h);
  }

  m.geoms.resize(r.count("geoms", 8 + 1 + 4 + kPoseBytes + 5 * 8 + 3 * 4 + 8 + 4 + 8));
  for (Geom& g : m.geoms) {
    g.name = r.str("geom name");
    g.type = r.enumeration("geom type", GeomType::ConvexHull);
    g.body = r.i32("geom body");
    check_index(g.body, -1, m.nbodies(), "the body of geom '" + g.name + "'");
    g.placement = r.pose("geom placement");
    g.size = r.fixed<3, 1>("geom size");
    g.friction = r.f64("geom friction");
    g.restitution = r.f64("geom restitution");
    g.contype = r.u32("geom contype");
    g.conaffinity = r.u32("geom conaffinity");
    const int hull = r.i32("geom hull");
    check_index(hull, -1, static_cast<int>(hulls.size()), "the convex hull of geom '" + g.name + "'");
    if (hull >= 0) g.hull = hulls[hull];
    if (g.type == GeomType::ConvexHull && !g.hull) Reader::inconsistent("convex hull geom '" + g.name + "' has no hull");
    g.where = r.where("geom source location");
  }
  m.excluded_pairs.resize(r.count("excluded pairs", 2 * 4));
  for (auto& [a, b] : m.excluded_pairs) {
    a = r.i32("excluded pair");
    b = r.i32("excluded pair");
    check_index(a, -1, m.nbodies(), "an excluded pair's body");
    check_index(b, -1, m.nbodies(), "an excluded pair's body");
  }
  m.collide_parent_child = r.flag("collide_parent_child");
  m.max_contacts = r.i32("max_contacts");
  if (m.max_contacts < 0) Reader::inconsistent("max_contacts is " + std::to_string(m.max_contacts));

  ContactSettings& c = m.contact;
  c.model = r.enumeration("contact model", kLastContactModel);
  c.stiffness = r.f64("contact stiffness");
  c.exponent = r.f64("contact exponent");
  c.damping = r.f64("contact damping");
  c.friction = r.enumeration("friction model", FrictionModel::Brown);
  c.velocity_scale = r.f64("contact velocity_scale");
  c.static_friction_ratio = r.f64("contact static_friction_ratio");
  c.viscous_friction = r.f64("contact viscous_friction");
  c.margin = r.f64("contact margin");
  c.pgs_iterations = r.i32("contact pgs_iterations");
  c.pgs_tolerance = r.f64("contact pgs_tolerance");
  c.pgs_gradient = r.enumeration("contact pgs_gradient", PgsGradient::Sweeps);
  c.erp = r.f64("contact erp");
  c.slop = r.f64("contact slop");
  c.cfm = r.f64("contact cfm");
  c.restitution_threshold = r.f64("contact restitution_threshold");
  c.max_correction_velocity = r.f64("contact max_correction_velocity");
  c.limit_stiffness = r.f64("contact limit_stiffness");
  c.limit_damping = r.f64("contact limit_damping");
  c.limit_margin = r.f64("contact limit_margin");
  c.ipm_iterations = r.i32("contact ipm_iterations");
  c.ipm_tolerance = r.f64("contact ipm_tolerance");
  c.ipm_kappa = r.f64("contact ipm_kappa");
  c.ipm_friction_directions = r.i32("contact ipm_friction_directions");
  c.ipm_warm_start = r.flag("contact ipm_warm_start");
  c.max_penetration = r.f64("contact max_penetration");
  // The solvers size their problems from these counts.
  if (c.pgs_iterations < 1 || c.ipm_iterations < 1 || c.ipm_friction_directions < 3)
    Reader::inconsistent("contact iteration or friction direction counts below their minimum");
  return m;
}

std::string hex_prefix(std::string_view bytes) {
  std::string s;
  char buf[4];
  for (std::size_t k = 0; k < std::min<std::size_t>(bytes.size(), kMagic.size()); ++k) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(static_cast<unsigned char>(bytes[k])));
    s += buf;
  }
  return s;
}

}  // namespace

std::string serialize_model(const Model& model) {
  Writer payload;
  write_payload(model, payload);
  Writer w;
  w.out.reserve(kHeaderSize + payload.out.size());
  w.out.append(kMagic);
  w.u32(kModelFormatVersion);
  w.u64(payload.out.size());
  w.u64(fnv1a(payload.out));
  w.out.append(payload.out);
  return std::move(w.out);
}

Model deserialize_model(std::string_view bytes) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic)
    fail("not a gradyn model pickle: the bytes do not start with '" + std::string(kMagic) + "' (" +
         std::to_string(bytes.size()) + " bytes" + (bytes.empty() ? "" : ", starting 0x" + hex_prefix(bytes)) + ")");
  if (bytes.size() < kHeaderSize)
    fail("truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the " + std::to_string(kHeaderSize) +
         "-byte header");
  Reader header(bytes.substr(kMagic.size(), kHeaderSize - kMagic.size()));
  const std::uint32_t version = header.u32("version");
  const std::uint64_t length = header.u64("length");
  const std::uint64_t checksum = header.u64("checksum");
  if (version != kModelFormatVersion)
    fail("made by format version " + std::to_string(version) + ", this gradyn reads format version " +
         std::to_string(kModelFormatVersion) +
         ": unpickle it with the gradyn that wrote it, or load the model again from its source");
  const std::string_view payload = bytes.substr(kHeaderSize);
  if (payload.size() != length)
    fail((payload.size() < length ? "truncated: the header announces " : "too long: the header announces ") +
         std::to_string(length) + " bytes of model data, " + std::to_string(payload.size()) + " follow");
  if (fnv1a(payload) != checksum)
    fail("corrupted: the checksum of the model data does not match (the bytes were changed after they were written)");
  Reader r(payload);
  Model model = read_payload(r);
  if (r.remaining() != 0)
    Reader::inconsistent(std::to_string(r.remaining()) + " bytes left over after the last field");
  return model;
}

}  // namespace gradyn
