// Adjoint of the semi-implicit Euler step with interior-point contact (paper 000, Eq. 3 through the
// assembly) against forward-mode AD through step<ADScalar> (which propagates the LCP solution's
// derivatives with the same factorisation, forwards: K dw = -dR) and central differences. Scenes: a
// sphere resting on a tilted plane (friction inside the cone), sliding, bouncing (restitution), just
// above the plane within the margin (a gap row), a box on its face sliding (4 contacts), an arm
// pressing on a box (M and J depend on q through the joints), the same arm past its elbow limit (a
// joint-limit row after the contact rows), a pendulum closing on its limit (a gap-closing limit row, no
// contact) and a spinning puck below a limit on a planar joint's coordinate (the row turns with the
// joint's angle), with kappa = 0 and kappa > 0; geometry, friction, restitution, mass and armature
// adjoints against AD with seeded model fields; Baumgarte and CFM settings against central differences.
#include <gtest/gtest.h>

#include "../support/contact_scenes.hpp"
#include "gradyn/contact/ipm_contact.hpp"
#include "gradyn/contact/ipm_contact_vjp.hpp"
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {
namespace {

using namespace test;  // scenes and Jacobians: tests/support/contact_scenes.hpp

ContactSettings ipm_settings(double kappa) {
  ContactSettings s;
  s.model = ContactModel::Ipm;
  s.ipm_iterations = 100;
  s.ipm_tolerance = 1e-12;
  s.ipm_kappa = kappa;
  s.erp = 0.2;
  s.slop = 1e-4;
  s.cfm = 1e-6;
  return s;
}

// A rod of 1 kg, 1 m on a hinge about y (horizontal at q = 0, gravity turns it towards +q), limited
// to q <= 0.3.
Model limited_pendulum(const ContactSettings& contact) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  b.add_link({"rod", Inertia<double>(1.0, V3(0.5, 0, 0), Eigen::Vector3d(1e-3, 1.0 / 12, 1.0 / 12).asDiagonal().toDenseMatrix()), {}});
  JointSpec j;
  j.name = "hinge", j.type = JointType::Revolute, j.parent = "world", j.child = "rod", j.axis = V3::UnitY();
  j.lower = -1.0, j.upper = 0.3;
  b.add_joint(j);
  Model m = b.build();
  m.contact = contact;
  return m;
}

// A 2 kg puck on a planar joint whose plane is vertical (the joint frame turned about x: joint y =
// world z), its y coordinate limited below by 0.
Model limited_puck(const ContactSettings& contact) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  b.add_link({"puck", Inertia<double>(2.0, V3(0.02, 0.01, 0), Matrix3<double>::Identity() * 0.01), {}});
  JointSpec j;
  j.name = "planar", j.type = JointType::Planar, j.parent = "world", j.child = "puck";
  j.origin.R = axis_angle_to_matrix<double>(V3::UnitX(), M_PI / 2);
  b.add_joint(j);
  Model m = b.build();
  m.lower_limit[1] = 0.0;
  m.contact = contact;
  return m;
}

std::vector<Case> cases(double kappa) {
  const ContactSettings settings = ipm_settings(kappa);
  std::vector<Case> out;
  GeomSpec ball = geom(GeomType::Sphere, V3(0.1, 0, 0));
  ball.restitution = 0.6;
  const Model sphere = free_body_on_plane(ball, settings);
  out.push_back({"sphere resting", sphere, touching(sphere, 0.0, 0.0, V3(0.0, 0.0, 0.0), 0.002),
                 vec6(0.001, -0.002, 0.0, 0.0, 0.0, 0.0), vec6(0.1, 0.2, -0.3, 0.01, 0.02, -0.01)});
  out.push_back({"sphere sliding", sphere, touching(sphere, 0.2, 0.1, V3(0.1, 0.2, 0.3), 0.002),
                 vec6(0.8, -0.3, -0.05, 0.2, -0.1, 0.3), vec6(0.1, 0.2, -0.3, 0.01, 0.02, -0.01)});
  out.push_back({"sphere bouncing", sphere, touching(sphere, 0.05, 0.0, V3(0.3, -0.2, 0.1), 0.002),
                 vec6(0.1, 0.05, -2.0, 1.0, 0.5, -0.2), Eigen::VectorXd::Zero(6)});
  // 3 mm above the plane, within a 1 cm margin, approaching at 5 m/s: the gap closes within the step
  // (a gap row; with restitution, a gap-and-bounce row).
  Model hovering = sphere;
  hovering.contact.margin = 0.01;
  Eigen::VectorXd above = touching(hovering, 0.0, 0.0, V3(0.1, 0, 0), 0.0);
  above[2] += 0.003;
  out.push_back({"sphere closing a gap, bouncing", hovering, above, vec6(0.2, 0.0, -5.0, 0.0, 0.0, 0.0),
                 Eigen::VectorXd::Zero(6)});
  Model no_bounce = hovering;  // no restitution below 10 m/s: a plain gap row
  no_bounce.contact.restitution_threshold = 10.0;
  out.push_back({"sphere closing a gap", no_bounce, above, vec6(0.2, 0.0, -5.0, 0.0, 0.0, 0.0),
                 Eigen::VectorXd::Zero(6)});
  const Model box = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.15, 0.05)), settings);
  out.push_back({"box on its face sliding", box, touching(box, 0.0, 0.0, face_down(box), 0.002),
                 vec6(0.3, -0.2, -0.1, 0.0, 0.0, 0.4), vec6(0, 0, 1, 0, 0, 0)});
  const Model arm = arm_on_box(settings);
  Eigen::VectorXd q(2), v(2), tau(2);
  q << 0.55, 0.05;
  v << 0.4, -0.7;
  tau << 3.0, -1.0;
  out.push_back({"arm pressing on a box", arm, q, v, tau});
  // the elbow 0.02 rad past its lower limit: a Baumgarte limit row after the contact rows
  Model limited = arm;
  limited.lower_limit[1] = 0.07;
  limited.upper_limit[1] = 1.0;
  out.push_back({"arm pressing on a box at its elbow limit", limited, q, v, tau});
  // no contact: a rod 0.5 mrad short of its upper limit, swinging into it (the row lets it close the gap)
  const Model pendulum = limited_pendulum(settings);
  out.push_back({"pendulum closing on its limit", pendulum, Eigen::VectorXd::Constant(1, 0.2995),
                 Eigen::VectorXd::Constant(1, 1.5), Eigen::VectorXd::Constant(1, 0.3)});
  // a planar joint in a vertical plane (joint y = world z), its y >= 0 violated by 0.5 mm while the
  // puck spins: the limit row (sin theta, cos theta, 0) depends on theta
  const Model puck = limited_puck(settings);
  Eigen::VectorXd qp(3), vp(3);
  qp << 0.1, -5e-4, 0.7;
  vp << 0.3, -0.5, 3.0;
  out.push_back({"spinning puck at a planar limit", puck, qp, vp, Eigen::Vector3d(0.2, -0.1, 0.05)});
  for (Case& c : out) c.name += kappa > 0 ? " (kappa > 0)" : "";
  return out;
}

// The step's solve from (q, v, tau): contacts, convergence, target branches, limit rows.
int contacts_at(const Case& c, bool& converged, std::vector<std::uint8_t>& branches, int& limits) {
  Data d(c.model);
  Eigen::VectorXd qn(c.model.nq), vn(c.model.nv);
  step<double>(c.model, d, c.q, c.v, c.tau, 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  converged = ipm_data(d).result.converged;
  branches.assign(ipm_data(d).target_branch.begin(), ipm_data(d).target_branch.begin() + d.ncontacts);
  limits = ipm_data(d).nlimits;
  return d.ncontacts;
}

TEST(IpmContactVjp, StepJacobianMatchesForwardModeAD) {
  for (double kappa : {0.0, 1e-7}) {
    for (const Case& c : cases(kappa)) {
      bool converged = false;
      std::vector<std::uint8_t> branches;
      int limits = 0;
      const int contacts = contacts_at(c, converged, branches, limits);
      const bool limited = c.name.find("limit") != std::string::npos;
      EXPECT_EQ(limits, limited ? 1 : 0) << c.name;
      ASSERT_GT(contacts + limits, 0) << c.name;
      EXPECT_EQ(contacts > 0, c.model.ngeoms() > 0) << c.name;
      ASSERT_TRUE(converged) << c.name;
      if (c.name.find("sphere bouncing") != std::string::npos) {
        EXPECT_EQ(branches[0], kIpmTargetRestitution);
      } else if (c.name.find("gap, bouncing") != std::string::npos) {
        EXPECT_EQ(branches[0], kIpmTargetGapBounce);
      } else if (c.name.find("gap") != std::string::npos) {
        EXPECT_EQ(branches[0], kIpmTargetGap);
      }
      const double dt = 1e-3;
      const Eigen::MatrixXd J_ad = step_jacobian_ad(c.model, c.q, c.v, c.tau, dt, Integrator::SemiImplicitEuler);
      const Eigen::MatrixXd J = step_jacobian_vjp(c.model, c.q, c.v, c.tau, dt, Integrator::SemiImplicitEuler);
      EXPECT_GT(J.bottomLeftCorner(c.model.nv, c.model.nq).cwiseAbs().maxCoeff(), 1e-3) << c.name;
      EXPECT_LT(relative_error(J, J_ad), 1e-8) << c.name << "\nvjp\n" << J << "\nAD\n" << J_ad;
    }
  }
}

// Where the solution is a smooth function of the state (kappa > 0, or a strictly complementary
// sliding contact), the adjoint is the derivative the finite differences see.
TEST(IpmContactVjp, StepJacobianMatchesCentralDifferences) {
  for (double kappa : {0.0, 1e-7}) {
    for (const Case& c : cases(kappa)) {
      const bool smooth = c.name.find("sliding") != std::string::npos || c.name.find("bouncing") != std::string::npos ||
                          c.model.ngeoms() == 0;  // a loaded limit row alone is strictly complementary
      if (kappa == 0.0 && !smooth) continue;  // sticking contacts at kappa = 0: degenerate friction rows (one-sided derivatives)
      const int nq = c.model.nq, nv = c.model.nv;
      Eigen::VectorXd x0(nq + 2 * nv);
      x0 << c.q, c.v, c.tau;
      auto f = [&](const Eigen::VectorXd& x) {
        Data d(c.model);
        Eigen::VectorXd qn(nq), vn(nv), out(nq + nv);
        step<double>(c.model, d, x.head(nq), x.segment(nq, nv), x.tail(nv), 1e-3, Integrator::SemiImplicitEuler, qn,
                     vn);
        out << qn, vn;
        return out;
      };
      const Eigen::MatrixXd J_fd = fd_jacobian(f, x0, 1e-6);
      const Eigen::MatrixXd J = step_jacobian_vjp(c.model, c.q, c.v, c.tau, 1e-3, Integrator::SemiImplicitEuler);
      EXPECT_LT(relative_error(J, J_fd), 2e-5) << c.name << "\nvjp\n" << J << "\nFD\n" << J_fd;
    }
  }
}

TEST(IpmContactVjp, ModelAdjointsMatchForwardModeADAndCentralDifferences) {
  for (double kappa : {0.0, 1e-7}) {
    for (const Case& c : cases(kappa)) {
      const Model& model = c.model;
      const Loss loss(model, 11);
      Data d(model);
      Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), v_bar = Eigen::VectorXd::Zero(model.nv),
                      tau_bar = Eigen::VectorXd::Zero(model.nv);
      ModelTangent bar(model);
      step_vjp<double>(model, d, c.q, c.v, c.tau, 1e-3, Integrator::SemiImplicitEuler, loss.wq, loss.wv, q_bar, v_bar,
                       tau_bar, bar);
      // geometry, friction and restitution of the first and last geom (none in the limit-only scenes:
      // zeros on both sides), the mass of the last geom's body (the last body's) and the last armature
      const bool geoms = model.ngeoms() > 0;
      const int g = model.ngeoms() - 1;
      const int body = geoms ? model.geoms[g].body : model.nbodies() - 1;
      auto f = [&](const VectorX<ADScalar>& x) {
        ModelTpl<ADScalar> m = model.cast<ADScalar>();
        if (geoms) {
          for (int k = 0; k < 3; ++k)
            if (model.geoms[g].size[k] != 0.0) m.geoms[g].size[k] = x[k];
          m.geoms[0].friction = x[3];
          m.geoms[g].friction = x[4];
          m.geoms[0].restitution = x[5];
          m.geoms[g].restitution = x[6];
          m.geoms[g].placement.p = x.segment(7, 3);
        }
        m.body_inertia[body].mass = x[10];
        m.armature[model.nv - 1] = x[11];
        VectorX<ADScalar> out(1);
        out[0] = loss(m, c.q, c.v, c.tau);
        return out;
      };
      Eigen::VectorXd x0 = Eigen::VectorXd::Zero(12), ours = Eigen::VectorXd::Zero(12);
      if (geoms) {
        x0.head(10) << model.geoms[g].size, model.geoms[0].friction, model.geoms[g].friction,
            model.geoms[0].restitution, model.geoms[g].restitution, model.geoms[g].placement.p;
        Eigen::Vector3d size_bar = bar.geom_size[g];
        for (int k = 0; k < 3; ++k)
          if (model.geoms[g].size[k] == 0.0) size_bar[k] = 0.0;
        ours.head(10) << size_bar, bar.geom_friction[0], bar.geom_friction[g], bar.geom_restitution[0],
            bar.geom_restitution[g], bar.geom_placement_p[g];
      }
      x0.tail(2) << model.body_inertia[body].mass, model.armature[model.nv - 1];
      ours.tail(2) << bar.mass[body], bar.armature[model.nv - 1];
      const Eigen::MatrixXd ad = ad_jacobian(f, x0);
      EXPECT_LT(relative_error(ours.transpose(), ad), 1e-8) << c.name << "\nours " << ours.transpose() << "\nAD   " << ad;
      // Baumgarte and CFM settings (doubles in ContactSettings, so no AD): central differences
      struct Entry {
        const char* name;
        double ContactSettings::*field;
        double ModelTangent::ContactSettingsBar::*adjoint;
      };
      for (const Entry& e : {Entry{"erp", &ContactSettings::erp, &ModelTangent::ContactSettingsBar::erp},
                             Entry{"slop", &ContactSettings::slop, &ModelTangent::ContactSettingsBar::slop},
                             Entry{"cfm", &ContactSettings::cfm, &ModelTangent::ContactSettingsBar::cfm}}) {
        const double x = model.contact.*(e.field);
        const double h = 1e-3 * std::max(1e-5, std::abs(x));
        Model mp = model, mm = model;
        mp.contact.*(e.field) = x + h;
        mm.contact.*(e.field) = x - h;
        const double fd = (loss(mp, c.q, c.v, c.tau) - loss(mm, c.q, c.v, c.tau)) / (2 * h);
        EXPECT_NEAR(bar.contact.*(e.adjoint), fd, 1e-4 * std::max(1.0, std::abs(fd))) << c.name << " " << e.name;
      }
    }
  }
}

TEST(IpmContactVjp, RolloutGradientThroughABounce) {
  // A ball thrown at the floor: d(final height)/d(initial vertical speed) through 300 steps and one
  // bounce, against central differences of the rollout.
  GeomSpec ball = geom(GeomType::Sphere, V3(0.1, 0, 0));
  ball.restitution = 0.7;
  ContactSettings settings = ipm_settings(0.0);
  const Model m = free_body_on_plane(ball, settings);
  Eigen::VectorXd q0 = free_state(m, V3(0, 0, 0.3), V3(0.1, 0.2, 0)), v0 = vec6(0.3, 0.1, -1.5, 0.5, 0.2, 0.1);
  const int T = 300;
  const MatrixXr<double> taus = MatrixXr<double>::Zero(T, 6);
  auto final_height = [&](const Eigen::VectorXd& v_start) {
    Data d(m);
    MatrixXr<double> qs, vs;
    rollout<double>(m, d, q0, v_start, taus, 1e-3, Integrator::SemiImplicitEuler, qs, vs);
    return qs(T, 2);
  };
  Data d(m);
  MatrixXr<double> qs_bar = MatrixXr<double>::Zero(T + 1, m.nq), vs_bar = MatrixXr<double>::Zero(T + 1, m.nv);
  qs_bar(T, 2) = 1.0;
  Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(m.nq), v0_bar = Eigen::VectorXd::Zero(m.nv);
  MatrixXr<double> taus_bar = MatrixXr<double>::Zero(T, m.nv);
  ModelTangent bar(m);
  rollout_vjp<double>(m, d, q0, v0, taus, 1e-3, Integrator::SemiImplicitEuler, qs_bar, vs_bar, q0_bar, v0_bar,
                      taus_bar, bar);
  for (int k = 0; k < 6; ++k) {
    const double h = 1e-6;
    Eigen::VectorXd vp = v0, vm = v0;
    vp[k] += h;
    vm[k] -= h;
    const double fd = (final_height(vp) - final_height(vm)) / (2 * h);
    EXPECT_NEAR(v0_bar[k], fd, 1e-4 * std::max(1.0, std::abs(fd))) << "v0[" << k << "]";
  }
}

TEST(IpmContactVjp, AdScalarAndRk4AreRefused) {
  const Model m = free_body_on_plane(geom(GeomType::Sphere, V3(0.1, 0, 0)), ipm_settings(0.0));
  const Eigen::VectorXd q = touching(m, 0, 0, V3(0, 0, 0), 0.001), v = Eigen::VectorXd::Zero(6);
  Data d(m);
  Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(7), v_bar = Eigen::VectorXd::Zero(6), tau_bar = v_bar;
  ModelTangent bar(m);
  EXPECT_THROW(step_vjp<double>(m, d, q, v, v, 1e-3, Integrator::RK4, q_bar, v_bar, q_bar, v_bar, tau_bar, bar),
               ArgumentError);
  const ModelTpl<ADScalar> ma = m.cast<ADScalar>();
  DataTpl<ADScalar> da(ma);
  VectorX<ADScalar> qa = q.cast<ADScalar>(), va = v.cast<ADScalar>(), qb = VectorX<ADScalar>::Zero(7),
                    vb = VectorX<ADScalar>::Zero(6), tb = vb;
  ModelTangentTpl<ADScalar> bara(ma);
  EXPECT_THROW(step_vjp<ADScalar>(ma, da, qa, va, va, ADScalar(1e-3), Integrator::SemiImplicitEuler, qb, vb, qb, vb,
                                  tb, bara),
               ArgumentError);
}

}  // namespace
}  // namespace gradyn
