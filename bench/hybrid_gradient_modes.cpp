// The three ways gradyn differentiates a hybrid model's training loss, timed against its forward
// pass (paper 001, Fig. 5 shape): the adjoint (rollout + rollout_vjp_from_states), forward-mode AD
// (gradyn::ADScalar, kADChunk weights per rollout) and central finite differences.
//
// The loss is examples/hybrid/swimmer.py's: models/mujoco/swimmer.xml plus a body_wrench drag
// network on each of its three links (the link's velocity in its own frame in, its planar wrench
// out); 10 trajectories x 200 steps (dt 0.01) under fixed random controls; the squared distance of
// every state to a reference. The gradient is taken w.r.t. the networks' weights. One thread.
// Forward and adjoint: median of --repeats; AD and finite differences: one run each (their cost is
// many forward rollouts), left out above --max-ad / --max-fd weights.
//
//   cmake --preset bench && cmake --build build/bench --target gradyn_hybrid_gradient_modes
//   build/bench/bench/gradyn_hybrid_gradient_modes --out bench/results/hybrid_gradient_modes.md \
//       --commit "$(git describe --always --dirty)"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gradyn/gradyn.hpp"

namespace {

using gradyn::ADScalar;
using gradyn::MatrixXr;
using gradyn::Model;
using Clock = std::chrono::steady_clock;

constexpr int kWorlds = 10, kSteps = 200;
constexpr double kDt = 0.01;

Model hybrid_swimmer(int hidden) {
  std::vector<std::string> warnings;  // the fluid, which gradyn does not simulate
  Model m = gradyn::load_mjcf(std::string(GRADYN_BENCH_MODELS) + "/mujoco/swimmer.xml", {.warnings = &warnings});
  const char* links[] = {"torso", "mid", "back"};
  for (int k = 0; k < 3; ++k) {
    gradyn::NetworkSpec spec;
    spec.name = std::string("drag_") + links[k];
    spec.site = "body_wrench";
    spec.body = links[k];
    spec.inputs = {"vel.ang.z", "vel.lin.x", "vel.lin.y"};
    spec.outputs = {"torque.z", "force.x", "force.y"};
    spec.hidden = {hidden, hidden};
    spec.seed = static_cast<std::uint64_t>(k);
    spec.zero_last_layer = false;
    m = gradyn::with_network(m, spec);
  }
  return m;
}

struct Problem {
  std::vector<Eigen::VectorXd> q0, v0;
  std::vector<MatrixXr<double>> ctrls, q_ref, v_ref;
  MatrixXr<double> taus;
};

Problem make_problem(const Model& m) {
  Problem p;
  std::mt19937_64 rng(0);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  p.taus = MatrixXr<double>::Zero(kSteps, m.nv);
  gradyn::Data d(m);
  for (int b = 0; b < kWorlds; ++b) {
    Eigen::VectorXd q0(m.nq), v0(m.nv);
    for (int i = 0; i < m.nq; ++i) q0[i] = 0.2 * normal(rng);
    for (int i = 0; i < m.nv; ++i) v0[i] = 0.1 * normal(rng);
    MatrixXr<double> u(kSteps, m.nu());
    for (int t = 0; t < kSteps; ++t)
      for (int k = 0; k < m.nu(); ++k) u(t, k) = uniform(rng);
    MatrixXr<double> qs, vs;
    gradyn::rollout<double>(m, d, q0, v0, p.taus, u, kDt, gradyn::Integrator::SemiImplicitEuler, qs, vs);
    p.q0.push_back(q0), p.v0.push_back(v0), p.ctrls.push_back(u);
    p.q_ref.push_back(qs.array() + 0.01), p.v_ref.push_back(vs.array() - 0.01);
  }
  return p;
}

// The loss at a model of scalar S (double, or ADScalar for forward mode).
template <class S>
S loss(const gradyn::ModelTpl<S>& m, gradyn::DataTpl<S>& d, const Problem& p) {
  S total = S(0);
  MatrixXr<S> qs, vs;
  const MatrixXr<S> taus = p.taus.cast<S>();
  for (int b = 0; b < kWorlds; ++b) {
    gradyn::rollout<S>(m, d, p.q0[b].cast<S>(), p.v0[b].cast<S>(), taus, p.ctrls[b].cast<S>(), S(kDt),
                       gradyn::Integrator::SemiImplicitEuler, qs, vs);
    total += (qs - p.q_ref[b].cast<S>()).squaredNorm() + (vs - p.v_ref[b].cast<S>()).squaredNorm();
  }
  return total;
}

// The adjoint gradient w.r.t. every parameter.
Eigen::VectorXd adjoint_gradient(const Model& m, gradyn::Data& d, const Problem& p) {
  gradyn::ModelTangent tangent(m);
  MatrixXr<double> qs, vs, taus_bar(kSteps, m.nv), ctrls_bar(kSteps, m.nu());
  Eigen::VectorXd q0_bar(m.nq), v0_bar(m.nv);
  for (int b = 0; b < kWorlds; ++b) {
    gradyn::rollout<double>(m, d, p.q0[b], p.v0[b], p.taus, p.ctrls[b], kDt, gradyn::Integrator::SemiImplicitEuler,
                            qs, vs);
    const MatrixXr<double> qs_bar = 2.0 * (qs - p.q_ref[b]), vs_bar = 2.0 * (vs - p.v_ref[b]);
    q0_bar.setZero(), v0_bar.setZero(), taus_bar.setZero(), ctrls_bar.setZero();
    gradyn::rollout_vjp_from_states<double>(m, d, qs, vs, p.taus, p.ctrls[b], kDt,
                                            gradyn::Integrator::SemiImplicitEuler, qs_bar, vs_bar, q0_bar, v0_bar,
                                            taus_bar, ctrls_bar, tangent);
  }
  return gradyn::params_gradient(m, tangent);
}

// Forward mode: kADChunk weights seeded per pass.
Eigen::VectorXd ad_gradient(const Model& m, const Problem& p, int first, int count) {
  const Eigen::VectorXd p0 = gradyn::get_params(m);
  const gradyn::ModelTpl<ADScalar> m_ad = m.cast<ADScalar>();
  Eigen::VectorXd g(count);
  for (int c = 0; c < count; c += gradyn::kADChunk) {
    gradyn::VectorX<ADScalar> pa(p0.size());
    for (int i = 0; i < p0.size(); ++i) {
      const int slot = i - first - c;
      pa[i] = gradyn::ad_seed(p0[i], slot >= 0 && slot < gradyn::kADChunk && i - first < count ? slot : -1);
    }
    const gradyn::ModelTpl<ADScalar> seeded = gradyn::with_params<ADScalar>(m_ad, pa);
    gradyn::DataTpl<ADScalar> d(seeded);
    const ADScalar l = loss<ADScalar>(seeded, d, p);
    for (int k = 0; k < gradyn::kADChunk && c + k < count; ++k)
      g[c + k] = l.derivatives().size() ? l.derivatives()[k] : 0.0;
  }
  return g;
}

Eigen::VectorXd fd_gradient(const Model& m, const Problem& p, int first, int count) {
  const Eigen::VectorXd p0 = gradyn::get_params(m);
  Eigen::VectorXd g(count);
  const double h = 1e-6;
  for (int k = 0; k < count; ++k) {
    Eigen::VectorXd q = p0;
    q[first + k] += h;
    const Model plus = gradyn::with_params(m, q);
    gradyn::Data dp(plus);
    const double lp = loss<double>(plus, dp, p);
    q[first + k] -= 2 * h;
    const Model minus = gradyn::with_params(m, q);
    gradyn::Data dm(minus);
    g[k] = (lp - loss<double>(minus, dm, p)) / (2 * h);
  }
  return g;
}

template <class F>
double seconds(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

template <class F>
double median_seconds(F&& f, int repeats) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) t.push_back(seconds(f));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double max_relative(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(a.cwiseAbs().maxCoeff(), 1e-300);
}

}  // namespace

int main(int argc, char** argv) {
  std::string out, commit = "?";
  int repeats = 21, max_ad = 4000, max_fd = 1200;
  std::vector<int> hiddens = {8, 16, 32, 64, 128};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--out") out = v;
    else if (a == "--commit") commit = v;
    else if (a == "--repeats") repeats = std::stoi(v);
    else if (a == "--max-ad") max_ad = std::stoi(v);
    else if (a == "--max-fd") max_fd = std::stoi(v);
    else if (a == "--quick") hiddens = {8}, repeats = 3, max_fd = 200;
    else {
      std::cerr << "unknown argument " << a << " (expected --out, --commit, --repeats, --max-ad, --max-fd)\n";
      return 2;
    }
  }
  std::ostringstream table;
  table << "| hidden per network | weights (3 networks) | forward s | loss + gradient (adjoint) s | adjoint / forward "
           "| forward-mode AD s | AD / adjoint | finite differences s | FD / adjoint | AD, FD vs adjoint (max rel.) |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n";
  for (int hidden : hiddens) {
    const Model m = hybrid_swimmer(hidden);
    const Problem p = make_problem(m);
    gradyn::Data d(m);
    const int n = static_cast<int>(gradyn::get_params(m).size());
    int weights = 0;
    for (const auto& net : m.networks) weights += net.shape.param_count();
    const int first = n - weights;
    double l = 0;
    Eigen::VectorXd g_adj;
    const double t_fwd = median_seconds([&] { l = loss<double>(m, d, p); }, repeats);
    const double t_adj = median_seconds([&] { g_adj = adjoint_gradient(m, d, p); }, repeats);
    const Eigen::VectorXd g = g_adj.segment(first, weights);
    std::ostringstream row;
    row << "| " << hidden << "x" << hidden << " | " << weights << " | " << t_fwd << " | " << t_adj << " | "
        << t_adj / t_fwd << " | ";
    std::string agree;
    if (weights <= max_ad) {
      Eigen::VectorXd g_ad;
      const double t = seconds([&] { g_ad = ad_gradient(m, p, first, weights); });
      row << t << " | " << static_cast<int>(t / t_adj + 0.5) << "x | ";
      char buf[64];
      std::snprintf(buf, sizeof buf, "AD %.1e", max_relative(g, g_ad));
      agree += buf;
    } else {
      row << "not run | | ";
    }
    if (weights <= max_fd) {
      Eigen::VectorXd g_fd;
      const double t = seconds([&] { g_fd = fd_gradient(m, p, first, weights); });
      row << t << " | " << static_cast<int>(t / t_adj + 0.5) << "x | ";
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s FD %.1e", agree.empty() ? "" : ",", max_relative(g, g_fd));
      agree += buf;
    } else {
      row << "not run | | ";
    }
    row << agree << " |\n";
    table << row.str();
    std::cout << row.str() << std::flush;
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << "# The three gradients of a hybrid model's training loss (paper 001, Fig. 5 shape)\n\n"
      << "Generated by `build/bench/bench/gradyn_hybrid_gradient_modes --out " << out << " --commit <commit>` "
      << "(bench/hybrid_gradient_modes.cpp; one thread; forward and adjoint medians of " << repeats
      << " runs, AD and finite differences one run each). gradyn at " << commit << ".\n\n"
      << "examples/hybrid/swimmer.py's loss: models/mujoco/swimmer.xml plus a body_wrench drag network (two tanh "
         "hidden layers of the width below) on each of its three links; " << kWorlds << " trajectories x " << kSteps
      << " steps, dt " << kDt << "; gradient w.r.t. the networks' weights. Forward-mode AD seeds "
      << gradyn::kADChunk << " weights per rollout.\n\n"
      << table.str() << "\nNot measured here: a PyTorch tape of the same loss (bench/tape_baseline has no networks).\n";
  }
  return 0;
}
