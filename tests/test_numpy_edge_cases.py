"""The later additions to ``autodiff.numpy`` beyond the shared case table of
``test_numpy.py`` (which checks each against numpy eagerly, traced and concretely, and
``test_grad.py`` differentiates them): compiled by ``jit``, edge cases numpy warns about,
errors, the derivatives that are easy to state in closed form, and the functions numpy
cannot be compared with case by case (in-place ones, small helpers).
"""
import warnings

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import ConcretizationError

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4))


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
def test_jit_matches_numpy(dt):
    x = X.astype(dt)
    xn = x.copy()
    xn[0, 1] = np.nan
    k = np.array([0.25, 0.5, 0.25], dt)
    cases = [
        (lambda a: anp.pad(a, ((1, 0), (2, 3)), mode="reflect"), lambda a: np.pad(a, ((1, 0), (2, 3)), mode="reflect"), x),
        (lambda a: anp.pad(a, 1, constant_values=2.0), lambda a: np.pad(a, 1, constant_values=2.0), x),
        (lambda a: anp.nansum(a, axis=0), lambda a: np.nansum(a, axis=0), xn),
        (lambda a: anp.nanmean(a, axis=1), lambda a: np.nanmean(a, axis=1), xn),
        (lambda a: anp.nanmax(a), lambda a: np.nanmax(a), xn),
        (lambda a: anp.trapezoid(a, axis=0), lambda a: np.trapezoid(a, axis=0), x),
        (lambda a: anp.convolve(a[0], k, mode="same"), lambda a: np.convolve(a[0], k, mode="same"), x),
        (lambda a: anp.logaddexp2(a, a[0]), lambda a: np.logaddexp2(a, a[0]), x),
        (lambda a: anp.searchsorted(np.sort(X[0]).astype(dt), a), lambda a: np.searchsorted(np.sort(X[0]).astype(dt), a), x),
        (lambda a: anp.select([a > 0], [a], 0.5), lambda a: np.select([a > 0], [a], 0.5), x),
    ]
    tol = 1e-12 if dt == np.float64 else 1e-5
    for f, ref, arg in cases:
        got, want = ad.jit(f)(arg), ref(arg)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_all_nan_slices_give_nan_like_numpy():
    a = np.array([[np.nan, np.nan], [1.0, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ["nanmax", "nanmin", "nanmean"]:
            want = getattr(np, name)(a, axis=1)
            traced = ad.jit(lambda v, n=name: getattr(anp, n)(v, axis=1))(a)
            np.testing.assert_array_equal(traced, want)
    assert ad.jit(lambda v: anp.nansum(v, axis=1))(a)[0] == 0.0


def test_nan_reductions_have_zero_gradient_at_nans():
    a = np.array([1.0, np.nan, 3.0, np.nan])
    np.testing.assert_array_equal(ad.grad(anp.nansum)(a), [1.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(ad.grad(anp.nanmean)(a), [0.5, 0.0, 0.5, 0.0])
    np.testing.assert_array_equal(ad.grad(anp.nanmax)(a), [0.0, 0.0, 1.0, 0.0])


def test_convolve_gradient_is_correlation():
    # d/da Σ_k w_k (a*v)_k = correlate(w, v): check against numpy for both arguments
    a, v, w = RNG.normal(size=7), RNG.normal(size=3), RNG.normal(size=9)
    ga, gv = ad.grad(lambda a_, v_: anp.sum(w * anp.convolve(a_, v_)), argnums=(0, 1))(a, v)
    np.testing.assert_allclose(ga, np.correlate(w, v, mode="valid"), rtol=1e-12)
    np.testing.assert_allclose(gv, np.correlate(w, a, mode="valid"), rtol=1e-12)


def test_trapezoid_integrates_and_differentiates():
    x = np.linspace(0, np.pi, 201)
    assert abs(anp.trapezoid(np.sin(x), x) - 2.0) < 1e-4
    g = ad.grad(lambda y: anp.trapezoid(y, x))(np.sin(x))
    dx = x[1] - x[0]
    np.testing.assert_allclose(g, np.r_[dx / 2, np.full(199, dx), dx / 2], rtol=1e-12)
    assert anp.trapz is anp.trapezoid


def test_bincount_lengths():
    x = np.array([1, 1, 4])
    w = np.array([0.5, 0.25, 2.0], np.float32)
    np.testing.assert_array_equal(ad.jit(lambda w_: anp.bincount(x, w_))(w), np.bincount(x, w))
    assert ad.jit(lambda w_: anp.bincount(x, w_))(w).dtype == np.float64        # numpy's rule
    # a traced x of unknown value needs the length
    with pytest.raises(ConcretizationError, match="length"):
        ad.make_jaxpr(lambda xi: anp.bincount(xi))(x)
    np.testing.assert_array_equal(ad.jit(lambda xi: anp.bincount(xi, length=6))(x), np.bincount(x, minlength=6))
    np.testing.assert_array_equal(ad.jit(lambda xi: anp.bincount(xi, minlength=5))(x), np.bincount(x, minlength=5))


def test_pad_limits_and_modes():
    # every numpy mode under trace, reflect wider than the axis included (numpy's values)
    a = np.array([1.0, 4.0, 2.0])
    for kw in ({"mode": "linear_ramp", "end_values": -2.0}, {"mode": "reflect"},
               {"mode": "symmetric", "reflect_type": "odd"}, {"mode": "wrap"}):
        np.testing.assert_allclose(ad.jit(lambda a: anp.pad(a, (5, 4), **kw))(a),
                                   np.pad(a, (5, 4), **kw))
    # edge padding: each edge value is repeated, so its gradient counts the copies
    np.testing.assert_array_equal(ad.grad(lambda a: anp.sum(anp.pad(a, (2, 1), mode="edge")))(np.ones(4)),
                                  [3.0, 1.0, 1.0, 2.0])


def test_index_helpers_and_byte_sizes():
    assert all(np.array_equal(a, b) for a, b in zip(anp.triu_indices(3, 1), np.triu_indices(3, 1)))
    assert all(np.array_equal(a, b) for a, b in zip(anp.tril_indices(3), np.tril_indices(3)))
    assert all(np.array_equal(a, b) for a, b in zip(anp.diag_indices(2), np.diag_indices(2)))
    m = np.arange(12.0).reshape(3, 4)
    iu = anp.triu_indices_from(m, 1)
    np.testing.assert_array_equal(ad.jit(lambda v: v[anp.triu_indices_from(v, 1)])(m), m[iu])

    def f(v):
        assert v.itemsize == 4 and v.nbytes == 4 * 6
        return v
    ad.jit(f)(np.ones((2, 3), np.float32))


# ----------------------------------------------------------------------------
# ad.lax wrappers and tree_util additions (small, so they live here)
# ----------------------------------------------------------------------------

def test_lax_dynamic_slice_update_and_stop_gradient():
    x = np.arange(12.0).reshape(3, 4)
    f = ad.jit(lambda a, i, j: ad.lax.dynamic_slice(a, (i, j), (2, 2)))
    np.testing.assert_array_equal(f(x, 1, 1), x[1:3, 1:3])
    np.testing.assert_array_equal(f(x, 2, 3), x[1:3, 2:4])          # clamped into bounds, as JAX
    g = ad.grad(lambda a: anp.sum(ad.lax.dynamic_slice(a, (0, 1), (2, 2)) ** 2))(x)
    want = np.zeros_like(x)
    want[0:2, 1:3] = 2 * x[0:2, 1:3]
    np.testing.assert_array_equal(g, want)
    u = np.ones((1, 2))
    out = ad.jit(lambda a, b, i: ad.lax.dynamic_update_slice(a, b, (i, 0)))(x, u, 2)
    want = x.copy()
    want[2, 0:2] = 1.0
    np.testing.assert_array_equal(out, want)
    ad.check_grads(lambda a, b: ad.lax.dynamic_update_slice(a, b, (1, 1)), (x, u), order=2,
                   modes=("fwd", "rev"))
    assert ad.grad(lambda v: v * ad.lax.stop_gradient(v))(3.0) == 3.0


def test_tree_util_pytree_node_class_and_partial():
    from autodiff.tree_util import Partial, register_pytree_node_class, tree_leaves

    @register_pytree_node_class
    class Affine:
        def __init__(self, w, b, name="layer"):
            self.w, self.b, self.name = w, b, name

        def tree_flatten(self):
            return [self.w, self.b], self.name

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children, name=aux)

    p = Affine(np.array([1.0, 2.0]), np.array(0.5))
    g = ad.grad(lambda q: anp.sum(q.w * 3.0) + q.b)(p)
    assert isinstance(g, Affine) and g.name == "layer"
    np.testing.assert_array_equal(g.w, [3.0, 3.0])
    assert g.b == 1.0

    f = Partial(lambda a, x, b=0.0: a * x + b, np.array(2.0), b=np.array(1.0))
    assert len(tree_leaves(f)) == 2
    gf = ad.grad(lambda h, x: h(x))(f, 3.0)
    assert isinstance(gf, Partial) and gf.args[0] == 3.0 and gf.keywords["b"] == 1.0
    assert ad.jit(lambda h, x: h(x))(f, np.float64(4.0)) == 9.0


# ----------------------------------------------------------------------------
# numpy names with in-place or constant semantics
# ----------------------------------------------------------------------------

def test_in_place_numpy_functions_are_functional_when_traced():
    a = np.arange(6.0)
    out = ad.jit(lambda x: anp.put(x, np.array([0, 4]), np.array([9.0, 8.0])), backend="interpret")(a)
    want = a.copy()
    np.put(want, [0, 4], [9.0, 8.0])
    np.testing.assert_array_equal(out, want)
    assert anp.put(a.copy(), [1], [5.0]) is None                     # numpy's own, in place
    np.testing.assert_array_equal(anp.put(a, [1], [5.0], inplace=False), [0, 5, 2, 3, 4, 5])
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    f = ad.jit(lambda x: anp.fill_diagonal(x, 0.0), backend="interpret")(m)
    np.testing.assert_array_equal(f, [[0.0, 2.0], [3.0, 0.0]])
    np.testing.assert_array_equal(anp.fill_diagonal(m, 7.0, inplace=False), [[7.0, 2.0], [3.0, 7.0]])
    mask = a > 2
    got = ad.jvp(lambda x: anp.place(x, mask, anp.array([1.0, 2.0])), (a,), (np.ones(6),))[0]
    want = a.copy()
    np.place(want, mask, [1.0, 2.0])
    np.testing.assert_array_equal(got, want)


def test_small_numpy_helpers():
    x = RNG.normal(size=(2, 3))
    g = ad.grad(lambda v: anp.sum(anp.apply_over_axes(anp.sum, v, [0, 1])))(x)
    np.testing.assert_array_equal(g, np.ones_like(x))
    np.testing.assert_allclose(ad.jit(lambda v: anp.apply_over_axes(anp.sum, v, [1]), backend="interpret")(x),
                               np.apply_over_axes(np.sum, x, [1]))
    assert bool(anp.array_equiv(np.ones(3), np.ones((2, 3)))) and not anp.array_equiv(np.ones(3), np.ones(2))
    assert bool(ad.jit(lambda a: anp.array_equiv(a, a[0]), backend="interpret")(np.ones((2, 3))))
    np.testing.assert_array_equal(anp.bitwise_left_shift(np.array([1, 3]), 2), [4, 12])
    np.testing.assert_array_equal(ad.jit(lambda a: anp.bitwise_right_shift(a, 1), backend="interpret")(np.array([8, -3])),
                                  [4, -2])
    np.testing.assert_array_equal(ad.jit(anp.bitwise_invert, backend="interpret")(np.array([0, 5])), [-1, -6])
    r = ad.jit(lambda a: anp.diag_indices_from(a)[0] + 0, backend="interpret")(np.ones((3, 3)))
    np.testing.assert_array_equal(r, [0, 1, 2])
    path = anp.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 2)))
    assert path[0][0] == "einsum_path"
    traced_path = ad.jvp(lambda a: (anp.einsum("ij,jk->ik", a, a), anp.einsum_path("ij,jk->ik", a, a)[0])[0],
                         (np.ones((2, 2)),), (np.ones((2, 2)),))
    np.testing.assert_array_equal(traced_path[0], 2 * np.ones((2, 2)))
    assert not anp.iscomplexobj(np.ones(2)) and anp.isrealobj(np.ones(2))
    assert ad.jit(lambda a: a * (0.0 if anp.iscomplexobj(a) else 1.0), backend="interpret")(np.ones(2))[0] == 1.0
    np.testing.assert_array_equal(anp.trim_zeros(np.array([0.0, 0, 1, 2, 0])), [1.0, 2.0])
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(anp.trim_zeros(v * 1.0) ** 2))(np.array([0.0, 1.0, 2.0, 0.0])),
                               [0.0, 2.0, 4.0, 0.0])
    vals, idx, inv, cnt = anp.unique_all(np.array([3, 1, 3]))
    np.testing.assert_array_equal(vals, [1, 3])
    np.testing.assert_array_equal(inv, [1, 0, 1])
    np.testing.assert_array_equal(anp.matrix_transpose(np.ones((2, 3, 4))).shape, (2, 4, 3))
    np.testing.assert_allclose(np.sort(anp.roots(np.array([1.0, -3.0, 2.0]))), [1.0, 2.0])
    assert anp.bool is np.bool_ and anp.zeros(2, dtype=anp.bool).dtype == np.bool_
    # complex results: numpy's eagerly and traced
    np.testing.assert_array_equal(anp.sort_complex(np.array([3.0, 1.0])), [1 + 0j, 3 + 0j])
    got = ad.jit(anp.sort_complex, backend="interpret")(np.array([3.0, 1.0]))
    assert got.dtype == np.complex128 and got.tolist() == [1 + 0j, 3 + 0j]


def test_logsumexp_b_broadcasts_masks_zero_terms_and_complex_is_principal():
    import scipy.special as sp
    a, b = np.array([-1000.0, -2.0]), np.array([1.0, 0.0])
    # a zero weight is no term: it neither sets the shift nor underflows the others
    assert float(anp.logsumexp(a, b=b)) == -1000.0
    assert float(ad.jit(lambda a, b: anp.logsumexp(a, b=b))(a, b)) == -1000.0
    np.testing.assert_allclose(ad.grad(lambda a: anp.logsumexp(a, b=b))(a), [1.0, 0.0])
    A, B = np.arange(4.0), np.arange(12.0).reshape(3, 4)       # b broadcasts with a
    np.testing.assert_allclose(anp.logsumexp(A, axis=-1, b=B),
                               sp.logsumexp(A, axis=-1, b=B), rtol=1e-12)
    z = np.array([1 + 3j, 2 - 3j, 0.5 + 2j])
    np.testing.assert_allclose(anp.logsumexp(z), sp.logsumexp(z), rtol=1e-12)
    got, want = anp.logsumexp(z, return_sign=True), sp.logsumexp(z, return_sign=True)
    assert np.isrealobj(got[0])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_functions_returning_several_arrays_give_the_same_container_traced():
    # numpy 2 returns tuples from meshgrid and broadcast_arrays; traced calls (jit, vjp)
    # built lists, so a jitted function's output had another tree structure than its eager
    # value (tree_map over both raised)
    x = np.arange(3.0)
    for f in (lambda x: anp.meshgrid(x, x[:2]), lambda x: anp.meshgrid(x, x, sparse=True),
              lambda x: anp.broadcast_arrays(x, x[:, None])):
        eager, jitted = f(x), ad.jit(f)(x)
        assert type(eager) is tuple and type(jitted) is tuple
        for e, j in zip(eager, jitted):
            np.testing.assert_array_equal(e, j)
        out, _ = ad.vjp(f, x)
        assert type(out) is tuple
