"""The discrete Fourier transform: one linear primitive, ``fft``, on the trailing axes.

``fft_p.bind(x, fft_type=T, fft_lengths=(n₁, …, n_k))`` transforms the last ``k`` axes of
``x`` (as ``jax.lax.fft``), with numpy's default ("backward") normalization:

    FFT    complex (…, n₁…n_k)          -> complex (…, n₁…n_k)         y = F x
    IFFT   complex (…, n₁…n_k)          -> complex (…, n₁…n_k)         y = F⁻¹ x = F̄ x / N
    RFFT   real    (…, n₁…n_k)          -> complex (…, n₁…n_k//2+1)    the half spectrum of F x
    IRFFT  complex (…, n₁…n_k//2+1)     -> real    (…, n₁…n_k)         the inverse of RFFT

with ``N = n₁⋯n_k``. numpy's ``n``/``s`` (crop, zero-pad), ``axes`` and ``norm`` are
composed around it in :mod:`autodiff.numpy.fft`.

Transposes are taken with respect to the pairing ``⟨u, v⟩ = Re Σ u·v`` (no conjugation;
docs/complex.md), the pairing under which every C-linear map keeps its plain transpose:

- The DFT matrix ``F_jk = ω^{jk}`` (``ω = e^{-2πi/n}``) is symmetric, so ``FFTᵀ = FFT`` and
  ``IFFTᵀ = IFFT``.
- RFFT keeps the bins ``k ≤ n/2`` of ``F x`` for a real ``x``:
  ``⟨c, R x⟩ = Σ_j x_j Re Σ_k c_k ω^{jk}``, so ``Rᵀ c = Re Σ_k c_k ω^{jk}``. Written with the
  inverse transform (``Re(c ω^{jk}) = Re(c̄ ω^{-jk})``), and because IRFFT counts each interior
  bin twice (once for its mirror image) and the DC and (even ``n``) Nyquist bins once, with
  their imaginary parts dropped: ``Rᵀ c = N · IRFFT(s · c̄)``, ``s = 1`` on the DC and
  Nyquist bins and ``1/2`` on the interior ones.
- IRFFT is ``y_j = (1/n) Re[z₀ + 2 Σ_interior z_k ω^{-jk} + z_{n/2} (-1)^j]``, so
  ``⟨c, I z⟩ = Re Σ_k z_k (m_k/n) Σ_j c_j ω^{-jk}`` and ``Iᵀ c = conj(RFFT(c)) · m / N``,
  ``m = 1`` on the DC and Nyquist bins and ``2`` on the interior ones.

Over several axes the first ``k - 1`` are full complex transforms (symmetric), so the
same formulas hold with ``N`` the product of the lengths and ``s``/``m`` on the last axis.
Odd ``n`` has no Nyquist bin. The rules are written with ``fft_p`` itself, so they can be
transposed and differentiated again (``FFTᵀᵀ = FFT``, ``Rᵀᵀ = R``).

>>> import numpy as np
>>> from autodiff.primitives.fft import fft
>>> fft(np.array([1.0, 0.0, 0.0, 0.0], complex), "FFT", (4,))
array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
"""
import math

import numpy as np

from ..core import Primitive, ShapedArray, complex_dtype, real_dtype
from ..errors import DTypeError, ShapeError
from ._rules import defleading, deflinear, dtype_of, shape_of
from .elementwise import conj, mul
from .shape import broadcast_in_dim

__all__ = ["FFT_TYPES", "fft_p"]     # (the op ``fft`` is reached as P.fft.fft)

#: The transform kinds, as ``jax.lax.FftType`` names them.
FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")

fft_p = Primitive("fft")


def _trailing(x, fft_lengths):
    return tuple(range(np.ndim(x) - len(fft_lengths), np.ndim(x)))


def _fft_impl(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    axes = _trailing(x, fft_lengths)
    if fft_type == "FFT":
        return np.fft.fftn(x, axes=axes).astype(x.dtype, copy=False)
    if fft_type == "IFFT":
        return np.fft.ifftn(x, axes=axes).astype(x.dtype, copy=False)
    if fft_type == "RFFT":
        return np.fft.rfftn(x, axes=axes).astype(complex_dtype(x.dtype), copy=False)
    return np.fft.irfftn(x, s=fft_lengths, axes=axes).astype(real_dtype(x.dtype), copy=False)


def _fft_aval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if fft_type not in FFT_TYPES:
        raise ShapeError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    if k == 0 or x.ndim < k or any(int(n) < 1 for n in fft_lengths):
        raise ShapeError(f"fft: fft_lengths {fft_lengths} (each >= 1, at least one) do not fit "
                         f"an operand of shape {x.shape}")
    lengths = tuple(fft_lengths)
    tail = x.shape[x.ndim - k:]
    if fft_type == "RFFT":
        if x.dtype.kind != "f":
            raise DTypeError(f"fft: RFFT needs a real float operand, got {x.dtype}")
        expected = lengths
    else:
        if x.dtype.kind != "c":
            raise DTypeError(f"fft: {fft_type} needs a complex operand, got {x.dtype}")
        expected = lengths[:-1] + (lengths[-1] // 2 + 1,) if fft_type == "IRFFT" else lengths
    if tail != expected:
        raise ShapeError(f"fft: {fft_type} with fft_lengths {lengths} needs trailing axes "
                         f"{expected}, got shape {x.shape}")
    lead = x.shape[:x.ndim - k]
    if fft_type == "RFFT":
        return ShapedArray(lead + lengths[:-1] + (lengths[-1] // 2 + 1,), complex_dtype(x.dtype))
    if fft_type == "IRFFT":
        return ShapedArray(lead + lengths, real_dtype(x.dtype))
    return ShapedArray(x.shape, x.dtype)


def _last_axis_weights(ct, n, interior, ends):
    """An array of the shape of ``ct`` (complex, last axis ``n // 2 + 1`` bins) holding ``ends``
    on the DC bin and, for even ``n``, the Nyquist bin, and ``interior`` on the others."""
    m = n // 2 + 1
    w = np.full(m, interior, dtype=dtype_of(ct))
    w[0] = ends
    if n % 2 == 0:
        w[-1] = ends
    shape = shape_of(ct)
    return broadcast_in_dim(w, shape, (len(shape) - 1,))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    N = math.prod(fft_lengths)
    n = fft_lengths[-1]
    if fft_type in ("FFT", "IFFT"):            # the DFT matrix is symmetric
        return [fft(ct, fft_type, fft_lengths)]
    if fft_type == "RFFT":                     # Rᵀ c = N · IRFFT(s · c̄)
        s = _last_axis_weights(ct, n, 0.5 * N, 1.0 * N)
        return [fft(mul(conj(ct), s), "IRFFT", fft_lengths)]
    # IRFFT: Iᵀ c = conj(RFFT(c)) · m / N
    r = fft(ct, "RFFT", fft_lengths)
    return [mul(conj(r), _last_axis_weights(r, n, 2.0 / N, 1.0 / N))]


fft_p.impl = _fft_impl
fft_p.abstract_eval = _fft_aval
deflinear(fft_p, _fft_transpose)
defleading(fft_p, lambda size, **params: params)   # batch axes lead; the trailing axes stay


def fft(x, fft_type, fft_lengths):
    """The ``fft_type`` transform of the last ``len(fft_lengths)`` axes of ``x`` (binds
    ``fft_p``; numpy's default normalization: IFFT and IRFFT divide by the product of the
    lengths)."""
    fft_type = str(fft_type).upper()
    if fft_type not in FFT_TYPES:
        raise ShapeError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=tuple(int(n) for n in fft_lengths))
