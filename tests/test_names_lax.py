"""jax.lax's remaining operators (issue 36). Expected values marked "JAX" were recorded
with JAX 0.10.2 (x64) from the expression beside them; the rest compare with numpy/scipy
or finite differences."""
import numpy as np
import pytest
import scipy.special as sps

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax

OP = np.arange(12.0).reshape(3, 4)
GDN = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
GIDX = np.array([[0, 0], [2, 3], [1, 2]])
SDN = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                  scatter_dims_to_operand_dims=(0,))
SIDX = np.array([[1], [2], [1], [5]])          # 5 is out of bounds
UPD = np.arange(16.0).reshape(4, 4) + 1


def _fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("name,ref", [
    ("acos", np.arccos), ("asin", np.arcsin), ("atan", np.arctan), ("atanh", np.arctanh),
    ("asinh", np.arcsinh), ("sinh", np.sinh), ("cosh", np.cosh), ("exp2", np.exp2),
    ("reciprocal", np.reciprocal), ("erf", sps.erf), ("erfc", sps.erfc), ("erf_inv", sps.erfinv),
    ("lgamma", sps.gammaln), ("digamma", sps.digamma), ("bessel_i0e", sps.i0e),
    ("bessel_i1e", sps.i1e)])
def test_unary_special_functions(name, ref):
    x = np.array([0.3, -0.7, 0.95])
    assert np.allclose(getattr(lax, name)(x), ref(x), rtol=1e-12, atol=1e-14)
    # derivative against finite differences
    g = ad.grad(lambda v: anp.sum(getattr(lax, name)(v)))(x)
    assert np.allclose(g, _fd_grad(lambda v: np.sum(ref(v)), x), rtol=1e-5, atol=1e-7)


def test_binary_special_functions():
    a, z = np.array([0.5, 2.0, 7.5]), np.array([0.3, 1.5, 9.0])
    assert np.allclose(lax.igamma(a, z), sps.gammainc(a, z), rtol=1e-12)
    assert np.allclose(lax.igammac(a, z), sps.gammaincc(a, z), rtol=1e-12)
    assert np.allclose(lax.betainc(a, a[::-1], np.array([0.2, 0.5, 0.9])),
                       sps.betainc(a, a[::-1], [0.2, 0.5, 0.9]), rtol=1e-12)
    assert np.allclose(lax.atan2(a, z), np.arctan2(a, z)) and np.allclose(lax.acosh(a + 1), np.arccosh(a + 1))
    assert np.allclose(lax.polygamma(np.array([1.0, 2.0, 3.0]), a), sps.polygamma([1, 2, 3], a), rtol=1e-10)
    assert np.allclose(lax.zeta(np.array([2.0, 3.5, 5.0]), a), sps.zeta([2.0, 3.5, 5.0], a), rtol=1e-10)
    assert np.array_equal(lax.nextafter(a, np.zeros(3)), np.nextafter(a, 0))
    # JAX: jl.igamma_grad_a(a, z), jl.random_gamma_grad(a, z)
    assert np.allclose(lax.igamma_grad_a(a, z), [-0.770570351375352, -0.3134886378250792,
                                                 -0.11761013727635455], rtol=1e-9)
    assert np.allclose(lax.random_gamma_grad(a, z), [1.0098019459488552, 0.936639067877217,
                                                     1.1185401953866196], rtol=1e-9)
    # and against finite differences of scipy's P(a, x)
    fd = (sps.gammainc(a + 1e-6, z) - sps.gammainc(a - 1e-6, z)) / 2e-6
    assert np.allclose(lax.igamma_grad_a(a, z), fd, rtol=1e-6)


def test_complex_parts():
    x = np.array([0.3, -0.7])
    c = lax.complex(x, 2 * x)
    assert c.dtype == np.complex128 and np.array_equal(c, x + 2j * x)
    assert np.array_equal(lax.real(c), x) and np.array_equal(lax.imag(c), 2 * x)
    assert np.array_equal(lax.conj(c), x - 2j * x)


def test_bit_operations_match_jax():
    i32 = np.array([0, 1, 255, -3, 2**30, -2**31], np.int32)
    sh = np.array([0, 1, 5, 31, 32, 40], np.int32)
    # JAX: jl.population_count(i32), jl.clz(i32), jl.shift_*(i32, sh)
    assert lax.population_count(i32).tolist() == [0, 1, 8, 31, 1, 1]
    assert lax.clz(i32).tolist() == [32, 31, 24, 0, 1, 0]
    assert lax.shift_left(i32, sh).tolist() == [0, 2, 8160, -2147483648, 0, 0]
    assert lax.shift_right_arithmetic(i32, sh).tolist() == [0, 0, 7, -1, 0, -1]
    assert lax.shift_right_logical(i32, sh).tolist() == [0, 0, 7, 1, 0, 0]
    assert all(f(i32, sh).dtype == np.int32 for f in (lax.shift_left, lax.shift_right_logical))
    # JAX: jl.bitcast_convert_type(np.array([1.0, -2.5], np.float32), jnp.uint8)
    assert lax.bitcast_convert_type(np.array([1.0, -2.5], np.float32), np.uint8).tolist() == \
        [[0, 0, 128, 63], [0, 0, 32, 192]]
    back = lax.bitcast_convert_type(np.array([[0, 0, 128, 63]], np.uint8), np.float32)
    assert back.tolist() == [1.0]
    xi = np.array([[1, 2, 4, 9], [3, 3, 0, 5]], np.int32)
    assert lax.reduce_xor(xi, (1,)).tolist() == [1 ^ 2 ^ 4 ^ 9, 3 ^ 3 ^ 0 ^ 5]
    assert lax.reduce_xor(xi > 2, (0,)).tolist() == [True, True, True, False]
    jitted = ad.jit(lambda v: (lax.clz(v), lax.shift_right_logical(v, np.int32(3))))(i32)
    assert jitted[0].tolist() == [32, 31, 24, 0, 1, 0]
    assert np.array_equal(jitted[1], lax.shift_right_logical(i32, np.int32(3)))


def test_reduce_precision_matches_jax():
    rp = np.array([1.0 + 2**-11, 1.0 + 3 * 2**-11, 70000.0, 65504.0, 1e-6, -0.1, 0.3])
    # JAX: jl.reduce_precision(rp, 5, 10) and (rp, 8, 7)
    assert lax.reduce_precision(rp, 5, 10).tolist() == [1.0, 1.001953125, np.inf, 65504.0, 0.0,
                                                        -0.0999755859375, 0.300048828125]
    assert lax.reduce_precision(rp, 8, 7).tolist() == [1.0, 1.0, 70144.0, 65536.0,
                                                       9.98377799987793e-07, -0.10009765625, 0.30078125]
    with np.errstate(over="ignore"):
        as16 = rp.astype(np.float16).astype(np.float64)
    assert np.array_equal(lax.reduce_precision(rp, 5, 10), as16 * (np.abs(rp) >= 2.0**-14))
    # the tangent is rounded like the value
    _, t = ad.jvp(lambda v: lax.reduce_precision(v, 8, 7), (rp,), (np.full(7, 0.1),))
    assert np.all(t == lax.reduce_precision(np.full(7, 0.1), 8, 7))


def test_select_n_split_and_structure():
    w = np.array([0, 2, 1, 2])
    cases = [np.full(4, float(i)) for i in range(3)]
    assert lax.select_n(w, *cases).tolist() == [0.0, 2.0, 1.0, 2.0]
    g = ad.grad(lambda c: anp.sum(lax.select_n(w, cases[0], c, cases[2]) * np.arange(4.0)))(cases[1])
    assert g.tolist() == [0.0, 0.0, 2.0, 0.0]
    parts = lax.split(np.arange(10.0).reshape(2, 5), (2, 3), axis=1)
    assert [p.shape for p in parts] == [(2, 2), (2, 3)] and parts[1][1].tolist() == [7.0, 8.0, 9.0]
    with pytest.raises(ad.errors.ShapeError, match="sum to"):
        lax.split(np.arange(5.0), (2, 2))
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert lax.broadcast_to_rank(np.ones(3), 3).shape == (1, 1, 3)
    A, B = np.arange(12.0).reshape(2, 2, 3), np.arange(12.0).reshape(2, 3, 2)
    assert np.array_equal(lax.batch_matmul(A, B), A @ B)
    assert lax.empty((2,), np.float32).dtype == np.float32
    upd = lax.dynamic_update_index_in_dim(np.zeros((3, 2)), np.ones(2), 1, 0)
    assert upd.tolist() == [[0, 0], [1, 1], [0, 0]]
    # JAX: jl.index_take(arange(24).reshape(2, 3, 4), ([0, 1, 1], [2, 0, 3]), (0, 2))
    assert lax.index_take(np.arange(24.0).reshape(2, 3, 4), (np.array([0, 1, 1]), np.array([2, 0, 3])),
                          (0, 2)).tolist() == [[2.0, 6.0, 10.0], [12.0, 16.0, 20.0], [15.0, 19.0, 23.0]]
    assert lax.optimization_barrier((1.0, [2.0])) == (1.0, [2.0])
    assert np.array_equal(lax.with_sharding_constraint(np.ones(2), None), np.ones(2))
    assert lax.platform_dependent(2.0, cpu=lambda x: x * 10, default=lambda x: x) == 20.0
    assert lax.platform_dependent(2.0, default=lambda x: x + 1) == 3.0
    sq = lax.composite(lambda x: x * x, name="my.square")
    assert float(ad.grad(sq)(3.0)) == 6.0 and sq.composite_name == "my.square"
    v = np.array([[3.0, 1.0, 4.0, 1.5], [0.0, -1.0, 2.0, 2.5]])
    vals, idx = lax.approx_max_k(v, 2)
    assert vals.tolist() == [[4.0, 3.0], [2.5, 2.0]] and idx.tolist() == [[2, 0], [3, 2]]
    vals, idx = lax.approx_min_k(v, 1, reduction_dimension=0)
    assert vals.tolist() == [[0.0, -1.0, 2.0, 1.5]] and idx.tolist() == [[1, 1, 1, 0]]


def test_gather_matches_jax_and_differentiates():
    # JAX: jl.gather(OP, GIDX, GDN-equivalent, (2, 2), mode="clip" / "fill")
    assert lax.gather(OP, GIDX, GDN, (2, 2), mode="clip").tolist() == \
        [[[0.0, 1.0], [4.0, 5.0]], [[6.0, 7.0], [10.0, 11.0]], [[6.0, 7.0], [10.0, 11.0]]]
    filled = lax.gather(OP, GIDX, GDN, (2, 2), mode="fill")
    assert filled[0].tolist() == [[0.0, 1.0], [4.0, 5.0]] and np.isnan(filled[1]).all()
    assert filled[2].tolist() == [[6.0, 7.0], [10.0, 11.0]]
    # rows, operand batching dims
    rows = lax.gather(OP, np.array([[2], [0]]), lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 4))
    assert np.array_equal(rows, OP[[2, 0]])
    bop = np.arange(24.0).reshape(2, 3, 4)
    bdn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1, 2), start_index_map=(1, 2),
                                     operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    bidx = np.array([[[0, 1], [2, 3]], [[1, 1], [0, 0]]])
    assert lax.gather(bop, bidx, bdn, (1, 1, 1)).tolist() == [[1.0, 11.0], [17.0, 12.0]]
    w = np.arange(12.0).reshape(3, 2, 2)
    f = lambda x: anp.sum(lax.gather(x, GIDX, GDN, (2, 2), mode="clip") ** 2 * w)
    g = ad.grad(f)(OP)
    assert np.allclose(g, _fd_grad(lambda x: float(f(x)), OP))
    assert np.array_equal(ad.jit(lambda x: lax.gather(x, GIDX, GDN, (2, 2), mode="clip"))(OP),
                          lax.gather(OP, GIDX, GDN, (2, 2), mode="clip"))


def test_scatter_family_matches_jax():
    # JAX: jl.scatter_add/max/mul(OP, SIDX, UPD, SDN) (index 5 dropped, JAX's default mode)
    assert lax.scatter_add(OP, SIDX, UPD, SDN).tolist() == \
        [[0.0, 1.0, 2.0, 3.0], [14.0, 17.0, 20.0, 23.0], [13.0, 15.0, 17.0, 19.0]]
    assert lax.scatter_max(OP, SIDX, UPD, SDN).tolist() == \
        [[0.0, 1.0, 2.0, 3.0], [9.0, 10.0, 11.0, 12.0], [8.0, 9.0, 10.0, 11.0]]
    assert lax.scatter_mul(OP, SIDX, UPD, SDN).tolist() == \
        [[0.0, 1.0, 2.0, 3.0], [36.0, 100.0, 198.0, 336.0], [40.0, 54.0, 70.0, 88.0]]
    assert lax.scatter_add(OP, SIDX, UPD, SDN, mode="clip").tolist() == \
        [[0.0, 1.0, 2.0, 3.0], [14.0, 17.0, 20.0, 23.0], [26.0, 29.0, 32.0, 35.0]]
    assert np.array_equal(lax.scatter_sub(OP, SIDX, UPD, SDN), 2 * OP - lax.scatter_add(OP, SIDX, UPD, SDN))
    mins = lax.scatter_min(OP, SIDX, UPD, SDN)
    assert mins[1].tolist() == [1.0, 2.0, 3.0, 4.0] and mins[0].tolist() == OP[0].tolist()
    # a dropped update never overwrites a kept one, whatever the order
    set_ = lax.scatter(OP, np.array([[1], [7], [2]]), UPD[:3], SDN)
    assert set_.tolist() == [OP[0].tolist(), UPD[0].tolist(), UPD[2].tolist()]
    dn2 = lax.ScatterDimensionNumbers((), (0, 1), (0, 1))
    app = lax.scatter_apply(OP, np.array([[0, 1], [2, 3]]), lambda t: t * 10, dn2, update_shape=(2,))
    assert app[0, 1] == 10.0 and app[2, 3] == 110.0 and app[1, 1] == 5.0
    # derivatives in operand and updates
    f = lambda o, u: anp.sum(lax.scatter_add(o, SIDX, u, SDN) ** 2)
    go, gu = ad.grad(f, argnums=(0, 1))(OP, UPD)
    assert np.allclose(go, _fd_grad(lambda o: float(f(o, UPD)), OP), rtol=1e-6)
    assert np.allclose(gu, _fd_grad(lambda u: float(f(OP, u)), UPD), rtol=1e-6)
    assert gu[3].tolist() == [0.0, 0.0, 0.0, 0.0]       # the dropped update


def test_convolutions_match_jax():
    x = np.arange(6.0).reshape(1, 1, 2, 3)
    w = np.array([[[[1.0, 2.0], [0.5, -1.0]]]])
    dn = ("NCHW", "OIHW", "NCHW")
    # JAX: jl.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=dn)
    assert lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=dn).tolist() == \
        [[[[0.0, 0.0, -1.0, 0.5, -2.0, 1.0], [0.0, 0.0, 2.0, 1.0, 4.0, 2.0],
           [-3.0, 1.5, -4.0, 2.0, -5.0, 2.5], [6.0, 3.0, 8.0, 4.0, 10.0, 5.0]]]]
    # JAX: ... (2, 1), "VALID", transpose_kernel=True
    assert lax.conv_transpose(x, w, (2, 1), "VALID", dimension_numbers=dn, transpose_kernel=True).tolist() == \
        [[[[0.0, 1.0, 4.0, 4.0], [0.0, 0.5, 0.0, -2.0], [3.0, 10.0, 13.0, 10.0], [1.5, -1.0, -1.5, -5.0]]]]
    # transpose_kernel=True is the gradient of a strided convolution with respect to its input
    xs = np.random.default_rng(0).normal(size=(1, 2, 6, 4))     # sizes divisible by the strides
    k = np.random.default_rng(1).normal(size=(3, 2, 3, 2))
    y, vjp = ad.vjp(lambda v: lax.conv_general_dilated(v, k, (2, 2), "SAME"), xs)
    ct = np.random.default_rng(2).normal(size=y.shape)
    assert np.allclose(vjp(ct)[0], lax.conv_transpose(ct, k, (2, 2), "SAME", transpose_kernel=True))
    # JAX: jl.conv_general_dilated_patches(arange(8).reshape(1, 2, 4), (2,), (2,), "SAME")
    assert lax.conv_general_dilated_patches(np.arange(8.0).reshape(1, 2, 4), (2,), (2,), "SAME").tolist() == \
        [[[0.0, 2.0], [1.0, 3.0], [4.0, 6.0], [5.0, 7.0]]]
    # an unshared convolution whose kernels are all equal is the ordinary convolution
    xi = np.random.default_rng(3).normal(size=(2, 3, 5, 4))
    kk = np.random.default_rng(4).normal(size=(4, 3, 2, 3))
    wl = np.broadcast_to(kk.reshape(4, 18, 1, 1), (4, 18, 5, 2))
    local = lax.conv_general_dilated_local(xi, wl, (1, 2), "SAME", (2, 3))
    assert np.allclose(local, lax.conv_general_dilated(xi, kk, (1, 2), "SAME"))
    spec = lax.conv_dimension_numbers((1, 5, 5, 3), (2, 2, 3, 8), ("NHWC", "HWIO", "NHWC"))
    # JAX: ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    assert spec == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)) and spec.rhs_spec == (3, 2, 0, 1)


def test_ragged_dot_matches_jax_and_differentiates():
    L = np.arange(10.0).reshape(5, 2) / 10
    R = np.arange(12.0).reshape(3, 2, 2) - 5
    gs = np.array([2, 0, 2])
    # JAX: jl.ragged_dot(L, R, gs)
    assert np.allclose(lax.ragged_dot(L, R, gs), [[-0.3, -0.2], [-1.9, -1.4], [3.7, 4.6], [5.3, 6.6], [0.0, 0.0]])
    f = lambda l, r: anp.sum(lax.ragged_dot(l, r, gs) ** 2)
    gl, gr = ad.grad(f, argnums=(0, 1))(L, R)
    assert np.allclose(gl, _fd_grad(lambda l: float(f(l, R)), L), rtol=1e-6)
    assert np.allclose(gr, _fd_grad(lambda r: float(f(L, r)), R), rtol=1e-6, atol=1e-8)


def test_fft_and_rng_bit_generator():
    x = np.random.default_rng(5).normal(size=(3, 4))
    assert np.allclose(lax.fft(x, "FFT", (3, 4)), np.fft.fft2(x))
    assert np.allclose(lax.fft(x, lax.FftType.RFFT, (4,)), np.fft.rfft(x))
    assert np.allclose(lax.fft(np.fft.rfft(x), "IRFFT", (4,)), x)
    key = np.array([0, 1, 2, 3], np.uint32)
    k2, bits = lax.rng_bit_generator(key, (1000,))
    assert k2.shape == (4,) and bits.dtype == np.uint32 and not np.array_equal(k2, key)
    k3, bits2 = lax.rng_bit_generator(key, (1000,))
    assert np.array_equal(bits, bits2) and np.array_equal(k2, k3)          # pure
    assert abs(bits.astype(np.float64).mean() / 2.0**32 - 0.5) < 0.03       # uniform bits
    _, b8 = lax.rng_bit_generator(key, (4,), np.uint8)
    assert b8.dtype == np.uint8
