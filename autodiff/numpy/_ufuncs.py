"""numpy's ufunc methods on autodiff.numpy's ufuncs (JAX's ``jnp.ufunc``): ``outer``,
``reduce``, ``accumulate``, ``at``, ``reduceat`` and the ``nin``/``nout``/``nargs``/
``identity`` attributes, attached to the existing function objects (``anp.add`` stays a
plain function: its call costs what it did). ``frompyfunc`` builds one from a scalar
function.

On plain arrays each method is numpy's own (``at`` on a copy: JAX's ``at`` returns the
updated array and never writes in place). Traced, a method is the named reduction or
cumulative function where one exists (``add.reduce`` is ``sum``, ``maximum.accumulate`` a
log-depth scan of ``maximum``), else a fold of the function itself.
"""
import builtins
import operator

import numpy as np

from ..core import Tracer
from ..errors import UnsupportedError
from ._base import asarray, dtype_of, ndim, normalize_axis, npfunc, shape_of
from ._indexing import getitem
from .. import numpy as _anp      # the namespace, complete when the methods run

# ufuncs whose operation is associative and commutative: reduced as a tree, accumulated
# by a log-depth scan (the others are folded left to right, numpy's order)
_REORDERABLE = {"add", "multiply", "maximum", "minimum", "fmax", "fmin", "logaddexp",
                "logaddexp2", "logical_and", "logical_or", "logical_xor", "bitwise_and",
                "bitwise_or", "bitwise_xor", "gcd", "lcm", "hypot"}
_NAMED_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                 "logical_and": "all", "logical_or": "any"}
_NAMED_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}
_NAMED_AT = {"add": "add", "multiply": "multiply", "maximum": "max", "minimum": "min"}


def _plain(*args):
    return not builtins.any(isinstance(a, Tracer) or hasattr(a, "__autodiff_array__")
                            for a in args)


def _tree(fn, x):
    """``fn`` folded over axis 0 of ``x`` (length >= 1) pairwise, in log depth."""
    while shape_of(x)[0] > 1:
        n = shape_of(x)[0]
        h = n // 2
        y = fn(x[:h], x[h:2 * h])
        x = _anp.concatenate([y, x[2 * h:]], axis=0) if n % 2 else y
    return x[0]


def _fold(fn, x, start=None, mask=None):
    """``fn`` folded left to right over axis 0 of ``x`` (``start``: the initial value;
    ``mask``: where false, that step is skipped)."""
    out = start
    for i in range(shape_of(x)[0]):
        nxt = x[i] if out is None else fn(out, x[i])
        out = nxt if mask is None or out is None else _anp.where(mask[i], nxt, out)
    return out


def _generic_reduce(ufn, name, a, axis, dtype, keepdims, initial, where):
    a = asarray(a)
    if dtype is not None:
        a = _anp.astype(a, dtype)
    nd = ndim(a)
    axes = tuple(range(nd)) if axis is None else (
        (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis))
    axes = tuple(sorted(normalize_axis(ax, nd) for ax in axes))
    if len(axes) > 1 and name not in _REORDERABLE:
        raise ValueError(f"reduction operation '{name}' is not reorderable, so at most one "
                         f"axis may be specified")
    identity = getattr(ufn, "identity", None)
    if initial is None and where is not None and identity is None:
        raise ValueError(f"reduction operation '{name}' does not have an identity, so to "
                         f"use a where mask one has to specify 'initial'")
    if initial is None and where is not None:
        initial = identity
    rest = [i for i in range(nd) if i not in axes]
    sh = shape_of(a)
    n = int(np.prod([sh[i] for i in axes], dtype=np.int64))
    out_shape = tuple(sh[i] for i in rest)
    x = _anp.reshape(_anp.transpose(a, axes + tuple(rest)), (n,) + out_shape)
    mask = None
    if where is not None:
        w = _anp.broadcast_to(where, sh)
        mask = _anp.reshape(_anp.transpose(w, axes + tuple(rest)), (n,) + out_shape)
    if n == 0 and initial is None:
        if identity is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             f"identity")
        initial = identity
    start = None if initial is None else _anp.full(out_shape, initial, dtype_of(x))
    if mask is None and name in _REORDERABLE and n > 0:
        out = _tree(ufn, x)
        out = out if start is None else ufn(start, out)
    else:
        out = _fold(ufn, x, start, mask)
    if keepdims:
        out = _anp.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(sh)))
    return out


def _scan(fn, x, reorderable):
    """Inclusive scan of ``fn`` along axis 0: log depth for an associative ``fn``."""
    n = shape_of(x)[0]
    if n == 0:
        return x
    if not reorderable:
        rows, out = [], None
        for i in range(n):
            out = x[i] if out is None else fn(out, x[i])
            rows.append(out)
        return _anp.stack(rows, axis=0)
    k = 1
    while k < n:
        x = _anp.concatenate([x[:k], fn(x[:n - k], x[k:])], axis=0)
        k *= 2
    return x


def _positions(a, indices):
    """The flat positions of ``a[indices]`` (concrete indices: a numpy array)."""
    sh = shape_of(a)
    size = int(np.prod(sh, dtype=np.int64))
    if _plain(indices) and not (isinstance(indices, tuple)
                                and not _plain(*indices)):
        return np.arange(size).reshape(sh)[indices]
    return getitem(np.arange(size).reshape(sh), indices)


def _install_methods(f, uf, numpy_eager=True):
    """Attach numpy's ufunc methods (of numpy's ufunc ``uf``) to the function ``f``; on
    plain arrays they are numpy's (``numpy_eager``) or the traced bodies run eagerly."""
    name = uf.__name__
    f.nin, f.nout, f.nargs, f.identity = uf.nin, uf.nout, uf.nin + uf.nout, uf.identity

    def eager(np_fn):
        return npfunc(np_fn if numpy_eager else None)

    def _refuse_inplace(inplace):
        if inplace:
            raise UnsupportedError(f"{name}.at: inplace=True is not supported (arrays are "
                                   f"immutable); use the returned array (as JAX's)")

    def _np_at(a, indices, b=None, /, *, inplace=False):
        _refuse_inplace(inplace)
        a = np.array(a, copy=True)
        (uf.at(a, indices) if b is None else uf.at(a, indices, b))
        return a

    @eager(_np_at)
    def at(a, indices, b=None, /, *, inplace=False):
        _refuse_inplace(inplace)
        if (b is None) != (f.nin == 1):
            raise ValueError(f"{name}.at: {'a second operand b' if f.nin == 2 else 'no b'} "
                             f"is required for a ufunc with nin={f.nin}")
        a = asarray(a)
        if name in _NAMED_AT:
            return getattr(_anp.at(a)[indices], _NAMED_AT[name])(b)
        pos = _positions(a, indices)
        flat = _anp.ravel(a)
        vals = None if b is None else _anp.ravel(_anp.broadcast_to(
            _anp.astype(asarray(b), dtype_of(a)), shape_of(pos)))
        pos = _anp.ravel(pos)

        def apply(cur, v):
            return _anp.astype(f(cur) if v is None else f(cur, v), dtype_of(a))
        if not isinstance(pos, Tracer):
            # repeated positions apply in turn: round r updates each position's r-th use
            pos = np.where(pos < 0, pos + flat.shape[0], pos)
            order = np.argsort(pos, kind="stable")
            sp = pos[order]
            first = np.r_[0, np.flatnonzero(np.diff(sp)) + 1] if sp.size else np.zeros(0, int)
            rank = np.empty(sp.size, int)
            rank[order] = np.arange(sp.size) - np.repeat(first, np.diff(np.r_[first, sp.size]))
            for r in range(int(rank.max()) + 1 if rank.size else 0):
                sel = np.flatnonzero(rank == r)
                p = pos[sel]
                v = None if vals is None else vals[sel]
                flat = _anp.at(flat)[p].set(apply(flat[p], v))
        else:
            for i in range(shape_of(pos)[0]):
                v = None if vals is None else vals[i]
                flat = _anp.at(flat)[pos[i]].set(apply(flat[pos[i]], v))
        return _anp.reshape(flat, shape_of(a))

    at.__name__ = at.__qualname__ = "at"
    at.__doc__ = (f"``{name}`` applied at ``a[indices]`` (with ``b``), repeated indices "
                  f"applied in turn; returns the new array (JAX's ``ufunc.at``).")
    f.at = at
    if uf.nin != 2 or uf.nout != 1:
        for meth in ("outer", "reduce", "accumulate", "reduceat"):
            setattr(f, meth, _refuser(name, meth))
        return

    @eager(getattr(uf, "outer", None))
    def outer(A, B, /, **kwargs):
        A, B = asarray(A), asarray(B)
        return f(_anp.reshape(A, shape_of(A) + (1,) * ndim(B)), B, **kwargs)
    outer.__name__ = outer.__qualname__ = "outer"
    outer.__doc__ = f"``{name}(a[..., None, ...], b)``: every pair (numpy's ``ufunc.outer``)."

    def _np_reduce(a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                   where=None):
        kw = {} if initial is None else {"initial": initial}
        if where is not None:
            kw["where"] = where
        return uf.reduce(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    @eager(_np_reduce)
    def reduce(a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(out, name + ".reduce")
        if name in _NAMED_REDUCE:
            red = getattr(_anp, _NAMED_REDUCE[name])
            kw = dict(axis=axis, keepdims=keepdims, where=where)
            if initial is not None:
                kw["initial"] = initial
            if name in ("add", "multiply"):
                kw["dtype"] = dtype
            elif dtype is not None:
                a = _anp.astype(a, dtype)
            return red(a, **kw)
        return _generic_reduce(f, name, a, axis, dtype, keepdims, initial, where)
    reduce.__name__ = reduce.__qualname__ = "reduce"
    reduce.__doc__ = f"``{name}`` folded along ``axis`` (numpy's ``ufunc.reduce``)."

    def _np_accumulate(array, axis=0, dtype=None, out=None):
        return uf.accumulate(array, axis=axis, dtype=dtype, out=out)

    @eager(_np_accumulate)
    def accumulate(array, axis=0, dtype=None, out=None):
        _no_out(out, name + ".accumulate")
        a = asarray(array)
        if ndim(a) == 0:
            raise ValueError(f"{name}.accumulate: cannot accumulate a 0-d array")
        if name in _NAMED_ACCUMULATE:
            return getattr(_anp, _NAMED_ACCUMULATE[name])(a, axis=axis, dtype=dtype)
        if dtype is not None:
            a = _anp.astype(a, dtype)
        ax = normalize_axis(axis, ndim(a))
        x = _anp.moveaxis(a, ax, 0)
        return _anp.moveaxis(_scan(f, x, name in _REORDERABLE), 0, ax)
    accumulate.__name__ = accumulate.__qualname__ = "accumulate"
    accumulate.__doc__ = f"Running ``{name}`` along ``axis`` (numpy's ``ufunc.accumulate``)."

    def _np_reduceat(array, indices, axis=0, dtype=None, out=None):
        return uf.reduceat(array, indices, axis=axis, dtype=dtype, out=out)

    @eager(_np_reduceat)
    def reduceat(array, indices, axis=0, dtype=None, out=None):
        _no_out(out, name + ".reduceat")
        if not _plain(indices):
            raise UnsupportedError(f"{name}.reduceat: the indices must be concrete (they "
                                   f"fix the output's segments)")
        a = asarray(array)
        if dtype is not None:
            a = _anp.astype(a, dtype)
        ax = normalize_axis(axis, ndim(a))
        idx = [operator.index(i) for i in np.asarray(indices).ravel()]
        n = shape_of(a)[ax]
        parts = []
        for j, i in enumerate(idx):
            if not 0 <= i < n:
                raise IndexError(f"{name}.reduceat: index {i} out of bounds for axis of "
                                 f"size {n}")
            stop = idx[j + 1] if j + 1 < len(idx) else n
            seg = _anp.take(a, np.arange(i, stop) if stop > i else np.array([i]), axis=ax)
            parts.append(reduce(seg, axis=ax, keepdims=True))
        if not parts:
            return _anp.take(a, np.zeros(0, int), axis=ax)
        return _anp.concatenate(parts, axis=ax)
    reduceat.__name__ = reduceat.__qualname__ = "reduceat"
    reduceat.__doc__ = (f"``{name}.reduce`` over the segments ``a[i[k]:i[k+1]]`` "
                        f"(numpy's ``ufunc.reduceat``).")
    f.outer, f.reduce, f.accumulate, f.reduceat = outer, reduce, accumulate, reduceat


def _refuser(name, meth):
    def refuse(*args, **kwargs):
        raise ValueError(f"{name}.{meth}: only supported for binary functions")
    refuse.__name__ = meth
    refuse.__doc__ = f"Refused: ``{meth}`` needs a binary ufunc."
    return refuse


def _no_out(out, name):
    if out is not None:
        raise TypeError(f"{name}(..., out=) cannot be honoured on traced values (arrays are "
                        f"immutable under transforms): use the returned value instead")


def install(namespace):
    """Give every function of ``namespace`` named after a numpy ufunc that ufunc's methods."""
    for n in dir(np):
        uf = getattr(np, n, None)
        f = namespace.get(n)
        if isinstance(uf, np.ufunc) and callable(f) and not isinstance(f, (np.ufunc, type)):
            if getattr(f, "_ufunc_name", None) is None:
                f._ufunc_name = uf.__name__
                _install_methods(f, uf)


class _PyUfunc:
    """A ufunc made by :func:`frompyfunc`: calls ``func`` elementwise (vectorized)."""

    def __init__(self, func, nin, nout, identity):
        self.func, self.nin, self.nout, self.identity = func, nin, nout, identity
        self.nargs = nin + nout
        self.__name__ = getattr(func, "__name__", "pyfunc")
        self._vec = _anp.vectorize(func)
        self._np = np.frompyfunc(func, nin, nout, identity=identity)

    def __call__(self, *args):
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}: expected {self.nin} arguments, got {len(args)}")
        return self._vec(*args)

    def __repr__(self):
        return f"<autodiff.numpy.frompyfunc {self.__name__} nin={self.nin} nout={self.nout}>"


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ufunc from the scalar function ``func`` (JAX's ``jnp.frompyfunc``): called
    elementwise on (traced) arrays, with the methods ``outer``, ``reduce``, ``accumulate``,
    ``at`` and ``reduceat``; ``identity`` is what an empty reduction gives.

    >>> import numpy as np, autodiff.numpy as anp
    >>> sub = anp.frompyfunc(lambda x, y: x - y, nin=2, nout=1)
    >>> sub(np.arange(3.0), 1.0)
    array([-1.,  0.,  1.])
    >>> sub.reduce(np.array([10.0, 1.0, 2.0]))
    np.float64(7.0)
    """
    if nout != 1:
        raise UnsupportedError("frompyfunc: only nout=1 is supported (as in JAX)")
    uf = _PyUfunc(func, int(nin), int(nout), identity)
    _install_py_methods(uf)
    return uf


def _install_py_methods(uf):
    """The methods of a frompyfunc ufunc: each run through the traced implementation
    (numpy's object-dtype methods would return object arrays)."""
    class _Fake:          # what _install_methods reads from a numpy ufunc
        __name__ = uf.__name__
        nin, nout, identity = uf.nin, uf.nout, uf.identity
    _install_methods(uf, _Fake, numpy_eager=False)
