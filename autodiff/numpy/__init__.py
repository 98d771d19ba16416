"""numpy-compatible functions that work on concrete arrays and on traced values alike.

On plain numpy inputs each function is numpy's own (results identical to
numpy's); on traced values it records primitives. dtype rules are numpy's:
float64 stays float64, float32 stays float32, Python scalars are weak.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> anp.sum(anp.sin(np.zeros(3)))
np.float64(0.0)
>>> ad.grad(lambda x: anp.sum(anp.tanh(x)))(np.zeros(2))
array([1., 1.])
"""
import builtins
import math

import numpy as np

from .. import primitives as P
from ..core import Tracer, is_concrete
from ..errors import ConcretizationError, ShapeError, DTypeError, UnsupportedError
from ..core import user_source
from ._base import ndim as _base_ndim
from ._base import fast_pair as _fast_pair
from ._base import (npfunc, asarray, promote, elementwise_args, result_type,
                    float_type, shape_of, ndim, broadcast_shapes, broadcast_to as _broadcast_to,
                    normalize_axis, normalize_axes, is_python_scalar, dtype_of, to_output)

# constants and dtypes, as numpy spells them
pi, e, inf, nan, newaxis, euler_gamma = np.pi, np.e, np.inf, np.nan, None, np.euler_gamma
float64, float32, float16, int64, int32, int16, int8, uint8, bool_ = (
    np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_)
uint32, uint64, uint16 = np.uint32, np.uint64, np.uint16
dtype, ndarray, finfo, iinfo, result_type_np = np.dtype, np.ndarray, np.finfo, np.iinfo, np.result_type
integer, floating, number, inexact, signedinteger = np.integer, np.floating, np.number, np.inexact, np.signedinteger
issubdtype = np.issubdtype
shape = npfunc(np.shape)(lambda x: shape_of(x))
size = npfunc(np.size)(lambda x, axis=None: builtins.int(np.prod(shape_of(x))) if axis is None else shape_of(x)[axis])


def _ndim(x):
    return ndim(x)


# ----------------------------------------------------------------------------
# creation
# ----------------------------------------------------------------------------

from ._creation import asarray_traced as _asarray_traced  # noqa: E402


def array(object, dtype=None, copy=True, ndmin=0):
    out = _asarray_traced(object, dtype=dtype)
    while ndim(out) < ndmin:
        out = expand_dims(out, 0)
    if isinstance(out, np.ndarray) and copy:
        out = out.copy()
    return out


def asarray_(a, dtype=None):
    return _asarray_traced(a, dtype=dtype)


zeros, ones, empty, full, eye, identity = np.zeros, np.ones, np.zeros, np.full, np.eye, np.identity
arange, linspace, logspace, geomspace = np.arange, np.linspace, np.logspace, np.geomspace
meshgrid_np = np.meshgrid


@npfunc(np.zeros_like)
def zeros_like(a, dtype=None, shape=None):
    a = asarray(a)
    return P.full(shape_of(a) if shape is None else shape, 0, dtype or dtype_of(a))


@npfunc(np.ones_like)
def ones_like(a, dtype=None, shape=None):
    a = asarray(a)
    return P.full(shape_of(a) if shape is None else shape, 1, dtype or dtype_of(a))


@npfunc(np.full_like)
def full_like(a, fill_value, dtype=None, shape=None):
    a = asarray(a)
    dt = np.dtype(dtype or dtype_of(a))
    sh = shape_of(a) if shape is None else tuple(np.atleast_1d(shape))
    if isinstance(fill_value, Tracer):
        return _broadcast_to(P.convert(fill_value, dt), sh)
    return P.full(sh, fill_value, dt)


empty_like = zeros_like


def astype(x, dtype):
    scalar = isinstance(x, (np.generic, bool, int, float))
    x = asarray(x)
    dt = np.dtype(dtype)
    if isinstance(x, Tracer):
        return P.convert(x, dt)
    out = x.astype(dt)
    # numpy's own astype keeps a numpy scalar a scalar (docs/design.md, convention 2)
    return out[()] if scalar and out.ndim == 0 else out


def _caster(dt):
    def cast(x=0):
        if isinstance(x, Tracer) or hasattr(x, "__autodiff_array__"):
            return astype(asarray(x) if not hasattr(x, "__autodiff_array__") else x, dt) \
                if not hasattr(x, "__autodiff_array__") else type(x).__autodiff_wrap__(astype(x.__autodiff_array__(), dt))
        return np.dtype(dt).type(x) if np.ndim(x) == 0 else np.asarray(x).astype(dt)
    return cast


# anp.float32(x), anp.int64(x) cast traced values too (docs/design.md, convention 1)
class _DType:
    def __init__(self, t):
        self.type = t
        self.dtype = np.dtype(t)
        self.__name__ = t.__name__

    def __call__(self, x=0):
        return _caster(self.type)(x)

    def __repr__(self):
        return f"autodiff.numpy.{self.__name__}"

    def __eq__(self, other):
        return other is self or other == self.type or (isinstance(other, np.dtype) and other == self.dtype)

    def __hash__(self):
        return hash(self.type)


float64, float32, float16 = _DType(np.float64), _DType(np.float32), _DType(np.float16)
int64, int32, int16, int8, uint8 = _DType(np.int64), _DType(np.int32), _DType(np.int16), _DType(np.int8), _DType(np.uint8)
bool_ = _DType(np.bool_)


def _np_dtype(dt):
    if isinstance(dt, _DType):
        return dt.dtype
    return np.dtype(dt) if dt is not None else None



# the core families, in their own modules (each defines its functions; this package names
# them all, and the breadth modules imported below replace some of them)
from ._elementwise import *  # noqa: E402,F401,F403
from ._elementwise import (_unary_float, _unary_same, _no_bool, _binary, _bool, _logical,
                           _where_fn)  # noqa: E402,F401
from ._reductions import *  # noqa: E402,F401,F403
from ._reductions import (_reduce, _sum_dtype, _masked, _count, _lowest, _highest, _no_out,
                          _no_identity, _check_nonempty, _arg, _cum, _broadcast_like_axis,
                          _logsumexp, _check_where)  # noqa: E402,F401
from ._shapes import *  # noqa: E402,F401,F403
from ._shapes import (_seq, _split, _AtIndexer, _tri_mask)  # noqa: E402,F401
from ._products import *  # noqa: E402,F401,F403
from ._products import _check_contract  # noqa: E402,F401


# ----------------------------------------------------------------------------
# more of numpy: padding, nan-reductions, searching, selection, integration,
# convolution, counting (each a composition of the functions above)
# ----------------------------------------------------------------------------

triu_indices, tril_indices, diag_indices = np.triu_indices, np.tril_indices, np.diag_indices


@npfunc(np.triu_indices_from)
def triu_indices_from(arr, k=0):
    n, m = shape_of(arr)[-2:]
    return np.triu_indices(n, k, m)


@npfunc(np.tril_indices_from)
def tril_indices_from(arr, k=0):
    n, m = shape_of(arr)[-2:]
    return np.tril_indices(n, k, m)


@npfunc(np.append)
def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def _nan_to(a, v):
    a = asarray(a)
    if dtype_of(a).kind not in "fc":      # complex: nan in either part (numpy's isnan)
        return a
    return where(isnan(a), v, a)


@npfunc(np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``sum`` with nans counted as zero (their gradient is zero)."""
    _no_out(out, "nansum")
    _check_where("nansum", where)
    return sum(_nan_to(a, 0.0), axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
               where=where)


@npfunc(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "nanmean")
    _check_where("nanmean", where)
    a = asarray(a)
    a = P.convert(a, _np_dtype(dtype) or float_type(dtype_of(a)))
    n = sum(logical_not(isnan(a)), axis=axis, keepdims=keepdims, where=where)
    return divide(nansum(a, axis=axis, keepdims=keepdims, where=where), astype(n, dtype_of(a)))


def _nanreduce(red, fill, name):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(out, name)
        _check_where(name, where)
        a = asarray(a)
        kw = dict(axis=axis, keepdims=keepdims, initial=initial, where=where)
        if dtype_of(a).kind not in "fc":
            return red(a, **kw)
        out = red(_nan_to(a, fill), **kw)
        if initial is not None:      # numpy: an initial value stands in for all-nan slices
            return out
        return _where_fn(all(isnan(a), axis=axis, keepdims=keepdims, where=where), np.nan, out)
    return f


nanmax = npfunc(np.nanmax)(_nanreduce(lambda a, **k: max(a, **k), -np.inf, "nanmax"))
nanmin = npfunc(np.nanmin)(_nanreduce(lambda a, **k: min(a, **k), np.inf, "nanmin"))
nanmax.__name__, nanmin.__name__ = "nanmax", "nanmin"


@npfunc(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None, *, method=None):
    """Insertion indices into sorted ``a`` (not differentiable; ``v`` may be traced).
    One comparison per element of ``a``: fine for the short tables scripts search.
    JAX's ``method=`` (its search strategy: ``"scan"``, ``"sort"``, ...) is accepted and
    changes nothing but speed there, so it is ignored."""
    if method not in (None, "scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"searchsorted: unknown method={method!r}")
    a = asarray(a)
    if sorter is not None:
        a = take(a, sorter)
    v = asarray(v)
    a, v = promote(a, v)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    v = expand_dims(v, -1)
    # numpy's sort order: NaNs last; complex numbers by real part, then imaginary part
    if side == "left":
        before = _sorts_before(a, v)                  # a[i] < v
    else:
        before = logical_not(_sorts_before(v, a))     # a[i] <= v
    return sum(before, axis=-1, dtype=np.int64)


def _sorts_before(x, y):
    """``x`` comes strictly before ``y`` in numpy's sort order (NaNs last, complex
    lexicographic)."""
    kind = dtype_of(x).kind
    if kind == "c":
        xr, xi, yr, yi = real(x), imag(x), real(y), imag(y)
        return logical_or(_sorts_before(xr, yr),
                          logical_and(equal(xr, yr), _sorts_before(xi, yi)))
    if kind == "f":
        return logical_or(less(x, y), logical_and(logical_not(isnan(x)), isnan(y)))
    return less(x, y)


@npfunc(np.select)
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    out = default
    for c, x in reversed(list(zip(condlist, choicelist))):   # the first true condition wins
        out = where(c, x, out)
    return asarray(out)


def _np_logaddexp2(x1, x2):
    # numpy's logaddexp2 has no complex loop; JAX's (and the traced one here) has
    if np.result_type(x1, x2).kind == "c":
        return _logaddexp2(x1, x2)
    return np.logaddexp2(x1, x2)


@npfunc(_np_logaddexp2)
def logaddexp2(x1, x2):
    """``log2(2**x1 + 2**x2)`` without overflow (``numpy.logaddexp2``); complex operands
    take the principal logarithm, as JAX's.

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.logaddexp2(1000.0, 1000.0))
    1001.0
    """
    return _logaddexp2(x1, x2)


def _logaddexp2(x1, x2):
    ln2 = math.log(2.0)
    a, b = elementwise_args(x1, x2, to_float=True)
    return divide(logaddexp(multiply(a, ln2), multiply(b, ln2)), ln2)


@npfunc(np.fmax)
def fmax(x1, x2):
    a, b = elementwise_args(x1, x2)
    return where(isnan(b), a, where(isnan(a), b, maximum(a, b)))


@npfunc(np.fmin)
def fmin(x1, x2):
    a, b = elementwise_args(x1, x2)
    return where(isnan(b), a, where(isnan(a), b, minimum(a, b)))


@npfunc(np.atleast_3d)
def atleast_3d(*arys):
    def one(a):
        a = asarray(a)
        s = shape_of(a)
        if len(s) == 0:
            return reshape(a, (1, 1, 1))
        if len(s) == 1:
            return reshape(a, (1, s[0], 1))
        if len(s) == 2:
            return reshape(a, s + (1,))
        return a
    out = [one(a) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@npfunc(np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Trapezoidal rule ``Σ (x[i+1]-x[i])·(y[i+1]+y[i])/2`` along ``axis``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.trapezoid(np.array([0.0, 1.0, 4.0]), np.array([0.0, 1.0, 2.0])))
    3.0
    """
    y = asarray(y)
    ax = normalize_axis(axis, ndim(y))
    m = shape_of(y)[ax]
    avg = multiply(add(P.slice_in_dim(y, 1, m, ax), P.slice_in_dim(y, 0, builtins.max(m - 1, 0), ax)), 0.5)
    if x is None:
        d = dx
    else:
        x = asarray(x)
        if ndim(x) == 1:
            d = diff(x)
            sh = [1] * ndim(y)
            sh[ax] = shape_of(d)[0]
            d = reshape(d, tuple(sh))
        else:
            d = diff(x, axis=axis)      # numpy: the axis counts in x's own dimensions
    return sum(multiply(d, avg), axis=ax)


trapz = trapezoid


@npfunc(np.convolve)
def convolve(a, v, mode="full"):
    """1-d discrete convolution as ``len(kernel)`` shifted, scaled copies (the shorter
    argument is the kernel): cheap for the small kernels of smoothing and filtering.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    a, v = promote(asarray(a), asarray(v))
    if ndim(a) != 1 or ndim(v) != 1:
        raise ShapeError("convolve: both inputs must be 1-d", source=user_source())
    if shape_of(v)[0] > shape_of(a)[0]:
        a, v = v, a
    n, m = shape_of(a)[0], shape_of(v)[0]
    if m == 0:
        raise ValueError("v cannot be empty")
    ap = concatenate([zeros_like(a, shape=(m - 1,)), a, zeros_like(a, shape=(m - 1,))])
    L = n + m - 1
    out = None
    for j in range(m):                                    # full[k] = Σ_j v[j]·a[k-j]
        term = multiply(getitem(v, j), P.slice_in_dim(ap, m - 1 - j, m - 1 - j + L, 0))
        out = term if out is None else add(out, term)
    if mode == "full":
        return out
    if mode == "same":
        start = (m - 1) // 2
        return P.slice_in_dim(out, start, start + n, 0)
    if mode == "valid":
        return P.slice_in_dim(out, m - 1, n, 0)
    raise ValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")


@npfunc(np.bincount)
def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed ``weights``) per non-negative integer of ``x``. The result's
    length must be known while tracing: pass ``length=`` (or ``minlength`` ≥ max(x)+1)
    when ``x`` is traced without a concrete value; values beyond ``length`` are dropped and
    negative ones counted in bin 0 (JAX's rule; numpy raises for them). Weights are
    differentiable.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda w: anp.bincount(np.array([0, 2, 2]), w)[2])(np.ones(3))
    array([0., 1., 1.])
    """
    x = asarray(x)
    if ndim(x) != 1:
        raise ShapeError("bincount: x must be 1-d", source=user_source())
    if dtype_of(x).kind == "b":
        x = astype(x, np.int64)
    elif dtype_of(x).kind not in "iu":
        raise TypeError(f"bincount: x must have an integer type, got {dtype_of(x)}")
    if dtype_of(x).kind == "i":
        x = maximum(x, 0)             # JAX: negative values count in the first bin
    if length is None:
        if isinstance(x, Tracer) and not is_concrete(x):
            if minlength:
                length = builtins.int(minlength)
            else:
                raise ConcretizationError(
                    "bincount: the result's length depends on the values of a traced x; pass "
                    "length=... (or minlength=...)", source=user_source())
        else:
            xv = np.asarray(x.concrete_value("bincount") if isinstance(x, Tracer) else x)
            length = builtins.max(builtins.int(xv.max()) + 1 if xv.size else 0, builtins.int(minlength))
    hits = equal(expand_dims(x, -1), np.arange(length, dtype=dtype_of(x)))      # (n, length)
    if weights is None:
        return sum(hits, axis=0, dtype=np.int64)
    w = astype(asarray(weights), np.float64)             # numpy sums weights in double
    return sum(where(hits, expand_dims(w, -1), 0.0), axis=0)



from . import linalg  # noqa: E402,F401
from . import random  # noqa: E402,F401
from . import fft  # noqa: E402,F401
# the rest of numpy, by job; some replace the simpler versions above
from ._manipulation import pad  # noqa: E402,F401
from ._manipulation import (rot90, rollaxis, dsplit, hsplit, vsplit, block, meshgrid,  # noqa: E402,F401
                            resize, trim_zeros, array_equiv, unstack, matrix_transpose)
from ._matrices import tri, tril, triu, vander, diagflat, cross, vecdot, matvec, vecmat  # noqa: E402,F401
from ._index_tricks import (r_, c_, ix_, unravel_index, ravel_multi_index, put_along_axis,  # noqa: E402,F401
                            fill_diagonal, place)
from ._functional import apply_along_axis, apply_over_axes, vectorize, piecewise  # noqa: E402,F401
from ._numerical import gradient, ediff1d, unwrap, correlate, interp  # noqa: E402,F401
from ._number_parts import (real, imag, angle, real_if_close, iscomplex, isreal,  # noqa: E402,F401
                            iscomplexobj, isrealobj, isposinf, isneginf, frexp, ldexp, modf,
                            spacing, nextafter)
from ._special_functions import i0  # noqa: E402,F401
from ._integers import (divmod, left_shift, right_shift, bitwise_left_shift,  # noqa: E402,F401
                        bitwise_right_shift, bitwise_count, gcd, lcm, packbits, unpackbits)
from ._polynomials import (polyadd, polysub, polymul, polyder, polyint, polydiv, poly,  # noqa: E402,F401
                           polyfit, roots)
from ._einsum import einsum_path  # noqa: E402,F401
from ._sets import (unique, unique_values, unique_counts, unique_inverse, unique_all, isin,  # noqa: E402,F401
                    union1d, intersect1d, setdiff1d, setxor1d)
from ._selection import top_k  # noqa: E402,F401
from ._selection import (digitize, lexsort, partition, argpartition, sort_complex, choose,  # noqa: E402,F401
                         compress, extract, delete, insert, put)
from ._statistics import (histogram_bin_edges, histogram, histogramdd, histogram2d, quantile,  # noqa: E402,F401
                          percentile, nanquantile, nanpercentile, nanmedian, nanargmax, nanargmin,
                          nanprod, nancumsum, nancumprod, nanvar, nanstd, cov, corrcoef)
from ._numpy_reexports import *  # noqa: E402,F401,F403
from ._precision import *  # noqa: E402,F401,F403  (JAX's precision= on the products)
from ._precision import with_precision as _with_precision  # noqa: E402
convolve = _with_precision(convolve)        # JAX's precision= / preferred_element_type=
correlate = _with_precision(correlate)
# creation functions: numpy's outside transforms; inside, traced fill values and .at[] (issue 13)
from ._creation import (zeros, ones, empty, full, eye, identity, arange, zeros_like,  # noqa: E402,F401
                        ones_like, empty_like, full_like, array, linspace, logspace, geomspace)
from ._creation import asarray_public as asarray  # noqa: E402  (copy=, device=)
from ._creation import (asanyarray, ascontiguousarray, asfortranarray, require,  # noqa: E402,F401
                        asarray_chkfinite, copyto)
bitwise_invert = invert  # noqa: E402
from ._docs import fill as _fill_docs  # noqa: E402
_fill_docs(globals())
_fill_docs(linalg, "numpy.linalg")
_fill_docs(fft, "numpy.fft")

ndim = ndim_

# The public surface: numpy's names, the documented extras (``at``, ``logsumexp``,
# ``softmax``, ``log_softmax``, ``stop_gradient``, ``Array``, numpy 1's aliases) and the
# ``linalg``/``random``/``fft`` namespaces. The rest of this module's globals are its own tools
# (the primitives, numpy, the dispatch helpers), importable but not part of the API.
_INTERNAL = frozenset({
    "P", "np", "math", "builtins", "Tracer", "npfunc", "promote", "asarray_", "dtype_of",
    "elementwise_args", "float_type", "getitem", "is_concrete", "is_python_scalar",
    "meshgrid_np", "ndim_", "normalize_axes", "normalize_axis", "result_type_np", "shape_",
    "shape_of", "to_output", "user_source", "DTypeError", "ShapeError", "UnsupportedError",
    "ConcretizationError", "axes_to_last", "safe_sqrt"})
__all__ = sorted(n for n, v in list(globals().items())
                 if not n.startswith("_") and n not in _INTERNAL
                 and (not isinstance(v, type(math)) or n in ("linalg", "random", "fft")))


# numpy's ufunc methods (add.reduce, add.outer, ...) on the ufunc-named functions above
from ._ufuncs import install as _install_ufunc_methods, frompyfunc  # noqa: E402
_install_ufunc_methods(globals())
__all__ = sorted(set(__all__) | {"frompyfunc"})


# The tracers' operators and array methods (autodiff._tracer_methods, below this layer) call
# this namespace: installed here, once, so tracing never imports autodiff.numpy.
from .._tracer_methods import install_array_namespace as _install  # noqa: E402
from ._indexing import getitem as _getitem, _AtIndexer as _AtIndexerOfIndexing  # noqa: E402
import sys as _sys  # noqa: E402
_install(_sys.modules[__name__], fast_pair=_fast_pair, getitem=_getitem,
         at_indexer=_AtIndexerOfIndexing, prims=P)


def __dir__():
    return __all__ + ["bool"]


def __getattr__(name):
    # ``anp.bool`` is numpy's ``bool`` (as ``jax.numpy.bool``), served here rather than as a
    # module global so that the builtin ``bool`` stays the one this module's code sees
    if name == "bool":
        return np.bool_
    raise AttributeError(f"module 'autodiff.numpy' has no attribute '{name}'")
