"""``jax.scipy.fft``: the discrete cosine transform, ``dct``, ``idct``, ``dctn``, ``idctn``.

As in JAX, the type-2 transform (and its inverse, type 3) only, with ``norm`` ``None``
(``'backward'``) or ``'ortho'``; results equal ``scipy.fft``'s. Each 1-D transform
reorders the samples (even ones, then the odd ones reversed) and takes one complex FFT
of ``autodiff.numpy.fft`` with a twiddle factor (Makhoul, 1980), so ``jit``, ``vmap`` and
derivatives of every order work.

>>> import numpy as np
>>> from autodiff.scipy.fft import dct, idct
>>> x = np.array([1.0, 2.0, 0.0, -1.0])
>>> np.round(dct(x), 6)
array([ 4.      ,  5.226252, -2.828427, -2.164784])
>>> np.allclose(idct(dct(x)), x)
True
"""
import operator

import numpy as np

from .. import numpy as anp
from ..errors import ShapeError, UnsupportedError
from ..numpy._base import float_type

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name, type, norm):  # noqa: A002
    if type != 2:
        raise UnsupportedError(f"{name}: only the DCT of type 2 is implemented (JAX's "
                               f"jax.scipy.fft supports type 2 only), got type={type!r}")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"{name}: norm={norm!r} is not implemented; use None, 'backward' "
                         "or 'ortho'")


def _axis(name, axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{name}: axis {axis} is out of bounds for an array of "
                         f"dimension {ndim}")
    return axis % ndim


def _resize(x, axis, n):
    """``x`` cut or zero-padded to length ``n`` along ``axis``."""
    if n is None:
        return x
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    m = x.shape[axis]
    if n < m:
        return anp.take(x, np.arange(n), axis=axis)
    if n > m:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, n - m)
        return anp.pad(x, widths)
    return x


def _along(v, axis, ndim):
    """A 1-D array ``v`` shaped to broadcast along ``axis`` of a rank-``ndim`` array."""
    return v.reshape([-1 if a == axis else 1 for a in range(ndim)])


def _interleave_order(n):
    """The sample order whose FFT gives the DCT: even indices, then odd ones reversed."""
    return np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])


def _complex_parts(fn, x, *args):
    if anp.iscomplexobj(x):
        return fn(anp.real(x), *args) + 1j * fn(anp.imag(x), *args)
    return None


def _dct1(x, axis, norm):
    n = x.shape[axis]
    v = anp.take(x, _interleave_order(n), axis=axis)
    spectrum = anp.fft.fft(v, axis=axis)
    rdt = float_type(anp.real(spectrum).dtype)
    k = np.arange(n)
    twiddle = 2.0 * np.exp(-0.5j * np.pi * k / n)
    out = anp.real(spectrum * _along(twiddle.astype(spectrum.dtype), axis, x.ndim))
    if norm == "ortho":
        scale = np.full(n, np.sqrt(2.0 / n) / 2.0)
        scale[0] = np.sqrt(1.0 / n) / 2.0
        out = out * _along(scale.astype(rdt), axis, x.ndim)
    return out


def _idct1(x, axis, norm):
    n = x.shape[axis]
    x = anp.asarray(x)
    if x.dtype != float_type(x.dtype):
        x = anp.astype(x, float_type(x.dtype))
    # y[j] = sum_k a_k x_k cos(pi k (2j + 1) / (2n)), a the type-3 coefficients
    a = np.full(n, 1.0 / n if norm != "ortho" else np.sqrt(2.0 / n))
    a[0] = 1.0 / (2 * n) if norm != "ortho" else np.sqrt(1.0 / n)
    coef = n * a * np.exp(0.5j * np.pi * np.arange(n) / n)
    cdt = np.result_type(x.dtype, np.complex64)
    z = anp.fft.ifft(x * _along(coef.astype(cdt), axis, x.ndim), axis=axis)
    # z holds the even outputs, then the odd ones reversed: undo that order
    return anp.take(anp.real(z), np.argsort(_interleave_order(n)), axis=axis)


def dct(x, type=2, n=None, axis=-1, norm=None):  # noqa: A002
    """The discrete cosine transform of ``x`` along ``axis`` (``scipy.fft.dct``, type 2).

    ``X[k] = 2 sum_j x[j] cos(pi k (2j + 1) / (2N))``; ``norm='ortho'`` scales it to an
    orthonormal transform. ``n`` cuts or zero-pads ``x`` to that length first. Complex
    input transforms its real and imaginary parts. Other types raise
    ``UnsupportedError``, as JAX supports type 2 only.

    >>> import numpy as np
    >>> np.round(dct(np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]]), norm="ortho"), 6) + 0.0
    array([[ 1.732051,  0.      ,  0.      ],
           [ 1.732051, -1.414214,  0.      ]])
    """
    _check("dct", type, norm)
    x = anp.asarray(x)
    parts = _complex_parts(lambda p: dct(p, type, n, axis, norm), x)
    if parts is not None:
        return parts
    axis = _axis("dct", axis, x.ndim)
    return _dct1(_resize(x, axis, n), axis, norm)


def idct(x, type=2, n=None, axis=-1, norm=None):  # noqa: A002
    """The inverse of ``dct`` along ``axis`` (``scipy.fft.idct``, type 2: a scaled DCT of
    type 3), so ``idct(dct(x)) == x`` for either ``norm``.

    ``n`` cuts or zero-pads ``x`` (the coefficients) to that length first. Complex input
    transforms its real and imaginary parts; types other than 2 raise ``UnsupportedError``.

    >>> import numpy as np
    >>> idct(np.array([4.0, 0.0, 0.0, 0.0]))
    array([0.5, 0.5, 0.5, 0.5])
    """
    _check("idct", type, norm)
    x = anp.asarray(x)
    parts = _complex_parts(lambda p: idct(p, type, n, axis, norm), x)
    if parts is not None:
        return parts
    axis = _axis("idct", axis, x.ndim)
    return _idct1(_resize(x, axis, n), axis, norm)


def _axes_and_shape(name, x, s, axes):
    if s is not None:
        try:
            s = [operator.index(v) for v in s]
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = list(range(x.ndim - len(s), x.ndim)) if s is not None else list(range(x.ndim))
    else:
        try:
            axes = [operator.index(a) for a in axes]
        except TypeError:
            axes = [operator.index(axes)]
        axes = [_axis(name, a, x.ndim) for a in axes]
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: repeated axis in axes {tuple(axes)}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}: s and axes must have the same length, got {len(s)} and "
                         f"{len(axes)}")
    return axes, (s if s is not None else [None] * len(axes))


def _over_axes(name, one, x, type, s, axes, norm):  # noqa: A002
    """``one`` (``_dct1`` or ``_idct1``) along each of ``axes``, each cut or zero-padded to
    its entry of ``s`` first: ``dctn`` and ``idctn``."""
    _check(name, type, norm)
    x = anp.asarray(x)
    parts = _complex_parts(lambda p: _over_axes(name, one, p, type, s, axes, norm), x)
    if parts is not None:
        return parts
    axes, sizes = _axes_and_shape(name, x, s, axes)
    for axis, n in zip(axes, sizes):
        x = one(_resize(x, axis, n), axis, norm)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):  # noqa: A002
    """The type-2 discrete cosine transform over several axes (``scipy.fft.dctn``): ``dct``
    along each of ``axes`` (all axes by default, or the last ``len(s)``), each cut or
    zero-padded to the matching entry of ``s`` first.

    >>> import numpy as np
    >>> dctn(np.ones((2, 2)))
    array([[16.,  0.],
           [ 0.,  0.]])
    """
    return _over_axes("dctn", _dct1, x, type, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):  # noqa: A002
    """The inverse of ``dctn`` (``scipy.fft.idctn``, type 2): ``idct`` along each of
    ``axes`` (all axes by default, or the last ``len(s)``), each cut or zero-padded to the
    matching entry of ``s`` first.

    >>> import numpy as np
    >>> idctn(np.array([[16.0, 0.0], [0.0, 0.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    return _over_axes("idctn", _idct1, x, type, s, axes, norm)
