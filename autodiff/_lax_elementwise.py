"""``jax.lax``'s elementwise operators: the arithmetic and comparison operators under JAX's
names (``add``, ``sub``, ``div`` rounding integers toward zero, ``rem``, ``clamp``, ...), the
special functions under their lax names (``erf_inv``, ``lgamma``, ``igamma``, ``bessel_i0e``,
``random_gamma_grad``, ...) and ``complex``. Each is a composition of ``autodiff.numpy`` (or
``autodiff.scipy.special``): every transform and ``jit`` handle it.

>>> import numpy as np, autodiff as ad
>>> ad.lax.div(np.array([-7, 7]), 2)
array([-3,  3])
>>> float(ad.lax.erf(ad.lax.erf_inv(np.float64(0.3))))
0.3
"""

import numpy as np

from . import numpy as anp
from ._random_distributions import dgamma_cdf_da
from .numpy._special_functions import sigmoid
from .scipy import special
from ._lax_structure import as_dtype

__all__ = [
    # arithmetic and comparisons
    "add", "sub", "mul", "div", "rem", "max", "min", "neg", "abs", "sign", "exp", "log",
    "log1p", "expm1", "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sin", "cos", "tan",
    "pow", "integer_pow", "square", "floor", "ceil", "round", "is_finite", "eq", "ne",
    "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "convert_element_type", "clamp",
    # more elementwise functions and the special functions, JAX's names
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cosh", "sinh", "exp2",
    "reciprocal", "nextafter", "erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma",
    "zeta", "bessel_i0e", "bessel_i1e", "igamma", "igammac", "igamma_grad_a",
    "random_gamma_grad", "betainc", "real", "imag", "conj", "complex",
]


# ----------------------------------------------------------------------------
# elementwise
# ----------------------------------------------------------------------------
add, sub = anp.add, anp.subtract


def mul(x, y, *, out_dtype=None):
    """Elementwise ``x * y``; with ``out_dtype`` the inputs are cast to it first and the
    product has that dtype (as JAX's ``lax.mul(x, y, out_dtype=...)``).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.mul(np.float32(1.5), np.float32(2.0), out_dtype=np.float64).dtype
    dtype('float64')
    """
    if out_dtype is None:
        return anp.multiply(x, y)
    dt = as_dtype(out_dtype)
    return anp.multiply(anp.astype(anp.asarray(x), dt), anp.astype(anp.asarray(y), dt))


max, min = anp.maximum, anp.minimum  # noqa: A001 - JAX's names
neg, abs, sign = anp.negative, anp.abs, anp.sign  # noqa: A001
exp, log, log1p, expm1, sqrt, cbrt = anp.exp, anp.log, anp.log1p, anp.expm1, anp.sqrt, anp.cbrt
tanh, sin, cos, tan = anp.tanh, anp.sin, anp.cos, anp.tan
pow = anp.power  # noqa: A001
floor, ceil, is_finite = anp.floor, anp.ceil, anp.isfinite
eq, ne, lt, le, gt, ge = anp.equal, anp.not_equal, anp.less, anp.less_equal, anp.greater, anp.greater_equal
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = anp.bitwise_and, anp.bitwise_or, anp.bitwise_xor, anp.invert
square = anp.square


def div(x, y):  # JAX's lax.div rounds integers toward zero
    """``x / y``; for integers rounded toward zero (C semantics, as ``lax.div``)."""
    xa, ya = anp.asarray(x), anp.asarray(y)
    if np.dtype(anp.result_type(xa, ya)).kind in "iu":
        q = anp.floor_divide(anp.abs(xa), anp.abs(ya))
        return anp.where(anp.equal(anp.sign(xa), anp.sign(ya)), q, anp.negative(q))
    return anp.divide(xa, ya)


def rem(x, y):
    """Remainder with the sign of ``x`` (C's ``fmod``, as ``lax.rem``)."""
    return anp.fmod(x, y)


def rsqrt(x):
    """``1 / sqrt(x)``."""
    return anp.divide(1.0, anp.sqrt(x))


def logistic(x):
    """``1 / (1 + exp(-x))``."""
    return sigmoid(x)


def integer_pow(x, y):
    """``x ** y`` for a static integer ``y``."""
    return anp.power(x, int(y))


def round(x, rounding_method=0):  # noqa: A001
    """Round half away from zero (``rounding_method=0``, JAX's default) or to even (1)."""
    if rounding_method in (1, "TO_NEAREST_EVEN"):
        return anp.rint(x)
    x = anp.asarray(x)
    return anp.multiply(anp.sign(x), anp.floor(anp.add(anp.abs(x), 0.5)))


def convert_element_type(operand, new_dtype):
    """``operand`` cast to ``new_dtype`` (a numpy dtype or its name); differentiable between float
    types."""
    return anp.astype(anp.asarray(operand), as_dtype(new_dtype))


def clamp(min, x, max):  # noqa: A002 - JAX's signature: clamp(min, operand, max)
    """``min(max(x, min), max)``, JAX's argument order.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.clamp(0.0, np.array([-1.0, 0.5, 2.0]), 1.0)
    array([0. , 0.5, 1. ])
    """
    return anp.minimum(anp.maximum(x, min), max)


acos, acosh, asin, asinh = anp.arccos, anp.arccosh, anp.arcsin, anp.arcsinh
atan, atan2, atanh = anp.arctan, anp.arctan2, anp.arctanh
cosh, sinh, exp2, reciprocal, nextafter = anp.cosh, anp.sinh, anp.exp2, anp.reciprocal, anp.nextafter
real, imag, conj = anp.real, anp.imag, anp.conj


def erf(x):
    """The error function (``scipy.special.erf``)."""
    return special.erf(x)


def erfc(x):
    """``1 - erf(x)``, accurate for large ``x``."""
    return special.erfc(x)


def erf_inv(x):
    """The inverse error function (``scipy.special.erfinv``).

    >>> import numpy as np, autodiff as ad
    >>> float(ad.lax.erf(ad.lax.erf_inv(np.float64(0.3))))
    0.3
    """
    return special.erfinv(x)


def lgamma(x):
    """``log |Γ(x)|`` (``scipy.special.gammaln``)."""
    return special.gammaln(x)


def digamma(x):
    """ψ(x) = d/dx log Γ(x)."""
    return special.digamma(x)


def polygamma(m, x):
    """ψ⁽ᵐ⁾(x), the m-th derivative of the digamma function; ``m`` may be an array of
    orders (concrete values: each distinct order is computed once).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.polygamma(np.array([1.0, 2.0]), np.array([1.0, 1.0])).round(6)
    array([ 1.644934, -2.404114])
    """
    pg = special.polygamma
    if anp.ndim(m) == 0:
        return pg(m, x)
    m = np.asarray(m)                      # a traced order is refused here, with numpy's error
    m, x = np.broadcast_to(m, np.broadcast_shapes(m.shape, anp.shape(x))), anp.asarray(x)
    out = None
    for order in np.unique(m):
        val = pg(order, x)
        out = val if out is None else anp.where(anp.equal(m, order), val, out)
    return anp.broadcast_to(out, m.shape)


def zeta(x, q):
    """The Hurwitz zeta function Σₖ (k + q)⁻ˣ."""
    return special.zeta(x, q)


def bessel_i0e(x):
    """``exp(-|x|) I₀(x)``."""
    return special.i0e(x)


def bessel_i1e(x):
    """``exp(-|x|) I₁(x)``."""
    return special.i1e(x)


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x) (``gammainc``)."""
    return special.gammainc(a, x)


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 − P(a, x)."""
    return special.gammaincc(a, x)


def igamma_grad_a(a, x):
    """∂P(a, x)/∂a, by the series of P (terms times log x − ψ(a + n + 1)).

    >>> import numpy as np, autodiff as ad
    >>> float(np.round(ad.lax.igamma_grad_a(np.float64(2.0), np.float64(1.5)), 6))
    -0.313489
    """
    a, x = anp.broadcast_arrays(anp.asarray(a, dtype=np.float64), anp.asarray(x, dtype=np.float64))
    return dgamma_cdf_da(a, x)


def random_gamma_grad(a, x):
    """The derivative of a Gamma(a) sample ``x`` with respect to ``a`` at fixed CDF value
    (implicit reparameterization): ``−(∂P/∂a)(a, x) / pdf(x; a)``.

    >>> import numpy as np, autodiff as ad
    >>> float(np.round(ad.lax.random_gamma_grad(np.float64(2.0), np.float64(1.5)), 6))
    0.936639
    """
    a, x = anp.broadcast_arrays(anp.asarray(a, dtype=np.float64), anp.asarray(x, dtype=np.float64))
    logpdf = anp.subtract(anp.subtract(anp.multiply(anp.subtract(a, 1.0), anp.log(x)), x),
                          lgamma(a))
    return anp.negative(anp.divide(igamma_grad_a(a, x), anp.exp(logpdf)))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return special.betainc(a, b, x)


def complex(x, y):  # noqa: A001 - JAX's name
    """``x + i·y`` from real parts and imaginary parts (float64 → complex128).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.complex(np.array([1.0]), np.array([2.0]))
    array([1.+2.j])
    """
    x, y = anp.asarray(x), anp.asarray(y)
    ct = np.result_type(anp.result_type(x, y), np.complex64)
    return anp.add(anp.astype(x, ct), anp.multiply(anp.astype(y, ct), ct.type(1j)))


# ----------------------------------------------------------------------------
