"""Keyword arguments JAX users pass: ``grad(allow_int=)`` (float0 zero gradients),
``jit(donate_argnums=, donate_argnames=)`` (validated, no effect on the CPU) and
``lax.map(batch_size=)`` (really batched)."""
import pickle

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.dtypes import float0
from autodiff.errors import DTypeError

X = np.array([0.5, -1.0, 2.0])


def scaled(x, n):
    return anp.sum(anp.sin(x)) * n


GRAD_INT = ad.grad(scaled, argnums=(0, 1), allow_int=True)
JIT_GRAD_INT = ad.jit(GRAD_INT)


def test_allow_int_gives_float0_zeros_and_the_float_gradient():
    dx, dn = GRAD_INT(X, 3)
    np.testing.assert_allclose(dx, 3 * np.cos(X), rtol=1e-12)
    assert isinstance(dn, np.ndarray) and dn.dtype == float0 and dn.shape == ()
    assert dn.nbytes == 0
    # the same under jit, and for an int array input (shape kept)
    jx, jn = JIT_GRAD_INT(X, 3)
    np.testing.assert_allclose(jx, dx, rtol=1e-12)
    assert jn.dtype == float0 and jn.shape == ()
    gx, gn = ad.grad(lambda x, n: anp.sum(x * n), argnums=(0, 1), allow_int=True)(X, np.arange(3))
    np.testing.assert_allclose(gx, [0.0, 1.0, 2.0])
    assert gn.dtype == float0 and gn.shape == (3,)
    # bool inputs too
    gb = ad.grad(lambda m, x: anp.sum(anp.where(m, x, 0.0) ** 2), argnums=(0, 1),
                 allow_int=True)(np.array([True, False, True]), X)
    assert gb[0].dtype == float0
    np.testing.assert_allclose(gb[1], [1.0, 0.0, 4.0])


def test_allow_int_in_a_pytree_and_value_and_grad():
    params = {"w": X, "step": np.int32(7)}
    loss = lambda p: anp.sum(p["w"] ** 2) + 0.0 * p["step"]
    v, g = ad.value_and_grad(loss, allow_int=True)(params)
    np.testing.assert_allclose(v, np.sum(X ** 2), rtol=1e-12)
    np.testing.assert_allclose(g["w"], 2 * X, rtol=1e-12)
    assert g["step"].dtype == float0
    # float0 refuses arithmetic, so an integer leaf cannot be "updated" by mistake
    with pytest.raises(TypeError):
        params["step"] - 0.1 * g["step"]
    # under jit: the same structure and numbers
    v2, g2 = ad.jit(ad.value_and_grad(loss, allow_int=True))(params)
    np.testing.assert_allclose(g2["w"], 2 * X, rtol=1e-12)
    assert g2["step"].dtype == float0


def test_allow_int_jacrev_blocks():
    J = ad.jacrev(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(X, np.array([1, 2, 3]))
    np.testing.assert_allclose(J[0], np.diag([1.0, 2.0, 3.0]))
    assert J[1].dtype == float0 and J[1].shape == (3, 3)


def test_vmap_of_grad_with_allow_int_over_the_float_argument():
    xs = np.stack([X, 2 * X])
    dx, dn = ad.vmap(GRAD_INT, in_axes=(0, None))(xs, 2)
    np.testing.assert_allclose(dx, 2 * np.cos(xs), rtol=1e-12)
    assert dn.dtype == float0


def test_integer_input_without_allow_int_names_the_argument():
    with pytest.raises(DTypeError, match=r"int64 in argument 1 \('n'\).*allow_int=True"):
        ad.grad(scaled, argnums=1)(X, 3)
    with pytest.raises(DTypeError, match=r"argument 0 \('x'\)"):
        ad.grad(scaled)(np.arange(3), 2.0)


def test_float0_tangents_of_integer_primals_are_zero_tangents():
    # JAX's convention, and what grad(allow_int=True) returns: d(x**n) = n x**(n-1) dx
    f = lambda x, n: x ** n
    for t in (np.zeros((), float0), ad.dtypes.float0_zeros(())):
        assert ad.jvp(f, (2.0, 3), (1.0, t)) == (8.0, 12.0)
        assert ad.jit(lambda x, n: ad.jvp(f, (x, n), (1.0, t)))(2.0, 3) == (8.0, 12.0)
    g = ad.grad(f, argnums=(0, 1), allow_int=True)(2.0, 3)      # (12.0, a float0 zero)
    assert ad.jvp(f, (2.0, 3), g) == (8.0, 144.0)
    _, f_jvp = ad.linearize(f, 2.0, 3)
    assert f_jvp(0.5, ad.dtypes.float0_zeros(())) == 6.0
    # arrays, bool primals and pytrees
    m = np.array([True, False, True])
    y, ty = ad.jvp(lambda p: p["x"] * p["m"], ({"x": X, "m": m},),
                   ({"x": np.ones(3), "m": ad.dtypes.float0_zeros((3,))},))
    np.testing.assert_array_equal(ty, m.astype(float))
    # a float0 tangent must match its primal's shape and belongs to integers only
    with pytest.raises(ValueError, match="tangent shape"):
        ad.jvp(f, (2.0, 3), (1.0, ad.dtypes.float0_zeros((2,))))
    with pytest.raises(DTypeError, match="float0"):
        ad.jvp(f, (2.0, 3), (np.zeros((), float0), np.zeros((), float0)))


def test_float_only_grad_is_unchanged_by_allow_int():
    np.testing.assert_allclose(ad.grad(scaled, allow_int=True)(X, 2.0),
                               ad.grad(scaled)(X, 2.0), rtol=0, atol=0)


# ------------------------------------------------------------------ donate_argnums

def axpy(a, x, y):
    return a * x + y


def test_donate_is_accepted_and_changes_nothing():
    x, y = X.copy(), np.ones(3)
    plain = ad.jit(axpy)(2.0, x, y)
    f = ad.jit(axpy, donate_argnums=(1, 2))
    g = ad.jit(axpy, donate_argnames="y")
    h = ad.jit(axpy, donate_argnums=-1)
    for fn in (f, g, h):
        np.testing.assert_array_equal(fn(2.0, x, y), plain)
    # the donated arrays are untouched and still usable (no buffer is reused on the CPU)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(y, np.ones(3))
    assert f._donate_argnums == (1, 2) and h._donate_argnums == (2,)
    # the decorator form and pickling keep the option
    deco = ad.jit(donate_argnums=0)(lambda x: x * 2)
    np.testing.assert_array_equal(deco(x), 2 * X)
    assert pickle.loads(pickle.dumps(g))._donate_argnames == ("y",)


@pytest.mark.parametrize("kw, err, msg", [
    (dict(donate_argnums=3), ValueError, "out of range"),
    (dict(donate_argnums=-4), ValueError, "out of range"),
    (dict(donate_argnames="z"), ValueError, "not a parameter"),
    (dict(donate_argnums=0, static_argnums=0), ValueError, "both static and donated"),
    (dict(donate_argnames="a", static_argnames="a"), ValueError, "both static and donated"),
    (dict(donate_argnums="x"), TypeError, "must be ints"),
    (dict(donate_argnums=1.0), TypeError, "must be ints"),
])
def test_bad_donation_raises(kw, err, msg):
    with pytest.raises(err, match=msg):
        ad.jit(axpy, **kw)


# ------------------------------------------------------------------ lax.map(batch_size=)

def body(x):
    return {"s": anp.sin(x[0]) * x[1], "n": anp.sum(x ** 2)}


XS = np.linspace(-1.0, 1.0, 14).reshape(7, 2)


def _count_eqns(jaxpr, name):
    n = 0
    for e in jaxpr.eqns:
        n += e.primitive.name == name
        for v in e.params.values():
            inner = getattr(v, "jaxpr", v)
            if hasattr(inner, "eqns"):
                n += _count_eqns(inner, name)
    return n


def test_lax_map_batch_size_matches_the_unbatched_map():
    want = ad.lax.map(body, XS)
    np.testing.assert_allclose(want["s"], np.sin(XS[:, 0]) * XS[:, 1], rtol=1e-12)
    for b in (1, 3, 7, 10):
        got = ad.lax.map(body, XS, batch_size=b)
        np.testing.assert_allclose(got["s"], want["s"], rtol=1e-12)
        np.testing.assert_allclose(got["n"], want["n"], rtol=1e-12)
    jitted = ad.jit(lambda xs: ad.lax.map(body, xs, batch_size=3))(XS)
    np.testing.assert_allclose(jitted["n"], want["n"], rtol=1e-12)
    g = ad.grad(lambda xs: anp.sum(ad.lax.map(body, xs, batch_size=3)["s"]))(XS)
    np.testing.assert_allclose(g, np.stack([np.cos(XS[:, 0]) * XS[:, 1], np.sin(XS[:, 0])], 1),
                               rtol=1e-12)


def test_lax_map_batch_size_really_batches():
    jp = ad.make_jaxpr(lambda xs: ad.lax.map(body, xs, batch_size=3))(XS).jaxpr
    scans = [e for e in jp.eqns if e.primitive.name == "scan"]
    assert len(scans) == 1                          # 7 = 2 blocks of 3 (one scan) + 1 rest
    assert scans[0].params["length"] == 2
    body_in = scans[0].params["jaxpr"].jaxpr.invars
    assert any(tuple(v.aval.shape) == (3, 2) for v in body_in)   # the body sees a block of 3
    plain = ad.make_jaxpr(lambda xs: ad.lax.map(body, xs))(XS).jaxpr
    assert [e.params["length"] for e in plain.eqns if e.primitive.name == "scan"] == [7]
