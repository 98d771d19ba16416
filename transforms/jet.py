"""Taylor mode: push a truncated Taylor series through a jaxpr in one pass.

A value on the input path ``x(t) = x₀ + x₁ t + x₂ t² + … + x_K t^K`` is carried as
its list of (normalized) Taylor coefficients ``[x₀, x₁, …, x_K]``; each primitive's
rule in :data:`jet_rules` maps the coefficient lists of its inputs to those of its
output. Rules are written with the primitives' ``bind``, so the coefficient program
is IR again: it prints, jits (and fuses), vmaps and differentiates like any other.
The cost per elementwise operation grows like K² (Cauchy products and the standard
recurrences of Griewank & Walther, *Evaluating Derivatives*, ch. 13), not like the
2^K of nesting ``jvp`` K times.

A coefficient that cannot be nonzero is ``None`` and costs no equations (a linear
input path ``x₀ + v t`` keeps ``x₂ … x_K`` symbolic until the first nonlinear op).

The public convention (:func:`autodiff.jet`, as in JAX) scales coefficients by
factorials: the ``k``-th series term is the ``k``-th derivative of the path in ``t``;
:func:`jet_eval` works with the normalized ones (``x_k = term_k / k!``).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> y, ys = ad.jet(anp.exp, (0.0,), ((1.0, 0.0, 0.0),))       # d^k/dt^k e^t at 0
>>> float(y), [float(c) for c in ys]
(1.0, [1.0, 1.0, 1.0])
"""
import math

import numpy as np

from ..core import (Literal, ShapedArray, Zero, at_source, eval_jaxpr, is_inexact_dtype, last_uses,
                    register_internal_dir, trace_flat, trace_state)
from ..errors import UnsupportedError
from .. import primitives as P
from . import remat as _remat            # registers remat and name
from .. import custom_derivatives as _cd, lax as _lax

__all__ = ["jet_rules", "rule_for", "jet_eval", "jet_jaxpr", "series_mul", "series_square",
           "series_div", "series_pow", "series_integrate", "deflinear", "defzero",
           "deflocally_linear", "jet", "taylor"]

register_internal_dir(__file__)

jet_rules = {}   # Primitive -> rule(ins, **params) -> outs; ins/outs are coefficient lists

# Primitives whose output has no derivative of any order (integer, boolean or piecewise
# constant results, or a derivative cut by definition): their rule gives zero higher
# coefficients. The registry test checks this list against the primitives' own
# ``differentiable`` flag and reasons.
NONDIFFERENTIABLE = {
    "and": "bitwise/boolean", "or": "bitwise/boolean", "xor": "bitwise/boolean",
    "not": "bitwise/boolean",
    "eq": "boolean result", "ne": "boolean result", "lt": "boolean result",
    "le": "boolean result", "gt": "boolean result", "ge": "boolean result",
    "is_finite": "boolean result", "reduce_and": "boolean result", "reduce_or": "boolean result",
    "argmax": "integer result", "argmin": "integer result", "argsort": "integer result",
    "iota": "integer result, no operands",
    "floor": "piecewise constant", "ceil": "piecewise constant",
    "round": "piecewise constant", "floor_divide": "piecewise constant",
    "stop_gradient": "derivatives cut by definition",
}


# Primitives with no derivative at all, not even zero (opaque host code): Taylor mode
# through them is an error that says what to do, as their jvp rule's.
OPAQUE = {
    "pure_callback": "the callback is opaque host code: wrap the function calling it in "
                     "ad.custom_jvp and give its derivative there (jet then uses the rule)",
}


def _opaque_rule(prim):
    def rule(ins, **params):
        raise UnsupportedError(f"Taylor mode (jet) through {prim.name}: {OPAQUE[prim.name]}",
                               source=trace_state.source)
    return rule


def _late_rule(prim):
    """Rules of primitives declared by modules imported after this one, keyed by name, and
    the derived rule of an elementwise unary primitive declared without one."""
    if prim.name in OPAQUE:
        jet_rules[prim] = _opaque_rule(prim)
        return jet_rules[prim]
    if (getattr(prim, "vectorized", False) and prim.differentiable and prim.jvp is not None
            and not prim.multiple_results):
        jet_rules[prim] = _derived_unary_rule(prim)
        return jet_rules[prim]
    return None


def _derived_unary_rule(prim):
    """The Taylor rule of an elementwise unary primitive, from its jvp rule alone.

    With ``y = f(x)``, ``y' = g(x) x'`` where ``g(x)`` is the jvp at a unit tangent. So
    ``y_k = (1/k) Σ_{j=1}^k j x_j g_{k-j}``, and ``g``'s coefficients up to ``K - 1`` come
    from Taylor-evaluating ``g``'s own program one order lower (its primitives' rules,
    this one's included, at decreasing orders). A hand-written rule is faster (and
    registered in ``jet_rules`` it wins); this one makes a new elementwise primitive work
    in ``jet`` from its ``defjvp`` declaration.
    """
    def rule(ins, **params):
        if len(ins) != 1:
            raise UnsupportedError(
                f"Taylor mode (jet) through {prim.name}: its rule is derived for one-operand "
                f"primitives only; register one in autodiff.transforms.jet.jet_rules",
                source=trace_state.source)
        x = ins[0]
        K = len(x) - 1
        y0 = prim.bind(x[0], **params)
        if K == 0 or not _has_series(x):
            return [y0] + [None] * K
        a = ShapedArray(tuple(P.shape_of(x[0])), P.dtype_of(x[0]))
        one = np.ones(a.shape, a.dtype)
        g = trace_flat(lambda v: [P.instantiate(prim.jvp((v,), (one,), **params)[1])], [a],
                       name=f"{prim.name}_derivative")
        if K == 1:
            w = list(eval_jaxpr(g.jaxpr, g.consts, x[0]))
        else:
            outs, series = jet_eval(g.jaxpr, g.consts, [x[0]], [x[1:K]], K - 1)
            w = [outs[0]] + list(series[0])
        return series_integrate(x, w, y0)
    return rule


def rule_for(prim):
    """The Taylor rule of ``prim`` (``None`` when it has none)."""
    return jet_rules.get(prim) or _late_rule(prim)


# ============================================================================
# The transform
# ============================================================================

def _is_float(aval):
    return is_inexact_dtype(aval.dtype)


def _has_series(s):
    return any(c is not None for c in s[1:])


def _fit(c, aval):
    """A coefficient of a rank-0 operand meeting a full-rank one: give it the output shape."""
    if c is None or tuple(P.shape_of(c)) == tuple(aval.shape):
        return c
    return P.broadcast_in_dim(c, tuple(aval.shape), ())


def jet_eval(jaxpr, consts, primals, series, order):
    """Evaluate ``jaxpr`` on Taylor polynomials -> ``(outs, out_series)``.

    ``series[i]`` holds the normalized coefficients ``[x_1, …, x_order]`` of input ``i``
    (``None`` entries, or ``None`` for the whole list, are zeros); the result lists the
    output coefficients the same way. Runs with ``bind``: on tracers it records the
    coefficient program into the enclosing trace.
    """
    env = {}
    none = [None] * order
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = [c] + none
    for v, p, s in zip(jaxpr.invars, primals, series):
        s = none if s is None or not _is_float(v.aval) else list(s)
        env[v] = [p] + s

    def read(v):
        return [v.val] + none if isinstance(v, Literal) else env[v]

    for e, frees in zip(jaxpr.eqns, last_uses(jaxpr)):
        ins = [read(v) for v in e.invars]
        prim = e.primitive
        if not any(_has_series(s) for s in ins):
            out = at_source(e.source, prim.bind, *[s[0] for s in ins], **e.params)
            outs = [[o] + none for o in out] if prim.multiple_results else [[out] + none]
        else:
            rule = rule_for(prim)
            if rule is None:
                raise UnsupportedError(f"Taylor mode (jet) of primitive {prim.name!r} is not "
                                       f"supported: it has no Taylor rule", source=e.source)
            outs = at_source(e.source, rule, ins, **e.params)
            outs = outs if prim.multiple_results else [outs]
        for v, s in zip(e.outvars, outs):
            env[v] = ([s[0]] + ([_fit(c, v.aval) for c in s[1:]] if _is_float(v.aval) else none))
        for v in frees:                           # release buffers after their last use
            env.pop(v, None)
    res = [read(v) for v in jaxpr.outvars]
    return [s[0] for s in res], [s[1:] for s in res]


def jet_jaxpr(closed, order, nonzeros):
    """The Taylor program of ``closed`` as a new ClosedJaxpr.

    Inputs: the primals, then the ``order`` normalized coefficients of each input with
    ``nonzeros[i]`` set (in input order); outputs: the primal outputs, then ``order``
    coefficients of every output (zeros materialized).
    """
    jaxpr = closed.jaxpr
    in_avals = [v.aval for v in jaxpr.invars]
    n = len(in_avals)
    s_avals = [ShapedArray(a.shape, a.dtype) for a, nz in zip(in_avals, nonzeros) if nz
               for _ in range(order)]

    def fun(*args):
        it = iter(args[n:])
        series = [[next(it) for _ in range(order)] if nz else None for nz in nonzeros]
        outs, out_series = jet_eval(jaxpr, closed.consts, args[:n], series, order)
        res = list(outs)
        for o, s in zip(outs, out_series):
            res += [P.full(P.shape_of(o), 0, P.dtype_of(o)) if c is None else c for c in s]
        return res

    return trace_flat(fun, in_avals + s_avals, name="jet")


# ============================================================================
# Series arithmetic (lists [c_0, …, c_K]; None entries above 0 are zeros)
# ============================================================================

def _sum(terms):
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else P.add(out, t)
    return out


def _scale(x, c):
    if x is None:
        return None
    return x if c == 1 else P.mul(x, float(c))


def _mul(a, b, op=P.mul):
    return None if a is None or b is None else op(a, b)


def _cauchy_term(x, y, k, lo=0, hi=None, op=P.mul):
    """Σ_{j=lo}^{hi} x_j y_{k-j}: the coefficient of t^k of a product."""
    hi = k if hi is None else hi
    return _sum(_mul(x[j], y[k - j], op) for j in range(lo, hi + 1))


def _square_term(z, m, lo=0):
    """Σ_{i=lo}^{m-lo} z_i z_{m-i}, pairing symmetric terms (half the products)."""
    pairs = _scale(_sum(_mul(z[i], z[m - i]) for i in range(lo, (m + 1) // 2)), 2)
    middle = _mul(z[m // 2], z[m // 2]) if m % 2 == 0 and m // 2 >= lo else None
    return _sum([pairs, middle])


def series_mul(x, y, op=P.mul):
    return [op(x[0], y[0])] + [_cauchy_term(x, y, k, op=op) for k in range(1, len(x))]


def series_square(x):
    return [P.mul(x[0], x[0])] + [_square_term(x, k) for k in range(1, len(x))]


def series_div(x, y, z0=None):
    """z = x / y: y₀ z_k = x_k - Σ_{j=1}^k y_j z_{k-j}."""
    z = [P.div(x[0], y[0]) if z0 is None else z0]
    for k in range(1, len(x)):
        r = _cauchy_term(y, z, k, lo=1)
        num = x[k] if r is None else (P.neg(r) if x[k] is None else P.sub(x[k], r))
        z.append(None if num is None else P.div(num, y[0]))
    return z


def series_pow(x, a, z0):
    """z = x^a for a constant exponent ``a`` (number or array), from x z' = a x' z:
    k x₀ z_k = Σ_{j=1}^k (a j - (k - j)) x_j z_{k-j}."""
    z = [z0]
    for k in range(1, len(x)):
        if isinstance(a, (int, float)):
            s = _sum(_scale(_mul(x[j], z[k - j]), (a * j - (k - j)) / k) for j in range(1, k + 1))
        else:
            A = _sum(_scale(_mul(x[j], z[k - j]), j / k) for j in range(1, k + 1))
            B = _sum(_scale(_mul(x[j], z[k - j]), (k - j) / k) for j in range(1, k))
            s = None if A is None else P.mul(A, a)
            s = s if B is None else (P.neg(B) if s is None else P.sub(s, B))
        z.append(None if s is None else P.div(s, x[0]))
    return z


def _dt(x):
    """[_, 1·x₁, 2·x₂, …]: the weights j x_j of z_k = (1/k) Σ_j j x_j w_{k-j}, made once."""
    return [None] + [_scale(c, j) for j, c in enumerate(x[1:], 1)]


def _integral_term(xd, w, k, sign=1):
    return _scale(_sum(_mul(xd[j], w[k - j]) for j in range(1, k + 1)), sign / k)


def series_integrate(x, w, z0):
    """z with z' = w x': z_k = (1/k) Σ_{j=1}^k j x_j w_{k-j}, for w known up to K-1."""
    xd = _dt(x)
    return [z0] + [_integral_term(xd, w, k) for k in range(1, len(x))]


def _ode(x, z0, w_of):
    """z with z' = w x' where w_m depends on z_0..z_m only (``w_of(z, m)``)."""
    z, w, xd = [z0], [], _dt(x)
    for k in range(1, len(x)):
        w.append(w_of(z, k - 1))
        z.append(_integral_term(xd, w, k))
    return z


def _add_const(x, c):
    return [P.add(x[0], c)] + list(x[1:])


def _neg_series(x):
    return [None if c is None else P.neg(c) for c in x]


def _map(fn, x, fill=None):
    """Apply a linear map to every coefficient (``fill`` maps the primal if given)."""
    return [(fill or fn)(x[0])] + [None if c is None else fn(c) for c in x[1:]]


# ============================================================================
# Rules: linear and locally linear primitives
# ============================================================================

def _zeros(x):
    return P.full(P.shape_of(x), 0, P.dtype_of(x))


def deflinear(prim):
    """Linear in its float operands (the others are indices or predicates): each
    coefficient of the output is ``prim`` applied to the operands' coefficients."""
    assert not prim.multiple_results

    def rule(ins, **params):
        K = len(ins[0]) - 1
        floats = [is_inexact_dtype(P.dtype_of(s[0])) for s in ins]
        out0 = prim.bind(*[s[0] for s in ins], **params)
        outs = [out0]
        for k in range(1, K + 1):
            if all(s[k] is None for s, f in zip(ins, floats) if f):
                outs.append(None)
                continue
            args = [(_zeros(s[0]) if s[k] is None else s[k]) if f else s[0]
                    for s, f in zip(ins, floats)]
            outs.append(prim.bind(*args, **params))
        return outs
    jet_rules[prim] = rule


def defzero(prim):
    """No derivative of any order: zero higher coefficients."""
    def rule(ins, **params):
        out = prim.bind(*[s[0] for s in ins], **params)
        K = len(ins[0]) - 1 if ins else 0
        if prim.multiple_results:
            return [[o] + [None] * K for o in out]
        return [out] + [None] * K
    jet_rules[prim] = rule


def deflocally_linear(prim):
    """Piecewise linear (max-like choices, sorting): the branch taken is fixed by the
    primals, so the output's coefficients are the tangent map (traced once, from
    ``prim.jvp``) applied to each input coefficient: coefficients are selected."""
    assert not prim.multiple_results

    def rule(ins, **params):
        K = len(ins[0]) - 1
        primals = [s[0] for s in ins]
        floats = [i for i, s in enumerate(ins) if is_inexact_dtype(P.dtype_of(s[0]))]
        avals = [ShapedArray(P.shape_of(ins[i][0]), P.dtype_of(ins[i][0])) for i in floats]
        box = []

        def tangent_map(*ts):
            tangents = [Zero(ShapedArray(P.shape_of(p), P.tangent_dtype(P.dtype_of(p))))
                        for p in primals]
            for i, t in zip(floats, ts):
                tangents[i] = t
            out, tout = prim.jvp(primals, tangents, **params)
            box.append(out)                       # the primal: an outer value
            return [P.instantiate(tout)]

        lin = trace_flat(tangent_map, avals, name="jet_linear")
        out0 = box[0]
        outs = [out0]
        for k in range(1, K + 1):
            if all(ins[i][k] is None for i in floats):
                outs.append(None)
                continue
            ts = [_zeros(ins[i][0]) if ins[i][k] is None else ins[i][k] for i in floats]
            r = eval_jaxpr(lin.jaxpr, lin.consts, *ts)
            outs.append(r[0])
        return outs
    jet_rules[prim] = rule


for _name in ("add", "sub", "neg", "reduce_sum", "broadcast_in_dim", "reshape", "transpose",
              "squeeze", "expand_dims", "concatenate", "pad", "slice", "rev", "roll", "cumsum",
              "dynamic_slice", "dynamic_update_slice", "gather", "index_gather", "scatter",
              "scatter_add", "select", "real", "imag", "conj", "complex", "fft"):
    deflinear(P.primitives[_name])
for _name in NONDIFFERENTIABLE:
    defzero(P.primitives[_name])
for _name in ("sort", "cummax", "cummin", "reduce_max", "reduce_min"):
    deflocally_linear(P.primitives[_name])


def _convert_rule(ins, *, new_dtype):
    (x,) = ins
    z0 = P.convert_element_type_p.bind(x[0], new_dtype=new_dtype)
    if not is_inexact_dtype(new_dtype):
        return [z0] + [None] * (len(x) - 1)
    return [z0] + [None if c is None else P.convert_element_type_p.bind(c, new_dtype=new_dtype)
                   for c in x[1:]]


jet_rules[P.convert_element_type_p] = _convert_rule


def _name_rule(ins, *, name):
    (x,) = ins
    return [_remat.name_p.bind(x[0], name=name)] + list(x[1:])


def _complex_composed(prim, fn, x):
    """The series of a complex unary ``prim`` written as the program ``fn`` of real parts
    (smooth away from z = 0): its primitives' rules give the coefficients."""
    K = len(x) - 1
    if K == 0 or not _has_series(x):
        return [prim.bind(x[0])] + [None] * K
    a = ShapedArray(tuple(P.shape_of(x[0])), P.dtype_of(x[0]))
    g = trace_flat(lambda v: [fn(v)], [a], name=f"{prim.name}_complex")
    outs, series = jet_eval(g.jaxpr, g.consts, [x[0]], [x[1:]], K)
    return [prim.bind(x[0])] + list(series[0])


def _complex_abs(v):
    return P.sqrt(P.add(P.mul(P.real(v), P.real(v)), P.mul(P.imag(v), P.imag(v))))


def _sign_rule(ins):
    (x,) = ins
    if P.dtype_of(x[0]).kind != "c":              # piecewise constant on reals
        return [P.sign_p.bind(x[0])] + [None] * (len(x) - 1)
    # sign(z) = z/|z| is smooth away from 0 on complex numbers
    return _complex_composed(P.sign_p, lambda v: P.div(v, P.complex_(_complex_abs(v), 0.0)), x)


def _abs_rule(ins):
    (x,) = ins
    if P.dtype_of(x[0]).kind == "c":
        return _complex_composed(P.abs_p, _complex_abs, x)
    s = P.sign(x[0])                              # |x| = sign(x₀) x near x₀ (sign(0) = 0)
    return [P.abs_p.bind(x[0])] + [_mul(c, s) for c in x[1:]]


def _minmax_rule(prim, cmp):
    def rule(ins):
        x, y = ins                                # ties share equally, as in the jvp rule
        z0 = prim.bind(x[0], y[0])
        sa = P.shape_of(z0)
        xb = x[0] if P.shape_of(x[0]) == sa else P.broadcast_in_dim(x[0], sa, ())
        yb = y[0] if P.shape_of(y[0]) == sa else P.broadcast_in_dim(y[0], sa, ())
        w = P.select(cmp(xb, yb), P.full(sa, 1, P.dtype_of(z0)),
                     P.select(P.eq(xb, yb), P.full(sa, 0.5, P.dtype_of(z0)),
                              P.full(sa, 0, P.dtype_of(z0))))
        v = P.sub(1.0, w)
        return [z0] + [_sum([_mul(a, w), _mul(b, v)]) for a, b in zip(x[1:], y[1:])]
    jet_rules[prim] = rule


_minmax_rule(P.max_p, P.gt)
_minmax_rule(P.min_p, P.lt)


def _mod_rule(ins):
    x, y = ins                                    # x mod y = x - floor(x/y) y near (x₀, y₀)
    q = P.floor(P.div(x[0], y[0]))
    return [P.mod_p.bind(x[0], y[0])] + [
        _sum([a, None if b is None else P.neg(P.mul(q, b))]) for a, b in zip(x[1:], y[1:])]


jet_rules[P.abs_p] = _abs_rule
jet_rules[P.sign_p] = _sign_rule
jet_rules[P.mod_p] = _mod_rule


# ============================================================================
# Rules: products and quotients
# ============================================================================

def _mul_rule(ins):
    x, y = ins
    return series_mul(x, y)


def _dot_general_rule(ins, *, dimension_numbers):
    x, y = ins
    return series_mul(x, y, op=lambda a, b: P.dot_general_p.bind(
        a, b, dimension_numbers=dimension_numbers))


def _div_rule(ins):
    x, y = ins
    if not _has_series(y):
        return [P.div(x[0], y[0])] + [None if c is None else P.div(c, y[0]) for c in x[1:]]
    return series_div(x, y)


def _integer_pow_rule(ins, *, y):
    (x,) = ins
    K = len(x) - 1
    z0 = P.integer_pow_p.bind(x[0], y=y)
    if y == 0:
        return [z0] + [None] * K
    n, acc, base = abs(y), None, x               # binary powering of the series: exact at 0
    while n:
        if n & 1:
            acc = base if acc is None else series_mul(acc, base)
        n >>= 1
        if n:
            base = series_square(base)
    if y < 0:
        one = [P.full((), 1, P.dtype_of(x[0]))] + [None] * K
        acc = series_div(one, acc)
    return [z0] + acc[1:]


jet_rules[P.mul_p] = _mul_rule
jet_rules[P.dot_general_p] = _dot_general_rule
jet_rules[P.div_p] = _div_rule
jet_rules[P.integer_pow_p] = _integer_pow_rule


def _pow_rule(ins):
    x, y = ins
    z0 = P.pow(x[0], y[0])
    if not _has_series(y):                        # x^a: x z' = a x' z
        return series_pow(x, y[0], z0)
    # x^y = exp(y log x)
    lx = _log_series(x, P.log(x[0]))
    u = series_mul(y, lx) if _has_series(x) else [None] + [_mul(c, lx[0]) for c in y[1:]]
    return _ode(u, z0, lambda z, m: z[m])


jet_rules[P.pow_p] = _pow_rule


# ============================================================================
# Rules: elementwise transcendental functions, by their recurrences
# ============================================================================

def _exp_rule(ins):
    (x,) = ins                                    # z' = z x'
    return _ode(x, P.exp(x[0]), lambda z, m: z[m])


def _exp2_rule(ins):
    (x,) = ins                                    # 2^x = e^(x ln 2)
    u = [None] + [_scale(c, math.log(2.0)) for c in x[1:]]
    return _ode(u, P.exp2_p.bind(x[0]), lambda z, m: z[m])


def _expm1_rule(ins):
    (x,) = ins                                    # z' = (z + 1) x'
    return _ode(x, P.expm1_p.bind(x[0]), lambda z, m: P.add(z[0], 1.0) if m == 0 else z[m])


def _log_series(x, z0):
    """z = log x: x₀ z_k = x_k - (1/k) Σ_{j=1}^{k-1} j z_j x_{k-j}."""
    z, zd = [z0], [None]
    for k in range(1, len(x)):
        r = _scale(_sum(_mul(zd[j], x[k - j]) for j in range(1, k)), 1 / k)
        num = x[k] if r is None else (P.neg(r) if x[k] is None else P.sub(x[k], r))
        z.append(None if num is None else P.div(num, x[0]))
        zd.append(_scale(z[k], k))
    return z


def _log_rule(ins):
    (x,) = ins
    return _log_series(x, P.log(x[0]))


def _log1p_rule(ins):
    (x,) = ins
    return _log_series(_add_const(x, 1.0), P.log1p_p.bind(x[0]))


def _sincos(x, s0, c0, sign):
    """s' = c x', c' = sign · s x' (sign -1: sin/cos, +1: sinh/cosh)."""
    s, c, xd = [s0], [c0], _dt(x)
    for k in range(1, len(x)):
        s.append(_integral_term(xd, c, k))
        c.append(_integral_term(xd, s, k, sign))
    return s, c


def _sin_rule(ins):
    return _sincos(ins[0], P.sin(ins[0][0]), P.cos(ins[0][0]), -1)[0]


def _cos_rule(ins):
    return _sincos(ins[0], P.sin(ins[0][0]), P.cos(ins[0][0]), -1)[1]


def _sinh_rule(ins):
    return _sincos(ins[0], P.sinh(ins[0][0]), P.cosh(ins[0][0]), 1)[0]


def _cosh_rule(ins):
    return _sincos(ins[0], P.sinh(ins[0][0]), P.cosh(ins[0][0]), 1)[1]


def _tanh_rule(ins):
    (x,) = ins                                    # z' = (1 - z²) x'
    return _ode(x, P.tanh(x[0]), lambda z, m: P.sub(1.0, P.mul(z[0], z[0])) if m == 0
                else _neg(_square_term(z, m)))


def _tan_rule(ins):
    (x,) = ins                                    # z' = (1 + z²) x'
    return _ode(x, P.tan_p.bind(x[0]), lambda z, m: P.add(1.0, P.mul(z[0], z[0])) if m == 0
                else _square_term(z, m))


def _logistic_rule(ins):
    (x,) = ins                                    # z' = (z - z²) x'
    return _ode(x, P.logistic_p.bind(x[0]),
                lambda z, m: P.sub(z[0], P.mul(z[0], z[0])) if m == 0
                else _sum([z[m], _neg(_square_term(z, m))]))


def _neg(c):
    return None if c is None else P.neg(c)


def _sqrt_rule(ins):
    (x,) = ins                                    # z² = x: 2 z₀ z_k = x_k - Σ_{j=1}^{k-1} z_j z_{k-j}
    z = [P.sqrt(x[0])]
    two_z0 = None
    for k in range(1, len(x)):
        r = _square_term(z, k, lo=1)
        num = x[k] if r is None else (P.neg(r) if x[k] is None else P.sub(x[k], r))
        if num is not None and two_z0 is None:
            two_z0 = P.mul(z[0], 2.0)
        z.append(None if num is None else P.div(num, two_z0))
    return z


def _rsqrt_rule(ins):
    return series_pow(ins[0], -0.5, P.rsqrt(ins[0][0]))


def _cbrt_rule(ins):
    return series_pow(ins[0], 1.0 / 3.0, P.cbrt_p.bind(ins[0][0]))


def _inverse_trig(prim, u_of, w_of, sign=1):
    """z' = w(x) x' where w is a series function of x alone (asin: w = (1 - x²)^(-1/2))."""
    def rule(ins):
        (x,) = ins
        K = len(x) - 1
        xs = x[:K]                                # w is needed up to order K-1 only
        u = u_of(series_square(xs))
        w = w_of(u)
        z = series_integrate(x, w, prim.bind(x[0]))
        return z if sign > 0 else [z[0]] + [_neg(c) for c in z[1:]]
    jet_rules[prim] = rule


def _one_minus(s):
    return [P.sub(1.0, s[0])] + [_neg(c) for c in s[1:]]


def _rsqrt_series(u):
    return series_pow(u, -0.5, P.rsqrt(u[0]))


def _recip_series(u):
    one = [P.full((), 1, P.dtype_of(u[0]))] + [None] * (len(u) - 1)
    return series_div(one, u)


_inverse_trig(P.asin_p, _one_minus, _rsqrt_series)
_inverse_trig(P.acos_p, _one_minus, _rsqrt_series, sign=-1)
_inverse_trig(P.atan_p, lambda s: _add_const(s, 1.0), _recip_series)
_inverse_trig(P.asinh_p, lambda s: _add_const(s, 1.0), _rsqrt_series)
_inverse_trig(P.acosh_p, lambda s: _add_const(s, -1.0), _rsqrt_series)
_inverse_trig(P.atanh_p, _one_minus, _recip_series)


def _atan2_rule(ins):
    a, b = ins                                    # z = atan(a/b): z' = (b a' - a b') / (a² + b²)
    K = len(a) - 1
    z0 = P.atan2(a[0], b[0])

    def deriv(s):                                 # coefficients of s'(t), orders 0..K-1
        return [_scale(s[m + 1], m + 1) for m in range(K)]

    da, db = deriv(a), deriv(b)
    bs, as_ = b[:K], a[:K]
    num = [_sum([_cauchy_term(bs, da, m), _neg(_cauchy_term(as_, db, m))]) for m in range(K)]
    den = [P.add(P.mul(a[0], a[0]), P.mul(b[0], b[0]))] + [
        _sum([_square_term(as_, m), _square_term(bs, m)]) for m in range(1, K)]
    q = series_div([_zeros(z0) if num[0] is None else num[0]] + num[1:], den)
    return [z0] + [_scale(q[k - 1], 1.0 / k) for k in range(1, K + 1)]


for _p, _r in [(P.exp_p, _exp_rule), (P.exp2_p, _exp2_rule), (P.expm1_p, _expm1_rule),
               (P.log_p, _log_rule), (P.log1p_p, _log1p_rule), (P.sin_p, _sin_rule),
               (P.cos_p, _cos_rule), (P.sinh_p, _sinh_rule), (P.cosh_p, _cosh_rule),
               (P.tanh_p, _tanh_rule), (P.tan_p, _tan_rule), (P.logistic_p, _logistic_rule),
               (P.sqrt_p, _sqrt_rule), (P.rsqrt_p, _rsqrt_rule), (P.cbrt_p, _cbrt_rule),
               (P.atan2_p, _atan2_rule)]:
    jet_rules[_p] = _r


# ============================================================================
# Rules: products along axes (reduce_prod, cumprod) as trees of series products
# ============================================================================

def _shift_series(y, axis, d, nd):
    """y shifted by ``d`` along ``axis``: the primal is filled with 1, coefficients with 0."""
    cfg = [(0, 0, 0)] * nd
    cfg[axis] = (d, -d, 0)
    dt = P.dtype_of(y[0])
    return [P.pad(y[0], P.scalar(1, dt), cfg)] + [
        None if c is None else P.pad(c, P.scalar(0, dt), cfg) for c in y[1:]]


def _cumprod_rule(ins, *, axis, reverse):
    # the Hillis–Steele scan of the jvp rule, y_i <- y_i · y_{i-d} for d = 1, 2, 4, …, on
    # series: log₂ n Cauchy products, exact with zeros in x
    (x,) = ins
    n, nd = P.shape_of(x[0])[axis], len(P.shape_of(x[0]))
    y = _map(lambda c: P.rev(c, (axis,)), x) if reverse else list(x)
    d = 1
    while d < n:
        y = series_mul(y, _shift_series(y, axis, d, nd))
        d *= 2
    if reverse:
        y = _map(lambda c: P.rev(c, (axis,)), y)
    return [P.cumprod_p.bind(x[0], axis=axis, reverse=reverse)] + y[1:]


def _reduce_prod_rule(ins, *, axes):
    (x,) = ins
    shape = P.shape_of(x[0])
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    kept_shape = tuple(shape[i] for i in kept)
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    z0 = P.reduce_prod_p.bind(x[0], axes=axes)
    perm = kept + tuple(axes)
    y = _map(lambda c: P.reshape(P.transpose(c, perm), kept_shape + (n,)), x)
    ax, dt = len(kept_shape), P.dtype_of(x[0])
    if n == 0:
        return [z0] + [None] * (len(x) - 1)
    while n > 1:                                  # pairwise products of halves
        if n % 2:
            cfg = [(0, 0, 0)] * ax + [(0, 1, 0)]
            y = [P.pad(y[0], P.scalar(1, dt), cfg)] + [
                None if c is None else P.pad(c, P.scalar(0, dt), cfg) for c in y[1:]]
            n += 1
        h = n // 2
        lo = _map(lambda c: P.slice_in_dim(c, 0, h, ax), y)
        hi = _map(lambda c: P.slice_in_dim(c, h, n, ax), y)
        y, n = series_mul(lo, hi), h
    return [z0] + [None if c is None else P.reshape(c, kept_shape) for c in y[1:]]


jet_rules[P.cumprod_p] = _cumprod_rule
jet_rules[P.reduce_prod_p] = _reduce_prod_rule


# ============================================================================
# Rules: linear algebra, by the series recurrences of their defining equations
# ============================================================================

def _solve_rule(ins):
    a, b = ins                                    # A X = B: A₀ X_k = B_k - Σ_{j=1}^k A_j X_{k-j}
    x = [P.solve_p.bind(a[0], b[0])]
    for k in range(1, len(a)):
        r = _cauchy_term(a, x, k, lo=1, op=P.batched_matmul)
        rhs = b[k] if r is None else (P.neg(r) if b[k] is None else P.sub(b[k], r))
        x.append(None if rhs is None else P.solve_p.bind(a[0], rhs))
    return x


def _tri_solve_rule(ins, **p):
    a, b = ins                                    # op(A) X = B (or X op(A) = B), A's triangle

    def tri(ta):                                  # the part of a coefficient the routine reads
        dA = P.tril(ta) if p["lower"] else P.mT(P.tril(P.mT(ta)))
        if p["unit_diagonal"]:
            dA = P.tril(dA, -1) if p["lower"] else P.mT(P.tril(P.mT(dA), -1))
        return P.mT(dA) if p["transpose_a"] else dA

    at = [None] + [None if c is None else tri(c) for c in a[1:]]
    x = [P.triangular_solve_p.bind(a[0], b[0], **p)]
    for k in range(1, len(a)):
        if p["left_side"]:
            r = _cauchy_term(at, x, k, lo=1, op=P.batched_matmul)
        else:
            r = _cauchy_term(x, at, k, hi=k - 1, op=P.batched_matmul)
        rhs = b[k] if r is None else (P.neg(r) if b[k] is None else P.sub(b[k], r))
        x.append(None if rhs is None else P.triangular_solve_p.bind(a[0], rhs, **p))
    return x


def _eye_mask(shape):
    n = len(shape)
    return P.eq(P.iota(np.int64, shape, n - 2), P.iota(np.int64, shape, n - 1))


def _cholesky_rule(ins):
    # A = L Lᵀ: L₀ L_kᵀ + L_k L₀ᵀ = S_k := A_k - Σ_{j=1}^{k-1} L_j L_{k-j}ᵀ, solved as in the
    # jvp rule: L_k = L₀ Φ(L₀⁻¹ S_k L₀⁻ᵀ), Φ = lower triangle with the diagonal halved
    (a,) = ins
    L = [P.cholesky_p.bind(a[0])]
    shape, dt = P.shape_of(a[0]), P.dtype_of(a[0])
    half = P.select(_eye_mask(shape), P.full(shape, 0.5, dt), P.full(shape, 1.0, dt))
    for k in range(1, len(a)):
        r = _cauchy_term(L, [None] + [None if c is None else P.mT(c) for c in L[1:]], k,
                         lo=1, hi=k - 1, op=P.batched_matmul)
        ak = None if a[k] is None else P.sym_lower(a[k])
        s = ak if r is None else (P.neg(r) if ak is None else P.sub(ak, r))
        if s is None:
            L.append(None)
            continue
        tmp = P.triangular_solve(L[0], s, left_side=True, lower=True)
        tmp = P.mT(P.triangular_solve(L[0], P.mT(tmp), left_side=True, lower=True))
        L.append(P.batched_matmul(L[0], P.mul(P.tril(tmp), half)))
    return L


def _slogdet_rule(ins):
    # (log|det A|)' = tr(A⁻¹ A'); B = A⁻¹ has A₀ B_m = -Σ_{j=1}^m A_j B_{m-j}
    (a,) = ins
    K = len(a) - 1
    s0, l0 = P.slogdet_p.bind(a[0])
    shape, nd = P.shape_of(a[0]), len(P.shape_of(a[0]))
    eye = P.convert(_eye_mask(shape), P.dtype_of(a[0]))
    B = [P.solve_p.bind(a[0], eye)]
    for m in range(1, K):
        r = _cauchy_term(a, B, m, lo=1, op=P.batched_matmul)
        B.append(None if r is None else P.neg(P.solve_p.bind(a[0], r)))

    def tr(x, y):                                 # tr(x y) = Σ x ∘ yᵀ
        return P.reduce_sum(P.mul(x, P.mT(y)), (nd - 2, nd - 1))

    l = [l0] + [_sum(_scale(_mul(a[j], B[k - j], tr), j / k) for j in range(1, k + 1))
                for k in range(1, K + 1)]
    return [[s0] + [None] * K, l]


def _eigh_rule(ins):
    # A V = V Λ, VᵀV = I. With V_k = V₀ C_k, Ã_j = V₀ᵀ A_j V₀ and
    # R_k = Σ_{j=1}^k Ã_j C_{k-j} - Σ_{j=1}^{k-1} C_j Λ_{k-j}:
    #   Λ_k = diag R_k,  (C_k)_ij = R_ij / (λ_j - λ_i) off the diagonal,
    #   (C_k)_ii = -½ (Σ_{j=1}^{k-1} C_jᵀ C_{k-j})_ii   (orthonormality)
    (a,) = ins
    K = len(a) - 1
    w0, v0 = P.eigh_p.bind(a[0])
    shape, nd, dt = P.shape_of(a[0]), len(P.shape_of(a[0])), P.dtype_of(a[0])
    batch = tuple(range(nd - 2))
    eye = _eye_mask(shape)
    eyef = P.convert(eye, dt)
    wi = P.broadcast_in_dim(w0, shape, batch + (nd - 2,))
    wj = P.broadcast_in_dim(w0, shape, batch + (nd - 1,))
    diff = P.sub(wj, wi)
    safe = P.select(eye, P.ones_like(diff), diff)
    F = P.select(eye, P.zeros_like(diff), P.div(P.ones_like(diff), safe))
    At = [None] + [None if c is None else P.batched_matmul(P.mT(v0), P.batched_matmul(P.sym_lower(c), v0))
                   for c in a[1:]]
    C, W = [None], [w0]                           # C₀ = I is used implicitly

    def cols(c, lam):                             # c diag(λ)
        return P.mul(c, P.broadcast_in_dim(lam, shape, batch + (nd - 1,)))

    for k in range(1, K + 1):
        r = _sum([At[k]] + [_mul(At[j], C[k - j], P.batched_matmul) for j in range(1, k)]
                 + [_neg(None if C[j] is None or W[k - j] is None else cols(C[j], W[k - j]))
                    for j in range(1, k)])
        if r is None:
            C.append(None)
            W.append(None)
            continue
        W.append(P.reduce_sum(P.mul(r, eyef), (nd - 1,)))
        ck = P.mul(F, r)
        o = _sum(_mul(C[j], C[k - j], lambda x, y: P.batched_matmul(P.mT(x), y)) for j in range(1, k))
        if o is not None:
            ck = P.add(ck, P.mul(o, P.mul(eyef, -0.5)))
        C.append(ck)
    return [W, [v0] + [None if c is None else P.batched_matmul(v0, c) for c in C[1:]]]


jet_rules[P.solve_p] = _solve_rule
jet_rules[P.triangular_solve_p] = _tri_solve_rule
jet_rules[P.cholesky_p] = _cholesky_rule
jet_rules[P.slogdet_p] = _slogdet_rule
jet_rules[P.eigh_p] = _eigh_rule


# ============================================================================
# Rules: calls and control flow apply jet to their bodies
# ============================================================================

def _call_rule(body):
    """A call-like primitive: jet of its body (``body(ins, params) -> (jaxpr, consts)``)."""
    def rule(ins, **params):
        K = len(ins[0]) - 1
        jaxpr, consts = body(ins, params)
        outs, oser = jet_eval(jaxpr, consts, [s[0] for s in ins], [s[1:] for s in ins], K)
        return [[o] + list(s) for o, s in zip(outs, oser)]
    return rule


def _custom_lin_body(ins, params):
    from ..custom_derivatives import custom_lin_forward
    avals = [ShapedArray(P.shape_of(s[0]), P.dtype_of(s[0])) for s in ins]
    closed = trace_flat(lambda *a: custom_lin_forward(*a, **params), avals, name="custom_lin")
    return closed.jaxpr, closed.consts


# custom_jvp functions by their true function (the rule gives one derivative, jet needs all)
def _jettable(jaxpr):
    """Whether every primitive of ``jaxpr`` (and of the bodies it calls) has a Taylor rule."""
    for e in jaxpr.eqns:
        if e.primitive.name in OPAQUE or rule_for(e.primitive) is None:
            return False
        for v in e.params.values():
            for j in (v if isinstance(v, (tuple, list)) else [v]):
                inner = getattr(j, "jaxpr", j)
                if hasattr(inner, "eqns") and not _jettable(inner):
                    return False
    return True


def _custom_jvp_rule(ins, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    # By the true function where it can be: the user's rule gives one derivative, jet needs
    # all of them. Where it cannot (opaque host code inside, e.g. a pure_callback), by the
    # rule: z' = T(x, x') with T the rule's tangent map, so the series of z' to order K-1
    # is the jet of T at order K-1 (and z_k = (z')_{k-1} / k); T may call the function
    # again, which recurses with one order less.
    if _jettable(call_jaxpr):
        return _call_rule(lambda ins, p: (p["call_jaxpr"], []))(
            ins, call_jaxpr=call_jaxpr, jvp=jvp, num_consts=num_consts,
            symbolic_zeros=symbolic_zeros)
    from .partial_eval import dce_closed
    K = len(ins[0]) - 1
    if any(_has_series(s) for s in ins[:num_consts]):
        raise UnsupportedError("a custom_jvp function closes over a value that is being "
                               "differentiated; pass that value as an argument instead")
    z0 = _cd.custom_jvp_call_p.bind(
        *[s[0] for s in ins], call_jaxpr=call_jaxpr, jvp=jvp, num_consts=num_consts,
        symbolic_zeros=symbolic_zeros)
    xs = ins[num_consts:]
    x0 = [s[0] for s in xs]
    floats = [is_inexact_dtype(P.dtype_of(x)) for x in x0]
    avals = [ShapedArray(P.shape_of(x), P.dtype_of(x)) for x in x0]

    def tangent_map(*args):
        it = iter(args[len(x0):])
        ts = [next(it) if fl else P.full(a.shape, 0, P.tangent_dtype(a.dtype))
              for fl, a in zip(floats, avals)]
        _, touts = jvp(list(args[:len(x0)]), ts)
        return [P.instantiate(t) for t in touts]

    T = dce_closed(trace_flat(tangent_map, avals + [a for a, fl in zip(avals, floats) if fl],
                              name="custom_jvp_rule"))
    # x'(t) has the coefficients (m + 1) x_{m+1}
    dx = [[_zeros(s[0]) if s[1] is None else s[1]] + [_scale(s[m + 1], m + 1) for m in range(1, K)]
          for s, fl in zip(xs, floats) if fl]
    w, ws = jet_eval(T.jaxpr, T.consts, x0 + [d[0] for d in dx],
                     [s[1:K] for s in xs] + [d[1:] for d in dx], K - 1)
    return [[z] + [_scale(([wi] + list(wsi))[k - 1], 1.0 / k) for k in range(1, K + 1)]
            for z, wi, wsi in zip(z0, w, ws)]


jet_rules[_cd.custom_jvp_call_p] = _custom_jvp_rule
jet_rules[_cd.custom_vjp_call_p] = _call_rule(lambda ins, p: (p["call_jaxpr"], []))
jet_rules[_cd.custom_lin_p] = _call_rule(_custom_lin_body)
# a checkpointed body is inlined: Taylor mode is forward-only, there is nothing to save
jet_rules[_remat.remat_p] = _call_rule(lambda ins, p: (p["jaxpr"], []))
jet_rules[_remat.name_p] = _name_rule
# logsumexp is a composite (autodiff/primitives/reductions.py): jet of its definition
_lse_rule = _call_rule(lambda ins, p: P.reductions._lse_body(
    ShapedArray(P.shape_of(ins[0][0]), P.dtype_of(ins[0][0])), p["axes"]))
jet_rules[P.logsumexp_p] = lambda ins, **params: _lse_rule(ins, **params)[0]   # one result


def _dense(aval, s):
    """All coefficients of a float value as arrays (zeros materialized): a loop carry."""
    return [P.full(aval.shape, 0, aval.dtype) if c is None else c for c in s]


def _pack(avals, outs, oser):
    return list(outs), [_dense(a, s) for a, s in zip(avals, oser) if _is_float(a)]


def _unpack(avals, coefs, K):
    it = iter(coefs)
    return [next(it) if _is_float(a) else [None] * K for a in avals]


def _cond_rule(ins, *, branches):
    K = len(ins[0]) - 1
    ops = ins[1:]
    n = len(ops)
    mask = [[c is not None for c in s[1:]] for s in ops]
    flat = [s[0] for s in ops] + [c for s in ops for c in s[1:] if c is not None]
    out_avals = branches[0].out_avals

    def make(b):
        def branch(*args):
            it = iter(args[n:])
            series = [[next(it) if m else None for m in ms] for ms in mask]
            outs, oser = jet_eval(b.jaxpr, b.consts, args[:n], series, K)
            return _pack(out_avals, outs, oser)
        return branch

    outs, coefs = _lax.switch(ins[0][0], [make(b) for b in branches], *flat)
    return [[o] + s for o, s in zip(outs, _unpack(out_avals, coefs, K))]


def _scan_rule(ins, *, jaxpr, num_consts, num_carry, length, reverse):
    K = len(ins[0]) - 1
    nc, nk = num_consts, num_carry
    in_avals = jaxpr.in_avals
    k_avals, y_avals = jaxpr.out_avals[:nk], jaxpr.out_avals[nk:]
    consts, carry, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    x_mask = [[c is not None for c in s[1:]] for s in xs]
    init = ([s[0] for s in carry], [_dense(a, s[1:]) for a, s in zip(in_avals[nc:], carry)
                                    if _is_float(a)])
    x_in = ([s[0] for s in xs], [c for s in xs for c in s[1:] if c is not None])

    def body(c, x):
        kp, kc = c
        xp, xc = x if x is not None else ([], [])
        it = iter(xc)
        x_series = [[next(it) if m else None for m in ms] for ms in x_mask]
        outs, oser = jet_eval(jaxpr.jaxpr, jaxpr.consts, [s[0] for s in consts] + kp + xp,
                              [s[1:] for s in consts] + _unpack(k_avals, kc, K) + x_series, K)
        kp2, kc2 = _pack(k_avals, outs[:nk], oser[:nk])
        yp, yc = _pack(y_avals, outs[nk:], oser[nk:])
        return (kp2, kc2), (yp, yc)

    (kp, kc), (yp, yc) = _lax.scan(body, init, x_in if xs else None, length=length, reverse=reverse)
    return ([[o] + s for o, s in zip(kp, _unpack(k_avals, kc, K))]
            + [[o] + s for o, s in zip(yp, _unpack(y_avals, yc, K))])


def _while_rule(ins, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    K = len(ins[0]) - 1
    ncc, nbc = cond_nconsts, body_nconsts
    cc, bc, carry = ins[:ncc], ins[ncc:ncc + nbc], ins[ncc + nbc:]
    k_avals = body_jaxpr.out_avals
    init = ([s[0] for s in carry], [_dense(a, s[1:]) for a, s in zip(k_avals, carry)
                                    if _is_float(a)])

    def cond_fun(val):                            # the loop's course depends on primals only
        return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *[s[0] for s in cc], *val[0])[0]

    def body_fun(val):
        kp, kc = val
        outs, oser = jet_eval(body_jaxpr.jaxpr, body_jaxpr.consts, [s[0] for s in bc] + kp,
                              [s[1:] for s in bc] + _unpack(k_avals, kc, K), K)
        return _pack(k_avals, outs, oser)

    kp, kc = _lax.while_loop(cond_fun, body_fun, init, max_steps=max_steps)
    return [[o] + s for o, s in zip(kp, _unpack(k_avals, kc, K))]


jet_rules[_lax.cond_p] = _cond_rule
jet_rules[_lax.scan_p] = _scan_rule
jet_rules[_lax.while_p] = _while_rule


# ============================================================================
# The user-facing transforms
# ============================================================================

def _check_series(name, primals, series):
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError(f"{name}: primals and series must be tuples (one entry per argument), "
                        f"e.g. jet(f, (x,), ((v, 0.0, 0.0),))")
    if len(primals) != len(series):
        raise TypeError(f"{name}: {len(primals)} primals but {len(series)} series")
    orders = {len(s) for s in series if isinstance(s, (tuple, list))}
    if any(not isinstance(s, (tuple, list)) for s in series) or len(orders) > 1:
        raise TypeError(f"{name}: each series must be a list of Taylor terms, all of one "
                        f"length (the order); got lengths {sorted(orders)}")
    return orders.pop() if orders else 0


def _jet_flat(fun, flat_p, in_tree, flat_s, K):
    """jet on flat inputs with normalized coefficients -> (outs, out_tree, derivative terms)."""
    from ..api import trace_fun
    closed, out_tree = trace_fun(fun, flat_p, in_tree, name="jet", differentiated=True)
    outs, oser = jet_eval(closed.jaxpr, closed.consts, flat_p, flat_s, K)
    terms = [[P.full(P.shape_of(o), 0, P.dtype_of(o)) if c is None
              else _scale(c, math.factorial(k + 1)) for k, c in enumerate(s)]
             for o, s in zip(outs, oser)]
    return outs, out_tree, terms


def jet(fun, primals, series):
    """Taylor-mode differentiation: push a truncated Taylor series through ``fun``.

    ``primals`` is a tuple of inputs and ``series`` a tuple (one per input) of lists of
    terms ``[x₁, …, x_K]`` of the input path ``x(t) = x₀ + Σ_k x_k t^k / k!`` (each term
    shaped like its input). Returns ``(fun(*primals), series_out)`` with ``series_out``
    the terms ``[y₁, …, y_K]`` of ``y(t) = fun(x(t))``, scaled the same way:
    ``y_k = d^k/dt^k fun(x(t))`` at ``t = 0`` (JAX's ``jax.experimental.jet.jet``
    convention). One pass whose cost grows like K² per operation, for every primitive;
    the result is IR again, so ``jit``, ``vmap``, ``grad`` and ``make_jaxpr`` apply.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> y, (y1, y2, y3) = ad.jet(anp.sin, (0.5,), ((1.0, 0.0, 0.0),))
    >>> np.allclose([y1, y2, y3], [np.cos(0.5), -np.sin(0.5), -np.cos(0.5)])
    True
    """
    from ..api import as_array, _outputs
    from ..core import user_source
    from ..errors import ShapeError
    from ..tree_util import tree_flatten, tree_unflatten
    K = _check_series("jet", primals, series)
    flat_p, in_tree = tree_flatten(tuple(primals))
    flat_p = [as_array(x) for x in flat_p]
    terms = []                                    # per order, the flat leaves of every input
    for k in range(K):
        flat_k, tree_k = tree_flatten(tuple(s[k] for s in series))
        if tree_k != in_tree:
            raise TypeError(f"jet: series term {k + 1} has structure {tree_k}, the primals "
                            f"{in_tree}")
        terms.append([as_array(c) for c in flat_k])
    flat_s = []
    for i, p in enumerate(flat_p):
        shape, dt = P.shape_of(p), P.dtype_of(p)
        for k in range(K):
            if P.shape_of(terms[k][i]) != shape:
                raise ShapeError(f"jet: series term {k + 1} of an input has shape "
                                 f"{P.shape_of(terms[k][i])}, the input {shape}: every term "
                                 f"is shaped like its input", source=user_source())
        flat_s.append([P.mul(P.convert(terms[k][i], dt), 1.0 / math.factorial(k + 1))
                       for k in range(K)] if is_inexact_dtype(dt) else None)
    outs, out_tree, oterms = _jet_flat(fun, flat_p, in_tree, flat_s, K)
    return (_outputs(tree_unflatten(out_tree, outs)),
            _outputs(tree_unflatten(out_tree, oterms)))


def taylor(fun, order):
    """The directional derivatives ``[f(x), f'(x)·v, f''(x)[v, v], …, f^(order)(x)[v, …, v]]``
    of ``fun`` at ``x`` along ``v`` (default: ones), from one Taylor-mode pass.

    These are derivatives (the Taylor coefficients times ``k!``); for a scalar ``x`` the
    plain ``f^(k)(x)``. Nested ``grad`` gives the same numbers at a cost that grows much
    faster with ``order``. The input path ``x + v t`` has no higher terms, so they cost
    no equations.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> [float(d) for d in ad.taylor(anp.exp, 4)(0.0)]
    [1.0, 1.0, 1.0, 1.0, 1.0]
    >>> [float(d) for d in ad.taylor(lambda x: x ** 3, 3)(2.0)]    # x³, 3x², 6x, 6
    [8.0, 12.0, 12.0, 6.0]
    """
    if isinstance(order, bool) or int(order) != order or order < 0:
        raise TypeError(f"taylor: order must be a non-negative int, got {order!r}")
    K = int(order)

    def derivatives(x, v=None):
        from ..api import as_array, _outputs
        from ..tree_util import tree_flatten, tree_unflatten
        flat_p, in_tree = tree_flatten((x,))
        flat_p = [as_array(a) for a in flat_p]
        if v is None:
            flat_v = [np.ones(P.shape_of(a), P.dtype_of(a)) for a in flat_p]
        else:
            flat_v, v_tree = tree_flatten((v,))
            if v_tree != in_tree:
                raise TypeError(f"taylor: v has structure {v_tree}, x {in_tree}")
            flat_v = [as_array(a) for a in flat_v]
        flat_s = [([P.convert(t, P.dtype_of(a))] + [None] * (K - 1) if K else [])
                  if is_inexact_dtype(P.dtype_of(a)) else None for a, t in zip(flat_p, flat_v)]
        outs, out_tree, oterms = _jet_flat(fun, flat_p, in_tree, flat_s, K)
        return [_outputs(tree_unflatten(out_tree, outs))] + [
            _outputs(tree_unflatten(out_tree, [t[k] for t in oterms])) for k in range(K)]

    derivatives.__name__ = f"taylor_{K}_{getattr(fun, '__name__', 'fun')}"
    derivatives.__doc__ = f"[f(x), f'(x)·v, …, f^({K})(x)[v, …]] of {fun!r} from one jet pass"
    return derivatives


# debug_callback: a side effect with no results; it sees the primal values, once
def _debug_callback_rule(ins, **params):
    from ..callback import debug_callback_p
    debug_callback_p.bind(*[s[0] for s in ins], **params)
    return []


def _register_debug_callback():
    from ..callback import debug_callback_p
    jet_rules[debug_callback_p] = _debug_callback_rule


_register_debug_callback()
