"""The CUDA statements of the opaque primitives: kernels of their own, library calls, host
loops over control-flow bodies, and the host fallback.

Each record writes an opaque equation as host statements of the program's host function
(launches of the kernels it registers, ``_rt`` calls). Data movement (``pad``,
``concatenate``, dynamic slices, gathers and scatters) and the cumulative primitives are
kernels with one thread per output element or lane, ``argmax``/``argmin`` reductions of
(value, index) pairs (:func:`_argext_strategy`); a
cumulative primitive needs no record (:func:`cumulative_statement`: its lowering facts
name the elementwise primitive combining the running value with the next element, whose
CUDA expression it uses). ``dot_general`` is cuBLAS through CuPy (else a tiled kernel),
the factorizations cuSOLVER (else host LAPACK), ``cond``/``while``/``scan`` host loops
over their bodies' functions; an opaque primitive without a record runs on the host
(:func:`host_statement`: numpy on a host copy, one copy each direction).

>>> from autodiff.backends.numba_cuda_statements import statement_rule
>>> statement_rule("gather").complex, statement_rule("cumsum").emit.__name__
(True, 'cumulative_statement')
"""
import contextlib
import re

import numpy as np

from ..avals import real_dtype
from ..config import config
from ..core import Var, primitives
from . import numba_cuda_linalg as small_linalg
from .kernel_plan import Row, Transpose
from .numba_cuda_expressions import Record, expression_rule
from .numba_emitter import (EwCtx, call_text, carry_init, clamped_start, cond_statement,
                            dt_text, scatter_text, sub_jaxpr, while_statement)

__all__ = ["STATEMENTS", "register_statement", "statement_rule", "host_statement",
           "cumulative_statement", "GLOBALS", "free_names", "unravel_lines",
           "simpler_dots"]

#: name -> Record: the opaque primitives with CUDA statements of their own
STATEMENTS = {}


def register_statement(name, emit, complex=False):
    """Declare opaque primitive ``name``'s CUDA statement rule ``emit(ctx)``; ``complex``:
    whether its kernels take complex values as they are."""
    STATEMENTS[name] = Record(emit=emit, complex=complex)


def statement_rule(name):
    """Opaque primitive ``name``'s CUDA record: its own, else the default its facts give (a
    cumulative primitive's), else None (a host call: :func:`host_statement`)."""
    rec = STATEMENTS.get(name)
    if rec is not None:
        return rec
    facts = getattr(primitives.get(name), "lowering", None)
    if facts is not None and facts.kind == "cumulative":
        combine = expression_rule(facts.combine)
        return Record(emit=cumulative_statement, complex=combine is not None and combine.complex)
    return None


# names a kernel reads that are not its parameters: the module's imports and the builtins the
# expressions use. ``complex`` (the ``complex`` primitive, complex literals) must be here: a
# builtin class left out became a kernel *argument*, which the simulator accepts and the real
# compiler refuses ("Cannot determine Numba type of <class 'type'>": issue 32)
GLOBALS = {"cuda", "np", "_dm", "_hc", "_rt", "_TPB", "range", "len", "abs", "min", "max",
            "complex", "True", "False", "slot_i64", "slot_f64"}


def free_names(text, consts):
    """Names a kernel body reads that it does not define: its parameters, in order
    (``cuda_launches.free_names_of``, less the module's named constants)."""
    from .cuda_launches import free_names_of
    skip = GLOBALS | set(consts)
    return [n for n in free_names_of(text.split("\n")) if n not in skip]


def unravel_lines(flat, pos, sizes, idx):
    """Statements setting the indices ``idx[k]`` (k in ``pos``) from flat index ``flat``."""
    if not pos:
        return []
    if len(pos) == 1:
        return [f"{idx[pos[0]]} = {flat}"]
    lines = [f"_q = {flat}"]
    for k in reversed(pos[1:]):
        lines += [f"{idx[k]} = _q % {sizes[k]}", f"_q = _q // {sizes[k]}"]
    lines.append(f"{idx[pos[0]]} = _q")
    return lines


# =====================================================================================
# The records
# =====================================================================================

def host_statement(ctx, fn="host_call"):
    """Any opaque equation: its numpy rule on the host, operands copied there and back."""
    k = ctx.fb.mod.host_eqn(ctx.e)
    args = [r[2] for r in ctx.ins]
    tup = "(" + ", ".join(args) + ("," if len(args) == 1 else "") + ")"
    outs = [n for _, n in ctx.outs]
    call = f"_rt.{fn}(_E[{k}], {tup})"
    if outs:
        ctx.emit(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}")
    else:
        ctx.emit(call)


def _library(fn):
    """The rule of an equation the runtime's ``fn`` runs (``_rt.linalg``: cuSOLVER,
    ``_rt.fft``: cuFFT, through CuPy; else numpy on the host)."""
    return lambda ctx: host_statement(ctx, fn)


def on_matmul(e):
    """Whether dot_general ``e`` runs as ``_rt.matmul`` (else on the host)."""
    x, y = e.invars
    return (e.outvars[0].aval.dtype != np.bool_ and len(x.aval.shape) > 0
            and len(y.aval.shape) > 0 and x.aval.dtype == y.aval.dtype)


def _op_dot_general(ctx):
    x, y, o = ctx.invar(0), ctx.invar(1), ctx.outvar(0)
    dt = o.aval.dtype
    xr, yr = len(x.aval.shape), len(y.aval.shape)
    if not on_matmul(ctx.e):
        host_statement(ctx)
        return
    (xc, yc), (xb, yb) = ctx.p["dimension_numbers"]
    xf = [i for i in range(xr) if i not in xc and i not in xb]
    yf = [i for i in range(yr) if i not in yc and i not in yb]
    dx, dy = ctx.dims_in(0), ctx.dims_in(1)
    B = ctx.prod([dx[i] for i in xb])
    M = ctx.prod([dx[i] for i in xf])
    K = ctx.prod([dx[i] for i in xc])
    N = ctx.prod([dy[i] for i in yf])
    fb = ctx.fb

    def operand(i, order_mk, order_km, rank):
        # the operand as it is when its axes are (batch, free, contracted) or (batch,
        # contracted, free) in memory (the runtime views it as (B, ., .)), else a copy.
        # A stack's row (CudaFunction.row_params) is passed as the stack and the row; a
        # transpose of an array as the array, the orders in its axes (operand_ref)
        ref = ctx.ins[i]
        name, row, view = (ref[1][2], None, ref[2]) if ref[0] == "view" else \
            (ref[2], None, None)
        if isinstance(view, Row):
            row = view.step
        elif isinstance(view, Transpose):
            order_mk = [view.perm[a] for a in order_mk]
            order_km = [view.perm[a] for a in order_km]
        if order_mk == list(range(rank)):
            return name, False, row
        if order_km == list(range(rank)):
            return name, True, row
        t = fb.tmp("perm")
        ctx.emit(f"{t} = _rt.permute({name}, {tuple(order_mk)}"
                 f"{'' if row is None else f', {row}'})")
        return t, False, None

    xa, xt, xrow = operand(0, list(xb) + xf + list(xc), list(xb) + list(xc) + xf, xr)
    ya, yt, yrow = operand(1, list(yb) + list(yc) + yf, list(yb) + yf + list(yc), yr)
    kind, name = ctx.outs[0]
    orow = None
    if kind == "array":
        ctx.emit(f"{name} = _rt.empty({ctx.shape_out(0)}, {dt_text(dt)})")
        target = name
    elif kind == "row":   # a host loop's per-step output: into the caller's stack row
        target, orow = name, fb.STEP
    else:                 # a rank-0 result stays in a 1-element buffer, read as T[0]
        target = f"{name.upper()}_DOT"
        ctx.emit(f"{target} = _rt.empty((1,), {dt_text(dt)})")
    rows = "" if xrow is None and yrow is None and orow is None else \
        f", rows=({xrow}, {yrow}, {orow})"
    ctx.emit(f"_rt.matmul({xa}, {ya}, {target}, {xt}, {yt}, ({B}, {M}, {K}, {N}){rows})")
    if kind == "scalar":
        fb.device_outs[o] = f"{target}[0]"


def _op_scan(ctx):
    """A device loop (:func:`_device_loop`: every step in one kernel) where the body
    allows, else a host loop over the body's host function; carry and stacked outputs stay
    on the device. A rank-0 per-step output the body computes on the device is copied
    into its stack there (``_rt.set_elem``), not read back: the host never waits for the
    device inside the loop for it; one the body computes on the host is gathered on the
    host and copied once."""
    if _device_loop(ctx):
        return
    p = ctx.p
    nconst, ncarry = p["num_consts"], p["num_carry"]
    # a straight-line cond as selects here too, unless a branch holds a library call (a
    # product or a factorization, worth running only where taken): the host then never
    # reads its index back each step, and every result of the step is a buffer of its own
    # the pool recycles (a branch's result is not one: a reduction inside a branch left one
    # behind per step)
    body = sub_jaxpr(p["jaxpr"])
    if not any(e.primitive.name == "cond" and any(
            be.primitive.name in _LIBRARY_PRIMS for b in e.params["branches"]
            for be in sub_jaxpr(b).eqns) for e in body.eqns):
        body = conds_as_selects(body) or body
    dc = DeviceCarries(body, nconst, ncarry)
    first_x = nconst + ncarry
    # xs rows the body reads in place (kernels index the stack with the step), and ys rows
    # its loop nests write in place: the host makes no slice of a stack per step
    row_params = {first_x + i for i, v in enumerate(body.invars[first_x:])
                  if row_readable(body, v, ncarry)}
    row_rets = {ncarry + i: f"_YS{i}" for i in range(len(body.outvars) - ncarry)}
    fn = ctx.fb.mod.sub_function(body, "scan", device_params=dc.params(nconst),
                                 device_rets_ok=range(ncarry, len(body.outvars)),
                                 device_rets_must=dc.dev, row_params=row_params,
                                 row_rets=row_rets, donated_params=dc.donated)
    refs = ctx.ins
    consts = [r[2] for r in refs[:nconst]]
    outs = ctx.outs
    carry = dc.init(ctx, [n for _, n in outs[:ncarry]], refs[nconst:nconst + ncarry],
                    ctx.e.invars[nconst:nconst + ncarry])
    dc.own(ctx, fn, carry, nconst)
    ys = outs[ncarry:]
    length = ctx.fb.size_param(p["length"])
    xargs = []                       # (stack, whether the body takes it whole)
    for k, (r, v) in enumerate(zip(refs[first_x:], ctx.e.invars[first_x:])):
        whole = first_x + k in fn.row_params
        if len(v.aval.shape) == 1 and not whole:
            # a scalar per step that the host reads: from one host copy of the stack
            h = ctx.fb.tmp("xh")
            ctx.emit(f"{h} = _rt.host_view({r[2]})")
            xargs.append((h, False))
        else:
            xargs.append((r[2], whole))
    stacks = []
    for i, (kind, name) in enumerate(ys):
        v = ctx.e.outvars[ncarry + i]
        if len(v.aval.shape) == 1 and not fn.device_rets[ncarry + i] \
                and ncarry + i not in fn.row_written:
            h = ctx.fb.tmp("yh")
            ctx.emit(f"{h} = np.empty({ctx.shape_out(ncarry + i)}, {dt_text(v.aval.dtype)})")
            stacks.append((name, h, v))
        else:
            ctx.emit(f"{name} = _rt.empty({ctx.shape_out(ncarry + i)}, {dt_text(v.aval.dtype)})")
            stacks.append((name, None, v))
    t, tt = ctx.fb.tmp("t"), ctx.fb.tmp("tt")
    ytmp = [ctx.fb.tmp("y") for _ in ys]
    tgt = carry + ytmp
    with ctx.block(f"for {tt} in range({length}):"):
        ctx.emit(f"{t} = {length} - 1 - {tt}" if p["reverse"] else f"{t} = {tt}")
        give_back = recycling(ctx, fn, carry, nconst)
        xs = [x if whole else f"{x}[{t}]" for x, whole in xargs]
        rows = [stacks[k - ncarry][0] for k in fn.row_written] + [t] if fn.row_args else []
        call = call_text(fn, consts + carry + xs + rows)
        if tgt:
            ctx.emit(f"{', '.join(tgt)}{',' if len(tgt) == 1 else ''} = {call}")
        else:
            ctx.emit(call)
        for k, ((name, h, v), y) in enumerate(zip(stacks, ytmp)):
            if ncarry + k in fn.row_written:
                continue                                    # the body wrote it in place
            if h is not None:
                ctx.emit(f"{h}[{t}] = {y}")
            elif len(v.aval.shape) == 1:                  # a 1-element buffer of the body's
                ctx.emit(f"_rt.set_elem({name}, {t}, {y})")
            else:
                ctx.emit(f"_rt.set_row({name}, {t}, {y})")
        give_back(tt, [y for (_, h, _), y, f in zip(stacks, ytmp, fn.fresh_rets[ncarry:])
                       if f and h is None])
    for name, h, v in stacks:
        if h is not None:
            ctx.emit(f"{name} = _rt.to_device({h})")
    dc.keep(ctx, carry)


def row_readable(jaxpr, v, ncarry):
    """Whether a host loop's body ``jaxpr`` can read its input ``v`` (a step's slice of a
    ``scan``'s ``xs``) as a row of the whole stack, in place
    (``CudaFunction.row_params``): only loop nests read it (elementwise equations and
    reductions, through views and reshapes that only add or drop size-1 axes), a
    matrix product (``_rt.matmul`` takes a row), or the body's per-step outputs (a loop
    nest copies it into their stacks' rows: ``CudaFunction.result_ref``). Any other
    reader (a library call, control flow, a carry: its first ``ncarry`` results) takes
    an array of its own, which a slice made on the host gives for free. A per-step
    scalar (rank 0) is read as ``X[step]`` where only loop nests read it (an elementwise
    equation or a broadcast with an array result: in a kernel); anything else (host
    arithmetic, an index, a result) reads it from one host copy of the stack.

    >>> import autodiff as ad, autodiff.numpy as anp, numpy as np
    >>> import autodiff.backends.numba_cpu    # the planner's records of views, reductions
    >>> def body(h, x):
    ...     return anp.tanh(h + x.T[0] * 2.0), anp.sum(x)
    >>> j = ad.make_jaxpr(body)(np.ones(3), np.ones((3, 2))).jaxpr
    >>> row_readable(j, j.invars[1], 1)
    True
    >>> j = ad.make_jaxpr(lambda h, x: (h, anp.sort(x)))(np.ones(3), np.ones(3)).jaxpr
    >>> row_readable(j, j.invars[1], 1)
    False
    """
    from .plan import LOWERINGS
    scalar = not v.aval.shape
    if any(o is v for o in jaxpr.outvars[:len(jaxpr.outvars) if scalar else ncarry]):
        return False
    for e in jaxpr.eqns:
        if not any(u is v for u in e.invars):
            continue
        low = LOWERINGS.get(e.primitive.name)
        kind = low.kind if low is not None else None
        if scalar:         # a per-step scalar: read by loop nests only (X[step] in a kernel)
            if not (kind in ("elementwise", "view") and e.outvars[0].aval.shape
                    and (kind == "elementwise" or row_readable(jaxpr, e.outvars[0],
                                                               ncarry))):
                return False
            continue
        if kind == "view" or (kind == "reshape" and _regroups(e)):
            if not all(row_readable(jaxpr, o, ncarry) for o in e.outvars):
                return False
        elif kind == "reduce" or (kind == "elementwise" and e.outvars[0].aval.shape):
            continue
        elif e.primitive.name == "dot_general" and on_matmul(e):
            continue
        else:
            return False
    return True


def _regroups(e):
    """Whether reshape ``e`` only adds or drops size-1 axes of an array, to an array (an
    index map of the planner, as ``x[1]``'s squeeze): not to a rank-0 value."""
    xs, os_ = e.invars[0].aval.shape, e.outvars[0].aval.shape
    return bool(os_) and [n for n in xs if n != 1] == [n for n in os_ if n != 1]


def device_buffer(expr):
    """The 1-element device buffer whose element rank-0 expression ``expr`` reads
    (``X[0]`` -> ``X``), or None for a host value.

    >>> device_buffer("K_DOT[0]"), device_buffer("b * 2.0")
    ('K_DOT', None)
    """
    m = _DEVICE_SCALAR.fullmatch(expr)
    return m.group(1) if m else None


_DEVICE_SCALAR = re.compile(r"([A-Z_][A-Z0-9_]*)\[0\]")


class DeviceCarries:
    """A host loop's rank-0 carries that stay in 1-element device buffers
    (:func:`device_carries` of its body ``jaxpr``, whose first ``nconst`` inputs are
    constants), and the statements that put them there and read them after the loop."""

    def __init__(self, jaxpr, nconst, ncarry):
        self.dev = device_carries(jaxpr, nconst, ncarry)
        #: the array carries the loop owns, which its body may update in place
        #: (``CudaFunction.donated_params``: parameter position -> result position)
        self.donated = {nconst + i: i for i, v in
                        enumerate(jaxpr.invars[nconst:nconst + ncarry]) if v.aval.shape}

    @staticmethod
    def own(ctx, fn, carry, first):
        """Before the loop: a copy of each initial carry its body ``fn`` updates in
        place (``fn.overwritten``; its carries are the parameters from ``first`` on),
        so that the caller's array stays as it was; from the second step on the body
        updates what it returned."""
        for p in sorted(fn.overwritten):
            ctx.emit(f"{carry[p - first]} = _rt.dcopy({carry[p - first]})")

    def params(self, first):
        """The parameter positions of those carries in a function whose carries start at
        ``first``."""
        return {first + i for i in self.dev}

    def init(self, ctx, names, refs, invars):
        """Write the carries' initial values (``refs``) to the loop's carry variables
        (``names``, the statement's result names); returns the variables, a device
        carry's renamed as an array (a 1-element buffer)."""
        out = []
        for i, (name, ref, v) in enumerate(zip(names, refs, invars)):
            if i not in self.dev:
                ctx.emit(f"{name} = {carry_init(ctx, ref, v.aval)}")
                out.append(name)
                continue
            buf, held = f"{name.upper()}_DC", device_buffer(ref[2])
            ctx.emit(f"{buf} = {held}" if held else
                     f"{buf} = _rt.scalar_buffer({ref[2]}, {dt_text(v.aval.dtype)})")
            out.append(buf)
        return out

    def keep(self, ctx, carry):
        """After the loop: its rank-0 device carries are read where they are."""
        for i in self.dev:
            ctx.fb.device_outs[ctx.e.outvars[i]] = f"{carry[i]}[0]"


def device_carries(jaxpr, nconst, ncarry):
    """The rank-0 carries of a host loop's body ``jaxpr`` whose next value the body
    computes from arrays (a reduction, an element, a dot product: a value a kernel
    makes) or from such a carry: kept in 1-element device buffers from step to step,
    so that the host does not read each back (and wait for the device). Carries computed
    from host scalars alone (a counter) stay host values, which statements read freely.

    >>> import autodiff as ad, autodiff.numpy as anp, numpy as np
    >>> def body(c, x):
    ...     i, loss, h = c
    ...     return (i + 1, loss + anp.sum(h * x), h * 0.5), None
    >>> j = ad.make_jaxpr(body)((0, 0.0, np.ones(3)), np.ones(3)).jaxpr
    >>> device_carries(j, 0, 3)
    [1]
    """
    carries = jaxpr.invars[nconst:nconst + ncarry]
    # per rank-0 value: the carries it depends on, and "array" where it reads an array
    deps = {v: {k} for k, v in enumerate(carries) if not v.aval.shape}
    for e in jaxpr.eqns:
        got = set()
        for u in e.invars:
            if isinstance(u, Var):
                got |= {"array"} if u.aval.shape else deps.get(u, set())
        for o in e.outvars:
            if not o.aval.shape:
                deps[o] = got
    dev = set()
    outs = jaxpr.outvars[:ncarry]
    while True:
        more = {k for k, o in enumerate(outs)
                if not carries[k].aval.shape and isinstance(o, Var)
                and ("array" in deps.get(o, ()) or deps.get(o, set()) & dev)} - dev
        if not more:
            return sorted(dev)
        dev |= more


def recycling(ctx, fn, carry, first):
    """A host loop's buffers back to the pool (``_rt.give``), so that a steady loop
    allocates nothing per step. Called in the loop before the call of body ``fn`` (whose
    inputs ``first ..`` are the ``carry`` names): holds the carries the call will consume
    and returns ``give_back(step, done=())``, which writes, after the call, the giving
    back of ``done`` (this step's per-step outputs, copied into their stacks) and, from
    the second step on, of the held carries. Only buffers the body made, each once however
    often it returns one (``CudaFunction.fresh_rets``), are given back, and a carry only
    where the body is done with it when it returns (``CudaFunction.consumed_carries``: not
    passed on as another carry, no view of it kept): nothing else can reach them, and the
    device runs every launch in order, so a later step's writes come after this step's
    reads."""
    olds = [(c, ctx.fb.tmp("old")) for c, f, done in
            zip(carry, fn.fresh_rets, fn.consumed_carries(first, len(carry))) if f and done]
    if olds:
        ctx.emit(f"{', '.join(o for _, o in olds)}, = {', '.join(c for c, _ in olds)},")

    def give_back(step, done=()):
        if done:
            ctx.emit(f"_rt.give({', '.join(done)})")
        if olds:
            with ctx.block(f"if {step}:"):
                ctx.emit(f"_rt.give({', '.join(o for _, o in olds)})")
    return give_back


def _static_shape(aval):
    return all(isinstance(d, (int, np.integer)) for d in aval.shape)


def dots_as_nests(jaxpr):
    """``jaxpr`` with each matrix product (``dot_general`` of one dtype) written as a
    broadcast multiply and a sum over the contracted axes: loop nests, which a device
    loop runs in its one kernel, where ``_rt.matmul`` (cuBLAS) is a library call that
    keeps the loop on the host, a few launches per step. A device loop is tried with
    this body first (:class:`_DeviceBody`); a product too large for one block's loop
    nest (``cuda_launches.LOOP_MAX`` elements) keeps it a host loop over the original
    body, as does ``ad.config.update("jit_cuda_loop_products", False)``. A pure pass;
    None where there is no product.

    >>> import numpy as np, autodiff as ad
    >>> j = ad.make_jaxpr(lambda W, h: W @ h)(np.ones((3, 4)), np.ones(4)).jaxpr
    >>> print(dots_as_nests(j))
    { lambda ; a:f64[3,4] b:f64[4]. let
        c:f64[3,4] = transpose[permutation=(0, 1)] a
        d:f64[4] = transpose[permutation=(0,)] b
        e:f64[3,4] = broadcast_in_dim[broadcast_dimensions=(0, 1) shape=(3, 4)] c
        f:f64[3,4] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(3, 4)] d
        g:f64[3,4] = mul e f
        h:f64[3] = reduce_sum[axes=(1,)] g
      in (h,) }
    """
    from ..core import Eqn, Jaxpr, ShapedArray
    from ..primitives import broadcast_in_dim_p, mul_p, reduce_sum_p, transpose_p
    eqns, changed = [], False
    for e in jaxpr.eqns:
        if e.primitive.name != "dot_general" or not on_matmul(e) \
                or e.outvars[0].aval.dtype != e.invars[0].aval.dtype:
            eqns.append(e)
            continue
        (x, y), o = e.invars, e.outvars[0]
        changed = True
        (xc, yc), (xb, yb) = e.params["dimension_numbers"]
        xf = [i for i in range(len(x.aval.shape)) if i not in xc and i not in xb]
        yf = [i for i in range(len(y.aval.shape)) if i not in yc and i not in yb]
        nb, nxf, nyf = len(xb), len(xf), len(yf)
        xs, ys_ = x.aval.shape, y.aval.shape
        full = tuple([xs[i] for i in xb] + [xs[i] for i in xf] + [ys_[i] for i in yf]
                     + [xs[i] for i in xc])
        dt = o.aval.dtype

        def var(shape):
            return Var(ShapedArray(tuple(shape), dt))
        xperm, yperm = tuple(xb) + tuple(xf) + tuple(xc), tuple(yb) + tuple(yf) + tuple(yc)
        xt, yt = var(xs[i] for i in xperm), var(ys_[i] for i in yperm)
        xe, ye, m = var(full), var(full), var(full)
        nc = len(xc)
        bshared = tuple(range(nb))
        cdims = tuple(range(nb + nxf + nyf, nb + nxf + nyf + nc))
        eqns += [Eqn(transpose_p, [x], [xt], dict(permutation=xperm), e.source),
                 Eqn(transpose_p, [y], [yt], dict(permutation=yperm), e.source),
                 Eqn(broadcast_in_dim_p, [xt], [xe],
                     dict(shape=full, broadcast_dimensions=bshared + tuple(
                         range(nb, nb + nxf)) + cdims), e.source),
                 Eqn(broadcast_in_dim_p, [yt], [ye],
                     dict(shape=full, broadcast_dimensions=bshared + tuple(
                         range(nb + nxf, nb + nxf + nyf)) + cdims), e.source),
                 Eqn(mul_p, [xe, ye], [m], {}, e.source),
                 Eqn(reduce_sum_p, [m], [o], dict(axes=cdims), e.source)]
    if not changed:
        return None
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns)


#: primitives a host loop's body calls a library for (cuBLAS, cuSOLVER, cuFFT: the
#: registrations at the end of this module): a cond holding one stays a cond in a host
#: loop (only the branch taken runs)
_LIBRARY_PRIMS = frozenset({"dot_general", "fft", "cholesky", "eigh", "qr", "slogdet",
                            "solve", "svd", "triangular_solve"})


def conds_as_selects(jaxpr):
    """``jaxpr`` with each ``cond`` whose branches are straight-line code (no loop, no
    ``cond`` left after this pass, no host call) computing every branch and picking
    each result with ``select`` on the index (clamped to the branches, as ``cond``
    clamps it), as JAX's ``vmap`` of a ``cond`` does. A device loop's kernel so runs a
    body with a ``cond`` (a piecewise step, the reverse loop of a bounded
    ``while_loop``'s gradient, which is a ``scan`` over a ``cond``), where the ``cond``
    made a host loop that read its index back from the device every step. Both
    branches run; a value the other branch would not have computed (a NaN of a
    ``log`` of a negative) is computed and dropped. A device loop is tried with this
    body (:class:`_DeviceBody`); a ``scan`` body that still cannot be one runs it in a
    host loop too, unless a branch calls a library (``_LIBRARY_PRIMS``). A pure pass;
    None where there is no such ``cond``.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> from autodiff import lax
    >>> f = lambda k, x: lax.cond(k > 0, lambda x: x * 2.0, lambda x: x - 1.0, x)
    >>> j = ad.make_jaxpr(f)(1, np.ones(2)).jaxpr
    >>> print(conds_as_selects(j))
    { lambda ; a:i64[] b:f64[2]. let
        c:bool[] = gt a 0:i64[]
        d:i32[] = convert_element_type[new_dtype=int32] c
        e:f64[2] = sub b 1.0:f64[]
        f:f64[2] = mul b 2.0:f64[]
        g:bool[] = ge d 1:i32[]
        h:f64[2] = select g f e
      in (h,) }
    """
    from ..core import Eqn, Jaxpr, ShapedArray
    from ..ir import Literal, sub_jaxprs
    from ..primitives import ge_p, select_p
    eqns, changed = [], False
    for e in jaxpr.eqns:
        if e.primitive.name != "cond":
            eqns.append(e)
            continue
        branches = []
        for b in e.params["branches"]:
            bj = sub_jaxpr(b)
            bj = conds_as_selects(bj) or bj
            if bj.constvars or any(sub_jaxprs(be.params) for be in bj.eqns):
                break                    # a loop in a branch: the cond stays
            branches.append(bj)
        else:
            changed = True
            index, ops = e.invars[0], e.invars[1:]
            outs = []
            for bj in branches:
                env = dict(zip(bj.invars, ops))
                for be in bj.eqns:
                    new = [Var(o.aval) for o in be.outvars]
                    env.update(zip(be.outvars, new))
                    eqns.append(be.replace(
                        invars=[env.get(v, v) if isinstance(v, Var) else v
                                for v in be.invars], outvars=new))
                outs.append([env.get(v, v) if isinstance(v, Var) else v
                             for v in bj.outvars])
            picks = []
            for k in range(1, len(branches)):          # index >= k: branch k or later
                g = Var(ShapedArray((), np.dtype(np.bool_)))
                eqns.append(Eqn(ge_p, [index, Literal(np.asarray(k, index.aval.dtype)[()])],
                                [g], {}, e.source))
                picks.append(g)
            for i, o in enumerate(e.outvars):
                cur = outs[0][i]
                for k in range(1, len(branches)):
                    last = k == len(branches) - 1
                    nxt = o if last else Var(o.aval)
                    eqns.append(Eqn(select_p, [picks[k - 1], outs[k][i], cur], [nxt], {},
                                    e.source))
                    cur = nxt
                if len(branches) == 1:
                    eqns.append(Eqn(select_p, [Literal(np.bool_(True)), cur, cur], [o], {},
                                    e.source))
            continue
        eqns.append(e)
    if not changed:
        return None
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns)


def _broadcast_source(v, producer):
    """Follow ``v`` back through the equations that only broadcast it or add or drop
    size-1 axes (``broadcast_in_dim``, ``expand_dims``, ``squeeze``, such a ``reshape``):
    ``(base, {axis of base: axis of v})`` for the base's axes of size > 1 (an axis of v
    no base axis maps to is a broadcast one: the values do not vary along it)."""
    shape = v.aval.shape
    amap = {i: i for i in range(len(shape)) if shape[i] != 1}
    while True:
        e = producer.get(id(v))
        if e is None:
            return v, amap
        name, src = e.primitive.name, e.invars[0]
        if not hasattr(src, "aval") or not _static_shape(src.aval):
            return v, amap
        ss, os_ = src.aval.shape, v.aval.shape
        if name == "broadcast_in_dim":
            bd = e.params["broadcast_dimensions"]
            new = {j: amap[bd[j]] for j in range(len(ss)) if ss[j] != 1 and bd[j] in amap}
        elif name in ("expand_dims", "squeeze", "reshape"):
            if [d for d in ss if d != 1] != [d for d in os_ if d != 1]:
                return v, amap                       # a reshape that moves elements
            src_axes = [j for j in range(len(ss)) if ss[j] != 1]
            out_axes = [i for i in range(len(os_)) if os_[i] != 1]
            new = {j: amap[i] for j, i in zip(src_axes, out_axes) if i in amap}
        else:
            return v, amap
        v, amap = src, new


def _producers_and_uses(jaxpr):
    """``(producer, uses)``: by ``id`` of a value, the equation computing it, and how many
    equations and results read it."""
    producer, uses = {}, {}
    for e in jaxpr.eqns:
        for o in e.outvars:
            producer[id(o)] = e
        for v in e.invars:
            uses[id(v)] = uses.get(id(v), 0) + 1
    for v in jaxpr.outvars:
        uses[id(v)] = uses.get(id(v), 0) + 1
    return producer, uses


def nests_as_dots(jaxpr, min_elements=None):
    """``jaxpr`` with each matrix-shaped reduction written as a matrix product: a
    ``reduce_sum`` of a ``mul`` of two arrays broadcast against each other
    (``anp.sum(A[:, :, None] * B[None], axis=1)``, and what the gradient of a broadcast
    product makes) where each operand is read again by several results (a free axis of
    each, as ``A @ B``; not a matrix-vector product, which reads its matrix once either
    way), over more than ``min_elements`` products (``cuda_launches.LOOP_MAX``: the
    size above which ``dots_as_nests`` keeps a product a product), becomes a
    ``dot_general`` (cuBLAS) and a ``transpose``/``reshape`` to the sum's layout. A loop
    nest computes each result's K products in one thread, reading both operands from
    memory every time; cuBLAS tiles them. The inverse of :func:`dots_as_nests`, so
    either way of writing a product runs as the same kind of code. A pure pass; None
    where nothing changed.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> f = lambda A, B: anp.sum(A[:, :, None] * B[None], axis=1)
    >>> j = ad.make_jaxpr(f)(np.ones((3, 4)), np.ones((4, 5))).jaxpr
    >>> print(nests_as_dots(j, min_elements=8))
    { lambda ; a:f64[3,4] b:f64[4,5]. let
        c:f64[3,5] = dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] a b
      in (c,) }
    """
    from ..core import Eqn, Jaxpr, ShapedArray
    from ..primitives import dot_general_p, reshape_p, transpose_p
    if min_elements is None:
        from .cuda_launches import LOOP_MAX as min_elements
    producer, uses = _producers_and_uses(jaxpr)
    replaced, dropped = {}, set()
    for e in jaxpr.eqns:
        if e.primitive.name != "reduce_sum":
            continue
        m, r = e.invars[0], e.outvars[0]
        pe = producer.get(id(m))
        if pe is None or pe.primitive.name != "mul" or uses.get(id(m)) != 1 \
                or not _static_shape(m.aval) or m.aval.dtype.kind not in "fc":
            continue
        x, y = pe.invars
        if not all(hasattr(u, "aval") and u.aval.dtype == m.aval.dtype
                   and u.aval.shape == m.aval.shape for u in (x, y)):
            continue
        (a, amap), (b, bmap) = _broadcast_source(x, producer), _broadcast_source(y, producer)
        shape, red = m.aval.shape, set(e.params["axes"])
        ina = {i: j for j, i in amap.items()}
        inb = {i: j for j, i in bmap.items()}
        axes = [i for i in range(len(shape)) if shape[i] != 1]
        if any(i not in ina and i not in inb for i in axes) or any(
                i in red and (i not in ina or i not in inb) for i in axes):
            continue                        # a broadcast result, or a sum of one operand
        batch = [i for i in axes if i not in red and i in ina and i in inb]
        contract = [i for i in axes if i in red]
        free_a = sorted((i for i in axes if i not in red and i not in inb), key=ina.get)
        free_b = sorted((i for i in axes if i not in red and i not in ina), key=inb.get)
        size = int(np.prod(shape))
        if not contract or not free_a or not free_b or size <= min_elements:
            continue
        dt = m.aval.dtype
        eqns = []

        def squeezed(base, inv):
            # the base without its size-1 axes (a dot_general operand): its axis j is
            # axis ``pos[j]`` of the squeezed array
            keep = sorted(inv.values())
            pos = {j: k for k, j in enumerate(keep)}
            if len(keep) == len(base.aval.shape):
                return base, pos
            sq = Var(ShapedArray(tuple(base.aval.shape[j] for j in keep), dt))
            eqns.append(Eqn(reshape_p, [base], [sq], dict(new_sizes=sq.aval.shape),
                            e.source))
            return sq, pos
        a2, pa = squeezed(a, ina)
        b2, pb = squeezed(b, inb)
        dims = ((tuple(pa[ina[i]] for i in contract), tuple(pb[inb[i]] for i in contract)),
                (tuple(pa[ina[i]] for i in batch), tuple(pb[inb[i]] for i in batch)))
        order = batch + free_a + free_b              # the product's axes, as m's
        kept = sorted(order)
        perm = tuple(order.index(i) for i in kept)
        steps = [(dot_general_p, tuple(shape[i] for i in order),
                  dict(dimension_numbers=dims))]
        if perm != tuple(range(len(perm))):
            steps.append((transpose_p, tuple(shape[i] for i in kept),
                          dict(permutation=perm)))
        if steps[-1][1] != r.aval.shape:              # the sum's size-1 axes
            steps.append((reshape_p, r.aval.shape, dict(new_sizes=r.aval.shape)))
        ins = [a2, b2]
        for k, (prim, shp, params) in enumerate(steps):
            o = r if k == len(steps) - 1 else Var(ShapedArray(shp, dt))
            eqns.append(Eqn(prim, ins, [o], params, e.source))
            ins = [o]
        replaced[id(e)] = eqns
        dropped.add(id(pe))
    if not replaced:
        return None
    out = []
    for e in jaxpr.eqns:
        if id(e) not in dropped:
            out += replaced.get(id(e), [e])
    # the broadcasts only the products read are dead now
    from ..transforms.partial_eval import dce_jaxpr
    return dce_jaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, out))[0]


def simpler_dots(jaxpr):
    """``jaxpr`` with each transpose of a matrix product's result that puts the second
    operand's free axes first (``(a @ b).T``: what the gradient of ``x @ w`` with respect
    to ``w`` makes) written as the product of the operands swapped, ``b.T @ a.T``, read
    in place (the transpose was a copy of the whole result). Only where the transpose is
    the product's one reader. A product of a rank-0 operand, which contracts nothing (the
    gradient of ``x @ x`` scales ``x`` so), becomes a ``mul``: a loop nest's, where it
    was a host call. A pure pass; None where nothing changed.

    >>> import numpy as np, autodiff as ad
    >>> j = ad.make_jaxpr(lambda a, b: (a @ b).T)(np.ones((3, 4)), np.ones((4, 5))).jaxpr
    >>> print(simpler_dots(j))
    { lambda ; a:f64[3,4] b:f64[4,5]. let
        c:f64[5,3] = dot_general[dimension_numbers=(((0,), (1,)), ((), ()))] b a
      in (c,) }
    """
    from ..core import Eqn, Jaxpr, ShapedArray
    from ..primitives import broadcast_in_dim_p, mul_p
    producer, uses = _producers_and_uses(jaxpr)
    replaced, dropped = {}, set()
    for e in jaxpr.eqns:
        if e.primitive.name == "dot_general" and any(
                not u.aval.shape for u in e.invars) and e.invars[0].aval.dtype == \
                e.invars[1].aval.dtype == e.outvars[0].aval.dtype:
            # ((), ()) dimension numbers: the rank-0 operand scales the other
            x, y = e.invars
            s, a = (x, y) if not x.aval.shape else (y, x)
            if isinstance(s, Var) and a.aval.shape:
                b = Var(ShapedArray(a.aval.shape, s.aval.dtype))
                replaced[id(e)] = [Eqn(broadcast_in_dim_p, [s], [b], dict(
                    shape=a.aval.shape, broadcast_dimensions=()), e.source), Eqn(
                    mul_p, [a, b] if s is y else [b, a], e.outvars, {}, e.source)]
            else:
                replaced[id(e)] = [Eqn(mul_p, [x, y], e.outvars, {}, e.source)]
            continue
        d = producer.get(id(e.invars[0])) if e.primitive.name == "transpose" else None
        if d is None or d.primitive.name != "dot_general" or uses[id(e.invars[0])] != 1:
            continue
        x, y = d.invars
        (xc, yc), (xb, yb) = d.params["dimension_numbers"]
        nb = len(xb)
        nx = len(x.aval.shape) - nb - len(xc)
        ny = len(y.aval.shape) - nb - len(yc)
        swapped = list(range(nb)) + list(range(nb + nx, nb + nx + ny)) + list(range(nb, nb + nx))
        if list(e.params["permutation"]) != swapped:
            continue
        replaced[id(e)] = [Eqn(d.primitive, [y, x], e.outvars, dict(
            d.params, dimension_numbers=((yc, xc), (yb, xb))), e.source)]
        dropped.add(id(d))
    if not replaced:
        return None
    eqns = [q for e in jaxpr.eqns if id(e) not in dropped for q in replaced.get(id(e), [e])]
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns)


_ALLOCATION = re.compile(r"[A-Z_][A-Z0-9_]* = _rt\.empty\(.*\)")
# a view statement a device loop's kernel can make itself: an alias, or a reshape of a
# C-contiguous buffer to constant sizes
_VIEW = re.compile(r"([A-Z_][A-Z0-9_]*) = ([A-Z_][A-Z0-9_]*)(\.reshape\(\((?:\d+, )*\d*,?\)\))?")


class _DeviceBody:
    """A control-flow body built for a device loop (``CudaFunction.device_from``): rank-0
    carries and slices are 1-element device buffers, rank-0 equations run on the device.
    ``calls``: the lines calling its launches as device functions in order, a barrier
    after each (indented for the loop); ``shared``: the shared arrays they take from the
    kernel; ``allocs``: its buffers (its launches', and those its statements allocate
    for a launch to write: a pad's), renamed ``<pre>NAME`` (made once, before the launch);
    ``rets``: what it returns, as the kernel reads each (``X`` or ``X[0]``). ``ok`` is
    False where the body does something a kernel cannot (a library call, a host call, a
    loop nest over more than ``cuda_launches.LOOP_MAX`` elements, a value returned that
    is not a buffer)."""

    def __init__(self, ctx, jaxpr, nconst, hint, pre, outer, dynamic=()):
        from .cuda_launches import (LOOP_MAX, MAX_SHARED, Launch, Section, kernel_text,
                                    shared_units)
        self.ok = False
        fb = ctx.fb
        # conds as selects and matrix products as loop nests, which the loop's kernel
        # runs (conds_as_selects, dots_as_nests)
        body = conds_as_selects(jaxpr) or jaxpr
        if config.jit_cuda_loop_products:
            body = dots_as_nests(body) or body
        fn = fb.mod.sub_function(body, hint, device_from=nconst, param_dynamic=dynamic)
        if fn is None:
            return
        launches, made, seq = [], [], []
        for it in fn.items:
            if isinstance(it, Launch):
                if not it.small(LOOP_MAX):
                    return
                launches.append(it)
                seq.append(it)
                continue
            for ln in it.split("\n"):
                if ln.strip().startswith("#"):
                    continue
                if _ALLOCATION.fullmatch(ln):
                    made.append(ln)       # the buffer a statement's launch writes (a pad)
                elif _VIEW.fullmatch(ln):
                    # a reshaped view (an .at update's flat scatter): the kernel makes
                    # it, in order: (name, the name it views, ".reshape(...)" or "")
                    seq.append(_VIEW.fullmatch(ln).groups(""))
                else:
                    return                # a host statement in the body
        if not launches:
            return
        names = dict(zip(fn.param_names, outer))     # its parameters -> the kernel's
        self.allocs = []
        for a in made + [a for lc in launches for a in lc.allocs]:
            m = re.match(r"([A-Z_][A-Z0-9_]*)\s*=\s*(.+)$", a)
            if m is None:
                return
            names[m.group(1)] = pre + m.group(1)
            # a buffer's size may name another of the body's (a split's chunk count)
            rhs = _renamed(m.group(2), names, True)
            if re.search(r"\b_t\b", rhs):
                return        # a nested loop's view of this loop's step (made per step)
            self.allocs.append(f"{pre}{m.group(1)} = {rhs}")
        views = [x for x in seq if isinstance(x, tuple)]
        view_of = {}                # a view -> the buffer it views (a parameter, ...)
        for v, src, _ in views:
            names[v] = pre + v
            view_of[v] = view_of.get(src, src)
        # a name it returns is one of its buffers; a rank-0 expression reads only them and
        # its parameters (a literal, a constant, an element of a buffer: X[2])
        host = set(fn.host_rets)
        if not all(set(free_names("    " + r, fb.mod.consts.values())) <= set(names)
                   if i in host else re.fullmatch(r"[A-Z_][A-Z0-9_]*", r) and r in names
                   for i, r in enumerate(fn.rets)):
            return
        self.shared, self.calls = {}, []
        pool = {}                   # (declaration, k) -> the kernel's k-th such array
        for lc in seq:
            if isinstance(lc, tuple):
                v, src, reshape = lc
                src = names.get(src, src)
                row = re.fullmatch(r"([A-Z_][A-Z0-9_]*)\[_t\]", src)
                if reshape and re.fullmatch(r"[A-Z_][A-Z0-9_]*", src):
                    # a reshaped view of one of the kernel's buffers is the same every
                    # step: the host makes it once, before the launch. numba-cuda-mlir
                    # 0.6.0 types an array's reshape in a kernel with its source's rank
                    # (``T.reshape((60,))`` of a 2-D T is 2-D, so ``V[i] = W[i]`` fails
                    # to type); numba-cuda's simulator runs it either way. Tests check
                    # the kernels for it (_kernels_both_compilers_take)
                    self.allocs.append(f"{pre}{v} = {src}{reshape}")
                elif reshape and row:
                    # a view of the step's row of a stack (C-contiguous): the host views
                    # the whole stack so (rows first), the kernel takes the step's row
                    shape = reshape[len(".reshape("):-1]
                    self.allocs.append(f"{pre}{v}_ROWS = {row.group(1)}.reshape(("
                                       f"{row.group(1)}.shape[0],) + {shape})")
                    self.calls.append(f"        {pre}{v} = {pre}{v}_ROWS[_t]")
                else:                     # an alias (a reshape of anything else: none
                    # seen, and the tests check every program they load for one)
                    self.calls.append(f"        {pre}{v} = {src}{reshape}")
                continue
            # a device function receives its shared arrays from the kernel (numba-cuda-mlir
            # 0.6.0 fails on some shared arrays declared in device functions: docs/cuda.md).
            # The launches run one after another, a barrier between, and so do the
            # sections of a one-block launch: the k-th array of a declaration is one array
            # for all of them (the kernel declares the most one of them takes, not the sum)
            body_lines, seen = [], {}
            for sec in lc.sections:
                if sec.kind == "sync":
                    seen = {}
                for ln in sec.lines:
                    # (a loop's own, L1_sh0, when the launch is a device loop nested
                    # in this one: a while inside a scan)
                    m = re.fullmatch(r"\s*([A-Za-z_]\w*) = (cuda\.shared\.array\(.*\))\s*",
                                     ln)
                    if m:
                        k = seen[m.group(2)] = seen.get(m.group(2), -1) + 1
                        sh = pool.setdefault((m.group(2), k), f"{pre}sh{len(pool)}")
                        names[m.group(1)] = sh
                        self.shared[sh] = m.group(2)
                    else:
                        body_lines.append(ln)
            text, params = kernel_text(Launch([Section("map", body_lines, [], [], [], "1")]))
            dname = fb.mod.device_function(text)
            self.calls.append(f"        {dname}({', '.join(names.get(q, q) for q in params)})")
            self.calls.append("        cuda.syncthreads()")
        self.fn, self.params, self.head_reads = fn, fn.param_names, list(fn.head_reads)
        # what it returns, a view named by the buffer it views: a parameter returned
        # through a reshape is that parameter (_carry_updates)
        self.ret_names = [view_of.get(r, r) for r in fn.rets]
        # a rank-0 expression in the kernel's names
        self.rets = [_renamed(r, names) if i in host else names[r] if v.aval.shape
                     else f"{names[r]}[0]" for i, (r, v) in enumerate(zip(fn.rets,
                                                                        jaxpr.outvars))]
        self.n_launches = len(launches)
        self.shared_count = sum(shared_units(d) for d in self.shared.values())
        self.ok = self.shared_count <= MAX_SHARED


def _renamed(text, names, upper=False):
    """``text`` with the names ``names`` maps replaced (``upper``: only buffer names).

    >>> _renamed("np.float64(b * B)", {"b": "D[0]", "B": "L1_B"})
    'np.float64(D[0] * L1_B)'
    """
    pat = r"(?<![\w.])([A-Z_][A-Z0-9_]*)(?!\w)" if upper else r"(?<![\w.])([A-Za-z_]\w*)(?!\w)"
    return re.sub(pat, lambda q: names.get(q.group(1), q.group(1)), text)


def _copy_lines(dst_of, src, aval, ind="        "):
    """Every thread of the block its share of the elements of ``src`` (an array, or for
    rank 0 a value thread 0 writes) into ``dst_of(index)``."""
    if not aval.shape:
        return [f"{ind}if cuda.threadIdx.x == 0:", f"{ind}    {dst_of('0')} = {src}"]
    dims = [str(int(d)) for d in aval.shape]
    J = [f"j{k}" for k in range(len(dims))]
    out = [f"{ind}for _f in range(cuda.threadIdx.x, {' * '.join(dims)}, _TPB):"]
    out += [f"{ind}    " + ln for ln in unravel_lines("_f", list(range(len(dims))), dims, J)]
    out.append(f"{ind}    {dst_of(', '.join(J))} = {src}[{', '.join(J)}]")
    return out


def _carry_buffers(ctx, carry_outs, carry_ins, carry_refs, pre):
    """The loop's carry buffers (a rank-0 carry gets a 1-element one), their allocations,
    and the kernel lines copying the initial values in (a launch merged before this one
    may compute them). None where an initial value is not on the device."""
    bufs, head, init = [], [], []
    for i, ((kind, nm), v, r) in enumerate(zip(carry_outs, carry_ins, carry_refs)):
        buf = nm if kind == "array" else f"{pre}C{i}"
        bufs.append(buf)
        head.append(f"{buf} = _rt.empty({ctx.fb.shape(v) if v.aval.shape else '(1,)'}, "
                    f"{dt_text(v.aval.dtype)})")
        src = r[2] if r[0] == "array" else carry_init(ctx, r, v.aval)
        init += _copy_lines(lambda ix, c=buf: f"{c}[{ix}]", src, v.aval, "    ")
    return bufs, head, init + ["    cuda.syncthreads()"]


def _carry_updates(body, nconst, carry):
    """Lines copying the body's carry results into the carry buffers, after a step; None
    where carries swap places (no in-place copy), or one comes back as an element of
    another's buffer (``(h, h[0])``: the copy of h could come first)."""
    lines = []
    params = body.params[nconst:nconst + len(carry)]
    for c, param, r, name, v in zip(carry, params, body.rets, body.ret_names,
                                    body.fn.jaxpr.outvars):
        if name == param:
            continue                      # returned unchanged
        if set(free_names("    " + name, ())) & set(params):
            return None
        lines += _copy_lines(lambda ix, c=c: f"{c}[{ix}]", r, v.aval)
    return lines


def _consts_outer(refs):
    """The kernel's names of a body's constant operands; None where one is a host value
    a kernel cannot take. A rank-0 one may be an element of an array at a constant index
    (``C[(1 + 0)]``: a parameter ``th[1]`` read in an ODE's step), which the kernel
    reads where the host read it every step."""
    out = []
    for r in refs:
        if r[0] != "array" and not re.fullmatch(
                r"[A-Za-z_]\w*(\[0\])?|[-+.\w()]+|[A-Z_][A-Z0-9_]*\[[-+\d\s(),]*\]", r[2]):
            return None
        out.append(r[2])
    return out


_ONE_ELEMENT = re.compile(r"([A-Z_][A-Z0-9_]*) = _rt\.empty\(\(1,\), (np\.\w+)\)")


def _scratch(head, bodies, pre):
    """The bodies' 1-element buffers (rank-0 temporaries: an index, a gathered element,
    a sum) as elements of one scratch array per dtype, each a view the kernel makes
    (``X = S[k:k + 1]``): ``(head, kernel lines, scratch names)``. Each buffer was a
    kernel parameter of 72 bytes (an array's 9 words), and a body with a few ``.at``
    updates at computed indices has dozens."""
    own = {a for b in bodies for a in b.allocs}
    slots, keep = {}, []
    for h in head:
        m = _ONE_ELEMENT.fullmatch(h) if h in own else None
        if m is None:
            keep.append(h)
        else:
            slots.setdefault(m.group(2), []).append(m.group(1))
    views, names = [], []
    for dt, bufs in slots.items():
        sc = f"{pre}S_{dt[3:].strip('_').upper()}"
        names.append(sc)
        keep.append(f"{sc} = _rt.empty(({len(bufs)},), {dt})")
        views += [f"    {b} = {sc}[{k}:{k + 1}]" for k, b in enumerate(bufs)]
    return keep, views, names


def _loop_launch(ctx, lines, head, bodies, writes, what, pre):
    """The device loop's launch record (one block), or False where its kernel would take
    too many parameters."""
    from .cuda_launches import Launch, Section, free_names_of
    from .cuda_runtime import LOOP_PARAMS
    shared = {}
    for b in bodies:
        shared.update(b.shared)
    head, views, scratch = _scratch(head, bodies, pre)
    lines = [f"    {n} = {decl}" for n, decl in shared.items()] + views + lines
    moved = {v.split(" = ")[0].strip() for v in views}
    writes = [w for w in writes if w not in moved] + scratch
    if len(free_names_of(lines)) > LOOP_PARAMS:
        return False                      # past the kernel parameters' bytes
    sec = Section("loop", [], [], lines, [], "1", elems="1", also_writes=frozenset(writes),
                  shared=sum(b.shared_count for b in bodies))
    ctx.lines.append(Launch([sec], head, [f"# ---- {what}"], one_block=True))
    return True


def _device_possible(ctx, jaxprs):
    """Whether a loop may run on the device: launch fusion on, at the top level of its
    function, its bodies' values of known shapes. In a program with run-time sizes (one
    generalized after a new sequence length) the bodies' sizes that are constants in the
    caller stay constants (``operand_dynamic``): the loop's length may be a run-time
    size."""
    return (config.jit_cuda_fuse_launches and not ctx.ind
            and all(_static_shape(v.aval) for j in jaxprs
                    for v in list(j.invars) + list(j.outvars)))


def operand_dynamic(ctx, operands, drop_lead=()):
    """``(parameter index, axis)`` of a body whose parameters are ``operands`` of the
    caller (``drop_lead``: the indices of those it takes a row of, a ``scan``'s ``xs``)
    where the caller's size is a run-time size (``Planner.param_dynamic``)."""
    fb, out = ctx.fb, set()
    for i, u in enumerate(operands):
        if not isinstance(u, Var):
            continue
        skip = 1 if i in drop_lead else 0
        for ax, d in enumerate(fb.dims(u)[skip:]):
            # a size the caller reads at run time because a parameter brings it; one it
            # reads so only to keep its text general (a size of its own making, as a
            # constant folded into a broadcast) is the body's constant
            if not d.isdigit() and (fb.dyn_roots is None or fb.D.find(
                    fb.D.dims(u)[ax + skip]) in fb.dyn_roots):
                out.add((i, ax))
    return out


def _device_loop(ctx):
    """``scan`` as one launch: a kernel of one block whose loop runs every step, each of
    the body's launches a device function called in order with a barrier between, then the
    step's outputs copied into the stacked results and the carry (each thread its share of
    the elements). The body is built for it (:class:`_DeviceBody`); its buffers are made
    once, before the launch; the host does nothing per step. Where the body does something
    a kernel cannot, or sizes are known only at run time, this returns False and the scan
    is a host loop. Returns whether it emitted the loop."""
    p, e, fb = ctx.p, ctx.e, ctx.fb
    nconst, ncarry = p["num_consts"], p["num_carry"]
    body = sub_jaxpr(p["jaxpr"])
    if not _device_possible(ctx, [body]):
        return False
    refs = ctx.ins
    consts = _consts_outer(refs[:nconst])
    if consts is None:
        return False
    pre = f"L{fb.tmp('')[1:]}_"
    carry, head, init = _carry_buffers(ctx, ctx.outs[:ncarry], e.invars[nconst:nconst + ncarry],
                                       refs[nconst:nconst + ncarry], pre)
    t = "_t"
    xs = [f"{r[2]}[{t}]" if v.aval.shape else f"{r[2]}[{t}:{t} + 1]"
          for r, v in zip(refs[nconst + ncarry:], body.invars[nconst + ncarry:])]
    first_x = nconst + ncarry
    b = _DeviceBody(ctx, body, nconst, "scan", pre, consts + carry + xs,
                    operand_dynamic(ctx, e.invars, range(first_x, len(e.invars))))
    if not b.ok:
        return False
    updates = _carry_updates(b, nconst, carry)
    if updates is None:
        return False
    length = fb.size_param(p["length"])
    lines = init + [f"    for _tt in range({length}):",
                    f"        {t} = {length} - 1 - _tt" if p["reverse"] else f"        {t} = _tt"]
    lines += b.calls
    ys_out = ctx.outs[ncarry:]
    for r, (kind, yname), v in zip(b.rets[ncarry:], ys_out, body.outvars[ncarry:]):
        dst = (lambda ix, y=yname: f"{y}[{t}, {ix}]") if v.aval.shape else \
              (lambda ix, y=yname: f"{y}[{t}]")
        lines += _copy_lines(dst, r, v.aval)
    if len(b.rets) > ncarry:
        lines.append("        cuda.syncthreads()")
    lines += updates + ["        cuda.syncthreads()"]
    head = b.head_reads + head
    for i, (kind, yname) in enumerate(ys_out):
        v = e.outvars[ncarry + i]
        head.append(f"{yname} = _rt.empty({ctx.shape_out(ncarry + i)}, "
                    f"{dt_text(v.aval.dtype)})")
    head += b.allocs
    writes = carry + [n for _, n in ys_out] + [a.split(" = ")[0] for a in b.allocs]
    if not _loop_launch(ctx, lines, head, [b], writes,
                        f"scan: {p['length']} steps in one launch (a device loop over "
                        f"{b.n_launches} launch(es) of the body)", pre):
        return False
    for i, (kind, nm) in enumerate(ctx.outs[:ncarry]):
        if kind != "array":               # a rank-0 carry stays in its device buffer
            fb.device_outs[e.outvars[i]] = f"{carry[i]}[0]"
    return True


def _device_while(ctx):
    """``while`` as one launch: one block evaluates the predicate's launches, reads the
    predicate (after a barrier, every thread the same value), runs the body's launches and
    copies the carry, until the predicate is false (or ``max_steps``). The host reads
    nothing per step. False (a host loop) where either function cannot run on the device."""
    p, e, fb = ctx.p, ctx.e, ctx.fb
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cj, bj = sub_jaxpr(p["cond_jaxpr"]), sub_jaxpr(p["body_jaxpr"])
    if not _device_possible(ctx, [cj, bj]):
        return False
    refs = ctx.ins
    cc, bc = _consts_outer(refs[:nc]), _consts_outer(refs[nc:nc + nb])
    if cc is None or bc is None:
        return False
    pre = f"W{fb.tmp('')[1:]}_"
    ncarry = len(ctx.outs)
    carry, head, init = _carry_buffers(ctx, ctx.outs, e.invars[nc + nb:], refs[nc + nb:], pre)
    carries = list(e.invars[nc + nb:])
    # (the bodies' buffers are named W<k>_C<NAME>, W<k>_B<NAME>: upper case, as every
    # buffer's name; a lower-case one made a loop around this one a host loop)
    cb = _DeviceBody(ctx, cj, nc, "cond", pre + "C", cc + carry,
                     operand_dynamic(ctx, list(e.invars[:nc]) + carries))
    bb = _DeviceBody(ctx, bj, nb, "body", pre + "B", bc + carry,
                     operand_dynamic(ctx, list(e.invars[nc:nc + nb]) + carries))
    if not (cb.ok and bb.ok):
        return False
    updates = _carry_updates(bb, nb, carry)
    if updates is None:
        return False
    # (its counter is not "_step": a host loop's body reads its rows at parameter _step)
    lines = init + ["    _wstep = 0", "    while True:"]
    maxs = p.get("max_steps")
    if maxs is not None:
        lines += [f"        if _wstep >= {int(maxs)}:", "            break"]
    lines += cb.calls
    lines += [f"        if not {cb.rets[0]}:", "            break"]
    lines += bb.calls + updates + ["        cuda.syncthreads()", "        _wstep += 1"]
    head = cb.head_reads + bb.head_reads + head + cb.allocs + bb.allocs
    writes = carry + [a.split(" = ")[0] for a in cb.allocs + bb.allocs]
    if not _loop_launch(ctx, lines, head, [cb, bb], writes,
                        f"while: every step in one launch (a device loop over "
                        f"{cb.n_launches} + {bb.n_launches} launch(es))", pre):
        return False
    for i, (kind, nm) in enumerate(ctx.outs):
        if kind != "array":
            fb.device_outs[e.outvars[i]] = f"{carry[i]}[0]"
    return True


def _op_while(ctx):
    """A device loop (:func:`_device_while`) where the functions allow, else the host
    loop both targets write (``numba_emitter.while_statement``)."""
    if not _device_while(ctx):
        p = ctx.p
        nb = p["body_nconsts"]
        while_statement(ctx, recycling,
                        DeviceCarries(sub_jaxpr(p["body_jaxpr"]), nb, len(ctx.outs)))


# ---------------------------------------------------------------------- data movement
# One thread per output element (grid-stride), index arithmetic as the CPU rules'.

_ATOMIC_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.uint32,
                                        np.uint64)}


def _map_kernel(ctx, dims, make_body):
    """Emit a kernel over ``dims`` (size texts) whose body ``make_body(index names)``
    returns, and its launch; parameters are the body's free names."""
    r = len(dims)
    I = [f"j{k}" for k in range(r)]
    body = make_body(I)
    total = " * ".join(dims) if dims else "1"
    if r == 0:
        ln = ["    if cuda.grid(1) == 0:"] + ["        " + b for b in body]
    else:
        ln = [f"    for _f in range(cuda.grid(1), {total}, cuda.gridsize(1)):"]
        ln += ["        " + b for b in unravel_lines("_f", list(range(r)), dims, I)]
        ln += ["        " + b for b in body]
    from .cuda_launches import Section
    head = 1 + (len(unravel_lines("_f", list(range(r)), dims, I)) if r else 0)
    _launch_section(ctx, Section("single" if r == 0 else "map", [], ln[:head], ln[head:], [],
                                 "1" if r == 0 else total, elems="1" if r == 0 else total), [])


def _all_arrays(ctx, ins=None, scalars=(), scalar_out=False):
    """Whether operands ``ins`` (all) are device arrays, and so are the results: what a
    kernel reads and writes. An operand of ``scalars`` may be a rank-0 value instead (a
    device buffer's element or a host scalar: the kernel reads it with ``ctx.rd``), and
    with ``scalar_out`` a rank-0 result (the rule leaves it in a device buffer)."""
    ins = range(len(ctx.ins)) if ins is None else ins
    return all(ctx.ins[i][0] == "array" or (i in scalars and not ctx.invar(i).aval.shape)
               for i in ins) and all(k == "array" or (scalar_out and k == "scalar")
                                     for k, _ in ctx.outs)


def _out_buffer(ctx, i=0):
    """The buffer result ``i`` is written to: a new array, or for a rank-0 result a
    1-element device buffer the program reads as ``NAME[0]`` (``device_outs``), so the
    value stays on the device. Returns ``(name, rank0)``."""
    if ctx.outs[i][0] != "scalar":
        _alloc_out(ctx, i)
        return ctx.out(i), False
    O = f"{ctx.out(i).upper()}_G"
    ctx.emit(f"{O} = _rt.empty((1,), {dt_text(ctx.outvar(i).aval.dtype)})")
    ctx.fb.device_outs[ctx.outvar(i)] = f"{O}[0]"
    return O, True


def _alloc_out(ctx, i=0, init=None):
    O = ctx.out(i)
    if init is not None and ctx.fb.device_from is None:
        ctx.emit(f"{O} = _rt.dcopy({init})")
        return
    ctx.emit(f"{O} = _rt.empty({ctx.shape_out(i)}, {dt_text(ctx.outvar(i).aval.dtype)})")
    if init is not None:
        # a device loop's body: the buffer is made once before the loop and a launch
        # copies the operand in (_rt.dcopy is a host call: it would make a host loop)
        _map_kernel(ctx, ctx.dims_out(i), lambda I: [
            f"{O}[{', '.join(I)}] = {init}[{', '.join(I)}]"])


def _op_pad(ctx):
    if not _all_arrays(ctx, [0]):
        return host_statement(ctx)
    cfg = ctx.p["padding_config"]
    xd = ctx.dims_in(0)
    los = [ctx.fb.size_param(lo) for lo, hi, it in cfg]
    its = [ctx.fb.size_param(it) for lo, hi, it in cfg]
    X, O, pv = ctx.arr(0), ctx.out(0), ctx.rd(1, [])
    _alloc_out(ctx)

    def body(I):
        lines, src = ["_ok = True"], []
        for k, (i, lo, it) in enumerate(zip(I, los, its)):
            lines.append(f"_p{k} = {i} - ({lo})")
            lines.append(f"_ok = _ok and _p{k} >= 0 and _p{k} % ({it} + 1) == 0 "
                         f"and _p{k} // ({it} + 1) < {xd[k]}")
            src.append(f"_p{k} // ({it} + 1)")
        return lines + ["if _ok:", f"    {O}[{', '.join(I)}] = {X}[{', '.join(src)}]",
                        "else:", f"    {O}[{', '.join(I)}] = {pv}"]
    _map_kernel(ctx, ctx.dims_out(0), body)


def _op_concatenate(ctx):
    if not _all_arrays(ctx):
        return host_statement(ctx)
    ax = ctx.p["dimension"]
    O = ctx.out(0)
    _alloc_out(ctx)
    offs, acc = [], "0"
    for i in range(len(ctx.ins)):
        offs.append(acc)
        acc = f"{acc} + {ctx.dims_in(i)[ax]}" if acc != "0" else ctx.dims_in(i)[ax]

    def body(I):
        lines = []
        for i in range(len(ctx.ins)):
            J = list(I)
            J[ax] = f"{I[ax]} - ({offs[i]})"
            last = i == len(ctx.ins) - 1
            hi = offs[i + 1] if not last else None
            head = "else:" if last and i else ("if True:" if last else
                                               f"{'if' if i == 0 else 'elif'} {I[ax]} < {hi}:")
            lines += [head, f"    {O}[{', '.join(I)}] = {ctx.arr(i)}[{', '.join(J)}]"]
        return lines
    _map_kernel(ctx, ctx.dims_out(0), body)


def _op_dynamic_slice(ctx):
    if not _all_arrays(ctx, [0]) or not ctx.invar(0).aval.shape:
        return host_statement(ctx)
    st, clamp = _kernel_starts(ctx, 1, ctx.dims_in(0), ctx.dims_out(0))
    X, O = ctx.arr(0), ctx.out(0)
    _alloc_out(ctx)
    _map_kernel(ctx, ctx.dims_out(0), lambda I: clamp + [
        f"{O}[{', '.join(I)}] = {X}[{', '.join(f'{s} + {i}' for s, i in zip(st, I))}]"])


def _kernel_starts(ctx, first, xdims, wdims):
    """A dynamic slice's starts (operands ``first``, ...) clamped into ``[0, n - w]``
    by the kernel: ``(names, lines)``. A start a kernel computed stays in its device
    buffer (no read back to the host, which waits for the device), and a device loop's
    body can slice at its own step's index."""
    names = [ctx.fb.tmp("st") for _ in xdims]
    return names, [clamped_start(t, ctx.rd(first + k, []), n, w)
                   for k, (t, n, w) in enumerate(zip(names, xdims, wdims))]


def _op_dynamic_update_slice(ctx):
    if not _all_arrays(ctx, [0, 1]) or not ctx.invar(0).aval.shape:
        return host_statement(ctx)
    st, clamp = _kernel_starts(ctx, 2, ctx.dims_in(0), ctx.dims_in(1))
    U, O = ctx.arr(1), ctx.out(0)
    _alloc_out(ctx, init=ctx.arr(0))
    _map_kernel(ctx, ctx.dims_in(1), lambda I: clamp + [
        f"{O}[{', '.join(f'{s} + {i}' for s, i in zip(st, I))}] = {U}[{', '.join(I)}]"])


def _clip_lines(names, reads, sizes):
    """The interpreter's gather/scatter index rule (numba_runtime.clip_index): clip to
    [-n, n-1], then wrap negatives."""
    lines = []
    for t, rd, n in zip(names, reads, sizes):
        lines += [f"{t} = {rd}", f"if {t} < -{n}:", f"    {t} = -{n}", f"if {t} > {n} - 1:",
                  f"    {t} = {n} - 1", f"if {t} < 0:", f"    {t} += {n}"]
    return lines


def _scatter_index_lines(names, reads, sizes, drop, rest):
    """A scatter's index lines, then ``rest`` (the writes): the interpreter's clip rule
    (:func:`_clip_lines`), or with ``drop`` (``mode="drop"``) ``rest`` only for a row
    inside the array."""
    if not drop:
        return _clip_lines(names, reads, sizes) + rest
    inside = " and ".join(f"0 <= {t} < {n}" for t, n in zip(names, sizes)) or "True"
    return ([f"{t} = {rd}" for t, rd in zip(names, reads)] + [f"if {inside}:"]
            + ["    " + b for b in rest])


def _gather_parts(ctx):
    idx = ctx.invar(1)
    k = idx.aval.shape[-1]
    xd, idd = ctx.dims_in(0), ctx.dims_in(1)
    return k, xd, idd[:-1], xd[k:], _nonempty(xd[:k])


def _nonempty(sizes):
    """The condition that axes of ``sizes`` (size texts) are all non-empty; None where
    every one is a constant above 0 (no branch is written, so the buffers of the
    statement stay ones the pool can take back)."""
    return " and ".join(f"{s} > 0" for s in sizes if not (s.isdigit() and int(s) > 0)) \
        or None


def _when(ctx, cond):
    """``ctx.block(f"if {cond}:")``, or nothing where ``cond`` is None (always true)."""
    return contextlib.nullcontext() if cond is None else ctx.block(f"if {cond}:")


def _emit_gather(ctx, k, lead, reads):
    """A thread per output element of a gather over the k leading axes of operand 0;
    ``reads(L)`` gives the k index expressions at lead position ``L``. A rank-0 result
    (``x[i]`` of a 1-D ``x``) stays in a 1-element device buffer, read as ``O[0]``."""
    xd = ctx.dims_in(0)
    X = ctx.arr(0)
    dt = dt_text(ctx.outvar(0).aval.dtype)
    O, rank0 = _out_buffer(ctx)

    def body(I):
        L, R = I[:len(lead)], I[len(lead):]
        t = [f"_g{a}" for a in range(k)]
        return _clip_lines(t, reads(L), xd[:k]) + [
            f"{O}[{', '.join(I) or '0'}] = {X}[{', '.join(t + R)}]"]
    nonempty = _nonempty(xd[:k])
    with _when(ctx, nonempty):
        _map_kernel(ctx, lead + xd[k:], body)
    if nonempty is not None:
        with ctx.block("else:"):
            ctx.emit(f"{O} = _rt.zeros({'(1,)' if rank0 else ctx.shape_out(0)}, {dt})")


def _op_gather(ctx):
    # the indices stacked on the last axis of operand 1
    if not _all_arrays(ctx, scalar_out=True):
        return host_statement(ctx)
    k, _, lead, _, _ = _gather_parts(ctx)
    IX = ctx.arr(1)
    _emit_gather(ctx, k, lead,
                 lambda L: [f"{IX}[{', '.join(L + [str(a)])}]" for a in range(k)])


def _op_index_gather(ctx):
    # the k indices read from operands 1..k, of the result's lead shape (rank 0: scalars)
    if not _all_arrays(ctx, scalars=range(1, len(ctx.ins)), scalar_out=True):
        return host_statement(ctx)
    k = len(ctx.ins) - 1
    _emit_gather(ctx, k, ctx.dims_in(1), lambda L: [ctx.rd(1 + a, L) for a in range(k)])


def _op_scatter(kind):
    add = kind == "add"

    def rule(ctx):
        # the update may be a rank-0 value (x.at[i].set(s) of a 1-D x)
        dt = ctx.outvar(0).aval.dtype
        cplx = dt.kind == "c"
        if not _all_arrays(ctx, scalars=(2,)) or (cplx and not ctx.outvar(0).aval.shape):
            return host_statement(ctx)
        # a dtype without atomics (bool, int8, int16, ...) adds as a scatter sets: each
        # trailing element's thread walks the index rows in order
        atomic = add and (dt in _ATOMIC_DTYPES or cplx)
        k, xd, lead, trail, nonempty = _gather_parts(ctx)
        drop = ctx.p.get("mode", "clip") == "drop"
        IX, O = ctx.arr(1), ctx.out(0)
        _alloc_out(ctx, init=ctx.arr(0))
        t = [f"_g{a}" for a in range(k)]

        def rd(L):
            return [f"{IX}[{', '.join(L + [str(a)])}]" for a in range(k)]
        if atomic:
            if cplx:
                # no complex atomics: the real and imaginary parts add atomically in the
                # result's memory seen as floats (its last axis twice as long)
                ctx.emit(f"{O}_RI = {O}.view({dt_text(real_dtype(dt))})")

            # every (index row, element) its own thread; collisions add atomically
            def body(I):
                L, R = I[:len(lead)], I[len(lead):]
                tgt = t + R
                if not cplx:
                    ix = tgt[0] if len(tgt) == 1 else "(" + ", ".join(tgt) + ")"
                    return _scatter_index_lines(
                        t, rd(L), xd[:k], drop,
                        [f"cuda.atomic.add({O}, {ix}, {ctx.rd(2, I)})"])
                lines = [f"_u = {ctx.rd(2, I)}"]
                for off, part in ((0, "real"), (1, "imag")):
                    ix = tgt[:-1] + [f"2 * {tgt[-1]} + {off}"]
                    # (numba-cuda 0.30 cannot lower a 1-tuple index of a 1-D array in
                    # an atomic, "Cannot cast UniTuple(int64 x 1) to int64"; the
                    # simulator takes it: an index, not a tuple, at rank 1)
                    ix = ix[0] if len(ix) == 1 else "(" + ", ".join(ix) + ")"
                    lines.append(f"cuda.atomic.add({O}_RI, {ix}, _u.{part})")
                return _scatter_index_lines(t, rd(L), xd[:k], drop, lines)
            dims = lead + trail
        else:
            # a thread per element of the trailing axes walks the index rows in order, so
            # the last of several writes to one place wins, as in numpy
            def body(R):
                L = [f"_l{a}" for a in range(len(lead))]
                lines = [f"for _l in range({' * '.join(lead) or '1'}):"]
                lines += ["    " + b for b in unravel_lines("_l", list(range(len(lead))),
                                                             lead, L)]
                at = f"{O}[{', '.join(t + R)}]"
                val = ctx.rd(2, L + R)
                if kind != "set":     # numpy's add.at: bools or, integers wrap
                    val = ctx.fb.cast(scatter_text(kind, dt, at, val), dt)
                return lines + ["    " + b for b in _scatter_index_lines(
                    t, rd(L), xd[:k], drop, [f"{at} = {val}"])]
            dims = trail
        with _when(ctx, nonempty):
            _map_kernel(ctx, dims, body)
    return rule


def _lane(I, axis, k):
    J = list(I)
    J.insert(axis, k)
    return ", ".join(J)


def _argext_first(kind, dt, v, i, b, j):
    """Whether element ``v`` at ``i`` goes before ``b`` at ``j`` in ``arg{kind}``'s order
    (numpy's): a NaN before every number, then the larger (``min``: smaller) value, then
    the smaller index. A total order, so partial results combine in any grouping to the
    same index."""
    cmp = ">" if kind == "max" else "<"
    if dt.kind == "f":
        return (f"(({v} != {v}) and ({b} == {b} or {i} < {j})) or ({b} == {b} and "
                f"({v} {cmp} {b} or ({v} == {b} and {i} < {j})))")
    return f"({v} {cmp} {b}) or ({v} == {b} and {i} < {j})"


def _argext_init(kind, dt):
    """The value a thread's (value, index) pair starts from, with the lane's length as its
    index: every element of the lane goes before it (:func:`_argext_first`)."""
    if dt.kind == "f":
        return -np.inf if kind == "max" else np.inf
    if dt == np.bool_:
        return kind == "min"
    info = np.iinfo(dt)
    return info.min if kind == "max" else info.max


def _argext_strategy(lanes, n):
    """How ``argmax``/``argmin`` over ``lanes`` lanes of ``n`` elements runs (static sizes,
    else None): ``grid`` (one lane, every block over it, the last block combining their
    results), ``block`` (a block per lane), ``rows`` (a group of ``ROW_GROUP`` lanes, a warp
    on a GPU, per lane), or ``serial`` (a thread per lane)."""
    from .cuda_runtime import ROW_GROUP, TPB
    if lanes is None or n is None or n < ROW_GROUP:
        return "serial"
    if n >= TPB:
        return "grid" if lanes == 1 else "block"
    return "rows"


def _argext_parallel(ctx, kind, strat, X, O, oidx, d, axis):
    """The section of a parallel ``arg{kind}`` (:func:`_argext_strategy`): each thread
    keeps the first extreme of the elements it strides over with its index, then a
    shared-memory tree per lane (per block for ``grid``, whose blocks leave their pair in
    a partial array and the last to finish combines them in place of a second launch).
    Returns the section and its host lines."""
    from .cuda_launches import Section
    fb = ctx.fb
    dt = ctx.invar(0).aval.dtype
    it = np.dtype(ctx.p["index_dtype"])
    n = d[axis]
    r = len(d)
    kept = [k for k in range(r) if k != axis]
    idx = [f"i{k}" for k in range(r)]
    vt, jt = fb.mod.type_name(dt), fb.mod.type_name(np.int64)
    sv, sj, b, bj, v = fb.tmp("sh"), fb.tmp("sh"), fb.tmp("b"), fb.tmp("bj"), fb.tmp("v")
    init = fb.lit(_argext_init(kind, dt), dt)
    first = lambda a, i, c, j: _argext_first(kind, dt, a, i, c, j)   # noqa: E731
    pre = [f"    {sv} = cuda.shared.array(_TPB, {vt})",
           f"    {sj} = cuda.shared.array(_TPB, {jt})", "    _tx = cuda.threadIdx.x"]

    def keep(ind, a, i):               # the pair (a, i) if it goes before the thread's
        return [ind + f"if {first(a, i, b, bj)}:", ind + f"    {b} = {a}",
                ind + f"    {bj} = {i}"]

    def tree(ind, group, lane):
        p = "    " * ind
        ln = [p + f"{sv}[_tx] = {b}", p + f"{sj}[_tx] = {bj}", p + "cuda.syncthreads()",
              p + f"_s = {group} // 2", p + "while _s > 0:", p + f"    if {lane} < _s:",
              p + f"        {v} = {sv}[_tx + _s]", p + f"        _j = {sj}[_tx + _s]",
              p + f"        if {first(v, '_j', f'{sv}[_tx]', f'{sj}[_tx]')}:",
              p + f"            {sv}[_tx] = {v}", p + f"            {sj}[_tx] = _j",
              p + "    cuda.syncthreads()", p + "    _s //= 2"]
        return ln

    def store(ind, at, I=idx):
        return [ind + f"{O}[{oidx(I)}] = {fb.cast(f'{sj}[{at}]', it)}"]
    read = f"{X}[{', '.join(idx)}]"
    host = []
    if strat == "grid":
        total = " * ".join(d)
        pre += [f"    {b} = {init}", f"    {bj} = {n}"]
        header = [f"    for _f in range(cuda.grid(1), {total}, cuda.gridsize(1)):"]
        header += ["        " + s for s in unravel_lines("_f", list(range(r)), d, idx)]
        inner = [f"        {v} = {read}"] + keep("        ", v, idx[axis])
        pv, pj = f"{O}_PV", f"{O}_PJ"
        tk = f"{O}_TK"
        host += [f"{pv} = _rt.empty((_rt.MAX_BLOCKS,), {dt_text(dt)})",
                 f"{pj} = _rt.empty((_rt.MAX_BLOCKS,), np.int64)",
                 f"{tk} = {fb.mod.ticket()}"]
        fb.mod.types.add("int32")
        post = tree(1, "_TPB", "_tx")
        post += ["    _last = cuda.shared.array(1, _T_int32)", "    if _tx == 0:",
                 f"        {pv}[cuda.blockIdx.x] = {sv}[0]",
                 f"        {pj}[cuda.blockIdx.x] = {sj}[0]", "        _dm.threadfence()",
                 f"        _last[0] = cuda.atomic.add({tk}, 0, 1) == cuda.gridDim.x - 1",
                 "    cuda.syncthreads()", "    if _last[0]:",
                 f"        {b} = {init}", f"        {bj} = {n}",
                 "        for _i in range(_tx, cuda.gridDim.x, _TPB):"]
        post += [f"            {v} = {pv}[_i]", f"            _j = {pj}[_i]"]
        post += keep("            ", v, "_j")
        post += tree(2, "_TPB", "_tx")
        # (one lane: every kept axis has one element)
        post += ["        if _tx == 0:"] + store("            ", "0", ["0"] * r)
        post += [f"            {tk}[0] = 0"]
        return Section("grid", pre, header, inner, post, total, elems=total), host
    lanes = " * ".join(d[k] for k in kept) or "1"
    total = " * ".join(d)
    if strat == "block":
        header = [f"    for _p in range(cuda.blockIdx.x, {lanes}, cuda.gridDim.x):"]
        header += ["        " + s for s in unravel_lines("_p", kept, d, idx)]
        inner = [f"        {b} = {init}", f"        {bj} = {n}",
                 f"        for _r in range(_tx, {n}, _TPB):", f"            {idx[axis]} = _r",
                 f"            {v} = {read}"] + keep("            ", v, "_r")
        inner += tree(2, "_TPB", "_tx") + ["        if _tx == 0:"] + store("            ", "0")
        inner.append("        cuda.syncthreads()")
        return Section("block", pre, header, inner, [], lanes, elems=total), host
    pre += ["    _g = _tx // _RG", "    _ln = _tx % _RG"]
    header = [f"    for _p0 in range(cuda.blockIdx.x * _RPB, {lanes}, cuda.gridDim.x * _RPB):",
              "        _p = _p0 + _g"]
    inner = [f"        {b} = {init}", f"        {bj} = {n}", f"        if _p < {lanes}:"]
    inner += ["            " + s for s in unravel_lines("_p", kept, d, idx)]
    inner += [f"            for _r in range(_ln, {n}, _RG):", f"                {idx[axis]} = _r",
              f"                {v} = {read}"] + keep("                ", v, "_r")
    inner += tree(2, "_RG", "_ln") + [f"        if _ln == 0 and _p < {lanes}:"]
    inner += ["            " + s for s in unravel_lines("_p", kept, d, idx)]
    inner += store("            ", "_tx") + ["        cuda.syncthreads()"]
    return Section("rows", pre, header, inner, [], lanes, elems=total), host


def _launch_section(ctx, sec, host):
    """A kernel of one section: a launch record where the fusion pass may merge it (the
    host function's top level), else a kernel launched in place."""
    from .cuda_launches import Launch
    if ctx.ind == 0:
        ctx.lines.append(Launch([sec], host))
        return
    for h in host:
        ctx.emit(h)
    params = free_names("\n".join(sec.lines), ctx.fb.mod.consts.values())
    name = ctx.fb.mod.kernel("\n".join([f"def «K»({', '.join(params)}):"] + sec.lines))
    ctx.emit(f"{name}[{sec.grid_text()}, _TPB]({', '.join(params)})")


def _op_argext(kind):
    def rule(ctx):
        """``arg{kind}`` along ``axis``: numpy's index (the first extreme; the first NaN
        wins over everything). Lanes long enough run in parallel
        (:func:`_argext_strategy`); short or complex lanes a thread each, walking it."""
        x = ctx.invar(0)
        if not x.aval.shape or not _all_arrays(ctx, scalar_out=True):
            return host_statement(ctx)
        axis = ctx.p["axis"]
        d = ctx.dims_in(0)
        kept = [n for a, n in enumerate(d) if a != axis]
        it = np.dtype(ctx.p["index_dtype"])
        X = ctx.arr(0)
        O, rank0 = _out_buffer(ctx)        # a vector's index stays on the device
        static = [int(s) if s.isdigit() else None for s in d]
        lanes = None if None in static else int(np.prod(
            [s for a, s in enumerate(static) if a != axis]))
        strat = ("serial" if x.aval.dtype.kind == "c"
                 else _argext_strategy(lanes, static[axis]))
        if strat != "serial":
            oidx = (lambda I: "0") if rank0 else (     # noqa: E731
                lambda I: ", ".join(I[a] for a in range(len(d)) if a != axis))
            _launch_section(ctx, *_argext_parallel(ctx, kind, strat, X, O, oidx, d, axis))
            return
        cmp = ">" if kind == "max" else "<"
        nan = x.aval.dtype.kind == "f"
        best, bi, v = ctx.fb.tmp("best"), ctx.fb.tmp("bi"), ctx.fb.tmp("v")

        def body(I):
            # the first extreme wins; the first NaN wins over everything (numpy)
            cond = f"({v} {cmp} {best})" + (
                f" or ({v} != {v} and {best} == {best})" if nan else "")
            if x.aval.dtype.kind == "c":     # lexicographic; a NaN in either part
                cond = (f"(not «C».cisnan({best})) and («C».c{'gt' if kind == 'max' else 'lt'}"
                        f"({v}, {best}) or «C».cisnan({v}))")
            return [f"{bi} = 0", f"if {d[axis]} > 0:",
                    f"    {best} = {X}[{_lane(I, axis, '0')}]",
                    f"    for _k in range(1, {d[axis]}):",
                    f"        {v} = {X}[{_lane(I, axis, '_k')}]",
                    f"        if {cond}:", f"            {best} = {v}", f"            {bi} = _k",
                    f"{O}[{', '.join(I) or '0'}] = {ctx.fb.cast(bi, it)}"]
        _map_kernel(ctx, kept, body)
    return rule


def _op_small_linalg(ctx):
    """``solve``, ``slogdet``, ``cholesky``, ``triangular_solve`` of real matrices of known
    sizes up to ``numba_cuda_linalg.SMALL_N``: a kernel of a block per system (a launch
    record, so a loop around it stays a device loop); else the library (``_rt.linalg``)."""
    name = ctx.e.primitive.name
    dims = [ctx.dims_in(i) for i in range(len(ctx.ins))]
    dt = ctx.outvar(0).aval.dtype
    if (dt.kind != "f" or not _all_arrays(ctx, scalar_out=name == "slogdet")
            or not small_linalg.fits(*dims)
            or any(ctx.invar(i).aval.dtype != dt for i in range(len(ctx.ins)))):
        return host_statement(ctx, "linalg")
    fb = ctx.fb
    a = [int(s) for s in dims[0]]
    batch, n = a[:-2], a[-1]
    tname, t = fb.mod.type_name(dt), fb.tmp("")
    fb.mod.types.update({"int32", "int64"})
    A = ctx.arr(0)
    if name == "slogdet":
        outs = [_out_buffer(ctx, i)[0] for i in range(2)]
        lits = [fb.lit(v, dt) for v in (0, 1, -1, -np.inf)]
        sec = small_linalg.slogdet_section(A, outs[0], outs[1], batch, n, tname, lits,
                                           lambda v: f"«M».log({v})", t)
        _launch_section(ctx, sec, [])
        return
    _alloc_out(ctx)
    O = ctx.out(0)
    if name == "cholesky":
        sec = small_linalg.cholesky_section(
            A, O, batch, n, tname, fb.lit(np.nan, dt), fb.lit(0, dt), fb.lit(1, dt),
            lambda v: f"«M».sqrt({v})", t)
    elif name == "solve":
        sec = small_linalg.solve_section(A, ctx.arr(1), O, batch, n, int(dims[1][-1]), tname,
                                         fb.lit(np.nan, dt), t)
    else:
        p = ctx.p
        k = int(dims[1][-1] if p["left_side"] else dims[1][-2])
        sec = small_linalg.triangular_section(
            A, ctx.arr(1), O, batch, n, k, tname, p["left_side"], p["lower"],
            p["transpose_a"], p["unit_diagonal"], t)
    _launch_section(ctx, sec, [])


#: the longest lane a sort kernel ranks (each thread compares its element with the whole
#: lane: n² comparisons), and the most comparisons of one such kernel; longer lanes sort
#: in the library (``cuda_runtime.sort``: CuPy's stable sort, else numpy on the host)
SORT_LANE_MAX = 4096
SORT_WORK_MAX = 1 << 28


def _op_sort(arg):
    def rule(ctx):
        """A stable sort (``argsort``: the permutation) along ``dimension``, in numpy's
        order (NaN last): a thread per element counts the lane's elements before it
        (smaller, or equal and earlier) and writes it at that rank. Ranks are a
        permutation, so every place is written once, with no atomics and the same
        result every run."""
        x = ctx.invar(0)
        dims = ctx.dims_in(0)
        axis = ctx.p["dimension"]
        if (x.aval.dtype.kind == "c" or not x.aval.shape or not _all_arrays(ctx)
                or not all(d.isdigit() for d in dims) or int(dims[axis]) > SORT_LANE_MAX
                or int(np.prod([int(d) for d in dims])) * int(dims[axis]) > SORT_WORK_MAX):
            return host_statement(ctx, "sort")
        X, O = ctx.arr(0), ctx.out(0)
        _alloc_out(ctx)
        before = "_w < _v or (_w == _v and _k < _i)"
        if x.aval.dtype.kind == "f":      # NaN after every number, NaNs equal
            before = ("_w < _v or (_v != _v and _w == _w) or ((_w == _v or (_w != _w and "
                      "_v != _v)) and _k < _i)")

        def body(I):
            J = list(I)
            J[axis] = "_k"
            out = list(I)
            out[axis] = "_r"
            val = ctx.fb.cast("_i", np.int64) if arg else "_v"
            return [f"_v = {X}[{', '.join(I)}]", f"_i = {I[axis]}", "_r = 0",
                    f"for _k in range({dims[axis]}):", f"    _w = {X}[{', '.join(J)}]",
                    f"    if {before}:", "        _r += 1",
                    f"{O}[{', '.join(out)}] = {val}"]
        _map_kernel(ctx, dims, body)
    return rule


def cumulative_statement(ctx):
    """A cumulative primitive, combining with the elementwise primitive its facts name:
    one thread per lane walks it in order (from the end when ``reverse``); a lane of at
    least ``CUMULATIVE_BLOCK_MIN`` elements (a known size) runs on a block
    (:func:`_cumulative_block`), and a single lane of at least ``CUMULATIVE_GRID_MIN``
    outside device loops over the grid (:func:`_cumulative_grid`)."""
    x = ctx.invar(0)
    if not x.aval.shape or not _all_arrays(ctx):
        return host_statement(ctx)
    axis, reverse = ctx.p["axis"], ctx.p["reverse"]
    d = ctx.dims_in(0)
    kept = [n for a, n in enumerate(d) if a != axis]
    dt = x.aval.dtype
    X, O = ctx.arr(0), ctx.out(0)
    combine = expression_rule(ctx.e.primitive.lowering.combine)
    _alloc_out(ctx)
    fb = ctx.fb
    acc, v, first = fb.tmp("acc"), fb.tmp("v"), fb.tmp("first")

    def comb(a, b, I):
        c = combine.expr(EwCtx(fb, {}, dt, [dt, dt], I), [a, b])
        return c if dt == np.float64 else fb.cast(c, dt)
    from .cuda_runtime import TPB
    if d[axis].isdigit() and int(d[axis]) >= max(CUMULATIVE_BLOCK_MIN, 2 * TPB):
        if (all(k == "1" for k in kept) and ctx.ind == 0 and fb.device_from is None
                and int(d[axis]) >= CUMULATIVE_GRID_MIN
                and _cumulative_segments(int(d[axis])) > 1):
            for sec, host in _cumulative_grid(ctx, X, O, d, axis, reverse, comb):
                _launch_section(ctx, sec, host)
            return
        _launch_section(ctx, _cumulative_block(ctx, X, O, d, axis, reverse, comb), [])
        return

    def body(I):
        rng = f"range({d[axis]} - 1, -1, -1)" if reverse else f"range({d[axis]})"
        lines = [f"{first} = True", f"{acc} = " + ctx.lit(0, dt), f"for _k in {rng}:",
                 f"    {v} = {X}[{_lane(I, axis, '_k')}]", f"    if {first}:",
                 f"        {acc} = {v}", f"        {first} = False", "    else:"]
        lines += [f"        {acc} = {comb(acc, v, I)}", f"    {O}[{_lane(I, axis, '_k')}] = {acc}"]
        return lines
    _map_kernel(ctx, kept, body)


#: the shortest lane a cumulative primitive scans on a block of threads (and at least two
#: elements a thread); shorter lanes are a thread's walk
CUMULATIVE_BLOCK_MIN = 512


#: the shortest single lane (outside device loops) a cumulative primitive scans over
#: several blocks (:func:`_cumulative_grid`)
CUMULATIVE_GRID_MIN = 8192


def _cumulative_segments(n):
    """Segments (a block's each) of a lane of ``n`` scanned over the grid: as many blocks
    as a grid-stride launch over it takes, at most ``_TPB`` (the last block combines their
    totals in one shared array)."""
    from .cuda_runtime import TPB, blocks
    return min(blocks(n), TPB)


class _ChunkScan:
    """The lines a block scans a stretch ``[_lo, _hi)`` of a lane with (its kernel
    defines ``_lo``, ``_hi`` and ``_tx``): each thread takes a contiguous chunk of
    ``chunk`` elements in scan order. ``totals``: each thread's chunk combined into
    ``sh[_tx]``, and ``_nc``, the chunks there are. ``rescan(start)``: thread 0 turns the
    chunks' totals into running totals in order (from ``start = (value, present)`` where
    the stretch has elements before it), then each thread walks its chunk again from the
    total before it, writing ``O``. The order of every combination is fixed by the sizes,
    so the result is the same every run."""

    def __init__(self, ctx, X, O, n, I, axis, reverse, comb, chunk):
        fb = ctx.fb
        dt = ctx.invar(0).aval.dtype
        self.sh, self.a, self.first = fb.tmp("sh"), fb.tmp("acc"), fb.tmp("first")
        self.comb, self.I = comb, I
        self.pre = [f"    {self.sh} = cuda.shared.array(_TPB, {fb.mod.type_name(dt)})",
                    "    _tx = cuda.threadIdx.x"]
        v, a, first = fb.tmp("v"), self.a, self.first

        def at(A):
            J = list(I)
            J[axis] = f"{n - 1} - _s" if reverse else "_s"
            return f"{A}[{', '.join(J)}]"
        self.chunk, self.out = chunk, at(O)
        self.mine = f"_lo + _tx * {chunk} < _hi"
        self.walk = [f"            for _s in range(_lo + _tx * {chunk}, "
                     f"min(_lo + _tx * {chunk} + {chunk}, _hi)):",
                     f"                {v} = {at(X)}", f"                if {first}:",
                     f"                    {a} = {v}", f"                    {first} = False",
                     "                else:", f"                    {a} = {comb(a, v, I)}"]
        self.totals = [f"        {a} = {ctx.lit(0, dt)}", f"        {first} = True",
                       f"        if {self.mine}:"] + self.walk + [
            f"            {self.sh}[_tx] = {a}", "        cuda.syncthreads()",
            f"        _nc = (_hi - _lo + {chunk} - 1) // {chunk} if _hi > _lo else 0"]

    def rescan(self, start=None):
        sh, a, first, comb, I = self.sh, self.a, self.first, self.comb, self.I
        lines = ["        if _tx == 0:"]
        if start is not None:
            lines += [f"            if {start[1]}:",
                      f"                {sh}[0] = {comb(start[0], f'{sh}[0]', I)}"]
        lines += ["            for _ct in range(1, _nc):",
                  f"                {sh}[_ct] = {comb(f'{sh}[_ct - 1]', f'{sh}[_ct]', I)}",
                  "        cuda.syncthreads()"]
        if start is None:
            lines += [f"        {first} = _tx == 0",
                      f"        {a} = {sh}[_tx - 1 if _tx > 0 else 0]"]
        else:
            lines += [f"        {first} = _tx == 0 and not {start[1]}",
                      "        if _tx > 0:", f"            {a} = {sh}[_tx - 1]",
                      f"        elif {start[1]}:", f"            {a} = {start[0]}"]
        return lines + [f"        if {self.mine}:"] + self.walk + [
            f"                {self.out} = {a}", "        cuda.syncthreads()"]


def _cumulative_grid(ctx, X, O, d, axis, reverse, comb):
    """One long lane over ``G`` segments (:func:`_cumulative_segments`), two launches.
    The first: each segment's block combines it (:class:`_ChunkScan`), writes its total
    and takes a ticket; the block taking the last combines the totals in order into each
    segment's starting total. The second: each segment's block walks it again from its
    starting total. ``G`` is a constant of both kernels (a block takes the segments
    ``blockIdx.x``, ``+ gridDim.x``, ...: right whatever grid a merged launch has).
    Deterministic: the association is fixed by ``n`` and ``G``."""
    from .cuda_launches import Section
    fb = ctx.fb
    dt = ctx.invar(0).aval.dtype
    n = int(d[axis])
    G = _cumulative_segments(n)
    I = ["0"] * len(d)
    fb.mod.types.update({"int32", "boolean"})
    seg = f"(({n} + {G} - 1) // {G})"
    cs = _ChunkScan(ctx, X, O, n, I, axis, reverse, comb, f"(({seg} + _TPB - 1) // _TPB)")
    sh, a, first, shf, v = cs.sh, cs.a, cs.first, fb.tmp("shf"), fb.tmp("v")
    PT, PF, TK = f"{O}_PT", f"{O}_PF", f"{O}_TK"
    head = [f"    for _b in range(cuda.blockIdx.x, {G}, cuda.gridDim.x):",
            f"        _lo = _b * {seg}", f"        _hi = min(_lo + {seg}, {n})"]
    # the first launch: each segment's total, then the starting totals of all
    inner1 = cs.totals + [
        "        if _tx == 0:",
        "            for _ct in range(1, _nc):",
        f"                {sh}[0] = {comb(f'{sh}[0]', f'{sh}[_ct]', I)}",
        f"            {PT}[_b] = {sh}[0]", f"            {PF}[_b] = _nc > 0",
        "            _dm.threadfence()",
        f"            _last[0] = cuda.atomic.add({TK}, 0, 1) == {G} - 1",
        "        cuda.syncthreads()",
        "        if _last[0]:",
        f"            for _q in range(_tx, {G}, _TPB):",
        f"                {sh}[_q] = {PT}[_q]", f"                {shf}[_q] = {PF}[_q]",
        "            cuda.syncthreads()",
        "            if _tx == 0:",                  # segment q starts from PT[q], PF[q]
        f"                {first} = True", f"                {a} = {sh}[0]",
        f"                for _q in range({G}):",
        f"                    {v} = {sh}[_q]", f"                    _have = {shf}[_q]",
        f"                    {PT}[_q] = {a}", f"                    {PF}[_q] = not {first}",
        "                    if _have:",
        f"                        if {first}:",
        f"                            {a} = {v}", f"                            {first} = False",
        "                        else:", f"                            {a} = {comb(a, v, I)}",
        f"                {TK}[0] = 0",
        "        cuda.syncthreads()"]
    pre1 = cs.pre + [f"    {shf} = cuda.shared.array(_TPB, _T_boolean)",
                     "    _last = cuda.shared.array(1, _T_int32)"]
    host = [f"{PT} = _rt.empty(({G},), {dt_text(dt)})", f"{PF} = _rt.empty(({G},), np.bool_)",
            f"{TK} = {fb.mod.ticket()}"]
    total = " * ".join(d)
    s1 = Section("scan_totals", pre1, head, inner1, [], total, elems=total, grid=str(G))
    # the second: each segment again, from its starting total
    inner2 = cs.totals + cs.rescan((f"{PT}[_b]", f"{PF}[_b]"))
    s2 = Section("scan_apply", cs.pre, head, inner2, [], total, elems=total, grid=str(G))
    return [(s1, host), (s2, [])]


def _cumulative_block(ctx, X, O, d, axis, reverse, comb):
    """A block per lane (:class:`_ChunkScan` over the whole lane): a sum's rounding is
    that of chunks of ``n / _TPB`` elements, not of one running sum."""
    from .cuda_launches import Section
    n = int(d[axis])
    kept = [k for k in range(len(d)) if k != axis]
    I = [f"i{k}" for k in range(len(d))]
    lanes = " * ".join(d[k] for k in kept) or "1"
    cs = _ChunkScan(ctx, X, O, n, I, axis, reverse, comb, f"(({n} + _TPB - 1) // _TPB)")
    header = [f"    for _p in range(cuda.blockIdx.x, {lanes}, cuda.gridDim.x):"]
    header += ["        " + s for s in unravel_lines("_p", kept, d, I)]
    header += ["        _lo = 0", f"        _hi = {n}"]
    return Section("block", cs.pre, header, cs.totals + cs.rescan(), [], lanes,
                   elems=" * ".join(d))


# host statements (the rest of the opaque primitives: HOST_CALLS) take complex values as
# they are; so do the kernels of data movement, the running extremes and control flow
for _n, _rule in [("pad", _op_pad), ("concatenate", _op_concatenate),
                  ("dynamic_slice", _op_dynamic_slice),
                  ("dynamic_update_slice", _op_dynamic_update_slice), ("gather", _op_gather),
                  ("index_gather", _op_index_gather), ("scatter", _op_scatter("set")),
                  ("argmax", _op_argext("max")), ("argmin", _op_argext("min")),
                  ("cond", cond_statement), ("while", _op_while), ("scan", _op_scan)]:
    register_statement(_n, _rule, complex=True)
register_statement("dot_general", _op_dot_general, complex=True)
# cuFFT through CuPy (else numpy on the host: cuda_runtime.fft)
register_statement("fft", _library("fft"), complex=True)
# complex values sort on the host (numpy's lexicographic order with its NaN rules)
register_statement("sort", _op_sort(False), complex=True)
register_statement("argsort", _op_sort(True), complex=True)
register_statement("scatter_add", _op_scatter("add"), complex=True)
register_statement("scatter_mul", _op_scatter("mul"), complex=True)
for _kind in ("min", "max"):
    register_statement(f"scatter_{_kind}", _op_scatter(_kind))
# complex too: cuSOLVER through CuPy, else numpy/LAPACK on the host; small real matrices
# of known sizes are kernels (numba_cuda_linalg)
for _n in ("eigh", "qr", "svd"):
    register_statement(_n, _library("linalg"), complex=True)
for _n in ("cholesky", "triangular_solve", "solve", "slogdet"):
    register_statement(_n, _op_small_linalg, complex=True)
