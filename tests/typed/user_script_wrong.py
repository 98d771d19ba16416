"""The same user, with mistakes that ``mypy --strict`` must report (tests/test_types.py
expects each error on the line that says so)."""
from typing import Any

import numpy as np
from numpy.typing import NDArray

import autodiff as ad
import autodiff.numpy as anp

Array = NDArray[np.float64]


def loss(w: Array, x: Array, y: Array) -> Any:
    return anp.mean((anp.tanh(x @ w) - y) ** 2)


def mistakes(w: Array, x: Array, y: Array) -> None:
    step = ad.jit(ad.value_and_grad(loss))
    step(w, x)                                              # expect: call-arg
    step.cache_info().hitz                                  # expect: attr-defined
    text: int = step.lower(w, x, y).as_text()               # expect: assignment
    ad.grad(loss)(w, x, "y")                                # expect: arg-type
    ad.jit(loss, static_argnums="0")                        # expect: arg-type
    ad.vmap(loss)(w, x, y, 1.0)                             # expect: call-arg
    print(text)
