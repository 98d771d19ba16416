"""The IR pass pipeline jit runs before lowering: each pass keeps the program's values
(the numpy interpreter runs the program before and after), is pure, and does its one
rewrite; the backend lowers the finished program without tracing."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import primitives as P
from autodiff.backends.interpreter import run_closed
from autodiff.core import ClosedJaxpr, Eqn, Jaxpr, Literal, Primitive, ShapedArray, Var, \
    typecheck_jaxpr
from autodiff.errors import UnsupportedError
from autodiff.transforms import passes
from autodiff.transforms.passes import (PIPELINE, REMAT_BEGIN, REMAT_END, fold_uniform_consts,
                                        inline_calls, run_pipeline, swap_dots)
from autodiff.transforms.simplify import fold_identities

F64 = np.float64
X = np.array([0.3, -1.2, 2.0, 0.7])


def names(closed, deep=False):
    out = []
    for e in closed.jaxpr.eqns:
        out.append(e.primitive.name)
        if deep:
            for p in e.params.values():
                for q in (p if isinstance(p, tuple) else (p,)):
                    if isinstance(q, (Jaxpr, ClosedJaxpr)):
                        out += names(q if isinstance(q, ClosedJaxpr) else ClosedJaxpr(q, []),
                                     deep=True)
    return out


def check_same(closed, new, args, exact=True):
    """Same values (bit for bit when exact, signed zeros included) on the interpreter."""
    typecheck_jaxpr(new.jaxpr)
    before, after = run_closed(closed, args), run_closed(new, args)
    assert len(before) == len(after)
    for a, b in zip(before, after):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype
        if exact:
            np.testing.assert_array_equal(a, b)
            assert np.array_equal(np.signbit(a), np.signbit(b))
        else:
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)


@ad.custom_jvp
def softplus(x):
    return anp.log1p(anp.exp(x))


softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] / (1.0 + anp.exp(-p[0]))))


@ad.custom_vjp
def clip_grad(x):
    return anp.tanh(x)


clip_grad.defvjp(lambda x: (anp.tanh(x), x), lambda x, g: (g * 0.5,))


# ---------------------------------------------------------------------------------
# inline_calls
# ---------------------------------------------------------------------------------

def test_inline_calls_uses_each_primitives_inline_rule():
    f = lambda x: anp.sum(softplus(x) * clip_grad(x))
    found = set()
    for prog in (ad.make_jaxpr(lambda x, t: f(x) * t)(X, X),
                 ad.make_jaxpr(lambda x, t: ad.grad(f)(x) * t)(X, X),
                 ad.make_jaxpr(lambda x, t: ad.jvp(f, (x,), (t,)))(X, X)):
        found |= set(names(prog))
        new = inline_calls(prog)
        assert not {"custom_jvp_call", "custom_vjp_call", "custom_lin"} & set(names(new))
        check_same(prog, new, [X, X + 0.5], exact=False)
    # forward mode through custom_vjp leaves custom_lin (its linear map) in the program
    assert {"custom_jvp_call", "custom_vjp_call", "custom_lin"} <= found
    from autodiff.custom_derivatives import custom_jvp_call_p, custom_lin_p, custom_vjp_call_p
    assert all(callable(p.inline) for p in (custom_jvp_call_p, custom_vjp_call_p, custom_lin_p))


def test_inline_rule_is_looked_up_on_the_primitive():
    # a call-like primitive of its own: the pass asks its ``inline`` rule, not a name list
    p = Primitive.__new__(Primitive)
    p.name, p.multiple_results, p.call_like = "my_call", True, True
    a, b, o = Var(ShapedArray((4,), np.dtype(F64))), Var(ShapedArray((4,), np.dtype(F64))), \
        Var(ShapedArray((4,), np.dtype(F64)))
    body = Jaxpr((), [a], [b], [Eqn(P.exp_p, [a], [b], {})])
    p.inline = lambda e: (body, [])
    p.impl = lambda x, **_: [np.exp(x)]
    p.abstract_eval = lambda av, **_: [av]
    x = Var(ShapedArray((4,), np.dtype(F64)))
    cj = ClosedJaxpr(Jaxpr((), [x], [o], [Eqn(p, [x], [o], {"tag": 1})]), [])
    new = inline_calls(cj)
    assert names(new) == ["exp"]
    np.testing.assert_array_equal(run_closed(new, [X])[0], np.exp(X))
    p.inline = lambda e: None                     # a rule that cannot inline: a clear error
    with pytest.raises(UnsupportedError, match="my_call.*inline"):
        inline_calls(cj)


def test_inline_remat_brackets_the_recomputation():
    f = ad.checkpoint(lambda x: anp.sin(anp.sin(x)) * x)
    prog = ad.make_jaxpr(ad.grad(lambda x: anp.sum(f(x))))(X)
    assert "remat" in names(prog)
    new = inline_calls(prog)
    ns = names(new)
    assert "remat" not in ns
    assert ns.count("_remat_begin") == ns.count("_remat_end") >= 1
    begin, end = ns.index("_remat_begin"), ns.index("_remat_end")
    assert "sin" in ns[begin:end]                 # the recomputed primal is inside
    assert new.jaxpr.eqns[begin].primitive is REMAT_BEGIN
    assert new.jaxpr.eqns[end].primitive is REMAT_END
    check_same(prog, new, [X], exact=False)


def test_inline_lifts_control_flow_body_constants():
    table = np.array([1.5, -2.0, 0.25, 3.0])

    def f(x):
        def step(c, v):
            c = c * anp.cos(v) + anp.sum(table * v)       # the body closes over ``table``
            return c, softplus(c)                       # and calls a custom_jvp function
        return ad.lax.scan(step, 0.5, x)[1]
    prog = ad.make_jaxpr(f)(X)
    new = inline_calls(prog)
    scan = next(e for e in new.jaxpr.eqns if e.primitive.name == "scan")
    body = scan.params["jaxpr"]
    assert not body.consts and not body.jaxpr.constvars       # constants became operands
    assert scan.params["num_consts"] >= 1
    assert "custom_jvp_call" not in names(new, deep=True)
    assert any(np.array_equal(c, table) for c in new.consts)
    check_same(prog, new, [X], exact=False)


def test_inline_lifts_cond_and_while_body_constants():
    w = np.array([0.5, 2.0, -1.0, 4.0])

    def f(x, p):
        y = ad.lax.cond(p > 0, lambda v: v * w, lambda v: v + w, x)
        return ad.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * w), (0, y))[1]
    prog = ad.make_jaxpr(f)(X, 1.0)
    new = inline_calls(prog)
    for e in new.jaxpr.eqns:
        if e.primitive.name == "cond":
            assert all(not b.jaxpr.constvars and not b.consts for b in e.params["branches"])
        if e.primitive.name == "while":
            assert not e.params["body_jaxpr"].jaxpr.constvars
    for p in (1.0, -1.0):
        check_same(prog, new, [X, p])


# ---------------------------------------------------------------------------------
# fold_uniform_consts
# ---------------------------------------------------------------------------------

def _const_program(c):
    cv, x, y = Var(ShapedArray(c.shape, c.dtype)), Var(ShapedArray(c.shape, c.dtype)), \
        Var(ShapedArray(c.shape, c.dtype))
    return ClosedJaxpr(Jaxpr([cv], [x], [y], [Eqn(P.mul_p, [x, cv], [y], {})]), [c])


def test_uniform_constants_become_broadcast_literals():
    for c in (np.full(5, 2.5), np.zeros((2, 3)), np.full(4, -0.0), np.full(3, 7, np.int64)):
        prog = _const_program(c)
        new = fold_uniform_consts(prog)
        assert not new.consts and names(new) == ["broadcast_in_dim", "mul"]
        check_same(prog, new, [np.arange(c.size, dtype=c.dtype).reshape(c.shape) - 1])
    for c in (np.array([1.0, 2.0, 3.0]), np.array([0.0, -0.0, 0.0])):   # not one value
        prog = _const_program(c)
        assert fold_uniform_consts(prog) is prog


def test_identity_matrix_becomes_iota_comparison():
    eye = np.eye(9)
    prog = _const_program(eye)
    new = fold_uniform_consts(prog)
    assert not new.consts
    assert names(new) == ["iota", "iota", "eq", "convert_element_type", "mul"]
    check_same(prog, new, [np.arange(81.0).reshape(9, 9)])
    small = _const_program(np.eye(3))        # below 8 rows a constant is cheaper
    assert fold_uniform_consts(small) is small


# ---------------------------------------------------------------------------------
# fold_identities
# ---------------------------------------------------------------------------------

SPECIAL = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan])


def test_exact_identities_fold():
    prog = ad.make_jaxpr(lambda x: 1.0 * (x * 1.0 / 1.0 - 0.0 + -0.0))(SPECIAL)
    new = fold_identities(prog)
    assert names(new) == [] and new.jaxpr.outvars[0] is new.jaxpr.invars[0]
    check_same(prog, new, [SPECIAL])


def test_inexact_identities_are_kept():
    # -0.0 + 0.0 is +0.0, and -0.0 - -0.0 is +0.0: these are not x in IEEE arithmetic
    for g in (lambda x: x + 0.0, lambda x: 0.0 + x, lambda x: x - (-0.0),
              lambda x: x * 0.0, lambda x: x * 2.0):
        prog = ad.make_jaxpr(g)(SPECIAL)
        new = fold_identities(prog)
        assert names(new) == names(prog) and len(names(new)) == 1
        check_same(prog, new, [SPECIAL])
    ints = np.array([3, -4, 0])
    prog = ad.make_jaxpr(lambda i: (i + 0) * 1 - 0)(ints)   # integer zeros have no sign
    assert names(fold_identities(prog)) == []
    # a scalar times ones of shape (3,) is not the scalar
    sv, ones, out = (Var(ShapedArray(sh, np.dtype(F64))) for sh in ((), (3,), (3,)))
    prog = ClosedJaxpr(Jaxpr((), [sv], [out], [
        Eqn(P.broadcast_in_dim_p, [Literal(np.float64(1.0))], [ones],
            dict(shape=(3,), broadcast_dimensions=())),
        Eqn(P.mul_p, [sv, ones], [out], {})]), [])
    assert fold_identities(prog) is prog
    np.testing.assert_array_equal(run_closed(prog, [np.float64(2.0)])[0], [2.0, 2.0, 2.0])


def test_gradient_seed_of_ones_is_folded():
    f = lambda x: anp.sum(anp.tanh(x) * x)
    prog = ad.make_jaxpr(ad.grad(f))(X)
    seeds = [c for c in prog.consts if np.ndim(c) and np.all(np.asarray(c) == 1)]
    assert seeds                                 # the traced gradient multiplies by ones
    new = run_pipeline(prog)
    assert not new.consts and "broadcast_in_dim" not in names(new)
    assert names(new) == ["tanh", "mul", "sub", "mul", "add"]   # d/dx x tanh x, nothing else
    check_same(prog, new, [X])
    low = ad.jit(ad.grad(f)).lower(X)            # what jit hands to the backend
    assert names(low.jaxpr) == names(new) and "1.0 *" not in low.source


# ---------------------------------------------------------------------------------
# swap_dots
# ---------------------------------------------------------------------------------

def test_transposed_dot_becomes_swapped_dot():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4) - 5
    prog = ad.make_jaxpr(lambda a, b: (a @ b).T)(a, b)
    new = swap_dots(prog)
    assert names(new) == ["dot_general"]
    check_same(prog, new, [a, b])
    kept = ad.make_jaxpr(lambda a, b: (lambda c: (c.T, c))(a @ b))(a, b)   # dot read twice
    assert swap_dots(kept) is kept


# ---------------------------------------------------------------------------------
# the pipeline
# ---------------------------------------------------------------------------------

def test_pipeline_order_and_purity():
    assert [n for n, _ in PIPELINE] == ["fold_constants", "cse", "inline_calls",
                                         "uniform_consts", "fold_identities", "swap_dots", "dce"]
    f = lambda x: anp.sum(ad.checkpoint(lambda y: softplus(anp.sin(y)) * y)(x) * anp.sin(x))
    prog = ad.make_jaxpr(ad.value_and_grad(f))(X)
    text, eqns, consts = str(prog), list(prog.jaxpr.eqns), list(prog.consts)
    new = run_pipeline(prog)
    assert str(prog) == text and list(prog.jaxpr.eqns) == eqns and prog.consts == consts
    assert not {"custom_jvp_call", "custom_lin", "remat"} & set(names(new, deep=True))
    check_same(prog, new, [X], exact=False)
    # every pass alone keeps the values too
    for name, p in PIPELINE:
        check_same(prog, p(prog), [X], exact=False)


def test_backend_lowers_a_finished_program_without_tracing(monkeypatch):
    from autodiff import core, tracing
    from autodiff.backends import numba_cpu
    f = lambda x: anp.sum(softplus(x) * clip_grad(x))
    finished = run_pipeline(ad.make_jaxpr(ad.grad(f))(X))

    def no_tracing(*a, **k):
        raise AssertionError("the backend traced")
    monkeypatch.setattr(core, "trace_flat", no_tracing)
    monkeypatch.setattr(tracing, "_trace_flat", no_tracing)     # every trace_flat ends here
    prog = numba_cpu.lower(finished)
    assert "def kernel" in prog.source
    monkeypatch.undo()
    # a program that still holds call-like equations is refused with the fix named
    with pytest.raises(UnsupportedError, match="run_pipeline"):
        numba_cpu.lower(ad.make_jaxpr(f)(X))


def test_pipeline_module_is_target_neutral():
    import subprocess
    import sys
    # importing the pipeline loads no backend: a CUDA emitter calls the same passes
    out = subprocess.run([sys.executable, "-c", "import sys, autodiff.transforms.passes; "
                          "print(sorted(m for m in sys.modules if m.startswith("
                          "('numba', 'autodiff.backends.numba', 'autodiff.backends.plan'))))"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert set(passes.__all__) >= {"run_pipeline", "PIPELINE", "inline_calls"}
