"""autograd's ``misc.optimizers``: ``sgd``, ``rmsprop``, ``adam`` (and ``adagrad``).

Each has autograd's signature ``opt(grad, x0, callback=None, num_iters=..., step_size=...,
...)``: ``grad(x, i)`` returns the gradient at the current parameters and iteration
``i``; ``callback(x, i, g)`` is called every iteration before the update, with ``x``
and ``g`` in the structure of ``x0``. ``progress=True`` shows a tqdm bar of
``num_iters`` steps (the ``progress`` extra), ``progress=bar`` advances a tqdm bar of
yours, and a callable is called as ``progress(i, x)`` every iteration
(:func:`autodiff.progress.reporter`). ``x0`` may be any pytree: the optimizer runs on its
flattened vector (:func:`autodiff.misc.flatten.flatten`) and returns the same
structure. These loops run eagerly in Python, as autograd's do; for a jittable,
functional optimizer use :mod:`autodiff.example_libraries.optimizers` or
:mod:`autodiff.optim`.

Update rules (``g`` the gradient at iteration ``i``, counted from 0):

* ``sgd``: ``v = mass·v - (1-mass)·g``; ``x = x + step_size·v``.
* ``rmsprop``: ``r = γ·r + (1-γ)·g²`` (``r`` starts at ones); ``x = x - step_size·g/(√r + eps)``.
* ``adam``: ``m = (1-b1)·g + b1·m``; ``v = (1-b2)·g² + b2·v``;
  ``x = x - step_size·m̂/(√v̂ + eps)`` with ``m̂ = m/(1-b1^(i+1))``, ``v̂ = v/(1-b2^(i+1))``.
* ``adagrad``: ``s = s + g²``; ``x = x - step_size·g/(√s + eps)``.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.misc.optimizers import adam
>>> loss = lambda p, i: anp.sum((p["w"] - 3.0) ** 2) + (p["b"] + 1.0) ** 2
>>> p = adam(ad.grad(loss), {"w": np.zeros(2), "b": 0.0}, num_iters=500, step_size=0.1)
>>> np.round(p["w"], 4), round(float(p["b"]), 4)
(array([3., 3.]), -1.0)
"""
import functools
import inspect

import numpy as np

from ..progress import reporter
from .flatten import flatten

__all__ = ["unflatten_optimizer", "sgd", "rmsprop", "adam", "adagrad"]


def unflatten_optimizer(optimize):
    """Lift ``optimize(grad, x, callback, ...)`` on flat vectors to any pytree ``x``, and
    give it the ``progress=`` option (see the module docstring)."""
    signature = inspect.signature(optimize)

    @functools.wraps(optimize)
    def _optimize(grad, x0, callback=None, *args, progress=None, **kwargs):
        flat_x0, unflatten = flatten(x0)
        num_iters = signature.bind(None, None, None, *args, **kwargs)
        num_iters.apply_defaults()
        report = reporter(progress, total=num_iters.arguments["num_iters"],
                          desc=optimize.__name__)

        def flat_grad(x, i):
            return np.asarray(flatten(grad(unflatten(x), i))[0], dtype=flat_x0.dtype)
        if callback is None and progress in (None, False):
            flat_callback = None
        else:
            def flat_callback(x, i, g):
                if callback is not None:
                    callback(unflatten(x), i, unflatten(g))
                report.update(i, unflatten(x))
        with report:
            return unflatten(optimize(flat_grad, np.asarray(flat_x0), flat_callback,
                                      *args, **kwargs))
    return _optimize


@unflatten_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Stochastic gradient descent with momentum ``mass`` (autograd's exponential form)."""
    velocity = np.zeros_like(x)
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=1e-8):
    """Root-mean-square propagation; the running mean of ``g²`` starts at ones."""
    avg_sq_grad = np.ones_like(x)
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g ** 2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(avg_sq_grad) + eps)
    return x


@unflatten_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba, 2014) with bias-corrected moment estimates."""
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g ** 2 + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return x


@unflatten_optimizer
def adagrad(grad, x, callback=None, num_iters=100, step_size=0.1, eps=1e-8):
    """Adagrad: steps scaled by the root of the summed squared gradients."""
    sum_sq = np.zeros_like(x)
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        sum_sq = sum_sq + g ** 2
        x = x - step_size * g / (np.sqrt(sum_sq) + eps)
    return x
