"""The rest of ``jax.lax``'s operators (issue 36), each a composition of existing
functions, so every transform and ``jit`` handle it without new rules: special functions
under their lax names, integer bit operations, ``select_n``, ``split``, ``gather`` and the
``scatter`` family (general dimension numbers, built on integer-array indexing and
``.at[]``), ``conv_transpose`` and the patch/local convolutions, ``ragged_dot``, ``fft``,
``reduce_precision``, ``rng_bit_generator`` and the small structural helpers.

>>> import numpy as np, autodiff as ad
>>> ad.lax.select_n(np.array([0, 2, 1]), np.zeros(3), np.ones(3), np.full(3, 2.0))
array([0., 2., 1.])
>>> ad.lax.population_count(np.array([0, 7, 255], np.uint8))
array([0, 3, 8], dtype=uint8)
"""
import builtins
import collections
import enum

import numpy as np

from . import numpy as anp
from .custom_derivatives import custom_jvp
from .errors import ShapeError
from .tree_util import tree_map

__all__ = [
    # elementwise and special functions, JAX's names
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cosh", "sinh", "exp2",
    "reciprocal", "nextafter", "erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma",
    "zeta", "bessel_i0e", "bessel_i1e", "igamma", "igammac", "igamma_grad_a",
    "random_gamma_grad", "betainc", "real", "imag", "conj", "complex",
    # bits
    "population_count", "clz", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "reduce_xor", "bitcast_convert_type", "reduce_precision",
    # structure, selection, indexing
    "select_n", "split", "broadcast_shapes", "broadcast_to_rank", "batch_matmul", "empty",
    "dynamic_update_index_in_dim", "index_take", "optimization_barrier", "composite",
    "platform_dependent", "with_sharding_constraint", "approx_max_k", "approx_min_k",
    "GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "gather",
    "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
    "scatter_apply",
    # convolutions, ragged products, FFT, bits of randomness
    "ConvDimensionNumbers", "conv_dimension_numbers", "conv_transpose",
    "conv_general_dilated_patches", "conv_general_dilated_local", "ragged_dot", "FftType",
    "fft", "RandomAlgorithm", "rng_bit_generator",
]


def _special(name):
    from .scipy import special
    return getattr(special, name)


acos, acosh, asin, asinh = anp.arccos, anp.arccosh, anp.arcsin, anp.arcsinh
atan, atan2, atanh = anp.arctan, anp.arctan2, anp.arctanh
cosh, sinh, exp2, reciprocal, nextafter = anp.cosh, anp.sinh, anp.exp2, anp.reciprocal, anp.nextafter
real, imag, conj = anp.real, anp.imag, anp.conj


def erf(x):
    """The error function (``scipy.special.erf``)."""
    return _special("erf")(x)


def erfc(x):
    """``1 - erf(x)``, accurate for large ``x``."""
    return _special("erfc")(x)


def erf_inv(x):
    """The inverse error function (``scipy.special.erfinv``).

    >>> import numpy as np, autodiff as ad
    >>> float(ad.lax.erf(ad.lax.erf_inv(np.float64(0.3))))
    0.3
    """
    return _special("erfinv")(x)


def lgamma(x):
    """``log |Γ(x)|`` (``scipy.special.gammaln``)."""
    return _special("gammaln")(x)


def digamma(x):
    """ψ(x) = d/dx log Γ(x)."""
    return _special("digamma")(x)


def polygamma(m, x):
    """ψ⁽ᵐ⁾(x), the m-th derivative of the digamma function; ``m`` may be an array of
    orders (concrete values: each distinct order is computed once).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.polygamma(np.array([1.0, 2.0]), np.array([1.0, 1.0])).round(6)
    array([ 1.644934, -2.404114])
    """
    pg = _special("polygamma")
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
    return _special("zeta")(x, q)


def bessel_i0e(x):
    """``exp(-|x|) I₀(x)``."""
    return _special("i0e")(x)


def bessel_i1e(x):
    """``exp(-|x|) I₁(x)``."""
    return _special("i1e")(x)


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x) (``gammainc``)."""
    return _special("gammainc")(a, x)


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 − P(a, x)."""
    return _special("gammaincc")(a, x)


def igamma_grad_a(a, x):
    """∂P(a, x)/∂a, by the series of P (terms times log x − ψ(a + n + 1)).

    >>> import numpy as np, autodiff as ad
    >>> round(float(ad.lax.igamma_grad_a(np.float64(2.0), np.float64(1.5))), 6)
    -0.313489
    """
    from .random import _dgamma_cdf_da
    a, x = anp.broadcast_arrays(anp.asarray(a, dtype=np.float64), anp.asarray(x, dtype=np.float64))
    return _dgamma_cdf_da(a, x)


def random_gamma_grad(a, x):
    """The derivative of a Gamma(a) sample ``x`` with respect to ``a`` at fixed CDF value
    (implicit reparameterization): ``−(∂P/∂a)(a, x) / pdf(x; a)``.

    >>> import numpy as np, autodiff as ad
    >>> round(float(ad.lax.random_gamma_grad(np.float64(2.0), np.float64(1.5))), 6)
    0.936639
    """
    a, x = anp.broadcast_arrays(anp.asarray(a, dtype=np.float64), anp.asarray(x, dtype=np.float64))
    logpdf = anp.subtract(anp.subtract(anp.multiply(anp.subtract(a, 1.0), anp.log(x)), x),
                          lgamma(a))
    return anp.negative(anp.divide(igamma_grad_a(a, x), anp.exp(logpdf)))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return _special("betainc")(a, b, x)


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
# bits
# ----------------------------------------------------------------------------

def _int_dtype(x, who):
    dt = np.dtype(anp.result_type(x))
    if dt.kind not in "iu":
        raise TypeError(f"lax.{who}: needs an integer array, got {dt}")
    return dt


def population_count(x):
    """The number of set bits of each integer, in ``x``'s dtype (negative signed values
    count their two's complement bits, as in JAX).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.population_count(np.array([-1, 5], np.int32))
    array([32,  2], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "population_count")
    if dt.kind == "i":
        x = anp.astype(x, np.dtype(f"u{dt.itemsize}"))      # two's complement bits
    return anp.astype(anp.bitwise_count(x), dt)


def clz(x):
    """Leading zero bits of each integer in its dtype's width (0 for negative values).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.clz(np.array([0, 1, 255, -3], np.int32))
    array([32, 31, 24,  0], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "clz")
    u = anp.astype(x, np.dtype(f"u{dt.itemsize}"))
    shift = 1
    while shift < 8 * dt.itemsize:                 # smear the top bit down
        u = anp.bitwise_or(u, anp.right_shift(u, u.dtype.type(shift) if hasattr(u, "dtype") else shift))
        shift *= 2
    return anp.astype(anp.subtract(np.int64(8 * dt.itemsize),
                                   anp.astype(anp.bitwise_count(u), np.int64)), dt)


def _shift_amount(y, dt):
    y = anp.asarray(y)
    return anp.astype(y, dt), anp.logical_or(anp.less(y, 0), anp.greater_equal(y, 8 * dt.itemsize))


def shift_left(x, y):
    """``x << y``; a shift by the width or more gives 0 (JAX's, where C leaves it undefined).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.shift_left(np.array([1, 3], np.int32), np.array([4, 40], np.int32))
    array([16,  0], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "shift_left")
    s, out_of_range = _shift_amount(y, dt)
    safe = anp.where(out_of_range, dt.type(0), s)
    return anp.where(out_of_range, dt.type(0), anp.left_shift(x, safe))


def shift_right_arithmetic(x, y):
    """``x >> y`` keeping the sign (a shift by the width or more gives 0 or −1).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.shift_right_arithmetic(np.array([-16, 16], np.int32), np.array([2, 40], np.int32))
    array([-4,  0], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "shift_right_arithmetic")
    s, out_of_range = _shift_amount(y, dt)
    if dt.kind == "u":
        return shift_right_logical(x, y)
    full = anp.right_shift(x, dt.type(8 * dt.itemsize - 1))
    return anp.where(out_of_range, full, anp.right_shift(x, anp.where(out_of_range, dt.type(0), s)))


def shift_right_logical(x, y):
    """``x >> y`` filling with zero bits (on signed integers: their two's complement bits).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.shift_right_logical(np.array([-16], np.int32), np.array([28], np.int32))
    array([15], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "shift_right_logical")
    udt = np.dtype(f"u{dt.itemsize}")
    s, out_of_range = _shift_amount(y, dt)
    u = anp.right_shift(anp.astype(x, udt), anp.astype(anp.where(out_of_range, dt.type(0), s), udt))
    return anp.where(out_of_range, dt.type(0), anp.astype(u, dt))


def reduce_xor(operand, axes):
    """Bitwise XOR (for booleans: parity) over ``axes``, as a balanced tree of ``xor``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.reduce_xor(np.array([[1, 2, 4], [3, 3, 0]]), (1,))
    array([7, 0])
    """
    x = anp.asarray(operand)
    for ax in sorted((a % anp.ndim(x) for a in axes), reverse=True):
        if anp.shape(x)[ax] == 0:                 # xor of nothing: 0
            x = anp.zeros(tuple(s for i, s in enumerate(anp.shape(x)) if i != ax), anp.result_type(x))
            continue
        while anp.shape(x)[ax] > 1:
            n = anp.shape(x)[ax]
            half = n // 2
            y = anp.bitwise_xor(anp.take(x, np.arange(half), axis=ax),
                                anp.take(x, np.arange(half, 2 * half), axis=ax))
            if n % 2:
                y = anp.concatenate([y, anp.take(x, np.arange(n - 1, n), axis=ax)], axis=ax)
            x = y
        x = anp.squeeze(x, axis=ax)
    return x


def bitcast_convert_type(operand, new_dtype):
    """The same bits read as ``new_dtype`` (``ndarray.view``): equal widths keep the
    shape; a narrower type adds a trailing axis, a wider one consumes it (JAX's rules).
    Runs on the host (``pure_callback``), so it works under ``jit``; not differentiable.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.bitcast_convert_type(np.float32(1.0), np.int32)
    np.int32(1065353216)
    """
    from .callback import pure_callback
    from .shapes import ShapeDtypeStruct
    x = anp.asarray(operand)
    old, new = np.dtype(anp.result_type(x)), np.dtype(new_dtype)
    shape = tuple(anp.shape(x))
    if new.itemsize == old.itemsize:
        out_shape = shape
    elif new.itemsize < old.itemsize:
        out_shape = shape + (old.itemsize // new.itemsize,)
    else:
        if not shape or shape[-1] * old.itemsize != new.itemsize:
            raise ShapeError(f"bitcast_convert_type: converting {old} to the wider {new} needs a "
                             f"last axis of size {new.itemsize // old.itemsize}, got shape {shape}")
        out_shape = shape[:-1]

    def view(a):
        return np.ascontiguousarray(a).view(new).reshape(out_shape)
    return pure_callback(view, ShapeDtypeStruct(out_shape, new), x)


def _round_to_format(x, exponent_bits, mantissa_bits):
    # round to nearest even on `mantissa_bits` bits: x = m·2^e with 0.5 ≤ |m| < 1
    emax = 2 ** (exponent_bits - 1) - 1
    m, e = anp.frexp(x)
    scale = float(2 ** (mantissa_bits + 1))
    normal = anp.ldexp(anp.divide(anp.round(anp.multiply(m, scale)), scale), e)
    # below the smallest normal 2^(1-emax) (after rounding): ±0, as XLA (no subnormals)
    y = anp.where(anp.less(anp.abs(normal), 2.0 ** (1 - emax)), anp.multiply(x, 0.0), normal)
    biggest = (2.0 - 2.0 ** -mantissa_bits) * 2.0 ** emax
    y = anp.where(anp.greater(anp.abs(y), biggest), anp.multiply(anp.sign(x), np.inf), y)
    return anp.where(anp.isfinite(x), y, x)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """Round floats to a format with ``exponent_bits`` and ``mantissa_bits`` (round to
    nearest even, overflow to ±inf, values below the smallest normal to ±0, as XLA's) in
    the operand's dtype: e.g. (8, 7)
    for bfloat16, (5, 10) for float16. Its derivative rounds the tangent the same way, as in
    JAX.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.reduce_precision(np.array([1.0 + 2.0 ** -11, 70000.0]), 5, 10)
    array([ 1., inf])
    """
    eb, mb = int(exponent_bits), int(mantissa_bits)

    @custom_jvp
    def rp(x):
        return _round_to_format(x, eb, mb)

    @rp.defjvp
    def rp_jvp(primals, tangents):
        return rp(primals[0]), rp(tangents[0])
    x = anp.asarray(operand)
    return anp.astype(rp(x), anp.result_type(x))


# ----------------------------------------------------------------------------
# structure and selection
# ----------------------------------------------------------------------------

def select_n(which, *cases):
    """``cases[which]`` elementwise: ``which`` is boolean (two cases: False picks
    ``cases[0]``) or an integer in ``[0, len(cases))``. Differentiable in the cases.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.select_n(np.array([True, False]), np.zeros(2), np.ones(2))
    array([1., 0.])
    """
    if not cases:
        raise ValueError("select_n: needs at least one case")
    which = anp.asarray(which)
    if np.dtype(anp.result_type(which)).kind == "b":
        if len(cases) > 2:
            raise ValueError(f"select_n: a boolean selector picks between 2 cases, got {len(cases)}")
        return cases[0] if len(cases) == 1 else anp.where(which, cases[1], cases[0])
    out = cases[0]
    for i, c in enumerate(cases[1:], 1):
        out = anp.where(anp.equal(which, i), c, out)
    return out


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into consecutive pieces of the given ``sizes``.

    >>> import numpy as np, autodiff as ad
    >>> [p.tolist() for p in ad.lax.split(np.arange(5.0), (2, 3))]
    [[0.0, 1.0], [2.0, 3.0, 4.0]]
    """
    x = anp.asarray(operand)
    sizes = [int(s) for s in sizes]
    if sum(sizes) != anp.shape(x)[axis]:
        raise ShapeError(f"lax.split: sizes {tuple(sizes)} sum to {sum(sizes)}, but axis {axis} "
                         f"has size {anp.shape(x)[axis]}")
    return anp.split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis)


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (numpy's rules).

    >>> import autodiff as ad
    >>> ad.lax.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def broadcast_to_rank(x, rank):
    """``x`` with leading size-1 axes up to ``rank`` dimensions.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.broadcast_to_rank(np.ones(3), 3).shape
    (1, 1, 3)
    """
    x = anp.asarray(x)
    nd = anp.ndim(x)
    return x if nd >= rank else anp.reshape(x, (1,) * (rank - nd) + tuple(anp.shape(x)))


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over equal leading batch dimensions: ``lhs[..., m, k] @ rhs[..., k, n]``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.batch_matmul(np.ones((2, 1, 3)), np.ones((2, 3, 1))).ravel()
    array([3., 3.])
    """
    from ._lax_more import check_precision
    check_precision(precision)
    lhs, rhs = anp.asarray(lhs), anp.asarray(rhs)
    if anp.ndim(lhs) < 2 or anp.shape(lhs)[:-2] != anp.shape(rhs)[:-2] or anp.ndim(lhs) != anp.ndim(rhs):
        raise ShapeError(f"batch_matmul: needs equal batch dimensions, got shapes "
                         f"{anp.shape(lhs)} and {anp.shape(rhs)}")
    return anp.matmul(lhs, rhs)


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose values are unspecified (zeros here, as
    JAX gives on the CPU).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.empty(3, np.float32)
    array([0., 0., 0.], dtype=float32)
    """
    return anp.zeros(shape, dtype=dtype)


def dynamic_update_index_in_dim(operand, update, index, axis):
    """``operand`` with ``update`` written at position ``index`` of ``axis`` (``update``
    with or without that axis of size 1).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.dynamic_update_index_in_dim(np.zeros((3, 2)), np.ones(2), 1, 0)
    array([[0., 0.],
           [1., 1.],
           [0., 0.]])
    """
    from ._lax_more import dynamic_update_slice_in_dim
    x, u = anp.asarray(operand), anp.asarray(update)
    axis = axis % anp.ndim(x)
    if anp.ndim(u) == anp.ndim(x) - 1:
        u = anp.expand_dims(u, axis)
    return dynamic_update_slice_in_dim(x, u, index, axis)


def index_take(src, idxs, axes):
    """Integer-array indexing along ``axes``: the result's first axis runs over the index
    arrays (one per axis in ``axes``), the remaining axes of ``src`` follow in order.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.index_take(np.arange(12.0).reshape(3, 4), (np.array([0, 2]),), (1,))
    array([[ 0.,  4.,  8.],
           [ 2.,  6., 10.]])
    """
    x = anp.asarray(src)
    axes = [a % anp.ndim(x) for a in axes]
    rest = [d for d in range(anp.ndim(x)) if d not in axes]
    x = anp.transpose(x, tuple(axes) + tuple(rest))
    return x[tuple(anp.asarray(i) for i in idxs)]


def optimization_barrier(operand):
    """The operand (a pytree) unchanged: XLA's barrier against moving computations across
    it has no counterpart in this compiler, which keeps program order.

    >>> import autodiff as ad
    >>> ad.lax.optimization_barrier((1.0, [2.0]))
    (1.0, [2.0])
    """
    return operand


def composite(decomposition, name, version=0):
    """Mark a function as a named composite operation (JAX lowers it to a StableHLO
    composite); here the decomposition is what runs, under every transform.

    >>> import numpy as np, autodiff as ad
    >>> my_tanh = ad.lax.composite(lambda x: 2.0 / (1.0 + np.exp(-2.0 * x)) - 1.0, name="my.tanh")
    >>> round(float(my_tanh(0.5)), 6)
    0.462117
    """
    import functools

    @functools.wraps(decomposition)
    def composite_fn(*args, **kwargs):
        return decomposition(*args, **kwargs)
    composite_fn.composite_name, composite_fn.composite_version = name, version
    return composite_fn


def platform_dependent(*args, default=None, **per_platform):
    """Call the branch for this platform (``cpu``; ``cuda`` under the CUDA backend is not
    distinguished at trace time, so ``cpu``) or ``default`` with ``*args``.

    >>> import autodiff as ad
    >>> ad.lax.platform_dependent(2.0, cpu=lambda x: x * 10, default=lambda x: x)
    20.0
    """
    fn = per_platform.get("cpu", default)
    if fn is None:
        raise ValueError(f"platform_dependent: no branch for 'cpu' and no default "
                         f"(got branches for {sorted(per_platform)})")
    return fn(*args)


def with_sharding_constraint(x, shardings):
    """``x`` unchanged: every array lives on one device here, so any sharding holds.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.with_sharding_constraint(np.ones(2), None)
    array([1., 1.])
    """
    return x


def _approx_k(operand, k, reduction_dimension, largest):
    from ._lax_more import top_k
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


# ----------------------------------------------------------------------------
# gather and scatter with XLA's dimension numbers
# ----------------------------------------------------------------------------

class GatherDimensionNumbers(collections.namedtuple(
        "GatherDimensionNumbers", ["offset_dims", "collapsed_slice_dims", "start_index_map",
                                   "operand_batching_dims", "start_indices_batching_dims"],
        defaults=((), ()))):
    """XLA's gather dimension numbers (JAX's ``lax.GatherDimensionNumbers``)."""
    __slots__ = ()


class ScatterDimensionNumbers(collections.namedtuple(
        "ScatterDimensionNumbers", ["update_window_dims", "inserted_window_dims",
                                    "scatter_dims_to_operand_dims", "operand_batching_dims",
                                    "scatter_indices_batching_dims"], defaults=((), ()))):
    """XLA's scatter dimension numbers (JAX's ``lax.ScatterDimensionNumbers``)."""
    __slots__ = ()


class GatherScatterMode(enum.Enum):
    """What out-of-bounds indices do: ``CLIP`` clamps the slice into the operand,
    ``FILL_OR_DROP`` fills gathers with ``fill_value`` and drops scatter updates,
    ``PROMISE_IN_BOUNDS`` (clamps here)."""
    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"
    ONE_HOT = "one_hot"

    @staticmethod
    def from_any(s):
        """The :class:`GatherScatterMode` that ``s`` names: a mode itself, ``None``
        (``FILL_OR_DROP``), an enum with the same ``name``, or one of the strings
        ``"clip"``, ``"fill"``, ``"drop"``, ``"promise_in_bounds"``."""
        if isinstance(s, GatherScatterMode):
            return s
        if s is None:
            return GatherScatterMode.FILL_OR_DROP
        if hasattr(s, "name"):
            return GatherScatterMode[s.name]
        return {"clip": GatherScatterMode.CLIP, "fill": GatherScatterMode.FILL_OR_DROP,
                "drop": GatherScatterMode.FILL_OR_DROP,
                "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}[s]


def _window_index(operand_shape, indices, index_map, window_sizes, window_operand_dims,
                  op_batching, idx_batching, mode):
    """Per operand dimension, integer index arrays over (batch dims of ``indices``) +
    (window dims), and a mask of the in-bounds positions (for FILL_OR_DROP).

    Batch dims are the dims of ``indices`` except its last (the index vector).
    ``window_operand_dims``: the operand dims that have a window axis in the result, in
    order; the others (collapsed / inserted and batching dims) have size-1 windows."""
    idx = anp.asarray(indices)
    bshape = tuple(anp.shape(idx))[:-1]
    nb = len(bshape)
    wshape = tuple(window_sizes[d] for d in window_operand_dims)
    nw = len(wshape)
    full = bshape + wshape
    index_arrays, ok = [], None
    for d, size in enumerate(operand_shape):
        if d in op_batching:
            j = idx_batching[op_batching.index(d)]
            pos = anp.reshape(anp.arange(bshape[j]), tuple(bshape[j] if i == j else 1
                                                            for i in range(nb)) + (1,) * nw)
            index_arrays.append(anp.broadcast_to(pos, full))
            continue
        if d in index_map:
            start = anp.astype(idx[..., index_map.index(d)], np.int64)
        else:
            start = anp.zeros(bshape, np.int64)
        w = window_sizes[d]
        if mode is GatherScatterMode.FILL_OR_DROP:
            inb = anp.logical_and(anp.greater_equal(start, 0), anp.less_equal(start, size - w))
            ok = inb if ok is None else anp.logical_and(ok, inb)
        start = anp.clip(start, 0, builtins.max(size - w, 0))
        start = anp.reshape(start, bshape + (1,) * nw)
        if d in window_operand_dims:
            k = window_operand_dims.index(d)
            offs = anp.reshape(anp.arange(w), (1,) * nb + tuple(w if i == k else 1 for i in range(nw)))
            index_arrays.append(anp.broadcast_to(anp.add(start, offs), full))
        else:
            index_arrays.append(anp.broadcast_to(start, full))
    return tuple(index_arrays), ok, nb, nw


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, indices_are_sorted=False,
           unique_indices=False, mode=None, fill_value=None):
    """XLA's gather: for each index vector (the last axis of ``start_indices``) a slice of
    ``slice_sizes`` starting there; ``collapsed_slice_dims`` (size 1) are dropped, the
    remaining slice axes go to ``offset_dims`` of the result, the batch axes fill the rest.
    ``mode``: clip (default for JAX's ``PROMISE_IN_BOUNDS`` too) or ``"fill"``
    (out-of-bounds slices give ``fill_value``, NaN for floats). Built on integer-array
    indexing, so it is differentiable, vmaps and jits.

    >>> import numpy as np, autodiff as ad
    >>> dn = ad.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
    ...                                    start_index_map=(0,))
    >>> ad.lax.gather(np.arange(12.0).reshape(4, 3), np.array([[2], [0]]), dn, (1, 3))
    array([[6., 7., 8.],
           [0., 1., 2.]])
    """
    x = anp.asarray(operand)
    dn = dimension_numbers
    mode = GatherScatterMode.from_any(mode) if mode is not None else GatherScatterMode.CLIP
    shape = tuple(anp.shape(x))
    op_b, idx_b = tuple(dn.operand_batching_dims), tuple(dn.start_indices_batching_dims)
    window_dims = [d for d in range(len(shape)) if d not in dn.collapsed_slice_dims and d not in op_b]
    if len(window_dims) != len(dn.offset_dims):
        raise ShapeError(f"gather: {len(dn.offset_dims)} offset_dims for {len(window_dims)} "
                         f"uncollapsed slice dimensions")
    ia, ok, nb, nw = _window_index(shape, start_indices, tuple(dn.start_index_map),
                                   tuple(slice_sizes), window_dims, op_b, idx_b, mode)
    out = x[ia]                                     # batch dims + window dims
    if ok is not None:
        fv = fill_value if fill_value is not None else (
            np.nan if np.dtype(anp.result_type(x)).kind in "fc" else 0)
        out = anp.where(anp.reshape(ok, tuple(anp.shape(ok)) + (1,) * nw), out,
                        anp.asarray(fv, dtype=anp.result_type(x)))
    # move the window axes to offset_dims
    rank = nb + nw
    batch_pos = [i for i in range(rank) if i not in dn.offset_dims]
    perm = [0] * rank
    for k, pos in enumerate(dn.offset_dims):
        perm[pos] = nb + k
    for k, pos in enumerate(batch_pos):
        perm[pos] = k
    return anp.transpose(out, tuple(perm))


def _scatter(kind, operand, scatter_indices, updates, dimension_numbers, mode, fn=None):
    x = anp.asarray(operand)
    dn = dimension_numbers
    mode = GatherScatterMode.from_any(mode)
    shape = tuple(anp.shape(x))
    u = anp.asarray(updates)
    op_b, idx_b = tuple(dn.operand_batching_dims), tuple(dn.scatter_indices_batching_dims)
    window_dims = [d for d in range(len(shape)) if d not in dn.inserted_window_dims and d not in op_b]
    uw = tuple(dn.update_window_dims)
    if len(window_dims) != len(uw):
        raise ShapeError(f"scatter: {len(uw)} update_window_dims for {len(window_dims)} "
                         f"operand window dimensions")
    ushape = tuple(anp.shape(u))
    sizes = [1] * len(shape)
    for d, ud in zip(window_dims, uw):
        sizes[d] = ushape[ud]
    # updates with the window axes last, matching the index arrays' layout
    ubatch = [i for i in range(len(ushape)) if i not in uw]
    u = anp.transpose(u, tuple(ubatch) + uw)
    ia, ok, nb, nw = _window_index(shape, scatter_indices, tuple(dn.scatter_dims_to_operand_dims),
                                   tuple(sizes), window_dims, op_b, idx_b, mode)
    free = [d for d in range(len(shape)) if d not in op_b]
    if ok is not None and free:
        # dropped updates land in a scratch block past the end of one dimension, cut off
        # after: no write of theirs can touch the operand, whatever the order of writes
        d0 = free[0]
        okw = anp.broadcast_to(anp.reshape(ok, tuple(anp.shape(ok)) + (1,) * nw), anp.shape(ia[d0]))
        lo = anp.astype(ia[d0], np.int64)
        ia = ia[:d0] + (anp.where(okw, lo, anp.add(lo, shape[d0])),) + ia[d0 + 1:]
        x = anp.concatenate([x, x], axis=d0)             # the scratch copy
    ref = anp.at(x)[ia]
    if kind == "apply":
        out = ref.set(fn(x[ia]))
    else:
        out = getattr(ref, kind)(u)
    if ok is not None and free:
        out = anp.take(out, np.arange(shape[free[0]]), axis=free[0])
    return out


def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
    """XLA's scatter: ``operand`` with the windows of ``updates`` written at the index
    vectors (the last axis of ``scatter_indices``); the dimension numbers mirror
    :func:`gather`'s. ``mode="fill"`` (JAX's default) drops out-of-bounds updates,
    ``"clip"`` clamps them. Differentiable (through ``.at[].set``).

    >>> import numpy as np, autodiff as ad
    >>> dn = ad.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                     scatter_dims_to_operand_dims=(0,))
    >>> ad.lax.scatter(np.zeros(4), np.array([[1], [3]]), np.array([5.0, 6.0]), dn)
    array([0., 5., 0., 6.])
    """
    return _scatter("set", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` adding into the operand (repeated indices accumulate).

    >>> import numpy as np, autodiff as ad
    >>> dn = ad.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> ad.lax.scatter_add(np.zeros(3), np.array([[1], [1]]), np.array([5.0, 6.0]), dn)
    array([ 0., 11.,  0.])
    """
    return _scatter("add", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` subtracting from the operand."""
    return _scatter("add", operand, scatter_indices, anp.negative(updates), dimension_numbers, mode)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` multiplying into the operand."""
    return _scatter("multiply", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` keeping the minimum."""
    return _scatter("min", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` keeping the maximum."""
    return _scatter("max", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """``func`` applied to the elements :func:`scatter` would write with updates of
    ``update_shape`` (JAX's argument: the whole updates' shape), the rest unchanged.

    >>> import numpy as np, autodiff as ad
    >>> dn = ad.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> ad.lax.scatter_apply(np.arange(4.0), np.array([[1], [3]]), lambda v: v * 10, dn,
    ...                      update_shape=(2,))
    array([ 0., 10.,  2., 30.])
    """
    dummy = anp.zeros(tuple(update_shape), dtype=anp.result_type(operand))
    return _scatter("apply", operand, scatter_indices, dummy, dimension_numbers, mode, fn=func)


# ----------------------------------------------------------------------------
# convolutions
# ----------------------------------------------------------------------------

class ConvDimensionNumbers(collections.namedtuple("ConvDimensionNumbers",
                                                  ["lhs_spec", "rhs_spec", "out_spec"])):
    """Layouts of a convolution as dimension-index tuples: ``lhs_spec = (batch, feature,
    spatial...)``, ``rhs_spec = (out feature, in feature, spatial...)``, ``out_spec`` like
    ``lhs_spec`` (JAX's ``lax.ConvDimensionNumbers``)."""
    __slots__ = ()


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """:class:`ConvDimensionNumbers` from ``None`` (NC.../OI.../NC...), strings such as
    ``("NHWC", "HWIO", "NHWC")`` or index tuples.

    >>> import autodiff as ad
    >>> ad.lax.conv_dimension_numbers((1, 5, 5, 3), (2, 2, 3, 8), ("NHWC", "HWIO", "NHWC"))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    from ._lax_more import _conv_specs
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise ShapeError(f"conv_dimension_numbers: lhs and rhs need the same rank, got "
                         f"{len(lhs_shape)} and {len(rhs_shape)}")
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    return ConvDimensionNumbers(*_conv_specs(dimension_numbers, nd))


def _conv_transpose_pads(k, s, padding):
    # the padding of the dilated-input convolution that is the gradient of a strided one
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + builtins.max(k - s, 0)
        pad_a = k - 1
    else:
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or pairs, got {padding!r}")
    return pad_a, pad_len - pad_a


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """Transposed ("deconvolution") convolution, as JAX's: a convolution of the input
    dilated by ``strides``, padded so that ``'SAME'`` multiplies spatial sizes by the
    strides; ``transpose_kernel=True`` flips the kernel and swaps its feature axes (the
    exact gradient of ``conv_general_dilated``). Layouts default to N C spatial... /
    O I spatial... / N C spatial..., as ``conv_general_dilated``'s.

    >>> import numpy as np, autodiff as ad
    >>> x = np.ones((1, 1, 3)); w = np.ones((1, 1, 2))
    >>> ad.lax.conv_transpose(x, w, (2,), "SAME").shape
    (1, 1, 6)
    """
    from ._lax_more import conv_general_dilated
    x, w = anp.asarray(lhs), anp.asarray(rhs)
    nd = anp.ndim(x)
    ns = nd - 2
    dn = conv_dimension_numbers(anp.shape(x), anp.shape(w), dimension_numbers)
    kshape = [anp.shape(w)[d] for d in dn.rhs_spec[2:]]
    rdil = tuple(rhs_dilation or (1,) * ns)
    kd = [(k - 1) * d + 1 for k, d in zip(kshape, rdil)]
    if isinstance(padding, str):
        pads = [_conv_transpose_pads(k, s, padding.upper()) for k, s in zip(kd, strides)]
    else:
        pads = [tuple(p) for p in padding]
    if transpose_kernel:
        w = anp.flip(w, axis=tuple(dn.rhs_spec[2:]))
        spec = list(dn.rhs_spec)
        spec[0], spec[1] = spec[1], spec[0]
        dn = ConvDimensionNumbers(dn.lhs_spec, tuple(spec), dn.out_spec)
    return conv_general_dilated(x, w, (1,) * ns, pads, lhs_dilation=tuple(strides),
                                rhs_dilation=rdil, dimension_numbers=dn, precision=precision)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a kernel of spatial ``filter_shape`` would see,
    as features: output feature ``c · prod(filter_shape) + p`` is input feature ``c`` at
    filter position ``p`` (row-major), as JAX's. A convolution with a one-hot kernel, so
    it differentiates and jits.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.conv_general_dilated_patches(np.arange(4.0).reshape(1, 1, 4), (2,), (1,), "VALID")
    array([[[0., 1., 2.],
            [1., 2., 3.]]])
    """
    from ._lax_more import conv_general_dilated
    x = anp.asarray(lhs)
    nd = anp.ndim(x)
    dn = conv_dimension_numbers(anp.shape(x), anp.shape(x), dimension_numbers)
    C = anp.shape(x)[dn.lhs_spec[1]]
    fs = tuple(int(f) for f in filter_shape)
    P = int(np.prod(fs))
    eye = np.eye(C * P, dtype=np.dtype(anp.result_type(x)) if np.dtype(anp.result_type(x)).kind in "fc"
                 else np.float64)
    w = eye.reshape((C * P, C) + fs)                 # O I spatial..., one-hot
    # the kernel is built in O I spatial order; read it with the rhs spec of this layout
    rhs_spec = tuple(range(nd))
    odn = ConvDimensionNumbers(dn.lhs_spec, rhs_spec, dn.out_spec)
    return conv_general_dilated(x, w, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, dimension_numbers=odn,
                                precision=precision)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """Locally connected ("unshared") convolution: every output position has its own
    kernel. ``rhs`` has, in ``dimension_numbers``' rhs layout, the output features, the
    input features times ``prod(filter_shape)`` (c-major, as the patches), and the output's
    spatial sizes: ``out[n, o, s] = Σ_k patches[n, k, s] · rhs[o, k, s]``.

    >>> import numpy as np, autodiff as ad
    >>> x = np.arange(4.0).reshape(1, 1, 4)
    >>> w = np.ones((1, 2, 3))                        # O, I·2, output width 3
    >>> ad.lax.conv_general_dilated_local(x, w, (1,), "VALID", (2,))
    array([[[1., 3., 5.]]])
    """
    x, w = anp.asarray(lhs), anp.asarray(rhs)
    dn = conv_dimension_numbers(anp.shape(x), anp.shape(w), dimension_numbers)
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation,
                                           ConvDimensionNumbers(dn.lhs_spec, dn.rhs_spec, dn.lhs_spec),
                                           precision)
    p = anp.transpose(patches, dn.lhs_spec)          # N K S...
    k = anp.transpose(w, dn.rhs_spec)                # O K S...
    out = anp.sum(anp.multiply(anp.expand_dims(p, 1), anp.expand_dims(k, 0)), axis=2)  # N O S...
    return anp.transpose(out, tuple(np.argsort(dn.out_spec)))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None):
    """Grouped matrix product (mixture-of-experts layers): rows of ``lhs[m, k]`` come in
    consecutive groups of ``group_sizes[g]`` rows, and group ``g`` is multiplied by
    ``rhs[g, k, n]``; rows past the groups give zeros. A masked ``einsum``, so it
    differentiates in ``lhs`` and ``rhs``.

    >>> import numpy as np, autodiff as ad
    >>> lhs = np.ones((3, 2)); rhs = np.stack([np.eye(2), 2 * np.eye(2)])
    >>> ad.lax.ragged_dot(lhs, rhs, np.array([1, 2]))
    array([[1., 1.],
           [2., 2.],
           [2., 2.]])
    """
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset (sharded groups) is not supported")
    from ._lax_more import check_precision
    check_precision(precision)
    a, b = anp.asarray(lhs), anp.asarray(rhs)
    m, g = anp.shape(a)[0], anp.shape(b)[0]
    ends = anp.cumsum(anp.astype(anp.asarray(group_sizes), np.int64))
    starts = anp.subtract(ends, anp.astype(anp.asarray(group_sizes), np.int64))
    rows = anp.reshape(anp.arange(m), (m, 1))
    onehot = anp.logical_and(anp.greater_equal(rows, starts), anp.less(rows, ends))   # m, g
    dt = anp.result_type(a, b)
    per_group = anp.einsum("mk,gkn->gmn", a, b)
    return anp.einsum("mg,gmn->mn", anp.astype(onehot, dt), per_group)


# ----------------------------------------------------------------------------
# FFT and random bits
# ----------------------------------------------------------------------------

class FftType(enum.IntEnum):
    """The kinds of ``lax.fft``."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x, fft_type, fft_lengths):
    """An FFT over the last ``len(fft_lengths)`` axes: ``fft_type`` is an :class:`FftType`
    or its name (``"FFT"``, ``"IFFT"``, ``"RFFT"``, ``"IRFFT"``); for ``IRFFT`` the lengths
    are the real output's.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.fft(np.array([1.0, 0.0, 0.0, 0.0]), "RFFT", (4,))
    array([1.+0.j, 1.+0.j, 1.+0.j])
    """
    kind = fft_type if isinstance(fft_type, FftType) else FftType[
        getattr(fft_type, "name", str(fft_type)).upper().split(".")[-1]]
    lengths = tuple(int(n) for n in fft_lengths)
    axes = tuple(range(-len(lengths), 0))
    fn = {FftType.FFT: anp.fft.fftn, FftType.IFFT: anp.fft.ifftn, FftType.RFFT: anp.fft.rfftn,
          FftType.IRFFT: anp.fft.irfftn}[kind]
    x = anp.asarray(x)
    if kind in (FftType.FFT, FftType.IFFT) and np.dtype(anp.result_type(x)).kind != "c":
        x = anp.astype(x, np.result_type(anp.result_type(x), np.complex64))
    return fn(x, s=lengths, axes=axes)


class RandomAlgorithm(enum.IntEnum):
    """``rng_bit_generator``'s algorithms; every one draws Threefry-2x32 bits here."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      out_sharding=None):
    """``(new_key, bits)``: random bits of ``shape`` and unsigned ``dtype`` from a
    ``uint32`` key (any size ≥ 2: JAX's default takes 4 words), and the key to use next.
    The bits come from ``ad.random``'s Threefry-2x32 and are not XLA's (whose bits differ
    between backends too); the new key has the old key's shape.

    >>> import numpy as np, autodiff as ad
    >>> k, bits = ad.lax.rng_bit_generator(np.zeros(4, np.uint32), (2, 3))
    >>> k.shape, bits.shape, bits.dtype
    ((4,), (2, 3), dtype('uint32'))
    """
    from . import random as R
    key = anp.asarray(key)
    dt = np.dtype(dtype)
    if dt.kind != "u":
        raise TypeError(f"rng_bit_generator: dtype must be unsigned (uint8..uint64), got {dt}")
    n = int(np.prod(anp.shape(key)))
    words = anp.reshape(key, (n,))
    k = anp.astype(words[:2], np.uint32)
    for i in range(2, n):                       # fold the remaining words into the key
        k = R.fold_in(k, words[i])
    knext, kbits = R.split(k)
    wide = np.dtype(np.uint64) if dt.itemsize == 8 else np.dtype(np.uint32)
    bits = anp.astype(R.bits(kbits, tuple(shape), wide), dt)     # narrower: the low bits
    new = R.bits(knext, (n,), np.uint32)
    return anp.reshape(anp.astype(new, anp.result_type(key)), anp.shape(key)), bits
