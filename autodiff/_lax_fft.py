"""``jax.lax.fft``: the FFTs over the last axes, by ``autodiff.numpy.fft``.

>>> import numpy as np, autodiff as ad
>>> ad.lax.fft(np.array([1.0, 0.0, 0.0, 0.0]), "RFFT", (4,))
array([1.+0.j, 1.+0.j, 1.+0.j])
"""
import enum

import numpy as np

from . import numpy as anp

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
