// Random kinematic trees for property tests: every joint kind, random placements and inertias.
#pragma once

#include <random>
#include <string>

#include "draws.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn::test {

inline Inertia<double> random_inertia(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  const double mass = 0.5 + 2.0 * std::abs(u(rng));
  Eigen::Matrix3d A = Eigen::Matrix3d::Random() * 0.3;
  Eigen::Matrix3d I = A * A.transpose() + 0.05 * Eigen::Matrix3d::Identity();
  return Inertia<double>(mass, draw3([&] { return u(rng); }) * 0.3, I);
}

inline Pose<double> random_pose(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  const Eigen::Vector3d p = draw3([&] { return u(rng); }) * 0.5;  // (drawn first, as recorded)
  const Eigen::Vector3d rpy = draw3([&] { return u(rng); }) * 3.0;
  return Pose<double>(rpy_to_matrix<double>(rpy), p);
}

/// A random tree of n moving joints cycling through every joint kind (a fixed joint every few
/// links too), optionally on a free-floating base.
inline Model random_model(int n, unsigned seed, bool floating_base = false, bool with_passive = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  ModelBuilder b;
  b.add_link({"base", random_inertia(rng), {}});
  const JointType kinds[] = {JointType::Revolute, JointType::Prismatic, JointType::Spherical,
                             JointType::Continuous, JointType::Planar, JointType::Revolute, JointType::Free};
  for (int i = 0; i < n; ++i) {
    const std::string link = "link" + std::to_string(i);
    b.add_link({link, random_inertia(rng), {}});
    JointSpec j;
    j.name = "joint" + std::to_string(i);
    j.type = (i % 5 == 4) ? JointType::Fixed : kinds[(i + seed) % 7];
    if (!floating_base && i == 0) j.type = JointType::Revolute;
    if (floating_base && j.type == JointType::Free) j.type = JointType::Spherical;
    std::uniform_int_distribution<int> pick(0, i);
    const int parent = pick(rng) - 1;
    j.parent = parent < 0 ? "base" : "link" + std::to_string(parent);
    j.child = link;
    j.origin = random_pose(rng);
    j.axis = draw3([&] { return u(rng); }).normalized();
    if (with_passive) {
      j.damping = 0.1 + std::abs(u(rng));
      j.stiffness = 0.5 + std::abs(u(rng));
      j.armature = 0.05 * std::abs(u(rng));
      j.rest = u(rng);
    }
    b.add_joint(j);
  }
  return b.build({.floating_base = floating_base});
}

/// A random configuration: angles in [-pi, pi], unit quaternions.
inline Eigen::VectorXd random_configuration(const Model& model, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::VectorXd q(model.nq);
  for (int k = 0; k < model.nq; ++k) q[k] = 3.14159 * u(rng);
  normalize_configuration<double>(model, q);
  return q;
}

inline Eigen::VectorXd random_vector(int n, std::mt19937& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::VectorXd x(n);
  for (int k = 0; k < n; ++k) x[k] = scale * u(rng);
  return x;
}

}  // namespace gradyn::test
