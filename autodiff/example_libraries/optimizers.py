"""JAX's ``example_libraries.optimizers``: optimizers as ``(init, update, get_params)``.

An optimizer is a triple of pure functions over any pytree of parameters::

    opt_init, opt_update, get_params = optimizers.adam(step_size=1e-3)
    opt_state = opt_init(params)
    opt_state = opt_update(i, grads, opt_state)      # i: the step number, from 0
    params = get_params(opt_state)

``opt_state`` is a pytree, so ``opt_update`` can be ``jit``-ted and the state passed
through ``jit``, ``vmap`` and ``lax.scan``. ``step_size`` is a number or a schedule
``i -> step size`` (``constant``, ``exponential_decay``, ``inverse_time_decay``,
``polynomial_decay``, ``piecewise_constant``).

Update rules (``g`` the gradient, ``η = step_size(i)``):

* ``sgd``: ``x -= η g``
* ``momentum(η, mass)``: ``v = mass·v + g``; ``x -= η v``
* ``nesterov(η, mass)``: ``v = mass·v + g``; ``x -= η (mass·v + g)``
* ``adagrad(η, momentum=0.9)``: ``s += g²``; ``m = (1-μ)·g/√s + μ·m`` (``g/√s = 0`` where
  ``s = 0``); ``x -= η m``
* ``rmsprop(η, gamma=0.9, eps=1e-8)``: ``r = γ r + (1-γ) g²``; ``x -= η g/√(r + eps)``
* ``rmsprop_momentum(η, gamma, eps, momentum=0.9)``: as rmsprop, with
  ``m = μ m + η g/√(r + eps)``; ``x -= m``
* ``adam(η, b1=0.9, b2=0.999, eps=1e-8)``: ``m = (1-b1) g + b1 m``, ``v = (1-b2) g² + b2 v``;
  ``x -= η m̂/(√v̂ + eps)``, ``m̂ = m/(1-b1^(i+1))``, ``v̂ = v/(1-b2^(i+1))``
* ``adamax(η, b1, b2, eps)``: ``m = (1-b1) g + b1 m``, ``u = max(b2 u, |g|)``;
  ``x -= η/(1-b1^(i+1)) · m/(u + eps)``
* ``sm3(η, momentum=0.9)``: per-axis accumulators (Anil et al. 2019); memory one vector
  per axis instead of one array per parameter.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.example_libraries import optimizers
>>> loss = lambda p: anp.sum((p["w"] - 3.0) ** 2)
>>> opt_init, opt_update, get_params = optimizers.momentum(0.1, mass=0.5)
>>> state = opt_init({"w": np.zeros(2)})
>>> step = ad.jit(lambda i, s: opt_update(i, ad.grad(loss)(get_params(s)), s))
>>> for i in range(100):
...     state = step(i, state)
>>> np.round(get_params(state)["w"], 6)
array([3., 3.])
"""
import functools
from collections import namedtuple

import numpy as np

from .. import numpy as anp
from ..tree_util import register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = ["Optimizer", "OptimizerState", "optimizer", "sgd", "momentum", "nesterov", "adagrad",
           "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3", "constant",
           "exponential_decay", "inverse_time_decay", "polynomial_decay", "piecewise_constant",
           "make_schedule", "l2_norm", "clip_grads", "JoinPoint", "unpack_optimizer_state",
           "pack_optimizer_state"]

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


class OptimizerState(namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])):
    """The state of an optimizer over a pytree: one flat state per parameter leaf.
    A pytree whose leaves are the state arrays (the tree definitions are static)."""


register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))


def optimizer(opt_maker):
    """Lift an optimizer defined on single arrays to pytrees of arrays.

    ``opt_maker(*args) -> (init(x) -> state, update(i, g, state) -> state,
    get_params(state) -> x)``; the decorated function returns an :data:`Optimizer`
    whose functions take and return pytrees.
    """
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            flat_states, subtrees = _unzip(tree_flatten(init(x0)) for x0 in x0_flat)
            return OptimizerState(flat_states, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            flat_states, tree, subtrees = opt_state
            grad_flat, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(f"optimizer update: the gradient's structure {tree2} differs "
                                f"from the parameters' {tree}")
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, flat_states)]
            new = [update(i, g, s) for g, s in zip(grad_flat, states)]
            new_flat, new_subtrees = _unzip(tree_flatten(s) for s in new)
            for old, sub in zip(subtrees, new_subtrees):
                if old != sub:
                    raise TypeError(f"optimizer update changed the state's structure from "
                                    f"{old} to {sub}")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            flat_states, tree, subtrees = opt_state
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, flat_states)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _unzip(pairs):
    pairs = list(pairs)
    return [list(p[0]) for p in pairs], tuple(p[1] for p in pairs)   # treedefs: hashable


def _zeros(x):
    return anp.zeros_like(x)


# ----------------------------------------------------------------------------
# optimizers

@optimizer
def sgd(step_size):
    """Gradient descent: ``x -= step_size(i)·g``."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0,
            lambda i, g, x: x - step_size(i) * g,
            lambda x: x)


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum: ``v = mass·v + g``; ``x -= step_size(i)·v``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * v, v
    return (lambda x0: (x0, _zeros(x0)), update, lambda state: state[0])


@optimizer
def nesterov(step_size, mass):
    """Nesterov's accelerated gradient: ``x -= step_size(i)·(mass·v + g)``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * (mass * v + g), v
    return (lambda x0: (x0, _zeros(x0)), update, lambda state: state[0])


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the normalized gradient."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + g * g
        safe = anp.where(g_sq > 0, g_sq, 1.0)
        g_norm = anp.where(g_sq > 0, g / anp.sqrt(safe), 0.0)
        m = (1.0 - momentum) * g_norm + momentum * m
        return x - step_size(i) * m, g_sq, m
    return (lambda x0: (x0, _zeros(x0), _zeros(x0)), update, lambda state: state[0])


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp (Tieleman & Hinton 2012): ``x -= step_size(i)·g/√(r + eps)``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = avg_sq * gamma + g * g * (1.0 - gamma)
        return x - step_size(i) * g / anp.sqrt(avg_sq + eps), avg_sq
    return (lambda x0: (x0, _zeros(x0)), update, lambda state: state[0])


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + g * g * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / anp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom
    return (lambda x0: (x0, _zeros(x0), _zeros(x0)), update, lambda state: state[0])


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba 2014) with bias-corrected moments."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g * g + b2 * v
        mhat = m / (1 - anp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - anp.asarray(b2, v.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (anp.sqrt(vhat) + eps), m, v
    return (lambda x0: (x0, _zeros(x0), _zeros(x0)), update, lambda state: state[0])


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (Kingma & Ba 2014, §7): Adam with the infinity norm."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = anp.maximum(b2 * u, anp.abs(g))
        lr = step_size(i) / (1 - anp.asarray(b1, m.dtype) ** (i + 1))
        return x - lr * m / (u + eps), m, u
    return (lambda x0: (x0, _zeros(x0), _zeros(x0)), update, lambda state: state[0])


class _Static:
    """A pytree node with no children: static data (a shape) inside an optimizer state."""
    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, _Static) and other.value == self.value

    def __hash__(self):
        return hash(self.value)


register_pytree_node(_Static, lambda s: ((), s.value), lambda value, _: _Static(value))


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil, Gupta, Koren & Singer 2019): for a rank-r parameter, r accumulator
    vectors; the effective accumulator is ``min`` over axes of them, plus ``g²``."""
    step_size = make_schedule(step_size)

    def along(ndim, v, axis):
        shape = [1] * ndim
        shape[axis] = -1
        return anp.reshape(v, shape)

    def init(x0):
        shape = tuple(np.shape(x0))
        x0 = anp.atleast_1d(x0)
        return x0, _zeros(x0), [anp.zeros(s, dtype=x0.dtype) for s in x0.shape], _Static(shape)

    def update(i, g, state):
        x, m, vs, shape = state
        g = anp.reshape(g, x.shape)
        acc = None
        for ax, v in enumerate(vs):
            b = along(x.ndim, v, ax)
            acc = b if acc is None else anp.minimum(acc, b)
        acc = acc + g * g
        inv = anp.where(acc > 0, 1.0 / anp.sqrt(anp.where(acc > 0, acc, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        x = x - step_size(i) * m
        vs = [anp.max(acc, axis=tuple(a for a in range(x.ndim) if a != ax)) if x.ndim > 1
              else acc for ax in range(x.ndim)]
        return x, m, vs, shape

    return init, update, lambda state: anp.reshape(state[0], state[3].value)


# ----------------------------------------------------------------------------
# learning-rate schedules: functions of the step number i (concrete or traced)

def constant(step_size):
    """``i -> step_size``."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """``i -> step_size · decay_rate^(i / decay_steps)``."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``i -> step_size / (1 + decay_rate · i / decay_steps)`` (floored with ``staircase``)."""
    def schedule(i):
        r = anp.floor(i / decay_steps) if staircase else i / decay_steps
        return step_size / (1 + decay_rate * r)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` as ``(1 - i/n)^power``,
    then constant."""
    def schedule(i):
        frac = anp.minimum(i, decay_steps) / decay_steps
        return (1 - frac) ** power * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """``values[k]`` for ``boundaries[k-1] < i <= boundaries[k]``; one more value than
    boundaries."""
    boundaries = np.asarray(boundaries)
    values = np.asarray(values)
    if not values.shape[0] == boundaries.shape[0] + 1:
        raise ValueError("piecewise_constant: values must have one more entry than "
                         f"boundaries, got {values.shape[0]} values and "
                         f"{boundaries.shape[0]} boundaries")

    def schedule(i):
        return anp.take(values, anp.sum(anp.greater(i, boundaries)))
    return schedule


def make_schedule(scalar_or_schedule):
    """A schedule from a number (constant) or a schedule (returned as is)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"step size must be a number or a schedule, got {type(scalar_or_schedule)}")


# ----------------------------------------------------------------------------
# utilities

def l2_norm(tree):
    """The Euclidean norm of all the leaves of ``tree`` together."""
    leaves = tree_leaves(tree)
    return anp.sqrt(sum(anp.sum(anp.asarray(x) * anp.asarray(x)) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale ``grad_tree`` down to global norm ``max_norm`` if it is longer."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: anp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where a parameter's own state begins in an unpacked optimizer state."""
    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree

    def __repr__(self):
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state):
    """The state as a pytree shaped like the parameters, each leaf a :class:`JoinPoint`
    around that parameter's state (for pickling; see :func:`pack_optimizer_state`)."""
    flat_states, tree, subtrees = opt_state
    states = [JoinPoint(tree_unflatten(s, leaves)) for s, leaves in zip(subtrees, flat_states)]
    return tree_unflatten(tree, states)


def pack_optimizer_state(marked_pytree):
    """Inverse of :func:`unpack_optimizer_state`."""
    joins, tree = tree_flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    flat_states, subtrees = _unzip(tree_flatten(j.subtree) for j in joins)
    return OptimizerState(flat_states, tree, subtrees)
