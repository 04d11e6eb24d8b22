// render(): q -> image (render/render.hpp). The per-pixel kernels are in render/detail/raycast.hpp.
#include "gradyn/render/render.hpp"

#include <limits>
#include <optional>

#include "gradyn/collision/collide.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"
#include "gradyn/render/detail/raycast.hpp"
#include "gradyn/render/detail/render_world.hpp"
#include "gradyn/sim/batch.hpp"

namespace gradyn {

RenderWorkspace::RenderWorkspace(const Model& model)
    : geoms(model.ngeoms()), pose_bar(model.nbodies(), Vector6<double>::Zero()) {}

namespace render_detail {

void prepare_world(const Model& model, Data& data, const VecRef<double>& q, const Camera& camera,
                   const Appearance& appearance, RenderWorkspace& ws, Pose<double>& cam) {
  check_size("q", q.size(), model.nq);
  for (int i = 0; i < model.nbodies(); ++i) detail::world_body_pose<double>(model, data, q, i);
  update_geom_poses(model, data);
  cam = camera_world_pose(camera, data);
  const Vector3<double> light = -appearance.light_dir.normalized();
  for (int g = 0; g < model.ngeoms(); ++g) {
    RenderWorkspace::GeomFrame& f = ws.geoms[g];
    const Pose<double>& P = data.oMg[g];
    f.Rt = P.R.transpose();
    f.origin.noalias() = f.Rt * (cam.p - P.p);
    f.light.noalias() = f.Rt * light;
  }
}

int nearest_hit(const Model& model, const RenderWorkspace& ws, const Vector3<double>& dir, int& part, int& face,
                Vector3<double>& local_dir) {
  double t = std::numeric_limits<double>::infinity();
  int hit = -1;
  for (int g = 0; g < model.ngeoms(); ++g) {
    const RenderWorkspace::GeomFrame& f = ws.geoms[g];
    const Vector3<double> d = f.Rt * dir;
    if (intersect(model.geoms[g], f.origin, d, t, part, face)) {
      hit = g;
      local_dir = d;
    }
  }
  return hit;
}

void shade_pixel(const Model& model, const Appearance& appearance, const RenderWorkspace& ws, int g, int part, int face,
                 const Vector3<double>& local_dir, PixelShade& out) {
  const Geom& geom = model.geoms[g];
  const RenderWorkspace::GeomFrame& f = ws.geoms[g];
  const GeomLook& lk = look(appearance, g);
  surface<double>(geom.type, geom.size, geom.hull.get(), lk.tile, f.origin, local_dir, part, face, out.surface);
  if (lk.texture >= 0) {
    sample(appearance.textures[lk.texture], out.surface.u, out.surface.v, out.surface.wrap_u, out.surface.wrap_v,
           out.texel);
    out.base = out.texel.color;
  } else {
    out.base = lk.color;
  }
  out.n_dot_l = out.surface.normal.dot(f.light);
  out.shade = appearance.lighting ? appearance.ambient + appearance.diffuse * std::max(0.0, out.n_dot_l) : 1.0;
}

}  // namespace render_detail

void render(const Model& model, Data& data, const VecRef<double>& q, const Camera& camera,
            const Appearance& appearance, RenderWorkspace& ws, double* image, std::int32_t* geom_ids) {
  using namespace render_detail;
  check_camera(model, camera);
  check_appearance(model, appearance);
  Pose<double> cam;
  prepare_world(model, data, q, camera, appearance, ws, cam);
  const PixelRays rays(camera);
  PixelShade px;
  for (int i = 0; i < camera.height; ++i) {
    for (int j = 0; j < camera.width; ++j) {
      const int pixel = i * camera.width + j;
      const Vector3<double> dir = cam.R * rays.direction(i, j);
      int part = kNone, face = 0;
      Vector3<double> d;
      const int g = nearest_hit(model, ws, dir, part, face, d);
      Eigen::Map<Vector3<double>> rgb(image + 3 * pixel);
      if (g < 0) {
        rgb = appearance.background;
      } else {
        shade_pixel(model, appearance, ws, g, part, face, d, px);
        rgb = px.base * px.shade;
      }
      if (geom_ids) geom_ids[pixel] = g;
    }
  }
}

void render_batch(const Model& model, const Eigen::Ref<const MatrixXr<double>>& q, const Camera& camera,
                  const Appearance& appearance, int threads, double* images, std::int32_t* geom_ids) {
  check_camera(model, camera);
  check_appearance(model, appearance);
  if (q.cols() != model.nq) check_size("q (per world)", q.cols(), model.nq);
  const int nthreads = batch_threads(threads);
  const Eigen::Index frame = static_cast<Eigen::Index>(camera.width) * camera.height;
  std::vector<std::optional<Data>> data(nthreads);
  std::vector<std::optional<RenderWorkspace>> ws(nthreads);
  for_each_world(static_cast<int>(q.rows()), nthreads, [&](int world, int thread) {
    if (!data[thread]) data[thread].emplace(model), ws[thread].emplace(model);
    render(model, *data[thread], q.row(world).transpose(), camera, appearance, *ws[thread], images + 3 * frame * world,
           geom_ids ? geom_ids + frame * world : nullptr);
  });
}

}  // namespace gradyn
