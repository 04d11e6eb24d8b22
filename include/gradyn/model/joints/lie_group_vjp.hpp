// Adjoints of the Lie-group arithmetic of lie_group.hpp, for the joints' own adjoints (joints/*.hpp).
// Each reverses the exact arithmetic of its forward formula, small-angle branches included.
#pragma once

#include "gradyn/model/joints/lie_group.hpp"

namespace gradyn::detail {

/// Adjoint of the quaternion -> matrix formula (lie_group.hpp), entry by entry: returns d<R_bar, R>/d(x, y, z, w).
template <class S>
Eigen::Matrix<S, 4, 1> quaternion_matrix_vjp(const S& x, const S& y, const S& z, const S& w, const Matrix3<S>& B) {
  Eigen::Matrix<S, 4, 1> g;
  const S s01 = B(0, 1) + B(1, 0), s02 = B(0, 2) + B(2, 0), s12 = B(1, 2) + B(2, 1);
  const S d10 = B(1, 0) - B(0, 1), d02 = B(0, 2) - B(2, 0), d21 = B(2, 1) - B(1, 2);
  g[0] = S(2) * (y * s01 + z * s02 + w * d21) - S(4) * x * (B(1, 1) + B(2, 2));
  g[1] = S(2) * (x * s01 + w * d02 + z * s12) - S(4) * y * (B(0, 0) + B(2, 2));
  g[2] = S(2) * (w * d10 + x * s02 + y * s12) - S(4) * z * (B(0, 0) + B(1, 1));
  g[3] = S(2) * (z * d10 + y * d02 + x * d21);
  return g;
}

/// Adjoint of R(q / |q|) (joint_transform reads quaternions normalised): the formula's adjoint at
/// the unit quaternion u, then through the normalisation, (I - u u^T) / |q|.
template <class S, class Q>
Eigen::Matrix<S, 4, 1> normalized_quaternion_matrix_vjp(const Q& q, const Matrix3<S>& B) {
  using std::sqrt;
  const S n = sqrt(q.squaredNorm());
  const Eigen::Matrix<S, 4, 1> u = q / n;
  const Eigen::Matrix<S, 4, 1> g = quaternion_matrix_vjp<S>(u[0], u[1], u[2], u[3], B);
  return (g - u * u.dot(g)) / n;
}

/// Ambient adjoint of a quaternion q (x, y, z, w; read normalised, u = q / |q|) from the adjoint g
/// of the body-frame rotation vector omega, dR = R [omega]x: omega = 2 Im(conj(u) dq) / |q|, so
/// q_bar = (2 / |q|) [u_w g + u_v x g; -u_v . g], which has no component along q.
template <class S, class QSeg>
Eigen::Matrix<S, 4, 1> quaternion_adjoint(const QSeg& q, const Vector3<S>& g) {
  using std::sqrt;
  const S n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const Vector3<S> uv(q[0] / n, q[1] / n, q[2] / n);
  const S uw = q[3] / n;
  const S two_over_n = S(2) / n;
  Eigen::Matrix<S, 4, 1> out;
  out.template head<3>() = two_over_n * (uw * g + uv.cross(g));
  out[3] = -two_over_n * uv.dot(g);
  return out;
}

/// Adjoint of quaternion_log(r) (lie_group.hpp): r_bar (w, x, y, z order in a Quaternion) from w_bar.
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

/// Adjoint of se3_V(w) (lie_group.hpp): accumulates <V_bar, dV/dw> into w_bar.
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

/// The quaternion part of a joint difference's adjoint, w = log(conj(a) b), a and b stored (x, y, z, w)
/// from entry o of q0 and q1: given w_bar, and c_bar holding what other terms already add to the
/// adjoint of c = conj(a), accumulates into q0_bar and q1_bar.
template <class S, class B0, class B1>
void quaternion_difference_vjp(const Quaternion<S>& a, const Quaternion<S>& b, const Vector3<S>& w_bar,
                               Quaternion<S>& c_bar, int o, B0&& q0_bar, B1&& q1_bar) {
  const Quaternion<S> c = a.conjugate();
  const Quaternion<S> r = c * b;
  Quaternion<S> b_bar(S(0), S(0), S(0), S(0));
  quaternion_product_vjp<S>(c, b, quaternion_log_vjp<S>(r, w_bar), c_bar, b_bar);
  // c = conjugate(a)
  q0_bar[o + 3] += c_bar.w();
  q1_bar[o + 3] += b_bar.w();
  for (int k = 0; k < 3; ++k) {
    q0_bar[o + k] -= c_bar.vec()[k];
    q1_bar[o + k] += b_bar.vec()[k];
  }
}

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

// Adjoint of quaternion_exp (lie_group.hpp): e = (cos(t/2), sin(t/2)/t w), t = |w|, with the same
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

// Adjoint of u = se3_V(w) lin (lie_group.hpp): V = I + a(t2) K + b(t2) K^2, K = [w]x, t2 = |w|^2.
// Accumulates into w_bar and lin_bar.
template <class S>
void se3_V_times_vjp(const Vector3<S>& w, const Vector3<S>& lin, const Vector3<S>& u_bar, Vector3<S>& w_bar,
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

// A quaternion's four entries (x, y, z, w) from index i of a vector, and added back into one.
template <class S, class X>
Quat<S> quat_at(const X& x, int i) {
  return {Vector3<S>(x[i], x[i + 1], x[i + 2]), x[i + 3]};
}

template <class S, class X>
void add_quat(X&& x, int i, const Quat<S>& q) {
  for (int k = 0; k < 3; ++k) x[i + k] += q.v[k];
  x[i + 3] += q.w;
}

}  // namespace gradyn::detail
