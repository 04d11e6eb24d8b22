// Camera and appearance checks, camera poses and pixel rays (render/camera.hpp).
#include "gradyn/render/camera.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "gradyn/render/detail/raycast.hpp"

namespace gradyn {

namespace {

template <class Derived>
bool finite(const Eigen::MatrixBase<Derived>& x) {
  return x.allFinite();
}

std::string vec_str(const Eigen::Ref<const Eigen::VectorXd>& x) {
  std::ostringstream s;
  s << "(";
  for (Eigen::Index k = 0; k < x.size(); ++k) s << (k ? ", " : "") << x[k];
  s << ")";
  return s.str();
}

}  // namespace

void check_camera(const Model& model, const Camera& camera) {
  if (camera.width <= 0 || camera.height <= 0) {
    throw ArgumentError("camera: width and height must be positive, got width " + std::to_string(camera.width) +
                        ", height " + std::to_string(camera.height));
  }
  if (!(camera.fovy > 0 && camera.fovy < 180)) {
    throw ArgumentError("camera: fovy must be in (0, 180) degrees, got " + std::to_string(camera.fovy));
  }
  if (camera.body < -1 || camera.body >= model.nbodies()) {
    throw ArgumentError("camera: body must be -1 (the world) or in [0, " + std::to_string(model.nbodies()) +
                        "), got " + std::to_string(camera.body));
  }
  if (!finite(camera.pos)) throw ArgumentError("camera: pos must be finite, got " + vec_str(camera.pos));
  if (!finite(camera.quat) || camera.quat.norm() == 0) {
    throw ArgumentError("camera: quat (x, y, z, w) must be finite and non-zero, got " + vec_str(camera.quat));
  }
}

void check_appearance(const Model& model, const Appearance& a) {
  const int ng = model.ngeoms(), nt = static_cast<int>(a.textures.size());
  if (!a.geoms.empty() && static_cast<int>(a.geoms.size()) != ng) {
    throw ArgumentError("appearance: expected one look per geom (" + std::to_string(ng) + "), got " +
                        std::to_string(a.geoms.size()));
  }
  for (int t = 0; t < nt; ++t) {
    const Texture& tex = a.textures[t];
    const std::string what = "appearance: texture " + std::to_string(t) + (tex.name.empty() ? "" : " ('" + tex.name + "')");
    if (tex.height <= 0 || tex.width <= 0) {
      throw ArgumentError(what + ": height and width must be positive, got " + std::to_string(tex.height) + " x " +
                          std::to_string(tex.width));
    }
    if (tex.rgb.size() != static_cast<size_t>(tex.height) * tex.width * 3) {
      throw ArgumentError(what + ": expected " + std::to_string(static_cast<size_t>(tex.height) * tex.width * 3) +
                          " numbers (height x width x 3), got " + std::to_string(tex.rgb.size()));
    }
    for (double x : tex.rgb)
      if (!std::isfinite(x)) throw ArgumentError(what + ": the texels must be finite numbers");
  }
  for (int g = 0; g < static_cast<int>(a.geoms.size()); ++g) {
    const GeomLook& look = a.geoms[g];
    const std::string what = "appearance: geom " + std::to_string(g) + " ('" + model.geoms[g].name + "')";
    if (!finite(look.color)) throw ArgumentError(what + ": color must be finite, got " + vec_str(look.color));
    if (look.texture < -1 || look.texture >= nt) {
      throw ArgumentError(what + ": texture index " + std::to_string(look.texture) + " is not -1 (solid) or in [0, " +
                          std::to_string(nt) + ")");
    }
    if (!(look.tile > 0) || !std::isfinite(look.tile)) {
      throw ArgumentError(what + ": tile must be positive and finite, got " + std::to_string(look.tile));
    }
  }
  if (!finite(a.background)) throw ArgumentError("appearance: background must be finite, got " + vec_str(a.background));
  if (!finite(a.light_dir) || a.light_dir.norm() == 0) {
    throw ArgumentError("appearance: light_dir must be finite and non-zero, got " + vec_str(a.light_dir));
  }
  if (!std::isfinite(a.ambient) || !std::isfinite(a.diffuse)) {
    throw ArgumentError("appearance: ambient and diffuse must be finite");
  }
}

Pose<double> camera_local_pose(const Camera& camera) {
  const Eigen::Vector4d q = camera.quat / camera.quat.norm();
  return Pose<double>(quaternion_xyzw_to_matrix<double>(q[0], q[1], q[2], q[3]), camera.pos);
}

Pose<double> camera_world_pose(const Camera& camera, const Data& data) {
  const Pose<double> local = camera_local_pose(camera);
  return camera.body >= 0 ? data.oMi[camera.body] * local : local;
}

Vector3<double> pixel_direction(const Camera& camera, int i, int j) {
  return render_detail::PixelRays(camera).direction(i, j);
}

}  // namespace gradyn
