// Collision geometry attached to bodies, and the contacts collide() finds between them.
//
// Size conventions (the `size` vector; unused entries are 0):
//   Plane     size = (0, 0, 0)            the infinite plane z = 0 of the geom frame; its normal is +z
//                                         (the half-space z < 0 is solid)
//   Sphere    size = (radius, 0, 0)
//   Capsule   size = (radius, half_length, 0)   segment from -half_length to +half_length along z
//   Box       size = (hx, hy, hz)         half-extents along x, y, z
//   Cylinder  size = (radius, half_length, 0)   axis along z, caps at z = +-half_length
//   ConvexHull size = (sx, sy, sz)        a scale along x, y, z applied to the hull's vertices
//                                         (1, 1, 1 unless the user changes it; the vertices
//                                         themselves, already scaled by a file's scale=, live
//                                         in GeomTpl::hull and are not parameters)
// MJCF uses the same numbers (capsule/cylinder size = radius, half-length); URDF cylinders give the
// full length, boxes the full extents: the loader halves them.
//
// Meshes (MJCF <geom type="mesh">, URDF <mesh>) collide as the convex hull of their vertices,
// as in MuJoCo: a ConvexHull geom. The hull (qhull, at model build) is shared, immutable data.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gradyn/model/errors.hpp"
#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

enum class GeomType : std::uint8_t { Plane = 0, Sphere, Capsule, Box, Cylinder, ConvexHull };
inline constexpr int kNumGeomTypes = 6;

const char* geom_type_name(GeomType type);

/// A convex polytope in its geom frame: the convex hull of a point set, computed once (qhull).
/// Faces are polygons (coplanar triangles merged), their vertices counter-clockwise seen from
/// outside; every edge lies between two faces. Everything in double: it is geometry data, not
/// a parameter (GeomTpl::size scales it).
struct ConvexHull {
  struct Face {
    Vector3<double> normal;  // outward, unit
    double offset = 0;       // normal . x = offset on the face
    int first = 0, count = 0;  // face_vertices[first, first + count)
  };
  std::vector<Vector3<double>> vertices;  // the hull's vertices only (interior points dropped)
  std::vector<Face> faces;
  std::vector<int> face_vertices;
  std::vector<std::array<int, 2>> edges;       // vertex indices, each edge once
  std::vector<std::array<int, 2>> edge_faces;  // the two faces that meet at edges[k]
  Vector3<double> interior = Vector3<double>::Zero();  // the mean of the vertices (strictly inside)
  Vector3<double> aabb_min = Vector3<double>::Zero(), aabb_max = Vector3<double>::Zero();
  // Solid mass properties at unit density: volume, centroid and inertia about the centroid.
  double volume = 0;
  Vector3<double> centroid = Vector3<double>::Zero();
  Matrix3<double> inertia = Matrix3<double>::Zero();
};

/// The convex hull of `points` (at least 4, not all in a plane). Throws ArgumentError otherwise,
/// with qhull's reason.
std::shared_ptr<const ConvexHull> make_convex_hull(const std::vector<Vector3<double>>& points);

// Defaults for files that do not say: Coulomb friction 1 (MuJoCo's sliding friction default and
// the usual URDF simulator default), restitution 0 (perfectly inelastic).
inline constexpr double kDefaultFriction = 1.0;
inline constexpr double kDefaultRestitution = 0.0;

/// One collision geometry, rigidly attached to a body (or to the world, body = -1).
template <class S>
struct GeomTpl {
  std::string name;
  GeomType type = GeomType::Sphere;
  int body = -1;          // -1: the world
  Pose<S> placement;      // geom frame in the body frame
  Vector3<S> size = Vector3<S>::Zero();  // see the file comment
  S friction = S(kDefaultFriction);       // Coulomb coefficient mu >= 0
  S restitution = S(kDefaultRestitution); // in [0, 1]
  // MuJoCo's filter: geoms a and b may touch when (contype_a & conaffinity_b) || (contype_b & conaffinity_a).
  std::uint32_t contype = 1, conaffinity = 1;
  std::shared_ptr<const ConvexHull> hull;  // ConvexHull geoms only
  SourceLocation where;

  template <class T>
  GeomTpl<T> cast() const {
    GeomTpl<T> g;
    g.name = name;
    g.type = type;
    g.body = body;
    g.placement = placement.template cast<T>();
    g.size = size.template cast<T>();
    g.friction = T(friction);
    g.restitution = T(restitution);
    g.contype = contype;
    g.conaffinity = conaffinity;
    g.hull = hull;
    g.where = where;
    return g;
  }
};
using Geom = GeomTpl<double>;

/// A geometry as the builder receives it: placed in its LINK frame (build() re-expresses it in
/// the body frame when fixed joints merge links).
struct GeomSpec {
  std::string name;  // empty: "<link>/collision<k>"
  GeomType type = GeomType::Sphere;
  Pose<double> placement;  // in the link frame
  Vector3<double> size = Vector3<double>::Zero();
  double friction = kDefaultFriction;
  double restitution = kDefaultRestitution;
  std::uint32_t contype = 1, conaffinity = 1;
  std::shared_ptr<const ConvexHull> hull;  // ConvexHull geoms: make_convex_hull(vertices); size = scale (1, 1, 1)
  SourceLocation where;
};

/// A ConvexHull geom spec from vertices in the link frame's geom frame (scale 1).
GeomSpec convex_hull_geom(std::string name, const std::vector<Vector3<double>>& vertices,
                          const Pose<double>& placement = Pose<double>());

/// Throws ModelError naming the geom unless its numbers are usable: sizes positive and finite
/// where the type uses them, friction >= 0, restitution in [0, 1], a finite placement, and a
/// hull for a ConvexHull geom.
void check_geom(const GeomSpec& geom, const SourceLocation& where);

/// One contact between geoms a and b.
template <class S>
struct ContactTpl {
  int geom_a = -1, geom_b = -1;
  Vector3<S> point = Vector3<S>::Zero();   // world; midway between the two surfaces
  Vector3<S> normal = Vector3<S>::UnitZ(); // world, unit, pointing from a to b
  S depth = S(0);                          // penetration: > 0 overlapping, < 0 a gap (within the margin)
  Matrix3<S> frame = Matrix3<S>::Identity();  // columns: normal, tangent1, tangent2 (right-handed)
  // The pair's material, mixed once when the contact is made (collide_geoms): the geom whose value
  // the pair takes, the larger of the two (geom a's on a tie). The coefficient is that geom's
  // parameter (model.geoms[friction_geom].friction), so a backward pass hands the adjoint to it.
  // Indices, not values: a contact stays small to copy, also in the forward-mode passes of
  // collide_vjp, where a value would carry 8 derivatives.
  int friction_geom = -1;     // geom_a or geom_b: its friction is the pair's Coulomb coefficient
  int restitution_geom = -1;  // geom_a or geom_b: its restitution is the pair's
};
using Contact = ContactTpl<double>;

/// Adjoint of one contact's geometry. Everything in world coordinates.
template <class S>
struct ContactBarTpl {
  Vector3<S> point = Vector3<S>::Zero();
  Matrix3<S> frame = Matrix3<S>::Zero();  // adjoint of every entry of ContactTpl::frame (column 0 is the normal)
  S depth = S(0);
  void setZero() { point.setZero(); frame.setZero(); depth = S(0); }
};
using ContactBar = ContactBarTpl<double>;

}  // namespace gradyn
