"""The disk cache never runs code, or unpickles data, that someone else could have written.

Threat: whoever can write into ``cache_dir`` could make the next ``jit`` call execute
their code (a ``k_<hash>.py`` is imported Python, a ``.nbi``/``.nbc`` is a pickle). Each
test plants the attack for real (a payload that would create a marker file, a file
writable by others, a file owned by another uid when we are root) and checks that the
payload never fires, that one :class:`UnsafeCacheWarning` names the path, that nothing is
written into a refused directory, and that results stay correct. Kernels are tiny
hand-written sources fed to ``get_kernel``, so no test depends on the lowering.
"""
import os
import pickle
import runpy
import shutil
import stat
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.backends import cache_files, compile_cache as cc
from autodiff.backends.compile_cache import UnsafeCacheWarning

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
posix_only = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="no owners or mode bits")

PARAMS = [("array", np.dtype(np.float64), 1)]
X = np.arange(4.0)


def kernel_source(tag):
    """A two-function kernel (a callee too, so every Numba cache file kind appears)."""
    return textwrap.dedent(f"""\
        import numpy as np
        from numba import njit


        @njit(cache=True, nogil=True)
        def _scale(v):
            return v * 2.0 + {tag!r}


        @njit(cache=True, nogil=True)
        def kernel(a):
            s = 0.0
            for i in range(a.shape[0]):
                s += _scale(a[i])
            return s
        """)


def expected(tag):
    return float(np.sum(X * 2.0 + tag))


def snapshot(root):
    """Everything under ``root`` as (path, mode, size, mtime): nothing written means equal."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


class use_cache:
    """Point ``config.cache_dir`` at ``path`` and forget in-process copies, both ways."""

    def __init__(self, path):
        self.path = str(path)

    def __enter__(self):
        self.old = ad.config.cache_dir
        ad.config.update("cache_dir", self.path)
        forget()
        return self

    def __exit__(self, *exc):
        ad.config.update("cache_dir", self.old)
        forget()


def forget(source=None):
    """Drop every in-process copy so the next get_kernel goes to the disk cache."""
    cc.clear_memory()
    cache_files._warned.clear()
    for name in [m for m in sys.modules if m.startswith("_autodiff_kernel_")]:
        if source is None or name.endswith(cc.cache_key(source)):
            del sys.modules[name]


def load(source):
    k = cc.get_kernel(source, "kernel", PARAMS)
    return k, float(k.dispatcher(X))


@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    """A cache holding one compiled kernel (compiled once; tests work on copies)."""
    root = tmp_path_factory.mktemp("populated") / "cache"
    src = kernel_source(0.5)
    with use_cache(root):
        k, v = load(src)
        assert v == expected(0.5) and k.path is not None
    return root, src


@pytest.fixture
def cache_copy(populated, tmp_path):
    root, src = populated
    dst = tmp_path / "cache"
    shutil.copytree(root, dst, symlinks=True)       # keeps the modes
    with use_cache(dst):
        yield dst, src


def kernel_files(cache, src):
    path = os.path.join(cache, "kernels", f"k_{cc.cache_key(src)}.py")
    numba_files = sorted(cache_files.numba_cache_files(path))
    return path, numba_files



def refusal(record, path):
    hits = [w for w in record if issubclass(w.category, UnsafeCacheWarning)]
    assert len(hits) == 1, [str(w.message) for w in record]
    msg = str(hits[0].message)
    assert str(path) in msg, msg
    return msg


# ---------------------------------------------------------------------------------
# a fresh cache is private, and Numba's files for it live only inside it
# ---------------------------------------------------------------------------------

_CHILD = textwrap.dedent("""
    import os, sys, warnings
    os.umask(0)
    warnings.simplefilter("error")             # a healthy cache warns about nothing
    import numpy as np
    from autodiff.backends import compile_cache as cc
    k = cc.get_kernel(SRC, "kernel", [("array", np.dtype(np.float64), 1)])
    s = cc.stats()
    print("RESULT", repr(float(k.dispatcher(np.arange(4.0)))), s["compiles"], s["disk_loads"])
""")


def run_child(tmp_path, cache, src):
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(cache), HOME=str(tmp_path / "home"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba-cache-dir"))
    env.pop("XDG_CACHE_HOME", None)
    p = subprocess.run([sys.executable, "-c", _CHILD.replace("SRC", repr(src))], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    line = [l for l in p.stdout.splitlines() if l.startswith("RESULT")][0].split()
    return float(line[1]), int(line[2]), int(line[3])


def kernel_named_files(root):
    return [os.path.join(d, n) for d, _, files in os.walk(root) for n in files
            if n.startswith("k_")]


@posix_only
def test_fresh_cache_is_private_and_numba_files_stay_inside(tmp_path):
    cache = tmp_path / "a" / "b" / "cache"          # three missing levels, created 0700
    src = kernel_source(1.25)
    assert run_child(tmp_path, cache, src) == (expected(1.25), 1, 0)
    for d, dirs, files in os.walk(tmp_path / "a"):
        for n in dirs:
            assert stat.S_IMODE(os.lstat(os.path.join(d, n)).st_mode) == 0o700, (d, n)
        for n in files:
            assert stat.S_IMODE(os.lstat(os.path.join(d, n)).st_mode) == 0o600, (d, n)
    path, numba_files = kernel_files(cache, src)
    assert os.path.exists(path)
    assert {f.rsplit(".", 1)[1] for f in numba_files} == {"nbi", "nbc"}
    assert len(numba_files) == 4                     # index + data for kernel and callee
    # NUMBA_CACHE_DIR, the home directory's ~/.cache and the source tree got nothing
    for elsewhere in (tmp_path / "numba-cache-dir", tmp_path / "home",
                      os.path.join(REPO, "backends"), os.path.join(REPO, "autodiff")):
        assert kernel_named_files(elsewhere) == [], elsewhere
    # a second process loads the machine code from there
    assert run_child(tmp_path, cache, src) == (expected(1.25), 0, 1)
    # and so does a third once the cache is made read-only
    for d, dirs, files in os.walk(cache):
        for n in files:
            os.chmod(os.path.join(d, n), 0o400)
    for d in sorted({d for d, _, _ in os.walk(cache)}, reverse=True):
        os.chmod(d, 0o500)
    before = snapshot(cache)
    try:
        assert run_child(tmp_path, cache, src) == (expected(1.25), 0, 1)
        assert snapshot(cache) == before
    finally:
        for d, _, _ in os.walk(cache):
            os.chmod(d, 0o700)


# ---------------------------------------------------------------------------------
# directories others can write to are refused
# ---------------------------------------------------------------------------------

@posix_only
@pytest.mark.parametrize("mode", [0o770, 0o777, 0o703])
def test_group_or_world_writable_cache_dir_is_refused(tmp_path, mode):
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(mode)
    before = snapshot(cache)
    with use_cache(cache), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for tag in (2.5, 3.5):                        # two kernels, one warning
            k, v = load(kernel_source(tag))
            assert v == expected(tag)
            assert k.path is None and not k.from_disk
        msg = refusal(record, cache)
    assert "writable by" in msg and f"{mode:04o}" in msg
    assert snapshot(cache) == before, "something was written into the refused directory"


@posix_only
def test_refused_end_to_end_through_jit(tmp_path, numba_path):
    # pins the Numba path: the disk cache (and its checks) is of Numba's kernels
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    f = ad.jit(lambda x: anp.sum(anp.cos(x) * 0.75))
    background = ad.config.values().get("jit_background_compile")
    if background:                                   # compile in this thread, warn here
        ad.config.update("jit_background_compile", False)
    try:
        with use_cache(cache), pytest.warns(UnsafeCacheWarning, match="group and others"):
            assert abs(f(X) - float(np.sum(np.cos(X) * 0.75))) < 1e-12
    finally:
        if background:
            ad.config.update("jit_background_compile", background)
    assert os.listdir(cache) == []


@posix_only
def test_unsafe_kernels_subdirectory_of_a_populated_cache_is_refused(cache_copy):
    cache, src = cache_copy
    kernels = cache / "kernels"
    kernels.chmod(0o775)
    before = snapshot(cache)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        k, v = load(src)
    assert v == expected(0.5) and k.path is None and not k.from_disk
    assert "writable by group" in refusal(record, kernels)
    assert snapshot(cache) == before


@posix_only
@pytest.mark.parametrize("parent_mode, refused", [(0o777, True), (0o1777, False)])
def test_ancestor_directories_are_checked(tmp_path, parent_mode, refused):
    parent = tmp_path / "scratch"                    # like /tmp: fine only with the sticky bit
    parent.mkdir()
    parent.chmod(parent_mode)
    cache = parent / "mine" / "cache"
    with use_cache(cache), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        k, v = load(kernel_source(4.5))
    assert v == expected(4.5)
    if refused:
        assert "not sticky" in refusal(record, parent)
        assert os.listdir(parent) == [] and k.path is None
    else:
        assert not [w for w in record if issubclass(w.category, UnsafeCacheWarning)]
        assert k.path is not None and os.path.exists(k.path)
        assert cc.cache_dir_is_safe(cache)


# ---------------------------------------------------------------------------------
# files someone else could have written are refused
# ---------------------------------------------------------------------------------

def _make_foreign(path, how):
    if how == "owner":
        os.chown(path, 4242, -1)                     # a uid that is neither us nor root
    else:
        os.chmod(path, 0o646)                        # writable by others


@posix_only
@pytest.mark.parametrize("how", [
    "mode", pytest.param("owner", marks=pytest.mark.skipif(not IS_ROOT, reason="needs chown"))])
@pytest.mark.parametrize("which", ["source", "index", "data"])
def test_cache_file_another_user_could_write_is_refused(cache_copy, which, how):
    cache, src = cache_copy
    path, numba_files = kernel_files(cache, src)
    target = {"source": path,
              "index": [f for f in numba_files if f.endswith(".nbi")][0],
              "data": [f for f in numba_files if f.endswith(".nbc")][0]}[which]
    _make_foreign(target, how)
    before = snapshot(cache)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        k, v = load(src)
    assert v == expected(0.5)
    assert k.path is None and not k.from_disk, "an untrusted cache file was used"
    msg = refusal(record, target)
    assert ("owned by uid 4242" if how == "owner" else "writable by others") in msg
    assert snapshot(cache) == before, "the refused cache was written to"


class _Payload:
    """Unpickling this creates the file named by ``marker``: proof the pickle was loaded."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@posix_only
@pytest.mark.parametrize("how", [
    "mode", pytest.param("owner", marks=pytest.mark.skipif(not IS_ROOT, reason="needs chown"))])
def test_untrusted_numba_index_is_never_unpickled(cache_copy, tmp_path, how):
    cache, src = cache_copy
    _, numba_files = kernel_files(cache, src)
    index = [f for f in numba_files if f.endswith(".nbi")][0]
    marker = tmp_path / "unpickled"
    payload = pickle.dumps(_Payload(str(marker)))
    pickle.loads(payload).close()                    # the payload is live ...
    assert marker.exists()
    marker.unlink()
    with open(index, "wb") as fh:
        fh.write(payload)
    _make_foreign(index, how)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        k, v = load(src)
    assert not marker.exists(), "a cache file someone else could write was unpickled"
    assert v == expected(0.5) and k.path is None
    refusal(record, index)


@posix_only
def test_symlinked_source_is_refused(cache_copy, tmp_path):
    cache, src = cache_copy
    path, _ = kernel_files(cache, src)
    elsewhere = tmp_path / "elsewhere.py"
    shutil.copy(path, elsewhere)
    os.unlink(path)
    os.symlink(elsewhere, path)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        k, v = load(src)
    assert v == expected(0.5) and k.path is None
    assert "symbolic link" in refusal(record, path)


# ---------------------------------------------------------------------------------
# the library's own helpers (numba_runtime, blas_pool) cache their code in the same
# directory: a planted file there is refused the same way, and jit still works (issue 33)
# ---------------------------------------------------------------------------------

_HELPER_CHILD = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np
    import autodiff as ad
    import autodiff.numpy as anp
    ad.config.update("jit_background_compile", False)      # compile (and warn) in this call
    scale = float(sys.argv[1])                # a new kernel each run: its helpers get compiled
    x = np.array([3.0, -1.0, 2.5, 0.5])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        # a product too: the GEMM pool's worker entry compiles with the first such kernel
        y = ad.jit(lambda v: (anp.sort(v) @ np.eye(4)) * scale)(x)
    from autodiff.backends import blas_pool, numba_runtime
    print("RESULT", json.dumps({
        "y": np.asarray(y).tolist(), "want": (np.sort(x) * scale).tolist(),
        "unsafe": [str(w.message) for w in record if w.category.__name__ == "UnsafeCacheWarning"],
        "hits": {"sort_lane": sum(numba_runtime.sort_lane.stats.cache_hits.values()),
                 "_worker_entry": blas_pool._worker_entry.cache_hits}}))
""")


def run_helper_child(tmp_path, cache, scale):
    # pins the Numba path (AUTODIFF_JIT_LLVM_TIER=0): the helpers are Numba's, compiled with
    # (and the GEMM pool's entry started by) the first Numba kernel that uses them
    env = dict(os.environ, AUTODIFF_CACHE_DIR=str(cache), HOME=str(tmp_path / "home"),
               AUTODIFF_JIT_LLVM_TIER="0")
    p = subprocess.run([sys.executable, "-c", _HELPER_CHILD, repr(scale)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    import json
    return json.loads([l for l in p.stdout.splitlines() if l.startswith("RESULT ")][0][7:])


@pytest.fixture(scope="module")
def helper_cache(tmp_path_factory):
    """A cache warmed by one process: the helpers' Numba files are on disk."""
    tmp = tmp_path_factory.mktemp("helpers")
    out = run_helper_child(tmp, tmp / "cache", 2.0)
    assert out["y"] == out["want"] and out["unsafe"] == []
    return tmp / "cache"


@posix_only
@pytest.mark.parametrize("helper, kind", [("numba_runtime.sort_lane", "nbi"),   # njit helper
                                          ("blas_pool._worker_entry", "nbc")])  # cfunc, every jit
def test_planted_helper_cache_file_is_refused_and_jit_still_works(helper_cache, tmp_path,
                                                                  helper, kind):
    cache = tmp_path / "cache"
    shutil.copytree(helper_cache, cache, symlinks=True)
    pycache = cache / "kernels" / "__pycache__"
    mine = sorted(n for n in os.listdir(pycache) if n.startswith(helper + "-"))
    planted = str(pycache / [n for n in mine if n.endswith("." + kind)][0])
    marker = tmp_path / "unpickled"
    with open(planted, "wb") as fh:                   # a live payload (see _Payload)
        fh.write(pickle.dumps(_Payload(str(marker))))
    _make_foreign(planted, "owner" if IS_ROOT else "mode")
    before = os.lstat(planted)
    out = run_helper_child(tmp_path, cache, 3.0)      # a fresh process: helpers load from disk
    assert out["y"] == out["want"] == [-3.0, 1.5, 7.5, 9.0]
    assert len(out["unsafe"]) == 1, out["unsafe"]
    assert planted in out["unsafe"][0]
    assert ("owned by uid 4242" if IS_ROOT else "writable by others") in out["unsafe"][0]
    assert not marker.exists(), "the planted helper cache file was unpickled"
    short = helper.split(".")[1]
    other = {"sort_lane": "_worker_entry", "_worker_entry": "sort_lane"}[short]
    assert out["hits"][short] == 0, "the planted helper was not compiled in memory"
    assert out["hits"][other] == 1, "the other helper's trusted files were not loaded"
    after = os.lstat(planted)                         # nothing written over the planted file
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == \
        (before.st_ino, before.st_size, before.st_mtime_ns)
    assert sorted(n for n in os.listdir(pycache) if n.startswith(helper + "-")) == mine


# ---------------------------------------------------------------------------------
# a source that does not hash to its name is deleted and recompiled, never executed
# ---------------------------------------------------------------------------------

def _append_payload(path, marker):
    with open(path, "a") as fh:
        fh.write(f"\nopen({str(marker)!r}, 'w').write('executed')\n")


def test_altered_source_is_never_executed(cache_copy, tmp_path):
    cache, src = cache_copy
    path, _ = kernel_files(cache, src)
    marker = tmp_path / "executed"
    _append_payload(path, marker)
    control = tmp_path / "control.py"                # the altered file, run, does fire
    shutil.copy(path, control)
    runpy.run_path(str(control))
    assert marker.exists()
    marker.unlink()
    assert cc.verified_source(path) is None
    with pytest.warns(RuntimeWarning, match="does not hash to its name"):
        k, v = load(src)
    assert not marker.exists(), "the altered kernel source was executed"
    assert v == expected(0.5)
    assert k.path == path and not k.from_disk        # recompiled into the cache
    with open(path) as fh:
        assert fh.read() == src
    assert cc.verified_source(path) == src
    if hasattr(os, "geteuid"):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    forget(src)                                       # repaired: the next load is from disk
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k, v = load(src)
    assert k.from_disk and v == expected(0.5)


@posix_only
def test_altered_source_in_a_read_only_cache_is_not_executed(cache_copy, tmp_path):
    cache, src = cache_copy
    path, _ = kernel_files(cache, src)
    marker = tmp_path / "executed"
    _append_payload(path, marker)
    os.chmod(cache / "kernels", 0o500)
    before = snapshot(cache)
    try:
        with pytest.warns(RuntimeWarning, match="read-only"):
            k, v = load(src)
        assert not marker.exists() and v == expected(0.5) and k.path is None
        assert snapshot(cache) == before
    finally:
        os.chmod(cache / "kernels", 0o700)


def test_verified_source_checks_the_name(cache_copy, tmp_path):
    cache, src = cache_copy
    path, _ = kernel_files(cache, src)
    assert cc.verified_source(path) == src
    renamed = os.path.join(os.path.dirname(path), f"k_{'0' * 32}.py")
    shutil.copy(path, renamed)
    assert cc.verified_source(renamed) is None       # right text, wrong name
    assert cc.verified_source(str(tmp_path / "k_nothere.py")) is None


# ---------------------------------------------------------------------------------
# a read-only cache owned by the user (or root) is used for loading
# ---------------------------------------------------------------------------------

@posix_only
def test_read_only_cache_is_still_used_for_loading(cache_copy):
    cache, src = cache_copy
    for d, _, files in os.walk(cache):
        for n in files:
            os.chmod(os.path.join(d, n), 0o444)
    dirs = sorted({d for d, _, _ in os.walk(cache)}, reverse=True)
    for d in dirs:
        os.chmod(d, 0o555)                             # shareable: readable, writable by none
    before = snapshot(cache)
    try:
        assert cc.cache_dir_is_safe(cache)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            k, v = load(src)
            assert k.from_disk and v == expected(0.5)
            k2, v2 = load(kernel_source(6.5))          # not in the cache: compiled in memory
            assert v2 == expected(6.5) and k2.path is None
        assert snapshot(cache) == before, "a read-only cache was written to"
    finally:
        for d in dirs:
            os.chmod(d, 0o700)


# ---------------------------------------------------------------------------------
# the public check
# ---------------------------------------------------------------------------------

@posix_only
def test_cache_dir_problem_names_path_and_reason(tmp_path, monkeypatch):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert cc.cache_dir_problem(private) is None
    private.chmod(0o750)                               # readable by the group is fine
    assert cc.cache_dir_is_safe(private)
    private.chmod(0o770)
    assert cc.cache_dir_problem(private) == f"{private} is writable by group (mode 0770)"
    assert cc.cache_dir_problem(tmp_path / "missing").endswith("does not exist")
    # where there are no owners or mode bits (Windows) the check has nothing to say
    monkeypatch.setattr(cache_files, "_POSIX", False)
    assert cc.cache_dir_problem(private) is None
