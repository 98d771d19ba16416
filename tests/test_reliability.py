"""Regression tests of issue 19 (reliability): one section per item of the issue.

Each test failed before its fix. Jitted functions live at module level, so a signature
compiles once for the whole file.
"""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import errors

nan, inf = np.nan, np.inf
HERE = os.path.dirname(os.path.abspath(__file__))


def _same(got, want):
    """Equal values, NaN where NaN, the sign of zeros too."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def _run(code, env=None, timeout=240):
    """Run ``code`` in a fresh Python (the suite's cache dir, one BLAS thread)."""
    full = dict(os.environ, OPENBLAS_NUM_THREADS="1", **(env or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, cwd=HERE,
                          capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------------------------------------
# 1. NaN through the safe square root (std, linalg.norm) and hypot with scaling
# ------------------------------------------------------------------------------------------

std_j = ad.jit(anp.std)
norm_j = ad.jit(anp.linalg.norm)
hypot_j = ad.jit(anp.hypot)

NANS = np.array([nan, 1.0])


@pytest.mark.parametrize("mode", ["jit", "grad_value", "vmap", "jvp"])
@pytest.mark.parametrize("fn,jf", [(anp.std, std_j), (anp.linalg.norm, norm_j)],
                         ids=["std", "norm"])
def test_safe_sqrt_propagates_nan(fn, jf, mode):
    if mode == "jit":
        out = jf(NANS)
    elif mode == "grad_value":
        out = ad.value_and_grad(fn)(NANS)[0]
    elif mode == "vmap":
        out = ad.vmap(fn)(np.stack([NANS, [3.0, 4.0]]))[0]
    else:
        out = ad.jvp(fn, (NANS,), (np.ones(2),))[0]
    assert np.isnan(out)


def test_safe_sqrt_keeps_zero_subgradient_and_values():
    const = np.full(3, 2.0)
    assert ad.grad(anp.std)(const).tolist() == [0.0, 0.0, 0.0]
    assert ad.grad(anp.linalg.norm)(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(std_j(x), np.std(x), rtol=1e-15)
    np.testing.assert_allclose(ad.grad(anp.linalg.norm)(x), x / np.linalg.norm(x), rtol=1e-15)


HX = np.array([1e200, 3e-170, inf, nan, 0.0, -3.0, -0.0, 5e-324, 1e308, -inf])
HY = np.array([1e200, 0.0, nan, inf, 0.0, 4.0, -0.0, 5e-324, 1e308, 2.0])


def test_hypot_scaled_and_special_values_under_jit():
    _same(hypot_j(HX, HY), np.hypot(HX, HY))
    _same(ad.vmap(anp.hypot)(HX, HY), np.hypot(HX, HY))
    _same(ad.jvp(anp.hypot, (HX, HY), (np.ones(10), np.ones(10)))[0], np.hypot(HX, HY))


def test_hypot_derivatives():
    x, y = np.array([3.0, 1e200, 3e-170, -5.0]), np.array([4.0, 1e200, 0.0, 12.0])
    r = np.hypot(x, y)
    gx, gy = ad.grad(lambda a, b: anp.sum(anp.hypot(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, x / r, rtol=1e-14)
    np.testing.assert_allclose(gy, y / r, rtol=1e-14)
    # zero subgradient at the origin, like norm
    assert ad.grad(lambda a: anp.hypot(a, 0.0))(0.0) == 0.0
    # second derivative d²r/dx² = y²/r³, also where |x| = |y|
    for a, b in [(3.0, 4.0), (2.0, 2.0), (-2.0, 2.0)]:
        h = ad.grad(ad.grad(lambda t: anp.hypot(t, b)))(a)
        np.testing.assert_allclose(h, b * b / np.hypot(a, b) ** 3, rtol=1e-13)


# ------------------------------------------------------------------------------------------
# 2. median (and quantile) keep NaN
# ------------------------------------------------------------------------------------------

median_j = ad.jit(anp.median)
median_ax_j = ad.jit(lambda a: anp.median(a, axis=1))


def test_median_nan_in_every_mode():
    a = np.array([nan, 1.0, 2.0])
    assert np.isnan(median_j(a))
    assert np.isnan(ad.value_and_grad(anp.median)(a)[0])
    m = np.array([[nan, 1.0, 2.0], [3.0, 1.0, 2.0], [1.0, 4.0, nan]])
    _same(median_ax_j(m), np.median(m, axis=1))
    _same(ad.vmap(anp.median)(m), np.median(m, axis=1))
    assert np.isnan(ad.jit(lambda a: anp.quantile(a, 0.3))(a))


@pytest.mark.parametrize("shape,axis", [((0,), None), ((2, 0), -1), ((0, 3), None)])
def test_quantile_of_an_empty_slice_raises_like_numpy(shape, axis):
    # found by the fuzzer: the kernel's clamped gather returned a value where numpy raises
    with pytest.raises(IndexError):
        np.quantile(np.zeros(shape), 0.3, axis=axis)
    with pytest.raises(IndexError):
        ad.jit(lambda a: anp.quantile(a, 0.3, axis=axis))(np.zeros(shape))
    assert ad.jit(lambda a: anp.quantile(a, 0.3, axis=0))(np.zeros((3, 0))).shape == (0,)


def test_bool_square_and_sign_follow_numpy():
    # found by the fuzzer: numpy squares bools in int8 and has no sign for bools
    b = np.array([True, False])
    _same(ad.jit(anp.square)(b), np.square(b))
    with pytest.raises(TypeError):
        np.sign(b)
    for fn in (anp.sign, anp.negative, lambda x: x - x, lambda x: -x):
        with pytest.raises(TypeError, match="bool"):
            ad.jit(fn)(b)
    _same(ad.jit(lambda x: x - 1)(b), b - 1)                 # a Python int promotes the bool


def test_median_of_negative_zeros_is_positive_zero():
    # found by the fuzzer (vmap of median(-0.)): numpy's median is a mean, a sum from +0.0
    for x in (np.array([-0.0]), np.array([-0.0, -0.0]), np.array([[-0.0], [0.0]])):
        _same(median_j(x), np.median(x))
        _same(ad.vmap(anp.median)(x.reshape(1, -1)), np.median(x.reshape(1, -1), axis=1))


def test_median_values_and_gradient_without_nan():
    a = np.array([4.0, 1.0, 3.0, 2.0])
    assert median_j(a) == 2.5
    np.testing.assert_array_equal(ad.grad(anp.median)(a), [0.0, 0.0, 0.5, 0.5])


# ------------------------------------------------------------------------------------------
# 3. Python scalars as jit / jvp arguments are weakly typed (as closure constants are)
# ------------------------------------------------------------------------------------------

mul_j = ad.jit(lambda a, s: a * s)
add_j = ad.jit(lambda a, s: a + s)


def test_weak_python_scalar_arguments_of_jit():
    f32 = np.array([1.5, 2.0], np.float32)
    out = mul_j(f32, 2.0)
    assert out.dtype == np.float32 and out.tolist() == [3.0, 4.0]
    assert (f32 * 2.0).dtype == out.dtype                      # numpy (NEP 50)
    i32 = np.array([1, 2], np.int32)
    assert add_j(i32, 5).dtype == np.int32 and add_j(i32, 5).tolist() == [6, 7]
    u8 = np.array([100, 7], np.uint8)
    out = mul_j(u8, 3)
    assert out.dtype == np.uint8 and out.tolist() == (u8 * 3).tolist() == [44, 21]
    # the same scalar as a closure constant, for comparison
    assert ad.jit(lambda a: a * 2.0)(f32).dtype == np.float32
    # a float64 array stays float64, an int array with a float scalar becomes float64
    assert mul_j(np.ones(2), 2.0).dtype == np.float64
    assert mul_j(i32, 0.5).dtype == np.float64 and mul_j(i32, 0.5).tolist() == [0.5, 1.0]


def test_weak_python_scalar_arguments_of_jvp():
    f32 = np.ones(2, np.float32)
    out, t = ad.jvp(lambda a, s: a * s, (f32, 2.0), (f32, 1.0))
    assert out.dtype == np.float32 and t.dtype == np.float32
    assert out.tolist() == [2.0, 2.0] and t.tolist() == [3.0, 3.0]


# ------------------------------------------------------------------------------------------
# 4. complex input under jit: compiled, numpy's values and dtypes (docs/complex.md)
# ------------------------------------------------------------------------------------------

_CJ = {"real": ad.jit(anp.real), "conj": ad.jit(anp.conj), "imag": ad.jit(anp.imag),
       "double": ad.jit(lambda z: z * 2)}


@pytest.mark.parametrize("name,ref", [("real", np.real), ("conj", np.conj), ("imag", np.imag),
                                      ("double", lambda z: z * 2)])
def test_complex_input_under_jit_matches_numpy(name, ref):
    for z in (np.array([1.0 + 2.0j, -0.5j]), np.complex128(1.0 + 2.0j),
              np.array([1 + 2j], np.complex64)):
        got, want = _CJ[name](z), ref(z)
        assert np.asarray(got).dtype == np.asarray(want).dtype, (name, z)
        np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------------------------
# 5. the jit cache under threads
# ------------------------------------------------------------------------------------------

class _EvictingCache(dict):
    """An LRU whose ``get`` hands out an entry and then loses it, as when another thread
    evicts it between our lookup and the LRU touch."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def get(self, key, default=None):
        v = self.inner.get(key, default)
        self.inner.pop(key, None)
        return v

    def __len__(self):
        return 2

    def move_to_end(self, key):
        self.inner.move_to_end(key)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.mark.parametrize("args", [(np.ones(3),), ({"a": np.ones(3)},)], ids=["fast", "tree"])
def test_entry_evicted_between_lookup_and_touch_is_not_an_error(args):
    f = ad.jit(lambda x: anp.sum(ad.tree_util.tree_leaves(x)[0]) * 2.0)
    assert f(*args) == 6.0
    f._cache = _EvictingCache(f._cache)
    assert f(*args) == 6.0


def test_thread_stress_small_cache_many_shapes():
    old, old_cap = sys.getswitchinterval(), ad.config.cache_size
    f = ad.jit(lambda x: anp.sum(x * x) + 1.0)
    shapes = [np.arange(float(n)) for n in range(1, 7)]
    want = [float(np.sum(x * x) + 1.0) for x in shapes]
    errs, bad = [], []

    def work(k):
        try:
            for i in range(400):
                j = (i * 7 + k) % len(shapes)
                if f(shapes[j]) != want[j]:
                    bad.append(j)
        except BaseException as e:  # noqa: BLE001 - collected and reported below
            errs.append(repr(e))

    ad.config.update("cache_size", 2)
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
        ad.config.update("cache_size", old_cap)
    assert errs == [] and bad == []
    info = f.cache_info()
    assert info.hits + info.misses == 8 * 400 and info.size <= 2


# ------------------------------------------------------------------------------------------
# 6. fork after a parallel kernel; spawn
# ------------------------------------------------------------------------------------------

FORK_CHILD = """
import os, numpy as np
import autodiff as ad, autodiff.numpy as anp
ad.config.update("jit_background_compile", False)
ad.config.update("jit_parallel_threshold", 1)        # prange for any size
f = ad.jit(lambda x: anp.sum(anp.sin(x) * 2.0))
x = np.linspace(0.0, 1.0, 4096)
want = float(np.sum(np.sin(x) * 2.0))
assert abs(f(x) - want) < 1e-9 and "prange" in f.lower(x).source
pid = os.fork()
if pid == 0:
    ok = abs(f(x) - want) < 1e-9 and abs(f(x[:64]) - float(np.sum(np.sin(x[:64]) * 2.0))) < 1e-9
    os._exit(0 if ok and ad.config.jit_parallel_threshold == float("inf") else 3)
_, status = os.waitpid(pid, 0)
print("CHILD", os.waitstatus_to_exitcode(status), "PARENT", abs(f(x) - want) < 1e-9,
      ad.config.jit_parallel_threshold)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork exists on POSIX only")
def test_fork_after_parallel_kernel():
    r = _run(FORK_CHILD)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "CHILD 0 PARENT True 1" in r.stdout, (r.stdout, r.stderr[-2000:])
    assert "fork() called from a process already using" not in r.stderr


def _spawn_work(n):
    import autodiff as ad_
    import autodiff.numpy as anp_
    ad_.config.update("jit_background_compile", False)
    return float(ad_.jit(lambda x: anp_.sum(x * x))(np.arange(float(n))))


@pytest.mark.slow
def test_spawn_pool_runs_jitted_code():
    import multiprocessing as mp
    with mp.get_context("spawn").Pool(1) as pool:
        assert pool.map(_spawn_work, [3, 4]) == [5.0, 14.0]


# ------------------------------------------------------------------------------------------
# 7. empty reductions: numpy's behaviour in every mode
# ------------------------------------------------------------------------------------------

EMPTY = np.zeros(0)


@pytest.mark.parametrize("fn", [anp.max, anp.min, anp.argmax, anp.argmin, anp.amax])
@pytest.mark.parametrize("mode", ["eager", "jit", "grad", "vmap"])
def test_empty_max_min_argmax_raise_everywhere(fn, mode):
    with pytest.raises(ValueError):
        getattr(np, fn.__name__)(EMPTY)                      # numpy raises
    with pytest.raises(ValueError, match="empty|zero-size"):
        if mode == "eager":
            fn(EMPTY)
        elif mode == "jit":
            ad.jit(fn)(EMPTY)
        elif mode == "grad":
            ad.grad(lambda x: anp.sum(fn(x) * 1.0))(EMPTY)
        else:
            ad.vmap(fn)(np.zeros((2, 0)))


def test_empty_reductions_with_initial_and_nonempty_axes():
    assert ad.jit(lambda x: anp.max(x, initial=-3.0))(EMPTY) == -3.0
    assert ad.jit(lambda x: anp.max(x, axis=1))(np.zeros((0, 3))).shape == (0,)


lse_j = ad.jit(anp.logsumexp)


def test_logsumexp_of_empty_is_minus_inf():
    assert anp.logsumexp(EMPTY) == -inf
    assert lse_j(EMPTY) == -inf
    assert ad.value_and_grad(anp.logsumexp)(EMPTY)[0] == -inf
    assert ad.grad(anp.logsumexp)(EMPTY).shape == (0,)
    assert ad.vmap(anp.logsumexp)(np.zeros((2, 0))).tolist() == [-inf, -inf]
    _same(anp.logsumexp(np.zeros((2, 0)), axis=1), np.array([-inf, -inf]))
    assert lse_j(np.array([1000.0, 1000.0])) == 1000.0 + np.log(2.0)


# ------------------------------------------------------------------------------------------
# 8. zero-size contraction
# ------------------------------------------------------------------------------------------

def test_einsum_zero_size_contraction():
    v = np.ones((2, 0))
    f = lambda v: anp.sum(anp.einsum("ij,kj->ik", v, v))  # noqa: E731
    assert ad.grad(f)(v).shape == (2, 0)
    _same(ad.jit(lambda v: anp.einsum("ij,kj->ik", v, v))(v), np.einsum("ij,kj->ik", v, v))
    # broadcasting a size-1 index against a size-0 one
    a, b = np.ones((1, 3)), np.ones((0, 3))
    _same(ad.jit(lambda a, b: anp.einsum("ij,ij->ij", a, b))(a, b), np.einsum("ij,ij->ij", a, b))


# ------------------------------------------------------------------------------------------
# 9. clear errors
# ------------------------------------------------------------------------------------------

def test_big_endian_input_under_eager_grad():
    x = np.array([1.0, 2.0], dtype=">f8")
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sum(x * x))(x), [2.0, 4.0])


def test_sort_of_0d_raises_numpys_axis_error_in_every_mode():
    with pytest.raises(np.exceptions.AxisError):
        np.sort(np.float64(1.0))
    with pytest.raises(np.exceptions.AxisError, match="axis -1"):
        ad.grad(lambda x: anp.sum(anp.sort(x)))(np.float64(1.0))
    with pytest.raises(np.exceptions.AxisError, match="axis -1"):
        ad.jit(anp.sort)(np.float64(1.0))


def test_custom_vjp_wrong_cotangent_shape_names_the_rule():
    @ad.custom_vjp
    def twice(x):
        return x * 2.0

    twice.defvjp(lambda x: (x * 2.0, None), lambda r, g: (np.ones(3),))
    with pytest.raises(errors.ShapeError, match=r"custom_vjp bwd of twice .*\(3,\).*\(2,\)"):
        ad.grad(lambda x: anp.sum(twice(x)))(np.ones(2))
    twice.defvjp(lambda x: (x * 2.0, None), lambda r, g: (2.0 * g,))
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sum(twice(x)))(np.ones(2)), [2.0, 2.0])


def test_vmap_in_axes_dict_with_a_misspelled_key():
    d = {"a": np.ones(2), "b": np.arange(2.0)}
    with pytest.raises(ValueError, match="unknown key.*'aa'"):
        ad.vmap(lambda d: d["a"] * 2, in_axes=({"aa": 0, "b": 0},))(d)
    out = ad.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))(d)
    np.testing.assert_array_equal(out, [[1.0, 2.0], [1.0, 2.0]])


def test_jvp_tangent_dtype_must_match_primal():
    with pytest.raises(errors.DTypeError, match="float32.*float64"):
        ad.jvp(lambda x: x * 2, (np.ones(2),), (np.ones(2, np.float32),))
    # a Python number tangent is weak, and float32 with float32 is fine
    assert ad.jvp(lambda x: x * 2, (np.float32(1.0),), (1.0,))[1] == 2.0
    assert ad.jvp(lambda x: x * 2, (np.ones(1, np.float32),), (np.ones(1, np.float32),))[1].dtype \
        == np.float32


int_j = ad.jit(lambda x: x * 2)


def test_python_int_beyond_int64_as_jit_argument():
    assert int_j(5) == 10
    for big in (2 ** 70, -2 ** 64):        # on the cached fast path and on a miss
        with pytest.raises(errors.DTypeError, match="does not fit in int64"):
            int_j(big)
    with pytest.raises(errors.DTypeError, match="does not fit in int64"):
        ad.jit(lambda x, y: x + y)(2 ** 70, 1)


# ------------------------------------------------------------------------------------------
# 10. small semantics: sign(-0.), fmod(-0., 2), power(-inf, .5), logistic subnormals, caches
# ------------------------------------------------------------------------------------------

sign_j = ad.jit(anp.sign)
fmod_j = ad.jit(anp.fmod)
sqrt_pow_j = ad.jit(lambda x: anp.power(x, 0.5))


def test_sign_of_signed_zero_and_nan_under_jit():
    x = np.array([-0.0, 0.0, nan, -inf, 3.0, -2.0, 5e-324])
    _same(sign_j(x), np.sign(x))
    _same(sign_j(x.astype(np.float32)), np.sign(x.astype(np.float32)))
    # found by the fuzzer's uint8 programs: the kernel built the literal np.uint8(-1)
    for dt in (np.uint8, np.uint64, np.int8):
        u = np.array([3, 0, 1], dt)
        _same(sign_j(u), np.sign(u))


def test_fmod_matches_numpy():
    a = np.array([-0.0, 0.0, -7.0, 7.0, 5.5, -5.5, 1e20, inf, 3.0, nan, -1e-300])
    b = np.array([2.0, -2.0, 2.0, -2.0, 1.5, 1.5, 3.0, 2.0, inf, 1.0, 3.0])
    with np.errstate(invalid="ignore"):
        want = np.fmod(a, b)
    _same(fmod_j(a, b), want)
    ia, ib = np.array([-7, 7, -7, 6]), np.array([2, -2, -2, 4])
    _same(fmod_j(ia, ib), np.fmod(ia, ib))
    ga, gb = ad.grad(lambda x, y: anp.sum(anp.fmod(x, y)), argnums=(0, 1))(
        np.array([7.0, -7.0, 5.5]), np.array([2.0, 2.0, -1.5]))
    np.testing.assert_array_equal(ga, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(gb, -np.trunc(np.array([7.0, -7.0, 5.5]) / [2.0, 2.0, -1.5]))


@pytest.mark.parametrize("a,b", [
    (np.array([-7, 7, -7, 7, -128, 5], np.int8), np.array([2, -2, -2, 2, 3, 0], np.int8)),
    (np.array([True, False]), np.array([True, True])),
    (np.array([200, 3], np.uint8), np.array([7, 0], np.uint8)),
], ids=["int8", "bool", "uint8"])
def test_fmod_integers_match_numpy(a, b):
    # found by the integer fuzz run: |int8(-128)| overflows, and numpy computes bools in int8
    with np.errstate(divide="ignore"):
        want = np.fmod(a, b)
    _same(fmod_j(a, b), want)
    _same(ad.jit(anp.fmod, backend="interpret")(a, b), want)


def test_fmod_gradient_at_zero_dividend():
    # found by the fuzzer (Program[(3,) float64: v6 = fmod(v1, v0)] at v1 = 0): fmod(x, 1) = x
    # near 0, so the slope is 1 there, from either side of zero
    g = ad.grad(lambda x: anp.sum(anp.fmod(x, np.array([1.0, 1.0, -3.0]))))(np.array([0.0, -0.0, 0.0]))
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0])


def test_power_with_scalar_half_follows_numpy():
    x = np.array([-inf, -0.0, 0.0, 4.0, inf, -1.0, nan])
    with np.errstate(invalid="ignore"):
        want = np.power(x, 0.5)
    _same(sqrt_pow_j(x), want)
    _same(ad.vmap(lambda t: anp.power(t, 0.5))(x), want)
    # an array exponent is C's pow in numpy: (-inf) ** 0.5 = inf there
    with np.errstate(invalid="ignore"):
        _same(ad.jit(anp.power)(x, np.full(7, 0.5)), np.power(x, np.full(7, 0.5)))
    assert ad.grad(lambda t: anp.power(t, 0.5))(4.0) == 0.25


def test_logistic_keeps_subnormal_results():
    x = np.array([-745.0, -740.0, -709.9, -700.0, -30.0, 0.0, 30.0, 800.0])
    exact = np.where(x < 0, np.exp(x) / (1 + np.exp(x)), 1 / (1 + np.exp(-np.minimum(x, 700))))
    np.testing.assert_allclose(ad.nn.sigmoid(x), exact, rtol=1e-15, atol=0)
    assert ad.nn.sigmoid(np.array([-740.0], np.float32))[0] == 0.0       # below f32's range
    np.testing.assert_allclose(ad.jit(ad.nn.sigmoid)(x), exact, rtol=2e-15, atol=0)


CACHE_CHILD = """
import sys, numpy as np
import autodiff as ad, autodiff.numpy as anp
from autodiff.backends import compile_cache
ad.config.update("jit_background_compile", False)
ad.config.update("cache_dir", sys.argv[1] if len(sys.argv) > 1 else {path!r})
f = ad.jit(lambda x: anp.cos(x) * 3.0 + 0.25)
assert np.allclose(f(np.ones(3)), np.cos(1.0) * 3.0 + 0.25)
s = compile_cache.stats()
print("STATS", s["compiles"], s["disk_loads"] + s["piece_disk_loads"])
"""
NUMBA_PATH = {"AUTODIFF_JIT_LLVM_TIER": "0"}     # jit without the direct LLVM tier


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="owner and mode bits are POSIX")
def test_read_only_populated_cache_is_used(tmp_path):
    # pins the Numba path (AUTODIFF_JIT_LLVM_TIER=0): the disk cache holds Numba's kernels
    cdir = tmp_path / "cache"
    cdir.mkdir(mode=0o700)
    first = _run(CACHE_CHILD.format(path=str(cdir)), env=NUMBA_PATH)
    assert first.returncode == 0, first.stderr[-2000:]
    for root, dirs, files in os.walk(cdir):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o500 if n in dirs else 0o400)
    os.chmod(cdir, 0o500)
    try:
        second = _run(CACHE_CHILD.format(path=str(cdir)), env=NUMBA_PATH)
        assert second.returncode == 0, second.stderr[-2000:]
        assert "STATS 0 " in second.stdout and "STATS 0 0" not in second.stdout, second.stdout
    finally:
        for root, dirs, files in os.walk(cdir):
            os.chmod(root, 0o700)


@pytest.mark.slow
def test_unusable_cache_dir_writes_nothing_under_home(tmp_path):
    # pins the Numba path (AUTODIFF_JIT_LLVM_TIER=0): the disk cache holds Numba's kernels
    home = tmp_path / "home"
    home.mkdir()
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    r = _run(CACHE_CHILD.format(path=str(blocker / "cache")),
             env=dict(NUMBA_PATH, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache")))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "STATS 1 0" in r.stdout and "compiling without the disk cache" in r.stderr
    assert list(home.rglob("*")) == []
