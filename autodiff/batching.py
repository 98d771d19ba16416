"""``vmap``: the batching transform's user API (in-axes and out-axes specs, their errors).

The batch rules live with their primitives; :mod:`autodiff.transforms.vmap` evaluates a
jaxpr with them. This module traces the user's function, checks the axis specs against the
arguments, and evaluates the batched program.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.vmap(lambda r: anp.dot(r, r))(np.arange(6.0).reshape(3, 2))
array([ 1., 13., 41.])
"""
import contextlib
import functools
import inspect
from typing import Any, Callable, Optional, ParamSpec, TypeVar

import numpy as np

from . import primitives as P
from .api_util import Transformed, as_array, outputs
from .config import config
from .core import current_trace, get_aval, trace_flat, user_source
from .errors import ConcretizationError, ShapeError
from .named_axes import AxisFrame, batching_axis, tracing_axis
from .transforms.partial_eval import dce_closed
from .transforms.vmap import batch_eval, matchaxis
from .tree_util import (broadcast_prefix, keystr, tree_flatten, tree_flatten_with_path,
                        tree_structure, tree_unflatten)
from .tree_util import tree_leaves

__all__ = ["vmap"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

# ----------------------------------------------------------------------------
# vmap
# ----------------------------------------------------------------------------

def _axes_spec_error(what, spec, detail):
    return ValueError(f"vmap: {what}={spec!r} {detail}. {what} is an int, None, or a pytree "
                      f"prefix of the {'arguments' if what == 'in_axes' else 'outputs'} with "
                      f"ints and Nones at its leaves.")


def _check_axes_leaves(spec, what):
    for d in tree_leaves(spec):
        if d is not None and (isinstance(d, bool) or not isinstance(d, (int, np.integer))):
            raise TypeError(f"vmap: {what} entries must be int or None, got {d!r}")


def _in_dims(in_axes, args):
    """One batch axis (int or None, not yet normalized) per flat leaf of ``args``."""
    spec = tuple(in_axes) if isinstance(in_axes, list) else in_axes
    if isinstance(spec, tuple):
        if len(spec) != len(args):
            raise _axes_spec_error(
                "in_axes", in_axes, f"has {len(spec)} entries but the function got {len(args)} "
                f"positional argument{'s' if len(args) != 1 else ''}")
    else:
        spec = (spec,) * len(args)
    _check_axes_keys(spec, tuple(args), "in_axes")
    try:
        return broadcast_prefix(spec, tuple(args))
    except ValueError as err:
        raise _axes_spec_error("in_axes", in_axes, f"does not match the arguments ({err})") \
            from None


def _check_axes_keys(spec, tree, what, path=""):
    """A dict in an axes spec must name exactly the keys of the dict it stands for (a
    misspelled key would otherwise map nothing, silently)."""
    if isinstance(spec, dict) and isinstance(tree, dict):
        if set(spec) != set(tree):
            unknown = sorted(map(repr, set(spec) - set(tree)))
            missing = sorted(map(repr, set(tree) - set(spec)))
            parts = ([f"unknown key(s) {', '.join(unknown)}"] if unknown else []) + \
                    ([f"missing key(s) {', '.join(missing)}"] if missing else [])
            raise _axes_spec_error(what, spec, f"at {path or 'the top level'} does not match the "
                                   f"argument's dict keys {sorted(map(repr, tree))}: "
                                   + "; ".join(parts))
        for k in spec:
            _check_axes_keys(spec[k], tree[k], what, f"{path}[{k!r}]")
    elif isinstance(spec, (tuple, list)) and isinstance(tree, (tuple, list)) \
            and len(spec) == len(tree) and not hasattr(spec, "_fields"):
        for i, (s_, t_) in enumerate(zip(spec, tree)):
            _check_axes_keys(s_, t_, what, f"{path}[{i}]")


def _leaf_owner(args):
    """For each flat leaf of ``args``: the index of the positional argument it belongs to."""
    owner = []
    for i, a in enumerate(args):
        owner.extend([i] * tree_structure(a).num_leaves)
    return owner


def _argument_names(fun, args):
    """A name for each flat leaf of ``args``, as JAX's vmap errors give them: the parameter's
    name when ``fun``'s signature can be read (``args[i]`` otherwise, ``xs[k]`` for
    ``*xs``), followed by the key path inside the argument (``params['w']``)."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [q.name for q in params
                  if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
    star = next((q.name for q in params if q.kind is q.VAR_POSITIONAL), None)

    def name(i):
        if i < len(positional):
            return positional[i]
        if star is not None:
            return f"{star}[{i - len(positional)}]"
        return f"args[{i}]"
    return [name(path[0].idx) + keystr(path[1:]) for path, _ in tree_flatten_with_path(args)[0]]


def _inconsistent_sizes(fun, args, flat, dims, axis_size):
    """The message of vmap's size mismatch, grouped by size as JAX's: which axis of which
    argument, of which type, has each size (computed only when the sizes disagree)."""
    names = _argument_names(fun, args)
    by_size = {}
    for name, x, d in zip(names, flat, dims):
        if d is None:
            continue
        a = get_aval(as_array(x))
        d = int(d) % len(a.shape)
        kind = f"{a.dtype.name}[{','.join(map(str, a.shape))}]"
        by_size.setdefault(a.shape[d], []).append(f"axis {d} of argument {name} of type {kind}")
    lines = []
    for size, where in sorted(by_size.items(), key=lambda kv: -len(kv[1])):
        if len(where) == 1:
            lines.append(f"one axis had size {size}: {where[0]}")
        else:
            shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
            lines.append(f"{len(where)} axes had size {size}: {shown}")
    if axis_size is not None:
        lines.append(f"axis_size={axis_size} was passed")
    return ("vmap got inconsistent sizes for array axes to be mapped:\n  * "
            + ";\n  * ".join(lines) + "\nEvery mapped axis needs the same size: map the "
            "arguments that differ with in_axes=None, or split the batch to match")


def _trace_unmapped(x):
    """Unmapped arrays are traced (so ``table[i]`` with a mapped ``i`` records a gather);
    scalars, other objects and outer tracers reach the function unchanged (so Python
    control flow on them works and Python numbers stay weakly typed)."""
    return (isinstance(x, np.ndarray) and x.ndim > 0) or hasattr(x, "__autodiff_array__")


def vmap(fun: Callable[_P, _R], in_axes: Any = 0, out_axes: Any = 0,
         axis_name: Any = None, axis_size: Optional[int] = None,
         spmd_axis_name: Any = None) -> Callable[_P, _R]:
    """Vectorizing map: ``fun`` applied along an axis of its arguments, as one batched program.

    ``in_axes`` / ``out_axes`` are an int (negative counts from the end), ``None``
    (not mapped: the same value for every batch element; numbers and other Python
    objects reach ``fun`` unchanged, so Python control flow on them works), or a
    pytree prefix of the arguments (a tuple with one entry per positional argument) /
    of the outputs. ``axis_size`` is needed only when no argument is mapped. Nested ``vmap``,
    ``vmap`` of ``grad`` (per-example gradients) and ``grad`` of ``vmap`` all work.

    ``axis_name`` names the mapped axis, so that the collectives of ``ad.lax`` (``psum``,
    ``pmean``, ``pmax``, ``all_gather``, ``ppermute``, ``axis_index``, ...) inside ``fun``
    compute across the batch, as under JAX's ``vmap``. ``spmd_axis_name`` (a sharding hint
    in JAX) is accepted and has nothing to do on one device.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.vmap(lambda x, y: x * y, in_axes=(0, None))(np.arange(3.0), 2.0)
    array([0., 2., 4.])
    >>> ad.vmap(anp.dot, in_axes=(1, None), out_axes=-1)(np.eye(2), np.ones((2, 3))).shape
    (3, 2)
    >>> w = np.ones(2); xs = np.arange(6.0).reshape(3, 2)
    >>> ad.vmap(ad.grad(lambda w, x: anp.sum(w * x) ** 2), in_axes=(None, 0))(w, xs)
    array([[ 0.,  2.],
           [20., 30.],
           [72., 90.]])
    >>> ad.vmap(lambda x: x / ad.lax.psum(x, "batch"), axis_name="batch")(np.ones(4))
    array([0.25, 0.25, 0.25, 0.25])
    """
    del spmd_axis_name
    _check_axes_leaves(in_axes, "in_axes")
    _check_axes_leaves(out_axes, "out_axes")
    if axis_size is not None and (isinstance(axis_size, bool) or int(axis_size) != axis_size
                                  or axis_size < 0):
        raise ValueError(f"vmap: axis_size must be a non-negative int, got {axis_size!r}")

    @functools.wraps(fun)
    def batched(*args, **kwargs):
        flat, in_tree = tree_flatten(args)
        dims = _in_dims(in_axes, args)
        owner = _leaf_owner(args)
        mapped, mdims, sizes = [], [], []
        traced = [d is not None or _trace_unmapped(x) for x, d in zip(flat, dims)]
        for i, (x, d) in enumerate(zip(flat, dims)):
            if d is None:
                if traced[i]:
                    flat[i] = as_array(x)
                    mapped.append(flat[i])
                    mdims.append(None)
                continue
            x = as_array(x)
            shape = P.shape_of(x)
            if not -len(shape) <= d < len(shape):
                raise ShapeError(
                    f"vmap: in_axes={d} is out of range for argument {owner[i]}, which has rank "
                    f"{len(shape)} (shape {shape}); a mapped argument needs an axis to map over",
                    source=user_source())
            d = int(d) % len(shape)
            flat[i] = x
            mapped.append(x)
            mdims.append(d)
            sizes.append(shape[d])
        distinct = set(sizes)
        if axis_size is not None:
            distinct.add(int(axis_size))
        if not distinct:
            raise ValueError("vmap: no argument is mapped (every in_axes is None); pass "
                             "axis_size to say how many copies to make")
        if len(distinct) > 1:
            raise ShapeError(_inconsistent_sizes(fun, args, flat, dims, axis_size),
                             source=user_source())
        size = distinct.pop()
        if axis_name is not None:      # the hidden mapped input: axis_index(axis_name)
            mapped.append(np.arange(size, dtype=np.int32))
            mdims.append(0)
        avals = []
        for x, d in zip(mapped, mdims):
            a = get_aval(x).strip_weak()
            avals.append(a if d is None else P.ShapedArray(a.shape[:d] + a.shape[d + 1:], a.dtype))
        box = []

        def flat_fun(*tracers):
            if axis_name is not None:
                *tracers, index = tracers
                frame = AxisFrame(axis_name, size, current_trace(), index)
                scope = tracing_axis(frame)
            else:
                scope = contextlib.nullcontext()
            it = iter(tracers)
            leaves = [next(it) if t else x for x, t in zip(flat, traced)]
            with scope:
                out = fun(*tree_unflatten(in_tree, leaves), **kwargs)
            out_leaves, out_tree = tree_flatten(out)
            box.append(out_tree)
            return [as_array(l) for l in out_leaves]

        try:
            closed = dce_closed(trace_flat(flat_fun, avals, None, name="vmap"))
        except ConcretizationError as err:
            if "Inside vmap" in str(err):          # already explained by an inner vmap
                raise
            raise ConcretizationError(
                str(err).split("\n  (at ")[0] + " Inside vmap a value computed from a mapped "
                "argument stands for the whole batch: it has no single concrete value to "
                "branch on or to hand to numpy. Use anp functions: anp.where or ad.lax.cond "
                "for branches, anp.take(a, i) to index a numpy array a with it (or pass a as "
                "an argument with in_axes=None).", source=err.source) from (
                    err if config.traceback_filtering == "off" else None)  # where it came from
        out_tree = box[0]
        with batching_axis(axis_name, size):
            outs, odims = batch_eval(closed.jaxpr, closed.consts, mapped, mdims)
        if out_axes is None or isinstance(out_axes, (int, np.integer)):
            want = [out_axes] * len(outs)
        else:
            try:
                want = broadcast_prefix(out_axes, tree_unflatten(out_tree, outs))
            except ValueError as err:
                raise _axes_spec_error("out_axes", out_axes, f"does not match the outputs "
                                       f"({err})") from None
        res = []
        for i, (o, d, w) in enumerate(zip(outs, odims, want)):
            what = f"output {i}" if len(outs) > 1 else "the output"
            if w is not None:
                nd = len(P.shape_of(o)) + (1 if d is None else 0)
                if not -nd <= w < nd:
                    raise ShapeError(f"vmap: out_axes={w} is out of range for {what}, whose "
                                     f"batched rank is {nd}", source=user_source())
                w = int(w) % nd
            res.append(matchaxis(o, d, w, size, what))
        return outputs(tree_unflatten(out_tree, res))
    return Transformed(batched, vmap, fun, dict(in_axes=in_axes, out_axes=out_axes,
                                                axis_name=axis_name, axis_size=axis_size))
