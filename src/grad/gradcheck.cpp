#include "gradyn/grad/gradcheck.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Up to `max_count` indices of [0, n), evenly spaced, first and last included (all if < 0).
std::vector<int> spread_indices(int n, int max_count) {
  std::vector<int> out;
  if (max_count < 0 || max_count >= n) {
    for (int k = 0; k < n; ++k) out.push_back(k);
    return out;
  }
  if (max_count == 0) return out;
  if (max_count == 1) return {0};
  for (int j = 0; j < max_count; ++j) {
    const int k = static_cast<int>(std::llround(static_cast<double>(j) * (n - 1) / (max_count - 1)));
    if (out.empty() || out.back() != k) out.push_back(k);
  }
  return out;
}

// The inputs, all blocks concatenated, and how to read them back.
// Blocks: 0 q0, 1 v0, 2 taus, 3 ctrls (nu = 0 when the rollout has none), 4 params.
constexpr int kParamsBlock = 4;
struct Layout {
  int nq, nv, T, nu, np;
  int size(int block) const {
    const int sizes[5] = {nq, nv, T * nv, T * nu, np};
    return sizes[block];
  }
  int offset(int block) const {
    int o = 0;
    for (int b = 0; b < block; ++b) o += size(b);
    return o;
  }
  int total() const { return offset(5); }
};

// The loss of the rollout from the concatenated input x (any scalar).
template <class S>
S rollout_loss(const ModelTpl<S>& base_model, const Layout& L, const VectorX<S>& x, bool with_params,
               const MatrixXr<double>& Wq, const MatrixXr<double>& Wv, double dt, Integrator integrator) {
  const ModelTpl<S> model =
      with_params ? gradyn::with_params<S>(base_model, x.segment(L.offset(kParamsBlock), L.np)) : base_model;
  DataTpl<S> data(model);  // after with_params: joint_S depends on the axes
  MatrixXr<S> taus(L.T, L.nv), ctrls(L.nu > 0 ? L.T : 0, L.nu), qs, vs;
  for (int t = 0; t < L.T; ++t) taus.row(t) = x.segment(L.offset(2) + t * L.nv, L.nv).transpose();
  for (int t = 0; t < ctrls.rows(); ++t) ctrls.row(t) = x.segment(L.offset(3) + t * L.nu, L.nu).transpose();
  rollout<S>(model, data, x.segment(L.offset(0), L.nq), x.segment(L.offset(1), L.nv), taus, ctrls, S(dt), integrator,
             qs, vs);
  S loss(0);
  for (int t = 0; t <= L.T; ++t) {
    for (int k = 0; k < L.nq; ++k)
      if (Wq(t, k) != 0) loss += Wq(t, k) * qs(t, k);
    for (int k = 0; k < L.nv; ++k)
      if (Wv(t, k) != 0) loss += Wv(t, k) * vs(t, k);
  }
  return loss;
}

}  // namespace

double GradcheckResult::worst_ad_error() const {
  double e = 0;
  for (const auto& b : blocks)
    if (!std::isnan(b.ad_error)) e = std::max(e, b.ad_error);
  return e;
}

double GradcheckResult::worst_fd_error() const {
  double e = 0;
  for (const auto& b : blocks)
    if (!std::isnan(b.fd_error)) e = std::max(e, b.fd_error);
  return e;
}

bool GradcheckResult::passed(double ad_tolerance, double fd_tolerance) const {
  for (const auto& b : blocks) {
    if (!std::isnan(b.ad_error) && !(b.ad_error <= ad_tolerance)) return false;
    if (!std::isnan(b.fd_error) && !(b.fd_error <= fd_tolerance)) return false;
  }
  return true;
}

std::string GradcheckResult::summary() const {
  std::ostringstream s;
  s << "gradcheck: loss " << std::setprecision(10) << loss << "\n";
  s << std::left << std::setw(8) << "block" << std::right << std::setw(7) << "size" << std::setw(12) << "scale"
    << std::setw(12) << "adj vs AD" << std::setw(8) << "(n)" << std::setw(12) << "adj vs FD" << std::setw(8) << "(n)"
    << "\n";
  s << std::setprecision(3);
  for (const auto& b : blocks) {
    s << std::left << std::setw(8) << b.name << std::right << std::setw(7) << b.size << std::setw(12) << b.scale
      << std::setw(12) << b.ad_error << std::setw(8) << b.ad_coords << std::setw(12) << b.fd_error << std::setw(8)
      << b.fd_coords << "\n";
  }
  return s.str();
}

GradcheckResult gradcheck(const Model& model, const Eigen::VectorXd& q0, const Eigen::VectorXd& v0,
                          const Eigen::Ref<const MatrixXr<double>>& taus, const Eigen::Ref<const MatrixXr<double>>& ctrls,
                          double dt, const GradcheckOptions& options) {
  check_size("q0", q0.size(), model.nq);
  check_size("v0", v0.size(), model.nv);
  if (taus.cols() != model.nv)
    throw ArgumentError("taus: expected shape (T, " + std::to_string(model.nv) + "), got (" +
                        std::to_string(taus.rows()) + ", " + std::to_string(taus.cols()) + ")");
  check_controls_shape(model.nu(), ctrls.rows(), ctrls.cols(), taus.rows());
  if (!options.final_loss && !options.running_loss)
    throw ArgumentError("gradcheck: choose a final and/or a running loss");
  const bool params = options.check_params;
  const Eigen::VectorXd p0 = params ? get_params<double>(model) : Eigen::VectorXd();
  const bool has_ctrls = ctrls.size() != 0;
  const Layout L{model.nq, model.nv, static_cast<int>(taus.rows()), has_ctrls ? model.nu() : 0,
                 static_cast<int>(p0.size())};

  // random loss weights
  std::mt19937 rng(options.seed);
  std::uniform_real_distribution<double> u(-1, 1);
  MatrixXr<double> Wq = MatrixXr<double>::Zero(L.T + 1, L.nq), Wv = MatrixXr<double>::Zero(L.T + 1, L.nv);
  for (int t = 0; t <= L.T; ++t) {
    if (!options.running_loss && t < L.T) continue;
    for (int k = 0; k < L.nq; ++k) Wq(t, k) = u(rng);
    for (int k = 0; k < L.nv; ++k) Wv(t, k) = u(rng);
  }

  Eigen::VectorXd x0(L.total());
  x0.segment(L.offset(0), L.nq) = q0;
  x0.segment(L.offset(1), L.nv) = v0;
  for (int t = 0; t < L.T; ++t) x0.segment(L.offset(2) + t * L.nv, L.nv) = taus.row(t).transpose();
  if (has_ctrls)
    for (int t = 0; t < L.T; ++t) x0.segment(L.offset(3) + t * L.nu, L.nu) = ctrls.row(t).transpose();
  if (params) x0.segment(L.offset(kParamsBlock), L.np) = p0;

  // the adjoint
  GradcheckResult result;
  {
    Data data(model);
    ModelTangent tangent(model);
    Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(L.nq), v0_bar = Eigen::VectorXd::Zero(L.nv);
    MatrixXr<double> taus_bar = MatrixXr<double>::Zero(L.T, L.nv);
    MatrixXr<double> ctrls_bar = MatrixXr<double>::Zero(has_ctrls ? L.T : 0, L.nu);
    CheckpointOptions checkpoints;
    checkpoints.max_snapshots = options.max_snapshots;
    rollout_vjp<double>(model, data, q0, v0, taus, ctrls, dt, options.integrator, Wq, Wv, q0_bar, v0_bar, taus_bar,
                        ctrls_bar, tangent, checkpoints);
    Eigen::VectorXd& g = result.adjoint_gradient;
    g.resize(L.total());
    g.segment(L.offset(0), L.nq) = q0_bar;
    g.segment(L.offset(1), L.nv) = v0_bar;
    for (int t = 0; t < L.T; ++t) g.segment(L.offset(2) + t * L.nv, L.nv) = taus_bar.row(t).transpose();
    if (has_ctrls)
      for (int t = 0; t < L.T; ++t) g.segment(L.offset(3) + t * L.nu, L.nu) = ctrls_bar.row(t).transpose();
    if (params) g.segment(L.offset(kParamsBlock), L.np) = params_gradient<double>(model, tangent);
    result.loss = rollout_loss<double>(model, L, x0, false, Wq, Wv, dt, options.integrator);
  }
  const Eigen::VectorXd& g = result.adjoint_gradient;

  const char* names[5] = {"q0", "v0", "taus", "ctrls", "params"};
  std::vector<int> blocks = {0, 1, 2};
  if (has_ctrls) blocks.push_back(3);
  if (params) blocks.push_back(kParamsBlock);
  std::vector<std::vector<int>> ad_sets(5), fd_sets(5);
  for (int b : blocks) {
    // q0 and v0: always every coordinate; taus, ctrls and params: a spread subset when asked
    const bool full = b < 2;
    if (options.check_ad) ad_sets[b] = spread_indices(L.size(b), full ? -1 : options.ad_max_coords);
    if (options.check_fd) fd_sets[b] = spread_indices(L.size(b), full ? -1 : options.fd_max_coords);
  }
  if (params && options.check_ad) {
    // The contact settings and the couplings', connections' and tendons' numbers are doubles in the
    // model: AD cannot seed them, so only finite differences check their entries.
    const std::vector<int> doubles = double_valued_params(model);
    std::erase_if(ad_sets[kParamsBlock],
                  [&](int k) { return std::binary_search(doubles.begin(), doubles.end(), k); });
  }

  // forward-mode AD, kADChunk coordinates per rollout
  Eigen::VectorXd g_ad = Eigen::VectorXd::Constant(L.total(), kNaN);
  if (options.check_ad) {
#if !GRADYN_AD_REFERENCE
    throw ArgumentError(
        "check_ad: this gradyn was built without the forward-mode AD reference (the lean build of "
        "`scripts/setup.sh demo`, CMake option GRADYN_AD_REFERENCE=OFF); pass check_ad=False to compare "
        "with finite differences only, or rebuild with `bash scripts/setup.sh` (the test profile)");
#else
    const ModelTpl<ADScalar> ad_model = model.cast<ADScalar>();
    std::vector<int> coords;
    for (int b : blocks)
      for (int k : ad_sets[b]) coords.push_back(L.offset(b) + k);
    for (size_t first = 0; first < coords.size(); first += kADChunk) {
      VectorX<ADScalar> x(L.total());
      for (int k = 0; k < L.total(); ++k) x[k] = ad_seed(x0[k], -1);
      bool seeds_params = false;
      const size_t last = std::min(coords.size(), first + kADChunk);
      for (size_t c = first; c < last; ++c) {
        x[coords[c]] = ad_seed(x0[coords[c]], static_cast<int>(c - first));
        seeds_params = seeds_params || (params && coords[c] >= L.offset(kParamsBlock));
      }
      // Without parameter seeds the plain cast model is used (with_params would be exact too).
      const ADScalar loss = rollout_loss<ADScalar>(ad_model, L, x, seeds_params, Wq, Wv, dt, options.integrator);
      for (size_t c = first; c < last; ++c) g_ad[coords[c]] = loss.derivatives()[static_cast<int>(c - first)];
    }
#endif
  }

  // central differences
  Eigen::VectorXd g_fd = Eigen::VectorXd::Constant(L.total(), kNaN);
  if (options.check_fd) {
    const double h = options.fd_step;
    Eigen::VectorXd x = x0;
    for (int b : blocks)
      for (int k : fd_sets[b]) {
        const int i = L.offset(b) + k;
        x[i] = x0[i] + h;
        const double lp = rollout_loss<double>(model, L, x, b == kParamsBlock, Wq, Wv, dt, options.integrator);
        x[i] = x0[i] - h;
        try {
          const double lm = rollout_loss<double>(model, L, x, b == kParamsBlock, Wq, Wv, dt, options.integrator);
          g_fd[i] = (lp - lm) / (2 * h);
        } catch (const ModelError&) {
          // a parameter on the edge of its valid range (e.g. a contact setting at 0): one-sided
          x[i] = x0[i];
          g_fd[i] = (lp - rollout_loss<double>(model, L, x, b == kParamsBlock, Wq, Wv, dt, options.integrator)) / h;
        }
        x[i] = x0[i];
      }
  }

  for (int b : blocks) {
    GradcheckBlock blk;
    blk.name = names[b];
    blk.size = L.size(b);
    const auto gb = g.segment(L.offset(b), L.size(b));
    double scale = gb.size() ? gb.cwiseAbs().maxCoeff() : 0.0;
    auto compare = [&](const Eigen::VectorXd& ref, const std::vector<int>& set, double& err, int& worst, int& count,
                       bool enabled) {
      count = static_cast<int>(set.size());
      if (!enabled) {
        err = kNaN;
        return;
      }
      double s = scale;
      for (int k : set) s = std::max(s, std::abs(ref[L.offset(b) + k]));
      err = 0;
      for (int k : set) {
        const double diff = std::abs(gb[k] - ref[L.offset(b) + k]);
        const double e = s > 0 ? diff / s : diff;
        if (std::isnan(err)) break;  // a NaN stays the worst error
        if (std::isnan(e) || e > err) {
          err = e;
          worst = k;
        }
      }
    };
    compare(g_ad, ad_sets[b], blk.ad_error, blk.worst_ad_index, blk.ad_coords, options.check_ad);
    compare(g_fd, fd_sets[b], blk.fd_error, blk.worst_fd_index, blk.fd_coords, options.check_fd);
    blk.scale = scale;
    result.blocks.push_back(blk);
  }
  return result;
}

}  // namespace gradyn
