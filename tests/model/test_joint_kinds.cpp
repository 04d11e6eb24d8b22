// Every registered joint kind (joint.hpp, joints/<kind>.hpp) against its own definition: the
// manifold operations agree with each other, and each adjoint equals forward-mode AD of the kernel
// it reverses. The loop runs over for_each_joint_type, so a new kind is checked without a new test.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gradyn/autodiff.hpp"
#include "gradyn/model/joint.hpp"
#include "../support/ad_jacobian.hpp"

namespace gradyn {
namespace {

constexpr double kTol = 1e-11;

// A configuration on the joint's manifold: random coordinates, unit quaternions.
Eigen::VectorXd random_q(JointType t, std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 0.7);
  Eigen::VectorXd q(joint_nq(t));
  for (int k = 0; k < q.size(); ++k) q[k] = n(rng);
  joint_normalize<double>(t, q);
  return q;
}

Eigen::VectorXd random_vector(int size, std::mt19937& rng, double scale = 0.7) {
  std::normal_distribution<double> n(0.0, scale);
  Eigen::VectorXd x(size);
  for (int k = 0; k < size; ++k) x[k] = n(rng);
  return x;
}

std::string kind(JointType t) { return "joint kind '" + std::string(joint_type_name(t)) + "'"; }

TEST(JointKinds, RegistryNamesAreUniqueAndRoundTrip) {
  std::vector<std::string> names, urdf;
  for_each_joint_type([&](JointType t) {
    names.emplace_back(joint_type_name(t));
    if (!joint_urdf_type(t).empty()) urdf.emplace_back(joint_urdf_type(t));
    EXPECT_EQ(joint_subspace<double>(t, Vector3<double>::UnitX()).cols(), joint_nv(t)) << kind(t);
    EXPECT_GE(joint_nq(t), joint_nv(t)) << kind(t);
  });
  EXPECT_EQ(names.size(), static_cast<size_t>(kLastJointType) + 1);
  for (const auto* list : {&names, &urdf}) {
    std::vector<std::string> sorted = *list;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  }
}

TEST(JointKinds, IntegrateAndDifferenceAreInverse) {
  std::mt19937 rng(1);
  for_each_joint_type([&](JointType t) {
    const Eigen::VectorXd q = random_q(t, rng), d = random_vector(joint_nv(t), rng, 0.4);
    Eigen::VectorXd q1(joint_nq(t)), back(joint_nv(t)), q_zero(joint_nq(t));
    joint_integrate<double>(t, q, d, q1);
    joint_difference<double>(t, q, q1, back);
    EXPECT_LT((back - d).lpNorm<Eigen::Infinity>(), 1e-12) << kind(t);
    joint_integrate<double>(t, q, Eigen::VectorXd::Zero(joint_nv(t)), q_zero);
    EXPECT_LT((q_zero - q).lpNorm<Eigen::Infinity>(), 1e-15) << kind(t);
    Eigen::VectorXd neutral(joint_nq(t));
    joint_neutral<double>(t, neutral);
    const Pose<double> M = joint_transform<double>(t, Vector3<double>::UnitZ(), neutral);
    EXPECT_LT((M.R - Matrix3<double>::Identity()).norm() + M.p.norm(), 1e-15) << kind(t);
  });
}

// The subspace is the joint transform's derivative along a tangent step: M(q (+) e dv) ~ M(q) exp(e S dv).
TEST(JointKinds, SubspaceIsTheTransformsTangent) {
  std::mt19937 rng(2);
  for_each_joint_type([&](JointType t) {
    const Vector3<double> axis = random_vector(3, rng).normalized();
    const Eigen::VectorXd q = random_q(t, rng), dv = random_vector(joint_nv(t), rng);
    const double h = 1e-6;
    Eigen::VectorXd qp(joint_nq(t)), qm(joint_nq(t));
    joint_integrate<double>(t, q, h * dv, qp);
    joint_integrate<double>(t, q, -h * dv, qm);
    const Pose<double> M = joint_transform<double>(t, axis, q), Mp = joint_transform<double>(t, axis, qp),
                       Mm = joint_transform<double>(t, axis, qm);
    // body-frame twist of M: [w] = R^T dR, v = R^T dp
    const Matrix3<double> dR = (Mp.R - Mm.R) / (2 * h);
    const Vector3<double> dp = (Mp.p - Mm.p) / (2 * h);
    const Matrix3<double> W = M.R.transpose() * dR;
    Vector6<double> twist;
    twist << W(2, 1), W(0, 2), W(1, 0), M.R.transpose() * dp;
    const Vector6<double> expected = joint_subspace<double>(t, axis) * dv;
    EXPECT_LT((twist - expected).lpNorm<Eigen::Infinity>(), 1e-8) << kind(t);
  });
}

TEST(JointKinds, TransformAdjointEqualsForwardModeAD) {
  std::mt19937 rng(3);
  for_each_joint_type([&](JointType t) {
    const int nq = joint_nq(t);
    Eigen::VectorXd x(nq + 3);
    x << random_q(t, rng), random_vector(3, rng).normalized();
    x.head(nq) *= 1.3;  // off the unit sphere: quaternions are read normalised
    const Eigen::VectorXd Rb = random_vector(9, rng), pb = random_vector(3, rng);
    auto f = [&](const VectorX<ADScalar>& xa) {
      const Vector3<ADScalar> axis = xa.tail(3);
      const Pose<ADScalar> M = joint_transform<ADScalar>(t, axis, xa.head(nq));
      VectorX<ADScalar> out(12);
      for (int c = 0; c < 3; ++c)
        for (int r = 0; r < 3; ++r) out[3 * c + r] = M.R(r, c);
      out.tail(3) = M.p;
      return out;
    };
    const Eigen::MatrixXd J = test::ad_jacobian(f, x);
    Eigen::VectorXd out_bar(12);
    out_bar << Rb, pb;
    const Eigen::VectorXd expected = J.transpose() * out_bar;

    const Vector3<double> axis = x.tail(3);
    const Pose<double> M = joint_transform<double>(t, axis, x.head(nq));
    const Matrix3<double> R_bar = Eigen::Map<const Matrix3<double>>(Rb.data());
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(nq);
    Vector3<double> axis_bar = Vector3<double>::Zero();
    joint_transform_vjp<double>(t, axis, x.head(nq), M, R_bar, Vector3<double>(pb), q_bar, axis_bar);
    EXPECT_LT((q_bar - expected.head(nq)).lpNorm<Eigen::Infinity>(), kTol) << kind(t);
    EXPECT_LT((axis_bar - expected.tail(3)).lpNorm<Eigen::Infinity>(), kTol) << kind(t);
  });
}

TEST(JointKinds, IntegrateAdjointEqualsForwardModeAD) {
  std::mt19937 rng(4);
  for_each_joint_type([&](JointType t) {
    const int nq = joint_nq(t), nv = joint_nv(t);
    Eigen::VectorXd x(nq + nv);
    x << 1.2 * random_q(t, rng), random_vector(nv, rng);
    auto f = [&](const VectorX<ADScalar>& xa) {
      VectorX<ADScalar> out(nq);
      joint_integrate<ADScalar>(t, xa.head(nq), xa.tail(nv), out);
      return out;
    };
    const Eigen::VectorXd out_bar = random_vector(nq, rng);
    const Eigen::VectorXd expected = test::ad_jacobian(f, x).transpose() * out_bar;
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(nq), dv_bar = Eigen::VectorXd::Zero(nv);
    joint_integrate_vjp<double>(t, x.head(nq), x.tail(nv), out_bar, q_bar, dv_bar);
    EXPECT_LT((q_bar - expected.head(nq)).lpNorm<Eigen::Infinity>(), kTol) << kind(t);
    EXPECT_LT((dv_bar - expected.tail(nv)).lpNorm<Eigen::Infinity>(), kTol) << kind(t);
  });
}

TEST(JointKinds, DifferenceAdjointEqualsForwardModeAD) {
  std::mt19937 rng(5);
  for_each_joint_type([&](JointType t) {
    const int nq = joint_nq(t), nv = joint_nv(t);
    const Eigen::VectorXd q0 = random_q(t, rng);
    Eigen::VectorXd q1(nq);
    joint_integrate<double>(t, q0, random_vector(nv, rng, 0.5), q1);
    Eigen::VectorXd x(2 * nq);
    x << q0, q1;
    auto f = [&](const VectorX<ADScalar>& xa) {
      VectorX<ADScalar> d(nv);
      joint_difference<ADScalar>(t, xa.head(nq), xa.tail(nq), d);
      return d;
    };
    const Eigen::VectorXd d_bar = random_vector(nv, rng);
    const Eigen::VectorXd expected = test::ad_jacobian(f, x).transpose() * d_bar;
    Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(nq), q1_bar = Eigen::VectorXd::Zero(nq);
    joint_difference_vjp<double>(t, q0, q1, d_bar, q0_bar, q1_bar);
    EXPECT_LT((q0_bar - expected.head(nq)).lpNorm<Eigen::Infinity>(), kTol) << kind(t);
    EXPECT_LT((q1_bar - expected.tail(nq)).lpNorm<Eigen::Infinity>(), kTol) << kind(t);
  });
}

// tangent_vjp pulls a tangent adjoint g back to q: <q_bar, dq> = <g, dv> where dv is the tangent
// that dq moves q along (the derivative of difference(q, q + e dq)), on the manifold.
TEST(JointKinds, TangentAdjointPullsBackThroughDifference) {
  std::mt19937 rng(6);
  for_each_joint_type([&](JointType t) {
    const int nq = joint_nq(t), nv = joint_nv(t);
    const Eigen::VectorXd q = random_q(t, rng);
    auto f = [&](const VectorX<ADScalar>& xa) {
      VectorX<ADScalar> d(nv);
      joint_difference<ADScalar>(t, q.cast<ADScalar>().eval(), xa, d);
      return d;
    };
    const Eigen::MatrixXd dv_dq = test::ad_jacobian(f, q);  // nv x nq
    const Eigen::VectorXd g = random_vector(nv, rng);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(nq);
    joint_tangent_vjp<double>(t, Vector3<double>::UnitX(), q, g, q_bar);
    const Eigen::VectorXd expected = dv_dq.transpose() * g;
    EXPECT_LT((q_bar - expected).lpNorm<Eigen::Infinity>(), 1e-10) << kind(t);
  });
}

TEST(JointKinds, BracketAdjointEqualsForwardModeAD) {
  std::mt19937 rng(7);
  for_each_joint_type([&](JointType t) {
    const int nv = joint_nv(t);
    if (nv == 0) return;
    const Eigen::VectorXd x = random_vector(2 * nv, rng);
    auto f = [&](const VectorX<ADScalar>& xa) {
      VectorX<ADScalar> out(nv);
      joint_bracket<ADScalar>(t, xa.data(), xa.data() + nv, out.data());
      return out;
    };
    const Eigen::VectorXd o = random_vector(nv, rng);
    const Eigen::VectorXd expected = test::ad_jacobian(f, x).transpose() * o;
    Eigen::VectorXd x_bar = Eigen::VectorXd::Zero(2 * nv);
    joint_bracket_vjp<double>(t, x.data(), x.data() + nv, o.data(), x_bar.data(), x_bar.data() + nv);
    EXPECT_LT((x_bar - expected).lpNorm<Eigen::Infinity>(), kTol) << kind(t);
  });
}

TEST(JointKinds, AxisAdjointOfTheSubspaceEqualsForwardModeAD) {
  std::mt19937 rng(8);
  for_each_joint_type([&](JointType t) {
    if (!joint_has_axis(t)) return;
    ASSERT_EQ(joint_nv(t), 1) << kind(t) << ": an axis joint with more than one DoF needs its own check";
    const Eigen::VectorXd axis = random_vector(3, rng);
    auto f = [&](const VectorX<ADScalar>& xa) {
      return VectorX<ADScalar>(joint_subspace<ADScalar>(t, Vector3<ADScalar>(xa)).col(0));
    };
    const Vector6<double> s_bar = random_vector(6, rng);
    const Eigen::VectorXd expected = test::ad_jacobian(f, axis).transpose() * s_bar;
    EXPECT_LT((joint_subspace_axis_bar<double>(t, s_bar) - expected).lpNorm<Eigen::Infinity>(), kTol) << kind(t);
  });
}

TEST(JointKinds, LimitRateRowsAreTheCoordinateRates) {
  std::mt19937 rng(9);
  for_each_joint_type([&](JointType t) {
    if (!joint_has_limited_coordinates(t)) return;
    const int nq = joint_nq(t), nv = joint_nv(t);
    const Eigen::VectorXd q = random_q(t, rng), v = random_vector(nv, rng);
    Eigen::VectorXd qp(nq), qm(nq);
    const double h = 1e-6;
    joint_integrate<double>(t, q, h * v, qp);
    joint_integrate<double>(t, q, -h * v, qm);
    visit_joint(t, [&]<class J>(J) {
      for (int k = 0; k < nq; ++k) {
        const Vector3<double> r = J::template limit_rate_row<double>(q, k);
        EXPECT_NEAR(r.head(nv).dot(v), (qp[k] - qm[k]) / (2 * h), 1e-8) << kind(t) << " coordinate " << k;
        auto f = [&](const VectorX<ADScalar>& xa) {
          return VectorX<ADScalar>(J::template limit_rate_row<ADScalar>(xa, k));
        };
        const Vector3<double> r_bar = random_vector(3, rng);
        const Eigen::VectorXd expected = test::ad_jacobian(f, q).transpose() * r_bar;
        Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(nq);
        J::template limit_rate_row_vjp<double>(q, k, r_bar, q_bar);
        EXPECT_LT((q_bar - expected).lpNorm<Eigen::Infinity>(), kTol) << kind(t) << " coordinate " << k;
        if (!J::limit_rate_varies) EXPECT_EQ(expected.norm(), 0.0) << kind(t);
      }
    });
  });
}

}  // namespace
}  // namespace gradyn
