"""Special values as a property of the primitive registry: nan, ±inf, ±0 and subnormal
inputs give numpy's outputs for every elementwise, comparison and reduction primitive, in
every mode (eager ``impl``, traced and interpreted, ``jit``, ``vmap``, and the forward
values of ``vjp``).

Non-finite results must match numpy exactly (NaN where NaN, inf of the same sign), zeros
with their sign for the correctly rounded operations, finite results to a few ulps for the
transcendentals (jit's own vectorized math is within 1.6 ulp; numpy's within 1.2).

The tables are the ``special=`` flags of the op records' rows (``tests/op_records/``): a
primitive of the registry in none of them fails ``test_every_primitive_is_covered_or_exempt``.
One jitted program per (table, dtype) computes all of its primitives, so the whole file
compiles four kernels.
"""
import functools

import numpy as np
import pytest

import autodiff as ad
from autodiff import primitives as P
from autodiff.core import primitives
from op_records import EXACT, ROWS, ULP4, Special

nan, inf = np.nan, np.inf

SPECIAL64 = np.array([nan, inf, -inf, 0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
                      -1e-310, 1.0, -1.0, 0.5, -2.5, 3.0, 1e308, -1e308, 710.0, -745.5, 0.75,
                      88.5, -104.0])
SPECIAL32 = np.concatenate([SPECIAL64, [1e-45, -1e-45, 1.1754944e-38, 3.4e38]]).astype(np.float32)


def special(dtype):
    return SPECIAL64 if dtype == np.float64 else SPECIAL32


# the tables: the ``special=`` flags of the op records' rows (tests/op_records/)
# name -> (numpy reference, params, ulps); ulps 0: bitwise, the sign of zero included
UNARY = {n: (r.special.ref, r.special.params, r.special.ulps) for n, r in sorted(ROWS.items())
         if isinstance(r.special, Special) and r.special.table == "unary"}
BINARY = {n: (r.special.ref, r.special.ulps) for n, r in sorted(ROWS.items())
          if isinstance(r.special, Special) and r.special.table == "binary"}
# reductions over the last axis of the (n², 2) matrix of all pairs of special values
REDUCE = {n: (r.special.ref, r.special.params) for n, r in sorted(ROWS.items())
          if isinstance(r.special, Special) and r.special.table == "reduce"}
# bool-only, structural, linear-algebra and control-flow primitives: values are moved, not
# computed (structural), or the primitive's own tests cover its numerics
EXEMPT = {n: r.special for n, r in sorted(ROWS.items()) if isinstance(r.special, str)}
MODES = ["eager", "traced", "jit", "vmap", "vjp"]
DTYPES = [np.float64, np.float32]


def test_every_primitive_is_covered_or_exempt():
    covered = set(UNARY) | set(BINARY) | set(REDUCE) | set(EXEMPT)
    missing = sorted(n for n in primitives if n not in covered)
    assert missing == [], f"primitives without a special-value row or exemption: {missing}"


def _pairs(dtype):
    s = special(dtype)
    return np.repeat(s, len(s)), np.tile(s, len(s))


def _check(got, want, ulps, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    bad = np.isnan(got) != np.isnan(want)
    bad |= np.isposinf(got) != np.isposinf(want)
    bad |= np.isneginf(got) != np.isneginf(want)
    fin = np.isfinite(want) & np.isfinite(got)
    with np.errstate(over="ignore", invalid="ignore"):
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    tol = np.maximum(ulps, 0.5) * np.spacing(np.abs(want)).astype(np.float64) if ulps else 0.0
    bad |= fin & (err > tol)
    if ulps == EXACT:
        bad |= (want == 0) & (got == 0) & (np.signbit(got) != np.signbit(want))
    assert not bad.any(), f"{what}: mismatches at {np.flatnonzero(bad)[:8]}: got " \
                          f"{got.ravel()[bad.ravel()][:8]}, numpy {want.ravel()[bad.ravel()][:8]}"


def _numpy(ref, *args):
    with np.errstate(all="ignore"):
        return ref(*args)


# ---- one program per table and dtype, shared by every parametrization ------------------

def _unary_prog(x):
    return [primitives[n].bind(x, **p) for n, (_, p, _) in UNARY.items()]


def _binary_prog(x, y):
    return [primitives[n].bind(x, y) for n in BINARY]


def _reduce_prog(m):
    return [primitives[n].bind(m, **p) for n, (_, p) in REDUCE.items()]


PROGS = {"unary": (_unary_prog, list(UNARY)), "binary": (_binary_prog, list(BINARY)),
         "reduce": (_reduce_prog, list(REDUCE))}


def _args(table, dtype):
    if table == "unary":
        return (special(dtype),)
    x, y = _pairs(dtype)
    return (x, y) if table == "binary" else (np.stack([x, y], axis=1),)


@functools.lru_cache(maxsize=None)
def _outputs(table, mode, dtype):
    prog, names = PROGS[table]
    args = _args(table, dtype)
    with np.errstate(all="ignore"):
        if mode == "eager":
            outs = prog(*args)
        elif mode == "traced":
            outs = ad.jit(prog, backend="interpret")(*args)
        elif mode == "jit":
            outs = ad.jit(prog)(*args)
        elif mode == "vmap":
            # map over a leading axis of 3 copies (elementwise tables), or over the rows
            if table == "reduce":
                red = lambda row: [primitives[n].bind(row, **_row_params(p))  # noqa: E731
                                   for n, (_, p) in REDUCE.items()]
                outs = ad.vmap(red)(*args)
            else:
                outs = [o[1] for o in ad.vmap(prog)(*[np.stack([a] * 3) for a in args])]
        else:
            floats = [n for n in names if primitives[n].differentiable]
            outs = _vjp_values(prog, args, names, floats)
    return dict(zip(names, outs))


def _row_params(p):
    q = dict(p)
    for k in ("axes",):
        if k in q:
            q[k] = (0,)
    for k in ("axis", "dimension"):
        if k in q:
            q[k] = 0
    return q


def _vjp_values(prog, args, names, floats):
    """The primal outputs of vjp (the forward values of grad) for differentiable entries."""
    keep = [i for i, n in enumerate(names) if n in floats]

    def f(*a):
        outs = prog(*a)
        return [outs[i] for i in keep]

    prim_out, _ = ad.vjp(f, *args)
    full = [None] * len(names)
    for i, o in zip(keep, prim_out):
        full[i] = o
    return full


def _want(table, name, dtype):
    args = _args(table, dtype)
    if table == "unary":
        return _numpy(UNARY[name][0], *args)
    if table == "binary":
        return _numpy(BINARY[name][0], *args)
    return _numpy(REDUCE[name][0], *args)


def _case(table, name, mode, dtype):
    got = _outputs(table, mode, dtype)[name]
    ulps = UNARY[name][2] if table == "unary" else BINARY[name][1] if table == "binary" else EXACT
    _check(got, _want(table, name, dtype), ulps, f"{name} {mode} {np.dtype(dtype).name}")


def _cases(names):
    """(name, mode) pairs: vjp only for the differentiable primitives (the others have no
    forward value of grad: grad of a comparison or a rounding is a DTypeError or zero)."""
    return [(n, m) for n in names for m in MODES if m != "vjp" or primitives[n].differentiable]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,mode", _cases(UNARY))
def test_unary_special_values(name, mode, dtype):
    _case("unary", name, mode, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,mode", _cases(BINARY))
def test_binary_special_values(name, mode, dtype):
    _case("binary", name, mode, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,mode", _cases(REDUCE))
def test_reduction_special_values(name, mode, dtype):
    _case("reduce", name, mode, dtype)


select_j = ad.jit(lambda c, a, b: P.select_p.bind(c, a, b))
cast_j = ad.jit(lambda x: [P.convert(x, np.float32), P.convert(P.convert(x, np.float32), np.float64)])


def test_select_and_casts_keep_special_values():
    s = SPECIAL64
    c = np.arange(len(s)) % 2 == 0
    want = np.where(c, s, s[::-1])
    for got in (select_j(c, s, s[::-1]), P.select_p.bind(c, s, s[::-1])):
        _check(got, want, EXACT, "select")
    f32, back = cast_j(s)
    _check(f32, s.astype(np.float32), EXACT, "convert f64 -> f32")
    _check(back, s.astype(np.float32).astype(np.float64), EXACT, "convert f32 -> f64")


# ---- complex special values: the parts, and complex arithmetic, against numpy -----------

def _complex_specials():
    parts = np.array([nan, inf, -inf, 0.0, -0.0, 1.0, -2.5, 1e308, 5e-324])
    re, im = np.repeat(parts, len(parts)), np.tile(parts, len(parts))
    return re, im, _make_complex(re, im)


def _make_complex(re, im):
    z = np.empty(re.shape, np.complex128)
    z.real, z.imag = re, im                 # exact parts: no arithmetic on inf/nan
    return z


def _complex_prog(re, im, z):
    return [P.real(z), P.imag(z), P.conj(z), P.complex_p.bind(re, im), P.abs_p.bind(z),
            P.add_p.bind(z, z[::-1]), P.mul_p.bind(z, z[::-1])]


def _parts(c):
    c = np.asarray(c)
    return (c.real, c.imag) if c.dtype.kind == "c" else (c,)


@pytest.mark.parametrize("mode", ["eager", "traced", "jit"])
def test_complex_special_values_match_numpy(mode):
    re, im, z = _complex_specials()
    want = _numpy(lambda: [np.real(z), np.imag(z), np.conj(z), _make_complex(re, im), np.abs(z),
                           z + z[::-1], z * z[::-1]])
    run = {"eager": _complex_prog, "traced": ad.jit(_complex_prog, backend="interpret"),
           "jit": ad.jit(_complex_prog)}[mode]
    with np.errstate(all="ignore"):
        got = run(re, im, z)
    names = ["real", "imag", "conj", "complex", "abs", "add", "mul"]
    for n, g, w in zip(names, got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype, n
        # the parts are moved (bitwise, signed zeros included); abs to 4 ulp; add and mul as
        # numpy's NaN/inf pattern with finite values to 4 ulp
        ulps = EXACT if n in ("real", "imag", "conj", "complex") else ULP4
        for gp, wp in zip(_parts(g), _parts(w)):
            if n == "mul":
                # C99's Annex G (numpy) recovers infinities from NaN products; Numba's complex
                # multiply does not, and neither does autodiff's interpreter: where numpy's
                # result is non-finite, only require a non-finite result
                nf = ~np.isfinite(wp)
                assert not np.isfinite(np.asarray(gp)[nf]).any(), (mode, n)
                _check(np.where(nf, 0.0, gp), np.where(nf, 0.0, wp), ulps, f"{mode} {n}")
            else:
                _check(gp, wp, ulps, f"{mode} {n}")


# ---- issue 33: softmax / log_softmax rows with ±inf, and 0-d / float32 dot --------------

SOFTMAX_SPECIAL_ROWS = [[inf, 1.0, 2.0], [1.0, inf, -inf], [-inf, 1.0, -inf], [-inf, -inf, -inf],
                        [inf, inf, 1.0], [inf, -inf, -inf], [nan, 1.0, inf], [-inf, -inf, 0.5],
                        [inf, nan, -inf], [-inf, inf, inf]]
SOFTMAX_FINITE_ROWS = [[1.0, 2.0, 3.0], [-1e3, 0.0, 1e3], [0.5, 0.5, -0.25], [700.0, -700.0, 3.0]]


def _softmax_fns():
    import autodiff.scipy.special as asp
    return {"nn.log_softmax": (ad.nn.log_softmax, True), "nn.softmax": (ad.nn.softmax, False),
            "scipy.log_softmax": (lambda x: asp.log_softmax(x, axis=-1), True),
            "scipy.softmax": (lambda x: asp.softmax(x, axis=-1), False)}


def _softmax_ref(x, log):
    # numpy's arithmetic on scipy's logsumexp: x - lse(x) (inf - inf = nan at a +inf entry,
    # finite - inf = -inf elsewhere), and exp of that for softmax
    from scipy.special import logsumexp
    with np.errstate(all="ignore"):
        ls = x - logsumexp(x, axis=-1, keepdims=True).astype(x.dtype)
        return ls if log else np.exp(ls)


def _run_mode(f, x, mode):
    with np.errstate(all="ignore"):
        if mode == "eager":
            return f(x)
        if mode == "jit":
            return ad.jit(f)(x)
        return ad.vmap(f)(x)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("name", ["nn.log_softmax", "nn.softmax", "scipy.log_softmax",
                                  "scipy.softmax"])
def test_softmax_rows_with_infinities_follow_numpys_arithmetic(name, mode, dtype):
    f, log = _softmax_fns()[name]
    x = np.array(SOFTMAX_SPECIAL_ROWS, dtype)
    got = np.asarray(_run_mode(f, x, mode))
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, _softmax_ref(x, log), err_msg=f"{name} {mode}")
    if log:
        with np.errstate(all="ignore"):
            want = np.nan_to_num(_softmax_ref(x, log))
        np.testing.assert_array_equal(np.asarray(_run_mode(lambda v: ad.numpy.nan_to_num(f(v)),
                                                           x, mode)), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("name", ["nn.log_softmax", "nn.softmax"])
def test_softmax_finite_rows_keep_the_max_shift_formula(name, mode, dtype):
    # finite rows are computed as before the fix: (x - max) - log(sum(exp(x - max)))
    f, log = _softmax_fns()[name]
    x = np.array(SOFTMAX_FINITE_ROWS, dtype)
    s = x - x.max(axis=-1, keepdims=True)
    e = np.exp(s)
    want = s - np.log(e.sum(axis=-1, keepdims=True)) if log else e / e.sum(axis=-1, keepdims=True)
    got = _run_mode(f, x, mode)
    _check(got, want, EXACT if mode == "eager" else ULP4, f"{name} {mode}")


@pytest.mark.parametrize("name", ["nn.log_softmax", "nn.softmax"])
def test_softmax_gradient_on_rows_with_infinities_is_finite_or_nan(name):
    f, _ = _softmax_fns()[name]
    w = np.array([0.0, 1.0, 0.0])
    for row in SOFTMAX_SPECIAL_ROWS + SOFTMAX_FINITE_ROWS:
        x = np.array(row)
        loss = lambda v: ad.numpy.sum(f(v) * w)  # noqa: E731
        with np.errstate(all="ignore"):
            g, gj = ad.grad(loss)(x), ad.jit(ad.grad(loss))(x)
        assert not np.isinf(g).any(), (row, g)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(gj), err_msg=str(row))
        np.testing.assert_allclose(np.nan_to_num(g), np.nan_to_num(gj), rtol=1e-12, atol=1e-15)


DOT_SPECIALS = [inf, -inf, nan, 0.0, -0.0, 2.0]


def _dot_zero_d_cases(dtype):
    """(a, b) operand pairs of a 0-d dot: scalars, 0-d arrays, 0-d with a vector."""
    t = np.dtype(dtype).type
    out = []
    for a in DOT_SPECIALS:
        for b in DOT_SPECIALS:
            out += [(t(a), t(b)), (np.array(a, dtype), np.array(b, dtype)),
                    (np.array(a, dtype), np.array([b], dtype)),
                    (np.array([a], dtype), np.array(b, dtype))]
            if a != 0:
                # numpy's dot of a 0-d ZERO with a longer vector is 0 whatever the vector
                # holds (BLAS axpy skips alpha == 0; numpy/numpy#14788): not numpy's
                # arithmetic, not followed; a nonzero 0-d operand is multiplied elementwise
                out += [(np.array(a, dtype), np.array([b, 1.0, -3.0], dtype)),
                        (np.array([b, 1.0, -3.0], dtype), np.array(a, dtype))]
    return out


def _assert_same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got, want)
    # (equal zeros of either sign: numpy's axpy path of a 0-d dot gives 0 + 2 * -0.0 = +0.0)
    np.testing.assert_array_equal(got, want, err_msg=str(what))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("mode", ["eager", "jit", "vmap", "grad"])
def test_zero_d_dot_with_special_values_matches_numpy(mode, dtype):
    dot_j = ad.jit(ad.numpy.dot)
    for a, b in _dot_zero_d_cases(dtype):
        with np.errstate(all="ignore"):
            want = np.dot(a, b)
            if mode == "eager":
                got = ad.numpy.dot(a, b)
            elif mode == "jit":
                got = dot_j(a, b)
            elif mode == "vmap":
                got = ad.vmap(ad.numpy.dot)(np.stack([a] * 2), np.stack([b] * 2))[1]
            elif np.ndim(a) == 0 and np.ndim(b) == 0:
                # d dot(a, b)/da = b, d/db = a: numpy's values and dtype
                got = [ad.grad(ad.numpy.dot, 0)(a, b), ad.jit(ad.grad(ad.numpy.dot, 1))(a, b)]
                want = [np.asarray(b), np.asarray(a)]
            else:
                continue
        _assert_same(got, want, (mode, a, b))


# a float32 dot rounds each product to float32 (numpy/BLAS): 1e30 * 1e30 is inf, so these
# are nan / inf, not the float64 products' 0.0 or 4e38 -> inf by accident
F32_DOT_OVERFLOW = [([1e30, -1e30], [1e30, 1e30]), ([1e20, 1.0, -1e20], [1e20, 1.0, 1e20]),
                    ([2e19], [2e19]), ([inf], [0.0]), ([nan], [1.0]), ([3e-23], [3e-23]),
                    ([-inf, 1.0], [1.0, 2.0]), ([inf, 1.0], [1.0, -inf])]


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("fn", ["dot", "vdot", "inner"])
def test_float32_vector_dot_rounds_products_like_numpy(fn, mode):
    from tests.jit_util import assert_compiled
    f = getattr(ad.numpy, fn)
    for a, b in F32_DOT_OVERFLOW:
        a, b = np.array(a, np.float32), np.array(b, np.float32)
        with np.errstate(all="ignore"):
            want = getattr(np, fn)(a, b)
            if mode == "eager":
                got = f(a, b)
            elif mode == "jit":
                got = assert_compiled(ad.jit(f), a, b)
            else:
                if len(a) > 1 and np.isfinite(a).all():
                    continue     # a batched product is a gemm: its summation order is BLAS's
                got = ad.vmap(f)(a[None], b[None])[0]
        _assert_same(got, want, (fn, mode, a, b))


@pytest.mark.parametrize("mode", ["eager", "jit", "jit-arg", "vmap", "grad"])
@pytest.mark.parametrize("fn", ["dot", "inner", "kron"])
def test_products_take_python_numbers_as_numpy_arrays(fn, mode):
    # np.dot(np.float32(3e38), 2.0) is float64 6e38: numpy's dot converts a Python number
    # with asarray (strong float64), unlike np.multiply's weak scalar (float32 inf)
    f, npf = getattr(ad.numpy, fn), getattr(np, fn)
    for x in (np.float32(3e38), np.array([3e38, inf, 0.0], np.float32), np.int8(100)):
        for s in (2.0, 3):
            with np.errstate(all="ignore"):
                want = npf(x, s)
                if mode == "eager":
                    got = f(x, s)
                elif mode == "jit":
                    got = ad.jit(lambda v: f(v, s))(x)
                elif mode == "jit-arg":
                    got = ad.jit(f)(x, s)     # a weakly typed Python number argument
                elif mode == "vmap":
                    got = ad.vmap(lambda v: f(v, s))(np.stack([x] * 2))[0]
                elif np.asarray(x).dtype.kind == "f":
                    # the primal value of grad's forward pass
                    got, _ = ad.vjp(lambda v: f(v, s), x)
                else:
                    continue
            _assert_same(got, want, (fn, mode, x, s))


def test_hypot_of_nan_and_zero_is_nan_in_every_mode():
    # found by the fuzzer's long run (issue 33): the traced hypot ordered NaN below 0, took
    # hi = 0 for "both zero" and returned 0 where numpy gives NaN
    x = np.array([0.0, 0.0, 3.0, np.nan, np.inf, 0.0, -0.0])
    y = np.array([0.0, np.nan, np.nan, 0.0, np.nan, -0.0, np.nan])
    for a, b in ((x, y), (y, x)):
        want = np.hypot(a, b)
        for run in (ad.jit(ad.numpy.hypot), ad.vmap(ad.numpy.hypot),
                    ad.jit(ad.numpy.hypot, backend="interpret")):
            np.testing.assert_array_equal(run(a, b), want)
    np.testing.assert_allclose(ad.grad(lambda t: ad.numpy.hypot(t, 4.0))(3.0), 0.6)
