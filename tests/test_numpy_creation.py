"""Creation functions inside transforms: ``.at[]`` on a fresh array, traced fill values,
traced range bounds, and the errors when a shape would depend on a traced value."""
import pickle

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import ConcretizationError
from autodiff.numpy._creation import FreshArray

X = np.array([0.5, -1.0, 2.0])


def scatter_into_zeros(x):
    # y = (x1·x2, 0, x0²): a fresh array updated in place functionally
    return anp.zeros(3).at[0].set(x[1] * x[2]).at[2].add(x[0] ** 2)


def scatter_want(x):
    return np.array([x[1] * x[2], 0.0, x[0] ** 2])


def scatter_jac(x):
    return np.array([[0.0, x[2], x[1]], [0.0, 0.0, 0.0], [2 * x[0], 0.0, 0.0]])


JIT_SCATTER = ad.jit(scatter_into_zeros)


def test_at_on_a_fresh_zeros_under_jit_grad_vmap():
    np.testing.assert_allclose(JIT_SCATTER(X), scatter_want(X), rtol=1e-12)
    np.testing.assert_allclose(ad.jacrev(scatter_into_zeros)(X), scatter_jac(X), rtol=1e-12)
    np.testing.assert_allclose(ad.jacfwd(scatter_into_zeros)(X), scatter_jac(X), rtol=1e-12)
    np.testing.assert_allclose(ad.jit(ad.jacrev(scatter_into_zeros))(X), scatter_jac(X),
                               rtol=1e-12)
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(ad.vmap(scatter_into_zeros)(xs),
                               np.stack([scatter_want(X), scatter_want(2 * X)]), rtol=1e-12)
    # the interpreter path of jit (first call) agrees with the compiled kernel
    np.testing.assert_allclose(ad.jit(scatter_into_zeros, backend="interpret")(X),
                               scatter_want(X), rtol=1e-12)


@pytest.mark.parametrize("make, want", [
    (lambda s: anp.eye(3).at[0, 2].set(s), lambda s: np.eye(3) + s * np.eye(3)[0][:, None] * np.eye(3)[2]),
    (lambda s: anp.identity(2).at[1, 1].multiply(s), lambda s: np.diag([1.0, s])),
    (lambda s: anp.ones((2, 2)).at[:, 0].add(s), lambda s: np.array([[1 + s, 1.0], [1 + s, 1.0]])),
    (lambda s: anp.empty(3).at[:].set(s), lambda s: np.full(3, s)),
    (lambda s: anp.zeros_like(X).at[1].set(s), lambda s: np.array([0.0, s, 0.0])),
    (lambda s: anp.ones_like(X).at[2].max(s), lambda s: np.array([1.0, 1.0, max(1.0, s)])),
    (lambda s: anp.array([1.0, 2.0]).at[0].set(s), lambda s: np.array([s, 2.0])),
    (lambda s: anp.linspace(0.0, 1.0, 3).at[1].add(s), lambda s: np.array([0.0, 0.5 + s, 1.0])),
    (lambda s: anp.arange(3.0).at[0].min(s), lambda s: np.array([min(0.0, s), 1.0, 2.0])),
])
def test_fresh_arrays_of_every_creation_function(make, want):
    s = 3.0
    np.testing.assert_allclose(ad.jit(make)(s), want(s), rtol=1e-12)
    # derivative of the sum with respect to the traced update value, by finite differences
    got = ad.grad(lambda s: anp.sum(make(s) ** 2))(s)
    eps = 1e-6
    fd = (np.sum(want(s + eps) ** 2) - np.sum(want(s - eps) ** 2)) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-6)


def test_full_and_full_like_with_a_traced_fill_value():
    w = np.array([1.0, 2.0, 4.0])
    f = lambda s: anp.sum(anp.full((3,), s) * w)                  # d/ds = Σw = 7
    np.testing.assert_allclose(ad.jit(f)(2.0), 14.0)
    np.testing.assert_allclose(ad.grad(f)(2.0), 7.0)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(2.0), 7.0)
    out = ad.jit(lambda s: anp.full((2, 2), s, dtype=np.float32))(1.5)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.full((2, 2), 1.5, np.float32))
    # an array fill value broadcasts, as in numpy
    np.testing.assert_allclose(ad.jit(lambda v: anp.full((2, 3), v))(X), np.full((2, 3), X))
    g = lambda s: anp.sum(anp.full_like(w, s) ** 2)                # d/ds 3s² = 6s
    np.testing.assert_allclose(ad.grad(g)(0.5), 3.0)
    np.testing.assert_allclose(ad.vmap(lambda s: anp.full(2, s))(X), np.repeat(X[:, None], 2, 1))


def test_arange_with_traced_bounds_under_grad():
    # Σ_{k} (a + 0.5k) over a, a+0.5, ... < 4: with a = 1, six terms: d/da = 6
    f = lambda a: anp.sum(anp.arange(a, 4.0, 0.5))
    np.testing.assert_allclose(f(1.0), np.sum(np.arange(1.0, 4.0, 0.5)))
    np.testing.assert_allclose(ad.grad(f)(1.0), 6.0)
    # d/dstep Σ (1 + step·k) for k < n = Σk = 0+1+...+5 = 15
    np.testing.assert_allclose(ad.grad(lambda h: anp.sum(anp.arange(1.0, 4.0, h)))(0.5), 15.0)
    # the stop only sets the length: its derivative is zero
    np.testing.assert_allclose(ad.grad(lambda b: anp.sum(anp.arange(0.0, b)))(3.0), 0.0)


def test_traced_shapes_raise_concretization_errors_naming_the_line():
    with pytest.raises(ConcretizationError, match=r"anp.arange: its 'stop'") as e:
        ad.jit(lambda n: anp.arange(n))(3)
    assert "test_numpy_creation.py" in str(e.value)
    with pytest.raises(ConcretizationError, match=r"anp.arange: its 'start'"):
        ad.jit(lambda a: anp.arange(a, 4.0))(1.0)
    with pytest.raises(ConcretizationError, match=r"anp.zeros: the shape must be concrete"):
        ad.jit(lambda n: anp.zeros(n))(3)
    with pytest.raises(ConcretizationError, match=r"anp.full: the shape"):
        ad.jit(lambda n: anp.full((n, 2), 1.0))(3)
    with pytest.raises(ConcretizationError, match=r"anp.eye: N"):
        ad.jit(lambda n: anp.eye(n))(3)
    # static arguments are the fix the message names
    np.testing.assert_array_equal(ad.jit(lambda n: anp.arange(n), static_argnums=0)(3),
                                  np.arange(3))


def test_outside_transforms_results_are_numpys_own():
    for got, want in [(anp.zeros(3), np.zeros(3)), (anp.ones((2, 1), np.float32),
                                                    np.ones((2, 1), np.float32)),
                      (anp.full(2, 7), np.full(2, 7)), (anp.eye(2, 3, 1), np.eye(2, 3, 1)),
                      (anp.arange(1, 7, 2), np.arange(1, 7, 2)), (anp.identity(2), np.identity(2)),
                      (anp.array([1, 2]), np.array([1, 2])), (anp.linspace(0, 1, 4),
                                                              np.linspace(0, 1, 4))]:
        assert type(got) is np.ndarray and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    # a plain ndarray has no .at; anp.at(x) is the spelling that works on any array
    with pytest.raises(AttributeError, match="'at'"):
        anp.zeros(3).at
    np.testing.assert_array_equal(anp.at(anp.zeros(3))[1].set(5.0), [0.0, 5.0, 0.0])


def test_fresh_arrays_behave_as_numpy_and_do_not_spread():
    seen = {}

    def f(s):
        z = anp.zeros(3)
        seen["type"] = type(z)
        seen["sum"] = type(z + 1.0), type(np.sum(z)), type(z[1:]), type(np.concatenate([z, z]))
        seen["pickle"] = type(pickle.loads(pickle.dumps(z)))
        return z.at[0].set(s)
    ad.jit(f)(1.0)
    assert seen["type"] is FreshArray and issubclass(FreshArray, np.ndarray)
    assert seen["sum"][0] is np.ndarray and seen["sum"][2] is np.ndarray
    assert seen["sum"][3] is np.ndarray and seen["pickle"] is np.ndarray
    # indexing a fresh array by a traced index records a gather
    np.testing.assert_allclose(ad.jit(lambda i: anp.arange(5.0)[i] * 2)(3), 6.0)


def test_linspace_with_a_traced_end_point():
    # linspace(0, s, 5) = s·(0, 1/4, 1/2, 3/4, 1): Σ y² = s²·(0 + 1 + 4 + 9 + 16)/16
    f = lambda s: anp.sum(anp.linspace(0.0, s, 5) ** 2)
    np.testing.assert_allclose(ad.jit(lambda s: anp.linspace(0.0, s, 5))(2.0),
                               np.linspace(0.0, 2.0, 5), rtol=1e-15)
    np.testing.assert_allclose(ad.grad(f)(2.0), 2 * 2.0 * 30 / 16, rtol=1e-13)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(2.0), 2 * 2.0 * 30 / 16, rtol=1e-13)
    # the traced result has .at too (it is a tracer)
    np.testing.assert_allclose(ad.jit(lambda s: anp.linspace(0.0, s, 3).at[0].set(-s))(2.0),
                               [-2.0, 1.0, 2.0], rtol=1e-15)


def test_a_fresh_array_returned_as_is_comes_back_a_plain_ndarray():
    # convention 2: results are numpy values, also when the output is the creation itself
    g = ad.jit(lambda s: anp.zeros(3))
    for s in (1.0, 2.0):                       # the interpreted call, then the kernel
        out = g(s)
        assert type(out) is np.ndarray and np.array_equal(out, np.zeros(3))
    assert type(ad.vmap(lambda s: anp.ones(2))(np.ones(3))) is np.ndarray
    assert type(ad.jvp(lambda s: anp.ones(2), (1.0,), (1.0,))[0]) is np.ndarray
