"""Calling host Python from traced code: ``pure_callback``.

``ad.pure_callback(callback, result_shape_dtypes, *args)`` calls ``callback`` on the
numpy values of ``args`` and returns its results, which must have the declared shapes
and dtypes. It is one primitive in the IR, so it works eagerly, under ``grad``/``vmap``
and inside ``jit`` (the compiled kernel leaves Numba's nopython mode for the call: see
``backends/numba_callback.py``). It has no derivative of its own: wrap it in
``ad.custom_vjp`` / ``ad.custom_jvp`` to give it one, which is autograd's ``@primitive``
use case (a numpy, scipy or C routine with a hand-written derivative).

>>> import numpy as np, scipy.special, autodiff as ad, autodiff.numpy as anp
>>> @ad.custom_vjp
... def erfcx(x):                                   # scipy's, called on values
...     return ad.pure_callback(scipy.special.erfcx, ad.ShapeDtypeStruct(x.shape, x.dtype), x)
>>> def erfcx_fwd(x):
...     y = erfcx(x)
...     return y, (x, y)
>>> def erfcx_bwd(res, g):
...     x, y = res
...     return (g * (2 * x * y - 2 / np.sqrt(np.pi)),)   # d/dx erfcx = 2x erfcx(x) - 2/sqrt(pi)
>>> erfcx.defvjp(erfcx_fwd, erfcx_bwd)
>>> print(np.round(ad.jit(ad.grad(lambda x: anp.sum(erfcx(x))))(np.array([1.0, 0.5])), 6))
[-0.273212 -0.512689]

``vmap_method`` says how ``vmap`` calls it: ``"sequential"`` (the default: one call per
batch element), ``"expand_dims"`` (one call; unbatched arguments get a leading axis of
size 1) or ``"broadcast_all"`` (one call; every argument broadcast to the batch size).
"""
import numpy as np

from .core import Primitive, ShapedArray, Zero, user_source
from .errors import DTypeError, ShapeError, UnsupportedError
from .tree_util import tree_flatten, tree_unflatten
from . import primitives as P
from .api_util import as_array, to_output
from .core import Tracer

__all__ = ["pure_callback", "io_callback"]

VMAP_METHODS = ("sequential", "expand_dims", "broadcast_all")


class _UserCallback:
    """Identity of a user function inside an equation: equal (and hashed) by the function
    object and the structures in ``_key``, so a retrace gives an equal equation and jit's
    caches, keyed by the jaxpr's structure, keep hitting. Not itself callable on purpose
    (IR keys treat callables by identity); run it with ``run``."""

    __slots__ = ()

    def __eq__(self, other):
        return type(other) is type(self) and self._key == other._key and self.fn is other.fn

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return getattr(self.fn, "__name__", "callback")

    __name__ = property(__repr__)


class HostCallback(_UserCallback):
    """The callable a ``pure_callback`` equation runs: the user's function with the pytree
    structure of its arguments and its declared results."""

    __slots__ = ("fn", "in_tree", "out_tree", "result_avals", "source", "_key")
    effectful = False      # an io_callback's is: its equation is never dead, folded or merged

    def __init__(self, fn, in_tree, out_tree, result_avals, source=None):
        self.fn, self.in_tree, self.out_tree = fn, in_tree, out_tree
        self.result_avals = tuple(result_avals)
        self.source = source
        self._key = (id(fn), in_tree, out_tree, self.result_avals)

    def run(self, *flat_args):
        """Call the user's function on numpy values; check and convert its results."""
        args, kwargs = tree_unflatten(self.in_tree, [np.asarray(a) for a in flat_args])
        out = self.fn(*args, **kwargs)
        leaves, tree = tree_flatten(out)
        if tree != self.out_tree:
            raise TypeError(f"pure_callback: {self!r} returned a value of structure {tree}, "
                            f"but result_shape_dtypes declares {self.out_tree}"
                            + _at(self.source))
        return [_check_result(self, np.asarray(x), a, i)
                for i, (x, a) in enumerate(zip(leaves, self.result_avals))]


def _at(source):
    return f"\n  (pure_callback called at {source})" if source else ""


def _check_result(cb, x, aval, i):
    if x.shape != aval.shape:
        raise ShapeError(f"pure_callback: result {i} of {cb!r} has shape {x.shape}, declared "
                         f"{aval.shape} in result_shape_dtypes" + _at(cb.source))
    if x.dtype != aval.dtype:
        if not np.can_cast(x.dtype, aval.dtype, casting="same_kind"):
            raise DTypeError(f"pure_callback: result {i} of {cb!r} has dtype {x.dtype}, "
                             f"declared {aval.dtype}; return that dtype (x.astype(...))"
                             + _at(cb.source))
        x = x.astype(aval.dtype)
    return x


class IoCallback(HostCallback):
    """The callable of an ``io_callback`` equation: a ``HostCallback`` whose calls are side
    effects (``ir.eqn_effectful`` reads ``effectful``), so each one runs, in program order."""

    __slots__ = ()
    effectful = True

    def __init__(self, fn, in_tree, out_tree, result_avals, source=None):
        HostCallback.__init__(self, fn, in_tree, out_tree, result_avals, source)
        self._key = ("io",) + self._key


class BatchedHostCallback(HostCallback):
    """``vmap`` of a host callback: ``dims`` per flat argument (0 or None), ``size``."""

    __slots__ = ("inner", "dims", "size", "method")

    def __init__(self, inner, dims, size, method):
        avals = [ShapedArray((size,) + a.shape, a.dtype) for a in inner.result_avals]
        HostCallback.__init__(self, inner.fn, inner.in_tree, inner.out_tree, avals, inner.source)
        self.inner, self.dims, self.size, self.method = inner, tuple(dims), size, method
        self._key = ("batched", inner._key, self.dims, size, method)

    effectful = property(lambda self: self.inner.effectful,
                         doc="Whether the calls are side effects (the inner callback's).")

    def __eq__(self, other):
        return isinstance(other, BatchedHostCallback) and self._key == other._key and \
            self.fn is other.fn

    __hash__ = HostCallback.__hash__

    def run(self, *flat_args):
        if self.method == "sequential":
            per = []
            for b in range(self.size):
                per.append(self.inner.run(*[a[b] if d is not None else a
                                            for a, d in zip(flat_args, self.dims)]))
            return [np.stack([p[k] for p in per]) if per else
                    np.zeros(a.shape, a.dtype) for k, a in enumerate(self.result_avals)]
        if self.method == "expand_dims":
            args = [a if d is not None else np.expand_dims(a, 0)
                    for a, d in zip(flat_args, self.dims)]
        else:                                           # broadcast_all
            args = [a if d is not None else np.broadcast_to(a, (self.size,) + np.shape(a))
                    for a, d in zip(flat_args, self.dims)]
        out = self.inner.fn(*tree_unflatten(self.in_tree, args)[0],
                            **tree_unflatten(self.in_tree, args)[1])
        leaves, tree = tree_flatten(out)
        if tree != self.out_tree:
            raise TypeError(f"pure_callback: {self!r} returned a value of structure {tree}, "
                            f"but result_shape_dtypes declares {self.out_tree}" + _at(self.source))
        return [_check_result(self, np.asarray(x), a, i)
                for i, (x, a) in enumerate(zip(leaves, self.result_avals))]


# ----------------------------------------------------------------------------
# the primitive
# ----------------------------------------------------------------------------

pure_callback_p = Primitive("pure_callback", multiple_results=True)
pure_callback_p.impl = lambda *args, callback, vmap_method: callback.run(*args)
pure_callback_p.abstract_eval = lambda *avals, callback, vmap_method: list(callback.result_avals)
pure_callback_p.effectful = False


def _pure_callback_jvp(primals, tangents, *, callback, vmap_method):
    if any(not isinstance(t, Zero) for t in tangents):
        raise UnsupportedError(
            f"pure_callback({callback!r}) has no derivative: the callback is opaque host "
            f"code. Wrap the function calling it in ad.custom_vjp (or ad.custom_jvp) and give "
            f"the derivative there.", source=callback.source or user_source())
    outs = pure_callback_p.bind(*primals, callback=callback, vmap_method=vmap_method)
    return outs, [Zero(a) for a in callback.result_avals]


def _pure_callback_batch(args, dims, *, callback, vmap_method):
    size = next(P.shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
    args = [P.moveaxis(a, d) for a, d in zip(args, dims)]
    bdims = [0 if d is not None else None for d in dims]
    bcb = BatchedHostCallback(callback, bdims, size, vmap_method)
    outs = pure_callback_p.bind(*args, callback=bcb, vmap_method=vmap_method)
    return outs, [0] * len(outs)


pure_callback_p.jvp = _pure_callback_jvp
pure_callback_p.batch = _pure_callback_batch


def pure_callback(callback, result_shape_dtypes, *args, vmap_method=None, **kwargs):
    """Call the host function ``callback(*args, **kwargs)`` on numpy values, from any
    traced or compiled code; ``result_shape_dtypes`` is a pytree of objects with ``shape``
    and ``dtype`` (``ad.ShapeDtypeStruct``, arrays) matching what it returns.

    ``callback`` must be pure (same values in, same values out, no side effects a program
    depends on): it may run more than once, or not at all if its results are unused.

    >>> import numpy as np, autodiff as ad
    >>> f = ad.jit(lambda x: ad.pure_callback(np.sort, ad.ShapeDtypeStruct((3,), np.float64),
    ...                                        x) * 2.0)
    >>> f(np.array([3.0, 1.0, 2.0]))
    array([2., 4., 6.])
    """
    method = "sequential" if vmap_method in (None, "legacy_vectorized") else vmap_method
    if method == "vectorized":
        method = "expand_dims"
    if method not in VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {VMAP_METHODS}, "
                         f"got {vmap_method!r}")
    return _host_call(HostCallback, callback, result_shape_dtypes, args, kwargs, method)


def _host_call(kind, callback, result_shape_dtypes, args, kwargs, method):
    src = user_source()
    specs, out_tree = tree_flatten(result_shape_dtypes)
    avals = []
    for s in specs:
        shape, dtype = getattr(s, "shape", None), getattr(s, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(f"pure_callback: result_shape_dtypes leaves need .shape and "
                            f"dtype (ad.ShapeDtypeStruct(shape, dtype)), got {s!r}"
                            + _at(src))
        avals.append(ShapedArray(tuple(shape), np.dtype(dtype)))
    flat, in_tree = tree_flatten((tuple(args), dict(kwargs)))
    flat = [as_array(x) for x in flat]
    cb = kind(callback, in_tree, out_tree, avals, src)
    outs = pure_callback_p.bind(*flat, callback=cb, vmap_method=method)
    if not any(isinstance(x, Tracer) for x in outs):
        outs = [to_output(o) for o in outs]
    return tree_unflatten(out_tree, list(outs))


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
    """Call the host function ``callback(*args, **kwargs)`` for its side effects and its
    results (JAX's ``jax.experimental.io_callback``): unlike :func:`pure_callback` every call
    runs, in program order, under ``jit`` too, even when its results are unused (a logger, a
    counter, reading from a stream). ``ordered`` is accepted (calls are always in order on
    one device); ``sharding`` is ignored. Under ``vmap`` it runs once per element, in order;
    it has no derivative (wrap its caller in ``ad.custom_vjp``), as in JAX.

    >>> import numpy as np, autodiff as ad
    >>> seen = []
    >>> def log(x):
    ...     seen.append(float(x.sum()))
    ...     return x
    >>> f = ad.jit(lambda x: ad.io_callback(log, ad.ShapeDtypeStruct((2,), np.float64), x) * 0)
    >>> f(np.ones(2)); f(np.full(2, 3.0)); seen
    array([0., 0.])
    array([0., 0.])
    [2.0, 6.0]
    """
    del sharding, ordered
    return _host_call(IoCallback, callback, result_shape_dtypes, args, kwargs, "sequential")


# ----------------------------------------------------------------------------
# debug_callback: a host call for its side effects (ad.debug.callback / ad.debug.print)
# ----------------------------------------------------------------------------

class EffectCallback(_UserCallback):
    """The callable a ``debug_callback`` equation runs: the user's function with the pytree
    structure of its arguments, called for its side effects."""

    __slots__ = ("fn", "in_tree", "source", "_key")

    def __init__(self, fn, in_tree, source=None):
        self.fn, self.in_tree, self.source = fn, in_tree, source
        self._key = ("effect", id(fn), in_tree)

    def run(self, *flat_args):
        args, kwargs = tree_unflatten(self.in_tree, [np.asarray(a) for a in flat_args])
        self.fn(*args, **kwargs)
        return []


class BatchedEffectCallback:
    """``EffectCallback`` under ``vmap``: one call per batch element, in order (as JAX's
    ``debug.callback``), unbatched arguments passed whole to every call."""

    __slots__ = ("inner", "dims", "size", "_key")

    def __init__(self, inner, dims, size):
        self.inner, self.dims, self.size = inner, tuple(dims), int(size)
        self._key = ("batched-effect", inner._key, self.dims, self.size)

    def __eq__(self, other):
        return isinstance(other, BatchedEffectCallback) and self._key == other._key and \
            self.inner == other.inner

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return repr(self.inner)

    source = property(lambda self: self.inner.source)

    def run(self, *flat_args):
        arrays = [np.asarray(a) for a in flat_args]
        for i in range(self.size):
            self.inner.run(*[a if d is None else a[i] for a, d in zip(arrays, self.dims)])
        return []


debug_callback_p = Primitive("debug_callback", multiple_results=True)
debug_callback_p.impl = lambda *args, callback: callback.run(*args)
debug_callback_p.abstract_eval = lambda *avals, callback: []
debug_callback_p.effectful = True        # never dead code; kept in program order


def _debug_callback_jvp(primals, tangents, *, callback):
    debug_callback_p.bind(*primals, callback=callback)       # sees the primal values
    return [], []


def _debug_callback_batch(args, dims, *, callback):
    size = next(P.shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
    args = [P.moveaxis(a, d) for a, d in zip(args, dims)]
    bdims = [0 if d is not None else None for d in dims]
    debug_callback_p.bind(*args, callback=BatchedEffectCallback(callback, bdims, size))
    return [], []


debug_callback_p.jvp = _debug_callback_jvp
debug_callback_p.batch = _debug_callback_batch


def debug_callback(fn, *args, **kwargs):
    """Bind a ``debug_callback`` equation calling ``fn(*args, **kwargs)`` on numpy values
    wherever the program runs (interpreter or compiled kernel); see ``ad.debug.callback``."""
    flat, in_tree = tree_flatten((tuple(args), dict(kwargs)))
    flat = [as_array(x) for x in flat]
    debug_callback_p.bind(*flat, callback=EffectCallback(fn, in_tree, user_source()))


# ============================================================================
# Taylor rules (jet)
# ============================================================================

# a pure_callback is opaque host code: no derivative of any order, and jet says what to do
P.deftaylor_opaque(pure_callback_p,
                   "the callback is opaque host code: wrap the function calling it in "
                   "ad.custom_jvp and give its derivative there (jet then uses the rule)")


def _debug_callback_taylor(ins, **params):
    # a side effect with no results: it sees the primal values, once
    debug_callback_p.bind(*[s[0] for s in ins], **params)
    return []


P.deftaylor(debug_callback_p, _debug_callback_taylor)
