"""Regressions from porting a fifth round of JAX code by changing imports (JAX's notebooks
on remat, debugging and callbacks, ``jax.config.update("jax_enable_x64", True)`` that opens
most scientific scripts, ``tests/scipy_stats_test.py``, ``lax_scipy_special_functions_test``
and ``lax_scipy_sparse_test.py``): JAX's config option names, ``jax.ad_checkpoint`` and the
remaining ``checkpoint_policies``, ``jax.typeof``, ``ShapeDtypeStruct.like``,
``bernoulli.ppf(loc=)``, array orders of ``polygamma``/``expn``, forward mode through
``lax.custom_linear_solve``, and ``jax.scipy.sparse.linalg.cg``/``bicgstab``."""
import warnings

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import NaNError

scipy_special = pytest.importorskip("scipy.special")
scipy_stats = pytest.importorskip("scipy.stats")
scipy_sparse_linalg = pytest.importorskip("scipy.sparse.linalg")


def _fd(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros(np.shape(f(x)) + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[(Ellipsis,) + i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# -- jax.config option names --------------------------------------------------------

def test_jax_config_option_names_are_accepted():
    ad.config.update("jax_enable_x64", True)          # the first line of many scripts
    assert ad.config.jax_enable_x64 is True and ad.config.x64_enabled
    assert anp.sum(np.ones(3)).dtype == np.float64
    with pytest.warns(UserWarning, match="no effect"):
        ad.config.update("jax_enable_x64", False)
    ad.config.update("jax_enable_x64", True)
    ad.config.update("jax_platform_name", "cpu")
    ad.config.update("jax_default_matmul_precision", "highest")
    ad.config.update("jax_debug_nans", True)
    try:
        assert ad.config.debug_nans and ad.config.jax_debug_nans
        with pytest.raises(NaNError):
            ad.jit(lambda x: anp.log(x))(np.array([-1.0]))
    finally:
        ad.config.update("jax_debug_nans", False)
    assert not ad.config.debug_nans
    seen = []

    @ad.jit
    def f(x):
        seen.append(type(x).__name__)
        return x * 2.0
    ad.config.update("jax_disable_jit", True)
    try:
        assert float(f(np.float64(1.5))) == 3.0
    finally:
        ad.config.update("jax_disable_jit", False)
    assert seen == ["float64"]                        # ran as Python, on the value
    with pytest.raises(AttributeError, match="unknown config option"):
        ad.config.update("jax_no_such_option", 1)


def test_debug_nans_and_enable_x64_contexts():
    with ad.debug_nans():
        with pytest.raises(FloatingPointError):
            ad.jit(lambda x: anp.sqrt(x))(np.array([-4.0]))
    assert not ad.config.debug_nans
    with ad.enable_x64():
        assert ad.jit(lambda x: x + 1.0)(np.float64(1.0)).dtype == np.float64


def test_typeof_and_shape_dtype_struct_like():
    assert ad.typeof(np.ones((2, 3), np.float32)) == ad.ShapedArray((2, 3), np.float32)
    seen = []
    ad.jit(lambda x: seen.append(ad.typeof(x)) or x)(np.arange(3.0))
    assert seen == [ad.ShapedArray((3,), np.float64)]
    x = np.arange(6.0).reshape(2, 3)
    s = ad.ShapeDtypeStruct.like(x)
    assert (s.shape, s.dtype) == ((2, 3), np.float64)
    # the callbacks page's idiom: the result has the input's shape and dtype
    out = ad.jit(lambda x: ad.pure_callback(np.sin, ad.ShapeDtypeStruct.like(x), x))(x)
    np.testing.assert_allclose(out, np.sin(x))


# -- scipy.stats / scipy.special ------------------------------------------------------

def test_bernoulli_ppf_shifts_by_loc():
    from autodiff.scipy.stats import bernoulli
    q = np.array([0.0, 0.05, 0.3, 0.6, 0.97, 1.0])
    for p, loc in [(0.5, 1.0), (0.2, -2.0), (0.9, 0.0)]:
        np.testing.assert_array_equal(bernoulli.ppf(q, p, loc),
                                      scipy_stats.bernoulli.ppf(q, p, loc))
        np.testing.assert_array_equal(bernoulli.ppf(q, p, loc=loc),
                                      scipy_stats.bernoulli.ppf(q, p, loc=loc))


def test_polygamma_and_expn_take_arrays_of_orders():
    from autodiff.scipy.special import expn, polygamma
    n = np.array([0, 1, 2, 3])
    x = np.array([1.5, 2.0, 3.0, 0.7])
    np.testing.assert_allclose(polygamma(n, x), scipy_special.polygamma(n, x), rtol=1e-12)
    np.testing.assert_allclose(ad.jit(lambda x: polygamma(n, x))(x),
                               scipy_special.polygamma(n, x), rtol=1e-12)
    g = ad.grad(lambda x: anp.sum(polygamma(n, x)))(x)
    np.testing.assert_allclose(g, scipy_special.polygamma(n + 1, x), rtol=1e-10)
    col = n[:, None]                                  # broadcasting (4, 1) against (4,)
    np.testing.assert_allclose(polygamma(col, x), scipy_special.polygamma(col, x), rtol=1e-10)
    np.testing.assert_allclose(expn(n, x), scipy_special.expn(n, x), rtol=1e-12)
    np.testing.assert_allclose(expn(col, x), scipy_special.expn(col, x), rtol=1e-10)
    g = ad.grad(lambda x: anp.sum(expn(n[1:], x)))(x[1:])
    np.testing.assert_allclose(g, -scipy_special.expn(n[1:] - 1, x[1:]), rtol=1e-10)
    assert np.isnan(expn(-1, 2.0)) and np.isnan(scipy_special.expn(-1, 2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(expn(np.array([1.5, 2.0]), 2.0),
                                   scipy_special.expn(np.array([1.5, 2.0]), 2.0), rtol=1e-12)


# -- jax.ad_checkpoint and the policies of the remat notebook -----------------------------

def _sin_layers(W1, W2, x):
    return anp.sin(anp.dot(W2, anp.sin(anp.dot(W1, x))))


def test_ad_checkpoint_module_and_jax_policies():
    from autodiff.ad_checkpoint import checkpoint, checkpoint_name, saved_residuals
    pol = ad.checkpoint_policies
    W1, W2, x = np.ones((5, 4)) * 0.1, np.ones((6, 5)) * 0.2, np.arange(4.0)
    for p in (pol.dots_with_no_batch_dims_saveable, pol.checkpoint_dots_with_no_batch_dims,
              pol.offload_dot_with_no_batch_dims("device", "pinned_host")):
        f = checkpoint(_sin_layers, policy=p)
        saved = [r.primitive for r in saved_residuals(f, W1, W2, x) if r.argument is None]
        assert saved == ["dot_general", "dot_general"]
    # a batched product is not saved by the "no batch dims" policy, but is by dots_saveable
    bf = lambda W, v: anp.sin(anp.einsum("bij,bj->bi", W, v))
    args = (np.ones((2, 3, 3)), np.ones((2, 3)))
    kept = lambda p: [r.primitive for r in saved_residuals(checkpoint(bf, policy=p), *args)
                      if r.argument is None]
    assert kept(pol.dots_with_no_batch_dims_saveable) == []
    assert kept(pol.dots_saveable) == ["dot_general"]

    def h(x):
        a = checkpoint_name(anp.sin(x), "a")
        b = checkpoint_name(anp.sin(a), "b")
        return anp.sum(anp.sin(anp.sin(b)))
    x = np.array([0.3, 0.5, 0.7])
    ref = np.cos(np.sin(np.sin(np.sin(x)))) * np.cos(np.sin(np.sin(x))) \
        * np.cos(np.sin(x)) * np.cos(x)
    cases = [(pol.save_any_names_but_these("a"), 1),
             (pol.save_from_both_policies(pol.save_only_these_names("a"),
                                          pol.save_only_these_names("b")), 2),
             (pol.save_and_offload_only_these_names(
                 names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
                 offload_src="device", offload_dst="pinned_host"), 2)]
    for p, n_saved in cases:
        f = checkpoint(h, policy=p)
        saved = [r for r in saved_residuals(f, x) if r.argument is None]
        assert [r.primitive for r in saved] == ["name"] * n_saved
        np.testing.assert_allclose(ad.grad(f)(x), ref, rtol=1e-12)
    with pytest.raises(ValueError, match="share names"):
        pol.save_and_offload_only_these_names(names_which_can_be_saved=["a"],
                                              names_which_can_be_offloaded=["a"],
                                              offload_src="device", offload_dst="pinned_host")


# -- lax.custom_linear_solve in forward mode --------------------------------------------

def test_custom_linear_solve_forward_mode_is_the_derivative():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 3)), rng.normal(size=3)
    posify = lambda m: m @ m.T + np.eye(3)

    def solve(a, b):
        A = posify(a)
        return ad.lax.custom_linear_solve(lambda v: A @ v, b,
                                          lambda mv, r: anp.linalg.solve(A, r), symmetric=True)
    Ainv = np.linalg.inv(posify(a))
    np.testing.assert_allclose(ad.jacfwd(solve, 1)(a, b), Ainv, atol=1e-12)
    ref = lambda a: np.linalg.solve(posify(a), b)
    np.testing.assert_allclose(ad.jacfwd(solve, 0)(a, b), _fd(ref, a), atol=1e-7)
    _, t = ad.jvp(lambda b: solve(a, b), (b,), (np.array([1.0, 0.0, 0.0]),))
    np.testing.assert_allclose(t, Ainv[:, 0], atol=1e-12)
    # hessian = jacfwd(jacrev): sum(sin(A⁻¹b)) has Hessian A⁻ᵀ diag(-sin x) A⁻¹ in b
    loss = lambda b: anp.sum(anp.sin(solve(a, b)))
    x = Ainv @ b
    np.testing.assert_allclose(ad.hessian(loss)(b), Ainv.T @ np.diag(-np.sin(x)) @ Ainv,
                               atol=1e-12)
    np.testing.assert_allclose(ad.jacfwd(ad.jacfwd(loss))(b),
                               Ainv.T @ np.diag(-np.sin(x)) @ Ainv, atol=1e-12)


# -- jax.scipy.sparse.linalg ---------------------------------------------------------

def _spd(rng, n):
    m = np.eye(n) + rng.normal(size=(n, n))
    return m @ m.T


def test_cg_and_bicgstab_iterates_match_scipy():
    from autodiff.scipy.sparse.linalg import bicgstab, cg
    rng = np.random.default_rng(1)
    for n in (4, 7):
        A, b = _spd(rng, n), rng.normal(size=n)
        for M in (None, np.linalg.inv(_spd(rng, n))):
            for it in (1, 3):
                np.testing.assert_allclose(
                    cg(A, b, M=M, maxiter=it, atol=0.0)[0],
                    scipy_sparse_linalg.cg(A, b, M=M, maxiter=it, atol=0.0)[0], rtol=1e-10)
            np.testing.assert_allclose(cg(A, b, M=M, atol=1e-10)[0], np.linalg.solve(A, b),
                                       rtol=1e-6)
            An = A + 0.3 * rng.normal(size=(n, n))
            for it in (1, 2):
                np.testing.assert_allclose(
                    bicgstab(An, b, M=M, maxiter=it, atol=0.0)[0],
                    scipy_sparse_linalg.bicgstab(An, b, M=M, maxiter=it, atol=0.0)[0],
                    rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(bicgstab(An, b, M=M, atol=1e-10)[0],
                                       np.linalg.solve(An, b), rtol=1e-6)
    # complex Hermitian
    m = np.eye(3) + rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    A, b = m @ m.conj().T, rng.normal(size=3) + 1j * rng.normal(size=3)
    np.testing.assert_allclose(cg(A, b, maxiter=2, atol=0.0)[0],
                               scipy_sparse_linalg.cg(A, b, maxiter=2, atol=0.0)[0], rtol=1e-10)


def test_cg_forms_of_the_operator_pytrees_and_errors():
    from autodiff.scipy.sparse.linalg import cg, gmres
    b = np.arange(9.0).reshape(3, 3)
    np.testing.assert_allclose(cg(lambda x: 2 * x, b)[0], b / 2)

    class Op:
        shape = (3, 3)

        def __matmul__(self, x):
            return 2.0 * x
    np.testing.assert_allclose(cg(Op(), b)[0], b / 2)
    A = lambda x: {"a": x["a"] + 0.5 * x["b"], "b": 0.5 * x["a"] + x["b"]}
    out, info = cg(A, {"a": 1.0, "b": -4.0})
    assert info is None
    np.testing.assert_allclose([out["a"], out["b"]], [4.0, -6.0], atol=1e-6)
    with pytest.raises(ValueError, match="matching tree structure"):
        cg(lambda x: x, {"x": np.zeros(2)}, {"y": np.zeros(2)})
    with pytest.raises(ValueError, match="matching shapes"):
        cg(lambda x: x, np.zeros(2), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="square matrix"):
        cg(np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(TypeError, match="either a function or ndarray"):
        cg([[1]], np.zeros(1))
    # gmres takes the same forms of the operator and pytrees, and the same errors
    np.testing.assert_allclose(gmres(lambda x: 2 * x, b)[0], b / 2)
    np.testing.assert_allclose(gmres(Op(), b)[0], b / 2)
    out, info = gmres(A, {"a": 1.0, "b": -4.0}, tol=1e-10)
    assert int(info) == 0
    np.testing.assert_allclose([out["a"], out["b"]], [4.0, -6.0], atol=1e-8)
    with pytest.raises(ValueError, match="matching tree structure"):
        gmres(lambda x: x, {"x": np.zeros(2)}, {"y": np.zeros(2)})
    with pytest.raises(ValueError, match="square matrix"):
        gmres(np.zeros((3, 2)), np.zeros(2))


def test_cg_is_differentiated_implicitly_in_every_mode():
    from autodiff.scipy.sparse.linalg import bicgstab, cg
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(3, 3)), rng.normal(size=3)
    posify = lambda m: m @ m.T + np.eye(3)
    f = lambda a, b: anp.sum(anp.sin(cg(posify(a), b, tol=1e-12)[0]))
    ref = lambda a, b: np.sum(np.sin(np.linalg.solve(posify(a), b)))
    np.testing.assert_allclose(ad.jit(f)(a, b), ref(a, b), rtol=1e-10)
    ga, gb = ad.grad(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, _fd(lambda a: ref(a, b), a), atol=1e-7)
    np.testing.assert_allclose(gb, _fd(lambda b: ref(a, b), b), atol=1e-7)
    np.testing.assert_allclose(ad.jit(ad.grad(f, 1))(a, b), gb, atol=1e-12)
    Ainv = np.linalg.inv(posify(a))
    sol = lambda b: cg(lambda v: posify(a) @ v, b, tol=1e-12)[0]
    np.testing.assert_allclose(ad.jacfwd(sol)(b), Ainv, atol=1e-10)
    np.testing.assert_allclose(ad.vmap(sol)(np.eye(3)), Ainv.T, atol=1e-10)
    An = posify(a) + rng.normal(size=(3, 3))
    g = ad.grad(lambda m: anp.sum(bicgstab(m, b, tol=1e-12)[0] ** 2))(An)
    np.testing.assert_allclose(g, _fd(lambda m: np.sum(np.linalg.solve(m, b) ** 2), An),
                               atol=1e-6)


# -- jnp.result_type on dtype-likes (the external-callbacks page's jv wrapper) ----------

def test_result_type_takes_python_types_and_dtype_names():
    for args in [(float, np.dtype(np.float32)), (float,), (int,), (complex, np.float32),
                 ("float32", np.int8), (np.float32, 1.0), (anp.float32, np.int16),
                 (bool, np.int8), (np.float32, np.ones(2, np.float16))]:
        assert anp.result_type(*args) == np.result_type(*args), args

    def jv(v, z):                                      # docs/external-callbacks.md, verbatim
        v, z = anp.asarray(v), anp.asarray(z)
        z = z.astype(anp.result_type(float, z.dtype))
        _scipy_jv = lambda v, z: scipy_special.jv(v, z).astype(z.dtype)
        shape_dtype = ad.ShapeDtypeStruct(shape=anp.broadcast_shapes(v.shape, z.shape),
                                          dtype=z.dtype)
        return ad.pure_callback(_scipy_jv, shape_dtype, v, z, vmap_method="broadcast_all")
    z = np.arange(5.0)
    np.testing.assert_allclose(jv(1, z), scipy_special.jv(1, z))
    np.testing.assert_allclose(ad.jit(lambda z: jv(1, z))(z), scipy_special.jv(1, z))
