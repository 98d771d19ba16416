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
import contextlib
import hashlib
import importlib.util
import os
import pickle
import re
import stat
import sys
import tempfile
import threading
import types
import uuid
import warnings

import numpy as np

from ..cache import ProgramCache
from ..config import config
from ..errors import AutodiffError

__all__ = ["get_kernel", "memory_lookup", "stats", "reset_stats", "clear_memory", "cache_key",
           "kernel_path", "Kernel", "cache_dir_problem", "cache_dir_is_safe", "verified_source",
           "UnsafeCacheWarning", "UnsafeCacheError", "disk_cache_writable"]

_lock = threading.RLock()                # held for a whole compile: one at a time
# kernel key -> Kernel, this process's compiled kernels (autodiff.cache, listed as "kernels")
_memory = ProgramCache("kernels", "kernel_cache_size")
_stats = {"compiles": 0, "disk_loads": 0, "memory_hits": 0, "piece_compiles": 0, "piece_disk_loads": 0}
_warned = set()
_versions = None

_POSIX = hasattr(os, "geteuid")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_KERNEL_NAME = re.compile(r"[kp]_([0-9a-f]{32})\.py\Z")    # kernels and their shared pieces


class UnsafeCacheWarning(RuntimeWarning):
    """The disk cache (or a file in it) could have been written by someone else; not used."""


class UnsafeCacheError(AutodiffError, RuntimeError):
    """A cache file failed the ownership/mode check at the moment it was opened.

    Raised inside the cache machinery and turned into an :class:`UnsafeCacheWarning`
    plus an in-memory compile; a user only meets it by calling internals.
    """

    def __init__(self, path, reason):
        self.path = path
        self.reason = reason
        super().__init__(f"{path} {reason}")


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


def _warn_once(tag, msg, category=RuntimeWarning):
    if tag in _warned:
        return
    _warned.add(tag)
    warnings.warn(msg, category, stacklevel=_user_stacklevel())


def _user_stacklevel():
    """The stacklevel of the innermost frame outside autodiff: the user's ``jit`` call
    (2, this module's caller, when there is none, as in a background compile thread)."""
    from ..core import is_internal_file
    f, level = sys._getframe(2), 2
    while f is not None:
        if not is_internal_file(f.f_code.co_filename):
            thread_start = str(f.f_globals.get("__name__")).startswith(("threading",
                                                                        "concurrent."))
            return 2 if thread_start else level
        f, level = f.f_back, level + 1
    return 2


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


def _version_text():
    global _versions
    if _versions is None:
        _openmp_defaults()           # before Numba's threading layer loads (see there)
        from .numba_upstream import lazy_blas_check
        lazy_blas_check()            # before Numba's first compile (see numba_upstream)
        from .numba_upstream import defer_fft_extension
        defer_fft_extension()        # before Numba's first dispatcher (see numba_upstream)
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
                     f"numba_complex={_source_hash('autodiff.backends.numba_complex')};"
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


def _kernel_dir():
    return os.path.join(os.path.expanduser(str(config.cache_dir)), "kernels")


def kernel_path(source):
    """Where the disk cache keeps the module generated as ``source``."""
    return os.path.join(_kernel_dir(), f"k_{cache_key(source)}.py")


# ---------------------------------------------------------------------------------
# trust: who could have written a path
# ---------------------------------------------------------------------------------

def _user_name(uid):
    try:
        import pwd
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _stat_problem(st, strict=True):
    """Why an entry with ``os.lstat`` result ``st`` may hold someone else's data, or None.

    ``strict=False`` (ancestors of the cache) accepts a sticky directory owned by root
    or us: others can add entries there but not rename or delete ours.
    """
    if not _POSIX:
        return None
    me = os.geteuid()
    if st.st_uid not in (me, 0):
        return f"is owned by {_user_name(st.st_uid)}, not by you ({_user_name(me)}) or root"
    if stat.S_ISLNK(st.st_mode):
        return None      # a link's own mode means nothing; the directory holding it is checked
    writers = [w for bit, w in ((stat.S_IWGRP, "group"), (stat.S_IWOTH, "others"))
               if st.st_mode & bit]
    if not writers:
        return None
    if not strict and stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX:
        return None
    return (f"is writable by {' and '.join(writers)} "
            f"(mode {stat.S_IMODE(st.st_mode):04o}{', not sticky' if not strict else ''})")


def _chain(path):
    out = [path]
    while True:
        parent = os.path.dirname(out[-1])
        if parent == out[-1]:
            return out
        out.append(parent)


def _dir_problem(path, strict_depth):
    """(path, reason) for the first untrusted directory in ``path``'s chain, or None.

    The first ``strict_depth`` entries of the chain (the cache's own directories) may
    not be writable by others at all. Both the chain as written and the resolved one
    are checked: a symlink is as trustworthy as the directory it sits in and its owner.
    """
    seen = set()
    for chain in (_chain(os.path.abspath(path)), _chain(os.path.realpath(path))):
        for depth, p in enumerate(chain):
            if (p, depth < strict_depth) in seen:
                continue
            seen.add((p, depth < strict_depth))
            try:
                st = os.lstat(p)
            except FileNotFoundError:
                return p, "does not exist"
            except OSError as err:
                return p, f"cannot be inspected ({err.strerror})"
            if not (stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                return p, "is not a directory"
            why = _stat_problem(st, strict=depth < strict_depth)
            if why:
                return p, why
    return None


def cache_dir_problem(path=None):
    """Why the disk cache at ``path`` (default ``config.cache_dir``) would not be used, or None.

    Checks the directory and its ``kernels/`` and ``kernels/__pycache__`` subdirectories
    (when they exist): owned by you or root, not writable by group or others; and every
    ancestor (the same, except a root-owned sticky directory such as ``/tmp``).

    >>> cache_dir_is_safe("/nonexistent/autodiff-cache")
    False
    """
    root = os.path.expanduser(str(config.cache_dir if path is None else path))
    deepest, depth = root, 1
    for sub in ("kernels", os.path.join("kernels", "__pycache__")):
        if os.path.isdir(os.path.join(root, sub)):
            deepest, depth = os.path.join(root, sub), depth + 1
    found = _dir_problem(deepest, depth)
    return None if found is None else f"{found[0]} {found[1]}"


def cache_dir_is_safe(path=None):
    """True when :func:`cache_dir_problem` finds nothing."""
    return cache_dir_problem(path) is None


def _open_trusted(path):
    """Open ``path`` for reading if it is a regular file nobody else could have written.

    The check is made on the open descriptor (the file checked is the file read) and
    symlinks are not followed. Raises FileNotFoundError or :class:`UnsafeCacheError`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except OSError as err:
        if isinstance(err, FileNotFoundError):
            raise
        if os.path.islink(path):
            raise UnsafeCacheError(path, "is a symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        why = "is not a regular file" if not stat.S_ISREG(st.st_mode) else _stat_problem(st)
    except BaseException:
        os.close(fd)
        raise
    if why:
        os.close(fd)
        raise UnsafeCacheError(path, why)
    return os.fdopen(fd, "rb")


def _file_problem(path):
    try:
        _open_trusted(path).close()
    except FileNotFoundError:
        return None
    except UnsafeCacheError as err:
        return err.reason
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    return None


def _writable(path):
    """May we write into directory ``path``? Never where its owner-write bit is off."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if _POSIX and not st.st_mode & stat.S_IWUSR:
        return False         # read-only by intent, even for root
    return os.access(path, os.W_OK)


def verified_source(path):
    """The text of kernel source file ``path`` if it is trustworthy, else None.

    Trustworthy: named ``k_<hash>.py`` (or ``p_<hash>.py``, a shared piece), a regular file owned by you or root and not
    writable by group or others, in a directory that passes the same checks, and its
    content hashes (with the current library versions) to the name. A kernel cache
    that knows only keys can load sources through this.
    """
    m = _KERNEL_NAME.match(os.path.basename(path))
    if m is None or _dir_problem(os.path.dirname(os.path.abspath(path)), 2) is not None:
        return None
    try:
        with _open_trusted(path) as f:
            text = f.read().decode("utf-8")
    except (OSError, UnsafeCacheError, UnicodeDecodeError):
        return None
    return text if cache_key(text) == m.group(1) else None


# ---------------------------------------------------------------------------------
# writing: private directories and files, whatever the umask
# ---------------------------------------------------------------------------------

def _fchmod(fd, mode):
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)


def _ensure_private_dir(path):
    """Create ``path`` and its missing parents with mode 0700 (umask only removes bits,
    so the mode is set again after each mkdir). Existing directories are left alone."""
    missing = []
    p = os.path.abspath(path)
    while not os.path.isdir(p):
        missing.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            if not os.path.isdir(d):
                raise
            continue                    # a concurrent creator; the trust check judges it
        os.chmod(d, 0o700)


def _write_source(path, source):
    """Write ``source`` to ``path`` atomically, mode 0600; a concurrent writer of the same
    text is fine (the name is the content's hash)."""
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".py")
    try:
        _fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(source.encode("utf-8"))
        try:
            os.link(tmp, path)          # create-if-absent: an existing file keeps its inode
        except FileExistsError:
            os.replace(tmp, path)       # a concurrent writer of the same text won
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


# ---------------------------------------------------------------------------------
# Numba's cache, located in our checked directory only
# ---------------------------------------------------------------------------------

_numba_cache_class = None


def _kernel_numba_cache():
    """Numba's FunctionCache with a fixed locator, private files and checked reads.

    Numba picks a directory by trying, in order, ``NUMBA_CACHE_DIR``, the source's
    ``__pycache__`` (if writable), ``~/.cache/numba`` and others, or the classes named
    in ``NUMBA_CACHE_LOCATOR_CLASSES``; we skip that search (it also creates
    directories and test files as it goes) and name the directory ourselves. Built
    lazily so importing this module does not import Numba.
    """
    global _numba_cache_class
    if _numba_cache_class is not None:
        return _numba_cache_class
    from numba.core import caching

    class KernelLocator(caching._CacheLocator):
        def __init__(self, py_func, cache_path, stamp):
            self._py_file = py_func.__code__.co_filename
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = cache_path
            self._stamp = stamp

        def ensure_cache_path(self):
            _ensure_private_dir(self._cache_path)

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return self._stamp

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            return None      # never chosen by Numba's own search

    class KernelCacheImpl(caching.CompileResultCacheImpl):
        def __init__(self, py_func, cache_path, stamp):   # noqa: D401 - no locator search
            self._lineno = py_func.__code__.co_firstlineno
            self._locator = KernelLocator(py_func, cache_path, stamp)
            modname = os.path.splitext(os.path.basename(py_func.__code__.co_filename))[0]
            self._filename_base = self.get_filename_base(
                f"{modname}.{py_func.__qualname__}", getattr(sys, "abiflags", ""))

    class KernelIndexFile(caching.IndexDataCacheFile):
        # Same format as Numba's; every read goes through _open_trusted before unpickling.
        def _load_index(self):
            try:
                f = _open_trusted(self._index_path)
            except FileNotFoundError:
                return {}
            with f:
                version = pickle.load(f)
                data = f.read()
            if version != self._version:
                return {}
            stamp, overloads = pickle.loads(data)
            return overloads if stamp == self._source_stamp else {}

        def _load_data(self, name):
            with _open_trusted(self._data_path(name)) as f:
                return pickle.loads(f.read())

        @contextlib.contextmanager
        def _open_for_write(self, filepath):
            tmp = f"{filepath}.tmp.{uuid.uuid4().hex[:16]}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, 0o600)
            try:
                _fchmod(fd, 0o600)
                with os.fdopen(fd, "wb") as f:
                    fd = None
                    yield f
                os.replace(tmp, filepath)
            except BaseException:
                if fd is not None:
                    os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise

    class KernelCache(caching.FunctionCache):
        def __init__(self, py_func, cache_path, stamp, writable):   # noqa: D401
            self._name = repr(py_func)
            self._py_func = py_func
            self._impl = KernelCacheImpl(py_func, cache_path, stamp)
            self._cache_path = cache_path
            self._cache_file = KernelIndexFile(cache_path, self._impl.filename_base, stamp)
            self._writable = writable
            self.enable()

        def _save_overload(self, sig, data):
            if not self._writable:
                return
            try:
                super()._save_overload(sig, data)
            except OSError as err:
                _warn_once(("unwritable", self._cache_path),
                           f"autodiff jit: cannot write Numba's cache files under "
                           f"{self._cache_path} ({err}); this kernel is compiled again "
                           f"in the next process")

    _numba_cache_class = KernelCache
    return KernelCache


class _HelperCache:
    """Numba's disk cache for a helper of :mod:`.numba_math` / :mod:`.numba_runtime`,
    under ``<cache_dir>/kernels/__pycache__`` like the kernels' own files.

    In place of ``@njit(cache=True)``, whose locator search writes beside the installed
    package, in ``NUMBA_CACHE_DIR`` or in ``~/.cache/numba`` (and probes those places at
    decoration, i.e. at import). The directory is resolved and trust-checked at each load
    and save, so a changed ``ad.config.cache_dir`` or ``disk_cache=False`` takes effect;
    files are named after the helper (``numba_math.exp_f64-<line>.*.nbi``) and stamped
    with the hash of the helper's source file: a changed helper module is a miss (Numba's
    own stamp, the file's mtime and size, can miss an edit).
    """

    def __init__(self, py_func):
        self._py_func = py_func
        self._by_dir = {}            # (pycache dir, writable) -> KernelCache, None if refused
        self._enabled = True
        self._stamp = None

    def _current(self):
        if not self._enabled or not config.disk_cache:
            return None
        checked = _checked_kernel_dir()
        if checked is None:
            return None
        target = (os.path.join(checked[0], "__pycache__"), checked[1])
        if target in self._by_dir:
            return self._by_dir[target]      # None: a planted file was refused there
        if self._stamp is None:
            with open(self._py_func.__code__.co_filename, "rb") as f:
                self._stamp = hashlib.sha256(f.read()).digest()
        c = self._by_dir[target] = _kernel_numba_cache()(self._py_func, target[0],
                                                         self._stamp, target[1])
        return c

    def _refused(self, c, err):
        """A file of this helper's cache failed the trust check when opened (planted by
        someone else): warn once for the path and stop using this helper's files in that
        directory, reading and writing (the helper is compiled in memory by the caller)."""
        for target, known in list(self._by_dir.items()):
            if known is c:
                self._by_dir[target] = None
        _refuse(err.path, err.reason)

    @property
    def cache_path(self):
        c = self._current()
        return None if c is None else c.cache_path

    def load_overload(self, sig, target_context):
        c = self._current()
        if c is None:
            return None
        try:
            return c.load_overload(sig, target_context)
        except UnsafeCacheError as err:      # an untrusted .nbi or .nbc: never unpickled
            self._refused(c, err)
            return None                      # Numba compiles the helper in memory

    def save_overload(self, sig, cres):
        c = self._current()
        if c is None:
            return
        try:
            c.save_overload(sig, cres)       # reads the index first: checked like a load
        except UnsafeCacheError as err:
            self._refused(c, err)

    def enable(self):
        self._enabled = True

    def disable(self):
        self._enabled = False

    def flush(self):
        for c in self._by_dir.values():
            if c is not None:
                c.flush()


def cache_helpers(namespace, names=None):
    """Give the Numba helpers defined in module ``namespace`` (its ``globals()``) the disk
    cache under ``ad.config.cache_dir`` (:class:`_HelperCache`): all of them, or those in
    ``names``. Helpers are decorated without ``cache=True``; this replaces it."""
    from numba.core.dispatcher import Dispatcher
    modname = namespace["__name__"]
    for name, obj in list(namespace.items()):
        if isinstance(obj, Dispatcher) and getattr(obj.py_func, "__module__", None) == modname \
                and (names is None or name in names) and not isinstance(obj._cache, _HelperCache):
            obj._cache = _HelperCache(obj.py_func)


def cached_cfunc(sig, **options):
    """``numba.cfunc(sig, **options)`` whose compiled code is cached under
    ``ad.config.cache_dir`` (:class:`_HelperCache`), in place of ``cache=True``; compiled
    (or loaded) at the first use of its ``address``, not at import: a process whose
    programs never need it never pays for it."""
    def wrap(pyfunc):
        return _LazyCFunc(pyfunc, sig, options)
    return wrap


class _LazyCFunc:
    """A cached ``numba.cfunc``, compiled when its ``address`` is first read."""

    def __init__(self, pyfunc, sig, options):
        self._args = (pyfunc, sig, options)
        self._cfunc = None
        self._lock = threading.Lock()

    def _compiled(self):
        with self._lock:
            if self._cfunc is None:
                from numba.core import sigutils
                from numba.core.ccallback import CFunc
                pyfunc, sig, options = self._args
                res = CFunc(pyfunc, sigutils.normalize_signature(sig), locals={},
                            options=options)
                res._cache = _HelperCache(pyfunc)
                res.compile()
                self._cfunc = res
            return self._cfunc

    @property
    def address(self):
        return self._compiled().address

    @property
    def compiled(self):
        """Whether the cfunc has been compiled (or loaded) in this process."""
        return self._cfunc is not None

    @property
    def cache_hits(self):
        """Loads from the disk cache (0 while not compiled)."""
        return 0 if self._cfunc is None else self._cfunc.cache_hits


def _attach_numba_cache(mod, cache_path, stamp, writable):
    """Give every dispatcher defined in ``mod`` our cache (the source said cache=False)."""
    from numba.core.dispatcher import Dispatcher
    cache_cls = _kernel_numba_cache()
    for obj in list(vars(mod).values()):
        if isinstance(obj, Dispatcher) and getattr(obj.py_func, "__module__", None) == mod.__name__:
            obj._cache = cache_cls(obj.py_func, cache_path, stamp, writable)


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
        _attach_numba_cache(mod, os.path.join(os.path.dirname(path), "__pycache__"), stamp,
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


def _refuse(path, reason):
    _warn_once(("unsafe", path),
               f"autodiff jit: not using the kernel cache: {path} {reason}; anyone who can "
               f"write there could make this process run their code. Compiling in memory "
               f"and writing nothing there. Fix: make it yours and private (chmod go-w), or "
               f"point ad.config.cache_dir / AUTODIFF_CACHE_DIR at a private directory.",
               UnsafeCacheWarning)
    return None


def _existing_prefix_problem(kdir):
    """The trust check for the part of ``<cache_dir>/kernels`` that exists already."""
    p, depth = kdir, 2
    while not os.path.lexists(p):
        p, depth = os.path.dirname(p), depth - 1
    if not os.path.isdir(p):
        return None                      # creating kernels/ will fail and say so
    return _dir_problem(p, max(depth, 0))


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


def _checked_kernel_dir():
    """Check ``<cache_dir>/kernels`` (created if absent) and its ``__pycache__``:
    ``(kernel dir, whether we may write there)``, or None when refused or unwritable."""
    kdir = _kernel_dir()
    found = _existing_prefix_problem(kdir)
    if found is not None:               # refuse before creating anything inside it
        return _refuse(*found)
    try:
        _ensure_private_dir(kdir)
    except OSError as err:
        _warn_once("unwritable", f"autodiff jit: cannot write the kernel cache under "
                                 f"{kdir} ({err}); compiling without the disk cache")
        return None
    pycache = os.path.join(kdir, "__pycache__")
    found = _dir_problem(pycache if os.path.lexists(pycache) else kdir,
                         3 if os.path.lexists(pycache) else 2)
    if found is not None:
        return _refuse(*found)
    return kdir, _writable(kdir)


def disk_cache_writable():
    """Whether kernels compiled now would be written to a trusted disk cache (the checks of
    :func:`get_kernel`; an unsafe directory warns as there). The background compiler's
    worker process is used only then: its kernels reach this process through the disk."""
    with _lock:
        checked = _checked_kernel_dir()
    return checked is not None and checked[1]


def _checked_module_path(key, source, prefix):
    """Check the cache directory and the module file ``<prefix>_<key>.py`` for ``source``
    (written if absent): ``(path, whether Numba may write its cache)``, or None when the
    disk cache is refused or unwritable (then compile in memory)."""
    checked = _checked_kernel_dir()
    if checked is None:
        return None
    kdir, writable = checked
    pycache = os.path.join(kdir, "__pycache__")
    path = os.path.join(kdir, f"{prefix}_{key}.py")
    why = _file_problem(path)
    if why:
        return _refuse(path, why)
    if os.path.lexists(path) and verified_source(path) != source:
        _warn_once(("bad-source", path),
                   f"autodiff jit: the cached kernel source {path} does not hash to its name "
                   f"(corrupted or altered); " + ("deleting it and recompiling" if writable else
                                                  "the cache is read-only, so compiling in memory"))
        if not writable:
            return None
        _purge_numba_cache(path)
        try:
            os.unlink(path)
        except OSError:
            pass
    for f in _numba_cache_files(path):
        why = _file_problem(f)
        if why:
            return _refuse(f, why)
    if not os.path.lexists(path):
        if not writable:
            return None                 # a read-only cache without this kernel
        try:
            _write_source(path, source)
        except OSError as err:
            _warn_once("unwritable", f"autodiff jit: cannot write the kernel cache under "
                                     f"{kdir} ({err}); compiling without the disk cache")
            return None
    writable = writable and (not os.path.isdir(pycache) or _writable(pycache))
    return path, writable


def _compile_from(mod, key, entry, sig, path, writable, source=None, modname=None):
    for attempt in range(2):
        had_cache = _has_numba_cache(path)
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
                return _refuse(unsafe.path, unsafe.reason)
            if attempt == 0 and had_cache and not _is_codegen_error(err) and modname:
                if not writable:
                    _warn_once(("bad-cache", path),
                               f"autodiff jit: the Numba cache for {path} could not be loaded "
                               f"({type(err).__name__}: {err}); the cache is read-only, "
                               f"compiling in memory")
                    return None
                _warn_once(("bad-cache", path),
                           f"autodiff jit: the Numba cache for {path} could not be loaded "
                           f"({type(err).__name__}: {err}); recompiling")
                _purge_numba_cache(path)
                continue
            raise
        hits = disp.stats.cache_hits.get(sig, 0) if hasattr(disp, "stats") else 0
        from_disk = bool(hits)
        _stats["disk_loads" if from_disk else "compiles"] += 1
        return Kernel(key, disp, ep, sig, path, from_disk)
    return None
