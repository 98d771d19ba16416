"""Complex numbers in compiled CPU kernels (backends/numba_cpu.py, backends/numba_complex.py).

The op records' complex128 samples are compiled by tests/test_jit_records.py (every record
in float64 programs); here: the complex64 ones, numpy's special cases (division by zero,
the lexicographic order with NaN, sign at infinity, integer powers), mixed real/complex
promotion, complex GEMM, literals read at run time by shape-generic kernels, control flow,
prange loops, gradients and vmap of complex programs under jit, and that a real program's
kernel does not touch the complex helpers. Every compiled call goes through
``jit_util.assert_compiled``: the kernel ran, not the interpreter fallback.
"""
import zlib

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.core import primitives
from jit_util import assert_compiled, prims_in
from op_records import RECORDS, Z, record_params

C64, C128 = np.complex64, np.complex128
TOL = {np.dtype(C128): 1e-12, np.dtype(C64): 2e-5}


def cz(*shape, dtype=C128, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(dtype)


def close(got, want, dt=C128, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        t = TOL.get(np.dtype(dt), 1e-12)
        scale = float(np.max(np.abs(want[np.isfinite(want)]), initial=1.0))
        np.testing.assert_allclose(got, want, rtol=t, atol=t * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def same_bits(got, want, what=""):
    """Equal values, NaNs in the same places (part by part), equal dtypes."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(part(got), part(want), err_msg=what)


# ---------------------------------------------------------------------------------
# the op records with complex operands, in complex64 (complex128: test_jit_records)
# ---------------------------------------------------------------------------------

def _complex_records():
    """(name, index, record): the first record of each primitive with a complex operand."""
    out, seen = [], set()
    for n, i in record_params():
        r = RECORDS[n][i]
        if n not in seen and any(isinstance(a, Z) for a in r.args):
            seen.add(n)
            out.append((n, i, r))
    return out


_RECS = _complex_records()
_CHUNK = 20


@pytest.mark.slow        # five compiles of ~20 records each (~15 s of CPU)
@pytest.mark.parametrize("k", range(0, len(_RECS), _CHUNK))
def test_complex64_records_compiled_match_interpreter(k):
    recs = _RECS[k:k + _CHUNK]
    rng = np.random.default_rng(zlib.crc32(f"c64-{k}".encode()))
    ops, spans, binds = [], [], []
    for name, i, r in recs:
        xs = r.make(rng, np.float32)            # Z operands: complex64 under float32
        spans.append((len(ops), len(ops) + len(xs)))
        ops.extend(xs)
        binds.append((primitives[name], r.params(np.float32)))
    assert any(np.asarray(x).dtype == C64 for x in ops)

    def program(*args):
        outs = []
        for (p, params), (a, b) in zip(binds, spans):
            out = p.bind(*args[a:b], **params)
            outs.extend(out if p.multiple_results else [out])
        return tuple(outs)

    with np.errstate(all="ignore"):
        got = assert_compiled(ad.jit(program, backend="cpu"), *ops)
        want = ad.jit(program, backend="interpret")(*ops)
    assert len(got) == len(want)
    names = [n for n, _, r in recs for _ in range(
        len(primitives[n].abstract_eval(*[ad.core.get_aval(x) for x in r.make(rng, np.float32)],
                                        **r.params(np.float32)))
        if primitives[n].multiple_results else 1)]
    for name, g, w in zip(names, got, want):
        t = 1e-5 if np.asarray(w).dtype in (np.float32, C64) else 1e-12
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, name
        if w.dtype.kind in "fc":
            scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=1.0))
            np.testing.assert_allclose(g, w, rtol=t, atol=t * scale, err_msg=name)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)


# ---------------------------------------------------------------------------------
# numpy's special cases, compiled: one program
# ---------------------------------------------------------------------------------

_SPECIAL = np.array([0j, 1 + 1j, -2 + 0j, 3j, complex(np.inf, 0), complex(0, -np.inf),
                     complex(np.inf, np.inf), complex(np.nan, 1), complex(1, np.nan),
                     2.5 - 3j, -0.0 + 0j, 1 + 2j])
_OTHER = np.array([0j, 0j, 1 + 1j, -1j, 2 + 1j, complex(np.nan, 0), 1 + 2j, 1 + 2j, 1 - 1j,
                   2.5 - 4j, 0j, 1 + 3j])


def _special(a, b):
    return (a / b, anp.maximum(a, b), anp.minimum(a, b), a < b, a <= b, a > b, a >= b,
            a == b, anp.sign(a), a ** 7, a ** -3, a ** 2, anp.reciprocal(b),
            anp.max(a), anp.min(a), anp.argmax(a), anp.argmin(b), anp.sort(a),
            anp.isfinite(a), anp.abs(a), anp.exp(a[1:4]), anp.sqrt(a[1:4]))


_special_jit = ad.jit(_special)


def test_special_values_match_numpy():
    with np.errstate(all="ignore"):
        got = assert_compiled(_special_jit, _SPECIAL, _OTHER)
        want = ad.jit(_special, backend="interpret")(_SPECIAL, _OTHER)
        ref = (_SPECIAL / _OTHER, np.maximum(_SPECIAL, _OTHER), np.minimum(_SPECIAL, _OTHER),
               _SPECIAL < _OTHER, _SPECIAL <= _OTHER, _SPECIAL > _OTHER, _SPECIAL >= _OTHER,
               _SPECIAL == _OTHER, np.sign(_SPECIAL), _SPECIAL ** 7, _SPECIAL ** -3,
               _SPECIAL ** 2, np.reciprocal(_OTHER), np.max(_SPECIAL), np.min(_SPECIAL),
               np.argmax(_SPECIAL), np.argmin(_OTHER), np.sort(_SPECIAL),
               np.isfinite(_SPECIAL), np.abs(_SPECIAL), np.exp(_SPECIAL[1:4]),
               np.sqrt(_SPECIAL[1:4]))
    # anp.reciprocal is numpy's (Smith's division: nan+nanj at 0, where 1/0j is inf+nanj)
    names = ["div", "maximum", "minimum", "lt", "le", "gt", "ge", "eq", "sign", "pow7",
             "pow-3", "pow2", "reciprocal", "max", "min", "argmax", "argmin", "sort",
             "isfinite", "abs", "exp", "sqrt"]
    for name, g, w, r in zip(names, got, want, ref):
        if name in ("abs", "exp", "sqrt"):      # libm through Numba: to rounding
            close(g, w, what=name)
            close(g, r, what=name)
            continue
        if name in ("pow7", "pow-3"):
            # finite values: numpy's binary exponentiation, to rounding
            fin = np.isfinite(r)
            np.testing.assert_allclose(np.asarray(g)[fin], r[fin], rtol=1e-14, err_msg=name)
            close(g, w, what=name)
            continue
        same_bits(g, w, what=name)
        same_bits(g, r, what=name)


_powers = ad.jit(lambda z, a, b: (z ** 7, z ** 4, z ** -2, a ** b))


def test_powers_follow_numpy():
    # (1+1j)**7 = 8 - 8j exactly by repeated squaring (Numba's z**n: exp(n log z), 5e-15
    # off); a complex exponent: numpy's 0 ** b (0 for Re b > 0, else nan) and its integral
    # exponents (Numba: nan+nanj for 0 ** (1+1j))
    z = np.array([1 + 1j, 2 - 1j])
    a = np.array([0j, 0j, 0j, 0j, 1 + 1j, 2 - 1j, 1 + 1j])
    b = np.array([2 + 0j, -1 + 0j, 1 + 1j, 0j, 3 + 0j, -2 + 0j, 0.5 - 0.25j])
    got = assert_compiled(_powers, z, a, b)
    assert complex(got[0][0]) == 8 - 8j
    for g, n in zip(got, (7, 4, -2)):
        np.testing.assert_allclose(g, z ** n, rtol=1e-15)
    with np.errstate(all="ignore"):
        want = a ** b
    same_bits(got[3][:6], want[:6])
    np.testing.assert_allclose(got[3][6], want[6], rtol=1e-15)


# ---------------------------------------------------------------------------------
# promotion, literals, shape-generic kernels
# ---------------------------------------------------------------------------------

def _mixed(x32, x64, z64, n):
    return x32 * 1j + 2, x32 + z64, x64 + z64, n * z64, z64 * (0.5 - 2j)


_mixed_jit = ad.jit(_mixed)


def test_mixed_real_complex_promotion():
    x32 = np.array([0.5, -1.5, 2.0], np.float32)
    x64 = np.array([1.0, 2.0, -3.0])
    z64 = cz(3, dtype=C64)
    n = np.array([1, -2, 3])
    got = assert_compiled(_mixed_jit, x32, x64, z64, n)
    ref = (x32 * 1j + 2, x32 + z64, x64 + z64, n * z64, z64 * (0.5 - 2j))
    assert [np.asarray(g).dtype for g in got] == [C64, C64, C128, C128, C64]
    for g, r in zip(got, ref):
        close(g, r, dt=np.asarray(r).dtype)


_generic = ad.jit(lambda z: anp.sum(z * (2 + 3j) - 1j) / z.shape[0])


def test_complex_literals_in_a_shape_generic_kernel():
    for n in (3, 5, 8):
        z = cz(n, seed=n)
        close(assert_compiled(_generic, z), np.sum(z * (2 + 3j) - 1j) / n)
    src = _generic.lower(cz(4)).source
    assert "complex(slot_f64(_sz," in src        # literals are read at run time


def _parts(z, x):
    return (anp.sin(z).astype(np.float64), z.astype(np.float32), (z * 3).astype(np.int64),
            z.astype(bool), x.astype(np.complex64), anp.real(z) + anp.imag(z),
            anp.conj(z) * z, z.astype(np.complex64), ad.primitives.complex_(x, x[::-1]))


def test_conversions_between_real_and_complex():
    z = np.array([1.5 + 2j, -0.7 - 1j, 0j, 3j])
    x = np.array([0.25, -1.0, 2.0, 0.0])
    found = prims_in(ad.make_jaxpr(_parts)(z, x).jaxpr, set())
    assert {"real", "imag", "conj", "complex", "convert_element_type"} <= found
    f = ad.jit(_parts)
    with np.errstate(all="ignore"), pytest.warns(np.exceptions.ComplexWarning):
        ref = (np.sin(z).astype(np.float64), z.astype(np.float32), (z * 3).astype(np.int64),
               z.astype(bool), x.astype(np.complex64), z.real + z.imag, np.conj(z) * z,
               z.astype(np.complex64), x + 1j * x[::-1])
    got = assert_compiled(f, z, x)
    for g, r in zip(got, ref):
        close(g, r, dt=np.asarray(r).dtype)


# ---------------------------------------------------------------------------------
# matrix products: zgemm / cgemm of numpy's OpenBLAS
# ---------------------------------------------------------------------------------

_products = ad.jit(lambda a, b, c, v: (a @ b, a.T @ c, anp.einsum("bij,bjk->bik", c[None] * 1j,
                                                                     b[None]), a @ v))


@pytest.mark.parametrize("dt", [C128, C64])
def test_complex_matrix_products(dt):
    a, b, c, v = cz(3, 4, dtype=dt, seed=1), cz(4, 2, dtype=dt, seed=2), \
        cz(3, 4, dtype=dt, seed=3), cz(4, dtype=dt, seed=4)
    got = assert_compiled(_products, a, b, c, v)
    ref = (a @ b, a.T @ c, (c[None] * 1j) @ b[None], a @ v)
    for g, r in zip(got, ref):
        close(g, r, dt=dt)
    assert "cmatmul_into" in _products.lower(a, b, c, v).source


# ---------------------------------------------------------------------------------
# control flow, loops over many elements, derivatives, vmap
# ---------------------------------------------------------------------------------

def _scan(z):
    def body(c, x):
        return c * x + 1j, c / x
    return ad.lax.scan(body, 1 + 0j, z)


def test_scan_with_a_complex_carry():
    z = cz(5, seed=5)
    got = assert_compiled(ad.jit(_scan), z)
    c, ys = 1 + 0j, []
    for x in z:
        ys.append(c / x)
        c = c * x + 1j
    close(got[0], np.complex128(c))
    close(got[1], np.array(ys))


def test_prange_loop_over_complex_values():
    from autodiff.backends import compile_cache, numba_cpu
    from autodiff.transforms.passes import run_pipeline
    z = cz(64, seed=6)
    closed = ad.make_jaxpr(lambda z: anp.exp(z) * anp.sin(z) / (z + 1j))(z)
    prog = numba_cpu.lower(run_pipeline(closed), parallel_threshold=1)
    assert "prange(" in prog.source
    k = compile_cache.get_kernel(prog.source, prog.entry, prog.params, prog.pieces)
    args = [z] + ([prog.sizes] if prog.params[-1][0] == "sizes" else [])
    close(k.dispatcher(*args), np.exp(z) * np.sin(z) / (z + 1j))


_grad_abs2 = ad.jit(ad.grad(lambda z: anp.sum(anp.abs(z) ** 2)))
_grad_mixed = ad.jit(ad.grad(lambda z: anp.sum(anp.real(anp.exp(z) / (z + 2j)) * anp.abs(z))))


def test_grad_of_complex_programs_compiled():
    z = cz(4, seed=7)
    # JAX's convention: grad of a real function of z = x + iy is df/dx - i df/dy
    close(assert_compiled(_grad_abs2, z), 2 * np.conj(z))
    f = lambda x, y: np.sum(np.real(np.exp(x + 1j * y) / (x + 1j * y + 2j))  # noqa: E731
                            * np.abs(x + 1j * y))
    h = 1e-6
    fd = np.array([(f(z.real + h * e, z.imag) - f(z.real - h * e, z.imag)) / (2 * h)
                   - 1j * (f(z.real, z.imag + h * e) - f(z.real, z.imag - h * e)) / (2 * h)
                   for e in np.eye(4)])
    np.testing.assert_allclose(assert_compiled(_grad_mixed, z), fd, rtol=1e-7, atol=1e-8)


_vmapped = ad.jit(ad.vmap(lambda z, w: anp.sum(anp.exp(z) * w) / (1 + anp.abs(w[0]))))


def test_vmap_of_a_complex_program_compiled():
    Zs, W = cz(3, 4, seed=8), cz(3, 4, seed=9)
    want = np.array([np.sum(np.exp(z) * w) / (1 + abs(w[0])) for z, w in zip(Zs, W)])
    close(assert_compiled(_vmapped, Zs, W), want)


# ---------------------------------------------------------------------------------
# the real path is untouched; the upstream behaviour numba_complex works around
# ---------------------------------------------------------------------------------

def test_real_programs_do_not_import_the_complex_helpers():
    from autodiff.backends import numba_cpu
    from autodiff.transforms.passes import run_pipeline
    x = np.linspace(-1, 1, 7)
    for f in (lambda x: anp.sum(anp.tanh(x) / (x + 2) + anp.maximum(x, 0.1) ** 5),
              ad.grad(lambda x: anp.sum(anp.sort(x) * anp.exp(-x ** 2)))):
        src = numba_cpu.lower(run_pipeline(ad.make_jaxpr(f)(x))).source
        assert "numba_complex" not in src and "complex" not in src.split("def kernel")[1]
    src = numba_cpu.lower(run_pipeline(ad.make_jaxpr(lambda z: z / (z + 1))(cz(3)))).source
    assert "from autodiff.backends.numba_complex import cdiv" in src


def test_upstream_numba_complex_division_by_zero_raises():
    # Numba's complex division raises ZeroDivisionError even with error_model='numpy'
    # (numba/cpython/numbers.py, complex_div); numpy returns inf/nan. numba_complex.cdiv is
    # numpy's division, which the kernels use. If this starts failing, Numba changed.
    from numba import njit
    from autodiff.backends.numba_complex import cdiv

    @njit(error_model="numpy")
    def div(a, b):
        return a / b
    with pytest.raises(ZeroDivisionError):
        div(1 + 1j, 0j)
    with np.errstate(all="ignore"):
        same_bits(np.complex128(cdiv(1 + 1j, 0j)), np.complex128(1 + 1j) / np.complex128(0j))
        same_bits(np.complex128(cdiv(0j, 0j)), np.complex128(0j) / np.complex128(0j))


# ---------------------------------------------------------------------------------
# the CUDA backend, in numba-cuda's simulator (a subprocess: the simulator must be chosen
# before numba.cuda is imported; see tests/test_cuda_backend.py)
# ---------------------------------------------------------------------------------

_CUDA_CODE = r'''
import numpy as np, warnings, autodiff as ad, autodiff.numpy as anp
from autodiff import primitives as P
warnings.simplefilter("ignore")
ad.config.update("jit_background_compile", False)
rng = np.random.default_rng(0)
def cz(*s, dt=np.complex128):
    return (rng.uniform(-2, 2, s) + 1j * rng.uniform(-2, 2, s)).astype(dt)
z, w, x = cz(8), cz(8), np.linspace(0.0, 1.0, 8)
z[0], w[0], w[1] = 0j, 0j, complex(np.nan, 1.0)        # division by zero, a NaN to order
cases = {
    "arith": (lambda z, w: (anp.exp(z) * z / (w + 1j) - anp.sqrt(z), z / w, z ** 5, z ** -2,
                            z ** w), (z, w)),
    "transcendental": (lambda z: (anp.sin(z), anp.arctanh(z / 3), anp.log1p(z / 4),
                                  anp.expm1(z), anp.tanh(z), anp.sign(z), anp.abs(z)), (z,)),
    "order": (lambda z, w: (z < w, z >= w, anp.maximum(z, w), anp.minimum(z, w), z == w,
                            anp.where(z.real > 0, z, w)), (z, w)),
    "parts": (lambda z, x: (anp.real(z) + anp.imag(z), anp.conj(z), x.astype(np.complex64) * 1j,
                            z.astype(np.float64)), (z, x)),
    "reductions": (lambda a, b: (anp.sum(a * 2j), anp.sum(anp.exp(b), axis=1),
                                 anp.max(b, axis=0), anp.cumsum(a[:8]) * 0.5),
                   (cz(700), cz(2, 300))),
    "complex64": (lambda a: (anp.sum(a * a, axis=1), anp.exp(a) / (a + 1)),
                  (cz(3, 40, dt=np.complex64),)),
    "running": (lambda t: (P.cummax_p.bind(t, axis=1, reverse=False),
                           P.cummin_p.bind(t, axis=0, reverse=True),
                           P.argmax_p.bind(t, axis=1, index_dtype=np.dtype(np.int64)),
                           P.argmin_p.bind(t, axis=0, index_dtype=np.dtype(np.int32))),
                (np.array([[1 + 2j, 1 - 1j, -1 + 3j, 1 + 0.5j],
                           [0.5j, complex(np.nan, 1), 2 - 1j, 2 + 1j]]),)),
    "dot": (lambda a: a @ a.T, (cz(3, 3),)),
}
# the GPU's device-function bodies (plain Python here) against numpy, finite values
from autodiff.backends import cuda_math as cm
pts = [800 + 1j, -30 + 0.5j, 1e-10 + 1e-10j, complex(-2, -0.0), 0.5 - 0.25j, 3 + 0j, -2 + 1j,
       1 + 1e-9j]
for fn, ref in [(cm._ctanh, np.tanh), (cm._cexp, np.exp), (cm._csinh, np.sinh),
                (cm._ccosh, np.cosh), (cm._cacosh, np.arccosh), (cm._cexpm1, np.expm1),
                (cm._clog1p, np.log1p), (cm._cexp2, np.exp2), (cm._clog, np.log)]:
    sel = [p for p in pts if abs(p.real) < 700 or fn is cm._ctanh]
    got = np.array([fn(p) for p in sel])
    want = ref(np.array(sel))
    ok = np.allclose(got, want, rtol=1e-14, atol=0) and np.array_equal(
        np.signbit(got.imag), np.signbit(want.imag))
    print("CASE", "device-" + fn.__name__, "compiled", ok)
for name, (f, args) in cases.items():
    g = ad.jit(f, backend="cuda")
    got = g(*args)
    want = ad.jit(f, backend="interpret")(*args)
    e = g._entry_for(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    ok = True
    for a, b in zip(got, want):
        a, b = np.asarray(a), np.asarray(b)
        tol = 2e-5 if b.dtype in (np.complex64, np.float32) else 1e-12
        ok = ok and a.dtype == b.dtype and a.shape == b.shape and np.allclose(
            a, b, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(b[np.isfinite(b)]),
                                                              initial=1.0))), equal_nan=True)
    print("CASE", name, e.state, ok, str(getattr(e, "reason", "")).splitlines()[0][:80])
'''


def test_complex_programs_on_the_cuda_simulator():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    r = subprocess.run([sys.executable, "-c", _CUDA_CODE], capture_output=True, text=True,
                       env=env, cwd=root, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = {ln.split()[1]: ln.split()[2:] for ln in r.stdout.splitlines()
            if ln.startswith("CASE")}
    assert len(rows) == 17, r.stdout
    for name, (state, ok, *reason) in rows.items():
        assert ok == "True", (name, r.stdout)
        # every case compiles, the complex matrix product too (the tiled kernel here)
        assert state == "compiled", (name, r.stdout)


# finite numbers where Numba's complex functions are not numpy's (numba_complex's versions
# are): large |Re z| for tanh, tiny z for expm1, the -0 side of acosh's branch cut, and the
# overflow of exp/sinh/cosh/sin/cos of a number with a zero part
_EDGES = np.array([800 + 1j, -800 - 2j, 30 + 0.5j, 1e-10 + 1e-10j, -1e-9 + 0j,
                   complex(-2, -0.0), -30 + 0j, 800 + 0j, complex(-800, -0.0), 800j, -800j,
                   0.5 - 0.25j, 1 + 1e-9j, complex(-1e-7, 1)])
_edge_fns = ad.jit(lambda z: (anp.tanh(z), anp.expm1(z), anp.arccosh(z), anp.exp(z),
                              anp.sinh(z), anp.cosh(z), anp.sin(z), anp.cos(z),
                              anp.log(z[12:])))


def test_complex_functions_match_numpy_where_numba_differs():
    with np.errstate(all="ignore"):
        got = assert_compiled(_edge_fns, _EDGES)
        want = [f(_EDGES) for f in (np.tanh, np.expm1, np.arccosh, np.exp, np.sinh, np.cosh,
                                    np.sin, np.cos)] + [np.log(_EDGES[12:])]
    for name, g, w in zip(["tanh", "expm1", "arccosh", "exp", "sinh", "cosh", "sin", "cos",
                           "log near |z| = 1"], got, want):
        g = np.asarray(g)
        for part in (np.real, np.imag):
            gp, wp = part(g), part(w)
            assert np.array_equal(np.isnan(gp), np.isnan(wp)), (name, g, w)
            assert np.array_equal(np.signbit(gp[gp == 0]), np.signbit(wp[wp == 0])), (name, g, w)
            fin = np.isfinite(wp)
            np.testing.assert_allclose(gp[fin], wp[fin], rtol=1e-14, atol=0, err_msg=name)
            np.testing.assert_array_equal(gp[~fin], wp[~fin], err_msg=name)


def test_upstream_numba_complex_functions_differ_from_numpy():
    # Numba's cmath-based complex functions (numba/cpython/cmathimpl.py) that numba_complex
    # replaces with numpy's algorithms: if these start agreeing with numpy, Numba changed
    from numba import njit

    @njit(error_model="numpy")
    def fns(z, w, v):
        return np.tanh(z), np.expm1(w), np.arccosh(v), np.exp(z.real + 0j)
    with np.errstate(all="ignore"):
        t, e, a, x = fns(800 + 1j, 1e-10 + 1e-10j, complex(-2, -0.0))
        assert np.isnan(t.real) and np.tanh(800 + 1j) == 1 + 0j
        assert abs(e.real - 1e-10) > 1e-18 and abs(np.expm1(1e-10 + 1e-10j).real - 1e-10) < 1e-24
        assert a.real < 0 < np.arccosh(np.complex128(complex(-2, -0.0))).real
        assert np.isnan(x.imag) and np.exp(np.complex128(800 + 0j)).imag == 0

    @njit(error_model="numpy")
    def sign_pow(z, a, b, w):
        return np.sign(z), a ** b, w ** 7
    with np.errstate(all="ignore"):
        sg, zp, p7 = sign_pow(complex(np.inf, 1), 0j, 1 + 1j, 1 + 1j)
        assert np.isnan(sg.real) and np.sign(np.complex128(complex(np.inf, 1))) == 1
        assert np.isnan(zp.real) and np.complex128(0j) ** np.complex128(1 + 1j) == 0
        assert p7 != 8 - 8j and np.complex128(1 + 1j) ** 7 == 8 - 8j


_exp_abs = ad.jit(lambda z, w: (anp.exp(z), anp.abs(z), anp.exp(w), anp.abs(w)))


def test_vectorized_exp_and_abs_match_numpy():
    # exp from numba_math's real exp/cos/sin, abs without libm's hypot (numba_complex)
    rng = np.random.default_rng(11)
    z = (rng.uniform(-700, 700, 64) + 1j * rng.uniform(-1e5, 1e5, 64))
    z[:6] = [800 + 0j, -800 + 0j, 3 + 0j, complex(1e300, 1e300), complex(1e-300, -1e-310), 0j]
    z[6:9] = [complex(np.inf, np.nan), complex(np.nan, 2), complex(-np.inf, 1)]
    w = z[9:].astype(C64) / 1e3
    with np.errstate(all="ignore"):
        got = assert_compiled(_exp_abs, z, w)
        want = (np.exp(z), np.abs(z), np.exp(w), np.abs(w))
    assert "cexp_f64(" in _exp_abs.lower(z, w).source and "cabs_f32(" in _exp_abs.lower(z, w).source
    for g, r, t in zip(got, want, (2e-15, 1e-15, 1e-6, 1e-6)):
        g = np.asarray(g)
        assert g.dtype == r.dtype
        for part in (np.real, np.imag):
            gp, rp = part(g), part(r)
            np.testing.assert_array_equal(np.isnan(gp), np.isnan(rp))
            fin = np.isfinite(rp)
            np.testing.assert_array_equal(gp[~fin], rp[~fin])
            scale = np.abs(r[fin]) if r.dtype.kind == "c" else np.abs(rp[fin])
            assert np.all(np.abs(gp[fin] - rp[fin]) <= t * scale + 1e-300), part


_cmv = ad.jit(lambda a, v, u: (a @ v, u @ a, a.T @ u, anp.dot(v, a.T @ u), a.conj().T @ u))


@pytest.mark.parametrize("dt", [C128, C64])
def test_complex_matrix_vector_products_match_numpy(dt):
    # one row or one column: zgemv/cgemv (every operand layout), and a dot product
    rng = np.random.default_rng(11)
    a = (rng.normal(size=(9, 5)) + 1j * rng.normal(size=(9, 5))).astype(dt)
    v = (rng.normal(size=5) + 1j * rng.normal(size=5)).astype(dt)
    u = (rng.normal(size=9) + 1j * rng.normal(size=9)).astype(dt)
    got = assert_compiled(_cmv, a, v, u)
    want = (a @ v, u @ a, a.T @ u, np.dot(v, a.T @ u), a.conj().T @ u)
    for g, w in zip(got, want):
        close(g, w, dt=dt)
