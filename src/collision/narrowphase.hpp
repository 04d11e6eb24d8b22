// Private to src/collision: the pair routines and the geometric helpers they share.
// Every routine takes the two geoms in canonical order (lower GeomType first) with their world
// poses and writes contacts whose normal points from the first to the second.
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide.hpp"

namespace gradyn::collision_detail {

template <class S>
using PairFn = int (*)(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);

/// The values of a vector or matrix of S (itself when S is double). Discrete choices computed from
/// values in double arithmetic come out the same for double and for the forward-mode AD scalar,
/// whose value parts may round differently: collide_vjp re-runs the narrowphase in AD and must
/// land on the contacts collide() reported.
template <class S>
Eigen::Vector3d values(const Vector3<S>& x) {
  return Eigen::Vector3d(value_of(x[0]), value_of(x[1]), value_of(x[2]));
}
template <class S>
Eigen::Matrix3d values(const Matrix3<S>& M) {
  Eigen::Matrix3d out;
  for (int c = 0; c < 3; ++c) out.col(c) = values<S>(Vector3<S>(M.col(c)));
  return out;
}

/// The world axis least aligned with n (the first on a tie): contact_frame's e_k.
template <class S>
int contact_frame_axis(const Vector3<S>& n) {
  using std::abs;
  int k = 0;
  if (abs(value_of(n.y())) < abs(value_of(n[k]))) k = 1;
  if (abs(value_of(n.z())) < abs(value_of(n[k]))) k = 2;
  return k;
}

/// Columns: n, t1, t2 (right-handed). t1 is n x e_k, normalised (e_k: contact_frame_axis).
template <class S>
Matrix3<S> contact_frame(const Vector3<S>& n) {
  const Vector3<S> t1 = n.cross(Vector3<S>::Unit(contact_frame_axis(n))).normalized();
  Matrix3<S> F;
  F.col(0) = n;
  F.col(1) = t1;
  F.col(2) = n.cross(t1);
  return F;
}

template <class S>
void set_contact(ContactTpl<S>& c, const Vector3<S>& point, const Vector3<S>& normal, const S& depth) {
  c.point = point;
  c.normal = normal;
  c.depth = depth;
  c.frame = contact_frame(normal);
}

/// Two spheres (centres ca, cb; radii ra, rb). Normal from a to b; +z when the centres coincide.
template <class S>
int sphere_sphere(const Vector3<S>& ca, const S& ra, const Vector3<S>& cb, const S& rb, double margin,
                  ContactTpl<S>* out) {
  using std::sqrt;
  const Vector3<S> d = cb - ca;
  const S dist2 = d.squaredNorm();
  const double reach = value_of(ra) + value_of(rb) + margin;
  if (value_of(dist2) > reach * reach) return 0;
  Vector3<S> n = Vector3<S>::UnitZ();
  S dist = S(0);
  if (value_of(dist2) > 1e-24) {
    dist = sqrt(dist2);
    n = d / dist;
  }
  set_contact(out[0], Vector3<S>((ca + ra * n + cb - rb * n) / S(2)), n, S(ra + rb - dist));
  return 1;
}

/// Signed distance from a point (box frame) to a box of half-extents h; normal: outward unit
/// normal at the closest surface point (box frame).
template <class S>
S sdf_box(const Vector3<S>& x, const Vector3<S>& h, Vector3<S>& normal) {
  using std::abs;
  using std::sqrt;
  Vector3<S> q;
  bool outside = false;
  for (int i = 0; i < 3; ++i) {
    q[i] = abs(x[i]) - h[i];
    outside = outside || value_of(q[i]) > 0;
  }
  if (outside) {
    Vector3<S> e;
    for (int i = 0; i < 3; ++i) e[i] = value_of(q[i]) > 0 ? S(q[i] * (value_of(x[i]) < 0 ? -1.0 : 1.0)) : S(0);
    const S dist = sqrt(e.squaredNorm());
    normal = e / dist;
    return dist;
  }
  int k = 0;
  for (int i = 1; i < 3; ++i)
    if (value_of(q[i]) > value_of(q[k])) k = i;
  normal.setZero();
  normal[k] = S(value_of(x[k]) < 0 ? -1.0 : 1.0);
  return q[k];
}

/// Signed distance from a point (cylinder frame) to a cylinder (radius r, half-length h along z).
template <class S>
S sdf_cylinder(const Vector3<S>& x, const S& r, const S& h, Vector3<S>& normal) {
  using std::abs;
  using std::sqrt;
  const S rho2 = x.x() * x.x() + x.y() * x.y();
  Vector3<S> radial(S(1), S(0), S(0));
  S rho = S(0);
  if (value_of(rho2) > 1e-24) {
    rho = sqrt(rho2);
    radial = Vector3<S>(x.x() / rho, x.y() / rho, S(0));
  }
  const double zsign = value_of(x.z()) < 0 ? -1.0 : 1.0;
  const S dr = rho - r, dz = abs(x.z()) - h;
  if (value_of(dr) > 0 || value_of(dz) > 0) {
    const S er = value_of(dr) > 0 ? dr : S(0), ez = value_of(dz) > 0 ? dz : S(0);
    const S dist = sqrt(er * er + ez * ez);
    normal = (er * radial + Vector3<S>(S(0), S(0), S(ez * zsign))) / dist;
    return dist;
  }
  if (value_of(dr) > value_of(dz)) {
    normal = radial;
    return dr;
  }
  normal = Vector3<S>(S(0), S(0), S(zsign));
  return dz;
}

/// A point x on geom X's surface that lies within `margin` of geom Y (signed distance s, Y's
/// outward normal m at its closest point): the contact, normal from a to b, where Y is a when
/// y_is_a.
template <class S>
void point_contact(ContactTpl<S>& c, const Vector3<S>& x, const S& s, const Vector3<S>& m, bool y_is_a) {
  set_contact(c, Vector3<S>(x - s * m / S(2)), y_is_a ? m : Vector3<S>(-m), S(-s));
}

// Pair routines (first geom of the lower type).
// Shared by the narrowphase files.
template <class S>
inline S clamp01(const S& x) {
  return value_of(x) < 0 ? S(0) : value_of(x) > 1 ? S(1) : x;
}

// Parameters s, t in [0, 1] of the closest points of segments p1 + s d1 and p2 + t d2
// (Ericson, Real-Time Collision Detection, 5.1.9). Both segments have positive length.
template <class S>
inline void closest_segment_segment(const Vector3<S>& p1, const Vector3<S>& d1, const Vector3<S>& p2, const Vector3<S>& d2,
                             S& s, S& t) {
  const Vector3<S> r = p1 - p2;
  const S a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r), c = d1.dot(r), b = d1.dot(d2);
  const S denom = a * e - b * b;
  s = value_of(denom) > 1e-12 * value_of(a * e) ? clamp01(S((b * f - c * e) / denom)) : S(0);
  t = (b * s + f) / e;
  if (value_of(t) < 0) {
    t = S(0);
    s = clamp01(S(-c / a));
  } else if (value_of(t) > 1) {
    t = S(1);
    s = clamp01(S((b - c) / a));
  }
}

// Shared by the sphere/capsule pairs against signed-distance geoms (boxes, cylinders, hulls).
// Segment of a capsule (or a cylinder's axis) in the world.
template <class S>
void segment(const GeomTpl<S>& g, const Pose<S>& P, Vector3<S>& p0, Vector3<S>& p1) {
  const Vector3<S> half = P.R.col(2) * g.size[1];
  p0 = P.p - half;
  p1 = P.p + half;
}

template <class S>
S closest_on_segment(const Vector3<S>& p, const Vector3<S>& d, const Vector3<S>& x) {
  return clamp01(S(d.dot(x - p) / d.squaredNorm()));
}

// A sphere (centre c, radius r) against a geom given by its signed distance in its own frame Y.
// The geom is b (the normal points from the sphere into it).
template <class S, class Sdf>
int sphere_sdf(const Vector3<S>& c, const S& r, const Pose<S>& Y, Sdf sdf, double margin, ContactTpl<S>* out) {
  Vector3<S> m_local;
  const S s = sdf(Vector3<S>(Y.R.transpose() * (c - Y.p)), m_local);
  const S gap = s - r;
  if (value_of(gap) > margin) return 0;
  const Vector3<S> m = Y.R * m_local;
  point_contact(out[0], Vector3<S>(c - r * m), gap, m, /*y_is_a=*/false);
  return 1;
}

// A capsule against a convex geom given by its signed distance: that distance is convex along the
// segment, so a golden-section search (on values) finds the deepest sphere; the two end spheres
// are added so that a capsule lying on a face rests on two points.
// No refinement: the deepest sphere's parameter stays a value (the depth's derivative is still
// exact, since the depth is stationary in t there; the point's is not when t moves).
template <class S>
struct KeepParameter {
  S operator()(const Vector3<S>&, const Vector3<S>&, double t) const { return S(t); }
};

template <class S, class Sdf, class Param = KeepParameter<S>>
int capsule_sdf(const GeomTpl<S>& capsule, const Pose<S>& C, const Pose<S>& Y, Sdf sdf, double margin,
                ContactTpl<S>* out, Param parameter = Param()) {
  Vector3<S> p0, p1;
  segment(capsule, C, p0, p1);
  const Vector3<S> d = p1 - p0;
  // The search runs on values in double (sdf takes double points too): its path of comparisons,
  // hence t_min, is then the same in the AD re-run as in collide() (near a flat minimum a rounding
  // difference sent the two golden-section searches to points 1e-9 apart).
  const Eigen::Vector3d p0_value = values(p0), d_value = values(d), y_value = values(Y.p);
  const Eigen::Matrix3d yr_value = values(Y.R);
  auto value_at = [&](double t) {
    Eigen::Vector3d x = p0_value + d_value * t, m;
    return sdf(Eigen::Vector3d(yr_value.transpose() * (x - y_value)), m);
  };
  constexpr double kInvPhi = 0.6180339887498949;
  double lo = 0, hi = 1, x1 = hi - kInvPhi * (hi - lo), x2 = lo + kInvPhi * (hi - lo);
  double f1 = value_at(x1), f2 = value_at(x2);
  for (int it = 0; it < 60 && hi - lo > 1e-10; ++it) {
    if (f1 < f2) {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - kInvPhi * (hi - lo);
      f1 = value_at(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + kInvPhi * (hi - lo);
      f2 = value_at(x2);
    }
  }
  const double t_min = (lo + hi) / 2;
  const double f_ends = std::min(value_at(0), value_at(1));
  const double scale = 1e-9 * (1 + std::abs(f_ends));
  int count = 0;
  for (double t : {0.0, 1.0}) count += sphere_sdf(Vector3<S>(p0 + d * S(t)), capsule.size[0], Y, sdf, margin, out + count);
  if (t_min > 1e-6 && t_min < 1 - 1e-6 && value_at(t_min) < f_ends - scale) {
    // A refinement that leaves the segment (a segment nearly parallel to a cylinder's axis or a
    // box edge, where the closest points of the two lines run off far away) is not the deepest
    // sphere: keep the searched parameter.
    S t = parameter(p0, d, t_min);
    if (!(value_of(t) >= 0 && value_of(t) <= 1)) t = S(t_min);
    count += sphere_sdf(Vector3<S>(p0 + d * t), capsule.size[0], Y, sdf, margin, out + count);
  }
  return count;
}

// 8 rim points per cap (the first towards `toward`) and the two cap centres, world frame.
template <class S>
int cylinder_samples(const GeomTpl<S>& cyl, const Pose<S>& C, const Vector3<S>& toward, Vector3<S>* pts) {
  const Vector3<S> axis = C.R.col(2);
  Vector3<S> w = toward - C.p;
  w -= axis * axis.dot(w);
  if (value_of(w.squaredNorm()) < 1e-20)
    w = C.R.col(0);
  else
    w.normalize();
  const Vector3<S> v = axis.cross(w);
  int n = 0;
  for (double side : {-1.0, 1.0}) {
    const Vector3<S> cap = C.p + axis * (cyl.size[1] * side);
    pts[n++] = cap;
    for (int k = 0; k < 8; ++k) {
      const double angle = std::numbers::pi * k / 4.0;
      pts[n++] = cap + cyl.size[0] * (std::cos(angle) * w + std::sin(angle) * v);
    }
  }
  return n;
}

template <class S> int plane_sphere(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int plane_capsule(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int plane_box(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int plane_cylinder(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int sphere_sphere(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int sphere_capsule(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int sphere_box(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int sphere_cylinder(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int capsule_capsule(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int capsule_box(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int capsule_cylinder(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int box_box(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int box_cylinder(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int cylinder_cylinder(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int plane_hull(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int sphere_hull(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int capsule_hull(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int box_hull(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int cylinder_hull(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
template <class S> int hull_hull(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);

}  // namespace gradyn::collision_detail
