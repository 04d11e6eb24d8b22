// Reverse mode of render(): the image adjoint (height, width, 3) -> adjoints of q, of the model's
// geometry (geom sizes and placements, body placements and joint axes, through the kinematics), of
// the camera's pose, and of the appearance (colours, textures, background).
//
// The geom each pixel sees is a discrete choice, held fixed (as collide_vjp holds the contact set):
// within it the pixel's colour is a smooth function of the ray, the geom's pose and size, and the
// look, and this is the exact adjoint of that function. Consequences:
//   * silhouette edges give no gradient: moving a geom so that a pixel changes from background (or
//     another geom) to it changes the image by a jump, which no derivative sees; a finite
//     difference across such a move disagrees with this adjoint (tests/render document it);
//   * the same holds for the discrete parts inside a geom (box faces, a cylinder's side and caps,
//     a capsule's side and end spheres) and for the wrap-around seam of a texture coordinate
//     (continuous in the image, so only the kink matters);
//   * inside a geom the gradient w.r.t. its pose comes from the texture (the bilinear
//     interpolation moves the sampled colour) and from the shading (the normal turns against the
//     light); a solid-coloured, unlit geom's interior gives no pose gradient at all (its pixels
//     are constant), and the Lambert clamp max(0, n . l) gives none in the shadowed half;
//   * exactly at a texel centre line the bilinear weights have a kink (a one-sided derivative).
// Per pixel, the hit is re-evaluated in forward mode (Eigen's AutoDiffScalar, 12 directions: the
// ray origin and direction and the light direction in the geom frame, and the size entries), then
// those local adjoints are mapped to world wrenches on the geom and the camera, and the body
// wrenches go to q through body_poses_vjp (dynamics/kinematics_vjp.hpp).
#pragma once

#include "gradyn/model/params.hpp"
#include "gradyn/render/render.hpp"

namespace gradyn {

/// Adjoints of everything render() reads. Entries accumulate (+=).
struct RenderGrad {
  RenderGrad(const Model& model, const Appearance& appearance);
  void setZero();
  /// Adds other (of the same model and appearance) into this: the fields render_vjp writes (of
  /// `model`: placement_R, placement_p, axis, geom_size, geom_placement_R, geom_placement_p).
  void add(const RenderGrad& other);

  VectorX<double> q;        // nq, ambient (quaternion entries as numbers; read normalised)
  ModelTangent model;       // geom_size, geom_placement_R/p; placement_R/p and axis of the joints
  Vector3<double> camera_pos = Vector3<double>::Zero();
  Eigen::Vector4d camera_quat = Eigen::Vector4d::Zero();  // ambient; no component along quat
  std::vector<Vector3<double>> color;          // per model geom (appearance.geoms order)
  std::vector<std::vector<double>> texture;    // per texture, laid out as Texture::rgb
  Vector3<double> background = Vector3<double>::Zero();
};

/// Accumulates into grad the adjoint of render(model, q, camera, appearance) for the image
/// adjoint image_bar (height * width * 3). Recomputes the forward pass (data and workspace are
/// overwritten).
void render_vjp(const Model& model, Data& data, const VecRef<double>& q, const Camera& camera,
                const Appearance& appearance, const double* image_bar, RenderWorkspace& workspace, RenderGrad& grad);

/// A batch (q: B x nq, images_bar: B * height * width * 3): q_bar (B x nq) gets each world's q
/// adjoint (overwritten), shared the sum over the worlds of all the adjoints (accumulated, in world
/// order: the same for any thread count; shared.q is then the sum of q_bar's rows). Memory: one
/// RenderGrad per world (textures included) until the sum.
void render_vjp_batch(const Model& model, const Eigen::Ref<const MatrixXr<double>>& q, const Camera& camera,
                      const Appearance& appearance, const double* images_bar, int threads,
                      Eigen::Ref<MatrixXr<double>> q_bar, RenderGrad& shared);

}  // namespace gradyn
