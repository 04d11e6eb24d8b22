#include "gradyn/dynamics/kinematics.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {
template <class S>
void body_pose(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, int i) {
  data.liMi[i] = model.joint_placement[i] *
                 joint_transform<S>(model.joint_type[i], model.joint_axis[i], q.segment(model.idx_q[i], model.joint_nq(i)));
  const int p = model.parent[i];
  data.oMi[i] = p >= 0 ? data.oMi[p] * data.liMi[i] : data.liMi[i];
}
}  // namespace

template <class S>
void forward_kinematics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q) {
  check_size("q", q.size(), model.nq);
  for (int i = 0; i < model.nbodies(); ++i) body_pose(model, data, q, i);
}

template <class S>
void forward_kinematics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  for (int i = 0; i < model.nbodies(); ++i) {
    body_pose(model, data, q, i);
    const int p = model.parent[i];
    const Vector6<S> vj = data.joint_S[i] * v.segment(model.idx_v[i], model.joint_nv(i));
    data.v[i] = p >= 0 ? Vector6<S>(data.liMi[i].act_inv_motion(data.v[p]) + vj) : vj;
  }
}

template <class S>
void update_frames(const ModelTpl<S>& model, DataTpl<S>& data) {
  for (size_t k = 0; k < model.frames.size(); ++k) {
    const auto& f = model.frames[k];
    data.oMf[k] = f.body >= 0 ? data.oMi[f.body] * f.placement : f.placement;
  }
}

#define GRADYN_INSTANTIATE(S)                                                                          \
  template void forward_kinematics<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&);               \
  template void forward_kinematics<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&); \
  template void update_frames<S>(const ModelTpl<S>&, DataTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
