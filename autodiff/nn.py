"""Neural-network helpers: activations and losses built from ``autodiff.numpy``.

>>> import numpy as np, autodiff as ad
>>> ad.nn.relu(np.array([-1.0, 2.0]))
array([0., 2.])
"""
import sys
import typing
import warnings

import numpy as np

from . import numpy as anp
from .numpy import logsumexp, softmax, log_softmax  # noqa: F401
from .numpy._base import npfunc, asarray as _asarray
from .numpy._special_functions import sigmoid, softplus, log_sigmoid, log1mexp  # noqa: F401
from . import primitives as P
from .core import Tracer, user_source as _user_source
from .scipy.special import ndtr as _ndtr
from .errors import ShapeError as _ShapeError, DTypeError as _DTypeError
from .errors import ConcretizationError as _ConcretizationError
from .errors import UnsupportedError as _UnsupportedError
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
    ``num_classes`` must be concrete (a traced one raises ``ConcretizationError``); float
    labels work but warn (``DeprecationWarning``, as in JAX: labels should be integers).

    >>> import numpy as np
    >>> one_hot(np.array([0, 2]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    >>> one_hot(np.array([0, 2]), 3, axis=0)
    array([[1., 0.],
           [0., 0.],
           [0., 1.]])
    """
    if isinstance(num_classes, Tracer):
        raise _ConcretizationError(
            "in autodiff.nn.one_hot argument `num_classes`: the number of classes sets the "
            "result's shape, so it must be a concrete int (pass it as a static argument of "
            "jit: ad.jit(f, static_argnums=...))")
    num_classes = int(num_classes)
    labels = _asarray(labels)
    if np.dtype(P.dtype_of(labels)).kind not in "iub":
        warnings.warn(f"autodiff.nn.one_hot input should be integer-typed; got dtype="
                      f"{np.dtype(P.dtype_of(labels))}", DeprecationWarning, stacklevel=2)
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
    # the middle piece on x clipped to [-1, 1]: its (unused) derivative stays finite at ±inf
    mid = anp.multiply(anp.square(anp.add(anp.clip(x, -1.0, 1.0), 1.0)), 0.25)
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


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="stable"):
    """``(x - mean)/√(variance + ε)`` along ``axis`` (statistics computed when not given;
    ``where`` restricts them to the elements where it is true, as in JAX).

    ``algorithm`` picks the variance when it is computed (JAX's keyword): ``"stable"`` (our
    default) is the two-pass ``mean((x - mean)²)``, which keeps its digits when
    ``|mean| ≫ std``; ``"fast"`` is ``mean(x²) - mean²`` clipped at 0. JAX defaults to
    ``"fast"`` for backward compatibility; the two agree to rounding on data whose mean is
    not much larger than its spread, and where it is, ``"fast"`` loses digits (about 1e-4
    relative at x ≈ 1e6 in float64), so autodiff keeps the accurate one by default.

    >>> import numpy as np
    >>> standardize(np.array([1.0, 3.0, 100.0]), where=np.array([True, True, False]),
    ...             epsilon=0.0)
    array([-1.,  1., 98.])
    >>> standardize(np.array([1e8, 1e8 + 2.0]), epsilon=0.0, algorithm="stable")
    array([-1.,  1.])
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"Unknown algorithm {algorithm!r}. Expected 'fast' or 'stable'.")
    x = _asarray(x)
    if mean is None:
        mean = anp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = anp.mean(anp.square(anp.subtract(x, mean)), axis=axis, keepdims=True,
                                where=where)
        else:
            variance = anp.subtract(anp.mean(anp.square(x), axis=axis, keepdims=True,
                                             where=where), anp.square(mean))
            variance = anp.maximum(variance, 0)      # rounding can make it slightly negative
    return anp.multiply(anp.subtract(x, mean),
                        anp.reciprocal(anp.sqrt(anp.add(variance, epsilon))))


def normalize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """The old name of :func:`standardize` (``jax.nn.normalize``), kept for ported code.

    >>> import numpy as np
    >>> normalize(np.array([1.0, 3.0]), epsilon=0.0)
    array([-1.,  1.])
    """
    return standardize(x, axis=axis, mean=mean, variance=variance, epsilon=epsilon,
                       where=where)


def _ensure_4d(t):
    t = _asarray(t)
    nd = anp.ndim(t)
    return anp.reshape(t, (1,) * (4 - nd) + tuple(anp.shape(t))) if nd < 4 else t


def _check_operand(t, shape, name):
    if t is None:
        return
    got = tuple(anp.shape(t))
    if len(got) != len(shape) or any(w != -1 and g != w for g, w in zip(got, shape)):
        want = tuple("?" if w == -1 else w for w in shape)
        raise _ShapeError(f"dot_product_attention: {name} should have shape {want}, got {got}",
                          source=_user_source())


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """Scaled dot-product attention (``jax.nn.dot_product_attention``, its ``"xla"``
    implementation): ``softmax(q·kᵀ·scale + bias, masked) · v`` per head.

    ``query`` is (B, T, N, H) or (T, N, H), ``key``/``value`` (B, S, K, H) or (S, K, H) with
    N a multiple of K (grouped-query attention: query head n reads key head n // (N/K)).
    ``bias`` and the boolean ``mask`` broadcast to (B, N, T, S) (missing leading axes are
    added); ``scale`` defaults to 1/√H. ``is_causal`` keeps key s ≤ query t,
    ``local_window_size`` (an int or ``(left, right)``) keeps t - left ≤ s ≤ t + right,
    ``key_value_seq_lengths`` (B,) keeps s < length and ``query_seq_lengths`` (B,) zeroes
    the output rows t ≥ length. Masked logits become ``-0.7·max`` (a row with nothing
    kept averages all values, as JAX). ``return_residual=True`` also returns the
    logsumexp of the masked logits, shaped (B, T, N) (or (T, N)), with no gradient.
    ``implementation`` may be ``None`` or ``"xla"`` (the same computation); ``"cudnn"``
    raises :class:`~autodiff.errors.UnsupportedError`.

    >>> import numpy as np, autodiff as ad
    >>> q = np.ones((2, 1, 1)); k = np.zeros((3, 1, 1)); v = np.arange(3.0).reshape(3, 1, 1)
    >>> ad.nn.dot_product_attention(q, k, v, is_causal=True)[:, 0, 0]   # means of prefixes
    array([0. , 0.5])
    """
    if implementation == "cudnn":
        raise _UnsupportedError("dot_product_attention: implementation='cudnn' (cuDNN flash "
                                "attention) is not available; use implementation=None or 'xla'",
                                source=_user_source())
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out_shape = tuple(anp.shape(query))
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    B, S, K, H = anp.shape(k)
    _check_operand(v, (B, S, K, H), "value")
    _check_operand(q, (B, -1, -1, H), "query")
    _check_operand(mask, (-1,) * 4, "mask")
    _check_operand(bias, (-1,) * 4, "bias")
    if mask is not None and np.dtype(P.dtype_of(mask)) != np.bool_:
        raise _DTypeError(f"dot_product_attention: mask must be boolean (True keeps a logit), "
                          f"got {np.dtype(P.dtype_of(mask))}; pass an additive mask as bias",
                          source=_user_source())
    lengths = []
    for name, ln in (("query_seq_lengths", query_seq_lengths),
                     ("key_value_seq_lengths", key_value_seq_lengths)):
        if ln is not None:
            ln = _asarray(ln)
            _check_operand(ln, (B,), name)
            if np.dtype(P.dtype_of(ln)).kind not in "iu":
                raise _DTypeError(f"dot_product_attention: {name} must be integers, got "
                                  f"{np.dtype(P.dtype_of(ln))}", source=_user_source())
        lengths.append(ln)
    q_len, kv_len = lengths
    T, N = anp.shape(q)[1], anp.shape(q)[2]
    if N % K:
        raise _ShapeError(f"dot_product_attention: the number of query heads must be a multiple "
                          f"of key/value heads, got {N} vs {K}", source=_user_source())
    G = N // K
    if G > 1:
        k = anp.repeat(k, G, axis=2)
        v = anp.repeat(v, G, axis=2)
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    logits = anp.einsum("btnh,bsnh->bnts", q, k)
    ldt = np.dtype(P.dtype_of(logits))
    if ldt.kind not in "fc":
        ldt = np.dtype(np.float64)
        logits = anp.astype(logits, ldt)
    logits = anp.multiply(logits, anp.astype(_asarray(scale), ldt))
    if bias is not None:
        logits = anp.astype(anp.add(logits, bias), ldt)
    keep = None

    def both(a, b):
        return b if a is None else anp.logical_and(a, b)
    if mask is not None:
        keep = both(keep, mask)
    if is_causal:
        keep = both(keep, np.tril(np.ones((T, S), bool)))
    if local_window_size is not None:
        lw = ((local_window_size, local_window_size) if np.ndim(local_window_size) == 0
              else tuple(local_window_size))
        d = np.arange(S)[None, :] - np.arange(T)[:, None]        # key - query position
        keep = both(keep, (d >= -lw[0]) & (d <= lw[1]))
    if kv_len is not None:
        keep = both(keep, anp.less(np.arange(S), anp.reshape(kv_len, (B, 1, 1, 1))))
    if q_len is not None:
        keep = both(keep, anp.less(np.arange(T)[:, None], anp.reshape(q_len, (B, 1, 1, 1))))
    if keep is not None:
        big = min(float(np.finfo(ldt).max), float(np.finfo(np.float32).max))
        logits = anp.where(keep, logits, -0.7 * big)
    probs = anp.astype(softmax(logits, axis=-1), P.dtype_of(k))
    out = anp.einsum("bnts,bsnh->btnh", probs, v)
    if q_len is not None:
        rows = anp.less(np.arange(T), anp.reshape(q_len, (B, 1)))
        out = anp.multiply(out, anp.astype(anp.reshape(rows, (B, T, 1, 1)), P.dtype_of(out)))
    out = anp.reshape(out, out_shape)
    if not return_residual:
        return out
    lse = anp.astype(anp.transpose(logsumexp(logits, axis=-1), (0, 2, 1)), P.dtype_of(k))
    return out, anp.reshape(anp.stop_gradient(lse), out_shape[:-1])


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


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """JAX's fans of a weight ``shape``: the sizes along ``in_axis``/``out_axis`` (an axis or
    a sequence), each times the receptive field (the axes in none of the three)."""
    if isinstance(in_axis, (int, np.integer)) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional"
                         f" weights tensor with default in_axis. Must be at least 2D or "
                         f"specify in_axis explicitly.")

    def size(axes):
        if isinstance(axes, (int, np.integer)):
            return shape[axes]
        return int(np.prod([shape[i] for i in axes]))
    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive = int(np.prod(shape)) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def _real_of(dtype):
    return np.dtype(np.float32) if np.dtype(dtype) in (np.float32, np.complex64) else \
        np.dtype(np.float64)


def _normal(key, shape, dtype):
    """``random.normal``, with complex dtypes (unit variance: each part has variance 1/2)."""
    if np.dtype(dtype).kind != "c":
        return _random.normal(key, shape, dtype)
    k1, k2 = _random.split(key)
    rd = _real_of(dtype)
    re, im = _random.normal(k1, shape, rd), _random.normal(k2, shape, rd)
    z = anp.add(anp.astype(re, dtype), anp.multiply(anp.astype(im, dtype), 1j))
    return anp.multiply(z, float(np.sqrt(0.5)))


def _complex_uniform(key, shape, dtype):
    """Uniform on the disk of radius √2 (zero mean, unit variance)."""
    k1, k2 = _random.split(key)
    rd = _real_of(dtype)
    r = anp.sqrt(anp.multiply(_random.uniform(k1, shape, rd), 2.0))
    theta = anp.multiply(_random.uniform(k2, shape, rd), 2 * np.pi)
    return anp.astype(anp.multiply(r, anp.exp(anp.multiply(anp.astype(theta, dtype), 1j))),
                      dtype)


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex normal (unit variance before truncation) with modulus cut at ``upper``."""
    k1, k2 = _random.split(key)
    rd = _real_of(dtype)
    t = anp.multiply(_random.uniform(k1, shape, rd), float(1.0 - np.exp(-upper ** 2)))
    r = anp.sqrt(anp.negative(anp.log1p(anp.negative(t))))
    theta = anp.multiply(_random.uniform(k2, shape, rd), 2 * np.pi)
    return anp.astype(anp.multiply(r, anp.exp(anp.multiply(anp.astype(theta, dtype), 1j))),
                      dtype)


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
        """Normal with standard deviation ``stddev`` (complex dtypes: real and imaginary
        parts each of variance ``stddev²/2``)."""
        return lambda key, shape, dtype=dtype: anp.multiply(_normal(key, tuple(shape), dtype),
                                                            stddev)

    @staticmethod
    def truncated_normal(stddev=1e-2, dtype=np.float64, lower=-2.0, upper=2.0):
        """Normal truncated to [lower, upper] standard deviations, times ``stddev``."""
        return lambda key, shape, dtype=dtype: anp.multiply(
            _random.truncated_normal(key, lower, upper, tuple(shape), dtype), stddev)

    @staticmethod
    def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=np.float64):
        """JAX's variance scaling: variance ``scale/n`` with n the fan in, fan out, their
        mean (``"fan_avg"``) or geometric mean (``"fan_geo_avg"``); 'truncated_normal'
        (rescaled to keep the variance), 'normal' or 'uniform'. ``in_axis``, ``out_axis``
        and ``batch_axis`` are an axis or a sequence of axes; the others are the receptive
        field. Complex dtypes draw in the complex plane (a disk for 'uniform', a modulus
        truncated at 2 for 'truncated_normal') with the same variance.

        >>> import autodiff as ad
        >>> init = ad.nn.initializers.variance_scaling(2.0, "fan_in", "normal")
        >>> init(ad.random.key(0), (100, 50)).std().round(1)     # √(2/100)
        np.float64(0.1)
        """
        if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        if distribution not in ("truncated_normal", "normal", "uniform"):
            raise ValueError(f"invalid distribution for variance scaling initializer: "
                             f"{distribution}")

        def init(key, shape, dtype=dtype):
            shape = tuple(shape)
            fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
            n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                 "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
            var = scale / n
            cplx = np.dtype(dtype).kind == "c"
            if distribution == "truncated_normal":
                if cplx:
                    return anp.multiply(_complex_truncated_normal(key, 2.0, shape, dtype),
                                        float(np.sqrt(var) / 0.95311164380491208))
                # std of N(0,1) truncated to [-2, 2]; Python floats keep a float32 draw float32
                std = float(np.sqrt(var) / 0.87962566103423978)
                return anp.multiply(_random.truncated_normal(key, -2.0, 2.0, shape, dtype), std)
            if distribution == "normal":
                return anp.multiply(_normal(key, shape, dtype), float(np.sqrt(var)))
            if cplx:
                return anp.multiply(_complex_uniform(key, shape, dtype), float(np.sqrt(var)))
            lim = float(np.sqrt(3 * var))
            return _random.uniform(key, shape, dtype, -lim, lim)
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
        """A (semi-)orthogonal matrix from the QR of a normal one (signs fixed by R's diagonal).

        >>> import numpy as np, autodiff as ad
        >>> w = ad.nn.initializers.orthogonal()(ad.random.key(0), (3, 2))
        >>> np.allclose(w.T @ w, np.eye(2))
        True
        """

        def init(key, shape, dtype=dtype):
            shape = tuple(shape)
            if len(shape) < 2:
                raise ValueError("orthogonal initializer requires at least a 2D shape")
            n_cols = shape[column_axis]
            n_rows = int(np.prod(shape)) // n_cols if n_cols else 0
            if n_rows == 0 or n_cols == 0:
                return np.zeros(shape, dtype)
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
        """Orthogonal at the spatial centre of a convolution kernel (index ``(k - 1) // 2``
        along each spatial axis, as JAX), zero elsewhere.

        >>> import numpy as np, autodiff as ad
        >>> w = ad.nn.initializers.delta_orthogonal()(ad.random.key(0), (3, 2, 2))
        >>> np.allclose(w[1].T @ w[1], np.eye(2)), float(abs(w[0]).max())
        (True, 0.0)
        """
        def init(key, shape, dtype=dtype):
            shape = tuple(shape)
            if len(shape) not in (3, 4, 5):
                raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
            if shape[-1] < shape[-2]:
                raise ValueError("`fan_in` must be less or equal than `fan_out`.")
            ortho = initializers.orthogonal(scale, column_axis, dtype)(key, shape[-2:], dtype)
            centre = tuple((s - 1) // 2 for s in shape[:-2])
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
