#include "gradyn/dynamics/jacobian.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {
// World-frame (Featherstone) Jacobian columns of every joint between the world and `body`.
template <class S>
void world_jacobian(const ModelTpl<S>& model, const DataTpl<S>& data, int body, MatrixX<S>& J) {
  J.setZero(6, model.nv);
  for (int j = body; j >= 0; j = model.parent[j]) {
    const int jv = model.idx_v[j];
    for (int k = 0; k < model.joint_nv(j); ++k)
      J.col(jv + k) = data.oMi[j].act_motion(Vector6<S>(data.joint_S[j].col(k)));
  }
}
}  // namespace

template <class S>
void frame_jacobian(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, int frame, ReferenceFrame ref,
                    MatrixX<S>& J) {
  if (frame < 0 || frame >= static_cast<int>(model.frames.size()))
    throw ArgumentError("frame index " + std::to_string(frame) + " out of range [0, " +
                        std::to_string(model.frames.size()) + ")");
  forward_kinematics<S>(model, data, q);
  const auto& f = model.frames[frame];
  world_jacobian(model, data, f.body, J);
  const Pose<S> oMf = f.body >= 0 ? data.oMi[f.body] * f.placement : f.placement;
  for (int c = 0; c < model.nv; ++c) {
    const Vector6<S> col = J.col(c);
    switch (ref) {
      case ReferenceFrame::World: break;
      case ReferenceFrame::Local: J.col(c) = oMf.act_inv_motion(col); break;
      case ReferenceFrame::LocalWorldAligned:
        J.col(c).template tail<3>() = col.template tail<3>() - oMf.p.cross(col.template head<3>());
        break;
    }
  }
}

template <class S>
void point_jacobian(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, int body,
                    const Vector3<S>& point, MatrixX<S>& J) {
  if (body < 0 || body >= model.nbodies())
    throw ArgumentError("body index " + std::to_string(body) + " out of range [0, " +
                        std::to_string(model.nbodies()) + ")");
  forward_kinematics<S>(model, data, q);
  MatrixX<S> Jw;
  world_jacobian(model, data, body, Jw);
  const Vector3<S> x = data.oMi[body].act_point(point);
  J.resize(3, model.nv);
  for (int c = 0; c < model.nv; ++c)
    J.col(c) = Jw.col(c).template tail<3>() - x.cross(Vector3<S>(Jw.col(c).template head<3>()));
}

#define GRADYN_INSTANTIATE(S)                                                                             \
  template void frame_jacobian<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, int, ReferenceFrame,   \
                                  MatrixX<S>&);                                                           \
  template void point_jacobian<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, int, const Vector3<S>&, \
                                  MatrixX<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
