// The sensors' readings (sensors/sensors.hpp): one pass over the bodies for their world velocities
// (and accelerations), then each sensor from its frame's pose and motion.
#include "gradyn/sensors/sensors.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sensor_terms.hpp"

namespace gradyn {

const char* sensor_kind_name(SensorKind kind) {
  switch (kind) {
    case SensorKind::JointPos: return "jointpos";
    case SensorKind::JointVel: return "jointvel";
    case SensorKind::FramePos: return "framepos";
    case SensorKind::FrameQuat: return "framequat";
    case SensorKind::FrameLinVel: return "framelinvel";
    case SensorKind::FrameAngVel: return "frameangvel";
    case SensorKind::Gyro: return "gyro";
    case SensorKind::Accelerometer: return "accelerometer";
    case SensorKind::Touch: return "touch";
  }
  return "?";
}

int sensor_kind_dim(SensorKind kind) {
  switch (kind) {
    case SensorKind::JointPos:
    case SensorKind::JointVel:
    case SensorKind::Touch: return 1;
    case SensorKind::FrameQuat: return 4;
    default: return 3;
  }
}

namespace {

// The ray o + t d (t >= 0) against the solid: the interval [t0, t1] of t inside, or none.
struct Interval {
  double t0 = 0, t1 = -1;
  bool empty() const { return t1 < t0 || t1 < 0; }
};

Interval ray_unit_sphere(const Vector3<double>& o, const Vector3<double>& d) {
  const double a = d.squaredNorm(), b = o.dot(d), c = o.squaredNorm() - 1;
  const double disc = b * b - a * c;
  if (disc < 0 || a <= 0) return {};
  const double r = std::sqrt(disc);
  return {(-b - r) / a, (-b + r) / a};
}

Interval ray_slab(double o, double d, double h) {  // |o + t d| <= h
  if (d == 0) return std::abs(o) <= h ? Interval{-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()} : Interval{};
  double t0 = (-h - o) / d, t1 = (h - o) / d;
  if (t0 > t1) std::swap(t0, t1);
  return {t0, t1};
}

Interval intersect(Interval a, Interval b) { return {std::max(a.t0, b.t0), std::min(a.t1, b.t1)}; }

Interval ray_infinite_cylinder(const Vector3<double>& o, const Vector3<double>& d, double r) {  // x^2 + y^2 <= r^2
  const double a = d.x() * d.x() + d.y() * d.y(), b = o.x() * d.x() + o.y() * d.y();
  const double c = o.x() * o.x() + o.y() * o.y() - r * r;
  if (a == 0)
    return c <= 0 ? Interval{-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()} : Interval{};
  const double disc = b * b - a * c;
  if (disc < 0) return {};
  const double s = std::sqrt(disc);
  return {(-b - s) / a, (-b + s) / a};
}

double entry(Interval i) { return i.empty() ? -1.0 : std::max(0.0, i.t0); }

}  // namespace

double ray_zone_distance(ZoneShape shape, const Vector3<double>& size, const Vector3<double>& o,
                         const Vector3<double>& d) {
  switch (shape) {
    case ZoneShape::Sphere:
      if (!(size[0] > 0)) return -1;
      return entry(ray_unit_sphere(o / size[0], d / size[0]));
    case ZoneShape::Ellipsoid:
      if (!(size.minCoeff() > 0)) return -1;
      return entry(ray_unit_sphere(o.cwiseQuotient(size), d.cwiseQuotient(size)));
    case ZoneShape::Box:
      return entry(intersect(intersect(ray_slab(o.x(), d.x(), size[0]), ray_slab(o.y(), d.y(), size[1])),
                             ray_slab(o.z(), d.z(), size[2])));
    case ZoneShape::Cylinder:
      return entry(intersect(ray_infinite_cylinder(o, d, size[0]), ray_slab(o.z(), d.z(), size[1])));
    case ZoneShape::Capsule: {
      double best = -1;
      auto take = [&](double t) {
        if (t >= 0 && (best < 0 || t < best)) best = t;
      };
      take(entry(intersect(ray_infinite_cylinder(o, d, size[0]), ray_slab(o.z(), d.z(), size[1]))));
      if (size[0] > 0)
        for (double z : {-size[1], size[1]})
          take(entry(ray_unit_sphere((o - Vector3<double>(0, 0, z)) / size[0], d / size[0])));
      return best;
    }
  }
  return -1;
}

template <class S>
void sensor_readings(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                     const VecRef<S>& qacc, const VecRef<S>& contact_normal_force, VecOut<S> readings) {
  using namespace sensors_detail;
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("readings", readings.size(), model.nsensordata());
  const bool with_acc = any_of_kind(model, SensorKind::Accelerometer);
  if (with_acc || qacc.size() != 0) check_size("qacc", qacc.size(), model.nv);
  if (any_of_kind(model, SensorKind::Touch) || contact_normal_force.size() != 0)
    check_size("contact_normal_force", contact_normal_force.size(), data.ncontacts);
  body_motion(model, data, q, v, qacc, with_acc);

  for (const Sensor& s : model.sensors) {
    auto out = readings.segment(s.adr, s.dim());
    switch (s.kind) {
      case SensorKind::JointPos: out[0] = q[model.idx_q[s.object]]; break;
      case SensorKind::JointVel: out[0] = v[model.idx_v[s.object]]; break;
      case SensorKind::Gyro: {
        const FrameMotion<S> f = frame_motion(model, data, s.object, false);
        out = f.pose.R.transpose() * f.omega;
        break;
      }
      case SensorKind::Accelerometer: {
        const FrameMotion<S> f = frame_motion(model, data, s.object, true);
        out = f.pose.R.transpose() * (f.a - model.gravity);
        break;
      }
      case SensorKind::Touch: {
        const Pose<S> site = frame_motion(model, data, s.object, false).pose;
        S sum(0);
        for (int k = 0; k < data.ncontacts; ++k)
          if (contact_normal_force[k] > S(0) && touch_counts(model, s, site, data.contacts[k]))
            sum += contact_normal_force[k];
        out[0] = sum;
        break;
      }
      case SensorKind::FramePos:
      case SensorKind::FrameQuat:
      case SensorKind::FrameLinVel:
      case SensorKind::FrameAngVel: {
        const FrameMotion<S> f = frame_motion(model, data, s.object, false);
        const bool ref = s.reference >= 0;
        const FrameMotion<S> g = ref ? frame_motion(model, data, s.reference, false) : FrameMotion<S>{};
        const Matrix3<S>& Rg = g.pose.R;  // identity for the world
        if (s.kind == SensorKind::FramePos) out = Rg.transpose() * (f.pose.p - g.pose.p);
        else if (s.kind == SensorKind::FrameQuat) out = quaternion_of<S>(Rg.transpose() * f.pose.R);
        else if (s.kind == SensorKind::FrameAngVel) out = Rg.transpose() * (f.omega - g.omega);
        else out = Rg.transpose() * (f.v - g.v - g.omega.cross(f.pose.p - g.pose.p));
        break;
      }
    }
    for (int k = 0; k < s.dim(); ++k)
      if (clamped(s, out[k])) out[k] = out[k] > S(0) ? S(s.cutoff) : S(-s.cutoff);
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                     \
  template void sensor_readings<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,          \
                                   const VecRef<S>&, const VecRef<S>&, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
