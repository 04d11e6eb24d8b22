// A small driver for profilers (valgrind --tool=callgrind, perf): calls one algorithm many times
// on one robot, cycling through the same random states as the benchmarks.
//
//   build/bench/bench/gradyn_profile_aba laikago aba 20000
//   valgrind --tool=callgrind --dump-instr=yes build/bench/bench/gradyn_profile_aba laikago aba 20000
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_cases.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/rnea.hpp"

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
  gradyn::Data data(c.model);
  double checksum = 0;
  for (long n = 0; n < calls; ++n) {
    const int k = static_cast<int>(n & (kStates - 1));
    if (algorithm == "aba") checksum += gradyn::aba<double>(c.model, data, c.q[k], c.v[k], c.tau[k])[0];
    else if (algorithm == "rnea") checksum += gradyn::rnea<double>(c.model, data, c.q[k], c.v[k], c.a[k])[0];
    else if (algorithm == "crba") checksum += gradyn::crba<double>(c.model, data, c.q[k])(0, 0);
    else {
      std::fprintf(stderr, "unknown algorithm '%s' (expected aba, rnea or crba)\n", algorithm.c_str());
      return 2;
    }
  }
  std::printf("%s %s x%ld, checksum %.6e\n", model.c_str(), algorithm.c_str(), calls, checksum);
  return 0;
}
