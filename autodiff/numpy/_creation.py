"""Array creation (``zeros``, ``ones``, ``full``, ``eye``, ``arange``, ``array``, ...) that
behaves inside transforms as JAX users expect, while staying numpy outside them.

Outside every transform these are numpy's own functions: the same ``numpy.ndarray``,
dtype and errors. Inside one (``jit``, ``grad``, ``vmap``, ...) two things change:

* **Traced arguments are accepted where a value, not a shape, depends on them**:
  ``full(shape, traced)`` and ``full_like(x, traced)`` broadcast the traced fill value
  (differentiable in it); ``arange(start, stop, step)`` with traced bounds computes
  ``start + step·k`` (differentiable in ``start`` and ``step``) when the bounds have
  values (``grad`` without ``jit``), and raises ``ConcretizationError`` naming the line
  under ``jit``, where its length (the shape) would be unknown. A traced *shape* or
  ``eye(N)`` size raises the same error.
* **The result is a** :class:`FreshArray`: a numpy array (every numpy use is numpy's,
  and results of operations on it are plain ndarrays) that also has JAX's functional
  updates, ``anp.zeros(3).at[0].set(v)`` with a traced ``v``, and indexing by a traced
  index. Outside transforms a plain ``numpy.ndarray`` has no ``.at``: spell it
  ``anp.at(x)[idx].set(v)`` there, which works everywhere.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.jit(lambda s: anp.zeros(3).at[1].set(s))(2.0)
array([0., 2., 0.])
>>> float(ad.grad(lambda s: anp.sum(anp.full((3,), s) * np.arange(3.0)))(2.0))
3.0
>>> type(anp.zeros(2)) is np.ndarray            # outside transforms: numpy's own result
True
"""
import builtins
import functools
import operator

import numpy as np

from .. import primitives as P, numpy as anp
from ..core import Tracer, current_trace, is_concrete, user_source
from ..errors import ConcretizationError
from ._base import npfunc, asarray, as_float, dtype_of, ndim, shape_of, is_python_scalar
from ._indexing import at, getitem

__all__ = ["zeros", "ones", "empty", "full", "eye", "identity", "arange", "zeros_like",
           "ones_like", "empty_like", "full_like", "array", "FreshArray"]


# ----------------------------------------------------------------------------
# the result type inside transforms
# ----------------------------------------------------------------------------

def _plain(x):
    if isinstance(x, FreshArray):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)) and any(isinstance(e, FreshArray) for e in x):
        return type(x)(_plain(e) for e in x)
    return x


def _has_tracer(idx):
    if isinstance(idx, Tracer):
        return True
    if isinstance(idx, (tuple, list)):
        return builtins.any(_has_tracer(i) for i in idx)
    return False


class _FreshAt:
    """``fresh.at``: ``anp.at``'s indexer, whose updated arrays of values are FreshArrays."""

    __slots__ = ("indexer",)

    def __init__(self, indexer):
        self.indexer = indexer

    def __getitem__(self, idx):
        return _FreshAtRef(self.indexer[idx])


class _FreshAtRef:
    __slots__ = ("ref",)

    def __init__(self, ref):
        self.ref = ref

    def __getattr__(self, name):              # set, add, multiply, ..., get
        method = getattr(self.ref, name)

        def update(*args, **kwargs):
            out = method(*args, **kwargs)
            return out.view(FreshArray) if type(out) is np.ndarray else out
        return update


class FreshArray(np.ndarray):
    """What a creation function returns inside a transform: a numpy array with JAX's
    ``.at[idx].set/add/multiply/min/max/get`` and indexing by traced indices. Every other
    use is numpy's, and its results are plain ``numpy.ndarray`` s.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda i: anp.arange(5.0)[i] * 2)(3)
    np.float64(6.0)
    """

    _ad_plain_on_output = True      # a traced function's outputs are plain ndarrays

    @property
    def at(self):
        """JAX's functional updates, as ``anp.at(x)``; an updated array of values is a
        FreshArray too, so updates chain as in JAX.

        >>> import numpy as np
        >>> from autodiff.numpy._creation import FreshArray
        >>> np.zeros(3).view(FreshArray).at[0].set(1.0).at[2].add(5.0).view(np.ndarray)
        array([1., 0., 5.])
        """
        return _FreshAt(at(self.view(np.ndarray)))

    def __getitem__(self, idx):
        base = self.view(np.ndarray)
        if _has_tracer(idx):
            return getitem(base, idx)
        return base[idx]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if kwargs.get("out") is not None:
            kwargs["out"] = tuple(_plain(o) for o in kwargs["out"])
        return getattr(ufunc, method)(*(_plain(x) for x in inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        args = tuple(_plain(a) for a in args)
        kwargs = {k: _plain(v) for k, v in kwargs.items()}
        for a in (*args, *kwargs.values()):
            if isinstance(a, Tracer):       # e.g. np.take(fresh, traced): the tracer's rule
                return a.__array_function__(func, types, args, kwargs)
        return func(*args, **kwargs)

    def __reduce__(self):
        return self.view(np.ndarray).__reduce__()

    def __repr__(self):
        return repr(self.view(np.ndarray))


def _fresh(out):
    """``out`` as a :class:`FreshArray` when a transform is active (so ``.at`` works on it)."""
    if type(out) is np.ndarray and out.ndim > 0 and current_trace() is not None:
        return out.view(FreshArray)
    return out


def _concrete(x, who, what):
    """The value of ``x`` (a Python number, array or a tracer with a value), or a
    ConcretizationError naming ``who`` and the user's line."""
    if not isinstance(x, Tracer):
        return x
    try:
        return x._trace.force(x, what)
    except ConcretizationError:
        raise ConcretizationError(
            f"anp.{who}: {what} must be concrete, but it is a traced value "
            f"({x.aval.str_short()}) inside jit, where only shapes and dtypes are known. "
            f"Pass it through static_argnums / static_argnames, or compute it from shapes "
            f"(x.shape[0]); for values, build from a fixed-size array (e.g. "
            f"start + step * anp.arange(n) with a static n, or anp.linspace).",
            source=user_source()) from None


def _shape(shape, who):
    if isinstance(shape, Tracer) or (isinstance(shape, (tuple, list)) and _has_tracer(shape)):
        shape = _concrete_tree(shape, who)
    return shape


def _concrete_tree(shape, who):
    if isinstance(shape, (tuple, list)):
        return tuple(operator.index(np.asarray(_concrete(s, who, "the shape"))[()])
                     for s in shape)
    v = np.asarray(_concrete(shape, who, "the shape"))
    return tuple(int(s) for s in v.ravel()) if v.ndim else operator.index(v[()])


@npfunc(np.asarray)
def asarray_traced(a, dtype=None, order=None):
    """``numpy.asarray`` on numpy input, the array itself (cast to ``dtype``) on traced input."""
    return asarray(a, dtype)


def _numpy_twin(np_fn):
    def deco(f):
        f = functools.wraps(np_fn, assigned=("__name__", "__qualname__"))(f)
        f.__wrapped_numpy__ = np_fn
        return f
    return deco


# ----------------------------------------------------------------------------
# shape-first constructors
# ----------------------------------------------------------------------------

@_numpy_twin(np.zeros)
def zeros(shape, dtype=float, order="C", *, like=None, device=None):
    """``numpy.zeros``; inside a transform the result has ``.at[]`` (a :class:`FreshArray`).

    >>> import autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda v: anp.zeros((2, 2)).at[0, 1].set(v))(3.0)
    array([[0., 3.],
           [0., 0.]])
    """
    return _fresh(np.zeros(_shape(shape, "zeros"), dtype, order))


@_numpy_twin(np.ones)
def ones(shape, dtype=None, order="C", *, like=None, device=None):
    """``numpy.ones``; inside a transform the result has ``.at[]``.

    >>> import autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda v: anp.ones(3).at[:2].add(v))(1.0)
    array([2., 2., 1.])
    """
    return _fresh(np.ones(_shape(shape, "ones"), dtype, order))


@_numpy_twin(np.empty)
def empty(shape, dtype=float, order="C", *, like=None, device=None):
    """``numpy.empty``, filled with zeros (as JAX: there is no uninitialized memory in a
    functional program); inside a transform the result has ``.at[]``.

    >>> import autodiff.numpy as anp
    >>> anp.empty(2)
    array([0., 0.])
    """
    return _fresh(np.zeros(_shape(shape, "empty"), dtype, order))


@_numpy_twin(np.full)
def full(shape, fill_value, dtype=None, order="C", *, like=None, device=None):
    """``numpy.full``; ``fill_value`` may be traced (then the result is the broadcast
    value, differentiable in it).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda s: anp.full((2, 2), s))(1.5)
    array([[1.5, 1.5],
           [1.5, 1.5]])
    >>> float(ad.grad(lambda s: anp.sum(anp.full(3, s) ** 2))(2.0))     # d/ds 3s²
    12.0
    """
    shape = _shape(shape, "full")
    if not _has_tracer(fill_value):
        return _fresh(np.full(shape, fill_value, dtype, order))
    v = asarray(fill_value)
    if dtype is not None:
        v = P.convert(v, np.dtype(dtype))
    shape = np.asarray(shape)
    return anp.broadcast_to(v, tuple(builtins.int(d) for d in shape.reshape(-1)))


@_numpy_twin(np.eye)
def eye(N, M=None, k=0, dtype=float, order="C", *, like=None, device=None):
    """``numpy.eye``; inside a transform the result has ``.at[]``.

    >>> import autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda s: anp.eye(2).at[0, 1].set(s))(4.0)
    array([[1., 4.],
           [0., 1.]])
    """
    N = _concrete(N, "eye", "N (the number of rows)")
    M = _concrete(M, "eye", "M (the number of columns)")
    if isinstance(k, Tracer) and not is_concrete(k):
        # JAX: a traced diagonal offset (the shape does not depend on it)
        m = N if M is None else M
        cols = np.arange(m)[None, :] - np.arange(N)[:, None]
        return anp.astype(anp.equal(cols, k), np.dtype(dtype or float))
    k = _concrete(k, "eye", "k (the diagonal)")
    return _fresh(np.eye(N, M, k, dtype, order))


@_numpy_twin(np.identity)
def identity(n, dtype=None, *, like=None, device=None):
    """``numpy.identity``; inside a transform the result has ``.at[]``.

    >>> import autodiff.numpy as anp
    >>> anp.identity(2)
    array([[1., 0.],
           [0., 1.]])
    """
    return _fresh(np.identity(_concrete(n, "identity", "n"), dtype))


@_numpy_twin(np.arange)
def arange(start, stop=None, step=None, dtype=None, *, like=None, device=None):
    """``numpy.arange``. Bounds may be traced when they have values (``grad``/``vmap`` of
    concrete inputs without ``jit``): the length comes from the values and the result,
    ``start + step·k``, is differentiable in ``start`` and ``step``. Under ``jit`` the
    length would be unknown: a traced bound raises ``ConcretizationError`` naming the
    line (pass it as a static argument).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> float(ad.grad(lambda a: anp.sum(anp.arange(a, 4.0)))(1.0))       # 1, 2, 3: d/da = 3
    3.0
    """
    bounds = [b for b in (start, stop, step) if b is not None]
    if not builtins.any(isinstance(b, Tracer) for b in bounds):
        return _fresh(np.arange(*bounds, dtype=dtype) if stop is not None or step is not None
                      else np.arange(start, dtype=dtype))
    names = ("stop",) if len(bounds) == 1 else ("start", "stop", "step")
    vals = [np.asarray(_concrete(b, "arange", f"its {n!r} (the length is the result's shape)"))
            for b, n in zip(bounds, names)]
    ref = np.arange(*vals, dtype=dtype) if len(vals) > 1 else np.arange(vals[0], dtype=dtype)
    if stop is None:                       # arange(stop): start 0, step 1
        start_t, step_t = None, None
    else:
        start_t, step_t = start, step
    if ref.dtype.kind not in "fc":
        return _fresh(ref)                 # integer ranges have no derivative
    k = np.arange(ref.shape[0], dtype=ref.dtype)
    out = k if step_t is None else anp.multiply(P.convert(asarray(step_t), ref.dtype), k)
    if start_t is not None:
        out = anp.add(P.convert(asarray(start_t), ref.dtype), out)
    return out if isinstance(out, Tracer) else _fresh(out)


# ----------------------------------------------------------------------------
# *_like and array
# ----------------------------------------------------------------------------

def _like_shape(a, shape, who):
    return shape_of(a) if shape is None else _shape(shape, who)


@_numpy_twin(np.zeros_like)
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``numpy.zeros_like``, for concrete and traced ``a`` (only its shape and dtype are
    used); inside a transform the result has ``.at[]``.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda x: anp.zeros_like(x).at[0].set(x[1]))(np.array([1.0, 2.0]))
    array([2., 0.])
    """
    return _fresh(np.zeros(_like_shape(a, shape, "zeros_like"), dtype or dtype_of(a)))


@_numpy_twin(np.ones_like)
def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``numpy.ones_like``, for concrete and traced ``a``; inside a transform the result
    has ``.at[]``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.ones_like(np.zeros(2, np.float32))
    array([1., 1.], dtype=float32)
    """
    return _fresh(np.ones(_like_shape(a, shape, "ones_like"), dtype or dtype_of(a)))


@_numpy_twin(np.empty_like)
def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``numpy.empty_like``, zero-filled (as JAX), for concrete and traced ``prototype``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.empty_like(np.ones(2))
    array([0., 0.])
    """
    return zeros_like(prototype, dtype, shape=shape)


@_numpy_twin(np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
              device=None):
    """``numpy.full_like``; ``a`` and ``fill_value`` may be traced (the result is
    differentiable in ``fill_value``).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> float(ad.grad(lambda s: anp.sum(anp.full_like(np.ones(4), s)))(0.5))
    4.0
    """
    dt = np.dtype(dtype or dtype_of(a))
    return full(_like_shape(a, shape, "full_like"), fill_value, dt)


def array(object, dtype=None, copy=True, ndmin=0, *, order="K", subok=False, like=None,
          device=None):
    """``numpy.array`` of numbers, arrays, traced values or (nested) lists of them; inside
    a transform a concrete result has ``.at[]``.

    >>> import autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda s: anp.array([1.0, 2.0]).at[0].set(s))(5.0)
    array([5., 2.])
    """
    out = asarray_traced(object, dtype=dtype)
    while np.ndim(out) < ndmin:
        out = anp.expand_dims(out, 0)
    if isinstance(out, np.ndarray) and copy:
        out = out.copy()
    return _fresh(out)


array.__wrapped_numpy__ = np.array


def asarray_public(a, dtype=None, order=None, *, copy=None, device=None, like=None):
    """``numpy.asarray`` of numbers, arrays, traced values or (nested) lists of them, with
    numpy 2's and JAX's keywords: ``copy=True`` returns a copy of a numpy array; ``device``
    is accepted (results live on the host; ``ad.device_put`` moves them), as it is by every
    creation function here.

    >>> import numpy as np, autodiff.numpy as anp
    >>> x = np.ones(2)
    >>> anp.asarray(x, copy=True) is x, anp.asarray(x) is x
    (False, True)
    """
    out = asarray(a, dtype)
    if copy and isinstance(out, np.ndarray):
        out = out.copy()
    return out


asarray_public.__name__ = asarray_public.__qualname__ = "asarray"
asarray_public.__wrapped_numpy__ = np.asarray


# numpy's other conversions: numpy's own on numpy input; a traced value is an array of
# its own already (no subclass, no memory layout to choose), cast to ``dtype``

@npfunc(np.asanyarray)
def asanyarray(a, dtype=None, order=None, *, like=None):
    """``numpy.asanyarray``: :func:`asarray` (autodiff has no array subclasses).

    >>> import autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda x: anp.sum(anp.asanyarray(x) ** 2))(anp.ones(2))
    array([2., 2.])
    """
    return asarray(a, dtype)


@npfunc(np.ascontiguousarray)
def ascontiguousarray(a, dtype=None, *, like=None):
    """``numpy.ascontiguousarray`` (a traced value has no layout: itself, cast to ``dtype``).

    >>> import autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda x: anp.ascontiguousarray(x).T[0] * 3.0)(anp.ones(1))
    array([3.])
    """
    return asarray(a, dtype)


@npfunc(np.asfortranarray)
def asfortranarray(a, dtype=None, *, like=None):
    """``numpy.asfortranarray`` (a traced value has no layout: itself, cast to ``dtype``).

    >>> import autodiff.numpy as anp
    >>> anp.asfortranarray([[1.0, 2.0]]).flags.f_contiguous
    True
    """
    return asarray(a, dtype)


@npfunc(np.require)
def require(a, dtype=None, requirements=None, *, like=None):
    """``numpy.require`` (the layout ``requirements`` mean nothing for a traced value).

    >>> import autodiff.numpy as anp
    >>> anp.require([1, 2], dtype=float)
    array([1., 2.])
    """
    return asarray(a, dtype)


@npfunc(np.asarray_chkfinite)
def asarray_chkfinite(a, dtype=None, order=None):
    """``numpy.asarray_chkfinite``: ``ValueError`` on an inf or NaN where the values are
    known (numpy input, or eager ``grad``); under ``jit`` they are not, and it is
    :func:`asarray`.

    >>> import autodiff.numpy as anp
    >>> anp.asarray_chkfinite([1.0, 2.0])
    array([1., 2.])
    """
    out = asarray(a, dtype)
    if isinstance(out, Tracer) and out._trace.concrete and not out._trace.closed:
        if not np.isfinite(np.asarray(out.concrete_value("asarray_chkfinite"))).all():
            raise ValueError("array must not contain infs or NaNs")
    return out


@npfunc(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    """``numpy.copyto`` writes into ``dst``; a traced array cannot be written into, so on
    traced values it raises ``ConcretizationError`` (a ``TypeError``) with the functional
    spelling.

    >>> import numpy as np, autodiff.numpy as anp
    >>> d = np.zeros(2); anp.copyto(d, [1.0, 2.0]); d
    array([1., 2.])
    """
    raise ConcretizationError("copyto writes into dst, and traced arrays are immutable: "
                              "write dst = anp.where(where, src, dst) (or dst = "
                              "anp.broadcast_to(src, dst.shape)) instead",
                              source=user_source())


# ----------------------------------------------------------------------------
# ranges with traced end points (differentiable in them), results with .at[] too
# ----------------------------------------------------------------------------

@npfunc(np.linspace)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``numpy.linspace``; ``start`` and ``stop`` may be traced (arrays too), and the
    result is differentiable in both: ``start + k·(stop - start)/(num - 1)``."""
    num = builtins.int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    dt = np.result_type(*(x if is_python_scalar(x) else dtype_of(x) for x in (start, stop)), float(num))
    start, stop = asarray(start), asarray(stop)
    start, stop = P.convert(start, dt), P.convert(stop, dt)
    delta = anp.subtract(stop, start)
    nd = ndim(delta)
    y = np.arange(num, dtype=dt).reshape((-1,) + (1,) * nd)
    if div > 0:
        step = anp.divide(delta, dt.type(div))
        y = anp.multiply(y, step)
    else:
        step = dt.type(np.nan)
        y = anp.multiply(y, delta)
    y = anp.add(y, start)
    if endpoint and num > 1:
        y = anp.concatenate([anp.getitem(y, slice(0, num - 1)),
                             anp.expand_dims(anp.broadcast_to(stop, shape_of(y)[1:]), 0)], axis=0)
    if axis != 0:
        y = anp.moveaxis(y, 0, axis)
    if dtype is not None:
        odt = np.dtype(dtype)
        if odt.kind in "iu":
            y = anp.floor(y)
        y = anp.astype(y, odt)
    return (y, step) if retstep else y


@npfunc(np.logspace)
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop)`` (``numpy.logspace``), traced end points allowed."""
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    b = base if is_python_scalar(base) else asarray(base)
    if ndim(b):
        b = anp.expand_dims(b, axis)
    out = anp.power(b, y)
    return anp.astype(out, dtype) if dtype is not None else out


@npfunc(np.geomspace)
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Geometric progression from ``start`` to ``stop`` (``numpy.geomspace``; both of one
    sign), traced end points allowed; the end points are exact."""
    start, stop = as_float(start), as_float(stop)
    dt = np.result_type(dtype_of(start), dtype_of(stop), np.float64)     # numpy: float64 at least
    start, stop = anp.astype(start, dt), anp.astype(stop, dt)
    sgn = anp.sign(start)
    s0, s1 = anp.divide(start, sgn), anp.divide(stop, sgn)
    y = logspace(anp.log10(s0), anp.log10(s1), num=num, endpoint=endpoint, base=10.0)
    parts = []
    if num > 0:
        parts.append(anp.expand_dims(anp.broadcast_to(s0, shape_of(y)[1:]), 0))
    mid_hi = num - 1 if (endpoint and num > 1) else num
    if mid_hi > 1:
        parts.append(anp.getitem(y, slice(1, mid_hi)))
    if endpoint and num > 1:
        parts.append(anp.expand_dims(anp.broadcast_to(s1, shape_of(y)[1:]), 0))
    y = anp.concatenate(parts, axis=0) if parts else y
    y = anp.multiply(y, sgn)
    if axis != 0:
        y = anp.moveaxis(y, 0, axis)
    return anp.astype(y, dtype) if dtype is not None else y


def _fresh_result(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, tuple):                      # linspace(..., retstep=True)
            return (_fresh(out[0]),) + out[1:]
        return _fresh(out)
    return wrapper


linspace = _fresh_result(linspace)
logspace = _fresh_result(logspace)
geomspace = _fresh_result(geomspace)
__all__ += ["linspace", "logspace", "geomspace"]
