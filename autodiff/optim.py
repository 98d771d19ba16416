"""Optimizers, in two forms over one set of update rules.

Functional (optax's convention, jittable; params, grads and state are pytrees)::

    opt = ad.optim.adam(1e-3)
    state = opt.init(params)
    updates, state = opt.update(grads, state, params)
    params = ad.optim.apply_updates(params, updates)

Imperative (PyTorch's convention, on :class:`~autodiff.Variable` leaves)::

    opt = ad.optim.Adam([w, b], lr=1e-3)
    opt.zero_grad(); loss.backward(); opt.step()

The classes also work functionally when built without parameters:
``ad.optim.SGD(lr=0.1, momentum=0.9).init(params)``.

Update rules (PyTorch's, ``g`` the gradient, ``t`` the step count from 1):

* SGD: ``g += wd·p``; with momentum ``μ``: ``b = μ·b + g`` (``b₁ = g``), then
  ``g = g + μ·b`` (Nesterov) or ``g = b``; ``p -= lr·g``.
* Adam: ``g += wd·p`` (L2); ``m = β₁m + (1-β₁)g``; ``v = β₂v + (1-β₂)g²``;
  ``p -= lr·(m/(1-β₁ᵗ)) / (√(v/(1-β₂ᵗ)) + ε)``.
* AdamW: ``p -= lr·wd·p`` (decoupled), then Adam without the L2 term.

More optimizers, in optax's form (each a :func:`chain` of small transformations, with
optax's equations): ``rmsprop``, ``adagrad``, ``adadelta``, ``lion``, ``adamax``,
``nadam``; as PyTorch classes (PyTorch's equations and defaults): ``RMSprop``,
``Adagrad``, ``Adadelta``. Learning-rate schedules (``count -> lr``, jittable):
``constant_schedule``, ``linear_schedule`` (linear warmup), ``exponential_decay``,
``cosine_decay_schedule``, ``warmup_cosine_decay_schedule``,
``piecewise_constant_schedule``, ``join_schedules``. Building blocks: ``chain``,
``scale``, ``scale_by_schedule``, ``scale_by_learning_rate``, ``clip`` (by value),
``clip_by_global_norm``, ``add_decayed_weights`` (with a mask), ``trace`` (momentum),
``scale_by_rms`` / ``scale_by_rss`` / ``scale_by_adadelta`` / ``scale_by_lion`` / ... .

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> loss = lambda p: anp.sum((p["w"] - 3.0) ** 2)
>>> params = {"w": np.zeros(2)}
>>> opt = ad.optim.sgd(0.1, momentum=0.5)
>>> state = opt.init(params)
>>> for _ in range(100):
...     updates, state = opt.update(ad.grad(loss)(params), state, params)
...     params = ad.optim.apply_updates(params, updates)
>>> np.round(params["w"], 6)
array([3., 3.])
"""
from typing import Any, Callable, NamedTuple

import numpy as np

from . import numpy as anp
from .tree_util import tree_flatten, tree_map

__all__ = ["GradientTransformation", "SGDState", "AdamState", "sgd", "adam", "adamw",
           "apply_updates", "Optimizer", "SGD", "Adam", "AdamW",
           # optax's schedules and composable transformations
           "constant_schedule", "linear_schedule", "exponential_decay", "cosine_decay_schedule",
           "join_schedules", "warmup_cosine_decay_schedule", "piecewise_constant_schedule",
           "EmptyState", "ScaleByScheduleState", "ScaleByRmsState", "ScaleByRStdDevState",
           "ScaleByRssState", "ScaleByAdaDeltaState", "ScaleByLionState", "ScaleByAdamaxState",
           "TraceState", "identity", "scale", "scale_by_schedule", "scale_by_learning_rate",
           "clip", "clip_by_value", "global_norm", "clip_by_global_norm", "add_decayed_weights",
           "chain", "trace", "scale_by_rms", "scale_by_stddev", "scale_by_rss",
           "scale_by_adadelta", "scale_by_lion", "scale_by_adamax", "scale_by_nadam",
           "rmsprop", "adagrad", "adadelta", "lion", "adamax", "nadam",
           # PyTorch's classes
           "RMSprop", "Adagrad", "Adadelta"]


class GradientTransformation(NamedTuple):
    """A functional optimizer: ``init(params) -> state``;
    ``update(grads, state, params=None) -> (updates, state)``."""
    init: Callable
    update: Callable


class SGDState(NamedTuple):
    count: Any         # int32 scalar: steps taken
    momentum: Any      # momentum buffers (a pytree like params), or None without momentum


class AdamState(NamedTuple):
    count: Any
    mu: Any            # first-moment estimates
    nu: Any            # second-moment estimates


def _cast(x, like):
    """``x`` in ``like``'s dtype, so float32 parameters stay float32 (Python numbers
    are weak already; a 0-d float64 array is not, under numpy's promotion rules)."""
    return x if type(x) in (int, float) else anp.astype(x, like.dtype)   # np.float64 is strong


def _lr(learning_rate, count):
    return learning_rate(count) if callable(learning_rate) else learning_rate


def _zeros_like(tree):
    return tree_map(lambda p: anp.zeros_like(p), tree)


def _need_params(params, who):
    if params is None:
        raise ValueError(f"{who}: weight_decay needs the current params: "
                         f"call opt.update(grads, state, params)")


def _check_hparams(lr, momentum=0.0, weight_decay=0.0, eps=0.0, betas=(0.0, 0.0)):
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


def sgd(learning_rate, momentum=0.0, nesterov=False, weight_decay=0.0):
    """Stochastic gradient descent with optional (Nesterov) momentum and L2 weight decay.

    ``learning_rate`` may be a schedule ``count -> lr``.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.sgd(0.1)
    >>> updates, _ = opt.update({"w": np.array([1.0, -2.0])}, opt.init({"w": np.zeros(2)}))
    >>> updates["w"]
    array([-0.1,  0.2])
    """
    _check_hparams(learning_rate, momentum, weight_decay)
    if nesterov and momentum <= 0:
        raise ValueError("nesterov momentum needs momentum > 0")

    def init(params):
        return SGDState(np.zeros((), np.int32), _zeros_like(params) if momentum else None)

    def update(grads, state, params=None):
        if weight_decay:
            _need_params(params, "sgd")
            grads = tree_map(lambda g, p: g + weight_decay * p, grads, params)
        lr = _lr(learning_rate, state.count)
        buf = state.momentum
        if momentum:
            if buf is None:
                buf = _zeros_like(grads)
            buf = tree_map(lambda b, g: momentum * b + g, buf, grads)
            if nesterov:
                step = tree_map(lambda g, b: g + momentum * b, grads, buf)
            else:
                step = buf
        else:
            step = grads
        updates = tree_map(lambda s: -_cast(lr, s) * s, step)
        return updates, SGDState(state.count + 1, buf)

    return GradientTransformation(init, update)


def _adam(learning_rate, b1, b2, eps, weight_decay, decoupled, who):
    _check_hparams(learning_rate, weight_decay=weight_decay, eps=eps, betas=(b1, b2))

    def init(params):
        return AdamState(np.zeros((), np.int32), _zeros_like(params), _zeros_like(params))

    def update(grads, state, params=None):
        if weight_decay:
            _need_params(params, who)
        if weight_decay and not decoupled:
            grads = tree_map(lambda g, p: g + weight_decay * p, grads, params)
        count = state.count + 1
        lr = _lr(learning_rate, state.count)
        mu = tree_map(lambda m, g: b1 * m + (1.0 - b1) * g, state.mu, grads)
        nu = tree_map(lambda v, g: b2 * v + (1.0 - b2) * (g * g), state.nu, grads)
        t = anp.astype(count, np.float64)
        bc1 = 1.0 - anp.power(b1, t)
        bc2 = 1.0 - anp.power(b2, t)

        def one(m, v, p):
            step = _cast(lr, m) * (m / _cast(bc1, m)) / (anp.sqrt(v / _cast(bc2, v)) + eps)
            if weight_decay and decoupled:
                step = step + _cast(lr, m) * weight_decay * p
            return -step

        if weight_decay and decoupled:
            updates = tree_map(one, mu, nu, params)
        else:
            updates = tree_map(lambda m, v: one(m, v, None), mu, nu)
        return updates, AdamState(count, mu, nu)

    return GradientTransformation(init, update)


def adam(learning_rate=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0):
    """Adam (Kingma & Ba), with PyTorch's L2 ``weight_decay`` added to the gradient.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.adam(0.1)
    >>> updates, state = opt.update(np.array([2.0, -0.5]), opt.init(np.zeros(2)))
    >>> np.round(updates, 6)                     # the first step is -lr·sign(g)
    array([-0.1,  0.1])
    """
    return _adam(learning_rate, b1, b2, eps, weight_decay, False, "adam")


def adamw(learning_rate=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-2):
    """AdamW (Loshchilov & Hutter): Adam with decoupled weight decay ``p -= lr·wd·p``.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.adamw(0.1, weight_decay=0.5)
    >>> p = np.array([1.0])
    >>> updates, _ = opt.update(np.array([0.0]), opt.init(p), p)   # no gradient: pure decay
    >>> updates
    array([-0.05])
    """
    return _adam(learning_rate, b1, b2, eps, weight_decay, True, "adamw")


def apply_updates(params, updates):
    """``params + updates`` leafwise, keeping each parameter's dtype.

    >>> import numpy as np, autodiff as ad
    >>> ad.optim.apply_updates({"w": np.ones(2, np.float32)}, {"w": np.full(2, 0.5)})
    {'w': array([1.5, 1.5], dtype=float32)}
    """
    def one(p, u):
        if u is None:
            return p
        return anp.astype(p + u, p.dtype) if hasattr(p, "dtype") else p + u
    return tree_map(one, params, updates)


# ----------------------------------------------------------------------------
# Learning-rate schedules: count -> value, jittable (count may be traced)
# ----------------------------------------------------------------------------

def _f(count):
    return anp.astype(count, np.float64)


def constant_schedule(value):
    """``count -> value``.

    >>> import autodiff as ad
    >>> float(ad.optim.constant_schedule(0.1)(7))
    0.1
    """
    def schedule(count):
        return anp.full_like(_f(count), value)
    return schedule


def linear_schedule(init_value, end_value, transition_steps, transition_begin=0):
    """From ``init_value`` to ``end_value`` linearly over ``transition_steps`` steps that start
    at ``transition_begin``, constant before and after (optax's ``linear_schedule``; with
    ``init_value=0`` it is a linear warmup).

    >>> import autodiff as ad
    >>> warmup = ad.optim.linear_schedule(0.0, 1.0, transition_steps=4)
    >>> [float(warmup(t)) for t in (0, 1, 4, 9)]
    [0.0, 0.25, 1.0, 1.0]
    """
    if transition_steps <= 0:
        return constant_schedule(init_value)

    def schedule(count):
        t = anp.clip(_f(count) - transition_begin, 0.0, float(transition_steps))
        return (init_value - end_value) * (1.0 - t / transition_steps) + end_value
    return schedule


def exponential_decay(init_value, transition_steps, decay_rate, transition_begin=0,
                      staircase=False, end_value=None):
    """``init_value · decay_rate^((count - transition_begin) / transition_steps)`` (the
    exponent floored with ``staircase``), ``init_value`` before ``transition_begin``, and
    bounded by ``end_value`` when given (optax's ``exponential_decay``).

    >>> import autodiff as ad
    >>> s = ad.optim.exponential_decay(1.0, transition_steps=10, decay_rate=0.5)
    >>> [float(s(t)) for t in (0, 10, 20)]
    [1.0, 0.5, 0.25]
    """
    if transition_steps <= 0:
        raise ValueError(f"exponential_decay: transition_steps must be > 0, got "
                         f"{transition_steps}")
    if decay_rate == 0:
        raise ValueError("exponential_decay: decay_rate must not be 0")

    def schedule(count):
        p = anp.maximum(_f(count) - transition_begin, 0.0) / transition_steps
        if staircase:
            p = anp.floor(p)
        v = init_value * anp.power(float(decay_rate), p)
        if end_value is not None:
            v = anp.maximum(v, end_value) if decay_rate < 1 else anp.minimum(v, end_value)
        return v
    return schedule


def cosine_decay_schedule(init_value, decay_steps, alpha=0.0, exponent=1.0):
    """``init_value · ((1 - alpha)·c^exponent + alpha)`` with ``c = ½(1 + cos(π·t/T))``,
    ``t = min(count, decay_steps)`` (optax's ``cosine_decay_schedule``; SGDR without restarts).

    >>> import autodiff as ad
    >>> s = ad.optim.cosine_decay_schedule(1.0, decay_steps=10)
    >>> [round(float(s(t)), 6) for t in (0, 5, 10, 20)]
    [1.0, 0.5, 0.0, 0.0]
    """
    if decay_steps <= 0:
        raise ValueError(f"cosine_decay_schedule: decay_steps must be > 0, got {decay_steps}")

    def schedule(count):
        t = anp.minimum(_f(count), float(decay_steps))
        c = 0.5 * (1.0 + anp.cos(np.pi * t / decay_steps))
        return init_value * ((1.0 - alpha) * c ** exponent + alpha)
    return schedule


def join_schedules(schedules, boundaries):
    """``schedules[i](count - boundaries[i-1])`` between consecutive ``boundaries`` (optax's
    ``join_schedules``: each later schedule restarts its own count at its boundary).

    >>> import autodiff as ad
    >>> s = ad.optim.join_schedules([ad.optim.constant_schedule(1.0),
    ...                              ad.optim.constant_schedule(0.1)], [3])
    >>> [float(s(t)) for t in (0, 2, 3, 5)]
    [1.0, 1.0, 0.1, 0.1]
    """
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(f"join_schedules: {len(schedules)} schedules need "
                         f"{len(schedules) - 1} boundaries, got {len(boundaries)}")

    def schedule(count):
        out = schedules[0](count)
        for s, b in zip(schedules[1:], boundaries):
            out = anp.where(_f(count) < b, out, s(count - b))
        return out
    return schedule


def warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps, decay_steps,
                                 end_value=0.0, exponent=1.0):
    """Linear warmup from ``init_value`` to ``peak_value`` over ``warmup_steps``, then cosine
    decay to ``end_value`` at ``decay_steps`` (counted from 0, warmup included), as optax's
    ``warmup_cosine_decay_schedule``.

    >>> import autodiff as ad
    >>> s = ad.optim.warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=2, decay_steps=6)
    >>> [round(float(s(t)), 6) for t in (0, 1, 2, 4, 6, 9)]
    [0.0, 0.5, 1.0, 0.5, 0.0, 0.0]
    """
    alpha = 0.0 if peak_value == 0 else end_value / peak_value
    return join_schedules([linear_schedule(init_value, peak_value, warmup_steps),
                           cosine_decay_schedule(peak_value, max(decay_steps - warmup_steps, 1),
                                                 alpha, exponent)], [warmup_steps])


def piecewise_constant_schedule(init_value, boundaries_and_scales=None):
    """``init_value`` times every ``scale`` whose ``boundary`` the count has reached
    (optax's ``piecewise_constant_schedule``; boundaries are step counts).

    >>> import autodiff as ad
    >>> s = ad.optim.piecewise_constant_schedule(1.0, {3: 0.1, 6: 0.5})
    >>> [round(float(s(t)), 6) for t in (0, 3, 5, 6, 100)]
    [1.0, 0.1, 0.1, 0.05, 0.05]
    """
    items = sorted((boundaries_and_scales or {}).items())
    for b, s in items:
        if b < 0:
            raise ValueError(f"piecewise_constant_schedule: boundary {b} must be >= 0")

    def schedule(count):
        v = anp.full_like(_f(count), init_value)
        for b, s in items:
            v = anp.where(_f(count) < b, v, v * s)
        return v
    return schedule


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
    return _stateless(lambda u, p: tree_map(lambda g: _cast(step_size, g) * g, u))


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
        return tree_map(lambda g: _cast(s, g) * g, updates), ScaleByScheduleState(state.count + 1)
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
        return tree_map(lambda g: _cast(factor, g) * g, updates)
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
        _need_params(params, "add_decayed_weights")
        if mask is None:
            return tree_map(lambda g, p: g + _cast(weight_decay, g) * p, updates, params)
        m = _mask_tree(mask, params)
        return tree_map(lambda g, p, on: g + _cast(weight_decay, g) * p if on else g,
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
        return TraceState(_zeros_like(params))

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
        return ScaleByRStdDevState(_zeros_like(params),
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
    _check_hparams(learning_rate, momentum or 0.0, eps=eps, betas=(decay,))
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
    _check_hparams(learning_rate, eps=eps)
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
        return ScaleByAdaDeltaState(_zeros_like(params), _zeros_like(params))

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
    _check_hparams(learning_rate, weight_decay=weight_decay, eps=eps, betas=(rho,))
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
        return ScaleByLionState(_count0(), _zeros_like(params))

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
    _check_hparams(learning_rate, weight_decay=weight_decay, betas=(b1, b2))
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
        return ScaleByAdamaxState(_count0(), _zeros_like(params), _zeros_like(params))

    def update(updates, state, params=None):
        count = state.count + 1
        mu = tree_map(lambda m, g: b1 * m + (1.0 - b1) * g, state.mu, updates)
        nu = tree_map(lambda u, g: anp.maximum(b2 * u, anp.abs(g) + eps), state.nu, updates)
        bc = 1.0 - anp.power(b1, _f(count))
        out = tree_map(lambda m, u: (m / _cast(bc, m)) / u, mu, nu)
        return out, ScaleByAdamaxState(count, mu, nu)
    return GradientTransformation(init, update)


def adamax(learning_rate=2e-3, b1=0.9, b2=0.999, eps=1e-8):
    """Adamax (Adam with the infinity norm), in optax's form.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.adamax(0.1)
    >>> np.round(opt.update(np.array([2.0]), opt.init(np.zeros(1)))[0], 6)
    array([-0.1])
    """
    _check_hparams(learning_rate, eps=eps, betas=(b1, b2))
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
        return AdamState(_count0(), _zeros_like(params), _zeros_like(params))

    def update(updates, state, params=None):
        count = state.count + 1
        t = _f(count)
        mu = tree_map(lambda m, g: b1 * m + (1.0 - b1) * g, state.mu, updates)
        nu = tree_map(lambda v, g: b2 * v + (1.0 - b2) * g * g, state.nu, updates)
        c1, c1n, c2 = 1.0 - anp.power(b1, t), 1.0 - anp.power(b1, t + 1.0), 1.0 - anp.power(b2, t)
        out = tree_map(lambda m, v, g: (b1 * m / _cast(c1n, m) + (1.0 - b1) * g / _cast(c1, m))
                       / (anp.sqrt(v / _cast(c2, v)) + eps), mu, nu, updates)
        return out, AdamState(count, mu, nu)
    return GradientTransformation(init, update)


def nadam(learning_rate=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    """NAdam (Adam with Nesterov momentum), in optax's form.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.nadam(0.1)
    >>> np.round(opt.update(np.array([3.0]), opt.init(np.zeros(1)))[0], 6)
    array([-0.147368])
    """
    _check_hparams(learning_rate, eps=eps, betas=(b1, b2))
    return chain(scale_by_nadam(b1, b2, eps), scale_by_learning_rate(learning_rate))


# ----------------------------------------------------------------------------
# Imperative optimizers over Variables
# ----------------------------------------------------------------------------

class Optimizer:
    """Base of the imperative optimizers: parameter groups, ``zero_grad``, ``step``.

    ``params``: Variables (a list, a dict of them, or a pytree), or a list of
    parameter groups ``{"params": [...], "lr": ..., ...}`` whose entries override
    the defaults. Hyperparameters in ``opt.param_groups`` may be changed between
    steps (a learning-rate schedule). Without ``params`` the object is a functional
    optimizer: ``init`` / ``update`` as in :class:`GradientTransformation`.
    """

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        _check_hparams(defaults["lr"], defaults.get("momentum", 0.0),
                       defaults.get("weight_decay", 0.0), defaults.get("eps", 0.0),
                       defaults.get("betas", (0.0, 0.0)))
        self.param_groups = []
        self.state = {}             # id(Variable) -> functional optimizer state
        if params is None:
            return
        groups = _param_groups(params)
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group):
        """Add a parameter group: a dict with ``"params"`` (Variables) and per-group hyperparameters
        overriding the defaults."""
        from .tape import Variable
        group = dict(group)
        ps = group["params"]
        ps = [ps] if isinstance(ps, Variable) else list(ps)
        for p in ps:
            if not isinstance(p, Variable):
                raise TypeError(f"{type(self).__name__} optimizes Variables, got "
                                f"{type(p).__name__}; for arrays use the functional form "
                                f"(init/update)")
            if not p.is_leaf or not p.requires_grad:
                raise ValueError(f"{type(self).__name__} can only optimize leaf Variables "
                                 f"that require grad")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in ps):
            raise ValueError("a parameter appears in more than one parameter group")
        group["params"] = ps
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Clear every parameter's ``.grad`` (to ``None``, or zeros)."""
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                else:
                    p.zero_grad()

    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            from .tape import enable_grad
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            tx = self._transform(group)
            for p in group["params"]:
                if p.grad is None:
                    continue
                value = p.numpy()
                st = self.state.get(id(p))
                if st is None or st[0] is not p:
                    st = (p, tx.init(value))
                updates, new_state = tx.update(np.asarray(p.grad, value.dtype), st[1], value)
                self.state[id(p)] = (p, new_state)
                p._set_value(np.asarray(value + updates, value.dtype))
        return loss

    # functional use of the same object
    def init(self, params):
        """The functional form: the optimizer state for the pytree ``params``, with this optimizer's
        default hyperparameters."""
        return self._transform(self.defaults).init(params)

    def update(self, grads, state, params=None):
        """The functional form: ``(updates, new_state)`` for ``grads``; add the updates with
        ``ad.optim.apply_updates``."""
        return self._transform(self.defaults).update(grads, state, params)

    def _transform(self, hp):
        raise NotImplementedError

    def __repr__(self):
        hp = ", ".join(f"{k}={v}" for k, v in self.defaults.items())
        n = sum(len(g["params"]) for g in self.param_groups)
        return f"{type(self).__name__}({n} parameters, {hp})"


def _param_groups(params):
    from .tape import Variable
    if isinstance(params, Variable):
        return [{"params": [params]}]
    if isinstance(params, dict) and "params" not in params:
        params = list(params.values())
    if isinstance(params, dict):
        return [params]
    params = list(params)
    if params and all(isinstance(g, dict) for g in params):
        return params
    leaves, _ = tree_flatten(params)
    return [{"params": leaves}]


def _lr_from(params, lr):
    """``SGD(0.1)`` (functional, lr first) and ``SGD(params, lr=0.1)`` both work."""
    if isinstance(params, (int, float)) and not isinstance(params, bool):
        return None, float(params)
    return params, lr


class SGD(Optimizer):
    """SGD with momentum, Nesterov momentum and weight decay, on Variables.

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0, 2.0]))
    >>> opt = ad.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w                                          # w - 0.1·2w
    Variable([0.8, 1.6], requires_grad=True)
    """

    def __init__(self, params=None, lr=1e-3, momentum=0.0, nesterov=False, weight_decay=0.0):
        params, lr = _lr_from(params, lr)
        if nesterov and momentum <= 0:
            raise ValueError("nesterov momentum needs momentum > 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, nesterov=nesterov,
                                      weight_decay=weight_decay))

    def _transform(self, hp):
        return sgd(hp["lr"], hp["momentum"], hp["nesterov"], hp["weight_decay"])


class Adam(Optimizer):
    """Adam on Variables (``weight_decay`` is L2, added to the gradient, as in PyTorch).

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0, -2.0]))
    >>> opt = ad.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()                                  # first step: -lr·sign(grad)
    >>> np.round(w.numpy(), 6)
    array([ 0.9, -1.9])
    """

    def __init__(self, params=None, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        params, lr = _lr_from(params, lr)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def _transform(self, hp):
        b1, b2 = hp["betas"]
        return adam(hp["lr"], b1, b2, hp["eps"], hp["weight_decay"])


class AdamW(Optimizer):
    """AdamW on Variables: decoupled weight decay (default 0.01, as in PyTorch).

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([2.0]))
    >>> opt = ad.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = np.zeros(1)                        # no gradient: only the decay acts
    >>> opt.step()
    >>> w.numpy()                                   # 2 - 0.1·0.5·2
    array([1.9])
    """

    def __init__(self, params=None, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        params, lr = _lr_from(params, lr)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def _transform(self, hp):
        b1, b2 = hp["betas"]
        return adamw(hp["lr"], b1, b2, hp["eps"], hp["weight_decay"])


class RMSprop(Optimizer):
    """RMSprop on Variables, PyTorch's equations: ``g += wd·p``; ``v = α·v + (1-α)·g²``
    (centered: ``v - ḡ²``); ``u = g/(sqrt(v) + eps)``; with momentum ``b = μ·b + u``;
    ``p -= lr·b`` (or ``lr·u``).

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0]))
    >>> opt = ad.optim.RMSprop([w], lr=0.01, alpha=0.75, eps=0.0)
    >>> w.grad = np.array([2.0]); opt.step()
    >>> np.round(w.numpy(), 6)                      # 1 - 0.01·2/sqrt(0.25·4)
    array([0.98])
    """

    def __init__(self, params=None, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0,
                 momentum=0.0, centered=False):
        params, lr = _lr_from(params, lr)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"invalid alpha {alpha}: it must be in [0, 1]")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered))

    def _transform(self, hp):
        parts = [add_decayed_weights(hp["weight_decay"])] if hp["weight_decay"] else []
        scaler = scale_by_stddev if hp["centered"] else scale_by_rms
        parts.append(scaler(hp["alpha"], hp["eps"], 0.0, eps_in_sqrt=False))
        if hp["momentum"]:
            parts.append(trace(hp["momentum"]))
        return chain(*parts, scale_by_learning_rate(hp["lr"]))


class Adagrad(Optimizer):
    """Adagrad on Variables, PyTorch's equations: ``g += wd·p``;
    ``lrₜ = lr/(1 + (t-1)·lr_decay)``; ``s += g²``; ``p -= lrₜ·g/(sqrt(s) + eps)``.

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0]))
    >>> opt = ad.optim.Adagrad([w], lr=0.5, eps=0.0)
    >>> w.grad = np.array([3.0]); opt.step()
    >>> w.numpy()                                   # 1 - 0.5·3/3
    array([0.5])
    """

    def __init__(self, params=None, lr=1e-2, lr_decay=0.0, weight_decay=0.0,
                 initial_accumulator_value=0.0, eps=1e-10):
        params, lr = _lr_from(params, lr)
        if lr_decay < 0 or initial_accumulator_value < 0:
            raise ValueError("invalid lr_decay / initial_accumulator_value: they must be >= 0")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps))

    def _transform(self, hp):
        lr, decay = hp["lr"], hp["lr_decay"]
        parts = [add_decayed_weights(hp["weight_decay"])] if hp["weight_decay"] else []
        rate = (lambda count: lr / (1.0 + _f(count) * decay)) if decay and not callable(lr) else lr
        return chain(*parts, scale_by_rss(hp["initial_accumulator_value"], hp["eps"],
                                          eps_in_sqrt=False),
                     scale_by_learning_rate(rate))


class Adadelta(Optimizer):
    """Adadelta on Variables (PyTorch's defaults, ``lr=1.0``; the equations of
    :func:`adadelta`).

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0]))
    >>> opt = ad.optim.Adadelta([w], rho=0.5, eps=1e-2)
    >>> w.grad = np.array([1.0]); opt.step()
    >>> np.round(w.numpy(), 6)                      # 1 - sqrt(0.01/0.51)
    array([0.859972])
    """

    def __init__(self, params=None, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0):
        params, lr = _lr_from(params, lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"invalid rho {rho}: it must be in [0, 1]")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay))

    def _transform(self, hp):
        return adadelta(hp["lr"], hp["rho"], hp["eps"], hp["weight_decay"])
