"""The public contract (the API reference pages and docs/design.md's conventions), checked
line by line with real numbers.

Each section below mirrors a section of the API contract; conventions are tested under their
number (``test_c1_*`` ... ``test_c10_*``). The checks are the ones a JAX or autograd
user would make first: names and signatures exist as written, pytrees and keyword
arguments pass through every transform, results are numpy values, errors are typed
and name the user's line. Oracles: closed forms, finite differences, numpy itself.

Only three functions are compiled with Numba (``jit``'s default backend); the other
``jit`` checks use ``backend="interpret"``, which shares the tracing and the cache.
"""
import collections
import dataclasses
import inspect
import os

import numpy as np
import pytest
import scipy.special

import autodiff as ad
import autodiff.numpy as anp
from autodiff import errors, tree_util
from autodiff.core import Tracer
from autodiff.checkpoint import saved_residuals

HERE = os.path.abspath(__file__)


def _defaults(fn):
    """``{name: default}`` of ``fn``'s parameters (``inspect.Parameter.empty`` if none)."""
    return {n: p.default for n, p in inspect.signature(fn).parameters.items()}


def _num_grad(f, x, eps=1e-6):
    """Central finite differences of a scalar function of one float64 array."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g


def _is_numpy_value(r):
    """Convention 2: an ndarray of rank >= 1, or a numpy scalar; never a Tracer or 0-d array."""
    if isinstance(r, Tracer):
        return False
    if isinstance(r, np.ndarray):
        return r.ndim > 0
    return isinstance(r, np.generic)


@pytest.fixture
def debug_nans():
    ad.config.update("debug_nans", True)
    try:
        yield
    finally:
        ad.config.update("debug_nans", False)


# ==========================================================================================
# Import lines and public names
# ==========================================================================================

PUBLIC = ["grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "jacobian",
          "hessian", "hvp", "vmap", "jit", "checkpoint", "remat", "checkpoint_sequential",
          "stop_gradient", "custom_jvp", "custom_vjp", "make_jaxpr", "check_grads", "lax",
          "config", "errors", "tree_util", "optim", "nn", "Variable", "no_grad", "enable_grad",
          "is_grad_enabled", "every", "checkpoint_policies", "numpy"]


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_exists(name):
    assert hasattr(ad, name), f"ad.{name} is missing"


def test_remat_is_checkpoint():
    assert ad.remat is ad.checkpoint


# ==========================================================================================
# Transforms table: signatures and defaults exactly as written
# ==========================================================================================

SIGNATURES = {
    "grad": {"fun": None, "argnums": 0, "has_aux": False},
    "value_and_grad": {"fun": None, "argnums": 0, "has_aux": False},
    "jvp": {"fun": None, "primals": None, "tangents": None},
    "linearize": {"fun": None},
    "jacfwd": {"fun": None, "argnums": 0},
    "jacrev": {"fun": None, "argnums": 0},
    "jacobian": {"fun": None, "argnums": 0},
    "hessian": {"fun": None, "argnums": 0},
    "hvp": {"fun": None, "x": None, "v": None},
    "vmap": {"fun": None, "in_axes": 0, "out_axes": 0},
    "jit": {"static_argnums": (), "static_argnames": (), "backend": None},
    "checkpoint": {"fun": None, "policy": None},
    "checkpoint_sequential": {"fns": None, "strategy": "sqrt_n"},
    "stop_gradient": {"x": None},
    "make_jaxpr": {"fun": None, "static_argnums": ()},
    "check_grads": {"order": 2, "modes": ("fwd", "rev"), "eps": None, "atol": None,
                    "rtol": None},
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_transform_signature(name):
    got = _defaults(getattr(ad, name))
    for param, default in SIGNATURES[name].items():
        assert param in got, f"ad.{name} has no parameter {param!r}: {list(got)}"
        if default is not None:
            assert got[param] == default, f"ad.{name}({param}=...) default {got[param]!r}"


def test_vjp_signature_takes_star_primals_and_has_aux():
    params = inspect.signature(ad.vjp).parameters
    assert params["primals"].kind is inspect.Parameter.VAR_POSITIONAL
    assert params["has_aux"].default is False
    assert inspect.signature(ad.linearize).parameters["primals"].kind is \
        inspect.Parameter.VAR_POSITIONAL


def test_check_grads_positional_f_args():
    names = list(inspect.signature(ad.check_grads).parameters)
    assert names[:2] == ["f", "args"]


# ---- each transform's meaning, with numbers -------------------------------------------

X = np.array([0.3, -1.2, 2.0])


def f_scalar(x):
    return anp.sum(anp.sin(x) * x ** 2)


def df_scalar(x):          # d/dx sum(sin(x) x^2) = cos(x) x^2 + 2 x sin(x)
    return np.cos(x) * x ** 2 + 2 * x * np.sin(x)


def test_grad_closed_form():
    np.testing.assert_allclose(ad.grad(f_scalar)(X), df_scalar(X), rtol=1e-12)


def test_grad_argnums_positional_and_tuple():
    f = lambda a, b: anp.sum(a * b ** 2)
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    np.testing.assert_allclose(ad.grad(f, 1)(a, b), 2 * a * b)
    ga, gb = ad.grad(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, b ** 2)
    np.testing.assert_allclose(gb, 2 * a * b)


def test_value_and_grad_one_pass():
    v, g = ad.value_and_grad(f_scalar)(X)
    assert np.isclose(v, np.sum(np.sin(X) * X ** 2))
    np.testing.assert_allclose(g, df_scalar(X), rtol=1e-12)


def test_jvp_forward_mode():
    t = np.array([1.0, 0.5, -2.0])
    out, tout = ad.jvp(f_scalar, (X,), (t,))
    assert np.isclose(out, np.sum(np.sin(X) * X ** 2))
    assert np.isclose(tout, df_scalar(X) @ t)


def test_vjp_reverse_mode():
    f = lambda x, y: anp.sin(x) * y
    x, y = np.array([0.1, 0.2]), np.array([3.0, 4.0])
    out, vjp_fn = ad.vjp(f, x, y)
    np.testing.assert_allclose(out, np.sin(x) * y)
    ct = np.array([1.0, -1.0])
    gx, gy = vjp_fn(ct)
    np.testing.assert_allclose(gx, np.cos(x) * y * ct)
    np.testing.assert_allclose(gy, np.sin(x) * ct)
    # reusable
    np.testing.assert_allclose(vjp_fn(2 * ct)[0], 2 * gx)


def test_vjp_has_aux():
    out, vjp_fn, aux = ad.vjp(lambda x: (x * 2.0, {"sq": x * x}), np.array([3.0]), has_aux=True)
    np.testing.assert_allclose(out, [6.0])
    np.testing.assert_allclose(aux["sq"], [9.0])
    np.testing.assert_allclose(vjp_fn(np.array([1.0]))[0], [2.0])


def test_linearize_keeps_linear_map():
    y, jvp_fn = ad.linearize(f_scalar, X)
    assert np.isclose(y, f_scalar(X))
    for t in (np.ones(3), np.array([0.0, 1.0, -3.0])):
        assert np.isclose(jvp_fn(t), df_scalar(X) @ t)
    # linear: f_jvp(a t) = a f_jvp(t)
    assert np.isclose(jvp_fn(3 * X), 3 * jvp_fn(X))


def _vector_fn(x):
    return anp.stack([x[0] * x[1], anp.sin(x[2]), x[0] ** 3, x[1] + x[2]])


def _vector_jac(x):
    return np.array([[x[1], x[0], 0.0], [0.0, 0.0, np.cos(x[2])], [3 * x[0] ** 2, 0.0, 0.0],
                     [0.0, 1.0, 1.0]])


@pytest.mark.parametrize("which", ["jacfwd", "jacrev", "jacobian"])
def test_jacobians_tall(which):
    np.testing.assert_allclose(getattr(ad, which)(_vector_fn)(X), _vector_jac(X), rtol=1e-12)


@pytest.mark.parametrize("which", ["jacfwd", "jacrev", "jacobian"])
def test_jacobians_wide_and_argnums(which):
    f = lambda a, b: anp.stack([anp.sum(a * b), anp.sum(a ** 2)])
    a, b = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 2.0])
    jac = getattr(ad, which)
    np.testing.assert_allclose(jac(f)(a, b), np.stack([b, 2 * a]))
    np.testing.assert_allclose(jac(f, argnums=1)(a, b), np.stack([a, np.zeros(3)]))
    ja, jb = jac(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ja, np.stack([b, 2 * a]))
    np.testing.assert_allclose(jb, np.stack([a, np.zeros(3)]))


def test_hessian_is_jacfwd_of_jacrev():
    f = lambda x: anp.sum(anp.exp(x[0] * x[1]) + x[2] ** 3)
    x = np.array([0.5, -0.3, 1.5])
    e = np.exp(x[0] * x[1])
    want = np.array([[x[1] ** 2 * e, e + x[0] * x[1] * e, 0.0],
                     [e + x[0] * x[1] * e, x[0] ** 2 * e, 0.0],
                     [0.0, 0.0, 6 * x[2]]])
    np.testing.assert_allclose(ad.hessian(f)(x), want, rtol=1e-12)
    np.testing.assert_allclose(ad.jacfwd(ad.jacrev(f))(x), want, rtol=1e-12)
    g = lambda a, b: anp.sum(a * a * b)
    np.testing.assert_allclose(ad.hessian(g, argnums=1)(x, x), np.zeros((3, 3)))


def test_hvp_single_arrays():
    f = lambda x: anp.sum(anp.exp(x[0] * x[1]) + x[2] ** 3)
    x = np.array([0.5, -0.3, 1.5])
    v = np.array([1.0, 2.0, -1.0])
    hv = ad.hvp(f, x, v)                 # single arrays, not tuples (convention 3)
    assert isinstance(hv, np.ndarray) and hv.shape == (3,)
    np.testing.assert_allclose(hv, ad.hessian(f)(x) @ v, rtol=1e-12)


def test_vmap_in_axes_out_axes():
    xs = np.arange(6.0).reshape(3, 2)
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(ad.vmap(lambda x: anp.dot(w, x))(xs), xs @ w.T)
    np.testing.assert_allclose(ad.vmap(lambda x, w: anp.dot(w, x), in_axes=(1, None))(xs.T, w),
                               xs @ w.T)
    np.testing.assert_allclose(ad.vmap(lambda x: x * 2.0, out_axes=1)(xs), (xs * 2).T)


def test_stop_gradient_is_detach():
    f = lambda x: anp.sum(x * ad.stop_gradient(x))
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(ad.grad(f)(x), x)          # not 2x
    tree = ad.stop_gradient({"a": np.ones(2), "b": (2.0,)})
    assert set(tree) == {"a", "b"} and tree["b"][0] == 2.0


def test_custom_jvp_and_custom_vjp():
    @ad.custom_jvp
    def f(x):
        return anp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return anp.sin(x), 10.0 * t             # deliberately "wrong": proves the rule is used

    @ad.custom_vjp
    def g(x):
        return anp.sin(x)

    g.defvjp(lambda x: (anp.sin(x), x), lambda x, ct: (100.0 * ct,))
    assert ad.grad(f)(0.4) == 10.0
    assert ad.jvp(f, (0.4,), (1.0,))[1] == 10.0
    assert ad.grad(g)(0.4) == 100.0
    assert np.isclose(f(0.4), np.sin(0.4)) and np.isclose(g(0.4), np.sin(0.4))


def test_make_jaxpr_str_and_dot():
    jaxpr = ad.make_jaxpr(lambda x, y: anp.sum(x * y))(np.ones(3), np.ones(3))
    text = str(jaxpr)
    assert "mul" in text and "reduce_sum" in text and "f64[3]" in text
    dot = jaxpr.to_dot()
    assert dot.lstrip().startswith("digraph") and "mul" in dot
    j2 = ad.make_jaxpr(lambda x, n: x * n, static_argnums=(1,))(1.0, 3)
    assert "3" in str(j2) and len(j2.jaxpr.invars) == 1


def test_check_grads_passes_and_raises_with_diff():
    ad.check_grads(f_scalar, (X,), order=2, modes=("fwd", "rev"))

    @ad.custom_vjp
    def bad(x):
        return anp.sin(x)

    bad.defvjp(lambda x: (anp.sin(x), x), lambda x, ct: (2.0 * ct,))
    with pytest.raises(AssertionError) as info:
        ad.check_grads(lambda x: anp.sum(bad(x)), (X,), order=1, modes=("rev",))
    msg = str(info.value)
    assert "expected" in msg and "got" in msg


def test_check_grads_counts_a_nan_at_the_same_place_as_agreeing():
    # as numpy's assert_allclose and JAX's check_grads: f has a nan output entry whose
    # derivative is nan both ways; a nan on one side only still fails
    f = lambda x: anp.stack([anp.sum(x ** 2), anp.sqrt(x[0] - 5.0)])    # sqrt of negative
    ad.check_grads(f, (np.array([1.0, 2.0]),), order=1, modes=("fwd", "rev"))
    from autodiff.check import _check_close
    with pytest.raises(AssertionError):
        _check_close("t", np.array([np.nan, 1.0]), np.array([0.0, 1.0]), 1e-6, 1e-6)


def test_check_grads_checks_reverse_over_reverse():
    # JAX's recursion: reverse mode at order 2 differentiates the cotangent map
    # x -> vjp(f, x)(u) in reverse mode too (grad(grad(f))). Here the first-order rule is
    # right but the rule of the cosine it calls is wrong in reverse mode only (its forward
    # derivative comes from its primal), so only reverse over reverse can see it.
    @ad.custom_vjp
    def cos_bad(x):
        return anp.cos(x)
    cos_bad.defvjp(lambda x: (anp.cos(x), x), lambda x, g: (anp.sin(x) * g,))   # sign wrong

    @ad.custom_vjp
    def sin_ok(x):
        return anp.sin(x)
    sin_ok.defvjp(lambda x: (anp.sin(x), x), lambda x, g: (cos_bad(x) * g,))
    x = np.array([0.4, 1.3])
    ad.check_grads(sin_ok, (x,), order=1, modes=("rev",))
    np.testing.assert_allclose(ad.grad(lambda t: anp.sum(sin_ok(t)))(x), np.cos(x))
    with pytest.raises(AssertionError, match="VJP"):
        ad.check_grads(sin_ok, (x,), order=2, modes=("rev",))


def test_check_grads_counts_the_same_infinity_on_both_sides_as_a_zero_difference():
    # JAX's _safe_subtract: an output that is +inf at x - eps and at x + eps does not move,
    # so its central difference is 0, not (inf - inf)/2eps = nan
    f = lambda x: anp.stack([anp.sum(x ** 2), anp.inf * anp.ones_like(x[0])])
    ad.check_grads(f, (np.array([1.0, 2.0]),), order=2, modes=("fwd", "rev"))


# ---- composition: any order, any depth -------------------------------------------------

def test_compose_grad_of_grad_of_grad():
    assert np.isclose(ad.grad(ad.grad(ad.grad(anp.sin)))(0.7), -np.cos(0.7))


def test_compose_vmap_grad_and_grad_vmap():
    xs = np.array([[0.1, 0.2], [1.0, -1.0], [2.0, 0.5]])
    per_example = ad.vmap(ad.grad(f_scalar))(xs)
    np.testing.assert_allclose(per_example, df_scalar(xs), rtol=1e-12)
    g = ad.grad(lambda xs: anp.sum(ad.vmap(f_scalar)(xs)))(xs)
    np.testing.assert_allclose(g, df_scalar(xs), rtol=1e-12)


def test_compose_jvp_of_vjp_and_linearize_of_grad():
    t = np.array([1.0, 0.0, 2.0])
    H = ad.hessian(f_scalar)(X)

    def g(x):
        return ad.vjp(f_scalar, x)[1](1.0)[0]

    np.testing.assert_allclose(ad.jvp(g, (X,), (t,))[1], H @ t, rtol=1e-12)
    _, lin = ad.linearize(ad.grad(f_scalar), X)
    np.testing.assert_allclose(lin(t), H @ t, rtol=1e-12)


def test_compose_checkpoint_inside_vmap_of_grad():
    layer = ad.checkpoint(lambda x: anp.sin(anp.sin(x)))
    xs = np.array([[0.1, 0.2], [0.3, 0.4]])
    g = ad.vmap(ad.grad(lambda x: anp.sum(layer(x))))(xs)
    np.testing.assert_allclose(g, np.cos(np.sin(xs)) * np.cos(xs), rtol=1e-12)


def test_compose_jit_interpret_with_grad_and_vmap():
    f = ad.jit(f_scalar, backend="interpret")
    np.testing.assert_allclose(ad.grad(f)(X), df_scalar(X), rtol=1e-12)
    np.testing.assert_allclose(ad.jit(ad.grad(f_scalar), backend="interpret")(X), df_scalar(X),
                               rtol=1e-12)
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(ad.vmap(f)(xs), [f_scalar(X), f_scalar(2 * X)], rtol=1e-12)


# ==========================================================================================
# Pytrees through every transform
# ==========================================================================================

Pair = collections.namedtuple("Pair", "w b")


@tree_util.register_dataclass                 # plain decorator: every field is data
@dataclasses.dataclass
class Dense:
    w: object
    b: object


@tree_util.register_dataclass(data_fields=["x"], meta_fields=["n"])   # decorator with fields
@dataclasses.dataclass
class Scaled:
    x: object
    n: int


@dataclasses.dataclass
class Meta:
    v: object
    scale: float


tree_util.register_dataclass(Meta, data_fields=["v"], meta_fields=["scale"])   # call form


class Box:
    def __init__(self, a, b):
        self.a, self.b = a, b


tree_util.register_pytree_node(Box, lambda x: ((x.a, x.b), None), lambda aux, c: Box(*c))


def make_tree():
    return {"t": (np.array([1.0, 2.0]), [np.array(3.0), None]),
            "p": Pair(np.array(1.5), np.array([0.5])),
            "d": Dense(np.array(2.0), np.array([1.0, -1.0])),
            "s": Scaled(np.array(1.25), 3),
            "m": Meta(np.array([3.0]), 2.0),
            "box": Box(np.array(2.0), np.array(4.0))}


def tree_fn(tr):
    s = anp.sum(tr["t"][0] ** 2) + tr["t"][1][0] * 3.0
    s = s + tr["p"].w * anp.sum(tr["p"].b) + tr["d"].w * anp.sum(tr["d"].b ** 2)
    s = s + tr["s"].x * tr["s"].n + anp.sum(tr["m"].v ** 2) * tr["m"].scale
    return s + tr["box"].a * tr["box"].b


def tree_grad_closed_form(tr):
    return {"t": (2 * tr["t"][0], [np.array(3.0), None]),
            "p": Pair(np.sum(tr["p"].b), np.full(1, tr["p"].w)),
            "d": Dense(np.sum(tr["d"].b ** 2), 2 * tr["d"].w * tr["d"].b),
            "s": Scaled(np.array(float(tr["s"].n)), tr["s"].n),
            "m": Meta(2 * tr["m"].v * tr["m"].scale, tr["m"].scale),
            "box": Box(tr["box"].b, tr["box"].a)}


def _assert_tree_close(got, want):
    gl, gt = tree_util.tree_flatten(got)
    wl, wt = tree_util.tree_flatten(want)
    assert gt == wt, f"structure {gt} != {wt}"
    for g, w in zip(gl, wl):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def _flat_vector(tr):
    return np.concatenate([np.ravel(l) for l in tree_util.tree_leaves(tr)])


def test_register_dataclass_signature_and_meta():
    d = _defaults(tree_util.register_dataclass)
    assert list(d)[:3] == ["cls", "data_fields", "meta_fields"]
    assert d["data_fields"] is None and d["meta_fields"] is None
    leaves, td = tree_util.tree_flatten(Meta(np.ones(2), 5.0))
    assert len(leaves) == 1                                 # scale is static aux data
    back = tree_util.tree_unflatten(td, [np.zeros(2)])
    assert isinstance(back, Meta) and back.scale == 5.0
    assert tree_util.tree_structure(Meta(1.0, 5.0)) != tree_util.tree_structure(Meta(1.0, 6.0))


def test_pytree_grad_and_value_and_grad():
    tr = make_tree()
    g = ad.grad(tree_fn)(tr)
    assert isinstance(g["p"], Pair) and isinstance(g["d"], Dense)
    assert isinstance(g["s"], Scaled) and g["s"].n == 3
    assert isinstance(g["m"], Meta) and g["m"].scale == 2.0 and isinstance(g["box"], Box)
    _assert_tree_close(g, tree_grad_closed_form(tr))
    v, g2 = ad.value_and_grad(tree_fn)(tr)
    assert np.isclose(v, tree_fn(tr))
    _assert_tree_close(g2, g)


def test_pytree_jvp_vjp_linearize():
    tr = make_tree()
    tan = tree_util.tree_map(lambda x: np.full(np.shape(x), 0.5), tr)
    want = _flat_vector(tree_grad_closed_form(tr)) @ _flat_vector(tan)
    out, tout = ad.jvp(tree_fn, (tr,), (tan,))
    assert np.isclose(out, tree_fn(tr)) and np.isclose(tout, want)
    _, lin = ad.linearize(tree_fn, tr)
    assert np.isclose(lin(tan), want)
    out, vjp_fn = ad.vjp(tree_fn, tr)
    cts = vjp_fn(1.0)
    assert isinstance(cts, tuple) and len(cts) == 1
    _assert_tree_close(cts[0], tree_grad_closed_form(tr))
    # a pytree output: the identity's vjp returns the cotangent tree itself
    _, ident_vjp = ad.vjp(lambda t: t, tr)
    _assert_tree_close(ident_vjp(tan)[0], tan)


@pytest.mark.parametrize("which", ["jacfwd", "jacrev", "jacobian"])
def test_pytree_jacobians(which):
    tr = make_tree()
    _assert_tree_close(getattr(ad, which)(tree_fn)(tr), tree_grad_closed_form(tr))


def test_pytree_hessian_and_hvp():
    p = {"a": np.array([1.0, 2.0]), "b": (np.array(0.5),)}
    f = lambda p: anp.sum(p["a"] ** 2) * p["b"][0]
    H = ad.hessian(f)(p)
    np.testing.assert_allclose(H["a"]["a"], 2 * p["b"][0] * np.eye(2))
    np.testing.assert_allclose(H["a"]["b"][0], 2 * p["a"])
    np.testing.assert_allclose(H["b"][0]["b"][0], 0.0)
    v = {"a": np.array([1.0, 0.0]), "b": (np.array(1.0),)}
    hv = ad.hvp(f, p, v)
    np.testing.assert_allclose(hv["a"], 2 * p["b"][0] * v["a"] + 2 * p["a"] * v["b"][0])
    np.testing.assert_allclose(hv["b"][0], 2 * p["a"] @ v["a"])


def test_pytree_vmap_in_axes_prefix():
    tr = make_tree()
    batched = tree_util.tree_map(lambda x: np.stack([x, 2 * x]), tr)
    np.testing.assert_allclose(ad.vmap(tree_fn)(batched),
                               [tree_fn(tr), tree_fn(tree_util.tree_map(lambda x: 2 * x, tr))])
    f = lambda p, x: p["w"] * x + p["b"]
    out = ad.vmap(f, in_axes=({"w": None, "b": 0}, 0))({"w": 2.0, "b": np.array([1.0, 2.0])},
                                                       np.array([10.0, 20.0]))
    np.testing.assert_allclose(out, [21.0, 42.0])
    outs = ad.vmap(lambda x: {"y": x * 2.0, "z": (x,)})(np.arange(3.0))
    np.testing.assert_allclose(outs["y"], [0.0, 2.0, 4.0])
    np.testing.assert_allclose(outs["z"][0], [0.0, 1.0, 2.0])


def test_pytree_jit_and_meta_fields_are_static():
    tr = make_tree()
    f = ad.jit(tree_fn, backend="interpret")
    assert np.isclose(f(tr), tree_fn(tr))
    out = ad.jit(lambda t: t, backend="interpret")(tr)
    assert isinstance(out["m"], Meta) and out["m"].scale == 2.0 and isinstance(out["box"], Box)
    _assert_tree_close(out, tr)
    g = ad.jit(lambda m: anp.sum(m.v) * m.scale, backend="interpret")
    assert np.isclose(g(Meta(np.ones(2), 2.0)), 4.0)
    assert np.isclose(g(Meta(np.ones(2), 3.0)), 6.0)       # a new meta value retraces
    assert g.cache_info().misses == 2


def test_pytree_checkpoint_and_custom_vjp():
    tr = make_tree()
    g = ad.grad(ad.checkpoint(tree_fn))(tr)
    _assert_tree_close(g, tree_grad_closed_form(tr))

    @ad.custom_vjp
    def scale(d):
        return Dense(d.w * 2.0, d.b * 2.0)

    scale.defvjp(lambda d: (scale(d), None), lambda _, ct: (Dense(ct.w * 2.0, ct.b * 2.0),))
    gd = ad.grad(lambda d: anp.sum(scale(d).b) + scale(d).w)(Dense(np.array(1.0), np.ones(2)))
    assert isinstance(gd, Dense) and gd.w == 2.0
    np.testing.assert_allclose(gd.b, [2.0, 2.0])


# ==========================================================================================
# Convention 1: numpy where numpy and JAX differ
# ==========================================================================================

def test_c1_lists_and_tuples_of_arrays():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    assert anp.mean([a, b]) == np.mean([a, b])
    np.testing.assert_allclose(anp.concatenate((a, b)), np.concatenate((a, b)))
    # mean over all 4 entries of [x, 3x] = (sum x + 3 sum x) / 4 = sum x
    np.testing.assert_allclose(ad.grad(lambda x: anp.mean([x, 3 * x]))(a), [1.0, 1.0])
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(anp.concatenate([x, x * x])))(a),
                               1 + 2 * a)


def test_c1_list_indexing():
    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(anp.sum(x[[0, 0]]), 2.0)
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(x[[0, 0, 2]] ** 2))(x),
                               [4 * x[0], 0.0, 2 * x[2]])


def test_c1_eigh_reads_lower_triangle():
    A = np.array([[2.0, 100.0], [1.0, 3.0]])         # upper triangle is garbage
    np.testing.assert_allclose(anp.linalg.eigh(A)[0], np.linalg.eigh(A)[0])
    sym = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(anp.linalg.eigh(A)[0], np.linalg.eigvalsh(sym))
    g = ad.grad(lambda a: anp.sum(anp.linalg.eigh(a)[0] ** 2))(A)
    # sum(lambda^2) = ||sym||_F^2 = a00^2 + a11^2 + 2 a10^2, read from the lower triangle
    np.testing.assert_allclose(g, [[2 * A[0, 0], 0.0], [4 * A[1, 0], 2 * A[1, 1]]], atol=1e-10)


def test_c1_clip_parameter_names():
    d = _defaults(anp.clip)
    assert list(d)[:3] == ["a", "a_min", "a_max"]
    x = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(anp.clip(x, a_min=0.0, a_max=1.0), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(anp.clip(a=x, a_min=0.0, a_max=1.0), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(anp.clip(x, a_min=0.0, a_max=1.0)))(x),
                               [0.0, 1.0, 0.0])


def test_c1_dtype_casts():
    x = np.array([1.7, -2.3])
    r = anp.int64(x)
    assert r.dtype == np.int64 and list(r) == [1, -2]
    assert anp.int64(2.7) == 2 and type(anp.int64(2.7)) is np.int64
    assert anp.float32(x).dtype == np.float32
    assert type(anp.float32(1.5)) is np.float32
    # traced: float32 casts (and its gradient flows), int64 has zero derivative
    g = ad.grad(lambda x: anp.sum(anp.float32(x) * 2.0))(x)
    np.testing.assert_allclose(g, [2.0, 2.0])
    assert g.dtype == np.float64
    out, t = ad.jvp(lambda x: anp.int64(x), (x,), (np.ones(2),))
    assert out.dtype == np.int64 and list(out) == [1, -2] and not np.any(t)


def test_c1_logsumexp_softmax_log_softmax():
    d = _defaults(anp.logsumexp)
    assert list(d)[:2] == ["a", "axis"] and d["axis"] is None and d["keepdims"] is False
    assert _defaults(anp.softmax)["axis"] == -1 and _defaults(anp.log_softmax)["axis"] == -1
    a = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 50.0]])
    assert np.isclose(anp.logsumexp(a), scipy.special.logsumexp(a))          # axis=None
    np.testing.assert_allclose(anp.logsumexp(a, axis=1, keepdims=True),
                               scipy.special.logsumexp(a, axis=1, keepdims=True))
    np.testing.assert_allclose(anp.softmax(a), scipy.special.softmax(a, axis=-1))
    np.testing.assert_allclose(anp.log_softmax(a), scipy.special.log_softmax(a, axis=-1))
    np.testing.assert_allclose(anp.softmax(a, axis=0), scipy.special.softmax(a, axis=0))
    # d logsumexp = softmax over everything
    np.testing.assert_allclose(ad.grad(anp.logsumexp)(a), scipy.special.softmax(a))


def test_c1_nn_has_the_same_plus_activations():
    a = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 50.0]])
    np.testing.assert_allclose(ad.nn.logsumexp(a), scipy.special.logsumexp(a))
    np.testing.assert_allclose(ad.nn.softmax(a), scipy.special.softmax(a, axis=-1))
    np.testing.assert_allclose(ad.nn.log_softmax(a), scipy.special.log_softmax(a, axis=-1))
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(ad.nn.relu(x), np.maximum(x, 0))
    np.testing.assert_allclose(ad.nn.sigmoid(x), scipy.special.expit(x))
    np.testing.assert_allclose(ad.nn.softplus(x), np.log1p(np.exp(x)))
    np.testing.assert_allclose(ad.nn.silu(x), x * scipy.special.expit(x))
    np.testing.assert_allclose(ad.nn.leaky_relu(x), np.where(x >= 0, x, 0.01 * x))
    np.testing.assert_allclose(ad.nn.elu(x), np.where(x > 0, x, np.expm1(x)))
    c = np.sqrt(2 / np.pi)
    np.testing.assert_allclose(ad.nn.gelu(x), 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x ** 3))))
    # derivatives: relu'(0) = 0, sigmoid' = s (1 - s), softplus' = sigmoid
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(ad.nn.relu(x)))(x), [0, 0, 0, 1, 1])
    s = scipy.special.expit(x)
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(ad.nn.sigmoid(x)))(x), s * (1 - s))
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(ad.nn.softplus(x)))(x), s)


# ==========================================================================================
# Convention 2: results on concrete inputs are numpy values
# ==========================================================================================

S = np.float64(0.5)
V = np.array([1.0, 2.0])
M = np.array([[2.0, 1.0], [1.0, 3.0]])


@ad.custom_jvp
def _cj(x):
    return anp.sin(x)


@_cj.defjvp
def _cj_jvp(p, t):
    return anp.sin(p[0]), anp.cos(p[0]) * t[0]


@ad.custom_vjp
def _cv(x):
    return anp.sin(x)


_cv.defvjp(lambda x: (anp.sin(x), x), lambda r, g: (anp.cos(r) * g,))

RESULTS = {
    # anp on plain numpy values: what numpy returns for a 0-d result is a numpy scalar
    "anp.sum": lambda: anp.sum(V),
    "anp.dot": lambda: anp.dot(V, V),
    "anp.mean": lambda: anp.mean(V),
    "anp.max": lambda: anp.max(V),
    "anp.std": lambda: anp.std(V),
    "anp.sin(python float)": lambda: anp.sin(0.5),
    "anp.sin(0-d array)": lambda: anp.sin(np.array(0.5)),
    "anp.einsum": lambda: anp.einsum("i,i->", V, V),
    "anp.trace": lambda: anp.trace(M),
    "anp.logsumexp": lambda: anp.logsumexp(V),
    "anp.linalg.det": lambda: anp.linalg.det(M),
    "anp.linalg.norm": lambda: anp.linalg.norm(V),
    "anp.astype(scalar)": lambda: anp.astype(S, np.float32),
    "anp.float32": lambda: anp.float32(1.5),
    "anp.sin(array)": lambda: anp.sin(V),
    "nn.sigmoid": lambda: ad.nn.sigmoid(0.0),
    "nn.relu": lambda: ad.nn.relu(S),
    # transforms
    "grad": lambda: ad.grad(lambda x: x * x)(S),
    "grad(0-d array)": lambda: ad.grad(lambda x: x * x)(np.array(0.5)),
    "grad(array)": lambda: ad.grad(lambda x: anp.sum(x * x))(V),
    "value_and_grad[0]": lambda: ad.value_and_grad(lambda x: x * x)(S)[0],
    "jvp out": lambda: ad.jvp(anp.sin, (S,), (S,))[0],
    "jvp tangent": lambda: ad.jvp(anp.sin, (S,), (S,))[1],
    "vjp out": lambda: ad.vjp(anp.sin, S)[0],
    "vjp cotangent": lambda: ad.vjp(anp.sin, S)[1](1.0)[0],
    "linearize out": lambda: ad.linearize(anp.sin, S)[0],
    "linearize jvp_fn": lambda: ad.linearize(anp.sin, S)[1](1.0),
    "jacfwd": lambda: ad.jacfwd(anp.sin)(S),
    "jacrev": lambda: ad.jacrev(anp.sin)(S),
    "jacobian": lambda: ad.jacobian(anp.sin)(S),
    "hessian": lambda: ad.hessian(anp.sin)(S),
    "hvp": lambda: ad.hvp(anp.sin, S, S),
    "vmap": lambda: ad.vmap(anp.sum)(M),
    "checkpoint": lambda: ad.checkpoint(anp.sin)(S),
    "checkpoint_sequential": lambda: ad.checkpoint_sequential([anp.sin, anp.cos])(S),
    "stop_gradient": lambda: ad.stop_gradient(S),
    "stop_gradient(0-d array)": lambda: ad.stop_gradient(np.array(0.5)),
    "custom_jvp": lambda: _cj(S),
    "custom_vjp": lambda: _cv(S),
    "grad custom_vjp": lambda: ad.grad(_cv)(S),
    "jit interpret": lambda: ad.jit(lambda x: x * 2.0, backend="interpret")(S),
    "lax.cond": lambda: ad.lax.cond(True, anp.sin, anp.cos, S),
    "lax.switch": lambda: ad.lax.switch(1, [anp.sin, anp.cos], S),
    "lax.while_loop": lambda: ad.lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, S),
    "lax.fori_loop": lambda: ad.lax.fori_loop(0, 3, lambda i, c: c * 2.0, S),
    "lax.scan carry": lambda: ad.lax.scan(lambda c, x: (c + x, c * x), S, V)[0],
    "lax.select": lambda: ad.lax.select(True, S, 2.0),
}


@pytest.mark.parametrize("name", list(RESULTS))
def test_c2_results_are_numpy_values(name):
    r = RESULTS[name]()
    assert _is_numpy_value(r), f"{name} returned {type(r).__name__} {r!r}"


def test_c2_anp_matches_numpy_types_exactly():
    # where numpy itself returns a 0-d array, so does anp (numpy's rule, not a scalar)
    for fn, args in [(np.where, (True, 1.0, 2.0)), (np.squeeze, (np.array([3.0]),)),
                     (np.sum, (V,)), (np.sin, (np.float64(0.5),)), (np.dot, (V, V))]:
        want = fn(*args)
        got = getattr(anp, fn.__name__)(*args)
        assert type(got) is type(want), f"anp.{fn.__name__}: {type(got)} vs {type(want)}"


def test_c2_plain_numpy_outside_transforms_is_ndarray():
    assert type(anp.sin(V)) is np.ndarray
    assert type(anp.reshape(V, (2, 1))) is np.ndarray


# ==========================================================================================
# Convention 3: result shapes follow JAX
# ==========================================================================================

def test_c3_vjp_fn_returns_tuple_one_per_primal():
    _, vjp_fn = ad.vjp(lambda x: x * 2.0, 1.0)
    r = vjp_fn(1.0)
    assert isinstance(r, tuple) and len(r) == 1 and r[0] == 2.0
    _, vjp_fn = ad.vjp(lambda x, y, z: x * y * z, 1.0, 2.0, 3.0)
    assert vjp_fn(1.0) == (6.0, 3.0, 2.0)


def test_c3_value_and_grad_has_aux():
    (value, aux), g = ad.value_and_grad(lambda x: (x ** 2, {"a": x + 1.0}), has_aux=True)(3.0)
    assert value == 9.0 and aux["a"] == 4.0 and g == 6.0
    g, aux = ad.grad(lambda x: (x ** 2, x + 1.0), has_aux=True)(3.0)
    assert g == 6.0 and aux == 4.0


def test_c3_grad_needs_scalar_but_accepts_size_one():
    np.testing.assert_allclose(ad.grad(lambda x: x * 2.0)(np.array([3.0])), [2.0])
    np.testing.assert_allclose(ad.grad(lambda x: anp.reshape(x ** 2, (1, 1)))(np.array([3.0])),
                               [6.0])
    with pytest.raises(errors.ShapeError, match="scalar"):
        ad.grad(lambda x: x * 2.0)(np.array([1.0, 2.0]))


# ==========================================================================================
# Convention 4: functional updates
# ==========================================================================================

def test_c4_at_updates_concrete_and_traced():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(anp.at(x)[0].set(5.0), [5.0, 2.0, 3.0])
    np.testing.assert_allclose(anp.at(x)[1].add(1.0), [1.0, 3.0, 3.0])
    np.testing.assert_allclose(anp.at(x)[2].multiply(2.0), [1.0, 2.0, 6.0])
    np.testing.assert_allclose(anp.at(x)[0].min(0.0), [0.0, 2.0, 3.0])
    np.testing.assert_allclose(anp.at(x)[0].max(7.0), [7.0, 2.0, 3.0])
    np.testing.assert_allclose(x, [1.0, 2.0, 3.0])                     # not mutated
    # traced: d/dx (5 x0 + x1^2 + x2^2) = [5, 2 x1, 2 x2]
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(x.at[0].set(5.0) * x))(x), [5.0, 4.0, 6.0])
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(x.at[1].multiply(3.0)))(x), [1.0, 3.0, 1.0])
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(x.at[2].add(x[0])))(x), [2.0, 1.0, 1.0])
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(anp.at(x)[0].set(0.0)))(x), [0.0, 1.0, 1.0])


def test_c4_setitem_on_traced_raises_typeerror_naming_at():
    def f(x):
        x[0] = 1.0
        return anp.sum(x)

    with pytest.raises(TypeError, match=r"\.at\["):
        ad.grad(f)(np.array([1.0, 2.0]))


# ==========================================================================================
# Convention 5: derivatives at kinks
# ==========================================================================================

def test_c5_kinks():
    assert ad.grad(anp.abs)(0.0) == 0.0 and anp.sign(0.0) == 0.0
    assert ad.grad(lambda x: x ** 0)(0.0) == 0.0
    assert ad.grad(lambda x: anp.power(x, 0.0))(0.0) == 0.0
    np.testing.assert_allclose(ad.grad(anp.max)(np.array([1.0, 3.0, 3.0])), [0.0, 0.5, 0.5])
    np.testing.assert_allclose(ad.grad(anp.min)(np.array([1.0, 1.0, 3.0])), [0.5, 0.5, 0.0])
    assert ad.grad(lambda x: anp.maximum(x, 1.0))(1.0) == 0.5
    assert ad.grad(lambda x, y: anp.minimum(x, y), argnums=(0, 1))(2.0, 2.0) == (0.5, 0.5)
    J = ad.jacobian(anp.sort)(np.array([2.0, 1.0, 2.0]))
    np.testing.assert_allclose(J, [[0, 1, 0], [0.5, 0, 0.5], [0.5, 0, 0.5]])
    np.testing.assert_allclose(ad.grad(anp.std)(np.array([3.0])), [0.0])


@pytest.mark.parametrize("x,y", [(3.0, 3.0), (3.0, -3.0), (-2.0, 2.0)])
def test_c5_hypot_second_derivatives_where_abs_equal(x, y):
    r = np.hypot(x, y)
    u = np.array([x, y]) / r
    want = (np.eye(2) - np.outer(u, u)) / r
    np.testing.assert_allclose(ad.hessian(lambda v: anp.hypot(v[0], v[1]))(np.array([x, y])),
                               want, rtol=1e-12)


# ==========================================================================================
# Convention 6 and "Errors": typed, right builtin, the user's line
# ==========================================================================================

@pytest.mark.parametrize("cls,base", [
    (errors.ConcretizationError, TypeError), (errors.DTypeError, TypeError),
    (errors.TracerLeakError, TypeError), (errors.ShapeError, ValueError),
    (errors.UnsupportedError, NotImplementedError)])
def test_c6_error_bases(cls, base):
    assert issubclass(cls, base)


def _line_of(fn, text):
    """The absolute line number of the first line of ``fn``'s source containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    for i, l in enumerate(lines):
        if text in l:
            return first + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def _assert_names_line(err, fn, text):
    line = _line_of(fn, text)
    assert f"{HERE}:{line}" in str(err), f"expected {HERE}:{line} in:\n{err}"


def test_c6_grad_of_bool_or_int_valued_function_raises_dtypeerror():
    def f_bool(x):
        return x > 0.0

    def f_int(x):
        return anp.int64(x * 3.0)

    with pytest.raises(errors.DTypeError) as info:
        ad.grad(f_bool)(1.0)
    assert "bool" in str(info.value)
    with pytest.raises(errors.DTypeError) as info:
        ad.grad(f_int)(1.0)
    assert "int" in str(info.value)
    with pytest.raises(TypeError):                  # catchable as the builtin
        ad.grad(f_bool)(np.array([1.0]))
    with pytest.raises(errors.DTypeError):          # integer inputs too
        ad.grad(lambda x: x * 1.0)(1)


def test_errors_name_the_users_line_shape_and_dtype():
    def bad_shape(x):
        y = anp.sin(x)
        return anp.sum(y + np.ones(3))          # SHAPE LINE

    with pytest.raises(errors.ShapeError) as info:
        ad.grad(bad_shape)(np.ones(2))
    _assert_names_line(info.value, bad_shape, "SHAPE LINE")


def test_errors_concretization_under_jit_names_line_and_lax_fix():
    def branchy(x):
        if anp.sum(x) > 0:                      # BRANCH LINE
            return x
        return -x

    with pytest.raises(errors.ConcretizationError) as info:
        ad.jit(branchy, backend="interpret")(np.ones(2))
    _assert_names_line(info.value, branchy, "BRANCH LINE")
    assert "ad.lax" in str(info.value)
    # outside jit the same Python `if` works (concrete trace)
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(branchy(x)))(np.ones(2)), [1.0, 1.0])


def test_errors_tracer_leak_names_line():
    leaked = []

    def use_leak():
        return leaked[0] * 2.0                   # LEAK LINE

    ad.grad(lambda x: (leaked.append(x), x * 2.0)[1])(1.0)
    with pytest.raises(errors.TracerLeakError) as info:
        use_leak()
    _assert_names_line(info.value, use_leak, "LEAK LINE")


def test_errors_unsupported_names_what_and_line():
    def loop(c):
        return ad.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, c)   # LOOP LINE

    assert ad.jvp(loop, (1.5,), (1.0,)) == (12.0, 8.0)       # forward mode works
    assert ad.grad(loop)(1.5) == 8.0     # on values the loop runs in Python: reverse mode too
    with pytest.raises(errors.UnsupportedError) as info:   # traced, it is one while equation
        ad.jit(ad.grad(loop))(1.5)
    assert "while_loop" in str(info.value)
    _assert_names_line(info.value, loop, "LOOP LINE")


def test_debug_nans_names_first_nan_equation(debug_nans):
    def f(x):
        y = anp.sin(x)
        z = anp.log(y - 2.0)                     # NAN LINE
        return anp.sum(anp.sqrt(z))

    x = np.array([1.0, 2.0])
    with np.errstate(invalid="ignore"):
        for transform in (lambda: ad.grad(f)(x), lambda: ad.jvp(f, (x,), (x,)),
                          lambda: ad.vjp(f, x), lambda: ad.vmap(f)(np.ones((2, 2))),
                          lambda: ad.jit(f, backend="interpret")(x)):
            with pytest.raises(errors.NaNError) as info:
                transform()
            assert isinstance(info.value, FloatingPointError)
            assert "'log'" in str(info.value)        # the first one, not sqrt after it
            _assert_names_line(info.value, f, "NAN LINE")
        # eagerly, on plain values, as JAX checks operations it runs one by one
        with pytest.raises(errors.NaNError, match="autodiff.numpy.log produced NaN") as info:
            f(x)
        _assert_names_line(info.value, f, "NAN LINE")
        assert anp.sqrt(np.array([4.0]))[0] == 2.0              # no NaN: nothing raised


def test_debug_nans_off_by_default():
    assert ad.config.debug_nans is False
    with np.errstate(invalid="ignore"):
        v, g = ad.value_and_grad(lambda x: anp.log(x - 2.0))(1.0)
    assert np.isnan(v) and g == -1.0


# ==========================================================================================
# Convention 7: signatures taken from JAX; keyword arguments pass through untouched
# ==========================================================================================

def test_c7_scan_signature():
    params = list(inspect.signature(ad.lax.scan).parameters)
    assert params[:5] == ["f", "init", "xs", "length", "reverse"]
    d = _defaults(ad.lax.scan)
    assert d["length"] is None and d["reverse"] is False
    carry, ys = ad.lax.scan(lambda c, x: (c + x, c), 0.0, np.array([1.0, 2.0, 3.0]), reverse=True)
    assert carry == 6.0
    np.testing.assert_allclose(ys, [5.0, 3.0, 0.0])
    carry, ys = ad.lax.scan(lambda c, _: (c + 1.0, c), 0.0, None, length=3)
    np.testing.assert_allclose(ys, [0.0, 1.0, 2.0])


def _kw_fn(x, scale=1.0, mode="a", w=None):
    assert mode == "b", f"mode reached the function as {mode!r}"
    out = anp.sum(x ** 2) * scale
    return out if w is None else out + anp.sum(w * x)


KX = np.array([1.0, 2.0])
KW = np.array([0.5, -1.0])
KGRAD = 2 * KX * 3.0 + KW          # d/dx (3 sum(x^2) + w.x); w is not differentiated
KWARGS = dict(scale=3.0, mode="b", w=KW)


@pytest.mark.parametrize("which", ["grad", "jacfwd", "jacrev", "jacobian"])
def test_c7_kwargs_pass_through_derivatives(which):
    np.testing.assert_allclose(getattr(ad, which)(_kw_fn)(KX, **KWARGS), KGRAD)


def test_c7_kwargs_pass_through_other_transforms():
    v, g = ad.value_and_grad(_kw_fn)(KX, **KWARGS)
    assert np.isclose(v, 15.0 + KW @ KX)
    np.testing.assert_allclose(g, KGRAD)
    np.testing.assert_allclose(ad.hessian(_kw_fn)(KX, **KWARGS), 6.0 * np.eye(2))
    xs = np.stack([KX, 2 * KX])
    # a keyword array is not mapped by vmap: the same w for every example
    np.testing.assert_allclose(ad.vmap(_kw_fn)(xs, **KWARGS),
                               [_kw_fn(KX, **KWARGS), _kw_fn(2 * KX, **KWARGS)])
    assert np.isclose(ad.checkpoint(_kw_fn)(KX, **KWARGS), 15.0 + KW @ KX)
    np.testing.assert_allclose(ad.grad(ad.checkpoint(_kw_fn))(KX, **KWARGS), KGRAD)
    text = str(ad.make_jaxpr(_kw_fn)(KX, **KWARGS))
    assert "3.0" in text
    jf = ad.jit(_kw_fn, static_argnames=("mode",), backend="interpret")
    assert np.isclose(jf(KX, **KWARGS), 15.0 + KW @ KX)
    np.testing.assert_allclose(ad.grad(jf)(KX, **KWARGS), KGRAD)


def test_c7_kwargs_reach_custom_rules():
    @ad.custom_jvp
    def f(x, scale=1.0):
        return anp.sin(x) * scale

    @f.defjvp
    def f_jvp(primals, tangents, scale=1.0):
        (x,), (t,) = primals, tangents
        return anp.sin(x) * scale, anp.cos(x) * t * scale

    @ad.custom_vjp
    def g(x, scale=1.0):
        return anp.sin(x) * scale

    g.defvjp(lambda x, scale=1.0: (anp.sin(x) * scale, (x, scale)),
             lambda res, ct: (anp.cos(res[0]) * ct * res[1],))
    for h in (f, g):
        assert np.isclose(h(0.5, scale=2.0), 2 * np.sin(0.5))
        assert np.isclose(ad.grad(h)(0.5, scale=2.0), 2 * np.cos(0.5))


def test_c7_defjvp_and_defvjp_spelling():
    @ad.custom_jvp
    def f(x):
        return anp.exp(x)

    rule = f.defjvp(lambda p, t: (anp.exp(p[0]), anp.exp(p[0]) * t[0]))
    assert callable(rule)                        # usable as a decorator: returns the rule
    assert np.isclose(ad.grad(f)(0.3), np.exp(0.3))


# ==========================================================================================
# Convention 8: checkpointing
# ==========================================================================================

def test_c8_policies_and_every():
    pol = ad.checkpoint_policies
    for name in ("everything_saveable", "nothing_saveable", "dots_saveable"):
        assert getattr(pol, name) is not None
    assert pol.save_only_these_names("a", "b") is not None
    assert pol.save_anything_except_these_names("a") is not None
    assert ad.every(3).k == 3 and ad.every(3) == ad.every(3)
    with pytest.raises(ValueError):
        ad.every(0)


@pytest.mark.parametrize("strategy", ["none", "sqrt_n", ad.every(2),
                                      ad.checkpoint_policies.dots_saveable,
                                      ad.checkpoint_policies.nothing_saveable,
                                      ad.checkpoint_policies.save_only_these_names("h")])
def test_c8_checkpoint_sequential_returns_callable(strategy):
    w = np.array([[0.5, -0.2], [0.1, 0.3]])
    layers = [lambda h: anp.tanh(anp.dot(w, h))] * 5
    seq = ad.checkpoint_sequential(layers, strategy)
    assert callable(seq)
    x = np.array([0.4, -0.7])
    ref = x
    for _ in range(5):
        ref = np.tanh(w @ ref)
    np.testing.assert_allclose(seq(x), ref, rtol=1e-12)
    f = lambda x: anp.sum(seq(x))
    np.testing.assert_allclose(ad.grad(f)(x), _num_grad(f, x), rtol=1e-6, atol=1e-9)


def test_c8_strategies_save_less():
    layers = [anp.sin] * 9
    n = {s: len([r for r in saved_residuals(
        lambda x: anp.sum(ad.checkpoint_sequential(layers, s)(x)), np.ones(4))
        if r.argument is None]) for s in ("none", "sqrt_n")}
    assert n["sqrt_n"] < n["none"], n


def test_c8_checkpoint_policy_argument():
    f = lambda x: anp.sum(anp.sin(anp.dot(x, x.T)))
    x = np.array([[0.2, 0.1], [0.3, -0.4]])
    want = ad.grad(f)(x)
    for pol in (None, ad.checkpoint_policies.dots_saveable,
                ad.checkpoint_policies.everything_saveable):
        np.testing.assert_allclose(ad.grad(ad.checkpoint(f, policy=pol))(x), want, rtol=1e-12)


# ==========================================================================================
# Convention 9 and the tape API: optimizers
# ==========================================================================================

def _quadratic(p):
    return anp.sum((p["w"] - 3.0) ** 2) + (p["b"][0] + 1.0) ** 2


@pytest.mark.parametrize("make", [lambda: ad.optim.sgd(0.1, momentum=0.9),
                                  lambda: ad.optim.adam(0.1),
                                  lambda: ad.optim.SGD(lr=0.1, momentum=0.9),
                                  lambda: ad.optim.Adam(lr=0.1)])
def test_c9_functional_optax_form(make):
    opt = make()
    params = {"w": np.array([0.0, 1.0]), "b": (np.array(0.5),)}
    state = opt.init(params)
    for _ in range(300):
        updates, state = opt.update(ad.grad(_quadratic)(params), state, params)
        params = ad.optim.apply_updates(params, updates)
    np.testing.assert_allclose(params["w"], [3.0, 3.0], atol=1e-4)
    np.testing.assert_allclose(params["b"][0], -1.0, atol=1e-4)


def test_c9_sgd_one_step_closed_form():
    opt = ad.optim.sgd(0.1)
    updates, _ = opt.update({"w": np.array([1.0, -2.0])}, opt.init({"w": np.zeros(2)}))
    np.testing.assert_allclose(updates["w"], [-0.1, 0.2])
    p = ad.optim.apply_updates({"w": np.ones(2, np.float32)}, {"w": np.full(2, 0.5)})
    assert p["w"].dtype == np.float32


@pytest.mark.parametrize("cls,kw", [(ad.optim.SGD, dict(lr=0.1, momentum=0.5)),
                                    (ad.optim.Adam, dict(lr=0.1))])
def test_c9_imperative_form_on_variables(cls, kw):
    w = ad.Variable(np.array([0.0, 1.0]))
    opt = cls([w], **kw)
    for _ in range(300):
        opt.zero_grad()
        loss = ((w - 3.0) ** 2).sum()
        loss.backward()
        opt.step()
    np.testing.assert_allclose(w.numpy(), [3.0, 3.0], atol=1e-4)


def test_tape_api_of_the_seed():
    x = ad.Variable(np.array([2.0, 3.0]))
    w = ad.Variable(np.array([1.0, 2.0]))
    assert x.requires_grad and x.is_leaf
    z = (x * w).sum()
    z.backward()
    np.testing.assert_allclose(x.grad, [1.0, 2.0])
    np.testing.assert_allclose(w.grad, [2.0, 3.0])
    assert ad.is_grad_enabled()
    with ad.no_grad():
        assert not ad.is_grad_enabled()
        y = x * 2.0
        with ad.enable_grad():
            assert ad.is_grad_enabled()
            y2 = x * 2.0
        assert not ad.is_grad_enabled()
    assert ad.is_grad_enabled()
    assert not y.requires_grad and y2.requires_grad
    d = (x * 3.0).detach()
    assert isinstance(d, ad.Variable) and not d.requires_grad and d.grad_fn is None
    np.testing.assert_allclose(d.numpy(), [6.0, 9.0])
    assert hasattr(ad, "Function")


# ==========================================================================================
# Convention 10: dtypes
# ==========================================================================================

def test_c10_float64_and_float32_kept():
    x64, x32 = np.array([1.0, 2.0]), np.array([1.0, 2.0], np.float32)
    f = lambda x: anp.sum(anp.sin(x) * 2.0)          # 2.0 is weak
    assert anp.multiply(x32, 2.0).dtype == np.float32
    assert ad.grad(f)(x64).dtype == np.float64
    assert ad.grad(f)(x32).dtype == np.float32
    assert ad.jvp(lambda x: x * 2.0, (x32,), (x32,))[1].dtype == np.float32
    assert ad.vjp(lambda x: x * 2.0, x32)[1](x32)[0].dtype == np.float32
    assert ad.jacobian(lambda x: x * 2.0)(x32).dtype == np.float32
    assert ad.hessian(lambda x: anp.sum(x ** 3))(x32).dtype == np.float32
    assert ad.vmap(lambda x: x * 2.0)(x32).dtype == np.float32


def test_c10_float16_computed_in_float32_and_cast_back():
    x = np.linspace(0.1, 2.0, 7).astype(np.float16)
    ulp = np.spacing(np.float16(8.0))                       # generous: values are < 8
    g = ad.grad(lambda x: anp.sum(anp.sin(x) * x))(x)
    assert g.dtype == np.float16
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(g.astype(np.float32), np.cos(x32) * x32 + np.sin(x32), atol=2 * ulp)
    out, t = ad.jvp(anp.exp, (x,), (np.ones_like(x),))
    assert out.dtype == t.dtype == np.float16
    np.testing.assert_allclose(out.astype(np.float32), np.exp(x32), rtol=1e-3)
    # accumulation in float32: in float16 arithmetic a running sum stalls at 2048
    ones = np.ones(5000, np.float16)
    assert anp.sum(ones) == 5000 and ad.jvp(anp.sum, (ones,), (ones,))[1] == 5000
    assert ad.grad(lambda x: anp.sum(x * x))(ones).dtype == np.float16
    assert ad.jvp(lambda a: anp.dot(a, a), (ones,), (ones,))[1] == 10000
    assert ad.vmap(anp.sum)(np.ones((2, 5000), np.float16)).tolist() == [5000, 5000]


_Z = np.array([1.0 + 1.0j, 2.0 - 0.5j])


@pytest.mark.parametrize("name,call,want", [
    # |z| summed: JAX's gradient convention conj(d/dx + i d/dy) = conj(z)/|z|
    ("grad", lambda z: ad.grad(lambda x: anp.sum(anp.abs(x)))(z), np.conj(_Z) / np.abs(_Z)),
    ("jvp", lambda z: ad.jvp(anp.sin, (z,), (z,))[1], np.cos(_Z) * _Z),
    ("vjp", lambda z: ad.vjp(anp.sin, z)[1](np.ones(2) + 0j)[0], np.cos(_Z)),
    ("vmap", lambda z: ad.vmap(anp.sin)(z), np.sin(_Z)),
    ("jacobian", lambda z: ad.jacobian(anp.sin, holomorphic=True)(z), np.diag(np.cos(_Z))),
    ("jit", lambda z: ad.jit(anp.sin, backend="interpret")(z), np.sin(_Z)),
])
def test_c10_complex_follows_jax(name, call, want):
    got = call(_Z)
    assert np.asarray(got).dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_c10_complex_promotion_and_output_contract():
    x32 = np.ones(2, np.float32)
    assert anp.multiply(x32, 1j).dtype == np.complex64                # Python complex is weak
    assert ad.jit(lambda x: x * 1j, backend="interpret")(x32).dtype == np.complex64
    assert anp.add(x32, np.ones(2, np.complex64)).dtype == np.complex64
    assert anp.add(np.ones(2), np.ones(2, np.complex64)).dtype == np.complex128
    # a real function of real inputs through complex intermediates: real gradient
    g = ad.grad(lambda x: anp.real(anp.sum(anp.exp(x * 1j))))(np.array([0.5, 1.0]))
    np.testing.assert_allclose(g, -np.sin([0.5, 1.0]), rtol=1e-14)
    assert g.dtype == np.float64
    with pytest.raises(errors.DTypeError, match="holomorphic=True"):
        ad.grad(lambda z: anp.sum(z * z))(_Z)
    with pytest.raises(errors.DTypeError, match="real inputs"):
        ad.jacfwd(anp.sin)(_Z)


# ==========================================================================================
# Control flow (ad.lax): both modes except while_loop (forward only)
# ==========================================================================================

def test_lax_control_flow_differentiable():
    assert np.isclose(ad.grad(lambda x: ad.lax.cond(x > 0, anp.sin, anp.cos, x))(0.5),
                      np.cos(0.5))
    assert np.isclose(ad.grad(lambda x: ad.lax.cond(x > 0, anp.sin, anp.cos, x))(-0.5),
                      -np.sin(-0.5))
    assert np.isclose(ad.grad(lambda x: ad.lax.switch(2, [anp.sin, anp.cos, anp.exp], x))(0.5),
                      np.exp(0.5))
    assert ad.grad(lambda x: ad.lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0) == 12.0
    # scan: c_{k+1} = c_k x_k, carry = c0 * 6; d/dc0 = 6
    assert ad.grad(lambda c: ad.lax.scan(lambda c, x: (c * x, c), c,
                                         np.array([1.0, 2.0, 3.0]))[0])(1.5) == 6.0
    np.testing.assert_allclose(
        ad.grad(lambda x: anp.sum(ad.lax.select(x > 1.5, x * 2, x * 3)))(np.array([1.0, 2.0])),
        [3.0, 2.0])
    # jvp agrees with grad through scan and cond
    f = lambda x: ad.lax.scan(lambda c, y: (anp.sin(c * y), c), x, np.array([0.5, 2.0]))[0]
    assert np.isclose(ad.jvp(f, (0.7,), (1.0,))[1], ad.grad(f)(0.7))
    assert np.isclose(ad.grad(f)(0.7), _num_grad(f, np.array(0.7)), rtol=1e-7)


# ==========================================================================================
# jit and the graph cache: the only Numba compiles of this file (three tiny kernels)
# ==========================================================================================

def test_jit_cache_info_clear_lower_and_capacity():
    old = ad.config.cache_size
    f = ad.jit(lambda x: anp.sum(anp.tanh(x) ** 2))
    try:
        x = np.array([0.5, -1.0])
        r = f(x)
        assert _is_numpy_value(r) and np.isclose(r, np.sum(np.tanh(x) ** 2))
        f(x + 1.0)                                            # same signature: a hit
        info = f.cache_info()
        assert (info.hits, info.misses, info.size, info.capacity) == (1, 1, 1, old)
        assert info._fields[:4] == ("hits", "misses", "size", "capacity")
        assert info._fields[4:] == ("compiled", "pending")
        lowered = f.lower(x)
        assert "tanh" in str(lowered.jaxpr) and "def " in lowered.source
        f.clear_cache()
        info = f.cache_info()
        assert (info.hits, info.misses, info.size) == (0, 0, 0)
        ad.config.update("cache_size", 1)
        assert f.cache_info().capacity == 1
        f(np.ones(2))
        f(np.ones((2, 2)))                                    # new signature evicts the old
        assert f.cache_info().size == 1 and f.cache_info().misses == 2
    finally:
        ad.config.update("cache_size", old)
    assert ad.config.cache_size == old and f.cache_info().capacity == old
    assert isinstance(ad.config.cache_dir, str)
    with pytest.raises(AttributeError):
        ad.config.update("no_such_option", 1)


def test_jit_pytree_static_and_kwargs_cpu():
    @ad.jit
    def step(p, x, n=1):
        return {"y": (p["w"] * x + p["b"][0]) * n, "s": anp.sum(p["w"])}

    p = {"w": np.array([1.0, 2.0]), "b": (np.array(0.5),)}
    out = step(p, np.array([3.0, 4.0]), n=2.0)
    np.testing.assert_allclose(out["y"], [7.0, 17.0])
    assert _is_numpy_value(out["s"]) and out["s"] == 3.0
    g = ad.jit(lambda x, k: x * k if k > 1 else x, static_argnums=(1,))
    assert g(np.float64(1.5), 3) == 4.5 and g(np.float64(1.5), 1) == 1.5
    # grad of a jitted function (inlined into the outer trace, no extra compile)
    np.testing.assert_allclose(ad.grad(lambda w: anp.sum(step({"w": w, "b": p["b"]}, w)["y"]))(
        p["w"]), 2 * p["w"])


def test_jit_backends_listed():
    for b in ("interpret",):
        assert ad.jit(lambda x: x + 1.0, backend=b)(np.float64(1.0)) == 2.0
    with pytest.raises((ValueError, TypeError, errors.UnsupportedError)):
        ad.jit(lambda x: x, backend="no-such-backend")(1.0)
