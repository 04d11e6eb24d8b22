// Adjoint of integrate (q_out = q (+) dv), joint by joint. Each kernel reverses the exact
// arithmetic of joint_integrate in joint.hpp, including the small-angle Taylor branches and the
// renormalisation of the output quaternion, so that q adjoints are ambient: the gradient of the
// computed function of the raw q numbers (q need not be unit).
#include "gradyn/autodiff.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {

namespace {

// A quaternion as four plain numbers (x, y, z, w) for the adjoint arithmetic.
template <class S>
struct Quat {
  Vector3<S> v;
  S w;
};

// Adjoint of n = p / |p| (Quaternion::normalize): p_bar += (n_bar - n (n . n_bar)) / |p|.
template <class S>
Quat<S> normalize_vjp(const Quat<S>& p, const Quat<S>& n_bar) {
  using std::sqrt;
  const S norm = sqrt(p.v.squaredNorm() + p.w * p.w);
  const Vector3<S> nv = p.v / norm;
  const S nw = p.w / norm;
  const S dot = nv.dot(n_bar.v) + nw * n_bar.w;
  return {(n_bar.v - nv * dot) / norm, (n_bar.w - nw * dot) / norm};
}

// Adjoint of the Hamilton product p = a b:  p.w = aw bw - av.bv,  p.v = aw bv + bw av + av x bv.
template <class S>
void product_vjp(const Quat<S>& a, const Quat<S>& b, const Quat<S>& p_bar, Quat<S>& a_bar, Quat<S>& b_bar) {
  a_bar.w += p_bar.w * b.w + p_bar.v.dot(b.v);
  a_bar.v += -p_bar.w * b.v + b.w * p_bar.v + b.v.cross(p_bar.v);
  b_bar.w += p_bar.w * a.w + p_bar.v.dot(a.v);
  b_bar.v += -p_bar.w * a.v + a.w * p_bar.v + p_bar.v.cross(a.v);
}

// Adjoint of quaternion_exp (joint.hpp): e = (cos(t/2), sin(t/2)/t w), t = |w|, with the same
// Taylor branch below t^2 = 1e-12. Returns w_bar.
template <class S>
Vector3<S> quaternion_exp_vjp(const Vector3<S>& w, const Quat<S>& e_bar) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const S th2 = w.squaredNorm();
  S half_sinc, d_half_sinc, d_c;  // derivatives with respect to th2
  if (th2 < S(1e-12)) {
    half_sinc = S(0.5) - th2 / S(48);
    d_half_sinc = S(-1) / S(48);
    d_c = S(-1) / S(8);
  } else {
    const S th = sqrt(th2), s = sin(th / S(2)), c = cos(th / S(2));
    half_sinc = s / th;
    // d/dth2 = d/dth / (2 th)
    d_half_sinc = (c / S(2) - half_sinc) / th / (S(2) * th);
    d_c = -s / S(2) / (S(2) * th);
  }
  // e.v = half_sinc(th2) w, e.w = c(th2), th2 = w.w
  return half_sinc * e_bar.v + (S(2) * (d_half_sinc * e_bar.v.dot(w) + d_c * e_bar.w)) * w;
}

// Adjoint of the quaternion part shared by spherical and free joints:
// q1 = normalize(q0 * exp(w)). Accumulates into q0_bar and w_bar.
template <class S>
void rotate_integrate_vjp(const Quat<S>& q0, const Vector3<S>& w, const Quat<S>& q1_bar, Quat<S>& q0_bar,
                          Vector3<S>& w_bar) {
  const Quaternion<S> e_eig = quaternion_exp<S>(w);
  const Quat<S> e{e_eig.vec(), e_eig.w()};
  const Quaternion<S> p_eig = Quaternion<S>(q0.w, q0.v.x(), q0.v.y(), q0.v.z()) * e_eig;
  const Quat<S> p{p_eig.vec(), p_eig.w()};
  const Quat<S> p_bar = normalize_vjp(p, q1_bar);
  Quat<S> e_bar{Vector3<S>::Zero(), S(0)};
  product_vjp(q0, e, p_bar, q0_bar, e_bar);
  w_bar += quaternion_exp_vjp(w, e_bar);
}

// Adjoint of u = se3_V(w) lin (joint.hpp): V = I + a(t2) K + b(t2) K^2, K = [w]x, t2 = |w|^2.
// Accumulates into w_bar and lin_bar.
template <class S>
void se3_V_vjp(const Vector3<S>& w, const Vector3<S>& lin, const Vector3<S>& u_bar, Vector3<S>& w_bar,
               Vector3<S>& lin_bar) {
  S a, b, da, db;  // da, db: derivatives with respect to t2 = |w|^2
  se3_V_coefficients<S>(w.squaredNorm(), a, b, &da, &db);
  const Vector3<S> w_x_lin = w.cross(lin);
  const Vector3<S> w_x_w_x_lin = w.cross(w_x_lin);
  // u = lin + a w x lin + b w x (w x lin); V^T = I - a K + b K^2.
  lin_bar += u_bar - a * w.cross(u_bar) + b * w.cross(w.cross(u_bar));
  const S s1 = u_bar.dot(w_x_lin), s2 = u_bar.dot(w_x_w_x_lin);
  // u_bar . (w x (w x lin)) = (u_bar.w)(w.lin) - (u_bar.lin)|w|^2
  w_bar += S(2) * (da * s1 + db * s2) * w + a * lin.cross(u_bar) +
           b * (u_bar * w.dot(lin) + lin * u_bar.dot(w) - S(2) * u_bar.dot(lin) * w);
}

// Adjoint of r = R(q) u as Eigen computes q * u: r = u + 2 w (qv x u) + 2 qv x (qv x u), which
// is (I + 2 w K + 2 K^2) u, K = [qv]x, for any (also non-unit) quaternion.
template <class S>
void rotate_vector_vjp(const Quat<S>& q, const Vector3<S>& u, const Vector3<S>& r_bar, Quat<S>& q_bar,
                       Vector3<S>& u_bar) {
  const Vector3<S>& qv = q.v;
  u_bar += r_bar - S(2) * q.w * qv.cross(r_bar) + S(2) * qv.cross(qv.cross(r_bar));
  q_bar.w += S(2) * r_bar.dot(qv.cross(u));
  q_bar.v += S(2) * q.w * u.cross(r_bar) +
             S(2) * (r_bar * qv.dot(u) + u * r_bar.dot(qv) - S(2) * qv * u.dot(r_bar));
}

template <class S>
Quat<S> quat_at(const VecRef<S>& x, int i) {  // (x, y, z, w) stored from index i
  return {Vector3<S>(x[i], x[i + 1], x[i + 2]), x[i + 3]};
}

template <class S>
void add_quat(VecOut<S>& x, int i, const Quat<S>& q) {
  for (int k = 0; k < 3; ++k) x[i + k] += q.v[k];
  x[i + 3] += q.w;
}

}  // namespace

template <class S>
void integrate_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& dv, const VecRef<S>& q_out_bar,
                   VecOut<S> q_bar, VecOut<S> dv_bar) {
  using std::cos;
  using std::sin;
  check_size("q", q.size(), model.nq);
  check_size("dv", dv.size(), model.nv);
  check_size("q_out_bar", q_out_bar.size(), model.nq);
  check_size("q_bar", q_bar.size(), model.nq);
  check_size("dv_bar", dv_bar.size(), model.nv);
  for (int i = 0; i < model.nbodies(); ++i) {
    const int iq = model.idx_q[i], iv = model.idx_v[i];
    switch (model.joint_type[i]) {
      case JointType::Revolute:
      case JointType::Continuous:
      case JointType::Prismatic:
        q_bar[iq] += q_out_bar[iq];
        dv_bar[iv] += q_out_bar[iq];
        break;
      case JointType::Spherical: {
        const Vector3<S> w(dv[iv], dv[iv + 1], dv[iv + 2]);
        Quat<S> q0_bar{Vector3<S>::Zero(), S(0)};
        Vector3<S> w_bar = Vector3<S>::Zero();
        rotate_integrate_vjp(quat_at<S>(q, iq), w, quat_at<S>(q_out_bar, iq), q0_bar, w_bar);
        add_quat(q_bar, iq, q0_bar);
        dv_bar.template segment<3>(iv) += w_bar;
        break;
      }
      case JointType::Free: {
        // p1 = p0 + R(q0) (V(ang) lin);  q1 = normalize(q0 exp(ang))
        const Quat<S> q0 = quat_at<S>(q, iq + 3);
        const Vector3<S> lin(dv[iv], dv[iv + 1], dv[iv + 2]), ang(dv[iv + 3], dv[iv + 4], dv[iv + 5]);
        const Vector3<S> p1_bar(q_out_bar[iq], q_out_bar[iq + 1], q_out_bar[iq + 2]);
        Quat<S> q0_bar{Vector3<S>::Zero(), S(0)};
        Vector3<S> ang_bar = Vector3<S>::Zero(), lin_bar = Vector3<S>::Zero(), u_bar = Vector3<S>::Zero();
        // p1 rotates by the normalised quaternion u: adjoint at u, then through the normalisation.
        using std::sqrt;
        const S n = sqrt(q0.v.squaredNorm() + q0.w * q0.w);
        Quat<S> u_q_bar{Vector3<S>::Zero(), S(0)};
        rotate_vector_vjp(Quat<S>{q0.v / n, q0.w / n}, Vector3<S>(se3_V<S>(ang) * lin), p1_bar, u_q_bar, u_bar);
        const Quat<S> through_norm = normalize_vjp(q0, u_q_bar);
        q0_bar.v += through_norm.v;
        q0_bar.w += through_norm.w;
        se3_V_vjp(ang, lin, u_bar, ang_bar, lin_bar);
        rotate_integrate_vjp(q0, ang, quat_at<S>(q_out_bar, iq + 3), q0_bar, ang_bar);
        for (int k = 0; k < 3; ++k) q_bar[iq + k] += p1_bar[k];
        add_quat(q_bar, iq + 3, q0_bar);
        dv_bar.template segment<3>(iv) += lin_bar;
        dv_bar.template segment<3>(iv + 3) += ang_bar;
        break;
      }
      case JointType::Planar: {
        // out = (x + c lx - s ly, y + s lx + c ly, th0 + th), (lx, ly) = [[a, -b], [b, a]] (dv0, dv1)
        const S th = dv[iv + 2];
        S a, b, da, db;
        se2_coefficients<S>(th, a, b, &da, &db);
        const S lx = a * dv[iv] - b * dv[iv + 1], ly = b * dv[iv] + a * dv[iv + 1];
        const S c = cos(q[iq + 2]), s = sin(q[iq + 2]);
        const S o0 = q_out_bar[iq], o1 = q_out_bar[iq + 1], o2 = q_out_bar[iq + 2];
        q_bar[iq] += o0;
        q_bar[iq + 1] += o1;
        q_bar[iq + 2] += o2 + (-s * lx - c * ly) * o0 + (c * lx - s * ly) * o1;
        const S lx_bar = c * o0 + s * o1, ly_bar = -s * o0 + c * o1;
        const S a_bar = lx_bar * dv[iv] + ly_bar * dv[iv + 1];
        const S b_bar = -lx_bar * dv[iv + 1] + ly_bar * dv[iv];
        dv_bar[iv] += a * lx_bar + b * ly_bar;
        dv_bar[iv + 1] += -b * lx_bar + a * ly_bar;
        dv_bar[iv + 2] += o2 + a_bar * da + b_bar * db;
        break;
      }
      case JointType::Fixed: break;
    }
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                 \
  template void integrate_vjp<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, \
                                 VecOut<S>, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
