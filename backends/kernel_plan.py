"""The kernel plan: what the planner (``backends/plan.py``) hands an emitter.

:meth:`~autodiff.backends.plan.Planner.plan` returns a :class:`KernelPlan`: the loop nests
(:class:`Cluster`) in order, the :class:`Statement` records placed before and between them,
a ref for each result and every value's location. An emitter renders it in its target's
language (``numba_emitter.NumbaFunction.statement_lines`` and each target's
``emit_cluster``). Nothing in it is target text but names, sizes, and the expressions of
tiny values and of what index maps return (Python expression text: both targets write
Python).

``jitted.lower(*args).plan`` is the plan of a jitted function's kernel:

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> low = ad.jit(lambda x: anp.sum(anp.exp(x)) * x[::-1]).lower(np.ones(5))
>>> print(low.plan.describe())
nest 0 over 1 dims: ew exp, reduce reduce_sum
nest 1 over 1 dims: ew mul
>>> low.plan.outputs[0][0], low.plan
('array', KernelPlan(2 nests, 0 statements))
"""
import abc
from dataclasses import dataclass

__all__ = ["KernelPlan", "Cluster", "Statement", "Opaque", "Reshape", "Materialize",
           "Unrolled", "ReduceGroups", "IndexMap", "Broadcast", "Transpose", "Reverse", "Roll",
           "Offset", "Regroup", "Composed", "Row"]


class Cluster:
    """A loop nest over one iteration domain (a tuple of dimension classes): the plan's
    stage. ``members`` in order, each ``("ew", eqn)`` (an elementwise value),
    ``("identity", eqn)`` (a copy through a reduction over no axes), ``("reduce", eqn)`` (an
    accumulator of the nest) or ``("copy", var, name)`` (a view written to array
    ``name``, or into a row of stack ``name`` where ``row_writes`` has it); ``stored``:
    the fused values also written to arrays; ``stored_as``: values written straight into
    the layout of a permutation view of them; ``row_writes``: ``(var, stack, step)`` for
    each value of the nest (an elementwise value, a reduction's result, a copy) also
    written into row ``step`` of array ``stack`` (a host loop's body writing a per-step
    output into the caller's stack: ``CudaFunction.result_ref``); ``post``: the
    statements (:class:`Statement` records) that run right after the nest."""

    def __init__(self, pos, domain):
        self.pos = pos
        self.domain = domain
        self.members = []        # ("ew", eqn) | ("reduce", eqn) | ("copy", var, name)
        self.stored = set()      # fused vars also written to an array
        self.stored_as = {}      # fused var -> (array name, its var, index map): written
        #                          straight into the layout of a permutation view of it
        self.row_writes = []     # (var, stack name, step name): also written to a row
        self.post = []           # statements placed right after this stage
        self.cost = 0            # inlined code size so far (see LOOP_BUDGET)

    def __repr__(self):
        return f"Cluster({self.pos}, {self.domain}, {len(self.members)} members)"


class Statement:
    """A statement of the plan between loop nests: a record of what to compute, which
    the emitter renders in its target's language (``NumbaFunction.statement_lines``).
    Operands are refs (locations, see the module docstring); names are the emitter's
    identifiers. ``lines``, when set, is text the target already wrote while planning
    (the CUDA target does for a statement whose rule decides where a rank-0 result
    lives: see ``CudaFunction.plan_opaque``)."""

    __slots__ = ()
    lines = None
    what = "statement"     # its name in KernelPlan.describe()

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__
                           if k != "lines")
        return f"{type(self).__name__}({fields})"


class Opaque(Statement):
    """An opaque equation (a library call, control flow, a gather): its record's statement
    rule over operand ``refs`` and results ``outs`` (``(kind, name)`` pairs: "array",
    "scalar" or "drop")."""

    what = "opaque"
    __slots__ = ("eqn", "refs", "outs", "lines")

    def __init__(self, eqn, refs, outs):
        self.eqn, self.refs, self.outs, self.lines = eqn, refs, outs, None


class Reshape(Statement):
    """A reshape that moves elements: a new array of the contiguous operand ``ref``."""

    what = "reshape"
    __slots__ = ("eqn", "ref")

    def __init__(self, eqn, ref):
        self.eqn, self.ref = eqn, ref


class Materialize(Statement):
    """Array ``name`` holding tiny value ``var``, one expression per element (``els``)."""

    what = "materialize"
    __slots__ = ("var", "name", "els")

    def __init__(self, var, name, els):
        self.var, self.name, self.els = var, name, els


class Unrolled(Statement):
    """An elementwise equation over a tiny value (or scalars): one scalar ``names[k]`` per
    element, computed from operand expressions ``cols[k]`` at index ``idxs[k]``."""

    what = "unrolled"
    __slots__ = ("eqn", "names", "cols", "idxs")

    def __init__(self, eqn, names, cols, idxs):
        self.eqn, self.names, self.cols, self.idxs = eqn, names, cols, idxs


class ReduceGroups(Statement):
    """A reduction over a tiny value: accumulator ``acc`` of each ``(acc, xs)`` in
    ``groups`` combines element expressions ``xs`` by ``kind`` ("sum", "prod", "max",
    "min", "and", "or"), from ``dt_in`` to ``dt_out``."""

    what = "unrolled"
    __slots__ = ("eqn", "kind", "groups", "dt_in", "dt_out")

    def __init__(self, eqn, kind, groups, dt_in, dt_out):
        self.eqn, self.kind, self.groups = eqn, kind, groups
        self.dt_in, self.dt_out = dt_in, dt_out


class KernelPlan:
    """The plan of one generated function, as :meth:`Planner.plan` returns it:

    ``params``   the locations of the function's parameters (constants, then inputs)
    ``entry``    :class:`Statement` records that run before the first nest
    ``nests``    the stages in order: :class:`Cluster` loop nests, each followed by its
                 ``post`` statements
    ``outputs``  one ref per result (None for a literal result; ``("row", stack)`` for
                 one a nest writes into the caller's stack: ``Cluster.row_writes``)
    ``loc``      every value's location

    Nothing in it is target text but names and index expressions; an emitter renders it
    (``NumbaFunction.statement_lines``, the targets' ``emit_cluster``).
    :meth:`describe` prints it.
    """

    __slots__ = ("params", "entry", "nests", "outputs", "loc")

    def __init__(self, params, entry, nests, outputs, loc):
        self.params, self.entry, self.nests = params, entry, nests
        self.outputs, self.loc = outputs, loc

    def describe(self):
        """The plan as text, a line per nest and per statement::

            nest 0 over 2 dims: ew tanh, ew mul, reduce reduce_sum
            then opaque dot_general
        """
        def stmt(s):
            e = getattr(s, "eqn", None)
            what = type(s).what
            if e is None:
                return f"{what} {s.name}"
            return f"{what} {e.primitive.name}"
        out = [f"entry {stmt(s)}" for s in self.entry]
        for c in self.nests:
            parts = []
            for m in c.members:
                parts.append(f"copy {m[2]}" if m[0] == "copy"
                             else f"{m[0]} {m[1].primitive.name}")
            rows = sorted({st for _, st, _ in c.row_writes})
            out.append(f"nest {c.pos} over {len(c.domain)} dims: " + ", ".join(parts)
                       + (f"; into rows of {', '.join(rows)}" if rows else ""))
            out.extend(f"then {stmt(s)}" for s in c.post)
        return "\n".join(out)

    def __repr__(self):
        return (f"KernelPlan({len(self.nests)} nests, "
                f"{len(self.entry) + sum(len(c.post) for c in self.nests)} statements)")


# -------------------------------------------------------------------------------------
# Index maps: a view's location is ("view", base ref, index map). Calling the map with a
# view's index expressions (one per axis of the view) gives the base's; a map of None
# reads the base at the view's own indices.
# -------------------------------------------------------------------------------------

def parenthesized(expr):
    """``expr`` safe to embed in a larger expression (index maps compose)."""
    return expr if expr.isidentifier() or expr.isdigit() or (
        expr.startswith("(") and expr.endswith(")") and expr.count("(") == 1) else f"({expr})"


class IndexMap(abc.ABC):
    """A view's index map (see above); the records below are the views the planner
    makes, each a frozen dataclass, so a plan can be compared, hashed and pickled."""

    @abc.abstractmethod
    def __call__(self, I):
        """The base's index expressions for the view's ``I``."""


@dataclass(frozen=True)
class Broadcast(IndexMap):
    """``broadcast_in_dim``: operand axis ``k`` reads result axis ``axes[k]`` (None: the
    operand's size-1 axis, index 0).

    >>> Broadcast((None, 1))(["i", "j"])
    ['0', 'j']
    """
    axes: tuple

    def __call__(self, I):
        return ["0" if a is None else I[a] for a in self.axes]


@dataclass(frozen=True)
class Transpose(IndexMap):
    """``transpose`` by ``perm``: result axis ``k`` is operand axis ``perm[k]``.

    >>> Transpose((2, 0, 1))(["i", "j", "k"])
    ['j', 'k', 'i']
    """
    perm: tuple

    def __call__(self, I):
        X = [None] * len(self.perm)
        for k, pk in enumerate(self.perm):
            X[pk] = I[k]
        return X


@dataclass(frozen=True)
class Reverse(IndexMap):
    """``rev`` of axes ``dims`` (``sizes``: each axis' size text).

    >>> Reverse(frozenset({0}), ("5",))(["i"])
    ['(5 - 1 - i)']
    """
    dims: frozenset
    sizes: tuple

    def __call__(self, I):
        return [f"({self.sizes[d]} - 1 - {parenthesized(I[d])})" if d in self.dims else I[d]
                for d in range(len(I))]


@dataclass(frozen=True)
class Roll(IndexMap):
    """``roll`` of ``axis`` (size text ``n``) by ``shift``: ``out[i] = x[(i - shift) mod
    n]``, without a modulo (one compare and a select)."""
    axis: int
    n: str
    shift: str

    def __call__(self, I):
        i, n, s = parenthesized(I[self.axis]), self.n, self.shift
        return [f"({i} + ({n} - {s}) if {i} < {s} else {i} - {s})" if d == self.axis
                else I[d] for d in range(len(I))]


@dataclass(frozen=True)
class Offset(IndexMap):
    """``slice``: index ``starts[k] + i * strides[k]`` of each axis.

    >>> Offset(("2", "0"), (1, 3))(["i", "j"])
    ['(2 + i)', '(0 + j * 3)']
    """
    starts: tuple
    strides: tuple

    def __call__(self, I):
        return [f"({s} + {i})" if st == 1 else f"({s} + {parenthesized(i)} * {st})"
                for s, i, st in zip(self.starts, I, self.strides)]


@dataclass(frozen=True)
class Regroup(IndexMap):
    """A reshape that only adds or drops size-1 axes: view axis ``oa`` is operand axis
    ``ia`` for each ``(oa, ia)`` in ``pairs``; the operand's other axes (of size 1) read 0.

    >>> Regroup(((0, 1),), 2)(["i"])
    ['0', 'i']
    """
    pairs: tuple
    rank: int

    def __call__(self, I):
        X = ["0"] * self.rank
        for oa, ia in self.pairs:
            X[ia] = I[oa]
        return X


@dataclass(frozen=True)
class Composed(IndexMap):
    """A view of a view: ``outer`` maps the view's indices to the inner view's, and
    ``inner`` those to its base's.

    >>> Composed(Transpose((1, 0)), Offset(("1", "0"), (1, 1)))(["i", "j"])
    ['(1 + j)', '(0 + i)']
    """
    outer: IndexMap
    inner: IndexMap

    def __call__(self, I):
        return self.inner(self.outer(I))


@dataclass(frozen=True)
class Row(IndexMap):
    """Row ``step`` (a name) of a stack: the view's indices follow the step's. A host
    loop's body reads its step's slice of a ``scan``'s ``xs`` so, in place, from the
    whole stack and the step index (``CudaFunction.row_params``): no slice is made.

    >>> Row("_step")(["i", "j"])
    ['_step', 'i', 'j']
    """
    step: str

    def __call__(self, I):
        return [self.step, *I]
