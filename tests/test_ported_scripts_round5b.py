"""Regressions from porting published autograd research code by changing imports only
(round 5b): SurPyval's survival fitters (``surpyval/utils/autograd_gamma_compat.py``:
``@primitive`` bodies that call scipy, VJP rules that use ``autograd.tracer.getval``,
``jacobian`` of the scalar negative log-likelihood as scipy's ``jac``, ``hessian`` for
the covariance) and ssm's ``stats.py`` (``np.broadcast(a, b).shape``)."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.extend import primitive, defvjp
from autodiff.tracer import getval

sc = pytest.importorskip("scipy.special")

A = 1.7
X = np.array([0.5, 2.0, 3.5])


def _fd(f, x, h=1e-6):
    x = np.asarray(x, float)
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


# SurPyval's pattern: the body is scipy on plain values, d/da is numerical on getval'd
# values, d/dx is written with autodiff.numpy.
@primitive
def gammainccln(a, x):
    return np.log(np.clip(sc.gammaincc(a, x), 1e-35, np.inf))


def _da(ans, a, x):
    def vjp(g):
        h = 1e-5
        d = (np.log(sc.gammaincc(getval(a) + h, getval(x)))
             - np.log(sc.gammaincc(getval(a) - h, getval(x)))) / (2 * h)
        return (getval(g) * d).sum()
    return vjp


defvjp(gammainccln, _da,
       lambda ans, a, x: lambda g: g * -anp.exp(-x + anp.log(x) * (a - 1)
                                                - sc.gammaln(a) - ans))


def _efd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def _ref(a, x):
    return np.log(sc.gammaincc(a, x))


def test_getval_gives_plain_values_under_grad_and_a_constant_under_jit():
    seen = []

    def f(x):
        seen.append(type(getval(x)))
        return x * sc.erfcx(getval(x))          # scipy on the value: a constant factor
    assert float(ad.grad(f)(1.0)) == pytest.approx(sc.erfcx(1.0), rel=1e-14)
    assert seen[-1] is np.float64
    assert getval(2.5) == 2.5
    assert float(ad.jit(ad.grad(lambda x: getval(x) * x))(3.0)) == 3.0


def test_primitive_with_a_scipy_body_under_grad_jacobian_and_hessian():
    def nll(p):
        return -anp.sum(gammainccln(p[0], p[1] * X))
    p = np.array([A, 1.3])
    ref = lambda p: -np.sum(_ref(p[0], p[1] * X))
    assert float(nll(p)) == pytest.approx(ref(p), rel=1e-14)
    g = ad.grad(nll)(p)
    np.testing.assert_allclose(g, _fd(ref, p), rtol=1e-6)
    # scipy's jac=jacobian(f) for a scalar f: one cotangent, on values
    np.testing.assert_allclose(ad.jacobian(nll)(p), g, rtol=1e-12)
    np.testing.assert_allclose(ad.jacrev(nll)(p), g, rtol=1e-12)
    # elementwise: the x-rule, exact
    ex = ad.elementwise_grad(lambda x: gammainccln(A, x))(X)
    np.testing.assert_allclose(ex, _efd(lambda x: _ref(A, x), X), rtol=1e-7)
    # hessian (forward over reverse): the forward derivative from the VJP rules
    H = ad.hessian(lambda x: anp.sum(gammainccln(A, x) ** 2))(X)
    d1 = _efd(lambda x: _ref(A, x), X)
    Hfd = _efd(lambda x: 2 * _ref(A, x) * _efd(lambda y: _ref(A, y), x), X, 1e-4)
    np.testing.assert_allclose(Hfd, 2 * d1 ** 2 + 2 * _ref(A, X) * _efd(
        lambda y: _efd(lambda z: _ref(A, z), y), X, 1e-4), rtol=1e-4)
    np.testing.assert_allclose(np.diag(H), Hfd, rtol=1e-4)
    assert np.count_nonzero(H - np.diag(np.diag(H))) == 0
    t = np.array([1.0, -2.0, 0.5])
    _, jv = ad.jvp(lambda x: gammainccln(A, x), (X,), (t,))
    np.testing.assert_allclose(jv, d1 * t, rtol=1e-7)
    # a body written with autodiff.numpy is still traced (its hessian is the body's own)
    _check_traced_body()


def test_primitive_with_a_scipy_body_says_so_under_jit():
    with pytest.raises(NotImplementedError, match="gammainccln.*under jit"):
        ad.jit(ad.grad(lambda x: anp.sum(gammainccln(A, x))))(X)


def _check_traced_body():
    @primitive
    def lse(x):
        m = anp.max(x)
        return m + anp.log(anp.sum(anp.exp(x - m)))
    defvjp(lse, lambda ans, x: lambda g: g * anp.exp(x - ans))
    x = np.array([0.1, 0.5, -0.3])
    p = np.exp(x) / np.exp(x).sum()
    np.testing.assert_allclose(ad.hessian(lse)(x), np.diag(p) - np.outer(p, p), rtol=1e-12)
    np.testing.assert_allclose(ad.jit(ad.grad(lse))(x), p, rtol=1e-12)


def test_broadcast_shape_of_traced_values():
    b = anp.broadcast(np.ones((3, 1)), np.ones(4))
    assert b.shape == (3, 4) and b.ndim == 2
    seen = []

    def f(mu):
        br = anp.broadcast(np.ones((5, 1, 2)), mu)
        seen.append((br.shape, br.nd, br.size, br.numiter))
        return anp.sum(anp.broadcast_to(mu, br.shape) ** 2)
    mu = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_allclose(ad.grad(f)(mu), 10 * mu)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(mu), 10 * mu)
    assert seen[0] == ((5, 3, 2), 3, 30, 2)
