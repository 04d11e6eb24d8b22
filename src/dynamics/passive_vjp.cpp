// Reverse mode of the passive forces (dampers, springs through joint_difference) and of the
// forward dynamics a = aba(q, v, tau + passive(q, v)). Each joint_difference kind is differentiated
// exactly as joint.hpp computes it (ambient coordinates, quaternions not renormalised).
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/dynamics/tendon.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

namespace {

/// Adjoint of quaternion_log(r) (joint.hpp): r_bar (w, x, y, z order in a Quaternion) from w_bar.
template <class S>
Quaternion<S> quaternion_log_vjp(const Quaternion<S>& r_in, const Vector3<S>& w_bar) {
  using std::atan2;
  using std::sqrt;
  const bool flipped = r_in.w() < S(0);
  const S rw = flipped ? S(-r_in.w()) : r_in.w();
  const Vector3<S> rv = flipped ? Vector3<S>(-r_in.vec()) : Vector3<S>(r_in.vec());
  const S sn2 = rv.squaredNorm();
  const S proj = rv.dot(w_bar);
  Vector3<S> rv_bar;
  S rw_bar;
  if (sn2 < S(1e-16)) {  // w = 2 vec / w
    rv_bar = (S(2) / rw) * w_bar;
    rw_bar = -S(2) * proj / (rw * rw);
  } else {  // w = k vec, k = 2 atan2(sn, w) / sn
    const S sn = sqrt(sn2);
    const S th = atan2(sn, rw);
    const S k = S(2) * th / sn;
    const S r2 = sn2 + rw * rw;
    const S dk_dsn = S(2) * rw / (r2 * sn) - S(2) * th / sn2;
    const S dk_dw = -S(2) / r2;
    rv_bar = k * w_bar + (dk_dsn * proj / sn) * rv;
    rw_bar = dk_dw * proj;
  }
  if (flipped) {
    rv_bar = -rv_bar;
    rw_bar = -rw_bar;
  }
  return Quaternion<S>(rw_bar, rv_bar.x(), rv_bar.y(), rv_bar.z());
}

/// Adjoint of r = c * b (Hamilton product): accumulates into c_bar and b_bar.
template <class S>
void quaternion_product_vjp(const Quaternion<S>& c, const Quaternion<S>& b, const Quaternion<S>& r_bar,
                            Quaternion<S>& c_bar, Quaternion<S>& b_bar) {
  // r.w = cw bw - cv.bv; r.vec = cw bv + bw cv + cv x bv
  const Vector3<S> rv_b = r_bar.vec();
  const S rw_b = r_bar.w();
  c_bar.w() += rw_b * b.w() + rv_b.dot(b.vec());
  c_bar.vec() += -rw_b * b.vec() + b.w() * rv_b + b.vec().cross(rv_b);
  b_bar.w() += rw_b * c.w() + rv_b.dot(c.vec());
  b_bar.vec() += -rw_b * c.vec() + c.w() * rv_b - c.vec().cross(rv_b);
}

/// Adjoint of Eigen's q * x (QuaternionBase::_transformVector: x + 2w (qv x x) + 2 qv x (qv x x),
/// not renormalised): accumulates into q_bar and x_bar.
template <class S>
void quaternion_rotate_vjp(const Quaternion<S>& q, const Vector3<S>& x, const Vector3<S>& out_bar, Quaternion<S>& q_bar,
                           Vector3<S>& x_bar) {
  const Vector3<S> qv = q.vec();
  const Vector3<S> u = qv.cross(x);
  const Vector3<S> u_bar = S(2) * q.w() * out_bar - S(2) * qv.cross(out_bar);
  q_bar.w() += S(2) * u.dot(out_bar);
  q_bar.vec() += S(2) * u.cross(out_bar) + x.cross(u_bar);
  x_bar += out_bar - qv.cross(u_bar);
}

/// Adjoint of se3_V(w) (joint.hpp): accumulates <V_bar, dV/dw> into w_bar.
template <class S>
void se3_V_vjp(const Vector3<S>& w, const Matrix3<S>& V_bar, Vector3<S>& w_bar) {
  S a, b, da_dt2, db_dt2;
  se3_V_coefficients<S>(w.squaredNorm(), a, b, &da_dt2, &db_dt2);
  const Matrix3<S> K = skew(w);
  const S a_bar = V_bar.cwiseProduct(K).sum();
  const S b_bar = V_bar.cwiseProduct(K * K).sum();
  const Matrix3<S> K_bar = a * V_bar + b * (V_bar * K.transpose() + K.transpose() * V_bar);
  w_bar += unskew_adjoint<S>(K_bar) + (S(2) * (a_bar * da_dt2 + b_bar * db_dt2)) * w;
}

/// Adjoint of joint_difference(type, q0, q1, d): accumulates d_bar^T dd/d(q0, q1) into q0_bar, q1_bar.
template <class S, class Q0, class Q1, class D, class B0, class B1>
void joint_difference_vjp(JointType type, const Q0& q0, const Q1& q1, const D& d_bar, B0&& q0_bar, B1&& q1_bar) {
  using std::cos;
  using std::sin;
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous:
    case JointType::Prismatic:
      q1_bar[0] += d_bar[0];
      q0_bar[0] -= d_bar[0];
      break;
    case JointType::Spherical:
    case JointType::Free: {
      const int o = type == JointType::Free ? 3 : 0;  // quaternion offset
      const Quaternion<S> a(q0[o + 3], q0[o], q0[o + 1], q0[o + 2]), b(q1[o + 3], q1[o], q1[o + 1], q1[o + 2]);
      const Quaternion<S> c = a.conjugate();
      const Quaternion<S> r = c * b;
      Vector3<S> w_bar(d_bar[o], d_bar[o + 1], d_bar[o + 2]);
      Quaternion<S> c_bar(S(0), S(0), S(0), S(0)), b_bar(S(0), S(0), S(0), S(0));
      if (type == JointType::Free) {
        // lin = V(w)^-1 (c * (p1 - p0)), w = log(c * b)
        const Vector3<S> w = quaternion_log<S>(r);
        const Vector3<S> dpos = Vector3<S>(q1[0], q1[1], q1[2]) - Vector3<S>(q0[0], q0[1], q0[2]);
        const Vector3<S> dp_local = c * dpos;
        const Matrix3<S> Vinv = se3_V<S>(w).inverse();
        const Vector3<S> lin = Vinv * dp_local;
        const Vector3<S> lin_bar(d_bar[0], d_bar[1], d_bar[2]);
        const Vector3<S> dp_local_bar = Vinv.transpose() * lin_bar;
        se3_V_vjp<S>(w, Matrix3<S>(-dp_local_bar * lin.transpose()), w_bar);  // d(V^-1) = -V^-1 dV V^-1
        Vector3<S> dpos_bar = Vector3<S>::Zero();
        quaternion_rotate_vjp<S>(c, dpos, dp_local_bar, c_bar, dpos_bar);
        for (int k = 0; k < 3; ++k) {
          q1_bar[k] += dpos_bar[k];
          q0_bar[k] -= dpos_bar[k];
        }
      }
      quaternion_product_vjp<S>(c, b, quaternion_log_vjp<S>(r, w_bar), c_bar, b_bar);
      // c = conjugate(a)
      q0_bar[o + 3] += c_bar.w();
      q1_bar[o + 3] += b_bar.w();
      for (int k = 0; k < 3; ++k) {
        q0_bar[o + k] -= c_bar.vec()[k];
        q1_bar[o + k] += b_bar.vec()[k];
      }
      break;
    }
    case JointType::Planar: {
      const S th = q1[2] - q0[2];
      const S c = cos(q0[2]), s = sin(q0[2]);
      const S dx = q1[0] - q0[0], dy = q1[1] - q0[1];
      const S lx = c * dx + s * dy, ly = -s * dx + c * dy;
      S a, b, da, db;  // and their derivatives in th, on the same branch as joint_difference
      se2_coefficients<S>(th, a, b, &da, &db);
      const S det = a * a + b * b;
      const S d0 = (a * lx + b * ly) / det, d1 = (-b * lx + a * ly) / det;
      const S g0 = d_bar[0] / det, g1 = d_bar[1] / det;
      const S lx_bar = a * g0 - b * g1, ly_bar = b * g0 + a * g1;
      const S det_bar = -(d0 * g0 + d1 * g1);
      const S a_bar = lx * g0 + ly * g1 + S(2) * a * det_bar;
      const S b_bar = ly * g0 - lx * g1 + S(2) * b * det_bar;
      const S th_bar = d_bar[2] + a_bar * da + b_bar * db;
      const S dx_bar = c * lx_bar - s * ly_bar, dy_bar = s * lx_bar + c * ly_bar;
      q1_bar[0] += dx_bar;
      q0_bar[0] -= dx_bar;
      q1_bar[1] += dy_bar;
      q0_bar[1] -= dy_bar;
      q1_bar[2] += th_bar;
      q0_bar[2] += -th_bar + lx_bar * ly - ly_bar * lx;  // the q0 frame rotates with q0[2]
      break;
    }
    case JointType::Fixed: break;
  }
}

}  // namespace

template <class S>
void passive_forces_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                        const VecRef<S>& tau_passive_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                        ModelTangentTpl<S>& model_bar) {
  (void)data;
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("tau_passive_bar", tau_passive_bar.size(), model.nv);
  check_size("q_bar", q_bar.size(), model.nq);
  check_size("v_bar", v_bar.size(), model.nv);
  // tau_p = -damping v - stiffness (q (-) q_rest)
  model_bar.damping -= tau_passive_bar.cwiseProduct(v);
  v_bar -= tau_passive_bar.cwiseProduct(model.damping);
  for (int i = 0; i < model.nbodies(); ++i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i), iq = model.idx_q[i], nqi = model.joint_nq(i);
    if (nvi == 0) continue;
    // The stiffness adjoint is -tau_bar d even where the stiffness is zero (passive_forces skips
    // those joints, but the force is still linear in the stiffness): a fit that starts from no
    // spring must see its gradient.
    Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> d(nvi);
    joint_difference<S>(model.joint_type[i], model.q_rest.segment(iq, nqi), q.segment(iq, nqi), d);
    model_bar.stiffness.segment(iv, nvi) -= tau_passive_bar.segment(iv, nvi).cwiseProduct(d);
    bool has_spring = false;
    for (int k = 0; k < nvi; ++k) has_spring |= value_of(model.stiffness[iv + k]) != 0.0;
    if (!has_spring) continue;  // no spring force: no q or q_rest adjoint
    const Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> d_bar =
        -model.stiffness.segment(iv, nvi).cwiseProduct(tau_passive_bar.segment(iv, nvi));
    joint_difference_vjp<S>(model.joint_type[i], model.q_rest.segment(iq, nqi), q.segment(iq, nqi), d_bar,
                            model_bar.q_rest.segment(iq, nqi), q_bar.segment(iq, nqi));
  }
  // tau_p -= J^T (k (J q - L0) + b J v), J constant; the stiffness and damping adjoints even where
  // they are zero (as the joints')
  for (size_t t = 0; t < model.tendons.size(); ++t) {
    const FixedTendon& tendon = model.tendons[t];
    S tension_bar = S(0);
    for (size_t k = 0; k < tendon.joints.size(); ++k)
      tension_bar -= tendon.coefs[k] * tau_passive_bar[model.idx_v[tendon.joints[k]]];
    const S stretch = tendon_length<S>(model, tendon, q) - tendon.spring_length;
    model_bar.tendon_spring[t] += Vector3<S>(tension_bar * stretch, tension_bar * tendon_rate<S>(model, tendon, v),
                                             -tendon.stiffness * tension_bar);
    for (size_t k = 0; k < tendon.joints.size(); ++k) {
      q_bar[model.idx_q[tendon.joints[k]]] += tendon.stiffness * tendon.coefs[k] * tension_bar;
      v_bar[model.idx_v[tendon.joints[k]]] += tendon.damping * tendon.coefs[k] * tension_bar;
    }
  }
}

template <class S>
void forward_dynamics_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                          const VecRef<S>& tau, const VecRef<S>& ddq_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                          VecOut<S> tau_bar, ModelTangentTpl<S>& model_bar, bool forward_is_current) {
  check_size("tau", tau.size(), model.nv);
  if (!forward_is_current) {  // forward_dynamics left tau + passive in data.tau_total
    passive_forces<S>(model, data, q, v);
    data.tau_total.noalias() = tau + data.tau_passive;
  }
  aba_vjp<S>(model, data, q, v, data.tau_total, ddq_bar, q_bar, v_bar, tau_bar, model_bar, forward_is_current);
  // aba_vjp left tau_total's adjoint, M^-1 ddq_bar, in data.adj_mu.
  passive_forces_vjp<S>(model, data, q, v, data.adj_mu, q_bar, v_bar, model_bar);
}

#define GRADYN_INSTANTIATE(S)                                                                                  \
  template void passive_forces_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,     \
                                      const VecRef<S>&, VecOut<S>, VecOut<S>, ModelTangentTpl<S>&);            \
  template void forward_dynamics_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,   \
                                        const VecRef<S>&, const VecRef<S>&, VecOut<S>, VecOut<S>, VecOut<S>,   \
                                        ModelTangentTpl<S>&, bool);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
