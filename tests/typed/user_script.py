"""A user's script with type annotations: ``mypy --strict`` accepts it (tests/test_types.py).

The transforms keep the parameters of the function they transform, so mypy checks the
calls of ``grad(loss)``, ``vmap(...)`` and ``jit(...)`` against ``loss``'s signature, and
knows what ``jit`` returns (a ``JitFunction`` with ``lower``, ``cache_info``,
``clear_cache``).
"""
from typing import Any

import numpy as np
from numpy.typing import NDArray

import autodiff as ad
import autodiff.numpy as anp

Array = NDArray[np.float64]


def loss(w: Array, x: Array, y: Array) -> Any:
    return anp.mean((anp.tanh(x @ w) - y) ** 2)


def fit(w: Array, x: Array, y: Array, steps: int, lr: float) -> Array:
    step = ad.jit(ad.value_and_grad(loss))
    for _ in range(steps):
        value, g = step(w, x, y)
        w = w - lr * np.asarray(g)
    hits: int = step.cache_info().hits
    source: str = step.lower(w, x, y).as_text()
    assert hits >= 0 and source
    step.clear_cache()
    return w


def per_example_gradients(w: Array, x: Array, y: Array) -> Any:
    return ad.vmap(ad.grad(loss), in_axes=(None, 0, 0))(w, x, y)


def curvature(w: Array, x: Array, y: Array) -> Any:
    h = ad.hessian(loss)(w, x, y)
    out, tangent = ad.jvp(lambda v: loss(v, x, y), (w,), (np.ones_like(w),))
    value, pullback = ad.vjp(lambda v: loss(v, x, y), w)
    return h, out, tangent, value, pullback


@ad.jit
def scaled(x: Array, scale: float) -> Any:
    return anp.sum(x * scale)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal(16)
    w = fit(np.zeros(3), x, y, steps=5, lr=0.1)
    print(per_example_gradients(w, x, y).shape, float(scaled(x, 2.0)))
    print(ad.make_jaxpr(loss)(w, x, y))
