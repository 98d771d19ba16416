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
        return (c * g if c > 0 else -c * g,)

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


# ----------------------------------------------------------------------------- custom-rule traces
# autodiff.custom_cache: the bodies and rules of custom functions are traced once per key
# (the function with its closure and globals by value, static arguments, avals, treedef)
from autodiff import custom_cache  # noqa: E402


def _kinds_hit(fn):
    """Run ``fn()``; the cache's hits and misses that it caused."""
    before = custom_cache.cache_info()
    out = fn()
    after = custom_cache.cache_info()
    return out, after.hits - before.hits, after.misses - before.misses


_GLOBAL_SCALE = 2.0


class _Traces:
    """Records Python runs of traced bodies (a class is keyed by identity, so reading it does
    not make a function unkeyable, as a list in a closure or a global would)."""
    seen = []


@ad.custom_vjp
def _scaled_sin(x):
    _Traces.seen.append("scaled_sin")
    return _GLOBAL_SCALE * anp.sin(x)


_scaled_sin.defvjp(lambda x: (_scaled_sin(x), anp.cos(x)),
                   lambda c, g: (_GLOBAL_SCALE * c * g,))


def test_custom_vjp_body_is_traced_once_and_reused_across_grad_calls():
    global _GLOBAL_SCALE
    vg = ad.value_and_grad(lambda x: 3.0 * _scaled_sin(x))
    _Traces.seen.clear()
    for x in (0.3, 0.7, -1.1):                   # other values, same avals: hits
        (v, g), hits, misses = _kinds_hit(lambda: vg(x))
        np.testing.assert_allclose(v, 6.0 * np.sin(x), rtol=1e-15)
        np.testing.assert_allclose(g, 6.0 * np.cos(x), rtol=1e-15)
    assert hits >= 2 and misses == 0, (hits, misses)
    assert len(_Traces.seen) <= 2                # the first call's traces (body, fwd) only
    # a changed global the body reads: a new key, a new trace, the new numbers
    _GLOBAL_SCALE = 5.0
    try:
        (v, g), hits, misses = _kinds_hit(lambda: vg(0.3))
        np.testing.assert_allclose(v, 15.0 * np.sin(0.3), rtol=1e-15)
        np.testing.assert_allclose(g, 15.0 * np.cos(0.3), rtol=1e-15)
        assert misses >= 1
    finally:
        _GLOBAL_SCALE = 2.0
    # back to the first value: keyed by value, the first trace serves again
    (v, _), hits, misses = _kinds_hit(lambda: vg(0.3))
    np.testing.assert_allclose(v, 6.0 * np.sin(0.3), rtol=1e-15)
    assert misses == 0 and hits >= 2


def _make_closure_vjp():
    scale = 2.0

    @ad.custom_vjp
    def f(x):
        _Traces.seen.append(scale)
        return scale * anp.sin(x)

    f.defvjp(lambda x: (f(x), anp.cos(x)), lambda c, g: (scale * c * g,))

    def set_scale(s):
        nonlocal scale
        scale = s
    return f, set_scale


def test_a_changed_closure_cell_forces_a_retrace_with_the_new_value():
    _Traces.seen = traces = []
    f, set_scale = _make_closure_vjp()
    vg = ad.value_and_grad(lambda x: f(x))
    for s in (2.0, 2.0, -3.0, -3.0, 2.0):
        set_scale(s)
        v, g = vg(0.4)
        np.testing.assert_allclose(v, s * np.sin(0.4), rtol=1e-15)
        np.testing.assert_allclose(g, s * np.cos(0.4), rtol=1e-15)
    # the body ran once for 2.0 and once for -3.0 (fwd calls f: the same cached trace);
    # the repeats, and the return to 2.0, reuse them
    assert traces == [2.0, -3.0], traces


def test_unkeyable_closures_are_traced_every_call_and_stay_right():
    # a list and a large array in the closure cannot be keyed by value: no cached trace
    box = [2.0]
    table = np.linspace(0.0, 1.0, 100)
    traces = []

    @ad.custom_vjp
    def f(x):
        traces.append(1)
        return box[0] * x + table[-1]

    f.defvjp(lambda x: (f(x), None), lambda _, g: (box[0] * g,))
    vg = ad.value_and_grad(f)
    assert vg(1.0) == (3.0, 2.0)
    box[0], table[-1] = 4.0, 10.0                # changed in place
    assert vg(1.0) == (14.0, 4.0)
    n = len(traces)
    vg(1.0)
    assert len(traces) > n                       # traced again


def test_a_small_closed_over_array_changed_in_place_gives_a_new_trace():
    w = np.array([1.0, 2.0])

    @ad.custom_jvp
    def f(x):
        return anp.sum(w * x)

    f.defjvp(lambda p, t: (f(*p), anp.sum(w * t[0])))
    g = ad.grad(f)
    np.testing.assert_array_equal(g(np.ones(2)), [1.0, 2.0])
    w[:] = [5.0, -1.0]                           # keyed by content: a miss, the new numbers
    np.testing.assert_array_equal(g(np.ones(2)), [5.0, -1.0])
    np.testing.assert_allclose(ad.jvp(f, (np.ones(2),), (np.ones(2),))[1], 4.0)


def test_other_avals_get_their_own_traces():
    _Traces.seen = traces = []

    @ad.custom_vjp
    def f(x):
        _Traces.seen.append((anp.shape(x), str(anp.result_type(x))))
        return anp.sum(anp.sin(x))

    f.defvjp(lambda x: (f(x), anp.cos(x)), lambda c, g: (c * g,))
    g = ad.grad(f)
    cases = [np.float64(0.5), np.linspace(0, 1, 3), np.linspace(0, 1, 3).astype(np.float32),
             np.ones((2, 2))]
    for x in cases + cases:                      # the second round: hits only
        got = g(x)
        assert got.shape == np.shape(x) and got.dtype == x.dtype
        np.testing.assert_allclose(got, np.cos(x), rtol=1e-6 if x.dtype == np.float32 else 1e-15)
    # one body trace per avals (fwd's call of f reuses it); the second round traced nothing
    assert traces == [((), "float64"), ((3,), "float64"), ((3,), "float32"),
                      ((2, 2), "float64")], traces


def test_value_dependent_body_is_traced_with_values_each_call():
    @ad.custom_vjp
    def halve_until_small(x):
        while x > 1.0:                           # Python control flow on the value
            x = x * 0.5
        return x

    halve_until_small.defvjp(lambda x: (halve_until_small(x), None), lambda _, g: (g,))
    vg = ad.value_and_grad(lambda x: 2.0 * halve_until_small(x))
    assert vg(3.0) == (1.5, 2.0)                 # 3 -> 1.5 -> 0.75
    assert vg(9.0) == (2.0 * 0.5625, 2.0)        # other value, another number of steps
    assert vg(0.5) == (1.0, 2.0)
    with pytest.raises(ConcretizationError):
        ad.jit(halve_until_small)(3.0)


def test_a_body_that_fails_only_on_abstract_values_is_traced_with_values():
    from autodiff.core import is_concrete

    @ad.custom_vjp
    def checked(x):
        if not is_concrete(x):                   # library code that wants values, say
            raise ValueError("checked needs a value")
        return anp.sin(x)

    checked.defvjp(lambda x: (checked(x), anp.cos(x)), lambda c, g: (c * g,))
    for x in (0.2, 0.9):
        v, g = ad.value_and_grad(checked)(x)
        np.testing.assert_allclose((v, g), (np.sin(x), np.cos(x)), rtol=1e-15)
    with pytest.raises(ValueError, match="needs a value"):
        ad.jit(checked)(0.2)


def test_custom_jvp_rule_traces_are_cached_and_right():
    _Traces.seen = rule_calls = []

    @ad.custom_jvp
    def softplus(x):
        return anp.log1p(anp.exp(x))

    @softplus.defjvp
    def _(p, t):
        _Traces.seen.append(1)
        (x,), (tx,) = p, t
        return softplus(x), tx / (1.0 + anp.exp(-x))

    g = ad.grad(lambda x: anp.sum(softplus(x)))
    for x in (np.array([-1.0, 0.0, 2.0]), np.array([3.0, -4.0, 0.5])):
        np.testing.assert_allclose(g(x), 1 / (1 + np.exp(-x)), rtol=1e-14)
    n = len(rule_calls)
    (_, hits, misses) = _kinds_hit(lambda: g(np.array([0.1, 0.2, 0.3])))
    assert len(rule_calls) == n and hits >= 2 and misses == 0
    # second order goes through the traced rule: softplus'' = s (1 - s), s the logistic
    x = 0.7
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(ad.grad(ad.grad(softplus))(x), s * (1 - s), rtol=1e-13)


def test_fixed_point_adjoint_is_traced_once_per_key():
    from autodiff.misc.fixed_points import fixed_point
    solve = lambda a: fixed_point(lambda a: (lambda x: a * anp.cos(x)), a, 0.0,
                                  lambda x, y: anp.abs(x - y), 1e-13)
    g = ad.grad(solve)
    g(0.5)                                       # a fresh lambda per call: keyed by code
    for a in (0.3, 0.6):
        got, hits, misses = _kinds_hit(lambda: g(a))
        xs = float(solve(a))
        np.testing.assert_allclose(got, np.cos(xs) / (1 + a * np.sin(xs)), rtol=1e-10)
        assert misses == 0 and hits >= 2, (hits, misses)
    # the tolerance is part of the key: a looser one is a new trace (and a coarser answer)
    loose = lambda a: fixed_point(lambda a: (lambda x: a * anp.cos(x)), a, 0.0,
                                  lambda x, y: anp.abs(x - y), 1e-3)
    _, _, misses = _kinds_hit(lambda: ad.grad(loose)(0.5))
    assert misses >= 1


def _lin_info():
    from autodiff.api import _LIN_CACHE
    return _LIN_CACHE.info()


def test_grad_through_custom_rules_reuses_the_linearized_program():
    # the rules every call with one key binds are the same objects (custom_cache.SharedRule),
    # so the enclosing function's jvp, partial evaluation and transpose are built once
    @ad.custom_vjp
    def twice_sin(x):
        return 2.0 * anp.sin(x)

    twice_sin.defvjp(lambda x: (twice_sin(x), anp.cos(x)), lambda c, g: (2.0 * c * g,))

    @ad.custom_jvp
    def softplus(x):
        return anp.log1p(anp.exp(x))

    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] / (1.0 + anp.exp(-p[0]))))
    g = ad.grad(lambda x: anp.exp(twice_sin(x)) + softplus(3.0 * x))
    g(0.1)
    before = _lin_info()
    for x in (0.2, -0.4, 1.3):
        want = np.exp(2 * np.sin(x)) * 2 * np.cos(x) + 3.0 / (1 + np.exp(-3.0 * x))
        np.testing.assert_allclose(g(x), want, rtol=1e-14)
    after = _lin_info()
    assert after.hits - before.hits == 3 and after.size == before.size, (before, after)


def test_a_shared_program_still_runs_a_value_branching_bwd_on_each_calls_values():
    # soft_clip's bwd branches on the cotangent: the shared program cannot trace it, so it
    # runs on the values of every call, and each call takes its own branch
    # d/ds [s * soft_clip(2 s)] = 2 s + 2 * (the cotangent s, clipped by bwd)
    g = ad.grad(lambda s: s * soft_clip(2.0 * s))
    g(1.0)
    before = _lin_info()
    for s in (0.5, 3.0, 20.0, 0.75, 3.0):
        assert float(g(s)) == 2.0 * s + 2.0 * _expected(s), s
    assert _lin_info().hits - before.hits == 5


def test_fixed_point_grad_reuses_its_programs_and_follows_the_values():
    from autodiff.misc.fixed_points import fixed_point
    solve = lambda a: fixed_point(lambda a: (lambda x: a * anp.cos(x)), a, 0.0,
                                  lambda x, y: anp.abs(x - y), 1e-13)
    g = ad.grad(solve)
    g(0.5)
    before = _lin_info()
    for a in (0.3, 0.6, 0.9):
        xs = float(solve(a))
        np.testing.assert_allclose(g(a), np.cos(xs) / (1 + a * np.sin(xs)), rtol=1e-10)
    after = _lin_info()
    assert after.hits - before.hits == 3 and after.size == before.size, (before, after)
    # second order through the reused programs: d²x*/da², against central differences
    h = 1e-5
    a = 0.5
    fd = (float(g(a + h)) - float(g(a - h))) / (2 * h)
    np.testing.assert_allclose(ad.grad(g)(a), fd, rtol=1e-6)


def test_function_keys():
    from autodiff.custom_cache import function_key, value_key

    def make(s):
        return lambda x: s * x
    assert function_key(make(2.0)) == function_key(make(2.0))
    assert function_key(make(2.0)) != function_key(make(-2.0))
    assert function_key(make(0.0)) != function_key(make(-0.0))
    assert function_key(make(1)) != function_key(make(True)) != function_key(make(1.0))
    assert function_key(make(np.ones(3))) == function_key(make(np.ones(3)))
    assert function_key(make(np.ones(3))) != function_key(make(np.ones(3, np.float32)))
    for unkeyable in ([1.0], {"a": 1.0}, np.ones(1000), object()):
        assert function_key(make(unkeyable)) is None
    assert function_key(np.sin) is not None and value_key((1, "a", None)) is not None
    rec = lambda n: n if n < 1 else rec(n - 1)   # a function that names itself
    assert function_key(rec) is not None


# ----------------------------------------------------------------------------- loops on values
def test_a_loop_on_values_computes_small_step_values_as_they_are_recorded():
    # inside lax.while_loop under grad the predicate needs every step's values, so small
    # ones are computed when recorded (JaxprTrace.value_now); outside loops they stay lazy
    from autodiff.tracing import new_trace
    from autodiff.core import Primitive

    def _raise(x):
        raise FloatingPointError("boom")
    boom = Primitive("test_boom")
    boom.impl = _raise
    boom.abstract_eval = lambda a: a
    big = np.arange(1000.0)
    with new_trace(concrete=True) as tr:
        x = tr.new_arg(ad.core.get_aval(np.float64(0.5)), np.float64(0.5))
        lazy = anp.sin(x)
        tr.eager += 1
        try:
            now = anp.cos(x) * 2.0
            b = tr.new_arg(ad.core.get_aval(big), big)
            large = b * 3.0                      # over the size bound: stays lazy
            failing = boom.bind(x * 2.0)          # raises: stays lazy
        finally:
            tr.eager -= 1
        assert lazy.ivar not in tr.values
        assert tr.values[now.ivar] == 2.0 * np.cos(0.5)
        assert large.ivar not in tr.values and failing.ivar not in tr.values
        np.testing.assert_array_equal(tr.value_of(large.ivar), big * 3.0)
        with pytest.raises(FloatingPointError, match="boom"):
            tr.value_of(failing.ivar)            # the error comes when the value is needed


def test_while_loop_on_values_under_grad_matches_the_closed_form():
    # x <- a cos x to a fixed point, reverse mode through the steps taken
    def f(a):
        x, _ = ad.lax.while_loop(lambda c: anp.abs(c[0] - c[1]) > 1e-13,
                                 lambda c: (a * anp.cos(c[0]), c[0]), (a * 1.0, 0.0),
                                 max_steps=200)
        return x
    for a in (0.3, 0.5, 0.8):
        xs = float(f(a))
        np.testing.assert_allclose(ad.grad(f)(a), np.cos(xs) / (1 + a * np.sin(xs)),
                                   rtol=1e-9)


def test_a_numpy_array_with_a_tracer_of_its_shape_and_dtype_is_one_equation():
    # `c - x`, `x * c`, `np.add(c, x)`: the operators' fast path (no promotion pass),
    # from either side, numpy's __array_ufunc__ dispatch included; other shapes and dtypes
    # still promote and broadcast
    c = np.array([1.0, 2.0, 3.0])
    x = np.array([0.5, -1.0, 2.0])
    for f, want in [(lambda x: c - x, c - x), (lambda x: x * c, x * c),
                    (lambda x: np.add(c, x), c + x), (lambda x: c / x, c / x),
                    (lambda x: x - c, x - c)]:
        cj = ad.make_jaxpr(f)(x)
        assert len(cj.jaxpr.eqns) == 1, cj
        np.testing.assert_array_equal(f(x), want)
        np.testing.assert_array_equal(ad.jit(f)(x), want)
    g = ad.grad(lambda x: anp.sum((c - x) * (x / c)))(x)
    np.testing.assert_allclose(g, (c - 2 * x) / c, rtol=1e-15)
    # a float32 array with a float64 tracer, and a broadcast, take the promoting path
    c32 = c.astype(np.float32)
    assert ad.make_jaxpr(lambda x: c32 - x)(x).out_avals[0].dtype == np.float64
    np.testing.assert_array_equal(ad.jit(lambda x: c[:, None] - x)(x), c[:, None] - x)


# ----------------------------------------------------------------------------
# the idioms of ported scripts are one equation each (issue 21, stop 29)
# ----------------------------------------------------------------------------

def _prims(f, *args):
    return [e.primitive.name for e in ad.make_jaxpr(f)(*args).jaxpr.eqns]


def test_ported_idioms_trace_one_equation_each():
    f = np.arange(20.0).reshape(4, 5)
    i, j = np.array([[0, 3], [-1, 2]]), np.array([[4, -5], [1, 0]])
    assert _prims(lambda f, i, j: f[i, j], f, i, j) == ["index_gather"]
    assert _prims(lambda f: anp.roll(f, -1, axis=1), f) == ["roll"]
    assert _prims(lambda f: anp.logsumexp(f, axis=0), f) == ["logsumexp"]
    # and they compute numpy's values, negative indices and shifts included
    np.testing.assert_array_equal(ad.jit(lambda f, i, j: f[i, j])(f, i, j), f[i, j])
    np.testing.assert_array_equal(ad.jit(lambda f: anp.roll(f, -7, axis=1))(f), np.roll(f, -7, 1))


def test_semi_lagrangian_advection_gradient():
    # a fluid script's advection: bilinear interpolation at integer indices computed from
    # the traced positions (m.floor(...).astype(int), f[i0, j0]) and a roll stencil; the
    # gradient with respect to the velocity against central differences
    n = 6
    ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    rng = np.random.default_rng(3)
    f0 = rng.normal(size=(n, n))

    def loss(v):
        x = anp.clip(ii - v[0], 0.0, n - 1.001)
        y = anp.clip(jj - v[1], 0.0, n - 1.001)
        i0, j0 = anp.floor(x).astype(int), anp.floor(y).astype(int)
        s, t = x - i0, y - j0
        g = ((1 - s) * ((1 - t) * f0[i0, j0] + t * f0[i0, j0 + 1])
             + s * ((1 - t) * f0[i0 + 1, j0] + t * f0[i0 + 1, j0 + 1]))
        g = (g + anp.roll(g, 1, 0) + anp.roll(g, -1, 1)) / 3.0
        return anp.sum(g * g)

    v = 0.3 + 0.2 * rng.random((2, n, n))       # away from integer departure points
    got = ad.grad(loss)(v)
    eps = 1e-6
    for k in [(0, 1, 2), (1, 4, 0), (0, 5, 5), (1, 2, 3)]:
        e = np.zeros_like(v)
        e[k] = eps
        fd = (loss(v + e) - loss(v - e)) / (2 * eps)
        np.testing.assert_allclose(got[k], fd, rtol=1e-6, atol=1e-9)
    # the second call reuses the first one's programs and agrees with it
    np.testing.assert_allclose(ad.grad(loss)(v), got, rtol=0, atol=0)
