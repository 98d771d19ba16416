"""JAX keywords a ported script uses: ``.at[...]`` modes, ``sort``/``argsort``
``descending=``/``stable=``, and ``max``/``min`` with ``initial=`` of empty operands under
trace. Each checked eagerly, under jit (default CPU backend) and ``backend="interpret"``."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp


def _modes(f, *args):
    """``f(*args)`` eagerly, under jit and under the interpreter backend."""
    return [np.asarray(f(*args)), np.asarray(ad.jit(f)(*args)),
            np.asarray(ad.jit(f, backend="interpret")(*args))]


X = np.arange(5.0)
IDX = np.array([0, 7, -1, -9])      # in bounds, past the end, wrapped, below -n


# ----------------------------------------------------------------------------
# .at[...] modes
# ----------------------------------------------------------------------------

def test_at_get_fill_reads_fill_value_out_of_bounds():
    want = np.array([0.0, np.nan, 4.0, np.nan])
    for out in _modes(lambda x, i: anp.at(x)[i].get(mode="fill"), X, IDX):
        np.testing.assert_array_equal(out, want)
    for out in _modes(lambda x, i: anp.at(x)[i].get(mode="drop", fill_value=-2.0), X, IDX):
        np.testing.assert_array_equal(out, [0.0, -2.0, 4.0, -2.0])
    # the tracers' own .at, as in JAX
    out = ad.jit(lambda x, i: x.at[i].get(mode="fill", fill_value=1.5))(X, IDX)
    np.testing.assert_array_equal(out, [0.0, 1.5, 4.0, 1.5])
    # concrete indices: no IndexError
    np.testing.assert_array_equal(anp.at(X)[IDX].get(mode="fill"), want)
    assert np.isnan(anp.at(X)[7].get(mode="fill"))
    x2 = np.arange(12.0).reshape(3, 4)
    for out in _modes(lambda x: anp.at(x)[1:, np.array([1, 5])].get(mode="fill", fill_value=0.5),
                      x2):
        np.testing.assert_array_equal(out, [[5.0, 0.5], [9.0, 0.5]])


@pytest.mark.parametrize("dt,fill", [(np.int32, np.iinfo(np.int32).min),
                                     (np.int64, np.iinfo(np.int64).min),
                                     (np.uint8, 255), (np.bool_, True)])
def test_at_get_fill_default_per_dtype_as_jax(dt, fill):
    x = np.zeros(3, dt)
    for out in _modes(lambda x, i: anp.at(x)[i].get(mode="fill"), x, np.array([1, 3])):
        assert out.dtype == dt
        np.testing.assert_array_equal(out, np.array([0, fill]).astype(dt))


def test_at_get_clip_clamps_after_wrapping_negatives():
    # JAX: -1 wraps to n-1; -9 wraps to -4, then clamps to 0; 7 clamps to 4
    for out in _modes(lambda x, i: anp.at(x)[i].get(mode="clip"), X, IDX):
        np.testing.assert_array_equal(out, [0.0, 4.0, 4.0, 0.0])
    for out in _modes(lambda x, i: anp.at(x)[i].get(mode="clip"), X, 11):
        assert float(out) == 4.0


def test_at_get_fill_gradient_is_zero_where_filled():
    w = np.arange(1.0, 5.0)
    f = ad.grad(lambda x, i: anp.sum(anp.at(x)[i].get(mode="fill", fill_value=0.0) * w))
    for g in (f(X, IDX), ad.jit(f)(X, IDX), ad.jit(f, backend="interpret")(X, IDX)):
        np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 0.0, 3.0])


def test_at_updates_drop_out_of_bounds_concrete_and_traced():
    cases = [("set", [10.0, 1.0, 2.0, 3.0, 10.0]),
             ("add", [10.0, 1.0, 2.0, 3.0, 14.0]),
             ("multiply", [0.0, 1.0, 2.0, 3.0, 40.0]),
             ("divide", [0.0, 1.0, 2.0, 3.0, 0.4]),
             ("power", [0.0, 1.0, 2.0, 3.0, 4.0 ** 10]),
             ("min", [0.0, 1.0, 2.0, 3.0, 4.0]),
             ("max", [10.0, 1.0, 2.0, 3.0, 10.0])]
    for name, want in cases:
        for mode in ("drop", "fill"):
            f = lambda x, i: getattr(anp.at(x)[i], name)(10.0, mode=mode, indices_are_sorted=False,
                                                    unique_indices=False)
            for out in _modes(f, X, IDX):
                np.testing.assert_allclose(out, want, err_msg=f"{name} {mode}")
    # a traced scalar out of bounds under set: dropped, not clamped
    for out in _modes(lambda x, i: anp.at(x)[i].set(10.0, mode="drop"), X, 7):
        np.testing.assert_array_equal(out, X)
    np.testing.assert_array_equal(anp.at(X)[7].set(1.0, mode="drop"), X)


def test_at_updates_clip():
    # indices [0, 7, -1, -9] clip to [0, 4, 4, 0]: every update applied
    for out in _modes(lambda x, i: anp.at(x)[i].add(10.0, mode="clip"), X, IDX):
        np.testing.assert_array_equal(out, [20.0, 1.0, 2.0, 3.0, 24.0])
    for out in _modes(lambda x, i: anp.at(x)[i].set(-1.0, mode="clip"), X, 9):
        np.testing.assert_array_equal(out, [0.0, 1.0, 2.0, 3.0, -1.0])


def test_at_update_drop_gradients():
    w = np.arange(5.0)
    fv = ad.grad(lambda v, i: anp.sum(anp.at(X)[i].set(v, mode="drop") * w))
    fx = ad.grad(lambda x, i: anp.sum(anp.at(x)[i].multiply(3.0, mode="drop") * w))
    for f in (fv, ad.jit(fv), ad.jit(fv, backend="interpret")):
        np.testing.assert_array_equal(f(np.ones(4), IDX), [0.0, 0.0, 4.0, 0.0])
    for f in (fx, ad.jit(fx), ad.jit(fx, backend="interpret")):
        np.testing.assert_array_equal(f(X, IDX), [0.0, 1.0, 2.0, 3.0, 12.0])


def test_at_promise_in_bounds_is_the_default_and_bad_mode_raises():
    with pytest.raises(IndexError):
        anp.at(X)[7].get(mode="promise_in_bounds")
    with pytest.raises(IndexError):
        anp.at(X)[np.array([7])].set(1.0, mode=None)
    np.testing.assert_array_equal(anp.at(X)[1].add(1.0, mode="promise_in_bounds"),
                                  [0.0, 2.0, 2.0, 3.0, 4.0])
    for call in (lambda r: r.get(mode="wrap"), lambda r: r.set(1.0, mode="raise")):
        with pytest.raises(ValueError, match="'clip', 'drop' and 'fill'"):
            call(anp.at(X)[1])
        with pytest.raises(ValueError, match="unknown mode"):
            ad.jit(lambda x: call(anp.at(x)[1]))(X)


# ----------------------------------------------------------------------------
# sort / argsort: descending=, stable=
# ----------------------------------------------------------------------------

A = np.array([[1.0, 3.0, 1.0, 2.0, 3.0], [5.0, 5.0, 0.0, 5.0, -1.0]])


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_descending_matches_reversed_numpy(axis):
    want = np.flip(np.sort(A, axis=axis), -1 if axis is None else axis)
    for out in _modes(lambda a: anp.sort(a, axis=axis, descending=True, stable=True), A):
        np.testing.assert_array_equal(out, want)
    for out in _modes(lambda a: anp.sort(a, axis=axis, stable=True), A):
        np.testing.assert_array_equal(out, np.sort(A, axis=axis))


def test_argsort_descending_stable_keeps_ties_in_original_order():
    # JAX: stable descending argsort keeps equal elements in their original order
    want = [[1, 4, 3, 0, 2], [0, 1, 3, 2, 4]]
    for stable in (None, True):
        for out in _modes(lambda a: anp.argsort(a, descending=True, stable=stable), A):
            np.testing.assert_array_equal(out, want)
    for out in _modes(lambda a: anp.argsort(a, axis=None, descending=True), A):
        np.testing.assert_array_equal(out, [5, 6, 8, 1, 4, 3, 0, 2, 7, 9])
    # stable=False: the ascending stable order reversed (ties last-first), in every mode
    for out in _modes(lambda a: anp.argsort(a, descending=True, stable=False), A):
        np.testing.assert_array_equal(out, [[4, 1, 3, 2, 0], [3, 1, 0, 2, 4]])
    for out in _modes(lambda a: anp.argsort(a, axis=0, descending=True), A):
        np.testing.assert_array_equal(out, np.argsort(-A, axis=0, kind="stable"))


def test_sort_descending_gradient_ties_share():
    w = np.arange(5.0)
    f = ad.grad(lambda a: anp.sum(anp.sort(a, descending=True) * w))
    # sorted [3, 3, 2, 1, 1]: the 3s share (0+1)/2, the 1s share (3+4)/2
    for g in (f(A[0]), ad.jit(f)(A[0]), ad.jit(f, backend="interpret")(A[0])):
        np.testing.assert_allclose(g, [3.5, 0.5, 3.5, 2.0, 0.5])


# ----------------------------------------------------------------------------
# max / min with initial= of empty operands under trace
# ----------------------------------------------------------------------------

E = np.zeros((0, 3))


@pytest.mark.parametrize("fn,kw,want", [
    (anp.max, dict(initial=-1.0), np.max(E, initial=-1.0)),
    (anp.max, dict(axis=0, initial=-1.0, keepdims=True), np.full((1, 3), -1.0)),
    (anp.min, dict(axis=0, initial=2.0), np.full(3, 2.0)),
    (anp.min, dict(axis=(0, 1), initial=2.0, where=np.ones(3, bool)), 2.0),
    (anp.min, dict(axis=1, initial=4.0), np.zeros(0)),
])
def test_max_min_initial_of_empty_operand_in_every_mode(fn, kw, want):
    for out in _modes(lambda x: fn(x, **kw), E):
        np.testing.assert_array_equal(out, want)
        assert out.shape == np.shape(want)
    for out in _modes(lambda x: anp.max(x, initial=5), np.zeros(0, np.int32)):
        assert out == 5 and out.dtype == np.int32


def test_max_initial_of_empty_gradient_goes_to_initial():
    f = ad.grad(lambda c: anp.max(anp.zeros((0,)) * c, initial=2.0 * c))
    for g in (f(3.0), ad.jit(f)(3.0), ad.jit(f, backend="interpret")(3.0)):
        assert float(g) == 2.0


def test_max_of_empty_without_initial_still_raises_at_trace_time():
    for f in (lambda x: anp.max(x), lambda x: anp.min(x, axis=0)):
        with pytest.raises(ValueError, match="zero-size array"):
            ad.jit(f)(E)
        with pytest.raises(ValueError, match="zero-size array"):
            ad.jit(f, backend="interpret")(E)


# nonzero / where / argwhere / flatnonzero with JAX's size= and fill_value=

def _sized_nonzero(x, size, fill):
    """numpy's nonzero cut or padded to ``size`` with per-axis ``fill``."""
    out = []
    for d, p in enumerate(np.nonzero(x)):
        p = p[:size]
        f = fill[d] if isinstance(fill, tuple) else fill
        out.append(np.concatenate([p, np.full(size - p.size, f, np.int64)]))
    return tuple(out)


def test_nonzero_size_and_fill_value_trace_under_jit():
    X = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0], [0.0, 0.0, 4.0]])
    for size, fill in ((2, 0), (4, -1), (7, (9, 8)), (0, 0)):
        want = _sized_nonzero(X, size, fill)
        for run in (lambda f, x: f(x), lambda f, x: ad.jit(f)(x),
                    lambda f, x: ad.jit(f, backend="interpret")(x)):
            got = run(lambda x: anp.nonzero(x, size=size, fill_value=fill), X)
            assert len(got) == 2
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
                assert np.asarray(g).dtype == np.int64
            got = run(lambda x: anp.where(x > 1.0, size=size, fill_value=fill), X)
            for g, w in zip(got, _sized_nonzero(X > 1.0, size, fill)):
                np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(
                run(lambda x: anp.argwhere(x, size=size, fill_value=fill), X),
                np.stack(want, axis=-1).reshape(size, 2))
            np.testing.assert_array_equal(
                run(lambda x: anp.flatnonzero(x, size=size,
                                              fill_value=fill if size != 7 else -5), X),
                _sized_nonzero(X.ravel(), size, fill if size != 7 else -5)[0])
    # a bool operand, and vmap over rows with a fixed size
    B = np.array([True, False, True, True])
    np.testing.assert_array_equal(ad.jit(lambda b: anp.nonzero(b, size=2)[0])(B), [0, 2])
    rows = ad.vmap(lambda r: anp.nonzero(r, size=2, fill_value=-1)[0])(X)
    np.testing.assert_array_equal(rows, [[1, -1], [0, 2], [2, -1]])
    # a typical use: the first k hits of a traced mask, gathered and differentiated
    f = lambda x: anp.sum(x[anp.nonzero(x > 0.5, size=2, fill_value=0)[0]] ** 2)
    x = np.array([0.1, 0.9, 0.2, 0.7, 0.8])
    np.testing.assert_allclose(ad.jit(ad.grad(f))(x), [0, 1.8, 0, 1.4, 0])
    with pytest.raises(ad.errors.ConcretizationError, match="size="):
        ad.jit(lambda x: anp.nonzero(x))(x)


def test_take_modes_and_fill_value():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    i = np.array([-4, -1, 0, 2, 3, 7])
    cases = {"clip": np.take(x, i, axis=1, mode="clip"),
             "wrap": np.take(x, i, axis=1, mode="wrap"),
             "fill": np.where(np.isin(i, [-1, 0, 2]), np.take(x, i, axis=1, mode="wrap"),
                              np.nan)}
    for mode, want in cases.items():
        for run in (lambda f, *a: f(*a), lambda f, *a: ad.jit(f)(*a)):
            got = run(lambda x, i: anp.take(x, i, axis=1, mode=mode), x, i)
            np.testing.assert_array_equal(got, want, err_msg=mode)
    np.testing.assert_array_equal(
        ad.jit(lambda x, i: anp.take(x, i, mode="fill", fill_value=-1.0))(x, i),
        [3.0, 6.0, 1.0, 3.0, 4.0, -1.0])
    # gradients: a clipped index gets its element's, a filled one none
    g = ad.jit(ad.grad(lambda x, i: anp.sum(anp.take(x, i, axis=1, mode="fill"
                                                     , fill_value=0.0))))(x, i)
    np.testing.assert_array_equal(g, [[1, 0, 2], [1, 0, 2]])
    g = ad.jit(ad.grad(lambda x, i: anp.sum(anp.take(x, i, axis=1, mode="clip"))))(x, i)
    np.testing.assert_array_equal(g, [[3, 0, 3], [3, 0, 3]])
    with pytest.raises(ValueError, match="mode"):
        anp.take(x, i, mode="nearest")
