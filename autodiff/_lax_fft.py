"""``jax.lax.fft``: the FFTs over the last axes, by ``autodiff.numpy.fft``.

>>> import numpy as np, autodiff as ad
>>> ad.lax.fft(np.array([1.0, 0.0, 0.0, 0.0]), "RFFT", (4,))
array([1.+0.j, 1.+0.j, 1.+0.j])
"""
import enum

import numpy as np

from . import numpy as anp
from .errors import DTypeError, ShapeError

__all__ = ["FftType", "fft"]


# ----------------------------------------------------------------------------
# FFT and random bits
# ----------------------------------------------------------------------------

class FftType(enum.IntEnum):
    """The kinds of ``lax.fft``."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _kind(fft_type):
    if isinstance(fft_type, FftType):
        return fft_type
    name = getattr(fft_type, "name", str(fft_type)).upper().split(".")[-1]
    if name not in FftType.__members__:
        raise ValueError(f"Unknown FFT type {fft_type!r}; expected one of "
                         f"{list(FftType.__members__)} (any case) or a lax.FftType")
    return FftType[name]


def _check(kind, shape, dtype, lengths):
    """JAX's shape rules: ``fft_lengths`` describe the trailing axes exactly (no implicit
    crop or pad, unlike ``numpy.fft``'s ``s``)."""
    k, nd = len(lengths), len(shape)
    name = kind.name
    if nd < k:
        raise ShapeError(f"FFT input shape {tuple(shape)} must have at least as many input "
                         f"dimensions as fft_lengths {lengths}")
    tail = tuple(shape[nd - k:])
    if kind == FftType.RFFT:
        if dtype not in (np.float32, np.float64):
            raise DTypeError(f"RFFT input must be float32 or float64, got {dtype}")
        if tail != lengths:
            raise ShapeError(f"RFFT input shape {tuple(shape)} minor dimensions must be equal "
                             f"to fft_lengths {lengths}")
    elif kind == FftType.IRFFT:
        if tail[:-1] != lengths[:-1] or (k and tail[-1] != lengths[-1] // 2 + 1):
            raise ShapeError(f"IRFFT input shape {tuple(shape)} minor dimensions must be equal "
                             f"to all except the last fft_length, got fft_lengths={lengths}")
    elif tail != lengths:
        raise ShapeError(f"{name} input shape {tuple(shape)} minor dimensions must be equal to "
                         f"fft_lengths {lengths}")


def fft(x, fft_type, fft_lengths):
    """An FFT over the last ``len(fft_lengths)`` axes: ``fft_type`` is an :class:`FftType`
    or its name in any case (``"FFT"``, ``"ifft"``, …); ``fft_lengths`` must be those axes'
    lengths (for ``IRFFT`` the real output's: the last input axis is ``n // 2 + 1``), as
    in JAX, else a :class:`~autodiff.errors.ShapeError`. FFT and IFFT of real input
    transform it as complex; IRFFT's imaginary parts of the DC (and Nyquist) bins are
    ignored.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.fft(np.array([1.0, 0.0, 0.0, 0.0]), "RFFT", (4,))
    array([1.+0.j, 1.+0.j, 1.+0.j])
    >>> ad.lax.fft(np.ones(3, complex), "ifft", (3,))
    array([1.+0.j, 0.+0.j, 0.+0.j])
    """
    kind = _kind(fft_type)
    lengths = tuple(int(n) for n in fft_lengths)
    x = anp.asarray(x)
    dt = np.dtype(anp.result_type(x))
    _check(kind, anp.shape(x), dt, lengths)
    if not lengths:
        return x
    axes = tuple(range(-len(lengths), 0))
    fn = {FftType.FFT: anp.fft.fftn, FftType.IFFT: anp.fft.ifftn, FftType.RFFT: anp.fft.rfftn,
          FftType.IRFFT: anp.fft.irfftn}[kind]
    if kind in (FftType.FFT, FftType.IFFT, FftType.IRFFT) and dt.kind != "c":
        x = anp.astype(x, np.result_type(dt, np.complex64))
    return fn(x, s=lengths, axes=axes)
