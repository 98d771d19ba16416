"""``lax.conv_general_dilated(..., batch_group_count=B)`` and ``lax.ragged_dot_general``
against direct numpy loops written from JAX/XLA's semantics, eagerly, under ``ad.jit`` and
``ad.vmap``, with derivatives against finite differences.

Batch groups (XLA, and JAX's transpose and batching rules): the lhs batch ``N`` is
``[B, N / B]`` (group-major), the output features ``O`` are ``[B, O / B]``; output feature
``o`` reads only lhs batch group ``o // (O / B)``; the output batch is ``N / B``."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax
from autodiff.check import check_grads
from autodiff.errors import UnsupportedError

RNG = np.random.default_rng(7)


# ----------------------------------------------------------------------------
# conv_general_dilated with batch groups
# ----------------------------------------------------------------------------

def _perm(spec, first, second, spatial_order):
    return (spec.index(first), spec.index(second)) + tuple(spec.index(c) for c in spatial_order)


def _pads(padding, sizes, ksz, strides, rdil):
    if not isinstance(padding, str):
        return [tuple(p) for p in padding]
    out = []
    for n, k, s, d in zip(sizes, ksz, strides, rdil):
        kd = (k - 1) * d + 1
        if padding == "VALID":
            out.append((0, 0))
        else:                                            # SAME: ceil(n / s) outputs
            total = max((-(-n // s) - 1) * s + kd - n, 0)
            out.append((total // 2, total - total // 2))
    return out


def conv_ref(x, w, strides, padding, ldil, rdil, B):
    """The loop: ``x`` N C S..., ``w`` O I K..., batch groups ``B`` (feature groups 1)."""
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    assert C == I and N % B == 0 and O % B == 0
    ksz = w.shape[2:]
    dsh = tuple((n - 1) * d + 1 for n, d in zip(x.shape[2:], ldil))
    xd = np.zeros((N, C) + dsh)
    xd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in ldil)] = x
    pads = _pads(padding, dsh, ksz, strides, rdil)
    for ax, (lo, hi) in enumerate(pads):         # negative pads crop
        widths = [(0, 0)] * xd.ndim
        widths[2 + ax] = (max(lo, 0), max(hi, 0))
        xd = np.pad(xd, widths)
        n = xd.shape[2 + ax]
        xd = np.take(xd, np.arange(max(-lo, 0), n - max(-hi, 0)), axis=2 + ax)
    osz = tuple(max((n - ((k - 1) * d + 1)) // s + 1, 0)
                for n, k, d, s in zip(xd.shape[2:], ksz, rdil, strides))
    Nb, Og = N // B, O // B
    out = np.zeros((Nb, O) + osz)
    for n in range(Nb):
        for o in range(O):
            g = o // Og
            for pos in np.ndindex(*osz):
                acc = 0.0
                for c in range(C):
                    for k in np.ndindex(*ksz):
                        idx = tuple(p * s + kk * d for p, s, kk, d in zip(pos, strides, k, rdil))
                        acc += xd[(g * Nb + n, c) + idx] * w[(o, c) + k]
                out[(n, o) + pos] = acc
    return out


# (lhs spec, rhs spec, out spec) or None for N C S... / O I S...
LAYOUTS = {
    "NCHW": ("NCHW", "OIHW", "NCHW"),
    "NHWC": ("NHWC", "HWIO", "NHWC"),
    "mixed": ("NCHW", "HWIO", "NHWC"),
    "NCW": ("NCH", "OIH", "NCH"),
    "NWC": ("NHC", "HIO", "NHC"),
}

CASES = [
    # layout, B, N/B, C, O/B, spatial, kernel, strides, padding, lhs_dilation, rhs_dilation
    ("NCHW", 2, 1, 3, 2, (5, 4), (2, 3), (1, 1), "VALID", (1, 1), (1, 1)),
    ("NCHW", 3, 2, 2, 1, (6, 5), (3, 2), (2, 1), [(1, 2), (0, 1)], (1, 1), (1, 2)),
    ("NHWC", 2, 2, 2, 2, (5, 5), (3, 3), (1, 2), "SAME", (1, 1), (1, 1)),
    ("NHWC", 2, 1, 1, 3, (4, 6), (2, 2), (2, 2), [(2, 0), (1, 1)], (2, 1), (1, 1)),
    ("mixed", 2, 2, 3, 1, (5, 4), (2, 2), (1, 1), "SAME", (1, 1), (2, 1)),
    ("NCW", 4, 1, 2, 1, (7,), (3,), (2,), "VALID", (1,), (1,)),
    ("NCW", 2, 3, 1, 2, (6,), (2,), (1,), [(-1, 2)], (2,), (2,)),
    ("NWC", 3, 1, 2, 2, (8,), (3,), (3,), "SAME", (1,), (1,)),
]


def _operands(case):
    layout, B, Nb, C, Og, sp, ks, *_ = case
    x = RNG.normal(size=(B * Nb, C) + sp)
    w = RNG.normal(size=(B * Og, C) + ks)
    lhs, rhs, out = LAYOUTS[layout]
    rs = [c for c in rhs if c not in "OI"]
    lp, rp, op = _perm(lhs, "N", "C", rs), _perm(rhs, "O", "I", rs), _perm(out, "N", "C", rs)
    # the operands in their layouts: x_l.transpose(lp) is canonical x
    x_l = np.transpose(x, np.argsort(lp))
    w_l = np.transpose(w, np.argsort(rp))
    return x, w, x_l, w_l, op


def _conv(case):
    layout, B, _, _, _, _, _, strides, padding, ldil, rdil = case
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, ldil, rdil,
                                                 LAYOUTS[layout], batch_group_count=B)


def _expected(case, x, w, op):
    layout, B, _, _, _, _, _, strides, padding, ldil, rdil = case
    return np.transpose(conv_ref(x, w, strides, padding, ldil, rdil, B), np.argsort(op))


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-B{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_batch_groups_match_the_loop_eager_and_jit(case):
    x, w, x_l, w_l, op = _operands(case)
    want = _expected(case, x, w, op)
    f = _conv(case)
    got = f(x_l, w_l)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ad.jit(f)(x_l, w_l), want, rtol=1e-12, atol=1e-12)


def test_batch_groups_with_index_dimension_numbers():
    case = CASES[1]
    x, w, _, _, op = _operands(case)
    dn = lax.conv_dimension_numbers(x.shape, w.shape, None)
    got = lax.conv_general_dilated(x, w, case[7], case[8], case[9], case[10], dn,
                                   batch_group_count=case[1])
    np.testing.assert_allclose(got, _expected(case, x, w, op), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (2, 1)])
def test_batch_groups_under_vmap(in_axes):
    case = CASES[2]                                      # NHWC, B=2, strides, SAME
    f = _conv(case)
    xs, ws, ops = zip(*[(xl, wl, op) for _, _, xl, wl, op in (_operands(case) for _ in range(3))])
    xs = [xs[0]] * 3 if in_axes[0] is None else list(xs)
    ws = [ws[0]] * 3 if in_axes[1] is None else list(ws)
    want = np.stack([f(a, b) for a, b in zip(xs, ws)])
    X = xs[0] if in_axes[0] is None else np.stack(xs, axis=in_axes[0])
    W = ws[0] if in_axes[1] is None else np.stack(ws, axis=in_axes[1])
    np.testing.assert_allclose(ad.vmap(f, in_axes=in_axes)(X, W), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ad.jit(ad.vmap(f, in_axes=in_axes))(X, W), want,
                               rtol=1e-12, atol=1e-12)
    # the loop itself for one slice, so a wrong vmap cannot agree with a wrong conv
    x0, w0 = (xs[0], ws[0])
    lhs, rhs, _ = LAYOUTS[case[0]]
    rs = [c for c in rhs if c not in "OI"]
    x_c = np.transpose(x0, _perm(lhs, "N", "C", rs))
    w_c = np.transpose(w0, _perm(rhs, "O", "I", rs))
    np.testing.assert_allclose(want[0], _expected(case, x_c, w_c, ops[0]), rtol=1e-12, atol=1e-12)


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[6]], ids=["NCHW", "NHWC", "NCW"])
def test_batch_group_gradients_match_finite_differences(case):
    x, w, x_l, w_l, op = _operands(case)
    f = _conv(case)
    cot = RNG.normal(size=f(x_l, w_l).shape)
    loss = lambda a, b: anp.sum(f(a, b) * cot)
    np_loss = lambda a, b: float(np.sum(np.asarray(f(a, b)) * cot))
    gx, gw = ad.grad(loss, argnums=(0, 1))(x_l, w_l)
    np.testing.assert_allclose(gx, _fd(lambda a: np_loss(a, w_l), x_l), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gw, _fd(lambda b: np_loss(x_l, b), w_l), rtol=1e-6, atol=1e-7)
    jx, jw = ad.jit(ad.grad(loss, argnums=(0, 1)))(x_l, w_l)
    np.testing.assert_allclose(jx, gx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jw, gw, rtol=1e-12, atol=1e-12)
    check_grads(f, (x_l, w_l), order=1, modes=("fwd", "rev"))


def _vjp_rhs_pads(in_sp, k_sp, strides, out_sp, pads, ldil, rdil):
    # JAX's _conv_general_vjp_rhs_padding, from its definition
    dil = lambda n, d: (n - 1) * d + 1 if n else 0
    res = []
    for n, k, s, o, (lo, _), ld, rd in zip(in_sp, k_sp, strides, out_sp, pads, ldil, rdil):
        hi = (dil(o, s) - dil(n, ld)) + (dil(k, rd) - lo - 1)
        res.append((lo, hi))
    return res


@pytest.mark.parametrize("G,I,J,strides,pads,rdil", [
    (3, 1, 1, (1, 1), [(0, 0), (0, 0)], (1, 1)),        # depthwise
    (2, 1, 3, (2, 1), [(1, 1), (0, 2)], (1, 2)),        # depthwise, multiplier 3
    (2, 2, 2, (1, 2), [(1, 0), (2, 1)], (2, 1)),        # grouped, 2 inputs per group
])
def test_grouped_conv_kernel_gradient_is_the_batch_group_conv(G, I, J, strides, pads, rdil):
    """grad of a feature-grouped conv w.r.t. its kernel is the batch-grouped conv of the
    input with the cotangent that JAX's transpose rule forms, and matches finite differences."""
    N, sp, ks = 2, (6, 5), (2, 3)
    x = RNG.normal(size=(N, G * I) + sp)                  # N C H W
    w = RNG.normal(size=(G * J, I) + ks)                  # O I H W
    conv = lambda a, b: lax.conv_general_dilated(a, b, strides, pads, None, rdil,
                                                 ("NCHW", "OIHW", "NCHW"), feature_group_count=G)
    y = conv(x, w)
    cot = RNG.normal(size=y.shape)
    gw = ad.grad(lambda b: anp.sum(conv(x, b) * cot))(w)
    np.testing.assert_allclose(gw, _fd(lambda b: float(np.sum(np.asarray(conv(x, b)) * cot)), w),
                               rtol=1e-6, atol=1e-7)
    # the transpose rule: lhs spec and out spec swap batch/feature, kernel is the cotangent
    tpads = _vjp_rhs_pads(sp, ks, strides, y.shape[2:], pads, (1, 1), rdil)
    formed = lax.conv_general_dilated(x, cot, rdil, tpads, None, strides,
                                      ("CNHW", "IOHW", "CNHW"), batch_group_count=G)
    # lhs batch is x's C (groups of I), rhs O is the cotangent's C, rhs I its N; the
    # output's batch (I) is dim 1 and its features (O) dim 0: the kernel's O I H W
    np.testing.assert_allclose(formed, gw, rtol=1e-10, atol=1e-10)


def test_batch_group_doc_example_by_hand():
    x = np.arange(12.0).reshape(4, 1, 3)                  # N=4, B=2: groups {0,1}, {2,3}
    w = np.array([1.0, 10.0, 100.0, 1000.0]).reshape(4, 1, 1)
    out = lax.conv_general_dilated(x, w, (1,), "VALID", batch_group_count=2)
    # features 0,1 read batch 0,1; features 2,3 read batch 2,3
    want = np.array([[x[0, 0] * 1, x[0, 0] * 10, x[2, 0] * 100, x[2, 0] * 1000],
                     [x[1, 0] * 1, x[1, 0] * 10, x[3, 0] * 100, x[3, 0] * 1000]])
    np.testing.assert_allclose(out, want)


@pytest.mark.parametrize("xs,ws,kw,match", [
    ((5, 2, 4), (4, 2, 2), dict(batch_group_count=2), "divide the lhs batch"),
    ((4, 2, 4), (3, 2, 2), dict(batch_group_count=2), "rhs output features"),
    ((4, 2, 4), (4, 1, 2), dict(batch_group_count=2, feature_group_count=2), "at most one"),
    ((4, 2, 4), (4, 2, 2), dict(batch_group_count=0), "positive"),
    ((4, 2, 4), (4, 2, 2), dict(feature_group_count=0), "positive"),
])
def test_batch_group_errors(xs, ws, kw, match):
    with pytest.raises(ValueError, match=match):
        lax.conv_general_dilated(np.ones(xs), np.ones(ws), (1,), "VALID", **kw)


# ----------------------------------------------------------------------------
# ragged_dot / ragged_dot_general
# ----------------------------------------------------------------------------

BASIC = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


def _bounds(gs):
    ends = np.cumsum(gs)
    return ends - np.asarray(gs), ends


def test_group_offset_is_unsupported_as_in_jax():
    L, R, gs = np.ones((3, 2)), np.ones((2, 2, 2)), np.array([1, 2])
    for call in (lambda: lax.ragged_dot(L, R, gs, group_offset=np.array([0])),
                 lambda: lax.ragged_dot_general(L, R, gs, BASIC, group_offset=np.array([0]))):
        with pytest.raises(UnsupportedError, match="Unimplemented group_offset support"):
            call()
    assert issubclass(UnsupportedError, NotImplementedError)      # JAX's exception type


def test_ragged_dot_general_free_dim_matches_ragged_dot_and_the_loop():
    L, R = RNG.normal(size=(7, 3)), RNG.normal(size=(3, 3, 2))
    gs = np.array([2, 0, 4])                              # 6 of 7 rows: the last is zeros
    want = np.zeros((7, 2))
    for g, (s, e) in enumerate(zip(*_bounds(gs))):
        want[s:e] = L[s:e] @ R[g]
    np.testing.assert_allclose(lax.ragged_dot_general(L, R, gs, BASIC), want, rtol=1e-12)
    np.testing.assert_allclose(lax.ragged_dot(L, R, gs), want, rtol=1e-12)
    jitted = ad.jit(lambda a, b, g: lax.ragged_dot_general(a, b, g, BASIC))
    np.testing.assert_allclose(jitted(L, R, gs), want, rtol=1e-12)


def test_ragged_dot_general_free_dim_other_layout_and_batched_group_sizes():
    # lhs [k, b, m], rhs [b, n, g, k]; ragged m (lhs dim 2), batch b, group dim 2 of rhs
    b, m, k, n, G = 2, 5, 3, 4, 2
    L, R = RNG.normal(size=(k, b, m)), RNG.normal(size=(b, n, G, k))
    gs = np.array([[2, 3], [4, 0]])                      # [b, g]
    dn = lax.RaggedDotDimensionNumbers((([0], [3]), ([1], [0])), [2], [2])
    want = np.zeros((b, m, n))
    for bi in range(b):
        for g, (s, e) in enumerate(zip(*_bounds(gs[bi]))):
            want[bi, s:e] = L[:, bi, s:e].T @ R[bi, :, g, :].T
    got = lax.ragged_dot_general(L, R, gs, dn)
    assert got.shape == (b, m, n)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_ragged_dot_general_contracting_dim():
    # lhs [m, k], rhs [k, n], ragged k: one product per group -> [g, m, n]
    L, R, gs = RNG.normal(size=(3, 6)), RNG.normal(size=(6, 2)), np.array([1, 3, 1])
    dn = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    want = np.stack([L[:, s:e] @ R[s:e] for s, e in zip(*_bounds(gs))])
    np.testing.assert_allclose(lax.ragged_dot_general(L, R, gs, dn), want, rtol=1e-12, atol=1e-12)
    # with a batch dimension and group sizes per batch: lhs [b, m, k], rhs [b, k, n]
    Lb, Rb = RNG.normal(size=(2, 3, 5)), RNG.normal(size=(2, 5, 4))
    gsb = np.array([[2, 3], [5, 0]])
    dnb = lax.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [2], [])
    wantb = np.stack([np.stack([Lb[i, :, s:e] @ Rb[i, s:e] for s, e in zip(*_bounds(gsb[i]))])
                      for i in range(2)], axis=1)                       # [g, b, m, n]
    np.testing.assert_allclose(lax.ragged_dot_general(Lb, Rb, gsb, dnb), wantb,
                               rtol=1e-12, atol=1e-12)


def test_ragged_dot_general_batch_dim_is_a_dot_general():
    L, R, gs = RNG.normal(size=(4, 2, 3)), RNG.normal(size=(4, 3, 2)), np.array([1, 3])
    dn = lax.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [0], [])
    np.testing.assert_allclose(lax.ragged_dot_general(L, R, gs, dn),
                               np.einsum("bmk,bkn->bmn", L, R), rtol=1e-12)


@pytest.mark.parametrize("mode", ["free", "contracting"])
def test_ragged_dot_general_gradients_jit_and_vmap(mode):
    if mode == "free":
        L, R, gs = RNG.normal(size=(5, 3)), RNG.normal(size=(2, 3, 2)), np.array([2, 2])
        dn = BASIC
    else:
        L, R, gs = RNG.normal(size=(2, 5)), RNG.normal(size=(5, 3)), np.array([3, 1])
        dn = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    f = lambda a, b: lax.ragged_dot_general(a, b, gs, dn)
    cot = RNG.normal(size=f(L, R).shape)
    loss = lambda a, b: anp.sum(f(a, b) * cot)
    gl, gr = ad.grad(loss, argnums=(0, 1))(L, R)
    np_loss = lambda a, b: float(np.sum(np.asarray(f(a, b)) * cot))
    np.testing.assert_allclose(gl, _fd(lambda a: np_loss(a, R), L), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gr, _fd(lambda b: np_loss(L, b), R), rtol=1e-6, atol=1e-7)
    jl, jr = ad.jit(ad.grad(loss, argnums=(0, 1)))(L, R)
    np.testing.assert_allclose(jl, gl, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jr, gr, rtol=1e-12, atol=1e-12)
    check_grads(f, (L, R), order=1, modes=("fwd", "rev"))
    Ls = np.stack([L, 2 * L, -L])
    np.testing.assert_allclose(ad.vmap(f, in_axes=(0, None))(Ls, R),
                               np.stack([f(a, R) for a in Ls]), rtol=1e-12, atol=1e-12)
    # group sizes traced under jit and vmapped
    gss = np.array([[1, 2], [4, 0], [0, 0]] if mode == "free" else [[1, 4], [5, 0], [0, 2]])
    g = lambda a, b, s: lax.ragged_dot_general(a, b, s, dn)
    np.testing.assert_allclose(ad.jit(ad.vmap(g, in_axes=(None, None, 0)))(L, R, gss),
                               np.stack([g(L, R, s) for s in gss]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("args,match", [
    (((5, 3), (2, 3, 2), np.array([2.0, 3.0]), BASIC), "integer"),
    (((5, 3), (2, 3, 2), np.array([[2, 3]]), BASIC), "group_sizes of shape"),
    (((5, 3), (3, 3, 2), np.array([2, 3]), BASIC), "rhs group dimension size"),
    (((2, 5), (5, 3), np.array([2, 3]),
      lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [0])), "zero rhs group"),
    (((5, 3), (2, 3, 2), np.array([2, 3]),
      lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0, 1], [0])), "exactly one lhs"),
    (((5, 3), (2, 3, 2), np.array([2, 3]), ((([1], [1]), ([], [])))), "RaggedDotDimensionNumbers"),
])
def test_ragged_dot_general_errors(args, match):
    ls, rs, gs, dn = args
    with pytest.raises(TypeError, match=match):
        lax.ragged_dot_general(np.ones(ls), np.ones(rs), gs, dn)
