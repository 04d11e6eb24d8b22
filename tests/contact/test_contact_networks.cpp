// Networks at contact sites (model/network.hpp, contact/detail/contact_networks.hpp): a box on the
// ground pushed by a sphere on a slider. The friction network is a residual on the pair's
// coefficient (checked against the same model with that coefficient), the force network adds its
// force at each overlapping contact, and rollouts are differentiated through both (adjoint vs
// forward mode vs central differences) with networks on either side of a contact.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "../support/ad_jacobian.hpp"
#include "../support/contact_scenes.hpp"
#include "../support/error_of.hpp"
#include "gradyn/collision/collide.hpp"
#include "gradyn/contact/penalty.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/grad/gradcheck.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/network.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn {
namespace {

using test::V3;

// A 1 kg box (free joint, first in q) on the ground and a sphere on a slider along x behind it.
Model pushing_scene(ContactModel contact_model = ContactModel::Penalty) {
  ModelBuilder b;
  // the ground's friction above the box's: a tie would make the pair's coefficient a kink in either
  b.add_link({"world", std::nullopt, {}, {test::geom(GeomType::Plane, V3::Zero(), 0.6)}});
  b.add_link({"box", Inertia<double>(1.0, V3(0.01, 0, 0), Matrix3<double>::Identity() * 0.004), {},
              {test::geom(GeomType::Box, V3(0.1, 0.08, 0.05), 0.5)}});
  b.add_link({"pusher", Inertia<double>(0.5, V3::Zero(), Matrix3<double>::Identity() * 1e-4), {},
              {test::geom(GeomType::Sphere, V3(0.03, 0, 0), 0.3)}});
  JointSpec free;
  free.name = "free";
  free.type = JointType::Free;
  free.parent = "world";
  free.child = "box";
  b.add_joint(free);
  JointSpec slider;
  slider.name = "slider";
  slider.type = JointType::Prismatic;
  slider.parent = "world";
  slider.child = "pusher";
  slider.origin.p = V3(-0.2, 0.01, 0.05);
  slider.axis = V3(1, 0, 0);
  b.add_joint(slider);
  Model m = b.build();
  m.contact.model = contact_model;
  return m;
}

// The box 2 mm into the ground, turned a little, and the sphere `pusher_depth` into its back face
// (negative: apart), both moving.
void pushing_state(const Model& m, double pusher_depth, Eigen::VectorXd& q, Eigen::VectorXd& v) {
  q = test::free_state(m, V3(0, 0, 0.048), V3(0.0, 0.0, 0.02));
  q[7] = 0.2 - 0.1 - 0.03 + pusher_depth;  // sphere centre at -0.2 + q; the box's back face near x = -0.1
  v = Eigen::VectorXd::Zero(m.nv);
  v.head<6>() << 0.05, -0.1, 0.2, 0.3, 0.05, -0.02;  // body frame: angular, then linear
  v[6] = 0.3;
}

NetworkSpec spec(const std::string& name, const std::string& site, const std::string& body, const std::string& other,
                 const std::vector<std::string>& inputs, const std::vector<std::string>& outputs, unsigned seed) {
  NetworkSpec s;
  s.name = name, s.site = site, s.body = body, s.other = other, s.inputs = inputs, s.outputs = outputs;
  s.hidden = {4};
  s.seed = seed;
  s.zero_last_layer = false;
  return s;
}

// Networks on the box's ground contacts (friction), on the pusher's contact with the box and on
// every contact of the box (forces): each side of the box-pusher contact has one.
Model pushing_with_networks(ContactModel contact_model = ContactModel::Penalty) {
  Model m = pushing_scene(contact_model);
  m = with_network(m, spec("surface", "contact_friction", "box", "world",
                           {"contact.pos.x", "contact.pos.y", "contact.vel.x", "rot[2,2]", "vel.ang.z"}, {}, 3));
  m = with_network(m, spec("push", "contact_force", "pusher", "box",
                           {"contact.depth", "contact.normal.x", "contact.vel.y", "pos.x", "vel.lin.x"},
                           {"normal", "force.y"}, 5));
  m = with_network(m, spec("grip", "contact_force", "box", "",
                           {"contact.normal.z", "contact.vel.x", "contact.pos.y", "vel.ang.x", "rot[0,1]"},
                           {"force.x", "force.z", "normal"}, 7));
  // small weights: the friction residual stays well away from its clamp at 0, the forces well
  // below the contacts' own
  for (Network& net : m.networks) net.weights *= 0.3;
  return m;
}

using test::error_of;

Eigen::VectorXd step_velocity(const Model& m, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  Data d(m);
  Eigen::VectorXd qn(m.nq), vn(m.nv);
  step<double>(m, d, q, v, Eigen::VectorXd::Zero(m.nv), 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  return vn;
}

TEST(ContactNetworks, NamesInputsOutputsAndChecks) {
  const Model m = pushing_scene();
  const std::vector<std::string> inputs = network_inputs(m, "contact_force");
  ASSERT_EQ(inputs.size(), 10u + 18u);  // the contact's, then the body's; no joint quantities
  EXPECT_EQ(inputs.front(), "contact.depth");
  EXPECT_EQ(inputs[9], "contact.vel.z");
  EXPECT_EQ(inputs[10], "pos.x");
  EXPECT_EQ(inputs.back(), "vel.lin.z");
  EXPECT_EQ(network_inputs(m, "contact_friction"), inputs);
  EXPECT_EQ(network_outputs(m, "contact_force"), (std::vector<std::string>{"normal", "force.x", "force.y", "force.z"}));
  EXPECT_EQ(network_outputs(m, "contact_friction"), (std::vector<std::string>{"friction"}));

  const Model h = pushing_with_networks();
  EXPECT_EQ(h.networks[0].other_body, -1);
  EXPECT_EQ(h.networks[1].other_body, h.body_id("box"));
  EXPECT_EQ(h.networks[2].other_body, kAnyOtherBody);
  EXPECT_EQ(h.networks[1].output_dofs, (std::vector<int>{0, 2}));

  NetworkSpec s = spec("n", "contact_force", "lid", "", {"contact.depth"}, {}, 0);
  std::string e = error_of([&] { with_network(m, s); });
  EXPECT_NE(e.find("network 'n': site 'contact_force' needs the body whose contacts it acts on; body 'lid' is not one"),
            std::string::npos) << e;
  s = spec("n", "contact_force", "box", "table", {"contact.depth"}, {}, 0);
  e = error_of([&] { with_network(m, s); });
  EXPECT_NE(e.find("other: expected 'world' or the body on the contacts' other side; body 'table'"), std::string::npos) << e;
  s = spec("n", "contact_friction", "box", "box", {"contact.depth"}, {}, 0);
  EXPECT_NE(error_of([&] { with_network(m, s); }).find("a body does not touch itself"), std::string::npos);
  s = spec("n", "contact_friction", "box", "", {"slider.v"}, {}, 0);
  e = error_of([&] { with_network(m, s); });
  EXPECT_NE(e.find("unknown input 'slider.v' at site 'contact_friction'"), std::string::npos) << e;
  EXPECT_NE(e.find("'contact.vel.z'"), std::string::npos) << e;
  s = spec("n", "contact_friction", "box", "", {"contact.depth"}, {"normal"}, 0);
  EXPECT_NE(error_of([&] { with_network(m, s); }).find("unknown output 'normal'"), std::string::npos);
  s = spec("n", "joint_force", "", "world", {"slider.v"}, {}, 0);
  EXPECT_NE(error_of([&] { with_network(m, s); }).find("other ('world') is for sites 'contact_force'"),
            std::string::npos);
}

// A friction network that outputs the constant b acts as the pair's coefficient mu + b; below 0
// the coefficient is 0.
TEST(ContactNetworks, FrictionNetworkIsAResidualOnThePairsCoefficient) {
  Eigen::VectorXd q, v;
  const Model m = pushing_scene();
  pushing_state(m, -0.02, q, v);  // the pusher away: only the ground contacts
  for (const double b : {0.3, -5.0}) {
    SCOPED_TRACE(b);
    NetworkSpec s = spec("surface", "contact_friction", "box", "world", {"contact.pos.x", "vel.lin.y"}, {}, 1);
    s.hidden = {};
    Model h = with_network(m, s);
    h.networks[0].weights.setZero();
    h.networks[0].weights[h.networks[0].shape.bias_offset(0)] = b;
    Model reference = m;
    for (Geom& g : reference.geoms)
      if (g.body != reference.body_id("pusher")) g.friction = std::max(0.0, 0.6 + b);
    const Eigen::VectorXd v_plain = step_velocity(m, q, v);
    const Eigen::VectorXd v_hybrid = step_velocity(h, q, v);
    EXPECT_LT((v_hybrid - step_velocity(reference, q, v)).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_GT((v_hybrid - v_plain).cwiseAbs().maxCoeff(), 1e-3);  // friction acts in this state
  }
}

// A force network's output n_out along the normal and f_out along world axes on its body, at every
// overlapping contact it sees, the opposite on the other side.
TEST(ContactNetworks, ForceNetworkAddsItsForceAtEveryContactItSees) {
  Eigen::VectorXd q, v;
  const Model m = pushing_scene();
  pushing_state(m, 0.002, q, v);
  NetworkSpec s = spec("push", "contact_force", "pusher", "box", {"contact.depth"}, {"normal", "force.z"}, 1);
  s.hidden = {};
  Model h = with_network(m, s);
  h.networks[0].weights.setZero();
  h.networks[0].weights[h.networks[0].shape.bias_offset(0)] = 2.0;       // normal
  h.networks[0].weights[h.networks[0].shape.bias_offset(0) + 1] = -0.5;  // force.z
  Data d(m), dh(h);
  for (auto [model, data] : {std::pair<const Model*, Data*>{&m, &d}, {&h, &dh}}) {
    forward_kinematics<double>(*model, *data, q, v);
    collide<double>(*model, *data, model->contact.margin);
    penalty_contact_forces<double>(*model, *data);
  }
  ASSERT_EQ(d.ncontacts, dh.ncontacts);
  const int pusher = h.body_id("pusher");
  int seen = 0;
  for (int k = 0; k < d.ncontacts; ++k) {
    const Contact& c = d.contacts[k];
    const int a = h.geoms[c.geom_a].body, b = h.geoms[c.geom_b].body;
    Vector3<double> expected = Vector3<double>::Zero();
    if ((a == pusher || b == pusher) && c.depth > 0) {
      const double side = b == pusher ? 1.0 : -1.0;  // contact_force is the force on geom b
      expected = side * (2.0 * side * c.normal + Vector3<double>(0, 0, -0.5));
      ++seen;
    }
    EXPECT_LT((dh.contact_force[k] - d.contact_force[k] - expected).cwiseAbs().maxCoeff(), 1e-12) << k;
  }
  EXPECT_EQ(seen, 1);
}

// Every weight, the state and the parameters through all three networks, with the pusher pressing
// on the box: adjoint vs forward mode vs central differences.
TEST(ContactNetworks, GradcheckOfRolloutsThroughContactNetworks) {
  const Model h = pushing_with_networks();
  Eigen::VectorXd q, v;
  pushing_state(h, 0.002, q, v);
  MatrixXr<double> taus = MatrixXr<double>::Zero(5, h.nv);
  taus.col(6).setConstant(3.0);  // the slider pushes
  GradcheckOptions o;
  o.running_loss = true;
  const GradcheckResult r = gradcheck(h, q, v, taus, 1e-3, o);
  const std::vector<std::string> names = param_names(h);
  EXPECT_TRUE(r.passed(1e-9, 1e-6)) << r.summary() << "worst FD parameter: " << names[r.blocks.back().worst_fd_index];
  // each network's weights get a gradient that is not negligible
  int offset = static_cast<int>(r.adjoint_gradient.size());
  for (int n = static_cast<int>(h.networks.size()) - 1; n >= 0; --n) {
    const int nw = h.networks[n].shape.param_count();
    offset -= nw;
    EXPECT_GT(r.adjoint_gradient.segment(offset, nw).cwiseAbs().maxCoeff(), 1e-4) << h.networks[n].name;
  }
}

// step_jacobian runs through the networks (by reverse mode) and matches central differences.
TEST(ContactNetworks, StepJacobianMatchesFiniteDifferences) {
  const Model h = pushing_with_networks();
  Eigen::VectorXd q, v;
  pushing_state(h, 0.002, q, v);
  const int nv = h.nv;
  const double dt = 1e-3;
  const Eigen::VectorXd tau = Eigen::VectorXd::Constant(nv, 0.2);
  Data d(h);
  Eigen::MatrixXd A(2 * nv, 2 * nv), B(2 * nv, nv), Bu(2 * nv, 0);
  step_jacobian(h, d, q, v, tau, Eigen::VectorXd(), dt, Integrator::SemiImplicitEuler, A, B, Bu);
  Eigen::VectorXd q1(h.nq), v1(nv);
  Data d0(h);
  step<double>(h, d0, q, v, tau, dt, Integrator::SemiImplicitEuler, q1, v1);
  const auto f = [&](const Eigen::VectorXd& x) {
    Data dd(h);
    Eigen::VectorXd qx(h.nq), qn(h.nq), vn(nv), dq(nv);
    integrate<double>(h, q, x.head(nv), qx);
    step<double>(h, dd, qx, x.segment(nv, nv), x.tail(nv), dt, Integrator::SemiImplicitEuler, qn, vn);
    difference<double>(h, q1, qn, dq);
    Eigen::VectorXd out(2 * nv);
    out << dq, vn;
    return out;
  };
  Eigen::VectorXd x(3 * nv);
  x << Eigen::VectorXd::Zero(nv), v, tau;
  const Eigen::MatrixXd J = test::fd_jacobian(f, x, 1e-7);
  Eigen::MatrixXd mine(2 * nv, 3 * nv);
  mine << A, B;
  EXPECT_LT((mine - J).cwiseAbs().maxCoeff(), 1e-5 * J.cwiseAbs().maxCoeff()) << "mine\n" << mine << "\nFD\n" << J;
}

TEST(ContactNetworks, OtherContactModelsRefuseThem) {
  Eigen::VectorXd q, v;
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::None}) {
    SCOPED_TRACE(contact_model_name(contact));
    const Model h = pushing_with_networks(contact);
    pushing_state(h, 0.002, q, v);
    const std::string e = error_of([&] { step_velocity(h, q, v); });
    EXPECT_NE(e.find("network 'surface' is at site 'contact_friction', which only the penalty contact model"),
              std::string::npos) << e;
    EXPECT_NE(e.find(std::string("this model's contact model is '") + contact_model_name(contact)), std::string::npos)
        << e;
  }
}

TEST(ContactNetworks, NanWeightFlagsTheStep) {
  Model h = pushing_with_networks();
  h.networks[1].weights[0] = std::nan("");
  Eigen::VectorXd q, v;
  pushing_state(h, 0.002, q, v);
  Data d(h);
  Eigen::VectorXd qn(h.nq), vn(h.nv);
  step<double>(h, d, q, v, Eigen::VectorXd::Zero(h.nv), 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  EXPECT_TRUE(d.status & kStatusNonFinite);
}

}  // namespace
}  // namespace gradyn
