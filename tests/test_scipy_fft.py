"""``autodiff.scipy.fft`` (``jax.scipy.fft``): the type-2 DCT and its inverse against
``scipy.fft``, round trips, and derivatives against finite differences, eagerly and under
``jit`` and ``vmap``."""
import numpy as np
import pytest
import scipy.fft as sf

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import UnsupportedError
from autodiff.scipy import fft as F

RNG = np.random.default_rng(3)
NORMS = [None, "backward", "ortho"]


@pytest.mark.parametrize("name", ["dct", "idct"])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape,axis", [((1,), 0), ((2,), -1), ((7,), 0), ((8,), -1),
                                        ((4, 6), 0), ((4, 5), 1), ((3, 4, 5), 1),
                                        ((3, 4, 5), -3)])
@pytest.mark.parametrize("n", [None, 3, 10])
def test_1d_matches_scipy(name, norm, shape, axis, n):
    x = RNG.normal(size=shape)
    got = getattr(F, name)(x, n=n, axis=axis, norm=norm)
    want = getattr(sf, name)(x, type=2, n=n, axis=axis, norm=norm)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["dctn", "idctn"])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s,axes", [(None, None), (None, (0, 2)), (None, (-1,)),
                                    ([3, 6], None), ([5], None), ([2, 7], (2, 0)),
                                    (4, None), (None, (0, 1, 2)), (None, ())])
def test_nd_matches_scipy(name, norm, s, axes):
    x = RNG.normal(size=(3, 4, 5))
    got = getattr(F, name)(x, s=s, axes=axes, norm=norm)
    want = getattr(sf, name)(x, type=2, s=s, axes=axes, norm=norm)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-11)


def test_known_values():
    # a constant signal has only a zero-frequency term: 2 * sum(x)
    np.testing.assert_allclose(F.dct(np.full(5, 3.0)), [30, 0, 0, 0, 0], atol=1e-13)
    # one cosine of the basis is one coefficient: x[j] = cos(pi k (2j+1) / 2N) -> N at k
    n, k = 6, 2
    x = np.cos(np.pi * k * (2 * np.arange(n) + 1) / (2 * n))
    want = np.zeros(n)
    want[k] = n
    np.testing.assert_allclose(F.dct(x), want, atol=1e-12)
    np.testing.assert_allclose(F.idct(want), x, atol=1e-13)
    # the ortho transform is an orthogonal matrix
    mat = F.dct(np.eye(7), axis=0, norm="ortho")
    np.testing.assert_allclose(mat @ mat.T, np.eye(7), atol=1e-13)


@pytest.mark.parametrize("norm", NORMS)
def test_round_trips(norm):
    x = RNG.normal(size=(5, 6, 3))
    np.testing.assert_allclose(F.idct(F.dct(x, norm=norm), norm=norm), x, atol=1e-13)
    np.testing.assert_allclose(F.dct(F.idct(x, axis=0, norm=norm), axis=0, norm=norm), x,
                               atol=1e-13)
    np.testing.assert_allclose(F.idctn(F.dctn(x, norm=norm), norm=norm), x, atol=1e-13)
    np.testing.assert_allclose(F.idctn(F.dctn(x, axes=(0, 2), norm=norm), axes=(0, 2),
                                       norm=norm), x, atol=1e-13)


def test_dtypes():
    x32 = RNG.normal(size=(4, 6)).astype(np.float32)
    for fn in (F.dct, F.idct, F.dctn, F.idctn):
        out = fn(x32, norm="ortho")
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, getattr(sf, fn.__name__)(x32.astype(float),
                                                                 norm="ortho"),
                                   rtol=1e-5, atol=1e-5)
    ints = np.arange(6)
    assert F.dct(ints).dtype == np.float64
    np.testing.assert_allclose(F.dct(ints), sf.dct(ints.astype(float)), atol=1e-12)
    np.testing.assert_allclose(F.idct(ints), sf.idct(ints.astype(float)), atol=1e-12)
    z = RNG.normal(size=(3, 5)) + 1j * RNG.normal(size=(3, 5))
    for fn in (F.dct, F.idct, F.dctn, F.idctn):
        out = fn(z)
        assert out.dtype == np.complex128
        np.testing.assert_allclose(out, getattr(sf, fn.__name__)(z), atol=1e-12)


@pytest.mark.parametrize("fn", [F.dct, F.idct, F.dctn, F.idctn])
@pytest.mark.parametrize("bad", [1, 3, 4])
def test_only_type_2(fn, bad):
    with pytest.raises(UnsupportedError, match="only the DCT of type 2"):
        fn(np.ones(4), type=bad)
    with pytest.raises(NotImplementedError):      # what JAX raises
        fn(np.ones(4), type=bad)


def test_errors():
    with pytest.raises(ValueError, match="norm='forward' is not implemented"):
        F.dct(np.ones(4), norm="forward")
    with pytest.raises(ValueError, match="norm='bogus' is not implemented"):
        F.idctn(np.ones(4), norm="bogus")
    with pytest.raises(ValueError, match="at most x.ndim"):
        F.dctn(np.ones((2, 2)), s=[2, 2, 2])
    with pytest.raises(ValueError, match="invalid number of data points"):
        F.idct(np.ones(4), n=0)
    with pytest.raises(ValueError, match="out of bounds"):
        F.dct(np.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="repeated axis"):
        F.dctn(np.ones((2, 3)), axes=(1, -1))


def _fd_directional(f, x, v, h=1e-6):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


@pytest.mark.parametrize("name,kw", [("dct", {}), ("dct", {"n": 4, "axis": 0}),
                                     ("dct", {"n": 9, "norm": "ortho"}), ("idct", {}),
                                     ("idct", {"n": 3, "norm": "ortho"}),
                                     ("dctn", {}), ("dctn", {"s": [4, 2], "norm": "ortho"}),
                                     ("idctn", {"axes": (0,)}), ("idctn", {"norm": "ortho"})])
def test_grads_against_finite_differences(name, kw):
    fn = getattr(F, name)
    x = RNG.normal(size=(5, 6))
    y0 = fn(x, **kw)
    w = RNG.normal(size=y0.shape)
    f = lambda a: anp.sum(anp.tanh(fn(a, **kw)) * w)
    g = ad.grad(f)(x)
    for _ in range(3):
        v = RNG.normal(size=x.shape)
        np.testing.assert_allclose(np.sum(g * v), _fd_directional(f, x, v), rtol=1e-6,
                                   atol=1e-9)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(x), g, atol=1e-12)
    # forward mode agrees with reverse mode
    v = RNG.normal(size=x.shape)
    _, tangent = ad.jvp(f, (x,), (v,))
    np.testing.assert_allclose(tangent, np.sum(g * v), rtol=1e-10)


def test_linear_maps_transpose_exactly():
    # the ortho DCT is orthogonal, so its vjp is its inverse
    x, ct = RNG.normal(size=8), RNG.normal(size=8)
    _, vjp = ad.vjp(lambda a: F.dct(a, norm="ortho"), x)
    np.testing.assert_allclose(vjp(ct)[0], sf.idct(ct, norm="ortho"), atol=1e-13)
    # the backward-norm DCT's vjp is its matrix transposed
    mat = sf.dct(np.eye(8), axis=0)
    _, vjp = ad.vjp(F.dct, x)
    np.testing.assert_allclose(vjp(ct)[0], mat.T @ ct, atol=1e-12)


def test_jit_and_vmap():
    xs = RNG.normal(size=(4, 5, 6))
    for fn, ref in ((F.dct, sf.dct), (F.idct, sf.idct), (F.dctn, sf.dctn),
                    (F.idctn, sf.idctn)):
        want = np.stack([ref(x, norm="ortho") for x in xs])
        np.testing.assert_allclose(ad.vmap(lambda x: fn(x, norm="ortho"))(xs), want,
                                   atol=1e-12)
        np.testing.assert_allclose(ad.jit(ad.vmap(lambda x: fn(x, norm="ortho")))(xs), want,
                                   atol=1e-12)
    np.testing.assert_allclose(ad.jit(lambda x: F.dct(x, n=8, axis=1))(xs),
                               sf.dct(xs, n=8, axis=1), atol=1e-12)
    f = lambda x: anp.sum(F.idctn(x) ** 2)
    gs = ad.jit(ad.vmap(ad.grad(f)))(xs)
    np.testing.assert_allclose(gs, np.stack([ad.grad(f)(x) for x in xs]), atol=1e-12)
    v = RNG.normal(size=xs.shape[1:])
    np.testing.assert_allclose(np.sum(gs[1] * v), _fd_directional(f, xs[1], v), rtol=1e-6)
