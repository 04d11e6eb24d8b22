// Plane against sphere, capsule, box and cylinder. The plane is z = 0 of its geom frame, solid
// below; the normal of every contact is the plane's +z (from the plane to the other geom).
#include <algorithm>
#include <numbers>

#include "narrowphase.hpp"

namespace gradyn::collision_detail {

namespace {

// A point x of the other geom's surface at signed height `height` above the plane (normal n).
template <class S>
void plane_point(ContactTpl<S>& c, const Vector3<S>& x, const S& height, const Vector3<S>& n) {
  set_contact(c, Vector3<S>(x - n * height / S(2)), n, S(-height));
}

// Keeps the `keep` deepest of `count` candidate contacts (in place); returns how many remain.
template <class S>
int keep_deepest(ContactTpl<S>* c, int count, int keep) {
  if (count <= keep) return count;
  std::partial_sort(c, c + keep, c + count,
                    [](const ContactTpl<S>& x, const ContactTpl<S>& y) { return value_of(x.depth) > value_of(y.depth); });
  return keep;
}

}  // namespace

template <class S>
int plane_sphere(const GeomTpl<S>&, const Pose<S>& P, const GeomTpl<S>& sphere, const Pose<S>& B, double margin,
                 ContactTpl<S>* out) {
  const Vector3<S> n = P.R.col(2);
  const S r = sphere.size[0];
  const S height = n.dot(B.p - P.p) - r;  // of the sphere's lowest point
  if (value_of(height) > margin) return 0;
  plane_point(out[0], Vector3<S>(B.p - r * n), height, n);
  return 1;
}

template <class S>
int plane_capsule(const GeomTpl<S>&, const Pose<S>& P, const GeomTpl<S>& capsule, const Pose<S>& B, double margin,
                  ContactTpl<S>* out) {
  const Vector3<S> n = P.R.col(2);
  const S r = capsule.size[0];
  int count = 0;
  for (double side : {-1.0, 1.0}) {
    const Vector3<S> end = B.p + B.R.col(2) * (capsule.size[1] * side);
    const S height = n.dot(end - P.p) - r;
    if (value_of(height) > margin) continue;
    plane_point(out[count++], Vector3<S>(end - r * n), height, n);
  }
  return count;
}

template <class S>
int plane_box(const GeomTpl<S>&, const Pose<S>& P, const GeomTpl<S>& box, const Pose<S>& B, double margin,
              ContactTpl<S>* out) {
  const Vector3<S> n = P.R.col(2);
  ContactTpl<S> candidates[8];
  int count = 0;
  for (int corner = 0; corner < 8; ++corner) {
    Vector3<S> local;
    for (int i = 0; i < 3; ++i) local[i] = box.size[i] * S((corner >> i) & 1 ? 1.0 : -1.0);
    const Vector3<S> x = B.act_point(local);
    const S height = n.dot(x - P.p);
    if (value_of(height) > margin) continue;
    plane_point(candidates[count++], x, height, n);
  }
  count = keep_deepest(candidates, count, 4);
  for (int k = 0; k < count; ++k) out[k] = candidates[k];
  return count;
}

template <class S>
int plane_cylinder(const GeomTpl<S>&, const Pose<S>& P, const GeomTpl<S>& cyl, const Pose<S>& B, double margin,
                   ContactTpl<S>* out) {
  using std::cos;
  using std::sin;
  const Vector3<S> n = P.R.col(2);
  const Vector3<S> axis = B.R.col(2);
  const S r = cyl.size[0], h = cyl.size[1];
  // Direction, in the cap plane, towards the plane (the deepest rim point); any when flat.
  Vector3<S> w = -n + axis * axis.dot(n);
  if (value_of(w.squaredNorm()) < 1e-20)
    w = B.R.col(0);
  else
    w.normalize();
  const Vector3<S> v = axis.cross(w);
  const double lower = value_of(axis.dot(n)) > 0 ? -1.0 : 1.0;  // the cap nearer the plane
  ContactTpl<S> candidates[4];
  int count = 0;
  auto candidate = [&](const Vector3<S>& x) {
    const S height = n.dot(x - P.p);
    if (value_of(height) <= margin) plane_point(candidates[count++], x, height, n);
  };
  const Vector3<S> low_cap = B.p + axis * (h * lower), high_cap = B.p - axis * (h * lower);
  for (int k = 0; k < 3; ++k) {
    const double angle = 2.0 * std::numbers::pi * k / 3.0;
    candidate(Vector3<S>(low_cap + r * (std::cos(angle) * w + std::sin(angle) * v)));
  }
  candidate(Vector3<S>(high_cap + r * w));
  for (int k = 0; k < count; ++k) out[k] = candidates[k];
  return count;
}

#define GRADYN_INSTANTIATE(S)                                                                                      \
  template int plane_sphere<S>(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double,     \
                               ContactTpl<S>*);                                                                   \
  template int plane_capsule<S>(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double,    \
                                ContactTpl<S>*);                                                                  \
  template int plane_box<S>(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double,        \
                            ContactTpl<S>*);                                                                      \
  template int plane_cylinder<S>(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double,   \
                                 ContactTpl<S>*);
// The narrowphase in forward mode serves the double path too (collide_vjp): both scalars always.
GRADYN_FOR_EACH_SCALAR_ALWAYS(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE

}  // namespace gradyn::collision_detail
