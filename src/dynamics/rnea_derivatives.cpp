// Derivation (world frame, motion vectors [angular; linear] about the world origin, x the motion
// cross product, x* the force cross product, composite sums over the subtree of body b written _b).
//
// rnea in the world frame: V_i = V_p + S_i v_i, A_i = A_p + S_i a_i + V_i x S_i v_i (A of the world
// = -g), F_i = I_i A_i + V_i x* I_i V_i, tau_i = S_i^T Fc_i with Fc_i the sum of F over the subtree.
//
// Configuration. Moving joint j along column k moves its whole subtree by the world twist
// xi = S_jk: every quantity attached to a moved body is carried (d m = xi x m, d f = xi x* f,
// d I = xi x* I - I xi x), and carried quantities contribute nothing to tau, because
// (xi x s)^T f + s^T (xi x* f) = 0. What is not carried: the parent's motion, seen from the moved
// subtree. For b in the subtree, with nu = xi x V_p and alpha = xi x A_p (p = parent of j):
//   d V_b = xi x V_b - nu,   d A_b = xi x A_b - alpha - nu x (V_b - V_p),
// and the body force changes by its carried part plus
//   R_b = -I_b (alpha + V_p x nu) - B_b nu,   B_b nu = I_b (nu x V_b) + nu x* (I_b V_b) + V_b x* (I_b nu).
// Hence, with P_b = Ic_b S_b and Q_b = Bc_b^T S_b,
//   b in the subtree of j:  d tau_b = -(P_b^T (alpha + V_p x nu) + Q_b^T nu)
//   b an ancestor of j:     d tau_b = S_b^T (xi x* Fc_j - Ic_j (alpha + V_p x nu) - Bc_j nu).
// Velocity. d V_b / d v_jk = xi for b in the subtree, and d A_b = xi x (V_b - V_p - V_j), so
//   b in the subtree of j:  d tau_b = Q_b^T xi - P_b^T (xi x (V_p + V_j))
//   b an ancestor of j:     d tau_b = S_b^T (Bc_j xi - Ic_j (xi x (V_p + V_j))).
// The joint-space inertia comes with it: M_bj = S_b^T P_j for b = j or an ancestor of j.
#include "gradyn/dynamics/rnea_derivatives.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"

namespace gradyn {

namespace {
// The matrix of x -> x x* f (for the force f = [n; f]): [[-[n], -[f]], [-[f], 0]].
template <class S>
Matrix6<S> force_cross_matrix_of(const Vector6<S>& f) {
  Matrix6<S> m;
  const Matrix3<S> n = skew<S>(Vector3<S>(f.template head<3>())), l = skew<S>(Vector3<S>(f.template tail<3>()));
  m << -n, -l, -l, Matrix3<S>::Zero();
  return m;
}

// B = V x* I - I V x + (I V)-bar: d/d nu of I (nu x V) + nu x* (I V) + V x* (I nu) is B - hence
// the sign of the first term, I (nu x V) = -I (V x nu). As V x = -(V x*)^T and I is symmetric,
// V x* I - I V x = C + C^T with C = (V x*) I: one product.
template <class S>
Matrix6<S> velocity_variation(const Matrix6<S>& I, const Vector6<S>& V) {
  const Matrix3<S> w = skew<S>(Vector3<S>(V.template head<3>())), u = skew<S>(Vector3<S>(V.template tail<3>()));
  Matrix6<S> C;
  C.template topRows<3>().noalias() = w * I.template topRows<3>() + u * I.template bottomRows<3>();
  C.template bottomRows<3>().noalias() = w * I.template bottomRows<3>();
  Matrix6<S> B = force_cross_matrix_of<S>(Vector6<S>(I * V));
  B += C;
  B += C.transpose();
  return B;
}
}  // namespace

template <class S>
void rnea_derivatives(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                      const VecRef<S>& a, Eigen::Ref<MatrixX<S>> dtau_dq, Eigen::Ref<MatrixX<S>> dtau_dv) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("a", a.size(), model.nv);
  if (dtau_dq.rows() != model.nv || dtau_dq.cols() != model.nv || dtau_dv.rows() != model.nv ||
      dtau_dv.cols() != model.nv)
    throw ArgumentError("rnea_derivatives: dtau_dq and dtau_dv must be " + std::to_string(model.nv) + " x " +
                        std::to_string(model.nv));
  const int nb = model.nbodies();
  const Vector6<S> a_world = detail::world_acceleration(model);

  // Forward: world poses, velocities, accelerations, inertias and body forces.
  for (int i = 0; i < nb; ++i) {
    detail::world_body_pose(model, data, q, i);
    const int p = model.parent[i], iv = model.idx_v[i], nvi = model.joint_nv(i);
    const Vector6<S> vj = data.oS[i] * v.segment(iv, nvi);
    data.ov[i] = p >= 0 ? Vector6<S>(data.ov[p] + vj) : vj;
    data.oa[i] = (p >= 0 ? data.oa[p] : a_world) + cross_motion<S>(data.ov[i], vj) + data.oS[i] * a.segment(iv, nvi);
    data.oI[i] = detail::world_inertia(model.body_inertia[i], data.oMi[i]);
    data.oIc[i] = data.oI[i];
    data.deriv_Bc[i] = velocity_variation<S>(data.oI[i], data.ov[i]);
    data.deriv_Fc[i] = data.oI[i] * data.oa[i] + cross_force<S>(data.ov[i], Vector6<S>(data.oI[i] * data.ov[i]));
  }
  // Backward: subtree sums, then P, Q and M.
  for (int i = nb - 1; i >= 0; --i) {
    const int p = model.parent[i];
    if (p >= 0) {
      data.oIc[p] += data.oIc[i];
      data.deriv_Bc[p] += data.deriv_Bc[i];
      data.deriv_Fc[p] += data.deriv_Fc[i];
    }
  }
  for (int j = 0; j < nb; ++j) {
    const int jv = model.idx_v[j], nvj = model.joint_nv(j);
    if (nvj == 1) {  // fast path: fixed-size products for the 1-DoF joints
      const Vector6<S> s_j = data.oS[j].col(0);
      const Vector6<S> P = data.oIc[j] * s_j;
      data.deriv_P[j].col(0) = P;
      data.deriv_Q[j].col(0).noalias() = data.deriv_Bc[j].transpose() * s_j;
      data.M(jv, jv) = s_j.dot(P) + model.armature[jv];
      for (int b = model.parent[j]; b >= 0; b = model.parent[b]) {
        const int bv = model.idx_v[b];
        for (int m = 0; m < model.joint_nv(b); ++m) data.M(bv + m, jv) = data.M(jv, bv + m) = data.oS[b].col(m).dot(P);
      }
      continue;
    }
    data.deriv_P[j].noalias() = data.oIc[j] * data.oS[j];
    data.deriv_Q[j].noalias() = data.deriv_Bc[j].transpose() * data.oS[j];
    data.M.block(jv, jv, nvj, nvj).noalias() = data.oS[j].transpose() * data.deriv_P[j];
    for (int k = 0; k < nvj; ++k) data.M(jv + k, jv + k) += model.armature[jv + k];
    for (int b = model.parent[j]; b >= 0; b = model.parent[b]) {
      const int bv = model.idx_v[b], nvb = model.joint_nv(b);
      data.M.block(bv, jv, nvb, nvj).noalias() = data.oS[b].transpose() * data.deriv_P[j];
      data.M.block(jv, bv, nvj, nvb) = data.M.block(bv, jv, nvb, nvj).transpose();
    }
  }

  dtau_dq.setZero();
  dtau_dv.setZero();
  for (int j = 0; j < nb; ++j) {
    const int p = model.parent[j], jv = model.idx_v[j], nvj = model.joint_nv(j);
    for (int b = 0; b < nb; ++b)
      data.deriv_in_subtree[b] = b == j || (b > j && model.parent[b] >= 0 && data.deriv_in_subtree[model.parent[b]]);
    const Vector6<S> Vp = p >= 0 ? data.ov[p] : Vector6<S>::Zero();
    const Vector6<S>& Ap = p >= 0 ? data.oa[p] : a_world;
    const Vector6<S> Vpj = Vp + data.ov[j];
    for (int k = 0; k < nvj; ++k) {
      const int c = jv + k;
      const Vector6<S> xi = data.oS[j].col(k);
      const Vector6<S> nu = cross_motion<S>(xi, Vp);
      const Vector6<S> w = cross_motion<S>(xi, Ap) + cross_motion<S>(Vp, nu);
      const Vector6<S> u = cross_motion<S>(xi, Vpj);
      for (int b = j; b < nb; ++b) {
        if (!data.deriv_in_subtree[b]) continue;
        const int bv = model.idx_v[b];
        for (int m = 0; m < model.joint_nv(b); ++m) {
          dtau_dq(bv + m, c) = -(data.deriv_P[b].col(m).dot(w) + data.deriv_Q[b].col(m).dot(nu));
          dtau_dv(bv + m, c) = data.deriv_Q[b].col(m).dot(xi) - data.deriv_P[b].col(m).dot(u);
        }
      }
      if (p < 0) continue;
      const Vector6<S> fq =
          cross_force<S>(xi, data.deriv_Fc[j]) - data.oIc[j] * w - data.deriv_Bc[j] * nu;
      const Vector6<S> fv = data.deriv_Bc[j] * xi - data.oIc[j] * u;
      for (int b = p; b >= 0; b = model.parent[b]) {
        const int bv = model.idx_v[b];
        for (int m = 0; m < model.joint_nv(b); ++m) {
          dtau_dq(bv + m, c) = data.oS[b].col(m).dot(fq);
          dtau_dv(bv + m, c) = data.oS[b].col(m).dot(fv);
        }
      }
    }
  }
}

template void rnea_derivatives<double>(const Model&, Data&, const VecRef<double>&, const VecRef<double>&,
                                       const VecRef<double>&, Eigen::Ref<MatrixX<double>>, Eigen::Ref<MatrixX<double>>);

}  // namespace gradyn
