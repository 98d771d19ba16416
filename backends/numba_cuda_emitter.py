"""The CUDA emitter: one host function (the program, or a control-flow body) and the
kernels it launches, from the planner's plan.

:class:`CudaFunction` is the CUDA sibling of ``numba_cpu_emitter.CpuFunction`` on
``numba_emitter.NumbaFunction``. Every loop nest of the plan becomes a ``@cuda.jit``
kernel, a grid-stride loop with one thread per element of the nest's parallel
dimensions; a nest with reductions picks one of three shapes (:meth:`CudaFunction.strategy`,
described in ``numba_cuda``'s docstring); elementwise equations are their records'
expressions (``numba_cuda_expressions``) and opaque ones their statements
(``numba_cuda_statements``). The host function allocates the device buffers, launches the
kernels in plan order and drops each buffer after its last use (:func:`free_at_last_use`).
"""
import re

import numpy as np

from ..config import config
from ..core import DropVar, Literal, Var
from ..errors import UnsupportedDTypeError, UnsupportedError
from .numba_cuda_expressions import expression_rule, select_text
from .numba_cuda_statements import (device_buffer, host_statement, nests_as_dots, on_matmul,
                                     simpler_dots, statement_rule, unravel_lines)
from .cuda_launches import Launch, RowLoop, Section, fuse, render
from .numba_emitter import EwCtx, NumbaFunction, OpCtx, dt_text
from .kernel_plan import Opaque, Row, Transpose
from .plan import LOOP_BUDGET, LOWERINGS

__all__ = ["CudaFunction", "NotOnDevice", "free_at_last_use", "numba_type_name",
           "group_statements"]


def _rt():
    from . import cuda_runtime
    return cuda_runtime


# =====================================================================================
# Reductions: initial values and the combine of two partial results
# =====================================================================================

def _red_kind(e):
    kind = e.primitive.name[len("reduce_"):]
    if e.invars[0].aval.dtype == np.bool_:
        kind = {"sum": "or", "prod": "and"}.get(kind, kind)
    return kind


def _acc_dtype(kind, dt_in):
    if kind in ("sum", "prod") and dt_in.kind == "c":
        return np.dtype(np.complex128)
    if kind in ("sum", "prod"):
        return np.dtype(np.float64) if dt_in.kind == "f" else (
            np.dtype(np.uint64) if dt_in.kind == "u" else np.dtype(np.int64))
    if kind in ("and", "or"):
        return np.dtype(np.bool_)
    return dt_in


def _init_value(kind, dt):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if kind == "and":
        return True
    if kind == "or":
        return False
    if dt.kind == "f":
        return -np.inf if kind == "max" else np.inf
    if dt.kind == "c":        # numpy's lexicographic order: any element replaces it
        inf = -np.inf if kind == "max" else np.inf
        return complex(inf, inf)
    if dt == np.bool_:
        return kind == "min"
    info = np.iinfo(dt)
    return info.min if kind == "max" else info.max


def _combine(kind, a, b, dt):
    """Partial result ``a`` combined with element or partial ``b`` (both names)."""
    if kind == "sum":
        return f"{a} + {b}"
    if kind == "prod":
        return f"{a} * {b}"
    if kind == "and":
        return f"{a} & {b}"
    if kind == "or":
        return f"{a} | {b}"
    if dt.kind == "c":        # np.maximum(a, b): lexicographic, a NaN in a stays
        return f"«C».c{kind}({a}, {b})"
    cmp = ">=" if kind == "max" else "<="           # ties: the later element, as the CPU
    cond = f"({b} {cmp} {a})" + (f" or ({b} != {b})" if dt.kind == "f" else "")
    return select_text(cond, b, a)


_TYPE_NAME = {np.dtype(np.bool_): "boolean"}


def numba_type_name(dt):
    dt = np.dtype(dt)
    return _TYPE_NAME.get(dt, dt.name)


# =====================================================================================
# The function
# =====================================================================================

class NotOnDevice(Exception):
    """A body built for a device loop does something only the host can (internal)."""


class CudaFunction(NumbaFunction):
    """One host function (the program, or a control-flow body) and its kernels.

    ``device_from``: the index of the first parameter that is a loop's carry or slice
    (None for an ordinary function). Such a body is built for a device loop: its rank-0
    carries and slices are 1-element device buffers (``A[0]``), every rank-0 equation
    runs on the device, and the build stops at the launches (``items``) and the names
    it returns (``rets``), raising :class:`NotOnDevice` where a value would be a host
    scalar."""

    device_from = None
    #: a host loop's body (``numba_cuda_statements._op_scan``), so that the host need not
    #: wait for the device each step: the rank-0 parameters at positions in
    #: ``device_params`` (of constvars + invars) are 1-element device buffers (``A[0]``);
    #: a rank-0 result at a position in ``device_rets_ok`` whose value is in a device
    #: buffer is returned as that buffer instead of being read back; one in
    #: ``device_rets_must`` always is (a host value gets a new buffer). ``device_rets``
    #: says, after the build, which results are such buffers.
    device_params = device_rets_ok = device_rets_must = frozenset()
    #: a host loop's body reading and writing the loop's stacks in place, so that the host
    #: makes no slice of them per step (``numba_cuda_statements._op_scan``): the array
    #: parameters at positions in ``row_params`` are passed as the whole stack, read at
    #: row ``STEP`` (a parameter after the others: :class:`kernel_plan.Row`); a result at
    #: a position ``k`` in ``row_rets`` that a loop nest computes is written by that nest
    #: into row ``STEP`` of the stack passed as parameter ``row_rets[k]`` and returned as
    #: None. ``row_written`` says, after the build, which results were written so.
    row_params = frozenset()
    row_rets = {}
    STEP = "_step"
    #: a host loop's body whose carries the loop owns: ``{parameter position: result
    #: position}`` of the array carries (the result is the next step's parameter). An
    #: update (a scatter, a dynamic update) may write into such a parameter's buffer in
    #: place (:func:`update_in_place`) where that stays safe at the next step: the
    #: result the body returns there is a buffer of its own or that parameter's, and no
    #: other carry's. ``overwritten`` says, after the build, which parameter positions
    #: were (the loop copies their initial values once, so that the caller's stay).
    donated_params = {}

    def __init__(self, mod, jaxpr, name, top):
        # matrix-shaped reductions become products, for cuBLAS (nests_as_dots); a
        # product's transposed result, the product of its operands swapped, and a
        # product with a scalar, a multiply (simpler_dots)
        jaxpr = nests_as_dots(jaxpr) or jaxpr
        super().__init__(mod, simpler_dots(jaxpr) or jaxpr, name, top)
        self.device_outs = {}         # rank-0 results statements left in device buffers
        self.row_written = []         # positions of results written into a stack
        self.overwritten = set()      # positions of donated parameters updated in place

    def param_loc(self, v, i):
        if not v.aval.shape and ((self.device_from is not None and i >= self.device_from)
                                 or i in self.device_params):
            return ("scalar", 0, f"{self.aname(v)}[0]")
        if i in self.row_params:
            if not v.aval.shape:            # a per-step scalar, read in the kernels
                return ("scalar", 0, f"{self.aname(v)}[{self.STEP}]")
            return ("view", ("array", 0, self.aname(v), True), Row(self.STEP))
        return super().param_loc(v, i)

    def _product_into_row(self, v, loc, stack):
        """A matrix product whose result ``v`` is only this per-step output writes it
        into the caller's stack row itself (``_rt.matmul`` takes an output row): its
        statement's result becomes ``("row", stack)``."""
        j = self.jaxpr
        if sum(o is v for o in j.outvars) != 1 or any(
                u is v for e in j.eqns for u in e.invars):
            return False
        for st in self.place(loc[1]):
            if isinstance(st, Opaque) and st.lines is None and st.outs[0][1] == loc[2] \
                    and st.eqn.primitive.name == "dot_general" and on_matmul(st.eqn):
                st.outs[0] = ("row", stack)
                return True
        return False

    def operand_ref(self, e, u):
        """A stack row (``row_params``) that a matrix product reads is passed to
        ``_rt.matmul`` as the stack and its row (no copy, no slice); a transpose of an
        array (``x @ w.T``) as the array, its permutation folded into the product's
        operand order (no copy of the transpose)."""
        if e.primitive.name == "dot_general" and isinstance(u, Var) and on_matmul(e):
            self.realize(u)
            loc = self.loc[u]
            if loc[0] == "view" and (isinstance(loc[2], Row) or (
                    isinstance(loc[2], Transpose) and loc[1][0] == "array")):
                return loc
        return super().operand_ref(e, u)

    def result_ref(self, k, v):
        """A per-step output of a host loop's body (``row_rets``) is written into the
        caller's stack by what computes it, where that is a loop nest (an elementwise
        value, a reduction, a rank-0 value a one-thread nest computes:
        ``Cluster.row_writes``) or a matrix product; else a view, or
        an array that a later nest over its domain can copy at no launch of its own, is
        copied there by a nest. Its ref is then ``("row", stack)``; any other result is
        returned (the caller copies it into the stack)."""
        stack = self.row_rets.get(k)
        if stack is None or not isinstance(v, Var):
            return super().result_ref(k, v)
        loc = self.loc[v]
        if v.aval.shape and loc[0] == "fused":
            loc[1].row_writes.append((v, stack, self.STEP))
            return ("row", stack)
        made_by = self.stages[loc[1] - 1] if loc[0] in ("array", "scalar") and loc[1] \
            else None
        if made_by is not None and (v.aval.shape or device_buffer(loc[2])) and any(
                m[0] in ("reduce", "ew") and m[1].outvars[0] is v for m in made_by.members):
            # a reduction's result, or a rank-0 value a one-thread nest computes: written
            # where its array is
            made_by.row_writes.append((v, stack, self.STEP))
            return ("row", stack)
        if loc[0] == "array" and self._product_into_row(v, loc, stack):
            return ("row", stack)
        if v.aval.shape and loc[0] in ("view", "array"):
            dom = self.loop_domain(v)
            lo = self.ready_of(v, dom)
            if loc[0] == "view" or any(pos >= lo and self.stages[pos].cost < LOOP_BUDGET
                                       for pos in self.by_domain.get(dom, ())):
                c = self.find_cluster(dom, lo)
                c.members.append(("copy", v, stack))
                c.row_writes.append((v, stack, self.STEP))
                return ("row", stack)
        return super().result_ref(k, v)

    def check_records(self):
        """Refuse a program this target has no text for: ``UnsupportedError`` naming an
        elementwise primitive with neither a record nor a numpy function in its facts;
        ``UnsupportedDTypeError`` (the interpreter runs it, as jit logs) where a complex
        value meets a primitive whose record takes none."""
        for e in self.jaxpr.eqns:
            name = e.primitive.name
            low = LOWERINGS.get(name)
            if low is None:
                continue                  # the planner's own error (no record at all)
            rec = None
            if low.kind == "elementwise":
                rec = expression_rule(name)
                if rec is None:
                    raise UnsupportedError(
                        f"jit (cuda backend) has no lowering for primitive {name!r} (no "
                        f"CUDA record, and no numpy function in its lowering facts); use "
                        f"backend='interpret' or 'cpu' for this function", source=e.source)
            elif low.kind == "opaque":
                rec = statement_rule(name)
            if rec is None or rec.complex:
                continue                  # views, reductions, host calls: any dtype
            if any(v.aval.dtype.kind == "c" for v in list(e.invars) + list(e.outvars)):
                raise UnsupportedDTypeError(
                    f"jit (cuda backend): {name} of complex values is not supported",
                    source=e.source)

    # ------------------------------------------------------------------ planner hooks
    def tiny(self, v):
        # no values in scalar variables: on a GPU a tiny array is a buffer like any other
        # (host scalars would mean a copy back for every element a kernel computes)
        return 0

    def plan_ew_unrolled(self, e):
        """A rank-0 equation reading a value in device memory (a full reduction's result,
        ``C[0]``) runs in a one-thread kernel and stores its result in a 1-element buffer,
        where the host would read the value back (a synchronisation) only to compute on it;
        one reading host scalars alone stays a host statement."""
        o = e.outvars[0]
        if not o.aval.shape and (self.device_from is not None or any(
                isinstance(u, Var) and _DEVICE_READ.search(self.elem(u, 0)[0])
                for u in e.invars)):
            self.plan_ew(e)                   # loc: ("scalar", cluster position, ...)
            c = self.stages[self.loc[o][1]]
            c.stored.add(o)
            self.loc[o] = ("scalar", c.pos + 1, f"{self.aname(o)}[0]")
            return
        super().plan_ew_unrolled(e)

    def plan_opaque(self, e):
        """As the planner's; a rank-0 result a statement left in a device buffer (a dot
        product, a device loop's scalar carry: ``device_outs``) is read there, not as a
        host scalar. Only the statement's rule knows that (whether a loop runs on the
        device is decided by building its body), so a statement with a rank-0 result is
        written now, while planning (its record keeps the ``lines``), and its readers are
        planned knowing where the value is."""
        st = super().plan_opaque(e)
        if any(isinstance(o, Var) and not isinstance(o, DropVar) and not o.aval.shape
               for o in e.outvars):
            st.lines = self.opaque_lines(st.eqn, st.refs, st.outs)
        for o in e.outvars:
            got = self.device_outs.pop(o, None)
            if got is not None:
                self.loc[o] = ("scalar", self.loc[o][1], got)
        return st

    def plan_reduce(self, e):
        super().plan_reduce(e)
        o = e.outvars[0]
        if not o.aval.shape:     # a 1-element device array, read where the host needs it
            loc = self.loc[o]
            self.loc[o] = ("scalar", loc[1], f"{self.aname(o)}[0]")

    def code_size(self, e):
        low = LOWERINGS[e.primitive.name]
        return low.code_size or (2 if low.cost > 1 else 1)

    def cast(self, expr, dtype):
        if np.dtype(dtype) == np.bool_:
            return f"({expr} != 0)"
        return f"{dt_text(dtype)}({expr})"

    def ew_expr(self, e, args, idx):
        o = e.outvars[0]
        ctx = EwCtx(self, e.params, o.aval.dtype, [u.aval.dtype for u in e.invars], idx)
        name = e.primitive.name
        expr = expression_rule(name).expr(ctx, args)      # check_records: it is there
        dt = o.aval.dtype
        if not (dt == np.float64 or name == "convert_element_type"
                or (dt == np.bool_ and LOWERINGS[name].bool_native)):
            expr = self.cast(expr, dt)
        return expr

    def reshape_lines(self, e, ref):
        return [self.eqn_comment(e),
                f"{self.aname(e.outvars[0])} = {ref[2]}.reshape({self.shape(e.outvars[0])})"]

    def materialize_lines(self, v, name, els):
        return [f"{name} = _rt.to_device(np.array([{', '.join(els)}], {dt_text(v.aval.dtype)})"
                f".reshape({self.shape(v)}))"]

    def reduce_group_lines(self, kind, acc, xs, dt_in, dt_out):
        acc_dt = _acc_dtype(kind, dt_in)
        lines = [f"{acc} = {self.lit(_init_value(kind, acc_dt), acc_dt)}"]
        for x in xs:
            xv = x if (acc_dt == dt_in or kind in ("max", "min")) else self.cast(x, acc_dt)
            lines.append(f"{acc} = {_combine(kind, acc, xv, acc_dt)}")
        if acc_dt != dt_out:
            lines.append(f"{acc} = {self.cast(acc, dt_out)}")
        return lines

    def opaque_lines(self, e, refs, outs):
        lines = [self.eqn_comment(e)]
        rec = statement_rule(e.primitive.name)
        (host_statement if rec is None else rec.emit)(OpCtx(self, e, refs, outs, lines))
        return lines

    # ------------------------------------------------------------------ kernels
    def alloc(self, name, v, dtype=None):
        shape = self.shape(v) if v.aval.shape else "(1,)"
        return f"{name} = _rt.empty({shape}, {dt_text(dtype or v.aval.dtype)})"

    def strategy(self, c, reds):
        """How a nest with reductions runs (see the module docstring)."""
        if not reds:
            return "map"
        R = set().union(*[set(ax) for _, ax in reds])
        if not R or any(set(ax) != R for _, ax in reds):
            return "serial"
        P = [k for k in range(len(c.domain)) if k not in R]
        nr = 1
        for k in R:
            nr *= self.D.value[c.domain[k]]
        if not P:
            return "grid"
        npar = 1
        for k in P:
            npar *= self.D.value[c.domain[k]]
        if max(P) > max(R):
            # the innermost axis is kept (a column sum, a bias gradient over the batch):
            # consecutive threads take consecutive kept elements (coalesced reads); with
            # many rows, blocks also split the rows ("split": partial results per chunk of
            # rows, combined per tile of columns by the tile's last block)
            return "split" if nr >= SPLIT_MIN_ROWS else "serial"
        if nr >= _rt().TPB:
            return "block"
        return "rows" if nr >= _rt().ROW_GROUP else "serial"

    def red_axes(self, e):
        """The reduced axes of reduction ``e`` as positions of its loop nest's indices."""
        pos, loop_pos = 0, {}
        for a, cl in enumerate(self.domain(e.invars[0])):
            if not self.is_unit(cl):
                loop_pos[a] = pos
                pos += 1
        return tuple(sorted(loop_pos[a] for a in e.params["axes"] if a in loop_pos))

    def emit_cluster(self, c, out):
        """A loop nest as kernel launches. Reductions over different axis sets in one nest
        (a bias gradient summed over the batch next to a loss summed over everything) are
        one kernel per axis set, each recomputing the nest's elementwise values (cheap
        next to a reduction); the first also stores the values other nests read."""
        groups = []
        for m in c.members:
            if m[0] == "reduce" and self.red_axes(m[1]) not in groups:
                groups.append(self.red_axes(m[1]))
        if len(groups) <= 1:
            self._emit_part(c, c.members, True, out)
            return
        for gi, g in enumerate(groups):
            part = [m for m in c.members if m[0] in ("ew", "identity")
                    or (m[0] == "copy" and gi == 0)
                    or (m[0] == "reduce" and self.red_axes(m[1]) == g)]
            self._emit_part(c, part, gi == 0, out)

    def _emit_part(self, c, members, stores, out):
        dom = c.domain
        r = len(dom)
        sizes = [self.size(cl) for cl in dom]
        idx = [f"i{k}" for k in range(r)]
        host, body = [], []
        reds = [(m[1], list(self.red_axes(m[1]))) for m in members if m[0] == "reduce"]
        strat = self.strategy(c, reds)
        R = sorted(set().union(*[set(ax) for _, ax in reds])) if reds else []
        P = [k for k in range(r) if k not in R]
        red_info = []
        for kind, *rest in members:
            if kind in ("ew", "identity"):
                e = rest[0]
                o = e.outvars[0]
                body.append(self.eqn_comment(e))
                args = [self.read(u, c, idx) for u in e.invars]
                full = self.vidx(o, idx)
                expr = args[0] if kind == "identity" else self.ew_expr(e, args, full)
                body.append(f"{self.sname(o)} = {expr}")
                if o in c.stored and stores:
                    host.append(self.alloc(self.aname(o), o))
                    body.append(f"{self.aname(o)}[{', '.join(full) or '0'}] = {self.sname(o)}")
                for rv, stack, step in c.row_writes if stores else ():
                    if rv is o:
                        body.append(f"{stack}[{', '.join([step] + full)}] = {self.sname(o)}")
                if o in c.stored_as and stores:
                    name, view, perm = c.stored_as[o]
                    host.append(self.alloc(name, view))
                    vix = ["0" if b is None else full[b] for b in perm]
                    body.append(f"{name}[{', '.join(vix) or '0'}] = {self.sname(o)}")
            elif kind == "copy":
                v, name = rest
                at = self.vidx(v, idx)
                step = next((sp for rv, st, sp in c.row_writes if rv is v and st == name),
                            None)
                if step is None:
                    host.append(self.alloc(name, v))
                else:                                   # into a row of the caller's stack
                    at = [step] + at
                body.append(f"{name}[{', '.join(at) or '0'}] = "
                            f"{self.read(v, c, idx)}  # copy {self.sname(v)}")
            else:
                e = rest[0]
                axes = next(ax for ee, ax in reds if ee is e)
                red_info.append(self._reduce_body(e, axes, c, idx, R, strat, host, body))
        np_txt = " * ".join(sizes[k] for k in P) or "1"
        nr_txt = " * ".join(sizes[k] for k in R) or "1"
        work = {"block": np_txt, "rows": np_txt, "grid": nr_txt, "serial": np_txt}.get(
            strat, " * ".join(sizes) or "1")
        if strat == "split":
            tk = f"{red_info[0]['out']}_TK"
            nch = f"{red_info[0]['out']}_NCH"
            host.append(f"{nch} = _rt.split_chunks({np_txt}, {nr_txt})")
            for ri in red_info:
                host.append(f"{ri['part']} = _rt.empty(({nch} * ({np_txt}),), "
                            f"{dt_text(ri['acc_dt'])})")
            host.append(f"{tk} = {self.mod.ticket(f'_rt.tiles({np_txt})')}")
            sec = self._split_section(sizes, idx, P, R, body, red_info, np_txt, nr_txt,
                                      tk, nch)
        else:
            sec = self._section(strat, sizes, idx, P, R, body, red_info, work)
        if strat == "grid":
            for ri in red_info:
                host.append(f"{ri['part']} = _rt.empty((_rt.MAX_BLOCKS,), "
                            f"{dt_text(ri['acc_dt'])})")
            host.append(f"{red_info[0]['ticket']} = {self.mod.ticket()}")
        note = (f"# ---- loop nest over {self.shape_of_names(sizes) if r else 'a scalar'}: "
                f"{sum(1 for m in members if m[0] != 'copy')} fused equation(s), "
                f"{strat} kernel")
        sec.elems = " * ".join(sizes) or "1"
        out.append(Launch([sec], host, [note]))

    def _reduce_body(self, e, axes, c, idx, R, strat, host, body):
        u, o = e.invars[0], e.outvars[0]
        kind = _red_kind(e)
        dt_in, dt_out = u.aval.dtype, o.aval.dtype
        acc_dt = _acc_dtype(kind, dt_in)
        x = self.read(u, c, idx)
        body.append(self.eqn_comment(e))
        xn = self.tmp("x")
        if kind in ("and", "or") and dt_in != np.bool_:
            body.append(f"{xn} = ({x} != 0)")
        elif kind in ("sum", "prod") and acc_dt != dt_in:
            body.append(f"{xn} = {self.cast(x, acc_dt)}")
        else:
            body.append(f"{xn} = {x}")
        out_name = self.aname(o)
        kept = [k for k in range(len(idx)) if k not in axes]
        oidx = ", ".join(self.vidx(o, [idx[k] for k in kept])) or "0"
        info = dict(e=e, o=o, kind=kind, acc_dt=acc_dt, dt_out=dt_out, out=out_name,
                    init=self.lit(_init_value(kind, acc_dt), acc_dt), oidx=oidx,
                    partial=sorted(set(R) - set(axes)), kept=kept,
                    rows=[(st, sp) for rv, st, sp in c.row_writes if rv is o])
        if strat == "serial" and info["partial"]:
            # reduced over some of the serial axes only: accumulate in the output (or an
            # accumulator array of the accumulation dtype) indexed by the kept axes
            acc = out_name if acc_dt == dt_out else f"{out_name}_ACC"
            host.append(self.alloc(out_name, o))
            if acc != out_name:
                host.append(self.alloc(acc, o, acc_dt))
            info["acc_arr"] = acc
            body.append(f"{acc}[{oidx}] = {_combine(kind, f'{acc}[{oidx}]', xn, acc_dt)}")
        else:
            a = self.tmp("acc")
            info["acc"] = a
            host.append(self.alloc(out_name, o))
            if kind == "sum" or kind == "prod":
                body.append(f"{a} {'+' if kind == 'sum' else '*'}= {xn}")
            else:
                body.append(f"{a} = {_combine(kind, a, xn, acc_dt)}")
            if strat in ("grid", "split"):
                info["part"] = f"{out_name}_PART"
        return info

    @staticmethod
    def _result_writes(ri, value):
        """The lines writing a reduction's result ``value``: to its array, and where the
        result is a host loop's rank-0 per-step output (``row_rets``), into the caller's
        stack at the step too (``Cluster.row_writes``)."""
        out = f"{ri['out']}[{ri['oidx']}]"
        at = ri["oidx"] if ri["o"].aval.shape else None
        return [f"{out} = {value}"] + [f"{stack}[{step if at is None else f'{step}, {at}'}]"
                                       f" = {out}" for stack, step in ri.get("rows", ())]

    def _split_section(self, sizes, idx, P, R, body, reds, npt, nr, tk, nch):
        """A reduction keeping the innermost axis, over many rows: block ``b`` takes tile
        ``b % NT`` of ``_TPB`` consecutive kept elements (a thread each: coalesced reads)
        and chunk ``b // NT`` of the rows (every ``NCH``-th); each thread writes its
        partial result, takes a ticket of its tile after a fence, and the tile's last
        block combines the ``NCH`` partials of each element in chunk order."""
        ind = lambda k, s: "    " * k + s   # noqa: E731
        nt = f"(({npt}) + _TPB - 1) // _TPB"
        pre = [ind(1, "_tx = cuda.threadIdx.x"),
               ind(1, "_last = cuda.shared.array(1, _T_int32)")]
        self.mod.types.add("int32")
        header = [ind(1, f"for _b in range(cuda.blockIdx.x, {nt} * {nch}, cuda.gridDim.x):"),
                  ind(2, f"_tile = _b % ({nt})"), ind(2, f"_ch = _b // ({nt})"),
                  ind(2, "_p = _tile * _TPB + _tx")]
        inner = [ind(2, f"{ri['acc']} = {ri['init']}") for ri in reds]
        inner.append(ind(2, f"if _p < {npt}:"))
        inner += [ind(3, s) for s in unravel_lines("_p", P, sizes, idx)]
        inner.append(ind(3, f"for _r in range(_ch, {nr}, {nch}):"))
        inner += [ind(4, s) for s in unravel_lines("_r", R, sizes, idx)]
        inner += [ind(4, s) for s in body]
        inner += [ind(3, f"{ri['part']}[_ch * ({npt}) + _p] = {ri['acc']}") for ri in reds]
        inner += [ind(3, "_dm.threadfence()"), ind(2, "cuda.syncthreads()"),
                  ind(2, "if _tx == 0:"),
                  ind(3, f"_last[0] = cuda.atomic.add({tk}, _tile, 1) == {nch} - 1"),
                  ind(2, "cuda.syncthreads()"), ind(2, "if _last[0]:"),
                  ind(3, f"if _p < {npt}:")]
        inner += [ind(4, s) for s in unravel_lines("_p", P, sizes, idx)]
        for ri in reds:
            b = self.tmp("b")
            v = b if ri["acc_dt"] == ri["dt_out"] else self.cast(b, ri["dt_out"])
            inner += [ind(4, f"{b} = {ri['init']}"),
                      ind(4, f"for _c in range({nch}):"),
                      ind(5, f"{b} = " + _combine(ri["kind"], b,
                                                  f"{ri['part']}[_c * ({npt}) + _p]",
                                                  ri["acc_dt"])),
                      *[ind(4, w) for w in self._result_writes(ri, v)]]
        inner += [ind(3, "if _tx == 0:"), ind(4, f"{tk}[_tile] = 0"),
                  ind(2, "cuda.syncthreads()")]
        return Section("split", pre, header, inner, [], npt,
                       grid=f"_rt.split_blocks({npt}, {nch})")

    def _tree(self, infos, ind, group="_TPB", lane="_tx"):
        """Shared-memory tree reduction of every accumulator of a block (of each group of
        ``group`` consecutive threads, ``lane`` a thread's place in its group)."""
        pad = "    " * ind
        lines = [pad + f"{ri['sh']}[_tx] = {ri['acc']}" for ri in infos]
        lines += [pad + "cuda.syncthreads()", pad + f"_s = {group} // 2", pad + "while _s > 0:",
                  pad + f"    if {lane} < _s:"]
        for ri in infos:
            sh = ri["sh"]
            lines.append(pad + "        " + f"{sh}[_tx] = "
                         + _combine(ri["kind"], f"{sh}[_tx]", f"{sh}[_tx + _s]", ri["acc_dt"]))
        lines += [pad + "    cuda.syncthreads()", pad + "    _s //= 2"]
        return lines

    def _section(self, strat, sizes, idx, P, R, body, reds, work):
        """The kernel body of one nest as a :class:`~.cuda_launches.Section`."""
        r = len(idx)
        ind = lambda k, s: "    " * k + s   # noqa: E731
        fin = lambda ri, v: v if ri["acc_dt"] == ri["dt_out"] else self.cast(v, ri["dt_out"])  # noqa: E731
        pre, header, inner, post = [], [], [], []
        if strat == "map":
            if r == 0:
                return Section("single", [], [ind(1, "if cuda.grid(1) == 0:")],
                               [ind(2, s) for s in body], [], "1")
            total = " * ".join(sizes)
            header.append(ind(1, f"for _f in range(cuda.grid(1), {total}, cuda.gridsize(1)):"))
            header += [ind(2, s) for s in unravel_lines("_f", list(range(r)), sizes, idx)]
            inner += [ind(2, s) for s in body]
        elif strat == "serial":
            total = " * ".join(sizes[k] for k in P) or "1"
            header.append(ind(1, f"for _f in range(cuda.grid(1), {total}, cuda.gridsize(1)):"))
            header += [ind(2, s) for s in unravel_lines("_f", P, sizes, idx)]
            ln = inner
            for ri in reds:
                if "acc" in ri:
                    ln.append(ind(2, f"{ri['acc']} = {ri['init']}"))
                else:
                    d = 2
                    for k in ri["partial"]:
                        ln.append(ind(d, f"for {idx[k]} in range({sizes[k]}):"))
                        d += 1
                    ln.append(ind(d, f"{ri['acc_arr']}[{ri['oidx']}] = {ri['init']}"))
            d = 2
            for k in R:
                ln.append(ind(d, f"for {idx[k]} in range({sizes[k]}):"))
                d += 1
            ln += [ind(d, s) for s in body]
            for ri in reds:
                if "acc" in ri:
                    ln += [ind(2, w) for w in self._result_writes(ri, fin(ri, ri['acc']))]
                elif ri["acc_arr"] != ri["out"] or ri["rows"]:
                    d = 2
                    for k in ri["partial"]:
                        ln.append(ind(d, f"for {idx[k]} in range({sizes[k]}):"))
                        d += 1
                    w = self._result_writes(
                        ri, fin(ri, ri['acc_arr'] + '[' + ri['oidx'] + ']'))
                    ln += [ind(d, x) for x in (w if ri["acc_arr"] != ri["out"] else w[1:])]
        else:
            for ri in reds:
                ri["sh"] = self.tmp("sh")
                pre.append(ind(1, f"{ri['sh']} = cuda.shared.array(_TPB, "
                                  f"{self.mod.type_name(ri['acc_dt'])})"))
            pre.append(ind(1, "_tx = cuda.threadIdx.x"))
            nr = " * ".join(sizes[k] for k in R) or "1"
            if strat == "block":
                npt = " * ".join(sizes[k] for k in P)
                header.append(ind(1, f"for _p in range(cuda.blockIdx.x, {npt}, cuda.gridDim.x):"))
                header += [ind(2, s) for s in unravel_lines("_p", P, sizes, idx)]
                ln = inner
                ln += [ind(2, f"{ri['acc']} = {ri['init']}") for ri in reds]
                ln.append(ind(2, f"for _r in range(_tx, {nr}, _TPB):"))
                ln += [ind(3, s) for s in unravel_lines("_r", R, sizes, idx)]
                ln += [ind(3, s) for s in body]
                ln += self._tree(reds, 2)
                ln.append(ind(2, "if _tx == 0:"))
                ln += [ind(3, w) for ri in reds
                       for w in self._result_writes(ri, fin(ri, ri['sh'] + '[0]'))]
                ln.append(ind(2, "cuda.syncthreads()"))
                return self._row_section(strat, pre, header, inner, work, sizes, idx, P, R)
            elif strat == "rows":
                # a group of ROW_GROUP threads (a warp on a GPU) per kept element: its
                # lanes stride over the reduced elements (consecutive lanes, consecutive
                # elements of a row: coalesced), then a tree within the group; a block
                # takes _TPB // ROW_GROUP rows a step, every thread at every barrier
                npt = " * ".join(sizes[k] for k in P)
                pre += [ind(1, "_g = _tx // _RG"), ind(1, "_ln = _tx % _RG")]
                header.append(ind(1, f"for _p0 in range(cuda.blockIdx.x * _RPB, "
                                     f"{npt}, cuda.gridDim.x * _RPB):"))
                header.append(ind(2, "_p = _p0 + _g"))
                ln = inner
                ln += [ind(2, f"{ri['acc']} = {ri['init']}") for ri in reds]
                ln.append(ind(2, f"if _p < {npt}:"))
                ln += [ind(3, s) for s in unravel_lines("_p", P, sizes, idx)]
                ln.append(ind(3, f"for _r in range(_ln, {nr}, _RG):"))
                ln += [ind(4, s) for s in unravel_lines("_r", R, sizes, idx)]
                ln += [ind(4, s) for s in body]
                ln += self._tree(reds, 2, "_RG", "_ln")
                ln.append(ind(2, f"if _ln == 0 and _p < {npt}:"))
                ln += [ind(3, s) for s in unravel_lines("_p", P, sizes, idx)]
                ln += [ind(3, w) for ri in reds
                       for w in self._result_writes(ri, fin(ri, ri['sh'] + '[_tx]'))]
                ln.append(ind(2, "cuda.syncthreads()"))
                return self._row_section(strat, pre, header, inner, work, sizes, idx, P, R)
            else:   # grid
                pre += [ind(1, f"{ri['acc']} = {ri['init']}") for ri in reds]
                header.append(ind(1, f"for _f in range(cuda.grid(1), {nr}, cuda.gridsize(1)):"))
                header += [ind(2, s) for s in unravel_lines("_f", R, sizes, idx)]
                inner += [ind(2, s) for s in body]
                post += self._tree(reds, 1)
                post += self._last_block_combine(reds)
        return Section(strat, pre, header, inner, post, work)

    @staticmethod
    def _row_section(strat, pre, header, inner, work, sizes, idx, P, R):
        """A ``block`` or ``rows`` section (a block, or a group of lanes, per kept
        element), with what ``cuda_launches`` needs to run later work on the same rows in
        its loop (:class:`~.cuda_launches.RowLoop`)."""
        def map_header(pos, total):
            return tuple([f"    for _f in range(cuda.grid(1), {total}, cuda.gridsize(1)):"]
                         + ["        " + s for s in unravel_lines("_f", pos, sizes, idx)])
        npt = " * ".join(sizes[k] for k in P)
        nr = " * ".join(sizes[k] for k in R)
        kept = map_header(P, npt) if P == list(range(len(P))) else None
        if strat == "block":
            each = [f"        for _r in range(_tx, {nr}, _TPB):"]
            each += ["            " + s for s in unravel_lines("_r", R, sizes, idx)]
            depth, first = "            ", "_tx == 0"
        else:
            each = [f"        if _p < {npt}:"]
            each += ["            " + s for s in unravel_lines("_p", P, sizes, idx)]
            each.append(f"            for _r in range(_ln, {nr}, _RG):")
            each += ["                " + s for s in unravel_lines("_r", R, sizes, idx)]
            depth, first = "                ", f"_ln == 0 and _p < {npt}"
        rows = RowLoop((tuple(sizes), tuple(P), tuple(R)), kept,
                       map_header(list(range(len(sizes))), " * ".join(sizes)), tuple(each),
                       depth, first)
        return Section(strat, pre, header, inner, [], work, rows=rows)

    def _last_block_combine(self, reds):
        """The end of a one-launch grid reduction: each block writes its partial results,
        takes a ticket (an atomic increment of a counter the program keeps on the device,
        after a fence that makes its partials visible), and the block that takes the last
        ticket combines every block's partials in block order (so the result does not
        depend on which block finishes last), writes the results and resets the counter
        for the next launch. One launch where a second one-block pass used to be."""
        tk = reds[0]["ticket"] = f"{reds[0]['out']}_TK"
        ln = ["    _last = cuda.shared.array(1, _T_int32)",
              "    if _tx == 0:"]
        self.mod.types.add("int32")
        ln += [f"        {ri['part']}[cuda.blockIdx.x] = {ri['sh']}[0]" for ri in reds]
        ln += ["        _dm.threadfence()",
               f"        _last[0] = cuda.atomic.add({tk}, 0, 1) == cuda.gridDim.x - 1",
               "    cuda.syncthreads()",
               "    if _last[0]:"]
        # fresh names: a merged kernel may hold reductions of other dtypes (Numba would
        # unify one name's types across the kernel)
        fin = [dict(ri, acc=self.tmp("b")) for ri in reds]
        ln += [f"        {ri['acc']} = {ri['init']}" for ri in fin]
        ln.append("        for _i in range(_tx, cuda.gridDim.x, _TPB):")
        ln += [f"            {ri['acc']} = {_combine(ri['kind'], ri['acc'], ri['part'] + '[_i]', ri['acc_dt'])}"
               for ri in fin]
        ln += self._tree(fin, 2)
        ln.append("        if _tx == 0:")
        for ri in fin:
            v = f"{ri['sh']}[0]"
            v = v if ri["acc_dt"] == ri["dt_out"] else self.cast(v, ri["dt_out"])
            ln += ["            " + w for w in self._result_writes(ri, v)]
        ln.append(f"            {tk}[0] = 0")
        return ln

    # ------------------------------------------------------------------ the host function
    def consumed_carries(self, first, n):
        """For a loop body whose inputs ``first .. first + n`` are the carries its first
        ``n`` results replace: per carry, whether the body is done with it when it returns
        (no result carries it on, no statement binds it; one returned as a per-step
        output is copied into its stack first)."""
        names = self.param_names[len(self.jaxpr.constvars):]
        return [not self.bound_inputs[first + i] and names[first + i] not in self.rets[:n]
                for i in range(n)]

    def updates_in_place(self, lines, params, rets):
        """:func:`update_in_place` of the function's ``lines`` (its return last), with
        the ``donated_params`` that stay safe at the next step: the result returned in
        place of each overwritten parameter must be a buffer the body made or that
        parameter's own, and no other carry result's."""
        donated = {params[p]: r for p, r in self.donated_params.items()}
        while True:
            out, written = update_in_place(lines, set(donated))
            roots = {r: buffer_root(rets[r], out)[0] for r in donated.values()}
            owned = list(roots.values())

            def safe(n):       # the next step's buffer: this one's or new, and no other's
                root = roots[donated[n]]
                return (root == n or _made_here(root, out)) and owned.count(root) == 1
            bad = {n for n in written if not safe(n)}
            if not bad:
                self.overwritten = {p for p in self.donated_params if params[p] in written}
                return out
            for n in bad:
                del donated[n]

    def build(self):
        j = self.jaxpr
        self.check_dtypes("cuda")
        self.check_records()
        self.analyse()
        plan = self.kernel_plan = self.plan()
        rets, seen, on_device, to_buffers, host_rets = [], set(), set(), [], []
        for v, ref in zip(j.outvars, plan.outputs):
            if isinstance(v, Literal):
                host_rets.append(len(rets))
                rets.append(self.cast(self.jlit(v), v.aval.dtype))
                continue
            if ref[0] == "row":                       # written into the caller's stack
                self.row_written.append(len(rets))
                rets.append("None")
                continue
            if not v.aval.shape:
                expr = ref[2]
                held = device_buffer(expr)
                if self.device_from is not None:
                    if held is None:      # a literal, a parameter, an element of a buffer
                        host_rets.append(len(rets))
                        rets.append(expr)
                    else:
                        rets.append(held)
                elif held is not None and (self.top or len(rets) in self.device_rets_ok
                                           or len(rets) in self.device_rets_must):
                    on_device.add(len(rets))
                    rets.append(held)                 # the 1-element device array itself
                elif len(rets) in self.device_rets_must:   # a host value, put in a buffer
                    on_device.add(len(rets))
                    name = f"_SB{len(rets)}"
                    to_buffers.append(f"{name} = _rt.scalar_buffer({expr}, "
                                      f"{dt_text(v.aval.dtype)})")
                    rets.append(name)
                else:
                    rets.append(self.cast(expr, v.aval.dtype))
                continue
            name = ref[2]
            if self.top and (ref[3] or name in seen):
                name = f"_rt.dcopy({name})"           # never hand back an alias of an input
            seen.add(ref[2])
            rets.append(name)
        self.device_rets = [i in on_device for i in range(len(rets))]
        lines = self.plan_lines(plan, self.emit_cluster) + to_buffers
        self.items = group_statements(lines)
        if config.jit_cuda_fuse_launches:
            self.items = fuse(self.items)
        params = [self.aname(v) if v.aval.shape or self.loc[v][2].endswith("[0]")
                  or i in self.row_params else self.sname(v)
                  for i, v in enumerate(list(j.constvars) + list(j.invars))]
        size_reads = [f"n{k} = slot_i64(_sz, {k})" for k in sorted(set(self.slots_used))
                      if f"n{k}" in self.used_size_names()]
        size_reads += self.lit_reads
        self.rets, self.param_names, self.head_reads = rets, params, size_reads
        #: a device loop's body: the results that are rank-0 expressions (a literal, a
        #: constant parameter, an element of a buffer), which the loop's kernel computes
        #: from its own names for what they read
        self.host_rets = host_rets
        #: the parameters after the equation's: the stacks written (``row_written``) and
        #: the step, where the body reads or writes a stack's row
        self.row_args = [self.row_rets[k] for k in self.row_written]
        if self.row_args or self.row_params:
            self.row_args.append(self.STEP)
        if self.device_from is not None:
            return                  # a device loop's body: its caller writes the kernels
        lines, self.launches = render(self.items, self.mod.kernel)
        lines = [ln for it in lines for ln in it.split("\n")]
        ret = f"return ({', '.join(rets)}{',' if len(rets) == 1 else ''})"
        lines = self.updates_in_place(size_reads + lines + [ret], params, rets)
        lines = lines[len(size_reads):-1]
        ones = [n for n, v in zip(params, list(j.constvars) + list(j.invars))
                if not v.aval.shape and n.isupper()]          # rank-0 device parameters
        made, reached = _bindings(lines, ones)
        own = made - reached
        #: per result, whether it is a buffer of its own (made by ``_rt.empty``, reached
        #: by no other name) at its first place among the results: a host loop calling
        #: this body gives each such buffer back to the pool once its stack holds a copy
        #: (a per-step output) or the step after has consumed it (a carry; carries come
        #: first among the results)
        self.fresh_rets = [r in own and rets.index(r) == i for i, r in enumerate(rets)]
        #: per input (``jaxpr.invars``), whether a statement binds a name to it (a view of
        #: it, a loop carrying it, a host call's result made from it)
        self.bound_inputs = [n in reached for n in params[len(j.constvars):]]
        body = free_at_last_use(size_reads + lines, set(params) | set(self.row_args)
                                 | set(_ARRAY_NAME.findall(ret)))
        self.publish("\n".join([f"def {self.name}({', '.join(params + self.row_args)}«SZ»):"]
                                + ["    " + s for s in body + [ret]]), params)


def own_buffers(lines):
    """The buffers of host ``lines`` that only their own allocation binds: made by
    ``_rt.empty`` (or ``_rt.scalar_buffer``) at the top level and named in no other
    binding statement (a view ``Y = X.reshape(...)``, a host call's result, a loop's
    swap), ``def`` or ``lambda``; the rest of the program only passes them to launches
    and calls.

    >>> sorted(own_buffers(["A = _rt.empty((3,), np.float64)", "_k0[1, 32](X, A)",
    ...                     "B = _rt.empty((3,), np.float64)", "V = B.reshape((1, 3))"]))
    ['A']
    """
    made, reached = _bindings(lines)
    return made - reached


def _bindings(lines, ones=()):
    """(the buffers top-level ``_rt.empty`` calls bind, the array names any other binding
    statement, ``def`` or ``lambda`` mentions). Reading the element of a 1-element
    buffer (``K[0]``: one made as such here, or one of ``ones``) gives a scalar, not a
    name for the buffer: a binding statement that only does that (a ``cond``'s index, a
    branch called with a scalar kept on the device) does not reach it."""
    pooled, reached = set(), set()
    ones = set(ones) | {m.group(1) for m in map(_ONE.match, lines) if m}

    def element(m):
        return "" if m.group(1) in ones else m.group(0)
    for s in lines:
        code = s.split("#", 1)[0]
        own = _EMPTY.match(code)
        if own:
            pooled.add(own.group(1))
        if _BINDS.match(code) or "def " in code or "lambda" in code:
            reached.update(n for n in _ARRAY_NAME.findall(_ELEMENT.sub(element, code))
                           if not (own and n == own.group(1)))
    return pooled, reached


def group_statements(lines):
    """Host lines as items for :func:`~.cuda_launches.fuse`: each top-level statement with
    its indented block as one text, launches as they are."""
    items = []
    for ln in lines:
        if isinstance(ln, str) and ln.startswith((" ", "\t")) and items \
                and isinstance(items[-1], str):
            items[-1] += "\n" + ln
        else:
            items.append(ln)
    return items


#: the fewest rows for which a reduction keeping the innermost axis splits its rows
#: among blocks (numba_cuda_emitter.CudaFunction.strategy)
SPLIT_MIN_ROWS = 64

_CLAUSE = re.compile(r"(else|elif|except|finally)\b")
_DEVICE_READ = re.compile(r"(?<![\w.])[A-Z_][A-Z0-9_]*\[")
_ARRAY_NAME = re.compile(r"(?<![\w.])([A-Z_][A-Z0-9_]*)(?![\w(])")


#: a statement binding names (``A = ...``, ``A, B = ...``), not an item assignment
_BINDS = re.compile(r"\s*[A-Za-z_][\w\s,]*=(?!=)")
_EMPTY = re.compile(r"([A-Z_][A-Z0-9_]*) = _rt\.(?:empty|scalar_buffer|dcopy)\(")
_ONE = re.compile(r"([A-Z_][A-Z0-9_]*) = _rt\.(?:empty\(\(1,\)|scalar_buffer\()")
_ELEMENT = re.compile(r"(?<![\w.])([A-Z_][A-Z0-9_]*)\[0\]")


def update_in_place(lines, donated=()):
    """The host statements with each copy that an update starts from (``X =
    _rt.dcopy(V)``, the operand of a scatter or a dynamic update, which then writes into
    ``X``) dropped where nothing reads ``V``'s buffer after it: ``X = V``, the update
    writes into that buffer. The buffer must be one this function may overwrite: made
    here (``_rt.empty``, ``_rt.dcopy``) or a parameter in ``donated`` (a host loop's
    carry, which the loop owns: ``CudaFunction.donated_params``); ``V`` may be a
    reshape of it (``V = F.reshape(...)``). Nothing reads it after when no later line
    names it or any other name bound to it. A loop's ``x = x.at[i].set(v)`` so costs
    no allocation and no copy of ``x`` per step. Returns the lines and the donated
    parameters overwritten.

    >>> update_in_place(["V = F.reshape((6,))", "X = _rt.dcopy(V)", "_k0[1, 32](X, U)",
    ...                  "Y = X.reshape((2, 3))", "return (Y,)"], {"F"})
    ... # doctest: +NORMALIZE_WHITESPACE
    (['V = F.reshape((6,))', 'X = V', '_k0[1, 32](X, U)', 'Y = X.reshape((2, 3))',
      'return (Y,)'], {'F'})

    A parameter not donated, or a buffer read after the copy, is copied as before:

    >>> update_in_place(["X = _rt.dcopy(F)", "_k0[1, 32](X, U)", "return (X,)"])[1]
    set()
    >>> update_in_place(["E = _rt.empty((3,), np.float64)", "X = _rt.dcopy(E)",
    ...                  "_k0[1, 32](X, E)", "return (X,)"])[0][1]
    'X = _rt.dcopy(E)'
    """
    out = list(lines)
    overwritten = set()
    for i, s in enumerate(out):
        m = _DCOPY.fullmatch(s)
        if not m:
            continue
        target, src = m.groups()
        root, views = buffer_root(src, out[:i])
        made = _made_here(root, out[:i])
        if not (made or root in donated):
            continue
        group, grew = set(views), True                # every name bound to the buffer
        while grew:
            grew = False
            for x in out:
                b = _VIEW_OF.fullmatch(x.strip())
                if b and b.group(2) in group and b.group(1) not in group:
                    group.add(b.group(1))
                    grew = True
        after = [x.split("#", 1)[0] for x in out[i + 1:]] + [
            x.split("#", 1)[0] for x in out[:i] if "def " in x or "lambda" in x]
        if any(n in _ARRAY_NAME.findall(x) for x in after for n in group):
            continue
        out[i] = f"{target} = {src}"
        if not made:
            overwritten.add(root)
    return out, overwritten


def buffer_root(name, lines):
    """The buffer that array ``name`` is at the end of host ``lines``, following
    top-level bindings ``V = F`` and ``V = F.reshape(...)`` back; and the names on the
    way."""
    root, views = name, {name}
    for prev in reversed(lines):
        b = _VIEW_OF.fullmatch(prev)
        if b and b.group(1) == root:
            root = b.group(2)
            views.add(root)
    return root, views


def _made_here(name, lines):
    """Whether top-level ``lines`` allocate ``name`` (``_rt.empty``, ``_rt.dcopy``)."""
    return any(re.fullmatch(rf"{name} = _rt\.(?:empty|dcopy)\(.*", x) for x in lines)


_DCOPY = re.compile(r"([A-Z_][A-Z0-9_]*) = _rt\.dcopy\(([A-Z_][A-Z0-9_]*)\)")
_VIEW_OF = re.compile(r"([A-Z_][A-Z0-9_]*) = ([A-Z_][A-Z0-9_]*)(?:\.reshape\(.*\))?")


def free_at_last_use(lines, params):
    """The host statements with ``del NAME`` after the top-level statement that last
    reads each device buffer the function allocated (array names are upper case), so its
    memory goes back to numba-cuda's allocator as soon as the program is done with it.
    Buffers the function returns are never deleted (the return reads them).

    A buffer made by ``_rt.empty`` that no other name can reach goes back to the
    runtime's pool instead (``_rt.give``, the caching allocator of cuda_runtime), for the
    next ``empty`` of its shape: one that only its own allocation binds, the rest of the
    program passing it to launches and calls. A buffer named in any other binding
    statement (a view ``Y = X.reshape(...)``, a host call's result, a loop's swap), or
    inside a ``def`` or ``lambda``, may be reachable after its last textual use and is
    only deleted.

    >>> free_at_last_use(["A = _rt.empty((3,), np.float64)", "_k0[1, 32](X, A)",
    ...                   "B = _rt.empty((3,), np.float64)", "_k1[1, 32](A, B)",
    ...                   "V = B.reshape((1, 3))", "_k2[1, 32](V, O)"], {"X", "O"})
    ... # doctest: +NORMALIZE_WHITESPACE
    ['A = _rt.empty((3,), np.float64)', '_k0[1, 32](X, A)',
     'B = _rt.empty((3,), np.float64)', '_k1[1, 32](A, B)', '_rt.give(A)', 'del A',
     'V = B.reshape((1, 3))', 'del B', '_k2[1, 32](V, O)', 'del V']

    An ``if`` statement ends after its ``else`` (a buffer read in one branch only is
    freed after both):

    >>> free_at_last_use(["E = _rt.empty((3,), np.float64)", "if n > 0:",
    ...                   "    _k0[1, 32](X, E)", "else:", "    X = None", "_k1[1, 32](X)"],
    ...                  {"X"})     # doctest: +NORMALIZE_WHITESPACE
    ['E = _rt.empty((3,), np.float64)', 'if n > 0:', '    _k0[1, 32](X, E)', 'else:',
     '    X = None', '_rt.give(E)', 'del E', '_k1[1, 32](X)']
    """
    blocks = []                       # [start, end) of each top-level statement
    for i, s in enumerate(lines):
        if not s.startswith(" ") and not s.startswith("#") and not (
                blocks and _CLAUSE.match(s)):   # an "else:" continues its "if" statement
            blocks.append([i, i + 1])
        elif blocks:
            blocks[-1][1] = i + 1
        else:
            blocks.append([i, i + 1])
    last, made = {}, set()
    for b, (lo, hi) in enumerate(blocks):
        for s in lines[lo:hi]:
            code = s.split("#", 1)[0]
            m = re.match(r"\s*([A-Z_][A-Z0-9_]*(?:\s*,\s*[A-Z_a-z][A-Za-z0-9_]*)*)\s*,?\s*=(?!=)",
                         code)
            if m and not s.startswith(" "):
                for n in re.split(r"\s*,\s*", m.group(1)):
                    if _ARRAY_NAME.fullmatch(n):
                        made.add(n)
            for n in _ARRAY_NAME.findall(code):
                last[n] = b
    own = own_buffers(lines)
    out = []
    for b, (lo, hi) in enumerate(blocks):
        out.extend(lines[lo:hi])
        dead = sorted(n for n in made if last.get(n) == b and n not in params
                      and not n.startswith("_"))
        back = [n for n in dead if n in own]
        if back:
            out.append("_rt.give(" + ", ".join(back) + ")")
        if dead:
            out.append("del " + ", ".join(dead))
    return out
