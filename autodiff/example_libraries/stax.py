"""JAX's ``example_libraries.stax``: neural networks as ``(init_fun, apply_fun)`` pairs.

A layer is ``init_fun(rng, input_shape) -> (output_shape, params)`` and
``apply_fun(params, inputs, **kwargs) -> outputs``; combinators (``serial``,
``parallel``, ``FanOut``, ``FanInSum``, ``FanInConcat``, ``shape_dependent``) build
layers from layers. Everything is ``autodiff.numpy``, so ``grad``, ``vmap`` and
``jit`` apply to ``apply_fun``.

``rng`` is an ``ad.random`` key (JAX's convention) or a numpy ``Generator``
(``np.random.default_rng(0)``: initial weights drawn eagerly from numpy, and
``Dropout`` masks too, which ``jit`` would freeze; give keys under ``jit``).

Layers: ``Dense``, ``Conv`` / ``GeneralConv`` (any dimension numbers, ``'VALID'``,
``'SAME'`` or explicit padding, strides), ``Conv1D``, ``ConvTranspose`` /
``GeneralConvTranspose`` / ``Conv1DTranspose``, ``MaxPool``, ``AvgPool``,
``SumPool``, ``BatchNorm``, ``Dropout``, ``Flatten``, ``Identity`` and the activations
``Tanh``, ``Relu``, ``Exp``, ``LogSoftmax``, ``Softmax``, ``Softplus``, ``Sigmoid``,
``Elu``, ``LeakyRelu``, ``Selu``, ``Gelu`` (``elementwise(fun)`` makes more).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.example_libraries import stax
>>> init_fun, predict = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(3), stax.LogSoftmax)
>>> out_shape, params = init_fun(ad.random.key(0), (-1, 4))
>>> out_shape
(-1, 3)
>>> x = np.ones((5, 4))
>>> predict(params, x).shape
(5, 3)
>>> loss = lambda params: -anp.mean(predict(params, x)[:, 0])
>>> [w.shape for w, b in ad.grad(loss)(params)[::2]]
[(4, 16), (16, 3)]
"""
import functools
import importlib
import math

import numpy as np

from .. import nn
from .. import numpy as anp
from ..scipy.special import erf

__all__ = ["Dense", "GeneralConv", "Conv", "Conv1D", "GeneralConvTranspose", "ConvTranspose",
           "Conv1DTranspose", "BatchNorm", "Dropout", "Flatten",
           "Identity", "FanOut", "FanInSum", "FanInConcat", "MaxPool", "SumPool", "AvgPool",
           "serial", "parallel", "shape_dependent", "elementwise", "Tanh", "Relu", "Exp",
           "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu",
           "glorot_normal", "glorot", "normal", "randn", "zeros", "ones"]


# ----------------------------------------------------------------------------
# random numbers: an ad.random key or a numpy Generator

def _random():
    return importlib.import_module("autodiff.random")


def _split(rng, num=2):
    if rng is None:
        raise ValueError("stax: this layer needs an rng (an ad.random key or a numpy Generator)")
    if isinstance(rng, np.random.Generator):
        return rng.spawn(num)
    return list(_random().split(rng, num))


def _bernoulli(rng, p, shape):
    if isinstance(rng, np.random.Generator):
        return rng.random(shape) < p
    return _random().bernoulli(rng, p, shape)


# ----------------------------------------------------------------------------
# initializers: jax.nn.initializers' (``ad.nn.initializers``) for keys, numpy's for a
# Generator; any ``init(rng, shape, dtype)`` of ad.nn.initializers works with keys

zeros = nn.initializers.zeros
ones = nn.initializers.ones


def normal(stddev=1e-2):
    """``N(0, stddev²)`` entries."""
    keyed = nn.initializers.normal(stddev)

    def init(rng, shape, dtype=np.float64):
        if isinstance(rng, np.random.Generator):
            return stddev * rng.standard_normal(tuple(shape)).astype(dtype)
        return keyed(rng, tuple(shape), dtype)
    return init


randn = normal


def glorot_normal(in_axis=-2, out_axis=-1, scale=1.0):
    """Glorot & Bengio (2010): variance ``scale / mean(fan_in, fan_out)``, drawn from a
    normal truncated at ±2σ and rescaled (by 1/0.8796...) to keep that variance."""
    keyed = nn.initializers.variance_scaling(scale, "fan_avg", "truncated_normal", in_axis,
                                             out_axis)

    def init(rng, shape, dtype=np.float64):
        shape = tuple(shape)
        if not isinstance(rng, np.random.Generator):
            return keyed(rng, shape, dtype)
        receptive = math.prod(shape) / (shape[in_axis] * shape[out_axis])
        fan_in, fan_out = shape[in_axis] * receptive, shape[out_axis] * receptive
        stddev = math.sqrt(scale / ((fan_in + fan_out) / 2)) / 0.87962566103423978
        out = rng.standard_normal(shape)
        bad = np.abs(out) > 2
        while bad.any():                            # rejection: P(|z| > 2) ≈ 4.6%
            out[bad] = rng.standard_normal(int(bad.sum()))
            bad = np.abs(out) > 2
        return (stddev * out).astype(dtype)
    return init


glorot = glorot_normal


# ----------------------------------------------------------------------------
# layers

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """Affine layer ``x @ W + b`` on the last axis."""
    def init_fun(rng, input_shape):
        k1, k2 = _split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return anp.dot(inputs, W) + b
    return init_fun, apply_fun


def _pads(in_sizes, window, strides, padding):
    """(lo, hi) padding per spatial axis, for 'VALID', 'SAME' or explicit pairs."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * len(window)
        if padding.upper() == "SAME":
            out = []
            for n, k, s in zip(in_sizes, window, strides):
                total = max((-(-n // s) - 1) * s + k - n, 0)
                out.append((total // 2, total - total // 2))
            return out
        raise ValueError(f"padding must be 'VALID', 'SAME' or (lo, hi) pairs, got {padding!r}")
    return [tuple(p) for p in padding]


def _out_size(n, k, s, pad):
    if n is None or n < 0:
        return n
    return (n + pad[0] + pad[1] - k) // s + 1


def _windows(x, axes, window, strides, pads, fill):
    """Stack of every window offset: shape ``(prod(window),) + x.shape`` with the
    ``axes`` shrunk to the output size; ``x`` padded with ``fill`` first."""
    if any(p != (0, 0) for p in pads):
        widths = [(0, 0)] * x.ndim
        crop = [slice(None)] * x.ndim
        for ax, (lo, hi) in zip(axes, pads):
            widths[ax] = (max(lo, 0), max(hi, 0))
            crop[ax] = slice(max(-lo, 0), x.shape[ax] + max(lo, 0) + max(hi, 0) - max(-hi, 0))
        x = anp.pad(x, widths, constant_values=fill)[tuple(crop)]   # negative pads crop
    outs = [_out_size(x.shape[ax], k, s, (0, 0)) for ax, k, s in zip(axes, window, strides)]
    pieces = []
    for offset in np.ndindex(*window):
        idx = [slice(None)] * x.ndim
        for ax, o, s, n in zip(axes, offset, strides, outs):
            idx[ax] = slice(o, o + s * (n - 1) + 1, s)
        pieces.append(x[tuple(idx)])
    return anp.stack(pieces)


def _dilate(x, axis, d):
    """Insert ``d - 1`` zeros between neighbours along ``axis`` (a transposed
    convolution's input dilation)."""
    if d == 1:
        return x
    x = anp.moveaxis(x, axis, -1)
    n = x.shape[-1]
    z = anp.concatenate([x[..., None], anp.zeros(x.shape + (d - 1,), x.dtype)], -1)
    z = anp.reshape(z, x.shape[:-1] + (n * d,))[..., :(n - 1) * d + 1]
    return anp.moveaxis(z, -1, axis)


def _transpose_pads(sizes, window, strides, padding):
    """JAX's ``conv_transpose`` padding of the dilated input, per spatial axis."""
    out = []
    for i, (k, s) in enumerate(zip(window, strides)):
        if isinstance(padding, str) and padding.upper() == "SAME":
            total = k + s - 2
            lo = k - 1 if s > k - 1 else -(-total // 2)
        elif isinstance(padding, str) and padding.upper() == "VALID":
            total = k + s - 2 + max(k - s, 0)
            lo = k - 1
        elif isinstance(padding, str):
            raise ValueError(f"padding must be 'VALID', 'SAME' or (lo, hi) pairs, got {padding!r}")
        else:                         # explicit pairs pad the dilated input as given
            lo, hi = padding[i]
            total = lo + hi
        out.append((lo, total - lo))
    return out


def _general_conv(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                  transpose):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    spatial = [c for c in rhs_spec if c not in "IO"]
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def geometry(in_sizes):
        """(input dilation, pads, window strides, output sizes) per spatial axis."""
        if transpose:     # a stride-1 convolution of the input dilated by the strides
            pads = _transpose_pads(in_sizes, filter_shape, strides, padding)
            dil, win_strides = strides, one
            sizes = [None if n is None or n < 0 else (n - 1) * d + 1 for n, d in zip(in_sizes, dil)]
        else:
            pads = _pads(in_sizes, filter_shape, strides, padding)
            dil, win_strides, sizes = one, strides, in_sizes
        outs = [_out_size(n, k, s, p) for n, k, s, p in zip(sizes, filter_shape, win_strides, pads)]
        return dil, pads, win_strides, outs

    def init_fun(rng, input_shape):
        it = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                        else next(it) for c in rhs_spec]
        outs = geometry([input_shape[lhs_spec.index(c)] for c in spatial])[3]
        sizes = {"N": input_shape[lhs_spec.index("N")], "C": out_chan, **dict(zip(spatial, outs))}
        output_shape = tuple(sizes[c] for c in out_spec)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = _split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        x = anp.transpose(inputs, [lhs_spec.index("N")] + [lhs_spec.index(c) for c in spatial]
                          + [lhs_spec.index("C")])
        w = anp.transpose(W, [rhs_spec.index(c) for c in spatial]
                          + [rhs_spec.index("I"), rhs_spec.index("O")])
        dil, pads, win_strides, _ = geometry(list(x.shape[1:-1]))
        for ax, d in enumerate(dil):
            x = _dilate(x, 1 + ax, d)
        win = _windows(x, list(range(1, 1 + len(spatial))), filter_shape, win_strides, pads, 0.0)
        w = anp.reshape(w, (math.prod(filter_shape),) + tuple(w.shape[-2:]))
        y = anp.tensordot(win, w, axes=([0, win.ndim - 1], [0, 1]))     # N, spatial..., O
        canon = ["N"] + spatial + ["C"]
        return anp.transpose(y, [canon.index(c) for c in out_spec]) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """Convolution (cross-correlation, as ``lax.conv_general_dilated``) with layouts
    ``dimension_numbers = (lhs_spec, rhs_spec, out_spec)``, e.g.
    ``('NHWC', 'HWIO', 'NHWC')``; ``filter_shape`` and ``strides`` follow the spatial
    letters in ``rhs_spec``'s order."""
    return _general_conv(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                         b_init, transpose=False)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """Transposed convolution (``lax.conv_transpose`` with ``transpose_kernel=False``):
    the input dilated by ``strides``, padded so that ``'SAME'`` gives ``size·stride`` and
    ``'VALID'`` gives ``(size-1)·stride + k``, then convolved with stride 1."""
    return _general_conv(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                         b_init, transpose=True)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1D = functools.partial(GeneralConv, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalize over ``axis`` with batch statistics, then scale by ``gamma`` and shift by
    ``beta`` (parameters over the remaining axes)."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = _split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ax = tuple(a % x.ndim for a in axis)
        mean = anp.mean(x, axis=ax, keepdims=True)
        var = anp.mean((x - mean) ** 2, axis=ax, keepdims=True)
        z = (x - mean) / anp.sqrt(var + epsilon)
        keep = tuple(None if i in ax else slice(None) for i in range(x.ndim))
        if scale:
            z = z * gamma[keep]
        if center:
            z = z + beta[keep]
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying ``fun`` to its input."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


def _elu(x, alpha=1.0):
    return anp.where(x > 0, x, alpha * anp.expm1(anp.where(x > 0, 0.0, x)))


def _leaky_relu(x, negative_slope=1e-2):
    return anp.where(x >= 0, x, negative_slope * x)


def _selu(x):
    # Klambauer et al. (2017): the fixed point of mean 0, variance 1
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return scale * _elu(x, alpha)


def _gelu(x, approximate=True):
    if approximate:
        return 0.5 * x * (1 + anp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


Tanh = elementwise(anp.tanh)
Relu = elementwise(nn.relu)
Exp = elementwise(anp.exp)
LogSoftmax = elementwise(anp.log_softmax, axis=-1)
Softmax = elementwise(anp.softmax, axis=-1)
Softplus = elementwise(nn.softplus)
Sigmoid = elementwise(nn.sigmoid)
Elu = elementwise(_elu)
LeakyRelu = elementwise(_leaky_relu)
Selu = elementwise(_selu)
Gelu = elementwise(_gelu)


def _pooling_layer(kind):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        window_shape = tuple(window_shape)
        strides = tuple(strides) if strides else (1,) * len(window_shape)

        def spatial_axes(ndim):
            if spec is None:
                return list(range(1, 1 + len(window_shape)))
            return [i for i, c in enumerate(spec) if c not in "NC"]

        def init_fun(rng, input_shape):
            axes = spatial_axes(len(input_shape))
            pads = _pads([input_shape[a] for a in axes], window_shape, strides, padding)
            out = list(input_shape)
            for a, k, s, p in zip(axes, window_shape, strides, pads):
                out[a] = _out_size(input_shape[a], k, s, p)
            return tuple(out), ()

        def apply_fun(params, inputs, **kwargs):
            axes = spatial_axes(inputs.ndim)
            pads = _pads([inputs.shape[a] for a in axes], window_shape, strides, padding)
            if kind == "max":
                return anp.max(_windows(inputs, axes, window_shape, strides, pads, -np.inf), 0)
            total = anp.sum(_windows(inputs, axes, window_shape, strides, pads, 0.0), 0)
            if kind == "sum":
                return total
            # average over the window's entries inside the input (padding not counted)
            shape = [1] * inputs.ndim
            for a in axes:
                shape[a] = inputs.shape[a]
            count = np.sum(np.asarray(_windows(np.ones(shape), axes, window_shape, strides,
                                               pads, 0.0)), 0)
            return total / count
        return init_fun, apply_fun
    PoolingLayer.__name__ = {"max": "MaxPool", "sum": "SumPool", "avg": "AvgPool"}[kind]
    PoolingLayer.__doc__ = f"{kind} pooling over windows of the spatial axes (NHWC unless ``spec``)."
    return PoolingLayer


MaxPool = _pooling_layer("max")
SumPool = _pooling_layer("sum")
AvgPool = _pooling_layer("avg")


def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params, inputs, **kwargs):
    return anp.reshape(inputs, (inputs.shape[0], -1))


Flatten = (_flatten_init, _flatten_apply)
Identity = (lambda rng, input_shape: (input_shape, ()), lambda params, inputs, **kw: inputs)


def FanOut(num):
    """Copies of the input for ``num`` parallel branches."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


def _fan_in_sum_apply(params, inputs, **kwargs):
    return functools.reduce(lambda a, b: a + b, inputs)


FanInSum = (lambda rng, input_shape: (input_shape[0], ()), _fan_in_sum_apply)


def FanInConcat(axis=-1):
    """Concatenate the branches' outputs along ``axis``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(s[ax] for s in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return anp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Keep each entry with probability ``rate`` (JAX's meaning: the *keep* rate) and
    scale by ``1/rate``; ``apply_fun(params, x, rng=key)`` in ``'train'`` mode, the
    identity otherwise."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if mode != "train":
            return inputs
        if rng is None:
            raise ValueError("Dropout in 'train' mode needs apply_fun(params, inputs, rng=key); "
                             "build it with mode='test' for evaluation")
        keep = _bernoulli(rng, rate, inputs.shape)
        return anp.where(keep, inputs / rate, 0.0)
    return init_fun, apply_fun


def serial(*layers):
    """Layers applied one after another; ``rng`` is split between them."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = _split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _split(rng, len(layers)) if rng is not None else [None] * len(layers)
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layers applied to the matching entries of a list of inputs (use with ``FanOut``)."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = _split(rng, len(layers))
        pairs = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _split(rng, len(layers)) if rng is not None else [None] * len(layers)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape: ``make_layer(input_shape) -> (init, apply)``."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
