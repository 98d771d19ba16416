"""More of ``jax.lax``, each a composition of existing primitives (so every transform and
``jit`` handle it without new rules): elementwise and structural wrappers with JAX's
names, ``associative_scan`` (parallel prefix in the IR), ``reduce``, ``reduce_window``,
``conv_general_dilated``, ``top_k``, ``sort_key_val``, the cumulative reductions,
``clamp``, and the implicitly differentiated ``custom_root`` / ``custom_linear_solve``.

Operands follow numpy's dtype promotion (JAX's lax insists on equal dtypes; code that
satisfies JAX gets the same answer here).

>>> import numpy as np, autodiff as ad
>>> ad.lax.associative_scan(ad.lax.add, np.arange(1.0, 6.0))
array([ 1.,  3.,  6., 10., 15.])
>>> ad.lax.top_k(np.array([3.0, 1.0, 4.0, 1.5]), 2)
(array([4., 3.]), array([2, 0]))
"""
import builtins
import enum
import operator

import numpy as np

from . import numpy as anp
from . import primitives as P
from .core import Tracer, trace_flat, eval_jaxpr, get_aval
from .custom_derivatives import custom_jvp, custom_vjp
from .errors import ShapeError
from .tree_util import tree_flatten, tree_unflatten, tree_map
from .numpy._precision import Precision, check_precision

__all__ = [
    # elementwise, JAX's names
    "add", "sub", "mul", "div", "rem", "max", "min", "neg", "abs", "sign", "exp", "log",
    "log1p", "expm1", "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sin", "cos", "tan",
    "pow", "integer_pow", "square", "floor", "ceil", "round", "is_finite", "eq", "ne",
    "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "convert_element_type", "clamp",
    # structure
    "broadcast", "broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims",
    "concatenate", "pad", "slice", "slice_in_dim", "dynamic_slice_in_dim",
    "dynamic_update_slice_in_dim", "dynamic_index_in_dim", "index_in_dim", "rev", "iota",
    "broadcasted_iota", "full", "full_like", "zeros_like_array", "dot", "dot_general",
    "collapse",
    # reductions and scans
    "reduce", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
    "reduce_or", "argmax", "argmin", "reduce_window", "associative_scan", "cumsum",
    "cumprod", "cummax", "cummin", "cumlogsumexp", "sort", "sort_key_val", "top_k",
    # convolution, implicit solves
    "conv_general_dilated", "conv", "conv_with_general_padding", "custom_root",
    "custom_linear_solve",
    # JAX's spellings
    "Precision",
]

# ----------------------------------------------------------------------------
# elementwise
# ----------------------------------------------------------------------------
add, sub, mul = anp.add, anp.subtract, anp.multiply
max, min = anp.maximum, anp.minimum  # noqa: A001 - JAX's names
neg, abs, sign = anp.negative, anp.abs, anp.sign  # noqa: A001
exp, log, log1p, expm1, sqrt, cbrt = anp.exp, anp.log, anp.log1p, anp.expm1, anp.sqrt, anp.cbrt
tanh, sin, cos, tan = anp.tanh, anp.sin, anp.cos, anp.tan
pow = anp.power  # noqa: A001
floor, ceil, is_finite = anp.floor, anp.ceil, anp.isfinite
eq, ne, lt, le, gt, ge = anp.equal, anp.not_equal, anp.less, anp.less_equal, anp.greater, anp.greater_equal
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = anp.bitwise_and, anp.bitwise_or, anp.bitwise_xor, anp.invert
square = anp.square


def _np_dtype(dtype):
    d = getattr(dtype, "dtype", None)          # anp.float32 and friends wrap a dtype
    return d if isinstance(d, np.dtype) else np.dtype(dtype)


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
    from .nn import sigmoid
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
    return anp.astype(anp.asarray(operand), _np_dtype(new_dtype))


def clamp(min, x, max):  # noqa: A002 - JAX's signature: clamp(min, operand, max)
    """``min(max(x, min), max)``, JAX's argument order.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.clamp(0.0, np.array([-1.0, 0.5, 2.0]), 1.0)
    array([0. , 0.5, 1. ])
    """
    return anp.minimum(anp.maximum(x, min), max)


# ----------------------------------------------------------------------------
# structure
# ----------------------------------------------------------------------------

def broadcast(operand, sizes):
    """Add leading dimensions ``sizes``."""
    x = anp.asarray(operand)
    return anp.broadcast_to(x, tuple(sizes) + tuple(anp.shape(x)))


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """``operand`` broadcast to ``shape``; operand dimension ``i`` becomes result dimension
    ``broadcast_dimensions[i]``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.broadcast_in_dim(np.array([1.0, 2.0]), (3, 2), (1,)).shape
    (3, 2)
    """
    x = anp.asarray(operand)
    if not isinstance(x, Tracer):
        return np.asarray(P.broadcast_in_dim(np.asarray(x), tuple(shape), tuple(broadcast_dimensions)))
    return P.broadcast_in_dim(x, tuple(shape), tuple(broadcast_dimensions))


def reshape(operand, new_sizes, dimensions=None):
    """``operand`` reshaped to ``new_sizes``, read in the order of ``dimensions`` (a permutation
    applied first) when given."""
    x = anp.asarray(operand)
    if dimensions is not None:
        x = anp.transpose(x, dimensions)
    return anp.reshape(x, tuple(new_sizes))


def transpose(operand, permutation):
    """``operand`` with its dimensions permuted: result dimension ``i`` is operand dimension
    ``permutation[i]``."""
    return anp.transpose(operand, tuple(permutation))


def squeeze(array, dimensions):
    """``array`` without the size-1 dimensions listed in ``dimensions``."""
    return anp.squeeze(array, axis=tuple(dimensions))


def expand_dims(array, dimensions):
    """``array`` with size-1 dimensions inserted at the positions ``dimensions`` of the result."""
    return anp.expand_dims(array, tuple(dimensions))


def concatenate(operands, dimension):
    """The ``operands`` joined along ``dimension`` (JAX's argument order: the sequence, then the
    axis)."""
    return anp.concatenate(list(operands), axis=dimension)


def pad(operand, padding_value, padding_config):
    """Pad with ``(low, high, interior)`` per dimension; negative low/high crop."""
    x = anp.asarray(operand)
    cfg = tuple(tuple(int(v) for v in c) for c in padding_config)
    pv = anp.astype(anp.asarray(padding_value), anp.result_type(x))
    if not isinstance(x, Tracer) and not isinstance(pv, Tracer):
        return np.asarray(P.pad_p.impl(np.asarray(x), np.asarray(pv), padding_config=cfg))
    return P.pad(x, pv, cfg)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    idx = tuple(builtins.slice(s, l, st) for s, l, st in
                zip(start_indices, limit_indices, strides or [1] * len(start_indices)))
    return anp.asarray(operand)[idx]


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[start_index:limit_index:stride]`` along ``axis``, the other dimensions whole.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.slice_in_dim(np.arange(6.0).reshape(2, 3), 1, 3, axis=1)
    array([[1., 2.],
           [4., 5.]])
    """
    x = anp.asarray(operand)
    idx = [builtins.slice(None)] * anp.ndim(x)
    idx[axis] = builtins.slice(start_index, limit_index, stride)
    return x[tuple(idx)]


def index_in_dim(operand, index, axis=0, keepdims=True):
    """Element ``index`` of ``operand`` along ``axis`` (a static index), kept as a size-1 dimension
    unless ``keepdims=False``."""
    out = slice_in_dim(operand, index, index + 1 if index != -1 else None, 1, axis)
    return out if keepdims else anp.squeeze(out, axis=axis)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """``slice_size`` elements of ``operand`` along ``axis`` from ``start_index``, which may be
    traced (clamped into range as in JAX)."""
    from .lax import dynamic_slice
    x = anp.asarray(operand)
    starts = [0] * anp.ndim(x)
    starts[axis] = start_index
    sizes = list(anp.shape(x))
    sizes[axis] = slice_size
    return dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """Element ``index`` (possibly traced) of ``operand`` along ``axis``, kept as a size-1 dimension
    unless ``keepdims=False``."""
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else anp.squeeze(out, axis=axis)


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """``operand`` with ``update`` written along ``axis`` from ``start_index`` (possibly traced;
    clamped as in JAX), functionally."""
    from .lax import dynamic_update_slice
    x = anp.asarray(operand)
    starts = [0] * anp.ndim(x)
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def rev(operand, dimensions):
    """``operand`` reversed along each of ``dimensions``."""
    return anp.flip(operand, axis=tuple(dimensions))


def iota(dtype, size):
    """``0, 1, ..., size - 1`` as a 1-d array of ``dtype``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.iota(np.int64, 3)
    array([0, 1, 2])
    """
    return np.arange(size, dtype=_np_dtype(dtype))


def broadcasted_iota(dtype, shape, dimension):
    """An array of ``shape`` and ``dtype`` holding each element's index along ``dimension``."""
    return np.asarray(P.iota(_np_dtype(dtype), tuple(shape), dimension))


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` (an int or a tuple) filled with ``fill_value``, of ``dtype`` (the
    value's by default)."""
    return anp.full(tuple(shape) if not isinstance(shape, int) else (shape,), fill_value, dtype=dtype)


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like ``x`` (its shape and dtype unless ``shape``/``dtype`` are given) filled with
    ``fill_value``."""
    return anp.full_like(x, fill_value, dtype=dtype, shape=shape)


def zeros_like_array(x):
    """Zeros of ``x``'s shape and dtype."""
    return anp.zeros_like(x)


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with dimensions ``start_dimension`` up to ``stop_dimension`` (exclusive; the end
    by default) merged into one."""
    x = anp.asarray(operand)
    sh = tuple(anp.shape(x))
    stop = len(sh) if stop_dimension is None else stop_dimension
    return anp.reshape(x, sh[:start_dimension] + (int(np.prod(sh[start_dimension:stop])),) + sh[stop:])


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Matrix or vector product of ``lhs`` and ``rhs`` (``numpy.dot``); ``precision`` and
    ``preferred_element_type`` are accepted for JAX's signature and have no effect (float64 stays
    float64)."""
    return anp.dot(lhs, rhs)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """JAX's ``dot_general``: ``dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``; result dims are batch, lhs free, rhs free."""
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = anp.asarray(lhs), anp.asarray(rhs)
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if not isinstance(x, Tracer) and not isinstance(y, Tracer):
        dt = anp.result_type(x, y)
        return np.asarray(P.dot_general_p.impl(np.asarray(x, dt), np.asarray(y, dt), dimension_numbers=dn))
    x, y = [anp.astype(v, anp.result_type(x, y)) for v in (x, y)]
    return P.dot_general(x, y, dn)


# ----------------------------------------------------------------------------
# reductions
# ----------------------------------------------------------------------------

def reduce_sum(operand, axes):
    """Sum of ``operand`` over ``axes`` (a sequence of dimensions)."""
    return anp.sum(operand, axis=tuple(axes))


def reduce_max(operand, axes):
    """Maximum of ``operand`` over ``axes``."""
    return anp.max(operand, axis=tuple(axes))


def reduce_min(operand, axes):
    """Minimum of ``operand`` over ``axes``."""
    return anp.min(operand, axis=tuple(axes))


def reduce_prod(operand, axes):
    """Product of ``operand`` over ``axes``."""
    return anp.prod(operand, axis=tuple(axes))


def reduce_and(operand, axes):
    """Logical and of ``operand`` over ``axes``."""
    return anp.all(operand, axis=tuple(axes))


def reduce_or(operand, axes):
    """Logical or of ``operand`` over ``axes``."""
    return anp.any(operand, axis=tuple(axes))


def argmax(operand, axis, index_dtype=np.int64):
    """Index of the maximum of ``operand`` along ``axis``, as ``index_dtype``."""
    return anp.astype(anp.argmax(operand, axis=axis), index_dtype)


def argmin(operand, axis, index_dtype=np.int64):
    """Index of the minimum of ``operand`` along ``axis``, as ``index_dtype``."""
    return anp.astype(anp.argmin(operand, axis=axis), index_dtype)


# computations lax.reduce recognises, mapped to the numpy reduction they are
_MONOIDS = {}
for _fn, _red in [(anp.add, anp.sum), (np.add, anp.sum), (operator.add, anp.sum),
                  (anp.multiply, anp.prod), (np.multiply, anp.prod), (operator.mul, anp.prod),
                  (anp.maximum, anp.max), (np.maximum, anp.max),
                  (anp.minimum, anp.min), (np.minimum, anp.min),
                  (anp.logical_and, anp.all), (np.logical_and, anp.all), (operator.and_, anp.all),
                  (anp.logical_or, anp.any), (np.logical_or, anp.any), (operator.or_, anp.any)]:
    _MONOIDS[_fn] = _red


def reduce(operands, init_values, computation, dimensions):
    """Reduce ``operands`` (an array or a pytree of arrays) over ``dimensions`` with the
    associative, commutative ``computation(acc, x)``, starting from ``init_values``.
    Known monoids (add, mul, max, min, and, or) become one reduction; any other
    computation is applied as a balanced tree of pairwise combinations (log₂ n levels).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.reduce(np.arange(6.0).reshape(2, 3), 0.0, ad.lax.add, (1,))
    array([ 3., 12.])
    >>> # a variadic reduction: value and index of the maximum
    >>> def pick(a, b):
    ...     take_b = b[0] > a[0]
    ...     return (ad.lax.select(take_b, b[0], a[0]), ad.lax.select(take_b, b[1], a[1]))
    >>> x = np.array([2.0, 7.0, 3.0])
    >>> ad.lax.reduce((x, np.arange(3)), (-np.inf, 0), pick, (0,))
    (np.float64(7.0), np.int64(1))
    """
    dims = tuple(sorted(int(d) for d in dimensions))
    flat, tree = tree_flatten(operands)
    inits, itree = tree_flatten(init_values)
    if len(inits) != len(flat):
        raise ShapeError(f"lax.reduce: {len(flat)} operands but {len(inits)} init values")
    red = _MONOIDS.get(computation) if len(flat) == 1 else None
    if red is not None:
        return computation(red(flat[0], axis=dims), inits[0])
    xs = [anp.asarray(x) for x in flat]
    comb = lambda a, b: tree_flatten(computation(tree_unflatten(tree, a), tree_unflatten(tree, b)))[0]
    for d in reversed(dims):
        while anp.shape(xs[0])[d] > 1:
            n = anp.shape(xs[0])[d]
            h = n // 2
            lo = [slice_in_dim(x, 0, 2 * h, 2, d) for x in xs]
            hi = [slice_in_dim(x, 1, 2 * h, 2, d) for x in xs]
            new = comb(lo, hi)
            if n % 2:
                new = [anp.concatenate([c, slice_in_dim(x, n - 1, n, 1, d)], axis=d) for c, x in zip(new, xs)]
            xs = new
        xs = [anp.squeeze(x, axis=d) if anp.shape(x)[d] == 1 else
              anp.broadcast_to(anp.asarray(i), anp.shape(x)[:d] + anp.shape(x)[d + 1:])
              for x, i in zip(xs, inits)]
    init_b = [anp.broadcast_to(anp.asarray(i), anp.shape(x)) for i, x in zip(inits, xs)]
    return tree_unflatten(tree, comb(init_b, xs))


def _padding_pairs(padding, in_shape, window, strides, dilation):
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * len(in_shape)
        if padding.upper() in ("SAME", "SAME_LOWER"):
            pads = []
            for n, w, s, d in zip(in_shape, window, strides, dilation):
                ew = (w - 1) * d + 1
                out = -(-n // s)
                total = builtins.max((out - 1) * s + ew - n, 0)
                lo = total // 2 if padding.upper() == "SAME" else total - total // 2
                pads.append((lo, total - lo))
            return pads
        raise ValueError(f"padding must be 'VALID', 'SAME', 'SAME_LOWER' or pairs, got {padding!r}")
    return [tuple(int(v) for v in p) for p in padding]


def _window_slices(x, window, strides, dilation, out_shape):
    """Yield, for every window offset, the strided view that offset contributes."""
    nd = len(window)
    for off in np.ndindex(*window):
        idx = tuple(builtins.slice(o * d, o * d + (m - 1) * s + 1, s)
                    for o, d, m, s in zip(off, dilation, out_shape, strides))
        yield off, x[idx]


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce every window of ``operand`` (pooling): ``computation(acc, x)`` folded over
    the window's elements, with JAX's padding (``'VALID'``, ``'SAME'`` or pairs; padded
    cells hold ``init_value``), strides and dilations.

    >>> import numpy as np, autodiff as ad
    >>> x = np.arange(16.0).reshape(4, 4)
    >>> ad.lax.reduce_window(x, -np.inf, ad.lax.max, (2, 2), (2, 2))      # 2x2 max-pool
    array([[ 5.,  7.],
           [13., 15.]])
    """
    x = anp.asarray(operand)
    nd = anp.ndim(x)
    window = tuple(int(w) for w in window_dimensions)
    strides = tuple(window_strides or (1,) * nd)
    wdil = tuple(window_dilation or (1,) * nd)
    bdil = tuple(base_dilation or (1,) * nd)
    init = anp.astype(anp.asarray(init_value), anp.result_type(x))
    dilated_shape = tuple((n - 1) * b + 1 if n else 0 for n, b in zip(anp.shape(x), bdil))
    pads = _padding_pairs(padding, dilated_shape, window, strides, wdil)
    if builtins.any(p != (0, 0) for p in pads) or builtins.any(b != 1 for b in bdil):
        x = pad(x, init, [(lo, hi, b - 1) for (lo, hi), b in zip(pads, bdil)])
    sh = anp.shape(x)
    out_shape = tuple(builtins.max((n - ((w - 1) * d + 1)) // s + 1, 0)
                      for n, w, d, s in zip(sh, window, wdil, strides))
    acc = anp.broadcast_to(init, out_shape)      # init ⊕ every element of the window
    for _, v in _window_slices(x, window, strides, wdil, out_shape):
        acc = computation(acc, v)
    return acc


# ----------------------------------------------------------------------------
# scans
# ----------------------------------------------------------------------------

def _take(x, start, stop, step, axis):
    return slice_in_dim(x, start, stop, step, axis)


def _interleave(a, b, axis):
    """a0 b0 a1 b1 ... along ``axis``; ``a`` may be one longer than ``b``."""
    na, nb = anp.shape(a)[axis], anp.shape(b)[axis]
    extra = None
    if na == nb + 1:
        extra = _take(a, na - 1, na, 1, axis)
        a = _take(a, 0, nb, 1, axis)
    s = anp.stack([a, b], axis=axis + 1)
    sh = list(anp.shape(a))
    sh[axis] = 2 * nb
    out = anp.reshape(s, tuple(sh))
    return out if extra is None else anp.concatenate([out, extra], axis=axis)


def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive prefix combination ``[e0, fn(e0, e1), fn(fn(e0, e1), e2), ...]`` for an
    associative ``fn``, by the parallel-prefix recursion (combine neighbours, scan the
    half-length sequence, fill in the evens): O(log n) levels of vectorized ``fn`` calls
    in the IR, each level a few slices, so ``jit`` compiles it to straight-line kernels.
    ``elems`` may be a pytree of arrays sharing the scanned axis.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.lax.associative_scan(anp.maximum, np.array([1.0, 3.0, 2.0, 5.0, 4.0]))
    array([1., 3., 3., 5., 5.])
    """
    flat, tree = tree_flatten(elems)
    xs = [anp.asarray(x) for x in flat]
    if not xs:
        return elems
    nd = anp.ndim(xs[0])
    ax = axis % nd if nd else 0
    n = anp.shape(xs[0])[ax]
    for x in xs:
        if anp.shape(x)[ax] != n:
            raise ShapeError(f"associative_scan: all elements need the same length along axis "
                             f"{axis}, got {[anp.shape(x)[ax] for x in xs]}")
    if reverse:
        xs = [anp.flip(x, axis=ax) for x in xs]
    comb = lambda a, b: [anp.asarray(o) for o in tree_flatten(
        fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))[0]]

    def scan(xs):
        n = anp.shape(xs[0])[ax]
        if n < 2:
            return xs
        red = comb([_take(x, 0, n - 1, 2, ax) for x in xs], [_take(x, 1, n, 2, ax) for x in xs])
        odd = scan(red)                                  # prefixes ending at 1, 3, 5, ...
        if n % 2 == 0:
            ev = comb([_take(o, 0, anp.shape(o)[ax] - 1, 1, ax) for o in odd],
                      [_take(x, 2, n, 2, ax) for x in xs])
        else:
            ev = comb(odd, [_take(x, 2, n, 2, ax) for x in xs])
        ev = [anp.concatenate([_take(x, 0, 1, 1, ax), e], axis=ax) for x, e in zip(xs, ev)]
        return [_interleave(e, o, ax) for e, o in zip(ev, odd)]

    out = scan(xs)
    if reverse:
        out = [anp.flip(o, axis=ax) for o in out]
    return tree_unflatten(tree, out)


def _cum(np_name, fn):
    def f(operand, axis=0, reverse=False):
        x = anp.asarray(operand)
        if reverse:
            x = anp.flip(x, axis=axis)
        out = fn(x, axis)
        return anp.flip(out, axis=axis) if reverse else out
    f.__name__ = np_name
    f.__doc__ = f"``lax.{np_name}(operand, axis=0, reverse=False)``."
    return f


cumsum = _cum("cumsum", lambda x, ax: anp.cumsum(x, axis=ax))
cumprod = _cum("cumprod", lambda x, ax: anp.cumprod(x, axis=ax))
cummax = _cum("cummax", lambda x, ax: np.maximum.accumulate(x, axis=ax)
              if not isinstance(x, Tracer) else P.cummax_p.bind(x, axis=ax % anp.ndim(x), reverse=False))
cummin = _cum("cummin", lambda x, ax: np.minimum.accumulate(x, axis=ax)
              if not isinstance(x, Tracer) else P.cummin_p.bind(x, axis=ax % anp.ndim(x), reverse=False))
cumlogsumexp = _cum("cumlogsumexp", lambda x, ax: associative_scan(anp.logaddexp, x, axis=ax))
cumlogsumexp.__doc__ = """``log(cumsum(exp(x)))`` without overflow or underflow: a parallel
prefix of ``logaddexp``.

>>> import numpy as np, autodiff as ad
>>> ad.lax.cumlogsumexp(np.array([-1000.0, 0.0, 1000.0]))
array([-1000.,     0.,  1000.])
"""


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort along ``dimension``; a tuple of operands is sorted by the first ``num_keys``."""
    if isinstance(operand, (tuple, list)):
        if num_keys != 1:
            raise NotImplementedError("lax.sort: num_keys > 1 (lexicographic keys) is not supported")
        keys = anp.asarray(operand[0])
        idx = anp.argsort(keys, axis=dimension, kind="stable")
        return tuple(anp.take_along_axis(anp.asarray(o), idx, axis=dimension) for o in operand)
    return anp.sort(operand, axis=dimension, kind="stable")


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """``(sorted keys, values in the same order)``; differentiable in ``values``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.sort_key_val(np.array([3, 1, 2]), np.array([30.0, 10.0, 20.0]))
    (array([1, 2, 3]), array([10., 20., 30.]))
    """
    return sort((keys, values), dimension=dimension)


def top_k(operand, k):
    """The ``k`` largest entries along the last axis, in decreasing order, and their
    indices (ties: the lower index first, as in JAX); differentiable in the values."""
    x = anp.asarray(operand)
    k = int(k)
    n = anp.shape(x)[-1]
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k={k} must be in [0, {n}]")
    # a stable sort of the negation keeps equal values in index order
    order = anp.argsort(anp.negative(x) if np.dtype(anp.result_type(x)).kind != "b"
                        else anp.logical_not(x), axis=-1, kind="stable")
    idx = anp.astype(slice_in_dim(order, 0, k, 1, anp.ndim(x) - 1), np.int64)
    return anp.take_along_axis(x, idx, axis=-1), idx


# ----------------------------------------------------------------------------
# convolution
# ----------------------------------------------------------------------------

def _conv_specs(dimension_numbers, nd):
    """(lhs, rhs, out) permutations to N C spatial..., O I spatial..., N C spatial...."""
    if dimension_numbers is None:
        r = tuple(range(nd))
        return r, r, r
    if hasattr(dimension_numbers, "lhs_spec"):
        return (tuple(dimension_numbers.lhs_spec), tuple(dimension_numbers.rhs_spec),
                tuple(dimension_numbers.out_spec))
    lhs, rhs, out = dimension_numbers
    if isinstance(lhs, str):
        def perm(spec, first, second):
            spatial = [i for i, c in enumerate(spec) if c not in (first, second)]
            if isinstance(spec, str) and spec.isalpha() and first in spec and second in spec:
                # spatial order: JAX takes the rhs spec's order of spatial letters
                return (spec.index(first), spec.index(second)) + tuple(spatial)
            raise ValueError(f"conv: bad dimension spec {spec!r}")
        lp, rp, op = perm(lhs, "N", "C"), perm(rhs, "O", "I"), perm(out, "N", "C")
        # match spatial letters by the rhs order
        rs = [c for c in rhs if c not in "OI"]
        lp = lp[:2] + tuple(lhs.index(c) for c in rs)
        op = op[:2] + tuple(out.index(c) for c in rs)
        return lp, rp, op
    return tuple(lhs), tuple(rhs), tuple(out)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """N-dimensional convolution (cross-correlation, as in JAX/XLA) with strides,
    padding (``'VALID'``, ``'SAME'``, pairs), input (transposed-conv) and kernel
    dilation, feature groups, and layouts as ``dimension_numbers`` strings
    (``("NHWC", "HWIO", "NHWC")``) or index triples. Built as one ``dot_general`` per
    kernel offset over strided views, so it differentiates, vmaps and jits.

    >>> import numpy as np, autodiff as ad
    >>> x = np.arange(5.0).reshape(1, 1, 5)            # N C W
    >>> w = np.array([1.0, 0.0, -1.0]).reshape(1, 1, 3) # O I W
    >>> ad.lax.conv_general_dilated(x, w, (1,), "VALID")
    array([[[-2., -2., -2.]]])
    """
    if batch_group_count != 1:
        raise NotImplementedError("conv_general_dilated: batch_group_count > 1 is not supported")
    x, w = anp.asarray(lhs), anp.asarray(rhs)
    dt = anp.result_type(x, w)
    x, w = anp.astype(x, dt), anp.astype(w, dt)
    nd = anp.ndim(x)
    ns = nd - 2
    lp, rp, op = _conv_specs(dimension_numbers, nd)
    x = anp.transpose(x, lp)                      # N C S...
    w = anp.transpose(w, rp)                      # O I K...
    strides = tuple(window_strides) if window_strides else (1,) * ns
    ldil = tuple(lhs_dilation or (1,) * ns)
    rdil = tuple(rhs_dilation or (1,) * ns)
    N, C = anp.shape(x)[:2]
    O, I = anp.shape(w)[:2]
    G = int(feature_group_count)
    if C != I * G or O % G:
        raise ShapeError(f"conv_general_dilated: lhs has {C} features, rhs expects {I} per group "
                         f"× {G} groups with {O} outputs")
    ksz = tuple(anp.shape(w)[2:])
    dil_shape = tuple((n - 1) * d + 1 if n else 0 for n, d in zip(anp.shape(x)[2:], ldil))
    pads = _padding_pairs(padding, dil_shape, ksz, strides, rdil)
    if builtins.any(p != (0, 0) for p in pads) or builtins.any(d != 1 for d in ldil):
        x = pad(x, 0.0, [(0, 0, 0), (0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(pads, ldil)])
    sp = anp.shape(x)[2:]
    out_sp = tuple(builtins.max((n - ((k - 1) * d + 1)) // s + 1, 0) for n, k, d, s in zip(sp, ksz, rdil, strides))
    # groups: x[N, G, I, S...], w[G, O/G, I, K...]
    xg = anp.reshape(x, (N, G, I) + tuple(sp))
    wg = anp.reshape(w, (G, O // G, I) + ksz)
    acc = None
    for off in np.ndindex(*ksz):
        idx = (builtins.slice(None),) * 3 + tuple(
            builtins.slice(o * d, o * d + (m - 1) * s + 1, s) for o, d, m, s in zip(off, rdil, out_sp, strides))
        view = xg[idx]                                               # N G I out...
        tap = wg[(builtins.slice(None),) * 3 + tuple(off)]          # G O/G I
        # contract I, batch G: result G N out... O/G
        term = dot_general(view, tap, (((2,), (2,)), ((1,), (0,))))
        acc = term if acc is None else anp.add(acc, term)
    if acc is None:
        raise ShapeError("conv_general_dilated: empty kernel")
    # acc: G, N, out..., O/G  ->  N, G*O/G, out...
    perm = (1, 0, ns + 2) + tuple(range(2, 2 + ns))
    out = anp.reshape(anp.transpose(acc, perm), (N, O) + out_sp)
    inv = tuple(np.argsort(op))
    return anp.transpose(out, inv)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` with NC... / OI... layouts and no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv_general_dilated`` with explicit ``padding`` and dilations, JAX's older spelling;
    ``precision`` and ``preferred_element_type`` have no effect."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation)


# ----------------------------------------------------------------------------
# implicit solves
# ----------------------------------------------------------------------------

def _closure_convert(f, example):
    """``f``'s closed-over traced values as explicit arguments: ``(g, consts)`` with
    ``g(consts, x) == f(x)``, so a custom rule can differentiate with respect to them."""
    flat, tree = tree_flatten(example)
    avals = [get_aval(anp.asarray(v)).strip_weak() for v in flat]
    box = []

    def flat_f(*xs):
        out = f(tree_unflatten(tree, list(xs)))
        leaves, otree = tree_flatten(out)
        box.append(otree)
        return [anp.asarray(l) for l in leaves]
    closed = trace_flat(flat_f, avals, None, name="closure_convert")
    consts = list(closed.consts)
    jaxpr, otree = closed.jaxpr, box[0]

    def g(cs, x):
        outs = eval_jaxpr(jaxpr, list(cs), *tree_flatten(x)[0])
        return tree_unflatten(otree, list(outs))
    return g, consts


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """The root ``x*`` of ``f`` found by ``solve(f, initial_guess)``, differentiated
    implicitly: ``f(x*(θ), θ) = 0`` gives ``dx* = -(∂f/∂x)⁻¹ ∂f/∂θ dθ``, the inverse
    applied by ``tangent_solve(g, y)`` (solve the linear ``g(x) = y``), for every value
    ``f`` closes over. The solver's iterations are never differentiated.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> def newton(f, x0):
    ...     x = x0
    ...     for _ in range(30):
    ...         x = x - f(x) / ad.grad(f)(x)
    ...     return x
    >>> def cube_root(a):                              # the root of x³ - a
    ...     return ad.lax.custom_root(lambda x: x ** 3 - a, 1.0, newton, lambda g, y: y / g(1.0))
    >>> print(f"{float(cube_root(8.0)):.12f} {float(ad.grad(cube_root)(8.0)):.12f}")   # 2, 1/12
    2.000000000000 0.083333333333
    """
    g, consts = _closure_convert(lambda x: f(x), initial_guess)
    stop = lambda t: tree_map(anp.stop_gradient, t)
    consts_s = stop(consts)
    out = solve(lambda x: g(consts_s, x), stop(initial_guess))
    sol, aux = (out if has_aux else (out, None))
    sol = stop(sol)

    @custom_jvp
    def root(cs, x):
        return x

    @root.defjvp
    def root_jvp(primals, tangents):
        cs, x = primals
        tcs, _ = tangents
        from .api import jvp
        x = root(cs, x)        # the root as a function of cs again: higher derivatives
        # ∂f/∂θ · dθ at the root
        _, rhs = jvp(lambda c: g(c, x), (list(cs),), (list(tcs),))
        lin = lambda v: jvp(lambda y: g(list(cs), y), (x,), (v,))[1]
        dx = tangent_solve(lin, tree_map(anp.negative, rhs))
        return x, dx

    res = root(consts, sol)
    return (res, aux) if has_aux else res


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """``x = solve(matvec, b)`` for the linear ``matvec``, differentiated implicitly in
    ``b`` and in everything ``matvec`` closes over, never through the solver:
    reverse mode solves the transposed system once, ``b̄ = Aᵀ⁻¹ x̄`` (with
    ``transpose_solve(vecmat, x̄)``, or ``solve`` itself when ``symmetric``), and
    ``Ā`` follows as ``-b̄ xᵀ`` through ``matvec``'s own derivative.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> def f(b):
    ...     return ad.lax.custom_linear_solve(lambda v: A @ v, b,
    ...                                       lambda mv, r: anp.linalg.solve(A, r), symmetric=True)
    >>> np.allclose(ad.jacrev(f)(np.array([1.0, 2.0])), np.linalg.inv(A))
    True
    """
    if transpose_solve is None and not symmetric:
        transpose_solve = None      # resolved lazily: only reverse mode needs it
    mv, consts = _closure_convert(lambda v: matvec(v), b)
    stop = lambda t: tree_map(anp.stop_gradient, t)

    def fwd(cs, b):
        out = solve(lambda v: mv(stop(list(cs)), v), stop(b))
        x, aux = (out if has_aux else (out, None))
        return (x, aux), (cs, x)

    def bwd(res, ct):
        cs, x = res
        ct_x = ct[0]
        from .api import vjp
        _, vjp_v = vjp(lambda v: mv(list(cs), v), x)
        vecmat = lambda u: vjp_v(u)[0]
        if symmetric:
            ct_b = solve(lambda v: mv(list(cs), v), ct_x)
        elif transpose_solve is not None:
            ct_b = transpose_solve(vecmat, ct_x)
        else:
            raise TypeError("custom_linear_solve: reverse mode of a non-symmetric system needs "
                            "transpose_solve(vecmat, b)")
        ct_b = ct_b[0] if has_aux and isinstance(ct_b, tuple) else ct_b
        # x = A⁻¹ b: Ā contributions reach matvec's constants as -(∂(A x)/∂θ)ᵀ b̄
        _, vjp_c = vjp(lambda c: mv(c, x), list(cs))
        ct_cs = vjp_c(tree_map(anp.negative, ct_b))[0]
        return ct_cs, ct_b

    @custom_vjp
    def lin_solve(cs, b):
        return fwd(cs, b)[0]

    lin_solve.defvjp(fwd, bwd)
    x, aux = lin_solve(consts, b)
    return (x, aux) if has_aux else x
