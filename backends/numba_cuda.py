"""Lower a jaxpr to CUDA kernels with numba-cuda: the second emitter on the planner's plan.

The plan is the CPU backend's (``backends/plan.py``: fusion into loop nests, reductions as
accumulators of the nest computing their operand, views as index maps); this module writes
it for a GPU. A program is one Python module:

* every loop nest becomes a ``@cuda.jit`` kernel, a grid-stride loop with one thread per
  element of the nest's parallel dimensions (views are index arithmetic, as on the CPU);
* a nest with reductions picks one of three shapes (:meth:`_CudaFn.strategy`):
  ``grid`` (everything reduced to one value: every thread accumulates a strided share,
  each block combines its threads in shared memory, a one-block pass combines the blocks),
  ``block`` (one block per kept element, its threads share the reduced elements, combined
  in shared memory), ``serial`` (one thread per kept element loops over the reduced ones:
  short reductions, and reductions keeping the innermost axis, whose threads then read
  consecutive addresses); a nest reducing several axis sets is one kernel per set. No
  warp shuffles (the
  simulator has none), no atomics: results do not depend on scheduling. Sums accumulate in
  float64 (int64) as on the CPU;
* a host function (plain Python) allocates the device buffers, launches the kernels in
  plan order and drops each buffer after its last use (``del``), so device memory is
  freed as the numpy interpreter frees host memory. Scalars live on the host: a rank-0
  value a kernel computes is a 1-element device array, read back only where a host
  statement uses it (a ``while`` predicate, a ``cond`` index);
* library calls: ``dot_general`` (any dimension numbers, batch included) is cuBLAS through
  CuPy when CuPy is importable, else a tiled shared-memory matmul kernel; ``cholesky``,
  ``triangular_solve``, ``solve``, ``eigh``, ``slogdet`` are cuSOLVER through CuPy, else
  numpy/LAPACK on the host (copy there and back); ``cond``/``while``/``scan`` are host
  loops over the body's host function, whose operands and carry stay on the device;
* gathers, scatters (``scatter_add`` with atomics; ``scatter`` walks the index rows in
  order so the last write wins, as in numpy), dynamic slices and updates, ``pad``,
  ``concatenate``, cumulative ops and ``argmax``/``argmin`` are kernels of their own (one
  thread per output element or lane); the rest (:data:`HOST_CALLS`: ``sort``,
  ``argsort`` and the callbacks) run on the host the same way, one copy each direction.

Math is CUDA's libdevice through numba-cuda (``backends/cuda_math.py``; numpy under the
simulator). Expressions name it ``«M».exp(x)``; kernels resolve ``«M»`` to ``_dm``
(``cuda_math``), host statements to ``_hm`` (numpy). Complex values use
``«C».cexp(z)`` and friends (:data:`CUDA_EW_COMPLEX`: ``cmath`` and numpy's division,
order, ``sign`` and integer powers as device functions; ``_hc``, numpy, on the host); a
program in which a complex value meets a primitive without complex code here
(``dot_general``, ``scatter_add``, linear algebra) runs on the interpreter.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp     # doctest: +SKIP
>>> from autodiff.backends.numba_cuda import lower                # doctest: +SKIP
>>> prog = lower(ad.make_jaxpr(lambda x: anp.sum(anp.exp(x)))(np.ones(3)))  # doctest: +SKIP
>>> "@cuda.jit" in prog.source                                   # doctest: +SKIP
True
"""
import ast
import hashlib
import importlib.util
import os
import re
import sys
import threading

import numpy as np

from ..core import ClosedJaxpr, Jaxpr, Literal
from ..errors import UnsupportedError
from . import numba_cpu as _cpu
from .numba_cpu import _EwCtx, _Fn, _OpCtx, _dt, _dtname, _is_float
from ..errors import UnsupportedDTypeError
from .plan import LOWERINGS

__all__ = ["lower", "entry", "CudaProgram", "HOST_CALLS", "KERNEL_OPAQUE", "available",
           "require_available"]


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
# Elementwise expressions (kernel and host text; «M» is the math namespace)
# =====================================================================================

def _sel(c, a, b):
    return f"({a} if {c} else {b})"


def _m(name):
    return lambda ctx, a: f"«M».{name}({', '.join(a)})"


def _e_sign(ctx, a):
    x, dt = a[0], ctx.out_dtype
    one, zero = ctx.lit(1, dt), ctx.lit(0, dt)
    if dt == np.bool_:
        return x
    if dt.kind == "u":
        return _sel(f"{x} > 0", one, zero)
    mone = ctx.lit(-1, dt)
    tail = _sel(f"{x} != {x}", x, zero) if _is_float(dt) else zero   # sign(nan) is nan
    return _sel(f"{x} > 0", one, _sel(f"{x} < 0", mone, tail))


def _e_abs(ctx, a):
    return f"«M».fabs({a[0]})" if _is_float(ctx.out_dtype) else f"abs({a[0]})"


def _e_logistic(ctx, a):
    one = ctx.lit(1, ctx.out_dtype)
    return f"{one} / ({one} + «M».exp(-{a[0]}))"


def _e_max(ctx, a):
    x, y = a
    if _is_float(ctx.out_dtype):      # numpy: NaN from either side; ties give the second
        return _sel(f"({x} > {y}) or ({x} != {x})", x, y)
    return _sel(f"{x} >= {y}", x, y)


def _e_min(ctx, a):
    x, y = a
    if _is_float(ctx.out_dtype):
        return _sel(f"({x} < {y}) or ({x} != {x})", x, y)
    return _sel(f"{x} <= {y}", x, y)


def _e_convert(ctx, a):
    new = np.dtype(ctx.params["new_dtype"])
    if new == np.bool_:
        return f"({a[0]} != 0)"
    return f"{_dt(new)}({a[0]})"


def _binop(op):
    return lambda ctx, a: f"{a[0]} {op} {a[1]}"


_IDENT = lambda ctx, a: a[0]   # noqa: E731

CUDA_EW = {
    "neg": lambda ctx, a: f"-{a[0]}",
    "sign": _e_sign,
    "floor": _m("floor"), "ceil": _m("ceil"), "round": _m("rint"),
    "is_finite": lambda ctx, a: (f"«M».isfinite({a[0]})" if _is_float(ctx.in_dtypes[0])
                                 else "True"),
    "not": lambda ctx, a: f"(not {a[0]})" if ctx.out_dtype == np.bool_ else f"~{a[0]}",
    "logistic": _e_logistic,
    "rsqrt": lambda ctx, a: f"{ctx.lit(1, ctx.out_dtype)} / «M».sqrt({a[0]})",
    "abs": _e_abs,
    "integer_pow": _cpu._ew_integer_pow,
    "div": _binop("/"), "pow": _binop("**"),
    "max": _e_max, "min": _e_min,
    "atan2": _m("atan2"),
    "mod": lambda ctx, a: (f"«M».mod_f({a[0]}, {a[1]})" if _is_float(ctx.out_dtype)
                           else f"{a[0]} % {a[1]}"),
    "floor_divide": lambda ctx, a: (f"«M».floor_divide_f({a[0]}, {a[1]})"
                                    if _is_float(ctx.out_dtype) else f"{a[0]} // {a[1]}"),
    "select": lambda ctx, a: _sel(a[0], a[1], a[2]),
    "convert_element_type": _e_convert,
    "stop_gradient": _IDENT, "name": _IDENT, "_copy": _IDENT,
    "iota": lambda ctx, a: ctx.idx[ctx.params["dimension"]],
}
for _n in ("exp", "log", "tanh", "sin", "cos", "expm1", "log1p", "tan", "asin", "acos", "atan",
           "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt", "sqrt", "exp2"):
    CUDA_EW[_n] = _m(_n)
for _n, _op in [("add", "+"), ("sub", "-"), ("mul", "*"), ("eq", "=="), ("ne", "!="),
                ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("and", "&"),
                ("or", "|"), ("xor", "^")]:
    CUDA_EW[_n] = _binop(_op)


# Complex operands (cuda_math's c-names: cmath on a GPU, numpy's semantics where a plain
# expression differs). «C» is the complex namespace: cuda_math in kernels, its HOST in
# host functions. A primitive missing here (mod, atan2, ...) keeps a program with complex
# values of it on the interpreter (UnsupportedDTypeError), as do the opaque primitives
# outside COMPLEX_OPAQUE.
def _c(name):
    return lambda ctx, a: f"«C».{name}({', '.join(a)})"


def _ce_integer_pow(ctx, a):
    y = ctx.params["y"]
    if 0 <= y <= 3:
        return _cpu._ew_integer_pow(ctx, a)
    return f"«C».cipow({a[0]}, {y})"


def _ce_convert(ctx, a):
    new = np.dtype(ctx.params["new_dtype"])
    if new == np.bool_:
        return f"({a[0]} != 0)"
    if ctx.in_dtypes[0].kind == "c" and new.kind != "c":
        return f"{_dt(new)}({a[0]}.real)"          # numpy discards the imaginary part
    return f"{_dt(new)}({a[0]})"


CUDA_EW_COMPLEX = {
    "neg": CUDA_EW["neg"], "add": CUDA_EW["add"], "sub": CUDA_EW["sub"],
    "mul": CUDA_EW["mul"], "eq": CUDA_EW["eq"], "ne": CUDA_EW["ne"],
    "div": _c("cdiv"), "lt": _c("clt"), "le": _c("cle"), "gt": _c("cgt"), "ge": _c("cge"),
    "max": _c("cmax"), "min": _c("cmin"), "sign": _c("csign"), "is_finite": _c("cisfinite"),
    "pow": _c("cpow"),
    "abs": lambda ctx, a: f"abs({a[0]})",
    "rsqrt": lambda ctx, a: f"«C».cdiv({ctx.lit(1, ctx.out_dtype)}, «C».csqrt({a[0]}))",
    "logistic": lambda ctx, a: (f"«C».cdiv({ctx.lit(1, ctx.out_dtype)}, "
                                f"{ctx.lit(1, ctx.out_dtype)} + «C».cexp(-{a[0]}))"),
    "integer_pow": _ce_integer_pow, "convert_element_type": _ce_convert,
    "select": CUDA_EW["select"], "stop_gradient": _IDENT, "name": _IDENT, "_copy": _IDENT,
    "real": lambda ctx, a: f"{a[0]}.real", "imag": lambda ctx, a: f"{a[0]}.imag",
    "conj": lambda ctx, a: f"{a[0]}.conjugate()",
    "complex": lambda ctx, a: f"complex({a[0]}, {a[1]})",
}
for _n, _cn in [("exp", "cexp"), ("log", "clog"), ("sqrt", "csqrt"), ("sin", "csin"),
                ("cos", "ccos"), ("tan", "ctan"), ("sinh", "csinh"), ("cosh", "ccosh"),
                ("tanh", "ctanh"), ("asin", "casin"), ("acos", "cacos"), ("atan", "catan"),
                ("asinh", "casinh"), ("acosh", "cacosh"), ("atanh", "catanh"),
                ("expm1", "cexpm1"), ("log1p", "clog1p"), ("exp2", "cexp2")]:
    CUDA_EW_COMPLEX[_n] = _c(_cn)
for _n in ("real", "imag", "conj", "complex"):
    CUDA_EW.setdefault(_n, CUDA_EW_COMPLEX[_n])

#: opaque primitives whose device code (or host call) takes complex values as it is
COMPLEX_OPAQUE = frozenset(("pad", "concatenate", "dynamic_slice", "dynamic_update_slice",
                            "gather", "index_gather", "scatter", "cumsum", "cumprod", "cummax",
                            "cummin", "argmax", "argmin", "cond", "while", "scan"))


def _check_complex(jaxpr):
    """Refuse (``UnsupportedDTypeError``: the interpreter runs it) a program in which a
    complex value meets a primitive this backend has no complex code for."""
    for e in jaxpr.eqns:
        avals = [v.aval for v in list(e.invars) + list(e.outvars)]
        if not any(a.dtype.kind == "c" for a in avals):
            continue
        name = e.primitive.name
        low = LOWERINGS.get(name)
        if low is not None and low.kind == "elementwise":
            ok = name in CUDA_EW_COMPLEX
        elif low is not None and low.kind in ("view", "reshape", "reduce"):
            ok = True
        else:
            ok = name in COMPLEX_OPAQUE or name in HOST_CALLS
        if not ok:
            raise UnsupportedDTypeError(
                f"jit (cuda backend): {name} of complex values is not supported",
                source=e.source)


# =====================================================================================
# Reductions: initial values and the combine of two partial results
# =====================================================================================

def _red_kind(e):
    kind = e.primitive.name[len("reduce_"):]
    if e.invars[0].aval.dtype == np.bool_:
        kind = {"sum": "or", "prod": "and"}.get(kind, kind)
    return kind


def _acc_dtype(kind, dt_in):
    if kind in ("sum", "prod") and dt_in.kind == "c":
        return np.dtype(np.complex128)
    if kind in ("sum", "prod"):
        return np.dtype(np.float64) if dt_in.kind == "f" else (
            np.dtype(np.uint64) if dt_in.kind == "u" else np.dtype(np.int64))
    if kind in ("and", "or"):
        return np.dtype(np.bool_)
    return dt_in


def _init_value(kind, dt):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if kind == "and":
        return True
    if kind == "or":
        return False
    if dt.kind == "f":
        return -np.inf if kind == "max" else np.inf
    if dt.kind == "c":        # numpy's lexicographic order: any element replaces it
        inf = -np.inf if kind == "max" else np.inf
        return complex(inf, inf)
    if dt == np.bool_:
        return kind == "min"
    info = np.iinfo(dt)
    return info.min if kind == "max" else info.max


def _combine(kind, a, b, dt):
    """Partial result ``a`` combined with element or partial ``b`` (both names)."""
    if kind == "sum":
        return f"{a} + {b}"
    if kind == "prod":
        return f"{a} * {b}"
    if kind == "and":
        return f"{a} & {b}"
    if kind == "or":
        return f"{a} | {b}"
    if dt.kind == "c":        # np.maximum(a, b): lexicographic, a NaN in a stays
        return f"«C».c{kind}({a}, {b})"
    cmp = ">=" if kind == "max" else "<="           # ties: the later element, as the CPU
    cond = f"({b} {cmp} {a})" + (f" or ({b} != {b})" if dt.kind == "f" else "")
    return _sel(cond, b, a)


_TYPE_NAME = {np.dtype(np.bool_): "boolean"}


def _nb_type(dt):
    dt = np.dtype(dt)
    return _TYPE_NAME.get(dt, dt.name)


# =====================================================================================
# The module and its functions
# =====================================================================================

class CudaProgram:
    """A lowered program: the module ``source``, its host function ``entry``, parameter
    specs as the CPU's ``Program``, the ``_sz`` vector, constants, output avals, and
    ``host_eqns``, the equations its host calls run (passed to it as ``_E``)."""

    pieces = ()
    parallel = False

    def __init__(self, source, entry, params, sizes, consts, out_avals, jaxpr, host_eqns):
        self.source, self.entry, self.params, self.sizes = source, entry, params, sizes
        self.consts, self.out_avals, self.jaxpr, self.host_eqns = \
            consts, out_avals, jaxpr, host_eqns

    def __repr__(self):
        return f"CudaProgram({self.entry}, {len(self.params)} params, {len(self.source)} chars)"


class _Module:
    """What the planner and the CPU emitter's helpers expect of a module, plus the
    kernels, the host functions and the host-called equations of this program."""

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

    slot = _cpu._Module.slot
    global_const = _cpu._Module.global_const

    def host_eqn(self, e):
        self.host_eqns.append(e)
        self.host_prims.add(e.primitive.name)
        return len(self.host_eqns) - 1

    def type_name(self, dt):
        n = _nb_type(dt)
        self.types.add(n)
        return f"_T_{n}"

    def kernel(self, text):
        """Register a kernel (``def «K»(...)``); equal kernels are one."""
        got = self.kernel_names.get(text)
        if got is None:
            got = self.kernel_names[text] = f"_k{len(self.kernel_names)}"
            self.kernels.append(text.replace("«K»", got, 1))
        return got

    def sub_function(self, jaxpr, hint):
        self.n_sub += 1
        fb = _CudaFn(self, jaxpr, f"_{hint}{self.n_sub}", top=False)
        fb.build()
        return fb

    def source(self):
        from .cuda_runtime import TPB
        from .cuda_math import SIMULATOR
        deco = "@cuda.jit" if SIMULATOR else "@cuda.jit(cache=True)"
        head = ["# Generated by autodiff.jit (backends/numba_cuda.py): CUDA kernels (one per",
                "# loop nest of the plan) and the host functions that launch them. Each",
                "# statement is preceded by the jaxpr equation it computes.",
                "import numpy as np",
                "from numba import cuda",
                "from autodiff.backends import cuda_math as _dm",
                "from autodiff.backends.cuda_math import HOST as _hc",
                "from autodiff.backends import cuda_runtime as _rt",
                "from autodiff.backends.cuda_runtime import HM as _hm, slot_i64, slot_f64",
                "",
                f"_TPB = {TPB}"]
        head += [f"_T_{n} = cuda.{n}" for n in sorted(self.types)]
        head += self.const_lines
        body = []
        for k in self.kernels:
            body += ["", "", deco, k.replace("«M»", "_dm").replace("«C»", "_dm")]
        for f in self.functions:
            body += ["", "", f.replace("«M»", "_hm").replace("«C»", "_hc")
                     .replace("«SZ0»", "_sz, _E")
                     .replace("«SZ»", ", _sz, _E")]
        return "\n".join(head + body) + "\n"


# names a kernel reads that are not its parameters: the module's imports and the builtins the
# expressions use. ``complex`` (the ``complex`` primitive, complex literals) must be here: a
# builtin class left out became a kernel *argument*, which the simulator accepts and the real
# compiler refuses ("Cannot determine Numba type of <class 'type'>": issue 32)
_GLOBALS = {"cuda", "np", "_dm", "_hc", "_rt", "_hm", "_TPB", "range", "len", "abs", "min", "max",
            "complex", "True", "False", "slot_i64", "slot_f64"}


def _free_names(text, consts):
    """Names a kernel body reads that it does not define: its parameters, in order."""
    tree = ast.parse("def _f():\n" + text.replace("«M»", "_dm").replace("«C»", "_dm"))
    defined, order = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            else:
                order.setdefault(node.id, (node.lineno, node.col_offset))
    skip = _GLOBALS | set(consts) | defined
    return [n for n in sorted(order, key=order.get)
            if n not in skip and not n.startswith("_T_")]


class _CudaFn(_Fn):
    """One host function (the program, or a control-flow body) and its kernels."""

    # ------------------------------------------------------------------ planner hooks
    def tiny(self, v):
        # no values in scalar variables: on a GPU a tiny array is a buffer like any other
        # (host scalars would mean a copy back for every element a kernel computes)
        return 0

    def plan_reduce(self, e):
        super().plan_reduce(e)
        o = e.outvars[0]
        if not o.aval.shape:     # a 1-element device array, read where the host needs it
            loc = self.loc[o]
            self.loc[o] = ("scalar", loc[1], f"{self.aname(o)}[0]")

    def code_size(self, e):
        low = LOWERINGS[e.primitive.name]
        return low.code_size or (2 if low.cost > 1 else 1)

    def cast(self, expr, dtype):
        if np.dtype(dtype) == np.bool_:
            return f"({expr} != 0)"
        return f"{_dt(dtype)}({expr})"

    def ew_expr(self, e, args, idx):
        o = e.outvars[0]
        ctx = _EwCtx(self, e.params, o.aval.dtype, [u.aval.dtype for u in e.invars], idx)
        name = e.primitive.name
        if ctx.out_dtype.kind == "c" or any(d.kind == "c" for d in ctx.in_dtypes):
            expr = CUDA_EW_COMPLEX[name](ctx, args)     # _check_complex: it is there
        else:
            expr = CUDA_EW[name](ctx, args)
        dt = o.aval.dtype
        if not (dt == np.float64 or name == "convert_element_type"
                or (dt == np.bool_ and LOWERINGS[name].bool_native)):
            expr = self.cast(expr, dt)
        return expr

    def reshape_lines(self, e, ref):
        return [self.eqn_comment(e),
                f"{self.aname(e.outvars[0])} = {ref[2]}.reshape({self.shape(e.outvars[0])})"]

    def materialize_lines(self, v, name, els):
        return [f"{name} = _rt.to_device(np.array([{', '.join(els)}], {_dt(v.aval.dtype)})"
                f".reshape({self.shape(v)}))"]

    def reduce_group_lines(self, kind, acc, xs, dt_in, dt_out):
        acc_dt = _acc_dtype(kind, dt_in)
        lines = [f"{acc} = {self.lit(_init_value(kind, acc_dt), acc_dt)}"]
        for x in xs:
            xv = x if (acc_dt == dt_in or kind in ("max", "min")) else self.cast(x, acc_dt)
            lines.append(f"{acc} = {_combine(kind, acc, xv, acc_dt)}")
        if acc_dt != dt_out:
            lines.append(f"{acc} = {self.cast(acc, dt_out)}")
        return lines

    def opaque_lines(self, e, refs, outs):
        lines = [self.eqn_comment(e)]
        rule = CUDA_OPAQUE.get(e.primitive.name, _op_host)
        rule(_OpCtx(self, e, refs, outs, lines))
        return lines

    # ------------------------------------------------------------------ kernels
    def alloc(self, name, v, dtype=None):
        shape = self.shape(v) if v.aval.shape else "(1,)"
        return f"{name} = _rt.empty({shape}, {_dt(dtype or v.aval.dtype)})"

    def strategy(self, c, reds):
        """How a nest with reductions runs (see the module docstring)."""
        if not reds:
            return "map"
        R = set().union(*[set(ax) for _, ax in reds])
        if not R or any(set(ax) != R for _, ax in reds):
            return "serial"
        P = [k for k in range(len(c.domain)) if k not in R]
        nr = 1
        for k in R:
            nr *= self.D.value[c.domain[k]]
        if not P:
            return "grid"
        npar = 1
        for k in P:
            npar *= self.D.value[c.domain[k]]
        if max(P) > max(R) and npar >= 4 * _rt().TPB:
            # the innermost axis is kept (a column sum, a bias gradient over the batch):
            # a thread per kept element reads consecutive addresses across a warp, where a
            # block per element would read one column with strided loads
            return "serial"
        return "block" if nr >= _rt().TPB else "serial"

    def red_axes(self, e):
        """The reduced axes of reduction ``e`` as positions of its loop nest's indices."""
        pos, loop_pos = 0, {}
        for a, cl in enumerate(self.domain(e.invars[0])):
            if not self.is_unit(cl):
                loop_pos[a] = pos
                pos += 1
        return tuple(sorted(loop_pos[a] for a in e.params["axes"] if a in loop_pos))

    def emit_cluster(self, c, out):
        """A loop nest as kernel launches. Reductions over different axis sets in one nest
        (a bias gradient summed over the batch next to a loss summed over everything) are
        one kernel per axis set, each recomputing the nest's elementwise values (cheap
        next to a reduction); the first also stores the values other nests read."""
        groups = []
        for m in c.members:
            if m[0] == "reduce" and self.red_axes(m[1]) not in groups:
                groups.append(self.red_axes(m[1]))
        if len(groups) <= 1:
            self._emit_part(c, c.members, True, out)
            return
        for gi, g in enumerate(groups):
            part = [m for m in c.members if m[0] in ("ew", "identity")
                    or (m[0] == "copy" and gi == 0)
                    or (m[0] == "reduce" and self.red_axes(m[1]) == g)]
            self._emit_part(c, part, gi == 0, out)

    def _emit_part(self, c, members, stores, out):
        dom = c.domain
        r = len(dom)
        sizes = [self.size(cl) for cl in dom]
        idx = [f"i{k}" for k in range(r)]
        host, body = [], []
        reds = [(m[1], list(self.red_axes(m[1]))) for m in members if m[0] == "reduce"]
        strat = self.strategy(c, reds)
        R = sorted(set().union(*[set(ax) for _, ax in reds])) if reds else []
        P = [k for k in range(r) if k not in R]
        red_info = []
        for kind, *rest in members:
            if kind in ("ew", "identity"):
                e = rest[0]
                o = e.outvars[0]
                body.append(self.eqn_comment(e))
                args = [self.read(u, c, idx) for u in e.invars]
                full = self.vidx(o, idx)
                expr = args[0] if kind == "identity" else self.ew_expr(e, args, full)
                body.append(f"{self.sname(o)} = {expr}")
                if o in c.stored and stores:
                    host.append(self.alloc(self.aname(o), o))
                    body.append(f"{self.aname(o)}[{', '.join(full) or '0'}] = {self.sname(o)}")
                if o in c.stored_as and stores:
                    name, view, perm = c.stored_as[o]
                    host.append(self.alloc(name, view))
                    vix = ["0" if b is None else full[b] for b in perm]
                    body.append(f"{name}[{', '.join(vix) or '0'}] = {self.sname(o)}")
            elif kind == "copy":
                v, name = rest
                host.append(self.alloc(name, v))
                body.append(f"{name}[{', '.join(self.vidx(v, idx)) or '0'}] = "
                            f"{self.read(v, c, idx)}  # copy {self.sname(v)}")
            else:
                e = rest[0]
                axes = next(ax for ee, ax in reds if ee is e)
                red_info.append(self._reduce_body(e, axes, c, idx, R, strat, host, body))
        kname, args = self._kernel(strat, sizes, idx, P, R, body, red_info)
        np_txt = " * ".join(sizes[k] for k in P) or "1"
        nr_txt = " * ".join(sizes[k] for k in R) or "1"
        out.append(f"# ---- loop nest over {self.shape_of_names(sizes) if r else 'a scalar'}: "
                   f"{sum(1 for m in members if m[0] != 'copy')} fused equation(s), "
                   f"{strat} kernel")
        out.extend(host)
        call = ", ".join(args)
        if strat == "block":
            out.append(f"{kname}[_rt.row_blocks({np_txt}), _TPB]({call})")
        elif strat == "grid":
            nb = self.tmp("nb")
            out.append(f"{nb} = _rt.blocks({nr_txt})")
            for ri in red_info:
                out.append(f"{ri['part']} = _rt.empty(({nb},), {_dt(ri['acc_dt'])})")
            out.append(f"{kname}[{nb}, _TPB]({call})")
            for ri in red_info:
                fin = self._finalize(ri)
                tgt = ri["out"] if ri["o"].aval.shape == () else f"{ri['out']}.reshape((1,))"
                out.append(f"{fin}[1, _TPB]({ri['part']}, {tgt}, {nb})")
        else:
            total = np_txt if strat == "serial" else (" * ".join(sizes) or "1")
            out.append(f"{kname}[_rt.blocks({total}), _TPB]({call})")

    def _reduce_body(self, e, axes, c, idx, R, strat, host, body):
        u, o = e.invars[0], e.outvars[0]
        kind = _red_kind(e)
        dt_in, dt_out = u.aval.dtype, o.aval.dtype
        acc_dt = _acc_dtype(kind, dt_in)
        x = self.read(u, c, idx)
        body.append(self.eqn_comment(e))
        xn = self.tmp("x")
        if kind in ("and", "or") and dt_in != np.bool_:
            body.append(f"{xn} = ({x} != 0)")
        elif kind in ("sum", "prod") and acc_dt != dt_in:
            body.append(f"{xn} = {self.cast(x, acc_dt)}")
        else:
            body.append(f"{xn} = {x}")
        out_name = self.aname(o)
        kept = [k for k in range(len(idx)) if k not in axes]
        oidx = ", ".join(self.vidx(o, [idx[k] for k in kept])) or "0"
        info = dict(e=e, o=o, kind=kind, acc_dt=acc_dt, dt_out=dt_out, out=out_name,
                    init=self.lit(_init_value(kind, acc_dt), acc_dt), oidx=oidx,
                    partial=sorted(set(R) - set(axes)), kept=kept)
        if strat == "serial" and info["partial"]:
            # reduced over some of the serial axes only: accumulate in the output (or an
            # accumulator array of the accumulation dtype) indexed by the kept axes
            acc = out_name if acc_dt == dt_out else f"{out_name}_ACC"
            host.append(self.alloc(out_name, o))
            if acc != out_name:
                host.append(self.alloc(acc, o, acc_dt))
            info["acc_arr"] = acc
            body.append(f"{acc}[{oidx}] = {_combine(kind, f'{acc}[{oidx}]', xn, acc_dt)}")
        else:
            a = self.tmp("acc")
            info["acc"] = a
            host.append(self.alloc(out_name, o))
            if kind == "sum" or kind == "prod":
                body.append(f"{a} {'+' if kind == 'sum' else '*'}= {xn}")
            else:
                body.append(f"{a} = {_combine(kind, a, xn, acc_dt)}")
            if strat == "grid":
                info["part"] = f"{out_name}_PART"
        return info

    def _unravel(self, flat, pos, sizes, idx):
        if not pos:
            return []
        if len(pos) == 1:
            return [f"{idx[pos[0]]} = {flat}"]
        lines = [f"_q = {flat}"]
        for k in reversed(pos[1:]):
            lines += [f"{idx[k]} = _q % {sizes[k]}", f"_q = _q // {sizes[k]}"]
        lines.append(f"{idx[pos[0]]} = _q")
        return lines

    def _tree(self, infos, ind):
        """Shared-memory tree reduction of every accumulator of a block."""
        pad = "    " * ind
        lines = [pad + f"{ri['sh']}[_tx] = {ri['acc']}" for ri in infos]
        lines += [pad + "cuda.syncthreads()", pad + "_s = _TPB // 2", pad + "while _s > 0:",
                  pad + "    if _tx < _s:"]
        for ri in infos:
            sh = ri["sh"]
            lines.append(pad + "        " + f"{sh}[_tx] = "
                         + _combine(ri["kind"], f"{sh}[_tx]", f"{sh}[_tx + _s]", ri["acc_dt"]))
        lines += [pad + "    cuda.syncthreads()", pad + "    _s //= 2"]
        return lines

    def _kernel(self, strat, sizes, idx, P, R, body, reds):
        """The kernel text of one nest; returns its name and parameters."""
        r = len(idx)
        ln = []
        ind = lambda k, s: "    " * k + s   # noqa: E731
        fin = lambda ri, v: v if ri["acc_dt"] == ri["dt_out"] else self.cast(v, ri["dt_out"])  # noqa: E731
        if strat == "map":
            if r == 0:
                ln.append(ind(1, "if cuda.grid(1) == 0:"))
                ln += [ind(2, s) for s in body]
            else:
                total = " * ".join(sizes)
                ln.append(ind(1, f"for _f in range(cuda.grid(1), {total}, cuda.gridsize(1)):"))
                ln += [ind(2, s) for s in self._unravel("_f", list(range(r)), sizes, idx)]
                ln += [ind(2, s) for s in body]
        elif strat == "serial":
            total = " * ".join(sizes[k] for k in P) or "1"
            ln.append(ind(1, f"for _f in range(cuda.grid(1), {total}, cuda.gridsize(1)):"))
            ln += [ind(2, s) for s in self._unravel("_f", P, sizes, idx)]
            for ri in reds:
                if "acc" in ri:
                    ln.append(ind(2, f"{ri['acc']} = {ri['init']}"))
                else:
                    d = 2
                    for k in ri["partial"]:
                        ln.append(ind(d, f"for {idx[k]} in range({sizes[k]}):"))
                        d += 1
                    ln.append(ind(d, f"{ri['acc_arr']}[{ri['oidx']}] = {ri['init']}"))
            d = 2
            for k in R:
                ln.append(ind(d, f"for {idx[k]} in range({sizes[k]}):"))
                d += 1
            ln += [ind(d, s) for s in body]
            for ri in reds:
                if "acc" in ri:
                    ln.append(ind(2, f"{ri['out']}[{ri['oidx']}] = {fin(ri, ri['acc'])}"))
                elif ri["acc_arr"] != ri["out"]:
                    d = 2
                    for k in ri["partial"]:
                        ln.append(ind(d, f"for {idx[k]} in range({sizes[k]}):"))
                        d += 1
                    ln.append(ind(d, f"{ri['out']}[{ri['oidx']}] = "
                                     f"{fin(ri, ri['acc_arr'] + '[' + ri['oidx'] + ']')}"))
        else:
            for ri in reds:
                ri["sh"] = self.tmp("sh")
                ln.append(ind(1, f"{ri['sh']} = cuda.shared.array(_TPB, "
                                 f"{self.mod.type_name(ri['acc_dt'])})"))
            ln.append(ind(1, "_tx = cuda.threadIdx.x"))
            nr = " * ".join(sizes[k] for k in R) or "1"
            if strat == "block":
                npt = " * ".join(sizes[k] for k in P)
                ln.append(ind(1, f"for _p in range(cuda.blockIdx.x, {npt}, cuda.gridDim.x):"))
                ln += [ind(2, s) for s in self._unravel("_p", P, sizes, idx)]
                ln += [ind(2, f"{ri['acc']} = {ri['init']}") for ri in reds]
                ln.append(ind(2, f"for _r in range(_tx, {nr}, _TPB):"))
                ln += [ind(3, s) for s in self._unravel("_r", R, sizes, idx)]
                ln += [ind(3, s) for s in body]
                ln += self._tree(reds, 2)
                ln.append(ind(2, "if _tx == 0:"))
                ln += [ind(3, f"{ri['out']}[{ri['oidx']}] = {fin(ri, ri['sh'] + '[0]')}")
                       for ri in reds]
                ln.append(ind(2, "cuda.syncthreads()"))
            else:   # grid
                ln += [ind(1, f"{ri['acc']} = {ri['init']}") for ri in reds]
                ln.append(ind(1, f"for _r in range(cuda.grid(1), {nr}, cuda.gridsize(1)):"))
                ln += [ind(2, s) for s in self._unravel("_r", R, sizes, idx)]
                ln += [ind(2, s) for s in body]
                ln += self._tree(reds, 1)
                ln.append(ind(1, "if _tx == 0:"))
                ln += [ind(2, f"{ri['part']}[cuda.blockIdx.x] = {ri['sh']}[0]") for ri in reds]
        params = _free_names("\n".join(ln), self.mod.consts.values())
        text = "\n".join([f"def «K»({', '.join(params)}):"] + ln)
        return self.mod.kernel(text), params

    def _finalize(self, ri):
        """The one-block pass combining the blocks' partial results of a grid reduction."""
        kind, acc_dt = ri["kind"], ri["acc_dt"]
        val = "_sh[0]" if acc_dt == ri["dt_out"] else self.cast("_sh[0]", ri["dt_out"])
        ln = ["def «K»(_P, _O, _nb):",
              f"    _sh = cuda.shared.array(_TPB, {self.mod.type_name(acc_dt)})",
              "    _tx = cuda.threadIdx.x",
              f"    _a = {ri['init']}",
              "    for _i in range(_tx, _nb, _TPB):",
              f"        _a = {_combine(kind, '_a', '_P[_i]', acc_dt)}"]
        ln += self._tree([dict(ri, sh="_sh", acc="_a")], 1)
        ln += ["    if _tx == 0:", f"        _O[0] = {val}"]
        return self.mod.kernel("\n".join(ln))

    # ------------------------------------------------------------------ the host function
    def build(self):
        j = self.jaxpr
        self.check_dtypes("cuda")
        _check_complex(j)
        self.analyse()
        self.plan()
        rets, seen = [], set()
        for v in j.outvars:
            if isinstance(v, Literal):
                rets.append(self.cast(self.jlit(v), v.aval.dtype))
                continue
            if not v.aval.shape:
                expr = self.base_ref(v)[2]
                m = re.fullmatch(r"([A-Z_][A-Z0-9_]*)\[0\]", expr)
                if self.top and m is not None:
                    rets.append(m.group(1))           # the 1-element device array itself
                else:
                    rets.append(self.cast(expr, v.aval.dtype))
                continue
            ref = self.ensure(v)
            name = ref[2]
            if self.top and (ref[3] or name in seen):
                name = f"_rt.dcopy({name})"           # never hand back an alias of an input
            seen.add(ref[2])
            rets.append(name)
        lines = list(self.entry_stmts)
        for c in self.stages:
            self.emit_cluster(c, lines)
            lines.extend(c.post)
        params = [self.aname(v) if v.aval.shape else self.sname(v)
                  for v in list(j.constvars) + list(j.invars)]
        size_reads = [f"n{k} = slot_i64(_sz, {k})" for k in sorted(set(self.slots_used))
                      if f"n{k}" in self.used_size_names()]
        size_reads += self.lit_reads
        ret = f"return ({', '.join(rets)}{',' if len(rets) == 1 else ''})"
        body = _free_at_last_use(size_reads + lines,
                                 set(params) | set(_ARRAY_NAME.findall(ret)))
        self.text = "\n".join([f"def {self.name}({', '.join(params)}«SZ»):"]
                              + ["    " + s for s in body + [ret]])
        self.text = self.text.replace("(«SZ»", "(«SZ0»")
        self.params = params
        if not self.top:
            same = self.text.replace(f"def {self.name}(", "def «F»(", 1)
            got = self.mod.sub_texts.get(same)
            if got is not None:
                self.name = got
                return
            self.mod.sub_texts[same] = self.name
        self.mod.functions.append(self.text)


_ARRAY_NAME = re.compile(r"(?<![\w.])([A-Z_][A-Z0-9_]*)(?![\w(])")


def _free_at_last_use(lines, params):
    """The host statements with ``del NAME`` after the top-level statement that last
    reads each device buffer the function allocated (array names are upper case), so its
    memory goes back to numba-cuda's allocator as soon as the program is done with it.
    Buffers the function returns are never deleted (the return reads them)."""
    blocks = []                       # [start, end) of each top-level statement
    for i, s in enumerate(lines):
        if not s.startswith(" ") and not s.startswith("#"):
            blocks.append([i, i + 1])
        elif blocks:
            blocks[-1][1] = i + 1
        else:
            blocks.append([i, i + 1])
    last, made = {}, set()
    for b, (lo, hi) in enumerate(blocks):
        for s in lines[lo:hi]:
            code = s.split("#", 1)[0]
            m = re.match(r"\s*([A-Z_][A-Z0-9_]*(?:\s*,\s*[A-Z_a-z][A-Za-z0-9_]*)*)\s*,?\s*=(?!=)",
                         code)
            if m and not s.startswith(" "):
                for n in re.split(r"\s*,\s*", m.group(1)):
                    if _ARRAY_NAME.fullmatch(n):
                        made.add(n)
            for n in _ARRAY_NAME.findall(code):
                last[n] = b
    out = []
    for b, (lo, hi) in enumerate(blocks):
        out.extend(lines[lo:hi])
        dead = sorted(n for n in made if last.get(n) == b and n not in params
                      and not n.startswith("_"))
        if dead:
            out.append("del " + ", ".join(dead))
    return out


# =====================================================================================
# Opaque rules
# =====================================================================================

def _op_host(ctx, fn="host_call"):
    """Any opaque equation: its numpy rule on the host, operands copied there and back."""
    k = ctx.fb.mod.host_eqn(ctx.e)
    args = [r[2] for r in ctx.ins]
    tup = "(" + ", ".join(args) + ("," if len(args) == 1 else "") + ")"
    outs = [n for _, n in ctx.outs]
    call = f"_rt.{fn}(_E[{k}], {tup})"
    if outs:
        ctx.emit(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}")
    else:
        ctx.emit(call)


def _op_linalg(ctx):
    _op_host(ctx, "linalg")


def _op_dot_general(ctx):
    x, y, o = ctx.invar(0), ctx.invar(1), ctx.outvar(0)
    dt = o.aval.dtype
    xr, yr = len(x.aval.shape), len(y.aval.shape)
    if dt == np.bool_ or xr == 0 or yr == 0 or x.aval.dtype != y.aval.dtype:
        _op_host(ctx)
        return
    (xc, yc), (xb, yb) = ctx.p["dimension_numbers"]
    xf = [i for i in range(xr) if i not in xc and i not in xb]
    yf = [i for i in range(yr) if i not in yc and i not in yb]
    dx, dy = ctx.dims_in(0), ctx.dims_in(1)
    B = ctx.prod([dx[i] for i in xb])
    M = ctx.prod([dx[i] for i in xf])
    K = ctx.prod([dx[i] for i in xc])
    N = ctx.prod([dy[i] for i in yf])
    fb = ctx.fb

    def operand(name, order_mk, order_km, rank, first, second):
        if order_mk == list(range(rank)):
            return f"{name}.reshape(({B}, {first}, {second}))", False
        if order_km == list(range(rank)):
            return f"{name}.reshape(({B}, {second}, {first}))", True
        t = fb.tmp("perm")
        ctx.emit(f"{t} = _rt.permute({name}, {tuple(order_mk)})")
        return f"{t}.reshape(({B}, {first}, {second}))", False

    xa, xt = operand(ctx.arr(0), list(xb) + xf + list(xc), list(xb) + list(xc) + xf, xr, M, K)
    ya, yt = operand(ctx.arr(1), list(yb) + list(yc) + yf, list(yb) + yf + list(yc), yr, K, N)
    kind, name = ctx.outs[0]
    if kind == "array":
        ctx.emit(f"{name} = _rt.empty({ctx.shape_out(0)}, {_dt(dt)})")
        target = name
    else:                                     # a rank-0 result: through a 1-element buffer
        target = fb.tmp("dot")
        ctx.emit(f"{target} = _rt.empty((1,), {_dt(dt)})")
    ctx.emit(f"_rt.matmul({xa}, {ya}, {target}.reshape(({B}, {M}, {N})), {xt}, {yt})")
    if kind != "array":
        ctx.emit(f"{name} = _rt.to_host_scalar({target})")


def _op_scan(ctx):
    """A host loop over the body's host function; carry and stacked outputs stay on the
    device (rank-0 per-step values are gathered on the host and copied once)."""
    p = ctx.p
    nconst, ncarry = p["num_consts"], p["num_carry"]
    fn = ctx.fb.mod.sub_function(_cpu._sub_jaxpr(p["jaxpr"]), "scan")
    refs = ctx.ins
    consts = [r[2] for r in refs[:nconst]]
    outs = ctx.outs
    carry = [n for _, n in outs[:ncarry]]
    ys = outs[ncarry:]
    for name, ref, v in zip(carry, refs[nconst:nconst + ncarry],
                            ctx.e.invars[nconst:nconst + ncarry]):
        ctx.emit(f"{name} = {_cpu._carry_init(ctx, ref, v.aval)}")
    length = ctx.fb.size_param(p["length"])
    xargs = []
    for r, v in zip(refs[nconst + ncarry:], ctx.e.invars[nconst + ncarry:]):
        if len(v.aval.shape) == 1:            # a scalar per step: read from one host copy
            h = ctx.fb.tmp("xh")
            ctx.emit(f"{h} = _rt.host_view({r[2]})")
            xargs.append(h)
        else:
            xargs.append(r[2])
    stacks = []
    for i, (kind, name) in enumerate(ys):
        v = ctx.e.outvars[ncarry + i]
        if len(v.aval.shape) == 1:
            h = ctx.fb.tmp("yh")
            ctx.emit(f"{h} = np.empty({ctx.shape_out(ncarry + i)}, {_dt(v.aval.dtype)})")
            stacks.append((name, h, v))
        else:
            ctx.emit(f"{name} = _rt.empty({ctx.shape_out(ncarry + i)}, {_dt(v.aval.dtype)})")
            stacks.append((name, None, v))
    t, tt = ctx.fb.tmp("t"), ctx.fb.tmp("tt")
    ytmp = [ctx.fb.tmp("y") for _ in ys]
    tgt = carry + ytmp
    with ctx.block(f"for {tt} in range({length}):"):
        ctx.emit(f"{t} = {length} - 1 - {tt}" if p["reverse"] else f"{t} = {tt}")
        call = _cpu._call(fn, consts + carry + [f"{x}[{t}]" for x in xargs])
        if tgt:
            ctx.emit(f"{', '.join(tgt)}{',' if len(tgt) == 1 else ''} = {call}")
        else:
            ctx.emit(call)
        for (name, h, v), y in zip(stacks, ytmp):
            ctx.emit(f"{h}[{t}] = {y}" if h is not None else f"_rt.set_row({name}, {t}, {y})")
    for name, h, v in stacks:
        if h is not None:
            ctx.emit(f"{name} = _rt.to_device({h})")


# ---------------------------------------------------------------------- data movement
# One thread per output element (grid-stride), index arithmetic as the CPU rules'.

_ATOMIC_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.uint32,
                                        np.uint64)}


def _map_kernel(ctx, dims, make_body):
    """Emit a kernel over ``dims`` (size texts) whose body ``make_body(index names)``
    returns, and its launch; parameters are the body's free names."""
    fb = ctx.fb
    r = len(dims)
    I = [f"j{k}" for k in range(r)]
    body = make_body(I)
    total = " * ".join(dims) if dims else "1"
    if r == 0:
        ln = ["    if cuda.grid(1) == 0:"] + ["        " + b for b in body]
    else:
        ln = [f"    for _f in range(cuda.grid(1), {total}, cuda.gridsize(1)):"]
        ln += ["        " + b for b in fb._unravel("_f", list(range(r)), dims, I)]
        ln += ["        " + b for b in body]
    params = _free_names("\n".join(ln), fb.mod.consts.values())
    name = fb.mod.kernel("\n".join([f"def «K»({', '.join(params)}):"] + ln))
    ctx.emit(f"{name}[_rt.blocks({total}), _TPB]({', '.join(params)})")


def _all_arrays(ctx, ins=None):
    ins = range(len(ctx.ins)) if ins is None else ins
    return all(ctx.ins[i][0] == "array" for i in ins) and all(k == "array" for k, _ in ctx.outs)


def _alloc_out(ctx, i=0, init=None):
    v = ctx.outvar(i)
    if init is not None:
        ctx.emit(f"{ctx.out(i)} = _rt.dcopy({init})")
    else:
        ctx.emit(f"{ctx.out(i)} = _rt.empty({ctx.shape_out(i)}, {_dt(v.aval.dtype)})")


def _op_pad(ctx):
    if not _all_arrays(ctx, [0]):
        return _op_host(ctx)
    cfg = ctx.p["padding_config"]
    xd = ctx.dims_in(0)
    los = [ctx.fb.size_param(lo) for lo, hi, it in cfg]
    its = [ctx.fb.size_param(it) for lo, hi, it in cfg]
    X, O, pv = ctx.arr(0), ctx.out(0), ctx.rd(1, [])
    _alloc_out(ctx)

    def body(I):
        lines, src = ["_ok = True"], []
        for k, (i, lo, it) in enumerate(zip(I, los, its)):
            lines.append(f"_p{k} = {i} - ({lo})")
            lines.append(f"_ok = _ok and _p{k} >= 0 and _p{k} % ({it} + 1) == 0 "
                         f"and _p{k} // ({it} + 1) < {xd[k]}")
            src.append(f"_p{k} // ({it} + 1)")
        return lines + ["if _ok:", f"    {O}[{', '.join(I)}] = {X}[{', '.join(src)}]",
                        "else:", f"    {O}[{', '.join(I)}] = {pv}"]
    _map_kernel(ctx, ctx.dims_out(0), body)


def _op_concatenate(ctx):
    if not _all_arrays(ctx):
        return _op_host(ctx)
    ax = ctx.p["dimension"]
    O = ctx.out(0)
    _alloc_out(ctx)
    offs, acc = [], "0"
    for i in range(len(ctx.ins)):
        offs.append(acc)
        acc = f"{acc} + {ctx.dims_in(i)[ax]}" if acc != "0" else ctx.dims_in(i)[ax]

    def body(I):
        lines = []
        for i in range(len(ctx.ins)):
            J = list(I)
            J[ax] = f"{I[ax]} - ({offs[i]})"
            last = i == len(ctx.ins) - 1
            hi = offs[i + 1] if not last else None
            head = "else:" if last and i else ("if True:" if last else
                                               f"{'if' if i == 0 else 'elif'} {I[ax]} < {hi}:")
            lines += [head, f"    {O}[{', '.join(I)}] = {ctx.arr(i)}[{', '.join(J)}]"]
        return lines
    _map_kernel(ctx, ctx.dims_out(0), body)


def _op_dynamic_slice(ctx):
    if not _all_arrays(ctx, [0]) or not ctx.invar(0).aval.shape:
        return _op_host(ctx)
    r = len(ctx.invar(0).aval.shape)
    st = _cpu._clamped_starts(ctx, [ctx.rd(1 + i, []) for i in range(r)], ctx.dims_in(0),
                              ctx.dims_out(0))
    X, O = ctx.arr(0), ctx.out(0)
    _alloc_out(ctx)
    _map_kernel(ctx, ctx.dims_out(0), lambda I: [
        f"{O}[{', '.join(I)}] = {X}[{', '.join(f'{s} + {i}' for s, i in zip(st, I))}]"])


def _op_dynamic_update_slice(ctx):
    if not _all_arrays(ctx, [0, 1]) or not ctx.invar(0).aval.shape:
        return _op_host(ctx)
    r = len(ctx.invar(0).aval.shape)
    st = _cpu._clamped_starts(ctx, [ctx.rd(2 + i, []) for i in range(r)], ctx.dims_in(0),
                              ctx.dims_in(1))
    U, O = ctx.arr(1), ctx.out(0)
    _alloc_out(ctx, init=ctx.arr(0))
    _map_kernel(ctx, ctx.dims_in(1), lambda I: [
        f"{O}[{', '.join(f'{s} + {i}' for s, i in zip(st, I))}] = {U}[{', '.join(I)}]"])


def _clip_lines(names, reads, sizes):
    """The interpreter's gather/scatter index rule (numba_runtime.clip_index): clip to
    [-n, n-1], then wrap negatives."""
    lines = []
    for t, rd, n in zip(names, reads, sizes):
        lines += [f"{t} = {rd}", f"if {t} < -{n}:", f"    {t} = -{n}", f"if {t} > {n} - 1:",
                  f"    {t} = {n} - 1", f"if {t} < 0:", f"    {t} += {n}"]
    return lines


def _gather_parts(ctx):
    idx = ctx.invar(1)
    k = idx.aval.shape[-1]
    xd, idd = ctx.dims_in(0), ctx.dims_in(1)
    return k, xd, idd[:-1], xd[k:], " and ".join(f"{s} > 0" for s in xd[:k]) or "True"


def _emit_gather(ctx, k, lead, reads):
    """A thread per output element of a gather over the k leading axes of operand 0;
    ``reads(L)`` gives the k index expressions at lead position ``L``."""
    xd = ctx.dims_in(0)
    X, O = ctx.arr(0), ctx.out(0)
    _alloc_out(ctx)

    def body(I):
        L, R = I[:len(lead)], I[len(lead):]
        t = [f"_g{a}" for a in range(k)]
        return _clip_lines(t, reads(L), xd[:k]) + [
            f"{O}[{', '.join(I)}] = {X}[{', '.join(t + R)}]"]
    nonempty = " and ".join(f"{s} > 0" for s in xd[:k]) or "True"
    with ctx.block(f"if {nonempty}:"):
        _map_kernel(ctx, lead + xd[k:], body)
    with ctx.block("else:"):
        ctx.emit(f"{O} = _rt.zeros({ctx.shape_out(0)}, {_dt(ctx.outvar(0).aval.dtype)})")


def _op_gather(ctx):
    # the indices stacked on the last axis of operand 1
    if not _all_arrays(ctx):
        return _op_host(ctx)
    k, _, lead, _, _ = _gather_parts(ctx)
    IX = ctx.arr(1)
    _emit_gather(ctx, k, lead,
                 lambda L: [f"{IX}[{', '.join(L + [str(a)])}]" for a in range(k)])


def _op_index_gather(ctx):
    # the k indices read from operands 1..k, of the result's lead shape
    if not _all_arrays(ctx):
        return _op_host(ctx)
    k = len(ctx.ins) - 1
    _emit_gather(ctx, k, ctx.dims_in(1),
                 lambda L: [f"{ctx.arr(1 + a)}[{', '.join(L)}]" for a in range(k)])


def _op_scatter(add):
    def rule(ctx):
        if not _all_arrays(ctx) or (add and ctx.outvar(0).aval.dtype not in _ATOMIC_DTYPES):
            return _op_host(ctx)
        k, xd, lead, trail, nonempty = _gather_parts(ctx)
        IX, U, O = ctx.arr(1), ctx.arr(2), ctx.out(0)
        _alloc_out(ctx, init=ctx.arr(0))
        t = [f"_g{a}" for a in range(k)]

        def rd(L):
            return [f"{IX}[{', '.join(L + [str(a)])}]" for a in range(k)]
        if add:
            # every (index row, element) its own thread; collisions add atomically
            def body(I):
                L, R = I[:len(lead)], I[len(lead):]
                tgt = t + R
                ix = tgt[0] if len(tgt) == 1 else "(" + ", ".join(tgt) + ")"
                return _clip_lines(t, rd(L), xd[:k]) + [
                    f"cuda.atomic.add({O}, {ix}, {U}[{', '.join(I)}])"]
            dims = lead + trail
        else:
            # a thread per element of the trailing axes walks the index rows in order, so
            # the last of several writes to one place wins, as in numpy
            def body(R):
                L = [f"_l{a}" for a in range(len(lead))]
                lines = [f"for _l in range({' * '.join(lead) or '1'}):"]
                lines += ["    " + b for b in ctx.fb._unravel("_l", list(range(len(lead))),
                                                             lead, L)]
                lines += ["    " + b for b in _clip_lines(t, rd(L), xd[:k])]
                lines.append(f"    {O}[{', '.join(t + R)}] = {U}[{', '.join(L + R)}]")
                return lines
            dims = trail
        with ctx.block(f"if {nonempty}:"):
            _map_kernel(ctx, dims, body)
    return rule


def _lane(I, axis, k):
    J = list(I)
    J.insert(axis, k)
    return ", ".join(J)


def _op_cumulative(kind):
    def rule(ctx):
        x = ctx.invar(0)
        if not x.aval.shape or not _all_arrays(ctx):
            return _op_host(ctx)
        axis, reverse = ctx.p["axis"], ctx.p["reverse"]
        d = ctx.dims_in(0)
        kept = [n for a, n in enumerate(d) if a != axis]
        dt = x.aval.dtype
        X, O = ctx.arr(0), ctx.out(0)
        _alloc_out(ctx)

        def body(I):
            # one thread per lane walks it in order (a scan along one axis)
            rng = f"range({d[axis]} - 1, -1, -1)" if reverse else f"range({d[axis]})"
            lines = ["_first = True", "_acc = " + ctx.lit(0, dt), f"for _k in {rng}:",
                     f"    _v = {X}[{_lane(I, axis, '_k')}]", "    if _first:",
                     "        _acc = _v", "        _first = False", "    else:"]
            if kind in ("sum", "prod"):
                comb = f"_acc {'+' if kind == 'sum' else '*'} _v"
            else:
                comb = _combine(kind, "_acc", "_v", dt)
            if dt != np.float64:
                comb = ctx.fb.cast(comb, dt)
            lines += [f"        _acc = {comb}", f"    {O}[{_lane(I, axis, '_k')}] = _acc"]
            return lines
        _map_kernel(ctx, kept, body)
    return rule


def _op_argext(kind):
    def rule(ctx):
        x = ctx.invar(0)
        if not x.aval.shape or not _all_arrays(ctx):
            return _op_host(ctx)
        axis = ctx.p["axis"]
        d = ctx.dims_in(0)
        kept = [n for a, n in enumerate(d) if a != axis]
        it = np.dtype(ctx.p["index_dtype"])
        X, O = ctx.arr(0), ctx.out(0)
        _alloc_out(ctx)
        cmp = ">" if kind == "max" else "<"
        nan = x.aval.dtype.kind == "f"

        def body(I):
            # the first extreme wins; the first NaN wins over everything (numpy)
            cond = f"(_v {cmp} _best)" + (" or (_v != _v and _best == _best)" if nan else "")
            if x.aval.dtype.kind == "c":     # lexicographic; a NaN in either part
                cond = (f"(not «C».cisnan(_best)) and («C».c{'gt' if kind == 'max' else 'lt'}"
                        f"(_v, _best) or «C».cisnan(_v))")
            return ["_bi = 0", f"if {d[axis]} > 0:",
                    f"    _best = {X}[{_lane(I, axis, '0')}]",
                    f"    for _k in range(1, {d[axis]}):",
                    f"        _v = {X}[{_lane(I, axis, '_k')}]",
                    f"        if {cond}:", "            _best = _v", "            _bi = _k",
                    f"{O}[{', '.join(I) or '0'}] = {ctx.fb.cast('_bi', it)}"]
        _map_kernel(ctx, kept, body)
    return rule


#: opaque primitives with device code of their own (the rest: HOST_CALLS)
CUDA_OPAQUE = {
    "dot_general": _op_dot_general,
    "pad": _op_pad, "concatenate": _op_concatenate, "dynamic_slice": _op_dynamic_slice,
    "dynamic_update_slice": _op_dynamic_update_slice, "gather": _op_gather,
    "index_gather": _op_index_gather,
    "scatter": _op_scatter(False), "scatter_add": _op_scatter(True),
    "cumsum": _op_cumulative("sum"), "cumprod": _op_cumulative("prod"),
    "cummax": _op_cumulative("max"), "cummin": _op_cumulative("min"),
    "argmax": _op_argext("max"), "argmin": _op_argext("min"),
    "cond": _cpu._op_cond, "while": _cpu._op_while, "scan": _op_scan,
    "cholesky": _op_linalg, "triangular_solve": _op_linalg, "solve": _op_linalg,
    "eigh": _op_linalg, "slogdet": _op_linalg,
}
KERNEL_OPAQUE = frozenset(CUDA_OPAQUE)
#: opaque primitives that run as host calls (numpy on a host copy, result copied back);
#: the linear-algebra ones do so only when CuPy is absent
HOST_CALLS = frozenset(n for n, r in LOWERINGS.items()
                       if r.kind == "opaque" and n not in CUDA_OPAQUE)


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
    mod.param_literals = _cpu._has_arrays(closed.jaxpr) and not mod.static
    fb = _CudaFn(mod, closed.jaxpr, "kernel", top=True)
    fb.build()
    params = []
    for v in list(closed.jaxpr.constvars) + list(closed.jaxpr.invars):
        params.append(("array", v.aval.dtype, len(v.aval.shape)) if v.aval.shape
                      else ("scalar", v.aval.dtype))
    sig = ", ".join(f"{_dtname(p[1])}[{p[2]}d]" if p[0] == "array" else _dtname(p[1])
                    for p in params)
    source = f"# kernel parameters: ({sig})\n" + mod.source()
    return CudaProgram(source, "kernel", params, np.array(mod.sizes, dtype=np.int64),
                       list(closed.consts), [v.aval for v in closed.jaxpr.outvars], closed,
                       list(mod.host_eqns))


_MODULES = {}
_LOAD_LOCK = threading.Lock()
STATS = {"modules_loaded": 0, "from_disk": 0}


def _module_key(source):
    import numba
    from importlib.metadata import version
    text = "\n".join([source, numba.__version__, version("numba-cuda")])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def load(source):
    """The module generated as ``source``: one per process (memory), written once to
    ``<cache_dir>/cuda/`` so numba-cuda's own disk cache (``cache=True`` kernels, which
    need a file-backed module) keeps their machine code between processes."""
    key = _module_key(source)
    with _LOAD_LOCK:
        mod = _MODULES.get(key)
        if mod is not None:
            return mod
        name = f"_autodiff_cuda_{key}"
        mod = None
        try:
            from . import compile_cache as cc
            from ..config import config
            root = os.path.expanduser(str(config.cache_dir))
            d = os.path.join(root, "cuda")
            cc._ensure_private_dir(d)
            if cc.cache_dir_problem(root) is None:
                path = os.path.join(d, f"c_{key}.py")
                if os.path.exists(path):
                    STATS["from_disk"] += 1
                else:
                    cc._write_source(path, source)
                with open(path, encoding="utf-8") as f:
                    if f.read() == source:
                        spec = importlib.util.spec_from_file_location(name, path)
                        mod = importlib.util.module_from_spec(spec)
                        sys.modules[name] = mod
                        spec.loader.exec_module(mod)
        except OSError:
            mod = None
        if mod is None:                               # no trusted cache: in memory only
            import types
            mod = types.ModuleType(name)
            exec(compile(source, f"<autodiff cuda {key[:12]}>", "exec"), mod.__dict__)
        STATS["modules_loaded"] += 1
        _MODULES[key] = mod
        return mod


def entry(prog):
    """A flat callable for ``prog``: leaves in (numpy arrays, scalars or device arrays),
    a list of :class:`~autodiff.devices.CudaArray` out."""
    from ..devices import CudaArray
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
            return rt.to_device(np.ascontiguousarray(x, dtype=dt))
        return dt.type(x) if not isinstance(x, np.ndarray) else dt.type(x[()])

    def wrap(r, aval):
        if rt.is_device(r):
            return CudaArray(r.reshape(()) if not aval.shape else r)
        return CudaArray(rt.scalar_out(r, aval.dtype))

    def call(*leaves):
        args = consts + [arg(x, s) for x, s in zip(leaves, specs)]
        with np.errstate(all="ignore"):
            res = fn(*args, sz, E)
        return [wrap(r, a) for r, a in zip(res, outs)]
    call.program = prog
    return call
