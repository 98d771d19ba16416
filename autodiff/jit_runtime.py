"""What jit runs below the jitted function (:mod:`autodiff.jit`): input signatures, cache
entries (compiled, CUDA or interpreted), the background compiler and :class:`Lowered`.

Its interface to :mod:`autodiff.jit` (``__all__``):

* signatures: :func:`leaf_key` (one argument leaf's part of a cache key), :func:`leaf_aval`,
  :func:`signature_structure` (a key with sizes replaced by ranks), :func:`explain_miss`,
  and the tables ``PY_SCALARS`` / ``SCALAR_KEYS`` (the fast path's);
* backends: :class:`Backend`, one record per way of running a program, registered by name
  (:func:`register_backend`, :func:`get_backend`, ``BACKENDS``): jit asks the record, never
  the name, what to do;
* entries: :class:`Entry` and the functions building one, :func:`compiled_entry`,
  :func:`cuda_entry`, :func:`interpreted_entry`; :func:`run_pipeline` and
  :func:`lower_program` (the IR passes, then the Numba CPU lowering);
* the background compiler: :func:`submit_compile`, :func:`wait_for_compiler`,
  :class:`Compiler`, :func:`abandon_pending_compiles` (the exit hook) and ``EXIT_WAIT_S``;
* :class:`Lowered`, what ``jitted.lower(*args)`` returns.

>>> import numpy as np, autodiff as ad
>>> low = ad.jit(lambda x: x * 2.0, backend="interpret").lower(np.float64(3.0))
>>> float(low.compile()(np.float64(3.0)))
6.0
"""
import atexit
import collections
import io
import logging
import os
import pickle
import subprocess
import sys
import threading
import time
import types
from typing import TYPE_CHECKING, Any

import numpy as np

from .backends.interpreter import run_closed
from .config import config
from .core import ShapedArray, Tracer, user_source
from .tree_util import tree_unflatten

if TYPE_CHECKING:
    from .jit import JitFunction

__all__ = ["leaf_key", "leaf_aval", "signature_structure", "explain_miss", "PY_SCALARS",
           "SCALAR_KEYS", "BACKENDS", "Backend", "register_backend", "get_backend", "Entry", "compiled_entry", "cuda_entry",
           "interpreted_entry", "run_pipeline", "lower_program", "submit_compile",
           "wait_for_compiler", "Compiler", "LoweringJob", "remote_lowering",
           "abandon_pending_compiles", "EXIT_WAIT_S", "Lowered"]

_log = logging.getLogger("autodiff.jit")
PY_SCALARS = {float: np.dtype(np.float64), int: np.dtype(np.int64), bool: np.dtype(np.bool_),
              complex: np.dtype(np.complex128)}
# the fast path's lookup table: a Python scalar's signature is its type (weak dtype); a numpy
# scalar's is that of a 0-d array of its dtype
SCALAR_KEYS = {t: (t if t in PY_SCALARS else ((), np.dtype(t)))
               for t in list(PY_SCALARS) + [np.float64, np.float32, np.int64, np.int32, np.bool_,
                                            np.complex128, np.complex64]}

# ----------------------------------------------------------------------------------
# signatures
# ----------------------------------------------------------------------------------

def leaf_key(x):
    """Hashable description of one argument leaf; None for tracers."""
    t = type(x)
    if t is np.ndarray:
        return (x.shape, x.dtype)
    if t in PY_SCALARS:
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


def signature_structure(key):
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


def leaf_aval(x, key):
    """The abstract value a leaf with signature part ``key`` is traced as (weak for Python
    scalars, the native byte order for arrays)."""
    if isinstance(key, tuple):
        dt = key[1] if key[1].isnative else key[1].newbyteorder("=")
        return ShapedArray(key[0], dt)
    if key in PY_SCALARS:
        return ShapedArray((), PY_SCALARS[key], weak_type=True)
    return ShapedArray((), x.dtype)


def _describe_leaf(k):
    if isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], tuple):
        return ShapedArray(k[0], k[1] if k[1].isnative else k[1].newbyteorder("=")).str_short()
    if isinstance(k, tuple) and k and k[0] == "tracer":
        return f"traced {k[1].str_short()}"
    if isinstance(k, type):
        return f"a Python {k.__name__}" if k in PY_SCALARS else f"a {k.__name__} scalar"
    return repr(k)


def _split_key(key):
    """(treedef or None, statics, leaf keys) of either key format."""
    if key and key[0] == "tree":
        return key[1], key[2], key[3]
    return None, (), key


def explain_miss(fname, old, new):
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

class Entry:
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


# The IR pass pipeline, the backends (numba_cpu, numba_cuda), the kernel cache, the GEMM pool
# and the compile worker's protocol are imported at a program's first lowering or compile,
# not with autodiff (which stays as fast to import): the Numba side (blas_pool imports
# Numba; the backends import it when they compile) and what only it needs.

def run_pipeline(closed):
    """The IR passes every backend's lower() expects to have run (transforms/passes.py)."""
    from .transforms import passes
    return passes.run_pipeline(closed)


def lower_program(closed, dynamic):
    """The finished program (the IR passes of ``run_pipeline``: simplify, inline calls, ...)
    lowered by the Numba CPU backend, which never traces."""
    from .backends import numba_cpu
    return numba_cpu.lower(run_pipeline(closed), dynamic_dims=dynamic)


def compiled_entry(closed, out_tree, leaf_keys, dynamic=True, prog=None, kernel=None):
    """An entry calling the Numba CPU kernel of ``closed`` (lowered now unless ``prog`` is
    given; compiled or loaded now unless ``kernel`` is), its arguments converted as the
    kernel takes them and its results assembled into ``out_tree``."""
    from .backends import compile_cache
    if prog is None:
        prog = lower_program(closed, dynamic)
    if kernel is None:
        kernel = compile_cache.get_kernel(prog.source, prog.entry, prog.params, prog.pieces)
    if "matmul_into" in prog.source and getattr(kernel, "gemm_pool", True):
        # the GEMM pool's threads start with the first kernel that multiplies matrices (a
        # program without products never compiles or starts them: backends/blas_pool.py)
        from .backends import blas_pool
        blas_pool.ensure_started()
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
    return Entry(ns["call"], closed, out_tree, prog, kernel, "cpu", leaf_keys=leaf_keys)


def llvm_entry(closed, out_tree, leaf_keys, prog):
    """An entry calling the direct LLVM tier's kernel of ``prog`` (``backends/llvm_cpu``:
    no Numba, compiled now in well under a second), or None when that tier does not take
    the program (run-time sizes, parallel loops, GEMM-pool products, a construct it does not
    know: Numba compiles those)."""
    from .backends import llvm_cpu
    if not llvm_cpu.supports(prog):
        return None
    try:
        kernel = llvm_cpu.compile_program(prog)
    except llvm_cpu.Unsupported as err:
        if config.explain_cache_misses:
            _log.warning(f"jit: the LLVM tier declined this program ({err}); Numba compiles it")
        return None
    entry = compiled_entry(closed, out_tree, leaf_keys, prog=prog, kernel=kernel)
    entry.backend = "llvm"
    return entry


def cuda_entry(closed, out_tree, leaf_keys, dynamic=True, prog=None):
    """An entry running the program's CUDA kernels (backends/numba_cuda.py). numba-cuda
    compiles each kernel at its first launch (or loads it from its disk cache), so there
    is no background compile: the first call of a signature waits for it."""
    from .backends import numba_cuda
    numba_cuda.require_available(source=user_source())
    if prog is None:
        prog = _cuda_lower(closed, dynamic)
    flat = numba_cuda.entry(prog)
    if out_tree.node_type is None:
        def call(*leaves):
            return flat(*leaves)[0]
    else:
        def call(*leaves):
            return tree_unflatten(out_tree, flat(*leaves))
    return Entry(call, closed, out_tree, prog, None, "cuda", leaf_keys=leaf_keys)


def interpreted_entry(closed, out_tree, state="interpreted"):
    """An entry running ``closed`` on the numpy interpreter (``state``: "interpreted", or
    "pending" while its kernel compiles); like a kernel, it never returns an input."""
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
    return Entry(call, closed, out_tree, backend="interpret", state=state)


# ----------------------------------------------------------------------------------
# backends: one record each, registered by name
# ----------------------------------------------------------------------------------

class Backend:
    """One way :func:`autodiff.jit` runs a program: what ``jit(f, backend=name)`` and
    ``config.default_backend`` name. jit reads what to do from the record, never from the
    name (docs/design.md, "The backend seam").

    ``entry(closed, out_tree, leaf_keys, dynamic) -> Entry``
        the cache entry running ``closed`` (a closed jaxpr before the IR passes) for one
        signature; ``dynamic`` says which input dimensions its kernel reads at run time
        (``True``: all, a frozenset of ``(leaf, axis)``, or None where ``lower`` is None).
        An ``UnsupportedDTypeError`` from it makes jit run the signature on the interpreter
        (logged once); any other error is the user's.
    ``lower(closed, dynamic) -> program``
        the generated program without compiling it (``jitted.lower(...)``: its ``jaxpr``,
        ``source`` and ``sizes``); None for a backend that runs the jaxpr as it is.
    ``require(source)``
        raises ``UnsupportedError`` (naming ``source``, the user's line) when this machine
        cannot run the backend, at ``jit(f, backend=name)``; None when it always can.
    ``device_arrays``
        its arguments may be arrays in device memory (those with ``_autodiff_device``), which
        reach ``entry``'s call as they are, and its results stay there.
    ``tiered``
        jit's CPU tiers run it: the interpreter first, then a kernel compiled in the
        background, the disk cache and the LLVM tier (autodiff/jit.py); ``entry`` is then the
        synchronous path (``config.jit_background_compile=False``).
    ``compile(closed, out_tree, leaf_keys, program) -> Entry``
        the entry running ``program``, a result of ``lower`` (``jitted.lower(...).compile()``:
        it compiles now, blocking); None: ``entry`` with ``dynamic`` True.

    >>> import numpy as np, autodiff as ad
    >>> from autodiff.jit_runtime import Backend, register_backend, interpreted_entry
    >>> calls = []
    >>> def counted(closed, out_tree, leaf_keys, dynamic):
    ...     calls.append(len(closed.jaxpr.eqns))
    ...     return interpreted_entry(closed, out_tree)
    >>> _ = register_backend(Backend("counted", "the interpreter, counting", entry=counted))
    >>> float(ad.jit(lambda x: x * 2.0 + 1.0, backend="counted")(3.0)), calls
    (7.0, [2])
    >>> from autodiff.jit_runtime import BACKENDS
    >>> _ = BACKENDS.pop("counted")
    """

    __slots__ = ("name", "summary", "entry", "lower", "require", "device_arrays", "tiered",
                 "compile")

    def __init__(self, name, summary, *, entry, lower=None, require=None,
                 device_arrays=False, tiered=False, compile=None):
        if not isinstance(name, str) or not name:
            raise TypeError(f"Backend: name must be a non-empty string, got {name!r}")
        if not callable(entry):
            raise TypeError(f"Backend {name!r}: entry must be callable, got {entry!r}")
        self.name = name
        self.summary = summary
        self.entry = entry
        self.lower = lower
        self.require = require
        self.device_arrays = device_arrays
        self.tiered = tiered
        self.compile = compile

    def __repr__(self):
        return f"<Backend {self.name!r}: {self.summary}>"


BACKENDS = {}                   # name -> Backend, in registration order


def register_backend(backend):
    """Make ``backend`` (a :class:`Backend`) what ``jit(..., backend=backend.name)`` runs;
    a record of the same name is replaced (the entries of functions already compiled for
    it stay). Returns it."""
    if not isinstance(backend, Backend):
        raise TypeError(f"register_backend expects a Backend, got {type(backend).__name__}")
    BACKENDS[backend.name] = backend
    return backend


def get_backend(name, what="jit"):
    """The registered :class:`Backend` called ``name``; ``ValueError`` listing the names
    otherwise (``what`` says who asked)."""
    b = BACKENDS.get(name) if isinstance(name, str) else None
    if b is None:
        raise ValueError(f"{what}: unknown backend {name!r}; choose one of "
                         f"{tuple(BACKENDS)}")
    return b


def _cuda_lower(closed, dynamic):
    from .backends import numba_cuda
    return numba_cuda.lower(run_pipeline(closed), dynamic_dims=dynamic)


def _cuda_require(source):
    from .backends import numba_cuda     # says what is missing: numba-cuda, a GPU
    numba_cuda.require_available(source=source)


def _cpu_compile(closed, out_tree, leaf_keys, prog):
    """The LLVM tier's entry for ``prog`` where it takes the program, else Numba's."""
    entry = llvm_entry(closed, out_tree, leaf_keys, prog) if config.jit_llvm_tier else None
    return entry or compiled_entry(closed, out_tree, leaf_keys, prog=prog)


register_backend(Backend(
    "cpu", "Numba kernels on the CPU (the LLVM tier for small specialized programs)",
    entry=compiled_entry, lower=lower_program, tiered=True, compile=_cpu_compile))
register_backend(Backend(
    "interpret", "the numpy interpreter, equation by equation (the reference)",
    entry=lambda closed, out_tree, keys, dynamic: interpreted_entry(closed, out_tree)))
register_backend(Backend(
    "cuda", "numba-cuda kernels on a GPU, or in numba-cuda's simulator (docs/cuda.md)",
    entry=cuda_entry, lower=_cuda_lower, require=_cuda_require, device_arrays=True,
    compile=lambda closed, out_tree, keys, prog: cuda_entry(closed, out_tree, keys, prog=prog)))


# ----------------------------------------------------------------------------------
# background compilation
# ----------------------------------------------------------------------------------

class LoweringJob:
    """A signature's program before lowering: what a background job carries when the
    worker process lowers it too (:meth:`Compiler._lower`), so that this process, which
    runs the interpreter tier meanwhile, spends no time generating kernel text (measured on
    unrolled recurrent programs of 1,000-2,600 equations: 0.14-0.41 s of lowering on the
    call that starts the compile; sending the jaxpr costs ~15 ms). ``program`` is the
    lowered :class:`~autodiff.backends.numba_cpu.Program` once the job ran."""

    def __init__(self, closed, dynamic):
        self.closed = closed
        self.dynamic = dynamic
        self.program = None

    def lower_here(self):
        """Lower the program in this process (when the worker cannot); returns it."""
        self.program = lower_program(self.closed, self.dynamic)
        return self.program

    def __repr__(self):
        return f"LoweringJob({len(self.closed.jaxpr.eqns)} equations)"


# A program closing over more constant bytes than this is lowered in this process: sending
# its constants to the worker and back would cost more than its lowering.
REMOTE_LOWERING_MAX_CONST_BYTES = 8 << 20


# What a jaxpr sent to the worker may refer to by name: code the worker has too. A function
# or class of the user's (a callback, a custom_jvp rule kept in params, an object's class)
# would be looked up by name there, where ``__main__`` is another module: such a program is
# lowered in this process.
_SHARED_MODULES = frozenset({"autodiff", "numpy", "ml_dtypes", "builtins", "copyreg",
                             "collections", "functools", "_codecs", "math", "operator"})


class _ProgramPickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
            mod = getattr(obj, "__module__", None) or ""
            if mod.partition(".")[0] not in _SHARED_MODULES:
                raise pickle.PicklingError(f"{obj!r} of module {mod!r} stays in this process")
        return NotImplemented


def _program_bytes(closed):
    """``closed`` pickled for the worker, or None when it refers to code the worker lacks."""
    buf = io.BytesIO()
    try:
        _ProgramPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(closed)
    except Exception:  # noqa: BLE001 - PicklingError, or an object that does not pickle
        return None
    return buf.getvalue()


def remote_lowering(closed):
    """Whether a background compile of ``closed`` is lowered by the worker process."""
    return (config.jit_compile_process and not _compiler.worker_failed
            and sum(getattr(c, "nbytes", 0) for c in closed.consts)
            <= REMOTE_LOWERING_MAX_CONST_BYTES)


class Compiler:
    """One daemon thread that compiles kernels in the order they were asked for.

    A job is one kernel source; functions (and signatures) waiting for the same source
    share it. With ``config.jit_compile_process`` (the default) and a usable disk cache the
    thread hands each kernel to a worker process (:mod:`autodiff._compile_worker`), which
    compiles it into the disk cache, then loads it from there (milliseconds). So Numba's
    type inference and lowering never share this process's GIL with the interpreter tier,
    and an exiting process does not wait for them: it closes the worker's pipe and ends
    (the worker finishes the kernel in flight for the next run, or gives up). Without the
    worker (disk cache off, unsafe or read-only; the option off; the worker failing) the
    thread compiles in this process, as one thread (Numba serializes compiles under its own
    lock anyway); an exiting process then gives that compile ``EXIT_WAIT_S`` to finish,
    since LLVM cannot be interrupted. Either way the disk cache is written atomically (source
    by ``os.link``/``os.replace``, Numba's index and data by ``os.replace``), so an
    interrupted compile leaves nothing half-written to be loaded later.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.jobs = {}                   # kernel key -> [prog, [callback, ...]]
        self.order = collections.deque()
        self.wake = threading.Condition(self.lock)
        self.idle = threading.Condition(self.lock)
        self.thread = None
        self.closing = False
        self.worker = None               # the worker process (subprocess.Popen), once started
        self.worker_failed = False       # it could not start or died: compile in this process
        self.local = False               # True while this process itself runs LLVM
        self.installing = 0              # compiles done whose entries are being installed

    def submit(self, key, prog, callback):
        """Queue the compile of ``prog`` (one job per ``key``); ``callback(kernel, error)``
        runs on the compiler thread when it is done."""
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
                remote = False
                if isinstance(prog, LoweringJob):
                    # lowered (and compiled, as far as it could) by the worker, else here
                    prog, kernel, remote = self._lower(prog)
                    if self.closing:
                        return
                if kernel is None and not remote and getattr(prog, "llvm_tier", False):
                    kernel = self._llvm(prog)        # None: declined, Numba compiles it
                    if kernel is None and self.closing:
                        return
                if kernel is None:
                    if not remote:                   # (the worker tried Numba already)
                        self._in_worker(prog)
                    with self.lock:
                        if self.closing:
                            return       # exiting: loading it now could keep the exit waiting
                        self.local = True
                    try:
                        kernel = compile_cache.get_kernel(prog.source, prog.entry,
                                                          prog.params, prog.pieces)
                    finally:
                        self.local = False
            except Exception as e:  # noqa: BLE001 - reported through the waiting entries
                err = e
            with self.lock:
                _, callbacks = self.jobs.pop(key)
                self.installing += 1     # wait() returns once the entries are installed
            try:
                for cb in callbacks:
                    try:
                        cb(kernel, err)
                    except Exception as e:  # noqa: BLE001 - never kill the compiler thread
                        _log.warning(f"jit: installing a compiled kernel failed: {e!r}")
            finally:
                with self.lock:
                    self.installing -= 1
                    if not self.jobs and not self.installing:
                        self.idle.notify_all()

    def _lower(self, job):
        """``(program, kernel or None, remote)`` of a :class:`LoweringJob`: lowered and compiled by
        the worker process (the LLVM tier's object code comes back; a kernel Numba compiles
        is left in the disk cache, which ``get_kernel`` then loads) or, when the worker
        cannot (no worker, a jaxpr the pickler cannot send, a primitive the worker has not
        declared, an error), lowered here and compiled by the caller. ``remote`` says
        whether the worker lowered it."""
        reply = None
        if not self.worker_failed and config.jit_compile_process:
            blob = _program_bytes(job.closed)
            worker = self._worker() if blob is not None else None
            if worker is not None:
                from ._compile_worker import read_message, write_message
                try:
                    write_message(worker.stdin.fileno(),
                                  ("lower", blob, job.dynamic, config.values()))
                    reply = read_message(worker.stdout.fileno())
                except (OSError, ValueError, pickle.UnpicklingError, EOFError):
                    reply = None
                if reply is None and not self.closing:
                    self.worker_failed = True
                    _log.warning("jit: the compile worker process ended unexpectedly; kernels "
                                 "compile in this process from now on")
        if reply is not None and reply[0] == "lowered":
            prog = job.program = pickle.loads(reply[1])
            if reply[2] is None:
                return prog, None, True
            from .backends import llvm_cpu
            symbol, obj = reply[2]
            try:
                kernel = llvm_cpu.load_object(symbol, obj, llvm_cpu.program_avals(prog),
                                              prog.out_avals)
            except llvm_cpu.Unsupported:     # a helper's C entry point did not load
                kernel = None
            return prog, kernel, True
        if reply is not None:
            _log.debug(f"jit: the compile worker could not lower a program ({reply[1]}); "
                       f"lowering it in this process")
        prog = job.lower_here()
        if config.jit_llvm_tier:
            from .backends import llvm_cpu
            prog.llvm_tier = llvm_cpu.supports(prog)
        return prog, None, False

    def _llvm(self, prog):
        """The direct LLVM tier's kernel of ``prog``, compiled in the worker process (which
        sends the object code back: no disk needed) or, without one, in this thread; None
        when that tier declines the program."""
        from .backends import llvm_cpu
        avals = llvm_cpu.program_avals(prog)
        spec = lambda a: (tuple(a.shape), np.dtype(a.dtype).str)      # noqa: E731
        if not self.worker_failed and config.jit_compile_process:
            worker = self._worker()
            if worker is not None:
                from ._compile_worker import read_message, write_message
                try:
                    write_message(worker.stdin.fileno(), (
                        "llvm", prog.source, prog.entry, [spec(a) for a in avals],
                        [spec(a) for a in prog.out_avals], list(prog.pieces)))
                    reply = read_message(worker.stdout.fileno())
                except (OSError, ValueError, pickle.UnpicklingError, EOFError):
                    reply = None
                if reply is not None and reply[0] == "ok":
                    symbol, obj = reply[1]
                    try:
                        return llvm_cpu.load_object(symbol, obj, avals, prog.out_avals)
                    except llvm_cpu.Unsupported:     # a helper's C entry point did not load
                        return None
                if reply is not None and reply[0] == "unsupported":
                    return None
                if reply is None and not self.closing:
                    self.worker_failed = True
                    _log.warning("jit: the compile worker process ended unexpectedly; kernels "
                                 "compile in this process from now on")
        with self.lock:
            if self.closing:
                return None
            self.local = True
        try:
            return llvm_cpu.compile_program(prog)
        except llvm_cpu.Unsupported:
            return None
        finally:
            self.local = False

    # -- the worker process ------------------------------------------------------------
    def _in_worker(self, prog):
        """Compile ``prog`` into the disk cache in the worker process, when there is one to
        use; afterwards ``get_kernel`` loads it. A failure here only means this process
        compiles the kernel itself (and reports the error, if it recurs). The worker also
        answers for a kernel the disk cache holds already (it loads it and replies): this
        process does not import Numba, nor compute the versioned key, before its kernel is
        ready to load, so the interpreter tier keeps the GIL meanwhile."""
        from .backends import compile_cache
        if (self.worker_failed or not config.jit_compile_process or not config.disk_cache
                or compile_cache.memory_lookup(prog.source) is not None
                or not compile_cache.disk_cache_writable()):
            return
        worker = self._worker()
        if worker is None:
            return
        from ._compile_worker import read_message, write_message
        try:
            write_message(worker.stdin.fileno(), (prog.source, prog.entry, prog.params,
                                                  prog.pieces, str(config.cache_dir)))
            reply = read_message(worker.stdout.fileno())
        except (OSError, ValueError, pickle.UnpicklingError, EOFError):
            reply = None
        if reply is None:                # the worker died (or we are closing its pipe)
            if not self.closing:
                self.worker_failed = True
                _log.warning("jit: the compile worker process ended unexpectedly; kernels "
                             "compile in this process from now on")
            return
        if reply[0] != "ok":
            _log.debug(f"jit: the compile worker could not compile a kernel ({reply[1]}); "
                       f"compiling it in this process")

    def _worker(self):
        w = self.worker
        if w is not None and w.poll() is None:
            return w
        import json                  # (only here: importing autodiff does not load it)
        env = dict(os.environ, AUTODIFF_WORKER_SYS_PATH=json.dumps(sys.path))
        # run as a file (runpy), not imported from the package: the worker reads its first
        # job before importing autodiff and Numba, so writing it never waits on them
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_compile_worker.py")
        boot = ("import json, os, sys, runpy; sys.path[:] = json.loads(os.environ["
                "'AUTODIFF_WORKER_SYS_PATH']); runpy.run_path(sys.argv[1], run_name='__main__')")
        try:
            self.worker = subprocess.Popen(
                [sys.executable, "-c", boot, script], bufsize=0,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=env, start_new_session=True, close_fds=True)
        except OSError as e:
            self.worker_failed = True
            _log.warning(f"jit: cannot start the compile worker process ({e}); kernels "
                         f"compile in this process")
            return None
        return self.worker

    def worker_pid(self):
        """The worker process's id, or None when none was started."""
        w = self.worker
        return None if w is None else w.pid

    def pending(self):
        """How many compiles are queued, running or being installed."""
        with self.lock:
            return len(self.jobs) + self.installing

    def wait(self, timeout=None):
        """Block until no compile is queued or running; False on timeout."""
        end = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            while self.jobs or self.installing:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.idle.wait(left if left is not None else 0.05)
            return True

    def close(self, wait=0.0):
        """Drop the queued compiles. The worker's pipes are left alone (the compiler thread
        may be blocked on them; they close when this process ends, and the worker then
        finishes the kernel in flight on its own and exits). A compile running in this
        process itself (no worker) gets ``wait`` seconds to finish: it cannot be
        interrupted."""
        with self.lock:
            self.closing = True
            self.order.clear()
            self.wake.notify_all()
            thread = self.thread
            local = self.local
        if wait and local and thread is not None and thread.is_alive() and \
                thread is not threading.current_thread():
            thread.join(wait)


_compiler = Compiler()


def submit_compile(key, prog, callback):
    """Compile ``prog`` in the background; ``callback(kernel, error)`` runs when it is done
    (jobs with the same ``key`` share one compile)."""
    _compiler.submit(key, prog, callback)


def wait_for_compiler(timeout=None):
    """Block until no compile is queued or running; False on timeout."""
    return _compiler.wait(timeout)


def _fresh_after_fork():
    # a forked child has one thread: a lock another parent thread held at fork() time stays
    # locked there forever, and the compiler thread does not exist. A fresh one (the parent's
    # pending compiles stay on the interpreter in the child). Parallel kernels are turned off
    # in such a child by backends/numba_runtime.py's at-fork hook.
    global _compiler
    _compiler = Compiler()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_after_fork)


# Seconds an exiting process gives a compile in flight in this process itself (queued ones
# are dropped; the worker process's compile is never waited for). Killing it is not safe:
# the compiler thread runs LLVM without the GIL, and the interpreter's shutdown disposes
# LLVM objects that compile still uses (seen: an ``llvm::cast`` assertion aborting the
# process at exit). Loading a kernel the worker compiled takes milliseconds.
EXIT_WAIT_S = 10.0


def abandon_pending_compiles():
    """The exit hook: drop the queued compiles, give one in flight here ``EXIT_WAIT_S``."""
    _compiler.close(wait=EXIT_WAIT_S)


# threading's exit hooks run when the main thread ends, before the atexit handlers and the
# finalizers of Numba and llvmlite (registered whenever they were imported, so possibly
# after us); concurrent.futures joins its workers the same way. atexit where it is absent.
_register_exit = getattr(threading, "_register_atexit", None)
if _register_exit is not None:
    _register_exit(abandon_pending_compiles)
else:                                                    # pragma: no cover
    atexit.register(abandon_pending_compiles)


class Lowered:
    """What ``jitted.lower(*args)`` returns: the IR and the generated code.

    ``jaxpr`` is the ClosedJaxpr that is compiled (calls inlined, dead code removed),
    ``source`` the generated Python/Numba module (``None`` for the interpreter), which
    imports its loop nests from the modules in ``pieces`` (``as_text()`` shows all),
    ``sizes`` the run-time size vector for these arguments, ``plan`` the kernel's
    :class:`~autodiff.backends.kernel_plan.KernelPlan` (its loop nests and the statements
    between them: ``print(low.plan.describe())``; None for the interpreter). ``install``:
    ``(closed jaxpr, output treedef, leaf keys, put)``, where ``put(entry)`` makes the
    jitted function run ``entry`` for this signature (None: nothing to install) and
    returns the function.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> f = ad.jit(lambda x, w: anp.sum(anp.tanh(x) @ w))
    >>> print(f.lower(np.ones((3, 3)), np.ones((3, 8))).plan.describe())
    nest 0 over 2 dims: ew tanh
    then opaque dot_general
    nest 1 over 2 dims: reduce reduce_sum
    """

    def __init__(self, jaxpr, source, sizes, program, install=None, backend=None):
        self.jaxpr = jaxpr
        self.source = source
        self.sizes = sizes
        self.program = program
        self.plan = getattr(program, "plan", None)
        self._install = install
        self._backend = backend

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
        closed, out_tree, keys, put = self._install
        if self.program is None:           # the interpreter backend: nothing to compile
            return put(None)
        b = self._backend
        if b.compile is None:
            return put(b.entry(closed, out_tree, keys, True))
        return put(b.compile(closed, out_tree, keys, self.program))

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
