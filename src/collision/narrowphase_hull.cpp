// Convex hulls against every geom type (see collide.hpp for the methods).
//
// A hull is a polytope: its ConvexHull (vertices, ordered faces, edges) scaled per axis by the
// geom's size and placed by its world pose. A box is the same polytope with the unit cube's
// topology scaled by its half-extents, so box-hull and hull-hull share one routine: the
// separating-axis test over face normals and the edge pairs whose arcs cross on the Gauss map
// (D. Gregorius, "The Separating Axis Test between Convex Polyhedra", GDC 2013), then
//   face axis: the incident face (the other polytope's face most opposed to the reference face)
//              clipped against the reference face's side planes (Sutherland-Hodgman), its points
//              within the margin of the reference plane kept (a manifold);
//   edge axis: the closest points of the two edges.
// Every branch (axis, faces, edges, kept points) is chosen on values; the contacts are then
// computed in the scalar type from the chosen features, so with ADScalar they carry exact
// derivatives with respect to both poses and both scales.
//
// Scratch space lives in thread-local vectors that grow to the largest hull seen and are then
// reused: no allocation per step once warm.
#include <algorithm>
#include <limits>

#include "narrowphase.hpp"

namespace gradyn::collision_detail {

namespace {

using V3d = Eigen::Vector3d;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The unit cube [-1, 1]^3 as a hull: a box is this, scaled by its half-extents.
const ConvexHull& unit_cube() {
  static const std::shared_ptr<const ConvexHull> cube = [] {
    std::vector<V3d> corners;
    for (int k = 0; k < 8; ++k) corners.emplace_back(k & 1 ? 1.0 : -1.0, k & 2 ? 1.0 : -1.0, k & 4 ? 1.0 : -1.0);
    return make_convex_hull(corners);
  }();
  return *cube;
}

// A hull scaled and placed: the polytope the routines see.
template <class S>
struct Polytope {
  const ConvexHull& hull;
  const Vector3<S>& scale;
  const Pose<S>& pose;

  Vector3<S> local_vertex(int i) const { return Vector3<S>(hull.vertices[i].template cast<S>().cwiseProduct(scale)); }
  Vector3<S> vertex(int i) const { return pose.act_point(local_vertex(i)); }
  Vector3<S> local_normal(int f) const {  // a plane n.x = d maps to (n / s).x' = d under x' = s x
    using std::sqrt;
    const Vector3<S> n = hull.faces[f].normal.template cast<S>().cwiseQuotient(scale);
    return n / sqrt(n.squaredNorm());
  }
  Vector3<S> normal(int f) const { return pose.R * local_normal(f); }
  int face_vertex(int f, int k) const {
    const ConvexHull::Face& face = hull.faces[f];
    return hull.face_vertices[face.first + (k % face.count)];
  }
};

// The same polytope in values: world vertices, face normals and an interior point.
struct PolytopeValues {
  std::vector<V3d> vertices, normals;
  V3d interior;
  double extent = 0;  // largest half-extent of the scaled local box (for tolerances)

  template <class S>
  void fill(const Polytope<S>& P) {
    Eigen::Matrix3d R;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) R(i, j) = value_of(P.pose.R(i, j));
    const V3d p = values(P.pose.p), s = values(P.scale);
    const ConvexHull& h = P.hull;
    vertices.resize(h.vertices.size());
    for (size_t i = 0; i < h.vertices.size(); ++i) vertices[i] = R * h.vertices[i].cwiseProduct(s) + p;
    normals.resize(h.faces.size());
    for (size_t f = 0; f < h.faces.size(); ++f) normals[f] = R * h.faces[f].normal.cwiseQuotient(s).normalized();
    interior = R * h.interior.cwiseProduct(s) + p;
    extent = ((h.aabb_max - h.aabb_min).cwiseProduct(s) / 2).maxCoeff();
  }
};

struct Scratch {
  PolytopeValues a, b;
  std::vector<int> indices;
  std::vector<V3d> positions;
  std::vector<double> depths, distances;
  std::vector<int> chosen;
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}
template <class S>
std::vector<Vector3<S>>& polygon_buffer(int which) {
  thread_local std::vector<Vector3<S>> buffers[2];
  return buffers[which];
}
template <class S>
std::vector<ContactTpl<S>>& contact_buffer() {
  thread_local std::vector<ContactTpl<S>> buffer;
  return buffer;
}

// Chooses at most `keep` of the candidates (positions and depths, values) into `chosen`: the
// deepest, then repeatedly the one farthest from those already chosen, so that the kept
// contacts span the contact region (a resting face keeps its outline). Returns the count.
int select_spread(const std::vector<V3d>& pos, const std::vector<double>& depth, int keep, std::vector<int>& chosen,
                  std::vector<double>& distance) {
  const int n = static_cast<int>(pos.size());
  chosen.clear();
  if (n <= keep) {
    for (int k = 0; k < n; ++k) chosen.push_back(k);
    return n;
  }
  int first = 0;
  for (int k = 1; k < n; ++k)
    if (depth[k] > depth[first]) first = k;
  distance.assign(n, kInf);
  for (int next = first; static_cast<int>(chosen.size()) < keep;) {
    chosen.push_back(next);
    distance[next] = -1;
    int best = -1;
    for (int k = 0; k < n; ++k) {
      if (distance[k] < 0) continue;
      distance[k] = std::min(distance[k], (pos[k] - pos[next]).squaredNorm());
      if (best < 0 || distance[k] > distance[best]) best = k;
    }
    if (best < 0) break;
    next = best;
  }
  return static_cast<int>(chosen.size());
}

// Keeps a spread subset (select_spread) of contact candidates, into out.
template <class S>
int keep_spread(const std::vector<ContactTpl<S>>& candidates, ContactTpl<S>* out) {
  Scratch& s = scratch();
  s.positions.clear();
  s.depths.clear();
  for (const ContactTpl<S>& c : candidates) {
    s.positions.push_back(values(c.point));
    s.depths.push_back(value_of(c.depth));
  }
  const int n = select_spread(s.positions, s.depths, kMaxPairContacts, s.chosen, s.distances);
  for (int k = 0; k < n; ++k) out[k] = candidates[s.chosen[k]];
  return n;
}

// ---- polytope against polytope ------------------------------------------------------------------

// Largest separation of Y from the face planes of X: max over faces f of min over Y's vertices
// of n_f . (y - x_f). Returns the face in `face`.
template <class S>
double face_query(const Polytope<S>& X, const PolytopeValues& xv, const PolytopeValues& yv, int& face) {
  double best = -kInf;
  face = -1;
  for (int f = 0; f < static_cast<int>(xv.normals.size()); ++f) {
    const V3d& n = xv.normals[f];
    const double offset = n.dot(xv.vertices[X.face_vertex(f, 0)]);
    double sep = kInf;
    for (const V3d& y : yv.vertices) sep = std::min(sep, n.dot(y) - offset);
    if (sep > best) best = sep, face = f;
  }
  return best;
}

// Do the arcs (a, b) and (c, d) of the Gauss map cross (Gregorius)? b_x_a, d_x_c: the arcs'
// plane normals.
bool arcs_cross(const V3d& a, const V3d& b, const V3d& b_x_a, const V3d& c, const V3d& d, const V3d& d_x_c) {
  const double cba = c.dot(b_x_a), dba = d.dot(b_x_a), adc = a.dot(d_x_c), bdc = b.dot(d_x_c);
  return cba * dba < 0 && adc * bdc < 0 && cba * bdc > 0;
}

// Largest separation along the cross products of edge pairs that form a face of the Minkowski
// difference A - B. Returns the edges in ea, eb (-1: none).
double edge_query(const ConvexHull& ha, const PolytopeValues& av, const ConvexHull& hb, const PolytopeValues& bv,
                  int& ea, int& eb) {
  double best = -kInf;
  ea = eb = -1;
  for (int i = 0; i < static_cast<int>(ha.edges.size()); ++i) {
    const auto [fa1, fa2] = ha.edge_faces[i];
    if (fa2 < 0) continue;
    const V3d& a = av.normals[fa1];
    const V3d& b = av.normals[fa2];
    const V3d b_x_a = b.cross(a);
    const V3d& pa = av.vertices[ha.edges[i][0]];
    const V3d da = av.vertices[ha.edges[i][1]] - pa;
    for (int j = 0; j < static_cast<int>(hb.edges.size()); ++j) {
      const auto [fb1, fb2] = hb.edge_faces[j];
      if (fb2 < 0) continue;
      const V3d c = -bv.normals[fb1], d = -bv.normals[fb2];
      if (!arcs_cross(a, b, b_x_a, c, d, d.cross(c))) continue;
      const V3d& pb = bv.vertices[hb.edges[j][0]];
      const V3d db = bv.vertices[hb.edges[j][1]] - pb;
      V3d axis = da.cross(db);
      const double len = axis.norm();
      if (len < 1e-6 * da.norm() * db.norm()) continue;  // parallel edges: a face axis separates as well
      axis /= len;
      if (axis.dot(pa - av.interior) < 0) axis = -axis;
      const double sep = axis.dot(pb - pa);
      if (sep > best) best = sep, ea = i, eb = j;
    }
  }
  return best;
}

// Keeps the part of polygon `in` where dir . x <= offset (Sutherland-Hodgman, one plane).
template <class S>
void clip(const std::vector<Vector3<S>>& in, const Vector3<S>& dir, const S& offset, std::vector<Vector3<S>>& out) {
  out.clear();
  const size_t n = in.size();
  for (size_t k = 0; k < n; ++k) {
    const Vector3<S>& p = in[k];
    const Vector3<S>& q = in[(k + 1) % n];
    const S dp = dir.dot(p) - offset, dq = dir.dot(q) - offset;
    const bool p_in = value_of(dp) <= 0, q_in = value_of(dq) <= 0;
    if (p_in) out.push_back(p);
    if (p_in != q_in) out.push_back(p + (q - p) * (dp / (dp - dq)));
  }
}

// Contacts of polytope Y (values yv) against face `face` of polytope X; normals from a to b.
template <class S>
int face_contacts(const Polytope<S>& X, int face, const Polytope<S>& Y, const PolytopeValues& yv, double margin,
                  bool x_is_a, ContactTpl<S>* out) {
  const Vector3<S> n = X.normal(face);
  const Vector3<S> on_face = X.vertex(X.face_vertex(face, 0));
  const V3d nv = values(n);
  // Incident face: Y's face most opposed to n.
  int incident = 0;
  for (int g = 1; g < static_cast<int>(yv.normals.size()); ++g)
    if (yv.normals[g].dot(nv) < yv.normals[incident].dot(nv)) incident = g;
  std::vector<Vector3<S>>& poly = polygon_buffer<S>(0);
  std::vector<Vector3<S>>& tmp = polygon_buffer<S>(1);
  poly.clear();
  for (int k = 0; k < Y.hull.faces[incident].count; ++k) poly.push_back(Y.vertex(Y.face_vertex(incident, k)));
  const int sides = X.hull.faces[face].count;
  Vector3<S> v0 = on_face;
  for (int k = 0; k < sides && !poly.empty(); ++k) {
    const Vector3<S> v1 = X.vertex(X.face_vertex(face, k + 1));
    const Vector3<S> dir = (v1 - v0).cross(n);  // outward from the face's side k
    clip(poly, dir, S(dir.dot(v0)), tmp);
    std::swap(poly, tmp);
    v0 = v1;
  }
  std::vector<ContactTpl<S>>& found = contact_buffer<S>();
  found.clear();
  for (const Vector3<S>& x : poly) {
    const S height = n.dot(x - on_face);
    if (value_of(height) > margin) continue;
    found.emplace_back();
    set_contact(found.back(), Vector3<S>(x - n * height / S(2)), x_is_a ? n : Vector3<S>(-n), S(-height));
  }
  if (found.empty()) {
    // Nothing of the incident face lies over the reference face (a face axis chosen within the
    // tolerance of an edge axis): Y's deepest vertex below the face plane.
    int deepest = 0;
    for (int i = 1; i < static_cast<int>(yv.vertices.size()); ++i)
      if (yv.vertices[i].dot(nv) < yv.vertices[deepest].dot(nv)) deepest = i;
    const Vector3<S> x = Y.vertex(deepest);
    const S height = n.dot(x - on_face);
    if (value_of(height) > margin) return 0;
    set_contact(out[0], Vector3<S>(x - n * height / S(2)), x_is_a ? n : Vector3<S>(-n), S(-height));
    return 1;
  }
  return keep_spread(found, out);
}

template <class S>
int polytope_polytope(const Polytope<S>& A, const Polytope<S>& B, double margin, ContactTpl<S>* out) {
  Scratch& s = scratch();
  s.a.fill(A);
  s.b.fill(B);
  int face_a, face_b, edge_a, edge_b;
  const double sep_a = face_query(A, s.a, s.b, face_a);
  if (sep_a > margin) return 0;
  const double sep_b = face_query(B, s.b, s.a, face_b);
  if (sep_b > margin) return 0;
  const double sep_edge = edge_query(A.hull, s.a, B.hull, s.b, edge_a, edge_b);
  if (sep_edge > margin) return 0;
  // A pose that is not finite makes every separation NaN and chooses no face: no contact (the
  // step flags the state as non-finite; nothing here may index with the missing face).
  if (face_a < 0 || face_b < 0) return 0;
  // Faces are preferred (stable manifolds), A's over B's, unless clearly beaten: the choice then
  // does not flicker between steps of a resting contact.
  const double tolerance = 1e-5 * (1 + std::max(s.a.extent, s.b.extent));
  const double best_face = std::max(sep_a, sep_b);
  if (edge_a < 0 || sep_edge <= best_face + tolerance) {
    if (sep_b > sep_a + tolerance) return face_contacts(B, face_b, A, s.a, margin, false, out);
    return face_contacts(A, face_a, B, s.b, margin, true, out);
  }
  // Edge against edge: the closest points of the two edges, the normal their cross product.
  const Vector3<S> pa = A.vertex(A.hull.edges[edge_a][0]), da = A.vertex(A.hull.edges[edge_a][1]) - pa;
  const Vector3<S> pb = B.vertex(B.hull.edges[edge_b][0]), db = B.vertex(B.hull.edges[edge_b][1]) - pb;
  Vector3<S> n = da.cross(db);
  n.normalize();
  if (value_of(n.dot(Vector3<S>(pa - A.pose.act_point(Vector3<S>(A.hull.interior.template cast<S>().cwiseProduct(A.scale)))))) < 0)
    n = -n;
  S t_a, t_b;
  closest_segment_segment(pa, da, pb, db, t_a, t_b);
  const Vector3<S> qa = pa + t_a * da, qb = pb + t_b * db;
  const S depth = -n.dot(qb - qa);
  if (-value_of(depth) > margin) return 0;
  set_contact(out[0], Vector3<S>((qa + qb) / S(2)), n, depth);
  return 1;
}

// ---- a point against a polytope -----------------------------------------------------------------

// Signed distance from x (the polytope's geom frame, scaled space) to the scaled hull; normal:
// outward unit normal at the closest surface point (geom frame). Inside: the nearest face plane.
// Outside: the closest point of the faces that see x (face, edge or vertex, chosen on values).
template <class S>
S sdf_hull(const ConvexHull& h, const Vector3<S>& scale, const Vector3<S>& x, Vector3<S>& normal) {
  using std::sqrt;
  const V3d sv = values(scale), xv = values(x);
  auto vertex = [&](int i) { return V3d(h.vertices[i].cwiseProduct(sv)); };
  int inside_face = -1;
  double inside_best = -kInf;
  // Outside: the best feature so far: kind 0 face, 1 edge (i, j), 2 vertex i.
  int kind = -1, fi = -1, vi = -1, vj = -1;
  double best2 = kInf;
  for (int f = 0; f < static_cast<int>(h.faces.size()); ++f) {
    const ConvexHull::Face& face = h.faces[f];
    const V3d n = face.normal.cwiseQuotient(sv).normalized();
    const V3d v0 = vertex(h.face_vertices[face.first]);
    const double dist = n.dot(xv - v0);
    if (dist > inside_best) inside_best = dist, inside_face = f;
    if (dist <= 0) continue;
    // x sees this face: its projection inside the polygon, else the polygon's closest boundary point.
    const V3d proj = xv - dist * n;
    bool within = true;
    for (int k = 0; k < face.count; ++k) {
      const V3d p = vertex(h.face_vertices[face.first + k]);
      const V3d q = vertex(h.face_vertices[face.first + (k + 1) % face.count]);
      if ((q - p).cross(n).dot(proj - p) <= 0) continue;
      within = false;
      const V3d e = q - p;
      const double t = std::clamp(e.dot(xv - p) / e.squaredNorm(), 0.0, 1.0);
      const double d2 = (xv - p - t * e).squaredNorm();
      if (d2 < best2) {
        best2 = d2;
        if (t <= 0 || t >= 1) {
          kind = 2;
          vi = h.face_vertices[face.first + (t <= 0 ? k : (k + 1) % face.count)];
        } else {
          kind = 1;
          vi = h.face_vertices[face.first + k];
          vj = h.face_vertices[face.first + (k + 1) % face.count];
        }
      }
    }
    if (within && dist * dist < best2) best2 = dist * dist, kind = 0, fi = f;
  }
  if (inside_face < 0) {  // no face distance compares (overflow to inf - inf): too far to touch
    normal = Vector3<S>::UnitZ();
    return S(kInf);
  }
  if (inside_best <= 0 || kind < 0) {  // inside (or on) the hull: the nearest face plane
    const ConvexHull::Face& face = h.faces[inside_face];
    normal = Vector3<S>(face.normal.template cast<S>().cwiseQuotient(scale));
    normal /= sqrt(normal.squaredNorm());
    return normal.dot(Vector3<S>(x - h.vertices[h.face_vertices[face.first]].template cast<S>().cwiseProduct(scale)));
  }
  auto vertex_s = [&](int i) { return Vector3<S>(h.vertices[i].template cast<S>().cwiseProduct(scale)); };
  if (kind == 0) {
    const ConvexHull::Face& face = h.faces[fi];
    normal = Vector3<S>(face.normal.template cast<S>().cwiseQuotient(scale));
    normal /= sqrt(normal.squaredNorm());
    return normal.dot(Vector3<S>(x - vertex_s(h.face_vertices[face.first])));
  }
  Vector3<S> closest = vertex_s(vi);
  if (kind == 1) {
    const Vector3<S> e = vertex_s(vj) - closest;
    closest += e * S(e.dot(Vector3<S>(x - closest)) / e.squaredNorm());
  }
  const Vector3<S> d = x - closest;
  const S dist = sqrt(d.squaredNorm());
  normal = d / dist;
  return dist;
}

// The hull's signed distance at a point in its frame, in S or (for capsule_sdf's search) in double.
template <class S>
auto hull_sdf(const GeomTpl<S>& hull) {
  return [&hull]<class T>(const Vector3<T>& x, Vector3<T>& m) {
    if constexpr (std::is_same_v<T, S>)
      return sdf_hull<S>(*hull.hull, hull.size, x, m);
    else
      return sdf_hull<double>(*hull.hull, values(hull.size), x, m);
  };
}

}  // namespace

template <class S>
int plane_hull(const GeomTpl<S>&, const Pose<S>& P, const GeomTpl<S>& hull, const Pose<S>& H, double margin,
               ContactTpl<S>* out) {
  // Every vertex within the margin of the plane is a contact (the hull's points nearest the plane
  // are vertices), at most kMaxPairContacts of them, spread over the contact region.
  const Polytope<S> poly{*hull.hull, hull.size, H};
  Scratch& s = scratch();
  s.a.fill(poly);
  const Vector3<S> n = P.R.col(2);
  const V3d nv = values(n), origin = values(P.p);
  s.indices.clear();
  s.positions.clear();
  s.depths.clear();
  for (int i = 0; i < static_cast<int>(s.a.vertices.size()); ++i) {
    const double height = nv.dot(s.a.vertices[i] - origin);
    if (height > margin) continue;
    s.indices.push_back(i);
    s.positions.push_back(s.a.vertices[i]);
    s.depths.push_back(-height);
  }
  const int count = select_spread(s.positions, s.depths, kMaxPairContacts, s.chosen, s.distances);
  for (int k = 0; k < count; ++k) {
    const Vector3<S> x = poly.vertex(s.indices[s.chosen[k]]);
    const S height = n.dot(x - P.p);
    set_contact(out[k], Vector3<S>(x - n * height / S(2)), n, S(-height));
  }
  return count;
}

template <class S>
int sphere_hull(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                ContactTpl<S>* out) {
  return sphere_sdf(A.p, a.size[0], B, hull_sdf(b), margin, out);
}

template <class S>
int capsule_hull(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                 ContactTpl<S>* out) {
  return capsule_sdf(a, A, B, hull_sdf(b), margin, out);
}

template <class S>
int box_hull(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
             ContactTpl<S>* out) {
  return polytope_polytope(Polytope<S>{unit_cube(), a.size, A}, Polytope<S>{*b.hull, b.size, B}, margin, out);
}

template <class S>
int cylinder_hull(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
                  ContactTpl<S>* out) {
  // Sampled, like box-cylinder: the hull's vertices and edge midpoints against the cylinder, the
  // cylinder's rim points and cap centres against the hull; the 4 deepest.
  std::vector<ContactTpl<S>>& found = contact_buffer<S>();
  found.clear();
  const Polytope<S> poly{*b.hull, b.size, B};
  Scratch& s = scratch();
  s.a.fill(poly);
  const V3d centre = values(A.p);
  const double reach = value_of(a.size[0]) + value_of(a.size[1]) + margin;
  const int nv = static_cast<int>(s.a.vertices.size()), ne = static_cast<int>(b.hull->edges.size());
  for (int i = 0; i < nv + ne; ++i) {  // vertices, then edge midpoints (as box_samples)
    const V3d xv = i < nv ? s.a.vertices[i]
                          : V3d((s.a.vertices[b.hull->edges[i - nv][0]] + s.a.vertices[b.hull->edges[i - nv][1]]) / 2);
    if ((xv - centre).norm() > reach) continue;  // cannot touch
    const Vector3<S> x = i < nv ? poly.vertex(i)
                                : Vector3<S>((poly.vertex(b.hull->edges[i - nv][0]) + poly.vertex(b.hull->edges[i - nv][1])) / S(2));
    Vector3<S> m_local;
    const S d = sdf_cylinder<S>(Vector3<S>(A.R.transpose() * (x - A.p)), a.size[0], a.size[1], m_local);
    if (value_of(d) > margin) continue;
    found.emplace_back();
    point_contact(found.back(), x, d, Vector3<S>(A.R * m_local), /*y_is_a=*/true);
  }
  Vector3<S> pts[18];
  const int n = cylinder_samples(a, A, B.p, pts);
  for (int k = 0; k < n; ++k) {
    Vector3<S> m_local;
    const S d = sdf_hull<S>(*b.hull, b.size, Vector3<S>(B.R.transpose() * (pts[k] - B.p)), m_local);
    if (value_of(d) > margin) continue;
    found.emplace_back();
    point_contact(found.back(), pts[k], d, Vector3<S>(B.R * m_local), /*y_is_a=*/false);
  }
  const int keep = std::min<int>(4, static_cast<int>(found.size()));
  std::partial_sort(found.begin(), found.begin() + keep, found.end(),
                    [](const ContactTpl<S>& x, const ContactTpl<S>& y) { return value_of(x.depth) > value_of(y.depth); });
  for (int k = 0; k < keep; ++k) out[k] = found[k];
  return keep;
}

template <class S>
int hull_hull(const GeomTpl<S>& a, const Pose<S>& A, const GeomTpl<S>& b, const Pose<S>& B, double margin,
              ContactTpl<S>* out) {
  return polytope_polytope(Polytope<S>{*a.hull, a.size, A}, Polytope<S>{*b.hull, b.size, B}, margin, out);
}

#define GRADYN_PAIR(S, fn) \
  template int fn<S>(const GeomTpl<S>&, const Pose<S>&, const GeomTpl<S>&, const Pose<S>&, double, ContactTpl<S>*);
#define GRADYN_INSTANTIATE(S)    \
  GRADYN_PAIR(S, plane_hull)     \
  GRADYN_PAIR(S, sphere_hull)    \
  GRADYN_PAIR(S, capsule_hull)   \
  GRADYN_PAIR(S, box_hull)       \
  GRADYN_PAIR(S, cylinder_hull)  \
  GRADYN_PAIR(S, hull_hull)
// The narrowphase in forward mode serves the double path too (collide_vjp): both scalars always.
GRADYN_FOR_EACH_SCALAR_ALWAYS(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE
#undef GRADYN_PAIR

}  // namespace gradyn::collision_detail
