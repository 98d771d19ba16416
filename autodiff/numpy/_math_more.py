"""More of numpy's math: ranges with traced end points, finite-difference ``gradient``,
the real parts of complex-number functions on real input, floating-point decomposition
(``frexp``, ``ldexp``, ``modf``, ``spacing``, ``nextafter``), integer bit operations,
``unwrap``, ``ediff1d``, ``correlate`` and polynomials. All compositions of the basic
functions: every transform handles them.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> float(ad.grad(lambda b: anp.sum(anp.linspace(0.0, b, 5)))(2.0))      # Σ k/4, k = 0..4
2.5
>>> ad.grad(lambda f: anp.gradient(f)[1])(np.arange(4.0))
array([-0.5,  0. ,  0.5,  0. ])
"""
import builtins

import numpy as np

from .. import primitives as P
from ..core import Tracer, complex_dtype, is_concrete, real_dtype
from ..core import user_source
from ._base import (npfunc, asarray, promote, shape_of, ndim, normalize_axis, dtype_of,
                    float_type, is_python_scalar)


def _anp():
    from .. import numpy as anp
    return anp


def _f(x):
    x = asarray(x)
    return P.convert(x, float_type(dtype_of(x)))


# ----------------------------------------------------------------------------
# ranges
# ----------------------------------------------------------------------------

@npfunc(np.linspace)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``numpy.linspace``; ``start`` and ``stop`` may be traced (arrays too), and the
    result is differentiable in both: ``start + k·(stop - start)/(num - 1)``."""
    anp = _anp()
    num = builtins.int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    dt = np.result_type(*(x if is_python_scalar(x) else dtype_of(x) for x in (start, stop)), float(num))
    start, stop = asarray(start), asarray(stop)
    start, stop = P.convert(start, dt), P.convert(stop, dt)
    delta = anp.subtract(stop, start)
    nd = ndim(delta)
    y = np.arange(num, dtype=dt).reshape((-1,) + (1,) * nd)
    if div > 0:
        step = anp.divide(delta, dt.type(div))
        y = anp.multiply(y, step)
    else:
        step = dt.type(np.nan)
        y = anp.multiply(y, delta)
    y = anp.add(y, start)
    if endpoint and num > 1:
        y = anp.concatenate([anp.getitem(y, slice(0, num - 1)),
                             anp.expand_dims(anp.broadcast_to(stop, shape_of(y)[1:]), 0)], axis=0)
    if axis != 0:
        y = anp.moveaxis(y, 0, axis)
    if dtype is not None:
        odt = np.dtype(dtype)
        if odt.kind in "iu":
            y = anp.floor(y)
        y = anp.astype(y, odt)
    return (y, step) if retstep else y


@npfunc(np.logspace)
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop)`` (``numpy.logspace``), traced end points allowed."""
    anp = _anp()
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    b = base if is_python_scalar(base) else asarray(base)
    if ndim(b):
        b = anp.expand_dims(b, axis)
    out = anp.power(b, y)
    return anp.astype(out, dtype) if dtype is not None else out


@npfunc(np.geomspace)
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Geometric progression from ``start`` to ``stop`` (``numpy.geomspace``; both of one
    sign), traced end points allowed; the end points are exact."""
    anp = _anp()
    start, stop = _f(start), _f(stop)
    dt = np.result_type(dtype_of(start), dtype_of(stop), np.float64)     # numpy: float64 at least
    start, stop = anp.astype(start, dt), anp.astype(stop, dt)
    sgn = anp.sign(start)
    s0, s1 = anp.divide(start, sgn), anp.divide(stop, sgn)
    y = logspace(anp.log10(s0), anp.log10(s1), num=num, endpoint=endpoint, base=10.0)
    parts = []
    if num > 0:
        parts.append(anp.expand_dims(anp.broadcast_to(s0, shape_of(y)[1:]), 0))
    mid_hi = num - 1 if (endpoint and num > 1) else num
    if mid_hi > 1:
        parts.append(anp.getitem(y, slice(1, mid_hi)))
    if endpoint and num > 1:
        parts.append(anp.expand_dims(anp.broadcast_to(s1, shape_of(y)[1:]), 0))
    y = anp.concatenate(parts, axis=0) if parts else y
    y = anp.multiply(y, sgn)
    if axis != 0:
        y = anp.moveaxis(y, 0, axis)
    return anp.astype(y, dtype) if dtype is not None else y


# ----------------------------------------------------------------------------
# finite differences
# ----------------------------------------------------------------------------

@npfunc(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """``numpy.gradient``: second-order central differences inside, first- or
    second-order (``edge_order``) one-sided ones at the edges; spacings are scalars or
    coordinate arrays per axis. A list for several axes, an array for one."""
    anp = _anp()
    f = _f(f)
    nd = ndim(f)
    axes = list(range(nd)) if axis is None else [normalize_axis(a, nd) for a in np.atleast_1d(axis)]
    n = len(axes)
    if len(varargs) == 0:
        dx = [1.0] * n
    elif len(varargs) == 1 and ndim(varargs[0]) == 0:
        dx = list(varargs) * n
    elif len(varargs) == n:
        dx = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    outs = []
    sl = lambda a, lo, hi, ax: P.slice_in_dim(a, lo, hi, ax)
    for ax, d in zip(axes, dx):
        N = shape_of(f)[ax]
        if N < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")

        def bc(v):                    # a 1-d vector along ax
            sh = [1] * nd
            sh[ax] = shape_of(v)[0]
            return anp.reshape(v, tuple(sh))
        uniform = ndim(d) == 0
        if uniform:
            h = d
            h = h if isinstance(h, Tracer) or is_python_scalar(h) else float(h)
            interior = anp.divide(anp.subtract(sl(f, 2, N, ax), sl(f, 0, N - 2, ax)), anp.multiply(h, 2.0))
            if edge_order == 1:
                first = anp.divide(anp.subtract(sl(f, 1, 2, ax), sl(f, 0, 1, ax)), h)
                last = anp.divide(anp.subtract(sl(f, N - 1, N, ax), sl(f, N - 2, N - 1, ax)), h)
            else:
                first = anp.divide(anp.add(anp.add(anp.multiply(sl(f, 0, 1, ax), -1.5), anp.multiply(sl(f, 1, 2, ax), 2.0)),
                                           anp.multiply(sl(f, 2, 3, ax), -0.5)), h)
                last = anp.divide(anp.add(anp.add(anp.multiply(sl(f, N - 3, N - 2, ax), 0.5),
                                                  anp.multiply(sl(f, N - 2, N - 1, ax), -2.0)),
                                          anp.multiply(sl(f, N - 1, N, ax), 1.5)), h)
        else:
            x = _f(d)
            if ndim(x) != 1 or shape_of(x)[0] != N:
                raise ValueError("when 1d, distances must match the length of the corresponding dimension")
            h = anp.diff(x)
            dx1, dx2 = anp.getitem(h, slice(0, N - 2)), anp.getitem(h, slice(1, N - 1))
            a = anp.negative(anp.divide(dx2, anp.multiply(dx1, anp.add(dx1, dx2))))
            b = anp.divide(anp.subtract(dx2, dx1), anp.multiply(dx1, dx2))
            c = anp.divide(dx1, anp.multiply(dx2, anp.add(dx1, dx2)))
            interior = anp.add(anp.add(anp.multiply(bc(a), sl(f, 0, N - 2, ax)), anp.multiply(bc(b), sl(f, 1, N - 1, ax))),
                               anp.multiply(bc(c), sl(f, 2, N, ax)))
            g = lambda i: anp.getitem(h, i)
            if edge_order == 1:
                first = anp.divide(anp.subtract(sl(f, 1, 2, ax), sl(f, 0, 1, ax)), g(0))
                last = anp.divide(anp.subtract(sl(f, N - 1, N, ax), sl(f, N - 2, N - 1, ax)), g(-1))
            else:
                d1, d2 = g(0), g(1)
                a0 = anp.negative(anp.divide(anp.add(anp.multiply(d1, 2.0), d2), anp.multiply(d1, anp.add(d1, d2))))
                b0 = anp.divide(anp.add(d1, d2), anp.multiply(d1, d2))
                c0 = anp.negative(anp.divide(d1, anp.multiply(d2, anp.add(d1, d2))))
                first = anp.add(anp.add(anp.multiply(a0, sl(f, 0, 1, ax)), anp.multiply(b0, sl(f, 1, 2, ax))),
                                anp.multiply(c0, sl(f, 2, 3, ax)))
                d1, d2 = g(-2), g(-1)
                a1 = anp.divide(d2, anp.multiply(d1, anp.add(d1, d2)))
                b1 = anp.negative(anp.divide(anp.add(d2, d1), anp.multiply(d1, d2)))
                c1 = anp.divide(anp.add(anp.multiply(d2, 2.0), d1), anp.multiply(d2, anp.add(d1, d2)))
                last = anp.add(anp.add(anp.multiply(a1, sl(f, N - 3, N - 2, ax)), anp.multiply(b1, sl(f, N - 2, N - 1, ax))),
                               anp.multiply(c1, sl(f, N - 1, N, ax)))
        # numpy writes into an array of f's dtype, whatever the spacings' dtype
        outs.append(anp.astype(anp.concatenate([first, interior, last], axis=ax), dtype_of(f)))
    return outs[0] if n == 1 else tuple(outs)


@npfunc(np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened input, with optional ends (``numpy.ediff1d``)."""
    anp = _anp()
    d = anp.diff(anp.ravel(ary))
    parts = []
    if to_begin is not None:
        parts.append(anp.astype(anp.ravel(asarray(to_begin)), dtype_of(d)))
    parts.append(d)
    if to_end is not None:
        parts.append(anp.astype(anp.ravel(asarray(to_end)), dtype_of(d)))
    return anp.concatenate(parts) if len(parts) > 1 else d


@npfunc(np.unwrap)
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """Remove jumps larger than ``discont`` by adding multiples of ``period``
    (``numpy.unwrap``); the derivative is the identity."""
    anp = _anp()
    p = _f(p)
    ax = normalize_axis(axis, ndim(p))
    dd = anp.diff(p, axis=ax)
    if discont is None:
        discont = period / 2
    hi = period / 2
    lo = -hi
    ddmod = anp.add(anp.mod(anp.subtract(dd, lo), period), lo)
    ddmod = anp.where(anp.logical_and(anp.equal(ddmod, lo), anp.greater(dd, 0)), hi, ddmod)
    corr = anp.subtract(ddmod, dd)
    corr = anp.where(anp.less(anp.absolute(dd), discont), 0.0, corr)
    corr = anp.stop_gradient(corr)
    n = shape_of(p)[ax]
    head = P.slice_in_dim(p, 0, 1, ax)
    rest = anp.add(P.slice_in_dim(p, 1, n, ax), anp.cumsum(corr, axis=ax))
    return anp.concatenate([head, rest], axis=ax)


@npfunc(np.correlate)
def correlate(a, v, mode="valid"):
    """1-d cross-correlation ``c[k] = Σ_n a[n+k]·conj(v[n])`` (``numpy.correlate``: the
    second argument is conjugated)."""
    anp = _anp()
    a, v = asarray(a), P.conj(asarray(v))
    swap = shape_of(v)[0] > shape_of(a)[0]
    out = anp.convolve(a, anp.flip(v), mode=mode)
    if swap and mode != "full":
        # numpy swaps the operands when v is longer, which reverses 'valid'/'same' results
        out = anp.flip(anp.convolve(v, anp.flip(a), mode=mode))
    return out


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
    anp = _anp()
    z = asarray(z)
    if dtype_of(z).kind == "c":
        out = P.atan2(P.imag(z), P.real(z))
        return P.mul(out, 180.0 / np.pi) if deg else out
    z = _f(z)
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
        return _anp().zeros_like(x, dtype=np.bool_)
    return P.ne(P.imag(x), 0)


@npfunc(np.isreal)
def isreal(x):
    """``numpy.isreal``: where the imaginary part is zero (True for real input)."""
    x = asarray(x)
    if dtype_of(x).kind != "c":
        return _anp().ones_like(x, dtype=np.bool_)
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
    anp = _anp()
    x = asarray(x)
    return anp.equal(x, np.inf)


@npfunc(np.isneginf)
def isneginf(x):
    """``x == -inf``."""
    anp = _anp()
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
    anp = _anp()
    h = anp.floor(anp.multiply(e, 0.5))
    return anp.multiply(anp.multiply(x, anp.exp2(h)), anp.exp2(anp.subtract(e, h)))


@npfunc(np.frexp)
def frexp(x):
    """``x = m·2**e`` with ``0.5 ≤ |m| < 1`` (``numpy.frexp``); ``dm/dx = 2**-e``."""
    anp = _anp()
    x = _f(x)
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
    anp = _anp()
    x1 = _f(x1)
    e = anp.astype(asarray(x2), dtype_of(x1) if dtype_of(x1) == np.float64 else np.float64)
    out = _scale2(anp.astype(x1, dtype_of(e)), e)
    return anp.astype(out, dtype_of(x1))


@npfunc(np.modf)
def modf(x):
    """Fractional and integral parts, both with the sign of ``x`` (``numpy.modf``)."""
    anp = _anp()
    x = _f(x)
    t = anp.trunc(x)
    frac = anp.where(anp.isinf(x), anp.copysign(0.0, x), anp.subtract(x, t))
    return frac, t


def _ulp_up(ax, dt):
    """Distance from |x| to the next larger float (|x| finite, ≥ 0)."""
    anp = _anp()
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
    anp = _anp()
    x = _f(x)
    dt = dtype_of(x)
    ax = anp.stop_gradient(anp.absolute(x))
    ulp, _, _ = _ulp_up(anp.where(anp.isfinite(ax), ax, 1.0), dt)
    out = anp.where(anp.signbit(x), anp.negative(ulp), ulp)
    return anp.where(anp.isfinite(x), out, np.nan)


@npfunc(np.nextafter)
def nextafter(x1, x2):
    """The next float after ``x1`` towards ``x2`` (``numpy.nextafter``)."""
    anp = _anp()
    x1, x2 = promote(_f(x1), _f(x2))
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


@npfunc(np.i0)
def i0(x):
    """Modified Bessel function of the first kind, order 0 (``numpy.i0``)."""
    from ..scipy.special import i0 as _i0
    return _i0(x)


# ----------------------------------------------------------------------------
# integers
# ----------------------------------------------------------------------------

@npfunc(np.divmod)
def divmod(x1, x2):
    """``(floor_divide(x1, x2), mod(x1, x2))``."""
    anp = _anp()
    return anp.floor_divide(x1, x2), anp.mod(x1, x2)


def _int_args(x1, x2, name):
    x1, x2 = promote(x1, x2)
    if dtype_of(x1).kind not in "iub":
        raise TypeError(f"ufunc '{name}' not supported for the input types")
    return x1, x2


def _pow2(n, dt):
    anp = _anp()
    bits = np.dtype(dt).itemsize * 8
    k = anp.clip(n, 0, bits - 1)
    return anp.power(asarray(np.asarray(2, dt)), anp.astype(k, dt))


@npfunc(np.left_shift)
def left_shift(x1, x2):
    """``x1 << x2`` on integers (wrapping like numpy's fixed-width integers)."""
    anp = _anp()
    x1, x2 = _int_args(x1, x2, "left_shift")
    bits = np.dtype(dtype_of(x1)).itemsize * 8
    out = anp.multiply(x1, _pow2(x2, dtype_of(x1)))
    return anp.where(anp.greater_equal(x2, bits), anp.zeros_like(out), out)


@npfunc(np.right_shift)
def right_shift(x1, x2):
    """``x1 >> x2`` on integers (arithmetic shift for signed ones)."""
    anp = _anp()
    x1, x2 = _int_args(x1, x2, "right_shift")
    bits = np.dtype(dtype_of(x1)).itemsize * 8
    dt = dtype_of(x1)
    big = anp.greater_equal(x2, bits)
    # 2**(bits-1) overflows a signed type: shift in two steps
    h = anp.floor_divide(anp.clip(x2, 0, bits - 1), 2)
    out = anp.floor_divide(anp.floor_divide(x1, _pow2(h, dt)), _pow2(anp.subtract(anp.clip(x2, 0, bits - 1), h), dt))
    fill = anp.where(anp.less(x1, 0), anp.full_like(x1, -1), anp.zeros_like(x1)) if dt.kind == "i" else anp.zeros_like(x1)
    return anp.where(big, fill, out)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


@npfunc(np.bitwise_count if hasattr(np, "bitwise_count") else None)
def bitwise_count(x):
    """Number of 1-bits in ``|x|`` (``numpy.bitwise_count``), as uint8."""
    anp = _anp()
    x = asarray(x)
    dt = dtype_of(x)
    if dt == np.bool_:
        return anp.astype(x, np.uint8)
    v = anp.absolute(x) if dt.kind == "i" else x
    cnt = None
    for _ in range(dt.itemsize * 8):
        bit = anp.mod(v, 2) if dt.kind == "u" else anp.absolute(anp.mod(v, 2))
        cnt = bit if cnt is None else anp.add(cnt, bit)
        v = anp.floor_divide(v, 2)
    return anp.astype(cnt, np.uint8)


def _gcd_loop(a, b):
    from .. import lax
    anp = _anp()

    def body(i, ab):
        a, b = ab
        nz = anp.not_equal(b, 0)
        sb = anp.where(nz, b, anp.ones_like(b))
        return anp.where(nz, b, a), anp.where(nz, anp.mod(a, sb), b)
    # Euclid needs at most ~1.44·log2(max) steps: 93 for 64-bit integers
    return lax.fori_loop(0, 93 if np.dtype(dtype_of(a)).itemsize == 8 else 48, body, (a, b))[0]


@npfunc(np.gcd)
def gcd(x1, x2):
    """Greatest common divisor of integers (``numpy.gcd``)."""
    anp = _anp()
    x1, x2 = _int_args(x1, x2, "gcd")
    x1, x2 = anp.broadcast_arrays(anp.absolute(x1), anp.absolute(x2))
    return _gcd_loop(x1, x2)


@npfunc(np.lcm)
def lcm(x1, x2):
    """Least common multiple of integers (``numpy.lcm``)."""
    anp = _anp()
    x1, x2 = _int_args(x1, x2, "lcm")
    g = gcd(x1, x2)
    a1 = anp.absolute(x1)
    sg = anp.where(anp.equal(g, 0), anp.ones_like(g), g)
    return anp.where(anp.equal(g, 0), anp.zeros_like(g), anp.multiply(anp.floor_divide(a1, sg), anp.absolute(x2)))


@npfunc(np.packbits)
def packbits(a, axis=None, bitorder="big"):
    """Pack truthy elements into the bits of uint8 (``numpy.packbits``)."""
    anp = _anp()
    a = asarray(a)
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    a = anp.moveaxis(anp.astype(anp.not_equal(a, 0), np.int64), ax, -1)
    n = shape_of(a)[-1]
    pad = (-n) % 8
    if pad:
        a = anp.concatenate([a, anp.zeros_like(a, shape=shape_of(a)[:-1] + (pad,))], axis=-1)
    a = anp.reshape(a, shape_of(a)[:-1] + (-1, 8))
    w = 2 ** np.arange(7, -1, -1) if bitorder == "big" else 2 ** np.arange(8)
    out = anp.astype(anp.sum(anp.multiply(a, w.astype(np.int64)), axis=-1), np.uint8)
    return anp.moveaxis(out, -1, ax)


@npfunc(np.unpackbits)
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Unpack uint8 elements into bits (``numpy.unpackbits``)."""
    anp = _anp()
    a = asarray(a)
    if dtype_of(a) != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    a = anp.moveaxis(anp.astype(a, np.int64), ax, -1)
    w = 2 ** np.arange(7, -1, -1) if bitorder == "big" else 2 ** np.arange(8)
    bits = anp.mod(anp.floor_divide(anp.expand_dims(a, -1), w.astype(np.int64)), 2)
    bits = anp.reshape(bits, shape_of(a)[:-1] + (-1,))
    if count is not None:
        n = shape_of(bits)[-1]
        c = count if count >= 0 else n + count
        if c <= n:
            bits = P.slice_in_dim(bits, 0, builtins.max(c, 0), ndim(bits) - 1)
        else:
            bits = anp.concatenate([bits, anp.zeros_like(bits, shape=shape_of(bits)[:-1] + (c - n,))], axis=-1)
    return anp.moveaxis(anp.astype(bits, np.uint8), -1, ax)


# ----------------------------------------------------------------------------
# polynomials (highest power first, numpy's old polynomial API)
# ----------------------------------------------------------------------------

@npfunc(np.polyadd)
def polyadd(a1, a2):
    """Sum of two polynomials (``numpy.polyadd``)."""
    anp = _anp()
    a1, a2 = promote(anp.atleast_1d(a1), anp.atleast_1d(a2))
    n1, n2 = shape_of(a1)[0], shape_of(a2)[0]
    if n1 < n2:
        a1 = anp.concatenate([anp.zeros_like(a1, shape=(n2 - n1,)), a1])
    elif n2 < n1:
        a2 = anp.concatenate([anp.zeros_like(a2, shape=(n1 - n2,)), a2])
    return anp.add(a1, a2)


@npfunc(np.polysub)
def polysub(a1, a2):
    """Difference of two polynomials (``numpy.polysub``)."""
    return polyadd(a1, _anp().negative(asarray(a2)))


@npfunc(np.polymul)
def polymul(a1, a2):
    """Product of two polynomials: the convolution of their coefficients."""
    anp = _anp()
    return anp.convolve(anp.atleast_1d(a1), anp.atleast_1d(a2))


@npfunc(np.polyder)
def polyder(p, m=1):
    """``m``-th derivative of a polynomial (``numpy.polyder``)."""
    anp = _anp()
    p = _f(anp.atleast_1d(p))
    for _ in range(builtins.int(m)):
        n = shape_of(p)[0] - 1
        if n <= 0:
            return anp.zeros_like(p, shape=(1,))
        p = anp.multiply(anp.getitem(p, slice(0, n)), np.arange(n, 0, -1))     # numpy: int64 factors
    return p


@npfunc(np.polyint)
def polyint(p, m=1, k=None):
    """``m``-th antiderivative with integration constants ``k`` (``numpy.polyint``)."""
    anp = _anp()
    p = _f(anp.atleast_1d(p))
    m = builtins.int(m)
    ks = [0.0] * m if k is None else list(np.atleast_1d(k)) if not isinstance(k, Tracer) else [k] * m
    if len(ks) == 1 and m > 1:
        ks = ks * m
    for i in range(m):
        n = shape_of(p)[0]
        q = anp.divide(p, np.arange(n, 0, -1))
        p = anp.concatenate([q, anp.reshape(anp.astype(asarray(ks[i]), dtype_of(q)), (1,))])
    return p


@npfunc(np.polydiv)
def polydiv(u, v):
    """Quotient and remainder of polynomial division (``numpy.polydiv``); the leading
    coefficient of ``v`` must be non-zero."""
    anp = _anp()
    u, v = promote(_f(anp.atleast_1d(u)), _f(anp.atleast_1d(v)))
    m, n = shape_of(u)[0] - 1, shape_of(v)[0] - 1
    scale = anp.divide(1.0, anp.getitem(v, 0))
    r = [anp.getitem(u, i) for i in range(m + 1)]
    q = []
    for k in range(builtins.max(m - n + 1, 0)):
        d = anp.multiply(scale, r[k])
        q.append(d)
        for j in range(n + 1):
            r[k + j] = anp.subtract(r[k + j], anp.multiply(d, anp.getitem(v, j)))
    qa = anp.stack(q) if q else anp.zeros_like(u, shape=(1,))
    rem = r[builtins.max(m - n + 1, 0):] if m >= n else r
    ra = anp.stack(rem) if rem else anp.zeros_like(u, shape=(1,))
    return qa, ra


@npfunc(np.poly)
def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given (real) roots; a square matrix
    gives its characteristic polynomial from ``eigvalsh`` (symmetric input)."""
    anp = _anp()
    z = _f(seq_of_zeros)
    if ndim(z) == 2 and shape_of(z)[0] == shape_of(z)[1] and shape_of(z)[0] != 0:
        z = anp.linalg.eigvalsh(z)
    z = anp.ravel(z)
    a = anp.ones_like(z, shape=(1,))
    for i in range(shape_of(z)[0]):
        a = anp.convolve(a, anp.stack([anp.ones_like(anp.getitem(z, i)), anp.negative(anp.getitem(z, i))]))
    return a


@npfunc(np.polyfit)
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit (``numpy.polyfit``): columns of the Vandermonde matrix
    scaled to unit norm, then ``lstsq``; ``y`` may hold several data sets as columns.
    Differentiable in ``x``, ``y`` and ``w``."""
    anp = _anp()
    x, y = promote(_f(x), _f(y))
    order = builtins.int(deg) + 1
    lhs = anp.vander(x, order)
    rhs = y
    if w is not None:
        w = _f(w)
        lhs = anp.multiply(lhs, anp.expand_dims(w, -1))
        rhs = anp.multiply(rhs, w if ndim(rhs) == 1 else anp.expand_dims(w, -1))
    if rcond is None:
        rcond = shape_of(x)[0] * float(np.finfo(dtype_of(x)).eps)
    scale = anp.sqrt(anp.sum(anp.multiply(lhs, lhs), axis=0))
    sol = anp.linalg.lstsq(anp.divide(lhs, scale), rhs, rcond)
    c = sol[0]
    c = anp.divide(c, scale if ndim(c) == 1 else anp.expand_dims(scale, -1))
    if full:
        return c, sol[1], sol[2], sol[3], rcond
    if cov:
        from ..errors import UnsupportedError
        raise UnsupportedError("polyfit: cov=True is not supported on traced values", source=user_source())
    return c


@npfunc(np.roots)
def roots(p):
    """``numpy.roots``: the eigenvalues of the companion matrix, computed by LAPACK on the
    host (through numpy) in every mode, ``jit`` included.

    numpy's result dtype depends on the values: real when every root is real, complex
    otherwise (complex64 for float32 coefficients). Wherever the coefficients have values
    (eager, and ``grad``/``jvp`` without ``jit``) the result is numpy's. Under ``jit`` and
    ``vmap`` the dtype must be known from the dtype alone: complex coefficients give complex
    roots; real ones give real roots, and a complex root raises ``UnsupportedError`` (pass
    ``p.astype(complex)`` to get complex roots under ``jit``). A leading zero coefficient
    raises too (the number of roots would depend on the values).

    The derivative is the implicit function's, from ``p(r) = 0``:
    ``dr = -(dp)(r) / p'(r)`` (any order, complex roots included; infinite at a multiple
    root, where the roots are not differentiable).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> p = np.array([1.0, -3.0, 2.0])                  # (x - 1)(x - 2)
    >>> np.sort(ad.jit(anp.roots)(p))
    array([1., 2.])
    >>> ad.jacobian(lambda p: anp.sort(anp.roots(p)))(p)[0]     # d1/dp = -(1, 1, 1)/p'(1)
    array([1., 1., 1.])
    >>> np.round(ad.jit(anp.roots)(np.array([1.0, 0.0, 4.0], complex)), 12)   # x² + 4
    array([0.+2.j, 0.-2.j])
    """
    anp = _anp()
    p = _f(p)
    if ndim(p) != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = shape_of(p)[0] - 1
    if n < 1:
        return anp.zeros_like(p, shape=(0,))
    dt = dtype_of(p)
    out = dt
    if dt.kind != "c" and (not isinstance(p, Tracer) or is_concrete(p)):
        # the coefficients have values: numpy's dtype (complex if any root is)
        v = np.asarray(p.concrete_value("roots") if isinstance(p, Tracer) else p)
        if v[0] != 0 and np.iscomplexobj(np.roots(v)):
            out = complex_dtype(dt)
    return _roots_fn(user_source(), out)(p)


def _roots_host(p, source, out):
    from ..errors import UnsupportedError
    p = np.asarray(p)
    if p[0] == 0:
        raise UnsupportedError("roots: the leading coefficient of a traced polynomial is 0, so the "
                               "number of roots depends on the values; drop the leading zeros "
                               "before tracing", source=source)
    r = np.roots(p)
    if np.iscomplexobj(r) and out.kind != "c":
        if np.any(r.imag != 0):
            raise UnsupportedError(
                f"roots: the polynomial has complex roots ({r[r.imag != 0][:2]}...), but under "
                "jit/vmap the real coefficients' roots were traced as real (their dtype cannot "
                "depend on the values); pass complex coefficients, p.astype(complex), to get "
                "complex roots", source=source)
        r = r.real
    return r.astype(out)


def _roots_fn(source, out):
    from ..callback import pure_callback
    from ..custom_derivatives import custom_jvp
    from ..shapes import ShapeDtypeStruct
    anp = _anp()

    @custom_jvp
    def real_roots(p):
        n = shape_of(p)[0] - 1
        return pure_callback(lambda v: _roots_host(v, source, out), ShapeDtypeStruct((n,), out), p)

    @real_roots.defjvp
    def real_roots_jvp(primals, tangents):
        (p,), (dp,) = primals, tangents
        r = real_roots(p)
        n = shape_of(p)[0] - 1
        dcoef = anp.multiply(p[:-1], np.arange(n, 0, -1, dtype=dtype_of(p)))    # p'
        return r, anp.negative(anp.divide(anp.polyval(dp, r), anp.polyval(dcoef, r)))
    return real_roots


@npfunc(np.einsum_path)
def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """``numpy.einsum_path`` from the operands' shapes (traced operands allowed)."""
    dummies = [np.empty(shape_of(o), dtype_of(o)) if not isinstance(o, (str, list)) else o
               for o in operands]
    return np.einsum_path(subscripts, *dummies, optimize=optimize)



@npfunc(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation (``numpy.interp``), ``period`` included;
    differentiable in ``x``, ``xp`` and ``fp``."""
    anp = _anp()
    # numpy computes in float64 (complex128 for complex fp) whatever the input dtype
    x, xp = (anp.astype(asarray(v), np.float64) for v in (x, xp))
    fp = asarray(fp)
    fp = anp.astype(fp, np.complex128 if dtype_of(fp).kind == "c" else np.float64)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        x = anp.mod(x, period)
        xp = anp.mod(xp, period)
        order = anp.argsort(xp, kind="stable")
        xp, fp = anp.take(xp, order), anp.take(fp, order)
        xp = anp.concatenate([anp.subtract(xp[-1:], period), xp, anp.add(xp[0:1], period)])
        fp = anp.concatenate([fp[-1:], fp, fp[0:1]])
        left = right = None
    n = shape_of(xp)[0]
    idx = anp.clip(anp.sum(anp.greater_equal(anp.expand_dims(x, -1), xp), axis=-1), 1, n - 1)
    x0, x1 = anp.take(xp, anp.subtract(idx, 1)), anp.take(xp, idx)
    y0, y1 = anp.take(fp, anp.subtract(idx, 1)), anp.take(fp, idx)
    t = anp.divide(anp.subtract(x, x0), anp.subtract(x1, x0))
    out = anp.add(y0, anp.multiply(t, anp.subtract(y1, y0)))
    out = anp.where(anp.less(x, xp[0]), fp[0] if left is None else left, out)
    return anp.where(anp.greater(x, xp[-1]), fp[-1] if right is None else right, out)
