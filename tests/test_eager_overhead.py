"""Issue 21, item 5: what the cuts of the eager (no-jit) grad path must keep.

* a custom_vjp's ``bwd`` runs on concrete values under ``grad`` (its one-shot backward pass
  is evaluated, not traced), so Python control flow on values works there; under ``jit``
  it is traced and the error names the user's line;
* the Python shape broadcasting, the interned avals and the dtype-kind tests agree with
  numpy on every case (they replace numpy calls on the hot path).
"""
import inspect
import itertools

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.avals import ShapedArray, is_float_dtype, is_inexact_dtype
from autodiff.errors import ConcretizationError, ShapeError
from autodiff.numpy._base import broadcast_shapes, broadcast_to


# ----------------------------------------------------------------------------- custom_vjp bwd
@ad.custom_vjp
def soft_clip(x):
    """x, with a gradient that is halved until it is at most 1 in size (a Python loop)."""
    return x * 1.0


def _soft_clip_fwd(x):
    return soft_clip(x), None


def _soft_clip_bwd(_, g):
    if g > 1.0:                                 # the line the jit error names
        while g > 1.0:
            g = g * 0.5
    return (g,)


soft_clip.defvjp(_soft_clip_fwd, _soft_clip_bwd)


def _expected(g):
    while g > 1.0:
        g *= 0.5
    return g


@pytest.mark.parametrize("scale", [0.5, 3.0, 20.0])
def test_custom_vjp_bwd_with_python_control_flow_on_values_under_grad(scale):
    # d/dx [scale * soft_clip(x)]: the incoming cotangent is `scale`, halved by bwd's loop
    got = ad.grad(lambda x: scale * soft_clip(x))(2.0)
    assert float(got) == _expected(scale)
    # the same through vjp (a user-given cotangent) and on an array of one element
    _, f_vjp = ad.vjp(soft_clip, np.array([2.0]))
    np.testing.assert_array_equal(f_vjp(np.array([7.0]))[0], [0.875])


def test_custom_vjp_bwd_sees_concrete_cotangents_and_residuals():
    seen = []

    @ad.custom_vjp
    def f(x):
        return anp.sin(x)

    def fwd(x):
        return anp.sin(x), anp.cos(x)

    def bwd(c, g):
        seen.append((type(c), type(g)))
        return (c * g if float(c) > 0 else -c * g,)

    f.defvjp(fwd, bwd)
    x = 0.3
    np.testing.assert_allclose(ad.grad(lambda x: 2.0 * f(x))(x), 2.0 * np.cos(x), rtol=1e-15)
    assert all(issubclass(t, (np.ndarray, np.generic)) for ts in seen for t in ts), seen
    # second order still traces the rule (the cotangent is then a tracer): sin'' = -sin
    np.testing.assert_allclose(ad.grad(ad.grad(f))(x), -np.sin(x), rtol=1e-12)


def test_custom_vjp_bwd_with_python_control_flow_under_jit_names_the_line():
    with pytest.raises(ConcretizationError, match="ad.lax") as e:
        ad.jit(ad.grad(lambda x: 3.0 * soft_clip(x)))(2.0)
    src, first = inspect.getsourcelines(_soft_clip_bwd)
    line = first + [i for i, s in enumerate(src) if "the line the jit error names" in s][0]
    assert f"test_eager_overhead.py:{line}" in str(e.value)


def test_fixed_point_gradient_agrees_with_the_closed_form():
    # x* = a cos x*: dx*/da = cos x* / (1 + a sin x*) (implicit function theorem)
    from autodiff.misc.fixed_points import fixed_point
    a = 0.5
    f = lambda a: fixed_point(lambda a: (lambda x: a * anp.cos(x)), a, 0.0,
                              lambda x, y: anp.abs(x - y), 1e-13)
    xs = float(f(a))
    np.testing.assert_allclose(xs, a * np.cos(xs), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(f)(a), np.cos(xs) / (1 + a * np.sin(xs)), rtol=1e-10)


# ----------------------------------------------------------------------------- hot-path helpers
_SHAPES = [(), (1,), (3,), (0,), (2, 1), (1, 3), (2, 3), (4, 1, 3), (0, 3), (1, 0), (5, 2, 1)]


def test_broadcast_shapes_agrees_with_numpy():
    for shapes in itertools.chain(itertools.product(_SHAPES, repeat=2),
                                  itertools.product(_SHAPES[:7], repeat=3)):
        try:
            ref = tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            with pytest.raises(ShapeError, match="could not be broadcast"):
                broadcast_shapes(*shapes)
        else:
            assert broadcast_shapes(*shapes) == ref, shapes


def test_traced_broadcast_to_checks_like_numpy():
    x = ad.make_jaxpr(lambda v: broadcast_to(v, (4, 3)))(np.ones((1, 3)))
    assert x.out_avals[0].shape == (4, 3)
    for bad in [(2, 4), (3,), (3, 2)]:
        with pytest.raises(ShapeError, match="broadcast"):
            ad.make_jaxpr(lambda v: broadcast_to(v, bad))(np.ones((1, 3)))
    g = ad.grad(lambda v: anp.sum(anp.ones((4, 1, 3)) * v * 2.0))(np.ones((2, 1)))
    np.testing.assert_array_equal(g, np.full((2, 1), 24.0))


def test_shaped_array_shapes_are_python_ints_and_sizes_exact():
    a = ShapedArray((np.int64(3), np.int32(2)), np.float64)
    assert a.shape == (3, 2) and all(type(d) is int for d in a.shape)
    assert ShapedArray([2, 3], "f8").shape == (2, 3)
    assert ShapedArray((), np.float32).size == 1 and ShapedArray((0, 5), np.float32).size == 0
    assert ShapedArray((2 ** 20, 2 ** 20), np.int8).size == 2 ** 40
    assert type(ShapedArray((2, 3), "f8").size) is int
    assert ShapedArray((3.0,), "f8").shape == (3,)
    assert ShapedArray((1,), "f8", weak_type=1).weak_type is True


def test_dtype_kind_tests_agree_with_numpy():
    from autodiff.dtypes import float0
    for d in [np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128,
              np.int8, np.int64, np.uint16, np.bool_, "V8", float0, "f4", float, int, bool]:
        assert is_inexact_dtype(d) == np.issubdtype(np.dtype(d), np.inexact), d
        assert is_float_dtype(d) == np.issubdtype(np.dtype(d), np.floating), d


# ----------------------------------------------------------------------------- source lines
def _lines_of(fn, *args):
    return [(e.primitive.name, e.source.lineno) for e in ad.make_jaxpr(fn)(*args).jaxpr.eqns]


def test_every_equation_of_an_anp_call_names_the_users_line():
    # an anp call that emits several equations finds the user's line once for all of them
    def f(x):
        m = anp.mean(x * 2.0)
        return anp.dot(x, x) + m + anp.sum(anp.ones((3,)) + x[:, None])
    first = f.__code__.co_firstlineno
    lines = _lines_of(f, np.ones(3))
    assert {n for n, _ in lines} >= {"mul", "reduce_sum", "div", "dot_general", "add",
                                     "broadcast_in_dim"}, lines
    for name, line in lines:
        want = first + (1 if name in ("mul", "div") else 2)
        if name == "reduce_sum":
            assert line in (first + 1, first + 2), lines
        else:
            assert line == want, (name, line, lines)
    assert [l for n, l in lines if n == "div"] == [first + 1]


def test_user_functions_called_by_an_anp_call_keep_their_own_lines():
    def f(x):
        return anp.piecewise(x, [x < 0.0, x >= 0.0],
                             [lambda v: anp.sin(v),
                              lambda v: anp.cos(v)])
    first = f.__code__.co_firstlineno
    lines = dict(_lines_of(f, np.linspace(-1.0, 1.0, 4)))
    assert lines["sin"] == first + 2 and lines["cos"] == first + 3, lines
