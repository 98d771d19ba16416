"""Compiled kernels: an in-memory LRU keyed by source, backed by a checked disk cache.

A kernel is identified by the hash of its generated source plus the versions of
everything that shapes the machine code (autodiff, numba, numpy, Python, and the
contents of the helper modules ``numba_math`` and ``numba_runtime`` that get inlined;
Numba itself does not track such dependencies). The source is written once,
atomically, to ``<cache_dir>/kernels/k_<hash>.py``; Numba's index and object files
for the ``@njit`` functions in it go to ``<cache_dir>/kernels/__pycache__`` and a
second process loads machine code instead of compiling.

Threat model: whoever can write into the cache can make the next ``jit`` call run
their code (a ``k_<hash>.py`` is Python, a ``.nbi``/``.nbc`` is a pickle). So the disk
cache is used only when nobody but the current user (or root) could have written it:

* directories are created 0700 and files 0600, whatever the umask;
* before anything is read, the directory chain is checked: the kernel directory and
  ``cache_dir`` itself must be owned by the current user or root and not writable by
  group or others; ancestors likewise, except that a sticky world-writable directory
  owned by root (``/tmp``) is accepted, since others cannot rename or delete our
  entries in it. Every file is checked the same way (through the open descriptor, so
  the file checked is the file read) before it is read or unpickled. Anything unsafe
  is refused with one :class:`UnsafeCacheWarning` naming the path and the reason; the
  kernel is then compiled in memory and nothing is written there;
* the file name carries the hash of the content (and of the versions above): a file
  whose text does not hash to its name is deleted and recompiled, never executed. The
  module that runs is always the source generated in this process; the file on disk
  only anchors Numba's cache (its name, line numbers, the source stamp);
* Numba's cache files for our kernels are found with our own locator, which points
  only into the checked directory: ``NUMBA_CACHE_DIR``, ``NUMBA_CACHE_LOCATOR_CLASSES``,
  the source tree's ``__pycache__`` and ``~/.cache/numba`` are never consulted;
* a directory without its owner-write bit (or not writable by us) is a read-only
  cache: kernels found there are loaded, missing ones compiled in memory, nothing is
  written. That is how a cache prepared by one account is shared (see docs/guide.md,
  "Disk cache safety"); it must then be owned by root, since another user's account
  could change it at any time.

Platforms without ``os.geteuid`` (Windows) have no owner or mode bits to check: the
content-hash checks and the private Numba locator still apply, and the cache must be
in a directory only the user can write (the default, under the user's profile).

Failure policy otherwise: the disk cache only ever costs a compile. Numba index or
data files that fail to load are deleted and the kernel recompiled; an unwritable
cache directory falls back to compiling in memory. Each of these warns once per
process.

Public helpers besides :func:`get_kernel`: :func:`cache_dir_problem` /
:func:`cache_dir_is_safe` say whether a cache directory would be trusted, and
:func:`verified_source` reads a kernel source file only if it is safe and hashes to
its name.

>>> from autodiff.backends import compile_cache
>>> sorted(compile_cache.stats())
['compiles', 'disk_loads', 'memory_hits', 'piece_compiles', 'piece_disk_loads']
>>> compile_cache.cache_dir_problem("/nonexistent/autodiff-cache")
'/nonexistent/autodiff-cache does not exist'
"""
import hashlib
import importlib.util
import os
import re
import sys
import threading
import types

import numpy as np

from ..cache import ProgramCache
from ..config import config
from .cache_files import (UnsafeCacheError, UnsafeCacheWarning, cache_dir_is_safe,
                          cache_dir_problem, checked_kernel_dir, dir_problem, dir_writable,
                          file_problem, has_numba_cache, kernel_dir, numba_cache_files,
                          open_trusted, purge_numba_cache, refuse, warn_once, write_source)
from .numba_cache import attach_numba_cache
from .numba_upstream import defer_fft_extension, fix_log2_intrinsic, lazy_blas_check

__all__ = ["get_kernel", "memory_lookup", "stats", "reset_stats", "clear_memory", "cache_key",
           "kernel_path", "Kernel", "cache_dir_problem", "cache_dir_is_safe", "verified_source",
           "UnsafeCacheWarning", "UnsafeCacheError", "disk_cache_writable"]

_lock = threading.RLock()                # held for a whole compile: one at a time
# kernel key -> Kernel, this process's compiled kernels (autodiff.cache, listed as "kernels")
_memory = ProgramCache("kernels", "kernel_cache_size")
_stats = {"compiles": 0, "disk_loads": 0, "memory_hits": 0, "piece_compiles": 0, "piece_disk_loads": 0}
_versions = None

_KERNEL_NAME = re.compile(r"[kp]_([0-9a-f]{32})\.py\Z")    # kernels and their shared pieces


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
    """Set every counter of :func:`stats` back to 0."""
    for k in _stats:
        _stats[k] = 0


def clear_memory():
    """Forget compiled kernels held in memory (the disk cache stays)."""
    with _lock:
        _memory.clear()


def _file_hash(modname):
    try:
        mod = importlib.import_module(modname)
        with open(mod.__file__, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except Exception:  # noqa: BLE001 - a missing helper module simply is not part of the key
        return "absent"


def _source_hash(modname):
    """:func:`_file_hash` without importing the module (numba_complex registers BLAS
    symbols at import; real programs never need it)."""
    try:
        spec = importlib.util.find_spec(modname)
        with open(spec.origin, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except Exception:  # noqa: BLE001
        return "absent"


def _blas():
    try:
        from . import numba_runtime
        return numba_runtime.BLAS
    except Exception:  # noqa: BLE001
        return "absent"


def _openmp_defaults():
    """Default ``OMP_WAIT_POLICY`` to ``PASSIVE`` for Numba's OpenMP pool (prange loops).

    libgomp's default policy spins idle workers for a long while after each parallel
    loop; on a 2-core machine shared with other processes that starved everything
    running next (measured: a 1e5-element loop 7.0 ms instead of 0.76 ms). Sleeping
    workers cost a few microseconds per launch, nothing at the sizes where prange is
    used. Only a default: a user's own setting wins. libgomp reads it when Numba loads
    its threading layer, at the first parallel kernel's launch, which comes after this
    first compile; set here rather than at import so that importing autodiff leaves the
    environment alone (a process that never jits is not touched).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def prepare_numba():
    """What must precede Numba's first compile in this process (idempotent): the OpenMP
    defaults and the upstream workarounds of :mod:`.numba_upstream`. Every path that
    compiles or loads Numba code calls it first (kernels here; the LLVM tier's C entry
    points and GEMM pool in ``llvm_cpu``)."""
    _openmp_defaults()           # before Numba's threading layer loads (see there)
    lazy_blas_check()            # before Numba's first compile (see numba_upstream)
    defer_fft_extension()        # before Numba's first dispatcher (see numba_upstream)
    fix_log2_intrinsic()         # before Numba's first compile (see numba_upstream)


def _version_text():
    global _versions
    if _versions is None:
        prepare_numba()
        import numba                 # (Numba and the modules importing it load here, lazily)
        # the package's version: autodiff/__init__ sets it before anything else (importing
        # the package from here would be an import from the layer above)
        version = sys.modules[__name__.split(".")[0]].__version__
        try:
            from . import numba_math
            mv = getattr(numba_math, "VERSION", "?")
        except Exception:  # noqa: BLE001
            mv = "absent"
        _versions = (f"autodiff={version};numba={numba.__version__};numpy={np.__version__};"
                     f"python={sys.version_info[:3]};numba_math={mv}/"
                     f"{_file_hash('autodiff.backends.numba_math')};"
                     f"numba_intrinsics={_file_hash('autodiff.backends.numba_intrinsics')};"
                     f"trig_reduction={_file_hash('autodiff.backends.trig_reduction')};"
                     f"numba_runtime={_file_hash('autodiff.backends.numba_runtime')};"
                     f"numba_complex={_source_hash('autodiff.backends.numba_complex')};"
                     f"complex_math={_source_hash('autodiff.backends.complex_math')};"
                     f"numba_upstream={_source_hash('autodiff.backends.numba_upstream')};"
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
    from numba import types as nbtypes
    from numba.np.numpy_support import from_dtype
    sig = []
    for p in params:
        if p[0] == "array":
            sig.append(nbtypes.Array(from_dtype(np.dtype(p[1])), p[2], "C"))
        elif p[0] == "scalar":
            sig.append(from_dtype(np.dtype(p[1])))
        else:
            sig.append(nbtypes.Array(nbtypes.int64, 1, "C"))
    return tuple(sig)


def memory_lookup(source):
    """The kernel for ``source`` if it is compiled in this process already, else None.

    Never waits: a compile running in another thread holds the cache lock for seconds.
    """
    if not _memory:        # nothing compiled yet: do not import Numba for the version key
        return None
    key = cache_key(source)
    k = _memory.table.get(key)          # a miss here is not one: get_kernel follows
    if k is not None:
        _memory.hits += 1
        _memory.touch(key)
        _stats["memory_hits"] += 1
    return k


def get_kernel(source, entry, params, pieces=()):
    """The compiled kernel for ``source`` (memory, then disk, then a compile).

    ``pieces``: ``(module name, source)`` of the modules the kernel imports its shared
    loop nests from (see numba_cpu's outlining). Each is a module of its own, keyed by
    its content, loaded once per process and cached on disk like a kernel: kernels that
    share a piece (the same layer in two functions, a function and its gradient) compile
    it once, in this process and in later ones.
    """
    key = cache_key(source)
    with _lock:
        k = _memory.get(key)
        if k is not None:
            _stats["memory_hits"] += 1
            return k
        sig = _numba_signature(params)
        loaded = [_load_piece(name, src) for name, src in pieces]
        before = [_piece_counts(d) for d in loaded]
        k = None
        if config.disk_cache:
            k = _load_via_disk(key, source, entry, sig)
        if k is None:
            k = _compile_in_memory(key, source, entry, sig)
        for d, (n0, h0) in zip(loaded, before):
            n1, h1 = _piece_counts(d)
            new = n1 - n0
            _stats["piece_disk_loads"] += min(h1 - h0, new)
            _stats["piece_compiles"] += max(new - (h1 - h0), 0)
        _memory.put(key, k)
        return k


def _piece_counts(disp):
    """(compiled signatures, signatures loaded from the disk cache) of a piece's function."""
    hits = sum(disp.stats.cache_hits.values()) if hasattr(disp, "stats") else 0
    return len(disp.overloads), hits


def _load_piece(modname, source):
    """The ``loop`` dispatcher of piece module ``modname`` (imported once per process)."""
    mod = sys.modules.get(modname)
    if mod is None:
        key = cache_key(source)
        checked = _checked_module_path(key, source, "p") if config.disk_cache else None
        if checked is not None:
            mod = _exec_kernel_module(checked[0], modname, source, checked[1])
        else:
            mod = types.ModuleType(modname)
            sys.modules[modname] = mod
            try:
                exec(compile(_without_numba_cache(source), f"<autodiff piece {key[:12]}>",
                             "exec", dont_inherit=True), mod.__dict__)
            except BaseException:
                sys.modules.pop(modname, None)
                raise
    return mod.loop


_NUMBA_CACHE_FLAG = re.compile(r"^(\s*@(?:numba\.)?njit\(.*?)\bcache=True", re.M)


def _without_numba_cache(source):
    """The source with Numba's own caching off: we attach our locator ourselves."""
    return _NUMBA_CACHE_FLAG.sub(r"\1cache=False", source)


def _compile_in_memory(key, source, entry, sig):
    code = compile(_without_numba_cache(source), f"<autodiff kernel {key[:12]}>", "exec")
    ns = {"__name__": f"_autodiff_kernel_mem_{key}"}
    exec(code, ns)
    disp = ns[entry]
    disp.compile(sig)
    _stats["compiles"] += 1
    return Kernel(key, disp, disp.overloads[sig].entry_point, sig, None, False)


def kernel_path(source):
    """Where the disk cache keeps the module generated as ``source``."""
    return os.path.join(kernel_dir(), f"k_{cache_key(source)}.py")


def verified_source(path):
    """The text of kernel source file ``path`` if it is trustworthy, else None.

    Trustworthy: named ``k_<hash>.py`` (or ``p_<hash>.py``, a shared piece), a regular file owned by you or root and not
    writable by group or others, in a directory that passes the same checks, and its
    content hashes (with the current library versions) to the name. A kernel cache
    that knows only keys can load sources through this.
    """
    m = _KERNEL_NAME.match(os.path.basename(path))
    if m is None or dir_problem(os.path.dirname(os.path.abspath(path)), 2) is not None:
        return None
    try:
        with open_trusted(path) as f:
            text = f.read().decode("utf-8")
    except (OSError, UnsafeCacheError, UnicodeDecodeError):
        return None
    return text if cache_key(text) == m.group(1) else None


def _exec_kernel_module(path, modname, source, writable):
    """Run ``source`` (generated in this process, never the file's text) as the module
    ``modname`` whose file is ``path``, so Numba's cache entries are named after it."""
    mod = sys.modules.get(modname)
    if mod is not None:
        return mod
    mod = types.ModuleType(modname)
    mod.__file__ = path
    code = compile(_without_numba_cache(source), path, "exec", dont_inherit=True)
    sys.modules[modname] = mod
    try:
        exec(code, mod.__dict__)
        stamp = hashlib.sha256(source.encode("utf-8")).digest()   # Numba's stamp: the file's hash
        attach_numba_cache(mod, os.path.join(os.path.dirname(path), "__pycache__"), stamp,
                            writable)
    except BaseException:
        sys.modules.pop(modname, None)
        raise
    return mod


def _is_codegen_error(err):
    """Errors in the generated code itself (not in the cache): report, do not retry."""
    from numba.core.errors import NumbaError
    return isinstance(err, (NumbaError, SyntaxError, NameError, ImportError))


def _unsafe_cause(err):
    while err is not None:
        if isinstance(err, UnsafeCacheError):
            return err
        err = err.__cause__ or err.__context__
    return None


def _load_via_disk(key, source, entry, sig):
    modname = f"_autodiff_kernel_{key}"
    mod = sys.modules.get(modname)
    if mod is not None:                 # loaded (and checked) earlier in this process
        return _compile_from(mod, key, entry, sig, mod.__file__, False)
    checked = _checked_module_path(key, source, "k")
    if checked is None:
        return None
    path, writable = checked
    return _compile_from(None, key, entry, sig, path, writable, source, modname)


def disk_cache_writable():
    """Whether kernels compiled now would be written to a trusted disk cache (the checks of
    :func:`get_kernel`; an unsafe directory warns as there). The background compiler's
    worker process is used only then: its kernels reach this process through the disk."""
    with _lock:
        checked = checked_kernel_dir()
    return checked is not None and checked[1]


def _checked_module_path(key, source, prefix):
    """Check the cache directory and the module file ``<prefix>_<key>.py`` for ``source``
    (written if absent): ``(path, whether Numba may write its cache)``, or None when the
    disk cache is refused or unwritable (then compile in memory)."""
    checked = checked_kernel_dir()
    if checked is None:
        return None
    kdir, writable = checked
    pycache = os.path.join(kdir, "__pycache__")
    path = os.path.join(kdir, f"{prefix}_{key}.py")
    why = file_problem(path)
    if why:
        return refuse(path, why)
    if os.path.lexists(path) and verified_source(path) != source:
        warn_once(("bad-source", path),
                   f"autodiff jit: the cached kernel source {path} does not hash to its name "
                   f"(corrupted or altered); " + ("deleting it and recompiling" if writable else
                                                  "the cache is read-only, so compiling in memory"))
        if not writable:
            return None
        purge_numba_cache(path)
        try:
            os.unlink(path)
        except OSError:
            pass
    for f in numba_cache_files(path):
        why = file_problem(f)
        if why:
            return refuse(f, why)
    if not os.path.lexists(path):
        if not writable:
            return None                 # a read-only cache without this kernel
        try:
            write_source(path, source)
        except OSError as err:
            warn_once("unwritable", f"autodiff jit: cannot write the kernel cache under "
                                     f"{kdir} ({err}); compiling without the disk cache")
            return None
    writable = writable and (not os.path.isdir(pycache) or dir_writable(pycache))
    return path, writable


def _compile_from(mod, key, entry, sig, path, writable, source=None, modname=None):
    for attempt in range(2):
        had_cache = has_numba_cache(path)
        try:
            if mod is None:
                mod = _exec_kernel_module(path, modname, source, writable)
            disp = getattr(mod, entry)
            disp.compile(sig)
            ep = disp.overloads[sig].entry_point
        except Exception as err:  # noqa: BLE001 - corrupted Numba cache files raise anything
            if modname is not None:
                sys.modules.pop(modname, None)
            mod = None
            unsafe = _unsafe_cause(err)
            if unsafe is not None:       # changed between our check and Numba's read
                return refuse(unsafe.path, unsafe.reason)
            if attempt == 0 and had_cache and not _is_codegen_error(err) and modname:
                if not writable:
                    warn_once(("bad-cache", path),
                               f"autodiff jit: the Numba cache for {path} could not be loaded "
                               f"({type(err).__name__}: {err}); the cache is read-only, "
                               f"compiling in memory")
                    return None
                warn_once(("bad-cache", path),
                           f"autodiff jit: the Numba cache for {path} could not be loaded "
                           f"({type(err).__name__}: {err}); recompiling")
                purge_numba_cache(path)
                continue
            raise
        hits = disp.stats.cache_hits.get(sig, 0) if hasattr(disp, "stats") else 0
        from_disk = bool(hits)
        _stats["disk_loads" if from_disk else "compiles"] += 1
        return Kernel(key, disp, ep, sig, path, from_disk)
    return None
