// Time stepping without contact: semi-implicit Euler (the papers' scheme) and RK4.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

enum class Integrator : std::uint8_t {
  SemiImplicitEuler,  // v+ = v + dt a(q, v);  q+ = q (+) dt v+
  RK4,                // classical Runge-Kutta on (q, v); stages move q on the manifold
};

/// One step from (q, v) under joint torques tau. Never allocates. q_next/v_next may alias q/v.
/// Sets kStatusNonFinite in data.status when the new state is not finite (never throws for it).
template <class S>
void step(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
          const NoDeduce<S>& dt, Integrator integrator, VecOut<S> q_next, VecOut<S> v_next);

/// T steps from (q0, v0) with taus (T x nv, one row per step, row-major like NumPy). Fills qs ((T+1) x nq) and
/// vs ((T+1) x nv), the initial state in row 0.
template <class S>
void rollout(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
             const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& taus, const NoDeduce<S>& dt, Integrator integrator, MatrixXr<NoDeduce<S>>& qs,
             MatrixXr<NoDeduce<S>>& vs);

}  // namespace gradyn
