"""jit: trace once per input signature, lower to Numba CPU code, cache the result.

Two caches sit at the stage boundaries (docs/design.md, "jit and the graph cache"):

* the **graph cache** of each jitted function (an LRU of ``ad.config.cache_size``
  entries) maps an input signature -- pytree structure, shapes, dtypes, the values of
  static arguments -- to a ready-to-call entry (the traced jaxpr and the compiled
  kernel with its size vector);
* the **kernel cache** (:mod:`autodiff.backends.compile_cache`) maps generated source
  to compiled machine code, in memory and on disk; each loop nest is a module of its
  own keyed by its text, so kernels share the pieces they have in common.

A signature's first kernel is specialized to its sizes. While the direct LLVM tier
compiles a function's kernels (milliseconds each), each new size gets a specialized kernel
too, up to ``SPECIALIZED_SIZES``; otherwise (or after those) a dimension whose size changes
in a later call turns dynamic (``_dynamic_for``), once, and the shape-generic kernel it
gets serves every later size with a re-trace (milliseconds), not a compile. A miss does
not wait for Numba: the entry runs on the interpreter until the background compiler
(``_Compiler``) swaps in the compiled call.

Called on tracers (``grad(jit(f))``, ``vmap(jit(f))``, jit inside jit) a jitted
function traces ``f`` abstractly and inlines that jaxpr into the enclosing trace.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> @ad.jit
... def f(x):
...     return anp.sum(anp.tanh(x) ** 2)
>>> float(f(np.zeros(3)))
0.0
>>> f.cache_info()[:4]
(0, 1, 1, 1024)

A cache miss returns at once, computed by the interpreter, while the kernel compiles
in the background (a worker process; ``cache_info().pending``); ``ad.wait_for_compiles()``
waits for it. Signatures, entries, the background compiler and ``Lowered`` are
:mod:`autodiff.jit_runtime`.
"""
import collections
import contextlib
import functools
import hashlib
import inspect
import logging
import os
import threading
import typing
import weakref
from typing import Any, Callable, Generic, Optional, ParamSpec, Sequence, TypeVar, Union

import numpy as np

from .api import as_array, to_output
from .cache import ProgramCache, declare
from .config import config
from .core import Tracer, eval_jaxpr, trace_flat, user_source
from . import named_axes as _named_axes
from .named_axes import scope_key
from .source_info import trace_state
from .devices import CudaArray
from .devices import adopt as _adopt, host_copy as _host_copy, is_foreign_cuda as _is_foreign_cuda
from .errors import DTypeError, UnsupportedDTypeError
from .jit_runtime import (PY_SCALARS, SCALAR_KEYS, Entry, Lowered, LoweringJob,
                          compiled_entry, llvm_entry, remote_lowering, get_backend,
                          explain_miss, interpreted_entry, leaf_aval, leaf_key,
                          lower_program, signature_structure, submit_compile,
                          wait_for_compiler)
from .numpy.random import warn_numpy_random_calls
from .pickling import reduce_transformed
from .shapes import ShapeDtypeStruct
from .tree_util import LEAF, tree_flatten, tree_map, tree_structure, tree_unflatten
from .traceback_util import shown_error as _shown_error

__all__ = ["jit", "JitFunction", "Lowered", "Traced", "CacheInfo", "wait_for_compiles",
           "disable_jit"]

CacheInfo = collections.namedtuple("CacheInfo", "hits misses size capacity compiled pending")
CacheInfo.__doc__ = """Counters of one jitted function's graph cache (like functools.lru_cache's).

``hits``, ``misses``; ``size`` entries of ``capacity``; of those, ``compiled`` call a
Numba kernel and ``pending`` run on the interpreter while their kernel compiles in the
background (the rest run on the interpreter by choice: ``backend="interpret"``,
``debug_nans``)."""
declare("jit", "cache_size")     # listed by ad.config.caches() before the first jit(f)
_log = logging.getLogger("autodiff.jit")

# Sizes of one signature structure that get kernels of their own while the LLVM tier
# compiles them (JitFunction._specializes); the next changed dimension turns dynamic.
SPECIALIZED_SIZES = 8
_ndarray = np.ndarray
_CudaArray = CudaArray
_instances = weakref.WeakSet()   # every JitFunction (config changes and forks reach them)
_disabled = 0                    # > 0 inside ``disable_jit()``


@config.on_update
def _on_config(name, value):
    global _disabled
    if name == "jax_disable_jit":     # JAX's switch: as inside ``disable_jit()`` until unset
        _disabled += 1 if value else -1
        return
    # entries are built for one mode (compiled or NaN-checking interpreter) and capacity
    if name in ("debug_nans", "default_backend", "jit_parallel_threshold"):
        for f in list(_instances):
            with f._lock:
                f._cache.clear(reset_stats=False)


def _renew_locks_after_fork():
    # a forked child renews every cache's lock (autodiff.cache's at-fork hook, registered
    # first); each jitted function keeps its own reference to it
    for f in list(_instances):
        f._lock = f._cache.lock


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_locks_after_fork)


@contextlib.contextmanager
def disable_jit(disable=True):
    """Inside this context jitted functions run as plain Python, operation by operation,
    so ``print`` and a debugger see concrete values (as ``jax.disable_jit``).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> @ad.jit
    ... def f(x):
    ...     print(type(x).__name__)
    ...     return anp.sum(x * x)
    >>> with ad.disable_jit():
    ...     float(f(np.arange(3.0)))
    ndarray
    5.0
    """
    global _disabled
    _disabled += bool(disable)
    try:
        yield
    finally:
        _disabled -= bool(disable)


def wait_for_compiles(timeout=None):
    """Block until every background compile has finished (or ``timeout`` seconds pass).

    Returns whether none is left pending. Useful in benchmarks and tests; ordinary code
    never needs it (calls switch to compiled kernels by themselves).

    >>> import autodiff as ad
    >>> ad.wait_for_compiles()
    True
    """
    for f in list(_instances):
        f._start_deferred()             # signatures still counting calls (tiering) start now
    return wait_for_compiler(timeout)


# ----------------------------------------------------------------------------------
# the jitted function
# ----------------------------------------------------------------------------------

P = ParamSpec("P")
R = TypeVar("R")


def _is_struct(x):
    return isinstance(x, ShapeDtypeStruct)


def _placeholder(x):
    """A ``ShapeDtypeStruct`` as an array of its shape and dtype with no data of its own."""
    if isinstance(x, ShapeDtypeStruct):
        return np.broadcast_to(np.zeros((), x.dtype), x.shape)
    return x


class Traced:
    """What ``jitted.trace(*args)`` returns: ``jaxpr`` (the ClosedJaxpr), ``out_info`` (the
    results' ``ShapeDtypeStruct`` s, in the output's pytree) and ``lower()``.

    >>> import numpy as np, autodiff as ad
    >>> print(ad.jit(lambda x: x * 2.0).trace(np.ones(2)).jaxpr)
    { lambda ; a:f64[2]. let b:f64[2] = mul a 2.0:f64[] in (b,) }
    """

    def __init__(self, jitted, closed, out_tree, args, kwargs):
        self.jaxpr = closed
        self.fun_name = jitted._name
        self.out_info = tree_unflatten(out_tree, [ShapeDtypeStruct(v.aval.shape, v.aval.dtype)
                                                  for v in closed.jaxpr.outvars])
        self._jitted, self._args, self._kwargs = jitted, args, kwargs

    def lower(self) -> Lowered:
        """``jitted.lower`` on the same arguments."""
        return self._jitted.lower(*self._args, **self._kwargs)


class JitFunction(Generic[P, R]):
    """A function compiled per input signature. Call it like the original.

    Attributes: ``cache_info()``, ``clear_cache()``, ``lower(*args)``, ``__wrapped__``.
    """

    def __init__(self, fun, static_argnums=(), static_argnames=(), backend=None,
                 dynamic_shapes=None, donate_argnums=(), donate_argnames=()):
        if dynamic_shapes not in (None, True, False):
            raise TypeError(f"jit: dynamic_shapes must be None, True or False, got "
                            f"{dynamic_shapes!r}")
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
        if inspect.isgeneratorfunction(fun):
            raise TypeError(f"Expected a function, got a generator function: "
                            f"{getattr(fun, '__name__', fun)} (jit needs a function that "
                            f"returns arrays)")
        if backend is not None:
            require = get_backend(backend).require
            if require is not None:      # says what is missing (numba-cuda, a GPU)
                require(user_source())
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._backend = backend
        nums = _as_tuple(static_argnums)
        names = tuple(static_argnames) if isinstance(static_argnames, (tuple, list)) else \
            ((static_argnames,) if static_argnames else ())
        _validate_argnums_argnames(fun, nums, names, "static")
        nums, names = _link_static(fun, nums, names)
        self._static_argnums = tuple(sorted(set(nums)))
        self._static_argnames = frozenset(names)
        # accepted and checked, as JAX's; on the CPU nothing is donated (see _check_donate)
        self._donate_argnums, self._donate_argnames = _check_donate(
            fun, donate_argnums, donate_argnames, self._static_argnums, self._static_argnames)
        self._fast = not self._static_argnums and not self._static_argnames
        # the graph cache (autodiff.cache, listed as "jit"); its lock guards every change
        self._cache = ProgramCache("jit", "cache_size")
        self._table = self._cache.table      # read without the lock on the fast path
        self._lock = self._cache.lock
        self._name = getattr(fun, "__name__", "fun")
        self._dtype_fallback_logged = False  # the interpreter fallback is logged once
        self._dynamic_shapes = dynamic_shapes
        # signature structure (sizes -> ranks) -> [first shapes, {(leaf, axis) turned dynamic},
        # [keys of the sizes that got specialized kernels]]
        self._shapes = {}
        # key -> start(): signatures whose compile waits for their n-th call (tiering)
        self._deferred = {}
        _instances.add(self)

    def __repr__(self):
        return f"<jitted {self._name}>"

    def __reduce__(self):
        # the recipe, not the caches: the receiving process traces again on its first call
        # and compiles or loads the kernel from the disk cache (autodiff.pickling)
        return reduce_transformed(self, jit, self._fun, (), dict(
            static_argnums=self._static_argnums, static_argnames=tuple(self._static_argnames),
            backend=self._backend, dynamic_shapes=self._dynamic_shapes,
            donate_argnums=self._donate_argnums, donate_argnames=self._donate_argnames))

    def __get__(self, obj, objtype=None):
        # a jitted method: the instance is a static argument (by identity) unless it is
        # a registered pytree, as ``partial(jit, static_argnums=0)`` would make it in JAX
        if obj is None:
            return self
        if tree_structure(obj).node_type is not None:
            return functools.partial(self, obj)
        return functools.partial(self._call_slow_method, _ById(obj))

    def _call_slow_method(self, obj, *args, **kwargs):
        try:
            return self._call_slow((obj,) + args, kwargs, self_static=True)
        except Exception as e:
            shown = _shown_error(e)
            if shown is None:
                raise
            raise shown from None

    # -------------------------------------------------------------- public helpers
    def cache_info(self) -> CacheInfo:
        """``CacheInfo(hits, misses, size, capacity, compiled, pending)`` of this function's
        graph cache (see :class:`CacheInfo`)."""
        c = self._cache
        states = [getattr(getattr(e, "entry", None), "state", None) for e in c.values()]
        return CacheInfo(c.hits, c.misses, len(c), c.capacity,
                         states.count("compiled"), states.count("pending"))

    def _entry_for(self, *args, **kwargs):
        """The cache entry a call with these arguments runs (its ``state`` is "compiled",
        "pending" or "interpreted", with a ``reason``), or None before the first such call.
        For tests (tests/jit_util.py); counts no hit."""
        key = self._signature(args, kwargs)[0]
        return None if key is None else getattr(self._table.get(key), "entry", None)

    def wait_compiled(self, timeout: Optional[float] = None) -> bool:
        """Block until none of this function's entries waits for a background compile.

        Returns whether none is pending (False after ``timeout`` seconds)."""
        self._start_deferred()
        ok = wait_for_compiler(timeout)
        return ok and self.cache_info().pending == 0

    def clear_cache(self) -> None:
        """Empty this function's graph cache and reset its counters (the kernel cache stays)."""
        self._cache.clear()

    def lower(self, *args: P.args, **kwargs: P.kwargs) -> "Lowered":
        """The jaxpr and generated source for these arguments (nothing is compiled).

        >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
        >>> low = ad.jit(lambda x: anp.exp(x) + 1.0).lower(np.ones(3))
        >>> print(low.jaxpr)
        { lambda ; a:f64[3]. let
            b:f64[3] = exp a
            c:f64[3] = add b 1.0:f64[]
          in (c,) }
        >>> "# b:f64[3] = exp a" in low.source
        True
        """
        closed, out_tree, keys, key = self._trace_for("lower", args, kwargs)
        install = (closed, out_tree, keys, functools.partial(self._put_entry, key))
        backend = self._backend_now()
        if backend.lower is None:
            return Lowered(closed, None, None, None, install=install)
        prog = backend.lower(closed, self._dynamic_for(key, record=False))
        return Lowered(prog.jaxpr, prog.source, prog.sizes, prog,
                       install=install, backend=backend)

    def trace(self, *args: P.args, **kwargs: P.kwargs) -> "Traced":
        """The traced program for these arguments (JAX's ``jit(f).trace``): ``jaxpr``,
        ``out_info`` (``ShapeDtypeStruct`` s of the results) and ``lower()``. Arguments may
        be arrays or ``ad.ShapeDtypeStruct`` s (nothing runs on them).

        >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
        >>> t = ad.jit(lambda x: anp.sum(x ** 2)).trace(ad.ShapeDtypeStruct((3,), np.float64))
        >>> t.out_info
        ShapeDtypeStruct(shape=(), dtype=float64)
        >>> float(t.lower().compile()(np.ones(3)))
        3.0
        """
        closed, out_tree, _, _ = self._trace_for("trace", args, kwargs)
        return Traced(self, closed, out_tree, args, kwargs)

    def _trace_for(self, what, args, kwargs):
        """Trace for ``lower``/``trace``: ``ShapeDtypeStruct`` leaves stand for arrays of
        their shape and dtype (zero-stride views, no data)."""
        args, kwargs = tree_map(_placeholder, (args, kwargs), is_leaf=_is_struct)
        key, leaves, in_tree, statics, kw = self._signature(args, kwargs)
        if key is None:
            raise TypeError(f"jit({self._name}).{what}: the arguments are traced values; "
                            f"call {what}() with arrays or ad.ShapeDtypeStruct s")
        keys = [leaf_key(x) for x in leaves]
        closed, out_tree = self._trace(leaves, keys, in_tree, statics, kw, args)
        return closed, out_tree, keys, key

    def _dynamic_for(self, key, record=True):
        """Which input dimensions the kernel for ``key`` reads at run time (see lower())."""
        mode = self._dynamic_shapes
        if mode is None:
            mode = config.jit_dynamic_shapes
        if mode is True:
            return True
        if mode is False:
            return frozenset()
        struct, shapes = signature_structure(key)
        if struct is None:
            return frozenset()
        seen = self._shapes.get(struct)
        if seen is None:
            if record:
                self._shapes[struct] = [shapes, set(), [key]]
            return frozenset()
        first, dyn, special = seen
        if not dyn and self._specializes(special):
            if record and key not in special:
                special.append(key)
                if config.explain_cache_misses:
                    _log.warning(f"jit({self._name}): a new size gets a kernel of its own (the "
                                 f"LLVM tier compiles it in milliseconds; "
                                 f"{SPECIALIZED_SIZES - len(special)} more before a changed "
                                 f"dimension turns dynamic)")
            return frozenset()
        new = set(dyn)
        for i, (a, b) in enumerate(zip(first, shapes)):
            if a is not None:
                new.update((i, ax) for ax, (m, n) in enumerate(zip(a, b)) if m != n)
        if record and new != dyn:
            if config.explain_cache_misses:
                for i, ax in sorted(new - dyn):
                    _log.warning(f"jit({self._name}): dimension {ax} of argument leaf {i} "
                                 f"turned dynamic (size {first[i][ax]} -> {shapes[i][ax]}); "
                                 f"one shape-generic kernel serves its later sizes")
            seen[1] = new
        return frozenset(new)

    def _specializes(self, keys):
        """Whether another size of a signature structure gets a kernel specialized to it
        (as XLA compiles one per shape) rather than turning a dimension dynamic: while every
        kernel of its sizes so far is the LLVM tier's (tens of milliseconds to compile,
        where Numba's shape-generic kernel takes seconds) and there are fewer than
        ``SPECIALIZED_SIZES``. A size still compiling, or compiled by Numba, ends it."""
        if len(keys) >= SPECIALIZED_SIZES:
            return False
        for k in keys:
            entry = getattr(self._table.get(k), "entry", None)
            if getattr(entry, "backend", None) != "llvm":
                return False
        return True

    # -------------------------------------------------------------- calling
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        # the public boundary: an error leaves with autodiff's frames dropped from its
        # traceback (autodiff.traceback_util); try costs nothing on the fast path
        try:
            if _disabled:
                return self._fun(*args, **kwargs)
            # the fast path: flat arguments that are arrays or scalars, no static arguments
            # (not inside a named vmap's trace: a program there depends on the axes)
            if self._fast and not kwargs and not _named_axes.tracing_count:
                try:
                    key = tuple([(a.shape, a.dtype) if type(a) is _ndarray
                                 else SCALAR_KEYS[type(a)] for a in args])
                except KeyError:
                    key = None        # (the rest outside the handler: an error raised
                if key is None:       # there does not carry this KeyError as context)
                    # device arrays (CudaArray) where the backend keeps them there
                    key = self._device_key(args)
                    if key is None:
                        return self._call_slow(args, kwargs)
                table = self._table
                call = table.get(key)
                if call is not None:
                    self._cache.hits += 1
                    if len(table) > 1:
                        self._touch(key)
                    try:
                        return call(*args)
                    except OverflowError:
                        _check_int_range(args, self._name)
                        raise
            return self._call_slow(args, kwargs)
        except Exception as e:
            shown = _shown_error(e)
            if shown is None:
                raise
            raise shown from None

    def _device_key(self, args):
        """The fast path's key of flat arguments some of which are device arrays
        (:class:`~autodiff.devices.CudaArray`: shape and dtype, as ``leaf_key``), where
        the backend a call runs now takes them as they are (its cache entries are all
        for that backend: a change of backend or of ``debug_nans`` clears them); None
        otherwise (the slow path copies them to the host, or they are something else)."""
        if not self._backend_now().device_arrays:
            return None
        key = []
        for a in args:
            t = type(a)
            if t is _ndarray or t is _CudaArray:
                key.append((a.shape, a.dtype))
            else:
                k = SCALAR_KEYS.get(t)
                if k is None:
                    # a CUDA array of another library (CuPy, PyTorch): its interface's
                    # shape and dtype (the backend's entry adopts it in place)
                    cai = getattr(a, "__cuda_array_interface__", None)
                    if cai is None:
                        return None
                    k = (tuple(cai["shape"]), np.dtype(cai["typestr"]))
                key.append(k)
        return tuple(key)

    # The cache's lock discipline: lookups (``get``) take no lock; every change (insert,
    # evict, clear, the install of a compiled kernel) holds ``self._lock``; the LRU touch
    # of a hit is the one change made without it, and the entry may be gone by then (another
    # thread evicted it between our get and the touch): that is a miss already served, not
    # an error. Fast-path keys hash and compare in C, so each OrderedDict call is atomic.
    def _touch(self, key):
        try:
            self._table.move_to_end(key)
        except KeyError:
            pass

    def _call_slow(self, args, kwargs, self_static=False):
        key, leaves, in_tree, statics, kw = self._signature(args, kwargs, self_static)
        if key is None or trace_state.axis_frames:
            # traced arguments, or a call inside a named vmap's trace (its collectives are
            # resolved by that vmap, and its program depends on the axis sizes): inlined
            # into the enclosing trace
            return self._call_inline(leaves, in_tree, statics, kw, args)
        call = self._table.get(key)
        if call is not None:
            self._cache.hits += 1
            with self._lock:             # tree keys compare treedefs in Python: not atomic
                self._touch(key)
            try:
                return call(*leaves)
            except OverflowError:
                _check_int_range(leaves, self._name)
                raise
        return self._miss(key, leaves, in_tree, statics, kw, args)

    def _signature(self, args, kwargs, self_static=False):
        """``(key, flat dynamic leaves, treedef, statics, static kwargs)``; key None if traced."""
        statics = ()
        dyn_args = args
        if self._static_argnums or self_static:
            n = len(args)
            idx = {0} if self_static else set()
            for i in self._static_argnums:
                if -n <= i < n:
                    idx.add(i % n)
            statics = tuple((i, args[i]) for i in sorted(idx))
            dyn_args = tuple(a for i, a in enumerate(args) if i not in idx)
        static_kw = {}
        dyn_kw = kwargs
        if kwargs:
            # API.md: a keyword value that is configuration (a string, None, a bool, tuples
            # of such) is static without being named in static_argnames
            static_kw = {k: v for k, v in kwargs.items()
                         if k in self._static_argnames or _is_config_value(v)}
            if static_kw:
                dyn_kw = {k: v for k, v in kwargs.items() if k not in static_kw}
                statics = statics + tuple(sorted(static_kw.items()))
        for name, v in statics:
            try:
                hash(v)
            except TypeError:
                what = f"argument {name}" if isinstance(name, int) else f"argument {name!r}"
                raise TypeError(
                    f"jit({self._name}): static {what} has an unhashable value of type "
                    f"{type(v).__name__} ({_short(v)}). Static arguments are part of the cache "
                    f"key and must be hashable: pass a tuple instead of a list (or a frozen "
                    f"object), or make the argument dynamic (not in static_argnums/"
                    f"static_argnames).") from None
        if dyn_kw:
            leaves, in_tree = tree_flatten((tuple(dyn_args), dyn_kw))
            static_kw = (static_kw, True)
        else:
            leaves, in_tree = tree_flatten(tuple(dyn_args))
            static_kw = (static_kw, False)
        keep = self._backend_now().device_arrays     # device arrays stay on the device
        leaves = [x if keep and getattr(x, "_autodiff_device", None)
                  else _adopt(x) if keep and _is_foreign_cuda(x) else _as_leaf(x)
                  for x in leaves]
        _check_int_range(leaves, self._name)
        keys = [leaf_key(x) for x in leaves]
        if any(k is None for k in keys):
            return None, leaves, in_tree, statics, static_kw
        simple = (not statics and not dyn_kw and in_tree.node_type is tuple
                  and all(c is LEAF or c.node_type is None for c in in_tree.children)
                  and all(type(x) is _ndarray or type(x) in SCALAR_KEYS
                          or (keep and type(x) is _CudaArray) for x in leaves))
        if simple:
            return tuple(keys), leaves, in_tree, statics, static_kw
        return ("tree", in_tree, statics, tuple(keys)), leaves, in_tree, statics, static_kw

    def _backend_now(self):
        """The :class:`~autodiff.jit_runtime.Backend` a call runs now."""
        if config.debug_nans:
            name = "interpret"       # the interpreter checks every equation for NaNs
        else:
            name = self._backend or config.default_backend
        return get_backend(name, "jit" if self._backend else "config.default_backend")

    def _trace(self, leaves, keys, in_tree, statics, static_kw, args):
        warn_numpy_random_calls(self._fun)      # a numpy.random draw would be frozen in
        avals = []
        for x, k in zip(leaves, keys):
            if k is None:
                avals.append(x.aval)
            else:
                avals.append(leaf_aval(x, k))
        fun = self._fun
        static_pos = dict((i, v.obj if isinstance(v, _ById) else v) for i, v in statics
                          if isinstance(i, int))
        n_args = len(args)
        static_kw, has_kw = static_kw
        box = []

        def flat_fun(*tracers):
            tree = tree_unflatten(in_tree, list(tracers))
            if has_kw:
                dyn, dkw = tree
            else:
                dyn, dkw = tree, {}
            it = iter(dyn)
            full = [static_pos[i] if i in static_pos else next(it) for i in range(n_args)]
            out = fun(*full, **dkw, **static_kw)
            outs, out_tree = tree_flatten(out)
            box.append(out_tree)
            return [as_array(o) for o in outs]

        closed = trace_flat(flat_fun, avals, None, name=f"jit({self._name})")
        return closed, box[0]

    def _call_inline(self, leaves, in_tree, statics, static_kw, args):
        keys = [leaf_key(x) for x in leaves]
        # the named vmap axes in scope: a collective's program depends on their sizes
        ikey = ("inline", in_tree, statics,
                tuple(("tracer", x.aval) if k is None else k for x, k in zip(leaves, keys)),
                scope_key())
        e = self._table.get(ikey)
        if e is None:
            self._cache.misses += 1
            closed, out_tree = self._trace(leaves, keys, in_tree, statics, static_kw, args)
            e = Entry(None, closed, out_tree, backend="inline")
            if not any(isinstance(c, Tracer) for c in closed.consts):
                self._insert(ikey, e)
        else:
            self._cache.hits += 1
            with self._lock:
                self._touch(ikey)
        outs = eval_jaxpr(e.closed.jaxpr, e.closed.consts, *leaves)
        return tree_unflatten(e.out_tree, [to_output(o) for o in outs])

    def _miss(self, key, leaves, in_tree, statics, static_kw, args):
        with self._lock:
            call = self._table.get(key)       # another thread may have filled it meanwhile
            if call is not None:
                self._cache.hits += 1
                return call(*leaves)
            self._cache.misses += 1
            explain = config.explain_cache_misses
            if explain:
                last = self._cache.last_key()
                _log.warning(explain_miss(self._name, last, key))
            keys = [leaf_key(x) for x in leaves]
            closed, out_tree = self._trace(leaves, keys, in_tree, statics, static_kw, args)
            if any(isinstance(c, Tracer) for c in closed.consts):
                # closes over a value traced by an enclosing transform: inline, do not cache
                outs = eval_jaxpr(closed.jaxpr, closed.consts, *leaves)
                return tree_unflatten(out_tree, [to_output(o) for o in outs])
            backend = self._backend_now()
            entry = None
            if not backend.tiered:
                dynamic = self._dynamic_for(key) if backend.lower is not None else None
                try:
                    entry = backend.entry(closed, out_tree, keys, dynamic)
                except UnsupportedDTypeError as err:     # as on the CPU: the interpreter
                    entry = self._dtype_fallback(closed, out_tree, err)
            else:
                from .backends import compile_cache    # the Numba side loads at a first compile
                before = compile_cache.stats()
                try:
                    dynamic = self._dynamic_for(key)
                    if config.jit_background_compile and config.jit_compile_after > 1:
                        entry = self._deferred_entry(key, closed, out_tree, keys, dynamic)
                    else:
                        entry = self._lowered_entry(key, closed, out_tree, keys, dynamic)
                except UnsupportedDTypeError as err:
                    entry = self._dtype_fallback(closed, out_tree, err)
                if explain and entry is not None and entry.state == "pending":
                    _log.warning(f"jit({self._name}): kernel compiling in the background; "
                                 f"this call runs on the interpreter")
                elif explain and entry is not None and entry.kernel is not None:
                    after = compile_cache.stats()
                    if after["memory_hits"] > before["memory_hits"]:
                        how = "reused (shape-generic kernel)"
                    elif after["disk_loads"] > before["disk_loads"]:
                        how = "loaded from the disk cache"
                    elif entry.backend == "llvm":
                        how = "compiled by the LLVM tier"
                    else:
                        how = "compiled by Numba"
                    _log.warning(f"jit({self._name}): kernel {entry.kernel.key[:12]} {how}")
            if entry is None:
                entry = interpreted_entry(closed, out_tree)
            entry.call.entry = entry          # the cache holds the bare call; keep the rest
            self._insert(key, entry.call)
        submit = entry.submit
        if submit is None:
            return entry.call(*leaves)
        # The compile starts once this first result exists: Numba's type inference holds
        # the GIL, and starting it earlier made the interpreted first call 2.5x slower
        # (measured: MLP value_and_grad 0.096 s alone, 0.24 s beside the compiler).
        entry.submit = None
        try:
            return entry.call(*leaves)
        finally:
            submit()

    def _dtype_fallback(self, closed, out_tree, err):
        """The one lowering error jit does not raise: the backend has no kernel for a dtype
        (``UnsupportedDTypeError``: float16 ...). This signature runs on the interpreter; the
        entry records why, and the first such signature of this function logs it."""
        entry = interpreted_entry(closed, out_tree)
        entry.reason = str(err)
        if not self._dtype_fallback_logged:
            self._dtype_fallback_logged = True
            _log.warning(f"jit({self._name}): {err}; this signature runs on the numpy "
                         f"interpreter (cast the inputs to a supported dtype for a compiled "
                         f"kernel)")
        return entry

    def _lowered_entry(self, key, closed, out_tree, keys, dynamic):
        """The entry of a signature lowered now: compiled at once when its kernel is in
        memory already (or the compile blocks), else pending on the background compiler."""
        if config.jit_background_compile and remote_lowering(closed):
            # the worker process lowers it too: this process keeps interpreting meanwhile
            return self._pending_entry(key, closed, out_tree, keys, LoweringJob(closed, dynamic))
        from .backends import compile_cache            # (loaded with the first kernel)
        prog = lower_program(closed, dynamic)
        kernel = compile_cache.memory_lookup(prog.source)
        if kernel is None and config.jit_llvm_tier:
            if config.jit_background_compile:
                from .backends import llvm_cpu
                # the background job tries the LLVM tier first (in the worker process: the
                # interpreter keeps the GIL, and an exit never waits), then Numba
                prog.llvm_tier = llvm_cpu.supports(prog)
            else:
                entry = llvm_entry(closed, out_tree, keys, prog)
                if entry is not None:
                    return entry
        if kernel is None and config.jit_background_compile:
            return self._pending_entry(key, closed, out_tree, keys, prog)
        return compiled_entry(closed, out_tree, keys, prog=prog, kernel=kernel)

    def _deferred_entry(self, key, closed, out_tree, keys, dynamic):
        """An interpreted entry that counts its calls (tiering): at the
        ``config.jit_compile_after``-th the kernel is lowered and its background compile
        starts, so a signature called once never lowers or compiles anything, and a loop
        starts its compile on its second step. ``wait_for_compiles()`` / ``wait_compiled()``
        start it at once."""
        entry = interpreted_entry(closed, out_tree, state="pending")
        interpret = entry.call
        left = [config.jit_compile_after]

        def start():
            with self._lock:
                if left[0] is None:
                    return
                left[0] = None
                self._deferred.pop(key, None)
                if self._table.get(key) is not call:
                    return                       # evicted or replaced meanwhile
            try:
                now = self._lowered_entry(key, closed, out_tree, keys, dynamic)
            except UnsupportedDTypeError as err:
                now = self._dtype_fallback(closed, out_tree, err)
            now.call.entry = now
            with self._lock:
                if self._table.get(key) is not call:
                    return
                self._cache.put(key, now.call)   # in place: the next call runs it
            submit, now.submit = now.submit, None
            if submit is not None:
                submit()

        def call(*leaves):
            out = interpret(*leaves)
            n = left[0]
            if n is not None:
                left[0] = n - 1
                if n <= 1:
                    start()
            return out
        entry.call = call
        with self._lock:
            if len(self._deferred) > self._cache.capacity:     # drop evicted ones' starts
                for k in [k for k in self._deferred if k not in self._table]:
                    del self._deferred[k]
            self._deferred[key] = start
        return entry

    def _start_deferred(self):
        """Start the background compile of every entry still counting its calls."""
        with self._lock:
            starts = list(self._deferred.values())
        for start in starts:
            start()

    def _pending_entry(self, key, closed, out_tree, keys, prog):
        """An interpreted entry now; the compiled one replaces it when the kernel is ready.
        ``prog``: the lowered program, or a :class:`LoweringJob` the compiler lowers."""
        entry = interpreted_entry(closed, out_tree, state="pending")
        entry.program = prog
        placeholder = entry.call

        def install(kernel, err):
            with self._lock:
                if self._table.get(key) is not placeholder:
                    return                      # evicted or cleared meanwhile
                if isinstance(err, UnsupportedDTypeError):     # (lowered by the compiler)
                    entry.state = "interpreted"
                    entry.reason = self._dtype_fallback(closed, out_tree, err).reason
                    return
                if err is not None:
                    entry.state = "interpreted"
                    _log.warning(f"jit({self._name}): compiling the kernel failed "
                                 f"({type(err).__name__}: {err}); this signature keeps running "
                                 f"on the interpreter")
                    return
                lowered = prog.program if isinstance(prog, LoweringJob) else prog
                entry.program = lowered
                done = compiled_entry(closed, out_tree, keys, prog=lowered, kernel=kernel)
                if getattr(kernel, "gemm_pool", True) is False:
                    done.backend = "llvm"
                done.call.entry = done
                self._cache.put(key, done.call)  # replaces in place: the next call is compiled

        # jobs are keyed by source alone: the version part of the kernel key is the same for
        # every job of a process, and computing it imports Numba (the worker does that)
        job = (hashlib.sha256(prog.source.encode()).hexdigest()
               if not isinstance(prog, LoweringJob) else ("lower", id(prog)))
        entry.submit = lambda: submit_compile(job, prog, install)
        return entry

    def _insert(self, key, entry):
        self._cache.put(key, entry)

    def _put_entry(self, key, entry):
        """``Lowered.compile()``: signature ``key`` runs ``entry`` from now on (None: the
        interpreter backend, nothing to install). Returns this function."""
        if entry is not None:
            entry.call.entry = entry
            with self._lock:
                self._insert(key, entry.call)
        return self


class _ById:
    """A static argument hashed by identity (the instance of a jitted method)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return isinstance(other, _ById) and other.obj is self.obj

    def __repr__(self):
        return f"<{type(self.obj).__name__} instance>"


def _check_int_range(leaves, name):
    """Raise a clear error if a Python int argument does not fit the int64 it is traced as
    (Numba's own message, "int too big to convert", names neither the argument nor a fix)."""
    for i, x in enumerate(leaves):
        if type(x) is int and not -2**63 <= x < 2**63:
            raise DTypeError(
                f"jit({name}): argument {i} is the Python int {_short(x)}, which does not fit "
                f"in int64 (jit traces Python ints as int64); pass it as a float, or make it "
                f"static (static_argnums) if it is configuration", source=user_source())


def _short(v):
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, int):
        return (x,)
    return tuple(x)


def _is_config_value(v):
    """A keyword value that jit keeps static on its own: a string, None, a bool, tuples of such."""
    if v is None or isinstance(v, (str, bytes, bool)):
        return True
    return isinstance(v, tuple) and all(_is_config_value(e) for e in v)


def _as_leaf(x):
    if type(x) is _ndarray or type(x) in PY_SCALARS or isinstance(x, (Tracer, np.generic)):
        return x
    if isinstance(x, np.ndarray):
        return np.asarray(x)
    conv = getattr(x, "__autodiff_array__", None)
    if conv is not None:
        return conv()
    if _is_foreign_cuda(x):          # CuPy, PyTorch, numba-cuda arrays on a host backend
        return _host_copy(x)
    try:
        arr = np.asarray(x)
    except Exception:  # noqa: BLE001
        arr = None
    if arr is None or arr.dtype.kind not in "biufc":
        raise DTypeError(f"jit: an argument leaf of type {type(x).__name__} is not an array "
                         f"or number; pass it via static_argnums/static_argnames if it is "
                         f"configuration", source=user_source())
    return arr


def _link_static(fun, nums, names):
    """Static positions <-> names through the signature, as JAX does."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return nums, names
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    nums, names = list(nums), list(names)
    for i in list(nums):
        if 0 <= i < len(params) and params[i].kind == params[i].POSITIONAL_OR_KEYWORD:
            if params[i].name not in names:
                names.append(params[i].name)
    for n in list(names):
        for i, p in enumerate(params):
            if p.name == n and i not in nums:
                nums.append(i)
    return tuple(nums), tuple(names)


def _validate_argnums_argnames(fun, nums, names, what):
    """JAX's checks of ``{what}_argnums`` / ``{what}_argnames`` against ``fun``'s signature
    (``ValueError``): an index past the positional parameters (unless ``*args``), a name
    that is positional-only or ``*args``, or one ``fun`` lacks (unless ``**kwargs``).
    Returns the positional parameters, or None when ``fun`` has no signature."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return None
    fname = getattr(fun, "__name__", "fun")
    ps = list(sig.parameters.values())
    pos = [p for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not any(p.kind == p.VAR_POSITIONAL for p in ps):
        for i in nums:
            if not -len(pos) <= i < len(pos):
                raise ValueError(f"jit: {what}_argnums={i} is out of range: {fname} takes "
                                 f"{len(pos)} positional arguments")
    kw = {p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    var_kw = any(p.kind == p.VAR_KEYWORD for p in ps)
    for n in names:
        if n in kw:
            continue
        if any(p.name == n for p in ps) or not var_kw:
            raise ValueError(f"jit: {what}_argnames={n!r} is not a parameter {fname} accepts "
                             f"by keyword (those are {sorted(kw)})")
    return pos


def _check_donate(fun, nums, names, static_nums, static_names):
    """Validate ``donate_argnums`` / ``donate_argnames`` as JAX does and return them as
    tuples. Donation lets XLA reuse an input's buffer for an output; numpy arrays on the
    CPU are owned by the caller, so no buffer is ever reused: the arguments stay valid
    and the results are the same with or without donation."""
    nums = tuple(nums) if isinstance(nums, (tuple, list)) else (() if nums is None else (nums,))
    names = (names,) if isinstance(names, str) else tuple(names or ())
    for i in nums:
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"jit: donate_argnums must be ints, got {i!r}")
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"jit: donate_argnames must be strings, got {n!r}")
    pos = _validate_argnums_argnames(fun, nums, names, "donate")
    if pos is not None:
        nums = tuple(sorted({int(i) % len(pos) if pos and i < 0 else int(i) for i in nums}))
    both = set(nums) & set(static_nums) or set(names) & set(static_names)
    if both:
        raise ValueError(f"jit: argument {sorted(both)[0]!r} is both static and donated; "
                         f"a static argument has no buffer to donate")
    return nums, names


_StaticNums = Union[int, Sequence[int]]
_StaticNames = Union[str, Sequence[str]]


@typing.overload
def jit(fun: Callable[P, R], *, static_argnums: _StaticNums = (),
        static_argnames: _StaticNames = (), backend: Optional[str] = None,
        dynamic_shapes: Optional[bool] = None, donate_argnums: _StaticNums = (),
        donate_argnames: _StaticNames = (), inline: bool = False,
        keep_unused: bool = False) -> JitFunction[P, R]: ...


@typing.overload
def jit(fun: None = None, *, static_argnums: _StaticNums = (),
        static_argnames: _StaticNames = (), backend: Optional[str] = None,
        dynamic_shapes: Optional[bool] = None, donate_argnums: _StaticNums = (),
        donate_argnames: _StaticNames = (), inline: bool = False,
        keep_unused: bool = False) -> Callable[[Callable[P, R]], JitFunction[P, R]]: ...


def jit(fun: Optional[Callable[P, R]] = None, *, static_argnums: _StaticNums = (),
        static_argnames: _StaticNames = (), backend: Optional[str] = None,
        dynamic_shapes: Optional[bool] = None, donate_argnums: _StaticNums = (),
        donate_argnames: _StaticNames = (), inline: bool = False,
        keep_unused: bool = False) -> Any:
    """Compile ``fun`` to Numba CPU code, traced and cached per input signature.

    Usable as ``@ad.jit``, ``@ad.jit(static_argnums=1)`` or ``ad.jit(f, ...)``.
    ``backend``: ``"cpu"`` (default, Numba), ``"interpret"`` (numpy reference
    evaluator), ``"cuda"`` (numba-cuda kernels on a GPU, or in its simulator with
    ``NUMBA_ENABLE_CUDASIM=1``; takes numpy or device arrays, returns device arrays:
    docs/cuda.md; ``UnsupportedError`` names what is missing where it cannot run), or
    any name registered with :func:`autodiff.jit_runtime.register_backend`.

    The first call for a signature never waits for Numba: it runs the traced program on
    the numpy interpreter while the kernel compiles in a background worker process, and later
    calls switch to the kernel once it is ready (``ad.config.update(
    "jit_background_compile", False)`` or ``f.lower(*args).compile()`` block instead).
    Kernels are specialized to the sizes of their first call (constant loop bounds,
    arrays of up to four elements kept in scalar variables); when a later call changes
    the size of a dimension, that dimension turns dynamic once and one shape-generic
    kernel serves all its later sizes (while the LLVM tier compiles the function's
    kernels, in milliseconds, the first ``SPECIALIZED_SIZES`` sizes get kernels of their
    own first). ``dynamic_shapes=True`` is generic from the
    start, ``False`` always specializes (each new size compiles), ``None`` (default)
    follows ``ad.config.jit_dynamic_shapes``, which defaults to that automatic rule.
    ``donate_argnums`` / ``donate_argnames`` are accepted and validated as in JAX (an
    index or name that is not a parameter, or one that is also static, raises) and change
    nothing on the CPU: no input buffer is reused, the donated arrays stay valid.
    A keyword argument whose value is a string, None, a bool or a tuple of such is
    static without being named in ``static_argnames`` (``f(x, mode="sum")``).
    JAX's ``inline`` and ``keep_unused`` are accepted and ignored: a ``jit`` inside a
    traced function is inlined into its caller's program anyway, and unused arguments
    change nothing but XLA's calling convention.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> def power_sum(x, n):
    ...     return anp.sum(x ** n)
    >>> f = ad.jit(power_sum, static_argnums=1)
    >>> float(f(np.arange(3.0), 2))
    5.0
    >>> g = ad.jit(ad.grad(lambda x: anp.sum(anp.sin(x))))
    >>> np.allclose(g(np.zeros(2)), [1.0, 1.0])
    True
    """
    opts = (static_argnums, static_argnames, backend, dynamic_shapes, donate_argnums,
            donate_argnames)
    if fun is None:
        return lambda f: _shared_jit(f, opts)
    return _shared_jit(fun, opts)


# jit(f) of the same function object with the same options is one JitFunction, as JAX keeps
# one cache per function: ``ad.jit(f)(x)`` written inline (in a loop, in a function called
# every step) traces and compiles once, not on every call (measured: 32 ms a call before,
# the 2 µs of a warm call after). Bounded: least recently made wrappers go first, and an
# entry holds its function, so the id it is keyed by is never reused while it is here.
_SHARED = collections.OrderedDict()
_SHARED_SIZE = 256
_SHARED_LOCK = threading.Lock()


def _shared_jit(fun, opts):
    key = (id(fun), tuple(tuple(o) if isinstance(o, list) else o for o in opts))
    try:
        hash(key)
    except TypeError:                       # an option that cannot key a cache
        return JitFunction(fun, *opts)
    with _SHARED_LOCK:
        hit = _SHARED.get(key)
        if hit is not None and hit._fun is fun:
            _SHARED.move_to_end(key)
            return hit
    made = JitFunction(fun, *opts)
    with _SHARED_LOCK:
        _SHARED[key] = made
        while len(_SHARED) > _SHARED_SIZE:
            _SHARED.popitem(last=False)
    return made
