"""numpy's array manipulation routines beyond the basic ones: rotations and rolls of axes
(``rot90``, ``rollaxis``), splits along fixed axes, ``block``, ``meshgrid``, ``resize``,
``trim_zeros``, ``unstack``, ``matrix_transpose`` and ``array_equiv``. Compositions of the
basic functions: every transform handles them.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.grad(lambda x: anp.rot90(x)[0, 1])(np.zeros((2, 2)))
array([[0., 0.],
       [0., 1.]])
"""
import builtins

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer
from ._base import npfunc, asarray, shape_of, ndim, normalize_axis, result_type, value_kind


@npfunc(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90° ``k`` times in the plane of ``axes`` (``numpy.rot90``)."""
    m = asarray(m)
    nd = ndim(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = normalize_axis(axes[0], nd), normalize_axis(axes[1], nd)
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k = builtins.int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return anp.flip(anp.flip(m, a0), a1)
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return anp.transpose(anp.flip(m, a1), perm)
    return anp.flip(anp.transpose(m, perm), a1)


@npfunc(np.rollaxis)
def rollaxis(a, axis, start=0):
    """Roll ``axis`` back until it lies before position ``start`` (``numpy.rollaxis``)."""
    a = asarray(a)
    n = ndim(a)
    axis = normalize_axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        from numpy.exceptions import AxisError
        raise AxisError(f"start arg requires {-n} <= start < {n + 1}")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return P.transpose(a, tuple(perm))


@npfunc(np.dsplit)
def dsplit(ary, indices_or_sections):
    """Split along the third axis (``numpy.dsplit``)."""
    if ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return anp.split(ary, indices_or_sections, axis=2)


@npfunc(np.hsplit)
def hsplit(ary, indices_or_sections):
    """Split along the second axis (the first for 1-D input), ``numpy.hsplit``."""
    if ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return anp.split(ary, indices_or_sections, axis=1 if ndim(ary) > 1 else 0)


@npfunc(np.vsplit)
def vsplit(ary, indices_or_sections):
    """Split along the first axis (``numpy.vsplit``; 2-D or more)."""
    if ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return anp.split(ary, indices_or_sections, axis=0)


def _block_depth(x):
    d = 0
    while isinstance(x, list):
        if not x:
            raise ValueError("Lists cannot be empty")
        x = x[0]
        d += 1
    return d


def block(arrays):
    """Assemble an array from nested lists of blocks (``numpy.block``)."""
    if value_kind(arrays) == 0:
        return np.block(arrays)
    depth = _block_depth(arrays)

    def leaves(x):
        if isinstance(x, list):
            for y in x:
                yield from leaves(y)
        else:
            yield x
    nd = builtins.max([ndim(v) for v in leaves(arrays)] + [depth])
    dt = result_type(*[x if isinstance(x, Tracer) else np.asarray(x) for x in leaves(arrays)])

    def rec(x, level):
        if isinstance(x, list):
            parts = [rec(y, level + 1) for y in x]
            return anp.concatenate(parts, axis=-(depth - level))
        x = asarray(x)
        x = P.convert(x, dt) if isinstance(x, Tracer) else np.asarray(x, dt)
        return anp.reshape(x, (1,) * (nd - ndim(x)) + shape_of(x))
    return rec(arrays, 0)


@npfunc(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """``numpy.meshgrid`` with ``indexing`` ('xy' or 'ij') and ``sparse``: a tuple of arrays
    (numpy 2's type, traced or not; JAX returns a list).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda x: anp.meshgrid(x, x[:2]))(np.arange(3.0))[1]
    array([[0., 0., 0.],
           [1., 1., 1.]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xi = [anp.ravel(asarray(x)) for x in xi]
    nd = len(xi)
    out = []
    for i, x in enumerate(xi):
        sh = [1] * nd
        sh[i] = shape_of(x)[0]
        out.append(anp.reshape(x, tuple(sh)))
    if indexing == "xy" and nd > 1:
        out = [anp.swapaxes(o, 0, 1) for o in out]
    if not sparse:
        out = anp.broadcast_arrays(*out)
    return tuple(out)


@npfunc(np.resize)
def resize(a, new_shape):
    """Repeat the flattened input cyclically to ``new_shape`` (``numpy.resize``)."""
    a = anp.ravel(asarray(a))
    new_shape = (new_shape,) if np.ndim(new_shape) == 0 else tuple(new_shape)
    total = builtins.int(np.prod(new_shape))
    n = shape_of(a)[0]
    if n == 0 or total == 0:
        return anp.zeros_like(a, shape=new_shape)
    idx = np.arange(total) % n
    return anp.reshape(anp.take(a, idx), new_shape)


@npfunc(np.trim_zeros)
def trim_zeros(filt, trim="fb"):
    """``numpy.trim_zeros``; the result's length depends on values, so a traced input must
    carry a concrete value (under ``grad``, not under ``jit``)."""
    x = asarray(filt)
    v = np.asarray(x.concrete_value("trim_zeros") if isinstance(x, Tracer) else x)
    nz = np.flatnonzero(v)
    if nz.size == 0:
        return anp.getitem(x, slice(0, 0))
    lo = nz[0] if "f" in trim.lower() else 0
    hi = nz[-1] + 1 if "b" in trim.lower() else v.shape[0]
    return anp.getitem(x, slice(builtins.int(lo), builtins.int(hi)))


@npfunc(np.array_equiv)
def array_equiv(a1, a2):
    """True when the inputs broadcast to each other and are equal (``numpy.array_equiv``)."""
    try:
        np.broadcast_shapes(shape_of(a1), shape_of(a2))
    except ValueError:
        return False
    return anp.all(anp.equal(a1, a2))


@npfunc(np.unstack if hasattr(np, "unstack") else None)
def unstack(x, /, *, axis=0):
    """Split into a tuple of slices along ``axis`` (``numpy.unstack``)."""
    x = asarray(x)
    ax = normalize_axis(axis, ndim(x))
    return tuple(anp.take(x, i, axis=ax) for i in range(shape_of(x)[ax]))


@npfunc(np.linalg.matrix_transpose if hasattr(np.linalg, "matrix_transpose") else None)
def matrix_transpose(x, /):
    """Swap the last two axes (``numpy.matrix_transpose``)."""
    return anp.swapaxes(x, -1, -2)


# ----------------------------------------------------------------------------
# pad: every numpy mode, axis by axis (numpy pads the axes in order, each on the array
# the previous axes produced)
# ----------------------------------------------------------------------------

_PAD_KEYWORDS = {
    "constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
    "linear_ramp": {"end_values"}, "maximum": {"stat_length"}, "minimum": {"stat_length"},
    "mean": {"stat_length"}, "median": {"stat_length"},
    "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
}


def _pairs(x, nd, name, as_int=False):
    """numpy's ``_as_pairs``: a scalar, ``(v,)``, ``(before, after)`` or one pair per axis,
    as an ``(nd, 2)`` object array of Python/numpy scalars (or traced scalars)."""
    if x is None:
        return np.full((nd, 2), None, object)
    if isinstance(x, Tracer) or (isinstance(x, (list, tuple)) and builtins.any(
            isinstance(v, Tracer) or (isinstance(v, (list, tuple)) and builtins.any(
                isinstance(w, Tracer) for w in v)) for v in x)):
        if isinstance(x, Tracer):
            if ndim(x) == 0:
                return np.array([[x, x]] * nd, object)
            x = [[anp.getitem(x, (i, j)) if ndim(x) == 2 else anp.getitem(x, j)
                  for j in range(2)] for i in range(shape_of(x)[0])] \
                if ndim(x) == 2 or shape_of(x)[0] == 2 else [[anp.getitem(x, 0)] * 2]
        rows = [list(v) if isinstance(v, (list, tuple)) else [v, v] for v in x]
        rows = [r * 2 if len(r) == 1 else r for r in rows]
        if len(rows) == 1:
            rows = rows * nd
        if len(rows) == 2 and builtins.all(not isinstance(v, (list, tuple)) for v in x):
            rows = [list(x)] * nd
        out = np.empty((nd, 2), object)
        for i in range(nd):
            out[i, 0], out[i, 1] = rows[i]
        return out
    v = np.asarray(x)
    if as_int:
        if v.dtype.kind not in "iu" and v.size:
            if not np.all(np.round(v) == v):
                raise TypeError(f"pad: `{name}` must be of integral type.")
        v = v.astype(np.int64)
        if np.any(v < 0):
            raise ValueError(f"pad: index can't contain negative values ({name}={x!r})")
    if v.ndim == 0 or v.size == 1:
        v = v.reshape(1, 1)
    elif v.ndim == 1 and v.size == 2:
        v = v.reshape(1, 2)
    try:
        v = np.broadcast_to(v, (nd, 2))
    except ValueError:
        raise ValueError(f"pad: `{name}` {x!r} does not fit an array of rank {nd}") from None
    return v.astype(object)


def _axis_shape(nd, ax, n):
    return tuple(n if i == ax else 1 for i in range(nd))


def _pad_constant(a, ax, b, c, vb, va):
    parts = []
    for width, v in ((b, vb), (c, va)):
        sh = list(shape_of(a))
        sh[ax] = width
        if isinstance(v, Tracer):
            parts.append(anp.broadcast_to(anp.astype(v, anp.dtype_of(a)), tuple(sh)))
        else:
            v = 0 if v is None else v
            v = v.item() if isinstance(v, np.generic) else v
            if anp.dtype_of(a).kind in "iub" and isinstance(v, float):
                v = builtins.int(v)           # numpy assigns: a float truncates toward zero
            parts.append(anp.full_like(a, v, shape=tuple(sh)))
    return anp.concatenate([parts[0], a, parts[1]], axis=ax)


def _pad_periodic(a, ax, b, c, mode, odd):
    """wrap / reflect / symmetric for pads of any width (numpy repeats the reflection; the
    ``odd`` variant mirrors the values through each edge, drifting by ``2(x[-1] - x[0])``
    per period)."""
    n = shape_of(a)[ax]
    i = np.arange(-b, n + c)
    if mode == "wrap" or n == 1:
        idx = i % n if mode == "wrap" else np.zeros_like(i)
        return anp.take(a, idx, axis=ax)
    period = 2 * (n - 1) if mode == "reflect" else 2 * n
    q, m = np.divmod(i, period)
    back = m >= n                                     # the mirrored half of a period
    mirror = (period - m) if mode == "reflect" else (period - 1 - m)
    idx = np.where(back, mirror, m)
    out = anp.take(a, idx, axis=ax)
    if not odd:
        return out
    nd = ndim(a)
    first = P.slice_in_dim(a, 0, 1, ax)
    last = P.slice_in_dim(a, n - 1, n, ax)
    dt = anp.dtype_of(a)
    sign = np.where(back, -1, 1).astype(dt).reshape(_axis_shape(nd, ax, len(i)))
    k_last = (2 * q + 2 * back).astype(dt).reshape(_axis_shape(nd, ax, len(i)))
    k_first = (-2 * q).astype(dt).reshape(_axis_shape(nd, ax, len(i)))
    return anp.add(anp.add(anp.multiply(out, sign), anp.multiply(last, k_last)),
                   anp.multiply(first, k_first))


def _pad_linear_ramp(a, ax, b, c, eb, ea):
    n = shape_of(a)[ax]
    dt = anp.dtype_of(a)
    nd = ndim(a)
    work = dt if dt.kind in "fc" else np.dtype(np.float64)
    parts = []
    for width, end, edge_at, rev in ((b, eb, 0, False), (c, ea, n - 1, True)):
        if width == 0:
            parts.append(None)
            continue
        edge = anp.astype(P.slice_in_dim(a, edge_at, edge_at + 1, ax), work)
        end = anp.astype(asarray(0 if end is None else end), work)
        t = (np.arange(width) / width).astype(work if work.kind == "f" else np.float64)
        if rev:
            t = t[::-1]
        t = t.reshape(_axis_shape(nd, ax, width))
        ramp = anp.add(end, anp.multiply(anp.subtract(edge, end), t))
        if dt.kind in "iu":
            ramp = anp.floor(ramp)        # numpy's linspace(dtype=int) rounds toward -inf
        parts.append(anp.astype(ramp, dt))
    pieces = [p for p in (parts[0], a, parts[1]) if p is not None]
    return anp.concatenate(pieces, axis=ax)


def _pad_stat(a, ax, b, c, lb, la, mode):
    n = shape_of(a)[ax]
    dt = anp.dtype_of(a)
    func = {"maximum": anp.max, "minimum": anp.min, "mean": anp.mean,
            "median": anp.median}[mode]
    stats = []
    for width, length, left in ((b, lb, True), (c, la, False)):
        length = n if length is None else builtins.min(builtins.int(length), n)
        if length == 0 and width:
            raise ValueError("stat_length of 0 yields no value for padding")
        region = P.slice_in_dim(a, 0, length, ax) if left else P.slice_in_dim(a, n - length, n, ax)
        s = func(region, axis=ax, keepdims=True)
        if dt.kind in "iub" and mode in ("mean", "median"):
            s = anp.round(s)
        s = anp.astype(s, dt)
        sh = list(shape_of(a))
        sh[ax] = width
        stats.append(anp.broadcast_to(s, tuple(sh)))
    return anp.concatenate([stats[0], a, stats[1]], axis=ax)


def _pad_impl(array, pad_width, mode="constant", **kwargs):
    """``numpy.pad`` on traced values; ``mode`` a string or a function (JAX's convention:
    it returns the padded vector)."""
    a = asarray(array)
    nd = ndim(a)
    if isinstance(pad_width, Tracer):
        pad_width = np.asarray(pad_width.concrete_value("pad: pad_width"))
    pw = _pairs(pad_width, nd, "pad_width", as_int=True).astype(np.int64)
    if callable(mode):
        return _pad_function(a, pw, mode, kwargs)
    if not isinstance(mode, str) or mode not in _PAD_KEYWORDS:
        raise ValueError(f"pad: mode {mode!r} is not supported (one of "
                         f"{', '.join(sorted(_PAD_KEYWORDS))}, or a function)")
    bad = set(kwargs) - _PAD_KEYWORDS[mode]
    if bad:
        raise ValueError(f"pad: unsupported keyword arguments for mode '{mode}': "
                         f"{sorted(bad)}")
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    cv = _pairs(kwargs.get("constant_values", 0), nd, "constant_values")
    ev = _pairs(kwargs.get("end_values", 0), nd, "end_values")
    sl = _pairs(kwargs.get("stat_length"), nd, "stat_length", as_int=True) \
        if kwargs.get("stat_length") is not None else np.full((nd, 2), None, object)
    for ax in range(nd):
        b, c = builtins.int(pw[ax, 0]), builtins.int(pw[ax, 1])
        if b == 0 and c == 0:
            continue
        if mode in ("constant", "empty"):
            a = _pad_constant(a, ax, b, c, *(cv[ax] if mode == "constant" else (0, 0)))
            continue
        if shape_of(a)[ax] == 0:
            raise ValueError(f"pad: can't extend empty axis {ax} using modes other than "
                             "'constant' or 'empty'")
        if mode == "edge":
            n = shape_of(a)[ax]
            a = anp.take(a, np.clip(np.arange(-b, n + c), 0, n - 1), axis=ax)
        elif mode in ("wrap", "reflect", "symmetric"):
            a = _pad_periodic(a, ax, b, c, mode, kwargs.get("reflect_type") == "odd")
        elif mode == "linear_ramp":
            a = _pad_linear_ramp(a, ax, b, c, *ev[ax])
        else:
            a = _pad_stat(a, ax, b, c, *sl[ax], mode)
    return a


def _pad_function(a, pw, func, kwargs):
    """numpy's function mode, JAX's way: ``func(vector, (before, after), axis, kwargs)``
    returns the padded 1-d vector (zeros in the pads on entry); applied along each axis."""
    from ._functional import apply_along_axis
    a = _pad_constant_all(a, pw)
    for ax in range(ndim(a)):
        a = apply_along_axis(func, ax, a, (builtins.int(pw[ax, 0]), builtins.int(pw[ax, 1])),
                             ax, kwargs, _traced=True)
    return a


def _pad_constant_all(a, pw):
    for ax in range(ndim(a)):
        a = _pad_constant(a, ax, builtins.int(pw[ax, 0]), builtins.int(pw[ax, 1]), 0, 0)
    return a


def _numpy_pad(array, pad_width, mode="constant", **kwargs):
    """numpy's ``pad`` on plain values; a padding function runs JAX's way (it returns the
    vector) through the traced implementation."""
    if callable(mode):
        return _pad_impl(array, pad_width, mode, **kwargs)
    if isinstance(mode, str) and mode in _PAD_KEYWORDS:
        bad = set(kwargs) - _PAD_KEYWORDS[mode]
        if bad:
            raise ValueError(f"pad: unsupported keyword arguments for mode '{mode}': "
                             f"{sorted(bad)}")
        if mode == "empty":       # JAX fills the pads with zeros, numpy leaves garbage
            return np.pad(array, pad_width, mode="constant")
    return np.pad(array, pad_width, mode, **kwargs)


@npfunc(_numpy_pad)
def pad(array, pad_width, mode="constant", **kwargs):
    """``numpy.pad``: every mode ('constant', 'edge', 'linear_ramp', 'maximum', 'mean',
    'median', 'minimum', 'reflect', 'symmetric', 'wrap', 'empty') with numpy's keywords
    (``constant_values``, ``end_values``, ``stat_length``, ``reflect_type``), pads of any
    width, and a padding function as JAX takes it (``func(vector, (before, after), axis,
    kwargs)`` returns the padded vector). Differentiable. A keyword that belongs to another
    mode raises ``ValueError``; 'empty' pads with zeros.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda x: anp.sum(anp.pad(x, 1, mode="edge")))(np.ones(3))
    array([2., 1., 2.])
    >>> ad.jit(lambda x: anp.pad(x, (2, 3), mode="reflect", reflect_type="odd"))(
    ...     np.array([1.0, 2.0, 4.0]))
    array([-2.,  0.,  1.,  2.,  4.,  6.,  7.,  8.])
    """
    return _pad_impl(array, pad_width, mode, **kwargs)
