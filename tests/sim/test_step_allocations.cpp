// "A step never allocates": once Data's workspaces are sized (the first call with a given contact
// count), step, step_vjp and step_jacobian make no heap allocation, for every contact model. Counted
// by interposing malloc in this test binary (glibc: the other tests only pay a relaxed atomic load),
// or, in a sanitizer build (scripts/sanitize.sh), whose runtime owns malloc, by its allocation hook.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../support/laikago_scene.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/network.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/sim/step_jacobian.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GRADYN_SANITIZER_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GRADYN_SANITIZER_MALLOC 1
#endif
#endif

#if defined(GRADYN_SANITIZER_MALLOC)
#include <sanitizer/allocator_interface.h>
#endif

#if defined(__GLIBC__) || defined(GRADYN_SANITIZER_MALLOC)
namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
void count() {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace
#endif

#if defined(GRADYN_SANITIZER_MALLOC)
namespace {
// The sanitizer's malloc calls this for every allocation (malloc, calloc, realloc, new).
[[maybe_unused]] const int hooks_installed = __sanitizer_install_malloc_and_free_hooks(
    [](const volatile void*, std::size_t) { count(); }, [](const volatile void*) {});
}  // namespace
#elif defined(__GLIBC__)
extern "C" void* __libc_malloc(std::size_t);
extern "C" void* __libc_calloc(std::size_t, std::size_t);
extern "C" void* __libc_realloc(void*, std::size_t);

extern "C" void* malloc(std::size_t n) {
  count();
  return __libc_malloc(n);
}
extern "C" void* calloc(std::size_t n, std::size_t size) {
  count();
  return __libc_calloc(n, size);
}
extern "C" void* realloc(void* p, std::size_t n) {
  count();
  return __libc_realloc(p, n);
}
#endif

namespace gradyn {
namespace {

// Heap allocations made by f().
template <class F>
long allocations_in(F&& f) {
#if defined(__GLIBC__) || defined(GRADYN_SANITIZER_MALLOC)
  allocations = 0;
  counting = true;
  f();
  counting = false;
  return allocations.load();
#else
  f();
  return 0;
#endif
}

struct Scene {
  std::string name;
  Model model;
  Eigen::VectorXd q;
  int contacts;  // resting contacts at q
};

// A box resting on a plane on its four corners (a free joint: the multi-DoF paths; PGS's active-set
// system is singular there, four contacts for six dofs: its least-norm branch) or a sphere on one
// point (a regular system), and a pendulum on a hinge next to its upper limit (a limit row).
Scene body_on_plane(GeomType shape, ContactModel contact) {
  ModelBuilder b;
  GeomSpec plane, body;
  plane.type = GeomType::Plane;
  body.type = shape;
  body.size = shape == GeomType::Box ? Vector3<double>(0.1, 0.08, 0.05) : Vector3<double>(0.05, 0, 0);
  b.add_link({"world", std::nullopt, {}, {plane}});
  b.add_link({"box", Inertia<double>(1.0, Vector3<double>::Zero(), Matrix3<double>::Identity() * 4e-3), {}, {body}});
  JointSpec free;
  free.name = "free";
  free.type = JointType::Free;
  free.parent = "world";
  free.child = "box";
  b.add_joint(free);
  b.add_link({"arm", Inertia<double>(0.5, Vector3<double>(0.1, 0, 0), Matrix3<double>::Identity() * 1e-3), {}, {}});
  JointSpec hinge;
  hinge.name = "hinge";
  hinge.type = JointType::Revolute;
  hinge.parent = "box";
  hinge.child = "arm";
  hinge.axis = Vector3<double>(0, 1, 0);
  hinge.lower = -0.2;
  hinge.upper = 0.2;
  b.add_joint(hinge);
  Scene s{shape == GeomType::Box ? "box" : "sphere", b.build(), {}, shape == GeomType::Box ? 4 : 1};
  s.model.contact.model = contact;
  s.q = neutral_configuration<double>(s.model);
  s.q[2] = 0.05 - 1e-4;        // resting, slightly deep
  s.q[s.model.nq - 1] = 0.19;  // the arm next to its upper limit
  return s;
}

// laikago (a free base and 12 hinges) standing on its four toe spheres.
Scene laikago_standing(ContactModel contact) {
  test::LaikagoScene s = test::laikago_standing(contact);
  return Scene{"laikago", std::move(s.model), std::move(s.q), 4};
}

// The laikago with a position servo on each hinge (ctrl and force clamped), inside the step.
Scene laikago_with_servos(ContactModel contact) {
  Scene s = laikago_standing(contact);
  s.name = "laikago with servos";
  for (int j = 0; j < s.model.nbodies(); ++j) {
    if (s.model.joint_nv(j) != 1) continue;
    Actuator a;
    a.name = s.model.joint_names[j];
    a.kind = ActuatorKind::Position;
    a.joint = j;
    a.gain = Vector3<double>(40, 0, 0), a.bias = Vector3<double>(0, -40, -2);
    a.ctrl_limited = true, a.ctrl_lower = -1, a.ctrl_upper = 1;
    a.force_limited = true, a.force_lower = -20, a.force_upper = 20;
    s.model.actuators.push_back(a);
  }
  return s;
}

// The same with networks inside the dynamics (model/network.hpp): one fed every hinge's position and
// velocity and two controls, driving every hinge, and a drag wrench on the base.
Scene laikago_with_a_network(ContactModel contact) {
  Scene s = laikago_with_servos(contact);
  s.name = "laikago with servos and a network";
  NetworkSpec spec;
  spec.name = "residual";
  int controls = 0;
  for (const std::string& name : network_inputs(s.model, "joint_force"))
    if (name.find(".ctrl") == std::string::npos || controls++ < 2) spec.inputs.push_back(name);
  spec.hidden = {16, 8};
  spec.zero_last_layer = false;
  s.model = with_network(s.model, spec);
  // and a wrench on the base from its pose and velocity (body_wrench: kinematics inside the stage)
  NetworkSpec drag;
  drag.name = "drag";
  drag.site = "body_wrench";
  drag.body = s.model.body_names[0];
  drag.inputs = {"vel.lin.x", "vel.lin.z", "vel.ang.y", "rot[2,2]", "pos.z"};
  drag.hidden = {8};
  drag.zero_last_layer = false;
  s.model = with_network(s.model, drag);
  return s;
}

// After a first call of each (which sizes the workspaces), no call allocates: at the same state, and
// one step later with the same contact count (where PGS's active-set system may change between
// regular and singular).
void expect_no_allocations(const Scene& scene) {
  const Model& m = scene.model;
  Data d(m);
  Eigen::VectorXd q = scene.q, v(m.nv);
  for (int i = 0; i < m.nv; ++i) v[i] = 0.01 * std::sin(1.0 + i);  // a little motion: friction rows at work
  const Eigen::VectorXd tau = Eigen::VectorXd::Zero(m.nv);
  const double dt = 1e-3;
  Eigen::VectorXd q_next(m.nq), v_next(m.nv), q_bar(m.nq), v_bar(m.nv), tau_bar(m.nv);
  const Eigen::VectorXd q_next_bar = Eigen::VectorXd::Ones(m.nq), v_next_bar = Eigen::VectorXd::Ones(m.nv);
  Eigen::MatrixXd A(2 * m.nv, 2 * m.nv), B(2 * m.nv, m.nv), B_ctrl(2 * m.nv, m.nu());
  // the actuators' controls (none without actuators)
  Eigen::VectorXd ctrl(m.nu()), ctrl_bar(m.nu());
  for (int k = 0; k < m.nu(); ++k) ctrl[k] = 0.1 * std::cos(1.0 + k);
  ModelTangent tangent(m);
  auto call_step = [&] { step<double>(m, d, q, v, tau, ctrl, dt, Integrator::SemiImplicitEuler, q_next, v_next); };
  auto call_vjp = [&] {
    step_vjp<double>(m, d, q, v, tau, ctrl, dt, Integrator::SemiImplicitEuler, q_next_bar, v_next_bar, q_bar, v_bar,
                     tau_bar, ctrl_bar, tangent);
  };
  auto call_jacobian = [&] { step_jacobian(m, d, q, v, tau, ctrl, dt, Integrator::SemiImplicitEuler, A, B, B_ctrl); };
  call_step(), call_vjp(), call_jacobian();  // sizes the workspaces for this contact count
  for (int state = 0; state < 2; ++state) {
    SCOPED_TRACE(state == 0 ? "the sizing call's state" : "one step later");
    EXPECT_EQ(allocations_in(call_step), 0) << "step";
    if (m.contact.model != ContactModel::None) EXPECT_EQ(d.ncontacts, scene.contacts);
    EXPECT_EQ(allocations_in(call_vjp), 0) << "step_vjp";
    EXPECT_EQ(allocations_in(call_jacobian), 0) << "step_jacobian";
    q = q_next, v = v_next;
  }
}

// The counter itself: an allocation the compiler cannot elide is seen (else every "0" below
// would hold trivially, e.g. in a build whose malloc the interposition does not reach).
TEST(StepAllocations, TheCounterSeesAnAllocation) {
#if defined(__GLIBC__) || defined(GRADYN_SANITIZER_MALLOC)
  static std::vector<double>* volatile escaped = nullptr;
  EXPECT_GE(allocations_in([] { escaped = new std::vector<double>(1000, 1.0); }), 1);
  delete escaped;
#else
  GTEST_SKIP() << "allocations are counted on glibc or under a sanitizer only";
#endif
}

TEST(StepAllocations, NoneAfterTheFirstStep) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "counts allocations by interposing glibc's malloc";
#endif
  for (ContactModel contact : {ContactModel::None, ContactModel::Penalty, ContactModel::Pgs, ContactModel::Ipm}) {
    for (PgsGradient gradient : {PgsGradient::Implicit, PgsGradient::Sweeps}) {
      if (gradient == PgsGradient::Sweeps && contact != ContactModel::Pgs) continue;
      SCOPED_TRACE(std::string(contact_model_name(contact)) +
                   (gradient == PgsGradient::Sweeps ? " (sweeps gradient)" : ""));
      for (Scene scene : {body_on_plane(GeomType::Box, contact), body_on_plane(GeomType::Sphere, contact),
                          laikago_standing(contact), laikago_with_servos(contact), laikago_with_a_network(contact)}) {
        SCOPED_TRACE(scene.name);
        scene.model.contact.pgs_gradient = gradient;
        expect_no_allocations(scene);
      }
    }
  }
}

// A chain of 150 hinges without contact: more dofs than step_jacobian once kept on the stack.
TEST(StepAllocations, NoneOnALongChain) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "counts allocations by interposing glibc's malloc";
#endif
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, {}});
  std::string parent = "world";
  for (int i = 0; i < 150; ++i) {
    const std::string link = "link" + std::to_string(i);
    b.add_link({link, Inertia<double>(0.1, Vector3<double>(0.05, 0, 0), Matrix3<double>::Identity() * 1e-4), {}, {}});
    JointSpec hinge;
    hinge.name = "hinge" + std::to_string(i);
    hinge.type = JointType::Revolute;
    hinge.parent = parent;
    hinge.child = link;
    hinge.axis = i % 2 == 0 ? Vector3<double>(0, 1, 0) : Vector3<double>(1, 0, 0);
    hinge.origin.p = Vector3<double>(i == 0 ? 0.0 : 0.1, 0, 0);
    b.add_joint(hinge);
    parent = link;
  }
  Scene s{"chain", b.build(), {}, 0};
  s.q = Eigen::VectorXd::Constant(s.model.nq, 0.1);
  ASSERT_GT(s.model.nv, 128);
  expect_no_allocations(s);
}

}  // namespace
}  // namespace gradyn
