// Sensors: the model's named observations (model.sensors; MJCF <sensor>), with MuJoCo's definitions.
//
// What each kind reads (model.hpp, SensorKind). Frames are model frames (sites, links); a frame on the
// world does not move. p, R: the frame's world position and rotation; omega: its body's angular
// velocity; v_p: the world velocity of the frame's origin; g: model.gravity.
//   jointpos        q[idx_q]                         jointvel     v[idx_v]
//   framepos        p, or R_ref^T (p - p_ref)
//   framequat       the unit quaternion (w, x, y, z) of R, or of R_ref^T R, with w >= 0 (MuJoCo's
//                   sensordata order; MuJoCo does not fix the sign, so its reading may be the negative)
//   framelinvel     v_p, or R_ref^T (v_p - v_ref - omega_ref x (p - p_ref))   (as mj_sensorVel)
//   frameangvel     omega, or R_ref^T (omega - omega_ref)
//   gyro            R^T omega
//   accelerometer   R^T (a_p - g): the proper acceleration of the origin, a_p = a0 + alpha x p + omega x v_p
//                   from the bodies' spatial accelerations under qacc (at rest under gravity it reads
//                   +|g| upward, as MuJoCo's and a real IMU's)
//   touch           the sum of the normal contact forces on the frame's body whose ray (from the contact
//                   point along the normal, pointing away from that body) meets the site's zone (model.hpp,
//                   ZoneShape): MuJoCo's mjSENS_TOUCH. Contacts are data.contacts[0, data.ncontacts).
// Then each entry is clamped by the sensor's cutoff as MuJoCo clamps it. MJCF noise is kept in the
// model and not applied (MuJoCo does not apply it either).
//
// Which state: jointpos..gyro are functions of (q, v). accelerometer reads a generalized acceleration
// qacc and touch the contacts' normal forces; step_sensor_readings (sensors/step_sensors.hpp) takes both
// from one step: qacc = (v+ - v) / dt, the mean acceleration of the step (for the semi-implicit
// Euler step, the constrained acceleration, contact impulses included, as MuJoCo's qacc), and the
// normal forces of its contacts (penalty: the force; PGS and Ipm: impulse / dt).
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

template <class S> struct ModelTangentTpl;  // model/params.hpp

/// Fills readings (model.nsensordata() entries) from q, v and, where a sensor needs them, qacc (nv
/// entries; may be empty when no accelerometer is present) and contact_normal_force (one entry per
/// contact of data, data.ncontacts; may be empty when no touch sensor is present). Throws
/// ArgumentError naming the argument for wrong sizes. Leaves data.oMi, data.oS, data.sensor_ov and
/// data.sensor_oa filled.
template <class S>
void sensor_readings(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                     const VecRef<S>& qacc, const VecRef<S>& contact_normal_force, VecOut<S> readings);

/// Adjoint of sensor_readings: given readings_bar, ACCUMULATES q_bar (nq, ambient), v_bar (nv),
/// qacc_bar (nv; may be empty when qacc is) and contact_normal_force_bar (data.ncontacts; may be empty
/// when contact_normal_force is). The contacts' geometry (which contact a touch zone counts) is a
/// discrete choice and carries no gradient; a clamped entry (cutoff) passes none. Recomputes the
/// forward pass.
template <class S>
void sensor_readings_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                         const VecRef<S>& qacc, const VecRef<S>& contact_normal_force, const VecRef<S>& readings_bar,
                         VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> qacc_bar, VecOut<S> contact_normal_force_bar);

/// True when some sensor of the model reads the step (accelerometer, touch).
template <class S>
bool sensors_need_step(const ModelTpl<S>& model) {
  for (const Sensor& s : model.sensors)
    if (sensor_needs_step(s.kind)) return true;
  return false;
}

/// Distance along the ray from `origin` in unit `direction` (both in the zone's frame) to the zone's
/// surface, or -1 when the ray misses it; 0 when the origin is inside (MuJoCo's mju_rayGeom).
double ray_zone_distance(ZoneShape shape, const Vector3<double>& size, const Vector3<double>& origin,
                         const Vector3<double>& direction);

}  // namespace gradyn
