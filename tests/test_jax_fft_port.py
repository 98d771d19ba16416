"""Port of JAX's ``tests/fft_test.py`` (jax-ml/jax, class ``FftTest``) to autodiff:
``fft``/``ifft``/``rfft``/``irfft``/``hfft``/``ihfft``, their 2-D and N-D forms with
``n``/``s``/``axes``/``norm``, ``fftfreq``/``rfftfreq``/``fftshift``/``ifftshift``,
``lax.fft``, derivatives (``check_grads``) and ``vmap``.

``jnp.fft`` became ``anp.fft``, ``lax`` ``ad.lax``; each test cites the JAX test it ports.
Values are compared with ``numpy.fft`` eagerly (numpy's own code on plain arrays) and
traced (``ad.jit(..., backend="interpret")``: autodiff's ``fft`` primitive), a few under
the Numba ``jit``. JAX's full product of shapes × axes × ``s`` × norms × dtypes is
replaced by a deterministic rotation through them, on small shapes.

Deliberate differences (autodiff.numpy.fft follows numpy, which JAX restricts):
repeated axes (``axes=[1, 1]``) transform twice as numpy does instead of raising;
``fft2`` accepts any number of axes as numpy's does; ``fftn``/``ifftn`` with ``axes=[]``
return the input unchanged (numpy; JAX casts it to complex), and ``rfftn``/``irfftn``
with ``axes=[]`` raise a ``ShapeError`` (numpy raises ``IndexError``; JAX returns the
input). Not ported: ``testFftnormOverflow`` (a JAX-internal helper ``_fft_norm``),
bfloat16 errors, device placement.
"""
import itertools
import zlib

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp

FFT_NORMS = [None, "ortho", "forward", "backward"]
FLOAT = [np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]
INT = [np.int32, np.int64, np.uint8]
REAL = FLOAT + INT + [np.bool_]
ALL = REAL + COMPLEX


def rng_for(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def rand(rng, shape, dtype):
    """JAX's ``rand_default``: normal entries (scaled ×3 for ints; complex: both parts)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape).astype(dtype)
    x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def traced(f, **kw):
    return ad.jit(f, backend="interpret", **kw)


def tol_for(*dtypes):
    return 1e-4 if any(np.dtype(d) in (np.float32, np.complex64) for d in dtypes) else 1e-10


def assert_close(got, want, tol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def check_against_numpy(np_fn, ad_fn, x, tol):
    want = np_fn(x)
    assert_close(ad_fn(x), want, tol)
    assert_close(traced(ad_fn)(x), want, tol)


def zero_for_irfft(z, axes):
    """JAX's ``_zero_for_irfft``: irfft reads only the real part of the DC (and Nyquist)
    bins, so zero their imaginary part where the derivative is checked."""
    if axes is not None and not axes:
        return z
    axis = z.ndim - 1 if axes is None else axes[-1]
    if not -z.ndim <= axis < z.ndim:
        return z                              # an invalid axis: the transform's error
    size = z.shape[axis]
    dt = np.real(np.zeros((), z.dtype)).dtype
    first = anp.astype(anp.real(ad.lax.slice_in_dim(z, 0, 1, axis=axis)), dt)
    parts = [first]
    if size % 2:
        parts += [ad.lax.slice_in_dim(z, 1, size - 1, axis=axis),
                  anp.astype(anp.real(ad.lax.slice_in_dim(z, size - 1, size, axis=axis)), dt)]
    else:
        parts += [ad.lax.slice_in_dim(z, 1, size, axis=axis)]
    return anp.concatenate(parts, axis=axis)


def fftn_func(module, inverse, real):
    if not inverse:
        return module.rfftn if real else module.fftn
    if not real:
        return module.ifftn
    return lambda z, axes, s=None, norm=None: module.irfftn(
        zero_for_irfft(z, axes) if module is anp.fft else z, axes=axes, s=s, norm=norm)


# ---------------------------------------------------------------------------------------
# lax.fft
# ---------------------------------------------------------------------------------------

def test_lax_fft_accepts_string_types():
    """testLaxFftAcceptsStringTypes."""
    x = rand(rng_for("str"), (10,), np.complex64)
    for t in ("FFT", "fft", ad.lax.FftType.FFT):
        assert_close(ad.lax.fft(x, t, fft_lengths=(10,)), np.fft.fft(x), 1e-5)
        assert_close(traced(lambda a: ad.lax.fft(a, t, fft_lengths=(10,)))(x), np.fft.fft(x),
                     1e-5)


def test_lax_fft_errors():
    """testLaxFftErrors: fft_lengths must be the trailing axes' lengths (ValueErrors)."""
    with pytest.raises(ValueError, match=r"FFT input shape \(14, 15\) must have at least as "
                       r"many input dimensions as fft_lengths \(4, 5, 6\)"):
        ad.lax.fft(np.ones((14, 15)), fft_type="fft", fft_lengths=(4, 5, 6))
    with pytest.raises(ValueError, match=r"FFT input shape \(14, 15\) minor dimensions must be "
                       r"equal to fft_lengths \(17,\)"):
        ad.lax.fft(np.ones((14, 15)), fft_type="fft", fft_lengths=(17,))
    with pytest.raises(ValueError, match=r"RFFT input shape \(2, 14, 15\) minor dimensions must "
                       r"be equal to fft_lengths \(14, 12\)"):
        ad.lax.fft(np.ones((2, 14, 15)), fft_type="rfft", fft_lengths=(14, 12))
    with pytest.raises(ValueError, match=r"IRFFT input shape \(2, 14, 15\) minor dimensions "
                       r"must be equal to all except the last fft_length, got "
                       r"fft_lengths=\(13, 15\)"):
        traced(lambda a: ad.lax.fft(a, fft_type="irfft", fft_lengths=(13, 15)))(
            np.ones((2, 14, 15)))
    with pytest.raises(TypeError, match="RFFT input must be float32 or float64"):
        ad.lax.fft(np.ones((14, 15), np.int32), fft_type="rfft", fft_lengths=(14, 15))


@pytest.mark.parametrize("kind,n_in,lengths", [("FFT", (3, 4), (3, 4)), ("IFFT", (5,), (5,)),
                                               ("RFFT", (2, 6), (2, 6)),
                                               ("IRFFT", (3, 4), (3, 6)),
                                               ("IRFFT", (3, 4), (3, 7))])
def test_lax_fft_values_and_grads(kind, n_in, lengths):
    """lax.fft of each kind on the trailing axes against numpy, with its derivative."""
    rng = rng_for("laxfft", kind, lengths)
    dt = np.float64 if kind == "RFFT" else np.complex128
    x = rand(rng, (2,) + n_in, dt)
    axes = tuple(range(-len(lengths), 0))
    want = {"FFT": lambda: np.fft.fftn(x, axes=axes), "IFFT": lambda: np.fft.ifftn(x, axes=axes),
            "RFFT": lambda: np.fft.rfftn(x, axes=axes),
            "IRFFT": lambda: np.fft.irfftn(x, s=lengths, axes=axes)}[kind]()
    f = lambda a: ad.lax.fft(a, kind, lengths)   # noqa: E731
    check_against_numpy(lambda a: want, f, x, 1e-10)
    g = (lambda a: f(zero_for_irfft(a, axes))) if kind == "IRFFT" else f
    ad.check_grads(g, (x,), order=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lax_irfft_does_not_mutate_inputs(dtype):
    """testLaxIrfftDoesNotMutateInputs."""
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    x = (1 + 1j) * np.array([[1.0, 2.0], [3.0, 4.0]], dtype=cdt)
    x0 = x.copy()
    y = np.asarray(traced(anp.fft.irfft2)(x))
    z = np.asarray(traced(anp.fft.irfft2)(x))
    assert_close(y, z, 0)
    np.testing.assert_array_equal(x, x0)


# ---------------------------------------------------------------------------------------
# fftn / ifftn / rfftn / irfftn
# ---------------------------------------------------------------------------------------

def _fftn_axes(shape):
    axes = [None]
    nd = len(shape)
    for k in range(1, nd + 1):
        axes.extend(itertools.combinations(range(nd), k))
    axes.extend((-i,) for i in range(1, nd + 1))
    return axes


def _fftn_cases():
    """A rotation through JAX's testFftn product: every (inverse, real, shape, axes) with
    one ``s``, one norm and one dtype chosen by position."""
    cases = []
    i = 0
    for inverse, real in itertools.product([False, True], [False, True]):
        dtypes = REAL if real and not inverse else ALL
        for shape in [(10,), (4, 5), (9,), (2, 3, 4), (2, 3, 2, 3)]:
            for axes in _fftn_axes(shape):
                s_opts = [None]
                if axes is not None:
                    s_opts.append(tuple(shape[a] + (-1 if j % 2 else 2)
                                        for j, a in enumerate(axes)))
                s = s_opts[i % len(s_opts)]
                cases.append((inverse, real, shape, axes, s, FFT_NORMS[i % 4],
                              dtypes[i % len(dtypes)]))
                i += 1
    return cases


@pytest.mark.parametrize("inverse,real,shape,axes,s,norm,dtype", _fftn_cases(), ids=str)
def test_fftn(inverse, real, shape, axes, s, norm, dtype):
    """testFftn: values against numpy (eagerly and traced), second derivatives for the
    differentiable dtypes, and the result dtype."""
    rng = rng_for("fftn", inverse, real, shape, axes, s, norm, np.dtype(dtype).name)
    x = rand(rng, shape, dtype)
    ad_op = fftn_func(anp.fft, inverse, real)
    np_op = fftn_func(np.fft, inverse, real)
    ad_fn = lambda a: ad_op(a, s=s, axes=axes, norm=norm)   # noqa: E731
    np_fn = lambda a: np_op(a, s=s, axes=axes, norm=norm)   # noqa: E731
    xin = np.asarray(zero_for_irfft(x, axes)) if inverse and real else x
    check_against_numpy(np_fn, ad_fn, xin, tol_for(dtype))
    if np.dtype(dtype) in ((np.float64,) if real and not inverse else (np.float64,
                                                                        np.complex128)):
        ad.check_grads(ad_fn, (x,), order=2, modes=["fwd", "rev"] if len(shape) < 3
                       else ["rev"])
    out = np.asarray(traced(ad_fn)(x))
    want_kind = "f" if inverse and real else "c"
    assert out.dtype.kind == want_kind
    single = np.dtype(dtype) in (np.float32, np.complex64)
    assert out.dtype.itemsize == (8 if single else 16) // (2 if want_kind == "f" else 1)


def test_irfftn_non_symmetric_outer_axes():
    """testIrfftnNonSymmetricOuterAxes (jax#29325)."""
    a = np.array([[1.0 + 0.0j, 2.0 + 0.0j], [3.0 + 0.0j, 4.0 + 0.0j]], dtype=np.complex64)
    f = lambda x: anp.fft.irfftn(x, s=(5, 1), axes=(0, 1))   # noqa: E731
    check_against_numpy(lambda x: np.fft.irfftn(x, s=(5, 1), axes=(0, 1)), f, a, 1e-5)
    assert_close(ad.jit(f)(a), np.fft.irfftn(a, s=(5, 1), axes=(0, 1)), 1e-5)


def test_irfft_transpose():
    """testIrfftTranspose (jax#6223): the matrix of irfft∘embedding's transpose (by
    linear_transpose) is the transpose of its matrix."""
    def func(x):
        x = anp.astype(x, np.complex128)
        return anp.fft.irfft(anp.concatenate([anp.zeros_like(x, shape=1), x[:2] + 1j * x[2:]]))

    def func_transpose(x):
        return ad.linear_transpose(func, x)(x)[0]

    eye = np.eye(4)
    matrix = ad.vmap(func)(eye)
    matrix2 = ad.vmap(func_transpose)(eye).T
    assert_close(matrix, matrix2, 1e-12)
    want = np.stack([np.fft.irfft(np.concatenate([[0], e[:2] + 1j * e[2:]])) for e in eye])
    assert_close(matrix, want, 1e-12)


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("real", [False, True])
def test_fftn_errors(inverse, real):
    """testFftnErrors: out-of-range axes are ValueErrors; repeated axes follow numpy (a
    deliberate difference: JAX refuses them)."""
    x = rand(rng_for("fftnerr", inverse, real), (2, 3), np.float64)
    ad_op = fftn_func(anp.fft, inverse, real)
    for axes in ([2], [-3]):
        with pytest.raises(ValueError):
            ad_op(x, axes=axes)
        with pytest.raises(ValueError):
            traced(lambda a: ad_op(a, axes=axes))(x)
    np_op = fftn_func(np.fft, inverse, real)
    check_against_numpy(lambda a: np_op(a, axes=[1, 1]), lambda a: ad_op(a, axes=[1, 1]),
                        x.astype(np.complex128) if inverse and real else x, 1e-10)


def test_fft_empty():
    """testFftEmpty: an empty axis transforms to an empty complex axis."""
    x = np.zeros((0,), np.complex64)
    for f in (anp.fft.fft, traced(anp.fft.fft), anp.fft.ifft):
        out = np.asarray(f(x))
        assert out.shape == (0,) and out.dtype == np.complex64


def _fft_cases():
    cases = []
    i = 0
    for inverse, real, herm in itertools.product([False, True], repeat=3):
        if real and herm:
            continue
        dtypes = REAL if (real and not inverse) or (herm and inverse) else ALL
        for n in [None, 1, 7, 13, 20]:
            for axis in [-1, 0]:
                cases.append((inverse, real, herm, n, axis, FFT_NORMS[i % 4],
                              dtypes[i % len(dtypes)]))
                i += 1
    return cases


@pytest.mark.parametrize("inverse,real,hermitian,n,axis,norm,dtype", _fft_cases(), ids=str)
def test_fft(inverse, real, hermitian, n, axis, norm, dtype):
    """testFft: the 1-D functions with ``n`` and ``axis`` (and, beyond JAX's test, a
    rotation of ``norm``) against numpy, and their first derivatives for float64/complex128
    inputs."""
    name = ("i" if inverse else "") + ("r" if real else "h" if hermitian else "") + "fft"
    x = rand(rng_for("fft", name, n, axis), (10,), dtype)
    ad_fn = lambda a: getattr(anp.fft, name)(a, n=n, axis=axis, norm=norm)   # noqa: E731
    np_fn = lambda a: getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)    # noqa: E731
    check_against_numpy(np_fn, ad_fn, x, tol_for(dtype))
    if np.dtype(dtype) in (np.float64, np.complex128) and n != 1:
        if name in ("irfft", "hfft"):
            m = (n or 18) // 2 + 1
            g = lambda a: ad_fn(zero_for_irfft(a[:m], None))   # noqa: E731
        else:
            g = ad_fn
        ad.check_grads(g, (x,), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_fft_errors(name):
    """testFftErrors: a sequence for ``axis`` is a ValueError naming the n-D function."""
    x = rand(rng_for("ffterr"), (2, 3), np.float64)
    func = getattr(anp.fft, name)
    with pytest.raises(ValueError, match=rf"autodiff.numpy.fft.{name} does not support "
                       rf"multiple axes.*Got axis = \[1, 1\]"):
        func(x, axis=[1, 1])
    with pytest.raises(ValueError, match=r"Got axis = \(1, 1\)"):
        traced(lambda a: func(a, axis=(1, 1)))(x)
    for axis in ([2], [-3], 2, -3):
        with pytest.raises(ValueError):
            func(x, axis=axis)


def _fft2_cases():
    cases = []
    i = 0
    for inverse, real in itertools.product([False, True], repeat=2):
        dtypes = REAL if real and not inverse else ALL
        for shape in [(4, 3, 2, 4), (2, 3, 2, 4, 2)]:
            for axes in [(-2, -1), (0, 1), (1, 3), (-1, 2)]:
                cases.append((inverse, real, shape, axes, FFT_NORMS[i % 4],
                              dtypes[i % len(dtypes)]))
                i += 1
    return cases


@pytest.mark.parametrize("inverse,real,shape,axes,norm,dtype", _fft2_cases(), ids=str)
def test_fft2(inverse, real, shape, axes, norm, dtype):
    """testFft2_."""
    name = ("i" if inverse else "") + ("r" if real else "") + "fft2"
    x = rand(rng_for("fft2", name, shape, axes, norm), shape, dtype)
    ad_fn = lambda a: getattr(anp.fft, name)(a, axes=axes, norm=norm)   # noqa: E731
    np_fn = lambda a: getattr(np.fft, name)(a, axes=axes, norm=norm)    # noqa: E731
    check_against_numpy(np_fn, ad_fn, x, tol_for(dtype))


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
def test_fft2_axes(name):
    """testFft2Errors, as a deliberate difference: like numpy's, ``fft2`` takes any axes
    (JAX: exactly two); out-of-range axes are ValueErrors."""
    x = rand(rng_for("fft2err", name), (2, 3, 4), np.complex128 if "irfft" in name
             else np.float64)
    for axes in ([0], (0, 1, 2)):
        check_against_numpy(lambda a: getattr(np.fft, name)(a, axes=axes),
                            lambda a: getattr(anp.fft, name)(a, axes=axes), x, 1e-10)
    for axes in ([2, 3], [-4, -5]):
        with pytest.raises(ValueError):
            getattr(anp.fft, name)(x, axes=axes)


# ---------------------------------------------------------------------------------------
# fftfreq / rfftfreq / fftshift / ifftshift
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [9, 10, 101, 102])
@pytest.mark.parametrize("d", [0.1, 2.0])
def test_fftfreq(size, d):
    """testFftfreq, testRfftfreq: values (and ``dtype=``), and the derivative in a traced
    ``d`` (JAX differentiates with respect to an unused argument; here ``d`` is the
    argument)."""
    for dt in FLOAT + COMPLEX:
        want = np.fft.fftfreq(size, d=d).astype(dt)
        got = anp.fft.fftfreq(size, d=d, dtype=dt)
        assert got.dtype == dt
        assert_close(got, want, tol_for(dt))
        got_t = traced(lambda dd: anp.fft.fftfreq(size, d=dd, dtype=dt))(d)
        assert np.asarray(got_t).dtype == dt
        assert_close(got_t, want, tol_for(dt))
    assert_close(traced(lambda dd: anp.fft.rfftfreq(size, d=dd))(d), np.fft.rfftfreq(size, d),
                 1e-12)
    assert_close(anp.fft.rfftfreq(size, d=d), np.fft.rfftfreq(size, d), 1e-12)
    ad.check_grads(lambda dd: anp.fft.fftfreq(size, d=dd), (d,), order=2, rtol=1e-4)
    ad.check_grads(lambda dd: anp.fft.rfftfreq(size, d=dd), (d,), order=2, rtol=1e-4)
    assert_close(ad.jacfwd(lambda dd: anp.fft.fftfreq(size, d=dd))(d),
                 -np.fft.fftfreq(size, d) / d, 1e-10)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_fftfreq_errors(name):
    """testFftfreqErrors, testRfftfreqErrors."""
    func = getattr(anp.fft, name)
    with pytest.raises(ValueError, match=rf"The n argument of autodiff.numpy.fft.{name} only "
                       r"takes an int. Got n = \[0, 1, 2\]."):
        func(n=[0, 1, 2])
    with pytest.raises(ValueError, match=rf"The d argument of autodiff.numpy.fft.{name} only "
                       r"takes a single value. Got d = \[0, 1, 2\]."):
        func(n=10, d=[0, 1, 2])


def _shift_cases():
    cases = []
    i = 0
    for shape in [[9], [10], [101], [102], [3, 5], [3, 17], [5, 7, 11]]:
        for axes in [[]] + _fftn_axes(shape) + ([0] if len(shape) == 1 else [(1, 0), 1]):
            cases.append((tuple(shape), axes, ALL[i % len(ALL)]))
            i += 1
    return cases


@pytest.mark.parametrize("shape,axes,dtype", _shift_cases(), ids=str)
def test_fftshift_ifftshift(shape, axes, dtype):
    """testFftshift, testIfftshift."""
    x = rand(rng_for("shift", shape, axes), shape, dtype)
    for name in ("fftshift", "ifftshift"):
        ad_fn = lambda a: getattr(anp.fft, name)(a, axes=axes)   # noqa: E731
        want = getattr(np.fft, name)(x, axes=axes)
        assert_close(ad_fn(x), want, 0)
        got = traced(ad_fn)(x)
        assert np.asarray(got).dtype == want.dtype
        assert_close(got, want, 0)


def test_fftshift_grad_and_vmap():
    """fftshift/ifftshift are permutations: inverse of each other under vmap, and their
    derivative is the same permutation."""
    x = rand(rng_for("shiftgrad"), (3, 5, 4), np.float64)
    f = lambda a: anp.fft.ifftshift(anp.fft.fftshift(a, axes=(0, 1)), axes=(0, 1))  # noqa
    assert_close(ad.vmap(f)(x), x, 0)
    ad.check_grads(lambda a: anp.fft.fftshift(a) * a, (x,), order=2)


def test_fft_normalization_precision():
    """testFftNormalizationPrecision (jax#23827)."""
    n = 31
    a = np.ones((n, 15), dtype="complex128")
    want = np.fft.ifft(a, n=n, axis=1)
    got = traced(lambda x: anp.fft.ifft(x, n=n, axis=1))(a)
    np.testing.assert_allclose(got, want, atol=1e-14, rtol=0)


# ---------------------------------------------------------------------------------------
# vmap and jit (the brief: "their gradients and vmap")
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,kw", [("fft", dict(n=6)), ("ifft", dict(norm="ortho")),
                                     ("rfft", dict(n=7, axis=0)), ("irfft", dict(n=8)),
                                     ("hfft", dict(norm="forward")), ("ihfft", {}),
                                     ("fftn", dict(axes=(0, 1))), ("rfft2", {}),
                                     ("irfftn", dict(s=(3, 6), axes=(-2, -1)))])
def test_fft_vmap(name, kw):
    """vmap over a leading axis (and over a middle one) equals the per-example loop."""
    cplx = name in ("ifft", "irfft", "hfft", "irfftn", "fftn")
    x = rand(rng_for("vmap", name), (3, 4, 5), np.complex128 if cplx else np.float64)
    f = lambda a: getattr(anp.fft, name)(a, **kw)   # noqa: E731
    g = lambda a: getattr(np.fft, name)(a, **kw)    # noqa: E731
    assert_close(ad.vmap(f)(x), np.stack([g(e) for e in x]), 1e-10)
    assert_close(ad.vmap(f, in_axes=1, out_axes=0)(x), np.stack([g(x[:, i]) for i in range(4)]),
                 1e-10)


def test_fft_jit_and_grad_of_loss():
    """A handful under the Numba jit: an rfft/irfft round trip with ortho norm, and the
    gradient of a spectral loss (Parseval: ∂/∂x Σ|X|² = 2 n x)."""
    x = rand(rng_for("jit"), (3, 8), np.float64)
    f = lambda a: anp.fft.irfft(anp.fft.rfft(a, norm="ortho"), n=8, norm="ortho")  # noqa
    assert_close(ad.jit(f)(x), x, 1e-12)
    loss = lambda a: anp.sum(anp.abs(anp.fft.fftn(a)) ** 2)   # noqa: E731
    assert_close(ad.jit(ad.grad(loss))(x), 2 * x.size * x, 1e-10)
    h = lambda a: anp.real(anp.fft.hfft(a, n=6, norm="ortho"))   # noqa: E731
    z = rand(rng_for("jith"), (2, 4), np.complex128)
    assert_close(ad.jit(h)(z), np.fft.hfft(z, n=6, norm="ortho"), 1e-12)
