// A small driver for profilers (valgrind --tool=callgrind, perf): calls one algorithm many times
// on one robot, cycling through the same random states as the benchmarks.
//
//   build/bench/bench/gradyn_profile_aba laikago aba 20000
//   valgrind --tool=callgrind --dump-instr=yes build/bench/bench/gradyn_profile_aba laikago aba 20000
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_cases.hpp"

int main(int argc, char** argv) {
  using namespace gradyn_bench;
  const std::string model = argc > 1 ? argv[1] : "laikago";
  const std::string algorithm = argc > 2 ? argv[2] : "aba";
  const long calls = argc > 3 ? std::atol(argv[3]) : 20000;
  const std::string models = GRADYN_BENCH_MODELS;
  BenchCase c;
  if (model == "iiwa") c = make_case(model, models + "/grid/iiwa.urdf", false, 1);
  else if (model == "hyq") c = make_case(model, models + "/grid/hyq.urdf", false, 1);
  else if (model == "simple_humanoid") c = make_case(model, models + "/simple_humanoid.urdf", true, 1);
  else if (model == "laikago") c = make_case(model, models + "/laikago/laikago_toes_zup.urdf", true, 1);
  else {
    std::fprintf(stderr, "unknown model '%s' (expected iiwa, hyq, simple_humanoid or laikago)\n", model.c_str());
    return 2;
  }
  Algorithm which;
  if (algorithm == "aba") which = Algorithm::Aba;
  else if (algorithm == "rnea") which = Algorithm::Rnea;
  else if (algorithm == "crba") which = Algorithm::Crba;
  else {
    std::fprintf(stderr, "unknown algorithm '%s' (expected aba, rnea or crba)\n", algorithm.c_str());
    return 2;
  }
  const double checksum = run_gradyn_calls(c, which, calls);
  std::printf("%s %s x%ld, checksum %.6e\n", model.c_str(), algorithm.c_str(), calls, checksum);
  return 0;
}
