#include "gradyn/contact/pgs_contact.hpp"

#include <algorithm>
#include <limits>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide.hpp"
#include "gradyn/dynamics/aba.hpp"

namespace gradyn {

namespace {
// Adds sign * (Jacobian row of body's material point `point` along world direction d) into column
// `row` of data.pgs_JT: every joint from the body up to the root moves the point.
template <class S>
void add_point_row(const ModelTpl<S>& model, DataTpl<S>& data, int body, const Vector3<S>& point,
                   const Vector3<S>& d, const S& sign, int row) {
  Vector6<S> wrench;  // the unit force d at `point`, about the world origin: [p x d; d]
  wrench.template head<3>() = point.cross(d);
  wrench.template tail<3>() = d;
  wrench *= sign;
  for (int i = body; i >= 0; i = model.parent[i]) {
    const int iv = model.idx_v[i];
    for (int j = 0; j < model.joint_nv(i); ++j)
      data.pgs_JT(iv + j, row) += data.oMi[i].act_motion(Vector6<S>(data.joint_S[i].col(j))).dot(wrench);
  }
}
}  // namespace

template <class S>
void pgs_contact_velocity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& v, const VecRef<S>& a_free,
                          const NoDeduce<S>& dt, VecOut<S> v_next) {
  const ContactSettings& settings = model.contact;
  data.pgs_v_free = v + dt * a_free;
  collide<S>(model, data, settings.margin);  // data.oMi is at q (forward_dynamics ran there)
  const int nc = data.ncontacts;
  const int n = 3 * nc;
  if (nc == 0) {
    v_next = data.pgs_v_free;
    data.pgs_ncontacts = 0;
    data.pgs_result = PgsResult{0, 0.0, 0.0, true};
    return;
  }
  BoxedLcpTpl<S>& lcp = data.pgs_problem;
  if (lcp.size() != n) {  // allocates: only when the contact count changes
    lcp.A.resize(n, n);
    lcp.b.resize(n);
    lcp.lo.resize(n);
    lcp.hi.resize(n);
    lcp.mu.resize(n);
    lcp.normal_row.assign(n, -1);
  }
  if (data.pgs_workspace.n != n) data.pgs_workspace.resize(n, 0);
  if (data.pgs_ncontacts != nc || data.pgs_lambda.size() != n) {
    data.pgs_lambda.setZero(n);  // cold start (allocates when the size changes)
  }
  data.pgs_ncontacts = nc;
  lcp.cfm = settings.cfm;

  // Jacobian rows.
  data.pgs_JT.leftCols(n).setZero();
  for (int k = 0; k < nc; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    const int ba = model.geoms[c.geom_a].body, bb = model.geoms[c.geom_b].body;
    for (int r = 0; r < 3; ++r) {
      const Vector3<S> d = r == 0 ? Vector3<S>(c.normal) : Vector3<S>(c.frame.col(r));
      if (bb >= 0) add_point_row<S>(model, data, bb, c.point, d, S(1), 3 * k + r);
      if (ba >= 0) add_point_row<S>(model, data, ba, c.point, d, S(-1), 3 * k + r);
    }
  }
  // M^-1 J^T by the O(n) solve on the articulated inertias of the forward_dynamics call at q.
  for (int r = 0; r < n; ++r) minv_solve<S>(model, data, data.pgs_JT.col(r), data.pgs_MinvJT.col(r));
  lcp.A.noalias() = data.pgs_JT.leftCols(n).transpose() * data.pgs_MinvJT.leftCols(n);
  lcp.b.noalias() = data.pgs_JT.leftCols(n).transpose() * data.pgs_v_free;

  const S inf = S(std::numeric_limits<double>::infinity());
  for (int k = 0; k < nc; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    const GeomTpl<S>& ga = model.geoms[c.geom_a];
    const GeomTpl<S>& gb = model.geoms[c.geom_b];
    const int rn = 3 * k;
    // Separation velocity the normal row must reach: Baumgarte or restitution, the larger.
    S target = S(0);
    const S excess = c.depth - S(settings.slop);
    if (value_of(excess) > 0.0) target = S(settings.erp) / dt * excess;
    const S approach = data.pgs_JT.col(rn).dot(v);  // normal velocity before the step
    if (value_of(approach) < -settings.restitution_threshold) {
      const S e = value_of(ga.restitution) >= value_of(gb.restitution) ? ga.restitution : gb.restitution;
      const S bounce = -e * approach;
      if (value_of(bounce) > value_of(target)) target = bounce;
    }
    lcp.b[rn] -= target;
    lcp.lo[rn] = S(0);
    lcp.hi[rn] = inf;
    lcp.mu[rn] = S(0);
    lcp.normal_row[rn] = -1;
    const S mu = value_of(ga.friction) >= value_of(gb.friction) ? ga.friction : gb.friction;
    for (int r = 1; r < 3; ++r) {
      lcp.lo[rn + r] = S(0);  // ignored for friction rows
      lcp.hi[rn + r] = S(0);
      lcp.mu[rn + r] = mu;
      lcp.normal_row[rn + r] = rn;
    }
  }
  PgsOptions options;
  options.max_iterations = settings.pgs_iterations;
  options.tolerance = settings.pgs_tolerance;
  options.record_iterates = false;
  data.pgs_result = pgs_solve<S>(lcp, options, data.pgs_workspace, data.pgs_lambda);
  v_next = data.pgs_v_free;
  v_next.noalias() += data.pgs_MinvJT.leftCols(n) * data.pgs_lambda;
}

#define GRADYN_INSTANTIATE(S)                                                                              \
  template void pgs_contact_velocity<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, \
                                        const NoDeduce<S>&, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
