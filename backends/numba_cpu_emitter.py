"""The Numba-CPU emitter: one generated function (the kernel, or a control-flow body) as
Python over loop nests, from the planner's plan.

:class:`CpuFunction` is the CPU sibling of ``numba_cuda_emitter.CudaFunction`` on
``numba_emitter.NumbaFunction``: it writes each loop nest of the plan as nested ``for``
loops (the outermost a ``prange`` when the nest's work passes
``config.jit_parallel_threshold``), reductions as accumulators of the nest computing
their operand, an elementwise equation as its record's expression
(``numba_cpu_expressions``) and an opaque one as its record's statements
(``numba_cpu_statements``). The module around the functions (shared loop-nest pieces,
chunks of long bodies, imports) is ``numba_cpu``'s.
"""
import re

import numpy as np

from ..core import Literal
from ..errors import UnsupportedError
from .cpu_in_place import donate_in_place
from .numba_cpu_expressions import (COMPLEX_FAST_SIZE, FAST_MATH, complex_fast,
                                    expression_rule, import_helper, select_text)
from .numba_cpu_statements import statement_rule
from .numba_emitter import EwCtx, NumbaFunction, OpCtx, acc_dtype, dt_text, dtype_name
from .plan import LOWERINGS

__all__ = ["CpuFunction"]


_NEST_MARKER = re.compile("( *)(\u00abNEST:\\w+\u00bb)")


class CpuFunction(NumbaFunction):
    """One generated function (the kernel, or a control-flow body) in Numba-CPU Python: the
    emitter over :class:`~autodiff.backends.plan.Planner`'s plan."""

    #: a loop body's carries it may update in place (parameter position -> the position
    #: of the result that replaces it; :mod:`.cpu_in_place`), and, after the build, the
    #: parameter positions it does update in place (the loop copies those carries' initial
    #: values once)
    donated_params = {}
    overwritten = frozenset()
    RECOMPUTE_ACROSS_NESTS = True     # see Planner.recompute_in
    #: the overwritten carries the body does not return (the loop's name for each is the
    #: buffer written): all of them, unless the body is long enough to be cut into chunk
    #: functions, whose results the LLVM tier copies when they are a parameter's buffer
    unreturned = frozenset()

    def check_records(self):
        """Refuse (``UnsupportedError``, naming it) a program with a primitive this target
        has no text for: an elementwise one with neither a record nor a numpy function in
        its facts, an opaque one without a statement rule."""
        for e in self.jaxpr.eqns:
            low = LOWERINGS.get(e.primitive.name)
            if low is None:
                continue                  # the planner's own error (no record at all)
            missing = (expression_rule(e.primitive.name) is None if low.kind == "elementwise"
                       else low.kind == "opaque" and statement_rule(e.primitive.name) is None)
            if missing:
                raise UnsupportedError(
                    f"jit (cpu backend) has no lowering for primitive {e.primitive.name!r} "
                    f"(no CPU record, and no numpy function in its lowering facts); use "
                    f"backend='interpret' for this function", source=e.source)

    def ew_expr(self, e, args, idx):
        """The scalar expression of elementwise equation ``e`` over operand expressions."""
        o = e.outvars[0]
        ctx = EwCtx(self, e.params, o.aval.dtype, [u.aval.dtype for u in e.invars], idx)
        low = LOWERINGS[e.primitive.name]
        expr = expression_rule(e.primitive.name)(ctx, args)
        dt = o.aval.dtype
        if not (dt == np.float64 or e.primitive.name == "convert_element_type"
                or (dt == np.bool_ and low.bool_native)
                or (dt == np.complex128 and ctx.in_dtypes
                    and all(d == dt for d in ctx.in_dtypes))):
            expr = self.cast(expr, dt)
        return expr

    def emit_cluster(self, c, out):
        dom = c.domain
        r = len(dom)
        sizes = [self.size(cl) for cl in dom]
        idx = [f"i{k}" for k in range(r)]
        pre, body = [], []
        inits = {k: [] for k in range(r + 1)}
        finals = {k: [] for k in range(r + 1)}
        post_nest = []
        shape_txt = self.shape_of_names(sizes)
        can_prange = r >= 1
        numel = 1
        for cl in dom:
            numel *= self.D.value[cl]
        for kind, *rest in c.members:
            if kind in ("ew", "identity"):
                e = rest[0]
                o = e.outvars[0]
                body.append(self.eqn_comment(e))
                args = [self.read(u, c, idx) for u in e.invars]
                full = self.vidx(o, idx)
                expr = args[0] if kind == "identity" else self.ew_expr(e, args, full)
                body.append(f"{self.sname(o)} = {expr}")
                if o in c.stored:
                    pre.append(f"{self.aname(o)} = np.empty({self.shape(o)}, "
                               f"{dt_text(o.aval.dtype)})")
                    body.append(f"{self.aname(o)}[{', '.join(full)}] = {self.sname(o)}")
                if o in c.stored_as:                # see store_through
                    name, view, perm = c.stored_as[o]
                    pre.append(f"{name} = np.empty({self.shape(view)}, "
                               f"{dt_text(view.aval.dtype)})")
                    vix = ["0" if b is None else full[b] for b in perm]
                    body.append(f"{name}[{', '.join(vix)}] = {self.sname(o)}")
            elif kind == "copy":
                v, name = rest
                pre.append(f"{name} = np.empty({self.shape(v)}, {dt_text(v.aval.dtype)})")
                body.append(f"{name}[{', '.join(self.vidx(v, idx))}] = {self.read(v, c, idx)}"
                            f"  # copy {self.sname(v)}")
            else:  # reduce
                e = rest[0]
                ok = self.emit_reduce(e, c, idx, sizes, pre, body, inits, finals, post_nest)
                can_prange = can_prange and ok
        # threads pay when the loop's work, in "cheap elementwise operation" units, passes
        # config.jit_parallel_threshold: a loop of transcendentals goes parallel at a far
        # smaller size than a loop of additions (measured: ~2 µs per parallel launch here)
        weight = 1 + sum(LOWERINGS[m[1].primitive.name].cost for m in c.members
                         if m[0] in ("ew", "reduce"))
        par = can_prange and numel * weight >= self.mod.parallel_threshold
        if par:
            self.mod.parallel = True
        out.append(f"# ---- loop nest over {shape_txt if r else 'a scalar'}: "
                   f"{sum(1 for m in c.members if m[0] != 'copy')} fused equation(s)")
        out.extend(pre)
        order = self.loop_order(c, idx)

        def level(k, ind):
            for s in inits[k]:
                out.append("    " * ind + s)
            if k == r:
                for s in body:
                    out.append("    " * ind + s)
            else:
                rng = "prange" if (k == 0 and par) else "range"
                q = order[k]
                out.append("    " * ind + f"for {idx[q]} in {rng}({sizes[q]}):")
                level(k + 1, ind + 1)
            for s in finals[k]:
                out.append("    " * ind + s)
        level(0, 0)
        out.extend(post_nest)

    def emit_reduce(self, e, c, idx, sizes, pre, body, inits, finals, post_nest):
        """Accumulator code for a reduction; returns whether the nest may use prange."""
        u, o = e.invars[0], e.outvars[0]
        name = e.primitive.name
        # the reduced axes as positions of the loop domain (size-1 axes have no loop)
        pos, loop_pos = 0, {}
        for a, cl in enumerate(self.domain(u)):
            if not self.is_unit(cl):
                loop_pos[a] = pos
                pos += 1
        axes = sorted(loop_pos[a] for a in e.params["axes"] if a in loop_pos)
        r = len(idx)
        dt_in = u.aval.dtype
        dt_out = o.aval.dtype
        x = self.read(u, c, idx)
        body.append(self.eqn_comment(e))
        kind = name[len("reduce_"):]
        if dt_in == np.bool_ and kind == "sum":
            kind = "or"
        if dt_in == np.bool_ and kind == "prod":
            kind = "and"
        if kind in ("sum", "prod"):
            acc_dt = acc_dtype(dt_in)
            init = self.lit(0 if kind == "sum" else 1, acc_dt)
            xv = x if acc_dt == dt_in else self.cast(x, acc_dt)
            op = "+" if kind == "sum" else "*"

            def update(acc):
                return f"{acc} {op}= {xv}" if not acc.endswith("]") else f"{acc} = {acc} {op} {xv}"
        elif kind in ("max", "min") and dt_in.kind == "c":
            # numpy's maximum.reduce: acc = maximum(acc, x) (lexicographic, the first NaN
            # stays); from -inf-infj (+inf+infj), which any first element replaces
            acc_dt = dt_in
            inf = -np.inf if kind == "max" else np.inf
            init = self.lit(complex(inf, inf), dt_in)
            helper = import_helper(EwCtx(self, {}, dt_in, [], idx), f"c{kind}")

            def update(acc):
                return f"{acc} = {helper}({acc}, {x})"
        elif kind in ("max", "min"):
            acc_dt = dt_in
            if dt_in.kind == "f":
                init = self.lit(-np.inf if kind == "max" else np.inf, dt_in)
            elif dt_in == np.bool_:
                init = self.lit(kind == "min", dt_in)
            else:
                info = np.iinfo(dt_in)
                init = self.lit(info.min if kind == "max" else info.max, dt_in)
            cmp = ">=" if kind == "max" else "<="         # ties: the later element (numpy: ±0)

            def update(acc):
                cond = f"({x} {cmp} {acc})"
                if dt_in.kind == "f":
                    cond += f" | ({x} != {x})"
                return f"{acc} = {select_text(EwCtx(self, {}, dt_in, [], idx), cond, x, acc)}"
        else:  # and / or
            acc_dt = np.dtype(np.bool_)
            init = "True" if kind == "and" else "False"
            xv = x if dt_in == np.bool_ else f"({x} != 0)"
            op = "&" if kind == "and" else "|"

            def update(acc):
                return f"{acc} = {acc} {op} {xv}"
        kept = [k for k in range(r) if k not in axes]
        is_suffix = axes == list(range(r - len(axes), r))
        prange_ok = kind in ("sum", "prod") and dt_in.kind != "c"   # parfors: real reductions
        if is_suffix:
            k = r - len(axes)
            acc = f"{self.sname(o)}_acc"
            inits[k].append(f"{acc} = {init}")
            body.append(update(acc))
            val = acc if acc_dt == dt_out else self.cast(acc, dt_out)
            if o.aval.shape:
                pre.append(f"{self.aname(o)} = np.empty({self.shape(o)}, {dt_text(dt_out)})")
                finals[k].append(f"{self.aname(o)}[{', '.join(self.vidx(o, idx[:k]))}] = {val}")
            else:
                finals[k].append(f"{self.sname(o)} = {val}")
            return prange_ok or k > 0
        accn = f"{self.aname(o)}_ACC"
        pre.append(f"{accn} = np.full({self.shape(o)}, {init}, {dt_text(acc_dt)})")
        body.append(update(f"{accn}[{', '.join(self.vidx(o, [idx[k] for k in kept]))}]"))
        if acc_dt == dt_out:
            post_nest.append(f"{self.aname(o)} = {accn}")
        else:
            post_nest.append(f"{self.aname(o)} = {accn}.astype({dt_text(dt_out)})")
        return False

    def build(self):
        j = self.jaxpr
        self.check_dtypes("cpu")
        self.check_records()
        self.analyse()
        plan = self.kernel_plan = self.plan()
        rets = []
        seen = set()
        for v, ref in zip(j.outvars, plan.outputs):
            if isinstance(v, Literal):
                rets.append(self.jlit(v) if v.aval.dtype == np.float64
                            else self.cast(self.jlit(v), v.aval.dtype))
                continue
            if not v.aval.shape:
                expr = ref[2]
                rets.append(expr if (self.top and v.aval.dtype == np.float64)
                            else self.cast(expr, v.aval.dtype))
                continue
            name = ref[2]
            if self.top and (ref[3] or name in seen):
                name = f"{name}.copy()"      # never hand the caller an alias of its input
            seen.add(ref[2])
            rets.append(name)
        lines = self.plan_lines(plan, self.nest_lines)
        params = [self.aname(v) if v.aval.shape else self.sname(v)
                  for v in list(j.constvars) + list(j.invars)]
        head = f"def {self.name}({', '.join(params)}«SZ»):"
        size_reads = [f"n{k} = slot_i64(_sz, {k})" for k in sorted(set(self.slots_used))
                      if f"n{k}" in self.used_size_names()]
        if size_reads:
            self.mod.imports_runtime.add("slot_i64")
        size_reads += self.lit_reads
        if self.top and len(rets) == 1:
            ret = f"return {rets[0]}"
        else:
            ret = f"return ({', '.join(rets)}{',' if len(rets) == 1 else ''})"
        if self.donated_params:
            lines = self._update_in_place(lines, params, ret)
            if self.overwritten and not self._may_be_chunked(lines, size_reads):
                # a carry updated in place is not returned: the loop's name for it is
                # the buffer the body wrote into
                self.unreturned = self.overwritten
                drop = {self.donated_params[p] for p in self.overwritten}
                rets = [r for i, r in enumerate(rets) if i not in drop]
                ret = f"return ({', '.join(rets)}{',' if len(rets) == 1 else ''})"
        text = [head] + ["    " + s for s in size_reads + lines + [ret]]
        self.publish("\n".join(text), params)


    def _update_in_place(self, lines, params, ret):
        """``lines`` with the copies of donated carries that nothing reads after them
        dropped (:func:`.cpu_in_place.donate_in_place`); sets ``overwritten``."""
        j = self.jaxpr
        ranks = {params[i]: len(v.aval.shape)
                 for i, v in enumerate(list(j.constvars) + list(j.invars))}
        donated = {params[p]: r for p, r in self.donated_params.items() if ranks[params[p]]}

        def expand(line):
            m = _NEST_MARKER.fullmatch(line)
            if m is None:
                return line.split("\n")
            return [m.group(1) + ln for ln in self.mod.nests[m.group(2)][0]]
        lines, written = donate_in_place(lines, expand, donated, ranks, ret)
        self.overwritten = frozenset(p for p in self.donated_params if params[p] in written)
        return lines

    def _may_be_chunked(self, lines, size_reads):
        """Whether this function's text may be long enough for ``numba_cpu`` to cut it into
        chunk functions (counted with every loop nest inline: at least the final length)."""
        from .numba_cpu import CHUNK_LINES
        n = len(size_reads) + 2
        for line in lines:
            m = _NEST_MARKER.fullmatch(line)
            n += len(self.mod.nests[m.group(2)][0]) if m else line.count("\n") + 1
        return n > CHUNK_LINES

    def nest_lines(self, c, lines):
        """Loop nest ``c``'s text, appended to ``lines`` (an outlined nest: the line that
        stands for it)."""
        if c.domain and self.mod.outline_loops:
            nest = []
            self.emit_cluster(c, nest)
            lines.extend(self.mod.outline(nest))
        else:
            self.emit_cluster(c, lines)

    # ------------------------------------------------------------------ planner hooks
    def code_size(self, e):
        """Code inlined into a loop body by equation ``e`` (LOOP_BUDGET units)."""
        low = LOWERINGS[e.primitive.name]
        if low.code_size and (e.primitive.name, dtype_name(e.outvars[0].aval.dtype)) in FAST_MATH:
            return low.code_size
        if e.outvars[0].aval.dtype.kind == "c" and complex_fast(e.primitive.name):
            return COMPLEX_FAST_SIZE
        return 2 if low.cost > 1 else 1

    def reshape_lines(self, e, ref):
        """A reshape that moves elements: numpy's reshape of the (contiguous) operand."""
        return [self.eqn_comment(e), f"{self.aname(e.outvars[0])} = "
                f"{ref[2]}.reshape({self.shape(e.outvars[0])})"]

    def opaque_lines(self, e, refs, outs):
        """The statements of an opaque equation: its record's emitter."""
        lines = [self.eqn_comment(e)]
        statement_rule(e.primitive.name)(OpCtx(self, e, refs, outs, lines))
        return lines

    def materialize_lines(self, v, name, els):
        """An array ``name`` holding the unrolled value ``v`` (expressions ``els``)."""
        lines = [f"{name} = np.empty({self.shape(v)}, {dt_text(v.aval.dtype)})"]
        for flat, x in enumerate(els):
            idx = ", ".join(str(i) for i in np.unravel_index(flat, v.aval.shape))
            lines.append(f"{name}[{idx}] = {x}")
        return lines

    def reduce_group_lines(self, kind, acc, xs, dt_in, dt_out):
        """Statements computing one unrolled reduction ``acc`` over element expressions."""
        lines = []
        if kind in ("sum", "prod"):   # in the accumulator type of the loop version
            acc_dt = acc_dtype(dt_in)
            terms = [x if acc_dt == dt_in else self.cast(x, acc_dt) for x in xs]
            expr = (" + " if kind == "sum" else " * ").join(terms)
            lines.append(f"{acc} = {expr if acc_dt == dt_out else self.cast(expr, dt_out)}")
        elif kind in ("max", "min") and dt_in.kind == "c":      # as the loop version
            helper = import_helper(EwCtx(self, {}, dt_in, [], []), f"c{kind}")
            lines.append(f"{acc} = {xs[0]}")
            for x in xs[1:]:
                lines.append(f"{acc} = {helper}({acc}, {x})")
        elif kind in ("max", "min"):
            cmp = ">=" if kind == "max" else "<="     # ties: the later element (numpy: ±0)
            lines.append(f"{acc} = {xs[0]}")
            ctx = EwCtx(self, {}, dt_in, [], [])
            for x in xs[1:]:
                cond = f"({x} {cmp} {acc})"
                if dt_in.kind == "f":
                    cond += f" | ({x} != {x})"
                lines.append(f"{acc} = {select_text(ctx, cond, x, acc)}")
        else:
            terms = [x if dt_in == np.bool_ else f"({x} != 0)" for x in xs]
            lines.append(f"{acc} = {(' & ' if kind == 'and' else ' | ').join(terms)}")
        return lines
