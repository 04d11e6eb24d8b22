// Reverse mode of the interior-point contact; the derivation is in contact/ipm_contact_vjp.hpp.
#include "gradyn/contact/ipm_contact_vjp.hpp"

#include <cmath>
#include <string>
#include <type_traits>

#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide_vjp.hpp"
#include "gradyn/contact/detail/contact_jacobian.hpp"
#include "gradyn/contact/ipm_contact.hpp"
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/contact/lcp_ipm.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

void ipm_contact_velocity_vjp(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                              double dt, const VecRef<double>& v_next_bar, VecOut<double> q_bar, VecOut<double> v_bar,
                              VecOut<double> a_free_bar, ModelTangent& model_bar) {
  const ContactSettings& settings = model.contact;
  const int nc = data.ncontacts, nl = ipm_data(data).nlimits;
  const int ncouplings = static_cast<int>(model.joint_couplings.size());
  const int nf = joint_friction_rows(model), ne = ipm_data(data).neq;
  if (nc + nl + nf + ne == 0 || ipm_data(data).ncontacts != nc) {  // no row at all: v+ = v_free
    if (nc != 0) throw ArgumentError("ipm_contact_velocity_vjp: data holds no interior-point solve for these contacts");
    v_bar += v_next_bar;
    a_free_bar += dt * v_next_bar;
    return;
  }
  const int nv = model.nv, nb = model.nbodies();
  const int N = settings.ipm_friction_directions;
  const int row_f = nc, row_gamma = nc + N * nc, row_limit = (N + 2) * nc, row_joint_friction = row_limit + nl;
  const MixedLcp& lcp = ipm_data(data).problem;
  IpmWorkspace& ws = ipm_data(data).workspace;
  const Eigen::Index ni = lcp.n_ineq();
  if (ni != row_joint_friction + 3 * nf || lcp.n_eq() != ne)
    throw ArgumentError("ipm_contact_velocity_vjp: data's LCP has " + std::to_string(ni) + " rows, expected " +
                        std::to_string(row_joint_friction + 3 * nf) + " for these contacts, limits and joint friction");

  // The LCP's adjoint (paper 000, Eq. 3). mixed_lcp_vjp accumulates into a zeroed gradient, so
  // grad.q = -lambda_x and grad.m = lambda_s (see its header).
  MixedLcp& grad = ipm_data(data).adj;
  if (grad.n_x() != nv || grad.n_ineq() != ni || grad.n_eq() != ne) {
    grad = MixedLcp(nv, ne, ni);  // allocates: only when the contact count changed
  } else {
    grad.M.setZero();
    grad.G.setZero();
    grad.F.setZero();
    grad.A.setZero();
    grad.q.setZero();
    grad.m.setZero();
    grad.b.setZero();
  }
  ipm_data(data).adj_column = v_next_bar;
  mixed_lcp_vjp<double>(lcp, ws, ipm_data(data).adj_column, ipm_data(data).adj_none, ipm_data(data).adj_none, ipm_data(data).adj_none, grad);
  Eigen::VectorXd& lambda_x = ipm_data(data).adj_lambda_x;
  lambda_x = -grad.q;
  const Eigen::VectorXd& lambda_s = grad.m;
  const Eigen::VectorXd& x = ws.x;
  const Eigen::VectorXd& z = ws.z;

  for (int i = 0; i < nb; ++i) data.adj_pose_bar[i].setZero();
  for (int k = 0; k < nc; ++k) data.contact_bar[k].setZero();

  // M: in M x and in q = -M v_free, together grad.q^T dM (x - v_free); v_free_bar = -M grad.q.
  Eigen::VectorXd& v_free_bar = ipm_data(data).adj_v_free_bar;
  v_free_bar.noalias() = lcp.M * lambda_x;
  ipm_data(data).adj_column = x - ipm_data(data).v_free;
  detail::mass_bilinear_vjp<double>(model, data, grad.q, ipm_data(data).adj_column, 1.0, ipm_data(data).adj_scratch, model_bar);

  // J: G = -J_hat, J_hat's rows combine the basis rows; J_bar = a1 x^T + a2 lambda_x^T.
  Eigen::VectorXd& weight = ipm_data(data).adj_row;
  for (int pass = 0; pass < 2; ++pass) {
    const Eigen::VectorXd& per_row = pass == 0 ? lambda_s : z;
    weight.head(3 * nc).setZero();
    for (int k = 0; k < nc; ++k) {
      weight[3 * k] = per_row[k];
      for (int j = 0; j < N; ++j) {
        const Eigen::Vector2d d = ipm_friction_direction(j, N);
        const double w = per_row[row_f + N * k + j];
        weight[3 * k + 1] += d[0] * w;
        weight[3 * k + 2] += d[1] * w;
      }
    }
    detail::add_contact_jacobian_rank_one_vjp<double>(model, data, weight, pass == 0 ? x : lambda_x,
                                                     ipm_data(data).adj_scratch, model_bar);
  }

  // Limit rows: G row = -J_l, J_l_bar = lambda_s x^T + z lambda_x^T (q enters through a planar angle);
  // m = -target.
  for (int l = 0; l < nl; ++l) {
    const int r = row_limit + l;
    const int coord = ipm_data(data).limit_coord[static_cast<size_t>(l)], side = ipm_data(data).limit_side[static_cast<size_t>(l)];
    joint_limit_jacobian_vjp(model, q, coord, side, lambda_s[r], x, q_bar);
    joint_limit_jacobian_vjp(model, q, coord, side, z[r], lambda_x, q_bar);
    joint_limit_target_vjp(model, q, coord, side, dt, -lambda_s[r], q_bar, model_bar);
  }

  // Dry joint friction: m = frictionloss dt on each gamma row.
  for_each_joint_friction_row(model, [&](int k, int dof) {
    model_bar.frictionloss[dof] += lambda_s[row_joint_friction + 2 * nf + k] * dt;
  });

  // Coupling rows (joint_constraints.hpp): A row = J_c, A_bar = -(lambda_y x^T + y lambda_x^T); b = target.
  for (int c = 0; c < ncouplings; ++c) {
    const JointCoupling& coupling = model.joint_couplings[static_cast<size_t>(c)];
    joint_coupling_jacobian_vjp(model, coupling, q, -grad.b[c], x, q_bar, &model_bar);  // grad.b = lambda_y
    joint_coupling_jacobian_vjp(model, coupling, q, -ws.y[c], lambda_x, q_bar, &model_bar);
    joint_coupling_target_vjp(model, coupling, q, v, dt, grad.b[c], q_bar, v_bar, model_bar);
  }
  // Connection rows (the equality rows after the couplings'): the same, through the body poses;
  // rows no joint moves were left out (their adjoints are 0).
  if (ne > ncouplings) {
    ipm_data(data).adj_eq_a.setZero();  // lambda_y, then y, by joint row
    ipm_data(data).adj_eq_b.setZero();
    for (int e = ncouplings; e < ne; ++e) {
      const int row = ipm_data(data).eq_source[static_cast<size_t>(e)];
      ipm_data(data).adj_eq_a[row] = grad.b[e];
      ipm_data(data).adj_eq_b[row] = ws.y[e];
    }
    connection_rows_vjp(model, data, ipm_data(data).connection_axes, ipm_data(data).adj_eq_a, -1.0, ncouplings, x, ipm_data(data).adj_scratch, model_bar);
    connection_rows_vjp(model, data, ipm_data(data).connection_axes, ipm_data(data).adj_eq_b, -1.0, ncouplings, lambda_x, ipm_data(data).adj_scratch, model_bar);
    connection_targets_vjp(model, data, ipm_data(data).connection_axes, ipm_data(data).adj_eq_a.data() + ncouplings, 1.0, v, dt, v_bar, model_bar);
  }

  // F: mu_k at (gamma_k, lambda_n,k) as -mu_k; -cfm on the normal, friction, limit and joint-friction
  // diagonal (not on the gamma rows).
  double cfm_bar = 0.0;
  for (Eigen::Index r = 0; r < row_gamma; ++r) cfm_bar += lambda_s[r] * z[r];
  for (Eigen::Index r = row_limit; r < row_joint_friction + 2 * nf; ++r) cfm_bar += lambda_s[r] * z[r];
  model_bar.contact.cfm += cfm_bar;
  for (int k = 0; k < nc; ++k) {
    const Contact& c = data.contacts[k];
    model_bar.geom_friction[c.friction_geom] += lambda_s[row_gamma + k] * z[k];
  }

  // m = -target, the branch the forward took.
  weight.head(3 * nc).setZero();  // now: the adjoint of each approach velocity J_n v (normal rows)
  bool any_bounce = false;
  for (int k = 0; k < nc; ++k) {
    const Contact& c = data.contacts[k];
    const double target_bar = -lambda_s[k];
    switch (ipm_data(data).target_branch[k]) {
      case kIpmTargetBaumgarte: {
        const double excess = c.depth - settings.slop;
        data.contact_bar[k].depth += target_bar * settings.erp / dt;
        model_bar.contact.erp += target_bar * excess / dt;
        model_bar.contact.slop -= target_bar * settings.erp / dt;
        break;
      }
      case kIpmTargetGapBounce:  // depth / dt - e J_n v
        data.contact_bar[k].depth += target_bar / dt;
        [[fallthrough]];
      case kIpmTargetRestitution: {  // -e J_n v
        const double e = model.geoms[c.restitution_geom].restitution;
        const double approach = ipm_data(data).JT.col(3 * k).dot(v);
        model_bar.geom_restitution[c.restitution_geom] += target_bar * -approach;
        weight[3 * k] = target_bar * -e;
        any_bounce = true;
        break;
      }
      case kIpmTargetGap:
        data.contact_bar[k].depth += target_bar / dt;
        break;
      default:  // zero target, inert row: no dependence
        break;
    }
  }
  if (any_bounce) {
    v_bar.noalias() += ipm_data(data).JT.leftCols(3 * nc) * weight.head(3 * nc);
    detail::add_contact_jacobian_rank_one_vjp<double>(model, data, weight, v, ipm_data(data).adj_scratch, model_bar);
  }

  collide_vjp<double>(model, data, data.contact_bar, data.adj_pose_bar, model_bar);
  body_poses_vjp<double>(model, data, q, data.adj_pose_bar, q_bar, model_bar);
  v_bar += v_free_bar;
  a_free_bar += dt * v_free_bar;
}

}  // namespace gradyn
