"""Loop carries updated in place on the CPU target (backends/cpu_in_place.py): a loop's
``ys = ys.at[i].set(v)`` writes into the carry instead of copying it every step, and
every case where that would change a number keeps the copy. Each program runs compiled
(the LLVM tier and the Numba path) against the interpreter; the inputs must come back
unchanged."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax
from jit_util import assert_compiled


@pytest.fixture(params=["llvm", "numba"])
def tier(request):
    if request.param == "numba":
        request.getfixturevalue("numba_path")
    return request.param


def _agree(f, *args):
    """jit(f) on the CPU against the interpreter; the arguments stay as they were."""
    before = [np.array(a, copy=True) for a in args]
    got = assert_compiled(ad.jit(f), *args)
    want = ad.jit(f, backend="interpret")(*args)
    for g, w in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)          # the caller's arrays untouched
    return got


def _scan_bodies(f, *args):
    src = ad.jit(f).lower(*args).source
    return [part for part in src.split("\ndef ")[1:] if part.startswith("_scan")]


def test_fill_loop_writes_in_place(tier):
    def fill(x, ys):
        return lax.fori_loop(0, ys.shape[0], lambda i, ys: ys.at[i].set(anp.sin(x * i)), ys)
    ys0 = np.full(50, -1.0)
    out = _agree(fill, 0.5, ys0)
    np.testing.assert_allclose(out, np.sin(0.5 * np.arange(50)), rtol=1e-15)
    (body,) = _scan_bodies(fill, 0.5, ys0)
    assert ".copy()" not in body, body          # no copy of the carry per step


def test_two_dimensional_rows_and_elements(tier):
    def f(x):
        ys = anp.zeros((20, 3))

        def body(i, ys):
            ys = ys.at[i].set(anp.cos(x * i) * anp.arange(3.0))
            return ys.at[i, 1].add(ys[i - 1, 2])             # reads after the update
        return lax.fori_loop(1, 20, body, ys)
    out = _agree(f, 0.3)
    want = np.zeros((20, 3))
    for i in range(1, 20):
        want[i] = np.cos(0.3 * i) * np.arange(3.0)
        want[i, 1] += want[i - 1, 2]
    np.testing.assert_allclose(out, want, rtol=1e-14)


def test_reads_of_the_old_carry_after_the_update_keep_the_copy(tier):
    def f(ys):
        def body(i, ys):
            new = ys.at[i].set(ys[i] * 2.0 + 1.0)
            return new + ys[0] * 0.0 + anp.roll(ys, 1) * 0.5   # the old carry read after
        return lax.fori_loop(0, 6, body, ys)
    _agree(f, np.arange(6.0))


def test_swapped_and_duplicated_carries_keep_the_copy(tier):
    def swap(a, b):
        def body(i, c):
            a, b = c
            return (b.at[i].set(a[i] + 1.0), a)              # b's update returned as a
        return lax.fori_loop(0, 4, body, (a, b))
    _agree(swap, np.arange(4.0), np.arange(4.0) * 10.0)

    def twice(a):
        def body(i, c):
            a, b = c
            u = a.at[i].set(-1.0)
            return (u, u)                                     # one buffer, two carries
        return lax.fori_loop(0, 4, body, (a, a * 2.0))
    _agree(twice, np.arange(4.0))

    def through(a):
        def step(c, i):
            return c.at[i].set(c[i] * 3.0), c                 # the old carry as a y
        return lax.scan(step, a, np.arange(4))
    _agree(through, np.arange(1.0, 5.0))


def test_nested_reverse_vmapped_and_differentiated_loops(tier):
    def inner(x, ys):
        def body(i, ys):
            row = lax.fori_loop(0, 3, lambda j, r: r.at[j].set(x * i + j), anp.zeros(3))
            return ys.at[i].set(row)
        return lax.fori_loop(0, ys.shape[0], body, ys)
    _agree(inner, 0.7, np.zeros((5, 3)))

    def rev(x):
        def step(ys, i):
            return ys.at[i].set(x ** i + ys[(i + 1) % 5]), ys[i]
        return lax.scan(step, anp.ones(5), np.arange(5), reverse=True)
    _agree(rev, 1.3)

    def loss(x):
        ys = lax.fori_loop(0, 8, lambda i, ys: ys.at[i].set(anp.sin(x * i) * ys[i - 1]),
                           anp.ones(8))
        return anp.sum(ys ** 2)
    g = _agree(ad.grad(loss), 0.4)
    eps = 1e-6
    np.testing.assert_allclose(g, (loss(0.4 + eps) - loss(0.4 - eps)) / (2 * eps), rtol=1e-6)
    _agree(ad.vmap(lambda x: loss(x)), np.array([0.1, 0.4, 0.9]))


def test_an_initial_carry_used_elsewhere_is_not_overwritten(tier):
    def f(x):
        init = anp.zeros(4) + x
        out = lax.fori_loop(0, 4, lambda i, ys: ys.at[i].set(i * 1.0), init)
        return out, init * 2.0
    out, init2 = _agree(f, 3.0)
    np.testing.assert_array_equal(out, [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(init2, [6.0] * 4)


def test_while_loop_carries_in_place(tier):
    def f(x, ys):
        def body(c):
            i, ys = c
            return i + 1, ys.at[i].set(x * i + ys[i - 1])
        return lax.while_loop(lambda c: c[0] < c[1].shape[0], body, (0, ys))[1]
    ys0 = np.ones(30)
    out = _agree(f, 0.25, ys0)
    want = ys0.copy()
    for i in range(30):
        want[i] = 0.25 * i + want[i - 1]
    np.testing.assert_allclose(out, want, rtol=1e-14)
    src = ad.jit(f).lower(0.25, ys0).source
    body = [p for p in src.split("\ndef ")[1:] if p.startswith("_body")]
    assert body and ".copy()" not in body[0], src


def test_a_body_long_enough_to_be_cut_into_chunks(tier):
    # an update early in a body of ~300 lines and another late: numba_cpu cuts such a
    # body into chunk functions, and the LLVM tier copies a chunk's result that is a
    # parameter's buffer, so this body must return its carry (not drop it as written)
    def f(x, ys):
        def body(i, c):
            ys, s = c
            ys = ys.at[i].set(s)
            for k in range(60):
                s = anp.sin(s) * 0.5 + anp.cos(x * k) * 0.25
            return ys.at[i].add(s), s
        return lax.fori_loop(0, ys.shape[0], body, (ys, x))
    src = ad.jit(f).lower(0.3, np.zeros(6)).source
    assert src.count("\ndef ") > 4, "the body is no longer long enough to be cut"
    _agree(f, 0.3, np.zeros(6))
