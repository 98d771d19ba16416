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
"""
import importlib.util
import sys
import threading

__all__ = ["lazy_blas_check"]

_lock = threading.Lock()
_done = False


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
