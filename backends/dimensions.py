"""Which array dimensions are equal by construction: the planner's dimension classes.

:class:`DimClasses` is a union-find over (variable, axis) pairs. Each class is one size: a
constant of a kernel specialized to its sizes, else one run-time slot of its size vector
(``backends/plan.py``). Every primitive's lowering record names its dimension rule
(``Lowering.dims``, called as ``rule(D, eqn)``): one of the rules here, ``no_dims`` (sizes
come from params), or a backend's own built with :func:`unify_axes`; an elementwise
primitive without one ties its equal-rank operands to its result.

>>> import numpy as np, autodiff as ad
>>> from autodiff.backends.dimensions import DimClasses
>>> from autodiff.backends.numba_cpu import LOWERINGS    # the records, with their rules
>>> jaxpr = ad.make_jaxpr(lambda x, y: x + y.T)(np.ones((2, 3)), np.ones((3, 2))).jaxpr
>>> D = DimClasses(LOWERINGS)
>>> for e in jaxpr.eqns:
...     D.unify_eqn(e)
>>> cx, cy = (D.classes(v) for v in jaxpr.invars)
>>> cx == cy[::-1]                  # x's rows are y's columns, x's columns y's rows
True
"""
from ..core import Var

__all__ = ["DimClasses", "unify_axes", "no_dims", "dim_bid", "dim_transpose", "dim_same",
           "dim_reduce", "dim_squeeze", "dim_expand", "dim_dot", "dim_concat", "dim_gather",
           "dim_index_gather", "dim_scatter", "dim_first_to_out", "dim_solve", "dim_slogdet",
           "dim_eigh", "dim_qr", "dim_svd"]



class DimClasses:
    """Union-find over (variable, axis) pairs; roots are the smallest id (deterministic).

    ``lowerings``: primitive name -> its lowering record, whose ``dims`` rule (or, for an
    elementwise primitive without one, equal-rank operands and result) says which
    dimensions of an equation are equal (:meth:`unify_eqn`)."""

    def __init__(self, lowerings):
        self.lowerings = lowerings
        self.parent = []
        self.value = []
        self.of = {}

    def dims(self, v):
        d = self.of.get(v)
        if d is None:
            d = []
            for s in v.aval.shape:
                d.append(len(self.parent))
                self.parent.append(len(self.parent))
                self.value.append(int(s))
            self.of[v] = d
        return d

    def find(self, i):
        p = self.parent
        while p[i] != i:
            p[i] = p[p[i]]
            i = p[i]
        return i

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            assert self.value[ra] == self.value[rb], "unifying dimensions of different sizes"
            lo, hi = min(ra, rb), max(ra, rb)
            self.parent[hi] = lo

    def classes(self, v):
        return tuple(self.find(i) for i in self.dims(v))

    def unify_eqn(self, e):
        name = e.primitive.name
        ins = [v for v in e.invars if isinstance(v, Var)]
        outs = list(e.outvars)
        for v in ins + outs:
            self.dims(v)
        low = self.lowerings.get(name)
        if low is None:
            return
        if low.dims is not None:
            low.dims(self, e)
        elif low.kind == "elementwise":
            o = outs[0]
            for v in ins:
                if len(v.aval.shape) == len(o.aval.shape):
                    for a, b in zip(self.dims(v), self.dims(o)):
                        self.union(a, b)


def unify_axes(D, v, i, w, j):
    """Axis ``i`` of ``v`` and axis ``j`` of ``w`` are one size (literals have no axes)."""
    if isinstance(v, Var) and isinstance(w, Var):
        D.union(D.dims(v)[i], D.dims(w)[j])


def dim_bid(D, e):
    x, o = e.invars[0], e.outvars[0]
    if not isinstance(x, Var):
        return
    for j, d in enumerate(e.params["broadcast_dimensions"]):
        if x.aval.shape[j] != 1:
            unify_axes(D, x, j, o, d)


def dim_transpose(D, e):
    x, o = e.invars[0], e.outvars[0]
    for k, p in enumerate(e.params["permutation"]):
        unify_axes(D, x, p, o, k)


def dim_same(D, e):
    x, o = e.invars[0], e.outvars[0]
    for i in range(len(o.aval.shape)):
        unify_axes(D, x, i, o, i)


def dim_reduce(D, e):
    x, o = e.invars[0], e.outvars[0]
    axes = e.params["axes"] if "axes" in e.params else (e.params["axis"],)
    kept = [i for i in range(len(x.aval.shape)) if i not in axes]
    for k, i in enumerate(kept):
        unify_axes(D, x, i, o, k)


def dim_squeeze(D, e):
    x, o = e.invars[0], e.outvars[0]
    kept = [i for i in range(len(x.aval.shape)) if i not in e.params["dimensions"]]
    for k, i in enumerate(kept):
        unify_axes(D, x, i, o, k)


def dim_expand(D, e):
    x, o = e.invars[0], e.outvars[0]
    new = [i for i in range(len(o.aval.shape)) if i not in e.params["dimensions"]]
    for k, i in enumerate(new):
        unify_axes(D, x, k, o, i)


def dim_dot(D, e):
    x, y = e.invars
    o = e.outvars[0]
    (xc, yc), (xb, yb) = e.params["dimension_numbers"]
    for a, b in zip(xc, yc):
        unify_axes(D, x, a, y, b)
    for k, (a, b) in enumerate(zip(xb, yb)):
        unify_axes(D, x, a, y, b)
        unify_axes(D, x, a, o, k)
    xf = [i for i in range(len(x.aval.shape)) if i not in xc and i not in xb]
    yf = [i for i in range(len(y.aval.shape)) if i not in yc and i not in yb]
    for k, i in enumerate(xf):
        unify_axes(D, x, i, o, len(xb) + k)
    for k, i in enumerate(yf):
        unify_axes(D, y, i, o, len(xb) + len(xf) + k)


def dim_concat(D, e):
    o = e.outvars[0]
    ax = e.params["dimension"]
    for x in e.invars:
        for i in range(len(o.aval.shape)):
            if i != ax:
                unify_axes(D, x, i, o, i)


def dim_gather(D, e):
    x, idx = e.invars
    o = e.outvars[0]
    k = idx.aval.shape[-1]
    lead = len(idx.aval.shape) - 1
    for i in range(lead):
        unify_axes(D, idx, i, o, i)
    for i in range(k, len(x.aval.shape)):
        unify_axes(D, x, i, o, lead + i - k)


def dim_index_gather(D, e):
    x, *idx = e.invars
    o = e.outvars[0]
    k, lead = len(idx), len(idx[0].aval.shape)
    for i in idx:
        for d in range(lead):
            unify_axes(D, i, d, o, d)
    for d in range(k, len(x.aval.shape)):
        unify_axes(D, x, d, o, lead + d - k)


def dim_scatter(D, e):
    x, idx, upd = e.invars
    o = e.outvars[0]
    dim_same(D, e)
    k = idx.aval.shape[-1]
    lead = len(idx.aval.shape) - 1
    for i in range(lead):
        unify_axes(D, idx, i, upd, i)
    for i in range(k, len(x.aval.shape)):
        unify_axes(D, x, i, upd, lead + i - k)
    del o


def dim_first_to_out(D, e):
    x, o = e.invars[0], e.outvars[0]
    for i in range(len(o.aval.shape)):
        unify_axes(D, x, i, o, i)


def dim_solve(D, e):
    a, b = e.invars[:2]
    o = e.outvars[0]
    for i in range(len(o.aval.shape)):
        unify_axes(D, b, i, o, i)
    for i in range(len(a.aval.shape) - 2):
        unify_axes(D, a, i, b, i)


def dim_slogdet(D, e):
    a = e.invars[0]
    for o in e.outvars:
        for i in range(len(o.aval.shape)):
            unify_axes(D, a, i, o, i)


def dim_eigh(D, e):
    a = e.invars[0]
    w, v = e.outvars
    for i in range(len(w.aval.shape)):
        unify_axes(D, a, i, w, i)
    for i in range(len(v.aval.shape)):
        unify_axes(D, a, i, v, i)


def _batch_and(D, e, ties):
    """The operand's batch axes tied to every result's, and ``ties``: (result, operand axis,
    result axis) of the matrix axes a result shares with the operand (negative axes)."""
    a = e.invars[0]
    nb = len(a.aval.shape) - 2
    for o in e.outvars:
        for i in range(nb):
            unify_axes(D, a, i, o, i)
    for k, ai, oi in ties:
        o = e.outvars[k]
        unify_axes(D, a, len(a.aval.shape) + ai, o, len(o.aval.shape) + oi)


def dim_qr(D, e):
    # Q (..., m, k), R (..., k, n): m and n are the operand's
    _batch_and(D, e, [(0, -2, -2), (1, -1, -1)])


def dim_svd(D, e):
    # [U (..., m, k), s (..., k), Vᴴ (..., k, n)] or [s]
    _batch_and(D, e, [(0, -2, -2), (2, -1, -1)] if len(e.outvars) == 3 else [])


def no_dims(D, e):
    """Results whose dimensions are not tied to an operand's (sizes come from params)."""
