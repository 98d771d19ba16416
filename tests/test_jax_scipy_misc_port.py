"""JAX's tests of ``jax.scipy.signal``, ``jax.scipy.ndimage``, ``jax.scipy.optimize`` and
``jax.experimental.ode``, ported to autodiff.

Sources (jax-ml/jax): ``tests/scipy_signal_test.py`` (convolve, correlate, their 2-d forms
and fftconvolve against scipy; detrend, stft, istft, csd and welch against scipy),
``tests/scipy_ndimage_test.py`` (map_coordinates against scipy and JAX's fixed-boundary
reference, its errors, round-half and continuous gradients),
``tests/scipy_optimize_test.py`` (BFGS and L-BFGS against scipy and known minima, complex
L-BFGS), ``tests/ode_test.py`` (odeint against scipy and its reverse-mode gradients with
``ad.check_grads``, pytree states, closures, vmap, complex states, hmax). JAX's
``example_libraries`` tests are in ``tests/test_jax_example_libraries_port.py``.

Shapes and dtypes are a rotation through JAX's product (float32, float64, int32,
complex128) rather than all of it; JAX's ``_CompileAndCheck`` is the jitted function
(mostly ``backend="interpret"``, a handful of real Numba ``ad.jit``\\ s) against the
eager one. Beyond JAX's checks: derivatives of the signal functions and of
map_coordinates with ``ad.check_grads``, and ``ad.vmap``.

Not ported: ``jax.scipy.interpolate.RegularGridInterpolator``
(``scipy_interpolate_test.py``: autodiff has no ``scipy.interpolate``); the ``precision=``
matmul-precision knob is accepted and has no effect (products are exact float64/float32).
Deliberate difference: JAX's odeint refuses forward mode (``jacfwd`` raises TypeError);
autodiff's differentiates the solver's steps, so the port checks ``jacfwd`` against
``jacrev`` and the closed form instead.
"""
import functools
import math
import warnings
import zlib

import numpy as np
import pytest
import scipy.integrate as osp_integrate
import scipy.ndimage as osp_ndimage
import scipy.optimize
import scipy.signal as osp_signal

import autodiff as ad
import autodiff.numpy as anp
from autodiff.experimental.ode import odeint
from autodiff.scipy import ndimage as lsp_ndimage
from autodiff.scipy import optimize as lsp_optimize
from autodiff.scipy import signal as jsp_signal


def _rng(*key):
    """A RandomState seeded by ``key`` (the same in every process)."""
    return np.random.RandomState(zlib.crc32(repr(key).encode()))


def rand_default(rng, scale=3):
    return lambda shape, dtype: _cast(rng.randn(*shape) * scale, dtype)


def rand_uniform(rng, low=0.0, high=1.0):
    return lambda shape, dtype: _cast(rng.rand(*shape) * (high - low) + low, dtype)


def _cast(x, dtype):
    x = np.asarray(x)
    if np.dtype(dtype).kind == "c":
        return x.astype(dtype)
    return x.astype(dtype)


def rand_complex_aware(rng, scale=3):
    """JAX's rand_default: complex dtypes get random imaginary parts too."""
    def f(shape, dtype):
        if np.dtype(dtype).kind == "c":
            return (rng.randn(*shape) * scale + 1j * rng.randn(*shape) * scale).astype(dtype)
        return _cast(rng.randn(*shape) * scale, dtype)
    return f


def assert_close(expected, actual, rtol=1e-12, atol=1e-12):
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected)
        for e, a in zip(expected, actual):
            assert_close(e, a, rtol, atol)
        return
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    kind = np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64
    np.testing.assert_allclose(a.astype(kind), e.astype(kind), rtol=rtol, atol=atol,
                               equal_nan=True)


def interp_jit(fun):
    """JAX's _CompileAndCheck, traced: the IR interpreter runs the jitted graph."""
    return ad.jit(fun, backend="interpret")


# ---------------------------------------------------------------------------------------
# scipy_signal_test.py
# ---------------------------------------------------------------------------------------

_DTYPES = [np.float64, np.float32, np.int32, np.complex128]
_CONV_SHAPES = [((5,), (2,)), ((2,), (5,)), ((1,), (10,)), ((10,), (10,)), ((5,), (1,)),
                ((3, 4), (2, 2)), ((2, 3), (4, 4)), ((1, 1), (3, 4)), ((4, 4), (4, 4)),
                ((4, 4, 2), (3, 3, 2)), ((2, 2, 2), (5, 5, 2))]
_CONV_CASES = [(xs, ys, mode, op)
               for xs, ys in _CONV_SHAPES
               for mode in ["full", "same", "valid"]
               for op in ["convolve", "correlate"]]


def _tol(dtype, fft=False):
    kind = np.dtype(dtype)
    if kind in (np.float32, np.complex64):
        return 1e-2 if fft else 1e-4
    if kind.kind in "iu":
        return 1e-6 if fft else 0
    return 1e-6 if fft else 1e-12


@pytest.mark.parametrize("i,case", list(enumerate(_CONV_CASES)),
                         ids=[f"{c[3]}-{c[2]}-{c[0]}x{c[1]}" for c in _CONV_CASES])
def test_convolutions(i, case):
    """testConvolutions: convolve/correlate against scipy for every mode and method."""
    xshape, yshape, mode, op = case
    dtype = _DTYPES[i % len(_DTYPES)]
    method = ["auto", "direct", "fft"][i % 3]
    rng = rand_complex_aware(_rng("conv", i))
    x, y = rng(xshape, dtype), rng(yshape, dtype)
    osp_fun = functools.partial(getattr(osp_signal, op), mode=mode, method=method)
    jsp_fun = functools.partial(getattr(jsp_signal, op), mode=mode, method=method,
                                precision=ad.lax.Precision.HIGHEST)
    tol = _tol(dtype, fft=(method == "fft"))
    expected = osp_fun(x, y)
    actual = jsp_fun(x, y)
    assert_close(expected, actual, rtol=tol, atol=tol)
    if i % 6 == 0:
        assert_close(actual, interp_jit(jsp_fun)(x, y), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_convolutions_jit_and_grad(dtype):
    """testConvolutions' _CompileAndCheck with a real jit, plus the derivative the
    convolution's users take (check_grads; JAX's op is linear and differentiable)."""
    rng = rand_complex_aware(_rng("convjit", str(dtype)))
    x, y = rng((5,), dtype), rng((3,), dtype)
    for op in ["convolve", "correlate"]:
        f = functools.partial(getattr(jsp_signal, op), mode="same")
        jitted = ad.jit(f) if dtype == np.float64 else interp_jit(f)
        assert_close(getattr(osp_signal, op)(x, y, mode="same"), jitted(x, y))
        ad.check_grads(f, (x, y), order=2, modes=["fwd", "rev"], atol=1e-6, rtol=1e-6)


_FFT_CASES = [(xs, ys, mode, pass_axes)
              for xs, ys in _CONV_SHAPES
              for mode in ["full", "same", "valid"]
              for pass_axes in [True, False]]


@pytest.mark.parametrize("i,case", list(enumerate(_FFT_CASES)),
                         ids=[f"{c[2]}-{c[0]}x{c[1]}-axes{c[3]}" for c in _FFT_CASES])
def test_fft_convolution(i, case):
    """testFFTConvolution: fftconvolve against scipy, with and without ``axes``."""
    xshape, yshape, mode, pass_axes = case
    if pass_axes:
        axes = tuple(k for k in range(len(xshape)) if xshape[k] != yshape[k]) or 0
    else:
        axes = None
    dtype = _DTYPES[i % len(_DTYPES)]
    rng = rand_complex_aware(_rng("fftconv", i))
    x, y = rng(xshape, dtype), rng(yshape, dtype)
    osp_fun = functools.partial(osp_signal.fftconvolve, mode=mode, axes=axes)
    jsp_fun = functools.partial(jsp_signal.fftconvolve, mode=mode, axes=axes)
    tol = _tol(dtype, fft=True)
    actual = jsp_fun(x, y)
    assert_close(osp_fun(x, y), actual, rtol=tol, atol=tol)
    if i % 8 == 0:
        assert_close(actual, interp_jit(jsp_fun)(x, y), rtol=tol, atol=tol)


def test_fft_convolution_grad():
    """fftconvolve's derivatives (check_grads) and a real jit."""
    rng = _rng("fftgrad")
    x, y = rng.randn(6), rng.randn(3)
    f = functools.partial(jsp_signal.fftconvolve, mode="same")
    ad.check_grads(f, (x, y), order=1, modes=["fwd", "rev"], atol=1e-6, rtol=1e-6)
    assert_close(osp_signal.fftconvolve(x, y, mode="same"), ad.jit(f)(x, y), 1e-10, 1e-10)


_SHAPES_2D = [(1, 1), (2, 2), (2, 3), (3, 4), (4, 4)]
_CASES_2D = [(xs, ys, mode, op) for xs in _SHAPES_2D for ys in _SHAPES_2D[1::2]
             for mode in ["full", "same", "valid"] for op in ["convolve2d", "correlate2d"]
             if mode != "valid" or all(a >= b for a, b in zip(xs, ys))
             or all(a <= b for a, b in zip(xs, ys))]


@pytest.mark.parametrize("i,case", list(enumerate(_CASES_2D)),
                         ids=[f"{c[3]}-{c[2]}-{c[0]}x{c[1]}" for c in _CASES_2D])
def test_convolutions_2d(i, case):
    """testConvolutions2D: convolve2d/correlate2d against scipy."""
    xshape, yshape, mode, op = case
    dtype = _DTYPES[i % len(_DTYPES)]
    rng = rand_complex_aware(_rng("conv2d", i))
    x, y = rng(xshape, dtype), rng(yshape, dtype)
    osp_fun = functools.partial(getattr(osp_signal, op), mode=mode)
    jsp_fun = functools.partial(getattr(jsp_signal, op), mode=mode,
                                precision=ad.lax.Precision.HIGHEST)
    tol = _tol(dtype)
    actual = jsp_fun(x, y)
    assert_close(osp_fun(x, y), actual, rtol=tol, atol=tol)
    if i % 10 == 0:
        assert_close(actual, interp_jit(jsp_fun)(x, y), rtol=tol, atol=tol)


_DETREND_CASES = [(shape, axis, typ, bp) for shape in [(5,), (4, 5), (3, 4, 5)]
                  for axis in [0, -1] for typ in ["constant", "linear"] for bp in [0, [0, 2]]]


@pytest.mark.parametrize("i,case", list(enumerate(_DETREND_CASES)),
                         ids=[f"{c[0]}-ax{c[1]}-{c[2]}-bp{c[3]}" for c in _DETREND_CASES])
def test_detrend(i, case):
    """testDetrend: detrend against scipy (floats and integers)."""
    shape, axis, typ, bp = case
    dtype = [np.float64, np.float32, np.int32][i % 3]
    x = rand_default(_rng("detrend", i))(shape, dtype)
    kwds = dict(axis=axis, type=typ, bp=bp)
    inexact = np.float32 if dtype == np.float32 else np.float64
    expected = osp_signal.detrend(x, **kwds).astype(inexact)
    actual = jsp_signal.detrend(x, **kwds)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert np.asarray(actual).dtype == inexact
    assert_close(expected, actual, rtol=tol, atol=tol)
    if i % 6 == 0:
        assert_close(actual, interp_jit(functools.partial(jsp_signal.detrend, **kwds))(x),
                     rtol=tol, atol=tol)


def test_detrend_grad():
    """detrend is a linear projection: check_grads, and a real jit."""
    x = _rng("detrend-grad").randn(3, 6)
    f = functools.partial(jsp_signal.detrend, axis=-1, type="linear", bp=[2])
    ad.check_grads(f, (x,), order=1, modes=["fwd", "rev"])
    assert_close(osp_signal.detrend(x, axis=-1, type="linear", bp=[2]), ad.jit(f)(x))


_STFT_SHAPES = [((50,), 17, 5, -1), ((2, 13), 7, 0, -1), ((3, 17, 2), 9, 3, 1),
                ((2, 3, 389, 5), 17, 13, 2), ((2, 1, 133, 3), 17, 13, -2), ((3, 7), 1, 0, 1)]
_CSD_SHAPES = [((50,), (13,), 17, 5, -1), ((2, 13), (2, 13), 7, 0, -1),
               ((3, 17, 2), (3, 12, 2), 9, 3, 1)]
_WINDOWS = ["boxcar", "triang", "blackman", "hamming", "hann"]
_SPEC_DTYPES = [np.float64, np.float32, np.int32, np.complex128]


def _complex_of(dtype):
    return np.complex64 if dtype == np.float32 else np.complex128


def _real_of(dtype):
    return np.float32 if dtype == np.float32 else np.float64


def _spec_tol(dtype):
    return 1e-5 if dtype == np.float32 else 1e-12


_STFT_CASES = [(shape, nperseg, noverlap, axis, nfft)
               for shape, nperseg, noverlap, axis in _STFT_SHAPES
               for nfft in [None, nperseg, int(nperseg * 1.5), nperseg * 2]]


@pytest.mark.parametrize("i,case", list(enumerate(_STFT_CASES)),
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-ax{c[3]}-nfft{c[4]}" for c in _STFT_CASES])
def test_stft_against_numpy(i, case):
    """testStftAgainstNumpy: stft against scipy, rotating dtype, fs, window, detrend,
    boundary and padded through JAX's product."""
    shape, nperseg, noverlap, axis, nfft = case
    dtype = _SPEC_DTYPES[i % 4]
    is_complex = np.dtype(dtype).kind == "c"
    kwds = dict(fs=[1.0, 16000.0][i % 2], window=_WINDOWS[i % 5], nfft=nfft,
                boundary=[None, "even", "odd", "zeros"][i % 4], padded=[True, False][i // 2 % 2],
                detrend=False if is_complex else ["constant", "linear", False][i % 3],
                nperseg=nperseg, noverlap=noverlap, axis=axis, return_onesided=not is_complex)
    if kwds["boundary"] in ("even", "odd") and nperseg // 2 > shape[axis] - 1:
        kwds["boundary"] = "zeros"
    x = rand_complex_aware(_rng("stft", i))(shape, dtype)
    f, t, z = osp_signal.stft(x, **kwds)
    expected = (f.astype(_real_of(dtype)), t.astype(_real_of(dtype)),
                z.astype(_complex_of(dtype)))
    actual = jsp_signal.stft(x, **kwds)
    tol = _spec_tol(dtype)
    assert_close(expected, list(actual), rtol=tol, atol=tol)
    if i % 8 == 0:
        fun = functools.partial(jsp_signal.stft, **kwds)
        assert_close(list(actual), list(interp_jit(fun)(x)), rtol=tol, atol=tol)


_CSD_CASES = [(xs, ys, nperseg, noverlap, axis, nfft)
              for xs, ys, nperseg, noverlap, axis in _CSD_SHAPES
              for nfft in [None, nperseg, int(nperseg * 1.5), nperseg * 2]]


@pytest.mark.parametrize("same", [False, True], ids=["xy", "same-param"])
@pytest.mark.parametrize("i,case", list(enumerate(_CSD_CASES)),
                         ids=[f"{c[0]}x{c[1]}-{c[2]}-{c[3]}-nfft{c[5]}" for c in _CSD_CASES])
def test_csd_against_numpy(i, case, same):
    """testCsdAgainstNumpy and testCsdWithSameParamAgainstNumpy: csd against scipy."""
    xshape, yshape, nperseg, noverlap, axis, nfft = case
    dtype = _SPEC_DTYPES[(i + same) % 4]
    is_complex = np.dtype(dtype).kind == "c"
    kwds = dict(fs=[1.0, 16000.0][i % 2], window=_WINDOWS[(i + 2 * same) % 5],
                nperseg=nperseg, noverlap=noverlap, nfft=nfft,
                detrend=False if is_complex else ["constant", "linear", False][i % 3],
                return_onesided=not is_complex, scaling=["density", "spectrum"][(i + same) % 2],
                axis=axis, average="mean")
    rng = rand_complex_aware(_rng("csd", i, same))
    x = rng(xshape, dtype)
    y = x if same else rng(yshape, dtype)
    f, p = osp_signal.csd(x, y.copy(), **kwds)
    expected = (f.astype(_real_of(dtype)), p.astype(_complex_of(dtype)))
    actual = jsp_signal.csd(x, y, **kwds)
    tol = _spec_tol(dtype)
    assert_close(expected, list(actual), rtol=tol, atol=tol)
    if i % 6 == 0 and not same:
        fun = functools.partial(jsp_signal.csd, **kwds)
        assert_close(list(actual), list(interp_jit(fun)(x, y)), rtol=tol, atol=tol)


@pytest.mark.parametrize("i,case", list(enumerate(_STFT_CASES)),
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-ax{c[3]}-nfft{c[4]}" for c in _STFT_CASES])
def test_welch_against_numpy(i, case):
    """testWelchAgainstNumpy: welch against scipy (mean and median averages)."""
    shape, nperseg, noverlap, axis, nfft = case
    dtype = _SPEC_DTYPES[(i + 1) % 4]
    is_complex = np.dtype(dtype).kind == "c"
    kwds = dict(fs=[1.0, 16000.0][i % 2], window=_WINDOWS[(i + 1) % 5], nperseg=nperseg,
                noverlap=noverlap, nfft=nfft,
                detrend=False if is_complex else ["constant", "linear", False][i % 3],
                return_onesided=False if is_complex else [True, False][i // 3 % 2],
                scaling=["density", "spectrum"][i // 2 % 2], axis=axis,
                average=["mean", "median"][i // 4 % 2])
    x = rand_complex_aware(_rng("welch", i))(shape, dtype)
    f, p = osp_signal.welch(x, **kwds)
    expected = (f.astype(_real_of(dtype)), p.astype(_real_of(dtype)))
    actual = jsp_signal.welch(x, **kwds)
    tol = _spec_tol(dtype)
    assert_close(expected, list(actual), rtol=tol, atol=tol)


@pytest.mark.parametrize("use_nperseg,use_window,use_noverlap",
                         [(a, b, c) for a in [False, True] for b in [False, True]
                          for c in [False, True]])
@pytest.mark.parametrize("k", range(len(_STFT_SHAPES)))
def test_welch_with_default_step_args(k, use_nperseg, use_window, use_noverlap):
    """testWelchWithDefaultStepArgsAgainstNumpy: welch's defaults (nperseg 256 clipped to
    the signal, noverlap nperseg // 2, a window array) against scipy. JAX skips
    (2, 3, 389, 5) because its default nperseg is the whole signal; autodiff follows
    scipy's 256, so that case is kept."""
    shape, nperseg, noverlap, axis = _STFT_SHAPES[k]
    dtype = [np.float64, np.float32, np.int32][(k + use_window) % 3]
    kwargs = {"axis": axis}
    if use_nperseg:
        kwargs["nperseg"] = nperseg
    if use_window:
        kwargs["window"] = osp_signal.get_window("hann", nperseg)
    if use_noverlap:
        kwargs["noverlap"] = noverlap
    x = rand_default(_rng("welch-default", k))(shape, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            f, p = osp_signal.welch(x, **kwargs)
        except ValueError:
            with pytest.raises(ValueError):
                jsp_signal.welch(x, **kwargs)
            return
    expected = (f.astype(_real_of(dtype)), p.astype(_real_of(dtype)))
    tol = _spec_tol(dtype)
    assert_close(expected, list(jsp_signal.welch(x, **kwargs)), rtol=tol, atol=tol)


_ISTFT_SHAPES = [((3, 2, 64, 31), 100, 75, -1, -2), ((17, 8, 5), 13, 7, 0, 1),
                 ((65, 24), 24, 7, -2, -1)]
_ISTFT_CASES = [(shape, nperseg, noverlap, taxis, faxis, nfft)
                for shape, nperseg, noverlap, taxis, faxis in _ISTFT_SHAPES
                for nfft in [None, nperseg, int(nperseg * 1.5), nperseg * 2]]


@pytest.mark.parametrize("onesided", [False, True])
@pytest.mark.parametrize("i,case", list(enumerate(_ISTFT_CASES)),
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-nfft{c[5]}" for c in _ISTFT_CASES])
def test_istft_against_numpy(i, case, onesided):
    """testIstftAgainstNumpy: istft against scipy, rotating dtype, fs, window (names and
    an array), boundary."""
    shape, nperseg, noverlap, taxis, faxis, nfft = case
    k = 2 * i + onesided
    if not onesided:
        new_len = (shape[faxis] - 1) * 2
        shape = shape[:faxis] + (new_len,) + shape[faxis + 1:] if faxis != -1 else (
            shape[:-1] + (new_len,))
    dtype = _SPEC_DTYPES[k % 4]
    window = (_WINDOWS + ["USE_ARRAY"])[k % 6]
    if window == "USE_ARRAY":
        window = np.ones(nperseg, dtype=_real_of(dtype) if onesided else _complex_of(dtype))
    kwds = dict(fs=[1.0, 16000.0][k % 2], window=window, nperseg=nperseg, noverlap=noverlap,
                nfft=nfft, input_onesided=onesided, boundary=[False, True][i % 2],
                time_axis=taxis, freq_axis=faxis)
    z = rand_complex_aware(_rng("istft", k))(shape, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = osp_signal.istft(z, **kwds)
    actual = jsp_signal.istft(z, **kwds)
    tol = 1e-4 if dtype == np.float32 else 1e-6
    assert_close(list(expected), list(actual), rtol=tol, atol=tol)
    if k % 8 == 0:
        fun = functools.partial(jsp_signal.istft, **kwds)
        assert_close(list(actual), list(interp_jit(fun)(z)), rtol=tol, atol=tol)


def test_istft_round_trip_and_grads():
    """istft inverts stft (a real jit), and is differentiable (check_grads)."""
    x = _rng("istft-rt").randn(2, 40)
    _, _, z = jsp_signal.stft(x, nperseg=8)
    assert_close(x, ad.jit(lambda z: jsp_signal.istft(z, nperseg=8)[1])(z), 1e-12, 1e-12)
    f = lambda x: jsp_signal.istft(jsp_signal.stft(x, nperseg=8, window="hamming")[2],
                                   nperseg=8, window="hamming")[1]
    ad.check_grads(f, (x[0],), order=1, modes=["fwd", "rev"], atol=1e-6, rtol=1e-6)


def test_spectral_grads_and_jit():
    """welch and csd are differentiable in the signal (check_grads) and a real jit of
    welch agrees with scipy."""
    rng = _rng("spec-grad")
    x, y = rng.randn(24), rng.randn(24)
    f = lambda x: jsp_signal.welch(x, nperseg=8, detrend="linear")[1]
    ad.check_grads(f, (x,), order=1, modes=["fwd", "rev"], atol=1e-6, rtol=1e-6)
    g = lambda x, y: anp.real(jsp_signal.csd(x, y, nperseg=8)[1])
    ad.check_grads(g, (x, y), order=1, modes=["rev"], atol=1e-6, rtol=1e-6)
    h = lambda x: jsp_signal.stft(x, nperseg=8)[2]
    ad.check_grads(lambda x: anp.abs(h(x)) ** 2, (x,), order=1, modes=["rev"],
                   atol=1e-6, rtol=1e-6)
    assert_close(osp_signal.welch(x, nperseg=8)[1], ad.jit(
        lambda x: jsp_signal.welch(x, nperseg=8)[1])(x), 1e-12, 1e-12)


def test_signal_vmap():
    """convolve, fftconvolve, correlate2d and detrend under ad.vmap agree with scipy row by
    row."""
    rng = _rng("signal-vmap")
    xs, k = rng.randn(3, 6), rng.randn(3)
    cases = [(lambda x: jsp_signal.convolve(x, k, mode="same"),
              lambda x: osp_signal.convolve(x, k, mode="same")),
             (lambda x: jsp_signal.fftconvolve(x, k), lambda x: osp_signal.fftconvolve(x, k)),
             (lambda x: jsp_signal.detrend(x, bp=[3]), lambda x: osp_signal.detrend(x, bp=[3]))]
    for f, ref in cases:
        assert_close(np.stack([ref(x) for x in xs]), ad.vmap(f)(xs), 1e-10, 1e-10)
    imgs, ker = rng.randn(2, 4, 5), rng.randn(2, 2)
    assert_close(np.stack([osp_signal.correlate2d(im, ker, "same") for im in imgs]),
                 ad.vmap(lambda im: jsp_signal.correlate2d(im, ker, "same"))(imgs))


# ---------------------------------------------------------------------------------------
# scipy_ndimage_test.py
# ---------------------------------------------------------------------------------------

def _fixed_ref_map_coordinates(input, coordinates, order, mode, cval=0.0):  # noqa: A002
    """JAX's reference: scipy's map_coordinates on an array padded so no coordinate reads
    outside it (scipy's own boundary handling differs for order 1 outside the array)."""
    assert order <= 1
    padding = [(max(-np.floor(c.min()).astype(int) + 1, 0),
                max(np.ceil(c.max()).astype(int) + 1 - size, 0))
               for c, size in zip(coordinates, input.shape)]
    shifted = [c + p[0] for p, c in zip(padding, coordinates)]
    pad_mode = {"nearest": "edge", "mirror": "reflect", "reflect": "symmetric"}.get(mode, mode)
    if mode == "constant":
        padded = np.pad(input, padding, mode=pad_mode, constant_values=cval)
    else:
        padded = np.pad(input, padding, mode=pad_mode)
    return osp_ndimage.map_coordinates(padded, shifted, order=order, mode=mode, cval=cval)


_MODES = [("wrap", 0), ("constant", 0), ("constant", -1), ("nearest", 0), ("mirror", 0),
          ("reflect", 0)]
_MAP_CASES = [(mode, cval, impl, shape, coords_shape, order, round_)
              for mode, cval in _MODES
              for impl in ["original", "fixed"]
              for shape in [(5,), (3, 4), (3, 4, 5)]
              for coords_shape in [(7,), (2, 3, 4)]
              for order in [0, 1]
              for round_ in [True, False]]
# a rotation through JAX's product: every mode x impl x order x round_, shapes rotating
_MAP_CASES = [c for k, c in enumerate(_MAP_CASES) if k % 3 == 0]


@pytest.mark.parametrize("i,case", list(enumerate(_MAP_CASES)),
                         ids=["-".join(map(str, c)) for c in _MAP_CASES])
def test_map_coordinates(i, case):
    """testMapCoordinates: map_coordinates against scipy (inside the array) and JAX's
    padded reference (``impl='fixed'``, coordinates up to 0.75 outside)."""
    mode, cval, impl, shape, coords_shape, order, round_ = case
    dtype = [np.float64, np.float32, np.int32][i % 3]
    coords_dtype = [np.float64, np.float32][i % 2]
    rng = (rand_uniform(_rng("map", i), 0, 1) if impl == "original"
           else rand_uniform(_rng("map", i), -0.75, 1.75))
    x = np.arange(math.prod(shape), dtype=dtype).reshape(shape)
    coords = [(size - 1) * rng(coords_shape, coords_dtype) for size in shape]
    if round_:
        coords = [c.round().astype(int) for c in coords]
    impl_fun = (osp_ndimage.map_coordinates if impl == "original"
                else _fixed_ref_map_coordinates)
    expected = impl_fun(x, coords, order=order, mode=mode, cval=cval)
    lsp_op = lambda x, c: lsp_ndimage.map_coordinates(x, c, order=order, mode=mode, cval=cval)
    actual = lsp_op(x, coords)
    if np.dtype(dtype).kind == "f":
        eps = max(np.finfo(d).eps for d in [dtype, coords_dtype])
        tol = 100 * eps
    else:
        tol = 0
    assert np.asarray(actual).dtype == dtype
    assert_close(expected, actual, rtol=tol, atol=tol)
    if i % 12 == 0:
        assert_close(actual, interp_jit(lsp_op)(x, coords), rtol=tol, atol=tol)


def test_map_coordinates_errors():
    """testMapCoordinatesErrors: JAX's errors (order > 1, unsupported modes, a wrong
    number of coordinate arrays)."""
    x = np.arange(5.0)
    c = [np.linspace(0, 5, num=3)]
    with pytest.raises(NotImplementedError, match="order"):
        lsp_ndimage.map_coordinates(x, c, order=2)
    with pytest.raises(NotImplementedError, match="mode"):
        lsp_ndimage.map_coordinates(x, c, order=1, mode="grid-wrap")
    with pytest.raises(ValueError, match="sequence of length"):
        lsp_ndimage.map_coordinates(x, [c, c], order=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_round_half(dtype, order):
    """testMapCoordinatesRoundHalf: order 0 rounds .5 like scipy, integer outputs round
    half away from zero."""
    x = np.arange(-3, 3, dtype=dtype)
    c = np.array([[.5, 1.5, 2.5, 3.5]])
    expected = osp_ndimage.map_coordinates(x, c, order=order)
    assert_close(expected, lsp_ndimage.map_coordinates(x, c, order=order), 0, 0)


def test_map_coordinates_continuous_gradients():
    """testContinuousGradients (JAX issue 3024): order-1 interpolation of y=x is exact, so
    d/d delta of mean((x - shifted)^2) is 2 delta; also under a real jit."""
    def loss(delta):
        x = np.arange(100.0)
        border = 10
        indices = anp.arange(x.size, dtype=x.dtype) + delta
        shifted = lsp_ndimage.map_coordinates(x, [indices], order=1)
        return ((x - shifted) ** 2)[border:-border].mean()

    assert_close(1.0, ad.grad(loss)(0.5))
    assert_close(2.0, ad.grad(loss)(1.0))
    assert_close(1.0, ad.jit(ad.grad(loss))(0.5))


def test_map_coordinates_vmap():
    """map_coordinates under ad.vmap over the coordinates agrees with scipy per batch."""
    x = np.arange(20.0).reshape(4, 5)
    c = _rng("map-vmap").rand(3, 2, 6) * 3
    expected = np.stack([osp_ndimage.map_coordinates(x, list(ci), order=1) for ci in c])
    out = ad.vmap(lambda ci: lsp_ndimage.map_coordinates(x, [ci[0], ci[1]], order=1))(c)
    assert_close(expected, out)


def test_map_coordinates_check_grads():
    """Derivatives with respect to the values and the coordinates (away from the kinks of
    linear interpolation) against central differences."""
    rng = _rng("map-grad")
    x = rng.randn(4, 5)
    coords = [np.array([0.3, 1.6, 2.2]), np.array([0.4, 3.7, 1.1])]
    f = lambda x, c0, c1: lsp_ndimage.map_coordinates(x, [c0, c1], order=1, mode="nearest")
    ad.check_grads(f, (x, *coords), order=1, modes=["fwd", "rev"], atol=1e-6, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# scipy_optimize_test.py
# ---------------------------------------------------------------------------------------

def rosenbrock(np):
    def func(x):
        return np.sum(100. * np.diff(x) ** 2 + (1. - x[:-1]) ** 2)
    return func


def himmelblau(np):
    def func(p):
        x, y = p
        return (x ** 2 + y - 11.) ** 2 + (x + y ** 2 - 7.) ** 2
    return func


def matyas(np):
    def func(p):
        x, y = p
        return 0.26 * (x ** 2 + y ** 2) - 0.48 * x * y
    return func


def eggholder(np):
    def func(p):
        x, y = p
        return - (y + 47) * np.sin(np.sqrt(np.abs(x / 2. + y + 47.))) - x * np.sin(
            np.sqrt(np.abs(x - (y + 47.))))
    return func


def zakharov_from_indices(x, ii):
    sum1 = (x ** 2).sum()
    sum2 = (0.5 * ii * x).sum()
    return sum1 + sum2 ** 2 + sum2 ** 4


_BFGS_CASES = [(rosenbrock, np.zeros(2, dtype="float32")),
               (himmelblau, np.ones(2, dtype="float32")),
               (matyas, np.ones(2) * 6.),
               (eggholder, np.ones(2) * 100.)]


@pytest.mark.parametrize("func,x0", _BFGS_CASES, ids=[c[0].__name__ for c in _BFGS_CASES])
def test_bfgs_minimize(func, x0):
    """TestBFGS.test_minimize: BFGS (under jit) lands where scipy's BFGS does."""
    def min_op(x0):
        return lsp_optimize.minimize(func(anp), x0, method="BFGS",
                                     options=dict(maxiter=None, gtol=1e-6)).x

    jitted = ad.jit(min_op) if func is rosenbrock else interp_jit(min_op)
    jax_res = jitted(x0)
    scipy_res = scipy.optimize.minimize(func(np), x0.astype("float64"), method="BFGS").x
    assert_close(scipy_res, jax_res, atol=2e-4, rtol=2e-4)


def test_bfgs_fixes4594():
    """TestBFGS.test_fixes4594: a badly scaled quadratic converges to 0."""
    A = anp.eye(2) * 1e4

    def f(x):
        return anp.mean((A @ x) ** 2)
    results = lsp_optimize.minimize(f, anp.ones(2), method="BFGS")
    assert_close(np.zeros(2), results.x, atol=1e-6, rtol=1e-6)


def test_bfgs_zakharov():
    """TestBFGS.test_zakharov: a jitted objective, minimized to below 1e-6."""
    def zakharov_fn(x):
        ii = anp.arange(1, len(x) + 1, step=1, dtype=x.dtype)
        return zakharov_from_indices(x=x, ii=ii)

    x0 = anp.array([600.0, 700.0, 200.0, 100.0, 90.0, 1e4])
    res = lsp_optimize.minimize(fun=ad.jit(zakharov_fn), x0=x0, method="BFGS")
    assert float(res.fun) < 1e-6


def test_bfgs_bad_initial_values():
    """TestBFGS.test_minimize_bad_initial_values: failed line searches handled as scipy's."""
    initial_value = np.array([92, 0.001])
    opt_fn = himmelblau(anp)
    jax_res = lsp_optimize.minimize(fun=opt_fn, x0=initial_value, method="BFGS").x
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        scipy_res = scipy.optimize.minimize(
            fun=lambda x: float(opt_fn(x)), jac=lambda x: np.asarray(ad.grad(opt_fn)(x)),
            method="BFGS", x0=initial_value).x
    assert_close(scipy_res, jax_res, atol=2e-5, rtol=1e-7)


def test_bfgs_args_must_be_tuple():
    """TestBFGS.test_args_must_be_tuple."""
    A = anp.eye(2) * 1e4

    def f(x):
        return anp.mean((A @ x) ** 2)
    with pytest.raises(TypeError, match="args .* must be a tuple"):
        lsp_optimize.minimize(f, anp.ones(2), args=45, method="BFGS")


_LBFGS_CASES = [(rosenbrock, np.zeros(2)), (himmelblau, np.zeros(2)),
                (matyas, np.ones(2) * 6.), (eggholder, np.ones(2) * 100.)]
_LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


@pytest.mark.parametrize("func,x0", _LBFGS_CASES, ids=[c[0].__name__ for c in _LBFGS_CASES])
def test_lbfgs_minimize(func, x0):
    """TestLBFGS.test_minimize: L-BFGS (under jit) against scipy's L-BFGS-B (no bounds)."""
    def min_op(x0):
        return lsp_optimize.minimize(func(anp), x0, method=_LBFGS,
                                     options=dict(maxiter=None, gtol=1e-7)).x

    jax_res = interp_jit(min_op)(x0)
    scipy_res = scipy.optimize.minimize(func(np), x0.astype("float64"), method="L-BFGS-B").x
    if func is matyas:            # scipy does badly here: compare with the true minimum
        assert_close(np.zeros_like(jax_res), jax_res, atol=1e-7, rtol=0)
    elif func is eggholder:       # neither finds the true minimum: loose agreement
        assert_close(scipy_res, jax_res, atol=1e-3, rtol=1e-7)
    else:
        assert_close(scipy_res, jax_res, atol=2e-5, rtol=1e-7)


def test_lbfgs_complex_sphere():
    """TestLBFGS.test_minimize_complex_sphere: L-BFGS over complex x (as pairs of reals)."""
    z0 = np.array([1., 2. - 3.j, 4., -5.j])

    def f(z):
        return anp.real(anp.dot(anp.conj(z - z0), z - z0))

    def min_op(x0):
        return lsp_optimize.minimize(f, x0, method=_LBFGS, options=dict(gtol=1e-6)).x

    jax_res = interp_jit(min_op)(np.zeros_like(z0))
    assert_close(z0, jax_res, atol=1e-6, rtol=1e-6)


def test_lbfgs_complex_rosenbrock():
    """TestLBFGS.test_complex_rosenbrock: Rosenbrock of (Re z, Im z); minimum at 1 + 1j."""
    complex_dim = 5
    f_re = rosenbrock(anp)

    def f(z):
        return f_re(anp.concatenate([anp.real(z), anp.imag(z)]))

    init = np.zeros(complex_dim, dtype=complex)
    expect = np.ones(complex_dim) + 1j * np.ones(complex_dim)

    def min_op(z0):
        return lsp_optimize.minimize(f, z0, method=_LBFGS, options=dict(gtol=1e-6)).x

    assert_close(expect, interp_jit(min_op)(init), atol=2e-5, rtol=0)


# ---------------------------------------------------------------------------------------
# ode_test.py
# ---------------------------------------------------------------------------------------

def _check_grads_rev2(f, args, tol):
    """JAX's ``check_grads(f, args, modes=["rev"], order=2)``: the VJP of ``f`` and the VJP
    of ``args -> vjp(f, *args)(f(*args))`` (reverse over reverse), each against forward
    mode (and, for ``f``, central differences). (``ad.check_grads``' order 2 takes the
    second derivative as reverse over *forward*, which would transpose the forward-mode
    solver's loops.)"""
    def f_vjp(*a):
        out, back = ad.vjp(f, *a)
        return back(out)
    ad.check_grads(f, args, order=1, modes=["fwd", "rev"], atol=tol, rtol=tol)
    ad.check_grads(f_vjp, args, order=1, modes=["rev"], atol=tol, rtol=tol)


def _check_against_scipy(fun, y0, tspace, *args, tol=1e-1):
    y0, tspace = np.array(y0), np.array(tspace)
    scipy_result = osp_integrate.odeint(functools.partial(fun, np), y0, tspace, args)
    result = odeint(functools.partial(fun, anp), anp.array(y0), anp.array(tspace), *args)
    assert_close(scipy_result, result, atol=tol, rtol=tol)


def test_ode_pend_grads():
    """ODETest.test_pend_grads: a damped pendulum against scipy; rev-mode check_grads of
    order 2 with respect to y0, t and the parameters."""
    def pend(_np, y, _, m, g):
        theta, omega = y
        return [omega, -m * omega - g * _np.sin(theta)]

    y0 = [np.pi - 0.1, 0.0]
    ts = np.linspace(0., 1., 11)
    args = (0.25, 9.8)
    tol = 1e-3
    _check_against_scipy(pend, y0, ts, *args, tol=tol)
    integrate = functools.partial(odeint, functools.partial(pend, anp))
    _check_grads_rev2(integrate, (y0, ts, *args), tol)


def test_ode_pytree_state():
    """ODETest.test_pytree_state: y(t) a tuple of arrays; order-2 rev check_grads."""
    def dynamics(y, _t):
        return ad.tree_util.tree_map(anp.negative, y)

    y0 = (np.array(-0.1), np.array([[[0.1]]]))
    ts = np.linspace(0., 1., 11)
    _check_grads_rev2(functools.partial(odeint, dynamics), (y0, ts), 1e-3)


def test_ode_weird_time_pendulum_grads():
    """ODETest.test_weird_time_pendulum_grads: dynamics depending on t."""
    def dynamics(_np, y, t):
        return _np.array([y[1] * -t, -1 * y[1] - 9.8 * _np.sin(y[0])])

    y0 = [np.pi - 0.1, 0.0]
    ts = np.linspace(0., 1., 11)
    _check_against_scipy(dynamics, y0, ts, tol=1e-3)
    integrate = functools.partial(odeint, functools.partial(dynamics, anp))
    _check_grads_rev2(integrate, (y0, ts), 1e-3)


def test_ode_decay():
    """ODETest.test_decay: vector state, two vector parameters, t away from 0 (sqrt t)."""
    def decay(_np, y, t, arg1, arg2):
        return -_np.sqrt(t) - y + arg1 - _np.mean((y + arg2) ** 2)

    rng = _rng("decay")
    args = (rng.randn(3), rng.randn(3))
    y0 = rng.randn(3)
    ts = np.linspace(0.1, 0.2, 4)
    _check_against_scipy(decay, y0, ts, *args, tol=1e-3)
    integrate = functools.partial(odeint, functools.partial(decay, anp))
    _check_grads_rev2(integrate, (y0, ts, *args), 1e-3)


@pytest.mark.parametrize("y0,args", [(np.linspace(0.1, 0.9, 10), (0.1, 0.2)),
                                     (np.linspace(1.1, 10.9, 10), (0.1, 0.3))],
                         ids=["swoop", "swoop_bigger"])
def test_ode_swoop(y0, args):
    """ODETest.test_swoop and test_swoop_bigger: scalar parameters, two output times."""
    def swoop(_np, y, t, arg1, arg2):
        return _np.array(y - _np.sin(t) - _np.cos(t) * arg1 + arg2)

    ts = np.array([0.1, 0.2])
    _check_against_scipy(swoop, y0, ts, *args, tol=1e-3)
    integrate = functools.partial(odeint, functools.partial(swoop, anp))
    _check_grads_rev2(integrate, (y0, ts, *args), 1e-3)


def test_ode_vmap_grad():
    """ODETest.test_odeint_vmap_grad (JAX issue 2531): grad through vmap of odeint equals
    the sum of the unbatched gradients; and d/dx of x e^{0.5} is e^{0.5}."""
    def dx_dt(x, *args):
        return 0.1 * x

    def f(x, y):
        y = odeint(dx_dt, anp.stack([x, y]), anp.array([0., 5.]))
        return y[-1].sum()

    def g(x):
        y0_arr = anp.stack([anp.stack([x, anp.asarray(0.1)]), anp.stack([x, anp.asarray(0.2)])])
        y = ad.vmap(lambda y0: odeint(dx_dt, y0, anp.array([0., 5.])))(y0_arr)
        return y[:, -1].sum()

    ans = ad.grad(g)(2.)
    expected = ad.grad(f, 0)(2., 0.1) + ad.grad(f, 0)(2., 0.2)
    assert_close(expected, ans, atol=5e-15, rtol=2e-15)
    assert_close(2 * np.exp(0.5), ans, atol=1e-7, rtol=1e-7)


def test_ode_disable_jit_with_vmap():
    """ODETest.test_disable_jit_odeint_with_vmap (JAX issue 2598): y' = y, y(0) = 0."""
    with ad.disable_jit():
        t = anp.array([0.0, 1.0])
        x0 = np.arange(10.0).reshape(5, 2) * 0.1
        out = ad.vmap(lambda x0: odeint(lambda x, _t: x, x0, t))(x0)
    assert_close(np.stack([x0, x0 * np.e], axis=1), out, atol=1e-7, rtol=1e-7)


def test_ode_grad_closure():
    """ODETest.test_grad_closure (JAX issue 2718): func closes over the differentiated x."""
    def experiment(x):
        def model(y, t):
            return -x * y
        return odeint(model, 1., np.arange(0, 10, 0.1))[-1]

    ad.check_grads(experiment, (0.01,), modes=["rev"], order=1)
    assert_close(-9.9 * np.exp(-0.099), ad.grad(experiment)(0.01), atol=1e-6, rtol=1e-6)


def test_ode_grad_closure_with_vmap():
    """ODETest.test_grad_closure_with_vmap: vmap of value_and_grad of a jitted solve with
    a closed-over parameter, against central differences."""
    @ad.jit
    def experiment(x):
        def model(y, t):
            return -x * y
        return odeint(model, 1., np.arange(0, 10, 0.1))[-1]

    t = np.arange(0., 1., 0.1)
    h, g = ad.vmap(ad.value_and_grad(experiment))(t)
    expected_h = np.exp(-9.9 * t)
    expected_g = -9.9 * np.exp(-9.9 * t)
    assert_close(expected_h, h, atol=1e-6, rtol=1e-6)
    assert_close(expected_g, g, atol=1e-5, rtol=1e-5)
    fd = (experiment(t[3] + 5e-6) - experiment(t[3] - 5e-6)) / 1e-5
    assert_close(fd, g[3], atol=1e-2, rtol=1e-2)


def test_ode_forward_mode():
    """ODETest.test_forward_mode_error, by design different: JAX refuses jacfwd of odeint;
    autodiff's forward mode differentiates the solver and agrees with jacrev (the
    adjoint) and with d/dk sum(exp(k t))."""
    ts = np.linspace(0, 1., 50)

    def f(k):
        return odeint(lambda x, t: k * x, 1., anp.asarray(ts)).sum()

    fwd = ad.jacfwd(f)(3.)
    rev = ad.jacrev(f)(3.)
    assert_close(np.sum(ts * np.exp(3. * ts)), fwd, atol=1e-5, rtol=1e-6)
    assert_close(rev, fwd, atol=1e-5, rtol=1e-6)


def test_ode_closure_nondiff():
    """ODETest.test_closure_nondiff (JAX issue 3584): d/dz0 sum_t z0 e^t."""
    def dz_dt(z, t):
        return anp.stack([z[0], z[1]])

    def f(z):
        return anp.sum(odeint(dz_dt, z, anp.arange(10.)))

    expected = np.full(2, np.sum(np.exp(np.arange(10.))))
    assert_close(expected, ad.grad(f)(np.ones(2)), atol=0, rtol=1e-6)


def test_ode_complex():
    """ODETest.test_complex_odeint (JAX issues 3986, 8757): a complex state and parameter;
    the value against the closed form y0 exp(alpha (1 - e^-t)); rev check_grads."""
    def dy_dt(y, t, alpha):
        return alpha * y * anp.exp(-t).astype(y.dtype)

    def f(y0, ts, alpha):
        return odeint(dy_dt, y0, ts, alpha).real

    alpha = 3 + 4j
    y0 = 1 + 2j
    ts = np.linspace(0., 1., 11)
    expected = y0 * np.exp(alpha * (1 - np.exp(-ts)))
    assert_close(expected, odeint(dy_dt, y0, ts, alpha), atol=1e-6, rtol=1e-6)
    _check_grads_rev2(f, (y0, ts, alpha), 1e-3)


def test_ode_hmax():
    """ODETest.test_hmax: with hmax=1 the solver sees the pulses of a piecewise rhs."""
    def rhs(y, t):
        return anp.piecewise(
            t, [t <= 2., (t >= 5.) & (t <= 7.)],
            [lambda s: anp.array(1.), lambda s: anp.array(-1.), lambda s: anp.array(0.)])

    ys = odeint(func=rhs, y0=anp.array(0.), t=anp.array([0., 5., 10.]), hmax=1.)
    assert abs(float(ys[1]) - 2.) < 1e-4
    assert abs(float(ys[2])) < 1e-4
