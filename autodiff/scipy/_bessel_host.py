"""Bessel functions of integer and real order that autograd's ``scipy.special`` wraps:
``j0``, ``j1``, ``y0``, ``y1``, ``jn``, ``yn`` (first and second kind), ``iv`` and ``ive``
(modified, first kind; ``ive`` scaled by ``exp(-|x|)``). Values come from scipy (a host
call, so scipy must be installed; inside ``jit`` the kernel calls back into Python), and
derivatives of any order in ``x`` from the recurrences ``J₀' = -J₁``,
``Jₙ' = (Jₙ₋₁ - Jₙ₊₁)/2`` (the same for ``Y``), ``Iᵥ' = (Iᵥ₋₁ + Iᵥ₊₁)/2`` and
``Ĩᵥ' = (Ĩᵥ₋₁ + Ĩᵥ₊₁)/2 - sign(x) Ĩᵥ``, as autograd's. The order is not differentiated:
a derivative with respect to it raises ``UnsupportedError`` (autograd defines none).

>>> import numpy as np, autodiff as ad
>>> from autodiff.scipy.special import j0, jn, ive
>>> round(float(ad.grad(j0)(1.0)), 12)                  # -J₁(1)
-0.440050585745
>>> round(float(ad.grad(lambda x: jn(2, x))(1.5)), 12)   # (J₁ - J₃)/2 at 1.5
0.248486278384
>>> round(float(ad.grad(lambda x: ive(0.5, x))(2.0)), 12)
-0.058898518682
"""
import numpy as np

from .. import numpy as anp
from ..callback import pure_callback
from ..core import Tracer
from ..custom_derivatives import custom_jvp
from ..errors import UnsupportedError
from ..shapes import ShapeDtypeStruct
from ..numpy._base import npfunc, dtype_of, shape_of
from ._special_base import broadcast_float

__all__ = ["j0", "j1", "y0", "y1", "jn", "yn", "iv", "ive"]


def _scipy(name):
    import scipy.special         # scipy is optional: only these host calls need it
    return getattr(scipy.special, name)


def _host(name, *args):
    """scipy's ``name`` on the arguments (floats broadcast together), a host call when any
    is traced."""
    args = broadcast_float(*args)
    dt = dtype_of(args[-1])

    def call(*a):
        with np.errstate(all="ignore"):
            return np.asarray(_scipy(name)(*a), dtype=dt)
    if any(isinstance(a, Tracer) for a in args):
        return pure_callback(call, ShapeDtypeStruct(tuple(shape_of(args[-1])), dt), *args)
    return call(*[np.asarray(a) for a in args])


def _no_order_tangent(name, dv):
    if isinstance(dv, Tracer) or np.any(np.asarray(dv) != 0):
        raise UnsupportedError(
            f"scipy.special.{name}: the derivative with respect to the order is not "
            f"defined (as in autograd); differentiate in x only")


# --- the unary functions ----------------------------------------------------------------

def _unary(name, deriv):
    cj = custom_jvp(lambda x: _host(name, x))

    @cj.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return cj(x), anp.multiply(t, deriv(x))

    @npfunc(None)
    def f(x):
        return cj(x) if isinstance(x, Tracer) else _host(name, x)
    f.__name__ = f.__qualname__ = name
    return f


j0 = _unary("j0", lambda x: anp.negative(j1(x)))
j0.__doc__ = """Bessel function of the first kind of order 0 (scipy's); ``j0' = -j1``."""
y0 = _unary("y0", lambda x: anp.negative(y1(x)))
y0.__doc__ = """Bessel function of the second kind of order 0 (scipy's); ``y0' = -y1``."""
j1 = _unary("j1", lambda x: anp.multiply(anp.subtract(j0(x), jn(2, x)), 0.5))
j1.__doc__ = """Bessel function of the first kind of order 1 (scipy's); ``j1' = (j0 - j2)/2``."""
y1 = _unary("y1", lambda x: anp.multiply(anp.subtract(y0(x), yn(2, x)), 0.5))
y1.__doc__ = """Bessel function of the second kind of order 1 (scipy's); ``y1' = (y0 - y2)/2``."""


# --- the functions of an order and x ----------------------------------------------------

def _of_order(name, deriv):
    # a concrete order is a static argument (the common case, also under grad of grad);
    # a traced one (jit, vmap over orders) is an operand whose tangent must be zero
    cj_static = custom_jvp(lambda v, x: _host(name, v, x), nondiff_argnums=(0,))
    cj = custom_jvp(lambda v, x: _host(name, v, x))

    @cj_static.defjvp
    def _jvp_static(v, primals, tangents):
        (x,), (t,) = primals, tangents
        return cj_static(v, x), anp.multiply(t, deriv(v, x))

    @cj.defjvp
    def _jvp(primals, tangents):
        (v, x), (dv, t) = primals, tangents
        _no_order_tangent(name, dv)
        return cj(v, x), anp.multiply(t, deriv(v, x))

    @npfunc(None)
    def f(v, x):
        if isinstance(v, Tracer):
            return cj(*broadcast_float(v, x))
        if isinstance(x, Tracer):
            return cj_static(v, x)
        return _host(name, v, x)
    f.__name__ = f.__qualname__ = name
    return f


def _half_difference(fn):
    return lambda v, x: anp.multiply(anp.subtract(fn(anp.subtract(v, 1), x),
                                                  fn(anp.add(v, 1), x)), 0.5)


jn = _of_order("jn", _half_difference(lambda v, x: jn(v, x)))
jn.__doc__ = """Bessel function of the first kind of order ``n`` (scipy's ``jn``, an alias of
``jv``); ``d/dx jn(n, x) = (jn(n-1, x) - jn(n+1, x))/2``."""
yn = _of_order("yn", _half_difference(lambda v, x: yn(v, x)))
yn.__doc__ = """Bessel function of the second kind of integer order ``n`` (scipy's ``yn``);
``d/dx yn(n, x) = (yn(n-1, x) - yn(n+1, x))/2``."""
iv = _of_order("iv", lambda v, x: anp.multiply(anp.add(iv(anp.subtract(v, 1), x),
                                                        iv(anp.add(v, 1), x)), 0.5))
iv.__doc__ = """Modified Bessel function of the first kind of real order ``v`` (scipy's);
``d/dx iv(v, x) = (iv(v-1, x) + iv(v+1, x))/2``."""
ive = _of_order("ive", lambda v, x: anp.subtract(
    anp.multiply(anp.add(ive(anp.subtract(v, 1), x), ive(anp.add(v, 1), x)), 0.5),
    anp.multiply(anp.sign(x), ive(v, x))))
ive.__doc__ = """``iv(v, x) * exp(-|x|)`` (scipy's ``ive``); its derivative in ``x`` is
``(ive(v-1, x) + ive(v+1, x))/2 - sign(x) ive(v, x)``."""
