"""``jax.image``: resampling images, ``resize`` and ``scale_and_translate``.

Each resized axis is a matrix product: a ``(input size, output size)`` matrix of kernel
weights (half-pixel centres; the kernel widened by the scale when downsampling with
``antialias``; each output's weights normalised to sum to one; outputs whose centre falls
outside the input get zero) is contracted with the image along that axis. Everything is
an ``autodiff.numpy`` composition, so ``jit``, ``vmap`` and derivatives with respect to the
image (and, for ``scale_and_translate``, the scale and translation) work.

>>> import numpy as np
>>> from autodiff.image import resize
>>> resize(np.array([0.0, 1.0, 2.0, 3.0]), (8,), "linear")
array([0.  , 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.  ])
"""
import enum
import math
import operator

import numpy as np

from . import numpy as anp
from .numpy._base import float_type, result_type

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]

# the threshold below which a column's weights are taken as all zero (JAX's constant)
_TINY_WEIGHT_SUM = 1000.0 * float(np.finfo(np.float32).eps)


class ResizeMethod(enum.Enum):
    """The resampling kernels of ``resize`` and ``scale_and_translate``.

    ``NEAREST`` (nearest neighbour, ``resize`` only), ``LINEAR`` (triangle kernel),
    ``LANCZOS3`` and ``LANCZOS5`` (Lanczos kernels of radius 3 and 5), ``CUBIC`` (Keys
    cubic kernel, a = -0.5), ``CUBIC_PYTORCH`` (``CUBIC`` with ``antialias``; without it
    the a = -0.75 kernel with the edge pixels repeated, as PyTorch and OpenCV do) and
    ``AREA`` (each output pixel averages the input area it covers).

    >>> ResizeMethod.from_string("bilinear")
    <ResizeMethod.LINEAR: 1>
    """

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s):
        """The method a string names: ``'nearest'``, ``'linear'`` (``'bilinear'``,
        ``'trilinear'``, ``'triangle'``), ``'cubic'`` (``'bicubic'``, ``'tricubic'``),
        ``'cubic-pytorch'`` (``'bicubic-pytorch'``), ``'lanczos3'``, ``'lanczos5'``,
        ``'area'``; any other raises ``ValueError``.

        >>> ResizeMethod.from_string("tricubic")
        <ResizeMethod.CUBIC: 4>
        """
        method = _NAMES.get(s) if isinstance(s, str) else None
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


def _method(method):
    if isinstance(method, ResizeMethod):
        return method
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    raise TypeError(f"method must be a ResizeMethod or a string, got {method!r}")


# ---------------------------------------------------------------- kernels (x = |distance| >= 0)

def _triangle(x):
    return anp.maximum(0.0, 1.0 - x)


def _keys_cubic(x):
    near = (1.5 * x - 2.5) * x * x + 1.0                  # |x| < 1
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0          # 1 <= |x| < 2
    return anp.where(x >= 2.0, 0.0, anp.where(x >= 1.0, far, near))


def _opencv_cubic(x):
    a = -0.75
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return anp.where(x >= 2.0, 0.0, anp.where(x >= 1.0, far, near))


def _lanczos(radius):
    def kernel(x):
        num = radius * anp.sin(np.pi * x) * anp.sin(np.pi * x / radius)
        # the limit at 0 is 1; the inner where keeps the derivative finite there
        safe = anp.where(x > 1e-3, np.pi ** 2 * x * x, 1.0)
        value = anp.where(x > 1e-3, num / safe, 1.0)
        return anp.where(x > radius, 0.0, value)
    return kernel


_AREA = object()

_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}


def _weights(m, n, scale, translation, kernel, antialias, pad, dtype):
    """The ``(m, n)`` matrix taking ``m`` input samples to ``n`` output samples along one
    axis; ``pad`` > 0 repeats the edge samples ``pad`` times beyond each end."""
    inv_scale = 1.0 / scale
    # downsampling with antialias widens the kernel into a low-pass filter
    kernel_scale = anp.maximum(inv_scale, 1.0) if antialias else 1.0
    out_pos = np.arange(n, dtype=dtype)
    # the input coordinate (in pixel indices) of each output pixel's centre
    centre = (out_pos + 0.5) * inv_scale - translation * inv_scale - 0.5
    taps = np.arange(-pad, m + pad, dtype=dtype)
    if kernel is _AREA:
        lo = out_pos * inv_scale - translation * inv_scale      # output pixel's extent
        hi = lo + inv_scale
        w = anp.maximum(0.0, anp.minimum(hi[None, :], taps[:, None] + 1.0)
                        - anp.maximum(lo[None, :], taps[:, None]))
    else:
        w = kernel(anp.abs(centre[None, :] - taps[:, None]) / kernel_scale)
    if pad:
        # the taps beyond the edges take the edge pixels' values
        fold = np.zeros((m, m + 2 * pad), dtype=dtype)
        fold[np.clip(taps.astype(np.int64), 0, m - 1), np.arange(m + 2 * pad)] = 1.0
        w = anp.matmul(fold, w)
    total = anp.sum(w, axis=0, keepdims=True)
    w = anp.where(anp.abs(total) > _TINY_WEIGHT_SUM,
                  w / anp.where(total != 0, total, 1.0), 0.0)
    if not pad:
        inside = anp.logical_and(centre >= -0.5, centre <= m - 0.5)
        w = anp.where(inside[None, :], w, 0.0)
    return w


def _inexact(x):
    x = anp.asarray(x)
    dt = float_type(x.dtype)
    return x if x.dtype == dt else anp.astype(x, dt)


def _shape(shape, ndim):
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"shape must not have negative entries, got {shape}")
    if len(shape) != ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f"{shape} vs {ndim} dimensions")
    return shape


def _scale_and_translate(x, shape, dims, scales, translations, method, antialias):
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    # PyTorch's cubic without antialias repeats the edges instead of renormalising
    pad = radius if (method is ResizeMethod.CUBIC_PYTORCH and not antialias) else 0
    for d, scale, translation in zip(dims, scales, translations):
        dtype = float_type(result_type(scale, translation))
        w = _weights(x.shape[d], shape[d], scale, translation, kernel, antialias, pad, dtype)
        w = anp.astype(w, x.dtype)
        x = anp.moveaxis(anp.tensordot(x, w, axes=([d], [0])), -1, d)
    return x


def _resize_nearest(x, shape):
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m == n:
            continue
        # float32 arithmetic, as JAX computes it
        pos = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m)
        idx = np.floor(pos / np.float32(n)).astype(np.int64)
        x = anp.take(x, idx, axis=d)
    return x


def resize(image, shape, method, antialias=True, precision=None):
    """``image`` resampled to ``shape`` (every axis; equal sizes are left as they are).

    ``method`` is a ``ResizeMethod`` or its name (see ``ResizeMethod.from_string``).
    Pixels have half-integer centres; when an axis shrinks and ``antialias`` is true the
    kernel is widened by the shrink factor (a low-pass filter), otherwise it only
    interpolates. ``'nearest'`` takes input pixel ``floor((i + 0.5) * m / n)`` and keeps
    the dtype; the other methods return floats. ``precision`` is accepted for JAX's
    signature; the contractions always run in full precision.

    >>> import numpy as np
    >>> img = np.arange(4.0).reshape(2, 2)
    >>> resize(img, (4, 4), "nearest")
    array([[0., 0., 1., 1.],
           [0., 0., 1., 1.],
           [2., 2., 3., 3.],
           [2., 2., 3., 3.]])
    >>> resize(np.arange(8.0), (4,), "linear", antialias=False)
    array([0.5, 2.5, 4.5, 6.5])
    >>> resize(np.arange(8.0), (4,), "linear")     # a (1, 3, 3, 1) / 8 low-pass filter
    array([0.71428571, 2.5       , 4.5       , 6.28571429])
    """
    del precision
    x = anp.asarray(image)
    shape = _shape(shape, x.ndim)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(x, shape)
    x = _inexact(x)
    dims = [d for d in range(x.ndim) if x.shape[d] != shape[d]]
    # every kernel interpolates, so an axis whose size stays is the identity
    scales = [1.0 if shape[d] == 0 else shape[d] / x.shape[d] for d in dims]
    return _scale_and_translate(x, shape, dims, scales, [0.0] * len(dims), method, antialias)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision=None):
    """``image`` resampled onto ``shape`` under the map ``y = x * scale + translation``
    along each of ``spatial_dims``.

    ``scale`` and ``translation`` hold one entry per spatial dim; output pixel ``i`` (centre
    ``i + 0.5``) reads the input at ``(i + 0.5 - translation) / scale``, and outputs whose
    centre falls outside the input are zero. ``method`` as in ``resize`` except
    ``'nearest'`` (``ValueError``, as in JAX). Differentiable with respect to the image,
    ``scale`` and ``translation``. ``precision`` is accepted and ignored.

    >>> import numpy as np
    >>> x = np.array([1.0, 2.0, 3.0, 4.0])
    >>> scale_and_translate(x, (4,), (0,), np.array([1.0]), np.array([1.0]), "linear")
    array([0., 1., 2., 3.])
    """
    del precision
    x = _inexact(image)
    shape = _shape(shape, x.ndim)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    dims = [operator.index(d) for d in spatial_dims]
    for d in dims:
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"spatial dim {d} is out of range for an image of rank {x.ndim}")
    dims = [d % x.ndim for d in dims]
    if len(set(dims)) != len(dims):
        raise ValueError(f"spatial_dims has repeated entries: {tuple(spatial_dims)}")
    scale, translation = anp.asarray(scale), anp.asarray(translation)
    dtype = float_type(result_type(scale, translation))
    scale, translation = anp.astype(scale, dtype), anp.astype(translation, dtype)
    if scale.shape != (len(dims),) or translation.shape != (len(dims),):
        raise ValueError(f"scale and translation must have shape ({len(dims)},), one entry "
                         f"per spatial dim; got {scale.shape} and {translation.shape}")
    for d in range(x.ndim):
        if d not in dims and shape[d] != x.shape[d]:
            raise ValueError(f"axis {d} is not a spatial dim, so its size {x.shape[d]} cannot "
                             f"change to {shape[d]}")
    if not dims:
        return x
    return _scale_and_translate(x, shape, dims, [scale[i] for i in range(len(dims))],
                                [translation[i] for i in range(len(dims))], method, antialias)
