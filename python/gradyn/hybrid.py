"""Sparse input discovery for the networks inside the dynamics (paper 001, section V-C).

A network added with ``Model.with_network`` may read many inputs; the sparse-group lasso on its
first layer drives the weights of the inputs that do not explain the data to zero, and
``prune_inputs`` then removes those inputs. The penalty (paper 001, Eq. 2, with the per-input group
term of SPINN and the sparse-group lasso it cites)::

    penalty = l1 * sum_ij |W1[i, j]|                      (Eq. 2's kappa term)
            + sqrt(h) * sum_j group_j ||W1[:, j]||_2       (one group per input j, h = width of layer 1;
                                                   group_j = group, or one weight per input)
            + l2 * sum over the upper layers' weight matrices of their squared entries   (Eq. 2's lambda)

W1 is the first layer's weight matrix (rows: hidden units, columns: inputs); biases are not
penalised. ``params`` may be a NumPy array, a torch tensor or a JAX array (of shape (nparams,) or
(B, nparams)), and the penalty is built from that library's operations, so it is a differentiable
loss term in torch and JAX. Its gradient at a zero group is the subgradient 0.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["group_lasso", "input_group_norms", "prune_inputs", "network_info"]


def network_info(model, network):
    """The dict of ``model.networks`` named `network`; ValueError listing the networks otherwise."""
    for info in model.networks:
        if info["name"] == network:
            return info
    names = ", ".join(repr(n["name"]) for n in model.networks) or "none (add one with Model.with_network)"
    raise ValueError(f"no network named {network!r}; networks: {names}")


def _layer_slices(info):
    """(weights slice, (rows, cols)) of each layer's weight matrix inside params (nn layout)."""
    widths, at, out = info["widths"], info["param_offset"], []
    for inputs, outputs in zip(widths[:-1], widths[1:]):
        out.append((slice(at, at + inputs * outputs), (outputs, inputs)))
        at += (inputs + 1) * outputs
    return out


def _ops(x):
    """sqrt, where and abs of the library x belongs to (numpy, torch or jax)."""
    module = type(x).__module__
    if module.startswith("torch"):
        import torch

        return torch.sqrt, torch.where, torch.abs
    if module.startswith("jax"):
        import jax.numpy as jnp

        return jnp.sqrt, jnp.where, jnp.abs
    return np.sqrt, np.where, np.abs


def _params_of(model, params):
    if params is None:
        return model.params
    if isinstance(params, (list, tuple)):
        params = np.asarray(params, dtype=float)
    n = len(model.param_names)
    if params.shape[-1] != n or params.ndim not in (1, 2):
        raise ValueError(f"params: expected shape ({n},) or (B, {n}) (model.params), got {tuple(params.shape)}")
    return params


def _group_norms(W1, sqrt, where):
    """||W1[:, j]||_2 per input j (last axis), with a zero subgradient at a zero column."""
    s = (W1 * W1).sum(-2)
    positive = s > 0
    return where(positive, sqrt(where(positive, s, 1.0)), 0.0 * s)


def group_lasso(model, network, params=None, *, l1=0.0, group=0.0, l2=0.0):
    """The sparse-group lasso penalty of `network`'s weights in `params` (module docstring).

    params: the flat parameter vector (``model.params`` when None), one world (nparams,) or a
    batch (B, nparams), as NumPy, torch or JAX array; the result is of the same library, a scalar
    per world. l1, group, l2: the weights of the three terms (non-negative); group may also be one
    weight per input (in ``model.networks``' input order): the adaptive group lasso, which weighs
    each group by, e.g., the inverse of its norm in an earlier fit, so that the inputs the data needs
    are shrunk less and the others more.
    """
    for name, value in (("l1", l1), ("l2", l2)):
        if not (value >= 0 and math.isfinite(value)):
            raise ValueError(f"{name}: expected a finite non-negative weight, got {value}")
    info = network_info(model, network)
    group_weights = np.asarray(group, dtype=float)
    if group_weights.ndim == 1 and group_weights.shape != (len(info["inputs"]),):
        raise ValueError(f"group: expected one weight or one per input of network {network!r}, shape "
                         f"({len(info['inputs'])},), got shape {group_weights.shape}")
    if group_weights.ndim > 1 or not (np.isfinite(group_weights).all() and (group_weights >= 0).all()):
        raise ValueError(f"group: expected finite non-negative weights, got {group}")
    p = _params_of(model, params)
    sqrt, where, abs_ = _ops(p)
    layers = _layer_slices(info)
    batch = p.shape[:-1]
    (first, (rows, cols)), upper = layers[0], layers[1:]
    W1 = p[..., first].reshape(*batch, rows, cols)
    total = 0.0 * p[..., 0]
    if l1:
        total = total + l1 * abs_(W1).sum((-2, -1))
    if group_weights.any():
        norms = _group_norms(W1, sqrt, where)
        if group_weights.ndim == 0:
            total = total + float(group_weights) * math.sqrt(rows) * norms.sum(-1)
        else:  # one weight per input (an adaptive group lasso)
            total = total + math.sqrt(rows) * sum(float(w) * norms[..., j] for j, w in enumerate(group_weights) if w)
    if l2:
        for weights, _ in upper:
            total = total + l2 * (p[..., weights] ** 2).sum(-1)
    return total


def input_group_norms(model, network, params=None):
    """{input name: ||W1[:, j]||_2} for `network`'s inputs, at `params` (one world; NumPy floats).

    An input whose norm is zero no longer influences the network's output.
    """
    info = network_info(model, network)
    p = np.asarray(_to_numpy(_params_of(model, params)), dtype=float)
    if p.ndim != 1:
        raise ValueError(f"params: expected one world's parameters, shape ({p.shape[-1]},), got {p.shape}")
    (first, (rows, cols)) = _layer_slices(info)[0]
    norms = np.linalg.norm(p[first].reshape(rows, cols), axis=0)
    return dict(zip(info["inputs"], norms.tolist()))


def prune_inputs(model, network, params=None, *, threshold=1e-3):
    """The model with `params` whose network `network` keeps only the inputs whose group norm is at
    least ``threshold`` times the largest one (``Model.with_network_inputs``); returns
    (model, removed input names). The returned model's ``params`` holds the trained weights."""
    if not (0 <= threshold < 1):
        raise ValueError(f"threshold: expected a fraction of the largest group norm in [0, 1), got {threshold}")
    p = _params_of(model, params)
    trained = model.with_params(np.asarray(_to_numpy(p), dtype=float)) if params is not None else model
    norms = input_group_norms(trained, network)
    largest = max(norms.values())
    keep = [name for name, norm in norms.items() if norm >= threshold * largest and norm > 0]
    if not keep:
        raise ValueError(f"network {network!r}: every input's first-layer weights are zero; nothing to keep")
    removed = [name for name in norms if name not in keep]
    return trained.with_network_inputs(network, keep), removed


def _to_numpy(x):
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x)
