// Narrowphase dispatch and the collide() pipeline.
#include <algorithm>
#include <cmath>

#include "narrowphase.hpp"

namespace gradyn {

using namespace collision_detail;

namespace {

// The routine for a pair in canonical order (lower type first), or null (plane-plane).
template <class S>
PairFn<S> pair_routine(GeomType lower, GeomType higher) {
  using T = GeomType;
  switch (lower) {
    case T::Plane:
      switch (higher) {
        case T::Plane: return nullptr;
        case T::Sphere: return &plane_sphere<S>;
        case T::Capsule: return &plane_capsule<S>;
        case T::Box: return &plane_box<S>;
        case T::Cylinder: return &plane_cylinder<S>;
        case T::ConvexHull: return &plane_hull<S>;
      }
      break;
    case T::Sphere:
      switch (higher) {
        case T::Sphere: return &collision_detail::sphere_sphere<S>;
        case T::Capsule: return &sphere_capsule<S>;
        case T::Box: return &sphere_box<S>;
        case T::Cylinder: return &sphere_cylinder<S>;
        case T::ConvexHull: return &sphere_hull<S>;
        default: break;
      }
      break;
    case T::Capsule:
      switch (higher) {
        case T::Capsule: return &capsule_capsule<S>;
        case T::Box: return &capsule_box<S>;
        case T::Cylinder: return &capsule_cylinder<S>;
        case T::ConvexHull: return &capsule_hull<S>;
        default: break;
      }
      break;
    case T::Box:
      if (higher == T::Box) return &box_box<S>;
      if (higher == T::Cylinder) return &box_cylinder<S>;
      if (higher == T::ConvexHull) return &box_hull<S>;
      break;
    case T::Cylinder:
      if (higher == T::Cylinder) return &cylinder_cylinder<S>;
      if (higher == T::ConvexHull) return &cylinder_hull<S>;
      break;
    case T::ConvexHull:
      if (higher == T::ConvexHull) return &hull_hull<S>;
      break;
  }
  return nullptr;
}

}  // namespace

template <class S>
int collide_geoms(const GeomTpl<S>& a, const Pose<S>& oMa, const GeomTpl<S>& b, const Pose<S>& oMb, double margin,
                  ContactTpl<S>* out, int ia, int ib) {
  // A pose that is not finite (a diverged state) touches nothing: the pair routines choose features
  // by comparisons, which NaN defeats (the step flags the state as non-finite).
  auto finite = [](const Pose<S>& X) {
    for (int i = 0; i < 3; ++i) {
      if (!std::isfinite(value_of(X.p[i]))) return false;
      for (int j = 0; j < 3; ++j)
        if (!std::isfinite(value_of(X.R(i, j)))) return false;
    }
    return true;
  };
  if (!finite(oMa) || !finite(oMb)) return 0;
  const bool swapped = static_cast<int>(b.type) < static_cast<int>(a.type);
  const PairFn<S> fn = swapped ? pair_routine<S>(b.type, a.type) : pair_routine<S>(a.type, b.type);
  if (!fn) return 0;
  int count = swapped ? fn(b, oMb, a, oMa, margin, out) : fn(a, oMa, b, oMb, margin, out);
  // Finite poses far out (a diverging state, coordinates ~1e150) overflow inside the routines:
  // a contact that is not finite is dropped, never reported.
  count = static_cast<int>(std::remove_if(out, out + count, [](const ContactTpl<S>& c) {
                             if (!std::isfinite(value_of(c.depth))) return true;
                             for (int i = 0; i < 3; ++i)
                               if (!std::isfinite(value_of(c.point[i])) || !std::isfinite(value_of(c.normal[i])))
                                 return true;
                             return false;
                           }) - out);
  for (int k = 0; k < count; ++k) {
    ContactTpl<S>& c = out[k];
    c.geom_a = ia;
    c.geom_b = ib;
    c.friction_geom = value_of(a.friction) >= value_of(b.friction) ? ia : ib;
    c.restitution_geom = value_of(a.restitution) >= value_of(b.restitution) ? ia : ib;
    if (swapped) {  // the routine's normal points from b to a
      c.normal = -c.normal;
      c.frame = contact_frame(c.normal);
    }
  }
  return count;
}

template <class S>
void collide(const ModelTpl<S>& model, DataTpl<S>& data, double margin) {
  update_geom_poses(model, data);
  broadphase(model, data, margin);
  const int capacity = static_cast<int>(data.contacts.size());
  ContactTpl<S> pair_contacts[kMaxPairContacts];
  int count = 0;
  for (int p = 0; p < data.nbroadphase_pairs; ++p) {
    const auto [a, b] = data.broadphase_pairs[p];
    const int n = collide_geoms(model.geoms[a], data.oMg[a], model.geoms[b], data.oMg[b], margin, pair_contacts, a, b);
    for (int k = 0; k < n; ++k) {
      if (count == capacity) {
        data.status |= kStatusContactOverflow;
        break;
      }
      data.contacts[count++] = pair_contacts[k];
    }
  }
  data.ncontacts = count;
}

// collide_geoms<ADScalar> also serves the double path: collide_vjp differentiates it in forward mode.
#define GRADYN_INSTANTIATE(S)                                                                                \
  template int collide_geoms<S>(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, \
                                ContactTpl<S>*, int, int);
GRADYN_FOR_EACH_SCALAR_ALWAYS(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE
#define GRADYN_INSTANTIATE(S) template void collide<S>(const ModelTpl<S>&, DataTpl<S>&, double);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE

}  // namespace gradyn
