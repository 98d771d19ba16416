"""Matrix products inside jitted code split over threads (issue 22): same numbers, no hangs.

Every product is checked against numpy with the rounding bound of a K-term dot product,
``|C - C_numpy| <= 4 K eps (|A| @ |B|)`` elementwise (eps of the dtype): panels of a split
product are computed by the same single-threaded GEMM as the whole, so anything larger is
a wrong panel, not rounding. ``min_flops=1`` makes the pool split even tiny products, so
the panel arithmetic (edges, transposes, strides) is exercised at small sizes.
"""
import os
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import errors
from autodiff.backends import blas_pool

pytestmark = pytest.mark.skipif(not blas_pool.HAVE_CBLAS,
                                reason="numpy is not linked to OpenBLAS (the pool needs its CBLAS)")

THREADS = [1, 2, 3, "auto"]


def _close(got, a, b, want):
    """Equal to numpy's product up to the rounding of a K-term dot product."""
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    k = a.shape[-1]
    eps = np.finfo(want.dtype).eps
    bound = 4 * max(k, 1) * eps * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(err <= bound + np.finfo(want.dtype).tiny), float(np.max(err - bound))


@pytest.fixture
def threads(request):
    """Run with ``jit_blas_threads = request.param``, splitting every product."""
    ad.config.update("jit_blas_threads", request.param)
    blas_pool.set_threads(request.param, min_flops=1)
    try:
        yield request.param
    finally:
        ad.config.update("jit_blas_threads", "auto")


# module-level jitted functions: one compile per signature for the whole file
mm = ad.jit(lambda a, b: a @ b)
# dot_general contracting over leading/trailing axes: BLAS reads the operand transposed
# (flags 1, 2, 3 of matmul_into; `a.T @ b` would be a copy, then a plain product)
mm_tn = ad.jit(lambda a, b: anp.einsum("ki,kj->ij", a, b))
mm_nt = ad.jit(lambda a, b: anp.einsum("ik,jk->ij", a, b))
mm_tt = ad.jit(lambda a, b: anp.einsum("ki,jk->ij", a, b))
mm_strided = ad.jit(lambda a, b: a[:, ::2] @ b[::2, :])
bmm = ad.jit(lambda a, b: anp.einsum("bij,bjk->bik", a, b))


# (m, k, n); m == 1 or n == 1 runs as BLAS gemv (vector-matrix, matrix-vector, a dot)
SHAPES = [(1, 7, 300), (300, 7, 1), (1, 300, 1), (1, 1, 5), (64, 1, 1), (5, 0, 6), (2, 3, 4),
          (200, 30, 300), (130, 9, 129), (500, 20, 40)]


@pytest.mark.parametrize("threads", THREADS, indirect=True)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_match_numpy_for_every_thread_count(threads, dtype):
    rng = np.random.default_rng(0)
    before = blas_pool.stats()["pooled"]
    for m, k, n in SHAPES:
        a = rng.normal(size=(m, k)).astype(dtype)
        b = rng.normal(size=(k, n)).astype(dtype)
        _close(mm(a, b), a, b, a @ b)
        at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)
        _close(mm_tn(at, b), a, b, a @ b)        # BLAS reads a transposed
        _close(mm_nt(a, bt), a, b, a @ b)        # ... b
        _close(mm_tt(at, bt), a, b, a @ b)       # ... both
    if blas_pool.resolve_threads(threads) > 1:
        assert blas_pool.stats()["pooled"] > before      # the pool really split them
    else:
        assert blas_pool.stats()["pooled"] == before


mv = ad.jit(lambda a, v, u: (a @ v, u @ a, a.T @ u, anp.dot(v, a.T @ u)))


def test_matrix_vector_products_match_numpy():
    # 1-D operands and transposed reads: the gemv path of matmul_into
    rng = np.random.default_rng(5)
    for dtype in (np.float64, np.float32):
        a = rng.normal(size=(37, 23)).astype(dtype)
        v, u = rng.normal(size=23).astype(dtype), rng.normal(size=37).astype(dtype)
        got = mv(a, v, u)
        _close(got[0], a, v, a @ v)
        _close(got[1], u, a, u @ a)
        _close(got[2], a.T, u, a.T @ u)
        tol = 1e-12 if dtype == np.float64 else 1e-4
        assert np.asarray(got[3]).dtype == dtype
        np.testing.assert_allclose(got[3], np.dot(v, a.T @ u), rtol=tol)


@pytest.mark.parametrize("threads", [1, 3], indirect=True)
def test_strided_and_batched_products(threads):
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(150, 60)), rng.normal(size=(60, 140))
    _close(mm_strided(a, b), a[:, ::2], b[::2, :], a[:, ::2] @ b[::2, :])
    x, y = rng.normal(size=(3, 70, 11)), rng.normal(size=(3, 11, 130))
    got = bmm(x, y)
    for i in range(3):
        _close(got[i], x[i], y[i], x[i] @ y[i])


@pytest.mark.parametrize("threads", [2], indirect=True)
def test_gradient_of_a_matmul_chain_matches_interpreter(threads):
    rng = np.random.default_rng(2)
    w1, w2 = rng.normal(size=(40, 150)) * 0.1, rng.normal(size=(150, 3)) * 0.1
    x = rng.normal(size=(130, 40))

    def loss(w1, w2, x):
        return anp.sum(anp.tanh(x @ w1) @ w2 ** 2)

    got = ad.jit(ad.grad(loss, argnums=(0, 1)))(w1, w2, x)
    want = ad.jit(ad.grad(loss, argnums=(0, 1)), backend="interpret")(w1, w2, x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_changing_the_thread_count_recompiles_nothing():
    from autodiff.backends import compile_cache
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(64, 32)), rng.normal(size=(32, 200))
    f = ad.jit(lambda a, b: a @ b * 2.0)
    f(a, b)
    before = compile_cache.stats()["compiles"]
    for t in (1, 2, 3, "auto"):
        ad.config.update("jit_blas_threads", t)
        blas_pool.set_threads(t, min_flops=1)
        _close(f(a, b) / 2.0, a, b, a @ b)
    ad.config.update("jit_blas_threads", "auto")
    assert compile_cache.stats()["compiles"] == before
    # the generated call carries only the transpose bits (0-3), no thread count
    flags = re.findall(r"matmul_into\(.*np\.int64\((\d+)\)\)", f.lower(a, b).source)
    assert flags and all(int(v) < 4 for v in flags)


def test_config_validates_the_thread_count():
    for good, want in ((2, 2), ("3", 3), (np.int64(4), 4), ("auto", "auto"), (" AUTO ", "auto")):
        ad.config.update("jit_blas_threads", good)
        assert ad.config.jit_blas_threads == want
    ad.config.update("jit_blas_threads", "auto")
    for bad in (0, -1, "two", 2.5, True, None):
        with pytest.raises(errors.ConfigError, match="jit_blas_threads") as info:
            ad.config.update("jit_blas_threads", bad)
        assert "test_blas_threads.py" in str(info.value)          # names the caller's line
        assert isinstance(info.value, ValueError)
    assert ad.config.jit_blas_threads == "auto"


# ------------------------------------------------------------------------------------------
# threads and processes
# ------------------------------------------------------------------------------------------

mlp_grad = ad.jit(ad.grad(lambda w, x: anp.sum(anp.tanh(x @ w) ** 2)))


@pytest.mark.timeout(120)
def test_no_deadlock_when_called_from_several_threads():
    ad.config.update("jit_blas_threads", 2)
    blas_pool.set_threads(2, min_flops=1)
    try:
        rng = np.random.default_rng(4)
        ws = [rng.normal(size=(30, 140)) * 0.1 for _ in range(4)]
        x = rng.normal(size=(150, 30))
        want = [ad.jit(ad.grad(lambda w, x: anp.sum(anp.tanh(x @ w) ** 2)),
                       backend="interpret")(w, x) for w in ws]
        mlp_grad(ws[0], x)                                  # compile once, outside the race
        before = blas_pool.stats()

        def work(i):
            return [np.max(np.abs(mlp_grad(ws[i], x) - want[i])) for _ in range(20)]

        with ThreadPoolExecutor(4) as ex:
            errs = [e for r in ex.map(work, range(4)) for e in r]
        after = blas_pool.stats()
        assert max(errs) < 1e-10
        # every product ran: on the pool, or alone on its thread while another held it
        assert after["pooled"] + after["serial_busy"] > before["pooled"] + before["serial_busy"]
    finally:
        ad.config.update("jit_blas_threads", "auto")


FORK_CHILD = """
import os, numpy as np
import autodiff as ad
from autodiff.backends import blas_pool
ad.config.update("jit_background_compile", False)
ad.config.update("jit_blas_threads", 2)
blas_pool.set_threads(2, min_flops=1)
f = ad.jit(lambda a, b: a @ b)
rng = np.random.default_rng(0)
a, b = rng.normal(size=(100, 20)), rng.normal(size=(20, 300))
ok = np.allclose(f(a, b), a @ b, rtol=1e-13, atol=1e-13)
assert ok and blas_pool.stats()["pooled"] >= 1 and blas_pool.stats()["workers"] >= 1
pid = os.fork()
if pid == 0:
    s0 = blas_pool.stats()["pooled"]
    good = all(np.allclose(f(a, b), a @ b, rtol=1e-13, atol=1e-13) for _ in range(5))
    os._exit(0 if good and blas_pool.stats()["pooled"] == s0 + 5 else 3)
_, status = os.waitpid(pid, 0)
print("CHILD", os.waitstatus_to_exitcode(status), "PARENT", np.allclose(f(a, b), a @ b))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork exists on POSIX only")
@pytest.mark.timeout(240)
def test_forked_child_uses_its_own_pool():
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(FORK_CHILD)], capture_output=True,
                       text=True, timeout=200, env=dict(os.environ))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "CHILD 0 PARENT True" in r.stdout, (r.stdout, r.stderr[-2000:])


@pytest.mark.timeout(240)
def test_environment_variable_sets_and_validates_the_count():
    code = "import autodiff as ad; print('VALUE', ad.config.jit_blas_threads)"
    env = dict(os.environ, AUTODIFF_JIT_BLAS_THREADS="3")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=200, env=env)
    assert "VALUE 3" in r.stdout, r.stderr[-2000:]
    env["AUTODIFF_JIT_BLAS_THREADS"] = "0"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=200, env=env)
    assert r.returncode != 0 and "ConfigError" in r.stderr
    assert "AUTODIFF_JIT_BLAS_THREADS" in r.stderr


ONE_BLAS = """
import numpy as np, autodiff as ad
from autodiff import primitives as P
ad.config.update("jit_background_compile", False)
rng = np.random.default_rng(0)
a = rng.normal(size=(2, 30, 30)); a = a + a.transpose(0, 2, 1)
w, v = ad.jit(lambda a: tuple(P.eigh_p.bind(a)))(a)
ww, vv = np.linalg.eigh(a)
mm = ad.jit(lambda x, y: x @ y)(a[0], a[1])
libs = sorted({l.split("/")[-1].strip() for l in open("/proc/self/maps") if "openblas" in l})
print("SAME", bool((w == ww).all() and (v == vv).all()), bool(np.allclose(mm, a[0] @ a[1])))
print("LIBS", libs)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads Linux's /proc/self/maps")
@pytest.mark.timeout(240)
def test_eigh_and_gemm_use_numpys_one_openblas():
    # eigh calls numpy's own LAPACK (what np.linalg.eigh calls: the same bits for float64),
    # so a jitted program never loads scipy's second OpenBLAS with its own thread pool
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(ONE_BLAS)], capture_output=True,
                       text=True, timeout=200, env=dict(os.environ))
    assert "SAME True True" in r.stdout, (r.stdout, r.stderr[-2000:])
    libs = eval(r.stdout.split("LIBS", 1)[1].strip())
    assert libs == [blas_pool.BLAS.split(":")[0]], libs


# Contractions whose operands or output are rank 2 but grouped otherwise than one axis per
# side: a (6,) . (6, 4, 4) product is a (1, 6) @ (6, 16) GEMM writing a (4, 4) output, which
# must be viewed as (1, 16) (it was passed as it is, and BLAS wrote garbage).
REGROUPED = [((6,), (6, 4, 4), 1), ((4, 4), (4, 4, 5), 2), ((2, 3), (2, 3), 2),
             ((2, 3), (2, 3, 4), 2), ((4, 2, 3), (2, 3), ([1, 2], [0, 1])),
             ((2, 3, 6), (6,), 1), ((5,), (5, 3), 1)]
_tensordot = {}


@pytest.mark.parametrize("xs,ys,axes", REGROUPED, ids=[f"{a}.{b}" for a, b, _ in REGROUPED])
def test_regrouped_contractions_match_numpy(xs, ys, axes):
    from jit_util import assert_compiled
    rng = np.random.default_rng(len(xs) + len(ys))
    x, y = rng.normal(size=xs), rng.normal(size=ys)
    key = str(axes)
    f = _tensordot.setdefault(key, ad.jit(lambda a, b: anp.tensordot(a, b, axes=axes)))
    out = assert_compiled(f, x, y)
    np.testing.assert_allclose(out, np.tensordot(x, y, axes=axes), rtol=1e-12, atol=1e-12)


_LAZY_POOL = textwrap.dedent("""
    import numpy as np, autodiff as ad, autodiff.numpy as anp
    from autodiff.backends import blas_pool
    ad.config.update("jit_background_compile", False)
    ad.config.update("jit_blas_threads", 2)
    y = ad.jit(lambda x: anp.sin(x) * 2.0)(np.ones(5))
    assert np.allclose(y, np.sin(1.0) * 2.0)
    print("NOPRODUCT", blas_pool._worker_entry.compiled, blas_pool.stats()["workers"])
    a = np.arange(12.0).reshape(3, 4)
    z = ad.jit(lambda a: a @ a.T)(a)
    assert np.allclose(z, a @ a.T)
    print("PRODUCT", blas_pool._worker_entry.compiled, blas_pool.stats()["workers"])
""")


def test_the_pool_starts_with_the_first_kernel_that_multiplies_matrices(tmp_path):
    # a program without a product never compiles the pool's entry point nor starts its
    # threads (the first run on a machine does not pay for them: issue 31)
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _LAZY_POOL], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(ln.split(" ", 1) for ln in out.stdout.splitlines())
    assert lines["NOPRODUCT"] == "False 0"
    compiled, workers = lines["PRODUCT"].split()
    assert compiled == "True" and int(workers) >= 1
