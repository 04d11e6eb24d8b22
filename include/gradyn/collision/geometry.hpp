// Collision geometry attached to bodies, and the contacts collide() finds between them.
//
// Size conventions (the `size` vector; unused entries are 0):
//   Plane     size = (0, 0, 0)            the infinite plane z = 0 of the geom frame; its normal is +z
//                                         (the half-space z < 0 is solid)
//   Sphere    size = (radius, 0, 0)
//   Capsule   size = (radius, half_length, 0)   segment from -half_length to +half_length along z
//   Box       size = (hx, hy, hz)         half-extents along x, y, z
//   Cylinder  size = (radius, half_length, 0)   axis along z, caps at z = +-half_length
// MJCF uses the same numbers (capsule/cylinder size = radius, half-length); URDF cylinders give the
// full length, boxes the full extents: the loader halves them.
#pragma once

#include <cstdint>
#include <string>

#include "gradyn/model/errors.hpp"
#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

enum class GeomType : std::uint8_t { Plane = 0, Sphere, Capsule, Box, Cylinder };
inline constexpr int kNumGeomTypes = 5;

const char* geom_type_name(GeomType type);

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
  SourceLocation where;
};

/// Throws ModelError naming the geom unless its numbers are usable: sizes positive and finite
/// where the type uses them, friction >= 0, restitution in [0, 1], a finite placement.
void check_geom(const GeomSpec& geom, const SourceLocation& where);

/// One contact between geoms a and b.
template <class S>
struct ContactTpl {
  int geom_a = -1, geom_b = -1;
  Vector3<S> point = Vector3<S>::Zero();   // world; midway between the two surfaces
  Vector3<S> normal = Vector3<S>::UnitZ(); // world, unit, pointing from a to b
  S depth = S(0);                          // penetration: > 0 overlapping, < 0 a gap (within the margin)
  Matrix3<S> frame = Matrix3<S>::Identity();  // columns: normal, tangent1, tangent2 (right-handed)
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
