"""Workarounds for upstream Numba behaviour that costs autodiff's users time; one place.

Each function names the upstream behaviour it works around, and ``tests/test_jit_tiers.py``
has a test that shows the behaviour and the fix.

**Numba imports scipy.linalg on its first compile.** The first compilation in a process
loads Numba's implementation registries, among them ``numba.np.arraymath``, whose module
body runs ``_HAVE_BLAS = _check_blas()``; that calls ``numba.np.linalg.ensure_blas()``,
which does ``import scipy.linalg.cython_blas`` — and so imports the whole ``scipy.linalg``
package (0.2-0.8 s here: about a third of the first compile of a small kernel) just to
learn whether a BLAS exists. The flag only decides how ``np.convolve``/``np.correlate``
compute inner products. autodiff's kernels call numpy's own OpenBLAS for GEMM
(:mod:`.numba_runtime`), so a process that jits code without those functions never needs
scipy at all. :func:`lazy_blas_check` answers the question from the package index instead
(is scipy installed?), which gives Numba the same answer without the import; Numba's
linear-algebra code paths still call the real ``ensure_blas`` when they compile, so they
import scipy exactly when they use it.

**Numba runs every installed extension's entry point at its first dispatcher.**
``numba.core.entrypoints.init_all`` (called when the first ``Dispatcher`` or CPU context of
a process is built) loads each ``numba_extensions`` entry point. rocket-fft, autodiff's FFT
kernel library, registers one, and importing it imports ``scipy.fft`` and builds its
overloads: 0.1-0.2 s added to the first compile of every process, fft or not.
:func:`defer_fft_extension` runs the other extensions' entry points as Numba would and
leaves rocket-fft's to the kernels that call it (their generated source imports
``rocket_fft``, which registers everything on import; its entry point function is empty).

**Numba's np.log2 of float32 and float64 in one function does not compile.**
``numba.np.npyfuncs.np_real_log2_impl`` declares the LLVM intrinsic by its bare name
``llvm.log2`` with the type of the first call it lowers; a second call on the other float
type reuses that declaration and llvmlite refuses it ("Type of #1 arg mismatch: double !=
float"). A kernel computing ``log2`` of a float32 and a float64 array hit it.
:func:`fix_log2_intrinsic` replaces the real loops of ``np.log2`` in Numba's ufunc table
with the same code naming the typed intrinsic (``llvm.log2.f32``, ``llvm.log2.f64``).
"""
import importlib.util
import sys
import threading

__all__ = ["lazy_blas_check", "defer_fft_extension", "fix_log2_intrinsic"]

_lock = threading.Lock()
_done = False
_ext_done = False
_log2_done = False

#: extension packages whose Numba entry point waits for the kernels that use them
DEFERRED_EXTENSIONS = ("rocket_fft",)


def defer_fft_extension():
    """Initialize Numba's extensions now, except rocket-fft's (imported by fft kernels).

    Idempotent; a no-op once Numba has initialized its extensions itself, or when Numba's
    layout differs from the one this was written for. A failing extension warns, as in
    Numba.

    >>> from autodiff.backends.numba_upstream import defer_fft_extension
    >>> defer_fft_extension()
    >>> import numba.core.entrypoints as ep
    >>> ep._already_initialized
    True
    """
    global _ext_done
    if _ext_done:
        return
    with _lock:
        if _ext_done:
            return
        _ext_done = True
        try:
            import numba.core.entrypoints as ep
            from importlib import metadata
        except ImportError:            # pragma: no cover - another Numba layout
            return
        if getattr(ep, "_already_initialized", True):
            return
        ep._already_initialized = True
        import warnings
        try:
            eps = metadata.entry_points().select(group="numba_extensions", name="init")
        except Exception:  # noqa: BLE001 - a broken metadata index: let Numba's loader try
            ep._already_initialized = False
            return
        for entry in eps:
            if entry.module.split(".")[0] in DEFERRED_EXTENSIONS:
                continue
            try:
                entry.load()()
            except Exception as e:  # noqa: BLE001 - Numba's own policy: warn and go on
                warnings.warn(f"Numba extension module '{entry.module}' failed to load due "
                              f"to '{type(e).__name__}({e})'.", stacklevel=2)


def lazy_blas_check():
    """Import ``numba.np.arraymath`` with a BLAS check that does not import scipy.linalg.

    Idempotent and thread-safe; a no-op when arraymath is already imported (its answer is
    settled then) or when Numba's layout differs from the one this was written for.

    >>> from autodiff.backends.numba_upstream import lazy_blas_check
    >>> lazy_blas_check()
    >>> import numba.np.arraymath as am
    >>> am._HAVE_BLAS == (importlib.util.find_spec("scipy") is not None)
    True
    """
    global _done
    if _done:
        return
    with _lock:
        if _done:
            return
        _done = True
        if "numba.np.arraymath" in sys.modules:
            return
        try:
            import numba.np.linalg as nl
        except ImportError:            # pragma: no cover - another Numba layout
            return
        real = getattr(nl, "ensure_blas", None)
        if real is None:               # pragma: no cover - another Numba layout
            return

        def installed_check():
            if importlib.util.find_spec("scipy") is None:
                raise ImportError("scipy 0.16+ is required for linear algebra")

        nl.ensure_blas = installed_check
        try:
            import numba.np.arraymath as am
        finally:
            nl.ensure_blas = real
        # arraymath bound the name at import; later callers get the real check
        if getattr(am, "ensure_blas", None) is installed_check:
            am.ensure_blas = real


def fix_log2_intrinsic():
    """Make Numba's ``np.log2`` of real floats name its LLVM intrinsic by type.

    Idempotent and thread-safe; a no-op when Numba's layout differs from the one this was
    written for, or when its loops are no longer the faulty function.

    >>> import numba, numpy as np
    >>> from autodiff.backends.numba_upstream import fix_log2_intrinsic
    >>> fix_log2_intrinsic()
    >>> numba.njit(lambda a, b: (np.log2(a), np.log2(b)))(np.float64(8.0), np.float32(4.0))
    (3.0, 2.0)
    """
    global _log2_done
    if _log2_done:
        return
    with _lock:
        if _log2_done:
            return
        _log2_done = True
        try:
            import llvmlite.ir
            import numpy as np
            from numba.core import cgutils
            from numba.np import npyfuncs, ufunc_db
            ufunc_db._lazy_init_db()
            loops = ufunc_db._ufunc_db[np.log2]
        except (ImportError, AttributeError, KeyError):   # pragma: no cover - another layout
            return
        faulty = getattr(npyfuncs, "np_real_log2_impl", None)

        def real_log2(context, builder, sig, args):
            (x,) = args
            suffix = {"float": "f32", "double": "f64"}[str(x.type)]
            fnty = llvmlite.ir.FunctionType(x.type, [x.type])
            fn = cgutils.insert_pure_function(builder.module, fnty, name=f"llvm.log2.{suffix}")
            return builder.call(fn, [x])

        for key in ("f->f", "d->d"):
            if faulty is not None and loops.get(key) is faulty:
                loops[key] = real_log2
