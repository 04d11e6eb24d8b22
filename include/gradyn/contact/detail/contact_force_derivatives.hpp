// Pieces shared by the forward-mode derivatives of contact forces and impulses in generalised
// coordinates (contact/penalty_jacobian.cpp, contact/impulse_jacobian.cpp).
//
// A force f on geom b's body B at the world point p (and -f on geom a's body A) is the world wrench
// W = [p x f; f] about the origin; it reaches the generalised forces as S_l^T W for every joint l on
// B's path to the root (minus the same on A's). A configuration column j (the subtree of joint j moved
// by its world twist xi) changes W by dW (the contact's point, frame and force move) and carries every
// S_l of the subtree, which adds -S_l^T (xi x* W) for l below or at j.
#pragma once

#include "gradyn/model/data.hpp"

namespace gradyn::detail {

inline bool is_ancestor_or_self(const Model& model, int j, int x) {
  for (; x >= 0; x = model.parent[x])
    if (x == j) return true;
  return false;
}

/// Velocity of the material point at world point p of a body with world twist V = [omega; v0].
inline Eigen::Vector3d point_velocity(const Vector6<double>& V, const Eigen::Vector3d& p) {
  return V.tail<3>() + V.head<3>().cross(p);
}

/// dtau(rows of body x's path, col) += sign (S_l^T dW - [l below or at j] S_l^T (xi x* W)); xi null for
/// a column that moves no pose (a velocity column).
inline void add_path_column(const Model& model, const Data& data, int x, int j, const Vector6<double>* xi,
                            const Vector6<double>& dW, const Vector6<double>& W, double sign,
                            Eigen::Ref<Eigen::MatrixXd> dtau, int col) {
  bool carried = xi != nullptr && is_ancestor_or_self(model, j, x);
  // sign (dW - xi x* W) below or at j, sign dW above it (xi x* W once, not per joint)
  const Vector6<double> g_above = sign * dW;
  const Vector6<double> g_carried = carried ? Vector6<double>(g_above - sign * cross_force<double>(*xi, W)) : g_above;
  for (int l = x; l >= 0; l = model.parent[l]) {
    const Vector6<double>& g = carried ? g_carried : g_above;
    if (l == j) carried = false;
    const int lv = model.idx_v[l], nvl = model.joint_nv(l);
    dtau.col(col).segment(lv, nvl).noalias() += data.oS[l].leftCols(nvl).transpose() * g;
  }
}

}  // namespace gradyn::detail
