// Sphere, capsule and the signed-distance pairs (sphere or capsule against box and cylinder).
// Capsules are segments with a radius: every pair reduces to spheres at closest points.
#include <algorithm>
#include <cmath>

#include "narrowphase.hpp"

namespace gradyn::collision_detail {

namespace {

// The point p0 + t d of the segment in Y's frame, in double arithmetic on values: the branches
// below are taken on it, so that collide_vjp's AD re-run takes the ones collide() took.
template <class S>
Eigen::Vector3d local_point_value(const Pose<S>& Y, const Vector3<S>& p0, const Vector3<S>& d, double t) {
  return values(Y.R).transpose() * (values(p0) + values(d) * t - values(Y.p));
}

// Refines the segment parameter of the deepest sphere against a box so that it carries
// derivatives: when the closest box feature is an edge or a corner, t is the closest point of the
// segment's line to that feature, written in S.
template <class S>
struct BoxParameter {
  const GeomTpl<S>& box;
  const Pose<S>& Y;
  S operator()(const Vector3<S>& p0, const Vector3<S>& d, double t) const {
    const Vector3<S> x = Y.R.transpose() * (p0 + d * S(t) - Y.p), dl = Y.R.transpose() * d;
    const Eigen::Vector3d xv = local_point_value(Y, p0, d, t);  // decides, as in collide()
    int outside = 0, free_axis = -1;
    Vector3<S> corner;
    for (int i = 0; i < 3; ++i) {
      const bool out = std::abs(xv[i]) > value_of(box.size[i]);
      outside += out;
      corner[i] = box.size[i] * S(xv[i] < 0 ? -1.0 : 1.0);
      if (!out) free_axis = i;
    }
    if (outside == 3) return S((corner - x).dot(dl) / dl.squaredNorm()) + S(t);  // corner: project it
    if (outside == 2) {  // edge along free_axis through `corner`: closest points of two lines
      const Vector3<S> e = Vector3<S>::Unit(free_axis);
      const Vector3<S> w = x - corner;
      const S b = dl.dot(e), denom = dl.squaredNorm() - b * b;
      if (value_of(denom) < 1e-12 * value_of(dl.squaredNorm())) return S(t);
      return S(t) + (b * w.dot(e) - w.dot(dl)) / denom;
    }
    return S(t);
  }
};

// The same against a cylinder when its side is the closest feature: the signed distance is then
// (distance to the axis) - r, smallest at the closest point of the segment's line to the axis.
// Near the cap rims t stays a value (the point's derivative is then only approximate).
template <class S>
struct CylinderParameter {
  const GeomTpl<S>& cyl;
  const Pose<S>& Y;
  S operator()(const Vector3<S>& p0, const Vector3<S>& d, double t) const {
    const Vector3<S> x = Y.R.transpose() * (p0 + d * S(t) - Y.p), dl = Y.R.transpose() * d;
    const Eigen::Vector3d xv = local_point_value(Y, p0, d, t);  // decides, as in collide()
    const double rho = std::hypot(xv.x(), xv.y());
    const double dr = rho - value_of(cyl.size[0]), dz = std::abs(xv.z()) - value_of(cyl.size[1]);
    const bool side = dz <= 0 && (dr > 0 || dr > dz);
    if (!side) return S(t);
    const S b = dl.z(), denom = dl.squaredNorm() - b * b;
    if (value_of(denom) < 1e-12 * value_of(dl.squaredNorm())) return S(t);  // parallel to the axis
    return S(t) + (b * x.z() - x.dot(dl)) / denom;
  }
};

// The signed distances at a point in the geom's frame, in S or (for capsule_sdf's search) in double.
template <class S>
auto box_sdf(const GeomTpl<S>& box) {
  return [&box]<class T>(const Vector3<T>& x, Vector3<T>& m) {
    if constexpr (std::is_same_v<T, S>)
      return sdf_box<S>(x, box.size, m);
    else
      return sdf_box<double>(x, values(box.size), m);
  };
}
template <class S>
auto cylinder_sdf(const GeomTpl<S>& cyl) {
  return [&cyl]<class T>(const Vector3<T>& x, Vector3<T>& m) {
    if constexpr (std::is_same_v<T, S>)
      return sdf_cylinder<S>(x, cyl.size[0], cyl.size[1], m);
    else
      return sdf_cylinder<double>(x, value_of(cyl.size[0]), value_of(cyl.size[1]), m);
  };
}

}  // namespace

template <class S>
int sphere_sphere(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                  ContactTpl<S>* out) {
  return sphere_sphere<S>(A.p, a.size[0], B.p, b.size[0], margin, out);
}

template <class S>
int sphere_capsule(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                   ContactTpl<S>* out) {
  Vector3<S> p0, p1;
  segment(b, B, p0, p1);
  const Vector3<S> d = p1 - p0;
  const S t = closest_on_segment(p0, d, A.p);
  return sphere_sphere<S>(A.p, a.size[0], Vector3<S>(p0 + t * d), b.size[0], margin, out);
}

template <class S>
int capsule_capsule(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                    ContactTpl<S>* out) {
  Vector3<S> a0, a1, b0, b1;
  segment(a, A, a0, a1);
  segment(b, B, b0, b1);
  const Vector3<S> da = a1 - a0, db = b1 - b0;
  const S ra = a.size[0], rb = b.size[0];
  // Nearly parallel: the overlap of the segments has a whole line of closest points; contacts at
  // both ends of the overlap keep a capsule lying on another from rocking.
  const double sin2 = value_of(da.cross(db).squaredNorm() / (da.squaredNorm() * db.squaredNorm()));
  if (sin2 < 1e-8) {
    const S t0 = da.dot(b0 - a0) / da.squaredNorm(), t1 = da.dot(b1 - a0) / da.squaredNorm();
    const S lo = clamp01(value_of(t0) < value_of(t1) ? t0 : t1), hi = clamp01(value_of(t0) < value_of(t1) ? t1 : t0);
    if (value_of(hi) - value_of(lo) > 1e-9) {
      int count = 0;
      for (const S& t : {lo, hi}) {
        const Vector3<S> pa = a0 + t * da;
        const S u = closest_on_segment(b0, db, pa);
        count += sphere_sphere<S>(pa, ra, Vector3<S>(b0 + u * db), rb, margin, out + count);
      }
      return count;
    }
  }
  S s, t;
  closest_segment_segment(a0, da, b0, db, s, t);
  return sphere_sphere<S>(Vector3<S>(a0 + s * da), ra, Vector3<S>(b0 + t * db), rb, margin, out);
}

template <class S>
int sphere_box(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
               ContactTpl<S>* out) {
  return sphere_sdf(A.p, a.size[0], B, box_sdf(b), margin, out);
}

template <class S>
int sphere_cylinder(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                    ContactTpl<S>* out) {
  return sphere_sdf(A.p, a.size[0], B, cylinder_sdf(b), margin, out);
}

template <class S>
int capsule_box(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                ContactTpl<S>* out) {
  return capsule_sdf(a, A, B, box_sdf(b), margin, out, BoxParameter<S>{b, B});
}

template <class S>
int capsule_cylinder(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                     ContactTpl<S>* out) {
  return capsule_sdf(a, A, B, cylinder_sdf(b), margin, out, CylinderParameter<S>{b, B});
}

#define GRADYN_PAIR(S, fn) \
  template int fn<S>(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
#define GRADYN_INSTANTIATE(S)         \
  GRADYN_PAIR(S, sphere_sphere)       \
  GRADYN_PAIR(S, sphere_capsule)      \
  GRADYN_PAIR(S, capsule_capsule)     \
  GRADYN_PAIR(S, sphere_box)          \
  GRADYN_PAIR(S, sphere_cylinder)     \
  GRADYN_PAIR(S, capsule_box)         \
  GRADYN_PAIR(S, capsule_cylinder)
// The narrowphase in forward mode serves the double path too (collide_vjp): both scalars always.
GRADYN_FOR_EACH_SCALAR_ALWAYS(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE
#undef GRADYN_PAIR

}  // namespace gradyn::collision_detail
