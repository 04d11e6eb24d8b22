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

#include <type_traits>

#include "gradyn/dynamics/detail/rnea_derivatives_passes.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"

namespace gradyn {

namespace detail {

namespace {
using Vec6 = Vector6<double>;
using Mat6 = Matrix6<double>;
using Mat3 = Matrix3<double>;

// The matrix of x -> x x* f (for the force f = [n; f]): [[-[n], -[f]], [-[f], 0]].
// Entry by entry, skipping the skew matrices' zeros (the same values as subtracting them).
void add_force_cross_matrix_of(const Vec6& f, Mat6& m) {
  auto subtract_skew = [&m](int r, int c, double x, double y, double z) {  // m(block) -= [(x, y, z)]x
    m(r, c + 1) += z;
    m(r, c + 2) -= y;
    m(r + 1, c) -= z;
    m(r + 1, c + 2) += x;
    m(r + 2, c) += y;
    m(r + 2, c + 1) -= x;
  };
  subtract_skew(0, 0, f[0], f[1], f[2]);
  subtract_skew(0, 3, f[3], f[4], f[5]);
  subtract_skew(3, 0, f[3], f[4], f[5]);
}

// cross_motion and cross_force (spatial.hpp), the same values (Eigen's cross expressions, entry by
// entry), forced inline: the compiler leaves the shared templates as calls, which cost ~10% of a
// step Jacobian (18 partials columns, four products each).
[[gnu::always_inline]] inline void cross3(const double* a, const double* b, double* out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

[[gnu::always_inline]] inline Vec6 crm(const Vec6& v, const Vec6& m) {
  Vec6 out;
  double t[3];
  cross3(v.data(), m.data(), out.data());             // w x m_angular
  cross3(v.data(), m.data() + 3, out.data() + 3);     // w x m_linear
  cross3(v.data() + 3, m.data(), t);                  // + v_linear x m_angular
  out[3] += t[0];
  out[4] += t[1];
  out[5] += t[2];
  return out;
}

[[gnu::always_inline]] inline Vec6 crf(const Vec6& v, const Vec6& f) {
  Vec6 out;
  double t[3];
  cross3(v.data(), f.data(), out.data());             // w x f_angular
  cross3(v.data() + 3, f.data() + 3, t);              // + v_linear x f_linear
  out[0] += t[0];
  out[1] += t[1];
  out[2] += t[2];
  cross3(v.data(), f.data() + 3, out.data() + 3);     // w x f_linear
  return out;
}
}  // namespace

// The three passes are flattened (every call inlined: world_body_pose, world_inertia, the joint
// transform, Pose products): the same arithmetic, ~3% of a step Jacobian in call overhead.

// B = V x* I - I V x + (I V)-bar: d/d nu of I (nu x V) + nu x* (I V) + V x* (I nu) is B - hence
// the sign of the first term, I (nu x V) = -I (V x nu). As V x = -(V x*)^T and I is symmetric,
// V x* I - I V x = C + C^T with C = (V x*) I, and (I V)-bar is linear in I V: the subtree sum of B
// is Cc + Cc^T + (hc)-bar with Cc and hc the subtree sums of C and of the momenta I V.
[[gnu::flatten]] void rnea_derivatives_kinematics(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                                 bool aba_is_current) {
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) {
    if (!aba_is_current) {  // else aba's pass 1 left these, computed by the same expressions
      world_body_pose(model, data, q, i);
      const int p = model.parent[i], iv = model.idx_v[i], nvi = model.joint_nv(i);
      const Vec6 vj = nvi == 1 ? Vec6(data.oS[i].col(0) * v[iv]) : Vec6(data.oS[i] * v.segment(iv, nvi));
      data.ov[i] = p >= 0 ? Vec6(data.ov[p] + vj) : vj;
      data.oc[i] = crm(data.ov[i], vj);
      data.oI[i] = world_inertia(model.body_inertia[i], data.oMi[i]);
    }
    const Vec6& V = data.ov[i];
    const Mat6& I = data.oI[i];
    const Vec6 h = I * V;
    data.deriv_hc[i] = h;
    data.deriv_fv[i] = crf(V, h);
    data.oIc[i] = I;
    // C = (V x*) I = [[w]x [u]x; 0 [w]x] I (w, u V's angular and linear parts), column by column
    // as cross products: the skew products' values without their zero terms.
    const Vector3<double> w = V.head<3>(), u = V.tail<3>();
    Mat6& C = data.deriv_Bc[i];
    for (int c = 0; c < 6; ++c) {
      const Vector3<double> top = I.col(c).head<3>(), bottom = I.col(c).tail<3>();
      C.col(c).head<3>() = w.cross(top) + u.cross(bottom);
      C.col(c).tail<3>() = w.cross(bottom);
    }
  }
  for (int i = nb - 1; i > 0; --i) {
    const int p = model.parent[i];
    if (p < 0) continue;
    data.oIc[p] += data.oIc[i];
    data.deriv_Bc[p] += data.deriv_Bc[i];
    data.deriv_hc[p] += data.deriv_hc[i];
  }
  for (int j = 0; j < nb; ++j) {
    Mat6& B = data.deriv_Bc[j];
    B += B.transpose().eval();
    add_force_cross_matrix_of(data.deriv_hc[j], B);
    const int jv = model.idx_v[j], nvj = model.joint_nv(j);
    if (nvj == 1) {  // fast path: fixed-size products for the 1-DoF joints
      const Vec6 s_j = data.oS[j].col(0);
      const Vec6 P = data.oIc[j] * s_j;
      data.deriv_P[j].col(0) = P;
      data.deriv_Q[j].col(0).noalias() = B.transpose() * s_j;
      data.M(jv, jv) = s_j.dot(P) + model.armature[jv];
      for (int b = model.parent[j]; b >= 0; b = model.parent[b]) {
        const int bv = model.idx_v[b];
        for (int m = 0; m < model.joint_nv(b); ++m) data.M(bv + m, jv) = data.M(jv, bv + m) = data.oS[b].col(m).dot(P);
      }
      continue;
    }
    data.deriv_P[j].noalias() = data.oIc[j] * data.oS[j];
    data.deriv_Q[j].noalias() = B.transpose() * data.oS[j];
    data.M.block(jv, jv, nvj, nvj).noalias() = data.oS[j].transpose() * data.deriv_P[j];
    for (int k = 0; k < nvj; ++k) data.M(jv + k, jv + k) += model.armature[jv + k];
    for (int b = model.parent[j]; b >= 0; b = model.parent[b]) {
      const int bv = model.idx_v[b], nvb = model.joint_nv(b);
      data.M.block(bv, jv, nvb, nvj).noalias() = data.oS[b].transpose() * data.deriv_P[j];
      data.M.block(jv, bv, nvj, nvb) = data.M.block(bv, jv, nvb, nvj).transpose();
    }
  }
}

[[gnu::flatten]] void rnea_derivatives_forces(const Model& model, Data& data, const VecRef<double>& a) {
  const int nb = model.nbodies();
  const Vec6 a_world = world_acceleration(model);
  for (int i = 0; i < nb; ++i) {
    const int p = model.parent[i], iv = model.idx_v[i], nvi = model.joint_nv(i);
    Vec6& A = data.oa[i];
    A = (p >= 0 ? data.oa[p] : a_world) + data.oc[i];
    if (nvi == 1)
      A += data.oS[i].col(0) * a[iv];
    else
      A.noalias() += data.oS[i] * a.segment(iv, nvi);
    data.deriv_Fc[i].noalias() = data.oI[i] * A;
    data.deriv_Fc[i] += data.deriv_fv[i];
  }
  for (int i = nb - 1; i > 0; --i)
    if (model.parent[i] >= 0) data.deriv_Fc[model.parent[i]] += data.deriv_Fc[i];
}

[[gnu::flatten]] void rnea_derivatives_partials(const Model& model, Data& data, double sign, Eigen::Ref<Eigen::MatrixXd> dtau_dq,
                               Eigen::Ref<Eigen::MatrixXd> dtau_dv) {
  const int nb = model.nbodies();
  const Vec6 a_world = world_acceleration(model);
  dtau_dq.setZero();
  dtau_dv.setZero();
  for (int j = 0; j < nb; ++j) {
    const int p = model.parent[j], jv = model.idx_v[j], nvj = model.joint_nv(j);
    if (nvj == 0) continue;
    for (int b = 0; b < nb; ++b)
      data.deriv_in_subtree[b] = b == j || (b > j && model.parent[b] >= 0 && data.deriv_in_subtree[model.parent[b]]);
    const Vec6 Vp = p >= 0 ? data.ov[p] : Vec6::Zero();
    const Vec6& Ap = p >= 0 ? data.oa[p] : a_world;
    const Vec6 Vpj = Vp + data.ov[j];
    for (int k = 0; k < nvj; ++k) {
      const int c = jv + k;
      const Vec6 xi = data.oS[j].col(k);
      const Vec6 nu = crm(xi, Vp);
      const Vec6 w = crm(xi, Ap) + crm(Vp, nu);
      const Vec6 u = crm(xi, Vpj);
      // b in the subtree: d tau_b/dq = -(P_b^T w + Q_b^T nu), d tau_b/dv = Q_b^T xi - P_b^T u
      const Vec6 wq = -sign * w, nuq = -sign * nu, xiv = sign * xi, uv = -sign * u;
      for (int b = j; b < nb; ++b) {
        if (!data.deriv_in_subtree[b]) continue;
        const int bv = model.idx_v[b], nvb = model.joint_nv(b);
        const Matrix6X<double>& P = data.deriv_P[b];
        const Matrix6X<double>& Q = data.deriv_Q[b];
        for (int m = 0; m < nvb; ++m) {
          dtau_dq(bv + m, c) = P.col(m).dot(wq) + Q.col(m).dot(nuq);
          dtau_dv(bv + m, c) = Q.col(m).dot(xiv) + P.col(m).dot(uv);
        }
      }
      if (p < 0) continue;
      // b an ancestor: S_b^T (xi x* Fc_j - Ic_j (alpha + V_p x nu) - Bc_j nu), S_b^T (Bc_j xi - Ic_j u)
      Vec6 fq = crf(xi, data.deriv_Fc[j]);
      fq.noalias() -= data.oIc[j] * w;
      fq.noalias() -= data.deriv_Bc[j] * nu;
      Vec6 fv = data.deriv_Bc[j] * xi;
      fv.noalias() -= data.oIc[j] * u;
      fq *= sign;
      fv *= sign;
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

}  // namespace detail

template <class S>
void rnea_derivatives(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                      const VecRef<S>& a, Eigen::Ref<MatrixX<S>> dtau_dq, Eigen::Ref<MatrixX<S>> dtau_dv) {
  static_assert(std::is_same_v<S, double>, "rnea_derivatives is implemented for double");
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("a", a.size(), model.nv);
  if (dtau_dq.rows() != model.nv || dtau_dq.cols() != model.nv || dtau_dv.rows() != model.nv ||
      dtau_dv.cols() != model.nv)
    throw ArgumentError("rnea_derivatives: dtau_dq and dtau_dv must be " + std::to_string(model.nv) + " x " +
                        std::to_string(model.nv));
  detail::rnea_derivatives_kinematics(model, data, q, v);
  detail::rnea_derivatives_forces(model, data, a);
  detail::rnea_derivatives_partials(model, data, 1.0, dtau_dq, dtau_dv);
}

template void rnea_derivatives<double>(const Model&, Data&, const VecRef<double>&, const VecRef<double>&,
                                       const VecRef<double>&, Eigen::Ref<MatrixX<double>>, Eigen::Ref<MatrixX<double>>);

}  // namespace gradyn
