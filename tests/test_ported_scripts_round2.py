"""Regressions from porting a second round of published JAX scripts by changing imports:
JAX-only keywords (on numpy inputs and under jit), old and new spellings of lax's loops and
conditionals, and the import paths ``jax.experimental.ode``/``jet``, ``jax.ops``,
``jax.nn.initializers`` and ``jax.typing``."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax


def _fd(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def test_jax_keywords_numpy_lacks_work_on_numpy_inputs():
    # eagerly these went straight to numpy's function, which has no such keyword
    ids = np.array([0, 2, 2])
    np.testing.assert_array_equal(anp.bincount(ids, length=5), [1, 0, 2, 0, 0])
    np.testing.assert_allclose(anp.bincount(ids, np.array([0.5, 1.0, 2.0]), length=4),
                               [0.5, 0.0, 3.0, 0.0])
    out = anp.reshape(np.arange(6.0), newshape=(2, 3))
    assert isinstance(out, np.ndarray) and out.shape == (2, 3)
    x = np.array([3.0, 1.0, 2.0, 7.0])
    assert anp.quantile(x, 0.5, interpolation="linear") == np.quantile(x, 0.5)
    assert anp.percentile(x, 25, interpolation="lower") == np.percentile(x, 25, method="lower")
    # keywords numpy has still go to numpy
    np.testing.assert_array_equal(anp.bincount(ids, minlength=4), np.bincount(ids, minlength=4))


def test_var_and_std_take_numpy_2_correction_under_jit_and_grad():
    x = np.array([1.0, 2.0, 0.5, 3.0])
    for f in (lambda x: anp.var(x, correction=1), ad.jit(lambda x: anp.var(x, correction=1))):
        np.testing.assert_allclose(f(x), np.var(x, ddof=1), rtol=1e-14)
    m = np.arange(6.0).reshape(2, 3) ** 1.5
    np.testing.assert_allclose(ad.jit(lambda m: anp.std(m, axis=1, correction=1))(m),
                               np.std(m, axis=1, ddof=1), rtol=1e-14)
    g = ad.grad(lambda x: anp.std(x, correction=1))(x)
    np.testing.assert_allclose(g, _fd(lambda x: np.std(x, ddof=1), x), rtol=1e-6)
    with pytest.raises(ValueError, match="simultaneously"):
        ad.jit(lambda x: anp.var(x, ddof=1, correction=1))(x)


def test_sum_promote_integers_false_keeps_the_dtype():
    x = np.array([1, 2, 3], dtype=np.int8)
    assert ad.jit(lambda x: anp.sum(x, promote_integers=False))(x).dtype == np.int8
    assert anp.sum(x, promote_integers=False).dtype == np.int8
    assert ad.jit(lambda x: anp.sum(x))(x).dtype == np.sum(x).dtype
    assert ad.jit(lambda x: anp.sum(x > 1, promote_integers=False))(x) == 2


def test_repeat_with_total_repeat_length_takes_traced_repeats():
    a = np.array([10.0, 20.0, 30.0, 40.0])
    reps = np.array([2, 0, 1, 3])
    f = ad.jit(lambda a, r: anp.repeat(a, r, total_repeat_length=6))
    np.testing.assert_array_equal(f(a, reps), np.repeat(a, reps))
    # shorter: cut; longer: the last element repeated (JAX's rule)
    np.testing.assert_array_equal(
        ad.jit(lambda a, r: anp.repeat(a, r, total_repeat_length=4))(a, reps),
        [10.0, 10.0, 30.0, 40.0])
    np.testing.assert_array_equal(anp.repeat(a, reps, total_repeat_length=8),
                                  [10, 10, 30, 40, 40, 40, 40, 40])
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(
        ad.jit(lambda m: anp.repeat(m, 2, axis=1, total_repeat_length=6))(m),
        np.repeat(m, 2, axis=1))
    w = np.array([1.0, 2.0, 3.0, 4.0])
    g = ad.grad(lambda a: anp.sum(anp.repeat(a, reps, total_repeat_length=6) * anp.arange(6.0)))
    np.testing.assert_allclose(g(a), [1.0, 0.0, 2.0, 12.0])
    assert w.shape == (4,)


def test_searchsorted_accepts_jax_method():
    a, v = np.array([0.0, 1.0, 2.0]), np.array([0.5, 2.0, -1.0])
    for method in ("scan", "sort", "compare_all"):
        np.testing.assert_array_equal(anp.searchsorted(a, v, method=method),
                                      np.searchsorted(a, v))
        np.testing.assert_array_equal(
            ad.jit(lambda v: anp.searchsorted(a, v, side="right", method=method))(v),
            np.searchsorted(a, v, side="right"))


def test_eigh_symmetrize_input():
    a = np.array([[2.0, 1.0, 0.0], [0.4, 3.0, 0.2], [0.1, -0.3, 1.0]])
    sym = (a + a.T) / 2
    np.testing.assert_allclose(anp.linalg.eigh(a, symmetrize_input=True)[0],
                               np.linalg.eigh(sym)[0], rtol=1e-12)
    np.testing.assert_allclose(ad.jit(lambda a: anp.linalg.eigvalsh(a, symmetrize_input=True))(a),
                               np.linalg.eigvalsh(sym), rtol=1e-12)
    g = ad.grad(lambda a: anp.linalg.eigh(a, symmetrize_input=True)[0][0])(a)
    np.testing.assert_allclose(g, _fd(lambda a: np.linalg.eigh((a + a.T) / 2)[0][0], a),
                               atol=1e-7)
    np.testing.assert_allclose(g, g.T, atol=1e-12)      # reaches both triangles


def test_fori_loop_unroll_and_cond_spellings():
    body = lambda i, x: x * 1.5 + i          # noqa: E731
    for unroll in (True, 2):
        assert lax.fori_loop(0, 3, body, 1.0, unroll=unroll) == ((1.5 * 1.5 + 1) * 1.5 + 2)
    g = ad.jit(ad.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0, unroll=True)))
    assert g(2.0) == 12.0
    # cond(pred, true_fun, false_fun, operand=x)
    f = lambda x: lax.cond(x > 0, anp.sin, anp.cos, operand=x)   # noqa: E731
    assert f(1.0) == np.sin(1.0) and ad.jit(f)(-1.0) == np.cos(-1.0)
    np.testing.assert_allclose(ad.grad(f)(-1.0), np.sin(1.0), rtol=1e-14)
    # the old five-argument cond(pred, true_operand, true_fun, false_operand, false_fun)
    old = lambda p, x, y: lax.cond(p, x, lambda a: a * 2.0, y, lambda b: b - 1.0)  # noqa: E731
    assert old(True, 3.0, 10.0) == 6.0 and ad.jit(old)(False, 3.0, 10.0) == 9.0
    assert ad.grad(old, argnums=(1, 2))(False, 3.0, 10.0) == (0.0, 1.0)
    with pytest.raises(TypeError, match="operand"):
        lax.cond(True, anp.sin, anp.cos, 1.0, operand=1.0)


def test_jit_accepts_inline_and_keep_unused():
    f = ad.jit(lambda x, unused: x * 2.0, inline=True, keep_unused=True)
    assert f(3.0, 1.0) == 6.0
    g = ad.jit(inline=True)(lambda x: anp.sin(x))
    assert g(0.5) == np.sin(0.5)


def test_experimental_ode_and_jet_import_paths():
    from autodiff.experimental.jet import jet
    from autodiff.experimental.ode import odeint
    t = np.array([0.0, 0.5, 1.0])

    def final(k):
        return odeint(lambda y, t, k: -k * y, np.array([2.0]), t, k)[-1, 0]

    np.testing.assert_allclose(final(1.5), 2 * np.exp(-1.5), rtol=1e-6)
    np.testing.assert_allclose(ad.grad(final)(1.5), -2 * np.exp(-1.5), rtol=1e-5)
    y, (y1, y2) = jet(anp.sin, (0.3,), ((1.0, 0.0),))
    np.testing.assert_allclose([y, y1, y2], [np.sin(0.3), np.cos(0.3), -np.sin(0.3)])


def _segment_reference(data, ids, n, op, identity):
    out = np.full((n,) + data.shape[1:], identity)
    for row, s in zip(data, ids):
        if 0 <= s < n:
            out[s] = op(out[s], row)
    return out


def test_ops_segment_reductions():
    from autodiff.ops import segment_max, segment_min, segment_prod, segment_sum
    rng = np.random.RandomState(0)
    data = rng.randn(8, 2)
    ids = np.array([0, 3, 3, -1, 6, 1, 0, 3])            # -1 and 6 (>= 5) are dropped
    cases = [(segment_sum, np.add, 0.0), (segment_prod, np.multiply, 1.0),
             (segment_max, np.maximum, -np.inf), (segment_min, np.minimum, np.inf)]
    for fn, op, identity in cases:
        want = _segment_reference(data, ids, 5, op, identity)
        np.testing.assert_allclose(fn(data, ids, 5), want, rtol=1e-14)
        np.testing.assert_allclose(ad.jit(fn, static_argnums=2)(data, ids, 5), want,
                                   rtol=1e-14)

        def loss(d, fn=fn):
            return anp.sum(anp.tanh(fn(d, ids, 5)[[0, 1, 3]]))

        ref = lambda d, op=op, identity=identity: np.sum(      # noqa: E731
            np.tanh(_segment_reference(d, ids, 5, op, identity)[[0, 1, 3]]))
        np.testing.assert_allclose(ad.jit(ad.grad(loss))(data), _fd(ref, data), atol=1e-7)
    # num_segments defaults to max(id) + 1 on concrete ids
    np.testing.assert_allclose(ad.ops.segment_sum(data[:3], np.array([1, 1, 0])),
                               [data[2], data[0] + data[1]])
    np.testing.assert_allclose(
        ad.vmap(lambda d: segment_sum(d, ids, 5))(np.stack([data, 2 * data]))[1],
        2 * _segment_reference(data, ids, 5, np.add, 0.0))
    with pytest.raises(ad.errors.ConcretizationError, match="num_segments"):
        ad.jit(lambda d, i: segment_sum(d, i))(data, ids)


def test_nn_initializers_import_path_and_typing_aliases():
    import autodiff.nn.initializers as init
    from autodiff.nn.initializers import glorot_normal
    from autodiff.typing import ArrayLike, DTypeLike
    assert init is ad.nn.initializers
    w = glorot_normal()(ad.random.PRNGKey(0), (30, 40))
    assert w.shape == (30, 40) and abs(np.std(w) - np.sqrt(2 / 70)) < 0.01

    def double(x: ArrayLike, dtype: DTypeLike = np.float64) -> ArrayLike:
        return anp.asarray(x, dtype=dtype) * 2

    assert double(1.5) == 3.0
    assert isinstance(np.ones(2), ArrayLike.__args__) and ad.typing.ArrayLike is ArrayLike
