"""More of numpy's shape, construction and indexing functions (compositions of the
basic ones, so every transform handles them): rotations and rolls of axes, ``r_``/``c_``,
``block``, splits, triangles of 1-D input, ``cross`` with per-operand axes, index
arithmetic (``unravel_index``, ``ravel_multi_index``, ``ix_``), ``vectorize`` and
``apply_along_axis`` (by ``vmap``), ``piecewise``, ``put_along_axis``.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.grad(lambda x: anp.rot90(x)[0, 1])(np.zeros((2, 2)))
array([[0., 0.],
       [0., 1.]])
>>> anp.r_[np.array([1.0, 2.0]), 0.0, 3.0]
array([1., 2., 0., 3.])
"""
import builtins

import numpy as np

from .. import primitives as P
from ..core import Tracer
from ._base import npfunc, asarray, promote, shape_of, ndim, normalize_axis, dtype_of, result_type
from ..errors import UnsupportedError
from ..core import user_source


def _anp():
    from .. import numpy as anp
    return anp


@npfunc(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90° ``k`` times in the plane of ``axes`` (``numpy.rot90``)."""
    anp = _anp()
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
    return _anp().split(ary, indices_or_sections, axis=2)


@npfunc(np.hsplit)
def hsplit(ary, indices_or_sections):
    """Split along the second axis (the first for 1-D input), ``numpy.hsplit``."""
    if ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _anp().split(ary, indices_or_sections, axis=1 if ndim(ary) > 1 else 0)


@npfunc(np.vsplit)
def vsplit(ary, indices_or_sections):
    """Split along the first axis (``numpy.vsplit``; 2-D or more)."""
    if ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _anp().split(ary, indices_or_sections, axis=0)


def _tri(m, k, lower):
    anp = _anp()
    m = asarray(m)
    if ndim(m) == 1:                   # numpy: a vector is broadcast to a square matrix first
        n = shape_of(m)[0]
        m = P.broadcast_in_dim(m, (n, n), (1,))
    if ndim(m) < 2:
        raise ValueError("input array must be at least 1-d")
    n_, m_ = shape_of(m)[-2:]
    d = np.arange(m_)[None, :] - np.arange(n_)[:, None]
    mask = d <= k if lower else d >= k
    return anp.where(np.broadcast_to(mask, shape_of(m)), m, anp.zeros_like(m))


@npfunc(np.tril)
def tril(m, k=0):
    """Lower triangle (``numpy.tril``); a 1-D input is a matrix of repeated rows."""
    return _tri(m, k, True)


@npfunc(np.triu)
def triu(m, k=0):
    """Upper triangle (``numpy.triu``); a 1-D input is a matrix of repeated rows."""
    return _tri(m, k, False)


@npfunc(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors along ``axisa``/``axisb`` into ``axisc``
    (``axis`` sets all three), ``numpy.cross``."""
    anp = _anp()
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(a, b)
    a, b = asarray(a), asarray(b)
    a = anp.moveaxis(a, axisa, -1)
    b = anp.moveaxis(b, axisb, -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    g = anp.getitem
    a0, a1 = g(a, (Ellipsis, 0)), g(a, (Ellipsis, 1))
    b0, b1 = g(b, (Ellipsis, 0)), g(b, (Ellipsis, 1))
    z = anp.subtract(anp.multiply(a0, b1), anp.multiply(a1, b0))
    if na == 2 and nb == 2:
        return z
    a2 = g(a, (Ellipsis, 2)) if na == 3 else None
    b2 = g(b, (Ellipsis, 2)) if nb == 3 else None
    mul, sub = anp.multiply, anp.subtract
    if a2 is None:                   # a is a 2-vector (a2 = 0)
        x, y = mul(a1, b2), anp.negative(mul(a0, b2))
    elif b2 is None:                 # b is a 2-vector (b2 = 0)
        x, y = anp.negative(mul(a2, b1)), mul(a2, b0)
    else:
        x, y = sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2))
    x, y, z = anp.broadcast_arrays(x, y, z)
    out = anp.stack([x, y, z], axis=-1)
    return anp.moveaxis(out, -1, axisc)


class _AxisConcatenator:
    """``r_`` / ``c_``: concatenation by index expressions, as numpy's."""

    def __init__(self, np_obj, axis, ndmin, trans1d):
        self._np, self.axis, self.ndmin, self.trans1d = np_obj, axis, ndmin, trans1d

    def __getitem__(self, key):
        from ._base import _kind
        if not isinstance(key, tuple):
            key = (key,)
        if _kind(key) == 0:
            return self._np[key]           # plain numpy values: numpy's own
        anp = _anp()
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d

        def with_ndmin(o):
            return anp.reshape(o, (1,) * (ndmin - ndim(o)) + shape_of(o)) if ndim(o) < ndmin else o
        objs, rtypes = [], []
        for k, item in enumerate(key):
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                step = 1 if item.step is None else item.step
                if isinstance(step, complex):
                    obj = np.linspace(start, item.stop, builtins.int(abs(step)))
                else:
                    obj = np.arange(start, item.stop, step)
                if ndmin > 1:
                    obj = np.array(obj, ndmin=ndmin)
                    if trans1d != -1:
                        obj = obj.swapaxes(-1, trans1d)
                rtypes.append(obj.dtype)
            elif isinstance(item, str):
                if k != 0:
                    raise ValueError("special directives must be the first entry.")
                if item in ("r", "c"):
                    raise UnsupportedError("r_/c_: the matrix directives 'r' and 'c' are not supported", source=user_source())
                parts = [builtins.int(x) for x in item.split(",")]
                axis = parts[0]
                if len(parts) > 1:
                    ndmin = parts[1]
                if len(parts) > 2:
                    trans1d = parts[2]
                continue
            elif isinstance(item, (bool, int, float, np.generic)):
                obj = item                        # a scalar: weak in the promotion
                rtypes.append(item)
            else:
                obj = asarray(item)
                nd0 = ndim(obj)
                obj = with_ndmin(obj)
                if trans1d != -1 and nd0 < ndmin:
                    k2, k1 = ndmin - nd0, trans1d
                    if k1 < 0:
                        k1 += k2 + 1
                    d = list(range(ndmin))
                    obj = anp.transpose(obj, d[:k1] + d[k2:] + d[k1:k2])
                rtypes.append(dtype_of(obj))
            objs.append(obj)
        dt = np.result_type(*rtypes)
        out = []
        for o in objs:
            o = with_ndmin(asarray(o) if not isinstance(o, (bool, int, float, np.generic)) else np.asarray(o))
            out.append(P.convert(o, dt) if isinstance(o, Tracer) else np.asarray(o, dt))
        return anp.concatenate(out, axis=axis)

    def __len__(self):
        return 0


r_ = _AxisConcatenator(np.r_, 0, 1, -1)
c_ = _AxisConcatenator(np.c_, -1, 2, 0)
r_.__doc__ = "Row-wise concatenation by index expressions (``numpy.r_``), traced values included."
c_.__doc__ = "Column-wise concatenation by index expressions (``numpy.c_``), traced values included."


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
    from ._base import _kind
    if _kind(arrays) == 0:
        return np.block(arrays)
    anp = _anp()
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


@npfunc(np.tri)
def tri(N, M=None, k=0, dtype=float):
    """``numpy.tri`` (a constant)."""
    return np.tri(N, M, k, dtype)


@npfunc(np.vander)
def vander(x, N=None, increasing=False):
    """Vandermonde matrix ``x[:, None] ** powers`` (``numpy.vander``)."""
    anp = _anp()
    x = asarray(x)
    if ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = shape_of(x)[0] if N is None else builtins.int(N)
    x = anp.astype(x, np.promote_types(dtype_of(x), np.int64))    # numpy's result dtype
    cols = [anp.power(x, p) for p in range(n)]
    if not increasing:
        cols = cols[::-1]
    if not cols:
        return anp.zeros_like(x, shape=(shape_of(x)[0], 0))
    return anp.stack(cols, axis=1)


def ix_(*args):
    """Open mesh from 1-D index or value sequences (``numpy.ix_``)."""
    from ._base import _kind
    if _kind(args) == 0:
        return np.ix_(*args)
    anp = _anp()
    out = []
    nd = len(args)
    for i, a in enumerate(args):
        a = asarray(a)
        if ndim(a) != 1:
            raise ValueError("Cross index must be 1 dimensional")
        sh = [1] * nd
        sh[i] = shape_of(a)[0]
        out.append(anp.reshape(a, tuple(sh)))
    return tuple(out)


@npfunc(np.unravel_index)
def unravel_index(indices, shape, order="C"):
    """Coordinates of flat ``indices`` in an array of ``shape`` (``numpy.unravel_index``)."""
    anp = _anp()
    idx = asarray(indices)
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    dims = list(shape) if order == "C" else list(shape)[::-1]
    out = []
    rest = idx
    for d in reversed(dims):
        out.append(anp.mod(rest, d))
        rest = anp.floor_divide(rest, d)
    out = out[::-1]
    return tuple(out if order == "C" else out[::-1])


@npfunc(np.ravel_multi_index)
def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinate arrays (``numpy.ravel_multi_index``); ``mode`` 'raise'
    (not checked when traced), 'wrap' or 'clip'."""
    anp = _anp()
    dims = tuple(dims)
    idx = [asarray(i) for i in multi_index]
    if isinstance(mode, str):
        mode = (mode,) * len(dims)
    fixed = []
    for i, d, md in zip(idx, dims, mode):
        if md == "wrap":
            i = anp.mod(i, d)
        elif md == "clip":
            i = anp.clip(i, 0, d - 1)
        fixed.append(i)
    order_dims = list(range(len(dims))) if order == "C" else list(range(len(dims)))[::-1]
    out = None
    for j in order_dims:
        out = fixed[j] if out is None else anp.add(anp.multiply(out, dims[j]), fixed[j])
    return anp.astype(out, np.int64)


@npfunc(np.put_along_axis)
def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """``numpy.put_along_axis``. Traced arrays are immutable: the updated array is
    returned (pass ``inplace=False`` as in JAX); numpy arrays with ``inplace=True`` are
    updated in place by numpy itself."""
    anp = _anp()
    arr = asarray(arr)
    idx = asarray(indices)
    if axis is None:
        arr2 = anp.ravel(arr)
        return anp.reshape(put_along_axis(arr2, anp.ravel(idx), anp.ravel(values), 0, inplace=False),
                           shape_of(arr))
    nd = ndim(arr)
    ax = normalize_axis(axis, nd)
    sh = np.broadcast_shapes(shape_of(idx), tuple(1 if i == ax else s for i, s in enumerate(shape_of(arr))))
    idx = anp.broadcast_to(idx, sh)
    full_idx = []
    for d in range(nd):
        if d == ax:
            full_idx.append(anp.where(anp.less(idx, 0), anp.add(idx, shape_of(arr)[ax]), idx))
        else:
            r = [1] * nd
            r[d] = sh[d]
            full_idx.append(np.broadcast_to(np.arange(sh[d]).reshape(r), sh))
    v = anp.broadcast_to(asarray(values), sh)
    return anp.at(arr)[tuple(full_idx)].set(v)


def _numpy_put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    if inplace:
        return np.put_along_axis(arr, indices, values, axis)
    out = np.array(arr, copy=True)
    np.put_along_axis(out, indices, values, axis)
    return out


put_along_axis.__wrapped_numpy__ = _numpy_put_along_axis


def _put_along_axis_entry(arr, indices, values, axis, inplace=True, *, mode=None):
    from ._base import _kind
    if _kind((arr, indices, values)) == 0:
        return _numpy_put_along_axis(arr, indices, values, axis, inplace)
    return put_along_axis(arr, indices, values, axis, inplace, mode=mode)


_put_along_axis_entry.__doc__ = put_along_axis.__doc__
_put_along_axis_entry.__name__ = "put_along_axis"


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """Apply ``func1d`` to 1-D slices along ``axis`` (by ``vmap`` over the other axes),
    ``numpy.apply_along_axis``."""
    from ._base import _kind
    if _kind((arr, args)) == 0 and not kwargs.pop("_traced", False):
        return np.apply_along_axis(func1d, axis, arr, *args, **kwargs)
    from ..api import vmap
    anp = _anp()
    arr = asarray(arr)
    nd = ndim(arr)
    ax = normalize_axis(axis, nd)
    moved = anp.moveaxis(arr, ax, -1)
    lead = shape_of(moved)[:-1]
    flat = anp.reshape(moved, (-1, shape_of(moved)[-1]))
    out = vmap(lambda row: asarray(func1d(row, *args, **kwargs)))(flat)
    out = anp.reshape(out, lead + shape_of(out)[1:])
    k = ndim(out) - len(lead)
    # numpy: the function's output axes replace the applied axis
    perm = list(range(ax)) + list(range(len(lead), len(lead) + k)) + list(range(ax, len(lead)))
    return anp.transpose(out, perm)


def _parse_signature(sig):
    import re
    ins, outs = sig.replace(" ", "").split("->")
    parse = lambda s: [tuple(d for d in g.split(",") if d) for g in re.findall(r"\(([^)]*)\)", s)]
    return parse(ins), parse(outs)


class vectorize:
    """``numpy.vectorize`` as JAX has it: ``pyfunc`` is traced once on the core shape and
    ``vmap``-ed over the broadcast loop dimensions (``excluded`` arguments pass through;
    ``signature`` like ``'(n),(n)->()'`` gives core dimensions)."""

    def __init__(self, pyfunc, otypes=None, doc=None, excluded=None, cache=False, signature=None):
        self.pyfunc = pyfunc
        self.excluded = set(excluded or ())
        self.signature = signature
        self.__doc__ = doc or getattr(pyfunc, "__doc__", None)
        self.__name__ = getattr(pyfunc, "__name__", "vectorized")

    def __call__(self, *args, **kwargs):
        from ..api import vmap
        anp = _anp()
        excluded = {i for i in self.excluded if isinstance(i, int)}
        kw_static = {k: v for k, v in kwargs.items() if k in self.excluded}
        kw_dyn = {k: v for k, v in kwargs.items() if k not in self.excluded}
        names = list(kw_dyn)
        dyn_pos = [i for i in range(len(args)) if i not in excluded]
        dyn = [asarray(args[i]) for i in dyn_pos] + [asarray(kw_dyn[k]) for k in names]
        if self.signature is not None:
            core_in, _ = _parse_signature(self.signature)
            if len(core_in) != len(dyn):
                raise ValueError(f"vectorize: signature {self.signature!r} has {len(core_in)} inputs, "
                                 f"got {len(dyn)}")
            ncore = [len(c) for c in core_in]
        else:
            ncore = [0] * len(dyn)
        loops = [shape_of(x)[:ndim(x) - c] for x, c in zip(dyn, ncore)]
        batch = np.broadcast_shapes(*loops) if loops else ()

        def call(*d):
            full = list(args)
            for j, i in enumerate(dyn_pos):
                full[i] = d[j]
            kw = dict(kw_static)
            for j, k in enumerate(names):
                kw[k] = d[len(dyn_pos) + j]
            return self.pyfunc(*full, **kw)
        if not batch:
            return call(*dyn)
        size = builtins.int(np.prod(batch))
        flat = []
        for x, c in zip(dyn, ncore):
            core = shape_of(x)[ndim(x) - c:]
            x = anp.broadcast_to(x, batch + core)
            flat.append(anp.reshape(x, (size,) + core))
        out = vmap(call)(*flat)

        def unflat(o):
            return anp.reshape(o, batch + shape_of(o)[1:])
        if isinstance(out, tuple):
            return tuple(unflat(o) for o in out)
        return unflat(out)


@npfunc(np.piecewise)
def piecewise(x, condlist, funclist, *args, **kw):
    """``numpy.piecewise``: every function is evaluated on all of ``x`` and the pieces
    selected with ``where`` (so each must be defined everywhere it is traced)."""
    anp = _anp()
    x = asarray(x)
    if isinstance(condlist, Tracer) and ndim(condlist) == ndim(x):
        condlist = [condlist]
    elif isinstance(condlist, (bool, np.bool_)) or (not isinstance(condlist, (list, tuple)) and ndim(condlist) == ndim(x)):
        condlist = [condlist]
    condlist = [anp.broadcast_to(asarray(c), shape_of(x)) for c in condlist]
    n = len(condlist)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    out = anp.zeros_like(x)
    if len(funclist) == n + 1:
        otherwise = anp.logical_not(anp.any(anp.stack(condlist), axis=0)) if n else anp.ones_like(x, dtype=bool)
        condlist = condlist + [otherwise]
    for c, f in zip(condlist, funclist):
        v = f(x, *args, **kw) if callable(f) else f
        out = anp.where(c, v, out)
    return P.convert(out, dtype_of(x)) if isinstance(out, Tracer) else out


@npfunc(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """``numpy.meshgrid`` with ``indexing`` ('xy' or 'ij') and ``sparse``."""
    anp = _anp()
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


@npfunc(np.diagflat)
def diagflat(v, k=0):
    """2-D array with the flattened input on diagonal ``k`` (``numpy.diagflat``)."""
    anp = _anp()
    return anp.diag(anp.ravel(v), k)


@npfunc(np.fill_diagonal)
def _fill_diagonal_traced(a, val, wrap=False):
    anp = _anp()
    a = asarray(a)
    n = builtins.min(shape_of(a))
    idx = (np.arange(n),) * ndim(a)
    v = asarray(val)
    if ndim(v) == 0:
        return anp.at(a)[idx].set(v)
    vals = anp.resize(anp.ravel(v), (n,)) if hasattr(anp, "resize") else anp.ravel(v)[:n]
    return anp.at(a)[idx].set(vals)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``numpy.fill_diagonal``: numpy arrays are filled in place (numpy's own, returns
    None); traced arrays are immutable, so the filled copy is returned (``inplace=False``)."""
    from ._base import _kind
    if _kind((a, val)) == 0:
        if inplace:
            return np.fill_diagonal(a, val, wrap)
        a = np.array(a, copy=True)
        np.fill_diagonal(a, val, wrap)
        return a
    return _fill_diagonal_traced(a, val, wrap)


@npfunc(np.resize)
def resize(a, new_shape):
    """Repeat the flattened input cyclically to ``new_shape`` (``numpy.resize``)."""
    anp = _anp()
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
    anp = _anp()
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
    anp = _anp()
    try:
        np.broadcast_shapes(shape_of(a1), shape_of(a2))
    except ValueError:
        return False
    return anp.all(anp.equal(a1, a2))


@npfunc(np.vecdot if hasattr(np, "vecdot") else None)
def vecdot(x1, x2, /, *, axis=-1):
    """``Σ conj(x1)·x2`` over ``axis`` with broadcasting (``numpy.vecdot``: the first
    argument is conjugated, so ``vecdot(z, z)`` is ``Σ |z|²``).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.vecdot(np.array([1j, 2.0]), np.array([1j, 1.0]))
    np.complex128(3+0j)
    """
    anp = _anp()
    return anp.sum(anp.multiply(P.conj(asarray(x1)), x2), axis=axis)


@npfunc(np.matvec if hasattr(np, "matvec") else None)
def matvec(x1, x2, /):
    """Matrix-vector products over broadcast stacks (``numpy.matvec``)."""
    anp = _anp()
    return anp.squeeze(anp.matmul(x1, anp.expand_dims(x2, -1)), -1)


@npfunc(np.vecmat if hasattr(np, "vecmat") else None)
def vecmat(x1, x2, /):
    """Vector-matrix products ``conj(x1)·x2`` over broadcast stacks (``numpy.vecmat``
    conjugates the vector; ``matvec`` conjugates nothing)."""
    anp = _anp()
    return anp.squeeze(anp.matmul(anp.expand_dims(P.conj(asarray(x1)), -2), x2), -2)


@npfunc(np.unstack if hasattr(np, "unstack") else None)
def unstack(x, /, *, axis=0):
    """Split into a tuple of slices along ``axis`` (``numpy.unstack``)."""
    anp = _anp()
    x = asarray(x)
    ax = normalize_axis(axis, ndim(x))
    return tuple(anp.take(x, i, axis=ax) for i in range(shape_of(x)[ax]))


@npfunc(np.linalg.matrix_transpose if hasattr(np.linalg, "matrix_transpose") else None)
def matrix_transpose(x, /):
    """Swap the last two axes (``numpy.matrix_transpose``)."""
    anp = _anp()
    return anp.swapaxes(x, -1, -2)


def place(arr, mask, vals, *, inplace=True):
    """``numpy.place``: numpy arrays are changed in place (numpy's own); traced arrays are
    immutable, so the result is returned (JAX's ``inplace=False``): the entries where
    ``mask`` is true get ``vals`` cycled in order (``mask`` needs a concrete value)."""
    from ._base import _kind
    if _kind((arr, mask, vals)) == 0:
        if inplace:
            return np.place(arr, mask, vals)
        arr = np.array(arr, copy=True)
        np.place(arr, mask, vals)
        return arr
    return _place_traced(arr, mask, vals)


@npfunc(None)
def _place_traced(arr, mask, vals):
    anp = _anp()
    a = asarray(arr)
    m = asarray(mask)
    mv = np.asarray(m.concrete_value("place") if isinstance(m, Tracer) else m, bool).ravel()
    idx = np.flatnonzero(mv)
    flat = anp.ravel(a)
    if idx.size == 0:
        return a
    v = anp.resize(anp.ravel(asarray(vals)), (idx.size,))
    return anp.reshape(anp.at(flat)[idx].set(anp.astype(v, dtype_of(a))), shape_of(a))
