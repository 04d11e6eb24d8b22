// Reverse mode of collide(): contact adjoints -> body pose adjoints (world wrenches) and geom size
// and placement adjoints.
//
// Method: local forward mode per contact pair. A pair's contacts depend only on its two geoms'
// world poses oMg and sizes. For every pair with reported contacts, collide_geoms<ADScalar> is
// re-run at the same poses with derivative seeds on
//   directions 0-5    a left world twist xi_a = [dtheta; dp0] of geom a's pose (d oMg = xi^ oMg),
//   directions 6-11   the same for geom b,
//   then              the size entries each geom uses (geom_size_count),
// kADChunk (8) directions per run, at most 18 directions (3 runs). The contact adjoints dotted with
// the derivative columns give the pair's world wrenches on the two geoms and the size adjoints.
// The branches taken are decided on values, so the re-run takes the same ones as collide() did.
// One pair skips the re-run: a sphere on a plane (feet on the ground, the pair of most rollouts),
// whose single contact is differentiated in closed form (plane_sphere_vjp; the tests hold it to the
// forward-mode result).
//
// Matching the re-run's contacts to those in data: collide() writes a pair's contacts
// consecutively and in collide_geoms' order, keeping a prefix when Data::contacts fills up (only
// the last pair can be cut). The re-run uses model.contact.margin (the margin step() passes); its
// contacts are matched by index when they are the same (count and values). If collide() was
// called with another margin, the pair is re-run with an unbounded margin (every routine then
// reports a superset of its contacts: thresholds only drop contacts, and "keep the deepest"
// keeps the deeper ones) and each contact is matched to the re-run contact with the same
// point, normal and depth. A contact with no match means data.contacts and data.oMg disagree
// (stale data): ArgumentError.
//
// From geom wrenches to the outputs. A geom is rigidly attached to its body, so a left world
// twist of the body moves the geom by the same world twist: the geom's wrench [tau; f] (about
// the world origin) is added to pose_bar[body] as it is. For the placement M (geom frame in the
// body frame oMi): perturbing M by a left twist eta in the body frame, M' = exp(eta^) M, moves
// the geom by the world twist Ad(oMi) eta, so eta's adjoint is the body-frame wrench
// tau_b = R_i^T (tau - p_i x f), f_b = R_i^T f. With dR_M = [dtheta]x R_M, dp_M = dtheta x p_M + dp:
//   geom_placement_p += f_b,   geom_placement_R += 1/2 [tau_b - p_M x f_b]x R_M,
// the latter being the adjoint's component tangent to the rotations at R_M (the narrowphase
// reads R as a rotation, R^T as its inverse, so only this component is defined; the rpy chain
// rule in params_gradient sees only it). World geoms: oMi = identity, no pose_bar.
//
// No allocation: the AD geoms carry no name, the pair's contacts live on the stack.
//
// Scalar = ADScalar: the adjoint of an AD forward pass would need second derivatives of the
// narrowphase (nested forward mode), which is not supported: collide_vjp<ADScalar> throws
// ArgumentError when there is a contact (with none, there is nothing to add).
#include "gradyn/collision/collide_vjp.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide.hpp"
#include "gradyn/model/params.hpp"
#include "narrowphase.hpp"

namespace gradyn {

namespace {

using AD = ADScalar;

constexpr int kTwistDirections = 12;  // 6 per geom
constexpr int kMaxDirections = kTwistDirections + 2 * 3;

// Derivative slot of direction j in the run that seeds directions [first, first + kADChunk).
int slot(int j, int first) { return j >= first && j < first + kADChunk ? j - first : -1; }

// P moved by the left world twist whose components are directions dir0 .. dir0 + 5.
Pose<AD> seeded_pose(const Pose<double>& P, int dir0, int first) {
  Vector3<AD> dtheta, dp0;
  for (int k = 0; k < 3; ++k) {
    dtheta[k] = ad_seed(0.0, slot(dir0 + k, first));
    dp0[k] = ad_seed(0.0, slot(dir0 + 3 + k, first));
  }
  const Pose<AD> Q = P.cast<AD>();
  return Pose<AD>(Matrix3<AD>(Q.R + skew<AD>(dtheta) * Q.R), Vector3<AD>(Q.p + dtheta.cross(Q.p) + dp0));
}

// The geom as the pair routines read it (type, size, hull; no name, so nothing is allocated), its
// used size entries seeded as directions dir0 ...
GeomTpl<AD> seeded_geom(const Geom& g, int dir0, int first) {
  GeomTpl<AD> out;
  out.type = g.type;
  out.body = g.body;
  out.hull = g.hull;  // shared: a reference count, no allocation
  const int used = geom_size_count(g.type);
  for (int k = 0; k < 3; ++k) out.size[k] = ad_seed(g.size[k], k < used ? slot(dir0 + k, first) : -1);
  return out;
}

// The same contact (values) to rounding: point, normal and depth.
template <class S>
bool same_contact(const Contact& c, const Vector3<S>& point, const Vector3<S>& normal, const S& depth) {
  const double tol = 1e-9 * (1 + c.point.cwiseAbs().maxCoeff() + std::abs(c.depth));
  double err = std::abs(c.depth - value_of(depth));
  for (int i = 0; i < 3; ++i) {
    err = std::max(err, std::abs(c.point[i] - value_of(point[i])));
    err = std::max(err, std::abs(c.normal[i] - value_of(normal[i])));
  }
  return err <= tol;
}
bool same_contact(const Contact& c, const ContactTpl<AD>& d) { return same_contact<AD>(c, d.point, d.normal, d.depth); }

std::string pair_name(const Model& model, int a, int b) {
  return "geoms '" + model.geoms[a].name + "' and '" + model.geoms[b].name + "'";
}

// Adds the world wrench w (on geom g) to its body's pose adjoint and to g's placement adjoint.
void add_geom_wrench(const Model& model, const Data& data, int g, const double* w, std::vector<Vector6<double>>& pose_bar,
                     ModelTangent& model_bar) {
  const Eigen::Vector3d tau(w[0], w[1], w[2]), f(w[3], w[4], w[5]);
  const Geom& geom = model.geoms[g];
  Eigen::Vector3d tau_b = tau, f_b = f;
  if (geom.body >= 0) {
    pose_bar[geom.body].head<3>() += tau;
    pose_bar[geom.body].tail<3>() += f;
    const Pose<double>& B = data.oMi[geom.body];
    tau_b = B.R.transpose() * (tau - B.p.cross(f));
    f_b = B.R.transpose() * f;
  }
  const Pose<double>& M = geom.placement;
  model_bar.geom_placement_p[g] += f_b;
  model_bar.geom_placement_R[g] += 0.5 * skew<double>(Eigen::Vector3d(tau_b - M.p.cross(f_b))) * M.R;
}

// Re-runs the narrowphase of the pair of contacts [c0, c1) of data (all of the pair (a, b); `cut`
// when collide() may have dropped the pair's later contacts: the buffer filled up at c1) in
// forward mode, kADChunk directions at a time, and hands each run to visit(first, out, match):
// out[match[k]] is data's contact c0 + k with the derivatives of directions [first, first +
// kADChunk). Directions: geom a's twist at twist_a (-1: not seeded), geom b's at twist_b, then
// (seed_sizes) the size entries of a at size0 and of b after them; ndir in all.
template <class Visit>
void run_pair_forward_mode(const Model& model, const Data& data, int c0, int c1, bool cut, int twist_a, int twist_b,
                           bool seed_sizes, int size0, int ndir, Visit&& visit) {
  const int a = data.contacts[c0].geom_a, b = data.contacts[c0].geom_b;
  const Geom& ga = model.geoms[a];
  const Geom& gb = model.geoms[b];
  const int na = geom_size_count(ga.type);
  const int run = c1 - c0;
  const int unseeded = std::numeric_limits<int>::min() / 2;  // slot() never matches it
  const int size_a = seed_sizes ? size0 : unseeded, size_b = seed_sizes ? size0 + na : unseeded;
  const int pose_a = twist_a >= 0 ? twist_a : unseeded, pose_b = twist_b >= 0 ? twist_b : unseeded;
  int match[kMaxPairContacts];
  ContactTpl<AD> out[kMaxPairContacts];
  double margin = model.contact.margin;
  int count = 0;
  for (int first = 0; first < ndir; first += kADChunk) {
    const GeomTpl<AD> A = seeded_geom(ga, size_a, first), B = seeded_geom(gb, size_b, first);
    const Pose<AD> PA = seeded_pose(data.oMg[a], pose_a, first), PB = seeded_pose(data.oMg[b], pose_b, first);
    const int n = collide_geoms<AD>(A, PA, B, PB, margin, out, a, b);
    if (first == 0) {
      // By index, as collide() wrote them?
      bool in_order = n == run || (cut && n > run);
      for (int k = 0; k < run && in_order; ++k) {
        in_order = same_contact(data.contacts[c0 + k], out[k]);
        match[k] = k;
      }
      if (!in_order) {  // another margin: a superset, matched by value
        margin = std::numeric_limits<double>::infinity();
        count = collide_geoms<AD>(A, PA, B, PB, margin, out, a, b);
        for (int k = 0; k < run; ++k) {
          match[k] = -1;
          for (int j = 0; j < count && match[k] < 0; ++j)
            if (same_contact(data.contacts[c0 + k], out[j])) match[k] = j;
          if (match[k] < 0) {
            std::ostringstream s;
            s << "collide_vjp: contact " << c0 + k << " (" << pair_name(model, a, b)
              << ") is not one that collide_geoms finds at data.oMg: call collide_vjp with the data of the collide() "
                 "that reported it (data.oMg and data.contacts from the same call)";
            throw ArgumentError(s.str());
          }
        }
      } else {
        count = n;
      }
    } else if (n != count) {  // the same values take the same branches
      throw std::logic_error("collide_vjp: the narrowphase of " + pair_name(model, a, b) +
                             " changed its contact count between derivative passes");
    }
    visit(first, static_cast<const ContactTpl<AD>*>(out), static_cast<const int*>(match));
  }
}

// A sphere's one contact with a plane (feet on the ground: the most common pair) in closed form,
// the reverse of plane_sphere: with the plane's normal n (its z axis) and origin o, the sphere's
// centre c and radius r, h = n.(c - o) - r, point = c - r n - n h / 2, depth = -h, and the contact
// normal m = n when the plane is geom a (-n when it is b: collide_geoms reports normals from a to b)
// with frame contact_frame(m) = [m, t1, t2], t1 = u / |u|, u = m x e_k, t2 = m x t1. Writes grad as
// pair_vjp's forward mode does (a's twist, b's twist, then the sizes: the radius; a plane has none).
// Returns false, writing nothing, when data's contact is not the one these poses give (stale data:
// the forward-mode path then says so).
bool plane_sphere_vjp(const Model& model, const Data& data, int c0, const ContactBar& bar, double* grad) {
  const Contact& contact = data.contacts[c0];
  const bool plane_first = model.geoms[contact.geom_a].type == GeomType::Plane;
  const int plane = plane_first ? contact.geom_a : contact.geom_b, sphere = plane_first ? contact.geom_b : contact.geom_a;
  const Pose<double>& P = data.oMg[plane];
  const Pose<double>& B = data.oMg[sphere];
  const double r = model.geoms[sphere].size[0];
  const Eigen::Vector3d n = P.R.col(2), d = B.p - P.p, m = plane_first ? n : Eigen::Vector3d(-n);
  const double h = n.dot(d) - r;
  const Eigen::Vector3d point = B.p - r * n - 0.5 * h * n;
  if (!same_contact<double>(contact, point, m, -h)) return false;
  const Eigen::Matrix3d F = collision_detail::contact_frame<double>(m);
  const int k = collision_detail::contact_frame_axis<double>(m);
  const Eigen::Vector3d t1 = F.col(1), u = m.cross(Eigen::Vector3d::Unit(k));
  // back through the frame, to m and then n
  Eigen::Vector3d m_bar = bar.frame.col(0) + t1.cross(bar.frame.col(2));
  const Eigen::Vector3d t1_bar = bar.frame.col(1) + bar.frame.col(2).cross(m);
  const Eigen::Vector3d u_bar = (t1_bar - t1 * t1.dot(t1_bar)) / u.norm();
  m_bar += Eigen::Vector3d::Unit(k).cross(u_bar);
  Eigen::Vector3d n_bar = plane_first ? m_bar : Eigen::Vector3d(-m_bar);
  // the point and the depth
  const double h_bar = -0.5 * n.dot(bar.point) - bar.depth;
  const Eigen::Vector3d c_bar = bar.point + h_bar * n;
  n_bar += -(r + 0.5 * h) * bar.point + h_bar * d;
  const Eigen::Vector3d o_bar = -h_bar * n;
  // to the twists: d n = dtheta_plane x n, d o = dtheta_plane x o + dp_plane, d c = dtheta_sphere x c + dp_sphere
  double* const plane_twist = grad + (plane_first ? 0 : 6);
  double* const sphere_twist = grad + (plane_first ? 6 : 0);
  Eigen::Map<Eigen::Vector3d> plane_theta(plane_twist), plane_p(plane_twist + 3);
  Eigen::Map<Eigen::Vector3d> sphere_theta(sphere_twist), sphere_p(sphere_twist + 3);
  plane_theta = n.cross(n_bar) + P.p.cross(o_bar);
  plane_p = o_bar;
  sphere_theta = B.p.cross(c_bar);
  sphere_p = c_bar;
  grad[kTwistDirections] = -n.dot(bar.point) - h_bar;  // the radius (a plane has no size entry)
  return true;
}

// Contacts [c0, c1) of data, all of the pair (a, b): their adjoints into the geoms' wrenches and sizes.
void pair_vjp(const Model& model, const Data& data, int c0, int c1, bool cut,
              const std::vector<ContactBar>& contact_bar, std::vector<Vector6<double>>& pose_bar,
              ModelTangent& model_bar) {
  const int a = data.contacts[c0].geom_a, b = data.contacts[c0].geom_b;
  const int na = geom_size_count(model.geoms[a].type), nb = geom_size_count(model.geoms[b].type);
  const int ndir = kTwistDirections + na + nb;
  double grad[kMaxDirections] = {};
  const GeomType ta = model.geoms[a].type, tb = model.geoms[b].type;
  const bool closed_form = c1 - c0 == 1 &&
                           ((ta == GeomType::Plane && tb == GeomType::Sphere) ||
                            (ta == GeomType::Sphere && tb == GeomType::Plane)) &&
                           plane_sphere_vjp(model, data, c0, contact_bar[c0], grad);
  if (!closed_form)
    run_pair_forward_mode(model, data, c0, c1, cut, 0, 6, true, kTwistDirections, ndir,
                        [&](int first, const ContactTpl<AD>* out, const int* match) {
                          for (int k = 0; k < c1 - c0; ++k) {
                            const ContactBar& bar = contact_bar[c0 + k];
                            const ContactTpl<AD>& c = out[match[k]];
                            ADDerivatives d = bar.depth * c.depth.derivatives();
                            for (int i = 0; i < 3; ++i) {
                              d += bar.point[i] * c.point[i].derivatives();
                              for (int j = 0; j < 3; ++j) d += bar.frame(i, j) * c.frame(i, j).derivatives();
                            }
                            for (int s = 0; s < kADChunk && first + s < ndir; ++s) grad[first + s] += d[s];
                          }
                        });
  add_geom_wrench(model, data, a, grad, pose_bar, model_bar);
  add_geom_wrench(model, data, b, grad + 6, pose_bar, model_bar);
  for (int k = 0; k < na; ++k) model_bar.geom_size[a][k] += grad[kTwistDirections + k];
  for (int k = 0; k < nb; ++k) model_bar.geom_size[b][k] += grad[kTwistDirections + na + k];
}

// Contacts [c0, c1) of data: d(point, frame, depth) / d(xi_a, xi_b) into jac[c0, c1). Only the
// twists of geoms on a body are seeded (a world geom does not move), packed from direction 0.
void pair_jacobian(const Model& model, const Data& data, int c0, int c1, bool cut,
                   std::vector<ContactJacobian>& jac) {
  const int a = data.contacts[c0].geom_a, b = data.contacts[c0].geom_b;
  const bool a_moves = model.geoms[a].body >= 0, b_moves = model.geoms[b].body >= 0;
  const int twist_a = a_moves ? 0 : -1, twist_b = b_moves ? (a_moves ? 6 : 0) : -1;
  const int ndir = 6 * (int(a_moves) + int(b_moves));
  for (int k = c0; k < c1; ++k) jac[k].setZero();
  if (ndir == 0) return;
  if (c1 - c0 == 1 && !a_moves && model.geoms[a].type == GeomType::Plane && model.geoms[b].type == GeomType::Sphere) {
    // A sphere on a fixed plane (feet on the ground), plane_sphere in closed form: with the plane's
    // normal n and point o fixed, h = n.(c - o) - r, point = c - r n - n h / 2, depth = -h, the frame
    // the plane's (constant); the centre moves by dc = xi_angular x c + xi_linear.
    const Eigen::Vector3d n = data.oMg[a].R.col(2), c = data.oMg[b].p;
    Eigen::Matrix<double, 3, 6> dc;
    dc << -skew<double>(c), Eigen::Matrix3d::Identity();
    const Eigen::Matrix<double, 1, 6> dh = n.transpose() * dc;
    ContactJacobian& J = jac[c0];
    J.block<3, 6>(0, 6) = dc - 0.5 * n * dh;
    J.block<1, 6>(12, 6) = -dh;
    return;
  }
  run_pair_forward_mode(model, data, c0, c1, cut, twist_a, twist_b, false, 0, ndir,
                        [&](int first, const ContactTpl<AD>* out, const int* match) {
                          for (int k = 0; k < c1 - c0; ++k) {
                            const ContactTpl<AD>& c = out[match[k]];
                            for (int s = 0; s < kADChunk && first + s < ndir; ++s) {
                              const int dir = first + s;
                              const int col = a_moves ? dir : dir + 6;  // a's twist: 0-5, b's: 6-11
                              auto d = [&](const AD& x) { return x.derivatives()[s]; };
                              ContactJacobian& J = jac[c0 + k];
                              for (int i = 0; i < 3; ++i) {
                                J(i, col) = d(c.point[i]);
                                for (int j = 0; j < 3; ++j) J(3 + 3 * j + i, col) = d(c.frame(i, j));
                              }
                              J(12, col) = d(c.depth);
                            }
                          }
                        });
}

bool is_zero(const ContactBar& bar) { return bar.depth == 0 && bar.point.isZero(0.0) && bar.frame.isZero(0.0); }

}  // namespace

template <class S>
void collide_vjp(const ModelTpl<S>& model, const DataTpl<S>& data, const std::vector<ContactBarTpl<S>>& contact_bar,
                 std::vector<Vector6<S>>& pose_bar, ModelTangentTpl<S>& model_bar) {
  const int n = data.ncontacts;
  if (static_cast<int>(contact_bar.size()) < n) {
    std::ostringstream s;
    s << "collide_vjp: contact_bar has " << contact_bar.size() << " entries, expected at least data.ncontacts = " << n;
    throw ArgumentError(s.str());
  }
  check_size("pose_bar", static_cast<Eigen::Index>(pose_bar.size()), model.nbodies());
  if constexpr (!std::is_same_v<S, double>) {
    if (n > 0)
      throw ArgumentError(
          "collide_vjp<ADScalar>: not supported (the adjoint of an AD forward pass would need nested forward mode "
          "through the narrowphase); use collide_vjp<double>, or forward-mode AD through collide() itself");
  } else {
    const int capacity = static_cast<int>(data.contacts.size());
    for (int c0 = 0; c0 < n;) {
      const int a = data.contacts[c0].geom_a, b = data.contacts[c0].geom_b;
      int c1 = c0 + 1;
      bool any = !is_zero(contact_bar[c0]);
      for (; c1 < n && data.contacts[c1].geom_a == a && data.contacts[c1].geom_b == b; ++c1)
        if (!is_zero(contact_bar[c1])) any = true;
      if (c1 - c0 > kMaxPairContacts)
        throw ArgumentError("collide_vjp: more than kMaxPairContacts consecutive contacts of " +
                            pair_name(model, a, b) + ": data.contacts is not what collide() wrote");
      if (any) pair_vjp(model, data, c0, c1, c1 == n && n == capacity, contact_bar, pose_bar, model_bar);
      c0 = c1;
    }
  }
}

void collide_jacobian(const Model& model, const Data& data, std::vector<ContactJacobian>& jac) {
  const int n = data.ncontacts;
  if (static_cast<int>(jac.size()) < n) {
    std::ostringstream s;
    s << "collide_jacobian: jac has " << jac.size() << " entries, expected at least data.ncontacts = " << n;
    throw ArgumentError(s.str());
  }
  const int capacity = static_cast<int>(data.contacts.size());
  for (int c0 = 0; c0 < n;) {
    const int a = data.contacts[c0].geom_a, b = data.contacts[c0].geom_b;
    int c1 = c0 + 1;
    while (c1 < n && data.contacts[c1].geom_a == a && data.contacts[c1].geom_b == b) ++c1;
    if (c1 - c0 > kMaxPairContacts)
      throw ArgumentError("collide_jacobian: more than kMaxPairContacts consecutive contacts of " +
                          pair_name(model, a, b) + ": data.contacts is not what collide() wrote");
    pair_jacobian(model, data, c0, c1, c1 == n && n == capacity, jac);
    c0 = c1;
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                \
  template void collide_vjp<S>(const ModelTpl<S>&, const DataTpl<S>&, const std::vector<ContactBarTpl<S>>&, \
                               std::vector<Vector6<S>>&, ModelTangentTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)
#undef GRADYN_INSTANTIATE

}  // namespace gradyn
