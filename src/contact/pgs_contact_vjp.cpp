// Reverse mode of velocity-level PGS contact; the derivation is in contact/pgs_contact_vjp.hpp.
#include "gradyn/contact/pgs_contact_vjp.hpp"

#include <cmath>
#include <type_traits>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide_vjp.hpp"
#include "gradyn/contact/detail/contact_jacobian.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/contact/pgs.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/kinematics_vjp.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {

// The limit and coupling rows' share of J_bar += a z^T (rows 3 nc + l, then the coupling rows after
// the friction rows; contact/joint_limits.hpp, joint_constraints.hpp). Friction rows are constant.
void add_limit_rows_rank_one(const Model& model, const Data& data, const Eigen::Ref<const Eigen::VectorXd>& q,
                             const Eigen::VectorXd& a, const Eigen::VectorXd& z, Eigen::Ref<Eigen::VectorXd> q_bar,
                             ModelTangent& model_bar) {
  const int nc = data.ncontacts;
  for (int l = 0; l < pgs_data(data).nlimits; ++l)
    joint_limit_jacobian_vjp(model, q, pgs_data(data).limit_coord[static_cast<size_t>(l)],
                             pgs_data(data).limit_side[static_cast<size_t>(l)], a[3 * nc + l], z, q_bar);
  const int row_coupling = 3 * nc + pgs_data(data).nlimits + joint_friction_rows(model);
  for (size_t c = 0; c < model.joint_couplings.size(); ++c)
    joint_coupling_jacobian_vjp(model, model.joint_couplings[c], q, a[row_coupling + static_cast<int>(c)], z, q_bar,
                                &model_bar);
}

// The limit and coupling rows' targets in b = J v_free - target (pgs_contact.cpp).
void limit_targets_vjp(const Model& model, const Data& data, const Eigen::Ref<const Eigen::VectorXd>& q,
                       const Eigen::Ref<const Eigen::VectorXd>& v, double dt, const Eigen::VectorXd& b_bar,
                       Eigen::Ref<Eigen::VectorXd> q_bar, Eigen::Ref<Eigen::VectorXd> v_bar, ModelTangent& model_bar) {
  const int nc = data.ncontacts;
  for (int l = 0; l < pgs_data(data).nlimits; ++l)
    joint_limit_target_vjp(model, q, pgs_data(data).limit_coord[static_cast<size_t>(l)],
                           pgs_data(data).limit_side[static_cast<size_t>(l)], dt, -b_bar[3 * nc + l], q_bar, model_bar);
  const int row_coupling = 3 * nc + pgs_data(data).nlimits + joint_friction_rows(model);
  for (size_t c = 0; c < model.joint_couplings.size(); ++c)
    joint_coupling_target_vjp(model, model.joint_couplings[c], q, v, dt, -b_bar[row_coupling + static_cast<int>(c)],
                              q_bar, v_bar, model_bar);
}

}  // namespace

void pgs_contact_velocity_vjp(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                              double dt, const VecRef<double>& v_next_bar, VecOut<double> q_bar, VecOut<double> v_bar,
                              VecOut<double> a_free_bar, ModelTangent& model_bar) {
  const ContactSettings& settings = model.contact;
  const int nc = data.ncontacts;
  const BoxedLcp& lcp = pgs_data(data).problem;
  const int nl = pgs_data(data).nlimits;
  // the first connection row (contact_constraints.hpp: after the friction and coupling rows)
  const int row_connection =
      3 * nc + nl + joint_friction_rows(model) + static_cast<int>(model.joint_couplings.size());
  const int nconn_rows = 3 * model.connection_blocks();
  // 3 nc contact rows, nl joint-limit rows, then the friction, coupling and connection rows
  const int n = nc + nl + pgs_data(data).njoint_rows == 0 ? 0 : lcp.size();
  // v+ = v_free + X lambda, v_free = v + dt a_free
  Eigen::VectorXd& v_free_bar = pgs_data(data).adj_v_free_bar;
  v_free_bar = v_next_bar;
  if (n > 0) {
    const auto JT = pgs_data(data).JT.leftCols(n);
    const auto X = pgs_data(data).MinvJT.leftCols(n);
    const auto lambda = pgs_data(data).lambda.head(n);
    const int nb = model.nbodies();
    for (int i = 0; i < nb; ++i) data.adj_pose_bar[i].setZero();
    for (int k = 0; k < nc; ++k) data.contact_bar[k].setZero();
    // y = J^T lambda (y_bar = M^-1 v+_bar is the adjoint of y at fixed M)
    Eigen::VectorXd& y_bar = pgs_data(data).adj_y_bar;
    minv_solve<double>(model, data, v_next_bar, y_bar);
    pgs_data(data).adj_lambda_bar.noalias() = JT.transpose() * y_bar;
    // the LCP
    BoxedLcpAdjoint& adj = pgs_data(data).adj;
    adj.resize(n);
    if (pgs_data(data).adj_workspace.lambda_bar.size() != n) {  // allocates: a new row count
      // every branch's buffers, so that a later step taking another branch allocates nothing
      pgs_data(data).adj_workspace.resize(n);
      pgs_data(data).adj_lambda.resize(n);
      pgs_data(data).adj_A_sym.resize(n, n);
      pgs_data(data).adj_eigen.resize(n);
    }
    if (pgs_data(data).record_workspace.n != n || pgs_data(data).record_workspace.capacity < settings.pgs_iterations)
      pgs_data(data).record_workspace.resize(n, settings.pgs_iterations);  // allocates: as above
    bool done = false;
    if (settings.pgs_gradient == PgsGradient::Implicit) {
      // a singular active-set system (redundant rows) takes the least-norm adjoint
      pgs_implicit_vjp(lcp, lambda, pgs_data(data).adj_lambda_bar, pgs_data(data).adj_workspace, adj, 1e-9,
                       /*least_norm_if_singular=*/true);
      done = true;
    }
    const bool rank_one_A = done;  // A_bar = -u lambda^T (pgs.hpp)
    if (!done) {  // Sweeps: replay the sweeps from the warm start
      pgs_data(data).adj_lambda = pgs_data(data).warm_start.head(n);  // what the forward solve started from
      PgsOptions options;
      options.max_iterations = settings.pgs_iterations;
      options.tolerance = settings.pgs_tolerance;
      options.record_iterates = true;
      pgs_solve<double>(lcp, options, pgs_data(data).record_workspace, pgs_data(data).adj_lambda);
      adj.resize(n);
      pgs_sweeps_vjp(lcp, pgs_data(data).record_workspace, pgs_data(data).adj_lambda_bar, pgs_data(data).adj_workspace, adj);
    }
    model_bar.contact.cfm += adj.cfm;
    // b = J v_free - target (normal rows)
    v_free_bar.noalias() += JT * adj.b;
    detail::add_contact_jacobian_rank_one_vjp<double>(model, data, adj.b, pgs_data(data).v_free, pgs_data(data).adj_scratch,
                                                      model_bar);
    add_limit_rows_rank_one(model, data, q, adj.b, pgs_data(data).v_free, q_bar, model_bar);
    limit_targets_vjp(model, data, q, v, dt, adj.b, q_bar, v_bar, model_bar);
    // dry joint friction: the row's bounds -+ frictionloss dt
    const int row_joint_friction = 3 * nc + nl;
    for_each_joint_friction_row(model, [&](int r, int dof) {
      model_bar.frictionloss[dof] += dt * (adj.hi[row_joint_friction + r] - adj.lo[row_joint_friction + r]);
    });
    if (nconn_rows > 0) {  // b = J v_free - target
      connection_rows_vjp(model, data, pgs_data(data).connection_axes, adj.b, 1.0, row_connection, pgs_data(data).v_free, pgs_data(data).adj_scratch, model_bar);
      connection_targets_vjp(model, data, pgs_data(data).connection_axes, adj.b.data() + row_connection, -1.0, v, dt, v_bar, model_bar);
    }
    Eigen::VectorXd& approach_bar = pgs_data(data).adj_row;  // per row: adjoint of J_r v (normal rows only)
    approach_bar.setZero(n);
    for (int k = 0; k < nc; ++k) {
      const Contact& c = data.contacts[k];
      const int rn = 3 * k;
      // mu of both friction rows: the pair's larger geom friction
      const double mu_bar = adj.mu[rn + 1] + adj.mu[rn + 2];
      model_bar.geom_friction[c.friction_geom] += mu_bar;
      // target, the branch the forward took
      const double target_bar = -adj.b[rn];
      const double e = model.geoms[c.restitution_geom].restitution;
      const double approach = JT.col(rn).dot(v);
      switch (pgs_target_branch(settings, c.depth, approach, e, dt)) {
        case PgsTargetBranch::Restitution:
          model_bar.geom_restitution[c.restitution_geom] += target_bar * -approach;
          approach_bar[rn] = target_bar * -e;
          break;
        case PgsTargetBranch::Baumgarte:
          data.contact_bar[k].depth += target_bar * settings.erp / dt;
          model_bar.contact.erp += target_bar * (c.depth - settings.slop) / dt;
          model_bar.contact.slop -= target_bar * settings.erp / dt;
          break;
        case PgsTargetBranch::Capped:  // a constant
        case PgsTargetBranch::Zero: break;
      }
    }
    if (!approach_bar.isZero(0.0)) {  // restitution on some row
      v_bar.noalias() += JT * approach_bar;
      detail::add_contact_jacobian_rank_one_vjp<double>(model, data, approach_bar, v, pgs_data(data).adj_scratch,
                                                        model_bar);
    }
    // A = J X: J_bar += (A_bar + A_bar^T) X^T, and -sum_rs sym(A_bar)_rs x_r^T dM x_s.
    if (rank_one_A) {
      // A_bar = -u lambda^T: J_bar += -lambda (X u)^T - u (X lambda)^T and the M term is
      // +(X u)^T dM (X lambda). With y's terms below (J_bar += lambda y_bar^T, -y_bar^T dM X lambda)
      // the first and the M term fold into y_bar -= X u; the second is one more rank-one term.
      Eigen::VectorXd& u = pgs_data(data).adj_row;
      const PgsAdjointWorkspace& aws = pgs_data(data).adj_workspace;
      for (int i = 0; i < n; ++i) u[i] = aws.active[static_cast<size_t>(i)] == 0 ? -aws.y[i] : 0.0;  // -u
      y_bar.noalias() += X * u;
      pgs_data(data).adj_x.noalias() = X * lambda;
      detail::add_contact_jacobian_rank_one_vjp<double>(model, data, u, pgs_data(data).adj_x, pgs_data(data).adj_scratch, model_bar);
      add_limit_rows_rank_one(model, data, q, u, pgs_data(data).adj_x, q_bar, model_bar);
      connection_rows_vjp(model, data, pgs_data(data).connection_axes, u, 1.0, row_connection, pgs_data(data).adj_x,
                          pgs_data(data).adj_scratch, model_bar);
    } else {  // a general A_bar (the sweeps' adjoint): one rank-one term per column, M through sym(A_bar)'s eigenvectors
      pgs_data(data).adj_A_sym = adj.A + adj.A.transpose();
      for (int s = 0; s < n; ++s) {
        pgs_data(data).adj_x = X.col(s);
        pgs_data(data).adj_row = pgs_data(data).adj_A_sym.col(s);
        detail::add_contact_jacobian_rank_one_vjp<double>(model, data, pgs_data(data).adj_row, pgs_data(data).adj_x,
                                                          pgs_data(data).adj_scratch, model_bar);
        add_limit_rows_rank_one(model, data, q, pgs_data(data).adj_row, pgs_data(data).adj_x, q_bar, model_bar);
        connection_rows_vjp(model, data, pgs_data(data).connection_axes, pgs_data(data).adj_row, 1.0, row_connection, pgs_data(data).adj_x,
                            pgs_data(data).adj_scratch, model_bar);
      }
      pgs_data(data).adj_A_sym *= 0.5;
      pgs_data(data).adj_eigen.compute(pgs_data(data).adj_A_sym);
      const double largest = pgs_data(data).adj_eigen.eigenvalues.cwiseAbs().maxCoeff();
      for (int k = 0; k < n; ++k) {
        const double sigma = pgs_data(data).adj_eigen.eigenvalues[k];
        if (std::abs(sigma) <= 1e-15 * largest) continue;
        pgs_data(data).adj_x.noalias() = X * pgs_data(data).adj_eigen.eigenvectors.col(k);
        mass_quadratic_vjp<double>(model, data, pgs_data(data).adj_x, -sigma, data.adj_pose_bar, model_bar);
      }
    }
    // y = J^T lambda, x = M^-1 y: J_bar += lambda y_bar^T, and -y_bar^T dM x
    pgs_data(data).adj_x.noalias() = X * lambda;
    detail::mass_bilinear_vjp<double>(model, data, y_bar, pgs_data(data).adj_x, -1.0, pgs_data(data).adj_column, model_bar);
    pgs_data(data).adj_row = lambda;
    detail::add_contact_jacobian_rank_one_vjp<double>(model, data, pgs_data(data).adj_row, y_bar, pgs_data(data).adj_scratch,
                                                      model_bar);
    add_limit_rows_rank_one(model, data, q, pgs_data(data).adj_row, y_bar, q_bar, model_bar);
    connection_rows_vjp(model, data, pgs_data(data).connection_axes, pgs_data(data).adj_row, 1.0, row_connection, y_bar,
                        pgs_data(data).adj_scratch, model_bar);
    collide_vjp<double>(model, data, data.contact_bar, data.adj_pose_bar, model_bar);
    body_poses_vjp<double>(model, data, q, data.adj_pose_bar, q_bar, model_bar);
  }
  v_bar += v_free_bar;
  a_free_bar += dt * v_free_bar;
}

}  // namespace gradyn
