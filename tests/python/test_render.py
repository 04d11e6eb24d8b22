"""gradyn.render / render_vjp / gradyn.torch.render: analytic images (a sphere's silhouette radius, a
plane's colour times the Lambert factor, the background), gradients against central differences on
images where no silhouette moves, the edge behaviour, batches, and errors in the user's terms."""

import math
import pathlib

import numpy as np
import pytest

import gradyn

SCENE = """<mujoco model="render_scene">
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="ball" pos="-0.9 0.2 0.5"><freejoint name="ball_free"/>
      <geom name="ball" type="sphere" size="0.45"/></body>
    <body name="arm" pos="0.9 0.1 0.9"><joint name="hinge" type="hinge" axis="0.2 1 0.1"/>
      <geom name="arm_box" type="box" size="0.25 0.2 0.35" pos="0 0 -0.3" euler="10 20 30"/>
      <geom name="arm_capsule" type="capsule" size="0.12 0.3" pos="0.1 -0.1 0.35" euler="0 60 0"/></body>
    <body name="can" pos="-0.1 1.0 0.45"><freejoint name="can_free"/>
      <geom name="can" type="cylinder" size="0.3 0.25" euler="30 0 0"/></body>
  </worldbody>
</mujoco>
"""


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    path = tmp_path_factory.mktemp("render") / "scene.xml"
    path.write_text(SCENE)
    model = gradyn.load(str(path))
    q = np.array(model.q0)
    q[7] = 0.35  # the hinge (after the ball's 7 free coordinates)
    return model, q


def camera(width=40, height=28):
    return gradyn.Camera.look_at(eye=(0.3, -4.0, 2.5), target=(0.0, 0.0, 0.3), width=width, height=height)


def textured(model, seed=0):
    rng = np.random.default_rng(seed)
    return gradyn.Appearance(textures={n: rng.uniform(0.1, 0.9, (5 + k, 7 + k, 3))
                                       for k, n in enumerate(model.geom_names)},
                             tiles={"floor": 0.7}, background=(0.1, 0.2, 0.3), light_dir=(0.4, 0.7, -1.0))


def sphere_model(tmp_path, radius):
    path = tmp_path / "sphere.xml"
    path.write_text(f'<mujoco><worldbody><geom name="s" type="sphere" size="{radius}"/></worldbody></mujoco>')
    return gradyn.load(str(path))


def test_sphere_silhouette_radius_is_the_pinhole_projection(tmp_path):
    r, D, fovy, H = 0.5, 4.0, 40.0, 81
    model = sphere_model(tmp_path, r)
    cam = gradyn.Camera.look_at(eye=(0, -D, 0), target=(0, 0, 0), width=H, height=H, fovy=fovy)
    image, ids = gradyn.render(model, model.q0, cam, return_ids=True)
    assert image.shape == (H, H, 3) and ids.shape == (H, H)
    expected = 0.5 * H * math.tan(math.asin(r / D)) / math.tan(math.radians(fovy) / 2)
    rows = np.nonzero((ids == 0).any(axis=1))[0]
    cols = np.nonzero((ids == 0).any(axis=0))[0]
    assert abs(0.5 * (rows[-1] - rows[0] + 1) - expected) <= 1.0
    assert abs(0.5 * (cols[-1] - cols[0] + 1) - expected) <= 1.0
    assert abs(math.sqrt((ids == 0).sum() / math.pi) - expected) <= 1.0


def test_plane_fills_with_its_colour_times_the_lambert_factor(scene):
    model, q = scene
    cam = gradyn.Camera.look_at(eye=(3.0, 3.0, 2.0), target=(3.0, 3.0001, 0.0), width=16, height=12, fovy=30)
    colors = np.tile([0.8, 0.5, 0.25], (len(model.geom_names), 1))
    look = gradyn.Appearance(colors=colors, light_dir=(1.0, 0.0, -2.0), ambient=0.25, diffuse=0.7)
    image = gradyn.render(model, q, cam, look)
    np.testing.assert_allclose(image, np.broadcast_to([0.8, 0.5, 0.25], image.shape) * (0.25 + 0.7 * 2 / math.sqrt(5)),
                               atol=1e-12)


def test_camera_looking_at_nothing_renders_the_background(scene):
    model, q = scene
    cam = gradyn.Camera.look_at(eye=(0, 0, 3), target=(0, 0.001, 10), width=8, height=6)
    image, ids = gradyn.render(model, q, cam, {"background": (0.2, 0.4, 0.6)}, return_ids=True)
    assert (ids == -1).all()
    np.testing.assert_array_equal(image, np.broadcast_to([0.2, 0.4, 0.6], (6, 8, 3)))


def test_batch_is_the_worlds_one_by_one(scene):
    model, q = scene
    qs = np.stack([q, q + 0.05 * np.eye(model.nq)[7], q + 0.1 * np.eye(model.nq)[0]])
    look = textured(model)
    batch = gradyn.render(model, qs, camera(), look, threads=2)
    assert batch.shape == (3, 28, 40, 3)
    for b in range(3):
        np.testing.assert_array_equal(batch[b], gradyn.render(model, qs[b], camera(), look))


def loss_difference(model, q, cam, look, bar, perturb, h):
    plus, minus = perturb(+h), perturb(-h)
    ip, idp = gradyn.render(*plus, return_ids=True)
    im, idm = gradyn.render(*minus, return_ids=True)
    assert (idp == idm).all(), "the perturbation moved a silhouette"
    return (np.sum(bar * ip) - np.sum(bar * im)) / (2 * h)


def test_render_vjp_matches_central_differences(scene):
    model, q = scene
    cam, look = camera(), textured(model)
    look.colors = None
    bar = np.random.default_rng(1).normal(size=(28, 40, 3))
    g = gradyn.render_vjp(model, q, cam, bar, look)
    h = 1e-7
    for k in [0, 1, 2, 3, 5, 7, 8, 10]:
        e = np.eye(model.nq)[k]
        fd = loss_difference(model, q, cam, look, bar, lambda s: (model, q + s * e, cam, look), h)
        assert g["q"][k] == pytest.approx(fd, rel=1e-5, abs=1e-5), k
    for k in range(3):
        def moved(s, k=k):
            c = gradyn.Camera(cam.width, cam.height, cam.fovy, cam.pos + s * np.eye(3)[k], cam.quat)
            return model, q, c, look
        assert g["camera_pos"][k] == pytest.approx(loss_difference(model, q, cam, look, bar, moved, h), rel=1e-5, abs=1e-5)
    for k in range(4):
        def turned(s, k=k):
            c = gradyn.Camera(cam.width, cam.height, cam.fovy, cam.pos, cam.quat + s * np.eye(4)[k])
            return model, q, c, look
        assert g["camera_quat"][k] == pytest.approx(loss_difference(model, q, cam, look, bar, turned, h), rel=1e-5,
                                                    abs=1e-5)
    # Geom sizes, through params too (the flat layout names them).
    names = model.param_names
    for geom, k in [("ball", 0), ("arm_box", 2), ("can", 1), ("arm_capsule", 0)]:
        i = names.index(f"{geom}.size[{k}]")
        p0 = np.asarray(model.params)

        def sized(s, i=i):
            p = p0.copy()
            p[i] += s
            return model.with_params(p), q, cam, look
        fd = loss_difference(model, q, cam, look, bar, sized, h)
        assert g["params"][i] == pytest.approx(fd, rel=1e-5, abs=1e-5), geom
        assert g["geom_size"][model.geom_names.index(geom), k] == g["params"][i]
    # Textures: linear, so a unit difference is exact.
    tex = look.textures["ball"]
    for idx in [(0, 0, 0), (2, 3, 1), (4, 6, 2)]:
        def painted(s, idx=idx):
            t = tex.copy()
            t[idx] += s
            return model, q, cam, gradyn.Appearance(textures={**look.textures, "ball": t}, tiles=look.tiles,
                                                    background=look.background, light_dir=look.light_dir)
        fd = loss_difference(model, q, cam, look, bar, painted, 0.5)
        assert g["textures"]["ball"][idx] == pytest.approx(fd, rel=1e-9, abs=1e-9)
    assert np.abs(g["textures"]["ball"]).sum() > 0
    assert g["background"] == pytest.approx(bar[gradyn.render(model, q, cam, look, return_ids=True)[1] < 0].sum(0))


def test_silhouette_edges_give_no_gradient(scene):
    """A solid, unlit geom's pixels are constant: moving it changes the image only at its silhouette,
    a jump that central differences see and the adjoint (the hit geom held fixed) does not."""
    model, q = scene
    cam = camera()
    look = gradyn.Appearance(lighting=False)
    bar = np.ones((28, 40, 3))
    g = gradyn.render_vjp(model, q, cam, bar, look)
    assert g["q"][0] == 0.0  # the ball's x
    e = np.eye(model.nq)[0]
    (ip, idp), (im, idm) = (gradyn.render(model, q + s * e, cam, look, return_ids=True) for s in (0.05, -0.05))
    assert (idp != idm).sum() > 2 and abs(ip.sum() - im.sum()) > 1e-3
    # With a texture, the ball's interior gives its position a gradient.
    lit = gradyn.Appearance(textures={"ball": np.random.default_rng(2).uniform(size=(8, 8, 3))}, lighting=False)
    assert gradyn.render_vjp(model, q, cam, bar * np.random.default_rng(3).normal(size=bar.shape), lit)["q"][0] != 0


def test_texture_files(scene, tmp_path):
    PIL = pytest.importorskip("PIL.Image")
    model, q = scene
    pixels = (np.random.default_rng(4).uniform(size=(6, 9, 3)) * 255).astype(np.uint8)
    path = tmp_path / "wood.png"
    PIL.fromarray(pixels).save(path)
    from_file = gradyn.render(model, q, camera(), gradyn.Appearance(textures={"floor": path}))
    from_array = gradyn.render(model, q, camera(), gradyn.Appearance(textures={"floor": pixels}))
    np.testing.assert_allclose(from_file, from_array, atol=1e-12)
    broken = tmp_path / "broken.png"
    broken.write_text("not a png")
    for bad in (broken, tmp_path / "missing.png"):
        with pytest.raises(gradyn.ModelError, match=str(bad.name)):
            gradyn.render(model, q, camera(), gradyn.Appearance(textures={"floor": bad}))


def test_bad_input_in_the_users_terms(scene):
    model, q = scene
    with pytest.raises(ValueError, match="width and height must be positive"):
        gradyn.Camera(width=0, height=10)
    with pytest.raises(ValueError, match="width and height must be positive"):
        gradyn.render(model, q, {"width": 10, "height": 0})
    with pytest.raises(ValueError, match=r"q: expected shape \(%d,\)" % model.nq):
        gradyn.render(model, q[:3], camera())
    with pytest.raises(ValueError, match=r"image_bar: expected shape \(28, 40, 3\), got \(40, 28, 3\)"):
        gradyn.render_vjp(model, q, camera(), np.zeros((40, 28, 3)))
    with pytest.raises(ValueError, match=r"colors: expected shape \(%d, 3\)" % len(model.geom_names)):
        gradyn.render(model, q, camera(), gradyn.Appearance(colors=np.zeros((2, 3))))
    with pytest.raises(ValueError, match="no geom 'nope'"):
        gradyn.render(model, q, camera(), gradyn.Appearance(textures={"nope": np.zeros((2, 2, 3))}))
    with pytest.raises(ValueError, match=r"textures\['ball'\]: expected shape \(h, w, 3\)"):
        gradyn.render(model, q, camera(), gradyn.Appearance(textures={"ball": np.zeros((2, 2))}))
    with pytest.raises(ValueError, match="no body 'nowhere'"):
        gradyn.render(model, q, gradyn.Camera(body="nowhere"))
    with pytest.raises(ValueError, match=r"Camera.pos: expected shape \(3,\), got \(2,\)"):
        gradyn.Camera(pos=(1, 2))


def test_torch_gradcheck(scene):
    torch = pytest.importorskip("torch")
    import gradyn.torch as gt
    model, q = scene
    cam = camera(12, 9)
    look = textured(model, seed=5)
    qt = torch.tensor(q, dtype=torch.float64, requires_grad=True)
    pos = torch.tensor(cam.pos, requires_grad=True)
    tex = torch.tensor(look.textures["ball"], requires_grad=True)
    bg = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
    fn = lambda q_, pos_, tex_, bg_: gt.render(model, q_, cam, look, camera_pos=pos_, textures={"ball": tex_},
                                               background=bg_)
    assert torch.autograd.gradcheck(fn, (qt, pos, tex, bg), eps=1e-7, atol=1e-5, rtol=1e-4)
    # A batch with shared camera: the image and gradient shapes.
    qs = torch.stack([qt.detach(), qt.detach()]).requires_grad_(True)
    img = gt.render(model, qs, cam, look, camera_pos=pos)
    assert img.shape == (2, 9, 12, 3)
    img.square().sum().backward()
    assert qs.grad.shape == (2, model.nq) and pos.grad is not None


def test_jax_render_gradients_and_vmap(scene):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import gradyn.jax as gj
    model, q = scene
    cam, look = camera(12, 9), textured(model, seed=6)
    bar = np.random.default_rng(7).normal(size=(9, 12, 3))
    loss = lambda q_, pos_, bg_: jnp.sum(jnp.asarray(bar) * gj.render(model, q_, cam, look, camera_pos=pos_,
                                                                       background=bg_))
    gq, gpos, gbg = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(jnp.asarray(q), jnp.asarray(cam.pos),
                                                              jnp.asarray([0.1, 0.2, 0.3]))
    ref = gradyn.render_vjp(model, q, cam, bar, look)
    np.testing.assert_allclose(gq, ref["q"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gpos, ref["camera_pos"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gbg, ref["background"], rtol=1e-12, atol=1e-12)
    assert np.abs(gq).sum() > 0
    qs = np.stack([q, q + 0.05 * np.eye(model.nq)[7]])
    images = jax.vmap(lambda q_: gj.render(model, q_, cam, look))(jnp.asarray(qs))
    np.testing.assert_allclose(images, gradyn.render(model, qs, cam, look), rtol=0, atol=0)


CAMERAS = pathlib.Path(__file__).resolve().parents[1] / "data" / "mjcf" / "cameras.xml"


def _quat_matrix(x, y, z, w):
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def test_mjcf_cameras_are_where_mujoco_puts_them():
    """MJCF <camera>s in the world, on a hinged arm, on a link welded to it (merged) and unnamed:
    model.cameras gives MuJoCo's names (unnamed: 'camera<id>'), fields of view and world poses at
    random configurations; the tracking camera loads silently (cameras are drawing) and warns when
    it is used that it stays fixed to its body; a render through the named camera equals one through
    an explicit camera at MuJoCo's pose."""
    mujoco = pytest.importorskip("mujoco")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = gradyn.load(str(CAMERAS))
    m = mujoco.MjModel.from_xml_path(str(CAMERAS))
    d = mujoco.MjData(m)
    cams = model.cameras
    assert [c["name"] for c in cams] == [m.cam(i).name or f"camera{i}" for i in range(m.ncam)]
    assert [c["name"] for c in cams] == ["top", "camera1", "wrist", "camera3", "tracker"]
    assert [c["body"] for c in cams] == [None, None, "arm", "arm", "finger"]
    np.testing.assert_allclose([c["fovy"] for c in cams], m.cam_fovy)
    rng = np.random.default_rng(0)
    for trial in range(4):
        q = np.zeros(model.nq) if trial == 0 else rng.uniform(-1, 1, size=model.nq)
        d.qpos[:] = q  # both models order q as hinge, slide
        mujoco.mj_forward(m, d)
        poses = gradyn.forward_kinematics(model, q)["body_poses"]
        names = list(model.body_names)
        for i, c in enumerate(cams):
            if c["name"] == "tracker" and trial > 0:
                continue  # MuJoCo moves it with the subtree's centre of mass; gradyn does not (the warning)
            X = np.eye(4) if c["body"] is None else poses[names.index(c["body"])]
            R = X[:3, :3] @ _quat_matrix(*c["quat"])
            p = X[:3, :3] @ np.array(c["pos"]) + X[:3, 3]
            np.testing.assert_allclose(p, d.cam_xpos[i], atol=1e-12, err_msg=c["name"])
            np.testing.assert_allclose(R, d.cam_xmat[i].reshape(3, 3), atol=1e-12, err_msg=c["name"])
    q = np.array([0.3, 0.05])
    d.qpos[:] = q
    mujoco.mj_forward(m, d)
    R = d.cam_xmat[2].reshape(3, 3)
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, d.cam_xmat[2])  # w, x, y, z
    explicit = gradyn.Camera(48, 32, m.cam_fovy[2], d.cam_xpos[2], (quat[1], quat[2], quat[3], quat[0]))
    by_name = gradyn.render(model, q, gradyn.Camera.named(model, "wrist", width=48, height=32))
    np.testing.assert_allclose(by_name, gradyn.render(model, q, explicit), atol=1e-9)
    assert gradyn.render(model, q, "wrist").shape == (64, 64, 3)
    with pytest.warns(UserWarning, match=r"cameras.xml:\d+: <camera name='tracker'>: not reproduced by gradyn's renderer: "
                                         r"mode=\"trackcom\" \(gradyn keeps the camera fixed to its body\)"):
        gradyn.Camera.named(model, "tracker")
    with pytest.raises(ValueError, match=r"no camera named 'side'; its cameras: 'top', 'camera1', 'wrist'"):
        gradyn.render(model, q, "side")
    assert gradyn.load(str(CAMERAS)).cameras == cams  # and the model pickles with them
    import pickle
    assert pickle.loads(pickle.dumps(model)).cameras == cams


def test_builder_cameras_are_model_cameras():
    """ModelBuilder.add_camera: the camera's body, pose (xyz, rpy in the link frame) and fovy in
    model.cameras; bad requests name the camera."""
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("bob", mass=1.0, com=(0, 0, -0.5), inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    b.add_joint("hinge", "revolute", parent="base", child="bob", xyz=(0, 0, 1), axis=(0, 1, 0))
    b.add_camera("eye", "bob", xyz=(0.1, 0, -0.2), rpy=(0, 0.3, 0), fovy=60)
    b.add_camera("fixed", "base", xyz=(0, -2, 1), rpy=(np.pi / 2, 0, 0))
    m = b.build()
    eye, fixed = m.cameras
    assert (eye["name"], eye["body"], eye["fovy"], fixed["body"], fixed["fovy"]) == ("eye", "bob", 60.0, None, 45.0)
    np.testing.assert_allclose(eye["pos"], (0.1, 0, -0.2), atol=1e-15)
    c, s = np.cos(0.15), np.sin(0.15)  # rpy (0, 0.3, 0): half the pitch about y
    np.testing.assert_allclose(eye["quat"], (0, s, 0, c), atol=1e-15)
    with pytest.raises(gradyn.ModelError, match=r"<camera name='wide'>: fovy: expected a vertical field of view in \(0, 180\)"):
        gradyn.ModelBuilder().add_camera("wide", "base", fovy=180)
    with pytest.raises(gradyn.ModelError, match="duplicate camera name 'eye'"):
        b.add_camera("eye", "bob")
    lost = gradyn.ModelBuilder()
    lost.add_link("base")
    lost.add_camera("c", "nowhere")
    with pytest.raises(gradyn.ModelError, match="camera 'c' is on unknown link 'nowhere'"):
        lost.build()
