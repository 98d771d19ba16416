"""One program-cache type (autodiff.cache.ProgramCache) behind every cache, listed and
bounded by ad.config; importing autodiff changes no environment variable."""
import contextlib
import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import api, core, debug, tape, tape_backward
from autodiff.backends import compile_cache, interpreter
from autodiff.cache import CacheStats, ProgramCache
from autodiff.errors import ConfigError
from autodiff.transforms import remat

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = {"jit", "kernels", "linearize", "tape", "remat", "interpreter", "source",
         "debug.print"}
OPTIONS = {"cache_size", "kernel_cache_size", "linearize_cache_size", "tape_cache_size",
           "remat_cache_size", "interpreter_cache_size", "source_cache_size",
           "debug_print_cache_size"}


@contextlib.contextmanager
def capacity(option, n):
    old = getattr(ad.config, option)
    ad.config.update(option, n)
    try:
        yield
    finally:
        ad.config.update(option, old)


def _f(x):
    return anp.sum(anp.sin(x) * x)


def _df(x):                     # d/dx sum(x sin x) = sin x + x cos x
    return np.sin(x) + x * np.cos(x)


# ---------------------------------------------------------------------------- the type

def test_lru_order_statistics_and_eviction():
    c = ProgramCache("test lru", "tape_cache_size")
    with capacity("tape_cache_size", 3):
        for k in "abc":
            c.put(k, k.upper())
        assert c.get("a") == "A"              # a becomes the most recently used
        c.put("d", "D")                       # evicts b, the least recently used
        assert c.keys() == ["c", "a", "d"]
        assert c.get("b") is None and "b" not in c
        c.put("a", "A2")                      # replacing keeps its place, evicts nothing
        assert c.keys() == ["c", "a", "d"] and c.get("a") == "A2"
        assert c.info() == CacheStats(hits=2, misses=1, size=3, capacity=3, evictions=1,
                                      caches=1)
        assert c.last_key() == "a" and c.pop("c") == "C" and len(c) == 2
    c.clear()
    assert c.info()[:3] == (0, 0, 0) and c.info().evictions == 0


def test_capacity_change_takes_effect_at_once():
    c = ProgramCache("test resize", "remat_cache_size")
    for k in range(10):
        c.put(k, k)
    with capacity("remat_cache_size", 4):
        assert c.keys() == [6, 7, 8, 9] and c.info().evictions == 6
        assert c.capacity == 4
    assert c.capacity == 1024


def test_one_name_one_option():
    ProgramCache("test option", "tape_cache_size")
    with pytest.raises(ValueError, match="tape_cache_size"):
        ProgramCache("test option", "remat_cache_size")
    with pytest.raises(AttributeError, match="no_such"):
        ProgramCache("test bad", "no_such_cache_size")


def test_concurrent_use_stays_bounded_and_counts_every_lookup():
    c = ProgramCache("test threads", "interpreter_cache_size")
    n_threads, n = 4, 3000

    def work(t):
        for i in range(n):
            k = (t * 7 + i) % 40
            if c.get(k) is None:
                c.put(k, k)
            assert len(c) <= 16

    with capacity("interpreter_cache_size", 16):
        threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
        old = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)           # switch threads as often as possible
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            sys.setswitchinterval(old)
        info = c.info()
        assert info.size == 16 and info.hits + info.misses >= 0.99 * n_threads * n
        assert 0 < info.evictions <= info.misses - 16
        assert all(c.get(k) == k for k in c.keys())


# ---------------------------------------------------------------------------- config

def test_every_cache_is_one_type_and_listed():
    jf = ad.jit(_f)
    members = {
        "jit": [jf._cache], "linearize": [api._LIN_CACHE], "tape": [tape_backward._cache],
        "remat": [remat._jvp_body.cache, remat._split_body.cache, remat._transpose_body.cache],
        "interpreter": [interpreter._plans], "kernels": [compile_cache._memory],
        "source": [core._internal_file_cache, core._internal_code_cache,
                   core._code_names_cache],
        "debug.print": [debug._printers],
    }
    listed = ad.config.caches()
    assert NAMES <= set(listed)
    for name, caches in members.items():
        assert all(type(c) is ProgramCache and c.name == name for c in caches), name
        assert listed[name].caches >= len(caches)
        assert listed[name].capacity == getattr(ad.config, caches[0].option)
    assert {c.option for cs in members.values() for c in cs} == OPTIONS
    assert listed["remat"].caches == 3 and listed["source"].caches == 3


@pytest.mark.parametrize("option", sorted(OPTIONS))
@pytest.mark.parametrize("bad", [0, -3, 2.5, "64", None, True])
def test_capacity_options_validate_with_a_typed_error(option, bad):
    old = getattr(ad.config, option)
    with pytest.raises(ConfigError, match=option) as e:
        ad.config.update(option, bad)
    assert isinstance(e.value, ValueError)
    assert "test_caches.py" in str(e.value)          # names the caller's line
    assert getattr(ad.config, option) == old


def test_capacity_accepts_whole_numbers():
    with capacity("tape_cache_size", np.int64(7)):
        assert ad.config.tape_cache_size == 7 and type(ad.config.tape_cache_size) is int
    with capacity("tape_cache_size", 8.0):
        assert ad.config.tape_cache_size == 8


def test_clear_caches_empties_every_cache(numba_path):
    # (the Numba path, so the "kernels" cache holds a kernel whatever ran before in this
    # process: the LLVM tier's programs are not in it, and alone this test saw it empty)
    ad.config.update("jit_background_compile", False)
    jf = ad.jit(ad.grad(_f))
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(jf(x), _df(x), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(_f)(x), _df(x), rtol=1e-12)
    v = ad.Variable(x)
    (v * v).sum().backward()
    np.testing.assert_allclose(v.grad, 2 * x)
    before = ad.config.caches()
    assert all(before[n].size > 0 for n in ("jit", "linearize", "tape", "interpreter",
                                            "kernels", "source"))
    ad.config.clear_caches()
    after = ad.config.caches()
    assert all(s.size == 0 and s.hits == 0 and s.misses == 0 for s in after.values())
    assert jf.cache_info()[:3] == (0, 0, 0) and ad.tape.cache_info()[:3] == (0, 0, 0)
    # and everything still computes (from scratch)
    np.testing.assert_allclose(jf(x), _df(x), rtol=1e-12)
    assert jf.cache_info().misses == 1


# ---------------------------------------------------------------------------- users

def test_linearize_cache_bounded_by_its_option():
    api._LIN_CACHE.clear()
    fs = [lambda x: anp.sum(anp.sin(x) * x), lambda x: anp.sum(anp.tanh(x) ** 2),
          lambda x: anp.sum(anp.exp(-x * x))]
    refs = [_df, lambda x: 2 * np.tanh(x) * (1 - np.tanh(x) ** 2),
            lambda x: -2 * x * np.exp(-x * x)]
    x = np.array([0.3, -0.7])
    with capacity("linearize_cache_size", 2):
        for _ in range(2):
            for f, r in zip(fs, refs):
                np.testing.assert_allclose(ad.grad(f)(x), r(x), rtol=1e-12)
        info = api._LIN_CACHE.info()
        assert info.size == 2 and info.capacity == 2
        assert info.misses == 6 and info.evictions == 4      # round-robin over 3 with room for 2
        np.testing.assert_allclose(ad.grad(fs[2])(x), refs[2](x), rtol=1e-12)
        assert api._LIN_CACHE.info().hits == 1


def test_tape_cache_bounded_by_its_option():
    ad.tape.clear_cache()
    x = np.array([0.5, 2.0])
    with capacity("tape_cache_size", 1):
        for _ in range(2):
            a = ad.Variable(x)
            (a * a).sum().backward()
            np.testing.assert_allclose(a.grad, 2 * x)
            b = ad.Variable(x)
            (b * b * b).sum().backward()
            np.testing.assert_allclose(b.grad, 3 * x ** 2)
        info = ad.tape.cache_info()
        assert info[:4] == (0, 4, 1, 1) and tape_backward._cache.info().evictions == 3


def test_remat_bodies_hit_across_traces():
    for c in (remat._jvp_body.cache, remat._split_body.cache, remat._transpose_body.cache):
        c.clear()
    g = ad.grad(lambda x: anp.sum(ad.checkpoint(lambda y: anp.sin(y) * y)(x)))
    x = np.array([0.1, 1.3])
    np.testing.assert_allclose(g(x), _df(x), rtol=1e-12)
    first = ad.config.caches()["remat"]
    api._LIN_CACHE.clear()          # the outer grad transforms again; remat's bodies hit
    np.testing.assert_allclose(g(np.array([2.0, -0.4])), _df(np.array([2.0, -0.4])), rtol=1e-12)
    second = ad.config.caches()["remat"]
    assert first.misses > 0 and second.misses == first.misses and second.hits > first.hits


def test_interpreter_plans_bounded_and_correct():
    cj = ad.make_jaxpr(lambda x: anp.exp(x) * 2.0 + 1.0)(np.zeros(3))
    cj2 = ad.make_jaxpr(lambda x: anp.log1p(x * x))(np.zeros(3))
    x = np.array([0.0, 0.5, -2.0])
    with capacity("interpreter_cache_size", 1):
        for _ in range(2):
            np.testing.assert_allclose(interpreter.run_closed(cj, [x])[0], np.exp(x) * 2 + 1)
            np.testing.assert_allclose(interpreter.run_closed(cj2, [x])[0], np.log1p(x * x))
        assert len(interpreter._plans) == 1 and interpreter._plans.info().evictions >= 3


def test_debug_print_keeps_one_printer_per_format(capsys):
    ad.debug.print("v={v}", v=np.float64(1.5))
    p = debug._printer("v={v}")
    assert debug._printer("v={v}") is p
    assert capsys.readouterr().out == "v=1.5\n"


def test_jit_listing_matches_cache_info():
    ad.config.update("jit_background_compile", False)
    f = ad.jit(lambda x: x * 2.0 + 1.0, backend="interpret")
    f(np.ones(2))
    f(np.ones(2))
    f(np.ones(3))
    assert f.cache_info()[:4] == (1, 2, 2, ad.config.cache_size)
    assert f._cache.info()[:4] == f.cache_info()[:4]
    with capacity("cache_size", 1):
        assert f.cache_info()[2:4] == (1, 1)
        np.testing.assert_allclose(f(np.ones(2)), [3.0, 3.0])      # evicted: a miss again
        assert f.cache_info().misses == 3


# ---------------------------------------------------------------------------- environment

def _child(code, env=None):
    full = dict(os.environ)
    full.pop("OMP_WAIT_POLICY", None)
    full.update(env or {})
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=full, cwd=REPO, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_import_changes_no_environment_variable():
    out = _child("""
        import json, os
        before = dict(os.environ)
        import autodiff, autodiff.numpy, autodiff.backends.numba_cpu, autodiff.jit
        after = dict(os.environ)
        print(json.dumps({"added": sorted(set(after) - set(before)),
                          "changed": sorted(k for k in before if after.get(k) != before[k])}))
    """)
    assert out == {"added": [], "changed": []}


def test_openmp_wait_policy_is_a_default_set_at_first_compile():
    code = """
        import json, os
        import numpy as np, autodiff as ad, autodiff.numpy as anp
        ad.config.update("jit_background_compile", False)
        seen = [os.environ.get("OMP_WAIT_POLICY")]
        f = ad.jit(lambda x: anp.sum(x * 2.0))
        r = float(f(np.arange(3.0)))
        print(json.dumps([seen[0], os.environ.get("OMP_WAIT_POLICY"), r]))
    """
    numba_path = {"AUTODIFF_JIT_LLVM_TIER": "0"}   # the direct LLVM tier starts no OpenMP
    assert _child(code, numba_path) == [None, "PASSIVE", 6.0]
    assert _child(code, dict(numba_path, OMP_WAIT_POLICY="ACTIVE")) == ["ACTIVE", "ACTIVE", 6.0]


# ---------------------------------------------------------------------------- no patching

OPERATORS = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
             "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__pow__", "__rpow__",
             "__matmul__", "__rmatmul__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__",
             "__ne__", "__and__", "__or__", "__xor__", "__neg__", "__abs__", "__invert__",
             "__lshift__", "__rlshift__", "__rshift__", "__rrshift__", "__divmod__",
             "__rdivmod__",
             "__getitem__", "__array_ufunc__", "__array_function__", "T", "at", "reshape",
             "sum", "astype"]


def test_tracer_operators_are_defined_with_the_class():
    from autodiff._tracer_methods import ArrayMethods
    assert ArrayMethods in core.Tracer.__mro__
    for name in OPERATORS:
        assert name in vars(ArrayMethods), name
        assert getattr(core.Tracer, name) is getattr(ArrayMethods, name), name
    # documented where defined, like the ndarray attribute each follows
    assert core.Tracer.sum.__doc__.startswith("Like ``numpy.ndarray.sum``")
    assert core.Tracer.T.__doc__.startswith("Like ``numpy.ndarray.T``")
    assert core.Tracer.shape.__doc__.startswith("Like ``numpy.ndarray.shape``")
    assert "functional updates" in core.Tracer.at.__doc__.lower()


def test_no_module_patches_tracer():
    import re
    pat = re.compile(r"setattr\(\s*(core\.)?Tracer\b|^\s*(core\.)?Tracer\.\w+\s*=[^=]", re.M)
    hits = []
    for top in ("autodiff", "transforms", "backends"):
        for d, _, files in os.walk(os.path.join(REPO, top)):
            for n in files:
                if n.endswith(".py"):
                    with open(os.path.join(d, n), encoding="utf-8") as fh:
                        if pat.search(fh.read()):
                            hits.append(os.path.join(d, n))
    assert hits == []


def test_tracer_class_unchanged_by_importing_autodiff_numpy():
    # a fresh process: snapshot Tracer's attributes at the moment autodiff.numpy is first
    # imported (core is complete by then), and again once everything is imported
    out = _child("""
        import importlib.abc, json, sys
        snap = {}

        class Spy(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "autodiff.numpy" and "before" not in snap:
                    core = sys.modules["autodiff.core"]
                    snap["before"] = {k: id(v) for k, v in vars(core.Tracer).items()}
                    snap["mro"] = [c.__name__ for c in core.Tracer.__mro__]
                    snap["mul"] = [id(getattr(c, "__mul__", None)) for c in core.Tracer.__mro__]
                return None

        sys.meta_path.insert(0, Spy())
        import numpy as np, autodiff as ad
        from autodiff import core
        after = {k: id(v) for k, v in vars(core.Tracer).items()}
        g = ad.grad(lambda x: (x * x + 3.0 * x - x / 2.0).sum())(np.array([1.0, 2.0]))
        print(json.dumps({"same": snap["before"] == after, "mro": snap["mro"],
                          "mul_from_mixin": snap["mul"][0] == snap["mul"][1],
                          "grad": g.tolist()}))
    """)
    assert out == {"same": True, "mro": ["Tracer", "ArrayMethods", "object"],
                   "mul_from_mixin": True, "grad": [4.5, 6.5]}     # 2x + 2.5


# ---------------------------------------------------------------------------- cache_dir

def _files_under(root, since=None):
    out = set()
    for d, _, files in os.walk(root):
        for n in files:
            p = os.path.join(d, n)
            if since is None or os.path.getmtime(p) >= since:
                out.add(os.path.relpath(p, root))
    return out


def test_helpers_compile_into_cache_dir_only(tmp_path):
    """Compiled helpers (numba_math's, and the BLAS pool's that numba_runtime imports; once
    cache=True: beside the package or in ~/.cache/numba) live under ad.config.cache_dir."""
    import time
    start = time.time() - 1
    env = {"AUTODIFF_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home"),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache-dir"), "XDG_CACHE_HOME": "",
           "AUTODIFF_JIT_LLVM_TIER": "0"}      # Numba's helpers: the Numba path compiles them
    code = """
        import json
        import numpy as np, autodiff as ad, autodiff.numpy as anp
        from autodiff.backends import blas_pool, numba_math
        ad.config.update("jit_background_compile", False)
        f = ad.jit(lambda x: anp.sum(anp.exp(x) @ np.ones((3, 2))) * SCALE)
        r = float(f(np.array([0.5, -1.0, 2.0])))
        print(json.dumps([r, sum(numba_math.exp_f64.stats.cache_hits.values()),
                          blas_pool._worker_entry.cache_hits]))
    """
    # (a product: the GEMM pool's worker entry compiles with the first kernel that has one)
    want = lambda s: float(2 * np.sum(np.exp([0.5, -1.0, 2.0])) * s)   # noqa: E731
    r, exp_hits, pool_hits = _child(code.replace("SCALE", "2.0"), env)
    assert r == pytest.approx(want(2.0), rel=1e-12) and (exp_hits, pool_hits) == (0, 0)
    written = _files_under(tmp_path / "cache")
    helpers = {n for n in written if os.path.basename(n).startswith(("numba_math.",
                                                                     "blas_pool."))}
    assert any("numba_math.exp_f64" in n for n in helpers), written
    assert any("blas_pool._worker_entry" in n for n in helpers), written
    assert all(n.startswith(os.path.join("kernels", "__pycache__")) for n in helpers)
    # nothing elsewhere: not beside the package, not in NUMBA_CACHE_DIR or the home directory
    assert _files_under(tmp_path / "numba-cache-dir") == set()
    assert _files_under(tmp_path / "home") == set()
    for pkg in ("backends", "autodiff", "transforms"):
        fresh = {n for n in _files_under(os.path.join(REPO, pkg), since=start)
                 if n.endswith((".nbi", ".nbc")) and os.path.basename(n).startswith(
                     ("numba_math.", "numba_runtime.", "blas_pool."))}
        assert fresh == set(), (pkg, fresh)
    # a new kernel in a new process loads the helpers from there instead of compiling them
    r, exp_hits, pool_hits = _child(code.replace("SCALE", "3.0"), env)
    assert r == pytest.approx(want(3.0), rel=1e-12) and exp_hits >= 1 and pool_hits == 1


def test_helpers_follow_a_changed_cache_dir_and_disk_cache_off(tmp_path):
    from autodiff.backends import numba_cache, numba_math
    from numba import float64
    old_dir, old_disk = ad.config.cache_dir, ad.config.disk_cache
    try:
        ad.config.update("cache_dir", str(tmp_path / "one"))
        assert numba_math.exp_f64._cache.cache_path == str(tmp_path / "one" / "kernels" /
                                                           "__pycache__")
        ad.config.update("disk_cache", False)
        assert numba_math.exp_f64._cache.cache_path is None
        assert numba_math.exp_f64._cache.load_overload((float64,), None) is None
    finally:
        ad.config.update("cache_dir", old_dir)
        ad.config.update("disk_cache", old_disk)
    assert type(numba_math.exp_f64._cache) is numba_cache.HelperCache


def test_disk_cached_helpers_are_stamped_with_the_modules_they_inline():
    # a helper loaded from the disk cache keeps the code it was compiled with: the stamp
    # must change with every module whose code it inlines (blas_pool's thread policy and
    # LAPACKE binding, lapack.py's routines), or an upgrade would run the old code
    from autodiff.backends import blas_pool, lapack, numba_runtime as rt
    from autodiff.backends.numba_cache import HelperCache
    for name in ("eigh_into", "qr_into", "svd_into"):
        cache = getattr(rt, name)._cache
        assert isinstance(cache, HelperCache)
        assert blas_pool.__file__ in cache._depends, name
    for name in ("qr_into", "svd_into"):
        assert lapack.__file__ in getattr(rt, name)._cache._depends
    for (name, dtype), wrapper in rt._C_WRAPPERS.items():     # the LLVM tier's C entries
        assert {blas_pool.__file__, lapack.__file__} <= set(wrapper._depends), name


def test_index_saves_of_two_processes_at_once_keep_both_signatures(tmp_path):
    # Numba's IndexDataCacheFile.save reads the index, takes the first data name free in
    # what it read, writes the index, then the data: two processes saving different
    # signatures of one function at once (xdist workers, two scripts) both take
    # <base>.1.nbc, so one entry is lost or the index names the other's code. Two
    # writers here (threads with index files of their own, as two processes have) read
    # the index slowly enough to overlap, with Numba's save and then with ours.
    import time
    from numba.core import caching
    from autodiff.backends import numba_cache

    def fn(x):
        return x
    cls = type(numba_cache._kernel_numba_cache()(fn, str(tmp_path), b"s", True)._cache_file)

    def race(save, where):
        where.mkdir()
        files = [cls(str(where), "m.fn-1.py311", b"s") for _ in range(2)]
        for f in files:
            slow = f._load_index

            def load(slow=slow):
                got = slow()
                time.sleep(0.2)
                return got
            f._load_index = load
        ts = [threading.Thread(target=save, args=(f, f"sig{i}", f"code{i}"))
              for i, f in enumerate(files)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        fresh = cls(str(where), "m.fn-1.py311", b"s")
        return [fresh.load(f"sig{i}") for i in range(2)]

    assert race(caching.IndexDataCacheFile.save, tmp_path / "numba") != ["code0", "code1"]
    assert race(cls.save, tmp_path / "ours") == ["code0", "code1"]
