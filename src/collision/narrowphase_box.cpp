// Box-box (separating axes + face clipping), and the sampled box-cylinder and cylinder-cylinder
// approximations (see collide.hpp).
#include <algorithm>
#include <array>
#include <limits>
#include <numbers>

#include "narrowphase.hpp"

namespace gradyn::collision_detail {

namespace {

template <class S>
int keep_deepest(ContactTpl<S>* c, int count, int keep) {
  if (count <= keep) return count;
  std::partial_sort(c, c + keep, c + count,
                    [](const ContactTpl<S>& x, const ContactTpl<S>& y) { return value_of(x.depth) > value_of(y.depth); });
  return keep;
}

// Keeps the part of polygon `in` (n vertices) where dir . x <= offset.
template <class S>
int clip_polygon(const std::array<Vector3<S>, 16>& in, int n, const Vector3<S>& dir, const S& offset,
                 std::array<Vector3<S>, 16>& out) {
  int m = 0;
  for (int k = 0; k < n; ++k) {
    const Vector3<S>& p = in[k];
    const Vector3<S>& q = in[(k + 1) % n];
    const S dp = dir.dot(p) - offset, dq = dir.dot(q) - offset;
    const bool p_in = value_of(dp) <= 0, q_in = value_of(dq) <= 0;
    if (p_in) out[m++] = p;
    if (p_in != q_in) out[m++] = p + (q - p) * (dp / (dp - dq));
  }
  return m;
}

// Contacts of box `inc` against face `axis` of box `ref` (outward normal towards inc: sign).
template <class S>
int face_contacts(const GeomTpl<S>& ref, const Pose<S>& R, int axis, double sign, const GeomTpl<S>& inc,
                  const Pose<S>& I, double margin, bool ref_is_a, ContactTpl<S>* out) {
  const Vector3<S> n = R.R.col(axis) * S(sign);
  const Vector3<S> face_centre = R.p + n * ref.size[axis];
  // Incident face: the face of inc whose normal is most opposed to n.
  int k = 0;
  double best = -1;
  for (int j = 0; j < 3; ++j) {
    const double c = std::abs(value_of(n.dot(I.R.col(j))));
    if (c > best) best = c, k = j;
  }
  const double s = value_of(n.dot(I.R.col(k))) > 0 ? -1.0 : 1.0;
  const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  const Vector3<S> c = I.p + I.R.col(k) * (inc.size[k] * S(s));
  const Vector3<S> u1 = I.R.col(k1) * inc.size[k1], u2 = I.R.col(k2) * inc.size[k2];
  std::array<Vector3<S>, 16> poly, tmp;
  poly[0] = c + u1 + u2;
  poly[1] = c - u1 + u2;
  poly[2] = c - u1 - u2;
  poly[3] = c + u1 - u2;
  int n_poly = 4;
  for (int m = 1; m <= 2 && n_poly > 0; ++m) {
    const int side = (axis + m) % 3;
    const Vector3<S> dir = R.R.col(side);
    const S centre = dir.dot(R.p);
    n_poly = clip_polygon(poly, n_poly, dir, S(centre + ref.size[side]), tmp);
    n_poly = clip_polygon(tmp, n_poly, Vector3<S>(-dir), S(-centre + ref.size[side]), poly);
  }
  int count = 0;
  for (int v = 0; v < n_poly && count < kMaxPairContacts; ++v) {
    const S height = n.dot(poly[v] - face_centre);
    if (value_of(height) > margin) continue;
    set_contact(out[count++], Vector3<S>(poly[v] - n * height / S(2)), ref_is_a ? n : Vector3<S>(-n), S(-height));
  }
  return count;
}

// 8 corners and 12 edge midpoints of a box, world frame.
template <class S>
int box_samples(const GeomTpl<S>& box, const Pose<S>& B, Vector3<S>* pts) {
  int n = 0;
  for (int x = -1; x <= 1; ++x)
    for (int y = -1; y <= 1; ++y)
      for (int z = -1; z <= 1; ++z) {
        const int zeros = (x == 0) + (y == 0) + (z == 0);
        if (zeros > 1) continue;  // corners (0 zeros) and edge midpoints (1 zero)
        pts[n++] = B.act_point(Vector3<S>(box.size[0] * S(x), box.size[1] * S(y), box.size[2] * S(z)));
      }
  return n;
}

// Sample points of one geom against the signed distance of the other (Y), into `out`.
template <class S, class Sdf>
int samples_against(const Vector3<S>* pts, int n, const Pose<S>& Y, Sdf sdf, double margin, bool y_is_a,
                    ContactTpl<S>* out) {
  int count = 0;
  for (int k = 0; k < n; ++k) {
    Vector3<S> m_local;
    const S s = sdf(Vector3<S>(Y.R.transpose() * (pts[k] - Y.p)), m_local);
    if (value_of(s) > margin) continue;
    point_contact(out[count++], pts[k], s, Vector3<S>(Y.R * m_local), y_is_a);
  }
  return count;
}

}  // namespace

template <class S>
int box_box(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
            ContactTpl<S>* out) {
  using std::abs;
  // The axis choice is discrete: made on values.
  Eigen::Matrix3d RA, RB;
  Eigen::Vector3d ha, hb, d;
  for (int i = 0; i < 3; ++i) {
    ha[i] = value_of(a.size[i]);
    hb[i] = value_of(b.size[i]);
    d[i] = value_of(B.p[i] - A.p[i]);
    for (int j = 0; j < 3; ++j) RA(i, j) = value_of(A.R(i, j)), RB(i, j) = value_of(B.R(i, j));
  }
  const Eigen::Matrix3d C = RA.transpose() * RB, absC = C.cwiseAbs();
  const Eigen::Vector3d dA = RA.transpose() * d, dB = RB.transpose() * d;
  double best_face = -std::numeric_limits<double>::infinity();
  int face = -1;  // 0..2: a face of A, 3..5: a face of B
  for (int i = 0; i < 3; ++i) {
    const double sep = std::abs(dA[i]) - (ha[i] + absC.row(i).dot(hb));
    if (sep > margin) return 0;
    if (sep > best_face) best_face = sep, face = i;
  }
  for (int j = 0; j < 3; ++j) {
    const double sep = std::abs(dB[j]) - (hb[j] + absC.col(j).dot(ha));
    if (sep > margin) return 0;
    if (sep > best_face) best_face = sep, face = 3 + j;
  }
  double best_edge = -std::numeric_limits<double>::infinity();
  int edge_i = -1, edge_j = -1;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const Eigen::Vector3d L = RA.col(i).cross(RB.col(j));
      const double len = L.norm();
      if (len < 1e-6) continue;  // parallel edges: a face axis separates as well
      const double rA = ha.dot((RA.transpose() * L).cwiseAbs()), rB = hb.dot((RB.transpose() * L).cwiseAbs());
      const double sep = (std::abs(d.dot(L)) - rA - rB) / len;
      if (sep > margin) return 0;
      if (sep > best_edge) best_edge = sep, edge_i = i, edge_j = j;
    }
  // Prefer faces: an edge axis must separate clearly better (faces give stable manifolds).
  const double tolerance = 1e-5 * (1 + std::max(ha.maxCoeff(), hb.maxCoeff()));
  if (edge_i < 0 || best_edge <= best_face + tolerance) {
    if (face < 3) return face_contacts(a, A, face, dA[face] >= 0 ? 1.0 : -1.0, b, B, margin, true, out);
    return face_contacts(b, B, face - 3, dB[face - 3] >= 0 ? -1.0 : 1.0, a, A, margin, false, out);
  }
  // Edge against edge: the closest points of the two supporting edges.
  Vector3<S> n = A.R.col(edge_i).cross(B.R.col(edge_j));
  n.normalize();
  if (value_of(n.dot(Vector3<S>(B.p - A.p))) < 0) n = -n;
  Vector3<S> pa = A.p, pb = B.p;
  for (int k = 0; k < 3; ++k) {
    if (k != edge_i) pa += A.R.col(k) * (a.size[k] * S(value_of(n.dot(A.R.col(k))) > 0 ? 1.0 : -1.0));
    if (k != edge_j) pb += B.R.col(k) * (b.size[k] * S(value_of(n.dot(B.R.col(k))) > 0 ? -1.0 : 1.0));
  }
  const Vector3<S> ea = A.R.col(edge_i) * a.size[edge_i], eb = B.R.col(edge_j) * b.size[edge_j];
  S s, t;
  closest_segment_segment(Vector3<S>(pa - ea), Vector3<S>(S(2) * ea), Vector3<S>(pb - eb), Vector3<S>(S(2) * eb), s, t);
  const Vector3<S> qa = pa - ea + S(2) * s * ea, qb = pb - eb + S(2) * t * eb;
  const S depth = -n.dot(qb - qa);
  if (-value_of(depth) > margin) return 0;
  set_contact(out[0], Vector3<S>((qa + qb) / S(2)), n, depth);
  return 1;
}

template <class S>
int box_cylinder(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                 ContactTpl<S>* out) {
  Vector3<S> pts[20];
  ContactTpl<S> found[40];
  int count = 0;
  int n = box_samples(a, A, pts);
  count += samples_against(pts, n, B,
                           [&b](const Vector3<S>& x, Vector3<S>& m) { return sdf_cylinder<S>(x, b.size[0], b.size[1], m); },
                           margin, /*y_is_a=*/false, found + count);
  n = cylinder_samples(b, B, A.p, pts);
  count += samples_against(pts, n, A, [&a](const Vector3<S>& x, Vector3<S>& m) { return sdf_box<S>(x, a.size, m); },
                           margin, /*y_is_a=*/true, found + count);
  count = keep_deepest(found, count, 4);
  for (int k = 0; k < count; ++k) out[k] = found[k];
  return count;
}

template <class S>
int cylinder_cylinder(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                      ContactTpl<S>* out) {
  Vector3<S> pts[20];
  ContactTpl<S> found[40];
  int count = 0;
  int n = cylinder_samples(a, A, B.p, pts);
  count += samples_against(pts, n, B,
                           [&b](const Vector3<S>& x, Vector3<S>& m) { return sdf_cylinder<S>(x, b.size[0], b.size[1], m); },
                           margin, false, found + count);
  n = cylinder_samples(b, B, A.p, pts);
  count += samples_against(pts, n, A,
                           [&a](const Vector3<S>& x, Vector3<S>& m) { return sdf_cylinder<S>(x, a.size[0], a.size[1], m); },
                           margin, true, found + count);
  count = keep_deepest(found, count, 4);
  for (int k = 0; k < count; ++k) out[k] = found[k];
  return count;
}

#define GRADYN_PAIR(S, fn) \
  template int fn<S>(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
#define GRADYN_INSTANTIATE(S) \
  GRADYN_PAIR(S, box_box)     \
  GRADYN_PAIR(S, box_cylinder) \
  GRADYN_PAIR(S, cylinder_cylinder)
// The narrowphase in forward mode serves the double path too (collide_vjp): both scalars always.
GRADYN_FOR_EACH_SCALAR_ALWAYS(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE
#undef GRADYN_PAIR

}  // namespace gradyn::collision_detail
