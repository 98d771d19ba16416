"""``scipy.signal``'s ``convolve``, ``correlate``, ``convolve2d``, ``correlate2d``,
``fftconvolve``, ``detrend`` and the spectral functions ``stft``, ``istft``, ``csd``,
``welch`` (JAX's ``jax.scipy.signal``), with autograd's tensor form of
``convolve`` too; differentiable and jittable.

``convolve(in1, in2, mode='full')`` is scipy's N-d convolution,
``full[n] = Σ_k in1[k]·in2[n-k]`` over every axis, with ``mode`` ``'full'``,
``'valid'`` (only where the arrays overlap completely) or ``'same'`` (centred, the
size of ``in1``). autograd's ``convolve(A, B, axes=([...], [...]), dot_axes=([...],
[...]), mode='full'|'valid')`` convolves the listed axes of ``A`` with those of ``B``,
contracts ``dot_axes`` and keeps the rest: the result's axes are ``A``'s other axes,
then ``B``'s, then the convolved ones (the layout of autograd's convnet example).

It is computed as one tensor contraction of the smaller operand with a stack of
shifted slices of the larger one (``prod(kernel shape)`` slices): cheap for the small
kernels of filters and convolutional layers, not an FFT. ``fftconvolve`` multiplies
``autodiff.numpy.fft`` transforms instead (large kernels). As in JAX, the scipy-form calls
return floating (or complex) results for integer inputs.

>>> import numpy as np, autodiff as ad
>>> from autodiff.scipy.signal import convolve
>>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
array([0. , 1. , 2.5, 4. , 1.5])
>>> convolve(np.ones((4, 4)), np.ones((2, 2)), mode="valid")
array([[4., 4., 4.],
       [4., 4., 4.],
       [4., 4., 4.]])
>>> ad.grad(lambda k: convolve(np.arange(4.0), k, mode="valid").sum())(np.ones(2))
array([6., 3.])
"""
import itertools

import numpy as np

from .. import numpy as anp
from ..errors import UnsupportedError
from ..core import user_source

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve",
           "detrend", "stft", "csd", "welch", "istft"]


def _conv_core(A, B, axes_A, axes_B, dot_A, dot_B, mode):
    """Convolve ``axes_A`` of A (the kernel, looped over) with ``axes_B`` of B; output
    axes (A's others, B's others, convolved). ``mode`` is 'full' or 'valid'."""
    sizes_A = [A.shape[a] for a in axes_A]
    sizes_B = [B.shape[b] for b in axes_B]
    if mode == "full":
        widths = [(0, 0)] * B.ndim
        for b, m in zip(axes_B, sizes_A):
            widths[b] = (m - 1, m - 1)
        B = anp.pad(B, widths)
        sizes_B = [B.shape[b] for b in axes_B]
    out_sizes = [nb - na + 1 for na, nb in zip(sizes_A, sizes_B)]
    # out[n] = Σ_k A[k] B[n + m - 1 - k]: slice B at offset m-1-k for each kernel index k
    pieces, kernel_idx = [], []
    for k in itertools.product(*[range(m) for m in sizes_A]):
        idx = [slice(None)] * B.ndim
        for b, kk, m, n in zip(axes_B, k, sizes_A, out_sizes):
            idx[b] = slice(m - 1 - kk, m - 1 - kk + n)
        pieces.append(B[tuple(idx)])
        kernel_idx.append(k)
    stack = anp.stack(pieces)                  # (K, *B with convolved axes at output size)
    # A with its convolved axes flattened into one leading K axis, in the same order
    rest_A = [a for a in range(A.ndim) if a not in axes_A]
    A_k = anp.reshape(anp.transpose(A, list(axes_A) + rest_A),
                      (len(pieces),) + tuple(A.shape[a] for a in rest_A))
    dots_A = [1 + rest_A.index(a) for a in dot_A]
    out = anp.tensordot(A_k, stack, axes=([0] + dots_A, [0] + [1 + b for b in dot_B]))
    # tensordot leaves (A free, B free incl. convolved axes in B's order): move conv last
    n_free_A = len(rest_A) - len(dot_A)
    free_B = [b for b in range(B.ndim) if b not in dot_B]
    conv_pos = [n_free_A + free_B.index(b) for b in axes_B]
    others = [i for i in range(out.ndim) if i not in conv_pos]
    return anp.transpose(out, others + conv_pos)


def _tensor_convolve(A, B, axes, dot_axes, mode):
    A, B = anp.asarray(A), anp.asarray(B)
    if axes is None:
        axes = (list(range(A.ndim)), list(range(A.ndim)))
    axes_A, axes_B = [list(a) for a in axes]
    dot_A, dot_B = [list(d) for d in dot_axes]
    if len(axes_A) != len(axes_B) or len(dot_A) != len(dot_B):
        raise ValueError("convolve: axes and dot_axes must pair up axes of the two arrays")
    a_small = all(A.shape[a] <= B.shape[b] for a, b in zip(axes_A, axes_B))
    b_small = all(B.shape[b] <= A.shape[a] for a, b in zip(axes_A, axes_B))
    if mode == "valid" and not (a_small or b_small):
        raise ValueError("convolve: in 'valid' mode one array must be at least as large as "
                         "the other along every convolved axis")
    # loop over the operand with fewer kernel positions (convolution commutes)
    swap = (b_small and not a_small) if mode == "valid" else (
        np.prod([B.shape[b] for b in axes_B]) < np.prod([A.shape[a] for a in axes_A]))
    if not swap:
        return _conv_core(A, B, axes_A, axes_B, dot_A, dot_B, mode)
    out = _conv_core(B, A, axes_B, axes_A, dot_B, dot_A, mode)
    n_b = B.ndim - len(axes_B) - len(dot_B)
    n_a = A.ndim - len(axes_A) - len(dot_A)
    perm = (list(range(n_b, n_b + n_a)) + list(range(n_b)) +
            list(range(n_a + n_b, out.ndim)))
    return anp.transpose(out, perm)


def _inexact(x):
    """JAX's promote_dtypes_inexact for one array: integers and bools become float64."""
    x = anp.asarray(x)
    return x if np.dtype(anp.result_type(x)).kind in "fc" else anp.astype(x, np.float64)


def convolve(in1, in2, *args, mode=None, method="auto", axes=None, dot_axes=((), ()),
             precision=None):
    """scipy's ``convolve(in1, in2, mode='full', method='auto', precision=None)`` (JAX's
    signature) or autograd's ``convolve(A, B, axes=None, dot_axes=((), ()), mode='full')``:
    positional arguments after the arrays are read as ``mode``/``method`` when they are
    strings and as ``axes``/``dot_axes`` otherwise. ``method`` (``'auto'``, ``'direct'``,
    ``'fft'``) and ``precision`` are accepted for compatibility; the sum is computed
    directly in the inputs' precision. The scipy form returns a floating result for
    integer inputs (JAX's promotion).

    >>> import numpy as np
    >>> convolve(np.array([1, 2, 3]), np.array([1, 1]), "same")
    array([1., 3., 5.])
    """
    strings = [a for a in args if isinstance(a, str)]
    others = [a for a in args if not isinstance(a, str)]
    if len(strings) > 2 or len(others) > 2:
        raise TypeError("convolve: too many positional arguments")
    if strings:
        mode = strings[0] if mode is None else mode
    mode = "full" if mode is None else mode
    if others:
        axes = others[0]
        if len(others) > 1:
            dot_axes = others[1]
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"convolve: mode must be 'full', 'valid' or 'same', got {mode!r}")
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"convolve: method must be 'auto', 'direct' or 'fft', got {method!r}")
    scipy_form = axes is None and not any(dot_axes)
    if scipy_form:
        # (arrays of different ranks are autograd's form: A's axes against B's leading ones)
        in1, in2 = _inexact(in1), _inexact(in2)
    if mode != "same":
        return _tensor_convolve(in1, in2, axes, dot_axes, mode)
    in1, in2 = anp.asarray(in1), anp.asarray(in2)
    if not scipy_form:
        raise ValueError("convolve: mode='same' is scipy's form (every axis convolved)")
    if in1.ndim != in2.ndim:
        raise ValueError("convolve: in1 and in2 should have the same dimensionality")
    full = _tensor_convolve(in1, in2, None, ((), ()), "full")
    # scipy centres the full result on in1's size
    idx = tuple(slice((f - n) // 2, (f - n) // 2 + n) for f, n in zip(full.shape, in1.shape))
    return full[idx]


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """scipy's cross-correlation: ``convolve(in1, conj(in2) reversed on every axis, mode)``.

    >>> import numpy as np
    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    in2 = _inexact(in2)
    flipped = in2[tuple(slice(None, None, -1) for _ in range(in2.ndim))]
    return convolve(in1, anp.conj(flipped) if np.iscomplexobj(in2) else flipped, mode,
                    method=method)


def _check_2d(in1, in2, boundary, fillvalue, who):
    if boundary != "fill" or fillvalue != 0:
        raise UnsupportedError(f"{who}: only boundary='fill' with fillvalue=0 is supported",
                               source=user_source())
    if anp.ndim(in1) != 2 or anp.ndim(in2) != 2:
        raise ValueError(f"{who}: inputs must both be 2-D arrays")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """scipy's ``convolve2d`` (zero fill boundary).

    >>> import numpy as np
    >>> convolve2d(np.eye(2), np.ones((2, 2)), "valid")
    array([[2.]])
    """
    _check_2d(in1, in2, boundary, fillvalue, "convolve2d")
    return convolve(in1, in2, mode)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """scipy's ``correlate2d`` (zero fill boundary).

    >>> import numpy as np
    >>> correlate2d(np.eye(2), np.array([[1.0, 2.0]]), "valid")
    array([[1.],
           [2.]])
    """
    _check_2d(in1, in2, boundary, fillvalue, "correlate2d")
    s1, s2 = np.shape(in1), np.shape(in2)
    if mode == "valid" and s1 != s2 and all(a <= b for a, b in zip(s1, s2)):
        # scipy (and JAX) swap the operands here: sum_k in2[n + k] conj(in1[k])
        in1, in2 = _inexact(in1), _inexact(in2)
        return convolve(in2[::-1, ::-1], anp.conj(in1) if np.iscomplexobj(in1) else in1,
                        "valid")
    if mode != "same":
        return correlate(in1, in2, mode)
    # scipy's correlate2d centres 'same' at m//2 of the full result, correlate at (m-1)//2
    full = correlate(in1, in2, "full")
    in1, in2 = anp.asarray(in1), anp.asarray(in2)
    return full[tuple(slice(m // 2, m // 2 + n) for n, m in zip(in1.shape, in2.shape))]


def _normalize_axes(axes, ndim):
    if axes is None:
        return tuple(range(ndim))
    axes = (axes,) if np.ndim(axes) == 0 else tuple(axes)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"fftconvolve: axis {a} is out of bounds for {ndim}-d inputs")
        out.append(a % ndim)
    return tuple(sorted(set(out)))


def fftconvolve(in1, in2, mode="full", axes=None):
    """scipy's ``fftconvolve(in1, in2, mode='full', axes=None)``: the convolution of
    ``in1`` and ``in2`` along ``axes`` (all of them by default) computed as a product of
    discrete Fourier transforms. The other axes are batch axes and must have equal sizes
    (JAX's rule). ``mode`` is ``'full'``, ``'same'`` (centred, ``in1``'s size) or
    ``'valid'``. Integer inputs give a float64 result.

    >>> import numpy as np
    >>> np.round(fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])), 12) + 0.0
    array([0. , 1. , 2.5, 4. , 1.5])
    >>> fftconvolve(np.ones((2, 3)), np.ones((2, 2)), mode="valid", axes=1)
    array([[2., 2.],
           [2., 2.]])
    """
    in1, in2 = _inexact(in1), _inexact(in2)
    if in1.ndim != in2.ndim:
        raise ValueError("fftconvolve: in1 and in2 should have the same dimensionality")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"fftconvolve: mode must be 'full', 'same' or 'valid', got {mode!r}")
    axes = _normalize_axes(axes, in1.ndim)
    if any(in1.shape[i] != in2.shape[i] for i in range(in1.ndim) if i not in axes):
        raise ValueError(f"fftconvolve: mapped axes must have the same size; got shapes "
                         f"{in1.shape} and {in2.shape} with axes={axes}")
    if mode == "valid":
        no_swap = all(in1.shape[a] >= in2.shape[a] for a in axes)
        swap = all(in1.shape[a] <= in2.shape[a] for a in axes)
        if not (no_swap or swap):
            raise ValueError("fftconvolve: in 'valid' mode one input must be at least as "
                             "large as the other along every convolved axis")
        if swap and not no_swap:
            in1, in2 = in2, in1
    full = [in1.shape[a] + in2.shape[a] - 1 for a in axes]
    if all(in1.shape[a] == 1 or in2.shape[a] == 1 for a in axes):
        conv = in1 * in2                    # a product with a 1-long kernel: exact
    else:
        if np.iscomplexobj(in1) or np.iscomplexobj(in2):
            fft, ifft = anp.fft.fftn, anp.fft.ifftn
        else:
            fft, ifft = anp.fft.rfftn, anp.fft.irfftn
        conv = ifft(fft(in1, full, axes) * fft(in2, full, axes), full, axes)
    if mode == "full":
        out = full
    elif mode == "same":
        out = [in1.shape[a] for a in axes]
    else:
        out = [in1.shape[a] - in2.shape[a] + 1 for a in axes]
    idx = [slice(None)] * conv.ndim
    for a, f, o in zip(axes, full, out):
        idx[a] = slice((f - o) // 2, (f - o) // 2 + o)
    return conv[tuple(idx)]


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):  # noqa: A002
    """scipy's ``detrend``: ``data`` less its least-squares trend along ``axis``:
    ``type='constant'`` removes the mean, ``'linear'`` removes a straight line fitted
    separately on each piece between the breakpoints ``bp`` (static indices). Integer data
    gives float64. ``overwrite_data`` must be None (JAX's rule).

    >>> import numpy as np
    >>> np.round(detrend(np.array([1.0, 4.0, 8.0, 8.0, 9.0])), 12) + 0.0
    array([-1.,  0.,  2.,  0., -1.])
    >>> detrend(np.array([1.0, 4.0, 8.0, 8.0, 9.0]), type="constant")
    array([-5., -2.,  2.,  2.,  3.])
    """
    if overwrite_data is not None:
        raise UnsupportedError("detrend: overwrite_data is not supported (arrays are "
                               "immutable)", source=user_source())
    if type not in ("constant", "c", "linear", "l"):
        raise ValueError(f"detrend: type must be 'linear' or 'constant', got {type!r}")
    x = _inexact(data)
    if type in ("constant", "c"):
        return x - anp.mean(x, axis, keepdims=True)
    axis = int(axis) % x.ndim if x.ndim else 0
    n = x.shape[axis]
    bps = np.sort(np.unique(np.concatenate([[0], np.atleast_1d(np.asarray(bp, int)), [n]])))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("detrend: breakpoints must be non-negative and at most the length "
                         "of data along the axis")
    x = anp.moveaxis(x, axis, -1)
    dt = anp.result_type(x)
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        seg = x[..., int(lo):int(hi)]
        t = np.arange(hi - lo, dtype=np.float64)
        tc = t - t.mean()
        ss = float(np.dot(tc, tc))
        mean = anp.mean(seg, -1, keepdims=True)
        tc_arr = anp.asarray(tc.astype(np.dtype(dt).type(0).real.dtype))
        if ss > 0:
            slope = anp.sum(seg * tc_arr, -1, keepdims=True) / ss
            trend = mean + slope * tc_arr
        else:
            trend = mean
        pieces.append(seg - trend)
    return anp.moveaxis(anp.concatenate(pieces, -1), -1, axis)


# ----------------------------------------------------------------------------
# spectral analysis: stft, csd, welch (scipy's _spectral_helper, on static shapes)

def _symmetric_window(name, m):
    n = np.arange(m, dtype=np.float64)
    if m == 1:
        return np.ones(1)
    c = 2 * np.pi * n / (m - 1)
    if name in ("boxcar", "box", "ones", "rect", "rectangular"):
        return np.ones(m)
    if name in ("hann", "han", "hanning"):
        return 0.5 - 0.5 * np.cos(c)
    if name in ("hamming", "hamm", "ham"):
        return 0.54 - 0.46 * np.cos(c)
    if name in ("blackman", "black", "blk"):
        return 0.42 - 0.5 * np.cos(c) + 0.08 * np.cos(2 * c)
    if name in ("bartlett", "bart", "brt"):
        return np.where(n <= (m - 1) / 2, 2 * n / (m - 1), 2 - 2 * n / (m - 1))
    if name in ("triang", "triangle", "tri"):
        k = np.arange(1, (m + 1) // 2 + 1, dtype=np.float64)
        if m % 2 == 0:
            w = (2 * k - 1) / m
            return np.concatenate([w, w[::-1]])
        w = 2 * k / (m + 1)
        return np.concatenate([w, w[-2::-1]])
    raise UnsupportedError(f"window {name!r} is not supported; autodiff has 'boxcar', 'hann', "
                           "'hamming', 'blackman', 'bartlett', 'triang' or an array",
                           source=user_source())


def _get_window(window, nperseg):
    """scipy's ``get_window(window, nperseg)`` (periodic, ``fftbins=True``) for the
    parameter-free windows."""
    name = window
    if isinstance(window, tuple):
        if len(window) != 1:
            raise UnsupportedError(f"window {window!r}: windows with parameters are not "
                                   "supported; pass the window as an array",
                                   source=user_source())
        name = window[0]
    if nperseg == 1:
        _symmetric_window(str(name).lower(), 1)          # (validates the name)
        return np.ones(1)                                # scipy: every 1-point window is [1]
    return _symmetric_window(str(name).lower(), nperseg + 1)[:nperseg]


def _triage_segments(window, nperseg, input_length):
    """The window array and the segment length (scipy's rules)."""
    if isinstance(window, (str, tuple)):
        if nperseg is None:
            nperseg = 256
        if nperseg > input_length:
            nperseg = input_length
        return _get_window(window, nperseg), nperseg
    win = anp.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.shape[0]:
        raise ValueError("window is longer than input signal")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, win.shape[0]


def _odd_ext(x, n):
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"the extension length n ({n}) is too big: it must not exceed "
                         f"x.shape[axis] - 1 = {x.shape[-1] - 1}")
    left = 2 * x[..., :1] - x[..., 1:n + 1][..., ::-1]
    right = 2 * x[..., -1:] - x[..., -(n + 1):-1][..., ::-1]
    return anp.concatenate([left, x, right], -1)


def _extend(x, n, boundary):
    if boundary == "odd":
        return _odd_ext(x, n)
    widths = [(0, 0)] * (x.ndim - 1) + [(n, n)]
    mode = {"even": "reflect", "constant": "edge", "zeros": "constant"}[boundary]
    return anp.pad(x, widths, mode=mode)


def _segments_fft(x, win, detrend_func, nperseg, noverlap, nfft, sides):
    step = nperseg - noverlap
    starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
    idx = starts[:, None] + np.arange(nperseg)[None, :]
    segs = anp.take(x, idx, axis=-1)                    # (..., nseg, nperseg)
    segs = detrend_func(segs)
    segs = win * segs
    if sides == "twosided":
        return anp.fft.fft(segs, n=nfft)
    return anp.fft.rfft(anp.real(segs), n=nfft)


def _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend_type,
                     return_onesided, scaling, axis, mode, boundary=None, padded=False):
    if boundary not in (None, "even", "odd", "constant", "zeros"):
        raise ValueError(f"unknown boundary option {boundary!r}, must be one of "
                         "['even', 'odd', 'constant', 'zeros', None]")
    x = _inexact(x)
    if y is not None:
        y = _inexact(y)
        dt = anp.result_type(x, y)
        x, y = anp.astype(x, dt), anp.astype(y, dt)
        if x.ndim != y.ndim:
            raise ValueError(f"x and y must have the same rank ({x.ndim} vs {y.ndim})")
    real_dt = np.finfo(anp.result_type(x)).dtype
    result_dt = np.result_type(real_dt, np.complex64)
    axis = int(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for a {x.ndim}-d input")
    axis = axis % x.ndim            # the result has a segment axis more: count from the front
    x = anp.moveaxis(x, axis, -1)
    if y is not None:
        y = anp.moveaxis(y, axis, -1)
        if x.shape[-1] != y.shape[-1]:               # zero-pad the shorter one
            n = max(x.shape[-1], y.shape[-1])
            x = anp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])
            y = anp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, n - y.shape[-1])])
    if nperseg is not None:
        nperseg = int(nperseg)
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _triage_segments(window, nperseg, x.shape[-1])
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg - noverlap
    if boundary is not None:
        x = _extend(x, nperseg // 2, boundary)
        if y is not None:
            y = _extend(y, nperseg // 2, boundary)
    if padded:
        nadd = (-(x.shape[-1] - nperseg) % nstep) % nperseg
        x = anp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, nadd)])
        if y is not None:
            y = anp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, nadd)])
    if isinstance(detrend_type, str):
        def detrend_func(d):
            return detrend(d, axis=-1, type=detrend_type)
    elif callable(detrend_type):
        if axis != x.ndim - 1:
            def detrend_func(d):
                return anp.moveaxis(detrend_type(anp.moveaxis(d, -1, axis)), axis, -1)
        else:
            detrend_func = detrend_type
    elif not detrend_type:
        def detrend_func(d):
            return d
    else:
        raise ValueError(f"unsupported detrend type: {detrend_type!r}")
    if isinstance(win, np.ndarray):
        win = win.astype(real_dt)
    if scaling == "density":
        scale = 1.0 / (fs * anp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / anp.sum(win) ** 2
    else:
        raise ValueError(f"unknown scaling: {scaling!r}")
    if mode == "stft":
        scale = anp.sqrt(scale)
    complex_in = np.iscomplexobj(x) or (y is not None and np.iscomplexobj(y))
    sides = "onesided" if return_onesided and not complex_in else "twosided"
    if sides == "twosided":
        freqs = anp.asarray(np.fft.fftfreq(nfft), real_dt) * fs
    else:
        freqs = anp.asarray(np.fft.rfftfreq(nfft), real_dt) * fs
    result = _segments_fft(x, win, detrend_func, nperseg, noverlap, nfft, sides)
    if y is not None:
        result = anp.conj(result) * _segments_fft(y, win, detrend_func, nperseg, noverlap,
                                                  nfft, sides)
    elif mode == "psd":
        result = anp.conj(result) * result
    result = result * scale
    if sides == "onesided" and mode == "psd":
        mult = np.ones(result.shape[-1], real_dt)
        mult[1:None if nfft % 2 else -1] = 2
        result = result * mult
    time = anp.asarray(np.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, nstep), real_dt)
    if boundary is not None:
        time = time - nperseg / 2
    time = time / fs
    result = anp.astype(result, result_dt)
    if y is None and mode != "stft":
        result = anp.real(result)
    return freqs, time, anp.moveaxis(result, -1, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """scipy's short-time Fourier transform: ``(freqs, times, Zxx)`` with the frequencies
    along ``axis`` of ``Zxx`` and the segments on its last axis. ``window`` is a name
    (``'hann'``, ``'hamming'``, ``'blackman'``, ``'triang'``, ``'boxcar'``, ``'bartlett'``;
    periodic, as scipy's ``get_window``) or an array; ``detrend`` is False, ``'constant'``,
    ``'linear'`` or a function; ``boundary`` is ``'zeros'``, ``'even'``, ``'odd'``,
    ``'constant'`` or None. Complex input gives a two-sided transform.

    >>> import numpy as np
    >>> f, t, Z = stft(np.ones(8), nperseg=4)
    >>> f, t
    (array([0.  , 0.25, 0.5 ]), array([0., 2., 4., 6., 8.]))
    >>> np.round(np.abs(Z[0]), 6)             # the mean of each hann-windowed segment
    array([0.75, 1.  , 1.  , 1.  , 0.25])
    """
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, "spectrum", axis, "stft", boundary, padded)


def _median_bias(n):
    ii = np.arange(2.0, n, 2)
    return 1 + np.sum(1.0 / (ii + 1) - 1.0 / ii)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
    """scipy's cross power spectral density by Welch's method: ``(freqs, Pxy)``, the
    average (``'mean'`` or ``'median'``) over segments of ``conj(X) Y`` scaled to a
    ``'density'`` or a ``'spectrum'``. ``y=None`` means ``y = x`` (the PSD); signals of
    different lengths are zero-padded to the longer.

    >>> import numpy as np
    >>> t = np.arange(64)
    >>> f, P = csd(np.cos(np.pi * t / 2), np.cos(np.pi * t / 2), nperseg=16)
    >>> float(f[np.argmax(np.abs(P))])
    0.25
    """
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = anp.astype(pxy, np.result_type(anp.result_type(pxy), np.complex64))
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1])
                if np.iscomplexobj(pxy):
                    pxy = (anp.median(anp.real(pxy), axis=-1)
                           + 1j * anp.median(anp.imag(pxy), axis=-1))
                else:
                    pxy = anp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = anp.mean(pxy, axis=-1)
            else:
                raise ValueError(f"choose a valid averaging method ('mean' or 'median'), "
                                 f"not {average!r}")
        else:
            pxy = anp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """scipy's power spectral density by Welch's method: ``(freqs, Pxx)``, real (see
    :func:`csd` for the arguments).

    >>> import numpy as np
    >>> f, P = welch(np.cos(np.pi * np.arange(64) / 2), nperseg=16)
    >>> float(f[np.argmax(P)])
    0.25
    """
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, anp.real(pxx)


def _overlap_and_add(x, step):
    """Frames ``x[..., n, :]`` (length S) added at offsets ``n * step``: the output has
    ``step * (N - 1) + S`` samples. Each frame is cut into ``ceil(S / step)`` blocks of
    ``step``; block ``p`` of frame ``n`` lands on output block ``n + p``."""
    *batch, nframes, seglen = x.shape
    nblocks = -(-seglen // step)
    x = anp.pad(x, [(0, 0)] * (len(batch) + 1) + [(0, nblocks * step - seglen)])
    x = anp.reshape(x, tuple(batch) + (nframes, nblocks, step))
    total = None
    for p in range(nblocks):
        piece = anp.pad(x[..., p, :], [(0, 0)] * len(batch) + [(p, nblocks - 1 - p), (0, 0)])
        total = piece if total is None else total + piece
    out = anp.reshape(total, tuple(batch) + ((nframes + nblocks - 1) * step,))
    return out[..., :step * (nframes - 1) + seglen]


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """scipy's inverse short-time Fourier transform: ``(times, x)`` from the STFT ``Zxx``
    (frequencies on ``freq_axis``, segments on ``time_axis``) by windowed overlap-add,
    normalized by the summed squared window. ``boundary=True`` drops the ``nperseg // 2``
    samples :func:`stft`'s ``boundary`` added at each end.

    >>> import numpy as np
    >>> x = np.array([1., 2., 3., 2., 1., 0., 1., 2.])
    >>> _, _, Z = stft(x, nperseg=4)
    >>> t, y = istft(Z)
    >>> np.round(y, 12) + 0.0
    array([1., 2., 3., 2., 1., 0., 1., 2.])
    """
    Z = anp.asarray(Zxx)
    if Z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis, time_axis = int(freq_axis) % Z.ndim, int(time_axis) % Z.ndim
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    real_dt = np.finfo(anp.result_type(Z)).dtype if np.dtype(
        anp.result_type(Z)).kind in "fc" else np.dtype(np.float64)
    Z = anp.astype(Z, np.result_type(real_dt, np.complex64))
    n_default = 2 * (Z.shape[freq_axis] - 1) if input_onesided else Z.shape[freq_axis]
    nperseg = n_default if nperseg is None else int(nperseg)
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft = nperseg if (input_onesided and nperseg == n_default + 1) else n_default
    elif int(nfft) < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    nfft = int(nfft)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg - noverlap
    if time_axis != Z.ndim - 1 or freq_axis != Z.ndim - 2:
        outer = [i for i in range(Z.ndim) if i not in (time_axis, freq_axis)]
        Z = anp.transpose(Z, outer + [freq_axis, time_axis])
    ifunc = anp.fft.irfft if input_onesided else anp.fft.ifft
    xsubs = ifunc(Z, n=nfft, axis=-2)[..., :nperseg, :]        # (..., nperseg, nseg)
    if isinstance(window, (str, tuple)):
        win = _get_window(window, nperseg).astype(real_dt)
    else:
        win = anp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    xsubs = xsubs * anp.sum(win)                                 # the 'spectrum' scaling
    frames = anp.swapaxes(xsubs * anp.reshape(win, (-1, 1)), -2, -1)
    x = _overlap_and_add(frames, nstep)
    nseg = xsubs.shape[-1]
    norm = _overlap_and_add(anp.broadcast_to(win * win, (nseg, nperseg)), nstep)
    if boundary:
        x = x[..., nperseg // 2:-(nperseg // 2)]
        norm = norm[..., nperseg // 2:-(nperseg // 2)]
    x = x / anp.where(norm > 1e-10, norm, 1.0)
    if input_onesided:
        x = anp.real(x)
    if x.ndim > 1 and time_axis != Z.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = anp.moveaxis(x, -1, time_axis)
    time = anp.asarray(np.arange(x.shape[0]), np.finfo(anp.result_type(x)).dtype) / fs
    return time, x
