"""What the two Numba emitters share: text of dtypes and literals, the contexts their
lowering records see, and :class:`NumbaFunction`, the base of one generated function.

Both targets write Python for Numba over the planner's plan (``backends/plan.py``): the
CPU emitter (``numba_cpu_emitter.CpuFunction``: loop nests, ``prange``) and the CUDA one
(``numba_cuda_emitter.CudaFunction``: kernels and the host function launching them) are
siblings on :class:`NumbaFunction`, which holds what their texts have in common (reading
a value at a loop index, literals, equation comments) and overrides nothing of theirs.
A lowering record of either target sees an :class:`EwCtx` (an elementwise expression's
dtypes, parameters and loop indices) or an :class:`OpCtx` (an opaque equation's operand
references and result names, and an indented statement writer). The statement rules
both targets write alike live here too: ``cond`` and ``while`` (calls of the bodies'
functions), the clamped starts of a dynamic slice, integer powers.

>>> from autodiff.backends.numba_emitter import dt_text, float_text
>>> dt_text("float32"), float_text(-0.5), float_text(float("inf"))
('np.float32', '(-0.5)', 'np.inf')
"""
import contextlib

import numpy as np

from ..core import SIZE_PARAMS, ClosedJaxpr, DropVar, Jaxpr, Literal, Var, pp_param
from .kernel_plan import Materialize, Opaque, ReduceGroups, Reshape, Unrolled
from .plan import Planner, parenthesized

__all__ = ["is_float", "is_complex", "dt_text", "dtype_name", "SHORT_DTYPES", "acc_dtype",
           "float_text", "EwCtx", "OpCtx", "NumbaFunction", "ModuleBase", "sub_jaxpr",
           "call_text", "carry_init", "clamped_start", "clamped_starts", "cond_statement",
           "while_statement", "integer_pow_text", "has_arrays", "uses_primitive",
           "scatter_text"]


# =====================================================================================
# Text of dtypes and literals
# =====================================================================================

def is_float(dt):
    return dt.kind == "f" if isinstance(dt, np.dtype) else np.dtype(dt).kind == "f"


def is_complex(dt):
    return dt.kind == "c" if isinstance(dt, np.dtype) else np.dtype(dt).kind == "c"


_DT_TEXT = {}


def dt_text(dtype):
    """Numba/numpy name of a dtype, as written in generated source."""
    got = _DT_TEXT.get(dtype)
    if got is None:
        d = np.dtype(dtype)
        got = _DT_TEXT[dtype] = "np.bool_" if d == np.bool_ else f"np.{d.name}"
    return got


_DT_NAME = {}


def dtype_name(dtype):
    """``dtype.name`` (a slow property in numpy), memoized."""
    got = _DT_NAME.get(dtype)
    if got is None:
        got = _DT_NAME[dtype] = np.dtype(dtype).name
    return got


#: short dtype names of equation comments and kernel signatures
SHORT_DTYPES = {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32",
                "int16": "i16", "int8": "i8", "uint8": "u8", "uint16": "u16", "uint32": "u32",
                "uint64": "u64", "bool": "bool"}

_ACC_DTYPES = {"f": np.dtype(np.float64), "c": np.dtype(np.complex128),
               "u": np.dtype(np.uint64), "i": np.dtype(np.int64), "b": np.dtype(np.int64)}


def acc_dtype(dt):
    """The accumulator dtype of a sum or product: float64 for floats, complex128 for
    complex numbers, uint64 for unsigned and int64 for other integers."""
    return _ACC_DTYPES[dt.kind]


def float_text(f):
    """A float64 as source text (parenthesized when negative)."""
    if np.isnan(f):
        return "np.nan"
    if np.isinf(f):
        return "np.inf" if f > 0 else "(-np.inf)"
    text = repr(f)
    return f"({text})" if f < 0 or text.startswith("-") else text


# =====================================================================================
# What a lowering record sees
# =====================================================================================

class EwCtx:
    """An elementwise record's context: the function being emitted (``fb``), the
    equation's ``params``, its output and operand dtypes, and the loop indices."""

    __slots__ = ("fb", "params", "out_dtype", "in_dtypes", "idx")

    def __init__(self, fb, params, out_dtype, in_dtypes, idx):
        self.fb, self.params, self.out_dtype, self.in_dtypes, self.idx = \
            fb, params, np.dtype(out_dtype), [np.dtype(d) for d in in_dtypes], idx

    @property
    def complex(self):
        """Whether a complex value is among the output and the operands."""
        return self.out_dtype.kind == "c" or any(d.kind == "c" for d in self.in_dtypes)

    def lit(self, v, dtype):
        return self.fb.lit(v, dtype)


class OpCtx:
    """What an opaque lowering rule sees: refs of its operands, names of its results."""

    def __init__(self, fb, e, ins, outs, lines):
        self.fb = fb
        self.e = e
        self.ins = ins          # ("array", ready, NAME, alias) | ("scalar", ready, expr)
        self.outs = outs        # ("array", NAME) | ("scalar", name) | ("drop", name)
        self.lines = lines
        self.ind = 0
        self.p = e.params

    def emit(self, s):
        self.lines.append("    " * self.ind + s)

    @contextlib.contextmanager
    def block(self, header):
        self.emit(header)
        self.ind += 1
        try:
            yield
        finally:
            self.ind -= 1

    @contextlib.contextmanager
    def loops(self, sizes, reverse_at=None):
        """Nested loops over ``sizes``; yields the index names."""
        names = [self.fb.tmp("j") for _ in sizes]
        opened = 0
        for k, (n, s) in enumerate(zip(names, sizes)):
            if reverse_at == k:
                self.emit(f"for {n} in range({s} - 1, -1, -1):")
            else:
                self.emit(f"for {n} in range({s}):")
            self.ind += 1
            opened += 1
        try:
            yield names
        finally:
            self.ind -= opened

    def invar(self, i):
        return self.e.invars[i]

    def outvar(self, i):
        return self.e.outvars[i]

    def dims_in(self, i):
        v = self.e.invars[i]
        return self.fb.dims(v) if isinstance(v, Var) else []

    def dims_out(self, i):
        return self.fb.dims(self.e.outvars[i]) if not isinstance(self.e.outvars[i], DropVar) \
            else [self.fb.size_param(s) for s in self.e.outvars[i].aval.shape]

    def shape_out(self, i):
        return self.fb.shape_of_names(self.dims_out(i))

    def rd(self, i, idx):
        """Read operand ``i`` at index list ``idx`` (scalars ignore the index)."""
        ref = self.ins[i]
        if ref[0] == "scalar":
            return ref[2]
        return f"{ref[2]}[{', '.join(idx)}]"

    def arr(self, i):
        return self.ins[i][2]

    def out(self, i):
        return self.outs[i][1]

    def alloc(self, i, dtype=None, fill=None):
        kind, name = self.outs[i]
        v = self.e.outvars[i]
        dt = dt_text(dtype or v.aval.dtype)
        if kind == "scalar" or (kind == "drop" and not v.aval.shape):
            return
        if fill is None:
            self.emit(f"{name} = np.empty({self.shape_out(i)}, {dt})")
        else:
            self.emit(f"{name} = np.full({self.shape_out(i)}, {fill}, {dt})")

    def wr(self, i, idx, value):
        kind, name = self.outs[i]
        if kind == "scalar" or (kind == "drop" and not self.e.outvars[i].aval.shape):
            self.emit(f"{name} = {value}")
        else:
            self.emit(f"{name}[{', '.join(idx)}] = {value}")

    def prod(self, names):
        return " * ".join(names) if names else "1"

    def lit(self, v, dtype):
        return self.fb.lit(v, dtype)

    def cast(self, x, dtype):
        return self.fb.cast(x, dtype)


# =====================================================================================
# The module and the function: what both targets' versions share
# =====================================================================================

class ModuleBase:
    """What the planner and the records expect of a generated module: run-time size slots
    (``sizes``) and named module constants (``consts``, ``const_lines``)."""

    def slot(self, value):
        self.sizes.append(int(value))
        return len(self.sizes) - 1

    def global_const(self, text):
        name = self.consts.get(text)
        if name is None:
            name = f"_lit{len(self.consts)}"
            self.consts[text] = name
            self.const_lines.append(f"{name} = {text}")
        return name


class NumbaFunction(Planner):
    """One generated function in Numba Python: the planner's hooks both targets write
    alike. A target's subclass adds its expressions (``ew_expr``), its loop nests
    (``emit_cluster``), its statements (``opaque_lines``, ``reshape_lines``,
    ``materialize_lines``, ``reduce_group_lines``) and the function (``build``), which
    renders the :class:`~autodiff.backends.kernel_plan.KernelPlan` that ``plan()``
    returns."""

    def statement_lines(self, st):
        """The text of plan statement ``st`` (a :class:`~.kernel_plan.Statement`)."""
        if st.lines is not None:
            return st.lines
        if isinstance(st, Opaque):
            return self.opaque_lines(st.eqn, st.refs, st.outs)
        if isinstance(st, Reshape):
            return self.reshape_lines(st.eqn, st.ref)
        if isinstance(st, Materialize):
            return self.materialize_lines(st.var, st.name, st.els)
        lines = [self.eqn_comment(st.eqn)]
        if isinstance(st, Unrolled):
            lines += [self.assign(name, self.ew_expr(st.eqn, args, idx))
                      for name, args, idx in zip(st.names, st.cols, st.idxs)]
        elif isinstance(st, ReduceGroups):
            for acc, xs in st.groups:
                lines += self.reduce_group_lines(st.kind, acc, xs, st.dt_in, st.dt_out)
        else:
            raise TypeError(f"not a statement of the plan: {st!r}")
        return lines

    def plan_lines(self, plan, nest_lines):
        """The function body's statements: ``plan``'s entry statements, then each nest
        (``nest_lines(nest, out)`` appends its text) followed by its statements."""
        lines = []
        for st in plan.entry:
            lines.extend(self.statement_lines(st))
        for c in plan.nests:
            nest_lines(c, lines)
            for st in c.post:
                lines.extend(self.statement_lines(st))
        return lines

    def publish(self, text, params):
        """Add this function's ``text`` to its module; a nested function whose body another
        one already has (a PRNG's rounds in every draw, a layer's scan) becomes that one."""
        self.text = text.replace("(«SZ»", "(«SZ0»")
        self.params = params
        if not self.top:
            same = self.text.replace(f"def {self.name}(", "def «F»(", 1)
            got = self.mod.sub_texts.get(same)
            if got is not None:
                self.name = got
                return
            self.mod.sub_texts[same] = self.name
        self.mod.functions.append(self.text)

    def shape(self, v):
        d = self.dims(v)
        return "(" + ", ".join(d) + ("," if len(d) == 1 else "") + ")"

    def shape_of_names(self, names):
        return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"

    def lit(self, v, dtype):
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return "True" if bool(v) else "False"
        if dtype.kind == "f":
            text = float_text(float(v))
            if dtype == np.float64:
                return text
            return self.mod.global_const(f"np.{dtype.name}({text.strip('()')})")
        if dtype.kind == "c":      # a module constant: np.complex128(complex(re, im))
            c = complex(np.asarray(v).item())
            parts = ", ".join(float_text(t).strip("()") for t in (c.real, c.imag))
            return self.mod.global_const(f"np.{dtype.name}(complex({parts}))")
        iv = int(v)
        if dtype == np.int64:
            return f"({iv})" if iv < 0 else str(iv)
        return self.mod.global_const(f"np.{dtype.name}({iv})")

    def cast(self, expr, dtype):
        return f"{dt_text(dtype)}({expr})"

    def jlit(self, v):
        """A literal of the jaxpr. In kernels over arrays its value is read from ``_sz`` at
        run time (``c<k>``): literals such as a mean's ``1/n`` derive from sizes, and the
        source must not depend on sizes. Scalar-only kernels keep literals inline."""
        dt = v.aval.dtype
        if not self.mod.param_literals or dt == np.bool_:
            return self.lit(v.val, dt)
        got = self.lit_names.get(id(v))
        if got is None and dt.kind == "c":         # two slots: the parts' bits
            self.mod.imports_runtime.add("slot_f64")
            c = complex(np.asarray(v.val).item())
            k, k2 = (self.mod.slot(int(np.asarray(t, np.float64).view(np.int64)))
                     for t in (c.real, c.imag))
            read = f"complex(slot_f64(_sz, {k}), slot_f64(_sz, {k2}))"
            self.lit_reads.append(f"c{k} = {dt_text(dt)}({read})")
            self.slots_used.extend((k, k2))
            got = self.lit_names[id(v)] = f"c{k}"
        if got is None:
            self.mod.imports_runtime.add("slot_i64" if dt.kind != "f" else "slot_f64")
            if dt.kind == "f":
                bits = int(np.asarray(v.val, np.float64).view(np.int64))
                k = self.mod.slot(bits)
                read = f"slot_f64(_sz, {k})"
            else:
                k = self.mod.slot(int(np.asarray(v.val).astype(np.int64)))
                read = f"slot_i64(_sz, {k})"
            self.lit_reads.append(f"c{k} = {read}" if dt in (np.float64, np.int64) else
                                  f"c{k} = {dt_text(dt)}({read})")
            self.slots_used.append(k)
            got = self.lit_names[id(v)] = f"c{k}"
        return got

    def eqn_comment(self, e):
        def decl(v):
            if isinstance(v, DropVar):
                return "_"
            n = dtype_name(v.aval.dtype)
            dt = SHORT_DTYPES.get(n, n)
            return f"{self.names[v]}:{dt}[{','.join(self.dims(v))}]"

        def arg(v):
            if isinstance(v, Literal):
                if self.mod.param_literals and v.aval.dtype != np.bool_:
                    return self.jlit(v)
                return repr(v.val.item()) if hasattr(v.val, "item") else repr(v.val)
            return self.names.get(v, "?")
        params = []
        for k, p in sorted(e.params.items()):
            if k in SIZE_PARAMS:
                params.append(f"{k}=…")
            elif isinstance(p, (Jaxpr, ClosedJaxpr)) or (
                    isinstance(p, tuple) and p and isinstance(p[0], (Jaxpr, ClosedJaxpr))):
                params.append(f"{k}=<jaxpr>")
            elif callable(p) and not isinstance(p, type):
                params.append(f"{k}=<fn>")
            else:
                params.append(f"{k}={pp_param(p, k, 0)}")
        ptxt = f"[{' '.join(params)}]" if params else ""
        outs = " ".join(decl(v) for v in e.outvars)
        ins = " ".join(arg(v) for v in e.invars)
        return f"# {outs} = {e.primitive.name}{ptxt} {ins}".rstrip()

    def read(self, v, c, idx):
        """Expression for the value of ``v`` at domain index ``idx`` inside cluster ``c``."""
        if isinstance(v, Literal):
            return self.jlit(v)
        loc = self.loc[v]
        k = loc[0]
        if k == "elems":                      # loops read its array (see materialize)
            return f"{self.materialize(v)[2]}[{', '.join(self.vidx(v, idx))}]"
        if k == "alias":                      # the same loop index reads the source value
            return self.read(loc[1], c, idx)
        if k == "gen":                        # recomputed from this loop's indices
            e = loc[1]
            args = [self.read(u, c, idx) for u in e.invars]
            return parenthesized(self.ew_expr(e, args, self.vidx(v, idx)))
        if k == "fused":
            if loc[1] is c:
                return self.sname(v)
            if v in self.recomputed and v not in loc[1].stored:
                # a cheap value of an earlier nest, recomputed here (Planner.recompute_in)
                e = self.producer[v]
                args = [self.read(u, c, idx) for u in e.invars]
                return parenthesized(self.ew_expr(e, args, self.vidx(v, idx)))
            return f"{self.aname(v)}[{', '.join(self.vidx(v, idx))}]"
        if k == "scalar":
            return loc[2]
        if k == "array":
            return f"{loc[2]}[{', '.join(self.vidx(v, idx))}]"
        if k == "view":
            base, imap = loc[1], loc[2]
            if base[0] == "scalar":
                return base[2]
            full = self.vidx(v, idx)
            bidx = imap(full) if imap is not None else full
            return f"{base[2]}[{', '.join(bidx)}]"
        raise AssertionError(loc)

    @staticmethod
    def assign(name, expr):
        return f"{name} = {expr}"


# =====================================================================================
# Statements both targets write alike
# =====================================================================================

def sub_jaxpr(p):
    """The Jaxpr of a control-flow parameter (closed or not)."""
    return p.jaxpr if isinstance(p, ClosedJaxpr) else p


def call_text(fn, args):
    """A call of generated function ``fn`` (its size and equation arguments follow)."""
    return f"{fn.name}({', '.join(args)}«SZ»)" if args else f"{fn.name}(«SZ0»)"


def carry_init(ctx, ref, aval):
    """A loop carry's initial value from its operand's reference."""
    if ref[0] == "scalar":
        return ctx.cast(ref[2], aval.dtype)
    return ref[2]


def scatter_text(kind, dt, at, u):
    """What a scatter of ``kind`` (both targets) writes at ``at`` for the update ``u``: the update
    (``set``), or ``at`` combined with it as numpy's ``add``/``multiply``/``maximum``/
    ``minimum`` (a NaN on either side wins; on a tie the update, numpy's second operand)."""
    if kind == "set":
        return u
    if kind in ("add", "mul"):
        return f"{at} {'+' if kind == 'add' else '*'} {u}"
    cmp = ">" if kind == "max" else "<"
    if np.dtype(dt).kind == "f":
        return f"{at} if ({at} {cmp} {u} or {at} != {at}) else {u}"
    return f"{at} if {at} {cmp} {u} else {u}"


def clamped_start(t, s, n, w):
    """The line setting ``t`` to a dynamic slice's start ``s`` clamped into
    ``[0, n - w]`` (host code, or a CUDA kernel's)."""
    return f"{t} = min(max(np.int64({s}), 0), {n} - {w})"


def clamped_starts(ctx, start_refs, xdims, wdims):
    """Locals holding a dynamic slice's starts clamped into ``[0, n - w]``."""
    out = []
    for s, n, w in zip(start_refs, xdims, wdims):
        t = ctx.fb.tmp("st")
        ctx.emit(clamped_start(t, s, n, w))
        out.append(t)
    return out


def cond_statement(ctx):
    """``cond``: the chosen branch's function called with the operands."""
    branches = ctx.p["branches"]
    fns = [ctx.fb.mod.sub_function(sub_jaxpr(b), "branch") for b in branches]
    ops = [r[2] for r in ctx.ins[1:]]
    k = ctx.fb.tmp("br")      # not "_k<n>": the CUDA module's kernels are named so
    ctx.emit(f"{k} = min(max(np.int64({ctx.rd(0, [])}), 0), {len(fns) - 1})")
    outs = [n for _, n in ctx.outs]
    tgt = ", ".join(outs) + ("," if len(outs) == 1 else "")
    for i, fn in enumerate(fns):
        hdr = "if" if i == 0 else "elif"
        if i == len(fns) - 1:
            hdr_line = "else:" if i > 0 else "if True:"
        else:
            hdr_line = f"{hdr} {k} == {i}:"
        with ctx.block(hdr_line):      # no results: a cond kept for its effects
            ctx.emit(f"{tgt} = {call_text(fn, ops)}" if outs else call_text(fn, ops))


def while_statement(ctx, recycle=None, device=None, donate=False):
    """``while``: a loop calling the predicate's and the body's functions.
    ``recycle(ctx, body, carry, first)`` (the CUDA target's
    ``numba_cuda_statements.recycling``) writes, before each call of the body, what the
    step needs to give its buffers back, and returns ``give_back(step)`` for after it.
    ``device`` (the CUDA target's ``numba_cuda_statements.DeviceCarries``): the rank-0
    carries both functions take and the body returns in 1-element device buffers, and
    the array carries the body may update in place. ``donate`` (the CPU target): the body
    may update its carries in place (``CpuFunction.donated_params``); the initial value
    of each one it does is copied once, and the body returns only the others."""
    p = ctx.p
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    kw_c, kw_b = {}, {}
    if donate:
        kw_b = {"donated_params": {nb + i: i for i in range(len(ctx.outs))}}
    if device is not None:
        kw_c = {"device_params": device.params(nc)}
        kw_b = {"device_params": device.params(nb), "device_rets_must": device.dev,
                "donated_params": device.donated}
    cf = ctx.fb.mod.sub_function(sub_jaxpr(p["cond_jaxpr"]), "cond", **kw_c)
    bf = ctx.fb.mod.sub_function(sub_jaxpr(p["body_jaxpr"]), "body", **kw_b)
    refs = ctx.ins
    cc = [r[2] for r in refs[:nc]]
    bc = [r[2] for r in refs[nc:nc + nb]]
    carry = [n for _, n in ctx.outs]
    if device is not None:
        carry = device.init(ctx, carry, refs[nc + nb:], ctx.e.invars[nc + nb:])
        device.own(ctx, bf, carry, nb)
    ow = bf.overwritten if donate else ()
    if device is None:
        for i, (name, ref, v) in enumerate(zip(carry, refs[nc + nb:], ctx.e.invars[nc + nb:])):
            init = carry_init(ctx, ref, v.aval)
            ctx.emit(f"{name} = {init}.copy()" if nb + i in ow else f"{name} = {init}")
    kept = [c for i, c in enumerate(carry) if nb + i not in (bf.unreturned if donate else ())]
    tgt = ", ".join(kept) + ("," if len(kept) == 1 else "")
    maxs = p.get("max_steps")
    step = ctx.fb.tmp("step")
    ctx.emit(f"{step} = 0")
    pr = ctx.fb.tmp("pred")
    with ctx.block("while True:"):
        if maxs is not None:
            with ctx.block(f"if {step} >= {int(maxs)}:"):
                ctx.emit("break")
        ctx.emit(f"({pr},) = {call_text(cf, cc + carry)}")
        with ctx.block(f"if not {pr}:"):
            ctx.emit("break")
        give_back = recycle(ctx, bf, carry, nb) if recycle is not None else None
        ctx.emit(f"{tgt} = {call_text(bf, bc + carry)}" if kept else call_text(bf, bc + carry))
        if give_back is not None:
            give_back(step)
        ctx.emit(f"{step} += 1")
    if device is not None:
        device.keep(ctx, carry)


def integer_pow_text(ctx, x, complex_power):
    """``x ** y`` for the equation's integer ``y``: products for ``|y| <= 4`` (a
    reciprocal for negative ``y``), ``complex_power(x, y)`` for a complex ``x`` beyond
    ``0 < y <= 3`` (numpy's binary exponentiation)."""
    y = ctx.params["y"]
    dt = ctx.out_dtype
    if y == 0:
        return ctx.lit(1, dt)
    if is_complex(dt) and not 0 < y <= 3:
        return complex_power(x, y)
    n = abs(y)
    body = " * ".join([x] * n) if n <= 4 else f"{x} ** {n}"
    if y < 0:
        one = ctx.lit(1, dt if is_float(dt) else np.float64)
        return f"{one} / ({body})"
    return body


# =====================================================================================
# Walks of a program
# =====================================================================================

def _sub_programs(e):
    for p in e.params.values():
        for q in (p if isinstance(p, tuple) else (p,)):
            if isinstance(q, (Jaxpr, ClosedJaxpr)):
                yield sub_jaxpr(q)


def uses_primitive(jaxpr, name):
    """Whether ``jaxpr`` or a program inside it has an equation of primitive ``name``."""
    for e in jaxpr.eqns:
        if e.primitive.name == name or any(uses_primitive(q, name) for q in _sub_programs(e)):
            return True
    return False


def has_arrays(jaxpr):
    """Whether a value of ``jaxpr`` or of a program inside it is an array (not a scalar)."""
    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        if v.aval.shape:
            return True
    for e in jaxpr.eqns:
        if any(v.aval.shape for v in e.outvars) or any(has_arrays(q)
                                                        for q in _sub_programs(e)):
            return True
    return False
