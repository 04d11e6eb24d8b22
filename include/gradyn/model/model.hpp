// Model: everything that does not change during a simulation. Built once (by ModelBuilder or a
// loader), immutable afterwards. Bodies are numbered so that a parent always comes before its
// children; body i moves with joint i relative to body parent[i] (-1 is the world).
// Fixed joints never appear here: the builder merges the links they weld into their parent
// body and keeps each link as a Frame.
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gradyn/collision/geometry.hpp"
#include "gradyn/model/joint.hpp"

namespace gradyn {

enum class FrameKind : std::uint8_t { Link, Joint, Site };

/// A named frame rigidly attached to a body (a URDF link, an MJCF body or site, a joint frame).
template <class S>
struct FrameTpl {
  std::string name;
  FrameKind kind = FrameKind::Link;
  int body = -1;          // -1: attached to the world
  Pose<S> placement;      // pose of the frame in its body's frame

  template <class T> FrameTpl<T> cast() const { return {name, kind, body, placement.template cast<T>()}; }
};

template <class S>
struct ModelTpl {
  using Scalar = S;

  // --- sizes -------------------------------------------------------------------------------
  int nq = 0;  // configuration size
  int nv = 0;  // velocity (tangent) size
  int nbodies() const { return static_cast<int>(parent.size()); }

  // --- topology, one entry per body (= per moving joint) -------------------------------------
  std::vector<int> parent;           // parent body, -1 for the world
  std::vector<JointType> joint_type;
  std::vector<int> idx_q, idx_v;     // first index of the joint's entries in q and v
  std::vector<int> joint_nq_, joint_nv_;
  std::vector<std::string> joint_names;
  std::vector<std::string> body_names;  // the link that starts each body
  std::vector<std::vector<int>> children;  // derived from parent

  // --- parameters, one entry per body ---------------------------------------------------------
  std::vector<Pose<S>> joint_placement;  // joint frame in the parent body frame
  std::vector<Vector3<S>> joint_axis;    // unit axis in the joint frame (revolute, prismatic)
  std::vector<Inertia<S>> body_inertia;  // in the body frame (= joint child frame)

  // --- per-DoF parameters (size nv) ------------------------------------------------------------
  VectorX<S> damping;         // viscous: tau = -damping * v
  VectorX<S> armature;        // rotor inertia added to the diagonal of M
  VectorX<S> stiffness;       // spring: tau = -stiffness * (q (-) q_rest)
  VectorX<S> effort_limit;    // |tau| bound (inf: none); enforced by actuators
  VectorX<S> velocity_limit;  // |v| bound (inf: none)

  // --- per-coordinate parameters (size nq) -----------------------------------------------------
  VectorX<S> q_rest;          // spring rest configuration
  VectorX<S> lower_limit;     // position limits (-inf/inf where none, e.g. quaternions)
  VectorX<S> upper_limit;
  VectorX<S> q0;              // reference configuration (identity quaternions, MJCF qpos0)

  Vector3<S> gravity = Vector3<S>(S(0), S(0), S(-9.81));

  std::vector<FrameTpl<S>> frames;

  // --- collision (collision/collide.hpp) --------------------------------------------------------
  std::vector<GeomTpl<S>> geoms;
  // Body pairs (a < b; -1 is the world) whose geoms never collide: MJCF <contact><exclude>, or the user.
  std::vector<std::pair<int, int>> excluded_pairs;
  // Geoms of a body and of its parent body are skipped (they overlap at the joint) unless this is
  // set; the world is never such a parent, so a floating base still touches the floor.
  bool collide_parent_child = false;
  // Capacity of Data::contacts; 0 picks 8 per geom (at least 32).
  int max_contacts = 0;
  int ngeoms() const { return static_cast<int>(geoms.size()); }

  std::string name;
  std::string source;  // file the model was loaded from, if any

  // --- queries -------------------------------------------------------------------------------
  int joint_id(const std::string& joint_name) const;  // -1 if absent
  int body_id(const std::string& body_name) const;    // -1 if absent
  int frame_id(const std::string& frame_name) const;  // -1 if absent
  int geom_id(const std::string& geom_name) const;    // -1 if absent
  int joint_nq(int i) const { return joint_nq_[i]; }
  int joint_nv(int i) const { return joint_nv_[i]; }

  /// The same model with every parameter converted to scalar T (e.g. a forward-mode AD type).
  template <class T> ModelTpl<T> cast() const;
};

using Model = ModelTpl<double>;
using Frame = FrameTpl<double>;

template <class S>
int ModelTpl<S>::joint_id(const std::string& n) const {
  for (int i = 0; i < nbodies(); ++i)
    if (joint_names[i] == n) return i;
  return -1;
}
template <class S>
int ModelTpl<S>::body_id(const std::string& n) const {
  for (int i = 0; i < nbodies(); ++i)
    if (body_names[i] == n) return i;
  return -1;
}
template <class S>
int ModelTpl<S>::frame_id(const std::string& n) const {
  for (int i = 0; i < static_cast<int>(frames.size()); ++i)
    if (frames[i].name == n) return i;
  return -1;
}

template <class S>
int ModelTpl<S>::geom_id(const std::string& n) const {
  for (int i = 0; i < ngeoms(); ++i)
    if (geoms[i].name == n) return i;
  return -1;
}

template <class S>
template <class T>
ModelTpl<T> ModelTpl<S>::cast() const {
  ModelTpl<T> m;
  m.nq = nq;
  m.nv = nv;
  m.parent = parent;
  m.joint_type = joint_type;
  m.idx_q = idx_q;
  m.idx_v = idx_v;
  m.joint_nq_ = joint_nq_;
  m.joint_nv_ = joint_nv_;
  m.joint_names = joint_names;
  m.body_names = body_names;
  m.children = children;
  for (const auto& x : joint_placement) m.joint_placement.push_back(x.template cast<T>());
  for (const auto& x : joint_axis) m.joint_axis.push_back(x.template cast<T>());
  for (const auto& x : body_inertia) m.body_inertia.push_back(x.template cast<T>());
  m.damping = damping.template cast<T>();
  m.armature = armature.template cast<T>();
  m.stiffness = stiffness.template cast<T>();
  m.effort_limit = effort_limit.template cast<T>();
  m.velocity_limit = velocity_limit.template cast<T>();
  m.q_rest = q_rest.template cast<T>();
  m.lower_limit = lower_limit.template cast<T>();
  m.upper_limit = upper_limit.template cast<T>();
  m.q0 = q0.template cast<T>();
  m.gravity = gravity.template cast<T>();
  for (const auto& f : frames) m.frames.push_back(f.template cast<T>());
  for (const auto& g : geoms) m.geoms.push_back(g.template cast<T>());
  m.excluded_pairs = excluded_pairs;
  m.collide_parent_child = collide_parent_child;
  m.max_contacts = max_contacts;
  m.name = name;
  m.source = source;
  return m;
}

}  // namespace gradyn
