"""Every primitive's Numba lowering agrees with the numpy interpreter.

The registry is enumerated: each primitive must have a lowering and a case (the ``jit=``
flag of its row in ``tests/op_records/``: the generic elementwise case, a test here, or
where else its cases are; ``KNOWN_GAPS`` lists the ones the cpu backend cannot lower; it
is empty). Each case is run, through one jitted function, on both float dtypes where they
apply, several shapes, broadcast operands, non-contiguous inputs and zero-size inputs; the
numpy interpreter (``backend="interpret"``) is the oracle.

Every op record of ``tests/op_records/`` (the table the primitive and vmap tests share)
runs through ``jit(backend="cpu")`` in ``tests/test_jit_records.py``.
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import primitives as P
from autodiff.core import ClosedJaxpr, Jaxpr, primitives
from autodiff.backends import numba_cpu
from jit_util import assert_compiled, prims_in, run_lowered
from op_records import ROWS, Elementwise

F64, F32 = np.float64, np.float32
FLOATS = (F64, F32)


def rng():
    return np.random.default_rng(0)


def uniform(shape, dtype, lo=-2.0, hi=2.0, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(dtype)


def noncontig(a):
    """The same values as ``a`` in a non-contiguous (strided) array."""
    a = np.asarray(a)
    if a.ndim == 0:
        return a
    big = np.empty(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    big[..., ::2] = a
    out = big[..., ::2]
    assert not out.flags.c_contiguous or a.size <= 1
    return out


def tol(dtype):
    if np.dtype(dtype) == np.float32:
        return dict(rtol=2e-5, atol=2e-5)
    return dict(rtol=1e-11, atol=1e-12)


def check(name, fn, arg_sets, rtol=None, atol=None, expect=None):
    """jit(fn) == interpreter on every argument set (variants share one jitted function);
    each call must run the compiled kernel (a quiet interpreter fallback fails)."""
    jf = ad.jit(fn)
    ref = ad.jit(fn, backend="interpret")
    found = prims_in(ad.make_jaxpr(fn)(*arg_sets[0]).jaxpr, set())
    assert (expect or name) in found, f"case for {name} does not produce it: {sorted(found)}"
    for args in arg_sets:
        got, want = assert_compiled(jf, *args), ref(*args)
        gl, wl = ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)
        assert len(gl) == len(wl)
        for g, w in zip(gl, wl):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape, (name, g.shape, w.shape)
            assert g.dtype == w.dtype, (name, g.dtype, w.dtype)
            if w.dtype.kind == "f":
                t = tol(w.dtype)
                np.testing.assert_allclose(g, w, rtol=rtol or t["rtol"], atol=atol or t["atol"],
                                           err_msg=name)
            else:
                np.testing.assert_array_equal(g, w, err_msg=name)
    return jf


# ---------------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------------

def _generic(kind):
    """The rows whose ``jit=`` flag is the generic elementwise case (tests/op_records/):
    unary float, binary or bitwise primitives."""
    out = []
    for n, r in sorted(ROWS.items()):
        if isinstance(r.jit, Elementwise):
            k = ("bitwise" if r.jit.bitwise else
                 "unary" if len(r.records[0].args) == 1 else "binary")
            if k == kind:
                out.append(n)
    return out


UNARY_FLOAT = _generic("unary")


def _unary_sets(lo, hi, extra=()):
    def mk(seed, shapes):
        return tuple(uniform(s, dt, lo, hi, seed + i) for i, (s, dt) in enumerate(shapes))
    base = [((5,), F64), ((3, 4), F32), ((), F64), ((2, 3), F64), ((4,), F32)]
    other = [((7,), F64), ((1, 6), F32), ((), F64), ((0, 3), F64), ((0,), F32)]
    sets = [mk(0, base), mk(1, other)]
    sets.append(tuple(noncontig(a) for a in sets[0]))
    return sets


@pytest.mark.parametrize("name", UNARY_FLOAT)
def test_unary_float(name):
    prim, flag = primitives[name], ROWS[name].jit
    lo, hi = flag.lo, flag.hi
    sets = _unary_sets(lo, hi)
    if flag.halves:
        for s in sets:                 # exact halves, integers and zeros
            if s[0].size >= 5:
                s[0][:5] = [0.5, 1.5, -2.5, 0.0, -0.0]

    def fn(*xs):
        return [prim.bind(x) for x in xs]
    check(name, fn, sets, rtol=flag.rtol)


def test_unary_special_values():
    vals = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, 700.0, -745.0, 1e300], F64)

    def fn(x):
        return (anp.exp(x), anp.tanh(x), anp.sin(x), anp.sign(x), P.is_finite_p.bind(x),
                anp.log1p(anp.abs(x)), anp.expm1(x), P.logistic_p.bind(x))
    with np.errstate(all="ignore"):
        check("exp", fn, [(vals,), (vals.astype(F32).astype(F64),)])


def test_is_finite_and_not():
    x = np.array([1.0, np.inf, np.nan, -np.inf, 0.0])
    b = np.array([True, False, True])
    i = np.array([3, -4, 0], np.int32)
    check("is_finite", lambda x, y: (P.is_finite_p.bind(x), P.is_finite_p.bind(y)),
          [(x, x.astype(F32)), (x[:0], x[:0].astype(F32))])
    check("not", lambda b, i: (P.not_p.bind(b), P.not_p.bind(i)), [(b, i), (b[:0], i[:0])])


def test_integer_pow():
    def fn(x, y, z):
        return [P.integer_pow(x, k) for k in (0, 1, 2, 3, 5, -1, -2)] + \
            [P.integer_pow(y, 3), P.integer_pow(z, 2)]
    sets = [(uniform((5,), F64, 0.5, 2), uniform((2, 3), F32, 0.5, 2), np.arange(4)),
            (uniform((0,), F64), uniform((1, 2), F32, 0.5, 2), np.arange(-3, 3))]
    check("integer_pow", fn, sets)


BINARY = _generic("binary")          # arithmetic and comparisons


def _binary_sets(name):
    flag = ROWS[name].jit
    x64 = uniform((4, 3), F64, flag.lo, flag.hi, 1)
    y64 = uniform((4, 3), F64, flag.lo, flag.hi, 2)
    if flag.nonzero:
        y64[np.abs(y64) < 0.1] = 0.5
    y64[0, :2] = x64[0, :2]                   # ties (max/min/compare)
    s64 = np.float64(1.5)
    x32, y32 = x64[:2].astype(F32), y64[:2].astype(F32)
    a = (x64, y64, s64, x32, y32, x64[:, :1], y64[:1, :])
    b = (x64[:0], y64[:0], np.float64(-0.5), x32[:, :1], y32[:, :1], x64[:3, :1], y64[:1, :2])
    c = tuple(noncontig(v) for v in a)
    return [a, b, c]


@pytest.mark.parametrize("name", BINARY)
def test_binary(name):
    prim = primitives[name]

    def fn(x, y, s, x32, y32, col, row):
        bc, br = anp.broadcast_arrays(col, row)        # broadcast_in_dim views feeding the op
        return (prim.bind(x, y), prim.bind(x, s), prim.bind(s, y), prim.bind(x32, y32),
                prim.bind(bc, br))
    with np.errstate(all="ignore"):
        check(name, fn, _binary_sets(name))


def test_binary_nan_semantics():
    x = np.array([np.nan, 1.0, 2.0, np.nan, -0.0])
    y = np.array([1.0, np.nan, 2.0, np.nan, 0.0])
    check("max", lambda x, y: (P.max_(x, y), P.min_(x, y), anp.fmod(x, y)), [(x, y)])


@pytest.mark.parametrize("name", _generic("bitwise"))
def test_bitwise(name):
    prim = primitives[name]
    b1, b2 = np.array([True, False, True, False]), np.array([True, True, False, False])
    i1, i2 = np.array([5, 3, -2], np.int64), np.array([1, 6, 7], np.int64)
    j1, j2 = np.array([5, 3], np.int32), np.array([12, 6], np.int32)
    check(name, lambda a, b, c, d, e, f: (prim.bind(a, b), prim.bind(c, d), prim.bind(e, f)),
          [(b1, b2, i1, i2, j1, j2), (b1[:0], b2[:0], i1[:1], i2[:1], j1, j2)])


def test_select():
    def fn(p, x, y, q, u, v, s):
        return (P.select(p, x, y), P.select(q, u, v), P.select(s, x, y), P.select(p, x, 2.0))
    p = np.array([True, False, True, True])
    x, y = uniform((4,), F64), uniform((4,), F64, seed=3)
    q = np.array([[True, False], [False, True]])
    u, v = uniform((2, 2), F32), uniform((2, 2), F32, seed=4)
    check("select", fn, [(p, x, y, q, u, v, np.bool_(True)),
                         (p[:0], x[:0], y[:0], q[:1], u[:1], v[:1], np.bool_(False))])


def test_convert_element_type():
    def fn(x, i, b, h):
        return (P.convert(x, F32), P.convert(x, np.int64), P.convert(x, np.int32),
                P.convert(x, np.bool_), P.convert(i, F64), P.convert(b, F32),
                P.convert(h, F64), P.convert(i, np.uint8), P.convert(b, np.int64))
    x = np.array([1.7, -2.2, 0.0, 3.5])
    check("convert_element_type", fn,
          [(x, np.array([3, -1, 300]), np.array([True, False]), x.astype(F32)),
           (x[:0], np.array([7]), np.array([False]), x[:1].astype(F32))])


def test_iota():
    # iota has no operands, so tracing evaluates it eagerly: build the jaxpr by hand
    from autodiff.core import Eqn, ShapedArray, Var
    from autodiff.backends.interpreter import run_closed
    for n in (4, 0, 7):
        x = Var(ShapedArray((n, 3), F64))
        i1, i2, i3, o = (Var(ShapedArray((n, 3), np.int64)), Var(ShapedArray((n, 3), F64)),
                         Var(ShapedArray((n,), np.int32)), Var(ShapedArray((n, 3), F64)))
        eqns = [Eqn(P.iota_p, [], [i1], dict(dtype=np.dtype(np.int64), shape=(n, 3), dimension=0)),
                Eqn(P.iota_p, [], [i2], dict(dtype=np.dtype(F64), shape=(n, 3), dimension=1)),
                Eqn(P.iota_p, [], [i3], dict(dtype=np.dtype(np.int32), shape=(n,), dimension=0)),
                Eqn(P.add_p, [i2, x], [o], {})]
        closed = ClosedJaxpr(Jaxpr((), [x], [i1, o, i3], eqns), [])
        args = [uniform((n, 3), F64)]
        for g, w in zip(run_lowered(closed, args), run_closed(closed, args)):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


# ---------------------------------------------------------------------------------
# shapes: views and reshapes
# ---------------------------------------------------------------------------------

def test_broadcast_in_dim():
    def fn(x, v, s, y):
        return (P.broadcast_in_dim(v, (3, 4), (1,)) * 2.0,
                P.broadcast_in_dim(x, (2, 3, 4), (1, 2)),          # materialized copy
                P.broadcast_in_dim(s, (2, 2), ()) + 1.0,
                P.broadcast_in_dim(y, (3, 5), (0, 1)) - x[:, :1],   # size-1 operand dim
                P.broadcast_in_dim(v, (4, 2), (0,)))
    a = (uniform((3, 4), F64), uniform((4,), F64), np.float64(2.0), uniform((3, 1), F64))
    b = (uniform((5, 4), F64), uniform((4,), F64), np.float64(-1.0), uniform((5, 1), F64))
    check("broadcast_in_dim", lambda x, v, s, y: fn(x[:3], v, s, y[:3]),
          [a, b, tuple(map(noncontig, a))])
    check("broadcast_in_dim", lambda v: P.broadcast_in_dim(v.astype(F32), (2, v.shape[0]), (1,)),
          [(uniform((4,), F64),), (uniform((0,), F64),)])


def test_transpose_rev_slice():
    def fn(x, y):
        t = P.transpose(x, (1, 0))
        return (t, anp.exp(t) + 1.0, P.rev(x, (0,)), P.rev(y, (0, 2)) * 2.0,
                P.slice_op(x, (1, 0), (3, 4), (1, 2)), P.slice_op(y, (0, 1, 0), (2, 3, 2)) + 1.0,
                P.transpose(y, (2, 0, 1)))
    a = (uniform((3, 4), F64), uniform((2, 3, 2), F32))
    b = (uniform((4, 5), F64), uniform((3, 4, 2), F32))
    for name in ("transpose", "rev", "slice"):
        check(name, fn, [a, b, tuple(map(noncontig, a))])


def test_roll():
    # a roll is an index map read in place (out[i] = x[i - shift], wrapped): a stencil of
    # rolls fuses into its consumer's loop; the shift is a run-time size where the kernel
    # serves several shapes, so the second and third argument sets reuse the kernel
    def fn(x, y):
        lap = (anp.roll(x, 1, 0) + anp.roll(x, -1, 0) + anp.roll(x, 1, 1) + anp.roll(x, -1, 1)
               - 4.0 * x)
        return (lap, P.roll(x, 2, 1), anp.roll(P.rev(y, (1,)), 1, 2) * 2.0,
                anp.roll(x[1:, ::2], -1, 1) + 0.0, anp.roll(x.T, 3, 0), anp.roll(y, 1, 0))
    a = (uniform((5, 6), F64), uniform((2, 3, 4), F32))
    b = (uniform((7, 9), F64), uniform((3, 4, 5), F32))
    jf = check("roll", fn, [a, b, tuple(map(noncontig, a))])
    x = np.arange(30.0).reshape(5, 6)
    np.testing.assert_array_equal(jf(x, a[1])[1], np.roll(x, 2, 1))      # against numpy
    np.testing.assert_array_equal(jf(x, a[1])[4], np.roll(x.T, 3, 0))


def test_roll_grad_fuses():
    # the Jacobi sweep of a fluid solver and its gradient: rolls and their transposes (the
    # opposite rolls) are views, so no equation of the compiled program is a copy of one
    def sweep(p, div):
        for _ in range(3):
            p = (div + anp.roll(p, 1, 0) + anp.roll(p, -1, 0) + anp.roll(p, 1, 1)
                 + anp.roll(p, -1, 1)) / 4.0
        return anp.sum(p * p)
    p0, d = uniform((8, 8), F64), uniform((8, 8), F64)
    g = ad.jit(ad.grad(sweep))
    want = ad.grad(sweep)(p0, d)
    np.testing.assert_allclose(assert_compiled(g, p0, d), want, rtol=1e-12, atol=1e-12)
    eps = 1e-6
    e = np.zeros_like(p0)
    e[2, 3] = eps
    fd = (sweep(p0 + e, d) - sweep(p0 - e, d)) / (2 * eps)
    np.testing.assert_allclose(want[2, 3], fd, rtol=1e-7)
    assert "concatenate" not in prims_in(ad.make_jaxpr(ad.grad(sweep))(p0, d).jaxpr, set())


def test_composed_views():
    # index maps compose: rev of a slice, slice of a transpose of a rev, broadcast of those
    def fn(x):
        v = anp.flip(x, (0, 1))[1:3, ::-2]
        return (x[::-1][:3], anp.flip(x[1:, ::2], 0)[::2, 1:] * 1.0,
                anp.flip(anp.flip(x, 1)[:, 1:5:3].T, 1) + 0.0,
                v[:, :, None] + x[:2, :v.shape[1], None],
                P.rev(P.transpose(x[::2], (1, 0)), (0,))[2:] - 1.0)
    x = np.arange(30.0).reshape(5, 6)
    check("rev", fn, [(x,), (noncontig(x),), (np.arange(42.0).reshape(6, 7),)])


def test_reshape_squeeze_expand_dims():
    def fn(x, s):
        r = P.reshape(x, (x.shape[0] * x.shape[1],))
        return (r, anp.sin(r) * 2.0, P.reshape(x.T, (x.shape[1], x.shape[0])),
                P.squeeze(x[:1], (0,)), P.expand_dims(x, (0, 2)) + 1.0,
                P.reshape(s, (1, 1)), P.reshape(x[:1, :1], ()))
    a = (uniform((3, 4), F64), np.float64(3.0))
    b = (uniform((2, 6), F64), np.float64(-1.0))
    for name in ("reshape", "squeeze", "expand_dims"):
        check(name, fn, [a, b, (noncontig(a[0]), a[1])])


def test_concatenate_pad():
    def fn(x, y, z):
        return (P.concatenate([x, y], 0), P.concatenate([x, z, x], 1) * 2.0,
                P.pad(x, np.float64(-1.0), ((1, 2, 0), (0, 1, 1))),
                P.pad(x, np.float64(0.0), ((-1, 1, 0), (2, -1, 2))),
                P.pad(z.astype(F32), np.float32(5.0), ((0, 0, 1), (1, 1, 0))))
    a = (uniform((3, 4), F64), uniform((2, 4), F64), uniform((3, 1), F64))
    b = (uniform((2, 3), F64), uniform((0, 3), F64), uniform((2, 1), F64))
    c = tuple(v.astype(F32) for v in a)
    check("concatenate", lambda x, y, z: fn(x, y, z)[:2], [a, b, c])
    check("pad", fn, [a, b, tuple(map(noncontig, a))])


# ---------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"])
def test_reductions(name):
    prim = primitives[name]

    def red(x, axes):
        return prim.bind(x, axes=tuple(axes))

    def fn(x, y, z, i):
        return (red(x, (0,)), red(x, (1,)), red(x, (0, 1)), red(anp.exp(y) * 0.5, (0, 2)),
                red(y, (1, 2)), red(z, (0,)), red(i, (0,)), red(x * 2.0, (1,)) + 1.0)
    a = (uniform((3, 4), F64, 0.5, 1.5), uniform((2, 3, 5), F32, 0.5, 1.5),
         uniform((6,), F32, 0.5, 1.5), np.array([3, 1, 4, 1, 5], np.int32))
    b = (uniform((5, 2), F64, 0.5, 1.5), uniform((1, 4, 3), F32, 0.5, 1.5),
         uniform((0,), F32) if name in ("reduce_sum", "reduce_prod") else uniform((1,), F32),
         np.array([2, 7], np.int32))
    check(name, fn, [a, b, tuple(map(noncontig, a))])


def test_reduction_nan_and_float32_accuracy():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])

    def fn(x, big):
        return P.reduce_max_p.bind(x, axes=(1,)), P.reduce_min_p.bind(x, axes=(0,)), \
            P.reduce_sum(big, (0,))
    big = np.full(200_001, 0.1, F32)
    jf = ad.jit(fn)
    mx, mn, s = assert_compiled(jf, x, big)
    np.testing.assert_array_equal(mx, [np.nan, 6.0])
    np.testing.assert_array_equal(mn, [1.0, np.nan, 3.0])
    exact = 200_001 * float(F32(0.1))
    assert abs(float(s) - exact) / exact < 1e-6     # sequential float32 would be ~1e-3 off


@pytest.mark.parametrize("name", ["reduce_and", "reduce_or"])
def test_bool_reductions(name):
    prim = primitives[name]
    b = np.array([[True, False, True], [True, True, True]])
    check(name, lambda b: (prim.bind(b, axes=(0,)), prim.bind(b, axes=(1,)),
                           prim.bind(b, axes=(0, 1))), [(b,), (b[:, :0],), (b[:1],)])


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name):
    prim = primitives[name]
    x = np.array([[1.0, 3.0, 3.0, -1.0], [np.nan, 2.0, np.nan, 0.0], [2.0, 2.0, 1.0, 5.0]])

    def fn(x, y):
        return (prim.bind(x, axis=1, index_dtype=np.dtype(np.int64)),
                prim.bind(x, axis=0, index_dtype=np.dtype(np.int32)),
                prim.bind(y, axis=0, index_dtype=np.dtype(np.int64)))
    check(name, fn, [(x, np.array([3, 9, 9, 1])), (x[:, :1], np.array([2])),
                     (noncontig(x), np.array([5, 5]))])


# ---------------------------------------------------------------------------------
# opaque primitives
# ---------------------------------------------------------------------------------

def test_dot_general():
    def mm(a, b, dn):
        return P.dot_general(a, b, dn)

    def fn(a, b, c, d, v, w, e, f):
        return (mm(a, b, (((1,), (0,)), ((), ()))),          # matmul
                mm(a, c, (((1,), (1,)), ((), ()))),          # a @ c.T  (transposed operand)
                mm(b, a, (((0,), (1,)), ((), ()))),          # b.T @ a.T
                mm(d, d, (((2,), (1,)), ((0,), (0,)))),      # batched
                mm(v, w, (((0,), (0,)), ((), ()))),          # inner product -> rank 0
                mm(a, v[:a.shape[1]], (((1,), (0,)), ((), ()))),   # matrix-vector
                mm(e, f, (((0, 2), (2, 1)), ((), ()))),      # contraction needing a transpose
                mm(a.astype(F32), b.astype(F32), (((1,), (0,)), ((), ()))),
                mm(a.astype(np.int64), b.astype(np.int64), (((1,), (0,)), ((), ()))),
                mm(v, w, (((), ()), ((), ()))))              # outer product
    a = (uniform((3, 4), F64), uniform((4, 5), F64), uniform((2, 4), F64),
         uniform((2, 3, 3), F64), uniform((6,), F64), uniform((6,), F64),
         uniform((2, 3, 4), F64), uniform((5, 4, 2), F64))
    b = (uniform((2, 0), F64), uniform((0, 3), F64), uniform((1, 0), F64),
         uniform((1, 2, 2), F64), uniform((4,), F64), uniform((4,), F64),
         uniform((2, 1, 3), F64), uniform((2, 3, 2), F64))
    check("dot_general", fn, [a, tuple(map(noncontig, a)), b], rtol=1e-10)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
def test_cumulative(name):
    prim = primitives[name]

    def fn(x, y):
        return (prim.bind(x, axis=0, reverse=False), prim.bind(x, axis=1, reverse=True),
                prim.bind(y, axis=0, reverse=True))
    x = uniform((3, 4), F64, 0.5, 1.5)
    x[1, 1] = np.nan
    check(name, fn, [(x, uniform((5,), F32, 0.5, 1.5)), (x[:0], uniform((1,), F32)),
                     (noncontig(x), uniform((3,), F32))])


@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_sort(name):
    prim = primitives[name]
    x = np.array([[3.0, 1.0, np.nan, 2.0], [0.0, -0.0, 5.0, 5.0], [2.0, 2.0, 1.0, -1.0]])
    check(name, lambda x, y: (prim.bind(x, dimension=1), prim.bind(x, dimension=0),
                              prim.bind(y, dimension=0)),
          [(x, x[0].astype(F32)), (x[:, :0], x[0, :1].astype(F32)), (noncontig(x), x[1])])


def test_gather_scatter():
    def fn(x, idx, upd, i1, u1):
        return (P.gather(x, idx), P.scatter_add_p.bind(x, idx, upd), P.scatter_p.bind(x, i1, u1),
                P.gather(x, i1) * 2.0, P.take_along_axis(x, P.argsort_p.bind(x, dimension=1), 1))
    x = uniform((4, 3), F64)
    idx = np.array([[0, 1], [3, 2], [-1, 0], [7, -9], [0, 1]])
    upd = uniform((5,), F64)
    i1 = np.array([[2], [0], [2]])
    u1 = uniform((3, 3), F64)
    for name in ("gather", "scatter_add", "scatter"):
        check(name, fn, [(x, idx, upd, i1, u1), (noncontig(x), idx[:1], upd[:1], i1[:0], u1[:0]),
                         (x.astype(F32), idx, upd.astype(F32), i1, u1.astype(F32))])


def test_scatter_combining():
    # every update combined into its position, repeats included (numpy's multiply.at,
    # minimum.at, maximum.at: a NaN on either side wins), rows outside dropped by
    # mode="drop"; the interpreter's result is numpy's own
    def fn(x, idx, upd, xi, ui):
        out = []
        for p in (P.scatter_mul_p, P.scatter_min_p, P.scatter_max_p):
            out += [p.bind(x, idx, upd), p.bind(x, idx, upd, mode="drop"),
                    p.bind(xi, idx, ui), p.bind(xi, idx, ui, mode="drop")]
        return tuple(out)
    x = uniform((4, 3), F64)
    x[1, 2] = np.nan
    idx = np.array([[0], [3], [0], [7], [-1], [0]])
    upd = uniform((6, 3), F64)
    upd[0, 1], upd[2, 0] = np.nan, x[0, 0]                    # a NaN update, a tie
    xi = np.arange(12, dtype=np.int32).reshape(4, 3) - 5
    ui = (np.arange(18, dtype=np.int32).reshape(6, 3) * 7) % 11 - 5
    for name in ("scatter_mul", "scatter_min", "scatter_max"):
        check(name, fn, [(x, idx, upd, xi, ui), (noncontig(x), idx[:2], upd[:2], xi, ui[:2]),
                         (x.astype(F32), idx, upd.astype(F32), xi, ui)])
    want = x.copy()
    np.maximum.at(want, ([0, 3, 0, 0],), upd[[0, 1, 2, 5]])
    np.testing.assert_array_equal(ad.jit(fn)(x, idx, upd, xi, ui)[9], want)
    assert np.isnan(want[0, 1]) and np.isnan(want[1, 2])


def test_index_gather():
    # numpy's x[i, j] on index arrays: one operand per indexed axis, negatives wrapped and
    # the rest clamped as gather does; rank-0 indices, trailing axes, an empty index
    def fn(x, i, j, s):
        return (x[i, j], P.index_gather(x, [i]) * 2.0, x[s, j[0]], P.index_gather(x, [i, j]),
                x[i[:, None], j[None, :2]])
    x = uniform((4, 3), F64)
    i = np.array([0, 3, -1, 2, -4])
    j = np.array([2, 0, 1, -1, -3], np.int32)
    sets = [(x, i, j, np.int64(-2)), (noncontig(x), i, j, np.int64(1)),
            (x.astype(F32), i[::-1].copy(), j, np.int64(3))]
    jf = check("index_gather", fn, sets)
    np.testing.assert_array_equal(jf(*sets[0])[0], x[i, j])
    np.testing.assert_array_equal(jf(*sets[0])[4], x[i[:, None], j[None, :2]])
    y = uniform((5, 4, 3), F64)
    check("index_gather", lambda y, i, j: (y[i, j], y[:, i[:3], j[:3]] + 1.0),
          [(y, i % 4, j), (y[:, :2], i % 2, j)])


def test_dynamic_slice_update():
    def fn(x, i, j, u):
        return (P.dynamic_slice(x, (i, j), (2, 2)), P.dynamic_update_slice(x, u, (i, j)),
                P.dynamic_slice(x, (i, np.int64(0)), (1, x.shape[1])) * 3.0)
    x = uniform((4, 5), F64)
    u = uniform((2, 3), F64)
    sets = [(x, np.int64(1), np.int32(2), u), (x, np.int64(-3), np.int32(9), u),
            (noncontig(x), np.int64(3), np.int32(1), u),
            (x.astype(F32), np.int64(2), np.int32(0), u.astype(F32))]
    check("dynamic_slice", fn, sets)
    check("dynamic_update_slice", fn, sets)


# ---------------------------------------------------------------------------------
# linear algebra
# ---------------------------------------------------------------------------------

def _spd(n, batch=(), seed=0):
    a = np.random.default_rng(seed).normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_cholesky_solve_slogdet_eigh():
    def fn(a, b, c):
        return (P.cholesky_p.bind(a), P.solve_p.bind(a, b), P.slogdet_p.bind(a),
                P.slogdet_p.bind(c), P.eigh_p.bind(a)[0], P.cholesky_p.bind(c))
    a = _spd(3, (2,))
    a[0, 0, 2] = 100.0                      # upper triangle is ignored by cholesky/eigh
    b = uniform((2, 3, 2), F64)
    c = _spd(4)
    bad = -np.eye(3)[None].repeat(2, 0)     # not positive definite: cholesky -> nan
    sets = [(a, b, c), (bad, b, np.zeros((4, 4))), (_spd(2, (1,)), b[:1, :2], c[:1, :1])]
    for name in ("cholesky", "solve", "slogdet", "eigh"):
        with np.errstate(all="ignore"):
            check(name, fn, sets, rtol=1e-9, atol=1e-9)
    check("cholesky", fn, [tuple(v.astype(F32) for v in sets[0])], rtol=1e-4, atol=1e-5)


def test_eigh_vectors():
    a = _spd(4, seed=3)
    w, v = assert_compiled(ad.jit(lambda a: tuple(P.eigh_p.bind(a))), a)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, a, rtol=1e-10, atol=1e-10)


def test_triangular_solve():
    def fn(a, b, c):
        outs = []
        for left in (True, False):
            for lower in (True, False):
                for trans in (True, False):
                    for unit in (False, True):
                        outs.append(P.triangular_solve(a, b if left else c, left_side=left,
                                                       lower=lower, transpose_a=trans,
                                                       unit_diagonal=unit))
        return outs
    a = _spd(3, (2,)) + uniform((2, 3, 3), F64)
    check("triangular_solve", fn, [(a, uniform((2, 3, 2), F64), uniform((2, 4, 3), F64)),
                                   (a[:1], uniform((1, 3, 1), F64), uniform((1, 1, 3), F64))],
          rtol=1e-9, atol=1e-10)
    check("triangular_solve", fn, [(a.astype(F32), uniform((2, 3, 2), F32),
                                    uniform((2, 4, 3), F32))], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------
# call-like primitives (inlined before lowering)
# ---------------------------------------------------------------------------------

@ad.custom_jvp
def _softplus(x):
    return anp.log1p(anp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * P.logistic_p.bind(x)


@ad.custom_vjp
def _clip_grad(x):
    return anp.sin(x)


_clip_grad.defvjp(lambda x: (anp.sin(x), anp.cos(x)), lambda c, g: (anp.clip(g * c, -0.5, 0.5),))


def test_custom_jvp_call():
    check("custom_jvp_call", lambda x: (_softplus(x), ad.grad(lambda y: anp.sum(_softplus(y)))(x)),
          [(uniform((5,), F64),), (uniform((0,), F64),)])


def test_custom_vjp_call():
    check("custom_vjp_call",
          lambda x: (_clip_grad(x), ad.grad(lambda y: anp.sum(_clip_grad(y)))(x)),
          [(uniform((5,), F64),), (uniform((2,), F64),)])


def test_linear_solve():
    # a solve, its gradient (the transposed solve) and a second reverse pass, compiled
    def solve(m, b):
        return ad.lax.custom_linear_solve(
            lambda v: m @ v, b, lambda mv, r: anp.linalg.solve(m, r),
            transpose_solve=lambda vm, r: anp.linalg.solve(m.T, r))

    def fn(m, b):
        loss = lambda m, b: anp.sum(anp.sin(solve(m, b)))
        return (solve(m, b), ad.grad(loss, (0, 1))(m, b),
                ad.jacrev(ad.grad(loss, 1))(m, b))
    m = np.eye(3) * 3.0 + 0.3 * uniform((3, 3), F64)
    check("linear_solve", fn, [(m, uniform((3,), F64, seed=2))], rtol=1e-9, atol=1e-10)


def test_custom_lin():
    def fn(x, t):
        return ad.jvp(_clip_grad, (x,), (t,))
    check("custom_lin", fn, [(uniform((4,), F64), uniform((4,), F64, seed=1))])


def test_remat_and_name():
    def f(x):
        h = ad.checkpoint(lambda y: anp.sin(ad.checkpoint_name(y * 2.0, "h")) ** 2)(x)
        return anp.sum(h * x)
    fn = lambda x: (f(x), ad.grad(f)(x))      # noqa: E731
    sets = [(uniform((5,), F64),), (uniform((0,), F64),), (noncontig(uniform((3,), F64)),)]
    check("remat", fn, sets)
    check("name", fn, sets)


# ---------------------------------------------------------------------------------
# control flow (present once autodiff.lax defines it)
# ---------------------------------------------------------------------------------

def test_control_flow():
    from autodiff import lax
    x = uniform((4,), F64)
    check("cond", lambda x, p: lax.cond(p > 0, lambda v: anp.sin(v), lambda v: v * 2.0, x),
          [(x, np.float64(1.0)), (x, np.float64(-1.0))])
    check("while", lambda x: lax.while_loop(lambda c: c[0] < 5,
                                            lambda c: (c[0] + 1, c[1] * 1.5), (0, x)),
          [(x,)])
    check("scan", lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x), [(x,), (x[:0],)])


# ---------------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------------

#: the primitives with a lowering case: each row's ``jit=`` flag (tests/op_records/) is the
#: generic elementwise case above, the test of this file with its cases, or where else they
#: are
TESTED = {n for n, r in ROWS.items() if r.jit}


@pytest.mark.parametrize("name", sorted(primitives))
def test_registry_has_lowering_and_case(name):
    prim = primitives[name]
    assert numba_cpu.can_lower(prim), f"no cpu lowering for primitive {name!r}"
    assert name in TESTED, f"primitive {name!r} has a lowering but no test case here"


def test_known_gaps_is_empty():
    assert numba_cpu.KNOWN_GAPS == frozenset()


def test_unknown_primitive_raises_unsupported():
    from autodiff.core import Primitive, ShapedArray, Var, Eqn
    p = Primitive.__new__(Primitive)
    p.name, p.multiple_results, p.call_like = "frobnicate", False, False
    a = Var(ShapedArray((3,), F64))
    b = Var(ShapedArray((3,), F64))
    j = Jaxpr((), [a], [b], [Eqn(p, [a], [b], {})])
    with pytest.raises(ad.errors.UnsupportedError, match="frobnicate"):
        numba_cpu.lower(ClosedJaxpr(j, []))


# ---------------------------------------------------------------------------------
# the interpreter fallback is one explicit decision: no kernel for a dtype
# ---------------------------------------------------------------------------------

def test_dtype_without_kernel_runs_interpreted_logged_once(caplog):
    jf = ad.jit(lambda x: anp.abs(x) * 2.0 - 1.0)
    x16 = np.linspace(-1, 1, 5).astype(np.float16)
    with caplog.at_level("WARNING", logger="autodiff.jit"):
        got = jf(x16)
        jf(x16[:3])                              # a second signature: no second log line
    np.testing.assert_array_equal(got, np.abs(x16) * np.float16(2.0) - np.float16(1.0))
    assert got.dtype == np.float16
    logs = [r.getMessage() for r in caplog.records if "float16" in r.getMessage()]
    assert len(logs) == 1 and "numpy interpreter" in logs[0], logs
    entry = jf._entry_for(x16)
    assert entry.state == "interpreted" and entry.kernel is None
    assert "dtype float16" in entry.reason
    with pytest.raises(AssertionError, match="interpreted.*float16"):
        assert_compiled(jf, x16)                 # the helper catches the fallback
    assert_compiled(jf, x16.astype(F32))         # the same function compiles for float32


def test_other_lowering_errors_are_raised_not_interpreted():
    from autodiff.core import Primitive
    p = Primitive.__new__(Primitive)            # unregistered: no lowering anywhere
    p.name, p.multiple_results, p.call_like = "frobnicate_jit", False, False
    p.impl = lambda x: x + 1.0
    p.abstract_eval = lambda a: a
    jf = ad.jit(lambda x: p.bind(x) * 2.0)
    with pytest.raises(ad.errors.UnsupportedError, match="frobnicate_jit") as info:
        jf(np.ones(3))
    assert not isinstance(info.value, ad.errors.UnsupportedDTypeError)
    assert jf.cache_info().size == 0            # nothing was cached as interpreted
