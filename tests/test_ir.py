"""The IR: pretty printer, Graphviz, structural hashing and equality, type checking."""
import os

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import primitives as P
from autodiff.core import (ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, ShapedArray, Var,
                           eval_jaxpr, pp_jaxpr, typecheck_jaxpr)


def test_pretty_print_exact():
    closed = ad.make_jaxpr(lambda x, y: anp.sum(anp.sin(x) * y, axis=0) > 1.5)(
        np.ones((2, 3)), np.ones((2, 3), np.float64))
    assert str(closed) == (
        "{ lambda ; a:f64[2,3] b:f64[2,3]. let\n"
        "    c:f64[2,3] = sin a\n"
        "    d:f64[2,3] = mul c b\n"
        "    e:f64[3] = reduce_sum[axes=(0,)] d\n"
        "    f:bool[3] = gt e 1.5:f64[]\n"
        "  in (f,) }")


def test_pretty_print_constants_literals_dtypes_and_many_names():
    c = np.arange(3.0)

    def f(x, n):
        y = x * c + 1
        for _ in range(28):
            y = y + 1.0
        return y, anp.astype(n, np.int32) * 3, x.astype(np.float32), x > 0

    text = str(ad.make_jaxpr(f)(np.ones(3), 2))
    first = text.splitlines()[0]
    assert first == "{ lambda a:f64[3] ; b:f64[3] c:i64[]. let"
    assert "mul b a" in text
    assert "1.0:f64[]" in text and "3:i32[]" in text
    assert "convert_element_type[new_dtype=float32]" in text and "f32[3]" in text
    assert "bool[3] = gt" in text
    # names continue past z as aa, ab, ...
    assert " aa:f64[3] = add" in text or "aa:f64[3]" in text
    assert text.endswith(") }")


def test_pretty_print_nested_jaxpr_params():
    @ad.custom_jvp
    def f(x):
        return anp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), anp.cos(p[0]) * t[0]))
    text = str(ad.make_jaxpr(lambda x: f(x) * 2.0)(1.0))
    lines = text.splitlines()
    assert lines[1].strip().startswith("b:f64[] = custom_jvp_call[call_jaxpr=")
    inner = [l for l in lines if "sin" in l][0]
    assert inner.startswith(" " * 12)            # the sub-jaxpr is indented under its eqn


def test_pretty_print_drop_var_and_bool_literal():
    a = Var(ShapedArray((), np.float64))
    p = Var(ShapedArray((), np.bool_))
    out = DropVar(ShapedArray((), np.float64))
    e = Eqn(P.select_p, [p, a, Literal(2.0)], [out], {})
    e2 = Eqn(P.and_p, [p, Literal(True)], [Var(ShapedArray((), np.bool_))], {})
    text = pp_jaxpr(Jaxpr([], [p, a], [a], [e, e2]))
    assert "_:f64[] = select a b 2.0:f64[]" in text
    assert "and a True:bool[]" in text


def test_to_dot():
    closed = ad.make_jaxpr(lambda x, y: (anp.exp(x) + y, x * 2.0))(np.ones(2), np.ones(2))
    dot = closed.to_dot()
    assert dot.startswith("digraph jaxpr {") and dot.rstrip().endswith("}")
    assert dot.count("shape=plaintext label=<") == len(closed.eqns) == 3
    assert "in0 -> eqn0:i0;" in dot                 # x feeds exp's first (only) operand
    assert dot.count("shape=box peripheries=2") == 2           # the two outputs
    assert "<b>exp</b>" in dot and "c: f64[2]" in dot
    assert '<td port="i1">2.0</td>' in dot          # the literal operand of x * 2.0
    # every edge names declared nodes (ports after ':' belong to the node before it)
    declared = {l.split()[0] for l in dot.splitlines() if "[" in l and "->" not in l}
    for line in dot.splitlines():
        if "->" in line:
            src, dst = line.strip().rstrip(";").split(" [")[0].split(" -> ")
            assert src in declared and dst.split(":")[0] in declared
    # the open jaxpr draws the same, given the names make_jaxpr recorded
    assert closed.jaxpr.to_dot(["x", "y"], ["out[0]", "out[1]"]) == dot


def _f(x, y):
    return anp.tanh(x @ y) * 2.0


def test_structural_equality_and_hash():
    a = ad.make_jaxpr(_f)(np.ones((2, 3)), np.ones((3, 4)))
    b = ad.make_jaxpr(_f)(np.ones((2, 3)), np.ones((3, 4)))
    assert a.jaxpr is not b.jaxpr and a.jaxpr.invars[0] is not b.jaxpr.invars[0]
    assert a.jaxpr == b.jaxpr and hash(a.jaxpr) == hash(b.jaxpr)
    assert a == b and hash(a) == hash(b)
    assert len({a.jaxpr, b.jaxpr}) == 1
    # a different literal, primitive, dtype or shape is a different program
    c = ad.make_jaxpr(lambda x, y: anp.tanh(x @ y) * 3.0)(np.ones((2, 3)), np.ones((3, 4)))
    d = ad.make_jaxpr(lambda x, y: anp.sin(x @ y) * 2.0)(np.ones((2, 3)), np.ones((3, 4)))
    e = ad.make_jaxpr(_f)(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    f = ad.make_jaxpr(_f)(np.ones((5, 3)), np.ones((3, 4)))
    for other in (c, d, e, f):
        assert a.jaxpr != other.jaxpr
    # shape-generic keys drop sizes but keep ranks and dtypes
    assert a.jaxpr.key(shapes=False) == f.jaxpr.key(shapes=False)
    assert a.jaxpr.key(shapes=False) != e.jaxpr.key(shapes=False)
    g = ad.make_jaxpr(_f)(np.ones((2, 2, 3)), np.ones((3, 4)))
    assert a.jaxpr.key(shapes=False) != g.jaxpr.key(shapes=False)


def test_structural_equality_sees_wiring_not_names():
    x = np.ones(3)
    a = ad.make_jaxpr(lambda x, y: x - y)(x, x)
    b = ad.make_jaxpr(lambda x, y: y - x)(x, x)
    assert a.jaxpr != b.jaxpr
    c = ad.make_jaxpr(lambda x, y: x * y + x)(x, x)
    d = ad.make_jaxpr(lambda x, y: x * y + y)(x, x)
    assert c.jaxpr != d.jaxpr


def test_closed_jaxpr_equality_includes_constants():
    a = ad.make_jaxpr(lambda x: x * np.arange(3.0))(np.ones(3))
    b = ad.make_jaxpr(lambda x: x * np.arange(3.0))(np.ones(3))
    c = ad.make_jaxpr(lambda x: x * (np.arange(3.0) * 2))(np.ones(3))
    assert a.jaxpr == b.jaxpr and a == b
    assert a.jaxpr == c.jaxpr          # the same structure ...
    assert a != c                      # ... with another constant
    assert hash(a) == hash(b)


def test_nested_jaxpr_params_are_part_of_the_key():
    def make(k):
        @ad.custom_jvp
        def f(x):
            return anp.sin(x) * k
        f.defjvp(lambda p, t: (f(p[0]), t[0]))
        return ad.make_jaxpr(f)(1.0)
    assert make(2.0).jaxpr.key()[2][0] == "custom_jvp_call"
    assert make(2.0).jaxpr.key()[2][3] != make(3.0).jaxpr.key()[2][3]


def test_typecheck_accepts_traced_and_transformed_jaxprs():
    x, y = np.ones((2, 3)), np.ones((3, 4))
    for fn in [_f, ad.grad(lambda x, y: anp.sum(_f(x, y))),
               lambda x, y: ad.jvp(lambda a: _f(a, y), (x,), (x,))[1],
               ad.hessian(lambda x, y: anp.sum(_f(x, y)))]:
        assert typecheck_jaxpr(ad.make_jaxpr(fn)(x, y).jaxpr)


def test_typecheck_rejects_broken_jaxprs():
    a = Var(ShapedArray((3,), np.float64))
    b = Var(ShapedArray((3,), np.float64))
    undefined = Var(ShapedArray((3,), np.float64))
    with pytest.raises(TypeError, match="undefined"):
        typecheck_jaxpr(Jaxpr([], [a], [b], [Eqn(P.add_p, [a, undefined], [b], {})]))
    wrong = Var(ShapedArray((4,), np.float64))
    with pytest.raises(TypeError, match="produces"):
        typecheck_jaxpr(Jaxpr([], [a], [wrong], [Eqn(P.sin_p, [a], [wrong], {})]))
    wrong_dt = Var(ShapedArray((3,), np.float32))
    with pytest.raises(TypeError, match="produces"):
        typecheck_jaxpr(Jaxpr([], [a], [wrong_dt], [Eqn(P.sin_p, [a], [wrong_dt], {})]))
    with pytest.raises(TypeError, match="output"):
        typecheck_jaxpr(Jaxpr([], [a], [undefined], []))
    from autodiff.errors import ShapeError
    with pytest.raises(ShapeError):
        typecheck_jaxpr(Jaxpr([], [a, wrong], [b], [Eqn(P.add_p, [a, wrong], [b], {})]))


def test_equations_remember_the_users_line():
    closed = ad.make_jaxpr(lambda x: anp.exp(x) * 2.0)(1.0)   # <- this line
    for e in closed.eqns:
        assert os.path.basename(e.source.filename) == "test_ir.py"
        assert "make_jaxpr(lambda x: anp.exp(x)" in open(e.source.filename).read().splitlines()[
            e.source.lineno - 1]


def test_eval_jaxpr_and_closed_call():
    closed = ad.make_jaxpr(lambda x: anp.sin(x) * np.arange(3.0))(np.ones(3))
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(closed(x)[0], np.sin(x) * np.arange(3.0))
    np.testing.assert_allclose(eval_jaxpr(closed.jaxpr, closed.consts, x)[0],
                               np.sin(x) * np.arange(3.0))


def test_make_jaxpr_is_dead_code_eliminated():
    def f(x):
        unused = anp.exp(x) * 3.0     # noqa: F841
        return anp.sin(x)
    closed = ad.make_jaxpr(f)(1.0)
    assert [e.primitive.name for e in closed.eqns] == ["sin"]


def test_shaped_array():
    a = ShapedArray((2, 3), np.float32)
    assert a.ndim == 2 and a.size == 6 and str(a) == "f32[2,3]"
    assert a == ShapedArray([2, 3], "float32") and hash(a) == hash(ShapedArray((2, 3), "f4"))
    assert a != ShapedArray((2, 3), np.float32, weak_type=True)
    assert ShapedArray((), np.float64, weak_type=True).strip_weak() == ShapedArray((), np.float64)
    assert repr(ShapedArray((), np.int64, True)) == "ShapedArray(i64[], weak)"
    assert a.update(shape=(4,)) == ShapedArray((4,), np.float32)
