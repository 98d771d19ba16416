"""The target-neutral planner: a finished jaxpr (transforms/passes.py) -> a kernel plan.

A backend lowers a jaxpr in two steps. The *planner* (this module) decides what every
value is and where every equation runs; an *emitter* (``numba_cpu_emitter.CpuFunction``
for Numba on the CPU) writes that plan in its target's language. The planner's decisions:

    dimensions    which array dimensions are equal by construction (union-find over each
                  primitive's dimension rule: ``backends/dimensions.py``); each class is
                  one size: a constant of the kernel when specialized, else a run-time
                  slot of the kernel's ``_sz`` vector
    fusion        elementwise equations over one iteration domain join one loop nest
                  (:class:`Cluster`, bounded by ``LOOP_BUDGET``); a reduction is an
                  accumulator of the nest computing its operand
    views         broadcast/transpose/slice/rev/roll/size-1 reshapes are index maps read inside
                  the consumer's loop; a view that only permutes a loop's value is stored
                  by that loop in the view's layout (:meth:`Planner.store_through`), in the
                  view's loop order (:meth:`Planner.loop_order`)
    tiny values   values of a few elements of constant shape live in scalars, one per
                  element ("elems"); data movement among them renames elements
                  (``backends/tiny_values.py``, a part of :class:`Planner`)
    generators    values computed from indices alone (``iota``, an identity basis) are
                  recomputed by each loop that reads them
    recompute     a cheap elementwise value of an earlier nest (``x - mean``) is recomputed
                  by a later nest that reads it, from the operands that nest can read,
                  rather than stored and read back (the CPU target; ``recompute_in``)
    opaque        everything else (BLAS, LAPACK, sorting, gathers, control flow) is a
                  statement block placed as early as its operands exist

Every value gets a *location* (``Planner.loc``)::

    ("array", ready, name, may_alias)   an array, existing from stage ``ready`` on
    ("scalar", ready, expr[, after])    a scalar expression
    ("fused", cluster)                  computed inside a loop nest (also stored when read
                                        outside it)
    ("view", base_ref, index_map)       an index map over another ref (a record of
                                        ``kernel_plan``: Broadcast, Transpose, Reverse,
                                        Roll, Offset, Regroup, Composed; None: the same
                                        indices)
    ("alias", var, eqn)                 a size-1 reshape/view of a fused value
    ("elems", ready, [expr, ...])       a tiny value, one expression per element
    ("gen", eqn)                        recomputed from loop indices

The plan is the list of stages (loop nests, each followed by the statements that can run
after it) plus these locations. Scalar and element expressions, and what index maps
return, are Python expression text (both Numba targets write Python); what the text
*says* beyond indexing and arithmetic comes from the emitter, a subclass of
:class:`Planner`. :meth:`Planner.plan` returns
the plan as a :class:`KernelPlan`: :class:`Cluster` loop nests with their members, and
:class:`Statement` records between them (:class:`Opaque` library calls and control flow,
:class:`Reshape`, and for tiny values :class:`Materialize`, :class:`Unrolled`,
:class:`ReduceGroups`), which the emitter renders afterwards. While planning, the planner
asks the emitter only for what decides the plan::

    code_size(e)            loop-budget units of an elementwise equation (fusion)
    jlit(v)                 a literal's text (it may take a slot of the sizes vector)

and a target may override a planning step (the CUDA target keeps rank-0 values that
device code computes in device buffers).

Every primitive has one :class:`Lowering` record in ``LOWERINGS``: its kind, dimension
rule and cost for the planner, and the Numba-CPU emitter's expression or statement rule
where its text is not the default. A primitive declared with lowering facts
(``p.lowering``, :class:`autodiff.primitives.LoweringFacts`: an elementwise or cumulative
primitive) has its record derived from them; the other records are registered by
``numba_cpu`` (which imports no Numba). The CUDA target keeps its own text records
(``numba_cuda_expressions``/``numba_cuda_statements``); docs/design.md, "Lowering
records", describes the whole shape.

>>> from autodiff.backends.plan import LOWERINGS
>>> LOWERINGS["transpose"].kind, LOWERINGS["exp"].kind, LOWERINGS["dot_general"].kind
('view', 'elementwise', 'opaque')
"""
import builtins
import keyword

import numpy as np

from ..core import DropVar, Literal, Var, eqn_effectful, primitives, var_namer
from ..errors import UnsupportedDTypeError, UnsupportedError
from .dimensions import DimClasses, dim_same
from .kernel_plan import (Broadcast, Cluster, Composed, KernelPlan, Offset, Opaque, Regroup,
                          Reshape, Reverse, Roll, Transpose, parenthesized)
from .tiny_values import TinyValues

__all__ = ["Planner", "Cluster", "KernelPlan", "Lowering", "LOWERINGS", "LOOP_BUDGET",
           "SUPPORTED_DTYPES", "REMAT_BEGIN", "REMAT_END",
           "register_lowering", "register_elementwise", "derived_lowering", "parenthesized"]


# =====================================================================================
# The lowering registry: one record per primitive
# =====================================================================================

class Lowering:
    """How one primitive is lowered. ``kind``, ``dims``, ``cost``, ``code_size``,
    ``bool_native``, ``moves`` and ``control`` are what the planner reads (the
    same for every target); ``expr`` and ``emit`` are the Numba-CPU emitter's text rules.

    ``kind``: "elementwise" (a scalar expression inside a fused loop), "view" (an index map
    read in place), "reshape", "reduce" (an accumulator of the loop over its operand),
    "opaque" (statements of their own: BLAS, LAPACK, sorting, control flow); call-like
    primitives have no record: the pass pipeline inlines them (transforms/passes.py)
    before a backend sees the program. ``expr(ctx, args)``: the scalar
    expression of an elementwise primitive; ``emit(ctx)``: the statements of an opaque one;
    ``dims(D, e)``: which operand and result dimensions are equal (elementwise primitives
    unify equal-rank operands with the result when it is None); ``cost``: work per element
    in units of an add (for prange); ``code_size``: code inlined per use when the
    vectorizable math of numba_math implements it (LOOP_BUDGET); ``bool_native``: its
    value is exactly a bool for bool results; ``moves``: pure data movement, which a tiny
    unrolled result computes by renaming elements; ``control``: carries sub-jaxprs that
    become functions of the module (its results may alias its operands).
    """

    __slots__ = ("name", "kind", "expr", "emit", "dims", "cost", "code_size", "bool_native",
                 "moves", "control")

    def __init__(self, name, kind, expr=None, emit=None, dims=None, cost=1, code_size=0,
                 bool_native=False, moves=False, control=False):
        self.name, self.kind, self.expr, self.emit, self.dims = name, kind, expr, emit, dims
        self.cost, self.code_size, self.bool_native = cost, code_size, bool_native
        self.moves, self.control = moves, control

    def __repr__(self):
        return f"Lowering({self.name!r}, {self.kind!r})"


def derived_lowering(name):
    """The record the lowering facts of primitive ``name`` give (``p.lowering``; see
    :class:`autodiff.primitives.LoweringFacts`), or None: an elementwise primitive is an
    ``"elementwise"`` record of its cost and code size, a cumulative one an ``"opaque"``
    statement over the shape of its operand. Its text is each backend's default unless the
    backend registers its own."""
    facts = getattr(primitives.get(name), "lowering", None)
    if facts is None:
        return None
    if facts.kind == "elementwise":
        return Lowering(name, "elementwise", cost=facts.cost, code_size=facts.code_size)
    if facts.kind == "cumulative":
        return Lowering(name, "opaque", dims=dim_same, cost=facts.cost)
    return None


class _Records(dict):
    """name -> :class:`Lowering`; a primitive declared after this module (an extension)
    gets its derived record at its first lookup."""

    def __missing__(self, name):
        rec = derived_lowering(name)
        if rec is None:
            raise KeyError(name)
        self[name] = rec
        return rec

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default


LOWERINGS = _Records()


def register_lowering(name, kind, **kw):
    """Declare primitive ``name``'s one lowering record (see :class:`Lowering`)."""
    LOWERINGS[name] = Lowering(name, kind, **kw)


def register_elementwise(name, expr=None, **kw):
    """An elementwise primitive's Numba-CPU record, for a primitive whose text is not the
    default its lowering facts give: ``expr(ctx, operand_texts) -> expression text`` (the
    emitter's; ``ctx.out_dtype`` and ``ctx.lit`` help), ``bool_native`` when it computes on
    bools directly; ``cost`` (weight in fusion decisions) and ``code_size`` (the text it
    adds) default to the facts'."""
    base = derived_lowering(name)
    if base is not None and base.kind == "elementwise":
        kw = {"cost": base.cost, "code_size": base.code_size, **kw}
    register_lowering(name, "elementwise", expr=expr, **kw)


_lowering, _ew = register_lowering, register_elementwise     # the registrations' short names


# Numba + LLVM compile time grows faster than linearly with the size of one loop body
# (measured: a 1000-equation elementwise chain fused into one loop took 229 s, 10 s with
# arithmetic only). A loop nest stops accepting equations once the code inlined into it
# reaches LOOP_BUDGET units (an add is 1; the vectorizable transcendentals of numba_math
# are inlined in full, sin/cos being the largest); later equations start a new nest and
# read the values crossing over from arrays.
LOOP_BUDGET = 160

# elementwise primitives whose values, computed from indices and literals only, loops
# recompute instead of reading (see Planner.plan_generator)
_GENERATOR_PRIMS = {"iota", "eq", "ne", "lt", "le", "gt", "ge", "convert_element_type",
                    "add", "sub", "mul", "select", "and", "or", "not", "neg"}
# elementwise primitives cheap enough that a later loop nest recomputes their value from its
# operands rather than reading it from an array the earlier nest stores (the stored array
# costs a write and a read of the whole value: on arrays larger than the caches that memory
# traffic, not the arithmetic, is the time). Planner.recompute_in decides.
_RECOMPUTE_PRIMS = {"add", "sub", "mul", "neg", "convert_element_type", "max", "min"}
# identifiers the generated code defines itself; a variable named like one gets a "_"
# the dtypes planned values may have (a target raises UnsupportedError for any other)
SUPPORTED_DTYPES = {np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.int16,
                                          np.int8, np.uint8, np.uint16, np.uint32, np.uint64,
                                          np.bool_, np.complex64, np.complex128)}
RESERVED = set(keyword.kwlist) | set(dir(builtins)) | {"np", "nb", "njit", "prange", "select"}


# The markers the pass pipeline brackets an inlined remat body with: its equations are
# recomputed where the backward pass needs them and must not be fused into loops that run
# earlier (that would save the value after all).
from ..transforms.passes import REMAT_BEGIN, REMAT_END  # noqa: E402


class Planner(TinyValues):
    """The plan of one generated function (the kernel, or a control-flow body).

    ``mod`` is the module being generated (sizes vector: ``slot(value)``, and the flags
    ``static``, ``dynamic_dims``, ``param_literals``); ``jaxpr`` a finished jaxpr (the
    output of transforms/passes.py's ``run_pipeline``). A subclass (the emitter) supplies
    the hooks listed in this module's docstring and calls :meth:`analyse`, then
    :meth:`plan`, and renders the :class:`KernelPlan` it returns.
    """

    def __init__(self, mod, jaxpr, name, top):
        self.mod = mod
        self.jaxpr = jaxpr
        self.name = name
        self.top = top
        self.D = DimClasses(LOWERINGS)
        self.names = {}
        self.loc = {}
        self.stages = []
        self.by_domain = {}
        self.entry_stmts = []        # statements before every stage (ready 0)
        self.view_copies = {}
        self.barriers = []           # stage positions remat bodies may not fuse before
        self.size_names = {}         # class root -> "n<k>"
        self.lit_names = {}          # id(Literal) -> "c<k>"
        self.param_size_names = []
        self.lit_reads = []
        self.dims_memo = {}
        self.domain_memo = {}
        self.static_roots = set()    # dimension classes with a constant size (see lower())
        #: a sub-function's ``(parameter index, axis)`` pairs whose sizes are run-time
        #: sizes in its caller (None: every size of a sub-function of a program with
        #: run-time sizes is one); the other parameter axes are constants
        self.param_dynamic = None
        #: the classes of run-time sizes that parameters bring (None: every class that is
        #: not a constant may be one); a loop body called from here is told which of its
        #: parameters' axes are such (``param_dynamic``)
        self.dyn_roots = None
        self.loop_memo = {}
        self.unrolled = 0            # element statements of unrolled values (UNROLL_BUDGET)
        self.materialized = {}       # unrolled value -> its array ref, once one was needed
        self.array_source = {}       # array name -> the fused var stored in it (store())
        self.n_uses = {}             # var -> how many equations and outputs read it
        self.producer = {}           # var -> the equation that computes it
        self.recomputed = set()      # fused vars a later nest recomputes (recompute_in)
        self.last_effect = 0         # where the latest effectful statement was placed
        self.slots_used = []
        self.ret_lines = []
        self.n_tmp = 0
        self.text = None

    def check_dtypes(self, backend, supported=SUPPORTED_DTYPES):
        """Refuse a program with a value of a dtype the kernels do not take, not in
        ``supported`` (``UnsupportedDTypeError``: jit runs that signature on the
        interpreter)."""
        j = self.jaxpr
        for v in list(j.constvars) + list(j.invars):
            if v.aval.dtype not in supported:
                raise UnsupportedDTypeError(
                    f"jit ({backend} backend): dtype {v.aval.dtype} is not supported")
        for e in j.eqns:
            for v in e.outvars:
                if v.aval.dtype not in supported:
                    raise UnsupportedDTypeError(
                        f"jit ({backend} backend): dtype {v.aval.dtype} (from "
                        f"{e.primitive.name}) is not supported", source=e.source)

    def analyse(self):
        """Names, use counts, dimension classes and which of them are constants: what
        planning needs to know before its first decision."""
        j = self.jaxpr
        self._name_all()
        for e in j.eqns:
            for u in e.invars:
                if isinstance(u, Var):
                    self.n_uses[u] = self.n_uses.get(u, 0) + 1
            for o in e.outvars:
                self.producer[o] = e
        for u in j.outvars:
            if isinstance(u, Var):
                self.n_uses[u] = self.n_uses.get(u, 0) + 1
        for e in j.eqns:
            self.D.unify_eqn(e)
        for v in list(j.constvars) + list(j.invars):
            self.D.dims(v)
        params = list(j.constvars) + list(j.invars)
        dyn = None
        if self.top and not self.mod.static and self.mod.dynamic_dims is not True:
            # partly dynamic: a class is constant when it holds a parameter dimension whose
            # size stays put and none that changed (sub-functions stay fully symbolic,
            # unless their caller says which of their parameters' axes are run-time sizes)
            dyn = {self.D.find(self.D.dims(j.invars[i])[ax]) for i, ax in self.mod.dynamic_dims
                   if i < len(j.invars) and ax < len(j.invars[i].aval.shape)}
            fixed = [d for v in params for d in self.D.dims(v)]
        elif not self.top and not self.mod.static and self.param_dynamic is not None:
            # a body whose caller says which parameter axes are run-time sizes: every other
            # class is a constant (a program's text holds its constants, and one lowered
            # for other sizes is other text, compiled anew: never a wrong size)
            dyn = {self.D.find(self.D.dims(params[i])[ax]) for i, ax in self.param_dynamic}
            fixed = range(len(self.D.parent))
        self.dyn_roots = dyn
        if dyn is not None:
            self.static_roots |= {r for r in map(self.D.find, fixed) if r not in dyn}
        # parameter sizes first, in order, so every function reads them the same way
        for v in list(j.constvars) + list(j.invars):
            self.dims(v)

    # ------------------------------------------------------------------ naming
    def _name_all(self):
        namer = var_namer()
        j = self.jaxpr
        order = list(j.constvars) + list(j.invars)
        for e in j.eqns:
            order.extend(e.outvars)
        for v in order:
            if isinstance(v, DropVar):
                continue
            n = namer(v)
            if n in RESERVED or n.upper() in RESERVED:
                n = n + "_"
            self.names[v] = n
        self.namer = namer

    def sname(self, v):
        return self.names[v]

    def aname(self, v):
        return self.names[v].upper()

    def tmp(self, prefix="t"):
        self.n_tmp += 1
        return f"_{prefix}{self.n_tmp}"

    # ------------------------------------------------------------------ sizes, literals
    def is_static(self, cls):
        """Whether the size of dimension class ``cls`` is a constant of this kernel."""
        return self.mod.static or cls in self.static_roots

    def size(self, cls):
        n = self.size_names.get(cls)
        if n is None:
            if self.is_static(cls):
                n = str(self.D.value[cls])
            else:
                k = self.mod.slot(self.D.value[cls])
                n = f"n{k}"
                self.slots_used.append(k)
            self.size_names[cls] = n
        return n

    def used_size_names(self):
        return set(self.size_names.values()) | set(self.param_size_names)

    def size_param(self, value):
        if self.mod.static:
            return str(int(value))
        k = self.mod.slot(value)
        self.slots_used.append(k)
        self.param_size_names.append(f"n{k}")
        return f"n{k}"

    def dims(self, v):
        got = self.dims_memo.get(v)
        if got is None:
            got = self.dims_memo[v] = [self.size(c) for c in self.domain(v)]
        return got

    # ------------------------------------------------------------------ planning helpers
    def loop_domain(self, v):
        """The iteration domain of a loop over ``v``: its dimension classes without the ones
        of constant size 1, so a value of shape (n, 1, m) fuses with one of shape (n, m)."""
        got = self.loop_memo.get(v)
        if got is None:
            got = self.loop_memo[v] = tuple(c for c in self.domain(v) if not self.is_unit(c))
        return got

    def is_unit(self, cls):
        return self.D.value[cls] == 1 and self.is_static(cls)

    def vidx(self, v, idx):
        """Index expressions for every axis of ``v`` from the loop indices ``idx`` of its
        loop domain (size-1 axes read index 0)."""
        it = iter(idx)
        return ["0" if self.is_unit(c) else next(it) for c in self.domain(v)]

    def domain(self, v):
        got = self.domain_memo.get(v)
        if got is None:       # (dimension classes are final once planning starts)
            got = self.domain_memo[v] = self.D.classes(v)
        return got

    def ready_of(self, v, dom):
        """Earliest stage position at which an equation over ``dom`` may read ``v``."""
        if isinstance(v, Literal):
            return 0
        loc = self.loc[v]
        k = loc[0]
        if k == "gen":
            return 0
        if k == "alias":
            return self.ready_of(loc[1], dom)
        if k == "fused":
            c = loc[1]
            return c.pos if c.domain == dom else c.pos + 1
        if k in ("array", "scalar", "elems"):
            return loc[1]
        if k == "view":
            return loc[1][1]
        raise AssertionError(loc)

    def find_cluster(self, dom, lo, cost=1):
        """The earliest loop nest over ``dom`` at or after stage ``lo`` with room for
        ``cost`` more (a new one at the end if none): the fusion decision."""
        if self.barriers:
            lo = max(lo, self.barriers[-1])
        for pos in self.by_domain.get(dom, ()):
            c = self.stages[pos]
            if pos >= lo and (c.cost + cost <= LOOP_BUDGET or not c.members):
                c.cost += cost
                return c
        c = Cluster(len(self.stages), dom)
        c.cost = cost
        self.stages.append(c)
        self.by_domain.setdefault(dom, []).append(c.pos)
        return c

    #: whether later loop nests recompute cheap fused values instead of reading them from
    #: arrays (the CPU target; see recompute_in)
    RECOMPUTE_ACROSS_NESTS = False

    def recompute_in(self, v, c, depth=2):
        """Whether cluster ``c`` recomputes the fused value ``v`` of an earlier nest from
        its operands instead of reading it stored (then it is marked, and no array is made
        for this read). Only a cheap elementwise value (``_RECOMPUTE_PRIMS``) over ``c``'s
        domain whose operands ``c`` can read itself: literals, arrays and views that exist
        when ``c`` runs, values computed from indices, and (``depth`` levels down) other
        such values. XLA duplicates cheap producers into their consumers the same way."""
        if not self.RECOMPUTE_ACROSS_NESTS or depth == 0 or not isinstance(v, Var):
            return False
        loc = self.loc.get(v)
        e = self.producer.get(v)
        if loc is None or loc[0] != "fused" or loc[1] is c or e is None \
                or e.primitive.name not in _RECOMPUTE_PRIMS or len(e.outvars) != 1 \
                or self.loop_domain(v) != c.domain:
            return False
        for u in e.invars:
            if isinstance(u, Literal):
                continue
            k = self.loc[u][0]
            if k == "gen":
                continue
            if k in ("array", "scalar", "view"):
                ready = self.after(self.loc[u]) if k == "scalar" else self.ready_of(u, c.domain)
                if ready > c.pos:
                    return False
                continue
            if k == "fused" and self.loc[u][1] is not c and self.recompute_in(u, c, depth - 1):
                continue
            return False
        self.recomputed.add(v)
        c.cost += self.code_size(e)
        return True

    def store(self, v):
        """Make a fused value also live in an array; returns its array ref."""
        c = self.loc[v][1]
        c.stored.add(v)
        self.array_source[self.aname(v)] = v
        return ("array", c.pos + 1, self.aname(v), False)

    def base_ref(self, v):
        """The value of ``v`` as an array/scalar ref (materializing fused values)."""
        if isinstance(v, Literal):
            return ("scalar", 0, self.jlit(v))
        self.realize(v)
        loc = self.loc[v]
        if loc[0] == "fused":
            return self.store(v)
        if loc[0] == "elems":
            return self.materialize(v)
        return loc

    @staticmethod
    def after(ref):
        """Readiness of a ref for a statement placed between stages."""
        if ref[0] == "view":                        # a view a rule reads in place
            return Planner.after(ref[1])
        return ref[3] if ref[0] == "scalar" and len(ref) > 3 else ref[1]

    def place(self, ready):
        """The statement list that runs right when values of readiness ``ready`` exist."""
        if ready <= 0:
            return self.entry_stmts
        return self.stages[ready - 1].post

    def ensure(self, v):
        """``v`` as an array (rank >= 1) or scalar ref, copying views into arrays."""
        if isinstance(v, Literal):
            return ("scalar", 0, self.jlit(v))
        self.realize(v)
        loc = self.loc[v]
        k = loc[0]
        if k == "fused":
            return self.store(v)
        if k == "elems":
            return self.materialize(v)
        if k == "view":
            got = self.view_copies.get(v) or self.store_through(v)
            if got is None:
                dom = self.loop_domain(v)
                c = self.find_cluster(dom, loc[1][1])
                name = self.aname(v)
                c.members.append(("copy", v, name))
                got = ("array", c.pos + 1, name, False)
                self.view_copies[v] = got
            return got
        return loc

    def store_through(self, v):
        """An array for view ``v`` written by the loop that computes its base, when the
        view only permutes axes (transpose, size-1 axes in or out) and the base has no
        other reader: the loop stores each element at its place in the view's layout, so
        the view costs neither a copy pass nor a second array (a Hessian's transposed
        output). Returns the array ref, or None."""
        _, base, imap = self.loc[v]
        src = self.array_source.get(base[2]) if base[0] == "array" else None
        if src is None or imap is None or self.n_uses.get(v, 0) != 1:
            return None
        u = v           # views and reshapes back to the base, each value read only once
        while u is not src:
            e = self.producer.get(u)
            if (e is None or LOWERINGS[e.primitive.name].kind not in ("view", "reshape")
                    or not isinstance(e.invars[0], Var) or self.n_uses.get(e.invars[0]) != 1):
                return None
            u = e.invars[0]
        c = self.loc[src][1]
        rank = len(v.aval.shape)
        marks = [f"\u00a7{k}" for k in range(rank)]
        bidx = imap(marks)
        where = {}
        for pos, x in enumerate(bidx):
            if x in marks and x not in where:
                where[x] = pos
            elif not (x == "0" and src.aval.shape[pos] == 1):
                return None                         # not a permutation of the base's axes
        if any(marks[k] not in where and v.aval.shape[k] != 1 for k in range(rank)):
            return None
        perm = [where.get(m) for m in marks]        # view axis -> base axis (None: size 1)
        c.stored.discard(src)
        name = self.aname(v)
        c.stored_as[src] = (name, v, perm)
        ref = ("array", c.pos + 1, name, False)
        self.view_copies[v] = ref
        return ref

    # ------------------------------------------------------------------ planning
    def param_loc(self, v, i):
        """Where parameter ``v`` (the ``i``-th) lives: arrays by name, scalars by value."""
        if v.aval.shape:
            return ("array", 0, self.aname(v), True)
        return ("scalar", 0, self.sname(v))

    def plan(self):
        """Plan every equation and the results: the :class:`KernelPlan` of this function."""
        j = self.jaxpr
        params = list(j.constvars) + list(j.invars)
        for i, v in enumerate(params):
            self.loc[v] = self.param_loc(v, i)
        for e in j.eqns:
            name = e.primitive.name
            low = LOWERINGS.get(name)
            kind = low.kind if low is not None else None
            if e.primitive is REMAT_BEGIN:
                self.barriers.append(len(self.stages))
            elif e.primitive is REMAT_END:
                self.barriers.pop()
            elif kind == "elementwise":
                if self.tiny(e.outvars[0]) or not e.outvars[0].aval.shape:
                    self.plan_ew_unrolled(e)
                elif not self.plan_generator(e):
                    self.plan_ew(e)
            elif low is not None and low.moves and self.tiny(e.outvars[0]) and self.can_unroll_move(e):
                self.plan_move_unrolled(e)
            elif kind in ("view", "reshape") and self.unit_alias(e):
                pass
            elif kind == "view":
                self.plan_view(e)
            elif kind == "reshape":
                self.plan_reshape(e)
            elif kind == "reduce":
                if self.tiny(e.invars[0]) and (not e.outvars[0].aval.shape
                                               or self.tiny(e.outvars[0])):
                    self.plan_reduce_unrolled(e)
                elif not e.params["axes"]:
                    if e.outvars[0].aval.shape:
                        self.plan_ew(e, copy=True)
                    else:
                        self.loc[e.outvars[0]] = self.base_ref(e.invars[0]) if isinstance(
                            e.invars[0], Var) else ("scalar", 0, self.jlit(e.invars[0]))
                else:
                    self.plan_reduce(e)
            elif kind == "opaque":
                self.plan_opaque(e)
            elif getattr(e.primitive, "call_like", False):
                raise UnsupportedError(
                    f"jit (cpu backend): the call-like primitive {name!r} reached the planner; "
                    f"lower the output of autodiff.transforms.passes.run_pipeline, which "
                    f"inlines it", source=e.source)
            else:
                raise UnsupportedError(
                    f"jit (cpu backend) has no lowering for primitive {name!r}; use "
                    f"backend='interpret' for this function", source=e.source)
        outputs = [self.result_ref(k, v) for k, v in enumerate(j.outvars)]
        return KernelPlan([self.loc[v] for v in params], self.entry_stmts, self.stages,
                          outputs, self.loc)

    def output_ref(self, v):
        """Where result ``v`` is read: None for a literal, a scalar ref for a rank-0 value,
        else an array ref (views and fused values get their arrays here)."""
        if isinstance(v, Literal):
            return None
        return self.ensure(v) if v.aval.shape else self.base_ref(v)

    def result_ref(self, k, v):
        """The ref of the ``k``-th result ``v`` (:meth:`output_ref`; a target may place a
        result elsewhere: the CUDA target writes a host loop's per-step output into the
        caller's stack)."""
        return self.output_ref(v)

    def operand_ref(self, e, u):
        """The ref opaque equation ``e`` reads operand ``u`` from (:meth:`ensure`: views
        are copied into arrays; a target whose rule for ``e`` reads some views in place
        returns those)."""
        return self.ensure(u)

    def plan_generator(self, e):
        """An elementwise value computed from indices and literals alone (``iota``, an
        identity basis): every loop that reads it recomputes it from its own indices, so
        it is never stored. Anything else that reads it realizes it (see realize)."""
        if e.primitive.name not in _GENERATOR_PRIMS or not all(
                isinstance(u, Literal) or (isinstance(u, Var) and self.loc[u][0] == "gen")
                for u in e.invars):
            return False
        if any(isinstance(u, Var) and self.loop_domain(u) != self.loop_domain(e.outvars[0])
               for u in e.invars):
            return False
        self.loc[e.outvars[0]] = ("gen", e)
        return True

    def plan_ew(self, e, copy=False):
        o = e.outvars[0]
        dom = self.loop_domain(o)
        for u in e.invars:
            if isinstance(u, Var) and self.loc[u][0] == "elems":
                self.materialize(u)
        lo = max([self.ready_of(u, dom) for u in e.invars], default=0)
        c = self.find_cluster(dom, lo, self.code_size(e))
        for u in e.invars:              # values of other loops are read from their arrays
            src = u
            while isinstance(src, Var) and self.loc[src][0] == "alias":
                src = self.loc[src][1]
            if isinstance(src, Var) and self.loc[src][0] == "fused" and self.loc[src][1] is not c \
                    and not self.recompute_in(src, c):
                self.store(src)
        c.members.append(("ew", e) if not copy else ("identity", e))
        if o.aval.shape:
            self.loc[o] = ("fused", c)
        else:   # readable inside this scalar cluster; statements elsewhere wait for its end
            self.loc[o] = ("scalar", c.pos, self.sname(o), c.pos + 1)

    def unit_alias(self, e):
        """A view or reshape that only adds or drops size-1 axes of a value computed in a
        loop: it has the same loop domain, so elementwise consumers read the value itself
        and fuse into its loop. Anything else that reads it gets the real view (realize)."""
        u, o = e.invars[0], e.outvars[0]
        if not (isinstance(u, Var) and u.aval.shape and o.aval.shape
                and self.loc[u][0] == "fused" and self.loop_domain(o) == self.loop_domain(u)):
            return False
        # Equal loop domains are not enough (a square matrix's transpose has the same
        # classes): the operand's non-unit axes must land on the result's, in order.
        x_axes = [i for i, c in enumerate(self.domain(u)) if not self.is_unit(c)]
        o_axes = [i for i, c in enumerate(self.domain(o)) if not self.is_unit(c)]
        name, p = e.primitive.name, e.params
        if name == "broadcast_in_dim":
            lands = [p["broadcast_dimensions"][i] for i in x_axes]
        elif name == "transpose":
            inv = {src: k for k, src in enumerate(p["permutation"])}
            lands = [inv[i] for i in x_axes]
        elif name in ("reshape", "squeeze", "expand_dims"):
            lands = o_axes if [u.aval.shape[i] for i in x_axes] == \
                [o.aval.shape[i] for i in o_axes] else None
        else:                                  # rev, slice: other indices
            return False
        if lands != o_axes:
            return False
        self.loc[o] = ("alias", u, e)
        return True

    def realize(self, v):
        """Plan the view an alias stands for (once something other than a loop reads it),
        or the loop a generator stands for."""
        loc = self.loc[v]
        if loc[0] == "gen":
            for u in loc[1].invars:
                if isinstance(u, Var):
                    self.realize(u)
            self.plan_ew(loc[1])
            return
        if loc[0] == "alias":
            e = loc[2]
            self.realize(loc[1])
            if LOWERINGS[e.primitive.name].kind == "view":
                self.plan_view(e)
            else:
                self.plan_reshape(e)

    def plan_view(self, e):
        u, o = e.invars[0], e.outvars[0]
        name = e.primitive.name
        p = e.params
        if isinstance(u, Var):
            self.realize(u)
        if isinstance(u, Var) and self.loc[u][0] == "view":
            _, base, inner = self.loc[u]
        else:
            base = self.base_ref(u)
            inner = None
        if base[0] == "scalar":
            self.loc[o] = base if not o.aval.shape else ("view", base, None)
            return
        xs = u.aval.shape
        if name == "broadcast_in_dim":
            bd = p["broadcast_dimensions"]
            m = Broadcast(tuple(None if xs[j] == 1 else bd[j] for j in range(len(xs))))
        elif name == "transpose":
            m = Transpose(tuple(p["permutation"]))
        elif name == "rev":
            m = Reverse(frozenset(p["dimensions"]), tuple(self.dims(u)))
        elif name == "roll":
            ax = p["axis"]
            m = Roll(ax, self.dims(u)[ax], self.size_param(p["shift"]))
        else:  # slice
            m = Offset(tuple(self.size_param(s) for s in p["start_indices"]),
                       tuple(p["strides"] or (1,) * len(xs)))
        self.loc[o] = ("view", base, m if inner is None else Composed(m, inner))

    def plan_reshape(self, e):
        u, o = e.invars[0], e.outvars[0]
        if isinstance(u, Var):
            self.realize(u)
        if not o.aval.shape:                      # -> rank 0: the single element, read in place
            if isinstance(u, Literal) or not u.aval.shape:
                self.loc[o] = self.base_ref(u) if isinstance(u, Var) else \
                    ("scalar", 0, self.jlit(u))
                return
            expr, ready = self.elem(u, 0)
            self.loc[o] = ("scalar", ready, expr)
            return
        if isinstance(u, Literal) or not u.aval.shape:   # scalar -> array: a broadcast
            self.loc[o] = ("view", self.base_ref(u) if isinstance(u, Var) else
                           ("scalar", 0, self.jlit(u)), None)
            return
        xs, os_ = u.aval.shape, o.aval.shape
        x_axes = [i for i, n in enumerate(xs) if n != 1]
        o_axes = [i for i, n in enumerate(os_) if n != 1]
        if [xs[i] for i in x_axes] == [os_[i] for i in o_axes]:
            # only size-1 axes come or go (squeeze, expand_dims, most reshapes of vectors):
            # an index map, no copy
            if self.loc[u][0] == "view":
                _, base, inner = self.loc[u]
            else:
                base, inner = self.base_ref(u), None
            if base[0] == "scalar":
                self.loc[o] = ("view", base, None)
                return
            m = Regroup(tuple(zip(o_axes, x_axes)), len(xs))
            self.loc[o] = ("view", base, m if inner is None else Composed(m, inner))
            return
        ref = self.ensure(u)
        self.place(ref[1]).append(Reshape(e, ref))
        self.loc[o] = ("array", ref[1], self.aname(o), ref[3])

    def plan_reduce(self, e):
        u, o = e.invars[0], e.outvars[0]
        if isinstance(u, Var):
            self.realize(u)
        if isinstance(u, Var) and self.loc[u][0] == "elems":
            self.materialize(u)
        dom = self.loop_domain(u)
        lo = self.ready_of(u, dom)
        c = self.find_cluster(dom, lo)
        if isinstance(u, Var) and self.loc[u][0] == "fused" and self.loc[u][1] is not c \
                and not self.recompute_in(u, c):
            self.store(u)
        c.members.append(("reduce", e))
        if o.aval.shape:
            self.loc[o] = ("array", c.pos + 1, self.aname(o), False)
        else:
            self.loc[o] = ("scalar", c.pos + 1, self.sname(o))

    def plan_opaque(self, e):
        refs = [self.operand_ref(e, u) for u in e.invars]
        ready = max([self.after(r) for r in refs], default=0)
        if eqn_effectful(e):                # side effects (debug prints, io_callback) in order
            ready = self.last_effect = max(ready, self.last_effect)
        outs = []
        for o in e.outvars:
            if isinstance(o, DropVar):
                outs.append(("drop", self.tmp("drop")))
            elif o.aval.shape:
                outs.append(("array", self.aname(o)))
            else:
                outs.append(("scalar", self.sname(o)))
        stmt = Opaque(e, refs, outs)
        self.place(ready).append(stmt)
        # control flow may hand back its operands unchanged (a zero-trip loop, a branch
        # returning its input): the kernel must not return those aliases to the caller
        may_alias = LOWERINGS[e.primitive.name].control
        for o, (kind, nm) in zip(e.outvars, outs):
            if isinstance(o, DropVar):
                continue
            if kind == "array":
                self.loc[o] = ("array", ready, nm, may_alias)
            else:
                self.loc[o] = ("scalar", ready, nm)
        return stmt

    def can_unroll_move(self, e):
        return all(isinstance(u, Literal) or not u.aval.shape or self.tiny(u)
                   or (LOWERINGS[e.primitive.name].kind in ("view", "reshape")
                       and int(np.prod(u.aval.shape)) <= 1 << 16)
                   for u in e.invars)

    def loop_order(self, c, idx):
        """The nesting order of a loop nest's indices, outermost first: the domain's own
        order, except in a nest of elementwise work whose only stores go through a
        permutation view (store_through), which loops in the view's order so that those
        stores are contiguous (and vectorize) and the reads are the strided ones."""
        r = len(idx)
        natural = list(range(r))
        if r < 2 or not c.stored_as or c.stored or any(
                m[0] not in ("ew", "identity") for m in c.members):
            return natural
        orders = set()
        for o, (_, view, perm) in c.stored_as.items():
            full = self.vidx(o, idx)
            names = [full[b] for b in perm if b is not None and full[b] != "0"]
            orders.add(tuple(idx.index(n) for n in names))
        if len(orders) != 1:
            return natural
        got = list(orders.pop())
        return got if sorted(got) == natural else natural


# every primitive declared so far with lowering facts has its record from the start (the
# backends enumerate LOWERINGS); later ones get theirs at their first lookup
for _name in list(primitives):
    LOWERINGS.get(_name)
del _name
