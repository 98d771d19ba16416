"""``autodiff.image`` (``jax.image``): ``resize`` and ``scale_and_translate`` against a
reference written from the definition (one scalar loop per output pixel), Pillow's
antialiased resampling, JAX's published golden values, and finite differences."""
import math

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import image
from autodiff.image import ResizeMethod, resize, scale_and_translate

RNG = np.random.default_rng(7)
METHODS = ["linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]


# ---------------------------------------------------------------- the reference

def _cubic(x, a):
    x = abs(x)
    if x < 1:
        return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
    if x < 2:
        return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
    return 0.0


def _lanczos(x, r):
    x = abs(x)
    if x == 0:
        return 1.0
    if x > r:
        return 0.0
    return math.sin(math.pi * x) / (math.pi * x) * math.sin(math.pi * x / r) / (math.pi * x / r)


def _kernel(method, antialias):
    return {"linear": lambda x: max(0.0, 1.0 - abs(x)),
            "cubic": lambda x: _cubic(x, -0.5),
            "cubic-pytorch": (lambda x: _cubic(x, -0.5)) if antialias
            else (lambda x: _cubic(x, -0.75)),
            "lanczos3": lambda x: _lanczos(x, 3.0),
            "lanczos5": lambda x: _lanczos(x, 5.0)}[method]


def ref_weights(m, n, scale, trans, method, antialias):
    """(m, n): column i holds the weights of the input pixels for output pixel i."""
    w = np.zeros((m, n))
    stretch = max(1.0 / scale, 1.0) if antialias else 1.0
    edge_repeat = method == "cubic-pytorch" and not antialias
    for i in range(n):
        c = (i + 0.5 - trans) / scale - 0.5         # input coordinate of the output centre
        if not edge_repeat and not -0.5 <= c <= m - 0.5:
            continue                                 # outside the input: zero
        if method == "area":
            lo, hi = (i - trans) / scale, (i + 1 - trans) / scale
            for j in range(m):
                w[j, i] = max(0.0, min(hi, j + 1) - max(lo, j))
        elif edge_repeat:
            for j in range(-2, m + 2):
                w[min(max(j, 0), m - 1), i] += _kernel(method, antialias)(c - j)
        else:
            for j in range(m):
                w[j, i] = _kernel(method, antialias)((c - j) / stretch)
        total = w[:, i].sum()
        w[:, i] = w[:, i] / total if abs(total) > 1000 * np.finfo(np.float32).eps else 0.0
    return w


def ref_scale_translate(x, shape, dims, scales, transl, method, antialias=True):
    x = np.asarray(x, dtype=float)
    for d, s, t in zip(dims, scales, transl):
        w = ref_weights(x.shape[d], shape[d], s, t, method, antialias)
        x = np.moveaxis(np.tensordot(x, w, axes=([d], [0])), -1, d)
    return x


def ref_resize(x, shape, method, antialias=True):
    if method == "nearest":
        for d, (m, n) in enumerate(zip(x.shape, shape)):
            x = np.take(x, [int(math.floor((i + 0.5) * m / n)) for i in range(n)], axis=d)
        return x
    dims = [d for d in range(x.ndim) if x.shape[d] != shape[d]]
    return ref_scale_translate(x, shape, dims, [shape[d] / x.shape[d] for d in dims],
                               [0.0] * len(dims), method, antialias)


# ---------------------------------------------------------------- values

@pytest.mark.parametrize("method", METHODS + ["nearest"])
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("m,n", [(7, 3), (5, 4), (3, 8), (4, 11), (6, 6), (9, 1)])
def test_resize_1d_matches_the_definition(method, antialias, m, n):
    x = RNG.normal(size=m)
    got = resize(x, (n,), method, antialias=antialias)
    np.testing.assert_allclose(got, ref_resize(x, (n,), method, antialias),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", METHODS + ["nearest"])
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("out_hw", [(3, 10), (12, 4), (2, 2), (9, 7)])
def test_resize_hwc_image_matches_the_definition(method, antialias, out_hw):
    x = RNG.normal(size=(6, 5, 3))
    shape = out_hw + (3,)
    got = resize(x, shape, method, antialias=antialias)
    assert got.shape == shape
    np.testing.assert_allclose(got, ref_resize(x, shape, method, antialias),
                               rtol=1e-12, atol=1e-12)
    # the channels are resized independently
    np.testing.assert_allclose(got[..., 1], resize(x[..., 1], out_hw, method,
                                                   antialias=antialias), atol=1e-12)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5", "area",
                                    "cubic-pytorch"])
@pytest.mark.parametrize("antialias", [True, False])
def test_scale_and_translate_matches_the_definition(method, antialias):
    x = RNG.normal(size=(2, 7, 6))
    dims, scales, trans = (1, 2), [0.45, 1.7], [0.8, -1.3]
    got = scale_and_translate(x, (2, 5, 9), dims, np.array(scales), np.array(trans), method,
                              antialias=antialias)
    np.testing.assert_allclose(got, ref_scale_translate(x, (2, 5, 9), dims, scales, trans,
                                                        method, antialias), atol=1e-12)
    # negative spatial dims name the same axes
    neg = scale_and_translate(x, (2, 5, 9), (-2, -1), np.array(scales), np.array(trans),
                              method, antialias=antialias)
    np.testing.assert_allclose(neg, got, atol=0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("shape", [(2, 9), (11, 3), (4, 4)])
def test_resize_of_a_constant_image_is_constant(method, antialias, shape):
    got = resize(np.full((5, 6), 2.5), shape, method, antialias=antialias)
    np.testing.assert_allclose(got, np.full(shape, 2.5), rtol=1e-13)


@pytest.mark.parametrize("m,n", [(4, 9), (5, 16), (3, 3)])
def test_linear_upsampling_of_a_ramp_samples_the_ramp(m, n):
    got = resize(np.arange(m, dtype=float) * 2.0 + 1.0, (n,), "bilinear")
    pos = np.clip((np.arange(n) + 0.5) * m / n - 0.5, 0, m - 1)   # clamped at the edges
    np.testing.assert_allclose(got, pos * 2.0 + 1.0, rtol=1e-13)


def test_known_values():
    np.testing.assert_allclose(resize(np.array([0.0, 1.0, 2.0, 3.0]), (8,), "linear"),
                               [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.0])
    # antialiased halving with the triangle kernel: weights (1, 3, 3, 1)/8 inside
    np.testing.assert_allclose(resize(np.arange(8.0), (4,), "linear"),
                               [5 / 7, 2.5, 4.5, 44 / 7], rtol=1e-13)
    np.testing.assert_allclose(resize(np.arange(8.0), (4,), "linear", antialias=False),
                               [0.5, 2.5, 4.5, 6.5], rtol=1e-13)
    np.testing.assert_array_equal(resize(np.arange(6), (3,), "nearest"), [1, 3, 5])
    np.testing.assert_allclose(resize(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), (2,), "area"),
                               [2.0, 5.0])


# JAX's tests/image_test.py golden values (computed there with TensorFlow and PyTorch)
_UP = {
    "linear": [64.0, 56.0, 40.0, 32.0, 56.0, 52.0, 44.0, 40.0, 40.0, 44.0, 52.0, 56.0,
               36.5, 45.625, 63.875, 73.0, 45.5, 56.875, 79.625, 91.0, 50.0, 62.5, 87.5,
               100.0],
    "lanczos3": [75.8294, 59.6281, 38.4313, 22.23, 60.6851, 52.0037, 40.6454, 31.964,
                 35.8344, 41.0779, 47.9383, 53.1818, 24.6968, 43.0769, 67.1244, 85.5045,
                 35.7939, 56.4713, 83.5243, 104.2017, 44.8138, 65.1949, 91.8603, 112.2413],
    "lanczos5": [77.5699, 60.0223, 40.6694, 23.1219, 61.8253, 51.2369, 39.5593, 28.9709,
                 35.7438, 40.8875, 46.5604, 51.7041, 21.5942, 43.5299, 67.7223, 89.658,
                 32.1213, 56.784, 83.984, 108.6467, 44.5802, 66.183, 90.0082, 111.6109],
    "cubic": [70.1453, 59.0252, 36.9748, 25.8547, 59.3195, 53.3386, 41.4789, 35.4981,
              36.383, 41.285, 51.0051, 55.9071, 30.2232, 42.151, 65.8032, 77.731, 41.6492,
              55.823, 83.9288, 98.1026, 47.0363, 62.2744, 92.4903, 107.7284],
    "nearest": [64.0, 64.0, 32.0, 32.0, 64.0, 64.0, 32.0, 32.0, 32.0, 32.0, 64.0, 64.0,
                32.0, 32.0, 64.0, 64.0, 50.0, 50.0, 100.0, 100.0, 50.0, 50.0, 100.0, 100.0],
}
_DOWN_DATA = [51, 38, 32, 89, 41, 21, 97, 51, 33, 87, 89, 34, 21, 97, 43, 25, 25, 92, 41, 11,
              84, 11, 55, 111, 23, 99, 50, 83, 13, 92, 52, 43, 90, 43, 14, 89, 71, 32, 23, 23,
              35, 93]
_DOWN = {
    (True, "linear"): [43.5372, 59.3694, 53.6907, 49.3221, 56.8168, 55.4849, 0, 0, 0],
    (True, "lanczos3"): [43.2884, 57.9091, 54.6439, 48.5856, 58.2427, 53.7551, 0, 0, 0],
    (True, "lanczos5"): [43.9209, 57.6360, 54.9575, 48.9272, 58.1865, 53.1948, 0, 0, 0],
    (True, "cubic"): [42.9935, 59.1687, 54.2138, 48.2640, 58.2678, 54.4088, 0, 0, 0],
    (False, "linear"): [43.6071, 89, 59, 37.1785, 27.2857, 58.3571, 0, 0, 0],
    (False, "lanczos3"): [44.1390, 87.8786, 63.3111, 25.1161, 20.8795, 53.6165, 0, 0, 0],
    (False, "lanczos5"): [44.8835, 85.5896, 66.7231, 16.9983, 19.8891, 47.1446, 0, 0, 0],
    (False, "cubic"): [43.6426, 88.8854, 60.6638, 31.4685, 22.1204, 58.3457, 0, 0, 0],
}


@pytest.mark.parametrize("method", sorted(_UP))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_resize_up_golden(method, dtype):
    x = np.array([64, 32, 32, 64, 50, 100], dtype=dtype).reshape(1, 3, 2, 1)
    got = resize(x, (1, 6, 4, 1), method)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.ravel(), _UP[method], atol=1e-4 if dtype == np.float64
                               else 2e-3)


@pytest.mark.parametrize("key", sorted(_DOWN))
def test_scale_and_translate_down_golden(key):
    antialias, method = key
    x = np.array(_DOWN_DATA, dtype=np.float32).reshape(1, 6, 7, 1)
    s, t = np.array([1.0, 0.35, 0.4, 1.0], np.float32), np.array([0, 0.2, 0.1, 0], np.float32)
    got = scale_and_translate(x, (1, 3, 3, 1), (0, 1, 2, 3), s, t, method, antialias=antialias)
    np.testing.assert_allclose(got.ravel(), _DOWN[key], atol=2e-3)
    sub = scale_and_translate(x, (1, 3, 3, 1), (1, 2), s[1:3], t[1:3], method,
                              antialias=antialias)
    np.testing.assert_allclose(sub, got, atol=1e-5)


def test_cubic_pytorch_golden():
    x = np.arange(10, dtype=np.float32).reshape(2, 5) / 9.0
    expected = [
        [-0.0703, -0.0373, 0.0156, 0.0855, 0.1306, 0.1966, 0.2418, 0.3116, 0.3646, 0.3976],
        [0.1141, 0.1471, 0.2001, 0.2700, 0.3151, 0.3811, 0.4262, 0.4961, 0.5490, 0.5820],
        [0.4180, 0.4510, 0.5039, 0.5738, 0.6189, 0.6849, 0.7300, 0.7999, 0.8529, 0.8859],
        [0.6024, 0.6354, 0.6884, 0.7582, 0.8034, 0.8694, 0.9145, 0.9844, 1.0373, 1.0703]]
    got = resize(x, (4, 10), "bicubic-pytorch", antialias=False)
    np.testing.assert_allclose(got, expected, atol=1e-3)
    # with antialias it is the Keys cubic
    np.testing.assert_array_equal(resize(x, (4, 10), "bicubic-pytorch"),
                                  resize(x, (4, 10), "bicubic"))


@pytest.mark.parametrize("method,pil", [("linear", "BILINEAR"), ("cubic", "BICUBIC"),
                                        ("lanczos3", "LANCZOS")])
@pytest.mark.parametrize("out_hw", [(3, 4), (13, 17), (4, 15)])
def test_resize_matches_pillow_antialiased(method, pil, out_hw):
    Image = pytest.importorskip("PIL.Image")
    x = RNG.uniform(0, 10, size=(7, 9)).astype(np.float32)
    want = np.asarray(Image.fromarray(x).resize(out_hw[::-1], getattr(Image, pil)))
    got = resize(x, out_hw, method, antialias=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_dtypes_and_shapes():
    x32 = RNG.normal(size=(4, 4)).astype(np.float32)
    assert resize(x32, (6, 3), "cubic").dtype == np.float32
    assert resize(np.arange(16).reshape(4, 4), (6, 3), "linear").dtype == np.float64
    assert resize(np.arange(16).reshape(4, 4), (6, 3), "nearest").dtype == np.arange(1).dtype
    assert resize(np.ones((3, 4)), np.array((10, 17)), "nearest").shape == (10, 17)
    z = RNG.normal(size=(4, 3)) + 1j * RNG.normal(size=(4, 3))
    np.testing.assert_allclose(resize(z, (7, 3), "cubic"),
                               resize(z.real, (7, 3), "cubic")
                               + 1j * resize(z.imag, (7, 3), "cubic"), atol=1e-13)
    # the identity warp and unchanged sizes give the input back
    np.testing.assert_array_equal(resize(x32, (4, 4), "lanczos5"), x32)


@pytest.mark.parametrize("method", METHODS + ["nearest"])
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("src,dst", [((1,), (0,)), ((5, 5), (5, 0)), ((5, 5), (0, 1)),
                                     ((5, 5), (0, 0))])
def test_empty_outputs(method, antialias, src, dst):
    out = resize(np.ones(src, np.float32), dst, method, antialias=antialias)
    assert out.shape == dst and out.dtype == np.float32


def test_resize_method_names():
    assert ResizeMethod.from_string("triangle") is ResizeMethod.LINEAR
    assert ResizeMethod.from_string("trilinear") is ResizeMethod.LINEAR
    assert ResizeMethod.from_string("bicubic") is ResizeMethod.CUBIC
    assert ResizeMethod.from_string("lanczos5") is ResizeMethod.LANCZOS5
    assert ResizeMethod.from_string("area") is ResizeMethod.AREA
    assert [m.value for m in ResizeMethod] == list(range(7))
    x = RNG.normal(size=(5, 4))
    np.testing.assert_array_equal(resize(x, (3, 7), ResizeMethod.LANCZOS3),
                                  resize(x, (3, 7), "lanczos3"))
    assert ad.image is image


def test_errors():
    x = np.ones((4, 4))
    with pytest.raises(ValueError, match="Unknown resize method"):
        resize(x, (2, 2), "bogus")
    with pytest.raises(TypeError, match="ResizeMethod or a string"):
        resize(x, (2, 2), 3)
    with pytest.raises(ValueError, match="number of dimensions"):
        resize(x, (2,), "linear")
    with pytest.raises(TypeError, match="sequence of integers"):
        resize(x, (10.5, 17), "bicubic")
    with pytest.raises(ValueError, match="Nearest neighbor"):
        scale_and_translate(x, (2, 2), (0, 1), np.ones(2), np.zeros(2), "nearest")
    with pytest.raises(ValueError, match="one entry per spatial dim"):
        scale_and_translate(x, (2, 2), (0, 1), np.ones(3), np.zeros(3), "linear")
    with pytest.raises(ValueError, match="not a spatial dim"):
        scale_and_translate(x, (2, 2), (0,), np.ones(1), np.zeros(1), "linear")
    with pytest.raises(ValueError, match="out of range"):
        scale_and_translate(x, (2, 2), (0, 2), np.ones(2), np.zeros(2), "linear")


# ---------------------------------------------------------------- transformations

def _fd_directional(f, x, v, h=1e-6):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("antialias", [True, False])
def test_grad_wrt_image_against_finite_differences(method, antialias):
    x = RNG.normal(size=(5, 6, 2))
    target = RNG.normal(size=(3, 8, 2))
    f = lambda im: anp.sum((resize(im, (3, 8, 2), method, antialias=antialias) - target) ** 2)
    v = RNG.normal(size=x.shape)
    g = ad.grad(f)(x)
    np.testing.assert_allclose(np.sum(g * v), _fd_directional(f, x, v), rtol=1e-6)
    # resize is linear in the image: its transpose is the weight matrices transposed
    w = [ref_weights(5, 3, 3 / 5, 0.0, method, antialias),
         ref_weights(6, 8, 8 / 6, 0.0, method, antialias)]
    r = 2 * (ref_resize(x, (3, 8, 2), method, antialias) - target)
    back = np.einsum("ia,jb,abc->ijc", w[0], w[1], r)
    np.testing.assert_allclose(g, back, atol=1e-10)


def test_grad_under_jit_and_vmap():
    x = RNG.normal(size=(3, 5, 6))
    f = lambda im: anp.sum(anp.sin(resize(im, (9, 4), "lanczos3")))
    eager = np.stack([ad.grad(f)(xi) for xi in x])
    np.testing.assert_allclose(ad.jit(ad.vmap(ad.grad(f)))(x), eager, atol=1e-12)
    np.testing.assert_allclose(ad.vmap(ad.grad(f))(x), eager, atol=1e-12)
    for i in range(3):
        v = RNG.normal(size=(5, 6))
        np.testing.assert_allclose(np.sum(eager[i] * v), _fd_directional(f, x[i], v),
                                   rtol=1e-6)
    vals = ad.jit(ad.vmap(lambda im: resize(im, (9, 4), "cubic", antialias=False)))(x)
    np.testing.assert_allclose(vals, [ref_resize(xi, (9, 4), "cubic", False) for xi in x],
                               atol=1e-12)
    near = ad.jit(lambda im: resize(im, (3, 11, 2), "nearest"))(x)
    np.testing.assert_array_equal(near, ref_resize(x, (3, 11, 2), "nearest"))


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "area", "cubic-pytorch"])
@pytest.mark.parametrize("antialias", [True, False])
def test_grad_wrt_scale_and_translation(method, antialias):
    x = RNG.normal(size=(6, 7))
    w_out = RNG.normal(size=(4, 9))

    def f(s, t):
        y = scale_and_translate(x, (4, 9), (0, 1), s, t, method, antialias=antialias)
        return anp.sum(y * w_out)

    s, t = np.array([0.63, 1.37]), np.array([0.21, -0.43])
    gs, gt = ad.grad(f, argnums=(0, 1))(s, t)
    for i in range(2):
        e = np.eye(2)[i]
        np.testing.assert_allclose(gs[i], _fd_directional(lambda a: f(a, t), s, e),
                                   rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(gt[i], _fd_directional(lambda a: f(s, a), t, e),
                                   rtol=1e-5, atol=1e-8)
    js, jt = ad.jit(ad.grad(f, argnums=(0, 1)))(s, t)
    np.testing.assert_allclose(js, gs, rtol=1e-12)
    np.testing.assert_allclose(jt, gt, rtol=1e-12)


def test_vmap_over_scale_and_translation():
    x = RNG.normal(size=(6, 5, 2))
    ss = np.array([[0.7, 1.4], [1.9, 0.55], [1.0, 1.0]])
    ts = np.array([[0.35, -0.2], [-1.1, 0.4], [0.0, 0.0]])  # no centre on an edge
    fn = lambda s, t: scale_and_translate(x, (8, 4, 2), (0, 1), s, t, "cubic")
    got = ad.vmap(fn)(ss, ts)
    want = [ref_scale_translate(x, (8, 4, 2), (0, 1), s, t, "cubic") for s, t in zip(ss, ts)]
    np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose(ad.jit(ad.vmap(fn))(ss, ts), want, atol=1e-12)
