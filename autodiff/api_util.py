"""The helper library of the transformation API: normalizing a user's inputs and outputs,
tracing a function of pytrees, argument bookkeeping (``argnums``, ``has_aux``, static
arguments), the dtype contract with complex numbers, and :class:`Transformed` (what every
function transform returns).

Everything above the tracer that takes a user's function uses these: the transforms in
:mod:`autodiff.api`, ``vmap``, the Jacobians, ``custom_jvp``/``custom_vjp``, callbacks,
``checkpoint``, ``jit``, ``jet`` and the numpy-level helpers.

>>> import numpy as np
>>> from autodiff.api_util import trace_fun
>>> from autodiff.tree_util import tree_flatten
>>> flat, tree = tree_flatten(((np.ones(2), 3.0),))
>>> closed, out_tree = trace_fun(lambda p: p[0] * p[1], flat, tree)
>>> closed.out_avals
[ShapedArray(f64[2])]
"""
import functools
import inspect
import types

import numpy as np

from .core import Tracer, Zero, eval_jaxpr, get_aval, is_concrete, trace_flat, user_source
from .errors import DTypeError
from .traceback_util import shown_error
from .tree_util import tree_flatten, tree_map, tree_unflatten
from .backends.interpreter import run_closed
from .pickling import reduce_transformed

__all__ = ["Transformed", "as_array", "to_output", "outputs", "evaluate", "is_py_number",
           "trace_fun", "as_tuple", "split_static", "aux_fun", "split_aux_tree", "argnums_split",
           "argnum_alias", "int_arg_name", "check_complex"]


class Transformed:
    """What the function transforms return: call it like the function it came from.

    It keeps the transform's recipe (``make(fun, **options)``) so that it pickles as that
    recipe (:mod:`autodiff.pickling`): ``grad(f)``, ``vmap(f)``, ``hessian(f)`` ... go to
    Dask workers and process pools, and the receiving side rebuilds them.

    >>> import pickle, numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> df = pickle.loads(pickle.dumps(ad.grad(anp.sum)))
    >>> df(np.ones(2))
    array([1., 1.])
    """

    def __init__(self, call, make, fun, options):
        functools.update_wrapper(self, fun, updated=())
        self._call = call
        self._make = make
        self._fun = fun
        self._options = options

    def __call__(self, *args, **kwargs):
        # a public boundary: errors leave without autodiff's frames (autodiff.traceback_util)
        try:
            return self._call(*args, **kwargs)
        except Exception as e:
            shown = shown_error(e)
            if shown is None:
                raise
            raise shown from None

    def __get__(self, obj, objtype=None):
        # bound like a function when it is a class attribute
        return self if obj is None else types.MethodType(self, obj)

    def __reduce__(self):
        return reduce_transformed(self, self._make, self._fun, (), self._options)

    def __repr__(self):
        return f"<{self._make.__name__} of {getattr(self._fun, '__name__', self._fun)!r}>"


#: converters of arrays in CUDA device memory made by other libraries (CuPy, PyTorch,
#: numba-cuda) to numpy: each returns None for anything else. ``autodiff.devices``
#: installs its own (it needs numba-cuda, a higher layer than this one).
FOREIGN_ARRAYS = []


def as_array(x):
    """Normalize a leaf given by the user: arrays, scalars, tracers, Variables."""
    if isinstance(x, Tracer):
        return x
    if isinstance(x, np.ndarray):
        get_aval(x)        # validates the dtype
        return x
    conv = getattr(x, "__autodiff_array__", None)
    if conv is not None:
        return conv()
    for conv in FOREIGN_ARRAYS:      # a CuPy, PyTorch or numba-cuda array: a host copy
        a = conv(x)
        if a is not None:
            return a
    get_aval(x)
    return np.asarray(x)


def to_output(x):
    """Concrete results are numpy values: an ndarray, or a numpy scalar when 0-d."""
    if isinstance(x, np.ndarray):
        return x[()] if x.ndim == 0 else x
    if isinstance(x, (Zero,)):
        return to_output(np.zeros(x.aval.shape, x.aval.dtype))
    return x


def outputs(tree):
    """``tree`` with every concrete leaf as :func:`to_output` makes it."""
    return tree_map(to_output, tree)


def evaluate(closed, args):
    """Run a closed jaxpr: interpreter on concrete values, ``bind`` (inlining) on tracers."""
    if any(isinstance(a, Tracer) for a in args) or any(isinstance(c, Tracer) for c in closed.consts):
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return run_closed(closed, args)


def is_py_number(x):
    """Whether ``x`` is a Python number (weakly typed: it promotes like the number)."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def trace_fun(fun, flat_args, in_tree, concrete=None, name="trace", kwargs=None, weak=None,
              differentiated=False):
    """Trace ``fun(*unflatten(in_tree, args))`` -> (ClosedJaxpr, out_tree).

    ``differentiated``: the arguments are what a derivative is taken with respect to (see
    ``tracing.trace_flat``: converting a value computed from them to a constant raises).

    ``weak``: one flag per argument, true where it was a Python number (its aval stays
    weakly typed, so it promotes like the number: see ``_base.result_type``)."""
    if concrete is None:
        concrete = all(is_concrete(a) for a in flat_args)
    avals = [get_aval(a).strip_weak() for a in flat_args]
    if weak is not None:
        avals = [a.update(weak_type=True) if w else a for a, w in zip(avals, weak)]
    box = []
    kwargs = kwargs or {}

    def flat_fun(*tracers):
        args = tree_unflatten(in_tree, list(tracers))
        out = fun(*args, **kwargs)
        leaves, out_tree = tree_flatten(out)
        box.append(out_tree)
        return [as_array(l) for l in leaves]

    closed = trace_flat(flat_fun, avals, list(flat_args) if concrete else None, name=name,
                        differentiated=differentiated)
    return closed, box[0]


def as_tuple(x):
    """``x`` as a tuple: ``()`` for None, a tuple or list as a tuple, anything else wrapped."""
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def split_static(fun, args, static_argnums):
    """``(f, dynamic_args)``: ``f(*dynamic_args)`` calls ``fun`` with the static arguments
    (positions ``static_argnums``, negative ones counted from the end) put back."""
    if not static_argnums:
        return fun, args
    n = len(args)
    static = {i % n: args[i] for i in static_argnums if -n <= i < n}

    def f(*dyn):
        it = iter(dyn)
        full = [static[i] if i in static else next(it) for i in range(n)]
        return fun(*full)
    return f, tuple(a for i, a in enumerate(args) if i not in static)


def aux_fun(fun, has_aux):
    """``fun``, checked to return a pair ``(output, aux)`` when ``has_aux``."""
    if not has_aux:
        return fun

    def f(*args):
        res = fun(*args)
        if not (isinstance(res, tuple) and len(res) == 2):
            raise TypeError("has_aux=True: the function must return a pair (output, aux)")
        return res
    return f


def split_aux_tree(out_tree, has_aux):
    """``(output tree, aux tree or None, number of output leaves)`` of a traced function's
    result structure."""
    if not has_aux:
        return out_tree, None, out_tree.num_leaves
    main, aux = out_tree.children
    return main, aux, main.num_leaves


def argnums_split(args, argnums):
    """``argnums`` as a tuple of non-negative positions into ``args`` (TypeError when one is
    out of range)."""
    n = len(args)
    nums = as_tuple(argnums)
    for i in nums:
        if not -n <= i < n:
            raise TypeError(f"argnums={argnums} but the function got {n} positional arguments")
    return tuple(i % n for i in nums)


def argnum_alias(argnums, argnum):
    """autograd spells it ``grad(fun, argnum=0)``: ``argnum`` wins when given."""
    return argnums if argnum is None else argnum


def int_arg_name(fun, args, nums, flat_pos):
    """``(" ('name')", position)`` of the differentiated argument holding leaf ``flat_pos``."""
    leaf_arg = []
    for i in nums:
        leaf_arg += [i] * len(tree_flatten(args[i])[0])
    i = leaf_arg[flat_pos] if flat_pos < len(leaf_arg) else nums[0]
    try:
        params = [p for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        name = f" ({params[i].name!r})" if i < len(params) else ""
    except (TypeError, ValueError):
        name = ""
    return name, i


def check_complex(who, holomorphic, in_dtypes=(), out_dtypes=(), real_in=False,
                  real_out=False):
    """The dtype contract of the derivative operators with complex numbers
    (docs/complex.md): with ``holomorphic=True`` every input and output must be complex;
    without it, ``real_in`` / ``real_out`` require real inputs (forward mode over a real
    basis) / real outputs (a real-valued function: ``grad``, ``jacrev``)."""
    kinds_in = [np.dtype(d).kind for d in in_dtypes]
    kinds_out = [np.dtype(d).kind for d in out_dtypes]
    if holomorphic:
        for what, ds, ks in (("inputs", in_dtypes, kinds_in), ("outputs", out_dtypes, kinds_out)):
            bad = [d for d, k in zip(ds, ks) if k != "c"]
            if bad:
                raise DTypeError(
                    f"{who}(holomorphic=True) requires complex {what}, got {np.dtype(bad[0])}; "
                    f"cast with x.astype(complex), or drop holomorphic=True for a function "
                    f"of real numbers", source=user_source())
        return
    if real_in and "c" in kinds_in:
        d = in_dtypes[kinds_in.index("c")]
        raise DTypeError(
            f"{who} requires real inputs, got {np.dtype(d)}: a forward-mode Jacobian pushes a "
            f"real basis. Pass holomorphic=True for a holomorphic function, use jacrev for a "
            f"real-valued one, or ad.jvp/ad.vjp directly for a general complex function",
            source=user_source())
    if real_out and "c" in kinds_out:
        d = out_dtypes[kinds_out.index("c")]
        raise DTypeError(
            f"{who} requires a real-valued function, it returned {np.dtype(d)}. Pass "
            f"holomorphic=True for a holomorphic function, take anp.real / anp.abs of the "
            f"output, or use ad.vjp directly for a general complex function",
            source=user_source())
