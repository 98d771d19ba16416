"""The direct LLVM tier (backends/llvm_cpu.py): kernels compiled by llvmlite, no Numba.

Every program is checked against the numpy interpreter (and, where rounding could differ,
against the Numba kernel of the same text), and every test asserts which tier ran.
"""
import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autodiff as ad
import autodiff.lax as lax
import autodiff.numpy as anp
from autodiff.backends import llvm_cpu, numba_cpu
from autodiff.transforms.passes import run_pipeline


@pytest.fixture(autouse=True)
def _blocking():
    old = (ad.config.jit_background_compile, ad.config.jit_llvm_tier)
    ad.config.update("jit_background_compile", False)
    ad.config.update("jit_llvm_tier", True)
    yield
    ad.config.update("jit_background_compile", old[0])
    ad.config.update("jit_llvm_tier", old[1])


def _run(f, *args):
    """(result, backend of the entry that ran it)."""
    jf = ad.jit(f)
    out = jf(*args)
    return out, jf._entry_for(*args).backend


def _numba(f, *args):
    ad.config.update("jit_llvm_tier", False)
    try:
        jf = ad.jit(f)
        out = jf(*args)
        assert jf._entry_for(*args).backend == "cpu"
        return out
    finally:
        ad.config.update("jit_llvm_tier", True)


def _check(f, *args, rtol=1e-13, atol=1e-14):
    got, backend = _run(f, *args)
    assert backend == "llvm", f"the LLVM tier did not take {f}"
    want = f(*args)                                  # the interpreter (no jit)
    for g, w in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return got


X = np.linspace(-3.0, 2.5, 24).reshape(4, 6)


@pytest.mark.parametrize("name,f", [
    ("elementwise", lambda x: anp.tanh(x) * anp.exp(-x ** 2) + anp.log1p(x * x)),
    ("sin_cos_huge_args", lambda x: anp.sin(x * 1e15) + anp.cos(x * 3e200)),
    ("reductions", lambda x: (anp.sum(x, axis=0), anp.max(x, axis=1), anp.mean(x))),
    ("logsumexp", lambda x: anp.log(anp.sum(anp.exp(x - anp.max(x, axis=1, keepdims=True)),
                                            axis=1))),
    ("where_nan", lambda x: anp.where(x > 0, anp.sqrt(x), anp.nan) + anp.maximum(x, 0.5)),
    ("argmax_cumsum", lambda x: (anp.argmax(x, axis=1), anp.cumsum(x, axis=0))),
    ("views", lambda x: x[1:, ::2] + x[:-1, 1::2].T.T + anp.flip(x, 0)[:3, :3].sum()),
    ("concat", lambda x: anp.concatenate([x, 2 * x], axis=1).sum(0)),
    ("scalar_out", lambda x: anp.sum(x ** 2)),
    ("small_matmul", lambda x: anp.tanh(x @ x.T) @ x),
])
def test_programs_match_the_interpreter(name, f):
    _check(f, X)


def test_gradients_and_hessians():
    def loss(w, x):
        return anp.mean(anp.tanh(x @ w) ** 2) + 0.1 * anp.sum(w ** 2)
    w = np.linspace(-1, 1, 12).reshape(6, 2)
    _check(ad.grad(loss), w, X)
    _check(ad.value_and_grad(loss, argnums=(0, 1)), w, X)
    _check(ad.hessian(lambda v: anp.sum(anp.sin(v) ** 3)), np.linspace(0, 1, 5))


def test_integer_floor_division_and_modulo_follow_numpy():
    a = np.array([7, -7, 7, -7, 0, 5, -9223372036854775807 - 1], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 3, 0, -1], dtype=np.int64)
    # numpy: Python's floor semantics, 0 for a zero divisor, INT_MIN // -1 wraps
    got, backend = _run(lambda a, b: (a // b, a % b), a, b)
    assert backend == "llvm"
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[0], a // b)
        np.testing.assert_array_equal(got[1], a % b)


def test_float_floor_division_and_modulo_follow_numpy():
    a = np.array([1.0, -1.0, 5.5, -5.5, 0.0, 3.0])
    b = np.array([0.1, 0.1, -2.0, 2.0, -2.0, 0.0])
    got, backend = _run(lambda a, b: (a // b, a % b), a, b)
    assert backend == "llvm"
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[0], a // b)
        np.testing.assert_array_equal(got[1], a % b)


def test_float32_bool_and_integer_dtypes():
    xf = X.astype(np.float32)
    got = _check(lambda x: anp.sin(x) * anp.exp(x) + 1.5, xf, rtol=2e-6, atol=1e-6)
    # the same helpers with the same flags as the Numba kernel: the same bits
    np.testing.assert_array_equal(got, _numba(lambda x: anp.sin(x) * anp.exp(x) + 1.5, xf))
    _check(lambda x: ((x > 0) & (x < 2), (x > 1).astype(np.int32) * 3 - x.astype(np.int16)), X)
    xi = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    _check(lambda x: (x * 3 + 1, anp.abs(x), x.sum(), anp.maximum(x, 0)), xi)


def test_scalar_inputs_and_outputs():
    _check(lambda a, b, x: a * x + b, 2.5, 3, X)
    got = _check(lambda a, n: a ** 2 + n, 1.5, np.int32(4))
    assert isinstance(got, np.float64)
    got = _check(lambda x: anp.argmax(x), X)
    assert isinstance(got, np.integer)


def test_a_product_past_the_inline_size_calls_cblas():
    a = np.linspace(-1, 1, 40 * 30).reshape(40, 30)
    b = np.linspace(0, 2, 30 * 50).reshape(30, 50)
    assert 40 * 30 * 50 > llvm_cpu.GEMM_INLINE_MAX
    _check(lambda a, b: (a @ b, a.T @ a, b @ b.T), a, b, rtol=1e-12, atol=1e-12)
    _check(lambda a, b: (a @ b).astype(np.float32),
           a.astype(np.float32), b.astype(np.float32), rtol=1e-5, atol=1e-5)


def test_large_products_reach_the_gemm_pool_through_its_hook():
    # a product worth the pool's threads runs on CBLAS until the pool has loaded, then on
    # the pool (blas_pool.gemm_pool_entry): the same numbers both ways, every transpose
    from autodiff.backends import blas_pool
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(160, 220)), rng.normal(size=(220, 190))
    assert 2 * 160 * 220 * 190 >= llvm_cpu._GEMM_POOL_FLOPS

    def f(a, b):
        return a @ b, a.T.T @ b, (b.T @ a.T).T, anp.tanh(a @ b) @ b.T
    # the pool loads first (its thread done: nothing sets the hook behind this test's back)
    assert llvm_cpu.attach_gemm_pool(wait=True)
    pool = blas_pool.gemm_pool_entry.address
    llvm_cpu._HOOK[0] = 0                              # as before the pool has loaded
    try:
        before = _check(f, a, b, rtol=1e-12, atol=1e-11)
    finally:
        llvm_cpu._HOOK[0] = pool
    assert llvm_cpu._HOOK[0] == pool
    # every large product calls through the hook: count the calls on the way to the pool
    seen = []
    to_pool = ctypes.CFUNCTYPE(None, *[ctypes.c_int64] * 8)(pool)

    def counting(*args):
        seen.append(args[:5])
        to_pool(*args)
    hook = ctypes.CFUNCTYPE(None, *[ctypes.c_int64] * 8)(counting)
    llvm_cpu._HOOK[0] = ctypes.cast(hook, ctypes.c_void_p).value
    try:
        after = _check(f, a, b, rtol=1e-12, atol=1e-11)
    finally:
        llvm_cpu._HOOK[0] = pool
    for x, y in zip(before, after):
        np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-12)
    # (item, flags, m, n, k) of the products (a common subexpression may be shared; a
    # transpose is a flag or a copy, as the planner chose)
    assert len(seen) >= 3 and {c[0] for c in seen} == {8}, seen
    assert {c[2:] for c in seen} == {(160, 190, 220), (160, 220, 190)}, seen
    x32 = (a.astype(np.float32), b.astype(np.float32))
    _check(lambda a, b: anp.tanh(a @ b), *x32, rtol=1e-5, atol=1e-5)


def test_programs_it_declines_go_to_numba():
    # numpy's sort of integers (its C entry points are the float dtypes')
    xi = (X * 10).astype(np.int64)
    out, backend = _run(lambda x: anp.sort(x, axis=1) * 2, xi)
    assert backend == "cpu"
    np.testing.assert_array_equal(out, np.sort(xi, axis=1) * 2)


def test_control_flow_carrying_arrays():
    # scan / fori_loop / while_loop / cond bodies are functions of their own; an array
    # carried through the loop lives in its call site's two alternating workspace regions
    def loop(x):
        return lax.fori_loop(0, 5, lambda i, c: c[::-1] * 0.5 + i, x)
    _check(loop, X)

    def scan(x):
        def step(c, row):
            c = anp.tanh(c * 0.9 + row)
            return c, anp.sum(c) + c[::-1]
        return lax.scan(step, x[0], x)
    _check(scan, X)
    _check(ad.grad(lambda x: anp.sum(scan(x)[1] ** 2)), X, rtol=1e-11, atol=1e-13)

    def wl(x):
        return lax.while_loop(lambda c: anp.sum(c[0]) < 100.0,
                              lambda c: (c[0] * 1.5 + c[1], c[1][::-1]), (x, x + 1.0))
    _check(wl, np.abs(X) + 0.1)
    _check(lambda p, x: lax.cond(p > 0, lambda v: anp.sin(v)[::-1], lambda v: v * 2.0, x),
           1.0, X)
    _check(lambda p, x: lax.cond(p > 0, lambda v: anp.sin(v)[::-1], lambda v: v * 2.0, x),
           -1.0, X)


def test_while_break_continue_and_partial_indexing():
    src = textwrap.dedent("""
        import numpy as np
        def kernel(A):
            B = np.empty((2, 3), np.float64)
            B[0] = A[1]
            B[1] = 0.5
            n = 0
            i = 0
            while True:
                i += 1
                if i % 2 == 0:
                    continue
                if i > 7:
                    break
                n += i
            return (B, n)
    """)
    sh = ad.core.ShapedArray
    k = llvm_cpu.compile_source(src, "kernel", [sh((2, 3), np.dtype("float64"))],
                                [sh((2, 3), np.dtype("float64")), sh((), np.dtype("int64"))])
    a = np.arange(6.0).reshape(2, 3)
    b, n = k.entry_point(a)
    np.testing.assert_array_equal(b, [[3.0, 4.0, 5.0], [0.5, 0.5, 0.5]])
    assert n == 1 + 3 + 5 + 7


def test_a_carry_that_is_a_function_parameter():
    # a loop rebinding, after reading it, an array that entered its function as a parameter
    # (a chunk function running a scan: found by scipy.stats.poisson.cdf)
    src = textwrap.dedent("""
        import numpy as np
        def _step(C):
            D = np.empty((3,), np.float64)
            for i in range(3):
                D[i] = C[2 - i] * 0.5 + 1.0
            return (D,)
        def _part(C):
            for t in range(4):
                C, = _step(C)
            return (C,)
        def kernel(A):
            B, = _part(A)
            return B
    """)
    sh = ad.core.ShapedArray
    k = llvm_cpu.compile_source(src, "kernel", [sh((3,), np.dtype("float64"))],
                                [sh((3,), np.dtype("float64"))])
    c = np.array([1.0, 2.0, 4.0])
    want = c.copy()
    for _ in range(4):
        want = want[::-1] * 0.5 + 1.0
    np.testing.assert_array_equal(k.entry_point(c), want)
    np.testing.assert_array_equal(c, [1.0, 2.0, 4.0])            # the input is untouched


def test_array_bindings_that_could_outlive_their_region_are_declined():
    # an array rebound only on some iterations could be read two iterations after its
    # region was rewritten: a binding inside a branch of a loop, or in a loop that continues
    sh = ad.core.ShapedArray
    for body in ("        if i % 2 == 0:\n            C = np.empty((3,), np.float64)\n"
                 "            C[0] = A[0]\n",
                 "        if i == 1:\n            continue\n"
                 "        C = np.empty((3,), np.float64)\n        C[0] = A[0]\n"):
        src = ("import numpy as np\ndef kernel(A):\n    C = np.empty((3,), np.float64)\n"
               "    C[0] = 0.0\n    for i in range(4):\n" + body + "    return C[0]\n")
        with pytest.raises(llvm_cpu.Unsupported, match="branch of a loop"):
            llvm_cpu.compile_source(src, "kernel", [sh((3,), np.dtype("float64"))],
                                    [sh((), np.dtype("float64"))])


def test_variables_take_the_common_type_of_their_values():
    src = textwrap.dedent("""
        import numpy as np
        def kernel(A):
            acc = 0
            for i in range(4):
                acc += A[i] * 0.5
            n = 0
            for i in range(4):
                n += 1
            return (acc, n)
    """)
    aval = ad.core.ShapedArray((4,), np.dtype("float64"))
    outs = [ad.core.ShapedArray((), np.dtype("float64")),
            ad.core.ShapedArray((), np.dtype("int64"))]
    k = llvm_cpu.compile_source(src, "kernel", [aval], outs)
    acc, n = k.entry_point(np.array([1.0, 2.0, 3.0, 4.5]))
    assert acc == 5.25 and n == 4 and isinstance(n, np.integer)


def test_unknown_constructs_are_declined_not_guessed():
    aval = ad.core.ShapedArray((3,), np.dtype("float64"))
    out = [ad.core.ShapedArray((), np.dtype("float64"))]
    for body in ("with some_context():\n        pass\n    return A[0]",
                 "return some_helper(A[0])",
                 "return A.sum()",
                 "return np.sort(A)[0]"):
        src = f"import numpy as np\ndef kernel(A):\n    {body}\n"
        with pytest.raises(llvm_cpu.Unsupported):
            llvm_cpu.compile_source(src, "kernel", [aval], out)


def test_the_kernel_text_is_numbas():
    # the tier compiles the Program numba_cpu lowers, pieces and chunks included
    def loss(w, y):
        for _ in range(12):
            y = y + 0.05 * anp.tanh(y @ w)
        return anp.sum(y ** 2)
    w = np.linspace(-0.3, 0.3, 64).reshape(8, 8)
    y = np.linspace(-1, 1, 8)
    closed = run_pipeline(ad.make_jaxpr(ad.grad(loss))(w, y))
    prog = numba_cpu.lower(closed, dynamic_dims=frozenset())
    assert prog.pieces and "kernel__" in prog.source      # shared nests and chunks
    got = llvm_cpu.compile_program(prog).entry_point(w, y)
    np.testing.assert_allclose(got, ad.grad(loss)(w, y), rtol=1e-12, atol=1e-14)


def test_a_fresh_process_compiles_without_importing_numba(tmp_path):
    script = textwrap.dedent("""
        import sys, numpy as np, autodiff as ad, autodiff.numpy as anp
        ad.config.update("jit_background_compile", False)
        f = ad.jit(ad.value_and_grad(lambda w, x: anp.mean(anp.tanh(x @ w) ** 2)))
        v, g = f(np.ones((3, 2)) * 0.1, np.linspace(0, 1, 12).reshape(4, 3))
        assert f._entry_for(np.ones((3, 2)) * 0.1,
                            np.linspace(0, 1, 12).reshape(4, 3)).backend == "llvm"
        print(float(v), "numba" in sys.modules)
    """)
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path))
    env.pop("AUTODIFF_JIT_LLVM_TIER", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    v, imported = out.stdout.split()
    want = np.mean(np.tanh(np.linspace(0, 1, 12).reshape(4, 3) @ (np.ones((3, 2)) * 0.1)) ** 2)
    assert abs(float(v) - want) < 1e-15 and imported == "False"


def test_a_background_compile_lands_the_llvm_kernel_from_the_worker(tmp_path):
    # the default mode: the first calls run on the interpreter, the worker process compiles
    # the object code and this process loads it (no Numba here, no disk cache needed)
    script = textwrap.dedent("""
        import sys, numpy as np, autodiff as ad, autodiff.numpy as anp
        from autodiff import jit_runtime
        f = ad.jit(lambda x: anp.sum(anp.tanh(x) * 2.0))
        x = np.linspace(0.0, 1.0, 50)
        f(x); f(x)
        assert ad.wait_for_compiles(60)
        e = f._entry_for(x)
        print(e.backend, e.state, float(f(x)), "numba" in sys.modules,
              jit_runtime._compiler.worker_pid() is not None)
    """)
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path))
    env.pop("AUTODIFF_JIT_LLVM_TIER", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    backend, state, v, numba, worker = out.stdout.split()
    assert (backend, state, numba, worker) == ("llvm", "compiled", "False", "True")
    x = np.linspace(0.0, 1.0, 50)
    assert abs(float(v) - np.sum(np.tanh(x) * 2.0)) < 1e-12


def test_the_switch_turns_it_off():
    ad.config.update("jit_llvm_tier", False)
    out, backend = _run(lambda x: anp.sum(x * 2.0), X)
    assert backend == "cpu" and out == np.sum(X * 2.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sorting_calls_its_c_entry_point(dtype):
    # sort and argsort lanes run numpy's sort through numba_runtime's C entry points
    # (C_ABI rows with an array result the kernel allocates): NaN last, argsort stable
    x = np.random.default_rng(3).standard_normal((5, 8)).astype(dtype)
    x[1, 2] = np.nan
    x[3, :4] = 0.5                          # ties: the stable order
    (s1, a0, s0), backend = _run(lambda v: (anp.sort(v, axis=1), anp.argsort(v, axis=0),
                                            anp.sort(v, axis=0) * 2), x)
    assert backend == "llvm"
    np.testing.assert_array_equal(s1, np.sort(x, axis=1))
    np.testing.assert_array_equal(a0, np.argsort(x, axis=0, kind="stable"))
    np.testing.assert_array_equal(s0, np.sort(x, axis=0) * 2)
    assert s1.dtype == dtype
