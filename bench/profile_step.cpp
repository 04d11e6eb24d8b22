// A driver for profilers (perf, valgrind --tool=callgrind) on the whole step or its adjoint: a saved
// model (the bytes of gradyn.Model.__getstate__()) stepped from a saved state, T steps per rollout;
// mode 'vjp' times rollout_vjp_from_states of a loss on the last state instead (after one rollout).
//
//   python -c "open('m.model','wb').write(model.__getstate__())"; np.savetxt('m.state', np.r_[q, v])
//   perf record build/bench/bench/gradyn_profile_step m.model m.state 1000 200 [forward|vjp] [dt]
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gradyn/model/serialize.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/step.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL_FILE STATE_FILE [STEPS=1000] [ROLLOUTS=100] [forward|vjp] [DT=0.001]\n", argv[0]);
    return 2;
  }
  std::ifstream model_file(argv[1], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(model_file)), std::istreambuf_iterator<char>());
  const gradyn::Model model = gradyn::deserialize_model(bytes);
  std::ifstream state_file(argv[2]);
  std::vector<double> state{std::istream_iterator<double>(state_file), std::istream_iterator<double>()};
  if (static_cast<int>(state.size()) != model.nq + model.nv) {
    std::fprintf(stderr, "%s: expected nq + nv = %d numbers, read %zu\n", argv[2], model.nq + model.nv, state.size());
    return 2;
  }
  const long steps = argc > 3 ? std::atol(argv[3]) : 1000, rollouts = argc > 4 ? std::atol(argv[4]) : 100;
  const double dt = argc > 6 ? std::atof(argv[6]) : 1e-3;
  const Eigen::Map<const gradyn::VectorX<double>> q0(state.data(), model.nq), v0(state.data() + model.nq, model.nv);
  gradyn::Data data(model);
  gradyn::MatrixXr<double> taus = gradyn::MatrixXr<double>::Zero(steps, model.nv), qs, vs;
  double checksum = 0;
  if (argc > 5 && std::string(argv[5]) == "vjp") {
    gradyn::rollout<double>(model, data, q0, v0, taus, dt, gradyn::Integrator::SemiImplicitEuler, qs, vs);
    gradyn::MatrixXr<double> qs_bar = gradyn::MatrixXr<double>::Zero(steps + 1, model.nq);
    gradyn::MatrixXr<double> vs_bar = gradyn::MatrixXr<double>::Zero(steps + 1, model.nv);
    gradyn::MatrixXr<double> taus_bar = gradyn::MatrixXr<double>::Zero(steps, model.nv), no_ctrls;
    qs_bar(steps, 2) = 1.0;  // d (base height) at the end
    gradyn::VectorX<double> q0_bar(model.nq), v0_bar(model.nv);
    gradyn::ModelTangent model_bar(model);
    for (long r = 0; r < rollouts; ++r) {
      q0_bar.setZero(), v0_bar.setZero(), taus_bar.setZero();
      gradyn::rollout_vjp_from_states<double>(model, data, qs, vs, taus, no_ctrls, dt,
                                              gradyn::Integrator::SemiImplicitEuler, qs_bar, vs_bar, q0_bar, v0_bar,
                                              taus_bar, no_ctrls, model_bar);
      checksum += v0_bar[2];
    }
    std::printf("%ld adjoints of %ld steps, checksum %.12e, status %u\n", rollouts, steps, checksum, data.status);
    return 0;
  }
  for (long r = 0; r < rollouts; ++r) {
    gradyn::rollout<double>(model, data, q0, v0, taus, dt, gradyn::Integrator::SemiImplicitEuler, qs, vs);
    checksum += qs(steps, 2);
  }
  std::printf("%ld rollouts of %ld steps, checksum %.12e, status %u\n", rollouts, steps, checksum, data.status);
  return 0;
}
