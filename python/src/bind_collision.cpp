// Collision detection from Python: gradyn.collide(model, q, margin) and the geometry's names and
// parameters (Model.geom_names, Model.geoms), and Model.with_ground_plane.
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "common.hpp"
#include "gradyn/collision/collide.hpp"

namespace gradyn::python {

namespace {

nb::object owned(NumpyArray a) { return nb::cast(std::move(a), nb::rv_policy::move); }

nb::object vector3(const Vector3<double>& x) {
  double* buffer;
  NumpyArray out = new_array({3}, &buffer);
  Eigen::Map<Eigen::Vector3d> view(buffer);
  view = x;
  return owned(std::move(out));
}

// A hull's vertices (n, 3) and its faces fanned into triangles (m, 3), counter-clockwise seen from
// outside, for drawing (gradyn.viewer); a convex face's fan covers it exactly.
void add_hull_mesh(nb::dict& d, const ConvexHull& hull) {
  double* v;
  NumpyArray vertices = new_array({hull.vertices.size(), 3}, &v);
  for (size_t i = 0; i < hull.vertices.size(); ++i)
    for (int k = 0; k < 3; ++k) v[3 * i + k] = hull.vertices[i][k];
  auto* triangles = new std::vector<std::int32_t>();
  for (const ConvexHull::Face& f : hull.faces)
    for (int k = 1; k + 1 < f.count; ++k)
      triangles->insert(triangles->end(), {hull.face_vertices[f.first], hull.face_vertices[f.first + k],
                                           hull.face_vertices[f.first + k + 1]});
  nb::capsule owner(triangles, [](void* p) noexcept { delete static_cast<std::vector<std::int32_t>*>(p); });
  size_t shape[2] = {triangles->size() / 3, 3};
  d["vertices"] = owned(std::move(vertices));
  d["triangles"] = nb::cast(nb::ndarray<nb::numpy, std::int32_t>(triangles->data(), 2, shape, owner),
                            nb::rv_policy::move);
}

}  // namespace

void bind_collision(nb::module_& m) {
  nb::class_<PyModel> cls = nb::borrow<nb::class_<PyModel>>(m.attr("Model"));
  cls.def_prop_ro(
         "geom_names",
         [](const PyModel& s) {
           std::vector<std::string> names;
           for (const Geom& g : s.model.geoms) names.push_back(g.name);
           return names;
         },
         "Names of the collision geoms, in model order.")
      .def_prop_ro(
          "geoms",
          [](const PyModel& s) {
            nb::list out;
            for (const Geom& g : s.model.geoms) {
              nb::dict d;
              d["name"] = g.name;
              d["type"] = geom_type_name(g.type);
              d["body"] = g.body < 0 ? std::string("world") : s.model.body_names[g.body];
              d["placement"] = owned(to_numpy(g.placement));
              d["size"] = vector3(g.size);
              d["friction"] = g.friction;
              d["restitution"] = g.restitution;
              d["contype"] = g.contype;
              d["conaffinity"] = g.conaffinity;
              if (g.hull) add_hull_mesh(d, *g.hull);
              out.append(d);
            }
            return out;
          },
          "The collision geoms as dicts: name, type, body ('world' for the world), placement (4x4, in "
          "the body frame), size (see the C++ geometry.hpp: radius / half-length / half-extents), "
          "friction, restitution, contype, conaffinity; convex_hull geoms also vertices ((n, 3), in the geom "
          "frame, before the size scale) and triangles ((m, 3) int32 vertex indices, counter-clockwise seen "
          "from outside).")
      // URDF has no world geometry, so a robot loaded from one needs its floor added here.
      .def(
          "with_ground_plane",
          [](const PyModel& s, double height, double friction, double restitution, const std::string& name) {
            GeomSpec spec;
            spec.name = name;
            spec.type = GeomType::Plane;
            spec.placement.p = Vector3<double>(0, 0, height);
            spec.friction = friction;
            spec.restitution = restitution;
            spec.where = SourceLocation{"", 0, "Model.with_ground_plane"};
            if (!std::isfinite(height)) throw ArgumentError("height: expected a finite number");
            check_geom(spec, spec.where);
            if (s.model.geom_id(name) >= 0) throw ArgumentError("name: the model already has a geom named '" + name + "'");
            Model copy = s.model;
            Geom g;
            g.name = spec.name;
            g.type = spec.type;
            g.body = -1;
            g.placement = spec.placement;
            g.friction = spec.friction;
            g.restitution = spec.restitution;
            g.where = spec.where;
            copy.geoms.push_back(std::move(g));
            return std::make_unique<PyModel>(std::move(copy));
          },
          nb::arg("height") = 0.0, nb::arg("friction") = kDefaultFriction,
          nb::arg("restitution") = kDefaultRestitution, nb::arg("name") = "ground", R"doc(
A copy of this model with a world plane z = height (normal +z, solid below) added as the last geom,
e.g. a floor under a robot loaded from URDF, which has no world geometry. friction: its Coulomb
coefficient (a contact uses the larger of the two geoms'); restitution in [0, 1]. Contact forces
still need a contact model (gradyn.load(..., contact=...) or Model.with_contact). Raises
gradyn.ModelError for a negative friction or a restitution outside [0, 1], ValueError for a
non-finite height or a geom name already taken.
)doc");

  m.def(
      "collide",
      [](PyModel& s, nb::handle q, double margin) {
        if (!(margin >= 0) || !std::isfinite(margin)) throw ArgumentError("margin: expected a non-negative finite number");
        VectorArg q_(q, "q", s.model.nq);
        check_finite(q_.x, "q");
        DataLease data(s);
        Data& d = *data;
        gradyn::forward_kinematics<double>(s.model, d, q_.x);
        d.status &= ~static_cast<std::uint32_t>(kStatusContactOverflow | kStatusBroadphaseOverflow);
        gradyn::collide<double>(s.model, d, margin);
        nb::list out;
        for (int k = 0; k < d.ncontacts; ++k) {
          const Contact& c = d.contacts[k];
          nb::dict x;
          x["geom_a"] = s.model.geoms[c.geom_a].name;
          x["geom_b"] = s.model.geoms[c.geom_b].name;
          x["point"] = vector3(c.point);
          x["normal"] = vector3(c.normal);
          x["depth"] = c.depth;
          x["frame"] = owned(matrix_to_numpy(c.frame));
          out.append(x);
        }
        if (d.status & kStatusContactOverflow)
          nb::module_::import_("warnings").attr("warn")("gradyn.collide: more contacts than the buffer holds; some were dropped");
        return out;
      },
      nb::arg("model"), nb::arg("q"), nb::arg("margin") = 0.0,
      "Contacts between the model's geoms at configuration q: a list of dicts with geom_a, geom_b "
      "(names), point (world, midway between the surfaces), normal (world, unit, from a to b), depth "
      "(> 0 overlapping; down to -margin for near contacts) and frame (3x3, columns normal, tangent1, "
      "tangent2).");
}

}  // namespace gradyn::python
