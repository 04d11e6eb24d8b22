// Differentiable ray-cast camera (paper 002, section 3.4): q -> an RGB image.
//
//   forward kinematics    q -> data.oMi (and data.oS, for the VJP)
//   geom poses            data.oMg (update_geom_poses)
//   one ray per pixel     from the camera's centre through the pixel's centre (camera.hpp),
//                         intersected with every geom; the nearest hit in front of the camera
//   shading               base colour (solid or bilinear texture) * Lambert shade; the background
//                         colour where nothing is hit
//
// What is drawn: planes, spheres, capsules, boxes, cylinders and convex hulls (meshes), seen from
// outside. A camera inside a geom (or below a plane, in its solid half-space) does not see that
// geom. Nothing is drawn for geoms that are not collision geoms (there are none in a Model).
//
// The image is (height, width, 3) row-major doubles, row 0 at the top. Per world no allocation:
// the workspace holds what a call needs. A world whose q is not finite (NaN, inf) is no error (a
// batch goes on): geoms on bodies with non-finite poses are not hit, the world's geoms still are
// (bad camera or appearance arguments throw ArgumentError).
#pragma once

#include <cstdint>
#include <vector>

#include "gradyn/render/camera.hpp"

namespace gradyn {

/// What one render call needs per geom (allocated once per model).
struct RenderWorkspace {
  explicit RenderWorkspace(const Model& model);
  struct GeomFrame {
    Matrix3<double> Rt;        // world -> geom rotation (oMg.R^T)
    Vector3<double> origin;    // camera centre in the geom frame
    Vector3<double> light;     // direction towards the light, geom frame
    // VJP accumulators: sums over the pixels that see this geom of the adjoints of the local ray
    // origin, of d_local x d_local_bar, of the local light direction, and of the size entries.
    Vector3<double> origin_bar, dir_moment, light_bar, size_bar;
  };
  std::vector<GeomFrame> geoms;
  std::vector<Vector6<double>> pose_bar;  // VJP: body pose adjoints (wrenches), nbodies
};

/// Renders the configuration q: image gets height * width * 3 numbers. geom_ids (optional,
/// height * width): the index of the geom each pixel sees, -1 for the background. Overwrites
/// data.oMi, data.oS, data.oMg. Checks the camera and the appearance (ArgumentError).
void render(const Model& model, Data& data, const VecRef<double>& q, const Camera& camera,
            const Appearance& appearance, RenderWorkspace& workspace, double* image, std::int32_t* geom_ids = nullptr);

/// A batch of worlds, q one row per world (B x nq): images B * height * width * 3, world after
/// world; geom_ids likewise (optional). Runs the worlds on `threads` threads (0: all cores,
/// sim/batch.hpp's pool).
void render_batch(const Model& model, const Eigen::Ref<const MatrixXr<double>>& q, const Camera& camera,
                  const Appearance& appearance, int threads, double* images, std::int32_t* geom_ids = nullptr);

}  // namespace gradyn
