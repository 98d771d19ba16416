"""Lower a jaxpr to CUDA kernels with numba-cuda: the second emitter on the planner's plan.

The plan is the CPU backend's (``backends/plan.py``: fusion into loop nests, reductions as
accumulators of the nest computing their operand, views as index maps); this module writes
it for a GPU. A program is one Python module:

* every loop nest becomes a ``@cuda.jit`` kernel, a grid-stride loop with one thread per
  element of the nest's parallel dimensions (views are index arithmetic, as on the CPU);
* a nest with reductions picks one of five shapes (``numba_cuda_emitter.CudaFunction.strategy``):
  ``grid`` (everything reduced to one value: every thread accumulates a strided share,
  each block combines its threads in shared memory and takes a ticket, and the block with
  the last ticket combines the blocks' partials in block order: one launch),
  ``block`` (one block per kept element, its threads share the reduced elements, combined
  in shared memory; rows of ``ROW_GROUP`` to ``TPB`` elements: ``rows``, a group of
  ``ROW_GROUP`` threads, a warp, per kept element), ``split`` (the innermost axis kept,
  many rows: a block per tile of kept elements and chunk of rows, each tile's last block
  combining the chunks),
  ``serial`` (one thread per kept element loops over the reduced ones: short reductions);
  a nest reducing several axis sets is one kernel per set. No warp shuffles (the
  simulator has none), atomics only for tickets: results do not depend on scheduling.
  Sums accumulate in float64 (int64) as on the CPU;
* every nest is first a launch record; ``backends/cuda_launches.py`` merges the launches
  of a host function where what they read and write allows, before the text is written;
* a host function (plain Python) allocates the device buffers, launches the kernels in
  plan order and drops each buffer after its last use (``del``), so device memory is
  freed as the numpy interpreter frees host memory. Scalars live on the host: a rank-0
  value a kernel computes is a 1-element device array, read back only where a host
  statement uses it (a ``while`` predicate, a ``cond`` index);
* library calls: ``dot_general`` (any dimension numbers, batch included) is cuBLAS through
  CuPy when CuPy is importable, else a tiled shared-memory matmul kernel; ``cholesky``,
  ``triangular_solve``, ``solve``, ``eigh``, ``slogdet``, ``qr``, ``svd`` are cuSOLVER through CuPy, else
  numpy/LAPACK on the host (copy there and back); a ``scan`` whose body is kernels of
  known size is a device loop (one kernel of one block runs every step:
  ``numba_cuda_statements._device_loop``); ``cond``/``while``/other scans are host
  loops over the body's host function, whose operands and carry stay on the device;
* gathers, scatters (``scatter_add`` with atomics; ``scatter`` walks the index rows in
  order so the last write wins, as in numpy, and ``scatter_mul/min/max`` combine each
  update in that order), dynamic slices and updates, ``pad``,
  ``concatenate``, cumulative ops, ``argmax``/``argmin`` and ``sort``/``argsort`` (a
  thread per element writes it at its rank) are kernels of their own (one thread per
  output element or lane); ``fft`` is cuFFT through CuPy (else numpy on the host); the
  rest (:data:`HOST_CALLS`: the callbacks) run on the host, one copy each direction.

Math is CUDA's libdevice through numba-cuda (``backends/cuda_math.py``; numpy under the
simulator). Expressions name it by numpy's name, ``«M».arcsinh(x)``; kernels resolve
``«M»`` to ``_dm`` (``cuda_math``), host statements to ``np``. Complex values use
``«C».cexp(z)`` and friends (``cuda_math``: numpy's algorithms from ``complex_math``,
``cmath``, numpy's division, order, ``sign`` and integer powers as device functions;
``_hc``, numpy, on the host); a complex ``scatter_add`` adds real and imaginary
parts atomically, complex products, linear algebra and FFTs are library calls. A
program in which a complex value meets a primitive without complex code here (the
real-only ones, and ``log2``) runs on the interpreter.

The modules: ``numba_cuda_expressions`` (the elementwise records: the default from a
primitive's lowering facts, records where the text differs), ``numba_cuda_statements``
(the opaque records and the host fallback), ``numba_cuda_emitter`` (``CudaFunction``:
kernels, reductions, the host function) and this one (availability, the program module,
:func:`lower`, :func:`load`, :func:`entry`); docs/design.md, "Lowering records".

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp     # doctest: +SKIP
>>> from autodiff.backends.numba_cuda import lower                # doctest: +SKIP
>>> prog = lower(ad.make_jaxpr(lambda x: anp.sum(anp.exp(x)))(np.ones(3)))  # doctest: +SKIP
>>> "@cuda.jit" in prog.source                                   # doctest: +SKIP
True
"""
import hashlib
import importlib.util
import os
import sys
import threading
import types

import numpy as np

from ..config import config
from ..core import ClosedJaxpr, Jaxpr
from ..devices import CudaArray
from ..errors import UnsupportedError
from . import numba_cpu  # noqa: F401  (the planner records of views, reductions, opaque primitives)
from .cache_files import (UnsafeCacheError, checked_kernel_dir, open_trusted, refuse,
                          write_source)
from .numba_cuda_emitter import CudaFunction, NotOnDevice as _NotOnDevice, numba_type_name
from .numba_cuda_statements import statement_rule
from .numba_emitter import ModuleBase, dtype_name, has_arrays
from .plan import LOWERINGS

__all__ = ["lower", "entry", "load", "CudaProgram", "HOST_CALLS", "KERNEL_OPAQUE",
           "available", "require_available"]

#: opaque primitives with device code of their own (the rest: HOST_CALLS)
KERNEL_OPAQUE = frozenset(n for n, r in LOWERINGS.items()
                          if r.kind == "opaque" and statement_rule(n) is not None)
#: opaque primitives that run as host calls (numpy on a host copy, result copied back);
#: the linear-algebra ones do so only when CuPy is absent
HOST_CALLS = frozenset(n for n, r in LOWERINGS.items()
                       if r.kind == "opaque" and statement_rule(n) is None)


# =====================================================================================
# Availability
# =====================================================================================

def available():
    """``(ok, reason)``: whether ``backend="cuda"`` can run here, and if not, what is
    missing. Imports ``numba.cuda`` only when numba-cuda is installed."""
    if importlib.util.find_spec("numba_cuda") is None:
        return False, ("backend='cuda' needs numba-cuda, which is not installed "
                       "(pip install 'autodiff-numba[cuda]')")
    try:
        # numba.cuda through cuda_math: its import works around numba-cuda 0.30.4 on
        # numpy >= 2.5 (overload(np.row_stack)), before any kernel is compiled
        from .cuda_math import SIMULATOR, cuda
    except Exception as e:  # noqa: BLE001
        return False, f"backend='cuda': importing numba.cuda failed ({type(e).__name__}: {e})"
    if SIMULATOR:
        return True, "the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    try:
        ok = cuda.is_available()
    except Exception:  # noqa: BLE001
        ok = False
    if not ok:
        return False, ("backend='cuda' found no usable CUDA GPU (no NVIDIA driver, or "
                       "numba.cuda.is_available() is False); on a machine without a GPU, "
                       "set NUMBA_ENABLE_CUDASIM=1 before importing numba to run the "
                       "kernels in numba-cuda's simulator, or use backend='cpu'")
    return True, "CUDA GPU"


def require_available(source=None):
    """Raise ``UnsupportedError`` naming what is missing when :func:`available` says no."""
    ok, why = available()
    if not ok:
        raise UnsupportedError(why, source=source)


def _rt():
    from . import cuda_runtime
    return cuda_runtime


# =====================================================================================
# The module and its functions
# =====================================================================================

class CudaProgram:
    """A lowered program: the module ``source``, its host function ``entry``, parameter
    specs as the CPU's ``Program``, the ``_sz`` vector, constants, output avals, and
    ``host_eqns``, the equations its host calls run (passed to it as ``_E``), and the top
    function's ``plan`` (:class:`~autodiff.backends.kernel_plan.KernelPlan`)."""

    pieces = ()
    parallel = False
    plan = None

    def __init__(self, source, entry, params, sizes, consts, out_avals, jaxpr, host_eqns):
        self.source, self.entry, self.params, self.sizes = source, entry, params, sizes
        self.consts, self.out_avals, self.jaxpr, self.host_eqns = \
            consts, out_avals, jaxpr, host_eqns

    def __repr__(self):
        return f"CudaProgram({self.entry}, {len(self.params)} params, {len(self.source)} chars)"


class _Module(ModuleBase):
    """What the planner and the records expect of a module, plus the kernels, the host
    functions and the host-called equations of this program."""

    def __init__(self):
        self.functions = []          # host function texts, callees first
        self.kernels = []            # kernel texts
        self.kernel_names = {}       # kernel text with its name elided -> name
        self.sizes = []
        self.consts, self.const_lines = {}, []
        self.types = set()           # numba type names the kernels' shared arrays use
        self.imports_math, self.imports_runtime = set(), set()
        self.param_literals = False
        self.fast_math_used = 0
        self.dynamic_dims = True
        self.static = False
        self.n_sub = 0
        self.sub_texts = {}
        self.host_eqns = []          # _E: the equations host calls run
        self.host_prims = set()      # which primitives went to the host
        self.tickets = []            # grid reductions' counters (module globals)
        self.device_fns, self.device_names = [], {}   # device functions (device loops)

    def device_function(self, text):
        """Register a device function (``def «K»(...)``, a kernel's text called from another
        kernel: a scan body's launch inside a device loop); equal texts are one."""
        got = self.device_names.get(text)
        if got is None:
            got = self.device_names[text] = f"_d{len(self.device_names)}"
            self.device_fns.append(text.replace("«K»", got, 1))
        return got

    def ticket(self, count="1"):
        """Host text giving ``count`` int32 device counters, zero, for a reduction's
        last-block tickets (the kernel resets each after use): one set per launch site,
        made at its first use and kept in the module's ``_TK`` (launches of one program
        run in order on the default stream)."""
        if not self.tickets:
            self.const_lines.append("_TK = {}")
        self.tickets.append(len(self.tickets))
        extra = "" if count == "1" else f", {count}"
        return f"_rt.ticket(_TK, {len(self.tickets) - 1}{extra})"

    def host_eqn(self, e):
        self.host_eqns.append(e)
        self.host_prims.add(e.primitive.name)
        return len(self.host_eqns) - 1

    def type_name(self, dt):
        n = numba_type_name(dt)
        self.types.add(n)
        return f"_T_{n}"

    def kernel(self, text):
        """Register a kernel (``def «K»(...)``); equal kernels are one."""
        got = self.kernel_names.get(text)
        if got is None:
            got = self.kernel_names[text] = f"_k{len(self.kernel_names)}"
            self.kernels.append(text.replace("«K»", got, 1))
        return got

    def sub_function(self, jaxpr, hint, device_from=None, **device_scalars):
        """The function of a control-flow body. ``device_from``: build it for a device
        loop instead (``CudaFunction.device_from``): nothing is added to the module but
        its launches, read by the caller; returns None where it cannot be one.
        ``device_scalars``: ``device_params``, ``device_rets_ok``, ``device_rets_must``
        (sets of positions: which rank-0 values a host loop's body takes and returns in
        device buffers), ``row_params`` and ``row_rets`` (which stack rows it reads and
        writes in place), ``donated_params`` (which carries it may update in place; see
        ``CudaFunction``), ``param_dynamic`` (which of its parameters' axes are run-time
        sizes: ``Planner.param_dynamic``)."""
        self.n_sub += 1
        fb = CudaFunction(self, jaxpr, f"_{hint}{self.n_sub}", top=False)
        for k, positions in device_scalars.items():
            setattr(fb, k, dict(positions) if k in ("row_rets", "donated_params")
                    else frozenset(positions))
        if device_from is not None:
            fb.device_from = device_from
            try:
                fb.build()
            except _NotOnDevice:
                return None
            return fb
        fb.build()
        return fb

    def source(self):
        from .cuda_runtime import ROW_GROUP, ROWS_PER_BLOCK, TPB
        from .cuda_math import SIMULATOR
        deco = "@cuda.jit" if SIMULATOR else "@cuda.jit(cache=True)"
        head = ["# Generated by autodiff.jit (backends/numba_cuda.py): CUDA kernels (one per",
                "# loop nest of the plan) and the host functions that launch them. Each",
                "# statement is preceded by the jaxpr equation it computes.",
                "import numpy as np",
                "from autodiff.backends.cuda_math import cuda",
                "from autodiff.backends import cuda_math as _dm",
                "from autodiff.backends.cuda_math import HOST as _hc",
                "from autodiff.backends import cuda_runtime as _rt",
                "from autodiff.backends.cuda_runtime import slot_i64, slot_f64",
                "",
                f"_TPB = {TPB}",
                f"_RG = {ROW_GROUP}",
                f"_RPB = {ROWS_PER_BLOCK}"]
        head += [f"_T_{n} = cuda.{n}" for n in sorted(self.types)]
        head += self.const_lines
        body = []
        for k in self.device_fns:
            body += ["", "", "@cuda.jit(device=True)", k.replace("«M»", "_dm").replace("«C»", "_dm")]
        for k in self.kernels:
            body += ["", "", deco, k.replace("«M»", "_dm").replace("«C»", "_dm")]
        for f in self.functions:
            body += ["", "", f.replace("«M»", "np").replace("«C»", "_hc")
                     .replace("«SZ0»", "_sz, _E")
                     .replace("«SZ»", ", _sz, _E")]
        return "\n".join(head + body) + "\n"


# =====================================================================================
# Entry points: lower, load, call
# =====================================================================================

def lower(closed, dynamic_dims=True):
    """Lower a finished ClosedJaxpr (the output of
    :func:`autodiff.transforms.passes.run_pipeline`, as for the CPU backend's ``lower``) to
    a :class:`CudaProgram`: the same dimension classes, fusion and size rules."""
    if isinstance(closed, Jaxpr):
        closed = ClosedJaxpr(closed, [])
    mod = _Module()
    mod.dynamic_dims = dynamic_dims if dynamic_dims is True else frozenset(dynamic_dims)
    mod.static = mod.dynamic_dims is not True and not mod.dynamic_dims
    mod.param_literals = has_arrays(closed.jaxpr) and not mod.static
    fb = CudaFunction(mod, closed.jaxpr, "kernel", top=True)
    fb.build()
    params = []
    for v in list(closed.jaxpr.constvars) + list(closed.jaxpr.invars):
        params.append(("array", v.aval.dtype, len(v.aval.shape)) if v.aval.shape
                      else ("scalar", v.aval.dtype))
    sig = ", ".join(f"{dtype_name(p[1])}[{p[2]}d]" if p[0] == "array" else dtype_name(p[1])
                    for p in params)
    source = f"# kernel parameters: ({sig})\n" + mod.source()
    prog = CudaProgram(source, "kernel", params, np.array(mod.sizes, dtype=np.int64),
                       list(closed.consts), [v.aval for v in closed.jaxpr.outvars], closed,
                       list(mod.host_eqns))
    prog.plan = fb.kernel_plan
    return prog


_MODULES = {}
_LOAD_LOCK = threading.Lock()
STATS = {"modules_loaded": 0, "from_disk": 0}


def _module_key(source):
    import numba
    from importlib.metadata import version
    from .cuda_math import COMPILER
    text = "\n".join([source, numba.__version__, COMPILER, version(COMPILER)])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def load(source):
    """The module generated as ``source``: one per process (memory), written once to
    ``<cache_dir>/cuda/`` so numba-cuda's own disk cache (``cache=True`` kernels, which
    need a file-backed module) keeps their machine code between processes. The directory
    is trust-checked as ``kernels/`` is, the file is read through ``open_trusted`` and the
    text read runs only if it is ``source`` (never a ``.pyc``); otherwise, and with
    ``disk_cache`` off, the module is made in memory."""
    key = _module_key(source)
    with _LOAD_LOCK:
        mod = _MODULES.get(key)
        if mod is not None:
            return mod
        name = f"_autodiff_cuda_{key}"
        mod = None
        checked = checked_kernel_dir("cuda") if config.disk_cache else None
        if checked is not None:    # <cache_dir>/cuda and its __pycache__ trusted, as kernels/
            path = os.path.join(checked[0], f"c_{key}.py")
            try:
                if os.path.lexists(path):
                    STATS["from_disk"] += 1
                elif checked[1]:
                    write_source(path, source)
                with open_trusted(path) as f:
                    text = f.read().decode("utf-8")
            except UnsafeCacheError as err:
                refuse(err.path, err.reason)
                text = None
            except (OSError, UnicodeDecodeError):
                text = None
            if text == source:     # run the text read and checked, never a .pyc beside it
                mod = types.ModuleType(name)
                mod.__file__ = path
                sys.modules[name] = mod
                exec(compile(text, path, "exec"), mod.__dict__)
        if mod is None:                               # no trusted cache: in memory only
            mod = types.ModuleType(name)
            exec(compile(source, f"<autodiff cuda {key[:12]}>", "exec"), mod.__dict__)
        STATS["modules_loaded"] += 1
        from .cuda_launcher import bound                 # launches bound once per types
        for n in [n for n in vars(mod) if n.startswith("_k") and n[2:].isdigit()]:
            setattr(mod, n, bound(getattr(mod, n)))
        _MODULES[key] = mod
        if _WRAP:
            _wrap_module(mod, _WRAP[0])
        return mod


_WRAP = []          # the wrapper count_launches puts around kernels while it counts


def _wrap_module(mod, wrapper):
    for n, k in list(vars(mod).items()):
        if n.startswith("_k") and n[2:].isdigit():
            base = k.wrapped_kernel if getattr(type(k), "wraps_kernel", False) else k
            setattr(mod, n, base if wrapper is None else wrapper(base, n))


def wrap_kernels(wrapper):
    """Put ``wrapper(kernel, name)`` around every generated kernel of every loaded program
    (and of programs loaded later); ``None`` takes the wrappers off again. The host
    functions look their kernels up in the module's globals at each launch, so this is
    what ``cuda_runtime.count_launches`` uses: nothing extra on the launch path otherwise."""
    with _LOAD_LOCK:
        _WRAP[:] = [wrapper] if wrapper is not None else []
        for mod in _MODULES.values():
            _wrap_module(mod, wrapper)


def entry(prog):
    """A flat callable for ``prog``: leaves in (numpy arrays, scalars or device arrays),
    a list of :class:`~autodiff.devices.CudaArray` out."""
    rt = _rt()
    fn = getattr(load(prog.source), prog.entry)
    consts = []
    for c in prog.consts:
        c = np.asarray(c)
        consts.append(rt.to_device(c) if c.ndim else c[()])
    specs = prog.params[len(consts):]
    sz, E, outs = prog.sizes, prog.host_eqns, prog.out_avals

    def arg(x, spec):
        dt = spec[1]
        if isinstance(x, CudaArray):
            if spec[0] == "array":
                return x._dev if x.dtype == dt else rt.to_device(np.asarray(x, dt))
            return dt.type(np.asarray(x)[()])
        if spec[0] == "array":
            if not isinstance(x, np.ndarray) and hasattr(x, "__cuda_array_interface__"):
                return rt.adopt(x)        # CuPy, PyTorch: in place (jit's fast path key)
            return rt.to_device(np.ascontiguousarray(x, dtype=dt))
        return dt.type(x) if not isinstance(x, np.ndarray) else dt.type(x[()])

    def wrap(r, aval):
        if rt.is_device(r):
            return CudaArray(r) if aval.shape else CudaArray(r, ())   # no reshape: a new
            # numba-cuda array object costs tens of microseconds on the host
        return CudaArray(rt.scalar_out(r, aval.dtype))

    def call(*leaves):
        args = consts + [arg(x, s) for x, s in zip(leaves, specs)]
        with np.errstate(all="ignore"):
            res = fn(*args, sz, E)
        return [wrap(r, a) for r, a in zip(res, outs)]
    call.program = prog
    return call
