"""The Numba-CPU statements of the opaque primitives, and the planner records of every
primitive that is not elementwise.

An opaque equation (BLAS, LAPACK, sorting, gathers and scatters, control flow) is a block
of statements of its own, written by its record's rule from an :class:`OpCtx` (operand
references, result names). A cumulative primitive needs no record: its lowering facts
name the elementwise primitive combining the running value with the next element
(``LoweringFacts.combine``), and :func:`cumulative_statement` writes the scan along its
axis with that primitive's CPU expression.

>>> from autodiff.backends.plan import LOWERINGS
>>> import autodiff.backends.numba_cpu_statements                     # noqa: F401
>>> LOWERINGS["dot_general"].kind, LOWERINGS["transpose"].kind
('opaque', 'view')
"""
import numpy as np

from ..core import primitives
from .dimensions import (dim_bid, dim_concat, dim_dot, dim_eigh, dim_expand, dim_first_to_out,
                         dim_gather, dim_index_gather, dim_qr, dim_reduce, dim_same, dim_scatter,
                         dim_slogdet, dim_solve, dim_squeeze, dim_svd, dim_transpose, no_dims)
from .numba_cpu_expressions import expression, import_helper
from .numba_emitter import (acc_dtype, call_text, carry_init, clamped_starts,
                            cond_statement, dt_text, scatter_text, sub_jaxpr,
                            while_statement)
from .plan import LOWERINGS, register_lowering

__all__ = ["cumulative_statement", "statement_rule"]


def cumulative_statement(ctx):
    """A cumulative primitive along its ``axis`` (from the end when ``reverse``): each
    element combined with the previous result by the primitive its facts name (``add``
    for a sum, ``max`` for a running maximum: numpy's ``maximum.accumulate``)."""
    x = ctx.invar(0)
    dt = x.aval.dtype
    if not x.aval.shape:
        ctx.wr(0, [], ctx.rd(0, []))
        return
    combine = ctx.e.primitive.lowering.combine
    axis, reverse = ctx.p["axis"], ctx.p["reverse"]
    ctx.alloc(0)
    sizes = ctx.dims_in(0)
    with ctx.loops(sizes, reverse_at=axis if reverse else None) as I:
        v = ctx.rd(0, I)
        first = f"{I[axis]} == {sizes[axis]} - 1" if reverse else f"{I[axis]} == 0"
        P = list(I)
        P[axis] = f"{I[axis]} + 1" if reverse else f"{I[axis]} - 1"
        prev = f"{ctx.out(0)}[{', '.join(P)}]"
        comb = expression(ctx.fb, combine, [prev, v], dt, [dt, dt], I)
        with ctx.block(f"if {first}:"):
            ctx.wr(0, I, v)
        with ctx.block("else:"):
            ctx.wr(0, I, ctx.cast(comb, dt) if dt != np.float64 else comb)


def statement_rule(name):
    """The CPU statement rule of opaque primitive ``name``: its record's, else the default
    its lowering facts give (a cumulative primitive's), else None (no CPU text)."""
    low = LOWERINGS.get(name)
    if low is not None and low.emit is not None:
        return low.emit
    facts = getattr(primitives.get(name), "lowering", None)
    if facts is not None and facts.kind == "cumulative":
        return cumulative_statement
    return None


def _op_dot_general(ctx):
    x, y = ctx.invar(0), ctx.invar(1)
    o = ctx.outvar(0)
    (xc, yc), (xb, yb) = ctx.p["dimension_numbers"]
    xr, yr = len(x.aval.shape), len(y.aval.shape)
    xf = [i for i in range(xr) if i not in xc and i not in xb]
    yf = [i for i in range(yr) if i not in yc and i not in yb]
    dx, dy = ctx.dims_in(0), ctx.dims_in(1)
    dt = o.aval.dtype
    blas = ((dt.kind == "f" or (dt.kind == "c" and x.aval.dtype == dt == y.aval.dtype))
            and xr > 0 and yr > 0 and o.aval.shape)
    if not blas:
        _dot_loops(ctx, xc, yc, xb, yb, xf, yf, dx, dy)
        return
    B = ctx.prod([dx[i] for i in xb])
    M = ctx.prod([dx[i] for i in xf])
    K = ctx.prod([dx[i] for i in xc])
    N = ctx.prod([dy[i] for i in yf])
    X, Y, O = ctx.arr(0), ctx.arr(1), ctx.out(0)
    fb = ctx.fb
    # complex: numba_complex's zgemm/cgemm of the same OpenBLAS (one thread)
    gemm = "cmatmul_into" if dt.kind == "c" else "matmul_into"
    fb.mod.imports_runtime.add(gemm)

    single = B == "1"          # no batch: 2-D operands, no reshape when they are 2-D already

    def view(name, rank, first, second, groups):
        """``name`` as (B,) first x second; ``groups``: how many of its axes make ``first``
        and ``second`` (a rank-2 array is its own view only when that is one and one: a
        (4, 4) output of a (1, 6) @ (6, 16) product is not)."""
        if single:
            return name if rank == 2 and groups == (1, 1) else \
                f"{name}.reshape(({first}, {second}))"
        return f"{name}.reshape(({B}, {first}, {second}))"

    def operand(name, order_mk, order_km, rank, first, second, base, groups):
        """A (B, first, second) view of ``name``, transposed if its axes are (B, second, first)."""
        if order_mk == list(range(rank)):
            return view(name, rank, first, second, groups), False
        if order_km == list(range(rank)):
            return view(name, rank, second, first, groups[::-1]), True
        # a transposed copy (explicit loops: np.transpose + ascontiguousarray costs Numba
        # seconds of compile time)
        t = fb.tmp(base)
        d = dx if name == X else dy
        dt_ = x.aval.dtype if name == X else y.aval.dtype
        ctx.emit(f"{t} = np.empty({fb.shape_of_names([d[i] for i in order_mk])}, {dt_text(dt_)})")
        with ctx.loops([d[i] for i in order_mk]) as J:
            src = [None] * rank
            for k, i in enumerate(order_mk):
                src[i] = J[k]
            ctx.emit(f"{t}[{', '.join(J)}] = {name}[{', '.join(src)}]")
        return view(t, rank, first, second, groups), False

    xa, xt = operand(X, list(xb) + xf + list(xc), list(xb) + list(xc) + xf, xr, M, K, "xd",
                     (len(xf), len(xc)))
    ya, yt = operand(Y, list(yb) + list(yc) + yf, list(yb) + yf + list(yc), yr, K, N, "yd",
                     (len(yc), len(yf)))
    # which operands BLAS reads transposed (threads: blas_pool, at run time)
    flags = int(xt) + 2 * int(yt)
    ctx.alloc(0)
    if single:
        ov = view(O, len(o.aval.shape), M, N, (len(xf), len(yf)))
        ctx.emit(f"{gemm}({xa}, {ya}, {ov}, np.int64({flags}))")
        return
    xv, yv = fb.tmp("a"), fb.tmp("b")
    ctx.emit(f"{xv} = {xa}")
    ctx.emit(f"{yv} = {ya}")
    ov = fb.tmp("o")
    ctx.emit(f"{ov} = {O}.reshape(({B}, {M}, {N}))")
    b = fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"{gemm}({xv}[{b}], {yv}[{b}], {ov}[{b}], np.int64({flags}))")


def _dot_loops(ctx, xc, yc, xb, yb, xf, yf, dx, dy):
    o = ctx.outvar(0)
    dt = o.aval.dtype
    acc_dt = np.bool_ if dt == np.bool_ else acc_dtype(dt)
    if dt.kind == "u":
        acc_dt = np.int64
    ctx.alloc(0)
    sizes_b = [dx[i] for i in xb]
    sizes_f = [dx[i] for i in xf] + [dy[i] for i in yf]
    with ctx.loops(sizes_b + sizes_f) as oi:
        bi, mi, ni = oi[:len(xb)], oi[len(xb):len(xb) + len(xf)], oi[len(xb) + len(xf):]
        acc = ctx.fb.tmp("acc")
        ctx.emit(f"{acc} = {ctx.lit(0, acc_dt)}")
        with ctx.loops([dx[i] for i in xc]) as ki:
            xi = [None] * len(dx)
            yi = [None] * len(dy)
            for k, a in enumerate(xb):
                xi[a] = bi[k]
            for k, a in enumerate(yb):
                yi[a] = bi[k]
            for k, a in enumerate(xf):
                xi[a] = mi[k]
            for k, a in enumerate(yf):
                yi[a] = ni[k]
            for k, (a, b) in enumerate(zip(xc, yc)):
                xi[a] = ki[k]
                yi[b] = ki[k]
            xv, yv = ctx.rd(0, xi), ctx.rd(1, yi)
            if acc_dt == np.bool_:
                ctx.emit(f"{acc} = {acc} | ({xv} & {yv})")
            elif (dt.kind == "f" and dt != acc_dt
                  and ctx.invar(0).aval.dtype == dt == ctx.invar(1).aval.dtype):
                # numpy's (BLAS's) float32 dot rounds each product to float32 (1e30 * 1e30
                # is inf, not 1e60) and sums the products in the wider accumulator
                ctx.emit(f"{acc} += {ctx.cast(f'{xv} * {yv}', acc_dt)}")
            else:
                ctx.emit(f"{acc} += {ctx.cast(xv, acc_dt)} * {ctx.cast(yv, acc_dt)}")
        ctx.wr(0, oi, ctx.cast(acc, dt))


def _op_sort(arg):
    def rule(ctx):
        x = ctx.invar(0)
        if not x.aval.shape:
            ctx.wr(0, [], ctx.rd(0, []) if not arg else "0")
            return
        d = ctx.p["dimension"]
        sizes = ctx.dims_in(0)
        others = [s for k, s in enumerate(sizes) if k != d]
        ctx.alloc(0)
        lane = ctx.fb.tmp("lane")
        with ctx.loops(others) as J:
            def full(k):
                I = list(J)
                I.insert(d, k)
                return I
            ctx.emit(f"{lane} = np.empty({sizes[d]}, {dt_text(x.aval.dtype)})")
            kk = ctx.fb.tmp("k")
            with ctx.block(f"for {kk} in range({sizes[d]}):"):
                ctx.emit(f"{lane}[{kk}] = {ctx.rd(0, full(kk))}")
            res = ctx.fb.tmp("s")
            fn = "argsort_lane" if arg else "sort_lane"
            ctx.fb.mod.imports_runtime.add(fn)
            ctx.emit(f"{res} = {fn}({lane})")
            with ctx.block(f"for {kk} in range({sizes[d]}):"):
                ctx.wr(0, full(kk), f"{res}[{kk}]")
    return rule


def _op_argext(kind):
    def rule(ctx):
        x = ctx.invar(0)
        axis = ctx.p["axis"]
        sizes = ctx.dims_in(0)
        kept = [s for k, s in enumerate(sizes) if k != axis]
        it = np.dtype(ctx.p["index_dtype"])
        ctx.alloc(0)
        cmp = ">" if kind == "max" else "<"
        cmp_c = "gt" if kind == "max" else "lt"
        with ctx.loops(kept) as J:
            def full(k):
                I = list(J)
                I.insert(axis, k)
                return I
            best, bi, kk, v = (ctx.fb.tmp(p) for p in ("best", "bi", "k", "v"))
            with ctx.block(f"if {sizes[axis]} == 0:"):
                ctx.wr(0, J, ctx.lit(0, it))
            with ctx.block("else:"):
                ctx.emit(f"{best} = {ctx.rd(0, full('0'))}")
                ctx.emit(f"{bi} = 0")
                with ctx.block(f"for {kk} in range(1, {sizes[axis]}):"):
                    ctx.emit(f"{v} = {ctx.rd(0, full(kk))}")
                    cond = f"({v} {cmp} {best})"
                    if x.aval.dtype.kind == "f":
                        cond = f"{cond} or ({v} != {v} and {best} == {best})"
                    elif x.aval.dtype.kind == "c":
                        # numpy: lexicographic; the first NaN (in either part) is the extreme
                        isnan = import_helper(ctx, "cisnan")
                        cond = (f"(not {isnan}({best})) and ({import_helper(ctx, f'c{cmp_c}')}"
                                f"({v}, {best}) or {isnan}({v}))")
                    with ctx.block(f"if {cond}:"):
                        ctx.emit(f"{best} = {v}")
                        ctx.emit(f"{bi} = {kk}")
                ctx.wr(0, J, ctx.cast(bi, it))
    return rule


def _gather_indices(ctx, reads, xdims):
    """Clamped integer index expressions (clip_index rule) of the index reads ``reads``."""
    ctx.fb.mod.imports_runtime.add("clip_index")
    out = []
    for a, rd in enumerate(reads):
        t = ctx.fb.tmp("g")
        ctx.emit(f"{t} = clip_index({rd}, {xdims[a]})")
        out.append(t)
    return out


def _stacked_reads(ctx, k):
    """Index reads of a gather/scatter whose k indices are stacked on operand 1's last axis."""
    return lambda L: [ctx.rd(1, L + [str(a)]) for a in range(k)]


def _emit_gather(ctx, k, lead, reads):
    """A gather over the k leading axes of operand 0; ``reads(L)`` gives the k index
    expressions at lead position ``L``."""
    xd = ctx.dims_in(0)
    ctx.alloc(0)
    nonempty = " and ".join(f"{s} > 0" for s in xd[:k]) or "True"
    with ctx.block(f"if {nonempty}:"):
        with ctx.loops(lead) as L:
            t = _gather_indices(ctx, reads(list(L)), xd)
            with ctx.loops(xd[k:]) as R:
                ctx.wr(0, list(L) + list(R), ctx.rd(0, t + list(R)))
    if ctx.outs[0][0] == "array":
        with ctx.block("else:"):
            ctx.emit(f"{ctx.out(0)}.fill(0)")


def _op_gather(ctx):
    k = ctx.invar(1).aval.shape[-1]
    _emit_gather(ctx, k, ctx.dims_in(1)[:-1], _stacked_reads(ctx, k))


def _op_index_gather(ctx):
    # the k indices read from operands 1..k, of the result's lead shape
    k = len(ctx.e.invars) - 1
    _emit_gather(ctx, k, ctx.dims_in(1), lambda L: [ctx.rd(1 + a, L) for a in range(k)])


def _op_scatter(kind):
    def rule(ctx):
        x, idx, upd = ctx.invar(0), ctx.invar(1), ctx.invar(2)
        k = idx.aval.shape[-1]
        xd = ctx.dims_in(0)
        idd = ctx.dims_in(1)
        lead = idd[:-1]
        trail = xd[k:]
        O = ctx.out(0)
        ctx.emit(f"{O} = {ctx.arr(0)}.copy()")
        nonempty = " and ".join(f"{s} > 0" for s in xd[:k]) or "True"
        drop = ctx.p.get("mode", "clip") == "drop"
        with ctx.block(f"if {nonempty}:"):
            with ctx.loops(lead) as L:
                reads = _stacked_reads(ctx, k)(list(L))
                if drop:             # a row outside the array writes nothing
                    t = [ctx.fb.tmp("g") for _ in reads]
                    for name, rd in zip(t, reads):
                        ctx.emit(f"{name} = {rd}")
                    inside = " and ".join(f"0 <= {name} < {n}" for name, n in zip(t, xd))
                else:
                    t, inside = _gather_indices(ctx, reads, xd), "True"
                with ctx.block(f"if {inside}:"):
                    with ctx.loops(trail) as R:
                        tgt = f"{O}[{', '.join(t + list(R))}]"
                        u = ctx.rd(2, list(L) + list(R))
                        ctx.emit(f"{tgt} = "
                                 + scatter_text(kind, ctx.outvar(0).aval.dtype, tgt, u))
    return rule


def _op_dynamic_slice(ctx):
    x = ctx.invar(0)
    r = len(x.aval.shape)
    xd = ctx.dims_in(0)
    od = ctx.dims_out(0)
    starts = clamped_starts(ctx, [ctx.rd(1 + i, []) for i in range(r)], xd, od)
    ctx.alloc(0)
    with ctx.loops(od) as I:
        ctx.wr(0, I, ctx.rd(0, [f"{s} + {i}" for s, i in zip(starts, I)]))


def _op_dynamic_update_slice(ctx):
    x = ctx.invar(0)
    r = len(x.aval.shape)
    xd = ctx.dims_in(0)
    ud = ctx.dims_in(1)
    O = ctx.out(0)
    if ctx.outs[0][0] == "scalar":
        ctx.wr(0, [], ctx.rd(1, []))
        return
    starts = clamped_starts(ctx, [ctx.rd(2 + i, []) for i in range(r)], xd, ud)
    ctx.emit(f"{O} = {ctx.arr(0)}.copy()")
    with ctx.loops(ud) as I:
        ctx.emit(f"{O}[{', '.join(f'{s} + {i}' for s, i in zip(starts, I))}] = {ctx.rd(1, I)}")


def _op_pad(ctx):
    x = ctx.invar(0)
    cfg = ctx.p["padding_config"]
    if not x.aval.shape:
        ctx.wr(0, [], ctx.rd(0, []))
        return
    xd = ctx.dims_in(0)
    od = ctx.dims_out(0)
    los = [ctx.fb.size_param(lo) for lo, hi, it in cfg]
    its = [ctx.fb.size_param(it) for lo, hi, it in cfg]
    ctx.alloc(0, fill=ctx.rd(1, []))
    with ctx.loops(xd) as I:
        pos = []
        for i, lo, it in zip(I, los, its):
            t = ctx.fb.tmp("p")
            ctx.emit(f"{t} = {lo} + {i} * ({it} + 1)")
            pos.append(t)
        cond = " and ".join(f"0 <= {p} < {n}" for p, n in zip(pos, od))
        with ctx.block(f"if {cond}:"):
            ctx.wr(0, pos, ctx.rd(0, I))


def _op_concatenate(ctx):
    ax = ctx.p["dimension"]
    off = ctx.fb.tmp("off")
    ctx.alloc(0)
    ctx.emit(f"{off} = 0")
    for i in range(len(ctx.e.invars)):
        d = ctx.dims_in(i)
        with ctx.loops(d) as I:
            J = list(I)
            J[ax] = f"{off} + {I[ax]}"
            ctx.wr(0, J, ctx.rd(i, I))
        ctx.emit(f"{off} += {d[ax]}")


def _batched(ctx, i, nbatch):
    """A local holding the ``(B, ...)`` reshape of operand i's batch dims; B as text."""
    d = ctx.dims_in(i)
    B = ctx.prod(d[:nbatch])
    t = ctx.fb.tmp("m")
    ctx.emit(f"{t} = {ctx.arr(i)}.reshape(({B}, {', '.join(d[nbatch:])}))")
    return t, B


def _op_cholesky(ctx):
    ctx.fb.mod.imports_runtime.add("cholesky_into")
    a = ctx.invar(0)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    ctx.alloc(0)
    d = ctx.dims_in(0)
    b, L = ctx.fb.tmp("bi"), ctx.fb.tmp("m")
    ctx.emit(f"{L} = {ctx.out(0)}.reshape(({B}, {d[-2]}, {d[-1]}))")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"cholesky_into({A}[{b}], {L}[{b}])")


def _op_triangular_solve(ctx):
    ctx.fb.mod.imports_runtime.add("trisolve")
    a = ctx.invar(0)
    p = ctx.p
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    Bm, _ = _batched(ctx, 1, nb)
    db = ctx.dims_in(1)
    ctx.alloc(0)
    Ov = ctx.fb.tmp("m")
    ctx.emit(f"{Ov} = {ctx.out(0)}.reshape(({B}, {db[-2]}, {db[-1]}))")
    b = ctx.fb.tmp("bi")
    flags = (int(p["lower"]) | 2 * int(p["transpose_a"]) | 4 * int(p["unit_diagonal"])
             | 8 * int(not p["left_side"]))
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"trisolve({A}[{b}], {Bm}[{b}], {Ov}[{b}], np.int64({flags}))")


def _op_solve(ctx):
    ctx.fb.mod.imports_runtime.add("solve_into")
    a = ctx.invar(0)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    Bm, _ = _batched(ctx, 1, nb)
    db = ctx.dims_in(1)
    ctx.alloc(0)
    Ov = ctx.fb.tmp("m")
    ctx.emit(f"{Ov} = {ctx.out(0)}.reshape(({B}, {db[-2]}, {db[-1]}))")
    b = ctx.fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"solve_into({A}[{b}], {Bm}[{b}], {Ov}[{b}])")


def _op_slogdet(ctx):
    ctx.fb.mod.imports_runtime.add("slogdet_2d")
    a = ctx.invar(0)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    s, l = ctx.fb.tmp("s"), ctx.fb.tmp("l")
    if nb == 0:
        ctx.emit(f"{s}, {l} = slogdet_2d({A}[0])")
        ctx.wr(0, [], ctx.cast(s, ctx.outvar(0).aval.dtype))
        ctx.wr(1, [], ctx.cast(l, ctx.outvar(1).aval.dtype))
        return
    ctx.alloc(0)
    ctx.alloc(1)
    b = ctx.fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"{s}, {l} = slogdet_2d({A}[{b}])")
        for i, val in ((0, s), (1, l)):
            if ctx.outs[i][0] == "array":
                ctx.emit(f"{ctx.out(i)}.reshape(({B},))[{b}] = {val}")


def _op_eigh(ctx):
    # upper=True: LAPACK's 'U' path on the operand's conjugate transpose, as eigh_p's impl
    # (numpy's eigh(x, 'U') signs); the flag is a literal of the kernel's source, so of its
    # cache key: the 'L' and 'U' kernels of one shape are two kernels
    a = ctx.invar(0)
    upper = bool(ctx.p.get("upper", False))
    helper = "eigh_into_c" if a.aval.dtype.kind == "c" else "eigh_into"
    ctx.fb.mod.imports_runtime.add(helper)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    d = ctx.dims_in(0)
    for i in range(2):
        if ctx.outs[i][0] == "drop":
            shp = d[:-1] if i == 0 else d
            ctx.emit(f"{ctx.out(i)} = np.empty({ctx.fb.shape_of_names(shp)}, "
                     f"{dt_text(ctx.outvar(i).aval.dtype)})")
        else:
            ctx.alloc(i)
    b = ctx.fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"{helper}({A}[{b}], {ctx.out(0)}.reshape(({B}, {d[-1]}))[{b}], "
                 f"{ctx.out(1)}.reshape(({B}, {d[-2]}, {d[-1]}))[{b}], {upper})")


def _op_qr(ctx):
    # LAPACK geqrf + orgqr/ungqr per matrix (numba_runtime.qr_into): numpy's signs
    ctx.fb.mod.imports_runtime.add("qr_into")
    a = ctx.invar(0)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    views = []
    for i in range(2):
        ctx.alloc(i)
        d, t = ctx.dims_out(i), ctx.fb.tmp("m")
        ctx.emit(f"{t} = {ctx.out(i)}.reshape(({B}, {d[-2]}, {d[-1]}))")
        views.append(t)
    b = ctx.fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"qr_into({A}[{b}], {views[0]}[{b}], {views[1]}[{b}])")


def _op_svd(ctx):
    # LAPACK gesdd per matrix (numba_runtime.svd_into); without compute_uv the singular
    # vectors land in scratch arrays (gesdd's jobz='S' path either way: numpy's values)
    ctx.fb.mod.imports_runtime.add("svd_into")
    a = ctx.invar(0)
    nb = len(a.aval.shape) - 2
    A, B = _batched(ctx, 0, nb)
    d = ctx.dims_in(0)
    m, n = d[-2], d[-1]
    uv = len(ctx.e.outvars) == 3
    si = 1 if uv else 0
    k = ctx.dims_out(si)[-1]
    views = []
    for i in range(len(ctx.e.outvars)):
        ctx.alloc(i)
        dd, t = ctx.dims_out(i), ctx.fb.tmp("m")
        ctx.emit(f"{t} = {ctx.out(i)}.reshape(({B}, {', '.join(dd[nb:])}))")
        views.append(t)
    if not uv:
        U, V = ctx.fb.tmp("m"), ctx.fb.tmp("m")
        dt = dt_text(a.aval.dtype)
        ctx.emit(f"{U} = np.empty(({B}, {m}, {k}), {dt})")
        ctx.emit(f"{V} = np.empty(({B}, {k}, {n}), {dt})")
        views = [U, views[0], V]
    b = ctx.fb.tmp("bi")
    with ctx.block(f"for {b} in range({B}):"):
        ctx.emit(f"svd_into({A}[{b}], {views[0]}[{b}], {views[1]}[{b}], {views[2]}[{b}])")


# ---------------------------------------------------------------------- control flow

def _op_scan(ctx):
    p = ctx.p
    nconst, ncarry = p["num_consts"], p["num_carry"]
    # the loop owns its carries: the body may update them in place (cpu_in_place), and
    # the initial value of each one it does is copied once, here
    fn = ctx.fb.mod.sub_function(sub_jaxpr(p["jaxpr"]), "scan",
                                 donated_params={nconst + i: i for i in range(ncarry)})
    refs = ctx.ins
    consts = [r[2] for r in refs[:nconst]]
    inits = refs[nconst:nconst + ncarry]
    xs = refs[nconst + ncarry:]
    outs = ctx.outs
    carry = [n for _, n in outs[:ncarry]]
    ys = outs[ncarry:]
    for i, (name, ref, v) in enumerate(zip(carry, inits, ctx.e.invars[nconst:nconst + ncarry])):
        init = carry_init(ctx, ref, v.aval)
        ctx.emit(f"{name} = {init}.copy()" if nconst + i in fn.overwritten else f"{name} = {init}")
    length = ctx.fb.size_param(p["length"])
    for i, (kind, name) in enumerate(ys):
        v = ctx.e.outvars[ncarry + i]
        ctx.emit(f"{name} = np.empty({ctx.shape_out(ncarry + i)}, {dt_text(v.aval.dtype)})")
    t, tt = ctx.fb.tmp("t"), ctx.fb.tmp("tt")
    ytmp = [ctx.fb.tmp("y") for _ in ys]
    tgt = [c for i, c in enumerate(carry) if nconst + i not in fn.unreturned] + ytmp
    tgt_txt = ", ".join(tgt) + ("," if len(tgt) == 1 else "")
    with ctx.block(f"for {tt} in range({length}):"):
        ctx.emit(f"{t} = {length} - 1 - {tt}" if p["reverse"] else f"{t} = {tt}")
        xargs = [f"{r[2]}[{t}]" for r in xs]
        if tgt:
            ctx.emit(f"{tgt_txt} = {call_text(fn, consts + carry + xargs)}")
        else:
            ctx.emit(f"{call_text(fn, consts + carry + xargs)}")
        for (kind, name), y in zip(ys, ytmp):
            ctx.emit(f"{name}[{t}] = {y}")


# =====================================================================================
# The records
# =====================================================================================

# views and reshapes: index arithmetic in the consumer's loop
register_lowering("broadcast_in_dim", "view", dims=dim_bid, moves=True)
register_lowering("transpose", "view", dims=dim_transpose, moves=True)
register_lowering("rev", "view", dims=dim_same, moves=True)
register_lowering("roll", "view", dims=dim_same, moves=True)
register_lowering("slice", "view", dims=no_dims, moves=True)
register_lowering("reshape", "reshape", dims=no_dims, moves=True)
register_lowering("squeeze", "reshape", dims=dim_squeeze, moves=True)
register_lowering("expand_dims", "reshape", dims=dim_expand, moves=True)

# reductions: accumulators of the loop nest that computes their operand
for _n in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
           "reduce_or"):
    register_lowering(_n, "reduce", dims=dim_reduce)

# opaque: statements of their own (cumulative primitives: from their facts)
register_lowering("dot_general", "opaque", emit=_op_dot_general, dims=dim_dot)
register_lowering("sort", "opaque", emit=_op_sort(False), dims=dim_same)
register_lowering("argsort", "opaque", emit=_op_sort(True), dims=dim_same)
register_lowering("argmax", "opaque", emit=_op_argext("max"), dims=dim_reduce)
register_lowering("argmin", "opaque", emit=_op_argext("min"), dims=dim_reduce)
register_lowering("gather", "opaque", emit=_op_gather, dims=dim_gather)
register_lowering("index_gather", "opaque", emit=_op_index_gather, dims=dim_index_gather)
for _kind in ("set", "add", "mul", "min", "max"):
    register_lowering("scatter" if _kind == "set" else f"scatter_{_kind}", "opaque",
                      emit=_op_scatter(_kind), dims=dim_scatter)
register_lowering("dynamic_slice", "opaque", emit=_op_dynamic_slice, dims=no_dims)
register_lowering("dynamic_update_slice", "opaque", emit=_op_dynamic_update_slice,
                  dims=dim_first_to_out)
register_lowering("pad", "opaque", emit=_op_pad, dims=no_dims, moves=True)
register_lowering("concatenate", "opaque", emit=_op_concatenate, dims=dim_concat, moves=True)
register_lowering("cholesky", "opaque", emit=_op_cholesky, dims=dim_same)
register_lowering("triangular_solve", "opaque", emit=_op_triangular_solve, dims=dim_solve)
register_lowering("solve", "opaque", emit=_op_solve, dims=dim_solve)
register_lowering("slogdet", "opaque", emit=_op_slogdet, dims=dim_slogdet)
register_lowering("eigh", "opaque", emit=_op_eigh, dims=dim_eigh)
register_lowering("qr", "opaque", emit=_op_qr, dims=dim_qr)
register_lowering("svd", "opaque", emit=_op_svd, dims=dim_svd)
register_lowering("cond", "opaque", emit=cond_statement, control=True)
register_lowering("while", "opaque", emit=lambda ctx: while_statement(ctx, donate=True),
                  control=True)
register_lowering("scan", "opaque", emit=_op_scan, control=True)
