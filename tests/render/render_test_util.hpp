// Scenes for the renderer's tests: every primitive type, textured, on free and revolute bodies
// and on the world, seen by a camera from the side.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "gradyn/model/builder.hpp"
#include "gradyn/render/render.hpp"

namespace gradyn::test {

/// The quaternion (x, y, z, w) of a camera at eye looking at target (-z forward, y up-ish).
inline Eigen::Vector4d look_at_quat(const Vector3<double>& eye, const Vector3<double>& target,
                                    const Vector3<double>& up = Vector3<double>::UnitZ()) {
  const Vector3<double> f = (target - eye).normalized();
  const Vector3<double> right = f.cross(up).normalized();
  const Vector3<double> cam_up = right.cross(f);
  Matrix3<double> R;
  R.col(0) = right, R.col(1) = cam_up, R.col(2) = -f;
  const Eigen::Quaterniond q(R);
  return Eigen::Vector4d(q.x(), q.y(), q.z(), q.w());
}

inline Camera look_at(const Vector3<double>& eye, const Vector3<double>& target, int width, int height,
                      double fovy = 45.0) {
  Camera c;
  c.width = width, c.height = height, c.fovy = fovy;
  c.pos = eye;
  c.quat = look_at_quat(eye, target);
  return c;
}

inline Texture random_texture(int h, int w, std::mt19937& rng, const std::string& name = "") {
  std::uniform_real_distribution<double> u(0.1, 0.9);
  Texture t;
  t.height = h, t.width = w, t.name = name;
  t.rgb.resize(static_cast<size_t>(h) * w * 3);
  for (double& x : t.rgb) x = u(rng);
  return t;
}

inline GeomSpec geom(const std::string& name, GeomType type, const Vector3<double>& size,
                     const Pose<double>& placement = Pose<double>()) {
  GeomSpec g;
  g.name = name;
  g.type = type;
  g.size = size;
  g.placement = placement;
  return g;
}

inline Matrix3<double> rot(const Vector3<double>& axis, double angle) {
  return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
}

struct RenderScene {
  Model model;
  Eigen::VectorXd q;
  Camera camera;
  Appearance appearance;
};

/// A floor plane (world), a free "ball" (sphere), a revolute "arm" (box and capsule), a free
/// "can" (cylinder) and a free "gem" (convex hull); every geom textured (except `solid`: solid
/// colours), lit from an oblique direction.
inline RenderScene gallery(int width = 48, int height = 32, bool solid = false, unsigned seed = 7) {
  std::mt19937 rng(seed);
  const Inertia<double> I(1.0, Vector3<double>::Zero(), Matrix3<double>::Identity() * 0.1);
  ModelBuilder b;
  LinkSpec world{"world", std::nullopt, {}, {}};
  world.collisions.push_back(geom("floor", GeomType::Plane, Vector3<double>::Zero()));
  LinkSpec ball{"ball", I, {}, {}}, arm{"arm", I, {}, {}}, can{"can", I, {}, {}}, gem{"gem", I, {}, {}};
  ball.collisions.push_back(geom("ball", GeomType::Sphere, Vector3<double>(0.45, 0, 0)));
  arm.collisions.push_back(geom("arm_box", GeomType::Box, Vector3<double>(0.25, 0.2, 0.35),
                                Pose<double>(rot(Vector3<double>(1, 2, 3), 0.4), Vector3<double>(0, 0, -0.3))));
  arm.collisions.push_back(geom("arm_capsule", GeomType::Capsule, Vector3<double>(0.12, 0.3, 0),
                                Pose<double>(rot(Vector3<double>(0, 1, 0), 1.2), Vector3<double>(0.1, -0.1, 0.35))));
  can.collisions.push_back(geom("can", GeomType::Cylinder, Vector3<double>(0.3, 0.25, 0),
                                Pose<double>(rot(Vector3<double>(1, 0, 0), 0.5), Vector3<double>::Zero())));
  const std::vector<Vector3<double>> octa = {{0.3, 0, 0}, {-0.3, 0, 0}, {0, 0.25, 0}, {0, -0.25, 0}, {0, 0, 0.35},
                                             {0, 0, -0.35}};
  gem.collisions.push_back(convex_hull_geom("gem", octa));
  b.add_link(world).add_link(ball).add_link(arm).add_link(can).add_link(gem);
  auto free_joint = [](const std::string& name, const std::string& child) {
    JointSpec j;
    j.name = name, j.type = JointType::Free, j.parent = "world", j.child = child;
    return j;
  };
  JointSpec hinge;
  hinge.name = "hinge", hinge.type = JointType::Revolute, hinge.parent = "world", hinge.child = "arm";
  hinge.axis = Vector3<double>(0.2, 1, 0.1);
  hinge.origin = Pose<double>(rot(Vector3<double>(0, 0, 1), 0.3), Vector3<double>(0.9, 0.1, 0.9));
  b.add_joint(free_joint("ball_free", "ball")).add_joint(hinge).add_joint(free_joint("can_free", "can"));
  b.add_joint(free_joint("gem_free", "gem"));
  RenderScene s{b.build(), {}, look_at(Vector3<double>(0.3, -4.0, 2.5), Vector3<double>(0, 0, 0.3), width, height), {}};
  s.q = s.model.q0;
  auto place = [&](const std::string& body, const Vector3<double>& p, const Vector3<double>& axis, double angle) {
    const int i = s.model.body_id(body);
    const Eigen::Quaterniond quat(rot(axis, angle));
    s.q.segment<7>(s.model.idx_q[i]) << p, quat.x(), quat.y(), quat.z(), quat.w();
  };
  place("ball", Vector3<double>(-1.0, 0.2, 0.5), Vector3<double>(1, 1, 0), 0.7);
  place("can", Vector3<double>(-0.1, 1.0, 0.45), Vector3<double>(0, 1, 1), 0.3);
  place("gem", Vector3<double>(0.1, -0.9, 1.3), Vector3<double>(1, 0, 1), 0.5);
  s.q[s.model.idx_q[s.model.body_id("arm")]] = 0.35;
  Appearance& a = s.appearance;
  a.background = Vector3<double>(0.1, 0.2, 0.3);
  a.light_dir = Vector3<double>(0.4, 0.7, -1.0);
  a.geoms.resize(s.model.ngeoms());
  std::uniform_real_distribution<double> u(0.2, 0.9);
  for (int g = 0; g < s.model.ngeoms(); ++g) {
    a.geoms[g].color = Vector3<double>(u(rng), u(rng), u(rng));
    if (!solid) {
      a.textures.push_back(random_texture(6 + g, 9 + g, rng, "tex" + std::to_string(g)));
      a.geoms[g].texture = g;
    }
  }
  a.geoms[0].tile = 0.7;
  return s;
}

}  // namespace gradyn::test
