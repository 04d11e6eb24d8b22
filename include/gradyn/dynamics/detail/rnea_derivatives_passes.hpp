// The passes of rnea_derivatives (src/dynamics/rnea_derivatives.cpp), callable one by one so that
// the step's Jacobian (src/sim/step_jacobian.cpp) can solve for the accelerations between them
// with the joint-space inertia the first pass builds, instead of running ABA beforehand. Internal.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn::detail {

/// The terms that do not depend on the accelerations, at (q, v): oMi, oS, ov, oc, oI, deriv_fv,
/// the subtree sums oIc, deriv_Bc, deriv_hc, then deriv_P, deriv_Q and M (armature included).
/// aba_is_current: the caller's last aba() / forward_dynamics() ran at this (q, v) and nothing has
/// overwritten its oMi, oS, ov, oc, oI since; they are reused (aba's pass 1 computes them by the
/// same expressions, so the result is the same bit for bit) instead of recomputed.
void rnea_derivatives_kinematics(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                                 bool aba_is_current = false);

/// The accelerations a (gravity included) and body forces: oa, deriv_Fc (subtree sums). Needs the
/// kinematics pass. With a = 0, S_i^T deriv_Fc[i] are the bias forces rnea(q, v, 0).
void rnea_derivatives_forces(const Model& model, Data& data, const VecRef<double>& a);

/// sign * d rnea / dq and sign * d rnea / dv (nv x nv, overwritten) from the two passes above.
void rnea_derivatives_partials(const Model& model, Data& data, double sign, Eigen::Ref<Eigen::MatrixXd> dtau_dq,
                               Eigen::Ref<Eigen::MatrixXd> dtau_dv);

}  // namespace gradyn::detail
