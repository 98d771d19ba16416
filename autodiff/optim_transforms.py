"""Composable gradient transformations (optax's building blocks) and the optimizers made
of them. Part of :mod:`autodiff.optim`, which names them all.

The foundations of every functional optimizer are here too: :class:`GradientTransformation`,
:class:`AdamState`, and, within the package (``autodiff.optim`` builds on them),
:func:`cast_like`, :func:`zeros_like_tree`, :func:`require_params` and :func:`check_hparams`.

>>> import numpy as np, autodiff as ad
>>> opt = ad.optim.chain(ad.optim.clip_by_global_norm(1.0), ad.optim.scale(-0.1))
>>> updates, _ = opt.update({"w": np.array([3.0, 4.0])}, opt.init({"w": np.zeros(2)}))
>>> updates["w"]
array([-0.06, -0.08])
"""
from typing import Any, Callable, NamedTuple

import numpy as np

from . import numpy as anp
from .optim_schedules import count_as_float
from .tree_util import tree_flatten, tree_map

__all__ = ["GradientTransformation", "AdamState",
           "EmptyState", "ScaleByScheduleState", "ScaleByRmsState", "ScaleByRStdDevState",
           "ScaleByRssState", "ScaleByAdaDeltaState", "ScaleByLionState", "TraceState", "identity",
           "scale", "scale_by_schedule", "scale_by_learning_rate", "clip", "clip_by_value",
           "global_norm", "clip_by_global_norm", "add_decayed_weights", "chain", "trace",
           "scale_by_rms", "scale_by_stddev", "rmsprop", "scale_by_rss", "adagrad",
           "scale_by_adadelta", "adadelta", "scale_by_lion", "lion", "ScaleByAdamaxState",
           "scale_by_adamax", "adamax", "scale_by_nadam", "nadam"]


# ----------------------------------------------------------------------------
# Foundations: the transformation type, Adam's state, hyperparameter checks
# ----------------------------------------------------------------------------

class GradientTransformation(NamedTuple):
    """A functional optimizer: ``init(params) -> state``;
    ``update(grads, state, params=None) -> (updates, state)``."""
    init: Callable
    update: Callable


class AdamState(NamedTuple):
    count: Any
    mu: Any            # first-moment estimates
    nu: Any            # second-moment estimates


def cast_like(x, like):
    """``x`` in ``like``'s dtype, so float32 parameters stay float32 (Python numbers
    are weak already; a 0-d float64 array is not, under numpy's promotion rules)."""
    return x if type(x) in (int, float) else anp.astype(x, like.dtype)   # np.float64 is strong


def zeros_like_tree(tree):
    """Zeros shaped like every leaf of ``tree``."""
    return tree_map(lambda p: anp.zeros_like(p), tree)


def require_params(params, who):
    """Raise unless ``params`` were passed (weight decay reads them)."""
    if params is None:
        raise ValueError(f"{who}: weight_decay needs the current params: "
                         f"call opt.update(grads, state, params)")


def check_hparams(lr, momentum=0.0, weight_decay=0.0, eps=0.0, betas=(0.0, 0.0)):
    """Raise ValueError for a negative rate, momentum, decay or eps, or a beta outside [0, 1)."""
    if not callable(lr) and lr < 0:
        raise ValueError(f"invalid learning rate {lr}: it must be >= 0")
    if momentum < 0:
        raise ValueError(f"invalid momentum {momentum}: it must be >= 0")
    if weight_decay < 0:
        raise ValueError(f"invalid weight_decay {weight_decay}: it must be >= 0")
    if eps < 0:
        raise ValueError(f"invalid eps {eps}: it must be >= 0")
    for b in betas:
        if not 0.0 <= b < 1.0:
            raise ValueError(f"invalid beta {b}: it must be in [0, 1)")


# ----------------------------------------------------------------------------
# Composable gradient transformations (optax's building blocks)
# ----------------------------------------------------------------------------

class EmptyState(NamedTuple):
    """The state of a stateless transformation."""


class ScaleByScheduleState(NamedTuple):
    count: Any


class ScaleByRmsState(NamedTuple):
    nu: Any


class ScaleByRStdDevState(NamedTuple):
    mu: Any
    nu: Any


class ScaleByRssState(NamedTuple):
    sum_of_squares: Any


class ScaleByAdaDeltaState(NamedTuple):
    e_g: Any
    e_x: Any


class ScaleByLionState(NamedTuple):
    count: Any
    mu: Any


class TraceState(NamedTuple):
    trace: Any


def _count0():
    return np.zeros((), np.int32)


def _stateless(fn):
    return GradientTransformation(lambda params: EmptyState(),
                                  lambda updates, state, params=None: (fn(updates, params), state))


def identity():
    """The transformation that leaves updates unchanged.

    >>> import numpy as np, autodiff as ad
    >>> ad.optim.identity().update(np.ones(2), ())[0]
    array([1., 1.])
    """
    return _stateless(lambda u, p: u)


def scale(step_size):
    """``updates · step_size``.

    >>> import numpy as np, autodiff as ad
    >>> ad.optim.scale(-0.5).update(np.array([2.0]), ())[0]
    array([-1.])
    """
    return _stateless(lambda u, p: tree_map(lambda g: cast_like(step_size, g) * g, u))


def scale_by_schedule(step_size_fn):
    """``updates · step_size_fn(count)``, count from 0 (optax's ``scale_by_schedule``).

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.scale_by_schedule(lambda t: 0.5 ** t)
    >>> s = tx.init(np.zeros(1))
    >>> u1, s = tx.update(np.ones(1), s); u2, s = tx.update(np.ones(1), s)
    >>> u1, u2
    (array([1.]), array([0.5]))
    """
    def init(params):
        return ScaleByScheduleState(_count0())

    def update(updates, state, params=None):
        s = step_size_fn(state.count)
        return (tree_map(lambda g: cast_like(s, g) * g, updates),
                ScaleByScheduleState(state.count + 1))
    return GradientTransformation(init, update)


def scale_by_learning_rate(learning_rate, flip_sign=True):
    """``-learning_rate · updates`` (a number or a schedule of the step count).

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.scale_by_learning_rate(0.1)
    >>> tx.update(np.array([1.0, -2.0]), tx.init(np.zeros(2)))[0]
    array([-0.1,  0.2])
    """
    sign = -1.0 if flip_sign else 1.0
    if callable(learning_rate):
        return scale_by_schedule(lambda count: sign * learning_rate(count))
    return scale(sign * learning_rate)


def clip(max_delta):
    """Clip every element of the updates to ``[-max_delta, max_delta]`` (clipping by value;
    optax's ``clip``).

    >>> import numpy as np, autodiff as ad
    >>> ad.optim.clip(1.0).update(np.array([-3.0, 0.5, 2.0]), ())[0]
    array([-1. ,  0.5,  1. ])
    """
    if max_delta < 0:
        raise ValueError(f"clip: max_delta must be >= 0, got {max_delta}")
    return _stateless(lambda u, p: tree_map(lambda g: anp.clip(g, -max_delta, max_delta), u))


clip_by_value = clip


def global_norm(updates):
    """``sqrt(Σ‖leaf‖²)`` over every leaf of the pytree.

    >>> import numpy as np, autodiff as ad
    >>> float(ad.optim.global_norm({"a": np.array([3.0]), "b": np.array([4.0])}))
    5.0
    """
    leaves = tree_flatten(updates)[0]
    return anp.sqrt(sum(anp.sum(anp.square(anp.astype(g, np.float64))) for g in leaves))


def clip_by_global_norm(max_norm):
    """Rescale the updates so their global norm is at most ``max_norm``: ``g·max_norm/‖g‖``
    when ``‖g‖ > max_norm`` (optax's ``clip_by_global_norm``, PyTorch's ``clip_grad_norm_``
    without its epsilon).

    >>> import numpy as np, autodiff as ad
    >>> ad.optim.clip_by_global_norm(1.0).update({"a": np.array([3.0, 4.0])}, ())[0]
    {'a': array([0.6, 0.8])}
    """
    if max_norm <= 0:
        raise ValueError(f"clip_by_global_norm: max_norm must be > 0, got {max_norm}")

    def fn(updates, params):
        norm = global_norm(updates)
        factor = anp.where(norm < max_norm, 1.0, max_norm / anp.maximum(norm, max_norm))
        return tree_map(lambda g: cast_like(factor, g) * g, updates)
    return _stateless(fn)


def _mask_tree(mask, params):
    m = mask(params) if callable(mask) else mask
    return m


def add_decayed_weights(weight_decay=0.0, mask=None):
    """``updates + weight_decay · params`` (decoupled weight decay, to chain before the
    learning rate). ``mask``: a pytree of bools like ``params`` (or a callable
    ``params -> mask``); leaves where it is False are not decayed (biases, norms).

    >>> import numpy as np, autodiff as ad
    >>> p = {"w": np.array([2.0]), "b": np.array([2.0])}
    >>> tx = ad.optim.add_decayed_weights(0.5, mask={"w": True, "b": False})
    >>> tx.update({"w": np.zeros(1), "b": np.zeros(1)}, (), p)[0]
    {'b': array([0.]), 'w': array([1.])}
    """
    if weight_decay < 0:
        raise ValueError(f"add_decayed_weights: weight_decay must be >= 0, got {weight_decay}")

    def fn(updates, params):
        if not weight_decay:
            return updates
        require_params(params, "add_decayed_weights")
        if mask is None:
            return tree_map(lambda g, p: g + cast_like(weight_decay, g) * p, updates, params)
        m = _mask_tree(mask, params)
        return tree_map(lambda g, p, on: g + cast_like(weight_decay, g) * p if on else g,
                        updates, params, m)
    return _stateless(fn)


def chain(*transforms):
    """Apply ``transforms`` in order, each to the previous one's updates (optax's ``chain``);
    the state is the tuple of their states.

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.chain(ad.optim.clip(1.0), ad.optim.scale(-0.1))
    >>> tx.update(np.array([5.0, -0.5]), tx.init(np.zeros(2)))[0]
    array([-0.1 ,  0.05])
    """
    for t in transforms:
        if not (hasattr(t, "init") and hasattr(t, "update")):
            raise TypeError(f"chain: expected GradientTransformations (init/update), got "
                            f"{type(t).__name__}")

    def init(params):
        return tuple(t.init(params) for t in transforms)

    def update(updates, state, params=None):
        if len(state) != len(transforms):
            raise ValueError(f"chain: the state has {len(state)} entries for "
                             f"{len(transforms)} transformations; build it with tx.init")
        new = []
        for t, s in zip(transforms, state):
            updates, s = t.update(updates, s, params)
            new.append(s)
        return updates, tuple(new)
    return GradientTransformation(init, update)


def trace(decay, nesterov=False):
    """Momentum: ``t = decay·t + g``; updates ``t`` (or ``g + decay·t`` with ``nesterov``),
    optax's ``trace``.

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.trace(0.5); s = tx.init(np.zeros(1))
    >>> u, s = tx.update(np.ones(1), s); u, s = tx.update(np.ones(1), s); u
    array([1.5])
    """
    def init(params):
        return TraceState(zeros_like_tree(params))

    def update(updates, state, params=None):
        t = tree_map(lambda b, g: decay * b + g, state.trace, updates)
        out = tree_map(lambda g, b: g + decay * b, updates, t) if nesterov else t
        return out, TraceState(t)
    return GradientTransformation(init, update)


def scale_by_rms(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True):
    """RMSProp's scaling: ``ν = decay·ν + (1-decay)·g²``; ``g / sqrt(ν + eps)`` (optax),
    or ``g / (sqrt(ν) + eps)`` with ``eps_in_sqrt=False`` (PyTorch). ``ν₀ = initial_scale``.

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.scale_by_rms(decay=0.75, eps=0.0)
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0]       # 2 / sqrt(0.25·4)
    array([2.])
    """
    def init(params):
        return ScaleByRmsState(tree_map(lambda p: anp.full_like(p, initial_scale), params))

    def update(updates, state, params=None):
        nu = tree_map(lambda n, g: decay * n + (1.0 - decay) * g * g, state.nu, updates)
        if eps_in_sqrt:
            out = tree_map(lambda g, n: g / anp.sqrt(n + eps), updates, nu)
        else:
            out = tree_map(lambda g, n: g / (anp.sqrt(n) + eps), updates, nu)
        return out, ScaleByRmsState(nu)
    return GradientTransformation(init, update)


def scale_by_stddev(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True):
    """Centered RMSProp's scaling: ``μ = decay·μ + (1-decay)·g``, ``ν`` as in
    :func:`scale_by_rms`; ``g / sqrt(ν - μ² + eps)``.

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.scale_by_stddev(decay=0.5, eps=0.0)
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0]      # 2 / sqrt(2 - 1)
    array([2.])
    """
    def init(params):
        return ScaleByRStdDevState(zeros_like_tree(params),
                                   tree_map(lambda p: anp.full_like(p, initial_scale), params))

    def update(updates, state, params=None):
        mu = tree_map(lambda m, g: decay * m + (1.0 - decay) * g, state.mu, updates)
        nu = tree_map(lambda n, g: decay * n + (1.0 - decay) * g * g, state.nu, updates)
        if eps_in_sqrt:
            out = tree_map(lambda g, m, n: g / anp.sqrt(n - m * m + eps), updates, mu, nu)
        else:
            out = tree_map(lambda g, m, n: g / (anp.sqrt(n - m * m) + eps), updates, mu, nu)
        return out, ScaleByRStdDevState(mu, nu)
    return GradientTransformation(init, update)


def rmsprop(learning_rate, decay=0.9, eps=1e-8, initial_scale=0.0, centered=False,
            momentum=None, nesterov=False, eps_in_sqrt=True):
    """RMSProp (Tieleman & Hinton) in optax's form: ``ν = decay·ν + (1-decay)·g²``;
    ``u = -lr·g/sqrt(ν + eps)`` (centered: ``ν - μ²``), optionally with momentum on ``u``.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.rmsprop(0.1, decay=0.75, eps=0.0)
    >>> opt.update(np.array([2.0]), opt.init(np.zeros(1)))[0]         # -0.1·2/sqrt(1)
    array([-0.2])
    """
    check_hparams(learning_rate, momentum or 0.0, eps=eps, betas=(decay,))
    parts = [scale_by_stddev(decay, eps, initial_scale, eps_in_sqrt) if centered
             else scale_by_rms(decay, eps, initial_scale, eps_in_sqrt),
             scale_by_learning_rate(learning_rate)]
    if momentum:
        parts.append(trace(momentum, nesterov))
    return chain(*parts)


def scale_by_rss(initial_accumulator_value=0.1, eps=1e-7, eps_in_sqrt=True):
    """Adagrad's scaling (optax's ``scale_by_rss``): ``s = s + g²``; ``g / sqrt(s + eps)``
    (0 where ``s`` is 0), or ``g / (sqrt(s) + eps)`` with ``eps_in_sqrt=False`` (PyTorch).

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.scale_by_rss(0.0, eps=0.0)
    >>> tx.update(np.array([2.0, 0.0]), tx.init(np.zeros(2)))[0]
    array([1., 0.])
    """
    def init(params):
        return ScaleByRssState(tree_map(lambda p: anp.full_like(p, initial_accumulator_value),
                                        params))

    def update(updates, state, params=None):
        s = tree_map(lambda a, g: a + g * g, state.sum_of_squares, updates)
        if not eps_in_sqrt:
            return (tree_map(lambda g, a: g / (anp.sqrt(a) + eps), updates, s),
                    ScaleByRssState(s))
        out = tree_map(lambda g, a: anp.where(a > 0, g / anp.sqrt(anp.where(a > 0, a, 1.0) + eps),
                                              0.0 * g), updates, s)
        return out, ScaleByRssState(s)
    return GradientTransformation(init, update)


def adagrad(learning_rate, initial_accumulator_value=0.1, eps=1e-7):
    """Adagrad (Duchi et al.) in optax's form: ``s += g²``; ``u = -lr·g/sqrt(s + eps)``.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.adagrad(1.0, initial_accumulator_value=0.0, eps=0.0)
    >>> opt.update(np.array([3.0]), opt.init(np.zeros(1)))[0]         # -3/sqrt(9)
    array([-1.])
    """
    check_hparams(learning_rate, eps=eps)
    return chain(scale_by_rss(initial_accumulator_value, eps),
                 scale_by_learning_rate(learning_rate))


def scale_by_adadelta(rho=0.9, eps=1e-6):
    """Adadelta's scaling (Zeiler): ``E[g²] = ρE[g²] + (1-ρ)g²``;
    ``Δ = sqrt(E[Δ²] + eps)/sqrt(E[g²] + eps)·g``; ``E[Δ²] = ρE[Δ²] + (1-ρ)Δ²``.

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.scale_by_adadelta(rho=0.0, eps=1.0)
    >>> tx.update(np.array([0.0]), tx.init(np.zeros(1)))[0]
    array([0.])
    """
    def init(params):
        return ScaleByAdaDeltaState(zeros_like_tree(params), zeros_like_tree(params))

    def update(updates, state, params=None):
        e_g = tree_map(lambda e, g: rho * e + (1.0 - rho) * g * g, state.e_g, updates)
        out = tree_map(lambda g, eg, ex: anp.sqrt(ex + eps) / anp.sqrt(eg + eps) * g,
                       updates, e_g, state.e_x)
        e_x = tree_map(lambda e, d: rho * e + (1.0 - rho) * d * d, state.e_x, out)
        return out, ScaleByAdaDeltaState(e_g, e_x)
    return GradientTransformation(init, update)


def adadelta(learning_rate=1.0, rho=0.9, eps=1e-6, weight_decay=0.0):
    """Adadelta (Zeiler 2012), as optax and PyTorch: :func:`scale_by_adadelta`, then
    ``-lr``; ``weight_decay`` adds ``wd·p`` to the gradient first (PyTorch's L2).

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.adadelta(1.0, rho=0.5, eps=1e-2)
    >>> np.round(opt.update(np.array([1.0]), opt.init(np.zeros(1)))[0], 6)   # -sqrt(.01/.51)
    array([-0.140028])
    """
    check_hparams(learning_rate, weight_decay=weight_decay, eps=eps, betas=(rho,))
    parts = [add_decayed_weights(weight_decay)] if weight_decay else []
    return chain(*parts, scale_by_adadelta(rho, eps), scale_by_learning_rate(learning_rate))


def scale_by_lion(b1=0.9, b2=0.99):
    """Lion's direction (Chen et al. 2023): ``sign(b1·m + (1-b1)·g)``, then
    ``m = b2·m + (1-b2)·g``.

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.scale_by_lion()
    >>> tx.update(np.array([0.3, -2.0, 0.0]), tx.init(np.zeros(3)))[0]
    array([ 1., -1.,  0.])
    """
    def init(params):
        return ScaleByLionState(_count0(), zeros_like_tree(params))

    def update(updates, state, params=None):
        out = tree_map(lambda m, g: anp.sign(b1 * m + (1.0 - b1) * g), state.mu, updates)
        mu = tree_map(lambda m, g: b2 * m + (1.0 - b2) * g, state.mu, updates)
        return out, ScaleByLionState(state.count + 1, mu)
    return GradientTransformation(init, update)


def lion(learning_rate, b1=0.9, b2=0.99, weight_decay=1e-3, mask=None):
    """Lion (Chen et al. 2023) in optax's form: ``u = -lr·(sign(b1·m + (1-b1)·g) + wd·p)``;
    ``m = b2·m + (1-b2)·g``. ``mask`` as in :func:`add_decayed_weights`.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.lion(0.1, weight_decay=0.0)
    >>> opt.update(np.array([0.5, -0.5]), opt.init(np.zeros(2)))[0]
    array([-0.1,  0.1])
    """
    check_hparams(learning_rate, weight_decay=weight_decay, betas=(b1, b2))
    return chain(scale_by_lion(b1, b2), add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


class ScaleByAdamaxState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


def scale_by_adamax(b1=0.9, b2=0.999, eps=1e-8):
    """Adamax's scaling (Kingma & Ba, §7.1), as optax and PyTorch: ``m = b1·m + (1-b1)·g``,
    ``u = max(b2·u, |g| + eps)``; ``(m / (1 - b1ᵗ)) / u``.

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.scale_by_adamax(eps=0.0)
    >>> tx.update(np.array([2.0, -4.0]), tx.init(np.zeros(2)))[0]
    array([ 1., -1.])
    """
    def init(params):
        return ScaleByAdamaxState(_count0(), zeros_like_tree(params), zeros_like_tree(params))

    def update(updates, state, params=None):
        count = state.count + 1
        mu = tree_map(lambda m, g: b1 * m + (1.0 - b1) * g, state.mu, updates)
        nu = tree_map(lambda u, g: anp.maximum(b2 * u, anp.abs(g) + eps), state.nu, updates)
        bc = 1.0 - anp.power(b1, count_as_float(count))
        out = tree_map(lambda m, u: (m / cast_like(bc, m)) / u, mu, nu)
        return out, ScaleByAdamaxState(count, mu, nu)
    return GradientTransformation(init, update)


def adamax(learning_rate=2e-3, b1=0.9, b2=0.999, eps=1e-8):
    """Adamax (Adam with the infinity norm), in optax's form.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.adamax(0.1)
    >>> np.round(opt.update(np.array([2.0]), opt.init(np.zeros(1)))[0], 6)
    array([-0.1])
    """
    check_hparams(learning_rate, eps=eps, betas=(b1, b2))
    return chain(scale_by_adamax(b1, b2, eps), scale_by_learning_rate(learning_rate))


def scale_by_nadam(b1=0.9, b2=0.999, eps=1e-8):
    """NAdam's scaling (Dozat 2016) in optax's form: Adam's moments, with the first one
    looked ahead: ``m̂ = b1·m/(1 - b1ᵗ⁺¹) + (1-b1)·g/(1 - b1ᵗ)``; ``m̂/(sqrt(v/(1-b2ᵗ)) + eps)``.

    >>> import numpy as np, autodiff as ad
    >>> tx = ad.optim.scale_by_nadam(eps=0.0)          # first step: 0.9·0.1/0.19 + 1
    >>> np.round(tx.update(np.array([1.0]), tx.init(np.zeros(1)))[0], 6)
    array([1.473684])
    """
    def init(params):
        return AdamState(_count0(), zeros_like_tree(params), zeros_like_tree(params))

    def update(updates, state, params=None):
        count = state.count + 1
        t = count_as_float(count)
        mu = tree_map(lambda m, g: b1 * m + (1.0 - b1) * g, state.mu, updates)
        nu = tree_map(lambda v, g: b2 * v + (1.0 - b2) * g * g, state.nu, updates)
        c1, c1n, c2 = 1.0 - anp.power(b1, t), 1.0 - anp.power(b1, t + 1.0), 1.0 - anp.power(b2, t)
        out = tree_map(lambda m, v, g: (b1 * m / cast_like(c1n, m)
                                        + (1.0 - b1) * g / cast_like(c1, m))
                       / (anp.sqrt(v / cast_like(c2, v)) + eps), mu, nu, updates)
        return out, AdamState(count, mu, nu)
    return GradientTransformation(init, update)


def nadam(learning_rate=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    """NAdam (Adam with Nesterov momentum), in optax's form.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.nadam(0.1)
    >>> np.round(opt.update(np.array([3.0]), opt.init(np.zeros(1)))[0], 6)
    array([-0.147368])
    """
    check_hparams(learning_rate, eps=eps, betas=(b1, b2))
    return chain(scale_by_nadam(b1, b2, eps), scale_by_learning_rate(learning_rate))
