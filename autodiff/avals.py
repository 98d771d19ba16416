"""Abstract values: :class:`ShapedArray` (shape, dtype, weak type) and the dtype rules of the IR."""
import math

import numpy as np

from .errors import DTypeError
from .source_info import user_source

__all__ = ["ShapedArray", "complex_dtype", "is_float_dtype", "is_inexact_dtype",
           "python_scalar_dtype", "real_dtype", "value_aval"]

# ----------------------------------------------------------------------------
# Abstract values
# ----------------------------------------------------------------------------

_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "int64": "i64", "int32": "i32",
          "int16": "i16", "int8": "i8", "uint8": "u8", "uint16": "u16", "uint32": "u32",
          "uint64": "u64", "bool": "bool", "complex128": "c128", "complex64": "c64"}


# shape tuple as given (ints, numpy integers) -> the same shape as a tuple of Python ints;
# numpy integers hash and compare like the ints they hold, so either spelling finds it
_canonical_shapes = {}


class ShapedArray:
    """Abstract value: shape, dtype, and whether the dtype is weak (from a Python scalar)."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type=False):
        # built once per traced value (several per equation): keep the common case (a tuple
        # of ints seen before, a np.dtype) to one dictionary lookup
        s = _canonical_shapes.get(shape) if shape.__class__ is tuple else None
        if s is None:
            s = tuple(map(int, shape))
            if shape.__class__ is tuple and len(_canonical_shapes) < 4096:
                _canonical_shapes[shape] = s
        self.shape = s
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak_type = weak_type if weak_type.__class__ is bool else bool(weak_type)
        self._hash = None

    ndim = property(lambda self: len(self.shape), doc="Number of dimensions.")
    size = property(lambda self: math.prod(self.shape), doc="Number of elements.")

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((self.shape, self.dtype, self.weak_type))
        return h

    def __reduce__(self):
        # the cached hash is not sent: it need not hold in another process
        return (ShapedArray, (self.shape, self.dtype, self.weak_type))

    def strip_weak(self):
        """The same aval without the weak-type flag."""
        return ShapedArray(self.shape, self.dtype) if self.weak_type else self

    def update(self, shape=None, dtype=None, weak_type=None):
        """A copy with ``shape``, ``dtype`` or ``weak_type`` replaced where given."""
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def str_short(self):
        """The short form used in printed jaxprs, e.g. ``f64[3,2]``."""
        dt = _SHORT.get(self.dtype.name, self.dtype.name)
        return f"{dt}[{','.join(map(str, self.shape))}]"

    __str__ = str_short

    def __repr__(self):
        return f"ShapedArray({self.str_short()}{', weak' if self.weak_type else ''})"


_scalar_avals = {}


def _scalar_aval(dtype, weak=False):
    """The (shared) aval of a scalar of ``dtype``: literals are made by the thousand."""
    key = (dtype, weak)
    a = _scalar_avals.get(key)
    if a is None:
        a = _scalar_avals[key] = ShapedArray((), dtype, weak)
    return a


def is_float_dtype(dtype):
    """Whether ``dtype`` is a real floating-point type."""
    return (dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)).kind == "f"


def is_inexact_dtype(dtype):
    """Whether ``dtype`` is floating-point or complex."""
    # the dtype's kind, not np.issubdtype (a microsecond per call on every grad)
    return (dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)).kind in "fc"


def real_dtype(dtype):
    """The dtype of the parts of a complex ``dtype`` (complex64 -> float32, complex128 ->
    float64); other dtypes unchanged."""
    dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    if dtype.kind != "c":
        return dtype
    return np.dtype(np.float32 if dtype == np.complex64 else np.float64)


def complex_dtype(dtype):
    """The complex dtype with parts of ``dtype`` (float32 -> complex64, other reals ->
    complex128, numpy's); complex dtypes unchanged."""
    dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    if dtype.kind == "c":
        return dtype
    return np.dtype(np.complex64 if dtype == np.float32 else np.complex128)


_VALID_KINDS = set("biufc")



def python_scalar_dtype(x):
    """The dtype a Python scalar ``x`` is traced as (``float`` -> float64, ``int`` -> int64,
    ``bool`` -> bool, ``complex`` -> complex128)."""
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, int):
        return np.dtype(np.int64)
    if isinstance(x, float):
        return np.dtype(np.float64)
    if isinstance(x, complex):
        return np.dtype(np.complex128)
    raise _bad_dtype(x)


def _bad_dtype(x):
    what = f"dtype {x.dtype}" if hasattr(x, "dtype") else f"type {type(x).__name__}"
    return DTypeError(
        f"expected a numeric array or scalar, got a value of {what}: {_short_repr(x)}. "
        f"Pass numbers as numpy arrays of a float, complex, int or bool dtype.", source=user_source())


def _short_repr(x):
    r = repr(x)
    return r if len(r) < 60 else r[:57] + "..."


def value_aval(x):
    """The abstract value of an array or a Python/numpy scalar (``get_aval`` also takes
    tracers)."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in _VALID_KINDS:
            raise _bad_dtype(x)
        return ShapedArray(x.shape, x.dtype)
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return ShapedArray((), python_scalar_dtype(x), weak_type=True)
    if isinstance(x, np.generic):
        if x.dtype.kind not in _VALID_KINDS:
            raise _bad_dtype(x)
        return ShapedArray((), x.dtype)
    raise _bad_dtype(x)
