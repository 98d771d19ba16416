"""autograd's remaining public names (issue 36), checked against closed forms and against
what autograd 1.9.1 returns for the same calls (values beside them)."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import extend, test_util, wrap_util
from autodiff.differential_operators import holomorphic_grad, make_jvp_reversemode
from autodiff.misc import const_graph


def test_top_level_names():
    from autodiff import tuple as ag_tuple, isinstance as ag_isinstance, primitive  # noqa: F401
    assert ad.list is list and ad.dict is dict and ad.primitive is extend.primitive
    assert ag_isinstance((1, 2), ag_tuple)
    seen = []
    ad.grad(lambda x: (seen.append(ad.isinstance(x, np.ndarray) and ad.type(x) is np.ndarray), x * 2)[1])(1.0)
    assert seen == [True]
    with pytest.raises(AttributeError):
        ad.no_such_name


def test_holomorphic_grad_and_reverse_mode_jvp():
    # autograd: holomorphic_grad(lambda z: z**3)(1+2j) == 3 z**2 == (-9+12j)
    assert complex(holomorphic_grad(lambda z: z ** 3)(np.complex128(1 + 2j))) == pytest.approx(-9 + 12j)
    assert complex(ad.holomorphic_grad(lambda z: anp.exp(z))(np.complex128(0.5j))) == pytest.approx(np.exp(0.5j))
    A = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]])
    jvp = make_jvp_reversemode(lambda x: anp.tanh(A @ x))(np.array([0.2, -0.1]))
    v = np.array([1.0, 2.0])
    exact = (1 - np.tanh(A @ [0.2, -0.1]) ** 2) * (A @ v)
    assert np.allclose(jvp(v), exact)


def test_extend_names():
    assert extend.Box is ad.core.Tracer
    seen = []
    ad.grad(lambda x: (seen.append(isinstance(x, extend.Box)), x * x)[1])(3.0)
    assert seen == [True] and not isinstance(3.0, extend.Box)
    mul = extend.primitive(lambda x, y: x * y)
    calls = []

    def jvp_all(argnums, gs, ans, args, kwargs):
        calls.append(argnums)
        return sum(g * args[1 - i] for i, g in zip(argnums, gs))
    extend.defjvp_argnums(mul, jvp_all)
    _, t = ad.jvp(lambda x: mul(x, 3.0), (2.0,), (1.0,))
    assert float(t) == 3.0 and calls
    argmax = extend.notrace_primitive(np.argmax)
    g = ad.grad(lambda x: x[argmax(x)] ** 2)(np.array([1.0, 5.0, 2.0]))
    assert g.tolist() == [0.0, 10.0, 0.0]
    assert extend.register_notrace(object, argmax) is argmax
    # autograd: vspace(np.zeros((2, 3))).shape, .size, .ndim -> (2, 3), 6, 2
    vs = extend.vspace(np.zeros((2, 3)))
    assert (vs.shape, vs.size, vs.ndim) == ((2, 3), 6, 2) and vs.dtype == np.float64
    basis = list(vs.standard_basis())
    assert len(basis) == 6 and np.array_equal(sum(basis), np.ones((2, 3)))
    assert vs.inner_prod(np.ones((2, 3)), np.full((2, 3), 2.0)) == 12.0
    assert vs == extend.vspace(np.ones((2, 3))) and not vs == extend.vspace(np.ones(6))
    tree_vs = extend.vspace((np.ones(2), 3.0))
    assert tree_vs.size == 3 and tree_vs.zeros()[0].tolist() == [0.0, 0.0]
    assert extend.vspace(np.array([1j])).iscomplex


def test_wrap_util():
    @wrap_util.unary_to_nary
    def second(fun, x):
        return ad.grad(ad.grad(fun))(x)
    f = lambda a, b: a ** 3 * b
    assert float(second(f, argnum=1)(2.0, 5.0)) == 0.0
    assert float(second(f)(2.0, 5.0)) == 60.0                    # 6 a b
    assert second(f).__name__ == "second_of_<lambda>_wrt_argnum_0"
    assert wrap_util.get_name(f) == "<lambda>" and wrap_util.get_doc(f) == ""


def test_test_util_and_const_graph():
    assert test_util.scalar_close(1.0, 1.0 + 1e-9) and not test_util.scalar_close(1.0, 1.01)
    test_util.check_equivalent((np.ones(2), {"a": 1.0}), (np.ones(2), {"a": 1.0 + 1e-9}))
    with pytest.raises(AssertionError):
        test_util.check_equivalent(np.ones(2), np.zeros(2))
    jvp = test_util.make_numerical_jvp(lambda t: anp.sin(t), np.array([0.3, 1.0]))
    assert np.allclose(jvp(np.array([1.0, 2.0])), np.cos([0.3, 1.0]) * [1.0, 2.0], atol=1e-8)
    test_util.combo_check(lambda x, y: x * anp.sin(y), [0, 1], modes=["fwd", "rev"], order=2)(
        [1.0, -2.0], [0.3])
    with pytest.raises(AssertionError):
        bad = extend.primitive(lambda x: x ** 2)
        extend.defvjp(bad, lambda ans, x: lambda g: g * 3.0 * x)      # wrong: 3x, not 2x
        test_util.combo_check(bad, [0], modes=["rev"], order=1)([1.5])
    f = const_graph(lambda x, a: x * a, a=3.0)
    assert np.array_equal(f(np.ones(2)), [3.0, 3.0])
