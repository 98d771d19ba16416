"""Compiled kernels: an in-memory LRU keyed by source, backed by Numba's disk cache.

A kernel is identified by the hash of its generated source plus the versions of
everything that shapes the machine code (autodiff, numba, numpy, Python, and the
contents of the helper modules ``numba_math`` and ``numba_runtime`` that get inlined;
Numba itself does not track such dependencies). The source is written once,
atomically, to ``<cache_dir>/kernels/k_<hash>.py`` and imported with importlib, so
the ``@njit(cache=True)`` functions in it are cached by Numba next to it and a second
process loads machine code instead of compiling.

Failure policy: the disk cache only ever costs a compile. A source file whose text
differs from what we generated (truncated, edited) is rewritten; Numba index or data
files that fail to load are deleted and the kernel recompiled; an unwritable cache
directory falls back to compiling in memory. Each of these warns once per process.

>>> from autodiff.backends import compile_cache
>>> sorted(compile_cache.stats())
['compiles', 'disk_loads', 'memory_hits']
"""
import collections
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import warnings

import numpy as np

from ..config import config

__all__ = ["get_kernel", "stats", "reset_stats", "clear_memory", "cache_key", "kernel_path",
           "Kernel"]

_lock = threading.RLock()
_memory = collections.OrderedDict()      # key -> Kernel
_stats = {"compiles": 0, "disk_loads": 0, "memory_hits": 0}
_warned = set()
_versions = None


class Kernel:
    """A compiled kernel: the Numba dispatcher, its compiled entry point, provenance."""

    __slots__ = ("key", "dispatcher", "entry_point", "signature", "path", "from_disk")

    def __init__(self, key, dispatcher, entry_point, signature, path, from_disk):
        self.key = key
        self.dispatcher = dispatcher
        self.entry_point = entry_point
        self.signature = signature
        self.path = path
        self.from_disk = from_disk

    def __repr__(self):
        return f"Kernel({self.key[:12]}, {'disk' if self.from_disk else 'compiled'})"


def stats():
    """Counters since start (or :func:`reset_stats`): compiles, disk loads, memory hits."""
    return dict(_stats)


def reset_stats():
    for k in _stats:
        _stats[k] = 0


def clear_memory():
    """Forget compiled kernels held in memory (the disk cache stays)."""
    with _lock:
        _memory.clear()


def _warn_once(tag, msg):
    if tag in _warned:
        return
    _warned.add(tag)
    warnings.warn(msg, RuntimeWarning, stacklevel=4)


def _file_hash(modname):
    try:
        mod = importlib.import_module(modname)
        with open(mod.__file__, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except Exception:  # noqa: BLE001 - a missing helper module simply is not part of the key
        return "absent"


def _blas():
    try:
        from . import numba_runtime
        return numba_runtime.BLAS
    except Exception:  # noqa: BLE001
        return "absent"


def _version_text():
    global _versions
    if _versions is None:
        import numba
        from .. import __version__
        try:
            from . import numba_math
            mv = getattr(numba_math, "VERSION", "?")
        except Exception:  # noqa: BLE001
            mv = "absent"
        _versions = (f"autodiff={__version__};numba={numba.__version__};numpy={np.__version__};"
                     f"python={sys.version_info[:3]};numba_math={mv}/"
                     f"{_file_hash('autodiff.backends.numba_math')};"
                     f"numba_runtime={_file_hash('autodiff.backends.numba_runtime')};"
                     f"blas={_blas()}")
    return _versions


def cache_key(source):
    """The kernel's identity: a hash of its source and of every version it depends on."""
    h = hashlib.sha256()
    h.update(_version_text().encode())
    h.update(b"\0")
    h.update(source.encode())
    return h.hexdigest()[:32]


def _numba_signature(params):
    from numba import types
    from numba.np.numpy_support import from_dtype
    sig = []
    for p in params:
        if p[0] == "array":
            sig.append(types.Array(from_dtype(np.dtype(p[1])), p[2], "C"))
        elif p[0] == "scalar":
            sig.append(from_dtype(np.dtype(p[1])))
        else:
            sig.append(types.Array(types.int64, 1, "C"))
    return tuple(sig)


def get_kernel(source, entry, params):
    """The compiled kernel for ``source`` (memory, then disk, then a compile)."""
    key = cache_key(source)
    with _lock:
        k = _memory.get(key)
        if k is not None:
            _memory.move_to_end(key)
            _stats["memory_hits"] += 1
            return k
        sig = _numba_signature(params)
        k = None
        if config.disk_cache:
            k = _load_via_disk(key, source, entry, sig)
        if k is None:
            k = _compile_in_memory(key, source, entry, sig)
        _memory[key] = k
        while len(_memory) > max(int(config.cache_size), 1):
            _memory.popitem(last=False)
        return k


def _compile_in_memory(key, source, entry, sig):
    code = compile(source.replace("cache=True", "cache=False"), f"<autodiff kernel {key[:12]}>",
                   "exec")
    ns = {"__name__": f"_autodiff_kernel_mem_{key}"}
    exec(code, ns)
    disp = ns[entry]
    disp.compile(sig)
    _stats["compiles"] += 1
    return Kernel(key, disp, disp.overloads[sig].entry_point, sig, None, False)


def _kernel_dir():
    return os.path.join(os.path.expanduser(str(config.cache_dir)), "kernels")


def kernel_path(source):
    """Where the disk cache keeps the module generated as ``source``."""
    return os.path.join(_kernel_dir(), f"k_{cache_key(source)}.py")


def _write_source(path, source):
    """Write ``source`` to ``path`` atomically; a concurrent writer of the same text is fine."""
    d = os.path.dirname(path)
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".py")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(source)
        try:
            os.link(tmp, path)          # create-if-absent: an existing file keeps its mtime
        except FileExistsError:
            os.replace(tmp, path)       # only reached when the existing text was wrong
            tmp = None
        except OSError:
            os.replace(tmp, path)       # filesystems without hard links
            tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _numba_cache_files(path):
    d = os.path.join(os.path.dirname(path), "__pycache__")
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return [os.path.join(d, n) for n in names
            if n.startswith(stem + ".") and (n.endswith(".nbi") or n.endswith(".nbc"))]


def _has_numba_cache(path):
    return bool(_numba_cache_files(path))


def _purge_numba_cache(path):
    for f in _numba_cache_files(path):
        try:
            os.unlink(f)
        except OSError:
            pass


def _import(path, modname):
    mod = sys.modules.get(modname)
    if mod is not None:
        return mod
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(modname, None)
        raise
    return mod


def _is_codegen_error(err):
    """Errors in the generated code itself (not in the cache): report, do not retry."""
    from numba.core.errors import NumbaError
    return isinstance(err, (NumbaError, SyntaxError, NameError, ImportError))


def _load_via_disk(key, source, entry, sig):
    path = os.path.join(_kernel_dir(), f"k_{key}.py")
    modname = f"_autodiff_kernel_{key}"
    try:
        if _read(path) != source:
            if os.path.exists(path):
                _warn_once("bad-source", f"autodiff jit: the cached kernel source {path} was "
                                         f"corrupted; rewriting it and recompiling")
                _purge_numba_cache(path)
            _write_source(path, source)
    except OSError as err:
        _warn_once("unwritable", f"autodiff jit: cannot write the kernel cache under "
                                 f"{_kernel_dir()} ({err}); compiling without the disk cache")
        return None
    for attempt in range(2):
        had_cache = _has_numba_cache(path)
        try:
            mod = _import(path, modname)
            disp = getattr(mod, entry)
            disp.compile(sig)
            ep = disp.overloads[sig].entry_point
        except Exception as err:  # noqa: BLE001 - corrupted Numba cache files raise anything
            sys.modules.pop(modname, None)
            if attempt == 0 and had_cache and not _is_codegen_error(err):
                _warn_once("bad-cache", f"autodiff jit: the Numba cache for {path} could not be "
                                        f"loaded ({type(err).__name__}: {err}); recompiling")
                _purge_numba_cache(path)
                continue
            raise
        hits = disp.stats.cache_hits.get(sig, 0) if hasattr(disp, "stats") else 0
        from_disk = bool(hits)
        _stats["disk_loads" if from_disk else "compiles"] += 1
        return Kernel(key, disp, ep, sig, path, from_disk)
    return None
