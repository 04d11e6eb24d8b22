// Reverse mode of ABA by the implicit function theorem (the design brief's "one neat route", docs/references.md): ABA solves
// rnea(q, v, a, model) = tau for a, so with mu = M^-1 ddq_bar,
//   tau_bar += mu,   (q, v, model)_bar -= mu^T d rnea / d(q, v, model)   at the computed a,
// i.e. one O(n) solve with the factorisation ABA already left in data, and one rnea_vjp.
//
// What "the gradient" means off the manifold: ABA (world frame) and RNEA (body frame) compute the
// same function wherever the rotations are orthogonal. q: joint_transform reads quaternions
// normalised, so every q gives orthogonal rotations and the q adjoints are exact in every ambient
// direction (a quaternion's adjoint has no component along itself, since scaling it changes
// nothing). The model fields are used raw, so their adjoints (ModelTangent) are exact for every
// perturbation that keeps the model valid: revolute axes along the unit sphere, placement
// rotations along SO(3), symmetric inertia changes. In the other directions (e.g. scaling
// model.joint_axis) they are the derivatives of M^-1 (tau - b) with M and b from the body-frame
// RNEA, which ABA's world-frame arithmetic does not reproduce off the manifold. The flat parameter
// vector only makes valid models (with_params normalises axes, builds R from rpy and inertias
// symmetric), so params_gradient is exact in every direction of its entries.
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/rnea.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

// ABA's passes 2 and 3 with no velocity terms, no gravity and tau := b, on the articulated
// inertias (U = Ia S, D^-1) of the last aba call: x = M^-1 b.
template <class S>
void minv_solve(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& b, VecOut<S> x) {
  check_size("b", b.size(), model.nv);
  check_size("x", x.size(), model.nv);
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) data.minv_pA[i].setZero();
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    const int p = model.parent[i];
    if (nvi == 1) {
      const S u = b[iv] - data.oS[i].col(0).dot(data.minv_pA[i]);
      data.minv_u[i](0) = u;
      if (p >= 0) data.minv_pA[p] += data.minv_pA[i] + data.U[i].col(0) * (data.Dinv[i](0, 0) * u);
    } else {  // the products into fixed-capacity vectors: no heap temporaries
      auto& u = data.minv_u[i];
      u = b.segment(iv, nvi);
      u.noalias() -= data.oS[i].transpose() * data.minv_pA[i];
      if (p >= 0) {
        typename DataTpl<S>::VectorDof Dinv_u;
        Dinv_u.noalias() = data.Dinv[i] * u;
        Vector6<S> passed = data.minv_pA[i];
        passed.noalias() += data.U[i] * Dinv_u;
        data.minv_pA[p] += passed;
      }
    }
  }
  for (int i = 0; i < nb; ++i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    const int p = model.parent[i];
    Vector6<S>& acc = data.minv_a[i];
    if (p >= 0)
      acc = data.minv_a[p];
    else
      acc.setZero();
    if (nvi == 1) {
      const S xi = data.Dinv[i](0, 0) * (data.minv_u[i](0) - data.U[i].col(0).dot(acc));
      x[iv] = xi;
      acc += data.oS[i].col(0) * xi;
    } else {
      typename DataTpl<S>::VectorDof r = data.minv_u[i];
      r.noalias() -= data.U[i].transpose() * acc;
      auto xi = x.segment(iv, nvi);
      xi.noalias() = data.Dinv[i] * r;
      acc.noalias() += data.oS[i] * xi;
    }
  }
}

template <class S>
void aba_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
             const VecRef<S>& ddq_bar, VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> tau_bar,
             ModelTangentTpl<S>& model_bar, bool forward_is_current) {
  check_size("ddq_bar", ddq_bar.size(), model.nv);
  check_size("tau_bar", tau_bar.size(), model.nv);
  if (!forward_is_current) aba<S>(model, data, q, v, tau);
  minv_solve<S>(model, data, ddq_bar, data.adj_mu);
  tau_bar += data.adj_mu;
  data.adj_tau = -data.adj_mu;
  data.adj_ddq.setZero();  // d rnea / d a = M: its adjoint is not needed
  rnea_vjp<S>(model, data, q, v, data.ddq, data.adj_tau, q_bar, v_bar, data.adj_ddq, model_bar);
}

#define GRADYN_INSTANTIATE(S)                                                                                  \
  template void minv_solve<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, VecOut<S>);                   \
  template void aba_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, \
                           const VecRef<S>&, VecOut<S>, VecOut<S>, VecOut<S>, ModelTangentTpl<S>&, bool);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
