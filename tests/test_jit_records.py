"""Every op record, compiled: the table of ``tests/op_records/`` (shared with the
primitive and vmap tests) run through the CPU backend and compared with the interpreter.

In a file of its own (not in test_jit_lowering.py) so that xdist's ``--dist loadfile``
can run it beside the hand-written lowering cases.
"""
import numpy as np
import pytest

import autodiff as ad
from autodiff.core import ClosedJaxpr, Jaxpr, primitives
from autodiff.backends import numba_cpu
from jit_util import assert_compiled, prims_in, run_lowered

F64, F32 = np.float64, np.float32

# ---------------------------------------------------------------------------------
# the op records (tests/op_records/, shared with the primitive and vmap tests): every
# record of every primitive, compiled and compared with the interpreter
# ---------------------------------------------------------------------------------
#
# One Numba compile costs ~0.3-0.5 s, so the records are not compiled one by one: the
# records of one primitive family (a module of autodiff/primitives, or "calls" for the
# call-like, checkpointing and callback primitives) are evaluated by a few jitted
# programs, each returning the results of up to RECORDS_PER_PROGRAM records (one
# program for a whole family costs twice as much: LLVM's time grows faster than the
# function). float64: every record with operands; records without float operands
# (integer and boolean ones) run there only. float32: the first float record of each
# primitive (its float32 kernel path; all of them would double the cost). Tolerances,
# per result: integer and boolean exactly; float64 relative 1e-12 (and 1e-12 of the
# result's largest magnitude absolutely); float32 relative 1e-6, 1e-5 for
# transcendental functions and linear algebra (and the same fraction absolutely).
# Complex records (Z operands): under float64 (complex128) the first complex record of
# each primitive and those with fixed values (ties of the lexicographic order,
# infinities, sign(0)); the other random ones add compile time, not kernel paths.

import importlib
import pkgutil
import zlib

import autodiff.primitives as _primitives_pkg
from autodiff.core import Eqn, Primitive, Var
from op_records import DEBUG_SEEN, RECORDS, Z, record_params

RECORDS_PER_PROGRAM = 16


def _family_of():
    fam = {}
    for m in pkgutil.iter_modules(_primitives_pkg.__path__):
        if m.name.startswith("_"):
            continue
        mod = importlib.import_module(f"autodiff.primitives.{m.name}")
        for v in vars(mod).values():
            if isinstance(v, Primitive):
                fam.setdefault(v.name, m.name)
    return {n: fam.get(n, "calls") for n in primitives}


FAMILY = _family_of()
TRANSCENDENTAL = {"exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos",
                  "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
                  "sqrt", "rsqrt", "cbrt", "pow", "atan2"}
#: Registered primitives without a cpu lowering record: the pass pipeline inlines them
#: before lowering (autodiff/transforms/passes.py, ``inline_calls``: custom_jvp_call,
#: custom_vjp_call and custom_lin through their ``inline`` rules, remat as a call-like
#: primitive with one body; logsumexp, a composite, through the definition it stands for).
INLINED_BEFORE_LOWERING = {"custom_jvp_call", "custom_vjp_call", "custom_lin", "linear_solve",
                           "remat",
                           "logsumexp"}


def _records_for(dt, real_only=False):
    """(name, index, record) of the records that run in programs of float dtype ``dt``."""
    out, firsts, complex_firsts = [], set(), set()
    for n, i in record_params():
        r = RECORDS[n][i]
        if not r.args:
            continue               # nullary: test_nullary_records_compiled_match_interpreter
        zs = [a for a in r.args if isinstance(a, Z)]
        if zs and real_only:
            continue
        if dt == F64 and zs:
            if n not in complex_firsts or any(a.values is not None for a in zs):
                complex_firsts.add(n)
                out.append((n, i, r))
        elif dt == F64:
            out.append((n, i, r))
        elif r.float_args and n not in firsts:
            firsts.add(n)
            out.append((n, i, r))
    return out


def _program_params(tier="numba"):
    """One pytest param per program: (family, dtype, its records, tier). The LLVM tier's
    programs hold the real records only (it declines complex values: a program mixing
    them would run on Numba whole)."""
    params = []
    for dt in (F64, F32):
        by_family = {}
        for n, i, r in _records_for(dt, real_only=tier == "llvm"):
            by_family.setdefault(FAMILY[n], []).append((n, i, r))
        for fam in sorted(by_family):
            recs = by_family[fam]
            for k in range(0, len(recs), RECORDS_PER_PROGRAM):
                chunk = recs[k:k + RECORDS_PER_PROGRAM]
                params.append(pytest.param(fam, dt, chunk, tier,
                                           id=f"{tier}-{fam}-{np.dtype(dt).name}-"
                                           f"{k // RECORDS_PER_PROGRAM}"))
    return params


def _record_tol(name, dt):
    if np.dtype(dt) in (F64, np.complex128):
        return 1e-12
    return 1e-5 if name in TRANSCENDENTAL or FAMILY[name] == "linalg" else 1e-6


def _program(recs, dt, seed):
    """A function of all the records' operands returning every record's results in order
    (flattened), and those operands."""
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    ops, spans = [], []
    for name, i, r in recs:
        xs = r.make(rng, dt)
        spans.append((len(ops), len(ops) + len(xs)))
        ops.extend(xs)
    binds = [(primitives[n], r.params(dt)) for n, i, r in recs]

    def program(*args):
        outs = []
        for (p, params), (a, b) in zip(binds, spans):
            out = p.bind(*args[a:b], **params)
            outs.extend(out if p.multiple_results else [out])
        return tuple(outs)
    return program, ops


def _n_results(name, record, dt):
    p = primitives[name]
    out = p.abstract_eval(*[ad.core.get_aval(x) for x in
                            record.make(np.random.default_rng(0), dt)], **record.params(dt))
    return len(out) if p.multiple_results else 1


PROGRAMS = _program_params()


# Both compilers of the CPU text: Numba alone (jit_llvm_tier=False) over every program, and
# the direct LLVM tier (backends/llvm_cpu.py) over the real records' programs; a program the
# tier declines runs on Numba (LLVM_DECLINES says which families and why).
LLVM_PROGRAMS = _program_params("llvm")


@pytest.mark.parametrize("family,dt,recs,tier", PROGRAMS + LLVM_PROGRAMS)
def test_records_compiled_match_interpreter(family, dt, recs, tier):
    old = ad.config.jit_llvm_tier
    ad.config.update("jit_llvm_tier", tier == "llvm")
    try:
        _check_records(family, dt, recs, tier)
    finally:
        ad.config.update("jit_llvm_tier", old)


def _check_records(family, dt, recs, tier):
    program, ops = _program(recs, dt, f"{family}-{recs[0][0]}-{recs[0][1]}-{np.dtype(dt).name}")
    found = prims_in(ad.make_jaxpr(program)(*ops).jaxpr, set())
    missing = sorted({n for n, _, _ in recs} - found)
    assert not missing, f"{family}: the program does not contain {missing}"
    jf = ad.jit(program, backend="cpu")
    ref = ad.jit(program, backend="interpret")
    n_debug = sum(1 for n, _, _ in recs if n == "debug_callback")
    seen = len(DEBUG_SEEN)
    with np.errstate(all="ignore"):
        got = assert_compiled(jf, *ops)
        assert len(DEBUG_SEEN) == seen + n_debug, "the compiled debug_callback did not run"
        want = ref(*ops)
    backend = jf._entry_for(*ops).backend
    assert backend == "cpu" if tier == "numba" else backend in ("llvm", "cpu")
    assert len(got) == len(want)
    k = 0
    for name, i, r in recs:
        for _ in range(_n_results(name, r, dt)):
            g, w = np.asarray(got[k]), np.asarray(want[k])
            what = f"{name}-{i} ({np.dtype(dt).name}) result {k}"
            assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, w.shape, g.dtype)
            if w.dtype.kind in "fc":
                t = _record_tol(name, w.dtype)
                scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=1.0))
                np.testing.assert_allclose(g, w, rtol=t, atol=t * scale, err_msg=what)
            else:
                np.testing.assert_array_equal(g, w, err_msg=what)
            k += 1
    assert k == len(got)


#: Families whose real programs the LLVM tier declines (they run on Numba), and why.
LLVM_DECLINES = {
    "calls": "host callbacks (Numba's objmode)",
    "control_flow": "arrays carried through a loop or chosen by a branch",
}
# (linalg's LAPACK calls and float sorting it makes through C entry points:
# numba_runtime.C_ABI)
# and every program holding a complex value (complex results of real operands: fft,
# ``complex``, conversions), whatever its family


def test_the_llvm_tier_takes_every_other_family():
    from autodiff.backends import llvm_cpu
    from autodiff.transforms.passes import run_pipeline
    declined = {}
    for p in LLVM_PROGRAMS:
        family, dt, recs, _ = p.values
        program, ops = _program(recs, dt, f"{family}-{recs[0][0]}-{recs[0][1]}-llvm")
        closed = run_pipeline(ad.make_jaxpr(program)(*ops))
        has_complex = any(np.dtype(v.aval.dtype).kind == "c" for e in closed.jaxpr.eqns
                          for v in list(e.invars) + list(e.outvars) if hasattr(v, "aval"))
        prog = numba_cpu.lower(closed, dynamic_dims=frozenset())
        try:
            llvm_cpu.compile_program(prog)
        except llvm_cpu.Unsupported as err:
            if not has_complex:
                declined.setdefault(family, str(err))
        else:
            assert not has_complex, f"{family}: compiled a program with complex values"
    assert set(declined) <= set(LLVM_DECLINES), declined
    assert {"elementwise", "reductions", "dot", "indexing", "shape"} - set(declined) == {
        "elementwise", "reductions", "dot", "indexing", "shape"}


def test_every_primitive_with_operands_has_a_compiled_record():
    covered = {n for p in PROGRAMS for n, _, _ in p.values[2] if p.values[1] == F64}
    assert {n for p in LLVM_PROGRAMS for n, _, _ in p.values[2]} == {
        n for p in PROGRAMS for n, _, r in p.values[2] if not any(isinstance(a, Z) for a in
                                                                   r.args)}
    with_operands = {n for n in primitives if any(r.args for r in RECORDS[n])}
    assert covered == with_operands
    covered32 = {n for p in PROGRAMS for n, _, _ in p.values[2] if p.values[1] == F32}
    assert covered32 == {n for n in primitives if any(r.float_args for r in RECORDS[n])}


def test_primitives_without_a_lowering_are_the_inlined_ones():
    no_lowering = set(primitives) - numba_cpu.LOWERED_PRIMITIVES
    assert no_lowering == INLINED_BEFORE_LOWERING
    assert all(numba_cpu.can_lower(primitives[n]) for n in no_lowering)


def test_nullary_records_compiled_match_interpreter():
    # iota has no operands, so tracing evaluates it eagerly: its records form a
    # hand-built program, lowered and compiled directly
    from autodiff.backends.interpreter import run_closed
    recs = [(n, RECORDS[n][i]) for n, i in record_params() if not RECORDS[n][i].args]
    assert {n for n, _ in recs} == {"iota"}
    x = Var(ad.core.ShapedArray((), F64))
    eqns, outs = [], []
    for n, r in recs:
        p, params = primitives[n], r.params()
        o = Var(p.abstract_eval(**params))
        eqns.append(Eqn(p, [], [o], params))
        outs.append(o)
    closed = ClosedJaxpr(Jaxpr((), [x], outs, eqns), [])
    got, want = run_lowered(closed, [np.float64(1.0)]), run_closed(closed, [np.float64(1.0)])
    assert len(got) == len(want) == len(recs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)

