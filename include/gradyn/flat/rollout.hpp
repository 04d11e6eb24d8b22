// T steps of world w of a batch laid out world-last (gradyn/cuda/backend.h: a state (n, B), a
// trajectory (T + 1, n, B), controls (T, nu, B)): what one GPU thread of the CUDA backend runs, and
// what its host stand-in (tests/python/host_backend/) runs for each world in turn.
#pragma once

#include <cstddef>

#include "gradyn/flat/step_vjp.hpp"

namespace gradyn::flat {

/// The state lives in q, v (n, B), updated in place, or, when qs and vs are given, in the
/// trajectory itself (row t + 1 from row t; q, v then receive the final state unless write_final is
/// false, which leaves them untouched). taus, ctrls and step_status ((T, B), each step's flags) may
/// be null. Returns the OR of the steps' flags.
template <class S, int MB, int MD, int MR>
GRADYN_HD std::uint32_t rollout_world(const FlatModel<S>& m, StepWorkspace<S, MB, MD, MR>& ws, int B, int T, S dt, int w,
                                      S* q, S* v, const S* taus, const S* ctrls, S* qs, S* vs,
                                      std::uint32_t* step_status, bool write_final = true) {
  const int nq = m.nq, nv = m.nv, nu = m.nu;
  const std::size_t b = static_cast<std::size_t>(B);
  const std::size_t sq = static_cast<std::size_t>(nq) * b, sv = static_cast<std::size_t>(nv) * b;
  if (qs) {
    for (int k = 0; k < nq; ++k) qs[k * b + w] = q[k * b + w];
    for (int k = 0; k < nv; ++k) vs[k * b + w] = v[k * b + w];
  }
  reset_warm_start(ws);  // a rollout starts from zero impulses (PGS), as the engine's
  std::uint32_t bits = 0;
  for (int t = 0; t < T; ++t) {
    const std::size_t st = static_cast<std::size_t>(t);
    const S* qc = qs ? qs + st * sq + w : q + w;
    const S* vc = vs ? vs + st * sv + w : v + w;
    S* qn = qs ? qs + (st + 1) * sq + w : q + w;
    S* vn = vs ? vs + (st + 1) * sv + w : v + w;
    const S* tau = taus ? taus + st * sv + w : nullptr;
    const S* ctrl = ctrls ? ctrls + st * nu * b + w : nullptr;
    const std::uint32_t s = step(m, ws, qc, B, vc, B, tau, B, ctrl, B, dt, qn, B, vn, B);
    if (step_status) step_status[st * b + w] = s;
    bits |= s;
  }
  if (qs && write_final) {
    for (int k = 0; k < nq; ++k) q[k * b + w] = qs[T * sq + k * b + w];
    for (int k = 0; k < nv; ++k) v[k * b + w] = vs[T * sv + k * b + w];
  }
  return bits;
}

/// Reverse mode of rollout_world for world w, from its trajectory qs (T + 1, nq, B) and vs: given
/// the adjoints qs_bar and vs_bar of the trajectory (same layouts; either may be null: zeros),
/// writes q0_bar (nq, B) and v0_bar (nv, B), and taus_bar (T, nv, B) and ctrls_bar (T, nu, B) when
/// not null. Each step's forward pass is recomputed from its state (step_vjp).
template <class S, int MB, int MD, int MR>
GRADYN_HD void rollout_vjp_world(const FlatModel<S>& m, StepVjpWorkspace<S, MB, MD, MR>& ws, int B, int T, S dt, int w,
                                 const S* qs, const S* vs, const S* taus, const S* ctrls, const S* qs_bar,
                                 const S* vs_bar, S* q0_bar, S* v0_bar, S* taus_bar, S* ctrls_bar) {
  const int nq = m.nq, nv = m.nv, nu = m.nu;
  const std::size_t b = static_cast<std::size_t>(B);
  const std::size_t sq = static_cast<std::size_t>(nq) * b, sv = static_cast<std::size_t>(nv) * b;
  S lq[MD + MB], lv[MD], gq[MD + MB], gv[MD];  // the adjoint of the state after step t, then before it
  const std::size_t last = static_cast<std::size_t>(T);
  for (int k = 0; k < nq; ++k) lq[k] = qs_bar ? qs_bar[last * sq + k * b + w] : S(0);
  for (int k = 0; k < nv; ++k) lv[k] = vs_bar ? vs_bar[last * sv + k * b + w] : S(0);
  for (int t = T - 1; t >= 0; --t) {
    const std::size_t st = static_cast<std::size_t>(t);
    const S* tau = taus ? taus + st * sv + w : nullptr;
    const S* ctrl = ctrls ? ctrls + st * nu * b + w : nullptr;
    S* tau_bar = taus_bar ? taus_bar + st * sv + w : nullptr;
    S* ctrl_bar = ctrls_bar ? ctrls_bar + st * nu * b + w : nullptr;
    step_vjp(m, ws, qs + st * sq + w, B, vs + st * sv + w, B, tau, B, ctrl, B, dt, lq, 1, lv, 1, gq, gv, tau_bar, B,
             ctrl_bar, B);
    for (int k = 0; k < nq; ++k) lq[k] = gq[k] + (qs_bar ? qs_bar[st * sq + k * b + w] : S(0));
    for (int k = 0; k < nv; ++k) lv[k] = gv[k] + (vs_bar ? vs_bar[st * sv + k * b + w] : S(0));
  }
  for (int k = 0; k < nq; ++k) q0_bar[k * b + w] = lq[k];
  for (int k = 0; k < nv; ++k) v0_bar[k * b + w] = lv[k];
}

}  // namespace gradyn::flat
