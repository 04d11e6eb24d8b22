// World velocities and the reverse-mode building blocks of everything that depends on body poses
// (kinematics_vjp.hpp). Pose adjoints are world wrenches F with dL = F . xi for a world twist xi
// (d oMi = xi^ oMi). Two facts carry all the derivations below:
//  * a world twist moves world-frame motion vectors by xi x (.) and world-frame forces by xi x* (.),
//    so d oS_k = xi_k x oS_k, and F . (xi x s) = (s x* F) . xi;
//  * a change upstream of body j (its joint coordinate, its joint placement, its axis) moves the
//    whole subtree of j rigidly by one world twist, so it sees only the subtree sum of the pose
//    adjoints, F_j = sum_{i in subtree(j)} pose_bar_i (the wrench all those adjoints exert on j).
//
// Workspace: the functions take a const Data, so the per-body sums live in thread-local buffers,
// sized on first use (no allocation afterwards for a given model size).
#include "gradyn/dynamics/kinematics_vjp.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

namespace {

/// Thread-local per-body buffer `slot` (0 or 1), at least n entries. The contents are garbage.
template <class S>
std::vector<Vector6<S>>& body_buffer(int slot, int n) {
  static thread_local std::vector<Vector6<S>> buffers[2];
  std::vector<Vector6<S>>& b = buffers[slot];
  if (static_cast<int>(b.size()) < n) b.resize(n);
  return b;
}

/// sums[i] = sum of per_body over the subtree of i (parents come before children).
template <class S>
void subtree_sums(const ModelTpl<S>& model, const std::vector<Vector6<S>>& per_body, std::vector<Vector6<S>>& sums) {
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) sums[i] = per_body[i];
  for (int i = nb - 1; i >= 0; --i)
    if (model.parent[i] >= 0) sums[model.parent[i]] += sums[i];
}

/// Adjoint of the joint columns oS_k w_k, given the subtree sums F of the world-velocity adjoints:
/// w_bar_k += oS_k^T F_k (if w_bar), pose_bar_k += (oS_k w_k) x* F_k, and (if model_bar) the axis
/// of 1-DoF joints through S_k: oS_k = Ad(oMk) [a; 0] (revolute) or Ad(oMk) [0; a] (prismatic).
template <class S>
void joint_columns_vjp(const ModelTpl<S>& model, const DataTpl<S>& data, const VecRef<S>& w,
                       const std::vector<Vector6<S>>& F, VecOut<S>* w_bar, std::vector<Vector6<S>>& pose_bar,
                       ModelTangentTpl<S>* model_bar) {
  for (int k = 0; k < model.nbodies(); ++k) {
    const int iv = model.idx_v[k], nvk = model.joint_nv(k);
    if (nvk == 0) continue;
    const auto wk = w.segment(iv, nvk);
    const Vector6<S> s = data.oS[k] * wk;
    pose_bar[k] += cross_force<S>(s, F[k]);
    if (w_bar) w_bar->segment(iv, nvk) += data.oS[k].transpose() * F[k];
    if (model_bar && nvk == 1) {
      const Vector6<S> Fb = data.oMi[k].act_inv_force(F[k]);  // Ad(oMk)^T F
      if (joint_has_axis(model.joint_type[k]))
        model_bar->axis[k] += wk[0] * joint_subspace_axis_bar<S>(model.joint_type[k], Fb);
    }
  }
}

template <class S>
void check_body_count(const char* what, size_t actual, int expected) {
  check_size(what, static_cast<Eigen::Index>(actual), expected);
}

}  // namespace

template <class S>
void world_velocities(const ModelTpl<S>& model, const DataTpl<S>& data, const VecRef<S>& w,
                      std::vector<Vector6<S>>& ow) {
  check_size("w", w.size(), model.nv);
  check_body_count<S>("ow", ow.size(), model.nbodies());
  for (int i = 0; i < model.nbodies(); ++i) {
    const int p = model.parent[i];
    const Vector6<S> s = data.oS[i] * w.segment(model.idx_v[i], model.joint_nv(i));
    ow[i] = p >= 0 ? Vector6<S>(ow[p] + s) : s;
  }
}

template <class S>
void world_velocities_vjp(const ModelTpl<S>& model, const DataTpl<S>& data, const VecRef<S>& w,
                          const std::vector<Vector6<S>>& ow_bar, VecOut<S> w_bar, std::vector<Vector6<S>>& pose_bar,
                          ModelTangentTpl<S>* model_bar) {
  check_size("w", w.size(), model.nv);
  check_size("w_bar", w_bar.size(), model.nv);
  check_body_count<S>("ow_bar", ow_bar.size(), model.nbodies());
  check_body_count<S>("pose_bar", pose_bar.size(), model.nbodies());
  std::vector<Vector6<S>>& F = body_buffer<S>(0, model.nbodies());
  subtree_sums(model, ow_bar, F);
  joint_columns_vjp(model, data, w, F, &w_bar, pose_bar, model_bar);
}

template <class S>
void body_poses_vjp(const ModelTpl<S>& model, const DataTpl<S>& data, const VecRef<S>& q,
                    const std::vector<Vector6<S>>& pose_bar, VecOut<S> q_bar, ModelTangentTpl<S>& model_bar) {
  using std::cos;
  using std::sin;
  check_size("q", q.size(), model.nq);
  check_size("q_bar", q_bar.size(), model.nq);
  check_body_count<S>("pose_bar", pose_bar.size(), model.nbodies());
  std::vector<Vector6<S>>& F = body_buffer<S>(0, model.nbodies());
  subtree_sums(model, pose_bar, F);
  for (int j = 0; j < model.nbodies(); ++j) {
    const int iq = model.idx_q[j], p = model.parent[j];
    const JointType type = model.joint_type[j];
    // Joint coordinates: a tangent dq_j moves the subtree by the world twist oS_j dq_j (dq in the
    // joint's velocity coordinates), then the ambient q as joint_transform reads it.
    const Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> g = data.oS[j].transpose() * F[j];
    auto qj = q.segment(iq, model.joint_nq(j));
    auto qj_bar = q_bar.segment(iq, model.joint_nq(j));
    joint_tangent_vjp<S>(type, model.joint_axis[j], qj, g, qj_bar);

    // Joint placement P (joint frame in the parent frame): oMj = oMp P Mj. A change (dR, dp) with
    // dR = [phi]x R is the parent-frame twist [phi; dp - phi x P.p] of the subtree, paired with the
    // subtree wrench expressed in the parent frame, [n; f]: dL = f . dp + (n - P.p x f) . phi.
    // R's adjoint in ModelTangent's entry-wise form: <0.5 [g]x R, [phi]x R> = g . phi.
    const Pose<S>& P = model.joint_placement[j];
    const Vector6<S> Fp = p >= 0 ? data.oMi[p].act_inv_force(F[j]) : F[j];
    const Vector3<S> n_p = Fp.template head<3>(), f_p = Fp.template tail<3>();
    model_bar.placement_p[j] += f_p;
    model_bar.placement_R[j].noalias() += S(0.5) * skew<S>(Vector3<S>(n_p - P.p.cross(f_p))) * P.R;

    // Axis (joint frame): the subtree moves with it (joints/<kind>.hpp, axis_wrench_vjp).
    if (joint_has_axis(type))
      joint_axis_wrench_vjp<S>(type, model.joint_axis[j], qj, Vector6<S>(P.act_inv_force(Fp)), model_bar.axis[j]);
  }
}

template <class S>
void mass_quadratic_vjp(const ModelTpl<S>& model, const DataTpl<S>& data, const VecRef<S>& y,
                        const NoDeduce<S>& weight, std::vector<Vector6<S>>& pose_bar, ModelTangentTpl<S>& model_bar) {
  check_size("y", y.size(), model.nv);
  check_body_count<S>("pose_bar", pose_bar.size(), model.nbodies());
  const int nb = model.nbodies();
  // y^T M y = sum_i V_i^T oI_i V_i + sum_k armature_k y_k^2, V_i = ow_i(y) (world velocity under y).
  std::vector<Vector6<S>>& V = body_buffer<S>(0, nb);
  std::vector<Vector6<S>>& F = body_buffer<S>(1, nb);
  for (int i = 0; i < nb; ++i) {
    const int p = model.parent[i];
    const Vector6<S> s = data.oS[i] * y.segment(model.idx_v[i], model.joint_nv(i));
    V[i] = p >= 0 ? Vector6<S>(V[p] + s) : s;
  }
  for (int i = nb - 1; i >= 0; --i) {
    const Inertia<S>& I = model.body_inertia[i];
    const Pose<S>& X = data.oMi[i];
    // Body frame: V^T oI V = v^T I v = w^T Ic w + m |r|^2, r = v_lin + w x c.
    const Vector6<S> vb = X.act_inv_motion(V[i]);
    const Vector3<S> wb = vb.template head<3>();
    const Vector3<S> r = vb.template tail<3>() + wb.cross(I.com);
    model_bar.inertia_com[i].noalias() += weight * (wb * wb.transpose());
    model_bar.mass[i] += weight * r.squaredNorm();
    model_bar.com[i] += (S(2) * weight * I.mass) * r.cross(wb);
    // World momentum h = oI V. At fixed V, d oI = xi x* oI - oI xi x, so d(V^T oI V) = -2 (V x* h) . xi;
    // through V (= ow), the adjoint 2 h goes into the joint columns like any world-velocity adjoint.
    const Vector6<S> h = X.act_force(I * vb);
    pose_bar[i] -= (S(2) * weight) * cross_force<S>(V[i], h);
    F[i] = (S(2) * weight) * h;
  }
  for (int i = nb - 1; i >= 0; --i)
    if (model.parent[i] >= 0) F[model.parent[i]] += F[i];
  joint_columns_vjp<S>(model, data, y, F, nullptr, pose_bar, &model_bar);
  model_bar.armature += weight * y.cwiseProduct(y);
}

#define GRADYN_INSTANTIATE(S)                                                                                   \
  template void world_velocities<S>(const ModelTpl<S>&, const DataTpl<S>&, const VecRef<S>&,                    \
                                    std::vector<Vector6<S>>&);                                                  \
  template void world_velocities_vjp<S>(const ModelTpl<S>&, const DataTpl<S>&, const VecRef<S>&,                \
                                        const std::vector<Vector6<S>>&, VecOut<S>, std::vector<Vector6<S>>&,    \
                                        ModelTangentTpl<S>*);                                                   \
  template void body_poses_vjp<S>(const ModelTpl<S>&, const DataTpl<S>&, const VecRef<S>&,                      \
                                  const std::vector<Vector6<S>>&, VecOut<S>, ModelTangentTpl<S>&);              \
  template void mass_quadratic_vjp<S>(const ModelTpl<S>&, const DataTpl<S>&, const VecRef<S>&, const NoDeduce<S>&, \
                                      std::vector<Vector6<S>>&, ModelTangentTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
