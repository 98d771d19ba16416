"""Long kernels are split into chunk functions (backends/numba_cpu.py, ``CHUNK_LINES``):
Numba's compile time of one function grows much faster than its length, so a kernel body
longer than the budget becomes consecutive functions that pass the live values. These
tests shrink the budget so that ordinary programs split into many chunks, and check the
compiled results against the numpy interpreter (values, scalars, in-place updates of
arrays made in an earlier chunk, loop counters, run-time sizes, parallel loops)."""
import ast

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.backends import numba_cpu
from jit_util import assert_compiled


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(numba_cpu, "CHUNK_LINES", 12)


def _euler_net(y0, w1, w2):
    y = y0
    for _ in range(6):
        y = y + 0.05 * anp.tanh(anp.tanh(y @ w1.T) @ w2.T)
    return anp.sum(y ** 2), y[0]


def _mixed(x, m):
    a = anp.sort(x) * 2.0
    s = anp.sum(a) + anp.max(m)            # scalars across chunks
    c = anp.cumsum(m, axis=0)
    d = anp.where(c > s / 10, c, -c)
    e = anp.linalg.solve(m @ m.T + 4.0 * anp.eye(m.shape[0]), d[:, 0])
    f = anp.concatenate([a, e, anp.ravel(d)])
    return anp.exp(-f * f).mean(), f, s


CASES = {
    "grad_euler": (lambda: ad.grad(lambda *a: _euler_net(*a)[0], argnums=(1, 2)),
                   lambda r: (r.standard_normal(8), 0.3 * r.standard_normal((16, 8)),
                              0.3 * r.standard_normal((8, 16)))),
    "value_and_outputs": (lambda: _euler_net,
                          lambda r: (r.standard_normal(8), 0.3 * r.standard_normal((16, 8)),
                                     0.3 * r.standard_normal((8, 16)))),
    "mixed": (lambda: _mixed, lambda r: (r.standard_normal(7), r.standard_normal((5, 3)))),
    "grad_mixed": (lambda: ad.grad(lambda x, m: _mixed(x, m)[0], argnums=(0, 1)),
                   lambda r: (r.standard_normal(7), r.standard_normal((5, 3)))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_split_kernels_match_the_interpreter(small_chunks, name):
    make, args = CASES[name]
    xs = args(np.random.default_rng(3))
    f = ad.jit(make())
    src = f.lower(*xs).source
    n_parts = src.count("@njit(") - src.count("def _loop")
    assert "kernel__part1(" in src, src[:2000]
    ast.parse(src)
    got = assert_compiled(f, *xs)
    want = ad.jit(make(), backend="interpret")(*xs)
    for g, w in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)
    assert n_parts > 2


def test_split_kernel_with_run_time_sizes(small_chunks):
    # a shape-generic kernel reads its sizes from the size vector in the first chunk
    f = ad.jit(lambda x: anp.sum(anp.tanh(anp.outer(x, x)) * anp.arange(x.shape[0])),
               dynamic_shapes=True)
    for n in (3, 5, 8):
        x = np.linspace(-1, 1, n)
        want = np.sum(np.tanh(np.outer(x, x)) * np.arange(n))
        np.testing.assert_allclose(assert_compiled(f, x), want, rtol=1e-12, atol=1e-12)


def test_split_kernel_with_a_parallel_loop(small_chunks, monkeypatch):
    monkeypatch.setitem(ad.config._values, "jit_parallel_threshold", 1)
    x = np.linspace(-2, 2, 3000)
    f = ad.jit(lambda x: (anp.sum(anp.sin(x) ** 2 * anp.exp(-x * x)), anp.tanh(x) * 2.0,
                          anp.cumsum(anp.cos(x))))
    got = assert_compiled(f, x)
    np.testing.assert_allclose(got[0], np.sum(np.sin(x) ** 2 * np.exp(-x * x)), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.tanh(x) * 2.0, rtol=1e-14)
    np.testing.assert_allclose(got[2], np.cumsum(np.cos(x)), rtol=1e-12)


def test_short_kernels_are_not_split():
    src = ad.jit(lambda x: anp.sin(x) + 1.0).lower(np.ones(3)).source
    assert "__part" not in src


def test_periodic_runs_find_the_loop_period():
    # a prologue, 5 repetitions of a 3-statement step, an epilogue
    shapes = ["p0", "p1"] + ["a", "b", "c"] * 5 + ["e0"]
    assert numba_cpu._periodic_runs(shapes, min_len=6) == {2: (3, 5)}
    assert numba_cpu._periodic_runs(["a", "b", "c", "d"] * 2, min_len=6) == {}


def test_an_unrolled_loop_shares_its_chunks(monkeypatch):
    # 24 unrolled steps: the chunks of whole periods are one shared function called at each
    # place, and the program still matches the interpreter
    monkeypatch.setattr(numba_cpu, "CHUNK_LINES", 40)

    def f(y0, w1, w2):
        y = y0
        for _ in range(24):
            y = y + 0.05 * anp.tanh(anp.tanh(y @ w1.T) @ w2.T)
        return anp.sum(y ** 2)
    r = np.random.default_rng(5)
    xs = (r.standard_normal(8), 0.3 * r.standard_normal((16, 8)), 0.3 * r.standard_normal((8, 16)))
    g = ad.jit(ad.grad(f, argnums=(0, 1, 2)))
    src = g.lower(*xs).source
    calls = src.count("= kernel__shared0(")
    assert "def kernel__shared0(" in src and calls >= 3, src[-3000:]
    got = assert_compiled(g, *xs)
    want = ad.jit(ad.grad(f, argnums=(0, 1, 2)), backend="interpret")(*xs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
