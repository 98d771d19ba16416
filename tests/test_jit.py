"""jit: results, the graph cache, shape-generic kernels, the disk cache, composition.

Numbers are checked against the numpy interpreter or closed forms; compilations are
counted with ``compile_cache.stats()`` (never timed).
"""
import collections
import logging
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.backends import cache_files, compile_cache
from autodiff.errors import ConcretizationError, UnsupportedError
from autodiff.jit import SPECIALIZED_SIZES


def loss(x):
    return anp.sum(anp.tanh(x) * anp.sin(x) + anp.exp(-x * x))


def loss_grad_closed_form(x):
    t = np.tanh(x)
    return (1 - t * t) * np.sin(x) + t * np.cos(x) - 2 * x * np.exp(-x * x)


def mlp(params, x, y):
    (w1, b1), (w2, b2) = params
    h = anp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logp = logits - anp.logsumexp(logits, axis=1, keepdims=True)
    return -anp.mean(anp.sum(logp * y, axis=1))


def mlp_params(rng, n_in=6, n_hidden=5, n_out=3):
    return ((rng.normal(size=(n_in, n_hidden)) * 0.5, rng.normal(size=n_hidden) * 0.1),
            (rng.normal(size=(n_hidden, n_out)) * 0.5, rng.normal(size=n_out) * 0.1))


def batch(rng, n, n_in=6, n_out=3):
    x = rng.normal(size=(n, n_in))
    y = np.eye(n_out)[rng.integers(0, n_out, size=n)]
    return x, y


@pytest.fixture(scope="module")
def jitted_loss():
    return ad.jit(loss)


@pytest.fixture(scope="module")
def jitted_mlp_vg():
    return ad.jit(ad.value_and_grad(mlp))


# ---------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------

def test_value_and_types(jitted_loss):
    x = np.linspace(-2, 2, 11)
    got = jitted_loss(x)
    assert type(got) is np.float64
    np.testing.assert_allclose(got, loss(x), rtol=1e-13)
    out32 = ad.jit(lambda x: (x * 2, anp.sum(x)))(x.astype(np.float32))
    assert out32[0].dtype == np.float32 and type(out32[1]) is np.float32


def test_jit_grad_matches_closed_form(rng):
    g = ad.jit(ad.grad(loss))
    for n in (7, 1, 0, 30):
        x = rng.normal(size=n)
        np.testing.assert_allclose(g(x), loss_grad_closed_form(x), rtol=1e-12, atol=1e-14)


def test_pytree_arguments_and_results(rng):
    f = ad.jit(lambda d, s: {"a": d["x"] * s, "b": (anp.sum(d["x"]), [d["y"] + 1.0])})
    x = rng.normal(size=3)
    out = f({"x": x, "y": np.float32(2.0)}, 3.0)
    np.testing.assert_allclose(out["a"], 3 * x)
    assert type(out["b"][0]) is np.float64 and type(out["b"][1][0]) is np.float32
    Point = collections.namedtuple("Point", "u v")
    p = ad.jit(lambda p: Point(p.v, p.u * 2))(Point(np.ones(2), np.zeros(3)))
    assert isinstance(p, Point) and p.u.shape == (3,) and np.all(p.v == 2)


def test_kwargs_are_dynamic(rng):
    f = ad.jit(lambda x, scale=1.0: x * scale)
    x = rng.normal(size=3)
    np.testing.assert_allclose(f(x, scale=2.0), 2 * x)
    np.testing.assert_allclose(f(x, scale=3.0), 3 * x)
    assert f.cache_info().misses == 1


def test_configuration_kwargs_are_static(rng):
    # API.md: keyword values that are strings, None, bools or tuples of such are static
    traced = []

    def f(x, mode="a", flag=False, names=("u",), scale=1.0):
        traced.append((mode, flag, names))
        y = x * 2.0 if mode == "a" else -x
        return (y + 1.0 if flag else y) * scale
    j = ad.jit(f)
    x = rng.normal(size=3)
    np.testing.assert_allclose(j(x, mode="b", scale=1.0), -x)
    np.testing.assert_allclose(j(x, mode="a", flag=True, scale=3.0), 3 * (2 * x + 1))
    np.testing.assert_allclose(j(x, mode="b", names=("v", None), scale=1.0), -x)
    np.testing.assert_allclose(j(x, mode="b", scale=2.0), -2 * x)   # the first trace again
    assert traced == [("b", False, ("u",)), ("a", True, ("u",)), ("b", False, ("v", None))]
    info = j.cache_info()
    assert (info.misses, info.hits) == (3, 1)
    # the same inside vmap and under an enclosing jit (the kwarg is still a Python str)
    np.testing.assert_allclose(ad.vmap(lambda r: j(r, mode="b"))(np.ones((2, 3))), -1.0)
    np.testing.assert_allclose(ad.jit(lambda r: j(r, mode="b", flag=True))(x), 1.0 - x)
    # a string passed by position is an argument: it still needs static_argnums
    with pytest.raises(TypeError, match="static_argnums"):
        j(x, "b")


def test_inputs_not_aliased_and_not_mutated():
    x = np.arange(4.0)
    f = ad.jit(lambda x: (x, x.reshape((2, 2)), x + 0.0))
    a, b, c = f(x)
    a[0] = 100.0
    b[0, 1] = 100.0
    assert np.all(x == np.arange(4.0))


def test_noncontiguous_readonly_and_bigendian_inputs(jitted_loss):
    base = np.linspace(-1, 1, 20)
    strided = base[::2]
    ro = base.copy()
    ro.flags.writeable = False
    be = base.astype(">f8")
    np.testing.assert_allclose(jitted_loss(strided), loss(strided), rtol=1e-13)
    np.testing.assert_allclose(jitted_loss(ro), loss(base), rtol=1e-13)
    np.testing.assert_allclose(jitted_loss(be), loss(base), rtol=1e-13)
    np.testing.assert_allclose(jitted_loss(base.reshape(4, 5).T), loss(base), rtol=1e-13)


def test_python_and_numpy_scalars():
    f = ad.jit(lambda x, y: x * y + 1)
    assert f(2.0, 3.0) == 7.0 and type(f(2.0, 3.0)) is np.float64
    assert type(f(np.float32(2.0), np.float32(3.0))) is np.float32
    assert f(np.array(2.0), 4) == 9.0
    assert f(True, 2) == 3


def test_concretization_error_under_jit():
    def f(x):
        if anp.sum(x) > 0:
            return x
        return -x
    with pytest.raises(ConcretizationError):
        ad.jit(f)(np.ones(2))


def test_debug_nans_falls_back_to_checking_interpreter():
    f = ad.jit(lambda x: anp.log(x) * 2.0)
    assert np.isnan(f(np.array([-1.0, 1.0]))[0])
    ad.config.update("debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="log"):
            f(np.array([-1.0, 1.0]))
    finally:
        ad.config.update("debug_nans", False)


# ---------------------------------------------------------------------------------
# the graph cache
# ---------------------------------------------------------------------------------

def test_cache_info_counts_hits_and_misses():
    f = ad.jit(lambda x: x * 2.0)
    f(np.ones(3))
    f(np.ones(3))
    f(np.zeros(3))
    f(np.ones(4))
    f(np.ones(4, np.float32))
    f(1.0)
    info = f.cache_info()
    assert (info.hits, info.misses, info.size) == (2, 4, 4)
    assert info.capacity == ad.config.cache_size == 1024
    f.clear_cache()
    assert f.cache_info()[:3] == (0, 0, 0)


def test_lru_eviction_at_capacity():
    ad.config.update("cache_size", 2)
    try:
        f = ad.jit(lambda x: x + 1.0)
        a, b, c = np.ones(1), np.ones(2), np.ones(3)
        f(a)
        f(b)
        f(a)            # a is now the most recently used
        f(c)            # evicts b
        assert f.cache_info().size == 2
        f(a)
        assert f.cache_info().hits == 2
        f(b)            # was evicted: a miss
        assert f.cache_info().misses == 4
        assert f.cache_info().capacity == 2
    finally:
        ad.config.update("cache_size", 1024)


def test_static_arguments():
    calls = []

    def power_sum(x, n, scale=1.0):
        calls.append(n)
        return anp.sum(x ** n) * scale
    f = ad.jit(power_sum, static_argnums=1)
    x = np.arange(3.0)
    assert f(x, 2) == 5.0 and f(x, 3) == 9.0 and f(x, 2) == 5.0
    assert calls == [2, 3]
    with pytest.raises(TypeError, match="static argument 1.*unhashable.*list"):
        f(x, [2])
    g = ad.jit(power_sum, static_argnames="n")
    assert g(x, n=2) == 5.0 and g(x, 2) == 5.0        # by name and by position
    h = ad.jit(power_sum, static_argnames=("n", "scale"))
    assert h(x, 2, scale=3.0) == 15.0
    with pytest.raises(TypeError, match="'scale'.*unhashable"):
        h(x, 2, scale=np.ones(2))


def test_explain_cache_misses(caplog):
    f = ad.jit(lambda x, n: x * n, static_argnums=1)
    ad.config.update("explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="autodiff.jit"):
            f(np.ones(3), 2)
            f(np.ones(5), 2)
            f(np.ones(5, np.float32), 2)
            f(np.ones(5, np.float32), 3)
            # new sizes get kernels of their own from the LLVM tier, up to SPECIALIZED_SIZES;
            # then the changed dimension turns dynamic, and its kernel serves the next size
            for n in range(7, 8 + 2 * SPECIALIZED_SIZES, 2):
                f(np.ones(n, np.float32), 3)
    finally:
        ad.config.update("explain_cache_misses", False)
    text = caplog.text
    assert "first call" in text
    assert "changed from f64[3] to f64[5]" in text
    assert "changed from f64[5] to f32[5]" in text
    assert "static argument 1 changed from 2 to 3" in text
    assert "a new size gets a kernel of its own" in text
    assert text.count("compiled by the LLVM tier") >= SPECIALIZED_SIZES
    assert (f"dimension 0 of argument leaf 0 turned dynamic (size 5 -> "
            f"{5 + 2 * SPECIALIZED_SIZES})") in text
    assert "reused (shape-generic kernel)" in text


def test_new_batch_size_reuses_the_compiled_kernel(rng, jitted_mlp_vg):
    params = mlp_params(rng)
    x, y = batch(rng, 8)
    v, g = jitted_mlp_vg(params, x, y)
    rv, rg = ad.value_and_grad(mlp)(params, x, y)
    np.testing.assert_allclose(v, rv, rtol=1e-12)
    # the first kernel is specialized to batch 8; the first new size turns the batch
    # dimension dynamic (one more kernel), and every later size reuses that kernel
    x, y = batch(rng, 5)
    jitted_mlp_vg(params, x, y)
    before = compile_cache.stats()["compiles"] + compile_cache.stats()["disk_loads"]
    for n in (3, 17, 64, 2):
        x, y = batch(rng, n)
        v, g = jitted_mlp_vg(params, x, y)
        rv, rg = ad.value_and_grad(mlp)(params, x, y)
        np.testing.assert_allclose(v, rv, rtol=1e-12)
        for a, b in zip(ad.tree_util.tree_leaves(g), ad.tree_util.tree_leaves(rg)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    after = compile_cache.stats()["compiles"] + compile_cache.stats()["disk_loads"]
    assert after == before, "a new batch size compiled a new kernel"
    assert jitted_mlp_vg.cache_info().misses == 6


def test_source_is_shape_free_and_annotated(rng):
    f = ad.jit(lambda x, w: anp.tanh(x @ w) * 2.0, dynamic_shapes=True)
    low1 = f.lower(np.ones((4, 3)), np.ones((3, 2)))
    low2 = f.lower(np.ones((9, 3)), np.ones((3, 2)))
    assert low1.source == low2.source
    assert list(low1.sizes) != list(low2.sizes)
    assert "= dot_general[" in low1.source and "= tanh " in low1.source
    assert "dot_general" in str(low1.jaxpr)
    assert "interpret" not in low1.as_text()


# ---------------------------------------------------------------------------------
# backends
# ---------------------------------------------------------------------------------

def test_backends(rng):
    x = rng.normal(size=5)
    fi = ad.jit(loss, backend="interpret")
    np.testing.assert_allclose(fi(x), loss(x), rtol=1e-15)
    assert fi.lower(x).source is None
    with pytest.raises(UnsupportedError, match="cuda"):
        ad.jit(loss, backend="cuda")
    with pytest.raises(ValueError, match="unknown backend"):
        ad.jit(loss, backend="tpu")


# ---------------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------------

def test_composition(rng, jitted_loss):
    x = rng.normal(size=4)
    g_ref = loss_grad_closed_form(x)
    np.testing.assert_allclose(ad.grad(jitted_loss)(x), g_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ad.jit(ad.grad(jitted_loss))(x), g_ref, rtol=1e-12, atol=1e-14)
    xs = rng.normal(size=(3, 4))
    np.testing.assert_allclose(ad.vmap(jitted_loss)(xs), [loss(r) for r in xs], rtol=1e-13)
    np.testing.assert_allclose(ad.jit(lambda x: jitted_loss(x) * 2)(x), 2 * loss(x), rtol=1e-13)
    np.testing.assert_allclose(ad.hessian(jitted_loss)(x), ad.hessian(loss)(x), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(ad.jit(ad.hessian(loss))(x), ad.hessian(loss)(x), rtol=1e-10,
                               atol=1e-12)
    t = rng.normal(size=4)
    _, tan = ad.jvp(jitted_loss, (x,), (t,))
    np.testing.assert_allclose(tan, g_ref @ t, rtol=1e-12, atol=1e-14)


def test_jit_closing_over_a_traced_value():
    def outer(s):
        return ad.jit(lambda y: anp.sum(y * s))(np.arange(3.0))
    assert ad.grad(outer)(2.0) == 3.0
    f = ad.jit(lambda y: y * 2.0)

    def outer2(s):
        return anp.sum(f(np.arange(3.0)) * s)
    assert ad.grad(outer2)(1.0) == 6.0


def test_method_decorator():
    class Model:
        def __init__(self, w):
            self.w = w

        @ad.jit
        def apply(self, x):
            return x * 2.0
    assert np.all(Model(1.0).apply(np.ones(2)) == 2.0)


# ---------------------------------------------------------------------------------
# the disk cache (of Numba's kernels: the tests pin the Numba path, jit_llvm_tier=False,
# since the direct LLVM tier writes no cache files)
# ---------------------------------------------------------------------------------


_CHILD = textwrap.dedent("""
    import sys, numpy as np, autodiff as ad, autodiff.numpy as anp
    from autodiff.backends import compile_cache
    ad.config.update("jit_background_compile", False)
    f = ad.jit(lambda x: anp.sum(anp.sin(x) * 3.0 + anp.cos(x) ** 2) + TAG)
    v = f(np.linspace(0, 1, 7))
    s = compile_cache.stats()
    print("RESULT", repr(float(v)), s["compiles"], s["disk_loads"])
""")


def _run_children(cache_dir, tag, n):
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(cache_dir),
               AUTODIFF_JIT_LLVM_TIER="0")        # the Numba path: its kernels are cached
    code = _CHILD.replace("TAG", repr(float(tag)))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    out = []
    for p in procs:
        so, se = p.communicate(timeout=300)
        assert p.returncode == 0, se
        line = [l for l in so.splitlines() if l.startswith("RESULT")][0].split()
        out.append((float(line[1]), int(line[2]), int(line[3])))
    return out


def test_disk_cache_across_processes(tmp_path):
    x = np.linspace(0, 1, 7)
    want = float(np.sum(np.sin(x) * 3.0 + np.cos(x) ** 2)) + 0.25
    first = _run_children(tmp_path, 0.25, 2)       # two processes compiling at once
    for v, compiles, loads in first:
        assert abs(v - want) < 1e-12
        assert compiles + loads == 1
    (v, compiles, loads), = _run_children(tmp_path, 0.25, 1)
    assert abs(v - want) < 1e-12
    assert (compiles, loads) == (0, 1), "the second process compiled instead of loading"


def _kernel_files(f, *args):
    low = f.lower(*args)
    path = compile_cache.kernel_path(low.source)
    return path, cache_files.numba_cache_files(path)


def _forget(f, path):
    """Drop every in-process copy so the next call goes to the disk cache."""
    f.clear_cache()
    compile_cache.clear_memory()
    key = os.path.splitext(os.path.basename(path))[0][2:]
    sys.modules.pop(f"_autodiff_kernel_{key}", None)


def test_corrupted_cache_files_are_survived(numba_path):
    f = ad.jit(lambda x: anp.sum(anp.exp(x) * 1.25 - x))
    x = np.linspace(-1, 1, 9)
    want = float(np.sum(np.exp(x) * 1.25 - x))
    assert abs(f(x) - want) < 1e-12
    path, files = _kernel_files(f, x)
    assert files, "no Numba cache files were written"
    for name in files:                    # truncate the index, garble the data
        with open(name, "r+b") as fh:
            if name.endswith(".nbi"):
                fh.truncate(7)
            else:
                fh.write(b"garbage" * 10)
    _forget(f, path)
    cache_files._warned.clear()
    with pytest.warns(RuntimeWarning, match="could not be loaded"):
        assert abs(f(x) - want) < 1e-12
    # a truncated generated source file is rewritten
    with open(path, "r+") as fh:
        fh.truncate(200)
    _forget(f, path)
    with pytest.warns(RuntimeWarning, match="corrupted"):
        assert abs(f(x) - want) < 1e-12
    _forget(f, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # healthy again: no warning
        assert abs(f(x) - want) < 1e-12


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root can write into read-only directories")
def test_unwritable_cache_dir_falls_back(tmp_path, numba_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    old = ad.config.cache_dir
    ad.config.update("cache_dir", str(ro))
    cache_files._warned.clear()
    try:
        with pytest.warns(RuntimeWarning, match="cannot write"):
            assert ad.jit(lambda x: x * 3.5 + 0.125)(2.0) == 7.125
    finally:
        ad.config.update("cache_dir", old)
        ro.chmod(0o700)


def test_disk_cache_can_be_switched_off(tmp_path):
    old = ad.config.cache_dir
    ad.config.update("cache_dir", str(tmp_path))
    ad.config.update("disk_cache", False)
    try:
        assert ad.jit(lambda x: x * 5.5 - 0.5)(2.0) == 10.5
        assert ad.jit(lambda x: anp.sum(x * 5.5))(np.ones(2)) == 11.0
        assert not (tmp_path / "kernels").exists()
    finally:
        ad.config.update("disk_cache", True)
        ad.config.update("cache_dir", old)


def test_unwritable_cache_path_falls_back(tmp_path, numba_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    old = ad.config.cache_dir
    ad.config.update("cache_dir", str(blocker))      # kernels/ cannot be created under a file
    cache_files._warned.clear()
    try:
        with pytest.warns(RuntimeWarning, match="cannot write"):
            assert ad.jit(lambda x: x * 4.5 + 0.25)(2.0) == 9.25
    finally:
        ad.config.update("cache_dir", old)


# ---------------------------------------------------------------------------------
# control flow lowers to real loops and branches
# ---------------------------------------------------------------------------------

def test_control_flow_lowering(rng):
    lax = ad.lax
    w = rng.normal(size=(3, 3)) * 0.5

    def rnn(h0, xs):
        # a scan whose body closes over w, with a cond inside and rank-2 outputs
        def step(h, x):
            h = anp.tanh(h @ w + x)
            h = lax.cond(anp.sum(h) > 0, lambda v: v * 0.5, lambda v: v - 0.1, h)
            return h, anp.outer(h, x)
        return lax.scan(step, h0, xs)

    def loss(h0, xs):
        h, ys = rnn(h0, xs)
        return anp.sum(h) + anp.sum(ys ** 2)

    def newton_sqrt(a):
        # while_loop with a data-dependent trip count
        def body(c):
            x, i = c
            return 0.5 * (x + a / x), i + 1
        x, n = lax.while_loop(lambda c: anp.abs(c[0] * c[0] - a) > 1e-12 * a, body, (a, 0))
        return x, n

    def switchy(k, x):
        return lax.switch(k, [anp.sin, anp.cos, lambda v: v * 3.0], x)

    def bounded(x):
        return lax.while_loop(lambda c: c < 1e9, lambda c: c * 2.0, x, max_steps=5)

    h0 = rng.normal(size=3)
    for n in (4, 1, 0):
        xs = rng.normal(size=(n, 3))
        ref = ad.jit(rnn, backend="interpret")(h0, xs)
        got = ad.jit(rnn)(h0, xs)
        for a, b in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(ref)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        if n:
            g_ref = ad.grad(loss, argnums=(0, 1))(h0, xs)
            g = ad.jit(ad.grad(loss, argnums=(0, 1)))(h0, xs)
            for a, b in zip(g, g_ref):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a in (2.0, 10.0, 0.5):
        x, n = ad.jit(newton_sqrt)(a)
        assert abs(x - np.sqrt(a)) < 1e-12 and n > 0
    for k in (0, 1, 2, 7, -3):
        np.testing.assert_allclose(ad.jit(switchy)(np.int32(k), np.ones(2)),
                                   ad.jit(switchy, backend="interpret")(np.int32(k), np.ones(2)))
    assert ad.jit(bounded)(1.0) == 32.0

    def loops(x):
        # reverse scan, a scan with no xs (length only), fori_loop with Python bounds
        c, ys = lax.scan(lambda c, v: (c * 0.5 + v, c - v), 1.0, x, reverse=True)
        n, powers = lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=4)
        s = lax.fori_loop(0, 5, lambda i, acc: acc + i * x, anp.zeros_like(x))
        return c, ys, n, powers, s
    for x in (rng.normal(size=5), rng.normal(size=1)):
        for a, b in zip(ad.jit(loops)(x), ad.jit(loops, backend="interpret")(x)):
            np.testing.assert_allclose(a, b, rtol=1e-13)
    src = ad.jit(rnn).lower(h0, rng.normal(size=(4, 3))).source
    assert "for _tt" in src and "def _scan" in src and "def _branch" in src


def test_lower_and_trace_take_shape_dtype_structs():
    # JAX's ahead-of-time idiom: jit(f).lower(ShapeDtypeStruct(...)).compile(), and .trace
    f = ad.jit(lambda x, w: anp.sum(anp.tanh(x) @ w, axis=0))
    spec = ad.ShapeDtypeStruct((3, 4), np.float64)
    x, w = np.linspace(-1, 1, 12).reshape(3, 4), np.arange(8.0).reshape(4, 2)
    compiled = f.lower(spec, w).compile()
    np.testing.assert_allclose(compiled(x, w), np.sum(np.tanh(x) @ w, axis=0))
    t = f.trace(spec, ad.ShapeDtypeStruct((4, 2), np.float32))
    assert (t.out_info.shape, t.out_info.dtype) == ((2,), np.float64)
    assert [v.aval.shape for v in t.jaxpr.jaxpr.invars] == [(3, 4), (4, 2)]
    assert "tanh" in str(t.jaxpr)
    np.testing.assert_allclose(t.lower().compile()(x, w.astype(np.float32)),
                               np.sum(np.tanh(x) @ w, axis=0), rtol=1e-6)
    g = ad.jit(lambda d: {"a": d["a"] * 2, "b": d["b"].sum()})
    info = g.trace({"a": ad.ShapeDtypeStruct((2,), np.float32), "b": np.ones(3)}).out_info
    assert info["a"].dtype == np.float32 and info["b"].shape == ()


def test_vjp_and_linearize_functions_are_pytrees_jit_can_return():
    f = lambda x: anp.sin(x) * x
    x = np.array([0.3, -1.2])
    want = np.sin(x) + x * np.cos(x)               # d/dx (x sin x), diagonal
    y, f_vjp = ad.jit(lambda x: ad.vjp(f, x))(x)
    np.testing.assert_allclose(y, np.sin(x) * x)
    np.testing.assert_allclose(f_vjp(np.ones(2))[0], want)
    assert all(isinstance(l, np.ndarray) for l in ad.tree_util.tree_leaves(f_vjp))
    # passed into a jitted function (its residuals are leaves, the program is static)
    np.testing.assert_allclose(ad.jit(lambda g, c: g(c)[0])(f_vjp, np.full(2, 2.0)), 2 * want)
    y, f_jvp = ad.jit(lambda x: ad.linearize(f, x))(x)
    np.testing.assert_allclose(f_jvp(np.ones(2)), want)
    # mapped: one residual set per example
    ys, vjps = ad.vmap(lambda v: ad.vjp(f, v))(x)
    np.testing.assert_allclose(ad.vmap(lambda g, c: g(c)[0])(vjps, np.ones(2)), want)


def test_jit_of_the_same_function_is_one_cache():
    # ``ad.jit(f)(x)`` written inline traces and compiles once, as in JAX
    calls = []

    def f(x):
        calls.append(1)
        return anp.sin(x) * 2.0
    x = np.linspace(0, 1, 5)
    for _ in range(5):
        np.testing.assert_allclose(ad.jit(f)(x), np.sin(x) * 2.0)
    assert len(calls) == 1 and ad.jit(f) is ad.jit(f)
    # other options (static arguments, backend) are other functions
    g = ad.jit(f, backend="interpret")
    assert g is not ad.jit(f) and g is ad.jit(f, backend="interpret")
    np.testing.assert_allclose(g(x), np.sin(x) * 2.0)
    assert len(calls) == 2
    # a new function object (a lambda made each time) is a new cache
    assert ad.jit(lambda v: v) is not ad.jit(lambda v: v)
