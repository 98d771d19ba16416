"""``jax.lax``'s reductions, windows, scans and sorts: ``reduce_*``, ``argmax``/``argmin``,
``reduce`` (a known monoid maps to its numpy reduction, any other computation is a tree of
pairwise steps), ``reduce_window``, ``associative_scan`` (the parallel prefix: log-depth
combinations), the cumulative reductions, ``sort``, ``top_k`` and ``approx_max_k``.

>>> import numpy as np, autodiff as ad
>>> ad.lax.associative_scan(ad.lax.add, np.arange(1.0, 6.0))
array([ 1.,  3.,  6., 10., 15.])
>>> ad.lax.top_k(np.array([3.0, 1.0, 4.0, 1.5]), 2)
(array([4., 3.]), array([2, 0]))
"""
import builtins
import operator

import numpy as np

from . import numpy as anp
from . import primitives as P
from .core import Tracer
from .errors import ShapeError
from .tree_util import tree_flatten, tree_unflatten
from ._lax_elementwise import mul as _lax_mul
from ._lax_structure import pad, padding_pairs, slice_in_dim

__all__ = ["reduce", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
           "reduce_or", "argmax", "argmin", "reduce_window", "associative_scan", "cumsum",
           "cumprod", "cummax", "cummin", "cumlogsumexp", "sort", "sort_key_val", "top_k",
           "approx_max_k", "approx_min_k"]


# ----------------------------------------------------------------------------
# reductions
# ----------------------------------------------------------------------------

def reduce_sum(operand, axes):
    """Sum of ``operand`` over ``axes`` (a sequence of dimensions)."""
    return anp.sum(operand, axis=tuple(axes))


def _empty_identity(operand, axes, kind):
    """``initial=`` for ``anp.max``/``anp.min`` when ``axes`` of ``operand`` hold no element:
    the reduction's identity, as JAX's ``lax.reduce_max/min`` give (-inf / +inf, the
    integer extremes, False / True), where numpy raises; else None."""
    shape = anp.shape(operand)
    if all(shape[a] for a in axes):
        return None
    dt = np.dtype(anp.result_type(operand))
    if dt == np.bool_:
        return kind == "min"
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


def reduce_max(operand, axes):
    """Maximum of ``operand`` over ``axes`` (-inf, or the dtype's least value, where they
    are empty, as in JAX).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.reduce_max(np.zeros((0, 2)), (0,))
    array([-inf, -inf])
    """
    axes = tuple(axes)
    return anp.max(operand, axis=axes, initial=_empty_identity(operand, axes, "max"))


def reduce_min(operand, axes):
    """Minimum of ``operand`` over ``axes`` (+inf, or the dtype's greatest value, where they
    are empty, as in JAX)."""
    axes = tuple(axes)
    return anp.min(operand, axis=axes, initial=_empty_identity(operand, axes, "min"))


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
                  (_lax_mul, anp.prod),
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
    pads = padding_pairs(padding, dilated_shape, window, strides, wdil)
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
    if not callable(fn):
        raise TypeError(f"lax.associative_scan: fn must be a callable, got {type(fn).__name__}")
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
    """Sort along ``dimension``; a tuple of operands is sorted by its first ``num_keys``
    operands, lexicographically (the first key first; ties keep their order), and the
    other operands follow the same permutation.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.sort((np.array([1, 0, 1, 0]), np.array([2, 9, 1, 3]), np.arange(4.0)),
    ...             num_keys=2)
    (array([0, 0, 1, 1]), array([3, 9, 1, 2]), array([3., 1., 2., 0.]))
    """
    if isinstance(operand, (tuple, list)):
        num_keys = int(num_keys)
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"lax.sort: num_keys={num_keys} must be between 1 and the "
                             f"number of operands, {len(operand)}")
        keys = [anp.asarray(k) for k in operand[:num_keys]]
        if num_keys == 1:
            idx = anp.argsort(keys[0], axis=dimension, kind="stable")
        else:            # numpy's lexsort takes the primary key last
            idx = anp.lexsort(tuple(reversed(keys)), axis=dimension)
        return tuple(anp.take_along_axis(anp.asarray(o), idx, axis=dimension) for o in operand)
    return anp.sort(operand, axis=dimension, kind="stable")


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """``(sorted keys, values in the same order)``; differentiable in ``values``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.sort_key_val(np.array([3, 1, 2]), np.array([30.0, 10.0, 20.0]))
    (array([1, 2, 3]), array([10., 20., 30.]))
    """
    return sort((keys, values), dimension=dimension)


def top_k(operand, k, *, axis=-1, is_stable=True):
    """The ``k`` largest entries along ``axis`` (the last by default), in decreasing order,
    and their indices (ties: the lower index first, as in JAX); differentiable in the values.
    ``is_stable`` is accepted for JAX's signature (the order of ties is always stable).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.top_k(np.array([[1.0, 5.0], [4.0, 2.0]]), 1, axis=0)
    (array([[4., 5.]]), array([[1, 0]]))
    """
    x = anp.asarray(operand)
    k = int(k)
    nd = anp.ndim(x)
    if nd == 0:
        raise ShapeError("top_k: the operand must have at least one dimension")
    ax = int(axis)
    if not -nd <= ax < nd:
        raise ShapeError(f"top_k: axis {axis} out of range for an operand of rank {nd}")
    ax %= nd
    if ax != nd - 1:
        vals, idx = top_k(anp.moveaxis(x, ax, -1), k)
        return anp.moveaxis(vals, -1, ax), anp.moveaxis(idx, -1, ax)
    n = anp.shape(x)[-1]
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k={k} must be in [0, {n}]")
    # a stable sort of the negation keeps equal values in index order
    order = anp.argsort(anp.negative(x) if np.dtype(anp.result_type(x)).kind != "b"
                        else anp.logical_not(x), axis=-1, kind="stable")
    idx = anp.astype(slice_in_dim(order, 0, k, 1, anp.ndim(x) - 1), np.int64)
    return anp.take_along_axis(x, idx, axis=-1), idx


def _approx_k(operand, k, reduction_dimension, largest):
    x = anp.asarray(operand)
    ax = reduction_dimension % anp.ndim(x)
    xm = anp.moveaxis(x, ax, -1)
    vals, idx = top_k(xm if largest else anp.negative(xm), k)
    if not largest:
        vals = anp.negative(vals)
    return anp.moveaxis(vals, -1, ax), anp.moveaxis(idx, -1, ax)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` largest values along ``reduction_dimension`` and their indices. Exact
    here (recall 1; JAX's TPU algorithm trades recall for speed).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.approx_max_k(np.array([3.0, 1.0, 4.0, 1.5]), 2)
    (array([4., 3.]), array([2, 0]))
    """
    return _approx_k(operand, k, reduction_dimension, is_max_k)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` smallest values along ``reduction_dimension`` and their indices (exact).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.approx_min_k(np.array([3.0, 1.0, 4.0, 1.5]), 2)
    (array([1. , 1.5]), array([1, 3]))
    """
    return _approx_k(operand, k, reduction_dimension, False)
