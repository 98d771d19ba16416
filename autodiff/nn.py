"""Neural-network helpers: activations and losses built from ``autodiff.numpy``.

>>> import numpy as np, autodiff as ad
>>> ad.nn.relu(np.array([-1.0, 2.0]))
array([0., 2.])
"""
import sys
import typing

import numpy as np

from . import numpy as anp
from .numpy import logsumexp, softmax, log_softmax  # noqa: F401
from .numpy._base import npfunc, asarray as _asarray
from .numpy._special_functions import sigmoid, softplus, log_sigmoid, log1mexp  # noqa: F401
from . import primitives as P
from .core import Tracer, user_source as _user_source
from .scipy.special import ndtr as _ndtr
from .errors import ShapeError as _ShapeError
from . import random as _random


@npfunc(None)
def relu(x):
    """``max(x, 0)``, with relu'(0) = 0."""
    x = _asarray(x)
    # relu'(0) = 0, as in JAX and PyTorch (maximum's tie rule would give 1/2)
    return anp.where(anp.greater(x, 0), x, anp.zeros_like(x))


logistic = sigmoid


@npfunc(None)
def silu(x):
    """``x·sigmoid(x)`` (also ``swish``)."""
    return anp.multiply(x, sigmoid(x))


swish = silu


@npfunc(None)
def gelu(x, approximate=True):
    """Gaussian error linear unit: ``x·Φ(x)`` exactly (``approximate=False``) or its tanh
    approximation (``approximate=True``, JAX's default)."""
    x = _asarray(x)
    if approximate:
        c = float(np.sqrt(2.0 / np.pi))      # a Python float: weak, keeps float32 float32
        return anp.multiply(anp.multiply(x, 0.5),
                            anp.add(1.0, anp.tanh(anp.multiply(anp.add(x, anp.multiply(anp.power(x, 3), 0.044715)), c))))
    # exact form x·Φ(x) = x·(1 + erf(x/√2))/2, Φ from autodiff.scipy.special (custom_jvp)
    return anp.multiply(x, _ndtr(x))


@npfunc(None)
def leaky_relu(x, negative_slope=0.01):
    """``x`` for x ≥ 0, ``negative_slope·x`` below."""
    return anp.where(anp.greater_equal(x, 0), x, anp.multiply(x, negative_slope))


@npfunc(None)
def elu(x, alpha=1.0):
    """``x`` for x > 0, ``alpha·(e^x - 1)`` below."""
    x = _asarray(x)
    safe = anp.minimum(x, 0)
    return anp.where(anp.greater(x, 0), x, anp.multiply(anp.expm1(safe), alpha))


def one_hot(labels, num_classes, dtype=np.float64, axis=-1):
    """``one_hot(labels, k)[..., j] = (labels == j)``; labels outside ``[0, k)`` give zeros.

    ``axis`` (JAX's keyword) is where the new class axis goes in the result.

    >>> import numpy as np
    >>> one_hot(np.array([0, 2]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    >>> one_hot(np.array([0, 2]), 3, axis=0)
    array([[1., 0.],
           [0., 0.],
           [0., 1.]])
    """
    labels = _asarray(labels)
    out = anp.astype(anp.equal(anp.expand_dims(labels, -1), np.arange(num_classes)), dtype)
    if axis != -1 and axis != anp.ndim(out) - 1:
        out = anp.moveaxis(out, -1, axis)
    return out


def softmax_cross_entropy(logits, labels):
    """Mean cross-entropy of integer ``labels`` under ``softmax(logits)``."""
    lp = log_softmax(logits, axis=-1)
    k = anp.shape(lp)[-1]
    return anp.negative(anp.mean(anp.sum(anp.multiply(lp, one_hot(labels, k, lp.dtype if hasattr(lp, 'dtype') else np.float64)), axis=-1)))


# ----------------------------------------------------------------------------
# the rest of jax.nn (issue 14)
# ----------------------------------------------------------------------------

def _f(x):
    x = _asarray(x)
    return P.convert(x, np.float64 if P.dtype_of(x).kind not in "fc" else P.dtype_of(x))


@npfunc(None)
def relu6(x):
    """``min(max(x, 0), 6)``, with zero derivative at both kinks (as JAX)."""
    x = _f(x)
    return anp.where(anp.logical_and(anp.greater(x, 0), anp.less(x, 6)), x,
                     anp.where(anp.greater_equal(x, 6), anp.full_like(x, 6), anp.zeros_like(x)))


@npfunc(None)
def hard_sigmoid(x):
    """``relu6(x + 3)/6``."""
    return anp.divide(relu6(anp.add(_f(x), 3.0)), 6.0)


@npfunc(None)
def hard_silu(x):
    """``x·hard_sigmoid(x)``."""
    x = _f(x)
    return anp.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


@npfunc(None)
def hard_tanh(x):
    """``clip(x, -1, 1)`` with zero derivative outside (-1, 1)."""
    x = _f(x)
    return anp.where(anp.greater(x, 1), anp.ones_like(x), anp.where(anp.less(x, -1), -anp.ones_like(x), x))


@npfunc(None)
def celu(x, alpha=1.0):
    """``max(x, 0) + min(0, α(e^{x/α} - 1))``."""
    x = _f(x)
    return anp.where(anp.greater(x, 0), x, anp.multiply(anp.expm1(anp.divide(anp.minimum(x, 0), alpha)), alpha))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@npfunc(None)
def selu(x):
    """Scaled ELU: ``λ·elu(x, α)`` with the self-normalizing constants."""
    return anp.multiply(elu(_f(x), _SELU_ALPHA), _SELU_SCALE)


@npfunc(None)
def glu(x, axis=-1):
    """Gated linear unit: ``a·sigmoid(b)`` for the two halves ``a, b`` of ``x`` along ``axis``."""
    x = _f(x)
    a, b = anp.split(x, 2, axis=axis)
    return anp.multiply(a, sigmoid(b))


@npfunc(None)
def soft_sign(x):
    """``x/(1 + |x|)``."""
    x = _f(x)
    return anp.divide(x, anp.add(anp.abs(x), 1.0))


@npfunc(None)
def sparse_plus(x):
    """0 for x ≤ -1, ``(x+1)²/4`` on (-1, 1), x for x ≥ 1."""
    x = _f(x)
    mid = anp.multiply(anp.square(anp.add(x, 1.0)), 0.25)
    return anp.where(anp.less_equal(x, -1), anp.zeros_like(x), anp.where(anp.greater_equal(x, 1), x, mid))


@npfunc(None)
def sparse_sigmoid(x):
    """The derivative of ``sparse_plus``: ``clip((x+1)/2, 0, 1)``."""
    x = _f(x)
    mid = anp.multiply(anp.add(x, 1.0), 0.5)
    return anp.where(anp.less_equal(x, -1), anp.zeros_like(x), anp.where(anp.greater_equal(x, 1), anp.ones_like(x), mid))


@npfunc(None)
def squareplus(x, b=4.0):
    """``(x + √(x² + b))/2``, a smooth relu."""
    x = _f(x)
    return anp.multiply(anp.add(x, anp.sqrt(anp.add(anp.square(x), b))), 0.5)


@npfunc(None)
def mish(x):
    """``x·tanh(softplus(x))``."""
    x = _f(x)
    return anp.multiply(x, anp.tanh(softplus(x)))


@npfunc(None)
def tanh(x):
    """``tanh`` (as ``jax.nn.tanh``)."""
    return anp.tanh(x)


@npfunc(None)
def identity(x):
    """The identity activation."""
    return _asarray(x)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``log(mean(e^x))`` along ``axis``, stably; ``where`` leaves elements out (the mean is
    over the others).

    >>> import numpy as np
    >>> float(logmeanexp(np.array([0.0, np.log(3.0), 7.0]), where=np.array([1, 1, 0]) > 0))
    0.6931471805599453
    """
    x = _asarray(x)
    if where is not None:
        n = anp.sum(anp.broadcast_to(where, anp.shape(x)), axis=axis, keepdims=keepdims)
        return anp.subtract(logsumexp(x, axis=axis, keepdims=keepdims, where=where),
                            anp.log(anp.astype(n, P.dtype_of(_f(x)))))
    n = np.prod([anp.shape(x)[i] for i in (range(anp.ndim(x)) if axis is None else np.atleast_1d(axis))])
    return anp.subtract(logsumexp(x, axis=axis, keepdims=keepdims), float(np.log(n)))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """``(x - mean)/√(variance + ε)`` along ``axis`` (statistics computed when not given;
    ``where`` restricts them to the elements where it is true, as in JAX).

    >>> import numpy as np
    >>> standardize(np.array([1.0, 3.0, 100.0]), where=np.array([True, True, False]),
    ...             epsilon=0.0)
    array([-1.,  1., 98.])
    """
    x = _asarray(x)
    if mean is None:
        mean = anp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        variance = anp.mean(anp.square(anp.subtract(x, mean)), axis=axis, keepdims=True,
                            where=where)
    return anp.divide(anp.subtract(x, mean), anp.sqrt(anp.add(variance, epsilon)))


def normalize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """The old name of :func:`standardize` (``jax.nn.normalize``), kept for ported code.

    >>> import numpy as np
    >>> normalize(np.array([1.0, 3.0]), epsilon=0.0)
    array([-1.,  1.])
    """
    return standardize(x, axis=axis, mean=mean, variance=variance, epsilon=epsilon,
                       where=where)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None):
    """Scaled dot-product attention with ``jax.nn``'s layout: ``query`` (B, T, N, H) or
    (T, N, H), ``key``/``value`` (B, S, K, H) with N a multiple of K (grouped heads);
    ``softmax(q·kᵀ·scale + bias, masked) · v``."""
    q, k, v = _asarray(query), _asarray(key), _asarray(value)
    squeeze = anp.ndim(q) == 3
    if squeeze:
        q, k, v = anp.expand_dims(q, 0), anp.expand_dims(k, 0), anp.expand_dims(v, 0)
    B, T, N, H = anp.shape(q)
    S, K = anp.shape(k)[1], anp.shape(k)[2]
    if N % K:
        raise ValueError(f"dot_product_attention: {N} query heads are not a multiple of {K} key heads")
    G = N // K
    if G > 1:
        k = anp.repeat(k, G, axis=2)
        v = anp.repeat(v, G, axis=2)
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    logits = anp.multiply(anp.einsum("btnh,bsnh->bnts", q, k), scale)
    if bias is not None:
        logits = anp.add(logits, bias)
    keep = None
    if mask is not None:
        keep = anp.broadcast_to(_asarray(mask), anp.shape(logits))
    if is_causal:
        c = np.tril(np.ones((T, S), bool))
        keep = c if keep is None else anp.logical_and(keep, c)
    if local_window_size is not None:
        lw = (local_window_size, local_window_size) if np.ndim(local_window_size) == 0 else tuple(local_window_size)
        d = np.arange(S)[None, :] - np.arange(T)[:, None]
        w = (d >= -lw[0]) & (d <= lw[1])
        keep = w if keep is None else anp.logical_and(keep, w)
    if key_value_seq_lengths is not None:
        kl = anp.less(np.arange(S), anp.reshape(_asarray(key_value_seq_lengths), (B, 1, 1, 1)))
        keep = kl if keep is None else anp.logical_and(keep, kl)
    if query_seq_lengths is not None:
        ql = anp.less(np.arange(T)[:, None], anp.reshape(_asarray(query_seq_lengths), (B, 1, 1, 1)))
        keep = ql if keep is None else anp.logical_and(keep, ql)
    if keep is not None:
        logits = anp.where(keep, logits, float(np.finfo(P.dtype_of(logits)).min) * 0.5)
    w = softmax(logits, axis=-1)
    out = anp.einsum("bnts,bsnh->btnh", w, v)
    return out[0] if squeeze else out


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=None):
    """Block-scaled batched matmul (``jax.nn.scaled_matmul``): ``lhs`` (B, M, K) and
    ``rhs`` (B, N, K) contract over their last axis after each block of K/K_a (K/K_b)
    entries is multiplied by its scale from ``lhs_scales`` (B, M, K_a) / ``rhs_scales``
    (B, N, K_b); the result is (B, M, N). It computes in the operands' float dtype
    (``preferred_element_type`` casts the result; JAX defaults to float32, autodiff keeps
    float64 as everywhere else). Differentiable in all four arguments.

    >>> import numpy as np, autodiff as ad
    >>> a, b = np.array([1.0, 2, 3]).reshape(1, 1, 3), np.array([4.0, 5, 6]).reshape(1, 1, 3)
    >>> ad.nn.scaled_matmul(a, b, np.full((1, 1, 1), 0.5), np.full((1, 1, 1), 0.5))
    array([[[8.]]])
    """
    lhs, rhs, lhs_scales, rhs_scales = (_f(v) for v in (lhs, rhs, lhs_scales, rhs_scales))
    shapes = [anp.shape(v) for v in (lhs, rhs, lhs_scales, rhs_scales)]
    if any(len(sh) != 3 for sh in shapes):
        raise _ShapeError(f"scaled_matmul: every operand must be 3-d (B, rows, K), got shapes {shapes}",
                         source=_user_source())
    (B, M, K), (B2, N, K2), (_, M2, Ka), (_, N2, Kb) = shapes
    if B != B2 or K != K2 or (M, N) != (M2, N2) or shapes[2][0] != B or shapes[3][0] != B:
        raise _ShapeError(f"scaled_matmul: shapes {shapes} do not fit (B, M, K), (B, N, K), (B, M, K_a), "
                         "(B, N, K_b)", source=_user_source())
    if Ka == 0 or Kb == 0 or K % Ka or K % Kb:
        raise _ShapeError(f"scaled_matmul: K = {K} must be a multiple of the scales' last axes ({Ka}, {Kb})",
                         source=_user_source())
    a = anp.multiply(lhs, anp.repeat(lhs_scales, K // Ka, axis=-1))
    b = anp.multiply(rhs, anp.repeat(rhs_scales, K // Kb, axis=-1))
    out = anp.einsum("bmk,bnk->bmn", a, b)
    return out if preferred_element_type is None else anp.astype(out, preferred_element_type)


class initializers:
    """``jax.nn.initializers``: each builder returns ``init(key, shape, dtype=float64)``
    drawing from ``ad.random``.

    >>> import autodiff as ad
    >>> w = ad.nn.initializers.glorot_uniform()(ad.random.key(0), (3, 4))
    >>> w.shape
    (3, 4)
    """

    @typing.runtime_checkable
    class Initializer(typing.Protocol):
        """What every initializer is (``jax.nn.initializers.Initializer``): a callable
        ``init(key, shape, dtype=None) -> array``; for type annotations and
        ``isinstance`` checks.

        >>> import autodiff as ad
        >>> isinstance(ad.nn.initializers.zeros, ad.nn.initializers.Initializer)
        True
        """

        def __call__(self, key, shape, dtype=None):
            ...

    @staticmethod
    def zeros(key, shape, dtype=np.float64):
        """All zeros."""
        return np.zeros(shape, dtype)

    @staticmethod
    def ones(key, shape, dtype=np.float64):
        """All ones."""
        return np.ones(shape, dtype)

    @staticmethod
    def constant(value, dtype=np.float64):
        """Every entry ``value``."""
        return lambda key, shape, dtype=dtype: anp.full_like(np.zeros((), dtype), value, shape=tuple(shape)) \
            if not isinstance(value, Tracer) else anp.broadcast_to(anp.astype(value, dtype), tuple(shape))

    @staticmethod
    def uniform(scale=1e-2, dtype=np.float64):
        """Uniform on [0, scale)."""
        return lambda key, shape, dtype=dtype: anp.multiply(_random.uniform(key, tuple(shape), dtype), scale)

    @staticmethod
    def normal(stddev=1e-2, dtype=np.float64):
        """Normal with standard deviation ``stddev``."""
        return lambda key, shape, dtype=dtype: anp.multiply(_random.normal(key, tuple(shape), dtype), stddev)

    @staticmethod
    def truncated_normal(stddev=1e-2, dtype=np.float64, lower=-2.0, upper=2.0):
        """Normal truncated to [lower, upper] standard deviations, times ``stddev``."""
        return lambda key, shape, dtype=dtype: anp.multiply(
            _random.truncated_normal(key, lower, upper, tuple(shape), dtype), stddev)

    @staticmethod
    def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=np.float64):
        """JAX's variance scaling: variance ``scale/n`` with n the fan in, fan out or their
        mean; 'truncated_normal' (rescaled to keep the variance), 'normal' or 'uniform'."""

        def init(key, shape, dtype=dtype):
            shape = tuple(shape)
            nd = len(shape)
            ia, oa = in_axis % nd, out_axis % nd
            ba = tuple(b % nd for b in np.atleast_1d(batch_axis)) if batch_axis != () else ()
            recept = int(np.prod([s for i, s in enumerate(shape) if i not in (ia, oa) + ba]))
            fan_in, fan_out = shape[ia] * recept, shape[oa] * recept
            n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
            var = scale / n
            if distribution == "truncated_normal":
                # std of N(0,1) truncated to [-2, 2]; Python floats keep a float32 draw float32
                std = float(np.sqrt(var) / 0.87962566103423978)
                return anp.multiply(_random.truncated_normal(key, -2.0, 2.0, shape, dtype), std)
            if distribution == "normal":
                return anp.multiply(_random.normal(key, shape, dtype), float(np.sqrt(var)))
            if distribution == "uniform":
                lim = float(np.sqrt(3 * var))
                return _random.uniform(key, shape, dtype, -lim, lim)
            raise ValueError(f"invalid distribution {distribution!r} for variance scaling")
        return init

    @staticmethod
    def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=np.float64):
        """Variance ``2/(fan_in + fan_out)``, uniform."""
        return initializers.variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)

    @staticmethod
    def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=np.float64):
        """Variance ``2/(fan_in + fan_out)``, truncated normal."""
        return initializers.variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype)

    @staticmethod
    def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=np.float64):
        """Variance ``1/fan_in``, uniform."""
        return initializers.variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)

    @staticmethod
    def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=np.float64):
        """Variance ``1/fan_in``, truncated normal."""
        return initializers.variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)

    @staticmethod
    def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=np.float64):
        """Variance ``2/fan_in``, uniform."""
        return initializers.variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)

    @staticmethod
    def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=np.float64):
        """Variance ``2/fan_in``, truncated normal."""
        return initializers.variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)

    @staticmethod
    def orthogonal(scale=1.0, column_axis=-1, dtype=np.float64):
        """A (semi-)orthogonal matrix from the QR of a normal one (signs fixed by R's diagonal)."""

        def init(key, shape, dtype=dtype):
            shape = tuple(shape)
            n_cols = shape[column_axis]
            n_rows = int(np.prod(shape)) // n_cols
            big, small = max(n_rows, n_cols), min(n_rows, n_cols)
            a = _random.normal(key, (big, small), dtype)
            q, r = anp.linalg.qr(a)
            q = anp.multiply(q, anp.sign(anp.diagonal(r)))
            if n_rows < n_cols:
                q = anp.transpose(q)
            q = anp.reshape(q, tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape)) + (n_cols,))
            return anp.multiply(anp.moveaxis(q, -1, column_axis), scale)
        return init

    @staticmethod
    def delta_orthogonal(scale=1.0, column_axis=-1, dtype=np.float64):
        """Orthogonal at the spatial centre of a convolution kernel, zero elsewhere."""
        def init(key, shape, dtype=dtype):
            shape = tuple(shape)
            if len(shape) not in (3, 4, 5):
                raise ValueError("delta_orthogonal needs a 3-, 4- or 5-dimensional shape")
            if shape[-2] > shape[-1]:
                raise ValueError("delta_orthogonal: in channels must be at most out channels")
            ortho = initializers.orthogonal(scale, -1, dtype)(key, shape[-2:], dtype)
            centre = tuple(s // 2 for s in shape[:-2])
            out = anp.zeros_like(ortho, shape=shape)
            return anp.at(out)[centre].set(ortho)
        return init

    kaiming_uniform = he_uniform
    kaiming_normal = he_normal
    xavier_uniform = glorot_uniform
    xavier_normal = glorot_normal


# ``import jax.nn.initializers as init`` and ``from jax.nn.initializers import
# glorot_normal`` port as ``autodiff.nn.initializers``: the class stands for that module
sys.modules[__name__ + ".initializers"] = initializers     # type: ignore[assignment]
