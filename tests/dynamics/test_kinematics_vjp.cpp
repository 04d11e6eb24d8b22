// The kinematics VJP primitives (world_velocities(_vjp), body_poses_vjp, mass_quadratic_vjp)
// against forward-mode AD and central differences of losses written independently of them:
//  * poses:      L = sum_i a_i . (R_i x_i + p_i) + b_i . (R_i d_i), points x_i and directions d_i
//                fixed on the bodies, from forward_kinematics; its pose adjoints are written down
//                by hand ([x x a; a] per point, [d x b; 0] per direction) and fed to body_poses_vjp;
//  * velocities: L = sum_i c_i . ow_i(q, v), with ow_i from forward_kinematics' body-frame
//                velocities (not from world_velocities);
//  * mass:       L = weight * y^T crba(q) y.
// Each chain ends in body_poses_vjp, so q and every model field are checked end to end.
// q is compared raw in every ambient direction (the random trees' quaternions are off the unit
// sphere). The raw model fields are compared on the tangent space of valid models (rotations
// orthogonal, revolute axes unit, inertias symmetric; test::project_model_fields_to_manifold):
// pose adjoints (wrenches) only see rigid motions. The flat parameters are checked without any
// projection through params_gradient against AD through with_params.
#include <gtest/gtest.h>

#include "../support/gradient_check.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/kinematics_vjp.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {
namespace {

/// Per-body constants of the test losses.
struct LossWeights {
  std::vector<Eigen::Vector3d> point, point_weight, direction, direction_weight;
  std::vector<Vector6<double>> velocity_weight;
  double mass_weight = 0.7;
};

LossWeights random_weights(const Model& m, unsigned seed) {
  std::mt19937 rng(seed);
  LossWeights w;
  for (int i = 0; i < m.nbodies(); ++i) {
    w.point.push_back(test::random_vector(3, rng, 0.5));
    w.point_weight.push_back(test::random_vector(3, rng));
    w.direction.push_back(test::random_vector(3, rng));
    w.direction_weight.push_back(test::random_vector(3, rng));
    w.velocity_weight.push_back(test::random_vector(6, rng));
  }
  return w;
}

/// sum_i a_i . (R_i x_i + p_i) + b_i . (R_i d_i) at the poses in data.oMi.
template <class T>
T pose_loss(const DataTpl<T>& data, const LossWeights& w) {
  T L(0);
  for (size_t i = 0; i < data.oMi.size(); ++i) {
    const Pose<T>& X = data.oMi[i];
    L += w.point_weight[i].cast<T>().dot(X.act_point(w.point[i].cast<T>()));
    L += w.direction_weight[i].cast<T>().dot(X.R * w.direction[i].cast<T>());
  }
  return L;
}

/// Hand-written adjoint of pose_loss: one wrench per body.
std::vector<Vector6<double>> pose_loss_adjoint(const Data& data, const LossWeights& w) {
  std::vector<Vector6<double>> pose_bar(data.oMi.size());
  for (size_t i = 0; i < data.oMi.size(); ++i) {
    const Pose<double>& X = data.oMi[i];
    const Eigen::Vector3d x = X.act_point(w.point[i]), d = X.R * w.direction[i];
    pose_bar[i] << x.cross(w.point_weight[i]) + d.cross(w.direction_weight[i]), w.point_weight[i];
  }
  return pose_bar;
}

/// sum_i c_i . ow_i with ow_i = oMi (body-frame velocity): forward_kinematics' own path.
template <class T>
T velocity_loss(const ModelTpl<T>& m, DataTpl<T>& d, const VectorX<T>& q, const VectorX<T>& v, const LossWeights& w) {
  forward_kinematics(m, d, q, v);
  T L(0);
  for (int i = 0; i < m.nbodies(); ++i) L += w.velocity_weight[i].cast<T>().dot(d.oMi[i].act_motion(d.v[i]));
  return L;
}

template <class T>
T mass_loss(const ModelTpl<T>& m, DataTpl<T>& d, const VectorX<T>& q, const VectorX<T>& y, const LossWeights& w) {
  const MatrixX<T>& M = crba(m, d, q);
  return T(w.mass_weight) * y.dot(M * y);
}

/// The cases of the dynamics VJP tests (random trees with every joint kind, fixed and floating,
/// quaternions off the unit sphere; laikago floating, iiwa, hyq, MJCF ant), with no third input.
std::vector<test::GradientCase> cases() {
  std::vector<test::GradientCase> out = test::gradient_cases();
  for (auto& c : out) c.u.resize(0);
  return out;
}

/// Packs a hand-written result into reference_vjps' layout [q | v | model fields].
Eigen::VectorXd pack(const Model& m, const Eigen::VectorXd& q_bar, const Eigen::VectorXd& v_bar, const ModelTangent& t) {
  Eigen::VectorXd got(m.nq + m.nv + test::tangent_size(m));
  got << q_bar, v_bar, test::pack_tangent(m, t);
  return got;
}

/// Largest |g| over the entries of one kind ("q", "v", "placement_R", ...): the tests below demand
/// that what they compare is not trivially zero.
double block_max(const Model& m, const Eigen::VectorXd& g, const std::string& kind) {
  double out = 0;
  std::string full;
  for (int k = 0; k < g.size(); ++k)
    if (test::gradient_entry_kind(m, 0, "u", k, &full) == kind) out = std::max(out, std::abs(g[k]));
  return out;
}

void expect_quaternion_adjoints_tangent(const test::GradientCase& c, const Eigen::VectorXd& q_bar) {
  const Model& m = c.model;
  for (int i = 0; i < m.nbodies(); ++i) {
    if (!joint_has_quaternion(m.joint_type[i])) continue;
    const int o = m.idx_q[i] + (m.joint_type[i] == JointType::Free ? 3 : 0);
    EXPECT_LE(std::abs(q_bar.segment<4>(o).dot(c.q.segment<4>(o).normalized())),
              1e-12 * std::max(1.0, q_bar.cwiseAbs().maxCoeff()))
        << c.name << ": quaternion at q[" << o << "]";
  }
}

void compare(const test::GradientCase& c, Eigen::VectorXd got, Eigen::VectorXd want_ad, Eigen::VectorXd want_fd,
             const std::string& what, double min_block = 1e-2) {
  const Model& m = c.model;
  for (Eigen::VectorXd* g : {&got, &want_ad, &want_fd}) test::project_model_fields_to_manifold(m, m.nq + m.nv, *g);
  test::expect_gradient_close(m, 0, "u", got, want_ad, 1e-9, c.name + ", " + what + " vs AD");
  test::expect_gradient_close(m, 0, "u", got, want_fd, 1e-6, c.name + ", " + what + " vs finite differences");
  // Non-trivial: the q block and the placement blocks are always exercised.
  for (const char* kind : {"q", "placement_R", "placement_p"})
    EXPECT_GT(block_max(m, want_ad, kind), min_block) << c.name << ", " << what << ": block " << kind;
}

TEST(KinematicsVjp, WorldVelocitiesAreAbaVelocities) {
  for (const test::GradientCase& c : cases()) {
    const Model& m = c.model;
    Data data(m);
    aba(m, data, c.q, c.v, Eigen::VectorXd::Zero(m.nv));
    std::vector<Vector6<double>> ow(m.nbodies());
    world_velocities(m, data, c.v, ow);
    Data fk(m);
    forward_kinematics(m, fk, c.q, c.v);
    double scale = 0;
    for (int i = 0; i < m.nbodies(); ++i) {
      const Vector6<double> want = fk.oMi[i].act_motion(fk.v[i]);
      scale = std::max(scale, want.norm());
      EXPECT_LE((ow[i] - want).norm(), 1e-12 * (1 + want.norm())) << c.name << ", body " << i;
      EXPECT_LE((ow[i] - data.ov[i]).norm(), 1e-12 * (1 + want.norm())) << c.name << ", body " << i;
    }
    EXPECT_GT(scale, 0.1) << c.name;
  }
}

TEST(KinematicsVjp, BodyPosesMatchForwardMode) {
  for (const test::GradientCase& c : cases()) {
    const Model& m = c.model;
    const LossWeights w = random_weights(m, 11);
    auto f = [&](const auto& model, auto& data, const auto& q, const auto&, const auto&) {
      using T = typename std::decay_t<decltype(model)>::Scalar;
      forward_kinematics(model, data, q);
      return VectorX<T>::Constant(1, pose_loss(data, w));
    };
    auto [want_ad, want_fd] = test::reference_vjps(c, f, Eigen::VectorXd::Ones(1));

    Data data(m);
    aba(m, data, c.q, c.v, Eigen::VectorXd::Zero(m.nv));  // oMi and oS at q
    const std::vector<Vector6<double>> pose_bar = pose_loss_adjoint(data, w);
    ModelTangent t(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Constant(m.nq, 0.5);  // accumulates
    body_poses_vjp(m, data, c.q, pose_bar, q_bar, t);
    q_bar.array() -= 0.5;
    expect_quaternion_adjoints_tangent(c, q_bar);
    compare(c, pack(m, q_bar, Eigen::VectorXd::Zero(m.nv), t), want_ad, want_fd, "pose loss");
    EXPECT_GT(block_max(m, want_ad, "axis"), 1e-2) << c.name;
  }
}

TEST(KinematicsVjp, WorldVelocitiesMatchForwardMode) {
  for (const test::GradientCase& c : cases()) {
    const Model& m = c.model;
    const LossWeights w = random_weights(m, 12);
    auto f = [&](const auto& model, auto& data, const auto& q, const auto& v, const auto&) {
      using T = typename std::decay_t<decltype(model)>::Scalar;
      return VectorX<T>::Constant(1, velocity_loss(model, data, VectorX<T>(q), VectorX<T>(v), w));
    };
    auto [want_ad, want_fd] = test::reference_vjps(c, f, Eigen::VectorXd::Ones(1));

    Data data(m);
    aba(m, data, c.q, c.v, Eigen::VectorXd::Zero(m.nv));
    std::vector<Vector6<double>> pose_bar(m.nbodies(), Vector6<double>::Zero());
    ModelTangent t(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Constant(m.nq, 0.5), v_bar = Eigen::VectorXd::Constant(m.nv, 0.5);
    world_velocities_vjp(m, data, c.v, w.velocity_weight, v_bar, pose_bar, &t);
    body_poses_vjp(m, data, c.q, pose_bar, q_bar, t);
    q_bar.array() -= 0.5;
    v_bar.array() -= 0.5;
    expect_quaternion_adjoints_tangent(c, q_bar);
    compare(c, pack(m, q_bar, v_bar, t), want_ad, want_fd, "velocity loss");
    EXPECT_GT(block_max(m, want_ad, "v"), 1e-2) << c.name;
    EXPECT_GT(block_max(m, want_ad, "axis"), 1e-2) << c.name;

    // Without model_bar: the same v and pose adjoints, the axis dependence of oS left out.
    std::vector<Vector6<double>> pose_bar2(m.nbodies(), Vector6<double>::Zero());
    Eigen::VectorXd v_bar2 = Eigen::VectorXd::Zero(m.nv);
    world_velocities_vjp(m, data, c.v, w.velocity_weight, v_bar2, pose_bar2);
    EXPECT_LE((v_bar2 - v_bar).norm(), 1e-14 * (1 + v_bar.norm())) << c.name;
    for (int i = 0; i < m.nbodies(); ++i) EXPECT_EQ(pose_bar2[i], pose_bar[i]) << c.name;
  }
}

TEST(KinematicsVjp, MassQuadraticMatchesForwardModeOfCrba) {
  for (const test::GradientCase& c : cases()) {
    const Model& m = c.model;
    const LossWeights w = random_weights(m, 13);
    // y = c.v is held fixed by mass_quadratic_vjp: its adjoint, 2 weight M y, is not compared.
    auto f = [&](const auto& model, auto& data, const auto& q, const auto& y, const auto&) {
      using T = typename std::decay_t<decltype(model)>::Scalar;
      return VectorX<T>::Constant(1, mass_loss(model, data, VectorX<T>(q), VectorX<T>(y), w));
    };
    auto [want_ad, want_fd] = test::reference_vjps(c, f, Eigen::VectorXd::Ones(1));
    want_ad.segment(m.nq, m.nv).setZero();
    want_fd.segment(m.nq, m.nv).setZero();

    Data data(m);
    crba(m, data, c.q);  // oMi and oS at q
    std::vector<Vector6<double>> pose_bar(m.nbodies(), Vector6<double>::Constant(0.25));  // accumulates
    ModelTangent t(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(m.nq);
    mass_quadratic_vjp(m, data, c.v, w.mass_weight, pose_bar, t);
    for (auto& x : pose_bar) x.array() -= 0.25;
    body_poses_vjp(m, data, c.q, pose_bar, q_bar, t);
    expect_quaternion_adjoints_tangent(c, q_bar);
    compare(c, pack(m, q_bar, Eigen::VectorXd::Zero(m.nv), t), want_ad, want_fd, "mass quadratic", 1e-3);
    for (const char* kind : {"mass", "com", "inertia_com", "armature", "axis"})
      EXPECT_GT(block_max(m, want_ad, kind), 1e-3) << c.name << ": block " << kind;
  }
}

TEST(KinematicsVjp, ParamsGradientMatchesForwardModeThroughWithParams) {
  // All three losses at once, through the flat parameter vector (rpy, normalised axes, symmetric
  // inertias): params_gradient of the tangent against AD of L(with_params(model, p)).
  for (bool floating : {false, true}) {
    const Model m = test::random_model(10, floating ? 21 : 22, floating, true);
    std::mt19937 rng(5);
    Eigen::VectorXd q = test::random_configuration(m, rng);
    for (int i = 0; i < m.nbodies(); ++i)
      if (joint_has_quaternion(m.joint_type[i])) q.segment<4>(m.idx_q[i] + (m.joint_type[i] == JointType::Free ? 3 : 0)) *= 0.8;
    const Eigen::VectorXd v = test::random_vector(m.nv, rng), y = test::random_vector(m.nv, rng);
    const LossWeights w = random_weights(m, 14);
    const Eigen::VectorXd p0 = get_params(m);

    auto loss = [&](const VectorX<ADScalar>& p) {
      const ModelTpl<ADScalar> mp = with_params(m.cast<ADScalar>(), VectorX<ADScalar>(p));
      DataTpl<ADScalar> d(mp);
      const VectorX<ADScalar> qa = q.cast<ADScalar>(), va = v.cast<ADScalar>(), ya = y.cast<ADScalar>();
      ADScalar L = velocity_loss(mp, d, qa, va, w) + pose_loss(d, w) + mass_loss(mp, d, qa, ya, w);
      return VectorX<ADScalar>::Constant(1, L);
    };
    const Eigen::VectorXd want = test::ad_jacobian(loss, p0).transpose();

    Data data(m);
    aba(m, data, q, v, Eigen::VectorXd::Zero(m.nv));
    std::vector<Vector6<double>> pose_bar = pose_loss_adjoint(data, w);
    ModelTangent t(m);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(m.nq), v_bar = Eigen::VectorXd::Zero(m.nv);
    world_velocities_vjp(m, data, v, w.velocity_weight, v_bar, pose_bar, &t);
    mass_quadratic_vjp(m, data, y, w.mass_weight, pose_bar, t);
    body_poses_vjp(m, data, q, pose_bar, q_bar, t);
    const Eigen::VectorXd got = params_gradient(m, t);

    ASSERT_EQ(got.size(), want.size());
    const std::vector<std::string> names = param_names(m);
    const double scale = want.cwiseAbs().maxCoeff();
    EXPECT_GT(scale, 0.1);
    int nonzero = 0;
    for (int k = 0; k < want.size(); ++k) {
      EXPECT_LE(std::abs(got[k] - want[k]), 1e-9 * scale) << (floating ? "floating: " : "fixed: ") << names[k]
                                                          << " got " << got[k] << " want " << want[k];
      nonzero += std::abs(want[k]) > 1e-3 * scale;
    }
    // mass, com, inertia, origin, axis of every body move the losses (damping, springs, gravity don't)
    EXPECT_GT(nonzero, 13 * m.nbodies() / 2) << (floating ? "floating" : "fixed");
  }
}

TEST(KinematicsVjp, ChecksSizes) {
  const Model m = test::random_model(4, 1);
  Data data(m);
  ModelTangent t(m);
  const Eigen::VectorXd q = Eigen::VectorXd::Zero(m.nq), w = Eigen::VectorXd::Zero(m.nv);
  Eigen::VectorXd q_bar = q, w_bar = w, short_w = Eigen::VectorXd::Zero(m.nv - 1);
  std::vector<Vector6<double>> per_body(m.nbodies(), Vector6<double>::Zero()), short_list(m.nbodies() - 1);
  EXPECT_THROW(world_velocities(m, data, short_w, per_body), ArgumentError);
  EXPECT_THROW(world_velocities(m, data, w, short_list), ArgumentError);
  EXPECT_THROW(world_velocities_vjp(m, data, w, short_list, w_bar, per_body), ArgumentError);
  EXPECT_THROW(world_velocities_vjp(m, data, w, per_body, w_bar, short_list), ArgumentError);
  EXPECT_THROW(world_velocities_vjp(m, data, w, per_body, short_w, per_body), ArgumentError);
  EXPECT_THROW(body_poses_vjp(m, data, q, short_list, q_bar, t), ArgumentError);
  EXPECT_THROW(body_poses_vjp(m, data, q, per_body, q_bar.head(m.nq - 1), t), ArgumentError);
  EXPECT_THROW(mass_quadratic_vjp(m, data, short_w, 1.0, per_body, t), ArgumentError);
  EXPECT_THROW(mass_quadratic_vjp(m, data, w, 1.0, short_list, t), ArgumentError);
}

}  // namespace
}  // namespace gradyn
