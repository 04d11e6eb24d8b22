// Adjoint of the semi-implicit Euler step with PGS contact, both gradient modes, against
// forward-mode AD through step<ADScalar> (which differentiates the PGS iterations as they ran):
// the sweep reverse must match it to rounding; implicit differentiation of the active set must
// match it once PGS has converged (the difference is the sweep map's contraction to the power of
// the iteration count). Scenes: a sphere resting (normal row clamping, friction inside the cone),
// sliding (friction rows on the cone), rolling and bouncing (restitution), a box on its face
// (4 contacts) and an arm pressing on a box, also with a joint-limit row; geometry, friction,
// restitution and Baumgarte adjoints against AD with seeded model fields or central differences.
#include <gtest/gtest.h>

#include "../support/contact_scenes.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn {
namespace {

using namespace test;  // scenes and Jacobians: tests/support/contact_scenes.hpp

ContactSettings pgs_settings(PgsGradient mode) {
  ContactSettings s;
  s.model = ContactModel::Pgs;
  s.pgs_iterations = 400;
  s.pgs_tolerance = 1e-15;
  s.erp = 0.2;
  s.slop = 1e-4;
  s.cfm = 1e-6;
  s.pgs_gradient = mode;
  return s;
}

std::vector<Case> cases(PgsGradient mode) {
  const ContactSettings settings = pgs_settings(mode);
  std::vector<Case> out;
  GeomSpec ball = geom(GeomType::Sphere, V3(0.1, 0, 0));
  ball.restitution = 0.6;
  const Model sphere = free_body_on_plane(ball, settings);
  out.push_back({"sphere resting", sphere, touching(sphere, 0.0, 0.0, V3(0.0, 0.0, 0.0), 0.002),
                 vec6(0.001, -0.002, 0.0, 0.0, 0.0, 0.0), vec6(0.1, 0.2, -0.3, 0.01, 0.02, -0.01)});
  out.push_back({"sphere sliding", sphere, touching(sphere, 0.2, 0.1, V3(0.1, 0.2, 0.3), 0.002),
                 vec6(0.8, -0.3, -0.05, 0.2, -0.1, 0.3), vec6(0.1, 0.2, -0.3, 0.01, 0.02, -0.01)});
  out.push_back({"sphere rolling", sphere, touching(sphere, 0.0, 0.0, V3(0, 0, 0), 0.002),
                 vec6(0.5, 0.0, 0.0, 0.0, 5.0, 0.0), Eigen::VectorXd::Zero(6)});
  out.push_back({"sphere bouncing", sphere, touching(sphere, 0.05, 0.0, V3(0.3, -0.2, 0.1), 0.002),
                 vec6(0.1, 0.05, -2.0, 1.0, 0.5, -0.2), Eigen::VectorXd::Zero(6)});
  // Four corners on a face: a degenerate LCP (the normal impulses are not unique without CFM).
  ContactSettings box_settings = settings;
  box_settings.cfm = 1e-3;
  const Model box = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.15, 0.05)), box_settings);
  // PGS does not reach 1e-12 on this sliding four-corner support within the sweeps given (the
  // friction/normal coupling converges slowly), so only the sweep reverse, exact for the iterates
  // as they ran, is checked on it; the implicit derivative is that of the exact solution.
  if (mode == PgsGradient::Sweeps)
    out.push_back({"box on its face sliding", box, touching(box, 0.0, 0.0, face_down(box), 0.002),
                 vec6(0.3, -0.2, -0.1, 0.0, 0.0, 0.4), vec6(0, 0, 1, 0, 0, 0)});
  const Model arm = arm_on_box(settings);
  Eigen::VectorXd q(2), v(2), tau(2);
  q << 0.55, 0.05;
  v << 0.4, -0.7;
  tau << 3.0, -1.0;
  out.push_back({"arm pressing on a box", arm, q, v, tau});
  // the same with the elbow past its lower limit: a limit row after the contact rows
  Model limited = arm;
  limited.lower_limit[1] = 0.07;
  limited.upper_limit[1] = 1.0;
  out.push_back({"arm pressing on a box at its elbow limit", limited, q, v, tau});
  return out;
}

// Contacts of the step from (q, v, tau); whether its PGS solve converged.
int contacts_at(const Case& c, bool& converged, int& limits) {
  Data d(c.model);
  Eigen::VectorXd qn(c.model.nq), vn(c.model.nv);
  step<double>(c.model, d, c.q, c.v, c.tau, 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  converged = pgs_data(d).result.converged;
  limits = pgs_data(d).nlimits;
  return d.ncontacts;
}

TEST(PgsContactVjp, StepJacobianMatchesForwardModeAD) {
  for (PgsGradient mode : {PgsGradient::Sweeps, PgsGradient::Implicit}) {
    for (const Case& c : cases(mode)) {
      bool converged = false;
      int limits = 0;
      ASSERT_GT(contacts_at(c, converged, limits), 0) << c.name;
      EXPECT_EQ(limits, std::string(c.name).find("limit") != std::string::npos ? 1 : 0) << c.name;
      // the implicit derivative is that of the exact solution: the solve must have reached it
      if (mode == PgsGradient::Implicit) ASSERT_TRUE(converged) << c.name;
      const double dt = 1e-3;
      const Eigen::MatrixXd J_ad = step_jacobian_ad(c.model, c.q, c.v, c.tau, dt, Integrator::SemiImplicitEuler);
      const Eigen::MatrixXd J = step_jacobian_vjp(c.model, c.q, c.v, c.tau, dt, Integrator::SemiImplicitEuler);
      EXPECT_GT(J.bottomLeftCorner(c.model.nv, c.model.nq).cwiseAbs().maxCoeff(), 1e-3) << c.name;
      const double tolerance = mode == PgsGradient::Sweeps ? 1e-10 : 1e-7;
      EXPECT_LT(relative_error(J, J_ad), tolerance)
          << c.name << (mode == PgsGradient::Sweeps ? " (sweeps)" : " (implicit)");
    }
  }
}

TEST(PgsContactVjp, ModelAdjointsMatchForwardModeADAndCentralDifferences) {
  for (PgsGradient mode : {PgsGradient::Sweeps, PgsGradient::Implicit}) {
    for (const Case& c : cases(mode)) {
      const Model& model = c.model;
      const Loss loss(model, 11);
      Data d(model);
      Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), v_bar = Eigen::VectorXd::Zero(model.nv),
                      tau_bar = Eigen::VectorXd::Zero(model.nv);
      ModelTangent bar(model);
      step_vjp<double>(model, d, c.q, c.v, c.tau, 1e-3, Integrator::SemiImplicitEuler, loss.wq, loss.wv, q_bar, v_bar,
                       tau_bar, bar);
      const int g = model.ngeoms() - 1;
      const int body = model.geoms[g].body;
      auto f = [&](const VectorX<ADScalar>& x) {
        ModelTpl<ADScalar> m = model.cast<ADScalar>();
        for (int k = 0; k < 3; ++k)
          if (model.geoms[g].size[k] != 0.0) m.geoms[g].size[k] = x[k];
        m.geoms[0].friction = x[3];
        m.geoms[g].friction = x[4];
        m.geoms[0].restitution = x[5];
        m.geoms[g].restitution = x[6];
        m.geoms[g].placement.p = x.segment(7, 3);
        m.body_inertia[body].mass = x[10];
        VectorX<ADScalar> out(1);
        out[0] = loss(m, c.q, c.v, c.tau);
        return out;
      };
      Eigen::VectorXd x0(11);
      x0 << model.geoms[g].size, model.geoms[0].friction, model.geoms[g].friction, model.geoms[0].restitution,
          model.geoms[g].restitution, model.geoms[g].placement.p, model.body_inertia[body].mass;
      const Eigen::MatrixXd ad = ad_jacobian(f, x0);
      Eigen::Vector3d size_bar = bar.geom_size[g];
      for (int k = 0; k < 3; ++k)
        if (model.geoms[g].size[k] == 0.0) size_bar[k] = 0.0;
      Eigen::VectorXd ours(11);
      ours << size_bar, bar.geom_friction[0], bar.geom_friction[g], bar.geom_restitution[0], bar.geom_restitution[g],
          bar.geom_placement_p[g], bar.mass[body];
      EXPECT_LT(relative_error(ours.transpose(), ad), mode == PgsGradient::Sweeps ? 1e-9 : 1e-6)
          << c.name << "\nours " << ours.transpose() << "\nAD   " << ad;
      // Baumgarte and CFM settings: central differences
      struct Entry {
        const char* name;
        double ContactSettings::*field;
        double ModelTangent::ContactSettingsBar::*adjoint;
      };
      for (const Entry& e : {Entry{"erp", &ContactSettings::erp, &ModelTangent::ContactSettingsBar::erp},
                             Entry{"slop", &ContactSettings::slop, &ModelTangent::ContactSettingsBar::slop},
                             Entry{"cfm", &ContactSettings::cfm, &ModelTangent::ContactSettingsBar::cfm}}) {
        const double x = model.contact.*(e.field);
        const double h = 1e-7 * std::max(1e-3, std::abs(x));
        Model mp = model, mm = model;
        mp.contact.*(e.field) = x + h;
        mm.contact.*(e.field) = x - h;
        const double fd = (loss(mp, c.q, c.v, c.tau) - loss(mm, c.q, c.v, c.tau)) / (2 * h);
        EXPECT_NEAR(bar.contact.*(e.adjoint), fd, 1e-5 * std::max(1.0, std::abs(fd))) << c.name << " " << e.name;
      }
    }
  }
}

// A box face down on the plane and sticking: its four corners' rows are redundant (no cfm), so
// the active-set system is singular. step_vjp then takes the least-norm
// adjoint, the transpose of the step Jacobian's least-norm map: the two agree, the derivatives
// with respect to q (through the Baumgarte targets of the depths) included. (Here the sweeps'
// reverse, which step_vjp used before, agrees too; on the humanoid's feet it did not, by up to
// 1e-5: tests/flat/test_pgs.cpp compares the flat kernels' least-norm adjoint with step_vjp's.)
TEST(PgsContactVjp, ASingularActiveSetTakesTheStepJacobiansLeastNormMap) {
  ContactSettings settings;  // the defaults: no cfm, 100 sweeps to 1e-10
  settings.model = ContactModel::Pgs;
  const Model m = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.15, 0.05), 2.0), settings);
  const Eigen::VectorXd q = touching(m, 0.0, 0.0, face_down(m), 0.002);
  const Eigen::VectorXd v = vec6(0.0, 0.0, -0.05, 0.0, 0.0, 0.0), tau = vec6(0.1, 0.2, -0.3, 0.01, 0.02, -0.01);
  const double dt = 1e-3;
  Data d(m);
  Eigen::VectorXd qn(m.nq), vn(m.nv);
  step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, qn, vn);
  ASSERT_EQ(d.ncontacts, 4);
  ASSERT_TRUE(pgs_data(d).result.converged);
  const int n = pgs_data(d).problem.size();
  PgsAdjointWorkspace aws(n);
  BoxedLcpAdjoint unused(n);
  EXPECT_FALSE(pgs_implicit_vjp(pgs_data(d).problem, pgs_data(d).lambda.head(n), Eigen::VectorXd::Ones(n), aws, unused))
      << "the scene must make the active-set system singular; lambda " << pgs_data(d).lambda.head(n).transpose();
  // The rows of v+: by q (the VJP's ambient q mapped to tangent directions, d(q (+) e dq)/de by
  // central differences of the exponential map), by v and by tau.
  const Eigen::MatrixXd J = step_jacobian_vjp(m, q, v, tau, dt, Integrator::SemiImplicitEuler);
  Eigen::MatrixXd A(2 * m.nv, 2 * m.nv), B(2 * m.nv, m.nv);
  Data dj(m);
  step_jacobian(m, dj, q, v, tau, dt, Integrator::SemiImplicitEuler, A, B);
  Eigen::MatrixXd ambient(m.nq, m.nv);
  for (int k = 0; k < m.nv; ++k) {
    const double h = 1e-6;
    Eigen::VectorXd qp(m.nq), qm(m.nq);
    integrate<double>(m, q, h * Eigen::VectorXd::Unit(m.nv, k), qp);
    integrate<double>(m, q, -h * Eigen::VectorXd::Unit(m.nv, k), qm);
    ambient.col(k) = (qp - qm) / (2 * h);
  }
  Eigen::MatrixXd from_vjp(m.nv, 3 * m.nv), analytic(m.nv, 3 * m.nv);
  from_vjp << J.bottomLeftCorner(m.nv, m.nq) * ambient, J.bottomRightCorner(m.nv, 2 * m.nv);
  analytic << A.bottomRows(m.nv), B.bottomRows(m.nv);
  EXPECT_GT(analytic.cwiseAbs().maxCoeff(), 0.5);
  EXPECT_LT(relative_error(from_vjp, analytic), 1e-8) << "vjp\n" << from_vjp << "\njacobian\n" << analytic;
}

}  // namespace
}  // namespace gradyn
