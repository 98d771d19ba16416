"""Kernels for small dense linear algebra on the CUDA backend: ``solve``, ``slogdet``,
``cholesky`` and ``triangular_solve`` of matrices up to :data:`SMALL_N` on a side, a block
per matrix (per system of a batch), the matrix held in shared memory.

A Kalman filter, a Newton step of an implicit integrator or a Gaussian process update
inside ``lax.scan`` solves a small system every step. Through the library (cuSOLVER via
CuPy, else LAPACK on the host) each such call is a host statement, so the loop around it
was a host loop: several launches and a library call per step, and a host copy each step
without CuPy. As kernels these are launch records like any other, so the loop stays one
device loop (``numba_cuda_statements._DeviceBody``), and outside loops a small solve is
one launch.

The algorithms are LAPACK's unblocked ones, right-looking, so the results agree with
numpy's to rounding: ``getf2`` (partial pivoting, the first largest magnitude of the
column) with the right-hand sides carried through the elimination and ``trsm``'s back
substitution; ``potf2``'s column order; ``trsm`` for the triangular solves. A matrix
LAPACK reports singular (an exactly zero pivot) or not positive definite (a diagonal
that is not > 0, or NaN) gives NaN for that system, as the CPU backend and the
interpreter give (``primitives/linalg.py``). Complex matrices, larger ones and sizes not
known when the program is generated go to the library.

>>> from autodiff.backends.numba_cuda_linalg import fits
>>> fits((4, 3, 3), (4, 3, 2)), fits((64, 64),), fits(("n", "n"),)
(True, False, False)
"""
import re

import numpy as np

from .cuda_launches import Section

__all__ = ["SMALL_N", "fits", "solve_section", "slogdet_section", "cholesky_section",
           "triangular_section"]

#: the largest side of a matrix these kernels take: its float64 copy in shared memory is
#: 8 kB (two of the block-sized arrays ``cuda_launches.MAX_SHARED`` counts)
SMALL_N = 32


def fits(*dims):
    """Whether operands of these size texts (matrices last) suit a kernel here: every size
    known and nonzero, the matrix square, at most :data:`SMALL_N` on a side, equal batch
    sizes."""
    if not all(str(s).isdigit() for d in dims for s in d):
        return False
    a = [int(s) for s in dims[0]]
    if len(a) < 2 or a[-1] != a[-2] or not 1 <= a[-1] <= SMALL_N:
        return False
    if any(int(s) == 0 for d in dims for s in d):
        return False                    # nothing to solve: the library's empty result
    return all([int(s) for s in d[:-2]] == a[:-2] and len(d) == len(a) for d in dims[1:])


def _lanes(batch):
    """The block loop over the batch (a system per block and step), with the batch index
    names ``b0, b1, ...`` unravelled from ``_p``."""
    lines = [f"    for _p in range(cuda.blockIdx.x, {int(np.prod(batch or [1]))}, "
             "cuda.gridDim.x):"]
    rest = "_p"
    for k in range(len(batch) - 1, -1, -1):
        if k:
            lines += [f"        b{k} = {rest} % {batch[k]}",
                      f"        _u{k} = {rest} // {batch[k]}"]
            rest = f"_u{k}"
        else:
            lines.append(f"        b0 = {rest}")
    return lines


def _at(name, batch, r, c):
    return f"{name}[{', '.join([f'b{k}' for k in range(len(batch))] + [r, c])}]"


def _common(tname, n, t):
    """The section's shared arrays: the matrix (``_la<t>``), the failure flag and the
    pivot row; ``t`` makes the names the section's own (a kernel may merge several)."""
    return ["    _tx = cuda.threadIdx.x",
            f"    _la{t} = cuda.shared.array(({n}, {n}), {tname})",
            f"    _lf{t} = cuda.shared.array(1, _T_int32)",
            f"    _lp{t} = cuda.shared.array(1, _T_int64)"]


def _load(A, batch, n):
    """Copy the system's matrix into shared memory (``_la``), clear the failure flag."""
    src = _at(A, batch, "_e // " + str(n), "_e % " + str(n))
    return [f"        for _e in range(_tx, {n * n}, _TPB):",
            f"            _la[_e // {n}, _e % {n}] = {src}",
            "        if _tx == 0:", "            _lf[0] = 0", "        cuda.syncthreads()"]


def _own(lines, t):
    """The lines with the section's shared arrays and float temporaries named its own."""
    return [re.sub(r"(?<!\w)(_la|_lf|_lp|_lm|_ld|_lsw|_lsg|_lld)(?!\w)", rf"\g<1>{t}", ln)
            for ln in lines]


def _copy(X, B, batch, rows, cols):
    """X = B, both (batch, rows, cols)."""
    r, c = f"_e // {cols}", f"_e % {cols}"
    return [f"        for _e in range(_tx, {rows * cols}, _TPB):",
            f"            {_at(X, batch, r, c)} = {_at(B, batch, r, c)}"]


def _nan_if_failed(X, batch, rows, cols, nan):
    dst = _at(X, batch, f"_e // {cols}", f"_e % {cols}")
    return ["        cuda.syncthreads()", "        if _lf[0] != 0:",
            f"            for _e in range(_tx, {rows * cols}, _TPB):",
            f"                {dst} = {nan}", "        cuda.syncthreads()"]


def _section(tname, batch, inner, n, k, t):
    total = int(np.prod(batch or [1]))
    return Section("block", _common(tname, n, t), _lanes(batch), _own(inner, t), [],
                   str(total), elems=str(total * n * max(n, k)))


def _lu(x, n, k):
    """LAPACK's ``getf2`` on the shared copy ``_la``: per column the pivot (the first
    largest magnitude, LAPACK's ``idamax``; thread 0, which also counts the swaps in
    ``_nsw``), the rows swapped, the multipliers, the trailing update; the ``k``
    right-hand sides (``x(r, c)`` an element, none where ``k`` is 0) get the same swaps
    and eliminations. An exactly zero pivot sets the failure flag."""
    swap_x = [f"                        _lsw = {x('_c', f'_e - {n}')}",
              f"                        {x('_c', f'_e - {n}')} = {x('_r', f'_e - {n}')}",
              f"                        {x('_r', f'_e - {n}')} = _lsw"] if k else []
    lines = ["        _nsw = 0",
             f"        for _c in range({n}):",
             "            if _tx == 0:",
             "                _r = _c", "                _lm = abs(_la[_c, _c])",
             f"                for _q in range(_c + 1, {n}):",
             "                    if abs(_la[_q, _c]) > _lm:",
             "                        _lm = abs(_la[_q, _c])", "                        _r = _q",
             "                _lp[0] = _r",
             "                if _r != _c:", "                    _nsw += 1",
             "                if _lm == 0:", "                    _lf[0] = 1",
             "            cuda.syncthreads()",
             "            _r = _lp[0]",
             "            if _r != _c:",
             f"                for _e in range(_tx, {n + k}, _TPB):",
             f"                    if _e < {n}:",
             "                        _lsw = _la[_c, _e]",
             "                        _la[_c, _e] = _la[_r, _e]",
             "                        _la[_r, _e] = _lsw"]
    lines += (["                    else:"] + swap_x) if k else []
    lines += ["                cuda.syncthreads()",
              "            if _la[_c, _c] != 0:          # LAPACK scales by a nonzero pivot",
              f"                for _e in range(_c + 1 + _tx, {n}, _TPB):",
              "                    _la[_e, _c] = _la[_e, _c] / _la[_c, _c]",
              "            cuda.syncthreads()",
              f"            _w = {n} - _c - 1",
              f"            for _e in range(_tx, _w * (_w + {k}), _TPB):",
              f"                _q = _c + 1 + _e // (_w + {k})",
              f"                _j = _e % (_w + {k})"]
    if k:
        lines += ["                if _j < _w:",
                  "                    _la[_q, _c + 1 + _j] -= _la[_q, _c] * _la[_c, _c + 1 + _j]",
                  "                else:",
                  f"                    {x('_q', '_j - _w')} -= "
                  f"_la[_q, _c] * {x('_c', '_j - _w')}"]
    else:
        lines.append("                _la[_q, _c + 1 + _j] -= _la[_q, _c] * _la[_c, _c + 1 + _j]")
    return lines + ["            cuda.syncthreads()"]


def solve_section(A, B, X, batch, n, k, tname, nan, t):
    """``X = A⁻¹ B`` for ``A`` (batch, n, n), ``B`` and ``X`` (batch, n, k): LU with
    partial pivoting of the shared copy of ``A`` (:func:`_lu`), the same row swaps and
    eliminations applied to ``X`` (a copy of ``B``), then back substitution with ``U``."""
    def x(r, c):
        return _at(X, batch, r, c)
    inner = _load(A, batch, n) + _copy(X, B, batch, n, k) + ["        cuda.syncthreads()"]
    inner += _lu(x, n, k)
    inner += _back(x, n, k, upper=True, unit=False, m=lambda r, c: f"_la[{r}, {c}]")
    inner += _nan_if_failed(X, batch, n, k, nan)
    return _section(tname, batch, inner, n, k, t)


def slogdet_section(A, S, L, batch, n, tname, lits, log, t):
    """``S`` (sign) and ``L`` (log of the absolute determinant) of each ``A`` (batch, n, n)
    from its LU (:func:`_lu`): the signs of ``U``'s diagonal and of the row swaps, the sum
    of the logs of its magnitudes; numpy's ``(0, -inf)`` for an exactly singular matrix
    (a NaN pivot leaves the sign as it is, as numpy's). ``lits``: the literals 0, 1, -1
    and -inf in the dtype. An output of rank 0 is a 1-element buffer (``S``/``L`` then
    index ``[0]``)."""
    zero, one, minus, ninf = lits
    at = (lambda O: f"{O}[0]") if not batch else (          # noqa: E731
        lambda O: f"{O}[{', '.join(f'b{k}' for k in range(len(batch)))}]")
    inner = _load(A, batch, n) + _lu(None, n, 0)
    inner += ["        if _tx == 0:",
              f"            _lsg = {one} if _nsw % 2 == 0 else {minus}",
              f"            _lld = {zero}",
              f"            for _c in range({n}):",
              "                _ld = _la[_c, _c]",
              f"                if _ld < 0:                  # (numpy: a NaN counts as > 0)",
              "                    _lsg = -_lsg",
              f"                _lld = _lld + {log('abs(_ld)')}",
              "            if _lf[0] != 0:",
              f"                _lsg = {zero}", f"                _lld = {ninf}",
              f"            {at(S)} = _lsg", f"            {at(L)} = _lld",
              "        cuda.syncthreads()"]
    return _section(tname, batch, inner, n, 0, t)


def _back(x, n, k, upper, unit, m):
    """Right-looking substitution (BLAS ``trsm``, left side) of ``M Y = Y`` in place, ``M``
    triangular (``m(r, c)`` its element): for each row in order, the row divided by the
    diagonal (unless ``unit``), then subtracted from the rows after it."""
    order = f"range({n} - 1, -1, -1)" if upper else f"range({n})"
    later = "_e // " + str(k) if upper else f"_c + 1 + _e // {k}"
    count = f"_c * {k}" if upper else f"({n} - 1 - _c) * {k}"
    lines = [f"        for _c in {order}:"]
    if not unit:
        lines += [f"            for _e in range(_tx, {k}, _TPB):",
                  f"                {x('_c', '_e')} = {x('_c', '_e')} / {m('_c', '_c')}",
                  "            cuda.syncthreads()"]
    lines += [f"            for _e in range(_tx, {count}, _TPB):",
              f"                _q = {later}", f"                _j = _e % {k}",
              f"                {x('_q', '_j')} -= {m('_q', '_c')} * {x('_c', '_j')}",
              "            cuda.syncthreads()"]
    return lines


def cholesky_section(A, L, batch, n, tname, nan, zero, one, sqrt, t):
    """``L`` (batch, n, n), lower, with ``L Lᵀ = A`` from ``A``'s lower triangle: column by
    column, the diagonal's square root, the column scaled, the trailing lower triangle
    updated; a diagonal that is not > 0 (or NaN) fails the matrix."""
    inner = _load(A, batch, n)
    inner += [f"        for _c in range({n}):",
              "            if _tx == 0:",
              "                _ld = _la[_c, _c]",
              "                if _ld > 0:",
              f"                    _la[_c, _c] = {sqrt('_ld')}",
              "                else:                          # (not a square root of it)",
              "                    _lf[0] = 1", f"                    _la[_c, _c] = {one}",
              "            cuda.syncthreads()",
              f"            for _e in range(_c + 1 + _tx, {n}, _TPB):",
              "                _la[_e, _c] = _la[_e, _c] / _la[_c, _c]",
              "            cuda.syncthreads()",
              f"            _w = {n} - _c - 1",
              "            for _e in range(_tx, _w * _w, _TPB):",
              "                _q = _c + 1 + _e // _w", "                _j = _c + 1 + _e % _w",
              "                if _j <= _q:",
              "                    _la[_q, _j] -= _la[_q, _c] * _la[_j, _c]",
              "            cuda.syncthreads()",
              f"        for _e in range(_tx, {n * n}, _TPB):",
              f"            _q = _e // {n}", f"            _j = _e % {n}",
              "            if _lf[0] != 0:",
              f"                {_at(L, batch, '_q', '_j')} = {nan}",
              "            elif _j <= _q:",
              f"                {_at(L, batch, '_q', '_j')} = _la[_q, _j]",
              "            else:",
              f"                {_at(L, batch, '_q', '_j')} = {zero}",
              "        cuda.syncthreads()"]
    return _section(tname, batch, inner, n, n, t)


def triangular_section(A, B, X, batch, n, k, tname, left_side, lower, transpose_a,
                       unit_diagonal, t):
    """``op(T) X = B`` (``left_side``) or ``X op(T) = B``, ``T`` the ``lower`` (else upper)
    triangle of ``A`` with a unit diagonal where ``unit_diagonal``, ``op`` a transpose
    where ``transpose_a``. The right side is the left side of the transposes
    (``op(T)ᵀ Xᵀ = Bᵀ``), so one substitution serves the four cases: ``M`` below is
    ``op(T)`` or its transpose, lower or upper, read from ``T`` in place. ``k``: the
    right-hand sides (``B``'s columns, or its rows on the right side)."""
    flip = transpose_a != (not left_side)       # M = Tᵀ
    m_lower = lower != flip
    m = (lambda r, c: f"_la[{c}, {r}]") if flip else (lambda r, c: f"_la[{r}, {c}]")  # noqa: E731
    xt = not left_side                                  # Y = Xᵀ in the array
    def x(r, c):
        return _at(X, batch, c, r) if xt else _at(X, batch, r, c)
    inner = _load(A, batch, n) + (_copy(X, B, batch, k, n) if xt else _copy(X, B, batch, n, k))
    inner.append("        cuda.syncthreads()")
    inner += _back(x, n, k, upper=not m_lower, unit=unit_diagonal, m=m)
    return _section(tname, batch, inner, n, k, t)
