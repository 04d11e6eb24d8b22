// render(): analytic checks (a sphere's silhouette radius, a plane's colour times the Lambert
// factor, a textured plane's bilinear samples, the background), every primitive drawn, the batch,
// and the errors.
#include <cmath>
#include <limits>
#include <numbers>

#include "gradyn/model/errors.hpp"
#include "render_test_util.hpp"

namespace gradyn::test {
namespace {

using V3 = Vector3<double>;

Model single_geom_model(GeomType type, const V3& size, const Pose<double>& placement = Pose<double>()) {
  ModelBuilder b;
  LinkSpec world{"world", std::nullopt, {}, {}};
  world.collisions.push_back(geom("g", type, size, placement));
  b.add_link(world);
  return b.build();
}

std::vector<double> render_image(const Model& m, const Eigen::VectorXd& q, const Camera& c, const Appearance& a,
                                 std::vector<std::int32_t>* ids = nullptr) {
  Data d(m);
  RenderWorkspace ws(m);
  std::vector<double> img(3 * c.width * c.height);
  if (ids) ids->assign(c.width * c.height, -2);
  render(m, d, q, c, a, ws, img.data(), ids ? ids->data() : nullptr);
  return img;
}

TEST(Render, SphereSilhouetteRadiusMatchesThePinholeProjection) {
  const double r = 0.5, D = 4.0, fovy = 40.0;
  const Model m = single_geom_model(GeomType::Sphere, V3(r, 0, 0));
  for (int H : {64, 97}) {
    const Camera c = look_at(V3(0, -D, 0), V3::Zero(), H, H, fovy);
    std::vector<std::int32_t> ids;
    render_image(m, m.q0, c, Appearance(), &ids);
    // The silhouette is the cone tangent to the sphere: angular radius asin(r / D).
    const double expected = 0.5 * H * std::tan(std::asin(r / D)) / std::tan(0.5 * fovy * std::numbers::pi / 180);
    int top = H, bottom = -1, left = H, right = -1, area = 0;
    for (int i = 0; i < H; ++i)
      for (int j = 0; j < H; ++j)
        if (ids[i * H + j] == 0) {
          top = std::min(top, i), bottom = std::max(bottom, i), left = std::min(left, j), right = std::max(right, j);
          ++area;
        }
    EXPECT_NEAR(0.5 * (bottom - top + 1), expected, 1.0) << H;
    EXPECT_NEAR(0.5 * (right - left + 1), expected, 1.0) << H;
    EXPECT_NEAR(std::sqrt(area / std::numbers::pi), expected, 1.0) << H;
    EXPECT_NEAR(0.5 * (top + bottom), 0.5 * (H - 1), 0.5);  // centred
  }
}

TEST(Render, PlaneFillsWithItsColourTimesTheLambertFactor) {
  const Model m = single_geom_model(GeomType::Plane, V3::Zero());
  const Camera c = look_at(V3(0.2, 0.1, 3.0), V3(0.2, 0.1001, 0), 40, 30, 60);
  Appearance a;
  a.geoms.resize(1);
  a.geoms[0].color = V3(0.8, 0.5, 0.25);
  a.light_dir = V3(1, 0, -2);
  a.ambient = 0.25, a.diffuse = 0.7;
  const double lambert = 0.25 + 0.7 * (2 / std::sqrt(5.0));
  const std::vector<double> img = render_image(m, m.q0, c, a);
  for (int p = 0; p < 40 * 30; ++p)
    for (int k = 0; k < 3; ++k) ASSERT_NEAR(img[3 * p + k], a.geoms[0].color[k] * lambert, 1e-12);
  a.lighting = false;
  const std::vector<double> flat = render_image(m, m.q0, c, a);
  for (int p = 0; p < 40 * 30; ++p) ASSERT_NEAR(flat[3 * p + 1], 0.5, 1e-15);
  // Light from below the plane: the ambient part only.
  a.lighting = true;
  a.light_dir = V3(0, 0, 1);
  const std::vector<double> dark = render_image(m, m.q0, c, a);
  ASSERT_NEAR(dark[0], 0.8 * 0.25, 1e-12);
}

TEST(Render, TexturedPlaneSamplesBilinearlyAtTheWorldCoordinates) {
  const Model m = single_geom_model(GeomType::Plane, V3::Zero());
  std::mt19937 rng(3);
  Appearance a;
  a.lighting = false;
  a.textures.push_back(random_texture(5, 7, rng));
  a.geoms.resize(1);
  a.geoms[0].texture = 0;
  a.geoms[0].tile = 0.6;
  const Camera c = look_at(V3(0.3, -0.2, 2.0), V3(0.4, 0.5, 0), 24, 20, 50);
  const std::vector<double> img = render_image(m, m.q0, c, a);
  const Pose<double> C = camera_local_pose(c);
  const Texture& t = a.textures[0];
  auto texel = [&](int r, int col, int k) {
    r = ((r % t.height) + t.height) % t.height, col = ((col % t.width) + t.width) % t.width;
    return t.rgb[3 * (r * t.width + col) + k];
  };
  for (int i = 0; i < c.height; i += 3)
    for (int j = 0; j < c.width; j += 5) {
      const V3 d = C.R * pixel_direction(c, i, j);
      const V3 x = C.p - C.p.z() / d.z() * d;
      const double cx = x.x() / 0.6 * t.width - 0.5, cy = -x.y() / 0.6 * t.height - 0.5;
      const double fx = cx - std::floor(cx), fy = cy - std::floor(cy);
      const int c0 = static_cast<int>(std::floor(cx)), r0 = static_cast<int>(std::floor(cy));
      for (int k = 0; k < 3; ++k) {
        const double want = (1 - fx) * (1 - fy) * texel(r0, c0, k) + fx * (1 - fy) * texel(r0, c0 + 1, k) +
                            (1 - fx) * fy * texel(r0 + 1, c0, k) + fx * fy * texel(r0 + 1, c0 + 1, k);
        EXPECT_NEAR(img[3 * (i * c.width + j) + k], want, 1e-9) << i << "," << j;
      }
    }
}

TEST(Render, CameraLookingAtNothingRendersTheBackground) {
  RenderScene s = gallery();
  s.camera = look_at(V3(0, 0, 3), V3(0, 0, 10), 16, 12);  // up, away from the floor and everything
  std::vector<std::int32_t> ids;
  const std::vector<double> img = render_image(s.model, s.q, s.camera, s.appearance, &ids);
  for (int p = 0; p < 16 * 12; ++p) {
    ASSERT_EQ(ids[p], -1);
    for (int k = 0; k < 3; ++k) ASSERT_EQ(img[3 * p + k], s.appearance.background[k]);
  }
  // A model without geoms, too.
  const Model empty = [] {
    ModelBuilder b;
    b.add_link(LinkSpec{"world", std::nullopt, {}, {}});
    return b.build();
  }();
  const std::vector<double> none = render_image(empty, empty.q0, s.camera, Appearance());
  for (double x : none) ASSERT_EQ(x, 0.0);
}

TEST(Render, EveryPrimitiveIsDrawnSeenFromOutsideOnly) {
  RenderScene s = gallery(96, 64);
  std::vector<std::int32_t> ids;
  render_image(s.model, s.q, s.camera, s.appearance, &ids);
  std::vector<int> count(s.model.ngeoms(), 0);
  for (std::int32_t g : ids)
    if (g >= 0) ++count[g];
  for (int g = 0; g < s.model.ngeoms(); ++g) EXPECT_GT(count[g], 20) << s.model.geoms[g].name;
  // Cameras inside a sphere, a box, a cylinder, a capsule, a hull and below a plane see nothing.
  const std::vector<std::pair<GeomType, V3>> solids = {{GeomType::Sphere, V3(1, 0, 0)},
                                                       {GeomType::Box, V3(1, 1, 1)},
                                                       {GeomType::Cylinder, V3(1, 1, 0)},
                                                       {GeomType::Capsule, V3(1, 1, 0)},
                                                       {GeomType::Plane, V3::Zero()}};
  for (const auto& [type, size] : solids) {
    const Model m = single_geom_model(type, size);
    const Camera c = look_at(V3(0.1, 0.2, -0.3), V3(1, 2, 0.5), 8, 8, 90);
    std::vector<std::int32_t> inside;
    render_image(m, m.q0, c, Appearance(), &inside);
    for (std::int32_t g : inside) ASSERT_EQ(g, -1) << geom_type_name(type);
  }
}

TEST(Render, EachPrimitiveFaceOnHasItsAnalyticExtent) {
  // Orthogonal-ish views of a box face, a cylinder's cap and side, a capsule: the hit columns of the
  // middle row span the projected width to one pixel.
  const double D = 5.0, fovy = 30.0;
  const int H = 81;
  const double f = 0.5 * H / std::tan(0.5 * fovy * std::numbers::pi / 180);  // focal length in pixels
  struct Case {
    GeomType type;
    V3 size;
    double half_width;  // projected half-width in pixels of the nearest silhouette, along the row
  };
  const std::vector<Case> cases = {
      {GeomType::Box, V3(0.4, 0.7, 0.3), f * 0.4 / (D - 0.7)},       // the face y = -0.7 faces the camera
      {GeomType::Cylinder, V3(0.5, 0.6, 0), f * std::tan(std::asin(0.5 / D))},
      {GeomType::Capsule, V3(0.3, 0.5, 0), f * std::tan(std::asin(0.3 / D))},
  };
  for (const Case& k : cases) {
    const Model m = single_geom_model(k.type, k.size);
    const Camera c = look_at(V3(0, -D, 0), V3::Zero(), H, H, fovy);
    std::vector<std::int32_t> ids;
    render_image(m, m.q0, c, Appearance(), &ids);
    int left = H, right = -1;
    for (int j = 0; j < H; ++j)
      if (ids[(H / 2) * H + j] == 0) left = std::min(left, j), right = std::max(right, j);
    EXPECT_NEAR(0.5 * (right - left + 1), k.half_width, 1.0) << geom_type_name(k.type);
  }
}

TEST(Render, BatchEqualsOneWorldAtATimeForAnyThreadCount) {
  RenderScene s = gallery(20, 14);
  const int B = 5;
  MatrixXr<double> Q(B, s.model.nq);
  for (int b = 0; b < B; ++b) {
    Q.row(b) = s.q.transpose();
    Q(b, s.model.idx_q[s.model.body_id("arm")]) += 0.1 * b;
    Q(b, s.model.idx_q[s.model.body_id("ball")]) += 0.05 * b;
  }
  const int frame = 3 * 20 * 14;
  std::vector<double> one(B * frame), many(B * frame);
  render_batch(s.model, Q, s.camera, s.appearance, 1, one.data());
  render_batch(s.model, Q, s.camera, s.appearance, 3, many.data());
  EXPECT_EQ(one, many);
  for (int b = 0; b < B; ++b) {
    const std::vector<double> single = render_image(s.model, Q.row(b).transpose(), s.camera, s.appearance);
    EXPECT_TRUE(std::equal(single.begin(), single.end(), one.begin() + b * frame)) << b;
  }
}

TEST(Render, CameraOnABodyMovesWithIt) {
  RenderScene s = gallery(24, 16);
  // The same world view from a camera attached to the ball, with the local pose that puts it there.
  const int ball = s.model.body_id("ball");
  Data d(s.model);
  RenderWorkspace ws(s.model);
  std::vector<double> a(3 * 24 * 16), b(a.size());
  render(s.model, d, s.q, s.camera, s.appearance, ws, a.data());
  const Pose<double> local = d.oMi[ball].inverse() * camera_local_pose(s.camera);
  Camera attached = s.camera;
  attached.body = ball;
  attached.pos = local.p;
  const Eigen::Quaterniond lq(local.R);
  attached.quat << lq.x(), lq.y(), lq.z(), lq.w();
  render(s.model, d, s.q, attached, s.appearance, ws, b.data());
  for (size_t k = 0; k < a.size(); ++k) ASSERT_NEAR(a[k], b[k], 1e-9);
}

TEST(Render, BadInputIsRefusedWithTheField) {
  RenderScene s = gallery(8, 8);
  Data d(s.model);
  RenderWorkspace ws(s.model);
  std::vector<double> img(3 * 64);
  auto expect_error = [&](Camera c, Appearance a, const std::string& words) {
    try {
      render(s.model, d, s.q, c, a, ws, img.data());
      ADD_FAILURE() << "no error for " << words;
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  Camera c = s.camera;
  c.width = 0;
  expect_error(c, s.appearance, "width and height must be positive");
  c = s.camera, c.fovy = 180;
  expect_error(c, s.appearance, "fovy");
  c = s.camera, c.quat.setZero();
  expect_error(c, s.appearance, "quat");
  c = s.camera, c.body = 99;
  expect_error(c, s.appearance, "body");
  Appearance a = s.appearance;
  a.geoms.pop_back();
  expect_error(s.camera, a, "one look per geom");
  a = s.appearance, a.geoms[1].texture = 42;
  expect_error(s.camera, a, "texture index 42");
  a = s.appearance, a.textures[2].rgb.pop_back();
  expect_error(s.camera, a, "'tex2'");
  a = s.appearance, a.light_dir.setZero();
  expect_error(s.camera, a, "light_dir");
  EXPECT_THROW(render(s.model, d, Eigen::VectorXd::Zero(3), s.camera, s.appearance, ws, img.data()), ArgumentError);
  // A non-finite configuration is no argument error (a batch goes on): the bodies' geoms are not
  // hit, the world's floor still is, and every number is finite.
  Eigen::VectorXd bad = s.q;
  bad.setConstant(std::numeric_limits<double>::quiet_NaN());
  std::vector<std::int32_t> ids(64, -2);
  render(s.model, d, bad, s.camera, s.appearance, ws, img.data(), ids.data());
  int floor = 0;
  for (int p = 0; p < 64; ++p) {
    ASSERT_TRUE(ids[p] == -1 || ids[p] == 0) << ids[p];
    floor += ids[p] == 0;
  }
  EXPECT_GT(floor, 0);
  for (double x : img) ASSERT_TRUE(std::isfinite(x));
}

}  // namespace
}  // namespace gradyn::test
