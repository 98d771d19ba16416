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
    blas_pool.set_threads(request.param, min_flops=1, adaptive=False)
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
        blas_pool.set_threads(t, min_flops=1, adaptive=False)
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
def test_no_deadlock_when_called_from_several_threads(numba_path):
    # pins the Numba path: the GEMM pool runs the products of Numba's kernels only
    ad.config.update("jit_blas_threads", 2)
    blas_pool.set_threads(2, min_flops=1, adaptive=False)
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
blas_pool.set_threads(2, min_flops=1, adaptive=False)
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
    # pins the Numba path (AUTODIFF_JIT_LLVM_TIER=0): the GEMM pool runs Numba's products only
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(FORK_CHILD)], capture_output=True,
                       text=True, timeout=200, env=dict(os.environ, AUTODIFF_JIT_LLVM_TIER="0"))
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
    # threads (the first run on a machine does not pay for them: issue 31). Pins the Numba
    # path (AUTODIFF_JIT_LLVM_TIER=0): the pool starts with Numba's first kernel with a product
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path), AUTODIFF_JIT_LLVM_TIER="0")
    out = subprocess.run([sys.executable, "-c", _LAZY_POOL], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(ln.split(" ", 1) for ln in out.stdout.splitlines())
    assert lines["NOPRODUCT"] == "False 0"
    compiled, workers = lines["PRODUCT"].split()
    assert compiled == "True" and int(workers) >= 1


# ------------------------------------------------------------------------------------------
# adapting to the cores the process gets (issue 34)
# ------------------------------------------------------------------------------------------

def _products(n, a, b):
    out = np.empty((a.shape[0], b.shape[1]))
    for _ in range(n):
        blas_pool.matmul_into(a, b, out, np.int64(0))
    return out


def test_a_product_takes_the_way_that_was_lately_faster():
    # the running means decide: split products measured slower than the calling thread ->
    # the calling thread, except the one probe split in PROBE_EVERY; and the other way round
    blas_pool.ensure_started()
    blas_pool.set_threads(2, min_flops=1)
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(40, 30)), rng.normal(size=(30, 300))
    st = blas_pool._STATE
    try:
        n = 3 * blas_pool.PROBE_EVERY
        st[blas_pool._SPLITRATE], st[blas_pool._SERIALRATE] = 10**12, 1    # split: slow
        s0 = blas_pool.stats()
        _close(_products(n, a, b), a, b, a @ b)
        s1 = blas_pool.stats()
        assert s1["pooled"] - s0["pooled"] == 3                            # the probes
        assert s1["serial_adapted"] - s0["serial_adapted"] == n - 6        # not the probes
        st[blas_pool._SPLITRATE], st[blas_pool._SERIALRATE] = 1, 10**12    # split: fast
        _close(_products(n, a, b), a, b, a @ b)
        s2 = blas_pool.stats()
        assert s2["pooled"] - s1["pooled"] == n - 3                        # all but serial probes
        assert s2["serial_adapted"] == s1["serial_adapted"]
        assert s2["split_ns_per_mflop"] > 0 and s2["serial_ns_per_mflop"] > 0
    finally:
        ad.config.update("jit_blas_threads", "auto")


def _mlp(params, x, y):
    (w1, b1), (w2, b2) = params
    h = anp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = anp.max(logits, axis=1, keepdims=True)
    lse = anp.log(anp.sum(anp.exp(logits - m), axis=1, keepdims=True)) + m
    return -anp.mean(anp.sum((logits - lse) * y, axis=1))


def _mlp_numpy(params, x, y):
    """The same loss and its gradient by hand (softmax cross-entropy through a tanh layer)."""
    (w1, b1), (w2, b2) = params
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.mean(np.sum(np.log(p) * y, axis=1))
    dl = (p * y.sum(axis=1, keepdims=True) - y) / n
    da = (dl @ w2.T) * (1 - h * h)
    return loss, ((x.T @ da, da.sum(0)), (h.T @ dl, dl.sum(0)))


mlp_vg = ad.jit(ad.value_and_grad(_mlp))


def _flat(tree):
    return np.concatenate([np.ravel(v) for v in ad.tree_util.tree_leaves(tree)])


@pytest.mark.timeout(300)
def test_mlp_value_and_grad_with_one_core_busy_matches_the_quiet_run(numba_path):
    # pins the Numba path: the GEMM pool runs the products of Numba's kernels only
    rng = np.random.default_rng(8)
    params = ((rng.normal(size=(60, 140)) * 0.1, rng.normal(size=140) * 0.1),
              (rng.normal(size=(140, 5)) * 0.1, np.zeros(5)))
    x = rng.normal(size=(130, 60))
    y = np.eye(5)[rng.integers(0, 5, size=130)]
    want = _flat(_mlp_numpy(params, x, y))
    policies = {"adaptive": dict(), "split": dict(adaptive=False), "one thread": None}

    def run_all():
        out = {}
        for name, kw in policies.items():
            if kw is None:
                ad.config.update("jit_blas_threads", 1)
            else:
                blas_pool.set_threads(2, min_flops=1, **kw)
            out[name] = [_flat(mlp_vg(params, x, y)) for _ in range(15)]
        ad.config.update("jit_blas_threads", "auto")
        return out

    quiet = run_all()
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        before = blas_pool.stats()
        busy = run_all()
        after = blas_pool.stats()
    finally:
        spinner.kill()
        spinner.wait()
    assert after["pooled"] > before["pooled"]            # the split path ran under load
    q0 = quiet["one thread"][0]
    np.testing.assert_allclose(q0, want, rtol=1e-10, atol=1e-13)
    for name in policies:
        for got in quiet[name] + busy[name]:
            np.testing.assert_allclose(got, q0, rtol=1e-12, atol=1e-15)


prange_kernel = None


@pytest.mark.timeout(300)
def test_gemm_pool_and_prange_regions_from_two_python_threads(numba_path):
    # one Python thread runs a kernel with a parallel (prange) loop while another runs
    # products on the pool: both give numpy's numbers, and nothing deadlocks. Pins the Numba
    # path: prange and the GEMM pool are its own
    global prange_kernel
    old = ad.config.jit_parallel_threshold
    ad.config.update("jit_parallel_threshold", 1000)
    try:
        prange_kernel = ad.jit(lambda v: anp.tanh(v) * anp.sin(v) + anp.exp(-v * v))
        rng = np.random.default_rng(9)
        v = rng.normal(size=50_000)
        assert "prange(" in prange_kernel.lower(v).source
        want_v = np.tanh(v) * np.sin(v) + np.exp(-v * v)
        prange_kernel(v)
    finally:
        ad.config.update("jit_parallel_threshold", old)
    a, b = rng.normal(size=(120, 50)), rng.normal(size=(50, 260))
    mm(a, b)
    blas_pool.set_threads(2, min_flops=1, adaptive=False)
    try:
        before = blas_pool.stats()

        def elementwise(_):
            return max(np.max(np.abs(prange_kernel(v) - want_v)) for _ in range(30))

        def products(_):
            for _ in range(30):
                _close(mm(a, b), a, b, a @ b)
            return 0.0

        with ThreadPoolExecutor(2) as ex:
            errs = list(ex.map(lambda f: f(0), [elementwise, products]))
        after = blas_pool.stats()
        assert errs[0] < 1e-14 and errs[1] == 0.0
        assert after["pooled"] + after["serial_busy"] >= before["pooled"] + before["serial_busy"] + 30
    finally:
        ad.config.update("jit_blas_threads", "auto")
