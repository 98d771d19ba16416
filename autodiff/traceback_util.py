"""Tracebacks that end at the user's line: library frames are dropped from errors that
leave a transform (``grad``, ``vmap``, ``jit``, ... are the boundaries).

An error raised for a user's mistake passes through a dozen frames of tracing, rules and
lowering; none of them is where the fix goes. Each public entry point catches the
exception on its way out, removes the frames of autodiff's own files (and numpy's) from
its traceback and re-raises it, so the traceback shows the user's call and the user's
line inside the traced function, and a note says how to see everything:
``ad.config.update("traceback_filtering", "off")`` or the environment variable
``AUTODIFF_TRACEBACK_FILTERING=off`` keeps every frame.

A traced value that leaked out of its transform and is used afterwards raises
``TracerLeakError`` outside every transform, so no transform's boundary sees it leave: the
tracer's operators and methods (:func:`boundaries`), ``autodiff.numpy``'s functions and
``Primitive.bind`` are boundaries of their own for autodiff's typed errors. Where the
operation is the hot path of tracing (``x * y``), the boundary is written in the function
(``except AutodiffError as e: filter_traceback(e); raise``), which costs nothing until an
error passes.

>>> import traceback, numpy as np, autodiff as ad, autodiff.numpy as anp
>>> def f(x):
...     if x > 0:                      # a Python branch on a traced value under jit
...         return x
...     return -x
>>> try:
...     ad.jit(f)(1.0)
... except ad.errors.ConcretizationError as e:
...     frames = traceback.extract_tb(e.__traceback__)
>>> frames[-1].line
'if x > 0:                      # a Python branch on a traced value under jit'
"""
import functools
import types

from .config import config
from .errors import AutodiffError, ConcretizationError
from .source_info import is_internal_file

__all__ = ["filter_traceback", "boundaries"]

_NOTE = ("autodiff removed {n} of its internal frames from this traceback; "
         "set AUTODIFF_TRACEBACK_FILTERING=off (or ad.config.update(\"traceback_filtering\", "
         "\"off\")) to see them")


def _internal(filename):
    return is_internal_file(filename)


def surface_cause(e):
    """The error to show for ``e``: numpy's item assignment (``g[i] = x``) and ``np.array([x])``
    turn the error a traced ``x`` raises in ``__float__`` into ``ValueError: setting an array
    element with a sequence`` raised from it (numpy treats a failed number conversion of an
    object with ``__getitem__`` as a sequence); the typed error names the line and the fix,
    so it is the one raised."""
    cause = e.__cause__
    if type(e) is ValueError and isinstance(cause, ConcretizationError):
        return cause
    return e


def shown_error(e):
    """What a public boundary raises for ``e`` caught there: None to re-raise ``e`` itself
    (its traceback filtered in place), else the typed error numpy wrapped
    (:func:`surface_cause`), with ``e``'s filtered traceback. Use as
    ``shown = shown_error(e); if shown is None: raise; raise shown from None``."""
    shown = surface_cause(e)
    if shown is e:
        filter_traceback(e)
        return None
    return filter_traceback(shown.with_traceback(e.__traceback__))


def filter_traceback(e):
    """Drop autodiff's and numpy's frames from ``e.__traceback__`` in place (unless
    filtering is off) and return ``e``; the caller re-raises it with a bare ``raise``, which
    keeps the shortened traceback."""
    if config.traceback_filtering == "off":
        return e
    kept, n = [], 0
    tb = e.__traceback__
    while tb is not None:
        n += 1
        if not _internal(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    removed = n - len(kept)
    if removed == 0:
        return e
    new = None
    for t in reversed(kept):
        new = types.TracebackType(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
    e.__traceback__ = new
    total = getattr(e, "_autodiff_frames_removed", 0)
    if total == 0 and hasattr(e, "add_note"):
        e.add_note(_NOTE.format(n=removed))
    elif hasattr(e, "__notes__") and total:
        e.__notes__ = [_NOTE.format(n=total + removed) if note == _NOTE.format(n=total)
                       else note for note in e.__notes__]
    try:
        e._autodiff_frames_removed = total + removed
    except AttributeError:          # exceptions with __slots__ (rare): the note says it once
        pass
    return e


def _boundary(fun):
    """``fun`` with autodiff's typed errors leaving it without autodiff's frames."""
    @functools.wraps(fun)
    def entry(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except AutodiffError as e:
            filter_traceback(e)
            raise                      # a bare raise adds no frame of this function
    entry._autodiff_boundary = True
    return entry


def boundaries(cls):
    """Class decorator: every method and property defined in ``cls``'s body becomes a public
    boundary for autodiff's typed errors (the tracer's ``__getitem__``, ``reshape``,
    ``__float__`` ... which a leaked tracer reaches outside every transform). Functions that
    are boundaries already (``_autodiff_boundary``), private helpers, object protocol
    methods and the metadata properties (``shape``, ``dtype``: read all the time, they raise
    nothing) are kept as they are.

    >>> import traceback, numpy as np, autodiff as ad
    >>> leaked = []
    >>> _ = ad.grad(lambda x: leaked.append(x) or x.sum())(np.ones(2))
    >>> try:
    ...     leaked[0].reshape(2, 1)
    ... except ad.errors.TracerLeakError as e:
    ...     frames = traceback.extract_tb(e.__traceback__)
    >>> [f.name for f in frames]
    ['<module>']
    """
    for name, attr in list(vars(cls).items()):
        private = name.startswith("_") and not name.endswith("__")
        if private or name in _KEPT or getattr(attr, "_autodiff_boundary", False):
            continue
        if isinstance(attr, property) and attr.fget is not None:
            setattr(cls, name, property(_boundary(attr.fget), attr.fset, attr.fdel, attr.__doc__))
        elif isinstance(attr, types.FunctionType):
            setattr(cls, name, _boundary(attr))
    return cls


# construction, representation, pickling and metadata: no user-facing error passes them
_KEPT = frozenset({"__init__", "__new__", "__repr__", "__reduce__", "__reduce_ex__",
                   "__init_subclass__", "__class_getitem__", "__getstate__", "__setstate__",
                   "__copy__", "__deepcopy__", "__hash__", "shape", "dtype", "ndim", "size",
                   "itemsize", "nbytes"})
