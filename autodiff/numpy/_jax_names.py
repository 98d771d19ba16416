"""Spellings that code ported from autograd or JAX uses, beyond numpy's computations.

* ``seterr``, ``geterr``, ``errstate``, ``seterrcall``, ``geterrcall``: numpy's own. They
  govern plain numpy code; autodiff evaluates its own operations quietly, as compiled code
  does (a discarded ``where`` branch may divide by zero). To stop at the first operation
  that makes a NaN use ``ad.config.update("debug_nans", True)``.
* ``isscalar``: numpy's, except that a 0-d traced value counts as a scalar (under
  ``grad(f)(2.0)`` the argument is a 0-d traced value; autograd says True there too).
* ``Array``: the type for ``isinstance`` checks and annotations (``ad.Array``).
* ``precision=`` and ``preferred_element_type=`` on ``dot``, ``matmul``, ``vdot``,
  ``inner``, ``outer``, ``tensordot`` and ``einsum``, as in ``jax.numpy``: any
  ``ad.lax.Precision`` is accepted and computes the same float64-exact products;
  ``preferred_element_type`` casts the result.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> anp.dot(np.eye(2), np.ones(2), precision=ad.lax.Precision.HIGHEST)
array([1., 1.])
>>> with anp.errstate(divide="ignore"):
...     float(np.float64(1.0) / 0.0)
inf
>>> anp.isscalar(2.0), ad.grad(lambda x: x * anp.isscalar(x))(3.0)
(True, np.float64(1.0))
"""
import functools

import numpy as np

from ..core import Array, Tracer
from ..errors import AutodiffError
from ..traceback_util import filter_traceback

__all__ = ["seterr", "geterr", "errstate", "seterrcall", "geterrcall", "isscalar", "Array",
           "dot", "matmul", "vdot", "inner", "outer", "tensordot", "einsum"]

seterr, geterr, errstate = np.seterr, np.geterr, np.errstate
seterrcall, geterrcall = np.seterrcall, np.geterrcall


def isscalar(element):
    """``numpy.isscalar``; a 0-d traced value is a scalar too."""
    if isinstance(element, Tracer):
        return element.aval.shape == ()
    return np.isscalar(element)


def _with_precision(f):
    """``f`` taking JAX's ``precision=`` / ``preferred_element_type=`` keywords too."""
    @functools.wraps(f)
    def product(*args, precision=None, preferred_element_type=None, **kwargs):
        if precision is not None:
            from .._lax_more import check_precision
            check_precision(precision)
        try:                               # a public boundary (autodiff.traceback_util)
            out = f(*args, **kwargs)
        except AutodiffError as e:
            filter_traceback(e)
            raise
        if preferred_element_type is not None:
            from . import astype
            out = astype(out, preferred_element_type)
        return out
    return product


def _wrapped():
    from . import dot, einsum, inner, matmul, outer, tensordot, vdot
    return [_with_precision(g) for g in (dot, matmul, vdot, inner, outer, tensordot, einsum)]


dot, matmul, vdot, inner, outer, tensordot, einsum = _wrapped()
