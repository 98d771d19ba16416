"""Source locations and the per-thread trace state.

Every equation and every error names the user's ``file:line``: :func:`user_source` finds the
innermost frame outside autodiff; :func:`at_source` makes equations emitted by a transform
carry the line of the equation they stem from. ``trace_state`` holds, per thread, the stack
of active traces, the no-grad state and that source line."""
import os
import sys
import threading

from .cache import ProgramCache

__all__ = ["register_internal_dir", "SourceInfo", "is_internal_file", "at_source", "user_source",
           "trace_state"]

# ----------------------------------------------------------------------------
# Source locations: the user's file:line for every equation and every error
# ----------------------------------------------------------------------------

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_PKG_ROOTS = (_PKG_DIR,)
_SKIP_DIRS = set()


def register_internal_dir(path):
    """Frames from files under ``path`` are never blamed as the user's line."""
    global _PKG_ROOTS
    _PKG_ROOTS = _PKG_ROOTS + (os.path.dirname(os.path.abspath(path)),)
    _internal_file_cache.clear()          # answers given before this call may change
    _internal_code_cache.clear()


class SourceInfo:
    """A user source location (file and line), formatted lazily."""

    __slots__ = ("filename", "lineno", "function")

    def __init__(self, filename, lineno, function=""):
        self.filename = filename
        self.lineno = lineno
        self.function = function

    def __str__(self):
        return f"{self.filename}:{self.lineno}"

    def __repr__(self):
        return f"SourceInfo({self})"

    def short(self):
        """``file.py:line`` without the directory."""
        return f"{os.path.basename(self.filename)}:{self.lineno}"


# Memo tables of facts about code (is a file / code object autodiff's own, which globals
# a code object reads), read for every frame of every traced operation. They are bounded
# program caches like the others (autodiff.cache, listed as "source"), read through the
# bare table on this hot path: a hit costs one C dict lookup and is not counted (misses
# and evictions are), no recency update, so the oldest entries go first once
# ``ad.config.source_cache_size`` is reached.
_internal_file_cache = ProgramCache("source", "source_cache_size")   # file name -> bool
_internal_file_get = _internal_file_cache.table.get


def is_internal_file(filename):
    """Whether ``filename`` is autodiff's (or numpy's) own code: never blamed as the user's line."""
    r = _internal_file_get(filename)
    if r is None:
        r = filename.startswith(_PKG_ROOTS) or filename.startswith("<frozen") or \
            os.sep + "numpy" + os.sep in filename
        _internal_file_cache.misses += 1
        _internal_file_cache.put(filename, r)
    return r


# id(code object) -> (the code object, is it autodiff's (or numpy's) own code). Keyed by
# id: a code object hashes its whole content (name, bytecode, the constants tuple, hashed
# anew each time), 3-4 us for a large function, on every traced operation; the entry holds
# the code object, so its id is not reused while the entry lives
_internal_code_cache = ProgramCache("source", "source_cache_size")
_internal_code_get = _internal_code_cache.table.get


def is_internal_code(code):
    """Whether code object ``code`` is autodiff's (or numpy's) own (cached by identity)."""
    entry = _internal_code_get(id(code))
    if entry is not None and entry[0] is code:
        return entry[1]
    internal = is_internal_file(code.co_filename)
    _internal_code_cache.misses += 1
    _internal_code_cache.put(id(code), (code, internal))
    return internal


def at_source(source, fn, *args, **kw):
    """Call ``fn`` so the equations it emits carry ``source``, the user's line they stem from
    (transforms re-emitting an equation keep the line of the equation they transform)."""
    prev = trace_state.source
    trace_state.source = source or prev
    try:
        return fn(*args, **kw)
    finally:
        trace_state.source = prev


def user_source(depth=1):
    """The innermost frame outside autodiff (and numpy): the user's line."""
    f = sys._getframe(depth)
    get = _internal_code_get
    while f is not None:
        code = f.f_code
        entry = get(id(code))           # (the hit inlined: this runs per traced operation)
        internal = entry[1] if entry is not None and entry[0] is code else \
            is_internal_code(code)
        if not internal:
            return SourceInfo(code.co_filename, f.f_lineno, code.co_name)
        f = f.f_back
    return None



class _TraceState(threading.local):
    def __init__(self):
        self.stack = []           # active JaxprTraces, outermost first
        self.grad_enabled = True  # seed semantics: no_grad regions stop gradients
        self.source = None        # set by IR-to-IR passes: equations they emit inherit it
        self.dynamic = None       # a trace that records every traced op (checkpoint bodies)
        self.axis_frames = ()     # named vmap axes being traced, innermost last (named_axes)
        self.batching_axes = ()   # axes being resolved by vmap's batch_eval, innermost last


trace_state = _TraceState()

