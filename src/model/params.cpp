// The flat parameter vector (layout documented in include/gradyn/model/params.hpp) and the chain
// rule from the Model-shaped adjoint to it.
#include "gradyn/model/params.hpp"

#include <array>
#include <cmath>
#include <sstream>
#include <utility>

#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {

bool has_axis(JointType t) {
  return t == JointType::Revolute || t == JointType::Continuous || t == JointType::Prismatic;
}
// Joints whose coordinates are plain numbers (no quaternion), so that each has a spring rest value.
bool has_rest(JointType t) { return has_axis(t) || t == JointType::Planar; }

// Where each body's parameters start in the flat vector; -1 where the joint has none.
struct BodyOffsets {
  int mass, com, inertia, origin, rpy, axis, dof, rest;
};
// Where each geom's parameters start; size has geom_size_count(type) entries (none for a plane).
struct GeomOffsets {
  int friction, restitution, size, origin, rpy;
};
struct Layout {
  std::vector<BodyOffsets> body;
  int gravity = 0;
  std::vector<GeomOffsets> geom;
  int contact = 0;  // kContactSettingNames.size() entries
  int size = 0;
};

// The ContactSettings fields in the flat vector, in order.
constexpr const char* kContactSettingNames[] = {"stiffness",        "exponent", "damping", "velocity_scale",
                                                "static_friction_ratio", "viscous_friction", "erp", "slop", "cfm"};
constexpr int kContactSettings = sizeof(kContactSettingNames) / sizeof(kContactSettingNames[0]);

// Pointers to the settings (or their adjoints) in kContactSettingNames' order.
template <class Settings>
auto contact_fields(Settings& c) {
  return std::array{&c.stiffness, &c.exponent, &c.damping, &c.velocity_scale, &c.static_friction_ratio,
                    &c.viscous_friction, &c.erp, &c.slop, &c.cfm};
}
static_assert(std::tuple_size_v<decltype(contact_fields(std::declval<ContactSettings&>()))> == kContactSettings);

template <class S>
Layout layout_of(const ModelTpl<S>& model) {
  Layout l;
  int k = 0;
  for (int i = 0; i < model.nbodies(); ++i) {
    const JointType t = model.joint_type[i];
    BodyOffsets o;
    o.mass = k;
    o.com = k + 1;
    o.inertia = k + 4;
    o.origin = k + 10;
    o.rpy = k + 13;
    k += 16;
    o.axis = has_axis(t) ? k : -1;
    k += has_axis(t) ? 3 : 0;
    o.dof = k;
    k += 3 * model.joint_nv(i);
    o.rest = has_rest(t) ? k : -1;
    k += has_rest(t) ? model.joint_nq(i) : 0;
    l.body.push_back(o);
  }
  l.gravity = k;
  k += 3;
  for (const GeomTpl<S>& g : model.geoms) {
    GeomOffsets o;
    o.friction = k;
    o.restitution = k + 1;
    o.size = k + 2;
    k += 2 + geom_size_count(g.type);
    o.origin = k;
    o.rpy = k + 3;
    k += 6;
    l.geom.push_back(o);
  }
  l.contact = k;
  l.size = k + kContactSettings;
  return l;
}

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

}  // namespace

template <class S>
ModelTangentTpl<S>::ModelTangentTpl(const ModelTpl<S>& model) {
  const int nb = model.nbodies();
  mass.resize(nb);
  com.resize(nb);
  inertia_com.resize(nb);
  placement_R.resize(nb);
  placement_p.resize(nb);
  axis.resize(nb);
  damping.resize(model.nv);
  armature.resize(model.nv);
  stiffness.resize(model.nv);
  q_rest.resize(model.nq);
  const int ng = model.ngeoms();
  geom_size.resize(ng);
  geom_placement_R.resize(ng);
  geom_placement_p.resize(ng);
  geom_friction.resize(ng);
  geom_restitution.resize(ng);
  setZero();
}

template <class S>
void ModelTangentTpl<S>::setZero() {
  for (auto& x : mass) x = S(0);
  for (auto& x : com) x.setZero();
  for (auto& x : inertia_com) x.setZero();
  for (auto& x : placement_R) x.setZero();
  for (auto& x : placement_p) x.setZero();
  for (auto& x : axis) x.setZero();
  damping.setZero();
  armature.setZero();
  stiffness.setZero();
  q_rest.setZero();
  gravity.setZero();
  for (auto& x : geom_size) x.setZero();
  for (auto& x : geom_placement_R) x.setZero();
  for (auto& x : geom_placement_p) x.setZero();
  geom_friction.setZero();
  geom_restitution.setZero();
  contact = ContactSettingsBar{};
}

std::vector<std::string> param_names(const Model& model) {
  std::vector<std::string> names;
  names.reserve(layout_of(model).size);
  for (int i = 0; i < model.nbodies(); ++i) {
    const std::string& b = model.body_names[i];
    const std::string& j = model.joint_names[i];
    names.push_back(b + ".mass");
    for (const char* c : {"x", "y", "z"}) names.push_back(b + ".com." + c);
    for (const char* c : {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"}) names.push_back(b + ".inertia." + c);
    for (const char* c : {"x", "y", "z", "roll", "pitch", "yaw"}) names.push_back(j + ".origin." + c);
    if (has_axis(model.joint_type[i]))
      for (const char* c : {"x", "y", "z"}) names.push_back(j + ".axis." + c);
    const int nvi = model.joint_nv(i);
    for (int k = 0; k < nvi; ++k)
      for (const char* c : {".damping", ".armature", ".stiffness"}) names.push_back(indexed(j + c, k, nvi));
    if (has_rest(model.joint_type[i])) {
      const int nqi = model.joint_nq(i);
      for (int k = 0; k < nqi; ++k) names.push_back(indexed(j + ".rest", k, nqi));
    }
  }
  for (const char* c : {"x", "y", "z"}) names.push_back(std::string("gravity.") + c);
  for (const Geom& g : model.geoms) {
    names.push_back(g.name + ".friction");
    names.push_back(g.name + ".restitution");
    for (int k = 0; k < geom_size_count(g.type); ++k) names.push_back(g.name + ".size[" + std::to_string(k) + "]");
    for (const char* c : {"x", "y", "z", "roll", "pitch", "yaw"}) names.push_back(g.name + ".origin." + c);
  }
  for (const char* c : kContactSettingNames) names.push_back(std::string("contact.") + c);
  return names;
}

template <class S>
VectorX<S> get_params(const ModelTpl<S>& model) {
  const Layout l = layout_of(model);
  VectorX<S> p(l.size);
  for (int i = 0; i < model.nbodies(); ++i) {
    const BodyOffsets& o = l.body[i];
    const Inertia<S>& I = model.body_inertia[i];
    p[o.mass] = I.mass;
    p.template segment<3>(o.com) = I.com;
    const Matrix3<S>& J = I.inertia_com;
    // Off-diagonal entries averaged: the stored matrix is symmetric up to rounding.
    p.template segment<6>(o.inertia) << J(0, 0), J(1, 1), J(2, 2), S(0.5) * (J(0, 1) + J(1, 0)),
        S(0.5) * (J(0, 2) + J(2, 0)), S(0.5) * (J(1, 2) + J(2, 1));
    p.template segment<3>(o.origin) = model.joint_placement[i].p;
    p.template segment<3>(o.rpy) = matrix_to_rpy<S>(model.joint_placement[i].R);
    if (o.axis >= 0) p.template segment<3>(o.axis) = model.joint_axis[i];
    const int iv = model.idx_v[i];
    for (int k = 0; k < model.joint_nv(i); ++k) {
      p[o.dof + 3 * k] = model.damping[iv + k];
      p[o.dof + 3 * k + 1] = model.armature[iv + k];
      p[o.dof + 3 * k + 2] = model.stiffness[iv + k];
    }
    if (o.rest >= 0) p.segment(o.rest, model.joint_nq(i)) = model.q_rest.segment(model.idx_q[i], model.joint_nq(i));
  }
  p.template segment<3>(l.gravity) = model.gravity;
  for (int k = 0; k < model.ngeoms(); ++k) {
    const GeomTpl<S>& g = model.geoms[k];
    const GeomOffsets& o = l.geom[k];
    p[o.friction] = g.friction;
    p[o.restitution] = g.restitution;
    for (int j = 0; j < geom_size_count(g.type); ++j) p[o.size + j] = g.size[j];
    p.template segment<3>(o.origin) = g.placement.p;
    p.template segment<3>(o.rpy) = matrix_to_rpy<S>(g.placement.R);
  }
  const auto settings = contact_fields(model.contact);
  for (int j = 0; j < kContactSettings; ++j) p[l.contact + j] = S(*settings[j]);
  return p;
}

template <class S>
ModelTpl<S> with_params(const ModelTpl<S>& model, const VecRef<S>& p) {
  const Layout l = layout_of(model);
  check_size("p", p.size(), l.size);
  ModelTpl<S> out = model;
  for (int i = 0; i < model.nbodies(); ++i) {
    const BodyOffsets& o = l.body[i];
    const double m_new = value_of(p[o.mass]), m_old = value_of(model.body_inertia[i].mass);
    // A body massless from the start (a link that only carries frames) may stay massless; the
    // builder has checked that something in its subtree has mass.
    if (!std::isfinite(m_new) || m_new < 0 || (m_new == 0 && m_old > 0)) {
      std::ostringstream s;
      s << "parameter '" << model.body_names[i] << ".mass' (p[" << o.mass << "]) must be positive and finite, got "
        << m_new;
      throw ModelError(SourceLocation{model.source, 0, "<body name='" + model.body_names[i] + "'>"}, s.str());
    }
    Inertia<S>& I = out.body_inertia[i];
    I.mass = p[o.mass];
    I.com = p.template segment<3>(o.com);
    const auto c = p.template segment<6>(o.inertia);
    I.inertia_com << c[0], c[3], c[4],  //
        c[3], c[1], c[5],               //
        c[4], c[5], c[2];
    out.joint_placement[i].p = p.template segment<3>(o.origin);
    out.joint_placement[i].R = rpy_to_matrix<S>(Vector3<S>(p.template segment<3>(o.rpy)));
    if (o.axis >= 0) {  // a joint axis is a direction: normalised, so any non-zero vector is valid
      const Vector3<S> a = p.template segment<3>(o.axis);
      using std::sqrt;
      const S n = sqrt(a.squaredNorm());
      if (!(value_of(n) > 0))
        throw ModelError(SourceLocation{model.source, 0, "<joint name='" + model.joint_names[i] + "'>"},
                         "axis parameters must not all be zero");
      out.joint_axis[i] = a / n;
    }
    const int iv = model.idx_v[i];
    for (int k = 0; k < model.joint_nv(i); ++k) {
      out.damping[iv + k] = p[o.dof + 3 * k];
      out.armature[iv + k] = p[o.dof + 3 * k + 1];
      out.stiffness[iv + k] = p[o.dof + 3 * k + 2];
    }
    if (o.rest >= 0) out.q_rest.segment(model.idx_q[i], model.joint_nq(i)) = p.segment(o.rest, model.joint_nq(i));
  }
  out.gravity = p.template segment<3>(l.gravity);
  for (int k = 0; k < model.ngeoms(); ++k) {
    GeomTpl<S>& g = out.geoms[k];
    const GeomOffsets& o = l.geom[k];
    // Out-of-range values fail here, naming the geom and the parameter, rather than in step().
    auto fail = [&](int index, const char* field, const char* expected) {
      std::ostringstream s;
      s << geom_type_name(g.type) << " geom '" << g.name << "': parameter '" << g.name << "." << field << "' (p["
        << index << "]) must be " << expected << ", got " << value_of(p[index]);
      const SourceLocation where = g.where.file.empty() && g.where.element.empty()
                                       ? SourceLocation{model.source, 0, "<geom name='" + g.name + "'>"}
                                       : g.where;
      throw ModelError(where, s.str());
    };
    const double friction = value_of(p[o.friction]), restitution = value_of(p[o.restitution]);
    if (!std::isfinite(friction) || friction < 0) fail(o.friction, "friction", "non-negative and finite");
    // Restitution: at most 1 (above, a bounce gains energy). Below 0 is accepted: the default 0
    // sits on that bound and central differences (gradcheck, torch/jax gradient checks) step
    // below it; the solvers' bounce target -e v_n continues smoothly there.
    if (!std::isfinite(restitution) || restitution > 1) fail(o.restitution, "restitution", "at most 1 and finite");
    g.friction = p[o.friction];
    g.restitution = p[o.restitution];
    for (int j = 0; j < geom_size_count(g.type); ++j) {
      const double size = value_of(p[o.size + j]);
      if (!std::isfinite(size) || !(size > 0))
        fail(o.size + j, ("size[" + std::to_string(j) + "]").c_str(), "positive and finite");
      g.size[j] = p[o.size + j];
    }
    g.placement.p = p.template segment<3>(o.origin);
    g.placement.R = rpy_to_matrix<S>(Vector3<S>(p.template segment<3>(o.rpy)));
  }
  // ContactSettings holds doubles: a derivative carried by these entries is dropped.
  const auto settings = contact_fields(out.contact);
  for (int j = 0; j < kContactSettings; ++j) *settings[j] = value_of(p[l.contact + j]);
  // Checked when contact is on, as step() does. Off, the settings are inert, and defaults on their
  // bounds (cfm = 0, viscous_friction = 0) must survive a finite-difference step below them.
  if (out.contact.model != ContactModel::None) check_contact_settings(out.contact);
  return out;
}

template <class S>
VectorX<S> params_gradient(const ModelTpl<S>& model, const ModelTangentTpl<S>& t) {
  const Layout l = layout_of(model);
  VectorX<S> g(l.size);
  for (int i = 0; i < model.nbodies(); ++i) {
    const BodyOffsets& o = l.body[i];
    g[o.mass] = t.mass[i];
    g.template segment<3>(o.com) = t.com[i];
    // Each off-diagonal parameter sets two entries of the symmetric matrix.
    const Matrix3<S>& T = t.inertia_com[i];
    g.template segment<6>(o.inertia) << T(0, 0), T(1, 1), T(2, 2), T(0, 1) + T(1, 0), T(0, 2) + T(2, 0),
        T(1, 2) + T(2, 1);
    g.template segment<3>(o.origin) = t.placement_p[i];
    g.template segment<3>(o.rpy) = rpy_gradient<S>(model.joint_placement[i].R, t.placement_R[i]);
    if (o.axis >= 0) {  // through with_params' normalisation, at the model's unit axis
      const Vector3<S>& a = model.joint_axis[i];
      g.template segment<3>(o.axis) = t.axis[i] - a * a.dot(t.axis[i]);
    }
    const int iv = model.idx_v[i];
    for (int k = 0; k < model.joint_nv(i); ++k) {
      g[o.dof + 3 * k] = t.damping[iv + k];
      g[o.dof + 3 * k + 1] = t.armature[iv + k];
      g[o.dof + 3 * k + 2] = t.stiffness[iv + k];
    }
    if (o.rest >= 0) g.segment(o.rest, model.joint_nq(i)) = t.q_rest.segment(model.idx_q[i], model.joint_nq(i));
  }
  g.template segment<3>(l.gravity) = t.gravity;
  for (int k = 0; k < model.ngeoms(); ++k) {
    const GeomOffsets& o = l.geom[k];
    g[o.friction] = t.geom_friction[k];
    g[o.restitution] = t.geom_restitution[k];
    for (int j = 0; j < geom_size_count(model.geoms[k].type); ++j) g[o.size + j] = t.geom_size[k][j];
    g.template segment<3>(o.origin) = t.geom_placement_p[k];
    g.template segment<3>(o.rpy) = rpy_gradient<S>(model.geoms[k].placement.R, t.geom_placement_R[k]);
  }
  const auto settings_bar = contact_fields(t.contact);
  for (int j = 0; j < kContactSettings; ++j) g[l.contact + j] = *settings_bar[j];
  return g;
}

#define GRADYN_INSTANTIATE(S)                                                          \
  template struct ModelTangentTpl<S>;                                                  \
  template VectorX<S> get_params<S>(const ModelTpl<S>&);                               \
  template ModelTpl<S> with_params<S>(const ModelTpl<S>&, const VecRef<S>&);           \
  template VectorX<S> params_gradient<S>(const ModelTpl<S>&, const ModelTangentTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
