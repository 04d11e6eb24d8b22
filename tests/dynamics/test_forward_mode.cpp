// Forward-mode AD (Eigen's AutoDiffScalar) through ABA agrees with central finite differences.
#include <gtest/gtest.h>

#include "../support/random_model.hpp"
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {
namespace {

// d aba / d (dq, v, tau), with q perturbed on the manifold: q (+) dq. Forward mode, in chunks
// of kADChunk input directions per pass.
Eigen::MatrixXd aba_jacobian_ad(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                const Eigen::VectorXd& tau) {
  const int nv = model.nv, n = 3 * nv;
  const ModelTpl<ADScalar> ad_model = model.cast<ADScalar>();
  DataTpl<ADScalar> ad_data(ad_model);
  Eigen::MatrixXd J(nv, n);
  for (int first = 0; first < n; first += kADChunk) {
    auto slot = [&](int input) { return input >= first && input < first + kADChunk ? input - first : -1; };
    VectorX<ADScalar> dq(nv), ad_v(nv), ad_tau(nv), ad_q0(model.nq), ad_q(model.nq);
    for (int k = 0; k < nv; ++k) {
      dq[k] = ad_seed(0.0, slot(k));
      ad_v[k] = ad_seed(v[k], slot(nv + k));
      ad_tau[k] = ad_seed(tau[k], slot(2 * nv + k));
    }
    for (int k = 0; k < model.nq; ++k) ad_q0[k] = ad_seed(q[k], -1);
    integrate<ADScalar>(ad_model, ad_q0, dq, ad_q);
    const VectorX<ADScalar> a = aba<ADScalar>(ad_model, ad_data, ad_q, ad_v, ad_tau);
    for (int i = 0; i < nv; ++i)
      for (int c = first; c < std::min(n, first + kADChunk); ++c) J(i, c) = a[i].derivatives()[c - first];
  }
  return J;
}

Eigen::MatrixXd aba_jacobian_fd(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                const Eigen::VectorXd& tau, double h) {
  const int nv = model.nv;
  Data data(model);
  Eigen::MatrixXd J(nv, 3 * nv);
  Eigen::VectorXd qp(model.nq), qm(model.nq);
  for (int k = 0; k < 3 * nv; ++k) {
    Eigen::VectorXd dq = Eigen::VectorXd::Zero(nv), dv = dq, dt = dq;
    (k < nv ? dq : k < 2 * nv ? dv : dt)[k % nv] = h;
    integrate<double>(model, q, dq, qp);
    integrate<double>(model, q, -dq, qm);
    const Eigen::VectorXd ap = aba<double>(model, data, qp, v + dv, tau + dt);
    const Eigen::VectorXd am = aba<double>(model, data, qm, v - dv, tau - dt);
    J.col(k) = (ap - am) / (2 * h);
  }
  return J;
}

TEST(ForwardMode, AbaMatchesCentralDifferences) {
  for (unsigned seed : {11u, 12u, 13u}) {
    const bool floating = seed == 12u;
    Model model = test::random_model(6, seed, floating, true);
    std::mt19937 rng(seed);
    const Eigen::VectorXd q = test::random_configuration(model, rng);
    const Eigen::VectorXd v = test::random_vector(model.nv, rng);
    const Eigen::VectorXd tau = test::random_vector(model.nv, rng);
    const Eigen::MatrixXd Jad = aba_jacobian_ad(model, q, v, tau);
    const Eigen::MatrixXd Jfd = aba_jacobian_fd(model, q, v, tau, 1e-6);
    const double scale = 1.0 + Jad.cwiseAbs().maxCoeff();
    EXPECT_LE((Jad - Jfd).cwiseAbs().maxCoeff() / scale, 1e-6) << "seed " << seed;
  }
}

}  // namespace
}  // namespace gradyn
