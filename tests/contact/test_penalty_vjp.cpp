// Adjoint of the semi-implicit Euler and RK4 steps with penalty contact, against forward-mode AD
// through step<ADScalar> (collision and force law included): full step Jacobians w.r.t. (q, v, tau)
// rebuilt from one VJP per output, for a sphere sliding, sticking, rolling and bouncing on a plane,
// a box on its face and on an edge, and a two-link arm whose capsule presses on a box; geometry,
// friction and body-parameter adjoints against AD with seeded model fields; the contact settings
// (doubles in the model) against central differences. Both friction laws.
#include <gtest/gtest.h>

#include <cmath>

#include "../support/contact_scenes.hpp"
#include "gradyn/contact/penalty.hpp"

namespace gradyn {
namespace {

using namespace test;  // scenes and Jacobians: tests/support/contact_scenes.hpp

ContactSettings penalty_settings(FrictionModel friction) {
  ContactSettings s;
  s.model = ContactModel::Penalty;
  s.stiffness = 2e4;
  s.exponent = 1.5;
  s.damping = 0.8;
  s.friction = friction;
  s.velocity_scale = 0.05;
  s.viscous_friction = 0.3;
  return s;
}

// The same scenes for both friction laws: each has at least one contact with f_n > 0.
std::vector<Case> cases(FrictionModel friction) {
  const ContactSettings settings = penalty_settings(friction);
  std::vector<Case> out;
  const Model sphere = free_body_on_plane(geom(GeomType::Sphere, V3(0.1, 0, 0)), settings);
  // body-frame linear then angular velocity
  out.push_back({"sphere sliding", sphere, touching(sphere, 0.2, 0.1, V3(0.1, 0.2, 0.3), 0.002),
                 vec6(0.8, -0.3, -0.05, 0.2, -0.1, 0.3), vec6(0.1, 0.2, -0.3, 0.01, 0.02, -0.01)});
  out.push_back({"sphere sticking", sphere, touching(sphere, 0.0, 0.0, V3(0.0, 0.0, 0.0), 0.002),
                 vec6(0.001, -0.002, 0.0, 0.0, 0.0, 0.0), Eigen::VectorXd::Zero(6)});
  // rolling: no slip at the contact point (v = -omega x r)
  out.push_back({"sphere rolling", sphere, touching(sphere, 0.0, 0.0, V3(0, 0, 0), 0.002),
                 vec6(0.5, 0.0, 0.0, 0.0, 5.0, 0.0), Eigen::VectorXd::Zero(6)});
  out.push_back({"sphere bouncing", sphere, touching(sphere, 0.05, 0.0, V3(0.3, -0.2, 0.1), 0.002),
                 vec6(0.1, 0.05, -2.0, 1.0, 0.5, -0.2), Eigen::VectorXd::Zero(6)});
  const Model box = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.15, 0.05)), settings);
  out.push_back({"box on its face", box, touching(box, 0.0, 0.0, face_down(box), 0.002),
                 vec6(0.3, -0.2, -0.1, 0.2, 0.1, 0.4), vec6(0, 0, 1, 0, 0, 0)});
  out.push_back({"box on an edge", box, touching(box, 0.0, 0.0, V3(0.5, -0.2, 0.1), 0.002),
                 vec6(-0.2, 0.3, -0.4, 1.0, -0.5, 0.2), Eigen::VectorXd::Zero(6)});
  const Model arm = arm_on_box(settings);
  Eigen::VectorXd q(2), v(2), tau(2);
  q << 0.68, 0.05;
  v << 0.4, -0.7;
  tau << 3.0, -1.0;
  out.push_back({"arm pressing on a box", arm, q, v, tau});
  return out;
}

int contacts_pushing(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  Data d(model);
  contact_generalized_forces<double>(model, d, q, v);
  int n = 0;
  for (int k = 0; k < d.ncontacts; ++k) n += d.contact_force[k].norm() > 0;
  return n;
}

TEST(PenaltyVjp, StepJacobianMatchesForwardModeAD) {
  for (FrictionModel friction : {FrictionModel::SmoothCoulomb, FrictionModel::Brown}) {
    for (const Case& c : cases(friction)) {
      ASSERT_GT(contacts_pushing(c.model, c.q, c.v), 0) << c.name;
      for (Integrator integrator : {Integrator::SemiImplicitEuler, Integrator::RK4}) {
        const double dt = 1e-3;
        const Eigen::MatrixXd J_ad = step_jacobian_ad(c.model, c.q, c.v, c.tau, dt, integrator);
        const Eigen::MatrixXd J = step_jacobian_vjp(c.model, c.q, c.v, c.tau, dt, integrator);
        // the contact terms must matter: d v+ / d q is zero without them for the free body
        EXPECT_GT(J.bottomLeftCorner(c.model.nv, c.model.nq).cwiseAbs().maxCoeff(), 1e-3) << c.name;
        EXPECT_LT(relative_error(J, J_ad), 1e-10)
            << c.name << " (" << friction_model_name(friction) << ", "
            << (integrator == Integrator::RK4 ? "rk4" : "euler") << ")";
      }
    }
  }
}

// Loss: a fixed random linear function of (q+, v+).
ModelTangent loss_adjoint(const Model& model, const Loss& loss, const Case& c) {
  Data d(model);
  Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), v_bar = Eigen::VectorXd::Zero(model.nv),
                  tau_bar = Eigen::VectorXd::Zero(model.nv);
  ModelTangent model_bar(model);
  step_vjp<double>(model, d, c.q, c.v, c.tau, 1e-3, Integrator::SemiImplicitEuler, loss.wq, loss.wv, q_bar, v_bar,
                   tau_bar, model_bar);
  return model_bar;
}

TEST(PenaltyVjp, GeometryFrictionAndBodyAdjointsMatchForwardModeAD) {
  for (FrictionModel friction : {FrictionModel::SmoothCoulomb, FrictionModel::Brown}) {
    for (const Case& c : cases(friction)) {
      const Model& model = c.model;
      const Loss loss(model, 7);
      const ModelTangent bar = loss_adjoint(model, loss, c);
      const int g = model.ngeoms() - 1;  // the moving geom (the ground or the fixed box is geom 0)
      const int body = model.geoms[g].body;
      // seeds: the moving geom's size (3), friction of both geoms (2), its placement translation (3),
      // the body's mass (1), the placement of its joint (3)
      auto f = [&](const VectorX<ADScalar>& x) {
        ModelTpl<ADScalar> m = model.cast<ADScalar>();
        for (int k = 0; k < 3; ++k)
          if (model.geoms[g].size[k] != 0.0) m.geoms[g].size[k] = x[k];
        m.geoms[0].friction = x[3];
        m.geoms[g].friction = x[4];
        m.geoms[g].placement.p = x.segment(5, 3);
        m.body_inertia[body].mass = x[8];
        m.joint_placement[body].p = x.segment(9, 3);
        VectorX<ADScalar> out(1);
        out[0] = loss(m, c.q, c.v, c.tau);
        return out;
      };
      Eigen::VectorXd x0(12);
      x0 << model.geoms[g].size, model.geoms[0].friction, model.geoms[g].friction, model.geoms[g].placement.p,
          model.body_inertia[body].mass, model.joint_placement[body].p;
      const Eigen::MatrixXd ad = test::ad_jacobian(f, x0);
      Eigen::VectorXd ours(12);
      Eigen::Vector3d size_bar = bar.geom_size[g];
      for (int k = 0; k < 3; ++k)
        if (model.geoms[g].size[k] == 0.0) size_bar[k] = 0.0;
      ours << size_bar, bar.geom_friction[0], bar.geom_friction[g], bar.geom_placement_p[g], bar.mass[body],
          bar.placement_p[body];
      EXPECT_LT(relative_error(ours.transpose(), ad), 1e-9) << c.name << "\nours " << ours.transpose()
                                                            << "\nAD   " << ad;
      // the contact parameters are not inert here
      EXPECT_GT(std::abs(bar.geom_friction[0]) + std::abs(bar.geom_friction[g]) + size_bar.cwiseAbs().sum(), 0.0)
          << c.name;
    }
  }
}

TEST(PenaltyVjp, ContactSettingsAdjointsMatchCentralDifferences) {
  for (FrictionModel friction : {FrictionModel::SmoothCoulomb, FrictionModel::Brown}) {
    for (const Case& c : cases(friction)) {
      const Loss loss(c.model, 3);
      const ModelTangent bar = loss_adjoint(c.model, loss, c);
      using Field = double ContactSettings::*;
      struct Entry {
        const char* name;
        Field field;
        double ModelTangent::ContactSettingsBar::*adjoint;
      };
      const Entry entries[] = {
          {"stiffness", &ContactSettings::stiffness, &ModelTangent::ContactSettingsBar::stiffness},
          {"exponent", &ContactSettings::exponent, &ModelTangent::ContactSettingsBar::exponent},
          {"damping", &ContactSettings::damping, &ModelTangent::ContactSettingsBar::damping},
          {"velocity_scale", &ContactSettings::velocity_scale, &ModelTangent::ContactSettingsBar::velocity_scale},
          {"static_friction_ratio", &ContactSettings::static_friction_ratio,
           &ModelTangent::ContactSettingsBar::static_friction_ratio},
          {"viscous_friction", &ContactSettings::viscous_friction, &ModelTangent::ContactSettingsBar::viscous_friction},
      };
      for (const Entry& e : entries) {
        const double x0 = c.model.contact.*(e.field);
        const double h = 1e-6 * std::max(1.0, std::abs(x0));
        Model mp = c.model, mm = c.model;
        mp.contact.*(e.field) = x0 + h;
        mm.contact.*(e.field) = x0 - h;
        const double fd = (loss(mp, c.q, c.v, c.tau) - loss(mm, c.q, c.v, c.tau)) / (2 * h);
        const double ours = bar.contact.*(e.adjoint);
        EXPECT_NEAR(ours, fd, 1e-6 * std::max(1.0, std::abs(fd)))
            << c.name << " " << e.name << " (" << friction_model_name(friction) << ")";
      }
    }
  }
}

TEST(PenaltyVjp, RolloutThroughContactMatchesForwardModeAD) {
  // A sphere dropped on the plane: contact appears during the rollout, bounces, and slides.
  const Model model = free_body_on_plane(geom(GeomType::Sphere, V3(0.1, 0, 0)), penalty_settings(FrictionModel::SmoothCoulomb));
  const Eigen::VectorXd q0 = free_state(model, V3(0, 0, 0.105), V3(0.1, 0, 0));
  const Eigen::VectorXd v0 = vec6(0.5, 0, -0.5, 0, 0, 1.0);
  const int T = 60;
  const double dt = 1e-3;
  MatrixXr<double> taus = MatrixXr<double>::Zero(T, model.nv), qs, vs;
  Data d(model);
  rollout<double>(model, d, q0, v0, taus, dt, Integrator::SemiImplicitEuler, qs, vs);
  MatrixXr<double> qs_bar = MatrixXr<double>::Zero(T + 1, model.nq), vs_bar = MatrixXr<double>::Zero(T + 1, model.nv);
  qs_bar.row(T).setOnes();
  vs_bar.row(T).setConstant(0.5);
  Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(model.nq), v0_bar = Eigen::VectorXd::Zero(model.nv);
  MatrixXr<double> taus_bar = MatrixXr<double>::Zero(T, model.nv);
  ModelTangent model_bar(model);
  rollout_vjp<double>(model, d, q0, v0, taus, dt, Integrator::SemiImplicitEuler, qs_bar, vs_bar, q0_bar, v0_bar,
                      taus_bar, model_bar);
  Eigen::VectorXd x0(model.nq + model.nv);
  x0 << q0, v0;
  const ModelTpl<ADScalar> m = model.cast<ADScalar>();
  DataTpl<ADScalar> dad(m);
  auto f = [&](const VectorX<ADScalar>& x) {
    MatrixXr<ADScalar> qa, va;
    rollout<ADScalar>(m, dad, x.head(model.nq), x.tail(model.nv), taus.cast<ADScalar>(), ADScalar(dt),
                      Integrator::SemiImplicitEuler, qa, va);
    VectorX<ADScalar> out(1);
    out[0] = qa.row(T).sum() + 0.5 * va.row(T).sum();
    return out;
  };
  const Eigen::MatrixXd ad = test::ad_jacobian(f, x0);
  Eigen::VectorXd ours(model.nq + model.nv);
  ours << q0_bar, v0_bar;
  EXPECT_LT(relative_error(ours.transpose(), ad), 1e-9) << "ours " << ours.transpose() << "\nAD   " << ad;
}

}  // namespace
}  // namespace gradyn
