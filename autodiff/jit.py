"""jit: trace once per input signature, lower to Numba CPU code, cache the result.

Two caches sit at the stage boundaries (docs/design.md, "jit and the graph cache"):

* the **graph cache** of each jitted function (an LRU of ``ad.config.cache_size``
  entries) maps an input signature -- pytree structure, shapes, dtypes, the values of
  static arguments -- to a ready-to-call entry (the traced jaxpr and the compiled
  kernel with its size vector);
* the **kernel cache** (:mod:`autodiff.backends.compile_cache`) maps generated source
  to compiled machine code, in memory and on disk; each loop nest is a module of its
  own keyed by its text, so kernels share the pieces they have in common.

A signature's first kernel is specialized to its sizes; a dimension whose size changes
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
in a background thread (``cache_info().pending``); ``ad.wait_for_compiles()`` waits for it.
"""
import atexit
import collections
import contextlib
import functools
import hashlib
import inspect
import logging
import threading
import typing
import weakref
from typing import Any, Callable, Generic, Optional, ParamSpec, Sequence, TypeVar, Union

import numpy as np

from .cache import ProgramCache, declare
from .config import config
from .core import ShapedArray, Tracer, eval_jaxpr, trace_flat, user_source
from .errors import DTypeError, UnsupportedDTypeError, UnsupportedError
from .tree_util import LEAF, tree_flatten, tree_unflatten
from .traceback_util import filter_traceback as _filter_traceback

__all__ = ["jit", "JitFunction", "Lowered", "CacheInfo", "wait_for_compiles", "disable_jit"]

CacheInfo = collections.namedtuple("CacheInfo", "hits misses size capacity compiled pending")
CacheInfo.__doc__ = """Counters of one jitted function's graph cache (like functools.lru_cache's).

``hits``, ``misses``; ``size`` entries of ``capacity``; of those, ``compiled`` call a
Numba kernel and ``pending`` run on the interpreter while their kernel compiles in the
background (the rest run on the interpreter by choice: ``backend="interpret"``,
``debug_nans``)."""
_log = logging.getLogger("autodiff.jit")
_instances = weakref.WeakSet()
_ndarray = np.ndarray
_PY_SCALARS = {float: np.dtype(np.float64), int: np.dtype(np.int64), bool: np.dtype(np.bool_)}
# the fast path's lookup table: a Python scalar's signature is its type (weak dtype); a numpy
# scalar's is that of a 0-d array of its dtype
_SCALAR_KEYS = {t: (t if t in _PY_SCALARS else ((), np.dtype(t)))
                for t in list(_PY_SCALARS) + [np.float64, np.float32, np.int64, np.int32, np.bool_]}
_BACKENDS = ("cpu", "interpret", "cuda")
declare("jit", "cache_size")     # listed by ad.config.caches() before the first jit(f)


@config.on_update
def _on_config(name, value):
    # entries are built for one mode (compiled or NaN-checking interpreter) and capacity
    if name in ("debug_nans", "default_backend", "jit_parallel_threshold"):
        for f in list(_instances):
            with f._lock:
                f._cache.clear(reset_stats=False)


# ----------------------------------------------------------------------------------
# signatures
# ----------------------------------------------------------------------------------

def _leaf_key(x):
    """Hashable description of one argument leaf; None for tracers."""
    t = type(x)
    if t is _ndarray:
        return (x.shape, x.dtype)
    if t in _PY_SCALARS:
        return t
    if isinstance(x, np.generic):
        # a numpy scalar and a 0-d array of its dtype are the same signature (optimizer
        # state goes in as one and comes back as the other)
        return ((), x.dtype)
    if isinstance(x, Tracer):
        return None
    if isinstance(x, np.ndarray) or getattr(x, "_autodiff_device", None):
        return (x.shape, x.dtype)              # numpy arrays and CUDA device arrays alike
    return "other"


def _structure(key):
    """The signature with every array size replaced by its rank: what may change size
    without making a different program (``None`` if the key has no array leaf)."""
    treedef, statics, leaves = _split_key(key)
    shapes = tuple(k[0] if _is_array_key(k) else None for k in leaves)
    if all(sh is None for sh in shapes):
        return None, shapes
    ranks = tuple((len(k[0]), k[1]) if _is_array_key(k) else k for k in leaves)
    return (treedef, statics, ranks), shapes


def _is_array_key(k):
    return isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], tuple)


def _leaf_aval(x, key):
    if isinstance(key, tuple):
        dt = key[1] if key[1].isnative else key[1].newbyteorder("=")
        if dt.kind == "c":
            # API convention 10: complex input is refused in every mode, jit included (the
            # interpreter fallback for dtypes the kernel cannot take must not run it)
            raise UnsupportedError(
                f"jit: complex numbers are not supported yet (an argument of dtype {dt}); "
                f"split them into real and imaginary float arrays", source=user_source())
        return ShapedArray(key[0], dt)
    if key in _PY_SCALARS:
        return ShapedArray((), _PY_SCALARS[key], weak_type=True)
    return ShapedArray((), x.dtype)


def _describe_leaf(k):
    if isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], tuple):
        return ShapedArray(k[0], k[1] if k[1].isnative else k[1].newbyteorder("=")).str_short()
    if isinstance(k, tuple) and k and k[0] == "tracer":
        return f"traced {k[1].str_short()}"
    if isinstance(k, type):
        return f"a Python {k.__name__}" if k in _PY_SCALARS else f"a {k.__name__} scalar"
    return repr(k)


def _split_key(key):
    """(treedef or None, statics, leaf keys) of either key format."""
    if key and key[0] == "tree":
        return key[1], key[2], key[3]
    return None, (), key


def _explain(fname, old, new):
    """Why ``new`` missed: the differences from the most recently used signature."""
    if old is None:
        return f"jit({fname}): first call, tracing for {_sig_text(new)}"
    ot, os_, ol = _split_key(old)
    nt, ns, nl = _split_key(new)
    why = []
    if ot != nt or len(ol) != len(nl):
        why.append(f"the argument structure changed from {ot or len(ol)} to {nt or len(nl)}")
    if os_ != ns:
        for i, (a, b) in enumerate(zip(os_, ns)):
            if a != b:
                why.append(f"static argument {a[0]!r} changed from {a[1]!r} to {b[1]!r}")
    if len(ol) == len(nl):
        for i, (a, b) in enumerate(zip(ol, nl)):
            if a != b:
                why.append(f"argument leaf {i} changed from {_describe_leaf(a)} to "
                           f"{_describe_leaf(b)}")
    if not why:
        why.append("the signature was evicted from the cache (capacity "
                   f"{config.cache_size})")
    return f"jit({fname}): retracing because " + "; ".join(why)


def _sig_text(key):
    t, s, leaves = _split_key(key)
    parts = [_describe_leaf(k) for k in leaves]
    if s:
        parts += [f"{n}={v!r}" for n, v in s]
    return "(" + ", ".join(parts) + ")"


# ----------------------------------------------------------------------------------
# entries: what a cache hit calls
# ----------------------------------------------------------------------------------

class _Entry:
    """What a cache slot holds (its ``call`` is what a hit runs). ``state``: "compiled",
    "pending" (interpreted until the background compile lands) or "interpreted" (by
    choice, or because the backend has no kernel for a dtype: ``reason`` says which)."""

    __slots__ = ("call", "closed", "out_tree", "program", "kernel", "backend", "state",
                 "leaf_keys", "submit", "reason")

    def __init__(self, call, closed, out_tree, program=None, kernel=None, backend="cpu",
                 state="compiled", leaf_keys=None):
        self.call = call
        self.closed = closed
        self.out_tree = out_tree
        self.program = program
        self.kernel = kernel
        self.backend = backend
        self.state = state
        self.leaf_keys = leaf_keys
        self.submit = None               # starts the background compile (pending entries)
        self.reason = None               # why an "interpreted" entry is not compiled


def _finisher(out_tree, out_avals):
    """Python source for turning kernel results ``r`` into the user's output pytree."""
    n = len(out_avals)
    items = []
    for i, a in enumerate(out_avals):
        ri = "r" if n == 1 else f"r[{i}]"
        items.append(f"_T{i}({ri})" if not a.shape else ri)
    if out_tree.node_type is None:
        return items[0]
    if out_tree.node_type is tuple and all(c.node_type is None for c in out_tree.children):
        return "(" + ", ".join(items) + ("," if n == 1 else "") + ")"
    return "_unflatten(_tree, [" + ", ".join(items) + "])"


def _lower_program(closed, dynamic):
    # the IR pass pipeline (simplify, inline calls, ...) runs here; the backend lowers the
    # finished program and never traces (autodiff.transforms.passes)
    from .backends import numba_cpu
    return numba_cpu.lower(_run_pipeline(closed), dynamic_dims=dynamic)


def _run_pipeline(closed):
    """The IR passes every backend's lower() expects to have run (transforms/passes.py)."""
    from .transforms.passes import run_pipeline
    return run_pipeline(closed)


def _compiled_entry(closed, out_tree, leaf_keys, dynamic=True, prog=None, kernel=None):
    from .backends import compile_cache
    if prog is None:
        prog = _lower_program(closed, dynamic)
    if kernel is None:
        kernel = compile_cache.get_kernel(prog.source, prog.entry, prog.params, prog.pieces)
    ns = {"_ep": kernel.entry_point, "_asc": np.ascontiguousarray, "_unflatten": tree_unflatten,
          "_tree": out_tree, "_sz": prog.sizes}
    args = []
    for i, c in enumerate(prog.consts):
        c = np.asarray(c)
        ns[f"_c{i}"] = np.ascontiguousarray(c) if c.ndim else c[()]
        args.append(f"_c{i}")
    names = []
    for i, (k, a) in enumerate(zip(leaf_keys, closed.in_avals)):
        n = f"a{i}"
        names.append(n)
        if isinstance(k, tuple):
            native = k[1].isnative
            if not native:
                ns[f"_d{i}"] = a.dtype
            if a.shape:
                args.append(f"_asc({n})" if native else f"_asc({n}, _d{i})")
            else:
                args.append(f"{n}[()]" if native else f"_d{i}.type({n})")
        else:
            args.append(n)
    if prog.params and prog.params[-1][0] == "sizes":
        args.append("_sz")
    for i, a in enumerate(prog.out_avals):
        ns[f"_T{i}"] = a.dtype.type
    src = (f"def call({', '.join(names)}):\n"
           f"    r = _ep({', '.join(args)})\n"
           f"    return {_finisher(out_tree, prog.out_avals)}\n")
    exec(compile(src, "<autodiff jit entry>", "exec"), ns)
    return _Entry(ns["call"], closed, out_tree, prog, kernel, "cpu", leaf_keys=leaf_keys)


def _cuda_entry(closed, out_tree, leaf_keys, dynamic=True, prog=None):
    """An entry running the program's CUDA kernels (backends/numba_cuda.py). numba-cuda
    compiles each kernel at its first launch (or loads it from its disk cache), so there
    is no background compile: the first call of a signature waits for it."""
    from .backends import numba_cuda
    numba_cuda.require_available(source=user_source())
    if prog is None:
        prog = numba_cuda.lower(_run_pipeline(closed), dynamic_dims=dynamic)
    flat = numba_cuda.entry(prog)
    if out_tree.node_type is None:
        def call(*leaves):
            return flat(*leaves)[0]
    else:
        def call(*leaves):
            return tree_unflatten(out_tree, flat(*leaves))
    return _Entry(call, closed, out_tree, prog, None, "cuda", leaf_keys=leaf_keys)


def _interpreted_entry(closed, out_tree, state="interpreted"):
    from .backends.interpreter import run_closed

    const_ids = {id(c) for c in closed.consts}

    def fresh(o, ins):
        # like a compiled kernel, never hand back (a view of) an input or a constant
        if o.base is not None or id(o) in ins or id(o) in const_ids:
            return o.copy()
        return o

    def call(*leaves):
        args = [np.asarray(x) for x in leaves]
        outs = run_closed(closed, args)
        ins = {id(a) for a in args}
        outs = [o[()] if isinstance(o, np.ndarray) and o.ndim == 0 else
                (fresh(o, ins) if isinstance(o, np.ndarray) else np.asarray(o)[()]
                 if np.ndim(o) == 0 else np.asarray(o)) for o in outs]
        return tree_unflatten(out_tree, outs)
    return _Entry(call, closed, out_tree, backend="interpret", state=state)


# ----------------------------------------------------------------------------------
# background compilation
# ----------------------------------------------------------------------------------

class _Compiler:
    """One daemon thread that compiles kernels in the order they were asked for.

    A job is one kernel source; functions (and signatures) waiting for the same source
    share it. Numba serializes compiles under its own lock anyway, so one thread is all
    the parallelism there is; its type inference and lowering are Python and share the
    GIL with the caller, its LLVM passes (ctypes calls) release it. A process that exits
    abandons the queue: the thread is a daemon, and the disk cache is written atomically
    (source by ``os.link``/``os.replace``, Numba's index and data by ``os.replace``), so
    an interrupted compile leaves nothing half-written to be loaded later.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.jobs = {}                   # kernel key -> [prog, [callback, ...]]
        self.order = collections.deque()
        self.wake = threading.Condition(self.lock)
        self.idle = threading.Condition(self.lock)
        self.thread = None
        self.closing = False

    def submit(self, key, prog, callback):
        with self.lock:
            job = self.jobs.get(key)
            if job is not None:
                job[1].append(callback)
                return
            self.jobs[key] = [prog, [callback]]
            self.order.append(key)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="autodiff-jit-compiler",
                                               daemon=True)
                self.thread.start()
            self.wake.notify()

    def _run(self):
        from .backends import compile_cache
        while True:
            with self.lock:
                while not self.order and not self.closing:
                    self.idle.notify_all()
                    self.wake.wait()
                if self.closing:
                    return
                key = self.order.popleft()
                prog, _ = self.jobs[key]
            kernel, err = None, None
            try:
                kernel = compile_cache.get_kernel(prog.source, prog.entry, prog.params, prog.pieces)
            except Exception as e:  # noqa: BLE001 - reported through the waiting entries
                err = e
            with self.lock:
                _, callbacks = self.jobs.pop(key)
            for cb in callbacks:
                try:
                    cb(kernel, err)
                except Exception as e:  # noqa: BLE001 - never kill the compiler thread
                    _log.warning(f"jit: installing a compiled kernel failed: {e!r}")

    def pending(self):
        with self.lock:
            return len(self.jobs)

    def wait(self, timeout=None):
        """Block until no compile is queued or running; False on timeout."""
        import time
        end = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            while self.jobs:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.idle.wait(left if left is not None else 0.05)
            return True

    def close(self, wait=0.0):
        """Drop the queued compiles; with ``wait``, give the one in flight that many
        seconds to finish (it cannot be interrupted)."""
        with self.lock:
            self.closing = True
            self.order.clear()
            self.wake.notify_all()
            thread = self.thread
        if wait and thread is not None and thread.is_alive() and \
                thread is not threading.current_thread():
            thread.join(wait)


_compiler = _Compiler()


def _fresh_after_fork():
    # a forked child has one thread: a lock another parent thread held at fork() time stays
    # locked there forever, and the compiler thread does not exist. Fresh ones (the parent's
    # pending compiles stay on the interpreter in the child). Parallel kernels are turned off
    # in such a child by backends/numba_runtime.py's at-fork hook.
    global _compiler
    _compiler = _Compiler()
    for f in list(_instances):
        f._lock = f._cache.lock          # renewed by autodiff.cache's at-fork hook (first)


if hasattr(__import__("os"), "register_at_fork"):
    __import__("os").register_at_fork(after_in_child=_fresh_after_fork)


# Seconds an exiting process gives the compile in flight (queued ones are dropped).
# Killing it is not safe: the compiler thread runs LLVM without the GIL, and the
# interpreter's shutdown disposes LLVM objects that compile still uses (seen: an
# ``llvm::cast`` assertion aborting the process at exit). One kernel compiles in well
# under this; only a compile still running after it is abandoned.
EXIT_WAIT_S = 10.0


def _abandon_pending_compiles():
    _compiler.close(wait=EXIT_WAIT_S)


# threading's exit hooks run when the main thread ends, before the atexit handlers and the
# finalizers of Numba and llvmlite (registered whenever they were imported, so possibly
# after us); concurrent.futures joins its workers the same way. atexit where it is absent.
_register_exit = getattr(threading, "_register_atexit", None)
if _register_exit is not None:
    _register_exit(_abandon_pending_compiles)
else:                                                    # pragma: no cover
    atexit.register(_abandon_pending_compiles)


_disabled = 0           # > 0 inside ``disable_jit()``


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
    return _compiler.wait(timeout)


class Lowered:
    """What ``jitted.lower(*args)`` returns: the IR and the generated code.

    ``jaxpr`` is the ClosedJaxpr that is compiled (calls inlined, dead code removed),
    ``source`` the generated Python/Numba module (``None`` for the interpreter), which
    imports its loop nests from the modules in ``pieces`` (``as_text()`` shows all),
    ``sizes`` the run-time size vector for these arguments.
    """

    def __init__(self, jaxpr, source, sizes, program, install=None):
        self.jaxpr = jaxpr
        self.source = source
        self.sizes = sizes
        self.program = program
        self._install = install

    def compile(self) -> "JitFunction[..., Any]":
        """Compile now (blocking) and return a callable taking the same arguments.

        The jitted function this came from uses the kernel from then on for these
        argument shapes.

        >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
        >>> f = ad.jit(lambda x: anp.sum(x * x))
        >>> c = f.lower(np.ones(3)).compile()
        >>> float(c(np.ones(3))), f.cache_info().compiled
        (3.0, 1)
        """
        fn, key, closed, out_tree, keys = self._install
        if self.program is None:           # the interpreter backend: nothing to compile
            return fn
        if type(self.program).__name__ == "CudaProgram":
            entry = _cuda_entry(closed, out_tree, keys, prog=self.program)
        else:
            entry = _compiled_entry(closed, out_tree, keys, prog=self.program)
        entry.call.entry = entry
        with fn._lock:
            fn._insert(key, entry.call)
        return fn

    @property
    def pieces(self):
        """``(module name, source)`` of the shared loop-nest modules the kernel imports."""
        return list(self.program.pieces) if self.program is not None else []

    def as_text(self) -> str:
        """The generated kernel module followed by the loop-nest modules it imports (or
        the jaxpr, for the interpreter)."""
        if self.source is None:
            return str(self.jaxpr)
        return "\n".join([self.source] + [f"# ---- module {name}\n{src}"
                                          for name, src in self.pieces])

    def __str__(self):
        return self.as_text()


# ----------------------------------------------------------------------------------
# the jitted function
# ----------------------------------------------------------------------------------

P = ParamSpec("P")
R = TypeVar("R")


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
        if backend is not None and backend not in _BACKENDS:
            raise ValueError(f"jit: unknown backend {backend!r}; choose one of {_BACKENDS}")
        if backend == "cuda":            # says what is missing: numba-cuda, a GPU
            from .backends.numba_cuda import require_available
            require_available(source=user_source())
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._backend = backend
        nums = _as_tuple(static_argnums)
        names = tuple(static_argnames) if isinstance(static_argnames, (tuple, list)) else \
            ((static_argnames,) if static_argnames else ())
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
        # signature structure (sizes -> ranks) -> [first shapes, {(leaf, axis) turned dynamic}]
        self._shapes = {}
        _instances.add(self)

    def __repr__(self):
        return f"<jitted {self._name}>"

    def __reduce__(self):
        # the recipe, not the caches: the receiving process traces again on its first call
        # and compiles or loads the kernel from the disk cache (autodiff.pickling)
        from .pickling import reduce_transformed
        return reduce_transformed(self, jit, self._fun, (), dict(
            static_argnums=self._static_argnums, static_argnames=tuple(self._static_argnames),
            backend=self._backend, dynamic_shapes=self._dynamic_shapes,
            donate_argnums=self._donate_argnums, donate_argnames=self._donate_argnames))

    def __get__(self, obj, objtype=None):
        # a jitted method: the instance is a static argument (by identity) unless it is
        # a registered pytree, as ``partial(jit, static_argnums=0)`` would make it in JAX
        if obj is None:
            return self
        from .tree_util import tree_structure
        if tree_structure(obj).node_type is not None:
            return functools.partial(self, obj)
        return functools.partial(self._call_slow_method, _ById(obj))

    def _call_slow_method(self, obj, *args, **kwargs):
        try:
            return self._call_slow((obj,) + args, kwargs, self_static=True)
        except Exception as e:
            _filter_traceback(e)
            raise

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
        ok = _compiler.wait(timeout)
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
        key, leaves, in_tree, statics, kw = self._signature(args, kwargs)
        if key is None:
            raise TypeError(f"jit({self._name}).lower: the arguments are traced values; "
                            f"call lower() with concrete arrays")
        keys = [_leaf_key(x) for x in leaves]
        closed, out_tree = self._trace(leaves, keys, in_tree, statics, kw, args)
        if self._backend_now() == "interpret":
            return Lowered(closed, None, None, None, install=(self, key, closed, out_tree, keys))
        dynamic = self._dynamic_for(key, record=False)
        if self._backend_now() == "cuda":
            from .backends import numba_cuda
            prog = numba_cuda.lower(_run_pipeline(closed), dynamic_dims=dynamic)
        else:
            prog = _lower_program(closed, dynamic)
        return Lowered(prog.jaxpr, prog.source, prog.sizes, prog,
                       install=(self, key, closed, out_tree, keys))

    def _dynamic_for(self, key, record=True):
        """Which input dimensions the kernel for ``key`` reads at run time (see lower())."""
        mode = self._dynamic_shapes
        if mode is None:
            mode = config.jit_dynamic_shapes
        if mode is True:
            return True
        if mode is False:
            return frozenset()
        struct, shapes = _structure(key)
        if struct is None:
            return frozenset()
        seen = self._shapes.get(struct)
        if seen is None:
            if record:
                self._shapes[struct] = [shapes, set()]
            return frozenset()
        first, dyn = seen
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

    # -------------------------------------------------------------- calling
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        # the public boundary: an error leaves with autodiff's frames dropped from its
        # traceback (autodiff.traceback_util); try costs nothing on the fast path
        try:
            if _disabled:
                return self._fun(*args, **kwargs)
            # the fast path: flat arguments that are arrays or scalars, no static arguments
            if self._fast and not kwargs:
                try:
                    key = tuple([(a.shape, a.dtype) if type(a) is _ndarray
                                 else _SCALAR_KEYS[type(a)] for a in args])
                except KeyError:
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
            _filter_traceback(e)
            raise

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
        if key is None:          # traced arguments: inline into the enclosing trace
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
        if kwargs and self._static_argnames:
            static_kw = {k: v for k, v in kwargs.items() if k in self._static_argnames}
            dyn_kw = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
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
        keep = self._backend_now() == "cuda"        # device arrays stay on the device
        leaves = [x if keep and getattr(x, "_autodiff_device", None) else _as_leaf(x)
                  for x in leaves]
        _check_int_range(leaves, self._name)
        keys = [_leaf_key(x) for x in leaves]
        if any(k is None for k in keys):
            return None, leaves, in_tree, statics, static_kw
        simple = (not statics and not dyn_kw and in_tree.node_type is tuple
                  and all(c is LEAF or c.node_type is None for c in in_tree.children)
                  and all(type(x) is _ndarray or type(x) in _SCALAR_KEYS for x in leaves))
        if simple:
            return tuple(keys), leaves, in_tree, statics, static_kw
        return ("tree", in_tree, statics, tuple(keys)), leaves, in_tree, statics, static_kw

    def _backend_now(self):
        b = self._backend or config.default_backend
        if config.debug_nans:
            return "interpret"       # the interpreter checks every equation for NaNs
        return b

    def _trace(self, leaves, keys, in_tree, statics, static_kw, args):
        from .numpy.random import warn_numpy_random_calls
        warn_numpy_random_calls(self._fun)      # a numpy.random draw would be frozen in
        avals = []
        for x, k in zip(leaves, keys):
            if k is None:
                avals.append(x.aval)
            else:
                avals.append(_leaf_aval(x, k))
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
            from .api import as_array
            return [as_array(o) for o in outs]

        closed = trace_flat(flat_fun, avals, None, name=f"jit({self._name})")
        return closed, box[0]

    def _call_inline(self, leaves, in_tree, statics, static_kw, args):
        keys = [_leaf_key(x) for x in leaves]
        ikey = ("inline", in_tree, statics,
                tuple(("tracer", x.aval) if k is None else k for x, k in zip(leaves, keys)))
        e = self._table.get(ikey)
        if e is None:
            self._cache.misses += 1
            closed, out_tree = self._trace(leaves, keys, in_tree, statics, static_kw, args)
            e = _Entry(None, closed, out_tree, backend="inline")
            if not any(isinstance(c, Tracer) for c in closed.consts):
                self._insert(ikey, e)
        else:
            self._cache.hits += 1
            with self._lock:
                self._touch(ikey)
        outs = eval_jaxpr(e.closed.jaxpr, e.closed.consts, *leaves)
        from .api import to_output
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
                _log.warning(_explain(self._name, last, key))
            keys = [_leaf_key(x) for x in leaves]
            closed, out_tree = self._trace(leaves, keys, in_tree, statics, static_kw, args)
            if any(isinstance(c, Tracer) for c in closed.consts):
                # closes over a value traced by an enclosing transform: inline, do not cache
                outs = eval_jaxpr(closed.jaxpr, closed.consts, *leaves)
                from .api import to_output
                return tree_unflatten(out_tree, [to_output(o) for o in outs])
            backend = self._backend_now()
            entry = None
            if backend == "cuda":
                try:
                    entry = _cuda_entry(closed, out_tree, keys, self._dynamic_for(key))
                except UnsupportedDTypeError as err:     # as on the CPU: the interpreter
                    entry = self._dtype_fallback(closed, out_tree, err)
            elif backend == "cpu":
                from .backends import compile_cache
                before = compile_cache.stats()
                try:
                    prog = _lower_program(closed, self._dynamic_for(key))
                    kernel = compile_cache.memory_lookup(prog.source)
                    if kernel is None and config.jit_background_compile:
                        entry = self._pending_entry(key, closed, out_tree, keys, prog)
                    else:
                        entry = _compiled_entry(closed, out_tree, keys, prog=prog,
                                                kernel=kernel)
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
                    else:
                        how = "compiled"
                    _log.warning(f"jit({self._name}): kernel {entry.kernel.key[:12]} {how}")
            if entry is None:
                entry = _interpreted_entry(closed, out_tree)
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
        entry = _interpreted_entry(closed, out_tree)
        entry.reason = str(err)
        if not self._dtype_fallback_logged:
            self._dtype_fallback_logged = True
            _log.warning(f"jit({self._name}): {err}; this signature runs on the numpy "
                         f"interpreter (cast the inputs to a supported dtype for a compiled "
                         f"kernel)")
        return entry

    def _pending_entry(self, key, closed, out_tree, keys, prog):
        """An interpreted entry now; the compiled one replaces it when the kernel is ready."""
        entry = _interpreted_entry(closed, out_tree, state="pending")
        entry.program = prog
        placeholder = entry.call

        def install(kernel, err):
            with self._lock:
                if self._table.get(key) is not placeholder:
                    return                      # evicted or cleared meanwhile
                if err is not None:
                    entry.state = "interpreted"
                    _log.warning(f"jit({self._name}): compiling the kernel failed "
                                 f"({type(err).__name__}: {err}); this signature keeps running "
                                 f"on the interpreter")
                    return
                done = _compiled_entry(closed, out_tree, keys, prog=prog, kernel=kernel)
                done.call.entry = done
                self._cache.put(key, done.call)  # replaces in place: the next call is compiled

        # jobs are keyed by source alone: the version part of the kernel key is the same for
        # every job of a process, and computing it imports Numba (the worker does that)
        job = hashlib.sha256(prog.source.encode()).hexdigest()
        entry.submit = lambda: _compiler.submit(job, prog, install)
        return entry

    def _insert(self, key, entry):
        self._cache.put(key, entry)


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


def _as_leaf(x):
    if type(x) is _ndarray or type(x) in _PY_SCALARS or isinstance(x, (Tracer, np.generic)):
        return x
    if isinstance(x, np.ndarray):
        return np.asarray(x)
    conv = getattr(x, "__autodiff_array__", None)
    if conv is not None:
        return conv()
    if isinstance(x, complex):
        raise UnsupportedError("complex numbers are not supported yet", source=user_source())
    try:
        arr = np.asarray(x)
    except Exception:  # noqa: BLE001
        arr = None
    if arr is None or arr.dtype.kind not in "biuf":
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
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        ps = list(sig.parameters.values())
        pos = [p for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = any(p.kind == p.VAR_POSITIONAL for p in ps)
        for i in nums:
            if not star and not -len(pos) <= i < len(pos):
                raise ValueError(f"jit: donate_argnums={i} is out of range: "
                                 f"{getattr(fun, '__name__', 'fun')} takes {len(pos)} "
                                 f"positional arguments")
        kw = {p.name for p in ps if p.kind != p.POSITIONAL_ONLY}
        if not any(p.kind == p.VAR_KEYWORD for p in ps):
            for n in names:
                if n not in kw:
                    raise ValueError(f"jit: donate_argnames={n!r} is not a parameter of "
                                     f"{getattr(fun, '__name__', 'fun')} (it has "
                                     f"{sorted(kw)})")
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
        donate_argnames: _StaticNames = ()) -> JitFunction[P, R]: ...


@typing.overload
def jit(fun: None = None, *, static_argnums: _StaticNums = (),
        static_argnames: _StaticNames = (), backend: Optional[str] = None,
        dynamic_shapes: Optional[bool] = None, donate_argnums: _StaticNums = (),
        donate_argnames: _StaticNames = ()) -> Callable[[Callable[P, R]], JitFunction[P, R]]: ...


def jit(fun: Optional[Callable[P, R]] = None, *, static_argnums: _StaticNums = (),
        static_argnames: _StaticNames = (), backend: Optional[str] = None,
        dynamic_shapes: Optional[bool] = None, donate_argnums: _StaticNums = (),
        donate_argnames: _StaticNames = ()) -> Any:
    """Compile ``fun`` to Numba CPU code, traced and cached per input signature.

    Usable as ``@ad.jit``, ``@ad.jit(static_argnums=1)`` or ``ad.jit(f, ...)``.
    ``backend``: ``"cpu"`` (default, Numba), ``"interpret"`` (numpy reference
    evaluator), ``"cuda"`` (numba-cuda kernels on a GPU, or in its simulator with
    ``NUMBA_ENABLE_CUDASIM=1``; takes numpy or device arrays, returns device arrays:
    docs/cuda.md; ``UnsupportedError`` names what is missing where it cannot run).

    The first call for a signature never waits for Numba: it runs the traced program on
    the numpy interpreter while the kernel compiles in a background thread, and later
    calls switch to the kernel once it is ready (``ad.config.update(
    "jit_background_compile", False)`` or ``f.lower(*args).compile()`` block instead).
    Kernels are specialized to the sizes of their first call (constant loop bounds,
    arrays of up to four elements kept in scalar variables); when a later call changes
    the size of a dimension, that dimension turns dynamic once and one shape-generic
    kernel serves all its later sizes. ``dynamic_shapes=True`` is generic from the
    start, ``False`` always specializes (each new size compiles), ``None`` (default)
    follows ``ad.config.jit_dynamic_shapes``, which defaults to that automatic rule.
    ``donate_argnums`` / ``donate_argnames`` are accepted and validated as in JAX (an
    index or name that is not a parameter, or one that is also static, raises) and change
    nothing on the CPU: no input buffer is reused, the donated arrays stay valid.

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
    if fun is None:
        return lambda f: JitFunction(f, static_argnums, static_argnames, backend, dynamic_shapes,
                                     donate_argnums, donate_argnames)
    return JitFunction(fun, static_argnums, static_argnames, backend, dynamic_shapes,
                       donate_argnums, donate_argnames)
