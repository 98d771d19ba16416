"""The kernel plan: what the planner (``backends/plan.py``) hands an emitter.

:meth:`~autodiff.backends.plan.Planner.plan` returns a :class:`KernelPlan`: the loop nests
(:class:`Cluster`) in order, the :class:`Statement` records placed before and between them,
a ref for each result and every value's location. An emitter renders it in its target's
language (``numba_emitter.NumbaFunction.statement_lines`` and each target's
``emit_cluster``); nothing in it is target text except names and index expressions.

``jitted.lower(*args).plan`` is the plan of a jitted function's kernel:

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> low = ad.jit(lambda x: anp.sum(anp.exp(x)) * x[::-1]).lower(np.ones(5))
>>> print(low.plan.describe())
nest 0 over 1 dims: ew exp, reduce reduce_sum
nest 1 over 1 dims: ew mul
>>> low.plan.outputs[0][0], low.plan
('array', KernelPlan(2 nests, 0 statements))
"""
__all__ = ["KernelPlan", "Cluster", "Statement", "Opaque", "Reshape", "Materialize",
           "Unrolled", "ReduceGroups"]



class Cluster:
    """A loop nest over one iteration domain (a tuple of dimension classes): the plan's
    stage. ``members`` in order, each ``("ew", eqn)`` (an elementwise value),
    ``("identity", eqn)`` (a copy through a reduction over no axes), ``("reduce", eqn)`` (an
    accumulator of the nest) or ``("copy", var, name)`` (a view written to array
    ``name``); ``stored``: the fused values also written to arrays; ``stored_as``: values
    written straight into the layout of a permutation view of them; ``post``: the
    statements (:class:`Statement` records) that run right after the nest."""

    def __init__(self, pos, domain):
        self.pos = pos
        self.domain = domain
        self.members = []        # ("ew", eqn) | ("reduce", eqn) | ("copy", var, name)
        self.stored = set()      # fused vars also written to an array
        self.stored_as = {}      # fused var -> (array name, its var, index map): written
        #                          straight into the layout of a permutation view of it
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
    ``outputs``  one ref per result (None for a literal result)
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
            out.append(f"nest {c.pos} over {len(c.domain)} dims: " + ", ".join(parts))
            out.extend(f"then {stmt(s)}" for s in c.post)
        return "\n".join(out)

    def __repr__(self):
        return (f"KernelPlan({len(self.nests)} nests, "
                f"{len(self.entry) + sum(len(c.post) for c in self.nests)} statements)")
