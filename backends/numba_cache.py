"""Numba's cache files (index ``.nbi`` and data ``.nbc``) for the kernels and for the Numba
helpers of the backend modules, kept in the checked kernel directory only.

Numba's own ``cache=True`` searches for a directory (``NUMBA_CACHE_DIR``, beside the
source, ``~/.cache/numba``) and unpickles whatever it finds there; the kernels and helpers
use our locator instead, which points only into ``<cache_dir>/kernels/__pycache__`` as
checked by :mod:`autodiff.backends.cache_files`, writes private files atomically and
checks every file through its open descriptor before unpickling it.

Interface: :func:`attach_numba_cache` (a kernel module's dispatchers, for
``compile_cache``), :func:`cache_helpers` and :func:`cached_cfunc` (a backend module's
helpers: ``numba_math``, ``numba_runtime``, ``blas_pool``, ...), :class:`HelperCache`.
Numba itself is imported only when a cache is built.
"""
import contextlib
import hashlib
import os
import pickle
import sys
import threading
import uuid

from ..config import config
from .cache_files import (BINARY, NOFOLLOW, UnsafeCacheError, checked_kernel_dir,
                          ensure_private_dir, fchmod, open_trusted, refuse, warn_once)

__all__ = ["attach_numba_cache", "cache_helpers", "cached_cfunc", "HelperCache"]


_numba_cache_class = None


@contextlib.contextmanager
def _locked(path):
    """An exclusive ``flock`` on ``path`` (made 0600 if absent) for the block; none where
    the platform has no ``fcntl`` (Windows keeps Numba's unlocked read-modify-write)."""
    try:
        import fcntl
    except ImportError:                                       # pragma: no cover - Windows
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW | BINARY, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


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
            ensure_private_dir(self._cache_path)

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
        # Same format as Numba's; every read goes through open_trusted before unpickling.
        def _load_index(self):
            try:
                f = open_trusted(self._index_path)
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
            with open_trusted(self._data_path(name)) as f:
                return pickle.loads(f.read())

        def save(self, key, data):
            # Numba 0.68's IndexDataCacheFile.save reads the index, takes the first data
            # file name free in what it read (``<base>.1.nbc``), writes the index, then the
            # data. Two processes adding different signatures of one function at once (two
            # pytest-xdist workers sorting float32 and float64) take the same name: an
            # index entry is lost, or the index names a file holding the other signature's
            # code, and every later process fails to type its callers until the cache is
            # deleted. Here each save writes its data to a file of its own name first, and
            # the index's read-modify-write holds an exclusive lock.
            name = f"{self._index_name[:-len('.nbi')]}.{uuid.uuid4().hex[:16]}.nbc"
            self._save_data(name, data)
            with _locked(self._index_path + ".lock"):
                overloads = self._load_index()
                old = overloads.get(key)
                overloads[key] = name
                self._save_index(overloads)
            if old is not None and old != name:
                with contextlib.suppress(OSError):
                    os.unlink(self._data_path(old))

        @contextlib.contextmanager
        def _open_for_write(self, filepath):
            tmp = f"{filepath}.tmp.{uuid.uuid4().hex[:16]}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | BINARY, 0o600)
            try:
                fchmod(fd, 0o600)
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
                warn_once(("unwritable", self._cache_path),
                           f"autodiff jit: cannot write Numba's cache files under "
                           f"{self._cache_path} ({err}); this kernel is compiled again "
                           f"in the next process")

    _numba_cache_class = KernelCache
    return KernelCache


class HelperCache:
    """Numba's disk cache for a helper of :mod:`.numba_math` / :mod:`.numba_runtime`,
    under ``<cache_dir>/kernels/__pycache__`` like the kernels' own files.

    In place of ``@njit(cache=True)``, whose locator search writes beside the installed
    package, in ``NUMBA_CACHE_DIR`` or in ``~/.cache/numba`` (and probes those places at
    decoration, i.e. at import). The directory is resolved and trust-checked at each load
    and save, so a changed ``ad.config.cache_dir`` or ``disk_cache=False`` takes effect;
    files are named after the helper (``numba_math.exp_f64-<line>.*.nbi``) and stamped
    with the hash of the helper's source file and of ``depends``, the files of the modules
    whose code it inlines: a changed helper module, or a changed dependency, is a miss
    (Numba's own stamp, the file's mtime and size, can miss an edit).
    """

    def __init__(self, py_func, depends=()):
        self._py_func = py_func
        self._depends = tuple(depends)
        self._by_dir = {}            # (pycache dir, writable) -> KernelCache, None if refused
        self._enabled = True
        self._stamp = None

    def _current(self):
        if not self._enabled or not config.disk_cache:
            return None
        checked = checked_kernel_dir()
        if checked is None:
            return None
        target = (os.path.join(checked[0], "__pycache__"), checked[1])
        if target in self._by_dir:
            return self._by_dir[target]      # None: a planted file was refused there
        if self._stamp is None:
            h = hashlib.sha256()
            for path in (self._py_func.__code__.co_filename,) + self._depends:
                with open(path, "rb") as f:
                    h.update(f.read())
            self._stamp = h.digest()
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
        refuse(err.path, err.reason)

    @property
    def cache_path(self):
        """The directory the helper's cache files are in now (None: no disk cache)."""
        c = self._current()
        return None if c is None else c.cache_path

    def load_overload(self, sig, target_context):
        """Numba's call: the compiled helper for ``sig`` from the disk cache, or None."""
        c = self._current()
        if c is None:
            return None
        try:
            return c.load_overload(sig, target_context)
        except UnsafeCacheError as err:      # an untrusted .nbi or .nbc: never unpickled
            self._refused(c, err)
            return None                      # Numba compiles the helper in memory

    def save_overload(self, sig, cres):
        """Numba's call: write the helper compiled for ``sig`` to the disk cache."""
        c = self._current()
        if c is None:
            return
        try:
            c.save_overload(sig, cres)       # reads the index first: checked like a load
        except UnsafeCacheError as err:
            self._refused(c, err)

    def enable(self):
        """Numba's call: use the disk cache."""
        self._enabled = True

    def disable(self):
        """Numba's call: stop using the disk cache."""
        self._enabled = False

    def flush(self):
        """Numba's call: empty the helper's index on disk (it compiles again next time)."""
        for c in self._by_dir.values():
            if c is not None:
                c.flush()


def cache_helpers(namespace, names=None, depends=()):
    """Give the Numba helpers defined in module ``namespace`` (its ``globals()``) the disk
    cache under ``ad.config.cache_dir`` (:class:`HelperCache`): all of them, or those in
    ``names``. Helpers are decorated without ``cache=True``; this replaces it. ``depends``:
    the modules whose code the helpers inline (intrinsics, other helpers), hashed into
    their stamp."""
    from numba.core.dispatcher import Dispatcher
    modname = namespace["__name__"]
    files = tuple(m.__file__ for m in depends)
    for name, obj in list(namespace.items()):
        if isinstance(obj, Dispatcher) and getattr(obj.py_func, "__module__", None) == modname \
                and (names is None or name in names) and not isinstance(obj._cache, HelperCache):
            obj._cache = HelperCache(obj.py_func, files)


def cached_cfunc(sig, depends=(), **options):
    """``numba.cfunc(sig, **options)`` whose compiled code is cached under
    ``ad.config.cache_dir`` (:class:`HelperCache`; ``depends``: the modules whose code it
    inlines), in place of ``cache=True``; compiled (or loaded) at the first use of its
    ``address``, not at import: a process whose programs never need it never pays for it."""
    files = tuple(m.__file__ for m in depends)

    def wrap(pyfunc):
        return _LazyCFunc(pyfunc, sig, options, files)
    return wrap


class _LazyCFunc:
    """A cached ``numba.cfunc``, compiled when its ``address`` is first read."""

    def __init__(self, pyfunc, sig, options, depends=()):
        self._args = (pyfunc, sig, options)
        self._depends = depends
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
                res._cache = HelperCache(pyfunc, self._depends)
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


def attach_numba_cache(mod, cache_path, stamp, writable):
    """Give every dispatcher defined in ``mod`` our cache (the source said cache=False)."""
    from numba.core.dispatcher import Dispatcher
    cache_cls = _kernel_numba_cache()
    for obj in list(vars(mod).values()):
        if isinstance(obj, Dispatcher) and getattr(obj.py_func, "__module__", None) == mod.__name__:
            obj._cache = cache_cls(obj.py_func, cache_path, stamp, writable)
