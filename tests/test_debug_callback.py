"""ad.debug.callback / ad.debug.print inside jit (compiled and interpreted tiers), vmap,
grad and control flow: every call happens, with the right values, in program order."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp

SEEN = []


def _log(tag):
    def f(v):
        SEEN.append((tag, np.array(v)))
    f.__name__ = f"log_{tag}"
    return f


LOG_X, LOG_Y = _log("x"), _log("y")


def program(x):
    ad.debug.callback(LOG_X, x)
    y = anp.sin(x) * 2.0
    ad.debug.callback(LOG_Y, y)
    return anp.sum(y)


JIT = ad.jit(program)
JIT_GRAD = ad.jit(ad.grad(program))
JIT_VMAP = ad.jit(ad.vmap(program))


@pytest.fixture(autouse=True)
def _clear():
    SEEN.clear()


def _tags():
    return [t for t, _ in SEEN]


def test_compiled_kernel_calls_back_each_time_in_order():
    for x in (np.array([0.5, 1.5]), np.array([-1.0, 2.0])):
        SEEN.clear()
        assert JIT(x) == pytest.approx(np.sum(np.sin(x) * 2.0), rel=1e-13)
        assert _tags() == ["x", "y"]
        np.testing.assert_array_equal(SEEN[0][1], x)
        np.testing.assert_allclose(SEEN[1][1], np.sin(x) * 2.0, rtol=1e-13)
    assert JIT.cache_info().compiled == 1            # the second call ran the kernel
    assert "call_host" in JIT.lower(np.ones(2)).as_text()     # the kernel calls back


def test_background_tier_calls_back_too(background_compile):
    f = ad.jit(lambda x: (ad.debug.callback(LOG_X, x), x + 1.0)[1])
    f(np.ones(3))                                    # interpreter, compile in the background
    f.wait_compiled()
    f(np.zeros(3))                                   # compiled
    assert _tags() == ["x", "x"]
    np.testing.assert_array_equal(SEEN[1][1], np.zeros(3))


def test_under_grad_the_callback_sees_primals_once():
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(JIT_GRAD(x), 2.0 * np.cos(x), rtol=1e-13)
    assert _tags() == ["x", "y"]
    np.testing.assert_array_equal(SEEN[0][1], x)


def test_under_vmap_once_per_batch_element():
    xs = np.arange(6.0).reshape(3, 2) / 4
    np.testing.assert_allclose(JIT_VMAP(xs), np.sum(np.sin(xs) * 2.0, axis=1), rtol=1e-13)
    assert _tags() == ["x"] * 3 + ["y"] * 3
    for i in range(3):
        np.testing.assert_array_equal(SEEN[i][1], xs[i])


def test_inside_a_scan_body_every_step():
    def f(x):
        def step(c, _):
            ad.debug.callback(LOG_X, c)
            return c * 2.0, c
        return ad.lax.scan(step, x, None, length=4)[0]
    out = ad.jit(f)(np.array(1.5))
    assert out == 24.0
    assert [float(v) for _, v in SEEN] == [1.5, 3.0, 6.0, 12.0]


def test_debug_print_prints_values_in_the_kernel(capsys):
    f = ad.jit(lambda x: (ad.debug.print("x={} s={s:.3f}", x, s=anp.sum(x)), x * 2)[1])
    f(np.array([1.0, 2.0]))
    f(np.array([0.5, 0.25]))
    assert capsys.readouterr().out.splitlines() == ["x=[1. 2.] s=3.000", "x=[0.5  0.25] s=0.750"]


def test_a_callback_is_never_dead_code():
    # no result is used, and the program's output does not depend on it
    jaxpr = ad.make_jaxpr(lambda x: (ad.debug.callback(LOG_X, x * 3.0), x)[1])(np.ones(2))
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["mul", "debug_callback"]
    f = ad.jit(lambda x: (ad.debug.callback(LOG_X, x * 3.0), x)[1])
    f(np.ones(2))
    np.testing.assert_array_equal(SEEN[0][1], [3.0, 3.0])


def test_a_cond_kept_for_its_callback_alone():
    # a cond whose branches only call back (no result used) is effectful: never dropped as
    # dead code, folded or merged, eagerly, under grad (partial evaluation keeps its known
    # half) and in a compiled kernel (a cond with no results is a bare call)
    import numpy as np
    import autodiff as ad
    seen = []

    def f(x):
        ad.lax.cond(x > 0, lambda v: ad.debug.callback(lambda t: seen.append(float(t)), v),
                    lambda v: None, x)
        return x * x
    assert f(1.5) == 2.25 and seen == [1.5]
    assert ad.grad(f)(2.0) == 4.0 and seen == [1.5, 2.0]
    g = ad.jit(ad.grad(f)).lower(3.0).compile()
    assert g(3.0) == 6.0 and g(-1.0) == -2.0 and seen == [1.5, 2.0, 3.0]
    assert any(ad.core.eqn_effectful(e) for e in ad.make_jaxpr(f)(1.0).jaxpr.eqns)
    assert not any(ad.core.eqn_effectful(e) for e in ad.make_jaxpr(lambda x: x * 2)(1.0).jaxpr.eqns)


def test_io_callback_runs_every_call_in_order_even_unused():
    from autodiff.experimental import io_callback
    seen = []

    def log(x):
        seen.append(float(np.sum(x)))
        return x * 2.0

    spec = ad.ShapeDtypeStruct((2,), np.float64)

    def f(x):
        io_callback(log, spec, x)                  # result unused: still runs
        y = io_callback(log, spec, x + 1.0)        # a second, identical-looking call
        z = io_callback(log, spec, x + 1.0)
        return y + z
    for run in (f, ad.jit(f)):
        seen.clear()
        np.testing.assert_allclose(run(np.ones(2)), [8.0, 8.0])
        assert seen == [2.0, 4.0, 4.0]             # neither dropped nor merged, in order
    # a pure_callback whose result is unused is dead code: dropped under jit
    seen.clear()
    ad.jit(lambda x: (ad.pure_callback(log, spec, x), x + 1.0)[1])(np.ones(2))
    assert seen == []
    # under vmap: one call per element, in order
    seen.clear()
    out = ad.vmap(lambda v: io_callback(log, ad.ShapeDtypeStruct((), np.float64), v))(
        np.arange(3.0))
    np.testing.assert_allclose(out, [0.0, 2.0, 4.0])
    assert seen == [0.0, 1.0, 2.0]
    with pytest.raises(ad.errors.UnsupportedError, match="no derivative"):
        ad.grad(lambda v: anp.sum(io_callback(log, spec, v)))(np.ones(2))
