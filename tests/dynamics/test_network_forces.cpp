// Networks inside the dynamics (model/network.hpp, dynamics/network_forces.hpp): with_network's
// names and checks, the forces against the dense forward pass, rollout gradients w.r.t. the weights
// (adjoint vs forward mode vs finite differences, with contact and with controls fed to the
// network), the step Jacobian against finite differences, and a NaN weight's status flag.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "../support/ad_jacobian.hpp"
#include "../support/contact_scenes.hpp"
#include "../support/error_of.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/dynamics/network_forces.hpp"
#include "gradyn/grad/gradcheck.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/network.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn {
namespace {

// The arm pressing on a box, with a motor on the elbow (so a network can read a control).
Model arm(ContactModel contact_model) {
  ContactSettings contact;
  contact.model = contact_model;
  if (contact_model == ContactModel::Pgs) contact.pgs_iterations = 2000, contact.cfm = 1e-6;
  Model m = test::arm_on_box(contact);
  Actuator motor;
  motor.name = "elbow_motor";
  motor.joint = m.joint_id("elbow");
  m.actuators.push_back(motor);
  return m;
}

NetworkSpec friction_spec() {
  NetworkSpec spec;
  spec.name = "friction";
  spec.inputs = {"shoulder.q", "elbow.v", "shoulder.v", "elbow_motor.ctrl"};
  spec.outputs = {"elbow", "shoulder"};
  spec.hidden = {6, 5};
  spec.seed = 3;
  spec.zero_last_layer = false;  // a network that does something, so every weight has a gradient
  return spec;
}

// Adjoint vs forward mode (unless check_ad is false) vs central differences over T steps of the
// arm pressing on the box, with controls.
GradcheckResult arm_gradcheck(const Model& h, int T, bool check_ad = true) {
  MatrixXr<double> taus(T, 2), ctrls(T, 1);
  for (int t = 0; t < T; ++t) {
    taus.row(t) << 2.0 + 0.3 * std::sin(t), -0.5;
    ctrls(t, 0) = 0.4 * std::cos(1.0 + t);
  }
  const Eigen::VectorXd q0 = (Eigen::VectorXd(2) << 0.68, 0.05).finished();
  const Eigen::VectorXd v0 = (Eigen::VectorXd(2) << 0.4, -0.7).finished();
  GradcheckOptions o;
  o.running_loss = true;
  o.check_ad = check_ad;
  return gradcheck(h, q0, v0, taus, ctrls, 0.005, o);
}

// A floating box with a body_wrench network fed its orientation, velocity and height.
Model floating_body_with_a_wrench(const char* activation, unsigned seed) {
  Model body = test::free_body_on_plane(test::geom(GeomType::Box, Vector3<double>(0.1, 0.2, 0.05)), ContactSettings{});
  NetworkSpec spec;
  spec.name = "fluid";
  spec.site = "body_wrench";
  spec.body = body.body_names.back();
  spec.inputs = {"rot[0,1]", "rot[2,2]", "vel.ang.x", "vel.ang.z", "vel.lin.y", "vel.lin.z", "pos.z"};
  spec.hidden = {5};
  spec.activation = activation;
  spec.seed = seed;
  spec.zero_last_layer = false;
  return with_network(body, spec);
}

using test::error_of;

TEST(NetworkForces, WithNetworkNamesInputsOutputsAndParameters) {
  const Model m = arm(ContactModel::None);
  const std::vector<std::string> inputs = network_inputs(m, "joint_force");
  EXPECT_EQ(inputs, (std::vector<std::string>{"shoulder.q", "elbow.q", "shoulder.v", "elbow.v", "elbow_motor.ctrl"}));
  EXPECT_EQ(network_outputs(m, "joint_force"), (std::vector<std::string>{"shoulder", "elbow"}));

  const int np = static_cast<int>(get_params(m).size());
  const Model h = with_network(m, friction_spec());
  ASSERT_EQ(h.networks.size(), 1u);
  const Network& net = h.networks[0];
  EXPECT_EQ(net.shape.widths, (std::vector<int>{4, 6, 5, 2}));
  EXPECT_EQ(net.output_dofs, (std::vector<int>{1, 0}));
  const std::vector<std::string> names = param_names(h);
  ASSERT_EQ(static_cast<int>(names.size()), np + net.shape.param_count());
  EXPECT_EQ(names[np], "friction.layer0.weight[0,0]");
  EXPECT_EQ(names.back(), "friction.layer2.bias[1]");
  // the weights are the parameters' tail, and with_params writes them back
  const Eigen::VectorXd p = get_params(h);
  EXPECT_EQ(p.tail(net.shape.param_count()), net.weights);
  Eigen::VectorXd p2 = p;
  p2.tail(net.shape.param_count()).setConstant(0.25);
  EXPECT_TRUE(with_params(h, p2).networks[0].weights.isConstant(0.25));
  EXPECT_EQ(m.networks.size(), 0u);  // with_network leaves its argument alone

  // zero last layer by default: the hybrid model starts as the analytical one
  NetworkSpec quiet = friction_spec();
  quiet.zero_last_layer = true;
  const Model hq = with_network(m, quiet);
  Data d(hq), d0(m);
  const Eigen::Vector2d q(0.3, -0.2), v(0.5, 1.0), tau(0.1, 0.2);
  const Eigen::VectorXd ctrl = Eigen::VectorXd::Constant(1, 0.7);
  Eigen::VectorXd qn(2), vn(2), qn0(2), vn0(2);
  step<double>(hq, d, q, v, tau, ctrl, 0.01, Integrator::SemiImplicitEuler, qn, vn);
  step<double>(m, d0, q, v, tau, ctrl, 0.01, Integrator::SemiImplicitEuler, qn0, vn0);
  EXPECT_EQ(vn, vn0);
}

TEST(NetworkForces, WithNetworkSaysWhatIsWrongAndWhatIsValid) {
  const Model m = arm(ContactModel::None);
  NetworkSpec s = friction_spec();
  s.inputs = {"shoulder.q", "wrist.v"};
  std::string e = error_of([&] { with_network(m, s); });
  EXPECT_NE(e.find("network 'friction': unknown input 'wrist.v'"), std::string::npos) << e;
  EXPECT_NE(e.find("'elbow_motor.ctrl'"), std::string::npos) << e;  // lists the valid ones
  s = friction_spec();
  s.outputs = {"elbow.v"};
  e = error_of([&] { with_network(m, s); });
  EXPECT_NE(e.find("unknown output 'elbow.v'"), std::string::npos) << e;
  EXPECT_NE(e.find("'shoulder', 'elbow'"), std::string::npos) << e;
  s = friction_spec();
  s.site = "body_wrench_please";
  EXPECT_NE(error_of([&] { with_network(m, s); }).find("site: expected one of 'joint_force'"), std::string::npos);
  s = friction_spec();
  s.hidden = {4, 0};
  EXPECT_NE(error_of([&] { with_network(m, s); }).find("hidden layer 1 needs at least one unit"), std::string::npos);
  s = friction_spec();
  s.activation = "gelu";
  EXPECT_NE(error_of([&] { with_network(m, s); }).find("network 'friction': activation: expected one of"),
            std::string::npos);
  s = friction_spec();
  s.name = "a.b";
  EXPECT_THROW(with_network(m, s), ArgumentError);
  s.name = "";
  EXPECT_THROW(with_network(m, s), ArgumentError);
  s = friction_spec();
  s.inputs = {"elbow.v", "elbow.v"};
  EXPECT_NE(error_of([&] { with_network(m, s); }).find("listed twice"), std::string::npos);
  const Model h = with_network(m, friction_spec());
  EXPECT_NE(error_of([&] { with_network(h, friction_spec()); }).find("has a network of that name"), std::string::npos);
}

TEST(NetworkForces, ForcesAreTheNetworkOfTheNamedInputs) {
  const Model h = with_network(arm(ContactModel::None), friction_spec());
  Data d(h);
  const Eigen::Vector2d q(0.3, -0.2), v(0.5, 1.0);
  const Eigen::VectorXd ctrl = Eigen::VectorXd::Constant(1, 0.7);
  network_forces<double>(h, d, q, v, ctrl);
  DenseWorkspace work(h.networks[0].shape);
  work.input << q[0], v[1], v[0], ctrl[0];
  const Eigen::VectorXd y = dense_forward<double>(h.networks[0].shape, h.networks[0].weights, work);
  EXPECT_EQ(d.network_tau[1], y[0]);  // outputs: elbow, then shoulder
  EXPECT_EQ(d.network_tau[0], y[1]);
  // no controls: the control input reads 0
  network_forces<double>(h, d, q, v, Eigen::VectorXd());
  work.input[3] = 0.0;
  EXPECT_EQ(d.network_tau[1], dense_forward<double>(h.networks[0].shape, h.networks[0].weights, work)[0]);
}

// The adjoint reads the layers network_forces left in data, or runs the forward pass itself.
TEST(NetworkForces, VjpWithAndWithoutTheForwardPassInData) {
  const Model h = with_network(arm(ContactModel::None), friction_spec());
  Data d(h);
  const Eigen::Vector2d q(0.3, -0.2), v(0.5, 1.0), tau_bar(0.7, -1.3);
  const Eigen::VectorXd ctrl = Eigen::VectorXd::Constant(1, 0.7);
  Eigen::VectorXd q_bar[2], v_bar[2], ctrl_bar[2];
  std::vector<ModelTangent> tangents(2, ModelTangent(h));
  for (int k = 0; k < 2; ++k) {
    q_bar[k] = v_bar[k] = Eigen::VectorXd::Zero(2), ctrl_bar[k] = Eigen::VectorXd::Zero(1);
    if (k == 0) network_forces<double>(h, d, q, v, ctrl);
    else network_forces<double>(h, d, v, q, Eigen::VectorXd::Zero(1));  // data now holds another state's layers
    network_forces_vjp<double>(h, d, q, v, ctrl, tau_bar, q_bar[k], v_bar[k], ctrl_bar[k], tangents[k],
                               /*forward_is_current=*/k == 0);
  }
  EXPECT_EQ(q_bar[0], q_bar[1]);
  EXPECT_EQ(v_bar[0], v_bar[1]);
  EXPECT_EQ(ctrl_bar[0], ctrl_bar[1]);
  EXPECT_EQ(tangents[0].network_weights[0], tangents[1].network_weights[0]);
  EXPECT_GT(tangents[0].network_weights[0].cwiseAbs().maxCoeff(), 0.0);
}

// Every weight, the controls, the initial state: adjoint vs forward mode vs central differences,
// without contact, through penalty contact, and through PGS impulses (FD only there: its AD
// reference is the sweeps' derivative).
TEST(NetworkForces, GradcheckOfRolloutsThroughTheNetwork) {
  for (ContactModel contact : {ContactModel::None, ContactModel::Penalty, ContactModel::Pgs}) {
    SCOPED_TRACE(contact_model_name(contact));
    NetworkSpec spec = friction_spec();
    spec.activation = contact == ContactModel::Pgs ? "elu" : "tanh";
    const Model h = with_network(arm(contact), spec);
    const GradcheckResult r = arm_gradcheck(h, 6, /*check_ad=*/contact != ContactModel::Pgs);
    EXPECT_TRUE(r.passed(1e-9, 1e-6)) << r.summary();
    // the weights' gradient is there and not negligible
    const int nw = h.networks[0].shape.param_count();
    const Eigen::VectorXd g = r.adjoint_gradient.tail(nw);
    EXPECT_GT(g.cwiseAbs().maxCoeff(), 1e-4);
  }
}

// d(q+, v+)/d(q, v), d/d tau and d/d ctrl with the network's input Jacobian in them.
TEST(NetworkForces, StepJacobianMatchesFiniteDifferences) {
  for (ContactModel contact : {ContactModel::None, ContactModel::Penalty}) {
    SCOPED_TRACE(contact_model_name(contact));
    const Model h = with_network(arm(contact), friction_spec());
    const Eigen::Vector2d q(0.68, 0.05), v(0.4, -0.7), tau(3.0, -1.0);
    const Eigen::VectorXd ctrl = Eigen::VectorXd::Constant(1, 0.3);
    const double dt = 0.005;
    Data d(h);
    Eigen::MatrixXd A(4, 4), B(4, 2), Bu(4, 1);
    step_jacobian(h, d, q, v, tau, ctrl, dt, Integrator::SemiImplicitEuler, A, B, Bu);
    const auto f = [&](const Eigen::VectorXd& x) {
      Data dd(h);
      Eigen::VectorXd qn(2), vn(2);
      step<double>(h, dd, x.segment(0, 2), x.segment(2, 2), x.segment(4, 2), x.segment(6, 1), dt,
                   Integrator::SemiImplicitEuler, qn, vn);
      Eigen::VectorXd out(4);
      out << qn, vn;
      return out;
    };
    Eigen::VectorXd x(7);
    x << q, v, tau, ctrl;
    const Eigen::MatrixXd J = test::fd_jacobian(f, x, 1e-6);
    Eigen::MatrixXd mine(4, 7);
    mine << A, B, Bu;
    EXPECT_LT((mine - J).cwiseAbs().maxCoeff(), 1e-6 * J.cwiseAbs().maxCoeff()) << "A B Bu\n" << mine << "\nFD\n" << J;
    EXPECT_GT(Bu.cwiseAbs().maxCoeff(), 0.0);
  }
}

// Pruning inputs whose first-layer columns are zero leaves the forces as they were.
TEST(NetworkForces, PruningZeroColumnsKeepsTheForces) {
  Model h = with_network(arm(ContactModel::None), friction_spec());
  Network& net = h.networks[0];  // inputs shoulder.q, elbow.v, shoulder.v, elbow_motor.ctrl
  for (int i = 0; i < net.shape.widths[1]; ++i) net.weights[i * 4 + 0] = net.weights[i * 4 + 3] = 0.0;
  const Model pruned = with_network_inputs(h, "friction", {"shoulder.v", "elbow.v"});
  const Network& p = pruned.networks[0];
  EXPECT_EQ(p.shape.widths, (std::vector<int>{2, 6, 5, 2}));
  EXPECT_EQ(p.inputs[0].name, "shoulder.v");
  Data d(h), dp(pruned);
  const Eigen::Vector2d q(0.3, -0.2), v(0.5, 1.0);
  const Eigen::VectorXd ctrl = Eigen::VectorXd::Constant(1, 0.7);
  network_forces<double>(h, d, q, v, ctrl);
  network_forces<double>(pruned, dp, q, v, ctrl);
  EXPECT_LT((d.network_tau - dp.network_tau).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_EQ(get_params(pruned).size(), get_params(h).size() - 2 * 6);
  std::string e = error_of([&] { with_network_inputs(h, "friction", {"elbow.q"}); });
  EXPECT_NE(e.find("'elbow.q' is not one of its inputs; inputs: 'shoulder.q', 'elbow.v'"), std::string::npos) << e;
  e = error_of([&] { with_network_inputs(h, "drag", {"elbow.v"}); });
  EXPECT_NE(e.find("no network named 'drag'; networks: 'friction'"), std::string::npos) << e;
}

NetworkSpec drag_spec(const std::string& frame, const std::vector<std::string>& extra_inputs) {
  NetworkSpec spec;
  spec.name = "drag";
  spec.site = "body_wrench";
  spec.body = "lower";
  spec.frame = frame;
  spec.inputs = {"pos.x", "pos.z", "rot[0,2]", "rot[2,0]", "rot[1,1]", "vel.ang.y", "vel.lin.x", "vel.lin.z"};
  for (const std::string& x : extra_inputs) spec.inputs.push_back(x);
  spec.hidden = {7};
  spec.seed = 4;
  spec.zero_last_layer = false;
  return spec;
}

TEST(NetworkForces, BodyWrenchNamesAndChecks) {
  const Model m = arm(ContactModel::None);
  const std::vector<std::string> inputs = network_inputs(m, "body_wrench");
  ASSERT_EQ(inputs.size(), 3u + 9u + 6u + 5u);
  EXPECT_EQ(inputs[0], "pos.x");
  EXPECT_EQ(inputs[4], "rot[0,1]");
  EXPECT_EQ(inputs[12], "vel.ang.x");
  EXPECT_EQ(inputs[17], "vel.lin.z");
  EXPECT_EQ(inputs[18], "shoulder.q");
  EXPECT_EQ(network_outputs(m, "body_wrench"),
            (std::vector<std::string>{"torque.x", "torque.y", "torque.z", "force.x", "force.y", "force.z"}));
  NetworkSpec s = drag_spec("body", {});
  s.body = "forearm";
  std::string e = error_of([&] { with_network(m, s); });
  EXPECT_NE(e.find("body 'forearm' is not one of the model's bodies: 'upper', 'lower'"), std::string::npos) << e;
  s = drag_spec("sideways", {});
  EXPECT_NE(error_of([&] { with_network(m, s); }).find("frame: expected 'body' or 'world'"), std::string::npos);
  s = drag_spec("body", {});
  s.outputs = {"force.x", "elbow"};
  EXPECT_NE(error_of([&] { with_network(m, s); }).find("unknown output 'elbow'"), std::string::npos);
  NetworkSpec j = friction_spec();
  j.body = "lower";
  EXPECT_NE(error_of([&] { with_network(m, j); }).find("is for site 'body_wrench'"), std::string::npos);
  const Model h = with_network(m, drag_spec("body", {}));
  EXPECT_EQ(h.networks[0].shape.outputs(), 6);
}

// The step Jacobian (tangent coordinates) of models with body_wrench networks, against central
// differences of step through integrate: the arm with a wrench and a joint_force network, and a
// floating body (quaternion configuration).
TEST(NetworkForces, StepJacobianWithABodyWrenchMatchesFiniteDifferences) {
  const auto check = [](const Model& h, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& ctrl) {
    const int nv = h.nv, nu = h.nu();
    const double dt = 0.005;
    const Eigen::VectorXd tau = Eigen::VectorXd::Constant(nv, 0.3);
    Data d(h);
    Eigen::MatrixXd A(2 * nv, 2 * nv), B(2 * nv, nv), Bu(2 * nv, nu);
    step_jacobian(h, d, q, v, tau, ctrl, dt, Integrator::SemiImplicitEuler, A, B, Bu);
    // x = (dq tangent, v, tau, ctrl) -> (q+ (-) q+(0), v+)
    Eigen::VectorXd q1(h.nq), v1(nv);
    Data d0(h);
    step<double>(h, d0, q, v, tau, ctrl, dt, Integrator::SemiImplicitEuler, q1, v1);
    const auto f = [&](const Eigen::VectorXd& x) {
      Data dd(h);
      Eigen::VectorXd qx(h.nq), qn(h.nq), vn(nv), dq(nv);
      integrate<double>(h, q, x.head(nv), qx);
      step<double>(h, dd, qx, x.segment(nv, nv), x.segment(2 * nv, nv), x.tail(nu), dt, Integrator::SemiImplicitEuler,
                   qn, vn);
      difference<double>(h, q1, qn, dq);
      Eigen::VectorXd out(2 * nv);
      out << dq, vn;
      return out;
    };
    Eigen::VectorXd x(3 * nv + nu);
    x << Eigen::VectorXd::Zero(nv), v, tau, ctrl;
    const Eigen::MatrixXd J = test::fd_jacobian(f, x, 1e-6);
    Eigen::MatrixXd mine(2 * nv, 3 * nv + nu);
    mine << A, B, Bu;
    EXPECT_LT((mine - J).cwiseAbs().maxCoeff(), 2e-6 * J.cwiseAbs().maxCoeff()) << "mine\n" << mine << "\nFD\n" << J;
  };
  {
    SCOPED_TRACE("arm");
    Model h = with_network(arm(ContactModel::None), drag_spec("world", {"elbow.v", "elbow_motor.ctrl"}));
    h = with_network(h, friction_spec());
    check(h, Eigen::Vector2d(0.68, 0.05), Eigen::Vector2d(0.4, -0.7), Eigen::VectorXd::Constant(1, 0.3));
  }
  {
    SCOPED_TRACE("floating body");
    const Model h = floating_body_with_a_wrench("tanh", 2);
    check(h, test::free_state(h, Vector3<double>(0.1, -0.2, 0.5), Vector3<double>(0.3, -0.2, 0.7)),
          test::vec6(0.3, -0.1, 0.2, 0.5, -0.4, 0.8), Eigen::VectorXd());
  }
}

// A wrench of 1 N along the body's x axis at its origin gives tau = J^T F: the same as a point force.
TEST(NetworkForces, BodyWrenchIsJacobianTransposeTimesTheWrench) {
  const Model m = arm(ContactModel::None);
  for (const std::string frame : {"body", "world"}) {
    NetworkSpec s = drag_spec(frame, {});
    s.hidden = {};
    s.outputs = {"force.x", "torque.y"};
    Model h = with_network(m, s);
    Network& net = h.networks[0];
    net.weights.setZero();
    net.weights[net.shape.bias_offset(0)] = 1.0;       // force.x = 1
    net.weights[net.shape.bias_offset(0) + 1] = 0.25;  // torque.y = 0.25
    Data d(h);
    const Eigen::Vector2d q(0.4, -0.7), v(0.3, 0.2);
    network_forces<double>(h, d, q, v, Eigen::VectorXd());
    // reference: the body Jacobian (world axes) of the lower link's origin, from the joint axes
    Data dr(m);
    forward_kinematics<double>(m, dr, q);
    const int body = m.body_id("lower");
    const Pose<double>& X = dr.oMi[body];
    const Vector3<double> f = frame == "body" ? Vector3<double>(X.R.col(0)) : Vector3<double>(1, 0, 0);
    const Vector3<double> n = frame == "body" ? Vector3<double>(0.25 * X.R.col(1)) : Vector3<double>(0, 0.25, 0);
    Eigen::Vector2d expected;
    for (int j = 0; j < 2; ++j) {  // joint j's world axis a through point o: tau_j = a . (n + (p - o) x f)
      const Pose<double>& J = dr.oMi[j];
      const Vector3<double> a = J.R * m.joint_axis[j];
      expected[j] = a.dot(n + (X.p - J.p).cross(f));
    }
    EXPECT_LT((d.network_tau - expected).cwiseAbs().maxCoeff(), 1e-14) << frame << "\n" << d.network_tau << "\n" << expected;
  }
}

// Weights, state and controls through body_wrench networks in both frames, with joint inputs too:
// adjoint vs forward mode vs central differences; on a floating body too (quaternion adjoints).
TEST(NetworkForces, GradcheckOfRolloutsThroughABodyWrench) {
  for (ContactModel contact : {ContactModel::None, ContactModel::Penalty})
    for (const std::string frame : {"body", "world"}) {
      SCOPED_TRACE(std::string(contact_model_name(contact)) + ", " + frame + " frame");
      const Model h = with_network(arm(contact), drag_spec(frame, {"elbow.v", "elbow_motor.ctrl"}));
      const GradcheckResult r = arm_gradcheck(h, 5);
      EXPECT_TRUE(r.passed(1e-9, 1e-6)) << r.summary();
    }
  const Model h = floating_body_with_a_wrench("softplus", 9);
  Eigen::VectorXd q0 = test::free_state(h, Vector3<double>(0.1, -0.2, 0.5), Vector3<double>(0.3, -0.2, 0.7));
  const Eigen::VectorXd v0 = test::vec6(0.3, -0.1, 0.2, 0.5, -0.4, 0.8);
  GradcheckOptions o;
  o.running_loss = true;
  const GradcheckResult r = gradcheck(h, q0, v0, MatrixXr<double>::Zero(4, h.nv), 0.01, o);
  EXPECT_TRUE(r.passed(1e-9, 1e-6)) << r.summary();
}

TEST(NetworkForces, NanWeightFlagsTheStepAndNothingThrows) {
  Model h = with_network(arm(ContactModel::None), friction_spec());
  h.networks[0].weights[2] = std::nan("");
  Data d(h);
  Eigen::VectorXd qn(2), vn(2);
  const Eigen::Vector2d q(0.3, 0.1), v(0.0, 0.0), tau(0, 0);
  step<double>(h, d, q, v, tau, 0.01, Integrator::SemiImplicitEuler, qn, vn);
  EXPECT_TRUE(d.status & kStatusNonFinite);
}

}  // namespace
}  // namespace gradyn
