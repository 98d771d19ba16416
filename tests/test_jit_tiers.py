"""jit's first call: specialized kernels, dimensions that turn dynamic once, views without
copies, tiny values kept in scalars, and background compilation (the interpreter runs
until the kernel is ready). The numpy interpreter is the oracle throughout.
"""
import os
import re
import json
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.backends import compile_cache


def interp(fn, *args):
    return ad.jit(fn, backend="interpret")(*args)


def assert_tree_close(got, want, rtol=1e-12, atol=1e-13):
    gl, wl = ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)
    assert len(gl) == len(wl)
    for g, w in zip(gl, wl):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)



def n_compiles():
    s = compile_cache.stats()
    return s["compiles"] + s["disk_loads"]


def kernel_body(source):
    """The generated kernel's statements, without the equation comments."""
    return [ln.strip() for ln in source.splitlines()
            if ln.strip() and not ln.strip().startswith("#")]


# ---------------------------------------------------------------------------------
# specialization: sizes and literals are constants; tiny arrays live in scalars
# ---------------------------------------------------------------------------------

def lotka_volterra(theta, u):
    a, b, c, d = theta[0], theta[1], theta[2], theta[3]
    for _ in range(3):
        du = anp.stack([a * u[0] - b * u[0] * u[1], c * u[0] * u[1] - d * u[1]])
        u = u + 0.05 * du
    return anp.sum(u ** 2) + anp.max(u) - anp.min(anp.abs(u))


THETA = np.array([1.0, 0.1, 0.075, 1.5])
U0 = np.array([10.0, 5.0])


def test_specialized_kernel_has_constant_sizes_and_no_size_vector():
    low = ad.jit(lambda x: anp.sum(anp.exp(x) * 3.5)).lower(np.ones(7))
    text = low.as_text()
    assert "range(7)" in text
    assert "3.5" in text                         # the literal is in the code
    assert "_sz" not in text and "slot_" not in text


def test_tiny_vectors_become_straight_line_scalar_code():
    g = ad.jit(ad.grad(lotka_volterra), dynamic_shapes=False)
    src = g.lower(THETA, U0).as_text()
    body = kernel_body(src)
    # no loop and no temporary array: only the two gradient outputs are allocated
    assert not any(ln.startswith("for ") for ln in body), src
    assert sum("np.empty(" in ln for ln in body) == 1, src
    assert_tree_close(g(THETA, U0), interp(ad.grad(lotka_volterra), THETA, U0))
    np.testing.assert_allclose(g(THETA, U0),
                               ad.grad(lotka_volterra)(THETA, U0), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unrolled_movement_and_reductions_match_the_interpreter(dtype):
    def f(x, y):
        z = anp.concatenate([x[::-1], anp.pad(y, (1, 0))])          # (3,) + (3,) = (6,)
        w = anp.transpose(anp.reshape(x[:2] * y[1:], (2, 1)))           # (1, 2)
        s = anp.stack([anp.sum(x), anp.prod(y), anp.max(x), anp.min(y)])
        return z[:4] * 2.0, w, s, anp.any(x > 0.5), anp.argmax(s), anp.sum(w, axis=0)

    x = np.array([0.3, -1.2, 0.7], dtype)
    y = np.array([2.0, np.nan, -0.5], dtype)
    jf = ad.jit(f, dynamic_shapes=False)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else {}
    assert_tree_close(jf(x, y), interp(f, x, y), **tol)
    # the same values once more, now through the generic kernel
    assert_tree_close(ad.jit(f, dynamic_shapes=True)(x, y), interp(f, x, y), **tol)


def test_scan_body_over_a_small_state_is_unrolled():
    def energy(p, y0):
        def step(y, _):
            y = y + 0.01 * anp.stack([y[1], -p[0] * y[0] - p[1] * y[1]])
            return y, y[0]
        y, xs = ad.lax.scan(step, y0, None, length=50)
        return anp.sum(y ** 2) + anp.sum(xs)
    g = ad.jit(ad.grad(energy))
    p, y0 = np.array([4.0, 0.4]), np.array([1.0, 0.0])
    assert_tree_close(g(p, y0), interp(ad.grad(energy), p, y0))


# ---------------------------------------------------------------------------------
# views: index arithmetic in the consumer's loop, never a copy
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dynamic", [False, True])
def test_views_compile_to_no_allocation(dynamic):
    def f(x):
        a = x[1:9]                                   # slice
        b = anp.expand_dims(x[::-1][:8], 0)[0]       # rev, slice, expand_dims, squeeze
        c = anp.reshape(x[:8], (8, 1))[:, 0]         # reshape adding a unit axis
        return a * b + c + x[3] * x[-1]              # element reads
    x = np.linspace(-1.0, 1.0, 50)
    jf = ad.jit(f, dynamic_shapes=dynamic)
    src = jf.lower(x).as_text()
    allocs = [ln for ln in kernel_body(src) if "np.empty(" in ln or "np.full(" in ln]
    assert len(allocs) == 1, src                     # the output only
    assert "copy" not in src, src
    np.testing.assert_allclose(jf(x), interp(f, x), rtol=1e-14)


def _loop_nest_lines(src):
    return [ln for ln in src.splitlines() if ln.strip().startswith("# ---- loop nest")]


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_transposed_result_is_stored_in_place_by_its_loop(dynamic):
    # a Hessian's batched program ends in reshape + transpose of a loop's value: the loop
    # stores straight into the transposed layout (one n x n array, no copy nest)
    f = lambda x: anp.sum(anp.sin(x) ** 3)                     # noqa: E731
    x = np.linspace(0.1, 1.3, 9)
    jh = ad.jit(ad.hessian(f), dynamic_shapes=dynamic)
    src = jh.lower(x).as_text()
    assert not [ln for ln in _loop_nest_lines(src) if ": 0 fused" in ln], src   # no copy nest
    if not dynamic:
        assert len(re.findall(r"np\.empty\(\(9, (1, )?9\)", src)) == 1, src
    want = np.diag(6 * np.sin(x) * np.cos(x) ** 2 - 3 * np.sin(x) ** 3)
    np.testing.assert_allclose(jh(x), want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(jh(x), interp(ad.hessian(f), x), rtol=1e-14, atol=1e-15)


def test_store_through_a_transpose_keeps_other_readers_right():
    # the base or the view read by anything else must still be there
    a = np.random.default_rng(3).normal(size=(3, 4))

    def base_also_returned(x):
        b = anp.tanh(x) * 2.0
        return b.T, b

    def view_also_read(x):
        c = (anp.tanh(x) * 2.0).T
        return c, c + 1.0

    def through_unit_axes(x):
        b = anp.reshape(anp.tanh(x) * 2.0, (3, 1, 4))
        return anp.transpose(b, (2, 1, 0))

    def into_a_dot(x):
        return (anp.exp(x) - 1.0).T @ x

    for fn in (base_also_returned, view_also_read, through_unit_axes, into_a_dot):
        got = ad.jit(fn)(a)
        assert_tree_close(got, interp(fn, a), rtol=1e-13, atol=1e-14)
        for g in ad.tree_util.tree_leaves(got):
            assert np.asarray(g).flags.c_contiguous


# ---------------------------------------------------------------------------------
# dynamic dimensions: specialize first, generalize once
# ---------------------------------------------------------------------------------

def test_a_dimension_turns_dynamic_exactly_once(caplog, numba_path):
    # pins the Numba path: n_compiles counts compile_cache's kernels, which the direct
    # LLVM tier (it takes the specialized first kernel) does not go through
    w = np.random.default_rng(1).normal(size=(3, 2))
    fn = lambda x: anp.sum(anp.tanh(x @ w) * 1.25, axis=1)      # noqa: E731
    f = ad.jit(fn)
    counts = []
    for n in (4, 6, 9, 4, 13, 2):
        x = np.random.default_rng(n).normal(size=(n, 3))
        before = n_compiles()
        with caplog.at_level("WARNING", logger="autodiff.jit"):
            ad.config.update("explain_cache_misses", n == 6)
            try:
                np.testing.assert_allclose(f(x), interp(fn, x), rtol=1e-12)
            finally:
                ad.config.update("explain_cache_misses", False)
        counts.append(n_compiles() - before)
    # 4: specialized kernel; 6: the batch dimension turns dynamic (generic kernel);
    # 9, 13, 2: that kernel again; 4 again: a hit of the first signature
    assert counts == [1, 1, 0, 0, 0, 0], counts
    assert "dimension 0 of argument leaf 0 turned dynamic (size 4 -> 6)" in caplog.text
    # only the changed dimension is symbolic: the widths 3 and 2 stay constants
    src = f.lower(np.ones((5, 3))).as_text()
    assert "range(2)" in src and "np.empty((n0, 2)" in src


def test_dynamic_shapes_false_always_specializes_and_true_never_does():
    fn = lambda x: anp.sum(x * x)                               # noqa: E731
    spec, gen = ad.jit(fn, dynamic_shapes=False), ad.jit(fn, dynamic_shapes=True)
    for n in (3, 5, 8):
        x = np.arange(float(n))
        assert float(spec(x)) == float(gen(x)) == float(np.sum(x * x))
    assert f"range({8})" in spec.lower(np.ones(8)).as_text()
    assert "_sz" in gen.lower(np.ones(8)).source
    with pytest.raises(TypeError, match="dynamic_shapes"):
        ad.jit(fn, dynamic_shapes="yes")


# ---------------------------------------------------------------------------------
# background compilation
# ---------------------------------------------------------------------------------

def test_background_and_blocking_tiers_agree(background_compile):
    # a literal unique to this test keeps the kernel out of every cache
    k = 1.0 + np.random.default_rng().integers(1, 10**9) * 1e-12
    fn = lambda x: anp.sum(anp.tanh(x) * anp.sin(x) + anp.exp(-x * x) * k)   # noqa: E731
    g = ad.jit(ad.grad(fn))
    x = np.linspace(-2.0, 2.0, 301)
    first = g(x)                                   # the interpreter, while Numba compiles
    info = g.cache_info()
    assert info.pending == 1 and info.compiled == 0, info
    assert g.wait_compiled(120)
    assert g.cache_info().compiled == 1 and g.cache_info().pending == 0
    second = g(x)                                  # the kernel
    assert g.cache_info().hits == 1
    # the two tiers agree to the vectorized math's error bound (a few ulp of the terms)
    np.testing.assert_allclose(second, first, rtol=1e-13, atol=4e-16 * 8)
    ad.config.update("jit_background_compile", False)
    blocking = ad.jit(ad.grad(fn))(x)              # same source: the compiled kernel at once
    np.testing.assert_array_equal(blocking, second)


def test_tiering_a_signature_called_once_never_lowers_or_compiles(background_compile,
                                                                  monkeypatch):
    # jit_compile_after = 2 (the default): the first call of a signature runs on the
    # interpreter and starts nothing; the second starts its compile (lowered by the worker
    # process, or here when it lowers in this process)
    from autodiff import jit_runtime as R
    lowered = []
    real = R.submit_compile
    monkeypatch.setattr(sys.modules["autodiff.jit"], "submit_compile",
                        lambda *a, **k: lowered.append(1) or real(*a, **k))
    k = 5.0 + np.random.default_rng().integers(1, 10**9) * 1e-12
    f = ad.jit(lambda x: anp.sum(anp.tanh(x) * k))
    x = np.linspace(-1.0, 1.0, 7)
    want = np.sum(np.tanh(x) * k)
    assert f(x) == pytest.approx(want, rel=1e-14)
    assert lowered == [] and R._compiler.pending() == 0
    assert f.cache_info().pending == 1               # waiting for its second call
    assert f(x) == pytest.approx(want, rel=1e-14)    # the second call starts the compile
    assert lowered == [1]
    assert f.wait_compiled(120)
    assert f.cache_info().compiled == 1
    assert f(x) == pytest.approx(want, rel=1e-14)
    # another signature, once: wait_for_compiles() starts what still counts its calls
    f(np.ones(3))
    assert f.cache_info().pending == 1
    assert ad.wait_for_compiles(120)
    assert f.cache_info().compiled == 2 and f.cache_info().pending == 0


def test_tiering_compile_after_one_starts_at_the_first_call(background_compile, monkeypatch,
                                                              numba_path):
    # pins the Numba path: the compiler's queue (R._compiler.submit) is its mechanism
    from autodiff import jit_runtime as R
    submitted = []
    monkeypatch.setattr(R._compiler, "submit", lambda key, prog, cb: submitted.append(key))
    ad.config.update("jit_compile_after", 1)
    try:
        k = 6.0 + np.random.default_rng().integers(1, 10**9) * 1e-12
        f = ad.jit(lambda x: x * k)
        np.testing.assert_allclose(f(np.ones(2)), [k, k])
        assert len(submitted) == 1
    finally:
        ad.config.update("jit_compile_after", 2)


def test_a_script_calling_once_starts_no_worker(tmp_path):
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path))
    env.pop("AUTODIFF_JIT_COMPILE_PROCESS", None)
    script = CHILD.replace("r = g(np.linspace(-1, 1, 64))\nr = g(", "r = g(")
    assert script != CHILD
    out = subprocess.run([sys.executable, "-c", script, "background", "12", "0.0"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")][0].split()
    assert line[2] == "1" and line[4] == "None"      # pending (never started), no worker
    assert not list(tmp_path.rglob("k_*.py"))        # nothing was lowered or written


def test_wait_for_compiles_returns_once_the_compiled_program_is_installed(
        background_compile, monkeypatch):
    # the compiler thread took a job off its queue (what wait_for_compiles watched) before
    # installing the compiled program, so a call right after the wait could still run on
    # the interpreter; the install is slowed here to show it
    J = sys.modules["autodiff.jit"]            # (ad.jit, the attribute, is the function)
    slow = J.compiled_entry

    def compiled_entry(*a, **kw):
        time.sleep(0.3)
        return slow(*a, **kw)
    monkeypatch.setattr(J, "compiled_entry", compiled_entry)
    k = 3.0 + np.random.default_rng().integers(1, 10**9) * 1e-12
    f = ad.jit(lambda x: anp.sum(anp.tanh(x) * k))
    f(np.ones(5))
    f(np.ones(5))
    assert ad.wait_for_compiles()             # (no timeout: it polls the compiler's queue)
    assert f._entry_for(np.ones(5)).state == "compiled"
    assert float(f(np.ones(5))) == pytest.approx(5 * np.tanh(1.0) * k, rel=1e-14)


def test_lower_compile_blocks_and_installs(background_compile):
    k = 2.0 + np.random.default_rng().integers(1, 10**9) * 1e-12
    f = ad.jit(lambda x: anp.sum(x * k))
    compiled = f.lower(np.ones(4)).compile()
    assert f.cache_info().compiled == 1 and f.cache_info().pending == 0
    assert float(compiled(np.ones(4))) == pytest.approx(4 * k, rel=1e-15)
    assert f.cache_info().misses == 0 and f.cache_info().hits == 1


@pytest.mark.parametrize("where", ["here", "worker"])
def test_a_failed_background_compile_keeps_the_interpreter(background_compile, monkeypatch,
                                                           where):
    from autodiff.backends import compile_cache, llvm_cpu, numba_cpu

    if where == "here":          # lowered in this process: a kernel without its entry point
        real = numba_cpu.lower

        def broken(closed, **kw):
            prog = real(closed, **kw)
            prog.source = prog.source.replace("def kernel(", "def kernel_(")
            return prog
        monkeypatch.setattr(numba_cpu, "lower", broken)
        monkeypatch.setattr(sys.modules["autodiff.jit"], "remote_lowering", lambda c: False)
    else:                        # lowered by the worker: what it sends back does not load
        def fails(*a, **k):
            raise RuntimeError("cannot load")
        monkeypatch.setattr(llvm_cpu, "load_object", fails)
        monkeypatch.setattr(compile_cache, "get_kernel", fails)
    k = 3.0 + np.random.default_rng().integers(1, 10**9) * 1e-12
    f = ad.jit(lambda x: x * k)
    np.testing.assert_allclose(f(np.ones(2)), [k, k])
    assert ad.wait_for_compiles(120)
    info = f.cache_info()
    assert info.pending == 0 and info.compiled == 0
    np.testing.assert_allclose(f(np.ones(2)), [k, k])


def test_the_worker_lowers_a_background_compile(background_compile, monkeypatch):
    # jit_compile_process (the default): the worker process lowers the program too, so this
    # process never runs lower_program; the kernel it sends back agrees with the interpreter
    from autodiff import jit_runtime as R
    lowered = []
    real = R.lower_program
    monkeypatch.setattr(R, "lower_program", lambda *a, **k: lowered.append(1) or real(*a, **k))
    monkeypatch.setattr(sys.modules["autodiff.jit"], "lower_program",
                        lambda *a, **k: lowered.append(1) or real(*a, **k))
    k = 1.5 + np.random.default_rng().integers(1, 10**9) * 1e-12
    w = np.linspace(0.5, 1.5, 6).reshape(2, 3)        # a constant the program closes over

    def net(x):
        for i in range(6):                            # unrolled: a long program
            x = anp.tanh(x * k + anp.sum(w) * i / 10)
        return anp.sum(x * x)
    g = ad.jit(ad.value_and_grad(net))
    x = np.linspace(-1.0, 1.0, 9)
    first = g(x)
    second = g(x)                                     # starts the compile
    assert g.wait_compiled(120)
    assert g.cache_info().compiled == 1
    third = g(x)
    assert lowered == []                              # not in this process
    for a, b in ((first, third), (second, third)):
        np.testing.assert_allclose(a[0], b[0], rtol=1e-13)
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-15)
    # the same program from another jitted function: the worker sends its object code
    # again without compiling it (and the answer is the same)
    h = ad.jit(ad.value_and_grad(net))
    h(x), h(x)
    assert h.wait_compiled(120)
    np.testing.assert_array_equal(h(x)[1], third[1])


def test_the_worker_lowers_under_this_process_options(background_compile, numba_path):
    # config options travel with the job: with jit_llvm_tier off here, the worker's
    # kernel is Numba's (a kernel of the LLVM tier would say so in its entry's backend)
    k = 2.5 + np.random.default_rng().integers(1, 10**9) * 1e-12
    f = ad.jit(lambda x: anp.sum(anp.sin(x) * k))
    x = np.linspace(0.0, 1.0, 5)
    f(x), f(x)
    assert f.wait_compiled(120)
    entry = f._table[next(iter(f._table))].entry
    assert entry.backend == "cpu" and type(entry.kernel).__name__ == "Kernel"
    assert f(x) == pytest.approx(np.sum(np.sin(x) * k), rel=1e-14)


def test_a_program_the_pickler_cannot_send_is_lowered_here(background_compile, monkeypatch):
    # a pure_callback's lambda cannot travel to the worker: this process lowers the program
    # (and the compile still happens)
    from autodiff import jit_runtime as R
    lowered = []
    real = R.lower_program
    monkeypatch.setattr(R, "lower_program", lambda *a, **k: lowered.append(1) or real(*a, **k))
    k = 4.0 + np.random.default_rng().integers(1, 10**9) * 1e-12
    cb = lambda x: np.cos(x)                                            # noqa: E731

    def f(x):
        y = ad.pure_callback(cb, ad.ShapeDtypeStruct(x.shape, x.dtype), x)
        return anp.sum(y * k)
    g = ad.jit(f)
    x = np.linspace(0.0, 1.0, 4)
    g(x), g(x)
    assert g.wait_compiled(120)
    assert g.cache_info().compiled == 1 and lowered == [1]
    assert g(x) == pytest.approx(np.sum(np.cos(x)) * k, rel=1e-14)


CHILD = textwrap.dedent("""
    import sys, time, numpy as np
    import autodiff as ad, autodiff.numpy as anp
    ad.config.update("jit_background_compile", sys.argv[1] == "background")
    def net(x):
        for i in range(int(sys.argv[2])):
            x = anp.tanh(anp.sin(x) * (1.0 + i / 7) + anp.exp(-x * x))
        return anp.sum(x)
    g = ad.jit(ad.grad(net))
    r = g(np.linspace(-1, 1, 64))
    r = g(np.linspace(-1, 1, 64))               # a second call: its compile starts (tiering)
    if sys.argv[1] == "background":
        time.sleep(float(sys.argv[3]))          # the compile has started: it is in flight
    from autodiff.backends import compile_cache
    from autodiff.jit_runtime import _compiler
    print("RESULT", repr(float(r.sum())), g.cache_info().pending,
          compile_cache.stats()["disk_loads"], _compiler.worker_pid(), repr(time.time()),
          flush=True)
""")


def _alive(pid):
    """Whether process ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the worker's state in /proc")
def test_exit_with_a_pending_compile_is_prompt_and_leaves_a_sound_cache(tmp_path):
    # the script ends at once; the worker process finishes the kernel in flight into the
    # disk cache on its own, and the next run loads it (issue 31: exit never waits).
    # Pins the Numba path (AUTODIFF_JIT_LLVM_TIER=0): the worker and its cache are its own
    import time
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path), AUTODIFF_JIT_LLVM_TIER="0")
    env.pop("AUTODIFF_JIT_COMPILE_PROCESS", None)

    def run(mode, *extra):
        out = subprocess.run([sys.executable, "-c", CHILD, mode, *extra], env=env,
                             capture_output=True, text=True, timeout=300)
        ended = time.time()
        assert out.returncode == 0, out.stderr
        line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")][0].split()
        return (float(line[1]), int(line[2]), int(line[3]),
                None if line[4] == "None" else int(line[4]), ended - float(line[5]))

    def index_files():
        return sorted(p.name for p in tmp_path.rglob("k_*.nbi"))

    value, pending, _, pid, exit_s = run("background", "40", "0.5")
    assert pending == 1 and pid is not None
    if _alive(pid) and not index_files():
        # the compile was still running when the script ended: the script did not wait for
        # it (a 40-layer gradient takes seconds to compile; the exit takes a fraction of one)
        assert exit_s < 5.0, exit_s
    deadline = time.time() + 240
    while _alive(pid) and time.time() < deadline:
        time.sleep(0.2)
    assert not _alive(pid), "the worker outlived its grace period"
    assert index_files(), "the worker did not finish the kernel in flight"
    leftovers = [p for p in tmp_path.rglob("*") if ".tmp" in p.name]
    assert not leftovers, leftovers
    again, pending, disk_loads, _, _ = run("blocking", "40")
    assert pending == 0 and disk_loads >= 1      # the next run loads what the worker compiled
    assert again == pytest.approx(value, rel=1e-12)


def test_without_the_worker_an_exit_leaves_a_sound_cache(tmp_path):
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path), AUTODIFF_JIT_COMPILE_PROCESS="0")
    out = subprocess.run([sys.executable, "-c", CHILD, "background", "12", "0.3"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")][0].split()
    assert line[4] == "None"                     # no worker process was started
    leftovers = [p for p in tmp_path.rglob("*") if ".tmp" in p.name]
    assert not leftovers, leftovers


def test_exit_lets_the_compile_in_flight_finish(monkeypatch):
    # never kill LLVM mid-compile: the compiler thread runs it without the GIL, and the
    # interpreter's shutdown disposes LLVM objects it still uses. The exit hook (run by
    # threading's shutdown, before atexit and the finalizers) waits for the compile in
    # flight, up to jit.EXIT_WAIT_S, and drops the queued ones.
    import threading
    import time
    from autodiff import jit_runtime as J
    hooks = getattr(threading, "_threading_atexits", [])      # functools.partial objects
    assert any(getattr(h, "func", h) is J.abandon_pending_compiles for h in hooks)
    started, done = threading.Event(), []

    def slow_compile(source, entry, params, pieces=()):
        started.set()
        time.sleep(0.4)
        return "kernel"
    monkeypatch.setattr(compile_cache, "get_kernel", slow_compile)
    monkeypatch.setitem(ad.config._values, "jit_compile_process", False)   # this process compiles
    comp = J.Compiler()

    class Prog:
        source, entry, params, pieces = "src", "kernel", (), ()
    comp.submit("in flight", Prog, lambda k, e: done.append(("in flight", k)))
    comp.submit("queued", Prog, lambda k, e: done.append(("queued", k)))
    assert started.wait(10)
    comp.close(wait=J.EXIT_WAIT_S)
    assert done == [("in flight", "kernel")]     # finished before close returned; queue dropped


# ---------------------------------------------------------------------------------
# the kernel-level cache: loop nests are modules of their own, keyed by content
# ---------------------------------------------------------------------------------

def _layer_nets(seed):
    w = np.random.default_rng(seed).normal(size=(6, 6)) / 3

    # three and four layers: the middle layers' loops repeat within each program (a nest
    # that occurs once stays inline, see numba_cpu._Module.outline) and across the two
    def three(x):
        for _ in range(3):
            x = anp.tanh(x @ w) * 0.75 + 0.5 * x
        return anp.sum(x ** 2)

    def four(x):
        for _ in range(4):
            x = anp.tanh(x @ w) * 0.75 + 0.5 * x
        return anp.sum(x ** 2) * 2.0
    return three, four


def test_a_shared_loop_nest_compiles_once_across_functions(numba_path):
    # pins the Numba path: pieces are modules of Numba's kernels
    seed = int(np.random.default_rng().integers(10**6))      # fresh nests for this run
    three, four = _layer_nets(seed)
    x = np.random.default_rng(seed + 1).normal(size=(5, 6)) * (1 + 1e-9 * seed)
    f2, f3 = ad.jit(ad.grad(three)), ad.jit(ad.grad(four))
    p2 = {n for n, _ in f2.lower(x).pieces}
    p3 = {n for n, _ in f3.lower(x).pieces}
    assert p2 & p3, "the layer's loops should be the same pieces in both programs"
    s0 = dict(compile_cache.stats())
    np.testing.assert_allclose(f2(x), ad.grad(three)(x), rtol=1e-12)
    s1 = dict(compile_cache.stats())
    np.testing.assert_allclose(f3(x), ad.grad(four)(x), rtol=1e-12)
    s2 = dict(compile_cache.stats())
    first = s1["piece_compiles"] - s0["piece_compiles"]
    second = s2["piece_compiles"] - s1["piece_compiles"]
    assert first == len(p2)
    assert second == len(p3 - p2), (first, second, len(p2), len(p3))


def test_nests_that_differ_only_in_a_constant_are_not_one_piece(numba_path):
    # two fills of float32 constants (zeros for where's other value, ones for the carry):
    # their nests read one global constant each and have one canonical body; as one piece
    # the carry started at 0 and the loop gave 1.5 for 1.375
    x = np.full(5, 0.5, np.float32)

    def f(x):
        return ad.lax.fori_loop(0, 3, lambda i, c: anp.where(c < 0.0, 0.0, 1.0 + x / c),
                                anp.ones_like(x))
    jf = ad.jit(f)
    pieces = jf.lower(x).pieces
    assert len({src for _, src in pieces}) == len(pieces)
    want = np.ones(5, np.float32)
    for _ in range(3):
        want = 1.0 + x / want
    np.testing.assert_allclose(jf(x), want, rtol=1e-6)
    np.testing.assert_allclose(jf(x), ad.jit(f, backend="interpret")(x), rtol=1e-6)


PIECE_CHILD = textwrap.dedent("""
    import sys, numpy as np
    import autodiff as ad, autodiff.numpy as anp
    from autodiff.backends import compile_cache
    sys.path.insert(0, sys.argv[2])
    from test_jit_tiers import _layer_nets
    ad.config.update("jit_background_compile", False)
    three, four = _layer_nets(int(sys.argv[3]))
    f = ad.jit(ad.grad(three if sys.argv[1] == "three" else four))
    x = np.random.default_rng(5).normal(size=(5, 6))
    r = f(x)
    s = compile_cache.stats()
    print("RESULT", repr(float(np.sum(r))), s["piece_compiles"], s["piece_disk_loads"],
          s["compiles"], flush=True)
""")


def test_pieces_are_shared_across_processes(tmp_path):
    # pins the Numba path (AUTODIFF_JIT_LLVM_TIER=0): pieces are modules of Numba's kernels
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path), AUTODIFF_JIT_LLVM_TIER="0")
    seed = str(int(np.random.default_rng().integers(10**6)))

    def run(which):
        out = subprocess.run([sys.executable, "-c", PIECE_CHILD, which,
                              os.path.dirname(__file__), seed],
                             env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        r = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")][0].split()
        return float(r[1]), int(r[2]), int(r[3]), int(r[4])

    v2, compiled2, loaded2, _ = run("three")
    assert compiled2 > 0 and loaded2 == 0
    # another process, another function (its kernel is new) sharing the layer's loops:
    # those come from the first process's disk cache
    v3, compiled3, loaded3, kernels3 = run("four")
    assert kernels3 == 1 and loaded3 > 0, (compiled3, loaded3)
    three, four = _layer_nets(int(seed))
    x = np.random.default_rng(5).normal(size=(5, 6))
    assert v2 == pytest.approx(float(np.sum(ad.grad(three)(x))), rel=1e-12)
    assert v3 == pytest.approx(float(np.sum(ad.grad(four)(x))), rel=1e-12)


def test_disable_jit_runs_the_python_function():
    seen = []

    @ad.jit
    def f(x):
        seen.append(type(x))
        return anp.sum(anp.sin(x) * 2.0)
    x = np.linspace(0.0, 1.0, 5)
    with ad.disable_jit():
        a = f(x)
        with ad.disable_jit(False):       # nested: still disabled by the outer context
            b = f(x)
    assert seen == [np.ndarray, np.ndarray]
    assert f.cache_info().misses == 0
    c = f(x)                               # traced and compiled again outside
    assert seen[-1] is not np.ndarray and f.cache_info().misses == 1
    np.testing.assert_allclose([a, b], [c, c], rtol=1e-14)


@pytest.mark.parametrize("dynamic", [False, True])
def test_views_of_loop_values_fuse_only_when_indices_agree(dynamic):
    # a square matrix's transpose has the same dimension classes as the matrix: it must
    # still be read transposed (regression: it was fused as if it were the matrix itself)
    cases = [lambda s: s + anp.transpose(s * 2.0),
             lambda s: s + anp.transpose(anp.tanh(s))[None][0],
             lambda s: anp.sum(anp.reshape(s * 3.0, (6, 1, 6)) + 1.0, axis=1) - s.T,
             lambda s: anp.expand_dims(anp.exp(s), 1)[:, 0, :] * s[::-1]]
    x = np.arange(36.0).reshape(6, 6) / 10.0
    for f in cases:
        np.testing.assert_allclose(ad.jit(f, dynamic_shapes=dynamic)(x), interp(f, x),
                                   rtol=1e-14, atol=1e-14)


def test_identity_constants_are_recomputed_in_loops_not_read():
    # jacfwd's basis (an identity with size-1 axes between) becomes iota == iota inside
    # the loops that read it: the kernel takes no n x n constant
    f = lambda x: anp.sum(anp.sin(x) ** 3)                    # noqa: E731
    x = np.linspace(-1.0, 1.0, 40)
    h = ad.jit(ad.hessian(f))
    low = h.lower(x)
    assert all(np.ndim(c) < 2 for c in low.program.consts), [np.shape(c) for c in low.program.consts]
    assert "== " in low.as_text()
    np.testing.assert_allclose(h(x), interp(ad.hessian(f), x), rtol=1e-13, atol=1e-15)
    w = np.eye(12)[:, None, :] * 1.0                          # a closed-over identity too
    g = lambda v: anp.tanh(w * v).sum(axis=0)                 # noqa: E731
    np.testing.assert_allclose(ad.jit(g)(np.linspace(0, 1, 12)), interp(g, np.linspace(0, 1, 12)),
                               rtol=1e-14)


SCIPY_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    if sys.argv[1] == "upstream":          # Numba alone: its first compile imports scipy.linalg
        import numba.np.arraymath
    else:
        import autodiff as ad
        import autodiff.numpy as anp
        ad.config.update("jit_background_compile", False)
        v = ad.jit(lambda x: anp.sum(anp.tanh(x) * 2.0))(np.linspace(-1, 1, 7))
        print("VALUE", repr(float(v)))
        import numba.np.arraymath as am
        print("HAVE_BLAS", am._HAVE_BLAS)
    print("SCIPY_LINALG", "scipy.linalg" in sys.modules)
""")


@pytest.mark.parametrize("which", ["upstream", "autodiff"])
def test_first_compile_does_not_import_scipy_linalg(which, tmp_path):
    # Upstream: numba.np.arraymath imports scipy.linalg at import to check for a BLAS
    # (backends/numba_upstream.py); autodiff's kernels never need it for elementwise code.
    # Pins the Numba path (AUTODIFF_JIT_LLVM_TIER=0): the direct LLVM tier imports no Numba.
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path), AUTODIFF_JIT_LLVM_TIER="0")
    out = subprocess.run([sys.executable, "-c", SCIPY_CHILD, which], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = dict(ln.split(" ", 1) for ln in out.stdout.splitlines())
    if which == "upstream":
        assert lines["SCIPY_LINALG"] == "True"     # if this fails, drop the workaround
        return
    assert lines["SCIPY_LINALG"] == "False"
    assert lines["HAVE_BLAS"] == "True"            # the same answer Numba's own check gives
    x = np.linspace(-1, 1, 7)
    assert float(lines["VALUE"]) == pytest.approx(float(np.sum(np.tanh(x) * 2.0)), rel=1e-13)


LOG2_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    x64, x32 = np.array([0.5, 3.0, 1e300]), np.array([0.25, 5.0, 3e38], np.float32)
    if sys.argv[1] == "upstream":          # Numba alone: np.log2 of both float types
        import numba
        try:
            numba.njit(lambda a, b: (np.log2(a[0]), np.log2(b[0])))(x64, x32)
            print("UPSTREAM compiles")
        except TypeError as e:
            print("UPSTREAM", type(e).__name__)
    else:
        import autodiff as ad
        import autodiff.numpy as anp
        ad.config.update("jit_background_compile", False)
        a, b = ad.jit(lambda a, b: (anp.log2(a), anp.log2(b)))(x64, x32)
        print("OK", json.dumps([str(a.dtype), str(b.dtype), a.tolist(), b.tolist()]))
""")


@pytest.mark.parametrize("which", ["upstream", "autodiff"])
def test_log2_of_both_float_types_in_one_kernel(which, tmp_path):
    # Upstream: Numba's np.log2 declares the bare intrinsic ``llvm.log2`` with the first
    # call's type, so float64 and float32 calls in one function fail to compile
    # (backends/numba_upstream.py: fix_log2_intrinsic names the typed intrinsics).
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", LOG2_CHILD, which], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    if which == "upstream":
        assert out.stdout.split() == ["UPSTREAM", "TypeError"]   # if this fails, drop the fix
        return
    word, got = out.stdout.split(" ", 1)
    dt64, dt32, a, b = json.loads(got)
    assert (word, dt64, dt32) == ("OK", "float64", "float32")
    np.testing.assert_array_equal(a, np.log2([0.5, 3.0, 1e300]))
    np.testing.assert_allclose(b, np.log2(np.array([0.25, 5.0, 3e38], np.float32)),
                               rtol=2e-7)


# ---------------------------------------------------------------------------------
# the planner is target-neutral: no Numba, and another emitter can read its plan
# ---------------------------------------------------------------------------------

def test_the_planner_imports_no_numba_and_serves_another_emitter():
    out = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys
        import autodiff.backends.plan, autodiff.transforms.passes, autodiff.backends.numba_cpu
        print("NUMBA", "numba" in sys.modules)
    """)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "NUMBA False" in out.stdout

    import autodiff.backends.numba_cpu  # noqa: F401  (registers the LOWERINGS records)
    from autodiff.backends.plan import KernelPlan, Planner
    from autodiff.transforms.passes import run_pipeline

    class Mod:                       # the module interface the planner reads
        static, dynamic_dims, param_literals = True, frozenset(), False

        def __init__(self):
            self.sizes = []

        def slot(self, value):
            self.sizes.append(int(value))
            return len(self.sizes) - 1

    class Recorder(Planner):         # all the planner asks a target while planning
        def code_size(self, e):
            return 1

        def jlit(self, v):
            return repr(float(v.val))

    def f(x, w):
        y = anp.tanh(x) * 2.0 + anp.sin(x).T         # one loop nest, the transpose a view
        return anp.sum(y @ w, axis=0), anp.sum(y)    # a dot (opaque), a fused reduction
    closed = run_pipeline(ad.make_jaxpr(f)(np.ones((3, 3)), np.ones((3, 2))))
    p = Recorder(Mod(), closed.jaxpr, "k", top=True)
    p.analyse()
    plan = p.plan()                   # records only: no text of any target
    assert isinstance(plan, KernelPlan)
    nests = [c for c in plan.nests if c.domain]
    kinds = sorted(m[0] for c in nests for m in c.members)
    assert kinds.count("ew") == 4 and kinds.count("reduce") == 2, kinds   # tanh mul sin add
    assert len(nests[0].domain) == 2                  # the 3 x 3 loop
    stmts = plan.entry + [st for c in plan.nests for st in c.post]
    assert [type(st).__name__ for st in stmts] == ["Opaque"]
    dot = stmts[0]
    assert dot.eqn.primitive.name == "dot_general" and dot.lines is None
    assert [r[0] for r in dot.refs] == ["array", "array"] and dot.outs[0][0] == "array"
    assert plan.outputs[1] == plan.loc[closed.jaxpr.outvars[1]]
    assert plan.outputs[1][0] == "scalar"
    assert plan.describe().splitlines()[0].startswith("nest 0 over 2 dims: ew tanh")


def test_new_sizes_get_llvm_kernels_until_one_goes_to_numba():
    # while the LLVM tier compiles a function's kernels, each new size gets its own
    # (specialized: constant trip counts); a size whose kernel is Numba's ends that, and
    # the next changed size turns the dimension dynamic (one shape-generic kernel)
    from autodiff.jit import SPECIALIZED_SIZES
    f = ad.jit(lambda x: anp.sum(anp.tanh(x) * x))
    sizes = [3 + k for k in range(SPECIALIZED_SIZES + 2)]
    backends = []
    for n in sizes:
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_allclose(f(x), np.sum(np.tanh(x) * x), rtol=1e-13)
        backends.append(f._entry_for(x).backend)
    assert backends == ["llvm"] * SPECIALIZED_SIZES + ["cpu", "cpu"]
    g = ad.jit(lambda x: anp.sum(anp.tanh(x) * x))
    old = ad.config.jit_llvm_tier
    ad.config.update("jit_llvm_tier", False)          # the first size's kernel is Numba's
    try:
        g(np.ones(3))
    finally:
        ad.config.update("jit_llvm_tier", old)
    for n in (4, 5):
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_allclose(g(x), np.sum(np.tanh(x) * x), rtol=1e-13)
        assert g._entry_for(x).backend == "cpu"
