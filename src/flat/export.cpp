// A Model as flat arrays (flat/export.hpp), and the CPU batch of the flat kernels.
#include "gradyn/flat/export.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "gradyn/collision/collide.hpp"
#include "gradyn/flat/step_vjp.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn::flat {

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw ArgumentError("device='cuda' cannot run this model: " + what);
}

void push_pose(std::vector<double>& r, const Pose<double>& X) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.push_back(X.R(i, j));
  for (int i = 0; i < 3; ++i) r.push_back(X.p[i]);
}

// The most contacts a pair's routine reports (flat/collide.hpp).
int pair_capacity(GeomType lo, GeomType hi) {
  if (lo == GeomType::Plane) return hi == GeomType::Box ? 4 : hi == GeomType::Capsule ? 2 : 1;
  return lo == GeomType::Capsule && hi == GeomType::Capsule ? 2 : 1;
}

bool supported_pair(GeomType lo, GeomType hi) {
  using T = GeomType;
  if (lo == T::Plane) return hi == T::Sphere || hi == T::Capsule || hi == T::Box;
  if (lo == T::Sphere) return hi == T::Sphere || hi == T::Capsule;
  return lo == T::Capsule && hi == T::Capsule;
}

}  // namespace

FlatArrays export_flat_model(const Model& model) {
  const ContactSettings& c = model.contact;
  // the kernels' own implementations (flat/penalty.hpp, flat/pgs.hpp): any other model is refused
  if (c.model != ContactModel::None && c.model != ContactModel::Penalty && c.model != ContactModel::Pgs)
    refuse(std::string("it uses contact model '") + contact_model_name(c.model) +
           "', and the GPU kernels run 'penalty' and 'pgs' contact (or none); use "
           "model.with_contact(model='pgs') or 'penalty', or run it on the CPU (device='cpu')");
  if (c.model == ContactModel::Pgs && c.pgs_gradient != PgsGradient::Implicit)
    refuse("its pgs contact is differentiated through the sweeps (pgs_gradient='sweeps'); the GPU kernels "
           "differentiate the solution implicitly: use with_contact(pgs_gradient='implicit') or run it on the CPU");
  if (c.model == ContactModel::Penalty && c.friction != FrictionModel::SmoothCoulomb)
    refuse("its penalty contact uses Brown friction; the GPU kernels have the smoothed Coulomb law "
           "(with_contact(friction='smooth_coulomb')) or run it on the CPU");
  if (c.model != ContactModel::None && has_joint_constraints(model))
    refuse("it has dry joint friction (frictionloss), joint couplings or body connections, which the GPU kernels do not "
           "enforce yet; run it on the CPU");
  if (!model.tendons.empty())
    refuse("it has " + std::to_string(model.tendons.size()) + " fixed tendon(s) ('" + model.tendons[0].name +
           "'" + (model.tendons.size() > 1 ? ", ..." : "") + "), which the GPU kernels do not simulate yet; run it on "
           "the CPU, or drop them explicitly (Model.without_tendons())");
  if (!model.networks.empty())
    refuse("it has networks inside its dynamics (with_network), which the GPU kernels do not run yet; "
           "run it on the CPU");
  const int nb = model.nbodies();
  if (nb > kMaxFlatBodies || model.nv > kMaxFlatDofs)
    refuse("it has " + std::to_string(nb) + " bodies and " + std::to_string(model.nv) +
           " DoFs; the GPU kernels take at most " + std::to_string(kMaxFlatBodies) + " bodies and " +
           std::to_string(kMaxFlatDofs) + " DoFs");

  FlatArrays out;
  std::vector<std::int32_t>& I = out.ints;
  std::vector<double>& R = out.reals;
  // geom pairs that may touch, in the pair routines' order (lower type first)
  std::vector<std::pair<int, int>> pairs;
  if (c.model == ContactModel::Penalty || c.model == ContactModel::Pgs) {
    for (int a = 0; a < model.ngeoms(); ++a)
      for (int b = a + 1; b < model.ngeoms(); ++b) {
        const GeomType ta = model.geoms[a].type, tb = model.geoms[b].type;
        if (ta == GeomType::Plane && tb == GeomType::Plane) continue;
        if (!geoms_may_collide(model, a, b)) continue;
        const bool swap = static_cast<int>(tb) < static_cast<int>(ta);
        const int lo = swap ? b : a, hi = swap ? a : b;
        if (!supported_pair(model.geoms[lo].type, model.geoms[hi].type))
          refuse(std::string("geoms '") + model.geoms[lo].name + "' (" + geom_type_name(model.geoms[lo].type) +
                 ") and '" + model.geoms[hi].name + "' (" + geom_type_name(model.geoms[hi].type) +
                 ") may touch, and the GPU kernels collide plane, sphere, capsule and box against a plane and "
                 "spheres and capsules against each other; exclude the pair (contype/conaffinity, "
                 "<contact><exclude>) or run it on the CPU");
        pairs.emplace_back(lo, hi);
      }
  }
  // PGS's capacity: every contact the pairs can make (at most the engine's Data holds) and every
  // joint limit, within the largest row count the kernels are compiled for.
  int contacts = 0, limit_rows = 0;
  if (c.model == ContactModel::Pgs) {
    for (const auto& [a, b] : pairs) contacts += pair_capacity(model.geoms[a].type, model.geoms[b].type);
    const int engine_capacity = model.max_contacts > 0 ? model.max_contacts : std::max(32, 8 * model.ngeoms());
    contacts = std::min(contacts, engine_capacity);
    for (int i = 0; i < nb; ++i) {
      if (model.joint_type[i] == JointType::Free) continue;
      const int iq = model.idx_q[i];
      limit_rows += std::isfinite(model.lower_limit[iq]) + std::isfinite(model.upper_limit[iq]);
    }
    if (nb > 32 || model.nv > 48)
      refuse("it has " + std::to_string(nb) + " bodies and " + std::to_string(model.nv) + " DoFs, and the GPU "
             "kernels run pgs contact for at most 32 bodies and 48 DoFs; use model.with_contact(model='penalty') or "
             "run it on the CPU");
    if (limit_rows > kMaxFlatRows - 3)
      refuse("its joint limits need " + std::to_string(limit_rows) + " rows of the PGS problem, and the GPU "
             "kernels hold " + std::to_string(kMaxFlatRows) + " rows; run it on the CPU");
    // beyond this many contacts at once a step drops the rest and flags kStatusContactOverflow
    contacts = std::min(contacts, (kMaxFlatRows - limit_rows) / 3);
  }
  I = {kMagic,
       kVersion,
       nb,
       model.nq,
       model.nv,
       model.nu(),
       model.ngeoms(),
       static_cast<std::int32_t>(pairs.size()),
       c.model == ContactModel::Pgs ? kContactPgs : c.model == ContactModel::Penalty ? kContactPenalty : kContactNone,
       c.pgs_iterations,
       contacts,
       3 * contacts + limit_rows};
  for (int i = 0; i < nb; ++i) {
    const JointType t = model.joint_type[i];
    std::int32_t type = kHinge;
    if (t == JointType::Prismatic) type = kSlide;
    else if (t == JointType::Free) type = kFree;
    else if (t != JointType::Revolute && t != JointType::Continuous)
      refuse("joint '" + model.joint_names[i] + "' is " + std::string(joint_type_name(t)) +
             "; the GPU kernels run revolute, continuous, prismatic and free joints");
    if (t == JointType::Free) {
      if (model.parent[i] >= 0)
        refuse("free joint '" + model.joint_names[i] + "' joins two bodies; the GPU kernels take free joints to "
               "the world only");
      for (int k = 0; k < 6; ++k)
        if (model.stiffness[model.idx_v[i] + k] != 0.0)
          refuse("free joint '" + model.joint_names[i] + "' has a spring (stiffness); the GPU kernels have "
                 "springs on 1-DoF joints only");
    }
    I.insert(I.end(), {model.parent[i], type, model.idx_q[i], model.idx_v[i]});
  }
  for (const Actuator& a : model.actuators)
    I.insert(I.end(), {a.kind == ActuatorKind::Servo ? kServo : kMotorLike, model.idx_q[a.joint],
                       model.idx_v[a.joint], a.ctrl_limited ? 1 : 0, a.force_limited ? 1 : 0});
  for (const Geom& g : model.geoms) {
    const bool colliding = std::any_of(pairs.begin(), pairs.end(), [&](const auto& p) {
      return &model.geoms[p.first] == &g || &model.geoms[p.second] == &g;
    });
    // A geom in no pair is never read: its type needs no kernel.
    I.insert(I.end(), {colliding ? static_cast<std::int32_t>(g.type) : kPlane, g.body});
  }
  for (const auto& [a, b] : pairs) I.insert(I.end(), {a, b});

  R = {model.gravity[0], model.gravity[1], model.gravity[2], c.stiffness, c.exponent, c.damping, c.velocity_scale,
       c.margin, c.limit_stiffness, c.limit_damping, c.max_penetration, 0.0, c.erp, c.slop, c.cfm,
       c.restitution_threshold, c.max_correction_velocity, c.pgs_tolerance, c.limit_margin};
  for (int i = 0; i < nb; ++i) {
    push_pose(R, model.joint_placement[i]);
    for (int k = 0; k < 3; ++k) R.push_back(model.joint_axis[i][k]);
    const Inertia<double>& in = model.body_inertia[i];
    R.push_back(in.mass);
    for (int k = 0; k < 3; ++k) R.push_back(in.com[k]);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) R.push_back(in.inertia_com(r, k));
  }
  for (const VectorX<double>* x : {&model.damping, &model.armature, &model.stiffness})
    R.insert(R.end(), x->data(), x->data() + model.nv);
  for (const VectorX<double>* x : {&model.q_rest, &model.lower_limit, &model.upper_limit})
    R.insert(R.end(), x->data(), x->data() + model.nq);
  for (const Actuator& a : model.actuators)
    R.insert(R.end(), {a.gear, a.gain[0], a.gain[1], a.gain[2], a.bias[0], a.bias[1], a.bias[2], a.servo_kp,
                       a.servo_kv, a.servo_velocity_limit, a.ctrl_lower, a.ctrl_upper, a.force_lower, a.force_upper});
  for (const Geom& g : model.geoms) {
    push_pose(R, g.placement);
    for (int k = 0; k < 3; ++k) R.push_back(g.size[k]);
    R.push_back(g.friction);
  }
  // The pair's Coulomb coefficient and restitution: the larger of the two (collide_geoms'
  // friction_geom and restitution_geom).
  for (const auto& [a, b] : pairs) {
    R.push_back(std::max(model.geoms[a].friction, model.geoms[b].friction));
    R.push_back(std::max(model.geoms[a].restitution, model.geoms[b].restitution));
  }
  const FlatModel<double> view = FlatModel<double>::view(I.data(), R.data());
  if (view.total_ints() != static_cast<int>(I.size()) || view.total_reals() != static_cast<int>(R.size()))
    throw std::logic_error("export_flat_model: the arrays do not match the flat layout");
  return out;
}

namespace {
template <int MaxB, int MaxD, int MaxR>
void rollout_worlds(const FlatModel<double>& m, int B, int T, const double* q0, const double* v0, const double* taus,
                    const double* ctrls, double dt, double* qs, double* vs, std::uint32_t* status) {
  auto ws = std::make_unique<StepWorkspace<double, MaxB, MaxD, MaxR>>();
  const int nq = m.nq, nv = m.nv, nu = m.nu;
  for (int w = 0; w < B; ++w) {
    double* qw = qs + static_cast<std::size_t>(w) * (T + 1) * nq;
    double* vw = vs + static_cast<std::size_t>(w) * (T + 1) * nv;
    std::copy(q0 + static_cast<std::size_t>(w) * nq, q0 + static_cast<std::size_t>(w + 1) * nq, qw);
    std::copy(v0 + static_cast<std::size_t>(w) * nv, v0 + static_cast<std::size_t>(w + 1) * nv, vw);
    reset_warm_start(*ws);  // each world's rollout starts from zero impulses
    std::uint32_t bits = 0;
    for (int t = 0; t < T; ++t) {
      const double* tau = taus ? taus + (static_cast<std::size_t>(w) * T + t) * nv : nullptr;
      const double* ctrl = ctrls ? ctrls + (static_cast<std::size_t>(w) * T + t) * nu : nullptr;
      bits |= step(m, *ws, qw + t * nq, 1, vw + t * nv, 1, tau, 1, ctrl, 1, dt, qw + (t + 1) * nq, 1, vw + (t + 1) * nv, 1);
    }
    status[w] = bits;
  }
}
}  // namespace

void flat_rollout_cpu(const FlatArrays& model, int B, int T, const double* q0, const double* v0, const double* taus,
                      const double* ctrls, double dt, double* qs, double* vs, std::uint32_t* status) {
  const FlatModel<double> m = FlatModel<double>::view(model.ints.data(), model.reals.data());
  if (m.pgs_on()) rollout_worlds<kMaxFlatBodies, kMaxFlatDofs, kMaxFlatRows>(m, B, T, q0, v0, taus, ctrls, dt, qs, vs, status);
  else if (m.nb <= 16 && m.nv <= 24) rollout_worlds<16, 24, 0>(m, B, T, q0, v0, taus, ctrls, dt, qs, vs, status);
  else if (m.nb <= 32 && m.nv <= 48) rollout_worlds<32, 48, 0>(m, B, T, q0, v0, taus, ctrls, dt, qs, vs, status);
  else rollout_worlds<kMaxFlatBodies, kMaxFlatDofs, 0>(m, B, T, q0, v0, taus, ctrls, dt, qs, vs, status);
}

void flat_step_vjp_cpu(const FlatArrays& model, const double* q, const double* v, const double* tau,
                       const double* ctrl, double dt, const double* q_next_bar, const double* v_next_bar, double* q_bar,
                       double* v_bar, double* tau_bar, double* ctrl_bar) {
  const FlatModel<double> m = FlatModel<double>::view(model.ints.data(), model.reals.data());
  auto ws = std::make_unique<StepVjpWorkspace<double, kMaxFlatBodies, kMaxFlatDofs, kMaxFlatRows>>();
  step_vjp(m, *ws, q, 1, v, 1, tau, 1, ctrl, 1, dt, q_next_bar, 1, v_next_bar, 1, q_bar, v_bar, tau_bar, 1, ctrl_bar, 1);
}

}  // namespace gradyn::flat
