#include "bench_cases.hpp"

#include <random>

#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/rnea.hpp"
#include "gradyn/io/load.hpp"

namespace gradyn_bench {

const char* algorithm_name(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Aba: return "aba";
    case Algorithm::Rnea: return "rnea";
    case Algorithm::Crba: return "crba";
  }
  return "?";
}

double run_gradyn_calls(const BenchCase& c, Algorithm algorithm, long calls) {
  gradyn::Data data(c.model);
  double checksum = 0;
  for (long n = 0; n < calls; ++n) {
    const int k = static_cast<int>(n & (kStates - 1));
    switch (algorithm) {
      case Algorithm::Aba: checksum += gradyn::aba<double>(c.model, data, c.q[k], c.v[k], c.tau[k])[0]; break;
      case Algorithm::Rnea: checksum += gradyn::rnea<double>(c.model, data, c.q[k], c.v[k], c.a[k])[0]; break;
      case Algorithm::Crba: checksum += gradyn::crba<double>(c.model, data, c.q[k])(0, 0); break;
    }
  }
  return checksum;
}

std::string benchmark_name(Algorithm algorithm, const std::string& model, const std::string& engine) {
  return std::string(algorithm_name(algorithm)) + "/" + model + "/" + engine;
}

BenchCase make_case(const std::string& name, const std::string& urdf, bool floating_base, unsigned seed) {
  BenchCase c;
  c.name = name;
  c.urdf = urdf;
  c.floating_base = floating_base;
  gradyn::LoadOptions options;
  options.floating_base = floating_base;
  std::vector<std::string> warnings;  // missing meshes: irrelevant to dynamics
  options.warnings = &warnings;
  c.model = gradyn::load_urdf(urdf, options);

  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::normal_distribution<double> normal;
  const gradyn::Model& m = c.model;
  for (int k = 0; k < kStates; ++k) {
    Eigen::VectorXd q(m.nq);
    for (int i = 0; i < m.nbodies(); ++i) {
      const int iq = m.idx_q[i];
      switch (m.joint_type[i]) {
        case gradyn::JointType::Free:
          for (int j = 0; j < 3; ++j) q[iq + j] = unit(rng);
          [[fallthrough]];
        case gradyn::JointType::Spherical: {
          const int iquat = iq + (m.joint_type[i] == gradyn::JointType::Free ? 3 : 0);
          Eigen::Vector4d quat(normal(rng), normal(rng), normal(rng), normal(rng));  // uniform on SO(3)
          q.segment<4>(iquat) = quat.normalized();
          break;
        }
        case gradyn::JointType::Prismatic: q[iq] = 0.2 * unit(rng); break;
        default:
          for (int j = 0; j < m.joint_nq(i); ++j) q[iq + j] = 1.5 * unit(rng);
      }
    }
    c.q.push_back(q);
    c.v.push_back(2.0 * Eigen::VectorXd::NullaryExpr(m.nv, [&] { return unit(rng); }));
    c.tau.push_back(20.0 * Eigen::VectorXd::NullaryExpr(m.nv, [&] { return unit(rng); }));
    c.a.push_back(5.0 * Eigen::VectorXd::NullaryExpr(m.nv, [&] { return unit(rng); }));
  }
  gradyn::Data data(m);
  for (int k = 0; k < kStates; ++k) {
    c.aba_result.push_back(gradyn::aba<double>(m, data, c.q[k], c.v[k], c.tau[k]));
    c.rnea_result.push_back(gradyn::rnea<double>(m, data, c.q[k], c.v[k], c.a[k]));
    c.crba_result.push_back(gradyn::crba<double>(m, data, c.q[k]));
  }
  return c;
}

}  // namespace gradyn_bench
