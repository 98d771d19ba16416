"""Arithmetic on truncated Taylor series, for the primitives' Taylor rules (``p.taylor``).

A series is the list ``[c₀, c₁, …, c_K]`` of the normalized coefficients of
``x(t) = c₀ + c₁ t + … + c_K t^K``; a coefficient above ``c₀`` that cannot be nonzero is
``None`` and costs no equations. The functions here are pure: they build the coefficients
of a product, quotient, power, logarithm, root or the solution of ``z' = w x'`` with the
primitives' library ops, so the coefficient program is IR like any other (it prints, jits,
vmaps and differentiates). The recurrences are the standard ones of Griewank & Walther,
*Evaluating Derivatives*, ch. 13: each costs O(K²) per element.

>>> import numpy as np
>>> from autodiff.primitives.taylor_series import series_div, series_mul
>>> x = [np.float64(2.0), np.float64(1.0), None]            # 2 + t
>>> [float(c) for c in series_mul(x, x)]                     # 4 + 4t + t²
[4.0, 4.0, 1.0]
>>> [float(c) for c in series_div([np.float64(1.0), None, None], x)]   # 1/(2 + t)
[0.5, -0.25, 0.125]
"""
from ._rules import dtype_of, full
from .elementwise import add, div, mul, neg, rsqrt, sub

__all__ = ["has_series", "sum_terms", "sub_term", "scale", "mul_term", "neg_term", "cauchy_term",
           "square_term", "add_const", "one_minus", "map_series", "series_mul",
           "series_square", "series_div", "series_recip", "series_pow", "series_rsqrt",
           "series_sqrt", "series_log", "series_integrate", "series_ode", "series_sincos"]


# ============================================================================
# Terms (one coefficient; None is zero)
# ============================================================================

def has_series(s):
    """Whether the series ``s`` has a coefficient above ``c₀`` that may be nonzero."""
    return any(c is not None for c in s[1:])


def sum_terms(terms):
    """The sum of the terms that are not None (None when all are)."""
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else add(out, t)
    return out


def scale(x, c):
    """``x · c`` for a Python number ``c`` (no equation for 1; None stays None)."""
    if x is None:
        return None
    return x if c == 1 else mul(x, float(c))


def mul_term(a, b, op=mul):
    """``op(a, b)``, None when either is (``op`` a bilinear map: mul, a matmul, ...)."""
    return None if a is None or b is None else op(a, b)


def neg_term(c):
    return None if c is None else neg(c)


def cauchy_term(x, y, k, lo=0, hi=None, op=mul):
    """Σ_{j=lo}^{hi} x_j y_{k-j}: the coefficient of t^k of a product."""
    hi = k if hi is None else hi
    return sum_terms(mul_term(x[j], y[k - j], op) for j in range(lo, hi + 1))


def square_term(z, m, lo=0):
    """Σ_{i=lo}^{m-lo} z_i z_{m-i}, pairing symmetric terms (half the products)."""
    pairs = scale(sum_terms(mul_term(z[i], z[m - i]) for i in range(lo, (m + 1) // 2)), 2)
    middle = mul_term(z[m // 2], z[m // 2]) if m % 2 == 0 and m // 2 >= lo else None
    return sum_terms([pairs, middle])


def sub_term(a, b):
    """``a - b`` where either may be None (zero); None when both are."""
    if b is None:
        return a
    return neg(b) if a is None else sub(a, b)


# ============================================================================
# Series
# ============================================================================

def add_const(x, c):
    return [add(x[0], c)] + list(x[1:])


def one_minus(s):
    return [sub(1.0, s[0])] + [neg_term(c) for c in s[1:]]


def map_series(fn, x, fill=None):
    """Apply a linear map to every coefficient (``fill`` maps the primal if given)."""
    return [(fill or fn)(x[0])] + [None if c is None else fn(c) for c in x[1:]]


def series_mul(x, y, op=mul):
    """The product ``op(x, y)`` of two series for a bilinear ``op`` (Cauchy products)."""
    return [op(x[0], y[0])] + [cauchy_term(x, y, k, op=op) for k in range(1, len(x))]


def series_square(x):
    return [mul(x[0], x[0])] + [square_term(x, k) for k in range(1, len(x))]


def series_div(x, y, z0=None):
    """z = x / y: y₀ z_k = x_k - Σ_{j=1}^k y_j z_{k-j}."""
    z = [div(x[0], y[0]) if z0 is None else z0]
    for k in range(1, len(x)):
        num = sub_term(x[k], cauchy_term(y, z, k, lo=1))
        z.append(None if num is None else div(num, y[0]))
    return z


def series_recip(u):
    """1 / u."""
    one = [full((), 1, dtype_of(u[0]))] + [None] * (len(u) - 1)
    return series_div(one, u)


def series_pow(x, a, z0):
    """z = x^a for a constant exponent ``a`` (number or array), from x z' = a x' z:
    k x₀ z_k = Σ_{j=1}^k (a j - (k - j)) x_j z_{k-j}."""
    z = [z0]
    for k in range(1, len(x)):
        if isinstance(a, (int, float)):
            s = sum_terms(scale(mul_term(x[j], z[k - j]), (a * j - (k - j)) / k)
                          for j in range(1, k + 1))
        else:
            A = sum_terms(scale(mul_term(x[j], z[k - j]), j / k) for j in range(1, k + 1))
            B = sum_terms(scale(mul_term(x[j], z[k - j]), (k - j) / k) for j in range(1, k))
            s = sub_term(None if A is None else mul(A, a), B)
        z.append(None if s is None else div(s, x[0]))
    return z


def series_rsqrt(u):
    """u^(-1/2)."""
    return series_pow(u, -0.5, rsqrt(u[0]))


def series_sqrt(x, z0):
    """z² = x: 2 z₀ z_k = x_k - Σ_{j=1}^{k-1} z_j z_{k-j} (``z0`` = √x₀)."""
    z = [z0]
    two_z0 = None
    for k in range(1, len(x)):
        num = sub_term(x[k], square_term(z, k, lo=1))
        if num is not None and two_z0 is None:
            two_z0 = mul(z[0], 2.0)
        z.append(None if num is None else div(num, two_z0))
    return z


def series_log(x, z0):
    """z = log x: x₀ z_k = x_k - (1/k) Σ_{j=1}^{k-1} j z_j x_{k-j} (``z0`` = log x₀)."""
    z, zd = [z0], [None]
    for k in range(1, len(x)):
        num = sub_term(x[k], scale(sum_terms(mul_term(zd[j], x[k - j]) for j in range(1, k)),
                                 1 / k))
        z.append(None if num is None else div(num, x[0]))
        zd.append(scale(z[k], k))
    return z


def _weights(x):
    """[_, 1·x₁, 2·x₂, …]: the weights j x_j of z_k = (1/k) Σ_j j x_j w_{k-j}, made once."""
    return [None] + [scale(c, j) for j, c in enumerate(x[1:], 1)]


def _integral_term(xd, w, k, sign=1):
    return scale(sum_terms(mul_term(xd[j], w[k - j]) for j in range(1, k + 1)), sign / k)


def series_integrate(x, w, z0):
    """z with z' = w x': z_k = (1/k) Σ_{j=1}^k j x_j w_{k-j}, for w known up to K-1."""
    xd = _weights(x)
    return [z0] + [_integral_term(xd, w, k) for k in range(1, len(x))]


def series_ode(x, z0, w_of):
    """z with z' = w x' where w_m depends on z_0..z_m only (``w_of(z, m)``)."""
    z, w, xd = [z0], [], _weights(x)
    for k in range(1, len(x)):
        w.append(w_of(z, k - 1))
        z.append(_integral_term(xd, w, k))
    return z


def series_sincos(x, s0, c0, sign):
    """(s, c) with s' = c x', c' = sign · s x' (sign -1: sine and cosine, +1: their hyperbolic pair)."""
    s, c, xd = [s0], [c0], _weights(x)
    for k in range(1, len(x)):
        s.append(_integral_term(xd, c, k))
        c.append(_integral_term(xd, s, k, sign))
    return s, c
