// What sensor_readings and its adjoint share: the bodies' world velocities and accelerations, and the
// frames' poses and motion (sensors.cpp, sensors_vjp.cpp).
#pragma once

#include <cmath>

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"
#include "gradyn/sensors/sensors.hpp"

namespace gradyn::sensors_detail {

/// True when a sensor of the model reads qacc (accelerometer) or the contacts (touch).
template <class S>
bool any_of_kind(const ModelTpl<S>& model, SensorKind kind) {
  for (const Sensor& s : model.sensors)
    if (s.kind == kind) return true;
  return false;
}

/// Checks the sizes, then fills data.oMi, data.oS, data.sensor_ov (world velocity about the origin)
/// and, when with_acc, data.sensor_oa (world acceleration about the origin under qacc, no gravity):
///   oa_i = oa_parent + oS_i qacc_i + ov_parent x (oS_i v_i).
template <class S>
void body_motion(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                 const VecRef<S>& qacc, bool with_acc) {
  for (int i = 0; i < model.nbodies(); ++i) {
    detail::world_body_pose(model, data, q, i);
    const int p = model.parent[i], iv = model.idx_v[i], nvi = model.joint_nv(i);
    const Vector6<S> s = data.oS[i] * v.segment(iv, nvi);
    data.sensor_ov[i] = p >= 0 ? Vector6<S>(data.sensor_ov[p] + s) : s;
    if (!with_acc) continue;
    const Vector6<S> t = data.oS[i] * qacc.segment(iv, nvi);
    data.sensor_oa[i] = p >= 0 ? Vector6<S>(data.sensor_oa[p] + t + cross_motion<S>(data.sensor_ov[p], s)) : t;
  }
}

/// A frame's world pose and the motion of its origin.
template <class S>
struct FrameMotion {
  int body = -1;  // -1: fixed in the world
  Pose<S> pose;
  Vector3<S> omega = Vector3<S>::Zero(), v = Vector3<S>::Zero();      // angular velocity, origin velocity
  Vector3<S> alpha = Vector3<S>::Zero(), a = Vector3<S>::Zero();      // angular acceleration, origin's
                                                                      // acceleration (no gravity)
};

template <class S>
FrameMotion<S> frame_motion(const ModelTpl<S>& model, const DataTpl<S>& data, int frame, bool with_acc) {
  const FrameTpl<S>& f = model.frames[frame];
  FrameMotion<S> m;
  m.body = f.body;
  if (f.body < 0) {
    m.pose = f.placement;
    return m;
  }
  m.pose = data.oMi[f.body] * f.placement;
  const Vector6<S>& ov = data.sensor_ov[f.body];
  m.omega = ov.template head<3>();
  m.v = ov.template tail<3>() + m.omega.cross(m.pose.p);
  if (with_acc) {
    const Vector6<S>& oa = data.sensor_oa[f.body];
    m.alpha = oa.template head<3>();
    m.a = oa.template tail<3>() + m.alpha.cross(m.pose.p) + m.omega.cross(m.v);
  }
  return m;
}

/// The unit quaternion (w, x, y, z) of a rotation matrix, w >= 0 (Shepperd's method: the largest of
/// the four squared components first, so that no division is by a small number).
template <class S>
Eigen::Matrix<S, 4, 1> quaternion_of(const Matrix3<S>& R) {
  using std::sqrt;
  const S t = R(0, 0) + R(1, 1) + R(2, 2);
  Eigen::Matrix<S, 4, 1> q;
  if (t >= R(0, 0) && t >= R(1, 1) && t >= R(2, 2)) {
    const S r = sqrt(S(1) + t), s = S(0.5) / r;
    q << S(0.5) * r, (R(2, 1) - R(1, 2)) * s, (R(0, 2) - R(2, 0)) * s, (R(1, 0) - R(0, 1)) * s;
  } else if (R(0, 0) >= R(1, 1) && R(0, 0) >= R(2, 2)) {
    const S r = sqrt(S(1) + R(0, 0) - R(1, 1) - R(2, 2)), s = S(0.5) / r;
    q << (R(2, 1) - R(1, 2)) * s, S(0.5) * r, (R(0, 1) + R(1, 0)) * s, (R(0, 2) + R(2, 0)) * s;
  } else if (R(1, 1) >= R(2, 2)) {
    const S r = sqrt(S(1) + R(1, 1) - R(0, 0) - R(2, 2)), s = S(0.5) / r;
    q << (R(0, 2) - R(2, 0)) * s, (R(0, 1) + R(1, 0)) * s, S(0.5) * r, (R(1, 2) + R(2, 1)) * s;
  } else {
    const S r = sqrt(S(1) + R(2, 2) - R(0, 0) - R(1, 1)), s = S(0.5) / r;
    q << (R(1, 0) - R(0, 1)) * s, (R(0, 2) + R(2, 0)) * s, (R(1, 2) + R(2, 1)) * s, S(0.5) * r;
  }
  if (q[0] < S(0)) q = -q;
  return q / q.norm();
}

/// Whether entry k of the sensor's output is clamped by its cutoff (MuJoCo: real-valued readings to
/// [-cutoff, cutoff], touch to at most cutoff, quaternions never).
template <class S>
bool clamped(const Sensor& s, const S& x) {
  if (!(s.cutoff > 0) || s.kind == SensorKind::FrameQuat) return false;
  if (s.kind == SensorKind::Touch) return x > S(s.cutoff);
  return x > S(s.cutoff) || x < S(-s.cutoff);
}

/// Whether a reading (after the clamp) sits at its cutoff.
template <class S>
bool at_cutoff(const Sensor& s, const S& x) {
  if (!(s.cutoff > 0) || s.kind == SensorKind::FrameQuat) return false;
  if (s.kind == SensorKind::Touch) return x >= S(s.cutoff);
  return x >= S(s.cutoff) || x <= S(-s.cutoff);
}

/// The contact's normal force counts for a touch sensor on a site of body `body` (MuJoCo's rule: the
/// contact involves the body, and the ray from its point along the normal, turned to point away from
/// the body, towards the other one, meets the zone).
template <class S>
bool touch_counts(const ModelTpl<S>& model, const Sensor& s, const Pose<S>& site, const ContactTpl<S>& c) {
  const int body = model.frames[s.object].body;
  const int ba = model.geoms[c.geom_a].body, bb = model.geoms[c.geom_b].body;
  if (ba != body && bb != body) return false;
  // the normal points from a to b: into b; MuJoCo flips it when the sensor's body is b's
  Vector3<double> n, x;
  for (int k = 0; k < 3; ++k) {
    n[k] = value_of(c.normal[k]);
    x[k] = value_of(c.point[k] - site.p[k]);
  }
  if (bb == body) n = -n;
  Matrix3<double> R;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) R(r, k) = value_of(site.R(r, k));
  return ray_zone_distance(s.zone, s.zone_size, R.transpose() * x, R.transpose() * n.normalized()) >= 0;
}

}  // namespace gradyn::sensors_detail
