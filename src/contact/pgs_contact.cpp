#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/contact/models/pgs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {

// A contact takes over the impulse of the last step's contact of the same pair nearest to it when
// that one is closer than this: far enough for any point a body moves within a step, near enough
// not to hand a manifold corner's impulse to another corner.
constexpr double kWarmStartRadius = 1e-2;  // [m]

// Adds sign * (Jacobian rows of body's material point `point` along the world directions n, t1, t2)
// into columns row0, row0 + 1, row0 + 2 of pgs_data(data).JT: every joint from the body up to the root moves
// the point. Each joint column's world twist [w; v0] (about the world origin) is formed once and
// shared by the three rows: the point moves at v0 + w x p.
template <class S>
void add_point_rows(const ModelTpl<S>& model, DataTpl<S>& data, int body, const Vector3<S>& point,
                    const Matrix3<S>& directions, const S& sign, int row0) {
  for (int i = body; i >= 0; i = model.parent[i]) {
    const int iv = model.idx_v[i];
    for (int j = 0; j < model.joint_nv(i); ++j) {
      const Vector6<S> twist = data.oMi[i].act_motion(Vector6<S>(data.joint_S[i].col(j)));
      const Vector3<S> velocity = sign * (twist.template tail<3>() + twist.template head<3>().cross(point));
      for (int r = 0; r < 3; ++r) pgs_data(data).JT(iv + j, row0 + r) += directions.col(r).dot(velocity);
    }
  }
}

// |a - b|^2 on values (the warm-start match is a discrete choice).
template <class S>
double squared_distance(const Vector3<S>& a, const Vector3<S>& b) {
  double sum = 0.0;
  for (int i = 0; i < 3; ++i) {
    const double d = value_of(a[i]) - value_of(b[i]);
    sum += d * d;
  }
  return sum;
}

// Grows the capacity-sized LCP buffers to hold n rows (allocates; only when n exceeds every earlier
// size, by doubling, capped at the model's maximum row count).
template <class S>
void reserve_rows(DataTpl<S>& data, int n) {
  BoxedLcpTpl<S>& lcp = pgs_data(data).problem;
  const int have = static_cast<int>(lcp.b.size());
  if (have >= n) return;
  const int most = static_cast<int>(pgs_data(data).JT.cols());
  const int capacity = std::min(most, std::max({n, 2 * have, 12}));
  lcp.A.setZero(capacity, capacity);
  lcp.b.setZero(capacity);
  lcp.lo.setZero(capacity);
  lcp.hi.setZero(capacity);
  lcp.mu.setZero(capacity);
  lcp.normal_row.assign(static_cast<size_t>(capacity), -1);
  pgs_data(data).workspace.resize(capacity, 0);
  pgs_data(data).lambda.setZero(capacity);
  pgs_data(data).warm_start.setZero(capacity);
}

template <class S>
void contact_velocity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                      const VecRef<S>& a_free, const S& dt, VecOut<S> v_next) {
  const ContactSettings& settings = model.contact;
  pgs_data(data).v_free = v + dt * a_free;
  collide<S>(model, data, settings.margin);  // data.oMi is at q (forward_dynamics ran there)
  const int nc = data.ncontacts;
  const int nl =
      select_joint_limit_rows<S>(model, q, pgs_data(data).v_free, value_of(dt), pgs_data(data).limit_coord, pgs_data(data).limit_side);
  const int nf = joint_friction_rows<S>(model);
  const int ncouplings = static_cast<int>(model.joint_couplings.size());
  const int nj = joint_constraint_rows<S>(model);  // friction, coupling, then connection rows
  const int row_joint = 3 * nc + nl;
  const int n = row_joint + nj;
  if (nj > pgs_data(data).memory_joint_rows.size())  // Data sizes them once, from the model it was made for
    throw ArgumentError("this Data was made for a model with fewer dry-friction, coupling or connection rows "
                        "than this one (" + std::to_string(nj) + "): make a new Data from this model");
  BoxedLcpTpl<S>& lcp = pgs_data(data).problem;
  pgs_data(data).ncontacts = nc;
  pgs_data(data).nlimits = nl;
  pgs_data(data).njoint_rows = nj;
  if (n == 0) {
    v_next = pgs_data(data).v_free;
    lcp.rows = 0;
    pgs_data(data).memory_ncontacts = 0;
    pgs_data(data).memory_limit.setZero();
    pgs_data(data).result = PgsResult{0, 0.0, 0.0, true};
    return;
  }
  reserve_rows<S>(data, n);
  lcp.rows = n;
  lcp.cfm = settings.cfm;

  // Jacobian rows.
  pgs_data(data).JT.leftCols(n).setZero();
  for (int k = 0; k < nc; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    const int ba = model.geoms[c.geom_a].body, bb = model.geoms[c.geom_b].body;
    Matrix3<S> directions;  // normal, tangent1, tangent2
    directions.col(0) = c.normal;
    directions.col(1) = c.frame.col(1);
    directions.col(2) = c.frame.col(2);
    if (bb >= 0) add_point_rows<S>(model, data, bb, c.point, directions, S(1), 3 * k);
    if (ba >= 0) add_point_rows<S>(model, data, ba, c.point, directions, S(-1), 3 * k);
  }
  for (int l = 0; l < nl; ++l)
    for_each_limit_row_entry<S>(model, q, pgs_data(data).limit_coord[static_cast<size_t>(l)],
                                pgs_data(data).limit_side[static_cast<size_t>(l)],
                                [&](int dof, const S& value) { pgs_data(data).JT(dof, 3 * nc + l) = value; });
  for_each_joint_friction_row<S>(model, [&](int r, int dof) { pgs_data(data).JT(dof, row_joint + r) = S(1); });
  for (int c = 0; c < ncouplings; ++c) {
    const JointCoupling& coupling = model.joint_couplings[static_cast<size_t>(c)];
    S slope;
    joint_coupling_error<S>(model, coupling, q, slope);
    // J = e_1 - slope e_2 over each coordinate's terms (a tendon's several joints; two tendons may share one)
    for_each_coupling_term(model, coupling, 1, [&](int, int iv, double coef) { pgs_data(data).JT(iv, row_joint + nf + c) += coef; });
    for_each_coupling_term(model, coupling, 2,
                           [&](int, int iv, double coef) { pgs_data(data).JT(iv, row_joint + nf + c) -= coef * slope; });
  }
  const int row_connection = row_joint + nf + ncouplings;  // three rows per connection block
  for_each_connection_block<S>(model, [&](int block, const BodyConnection& c, bool rotational) {
    auto rows = pgs_data(data).JT.middleCols(row_connection + 3 * block, 3);
    add_connection_block_rows<S>(model, data, c, rotational, rows);
    rotate_connection_rows<S>(rows, pgs_data(data).connection_axes[static_cast<size_t>(block)]);  // a direction left out: an inert row
  });
  // M^-1 J^T by the O(n) solve on the articulated inertias of the forward_dynamics call at q.
  for (int r = 0; r < n; ++r) minv_solve<S>(model, data, pgs_data(data).JT.col(r), pgs_data(data).MinvJT.col(r));
  lcp.A.topLeftCorner(n, n).noalias() = pgs_data(data).JT.leftCols(n).transpose() * pgs_data(data).MinvJT.leftCols(n);
  lcp.b.head(n).noalias() = pgs_data(data).JT.leftCols(n).transpose() * pgs_data(data).v_free;

  const S inf = S(std::numeric_limits<double>::infinity());
  for (int k = 0; k < nc; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    const int rn = 3 * k;
    // Separation velocity the normal row must reach: Baumgarte or restitution, the larger.
    const S approach = pgs_data(data).JT.col(rn).dot(v);  // normal velocity before the step
    const S& e = model.geoms[c.restitution_geom].restitution;
    switch (pgs_target_branch(settings, value_of(c.depth), value_of(approach), value_of(e), value_of(dt))) {
      case PgsTargetBranch::Baumgarte: lcp.b[rn] -= S(settings.erp) / dt * (c.depth - S(settings.slop)); break;
      case PgsTargetBranch::Capped: lcp.b[rn] -= S(settings.max_correction_velocity); break;
      case PgsTargetBranch::Restitution: lcp.b[rn] += e * approach; break;
      case PgsTargetBranch::Zero: break;
    }
    lcp.lo[rn] = S(0);
    lcp.hi[rn] = inf;
    lcp.mu[rn] = S(0);
    lcp.normal_row[rn] = -1;
    const S& mu = model.geoms[c.friction_geom].friction;
    for (int r = 1; r < 3; ++r) {
      lcp.lo[rn + r] = S(0);  // ignored for friction rows
      lcp.hi[rn + r] = S(0);
      lcp.mu[rn + r] = mu;
      lcp.normal_row[rn + r] = rn;
    }
  }
  for (int l = 0; l < nl; ++l) {
    const int row = 3 * nc + l;
    lcp.b[row] -= joint_limit_target<S>(model, q, pgs_data(data).limit_coord[static_cast<size_t>(l)],
                                        pgs_data(data).limit_side[static_cast<size_t>(l)], dt);
    lcp.lo[row] = S(0);
    lcp.hi[row] = inf;
    lcp.mu[row] = S(0);
    lcp.normal_row[row] = -1;
  }
  for_each_joint_friction_row<S>(model, [&](int r, int dof) {  // |impulse| <= frictionloss dt, rate target 0
    const int row = row_joint + r;
    lcp.lo[row] = -model.frictionloss[dof] * dt;
    lcp.hi[row] = model.frictionloss[dof] * dt;
    lcp.mu[row] = S(0);
    lcp.normal_row[row] = -1;
  });
  const auto bilateral = [&](int row, const S& target) {  // impulse unbounded, b = J v_free - target
    lcp.b[row] -= target;
    lcp.lo[row] = -inf;
    lcp.hi[row] = inf;
    lcp.mu[row] = S(0);
    lcp.normal_row[row] = -1;
  };
  for (int c = 0; c < ncouplings; ++c)  // Baumgarte on the coupling error
    bilateral(row_joint + nf + c,
              joint_coupling_target<S>(model, model.joint_couplings[static_cast<size_t>(c)], q, v, dt));
  // Baumgarte on the gap or the orientation error, along the rows' directions
  for_each_connection_block<S>(model, [&](int block, const BodyConnection& c, bool rotational) {
    const Vector3<S> target = pgs_data(data).connection_axes[static_cast<size_t>(block)].template cast<S>().transpose() *
                              connection_block_target<S>(model, data, c, rotational, dt);
    for (int r = 0; r < 3; ++r) bilateral(row_connection + 3 * block + r, target[r]);
  });

  // Warm start from the memory of the last step.
  auto lambda = pgs_data(data).lambda.head(n);
  for (int k = 0; k < nc; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    int best = -1;
    double best_distance2 = kWarmStartRadius * kWarmStartRadius;
    for (int j = 0; j < pgs_data(data).memory_ncontacts; ++j) {
      if (pgs_data(data).memory_pair[j].first != c.geom_a || pgs_data(data).memory_pair[j].second != c.geom_b) continue;
      const double d2 = squared_distance<S>(pgs_data(data).memory_point[j], c.point);
      if (d2 < best_distance2) best_distance2 = d2, best = j;
    }
    if (best < 0) {
      lambda.template segment<3>(3 * k).setZero();
      continue;
    }
    const Vector3<S>& impulse = pgs_data(data).memory_impulse[best];
    const S normal = impulse.dot(c.normal);
    lambda[3 * k] = value_of(normal) > 0.0 ? normal : S(0);
    lambda[3 * k + 1] = impulse.dot(Vector3<S>(c.frame.col(1)));
    lambda[3 * k + 2] = impulse.dot(Vector3<S>(c.frame.col(2)));
  }
  for (int l = 0; l < nl; ++l) {
    const int slot = 2 * pgs_data(data).limit_coord[static_cast<size_t>(l)] + (pgs_data(data).limit_side[static_cast<size_t>(l)] > 0 ? 0 : 1);
    lambda[3 * nc + l] = pgs_data(data).memory_limit[slot];
  }
  lambda.segment(row_joint, nj) = pgs_data(data).memory_joint_rows.head(nj);
  pgs_data(data).warm_start.head(n) = lambda;

  PgsOptions options;
  options.max_iterations = settings.pgs_iterations;
  options.tolerance = settings.pgs_tolerance;
  options.record_iterates = false;
  pgs_data(data).result = pgs_solve<S>(lcp, options, pgs_data(data).workspace, lambda);
  if (!pgs_data(data).result.converged) data.status |= kStatusSolverNotConverged;
  v_next = pgs_data(data).v_free;
  v_next.noalias() += pgs_data(data).MinvJT.leftCols(n) * lambda;

  // Remember the impulses for the next step's warm start; impulses that are not finite (a step that
  // diverged) are forgotten, so that they cannot spoil the steps after it.
  if (!all_finite(lambda)) {
    pgs_data(data).memory_ncontacts = 0;
    pgs_data(data).memory_limit.setZero();
    pgs_data(data).memory_joint_rows.setZero();
    return;
  }
  for (int k = 0; k < nc; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    pgs_data(data).memory_pair[k] = {c.geom_a, c.geom_b};
    pgs_data(data).memory_point[k] = c.point;
    pgs_data(data).memory_impulse[k] = lambda[3 * k] * c.normal + lambda[3 * k + 1] * c.frame.col(1) +
                                 lambda[3 * k + 2] * c.frame.col(2);
  }
  pgs_data(data).memory_ncontacts = nc;
  pgs_data(data).memory_limit.setZero();
  for (int l = 0; l < nl; ++l) {
    const int slot = 2 * pgs_data(data).limit_coord[static_cast<size_t>(l)] + (pgs_data(data).limit_side[static_cast<size_t>(l)] > 0 ? 0 : 1);
    pgs_data(data).memory_limit[slot] = lambda[3 * nc + l];
  }
  pgs_data(data).memory_joint_rows.head(nj) = lambda.segment(row_joint, nj);
}

}  // namespace

template <class S>
void pgs_forget_warm_start(DataTpl<S>& data) {
  pgs_data(data).memory_ncontacts = 0;
  pgs_data(data).memory_limit.setZero();
  pgs_data(data).memory_joint_rows.setZero();
}

template <class S>
void pgs_contact_velocity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                          const VecRef<S>& a_free, const NoDeduce<S>& dt, VecOut<S> v_next) {
  contact_velocity<S>(model, data, q, v, a_free, dt, v_next);
}

// ---- the contact model's hooks (contact/models/pgs.hpp) ----

template <class S>
detail::OpaqueWorkspace PgsContact::make_workspace(const ModelTpl<S>& model, const ContactWorkspaceSizes& sizes) {
  return detail::OpaqueWorkspace(
      std::make_unique<PgsDataTpl<S>>(model, sizes.contacts, sizes.limit_rows, sizes.joint_rows));
}

void PgsContact::check_settings(const ContactSettings& c) {
  // step() calls this every time: build the location (a heap string) only for an error.
  auto where = [] { return SourceLocation{"", 0, "contact settings"}; };
  if (c.pgs_iterations < 1)
    throw ModelError(where(), "pgs_iterations: expected >= 1, got " + std::to_string(c.pgs_iterations));
  if (!std::isfinite(c.pgs_tolerance) || c.pgs_tolerance < 0.0)
    throw ModelError(where(), "pgs_tolerance: expected a finite number >= 0, got " + std::to_string(c.pgs_tolerance));
}

bool PgsContact::jacobian_by_reverse_mode(const Model& model) { return has_joint_constraints(model); }

template <class S>
S PgsContact::normal_force(const ModelTpl<S>&, const DataTpl<S>& data, int k, int nc, const S& dt) {
  // the impulses are the last solve's only if it saw these contacts
  return pgs_data(data).ncontacts == nc ? S(pgs_data(data).lambda[3 * k] / dt) : S(0);
}

#define GRADYN_INSTANTIATE(S)                                                                                    \
  template void pgs_forget_warm_start<S>(DataTpl<S>&);                                                           \
  template void pgs_contact_velocity<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,      \
                                        const VecRef<S>&, const NoDeduce<S>&, VecOut<S>);                        \
  template detail::OpaqueWorkspace PgsContact::make_workspace<S>(const ModelTpl<S>&, const ContactWorkspaceSizes&); \
  template S PgsContact::normal_force<S>(const ModelTpl<S>&, const DataTpl<S>&, int, int, const S&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
