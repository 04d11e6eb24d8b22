// Bitwise references: the laikago in contact, rolled out under each contact model, with the
// reverse pass and the step Jacobian, hashed bit for bit. A change meant to leave behaviour alone
// (a refactoring, a faster kernel that claims identical results) must leave every hash as it is.
// When a change is meant to alter results, it updates the hashes here and says why in its commit.
//
// The hashes hold for this compiler and its flags (x86-64 baseline, no -march=native, no
// -ffast-math); -0.0 is hashed as +0.0, the only difference in bits that means nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>

#include "../support/laikago_scene.hpp"
#include "gradyn/collision/collide.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn {
namespace {

// FNV-1a over the bits of each double.
struct BitHash {
  std::uint64_t h = 1469598103934665603ull;
  void add(double x) {
    if (x == 0.0) x = 0.0;  // -0.0 -> +0.0
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    for (int b = 0; b < 8; ++b) {
      h ^= (bits >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  template <class Derived>
  void add(const Eigen::DenseBase<Derived>& m) {
    for (Eigen::Index r = 0; r < m.rows(); ++r)
      for (Eigen::Index c = 0; c < m.cols(); ++c) add(static_cast<double>(m(r, c)));
  }
};

std::string hex(std::uint64_t h) {
  char s[19];
  std::snprintf(s, sizeof s, "0x%016llx", static_cast<unsigned long long>(h));
  return s;
}

struct Hashes {
  std::uint64_t rollout, status, gradient, jacobian;
};

// 300 steps of 1 ms from the standing pose with a small initial velocity and sinusoidal hip and
// knee torques (the legs push, lift and land: contacts come and go); then the gradient of a loss
// on the whole trajectory and the step Jacobian at step 100.
Hashes run(ContactModel contact, Integrator integrator, int& steps_in_contact) {
  test::LaikagoScene scene = test::laikago_standing(contact);
  const Model& m = scene.model;
  Data data(m);
  const int T = 300;
  const double dt = 1e-3;
  Eigen::VectorXd v0(m.nv);
  for (int i = 0; i < m.nv; ++i) v0[i] = 0.1 * std::sin(1.0 + i);
  MatrixXr<double> taus = MatrixXr<double>::Zero(T, m.nv);
  for (int t = 0; t < T; ++t)
    for (int i = 6; i < m.nv; ++i) taus(t, i) = 8.0 * std::sin(0.03 * t + 0.7 * i);

  Hashes out{};
  MatrixXr<double> qs, vs;
  std::vector<std::uint32_t> status(T);
  rollout<double>(m, data, scene.q, v0, taus, dt, integrator, qs, vs, status);
  BitHash h;
  h.add(qs);
  h.add(vs);
  out.rollout = h.h;
  BitHash hs;
  for (std::uint32_t s : status) hs.add(static_cast<double>(s));
  out.status = hs.h;
  steps_in_contact = 0;  // states of the rollout with at least one contact
  if (contact != ContactModel::None) {
    Data probe(m);
    for (int t = 0; t <= T; ++t) {
      forward_kinematics<double>(m, probe, qs.row(t).transpose());
      collide<double>(m, probe, m.contact.margin);
      steps_in_contact += probe.ncontacts > 0;
    }
  }

  MatrixXr<double> qs_bar(T + 1, m.nq), vs_bar(T + 1, m.nv);
  for (Eigen::Index i = 0; i < qs_bar.size(); ++i) qs_bar.data()[i] = std::cos(0.1 * i);
  for (Eigen::Index i = 0; i < vs_bar.size(); ++i) vs_bar.data()[i] = 0.01 * std::sin(0.2 * i);
  Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(m.nq), v0_bar = Eigen::VectorXd::Zero(m.nv);
  MatrixXr<double> taus_bar = MatrixXr<double>::Zero(T, m.nv);
  ModelTangent tangent(m);
  Data fresh(m);
  rollout_vjp<double>(m, fresh, scene.q, v0, taus, dt, integrator, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar, tangent);
  BitHash hg;
  hg.add(q0_bar);
  hg.add(v0_bar);
  hg.add(taus_bar);
  hg.add(params_gradient<double>(m, tangent));
  out.gradient = hg.h;

  if (integrator == Integrator::SemiImplicitEuler) {
    Eigen::MatrixXd A(2 * m.nv, 2 * m.nv), B(2 * m.nv, m.nv);
    step_jacobian(m, fresh, qs.row(100).transpose(), vs.row(100).transpose(), taus.row(100).transpose(), dt,
                  integrator, A, B);
    BitHash hj;
    hj.add(A);
    hj.add(B);
    out.jacobian = hj.h;
  }
  return out;
}

struct Reference {
  const char* name;
  ContactModel contact;
  Integrator integrator;
  Hashes expected;
};

void PrintTo(const Reference& ref, std::ostream* os) { *os << ref.name; }

class ReferenceTrajectories : public ::testing::TestWithParam<Reference> {};

TEST_P(ReferenceTrajectories, BitwiseUnchanged) {
  const Reference& ref = GetParam();
  int steps_in_contact = 0;
  const Hashes got = run(ref.contact, ref.integrator, steps_in_contact);
  // The scene must exercise contact: the toes press, lift and land.
  if (ref.contact != ContactModel::None) {
    EXPECT_GT(steps_in_contact, 0);
    EXPECT_LT(steps_in_contact, 301);
  }
  SCOPED_TRACE("this build's hashes: {" + hex(got.rollout) + ", " + hex(got.status) + ", " + hex(got.gradient) +
               ", " + hex(got.jacobian) + "}");
  EXPECT_EQ(hex(got.rollout), hex(ref.expected.rollout)) << "rollout (qs, vs)";
  EXPECT_EQ(hex(got.status), hex(ref.expected.status)) << "per-step status";
  EXPECT_EQ(hex(got.gradient), hex(ref.expected.gradient)) << "rollout_vjp (q0, v0, taus, params)";
  EXPECT_EQ(hex(got.jacobian), hex(ref.expected.jacobian)) << "step_jacobian (A, B) at step 100";
}

// Recorded at c8ac59c, before the constraint stage was reshaped. Re-recorded for issue 24's faster
// kernels (bits only, the per-step statuses are unchanged): an axis-aligned revolute joint now rotates
// its placement's columns (Pinocchio's RX/RY/RZ) instead of multiplying by I + s K + (1 - c) K K, and
// CRBA sums composite inertias in ten numbers, so the poses, M and everything after them round differently.
// Re-recorded again for issue 24/17's kernels (bits only; statuses unchanged): a body's world inertia
// fills the upper triangle of R Ic R^T and mirrors it (M rounds differently: the ipm rollout), and
// a sphere's contact with a plane is differentiated in closed form instead of forward-mode AD (the
// gradients of every contact model; tests/collision/test_collide_vjp.cpp checks the two agree).
// Re-recorded for issue 24's interior-point kernel (ipm only, bits only; statuses unchanged): the
// solver's step length nears the boundary once sigma -> 0, it starts from s = z (reusing the start's
// factorisation), factors M without fill-in on the tree (LTL), and floors D in the backward
// factorisation; the iterates, and the point where it stops below ipm_tolerance (now 1e-11), change.
// Re-recorded for issue 24's CRBA (ipm only, bits only; statuses unchanged): a body's world inertia
// fills the upper triangle of T R^T (T = R Ic) two rows at a time, so M rounds differently.
INSTANTIATE_TEST_SUITE_P(
    Laikago, ReferenceTrajectories,
    ::testing::Values(
        Reference{"none", ContactModel::None, Integrator::SemiImplicitEuler,
                  {0xe0d728c012acf48e, 0x040bcdcd5c103403, 0x11f51e98c60ad0bf, 0x31f5712b0d2e93cf}},
        Reference{"none_rk4", ContactModel::None, Integrator::RK4,
                  {0xa9a69550ba8c9c0c, 0x040bcdcd5c103403, 0x17f7880d0974feaf, 0x0000000000000000}},
        Reference{"penalty", ContactModel::Penalty, Integrator::SemiImplicitEuler,
                  {0xaf30e15b23d8701e, 0x040bcdcd5c103403, 0xa03119e0a76a6978, 0x1644b22c79e255e2}},
        Reference{"penalty_rk4", ContactModel::Penalty, Integrator::RK4,
                  {0xb0991e8cda96b7b8, 0x040bcdcd5c103403, 0xb2e0aed0a5492e28, 0x0000000000000000}},
        Reference{"pgs", ContactModel::Pgs, Integrator::SemiImplicitEuler,
                  {0x65debee5230e52d7, 0xcfcc21bcbc036dc3, 0xe0a80fb59cb5880f, 0xf6bd997f0a563f6f}},
        Reference{"ipm", ContactModel::Ipm, Integrator::SemiImplicitEuler,
                  {0xdf5fe3c0b18c4a6f, 0x040bcdcd5c103403, 0x3e0cb82edc4da051, 0x4b6873bd73bdbdd5}}),
    [](const ::testing::TestParamInfo<Reference>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gradyn
