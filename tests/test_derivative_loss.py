"""No silent wrong derivative (issue 33): a value that carries a derivative refuses to
become a constant.

Without ``jit`` differentiation traces on values (as autograd), so ``float(x)``,
``math.exp(x)``, ``np.float64(x)``, ``np.asarray(x)`` and numpy's item assignment
``g[i] = x`` could each hand back a number and quietly drop the derivative through it.
They raise :class:`~autodiff.errors.DerivativeLossError` instead (a
``ConcretizationError``, so a ``TypeError``), naming the user's line and the fix; under
``jit`` and ``vmap`` values are abstract and the same conversions raise
``ConcretizationError``. Values without a derivative (integers, non-differentiated
arguments, ``stop_gradient``, ``x.primal``, zero-derivative operations such as ``floor``)
keep converting, and ``bool()`` / ``int()`` stay allowed for control flow and indexing.

The registry test at the end is the property: for every primitive with records and every
transform, a program that converts a differentiated value either raises or gives the
derivative finite differences give.
"""
import math
import operator

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.core import primitives
from autodiff.errors import ConcretizationError, DerivativeLossError

from op_records import RECORDS, Z


def _item_assign(x):
    g = np.zeros(2)
    g[0] = 3.0 * x[0]
    g[1] = x[1] ** 2
    return anp.sum(g)


# the issue's block: each function and the derivative it should have had
ISSUE_CASES = {
    "float": (lambda x: float(x) * x, 2.0),
    "np.float64": (lambda x: np.float64(x) * x, 2.0),
    "math.exp": (lambda x: math.exp(x) + x, 1.0),
    "complex": (lambda x: complex(x).real * x, 2.0),
    "np.asarray": (lambda x: np.asarray(x) * x, 2.0),
    "np.array": (lambda x: np.array([x, 1.0])[0] * x, 2.0),
    "item": (lambda x: x.item() * x, 2.0),
    "tolist": (lambda x: x.tolist() * x, 2.0),
    "math.sqrt": (lambda x: math.sqrt(x) * x, 2.0),
    "math.fsum": (lambda x: math.fsum([x, x]) * x, 2.0),
    "operator.index": (lambda x: operator.index(x) * x, 2.0),
}


def _scalar_grad_modes():
    """name -> a function computing d f / dx at a scalar x, as a user would."""
    return {
        "grad": lambda f, x: ad.grad(f)(x),
        "value_and_grad": lambda f, x: ad.value_and_grad(f)(x)[1],
        "jvp": lambda f, x: ad.jvp(f, (x,), (1.0,))[1],
        "vjp": lambda f, x: ad.vjp(f, x)[1](1.0)[0],
        "linearize": lambda f, x: ad.linearize(f, x)[1](1.0),
        "jacfwd": lambda f, x: ad.jacfwd(f)(x),
        "jacrev": lambda f, x: ad.jacrev(f)(x),
        "hessian": lambda f, x: ad.hessian(f)(x),
        "grad_checkpoint": lambda f, x: ad.grad(ad.checkpoint(f))(x),
        "grad_of_grad": lambda f, x: ad.grad(ad.grad(f))(x),
        "jet": lambda f, x: ad.jet(f, (x,), ((1.0,),))[1][0],
    }


@pytest.mark.parametrize("mode", sorted(_scalar_grad_modes()))
@pytest.mark.parametrize("case", sorted(ISSUE_CASES))
def test_conversion_of_a_differentiated_value_raises(case, mode):
    f, x = ISSUE_CASES[case]
    run = _scalar_grad_modes()[mode]
    if case == "operator.index":
        # a float is no index at all, derivative or not: a TypeError naming the fix
        with pytest.raises(TypeError, match="index"):
            run(f, x)
        return
    with pytest.raises(DerivativeLossError) as err:
        run(f, x)
    msg = str(err.value)
    assert "test_derivative_loss.py" in msg           # the user's line
    assert "stop_gradient" in msg and "anp" in msg    # the fixes


def test_numpy_item_assignment_raises_the_typed_error():
    # numpy wraps the TypeError of __float__ in "ValueError: setting an array element with a
    # sequence"; the public entry points raise the typed error itself
    with pytest.raises(DerivativeLossError, match=r"at\[i\]\.set") as err:
        ad.grad(_item_assign)(np.ones(2))
    import inspect
    line = inspect.getsourcelines(_item_assign)[1] + 2          # g[0] = 3.0 * x[0]
    assert f"test_derivative_loss.py:{line})" in str(err.value)


@pytest.mark.parametrize("mode", ["jit_grad", "grad_jit", "vmap_grad", "vmap"])
@pytest.mark.parametrize("case", ["float", "np.float64", "math.exp", "np.asarray", "item"])
def test_abstract_modes_raise_concretization(case, mode):
    f, x = ISSUE_CASES[case]
    run = {"jit_grad": lambda: ad.jit(ad.grad(f))(x),
           "grad_jit": lambda: ad.grad(ad.jit(f))(x),
           "vmap_grad": lambda: ad.vmap(ad.grad(f))(np.full(3, x)),
           "vmap": lambda: ad.vmap(f)(np.full(3, x))}[mode]
    with pytest.raises(ConcretizationError):
        run()


def test_item_assignment_in_every_mode():
    x = np.ones(2)
    for run in (lambda: ad.grad(_item_assign)(x),
                lambda: ad.jvp(_item_assign, (x,), (np.ones(2),)),
                lambda: ad.jacrev(_item_assign)(x),
                lambda: ad.hessian(_item_assign)(x)):
        with pytest.raises(DerivativeLossError):
            run()
    for run in (lambda: ad.jit(ad.grad(_item_assign))(x),
                lambda: ad.jit(_item_assign)(x),     # numpy's ValueError is not what shows
                lambda: ad.vmap(ad.grad(_item_assign))(np.ones((3, 2)))):
        with pytest.raises(ConcretizationError):
            run()
    # the functional update gives the right gradient [3, 2]
    def fixed(x):
        g = anp.zeros(2).at[0].set(3.0 * x[0]).at[1].set(x[1] ** 2)
        return anp.sum(g)
    np.testing.assert_allclose(ad.grad(fixed)(x), [3.0, 2.0])
    np.testing.assert_allclose(ad.jit(ad.grad(fixed))(x), [3.0, 2.0])


def test_eager_conversions_are_plain_numpy():
    for case in ("float", "np.float64", "math.exp", "complex", "np.asarray", "np.array"):
        f, x = ISSUE_CASES[case]
        assert np.isfinite(f(x))
    assert _item_assign(np.ones(2)) == 4.0


# ------------------------------------------------------------------ what keeps converting

def test_values_without_a_derivative_keep_converting():
    x = 2.0
    # a deliberate constant: stop_gradient and .primal, in every differentiating mode
    for const in (lambda x: float(ad.stop_gradient(x)), lambda x: float(x.primal),
                  lambda x: np.asarray(ad.lax.stop_gradient(x)),
                  lambda x: math.exp(ad.stop_gradient(x))):
        f = lambda x, const=const: const(x) * x          # noqa: E731
        want = math.exp(x) if "exp" in str(const.__code__.co_names) else x
        for mode, run in _scalar_grad_modes().items():
            if mode == "hessian" or mode == "grad_of_grad":
                assert run(f, x) == 0.0, mode
            elif mode != "jet":
                np.testing.assert_allclose(run(f, x), want, err_msg=mode)
    # bool() and int() for control flow and indexing
    table = [10.0, 20.0, 30.0]
    assert ad.grad(lambda x: x * table[int(x)] if x > 0 else -x)(1.5) == 20.0
    # an integer-valued result, and a zero-derivative operation (floor, sign)
    assert ad.grad(lambda x: float(anp.floor(x)) * x)(2.5) == 2.0
    assert ad.grad(lambda x: float(anp.sign(x)) * x)(-2.5) == -1.0
    assert ad.grad(lambda x: float(anp.sum(x > 1.0)) * anp.sum(x))(np.array([0.5, 2.0, 3.0])) \
        .tolist() == [2.0, 2.0, 2.0]
    # a non-differentiated argument (argnums) converts: it is a constant of this derivative
    g = ad.grad(lambda x, y: x * float(y) * math.exp(y), argnums=0)(2.0, 1.0)
    np.testing.assert_allclose(g, math.e)
    gy = ad.grad(lambda x, y: x * y, argnums=1)(np.float64(3.0), 5.0)
    assert gy == 3.0
    # checkpoint on values outside any derivative is plain evaluation
    assert ad.checkpoint(lambda x: float(x) * x)(3.0) == 9.0


def test_nested_derivatives_see_outer_values():
    # the inner function converts the outer variable: the outer derivative would be lost
    def outer(x):
        return ad.grad(lambda y: float(x) * y * y)(1.0)
    with pytest.raises(DerivativeLossError):
        ad.grad(outer)(3.0)
    # and a value the inner trace computes from it
    def outer2(x):
        return ad.grad(lambda y: math.exp(x * 1.0) * y)(1.0)
    with pytest.raises(DerivativeLossError):
        ad.grad(outer2)(3.0)
    # converting only the inner variable's stop_gradient is allowed at both levels
    def outer3(x):
        return ad.grad(lambda y: float(ad.stop_gradient(y)) * y * x)(2.0)
    np.testing.assert_allclose(ad.grad(outer3)(3.0), 2.0)


def test_custom_vjp_rules_may_use_numpy_on_values():
    # a custom rule defines the derivative itself: numpy inside its fwd/bwd is the user's
    # business, and the derivative it declares is the one used
    @ad.custom_vjp
    def f(x):
        return np.sin(np.asarray(x)) if not isinstance(x, ad.Array) else anp.sin(x)

    def fwd(x):
        return anp.sin(x), x

    def bwd(x, g):
        return (g * math.cos(float(x)),)
    f.defvjp(fwd, bwd)
    np.testing.assert_allclose(ad.grad(f)(0.5), math.cos(0.5))


# ------------------------------------------------------------------ the tape

def test_tape_variable_that_requires_grad_refuses_float():
    x = ad.Variable(2.0)
    y = x * x
    for convert in (float, math.exp, np.float64, complex):
        with pytest.raises(DerivativeLossError):
            convert(y)
    g = np.zeros(2)
    with pytest.raises(ValueError) as err:        # numpy's wrapper, raised from ours
        g[0] = y
    assert isinstance(err.value.__cause__, DerivativeLossError)
    with pytest.raises(TypeError):
        np.asarray(y)
    # explicit reads of the value
    assert y.item() == 4.0 and y.tolist() == 4.0 and float(y.detach()) == 4.0
    assert float(y.numpy()) == 4.0
    with ad.no_grad():
        assert float(y) == 4.0 and math.exp(x) == math.exp(2.0)
    # a Variable without grad converts
    assert float(ad.Variable(3.0, requires_grad=False)) == 3.0
    # the right way records: d(x^2 * x)/dx = 3 x^2
    z = y * x
    z.backward(retain_graph=True)
    with pytest.raises(DerivativeLossError):      # the graph is kept: z may be used again
        float(z)
    z.backward()
    np.testing.assert_allclose(x.grad, 24.0)
    # after a backward() that consumed the graph no derivative can pass through z: the
    # usual `loss.backward(); losses.append(float(loss))` reads the number
    assert float(z) == 8.0
    with pytest.raises(DerivativeLossError):      # the leaf still requires grad
        float(x)


# ------------------------------------------------------------------ the property, over the registry

def _records():
    out = []
    for name in sorted(RECORDS):
        if name not in primitives:
            continue
        p = primitives[name]
        for i, r in enumerate(RECORDS[name]):
            if not r.fd or any(isinstance(a, Z) for a in r.args):
                continue
            if not r.float_args or p.call_like or name == "stop_gradient":
                continue          # (stop_gradient's derivative is zero by definition, not FD's)
            try:
                with np.errstate(all="ignore"):
                    xs = r.make(np.random.default_rng(7 + i), np.float64)
                    outs = p.impl(*xs, **r.params(np.float64))
            except Exception:     # noqa: BLE001 - a record for another suite's purpose
                continue
            if any(np.asarray(o).dtype.kind in "fc"
                   for o in (outs if p.multiple_results else [outs])):
                out.append((name, i))
    return out


RECS = _records()
CONVERSIONS = {
    "float": lambda y: float(y),
    "np.float64": lambda y: np.float64(y),
    "math.exp": lambda y: math.log(math.exp(y)),
    "setitem": lambda y: _setitem(y),
    "asarray": lambda y: np.asarray(y),
}


def _setitem(y):
    g = np.zeros(1)
    g[0] = y
    return g[0]


def _program(p, record, xs, fpos, convert):
    """``fs -> c * y`` with ``y`` a scalar of the primitive's float outputs and ``c`` the
    converted ``y``: with the conversion's derivative dropped the result's derivative is
    ``y y'``, the true one ``2 y y'``."""
    params = record.params(np.float64)

    def prog(*fs):
        full = list(xs)
        for k, v in zip(fpos, fs):
            full[k] = v
        out = p.bind(*full, **params)
        outs = list(out) if p.multiple_results else [out]
        y = 0.0
        for o in outs:
            kind = np.dtype(anp.result_type(o)).kind
            if kind == "f":
                y = y + anp.sum(anp.sin(o))         # bounded: finite differences stay sane
            elif kind == "c":
                y = y + anp.sum(anp.sin(anp.real(o)) + anp.cos(anp.imag(o)))
        return convert(y) * y
    return prog


def _fd(f, fxs, k, eps=1e-6):
    """Central difference of scalar ``f`` in a random direction of argument ``k``."""
    rng = np.random.default_rng(k)
    d = rng.standard_normal(np.shape(fxs[k]))
    def at(s):
        args = list(fxs)
        args[k] = np.asarray(fxs[k] + s * d, dtype=np.float64)
        return float(np.asarray(f(*args)))
    return (at(eps) - at(-eps)) / (2 * eps), d


@pytest.mark.parametrize("name", sorted({n for n, _ in RECS}))
def test_registry_conversion_raises_or_is_exact(name):
    """For each record of ``name`` and each transform (grad, jvp, jacrev, checkpoint under
    grad, the tape): the program either raises DerivativeLossError or its derivative agrees
    with central finite differences of the same program on plain numpy values (where the
    conversion is harmless). jit and vmap of it raise ConcretizationError."""
    p = primitives[name]
    convs = sorted(CONVERSIONS)
    checked = 0
    for i in [i for n, i in RECS if n == name]:
        record = RECORDS[name][i]
        with np.errstate(all="ignore"):
            xs = [np.asarray(x) for x in record.make(np.random.default_rng(7 + i), np.float64)]
        fpos = [k for k in record.float_args if xs[k].dtype.kind == "f"]
        if not fpos:
            continue
        convert = CONVERSIONS[convs[i % len(convs)]]
        prog = _program(p, record, xs, fpos, convert)
        fxs = [xs[k] for k in fpos]
        try:
            with np.errstate(all="ignore"):
                ref0 = prog(*fxs)
        except Exception:          # noqa: BLE001 - the sample itself is not usable this way
            continue
        if not np.isfinite(ref0):
            continue
        k = 0
        fd, d = _fd(prog, fxs, k)
        transforms = {
            "grad": lambda: np.sum(ad.grad(prog, argnums=k)(*fxs) * d),
            "jvp": lambda: ad.jvp(lambda v: prog(*fxs[:k], v, *fxs[k + 1:]), (fxs[k],),
                                  (d.astype(fxs[k].dtype),))[1],
            "jacrev": lambda: np.sum(ad.jacrev(prog, argnums=k)(*fxs) * d),
            "grad_checkpoint": lambda: np.sum(ad.grad(ad.checkpoint(prog), argnums=k)(*fxs) * d),
        }
        for tname, run in transforms.items():
            try:
                with np.errstate(all="ignore"):
                    got = float(np.asarray(run()))
            except DerivativeLossError:
                checked += 1
                continue
            np.testing.assert_allclose(got, fd, rtol=1e-4, atol=1e-6 * max(1.0, abs(fd)),
                                       err_msg=f"{name}[{i}] {tname}: converted silently")
            checked += 1
        # the tape: Variables for the float operands
        vs = [ad.Variable(x) for x in fxs]
        try:
            with np.errstate(all="ignore"):
                out = prog(*vs)
            out.backward()
            got = float(np.sum(vs[k].grad * d))
            np.testing.assert_allclose(got, fd, rtol=1e-4, atol=1e-6 * max(1.0, abs(fd)),
                                       err_msg=f"{name}[{i}] tape: converted silently")
        except DerivativeLossError:
            pass
        except (ValueError) as e:                # numpy's item assignment wraps ours
            assert isinstance(e.__cause__, DerivativeLossError), e
        for run in (lambda: ad.jit(ad.grad(prog, argnums=k))(*fxs),
                    lambda: ad.vmap(prog)(*[np.stack([x, x]) for x in fxs])):
            with pytest.raises((ConcretizationError, ValueError)) as err:
                run()
            if isinstance(err.value, ValueError):
                assert isinstance(err.value.__cause__, ConcretizationError)
    assert checked, name


def test_formatting_a_differentiated_value_is_allowed():
    # a string carries no derivative: printing the loss inside grad works, and the
    # derivative is unchanged (autograd and JAX refuse a format spec on a traced value)
    seen = []

    def f(x):
        y = x * 2.0
        seen.append(f"{y:.3f}|{y:>6.1f}")
        return y * y
    assert ad.grad(f)(1.5) == 12.0
    assert seen == ["3.000|   3.0"]
    with pytest.raises(ConcretizationError):
        ad.jit(lambda x: f"{x:.2f}" and x)(1.0)
