"""The parts of numbers: real and imaginary parts, the argument and the complex tests of
real input (docs/complex.md); infinities by sign; mantissa and exponent (``frexp``,
``ldexp``), fractional and integral parts (``modf``), and the neighbouring floats
(``spacing``, ``nextafter``). Compositions of primitives: every transform handles them.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> anp.frexp(np.array([8.0]))
(array([0.5]), array([4], dtype=int32))
>>> float(ad.grad(lambda x: anp.modf(x)[0])(2.5))
1.0
"""

import numpy as np

from .. import numpy as anp, primitives as P
from ..core import Tracer, real_dtype
from ._base import npfunc, asarray, as_float, promote, dtype_of


# ----------------------------------------------------------------------------
# complex-number functions (docs/complex.md)
# ----------------------------------------------------------------------------

@npfunc(np.real)
def real(val):
    """``numpy.real``: the real part (real input itself).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda z: anp.real(z * z))(np.complex128(1 + 2j))   # JAX: 2z (jax.grad gives 2+4j)
    np.complex128(2+4j)
    """
    return P.real(asarray(val))


@npfunc(np.imag)
def imag(val):
    """``numpy.imag``: the imaginary part (zeros of the dtype for real input)."""
    return P.imag(asarray(val))


@npfunc(np.angle)
def angle(z, deg=False):
    """``numpy.angle``: the argument ``atan2(imag, real)`` in radians (degrees with ``deg``);
    for real input 0 where non-negative and π where negative (numpy's, signbit included)."""
    z = asarray(z)
    if dtype_of(z).kind == "c":
        out = P.atan2(P.imag(z), P.real(z))
        return P.mul(out, 180.0 / np.pi) if deg else out
    z = as_float(z)
    out = anp.where(anp.signbit(z), 180.0 if deg else np.pi, 0.0)
    return anp.astype(out, dtype_of(z))


@npfunc(np.real_if_close)
def real_if_close(a, tol=100):
    """``numpy.real_if_close``: the real part when every imaginary part is within ``tol``
    machine epsilons of zero (``tol`` > 1), else ``a``. The choice changes the dtype, so a
    traced complex ``a`` needs a concrete value (``ConcretizationError`` under ``jit``)."""
    a = asarray(a)
    if dtype_of(a).kind != "c":
        return a
    if tol > 1:
        tol = tol * np.finfo(real_dtype(dtype_of(a))).eps
    im = P.imag(a)
    v = im.concrete_value("real_if_close(traced complex)") if isinstance(im, Tracer) else im
    return P.real(a) if bool(np.all(np.abs(v) < tol)) else a


@npfunc(np.iscomplex)
def iscomplex(x):
    """``numpy.iscomplex``: where the imaginary part is non-zero (False for real input)."""
    x = asarray(x)
    if dtype_of(x).kind != "c":
        return anp.zeros_like(x, dtype=np.bool_)
    return P.ne(P.imag(x), 0)


@npfunc(np.isreal)
def isreal(x):
    """``numpy.isreal``: where the imaginary part is zero (True for real input)."""
    x = asarray(x)
    if dtype_of(x).kind != "c":
        return anp.ones_like(x, dtype=np.bool_)
    return P.eq(P.imag(x), 0)


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (``numpy.iscomplexobj``; traced values too)."""
    return np.dtype(dtype_of(x)).kind == "c" if isinstance(x, Tracer) else np.iscomplexobj(x)


def isrealobj(x):
    """Whether ``x`` has a non-complex dtype."""
    return not iscomplexobj(x)


@npfunc(np.isposinf)
def isposinf(x):
    """``x == +inf``."""
    x = asarray(x)
    return anp.equal(x, np.inf)


@npfunc(np.isneginf)
def isneginf(x):
    """``x == -inf``."""
    x = asarray(x)
    return anp.equal(x, -np.inf)


# ----------------------------------------------------------------------------
# floating-point decomposition
# ----------------------------------------------------------------------------

def _exp2_int(e, dt):
    """2**e for integer-valued float ``e`` over the whole exponent range (subnormal
    results too): two factors, each a normal number."""
    return _scale2(1.0, e)


def _scale2(x, e):
    """x·2**e for integer-valued float ``e``, one normal factor at a time, so neither the
    power nor an intermediate product overflows or underflows when the result does not."""
    h = anp.floor(anp.multiply(e, 0.5))
    return anp.multiply(anp.multiply(x, anp.exp2(h)), anp.exp2(anp.subtract(e, h)))


@npfunc(np.frexp)
def frexp(x):
    """``x = m·2**e`` with ``0.5 ≤ |m| < 1`` (``numpy.frexp``); ``dm/dx = 2**-e``."""
    x = as_float(x)
    dt = dtype_of(x)
    ax = anp.absolute(x)
    ok = anp.logical_and(anp.isfinite(x), anp.greater(ax, 0))
    safe = anp.stop_gradient(anp.where(ok, ax, 1.0))
    e = anp.add(anp.floor(anp.log2(safe)), 1.0)
    m = _scale2(safe, anp.negative(e))
    # log2 may round across a power of two: one correction step either way
    e = anp.where(anp.greater_equal(m, 1.0), anp.add(e, 1.0), anp.where(anp.less(m, 0.5), anp.subtract(e, 1.0), e))
    e = anp.stop_gradient(anp.where(ok, e, 0.0))
    mant = anp.where(ok, _scale2(x, anp.negative(e)), x)
    return mant, anp.astype(e, np.int32)


@npfunc(np.ldexp)
def ldexp(x1, x2):
    """``x1·2**x2`` (``numpy.ldexp``), without overflow in the intermediate power."""
    x1 = as_float(x1)
    e = anp.astype(asarray(x2), dtype_of(x1) if dtype_of(x1) == np.float64 else np.float64)
    out = _scale2(anp.astype(x1, dtype_of(e)), e)
    return anp.astype(out, dtype_of(x1))


@npfunc(np.modf)
def modf(x):
    """Fractional and integral parts, both with the sign of ``x`` (``numpy.modf``)."""
    x = as_float(x)
    t = anp.trunc(x)
    frac = anp.where(anp.isinf(x), anp.copysign(0.0, x), anp.subtract(x, t))
    return frac, t


def _ulp_up(ax, dt):
    """Distance from |x| to the next larger float (|x| finite, ≥ 0)."""
    fi = np.finfo(dt)
    p = fi.nmant + 1
    m, e = frexp(anp.where(anp.greater(ax, 0), ax, 1.0))
    e = anp.astype(e, dt)
    ulp = _exp2_int(anp.subtract(e, float(p)), dt)
    tiny = float(fi.smallest_subnormal)
    return anp.maximum(anp.where(anp.greater(ax, 0), ulp, tiny), tiny), m, e


@npfunc(np.spacing)
def spacing(x):
    """Distance to the next float away from zero, with the sign of ``x`` (``numpy.spacing``)."""
    x = anp.stop_gradient(as_float(x))
    dt = dtype_of(x)
    if dt == np.float16:
        # numpy's half-precision spacing is nextafter(x, +inf) - x for either sign
        out = anp.subtract(nextafter(x, anp.full_like(x, np.inf)), x)
        return anp.where(anp.isfinite(x), out, np.nan)
    ax = anp.absolute(x)
    ulp, _, _ = _ulp_up(anp.where(anp.isfinite(ax), ax, 1.0), dt)
    # the next float above the largest one is inf (numpy overflows to it)
    ulp = anp.where(anp.equal(ax, float(np.finfo(dt).max)), np.inf, ulp)
    out = anp.where(anp.less(x, 0), anp.negative(ulp), ulp)       # -0.0 counts as +0.0
    return anp.where(anp.isfinite(x), out, np.nan)


@npfunc(np.nextafter)
def nextafter(x1, x2):
    """The next float after ``x1`` towards ``x2`` (``numpy.nextafter``)."""
    x1, x2 = promote(as_float(x1), as_float(x2))
    x1, x2 = anp.broadcast_arrays(x1, x2)
    dt = dtype_of(x1)
    fi = np.finfo(dt)
    x1s, x2s = anp.stop_gradient(x1), anp.stop_gradient(x2)
    ax = anp.absolute(x1s)
    fin = anp.isfinite(x1s)
    up, m, e = _ulp_up(anp.where(fin, ax, 1.0), dt)
    tiny = float(fi.smallest_subnormal)
    pow2 = anp.logical_and(anp.equal(m, 0.5), anp.greater(ax, 0))
    down = anp.where(pow2, anp.maximum(anp.multiply(up, 0.5), tiny), up)
    away = anp.equal(anp.greater(x2s, x1s), anp.greater(x1s, 0))          # |x| grows
    mag = anp.where(away, anp.add(ax, up), anp.subtract(ax, down))
    mag = anp.where(fin, mag, float(fi.max))                               # from ±inf inwards
    out = anp.where(anp.signbit(x1s), anp.negative(mag), mag)
    t = anp.full_like(x1s, tiny)
    out = anp.where(anp.equal(x1s, 0), anp.where(anp.greater(x2s, 0), t, anp.negative(t)), out)
    out = anp.where(anp.equal(x1s, x2s), x2s, out)
    out = anp.where(anp.logical_or(anp.isnan(x1s), anp.isnan(x2s)), anp.full_like(x1s, np.nan), out)
    # the value is x1 moved by one ulp: its derivative in x1 is 1
    return anp.add(anp.subtract(x1, x1s), out)
