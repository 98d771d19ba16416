"""Factorizations inside ``jit``: LAPACK (numpy's OpenBLAS) above the crossover sizes of
``backends/lapack.py``, hand loops below, both against numpy and the un-jitted
interpreter, on random, ill-conditioned (cond 1e10), batched and singular inputs, with
derivatives through ``jit`` against central differences.

Sizes: ``SMALL`` is below every crossover (the loops), ``LARGE`` above every one (LAPACK).
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.backends import blas_pool, lapack, numba_runtime as rt
from autodiff.primitives.linalg import triangular_solve

SMALL, LARGE = 6, 40
TOL = {np.float64: 1e-11, np.float32: 2e-4}


def test_crossovers_put_the_sizes_on_both_paths():
    assert SMALL < min(lapack.CHOLESKY_MIN_N, lapack.SOLVE_MIN_N, lapack.SLOGDET_MIN_N,
                       lapack.TRSM_MIN_N)
    assert LARGE >= max(lapack.CHOLESKY_MIN_N, lapack.SOLVE_MIN_N, lapack.SLOGDET_MIN_N,
                        lapack.TRSM_MIN_N)
    # numpy's wheels ship OpenBLAS with LAPACK: where its CBLAS is found, so is its LAPACK
    assert lapack.HAVE_LAPACK == blas_pool.HAVE_CBLAS
    if lapack.HAVE_LAPACK:
        assert "LAPACK" in rt.LAPACK and "lapack=" in rt.BLAS


def interp(f):
    """The un-jitted program: the same trace run by the numpy interpreter (each primitive's
    numpy ``impl``)."""
    return ad.jit(f, backend="interpret")


def _rng(seed=0):
    return np.random.default_rng(seed)


def spd(n, batch=(), dtype=np.float64, cond=None, seed=0):
    r = _rng(seed)
    if cond is None:
        m = r.standard_normal(batch + (n, n))
        a = m @ np.swapaxes(m, -1, -2) / n + np.eye(n)
    else:           # Q diag(1 .. 1/cond) Qᵀ
        q, _ = np.linalg.qr(r.standard_normal(batch + (n, n)))
        a = (q * np.logspace(0, -np.log10(cond), n)) @ np.swapaxes(q, -1, -2)
        a = (a + np.swapaxes(a, -1, -2)) / 2
    return a.astype(dtype)


def general(n, batch=(), dtype=np.float64, cond=None, seed=1):
    r = _rng(seed)
    if cond is None:
        return (r.standard_normal(batch + (n, n)) + 2 * np.eye(n)).astype(dtype)
    u, _ = np.linalg.qr(r.standard_normal(batch + (n, n)))
    v, _ = np.linalg.qr(r.standard_normal(batch + (n, n)))
    return ((u * np.logspace(0, -np.log10(cond), n)) @ v).astype(dtype)


def close(got, want, dtype, scale=1.0):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=TOL[dtype] * scale,
                               atol=TOL[dtype] * scale * max(1.0, np.abs(want).max()))


# ------------------------------------------------------------------ against numpy

@pytest.mark.parametrize("n", [SMALL, LARGE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_cholesky(n, dtype, batch):
    a = spd(n, batch, dtype)
    got = ad.jit(anp.linalg.cholesky)(a)
    close(got, np.linalg.cholesky(a), dtype)
    close(got, interp(anp.linalg.cholesky)(a), dtype)
    assert np.all(np.triu(got, 1) == 0)


@pytest.mark.parametrize("n", [SMALL, LARGE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [None, 1, 5])
def test_solve(n, dtype, k):
    a = general(n, (2,), dtype)
    b = _rng(3).standard_normal((2, n) + ((k,) if k else ())).astype(dtype)
    if k is None:          # numpy 2: a stack of vectors is (..., n, 1)
        a, b = a[0], b[0]
    got = ad.jit(anp.linalg.solve)(a, b)
    close(got, np.linalg.solve(a, b), dtype, scale=10)
    close(got, interp(anp.linalg.solve)(a, b), dtype, scale=10)


@pytest.mark.parametrize("n", [SMALL, LARGE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_slogdet_det_inv(n, dtype):
    a = general(n, (3,), dtype)
    s, l = ad.jit(anp.linalg.slogdet)(a)
    sn, ln = np.linalg.slogdet(a)
    np.testing.assert_array_equal(s, sn)
    close(l, ln.astype(l.dtype), dtype)
    close(ad.jit(anp.linalg.inv)(a), np.linalg.inv(a), dtype, scale=10)
    d = ad.jit(anp.linalg.det)(a[0])
    np.testing.assert_allclose(d, np.linalg.det(a[0]), rtol=TOL[dtype] * 10)


def test_complex_above_the_crossover():
    r = _rng(5)
    m = r.standard_normal((LARGE, LARGE)) + 1j * r.standard_normal((LARGE, LARGE))
    a = m @ m.conj().T / LARGE + np.eye(LARGE)
    b = r.standard_normal((LARGE, 3)) + 1j * r.standard_normal((LARGE, 3))
    close(ad.jit(anp.linalg.cholesky)(a), np.linalg.cholesky(a), np.float64)
    close(ad.jit(anp.linalg.solve)(m, b), np.linalg.solve(m, b), np.float64, scale=10)
    s, l = ad.jit(anp.linalg.slogdet)(m)
    sn, ln = np.linalg.slogdet(m)
    np.testing.assert_allclose([s, l], [sn, ln], rtol=1e-12)
    x = ad.jit(lambda t, y: anp.linalg.solve_triangular(t, y, lower=True, trans="T"))(
        np.linalg.cholesky(a), b)
    np.testing.assert_allclose(np.linalg.cholesky(a).T @ x, b, atol=1e-12)


@pytest.mark.parametrize("n", [SMALL, LARGE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("flags", range(16))
def test_triangular_solve_every_option(n, dtype, flags):
    lower, trans, unit, right = (bool(flags & f) for f in (1, 2, 4, 8))
    r = _rng(flags)
    # a well-conditioned triangle: unit-diagonal random triangles grow like 2^n
    t = (r.standard_normal((n, n)) / n + 2 * np.eye(n)).astype(dtype)
    b = r.standard_normal((4, n) if right else (n, 4)).astype(dtype)
    opts = dict(left_side=not right, lower=lower, transpose_a=trans, unit_diagonal=unit)
    got = ad.jit(lambda t, b: triangular_solve(t, b, **opts))(t, b)
    close(got, interp(lambda t, b: triangular_solve(t, b, **opts))(t, b), dtype)
    tri = np.tril(t) if lower else np.triu(t)
    if unit:
        np.fill_diagonal(tri, 1)
    op = tri.T if trans else tri
    close(got @ op if right else op @ got, b, dtype, scale=10)


# ------------------------------------------------------------------ ill-conditioned

@pytest.mark.parametrize("n", [SMALL, LARGE])
def test_ill_conditioned(n):
    cond = 1e10
    a = spd(n, cond=cond)
    L = ad.jit(anp.linalg.cholesky)(a)
    # backward stable: the residual is ~eps·|A|, whatever the condition number
    assert np.abs(L @ L.T - a).max() < 1e-13
    g = general(n, cond=cond)
    b = _rng(7).standard_normal((n, 2))
    x = ad.jit(anp.linalg.solve)(g, b)
    assert np.abs(g @ x - b).max() < 1e-12 * np.abs(x).max()
    xn = np.linalg.solve(g, b)
    assert np.abs(x - xn).max() <= 1e-5 * np.abs(xn).max()      # cond·eps ≈ 2e-6
    s, l = ad.jit(anp.linalg.slogdet)(g)
    sn, ln = np.linalg.slogdet(g)
    assert s == sn and abs(l - ln) < 1e-8 * abs(ln)


# ------------------------------------------------------------------ failures: NaN

@pytest.mark.parametrize("n", [SMALL, LARGE])
def test_not_positive_definite_and_singular_as_the_interpreter(n):
    a = spd(n, (3,))
    a[1] = -a[1]                           # not positive definite: only that one is NaN
    got, want = ad.jit(anp.linalg.cholesky)(a), interp(anp.linalg.cholesky)(a)
    assert np.isnan(got[1]).all() and np.isfinite(got[[0, 2]]).all()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    g = general(n, (2,))
    g[0, :, 3] = 0.0                       # an exactly zero column: singular
    b = np.ones((2, n, 2))
    got, want = ad.jit(anp.linalg.solve)(g, b), interp(anp.linalg.solve)(g, b)
    assert np.isnan(got[0]).all() and np.isfinite(got[1]).all()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    s, l = ad.jit(anp.linalg.slogdet)(g)
    sw, lw = interp(anp.linalg.slogdet)(g)
    assert s[0] == sw[0] == 0 and l[0] == lw[0] == -np.inf
    np.testing.assert_allclose(l[1], lw[1], rtol=1e-12)


def test_nan_input_above_the_crossover_as_numpy():
    # one library: potrf leaves what it did not reach, as numpy.linalg.cholesky does
    a = spd(LARGE)
    a[30, 29] = a[29, 30] = np.nan
    got = ad.jit(anp.linalg.cholesky)(a)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(interp(anp.linalg.cholesky)(a)))
    assert np.isnan(got[30:, 29:].diagonal()).all() and np.isfinite(got[:29]).all()


# ------------------------------------------------------------------ derivatives

def _directional(f, a, v, h=1e-5):
    return (f(a + h * v) - f(a - h * v)) / (2 * h)


@pytest.mark.parametrize("n", [SMALL, LARGE])
def test_derivatives_through_jit(n):
    r = _rng(11)
    a, g = spd(n), general(n)
    w = r.standard_normal((n, n))
    b = r.standard_normal((n, 3))
    va = r.standard_normal((n, n))
    va = (va + va.T) / 2                   # symmetric directions for the Cholesky input
    vg = r.standard_normal((n, n))
    tri = np.linalg.cholesky(a)
    vt = np.tril(r.standard_normal((n, n)))
    cases = [
        (lambda x: anp.sum(anp.linalg.cholesky(x) * w), a, va),
        (lambda x: anp.sum(anp.linalg.solve(x, b) * b), g, vg),
        (lambda x: anp.linalg.slogdet(x)[1], g, vg),
        (lambda x: anp.sum(anp.linalg.inv(x) * w), g, vg),
        (lambda x: anp.sum(anp.linalg.solve_triangular(x, b, lower=True) ** 2), tri, vt),
    ]
    for f, x, v in cases:
        grad = ad.jit(ad.grad(f))(x)
        want = _directional(lambda y: float(f(y)), x, v)
        np.testing.assert_allclose(np.sum(grad * v), want, rtol=1e-6, atol=1e-8)


def test_helpers_directly_right_hand_sides():
    # getrs_t's several right-hand sides (two right-side trsm + row interchanges) and its
    # single one (getrs 'T') against numpy, without a kernel around them
    a = general(LARGE, seed=4)
    for k in (1, 2, 7):
        b = _rng(k).standard_normal((LARGE, k))
        x = np.empty_like(b)
        rt.solve_into(a, b, x)
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ qr and svd (primitives)

def _mat(shape, dtype, seed=2, cond=None):
    r = _rng(seed)
    m, n = shape[-2:]
    if np.dtype(dtype).kind == "c":
        a = r.standard_normal(shape) + 1j * r.standard_normal(shape)
    else:
        a = r.standard_normal(shape)
    if cond is not None:           # singular values 1 .. 1/cond
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        a = (u * np.logspace(0, -np.log10(cond), min(m, n))) @ vt
    return a.astype(dtype)


SHAPES = [(7, 4), (4, 7), (LARGE, LARGE), (3, 6, 5)]
MODES = ("reduced", "complete", "r")


def _qr_svd_all(x):
    # one kernel per shape and dtype for every mode (each kernel is a compile)
    return ([tuple(anp.linalg.qr(x, mode=m)) if m != "r" else (anp.linalg.qr(x, mode=m),)
             for m in MODES],
            anp.linalg.svd(x, compute_uv=False),
            [tuple(anp.linalg.svd(x, full_matrices=f)) for f in (False, True)])


# every shape at float64; float32 and complex128 on one shape each (each case is a compile)
CASES = [(s, np.float64) for s in SHAPES] + [((3, 6, 5), np.float32), ((7, 4), np.complex128),
                                             ((LARGE, 24), np.complex128)]


@pytest.mark.parametrize("shape,dtype", CASES, ids=str)
def test_qr_svd_match_numpy(shape, dtype):
    a = _mat(shape, dtype)
    assert {"qr", "svd"} <= {e.primitive.name for e in ad.make_jaxpr(_qr_svd_all)(a).jaxpr.eqns}
    qrs, s, svds = ad.jit(_qr_svd_all)(a)
    tol = np.float32 if dtype == np.float32 else np.float64
    for mode, got in zip(MODES, qrs):
        want = np.linalg.qr(a, mode=mode)
        for g, w in zip(got, (want,) if mode == "r" else want):
            close(g, w.astype(g.dtype), tol, scale=10)    # numpy's signs: the same algorithm
        if mode != "r":
            q = got[0]
            eye = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
            close(np.conj(np.swapaxes(q, -1, -2)) @ q, eye.astype(q.dtype), tol, scale=10)
    close(s, np.linalg.svd(a, compute_uv=False), tol, scale=10)
    k = min(shape[-2:])
    for full, (u, s2, vt) in zip((False, True), svds):
        # canonical signs: the same U, S, Vᴴ as the eager call (numpy's LAPACK, signs fixed);
        # a full U's (or Vᴴ's) extra columns (rows) span the complement of the range in a
        # basis each algorithm picks (gesdd's differs from the complete QR's when it skips
        # its QR step): those are checked for orthonormality
        uw, sw, vw = anp.linalg.svd(a, full_matrices=full)
        close(u[..., :, :k], np.asarray(uw)[..., :, :k], tol, scale=10)
        close(s2, np.asarray(sw), tol, scale=10)
        close(vt[..., :k, :], np.asarray(vw)[..., :k, :], tol, scale=10)
        for x in (u, np.conj(np.swapaxes(vt, -1, -2))):
            eye = np.broadcast_to(np.eye(x.shape[-1]), x.shape[:-2] + (x.shape[-1],) * 2)
            close(np.conj(np.swapaxes(x, -1, -2)) @ x, eye.astype(x.dtype), tol, scale=10)
        rec = (u[..., :, :k] * s2[..., None, :]) @ vt[..., :k, :]
        close(rec, a, tol, scale=10)


@pytest.mark.parametrize("cond", [1e8, 1e14])
def test_qr_svd_ill_conditioned_and_rank_deficient(cond):
    a = _mat((LARGE, 30), np.float64, seed=4, cond=cond)
    s = ad.jit(lambda x: anp.linalg.svd(x, compute_uv=False))(a)
    # every singular value to ~ε‖A‖, LAPACK's accuracy class (a Gram-matrix method loses
    # the small ones)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=0, atol=1e-14)
    q, r = ad.jit(lambda x: tuple(anp.linalg.qr(x)))(a)
    np.testing.assert_allclose(q @ r, a, atol=1e-13)
    low = np.zeros((6, 5))
    low[:, :2] = _rng(3).standard_normal((6, 2))             # rank 2
    s = ad.jit(lambda x: anp.linalg.svd(x, compute_uv=False))(low)
    np.testing.assert_allclose(s, np.linalg.svd(low, compute_uv=False), atol=1e-14)


def test_qr_svd_nan_input_gives_nan():
    a = _mat((5, 4), np.float64)
    a[2, 1] = np.nan
    s = ad.jit(lambda x: anp.linalg.svd(x, compute_uv=False))(a)
    assert np.isnan(s).all()
    np.testing.assert_array_equal(np.isnan(s), np.isnan(interp(lambda x: anp.linalg.svd(
        x, compute_uv=False))(a)))
    q, r = ad.jit(lambda x: tuple(anp.linalg.qr(x)))(a)
    assert np.isnan(r[:, 1:]).any()


@pytest.mark.parametrize("shape", [(6, 4), (4, 6)], ids=str)
def test_qr_svd_derivatives_through_jit(shape):
    r = _rng(21)
    a = _mat(shape, np.float64, seed=8)
    v = r.standard_normal(shape)
    m, n = shape
    k = min(m, n)
    w = [r.standard_normal(s) for s in ((m, k), (k, n), (m, m), (m, k), (k, n))]

    def f(x):          # Q and R (both modes), s, U and Vᴴ: one gradient kernel
        q, rr = anp.linalg.qr(x)
        qc = anp.linalg.qr(x, mode="complete")[0]     # the complement through its projector
        u, s, vt = anp.linalg.svd(x, full_matrices=False)
        return (anp.sum(q * w[0]) + anp.sum(rr * w[1])
                + anp.sum(qc[:, :k] * w[0]) + anp.sum((qc[:, k:] @ qc[:, k:].T) * w[2])
                + anp.sum(s ** 3)
                + anp.sum(u * w[3]) + anp.sum(vt * w[4]))
    grad = ad.jit(ad.grad(f))(a)
    want = _directional(lambda y: float(f(y)), a, v)
    np.testing.assert_allclose(np.sum(grad * v), want, rtol=1e-6, atol=1e-8)
    if m > n:
        # second order: the Hessian-vector product against differences of the gradient
        g = ad.grad(lambda x: anp.sum(anp.linalg.svd(x, compute_uv=False) ** 3)
                    + anp.sum(anp.linalg.qr(x)[1] * w[1]))
        hv = ad.jit(lambda x: ad.jvp(g, (x,), (v,))[1])(a)
        np.testing.assert_allclose(hv, _directional(g, a, v), rtol=1e-5, atol=1e-7)


def test_qr_svd_vmap_matches_the_batched_call():
    a = _mat((3, 5, 4), np.float64)
    q, r = ad.jit(ad.vmap(lambda x: tuple(anp.linalg.qr(x))))(a)
    qn, rn = np.linalg.qr(a)
    close(q, qn, np.float64, scale=10)
    close(r, rn, np.float64, scale=10)
    s = ad.jit(ad.vmap(lambda x: anp.linalg.svd(x, compute_uv=False)))(a)
    close(s, np.linalg.svd(a, compute_uv=False), np.float64, scale=10)


def test_large_calls_measure_one_and_several_threads_and_agree():
    # calls of order >= LAPACK_MIN_N run on one OpenBLAS thread or on the setting's,
    # whichever was lately faster, probing both: every call's result is numpy's either way
    old = ad.config.jit_blas_threads
    ad.config.update("jit_blas_threads", 2)
    try:
        n = blas_pool.LAPACK_MIN_N + 44
        a, g = spd(n), general(n)
        before = blas_pool.stats()["lapack_multi"]
        f = ad.jit(lambda x, y: (anp.linalg.cholesky(x), anp.linalg.inv(y)))
        want = np.linalg.cholesky(a), np.linalg.inv(g)
        for _ in range(2 * blas_pool.LAPACK_PROBE_EVERY):
            L, inv = f(a, g)
            close(L, want[0], np.float64)
            close(inv, want[1], np.float64, scale=100)
        st = blas_pool.stats()
        assert st["lapack_multi"] > before
        rates = st["lapack_ns_per_mflop"]
        assert min(rates["potrf"]) > 0 and min(rates["getrf"]) > 0    # both ways measured
    finally:
        ad.config.update("jit_blas_threads", old)


# ------------------------------------------------------------------ the LLVM tier's C calls

def _every_factorization(a, s, b, t):
    # every helper of numba_runtime.C_ABI in one program
    w, v = anp.linalg.eigh(s)
    q, r = anp.linalg.qr(a)
    u, sv, vt = anp.linalg.svd(a, full_matrices=False)
    sign, logdet = anp.linalg.slogdet(a)
    return (anp.linalg.cholesky(s), anp.linalg.solve(a, b), sign, logdet,
            triangular_solve(t, b, left_side=True, lower=True), w, v, q, r, u, sv, vt)


def _factorization_operands(n, dtype):
    r = _rng(31)
    t = (r.standard_normal((n, n)) / n + 2 * np.eye(n)).astype(dtype)
    return general(n, (), dtype), spd(n, (), dtype), r.standard_normal((n, 3)).astype(dtype), t


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_llvm_tier_calls_lapack_through_c_entry_points(dtype):
    # shape-specialized programs of every factorization go to the direct LLVM tier, which
    # calls the helpers as C functions (numba_runtime.C_ABI): below and above the LAPACK
    # crossovers, results as the interpreter's
    from autodiff.backends import llvm_cpu
    for n in (SMALL, LARGE):
        ops = _factorization_operands(n, dtype)
        f = ad.jit(_every_factorization)
        got = f(*ops)
        assert f._entry_for(*ops).backend == "llvm"
        want = interp(_every_factorization)(*ops)
        for g, w in zip(got, want):
            close(g, w, dtype, scale=10)
    factorizations = ("cholesky_into", "trisolve", "solve_into", "slogdet_2d", "eigh_into",
                      "qr_into", "svd_into")
    assert set(factorizations) <= set(rt.C_ABI)
    assert {f"autodiff_cabi_{name}_{np.dtype(dtype).name}" for name in factorizations} \
        <= llvm_cpu._CABI_BOUND


def test_c_entry_points_bind_in_the_process_that_loads_the_worker_s_code(background_compile):
    # with the background compile the worker process compiles the object code; this
    # process binds its C entry points when it loads it
    a, s, b, t = _factorization_operands(LARGE - 1, np.float64)
    f = ad.jit(_every_factorization)
    want = interp(_every_factorization)(a, s, b, t)
    f(a, s, b, t)
    assert ad.wait_for_compiles(120)
    got = f(a, s, b, t)
    assert f._entry_for(a, s, b, t).backend == "llvm"
    for g, w in zip(got, want):
        close(g, w, np.float64, scale=10)


def test_the_shape_generic_numba_kernel_runs_every_factorization():
    # run-time sizes are Numba's (the LLVM tier takes constant shapes): one kernel for
    # both sizes, the helpers compiled inline
    f = ad.jit(_every_factorization, dynamic_shapes=True)
    for n in (SMALL, LARGE):
        ops = _factorization_operands(n, np.float64)
        got = f(*ops)
        assert f._entry_for(*ops).backend == "cpu"
        for g, w in zip(got, interp(_every_factorization)(*ops)):
            close(g, w, np.float64, scale=10)


def test_solves_with_many_right_hand_sides_may_use_threads_below_the_order_threshold():
    # an inverse of order 200 is 16 MFLOP of triangular solves (getrs with 200 right-hand
    # sides): enough for OpenBLAS's threads (LAPACK_MIN_MFLOPS), though its order is below
    # LAPACK_MIN_N; its factorization (5 MFLOP) stays on one thread
    old = ad.config.jit_blas_threads
    ad.config.update("jit_blas_threads", 2)
    try:
        n = 200
        assert n < blas_pool.LAPACK_MIN_N
        assert 2 * n ** 3 // 1_000_000 >= blas_pool.LAPACK_MIN_MFLOPS > 2 * n ** 3 // 3_000_000
        a = general(n)
        before = blas_pool.stats()["lapack_multi"]
        f = ad.jit(anp.linalg.inv)
        for _ in range(2 * blas_pool.LAPACK_PROBE_EVERY):
            close(f(a), np.linalg.inv(a), np.float64, scale=100)
        st = blas_pool.stats()
        if lapack.HAVE_LAPACK:
            assert st["lapack_multi"] > before
            assert min(st["lapack_ns_per_mflop_small"]["trsm"]) > 0     # both ways measured
    finally:
        ad.config.update("jit_blas_threads", old)
