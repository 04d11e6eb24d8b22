// Forward kinematics: q (and v) -> body poses (and spatial velocities).
#pragma once

#include <type_traits>

#include "gradyn/model/data.hpp"

namespace gradyn {

template <class S> struct ModelTangentTpl;  // model/params.hpp

// VecRef, VecOut, NoDeduce: the algorithms' vector arguments, and check_size (core/types.hpp).

/// Fills data.liMi and data.oMi from q.
template <class S>
void forward_kinematics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q);

/// Fills data.liMi, data.oMi and the body-frame velocities data.v from q and v.
template <class S>
void forward_kinematics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v);

/// Fills data.oMf (frame poses in the world) from data.oMi; call after forward_kinematics.
template <class S>
void update_frames(const ModelTpl<S>& model, DataTpl<S>& data);

// Every *_vjp function ACCUMULATES into its adjoint outputs (+=): the caller zeroes them first.
// Adjoints of q are in the ambient coordinates (nq entries, one per number in q, quaternion
// components included): the gradient of the computed function of the q array, what an autograd
// framework composes with. Tangent-space adjoints, where needed, are documented where they appear.

}  // namespace gradyn
