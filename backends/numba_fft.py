"""Numba CPU lowering of ``fft``: rocket-fft's DUCC0 transforms, called from the kernel.

An ``fft`` equation becomes one call of rocket-fft's low-level interface (``c2c``,
``r2c``, ``c2r``: DUCC0, the C++ successor of pocketfft that also runs ``scipy.fft``)
into a freshly allocated result, with the transformed (trailing) axes as a constant::

    # b, = fft[fft_lengths=(8,) fft_type='RFFT'] a
    B = np.empty((3, 5), np.complex128)
    _lit1(A, B, _lit0, True, 1.0, 1)         # rocket_fft.r2c, axes (1,), forward, scale 1

The scale factor is the primitive's normalization (``1/N`` for IFFT and IRFFT, from the
kernel's sizes); numpy's
``norm`` modes are multiplications the planner fuses around it. One thread per transform
(the kernels are serial by default; NUMBA_NOTES: thread start-up costs more than small
transforms take).

Why rocket-fft and not a host call (object mode) into numpy's pocketfft: measured on the
project's 2-core EPYC (numba 0.68.1, numpy 2.4, rocket-fft 0.4.1), warm, per call, complex
128 1-D transforms: n=64 0.72 µs vs 4.16 µs, n=1024 2.17 µs vs 8.89 µs, n=4096 7.98 µs vs
25.3 µs (numpy eager 2.98 / 7.83 / 24.4 µs); the cold cost is alike (a fresh process's
first compile 0.30 s vs 0.37 s, plus 0.1–0.2 s for importing rocket-fft). docs/fft.md has
the table. The module is imported by a generated kernel module only when its program
holds an ``fft``: ``rocket_fft`` is named in the kernel's source, never imported here.
(Upstream behaviour: rocket-fft registers a ``numba_extensions`` entry point, so once it is
installed Numba itself imports it when its first dispatcher is built, in any process that
compiles anything; docs/fft.md measures what that costs.)
"""
from importlib import metadata

from ..errors import UnsupportedError
from .dimensions import unify_axes
from .plan import register_lowering

__all__ = ["ROCKET_FFT_VERSION"]


def _rocket_version():
    try:
        return metadata.version("rocket-fft")
    except metadata.PackageNotFoundError:
        return None


#: The installed rocket-fft's version (in every fft kernel's source, hence its cache key),
#: or None when it is missing (then jit refuses an fft program, naming the package).
ROCKET_FFT_VERSION = _rocket_version()

# (routine, forward) of each transform kind; the routine's output array gives the lengths
_ROUTINES = {"FFT": ("c2c", True), "IFFT": ("c2c", False), "RFFT": ("r2c", True),
             "IRFFT": ("c2r", False)}


def _op_fft(ctx):
    if ROCKET_FFT_VERSION is None:
        raise UnsupportedError(
            "jit (cpu backend): fft needs the rocket-fft package (a dependency of autodiff: "
            "pip install rocket-fft), or run this function with backend='interpret'",
            source=ctx.e.source)
    mod = ctx.fb.mod
    typ, lengths = ctx.p["fft_type"], ctx.p["fft_lengths"]
    routine, forward = _ROUTINES[typ]
    fn = mod.global_const(f"__import__('rocket_fft', fromlist=['{routine}']).{routine}"
                          f"  # rocket-fft {ROCKET_FFT_VERSION}")
    rank = len(ctx.invar(0).aval.shape)
    axes = tuple(range(rank - len(lengths), rank))
    ax = mod.global_const(f"np.array({list(axes)!r}, dtype=np.int64)")
    # the inverses divide by N, the product of the output's transformed sizes: read from the
    # sizes the kernel has (constants when specialized, run-time slots in a shape-generic
    # kernel, which then serves every transform length)
    scale = "1.0" if forward else f"1.0 / ({ctx.prod(ctx.dims_out(0)[rank - len(lengths):])})"
    ctx.alloc(0)
    ctx.emit(f"{fn}({ctx.arr(0)}, {ctx.out(0)}, {ax}, {forward}, {scale}, 1)")


def _dim_fft(D, e):
    """Batch (leading) axes keep their sizes; so do the transformed axes, but for the last
    one of RFFT/IRFFT (n <-> n // 2 + 1)."""
    x, o = e.invars[0], e.outvars[0]
    rank = len(o.aval.shape)
    same = rank if e.params["fft_type"] in ("FFT", "IFFT") else rank - 1
    for i in range(same):
        unify_axes(D, x, i, o, i)


register_lowering("fft", "opaque", emit=_op_fft, dims=_dim_fft, cost=50)
