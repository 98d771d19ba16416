"""Cheap elementwise values read by a later loop nest are recomputed there, not stored
(``Planner.recompute_in``): the generated kernel allocates no array for them, and its
numbers equal the interpreter's."""
import re

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp


def standardize(x, g):
    m = anp.mean(x, axis=0)
    v = anp.mean((x - m) ** 2, axis=0)           # x - m: read by this nest and the next
    return anp.tanh((x - m) / anp.sqrt(v + 1e-5) * g)


def chained(x, c):
    d = (x - anp.max(x, axis=1, keepdims=True)) * 2.0    # two cheap steps over a reduction
    s = anp.sum(d * d, axis=1, keepdims=True)
    return anp.maximum(d, -1.0) / s + anp.astype(c, x.dtype)


def scalar_operand(x):
    t = anp.mean(x)                              # a rank-0 value the producer reads
    y = x * t - 1.0
    return anp.tanh(anp.sum(y, axis=0)) + y


def _big_arrays(source, shape):
    return len(re.findall(re.escape(f"np.empty({shape}"), source))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_recomputed_values_match_the_interpreter(dtype):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(37, 11)).astype(dtype)
    g = rng.normal(size=11).astype(dtype)
    c = rng.integers(-3, 3, size=(37, 1))
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
    for f, args in ((standardize, (x, g)), (chained, (x, c)), (scalar_operand, (x,))):
        want = ad.jit(f, backend="interpret")(*args)
        np.testing.assert_allclose(ad.jit(f)(*args), want, **tol)
        # and differentiated: the backward program has the same shape of reuse
        loss = lambda *a: anp.sum(f(*a) ** 2)
        np.testing.assert_allclose(ad.jit(ad.grad(loss))(*args),
                                   ad.jit(ad.grad(loss), backend="interpret")(*args), **tol)


def test_the_cheap_intermediate_is_not_stored():
    x, g = np.ones((64, 8)), np.ones(8)
    src = ad.jit(standardize).lower(x, g).source
    # only the result is an array of the input's shape; x - m is recomputed by the last nest
    assert _big_arrays(src, "(64, 8)") == 1, src
    assert "(A[i0, i1] - D[i1])" in src
    # an expensive value (exp) read by a later nest is still stored, not recomputed
    h = lambda x: anp.exp(x) / anp.sum(anp.exp(x), axis=0)
    assert _big_arrays(ad.jit(h).lower(x).source, "(64, 8)") == 2
