"""Scalar and small-array helpers called from the Numba kernels that jit generates.

Generated kernels (:mod:`autodiff.backends.numba_cpu`) import these by name. Each
reproduces numpy's semantics exactly where a plain Numba expression would not:
float ``%`` and ``//`` follow numpy's ``npy_divmod``, indices are clamped like the
interpreter's gather/scatter, and the LAPACK wrappers return NaN instead of
raising on a singular or non-positive-definite matrix (as the numpy ``impl`` of
the primitives does).

Every helper is compiled with ``fastmath=False`` explicitly: a helper without an
explicit setting inherits the fastmath flags of the first kernel that calls it,
and ``reassoc`` would fold ``x - fmod(x, y)`` style corrections away (see
NUMBA_NOTES.md). Generated kernels put a hash of this file into their cache key,
because Numba does not notice when an inlined helper changes.

>>> import numpy as np
>>> from autodiff.backends.numba_runtime import mod_f, floor_divide_f
>>> float(mod_f(-7.0, 2.0)), float(floor_divide_f(1.0, 0.1))   # numpy: 1.0, 9.0
(1.0, 9.0)
"""
import numpy as np
from numba import njit

_OPTS = dict(fastmath=False, error_model="numpy", nogil=True)


@njit(**_OPTS)
def mod_f(x, y):
    """numpy's float remainder: the sign of the divisor (``np.mod``)."""
    m = np.fmod(x, y)
    if y == 0:
        return m
    if m != 0:
        if (y < 0) != (m < 0):
            m += y
    else:
        m = np.copysign(m, y)          # m is a zero: give it the divisor's sign
    return m


@njit(**_OPTS)
def floor_divide_f(x, y):
    """numpy's float floor division (``npy_divmod``): 1.0 // 0.1 == 9.0, not 10.0."""
    if y == 0:
        return x / y
    m = np.fmod(x, y)
    d = (x - m) / y
    if m != 0:
        if (y < 0) != (m < 0):
            d -= 1
    if d != 0:
        fd = np.floor(d)
        if d - fd > 0.5:
            fd += 1
    else:
        fd = np.copysign(d, x / y)     # d is a zero: give it the quotient's sign
    return fd


@njit(**_OPTS)
def clip_index(i, n):
    """The gather/scatter index rule of the interpreter: clip to [-n, n-1], wrap negatives."""
    i = np.int64(i)
    if n <= 0:
        return np.int64(0)
    if i < -n:
        i = -n
    if i > n - 1:
        i = n - 1
    if i < 0:
        i += n
    return i


@njit(**_OPTS)
def trisolve_left(T, B, X, lower, trans, unit):
    """Solve ``op(tri(T)) X = B`` by substitution; ``op`` transposes when ``trans``.

    ``tri`` keeps the lower (``lower``) or upper triangle of ``T``; ``unit`` takes the
    diagonal as ones. The effective matrix is lower triangular iff ``lower != trans``.
    """
    n = T.shape[0]
    k = B.shape[1]
    eff_lower = lower != trans
    for c in range(k):
        for step in range(n):
            i = step if eff_lower else n - 1 - step
            acc = B[i, c]
            if eff_lower:
                for j in range(i):
                    m = T[j, i] if trans else T[i, j]
                    acc -= m * X[j, c]
            else:
                for j in range(i + 1, n):
                    m = T[j, i] if trans else T[i, j]
                    acc -= m * X[j, c]
            if not unit:
                acc = acc / T[i, i]
            X[i, c] = acc


@njit(**_OPTS)
def cholesky_into(A, L):
    """``L = cholesky(A)`` (lower triangle read), NaN where A is not positive definite."""
    try:
        r = np.linalg.cholesky(A)
        L[:, :] = r
    except Exception:  # noqa: BLE001 - LAPACK reports failure by raising
        L[:, :] = np.nan


@njit(**_OPTS)
def solve_into(A, B, X):
    """``X = solve(A, B)``, NaN where A is singular."""
    try:
        r = np.linalg.solve(A, B)
        X[:, :] = r
    except Exception:  # noqa: BLE001
        X[:, :] = np.nan


@njit(**_OPTS)
def slogdet_2d(A):
    """``(sign, log|det A|)`` of one square matrix."""
    if A.shape[0] == 0:
        return 1.0, 0.0
    s, l = np.linalg.slogdet(A)
    return s, l


@njit(**_OPTS)
def eigh_into(A, W, V):
    """Eigen-decomposition of a symmetric matrix reading its lower triangle."""
    if A.shape[0] == 0:
        return
    try:
        w, v = np.linalg.eigh(A)
        W[:] = w
        V[:, :] = v
    except Exception:  # noqa: BLE001
        W[:] = np.nan
        V[:, :] = np.nan


@njit(**_OPTS)
def select_fallback(c, a, b):
    """``a if c else b``; used only when numba_math (and its select intrinsic) is missing."""
    return a if c else b
