// Per-call cost of gradyn's ABA, RNEA and CRBA on four robots, and (when built with
// GRADYN_BENCH_PINOCCHIO) the same calls in Pinocchio on the same URDFs and states, registered
// right after gradyn's so that both run in the same process, interleaved.
//
//   build/bench/bench/gradyn_bench_dynamics --benchmark_filter=aba
//   python bench/compare_pinocchio.py      # the full comparison, see bench/README.md
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_cases.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/rnea.hpp"
#ifdef GRADYN_BENCH_WITH_PINOCCHIO
#include "pinocchio_reference.hpp"
#endif

namespace gradyn_bench {

namespace {

void register_gradyn_benchmark(const std::shared_ptr<const BenchCase>& c, Algorithm algorithm) {
  const std::string name = benchmark_name(algorithm, c->name, "gradyn");
  benchmark::RegisterBenchmark(name.c_str(), [c, algorithm](benchmark::State& state) {
    gradyn::Data data(c->model);
    int k = 0;
    switch (algorithm) {
      case Algorithm::Aba:
        for (auto _ : state) {
          benchmark::DoNotOptimize(gradyn::aba<double>(c->model, data, c->q[k], c->v[k], c->tau[k]));
          benchmark::ClobberMemory();
          k = (k + 1) & (kStates - 1);
        }
        break;
      case Algorithm::Rnea:
        for (auto _ : state) {
          benchmark::DoNotOptimize(gradyn::rnea<double>(c->model, data, c->q[k], c->v[k], c->a[k]));
          benchmark::ClobberMemory();
          k = (k + 1) & (kStates - 1);
        }
        break;
      case Algorithm::Crba:
        for (auto _ : state) {
          benchmark::DoNotOptimize(gradyn::crba<double>(c->model, data, c->q[k]));
          benchmark::ClobberMemory();
          k = (k + 1) & (kStates - 1);
        }
        break;
    }
  });
}

}  // namespace
}  // namespace gradyn_bench

int main(int argc, char** argv) {
  using namespace gradyn_bench;
  const std::string models = GRADYN_BENCH_MODELS;
  struct Spec {
    const char* name;
    std::string urdf;
    bool floating_base;
  };
  const Spec specs[] = {
      {"iiwa", models + "/grid/iiwa.urdf", false},
      {"hyq", models + "/grid/hyq.urdf", false},
      {"simple_humanoid", models + "/simple_humanoid.urdf", true},
      {"laikago", models + "/laikago/laikago_toes_zup.urdf", true},
  };
  std::vector<std::shared_ptr<const BenchCase>> cases;
  unsigned seed = 12345;
  for (const Spec& s : specs) cases.push_back(std::make_shared<const BenchCase>(make_case(s.name, s.urdf, s.floating_base, seed++)));

#ifdef GRADYN_BENCH_WITH_PINOCCHIO
  std::vector<std::shared_ptr<PinocchioCase>> pinocchio_cases;  // checked against gradyn before any timing
  for (const auto& c : cases) pinocchio_cases.push_back(make_pinocchio_case(*c));
#endif
  for (Algorithm algorithm : kAlgorithms)
    for (size_t i = 0; i < cases.size(); ++i) {
      register_gradyn_benchmark(cases[i], algorithm);
#ifdef GRADYN_BENCH_WITH_PINOCCHIO
      register_pinocchio_benchmark(pinocchio_cases[i], algorithm);
#endif
    }

  // --count-calls=ALGORITHM/MODEL/ENGINE/N (e.g. crba/hyq/pinocchio/2000): N calls in a plain loop and
  // nothing else, for instruction counts under valgrind (bench/count_instructions.py runs it twice,
  // with N and 2N calls: the difference is N calls' work, the loading and checks cancel).
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a], flag = "--count-calls=";
    if (arg.rfind(flag, 0) != 0) continue;
    const std::string spec = arg.substr(flag.size());
    for (Algorithm algorithm : kAlgorithms)
      for (size_t i = 0; i < cases.size(); ++i) {
        const std::string prefix = benchmark_name(algorithm, cases[i]->name, "");  // "crba/hyq/"
        for (const char* engine : {"gradyn", "pinocchio"}) {
          if (spec.rfind(prefix + engine + "/", 0) != 0) continue;
          const char* count = spec.c_str() + prefix.size() + std::strlen(engine) + 1;
          char* end = nullptr;
          const long calls = std::strtol(count, &end, 10);
          if (end == count || *end != '\0' || calls < 1) {
            std::fprintf(stderr, "--count-calls=%s: the number of calls must be a positive integer, got '%s'\n",
                         spec.c_str(), count);
            return 2;
          }
          double checksum = 0;
          if (std::strcmp(engine, "gradyn") == 0) checksum = run_gradyn_calls(*cases[i], algorithm, calls);
#ifdef GRADYN_BENCH_WITH_PINOCCHIO
          else checksum = run_pinocchio_calls(*pinocchio_cases[i], algorithm, calls);
#else
          else {
            std::fprintf(stderr, "--count-calls=%s: this binary was built without Pinocchio (GRADYN_BENCH_PINOCCHIO=OFF)\n", spec.c_str());
            return 2;
          }
#endif
          std::printf("%s: %ld calls, checksum %.17g\n", spec.c_str(), calls, checksum);
          return 0;
        }
      }
    std::fprintf(stderr, "--count-calls=%s: expected ALGORITHM/MODEL/ENGINE/CALLS, e.g. crba/hyq/pinocchio/2000 "
                         "(algorithms aba, rnea, crba; models iiwa, hyq, simple_humanoid, laikago; engines gradyn, pinocchio)\n",
                 spec.c_str());
    return 2;
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
