"""Port of JAX's own transformation-API tests (``tests/api_test.py`` and
``tests/custom_api_test.py`` of jax-ml/jax) to autodiff.

Each test cites the JAX test it ports in its docstring. ``jax`` became ``ad``, ``jnp``
became ``anp``; JAX's reference computations (numpy, closed forms) are kept as the expected
values. Tests that depend on XLA, devices, sharding, dtypes numpy lacks, JAX's float32
default or JAX internals were not ported; neither were those that check a difference the
API contract settles the other way (vmap maps keyword arguments in JAX, not here; results
are numpy arrays, not ``jax.Array``). The module docstring of each section lists them.
"""
import collections
import copy
import functools
import operator
import re
from functools import partial

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax
from autodiff import tree_util

jit, grad, vmap, jvp, vjp = ad.jit, ad.grad, ad.vmap, ad.jvp, ad.vjp
value_and_grad, linearize = ad.value_and_grad, ad.linearize
jacfwd, jacrev, hessian = ad.jacfwd, ad.jacrev, ad.hessian


def allclose(a, b, **kw):
    """JAX's assertAllClose on pytrees: same structure, close leaves."""
    la, ta = tree_util.tree_flatten(a)
    lb, tb = tree_util.tree_flatten(b)
    assert ta == tb, (ta, tb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=kw.get("rtol", 1e-7),
                                   atol=kw.get("atol", 1e-10))


# ------------------------------------------------------------------------------------------
# JitTest. Not ported: repr/__getstate__ (PjitFunction internals), device/default_device/
# platform tests, donation invalidation (assertDeleted: numpy buffers are never deleted),
# lower().compile() cost/memory analysis and compiler options (XLA), tokens, live
# executables, masked arrays, no_tracing/no_execution (JAX internals).
# ------------------------------------------------------------------------------------------

def test_jit_decorator_factory():
    """JitTest.test_jit_decorator_factory"""
    @jit(static_argnames=['flag'])
    def func(x, flag):
        return x if flag else -x

    assert func(1, True) == 1
    assert func(1, False) == -1


def test_jit_of_noncallable():
    """JitTest.test_jit_of_noncallable"""
    with pytest.raises(TypeError, match="callable"):
        jit(3)


def test_jit_of_generator():
    """JitTest.test_jit_of_generator"""
    def gen(x):
        yield x

    with pytest.raises(TypeError, match="Expected a function, got a generator function"):
        jit(gen)


@pytest.mark.parametrize("one,two,three,four,five", [
    (1, 2, 3, 4, 5),
    tuple(np.asarray(i, np.int32) for i in (1, 2, 3, 4, 5)),
])
def test_jit_static_args(one, two, three, four, five):
    """JitTest.test_jit_static_args"""
    side = []

    def f(x, y, z, flag=False, flag2=False):
        del flag2
        assert flag
        side.append(None)
        return 100 * x + 10 * y + z

    f1 = jit(f, static_argnums=(3, 4))
    assert f1(one, two, three, True, False) == 123
    assert len(side) == 1
    assert f1(one, two, three, True, False) == 123
    assert len(side) == 1
    assert f1(two, one, three, True, False) == 213
    assert len(side) == 1
    assert f1(two, one, three, True, True) == 213
    assert len(side) == 2

    side[:] = []
    f2 = jit(f, static_argnums=(0, 2, 3, 4))
    assert f2(1, 2, 3, True, False) == 123
    assert len(side) == 1
    assert f2(1, 3, 3, True, False) == 133
    assert len(side) == 1
    assert f2(2, 2, 3, True, False) == 223
    assert len(side) == 2
    assert f2(2, 4, 3, True, False) == 243
    assert len(side) == 2
    assert f2(2, 4, 3, True, True) == 243
    assert len(side) == 3
    assert f2(2, 5, 3, True, True) == 253
    assert len(side) == 3


def test_static_args_equality():
    """JitTest.test_static_args_equality"""
    class A:
        def __hash__(self):
            return 1

        def __eq__(self, other):
            return isinstance(other, A)

    side = []

    def f(x, static_arg):
        del static_arg
        side.append(None)
        return x * 100

    f1 = jit(f, static_argnums=(1,))
    assert f1(1, A()) == 100
    assert len(side) == 1
    assert f1(1, A()) == 100
    assert len(side) == 1
    assert f1.cache_info().currsize == 1 if hasattr(f1.cache_info(), "currsize") else True


@pytest.mark.parametrize("one,two,three", [
    (1, 2, 3), tuple(np.asarray(i, np.int32) for i in (1, 2, 3))])
def test_jit_kwargs(one, two, three):
    """JitTest.test_jit_kwargs"""
    side = []

    def f(x, y, z):
        side.append(None)
        return 100 * x + 10 * y + anp.asarray(z).astype(anp.asarray(y).dtype)

    f = jit(f)
    assert f(one, two, three) == 123
    assert len(side) == 1
    assert f(one, two, three) == 123
    assert len(side) == 1
    assert f(one, two, z=three) == 123
    n = len(side)   # JAX retraces for the keyword; either is fine
    assert f(one, two, z=three) == 123
    assert len(side) == n
    f(one, two, z=np.zeros(3))  # doesn't crash


def test_complex_support():
    """JitTest.test_complex_support"""
    assert jit(lambda x: x + 1)(1 + 1j) == 2 + 1j


@pytest.mark.parametrize("argnum_type", ["static_argnums", "donate_argnums"])
def test_jit_argnums_overflow_error(argnum_type):
    """JitTest.test_jit_argnums_overflow_error"""
    def f(a, b, c):
        ...

    def g(a, /, b, *, c):
        ...

    def h(a, *args):
        ...

    def i():
        ...

    jit(f, **{argnum_type: (0, 1)})
    jit(g, **{argnum_type: (0, 1)})
    jit(f, **{argnum_type: (0, 1, -3)})
    with pytest.raises(ValueError):
        jit(f, **{argnum_type: (0, 1, 3)})
    with pytest.raises(ValueError):
        jit(f, **{argnum_type: (0, 1, -4)})
    with pytest.raises(ValueError):
        jit(g, **{argnum_type: (0, 1, 3)})
    with pytest.raises(ValueError):
        jit(g, **{argnum_type: (0, 1, -3)})
    jit(h, **{argnum_type: (0, 999)})
    jit(h, **{argnum_type: (0, -999)})
    jit(i, static_argnums=())
    jit(i)


@pytest.mark.parametrize("argnum_type", ["static_argnames", "donate_argnames"])
def test_jit_argnames_validation(argnum_type):
    """JitTest.test_jit_argnames_validation"""
    def f(a, b, c):
        ...

    def g(a, b, **kwargs):
        ...

    def h(a, /, b, c, *args, **kwargs):
        ...

    jit(f, **{argnum_type: ("b", "c")})
    with pytest.raises(ValueError):
        jit(f, **{argnum_type: ("b", "c", "not_defined")})
    jit(g, **{argnum_type: ("a", "b", "not_defined")})
    jit(h, **{argnum_type: ("b", "c")})
    jit(h, **{argnum_type: ("b", "c", "not_defined")})
    with pytest.raises(ValueError):
        jit(h, **{argnum_type: ("a", "c")})
    with pytest.raises(ValueError):
        jit(h, **{argnum_type: ("args", "c")})


def test_jit_with_many_args_works():
    """JitTest.test_jit_with_many_args_works"""
    @jit
    def f(args_list):
        return sum(args_list)

    assert f(list(range(500))) == sum(range(500))


def test_specify_donate_argnums_and_argnames():
    """JitTest.test_specify_donate_argnums_and_argnames (values only: numpy buffers are not
    deleted, donation is a hint)"""
    @ad.jit(donate_argnums=0, donate_argnames=('inp2', 'inp3'))
    def f(inp1, inp2, inp3):
        return inp1 * 2, inp2 * 2, inp3 * 2

    x = np.ones((2, 5)) * 4
    y = np.ones((2, 5)) * 2
    z = np.ones((2, 5))
    out = f(x, inp2=y, inp3=z)
    allclose(out, (x * 2, y * 2, z * 2))


def test_donate_argnames_with_args_and_kwargs():
    """JitTest.test_donate_argnames_with_args / test_donate_argnums_with_kwargs (values)"""
    f = ad.jit(lambda inp1: inp1 * 2, donate_argnames='inp1')
    allclose(f(np.ones((2, 5)) * 4), np.full((2, 5), 8.0))
    g = ad.jit(lambda inp1: inp1 * 2, donate_argnums=0)
    allclose(g(inp1=np.ones((2, 5)) * 4), np.full((2, 5), 8.0))


def test_intersecting_static_and_donate_argnames():
    """JitTest.test_intersecting_static_and_donate_argnames"""
    with pytest.raises(ValueError, match="static.*donated"):
        ad.jit(lambda x: x, static_argnames='x', donate_argnames='x')


def test_jit_global_cache():
    """JitTest.test_jit_global_cache"""
    state = {"should_run": True}

    def f(x):
        assert state["should_run"]
        return x

    jit(f)(2)
    state["should_run"] = False
    jit(f)(3)


def test_jit_shallow_and_deep_copy():
    """JitTest.test_jit_shallow_copy / test_jit_deep_copy"""
    assert jit(lambda x: copy.copy(x))(1) == 1
    assert jit(lambda x: copy.deepcopy(x))(1) == 1


def test_disable_jit():
    """JitTest.test_disable_jit"""
    effects = []

    @jit
    def f(x):
        effects.append(1)
        return x

    with ad.disable_jit():
        f(2)
        f(2)
    assert len(effects) == 2
    f(2)
    f(2)
    assert len(effects) == 3


def test_static_argnum_on_method():
    """JitTest.test_static_argnum_on_method"""
    class A:
        @jit(static_argnums=(0,))
        def my_func_jit(self, x):
            return x + 2

    assert A().my_func_jit(3) == 5


def test_jit_bad_input():
    """JitTest.test_jit_bad_input (the message names the argument; JAX's wording differs)"""
    def f(x):
        return x

    with pytest.raises(TypeError):
        jit(f)(anp.int32)


@pytest.mark.xfail(strict=True, reason="unhashable static argument raises TypeError (with a "
                   "message naming the fix); JAX raises ValueError")
def test_jit_raises_on_non_hashable_static_argnum():
    """JitTest.test_jit_raises_on_first_invocation_on_non_hashable_static_argnum /
    test_cpp_jit_raises_on_non_hashable_static_argnum"""
    f = lambda x, y: x + 3
    jitted_f = jit(f, static_argnums=(1,))
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        jitted_f(1, np.asarray(1))
    jitted_f = jit(f, static_argnums=[1])
    assert jitted_f(1, 1) == 4
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        jitted_f(1, np.asarray(1))


def test_jit_raises_other_exceptions_when_hashing_fails():
    """JitTest.test_cpp_jit_raises_other_exceptions_when_hashing_fails"""
    class A:
        def __hash__(self):
            raise ValueError

    f = ad.jit(lambda x: x + 1, static_argnums=(0,))
    with pytest.raises(ValueError) as e:
        f(A())
    assert e.value.args == ()    # no extra message


def test_jit_wrapped_attributes():
    """JitTest.test_jit_wrapped_attributes"""
    def f(x: int) -> int:
        """docstring of f."""
        return x + 1
    f.some_value = 4
    jf = jit(f)
    for attr in ["doc", "name", "module", "qualname", "annotations"]:
        assert getattr(f, f"__{attr}__") == getattr(jf, f"__{attr}__"), attr
    assert f.some_value == jf.some_value


def test_jit_python_builtin():
    """JitTest.test_jit_python_builtin"""
    x = np.array([1, 2])
    jit_add = jit(operator.add, static_argnums=(1,))
    np.testing.assert_array_equal(jit_add(x, 1), x + 1)


def test_jit_with_static_argnames():
    """JitTest.test_jit_with_static_argnames"""
    def f(x):
        assert x == 'foo'
        return 1

    f_nums = jit(f, static_argnums=0)
    assert f_nums('foo') == 1
    assert f_nums(x='foo') == 1
    f_names = jit(f, static_argnames='x')
    assert f_names('foo') == 1
    assert f_names(x='foo') == 1


def test_new_static_argnum_on_keyword_and_default_arguments():
    """JitTest.test_new_static_argnum_on_keyword_arguments /
    test_new_static_argnum_with_default_arguments"""
    assert jit(lambda x: x, static_argnums=0)(x=4) == 4
    assert jit(lambda x=4: x, static_argnums=0)() == 4


def _is_tracer(x):
    return not isinstance(x, (int, float, str, np.ndarray, np.generic))


@pytest.mark.xfail(strict=True, reason="ad.jit always links static_argnums and static_argnames "
                   "through the signature; JAX skips that when the other is given explicitly")
def test_jit_with_mismatched_static_argnames():
    """JitTest.test_jit_with_mismatched_static_argnames"""
    expect = {}

    def f(x, y):
        assert _is_tracer(x) == expect["x"], (type(x), expect)
        assert _is_tracer(y) == expect["y"], (type(y), expect)
        return 1

    f_nums = jit(f, static_argnums=1, static_argnames=())
    expect.update(x=True, y=False)
    assert f_nums(2, 'foo') == 1
    expect.update(x=True, y=True)
    assert f_nums(1, y=2) == 1

    f_names = jit(f, static_argnums=(), static_argnames='y')
    expect.update(x=True, y=True)
    assert f_names(2, 3) == 1
    expect.update(x=True, y=False)
    assert f_names(1, y='foo') == 1

    f_mixed = jit(f, static_argnums=(1,), static_argnames='x')
    expect.update(x=True, y=False)
    assert f_mixed(2, 'foo') == 1
    expect.update(x=True, y=True)
    assert f_mixed(1, y=3) == 1
    expect.update(x=False, y=True)
    assert f_mixed(x='foo', y=3) == 1


@pytest.mark.parametrize("num_args", [2, 3, 4])
def test_jit_with_pruned_args(num_args):
    """JitTest.test_jit_with_pruned_args"""
    def f(*args):
        used = np.array(2)
        return args[1] + used
    np.testing.assert_allclose(jit(f)(*range(num_args)), 3)


def test_jit_lower_compile():
    """JitTest.test_jit_lower_compile (values only; no XLA text)"""
    def f(x):
        return anp.sqrt(x ** 2) + 1.

    f_jit = jit(f)
    lowered = f_jit.lower(1.)
    compiled = lowered.compile()
    assert compiled(1.) == 2.
    assert f_jit(1.) == 2.


def test_jit_static_argnums_requires_type_equality():
    """JitTest.test_jit_static_argnums_requires_type_equality"""
    state = {"run": True}

    @jit(static_argnums=(0,))
    def f(k):
        assert state["run"]
        return k

    for x in [1, True, 1.0]:
        state["run"] = True
        assert f(x) == x
        state["run"] = False
        assert f(x) == x


def test_cache_key_defaults():
    """JitTest.test_cache_key_defaults (cache_info() instead of _cache_size())"""
    f = jit(lambda x: (x ** 2).sum())
    assert f.cache_info().misses == 0
    x = np.arange(5.0)
    for _ in range(3):
        f(x)
    info = f.cache_info()
    assert info.misses == 1 and info.hits == 2


def test_jit_nan_times_zero():
    """JitTest.test_jit_nan_times_zero"""
    def f(x):
        return 1 + x * 0
    assert np.isnan(f(np.nan))
    assert np.isnan(jit(f)(np.nan))


def test_sum_of_closed_over_bools():
    """JitTest.test_sum_of_closed_over_bools"""
    N = 32
    mask = anp.ones(N, dtype=anp.bool_)
    assert anp.sum(mask) == N
    assert ad.jit(lambda m: anp.sum(m))(mask) == N
    assert ad.jit(lambda: anp.sum(mask))() == N


# ------------------------------------------------------------------------------------------
# APITest: grad / value_and_grad / jacobians. Not ported: test_ad_weak_types (weak types
# are a JAX dtype notion), test_fwd_and_bwd (api.fwd_and_bwd, JAX internal), device_put
# tests (sharding), test_std_basis (api._std_basis, internal), test_large_device_constant
# (XLA constants), test_unimplemented_interpreter_rules (core.Primitive internals).
# ------------------------------------------------------------------------------------------

def test_grad_item():
    """APITest.test_grad_item"""
    def f(x):
        if x.astype(bool).item():
            return x ** 2
        else:
            return x
    assert grad(f)(2.0) == 4


def test_jit_item():
    """APITest.test_jit_item"""
    def f(x):
        return x.item()
    x = np.array(1.0)
    assert f(x) == x
    with pytest.raises(ad.errors.ConcretizationError):
        jit(f)(x)


@pytest.mark.parametrize("transform", [ad.grad, ad.jacfwd, ad.jacrev])
def test_grad_wrap(transform):
    """APITest.test_grad_wrap"""
    @jit(static_argnames=['flag'])
    @transform
    def my_function(x, flag):
        return x if flag else anp.zeros_like(x)

    assert my_function(1.0, False) == 0.0
    assert my_function(1.0, True) == 1.0


def test_grad_bad_input():
    """APITest.test_grad_bad_input / test_bad_input"""
    with pytest.raises(TypeError, match="type str: 'foo'"):    # JAX: "is not a valid JAX type"
        grad(lambda x: x)("foo")
    with pytest.raises(TypeError):
        jit(lambda x: x)("foo")


def test_grad_argnums():
    """APITest.test_grad_argnums"""
    def f(x, y, z, flag=False):
        assert flag
        return 1.0 * x + 2.0 * y + 3.0 * z

    assert grad(f)(1.0, 1.0, 1.0, flag=True) == 1.0
    assert grad(f, argnums=1)(1.0, 1.0, 1.0, flag=True) == 2.0
    assert grad(f, argnums=(2, 0))(1.0, 1.0, 1.0, flag=True) == (3.0, 1.0)


def test_value_and_grad_argnums():
    """APITest.test_value_and_grad_argnums"""
    def f(x, y, z, flag=False):
        assert flag
        return 1.0 * x + 2.0 * y + 3.0 * z

    y = f(1.0, 1.0, 1.0, flag=True)
    assert value_and_grad(f)(1.0, 1.0, 1.0, flag=True) == (y, 1.0)
    assert value_and_grad(f, argnums=1)(1.0, 1.0, 1.0, flag=True) == (y, 2.0)
    assert value_and_grad(f, argnums=(2, 0))(1.0, 1.0, 1.0, flag=True) == (y, (3.0, 1.0))


def test_grad_of_jit():
    """APITest.test_grad_of_jit"""
    side = []

    @jit
    def f(x):
        side.append(None)
        return x * x

    assert grad(f)(1.0) == 2.0
    assert len(side) == 1
    assert grad(f)(2.0) == 4.0
    assert len(side) == 1


def test_jit_of_grad():
    """APITest.test_jit_of_grad"""
    side = []

    @jit
    def f(x):
        side.append(None)
        return x * x

    g = jit(grad(f))
    assert g(1.0) == 2.0
    assert len(side) == 1
    assert g(2.0) == 4.0
    assert len(side) == 1


def test_grad_tuple_unit_nonscalar_output():
    """APITest.test_grad_tuple_output / test_grad_unit_output / test_grad_nonscalar_output"""
    # JAX: TypeError "Gradient only defined for scalar-output functions"; here a TypeError
    # for a non-array output and ShapeError (a ValueError) for a non-scalar array
    msg = "scalar"
    with pytest.raises(TypeError, match=msg):
        grad(lambda x: (x, x))(1.0)
    with pytest.raises(TypeError, match=msg):
        grad(lambda x: ())(np.zeros(3))
    with pytest.raises(ad.errors.ShapeError, match=msg):
        grad(lambda x: x)(np.zeros(3))


def test_grad_nonscalar_output_hint():
    """APITest.test_grad_nonscalar_output_hint (a size-1 output is accepted as the scalar,
    API.md convention 3, so only the size-3 case raises)"""
    with pytest.raises(ad.errors.ShapeError) as cm:
        value_and_grad(lambda x: x)(np.zeros(3))
    assert "(3,)" in str(cm.value)
    assert grad(lambda x: anp.array([x ** 2]))(1.0) == 2.0


def test_unwrapped_numpy():
    """APITest.test_unwrapped_numpy: numpy's own exp on a traced value"""
    def f(x):
        return np.exp(x)

    with pytest.raises(Exception):
        grad(f)(np.zeros(3))


def test_binop_mismatch():
    """APITest.test_binop_mismatch (numpy's ValueError; ShapeError under grad)"""
    def f(x, y):
        return x + y

    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        f(anp.zeros(3), anp.zeros(4))
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        grad(lambda x, y: f(x, y).sum())(np.zeros(3), np.zeros(4))


def test_dot_mismatch():
    """APITest.test_dot_mismatch"""
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        grad(lambda x, y: anp.dot(x, y))(np.zeros(3), np.zeros(4))


def test_abstract_error_message():
    """APITest.test_abstract_error_message"""
    for castfun in [float, complex, int]:
        def f(x):
            return castfun(x)

        with pytest.raises(TypeError):
            jit(f)(1.0)


def test_switch_value_jit():
    """APITest.test_switch_value_jit"""
    def f(x):
        y = x > 0
        if y:
            return x
        else:
            return -x

    assert grad(f)(1.0) == 1.0
    assert grad(f)(-1.0) == -1.0
    with pytest.raises(ad.errors.ConcretizationError):
        jit(f)(1)


def test_list_index_and_range_err():
    """APITest.test_list_index_err / test_range_err / test_casts / test_cast_int"""
    L = [1, 2, 3]

    def f(n):
        return L[n]

    assert jit(f, static_argnums=(0,))(0) == L[0]
    with pytest.raises(TypeError):
        jit(f)(0)

    def g(x, n):
        for i in range(n):
            x = x + i
        return x

    assert jit(g, static_argnums=(1,))(0, 5) == 10
    with pytest.raises(TypeError):
        jit(g)(0, 5)
    for castfun in [hex, oct, int]:
        with pytest.raises(TypeError):
            jit(lambda x: castfun(x))(0)


def test_vmap_inconsistent_sizes_error_message():
    """APITest.test_vmap_inconsistent_sizes_constructs_proper_error_message (+ _starargs)"""
    def f(x1, x2, g):
        return g(x1, x2)

    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes"):
        vmap(f, (0, 0, None))(anp.ones(2), anp.ones(3), anp.add)

    def h(x, *args):
        return x - sum(args)

    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes"):
        vmap(h)(anp.ones(4), anp.ones(2), anp.ones(2))


def test_jacobian():
    """APITest.test_jacobian"""
    R = np.random.RandomState(0).randn
    A = R(4, 3)
    x = R(3)
    f = lambda x: anp.dot(A, x)
    allclose(jacfwd(f)(x), A)
    allclose(jacrev(f)(x), A)
    f = lambda x: anp.tanh(anp.dot(A, x))
    allclose(jacfwd(f)(x), jacrev(f)(x))


def test_hessian():
    """APITest.test_hessian"""
    R = np.random.RandomState(0).randn
    A = R(4, 4)
    x = R(4)
    f = lambda x: anp.dot(x, anp.dot(A, x))
    allclose(hessian(f)(x), A + A.T)


def test_hessian_holomorphic():
    """APITest.test_hessian_holomorphic (complex128: float64 is the default here)"""
    R = np.random.RandomState(0).randn
    A = R(4, 4)
    x = R(4).astype('complex128') * (1 + 2j)
    f = lambda x: anp.dot(x, anp.dot(A.astype(x.dtype), x))
    allclose(hessian(f, holomorphic=True)(x), (A + A.T).astype(x.dtype))


def test_hessian_aux():
    """APITest.test_hessian_aux"""
    R = np.random.RandomState(0).randn
    A = R(4, 4)
    x = R(4)
    f = lambda x: (anp.dot(x, anp.dot(A, x)), x)
    h, aux = hessian(f, has_aux=True)(x)
    allclose(h, A + A.T)
    allclose(aux, x)


@pytest.mark.parametrize("jacfun", [ad.jacfwd, ad.jacrev])
def test_jacobian_on_pytrees(jacfun):
    """APITest.test_jacobian_on_pytrees"""
    allclose(jacfun(lambda x, y: (x, y))(0., 1.), (1., 0.))
    allclose(jacfun(lambda x, y: (x, y), 1)(0., 1.), (0., 1.))
    allclose(jacfun(lambda x, y: (x, y), (0, 1))(0., 1.), ((1., 0.), (0., 1.)))
    allclose(jacfun(lambda x: x[:2])((1., 2., 3.)), ((1., 0., 0.), (0., 1., 0.)))
    R = np.random.RandomState(0).randn
    x = R(2)
    y = R(3)
    ans = jacfun(lambda x, y: {'x': x, 'xy': anp.outer(x, y)})(x, y)
    expected = {'x': np.eye(2), 'xy': np.kron(np.eye(2), y[:, None]).reshape(2, 3, 2)}
    allclose(ans, expected)


def test_hessian_on_pytrees():
    """APITest.test_hessian_on_pytrees"""
    ans = hessian(lambda x: anp.array(x) ** 2)((1., 2.))
    expected = ((np.array([2., 0.]), np.array([0., 0.])),
                (np.array([0., 0.]), np.array([0., 2.])))
    allclose(ans, expected)


def test_issue1372():
    """APITest.test_issue1372"""
    def quad(x):
        return anp.dot(x, x)

    def f(x, u):
        return quad(x) + quad(u)

    x, u = np.ones(5), np.ones(2)
    rev, fwd = jacrev, jacfwd
    for o in (rev, fwd):
        for i in (rev, fwd):
            assert o(i(f, 0), 0)(x, u).shape == (5, 5)
            assert o(i(f, 1), 1)(x, u).shape == (2, 2)
            assert o(i(f, 1), 0)(x, u).shape == (2, 5)
            assert o(i(f, 0), 1)(x, u).shape == (5, 2)
    allclose(fwd(rev(f, 0), 0)(x, u), 2 * np.eye(5))


def test_grad_and_aux_basic():
    """APITest.test_grad_and_aux_basic"""
    g, aux = grad(lambda x: (x ** 3, [x ** 2]), has_aux=True)(3.)
    allclose(g, grad(lambda x: x ** 3)(3.))
    allclose(aux, [9.])


def test_grad_and_aux_error():
    """APITest.test_grad_and_aux_error"""
    with pytest.raises(TypeError, match="pair"):
        grad(lambda x: (1, 2, 3), has_aux=True)(1.)
    with pytest.raises(TypeError, match="pair"):
        grad(lambda x: x, has_aux=True)(1.)
    with pytest.raises(TypeError, match="pair"):
        grad(lambda x: (x,), has_aux=True)(1.)


def test_grad_and_aux_nested():
    """APITest.test_grad_and_aux_nested"""
    def f(x):
        g, aux = grad(lambda x: (x ** 3, [x ** 3]), has_aux=True)(x)
        return aux[0]

    f2 = lambda x: x ** 3
    assert grad(f)(4.) == grad(f2)(4.)
    assert jit(grad(f))(4.) == grad(f2)(4.)
    assert jit(grad(jit(f)))(4.) == grad(f2)(4.)

    def f(x):
        g, aux = grad(lambda x: (x ** 3, [x ** 3]), has_aux=True)(x)
        return aux[0] * anp.sin(x)

    f2 = lambda x: x ** 3 * anp.sin(x)
    allclose(grad(f)(4.), grad(f2)(4.))
    allclose(jit(grad(f))(4.), grad(f2)(4.))
    allclose(jit(grad(jit(f)))(4.), grad(f2)(4.))


def test_grad_and_aux_constant():
    """APITest.test_grad_and_aux_constant"""
    g, aux = grad(lambda x: (x ** 3, [4.]), has_aux=True)(4.)
    assert g == grad(lambda x: x ** 3)(4.)
    assert aux == [4.]
    g, aux = grad(lambda x: (x ** 3, [x ** 2, 4.]), has_aux=True)(4.)
    assert g == grad(lambda x: x ** 3)(4.)
    assert aux == [4. ** 2, 4.]


def test_grad_and_aux_no_tracers():
    """APITest.test_grad_and_aux_no_tracers"""
    def f(x):
        aux = dict(identity=x, p1=x + 1)
        return x ** 2, aux

    _, aux = ad.grad(f, has_aux=True)(3.)
    assert isinstance(aux, dict)
    for val in aux.values():
        assert not isinstance(val, ad.core.Tracer)
    assert aux == {"identity": 3., "p1": 4.}


@pytest.mark.parametrize("jacfun", [ad.jacfwd, ad.jacrev])
def test_jac_and_aux_basic(jacfun):
    """APITest.test_jacfwd_and_aux_basic / test_jacrev_and_aux_basic"""
    jac, aux = jacfun(lambda x: (x ** 3, [x ** 2]), has_aux=True)(3.)
    allclose(jac, jacfun(lambda x: x ** 3)(3.))
    allclose(aux, [9.])


@pytest.mark.parametrize("jacfun", [ad.jacfwd, ad.jacrev])
def test_jac_and_aux_nested(jacfun):
    """APITest.test_jacfwd_and_aux_nested / test_jacrev_and_aux_nested"""
    def f(x):
        jac, aux = jacfun(lambda x: (x ** 3, [x ** 3]), has_aux=True)(x)
        return aux[0]

    f2 = lambda x: x ** 3
    assert jacfun(f)(4.) == jacfun(f2)(4.)
    assert jit(jacfun(f))(4.) == jacfun(f2)(4.)
    assert jit(jacfun(jit(f)))(4.) == jacfun(f2)(4.)

    def f(x):
        jac, aux = jacfun(lambda x: (x ** 3, [x ** 3]), has_aux=True)(x)
        return aux[0] * anp.sin(x)

    f2 = lambda x: x ** 3 * anp.sin(x)
    allclose(jacfun(f)(4.), jacfun(f2)(4.))
    allclose(jit(jacfun(f))(4.), jacfun(f2)(4.))
    allclose(jit(jacfun(jit(f)))(4.), jacfun(f2)(4.))


def test_jvp_and_aux_basic():
    """APITest.test_jvp_and_aux_basic"""
    fun = lambda x: (x ** 3, [x ** 2])
    primals, tangents, aux = ad.jvp(fun, (3.,), (4.,), has_aux=True)
    expected_primals, expected_tangents = ad.jvp(lambda x: x ** 3, (3.,), (4.,))
    allclose(primals, expected_primals)
    allclose(tangents, expected_tangents)
    assert primals == 27. and tangents == 108.
    assert aux == [3. ** 2]


def test_jvp_mismatched_arguments():
    """APITest.test_jvp_mismatched_arguments (float16/float32 tangent dtype check not
    ported: float16 is computed in float32 here, API.md convention 10)"""
    # JAX: "primal and tangent arguments to jax.jvp must have the same tree structure"
    with pytest.raises(TypeError, match="tangents"):
        ad.jvp(lambda x, y: x * y, (np.float32(2),), ())
    with pytest.raises(TypeError):
        ad.jvp(lambda x, y: x * y, (np.float32(2),), [np.float32(2)])
    fun = lambda x: x + 1
    msg = "tangent shape .* does not match primal shape"   # JAX: "different primal and..."
    with pytest.raises(ValueError, match=msg):
        ad.jvp(fun, (np.array([1., 2., 3.]),), (np.array([1., 2., 3., 4.]),))
    with pytest.raises(ValueError, match=msg):
        ad.jvp(fun, (np.float32(10.),), (np.array([1., 2., 3.], dtype=np.float32),))
    with pytest.raises(ValueError, match=msg):
        ad.jvp(fun, (np.array([1., 2., 3.], dtype=np.float32),), (np.float32(20.),))
    with pytest.raises(ValueError, match=msg):
        ad.jvp(fun, (np.array([1., 2., 3.]),), (20.,))


def test_jvp_non_tuple_arguments():
    """APITest.test_jvp_non_tuple_arguments"""
    def f(x, y):
        return x + y
    # JAX: "... must be tuples or lists; found float and tuple"
    with pytest.raises(TypeError, match="must be tuples"):
        ad.jvp(f, 0., (1.,))
    with pytest.raises(TypeError, match="must be tuples"):
        ad.jvp(f, (0.,), np.array([1., 2.]))


def test_vjp_mismatched_arguments():
    """APITest.test_vjp_mismatched_arguments (the float16 cotangent case not ported)"""
    _, pullback = ad.vjp(lambda x, y: x * y, np.float32(3), np.float32(4))
    # JAX raises ValueError "unexpected tree structure"; here a TypeError naming both
    with pytest.raises(TypeError, match="structure"):
        pullback((np.float32(7), np.float32(100)))


def test_vjp_bad_cotangent_shape():
    """APITest.test_vjp_bad_cotangent_shape"""
    x = np.ones((2, 5), dtype=np.float32)
    y = np.ones((5, 3), dtype=np.float32)
    res, pullback = ad.vjp(lambda x, y: anp.matmul(x, y), x, y)
    with pytest.raises(ValueError, match=r"\(2, 4\)"):
        pullback(np.ones((2, 4), dtype=np.float32))


def test_vjp_too_many_args():
    """APITest.test_vjp_too_many_args"""
    def f(x):
        return x, x
    _, pullback = ad.vjp(f, 1.)
    with pytest.raises(TypeError):     # JAX: "f was called with 2 arguments"
        pullback(1., 1.)


def test_jvp_jit_cached():
    """APITest.test_jvp_jit_cached"""
    def func(x):
        def inner(y):
            return y * x
        res1 = ad.jit(inner)(4.)
        res2 = ad.jit(inner)(5.)
        return res1 + res2

    allclose(ad.jvp(func, (5.,), (1.,)), (45., 9.))


def test_linear_transpose_abstract():
    """APITest.test_linear_transpose_abstract"""
    x = ad.ShapeDtypeStruct((3,), np.dtype(np.float32))
    y = np.arange(3, dtype=np.float32)
    z, = ad.linear_transpose(lambda x: 2 * x, x)(y)
    np.testing.assert_array_equal(z, 2 * y)
    assert z.dtype == np.float32


def test_linear_transpose_integer():
    """APITest.test_linear_transpose_integer"""
    actual, = ad.linear_transpose(lambda x: 2 * x, 1)(3)
    assert actual == 6


def test_linear_transpose_dce():
    """APITest.test_linear_transpose_dce"""
    f = jit(lambda x: (2 * x, x > 0))
    g = lambda x: f(x)[0]
    out, = ad.linear_transpose(g, 1.)(1.)
    assert out == 2.


def test_linear_transpose_error():
    """APITest.test_linear_transpose_error"""
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        ad.linear_transpose(lambda x: 2. * x, 1)
    transpose_fun = ad.linear_transpose(lambda x: [x, x], 1.0)
    with pytest.raises(TypeError, match="cotangent tree does not match"):
        transpose_fun(1.0)
    transpose_fun = ad.linear_transpose(lambda x: anp.stack([x, x]), 1.0)
    with pytest.raises(TypeError, match="cotangent type does not match"):
        transpose_fun(1.0)
    transpose_fun = ad.linear_transpose(lambda x: 1j * x, 1.0)
    with pytest.raises(TypeError, match="cotangent type does not match"):
        transpose_fun(1.0)
    transpose_fun = ad.linear_transpose(lambda x: x, 1.0)
    with pytest.raises(TypeError, match="cotangent type does not match"):
        transpose_fun(1j)


def test_linear_transpose_fun_jit():
    """APITest.test_linear_transpose_fun_jit"""
    f = lambda x: 2. * x

    @jit(static_argnums=0)
    def transpose(f, x):
        return ad.linear_transpose(f, x)

    transposed = transpose(f, 1.)
    assert jit(lambda f, x: f(x))(transposed, 3.) == (6.,)


def test_linear_transpose_complex():
    """APITest.test_linear_transpose_complex"""
    actual, = ad.linear_transpose(lambda x: (1 + 2j) * x, 1j)(3 + 4j)
    assert actual == -5 + 10j


def test_linear_transpose_zeros():
    """APITest.test_linear_transpose_zeros"""
    actual, = ad.linear_transpose(lambda x: x[0], [1., 2.])(3.)
    assert actual == [3., 0.]


def test_complex_grad_raises_error():
    """APITest.test_complex_grad_raises_error / test_complex_output_jacrev_raises_error /
    test_complex_input_jacfwd_raises_error"""
    with pytest.raises(TypeError):
        grad(lambda x: anp.sin(x))(1 + 2j)
    with pytest.raises(TypeError):
        jacrev(lambda x: anp.sin(x))(1 + 2j)
    with pytest.raises(TypeError):
        jacfwd(lambda x: anp.sin(x))(1 + 2j)


def test_holomorphic_grad():
    """APITest.test_holomorphic_grad"""
    out = grad(lambda x: anp.sin(x), holomorphic=True)(1 + 2j)
    allclose(out, 2.0327230070196656 - 3.0518977991518j)


def test_nonholomorphic_grad():
    """APITest.test_nonholomorphic_grad"""
    zs = 0.5j * np.arange(5) + np.arange(5)

    def f(z):
        return anp.sum(anp.cos(anp.abs(z)))

    expected = np.array([0. + 0.j, -0.80430663 + 0.40215331j, -0.70368982 + 0.35184491j,
                         0.1886467 - 0.09432335j, 0.86873727 - 0.43436864j])
    allclose(grad(f)(zs), expected, rtol=1e-6, atol=1e-7)


def test_nonholomorphic_jacrev():
    """APITest.test_nonholomorphic_jacrev"""
    zs = 0.5j * np.arange(5) + np.arange(5)

    def f(z):
        return anp.cos(anp.linalg.norm(2 * z))

    allclose(jacrev(f)(zs), grad(f)(zs))


def test_heterogeneous_jacfwd_jacrev():
    """APITest.test_heterogeneous_jacfwd / test_heterogeneous_jacrev (float64/float32 in
    place of float16/float32: float16 is computed in float32 here)"""
    x = np.array([2.0], dtype=np.float64)
    y = np.array([3.0], dtype=np.float32)
    a = (x, y)

    def f(tup):
        x, y = tup
        return x, y, x + y

    one = lambda d: np.array(1., dtype=d)
    zero = lambda d: np.array(0., dtype=d)
    f64, f32 = np.float64, np.float32
    actual = jacfwd(f)(a)
    desired = ((one(f64), zero(f64)), (zero(f32), one(f32)), (one(f64), one(f64)))
    allclose(actual, desired)
    for g, w in zip(tree_util.tree_leaves(actual), tree_util.tree_leaves(desired)):
        assert g.dtype == w.dtype
    actual = jacrev(f)(a)
    desired = ((one(f64), zero(f32)), (zero(f64), one(f32)), (one(f64), one(f32)))
    allclose(actual, desired)
    for g, w in zip(tree_util.tree_leaves(actual), tree_util.tree_leaves(desired)):
        assert g.dtype == w.dtype


def test_heterogeneous_grad():
    """APITest.test_heterogeneous_grad"""
    x = np.array(1.0 + 1j)
    y = np.array(2.0)

    def f(tup):
        x, y = tup
        return anp.square(anp.abs(x)) + y

    actual = grad(f)((x, y))
    allclose(actual, (np.array(2 - 2j), np.array(1.)))
    assert actual[0].dtype == np.complex128 and actual[1].dtype == np.float64


# ------------------------------------------------------------------------------------------
# APITest: pytrees, ShapeDtypeStruct, eval_shape, linearize, integer inputs, vmap specs.
# Not ported: test_eval_shape_trace_cache_share (jit tracing-cache counter, JAX internal),
# test_eval_shape_out_shardings (sharding), test_lax_logistic (TPU lowering),
# test_float0_error's lax.add branch, test_shape_dtype_struct_non_jax_dtypes (bytes/object
# dtypes are metadata only in JAX), test_vmap_in_axes_tuple_with_kwargs_error /
# _with_kwonly_error / test_vmap_mismatched_keyword / the kwargs case of the inconsistent
# sizes message (vmap passes keyword arguments through unmapped here: docs/porting.md).
# ------------------------------------------------------------------------------------------

float0 = ad.dtypes.float0


def test_namedtuple_transparency():
    """APITest.test_namedtuple_transparency"""
    Point = collections.namedtuple("Point", ["x", "y"])

    def f(pt):
        return anp.sqrt(pt.x ** 2 + pt.y ** 2)

    pt = Point(1., 2.)
    g = ad.grad(f)(pt)
    assert isinstance(g, Point)
    allclose(tuple(g), (1 / np.sqrt(5), 2 / np.sqrt(5)))
    allclose(f(pt), ad.jit(f)(pt))


def test_namedtuple_subclass_transparency():
    """APITest.test_namedtuple_subclass_transparency"""
    Point = collections.namedtuple("Point", ["x", "y"])

    class ZeroPoint(Point):
        def is_zero(self):
            return (self.x == 0) and (self.y == 0)

    pt = ZeroPoint(0., 0.)

    def f(pt):
        return 0. if pt.is_zero() else anp.sqrt(pt.x ** 2 + pt.y ** 2)

    f(pt)
    g = ad.grad(f)(pt)
    assert isinstance(pt, ZeroPoint)
    allclose(tuple(g), (0., 0.))


@pytest.mark.parametrize("i", [1, 2, 3])
def test_shape_dtype_struct(i):
    """APITest.test_shape_dtype_struct"""
    s = ad.ShapeDtypeStruct(shape=(i, 2, 3), dtype=anp.float32)
    assert s.shape == (i, 2, 3)
    assert s.dtype == anp.float32
    assert s.ndim == 3
    assert s.size == i * 2 * 3
    assert len(s) == i
    for f in (str, repr):
        assert f(s) == f"ShapeDtypeStruct(shape=({i}, 2, 3), dtype=float32)"


def test_shape_dtype_struct_scalar_hash_and_errors():
    """APITest.test_shape_dtype_struct_scalar / _hash / _invalid_shape / _dtype_none /
    test_none_in_sds_shape_error"""
    s = ad.ShapeDtypeStruct(shape=(), dtype=anp.float32)
    assert s.shape == () and s.size == 1 and s.ndim == 0
    with pytest.raises(TypeError, match=r"len\(\) of unsized object"):
        len(s)
    s1 = ad.ShapeDtypeStruct(shape=(2, 3), dtype=anp.float32)
    s2 = ad.ShapeDtypeStruct(shape=(2, 3), dtype=anp.float32)
    s3 = ad.ShapeDtypeStruct(shape=(2, 4), dtype=anp.float32)
    assert hash(s1) == hash(s2)
    assert hash(s1) != hash(s3)
    with pytest.raises(TypeError, match="'int' object is not iterable"):
        ad.ShapeDtypeStruct(shape=4, dtype='float32')
    with pytest.raises(ValueError, match="dtype must be specified"):
        ad.ShapeDtypeStruct(shape=(), dtype=None)
    with pytest.raises(ValueError, match="`shape`.*cannot have None"):
        ad.ShapeDtypeStruct((None, 2), np.int32)


def test_eval_shape():
    """APITest.test_eval_shape / test_eval_shape_constants"""
    def fun(x, y):
        return anp.tanh(anp.dot(x, y) + 3.)

    assert ad.eval_shape(fun, np.ones((2, 3)), np.ones((3, 4))).shape == (2, 4)

    def fun2():
        return anp.tanh(anp.dot(anp.ones((2, 3)), anp.ones((3, 4))) + 3.)

    assert ad.eval_shape(fun2).shape == (2, 4)


@pytest.mark.xfail(strict=True, reason="a jitted function called on a ShapeDtypeStruct inside "
                   "eval_shape refuses it as a non-array argument")
def test_eval_shape_nested_jit_sds():
    """APITest.test_eval_shape_nested_jit_sds"""
    @jit
    def inner(x):
        return x + 1

    def outer():
        return inner(ad.ShapeDtypeStruct((), anp.float32))

    out = ad.eval_shape(outer)
    assert out.shape == () and out.dtype == np.float32


def test_eval_shape_tuple_unpacking_itemgetting_dict():
    """APITest.test_eval_shape_tuple_unpacking / _tuple_itemgetting / _output_dict"""
    x = (np.ones(2), np.ones(2))

    def fun(x, y):
        a, b = x
        return a + b + y

    assert ad.eval_shape(fun, x, 3.).shape == (2,)
    assert ad.eval_shape(lambda x, y: x[0] + x[1] + y, x, 3.).shape == (2,)
    out = ad.eval_shape(lambda x, y: {'hi': x[0] + x[1] + y}, x, 3.)
    assert tree_util.tree_map(np.shape, out) == {'hi': (2,)}


def test_eval_shape_shape_error():
    """APITest.test_eval_shape_shape_error (ShapeError, a ValueError, where JAX has
    TypeError)"""
    def fun(x, y):
        return anp.tanh(anp.dot(x, y) + 3.)

    with pytest.raises(ad.errors.ShapeError):
        ad.eval_shape(fun, np.ones((3, 3)), np.ones((4, 4)))


def test_eval_shape_duck_typing():
    """APITest.test_eval_shape_duck_typing / _duck_typing2"""
    class MyArgArray:
        def __init__(self, shape, dtype):
            self.shape = shape
            self.dtype = np.dtype(dtype)

    A = MyArgArray((3, 4), anp.float32)
    b = MyArgArray((1, 5), anp.float32)
    x = MyArgArray((4, 5), anp.float32)
    assert ad.eval_shape(lambda A, b, x: anp.dot(A, x) + b, A, b, x).shape == (3, 5)

    class EasyDict(dict):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.__dict__ = self

    x = EasyDict(shape=(3,), dtype=np.dtype('float32'))
    assert ad.eval_shape(lambda x: x, x).shape == (3,)


def test_eval_shape_error_bad_output():
    """APITest.test_eval_shape_error_bad_output"""
    def f(x):
        return (2.0, f)

    with pytest.raises(TypeError, match="type function"):   # JAX names output [1]
        ad.eval_shape(f, 1)


def test_issue_871():
    """APITest.test_issue_871"""
    T = np.array([[1., 2.], [3., 4.], [5., 6.]])
    x = np.array([1., 2., 3.])
    y, f_jvp = ad.linearize(anp.sum, x)
    with pytest.raises(ValueError, match="tangent of shape"):
        f_jvp(T)
    y, f_jvp = ad.linearize(ad.jit(anp.sum), x)
    with pytest.raises(ValueError, match="tangent of shape"):
        f_jvp(T)
    assert f_jvp(np.ones(3)) == 3.


def test_linearize_instantiates_zero_outputs():
    """APITest.test_linearize_instantiates_zero_outputs"""
    _, f_lin = ad.linearize(lambda x: (x, 1.), 3.)
    a, y = f_lin(1.)
    assert a == 1.
    assert y + 1 == 1


def test_grad_of_int_errors():
    """APITest.test_grad_of_int_errors"""
    with pytest.raises(TypeError, match="int"):
        grad(lambda x: x ** 2)(3)


@pytest.mark.xfail(strict=True, reason="jvp/vjp give integer zeros, not float0, as the "
                   "tangent/cotangent of integer values (grad(allow_int=True) gives float0)")
def test_jvp_of_int():
    """APITest.test_jvp_of_int_identity / test_jvp_of_int_add / test_jit_jvp_of_int"""
    tangents = (np.zeros(shape=(), dtype=float0),)
    _, out = ad.jvp(lambda x: x, (1,), tangents)
    assert out.dtype == float0 and out.shape == ()
    _, out = ad.jvp(lambda x: x + 1, (2,), tangents)
    assert out.dtype == float0 and out.shape == ()
    p, out = ad.jvp(ad.jit(lambda x: x + 1), (2,), tangents)
    assert p == 3
    assert out.dtype == float0 and out.shape == ()


@pytest.mark.xfail(strict=True, reason="jvp/vjp give integer zeros, not float0, as the "
                   "tangent/cotangent of integer values (grad(allow_int=True) gives float0)")
def test_jvp_of_convert_element_type():
    """APITest.test_jvp_of_convert_element_type"""
    fun = lambda x: x.astype(np.int32) + 1
    primal, tangent = ad.jvp(fun, (2.,), (1.,))
    assert primal == 3 and primal.dtype == np.int32
    assert tangent.dtype == float0 and tangent.shape == ()


@pytest.mark.xfail(strict=True, reason="jvp/vjp give integer zeros, not float0, as the "
                   "tangent/cotangent of integer values (grad(allow_int=True) gives float0)")
def test_vjp_of_int_index():
    """APITest.test_vjp_of_int_index"""
    primal, fn_vjp = ad.vjp(lambda x, i: x[i], np.ones(2) * 2, 1)
    tangent_x, tangent_i = fn_vjp(1.)
    assert primal == 2.
    allclose(tangent_x, np.array([0., 1.]))
    assert tangent_i.dtype == float0 and tangent_i.shape == ()


def test_vjp_of_int_shapes():
    """APITest.test_vjp_of_int_shapes"""
    out, fn_vjp = ad.vjp(lambda x: lax.reshape(x, (2, 2)), np.ones((4, 1), dtype=int))
    tangent, = fn_vjp(np.zeros((2, 2), float0))   # a float0 cotangent is accepted
    assert tangent.shape == (4, 1)   # JAX: float0 zeros; here integer zeros (see below)
    np.testing.assert_array_equal(tangent, 0)
    with pytest.raises(TypeError, match="float0"):
        ad.vjp(lambda x: x * 2., np.ones(2))[1](np.zeros(2, float0))


@pytest.mark.xfail(strict=True, reason="jvp/vjp give integer zeros, not float0, as the "
                   "tangent/cotangent of integer values (grad(allow_int=True) gives float0)")
def test_jit_vjp_of_int():
    """APITest.test_jit_vjp_of_int"""
    primal, fn_vjp = ad.vjp(lambda x, y: x + y, 2, 1)
    tangent_x, tangent_i = ad.jit(fn_vjp)(np.zeros((), float0))
    assert primal == 3
    assert tangent_x.dtype == float0 and tangent_i.dtype == float0


@pytest.mark.xfail(strict=True, reason="jvp/vjp give integer zeros, not float0, as the "
                   "tangent/cotangent of integer values (grad(allow_int=True) gives float0)")
def test_vjp_of_int_fulllike():
    """APITest.test_vjp_of_int_fulllike"""
    out, f_vjp = ad.vjp(lax.full_like, anp.zeros((2, 2)), 1)
    allclose(out, np.ones((2, 2)))
    tangent_x, tangent_y = f_vjp(out)
    allclose(tangent_x, np.zeros((2, 2)))
    assert tangent_y.dtype == float0 and tangent_y.shape == ()


@pytest.mark.xfail(strict=True, reason="jvp/vjp give integer zeros, not float0, as the "
                   "tangent/cotangent of integer values (grad(allow_int=True) gives float0)")
def test_grad_of_int_and_bool():
    """APITest.test_grad_of_int / test_grad_of_bool / test_grad_of_bool_vjp3"""
    out = ad.grad(lambda x: x + 0., allow_int=True)(1)
    assert out.dtype == float0 and out.shape == ()

    def cond(pred):
        return lax.cond(pred, lambda _: 1., lambda _: 2., 1.)

    value, grd = ad.value_and_grad(cond, allow_int=True)(True)
    assert value == 1.
    assert grd.dtype == float0 and grd.shape == ()
    value, f_vjp = ad.vjp(cond, True)
    grd, = f_vjp(1.)
    assert value == 1.
    assert grd.dtype == float0


@pytest.mark.parametrize("use_jit", [False, True])
def test_grad_of_int_index(use_jit):
    """APITest.test_grad_of_int_index / test_jit_grad_of_int"""
    grad_f = ad.grad(lambda x, i: x[i], argnums=(0, 1), allow_int=True)
    if use_jit:
        grad_f = ad.jit(grad_f)
    grad_x, grad_i = grad_f(np.ones(2), 1)
    allclose(grad_x, np.array([0., 1.]))
    assert grad_i.dtype == float0 and grad_i.shape == ()


def test_float0_reshape():
    """APITest.test_float0_reshape"""
    float0_array = ad.grad(lambda x: anp.sum(x + 0.), allow_int=True)(np.ones((2, 4), dtype=int))
    assert float0_array.dtype == float0
    assert float0_array.reshape((4, 2)).shape == (4, 2)
    assert float0_array.transpose().shape == (4, 2)


def test_float0_error():
    """APITest.test_float0_error (the anp dispatch branch)"""
    float0_array = ad.grad(lambda x: x + 0., allow_int=True)(1)
    assert float0_array.dtype == float0
    with pytest.raises(TypeError):
        anp.add(float0_array, anp.zeros(()))


def test_complex_and_holomorphic_dtype_errors():
    """APITest.test_grad_complex_result_errors / test_holomorphic_grad_of_float_errors /
    test_holomorphic_jacrev_of_float_errors / test_holomorphic_jacfwd_of_float_errors /
    test_jacfwd_of_complex_errors"""
    with pytest.raises(TypeError, match="complex"):
        grad(lambda x: x ** 2 + 1j)(3.)
    for name, tr in [("grad", grad), ("jacrev", jacrev), ("jacfwd", jacfwd)]:
        # JAX: "<name> with holomorphic=True requires inputs with complex dtype"
        with pytest.raises(TypeError, match="holomorphic=True.*requires complex inputs"):
            tr(lambda x: x ** 2, holomorphic=True)(3.)
    with pytest.raises(TypeError, match="complex"):
        jacfwd(lambda x: x ** 2)(3. + 1j)


@pytest.mark.xfail(strict=True, reason="vmap keeps the wrapped function's docstring as is; "
                   "JAX prefixes 'Vectorized version of ...'")
def test_vmap_preserves_docstr():
    """APITest.test_vmap_preserves_docstr"""
    def superfun(a):
        """Does things with stuff."""

    assert re.search("\n".join(["Vectorized version of superfun.*", "",
                                "Original documentation:", "", superfun.__doc__]),
                     ad.vmap(superfun).__doc__)


def test_vmap_in_axes_list():
    """APITest.test_vmap_in_axes_list"""
    dictionary = {'a': 5., 'b': np.ones(2)}
    x = np.zeros(3)
    y = np.arange(3.)

    def f(dct, x, y):
        return dct['a'] + dct['b'] + x + y

    out1 = ad.vmap(f, (None, 0, 0))(dictionary, x, y)
    out2 = ad.vmap(f, [None, 0, 0])(dictionary, x, y)
    allclose(out1, out2)
    allclose(out1, 5. + 1. + (x + y)[:, None] * np.ones(2))


@pytest.mark.xfail(strict=True, reason="a dict in_axes is accepted as the pytree prefix of "
                   "every argument; JAX refuses a top-level dict")
def test_vmap_in_axes_non_tuple_error():
    """APITest.test_vmap_in_axes_non_tuple_error"""
    with pytest.raises(TypeError, match=re.escape(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            "positional arguments passed to the function, but got {'a': 0}.")):
        ad.vmap(lambda x: x['a'], in_axes={'a': 0})


def test_vmap_in_axes_wrong_length_tuple_error():
    """APITest.test_vmap_in_axes_wrong_length_tuple_error"""
    with pytest.raises(ValueError, match="has 2 entries but the function got 1 positional"):
        ad.vmap(lambda x: x['a'], in_axes=(0, {'a': 0}))({'a': anp.zeros((3, 3))})


def test_vmap_in_axes_tree_prefix_error():
    """APITest.test_vmap_in_axes_tree_prefix_error"""
    # JAX: "vmap in_axes specification must be a tree prefix of the corresponding value"
    with pytest.raises(ValueError, match=r"in_axes=\(\[0\],\) does not match the arguments"):
        ad.vmap(lambda x: x, in_axes=([0],))(np.ones(3))


def test_vmap_in_out_axes_leaf_types():
    """APITest.test_vmap_in_axes_leaf_types / test_vmap_out_axes_leaf_types /
    test_vmap_in_axes_bool_error"""
    # JAX: "vmap in_axes must be an int, None, or ..."
    with pytest.raises(TypeError, match="in_axes entries must be int or None"):
        ad.vmap(lambda x: x, in_axes=(np.array([1., 2.]),))(np.array([1., 2.]))
    with pytest.raises(TypeError, match="out_axes entries must be int or None"):
        ad.vmap(lambda x: x, out_axes=(np.array([1., 2.]),))(np.array([1., 2.]))
    with pytest.raises(TypeError, match="must be int or None, got False"):
        ad.vmap(lambda x: x, in_axes=False)(anp.zeros(3))


def test_vmap_unbatched_object_passthrough_issue_183():
    """APITest.test_vmap_unbatched_object_passthrough_issue_183"""
    ans = ad.vmap(lambda f, x: f(x), (None, 0))(lambda x: x + 1, np.arange(3))
    np.testing.assert_array_equal(ans, np.arange(1, 4))


def test_vmap_mismatched_axis_sizes_error_message_issue_705():
    """APITest.test_vmap_mismatched_axis_sizes_error_message_issue_705 (the same report as
    JAX's, in autodiff's words where JAX's differ: "2 axes had size 10: <each>" for "most
    axes (2 of them) had size 10, e.g. <one>", "in_axes=0 is out of range for argument 0,
    which has rank 0" for "vmap was requested to map its argument along axis 0")"""
    def h(a, b):
        return anp.sum(a) + anp.sum(b)

    rng = np.random.RandomState(0)
    X = rng.randn(10, 4).astype('float32')
    U = rng.randn(10, 2).astype('float32')
    with pytest.raises(ValueError, match=(
            "vmap got inconsistent sizes for array axes to be mapped:\n"
            r"  \* one axis had size 10: axis 0 of argument a of type float32\[10,4\];" "\n"
            r"  \* one axis had size 2: axis 1 of argument b of type float32\[10,2\]")):
        ad.vmap(h, in_axes=(0, 1))(X, U)
    with pytest.raises(ValueError, match=(
            "vmap got inconsistent sizes for array axes to be mapped:\n"
            r"  \* 2 axes had size 10: axis 0 of argument x of type float32\[10,4\], axis 0 "
            r"of argument z of type float32\[10,4\];" "\n"
            r"  \* one axis had size 2: axis 1 of argument y of type float32\[10,2\]")):
        ad.vmap(lambda x, y, z: None, in_axes=(0, 1, 0))(X, U, X)
    with pytest.raises(ValueError, match=(
            "vmap got inconsistent sizes for array axes to be mapped:\n"
            r"  \* 2 axes had size 2: axis 1 of argument b\[0\] of type float32\[10,2\], "
            r"axis 1 of argument b\[1\] of type float32\[10,2\];" "\n"
            r"  \* one axis had size 10: axis 0 of argument a of type float32\[10,4\]")):
        ad.vmap(h, in_axes=(0, 1))(X, [U, U])
    with pytest.raises(ValueError, match=r"in_axes=0 is out of range for argument 0, which has "
                       r"rank 0 \(shape \(\)\)"):
        ad.vmap(lambda x: x)(1.)
    with pytest.raises(ValueError, match=r"no argument is mapped \(every in_axes is None\)"):
        ad.vmap(lambda x: x, in_axes=None)(np.array([1., 2.]))
    with pytest.raises(ValueError, match=r"in_axes=1 is out of range for argument 0, which has "
                       r"rank 1 \(shape \(2,\)\)"):
        ad.vmap(lambda x: x, in_axes=1)(np.array([1., 2.]))
    with pytest.raises(ValueError, match=r"out_axes=\(2, 3\) does not match the outputs"):
        ad.vmap(lambda x: x, in_axes=0, out_axes=(2, 3))(np.array([1., 2.]))
    with pytest.raises(ValueError, match="out_axes=None for the output, but it depends on the "
                       "mapped axis"):
        ad.vmap(lambda x: x, out_axes=None, axis_name="foo")(np.array([1., 2.]))
    with pytest.raises(ValueError, match="out_axes=None for the output, but it depends on the "
                       "mapped axis"):
        ad.vmap(lambda x: x, out_axes=None)(np.array([1., 2.]))


def test_vmap_explicit_axis_size_mismatch():
    """APITest.test_vmap_explicit_axis_size_mismatch (JAX lists "the `axis_size` argument
    was 2" first; autodiff "axis_size=2 was passed" last)"""
    with pytest.raises(ValueError, match=(
            r"vmap got inconsistent sizes for array axes to be mapped:\n"
            r"  \* one axis had size 8: axis 0 of argument x of type int32\[8\];\n"
            r"  \* axis_size=2 was passed")):
        ad.vmap(lambda x: x, in_axes=0, axis_size=2)(np.arange(8, dtype=np.int32))


def test_vmap_structured_in_axes():
    """APITest.test_vmap_structured_in_axes"""
    A, B, C, D = 2, 3, 4, 5
    K = 6
    rng = np.random.RandomState(0)
    x = rng.randn(K, A, B)
    y = rng.randn(B, K, C)
    z = rng.randn(C, D, K)
    want = np.stack([x[k] @ (y[:, k] @ z[..., k]) for k in range(K)])

    def foo(tree_arg):
        x, (y, z) = tree_arg
        return anp.dot(x, anp.dot(y, z))

    out = ad.vmap(foo, in_axes=((0, (1, 2)),))((x, (y, z)))
    assert out.shape == (6, 2, 5)
    allclose(out, want)
    Point = collections.namedtuple("Point", ["x", "y"])
    out = ad.vmap(foo, in_axes=((0, Point(1, 2)),))((x, Point(y, z)))
    allclose(out, want)

    def foo(tree_arg):
        x, dct = tree_arg
        y, z = dct['a'], dct['b']
        return anp.dot(x, anp.dot(y, z))

    out = ad.vmap(foo, in_axes=((0, {'a': 1, 'b': 2}),))((x, {'a': y, 'b': z}))
    allclose(out, want)
    tree = (x, collections.OrderedDict([('a', y), ('b', z)]))
    out = ad.vmap(foo, in_axes=((0, collections.OrderedDict([('a', 1), ('b', 2)])),))(tree)
    allclose(out, want)


def test_ordered_dict_and_defaultdict_are_pytrees():
    """follow-up of APITest.test_vmap_structured_in_axes: OrderedDict (insertion order) and
    defaultdict (sorted keys) are pytree nodes, as in JAX"""
    od = collections.OrderedDict([('b', 1.), ('a', 2.)])
    leaves, td = tree_util.tree_flatten(od)
    assert leaves == [1., 2.]
    assert tree_util.tree_unflatten(td, [3., 4.]) == collections.OrderedDict([('b', 3.),
                                                                              ('a', 4.)])
    g = ad.grad(lambda d: d['a'] * d['b'] ** 2)(od)
    assert type(g) is collections.OrderedDict and list(g) == ['b', 'a']
    allclose(dict(g), {'b': 4., 'a': 1.})
    dd = collections.defaultdict(list, {'b': 1., 'a': 2.})
    assert tree_util.tree_leaves(dd) == [2., 1.]
    out = ad.jit(lambda d: tree_util.tree_map(lambda v: 2 * v, d))(dd)
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert dict(out) == {'a': 4., 'b': 2.}
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_leaves_with_path(od)]
    assert paths == ["['b']", "['a']"]


def test_vmap_empty_arguments():
    """APITest.test_vmap_empty_arguments (JAX: "vmap wrapped function must be passed at
    least one argument containing an array or axis_size must be specified")"""
    with pytest.raises(ValueError, match="no argument is mapped.*pass axis_size"):
        ad.vmap(lambda x: x)({})


def test_vmap_scalar():
    """APITest.test_vmap_scalar"""
    np.testing.assert_array_equal(ad.vmap(lambda x: x, in_axes=None, axis_size=1)(1.), [1.])
    with pytest.raises(ValueError, match=r"in_axes=0 is out of range for argument 0"):
        ad.vmap(lambda x: x, in_axes=0, axis_size=1)(1.)
    with pytest.raises(ValueError, match=r"in_axes=1 is out of range for argument 0"):
        ad.vmap(lambda x: x, in_axes=1, axis_size=1)(1.)


# ------------------------------------------------------------------------------------------
# custom_api_test.py: CustomJVPTest / CustomVJPTest. Not ported: initial-style (lax loop)
# variants with collectives/pmap, pretty_print/jaxpr-structure/DCE tests (JAX internals),
# test_closed_over_tracers_error_message (autodiff traces custom bodies with values under
# grad, docs/porting.md).
# ------------------------------------------------------------------------------------------

def _sin_custom_jvp():
    @ad.custom_jvp
    def f(x):
        return anp.sin(x)

    def f_jvp(primals, tangents):
        x, = primals
        g, = tangents
        return f(x), 2 * anp.cos(x) * g
    f.defjvp(f_jvp)
    return f


def _sin_custom_vjp():
    @ad.custom_vjp
    def f(x):
        return anp.sin(x)

    def f_fwd(x):
        return f(x), anp.cos(x)

    def f_rev(cos_x, g):
        return (2 * cos_x * g,)
    f.defvjp(f_fwd, f_rev)
    return f


def test_custom_jvp_basic():
    """CustomJVPTest.test_basic"""
    f = _sin_custom_jvp()
    x = 3.
    allclose(f(x), np.sin(x))
    allclose(ad.jvp(f, (x,), (1.,)), (np.sin(x), 2 * np.cos(x)))
    allclose(ad.grad(f)(x), 2 * np.cos(x))


def test_custom_jvp_invariance():
    """CustomJVPTest.test_invariance"""
    @ad.custom_jvp
    def f(x):
        return anp.cos(2 * x) / 2.

    def f_jvp(primals, tangents):
        x, = primals
        g, = tangents
        return (f(x), 3 * g)
    f.defjvp(f_jvp)

    def f2(x):
        y, _ = ad.jvp(f, (x,), (x,))
        return y

    def f3(x):
        y, _ = ad.jvp(f2, (x,), (x,))
        return y

    x = 1.
    allclose(ad.jvp(f, (x,), (x,)), ad.jvp(f2, (x,), (x,)))
    allclose(ad.jvp(f, (x,), (x,)), ad.jvp(f3, (x,), (x,)))
    allclose(ad.jvp(f, (x,), (x,)), (np.cos(2.) / 2., 3.))


def test_custom_jvp_deepcopy():
    """CustomJVPTest.test_deepcopy"""
    f = copy.deepcopy(ad.nn.relu)
    allclose(ad.grad(f)(1.), 1.)


def test_custom_jvp_python_control_flow():
    """CustomJVPTest.test_python_control_flow"""
    @ad.custom_jvp
    def f(x):
        if x > 0:
            return anp.sin(x)
        else:
            return anp.cos(x)

    def f_jvp(primals, tangents):
        x, = primals
        g, = tangents
        if x > 0:
            return f(x), 2 * g
        else:
            return f(x), 3 * g
    f.defjvp(f_jvp)
    x = 2.
    allclose(f(x), np.sin(x))
    allclose(f(-x), np.cos(-x))
    allclose(ad.jvp(f, (x,), (1.,)), (np.sin(x), 2.))
    allclose(ad.jvp(f, (-x,), (1.,)), (np.cos(-x), 3.))
    allclose(ad.grad(f)(x), 2.)
    allclose(ad.grad(f)(-x), 3.)


def test_custom_jvp_vmap():
    """CustomJVPTest.test_vmap"""
    @ad.custom_jvp
    def f(x):
        assert anp.ndim(x) == 0
        return anp.sin(x)

    def f_jvp(primals, tangents):
        x, = primals
        g, = tangents
        assert anp.ndim(x) == anp.ndim(g) == 0
        return f(x), 2 * anp.cos(x) * g
    f.defjvp(f_jvp)

    x = np.arange(3.)
    xx = np.arange(6.).reshape(2, 3)
    allclose(ad.vmap(f)(x), np.sin(x))
    allclose(ad.vmap(ad.vmap(f))(xx), np.sin(xx))
    allclose(ad.vmap(lambda x: ad.jvp(f, (x,), (x,)))(x), (np.sin(x), 2 * np.cos(x) * x))
    allclose(ad.vmap(ad.vmap(lambda x: ad.jvp(f, (x,), (x,))))(xx),
             (np.sin(xx), 2 * np.cos(xx) * xx))
    allclose(ad.jvp(ad.vmap(f), (x,), (x,)), (np.sin(x), 2 * np.cos(x) * x))
    allclose(ad.jvp(ad.vmap(ad.vmap(f)), (xx,), (xx,)), (np.sin(xx), 2 * np.cos(xx) * xx))
    allclose(ad.vmap(lambda x: ad.jvp(ad.vmap(f), (x,), (x,)))(xx),
             (np.sin(xx), 2 * np.cos(xx) * xx))


def test_custom_jvp_jit():
    """CustomJVPTest.test_jit"""
    f = _sin_custom_jvp()
    x = 3.
    allclose(ad.jit(f)(x), np.sin(x))
    allclose(ad.jit(ad.jit(f))(x), np.sin(x))
    allclose(ad.jit(lambda x: ad.jvp(f, (x,), (x,)))(x), (np.sin(x), 2 * np.cos(x) * x))
    allclose(ad.jvp(ad.jit(f), (x,), (x,)), (np.sin(x), 2 * np.cos(x) * x))


def test_custom_jvp_pytrees():
    """CustomJVPTest.test_pytrees"""
    @ad.custom_jvp
    def f(x):
        return {'b': anp.sin(x['a'])}

    def f_jvp(primals, tangents):
        x, = primals
        g, = tangents
        return f(x), {'b': 2 * anp.cos(x['a']) * g['a']}
    f.defjvp(f_jvp)
    x = {'a': 3.}
    allclose(f(x)['b'], np.sin(x['a']))
    allclose(ad.jvp(f, (x,), (x,)), ({'b': np.sin(3.)}, {'b': 2 * np.cos(3.) * 3.}))


@pytest.mark.xfail(strict=True, reason="keyword arguments reach a custom_jvp rule as keywords "
                   "(rule(primals, tangents, c=2.)), API.md convention 7; JAX binds them into "
                   "the primals")
def test_custom_jvp_kwargs():
    """CustomJVPTest.test_kwargs"""
    @ad.custom_jvp
    def my_fun(x, y, c=1.):
        return c * (x + y)

    def my_jvp(primals, tangents):
        x, y, c = primals
        t_x, t_y, t_c = tangents
        return my_fun(x, y, c), t_c
    my_fun.defjvp(my_jvp)
    f = lambda x, y: anp.square(my_fun(x, y, c=2.)).sum()
    assert f(10., 5.) == 900.
    ad.jvp(f, (10., 5.), (1., 1.))


def test_custom_jvp_nondiff_argnums():
    """CustomJVPTest.test_nondiff_argnums"""
    @partial(ad.custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    def app_jvp(f, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(f, x), 3 * t
    app.defjvp(app_jvp)
    assert app(lambda x: 2 * x, 1) == 2
    allclose(ad.jvp(lambda x: app(lambda y: 2 * y, x), (1.,), (1.,)), (2., 3.))


def test_custom_jvp_nondiff_argnames():
    """CustomJVPTest.test_nondiff_argnames"""
    @partial(ad.custom_jvp, nondiff_argnames=('f',))
    def app(f, x):
        return f(x)

    def app_jvp(f, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(f, x), 3 * t
    app.defjvp(app_jvp)
    assert app(lambda x: 2 * x, 1) == 2
    allclose(ad.jvp(lambda x: app(lambda y: 2 * y, x), (1.,), (1.,)), (2., 3.))


def test_custom_jvp_missing_jvp_rule_error_message():
    """CustomJVPTest.test_missing_jvp_rule_error_message"""
    @ad.custom_jvp
    def foo(x):
        return x ** 2

    # JAX: AttributeError "No JVP defined for custom_jvp function foo using defjvp."
    msg = "custom_jvp function foo has no jvp rule"
    with pytest.raises(TypeError, match=msg):
        foo(2)
    with pytest.raises(TypeError, match=msg):
        ad.jvp(foo, (2.,), (1.,))
    with pytest.raises(TypeError, match=msg):
        ad.grad(foo)(2.)


def test_custom_jvp_rule_doesnt_return_pair_error_message():
    """CustomJVPTest.test_jvp_rule_doesnt_return_pair_error_message"""
    @ad.custom_jvp
    def f(x):
        return anp.sin(x)

    def foo_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return t
    f.defjvp(foo_jvp)
    with pytest.raises(TypeError, match=r"must produce a pair \(list or tuple of length two\)"):
        ad.jvp(f, (2.,), (1.,))
    f.defjvp(lambda primals, tangents: (f(*primals), tangents[0], 1.))
    with pytest.raises(TypeError, match="got a tuple of length 3"):
        ad.grad(f)(2.)


def test_custom_jvp_multiple_rule_invocations():
    """CustomJVPTest.test_multiple_rule_invocations"""
    @ad.custom_jvp
    def expit(x):
        return 1 / (1 + lax.exp(-x))

    @expit.defjvp
    def _expit_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        ans = expit(x)
        t_out = t * ans * (1 - ans)
        return ans, t_out

    def scanned_fun(c, _):
        return [expit(c[0])] + [c[i - 1] + c[i] for i in range(1, len(c))], None

    def foo(x):
        zero = anp.zeros_like(x)
        c, _ = lax.scan(scanned_fun, [x, zero, zero, zero, zero], None, length=10)
        return c[-1]

    # just make sure these don't crash; the values agree across modes
    g1 = ad.grad(foo)(3.)
    g2 = ad.grad(lambda x: ad.vmap(foo)(x).sum())(np.array([1., 2., 3.]))
    g3 = ad.jit(ad.grad(foo))(3.)
    allclose(g1, g3)
    allclose(g2[2], g1, rtol=1e-12)
    eps = 1e-6
    allclose(g1, (foo(3. + eps) - foo(3. - eps)) / (2 * eps), rtol=1e-6)


def test_custom_jvp_hard_stuff():
    """CustomJVPTest.test_hard_stuff / test_hard_stuff2"""
    arr = np.ones((5, 2, 2))
    allclose(ad.jit(ad.vmap(anp.linalg.det))(arr), np.zeros(5))
    # d det(A)/dA = adj(A)^T: [[1, -1], [-1, 1]] for the all-ones matrix
    allclose(ad.jit(ad.vmap(ad.grad(lambda x: anp.linalg.det(x))))(arr),
             np.broadcast_to(np.array([[1., -1.], [-1., 1.]]), (5, 2, 2)))


def test_custom_jvp_eval_shape():
    """CustomJVPTest.test_eval_shape"""
    @ad.custom_jvp
    def expit(x):
        return 1 / (1 + lax.exp(-x))

    @expit.defjvp
    def _expit_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        ans = expit(x)
        return ans, t * ans * (1 - ans)

    ad.eval_shape(expit, anp.ones((2, 3)))
    out = ad.eval_shape(ad.grad(lambda x: expit(x).sum()), anp.ones((2, 3)))
    assert out.shape == (2, 3)


@pytest.mark.xfail(strict=True, reason="a custom_jvp closing over a vmapped value under grad "
                   "raises UnsupportedError (pass the value as an argument); JAX supports it")
def test_custom_jvp_closure_with_vmap():
    """CustomJVPTest.test_closure_with_vmap"""
    def sample(x):
        @ad.custom_jvp
        def f(y):
            return x * y

        @f.defjvp
        def f_jvp(primals, tangents):
            p, = primals
            t, = tangents
            return f(p), 3. * t
        return f(3.)

    def g(x):
        return ad.vmap(sample)(x).sum()

    allclose(g(np.arange(3.)), 3. * np.arange(3.).sum())
    allclose(ad.grad(g)(np.arange(3.)), np.full(3, 3.))


def test_custom_jvp_functools_partial():
    """CustomJVPTest.test_custom_jvp_functools_partial"""
    def fun(x, y, a):
        return x + y * a

    fun_wrapped = functools.partial(fun, a=0.1)

    def jvp_fn(primals, tangents):
        return ad.jvp(fun_wrapped, primals, tangents)

    fn = ad.custom_jvp(fun_wrapped)
    fn.defjvp(jvp_fn)
    assert (1.0, 0.1) == ad.grad(lambda args: fn(*args))((1.0, 2.0))


def test_custom_jvp_symbolic_zeros():
    """CustomJVPTest.test_symbolic_zero_custom_jvp (tangent of an unperturbed input: JAX
    passes a SymbolicZero only with symbolic_zeros=True; by default it is a zeros array)"""
    @ad.custom_jvp
    def f(x, y):
        return x * y

    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals
        x_dot, y_dot = tangents
        assert np.shape(y_dot) == np.shape(y)
        return f(x, y), y_dot * x + x_dot * y

    allclose(ad.grad(f)(2., 3.), 3.)
    allclose(ad.grad(f, 1)(2., 3.), 2.)
    allclose(ad.jvp(lambda x: f(x, 3.), (2.,), (1.,)), (6., 3.))


def test_custom_vjp_basic():
    """CustomVJPTest.test_basic"""
    f = _sin_custom_vjp()
    x = 3.
    allclose(f(x), np.sin(x))
    allclose(ad.grad(f)(x), 2 * np.cos(x))
    allclose(ad.value_and_grad(f)(x), (np.sin(x), 2 * np.cos(x)))


def test_custom_vjp_invariance():
    """CustomVJPTest.test_invariance"""
    @ad.custom_vjp
    def f(x):
        return anp.cos(2 * x) / 2.

    def f_fwd(x):
        return (f(x), x)

    def f_rev(x, g):
        return (g * 3,)
    f.defvjp(f_fwd, f_rev)

    def f2(x):
        y, _ = ad.value_and_grad(f)(x)
        return y

    def f3(x):
        y, _ = ad.value_and_grad(f2)(x)
        return y

    x = 1.
    allclose(f(x), f2(x))
    allclose(f(x), f3(x))
    allclose(ad.grad(f)(x), ad.grad(f2)(x))
    allclose(ad.grad(f)(x), ad.grad(f3)(x))
    allclose(ad.grad(f)(x), 3.)


def test_custom_vjp_python_control_flow():
    """CustomVJPTest.test_python_control_flow / test_python_control_flow_bwd"""
    @ad.custom_vjp
    def f(x):
        if x > 0:
            return anp.sin(x)
        else:
            return anp.cos(x)

    def f_fwd(x):
        return f(x), x

    def f_rev(x, g):
        if x > 0:
            return (2 * g,)
        else:
            return (3 * g,)
    f.defvjp(f_fwd, f_rev)
    x = 2.
    allclose(f(x), np.sin(x))
    allclose(f(-x), np.cos(-x))
    allclose(ad.value_and_grad(f)(x), (np.sin(x), 2.))
    allclose(ad.value_and_grad(f)(-x), (np.cos(-x), 3.))

    @ad.custom_vjp
    def h(x):
        return lax.cond(x > 0, anp.sin, anp.cos, x)

    def h_fwd(x):
        if x > 0:
            return anp.sin(x), x
        else:
            return anp.cos(x), x
    h.defvjp(h_fwd, f_rev)
    allclose(h(x), np.sin(x))
    allclose(h(-x), np.cos(-x))
    allclose(ad.value_and_grad(h)(x), (np.sin(x), 2.))
    allclose(ad.value_and_grad(h)(-x), (np.cos(-x), 3.))


def test_custom_vjp_vmap():
    """CustomVJPTest.test_vmap"""
    @ad.custom_vjp
    def f(x):
        assert anp.ndim(x) == 0
        return anp.sin(x)

    def f_fwd(x):
        assert anp.ndim(x) == 0
        return f(x), anp.cos(x)

    def f_rev(cos_x, g):
        return (2 * cos_x * g,)
    f.defvjp(f_fwd, f_rev)

    x = np.arange(3.)
    xx = np.arange(6.).reshape(2, 3)
    allclose(ad.vmap(f)(x), np.sin(x))
    allclose(ad.vmap(ad.vmap(f))(xx), np.sin(xx))
    allclose(ad.vmap(ad.grad(f))(x), 2 * np.cos(x))
    allclose(ad.vmap(ad.value_and_grad(f))(x), (np.sin(x), 2 * np.cos(x)))
    allclose(ad.vmap(ad.vmap(ad.grad(f)))(xx), 2 * np.cos(xx))
    allclose(ad.vmap(ad.vmap(ad.value_and_grad(f)))(xx), (np.sin(xx), 2 * np.cos(xx)))
    allclose(ad.grad(lambda x: ad.vmap(f)(x).sum())(x), 2 * np.cos(x))
    allclose(ad.grad(lambda x: ad.vmap(ad.vmap(f))(x).sum())(xx), 2 * np.cos(xx))
    allclose(ad.vmap(ad.grad(lambda x: ad.vmap(f)(x).sum()))(xx), 2 * np.cos(xx))


def test_custom_vjp_jit():
    """CustomVJPTest.test_jit"""
    f = _sin_custom_vjp()
    x = 3.
    allclose(ad.jit(f)(x), np.sin(x))
    allclose(ad.jit(ad.jit(f))(x), np.sin(x))
    allclose(ad.jit(ad.grad(f))(x), 2 * np.cos(x))
    allclose(ad.grad(ad.jit(f))(x), 2 * np.cos(x))


def test_custom_vjp_pytrees():
    """CustomVJPTest.test_pytrees"""
    @ad.custom_vjp
    def f(x):
        return {'b': anp.sin(x['a'])}

    def f_fwd(x):
        return f(x), {'r': anp.cos(x['a'])}

    def f_bwd(res, g):
        return ({'a': 2 * res['r'] * g['b']},)
    f.defvjp(f_fwd, f_bwd)
    x = {'a': 3.}
    allclose(f(x)['b'], np.sin(3.))
    allclose(ad.grad(lambda x: f(x)['b'])(x), {'a': 2 * np.cos(3.)})


@pytest.mark.xfail(strict=True, reason="jvp of a custom_vjp function differentiates its body "
                   "(forward mode through odeint relies on it, docs/porting.md); JAX raises")
def test_custom_vjp_jvp_error():
    """CustomVJPTest.test_jvp_error"""
    f = _sin_custom_vjp()
    msg = r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp function"
    with pytest.raises(TypeError, match=msg):
        ad.jvp(f, (3.,), (1.,))
    with pytest.raises(TypeError, match=msg):
        ad.jvp(ad.vmap(f), (np.arange(3.),), (np.ones(3),))
    with pytest.raises(TypeError, match=msg):
        ad.jvp(jit(f), (3.,), (1.,))


@pytest.mark.xfail(strict=True, reason="keyword arguments are not differentiated (API.md "
                   "convention 7), so bwd returns one cotangent per positional argument; JAX "
                   "binds c into the arguments")
def test_custom_vjp_kwargs():
    """CustomVJPTest.test_kwargs"""
    @ad.custom_vjp
    def my_fun(x, y, c=1.):
        return c * (x + y)
    my_fun.defvjp(lambda x, y, c=1.: (my_fun(c, y, c), None), lambda _, g: (g, g, g))
    f = lambda x, y: anp.square(my_fun(x, y, c=2.)).sum()
    assert f(10., 5.) == 900.
    allclose(ad.grad(f)(10., 5.), 2 * 30.)


def test_custom_vjp_nondiff_argnums():
    """CustomVJPTest.test_nondiff_argnums"""
    @partial(ad.custom_vjp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    def app_fwd(f, x):
        return app(f, x), anp.cos(x)

    def app_rev(f, cos_x, g):
        return (cos_x * g,)
    app.defvjp(app_fwd, app_rev)
    assert app(lambda x: 2 * x, 1) == 2
    allclose(ad.value_and_grad(lambda x: app(lambda y: 2 * y, x))(1.), (2., np.cos(1.)))


def test_custom_vjp_nondiff_argnames():
    """CustomVJPTest.test_nondiff_argnames"""
    @partial(ad.custom_vjp, nondiff_argnames=('f',))
    def app(f, x):
        return f(x)

    def app_fwd(f, x):
        return app(f, x), anp.cos(x)

    def app_rev(f, cos_x, g):
        return (cos_x * g,)
    app.defvjp(app_fwd, app_rev)
    assert app(lambda x: 2 * x, 1) == 2
    allclose(ad.value_and_grad(lambda x: app(lambda y: 2 * y, x))(1.), (2., np.cos(1.)))


# ------------------------------------------------------------------------------------------
# RematTest / JaxprTest / stop_gradient. Not ported: primitive impl call counting
# (lax.sin_p.def_impl), jaxpr-structure, saved_residuals, offload, name-stack and CSE tests
# (JAX internals).
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("remat", [ad.remat, partial(ad.checkpoint,
                                                     policy=lambda *_, **__: False)])
def test_remat_basic(remat):
    """RematTest.test_remat_basic (values; the impl call counts are JAX internals)"""
    @remat
    def g(x):
        return lax.sin(lax.sin(x)), 3.

    def f(x):
        x, _ = g(x)
        return x

    allclose(f(2.), np.sin(np.sin(2.)))
    ans, f_lin = ad.linearize(f, 2.)
    allclose(ans, np.sin(np.sin(2.)))
    allclose(f_lin(3.), np.cos(np.sin(2.)) * np.cos(2.) * 3.)


@pytest.mark.parametrize("remat", [ad.remat, partial(ad.checkpoint,
                                                     policy=lambda *_, **__: False)])
def test_remat_freevars(remat):
    """RematTest.test_remat_freevars"""
    def f1(x):
        y = 2 * anp.sin(x)
        return anp.cos(x) * anp.sin(y)

    def f2(x):
        y = 2 * anp.sin(x)
        return remat(lambda x: anp.cos(x) * anp.sin(y))(x)

    ans, f_lin = ad.linearize(f2, 2.)
    expected, f_lin_expected = ad.linearize(f1, 2.)
    allclose(ans, expected)
    allclose(f_lin(3.), f_lin_expected(3.))
    allclose(ad.grad(f2)(2.), ad.grad(f1)(2.))


def test_remat_grad_python_control_flow_static_argnums():
    """RematTest.test_remat_grad_python_control_flow_static_argnums"""
    @partial(ad.remat, static_argnums=(0,))
    def g(x):
        with ad.ensure_compile_time_eval():
            x_pos = x > 0
        if x_pos:
            return lax.sin(x), 3.
        else:
            return lax.cos(x), 4.

    def f(x):
        x, _ = g(x)
        return x

    allclose(f(2.), np.sin(2.))
    allclose(ad.grad(f)(2.), np.cos(2.))


@pytest.mark.parametrize("remat", [ad.remat, ad.checkpoint])
def test_remat_jit_vmap_higher_order(remat):
    """RematTest.test_remat_jit / test_remat_vmap / test_remat_higher_order_autodiff"""
    @remat
    def g(x):
        return lax.sin(lax.sin(x))

    def f(x):
        return g(x)

    allclose(ad.jit(f)(2.), np.sin(np.sin(2.)))
    allclose(ad.jit(ad.grad(f))(2.), np.cos(np.sin(2.)) * np.cos(2.))
    x = np.arange(3.)
    allclose(ad.vmap(f)(x), np.sin(np.sin(x)))
    allclose(ad.vmap(ad.grad(f))(x), np.cos(np.sin(x)) * np.cos(x))
    ans = ad.grad(ad.grad(g))(3.)
    expected = ad.grad(ad.grad(lambda x: anp.sin(anp.sin(x))))(3.)
    allclose(ans, expected)
    # closed form: d2/dx2 sin(sin x) = -sin(sin x) cos(x)^2 - cos(sin x) sin(x)
    allclose(ans, -np.sin(np.sin(3.)) * np.cos(3.) ** 2 - np.cos(np.sin(3.)) * np.sin(3.))


def test_remat_scan():
    """RematTest.test_remat_scan"""
    to_scan = lambda c, x: (anp.sin(c), None)

    def f_noremat(x):
        y, _ = lax.scan(to_scan, x, np.arange(3.))
        return y

    def f_yesremat(x):
        y, _ = lax.scan(ad.checkpoint(to_scan), x, np.arange(3.))
        return y

    allclose(f_yesremat(4.), f_noremat(4.))
    allclose(ad.grad(f_yesremat)(4.), ad.grad(f_noremat)(4.))
    allclose(f_noremat(4.), np.sin(np.sin(np.sin(4.))))


def test_make_jaxpr_static_argnums_and_return_shape():
    """JaxprTest.test_make_jaxpr_static_argnums / test_make_jaxpr_return_shape"""
    jaxpr = ad.make_jaxpr(lambda x, y: x + y, static_argnums=(1,))(2., 3.)
    assert '3' in str(jaxpr)
    _, shape_tree = ad.make_jaxpr(lambda x: (x + 1, anp.zeros(2, anp.float32)),
                                  return_shape=True)(np.int32(1))
    expected = (ad.ShapeDtypeStruct(shape=(), dtype=np.int32),
                ad.ShapeDtypeStruct(shape=(2,), dtype=np.float32))
    assert shape_tree == expected


def test_make_jaxpr_static_argnums_order():
    """APITest.test_make_jaxpr_static_argnums_order"""
    def f(a, b, c):
        x = a + c
        y = b * x
        return y

    jaxpr = ad.make_jaxpr(f, static_argnums=(0, 1))(1., 2., 3.)
    assert len(jaxpr.jaxpr.invars) == 1


def test_grad_negative_argnums():
    """APITest.test_grad_negative_argnums / test_jit_negative_static_argnums"""
    def f(x, y):
        return x.sum() * y.sum()

    x = np.random.RandomState(0).normal(size=(10,))
    y = np.random.RandomState(1).normal(size=(10,))
    g = ad.grad(f, argnums=-1)
    allclose(g(x, y), np.full(10, x.sum()))
    g = ad.jit(lambda x, y: x * y, static_argnums=-1)
    assert g(2., 3) == 6.


def test_stop_gradient():
    """stop_gradient (lax_autodiff_test.testStopGradient via api_test's uses)"""
    def f(x):
        return anp.sin(x) * ad.lax.stop_gradient(x)

    def f2(x, y):
        return anp.sin(x) * ad.lax.stop_gradient(y)

    x = 3.14
    allclose(f(x), np.sin(x) * x)
    allclose(ad.grad(f)(x), np.cos(x) * x)
    allclose(ad.grad(f2, 1)(x, x), 0.)
    allclose(ad.jit(ad.grad(f))(x), np.cos(x) * x)
    allclose(ad.vmap(ad.grad(f))(np.array([1., 2.])), np.cos([1., 2.]) * np.array([1., 2.]))
    tree = {'a': np.ones(2), 'b': (2., 3.)}
    g = ad.grad(lambda t: tree_util.tree_reduce(
        operator.add, tree_util.tree_map(lambda v: anp.sum(ad.stop_gradient(v) * v), t)))(tree)
    allclose(g, tree)


def test_vmap_unmapped_last():
    """APITest.test_vmap_unmapped_last"""
    @partial(ad.vmap, out_axes=-1)
    def f(x):
        return np.zeros((2,))

    np.testing.assert_array_equal(f(np.ones(5)), np.zeros((2, 5)))


def test_vmap_caching():
    """APITest.test_vmap_caching (values; vmap of jit reuses the jitted trace)"""
    side = []

    @ad.jit
    def f(x):
        side.append(None)
        return anp.sin(x)

    x = np.arange(12.).reshape(3, 4)
    for _ in range(3):
        allclose(ad.vmap(ad.vmap(f))(x), np.sin(x))
    allclose(ad.vmap(f, in_axes=1)(x), np.sin(x).T)
