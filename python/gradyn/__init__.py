"""gradyn: rigid-body dynamics with a NumPy API (compiled C++20 core).

Every function takes the Model first and float64 NumPy arrays (any array-like is converted),
and returns new NumPy arrays. A wrong shape raises ValueError naming the expected and the actual
shape, e.g. ``q: expected shape (7,), got (6,)``.

Conventions (the same as Pinocchio's):

* Configuration ``q`` and velocity ``v`` are stacked per moving joint, in the order of
  ``model.joint_names`` (``model.joint_idx_q(name)``, ``model.joint_idx_v(name)`` give offsets):

  =====================  ===========================  ============================
  joint                  q                            v
  =====================  ===========================  ============================
  revolute, continuous   [angle]                      [rate]
  prismatic              [displacement]               [rate]
  spherical              [qx, qy, qz, qw]             [wx, wy, wz] (child frame)
  free                   [x, y, z, qx, qy, qz, qw]    [vx, vy, vz, wx, wy, wz]
  planar                 [x, y, theta]                [vx, vy, wz] (child frame)
  =====================  ===========================  ============================

* Quaternions are stored x, y, z, w and are unit. ``model.neutral()`` has identity quaternions.
* A free joint's velocity is the body's linear velocity (of its origin) then its angular
  velocity, both expressed in the body frame. ``integrate(model, q, dv)`` moves q on the manifold.
* Spatial vectors are [angular; linear]; Jacobian rows likewise.
* Gravity defaults to (0, 0, -9.81) in the world frame; ``model.with_gravity(g)`` returns a copy
  with another one (models are immutable).
* Poses are 4x4 homogeneous matrices of the frame in the world.
* Gradients (``step_vjp``, ``rollout_vjp``): adjoints of q are ambient, one per number in q
  (quaternion components are plain coordinates), and exact in every direction; the dynamics read
  a quaternion normalised, so their part of its adjoint has no component along it. Parameter
  adjoints follow ``model.param_names``; joint axes are normalised by ``model.with_params``.
  ``gradcheck`` compares them with forward-mode AD and finite differences of single raw entries.
* ``step_jacobian`` returns the whole step Jacobian analytically, in tangent coordinates (no rows or
  columns for quaternion components; ``integrate``/``difference`` map tangents to q and back).

Errors: a bad model file or builder input raises :class:`ModelError` (a ValueError) naming the
file, line and element; bad arguments raise ValueError naming the argument and what was expected
(a wrong shape, strings or complex numbers for numbers, NaN or inf in the state of a one-state
function such as aba or crba). The step family (step, rollout, their VJPs and Jacobians) never
raises for NaN or inf in states or controls: it flags them (Status.NON_FINITE).
"""

from ._core import (
    Model,
    ModelBuilder,
    ModelError,
    Status,
    aba,
    actuator_torques,
    actuator_torques_vjp,
    center_of_mass,
    collide,
    crba,
    difference,
    forward_dynamics,
    forward_kinematics,
    frame_jacobian,
    frame_pose,
    generalized_gravity,
    gradcheck,
    integrate,
    kinetic_energy,
    load,
    nonlinear_effects,
    param_index,
    passive_forces,
    potential_energy,
    rnea,
    sensors,
    sensors_vjp,
    step,
    step_jacobian,
    step_vjp,
    total_mass,
)

from ._core import rollout as _cpu_rollout
from ._core import rollout_vjp as _cpu_rollout_vjp
from . import control
from . import cuda
from . import viewer
from . import losses
from .policy import Policy, policy_observations
from .hybrid import group_lasso, input_group_norms, prune_inputs
from .render import Appearance, Camera, render, render_vjp

# Signatures and error messages name the types as users import them (gradyn.Model, not the
# compiled module's gradyn._core.Model).
for _type in (Model, ModelBuilder, ModelError, Status):
    _type.__module__ = "gradyn"
del _type

__version__ = "0.1.0"


def rollout(model, q0, v0, taus, dt, integrator="euler", return_status=False, ctrls=None, params=None, threads=None,
            *, device="cpu", dtype="float64"):
    # (the docstring is the CPU rollout's, with the GPU's paragraph after it: see below)
    if device == "cpu":
        if dtype != "float64":
            raise ValueError(f"dtype: the CPU computes in float64; dtype={dtype!r} is for device='cuda'")
        return _cpu_rollout(model, q0, v0, taus, dt, integrator, return_status, ctrls, params, threads)
    if device != "cuda":
        raise ValueError(f"device: expected 'cpu' or 'cuda', got {device!r}")
    from . import cuda

    if params is not None:
        raise ValueError("params: device='cuda' runs the model as it is; pass model.with_params(params) instead "
                         "(one set of parameters for every world), or run per-world params on the CPU")
    cuda.check_options(integrator)
    return cuda.rollout(model, q0, v0, taus, dt, ctrls, dtype=dtype, return_status=return_status)


def rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, integrator="euler", max_snapshots=0, qs=None, vs=None,
                clip_norm=0.0, return_norms=False, ctrls=None, params=None, threads=None, *, device="cpu",
                dtype="float64"):
    # (the docstring is the CPU's, with the GPU's paragraph after it: see below)
    if device == "cpu":
        if dtype != "float64":
            raise ValueError(f"dtype: the CPU computes in float64; dtype={dtype!r} is for device='cuda'")
        out = _cpu_rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, integrator, max_snapshots, qs, vs, clip_norm,
                               return_norms, ctrls, params, threads)
        _warn_if_diverged(out, lambda: _cpu_rollout(model, q0, v0, taus, dt, integrator, True, ctrls, params, threads),
                          (qs_bar, vs_bar))
        return out
    if device != "cuda":
        raise ValueError(f"device: expected 'cpu' or 'cuda', got {device!r}")
    from . import cuda

    cuda.check_options(integrator, params=params is not None, clip_norm=clip_norm != 0.0,
                       return_norms=bool(return_norms))

    # qs, vs (the forward arrays) are not needed: the GPU recomputes its forward pass.
    out = cuda.rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, ctrls, dtype=dtype, max_snapshots=max_snapshots)
    _warn_if_diverged(out, lambda: cuda.rollout(model, q0, v0, taus, dt, ctrls, dtype=dtype, return_status=True),
                      (qs_bar, vs_bar))
    return out


def _warn_if_diverged(out, forward_with_status, seeds):
    """A gradient with NaN or inf: say which world's forward rollout diverged, and at which step (the
    gradient of a diverged trajectory is not defined; the other worlds' gradients are unaffected), or
    else whether the seeds hold NaN or the adjoint overflowed."""
    import warnings

    import numpy as np

    q0_bar = np.asarray(out[0] if not hasattr(out[0], "cpu") else out[0].cpu())
    if np.isfinite(q0_bar).all():
        return
    status = np.asarray(forward_with_status()[2])
    single = status.ndim == 1
    status = status[None] if single else status  # (B, T)
    nonfinite = (status & int(Status.NON_FINITE)) != 0
    worlds = [w for w in range(status.shape[0]) if nonfinite[w].any()]
    if not worlds:
        if any(s is not None and not np.isfinite(np.asarray(s if not hasattr(s, "cpu") else s.cpu())).all()
               for s in seeds):
            warnings.warn("rollout_vjp: qs_bar or vs_bar holds NaN or inf, and so does the gradient",
                          RuntimeWarning, stacklevel=3)
        else:
            warnings.warn("rollout_vjp: the gradient overflowed (grew past the float range) although the forward "
                          "rollout stayed finite: through a long or chaotic horizon the adjoint can grow without "
                          "bound. Shorten the horizon or clip the adjoint through time (clip_norm=, CPU)",
                          RuntimeWarning, stacklevel=3)
        return
    where = ", ".join(("" if single else f"world {w} ") + f"at step {int(np.argmax(nonfinite[w]))}" for w in worlds[:5])
    more = f" and {len(worlds) - 5} more" if len(worlds) > 5 else ""
    warnings.warn(f"rollout_vjp: the forward rollout diverged (its state became NaN or inf): {where}{more}; the "
                  "gradient of a diverged trajectory is not defined, so it holds NaN" + ("" if single else " for those worlds "
                  "(the other worlds' are exact)") + ". Shorten the step dt, soften the contact or bound the torques; "
                  "gradyn.rollout(..., return_status=True) gives each step's flags", RuntimeWarning, stacklevel=3)


rollout_vjp.__doc__ = (_cpu_rollout_vjp.__doc__ or "") + """

device: 'cpu' (the default, everything above) or 'cuda': the same gradients for thousands of worlds
at once on a GPU (gradyn.cuda.rollout_vjp: one world per GPU thread, every state kept on the GPU,
each step recomputed from its state; max_snapshots=k keeps k states and recomputes segments of
ceil(T / k) steps, see gradyn.cuda.rollout_vjp). The GPU runs the model as
gradyn.rollout(device='cuda') does, and returns (q0_bar, v0_bar, taus_bar, None[, ctrls_bar]): the
parameters' gradient is not computed there (None); params, clip_norm and return_norms are CPU
options (a ValueError says so). dtype: 'float64' or 'float32' (GPU only).
"""


rollout.__doc__ = (_cpu_rollout.__doc__ or "") + """

device: 'cpu' (the default, everything above) or 'cuda': thousands of worlds at once on a GPU, one
world per GPU thread (gradyn.cuda; needs gradyn built with the CUDA toolkit and a GPU, else a
CudaError saying which is missing). The GPU runs the semi-implicit Euler step with penalty or PGS
contact (or none), the actuators, joint limits, damping and springs; what it does not run is refused with
a ValueError naming it. NumPy inputs give NumPy results; PyTorch CUDA tensors (or any GPU array
with DLPack) stay on the GPU and give PyTorch CUDA tensors. dtype: 'float64' or 'float32' (GPU
only). threads is unused there; params must be None (use model.with_params).
"""

__all__ = [
    "Appearance",
    "Camera",
    "Model",
    "Policy",
    "ModelBuilder",
    "ModelError",
    "Status",
    "aba",
    "actuator_torques",
    "actuator_torques_vjp",
    "center_of_mass",
    "collide",
    "control",
    "losses",
    "cuda",
    "crba",
    "difference",
    "forward_dynamics",
    "forward_kinematics",
    "frame_jacobian",
    "frame_pose",
    "generalized_gravity",
    "gradcheck",
    "group_lasso",
    "input_group_norms",
    "integrate",
    "kinetic_energy",
    "load",
    "nonlinear_effects",
    "param_index",
    "passive_forces",
    "policy_observations",
    "potential_energy",
    "prune_inputs",
    "render",
    "render_vjp",
    "rnea",
    "rollout",
    "rollout_vjp",
    "sensors",
    "sensors_vjp",
    "step",
    "step_jacobian",
    "step_vjp",
    "total_mass",
    "viewer",
]
