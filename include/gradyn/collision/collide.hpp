// Collision detection: geometry poses -> contacts (pair, point, normal, depth, frame).
//
//   forward_kinematics(model, data, q);   // data.oMi
//   collide(model, data, margin);         // data.contacts[0, data.ncontacts)
//
// Stages (each callable alone):
//   update_geom_poses  data.oMg[g] = oMi[body] * placement (world geoms: placement)
//   broadphase         world AABBs grown by the margin, sweep and prune along x (insertion sort of
//                      the order kept from the previous call: linear when little moved), then the
//                      y/z overlap test and the static filter -> data.broadphase_pairs, sorted (a < b)
//   narrowphase        collide_geoms on every candidate pair
// Static filter (geoms_may_collide): not on the same body; not body and parent body unless
// model.collide_parent_child (the world is nobody's parent here, so floating bodies touch the
// floor); MuJoCo's contype/conaffinity test; not an excluded body pair.
//
// Contacts are reported when the surfaces are closer than `margin` (depth > -margin). Normals
// point from geom a to geom b, a < b. Everything is templated on the scalar: with ADScalar, point,
// normal and depth carry derivatives w.r.t. body poses and geometry sizes (the set of pairs and
// the branch taken are discrete choices made on values).
//
// Pairs and methods (C = number of contacts at most):
//   plane-sphere, sphere-sphere, sphere-capsule, capsule-capsule (C=2 when nearly parallel),
//   sphere-box, sphere-cylinder: exact closest points / signed distance.       C=1
//   plane-capsule: both end spheres.                                             C=2
//   plane-box: the corners below the margin, the 4 deepest.                      C=4
//   plane-cylinder: 3 rim points of the lower cap (120 degrees apart, starting at the deepest)
//                   and the deepest rim point of the other cap.                  C=4
//   box-box: separating-axis test (15 axes, face axes preferred within a tolerance); face contact:
//            incident face clipped against the reference face (Sutherland-Hodgman); edge-edge: the
//            closest points of the two edges.                                    C=8
//   capsule-box, capsule-cylinder: the signed distance to the box/cylinder is convex along the
//            capsule's segment; its minimiser (golden section on values) and both ends are
//            treated as spheres.                                                 C=3
//   box-cylinder, cylinder-cylinder: APPROXIMATION by sampling: corners of the box and 16 rim
//            points + 2 cap centres of each cylinder tested against the other geom's signed
//            distance; the 4 deepest. It misses an edge crossing the cylinder's curved side
//            with no sample inside (reported as no contact).                     C=4
//   Convex hulls (meshes; a box is handled as the unit cube's hull scaled by its half-extents):
//   plane-hull: every vertex within the margin; more than C: the deepest, then repeatedly the one
//            farthest from those kept (the kept points span the contact region).  C=8
//   sphere-hull: exact signed distance to the polytope (inside: the nearest face plane; outside:
//            the closest face, edge or vertex).                                  C=1
//   capsule-hull: as capsule-box, with the hull's signed distance.               C=3
//   box-hull, hull-hull: separating-axis test over both polytopes' face normals and the edge
//            pairs that form faces of the Minkowski difference (Gregorius' Gauss-map test); face
//            axis: the incident face clipped against the reference face (a manifold, the points
//            spread as for plane-hull); edge axis: the closest points of the two edges.  C=8
//            Within the margin (separated), the gap is the largest separating-axis distance, a
//            lower bound of the true distance (exact for face-vertex and edge-edge features).
//   cylinder-hull: APPROXIMATION by sampling, as box-cylinder (hull vertices and edge midpoints
//            against the cylinder, cylinder rim points against the hull), the 4 deepest.  C=4
//   plane-plane: never.
#pragma once

#include "gradyn/model/data.hpp"

namespace gradyn {

inline constexpr int kMaxPairContacts = 8;

/// data.oMg from data.oMi.
template <class S>
void update_geom_poses(const ModelTpl<S>& model, DataTpl<S>& data);

/// Static filter (see the file comment).
template <class S>
bool geoms_may_collide(const ModelTpl<S>& model, int a, int b);

/// World AABB of a geom at pose oMg, grown by margin (planes: unbounded).
template <class S>
void geom_aabb(const GeomTpl<S>& geom, const Pose<S>& oMg, double margin, Eigen::Vector3d& lo, Eigen::Vector3d& hi);

/// Candidate pairs into data.broadphase_pairs[0, nbroadphase_pairs), sorted, a < b. Needs data.oMg.
template <class S>
void broadphase(const ModelTpl<S>& model, DataTpl<S>& data, double margin = 0.0);

/// Contacts between two geoms at the given world poses, written to out[0, return value)
/// (room for kMaxPairContacts); geom_a/geom_b are set to ia/ib, normals point from a to b.
template <class S>
int collide_geoms(const GeomTpl<S>& a, const Pose<S>& oMa, const GeomTpl<S>& b, const Pose<S>& oMb, double margin,
                  ContactTpl<S>* out, int ia = 0, int ib = 1);

/// The whole pipeline (update_geom_poses, broadphase, narrowphase). Needs data.oMi
/// (forward_kinematics). More contacts than data.contacts holds: the extra ones are dropped and
/// kStatusContactOverflow is set in data.status.
template <class S>
void collide(const ModelTpl<S>& model, DataTpl<S>& data, double margin = 0.0);

}  // namespace gradyn
