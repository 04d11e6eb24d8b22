// render_vjp against central finite differences of <image_bar, render(...)>: w.r.t. q (free and
// revolute bodies), geom sizes and placements, colours, textures, background, the camera pose (in
// the world and attached to a body), on images where the perturbation moves no silhouette (the
// per-pixel geom ids are checked equal at both ends of every difference). And the edge
// behaviour: a silhouette that moves is seen by differences, never by the adjoint.
#include <functional>

#include "gradyn/model/errors.hpp"
#include "gradyn/render/render_vjp.hpp"
#include "render_test_util.hpp"

namespace gradyn::test {
namespace {

using V3 = Vector3<double>;

struct Rendered {
  std::vector<double> image;
  std::vector<std::int32_t> ids;
};

Rendered draw(const Model& m, const Eigen::VectorXd& q, const Camera& c, const Appearance& a) {
  Data d(m);
  RenderWorkspace ws(m);
  Rendered r{std::vector<double>(3 * c.width * c.height), std::vector<std::int32_t>(c.width * c.height)};
  render(m, d, q, c, a, ws, r.image.data(), r.ids.data());
  return r;
}

std::vector<double> random_bar(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> g;
  std::vector<double> x(n);
  for (double& v : x) v = g(rng);
  return x;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

RenderGrad adjoint(const RenderScene& s, const std::vector<double>& bar) {
  Data d(s.model);
  RenderWorkspace ws(s.model);
  RenderGrad g(s.model, s.appearance);
  render_vjp(s.model, d, s.q, s.camera, s.appearance, bar.data(), ws, g);
  return g;
}

// Central difference of the loss under `perturb(scene, +-h)`; fails the test if a pixel changes geom.
double difference(const RenderScene& s, const std::vector<double>& bar, double h,
                  const std::function<void(RenderScene&, double)>& perturb, const std::string& what) {
  RenderScene plus = s, minus = s;
  perturb(plus, h);
  perturb(minus, -h);
  const Rendered p = draw(plus.model, plus.q, plus.camera, plus.appearance);
  const Rendered m = draw(minus.model, minus.q, minus.camera, minus.appearance);
  EXPECT_EQ(p.ids, m.ids) << what << ": the perturbation moved a silhouette";
  return (dot(bar, p.image) - dot(bar, m.image)) / (2 * h);
}

void expect_close(double adj, double fd, const std::string& what) {
  // Central differences at h = 1e-7 carry about 1e-6 relative rounding error here (the loss sums
  // thousands of pixels); a wrong adjoint term is off by far more.
  EXPECT_NEAR(adj, fd, 1e-5 * (1 + std::abs(fd))) << what;
}

class RenderVjp : public ::testing::TestWithParam<bool> {};  // solid colours (true) or textures

TEST_P(RenderVjp, MatchesFiniteDifferencesInQ) {
  const RenderScene s = gallery(48, 32, GetParam());
  const std::vector<double> bar = random_bar(3 * 48 * 32, 1);
  const RenderGrad g = adjoint(s, bar);
  double norm = 0;
  for (int k = 0; k < s.model.nq; ++k) {
    const double fd = difference(s, bar, 1e-7, [k](RenderScene& x, double h) { x.q[k] += h; }, "q");
    expect_close(g.q[k], fd, "q[" + std::to_string(k) + "]");
    norm += std::abs(fd);
  }
  EXPECT_GT(norm, 1.0);  // the check has something to check
}

TEST_P(RenderVjp, MatchesFiniteDifferencesInGeomSizesAndPlacements) {
  const RenderScene s = gallery(48, 32, GetParam());
  const std::vector<double> bar = random_bar(3 * 48 * 32, 2);
  const RenderGrad g = adjoint(s, bar);
  for (int geom = 0; geom < s.model.ngeoms(); ++geom) {
    const std::string name = s.model.geoms[geom].name;
    for (int k = 0; k < geom_size_count(s.model.geoms[geom].type); ++k) {
      const double fd = difference(
          s, bar, 1e-7, [&](RenderScene& x, double h) { x.model.geoms[geom].size[k] += h; }, name + ".size");
      expect_close(g.model.geom_size[geom][k], fd, name + ".size[" + std::to_string(k) + "]");
    }
    for (int k = 0; k < 3; ++k) {
      const double fd = difference(
          s, bar, 1e-7, [&](RenderScene& x, double h) { x.model.geoms[geom].placement.p[k] += h; }, name + ".p");
      expect_close(g.model.geom_placement_p[geom][k], fd, name + ".placement.p[" + std::to_string(k) + "]");
      // Rotation: the component tangent to the rotations, along [e_k]x R.
      const double fr = difference(
          s, bar, 1e-7,
          [&](RenderScene& x, double h) {
            Pose<double>& P = x.model.geoms[geom].placement;
            P.R = rot(V3::Unit(k), h) * P.R;
          },
          name + ".R");
      const double adj = (g.model.geom_placement_R[geom].array() * (skew<double>(V3::Unit(k)) * s.model.geoms[geom].placement.R).array()).sum();
      expect_close(adj, fr, name + ".placement.R about " + std::to_string(k));
    }
  }
}

TEST_P(RenderVjp, MatchesFiniteDifferencesInTheCameraPose) {
  const RenderScene s = gallery(48, 32, GetParam());
  const std::vector<double> bar = random_bar(3 * 48 * 32, 3);
  const RenderGrad g = adjoint(s, bar);
  for (int k = 0; k < 3; ++k) {
    const double fd = difference(s, bar, 1e-7, [k](RenderScene& x, double h) { x.camera.pos[k] += h; }, "pos");
    expect_close(g.camera_pos[k], fd, "camera.pos[" + std::to_string(k) + "]");
  }
  for (int k = 0; k < 4; ++k) {
    const double fd = difference(s, bar, 1e-7, [k](RenderScene& x, double h) { x.camera.quat[k] += h; }, "quat");
    expect_close(g.camera_quat[k], fd, "camera.quat[" + std::to_string(k) + "]");
  }
  EXPECT_GT(g.camera_pos.norm(), 1.0);
}

TEST_P(RenderVjp, CameraOnABodyTakesItsGradientToQ) {
  RenderScene s = gallery(40, 28, GetParam());
  // The camera rides on the arm (revolute), looking at the scene from its local pose.
  const int arm = s.model.body_id("arm");
  Data d(s.model);
  forward_kinematics(s.model, d, s.q);
  const Pose<double> local = d.oMi[arm].inverse() * camera_local_pose(s.camera);
  s.camera.body = arm;
  s.camera.pos = local.p;
  const Eigen::Quaterniond lq(local.R);
  s.camera.quat << lq.x(), lq.y(), lq.z(), lq.w();
  const std::vector<double> bar = random_bar(3 * 40 * 28, 4);
  const RenderGrad g = adjoint(s, bar);
  const int iq = s.model.idx_q[arm];
  const double fd = difference(s, bar, 1e-7, [iq](RenderScene& x, double h) { x.q[iq] += h; }, "hinge");
  expect_close(g.q[iq], fd, "q[hinge] with the camera on the arm");
  for (int k = 0; k < 3; ++k) {
    const double fp = difference(s, bar, 1e-7, [k](RenderScene& x, double h) { x.camera.pos[k] += h; }, "pos");
    expect_close(g.camera_pos[k], fp, "attached camera.pos[" + std::to_string(k) + "]");
  }
}

INSTANTIATE_TEST_SUITE_P(Looks, RenderVjp, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Solid" : "Textured"; });

TEST(RenderVjpLook, MatchesFiniteDifferencesInColoursTexturesAndBackground) {
  RenderScene s = gallery(48, 32, false);
  s.appearance.geoms[1].texture = -1;  // the ball solid, the rest textured
  const std::vector<double> bar = random_bar(3 * 48 * 32, 5);
  const RenderGrad g = adjoint(s, bar);
  // The image is linear in the look: differences with h = 1 are exact up to rounding.
  for (int k = 0; k < 3; ++k) {
    expect_close(g.color[1][k],
                 difference(s, bar, 0.5, [k](RenderScene& x, double h) { x.appearance.geoms[1].color[k] += h; }, "c"),
                 "color");
    expect_close(g.background[k],
                 difference(s, bar, 0.5, [k](RenderScene& x, double h) { x.appearance.background[k] += h; }, "bg"),
                 "background");
  }
  EXPECT_GT(g.color[1].norm(), 0.1);
  EXPECT_TRUE(g.color[2].isZero());  // textured geoms' colours are unused
  std::mt19937 rng(9);
  for (int t : {0, 2, 3, 5}) {
    const int n = static_cast<int>(s.appearance.textures[t].rgb.size());
    double seen = 0;
    for (int trial = 0; trial < 12; ++trial) {
      const int k = std::uniform_int_distribution<int>(0, n - 1)(rng);
      const double fd = difference(
          s, bar, 0.5, [&](RenderScene& x, double h) { x.appearance.textures[t].rgb[k] += h; }, "texel");
      expect_close(g.texture[t][k], fd, "texture " + std::to_string(t) + "[" + std::to_string(k) + "]");
      seen += std::abs(fd);
    }
    EXPECT_GT(seen, 0.0) << t;
  }
}

TEST(RenderVjpLook, BatchIsTheSumOfItsWorlds) {
  RenderScene s = gallery(20, 14, false);
  const int B = 3;
  MatrixXr<double> Q(B, s.model.nq);
  for (int b = 0; b < B; ++b) {
    Q.row(b) = s.q.transpose();
    Q(b, s.model.idx_q[s.model.body_id("arm")]) += 0.07 * b;
  }
  const std::vector<double> bar = random_bar(3 * 20 * 14 * B, 6);
  MatrixXr<double> q_bar(B, s.model.nq);
  RenderGrad shared(s.model, s.appearance), one(s.model, s.appearance);
  render_vjp_batch(s.model, Q, s.camera, s.appearance, bar.data(), 2, q_bar, shared);
  Data d(s.model);
  RenderWorkspace ws(s.model);
  for (int b = 0; b < B; ++b) {
    RenderGrad g(s.model, s.appearance);
    render_vjp(s.model, d, Q.row(b).transpose(), s.camera, s.appearance, bar.data() + 3 * 20 * 14 * b, ws, g);
    EXPECT_TRUE(q_bar.row(b).transpose().isApprox(g.q, 1e-14)) << b;
    one.add(g);
  }
  EXPECT_EQ(shared.camera_pos, one.camera_pos);
  EXPECT_EQ(shared.texture, one.texture);
  EXPECT_EQ(shared.model.geom_size, one.model.geom_size);
}

// Silhouette edges give no gradient. A solid, unlit sphere on the ball seen against the
// background: its pixels are constant, so the adjoint of its position is exactly zero, although
// moving it sideways by a pixel changes the image (a difference across the move sees the jump).
TEST(RenderVjpEdges, SilhouettesGiveNoGradientButFiniteDifferencesSeeTheJump) {
  RenderScene s = gallery(48, 32, true);
  s.appearance.lighting = false;
  const std::vector<double> bar(3 * 48 * 32, 1.0);  // loss: the sum of the image
  const RenderGrad g = adjoint(s, bar);
  const int iq = s.model.idx_q[s.model.body_id("ball")];  // x of the ball
  EXPECT_EQ(g.q[iq], 0.0);
  RenderScene plus = s, minus = s;
  plus.q[iq] += 0.05, minus.q[iq] -= 0.05;
  const Rendered p = draw(plus.model, plus.q, plus.camera, plus.appearance);
  const Rendered m = draw(minus.model, minus.q, minus.camera, minus.appearance);
  int moved = 0;
  for (size_t k = 0; k < p.ids.size(); ++k) moved += p.ids[k] != m.ids[k];
  EXPECT_GT(moved, 2);
  EXPECT_GT(std::abs(dot(bar, p.image) - dot(bar, m.image)), 1e-3);
  // Lit, the same sphere's interior has a pose gradient (the normal turns against the light).
  s.appearance.lighting = true;
  EXPECT_NE(adjoint(s, bar).q[iq + 3], 0.0);
}

}  // namespace
}  // namespace gradyn::test
