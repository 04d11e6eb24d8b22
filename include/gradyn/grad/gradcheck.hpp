// gradcheck: the three ways gradyn computes a derivative, compared on one rollout
// (DESIGN principle 3, docs/references.md). The adjoint (rollout_vjp, the fast path) is checked against forward-mode
// AD (rollout<ADScalar>, exact to rounding) and against central finite differences of the
// double-precision rollout.
//
// The function differentiated is a random linear loss of the rollout from (q0, v0) under taus:
//   L = sum_t  Wq[t] . qs[t] + Wv[t] . vs[t]
// with random weights on the final state and/or every state (GradcheckOptions), so that the
// check covers every direction of the trajectory's Jacobian without a hand-picked loss. Its
// gradient is taken with respect to five blocks: q0 (ambient: every number of q, quaternion
// components included, perturbed one at a time without renormalisation), v0, taus, the actuators'
// controls ctrls (when given), and the flat parameter vector (params.hpp: get_params / with_params / params_gradient). All blocks are
// compared as raw ambient numbers: the dynamics read quaternions normalised and with_params
// normalises joint axes, so their adjoints are exact in every direction (with no component
// along the quaternion or axis itself).
#pragma once

#include <string>
#include <vector>

#include "gradyn/sim/step.hpp"

namespace gradyn {

struct GradcheckOptions {
  Integrator integrator = Integrator::SemiImplicitEuler;
  bool final_loss = true;     // random weights on the last state
  bool running_loss = false;  // random weights on every state (initial one included)
  unsigned seed = 0;          // of the loss weights
  bool check_ad = true;       // forward-mode AD reference
  bool check_fd = true;       // central finite-difference reference
  bool check_params = true;   // the model-parameter block ("contact.*" settings: FD only, they are doubles)
  double fd_step = 1e-6;
  // References on a subset of the taus and params blocks' coordinates, evenly spaced (first and
  // last included), to keep long rollouts affordable: at most this many per block (-1: all).
  // q0 and v0 are always checked in full. Each AD pass covers kADChunk coordinates and costs
  // about one AD rollout; each FD coordinate costs two rollouts.
  int ad_max_coords = -1;
  int fd_max_coords = -1;
  int max_snapshots = 0;  // passed to rollout_vjp (CheckpointOptions)
};

/// The comparison for one input block. Errors are relative to the block's scale, the largest
/// magnitude of the adjoint gradient or the reference on the block (so entries far below the
/// block's scale are compared absolutely); NaN when that reference was not computed.
struct GradcheckBlock {
  std::string name;        // "q0", "v0", "taus", "ctrls", "params"
  int size = 0;            // entries in the block
  double scale = 0;        // largest |gradient entry|
  double ad_error = 0;     // max |adjoint - AD| / scale
  double fd_error = 0;     // max |adjoint - FD| / scale
  int ad_coords = 0;       // entries compared with AD
  int fd_coords = 0;       // entries compared with FD
  int worst_ad_index = -1; // entry with the largest AD error
  int worst_fd_index = -1;
};

struct GradcheckResult {
  double loss = 0;
  std::vector<GradcheckBlock> blocks;
  Eigen::VectorXd adjoint_gradient;  // all blocks concatenated (q0, v0, taus and ctrls row by row, params)
  double worst_ad_error() const;
  double worst_fd_error() const;
  /// Every computed error within its tolerance.
  bool passed(double ad_tolerance = 1e-9, double fd_tolerance = 1e-6) const;
  /// One line per block: name, size, scale, errors, coordinates compared.
  std::string summary() const;
};

/// Compares the adjoint gradient of the random loss of rollout(model, q0, v0, taus, ctrls, dt) with
/// the references (taus: T x nv, T = 1 checks a single step; ctrls: T x nu, or empty for none,
/// which leaves out the "ctrls" block). Throws ArgumentError on bad shapes.
GradcheckResult gradcheck(const Model& model, const Eigen::VectorXd& q0, const Eigen::VectorXd& v0,
                          const Eigen::Ref<const MatrixXr<double>>& taus, const Eigen::Ref<const MatrixXr<double>>& ctrls,
                          double dt, const GradcheckOptions& options = {});
inline GradcheckResult gradcheck(const Model& model, const Eigen::VectorXd& q0, const Eigen::VectorXd& v0,
                                 const Eigen::Ref<const MatrixXr<double>>& taus, double dt,
                                 const GradcheckOptions& options = {}) {
  return gradcheck(model, q0, v0, taus, MatrixXr<double>(), dt, options);
}

}  // namespace gradyn
