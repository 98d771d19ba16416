"""Shared machinery of ``autodiff.numpy``: dispatch, dtype promotion, broadcasting.

Every public function follows one pattern: on plain numpy inputs it calls numpy
itself (so eager results are numpy's, bit for bit); on traced inputs it is a
composition of primitives recording equations; on wrapped values (tape
``Variable`` s) it unwraps, computes, and wraps again.
"""
import functools
import inspect

import numpy as np

from .. import primitives as P
from ..core import Tracer, get_aval, is_concrete, is_inexact_dtype, python_scalar_dtype
from ..config import config
from ..errors import AutodiffError, ConcretizationError, DTypeError, NaNError, ShapeError
from ..core import user_source
from ..source_info import trace_state
from ..traceback_util import filter_traceback

_WRAP_HOOKS = []   # classes with __autodiff_array__ / __autodiff_wrap__ (the tape's Variable)


# types that are never traced nor wrapped: skip the attribute probes below (tracing speed)
_PLAIN_TYPES = {np.ndarray, float, int, bool, complex, str, type(None), slice, type(Ellipsis),
                np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
                np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.dtype}


def value_kind(x):
    """0 plain, 1 traced, 2 wrapped (Variable)."""
    t = type(x)
    if t is Tracer:
        return 1
    if t in _PLAIN_TYPES:
        return 0
    if isinstance(x, Tracer):
        return 1
    if isinstance(x, (list, tuple)):
        k = 0
        for y in x:
            k = max(k, value_kind(y))
            if k == 2:
                return 2
        return k
    if hasattr(x, "__autodiff_array__"):
        return 2
    return 0


def _unwrap(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(y) for y in x) if not hasattr(x, "_fields") else x
    conv = getattr(x, "__autodiff_array__", None)
    return conv() if conv is not None else x


def _wrap_like(out, wrapper):
    if isinstance(out, Tracer):
        return wrapper(out)
    if isinstance(out, tuple):
        return tuple(_wrap_like(o, wrapper) for o in out)
    if isinstance(out, list):
        return [_wrap_like(o, wrapper) for o in out]
    return out


def _find_wrapper(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, (list, tuple)):
            w = _find_wrapper(a, {})
            if w is not None:
                return w
        elif hasattr(a, "__autodiff_array__"):
            return type(a).__autodiff_wrap__
    return None


def to_output(x):
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
    return x


def _numpy_keywords(np_fn):
    """The keyword names ``np_fn`` accepts, or None when it takes any (``**kwargs``, or no
    signature to read)."""
    try:
        params = inspect.signature(np_fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params if p.kind is not p.POSITIONAL_ONLY)


def npfunc(np_fn=None):
    """Decorator: numpy's own ``np_fn`` on plain inputs, the traced body otherwise.

    On plain inputs given a keyword numpy's function lacks (JAX's ``bincount(length=)``,
    ``reshape(newshape=)`` that numpy 2 dropped), the body runs on them instead.
    ``where=None`` means no mask (JAX's default), not numpy's all-false mask.
    """
    plain = _PLAIN_TYPES
    state = trace_state
    options = config._values        # read per call: debug_nans checks eager results too
    np_keywords = None if np_fn is None else _numpy_keywords(np_fn)

    def deco(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            # every anp call under a trace passes here (often twice: dot -> matmul): the
            # exact types Tracer and the plain ones are told apart without calling value_kind
            k = 0
            calls_user = False
            for a in args:
                t = a.__class__
                if t is Tracer:
                    k = 1
                elif t not in plain:
                    k = max(k, value_kind(a))
                    if k == 2:
                        break
                    calls_user = calls_user or _has_callable(a)
            if kwargs and k < 2:
                for a in kwargs.values():
                    k = max(k, value_kind(a))
                    if k == 2:
                        break
                    calls_user = calls_user or _has_callable(a)
            if k == 0:
                if "where" in kwargs and kwargs["where"] is None:
                    # JAX's "no mask"; numpy reads where=None as an all-false mask
                    # (np.sum(x, where=None) is 0) or raises (np.mean)
                    kwargs = {n: v for n, v in kwargs.items() if n != "where"}
                if np_fn is not None and (np_keywords is None or not kwargs
                                          or np_keywords.issuperset(kwargs)):
                    out = np_fn(*args, **kwargs)
                else:
                    out = _tree_out(f(*args, **kwargs))
                if options["debug_nans"]:
                    _check_eager_nans(getattr(np_fn, "__name__", None) or f.__name__, out)
                return out
            if k == 2:
                wrap = _find_wrapper(args, kwargs)
                out = f(*_unwrap(args), **{n: _unwrap(v) for n, v in kwargs.items()})
                return _wrap_like(out, wrap)
            if state.source is not None or calls_user:
                return f(*args, **kwargs)
            # the user's line, found once for every equation this call records (bind would
            # walk the same frames per equation: a dot, a mean, a broadcast add emit several);
            # not when the call runs user code (piecewise's functions): their own lines count
            state.source = user_source(2)
            try:
                return f(*args, **kwargs)
            except AutodiffError as e:     # a public boundary (autodiff.traceback_util)
                filter_traceback(e)
                raise
            finally:
                state.source = None
        wrapper.__wrapped_numpy__ = np_fn
        return wrapper
    return deco


def _check_eager_nans(name, out):
    """``debug_nans`` on a plain (eager) call: a NaN in a floating result raises at the
    user's line, as JAX checks every operation it runs op by op."""
    for o in (out if isinstance(out, (tuple, list)) else (out,)):
        kind = getattr(getattr(o, "dtype", None), "kind", None)
        if kind in ("f", "c") and np.isnan(o).any():
            raise NaNError(f"debug_nans: autodiff.numpy.{name} produced NaN",
                           source=user_source())


def _has_callable(a):
    if isinstance(a, (list, tuple)):
        return any(_has_callable(x) for x in a)
    return callable(a) and not isinstance(a, type)


def _tree_out(out):
    if isinstance(out, tuple):
        return tuple(_tree_out(o) for o in out)
    if isinstance(out, list):
        return [_tree_out(o) for o in out]
    return to_output(out)


# ----------------------------------------------------------------------------
# conversion, promotion, broadcasting
# ----------------------------------------------------------------------------

def is_python_scalar(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def asarray(x, dtype=None):
    """A traced value or numpy array (lists, tuples and scalars converted like numpy)."""
    if isinstance(x, Tracer):
        return x if dtype is None else P.convert(x, dtype)
    if isinstance(x, (list, tuple)) and value_kind(x) == 1:
        parts = [asarray(y) for y in x]
        dt = result_type(*parts) if dtype is None else np.dtype(dtype)
        parts = [P.convert(p, dt) if not is_python_scalar(p) else np.asarray(p, dt) for p in parts]
        parts = [P.expand_dims(p, (0,)) if isinstance(p, Tracer) else np.asarray(p)[None] for p in parts]
        return P.concatenate([_const_if_needed(p) for p in parts], 0)
    conv = getattr(x, "__autodiff_array__", None)
    if conv is not None:
        return asarray(conv(), dtype)
    a = np.asarray(x, dtype=dtype)
    if a.dtype.kind not in "biufc":
        get_aval(a)          # raises DTypeError / UnsupportedError
    return a


def _const_if_needed(p):
    return p


def concrete_for_size(x, what):
    """The value of ``x`` (numpy's, or a traced array's when it has one) for a result whose
    size depends on the data; ``ConcretizationError`` naming ``what`` under ``jit``."""
    if isinstance(x, Tracer):
        if not is_concrete(x):
            raise ConcretizationError(
                f"{what}: the result's size depends on the values of a traced array; pass "
                "size=... (and fill_value=...) to fix it", source=user_source())
        return np.asarray(x.concrete_value(what))
    return np.asarray(x)


def dtype_of(x):
    if is_python_scalar(x):
        return python_scalar_dtype(x)
    if isinstance(x, Tracer):
        return x.aval.dtype
    return np.asarray(x).dtype


def _fast_result_type(xs):
    """The common case without numpy's promotion machinery: operands of one dtype,
    plus Python scalars that do not promote it (None when it does not apply)."""
    dt = None
    pys = False
    for x in xs:
        t = type(x)
        if t is Tracer:
            if x.aval.weak_type:
                return None      # a Python number passed to jit: weak, see result_type
            d = x.aval.dtype
        elif t is np.ndarray:
            d = x.dtype
        elif t is float or t is int:
            pys = True
            continue
        else:
            return None
        if dt is None:
            dt = d
        elif d != dt:
            return None
    if dt is None or (pys and dt.kind not in "fc"):
        return None        # int/bool arrays with Python scalars: numpy's value-based rules
    return dt


_WEAK_STAND_IN = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def result_type(*xs):
    """numpy's promotion, with Python scalars weak (NEP 50)."""
    dt = _fast_result_type(xs)
    if dt is not None:
        return dt
    args = []
    for x in xs:
        if is_python_scalar(x):
            args.append(x)
        elif isinstance(x, Tracer):
            # a weakly typed tracer (a Python number that was a jit or jvp argument) promotes
            # like the Python number it stands for: f32 array * 2.0 stays f32 (NEP 50)
            a = x.aval
            args.append(_WEAK_STAND_IN.get(a.dtype.kind, a.dtype) if a.weak_type and not a.shape
                        else a.dtype)
        elif isinstance(x, (np.ndarray, np.generic)):
            args.append(x.dtype)
        elif isinstance(x, (type, str, np.dtype)) or isinstance(getattr(x, "dtype", None),
                                                                 np.dtype):
            # dtype-likes, as numpy takes them: result_type(float, z.dtype), "float32",
            # np.float32, anp.float32
            args.append(np.dtype(getattr(x, "dtype", x)) if not isinstance(x, type)
                        else np.dtype(x))
        else:
            args.append(np.asarray(x).dtype)
    try:
        return np.result_type(*args)
    except TypeError as e:
        raise DTypeError(str(e), source=user_source()) from None


def float_type(dt):
    """The inexact dtype an elementwise float function computes in (numpy: ints -> float64;
    float and complex dtypes are kept)."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        return dt
    if dt.kind == "c":
        return dt
    return np.dtype(np.float64)


def as_float(x):
    """``x`` as an array of its floating dtype (``float_type``: integers and bools become
    float64, floats and complex numbers keep theirs)."""
    x = asarray(x)
    return P.convert(x, float_type(dtype_of(x)))


def shape_of(x):
    if isinstance(x, Tracer):
        return x.aval.shape
    if isinstance(x, (np.ndarray, np.generic)):
        return x.shape
    return np.shape(x)


def ndim(x):
    return len(shape_of(x))


def broadcast_shapes(*shapes):
    full = None
    for s in shapes:               # fast path: equal shapes, or rank-0 next to one shape
        if s and s != full:
            if full is not None:
                break
            full = s
    else:
        return tuple(full) if full is not None else ()
    out = _broadcast_ints(shapes)
    if out is None:
        raise ShapeError(f"operands could not be broadcast together with shapes "
                         f"{' '.join(str(tuple(s)) for s in shapes)}", source=user_source())
    return out


def _broadcast_ints(shapes):
    """numpy's broadcasting of shapes (tuples of ints), or None when they do not broadcast;
    in Python (np.broadcast_shapes builds arrays: microseconds per call, on every traced
    binary op between different shapes)."""
    n = max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        off = n - len(s)
        for i, d in enumerate(s):
            d = int(d)
            o = out[off + i]
            if d != o:
                if o == 1:
                    out[off + i] = d
                elif d != 1:
                    return None
    return tuple(out)


def broadcast_to(x, shape):
    shape = tuple(int(s) for s in shape)
    xs = shape_of(x)
    if xs == shape:
        return x
    if len(xs) > len(shape) or _broadcast_ints((xs, shape)) != shape:
        raise ShapeError(f"cannot broadcast shape {xs} to {shape}", source=user_source())
    lead = len(shape) - len(xs)
    return P.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def promote(*xs, to_float=False):
    """Cast to the common dtype (Python scalars weak); returns arrays/tracers/scalars."""
    dt = result_type(*xs)
    if to_float:
        dt = float_type(dt)
    out = []
    for x in xs:
        if type(x) is Tracer:
            out.append(x if x.aval.dtype == dt else P.convert(x, dt))
        elif is_python_scalar(x):
            out.append(dt.type(x))
        elif isinstance(x, Tracer):
            out.append(P.convert(x, dt))
        else:
            a = np.asarray(x)
            out.append(a.astype(dt) if a.dtype != dt else a)
    return out


# The exact types the fast paths take as traced values: Tracer, and the tape's Variable
# (autodiff/tape.py adds it), whose arithmetic would otherwise always take the slow path.
FAST_TRACED_TYPES = {Tracer}


def fast_pair(x1, x2):
    """Operands of a binary elementwise op that need no promotion or broadcasting: a
    float tracer with a tracer or a plain numpy array of the same shape and dtype, or with
    a Python number (weak, it takes the tracer's dtype). None otherwise. Most traced
    arithmetic is this."""
    t1, t2 = type(x1), type(x2)
    traced = FAST_TRACED_TYPES
    if t1 in traced:
        a = x1.aval
        if a.dtype.kind == "f":
            if t2 in traced:
                b = x2.aval
                if b.shape == a.shape and b.dtype == a.dtype:
                    return x1, x2
            elif t2 is float or t2 is int:
                return x1, a.dtype.type(x2)
            elif t2 is np.ndarray and t1 is Tracer and x2.dtype == a.dtype and \
                    x2.shape == a.shape:
                return x1, x2                 # a constant array (bind lifts it)
    elif t2 in traced:
        b = x2.aval
        if b.dtype.kind == "f":
            if t1 is float or t1 is int:
                return b.dtype.type(x1), x2
            if t1 is np.ndarray and t2 is Tracer and x1.dtype == b.dtype and \
                    x1.shape == b.shape:
                return x1, x2
    return None


def elementwise_args(*xs, to_float=False):
    """Promote and broadcast operands for an elementwise primitive.

    Rank-0 operands are left rank-0 (primitives broadcast them); others are
    broadcast to the common shape.
    """
    xs = promote(*xs, to_float=to_float)
    shapes = [shape_of(x) for x in xs]
    if all(s == shapes[0] for s in shapes):
        return xs
    full = broadcast_shapes(*shapes)
    out = []
    for x, s in zip(xs, shapes):
        if s == full or (len(s) == 0 and not isinstance(x, Tracer)):
            out.append(x)
        elif len(s) == 0 and isinstance(x, Tracer):
            out.append(x if full == () else broadcast_to(x, full))
        else:
            out.append(broadcast_to(x, full))
    if full != () and all(shape_of(x) == () for x in out):
        out[0] = broadcast_to(out[0], full)
    return out


def normalize_axis(axis, nd):
    a = int(axis)
    if not -nd <= a < max(nd, 1):
        from numpy.exceptions import AxisError
        raise AxisError(f"axis {axis} is out of bounds for array of dimension {nd}")
    return a % max(nd, 1)


def normalize_axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(normalize_axis(a, nd) for a in axis))
    return (normalize_axis(axis, nd),)
