// Forward-mode derivatives of the penalty forces stage (contact_generalized_forces, penalty.hpp):
// d tau_c / dq along tangent directions and d tau_c / dv, for the step's analytical Jacobian
// (sim/step_jacobian.hpp). The contact set and every branch (in contact or not, force clamped
// at zero, which geom's friction) are those of the forward pass; within them this is exact.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Adds (+=) d tau_c / dq (tangent directions, see integrate.hpp) into dtau_dq and d tau_c / dv
/// into dtau_dv (nv x nv each), tau_c being the penalty contact and joint-limit forces. Needs
/// contact_generalized_forces(q, v) to have run on data (contacts, geom poses, contact forces)
/// and data.oMi, oS, ov to be current at (q, v) (after aba, rnea or rnea_derivatives).
/// Its workspace is in data (preallocated).
void penalty_forces_jacobian(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                             Eigen::Ref<Eigen::MatrixXd> dtau_dq, Eigen::Ref<Eigen::MatrixXd> dtau_dv);

}  // namespace gradyn
