"""What ported autograd/JAX scripts trip over (issue 21): each test failed before the fix.

1. numpy arrays indexed by traced integers (lookup tables, images) under jit, grad, loops;
2. custom_vjp/custom_jvp bodies evaluated on concrete values, and ad.pure_callback;
3. registered pytrees whose aux data is a dict / list / numpy scalar, under jit;
4. the spellings ported code uses (argnum=, seterr, errstate, isscalar, Precision, ...).
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import ConcretizationError

# ----------------------------------------------------------------------------- item 1
TABLE = np.arange(10.0) ** 2                       # a module-level lookup table
IMG = np.arange(24.0).reshape(12, 2)


def _table_loop(x):
    # fori_loop body reading the global table at the loop counter
    return ad.lax.fori_loop(0, 6, lambda i, c: c * 0.5 + TABLE[i] * x, x)


def _table_loop_numpy(x):
    c = x
    for i in range(6):
        c = c * 0.5 + TABLE[i] * x
    return c


_table_loop_jit = ad.jit(_table_loop)


def test_global_table_in_fori_loop_under_jit():
    np.testing.assert_allclose(_table_loop_jit(1.5), _table_loop_numpy(1.5), rtol=1e-14)
    # d/dx is linear in x: the value at x = 1
    np.testing.assert_allclose(ad.jit(ad.grad(_table_loop))(1.5), _table_loop_numpy(1.0),
                               rtol=1e-14)
    assert type(TABLE) is np.ndarray                # put back after tracing


def test_closed_over_table_under_jit_grad_and_scan():
    table = np.array([0.5, -1.0, 2.0, 3.0])

    def f(x, i):
        return table[i] * x ** 2 + table[(i + 1) % 4]

    jf = ad.jit(f)
    for i in range(4):
        np.testing.assert_allclose(jf(3.0, i), table[i] * 9 + table[(i + 1) % 4], rtol=1e-15)
        np.testing.assert_allclose(ad.grad(f)(3.0, i), table[i] * 6.0, rtol=1e-15)
    ys = ad.lax.scan(lambda c, i: (c + table[i], c), 0.0, np.array([3, 1, 1]))[1]
    np.testing.assert_allclose(ys, [0.0, 3.0, 2.0])
    np.testing.assert_allclose(ad.vmap(lambda i: table[i])(np.array([2, 0])), [2.0, 0.5])
    assert type(table) is np.ndarray


def test_image_indexed_by_floored_coordinates_under_grad():
    # autograd's fluid simulation: img[floor(v).astype(int), 0] with v traced
    def f(v):
        ix = anp.floor(v).astype(int)
        return anp.sum(IMG[ix, 0] * v + IMG[ix, 1] * v ** 2)

    v = np.array([3.5, 1.25, 7.75])
    ix = np.floor(v).astype(int)
    expected = IMG[ix, 0] + 2 * v * IMG[ix, 1]
    np.testing.assert_allclose(ad.grad(f)(v), expected, rtol=1e-15)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(v), expected, rtol=1e-14)


def test_np_take_on_a_closed_over_table_under_jit():
    np.testing.assert_allclose(ad.jit(lambda i: np.take(TABLE, i))(np.array([3, 4])),
                               [9.0, 16.0])


def test_table_reached_through_a_dict_names_the_line_and_the_fix():
    tables = {"t": np.arange(4.0)}

    def f(i):
        return tables["t"][i]                       # a dict entry is not swapped
    with pytest.raises(ConcretizationError, match="anp.take") as e:
        ad.jit(f)(2)
    assert "test_ported_gaps.py" in str(e.value)
    np.testing.assert_allclose(ad.jit(lambda i: anp.take(tables["t"], i, axis=0))(2), 2.0)


def test_numpy_on_a_swapped_table_stays_numpy():
    table = np.array([1.0, 2.0, 4.0])

    def f(x):
        s = float(np.sum(table))                    # plain numpy on the table still works
        return x * s + table.max()
    np.testing.assert_allclose(ad.jit(f)(2.0), 18.0)
    np.testing.assert_allclose(ad.grad(f)(2.0), 7.0)


# ----------------------------------------------------------------------------- item 3
class _Layer:
    def __init__(self, w, meta):
        self.w, self.meta = w, meta


ad.tree_util.register_pytree_node(_Layer, lambda l: ((l.w,), l.meta),
                                  lambda meta, children: _Layer(children[0], meta))


def _layer_loss(layer, x):
    return anp.sum(anp.tanh(layer.w * x)) * layer.meta["scale"]


_layer_loss_jit = ad.jit(_layer_loss)


def test_dict_aux_data_under_jit_is_a_cache_key_by_value():
    x = np.linspace(-1.0, 1.0, 3)
    w = np.array([0.5, 1.0, 2.0])
    meta = {"scale": 2.0, "names": ["a", "b"], "mask": np.array([True, False])}
    np.testing.assert_allclose(_layer_loss_jit(_Layer(w, meta), x),
                               2.0 * np.sum(np.tanh(w * x)), rtol=1e-14)
    before = _layer_loss_jit.cache_info()
    same = {"names": ["a", "b"], "mask": np.array([True, False]), "scale": 2.0}   # equal value
    _layer_loss_jit(_Layer(w * 2, same), x)
    assert _layer_loss_jit.cache_info().hits == before.hits + 1
    other = dict(meta, scale=3.0)                  # aux is static: a new value retraces
    np.testing.assert_allclose(_layer_loss_jit(_Layer(w, other), x),
                               3.0 * np.sum(np.tanh(w * x)), rtol=1e-14)
    assert _layer_loss_jit.cache_info().misses == before.misses + 1
    g = ad.jit(ad.grad(_layer_loss))(_Layer(w, meta), x)
    np.testing.assert_allclose(g.w, 2.0 * x / np.cosh(w * x) ** 2, rtol=1e-13)
    assert g.meta == {"scale": 2.0, "names": ["a", "b"], "mask": g.meta["mask"]}


def test_list_and_numpy_scalar_aux_data_and_a_clear_error_for_the_rest():
    f = ad.jit(lambda l: l.w * l.meta[0])
    np.testing.assert_allclose(f(_Layer(np.ones(2), [np.float64(1.5), np.int64(2)])), [1.5, 1.5])

    class Opaque:
        __hash__ = None

    with pytest.raises(ad.errors.PyTreeError, match="_Layer.*unhashable Opaque") as e:
        f(_Layer(np.ones(2), Opaque()))
    assert isinstance(e.value, TypeError) and "test_ported_gaps.py" in str(e.value)


# ----------------------------------------------------------------------------- item 2
@ad.custom_vjp
def halve_until_small(x):
    """x / 2**k, with k the number of halvings that bring x to <= 1 (a Python loop)."""
    y = x
    while y > 1.0:                       # the line the jit error names
        y = y / 2.0
    return y


def _halve_fwd(x):
    y = halve_until_small(x)
    return y, y / x                      # the local slope 2**-k


halve_until_small.defvjp(_halve_fwd, lambda slope, g: (g * slope,))


def test_custom_vjp_with_a_python_loop_eagerly_under_grad_and_jvp():
    assert halve_until_small(10.0) == 0.625
    np.testing.assert_allclose(ad.grad(halve_until_small)(10.0), 1 / 16)
    np.testing.assert_allclose(ad.grad(lambda x: halve_until_small(x) * x)(10.0), 2 * 10 / 16)
    np.testing.assert_allclose(ad.jvp(halve_until_small, (3.0,), (1.0,))[1], 0.25)
    # second order: d2/dx2 (x^3 / 16) = 6x / 16
    np.testing.assert_allclose(ad.grad(ad.grad(lambda x: halve_until_small(x) * x ** 2))(10.0),
                               6 * 10 / 16)


def test_custom_vjp_with_a_python_loop_under_jit_names_the_line():
    with pytest.raises(ConcretizationError, match="ad.lax") as e:
        ad.jit(halve_until_small)(10.0)
    assert "test_ported_gaps.py" in str(e.value)
    import inspect
    line = inspect.getsource(halve_until_small.fun).splitlines().index(
        "    while y > 1.0:                       # the line the jit error names")
    assert f":{halve_until_small.fun.__code__.co_firstlineno + line}" in str(e.value)


@ad.custom_jvp
def newton_sqrt(a):
    """sqrt(a) by Newton's iteration with a Python stopping test."""
    x = a if a > 1.0 else 1.0
    while abs(x * x - a) > 1e-15 * a:
        x = 0.5 * (x + a / x)
    return x


@newton_sqrt.defjvp
def _newton_sqrt_jvp(primals, tangents):
    (a,), (t,) = primals, tangents
    s = newton_sqrt(a)
    return s, t / (2.0 * s)


def test_custom_jvp_with_a_python_loop_eagerly_and_under_grad():
    np.testing.assert_allclose(newton_sqrt(2.0), np.sqrt(2.0), rtol=1e-15)
    np.testing.assert_allclose(ad.grad(newton_sqrt)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-14)
    np.testing.assert_allclose(ad.grad(lambda a: newton_sqrt(a) * a)(4.0), 3.0, rtol=1e-14)
    np.testing.assert_allclose(ad.hessian(lambda a: newton_sqrt(a) * a ** 2)(4.0),
                               3.75 * 4.0 ** 0.5, rtol=1e-13)   # d2/da2 a^2.5


@ad.custom_vjp
def numpy_cumprod(x):
    """autograd's @primitive case: a body in plain numpy, called on values."""
    return ad.pure_callback(np.cumprod, ad.ShapeDtypeStruct(x.shape, x.dtype), x)


def _cumprod_fwd(x):
    y = numpy_cumprod(x)
    return y, (x, y)


def _cumprod_bwd(res, g):
    x, y = res
    # d y_j / d x_i = y_j / x_i for j >= i: reverse cumulative sums of g * y, over x
    rc = ad.pure_callback(lambda v: np.cumsum(v[::-1])[::-1],
                          ad.ShapeDtypeStruct(x.shape, x.dtype), g * y)
    return (rc / x,)


numpy_cumprod.defvjp(_cumprod_fwd, _cumprod_bwd)
_cumprod_loss = ad.jit(ad.value_and_grad(lambda x: anp.sum(numpy_cumprod(x) * anp.arange(4.0))))


def test_pure_callback_inside_jit_with_a_custom_vjp_derivative():
    x = np.array([1.5, -0.5, 2.0, 0.75])

    def loss_np(x):
        return np.sum(np.cumprod(x) * np.arange(4.0))
    v, g = _cumprod_loss(x)
    np.testing.assert_allclose(v, loss_np(x), rtol=1e-15)
    eps = 1e-6
    fd = [(loss_np(x + eps * e) - loss_np(x - eps * e)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(g, fd, rtol=1e-8)
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(numpy_cumprod(x) * anp.arange(4.0)))(x),
                               g, rtol=1e-14)
    src = _cumprod_loss.lower(x).source
    assert "objmode" in src and "call_host" in src       # compiled, calling back to Python


def test_pure_callback_eager_vmap_and_errors():
    spec = ad.ShapeDtypeStruct((3,), np.float64)
    np.testing.assert_array_equal(ad.pure_callback(np.sort, spec, np.array([3.0, 1.0, 2.0])),
                                  [1.0, 2.0, 3.0])
    xs = np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    for method in ("sequential", "expand_dims", "broadcast_all"):
        out = ad.vmap(lambda x: ad.pure_callback(lambda v: np.sort(v, axis=-1), spec, x,
                                                 vmap_method=method))(xs)
        np.testing.assert_array_equal(out, np.sort(xs, axis=1))
    with pytest.raises(ad.errors.UnsupportedError, match="custom_vjp"):
        ad.grad(lambda x: anp.sum(ad.pure_callback(np.sin, spec, x)))(xs[0])
    with pytest.raises(ad.errors.ShapeError, match=r"shape \(2,\), declared \(3,\)"):
        ad.pure_callback(lambda v: v[:2], spec, xs[0])
    with pytest.raises(ad.errors.ShapeError, match="test_ported_gaps.py"):
        ad.jit(lambda x: ad.pure_callback(lambda v: v[:2], spec, x))(xs[0])


# ----------------------------------------------------------------------------- item 4
def test_autograd_argnum_spelling():
    f = lambda x, y: x * anp.sin(y)                 # noqa: E731
    np.testing.assert_allclose(ad.grad(f, argnum=1)(2.0, 0.5), 2.0 * np.cos(0.5))
    v, g = ad.value_and_grad(f, argnum=0)(2.0, 0.5)
    np.testing.assert_allclose((v, g), (2.0 * np.sin(0.5), np.sin(0.5)))
    np.testing.assert_allclose(ad.grad(f, argnum=(0, 1))(2.0, 0.5), (np.sin(0.5), 2 * np.cos(0.5)))


def test_numpy_error_state_and_isscalar():
    assert anp.seterr is np.seterr and anp.geterr is np.geterr
    with anp.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            np.float64(1.0) / np.float64(0.0)
    assert anp.isscalar(1.0) and not anp.isscalar(np.ones(1)) and not anp.isscalar([1.0])
    seen = []
    ad.grad(lambda x: seen.append(anp.isscalar(x)) or x * 2.0)(3.0)
    ad.grad(lambda x: seen.append(anp.isscalar(x)) or anp.sum(x))(np.ones(2))
    assert seen == [True, False]


def test_precision_spellings_compute_float64_exact_products():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    P = ad.lax.Precision
    assert P("highest") is P.HIGHEST and P("default") is P.DEFAULT and P(1) is P.HIGH
    for prec in (None, P.HIGHEST, "high", (P.DEFAULT, "highest")):
        np.testing.assert_array_equal(anp.dot(a, b, precision=prec), a @ b)
        np.testing.assert_array_equal(anp.matmul(a, b, precision=prec), a @ b)
        np.testing.assert_allclose(anp.einsum("ij,jk->ik", a, b, precision=prec), a @ b,
                                   rtol=1e-15)
        np.testing.assert_array_equal(ad.lax.dot(a, b, precision=prec), a @ b)
    out = ad.jit(lambda a, b: anp.matmul(a, b, precision=P.HIGHEST))(a, b)
    np.testing.assert_allclose(out, a @ b, rtol=1e-15)
    g = ad.grad(lambda a: anp.sum(anp.tensordot(a, b, 1, precision="highest")))(a)
    np.testing.assert_allclose(g, np.broadcast_to(b.sum(1), (3, 4)), rtol=1e-15)
    assert anp.dot(a, b, preferred_element_type=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="precision must be"):
        anp.dot(a, b, precision="fp8")


def test_lax_in_dim_helpers():
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(ad.lax.index_in_dim(x, 1, axis=1, keepdims=False), x[:, 1])
    f = ad.jit(lambda x, i: ad.lax.dynamic_slice_in_dim(x, i, 2, axis=1))
    np.testing.assert_array_equal(f(x, 1), x[:, 1:3])
    np.testing.assert_array_equal(f(x, 3), x[:, 2:4])           # clamped, as in JAX
    u = ad.jit(lambda x, i: ad.lax.dynamic_update_slice_in_dim(x, np.zeros((1, 4)), i, 0))(x, 2)
    want = x.copy()
    want[2] = 0
    np.testing.assert_array_equal(u, want)


def test_device_put_is_the_identity_on_the_cpu_and_array_is_a_type():
    x = np.ones(3)
    assert ad.device_put(x) is x and ad.device_put(x, "cpu") is x
    assert ad.device_get(ad.device_put({"a": x}))["a"] is x
    np.testing.assert_array_equal(ad.device_put([1.0, 2.0]), [np.array(1.0), np.array(2.0)])
    with pytest.raises(ad.errors.UnsupportedError, match="not available"):
        ad.device_put(x, "tpu")
    assert ad.grad(lambda v: anp.sum(ad.device_put(v) * 2.0))(x).tolist() == [2.0] * 3
    assert isinstance(x, ad.Array) and isinstance(anp.sum(x), ad.Array)
    assert not isinstance(1.0, ad.Array) and not isinstance("x", ad.Array)
    assert issubclass(np.ndarray, ad.Array) and anp.Array is ad.Array
    with pytest.raises(TypeError, match="isinstance checks"):
        anp.Array(x)                                 # a type, not a constructor
    kinds = []
    ad.jit(lambda v: kinds.append(isinstance(v, ad.Array)) or v)(x)
    assert kinds == [True]


def test_pure_callback_with_several_results_one_unused_under_jit():
    # numba refuses an object-mode result nothing reads after the block; the emitter reads
    # every result once. Two callbacks in one kernel: each keeps its own results.
    from jit_util import assert_compiled

    def host(x):
        return np.sin(x), np.cos(x)

    def f(x):
        spec = (ad.ShapeDtypeStruct(x.shape, x.dtype),) * 2
        a, _ = ad.pure_callback(host, spec, x)
        c, d = ad.pure_callback(host, spec, 2.0 * x)
        return a * 2.0 + d

    x = np.array([0.1, 0.7, -1.2])
    out = assert_compiled(ad.jit(f), x)
    np.testing.assert_allclose(out, 2.0 * np.sin(x) + np.cos(2.0 * x), rtol=1e-15)
