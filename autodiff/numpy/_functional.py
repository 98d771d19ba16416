"""numpy's functional programming routines on traced values: ``apply_along_axis`` and
``vectorize`` (by ``vmap``), ``apply_over_axes`` and ``piecewise``.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.grad(lambda x: anp.sum(anp.apply_along_axis(anp.sum, 0, x * x)))(np.ones((2, 2)))
array([[2., 2.],
       [2., 2.]])
"""
import builtins
import re

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..api import vmap
from ..core import Tracer
from ._base import npfunc, asarray, shape_of, ndim, normalize_axis, dtype_of, value_kind


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """Apply ``func1d`` to 1-D slices along ``axis`` (by ``vmap`` over the other axes),
    ``numpy.apply_along_axis``."""
    traced_rows = kwargs.pop("_traced", False)
    if value_kind((arr, args)) == 0 and not traced_rows:
        return np.apply_along_axis(func1d, axis, arr, *args, **kwargs)
    arr = asarray(arr)
    nd = ndim(arr)
    ax = normalize_axis(axis, nd)
    moved = anp.moveaxis(arr, ax, -1)
    lead = shape_of(moved)[:-1]
    flat = anp.reshape(moved, (-1, shape_of(moved)[-1]))
    out = vmap(lambda row: asarray(func1d(row, *args, **kwargs)))(flat)
    out = anp.reshape(out, lead + shape_of(out)[1:])
    k = ndim(out) - len(lead)
    # numpy: the function's output axes replace the applied axis
    perm = list(range(ax)) + list(range(len(lead), len(lead) + k)) + list(range(ax, len(lead)))
    return anp.transpose(out, perm)


def _parse_signature(sig):
    ins, outs = sig.replace(" ", "").split("->")
    parse = lambda s: [tuple(d for d in g.split(",") if d) for g in re.findall(r"\(([^)]*)\)", s)]
    return parse(ins), parse(outs)


class vectorize:
    """``numpy.vectorize`` as JAX has it: ``pyfunc`` is traced once on the core shape and
    ``vmap``-ed over the broadcast loop dimensions (``excluded`` arguments pass through;
    ``signature`` like ``'(n),(n)->()'`` gives core dimensions)."""

    def __init__(self, pyfunc, otypes=None, doc=None, excluded=None, cache=False, signature=None):
        self.pyfunc = pyfunc
        self.excluded = set(excluded or ())
        self.signature = signature
        self.__doc__ = doc or getattr(pyfunc, "__doc__", None)
        self.__name__ = getattr(pyfunc, "__name__", "vectorized")

    def __call__(self, *args, **kwargs):
        excluded = {i for i in self.excluded if isinstance(i, int)}
        kw_static = {k: v for k, v in kwargs.items() if k in self.excluded}
        kw_dyn = {k: v for k, v in kwargs.items() if k not in self.excluded}
        names = list(kw_dyn)
        dyn_pos = [i for i in range(len(args)) if i not in excluded]
        dyn = [asarray(args[i]) for i in dyn_pos] + [asarray(kw_dyn[k]) for k in names]
        if self.signature is not None:
            core_in, _ = _parse_signature(self.signature)
            if len(core_in) != len(dyn):
                raise ValueError(f"vectorize: signature {self.signature!r} has {len(core_in)} inputs, "
                                 f"got {len(dyn)}")
            ncore = [len(c) for c in core_in]
        else:
            ncore = [0] * len(dyn)
        loops = [shape_of(x)[:ndim(x) - c] for x, c in zip(dyn, ncore)]
        batch = np.broadcast_shapes(*loops) if loops else ()

        def call(*d):
            full = list(args)
            for j, i in enumerate(dyn_pos):
                full[i] = d[j]
            kw = dict(kw_static)
            for j, k in enumerate(names):
                kw[k] = d[len(dyn_pos) + j]
            return self.pyfunc(*full, **kw)
        if not batch:
            return call(*dyn)
        size = builtins.int(np.prod(batch))
        flat = []
        for x, c in zip(dyn, ncore):
            core = shape_of(x)[ndim(x) - c:]
            x = anp.broadcast_to(x, batch + core)
            flat.append(anp.reshape(x, (size,) + core))
        out = vmap(call)(*flat)

        def unflat(o):
            return anp.reshape(o, batch + shape_of(o)[1:])
        if isinstance(out, tuple):
            return tuple(unflat(o) for o in out)
        return unflat(out)


@npfunc(np.piecewise)
def piecewise(x, condlist, funclist, *args, **kw):
    """``numpy.piecewise``: every function is evaluated on all of ``x`` and the pieces
    selected with ``where`` (so each must be defined everywhere it is traced)."""
    x = asarray(x)
    if isinstance(condlist, Tracer) and ndim(condlist) == ndim(x):
        condlist = [condlist]
    elif isinstance(condlist, (bool, np.bool_)) or (not isinstance(condlist, (list, tuple)) and ndim(condlist) == ndim(x)):
        condlist = [condlist]
    condlist = [anp.broadcast_to(asarray(c), shape_of(x)) for c in condlist]
    n = len(condlist)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    out = anp.zeros_like(x)
    if len(funclist) == n + 1:
        otherwise = anp.logical_not(anp.any(anp.stack(condlist), axis=0)) if n else anp.ones_like(x, dtype=bool)
        condlist = condlist + [otherwise]
    for c, f in zip(condlist, funclist):
        v = f(x, *args, **kw) if callable(f) else f
        out = anp.where(c, v, out)
    return P.convert(out, dtype_of(x)) if isinstance(out, Tracer) else out


def apply_over_axes(func, a, axes):
    """Apply ``func(a, axis)`` repeatedly, keeping dimensions (``numpy.apply_over_axes``)."""
    if value_kind(a) == 0:
        return np.apply_over_axes(func, a, axes)
    val = asarray(a)
    nd = ndim(val)
    for ax in np.atleast_1d(axes):
        ax = builtins.int(ax) % nd
        res = asarray(func(val, ax))
        if ndim(res) == ndim(val):
            val = res
        elif ndim(res) == ndim(val) - 1:
            val = anp.expand_dims(res, ax)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return val
