// A Model as a flat model (flat/flat_model.hpp), and rollouts of many worlds on the flat kernels
// on the CPU: the reference the CUDA backend (cuda/) is checked against, since both compile the
// one source flat/step.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "gradyn/model/model.hpp"

namespace gradyn::flat {

/// The flat arrays of a model (reals in double; a float device copy converts them).
struct FlatArrays {
  std::vector<std::int32_t> ints;
  std::vector<double> reals;
};

/// The model as flat arrays. Throws ArgumentError, naming what the flat kernels do not run and
/// what to do instead, for: contact model 'ipm', pgs differentiated through its sweeps, Brown friction,
/// networks, joints other than revolute, continuous, prismatic and free (a free joint must join
/// a body to the world, with no spring), collision pairs other than plane, sphere, capsule and box
/// against a plane, and sphere and capsule against each other.
FlatArrays export_flat_model(const Model& model);

/// The workspace bounds the kernels are compiled for: a model with more bodies or DoFs than the
/// largest is refused by export_flat_model.
inline constexpr int kMaxFlatBodies = 64;
inline constexpr int kMaxFlatDofs = 96;
/// The most PGS rows (3 per contact, 1 per joint limit) a step of the kernels holds.
inline constexpr int kMaxFlatRows = 96;

/// T steps of B worlds on the CPU with the flat kernels, one world after the other. Row-major:
/// q0 (B, nq), v0 (B, nv), taus (B, T, nv) or null, ctrls (B, T, nu) or null; qs (B, T+1, nq),
/// vs (B, T+1, nv) and status (B, OR of every step's bits) are written.
void flat_rollout_cpu(const FlatArrays& model, int B, int T, const double* q0, const double* v0, const double* taus,
                      const double* ctrls, double dt, double* qs, double* vs, std::uint32_t* status);

/// One step's reverse mode on the CPU with the flat kernels (flat/step_vjp.hpp): given the adjoints
/// of the next state, writes q_bar (nq), v_bar (nv), tau_bar (nv) and ctrl_bar (nu; may be null).
void flat_step_vjp_cpu(const FlatArrays& model, const double* q, const double* v, const double* tau,
                       const double* ctrl, double dt, const double* q_next_bar, const double* v_next_bar, double* q_bar,
                       double* v_bar, double* tau_bar, double* ctrl_bar);

}  // namespace gradyn::flat
