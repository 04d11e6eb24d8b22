// Flat views of every Model parameter in the ModelTangent's own representation, for gradient tests:
// pack a ModelTangent into a vector, write a vector of (AD or perturbed) values into a model's
// fields, and the projection of the raw model fields onto the directions that keep placement
// rotations orthogonal, revolute axes unit and inertias symmetric (see src/dynamics/aba_vjp.cpp).
//
// Layout, per body: mass, com (3), inertia_com (9, column-major), placement_R (9, column-major),
// placement_p (3), axis (3); then damping, armature, stiffness (nv each), q_rest (nq), gravity (3);
// then per geom: size (3), placement_R (9, column-major), placement_p (3), friction, restitution;
// then the contact settings (kContactSettingsInPack, in ModelTangentTpl::ContactSettingsBar's
// order). ContactSettings holds doubles: write_params keeps only the values there, so forward-mode
// AD sees no derivative through them (compare that block with finite differences).
#pragma once

#include <array>
#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn::test {

inline constexpr int kBodyParams = 1 + 3 + 9 + 9 + 3 + 3;
inline constexpr int kGeomParams = 3 + 9 + 3 + 1 + 1;
inline constexpr int kContactSettingsInPack = 9;

inline int tangent_size(const Model& m) {
  return kBodyParams * m.nbodies() + 3 * m.nv + m.nq + 3 + kGeomParams * m.ngeoms() + kContactSettingsInPack;
}

// Pointers to the contact settings (or their adjoints; const when c is) in ContactSettingsBar's order.
template <class Settings>
auto contact_settings_fields(Settings& c) {
  return std::array{&c.stiffness, &c.exponent, &c.damping, &c.velocity_scale, &c.static_friction_ratio,
                    &c.viscous_friction, &c.erp, &c.slop, &c.cfm};
}

/// Name of entry k of the layout (for failure messages).
inline std::string tangent_entry_name(const Model& m, int k) {
  const int nb = m.nbodies();
  if (k < kBodyParams * nb) {
    const int b = k / kBodyParams, r = k % kBodyParams;
    const char* field = r < 1 ? "mass" : r < 4 ? "com" : r < 13 ? "inertia_com" : r < 22 ? "placement_R" : r < 25 ? "placement_p" : "axis";
    return m.body_names[b] + "." + field;
  }
  k -= kBodyParams * nb;
  if (k < 3 * m.nv) return std::string(k < m.nv ? "damping" : k < 2 * m.nv ? "armature" : "stiffness") + "[" + std::to_string(k % m.nv) + "]";
  k -= 3 * m.nv;
  if (k < m.nq) return "q_rest[" + std::to_string(k) + "]";
  k -= m.nq;
  if (k < 3) return "gravity";
  k -= 3;
  if (k < kGeomParams * m.ngeoms()) {
    const int g = k / kGeomParams, r = k % kGeomParams;
    const char* field = r < 3 ? "geom_size" : r < 12 ? "geom_placement_R" : r < 15 ? "geom_placement_p" : r < 16 ? "geom_friction" : "geom_restitution";
    return m.geoms[g].name + "." + field;
  }
  k -= kGeomParams * m.ngeoms();
  // "contact_" keeps these kinds apart from the joints' "stiffness" and "damping" (gradient_check.hpp)
  static constexpr const char* kSettings[] = {"stiffness", "exponent", "damping", "velocity_scale", "static_friction_ratio",
                                              "viscous_friction", "erp", "slop", "cfm"};
  return std::string("contact.contact_") + kSettings[k];
}

template <class S>
VectorX<S> pack_tangent(const ModelTpl<S>& model, const ModelTangentTpl<S>& t) {
  VectorX<S> x(tangent_size(model.template cast<double>()));
  int k = 0;
  auto put = [&](const auto& block) {
    for (int j = 0; j < block.size(); ++j) x[k++] = block.data()[j];
  };
  for (int b = 0; b < model.nbodies(); ++b) {
    x[k++] = t.mass[b];
    put(t.com[b]);
    put(t.inertia_com[b]);
    put(t.placement_R[b]);
    put(t.placement_p[b]);
    put(t.axis[b]);
  }
  put(t.damping);
  put(t.armature);
  put(t.stiffness);
  put(t.q_rest);
  put(t.gravity);
  for (size_t g = 0; g < t.geom_size.size(); ++g) {
    put(t.geom_size[g]);
    put(t.geom_placement_R[g]);
    put(t.geom_placement_p[g]);
    x[k++] = t.geom_friction[g];
    x[k++] = t.geom_restitution[g];
  }
  for (const S* field : contact_settings_fields(t.contact)) x[k++] = *field;
  return x;
}

/// The model's parameters in the layout above (the point the derivatives are taken at).
inline Eigen::VectorXd model_params(const Model& model) {
  ModelTangent t(model);
  for (int b = 0; b < model.nbodies(); ++b) {
    t.mass[b] = model.body_inertia[b].mass;
    t.com[b] = model.body_inertia[b].com;
    t.inertia_com[b] = model.body_inertia[b].inertia_com;
    t.placement_R[b] = model.joint_placement[b].R;
    t.placement_p[b] = model.joint_placement[b].p;
    t.axis[b] = model.joint_axis[b];
  }
  t.damping = model.damping;
  t.armature = model.armature;
  t.stiffness = model.stiffness;
  t.q_rest = model.q_rest;
  t.gravity = model.gravity;
  for (int g = 0; g < model.ngeoms(); ++g) {
    t.geom_size[g] = model.geoms[g].size;
    t.geom_placement_R[g] = model.geoms[g].placement.R;
    t.geom_placement_p[g] = model.geoms[g].placement.p;
    t.geom_friction[g] = model.geoms[g].friction;
    t.geom_restitution[g] = model.geoms[g].restitution;
  }
  const auto settings = contact_settings_fields(model.contact);
  const auto settings_bar = contact_settings_fields(t.contact);
  for (size_t j = 0; j < settings.size(); ++j) *settings_bar[j] = *settings[j];
  return pack_tangent(model, t);
}

/// Writes x (layout above) into the model's parameter fields. Build the model's Data afterwards
/// (its joint subspaces are taken from the axes).
template <class S, class Vec>
void write_params(ModelTpl<S>& model, const Vec& x) {
  int k = 0;
  auto get = [&](auto& block) {
    for (int j = 0; j < block.size(); ++j) block.data()[j] = x[k++];
  };
  for (int b = 0; b < model.nbodies(); ++b) {
    model.body_inertia[b].mass = x[k++];
    get(model.body_inertia[b].com);
    get(model.body_inertia[b].inertia_com);
    get(model.joint_placement[b].R);
    get(model.joint_placement[b].p);
    get(model.joint_axis[b]);
  }
  get(model.damping);
  get(model.armature);
  get(model.stiffness);
  get(model.q_rest);
  get(model.gravity);
  for (GeomTpl<S>& g : model.geoms) {
    get(g.size);
    get(g.placement.R);
    get(g.placement.p);
    g.friction = x[k++];
    g.restitution = x[k++];
  }
  for (double* field : contact_settings_fields(model.contact)) *field = value_of(x[k++]);  // doubles
}

/// Orthogonal projection (in place) of the model-field block of a gradient, the entries from
/// `offset` on in the layout above, onto the directions that keep the model valid: every placement
/// rotation orthogonal (geom placements included), every revolute axis unit and every inertia
/// symmetric.
///
/// Only the raw ModelTangent fields need it: the dynamics use model.joint_axis,
/// model.joint_placement.R and model.body_inertia as given, and ABA (world frame) and the RNEA its
/// adjoint differentiates (body frame) are the same function only on that manifold, so AD of ABA
/// on the raw field and the adjoint differ off it. q needs no projection (quaternions are read
/// normalised, so every q gives orthogonal rotations), nor the flat parameter vector (with_params
/// normalises axes, builds rotations from rpy and inertias symmetric), nor q_rest (used only by
/// the springs, whose adjoint is of the same formula).
inline void project_model_fields_to_manifold(const Model& model, int offset, Eigen::VectorXd& g) {
  for (int b = 0; b < model.nbodies(); ++b) {
    const int k = offset + kBodyParams * b;
    Eigen::Map<Eigen::Matrix3d> Ic(g.data() + k + 4);
    const Eigen::Matrix3d Ic_sym = 0.5 * (Ic + Ic.transpose());
    Ic = Ic_sym;
    Eigen::Map<Eigen::Matrix3d> G(g.data() + k + 13);
    const Eigen::Matrix3d& R = model.joint_placement[b].R;
    const Eigen::Matrix3d A = R.transpose() * G;
    G = R * (0.5 * (A - A.transpose()));
    const JointType t = model.joint_type[b];
    if (t == JointType::Revolute || t == JointType::Continuous) {
      const Eigen::Vector3d n = model.joint_axis[b].normalized();
      g.segment<3>(k + 25) -= n * n.dot(g.segment<3>(k + 25));
    }
  }
  const int geoms = offset + kBodyParams * model.nbodies() + 3 * model.nv + model.nq + 3;
  for (int j = 0; j < model.ngeoms(); ++j) {
    Eigen::Map<Eigen::Matrix3d> G(g.data() + geoms + kGeomParams * j + 3);
    const Eigen::Matrix3d& R = model.geoms[j].placement.R;
    const Eigen::Matrix3d A = R.transpose() * G;
    G = R * (0.5 * (A - A.transpose()));
  }
}

}  // namespace gradyn::test
