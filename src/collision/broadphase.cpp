// Geom poses, world AABBs and the sweep-and-prune broadphase.
#include <algorithm>
#include <limits>

#include "narrowphase.hpp"

namespace gradyn {

template <class S>
void update_geom_poses(const ModelTpl<S>& model, DataTpl<S>& data) {
  for (int g = 0; g < model.ngeoms(); ++g) {
    const GeomTpl<S>& geom = model.geoms[g];
    data.oMg[g] = geom.body < 0 ? geom.placement : data.oMi[geom.body] * geom.placement;
  }
}

template <class S>
bool geoms_may_collide(const ModelTpl<S>& model, int a, int b) {
  const GeomTpl<S>& ga = model.geoms[a];
  const GeomTpl<S>& gb = model.geoms[b];
  if (ga.body == gb.body) return false;
  if (!((ga.contype & gb.conaffinity) || (gb.contype & ga.conaffinity))) return false;
  if (!model.collide_parent_child) {
    if (ga.body >= 0 && model.parent[ga.body] == gb.body && gb.body >= 0) return false;
    if (gb.body >= 0 && model.parent[gb.body] == ga.body && ga.body >= 0) return false;
  }
  const std::pair<int, int> bodies(std::min(ga.body, gb.body), std::max(ga.body, gb.body));
  for (const auto& e : model.excluded_pairs)
    if (e == bodies) return false;
  return true;
}

template <class S>
void geom_aabb(const GeomTpl<S>& geom, const Pose<S>& P, double margin, Eigen::Vector3d& lo, Eigen::Vector3d& hi) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  Eigen::Matrix3d R;
  Eigen::Vector3d c, h;
  for (int i = 0; i < 3; ++i) {
    c[i] = value_of(P.p[i]);
    h[i] = value_of(geom.size[i]);
    for (int j = 0; j < 3; ++j) R(i, j) = value_of(P.R(i, j));
  }
  Eigen::Vector3d extent = Eigen::Vector3d::Zero();
  switch (geom.type) {
    case GeomType::Plane:
      lo.setConstant(-inf);
      hi.setConstant(inf);
      return;
    case GeomType::Sphere: extent.setConstant(h[0]); break;
    case GeomType::Capsule: extent = R.col(2).cwiseAbs() * h[1] + Eigen::Vector3d::Constant(h[0]); break;
    case GeomType::Box: extent = R.cwiseAbs() * h; break;
    case GeomType::Cylinder:
      for (int i = 0; i < 3; ++i) {
        const double u = R(i, 2);
        extent[i] = std::abs(u) * h[1] + h[0] * std::sqrt(std::max(0.0, 1 - u * u));
      }
      break;
    case GeomType::ConvexHull: {  // the rotated box around the hull's scaled local box
      const Eigen::Vector3d centre = (geom.hull->aabb_max + geom.hull->aabb_min).cwiseProduct(h) / 2;
      const Eigen::Vector3d half = (geom.hull->aabb_max - geom.hull->aabb_min).cwiseProduct(h) / 2;
      c += R * centre;
      extent = R.cwiseAbs() * half;
      break;
    }
  }
  lo = c - extent - Eigen::Vector3d::Constant(margin);
  hi = c + extent + Eigen::Vector3d::Constant(margin);
}

template <class S>
void broadphase(const ModelTpl<S>& model, DataTpl<S>& data, double margin) {
  const int ng = model.ngeoms();
  for (int g = 0; g < ng; ++g) geom_aabb(model.geoms[g], data.oMg[g], margin, data.geom_aabb_min[g], data.geom_aabb_max[g]);
  // Insertion sort by min x: the order of the previous call is nearly right after a small step.
  std::vector<int>& order = data.sweep_order;
  for (int i = 1; i < ng; ++i) {
    const int g = order[i];
    const double key = data.geom_aabb_min[g].x();
    int j = i - 1;
    while (j >= 0 && data.geom_aabb_min[order[j]].x() > key) {
      order[j + 1] = order[j];
      --j;
    }
    order[j + 1] = g;
  }
  const int capacity = static_cast<int>(data.broadphase_pairs.size());
  int count = 0;
  for (int i = 0; i < ng; ++i) {
    const int a = order[i];
    const Eigen::Vector3d& alo = data.geom_aabb_min[a];
    const Eigen::Vector3d& ahi = data.geom_aabb_max[a];
    for (int j = i + 1; j < ng; ++j) {
      const int b = order[j];
      const Eigen::Vector3d& blo = data.geom_aabb_min[b];
      if (blo.x() > ahi.x()) break;  // sorted by min x: no later geom overlaps a along x
      const Eigen::Vector3d& bhi = data.geom_aabb_max[b];
      if (blo.y() > ahi.y() || alo.y() > bhi.y() || blo.z() > ahi.z() || alo.z() > bhi.z()) continue;
      if (model.geoms[a].type == GeomType::Plane && model.geoms[b].type == GeomType::Plane) continue;
      if (!geoms_may_collide(model, a, b)) continue;
      if (count == capacity) {
        data.status |= kStatusBroadphaseOverflow;
        break;
      }
      data.broadphase_pairs[count++] = {std::min(a, b), std::max(a, b)};
    }
  }
  // Sorted pairs: the contact order does not depend on the sweep order.
  std::sort(data.broadphase_pairs.begin(), data.broadphase_pairs.begin() + count);
  data.nbroadphase_pairs = count;
}

#define GRADYN_INSTANTIATE(S)                                                                              \
  template void update_geom_poses<S>(const ModelTpl<S>&, DataTpl<S>&);                                     \
  template bool geoms_may_collide<S>(const ModelTpl<S>&, int, int);                                        \
  template void geom_aabb<S>(const GeomTpl<S>&, const Pose<S>&, double, Eigen::Vector3d&, Eigen::Vector3d&); \
  template void broadphase<S>(const ModelTpl<S>&, DataTpl<S>&, double);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE

}  // namespace gradyn
