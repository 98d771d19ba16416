"""Tiny values: a value of a few elements and constant shape is kept in scalar variables,
one per element, and the equations on it become straight-line code.

:class:`TinyValues` is the part of :class:`~autodiff.backends.plan.Planner` that plans them
(the planner inherits it): data movement among them renames elements, elementwise and
reduction equations over them are one statement per element, placed as early as their
operands exist. ``UNROLL_MAX`` bounds the elements of such a value and ``UNROLL_BUDGET`` the
element statements of one function. It works on the planner's state (``loc``, ``unrolled``,
``materialized``) through the planner's methods (``is_static``, ``domain``, ``realize``,
``store``, ``after``, ``place``, ``aname``, ``sname``, ``jlit``); what it places are the plan's
statement records (:class:`~autodiff.backends.kernel_plan.Materialize`, ``Unrolled``,
``ReduceGroups``), which the emitter renders.
"""
import numpy as np

from ..core import DropVar, Literal, Var
from .kernel_plan import Materialize, ReduceGroups, Unrolled

__all__ = ["TinyValues", "UNROLL_MAX", "UNROLL_BUDGET"]

# the most elements a value may have to be kept in scalar variables (see Planner.tiny), and
# the most element statements a function spends on them: unrolling saves the allocations
# and copies of tiny arrays (an ODE's 2-vector state), but a long computation on them
# (a PRNG's 20 rounds on 4 counters) is shorter as loops (measured: 8,242 lines and 18.8 s
# to compile unrolled without a budget)
UNROLL_MAX = 4
UNROLL_BUDGET = 512


class TinyValues:
    """The planner's methods for tiny values (see the module docstring)."""

    def tiny(self, v):
        """Element count of ``v`` if it is small and of constant shape, else 0."""
        if not isinstance(v, Var) or isinstance(v, DropVar) or not v.aval.shape:
            return 0
        if not all(self.is_static(c) for c in self.domain(v)):
            return 0
        n = int(np.prod(v.aval.shape))
        if not 0 < n <= UNROLL_MAX:
            return 0
        if self.unrolled >= UNROLL_BUDGET and not (v in self.loc and self.loc[v][0] == "elems"):
            return 0            # enough straight-line code in this function: loops again
        return n

    def elem(self, v, flat):
        """``(expression, readiness)`` of element ``flat`` (C order) of ``v``."""
        if isinstance(v, Literal):
            return self.jlit(v), 0
        self.realize(v)
        loc = self.loc[v]
        k = loc[0]
        if k == "elems":
            return loc[2][flat], loc[1]
        if k == "scalar":
            return loc[2], self.after(loc)
        if k == "fused":
            loc = self.store(v)
            k = "array"
        idx = [str(i) for i in np.unravel_index(flat, v.aval.shape)] if v.aval.shape else []
        if k == "array":
            return f"{loc[2]}[{', '.join(idx)}]", loc[1]
        base, imap = loc[1], loc[2]                # a view
        if base[0] == "scalar":
            return base[2], self.after(base)
        bidx = imap(idx) if imap is not None else idx
        return f"{base[2]}[{', '.join(bidx)}]", base[1]

    def materialize(self, v):
        """An array holding the unrolled value ``v`` (made once, where its elements exist)."""
        got = self.materialized.get(v)
        if got is None:
            _, ready, els = self.loc[v]
            name = self.aname(v)
            self.place(ready).append(Materialize(v, name, els))
            got = self.materialized[v] = ("array", ready, name, False)
        return got

    def plan_move_unrolled(self, e):
        """Data movement into a tiny value: which operand element each element is.

        The primitive's own numpy implementation, applied to arrays of element codes
        instead of values, answers that for every movement primitive alike.
        """
        o = e.outvars[0]
        ops = [u for u in e.invars]
        codes, starts, base = [], [], 0
        for k, u in enumerate(ops):
            n = int(np.prod(u.aval.shape)) if u.aval.shape else 1
            starts.append(base)                              # operand k's first element code
            if e.primitive.name == "pad" and k == 1:
                codes.append(np.array(-1, np.int64))       # the padding value
            else:
                codes.append((base + np.arange(n, dtype=np.int64)).reshape(u.aval.shape))
            base += n
        moved = np.asarray(e.primitive.impl(*codes, **e.params)).reshape(-1)
        els, ready = [], 0
        for code in moved.tolist():
            if code < 0:
                x, r = self.elem(ops[1], 0)
            else:
                k = int(np.searchsorted(starts, code, side="right")) - 1
                x, r = self.elem(ops[k], code - int(starts[k]))
            els.append(x)
            ready = max(ready, r)
        self.loc[o] = ("elems", ready, els)

    def plan_ew_unrolled(self, e):
        """An elementwise equation over a tiny value, or over scalars: straight-line code
        placed as early as its operands exist (so loops later on can read it)."""
        o = e.outvars[0]
        shape = o.aval.shape
        n = self.tiny(o) if shape else 1
        els, ready = [], 0
        cols, idxs = [], []
        for flat in range(n):
            args = []
            for u in e.invars:
                x, r = self.elem(u, flat if (isinstance(u, Var) and u.aval.shape) else 0)
                args.append(x)
                ready = max(ready, r)
            cols.append(args)
        if shape:
            self.unrolled += n
        for flat in range(len(cols)):
            idxs.append([str(i) for i in np.unravel_index(flat, shape)] if shape else [])
            els.append(f"{self.sname(o)}_{flat}" if shape else self.sname(o))
        self.place(ready).append(Unrolled(e, list(els), cols, idxs))
        self.loc[o] = ("elems", ready, els) if shape else ("scalar", ready, els[0])

    def plan_reduce_unrolled(self, e):
        u, o = e.invars[0], e.outvars[0]
        name = e.primitive.name
        axes = tuple(sorted(e.params["axes"]))
        shape = u.aval.shape
        codes = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        groups = np.moveaxis(codes, axes, tuple(range(len(shape) - len(axes), len(shape))))
        groups = groups.reshape(int(np.prod(o.aval.shape)) if o.aval.shape else 1, -1)
        kind = name[len("reduce_"):]
        dt_in, dt_out = u.aval.dtype, o.aval.dtype
        if dt_in == np.bool_:
            kind = {"sum": "or", "prod": "and"}.get(kind, kind)
        els, ready, pieces = [], 0, []
        for g, members in enumerate(groups.tolist()):
            xs = []
            for flat in members:
                x, r = self.elem(u, flat)
                xs.append(x)
                ready = max(ready, r)
            acc = f"{self.sname(o)}_{g}" if o.aval.shape else self.sname(o)
            pieces.append((acc, xs))
            els.append(acc)
        self.place(ready).append(ReduceGroups(e, kind, pieces, dt_in, dt_out))
        if o.aval.shape:
            self.loc[o] = ("elems", ready, els)
        else:
            self.loc[o] = ("scalar", ready, els[0])
