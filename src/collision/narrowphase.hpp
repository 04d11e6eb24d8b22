// Private to src/collision: the pair routines and the geometric helpers they share.
// Every routine takes the two geoms in canonical order (lower GeomType first) with their world
// poses and writes contacts whose normal points from the first to the second.
#pragma once

#include <cmath>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide.hpp"

namespace gradyn::collision_detail {

template <class S>
using PairFn = int (*)(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);

/// Columns: n, t1, t2 (right-handed). t1 is n x (the world axis least aligned with n).
template <class S>
Matrix3<S> contact_frame(const Vector3<S>& n) {
  using std::abs;
  int k = 0;
  if (abs(value_of(n.y())) < abs(value_of(n[k]))) k = 1;
  if (abs(value_of(n.z())) < abs(value_of(n[k]))) k = 2;
  const Vector3<S> t1 = n.cross(Vector3<S>::Unit(k)).normalized();
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

}  // namespace gradyn::collision_detail
