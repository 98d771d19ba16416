"""The Numba-CPU text of elementwise primitives: the default from a primitive's lowering
facts, and one record per primitive whose text differs.

A primitive whose facts name a numpy function (``LoweringFacts.numpy_name``) needs no
record here: its expression is ``np.<numpy_name>(x)`` (:func:`default_expression`), the
vectorizable ``numba_math`` version instead where there is one (:data:`FAST_MATH`, while
the module's :data:`FAST_MATH_BUDGET` lasts), and for complex operands numpy's algorithm
from ``numba_complex`` where that module has one named by the convention
``c`` + the function's C99 name (``cacosh`` for ``arccosh``, looked up among its exports;
``<name>_f64``/``_f32`` its vectorizable version), else Numba's own. The records below
are the primitives whose text is something else: operators, numpy's semantics Numba
lacks (``sign``, ``max``, integer powers, float ``mod``), and primitives with no numpy
function. A primitive with neither a record nor a numpy function has no CPU text: the
emitter refuses a program using it with an error naming it.

>>> from autodiff.backends.numba_cpu_expressions import expression_rule
>>> expression_rule("asinh") is not None, expression_rule("no_such_primitive")
(True, None)
"""
import ast
import os

import numpy as np

from ..core import primitives
from .complex_math import complex_name
from .numba_emitter import EwCtx, dt_text, dtype_name, integer_pow_text, is_complex, is_float
from .plan import LOWERINGS, parenthesized, register_elementwise

__all__ = ["FAST_MATH", "FAST_MATH_BUDGET", "HAVE_SELECT", "COMPLEX_HELPERS",
           "COMPLEX_FAST_SIZE", "import_helper", "select_text", "div_text", "math_call",
           "default_expression", "expression_rule", "expression", "complex_fast"]

# The vectorizable transcendentals of numba_math, by (name, dtype). Listed here rather than
# read from numba_math so that lowering does not import Numba: the first call of a jitted
# function lowers, then runs on the interpreter while Numba is imported and compiles in
# the background. (tests/test_jit_lowering.py checks this list against
# numba_math.FUNCTIONS.)
FAST_MATH = frozenset((name, dt) for name in ("cos", "exp", "expm1", "log", "log1p", "logistic",
                                              "sin", "tanh") for dt in ("float32", "float64"))
HAVE_SELECT = True       # numba_math.select: a branch-free LLVM select

# Past FAST_MATH_BUDGET units of inlined transcendentals in one module (about 30 sin/cos or
# 100 exp), further ones call libm (numpy's scalar functions: exact, not vectorized) so
# that huge programs still compile in seconds (LOOP_BUDGET in plan.py bounds one loop).
FAST_MATH_BUDGET = 1200


def _exported_names(module):
    """The ``__all__`` of backend module ``module``, read from its source without importing
    it (numba_complex loads Numba and registers BLAS symbols: lowering does neither)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), module + ".py"),
              encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__"
                                                for t in node.targets):
            return frozenset(ast.literal_eval(node.value))
    raise AssertionError(f"{module} has no __all__")


# Complex values compute with Numba's native complex64/complex128 (arithmetic, np.exp,
# np.log, np.sqrt, np.sin, ..., np.arctanh, np.abs); numba_complex supplies what must
# follow numpy where Numba differs: division (Numba raises on a zero divisor), the
# lexicographic order with numpy's NaN rules, sign, integer powers, the functions whose
# algorithms differ, complex GEMM. A real program's module never imports it (its names
# go to an import line of their own).
COMPLEX_HELPERS = _exported_names("numba_complex")
# numba_complex's vectorizable complex exp: numba_math's exp, cos and sin inlined
COMPLEX_FAST_SIZE = 92
_COMPLEX_SUFFIX = {"complex128": "_f64", "complex64": "_f32"}


def import_helper(ctx, name):
    """Import ``name`` (a numba_runtime or numba_complex helper) into the module."""
    ctx.fb.mod.imports_runtime.add(name)
    return name


def select_text(ctx, c, a, b):
    """``a if c else b`` without a branch (numba_math's LLVM select)."""
    if HAVE_SELECT:
        ctx.fb.mod.imports_math.add("select")
        return f"select({c}, {a}, {b})"
    ctx.fb.mod.imports_runtime.add("select_fallback")
    return f"select_fallback({c}, {a}, {b})"


def div_text(ctx, a, b):
    """``a / b`` in the output dtype: numpy's complex division for complex results."""
    if is_complex(ctx.out_dtype):
        return f"{import_helper(ctx, 'cdiv')}({a}, {b})"
    return f"{a} / {b}"


def math_call(ctx, name, npname, x):
    """The fast vectorizable implementation of primitive ``name`` if numba_math has one,
    else numpy's ``npname``."""
    dt = dtype_name(ctx.out_dtype)
    mod = ctx.fb.mod
    size = LOWERINGS[name].code_size
    if (name, dt) in FAST_MATH and mod.fast_math_used + size <= FAST_MATH_BUDGET:
        mod.fast_math_used += size
        fn = f"{name}_{'f64' if dt == 'float64' else 'f32'}"
        ctx.fb.mod.imports_math.add(fn)
        return f"{fn}({x})"
    return f"np.{npname}({x})"


# =====================================================================================
# The default: the numpy function of the primitive's lowering facts
# =====================================================================================

def default_expression(name, numpy_name):
    """Primitive ``name``'s expression from its numpy function: numba_math's vectorizable
    version of a unary one where it exists, numba_complex's version for complex operands
    where it exists (vectorizable while the module's budget lasts), else ``np.<name>``."""
    helper = complex_name(numpy_name)
    if helper not in COMPLEX_HELPERS:
        helper = None
    fast = helper is not None and helper + "_f64" in COMPLEX_HELPERS

    def expr(ctx, a):
        if helper is not None and is_complex(ctx.out_dtype):
            mod = ctx.fb.mod
            if fast and mod.fast_math_used + COMPLEX_FAST_SIZE <= FAST_MATH_BUDGET:
                mod.fast_math_used += COMPLEX_FAST_SIZE
                suffix = _COMPLEX_SUFFIX[dtype_name(ctx.out_dtype)]
                return f"{import_helper(ctx, helper + suffix)}({a[0]})"
            return f"{import_helper(ctx, helper)}({', '.join(a)})"
        if len(a) == 1:
            return math_call(ctx, name, numpy_name, a[0])
        return f"np.{numpy_name}({', '.join(a)})"
    return expr


_DEFAULTS = {}


def expression_rule(name):
    """The CPU expression rule of elementwise primitive ``name``: its record's, else the
    default its lowering facts give, else None (no CPU text)."""
    low = LOWERINGS.get(name)
    if low is None or low.kind != "elementwise":
        return None
    if low.expr is not None:
        return low.expr
    rule = _DEFAULTS.get(name)
    if rule is None:
        facts = getattr(primitives.get(name), "lowering", None)
        if facts is None or facts.numpy_name is None:
            return None
        rule = _DEFAULTS[name] = default_expression(name, facts.numpy_name)
    return rule


def complex_fast(name):
    """Whether primitive ``name``'s complex default is numba_complex's vectorizable
    version (``cexp_f64``: its code size is :data:`COMPLEX_FAST_SIZE`)."""
    if LOWERINGS[name].expr is not None:
        return False
    facts = getattr(primitives.get(name), "lowering", None)
    return (facts is not None and facts.numpy_name is not None
            and complex_name(facts.numpy_name) + "_f64" in COMPLEX_HELPERS)


def expression(fb, name, args, out_dtype, in_dtypes, idx=(), params=None):
    """The text of elementwise primitive ``name`` over operand texts ``args`` (a
    statement rule combining values with an elementwise operation: a running maximum)."""
    return expression_rule(name)(EwCtx(fb, params or {}, out_dtype, in_dtypes, idx), args)


# =====================================================================================
# The records: primitives whose text is not the default
# =====================================================================================

def _ew_sign(ctx, a):
    x = a[0]
    dt = ctx.out_dtype
    if is_complex(dt):          # numpy 2: z / |z|
        return f"{import_helper(ctx, 'csign')}({x})"
    one = ctx.lit(1, dt)
    if dt == np.bool_:
        return x
    if dt.kind == "u":
        return select_text(ctx, f"{x} > 0", one, ctx.lit(0, dt))
    mone = ctx.lit(-1, dt)       # after the unsigned case: np.uint8(-1) raises OverflowError
    # numpy: sign(±0.) is +0.0 and sign(nan) is nan, so the tail is x only for NaN
    tail = select_text(ctx, f"{x} != {x}", x, ctx.lit(0, dt)) if is_float(dt) else \
        ctx.lit(0, dt)
    return select_text(ctx, f"{x} > 0", one, select_text(ctx, f"{x} < 0", mone, tail))


def _ew_logistic(ctx, a):
    dt = dtype_name(ctx.out_dtype)
    if ("logistic", dt) in FAST_MATH:
        return math_call(ctx, "logistic", None, a[0])
    one = ctx.lit(1, ctx.out_dtype)
    exp = import_helper(ctx, "cexp") if is_complex(ctx.out_dtype) else "np.exp"
    return div_text(ctx, one, f"({one} + {exp}(-{a[0]}))")


def _ew_max(ctx, a):
    x, y = a
    if is_complex(ctx.out_dtype):   # numpy: lexicographic, the first NaN wins
        return f"{import_helper(ctx, 'cmax')}({x}, {y})"
    if is_float(ctx.out_dtype):   # numpy's maximum propagates NaN from either side
        # and, on a tie (0. and -0.), returns its second operand, as does min
        return select_text(ctx, f"({x} > {y}) | ({x} != {x})", x, y)
    return select_text(ctx, f"{x} >= {y}", x, y)


def _ew_min(ctx, a):
    x, y = a
    if is_complex(ctx.out_dtype):
        return f"{import_helper(ctx, 'cmin')}({x}, {y})"
    if is_float(ctx.out_dtype):
        return select_text(ctx, f"({x} < {y}) | ({x} != {x})", x, y)
    return select_text(ctx, f"{x} <= {y}", x, y)


def _float_helper(helper, op):
    """numba_runtime's ``helper`` (numpy's float semantics) for floats, ``op`` else."""
    def rule(ctx, a):
        if is_float(ctx.out_dtype):
            return f"{import_helper(ctx, helper)}({a[0]}, {a[1]})"
        return f"{a[0]} {op} {a[1]}"
    return rule


def _ew_convert(ctx, a):
    new = np.dtype(ctx.params["new_dtype"])
    if new == np.bool_:
        return f"{a[0]} != 0"
    if is_complex(ctx.in_dtypes[0]) and not is_complex(new):
        return f"{dt_text(new)}({parenthesized(a[0])}.real)"   # numpy drops the imaginary part
    return f"{dt_text(new)}({a[0]})"


def _compare(op, helper):
    """A comparison: Python's operator, numpy's lexicographic order for complex operands."""
    def rule(ctx, a):
        if helper is not None and is_complex(ctx.in_dtypes[0]):
            return f"{import_helper(ctx, helper)}({a[0]}, {a[1]})"
        return f"{a[0]} {op} {a[1]}"
    return rule


def _ew_abs(ctx, a):
    dt = ctx.in_dtypes[0]
    if is_complex(dt):           # vectorizable (Numba's complex abs calls libm's hypot)
        return f"{import_helper(ctx, 'cabs' + _COMPLEX_SUFFIX[dtype_name(dt)])}({a[0]})"
    return f"np.abs({a[0]})"


def _ew_pow(ctx, a):
    if is_complex(ctx.out_dtype):    # numpy's npy_cpow (integral exponents, 0 ** b)
        return f"{import_helper(ctx, 'cpow')}({a[0]}, {a[1]})"
    return f"{a[0]} ** {a[1]}"


def _ew_exp2(ctx, a):
    # numba's float32 exp2 fails to lower: compute in float64
    if ctx.out_dtype == np.float32:
        return f"np.exp2(np.float64({a[0]}))"
    return f"np.exp2({a[0]})"


def _binop(op):
    return lambda ctx, a: f"{a[0]} {op} {a[1]}"


def _identity(ctx, a):
    return a[0]


def _tied_to_no_operand(D, e):
    """iota's result dimensions: sizes from its params, no operand's."""


register_elementwise("neg", lambda ctx, a: f"-{a[0]}")
register_elementwise("sign", _ew_sign)
register_elementwise("is_finite", lambda ctx, a: (f"np.isfinite({a[0]})"
                                                  if ctx.in_dtypes[0].kind in "fc" else "True"),
                     bool_native=True)
register_elementwise("not", lambda ctx, a: f"(not {a[0]})" if ctx.out_dtype == np.bool_
                     else f"~{a[0]}", bool_native=True)
register_elementwise("logistic", _ew_logistic)
register_elementwise("exp2", _ew_exp2)
register_elementwise("rsqrt", lambda ctx, a: div_text(ctx, ctx.lit(1, ctx.out_dtype),
                                                      f"np.sqrt({a[0]})"))
register_elementwise("abs", _ew_abs)
register_elementwise("integer_pow", lambda ctx, a: integer_pow_text(
    ctx, a[0], lambda x, y: f"{import_helper(ctx, 'cipow')}({x}, {y})"))
for _n, _op in [("add", "+"), ("sub", "-"), ("mul", "*")]:
    register_elementwise(_n, _binop(_op))
register_elementwise("div", lambda ctx, a: div_text(ctx, a[0], a[1]))
register_elementwise("pow", _ew_pow)
register_elementwise("max", _ew_max, bool_native=True)
register_elementwise("min", _ew_min, bool_native=True)
register_elementwise("mod", _float_helper("mod_f", "%"))
register_elementwise("floor_divide", _float_helper("floor_divide_f", "//"))
for _n, _op, _h in [("eq", "==", None), ("ne", "!=", None), ("lt", "<", "clt"),
                    ("le", "<=", "cle"), ("gt", ">", "cgt"), ("ge", ">=", "cge"),
                    ("and", "&", None), ("or", "|", None), ("xor", "^", None)]:
    register_elementwise(_n, _compare(_op, _h), bool_native=True)
# complex parts and constructors (the results are cast to the output dtype by ew_expr)
register_elementwise("real", lambda ctx, a: f"{parenthesized(a[0])}.real")
register_elementwise("imag", lambda ctx, a: f"{parenthesized(a[0])}.imag")
register_elementwise("conj", lambda ctx, a: f"np.conj({a[0]})")
register_elementwise("complex", lambda ctx, a: f"complex({a[0]}, {a[1]})")
register_elementwise("select", lambda ctx, a: select_text(ctx, a[0], a[1], a[2]),
                     bool_native=True)
register_elementwise("convert_element_type", _ew_convert, bool_native=True)
register_elementwise("stop_gradient", _identity, bool_native=True)
register_elementwise("name", _identity, bool_native=True)   # checkpoint_name's label
register_elementwise("iota", lambda ctx, a: ctx.idx[ctx.params["dimension"]],
                     dims=_tied_to_no_operand)
register_elementwise("_copy", _identity, bool_native=True)   # a copy the planner inserts
