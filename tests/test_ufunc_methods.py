"""numpy's ufunc methods on ``autodiff.numpy``'s ufuncs (JAX's ``jnp.ufunc``): ``outer``,
``reduce``, ``accumulate``, ``at``, ``reduceat``, the ``nin``/``nout``/``identity``
attributes and ``anp.frompyfunc``. Values against numpy's methods, eagerly and traced
(``ad.jit(f, backend="interpret")``), gradients by ``ad.check_grads``, one real ``ad.jit``.
"""

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import UnsupportedError


def traced(f):
    return ad.jit(f, backend="interpret")


def close(got, want, tol=1e-12):
    np.testing.assert_allclose(np.asarray(got, dtype=np.asarray(want).dtype), want,
                               rtol=tol, atol=tol)


def both(f, *args):
    """``f(*args)`` eagerly and traced, the two checked equal; the eager value."""
    e = f(*args)
    close(traced(f)(*args), e)
    return e


X = np.array([[0.5, -1.25, 2.0, 0.75], [1.5, 0.25, -0.5, 3.0], [-2.0, 1.0, 0.125, 0.5]])


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum",
                                  "logaddexp", "logaddexp2", "hypot", "arctan2", "fmax"])
def test_attributes_and_outer(name):
    npu, adu = getattr(np, name), getattr(anp, name)
    assert (adu.nin, adu.nout, adu.nargs, adu.identity) == (npu.nin, npu.nout, npu.nargs,
                                                             npu.identity)
    close(both(adu.outer, X[0], X[:, 1]), npu.outer(X[0], X[:, 1]))
    close(both(adu.outer, X, X[1]), npu.outer(X, X[1]))
    ad.check_grads(lambda a, b: adu.outer(a, b), (X[0], X[:, 1] + 3.0), order=1)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logaddexp",
                                  "subtract", "hypot", "logaddexp2"])
@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": None}, {"axis": (0, 1)},
                                {"axis": 0, "keepdims": True},
                                {"axis": 1, "initial": 0.5},
                                {"axis": 0, "where": X > 0, "initial": 0.25}])
def test_reduce(name, kw):
    npu, adu = getattr(np, name), getattr(anp, name)
    if name in ("subtract",) and (kw.get("axis", 0) is None or isinstance(kw.get("axis"),
                                                                           tuple)):
        with pytest.raises(ValueError):
            traced(lambda x: adu.reduce(x, **kw))(X)
        return
    want = npu.reduce(X, **kw)
    close(both(lambda x: adu.reduce(x, **kw), X), want, 1e-12)
    if name not in ("maximum", "minimum"):        # smooth there (maximum's ties: none)
        ad.check_grads(lambda x: adu.reduce(x, **kw), (X,), order=1)


def test_reduce_generic_and_bool_int():
    b = X > 0
    for name in ("logical_and", "logical_or", "logical_xor"):
        close(both(lambda x: getattr(anp, name).reduce(x, axis=1), b),
              getattr(np, name).reduce(b, axis=1))
    i = np.array([[6, 3, 12], [5, 9, 1]])
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "add"):
        close(both(lambda x: getattr(anp, name).reduce(x, axis=0), i),
              getattr(np, name).reduce(i, axis=0))
    close(both(lambda x: anp.add.reduce(x, dtype=np.float32), i), np.add.reduce(i,
                                                                               dtype=np.float32))
    # empty axes: the identity, or numpy's error without one
    e = np.zeros((0, 3))
    close(both(lambda x: anp.logaddexp.reduce(x, axis=0), e), np.logaddexp.reduce(e, axis=0))
    with pytest.raises(ValueError, match="identity"):
        traced(lambda x: anp.arctan2.reduce(np.zeros((0, 2)) + x))(0.0)
    with pytest.raises(ValueError, match="identity"):
        traced(lambda x: anp.arctan2.reduce(x, where=X > 0))(X)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logaddexp",
                                  "subtract", "hypot", "fmin"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_accumulate(name, axis):
    npu, adu = getattr(np, name), getattr(anp, name)
    close(both(lambda x: adu.accumulate(x, axis=axis), X), npu.accumulate(X, axis=axis),
          1e-12)
    if name not in ("maximum", "minimum", "fmin"):
        ad.check_grads(lambda x: adu.accumulate(x, axis=axis), (X,), order=1)
    x7 = np.linspace(-1, 1, 7) ** 2
    close(both(adu.accumulate, x7), npu.accumulate(x7))
    close(both(lambda x: adu.accumulate(x, dtype=np.float64), np.arange(5)),
          npu.accumulate(np.arange(5), dtype=np.float64))


def _np_at(npu, a, *rest):
    a = np.array(a)
    npu.at(a, *rest)
    return a


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "subtract",
                                  "logaddexp", "power", "negative", "sin", "square"])
def test_at(name):
    npu, adu = getattr(np, name), getattr(anp, name)
    a = np.abs(X.ravel()) + 0.5
    cases = [(np.array([0, 2, 0, 5, 0]),), (np.array([[1, 1], [3, -1]]),), (slice(1, 4),),
             (3,)]
    for (idx,) in cases:
        rest = () if npu.nin == 1 else (np.linspace(0.5, 1.5, np.size(a[idx])).reshape(
            np.shape(a[idx])),)
        want = _np_at(npu, a, idx, *rest)
        close(adu.at(a, idx, *rest), want)
        close(traced(lambda x: adu.at(x, idx, *rest))(a), want)
        ad.check_grads(lambda x: adu.at(x, idx, *rest), (a,), order=1)
    # traced indices, repeated: applied in turn
    idx = np.array([4, 1, 4, 4])
    rest = () if npu.nin == 1 else (np.array([1.5, 0.5, 0.75, 1.25]),)
    close(traced(lambda x, i: adu.at(x, i, *rest))(a, idx), _np_at(npu, a, idx, *rest))
    # 2-d with a tuple index
    m = np.abs(X) + 0.5
    idx2 = (np.array([0, 0, 2]), np.array([1, 1, 3]))
    rest = () if npu.nin == 1 else (2.0,)
    close(both(lambda x: adu.at(x, idx2, *rest), m), _np_at(npu, m, idx2, *rest))
    assert np.array_equal(a, np.abs(X.ravel()) + 0.5)         # never in place


def test_at_errors():
    with pytest.raises(UnsupportedError, match="inplace"):
        anp.add.at(np.zeros(3), 0, 1.0, inplace=True)
    with pytest.raises(ValueError):
        traced(lambda x: anp.add.at(x, 0))(np.zeros(3))
    with pytest.raises(ValueError):
        traced(lambda x: anp.negative.at(x, 0, 1.0))(np.zeros(3))
    with pytest.raises(ValueError, match="binary"):
        anp.negative.outer(np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="binary"):
        anp.exp.reduce(np.zeros(2))


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "subtract",
                                  "logaddexp"])
@pytest.mark.parametrize("idx,axis", [([0, 2, 2, 3], 1), ([1, 0, 2], 0), ([3], -1),
                                      ([0, 1, 2, 3], 1)])
def test_reduceat(name, idx, axis):
    npu, adu = getattr(np, name), getattr(anp, name)
    close(both(lambda x: adu.reduceat(x, idx, axis=axis), X), npu.reduceat(X, idx, axis=axis))
    ad.check_grads(lambda x: adu.reduceat(x, idx, axis=axis), (X + 0.01 * np.arange(12)
                                                                .reshape(3, 4),), order=1)


def test_reduceat_errors():
    with pytest.raises(IndexError):
        traced(lambda x: anp.add.reduceat(x, [0, 9]))(np.arange(4.0))
    with pytest.raises(UnsupportedError, match="concrete"):
        traced(lambda x, i: anp.add.reduceat(x, i))(np.arange(4.0), np.array([0, 2]))
    with pytest.raises(TypeError, match="out="):
        traced(lambda x: anp.add.reduce(x, out=np.zeros(())))(np.arange(4.0))


def _sub(x, y):
    return x - y


def _muladd(x, y):
    return x * y + 1.0


@pytest.mark.parametrize("func,identity", [(_sub, None), (_muladd, None),
                                           (lambda x, y: x + y, 0.0)])
def test_frompyfunc(func, identity):
    uf = anp.frompyfunc(func, nin=2, nout=1, identity=identity)
    ref = np.frompyfunc(func, 2, 1, identity=identity)
    assert (uf.nin, uf.nout, uf.nargs, uf.identity) == (2, 1, 3, identity)
    a, b = X[0], X[1]
    f64 = lambda v: np.asarray(v, dtype=float)  # noqa: E731
    close(both(uf, a, b), f64(ref(a, b)))
    close(both(uf.outer, a, b), f64(ref.outer(a, b)))
    close(both(lambda x: uf.reduce(x, axis=1), X), f64(ref.reduce(X, axis=1)))
    close(both(lambda x: uf.accumulate(x, axis=0), X), f64(ref.accumulate(X, axis=0)))
    close(both(lambda x: uf.reduceat(x, [0, 2], axis=1), X),
          f64(ref.reduceat(X, [0, 2], axis=1)))
    idx = np.array([0, 0, 3])
    want = np.array(a, dtype=object)
    ref.at(want, idx, 2.0)
    close(both(lambda x: uf.at(x, idx, 2.0), a), f64(want))
    ad.check_grads(lambda x, y: uf(x, y), (a, b), order=2)
    ad.check_grads(lambda x: uf.reduce(x, axis=0), (X,), order=1)
    if identity is not None:
        close(uf.reduce(np.zeros((0, 2))), np.zeros(2))
    with pytest.raises(UnsupportedError):
        anp.frompyfunc(func, 2, 2)


def test_vmap_and_real_jit():
    f = lambda x: anp.subtract.accumulate(anp.multiply.outer(x, x), axis=1)  # noqa: E731
    want = np.subtract.accumulate(np.multiply.outer(X[0], X[0]), axis=1)
    close(ad.jit(f)(X[0]), want)
    close(ad.vmap(f)(X), np.stack([f(r) for r in X]))
    g = lambda x: anp.maximum.reduce(x, axis=1) + anp.add.at(x, (0, 1), 2.0).sum()  # noqa
    close(ad.vmap(g)(np.stack([X, 2 * X])), np.stack([g(X), g(2 * X)]))


def test_plain_call_is_the_same_function():
    """The methods are attributes of the same function objects (no wrapper class, so a
    plain ``anp.add(x, y)`` call runs exactly the code it ran before)."""
    import types
    for f in (anp.add, anp.subtract, anp.maximum, anp.logical_and, anp.sin):
        assert type(f) is types.FunctionType and callable(f.reduce) and callable(f.outer)
    np.testing.assert_array_equal(anp.add(np.arange(3.0), 1.0), [1.0, 2.0, 3.0])


def test_numpy_ufunc_methods_on_traced_values():
    """numpy's own ``np.add.reduce`` & co. called on a traced value run autodiff.numpy's
    methods; ``np.add.at`` (in place) is refused naming the fix."""
    f = lambda x: (np.add.reduce(x * x, axis=0) + np.subtract.outer(x, x).sum()  # noqa
                   + np.maximum.accumulate(x)[-1] + np.add.reduceat(x, [0, 2])[1])
    x = np.array([0.5, -1.0, 2.0])
    close(traced(f)(x), f(x))
    close(ad.grad(f)(x), 2 * x + np.array([0.0, 0.0, 2.0]))
    with pytest.raises(UnsupportedError, match=r"anp|autodiff.numpy.add.at"):
        ad.grad(lambda x: np.add.at(x, 0, 1.0))(x)
