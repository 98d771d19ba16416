"""``numpy.fft`` for concrete and traced values: differentiable, batchable and compiled.

On plain numpy inputs every function is numpy's own (the same values and dtypes). On
traced inputs the transform is one ``fft`` primitive (:mod:`autodiff.primitives.fft`)
over the transformed axes, moved to the end and back, with numpy's ``n``/``s`` (crop or
zero-pad), ``axis``/``axes`` and ``norm`` ("backward", "ortho", "forward") composed
around it. dtypes are numpy 2's: float32 and complex64 transform in single precision
(-> complex64, or float32 for ``irfft``), everything else in double. Derivatives follow
docs/complex.md: ``grad`` of a real loss is the vjp with cotangent 1.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> x = np.array([1.0, 2.0, 0.0, -1.0])
>>> anp.fft.rfft(x)
array([2.+0.j, 1.-3.j, 0.+0.j])
>>> # d/dx of the spectral energy Σ|X_k|² (Parseval: n Σ x² for a full spectrum)
>>> ad.grad(lambda x: anp.sum(anp.abs(anp.fft.fft(x)) ** 2))(x)
array([ 8., 16.,  0., -8.])
"""
import math

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer, complex_dtype, user_source
from ..errors import DTypeError, ShapeError
from ._base import npfunc, asarray, dtype_of, shape_of

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


# ============================================================================
# Argument checks (numpy's rules, typed errors)
# ============================================================================

def _check_norm(norm):
    if norm not in _NORMS:
        raise ShapeError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".',
                         source=user_source())
    return norm or "backward"


def _swap_direction(norm):
    # hfft/ihfft are irfft/rfft of the conjugate with the normalization's direction swapped
    return {"backward": "forward", "ortho": "ortho", "forward": "backward"}[_check_norm(norm)]


def _one_axis_check(name, axis):
    # JAX's wording: a sequence of axes belongs to the n-dimensional function
    if isinstance(axis, (list, tuple)):
        hint = (f"Please use autodiff.numpy.fft.{name}n" if name not in ("hfft", "ihfft")
                else "Apply it once per axis")
        raise ShapeError(f"autodiff.numpy.fft.{name} does not support multiple axes. {hint}. "
                         f"Got axis = {axis!r}.", source=user_source())


def _axis(axis, nd):
    a = int(axis)
    if not -nd <= a < nd:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {nd}",
                         source=user_source())
    return a % nd


def _length(n, what="FFT data points"):
    n = int(n)
    if n < 1:
        raise ShapeError(f"Invalid number of {what} ({n}) specified.", source=user_source())
    return n


def _real_dtype(dt, name):
    dt = np.dtype(dt)
    if dt.kind == "c":
        raise DTypeError(f"{name}: the input must be real (numpy's {name} refuses complex "
                         f"input); take anp.real(x) first, or use anp.fft.fft",
                         source=user_source())
    return np.dtype(np.float32) if dt == np.float32 else np.dtype(np.float64)


def _cook_nd(shape, s, axes, invreal):
    """numpy's ``_cook_nd_args``: the lengths ``s`` and the (normalized) ``axes``."""
    nd = len(shape)
    shapeless = s is None
    if axes is not None:
        axes = [_axis(a, nd) for a in (axes if isinstance(axes, (tuple, list)) else (axes,))]
    if s is None:
        s = list(shape) if axes is None else [shape[a] for a in axes]
    else:
        s = list(s) if isinstance(s, (tuple, list)) else [s]
    if axes is None:
        if len(s) > nd:
            raise ShapeError(f"s {tuple(s)} has more entries than the array has axes ({nd})",
                             source=user_source())
        axes = list(range(nd - len(s), nd))
    if len(s) != len(axes):
        raise ShapeError("Shape and axes have different lengths.", source=user_source())
    if invreal and shapeless and axes:
        s[-1] = (shape[axes[-1]] - 1) * 2
    s = [shape[a] if n is None or n == -1 else _length(n) for n, a in zip(s, axes)]
    return s, axes


# ============================================================================
# The traced path: resize, move the axes last, one fft primitive, move back, scale
# ============================================================================

def _resize(x, axis, n):
    """numpy's ``n``: crop or zero-pad axis ``axis`` of ``x`` to ``n``."""
    m = shape_of(x)[axis]
    if n < m:
        return P.slice_in_dim(x, 0, n, axis)
    if n > m:
        cfg = [(0, 0, 0)] * len(shape_of(x))
        cfg[axis] = (0, n - m, 0)
        return P.pad(x, P.scalar(0, dtype_of(x)), cfg)
    return x


def _scale(y, norm, N, inverse):
    """The normalization beyond the primitive's ("backward": the inverse divides by N)."""
    if norm == "backward" or N == 1:
        return y
    if norm == "ortho":
        f = math.sqrt(N) if inverse else 1.0 / math.sqrt(N)
    else:                                   # "forward"
        f = float(N) if inverse else 1.0 / N
    return P.mul(y, f)


def _transform(x, kind, s, axes, norm):
    """``kind`` (FFT, IFFT, RFFT, IRFFT) over distinct ``axes`` with lengths ``s`` (the
    output lengths; for IRFFT the last one is the real output's)."""
    for i, (a, n) in enumerate(zip(axes, s)):
        x = _resize(x, a, n // 2 + 1 if kind == "IRFFT" and i == len(axes) - 1 else n)
    nd = len(shape_of(x))
    perm = [i for i in range(nd) if i not in axes] + list(axes)
    identity = perm == list(range(nd))
    if not identity:
        x = P.transpose(x, tuple(perm))
    y = P.fft.fft(x, kind, s)
    if not identity:
        y = P.transpose(y, tuple(int(i) for i in np.argsort(perm)))
    return _scale(y, norm, math.prod(s), kind in ("IFFT", "IRFFT"))


def _sequential(x, kind, s, axes, norm):
    """Repeated axes (numpy allows ``axes=(0, 0)``): numpy's one-axis-at-a-time order."""
    if kind in ("FFT", "IFFT"):
        for a, n in reversed(list(zip(axes, s))):
            x = _transform(x, kind, [n], [a], norm)
        return x
    if kind == "RFFT":
        x = _transform(x, "RFFT", [s[-1]], [axes[-1]], norm)
        for a, n in reversed(list(zip(axes[:-1], s[:-1]))):
            x = _transform(x, "FFT", [n], [a], norm)
        return x
    for a, n in zip(axes[:-1], s[:-1]):
        x = _transform(x, "IFFT", [n], [a], norm)
    return _transform(x, "IRFFT", [s[-1]], [axes[-1]], norm)


def _apply(x, kind, s, axes, norm):
    if not axes:
        return x
    if len(set(axes)) < len(axes):
        return _sequential(x, kind, s, axes, norm)
    return _transform(x, kind, s, axes, norm)


def _prepare(a, kind, name):
    x = asarray(a)
    dt = dtype_of(x)
    if kind == "RFFT":
        want = _real_dtype(dt, name)
    else:
        want = complex_dtype(dt)
    if len(shape_of(x)) == 0:
        raise ShapeError(f"{name}: the input must have at least one axis, got a 0-d array",
                         source=user_source())
    return P.convert(x, want) if isinstance(x, Tracer) else x


def _one_axis(name, kind, np_fn):
    def f(a, n=None, axis=-1, norm=None, out=None):
        norm_ = _check_norm(norm)
        _one_axis_check(name, axis)
        x = _prepare(a, kind, name)
        ax = _axis(axis, len(shape_of(x)))
        m = shape_of(x)[ax]
        if n is None and m == 0 and kind in ("FFT", "IFFT") and out is None:
            # an empty axis transforms to an empty axis (JAX; numpy refuses n = 0)
            return anp.astype(x, complex_dtype(dtype_of(x)))
        if n is None:
            n = 2 * (m - 1) if kind == "IRFFT" else m
        n = _length(n)
        if not isinstance(x, Tracer):
            return np_fn(x, n=n, axis=axis, norm=norm, out=out)
        _no_out(out, name)
        return _apply(x, kind, [n], [ax], norm_)
    f.__name__ = f.__qualname__ = name
    return npfunc()(f)


def _n_axes(name, kind, np_fn, default_axes=None):
    def f(a, s=None, axes=default_axes, norm=None, out=None):
        norm_ = _check_norm(norm)
        x = _prepare(a, kind, name)
        shape = shape_of(x)
        s_, axes_ = _cook_nd(shape, s, axes, kind == "IRFFT")
        if not axes_ and kind in ("RFFT", "IRFFT"):
            raise ShapeError(f"{name}: axes must name at least one axis (the real transform "
                             f"halves the last of them)", source=user_source())
        if not isinstance(x, Tracer):
            return np_fn(x, s=s, axes=axes, norm=norm, out=out)
        _no_out(out, name)
        if not axes_:
            return asarray(a)                   # numpy: no axes, the input as it is
        return _apply(x, kind, s_, axes_, norm_)
    f.__name__ = f.__qualname__ = name
    return npfunc()(f)


def _no_out(out, name):
    if out is not None:
        raise ShapeError(f"{name}: out= is not supported on traced values (arrays are "
                         f"immutable under a transform); use the returned value",
                         source=user_source())


_ONE = {"fft": ("FFT", np.fft.fft), "ifft": ("IFFT", np.fft.ifft),
        "rfft": ("RFFT", np.fft.rfft), "irfft": ("IRFFT", np.fft.irfft)}
_ND = {"fftn": ("FFT", np.fft.fftn), "ifftn": ("IFFT", np.fft.ifftn),
       "rfftn": ("RFFT", np.fft.rfftn), "irfftn": ("IRFFT", np.fft.irfftn)}
_TWO = {"fft2": ("FFT", np.fft.fft2), "ifft2": ("IFFT", np.fft.ifft2),
        "rfft2": ("RFFT", np.fft.rfft2), "irfft2": ("IRFFT", np.fft.irfft2)}

fft = _one_axis("fft", *_ONE["fft"])
ifft = _one_axis("ifft", *_ONE["ifft"])
rfft = _one_axis("rfft", *_ONE["rfft"])
irfft = _one_axis("irfft", *_ONE["irfft"])
fftn = _n_axes("fftn", *_ND["fftn"])
ifftn = _n_axes("ifftn", *_ND["ifftn"])
rfftn = _n_axes("rfftn", *_ND["rfftn"])
irfftn = _n_axes("irfftn", *_ND["irfftn"])
fft2 = _n_axes("fft2", *_TWO["fft2"], default_axes=(-2, -1))
ifft2 = _n_axes("ifft2", *_TWO["ifft2"], default_axes=(-2, -1))
rfft2 = _n_axes("rfft2", *_TWO["rfft2"], default_axes=(-2, -1))
irfft2 = _n_axes("irfft2", *_TWO["irfft2"], default_axes=(-2, -1))


@npfunc()
def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The FFT of a Hermitian-symmetric signal given by its first half: ``irfft`` of the
    conjugate, times ``n`` (numpy's ``hfft``; real output of length ``n``)."""
    new_norm = _swap_direction(norm)
    _one_axis_check("hfft", axis)
    x = _prepare(a, "IRFFT", "hfft")
    ax = _axis(axis, len(shape_of(x)))
    if n is None:
        n = 2 * (shape_of(x)[ax] - 1)
    n = _length(n)
    if not isinstance(x, Tracer):
        return np.fft.hfft(x, n=n, axis=axis, norm=norm, out=out)
    _no_out(out, "hfft")
    return _apply(P.conj(x), "IRFFT", [n], [ax], new_norm)


@npfunc()
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of :func:`hfft`: the conjugate of ``rfft`` with the normalization's
    direction swapped (numpy's ``ihfft``)."""
    new_norm = _swap_direction(norm)
    _one_axis_check("ihfft", axis)
    x = _prepare(a, "RFFT", "ihfft")
    ax = _axis(axis, len(shape_of(x)))
    n = _length(shape_of(x)[ax] if n is None else n)
    if not isinstance(x, Tracer):
        return np.fft.ihfft(x, n=n, axis=axis, norm=norm, out=out)
    _no_out(out, "ihfft")
    return P.conj(_apply(x, "RFFT", [n], [ax], new_norm))


# ============================================================================
# Frequencies and shifts
# ============================================================================

def _freq_scale(k, n, d, dtype):
    # numpy: k * (1 / (n d)), with k the integer bin numbers
    if isinstance(d, Tracer):
        dd = P.convert(anp.asarray(d), dtype)
        return anp.multiply(k.astype(dtype), anp.divide(1.0, anp.multiply(dd, float(n))))
    return (k * (1.0 / (n * d))).astype(dtype)


def _freq_args(name, n, d, dtype):
    if isinstance(n, (list, tuple)):
        raise ShapeError(f"The n argument of autodiff.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.", source=user_source())
    if isinstance(d, (list, tuple)):
        raise ShapeError(f"The d argument of autodiff.numpy.fft.{name} only takes a single "
                         f"value. Got d = {list(d)}.", source=user_source())
    if dtype is None:
        dt = dtype_of(d) if isinstance(d, Tracer) else np.result_type(d, np.float64)
        dtype = dt if np.dtype(dt).kind in "fc" else np.float64
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        raise DTypeError(f"{name}: dtype must be a float or complex dtype, got {dtype}",
                         source=user_source())
    return _length(n, "samples"), dtype


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``: ``k / (n d)``
    for ``k = 0, 1, …, n/2 - 1, -n/2, …, -1`` (numpy's ``fftfreq``; ``d`` may be traced;
    ``dtype``, JAX's keyword, the result's dtype, default float64).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.fft.fftfreq(4, 0.5)
    array([ 0. ,  0.5, -1. , -0.5])
    >>> anp.fft.fftfreq(4, dtype=np.float32).dtype
    dtype('float32')
    """
    n, dtype = _freq_args("fftfreq", n, d, dtype)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)]).astype(np.int64)
    if not isinstance(d, Tracer):
        return np.fft.fftfreq(n, d, device=device).astype(dtype, copy=False)
    return _freq_scale(k, n, d, dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of ``rfft``: ``k / (n d)`` for ``k = 0 … n // 2`` (numpy's
    ``rfftfreq``; ``d`` may be traced; ``dtype``, JAX's keyword, the result's dtype).

    >>> import autodiff.numpy as anp
    >>> anp.fft.rfftfreq(5)
    array([0. , 0.2, 0.4])
    """
    n, dtype = _freq_args("rfftfreq", n, d, dtype)
    if not isinstance(d, Tracer):
        return np.fft.rfftfreq(n, d, device=device).astype(dtype, copy=False)
    return _freq_scale(np.arange(0, n // 2 + 1, dtype=np.int64), n, d, dtype)


def _shift(x, axes, sign):
    x = asarray(x)
    shape = shape_of(x)
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(_axis(a, len(shape)) for a in axes)
    if not axes:
        return x
    return anp.roll(x, tuple(sign * (shape[a] // 2) for a in axes), axes)


@npfunc(np.fft.fftshift)
def fftshift(x, axes=None):
    """The zero-frequency bin moved to the center (numpy's ``fftshift``: a roll by ``n // 2``
    along each of ``axes``, all by default)."""
    return _shift(x, axes, 1)


@npfunc(np.fft.ifftshift)
def ifftshift(x, axes=None):
    """The inverse of :func:`fftshift` (a roll by ``-(n // 2)``)."""
    return _shift(x, axes, -1)


# one-line docstrings naming numpy's function; the module docstring says what differs
_DOCS = {
    "fft": "The 1-D discrete Fourier transform along ``axis`` (numpy's ``fft``).",
    "ifft": "The 1-D inverse discrete Fourier transform along ``axis`` (numpy's ``ifft``).",
    "rfft": "The 1-D transform of real input, the ``n // 2 + 1`` non-negative frequency bins "
            "(numpy's ``rfft``).",
    "irfft": "The inverse of ``rfft``: real output of length ``n`` (default ``2 (m - 1)``) "
             "(numpy's ``irfft``).",
    "fftn": "The N-D discrete Fourier transform over ``axes`` (numpy's ``fftn``).",
    "ifftn": "The N-D inverse discrete Fourier transform over ``axes`` (numpy's ``ifftn``).",
    "rfftn": "The N-D transform of real input, halved along the last of ``axes`` (numpy's "
             "``rfftn``).",
    "irfftn": "The inverse of ``rfftn`` (numpy's ``irfftn``).",
    "fft2": "The 2-D discrete Fourier transform over the last two axes (numpy's ``fft2``).",
    "ifft2": "The 2-D inverse discrete Fourier transform (numpy's ``ifft2``).",
    "rfft2": "The 2-D transform of real input (numpy's ``rfft2``).",
    "irfft2": "The inverse of ``rfft2`` (numpy's ``irfft2``).",
}
for _name, _doc in _DOCS.items():
    _f = globals()[_name]
    _f.__doc__ = (_doc + "\n\n    Traced input binds one ``fft`` primitive (linear: jvp, vjp, vmap and jit "
                  "work through it).\n\n    >>> import numpy as np, autodiff as ad, "
                  "autodiff.numpy as anp\n    >>> x = np.ones((2, 4))\n"
                  f"    >>> y, pullback = ad.vjp(anp.fft.{_name}, x)      # traced\n"
                  f"    >>> np.allclose(y, np.fft.{_name}(x))\n    True\n")
del _name, _doc, _f
