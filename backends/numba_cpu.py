"""Lower a jaxpr to Numba CPU code: readable Python source over fused loop nests.

The input is a finished jaxpr: ``jit`` runs the IR pass pipeline
(:func:`autodiff.transforms.passes.run_pipeline`: simplification, inlining of call-like
equations, lifting of control-flow body constants, uniform constants, the dot swap, DCE)
before it calls :func:`lower`, which never traces or rewrites the program. Then, one
module each::

    plan.py       the target-neutral planner: dimension classes (which sizes are equal;
                  constants when specialized, run-time ``_sz`` slots when dynamic),
                  fusion of elementwise equations into loop nests, reductions as their
                  accumulators, views as index maps, tiny values in scalars, opaque
                  statements placed as early as their operands allow
    numba_cpu.py  this module: the Numba-CPU emitter (``_Fn``, a ``Planner`` with the
                  text hooks), the expressions and statement emitters of every primitive,
                  the module assembly (shared loop-nest pieces), and :func:`lower`

Every primitive has one :class:`~autodiff.backends.plan.Lowering` record in ``LOWERINGS``
(its kind, its dimension rule and cost for the planner; its scalar expression or statement
emitter for this target), registered at the end of this module next to the rules it names.

:func:`lower` returns a :class:`Program`: the source, the kernel's parameter types, and
the ``_sz`` vector for the traced shapes. With ``dynamic_dims=True`` the source depends
only on the structure of the jaxpr (ranks, dtypes, which broadcast operand dimensions are
1); sizes, size-valued params and, in kernels over arrays, the jaxpr's literals (a mean's
``1/n`` is one) are read from ``_sz``, so a new batch size reuses the compiled kernel.
Specialized (the first compile of a signature) they are constants of the source.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.backends.numba_cpu import lower
>>> from autodiff.transforms.passes import run_pipeline
>>> prog = lower(run_pipeline(ad.make_jaxpr(lambda x: anp.sum(anp.exp(x) * 2.0))(np.ones(3))))
>>> print(prog.source.split("def kernel")[1].splitlines()[0])
(A, _sz):
>>> int(prog.sizes[0])                    # n0: the length of x
3
"""
import ast
import builtins
import contextlib
import hashlib
import re

import numpy as np

from ..config import config
from ..core import SIZE_PARAMS, ClosedJaxpr, DropVar, Jaxpr, Literal, Var, pp_param
from .plan import (LOWERINGS, Lowering, Planner, _dim_bid,  # noqa: F401
                   _dim_concat, _dim_dot, _dim_eigh, _dim_expand, _dim_first_to_out,
                   _dim_gather, _dim_index_gather, _dim_reduce, _dim_same, _dim_scatter, _dim_slogdet, _dim_solve,
                   _dim_squeeze, _dim_transpose, _ew, _lowering, _no_dims, _par)

__all__ = ["lower", "Program", "Lowering", "LOWERINGS", "LOWERED_PRIMITIVES", "KNOWN_GAPS"]

# The vectorizable transcendentals of numba_math, by (name, dtype). Listed here rather than
# read from numba_math so that lowering does not import Numba: the first call of a jitted
# function lowers, then runs on the interpreter while Numba is imported and compiles in
# the background. (tests/test_jit_lowering.py checks this list against
# numba_math.FUNCTIONS.)
FAST_MATH = frozenset((name, dt) for name in ("cos", "exp", "expm1", "log", "log1p", "logistic",
                                              "sin", "tanh") for dt in ("float32", "float64"))
HAVE_SELECT = True       # numba_math.select: a branch-free LLVM select
# GEMM threads are not part of generated code: matmul_into reads ad.config.jit_blas_threads
# from blas_pool's state at run time, so changing it recompiles nothing.

# prange loops run on Numba's OpenMP pool, whose wait policy compile_cache sets (as a
# default, OMP_WAIT_POLICY=PASSIVE) just before the first kernel compiles: importing
# autodiff changes no environment variable (see compile_cache._openmp_defaults).



# =====================================================================================
# Elementwise expressions: one scalar expression per primitive
# =====================================================================================

def _is_float(dt):
    return dt.kind == "f" if isinstance(dt, np.dtype) else np.dtype(dt).kind == "f"


def _is_complex(dt):
    return dt.kind == "c" if isinstance(dt, np.dtype) else np.dtype(dt).kind == "c"


# Complex values compute with Numba's native complex64/complex128 (arithmetic, np.exp,
# np.log, np.sqrt, np.sin, ..., np.arctanh, np.abs); numba_complex supplies what must
# follow numpy where Numba differs: division (Numba raises on a zero divisor), the
# lexicographic order with numpy's NaN rules, sign, integer powers, complex GEMM. A real
# program's module never imports it (the names below go to their own import line).
COMPLEX_HELPERS = frozenset((
    "cdiv", "csign", "cisnan", "clt", "cle", "cgt", "cge", "cmax", "cmin", "cipow", "cpow",
    "cexp", "cexp_f64", "cexp_f32", "cabs_f64", "cabs_f32", "clog", "cexpm1", "csinh", "ccosh", "csin",
    "ccos", "ctanh", "cacosh", "cmatmul_into"))


def _helper(ctx, name):
    """Import ``name`` (a numba_runtime or numba_complex helper) into the module."""
    ctx.fb.mod.imports_runtime.add(name)
    return name


def _div(ctx, a, b):
    """``a / b`` in the output dtype: numpy's complex division for complex results."""
    if _is_complex(ctx.out_dtype):
        return f"{_helper(ctx, 'cdiv')}({a}, {b})"
    return f"{a} / {b}"


def _math(ctx, name, npname, x):
    """The fast vectorizable implementation if numba_math has one, else numpy's."""
    dt = _dtname(ctx.out_dtype)
    mod = ctx.fb.mod
    size = LOWERINGS[name].code_size
    if (name, dt) in FAST_MATH and mod.fast_math_used + size <= FAST_MATH_BUDGET:
        mod.fast_math_used += size
        fn = f"{name}_{'f64' if dt == 'float64' else 'f32'}"
        ctx.fb.mod.imports_math.add(fn)
        return f"{fn}({x})"
    return f"np.{npname}({x})"


def _sel(ctx, c, a, b):
    if HAVE_SELECT:
        ctx.fb.mod.imports_math.add("select")
        return f"select({c}, {a}, {b})"
    ctx.fb.mod.imports_runtime.add("select_fallback")
    return f"select_fallback({c}, {a}, {b})"


def _unary_np(npname):
    return lambda ctx, a: f"np.{npname}({a[0]})"


def _fast(name, npname):
    return lambda ctx, a: _math(ctx, name, npname, a[0])


def _ew_sign(ctx, a):
    x = a[0]
    dt = ctx.out_dtype
    if _is_complex(dt):          # numpy 2: z / |z|
        return f"{_helper(ctx, 'csign')}({x})"
    one = ctx.lit(1, dt)
    if dt == np.bool_:
        return x
    if dt.kind == "u":
        return _sel(ctx, f"{x} > 0", one, ctx.lit(0, dt))
    mone = ctx.lit(-1, dt)       # after the unsigned case: np.uint8(-1) raises OverflowError
    # numpy: sign(±0.) is +0.0 and sign(nan) is nan, so the tail is x only for NaN
    tail = _sel(ctx, f"{x} != {x}", x, ctx.lit(0, dt)) if _is_float(dt) else ctx.lit(0, dt)
    return _sel(ctx, f"{x} > 0", one, _sel(ctx, f"{x} < 0", mone, tail))


def _ew_not(ctx, a):
    return f"(not {a[0]})" if ctx.out_dtype == np.bool_ else f"~{a[0]}"


def _ew_is_finite(ctx, a):
    return f"np.isfinite({a[0]})" if ctx.in_dtypes[0].kind in "fc" else "True"


def _ew_logistic(ctx, a):
    dt = _dtname(ctx.out_dtype)
    if ("logistic", dt) in FAST_MATH:
        return _math(ctx, "logistic", None, a[0])
    one = ctx.lit(1, ctx.out_dtype)
    exp = _helper(ctx, "cexp") if _is_complex(ctx.out_dtype) else "np.exp"
    return _div(ctx, one, f"({one} + {exp}(-{a[0]}))")


def _ew_rsqrt(ctx, a):
    return _div(ctx, ctx.lit(1, ctx.out_dtype), f"np.sqrt({a[0]})")


def _ew_integer_pow(ctx, a):
    x, y = a[0], ctx.params["y"]
    dt = ctx.out_dtype
    if y == 0:
        return ctx.lit(1, dt)
    if _is_complex(dt) and not 0 < y <= 3:
        # numpy's complex x**n: binary exponentiation, 1/x**|n| for n < 0 (numba_complex)
        return f"{_helper(ctx, 'cipow')}({x}, {y})"
    n = abs(y)
    body = " * ".join([x] * n) if n <= 4 else f"{x} ** {n}"
    if y < 0:
        one = ctx.lit(1, dt if _is_float(dt) else np.float64)
        return f"{one} / ({body})"
    return body


def _binop(op):
    return lambda ctx, a: f"{a[0]} {op} {a[1]}"


def _ew_max(ctx, a):
    x, y = a
    if _is_complex(ctx.out_dtype):   # numpy: lexicographic, the first NaN wins
        return f"{_helper(ctx, 'cmax')}({x}, {y})"
    if _is_float(ctx.out_dtype):   # numpy's maximum propagates NaN from either side
        # and, on a tie (0. and -0.), returns its second operand, as does min
        return _sel(ctx, f"({x} > {y}) | ({x} != {x})", x, y)
    return _sel(ctx, f"{x} >= {y}", x, y)


def _ew_min(ctx, a):
    x, y = a
    if _is_complex(ctx.out_dtype):
        return f"{_helper(ctx, 'cmin')}({x}, {y})"
    if _is_float(ctx.out_dtype):
        return _sel(ctx, f"({x} < {y}) | ({x} != {x})", x, y)
    return _sel(ctx, f"{x} <= {y}", x, y)


def _ew_mod(ctx, a):
    if _is_float(ctx.out_dtype):
        ctx.fb.mod.imports_runtime.add("mod_f")
        return f"mod_f({a[0]}, {a[1]})"
    return f"{a[0]} % {a[1]}"


def _ew_floor_divide(ctx, a):
    if _is_float(ctx.out_dtype):
        ctx.fb.mod.imports_runtime.add("floor_divide_f")
        return f"floor_divide_f({a[0]}, {a[1]})"
    return f"{a[0]} // {a[1]}"


def _ew_select(ctx, a):
    return _sel(ctx, a[0], a[1], a[2])


def _ew_convert(ctx, a):
    new = np.dtype(ctx.params["new_dtype"])
    if new == np.bool_:
        return f"{a[0]} != 0"
    if _is_complex(ctx.in_dtypes[0]) and not _is_complex(new):
        return f"{_dt(new)}({_par(a[0])}.real)"      # numpy discards the imaginary part
    return f"{_dt(new)}({a[0]})"


def _ew_compare(op, helper):
    """A comparison: Python's operator, numpy's lexicographic order for complex operands."""
    def rule(ctx, a):
        if helper is not None and _is_complex(ctx.in_dtypes[0]):
            return f"{_helper(ctx, helper)}({a[0]}, {a[1]})"
        return f"{a[0]} {op} {a[1]}"
    return rule


# numba_complex's version of a function where Numba's complex one differs from numpy's
# beyond rounding (tanh's overflow, expm1 near 0, acosh's branch cut, inf * sin(0) parts)
_NUMPY_COMPLEX = {"sinh": "csinh", "cosh": "ccosh", "acosh": "cacosh"}


def _numpy_complex(helper, rule, fast=False):
    """``rule`` for real operands, ``helper`` for complex ones; ``fast``: the vectorizable
    ``<helper>_f64``/``_f32`` (numba_math's real functions inside) while the module's
    FAST_MATH_BUDGET lasts."""
    if helper is None:
        return rule

    def expr(ctx, a):
        if not _is_complex(ctx.out_dtype):
            return rule(ctx, a)
        mod = ctx.fb.mod
        if fast and mod.fast_math_used + COMPLEX_FAST_SIZE <= FAST_MATH_BUDGET:
            mod.fast_math_used += COMPLEX_FAST_SIZE
            return f"{_helper(ctx, helper + _COMPLEX_SUFFIX[_dtname(ctx.out_dtype)])}({a[0]})"
        return f"{_helper(ctx, helper)}({a[0]})"
    return expr


# numba_complex's vectorizable complex exp: numba_math's exp, cos and sin inlined
COMPLEX_FAST_SIZE = 92
_COMPLEX_SUFFIX = {"complex128": "_f64", "complex64": "_f32"}


def _ew_abs(ctx, a):
    dt = ctx.in_dtypes[0]
    if _is_complex(dt):           # vectorizable (Numba's complex abs calls libm's hypot)
        return f"{_helper(ctx, 'cabs' + _COMPLEX_SUFFIX[_dtname(dt)])}({a[0]})"
    return f"np.abs({a[0]})"


def _ew_div(ctx, a):
    return _div(ctx, a[0], a[1])


def _ew_pow(ctx, a):
    if _is_complex(ctx.out_dtype):    # numpy's npy_cpow (integral exponents, 0 ** b)
        return f"{_helper(ctx, 'cpow')}({a[0]}, {a[1]})"
    return f"{a[0]} ** {a[1]}"


def _ew_exp2(ctx, a):
    # numba's float32 exp2 fails to lower: compute in float64
    if ctx.out_dtype == np.float32:
        return f"np.exp2(np.float64({a[0]}))"
    return f"np.exp2({a[0]})"


def _ew_iota(ctx, a):
    return ctx.idx[ctx.params["dimension"]]



# Past FAST_MATH_BUDGET units of inlined transcendentals in one module (about 30 sin/cos or
# 100 exp), further ones call libm (numpy's scalar functions: exact, not vectorized) so
# that huge programs still compile in seconds (LOOP_BUDGET in plan.py bounds one loop).
FAST_MATH_BUDGET = 1200

_DT_TEXT = {}


def _dt(dtype):
    """Numba/numpy name of a dtype, as written in generated source."""
    got = _DT_TEXT.get(dtype)
    if got is None:
        d = np.dtype(dtype)
        got = _DT_TEXT[dtype] = "np.bool_" if d == np.bool_ else f"np.{d.name}"
    return got


def _dtname(dtype):
    """``dtype.name`` (a slow property in numpy), memoized."""
    got = _DT_NAME.get(dtype)
    if got is None:
        got = _DT_NAME[dtype] = np.dtype(dtype).name
    return got


_DT_NAME = {}


_SHORT = {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32", "int16": "i16",
          "int8": "i8", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "bool": "bool"}



# =====================================================================================
# Module and function builders
# =====================================================================================

class Program:
    """The result of lowering: generated source plus what is needed to call it.

    ``source``: the module text; ``entry``: the kernel's name; ``params``: one type spec
    per kernel parameter, ``("array", dtype, ndim)``, ``("scalar", dtype)`` or
    ``("sizes",)``; ``sizes``: the int64 ``_sz`` vector for the traced shapes;
    ``consts``: values of the leading constant parameters; ``out_avals``; ``parallel``;
    ``pieces``: ``(module name, source)`` of the shared loop-nest modules it imports.
    """

    def __init__(self, source, entry, params, sizes, consts, out_avals, parallel, jaxpr,
                 pieces=()):
        self.pieces = list(pieces)
        self.source = source
        self.entry = entry
        self.params = params
        self.sizes = sizes
        self.consts = consts
        self.out_avals = out_avals
        self.parallel = parallel
        self.jaxpr = jaxpr

    def __repr__(self):
        return f"Program({self.entry}, {len(self.params)} params, {len(self.source)} chars)"


_NAME_RE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")


def _rename_names(text, rename):
    """``text`` with the names in ``rename`` replaced (attributes such as ``np.empty`` and
    the generated code's comments apart): -> (code lines without comments, comment lines).
    Generated code has no string literals, so a name is any identifier not after a dot."""
    code, comments = [], []
    for ln in text.splitlines():
        if ln.strip().startswith("#"):
            comments.append(ln.strip())
            continue
        ln = ln.split("  #")[0].rstrip()          # a trailing note such as ``# copy x``
        if ln.strip():
            code.append(_NAME_RE.sub(lambda m: rename.get(m.group(1), m.group(1)), ln))
    return "\n".join(code), comments


def _helper_imports(math, runtime):
    """The import lines of a generated module's helpers (numba_complex's names, kept with
    numba_runtime's, get a line of their own)."""
    lines = []
    if math:
        lines.append("from autodiff.backends.numba_math import " + ", ".join(sorted(math)))
    rt = sorted(n for n in runtime if n not in COMPLEX_HELPERS)
    cx = sorted(n for n in runtime if n in COMPLEX_HELPERS)
    if rt:
        lines.append("from autodiff.backends.numba_runtime import " + ", ".join(rt))
    if cx:
        lines.append("from autodiff.backends.numba_complex import " + ", ".join(cx))
    return lines


_NJIT_OPTS = "cache=True, nogil=True, error_model='numpy', fastmath={'reassoc', 'contract'}"


def _piece_module(body, params, outs, rename, consts, math, runtime, parallel):
    """``(module name, source)`` of an outlined loop nest: one function ``loop``.

    The name carries the hash of the text, so equal nests are one module whatever kernel
    they came from (compile_cache loads each once per process and caches it on disk).
    """
    ret = ", ".join(rename[o] for o in outs)
    lines = ["# A loop nest shared between kernels, generated by autodiff.jit "
             "(backends/numba_cpu.py).",
             "import numpy as np", "from numba import njit, prange"]
    lines += _helper_imports(math, runtime)
    lines += [f"{n} = {text}" for n, text in consts]
    lines += ["", "", f"@njit({_NJIT_OPTS}{', parallel=True' if parallel else ''})",
              f"def loop({', '.join(rename[p] for p in params)}):"]
    lines += ["    " + ln for ln in body.splitlines()]
    lines.append(f"    return ({ret}{',' if len(outs) == 1 else ''})")
    src = "\n".join(lines) + "\n"
    return f"_autodiff_piece_{hashlib.sha256(src.encode()).hexdigest()[:32]}", src


# names every generated module defines at its top (imports); never parameters of a function
_MODULE_NAMES = set(dir(builtins)) | {"np", "prange", "njit", "nb"}
# loop nests become shared functions (see _Module.outline)
OUTLINE_LOOPS = True
_OUTLINE_MEMO = {}


class _Module:
    def __init__(self, parallel_threshold):
        self.functions = []          # source blocks, callees first
        self.sizes = []              # slot -> concrete value (for the traced shapes)
        self.consts = {}             # literal text -> global name
        self.const_lines = []
        self.imports_math = set()
        self.imports_runtime = set()
        self.parallel = False
        self.parallel_threshold = parallel_threshold
        self.n_sub = 0
        self.param_literals = False  # read jaxpr literals from _sz (set when arrays exist)
        self.fast_math_used = 0      # code size of inlined numba_math calls (FAST_MATH_BUDGET)
        self.outlined = {}           # canonical loop-nest text -> its function's name
        self.nests = {}              # placeholder line -> the loop nest it stands for
        self.sub_texts = {}          # control-flow body text (name elided) -> its function
        self.pieces = []             # (module name, source) of the outlined loop nests
        self.piece_imports = []
        self.dynamic_dims = True     # see lower()
        self.static = False          # every size a constant

    def slot(self, value):
        self.sizes.append(int(value))
        return len(self.sizes) - 1

    def global_const(self, text):
        name = self.consts.get(text)
        if name is None:
            name = f"_lit{len(self.consts)}"
            self.consts[text] = name
            self.const_lines.append(f"{name} = {text}")
        return name

    def outline(self, nest):
        """Register a loop nest; returns the one placeholder line that stands for it.

        Whether the nest becomes a function of its own is decided when the module's source
        is assembled (:meth:`_place_nests`): a nest whose canonical text occurs at two or
        more places of the module (a gradient through 16 layers repeats the same ``tanh``
        loop and the same derivative loop 16 times, each with the vectorized math inlined)
        is one shared piece, compiled once and called where it was; a nest that occurs
        once stays inline, because a piece of its own costs more to compile than it saves
        (measured: 1.6-1.9x the compile time of the same kernels inline). Nests are the
        same when their text agrees with every name canonicalized (the equation comments
        stay at the call site).
        """
        text = "\n".join(nest)
        consts = {v: k for k, v in self.consts.items()}          # global name -> its text
        memo_key = (text, tuple(sorted(consts.items())), frozenset(self.imports_math),
                    frozenset(self.imports_runtime))
        got = _OUTLINE_MEMO.get(memo_key)     # a new batch size lowers the same nests again
        if got is None:
            got = self._analyse_nest(text, consts)
            if len(_OUTLINE_MEMO) > 4096:
                _OUTLINE_MEMO.clear()
            _OUTLINE_MEMO[memo_key] = got
        body, comments, params, outs, rename, gl, used = got
        marker = f"\u00abNEST:{hashlib.sha1(memo_key[0].encode()).hexdigest()[:20]}\u00bb"
        if marker not in self.nests:
            self.nests[marker] = (nest, got, [(rename[n], consts[n]) for n in gl],
                                  sorted(used & self.imports_math),
                                  sorted(used & self.imports_runtime))
        return [marker]

    _NEST_LINE = re.compile("^( *)(\u00abNEST:\\w+\u00bb)$", re.M)

    def _place_nests(self, texts):
        """The function texts with each nest placeholder replaced: by a call of its shared
        piece when its canonical body occurs more than once among ``texts``, else by the
        nest itself. Fills ``pieces`` and ``piece_imports``."""
        count = {}
        for t in texts:
            for m in self._NEST_LINE.finditer(t):
                body = self.nests[m.group(2)][1][0]
                count[body] = count.get(body, 0) + 1

        def place(m):
            ind, marker = m.group(1), m.group(2)
            nest, got, gconsts, math, runtime = self.nests[marker]
            body, comments, params, outs, rename, gl, used = got
            if not OUTLINE_LOOPS or count[body] < 2:
                return "\n".join(ind + ln for ln in nest)
            name = self.outlined.get(body)
            if name is None:
                name = self.outlined[body] = f"_loop{len(self.outlined)}"
                self.pieces.append(_piece_module(body, params, outs, rename, gconsts, math,
                                                 runtime, "prange(" in body))
                self.piece_imports.append(f"from {self.pieces[-1][0]} import loop as {name}")
            tgt = ", ".join(outs) + ("," if len(outs) == 1 else "")
            return "\n".join(ind + ln for ln in comments + [f"{tgt} = {name}({', '.join(params)})"])
        return [self._NEST_LINE.sub(place, t) for t in texts]

    def _analyse_nest(self, text, consts):
        """(canonical body, comments, params, outputs, renaming, globals used, names used)."""
        tree = ast.parse(text)
        defined, used, order = set(), set(), {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                order.setdefault(node.id, (node.lineno, node.col_offset))
                (defined if isinstance(node.ctx, ast.Store) else used).add(node.id)
        glob = set(consts) | self.imports_math | self.imports_runtime | _MODULE_NAMES
        params = sorted(used - defined - glob, key=order.get)
        outs = []
        for node in tree.body:          # what the nest hands on: its top-level assignments
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id not in outs:
                        outs.append(t.id)
        rename = {n: f"a{i}" for i, n in enumerate(params)}
        gl = sorted((n for n in used if n in consts), key=order.get)
        rename.update({n: f"_c{i}" for i, n in enumerate(gl)})
        for n in sorted(defined, key=order.get):
            rename.setdefault(n, f"v{len(rename)}")
        body, comments = _rename_names(text, rename)
        return body, comments, params, outs, rename, gl, used

    def sub_function(self, jaxpr, hint):
        self.n_sub += 1
        name = f"_{hint}{self.n_sub}"
        fb = _Fn(self, jaxpr, name, top=False)
        fb.build()
        return fb

    def source(self, entry_fn):
        opts = _NJIT_OPTS
        functions = self._place_nests(self.functions)
        head = ["# Generated by autodiff.jit (backends/numba_cpu.py). Each statement is preceded",
                "# by the jaxpr equation it computes."]
        if self.sizes:
            head += ["# n<k> are run-time sizes read from the size vector's slot k; c<k> are the",
                     "# jaxpr's literals, read from there too (they may depend on sizes)."]
        else:
            head += ["# Specialized: every size and literal is a constant of this kernel."]
        head += ["import numpy as np",
                "from numba import njit, prange"]
        head += _helper_imports(self.imports_math, self.imports_runtime)
        if self.piece_imports:
            head.append("# shared loop nests: modules of their own, keyed by content "
                        "(Program.pieces)")
            head.extend(self.piece_imports)
        head.append("")
        head.extend(self.const_lines)
        if self.const_lines:
            head.append("")
        body = []
        uses_sz = bool(self.sizes)
        for fsrc in functions:
            fsrc = (fsrc.replace("«SZ»", ", _sz" if uses_sz else "")
                    .replace("«SZ0»", "_sz" if uses_sz else ""))
            for part in _split_long_function(fsrc):
                # only functions with a prange loop of their own (not just a piece's)
                par = ", parallel=True" if "prange(" in part else ""
                body.append("")
                body.append(f"@njit({opts}{par})")
                body.append(part)
        return "\n".join(head + body) + "\n"


# Numba's compile time of one function grows much faster than its length (type inference
# and SSA over every variable and block: measured on straight-line bodies of n array
# statements, 25 -> 0.8 s, 50 -> 1.8 s, 100 -> 6.9 s, 200 -> 18 s, 400 -> 68 s, 800 ->
# 408 s), while up to about 50 such statements it is linear (~35 ms each). A kernel body
# longer than CHUNK_LINES is therefore split into consecutive functions of at most about
# that many lines, called in order by the kernel, each taking the live values it reads
# and returning the ones later chunks read: compile time linear in program size.
CHUNK_LINES = 160


def _split_long_function(fsrc, budget=None):
    """``fsrc`` (one function's source) as a list of function sources: unchanged when its
    body is short, else chunk functions of consecutive top-level statements (each at most
    ``budget`` lines, or one statement) followed by the function itself calling them.

    A body that repeats itself (a Python loop unrolled by tracing: the same statements
    with other names, step after step) is cut at its period (:func:`_periodic_runs`), so
    its chunks are equal up to names: each distinct chunk is one function with canonical
    names (:func:`_canonical_chunk`), compiled once and called at every place it occurs,
    and the compile time of an unrolled loop grows with its distinct code, not with its
    trip count. A chunk that occurs once keeps its names and comments; a shared chunk's
    comments (the jaxpr equations) stay at its call site."""
    budget = CHUNK_LINES if budget is None else budget
    lines = fsrc.split("\n")
    if len(lines) <= budget + 8:
        return [fsrc]
    fn = ast.parse(fsrc).body[0]
    stmts = fn.body
    if len(stmts) < 3 or not isinstance(stmts[-1], ast.Return):
        return [fsrc]
    params = [a.arg for a in fn.args.args]
    # each statement's text (0-based line slices): from the end of the previous statement,
    # so the comments before it, to its own end; the first from the line after the def
    spans, start = [], fn.lineno
    for st in stmts:
        spans.append((start, st.end_lineno))
        start = st.end_lineno

    def names(node):
        """(names it stores, names it reads before any store of its own): loop counters
        are stored by their ``for`` before the body reads them."""
        stored, loaded, targets = set(), set(), set()
        for n in ast.walk(node):
            if isinstance(n, ast.For):
                targets |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                loaded.add(n.target.id)            # x += v reads x (its Name is a Store)
            if isinstance(n, ast.Name):
                (stored if isinstance(n.ctx, ast.Store) else loaded).add(n.id)
        return stored, loaded - targets
    info = [names(st) for st in stmts]
    local = set(params)
    for stored, _ in info:
        local |= stored
    n_body = len(stmts) - 1                      # the return stays in the kernel
    sizes = [spans[i][1] - spans[i][0] for i in range(n_body)]
    code = [_rename_names("\n".join(lines[spans[i][0]:spans[i][1]]), {})[0]
            for i in range(n_body)]
    runs = _periodic_runs([_NAME_RE.sub(lambda m: "_" if m.group(1) in local else m.group(1), c)
                           for c in code])
    # chunks of consecutive statements: a periodic run in chunks of whole periods, the rest
    # in chunks of at most ``budget`` lines
    chunks, cur, size, i = [], [], 0, 0
    while i < n_body:
        if i in runs and sum(sizes[i:i + runs[i][0]]) <= 2 * budget:
            p, reps = runs[i]
            if cur:
                chunks.append(cur)
                cur, size = [], 0
            # periods per chunk: within the budget, and few enough that the chunk recurs
            # (about sqrt(reps) calls of one function: each call costs the kernel a little,
            # each period in the chunk costs its compile a little more)
            per = max(1, min(budget // max(1, sum(sizes[i:i + p])), round(reps ** 0.5)))
            for k in range(0, reps, per):
                chunks.append(list(range(i + k * p, i + min(reps, k + per) * p)))
            i += reps * p
            continue
        if cur and size + sizes[i] > budget:
            chunks.append(cur)
            cur, size = [], 0
        cur.append(i)
        size += sizes[i]
        i += 1
    if cur:
        chunks.append(cur)
    if len(chunks) < 2:
        return [fsrc]
    # read_after[k]: the names chunk k and every later statement (the return too) read
    read_after = [None] * len(chunks) + [info[-1][1]]
    for k in range(len(chunks) - 1, -1, -1):
        read_after[k] = set().union(read_after[k + 1], *(info[i][1] for i in chunks[k]))
    parts, defined = [], set(params)
    for k, idx in enumerate(chunks):
        stored, loaded = set(), set()
        for i in idx:
            stored |= info[i][0]
            loaded |= info[i][1]
        ins = (loaded & local) & defined
        outs = stored & read_after[k + 1]
        text = "\n".join(ln for i in idx for ln in lines[spans[i][0]:spans[i][1]])
        canon = _canonical_chunk("\n".join(code[i] for i in idx), ins, outs, local)
        parts.append((idx, ins, outs, text, canon))
        defined |= stored
    uses = {}
    for part in parts:
        uses[part[4][0]] = uses.get(part[4][0], 0) + 1
    out, calls, shared = [], [], {}
    for k, (idx, ins, outs, text, (ctext, cins, couts)) in enumerate(parts):
        if uses[ctext] > 1:
            cname = shared.get(ctext)
            if cname is None:
                cname = shared[ctext] = f"{fn.name}__shared{len(shared)}"
                out.append(ctext.replace("def «CHUNK»(", f"def {cname}(", 1))
            calls.extend("    " + c for c in _rename_names(text, {})[1])
            ins_o, outs_o = cins, couts
        else:
            cname = f"{fn.name}__part{k}"
            ins_o = sorted(ins, key=lambda n: (n not in params, n))
            outs_o = sorted(outs)
            ret = (f"    return ({', '.join(outs_o)},)" if outs_o else "    return 0")
            out.append("\n".join([f"def {cname}({', '.join(ins_o)}):", text, ret]))
        call = f"{cname}({', '.join(ins_o)})"
        calls.append(f"    {', '.join(outs_o)}, = {call}" if outs_o else f"    {call}")
    ret_text = lines[spans[-1][0]:spans[-1][1]]
    note = (f"    # the body in {len(chunks)} calls of {len(out)} functions of at most about "
            f"{budget} lines (compile time linear in length; a repeated chunk is one function)")
    out.append("\n".join(lines[:fn.lineno] + [note] + calls + ret_text))
    return out


def _periodic_runs(shapes, max_period=64, min_reps=3, min_len=12):
    """``{start: (period, repetitions)}``: the runs of ``shapes`` (one string per statement)
    that repeat with a period of at most ``max_period`` statements, at least ``min_reps``
    times and over at least ``min_len`` statements, found left to right without overlap
    (the longest run starting at a position wins; ties go to the shorter period)."""
    n = len(shapes)
    if n < 2 * min_len:
        return {}
    ids = {}
    seq = np.array([ids.setdefault(s, len(ids)) for s in shapes], np.int64)
    best_len = np.zeros(n, np.int64)           # statements covered by the best run at i
    best_p = np.zeros(n, np.int64)
    for p in range(1, min(max_period, n // min_reps) + 1):
        eq = seq[:-p] == seq[p:]
        # run[i]: how many consecutive positions from i on equal the one p later
        idx = np.arange(n - p)
        mism = np.where(~eq, idx, n - p)
        nxt = np.minimum.accumulate(mism[::-1])[::-1]
        run = nxt - idx                          # matches from i on
        reps = (run + p) // p
        cover = reps * p
        ok = (reps >= min_reps) & (cover >= min_len)
        better = ok & (cover > best_len[:n - p])
        best_len[:n - p][better] = cover[better]
        best_p[:n - p][better] = p
    out, i = {}, 0
    while i < n:
        if best_len[i]:
            p = int(best_p[i])
            out[i] = (p, int(best_len[i]) // p)
            i += int(best_len[i])
        else:
            i += 1
    return out


def _canonical_chunk(code, ins, outs, local):
    """``(source, ins, outs)`` of a chunk (``code``: its statements without comments) as a
    function ``«CHUNK»`` with canonical names: the parameters ``a0, a1, ...`` and the other
    local names ``v<k>``, each in order of first appearance, so two chunks that differ only
    in names have one text. ``ins`` and ``outs`` come back as the caller's names in the order
    of the function's parameters and results."""
    order = []
    seen = set()
    for m in _NAME_RE.finditer(code):
        n = m.group(1)
        if n in local and n not in seen:
            seen.add(n)
            order.append(n)
    cins = [n for n in order if n in ins]
    couts = [n for n in order if n in outs]
    rename = {n: f"a{j}" for j, n in enumerate(cins)}
    for n in order:
        rename.setdefault(n, f"v{len(rename)}")
    body, _ = _rename_names(code, rename)
    ret = (f"    return ({', '.join(rename[o] for o in couts)},)" if couts else "    return 0")
    src = "\n".join([f"def «CHUNK»({', '.join(rename[n] for n in cins)}):", body, ret])
    return src, cins, couts


def _acc_dtype(dt):
    """The accumulator dtype of a sum or product: float64 for floats, complex128 for
    complex numbers, uint64 for unsigned and int64 for other integers."""
    return _ACC_DTYPES[dt.kind]


_ACC_DTYPES = {"f": np.dtype(np.float64), "c": np.dtype(np.complex128),
               "u": np.dtype(np.uint64), "i": np.dtype(np.int64), "b": np.dtype(np.int64)}


def _float_text(f):
    """A float64 as source text (parenthesized when negative)."""
    if np.isnan(f):
        return "np.nan"
    if np.isinf(f):
        return "np.inf" if f > 0 else "(-np.inf)"
    text = repr(f)
    return f"({text})" if f < 0 or text.startswith("-") else text


class _EwCtx:
    __slots__ = ("fb", "params", "out_dtype", "in_dtypes", "idx")

    def __init__(self, fb, params, out_dtype, in_dtypes, idx):
        self.fb, self.params, self.out_dtype, self.in_dtypes, self.idx = \
            fb, params, np.dtype(out_dtype), [np.dtype(d) for d in in_dtypes], idx

    def lit(self, v, dtype):
        return self.fb.lit(v, dtype)



class _Fn(Planner):
    """One generated function (the kernel, or a control-flow body) in Numba-CPU Python: the
    emitter over :class:`~autodiff.backends.plan.Planner`'s plan."""

    def shape(self, v):
        d = self.dims(v)
        return "(" + ", ".join(d) + ("," if len(d) == 1 else "") + ")"

    def shape_of_names(self, names):
        return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"

    def lit(self, v, dtype):
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return "True" if bool(v) else "False"
        if dtype.kind == "f":
            text = _float_text(float(v))
            if dtype == np.float64:
                return text
            return self.mod.global_const(f"np.{dtype.name}({text.strip('()')})")
        if dtype.kind == "c":      # a module constant: np.complex128(complex(re, im))
            c = complex(np.asarray(v).item())
            parts = ", ".join(_float_text(t).strip("()") for t in (c.real, c.imag))
            return self.mod.global_const(f"np.{dtype.name}(complex({parts}))")
        iv = int(v)
        if dtype == np.int64:
            return f"({iv})" if iv < 0 else str(iv)
        return self.mod.global_const(f"np.{dtype.name}({iv})")

    def cast(self, expr, dtype):
        return f"{_dt(dtype)}({expr})"

    def jlit(self, v):
        """A literal of the jaxpr. In kernels over arrays its value is read from ``_sz`` at
        run time (``c<k>``): literals such as a mean's ``1/n`` derive from sizes, and the
        source must not depend on sizes. Scalar-only kernels keep literals inline."""
        dt = v.aval.dtype
        if not self.mod.param_literals or dt == np.bool_:
            return self.lit(v.val, dt)
        got = self.lit_names.get(id(v))
        if got is None and dt.kind == "c":         # two slots: the parts' bits
            self.mod.imports_runtime.add("slot_f64")
            c = complex(np.asarray(v.val).item())
            k, k2 = (self.mod.slot(int(np.asarray(t, np.float64).view(np.int64)))
                     for t in (c.real, c.imag))
            read = f"complex(slot_f64(_sz, {k}), slot_f64(_sz, {k2}))"
            self.lit_reads.append(f"c{k} = {_dt(dt)}({read})")
            self.slots_used.extend((k, k2))
            got = self.lit_names[id(v)] = f"c{k}"
        if got is None:
            self.mod.imports_runtime.add("slot_i64" if dt.kind != "f" else "slot_f64")
            if dt.kind == "f":
                bits = int(np.asarray(v.val, np.float64).view(np.int64))
                k = self.mod.slot(bits)
                read = f"slot_f64(_sz, {k})"
            else:
                k = self.mod.slot(int(np.asarray(v.val).astype(np.int64)))
                read = f"slot_i64(_sz, {k})"
            self.lit_reads.append(f"c{k} = {read}" if dt in (np.float64, np.int64) else
                                  f"c{k} = {_dt(dt)}({read})")
            self.slots_used.append(k)
            got = self.lit_names[id(v)] = f"c{k}"
        return got

    # ------------------------------------------------------------------ equation comments
    def eqn_comment(self, e):
        def decl(v):
            if isinstance(v, DropVar):
                return "_"
            n = _dtname(v.aval.dtype)
            dt = _SHORT.get(n, n)
            return f"{self.names[v]}:{dt}[{','.join(self.dims(v))}]"

        def arg(v):
            if isinstance(v, Literal):
                if self.mod.param_literals and v.aval.dtype != np.bool_:
                    return self.jlit(v)
                return repr(v.val.item()) if hasattr(v.val, "item") else repr(v.val)
            return self.names.get(v, "?")
        params = []
        for k, p in sorted(e.params.items()):
            if k in SIZE_PARAMS:
                params.append(f"{k}=…")
            elif isinstance(p, (Jaxpr, ClosedJaxpr)) or (
                    isinstance(p, tuple) and p and isinstance(p[0], (Jaxpr, ClosedJaxpr))):
                params.append(f"{k}=<jaxpr>")
            elif callable(p) and not isinstance(p, type):
                params.append(f"{k}=<fn>")
            else:
                params.append(f"{k}={pp_param(p, k, 0)}")
        ptxt = f"[{' '.join(params)}]" if params else ""
        outs = " ".join(decl(v) for v in e.outvars)
        ins = " ".join(arg(v) for v in e.invars)
        return f"# {outs} = {e.primitive.name}{ptxt} {ins}".rstrip()

    def ew_expr(self, e, args, idx):
        """The scalar expression of elementwise equation ``e`` over operand expressions."""
        o = e.outvars[0]
        ctx = _EwCtx(self, e.params, o.aval.dtype, [u.aval.dtype for u in e.invars], idx)
        low = LOWERINGS[e.primitive.name]
        expr = low.expr(ctx, args)
        dt = o.aval.dtype
        if not (dt == np.float64 or e.primitive.name == "convert_element_type"
                or (dt == np.bool_ and low.bool_native)
                or (dt == np.complex128 and ctx.in_dtypes
                    and all(d == dt for d in ctx.in_dtypes))):
            expr = self.cast(expr, dt)
        return expr

    # ------------------------------------------------------------------ emission
    def read(self, v, c, idx):
        """Expression for the value of ``v`` at domain index ``idx`` inside cluster ``c``."""
        if isinstance(v, Literal):
            return self.jlit(v)
        loc = self.loc[v]
        k = loc[0]
        if k == "elems":                      # loops read its array (see materialize)
            return f"{self.materialize(v)[2]}[{', '.join(self.vidx(v, idx))}]"
        if k == "alias":                      # the same loop index reads the source value
            return self.read(loc[1], c, idx)
        if k == "gen":                        # recomputed from this loop's indices
            e = loc[1]
            args = [self.read(u, c, idx) for u in e.invars]
            return _par(self.ew_expr(e, args, self.vidx(v, idx)))
        if k == "fused":
            if loc[1] is c:
                return self.sname(v)
            return f"{self.aname(v)}[{', '.join(self.vidx(v, idx))}]"
        if k == "scalar":
            return loc[2]
        if k == "array":
            return f"{loc[2]}[{', '.join(self.vidx(v, idx))}]"
        if k == "view":
            base, imap = loc[1], loc[2]
            if base[0] == "scalar":
                return base[2]
            full = self.vidx(v, idx)
            bidx = imap(full) if imap is not None else full
            return f"{base[2]}[{', '.join(bidx)}]"
        raise AssertionError(loc)

    def emit_cluster(self, c, out):
        dom = c.domain
        r = len(dom)
        sizes = [self.size(cl) for cl in dom]
        idx = [f"i{k}" for k in range(r)]
        pre, body = [], []
        inits = {k: [] for k in range(r + 1)}
        finals = {k: [] for k in range(r + 1)}
        post_nest = []
        shape_txt = self.shape_of_names(sizes)
        can_prange = r >= 1
        numel = 1
        for cl in dom:
            numel *= self.D.value[cl]
        for kind, *rest in c.members:
            if kind in ("ew", "identity"):
                e = rest[0]
                o = e.outvars[0]
                body.append(self.eqn_comment(e))
                args = [self.read(u, c, idx) for u in e.invars]
                full = self.vidx(o, idx)
                expr = args[0] if kind == "identity" else self.ew_expr(e, args, full)
                body.append(f"{self.sname(o)} = {expr}")
                if o in c.stored:
                    pre.append(f"{self.aname(o)} = np.empty({self.shape(o)}, "
                               f"{_dt(o.aval.dtype)})")
                    body.append(f"{self.aname(o)}[{', '.join(full)}] = {self.sname(o)}")
                if o in c.stored_as:                # see store_through
                    name, view, perm = c.stored_as[o]
                    pre.append(f"{name} = np.empty({self.shape(view)}, "
                               f"{_dt(view.aval.dtype)})")
                    vix = ["0" if b is None else full[b] for b in perm]
                    body.append(f"{name}[{', '.join(vix)}] = {self.sname(o)}")
            elif kind == "copy":
                v, name = rest
                pre.append(f"{name} = np.empty({self.shape(v)}, {_dt(v.aval.dtype)})")
                body.append(f"{name}[{', '.join(self.vidx(v, idx))}] = {self.read(v, c, idx)}"
                            f"  # copy {self.sname(v)}")
            else:  # reduce
                e = rest[0]
                ok = self.emit_reduce(e, c, idx, sizes, pre, body, inits, finals, post_nest)
                can_prange = can_prange and ok
        # threads pay when the loop's work, in "cheap elementwise operation" units, passes
        # config.jit_parallel_threshold: a loop of transcendentals goes parallel at a far
        # smaller size than a loop of additions (measured: ~2 µs per parallel launch here)
        weight = 1 + sum(LOWERINGS[m[1].primitive.name].cost for m in c.members
                         if m[0] in ("ew", "reduce"))
        par = can_prange and numel * weight >= self.mod.parallel_threshold
        if par:
            self.mod.parallel = True
        out.append(f"# ---- loop nest over {shape_txt if r else 'a scalar'}: "
                   f"{sum(1 for m in c.members if m[0] != 'copy')} fused equation(s)")
        out.extend(pre)
        order = self.loop_order(c, idx)

        def level(k, ind):
            for s in inits[k]:
                out.append("    " * ind + s)
            if k == r:
                for s in body:
                    out.append("    " * ind + s)
            else:
                rng = "prange" if (k == 0 and par) else "range"
                q = order[k]
                out.append("    " * ind + f"for {idx[q]} in {rng}({sizes[q]}):")
                level(k + 1, ind + 1)
            for s in finals[k]:
                out.append("    " * ind + s)
        level(0, 0)
        out.extend(post_nest)

    def emit_reduce(self, e, c, idx, sizes, pre, body, inits, finals, post_nest):
        """Accumulator code for a reduction; returns whether the nest may use prange."""
        u, o = e.invars[0], e.outvars[0]
        name = e.primitive.name
        # the reduced axes as positions of the loop domain (size-1 axes have no loop)
        pos, loop_pos = 0, {}
        for a, cl in enumerate(self.domain(u)):
            if not self.is_unit(cl):
                loop_pos[a] = pos
                pos += 1
        axes = sorted(loop_pos[a] for a in e.params["axes"] if a in loop_pos)
        r = len(idx)
        dt_in = u.aval.dtype
        dt_out = o.aval.dtype
        x = self.read(u, c, idx)
        body.append(self.eqn_comment(e))
        kind = name[len("reduce_"):]
        if dt_in == np.bool_ and kind == "sum":
            kind = "or"
        if dt_in == np.bool_ and kind == "prod":
            kind = "and"
        if kind in ("sum", "prod"):
            acc_dt = _acc_dtype(dt_in)
            init = self.lit(0 if kind == "sum" else 1, acc_dt)
            xv = x if acc_dt == dt_in else self.cast(x, acc_dt)
            op = "+" if kind == "sum" else "*"

            def update(acc):
                return f"{acc} {op}= {xv}" if not acc.endswith("]") else f"{acc} = {acc} {op} {xv}"
        elif kind in ("max", "min") and dt_in.kind == "c":
            # numpy's maximum.reduce: acc = maximum(acc, x) (lexicographic, the first NaN
            # stays); from -inf-infj (+inf+infj), which any first element replaces
            acc_dt = dt_in
            inf = -np.inf if kind == "max" else np.inf
            init = self.lit(complex(inf, inf), dt_in)
            helper = _helper(_EwCtx(self, {}, dt_in, [], idx), f"c{kind}")

            def update(acc):
                return f"{acc} = {helper}({acc}, {x})"
        elif kind in ("max", "min"):
            acc_dt = dt_in
            if dt_in.kind == "f":
                init = self.lit(-np.inf if kind == "max" else np.inf, dt_in)
            elif dt_in == np.bool_:
                init = self.lit(kind == "min", dt_in)
            else:
                info = np.iinfo(dt_in)
                init = self.lit(info.min if kind == "max" else info.max, dt_in)
            cmp = ">=" if kind == "max" else "<="         # ties: the later element (numpy: ±0)

            def update(acc):
                cond = f"({x} {cmp} {acc})"
                if dt_in.kind == "f":
                    cond += f" | ({x} != {x})"
                return f"{acc} = {_sel(_EwCtx(self, {}, dt_in, [], idx), cond, x, acc)}"
        else:  # and / or
            acc_dt = np.dtype(np.bool_)
            init = "True" if kind == "and" else "False"
            xv = x if dt_in == np.bool_ else f"({x} != 0)"
            op = "&" if kind == "and" else "|"

            def update(acc):
                return f"{acc} = {acc} {op} {xv}"
        kept = [k for k in range(r) if k not in axes]
        is_suffix = axes == list(range(r - len(axes), r))
        prange_ok = kind in ("sum", "prod") and dt_in.kind != "c"   # parfors: real reductions
        if is_suffix:
            k = r - len(axes)
            acc = f"{self.sname(o)}_acc"
            inits[k].append(f"{acc} = {init}")
            body.append(update(acc))
            val = acc if acc_dt == dt_out else self.cast(acc, dt_out)
            if o.aval.shape:
                pre.append(f"{self.aname(o)} = np.empty({self.shape(o)}, {_dt(dt_out)})")
                finals[k].append(f"{self.aname(o)}[{', '.join(self.vidx(o, idx[:k]))}] = {val}")
            else:
                finals[k].append(f"{self.sname(o)} = {val}")
            return prange_ok or k > 0
        accn = f"{self.aname(o)}_ACC"
        pre.append(f"{accn} = np.full({self.shape(o)}, {init}, {_dt(acc_dt)})")
        body.append(update(f"{accn}[{', '.join(self.vidx(o, [idx[k] for k in kept]))}]"))
        if acc_dt == dt_out:
            post_nest.append(f"{self.aname(o)} = {accn}")
        else:
            post_nest.append(f"{self.aname(o)} = {accn}.astype({_dt(dt_out)})")
        return False

    def build(self):
        j = self.jaxpr
        self.check_dtypes("cpu")
        self.analyse()
        self.plan()
        # outputs
        rets = []
        seen = set()
        for v in j.outvars:
            if isinstance(v, Literal):
                rets.append(self.jlit(v) if v.aval.dtype == np.float64
                            else self.cast(self.jlit(v), v.aval.dtype))
                continue
            if not v.aval.shape:
                ref = self.base_ref(v)
                expr = ref[2]
                rets.append(expr if (self.top and v.aval.dtype == np.float64)
                            else self.cast(expr, v.aval.dtype))
                continue
            ref = self.ensure(v)
            name = ref[2]
            if self.top and (ref[3] or name in seen):
                name = f"{name}.copy()"      # never hand the caller an alias of its input
            seen.add(ref[2])
            rets.append(name)
        # emission
        lines = []
        lines.extend(self.entry_stmts)
        for c in self.stages:
            if c.domain and OUTLINE_LOOPS:
                nest = []
                self.emit_cluster(c, nest)
                lines.extend(self.mod.outline(nest))
            else:
                self.emit_cluster(c, lines)
            lines.extend(c.post)
        params = [self.aname(v) if v.aval.shape else self.sname(v)
                  for v in list(j.constvars) + list(j.invars)]
        head = f"def {self.name}({', '.join(params)}«SZ»):"
        size_reads = [f"n{k} = slot_i64(_sz, {k})" for k in sorted(set(self.slots_used))
                      if f"n{k}" in self.used_size_names()]
        if size_reads:
            self.mod.imports_runtime.add("slot_i64")
        size_reads += self.lit_reads
        if self.top and len(rets) == 1:
            ret = f"return {rets[0]}"
        else:
            ret = f"return ({', '.join(rets)}{',' if len(rets) == 1 else ''})"
        text = [head] + ["    " + s for s in size_reads + lines + [ret]]
        self.text = "\n".join(text).replace("(«SZ»", "(«SZ0»")
        self.params = params
        if not self.top:
            # the same body (a PRNG's rounds in every draw, a layer's scan) is one function
            same = self.text.replace(f"def {self.name}(", "def «F»(", 1)
            got = self.mod.sub_texts.get(same)
            if got is not None:
                self.name = got
                return
            self.mod.sub_texts[same] = self.name
        self.mod.functions.append(self.text)


    # ------------------------------------------------------------------ planner hooks
    def code_size(self, e):
        """Code inlined into a loop body by equation ``e`` (LOOP_BUDGET units)."""
        low = LOWERINGS[e.primitive.name]
        if low.code_size and (e.primitive.name, _dtname(e.outvars[0].aval.dtype)) in FAST_MATH:
            return low.code_size
        if e.primitive.name == "exp" and e.outvars[0].aval.dtype.kind == "c":
            return COMPLEX_FAST_SIZE
        return 2 if low.cost > 1 else 1

    @staticmethod
    def assign(name, expr):
        return f"{name} = {expr}"

    def reshape_lines(self, e, ref):
        """A reshape that moves elements: numpy's reshape of the (contiguous) operand."""
        return [self.eqn_comment(e), f"{self.aname(e.outvars[0])} = "
                f"{ref[2]}.reshape({self.shape(e.outvars[0])})"]

    def opaque_lines(self, e, refs, outs):
        """The statements of an opaque equation: its record's emitter."""
        lines = [self.eqn_comment(e)]
        LOWERINGS[e.primitive.name].emit(_OpCtx(self, e, refs, outs, lines))
        return lines

    def materialize_lines(self, v, name, els):
        """An array ``name`` holding the unrolled value ``v`` (expressions ``els``)."""
        lines = [f"{name} = np.empty({self.shape(v)}, {_dt(v.aval.dtype)})"]
        for flat, x in enumerate(els):
            idx = ", ".join(str(i) for i in np.unravel_index(flat, v.aval.shape))
            lines.append(f"{name}[{idx}] = {x}")
        return lines

    def reduce_group_lines(self, kind, acc, xs, dt_in, dt_out):
        """Statements computing one unrolled reduction ``acc`` over element expressions."""
        lines = []
        if kind in ("sum", "prod"):   # in the accumulator type of the loop version
            acc_dt = _acc_dtype(dt_in)
            terms = [x if acc_dt == dt_in else self.cast(x, acc_dt) for x in xs]
            expr = (" + " if kind == "sum" else " * ").join(terms)
            lines.append(f"{acc} = {expr if acc_dt == dt_out else self.cast(expr, dt_out)}")
        elif kind in ("max", "min") and dt_in.kind == "c":      # as the loop version
            helper = _helper(_EwCtx(self, {}, dt_in, [], []), f"c{kind}")
            lines.append(f"{acc} = {xs[0]}")
            for x in xs[1:]:
                lines.append(f"{acc} = {helper}({acc}, {x})")
        elif kind in ("max", "min"):
            cmp = ">=" if kind == "max" else "<="     # ties: the later element (numpy: ±0)
            lines.append(f"{acc} = {xs[0]}")
            ctx = _EwCtx(self, {}, dt_in, [], [])
            for x in xs[1:]:
                cond = f"({x} {cmp} {acc})"
                if dt_in.kind == "f":
                    cond += f" | ({x} != {x})"
                lines.append(f"{acc} = {_sel(ctx, cond, x, acc)}")
        else:
            terms = [x if dt_in == np.bool_ else f"({x} != 0)" for x in xs]
            lines.append(f"{acc} = {(' & ' if kind == 'and' else ' | ').join(terms)}")
        return lines




class _OpCtx:
    """What an opaque lowering rule sees: refs of its operands, names of its results."""

    def __init__(self, fb, e, ins, outs, lines):
        self.fb = fb
        self.e = e
        self.ins = ins          # ("array", ready, NAME, alias) | ("scalar", ready, expr)
        self.outs = outs        # ("array", NAME) | ("scalar", name) | ("drop", name)
        self.lines = lines
        self.ind = 0
        self.p = e.params

    def emit(self, s):
        self.lines.append("    " * self.ind + s)

    @contextlib.contextmanager
    def block(self, header):
        self.emit(header)
        self.ind += 1
        try:
            yield
        finally:
            self.ind -= 1

    @contextlib.contextmanager
    def loops(self, sizes, reverse_at=None):
        """Nested loops over ``sizes``; yields the index names."""
        names = [self.fb.tmp("j") for _ in sizes]
        opened = 0
        for k, (n, s) in enumerate(zip(names, sizes)):
            if reverse_at == k:
                self.emit(f"for {n} in range({s} - 1, -1, -1):")
            else:
                self.emit(f"for {n} in range({s}):")
            self.ind += 1
            opened += 1
        try:
            yield names
        finally:
            self.ind -= opened

    def invar(self, i):
        return self.e.invars[i]

    def outvar(self, i):
        return self.e.outvars[i]

    def dims_in(self, i):
        v = self.e.invars[i]
        return self.fb.dims(v) if isinstance(v, Var) else []

    def dims_out(self, i):
        return self.fb.dims(self.e.outvars[i]) if not isinstance(self.e.outvars[i], DropVar) \
            else [self.fb.size_param(s) for s in self.e.outvars[i].aval.shape]

    def shape_out(self, i):
        return self.fb.shape_of_names(self.dims_out(i))

    def rd(self, i, idx):
        """Read operand ``i`` at index list ``idx`` (scalars ignore the index)."""
        ref = self.ins[i]
        if ref[0] == "scalar":
            return ref[2]
        return f"{ref[2]}[{', '.join(idx)}]"

    def arr(self, i):
        return self.ins[i][2]

    def out(self, i):
        return self.outs[i][1]

    def alloc(self, i, dtype=None, fill=None):
        kind, name = self.outs[i]
        v = self.e.outvars[i]
        dt = _dt(dtype or v.aval.dtype)
        if kind == "scalar" or (kind == "drop" and not v.aval.shape):
            return
        if fill is None:
            self.emit(f"{name} = np.empty({self.shape_out(i)}, {dt})")
        else:
            self.emit(f"{name} = np.full({self.shape_out(i)}, {fill}, {dt})")

    def wr(self, i, idx, value):
        kind, name = self.outs[i]
        if kind == "scalar" or (kind == "drop" and not self.e.outvars[i].aval.shape):
            self.emit(f"{name} = {value}")
        else:
            self.emit(f"{name}[{', '.join(idx)}] = {value}")

    def prod(self, names):
        return " * ".join(names) if names else "1"

    def lit(self, v, dtype):
        return self.fb.lit(v, dtype)

    def cast(self, x, dtype):
        return self.fb.cast(x, dtype)


# =====================================================================================
# Opaque lowering rules
# =====================================================================================

def _op_dot_general(ctx):
    x, y = ctx.invar(0), ctx.invar(1)
    o = ctx.outvar(0)
    (xc, yc), (xb, yb) = ctx.p["dimension_numbers"]
    xr, yr = len(x.aval.shape), len(y.aval.shape)
    xf = [i for i in range(xr) if i not in xc and i not in xb]
    yf = [i for i in range(yr) if i not in yc and i not in yb]
    dx, dy = ctx.dims_in(0), ctx.dims_in(1)
    dt = o.aval.dtype
    blas = ((dt.kind == "f" or (dt.kind == "c" and x.aval.dtype == dt == y.aval.dtype))
            and xr > 0 and yr > 0 and o.aval.shape)
    if not blas:
        _dot_loops(ctx, xc, yc, xb, yb, xf, yf, dx, dy)
        return
    B = ctx.prod([dx[i] for i in xb])
    M = ctx.prod([dx[i] for i in xf])
    K = ctx.prod([dx[i] for i in xc])
    N = ctx.prod([dy[i] for i in yf])
    X, Y, O = ctx.arr(0), ctx.arr(1), ctx.out(0)
    fb = ctx.fb
    # complex: numba_complex's zgemm/cgemm of the same OpenBLAS (one thread)
    gemm = "cmatmul_into" if dt.kind == "c" else "matmul_into"
    fb.mod.imports_runtime.add(gemm)

    single = B == "1"          # no batch: 2-D operands, no reshape when they are 2-D already

    def view(name, rank, first, second, groups):
        """``name`` as (B,) first x second; ``groups``: how many of its axes make ``first``
        and ``second`` (a rank-2 array is its own view only when that is one and one: a
        (4, 4) output of a (1, 6) @ (6, 16) product is not)."""
        if single:
            return name if rank == 2 and groups == (1, 1) else \
                f"{name}.reshape(({first}, {second}))"
        return f"{name}.reshape(({B}, {first}, {second}))"

    def operand(name, order_mk, order_km, rank, first, second, base, groups):
        """A (B, first, second) view of ``name``, transposed if its axes are (B, second, first)."""
        if order_mk == list(range(rank)):
            return view(name, rank, first, second, groups), False
        if order_km == list(range(rank)):
            return view(name, rank, second, first, groups[::-1]), True
        # a transposed copy (explicit loops: np.transpose + ascontiguousarray costs Numba
        # seconds of compile time)
        t = fb.tmp(base)
        d = dx if name == X else dy
        dt_ = x.aval.dtype if name == X else y.aval.dtype
        ctx.emit(f"{t} = np.empty({fb.shape_of_names([d[i] for i in order_mk])}, {_dt(dt_)})")
        with ctx.loops([d[i] for i in order_mk]) as J:
            src = [None] * rank
            for k, i in enumerate(order_mk):
                src[i] = J[k]
            ctx.emit(f"{t}[{', '.join(J)}] = {name}[{', '.join(src)}]")
        return view(t, rank, first, second, groups), False

    xa, xt = operand(X, list(xb) + xf + list(xc), list(xb) + list(xc) + xf, xr, M, K, "xd",
                     (len(xf), len(xc)))
    ya, yt = operand(Y, list(yb) + list(yc) + yf, list(yb) + yf + list(yc), yr, K, N, "yd",
                     (len(yc), len(yf)))
    # which operands BLAS reads transposed (threads: blas_pool, at run time)
    flags = int(xt) + 2 * int(yt)
    ctx.alloc(0)
    if single:
        ov = view(O, len(o.aval.shape), M, N, (len(xf), len(yf)))
        ctx.emit(f"{gemm}({xa}, {ya}, {ov}, np.int64({flags}))")
        return
    xv, yv = fb.tmp("a"), fb.tmp("b")
    ctx.emit(f"{xv} = {xa}")
    ctx.emit(f"{yv} = {ya}")
    ov = fb.tmp("o")
    ctx.emit(f"{ov} = {O}.reshape(({B}, {M}, {N}))")
    b = fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"{gemm}({xv}[{b}], {yv}[{b}], {ov}[{b}], np.int64({flags}))")


def _dot_loops(ctx, xc, yc, xb, yb, xf, yf, dx, dy):
    o = ctx.outvar(0)
    dt = o.aval.dtype
    acc_dt = np.bool_ if dt == np.bool_ else _acc_dtype(dt)
    if dt.kind == "u":
        acc_dt = np.int64
    ctx.alloc(0)
    sizes_b = [dx[i] for i in xb]
    sizes_f = [dx[i] for i in xf] + [dy[i] for i in yf]
    with ctx.loops(sizes_b + sizes_f) as oi:
        bi, mi, ni = oi[:len(xb)], oi[len(xb):len(xb) + len(xf)], oi[len(xb) + len(xf):]
        acc = ctx.fb.tmp("acc")
        ctx.emit(f"{acc} = {ctx.lit(0, acc_dt)}")
        with ctx.loops([dx[i] for i in xc]) as ki:
            xi = [None] * len(dx)
            yi = [None] * len(dy)
            for k, a in enumerate(xb):
                xi[a] = bi[k]
            for k, a in enumerate(yb):
                yi[a] = bi[k]
            for k, a in enumerate(xf):
                xi[a] = mi[k]
            for k, a in enumerate(yf):
                yi[a] = ni[k]
            for k, (a, b) in enumerate(zip(xc, yc)):
                xi[a] = ki[k]
                yi[b] = ki[k]
            xv, yv = ctx.rd(0, xi), ctx.rd(1, yi)
            if acc_dt == np.bool_:
                ctx.emit(f"{acc} = {acc} | ({xv} & {yv})")
            elif (dt.kind == "f" and dt != acc_dt
                  and ctx.invar(0).aval.dtype == dt == ctx.invar(1).aval.dtype):
                # numpy's (BLAS's) float32 dot rounds each product to float32 (1e30 * 1e30
                # is inf, not 1e60) and sums the products in the wider accumulator
                ctx.emit(f"{acc} += {ctx.cast(f'{xv} * {yv}', acc_dt)}")
            else:
                ctx.emit(f"{acc} += {ctx.cast(xv, acc_dt)} * {ctx.cast(yv, acc_dt)}")
        ctx.wr(0, oi, ctx.cast(acc, dt))


def _op_cumulative(kind):
    def rule(ctx):
        x = ctx.invar(0)
        dt = x.aval.dtype
        if not x.aval.shape:
            ctx.wr(0, [], ctx.rd(0, []))
            return
        axis, reverse = ctx.p["axis"], ctx.p["reverse"]
        ctx.alloc(0)
        sizes = ctx.dims_in(0)
        with ctx.loops(sizes, reverse_at=axis if reverse else None) as I:
            v = ctx.rd(0, I)
            first = f"{I[axis]} == {sizes[axis]} - 1" if reverse else f"{I[axis]} == 0"
            P = list(I)
            P[axis] = f"{I[axis]} + 1" if reverse else f"{I[axis]} - 1"
            prev = f"{ctx.out(0)}[{', '.join(P)}]"
            if kind == "sum":
                comb = f"{prev} + {v}"
            elif kind == "prod":
                comb = f"{prev} * {v}"
            elif dt.kind == "c":       # numpy's maximum.accumulate: maximum(prev, v)
                comb = f"{_helper(ctx, f'c{kind}')}({prev}, {v})"
            else:
                cmp = ">=" if kind == "max" else "<="     # ties: the later element (numpy: ±0)
                cond = f"({v} {cmp} {prev})" + (f" | ({v} != {v})" if dt.kind == "f" else "")
                comb = _sel(_EwCtx(ctx.fb, {}, dt, [], I), cond, v, prev)
            with ctx.block(f"if {first}:"):
                ctx.wr(0, I, v)
            with ctx.block("else:"):
                ctx.wr(0, I, ctx.cast(comb, dt) if dt != np.float64 else comb)
    return rule


def _op_sort(arg):
    def rule(ctx):
        x = ctx.invar(0)
        if not x.aval.shape:
            ctx.wr(0, [], ctx.rd(0, []) if not arg else "0")
            return
        d = ctx.p["dimension"]
        sizes = ctx.dims_in(0)
        others = [s for k, s in enumerate(sizes) if k != d]
        ctx.alloc(0)
        lane = ctx.fb.tmp("lane")
        with ctx.loops(others) as J:
            def full(k):
                I = list(J)
                I.insert(d, k)
                return I
            ctx.emit(f"{lane} = np.empty({sizes[d]}, {_dt(x.aval.dtype)})")
            kk = ctx.fb.tmp("k")
            with ctx.block(f"for {kk} in range({sizes[d]}):"):
                ctx.emit(f"{lane}[{kk}] = {ctx.rd(0, full(kk))}")
            res = ctx.fb.tmp("s")
            fn = "argsort_lane" if arg else "sort_lane"
            ctx.fb.mod.imports_runtime.add(fn)
            ctx.emit(f"{res} = {fn}({lane})")
            with ctx.block(f"for {kk} in range({sizes[d]}):"):
                ctx.wr(0, full(kk), f"{res}[{kk}]")
    return rule


def _op_argext(kind):
    def rule(ctx):
        x = ctx.invar(0)
        axis = ctx.p["axis"]
        sizes = ctx.dims_in(0)
        kept = [s for k, s in enumerate(sizes) if k != axis]
        it = np.dtype(ctx.p["index_dtype"])
        ctx.alloc(0)
        cmp = ">" if kind == "max" else "<"
        cmp_c = "gt" if kind == "max" else "lt"
        with ctx.loops(kept) as J:
            def full(k):
                I = list(J)
                I.insert(axis, k)
                return I
            best, bi, kk, v = (ctx.fb.tmp(p) for p in ("best", "bi", "k", "v"))
            with ctx.block(f"if {sizes[axis]} == 0:"):
                ctx.wr(0, J, ctx.lit(0, it))
            with ctx.block("else:"):
                ctx.emit(f"{best} = {ctx.rd(0, full('0'))}")
                ctx.emit(f"{bi} = 0")
                with ctx.block(f"for {kk} in range(1, {sizes[axis]}):"):
                    ctx.emit(f"{v} = {ctx.rd(0, full(kk))}")
                    cond = f"({v} {cmp} {best})"
                    if x.aval.dtype.kind == "f":
                        cond = f"{cond} or ({v} != {v} and {best} == {best})"
                    elif x.aval.dtype.kind == "c":
                        # numpy: lexicographic; the first NaN (in either part) is the extreme
                        isnan = _helper(ctx, "cisnan")
                        cond = (f"(not {isnan}({best})) and ({_helper(ctx, f'c{cmp_c}')}"
                                f"({v}, {best}) or {isnan}({v}))")
                    with ctx.block(f"if {cond}:"):
                        ctx.emit(f"{best} = {v}")
                        ctx.emit(f"{bi} = {kk}")
                ctx.wr(0, J, ctx.cast(bi, it))
    return rule


def _gather_indices(ctx, reads, xdims):
    """Clamped integer index expressions (clip_index rule) of the index reads ``reads``."""
    ctx.fb.mod.imports_runtime.add("clip_index")
    out = []
    for a, rd in enumerate(reads):
        t = ctx.fb.tmp("g")
        ctx.emit(f"{t} = clip_index({rd}, {xdims[a]})")
        out.append(t)
    return out


def _stacked_reads(ctx, k):
    """Index reads of a gather/scatter whose k indices are stacked on operand 1's last axis."""
    return lambda L: [ctx.rd(1, L + [str(a)]) for a in range(k)]


def _emit_gather(ctx, k, lead, reads):
    """A gather over the k leading axes of operand 0; ``reads(L)`` gives the k index
    expressions at lead position ``L``."""
    xd = ctx.dims_in(0)
    ctx.alloc(0)
    nonempty = " and ".join(f"{s} > 0" for s in xd[:k]) or "True"
    with ctx.block(f"if {nonempty}:"):
        with ctx.loops(lead) as L:
            t = _gather_indices(ctx, reads(list(L)), xd)
            with ctx.loops(xd[k:]) as R:
                ctx.wr(0, list(L) + list(R), ctx.rd(0, t + list(R)))
    if ctx.outs[0][0] == "array":
        with ctx.block("else:"):
            ctx.emit(f"{ctx.out(0)}.fill(0)")


def _op_gather(ctx):
    k = ctx.invar(1).aval.shape[-1]
    _emit_gather(ctx, k, ctx.dims_in(1)[:-1], _stacked_reads(ctx, k))


def _op_index_gather(ctx):
    # the k indices read from operands 1..k, of the result's lead shape
    k = len(ctx.e.invars) - 1
    _emit_gather(ctx, k, ctx.dims_in(1), lambda L: [ctx.rd(1 + a, L) for a in range(k)])


def _op_scatter(add):
    def rule(ctx):
        x, idx, upd = ctx.invar(0), ctx.invar(1), ctx.invar(2)
        k = idx.aval.shape[-1]
        xd = ctx.dims_in(0)
        idd = ctx.dims_in(1)
        lead = idd[:-1]
        trail = xd[k:]
        O = ctx.out(0)
        ctx.emit(f"{O} = {ctx.arr(0)}.copy()")
        nonempty = " and ".join(f"{s} > 0" for s in xd[:k]) or "True"
        with ctx.block(f"if {nonempty}:"):
            with ctx.loops(lead) as L:
                t = _gather_indices(ctx, _stacked_reads(ctx, k)(list(L)), xd)
                with ctx.loops(trail) as R:
                    tgt = f"{O}[{', '.join(t + list(R))}]"
                    u = ctx.rd(2, list(L) + list(R))
                    ctx.emit(f"{tgt} = {tgt} + {u}" if add else f"{tgt} = {u}")
    return rule


def _clamped_starts(ctx, start_refs, xdims, wdims):
    out = []
    for s, n, w in zip(start_refs, xdims, wdims):
        t = ctx.fb.tmp("st")
        ctx.emit(f"{t} = min(max(np.int64({s}), 0), {n} - {w})")
        out.append(t)
    return out


def _op_dynamic_slice(ctx):
    x = ctx.invar(0)
    r = len(x.aval.shape)
    xd = ctx.dims_in(0)
    od = ctx.dims_out(0)
    starts = _clamped_starts(ctx, [ctx.rd(1 + i, []) for i in range(r)], xd, od)
    ctx.alloc(0)
    with ctx.loops(od) as I:
        ctx.wr(0, I, ctx.rd(0, [f"{s} + {i}" for s, i in zip(starts, I)]))


def _op_dynamic_update_slice(ctx):
    x = ctx.invar(0)
    r = len(x.aval.shape)
    xd = ctx.dims_in(0)
    ud = ctx.dims_in(1)
    O = ctx.out(0)
    if ctx.outs[0][0] == "scalar":
        ctx.wr(0, [], ctx.rd(1, []))
        return
    starts = _clamped_starts(ctx, [ctx.rd(2 + i, []) for i in range(r)], xd, ud)
    ctx.emit(f"{O} = {ctx.arr(0)}.copy()")
    with ctx.loops(ud) as I:
        ctx.emit(f"{O}[{', '.join(f'{s} + {i}' for s, i in zip(starts, I))}] = {ctx.rd(1, I)}")


def _op_pad(ctx):
    x = ctx.invar(0)
    cfg = ctx.p["padding_config"]
    if not x.aval.shape:
        ctx.wr(0, [], ctx.rd(0, []))
        return
    xd = ctx.dims_in(0)
    od = ctx.dims_out(0)
    los = [ctx.fb.size_param(lo) for lo, hi, it in cfg]
    its = [ctx.fb.size_param(it) for lo, hi, it in cfg]
    ctx.alloc(0, fill=ctx.rd(1, []))
    with ctx.loops(xd) as I:
        pos = []
        for i, lo, it in zip(I, los, its):
            t = ctx.fb.tmp("p")
            ctx.emit(f"{t} = {lo} + {i} * ({it} + 1)")
            pos.append(t)
        cond = " and ".join(f"0 <= {p} < {n}" for p, n in zip(pos, od))
        with ctx.block(f"if {cond}:"):
            ctx.wr(0, pos, ctx.rd(0, I))


def _op_concatenate(ctx):
    ax = ctx.p["dimension"]
    off = ctx.fb.tmp("off")
    ctx.alloc(0)
    ctx.emit(f"{off} = 0")
    for i in range(len(ctx.e.invars)):
        d = ctx.dims_in(i)
        with ctx.loops(d) as I:
            J = list(I)
            J[ax] = f"{off} + {I[ax]}"
            ctx.wr(0, J, ctx.rd(i, I))
        ctx.emit(f"{off} += {d[ax]}")


def _batched(ctx, i, nbatch):
    """A local holding the ``(B, ...)`` reshape of operand i's batch dims; B as text."""
    d = ctx.dims_in(i)
    B = ctx.prod(d[:nbatch])
    t = ctx.fb.tmp("m")
    ctx.emit(f"{t} = {ctx.arr(i)}.reshape(({B}, {', '.join(d[nbatch:])}))")
    return t, B


def _op_cholesky(ctx):
    ctx.fb.mod.imports_runtime.add("cholesky_into")
    a = ctx.invar(0)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    ctx.alloc(0)
    d = ctx.dims_in(0)
    b, L = ctx.fb.tmp("bi"), ctx.fb.tmp("m")
    ctx.emit(f"{L} = {ctx.out(0)}.reshape(({B}, {d[-2]}, {d[-1]}))")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"cholesky_into({A}[{b}], {L}[{b}])")


def _op_triangular_solve(ctx):
    ctx.fb.mod.imports_runtime.add("trisolve")
    a = ctx.invar(0)
    p = ctx.p
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    Bm, _ = _batched(ctx, 1, nb)
    db = ctx.dims_in(1)
    ctx.alloc(0)
    Ov = ctx.fb.tmp("m")
    ctx.emit(f"{Ov} = {ctx.out(0)}.reshape(({B}, {db[-2]}, {db[-1]}))")
    b = ctx.fb.tmp("bi")
    flags = (int(p["lower"]) | 2 * int(p["transpose_a"]) | 4 * int(p["unit_diagonal"])
             | 8 * int(not p["left_side"]))
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"trisolve({A}[{b}], {Bm}[{b}], {Ov}[{b}], np.int64({flags}))")


def _op_solve(ctx):
    ctx.fb.mod.imports_runtime.add("solve_into")
    a = ctx.invar(0)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    Bm, _ = _batched(ctx, 1, nb)
    db = ctx.dims_in(1)
    ctx.alloc(0)
    Ov = ctx.fb.tmp("m")
    ctx.emit(f"{Ov} = {ctx.out(0)}.reshape(({B}, {db[-2]}, {db[-1]}))")
    b = ctx.fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"solve_into({A}[{b}], {Bm}[{b}], {Ov}[{b}])")


def _op_slogdet(ctx):
    ctx.fb.mod.imports_runtime.add("slogdet_2d")
    a = ctx.invar(0)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    s, l = ctx.fb.tmp("s"), ctx.fb.tmp("l")
    if nb == 0:
        ctx.emit(f"{s}, {l} = slogdet_2d({A}[0])")
        ctx.wr(0, [], ctx.cast(s, ctx.outvar(0).aval.dtype))
        ctx.wr(1, [], ctx.cast(l, ctx.outvar(1).aval.dtype))
        return
    ctx.alloc(0)
    ctx.alloc(1)
    b = ctx.fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"{s}, {l} = slogdet_2d({A}[{b}])")
        for i, val in ((0, s), (1, l)):
            if ctx.outs[i][0] == "array":
                ctx.emit(f"{ctx.out(i)}.reshape(({B},))[{b}] = {val}")


def _op_eigh(ctx):
    # upper=True: LAPACK's 'U' path on the operand's conjugate transpose, as eigh_p's impl
    # (numpy's eigh(x, 'U') signs); the flag is a literal of the kernel's source, so of its
    # cache key: the 'L' and 'U' kernels of one shape are two kernels
    a = ctx.invar(0)
    upper = bool(ctx.p.get("upper", False))
    helper = "eigh_into_c" if a.aval.dtype.kind == "c" else "eigh_into"
    ctx.fb.mod.imports_runtime.add(helper)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    d = ctx.dims_in(0)
    for i in range(2):
        if ctx.outs[i][0] == "drop":
            shp = d[:-1] if i == 0 else d
            ctx.emit(f"{ctx.out(i)} = np.empty({ctx.fb.shape_of_names(shp)}, "
                     f"{_dt(ctx.outvar(i).aval.dtype)})")
        else:
            ctx.alloc(i)
    b = ctx.fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"{helper}({A}[{b}], {ctx.out(0)}.reshape(({B}, {d[-1]}))[{b}], "
                 f"{ctx.out(1)}.reshape(({B}, {d[-2]}, {d[-1]}))[{b}], {upper})")


# ---------------------------------------------------------------------- control flow

def _sub_jaxpr(p):
    return p.jaxpr if isinstance(p, ClosedJaxpr) else p


def _call(fn, args):
    return f"{fn.name}({', '.join(args)}«SZ»)" if args else f"{fn.name}(«SZ0»)"


def _carry_init(ctx, ref, aval):
    if ref[0] == "scalar":
        return ctx.cast(ref[2], aval.dtype)
    return ref[2]


def _op_cond(ctx):
    branches = ctx.p["branches"]
    fns = [ctx.fb.mod.sub_function(_sub_jaxpr(b), "branch") for b in branches]
    ops = [r[2] for r in ctx.ins[1:]]
    k = ctx.fb.tmp("k")
    ctx.emit(f"{k} = min(max(np.int64({ctx.rd(0, [])}), 0), {len(fns) - 1})")
    outs = [n for _, n in ctx.outs]
    tgt = ", ".join(outs) + ("," if len(outs) == 1 else "")
    for i, fn in enumerate(fns):
        hdr = "if" if i == 0 else "elif"
        if i == len(fns) - 1:
            hdr_line = "else:" if i > 0 else "if True:"
        else:
            hdr_line = f"{hdr} {k} == {i}:"
        with ctx.block(hdr_line):      # no results: a cond kept for its effects
            ctx.emit(f"{tgt} = {_call(fn, ops)}" if outs else _call(fn, ops))


def _op_while(ctx):
    p = ctx.p
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cf = ctx.fb.mod.sub_function(_sub_jaxpr(p["cond_jaxpr"]), "cond")
    bf = ctx.fb.mod.sub_function(_sub_jaxpr(p["body_jaxpr"]), "body")
    refs = ctx.ins
    cc = [r[2] for r in refs[:nc]]
    bc = [r[2] for r in refs[nc:nc + nb]]
    carry = [n for _, n in ctx.outs]
    for name, ref, v in zip(carry, refs[nc + nb:], ctx.e.invars[nc + nb:]):
        ctx.emit(f"{name} = {_carry_init(ctx, ref, v.aval)}")
    tgt = ", ".join(carry) + ("," if len(carry) == 1 else "")
    maxs = p.get("max_steps")
    step = ctx.fb.tmp("step")
    ctx.emit(f"{step} = 0")
    pr = ctx.fb.tmp("pred")
    with ctx.block("while True:"):
        if maxs is not None:
            with ctx.block(f"if {step} >= {int(maxs)}:"):
                ctx.emit("break")
        ctx.emit(f"({pr},) = {_call(cf, cc + carry)}")
        with ctx.block(f"if not {pr}:"):
            ctx.emit("break")
        ctx.emit(f"{tgt} = {_call(bf, bc + carry)}")
        ctx.emit(f"{step} += 1")


def _op_scan(ctx):
    p = ctx.p
    nconst, ncarry = p["num_consts"], p["num_carry"]
    fn = ctx.fb.mod.sub_function(_sub_jaxpr(p["jaxpr"]), "scan")
    refs = ctx.ins
    consts = [r[2] for r in refs[:nconst]]
    inits = refs[nconst:nconst + ncarry]
    xs = refs[nconst + ncarry:]
    outs = ctx.outs
    carry = [n for _, n in outs[:ncarry]]
    ys = outs[ncarry:]
    for name, ref, v in zip(carry, inits, ctx.e.invars[nconst:nconst + ncarry]):
        ctx.emit(f"{name} = {_carry_init(ctx, ref, v.aval)}")
    length = ctx.fb.size_param(p["length"])
    for i, (kind, name) in enumerate(ys):
        v = ctx.e.outvars[ncarry + i]
        ctx.emit(f"{name} = np.empty({ctx.shape_out(ncarry + i)}, {_dt(v.aval.dtype)})")
    t, tt = ctx.fb.tmp("t"), ctx.fb.tmp("tt")
    ytmp = [ctx.fb.tmp("y") for _ in ys]
    tgt = carry + ytmp
    tgt_txt = ", ".join(tgt) + ("," if len(tgt) == 1 else "")
    with ctx.block(f"for {tt} in range({length}):"):
        ctx.emit(f"{t} = {length} - 1 - {tt}" if p["reverse"] else f"{t} = {tt}")
        xargs = [f"{r[2]}[{t}]" for r in xs]
        if tgt:
            ctx.emit(f"{tgt_txt} = {_call(fn, consts + carry + xargs)}")
        else:
            ctx.emit(f"{_call(fn, consts + carry + xargs)}")
        for (kind, name), y in zip(ys, ytmp):
            ctx.emit(f"{name}[{t}] = {y}")





_IDENT = lambda ctx, a: a[0]   # noqa: E731

# elementwise: cost 8 for the vectorizable transcendentals, 20 for libm calls, 4 for a
# division or square root; code_size is the inlined size of numba_math's version
_ew("neg", lambda ctx, a: f"-{a[0]}")
_ew("sign", _ew_sign)
_ew("floor", _unary_np("floor"))
_ew("ceil", _unary_np("ceil"))
_ew("round", _unary_np("rint"))
_ew("is_finite", _ew_is_finite, bool_native=True)
_ew("not", _ew_not, bool_native=True)
_ew("exp", _numpy_complex("cexp", _fast("exp", "exp"), fast=True), cost=8, code_size=12)
_ew("log", _numpy_complex("clog", _fast("log", "log")), cost=8, code_size=14)
_ew("tanh", _numpy_complex("ctanh", _fast("tanh", "tanh")), cost=8, code_size=16)
_ew("sin", _numpy_complex("csin", _fast("sin", "sin")), cost=8, code_size=40)
_ew("cos", _numpy_complex("ccos", _fast("cos", "cos")), cost=8, code_size=40)
_ew("expm1", _numpy_complex("cexpm1", _fast("expm1", "expm1")), cost=8, code_size=14)
_ew("log1p", _fast("log1p", "log1p"), cost=8, code_size=16)
_ew("logistic", _ew_logistic, cost=8, code_size=12)
_ew("exp2", _ew_exp2, cost=20)
for _n, _np_name in [("tan", "tan"), ("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"),
                     ("sinh", "sinh"), ("cosh", "cosh"), ("asinh", "arcsinh"),
                     ("acosh", "arccosh"), ("atanh", "arctanh"), ("cbrt", "cbrt")]:
    _ew(_n, _numpy_complex(_NUMPY_COMPLEX.get(_n), _unary_np(_np_name)), cost=20)
_ew("sqrt", _unary_np("sqrt"), cost=4)
_ew("rsqrt", _ew_rsqrt, cost=4)
_ew("abs", _ew_abs)
_ew("integer_pow", _ew_integer_pow)
for _n, _op in [("add", "+"), ("sub", "-"), ("mul", "*")]:
    _ew(_n, _binop(_op))
_ew("div", _ew_div, cost=4)
_ew("pow", _ew_pow, cost=20)
_ew("max", _ew_max, bool_native=True)
_ew("min", _ew_min, bool_native=True)
_ew("atan2", lambda ctx, a: f"np.arctan2({a[0]}, {a[1]})", cost=20)
_ew("mod", _ew_mod, cost=20)
_ew("floor_divide", _ew_floor_divide, cost=20)
for _n, _op, _h in [("eq", "==", None), ("ne", "!=", None), ("lt", "<", "clt"),
                    ("le", "<=", "cle"), ("gt", ">", "cgt"), ("ge", ">=", "cge"),
                    ("and", "&", None), ("or", "|", None), ("xor", "^", None)]:
    _ew(_n, _ew_compare(_op, _h), bool_native=True)
# complex parts and constructors (the results are cast to the output dtype by ew_expr)
_ew("real", lambda ctx, a: f"{_par(a[0])}.real")
_ew("imag", lambda ctx, a: f"{_par(a[0])}.imag")
_ew("conj", lambda ctx, a: f"np.conj({a[0]})")
_ew("complex", lambda ctx, a: f"complex({a[0]}, {a[1]})")
_ew("select", _ew_select, bool_native=True)
_ew("convert_element_type", _ew_convert, bool_native=True)
_ew("stop_gradient", _IDENT, bool_native=True)
_ew("name", _IDENT, bool_native=True)          # checkpoint_name's label: the identity
_ew("iota", _ew_iota, dims=_no_dims)
_ew("_copy", _IDENT, bool_native=True)

# views and reshapes: index arithmetic in the consumer's loop
_lowering("broadcast_in_dim", "view", dims=_dim_bid, moves=True)
_lowering("transpose", "view", dims=_dim_transpose, moves=True)
_lowering("rev", "view", dims=_dim_same, moves=True)
_lowering("roll", "view", dims=_dim_same, moves=True)
_lowering("slice", "view", dims=_no_dims, moves=True)
_lowering("reshape", "reshape", dims=_no_dims, moves=True)
_lowering("squeeze", "reshape", dims=_dim_squeeze, moves=True)
_lowering("expand_dims", "reshape", dims=_dim_expand, moves=True)

# reductions: accumulators of the loop nest that computes their operand
for _n in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
           "reduce_or"):
    _lowering(_n, "reduce", dims=_dim_reduce)

# opaque: statements of their own
_lowering("dot_general", "opaque", emit=_op_dot_general, dims=_dim_dot)
for _n in ("sum", "prod", "max", "min"):
    _lowering(f"cum{_n}", "opaque", emit=_op_cumulative(_n), dims=_dim_same)
_lowering("sort", "opaque", emit=_op_sort(False), dims=_dim_same)
_lowering("argsort", "opaque", emit=_op_sort(True), dims=_dim_same)
_lowering("argmax", "opaque", emit=_op_argext("max"), dims=_dim_reduce)
_lowering("argmin", "opaque", emit=_op_argext("min"), dims=_dim_reduce)
_lowering("gather", "opaque", emit=_op_gather, dims=_dim_gather)
_lowering("index_gather", "opaque", emit=_op_index_gather, dims=_dim_index_gather)
_lowering("scatter", "opaque", emit=_op_scatter(False), dims=_dim_scatter)
_lowering("scatter_add", "opaque", emit=_op_scatter(True), dims=_dim_scatter)
_lowering("dynamic_slice", "opaque", emit=_op_dynamic_slice, dims=_no_dims)
_lowering("dynamic_update_slice", "opaque", emit=_op_dynamic_update_slice,
          dims=_dim_first_to_out)
_lowering("pad", "opaque", emit=_op_pad, dims=_no_dims, moves=True)
_lowering("concatenate", "opaque", emit=_op_concatenate, dims=_dim_concat, moves=True)
_lowering("cholesky", "opaque", emit=_op_cholesky, dims=_dim_same)
_lowering("triangular_solve", "opaque", emit=_op_triangular_solve, dims=_dim_solve)
_lowering("solve", "opaque", emit=_op_solve, dims=_dim_solve)
_lowering("slogdet", "opaque", emit=_op_slogdet, dims=_dim_slogdet)
_lowering("eigh", "opaque", emit=_op_eigh, dims=_dim_eigh)
_lowering("cond", "opaque", emit=_op_cond, control=True)
_lowering("while", "opaque", emit=_op_while, control=True)
_lowering("scan", "opaque", emit=_op_scan, control=True)

# records registered by modules of their own, before the derived sets below
from . import numba_callback  # noqa: E402,F401  (pure_callback's lowering)
from . import numba_fft  # noqa: E402,F401  (fft's lowering: rocket-fft)

CONTROL_FLOW = frozenset(n for n, r in LOWERINGS.items() if r.control)

#: Every primitive name this backend lowers (call-like primitives that the pass pipeline
#: inlines are not here: see can_lower).
LOWERED_PRIMITIVES = frozenset(LOWERINGS) - {"_copy"}
#: Registered primitives this backend knows it cannot lower (kept empty on purpose).
KNOWN_GAPS = frozenset()


def can_lower(prim):
    """Whether a program using ``prim`` (a Primitive) lowers: it has a lowering record, or
    the pass pipeline inlines it (an ``inline`` rule, or call-like and not control flow)."""
    return prim.name in LOWERED_PRIMITIVES or getattr(prim, "inline", None) is not None or (
        getattr(prim, "call_like", False) and prim.name not in CONTROL_FLOW)


# =====================================================================================
# Entry point
# =====================================================================================

def _uses(jaxpr, name):
    for e in jaxpr.eqns:
        if e.primitive.name == name:
            return True
        for p in e.params.values():
            for q in (p if isinstance(p, tuple) else (p,)):
                if isinstance(q, (Jaxpr, ClosedJaxpr)) and _uses(_sub_jaxpr(q), name):
                    return True
    return False


def _has_arrays(jaxpr):
    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        if v.aval.shape:
            return True
    for e in jaxpr.eqns:
        if any(v.aval.shape for v in e.outvars):
            return True
        for p in e.params.values():
            for q in (p if isinstance(p, tuple) else (p,)):
                if isinstance(q, (Jaxpr, ClosedJaxpr)) and _has_arrays(_sub_jaxpr(q)):
                    return True
    return False


def lower(closed, parallel_threshold=None, dynamic_dims=True):
    """Lower a finished ClosedJaxpr (the output of
    :func:`autodiff.transforms.passes.run_pipeline`) to a :class:`Program`.

    ``dynamic_dims`` says which sizes the kernel reads at run time: ``True`` every size and
    literal (one shape-generic kernel for all sizes); an empty set none (sizes, size-valued
    params and literals are constants of the source, tiny arrays live in scalars); a set
    of ``(input position, axis)`` pairs those input dimensions and everything not tied to
    a fixed-size input dimension (the kernel after a dimension changed size).
    """
    if isinstance(closed, Jaxpr):
        closed = ClosedJaxpr(closed, [])
    if parallel_threshold is None:
        parallel_threshold = config.jit_parallel_threshold
    if _uses(closed.jaxpr, "dot_general"):
        # BLAS runs its own thread pool; OpenMP threads of prange loops next to it spin and
        # compete for the same cores (NUMBA_NOTES: an MLP with prange ran ~10x slower)
        parallel_threshold = float("inf")
    mod = _Module(parallel_threshold)
    mod.dynamic_dims = dynamic_dims if dynamic_dims is True else frozenset(dynamic_dims)
    mod.static = mod.dynamic_dims is not True and not mod.dynamic_dims
    mod.param_literals = _has_arrays(closed.jaxpr) and not mod.static
    fb = _Fn(mod, closed.jaxpr, "kernel", top=True)
    fb.build()
    source = mod.source(fb)
    params = []
    for v in list(closed.jaxpr.constvars) + list(closed.jaxpr.invars):
        if v.aval.shape:
            params.append(("array", v.aval.dtype, len(v.aval.shape)))
        else:
            params.append(("scalar", v.aval.dtype))
    if mod.sizes:
        params.append(("sizes",))
    # The parameter types are part of the kernel's identity (its cache key is the hash of
    # this text): loop nests live in shared piece modules whose text does not say which
    # dtypes they will be compiled for.
    sig = ", ".join(f"{_SHORT.get(_dtname(p[1]), _dtname(p[1]))}[{p[2]}d]" if p[0] == "array"
                    else _SHORT.get(_dtname(p[1]), _dtname(p[1])) if p[0] == "scalar"
                    else "sizes" for p in params)
    source = f"# kernel parameters: ({sig})\n" + source
    return Program(source, "kernel", params, np.array(mod.sizes, dtype=np.int64),
                   list(closed.consts), [v.aval for v in closed.jaxpr.outvars], mod.parallel,
                   closed, mod.pieces)

