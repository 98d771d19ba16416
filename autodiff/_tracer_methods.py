"""Array behaviour of tracers: operators, indexing, methods, numpy's dispatch protocols.

:class:`ArrayMethods` is a base class of :class:`autodiff.core.Tracer`: every operator
and array method is defined here, on the class, when ``autodiff.core`` is imported;
nothing is patched onto ``Tracer`` later. Each dispatches to the ``autodiff.numpy``
function of the same meaning. The numpy layer sits above tracing, so this module never
imports it: ``autodiff.numpy`` installs itself as the implementation when it is imported
(:func:`install_array_namespace`, JAX's ``register_jax_array_methods`` in spirit, though
the methods stay on the class and only the namespace they call is installed).

``x op y`` binds the primitive directly when the operands need no promotion or
broadcasting (the namespace's ``fast_pair``: a float tracer with a tracer of the same shape
and dtype, or with a Python number), which is most of the arithmetic a traced function
runs; anything else takes the numpy function's full semantics. ``np.sin(tracer)`` and
``np.sum(tracer)`` work too: ``__array_ufunc__`` and ``__array_function__`` route numpy
calls to the ``autodiff.numpy`` function of the same name.

>>> import numpy as np, autodiff as ad
>>> ad.grad(lambda x: (x * x + 2.0 * x).sum())(np.array([1.0, 3.0]))   # 2x + 2
array([4., 8.])
>>> ad.grad(lambda x: np.sum(np.sin(x)))(np.zeros(2))                   # numpy's own sin
array([1., 1.])
"""
import inspect

import numpy as np

from .errors import AutodiffError, UnsupportedError
from .source_info import user_source
from .traceback_util import boundaries, filter_traceback

__all__ = ["ArrayMethods", "install_array_namespace", "array_namespace", "array_getitem"]


class _Installed:
    """What the numpy layer installed: its namespace and the three tools the operators use."""
    numpy = None        # the autodiff.numpy module
    fast_pair = None    # (x, y) -> operands to bind directly, or None
    getitem = None      # x[idx]
    at = None           # x.at: the functional-update indexer's class
    prims = None        # the primitives module (``add_p`` ...)
    ufuncs = {}         # numpy ufunc -> the primitive its fast path binds


def install_array_namespace(namespace, *, fast_pair, getitem, at_indexer, prims):
    """Make ``namespace`` (``autodiff.numpy``) the implementation of the tracers' operators
    and methods; ``prims`` is :mod:`autodiff.primitives`, whose arithmetic primitives the
    fast paths bind. Called once, by ``autodiff.numpy`` at the end of its import."""
    _Installed.numpy, _Installed.fast_pair = namespace, fast_pair
    _Installed.getitem, _Installed.at, _Installed.prims = getitem, at_indexer, prims
    _Installed.ufuncs = {np.add: prims.add_p, np.subtract: prims.sub_p,
                         np.multiply: prims.mul_p, np.true_divide: prims.div_p}


def array_namespace():
    """The installed ``autodiff.numpy`` (the package's import installs it before any use)."""
    anp = _Installed.numpy
    if anp is None:
        raise AutodiffError("autodiff.numpy is not imported yet: import autodiff first")
    return anp


_numpy = array_namespace


def array_getitem(x, idx):
    """``x[idx]`` with the numpy layer's indexing (``x`` an array or a tracer)."""
    return _Installed.getitem(x, idx)


_OPERAND_TYPES = (np.ndarray, np.generic, bool, int, float, complex)


def _defers(other):
    """Whether ``tracer op other`` answers ``NotImplemented`` so that Python asks ``other``
    (its reflected method, or the TypeError of an unsupported operand), as a JAX array
    does: anything but a tracer, a numpy array or scalar, a Python number, a plain list
    or tuple (array-likes, as numpy reads them) or an object with ``__array__`` /
    ``__jax_array__``. A NamedTuple or another class with its own operators wins."""
    t = type(other)
    if t is list or t is tuple or isinstance(other, (ArrayMethods,) + _OPERAND_TYPES):
        return False
    return not (hasattr(other, "__array__") or hasattr(other, "__jax_array__"))


def _binary(fn_name, prim_name=None):
    """``self op other`` -> ``autodiff.numpy.<fn_name>(self, other)``, binding primitive
    ``prim_name`` directly when :func:`fast_pair` says no promotion is needed."""
    fn = prim = fast_pair = None

    # each op is a public boundary (autodiff.traceback_util), written in: try is free
    if prim_name is None:
        def op(self, other):
            nonlocal fn
            try:
                if fn is None:
                    fn = getattr(_numpy(), fn_name)
                if _defers(other):
                    return NotImplemented
                return fn(self, other)
            except AutodiffError as e:
                filter_traceback(e)
                raise
    else:
        def op(self, other):
            nonlocal fn, prim, fast_pair
            try:
                if fn is None:
                    fn, prim = getattr(_numpy(), fn_name), getattr(_Installed.prims, prim_name)
                    fast_pair = _Installed.fast_pair
                pair = fast_pair(self, other)
                if pair is not None:
                    return prim.bind(*pair)
                if _defers(other):
                    return NotImplemented
                return fn(self, other)
            except AutodiffError as e:
                filter_traceback(e)
                raise
    op._autodiff_boundary = True
    return op


def _reflected(fn_name, prim_name=None):
    """``other op self`` (Python's ``__r<op>__``): the forward operator, operands swapped."""
    forward = _binary(fn_name, prim_name)

    def op(self, other):
        try:
            if _defers(other):
                return NotImplemented
            return forward(other, self)
        except AutodiffError as e:
            filter_traceback(e)
            raise
    op._autodiff_boundary = True
    return op


def _like(name):
    """The docstring of a tracer attribute: the ``numpy.ndarray`` attribute it follows."""
    ref = getattr(np.ndarray, name, None)
    if ref is None:
        return None
    # numpy's method docstrings open with the call signature ("a.sum(axis=None, ...)")
    lines = [ln.strip() for ln in (inspect.getdoc(ref) or "").split("\n")
             if ln.strip() and not ln.startswith(("a.", f"{name}("))]
    return f"Like ``numpy.ndarray.{name}``, on a traced value" + (
        f": {lines[0]}" if lines else ".")


def _method(name, fn_name=None):
    """``x.<name>(*a, **k)`` -> ``autodiff.numpy.<fn_name or name>(x, *a, **k)``."""
    fn_name = fn_name or name

    def method(self, *args, **kwargs):
        try:
            return getattr(_numpy(), fn_name)(self, *args, **kwargs)
        except AutodiffError as e:
            filter_traceback(e)
            raise
    method._autodiff_boundary = True
    method.__name__ = method.__qualname__ = name
    method.__doc__ = _like(name)
    return method


def _documented(fn):
    """``fn`` with the docstring of the ndarray attribute of the same name."""
    fn.__doc__ = fn.__doc__ or _like(fn.__name__)
    return fn


def _prop(fn):
    """A read-only property documented like the ndarray attribute of the same name."""
    return property(fn, doc=fn.__doc__ or _like(fn.__name__))


_UFUNC_NAMES = {"absolute": "absolute", "true_divide": "divide", "power": "power",
                "remainder": "mod", "conjugate": "conj"}


@boundaries     # a leaked tracer's error leaves these without autodiff's frames
class ArrayMethods:
    """Operators and ndarray methods of a traced value (a base of ``core.Tracer``)."""

    __slots__ = ()

    __add__ = _binary("add", "add_p")
    __sub__ = _binary("subtract", "sub_p")
    __mul__ = _binary("multiply", "mul_p")
    __truediv__ = _binary("divide", "div_p")
    __lt__ = _binary("less", "lt_p")
    __le__ = _binary("less_equal", "le_p")
    __gt__ = _binary("greater", "gt_p")
    __ge__ = _binary("greater_equal", "ge_p")
    __eq__ = _binary("equal", "eq_p")
    __ne__ = _binary("not_equal", "ne_p")
    __floordiv__ = _binary("floor_divide")
    __mod__ = _binary("mod")
    __pow__ = _binary("power")
    __matmul__ = _binary("matmul")
    __and__ = _binary("bitwise_and")
    __or__ = _binary("bitwise_or")
    __xor__ = _binary("bitwise_xor")
    __lshift__ = _binary("left_shift")
    __rshift__ = _binary("right_shift")

    __radd__ = _reflected("add", "add_p")
    __rsub__ = _reflected("subtract", "sub_p")
    __rmul__ = _reflected("multiply", "mul_p")
    __rtruediv__ = _reflected("divide", "div_p")
    __rfloordiv__ = _reflected("floor_divide")
    __rmod__ = _reflected("mod")
    __rpow__ = _reflected("power")
    __rmatmul__ = _reflected("matmul")
    __rand__ = _reflected("bitwise_and")
    __ror__ = _reflected("bitwise_or")
    __rxor__ = _reflected("bitwise_xor")
    __rlshift__ = _reflected("left_shift")
    __rrshift__ = _reflected("right_shift")

    def __neg__(self):
        return _numpy().negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _numpy().absolute(self)

    def __invert__(self):
        return _numpy().invert(self)

    def __divmod__(self, other):
        if _defers(other):
            return NotImplemented
        anp = _numpy()
        return anp.floor_divide(self, other), anp.mod(self, other)

    def __rdivmod__(self, other):
        if _defers(other):
            return NotImplemented
        anp = _numpy()
        return anp.floor_divide(other, self), anp.mod(other, self)

    def __round__(self, ndigits=None):
        return _numpy().round(self, ndigits or 0)

    def __getitem__(self, idx):
        return _Installed.getitem(self, idx)

    @_prop
    def T(self):
        return _numpy().transpose(self)

    @_prop
    def mT(self):
        return _numpy().swapaxes(self, -1, -2)

    @_prop
    def at(self):
        """Functional updates, as in JAX: ``x.at[idx].set(v)``, ``.add(v)``,
        ``.multiply(v)``, ``.min(v)``, ``.max(v)``, ``.get()`` return a new array; ``x``
        is unchanged. JAX's ``mode=`` ("clip", "drop"/"fill", "promise_in_bounds"),
        ``.get``'s ``fill_value=`` and the ``indices_are_sorted``/``unique_indices``
        hints are taken (see ``autodiff.numpy.at``)."""
        return _Installed.at(self)

    @_prop
    def real(self):
        return _numpy().real(self)

    @_prop
    def imag(self):
        return _numpy().imag(self)

    @_prop
    def flat(self):
        return _numpy().ravel(self)

    @_prop
    def itemsize(self):
        return self.aval.dtype.itemsize

    @_prop
    def nbytes(self):
        return self.aval.dtype.itemsize * self.aval.size

    @_documented
    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _numpy().reshape(self, shape)

    @_documented
    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _numpy().transpose(self, axes or None)

    @_documented
    def astype(self, dtype, copy=True):
        return _numpy().astype(self, dtype)

    @_documented
    def item(self):
        return self._constant_value("item()").item()

    @_documented
    def tolist(self):
        return self._constant_value("tolist()").tolist()

    @_documented
    def copy(self):
        return self

    @_documented
    def conj(self):
        return _numpy().conj(self)

    @_documented
    def conjugate(self):
        return _numpy().conj(self)

    sum = _method("sum")
    mean = _method("mean")
    prod = _method("prod")
    max = _method("max")
    min = _method("min")
    std = _method("std")
    var = _method("var")
    all = _method("all")
    any = _method("any")
    argmax = _method("argmax")
    argmin = _method("argmin")
    cumsum = _method("cumsum")
    cumprod = _method("cumprod")
    ravel = _method("ravel")
    flatten = _method("flatten", "ravel")
    squeeze = _method("squeeze")
    clip = _method("clip")
    dot = _method("dot")
    ptp = _method("ptp")
    ptp.__doc__ = "Peak to peak (maximum minus minimum) along ``axis``, as ``autodiff.numpy.ptp``."
    swapaxes = _method("swapaxes")
    repeat = _method("repeat")
    take = _method("take")
    trace = _method("trace")
    diagonal = _method("diagonal")
    nonzero = _method("nonzero")
    round = _method("round")
    sort = _method("sort")
    argsort = _method("argsort")
    choose = _method("choose")
    searchsorted = _method("searchsorted")
    argpartition = _method("argpartition")

    @_documented
    def compress(self, condition, axis=None, *, size=None, fill_value=0):
        try:       # numpy's argument order: the condition is compress's first argument
            return _numpy().compress(condition, self, axis, size=size, fill_value=fill_value)
        except AutodiffError as e:
            filter_traceback(e)
            raise
    compress._autodiff_boundary = True

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if len(inputs) == 2 and not kwargs and method == "__call__":
            # ``array - tracer`` (numpy calls this first): the operators' fast path when
            # the operands need no promotion or broadcasting
            prim = _Installed.ufuncs.get(ufunc)
            if prim is not None:
                pair = _Installed.fast_pair(*inputs)
                if pair is not None:
                    return prim.bind(*pair)
        if method in ("reduce", "accumulate", "outer", "reduceat") and (
                kwargs.get("out") is None):
            # numpy's ufunc method on a traced value: autodiff.numpy's (same arguments)
            fn = getattr(_numpy(), _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__), None)
            meth = getattr(fn, method, None)
            if meth is not None:
                kwargs.pop("out", None)
                return meth(*inputs, **kwargs)
        if method == "at":
            raise UnsupportedError(
                f"numpy.{ufunc.__name__}.at writes in place, which a traced value cannot "
                f"take: use a = autodiff.numpy.{ufunc.__name__}.at(a, indices, ...), which "
                f"returns the updated array", source=user_source())
        if method != "__call__" or kwargs.get("out") is not None:
            raise UnsupportedError(
                f"numpy.{ufunc.__name__}.{method} on a traced value is not supported; use "
                f"autodiff.numpy", source=user_source())
        fn = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
        f = getattr(_numpy(), fn, None)
        if f is None:
            raise UnsupportedError(f"numpy.{ufunc.__name__} has no autodiff.numpy equivalent yet",
                                   source=user_source())
        kwargs.pop("out", None)
        return f(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        anp = _numpy()
        target = anp.linalg if "linalg" in (func.__module__ or "") else anp
        f = getattr(target, func.__name__, None)
        if f is None or getattr(f, "__wrapped_numpy__", f) is func and not hasattr(f, "__wrapped_numpy__"):
            raise UnsupportedError(f"numpy.{func.__name__} has no autodiff.numpy equivalent yet; "
                                   f"it cannot take a traced value", source=user_source())
        return f(*args, **kwargs)
