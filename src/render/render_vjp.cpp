// render_vjp(): image adjoint -> adjoints of q, geometry, camera pose and appearance
// (render/render_vjp.hpp).
//
// Per pixel that sees geom g (the part and face intersect() chose held fixed), with its colour
// c = base(u, v) * shade(n . l):
//   base_bar = c_bar * shade -> the solid colour, or the four texels (bilinear weights)
//   u_bar, v_bar = base_bar . d base / d(u, v)              (textured geoms)
//   (n . l)_bar = (c_bar . base) * diffuse  where n . l > 0  (lit geoms)
// and (u, v, n . l) as functions of the 12 local inputs (ray origin o_l and direction d_l in the
// geom frame, the light direction l_l in the geom frame, the size entries) come from one forward-
// mode pass of surface<AD12>. Their adjoints are summed per geom over the pixels; then, with the
// geom rotation R, camera centre o (world), light l (world):
//   o_l = R^T (o - p), d_l = R^T d, l_l = R^T l
//   a left world twist [dtheta; dp0] of the geom moves o_l by -R^T (dtheta x o + dp0), d_l by
//   -R^T (dtheta x d), l_l by -R^T (dtheta x l): the geom's wrench is
//       -[o x R o_l_bar + R sum(d_l x d_l_bar) + l x R l_l_bar;  R o_l_bar]
//   the same twist of the camera moves o and every d (not l): the camera's wrench is
//       [o x R o_l_bar + R sum(d_l x d_l_bar);  R o_l_bar]   (summed over the geoms)
// Geom wrenches go to their bodies' pose adjoints and to the geom placements (as collide_vjp's
// add_geom_wrench); the camera's to its body (attached) and to its local pos and quat; then
// body_poses_vjp maps the body wrenches to q and to the joint placements and axes.
#include "gradyn/render/render_vjp.hpp"

#include <optional>

#include <unsupported/Eigen/AutoDiff>

#include "gradyn/dynamics/kinematics_vjp.hpp"
#include "gradyn/render/detail/render_world.hpp"
#include "gradyn/sim/batch.hpp"

namespace gradyn {

namespace {

constexpr int kDirections = 12;  // o_l (0-2), d_l (3-5), l_l (6-8), size (9-11)
using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, kDirections, 1>>;

AD seeded(double x, int k) {
  AD s(x);
  s.derivatives().setZero();
  s.derivatives()[k] = 1.0;
  return s;
}

Vector3<AD> seeded3(const Vector3<double>& x, int k0) {
  return Vector3<AD>(seeded(x[0], k0), seeded(x[1], k0 + 1), seeded(x[2], k0 + 2));
}

// Adjoint of the quaternion (x, y, z, w), read normalised, given the adjoint phi_bar of a left
// rotation [phi]x R of R(quat): for a unit quaternion (v, w), dR = [phi]x R with
// phi = 2 (w dv - dw v + v x dv), so v_bar = 2 (w phi_bar + phi_bar x v), w_bar = -2 phi_bar . v;
// then through the normalisation q / |q|.
Eigen::Vector4d quaternion_adjoint(const Eigen::Vector4d& quat, const Vector3<double>& phi_bar) {
  const double n = quat.norm();
  const Eigen::Vector4d u = quat / n;
  const Vector3<double> v = u.head<3>();
  Eigen::Vector4d ub;
  ub.head<3>() = 2 * (u[3] * phi_bar + phi_bar.cross(v));
  ub[3] = -2 * phi_bar.dot(v);
  return (ub - u * u.dot(ub)) / n;
}

// Adds the world wrench (tau, f) acting on a frame with local pose M in body `body` (-1: world):
// to pose_bar[body], and returns the local adjoints (rotation as a left twist phi_bar, position).
void local_adjoint(const Data& data, int body, const Pose<double>& M, const Vector3<double>& tau,
                   const Vector3<double>& f, std::vector<Vector6<double>>& pose_bar, Vector3<double>& phi_bar,
                   Vector3<double>& p_bar) {
  Vector3<double> tau_b = tau, f_b = f;
  if (body >= 0) {
    pose_bar[body].head<3>() += tau;
    pose_bar[body].tail<3>() += f;
    const Pose<double>& B = data.oMi[body];
    tau_b = B.R.transpose() * (tau - B.p.cross(f));
    f_b = B.R.transpose() * f;
  }
  phi_bar = tau_b - M.p.cross(f_b);
  p_bar = f_b;
}

}  // namespace

RenderGrad::RenderGrad(const Model& m, const Appearance& appearance)
    : q(VectorX<double>::Zero(m.nq)), model(m), color(m.ngeoms(), Vector3<double>::Zero()) {
  for (const Texture& t : appearance.textures) texture.emplace_back(t.rgb.size(), 0.0);
}

void RenderGrad::setZero() {
  q.setZero();
  model.setZero();
  camera_pos.setZero();
  camera_quat.setZero();
  for (Vector3<double>& c : color) c.setZero();
  for (std::vector<double>& t : texture) std::fill(t.begin(), t.end(), 0.0);
  background.setZero();
}

void RenderGrad::add(const RenderGrad& o) {
  q += o.q;
  for (size_t i = 0; i < model.placement_R.size(); ++i) {
    model.placement_R[i] += o.model.placement_R[i];
    model.placement_p[i] += o.model.placement_p[i];
    model.axis[i] += o.model.axis[i];
  }
  for (size_t g = 0; g < model.geom_size.size(); ++g) {
    model.geom_size[g] += o.model.geom_size[g];
    model.geom_placement_R[g] += o.model.geom_placement_R[g];
    model.geom_placement_p[g] += o.model.geom_placement_p[g];
  }
  camera_pos += o.camera_pos;
  camera_quat += o.camera_quat;
  for (size_t g = 0; g < color.size(); ++g) color[g] += o.color[g];
  for (size_t t = 0; t < texture.size(); ++t)
    for (size_t k = 0; k < texture[t].size(); ++k) texture[t][k] += o.texture[t][k];
  background += o.background;
}

void render_vjp(const Model& model, Data& data, const VecRef<double>& q, const Camera& camera,
                const Appearance& appearance, const double* image_bar, RenderWorkspace& ws, RenderGrad& grad) {
  using namespace render_detail;
  check_camera(model, camera);
  check_appearance(model, appearance);
  check_size("grad.q", grad.q.size(), model.nq);
  if (static_cast<int>(grad.color.size()) != model.ngeoms() || grad.texture.size() != appearance.textures.size())
    throw ArgumentError("render_vjp: grad was made for another model or appearance");
  Pose<double> cam;
  prepare_world(model, data, q, camera, appearance, ws, cam);
  for (RenderWorkspace::GeomFrame& f : ws.geoms) {
    f.origin_bar.setZero();
    f.dir_moment.setZero();
    f.light_bar.setZero();
    f.size_bar.setZero();
  }
  const PixelRays rays(camera);
  PixelShade px;
  Surface<AD> s;
  for (int i = 0; i < camera.height; ++i) {
    for (int j = 0; j < camera.width; ++j) {
      const int pixel = i * camera.width + j;
      const Eigen::Map<const Vector3<double>> c_bar(image_bar + 3 * pixel);
      const Vector3<double> dir = cam.R * rays.direction(i, j);
      int part = kNone, face = 0;
      Vector3<double> d;
      const int g = nearest_hit(model, ws, dir, part, face, d);
      if (g < 0) {
        grad.background += c_bar;
        continue;
      }
      shade_pixel(model, appearance, ws, g, part, face, d, px);
      const GeomLook& lk = look(appearance, g);
      const Vector3<double> base_bar = c_bar * px.shade;
      double u_bar = 0, v_bar = 0, nl_bar = 0;
      if (lk.texture >= 0) {
        std::vector<double>& tb = grad.texture[lk.texture];
        for (int k = 0; k < 4; ++k)
          for (int ch = 0; ch < 3; ++ch) tb[px.texel.index[k] + ch] += px.texel.weight[k] * base_bar[ch];
        u_bar = base_bar.dot(px.texel.du);
        v_bar = base_bar.dot(px.texel.dv);
      } else {
        grad.color[g] += base_bar;
      }
      if (appearance.lighting && px.n_dot_l > 0) nl_bar = c_bar.dot(px.base) * appearance.diffuse;
      if (u_bar == 0 && v_bar == 0 && nl_bar == 0) continue;
      // Forward mode over the 12 local inputs, the part and face held fixed.
      const Geom& geom = model.geoms[g];
      RenderWorkspace::GeomFrame& f = ws.geoms[g];
      const Vector3<AD> o = seeded3(f.origin, 0), dl = seeded3(d, 3), l = seeded3(f.light, 6);
      const Vector3<AD> size = seeded3(geom.size, 9);
      surface<AD>(geom.type, size, geom.hull.get(), lk.tile, o, dl, part, face, s);
      Eigen::Matrix<double, kDirections, 1> in_bar = u_bar * s.u.derivatives() + v_bar * s.v.derivatives();
      if (nl_bar != 0) in_bar += nl_bar * s.normal.dot(l).derivatives();
      f.origin_bar += in_bar.segment<3>(0);
      f.dir_moment += d.cross(Vector3<double>(in_bar.segment<3>(3)));
      f.light_bar += in_bar.segment<3>(6);
      f.size_bar += in_bar.segment<3>(9);
    }
  }
  // Local adjoints -> wrenches on the geoms and the camera.
  std::vector<Vector6<double>>& pose_bar = ws.pose_bar;
  for (Vector6<double>& w : pose_bar) w.setZero();
  const Vector3<double> light = -appearance.light_dir.normalized();
  Vector3<double> cam_tau = Vector3<double>::Zero(), cam_f = Vector3<double>::Zero();
  for (int g = 0; g < model.ngeoms(); ++g) {
    const RenderWorkspace::GeomFrame& f = ws.geoms[g];
    const Geom& geom = model.geoms[g];
    const int used = geom_size_count(geom.type);
    for (int k = 0; k < used; ++k) grad.model.geom_size[g][k] += f.size_bar[k];
    const Matrix3<double> R = f.Rt.transpose();
    const Vector3<double> ob = R * f.origin_bar, dm = R * f.dir_moment, lb = R * f.light_bar;
    const Vector3<double> tau = cam.p.cross(ob) + dm;
    cam_tau += tau;
    cam_f += ob;
    Vector3<double> phi_bar, p_bar;
    local_adjoint(data, geom.body, geom.placement, Vector3<double>(-tau - light.cross(lb)), Vector3<double>(-ob),
                  pose_bar, phi_bar, p_bar);
    grad.model.geom_placement_p[g] += p_bar;
    grad.model.geom_placement_R[g] += 0.5 * skew<double>(phi_bar) * geom.placement.R;
  }
  Vector3<double> phi_bar, p_bar;
  local_adjoint(data, camera.body, camera_local_pose(camera), cam_tau, cam_f, pose_bar, phi_bar, p_bar);
  grad.camera_pos += p_bar;
  grad.camera_quat += quaternion_adjoint(camera.quat, phi_bar);
  body_poses_vjp<double>(model, data, q, pose_bar, grad.q, grad.model);
}

void render_vjp_batch(const Model& model, const Eigen::Ref<const MatrixXr<double>>& q, const Camera& camera,
                      const Appearance& appearance, const double* images_bar, int threads,
                      Eigen::Ref<MatrixXr<double>> q_bar, RenderGrad& shared) {
  check_camera(model, camera);
  check_appearance(model, appearance);
  if (q.cols() != model.nq) check_size("q (per world)", q.cols(), model.nq);
  if (q_bar.rows() != q.rows() || q_bar.cols() != q.cols())
    throw ArgumentError("render_vjp_batch: q_bar must have the shape of q");
  const int nthreads = batch_threads(threads);
  const int B = static_cast<int>(q.rows());
  const Eigen::Index frame = static_cast<Eigen::Index>(camera.width) * camera.height;
  std::vector<std::optional<Data>> data(nthreads);
  std::vector<std::optional<RenderWorkspace>> ws(nthreads);
  std::vector<std::optional<RenderGrad>> grads(B);
  for_each_world(B, nthreads, [&](int world, int thread) {
    if (!data[thread]) data[thread].emplace(model), ws[thread].emplace(model);
    grads[world].emplace(model, appearance);
    render_vjp(model, *data[thread], q.row(world).transpose(), camera, appearance, images_bar + 3 * frame * world,
               *ws[thread], *grads[world]);
  });
  for (int b = 0; b < B; ++b) {
    q_bar.row(b) = grads[b]->q.transpose();
    shared.add(*grads[b]);
  }
}

}  // namespace gradyn
