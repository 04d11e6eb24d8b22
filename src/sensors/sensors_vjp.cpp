// Adjoint of the sensors' readings (sensors/sensors.hpp). Each sensor hands adjoints to its frames'
// poses (world wrenches, as in dynamics/kinematics_vjp.hpp: a point adjoint x_bar is [x x x_bar; x_bar],
// a rotation's is a torque) and to its bodies' world velocities ov and accelerations oa (spatial,
// about the world origin). Then, with oa_i = oa_parent + oS_i qacc_i + ov_parent x s_i, s_i = oS_i v_i
// = ov_i - ov_parent:
//   * the terms oS_i qacc_i are world_velocities(qacc): world_velocities_vjp gives qacc_bar and poses;
//   * F_i, the subtree sum of oa_bar, reaches ov_parent through ov_parent x s_i (s_i x* F_i) and s_i
//     (-ov_parent x* F_i), which is ov_i - ov_parent;
//   * ov_bar then goes through world_velocities_vjp(v), and every pose adjoint through body_poses_vjp.
// A vector read in a moving frame, r = R^T u, gives u_bar = R r_bar and the torque u_bar x u on R.
// A quaternion r of R_ref^T R moves by dr = 0.5 (0, phi) (x) r, phi = R_ref^T (theta - theta_ref) for
// world rotations theta of the frames: phi_bar = 0.5 Im(r_bar (x) conj(r)).
#include <vector>

#include "gradyn/dynamics/kinematics_vjp.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sensors/sensors.hpp"
#include "sensor_terms.hpp"

namespace gradyn {

namespace {

using namespace sensors_detail;

template <class S>
struct Adjoints {
  const ModelTpl<S>& model;
  DataTpl<S>& data;

  void point(const FrameMotion<S>& f, const Vector3<S>& x_bar) {
    if (f.body < 0) return;
    data.sensor_pose_bar[f.body].template head<3>() += f.pose.p.cross(x_bar);
    data.sensor_pose_bar[f.body].template tail<3>() += x_bar;
  }
  void torque(const FrameMotion<S>& f, const Vector3<S>& t) {
    if (f.body >= 0) data.sensor_pose_bar[f.body].template head<3>() += t;
  }
  // omega and v (the origin's velocity v0 + omega x p)
  void velocity(const FrameMotion<S>& f, const Vector3<S>& omega_bar, const Vector3<S>& v_bar) {
    if (f.body < 0) return;
    data.sensor_ov_bar[f.body].template head<3>() += omega_bar + f.pose.p.cross(v_bar);
    data.sensor_ov_bar[f.body].template tail<3>() += v_bar;
    point(f, Vector3<S>(v_bar.cross(f.omega)));
  }
  // a = a0 + alpha x p + omega x v
  void acceleration(const FrameMotion<S>& f, const Vector3<S>& a_bar) {
    if (f.body < 0) return;
    data.sensor_oa_bar[f.body].template head<3>() += f.pose.p.cross(a_bar);
    data.sensor_oa_bar[f.body].template tail<3>() += a_bar;
    point(f, Vector3<S>(a_bar.cross(f.alpha)));
    velocity(f, Vector3<S>(f.v.cross(a_bar)), Vector3<S>(a_bar.cross(f.omega)));
  }
};

// Quaternion product (w, x, y, z).
template <class S>
Eigen::Matrix<S, 4, 1> quat_mul(const Eigen::Matrix<S, 4, 1>& a, const Eigen::Matrix<S, 4, 1>& b) {
  Eigen::Matrix<S, 4, 1> r;
  r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  return r;
}

}  // namespace

template <class S>
void sensor_readings_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                         const VecRef<S>& qacc, const VecRef<S>& contact_normal_force, const VecRef<S>& readings_bar,
                         VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> qacc_bar, VecOut<S> contact_normal_force_bar) {
  const int ns = model.nsensordata();
  check_size("readings_bar", readings_bar.size(), ns);
  check_size("q_bar", q_bar.size(), model.nq);
  check_size("v_bar", v_bar.size(), model.nv);
  check_size("qacc_bar", qacc_bar.size(), qacc.size());
  check_size("contact_normal_force_bar", contact_normal_force_bar.size(), contact_normal_force.size());
  // The forward pass: body motion, and the readings before the cutoff decides what passes.
  VectorX<S> readings(ns);
  sensor_readings<S>(model, data, q, v, qacc, contact_normal_force, readings);
  const bool with_acc = any_of_kind(model, SensorKind::Accelerometer);
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) {
    data.sensor_ov_bar[i].setZero();
    data.sensor_oa_bar[i].setZero();
    data.sensor_pose_bar[i].setZero();
  }
  Adjoints<S> adj{model, data};

  for (const Sensor& s : model.sensors) {
    Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 4, 1> r_bar = readings_bar.segment(s.adr, s.dim());
    // A clamped entry reads +-cutoff and passes no gradient (a reading exactly at the cutoff, where the
    // clamp's derivative jumps, takes the clamped side's zero).
    bool any = false;
    for (int k = 0; k < s.dim(); ++k) {
      if (at_cutoff(s, readings[s.adr + k])) r_bar[k] = S(0);
      any = any || !is_inert_zero(r_bar[k]);
    }
    if (!any) continue;
    switch (s.kind) {
      case SensorKind::JointPos: q_bar[model.idx_q[s.object]] += r_bar[0]; break;
      case SensorKind::JointVel: v_bar[model.idx_v[s.object]] += r_bar[0]; break;
      case SensorKind::Gyro: {  // R^T omega
        const FrameMotion<S> f = frame_motion(model, data, s.object, false);
        const Vector3<S> u_bar = f.pose.R * r_bar.template head<3>();
        adj.torque(f, Vector3<S>(u_bar.cross(f.omega)));
        adj.velocity(f, u_bar, Vector3<S>::Zero());
        break;
      }
      case SensorKind::Accelerometer: {  // R^T (a - g)
        const FrameMotion<S> f = frame_motion(model, data, s.object, true);
        const Vector3<S> u = f.a - model.gravity;
        const Vector3<S> u_bar = f.pose.R * r_bar.template head<3>();
        adj.torque(f, Vector3<S>(u_bar.cross(u)));
        adj.acceleration(f, u_bar);
        break;
      }
      case SensorKind::Touch: {
        const Pose<S> site = frame_motion(model, data, s.object, false).pose;
        for (int k = 0; k < data.ncontacts; ++k)
          if (contact_normal_force[k] > S(0) && touch_counts(model, s, site, data.contacts[k]))
            contact_normal_force_bar[k] += r_bar[0];
        break;
      }
      case SensorKind::FramePos:
      case SensorKind::FrameQuat:
      case SensorKind::FrameLinVel:
      case SensorKind::FrameAngVel: {
        const FrameMotion<S> f = frame_motion(model, data, s.object, false);
        const bool ref = s.reference >= 0;
        const FrameMotion<S> g = ref ? frame_motion(model, data, s.reference, false) : FrameMotion<S>{};
        const Matrix3<S>& Rg = g.pose.R;
        if (s.kind == SensorKind::FrameQuat) {
          const Eigen::Matrix<S, 4, 1> r = quaternion_of<S>(Rg.transpose() * f.pose.R);
          const Eigen::Matrix<S, 4, 1> conj(r[0], -r[1], -r[2], -r[3]);
          const Eigen::Matrix<S, 4, 1> rb = r_bar.template head<4>();
          const Vector3<S> phi_bar = S(0.5) * quat_mul<S>(rb, conj).template tail<3>();
          const Vector3<S> theta_bar = Rg * phi_bar;
          adj.torque(f, theta_bar);
          adj.torque(g, Vector3<S>(-theta_bar));
          break;
        }
        // r = Rg^T u
        Vector3<S> u;
        const Vector3<S> u_bar = Rg * r_bar.template head<3>();
        const Vector3<S> d = f.pose.p - g.pose.p;
        if (s.kind == SensorKind::FramePos) {
          u = d;
          adj.point(f, u_bar);
          adj.point(g, Vector3<S>(-u_bar));
        } else if (s.kind == SensorKind::FrameAngVel) {
          u = f.omega - g.omega;
          adj.velocity(f, u_bar, Vector3<S>::Zero());
          adj.velocity(g, Vector3<S>(-u_bar), Vector3<S>::Zero());
        } else {  // u = v_f - v_g - omega_g x d
          u = f.v - g.v - g.omega.cross(d);
          adj.velocity(f, Vector3<S>::Zero(), u_bar);
          adj.velocity(g, Vector3<S>(-d.cross(u_bar)), Vector3<S>(-u_bar));  // -omega_g x d: omega_g_bar = -(d x u_bar)
          const Vector3<S> d_bar = -u_bar.cross(g.omega);                     // u_bar . (-omega_g x d) = d . (-u_bar x omega_g)
          adj.point(f, d_bar);
          adj.point(g, Vector3<S>(-d_bar));
        }
        if (ref) adj.torque(g, Vector3<S>(u_bar.cross(u)));
        break;
      }
    }
  }

  // Accelerations -> qacc, velocities and poses.
  if (with_acc) {
    std::vector<Vector6<S>>& F = data.sensor_oa_bar;  // becomes the subtree sums
    world_velocities_vjp<S>(model, data, qacc, F, qacc_bar, data.sensor_pose_bar);
    for (int i = nb - 1; i >= 0; --i)
      if (model.parent[i] >= 0) F[model.parent[i]] += F[i];
    for (int i = 0; i < nb; ++i) {
      const int p = model.parent[i];
      if (p < 0) continue;  // ov of the world is zero: no term
      const Vector6<S> s = data.sensor_ov[i] - data.sensor_ov[p];
      const Vector6<S> s_bar = -cross_force<S>(data.sensor_ov[p], F[i]);
      data.sensor_ov_bar[p] += cross_force<S>(s, F[i]) - s_bar;
      data.sensor_ov_bar[i] += s_bar;
    }
  }
  world_velocities_vjp<S>(model, data, v, data.sensor_ov_bar, v_bar, data.sensor_pose_bar);
  ModelTangentTpl<S> model_bar(model);  // the model's adjoint is not returned (yet)
  body_poses_vjp<S>(model, data, q, data.sensor_pose_bar, q_bar, model_bar);
}

#define GRADYN_INSTANTIATE(S)                                                                                      \
  template void sensor_readings_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,       \
                                       const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, VecOut<S>, VecOut<S>, \
                                       VecOut<S>, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
