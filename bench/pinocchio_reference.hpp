// The Pinocchio side of the benchmark comparison. Kept behind this plain interface so that
// Pinocchio's (very heavy) headers are compiled in exactly one translation unit,
// pinocchio_reference.cpp, built only when GRADYN_BENCH_PINOCCHIO is ON.
#pragma once

#include <memory>

#include "bench_cases.hpp"

namespace gradyn_bench {

class PinocchioCase;

/// Loads the case's URDF with Pinocchio's own parser, maps gradyn's joints to Pinocchio's by
/// name (continuous joints: angle -> (cos, sin); the free joint -> Pinocchio's free flyer) and
/// maps every state. Then checks that Pinocchio's aba, rnea and crba equal gradyn's on every
/// state to 1e-9 (relative to the largest entry); on any mismatch it prints which model,
/// algorithm and state differ and calls std::abort, so that a benchmark can never silently
/// time two different computations.
std::shared_ptr<PinocchioCase> make_pinocchio_case(const BenchCase& bench_case);

/// Registers the Pinocchio benchmark of `algorithm` on this case, named
/// benchmark_name(algorithm, model, "pinocchio").
void register_pinocchio_benchmark(const std::shared_ptr<PinocchioCase>& pinocchio_case, Algorithm algorithm);

/// `calls` calls of Pinocchio's `algorithm` on the case in a plain loop (no timer), cycling through
/// its states as the benchmark does; returns a checksum (see run_gradyn_calls).
double run_pinocchio_calls(PinocchioCase& pinocchio_case, Algorithm algorithm, long calls);

}  // namespace gradyn_bench
