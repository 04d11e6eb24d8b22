// Sphere, capsule and the signed-distance pairs (sphere or capsule against box and cylinder).
// Capsules are segments with a radius: every pair reduces to spheres at closest points.
#include <algorithm>
#include <cmath>

#include "narrowphase.hpp"

namespace gradyn::collision_detail {

namespace {

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

// Refines the segment parameter of the deepest sphere against a box so that it carries
// derivatives: when the closest box feature is an edge or a corner, t is the closest point of the
// segment's line to that feature, written in S.
template <class S>
struct BoxParameter {
  const GeomTpl<S>& box;
  const Pose<S>& Y;
  S operator()(const Vector3<S>& p0, const Vector3<S>& d, double t) const {
    const Vector3<S> x = Y.R.transpose() * (p0 + d * S(t) - Y.p), dl = Y.R.transpose() * d;
    int outside = 0, free_axis = -1;
    Vector3<S> corner;
    for (int i = 0; i < 3; ++i) {
      const bool out = std::abs(value_of(x[i])) > value_of(box.size[i]);
      outside += out;
      corner[i] = box.size[i] * S(value_of(x[i]) < 0 ? -1.0 : 1.0);
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
    const double rho = std::hypot(value_of(x.x()), value_of(x.y()));
    const double dr = rho - value_of(cyl.size[0]), dz = std::abs(value_of(x.z())) - value_of(cyl.size[1]);
    const bool side = dz <= 0 && (dr > 0 || dr > dz);
    if (!side) return S(t);
    const S b = dl.z(), denom = dl.squaredNorm() - b * b;
    if (value_of(denom) < 1e-12 * value_of(dl.squaredNorm())) return S(t);  // parallel to the axis
    return S(t) + (b * x.z() - x.dot(dl)) / denom;
  }
};

template <class S, class Sdf, class Param = KeepParameter<S>>
int capsule_sdf(const GeomTpl<S>& capsule, const Pose<S>& C, const Pose<S>& Y, Sdf sdf, double margin,
                ContactTpl<S>* out, Param parameter = Param()) {
  Vector3<S> p0, p1;
  segment(capsule, C, p0, p1);
  const Vector3<S> d = p1 - p0;
  auto value_at = [&](double t) {
    Vector3<S> x = p0 + d * S(t), m;
    return value_of(sdf(Vector3<S>(Y.R.transpose() * (x - Y.p)), m));
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
  if (t_min > 1e-6 && t_min < 1 - 1e-6 && value_at(t_min) < f_ends - scale)
    count += sphere_sdf(Vector3<S>(p0 + d * parameter(p0, d, t_min)), capsule.size[0], Y, sdf, margin, out + count);
  return count;
}

template <class S>
auto box_sdf(const GeomTpl<S>& box) {
  return [&box](const Vector3<S>& x, Vector3<S>& m) { return sdf_box<S>(x, box.size, m); };
}
template <class S>
auto cylinder_sdf(const GeomTpl<S>& cyl) {
  return [&cyl](const Vector3<S>& x, Vector3<S>& m) { return sdf_cylinder<S>(x, cyl.size[0], cyl.size[1], m); };
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
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE
#undef GRADYN_PAIR

}  // namespace gradyn::collision_detail
