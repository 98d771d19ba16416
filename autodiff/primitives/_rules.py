"""Rule helpers shared by every primitive family.

A Taylor rule (``p.taylor``, for ``jet``) maps the coefficient lists of the operands,
``ins[i] = [x₀, x₁, …, x_K]`` (normalized coefficients, ``None`` for one known to be zero),
to the output's list (a list of lists for several results), built with ``bind``. The
derivative declarations give most of them: :func:`deflinear` (each coefficient mapped),
:func:`defbilinear` (Cauchy products), :func:`defjvp_zero` (no derivative of any order);
:func:`deftaylor_locally_linear` and :func:`deftaylor_opaque` are one line more; the rest
are written with :func:`deftaylor` and the series arithmetic of
:mod:`autodiff.primitives.taylor_series`, beside the primitive's jvp.
"""
from dataclasses import dataclass

import numpy as np

from ..core import (ShapedArray, Tracer, UndefinedPrimal, Zero, complex_dtype, eval_jaxpr,
                    get_aval, is_inexact_dtype, trace_flat, trace_state)
from ..errors import DTypeError, ShapeError, UnsupportedError

__all__ = ["LoweringFacts", "aval_of", "defbilinear", "defjvp", "defjvp_zero", "defleading",
           "deflinear", "deflowering",
           "deftaylor", "deftaylor_linear", "deftaylor_locally_linear", "deftaylor_opaque",
           "deftranspose", "defvectorized", "dtype_of", "full", "full_like", "instantiate",
           "is_zero", "moveaxis", "ones_like", "scalar", "shape_of", "shifted", "tangent_dtype",
           "zeros_like"]

# ============================================================================
# Small helpers used by the rules
# ============================================================================


def aval_of(x):
    """The abstract value of a value, tracer, ``Zero`` or ``UndefinedPrimal``."""
    if isinstance(x, (Tracer, Zero, UndefinedPrimal)):
        return x.aval
    return get_aval(x)


def shape_of(x):
    """The shape of a value or tracer (no aval built for a plain ndarray)."""
    if x.__class__ is np.ndarray:      # no aval built just to read it (grad's input checks)
        return x.shape
    return aval_of(x).shape


def dtype_of(x):
    """The dtype of a value or tracer."""
    if x.__class__ is np.ndarray:
        if x.dtype.kind not in "biufc":
            get_aval(x)                # the error an unsupported dtype gets
        return x.dtype
    return aval_of(x).dtype


def scalar(v, dtype):
    """A Python number as a scalar of ``dtype`` (becomes a Literal when traced)."""
    return np.dtype(dtype).type(v)


def _coerce_pair(x, y):
    """Python scalars take the other operand's dtype (weak typing); a Python complex with a
    real operand makes it complex (numpy: float32 -> complex64)."""
    if isinstance(x, _PY_NUMBERS) and not isinstance(x, np.generic):
        if x.__class__ is complex and dtype_of(y).kind != "c":
            y = _to_complex(y)
        x = scalar(x, dtype_of(y))
    if isinstance(y, _PY_NUMBERS) and not isinstance(y, np.generic):
        if y.__class__ is complex and dtype_of(x).kind != "c":
            x = _to_complex(x)
        y = scalar(y, dtype_of(x))
    return x, y


_PY_NUMBERS = (int, float, bool, complex)


def _to_complex(x):
    return convert(x, complex_dtype(dtype_of(x)))


def instantiate(t, aval=None):
    """A real zero array for a symbolic :class:`Zero`."""
    if isinstance(t, Zero):
        return full(t.aval.shape, 0, t.aval.dtype)
    return t


def is_zero(t):
    """Whether ``t`` is a symbolic zero tangent/cotangent (:class:`~autodiff.core.Zero`)."""
    return isinstance(t, Zero)


def _zero_like(x):
    a = aval_of(x)
    return Zero(ShapedArray(a.shape, a.dtype))


def tangent_dtype(dtype):
    """The dtype of ``dtype``'s tangents: itself for float and complex dtypes, float32
    otherwise."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float32)


# ============================================================================
# Rule helpers (the jvp / transpose / batch rules of most primitives are one line)
# ============================================================================

def _std_unary_aval(x, **_):
    return ShapedArray(x.shape, x.dtype)


def _float_unary_aval(name):
    def rule(x, **_):
        if x.dtype.kind not in "fc":
            raise DTypeError(f"{name} needs a float operand, got {x.dtype}")
        return ShapedArray(x.shape, x.dtype)
    return rule


def _binary_shape(name, x, y):
    if x.shape == y.shape or not y.shape:
        return x.shape
    if not x.shape:
        return y.shape
    raise ShapeError(f"{name}: operand shapes {x.shape} and {y.shape} differ "
                     f"(broadcast them first with anp.broadcast_to)")


def _binary_aval(name, out_dtype=None):
    def rule(x, y, **_):
        if x.dtype != y.dtype:
            raise DTypeError(f"{name}: operand dtypes {x.dtype} and {y.dtype} differ")
        return ShapedArray(_binary_shape(name, x, y), out_dtype or x.dtype)
    return rule


def defjvp(prim, *rules):
    """JVP from one rule per input: ``rule(tangent, ans, *primals) -> contribution``."""
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        out = None
        for rule, t in zip(rules, tangents):
            if rule is None or is_zero(t):
                continue
            c = rule(t, ans, *primals, **params)
            out = c if out is None else add(out, c)
        return ans, (_zero_like(ans) if out is None else out)
    prim.jvp = jvp


def defjvp_zero(prim, reason="no derivative"):
    """Piecewise-constant or integer-valued: the tangent is zero, and so is every higher
    Taylor coefficient. ``reason`` says why (``jet.NONDIFFERENTIABLE`` lists it)."""
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if prim.multiple_results:
            return ans, [_zero_like(a) for a in ans]
        return ans, _zero_like(ans)
    prim.jvp = jvp
    prim.differentiable = False
    prim.zero_derivative = True

    def taylor(ins, **params):
        out = prim.bind(*[s[0] for s in ins], **params)
        K = len(ins[0]) - 1 if ins else 0
        if prim.multiple_results:
            return [[o] + [None] * K for o in out]
        return [out] + [None] * K
    taylor.no_derivative = reason
    prim.taylor = taylor


def deftranspose(prim, rule, argnums=None):
    """Declare ``prim`` linear in the operands ``argnums`` (all when ``None``), with their
    transpose ``rule(ct, *args, **params) -> [cotangent or None per operand]``.

    ``args`` holds an ``UndefinedPrimal`` for each linear operand being transposed and values
    for the rest. The rule never sees a zero cotangent: ``backward_pass`` skips an equation
    whose output cotangent is zero (for a primitive with several results, the zero ones arrive
    as ``Zero``). This declaration is what makes ``prim.is_linear`` true.
    """
    prim.transpose = rule
    prim.linear_argnums = None if argnums is None else tuple(argnums)
    prim.is_linear = True


def deflinear(prim, transpose_rule, argnums=None):
    """Linear in the operands ``argnums`` (all when ``None``); the other operands are integer
    data (indices, predicates) with zero tangents. The jvp applies ``prim`` to the tangents of
    the linear operands and the primal values of the rest; see :func:`deftranspose`. The
    Taylor rule applies it to each coefficient (:func:`deftaylor_linear`)."""
    lin = range(1 << 30) if argnums is None else frozenset(argnums)   # "all": any index is in

    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if all(is_zero(t) for i, t in enumerate(tangents) if i in lin):
            return ans, _zero_like(ans)
        ts = [instantiate(t) if i in lin else x for i, (x, t) in enumerate(zip(primals, tangents))]
        return ans, prim.bind(*ts, **params)
    prim.jvp = jvp
    deftranspose(prim, transpose_rule, argnums)
    if not prim.multiple_results:
        deftaylor_linear(prim)


def defbilinear(prim, lhs_rule, rhs_rule, apply=None):
    """Bilinear in its two operands: ``d f(x, y) = f(dx, y) + f(x, dy)``.

    ``lhs_rule(ct, x, y, **params)`` is the cotangent of ``x`` (an ``UndefinedPrimal``) for a
    value ``y``; ``rhs_rule(ct, x, y, **params)`` the cotangent of ``y``. ``apply(a, b, ans,
    **params)`` evaluates the map (default ``prim.bind(a, b)``; ``mul`` passes its broadcasting
    form). The Taylor rule is the Cauchy product of the operands' series.
    """
    apply = apply or (lambda a, b, ans, **params: prim.bind(a, b, **params))
    defjvp(prim, lambda g, ans, x, y, **params: apply(g, y, ans, **params),
           lambda g, ans, x, y, **params: apply(x, g, ans, **params))

    def transpose(ct, x, y, **params):
        """``x`` with its axes permuted (no equation for the identity)."""
        if isinstance(x, UndefinedPrimal):
            assert not isinstance(y, UndefinedPrimal), f"{prim.name} of two linear values"
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]
    deftranspose(prim, transpose)

    def taylor(ins, **params):                    # Cauchy products of the coefficients
        x, y = ins
        return series_mul(x, y, op=lambda a, b: prim.bind(a, b, **params))
    prim.taylor = taylor


def _ndim(x):
    return len(shape_of(x))


def moveaxis(x, src, dst=0, size=None):
    """The one batch-axis mover of the rules: axis ``src`` of ``x`` to position ``dst``.

    With ``src`` ``None`` (an unbatched operand) ``x`` is returned as it is, or, given ``size``,
    broadcast with a new axis of that size at ``dst``.
    """
    if src is None:
        if size is None:
            return x
        s = shape_of(x)
        rest = tuple(i + (i >= dst) for i in range(len(s)))
        return broadcast_in_dim(x, s[:dst] + (size,) + s[dst:], rest)
    if src == dst:
        return x
    order = [i for i in range(_ndim(x)) if i != src]
    order.insert(dst, src)
    return transpose(x, tuple(order))


def defleading(prim, shift):
    """vmap of a one-operand primitive that batches by a new leading axis: the batch axis moves
    to the front and ``shift(n, **params)`` gives the parameters for the batched operand
    (``n`` the batch size)."""
    def rule(args, dims, **params):
        (x,), (d,) = args, dims
        x = moveaxis(x, d)
        return prim.bind(x, **shift(shape_of(x)[0], **params)), 0
    prim.batch = rule


def shifted(*names):
    """A ``shift`` for :func:`defleading`: the named parameters are axes (an int or a tuple of
    ints) and move up by one; the others stay."""
    def shift(n, **params):
        return {k: ((v + 1 if isinstance(v, int) else tuple(a + 1 for a in v))
                    if k in names else v) for k, v in params.items()}
    return shift


def defvectorized(prim):
    """Elementwise n-ary: line up batch dims at the front; rank-0 operands stay. (Marks the
    primitive ``vectorized``: ``jet`` derives a Taylor rule for a unary one without its own.)"""
    prim.vectorized = True
    def rule(args, dims, **params):
        size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
        full_rank = max(_ndim(a) - (d is not None) for a, d in zip(args, dims))
        new = []
        for a, d in zip(args, dims):
            if d is None and _ndim(a) == 0:
                new.append(a)            # rank-0 operands broadcast by themselves
            elif d is not None and _ndim(a) == 1 and full_rank > 0:
                # a batched scalar meeting full-rank operands: give it their rank
                other_shape = next(shape_of(b)[:e] + shape_of(b)[e + 1:] if e is not None
                                   else shape_of(b) for b, e in zip(args, dims)
                                   if _ndim(b) - (e is not None) == full_rank)
                new.append(broadcast_in_dim(a, (size,) + tuple(other_shape), (0,)))
            else:
                new.append(moveaxis(a, d, size=size))
        out = prim.bind(*new, **params)
        if prim.multiple_results:
            return out, [0] * len(out)
        return out, 0
    prim.batch = rule


# ============================================================================
# Taylor rules (``p.taylor``): the declarations and their family helpers
# ============================================================================

def deftaylor(prim, rule):
    """Declare ``prim``'s Taylor rule ``rule(ins, **params) -> outs`` (see the module doc);
    returns the rule. Without one, ``jet`` derives the rule of a unary elementwise primitive
    from its jvp and of a composite from its ``inline`` body."""
    prim.taylor = rule
    return rule


def deftaylor_linear(prim):
    """Linear in its float operands (the others are indices or predicates): each
    coefficient of the output is ``prim`` applied to the operands' coefficients."""
    assert not prim.multiple_results

    def rule(ins, **params):
        K = len(ins[0]) - 1
        floats = [is_inexact_dtype(dtype_of(s[0])) for s in ins]
        outs = [prim.bind(*[s[0] for s in ins], **params)]
        for k in range(1, K + 1):
            if all(s[k] is None for s, f in zip(ins, floats) if f):
                outs.append(None)
                continue
            args = [(zeros_like(s[0]) if s[k] is None else s[k]) if f else s[0]
                    for s, f in zip(ins, floats)]
            outs.append(prim.bind(*args, **params))
        return outs
    prim.taylor = rule


def deftaylor_locally_linear(prim):
    """Piecewise linear (max-like choices, sorting): the branch taken is fixed by the
    primals, so the output's coefficients are the tangent map (traced once, from
    ``prim.jvp``) applied to each input coefficient: coefficients are selected."""
    assert not prim.multiple_results

    def rule(ins, **params):
        K = len(ins[0]) - 1
        primals = [s[0] for s in ins]
        floats = [i for i, s in enumerate(ins) if is_inexact_dtype(dtype_of(s[0]))]
        avals = [ShapedArray(shape_of(ins[i][0]), dtype_of(ins[i][0])) for i in floats]
        box = []

        def tangent_map(*ts):
            tangents = [Zero(ShapedArray(shape_of(p), tangent_dtype(dtype_of(p))))
                        for p in primals]
            for i, t in zip(floats, ts):
                tangents[i] = t
            out, tout = prim.jvp(primals, tangents, **params)
            box.append(out)                       # the primal: an outer value
            return [instantiate(tout)]

        lin = trace_flat(tangent_map, avals, name="jet_linear")
        outs = [box[0]]
        for k in range(1, K + 1):
            if all(ins[i][k] is None for i in floats):
                outs.append(None)
                continue
            ts = [zeros_like(ins[i][0]) if ins[i][k] is None else ins[i][k] for i in floats]
            outs.append(eval_jaxpr(lin.jaxpr, lin.consts, *ts)[0])
        return outs
    prim.taylor = rule


def deftaylor_opaque(prim, reason):
    """No derivative at all, not even zero (opaque host code): Taylor mode through ``prim``
    is an error saying ``reason`` (what to do instead); ``jet.OPAQUE`` lists it."""
    def rule(ins, **params):
        raise UnsupportedError(f"Taylor mode (jet) through {prim.name}: {reason}",
                               source=trace_state.source)
    rule.opaque = reason
    prim.taylor = rule


# ============================================================================
# Lowering facts (``p.lowering``): what every backend may know about a primitive
# ============================================================================

@dataclass(frozen=True)
class LoweringFacts:
    """The target-neutral facts a backend derives a primitive's lowering from.

    ``kind``: ``"elementwise"`` (a scalar function of its operands, fused into loops) or
    ``"cumulative"`` (a running combination along one axis). ``numpy_name``: the numpy
    function it computes (``np.<numpy_name>``), from which a backend writes its default
    text (Numba on the CPU: ``np.arcsinh(x)``; CUDA: the device math function of that
    name); ``None`` when there is none, and then every backend keeps a record of its own.
    ``cost``: work per element in units of an add (fusion and thread decisions);
    ``code_size``: the inlined size of a vectorizable implementation where a backend has
    one (a loop's code budget). ``combine``: for a cumulative primitive, the elementwise
    primitive combining the running value with the next element (``"add"`` for a sum).
    Declared with the primitive (:func:`deflowering`; ``elementwise._unary``/``_binary``
    declare it for their primitives); docs/design.md "Lowering records" says how the
    backends use it.
    """

    kind: str
    numpy_name: str = None
    cost: int = 1
    code_size: int = 0
    combine: str = None


def deflowering(prim, kind, **facts):
    """Declare ``prim``'s :class:`LoweringFacts` (``prim.lowering``)."""
    prim.lowering = LoweringFacts(kind, **facts)
    return prim


# ============================================================================
# Library ops: thin, strict wrappers the rules and autodiff.numpy are built on
# ============================================================================

def full(shape, value, dtype):
    """``value`` broadcast to ``shape`` with ``dtype`` (one ``broadcast_in_dim`` of a scalar)."""
    return broadcast_in_dim(scalar(value, dtype), tuple(shape), ())


def zeros_like(x):
    """Zeros of the shape and dtype of ``x``."""
    a = aval_of(x)
    return full(a.shape, 0, a.dtype)


def ones_like(x):
    """Ones of the shape and dtype of ``x``."""
    a = aval_of(x)
    return full(a.shape, 1, a.dtype)


def full_like(x, v):
    """``v`` in the shape and dtype of ``x``."""
    a = aval_of(x)
    return full(a.shape, v, a.dtype)


def _b(prim):
    def op(x, y):
        x, y = _coerce_pair(x, y)
        return prim.bind(x, y)
    op.__name__ = prim.name
    op.__doc__ = (f"``{prim.name}`` of two operands (Python numbers take the other's dtype, a "
                  f"rank-0 operand broadcasts): binds ``{prim.name}_p``.")
    return op


def _u(prim):
    def op(x):
        return prim.bind(x)
    op.__name__ = prim.name
    op.__doc__ = f"``{prim.name}`` of one operand: binds ``{prim.name}_p``."
    return op

# Names used only when a rule runs, from families imported after this one
# (the package imports the families in dependency order; see __init__).
from .elementwise import add, convert  # noqa: E402
from .taylor_series import series_mul  # noqa: E402
from .shape import broadcast_in_dim, transpose  # noqa: E402
