"""Regressions found by porting autograd's own examples (HIPS/autograd ``examples/``) and
PyTorch-style tape code by changing imports only: names autograd's ``scipy.special``,
``scipy.stats.multivariate_normal`` and ``numpy`` offer that were missing here."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import UnsupportedError
from autodiff.scipy import special

scipy_special = pytest.importorskip("scipy.special")
scipy_stats = pytest.importorskip("scipy.stats")

X = np.array([0.7, 1.3, 2.9])


def _fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


BESSEL = [   # (ours, scipy's)
    ("j0", lambda z: special.j0(z), lambda z: scipy_special.j0(z)),
    ("j1", lambda z: special.j1(z), lambda z: scipy_special.j1(z)),
    ("y0", lambda z: special.y0(z), lambda z: scipy_special.y0(z)),
    ("y1", lambda z: special.y1(z), lambda z: scipy_special.y1(z)),
    ("jn", lambda z: special.jn(2, z), lambda z: scipy_special.jn(2, z)),
    ("yn", lambda z: special.yn(3, z), lambda z: scipy_special.yn(3, z)),
    ("iv", lambda z: special.iv(1.5, z), lambda z: scipy_special.iv(1.5, z)),
    ("ive", lambda z: special.ive(0.5, z), lambda z: scipy_special.ive(0.5, z)),
    ("ive_negative", lambda z: special.ive(1, -z), lambda z: scipy_special.ive(1, -z)),
]


@pytest.mark.parametrize("name,f,ref", BESSEL, ids=[b[0] for b in BESSEL])
def test_bessel_functions_autograd_wraps(name, f, ref):
    np.testing.assert_allclose(f(X), ref(X), rtol=1e-13)
    g = ad.elementwise_grad(f)
    np.testing.assert_allclose(g(X), _fd(ref, X), rtol=1e-7, atol=1e-9)
    # second derivative through the recurrence, and the host call inside jit
    np.testing.assert_allclose(ad.elementwise_grad(g)(X), _fd(lambda q: np.asarray(g(q)), X),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ad.jit(g)(X), g(X), rtol=1e-14)


def test_bessel_order_is_not_differentiated_silently():
    jn = special.jn
    with pytest.raises(UnsupportedError, match="order"):
        ad.grad(lambda v: jn(v, 1.0))(1.0)
    np.testing.assert_allclose(ad.vmap(lambda z: jn(1, z))(X), scipy_special.jn(1, X))


def test_rgamma():
    rgamma = special.rgamma
    x = np.array([-100.3, -20.5, -2.7, -2.5, -0.5, 0.3, 0.5, 1.7, 4.0, 30.0, 171.5, 200.0])
    np.testing.assert_allclose(rgamma(x), scipy_special.rgamma(x), rtol=1e-12, atol=1e-320)
    np.testing.assert_allclose(ad.jit(rgamma)(x), scipy_special.rgamma(x), rtol=1e-12,
                               atol=1e-320)
    np.testing.assert_allclose(ad.elementwise_grad(rgamma)(x), _fd(scipy_special.rgamma, x),
                               rtol=1e-7, atol=1e-300)
    np.testing.assert_array_equal(rgamma(np.array([-3.0, -2.0, 0.0])), [0.0, 0.0, 0.0])
    # at its zeros (Γ's poles) 1/Γ is smooth: d/dx = (-1)^n n! at -n (it was 0, a wrong
    # derivative), and the second derivative agrees with central differences
    poles = np.array([-3.0, -2.0, -1.0, 0.0])
    np.testing.assert_allclose(ad.elementwise_grad(rgamma)(poles), [-6.0, 2.0, -1.0, 1.0],
                               rtol=1e-12)
    e = 1e-4
    fd2 = (scipy_special.rgamma(poles + e) - 2 * scipy_special.rgamma(poles)
           + scipy_special.rgamma(poles - e)) / e ** 2
    np.testing.assert_allclose(ad.elementwise_grad(ad.elementwise_grad(rgamma))(poles), fd2,
                               rtol=1e-6)


def test_multivariate_normal_entropy():
    mvn = ad.scipy.stats.multivariate_normal
    rs = np.random.RandomState(0)
    a = rs.randn(3, 3)
    cov = a @ a.T + np.eye(3)
    mu = np.zeros(3)
    np.testing.assert_allclose(ad.scipy.stats.multivariate_normal.entropy(mu, cov),
                               scipy_stats.multivariate_normal.entropy(mu, cov), rtol=1e-13)
    var = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(mvn.entropy(mu, var),
                               scipy_stats.multivariate_normal.entropy(mu, np.diag(var)))
    # autograd's gradient: Σ⁻ᵀ/2 in every entry (not a triangle)
    np.testing.assert_allclose(ad.grad(lambda c: mvn.entropy(mu, c))(cov),
                               0.5 * np.linalg.inv(cov), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(lambda v: mvn.entropy(mu, v))(var), 0.5 / var)


def test_numpy_scalar_types_and_helpers_autograd_numpy_offers(tmp_path):
    for name in ["intp", "intc", "long", "half", "str_", "ndindex", "ndenumerate", "loadtxt",
                 "savetxt", "genfromtxt", "min_scalar_type"]:
        assert getattr(anp, name) is getattr(np, name)
    path = tmp_path / "d.txt"
    anp.savetxt(path, np.arange(6.0).reshape(2, 3))
    data = anp.loadtxt(path)
    np.testing.assert_array_equal(ad.grad(lambda w: anp.sum(anp.dot(data, w)))(np.ones(3)),
                                  [3.0, 5.0, 7.0])
    assert list(anp.ndindex(2, 1)) == [(0, 0), (1, 0)]
    assert anp.zeros(2, dtype=anp.intp).dtype == np.intp


def test_tracer_node_and_trace_as_autograd_print_trace_uses():
    from autodiff.tracer import Node, trace

    class Record(Node):
        def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
            self.value, self.name, self.args = value, fun.__name__, args
            self.parents = dict(zip(parent_argnums, parents))
            self.fun = fun

        def initialize_root(self, x):
            self.value, self.name, self.parents = x, "input", {}

    def f(x):
        y = anp.sin(x + x)
        if y > 0:                      # Python control flow on a traced value
            return y * 3.0
        return y

    root = Record.new_root(1.0)
    value, node = trace(root, f, 1.0)
    assert value == pytest.approx(3 * np.sin(2.0), rel=1e-15)
    assert node.name == "mul" and node.parents[0].name == "sin"
    assert node.parents[0].parents[0].name == "add"
    assert node.parents[0].parents[0].parents[0] is root
    assert node.fun(*node.args) == pytest.approx(value)    # fun applies the operation
    # through grad: the recorded end value is the derivative
    value, node = trace(Record.new_root(0.3), ad.grad(lambda x: anp.sin(x) * x), 0.3)
    assert value == pytest.approx(np.cos(0.3) * 0.3 + np.sin(0.3), rel=1e-14)
    with pytest.warns(UserWarning, match="independent"):
        assert trace(Record.new_root(1.0), lambda x: 2.0, 1.0)[1] is None


def test_numpy_conversions_autograd_numpy_passes_through():
    # anp.ascontiguousarray & co. raised AttributeError; numpy's own on numpy input, the
    # traced value (cast) inside transforms, with its derivative
    x = np.arange(6.0).reshape(2, 3).T
    for name in ("asanyarray", "ascontiguousarray", "asfortranarray", "require",
                 "asarray_chkfinite"):
        f = getattr(anp, name)
        np.testing.assert_array_equal(f(x), getattr(np, name)(x))
        g = ad.grad(lambda v: anp.sum(f(v, np.float64) ** 2))(x)
        np.testing.assert_allclose(g, 2 * x)
        np.testing.assert_allclose(ad.jit(lambda v: f(v) * 3.0)(x), 3 * x)
    assert anp.ascontiguousarray(x).flags.c_contiguous
    assert anp.asanyarray(np.matrix([[1.0]])).__class__ is np.matrix      # numpy's own
    assert anp.require(x, requirements="C").flags.c_contiguous
    assert anp.asfortranarray(x.T).flags.f_contiguous
    with pytest.raises(ValueError, match="infs or NaNs"):
        ad.grad(lambda v: anp.sum(anp.asarray_chkfinite(v * np.inf)))(np.ones(2))
    d = np.zeros(3)
    anp.copyto(d, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(d, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="immutable"):
        ad.jit(lambda v: anp.copyto(v, 1.0))(np.ones(2))


def test_solve_banded_matches_scipy_with_gradients():
    import scipy.linalg as scipy_linalg
    import autodiff.scipy.linalg as SL
    solve_banded = SL.solve_banded
    rng = np.random.default_rng(0)
    for n, lo, up in ((6, 2, 1), (5, 0, 2), (4, 1, 0)):
        ab = rng.uniform(0.5, 1.5, (lo + up + 1, n))
        ab[up] += 4.0                                     # diagonally dominant
        b = rng.normal(size=(n, 2))
        want = scipy_linalg.solve_banded((lo, up), ab, b)
        np.testing.assert_allclose(solve_banded((lo, up), ab, b), want, rtol=1e-12)
        np.testing.assert_allclose(ad.jit(lambda a, v: solve_banded((lo, up), a, v))(ab, b),
                                   want, rtol=1e-12)
        loss = lambda a: np.sum(scipy_linalg.solve_banded((lo, up), a, b[:, 0]) ** 2)
        g = ad.grad(lambda a: anp.sum(solve_banded((lo, up), a, b[:, 0]) ** 2))(ab)
        fd = np.zeros_like(ab)
        for i in np.ndindex(ab.shape):
            d = np.zeros_like(ab)
            d[i] = 1e-6
            fd[i] = (loss(ab + d) - loss(ab - d)) / 2e-6
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="l \\+ u \\+ 1"):
        solve_banded((1, 1), np.ones((2, 3)), np.ones(3))
