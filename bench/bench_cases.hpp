// The benchmark cases shared by the gradyn and the Pinocchio benchmarks: a robot loaded by
// gradyn's URDF loader and a fixed set of random states in gradyn's q/v layout, cycled through
// by every benchmark so that each call does real work on varied inputs.
#pragma once

#include <string>
#include <vector>

#include "gradyn/model/model.hpp"

namespace gradyn_bench {

// Power of two: the benchmarks cycle with `k = (k + 1) & (kStates - 1)`.
inline constexpr int kStates = 64;

enum class Algorithm { Aba, Rnea, Crba };
const char* algorithm_name(Algorithm algorithm);
inline constexpr Algorithm kAlgorithms[] = {Algorithm::Aba, Algorithm::Rnea, Algorithm::Crba};

struct BenchCase {
  std::string name;     // short model name used in benchmark names, e.g. "hyq"
  std::string urdf;     // absolute path
  bool floating_base = false;
  gradyn::Model model;
  // kStates random states, gradyn layout: q (nq), v, tau and a (nv).
  std::vector<Eigen::VectorXd> q, v, tau, a;
  // gradyn's results on those states (for the cross-check against Pinocchio): aba(q, v, tau),
  // rnea(q, v, a), crba(q).
  std::vector<Eigen::VectorXd> aba_result, rnea_result;
  std::vector<Eigen::MatrixXd> crba_result;
};

/// Loads `urdf` with gradyn and draws kStates states from a generator seeded by `seed`.
BenchCase make_case(const std::string& name, const std::string& urdf, bool floating_base, unsigned seed);

/// `calls` calls of gradyn's `algorithm` on the case, cycling through its states, in a plain loop
/// (no timer): the profiling drivers' and count_instructions.py's unit of work. Returns a checksum
/// of the results, so that no call can be optimised away.
double run_gradyn_calls(const BenchCase& bench_case, Algorithm algorithm, long calls);

/// Benchmark name, e.g. "aba/hyq/gradyn"; compare_pinocchio.py parses this shape.
std::string benchmark_name(Algorithm algorithm, const std::string& model, const std::string& engine);

}  // namespace gradyn_bench
