"""The kernel cache's files on disk: who could have written a path, private directories and
files written atomically, and the warnings that say why the cache is not used.

The threat model and the rules are :mod:`autodiff.backends.compile_cache`'s: a cache
directory or file is trusted only when nobody but the current user (or root) could have
written it (owner, no group/other write bit; ancestors may be root-owned sticky
directories such as ``/tmp``), files are checked through their open descriptor, and what
this process writes is created 0700/0600 whatever the umask. Used by ``compile_cache``
(kernel and piece modules) and ``numba_cache`` (Numba's index and object files).

Interface: :func:`cache_dir_problem` / :func:`cache_dir_is_safe` (public, also named by
``compile_cache``), :func:`dir_problem`, :func:`open_trusted`, :func:`file_problem`,
:func:`dir_writable`; :func:`kernel_dir`, :func:`checked_kernel_dir`,
:func:`ensure_private_dir`, :func:`write_source`, :func:`fchmod`; Numba's files of a
module: :func:`numba_cache_files`, :func:`has_numba_cache`, :func:`purge_numba_cache`;
:func:`warn_once` and :func:`refuse` (one :class:`UnsafeCacheWarning` per path);
:class:`UnsafeCacheError`; the ``os.open`` flags ``NOFOLLOW`` and ``BINARY``.

>>> from autodiff.backends import cache_files
>>> cache_files.cache_dir_problem("/nonexistent/autodiff-cache")
'/nonexistent/autodiff-cache does not exist'
"""
import os
import stat
import sys
import tempfile
import warnings

from ..config import config
from ..core import is_internal_file
from ..errors import AutodiffError

__all__ = ["UnsafeCacheWarning", "UnsafeCacheError", "cache_dir_problem", "cache_dir_is_safe",
           "dir_problem", "open_trusted", "file_problem", "dir_writable", "kernel_dir",
           "checked_kernel_dir", "ensure_private_dir", "write_source", "fchmod",
           "numba_cache_files", "has_numba_cache", "purge_numba_cache", "warn_once", "refuse",
           "NOFOLLOW", "BINARY"]

_warned = set()          # tags warned about in this process (warn_once)

_POSIX = hasattr(os, "geteuid")
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
BINARY = getattr(os, "O_BINARY", 0)


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


def warn_once(tag, msg, category=RuntimeWarning):
    """Warn ``msg`` once per process for ``tag``, at the user's frame."""
    if tag in _warned:
        return
    _warned.add(tag)
    warnings.warn(msg, category, stacklevel=_user_stacklevel())


def _user_stacklevel():
    """The stacklevel of the innermost frame outside autodiff: the user's ``jit`` call
    (2, this module's caller, when there is none, as in a background compile thread)."""
    f, level = sys._getframe(2), 2
    while f is not None:
        if not is_internal_file(f.f_code.co_filename):
            thread_start = str(f.f_globals.get("__name__")).startswith(("threading",
                                                                        "concurrent."))
            return 2 if thread_start else level
        f, level = f.f_back, level + 1
    return 2


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


def dir_problem(path, strict_depth):
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
    found = dir_problem(deepest, depth)
    return None if found is None else f"{found[0]} {found[1]}"


def cache_dir_is_safe(path=None):
    """True when :func:`cache_dir_problem` finds nothing."""
    return cache_dir_problem(path) is None


def open_trusted(path):
    """Open ``path`` for reading if it is a regular file nobody else could have written.

    The check is made on the open descriptor (the file checked is the file read) and
    symlinks are not followed. Raises FileNotFoundError or :class:`UnsafeCacheError`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | BINARY)
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


def file_problem(path):
    """Why the file at ``path`` may not be read (someone else could have written it, or it
    cannot be read), or None (also when it does not exist)."""
    try:
        open_trusted(path).close()
    except FileNotFoundError:
        return None
    except UnsafeCacheError as err:
        return err.reason
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    return None


def dir_writable(path):
    """May we write into directory ``path``? Never where its owner-write bit is off."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if _POSIX and not st.st_mode & stat.S_IWUSR:
        return False         # read-only by intent, even for root
    return os.access(path, os.W_OK)


# ---------------------------------------------------------------------------------
# writing: private directories and files, whatever the umask
# ---------------------------------------------------------------------------------

def fchmod(fd, mode):
    """``os.fchmod`` where the platform has it (not on Windows)."""
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)


def ensure_private_dir(path):
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


def write_source(path, source):
    """Write ``source`` to ``path`` atomically, mode 0600; a concurrent writer of the same
    text is fine (the name is the content's hash)."""
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".py")
    try:
        fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(source.encode("utf-8"))
        try:
            os.link(tmp, path)          # create-if-absent: an existing file keeps its inode
        except FileExistsError:
            pass                        # a concurrent writer of the same text won: keep its
            # file (replacing it would change its mtime, which stamps Numba's cache of it)
        except OSError:
            os.replace(tmp, path)       # filesystems without hard links
            tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def numba_cache_files(path):
    """Numba's index and data files (``.nbi``/``.nbc``) for the module at ``path``."""
    d = os.path.join(os.path.dirname(path), "__pycache__")
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return [os.path.join(d, n) for n in names
            if n.startswith(stem + ".") and (n.endswith(".nbi") or n.endswith(".nbc"))]


def has_numba_cache(path):
    """Whether Numba has cache files for the module at ``path``."""
    return bool(numba_cache_files(path))


def purge_numba_cache(path):
    """Delete Numba's cache files for the module at ``path`` (what cannot be deleted stays)."""
    for f in numba_cache_files(path):
        try:
            os.unlink(f)
        except OSError:
            pass


# ---------------------------------------------------------------------------------
# the kernel directory, checked before use
# ---------------------------------------------------------------------------------

def kernel_dir(sub="kernels"):
    """``<cache_dir>/kernels`` (not checked: see :func:`checked_kernel_dir`); ``sub`` names
    another directory of the cache (``"cuda"``: the CUDA backend's program modules)."""
    return os.path.join(os.path.expanduser(str(config.cache_dir)), sub)


def refuse(path, reason):
    """Warn once that the cache at ``path`` is not used (``reason``: who could write it)."""
    warn_once(("unsafe", path),
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
    return dir_problem(p, max(depth, 0))


def checked_kernel_dir(sub="kernels"):
    """Check ``<cache_dir>/kernels`` (or ``<cache_dir>/<sub>``; created if absent) and its
    ``__pycache__``: ``(kernel dir, whether we may write there)``, or None when refused or
    unwritable."""
    kdir = kernel_dir(sub)
    found = _existing_prefix_problem(kdir)
    if found is not None:               # refuse before creating anything inside it
        return refuse(*found)
    try:
        ensure_private_dir(kdir)
    except OSError as err:
        warn_once("unwritable", f"autodiff jit: cannot write the kernel cache under "
                                 f"{kdir} ({err}); compiling without the disk cache")
        return None
    pycache = os.path.join(kdir, "__pycache__")
    found = dir_problem(pycache if os.path.lexists(pycache) else kdir,
                         3 if os.path.lexists(pycache) else 2)
    if found is not None:
        return refuse(*found)
    return kdir, dir_writable(kdir)
