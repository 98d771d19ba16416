"""Port of JAX's ``tests/jet_test.py`` (jax-ml/jax, class ``JetTest``) to autodiff: Taylor-mode
``ad.jet`` of elementwise functions, reductions, ``dot``, convolutions, cumulative ops,
gathers/slices, ``where``, ``stack``/``unstack``, nested ``jit``/``grad``/``jacfwd``, plus
(the brief) ``logsumexp``, ``softmax``, ``scan`` and closed forms.

``jax.experimental.jet.jet`` became ``ad.jet``; each test cites the JAX test it ports. As in
JAX, the expected series comes from ``jvp_taylor``: the ``k``-th derivative in ``ε`` of
``f(x + Σ_i ε^i/i!·x_i)`` at 0 by ``k`` nested ``jacfwd`` (an independent computation
through the jvp rules), compared with the one-pass Taylor propagation. A few closed forms
check the reference itself; a few cases run ``jet`` under ``ad.jit`` and ``ad.vmap``.

Not ported: the ``*_float0`` checks of integer/boolean outputs (skipped in JAX itself),
``expit_check``'s call of the JAX-internal ``_logistic_taylor`` (ported as ``jet`` of
``expit``), TPU skips.
"""
import math
import zlib
from functools import partial, reduce

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax
from autodiff.example_libraries import stax
from autodiff.tree_util import tree_flatten, tree_map


def rng_for(*key):
    return np.random.RandomState(zlib.crc32(repr(key).encode()) % (2 ** 31))


def repeated(f, n):
    def rfun(p):
        return reduce(lambda x, _: f(x), range(n), p)
    return rfun


def jvp_taylor(fun, primals, series):
    """The Taylor terms the slow way: nested ``jacfwd`` of ``fun`` along the curve."""
    order, = set(map(len, series))
    primals = tuple(np.asarray(p) for p in primals)

    def composition(eps):
        terms = [sum(eps ** (i + 1) * t[i] / math.factorial(i + 1) for i in range(len(t)))
                 for t in series]
        nudged = [anp.astype(x + t, x.dtype) for x, t in zip(primals, terms)]
        return fun(*nudged)
    primal_out = fun(*primals)
    terms_out = [repeated(ad.jacfwd, i + 1)(composition)(0.0) for i in range(order)]
    return primal_out, terms_out


def transform(lims, x):
    return x * (lims[1] - lims[0]) + lims[0]


def assert_close(got, want, atol, rtol):
    gl, _ = tree_flatten(got)
    wl, _ = tree_flatten(want)
    assert len(gl) == len(wl), (len(gl), len(wl))
    for g, w in zip(gl, wl):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, atol=atol, rtol=rtol, equal_nan=True)


def check_jet(fun, primals, series, atol=1e-5, rtol=1e-5, finite=False):
    """JAX's check_jet (``finite=True``: check_jet_finite, non-finite entries as nan)."""
    primals = tuple(np.asarray(p) for p in primals)
    series = tuple([np.asarray(t) for t in s] for s in series)
    y, terms = ad.jet(fun, primals, series)
    want_y, want_terms = jvp_taylor(fun, primals, series)
    # reorganize [order][output] into the jet's [output][order] (tree transpose)
    if isinstance(y, (tuple, list)):
        want_terms = [[t[j] for t in want_terms] for j in range(len(y))]
    if finite:
        conv = lambda a: np.where(np.isfinite(a), a, np.nan)   # noqa: E731
        y, want_y = conv(np.asarray(y)), conv(np.asarray(want_y))
        terms, want_terms = conv(np.asarray(terms)), conv(np.asarray(want_terms))
    assert_close(y, want_y, atol, rtol)
    assert_close(terms, want_terms, atol, rtol)


def unary_check(fun, lims=(-2, 2), order=3, dtype=None, atol=1e-3, rtol=1e-3, key=()):
    dims = 2, 3
    rng = rng_for("unary", key)
    if dtype is None:
        primal_in = transform(lims, rng.rand(*dims))
        terms_in = [rng.randn(*dims) for _ in range(order)]
    else:
        def draw():
            x = transform(lims, rng.rand(*dims))
            if np.dtype(dtype).kind == "c":
                x = x + 1j * transform(lims, rng.rand(*dims))
            return x.astype(dtype)
        primal_in = draw()
        terms_in = [draw() for _ in range(order)]
    check_jet(fun, (primal_in,), (terms_in,), atol, rtol)


def binary_check(fun, lims=(-2, 2), order=3, finite=True, key=()):
    dims = 2, 3
    rng = rng_for("binary", key)
    x_lims, y_lims = lims if isinstance(lims[0], (tuple, list)) else (lims, lims)
    primal_in = (transform(x_lims, rng.rand(*dims)), transform(y_lims, rng.rand(*dims)))
    series_in = ([rng.randn(*dims) for _ in range(order)],
                 [rng.randn(*dims) for _ in range(order)])
    check_jet(fun, primal_in, series_in, atol=1e-4, rtol=1e-4, finite=not finite)


# ---------------------------------------------------------------------------------------
# dot, conv
# ---------------------------------------------------------------------------------------

def test_dot():
    """test_dot."""
    M, K, N, order = 2, 3, 4, 3
    rng = rng_for("dot")
    x1, x2 = rng.randn(M, K), rng.randn(K, N)
    series = ([rng.randn(*x1.shape) for _ in range(order)],
              [rng.randn(*x2.shape) for _ in range(order)])
    check_jet(anp.dot, (x1, x2), series)


def test_dot_general_batched_and_einsum():
    """dot_general with batch dimensions and an einsum contraction (the brief's "dot")."""
    rng = rng_for("dotg")
    a, b = rng.randn(2, 3, 4), rng.randn(2, 4, 5)
    series = ([rng.randn(*a.shape) for _ in range(3)], [rng.randn(*b.shape) for _ in range(3)])
    check_jet(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (a, b), series)
    check_jet(lambda a, b: anp.einsum("bij,bjk->ik", a, b), (a, b), series)


def test_conv():
    """test_conv (stax.Conv, 'VALID')."""
    order = 3
    input_shape = (1, 5, 5, 1)
    init_fun, apply_fun = stax.Conv(3, (2, 2), padding="VALID")
    _, (W, b) = init_fun(ad.random.PRNGKey(0), input_shape)
    W, b = np.asarray(W), np.asarray(b)
    rng = rng_for("conv")
    x = rng.randn(*input_shape)
    series = ([rng.randn(*W.shape) for _ in range(order)],
              [rng.randn(*b.shape) for _ in range(order)],
              [rng.randn(*x.shape) for _ in range(order)])
    check_jet(lambda W, b, x: apply_fun((W, b), x), (W, b, x), series)


# ---------------------------------------------------------------------------------------
# unary
# ---------------------------------------------------------------------------------------

def test_int_pow():
    """test_int_pow."""
    for p in range(6):
        unary_check(lambda x: x ** p, lims=[-2, 2], key=p)
    unary_check(lambda x: x ** 10, lims=[0, 0])


_UNARY = {
    "exp": (anp.exp, {}), "neg": (anp.negative, {}), "floor": (anp.floor, {}),
    "ceil": (anp.ceil, {}), "trunc": (anp.trunc, {}), "round": (lax.round, {}),
    "sign": (lax.sign, {}), "log": (anp.log, dict(lims=[0.8, 4.0])),
    "gather": (lambda x: x[1:], {}), "reduce_max": (lambda x: x.max(axis=1), {}),
    "reduce_min": (lambda x: x.min(axis=1), {}), "all_max": (anp.max, {}),
    "all_min": (anp.min, {}), "stopgrad": (lax.stop_gradient, {}), "abs": (anp.abs, {}),
    "fft": (anp.fft.fft, {}), "log1p": (anp.log1p, dict(lims=[0, 4.0])),
    "expm1": (anp.expm1, {}), "sin": (anp.sin, {}), "cos": (anp.cos, {}),
    "sinh": (anp.sinh, {}), "cosh": (anp.cosh, {}),
    "tanh": (anp.tanh, dict(lims=[-500, 500], order=5, atol=5e-3)),
    "logistic": (lax.logistic, dict(lims=[-100, 100], order=5)),
    "expit2": (ad.scipy.special.expit, dict(lims=[-500, 500], order=5, atol=1e-4,
                                             rtol=1e-4)),
    "sqrt": (anp.sqrt, dict(lims=[0, 5.0])), "rsqrt": (lax.rsqrt, dict(lims=[0, 5000.0])),
    "asinh": (lax.asinh, dict(lims=[-100, 100])), "acosh": (lax.acosh, dict(lims=[-100, 100])),
    "atanh": (lax.atanh, dict(lims=[-1, 1])), "erf": (lax.erf, {}), "erfc": (lax.erfc, {}),
    "erf_inv": (lax.erf_inv, dict(lims=[-1, 1])), "cumsum": (anp.cumsum, {}),
    "cumprod": (anp.cumprod, {}), "cummax": (partial(lax.cummax, axis=0), {}),
    "cummin": (partial(lax.cummin, axis=0), {}),
    "dynamic_slice": (partial(lax.dynamic_slice, start_indices=(1, 2), slice_sizes=(1, 1)), {}),
    "dynamic_update_slice": (partial(lax.dynamic_update_slice, start_indices=(1, 2),
                                     update=np.arange(6.0).reshape(2, 3)), {}),
    "copy": (anp.array, {}),
    # beyond JAX's list (the brief): more elementwise functions and reductions
    "tan": (anp.tan, dict(lims=[-1.2, 1.2])), "arctan": (anp.arctan, {}),
    "arcsin": (anp.arcsin, dict(lims=[-0.9, 0.9])), "log2": (anp.log2, dict(lims=[0.5, 3])),
    "cbrt": (anp.cbrt, dict(lims=[0.5, 3])), "square": (anp.square, {}),
    "reciprocal": (anp.reciprocal, dict(lims=[0.5, 3])),
    "lgamma": (lax.lgamma, dict(lims=[0.5, 4])), "digamma": (lax.digamma, dict(lims=[0.5, 4])),
    "sum": (lambda x: anp.sum(x, axis=0), {}), "prod": (lambda x: anp.prod(x, axis=1), {}),
    "mean": (anp.mean, {}), "var": (lambda x: anp.var(x, axis=1), {}),
    "logsumexp": (lambda x: ad.scipy.special.logsumexp(x, axis=1), {}),
    "logsumexp_all": (ad.scipy.special.logsumexp, {}),
    "softmax": (partial(ad.nn.softmax, axis=-1), {}),
    "log_softmax": (partial(ad.nn.log_softmax, axis=0), {}),
    "cumlogsumexp": (partial(lax.cumlogsumexp, axis=1), {}),
    "transpose_reshape": (lambda x: anp.reshape(x.T, (6,)), {}),
    "pad": (lambda x: lax.pad(x, 0.0, [(1, 0, 1), (0, 2, 0)]), {}),
    "sort": (partial(anp.sort, axis=1), {}),
    "norm": (lambda x: anp.linalg.norm(x, axis=1), dict(lims=[0.5, 2])),
    "softplus": (ad.nn.softplus, {}), "gelu": (ad.nn.gelu, {}),
    "gelu_exact": (partial(ad.nn.gelu, approximate=False), {}),
    "silu": (ad.nn.silu, {}), "elu": (ad.nn.elu, dict(lims=[-2, -0.1])),
    "celu": (partial(ad.nn.celu, alpha=0.7), dict(lims=[0.1, 2])),
    "selu": (ad.nn.selu, dict(lims=[-2, -0.1])), "log_sigmoid": (ad.nn.log_sigmoid, {}),
    "squareplus": (ad.nn.squareplus, {}), "mish": (ad.nn.mish, {}),
    "sparse_plus": (ad.nn.sparse_plus, dict(lims=[-0.9, 0.9])),
    "glu": (partial(ad.nn.glu, axis=0), dict(order=4)),
    "standardize": (ad.nn.standardize, {}),
    "standardize_stable": (partial(ad.nn.standardize, algorithm="stable", axis=0), {}),
    "logmeanexp": (partial(ad.nn.logmeanexp, axis=1), {}),
    # the fft primitive's Taylor rule (linear: the series maps term by term)
    "rfft": (partial(anp.fft.rfft, norm="ortho"), {}),
    "irfft": (partial(anp.fft.irfft, n=5), {}), "fftn": (anp.fft.fftn, {}),
    "ifft2_abs": (lambda x: anp.abs(anp.fft.ifft2(x)), dict(lims=[0.5, 2])),
    "hfft": (partial(anp.fft.hfft, axis=0), {}),
}


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_unary(name):
    """test_exp … test_copy (and the brief's extra functions)."""
    fun, kw = _UNARY[name]
    unary_check(fun, key=name, **kw)


@pytest.mark.parametrize("name,fun", [("real", lax.real), ("conj", lax.conj),
                                      ("imag", lax.imag)])
def test_complex_parts(name, fun):
    """test_real, test_conj, test_imag (complex64 in JAX; complex128 here: jacfwd of a
    complex curve in a real ε)."""
    unary_check(fun, dtype=np.complex128, key=name)


# ---------------------------------------------------------------------------------------
# binary and ternary
# ---------------------------------------------------------------------------------------

_BINARY = {
    "div": (lambda x, y: x / y, dict(lims=[0.8, 4.0])), "rem": (lax.rem, dict(lims=[0.8, 4.0])),
    "complex": (lax.complex, {}), "sub": (lambda x, y: x - y, {}),
    "add": (lambda x, y: x + y, {}), "mul": (lambda x, y: x * y, {}), "max": (lax.max, {}),
    "min": (lax.min, {}),
    "pow": (lambda x, y: x ** y, dict(lims=([0.2, 500], [-500, 500]), finite=False)),
    "atan2": (lax.atan2, dict(lims=[-40, 40])),
    # the brief's extras
    "hypot": (anp.hypot, {}), "logaddexp": (anp.logaddexp, {}),
    "where_gt": (lambda x, y: anp.where(x > y, x * y, anp.sin(y)), {}),
}


@pytest.mark.parametrize("name", sorted(_BINARY))
def test_binary(name):
    """test_div … test_atan2 (and a few more)."""
    fun, kw = _BINARY[name]
    with np.errstate(over="ignore", invalid="ignore"):
        binary_check(fun, key=name, **kw)


def test_clamp():
    """test_clamp (its known working seed: RandomState(0))."""
    lims, order, dims = [-1, 1], 3, (2, 3)
    rng = np.random.RandomState(0)
    primal_in = tuple(transform(lims, rng.rand(*dims)) for _ in range(3))
    series_in = tuple([rng.randn(*dims) for _ in range(order)] for _ in range(3))
    check_jet(lax.clamp, primal_in, series_in, atol=1e-4, rtol=1e-4)


def test_select():
    """test_select: ``where`` with a boolean condition (its series is ignored)."""
    M, K, order = 2, 3, 3
    rng = rng_for("select")
    b = rng.rand(M, K) < 0.5
    x, y = rng.randn(M, K), rng.randn(M, K)
    series = ([rng.randn(M, K) for _ in range(order)], [rng.randn(M, K) for _ in range(order)],
              [rng.randn(M, K) for _ in range(order)])
    y0, terms = ad.jet(anp.where, (b, x, y), series)
    assert_close(y0, np.where(b, x, y), 1e-12, 1e-12)
    assert_close(terms, [np.where(b, sx, sy) for sx, sy in zip(series[1], series[2])],
                 1e-12, 1e-12)
    check_jet(lambda x, y: anp.where(b, x, y), (x, y), series[1:], rtol=5e-4)


# ---------------------------------------------------------------------------------------
# calls, nested transforms, structure
# ---------------------------------------------------------------------------------------

def test_process_call():
    """test_process_call: jet through a jitted inner function."""
    unary_check(lambda x: ad.jit(lambda x: x * x)(x), rtol=2e-4, key="call")


def test_post_process_call():
    """test_post_process_call: the jitted function closes over the jet input."""
    unary_check(lambda x: ad.jit(lambda y: x * y)(2.0), rtol=5e-4, key="post")


def test_inst_zero():
    """test_inst_zero: a constant output has zero (materialized) terms."""
    x = np.ones(1)
    order = 3
    f = lambda x: anp.full_like(x, 2.0)   # noqa: E731
    g = lambda x: 2.0 + 0 * x             # noqa: E731
    fy, fs = ad.jet(f, (x,), ([np.ones_like(x) for _ in range(order)],))
    gy, gs = ad.jet(g, (x,), ([np.ones_like(x) for _ in range(order)],))
    np.testing.assert_array_equal(gy, fy)
    assert len(fs) == len(gs) == order
    for a, b in zip(fs, gs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, np.zeros(1))


def test_add_any():
    """test_add_any (jax#5217): jet of a function taking grad inside."""
    f = lambda x, eps: x * eps + eps + x   # noqa: E731

    def g(eps):
        return ad.grad(f)(np.array(1.0), eps)
    y, (t,) = ad.jet(g, (1.0,), ([1.0],))
    assert float(y) == 2.0 and float(t) == 1.0


def test_scatter_add():
    """test_scatter_add (jax#5365): jet of grad∘jacfwd with indexing (scatter-add in the
    transpose)."""
    def f(x):
        return (x[0] ** 5 + x[1] ** 5).sum()

    def h(eps):
        x = anp.array([1.0, 1.0])
        mu = eps * x

        def F(t):
            return f(x + t * mu)
        return ad.grad(ad.jacfwd(F))(0.0)
    check_jet(h, (0.0,), ([1.0, 2.0, 3.0],), rtol=1e-3)


def test_stack():
    """test_stack."""
    order = 3
    rng = rng_for("stack")
    x1, x2 = rng.randn(2, 3), rng.randn(2, 3)
    series = ([rng.randn(2, 3) for _ in range(order)], [rng.randn(2, 3) for _ in range(order)])
    for axis in (0, 1, -1):
        check_jet(lambda *xs: anp.stack(xs, axis=axis), (x1, x2), series, 1e-3, 1e-3)


def test_unstack():
    """test_unstack (``lax.unstack`` as ``anp.unstack``; lax has none here)."""
    order = 3
    rng = rng_for("unstack")
    x = rng.randn(4, 2, 3)
    series = ([rng.randn(*x.shape) for _ in range(order)],)
    for axis in (0, 1, -1):
        check_jet(lambda x: tuple(anp.unstack(x, axis=axis)), (x,), series, 1e-3, 1e-3)


def test_lax_unstack():
    """test_unstack with ``lax.unstack`` itself."""
    rng = rng_for("lax_unstack")
    x = rng.randn(4, 2, 3)
    check_jet(lambda x: tuple(lax.unstack(x, axis=1)), (x,),
              ([rng.randn(*x.shape) for _ in range(3)],))


# ---------------------------------------------------------------------------------------
# beyond JAX's file (the brief): scan, closed forms, jit and vmap of jet
# ---------------------------------------------------------------------------------------

def test_scan():
    """jet through ``lax.scan`` (a recurrence with a nonlinear body and stacked outputs)."""
    rng = rng_for("scan")
    x, w = rng.randn(4, 2) * 0.5, rng.randn(2) * 0.5

    def f(xs, w):
        def body(c, x):
            c = anp.tanh(c * w + x)
            return c, anp.sin(c)
        c, ys = lax.scan(body, anp.zeros(2), xs)
        return c, ys
    series = ([rng.randn(*x.shape) for _ in range(3)], [rng.randn(*w.shape) for _ in range(3)])
    check_jet(f, (x, w), series, 1e-6, 1e-6)


def test_fori_loop_and_cond():
    """jet through ``fori_loop`` and ``cond`` (control flow takes its branch's rule)."""
    def f(x):
        y = lax.fori_loop(0, 3, lambda i, c: anp.sin(c) * 1.5 + x, x)
        return lax.cond(anp.sum(y) > 0, anp.exp, anp.cos, y)
    rng = rng_for("fori")
    x = rng.randn(3) * 0.3
    check_jet(f, (x,), ([rng.randn(3) for _ in range(3)],), 1e-6, 1e-6)


def test_closed_forms():
    """The series of closed forms along x(t) = x₀ + t: e^x (all terms e^{x₀}), 1/x
    ((-1)^k k!/x^{k+1}), log x ((-1)^{k-1}(k-1)!/x^k), logsumexp of (x, 0) (the softplus
    derivatives σ, σ(1-σ), σ(1-σ)(1-2σ))."""
    x0 = 0.7
    _, t = ad.jet(anp.exp, (x0,), ([1.0, 0.0, 0.0, 0.0],))
    assert_close(t, [np.exp(x0)] * 4, 1e-13, 1e-13)
    _, t = ad.jet(lambda x: 1 / x, (x0,), ([1.0, 0.0, 0.0, 0.0],))
    assert_close(t, [(-1) ** k * math.factorial(k) / x0 ** (k + 1) for k in range(1, 5)],
                 1e-11, 1e-11)
    _, t = ad.jet(anp.log, (x0,), ([1.0, 0.0, 0.0],))
    assert_close(t, [(-1) ** (k - 1) * math.factorial(k - 1) / x0 ** k for k in range(1, 4)],
                 1e-12, 1e-12)
    s = 1 / (1 + np.exp(-x0))
    lse = lambda x: ad.scipy.special.logsumexp(anp.stack([x, anp.zeros_like(x)]))  # noqa
    y, t = ad.jet(lse, (x0,), ([1.0, 0.0, 0.0],))
    assert_close(y, np.logaddexp(x0, 0), 1e-13, 1e-13)
    assert_close(t, [s, s * (1 - s), s * (1 - s) * (1 - 2 * s)], 1e-13, 1e-13)


_MORE = {
    "while_loop": (lambda x: lax.while_loop(lambda c: c[1] < 3,
                                            lambda c: (anp.sin(c[0]) + x, c[1] + 1),
                                            (x, 0))[0], {}),
    "switch": (lambda x: lax.switch(1, [anp.sin, anp.cos, anp.exp], x), {}),
    "checkpoint": (ad.checkpoint(lambda x: anp.sin(anp.sin(x))), {}),
    "relu6_custom_jvp": (ad.nn.relu6, dict(lims=[0.5, 5])),
    "reduce_window_sum": (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1),
                                                      "VALID"), {}),
    "max_pool": (lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 1), "VALID"),
                 {}),
    "cumsum_reverse": (lambda x: lax.cumsum(x, axis=1, reverse=True), {}),
    "associative_scan": (lambda x: lax.associative_scan(anp.multiply, x, axis=1), {}),
    "top_k": (lambda x: lax.top_k(x, 2)[0], {}),
    "scan_reverse": (lambda x: lax.scan(lambda c, r: (c * anp.cos(r), c), anp.ones(3), x,
                                        reverse=True)[1], {}),
    "grad_inside": (lambda x: ad.grad(lambda y: anp.sum(anp.sin(y) * y ** 3))(x), {}),
    "vmap_inside": (lambda x: ad.vmap(lambda r: anp.sum(anp.sin(r) ** 2))(x), {}),
    "inv": (lambda x: anp.linalg.inv(anp.concatenate([x, x[:1] * 0.5]) + 3 * np.eye(3)), {}),
    "det": (lambda x: anp.linalg.det(anp.concatenate([x, x[:1] * 0.5]) + 3 * np.eye(3)), {}),
    "gammainc": (partial(ad.scipy.special.gammainc, 2.0), dict(lims=[0.5, 2])),
    "xlogy": (lambda x: ad.scipy.special.xlogy(x, x + 2.5), {}),
}


@pytest.mark.parametrize("name", sorted(_MORE))
def test_more_primitives(name):
    """Control flow, windows, custom rules, nested transforms and linear algebra."""
    fun, kw = _MORE[name]
    unary_check(fun, key=name, atol=1e-6, rtol=1e-6, **kw)


def test_high_order():
    """Order 6 through a composite of exp, sin, division and a reduction."""
    unary_check(lambda x: anp.sum(anp.exp(anp.sin(x)) / (2 + x * x), axis=0), order=6,
                atol=1e-6, rtol=1e-6, key="order6")


def test_dot_product_attention():
    """jet through nn.dot_product_attention (einsums, masking, softmax) in q, k, v."""
    rng = rng_for("attention")
    q, k, v = rng.randn(2, 3, 2, 2), rng.randn(2, 4, 1, 2), rng.randn(2, 4, 1, 2)
    series = tuple([rng.randn(*a.shape) for _ in range(3)] for a in (q, k, v))
    f = partial(ad.nn.dot_product_attention, is_causal=True,
                key_value_seq_lengths=np.array([3, 4], np.int32))
    check_jet(f, (q, k, v), series, 1e-6, 1e-6)


def test_jet_under_jit_and_vmap():
    """A handful under the Numba jit, and jet under vmap, equal the eager jet."""
    rng = rng_for("jitvmap")
    x = rng.randn(3, 4)
    series = [rng.randn(3, 4) for _ in range(3)]

    def f(x):
        return ad.scipy.special.logsumexp(anp.sin(x) * anp.exp(x / 3), axis=1)

    def jet_f(x, s1, s2, s3):
        return ad.jet(f, (x,), ([s1, s2, s3],))
    want = jet_f(x, *series)
    assert_close(ad.jit(jet_f)(x, *series), want, 1e-12, 1e-12)
    got = ad.vmap(lambda x, a, b, c: ad.jet(lambda r: f(r[None])[0], (x,), ([a, b, c],)))(
        x, *series)
    assert_close(got, want, 1e-12, 1e-12)
    assert_close(tree_map(np.asarray, want), jvp_taylor(f, (x,), ([*series],)), 1e-8, 1e-8)
