// The ray-cast camera from Python: _core._render and _core._render_vjp, which gradyn.render and
// gradyn.render_vjp (python/gradyn/render.py) call with the camera and the appearance as dicts of
// plain values (the Python classes gradyn.Camera and gradyn.Appearance check and fill them).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "gradyn/render/render_vjp.hpp"

namespace gradyn::python {

namespace {

nb::object owned(NumpyArray a) { return nb::cast(std::move(a), nb::rv_policy::move); }

nb::handle item(const nb::dict& d, const char* key) {
  if (!d.contains(key)) throw ArgumentError(std::string("render: missing '") + key + "'");
  return d[key];
}

Eigen::Vector3d vec3(const nb::dict& d, const char* key, const char* name) {
  const VectorArg a(item(d, key), name, 3);
  return a.x;
}

Camera camera_arg(const Model& model, const nb::dict& d) {
  Camera c;
  c.width = nb::cast<int>(item(d, "width"));
  c.height = nb::cast<int>(item(d, "height"));
  c.fovy = nb::cast<double>(item(d, "fovy"));
  c.body = nb::cast<int>(item(d, "body"));
  c.pos = vec3(d, "pos", "camera.pos");
  const VectorArg quat(item(d, "quat"), "camera.quat", 4);
  c.quat = quat.x;
  check_camera(model, c);
  return c;
}

Appearance appearance_arg(const Model& model, const nb::dict& d) {
  Appearance a;
  const int ng = model.ngeoms();
  const ConstArray colors = as_array(item(d, "colors"), "appearance.colors");
  check_shape(colors, "appearance.colors", {ng, 3});
  const VectorArg tex_ids(item(d, "texture_ids"), "appearance.texture_ids", ng);
  const VectorArg tiles(item(d, "tiles"), "appearance.tiles", ng);
  a.geoms.resize(ng);
  for (int g = 0; g < ng; ++g) {
    a.geoms[g].color = Eigen::Map<const Eigen::Vector3d>(colors.data() + 3 * g);
    a.geoms[g].texture = static_cast<int>(tex_ids.x[g]);
    a.geoms[g].tile = tiles.x[g];
  }
  const nb::list textures = nb::borrow<nb::list>(item(d, "textures"));
  const nb::list names = nb::borrow<nb::list>(item(d, "texture_names"));
  for (size_t t = 0; t < textures.size(); ++t) {
    const std::string name = nb::cast<std::string>(names[t]);
    const std::string what = "appearance.textures['" + name + "']";
    const ConstArray x = as_array(textures[t], what.c_str());
    if (x.ndim() != 3 || x.shape(2) != 3)
      throw ArgumentError(what + ": expected shape (h, w, 3), got " + shape_string(x));
    Texture tex;
    tex.height = static_cast<int>(x.shape(0)), tex.width = static_cast<int>(x.shape(1));
    tex.name = name;
    tex.rgb.assign(x.data(), x.data() + x.size());
    a.textures.push_back(std::move(tex));
  }
  a.background = vec3(d, "background", "appearance.background");
  a.lighting = nb::cast<bool>(item(d, "lighting"));
  a.light_dir = vec3(d, "light_dir", "appearance.light_dir");
  a.ambient = nb::cast<double>(item(d, "ambient"));
  a.diffuse = nb::cast<double>(item(d, "diffuse"));
  check_appearance(model, a);
  return a;
}

// q as B rows (batched) or one row; `batched` tells which.
MatrixXr<double> q_rows(const Model& model, nb::handle q, bool& batched) {
  batched = is_batched(q);
  const ConstArray a = as_array(q, "q");
  if (batched) {
    check_shape(a, "q", {-1, model.nq});
    return Eigen::Map<const MatrixXr<double>>(a.data(), a.shape(0), model.nq);
  }
  check_shape(a, "q", {model.nq});
  return Eigen::Map<const MatrixXr<double>>(a.data(), 1, model.nq);
}

nb::object render_py(PyModel& s, nb::handle q, const nb::dict& camera, const nb::dict& appearance,
                     std::optional<int> threads, bool return_ids) {
  const Model& m = s.model;
  const Camera c = camera_arg(m, camera);
  const Appearance a = appearance_arg(m, appearance);
  bool batched = false;
  const MatrixXr<double> Q = q_rows(m, q, batched);
  const int nthreads = threads_arg(threads);
  const size_t B = static_cast<size_t>(Q.rows()), H = c.height, W = c.width;
  double* image;
  NumpyArray out = batched ? new_array({B, H, W, 3}, &image) : new_array({H, W, 3}, &image);
  std::unique_ptr<std::vector<std::int32_t>> ids(return_ids ? new std::vector<std::int32_t>(B * H * W) : nullptr);
  {
    nb::gil_scoped_release no_gil;
    render_batch(m, Q, c, a, nthreads, image, ids ? ids->data() : nullptr);
  }
  if (!return_ids) return owned(std::move(out));
  std::int32_t* id_data = ids->data();
  nb::capsule owner(ids.release(), [](void* p) noexcept { delete static_cast<std::vector<std::int32_t>*>(p); });
  const std::vector<size_t> shape = batched ? std::vector<size_t>{B, H, W} : std::vector<size_t>{H, W};
  nb::object ids_array =
      nb::cast(nb::ndarray<nb::numpy, std::int32_t>(id_data, shape.size(), shape.data(), owner), nb::rv_policy::move);
  return nb::make_tuple(owned(std::move(out)), ids_array);
}

nb::object render_vjp_py(PyModel& s, nb::handle q, nb::handle image_bar, const nb::dict& camera,
                         const nb::dict& appearance, std::optional<int> threads) {
  const Model& m = s.model;
  const Camera c = camera_arg(m, camera);
  const Appearance a = appearance_arg(m, appearance);
  bool batched = false;
  const MatrixXr<double> Q = q_rows(m, q, batched);
  const Eigen::Index B = Q.rows();
  const ConstArray bar = as_array(image_bar, "image_bar");
  if (batched)
    check_shape(bar, "image_bar", {B, c.height, c.width, 3});
  else
    check_shape(bar, "image_bar", {c.height, c.width, 3});
  const int nthreads = threads_arg(threads);
  MatrixXr<double> q_bar(B, m.nq);
  RenderGrad g(m, a);
  {
    nb::gil_scoped_release no_gil;
    render_vjp_batch(m, Q, c, a, bar.data(), nthreads, q_bar, g);
  }
  nb::dict out;
  out["q"] = batched ? owned(take_numpy(std::move(q_bar))) : owned(to_numpy(q_bar.row(0).transpose()));
  out["params"] = owned(to_numpy(params_gradient<double>(m, g.model)));
  MatrixXr<double> size(m.ngeoms(), 3), color(m.ngeoms(), 3);
  for (int k = 0; k < m.ngeoms(); ++k) size.row(k) = g.model.geom_size[k].transpose(), color.row(k) = g.color[k].transpose();
  out["geom_size"] = owned(take_numpy(std::move(size)));
  out["colors"] = owned(take_numpy(std::move(color)));
  nb::list textures;
  for (size_t t = 0; t < a.textures.size(); ++t) {
    double* p;
    NumpyArray x = new_array({static_cast<size_t>(a.textures[t].height), static_cast<size_t>(a.textures[t].width), 3}, &p);
    std::copy(g.texture[t].begin(), g.texture[t].end(), p);
    textures.append(owned(std::move(x)));
  }
  out["textures"] = textures;
  out["background"] = owned(to_numpy(g.background));
  out["camera_pos"] = owned(to_numpy(g.camera_pos));
  out["camera_quat"] = owned(to_numpy(g.camera_quat));
  return out;
}

}  // namespace

void bind_render(nb::module_& m) {
  m.def("_render", &render_py, nb::arg("model"), nb::arg("q"), nb::arg("camera"), nb::arg("appearance"),
        nb::arg("threads").none() = nb::none(), nb::arg("return_ids") = false,
        "Internal: gradyn.render with the camera and appearance as dicts of plain values.");
  m.def("_render_vjp", &render_vjp_py, nb::arg("model"), nb::arg("q"), nb::arg("image_bar"), nb::arg("camera"),
        nb::arg("appearance"), nb::arg("threads").none() = nb::none(),
        "Internal: gradyn.render_vjp with the camera and appearance as dicts of plain values.");
}

}  // namespace gradyn::python
