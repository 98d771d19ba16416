"""``scipy.signal``'s ``convolve``, ``correlate``, ``convolve2d``, ``correlate2d``, with
autograd's tensor form of ``convolve`` too; differentiable and jittable.

``convolve(in1, in2, mode='full')`` is scipy's N-d convolution,
``full[n] = Σ_k in1[k]·in2[n-k]`` over every axis, with ``mode`` ``'full'``,
``'valid'`` (only where the arrays overlap completely) or ``'same'`` (centred, the
size of ``in1``). autograd's ``convolve(A, B, axes=([...], [...]), dot_axes=([...],
[...]), mode='full'|'valid')`` convolves the listed axes of ``A`` with those of ``B``,
contracts ``dot_axes`` and keeps the rest: the result's axes are ``A``'s other axes,
then ``B``'s, then the convolved ones (the layout of autograd's convnet example).

It is computed as one tensor contraction of the smaller operand with a stack of
shifted slices of the larger one (``prod(kernel shape)`` slices): cheap for the small
kernels of filters and convolutional layers, not an FFT.

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

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]


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


def convolve(in1, in2, *args, mode=None, method="auto", axes=None, dot_axes=((), ())):
    """scipy's ``convolve(in1, in2, mode='full', method='auto')`` or autograd's
    ``convolve(A, B, axes=None, dot_axes=((), ()), mode='full')``: positional arguments
    after the arrays are read as ``mode``/``method`` when they are strings and as
    ``axes``/``dot_axes`` otherwise. ``method`` is accepted for scipy compatibility."""
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
    if mode != "same":
        return _tensor_convolve(in1, in2, axes, dot_axes, mode)
    in1, in2 = anp.asarray(in1), anp.asarray(in2)
    if axes is not None or any(dot_axes):
        raise ValueError("convolve: mode='same' is scipy's form (every axis convolved)")
    if in1.ndim != in2.ndim:
        raise ValueError("convolve: in1 and in2 should have the same dimensionality")
    full = _tensor_convolve(in1, in2, None, ((), ()), "full")
    # scipy centres the full result on in1's size
    idx = tuple(slice((f - n) // 2, (f - n) // 2 + n) for f, n in zip(full.shape, in1.shape))
    return full[idx]


def correlate(in1, in2, mode="full", method="auto"):
    """scipy's cross-correlation: ``convolve(in1, in2 reversed on every axis, mode)``."""
    in2 = anp.asarray(in2)
    flipped = in2[tuple(slice(None, None, -1) for _ in range(in2.ndim))]
    return convolve(in1, anp.conj(flipped) if np.iscomplexobj(in2) else flipped, mode)


def _check_2d(in1, in2, boundary, fillvalue, who):
    if boundary != "fill" or fillvalue != 0:
        raise UnsupportedError(f"{who}: only boundary='fill' with fillvalue=0 is supported", source=user_source())
    if anp.ndim(in1) != 2 or anp.ndim(in2) != 2:
        raise ValueError(f"{who}: inputs must both be 2-D arrays")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """scipy's ``convolve2d`` (zero fill boundary)."""
    _check_2d(in1, in2, boundary, fillvalue, "convolve2d")
    return convolve(in1, in2, mode)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """scipy's ``correlate2d`` (zero fill boundary)."""
    _check_2d(in1, in2, boundary, fillvalue, "correlate2d")
    if mode != "same":
        return correlate(in1, in2, mode)
    # scipy's correlate2d centres 'same' at m//2 of the full result, correlate at (m-1)//2
    full = correlate(in1, in2, "full")
    in1, in2 = anp.asarray(in1), anp.asarray(in2)
    return full[tuple(slice(m // 2, m // 2 + n) for n, m in zip(in1.shape, in2.shape))]
