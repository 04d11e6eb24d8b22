// step_jacobian against forward-mode AD through the whole step, in the same tangent coordinates:
// x = (dq, v, tau) -> (difference(q+_0, q+), v+) at dq = 0.
#include <gtest/gtest.h>

#include <random>

#include "../support/ad_jacobian.hpp"
#include "../support/contact_scenes.hpp"
#include "../support/random_model.hpp"
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn {
namespace {

// [A B] by AD: columns dq (nv), v (nv), tau (nv); rows dq+ (nv), v+ (nv).
Eigen::MatrixXd tangent_step_jacobian_ad(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                         const Eigen::VectorXd& tau, double dt) {
  const int nv = model.nv, nq = model.nq;
  Data d0(model);
  Eigen::VectorXd q1(nq), v1(nv);
  step<double>(model, d0, q, v, tau, dt, Integrator::SemiImplicitEuler, q1, v1);
  const ModelTpl<ADScalar> m = model.cast<ADScalar>();
  const VectorX<ADScalar> qa = q.cast<ADScalar>(), q1a = q1.cast<ADScalar>();
  Eigen::VectorXd x0(3 * nv);
  x0 << Eigen::VectorXd::Zero(nv), v, tau;
  auto f = [&](const VectorX<ADScalar>& x) {
    DataTpl<ADScalar> d(m);
    VectorX<ADScalar> qp(nq), qn(nq), vn(nv), dqn(nv), out(2 * nv);
    integrate<ADScalar>(m, qa, x.head(nv), qp);
    step<ADScalar>(m, d, qp, x.segment(nv, nv), x.tail(nv), ADScalar(dt), Integrator::SemiImplicitEuler, qn, vn);
    difference<ADScalar>(m, q1a, qn, dqn);
    out << dqn, vn;
    return out;
  };
  return test::ad_jacobian(f, x0);
}

void expect_matches_ad(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                       const Eigen::VectorXd& tau, double dt, double tol = 1e-9) {
  {  // the step under test touches what the scene says
    Data probe(model);
    Eigen::VectorXd q1(model.nq), v1(model.nv);
    step<double>(model, probe, q, v, tau, dt, Integrator::SemiImplicitEuler, q1, v1);
    if (model.contact.model != ContactModel::None && !model.geoms.empty()) EXPECT_GT(probe.ncontacts, 0);
  }
  const int nv = model.nv;
  Data data(model);
  Eigen::MatrixXd A(2 * nv, 2 * nv), B(2 * nv, nv);
  step_jacobian(model, data, q, v, tau, dt, Integrator::SemiImplicitEuler, A, B);
  const Eigen::MatrixXd ref = tangent_step_jacobian_ad(model, q, v, tau, dt);
  Eigen::MatrixXd got(2 * nv, 3 * nv);
  got << A, B;
  EXPECT_LT(test::relative_error(got, ref), tol) << "analytical\n" << got << "\nAD\n" << ref;
}

TEST(StepJacobian, MatchesForwardModeADWithoutContact) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    for (bool floating : {false, true}) {
      const Model model = test::random_model(8, seed, floating, true);
      std::mt19937 rng(seed);
      const Eigen::VectorXd q = test::random_configuration(model, rng);
      const Eigen::VectorXd v = test::random_vector(model.nv, rng, 2.0), tau = test::random_vector(model.nv, rng);
      expect_matches_ad(model, q, v, tau, 0.01);
    }
  }
}

// The path without contact forms its rows from dtau_dx's nonzeros only (the tree's pattern); the
// penalty path, with nothing to touch, from the dense product: the two agree to rounding, on
// branching trees with every joint type and passive terms.
TEST(StepJacobian, WithoutContactMatchesTheDenseProduct) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    for (bool floating : {false, true}) {
      const Model model = test::random_model(10, seed, floating, true);
      ASSERT_TRUE(model.geoms.empty());
      Model penalty = model;
      penalty.contact.model = ContactModel::Penalty;
      std::mt19937 rng(seed);
      const Eigen::VectorXd q = test::random_configuration(model, rng);
      const Eigen::VectorXd v = test::random_vector(model.nv, rng, 2.0), tau = test::random_vector(model.nv, rng);
      const int nv = model.nv;
      Eigen::MatrixXd A(2 * nv, 2 * nv), B(2 * nv, nv), A_dense(2 * nv, 2 * nv), B_dense(2 * nv, nv);
      Data data(model), data_dense(penalty);
      step_jacobian(model, data, q, v, tau, 0.01, Integrator::SemiImplicitEuler, A, B);
      step_jacobian(penalty, data_dense, q, v, tau, 0.01, Integrator::SemiImplicitEuler, A_dense, B_dense);
      EXPECT_LT(test::relative_error(A, A_dense), 1e-13) << "seed " << seed << (floating ? " floating" : "");
      EXPECT_LT(test::relative_error(B, B_dense), 1e-13) << "seed " << seed << (floating ? " floating" : "");
    }
  }
}

TEST(StepJacobian, MatchesForwardModeADThroughPenaltyContact) {
  ContactSettings contact;
  contact.model = ContactModel::Penalty;
  for (FrictionModel friction : {FrictionModel::SmoothCoulomb, FrictionModel::Brown}) {
    contact.friction = friction;
    // a sphere rolling and sliding, a box on an edge, a box on its face
    const Model sphere = test::free_body_on_plane(test::geom(GeomType::Sphere, {0.1, 0, 0}), contact);
    expect_matches_ad(sphere, test::touching(sphere, 0.2, -0.1, test::V3(0.3, 0.2, 0.1), 0.004),
                      test::vec6(0.3, -0.2, -0.1, 1.0, 2.0, -0.5), test::vec6(0.1, 0.2, 0.3, 0.01, 0.02, 0.03), 1e-3);
    const Model box = test::free_body_on_plane(test::geom(GeomType::Box, {0.2, 0.1, 0.05}), contact);
    expect_matches_ad(box, test::touching(box, 0.1, 0.0, test::V3(0.4, 0.0, 0.2), 0.003),
                      test::vec6(0.2, 0.1, -0.2, 0.5, -0.4, 0.3), Eigen::VectorXd::Zero(6), 1e-3);
    expect_matches_ad(box, test::touching(box, 0.0, 0.0, test::face_down(box), 0.002),
                      test::vec6(0.4, -0.1, -0.05, 0.0, 0.0, 0.8), Eigen::VectorXd::Zero(6), 1e-3);
  }
}

TEST(StepJacobian, MatchesForwardModeADForAnArmPressingOnABox) {
  ContactSettings contact;
  contact.model = ContactModel::Penalty;
  const Model model = test::arm_on_box(contact);
  Eigen::VectorXd q(2), v(2), tau(2);  // the capsule presses on the box (tests/contact/test_penalty_vjp.cpp)
  q << 0.68, 0.05;
  v << 0.4, -0.7;
  tau << 3.0, -1.0;
  Data data(model);
  forward_kinematics<double>(model, data, q);
  collide<double>(model, data, 0.0);
  ASSERT_GT(data.ncontacts, 0);
  expect_matches_ad(model, q, v, tau, 1e-3);
}

// Velocity-level contact. The ipm's AD reference differentiates the same linearised KKT system at
// the solution (ipm_contact.cpp): they agree to rounding. PGS's AD reference is the derivative of the
// sweeps as they ran, which approaches the active-set derivative as the sweeps converge (tolerance
// 1e-10 here; cfm > 0 keeps four face contacts' twelve rows from being redundant).
ContactSettings velocity_level(ContactModel model) {
  ContactSettings contact;
  contact.model = model;
  contact.pgs_iterations = 2000;
  contact.pgs_tolerance = 1e-13;
  contact.cfm = 1e-6;
  return contact;
}

void expect_velocity_level_matches_ad(ContactModel contact_model, double tol) {
  const ContactSettings contact = velocity_level(contact_model);
  // sticking and sliding spheres, a sphere bouncing (restitution), a box on an edge and on its face
  GeomSpec ball = test::geom(GeomType::Sphere, {0.1, 0, 0});
  ball.restitution = 0.5;
  const Model sphere = test::free_body_on_plane(ball, contact);
  const Eigen::VectorXd q_sphere = test::touching(sphere, 0.2, -0.1, test::V3(0.3, 0.2, 0.1), 0.002);
  SCOPED_TRACE(contact_model_name(contact_model));
  {
    SCOPED_TRACE("sphere sticking");
    expect_matches_ad(sphere, q_sphere, test::vec6(0.01, -0.02, -0.01, 0.1, 0.2, -0.05), test::vec6(0.1, 0.2, 0.3, 0.01, 0.02, 0.03), 1e-3, tol);
  }
  {
    SCOPED_TRACE("sphere sliding");
    expect_matches_ad(sphere, q_sphere, test::vec6(2.0, -1.0, -0.1, 1.0, 2.0, -0.5), test::vec6(0.1, 0.2, 0.3, 0.01, 0.02, 0.03), 1e-3, tol);
  }
  {
    SCOPED_TRACE("sphere bouncing");
    expect_matches_ad(sphere, q_sphere, test::vec6(0.3, -0.2, -1.5, 1.0, 2.0, -0.5), Eigen::VectorXd::Zero(6), 1e-3, tol);
  }
  const Model box = test::free_body_on_plane(test::geom(GeomType::Box, {0.2, 0.1, 0.05}), contact);
  {
    SCOPED_TRACE("box on an edge");
    expect_matches_ad(box, test::touching(box, 0.1, 0.0, test::V3(0.4, 0.0, 0.2), 0.003),
                      test::vec6(0.2, 0.1, -0.2, 0.5, -0.4, 0.3), Eigen::VectorXd::Zero(6), 1e-3, tol);
  }
  {
    SCOPED_TRACE("box face down");
    expect_matches_ad(box, test::touching(box, 0.0, 0.0, test::face_down(box), 0.002),
                      test::vec6(0.01, -0.01, -0.05, 0.0, 0.0, 0.08), Eigen::VectorXd::Zero(6), 1e-3, tol);
  }
  {
    SCOPED_TRACE("arm pressing on a box");
    const Model arm = test::arm_on_box(contact);
    Eigen::VectorXd q(2), v(2), tau(2);
    q << 0.68, 0.05;
    v << 0.4, -0.7;
    tau << 3.0, -1.0;
    expect_matches_ad(arm, q, v, tau, 1e-3, tol);
  }
  {
    SCOPED_TRACE("joint-limit rows on random trees (planar joints' rows move with their angle)");
    for (unsigned seed = 1; seed <= 4; ++seed) {
      Model tree = test::random_model(6, seed, seed % 2 == 0, true);
      tree.contact = contact;
      std::mt19937 rng(seed);
      const Eigen::VectorXd q = test::random_configuration(tree, rng);
      const Eigen::VectorXd v = test::random_vector(tree.nv, rng), tau = test::random_vector(tree.nv, rng);
      // every limitable coordinate just past a limit (violated: a Baumgarte target) or near one
      for (int i = 0; i < tree.nbodies(); ++i) {
        if (!joint_has_limited_coordinates(tree.joint_type[i])) continue;
        for (int k = 0; k < tree.joint_nq(i); ++k) {
          const int c = tree.idx_q[i] + k;
          (c % 2 == 0 ? tree.lower_limit[c] : tree.upper_limit[c]) = q[c] + (c % 2 == 0 ? 0.01 : 0.0005);
        }
      }
      Data probe(tree);
      Eigen::VectorXd q1(tree.nq), v1(tree.nv);
      step<double>(tree, probe, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q1, v1);
      EXPECT_GT(contact.model == ContactModel::Pgs ? pgs_data(probe).nlimits : ipm_data(probe).nlimits, 0);
      expect_matches_ad(tree, q, v, tau, 1e-3, tol);
    }
  }
}

TEST(StepJacobian, MatchesForwardModeADThroughIpmContact) { expect_velocity_level_matches_ad(ContactModel::Ipm, 1e-12); }

TEST(StepJacobian, MatchesForwardModeADThroughPgsContact) { expect_velocity_level_matches_ad(ContactModel::Pgs, 1e-6); }

TEST(StepJacobian, RefusesWhatItDoesNotCover) {
  const Model model = test::random_model(3, 1);
  Data data(model);
  const Eigen::VectorXd q = neutral_configuration<double>(model), z = Eigen::VectorXd::Zero(model.nv);
  Eigen::MatrixXd A(2 * model.nv, 2 * model.nv), B(2 * model.nv, model.nv), Bbad(2 * model.nv, model.nv + 1);
  EXPECT_THROW(step_jacobian(model, data, q, z, z, 0.01, Integrator::RK4, A, B), ArgumentError);
  EXPECT_THROW(step_jacobian(model, data, q, z, z, 0.01, Integrator::SemiImplicitEuler, A, Bbad), ArgumentError);
}

}  // namespace
}  // namespace gradyn
