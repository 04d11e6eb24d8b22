// The per-pixel kernels of render() and render_vjp(), in the geom frame:
//   intersect   (double) the nearest hit of a ray with one geom: its distance and the discrete
//               choices (which part: side, cap, face), decided on values;
//   surface     (templated) the hit on a given part: distance, outward normal, texture coordinates,
//               smooth in the ray, the geom size; render_vjp runs it in forward mode with the part
//               held fixed;
//   sample      (double) bilinear texture lookup with its derivatives and weights.
// No allocation, no exceptions.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradyn/render/camera.hpp"

namespace gradyn::render_detail {

enum Part : int { kNone = -1, kPlane = 0, kSphere, kSide, kCapTop, kCapBottom, kFace };

inline constexpr double kPi = 3.14159265358979323846;

/// Smallest distance along the ray that counts as a hit (in front of the camera centre).
inline constexpr double kMinT = 1e-9;

// First root of a t^2 + 2 b t + c = 0 when the ray starts outside (c > 0) and reaches the surface.
inline bool first_root(double a, double b, double c, double& t) {
  if (c <= 0 || a <= 0) return false;
  const double disc = b * b - a * c;
  if (disc < 0) return false;
  t = (-b - std::sqrt(disc)) / a;
  return t > kMinT;
}

/// Nearest hit of the ray o + t d (geom frame, d unit) with geom g in (kMinT, t_best): on success
/// t_best, part and face are updated and true is returned.
inline bool intersect(const Geom& g, const Vector3<double>& o, const Vector3<double>& d, double& t_best, int& part,
                      int& face) {
  const Vector3<double>& s = g.size;
  double t = 0;
  switch (g.type) {
    case GeomType::Plane:
      if (o.z() > 0 && d.z() < 0) {
        t = -o.z() / d.z();
        if (t > kMinT && t < t_best) {
          t_best = t, part = kPlane, face = 0;
          return true;
        }
      }
      return false;
    case GeomType::Sphere:
      if (first_root(d.squaredNorm(), o.dot(d), o.squaredNorm() - s[0] * s[0], t) && t < t_best) {
        t_best = t, part = kSphere, face = 0;
        return true;
      }
      return false;
    case GeomType::Capsule:
    case GeomType::Cylinder: {
      const double r = s[0], h = s[1];
      const bool capsule = g.type == GeomType::Capsule;
      if (capsule) {  // inside: closer to the segment than r
        const double zc = std::clamp(o.z(), -h, h);
        if (o.x() * o.x() + o.y() * o.y() + (o.z() - zc) * (o.z() - zc) <= r * r) return false;
      } else if (o.x() * o.x() + o.y() * o.y() <= r * r && std::abs(o.z()) <= h) {
        return false;
      }
      bool found = false;
      const double a = d.x() * d.x() + d.y() * d.y();
      if (first_root(a, o.x() * d.x() + o.y() * d.y(), o.x() * o.x() + o.y() * o.y() - r * r, t) && t < t_best &&
          std::abs(o.z() + t * d.z()) <= h) {
        t_best = t, part = kSide, face = 0, found = true;
      }
      for (int sign = 1; sign >= -1; sign -= 2) {
        if (capsule) {
          const Vector3<double> oc(o.x(), o.y(), o.z() - sign * h);
          if (first_root(d.squaredNorm(), oc.dot(d), oc.squaredNorm() - r * r, t) && t < t_best &&
              sign * (o.z() + t * d.z()) >= h) {
            t_best = t, part = sign > 0 ? kCapTop : kCapBottom, face = 0, found = true;
          }
        } else if (sign * o.z() > h && sign * d.z() < 0) {
          t = (sign * h - o.z()) / d.z();
          const double x = o.x() + t * d.x(), y = o.y() + t * d.y();
          if (t > kMinT && t < t_best && x * x + y * y <= r * r) {
            t_best = t, part = sign > 0 ? kCapTop : kCapBottom, face = 0, found = true;
          }
        }
      }
      return found;
    }
    case GeomType::Box: {
      double t_near = -std::numeric_limits<double>::infinity(), t_far = std::numeric_limits<double>::infinity();
      int entry = -1;
      for (int k = 0; k < 3; ++k) {
        if (d[k] == 0) {
          if (std::abs(o[k]) > s[k]) return false;
          continue;
        }
        double t1 = (-s[k] - o[k]) / d[k], t2 = (s[k] - o[k]) / d[k];
        if (t1 > t2) std::swap(t1, t2);
        if (t1 > t_near) t_near = t1, entry = 2 * k + (d[k] < 0 ? 1 : 0);  // face 2k+1: the +k face
        t_far = std::min(t_far, t2);
      }
      if (entry < 0 || t_near > t_far || t_near <= kMinT || t_near >= t_best) return false;
      t_best = t_near, part = kFace, face = entry;
      return true;
    }
    case GeomType::ConvexHull: {
      if (!g.hull) return false;
      const Vector3<double> os = o.cwiseQuotient(s), ds = d.cwiseQuotient(s);
      double t_near = -std::numeric_limits<double>::infinity(), t_far = std::numeric_limits<double>::infinity();
      int entry = -1;
      const auto& faces = g.hull->faces;
      for (int f = 0; f < static_cast<int>(faces.size()); ++f) {
        const double num = faces[f].offset - faces[f].normal.dot(os), den = faces[f].normal.dot(ds);
        if (den == 0) {
          if (num < 0) return false;
          continue;
        }
        const double tf = num / den;
        if (den < 0) {
          if (tf > t_near) t_near = tf, entry = f;
        } else {
          t_far = std::min(t_far, tf);
        }
      }
      if (entry < 0 || t_near > t_far || t_near <= kMinT || t_near >= t_best) return false;
      t_best = t_near, part = kFace, face = entry;
      return true;
    }
  }
  return false;
}

template <class S>
struct Surface {
  S t;
  Vector3<S> normal;  // outward, unit, geom frame
  S u, v;
  bool wrap_u = false, wrap_v = false;
};

template <class S>
S longitude(const S& x, const S& y) {
  using std::atan2;
  return S(0.5) + atan2(y, x) / S(2 * kPi);
}

template <class S>
S sphere_root(const Vector3<S>& o, const Vector3<S>& d, const S& r) {
  using std::sqrt;
  const S a = d.squaredNorm(), b = o.dot(d), c = o.squaredNorm() - r * r;
  return (-b - sqrt(b * b - a * c)) / a;
}

/// The hit on `part`/`face` (as intersect() chose them) of a geom of the given type, size and hull.
template <class S>
void surface(GeomType type, const Vector3<S>& size, const ConvexHull* hull, double tile, const Vector3<S>& o,
             const Vector3<S>& d, int part, int face, Surface<S>& out) {
  using std::atan2;
  using std::sqrt;
  switch (type) {
    case GeomType::Plane: {
      out.t = -o.z() / d.z();
      const Vector3<S> x = o + out.t * d;
      out.normal = Vector3<S>::UnitZ();
      out.u = x.x() / S(tile);
      out.v = -x.y() / S(tile);
      out.wrap_u = out.wrap_v = true;
      return;
    }
    case GeomType::Sphere: {
      const S& r = size[0];
      out.t = sphere_root<S>(o, d, r);
      const Vector3<S> x = o + out.t * d;
      out.normal = x / r;
      out.u = longitude<S>(x.x(), x.y());
      out.v = atan2(sqrt(x.x() * x.x() + x.y() * x.y()), x.z()) / S(kPi);
      out.wrap_u = true, out.wrap_v = false;
      return;
    }
    case GeomType::Capsule:
    case GeomType::Cylinder: {
      const S &r = size[0], &h = size[1];
      const bool capsule = type == GeomType::Capsule;
      const S z_top = capsule ? S(h + r) : S(h);
      if (part == kSide) {
        const S a = d.x() * d.x() + d.y() * d.y(), b = o.x() * d.x() + o.y() * d.y(),
                c = o.x() * o.x() + o.y() * o.y() - r * r;
        out.t = (-b - sqrt(b * b - a * c)) / a;
        const Vector3<S> x = o + out.t * d;
        out.normal = Vector3<S>(x.x() / r, x.y() / r, S(0));
        out.u = longitude<S>(x.x(), x.y());
        out.v = (z_top - x.z()) / (S(2) * z_top);
        out.wrap_u = true, out.wrap_v = false;
        return;
      }
      const S sign = part == kCapTop ? S(1) : S(-1);
      if (capsule) {
        const Vector3<S> c(S(0), S(0), sign * h);
        out.t = sphere_root<S>(Vector3<S>(o - c), d, r);
        const Vector3<S> x = o + out.t * d;
        out.normal = (x - c) / r;
        out.u = longitude<S>(x.x(), x.y());
        out.v = (z_top - x.z()) / (S(2) * z_top);
        out.wrap_u = true, out.wrap_v = false;
      } else {
        out.t = (sign * h - o.z()) / d.z();
        const Vector3<S> x = o + out.t * d;
        out.normal = Vector3<S>(S(0), S(0), sign);
        out.u = S(0.5) + x.x() / (S(2) * r);
        out.v = S(0.5) - x.y() / (S(2) * r);
        out.wrap_u = out.wrap_v = false;
      }
      return;
    }
    case GeomType::Box: {
      const int k = face / 2, a = (k + 1) % 3, b = (k + 2) % 3;
      const S sign = face % 2 ? S(1) : S(-1);
      out.t = (sign * size[k] - o[k]) / d[k];
      const Vector3<S> x = o + out.t * d;
      out.normal.setZero();
      out.normal[k] = sign;
      out.u = S(0.5) + x[a] / (S(2) * size[a]);
      out.v = S(0.5) - x[b] / (S(2) * size[b]);
      out.wrap_u = out.wrap_v = false;
      return;
    }
    case GeomType::ConvexHull: {
      const ConvexHull::Face& f = hull->faces[face];
      const Vector3<S> os = o.cwiseQuotient(size), ds = d.cwiseQuotient(size);
      const Vector3<S> n = f.normal.template cast<S>();
      out.t = (S(f.offset) - n.dot(os)) / n.dot(ds);
      const Vector3<S> x = os + out.t * ds;  // unscaled hull coordinates
      out.normal = n.cwiseQuotient(size);
      out.normal /= out.normal.norm();
      int k = 0;
      f.normal.cwiseAbs().maxCoeff(&k);
      const int a = (k + 1) % 3, b = (k + 2) % 3;
      out.u = (x[a] - S(hull->aabb_min[a])) / S(hull->aabb_max[a] - hull->aabb_min[a]);
      out.v = S(1) - (x[b] - S(hull->aabb_min[b])) / S(hull->aabb_max[b] - hull->aabb_min[b]);
      out.wrap_u = out.wrap_v = false;
      return;
    }
  }
}

/// Bilinear texture lookup at (u, v): the colour, its derivatives in u and v, and the four texels
/// (indices of their first channel in Texture::rgb) with their weights.
struct Sample {
  Vector3<double> color, du, dv;
  int index[4];
  double weight[4];
};

inline int texel_index(int i, int n, bool wrap) {
  if (wrap) {
    i %= n;
    return i < 0 ? i + n : i;
  }
  return std::clamp(i, 0, n - 1);
}

inline void sample(const Texture& tex, double u, double v, bool wrap_u, bool wrap_v, Sample& out) {
  const int w = tex.width, h = tex.height;
  double cx = u * w - 0.5, cy = v * h - 0.5;
  if (!std::isfinite(cx)) cx = 0;  // (never for finite poses; keeps the int conversions defined)
  if (!std::isfinite(cy)) cy = 0;
  if (wrap_u) cx -= w * std::floor(cx / w);  // keeps the fraction exact for far-away tiles
  if (wrap_v) cy -= h * std::floor(cy / h);
  const double x0 = std::floor(cx), y0 = std::floor(cy);
  const double fx = cx - x0, fy = cy - y0;
  // Clamped coordinates: the floor of a huge value would overflow an int.
  const int ix = static_cast<int>(std::clamp(x0, -1.0, static_cast<double>(w)));
  const int iy = static_cast<int>(std::clamp(y0, -1.0, static_cast<double>(h)));
  const int c0 = texel_index(ix, w, wrap_u), c1 = texel_index(ix + 1, w, wrap_u);
  const int r0 = texel_index(iy, h, wrap_v), r1 = texel_index(iy + 1, h, wrap_v);
  out.index[0] = 3 * (r0 * w + c0), out.index[1] = 3 * (r0 * w + c1);
  out.index[2] = 3 * (r1 * w + c0), out.index[3] = 3 * (r1 * w + c1);
  out.weight[0] = (1 - fx) * (1 - fy), out.weight[1] = fx * (1 - fy);
  out.weight[2] = (1 - fx) * fy, out.weight[3] = fx * fy;
  const double* p = tex.rgb.data();
  const Eigen::Map<const Vector3<double>> t00(p + out.index[0]), t01(p + out.index[1]), t10(p + out.index[2]),
      t11(p + out.index[3]);
  out.color = out.weight[0] * t00 + out.weight[1] * t01 + out.weight[2] * t10 + out.weight[3] * t11;
  out.du = w * ((1 - fy) * (t01 - t00) + fy * (t11 - t10));
  out.dv = h * ((1 - fx) * (t10 - t00) + fx * (t11 - t01));
}

/// The look of geom g (the default when the appearance lists none).
inline const GeomLook& look(const Appearance& appearance, int g) {
  static const GeomLook kDefault;
  return appearance.geoms.empty() ? kDefault : appearance.geoms[g];
}

/// Per-camera constants of pixel_direction.
struct PixelRays {
  explicit PixelRays(const Camera& camera) {
    const double ty = std::tan(0.5 * camera.fovy * kPi / 180.0);
    sy = ty, sx = ty * camera.width / camera.height;
    inv_w = 1.0 / camera.width, inv_h = 1.0 / camera.height;
  }
  Vector3<double> direction(int i, int j) const {
    const Vector3<double> d((2 * (j + 0.5) * inv_w - 1) * sx, (1 - 2 * (i + 0.5) * inv_h) * sy, -1.0);
    return d / d.norm();
  }
  double sx, sy, inv_w, inv_h;
};

}  // namespace gradyn::render_detail
