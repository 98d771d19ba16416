"""The CUDA text of elementwise primitives: the default from a primitive's lowering facts,
and one record per primitive whose text differs.

Expressions call math through namespaces the program resolves: ``«M».<name>`` is
``cuda_math`` in kernels and numpy in host statements, ``«C».<name>`` the complex
namespace (``cuda_math``'s ``c`` names in kernels, ``cuda_math.HOST`` on the host). A
primitive whose facts name a numpy function needs no record: its text is
``«M».<numpy_name>(x)`` (cuda_math defines every such name: libdevice on a GPU, numpy
under the simulator) and, for complex operands, ``«C».c<C99 name>(z)`` where cuda_math
has that complex version (``cuda_math.has_complex``); a program with complex values of a
primitive without one runs on the interpreter (``UnsupportedDTypeError``). A record
(:class:`Record`) is one per primitive, real and complex text together: ``expr(ctx,
args)`` reads ``ctx.complex``, and ``complex`` says whether it takes complex values.

>>> from autodiff.backends.numba_cuda_expressions import expression_rule
>>> expression_rule("asinh").complex, expression_rule("floor").complex
(True, False)
"""
import cmath

import numpy as np

from ..core import primitives
from .complex_math import FUNCTIONS, c99_name, complex_name
from .numba_emitter import dt_text, integer_pow_text, is_float

__all__ = ["Record", "EXPRESSIONS", "register_expression", "default_expression",
           "expression_rule", "has_complex", "select_text"]


class Record:
    """One primitive's CUDA record: ``expr(ctx, args)``, an elementwise expression, or
    ``emit(ctx)``, an opaque statement rule; ``complex``: whether it takes complex values
    (else a program with complex values of it runs on the interpreter)."""

    __slots__ = ("expr", "emit", "complex")

    def __init__(self, expr=None, emit=None, complex=False):
        self.expr, self.emit, self.complex = expr, emit, complex


#: name -> Record: the primitives whose CUDA text is not the default of their facts
EXPRESSIONS = {}


def register_expression(name, expr, complex=False):
    """Declare elementwise primitive ``name``'s CUDA expression (see :class:`Record`)."""
    EXPRESSIONS[name] = Record(expr=expr, complex=complex)


def has_complex(numpy_name):
    """Whether cuda_math has the complex version of numpy function ``numpy_name``: numpy's
    algorithm (``complex_math.FUNCTIONS``) or ``cmath``'s (as cuda_math decides)."""
    return complex_name(numpy_name) in FUNCTIONS or hasattr(cmath, c99_name(numpy_name))


def default_expression(numpy_name):
    """The record of a primitive computing numpy function ``numpy_name``."""
    cname = complex_name(numpy_name)

    def expr(ctx, a):
        if ctx.complex:
            return f"«C».{cname}({', '.join(a)})"
        return f"«M».{numpy_name}({', '.join(a)})"
    return Record(expr=expr, complex=has_complex(numpy_name))


_DEFAULTS = {}


def expression_rule(name):
    """Elementwise primitive ``name``'s CUDA record: its own, else the default its facts
    give, else None (no CUDA text)."""
    rec = EXPRESSIONS.get(name)
    if rec is not None:
        return rec
    rec = _DEFAULTS.get(name)
    if rec is None:
        facts = getattr(primitives.get(name), "lowering", None)
        if facts is None or facts.kind != "elementwise" or facts.numpy_name is None:
            return None
        rec = _DEFAULTS[name] = default_expression(facts.numpy_name)
    return rec


def select_text(c, a, b):
    return f"({a} if {c} else {b})"


# =====================================================================================
# The records
# =====================================================================================

def _sign(ctx, a):
    x, dt = a[0], ctx.out_dtype
    if ctx.complex:
        return f"«C».csign({x})"
    one, zero = ctx.lit(1, dt), ctx.lit(0, dt)
    if dt == np.bool_:
        return x
    if dt.kind == "u":
        return select_text(f"{x} > 0", one, zero)
    mone = ctx.lit(-1, dt)
    tail = select_text(f"{x} != {x}", x, zero) if is_float(dt) else zero  # sign(nan): nan
    return select_text(f"{x} > 0", one, select_text(f"{x} < 0", mone, tail))


def _abs(ctx, a):
    if ctx.complex or not is_float(ctx.out_dtype):
        return f"abs({a[0]})"
    return f"«M».fabs({a[0]})"


def _logistic(ctx, a):
    one = ctx.lit(1, ctx.out_dtype)
    if ctx.complex:
        return f"«C».cdiv({one}, {one} + «C».cexp(-{a[0]}))"
    return f"{one} / ({one} + «M».exp(-{a[0]}))"


def _rsqrt(ctx, a):
    one = ctx.lit(1, ctx.out_dtype)
    if ctx.complex:
        return f"«C».cdiv({one}, «C».csqrt({a[0]}))"
    return f"{one} / «M».sqrt({a[0]})"


def _extreme(kind, cmp):
    """max/min: numpy's NaN from either side and, on a tie, the second operand; complex
    operands in numpy's lexicographic order."""
    def rule(ctx, a):
        x, y = a
        if ctx.complex:
            return f"«C».c{kind}({x}, {y})"
        if is_float(ctx.out_dtype):
            return select_text(f"({x} {cmp} {y}) or ({x} != {x})", x, y)
        return select_text(f"{x} {cmp}= {y}", x, y)
    return rule


def _convert(ctx, a):
    new = np.dtype(ctx.params["new_dtype"])
    if new == np.bool_:
        return f"({a[0]} != 0)"
    if ctx.in_dtypes[0].kind == "c" and new.kind != "c":
        return f"{dt_text(new)}({a[0]}.real)"          # numpy discards the imaginary part
    return f"{dt_text(new)}({a[0]})"


def _float_function(name, op):
    """cuda_math's ``name`` (numpy's float semantics) for floats, ``op`` else."""
    return lambda ctx, a: (f"«M».{name}({a[0]}, {a[1]})" if is_float(ctx.out_dtype)
                           else f"{a[0]} {op} {a[1]}")


def _operator(op, helper=None):
    """Python's operator; ``helper`` (numpy's semantics) for complex operands."""
    def rule(ctx, a):
        if helper is not None and ctx.complex:
            return f"«C».{helper}({a[0]}, {a[1]})"
        return f"{a[0]} {op} {a[1]}"
    return rule


def _identity(ctx, a):
    return a[0]


register_expression("neg", lambda ctx, a: f"-{a[0]}", complex=True)
register_expression("sign", _sign, complex=True)
register_expression("is_finite", lambda ctx, a: (
    f"«C».cisfinite({a[0]})" if ctx.complex else
    f"«M».isfinite({a[0]})" if is_float(ctx.in_dtypes[0]) else "True"), complex=True)
register_expression("not", lambda ctx, a: f"(not {a[0]})" if ctx.out_dtype == np.bool_
                    else f"~{a[0]}")
register_expression("logistic", _logistic, complex=True)
register_expression("rsqrt", _rsqrt, complex=True)
register_expression("abs", _abs, complex=True)
register_expression("integer_pow", lambda ctx, a: integer_pow_text(
    ctx, a[0], lambda x, y: f"«C».cipow({x}, {y})"), complex=True)
register_expression("max", _extreme("max", ">"), complex=True)
register_expression("min", _extreme("min", "<"), complex=True)
register_expression("mod", _float_function("mod", "%"))
register_expression("floor_divide", _float_function("floor_divide", "//"))
for _n, _op, _h in [("add", "+", None), ("sub", "-", None), ("mul", "*", None),
                    ("div", "/", "cdiv"), ("pow", "**", "cpow"), ("eq", "==", None),
                    ("ne", "!=", None), ("lt", "<", "clt"), ("le", "<=", "cle"),
                    ("gt", ">", "cgt"), ("ge", ">=", "cge")]:
    register_expression(_n, _operator(_op, _h), complex=True)
for _n, _op in [("and", "&"), ("or", "|"), ("xor", "^")]:
    register_expression(_n, _operator(_op))
register_expression("select", lambda ctx, a: select_text(a[0], a[1], a[2]), complex=True)
register_expression("convert_element_type", _convert, complex=True)
for _n in ("stop_gradient", "name", "_copy"):
    register_expression(_n, _identity, complex=True)
register_expression("iota", lambda ctx, a: ctx.idx[ctx.params["dimension"]])
register_expression("real", lambda ctx, a: f"{a[0]}.real", complex=True)
register_expression("imag", lambda ctx, a: f"{a[0]}.imag", complex=True)
register_expression("conj", lambda ctx, a: f"{a[0]}.conjugate()", complex=True)
register_expression("complex", lambda ctx, a: f"complex({a[0]}, {a[1]})", complex=True)
