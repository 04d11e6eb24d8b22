#include "gradyn/contact/ipm_contact.hpp"
#include "gradyn/contact/models/ipm.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide.hpp"
#include "gradyn/contact/detail/contact_jacobian.hpp"
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/model/dof_tree.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {

// Largest |J_n| entry below which a contact counts as one the joints cannot open (J_n entries are
// lever arms or direction cosines: O(0.01 .. 1) for a contact the robot can move).
constexpr double kInertJacobian = 1e-9;

template <class S>
void shape_problem(MixedLcpTpl<S>& p, Eigen::Index nx, Eigen::Index ni, Eigen::Index ne) {
  p.M.setZero(nx, nx);
  p.G.setZero(ni, nx);
  p.F.setZero(ni, ni);
  p.A.setZero(ne, nx);
  p.q.setZero(nx);
  p.m.setZero(ni);
  p.b.setZero(ne);
}

template <class Src, class Dst>
void copy_values(const Src& src, Dst& dst) {
  for (Eigen::Index c = 0; c < src.cols(); ++c)
    for (Eigen::Index r = 0; r < src.rows(); ++r) dst(r, c) = value_of(src(r, c));
}

// Forward-mode derivatives of the solution (x, z) in ipm_data(data).workspace: the implicit function theorem
// at the returned point, K [dx; dz] = -[dM x + dG^T z + dq; dG x + dF z - dm] per direction
// (mixed_lcp_kkt_solve: K factored there once, on the first direction). Writes value and derivatives into x_out and ipm_data(data).z.
void propagate_derivatives(const MixedLcpTpl<ADScalar>& p, DataTpl<ADScalar>& data, VecOut<ADScalar> x_out) {
  IpmWorkspace& ws = ipm_data(data).workspace;
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = p.A.rows();
  for (Eigen::Index i = 0; i < nx; ++i) x_out[i] = ad_seed(ws.x[i], -1);
  for (Eigen::Index r = 0; r < ni; ++r) ipm_data(data).z[r] = ad_seed(ws.z[r], -1);
  for (int k = 0; k < kADChunk; ++k) {
    ws.rhs.setZero();
    bool any = false;
    auto d = [&](const ADScalar& a) { return a.derivatives()[k]; };
    for (Eigen::Index i = 0; i < nx; ++i) {
      double e = d(p.q[i]);
      for (Eigen::Index j = 0; j < nx; ++j) e += d(p.M(i, j)) * ws.x[j];
      for (Eigen::Index r = 0; r < ni; ++r) e += d(p.G(r, i)) * ws.z[r];
      for (Eigen::Index r = 0; r < ne; ++r) e += d(p.A(r, i)) * ws.y[r];
      ws.rhs[i] = -e;
      any = any || e != 0.0;
    }
    for (Eigen::Index r = 0; r < ni; ++r) {
      double e = -d(p.m[r]);
      for (Eigen::Index j = 0; j < nx; ++j) e += d(p.G(r, j)) * ws.x[j];
      for (Eigen::Index c = 0; c < ni; ++c) e += d(p.F(r, c)) * ws.z[c];
      ws.rhs[nx + r] = -e;
      any = any || e != 0.0;
    }
    for (Eigen::Index r = 0; r < ne; ++r) {
      double e = -d(p.b[r]);
      for (Eigen::Index j = 0; j < nx; ++j) e += d(p.A(r, j)) * ws.x[j];
      ws.rhs[nx + ni + r] = -e;
      any = any || e != 0.0;
    }
    if (!any) continue;
    mixed_lcp_kkt_solve<double>(ipm_data(data).problem_value, ws, ws.rhs, ws.sol, false);
    for (Eigen::Index i = 0; i < nx; ++i) x_out[i].derivatives()[k] = ws.sol[i];
    for (Eigen::Index r = 0; r < ni; ++r) ipm_data(data).z[r].derivatives()[k] = ws.sol[nx + r];
  }
}

// The solver's row basis (lcp_ipm.hpp, IpmWorkspace::row_basis): per contact, its N friction rows
// G_j = -(cos_j J_t1 + sin_j J_t2) span only the two tangents, so the orthogonal U = [C / sqrt(N / 2),
// an orthonormal basis of C's complement] (C = [cos_j sin_j], N x 2) turns them into two rows on the
// tangents and N - 2 zero rows, which the solver eliminates within the contact. Normal, gamma and
// limit rows keep the identity.
void set_friction_row_basis(int ni, int nc, int N, Eigen::MatrixXd& T) {
  T.setIdentity(ni, ni);
  Eigen::MatrixXd C(N, 2);
  for (int j = 0; j < N; ++j) C.row(j) = ipm_friction_direction(j, N).transpose();
  const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(C).householderQ();
  Eigen::MatrixXd U(N, N);
  U.leftCols(2) = C / std::sqrt(0.5 * N);  // orthonormal columns: sum cos^2 = sum sin^2 = N / 2, sum cos sin = 0
  U.rightCols(N - 2) = Q.rightCols(N - 2);
  for (int k = 0; k < nc; ++k) T.block(nc + N * k, nc + N * k, N, N) = U;
}

}  // namespace

template <class S>
void ipm_contact_velocity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                          const VecRef<S>& a_free, const NoDeduce<S>& dt, VecOut<S> v_next) {
  const ContactSettings& settings = model.contact;
  ipm_data(data).v_free = v + dt * a_free;
  collide<S>(model, data, settings.margin);  // data.oMi is at q (forward_dynamics ran there)
  const int nc = data.ncontacts;
  const int nl = select_joint_limit_rows<S>(model, q, ipm_data(data).v_free, value_of(dt), ipm_data(data).limit_coord,
                                            ipm_data(data).limit_side);
  const int nv = model.nv;
  const int N = settings.ipm_friction_directions;
  const int nf = joint_friction_rows<S>(model);                  // DoFs with dry friction: 3 rows each
  const int ncouplings = static_cast<int>(model.joint_couplings.size());
  const int nconn = model.connection_blocks();  // blocks of three rows (for_each_connection_block)
  // equality rows: every coupling, then each connection's rows along the directions it keeps
  // (rotate_connection_rows: a direction the joints can hardly move has no row)
  if (static_cast<int>(ipm_data(data).eq_source.size()) != ncouplings + 3 * nconn)  // Data sizes them once
    throw ArgumentError("this Data was made for a model with other couplings or connections than this one: make a "
                        "new Data from this model");
  int ne = ncouplings;
  for (int c = 0; c < ncouplings; ++c) ipm_data(data).eq_source[static_cast<size_t>(c)] = c;
  if (nconn > 0) {
    ipm_data(data).connection_JT.setZero();
    for_each_connection_block<S>(model, [&](int k, const BodyConnection& c, bool rotational) {
      auto rows = ipm_data(data).connection_JT.middleCols(3 * k, 3);
      add_connection_block_rows<S>(model, data, c, rotational, rows);
      Eigen::Matrix3d& axes = ipm_data(data).connection_axes[static_cast<size_t>(k)];
      rotate_connection_rows<S>(rows, axes);
      for (int r = 0; r < 3; ++r)  // a direction left out has no row
        if (!axes.col(r).isZero(0.0)) ipm_data(data).eq_source[static_cast<size_t>(ne++)] = ncouplings + 3 * k + r;
    });
  }
  ipm_data(data).neq = ne;
  const int ni = (N + 2) * nc + nl + 3 * nf;
  const int row_f = nc, row_gamma = nc + N * nc;  // first friction row, first gamma row
  const int row_limit = (N + 2) * nc;             // first joint-limit row
  const int row_joint_friction = row_limit + nl;  // beta+ (nf), beta- (nf), gamma (nf)
  ipm_data(data).nlimits = nl;
  if (nc + nl + nf + ne == 0) {
    v_next = ipm_data(data).v_free;
    ipm_data(data).ncontacts = 0;
    ipm_data(data).warm_ncontacts = -1;
    ipm_data(data).result = LcpIpmResult{true, 0, 0.0, 0.0, 0.0};
    return;
  }
  MixedLcpTpl<S>& lcp = ipm_data(data).problem;
  if (lcp.G.rows() != ni || lcp.M.rows() != nv || lcp.A.rows() != ne) {  // allocates: only when the row count changes
    shape_problem(lcp, nv, ni, ne);
    if constexpr (!std::is_same_v<S, double>) shape_problem(ipm_data(data).problem_value, nv, ni, ne);
    ipm_data(data).workspace = IpmWorkspace(nv, ne, ni);
    const std::vector<int> dof_parent = dof_parents(model);  // M's tree: the solver factors M without fill-in
    ipm_data(data).workspace.mass_parent = Eigen::Map<const Eigen::VectorXi>(dof_parent.data(), nv);
    ipm_data(data).z.setZero(ni);
    ipm_data(data).warm_ncontacts = -1;
  }
  if (ipm_data(data).ncontacts != nc || ipm_data(data).workspace.row_basis.rows() != ni)  // allocates: as above
    set_friction_row_basis(ni, nc, N, ipm_data(data).workspace.row_basis);
  ipm_data(data).ncontacts = nc;
  // Warm start when the rows are the last solve's: the same geom pairs in the same order, the same
  // limit rows (then each row's multiplier is a good guess for this step's).
  bool warm = settings.ipm_warm_start && ipm_data(data).warm_ncontacts == nc;
  for (int k = 0; warm && k < nc; ++k)
    warm = ipm_data(data).warm_pair[k] == std::pair<int, int>(data.contacts[k].geom_a, data.contacts[k].geom_b);
  for (int l = 0; warm && l < nl; ++l)
    warm = ipm_data(data).warm_limit_coord[static_cast<size_t>(l)] == ipm_data(data).limit_coord[static_cast<size_t>(l)] &&
           ipm_data(data).warm_limit_side[static_cast<size_t>(l)] == ipm_data(data).limit_side[static_cast<size_t>(l)];

  // Normal and tangent Jacobian columns; friction directions are combinations of the tangent ones.
  auto JT = ipm_data(data).JT.leftCols(3 * nc);
  JT.setZero();
  for (int k = 0; k < nc; ++k) detail::add_contact_frame_jacobian<S>(model, data, data.contacts[k], JT.middleCols(3 * k, 3));

  // M v+ = M v_free + J^T z  ->  q = -M v_free (x = v+).
  lcp.M = crba<S>(model, data, q);
  lcp.q.noalias() = lcp.M * ipm_data(data).v_free;  // then negated in place: -(M v) would evaluate into a temporary
  lcp.q = -lcp.q;

  lcp.G.setZero();
  lcp.F.setZero();
  lcp.m.setZero();
  for (int k = 0; k < nc; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    const auto Jn = JT.col(3 * k);
    lcp.G.row(k) = -Jn.transpose();
    lcp.F(k, k) = S(-settings.cfm);  // s_n = J_n v+ - target + cfm lambda_n, as PGS's CFM
    for (int j = 0; j < N; ++j) {
      const int r = row_f + N * k + j;  // G's friction rows: after this loop, one cos / sin per direction
      lcp.F(r, r) = S(-settings.cfm);  // sigma_j = J_j v+ + gamma + cfm beta_j
      lcp.F(r, row_gamma + k) = S(-1);
      lcp.F(row_gamma + k, r) = S(1);   // zeta = mu lambda_n - sum_j beta_j
    }
    lcp.F(row_gamma + k, k) = -model.geoms[c.friction_geom].friction;

    // A contact no generalised velocity can open (J_n = 0: e.g. two geoms around one ball joint's
    // centre) could never reach a positive target: the LCP would be infeasible and the solver
    // diverge. Such a row is made inert (s_n = 1 m/s, lambda_n = 0).
    double reach = 0.0;
    for (int i = 0; i < nv; ++i) reach = std::max(reach, std::abs(value_of(Jn[i])));
    std::uint8_t& branch = ipm_data(data).target_branch[k];
    if (reach < kInertJacobian) {
      lcp.m[k] = S(1);
      branch = kIpmTargetInert;
      continue;
    }
    // Separation velocity the normal row must reach (see the header): Baumgarte or restitution, the
    // larger, in contact; across a gap, close it within the step (then bounce if it closes).
    const S approach = Jn.dot(v);  // normal velocity before the step
    const bool bouncing = value_of(approach) < -settings.restitution_threshold;
    const S& e = model.geoms[c.restitution_geom].restitution;
    S target = S(0);
    branch = kIpmTargetZero;
    if (value_of(c.depth) < 0.0) {
      target = c.depth / dt;
      branch = kIpmTargetGap;
      if (bouncing && value_of(c.depth - approach * dt) > 0.0) target -= e * approach, branch = kIpmTargetGapBounce;
    } else {
      const S excess = c.depth - S(settings.slop);
      if (value_of(excess) > 0.0) target = S(settings.erp) / dt * excess, branch = kIpmTargetBaumgarte;
      if (value_of(target) > settings.max_correction_velocity)
        target = S(settings.max_correction_velocity), branch = kIpmTargetCapped;
      if (bouncing && value_of(-e * approach) > value_of(target)) target = -e * approach, branch = kIpmTargetRestitution;
    }
    lcp.m[k] = -target;
  }
  for (int j = 0; j < N; ++j) {
    const Eigen::Vector2d d = ipm_friction_direction(j, N);
    const S c(d[0]), sn(d[1]);
    for (int k = 0; k < nc; ++k)
      lcp.G.row(row_f + N * k + j) = -(c * JT.col(3 * k + 1) + sn * JT.col(3 * k + 2)).transpose();
  }
  // Joint limits (joint_limits.hpp, the rows PGS builds): s_l = J_l v+ - target + cfm lambda_l >= 0.
  for (int l = 0; l < nl; ++l) {
    const int r = row_limit + l;
    const int coord = ipm_data(data).limit_coord[static_cast<size_t>(l)], side = ipm_data(data).limit_side[static_cast<size_t>(l)];
    for_each_limit_row_entry<S>(model, q, coord, side, [&](int dof, const S& value) { lcp.G(r, dof) = -value; });
    lcp.F(r, r) = S(-settings.cfm);
    lcp.m[r] = -joint_limit_target<S>(model, q, coord, side, dt);
  }
  // Dry joint friction (joint_constraints.hpp): a contact's friction cone with the directions +-e_k
  // and the bound frictionloss dt in place of mu lambda_n.
  for_each_joint_friction_row<S>(model, [&](int k, int dof) {
    const int plus = row_joint_friction + k, minus = plus + nf, gamma = plus + 2 * nf;
    lcp.G(plus, dof) = S(-1);  // sigma+ = v+_k + gamma + cfm beta+
    lcp.G(minus, dof) = S(1);  // sigma- = -v+_k + gamma + cfm beta-
    for (int r : {plus, minus}) {
      lcp.F(r, r) = S(-settings.cfm);
      lcp.F(r, gamma) = S(-1);
      lcp.F(gamma, r) = S(1);  // zeta = frictionloss dt - beta+ - beta-
    }
    lcp.m[gamma] = model.frictionloss[dof] * dt;
  });
  // Joint couplings: equality rows J v+ = target.
  lcp.A.setZero();
  for (int c = 0; c < ncouplings; ++c) {
    const JointCoupling& coupling = model.joint_couplings[static_cast<size_t>(c)];
    S slope;
    joint_coupling_error<S>(model, coupling, q, slope);
    for_each_coupling_term(model, coupling, 1, [&](int, int iv, double coef) { lcp.A(c, iv) += coef; });
    for_each_coupling_term(model, coupling, 2, [&](int, int iv, double coef) { lcp.A(c, iv) -= coef * slope; });
    lcp.b[c] = joint_coupling_target<S>(model, coupling, q, v, dt);
  }
  // Body connections: an equality row per kept direction, J v+ = target along it.
  for_each_connection_block<S>(model, [&](int k, const BodyConnection& c, bool rotational) {
    ipm_data(data).block_target[static_cast<size_t>(k)] = connection_block_target<S>(model, data, c, rotational, dt);
  });
  for (int e = ncouplings; e < ne; ++e) {
    const int r = ipm_data(data).eq_source[static_cast<size_t>(e)] - ncouplings, k = r / 3;
    lcp.A.row(e) = ipm_data(data).connection_JT.col(r).transpose();
    lcp.b[e] = ipm_data(data).connection_axes[static_cast<size_t>(k)].col(r % 3).template cast<S>().dot(
        ipm_data(data).block_target[static_cast<size_t>(k)]);
  }

  LcpIpmSettings<double> options;
  options.max_iterations = settings.ipm_iterations;
  options.tolerance = settings.ipm_tolerance;
  options.kappa = settings.ipm_kappa;
  options.warm_start = warm;
  if constexpr (std::is_same_v<S, double>) {
    ipm_data(data).result = solve_mixed_lcp<double>(lcp, options, ipm_data(data).workspace);
    v_next = ipm_data(data).workspace.x;  // after every read of v: v_next may alias it
    ipm_data(data).z = ipm_data(data).workspace.z;
  } else {
    MixedLcp& value = ipm_data(data).problem_value;
    copy_values(lcp.M, value.M);
    copy_values(lcp.G, value.G);
    copy_values(lcp.F, value.F);
    copy_values(lcp.q, value.q);
    copy_values(lcp.m, value.m);
    copy_values(lcp.A, value.A);
    copy_values(lcp.b, value.b);
    ipm_data(data).result = solve_mixed_lcp<double>(value, options, ipm_data(data).workspace);
    propagate_derivatives(lcp, data, v_next);
  }
  if (!ipm_data(data).result.converged) data.status |= kStatusSolverNotConverged;
  ipm_data(data).warm_ncontacts = ipm_data(data).result.converged ? nc : -1;
  for (int k = 0; k < nc; ++k) ipm_data(data).warm_pair[k] = {data.contacts[k].geom_a, data.contacts[k].geom_b};
  for (int l = 0; l < nl; ++l) {
    ipm_data(data).warm_limit_coord[static_cast<size_t>(l)] = ipm_data(data).limit_coord[static_cast<size_t>(l)];
    ipm_data(data).warm_limit_side[static_cast<size_t>(l)] = ipm_data(data).limit_side[static_cast<size_t>(l)];
  }
}

// ---- the contact model's hooks (contact/models/ipm.hpp) ----

template <class S>
detail::OpaqueWorkspace IpmContact::make_workspace(const ModelTpl<S>& model, const ContactWorkspaceSizes& sizes) {
  return detail::OpaqueWorkspace(std::make_unique<IpmDataTpl<S>>(model, sizes.contacts, sizes.limit_rows));
}

void IpmContact::check_settings(const ContactSettings& c) {
  // step() calls this every time: build the location (a heap string) only for an error.
  auto where = [] { return SourceLocation{"", 0, "contact settings"}; };
  if (c.ipm_iterations < 1)
    throw ModelError(where(), "ipm_iterations: expected >= 1, got " + std::to_string(c.ipm_iterations));
  auto require = [&](const char* name, double x) {
    if (!std::isfinite(x) || x < 0.0)
      throw ModelError(where(), std::string(name) + ": expected a finite number >= 0, got " + std::to_string(x));
  };
  require("ipm_tolerance", c.ipm_tolerance);
  require("ipm_kappa", c.ipm_kappa);
  if (c.ipm_friction_directions < 3)  // fewer cannot span the tangent plane
    throw ModelError(where(), "ipm_friction_directions: expected >= 3 (directions spanning the friction cone), got " +
                                std::to_string(c.ipm_friction_directions));
}

template <class S>
void IpmContact::forget_warm_start(DataTpl<S>& data) {
  ipm_data(data).warm_ncontacts = -1;
}

bool IpmContact::jacobian_by_reverse_mode(const Model& model) { return has_joint_constraints(model); }

template <class S>
S IpmContact::normal_force(const ModelTpl<S>&, const DataTpl<S>& data, int k, int nc, const S& dt) {
  // the impulses are the last solve's only if it saw these contacts
  const IpmDataTpl<S>& ipm = ipm_data(data);
  return ipm.ncontacts == nc && ipm.z.size() >= nc ? S(ipm.z[k] / dt) : S(0);
}

#define GRADYN_INSTANTIATE(S)                                                                                    \
  template void ipm_contact_velocity<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,      \
                                        const VecRef<S>&, const NoDeduce<S>&, VecOut<S>);                        \
  template detail::OpaqueWorkspace IpmContact::make_workspace<S>(const ModelTpl<S>&, const ContactWorkspaceSizes&); \
  template void IpmContact::forget_warm_start<S>(DataTpl<S>&);                                                    \
  template S IpmContact::normal_force<S>(const ModelTpl<S>&, const DataTpl<S>&, int, int, const S&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
