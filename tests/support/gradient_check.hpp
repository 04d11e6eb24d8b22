// Checks a hand-written VJP against a reference J^T y_bar, block by block (q, v, the third input,
// and each kind of model parameter), in relative terms. Used by the dynamics VJP tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ad_jacobian.hpp"
#include "gradyn/io/load.hpp"
#include "model_tangent_pack.hpp"
#include "random_model.hpp"

namespace gradyn::test {

/// Kind of entry k of [q (nq) | v (nv) | u (nu) | parameters], e.g. "q", "v", "tau", "com".
inline std::string gradient_entry_kind(const Model& m, int nu, const std::string& u_name, int k, std::string* full) {
  if (k < m.nq) {
    *full = "q[" + std::to_string(k) + "]";
    return "q";
  }
  k -= m.nq;
  if (k < m.nv) {
    *full = "v[" + std::to_string(k) + "]";
    return "v";
  }
  k -= m.nv;
  if (k < nu) {
    *full = u_name + "[" + std::to_string(k) + "]";
    return u_name;
  }
  k -= nu;
  *full = tangent_entry_name(m, k);
  const auto dot = full->find('.');
  const std::string field = dot == std::string::npos ? *full : full->substr(dot + 1);
  return field.substr(0, field.find('['));
}

/// Expects |got - want| <= tol * scale entry by entry, where scale is the largest |want| within the
/// entry's kind (floored at 1e-3 of the largest |want| overall, so that an all-but-zero block is
/// compared in absolute terms).
inline void expect_gradient_close(const Model& m, int nu, const std::string& u_name, const Eigen::VectorXd& got,
                                  const Eigen::VectorXd& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::map<std::string, double> scale;
  std::string full;
  for (int k = 0; k < want.size(); ++k) {
    double& s = scale[gradient_entry_kind(m, nu, u_name, k, &full)];
    s = std::max(s, std::abs(want[k]));
  }
  const double floor = 1e-3 * std::max(1e-300, want.cwiseAbs().maxCoeff());
  std::map<std::string, std::pair<double, std::string>> worst;
  for (int k = 0; k < want.size(); ++k) {
    const std::string kind = gradient_entry_kind(m, nu, u_name, k, &full);
    const double err = std::abs(got[k] - want[k]) / std::max(scale[kind], floor);
    auto& w = worst[kind];
    if (err >= w.first) w = {err, full + ": got " + std::to_string(got[k]) + ", want " + std::to_string(want[k])};
  }
  for (const auto& [kind, w] : worst) EXPECT_LE(w.first, tol) << what << ", block " << kind << ", worst " << w.second;
}

/// A model to differentiate, with the point (q, v, third input) to do it at.
struct GradientCase {
  std::string name;
  Model model;
  Eigen::VectorXd q, v, u;
};

/// Random trees (fixed and floating base, every joint kind, dampers, springs, armature) and the
/// shipped laikago (floating), iiwa, hyq and MJCF ant, the latter given random passive parameters
/// (springs on every joint, rests at random configurations) so that every parameter matters.
/// The random trees' configurations have their quaternions scaled off the unit sphere (the q
/// adjoints are ambient and exact there too); the shipped models' are unit.
inline std::vector<GradientCase> gradient_cases() {
  std::vector<GradientCase> cases;
  for (unsigned seed : {3u, 4u}) {
    cases.push_back({"random fixed base seed " + std::to_string(seed), random_model(10, seed, false, true), {}, {}, {}});
    cases.push_back({"random floating seed " + std::to_string(seed), random_model(10, seed, true, true), {}, {}, {}});
  }
  const std::string dir = GRADYN_MODELS;
  std::vector<std::string> warnings;  // missing meshes: irrelevant here
  cases.push_back({"laikago", load_urdf(dir + "/laikago/laikago_toes_zup.urdf", {.floating_base = true, .warnings = &warnings}), {}, {}, {}});
  cases.push_back({"iiwa", load_urdf(dir + "/grid/iiwa.urdf", {.warnings = &warnings}), {}, {}, {}});
  cases.push_back({"hyq", load_urdf(dir + "/grid/hyq.urdf", {.warnings = &warnings}), {}, {}, {}});
  cases.push_back({"ant", load_mjcf(dir + "/mujoco/ant.xml"), {}, {}, {}});
  std::mt19937 rng(7);
  for (size_t c = 0; c < cases.size(); ++c) {
    GradientCase& k = cases[c];
    Model& m = k.model;
    std::uniform_real_distribution<double> u(0.1, 1.0);
    for (int j = 0; j < m.nv; ++j) {  // shipped models; the free base of the random ones
      if (m.damping[j] == 0) m.damping[j] = u(rng);
      if (m.stiffness[j] == 0) m.stiffness[j] = u(rng);
      if (m.armature[j] == 0) m.armature[j] = 0.1 * u(rng);
    }
    if (c >= 4) m.q_rest = random_configuration(m, rng);
    k.q = random_configuration(m, rng);
    if (c < 4)
      for (int i = 0; i < m.nbodies(); ++i)
        if (joint_has_quaternion(m.joint_type[i]))
          k.q.segment<4>(m.idx_q[i] + (m.joint_type[i] == JointType::Free ? 3 : 0)) *= 1.25;
    k.v = random_vector(m.nv, rng);
    k.u = random_vector(m.nv, rng, 5.0);
  }
  return cases;
}

/// References for y_bar^T d f / d[q | v | u | parameters]: (forward-mode AD, central differences
/// with step h). f(model, data, q, v, u) -> VectorX<T> must be generic in the scalar T; the model
/// given to it has its parameters written from the input vector and a fresh Data.
template <class F>
std::pair<Eigen::VectorXd, Eigen::VectorXd> reference_vjps(const GradientCase& c, F&& f, const Eigen::VectorXd& y_bar,
                                                           double h = 1e-6) {
  const Model& model = c.model;
  const int nq = model.nq, nv = model.nv, nu = static_cast<int>(c.u.size());
  Eigen::VectorXd x0(nq + nv + nu + tangent_size(model));
  x0 << c.q, c.v, c.u, model_params(model);
  auto eval = [&](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::Scalar;
    ModelTpl<T> m = model.template cast<T>();
    write_params(m, x.tail(x.size() - nq - nv - nu));
    DataTpl<T> d(m);
    const VectorX<T> q = x.head(nq), v = x.segment(nq, nv), u = x.segment(nq + nv, nu);
    return VectorX<T>(f(m, d, q, v, u));
  };
  const Eigen::MatrixXd J_ad = ad_jacobian(eval, x0);
  const Eigen::MatrixXd J_fd = fd_jacobian(eval, x0, h);
  return {J_ad.transpose() * y_bar, J_fd.transpose() * y_bar};
}

}  // namespace gradyn::test
