// Forward-mode derivatives of the velocity-level contact stage (an impulse-level contact model:
// pgs, ipm) for the step's analytical Jacobian (sim/step_jacobian.hpp). What differs between the
// models (their impulses, limit rows, target branches and the response below) comes through each
// model's hooks (contact/models/<model>.hpp, written in src/contact/<model>_impulse_jacobian.cpp);
// the rest is here.
//
// Both solvers return impulses z on rows with Jacobian J (contact normal and friction directions,
// joint limits; the ipm's gamma rows have none) such that
//     M(q) (v+ - v) = dt (tau - c(q, v)) + J(q)^T z,
// with conditions on the rows' rates J v+ - target that pick z. Two pieces:
//  1. With z held, the equation is the step without contact at the total acceleration a = (v+ - v) / dt
//     under the extra generalised forces J^T z / dt: rnea_derivatives at that a, and the impulse
//     forces' change with q (contact points and frames move, every joint axis is carried), which
//     add_impulse_forces_jacobian adds. That gives dv+|z.
//  2. The impulses respond to the change w = d(J v+)|z - d target of the rows' rates:
//       Pgs: the converged active set (as pgs_implicit_vjp; Nimble): free rows keep (A z + b)_i = 0,
//            clamped rows stay on their bound, dz = -system^-1 P_free w (pgs_implicit_jvp);
//       Ipm: the linearised KKT conditions at the returned point (paper 000, Eq. 3) by the Schur
//            complement of M: dz = -(J M^-1 J^T - F + D)^-1 w, D = diag(s / z);
//     and dv+ = dv+|z + M^-1 J^T dz (impulse_response).
// The targets (Baumgarte, restitution, gap, joint-limit) are differentiated on the branch the step
// took; a contact set, active set or target branch that changes is not differentiable (the one-sided
// derivative of the step's branch). PGS is solved to a tolerance: its Jacobian is that of the exact
// solution on the active set, within the solver's tolerance of finite differences.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Adds d(J^T z / dt)/dq (z held; tangent directions) into dtau_dq (nv x nv), and records in data the
/// contacts' rate, depth and approach derivatives that impulse_response reads. Needs the step's
/// contact stage (the model's velocity hook: pgs_contact_velocity, ipm_contact_velocity) to have run at (q, v) with result
/// v_next, and data.oMi, oS, ov current at (q, v). Workspace in data.
void add_impulse_forces_jacobian(const Model& model, Data& data, const VecRef<double>& q,
                                 const VecRef<double>& v_next, double dt, Eigen::Ref<Eigen::MatrixXd> dtau_dq);

/// The impulses' response as a map on the velocity rows with the impulses held: for those rows
/// dv_held = dv+|z / d(dq, v, tau) the full rows are  T dv_held + [QR 0],  T = I + M^-1 J^T dz/dw J
/// (nv x nv), QR = M^-1 J^T dz/dw R (nv x 2nv; R the rows' own change with q and v, v+ held, and
/// their targets'), where dz/dw is the impulses' response to a change w of the rows' rates. Applying
/// T to M^-1 before the product with the state columns costs one nv x nv product instead of a solve
/// per column. At the state (q, v) whose step gave v_next; Minv: M^-1 at q. Call after
/// add_impulse_forces_jacobian on the same data. False (T and QR untouched) when the step had no
/// contact or limit rows. Workspace in data (sized by the first call with a given row count).
bool impulse_response(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                      const VecRef<double>& v_next, double dt, const Eigen::MatrixXd& Minv, Eigen::Ref<Eigen::MatrixXd> T,
                      Eigen::Ref<Eigen::MatrixXd> QR);

}  // namespace gradyn
