// The only translation unit that includes Pinocchio (from the `pin` pip wheel). It must be
// compiled without -march=native: Pinocchio's Model crosses into the wheel's prebuilt
// libpinocchio_parsers.so, which is built for baseline x86-64, so the Eigen object layouts must
// match (see bench/README.md).
#include "pinocchio_reference.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/parsers/urdf.hpp>

namespace gradyn_bench {

namespace {

using ConstRef = Eigen::Ref<const Eigen::VectorXd>;

[[noreturn]] void fail(const std::string& model, const std::string& message) {
  std::fprintf(stderr, "\nPINOCCHIO COMPARISON ABORTED (model %s): %s\n", model.c_str(), message.c_str());
  std::fflush(stderr);
  std::abort();
}

// Where one gradyn joint's coordinates live in Pinocchio's q and v.
struct JointMap {
  std::string name;
  gradyn::JointType type;
  int gradyn_iq, gradyn_iv, nv;
  int pinocchio_iq, pinocchio_iv;
};

std::string joint_type_string(gradyn::JointType t) { return std::string(gradyn::joint_type_name(t)); }

}  // namespace

class PinocchioCase {
 public:
  std::string name;
  pinocchio::Model model;
  std::unique_ptr<pinocchio::Data> data;
  std::vector<Eigen::VectorXd> q, v, tau, a;  // Pinocchio layout
};

namespace {

std::vector<JointMap> map_joints(const BenchCase& c, const pinocchio::Model& pm) {
  const gradyn::Model& gm = c.model;
  if (pm.njoints - 1 != gm.nbodies())
    fail(c.name, "Pinocchio has " + std::to_string(pm.njoints - 1) + " moving joints, gradyn " +
                     std::to_string(gm.nbodies()));
  if (pm.nv != gm.nv) fail(c.name, "nv differs: Pinocchio " + std::to_string(pm.nv) + ", gradyn " + std::to_string(gm.nv));
  std::vector<JointMap> maps;
  std::vector<bool> used(pm.njoints, false);
  for (int i = 0; i < gm.nbodies(); ++i) {
    const gradyn::JointType type = gm.joint_type[i];
    pinocchio::JointIndex jid = 0;
    if (type == gradyn::JointType::Free) {
      // gradyn names the URDF floating base "root", Pinocchio "root_joint": match it by kind.
      for (pinocchio::JointIndex j = 1; j < static_cast<pinocchio::JointIndex>(pm.njoints); ++j)
        if (pm.joints[j].shortname() == "JointModelFreeFlyer") jid = j;
      if (jid == 0) fail(c.name, "gradyn has a free joint '" + gm.joint_names[i] + "' but Pinocchio has no free flyer");
    } else {
      if (!pm.existJointName(gm.joint_names[i]))
        fail(c.name, "gradyn joint '" + gm.joint_names[i] + "' does not exist in Pinocchio's model");
      jid = pm.getJointId(gm.joint_names[i]);
    }
    if (used[jid]) fail(c.name, "two gradyn joints map to Pinocchio joint '" + pm.names[jid] + "'");
    used[jid] = true;
    const int expected_nq = type == gradyn::JointType::Continuous ? 2 : gm.joint_nq(i);
    if (pm.nvs[jid] != gm.joint_nv(i) || pm.nqs[jid] != expected_nq)
      fail(c.name, "joint '" + gm.joint_names[i] + "' (" + joint_type_string(type) + "): gradyn nq/nv " +
                       std::to_string(gm.joint_nq(i)) + "/" + std::to_string(gm.joint_nv(i)) + ", Pinocchio (" +
                       pm.joints[jid].shortname() + ") " + std::to_string(pm.nqs[jid]) + "/" +
                       std::to_string(pm.nvs[jid]));
    maps.push_back({gm.joint_names[i], type, gm.idx_q[i], gm.idx_v[i], gm.joint_nv(i), pm.idx_qs[jid], pm.idx_vs[jid]});
  }
  return maps;
}

Eigen::VectorXd map_q(const std::vector<JointMap>& maps, const gradyn::Model& gm, int pinocchio_nq,
                      const Eigen::VectorXd& q) {
  Eigen::VectorXd out = Eigen::VectorXd::Zero(pinocchio_nq);
  for (const JointMap& m : maps) {
    if (m.type == gradyn::JointType::Continuous) {  // Pinocchio stores (cos, sin) of the angle
      out[m.pinocchio_iq] = std::cos(q[m.gradyn_iq]);
      out[m.pinocchio_iq + 1] = std::sin(q[m.gradyn_iq]);
    } else {
      const int nq = gradyn::joint_nq(m.type);
      out.segment(m.pinocchio_iq, nq) = q.segment(m.gradyn_iq, nq);  // same order, quaternions x,y,z,w
    }
  }
  (void)gm;
  return out;
}

Eigen::VectorXd map_v(const std::vector<JointMap>& maps, const Eigen::VectorXd& v) {
  Eigen::VectorXd out(v.size());
  for (const JointMap& m : maps) out.segment(m.pinocchio_iv, m.nv) = v.segment(m.gradyn_iv, m.nv);
  return out;
}

// Pinocchio's v index of each gradyn v index.
std::vector<int> v_permutation(const std::vector<JointMap>& maps, int nv) {
  std::vector<int> perm(nv, -1);
  for (const JointMap& m : maps)
    for (int k = 0; k < m.nv; ++k) perm[m.gradyn_iv + k] = m.pinocchio_iv + k;
  return perm;
}

constexpr double kTolerance = 1e-9;

// max |gradyn - pinocchio| / max |pinocchio|, comparing entry i of gradyn with perm[i] of Pinocchio.
double relative_error(const Eigen::MatrixXd& gradyn_result, const Eigen::MatrixXd& pinocchio_result,
                      const std::vector<int>& perm) {
  double err = 0, scale = 0;
  for (Eigen::Index i = 0; i < gradyn_result.rows(); ++i)
    for (Eigen::Index j = 0; j < gradyn_result.cols(); ++j) {
      const double p = pinocchio_result(perm[i], gradyn_result.cols() == 1 ? 0 : perm[j]);
      err = std::max(err, std::abs(gradyn_result(i, j) - p));
      scale = std::max(scale, std::abs(p));
    }
  return err / std::max(scale, 1e-300);
}

void check_equal(const PinocchioCase& pc, const BenchCase& c, const std::vector<int>& perm) {
  pinocchio::Data& data = *pc.data;
  double worst[3] = {0, 0, 0};
  for (int k = 0; k < kStates; ++k) {
    const double errors[3] = {
        relative_error(c.aba_result[k],
                       pinocchio::aba(pc.model, data, ConstRef(pc.q[k]), ConstRef(pc.v[k]), ConstRef(pc.tau[k])), perm),
        relative_error(c.rnea_result[k],
                       pinocchio::rnea(pc.model, data, ConstRef(pc.q[k]), ConstRef(pc.v[k]), ConstRef(pc.a[k])), perm),
        [&] {
          pinocchio::crba(pc.model, data, ConstRef(pc.q[k]));
          Eigen::MatrixXd M = data.M;  // Pinocchio fills the upper triangle only
          M.triangularView<Eigen::StrictlyLower>() = M.transpose().triangularView<Eigen::StrictlyLower>();
          return relative_error(c.crba_result[k], M, perm);
        }()};
    for (int alg = 0; alg < 3; ++alg) {
      worst[alg] = std::max(worst[alg], errors[alg]);
      if (!(errors[alg] <= kTolerance))
        fail(c.name, std::string(algorithm_name(kAlgorithms[alg])) + " differs from gradyn's on random state " +
                         std::to_string(k) + ": relative error " + std::to_string(errors[alg]) + " > " +
                         std::to_string(kTolerance) + ". The two libraries would not compute the same thing.");
    }
  }
  std::fprintf(stderr, "[pinocchio check] %-16s nq %d/%d nv %d: max relative error over %d states: aba %.1e, rnea %.1e, crba %.1e\n",
               c.name.c_str(), c.model.nq, pc.model.nq, c.model.nv, kStates, worst[0], worst[1], worst[2]);
}

}  // namespace

std::shared_ptr<PinocchioCase> make_pinocchio_case(const BenchCase& c) {
  auto pc = std::make_shared<PinocchioCase>();
  pc->name = c.name;
  try {
    if (c.floating_base)
      pinocchio::urdf::buildModel(c.urdf, pinocchio::JointModelFreeFlyer(), pc->model);
    else
      pinocchio::urdf::buildModel(c.urdf, pc->model);
  } catch (const std::exception& e) {
    fail(c.name, "Pinocchio could not load " + c.urdf + ": " + e.what());
  }
  const std::vector<JointMap> maps = map_joints(c, pc->model);
  const std::vector<int> perm = v_permutation(maps, c.model.nv);
  // Same physical parameters that URDF cannot carry: gravity and armature (zero from URDF).
  pc->model.gravity.linear() = c.model.gravity;
  pc->model.armature = map_v(maps, c.model.armature);
  pc->data = std::make_unique<pinocchio::Data>(pc->model);
  for (int k = 0; k < kStates; ++k) {
    pc->q.push_back(map_q(maps, c.model, pc->model.nq, c.q[k]));
    pc->v.push_back(map_v(maps, c.v[k]));
    pc->tau.push_back(map_v(maps, c.tau[k]));
    pc->a.push_back(map_v(maps, c.a[k]));
  }
  check_equal(*pc, c, perm);
  return pc;
}

double run_pinocchio_calls(PinocchioCase& pc, Algorithm algorithm, long calls) {
  pinocchio::Data& data = *pc.data;
  double checksum = 0;
  for (long n = 0; n < calls; ++n) {
    const int k = static_cast<int>(n & (kStates - 1));
    switch (algorithm) {
      case Algorithm::Aba:
        checksum += pinocchio::aba(pc.model, data, ConstRef(pc.q[k]), ConstRef(pc.v[k]), ConstRef(pc.tau[k]))[0];
        break;
      case Algorithm::Rnea:
        checksum += pinocchio::rnea(pc.model, data, ConstRef(pc.q[k]), ConstRef(pc.v[k]), ConstRef(pc.a[k]))[0];
        break;
      case Algorithm::Crba: checksum += pinocchio::crba(pc.model, data, ConstRef(pc.q[k]))(0, 0); break;
    }
  }
  return checksum;
}

void register_pinocchio_benchmark(const std::shared_ptr<PinocchioCase>& pc, Algorithm algorithm) {
  const std::string name = benchmark_name(algorithm, pc->name, "pinocchio");
  switch (algorithm) {
    case Algorithm::Aba:
      benchmark::RegisterBenchmark(name.c_str(), [pc](benchmark::State& state) {
        pinocchio::Data& data = *pc->data;
        int k = 0;
        for (auto _ : state) {
          benchmark::DoNotOptimize(
              pinocchio::aba(pc->model, data, ConstRef(pc->q[k]), ConstRef(pc->v[k]), ConstRef(pc->tau[k])));
          benchmark::ClobberMemory();
          k = (k + 1) & (kStates - 1);
        }
      });
      break;
    case Algorithm::Rnea:
      benchmark::RegisterBenchmark(name.c_str(), [pc](benchmark::State& state) {
        pinocchio::Data& data = *pc->data;
        int k = 0;
        for (auto _ : state) {
          benchmark::DoNotOptimize(
              pinocchio::rnea(pc->model, data, ConstRef(pc->q[k]), ConstRef(pc->v[k]), ConstRef(pc->a[k])));
          benchmark::ClobberMemory();
          k = (k + 1) & (kStates - 1);
        }
      });
      break;
    case Algorithm::Crba:
      benchmark::RegisterBenchmark(name.c_str(), [pc](benchmark::State& state) {
        pinocchio::Data& data = *pc->data;
        int k = 0;
        for (auto _ : state) {
          benchmark::DoNotOptimize(pinocchio::crba(pc->model, data, ConstRef(pc->q[k])));
          benchmark::ClobberMemory();
          k = (k + 1) & (kStates - 1);
        }
      });
      break;
  }
}

}  // namespace gradyn_bench
