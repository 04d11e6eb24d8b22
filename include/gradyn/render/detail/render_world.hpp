// Steps shared by render() and render_vjp() (src/render/render.cpp).
#pragma once

#include "gradyn/render/detail/raycast.hpp"
#include "gradyn/render/render.hpp"

namespace gradyn::render_detail {

/// Body poses (data.oMi, data.oS) and geom poses (data.oMg) of q, the camera's world pose, and
/// the workspace's per-geom ray origins and light directions.
void prepare_world(const Model& model, Data& data, const VecRef<double>& q, const Camera& camera,
                   const Appearance& appearance, RenderWorkspace& ws, Pose<double>& cam);

/// The geom the world ray direction dir (from the camera centre) hits first, -1 for none; its part,
/// face and the direction in its frame.
int nearest_hit(const Model& model, const RenderWorkspace& ws, const Vector3<double>& dir, int& part, int& face,
                Vector3<double>& local_dir);

struct PixelShade {
  Surface<double> surface;
  Sample texel;  // textured geoms
  Vector3<double> base;
  double n_dot_l = 0, shade = 1;
};

/// The colour of a hit: pixel = base * shade.
void shade_pixel(const Model& model, const Appearance& appearance, const RenderWorkspace& ws, int g, int part, int face,
                 const Vector3<double>& local_dir, PixelShade& out);

}  // namespace gradyn::render_detail
