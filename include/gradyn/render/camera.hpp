// A pinhole camera and the look of the scene (colours, textures, light): what render() needs
// besides the Model and q. The look lives here, not in the Model: it is the renderer's input.
//
// Camera frame (MuJoCo's and OpenGL's): the camera looks along its -z axis, x points right in the
// image and y up. Its pose (pos, quat) is the camera frame in the frame of `body` (-1: the world),
// quat = (x, y, z, w) like every quaternion in gradyn (normalised when read). Intrinsics: width and
// height in pixels and the vertical field of view fovy in degrees; square pixels, the principal
// point at the image centre. Pixel (row i, column j) looks through its centre:
//   x_c = (2 (j + 0.5) / width - 1) * tan(fovy / 2) * width / height
//   y_c = (1 - 2 (i + 0.5) / height) * tan(fovy / 2)
//   ray direction in the camera frame: normalise(x_c, y_c, -1)
// Row 0 is the top of the image.
//
// Appearance, per geom (model.geoms order): a solid colour or a texture (an (h, w, 3) RGB array,
// row 0 at the top) sampled bilinearly at (u, v) in [0, 1]^2 (u across the columns, v down the
// rows; texel centres at ((c + 0.5) / w, (r + 0.5) / h)). The map (u, v) of each primitive, in
// the geom frame (see collision/geometry.hpp for the sizes):
//   plane     u = x / tile, v = -y / tile: the texture repeats every `tile` metres (wraps)
//   sphere    longitude/latitude: u = 0.5 + atan2(y, x) / 2pi (wraps), v = angle from +z / pi
//   capsule   cylindrical: u = 0.5 + atan2(y, x) / 2pi (wraps), v = (z_top - z) / (z_top - z_bottom)
//             over the whole capsule (z_top = half_length + radius), end caps included
//   cylinder  side as the capsule (v over [-half_length, half_length]); each cap: the texture
//             squared onto the disc, u = 0.5 + x / 2r, v = 0.5 - y / 2r
//   box       the whole texture on each face: for the face normal to axis k, with a = k+1 and
//             b = k+2 (mod 3), u = 0.5 + x_a / 2h_a, v = 0.5 - x_b / 2h_b
//   hull      as the box, on the hull's bounding box, by the axis nearest the face normal
// Outside [0, 1] a wrapping coordinate repeats, the others clamp to the border texels.
// Colour = base (solid or texture) * shade, shade = ambient + diffuse * max(0, n . l) with the
// outward normal n and l = -light_dir / |light_dir| (a directional light), or 1 without lighting.
// No clamp to [0, 1] (it would cut gradients): give colours and light that stay in range.
#pragma once

#include <string>
#include <vector>

#include "gradyn/model/data.hpp"

namespace gradyn {

struct Camera {
  int width = 64, height = 64;
  double fovy = 45.0;  // degrees, in (0, 180)
  int body = -1;       // -1: fixed in the world; else attached to that body
  Vector3<double> pos = Vector3<double>::Zero();                 // in the body (or world) frame
  Eigen::Vector4d quat = Eigen::Vector4d(0, 0, 0, 1);             // x, y, z, w
};

/// An RGB image, (height, width, 3) row-major, row 0 at the top.
struct Texture {
  int height = 0, width = 0;
  std::vector<double> rgb;
  std::string name;  // for messages (a file name, say)
};

struct GeomLook {
  Vector3<double> color = Vector3<double>(0.7, 0.7, 0.7);
  int texture = -1;          // index into Appearance::textures; -1: the solid colour
  double tile = 1.0;         // plane textures: metres per repeat
};

struct Appearance {
  std::vector<GeomLook> geoms;  // empty: every geom the default look; else one per model geom
  std::vector<Texture> textures;
  Vector3<double> background = Vector3<double>::Zero();
  bool lighting = true;
  Vector3<double> light_dir = Vector3<double>(0, 0, -1);  // the direction the light travels
  double ambient = 0.4, diffuse = 0.6;
};

/// Throws ArgumentError naming the field unless the camera is usable with the model: width and
/// height positive, fovy in (0, 180), body in [-1, nbodies), finite pos, a finite non-zero quat.
void check_camera(const Model& model, const Camera& camera);

/// Throws ArgumentError naming the field unless the appearance is usable with the model: geoms
/// empty or one per model geom, texture indices in range, textures of positive size with
/// height * width * 3 finite numbers, positive tiles, finite colours and light, a non-zero light
/// direction.
void check_appearance(const Model& model, const Appearance& appearance);

/// The camera frame in the world (data.oMi current for an attached camera).
Pose<double> camera_world_pose(const Camera& camera, const Data& data);

/// The camera frame in its body (or world) frame: (R(quat / |quat|), pos).
Pose<double> camera_local_pose(const Camera& camera);

/// Unit ray direction through pixel (i, j), in the camera frame (see the file comment).
Vector3<double> pixel_direction(const Camera& camera, int i, int j);

}  // namespace gradyn
