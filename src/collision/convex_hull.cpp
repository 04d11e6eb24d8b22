// Convex hulls of point sets (make_convex_hull) with qhull's reentrant library (Debian
// libqhull-dev, libqhull_r): the hull itself is qhull's; gradyn only orders each face's vertices,
// lists the edges and integrates the solid's mass properties.
#include <libqhull_r/qhull_ra.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "gradyn/collision/geometry.hpp"

namespace gradyn {

namespace {

// qhull writes its messages to a FILE*: an in-memory one, read back into an error.
class MessageStream {
 public:
  MessageStream() : file_(open_memstream(&buffer_, &size_)) {}
  ~MessageStream() {
    if (file_) std::fclose(file_);
    std::free(buffer_);
  }
  FILE* file() const { return file_; }
  std::string text() {
    if (file_) std::fflush(file_);
    std::string s = buffer_ ? std::string(buffer_, size_) : std::string();
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  FILE* file_;
};

// Orders a face's vertices counter-clockwise about its outward normal.
void order_face(const std::vector<Vector3<double>>& vertices, const Vector3<double>& normal, std::vector<int>& face) {
  Vector3<double> centre = Vector3<double>::Zero();
  for (int v : face) centre += vertices[v];
  centre /= static_cast<double>(face.size());
  const Vector3<double> u = (vertices[face[0]] - centre).normalized();
  const Vector3<double> w = normal.cross(u);
  std::vector<std::pair<double, int>> by_angle;
  for (int v : face) {
    const Vector3<double> d = vertices[v] - centre;
    by_angle.emplace_back(std::atan2(d.dot(w), d.dot(u)), v);
  }
  std::sort(by_angle.begin(), by_angle.end());
  for (size_t k = 0; k < face.size(); ++k) face[k] = by_angle[k].second;
}

// Volume, centroid and inertia about the centroid (unit density), from the faces fanned into
// triangles and each triangle coned to the origin (signed tetrahedra).
void mass_properties(ConvexHull& h) {
  double volume = 0;
  Vector3<double> first = Vector3<double>::Zero();
  Matrix3<double> second = Matrix3<double>::Zero();  // integral of x x^T
  for (const ConvexHull::Face& f : h.faces) {
    const Vector3<double>& a = h.vertices[h.face_vertices[f.first]];
    for (int k = 1; k + 1 < f.count; ++k) {
      const Vector3<double>& b = h.vertices[h.face_vertices[f.first + k]];
      const Vector3<double>& c = h.vertices[h.face_vertices[f.first + k + 1]];
      const double det = a.dot(b.cross(c));
      const Vector3<double> s = a + b + c;
      volume += det / 6;
      first += det / 24 * s;
      second += det / 120 * (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose());
    }
  }
  h.volume = volume;
  h.centroid = first / volume;
  const Matrix3<double> central = second - volume * h.centroid * h.centroid.transpose();
  h.inertia = central.trace() * Matrix3<double>::Identity() - central;
}

}  // namespace

std::shared_ptr<const ConvexHull> make_convex_hull(const std::vector<Vector3<double>>& points) {
  const int n = static_cast<int>(points.size());
  if (n < 4) {
    std::ostringstream s;
    s << "a convex hull needs at least 4 points, got " << n;
    throw ArgumentError(s.str());
  }
  std::vector<coordT> coords(3 * points.size());
  for (int i = 0; i < n; ++i) {
    if (!points[i].allFinite()) throw ArgumentError("convex hull point " + std::to_string(i) + " is not finite");
    for (int k = 0; k < 3; ++k) coords[3 * i + k] = points[i][k];
  }

  MessageStream messages;
  qhT qh_storage;
  qhT* qh = &qh_storage;
  qh_zero(qh, messages.file());
  char flags[] = "qhull";  // coplanar facets merged (qhull's default for 3-d)
  const int exitcode = qh_new_qhull(qh, 3, n, coords.data(), False, flags, nullptr, messages.file());
  auto hull = std::make_shared<ConvexHull>();
  std::string failure;
  if (exitcode != 0) {
    failure = messages.text();
  } else {
    std::map<int, int> index;  // qhull point id -> hull vertex
    std::vector<int> face;
    facetT* facet;
    vertexT *vertex, **vertexp;
    FORALLfacets {
      face.clear();
      FOREACHvertex_(facet->vertices) {
        const int id = qh_pointid(qh, vertex->point);
        auto [it, added] = index.emplace(id, static_cast<int>(hull->vertices.size()));
        if (added) hull->vertices.push_back(points[id]);
        face.push_back(it->second);
      }
      ConvexHull::Face f;
      f.normal = Vector3<double>(facet->normal[0], facet->normal[1], facet->normal[2]).normalized();
      order_face(hull->vertices, f.normal, face);
      f.offset = f.normal.dot(hull->vertices[face[0]]);
      f.first = static_cast<int>(hull->face_vertices.size());
      f.count = static_cast<int>(face.size());
      hull->face_vertices.insert(hull->face_vertices.end(), face.begin(), face.end());
      hull->faces.push_back(f);
    }
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong = 0, totlong = 0;
  qh_memfreeshort(qh, &curlong, &totlong);
  if (!failure.empty() || exitcode != 0) {
    const auto cut = failure.find('\n', failure.find("QH"));
    throw ArgumentError("qhull could not build the convex hull of " + std::to_string(n) +
                        " points (are they all in a plane?): " + failure.substr(0, cut));
  }

  // Edges: consecutive face vertices; each edge borders two faces.
  std::map<std::pair<int, int>, int> edge_index;
  for (int fi = 0; fi < static_cast<int>(hull->faces.size()); ++fi) {
    const ConvexHull::Face& f = hull->faces[fi];
    for (int k = 0; k < f.count; ++k) {
      const int a = hull->face_vertices[f.first + k], b = hull->face_vertices[f.first + (k + 1) % f.count];
      const std::pair<int, int> key(std::min(a, b), std::max(a, b));
      auto [it, added] = edge_index.emplace(key, static_cast<int>(hull->edges.size()));
      if (added) {
        hull->edges.push_back({key.first, key.second});
        hull->edge_faces.push_back({fi, -1});
      } else {
        hull->edge_faces[it->second][1] = fi;
      }
    }
  }
  hull->aabb_min = hull->aabb_max = hull->vertices[0];
  for (const Vector3<double>& v : hull->vertices) {
    hull->interior += v;
    hull->aabb_min = hull->aabb_min.cwiseMin(v);
    hull->aabb_max = hull->aabb_max.cwiseMax(v);
  }
  hull->interior /= static_cast<double>(hull->vertices.size());
  mass_properties(*hull);
  return hull;
}

GeomSpec convex_hull_geom(std::string name, const std::vector<Vector3<double>>& vertices, const Pose<double>& placement) {
  GeomSpec g;
  g.name = std::move(name);
  g.type = GeomType::ConvexHull;
  g.placement = placement;
  g.size = Vector3<double>::Ones();
  g.hull = make_convex_hull(vertices);
  return g;
}

}  // namespace gradyn
