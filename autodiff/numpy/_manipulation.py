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
    """``numpy.meshgrid`` with ``indexing`` ('xy' or 'ij') and ``sparse``."""
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
    return list(out) if isinstance(out, (list, tuple)) else out


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
