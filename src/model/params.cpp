// The flat parameter vector (layout documented in include/gradyn/model/params.hpp) and the chain
// rule from the Model-shaped adjoint to it. One table, fields<S>(), lists every parameter group
// once: its entries per body, joint, geom or model, their names, how each is read from and written
// into a Model, its gradient from the ModelTangent, and the tangent fields that hold its adjoint.
// param_names, get_params, with_params, params_gradient and ModelTangent walk that table; a new
// parameter is one entry there (and its field in ModelTangentTpl).
#include "gradyn/model/params.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <type_traits>
#include <utility>

#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {

// (Which joints have axis and rest-position parameters: each kind says, joints/<kind>.hpp.)
bool has_axis(JointType t) { return joint_has_axis(t); }
bool has_rest(JointType t) { return joint_has_rest(t); }

// Roll, pitch, yaw with rpy_to_matrix(rpy) == R for a rotation matrix R (R = Rz(yaw) Ry(pitch)
// Rx(roll)). Yaw comes from the first column; pitch and roll are then read off
// Rz(yaw)^T R = Ry(pitch) Rx(roll), whose entries used below are all well conditioned, so the
// round trip is exact to rounding even at and near pitch = +-pi/2. There (gimbal lock) only
// roll - yaw (pitch = pi/2) or roll + yaw (pitch = -pi/2) is determined: yaw is set to 0 when
// the first column's x, y entries vanish and roll carries the whole rotation about the axis.
// Ranges: pitch in [-pi/2, pi/2], roll and yaw in (-pi, pi].
template <class S>
Vector3<S> matrix_to_rpy(const Matrix3<S>& R) {
  using std::atan2;
  using std::cos;
  using std::sin;
  // |cos(pitch)| below which yaw is taken as 0. Ignoring cos(pitch) there moves R by about this
  // much, so it is kept at rounding level: the round trip stays exact everywhere else.
  constexpr double kGimbalLock = 1e-14;
  const bool locked = std::abs(value_of(R(0, 0))) < kGimbalLock && std::abs(value_of(R(1, 0))) < kGimbalLock;
  const S yaw = locked ? S(0) : S(atan2(R(1, 0), R(0, 0)));
  const S cy = cos(yaw), sy = sin(yaw);
  // Rows 0 and 1 of Ry(pitch) Rx(roll) = Rz(yaw)^T R: [cp, sp sr, sp cr] and [0, cr, -sr].
  // cp = |first column's x, y| >= 0 keeps pitch in [-pi/2, pi/2]; exactly +-pi/2 when locked.
  const S m00 = locked ? S(0) : S(cy * R(0, 0) + sy * R(1, 0));
  const S m11 = -sy * R(0, 1) + cy * R(1, 1);
  const S m12 = -sy * R(0, 2) + cy * R(1, 2);
  const S pitch = atan2(-R(2, 0), m00);
  const S roll = atan2(-m12, m11);
  return Vector3<S>(roll, pitch, yaw);
}

template <class S>
S frobenius(const Matrix3<S>& a, const Matrix3<S>& b) {
  return a.cwiseProduct(b).sum();
}

// Gradient w.r.t. (roll, pitch, yaw) at the rpy the rotation R maps to, given the adjoint TR of
// R's entries. R = Rz(y) Ry(p) Rx(r): dR/dr = R [ex], dR/dp = Rz Ry [ey] Rx, dR/dy = [ez] R, each
// paired with TR (Frobenius product).
template <class S>
Vector3<S> rpy_gradient(const Matrix3<S>& R_model, const Matrix3<S>& TR) {
  using std::cos;
  using std::sin;
  const Vector3<S> rpy = matrix_to_rpy<S>(R_model);
  const S cr = cos(rpy.x()), sr = sin(rpy.x()), cp = cos(rpy.y()), sp = sin(rpy.y()), cy = cos(rpy.z()),
          sy = sin(rpy.z());
  Matrix3<S> Rx, Ry, Rz;
  Rx << S(1), S(0), S(0), S(0), cr, -sr, S(0), sr, cr;
  Ry << cp, S(0), sp, S(0), S(1), S(0), -sp, S(0), cp;
  Rz << cy, -sy, S(0), sy, cy, S(0), S(0), S(0), S(1);
  const Matrix3<S> R = Rz * Ry * Rx;
  return Vector3<S>(frobenius<S>(TR, R * skew<S>(Vector3<S>::UnitX())),
                    frobenius<S>(TR, Rz * Ry * skew<S>(Vector3<S>::UnitY()) * Rx),
                    frobenius<S>(TR, skew<S>(Vector3<S>::UnitZ()) * R));
}

std::string indexed(const std::string& base, int k, int n) {
  return n > 1 ? base + "[" + std::to_string(k) + "]" : base;
}


// Appends base + "." + c for each component name c.
void add_names(std::vector<std::string>& out, const std::string& base, std::initializer_list<const char*> components) {
  for (const char* c : components) out.push_back(base + "." + c);
}

// The ContactSettings fields in the flat vector, in order.
#define GRADYN_CONTACT_SETTING_NAME(name) #name,
constexpr const char* kContactSettingNames[] = {GRADYN_DIFFERENTIABLE_CONTACT_SETTINGS(GRADYN_CONTACT_SETTING_NAME)};
#undef GRADYN_CONTACT_SETTING_NAME
constexpr int kContactSettings = sizeof(kContactSettingNames) / sizeof(kContactSettingNames[0]);

// Pointers to the settings (or their adjoints) in kContactSettingNames' order.
template <class Settings>
auto contact_fields(Settings& c) {
#define GRADYN_CONTACT_SETTING_FIELD(name) &c.name,
  return std::array{GRADYN_DIFFERENTIABLE_CONTACT_SETTINGS(GRADYN_CONTACT_SETTING_FIELD)};
#undef GRADYN_CONTACT_SETTING_FIELD
}
static_assert(std::tuple_size_v<decltype(contact_fields(std::declval<ContactSettings&>()))> == kContactSettings);

// n consecutive entries of the flat vector as a fixed-size vector.
template <int n, class S>
Eigen::Map<Eigen::Matrix<S, n, 1>> map(S* p) {
  return Eigen::Map<Eigen::Matrix<S, n, 1>>(p);
}
template <int n, class S>
Eigen::Map<const Eigen::Matrix<S, n, 1>> map(const S* p) {
  return Eigen::Map<const Eigen::Matrix<S, n, 1>>(p);
}

// Sets every entry of a tangent field to zero, first sizing it to n entries when n >= 0.
template <class T>
void reset(std::vector<T>& x, int n) {
  if (n >= 0) x.resize(static_cast<size_t>(n));
  for (T& e : x) {
    if constexpr (requires { e.setZero(); }) e.setZero();
    else e = T(0);
  }
}
template <class S>
void reset(VectorX<S>& x, int n) {
  if (n >= 0) x.resize(n);
  x.setZero();
}

// What a parameter group belongs to: each body (and its joint), the model as a whole, each geom,
// each actuator, each network, each joint coupling, body connection and fixed tendon.
enum class Owner : std::uint8_t { Body, Global, Geom, Actuator, Network, Coupling, Connection, Tendon };

// One parameter group. `element` is the body or geom index (0 for Owner::Global); p, g point at the
// group's first entry in the flat vector; `at` is that entry's index (for error messages).
template <class S>
struct Field {
  Owner owner;
  int (*count)(const ModelTpl<S>& m, int element);
  void (*names)(const Model& m, int element, std::vector<std::string>& out);
  void (*get)(const ModelTpl<S>& m, int element, S* p);
  // Writes the entries into `out` (a copy of m); throws ModelError for a value the model cannot take.
  void (*set)(const ModelTpl<S>& m, int element, const S* p, int at, ModelTpl<S>& out);
  void (*gradient)(const ModelTpl<S>& m, const ModelTangentTpl<S>& t, int element, S* g);
  // Zeroes the ModelTangent fields that hold this group's adjoints, sized for m first when given.
  void (*clear)(ModelTangentTpl<S>& t, const ModelTpl<S>* m);
  // The Model holds these entries as doubles: with_params<ADScalar> drops their derivatives.
  bool doubles = false;
};

template <class S>
int nbodies_or_keep(const ModelTpl<S>* m) { return m ? m->nbodies() : -1; }
template <class S>
int ngeoms_or_keep(const ModelTpl<S>* m) { return m ? m->ngeoms() : -1; }
template <class S>
int nu_or_keep(const ModelTpl<S>* m) { return m ? m->nu() : -1; }

// The parameters an actuator's kind exposes (params.hpp): position kp, kv; velocity kv; general
// gain and bias; servo kp, kv, velocity_limit; motor none.
int kind_param_count(ActuatorKind kind) {
  switch (kind) {
    case ActuatorKind::Motor: return 0;
    case ActuatorKind::Position: return 2;
    case ActuatorKind::Velocity: return 1;
    case ActuatorKind::General: return 6;
    case ActuatorKind::Servo: return 3;
  }
  return 0;
}

// An actuator entry out of range: names the actuator, the parameter and its index in p.
template <class S>
[[noreturn]] void fail_actuator(const ModelTpl<S>& m, int k, int index, const std::string& field,
                                const std::string& expected, double got) {
  const ActuatorTpl<S>& a = m.actuators[k];
  std::ostringstream s;
  s << actuator_kind_name(a.kind) << " actuator '" << a.name << "': parameter '" << a.name << "." << field << "' (p["
    << index << "]) must be " << expected << ", got " << got;
  const SourceLocation where = a.where.file.empty() && a.where.element.empty()
                                   ? SourceLocation{m.source, 0, "<actuator name='" + a.name + "'>"}
                                   : a.where;
  throw ModelError(where, s.str());
}

template <class S>
void check_finite_actuator(const ModelTpl<S>& m, int k, int index, const std::string& field, const S& x) {
  if (!std::isfinite(value_of(x))) fail_actuator(m, k, index, field, "finite", value_of(x));
}

// A clamp's [lower, upper] written from p: both finite, lower <= upper.
template <class S>
void set_range(const ModelTpl<S>& m, int k, const S* p, int at, const char* field, S& lower, S& upper) {
  const double lo = value_of(p[0]), hi = value_of(p[1]);
  check_finite_actuator(m, k, at, std::string(field) + ".lower", p[0]);
  check_finite_actuator(m, k, at + 1, std::string(field) + ".upper", p[1]);
  if (lo > hi)
    fail_actuator(m, k, at + 1, std::string(field) + ".upper", std::string("at least ") + field + ".lower (" + std::to_string(lo) + ")",
                  hi);
  lower = p[0], upper = p[1];
}

// A coupling's, connection's or tendon's entry out of range: names it, the parameter and its index in p.
[[noreturn]] void fail_element(const SourceLocation& where, const std::string& parameter, int index,
                               const char* expected, double got) {
  std::ostringstream s;
  s << "parameter '" << parameter << "' (p[" << index << "]) must be " << expected << ", got " << got;
  throw ModelError(where, s.str());
}

// Index k of each of joint i's DoFs with dry friction (a friction row: frictionloss > 0), in order.
template <class S, class Visit>
void for_each_frictional_dof(const ModelTpl<S>& m, int i, Visit&& visit) {
  if (m.frictionloss.size() != m.nv) return;  // a model built by hand may leave it empty
  for (int k = 0, n = 0; k < m.joint_nv(i); ++k)
    if (value_of(m.frictionloss[m.idx_v[i] + k]) > 0.0) visit(k, n++);
}

template <class S>
SourceLocation body_location(const ModelTpl<S>& m, int i, bool joint) {
  return SourceLocation{m.source, 0, (joint ? "<joint name='" + m.joint_names[i] : "<body name='" + m.body_names[i]) + "'>"};
}

// A geom entry out of range: names the geom, the parameter and its index in p.
template <class S>
[[noreturn]] void fail_geom(const ModelTpl<S>& m, int k, int index, const std::string& field, const char* expected,
                            double got) {
  const GeomTpl<S>& g = m.geoms[k];
  std::ostringstream s;
  s << geom_type_name(g.type) << " geom '" << g.name << "': parameter '" << g.name << "." << field << "' (p[" << index
    << "]) must be " << expected << ", got " << got;
  const SourceLocation where = g.where.file.empty() && g.where.element.empty()
                                   ? SourceLocation{m.source, 0, "<geom name='" + g.name + "'>"}
                                   : g.where;
  throw ModelError(where, s.str());
}

// The table, in the flat layout's order: the Body groups for each body in turn, then gravity, then
// the Geom groups for each geom in turn, then the contact settings, then the Actuator groups for
// each actuator in turn, then each coupling's, connection's and tendon's groups, then each network's
// weights (last: params.hpp promises it).
template <class S>
const std::vector<Field<S>>& fields() {
  using M = ModelTpl<S>;
  using T = ModelTangentTpl<S>;
  static const std::vector<Field<S>> table = {
      // ---- per body: inertia ----
      {Owner::Body, [](const M&, int) { return 1; },
       [](const Model& m, int i, std::vector<std::string>& out) { out.push_back(m.body_names[i] + ".mass"); },
       [](const M& m, int i, S* p) { p[0] = m.body_inertia[i].mass; },
       [](const M& m, int i, const S* p, int at, M& out) {
         const double m_new = value_of(p[0]), m_old = value_of(m.body_inertia[i].mass);
         // A body massless from the start (a link that only carries frames) may stay massless; the
         // builder has checked that something in its subtree has mass.
         if (!std::isfinite(m_new) || m_new < 0 || (m_new == 0 && m_old > 0)) {
           std::ostringstream s;
           s << "parameter '" << m.body_names[i] << ".mass' (p[" << at << "]) must be positive and finite, got "
             << m_new;
           throw ModelError(body_location(m, i, false), s.str());
         }
         out.body_inertia[i].mass = p[0];
       },
       [](const M&, const T& t, int i, S* g) { g[0] = t.mass[i]; },
       [](T& t, const M* m) { reset(t.mass, nbodies_or_keep(m)); }},
      {Owner::Body, [](const M&, int) { return 3; },
       [](const Model& m, int i, std::vector<std::string>& out) { add_names(out, m.body_names[i] + ".com", {"x", "y", "z"}); },
       [](const M& m, int i, S* p) { map<3>(p) = m.body_inertia[i].com; },
       [](const M&, int i, const S* p, int, M& out) { out.body_inertia[i].com = map<3>(p); },
       [](const M&, const T& t, int i, S* g) { map<3>(g) = t.com[i]; },
       [](T& t, const M* m) { reset(t.com, nbodies_or_keep(m)); }},
      // the 6 numbers of the symmetric inertia about the CoM: ixx, iyy, izz, ixy, ixz, iyz
      {Owner::Body, [](const M&, int) { return 6; },
       [](const Model& m, int i, std::vector<std::string>& out) {
         add_names(out, m.body_names[i] + ".inertia", {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"});
       },
       [](const M& m, int i, S* p) {
         const Matrix3<S>& J = m.body_inertia[i].inertia_com;
         // Off-diagonal entries averaged: the stored matrix is symmetric up to rounding.
         map<6>(p) << J(0, 0), J(1, 1), J(2, 2), S(0.5) * (J(0, 1) + J(1, 0)),
             S(0.5) * (J(0, 2) + J(2, 0)), S(0.5) * (J(1, 2) + J(2, 1));
       },
       [](const M& m, int i, const S* c, int at, M& out) {
         out.body_inertia[i].inertia_com << c[0], c[3], c[4],  //
             c[3], c[1], c[5],                                 //
             c[4], c[5], c[2];
         // Moments of inertia are not negative. (Only the diagonal is checked: a body with zero
         // inertia, a point mass on a slider, must survive finite differences of its off-diagonal
         // entries, which make one principal moment slightly negative.)
         static const char* const axes[3] = {"ixx", "iyy", "izz"};
         for (int k = 0; k < 3; ++k)
           if (value_of(c[k]) < 0) {
             std::ostringstream s;
             s << "parameter '" << m.body_names[i] << ".inertia." << axes[k] << "' (p[" << at + k
               << "]) must be non-negative (a moment of inertia), got " << value_of(c[k]);
             throw ModelError(body_location(m, i, false), s.str());
           }
       },
       [](const M&, const T& t, int i, S* g) {
         // Each off-diagonal parameter sets two entries of the symmetric matrix.
         const Matrix3<S>& J = t.inertia_com[i];
         map<6>(g) << J(0, 0), J(1, 1), J(2, 2), J(0, 1) + J(1, 0), J(0, 2) + J(2, 0),
             J(1, 2) + J(2, 1);
       },
       [](T& t, const M* m) { reset(t.inertia_com, nbodies_or_keep(m)); }},
      // ---- per body: its joint ----
      {Owner::Body, [](const M&, int) { return 3; },
       [](const Model& m, int i, std::vector<std::string>& out) { add_names(out, m.joint_names[i] + ".origin", {"x", "y", "z"}); },
       [](const M& m, int i, S* p) { map<3>(p) = m.joint_placement[i].p; },
       [](const M&, int i, const S* p, int, M& out) { out.joint_placement[i].p = map<3>(p); },
       [](const M&, const T& t, int i, S* g) { map<3>(g) = t.placement_p[i]; },
       [](T& t, const M* m) { reset(t.placement_p, nbodies_or_keep(m)); }},
      {Owner::Body, [](const M&, int) { return 3; },
       [](const Model& m, int i, std::vector<std::string>& out) {
         add_names(out, m.joint_names[i] + ".origin", {"roll", "pitch", "yaw"});
       },
       [](const M& m, int i, S* p) { map<3>(p) = matrix_to_rpy<S>(m.joint_placement[i].R); },
       [](const M&, int i, const S* p, int, M& out) {
         out.joint_placement[i].R = rpy_to_matrix<S>(Vector3<S>(map<3>(p)));
       },
       [](const M& m, const T& t, int i, S* g) {
         map<3>(g) = rpy_gradient<S>(m.joint_placement[i].R, t.placement_R[i]);
       },
       [](T& t, const M* m) { reset(t.placement_R, nbodies_or_keep(m)); }},
      // revolute, continuous, prismatic: the axis, a direction (normalised by with_params)
      {Owner::Body, [](const M& m, int i) { return has_axis(m.joint_type[i]) ? 3 : 0; },
       [](const Model& m, int i, std::vector<std::string>& out) { add_names(out, m.joint_names[i] + ".axis", {"x", "y", "z"}); },
       [](const M& m, int i, S* p) { map<3>(p) = m.joint_axis[i]; },
       [](const M& m, int i, const S* p, int, M& out) {
         const Vector3<S> a = map<3>(p);
         using std::sqrt;
         const S n = sqrt(a.squaredNorm());
         if (!(value_of(n) > 0)) throw ModelError(body_location(m, i, true), "axis parameters must not all be zero");
         out.joint_axis[i] = a / n;
       },
       [](const M& m, const T& t, int i, S* g) {  // through with_params' normalisation, at the model's unit axis
         const Vector3<S>& a = m.joint_axis[i];
         map<3>(g) = t.axis[i] - a * a.dot(t.axis[i]);
       },
       [](T& t, const M* m) { reset(t.axis, nbodies_or_keep(m)); }},
      // per DoF k, interleaved: damping, armature, stiffness ("[k]" only when the joint has several)
      {Owner::Body, [](const M& m, int i) { return 3 * m.joint_nv(i); },
       [](const Model& m, int i, std::vector<std::string>& out) {
         const int nvi = m.joint_nv(i);
         for (int k = 0; k < nvi; ++k)
           for (const char* c : {".damping", ".armature", ".stiffness"}) out.push_back(indexed(m.joint_names[i] + c, k, nvi));
       },
       [](const M& m, int i, S* p) {
         for (int k = 0, iv = m.idx_v[i]; k < m.joint_nv(i); ++k)
           p[3 * k] = m.damping[iv + k], p[3 * k + 1] = m.armature[iv + k], p[3 * k + 2] = m.stiffness[iv + k];
       },
       [](const M& m, int i, const S* p, int, M& out) {
         for (int k = 0, iv = m.idx_v[i]; k < m.joint_nv(i); ++k)
           out.damping[iv + k] = p[3 * k], out.armature[iv + k] = p[3 * k + 1], out.stiffness[iv + k] = p[3 * k + 2];
       },
       [](const M& m, const T& t, int i, S* g) {
         for (int k = 0, iv = m.idx_v[i]; k < m.joint_nv(i); ++k)
           g[3 * k] = t.damping[iv + k], g[3 * k + 1] = t.armature[iv + k], g[3 * k + 2] = t.stiffness[iv + k];
       },
       [](T& t, const M* m) {
         const int nv = m ? m->nv : -1;
         reset(t.damping, nv), reset(t.armature, nv), reset(t.stiffness, nv);
       }},
      // scalar-coordinate joints: the spring rest position per coordinate (quaternions have none)
      {Owner::Body, [](const M& m, int i) { return has_rest(m.joint_type[i]) ? m.joint_nq(i) : 0; },
       [](const Model& m, int i, std::vector<std::string>& out) {
         const int nqi = m.joint_nq(i);
         for (int k = 0; k < nqi; ++k) out.push_back(indexed(m.joint_names[i] + ".rest", k, nqi));
       },
       [](const M& m, int i, S* p) {
         for (int k = 0; k < m.joint_nq(i); ++k) p[k] = m.q_rest[m.idx_q[i] + k];
       },
       [](const M& m, int i, const S* p, int, M& out) {
         for (int k = 0; k < m.joint_nq(i); ++k) out.q_rest[m.idx_q[i] + k] = p[k];
       },
       [](const M& m, const T& t, int i, S* g) {
         for (int k = 0; k < m.joint_nq(i); ++k) g[k] = t.q_rest[m.idx_q[i] + k];
       },
       [](T& t, const M* m) { reset(t.q_rest, m ? m->nq : -1); }},
      // per DoF with dry friction: the bound of its friction row
      {Owner::Body,
       [](const M& m, int i) {
         int n = 0;
         for_each_frictional_dof(m, i, [&](int, int) { ++n; });
         return n;
       },
       [](const Model& m, int i, std::vector<std::string>& out) {
         for_each_frictional_dof(m, i, [&](int k, int) {
           out.push_back(indexed(m.joint_names[i] + ".frictionloss", k, m.joint_nv(i)));
         });
       },
       [](const M& m, int i, S* p) {
         for_each_frictional_dof(m, i, [&](int k, int n) { p[n] = m.frictionloss[m.idx_v[i] + k]; });
       },
       [](const M& m, int i, const S* p, int at, M& out) {
         for_each_frictional_dof(m, i, [&](int k, int n) {
           // 0 would remove the DoF's friction row and, with it, this parameter (with_frictionloss does that)
           const double f = value_of(p[n]);
           if (!std::isfinite(f) || !(f > 0.0))
             fail_element(body_location(m, i, true), indexed(m.joint_names[i] + ".frictionloss", k, m.joint_nv(i)),
                          at + n, "positive and finite (Model.with_frictionloss removes a joint's friction)", f);
           out.frictionloss[m.idx_v[i] + k] = p[n];
         });
       },
       [](const M& m, const T& t, int i, S* g) {
         for_each_frictional_dof(m, i, [&](int k, int n) { g[n] = t.frictionloss[m.idx_v[i] + k]; });
       },
       [](T& t, const M* m) { reset(t.frictionloss, m ? m->nv : -1); }},
      // ---- the model: gravity ----
      {Owner::Global, [](const M&, int) { return 3; },
       [](const Model&, int, std::vector<std::string>& out) { add_names(out, "gravity", {"x", "y", "z"}); },
       [](const M& m, int, S* p) { map<3>(p) = m.gravity; },
       [](const M&, int, const S* p, int, M& out) { out.gravity = map<3>(p); },
       [](const M&, const T& t, int, S* g) { map<3>(g) = t.gravity; },
       [](T& t, const M*) { t.gravity.setZero(); }},
      // ---- per geom ----
      {Owner::Geom, [](const M&, int) { return 1; },
       [](const Model& m, int k, std::vector<std::string>& out) { out.push_back(m.geoms[k].name + ".friction"); },
       [](const M& m, int k, S* p) { p[0] = m.geoms[k].friction; },
       [](const M& m, int k, const S* p, int at, M& out) {
         const double friction = value_of(p[0]);
         if (!std::isfinite(friction) || friction < 0) fail_geom(m, k, at, "friction", "non-negative and finite", friction);
         out.geoms[k].friction = p[0];
       },
       [](const M&, const T& t, int k, S* g) { g[0] = t.geom_friction[k]; },
       [](T& t, const M* m) { reset(t.geom_friction, ngeoms_or_keep(m)); }},
      {Owner::Geom, [](const M&, int) { return 1; },
       [](const Model& m, int k, std::vector<std::string>& out) { out.push_back(m.geoms[k].name + ".restitution"); },
       [](const M& m, int k, S* p) { p[0] = m.geoms[k].restitution; },
       [](const M& m, int k, const S* p, int at, M& out) {
         // At most 1 (above, a bounce gains energy). Below 0 is accepted: the default 0 sits on that
         // bound and central differences (gradcheck, torch/jax gradient checks) step below it; the
         // solvers' bounce target -e v_n continues smoothly there.
         const double restitution = value_of(p[0]);
         if (!std::isfinite(restitution) || restitution > 1)
           fail_geom(m, k, at, "restitution", "at most 1 and finite", restitution);
         out.geoms[k].restitution = p[0];
       },
       [](const M&, const T& t, int k, S* g) { g[0] = t.geom_restitution[k]; },
       [](T& t, const M* m) { reset(t.geom_restitution, ngeoms_or_keep(m)); }},
      // the size entries the geom's type uses (geom_size_count)
      {Owner::Geom, [](const M& m, int k) { return geom_size_count(m.geoms[k].type); },
       [](const Model& m, int k, std::vector<std::string>& out) {
         for (int j = 0; j < geom_size_count(m.geoms[k].type); ++j)
           out.push_back(m.geoms[k].name + ".size[" + std::to_string(j) + "]");
       },
       [](const M& m, int k, S* p) {
         for (int j = 0; j < geom_size_count(m.geoms[k].type); ++j) p[j] = m.geoms[k].size[j];
       },
       [](const M& m, int k, const S* p, int at, M& out) {
         for (int j = 0; j < geom_size_count(m.geoms[k].type); ++j) {
           const double size = value_of(p[j]);
           if (!std::isfinite(size) || !(size > 0))
             fail_geom(m, k, at + j, "size[" + std::to_string(j) + "]", "positive and finite", size);
           out.geoms[k].size[j] = p[j];
         }
       },
       [](const M& m, const T& t, int k, S* g) {
         for (int j = 0; j < geom_size_count(m.geoms[k].type); ++j) g[j] = t.geom_size[k][j];
       },
       [](T& t, const M* m) { reset(t.geom_size, ngeoms_or_keep(m)); }},
      {Owner::Geom, [](const M&, int) { return 3; },
       [](const Model& m, int k, std::vector<std::string>& out) { add_names(out, m.geoms[k].name + ".origin", {"x", "y", "z"}); },
       [](const M& m, int k, S* p) { map<3>(p) = m.geoms[k].placement.p; },
       [](const M&, int k, const S* p, int, M& out) { out.geoms[k].placement.p = map<3>(p); },
       [](const M&, const T& t, int k, S* g) { map<3>(g) = t.geom_placement_p[k]; },
       [](T& t, const M* m) { reset(t.geom_placement_p, ngeoms_or_keep(m)); }},
      {Owner::Geom, [](const M&, int) { return 3; },
       [](const Model& m, int k, std::vector<std::string>& out) {
         add_names(out, m.geoms[k].name + ".origin", {"roll", "pitch", "yaw"});
       },
       [](const M& m, int k, S* p) { map<3>(p) = matrix_to_rpy<S>(m.geoms[k].placement.R); },
       [](const M&, int k, const S* p, int, M& out) {
         out.geoms[k].placement.R = rpy_to_matrix<S>(Vector3<S>(map<3>(p)));
       },
       [](const M& m, const T& t, int k, S* g) {
         map<3>(g) = rpy_gradient<S>(m.geoms[k].placement.R, t.geom_placement_R[k]);
       },
       [](T& t, const M* m) { reset(t.geom_placement_R, ngeoms_or_keep(m)); }},
      // ---- the model: contact settings. ContactSettings holds doubles: a derivative carried by
      //      these entries is dropped by with_params (their gradients come from the hand-written VJPs).
      {Owner::Global, [](const M&, int) { return kContactSettings; },
       [](const Model&, int, std::vector<std::string>& out) {
         for (const char* c : kContactSettingNames) out.push_back(std::string("contact.") + c);
       },
       [](const M& m, int, S* p) {
         const auto settings = contact_fields(m.contact);
         for (int j = 0; j < kContactSettings; ++j) p[j] = S(*settings[j]);
       },
       [](const M&, int, const S* p, int, M& out) {
         const auto settings = contact_fields(out.contact);
         for (int j = 0; j < kContactSettings; ++j) *settings[j] = value_of(p[j]);
       },
       [](const M&, const T& t, int, S* g) {
         const auto settings_bar = contact_fields(t.contact);
         for (int j = 0; j < kContactSettings; ++j) g[j] = *settings_bar[j];
       },
       [](T& t, const M*) { t.contact = typename T::ContactSettingsBar{}; }, true},
      // ---- per actuator: its kind's gains ----
      {Owner::Actuator, [](const M& m, int k) { return kind_param_count(m.actuators[k].kind); },
       [](const Model& m, int k, std::vector<std::string>& out) {
         const std::string& n = m.actuators[k].name;
         switch (m.actuators[k].kind) {
           case ActuatorKind::Motor: break;
           case ActuatorKind::Position: add_names(out, n, {"kp", "kv"}); break;
           case ActuatorKind::Velocity: add_names(out, n, {"kv"}); break;
           case ActuatorKind::General:
             add_names(out, n, {"gain[0]", "gain[1]", "gain[2]", "bias[0]", "bias[1]", "bias[2]"});
             break;
           case ActuatorKind::Servo: add_names(out, n, {"kp", "kv", "velocity_limit"}); break;
         }
       },
       [](const M& m, int k, S* p) {
         const ActuatorTpl<S>& a = m.actuators[k];
         switch (a.kind) {
           case ActuatorKind::Motor: break;
           case ActuatorKind::Position: p[0] = a.gain[0], p[1] = -a.bias[2]; break;
           case ActuatorKind::Velocity: p[0] = a.gain[0]; break;
           case ActuatorKind::General: map<3>(p) = a.gain, map<3>(p + 3) = a.bias; break;
           case ActuatorKind::Servo: p[0] = a.servo_kp, p[1] = a.servo_kv, p[2] = a.servo_velocity_limit; break;
         }
       },
       [](const M& m, int k, const S* p, int at, M& out) {
         ActuatorTpl<S>& a = out.actuators[k];
         static const char* const kGeneral[] = {"gain[0]", "gain[1]", "gain[2]", "bias[0]", "bias[1]", "bias[2]"};
         switch (a.kind) {
           case ActuatorKind::Motor: break;
           case ActuatorKind::Position:
             check_finite_actuator(m, k, at, "kp", p[0]), check_finite_actuator(m, k, at + 1, "kv", p[1]);
             a.gain[0] = p[0], a.bias[1] = -p[0], a.bias[2] = -p[1];
             break;
           case ActuatorKind::Velocity:
             check_finite_actuator(m, k, at, "kv", p[0]);
             a.gain[0] = p[0], a.bias[2] = -p[0];
             break;
           case ActuatorKind::General:
             for (int j = 0; j < 6; ++j) check_finite_actuator(m, k, at + j, kGeneral[j], p[j]);
             a.gain = map<3>(p), a.bias = map<3>(p + 3);
             break;
           case ActuatorKind::Servo:
             check_finite_actuator(m, k, at, "kp", p[0]), check_finite_actuator(m, k, at + 1, "kv", p[1]);
             if (!(value_of(p[2]) >= 0)) fail_actuator(m, k, at + 2, "velocity_limit", "non-negative", value_of(p[2]));
             a.servo_kp = p[0], a.servo_kv = p[1], a.servo_velocity_limit = p[2];
             break;
         }
       },
       [](const M& m, const T& t, int k, S* g) {
         switch (m.actuators[k].kind) {
           case ActuatorKind::Motor: break;
           case ActuatorKind::Position:
             g[0] = t.actuator_gain[k][0] - t.actuator_bias[k][1], g[1] = -t.actuator_bias[k][2];
             break;
           case ActuatorKind::Velocity: g[0] = t.actuator_gain[k][0] - t.actuator_bias[k][2]; break;
           case ActuatorKind::General: map<3>(g) = t.actuator_gain[k], map<3>(g + 3) = t.actuator_bias[k]; break;
           case ActuatorKind::Servo: map<3>(g) = t.actuator_servo[k]; break;
         }
       },
       [](T& t, const M* m) {
         const int nu = nu_or_keep(m);
         reset(t.actuator_gain, nu), reset(t.actuator_bias, nu), reset(t.actuator_servo, nu);
       }},
      {Owner::Actuator, [](const M&, int) { return 1; },
       [](const Model& m, int k, std::vector<std::string>& out) { out.push_back(m.actuators[k].name + ".gear"); },
       [](const M& m, int k, S* p) { p[0] = m.actuators[k].gear; },
       [](const M& m, int k, const S* p, int at, M& out) {
         check_finite_actuator(m, k, at, "gear", p[0]);
         out.actuators[k].gear = p[0];
       },
       [](const M&, const T& t, int k, S* g) { g[0] = t.actuator_gear[k]; },
       [](T& t, const M* m) { reset(t.actuator_gear, nu_or_keep(m)); }},
      {Owner::Actuator, [](const M& m, int k) { return m.actuators[k].ctrl_limited ? 2 : 0; },
       [](const Model& m, int k, std::vector<std::string>& out) {
         add_names(out, m.actuators[k].name + ".ctrlrange", {"lower", "upper"});
       },
       [](const M& m, int k, S* p) { p[0] = m.actuators[k].ctrl_lower, p[1] = m.actuators[k].ctrl_upper; },
       [](const M& m, int k, const S* p, int at, M& out) {
         set_range(m, k, p, at, "ctrlrange", out.actuators[k].ctrl_lower, out.actuators[k].ctrl_upper);
       },
       [](const M&, const T& t, int k, S* g) { map<2>(g) = t.actuator_ctrl_range[k]; },
       [](T& t, const M* m) { reset(t.actuator_ctrl_range, nu_or_keep(m)); }},
      {Owner::Actuator, [](const M& m, int k) { return m.actuators[k].force_limited ? 2 : 0; },
       [](const Model& m, int k, std::vector<std::string>& out) {
         add_names(out, m.actuators[k].name + ".forcerange", {"lower", "upper"});
       },
       [](const M& m, int k, S* p) { p[0] = m.actuators[k].force_lower, p[1] = m.actuators[k].force_upper; },
       [](const M& m, int k, const S* p, int at, M& out) {
         set_range(m, k, p, at, "forcerange", out.actuators[k].force_lower, out.actuators[k].force_upper);
       },
       [](const M&, const T& t, int k, S* g) { map<2>(g) = t.actuator_force_range[k]; },
       [](T& t, const M* m) { reset(t.actuator_force_range, nu_or_keep(m)); }},
      // ---- per joint coupling: its polynomial (doubles in the Model) ----
      {Owner::Coupling, [](const M&, int) { return 5; },
       [](const Model& m, int c, std::vector<std::string>& out) {
         for (int k = 0; k < 5; ++k) out.push_back(m.joint_couplings[c].name + ".polycoef[" + std::to_string(k) + "]");
       },
       [](const M& m, int c, S* p) {
         for (int k = 0; k < 5; ++k) p[k] = S(m.joint_couplings[c].polycoef[static_cast<size_t>(k)]);
       },
       [](const M&, int c, const S* p, int, M& out) {
         for (int k = 0; k < 5; ++k) out.joint_couplings[c].polycoef[static_cast<size_t>(k)] = value_of(p[k]);
       },
       [](const M&, const T& t, int c, S* g) { map<5>(g) = t.coupling_polycoef[c]; },
       [](T& t, const M* m) { reset(t.coupling_polycoef, m ? static_cast<int>(m->joint_couplings.size()) : -1); },
       true},
      // ---- per body connection: its anchors and, for a weld, the held orientation (doubles) ----
      {Owner::Connection, [](const M&, int) { return 3; },
       [](const Model& m, int c, std::vector<std::string>& out) {
         add_names(out, m.body_connections[c].name + ".anchor1", {"x", "y", "z"});
       },
       [](const M& m, int c, S* p) { map<3>(p) = m.body_connections[c].anchor1.template cast<S>(); },
       [](const M&, int c, const S* p, int, M& out) {
         for (int k = 0; k < 3; ++k) out.body_connections[c].anchor1[k] = value_of(p[k]);
       },
       [](const M&, const T& t, int c, S* g) { map<3>(g) = t.connection_anchor1[c]; },
       [](T& t, const M* m) { reset(t.connection_anchor1, m ? static_cast<int>(m->body_connections.size()) : -1); },
       true},
      {Owner::Connection, [](const M&, int) { return 3; },
       [](const Model& m, int c, std::vector<std::string>& out) {
         add_names(out, m.body_connections[c].name + ".anchor2", {"x", "y", "z"});
       },
       [](const M& m, int c, S* p) { map<3>(p) = m.body_connections[c].anchor2.template cast<S>(); },
       [](const M&, int c, const S* p, int, M& out) {
         for (int k = 0; k < 3; ++k) out.body_connections[c].anchor2[k] = value_of(p[k]);
       },
       [](const M&, const T& t, int c, S* g) { map<3>(g) = t.connection_anchor2[c]; },
       [](T& t, const M* m) { reset(t.connection_anchor2, m ? static_cast<int>(m->body_connections.size()) : -1); },
       true},
      {Owner::Connection, [](const M& m, int c) { return m.body_connections[c].weld ? 3 : 0; },
       [](const Model& m, int c, std::vector<std::string>& out) {
         add_names(out, m.body_connections[c].name + ".rotation", {"roll", "pitch", "yaw"});
       },
       [](const M& m, int c, S* p) {
         map<3>(p) = matrix_to_rpy<S>(Matrix3<S>(m.body_connections[c].rotation.template cast<S>()));
       },
       [](const M&, int c, const S* p, int, M& out) {
         const Vector3<double> rpy(value_of(p[0]), value_of(p[1]), value_of(p[2]));
         out.body_connections[c].rotation = rpy_to_matrix<double>(rpy);
       },
       [](const M& m, const T& t, int c, S* g) {
         map<3>(g) = rpy_gradient<S>(Matrix3<S>(m.body_connections[c].rotation.template cast<S>()),
                                     t.connection_rotation[c]);
       },
       [](T& t, const M* m) { reset(t.connection_rotation, m ? static_cast<int>(m->body_connections.size()) : -1); },
       true},
      // ---- per fixed tendon: its spring-damper (doubles) ----
      {Owner::Tendon, [](const M&, int) { return 3; },
       [](const Model& m, int k, std::vector<std::string>& out) {
         add_names(out, m.tendons[k].name, {"stiffness", "damping", "spring_length"});
       },
       [](const M& m, int k, S* p) {
         const FixedTendon& t = m.tendons[k];
         p[0] = S(t.stiffness), p[1] = S(t.damping), p[2] = S(t.spring_length);
       },
       [](const M& m, int k, const S* p, int at, M& out) {
         FixedTendon& t = out.tendons[k];
         for (int j = 0; j < 2; ++j) {
           const double x = value_of(p[j]);
           if (!std::isfinite(x) || x < 0.0)
             fail_element(m.tendons[k].where, m.tendons[k].name + (j == 0 ? ".stiffness" : ".damping"), at + j,
                          "non-negative and finite", x);
         }
         t.stiffness = value_of(p[0]), t.damping = value_of(p[1]), t.spring_length = value_of(p[2]);
       },
       [](const M&, const T& t, int k, S* g) { map<3>(g) = t.tendon_spring[k]; },
       [](T& t, const M* m) { reset(t.tendon_spring, m ? static_cast<int>(m->tendons.size()) : -1); }, true},
      // ---- per network: its weights, layer after layer ----
      {Owner::Network, [](const M& m, int n) { return m.networks[n].shape.param_count(); },
       [](const Model& m, int n, std::vector<std::string>& out) {
         for (std::string& name : dense_param_names(m.networks[n].shape, m.networks[n].name)) out.push_back(std::move(name));
       },
       [](const M& m, int n, S* p) {
         const VectorX<S>& w = m.networks[n].weights;
         std::copy(w.data(), w.data() + w.size(), p);
       },
       // any finite weight is valid; a NaN weight is the user's to make (it sets the worlds' status flags)
       [](const M&, int n, const S* p, int, M& out) {
         VectorX<S>& w = out.networks[n].weights;
         std::copy(p, p + w.size(), w.data());
       },
       [](const M&, const T& t, int n, S* g) {
         std::copy(t.network_weights[n].data(), t.network_weights[n].data() + t.network_weights[n].size(), g);
       },
       [](T& t, const M* m) {
         if (m) {
           t.network_weights.resize(m->networks.size());
           for (size_t n = 0; n < m->networks.size(); ++n) t.network_weights[n].resize(m->networks[n].shape.param_count());
         }
         for (VectorX<S>& w : t.network_weights) w.setZero();
       }},
  };
  return table;
}

// Calls f(field, element, offset, count) for every group of every element, in the flat layout's
// order (a run of consecutive fields of one owner is walked element by element); returns the size.
template <class S, class F>
int for_each_group(const ModelTpl<S>& model, F&& f) {
  const std::vector<Field<S>>& table = fields<S>();
  int offset = 0;
  for (size_t first = 0; first < table.size();) {
    size_t last = first;
    while (last < table.size() && table[last].owner == table[first].owner) ++last;
    const Owner owner = table[first].owner;
    const int elements = owner == Owner::Body         ? model.nbodies()
                         : owner == Owner::Geom       ? model.ngeoms()
                         : owner == Owner::Actuator   ? model.nu()
                         : owner == Owner::Network    ? static_cast<int>(model.networks.size())
                         : owner == Owner::Coupling   ? static_cast<int>(model.joint_couplings.size())
                         : owner == Owner::Connection ? static_cast<int>(model.body_connections.size())
                         : owner == Owner::Tendon     ? static_cast<int>(model.tendons.size())
                                                      : 1;
    for (int e = 0; e < elements; ++e)
      for (size_t k = first; k < last; ++k) {
        const int n = table[k].count(model, e);
        f(table[k], e, offset, n);
        offset += n;
      }
    first = last;
  }
  return offset;
}

}  // namespace

template <class S>
ModelTangentTpl<S>::ModelTangentTpl(const ModelTpl<S>& model) {
  for (const Field<S>& field : fields<S>()) field.clear(*this, &model);
}

template <class S>
void ModelTangentTpl<S>::setZero() {
  for (const Field<S>& field : fields<S>()) field.clear(*this, nullptr);
}

std::vector<std::string> param_names(const Model& model) {
  std::vector<std::string> names;
  for_each_group<double>(model, [&](const Field<double>& field, int element, int, int n) {
    if (n > 0) field.names(model, element, names);
  });
  return names;
}

std::vector<int> double_valued_params(const Model& model) {
  std::vector<int> out;
  for_each_group<double>(model, [&](const Field<double>& field, int, int offset, int n) {
    if (field.doubles)
      for (int k = 0; k < n; ++k) out.push_back(offset + k);
  });
  return out;
}

template <class S>
VectorX<S> get_params(const ModelTpl<S>& model) {
  VectorX<S> p(for_each_group<S>(model, [](const Field<S>&, int, int, int) {}));
  for_each_group<S>(model, [&](const Field<S>& field, int element, int offset, int n) {
    if (n > 0) field.get(model, element, p.data() + offset);
  });
  return p;
}

template <class S>
ModelTpl<S> with_params(const ModelTpl<S>& model, const VecRef<S>& p) {
  check_size("p", p.size(), for_each_group<S>(model, [](const Field<S>&, int, int, int) {}));
  ModelTpl<S> out = model;
  // In layout order, so the first entry out of range is the one reported.
  for_each_group<S>(model, [&](const Field<S>& field, int element, int offset, int n) {
    if (n <= 0) return;
    field.set(model, element, p.data() + offset, offset, out);  // its own checks first (a mass > 0, ...)
    // A NaN network weight is numerical trouble, flagged by the step (Status.NON_FINITE) like a NaN
    // state; any other parameter must be finite.
    if (field.owner == Owner::Network) return;
    for (int k = 0; k < n; ++k) {
      const double x = value_of(p[offset + k]);
      if (std::isfinite(x)) continue;
      std::string name = "p[" + std::to_string(offset + k) + "]";
      if constexpr (std::is_same_v<S, double>) {
        std::vector<std::string> names;
        field.names(model, element, names);
        if (k < static_cast<int>(names.size())) name = "'" + names[k] + "' (" + name + ")";
      }
      std::ostringstream message;
      message << "parameter " << name << " must be finite, got " << x;
      throw ModelError(SourceLocation{model.source, 0, ""}, message.str());
    }
  });
  // Checked when contact is on, as step() does. Off, the settings are inert, and defaults on their
  // bounds (cfm = 0, viscous_friction = 0) must survive a finite-difference step below them.
  if (out.contact.model != ContactModel::None) check_contact_settings(out.contact);
  return out;
}

template <class S>
VectorX<S> params_gradient(const ModelTpl<S>& model, const ModelTangentTpl<S>& t) {
  VectorX<S> g(for_each_group<S>(model, [](const Field<S>&, int, int, int) {}));
  for_each_group<S>(model, [&](const Field<S>& field, int element, int offset, int n) {
    if (n > 0) field.gradient(model, t, element, g.data() + offset);
  });
  return g;
}

#define GRADYN_INSTANTIATE(S)                                                          \
  template struct ModelTangentTpl<S>;                                                  \
  template VectorX<S> get_params<S>(const ModelTpl<S>&);                               \
  template ModelTpl<S> with_params<S>(const ModelTpl<S>&, const VecRef<S>&);           \
  template VectorX<S> params_gradient<S>(const ModelTpl<S>&, const ModelTangentTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
