"""Complex numbers above the primitives (issue 16): autodiff.numpy and scipy functions
with complex semantics against numpy/scipy, their derivatives against finite
differences in both real directions of each complex input, JAX's gradient convention
(docs/complex.md) on them, the gradient checker itself, and the tape.

The primitives' own complex records (values eager/traced/jit, jvp/vjp, transposes,
vmap) are in tests/op_records/ and its three suites.
"""
import numpy as np
import pytest
import scipy.signal
import scipy.special

import autodiff as ad
import autodiff.numpy as anp
import autodiff.scipy.signal as asig
import autodiff.scipy.special as asp
from autodiff.errors import DTypeError, UnsupportedError


def _z(rng, *shape, scale=1.0):
    return scale * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))


# ---------------------------------------------------------------------------------------
# the gradient checker on complex inputs
# ---------------------------------------------------------------------------------------

@ad.custom_jvp
def _conj_wrong(z):
    return anp.conj(z)


@_conj_wrong.defjvp
def _conj_wrong_jvp(primals, tangents):
    # right along real tangents only: d conj(z)·t is conj(t), not t
    return _conj_wrong(primals[0]), tangents[0]


@ad.custom_vjp
def _square_conj_bwd(z):
    return z * z


# the cotangent conjugated: the rule of the pairing Re(Σ conj(u)·v), not ours Re(Σ u·v)
_square_conj_bwd.defvjp(lambda z: (z * z, z), lambda z, g: (anp.conj(2 * z * g),))


def test_check_grads_moves_complex_inputs_in_both_real_directions():
    z = np.array([0.3 + 1.1j, -0.7 + 0.2j])
    ad.check_grads(lambda z: anp.sin(z) * anp.conj(z), (z,), order=2)
    ad.check_grads(lambda z: anp.abs(z) ** 2, (z,), order=2)
    # a jvp that is right along real directions and wrong along imaginary ones
    with pytest.raises(AssertionError, match="moved along i·d"):
        ad.check_grads(_conj_wrong, (z,), order=1, modes=("fwd",))
    # a conjugated vjp fails the adjoint identity under Re(Σ u·v)
    ad.check_grads(_square_conj_bwd, (z,), order=1, modes=("fwd",))
    with pytest.raises(AssertionError, match="adjoint identity"):
        ad.check_grads(_square_conj_bwd, (z,), order=1, modes=("rev",))


# ---------------------------------------------------------------------------------------
# autodiff.numpy with complex semantics: values (eager, traced) and derivatives
# ---------------------------------------------------------------------------------------

R = np.random.default_rng(16)
_x3 = np.sort(R.uniform(0.0, 2.0, 4))
NUMPY_CASES = [
    # (id, f(module, *args), args, differentiable)
    ("var", lambda m, a: m.var(a, axis=0), [_z(R, 3, 2)], True),
    ("var-ddof", lambda m, a: m.var(a, ddof=1), [_z(R, 4)], True),
    ("std", lambda m, a: m.std(a, axis=1), [_z(R, 2, 3)], True),
    ("nanvar", lambda m, a: m.nanvar(a, axis=1), [_z(R, 2, 3)], True),
    ("nanstd", lambda m, a: m.nanstd(a), [_z(R, 5)], True),
    ("mean", lambda m, a: m.mean(a, 0), [_z(R, 3, 2)], True),
    ("average", lambda m, a, w: m.average(a, 0, weights=w), [_z(R, 3, 2), _z(R, 3)], True),
    ("prod", lambda m, a: m.prod(a, 1), [_z(R, 2, 3)], True),
    ("cumsum", lambda m, a: m.cumsum(a), [_z(R, 2, 3)], True),
    ("nansum", lambda m, a: m.nansum(a, 0), [_z(R, 3, 2)], True),
    ("nanprod", lambda m, a: m.nanprod(a), [_z(R, 3)], True),
    ("max", lambda m, a: m.max(a, 1), [_z(R, 2, 3)], True),
    ("nanmin", lambda m, a: m.nanmin(a), [_z(R, 4)], True),
    ("ptp", lambda m, a: m.ptp(a, 0), [_z(R, 3, 2)], True),
    ("argmax", lambda m, a: m.argmax(a, 1), [_z(R, 2, 3)], False),
    ("sort", lambda m, a: m.sort(a), [_z(R, 5)], True),
    ("sort_complex", lambda m, a: m.sort_complex(a), [_z(R, 5)], True),
    ("sort_complex-real", lambda m, a: m.sort_complex(a), [R.standard_normal(4)], True),
    ("vecdot", lambda m, a, b: m.vecdot(a, b), [_z(R, 2, 3), _z(R, 3)], True),
    ("vecmat", lambda m, a, b: m.vecmat(a, b), [_z(R, 3), _z(R, 2, 3, 2)], True),
    ("matvec", lambda m, a, b: m.matvec(a, b), [_z(R, 2, 3), _z(R, 3)], True),
    ("vdot", lambda m, a, b: m.vdot(a, b), [_z(R, 3), _z(R, 3)], True),
    ("cov", lambda m, a: m.cov(a), [_z(R, 2, 4)], True),
    ("cov-aweights", lambda m, a: m.cov(a, aweights=np.array([1.0, 2.0, 1.0, 3.0])),
     [_z(R, 2, 4)], True),
    ("cov-y", lambda m, a, b: m.cov(a, b), [_z(R, 4), R.standard_normal(4)], True),
    ("corrcoef", lambda m, a: m.corrcoef(a), [_z(R, 3, 4)], True),
    ("correlate", lambda m, a, v: m.correlate(a, v, "full"), [_z(R, 5), _z(R, 3)], True),
    ("correlate-swap", lambda m, a, v: m.correlate(a, v, "same"), [_z(R, 3), _z(R, 5)], True),
    ("convolve", lambda m, a, v: m.convolve(a, v), [_z(R, 4), _z(R, 3)], True),
    ("polyval", lambda m, p, x: m.polyval(p, x), [_z(R, 3), _z(R, 4)], True),
    ("polyfit", lambda m, x, y: m.polyfit(x, y, 2), [np.linspace(0, 1, 5), _z(R, 5)], True),
    ("trapezoid", lambda m, y, x: m.trapezoid(y, x), [_z(R, 4), _x3], True),
    ("interp", lambda m, x, fp: m.interp(x, _x3, fp), [R.uniform(0, 2, 3), _z(R, 4)], True),
    ("linspace", lambda m, a, b: m.linspace(a, b, 4), [_z(R), _z(R)], True),
    ("geomspace", lambda m, a, b: m.geomspace(a, b, 3), [_z(R) + 3, _z(R) + 3], True),
    ("logspace", lambda m, a: m.logspace(0, a, 3), [_z(R)], True),
    ("sinc", lambda m, a: m.sinc(a), [np.array([0.3 + 0.2j, 1e-3 - 2e-3j, -1.2 + 0.5j])],
     True),
    ("around", lambda m, a: m.around(a, 1), [_z(R, 3)], False),
    ("round", lambda m, a: m.round(a), [_z(R, 3, scale=3.0)], False),
    ("isclose", lambda m, a: m.isclose(a, a + 1e-9j), [_z(R, 3)], False),
    ("float_power", lambda m, a: m.float_power(a, 2.5), [_z(R, 3)], True),
    ("roots", lambda m, p: m.roots(p), [np.array([1.0, 0.5, 4.0, -1.0])], True),
    ("roots-complex", lambda m, p: m.roots(p), [_z(R, 4)], True),
    ("einsum", lambda m, a, b: m.einsum("ij,kj->ik", a, b), [_z(R, 2, 3), _z(R, 2, 3)], True),
]


def _compare(got, want, what, rtol=1e-10):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12, err_msg=what)


def _sorted_roots(r):
    # numpy's complex order, with real parts equal to rounding (a conjugate pair) tied
    r = np.asarray(r)
    return r[np.lexsort((r.imag, np.round(r.real, 9)))]


@pytest.mark.parametrize("name,f,args,diff", NUMPY_CASES, ids=[c[0] for c in NUMPY_CASES])
def test_numpy_functions_on_complex(name, f, args, diff):
    post = _sorted_roots if name.startswith("roots") else (lambda r: r)
    want = post(f(np, *args))
    _compare(post(f(anp, *args)), want, f"{name} eager")
    # traced abstractly (make_jaxpr, run by the interpreter); roots of real coefficients
    # have a value-dependent dtype, so only complex ones trace abstractly
    if name != "roots":
        _compare(post(ad.jit(lambda *a: f(anp, *a), backend="interpret")(*args)), want,
                 f"{name} traced")
    if diff:
        ad.check_grads(lambda *a: f(anp, *a), args, order=1)


def test_lexicographic_order_of_complex_numbers():
    # ties in the real part: the imaginary part decides, as numpy orders complex numbers
    z = np.array([[1 + 2j, 1 - 1j, -1 + 3j, 1 + 0.5j], [0.5j, -0.5j, 2 - 1j, 2 + 1j]])
    fns = [lambda m, a: m.max(a, 1), lambda m, a: m.min(a, 1), lambda m, a: m.argmax(a, 1),
           lambda m, a: m.argmin(a, 1), lambda m, a: m.sort(a, 1), lambda m, a: m.argsort(a, 1),
           lambda m, a: m.sort_complex(a), lambda m, a: m.maximum.accumulate(a, 1)
           if m is np else ad.lax.cummax(a, 1)]
    for k, f in enumerate(fns):
        want = f(np, z)
        _compare(ad.jit(lambda a: f(anp, a), backend="interpret")(z), want, f"fn {k}")


def test_complex64_results_have_numpy_dtypes():
    z = (np.arange(4) + 1j * np.arange(4)[::-1]).astype(np.complex64)
    for f in (np.var, np.std, np.mean, np.nanvar, np.max, np.sort_complex, np.cumprod):
        got = ad.jit(getattr(anp, f.__name__), backend="interpret")(z)
        assert got.dtype == f(z).dtype, f.__name__          # var/std real: float32
        np.testing.assert_allclose(got, f(z), rtol=1e-6)


def test_nan_reductions_skip_complex_nans():
    # a nan in either part makes a complex number nan (numpy's isnan)
    z = np.array([[1 + 1j, 2.0, complex(np.nan, 1.0), 3j, -0.5 + 2j],
                  [0.3 - 1j, complex(1.0, np.nan), 1.5 + 0.5j, -2j, 0.7 + 0.1j]])
    for f in (np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin, np.nanargmax,
              np.nancumsum, np.nanvar, np.nanstd, np.nanmedian):
        want = f(z, axis=1)
        _compare(ad.jit(lambda a: getattr(anp, f.__name__)(a, axis=1), backend="interpret")(z),
                 want, f.__name__)
    zf = z[:, [0, 1, 3, 4]][:, [0, 2, 3]]           # distinct real parts: differentiable
    zf = np.concatenate([zf, np.array([[np.nan + 0j], [np.nan * 1j]])], axis=1)
    for name in ("nansum", "nanmean", "nanvar", "nanmedian", "nanmax"):
        ad.check_grads(lambda a: getattr(anp, name)(a, axis=1), (zf,), order=1)
    with pytest.raises(DTypeError, match="real numbers"):       # numpy's rule, traced
        ad.jit(lambda a: anp.percentile(a, 50), backend="interpret")(z)


def test_sort_complex_dtypes_follow_numpy():
    for dt in (np.float32, np.float64, np.int8, np.int64, np.complex64):
        a = np.array([3, 1, 2], dt)
        got = ad.jit(anp.sort_complex, backend="interpret")(a)
        assert got.dtype == np.sort_complex(a).dtype, dt


def test_roots_dtype_and_implicit_derivative():
    p = np.array([1.0, 0.5, 4.0])                    # roots -1/4 ± i√63/4
    r = anp.roots(p)
    assert r.dtype == np.complex128
    # under jit the dtype cannot depend on the values: real coefficients give real roots
    with pytest.raises(UnsupportedError, match=r"p\.astype\(complex\)"):
        ad.jit(anp.roots, backend="interpret")(p)
    _compare(_sorted_roots(ad.jit(anp.roots, backend="interpret")(p.astype(complex))),
             _sorted_roots(np.roots(p)), "complex coefficients under jit")
    # Σ|r|² = 2·p2/p0 for a conjugate pair: grad (2·(-p2/p0²), 0, 2/p0)
    g = ad.grad(lambda q: anp.sum(anp.abs(anp.roots(q)) ** 2))(p)
    np.testing.assert_allclose(g, [-8.0, 0.0, 2.0], atol=1e-12)


# JAX's gradients of real-valued functions of complex inputs: jax.grad with x64 enabled,
# computed once with jax 0.4 at these inputs and written down (jax is not a test dependency)
_ZJ = np.array([0.3 + 1.1j, -0.7 + 0.2j, 1.5 - 0.4j, -0.2 - 0.9j])
_WJ = np.array([1.0 - 0.5j, 0.4 + 0.3j, -1.2 + 0.8j, 0.6 + 0.1j])
JAX_GRADS = {
    "var": (lambda z, w: anp.var(z),
            [0.0375 - 0.55j, -0.4625 - 0.1j, 0.6375 + 0.2j, -0.2125 + 0.45j]),
    "std": (lambda z, w: anp.std(z * w),
            [0.17866443334297655 - 0.2090425358422146j, -0.04541268882089491 + 0.04510375896497046j,
             0.5008782730721832 + 0.09267895677733654j, 0.005663714025281665 + 0.13366365099664756j]),
    "vecdot": (lambda z, w: anp.real(anp.vecdot(z, w)),
               [1 + 0.5j, 0.4 - 0.3j, -1.2 - 0.8j, 0.6 - 0.1j]),
    "cov": (lambda z, w: anp.sum(anp.abs(anp.cov(anp.stack([z, w])))),
            [-0.40887157870281476 - 1.2590531434063712j, -0.7611014125939358 - 0.07119778480314462j,
             1.709297598078635 + 0.8201374067772086j, -0.5393246067818842 + 0.5101135214323071j]),
    "correlate": (lambda z, w: anp.sum(anp.abs(anp.correlate(z, w[:3], "full")) ** 2),
                  [-2.354 - 10.212j, -8.236 - 1.574j, 6.726 + 7.458j, 1.702 + 3.832j]),
    "sort": (lambda z, w: anp.real(anp.sum(anp.sort(z) * w)),
             [-1.2 + 0.8j, 1 - 0.5j, 0.6 + 0.1j, 0.4 + 0.3j]),
    "max": (lambda z, w: anp.abs(anp.max(z * w)), [0.2941742027072761 - 1.0786387432600122j, 0, 0, 0]),
    "cumprod": (lambda z, w: anp.sum(anp.imag(anp.cumprod(z))),
                [1.537 - 0.046j, 1.523 - 2.389j, -0.181 + 0.983j, -0.893 + 0.929j]),
    "polyval": (lambda z, w: anp.abs(anp.polyval(z, w[0])),
                [0.8949679197489093 - 1.0733859616281132j, 1.1453287204503728 - 0.5007216014029269j,
                 1.116551616921469 + 0.05755420705780767j, 0.8702196107140522 + 0.49266401241483376j]),
    "mean_conj": (lambda z, w: anp.real(anp.mean(z * anp.conj(w))),
                  [0.25 + 0.125j, 0.1 - 0.075j, -0.3 - 0.2j, 0.15 - 0.025j]),
}


@pytest.mark.parametrize("name", sorted(JAX_GRADS))
def test_grad_matches_jax_written_outputs(name):
    f, want = JAX_GRADS[name]
    np.testing.assert_allclose(ad.grad(f)(_ZJ, _WJ), want, rtol=1e-10, atol=1e-12)


def test_complex_numpy_functions_compiled():
    # one compiled program of several complex functions against the interpreter
    def program(a, b):
        return (anp.var(a), anp.vecdot(a, b), anp.cov(anp.stack([a, b])),
                anp.sort_complex(a), anp.correlate(a, b[:2], "full"), asp.wofz(a),
                anp.max(a))
    a, b = _z(R, 4), _z(R, 4)
    got = ad.jit(program, backend="cpu")(a, b)
    want = ad.jit(program, backend="interpret")(a, b)
    for k, (g, w) in enumerate(zip(got, want)):
        _compare(g, w, f"result {k}", rtol=1e-12)


# ---------------------------------------------------------------------------------------
# scipy.special of complex arguments
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["wofz", "erf", "erfc", "erfcx", "ndtr"])
def test_special_functions_of_complex_arguments_match_scipy(name):
    rng = np.random.default_rng(3)
    # from near zero (erf's series) to |z| ~ 10, every quadrant
    z = np.concatenate([_z(rng, 40, scale=s) for s in (0.01, 0.3, 1.0, 3.0)] +
                       [np.array([0j, 2.0 + 0j, -3j, 5 + 5j])])
    got, want = getattr(asp, name)(z), getattr(scipy.special, name)(z)
    assert got.dtype == want.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=5e-14, atol=0)
    traced = ad.jit(getattr(asp, name), backend="interpret")(z[:8])
    np.testing.assert_allclose(traced, want[:8], rtol=5e-14, atol=0)
    ad.check_grads(getattr(asp, name), (z[40:44],), order=2)


def test_wofz_dtypes_derivative_and_real_only_functions():
    assert asp.wofz(np.float32(1.0)).dtype == scipy.special.wofz(np.float32(1.0)).dtype
    assert asp.wofz(np.complex64(1.0)).dtype == np.complex64
    # w'(z) = -2z w(z) + 2i/√π, holomorphic: jacfwd(holomorphic=True) at a few points
    for z in (0.0, 0.5 + 1j, -2.0 - 0.3j):
        d = ad.jacfwd(asp.wofz, holomorphic=True)(np.complex128(z))
        want = -2 * z * scipy.special.wofz(z) + 2j / np.sqrt(np.pi)
        np.testing.assert_allclose(d, want, rtol=1e-13)
    # the real wofz(x): a complex output of a real input (holomorphic needs complex inputs)
    x = np.array([0.3, -1.2])
    t = ad.jvp(asp.wofz, (x,), (np.ones(2),))[1]
    np.testing.assert_allclose(t, -2 * x * scipy.special.wofz(x) + 2j / np.sqrt(np.pi),
                               rtol=1e-13)
    for f in (asp.gamma, asp.digamma, asp.gammaln, asp.dawsn):
        with pytest.raises(DTypeError, match="real input only"):
            f(np.array([1 + 1j]))


# ---------------------------------------------------------------------------------------
# scipy.signal on complex arrays
# ---------------------------------------------------------------------------------------

SIGNAL_CASES = [
    ("convolve", lambda m, a, b: m.convolve(a, b), [_z(R, 5), _z(R, 3)]),
    ("convolve-same", lambda m, a, b: m.convolve(a, b, mode="same"), [_z(R, 5), R.standard_normal(3)]),
    ("correlate", lambda m, a, b: m.correlate(a, b), [_z(R, 5), _z(R, 3)]),
    ("correlate-valid", lambda m, a, b: m.correlate(a, b, "valid"), [_z(R, 5), _z(R, 3)]),
    ("correlate2d", lambda m, a, b: m.correlate2d(a, b, "same"), [_z(R, 3, 4), _z(R, 2, 2)]),
    ("convolve2d", lambda m, a, b: m.convolve2d(a, b, "valid"), [_z(R, 3, 4), _z(R, 2, 2)]),
]


@pytest.mark.parametrize("name,f,args", SIGNAL_CASES, ids=[c[0] for c in SIGNAL_CASES])
def test_signal_on_complex(name, f, args):
    want = f(scipy.signal, *args)
    _compare(f(asig, *args), want, name)
    _compare(ad.jit(lambda *a: f(asig, *a), backend="interpret")(*args), want, name)
    ad.check_grads(lambda *a: f(asig, *a), args, order=1)


# ---------------------------------------------------------------------------------------
# the tape: complex Variables
# ---------------------------------------------------------------------------------------

def test_tape_variables_with_complex_data():
    z0 = np.array([0.3 + 1.1j, -0.7 + 0.2j, 1.5 - 0.4j, -0.2 - 0.9j])
    z = ad.Variable(z0)
    assert z.requires_grad
    anp.sum(anp.abs(z) ** 2).backward()
    # jax.grad(lambda z: jnp.sum(jnp.abs(z) ** 2)) at z0 (x64), written down: 2·conj(z0)
    np.testing.assert_allclose(z.grad, [0.6 - 2.2j, -1.4 - 0.4j, 3 + 0.8j, -0.4 + 1.8j],
                               rtol=1e-14)
    # a non-holomorphic mix, real inputs mixed in: the tape agrees with ad.grad
    def f(z, x):
        return anp.sum(anp.real(anp.sin(z) * anp.conj(z)) * x) + anp.abs(anp.vdot(z, z * x))
    x0 = np.array([0.5, -1.0, 2.0, 0.1])
    zv, xv = ad.Variable(z0), ad.Variable(x0)
    f(zv, xv).backward()
    gz, gx = ad.grad(f, argnums=(0, 1))(z0, x0)
    np.testing.assert_allclose(zv.grad, gz, rtol=1e-12)
    np.testing.assert_allclose(xv.grad, gx, rtol=1e-12)
    assert xv.grad.dtype == np.float64 and zv.grad.dtype == np.complex128
    # a complex output has no implicit seed (as grad); grad= gives the vjp
    y = anp.sum(zv * zv)
    with pytest.raises(DTypeError, match="output is complex"):
        y.backward()
    zv.grad = None
    y.backward(np.complex128(1 - 1j))
    np.testing.assert_allclose(zv.grad, (1 - 1j) * 2 * z0, rtol=1e-14)
