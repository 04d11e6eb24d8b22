// Reverse mode of the body-frame RNEA in rnea.cpp, written by hand: the forward pass is recomputed
// (storing the joint transforms), then the adjoints run the two passes backwards:
//   root -> leaves: adjoint of the accumulated joint forces, f_bar_i = S_i tau_bar_i + X_i^-1 f_bar_p
//                   (the transpose of the force transform that carried f_i into its parent);
//   leaves -> root: f_i = I a_i + v_i x* (I v_i), a_i = X_i^-1 a_p + S a + v_i x (S qd),
//                   v_i = X_i^-1 v_p + S qd, X_i = placement * joint_transform(q_i), into the parents,
//                   the ambient q, v, a and every model parameter.
// Notation: x_bar is the adjoint (gradient of the scalar loss) of x. Everything is fixed-size.
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"
#include "gradyn/dynamics/rnea.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

namespace {

/// y = X.act_inv_motion(m): accumulates into m_bar and the pose adjoint (R_bar, p_bar).
template <class S>
void act_inv_motion_vjp(const Pose<S>& X, const Vector6<S>& m, const Vector6<S>& y_bar, Vector6<S>& m_bar,
                        Matrix3<S>& R_bar, Vector3<S>& p_bar) {
  const Vector3<S> w = m.template head<3>();
  const Vector3<S> u = m.template tail<3>() - X.p.cross(w);  // y_lin = R^T u
  R_bar.noalias() += w * y_bar.template head<3>().transpose() + u * y_bar.template tail<3>().transpose();
  m_bar += X.act_force(y_bar);  // the transpose of the inverse motion transform
  const Vector3<S> u_bar = X.R * y_bar.template tail<3>();
  p_bar += u_bar.cross(w);
}

/// y = X.act_force(F): accumulates the pose adjoint (R_bar, p_bar); F's adjoint is X.act_inv_motion(y_bar).
template <class S>
void act_force_pose_vjp(const Pose<S>& X, const Vector6<S>& F, const Vector6<S>& y_bar, Matrix3<S>& R_bar,
                        Vector3<S>& p_bar) {
  const Vector3<S> n_bar = y_bar.template head<3>(), f_bar = y_bar.template tail<3>();
  const Vector3<S> Rf = X.R * F.template tail<3>();
  // y_n = R n + p x (R f), y_f = R f
  R_bar.noalias() += n_bar * F.template head<3>().transpose() + (f_bar + n_bar.cross(X.p)) * F.template tail<3>().transpose();
  p_bar += Rf.cross(n_bar);
}

/// y = I * x (spatial inertia times motion): accumulates into x_bar and the inertia's adjoints.
template <class S>
void inertia_apply_vjp(const Inertia<S>& I, const Vector6<S>& x, const Vector6<S>& y_bar, Vector6<S>& x_bar, S& mass_bar,
                       Vector3<S>& com_bar, Matrix3<S>& Ic_bar) {
  const Vector3<S> w = x.template head<3>(), vl = x.template tail<3>();
  const Vector3<S> yn = y_bar.template head<3>(), yf = y_bar.template tail<3>();
  const Vector3<S> r = vl - I.com.cross(w);  // lin = m r; y_f = lin; y_n = Ic w + c x lin
  const Vector3<S> lin = I.mass * r;
  const Vector3<S> lin_bar = yf - I.com.cross(yn);
  Ic_bar.noalias() += yn * w.transpose();
  com_bar += lin.cross(yn) - I.mass * w.cross(lin_bar);
  mass_bar += lin_bar.dot(r);
  x_bar.template head<3>() += I.inertia_com.transpose() * yn + I.mass * I.com.cross(lin_bar);
  x_bar.template tail<3>() += I.mass * lin_bar;
}

}  // namespace

template <class S>
void rnea_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& a,
              const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> a_bar,
              ModelTangentTpl<S>& model_bar) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("a", a.size(), model.nv);
  check_size("tau_bar", tau_bar.size(), model.nv);
  check_size("q_bar", q_bar.size(), model.nq);
  check_size("v_bar", v_bar.size(), model.nv);
  check_size("a_bar", a_bar.size(), model.nv);
  const int nb = model.nbodies();
  const Vector6<S> a_world = detail::world_acceleration(model);

  // Forward pass (as rnea()), keeping the joint transforms; data.f ends up holding the
  // accumulated forces (body plus subtree).
  for (int i = 0; i < nb; ++i) {
    data.joint_M[i] = joint_transform<S>(model.joint_type[i], model.joint_axis[i],
                                         q.segment(model.idx_q[i], model.joint_nq(i)));
    data.liMi[i] = model.joint_placement[i] * data.joint_M[i];
    detail::rnea_forward_body(model, data, v, a, a_world, i);
    data.adj_v[i].setZero();
    data.adj_a[i].setZero();
  }
  for (int i = nb - 1; i >= 0; --i) {
    const int p = model.parent[i];
    if (p >= 0) data.f[p] += data.liMi[i].act_force(data.f[i]);
  }

  // Root -> leaves: adjoint of the accumulated forces. tau_i = S^T f_i + armature a_i.
  for (int i = 0; i < nb; ++i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    const int p = model.parent[i];
    data.adj_f[i] = data.joint_S[i] * tau_bar.segment(iv, nvi);
    if (p >= 0) data.adj_f[i] += data.liMi[i].act_inv_motion(data.adj_f[p]);
    model_bar.armature.segment(iv, nvi) += tau_bar.segment(iv, nvi).cwiseProduct(a.segment(iv, nvi));
    a_bar.segment(iv, nvi) += tau_bar.segment(iv, nvi).cwiseProduct(model.armature.segment(iv, nvi));
  }

  // Leaves -> root: a body's v and a adjoints are complete once its children are done.
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i), iq = model.idx_q[i];
    const int p = model.parent[i];
    const Inertia<S>& I = model.body_inertia[i];
    const Pose<S>& X = data.liMi[i];
    const Vector6<S>& vi = data.v[i];
    const Vector6<S>& fb = data.adj_f[i];
    Vector6<S>& vb = data.adj_v[i];
    Vector6<S>& ab = data.adj_a[i];
    Matrix3<S> R_bar = Matrix3<S>::Zero();
    Vector3<S> p_bar = Vector3<S>::Zero();

    // f_i (body part) = I a + v x* h, h = I v.
    const Vector6<S> h = I * vi;
    inertia_apply_vjp<S>(I, data.a[i], fb, ab, model_bar.mass[i], model_bar.com[i], model_bar.inertia_com[i]);
    {
      const Vector3<S> hn = h.template head<3>(), hf = h.template tail<3>();
      const Vector3<S> fa = fb.template head<3>(), fl = fb.template tail<3>();
      vb.template head<3>() += hn.cross(fa) + hf.cross(fl);
      vb.template tail<3>() += hf.cross(fa);
      const Vector6<S> h_bar = -cross_motion<S>(vi, fb);  // (v x*)^T = -(v x)
      inertia_apply_vjp<S>(I, vi, h_bar, vb, model_bar.mass[i], model_bar.com[i], model_bar.inertia_com[i]);
    }
    // Force carried into the parent: f_p += X.act_force(f_i).
    if (p >= 0) act_force_pose_vjp<S>(X, data.f[i], data.adj_f[p], R_bar, p_bar);

    // a_i = X^-1 a_p + S a + v_i x vj;  v_i = X^-1 v_p + vj, vj = S qd.
    const auto& Sj = data.joint_S[i];
    const Vector6<S> vj = Sj * v.segment(iv, nvi);
    vb += cross_force<S>(vj, ab);                            // d(v x vj)/dv^T = vj x*
    const Vector6<S> vj_bar = vb - cross_force<S>(vi, ab);  // d(v x vj)/dvj^T = -(v x*)
    a_bar.segment(iv, nvi) += Sj.transpose() * ab;
    v_bar.segment(iv, nvi) += Sj.transpose() * vj_bar;
    if (p >= 0) {
      act_inv_motion_vjp<S>(X, data.a[p], ab, data.adj_a[p], R_bar, p_bar);
      act_inv_motion_vjp<S>(X, data.v[p], vb, data.adj_v[p], R_bar, p_bar);
    } else {
      Vector6<S> a_world_bar = Vector6<S>::Zero();
      act_inv_motion_vjp<S>(X, a_world, ab, a_world_bar, R_bar, p_bar);
      model_bar.gravity -= a_world_bar.template tail<3>();
    }
    // Joint axis through S (1-DoF joints only; other subspaces are constant).
    if (nvi == 1) {
      const Vector6<S> s_bar = data.f[i] * tau_bar[iv] + ab * a[iv] + vj_bar * v[iv];
      model_bar.axis[i] += joint_subspace_axis_bar<S>(model.joint_type[i], s_bar);
    }

    // liMi = placement * joint_M: R = Rp Rj, p = Rp pj + pp.
    const Pose<S>& Pp = model.joint_placement[i];
    const Pose<S>& Mj = data.joint_M[i];
    model_bar.placement_R[i].noalias() += R_bar * Mj.R.transpose() + p_bar * Mj.p.transpose();
    model_bar.placement_p[i] += p_bar;
    const Matrix3<S> Rj_bar = Pp.R.transpose() * R_bar;
    const Vector3<S> pj_bar = Pp.R.transpose() * p_bar;
    joint_transform_vjp<S>(model.joint_type[i], model.joint_axis[i], q.segment(iq, model.joint_nq(i)), Mj, Rj_bar,
                           pj_bar, q_bar.segment(iq, model.joint_nq(i)), model_bar.axis[i]);
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                   \
  template void rnea_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, \
                            const VecRef<S>&, VecOut<S>, VecOut<S>, VecOut<S>, ModelTangentTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
