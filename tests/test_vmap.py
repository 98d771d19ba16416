"""vmap: every primitive's batching rule against a Python loop over the batch, and the API.

The registry test takes every op record of ``tests/op_records/`` (the table the
primitive and jit-lowering tests share), draws one example of its operands per batch
element, batches each subset of the operands along every axis position (unbatched
operands mixed in), and checks ``vmap`` against stacking the primitive's ``impl``
applied to each example. A registered primitive without records, or one with operands
but no batch rule, fails. Call-like primitives are also batched as the public API emits
them (``FUNCTION_CASES``).
"""
import itertools
import zlib

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import core
from autodiff import primitives as P
from autodiff.errors import ShapeError
from autodiff.backends.interpreter import run_closed
from autodiff.core import typecheck_jaxpr

from op_records import RECORDS, record_params

B = 3          # batch size used by the registry test
F64 = np.float64

# ---------------------------------------------------------------------------
# operands of the function cases: each returns one example's operand (fresh random values)
# ---------------------------------------------------------------------------


def f64(*shape, lo=-2.0, hi=2.0):
    return lambda r: r.uniform(lo, hi, shape)


class Case:
    """A use of a call-like primitive through the public API that emits it (``fn``), with
    a generator per operand; the op records of ``tests/op_records/`` bind the primitive
    itself."""

    def __init__(self, gens, fn, id=""):
        self.gens, self.fn, self.id = gens, fn, id


def _custom_jvp_fn():
    @ad.custom_jvp
    def softplus(x, y):
        return anp.log1p(anp.exp(x)) * y

    @softplus.defjvp
    def _(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return softplus(x, y), tx * ad.nn.sigmoid(x) * y + ty * anp.log1p(anp.exp(x))
    return softplus


def _custom_vjp_fn():
    @ad.custom_vjp
    def f(x, y):
        return anp.sin(x) * y

    def fwd(x, y):
        return f(x, y), (x, y)

    def bwd(res, g):
        x, y = res
        return g * anp.cos(x) * y, g * anp.sin(x)
    f.defvjp(fwd, bwd)
    return f


_softplus = _custom_jvp_fn()
_sin_mul = _custom_vjp_fn()


def _host_sin_mul(method):
    @ad.custom_jvp
    def f(x, y):
        return ad.pure_callback(lambda a, b: np.sin(a) * b,
                                ad.ShapeDtypeStruct(np.shape(x), np.result_type(x)), x, y,
                                vmap_method=method)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), tx * anp.cos(x) * y + ty * anp.sin(x)
    return f


def _function_cases():
    c = {}
    c["custom_jvp_call"] = [Case([f64(3), f64(3)], _softplus)]
    c["custom_vjp_call"] = [Case([f64(3), f64(3)], _sin_mul)]
    c["custom_lin"] = [Case([f64(3), f64(3), f64(3)],
                            lambda x, y, t: ad.jvp(lambda a: _sin_mul(a, y), (x,), (t,))[1])]
    # host code, batched by each vmap_method (one call per element, or one call); a
    # custom_jvp gives it the derivatives (both modes) the derivative tests need
    c["pure_callback"] = [Case([f64(3), f64(3)], _host_sin_mul(m), id=m)
                          for m in ("sequential", "expand_dims", "broadcast_all")]
    # one call per batch element (tests/test_debug_callback.py counts them)
    c["debug_callback"] = [Case([f64(3)], lambda x: (ad.debug.callback(lambda v: None, x),
                                                      anp.sin(x))[1])]
    return c


FUNCTION_CASES = _function_cases()

# ---------------------------------------------------------------------------
# the loop oracle
# ---------------------------------------------------------------------------


def _configs(ranks, rng, is_float, limit=48):
    """(batched mask, in_axes) pairs: every non-empty subset of operands at every axis
    position (at most ``limit`` sampled positions per subset), always including each float
    operand alone at axis 0, all operands at axis 0, and all operands at their last axis
    position (a non-zero in_axis for every operand of rank >= 1)."""
    n = len(ranks)
    out = [(tuple(j == i for j in range(n)), tuple(0 if j == i else None for j in range(n)))
           for i in range(n) if is_float[i]]
    out += [((True,) * n, (0,) * n), ((True,) * n, tuple(ranks))]
    for mask in itertools.product([False, True], repeat=n):
        if not any(mask):
            continue
        choices = [range(r + 1) if m else [None] for r, m in zip(ranks, mask)]
        combos = list(itertools.product(*choices))
        if len(combos) > limit:
            idx = rng.choice(len(combos), limit, replace=False)
            combos = [combos[i] for i in sorted(idx)]
        out.extend((mask, c) for c in combos)
    return list(dict.fromkeys(out))


def _stack_outputs(outs, multiple):
    if multiple:
        return [np.stack([o[i] for o in outs]) for i in range(len(outs[0]))]
    return np.stack(outs)


def _assert_close(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _record_fn(prim, record):
    params = record.params(F64)
    return (lambda *ops: prim.bind(*ops, **params)), (lambda *ops: prim.impl(*ops, **params))


def _record_cases():
    """(name, record) of every op record with operands (nullary ones are never batched)."""
    for name, i in record_params():
        if RECORDS[name][i].args:
            yield pytest.param(name, RECORDS[name][i], id=f"{name}-{i}")


def _function_case_params():
    for name in sorted(FUNCTION_CASES):
        for i, case in enumerate(FUNCTION_CASES[name]):
            yield pytest.param(name, case, id=f"{name}-fn-{case.id or i}")


def test_registry_covered():
    """Every registered primitive has op records, and (if it has operands) a batch rule."""
    missing = sorted(set(core.primitives) - set(RECORDS))
    assert not missing, f"primitives without records in tests/op_records/: {missing}"
    no_rule = sorted(n for n, p in core.primitives.items()
                     if p.batch is None and any(r.args for r in RECORDS[n]))
    assert not no_rule, f"primitives without a batch rule: {no_rule}"
    nullary = sorted(n for n in RECORDS if not any(r.args for r in RECORDS[n]))
    assert nullary == ["iota"], f"only nullary primitives may have no operands: {nullary}"


def _check_batching(name, fn, loop_fn, samples, multiple, rng):
    """vmap(fn) at every configuration against stacking ``loop_fn`` over the examples."""
    ranks = [np.ndim(s) for s in samples[0]]
    is_float = [np.asarray(s).dtype.kind in "fc" for s in samples[0]]
    checked_abstract = set()
    for mask, axes in _configs(ranks, rng, is_float):
        expected = []
        for b in range(B):
            ops = [samples[b][i] if m else samples[0][i] for i, m in enumerate(mask)]
            out = loop_fn(*ops)
            expected.append([np.asarray(o) for o in out] if multiple else np.asarray(out))
        want = _stack_outputs(expected, True) if multiple else [_stack_outputs(expected, False)]
        batched_ops = [np.stack([samples[b][i] for b in range(B)], axis=ax) if m
                       else samples[0][i] for i, (m, ax) in enumerate(zip(mask, axes))]
        what = f"{name} batched={mask} in_axes={axes}"
        got = ad.vmap(fn, in_axes=tuple(axes))(*batched_ops)
        got = list(got) if multiple else [got]
        assert len(got) == len(want), what
        for g, w in zip(got, want):
            _assert_close(g, w, what)
        if mask not in checked_abstract:
            # the abstract path, once per batched subset (negative in_axes): the batched
            # program typechecks and the interpreter agrees
            checked_abstract.add(mask)
            neg = tuple(ax - (r + 1) if m else None for m, ax, r in zip(mask, axes, ranks))
            closed = ad.make_jaxpr(ad.vmap(fn, in_axes=neg))(*batched_ops)
            typecheck_jaxpr(closed.jaxpr)
            for g, w in zip(run_closed(closed, list(batched_ops)), want):
                _assert_close(g, w, what + " (interpreted)")


@pytest.mark.parametrize("name,record", list(_record_cases()))
def test_batch_rule_matches_loop(name, record):
    """Each op record, batched over a new axis of each subset of its operands (each float
    operand alone, all together, at axis 0 and at non-zero and negative in_axes), against
    a Python loop of the primitive's ``impl``: float64 and complex128, rtol 1e-9 (atol
    1e-12); integer and boolean results exactly."""
    prim = core.primitives[name]
    fn, loop_fn = _record_fn(prim, record)
    rng = np.random.default_rng(zlib.crc32(f"{name}-{RECORDS[name].index(record)}".encode()))
    samples = [record.make(rng, F64) for _ in range(B)]
    _check_batching(name, fn, loop_fn, samples, prim.multiple_results, rng)


@pytest.mark.parametrize("name,case", list(_function_case_params()))
def test_batch_rule_of_api_use_matches_loop(name, case):
    """A call-like primitive as the public API emits it, batched, against a Python loop."""
    rng = np.random.default_rng(zlib.crc32((name + case.id).encode()))
    samples = [[g(rng) for g in case.gens] for _ in range(B)]
    jaxpr = ad.make_jaxpr(case.fn)(*samples[0])
    assert _uses(jaxpr.jaxpr, name), f"case for {name} does not emit it:\n{jaxpr}"
    multiple = isinstance(case.fn(*samples[0]), (list, tuple))
    _check_batching(name, case.fn, case.fn, samples, multiple, rng)


def _uses(jaxpr, name):
    for e in jaxpr.eqns:
        if e.primitive.name == name:
            return True
        for v in e.params.values():
            inner = getattr(v, "jaxpr", v)
            if isinstance(inner, core.Jaxpr) and _uses(inner, name):
                return True
    return False


# ---------------------------------------------------------------------------
# numpy-level functions: vmap against a Python loop
# ---------------------------------------------------------------------------

NUMPY_FUNS = {
    "indexing": lambda x, y: x[1:, ::2] * y[0] + x[[0, 2, 0]].sum(0)[:2],
    "int_array_index": lambda x, y: x[np.array([2, 0]), 1] + y[np.array([1, 1])],
    "at_set": lambda x, y: anp.at(x)[0, :2].set(y[:2]).sum(1),
    "at_add": lambda x, y: anp.at(x)[np.array([0, 0, 2])].add(1.0) * y[0],
    "einsum": lambda x, y: anp.einsum("ij,j->i", x[:, :3], y[:3]),
    "matmul": lambda x, y: x @ x.T @ y[:3],
    "outer_tensordot": lambda x, y: anp.tensordot(x, anp.outer(y[:4], y[:2]), axes=([1], [0])),
    "where": lambda x, y: anp.where(x > 0, x, y[0] * x),
    "softmax": lambda x, y: ad.nn.softmax(x, axis=-1) * y[:4],
    "logsumexp": lambda x, y: anp.logsumexp(x, axis=0) + y[:4],
    "cumsum_sort": lambda x, y: anp.cumsum(anp.sort(x, axis=1), axis=0) - y[:4],
    "concat_stack": lambda x, y: anp.concatenate([x.ravel(), y]) + anp.stack([y, y]).sum(),
    "reductions": lambda x, y: anp.stack([x.max(), x.min(axis=0).sum(), anp.prod(y[:3]),
                                          anp.argmax(x).astype(float), x.mean(), x.std()]),
    "reshape_transpose": lambda x, y: anp.moveaxis(x.reshape(2, 2, 3), 0, -1) * y[0],
    "broadcasting": lambda x, y: x[:, None, :] * y[:3, None, None] + x,
    "clip_abs_pow": lambda x, y: anp.clip(x, -0.5, y[0]) ** 2 + anp.abs(x) ** 1.5,
    "linalg": lambda x, y: anp.linalg.solve(x[:3, :3] @ x[:3, :3].T + 3 * np.eye(3), y[:3]),
    "det_inv": lambda x, y: anp.linalg.det(x[:3, :3] + 2 * np.eye(3)) * anp.linalg.inv(
        x[:3, :3] + 2 * np.eye(3)),
}


@pytest.mark.parametrize("name", sorted(NUMPY_FUNS))
def test_numpy_functions_match_loop(name, rng):
    f = NUMPY_FUNS[name]
    xs, ys = rng.normal(size=(4, 3, 4)), rng.normal(size=(4, 5))
    want = np.stack([np.asarray(f(xs[i], ys[i])) for i in range(4)])
    np.testing.assert_allclose(ad.vmap(f)(xs, ys), want, rtol=1e-10, atol=1e-12)
    # the second argument unbatched, the first mapped over its last axis
    want = np.stack([np.asarray(f(xs[i], ys[0])) for i in range(4)])
    got = ad.vmap(f, in_axes=(-1, None))(np.moveaxis(xs, 0, -1), ys[0])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------
# the vmap API
# ---------------------------------------------------------------------------

def test_in_axes_forms(rng):
    x = rng.normal(size=(3, 4))
    np.testing.assert_allclose(ad.vmap(anp.sum)(x), x.sum(1))
    np.testing.assert_allclose(ad.vmap(anp.sum, in_axes=1)(x), x.sum(0))
    np.testing.assert_allclose(ad.vmap(anp.sum, in_axes=-1)(x), x.sum(0))
    np.testing.assert_allclose(ad.vmap(anp.sum, in_axes=-2)(x), x.sum(1))
    np.testing.assert_allclose(ad.vmap(lambda a, b: a * b, in_axes=(0, None))(x, x[0]), x * x[0])
    np.testing.assert_allclose(ad.vmap(lambda a, b: a * b, in_axes=[1, None])(x, x[:, 0]),
                               (x * x[:, :1]).T)
    # pytree prefixes: a dict argument with per-leaf axes, a tuple argument with one axis
    p = {"w": rng.normal(size=(4, 3)), "b": rng.normal(size=2)}
    out = ad.vmap(lambda p, t: p["w"] * p["b"][0] + t[0] * t[1],
                  in_axes=({"w": 1, "b": None}, 0))(p, (x, 2 * x))
    want = p["w"].T * p["b"][0] + 2 * x * x
    np.testing.assert_allclose(out, want)


def test_out_axes_forms(rng):
    x = rng.normal(size=(3, 4))
    np.testing.assert_allclose(ad.vmap(lambda a: a * 2, out_axes=1)(x), (2 * x).T)
    np.testing.assert_allclose(ad.vmap(lambda a: a * 2, out_axes=-1)(x), (2 * x).T)
    a, b = ad.vmap(lambda a: (a, a.sum()), out_axes=(1, 0))(x)
    np.testing.assert_allclose(a, x.T)
    np.testing.assert_allclose(b, x.sum(1))
    d = ad.vmap(lambda a: {"p": a, "q": [a.sum(), 2.0]}, out_axes={"p": -1, "q": [0, None]})(x)
    np.testing.assert_allclose(d["p"], x.T)
    np.testing.assert_allclose(d["q"][0], x.sum(1))
    assert d["q"][1] == 2.0 and isinstance(d["q"][1], np.float64)
    # an unbatched output is broadcast for an int out_axes
    np.testing.assert_allclose(ad.vmap(lambda a: np.ones(2), out_axes=1)(x), np.ones((2, 3)))


def test_results_on_concrete_inputs_are_numpy(rng):
    x = rng.normal(size=(3, 2))
    out = ad.vmap(lambda a: (a.sum(), {"k": a}, a > 0))(x)
    assert type(out[0]) is np.ndarray and type(out[1]["k"]) is np.ndarray
    assert out[2].dtype == np.bool_


def test_axis_size_and_unmapped_arguments_pass_through(rng):
    out = ad.vmap(lambda s: s * np.ones(2), in_axes=None, axis_size=3)(2.0)
    np.testing.assert_array_equal(out, 2 * np.ones((3, 2)))
    np.testing.assert_array_equal(ad.vmap(lambda: np.float64(1.5), axis_size=2)(), [1.5, 1.5])

    def f(x, n, mode):
        # unmapped arguments arrive as given: Python control flow on them works
        for _ in range(int(n)):
            x = x * 2.0 if mode == "double" else x + 1.0
        return x
    x = rng.normal(size=(4, 2))
    np.testing.assert_allclose(ad.vmap(f, in_axes=(0, None, None))(x, 3, "double"), 8 * x)
    # weak Python scalars keep float32 arrays float32
    x32 = x.astype(np.float32)
    assert ad.vmap(lambda a, s: a * s, in_axes=(0, None))(x32, 2.0).dtype == np.float32
    # keyword arguments pass through unmapped
    np.testing.assert_allclose(ad.vmap(lambda a, k=1.0: a * k)(x, k=3.0), 3 * x)


def test_unmapped_array_indexed_by_a_mapped_index(rng):
    # an embedding-style lookup: the table is unmapped, the index mapped
    table, idx = rng.normal(size=(5, 3)), np.array([4, 0, 2, 4])
    got = ad.vmap(lambda t, i: t[i, 1:] * 2.0, in_axes=(None, 0))(table, idx)
    np.testing.assert_array_equal(got, table[idx, 1:] * 2.0)
    g = ad.grad(lambda t: anp.sum(ad.vmap(lambda t, i: t[i], in_axes=(None, 0))(t, idx)))(table)
    np.testing.assert_array_equal(g, np.bincount(idx, minlength=5)[:, None] * np.ones(3))


def test_nested_vmap(rng):
    x, y = rng.normal(size=(3, 5)), rng.normal(size=(4, 5))
    # all pairwise dot products: the inner vmap over y, the outer over x
    pair = ad.vmap(ad.vmap(anp.dot, in_axes=(None, 0)), in_axes=(0, None))(x, y)
    np.testing.assert_allclose(pair, x @ y.T, rtol=1e-12)
    # both batch axes of one argument, the outer one not leading
    z = rng.normal(size=(5, 3, 4))
    out = ad.vmap(ad.vmap(lambda v: anp.sum(v * v), in_axes=1), in_axes=1)(z)
    np.testing.assert_allclose(out, np.einsum("kij,kij->ij", z, z))
    out = ad.vmap(ad.vmap(lambda a, b: a @ b, in_axes=(0, None)), in_axes=(None, 1))(x, y.T)
    np.testing.assert_allclose(out, y @ x.T, rtol=1e-12)


def _mlp_loss(params, x, y):
    (W1, b1), (W2, b2) = params
    h = anp.tanh(x @ W1 + b1)
    return anp.sum((h @ W2 + b2 - y) ** 2)


def test_per_example_gradients_and_grad_of_vmap(rng):
    params = [(rng.normal(size=(3, 5)), rng.normal(size=5)), (rng.normal(size=(5, 2)), np.zeros(2))]
    xs, ys = rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    per = ad.vmap(ad.grad(_mlp_loss), in_axes=(None, 0, 0))(params, xs, ys)
    for i in range(6):
        gi = ad.grad(_mlp_loss)(params, xs[i], ys[i])
        for a, b in zip(ad.tree_util.tree_leaves(per), ad.tree_util.tree_leaves(gi)):
            np.testing.assert_allclose(a[i], b, rtol=1e-11, atol=1e-13)
    # grad of vmap: the gradient of the summed per-example losses is the summed gradients
    total = ad.grad(lambda p: anp.sum(ad.vmap(_mlp_loss, in_axes=(None, 0, 0))(p, xs, ys)))(params)
    for a, b in zip(ad.tree_util.tree_leaves(total), ad.tree_util.tree_leaves(per)):
        np.testing.assert_allclose(a, b.sum(0), rtol=1e-11, atol=1e-12)
    # the batched program is matmuls over the batch, not a loop: equation count is batch-independent
    f = ad.vmap(ad.grad(_mlp_loss), in_axes=(None, 0, 0))
    n6 = len(ad.make_jaxpr(f)(params, xs, ys).eqns)
    n60 = len(ad.make_jaxpr(f)(params, np.ones((60, 3)), np.ones((60, 2))).eqns)
    assert n6 == n60


def test_batched_dot_general_is_one_batched_matmul(rng):
    a, b = rng.normal(size=(7, 3, 4)), rng.normal(size=(7, 4, 2))
    jaxpr = ad.make_jaxpr(ad.vmap(lambda a, b: a @ b))(a, b)
    dots = [e for e in jaxpr.eqns if e.primitive.name == "dot_general"]
    assert len(dots) == 1 and len(jaxpr.eqns) <= 3
    (_, _), (xb, yb) = dots[0].params["dimension_numbers"]
    assert len(xb) == len(yb) == 1
    np.testing.assert_allclose(ad.vmap(lambda a, b: a @ b)(a, b), a @ b, rtol=1e-12)


def test_batched_predicate_in_select(rng):
    x = rng.normal(size=(4, 3))
    pred = x > 0
    out = ad.vmap(lambda p, a, b: anp.where(p, a, b), in_axes=(0, None, None))(pred, x[0], -x[0])
    np.testing.assert_allclose(out, np.where(pred, x[0], -x[0]))
    out = ad.vmap(lambda p: anp.where(p, 1.0, 0.0))(pred)
    np.testing.assert_array_equal(out, pred.astype(float))


def test_vmap_of_jvp_and_vjp(rng):
    x, t = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    f = lambda v: anp.sin(v) * anp.sum(v)
    outs, touts = ad.vmap(lambda x, t: ad.jvp(f, (x,), (t,)))(x, t)
    for i in range(5):
        o, to = ad.jvp(f, (x[i],), (t[i],))
        np.testing.assert_allclose(outs[i], o)
        np.testing.assert_allclose(touts[i], to, rtol=1e-12)
    cts = ad.vmap(lambda x, c: ad.vjp(f, x)[1](c)[0])(x, t)
    for i in range(5):
        np.testing.assert_allclose(cts[i], ad.vjp(f, x[i])[1](t[i])[0], rtol=1e-12)


def test_custom_derivatives_under_vmap(rng):
    x, y = rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (4, 3))
    # custom_jvp: grad of vmap and vmap of grad use the user's rule
    f = lambda a, b: anp.sum(_softplus(a, b))
    g1 = ad.grad(lambda a: anp.sum(ad.vmap(_softplus)(a, y)))(x)
    g2 = ad.vmap(ad.grad(f))(x, y)
    want = y / (1 + np.exp(-x))
    np.testing.assert_allclose(g1, want, rtol=1e-12)
    np.testing.assert_allclose(g2, want, rtol=1e-12)
    # custom_vjp: the batched function's cotangents come from the user's bwd under vmap,
    # including an unbatched argument whose cotangent sums over the batch
    h = lambda a, b: anp.sum(_sin_mul(a, b))
    ga, gb = ad.grad(lambda a, b: anp.sum(ad.vmap(_sin_mul, in_axes=(0, None))(a, b)),
                     argnums=(0, 1))(x, y[0])
    np.testing.assert_allclose(ga, np.cos(x) * y[0], rtol=1e-12)
    np.testing.assert_allclose(gb, np.sin(x).sum(0), rtol=1e-12)
    np.testing.assert_allclose(ad.vmap(ad.grad(h))(x, y), np.cos(x) * y, rtol=1e-12)


def test_batched_custom_lin_transposes_with_the_users_bwd(rng):
    # vmap of a custom_vjp function's jvp gives a batched custom_lin; transposing that
    # linear program must run the user's bwd under vmap
    from autodiff.transforms.transpose import transpose_jaxpr
    x, ts, cts = rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    y = rng.normal(size=3)
    lin = lambda t: ad.vmap(lambda t: ad.jvp(lambda a: _sin_mul(a, y), (x,), (t,))[1])(t)
    closed = ad.make_jaxpr(lin)(ts)
    assert any(e.primitive.name == "custom_lin" for e in closed.eqns)
    tj = transpose_jaxpr(closed, [True])
    (ct_t,) = run_closed(tj, [cts])
    np.testing.assert_allclose(ct_t, cts * np.cos(x) * y, rtol=1e-12)
    np.testing.assert_allclose(lin(ts), ts * np.cos(x) * y, rtol=1e-12)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

def test_mismatched_axis_sizes_name_the_sizes():
    with pytest.raises(ShapeError, match=r"(?s)size 3: axis 0 of argument a .*size 4: axis 0 of "
                                         r"argument b ") as e:
        ad.vmap(lambda a, b: a + b)(np.ones((3, 2)), np.ones((4, 2)))
    assert "test_vmap.py" in str(e.value)            # the user's line
    with pytest.raises(ShapeError, match="axis_size=5"):
        ad.vmap(lambda a: a, axis_size=5)(np.ones(3))


def _weights_and_data(params, x, *extra):
    return params["w"] @ x


def test_mismatched_axis_sizes_name_the_arguments_like_jax():
    # JAX: "vmap got inconsistent sizes for array axes to be mapped:\n  * one axis had size
    # 3: axis 0 of argument x of type float32[3]; ..."; here with the parameter's name, the
    # path inside a pytree argument, the dtype and shape, and the axis that was mapped
    params = {"w": np.ones((3, 2, 2)), "b": np.ones(3)}
    with pytest.raises(ShapeError) as e:
        ad.vmap(_weights_and_data, in_axes=(0, 1, 0))(params, np.ones((2, 5), np.float32),
                                                      np.ones(5))
    lines = str(e.value).splitlines()
    assert lines[:3] == [
        "vmap got inconsistent sizes for array axes to be mapped:",
        "  * 2 axes had size 3: axis 0 of argument params['b'] of type float64[3], "
        "axis 0 of argument params['w'] of type float64[3,2,2];",
        "  * 2 axes had size 5: axis 1 of argument x of type float32[2,5], "
        "axis 0 of argument extra[0] of type float64[5]"]
    assert "in_axes=None" in lines[3]


def test_mismatched_axis_sizes_without_a_signature():
    # a callable whose signature cannot be read: arguments by position, args[i]
    class Opaque:
        __signature__ = "not a signature"            # inspect.signature raises TypeError

        def __call__(self, *a):
            return a[0]
    with pytest.raises(ShapeError, match=r"size 2: axis 0 of argument args\[0\] of type "
                                         r"float64\[2\];\n  \* one axis had size 3: axis 0 of "
                                         r"argument args\[1\] of type int64\[3\]"):
        ad.vmap(Opaque())(np.ones(2), np.arange(3))


def test_out_axes_none_on_a_batched_output():
    with pytest.raises(ShapeError, match="out_axes=None") as e:
        ad.vmap(lambda a: a.sum(), out_axes=None)(np.ones((3, 2)))
    assert "test_vmap.py" in str(e.value)
    with pytest.raises(ShapeError, match="output 1"):
        ad.vmap(lambda a: (1.0, a), out_axes=None)(np.ones(3))


def test_axes_out_of_range_and_malformed_specs():
    x = np.ones((3, 2))
    for bad in (2, -3):
        with pytest.raises(ShapeError, match=f"in_axes={bad} is out of range.*rank 2"):
            ad.vmap(lambda a: a, in_axes=bad)(x)
    with pytest.raises(ShapeError, match="rank 0"):
        ad.vmap(lambda a: a)(1.0)
    with pytest.raises(ShapeError, match="out_axes=3 is out of range"):
        ad.vmap(lambda a: a, out_axes=3)(x)
    with pytest.raises(ValueError, match="2 entries but the function got 1"):
        ad.vmap(lambda a: a, in_axes=(0, 0))(x)
    with pytest.raises(ValueError, match="does not match the arguments"):
        ad.vmap(lambda a: a, in_axes=({"k": 0},))(x)
    with pytest.raises(ValueError, match="does not match the outputs"):
        ad.vmap(lambda a: (a, a), out_axes=(0, 0, 0))(x)
    with pytest.raises(ValueError, match="axis_size"):
        ad.vmap(lambda a: a, in_axes=None)(x)
    with pytest.raises(TypeError, match="int or None"):
        ad.vmap(lambda a: a, in_axes=0.5)


# ---------------------------------------------------------------------------
# batched programs are differentiable: vmap commutes with jvp, and vjp is jvp's transpose
# ---------------------------------------------------------------------------

# the records' primitives without a reverse mode (an unbounded while loop, as in JAX) or
# without any derivative (opaque host code: FUNCTION_CASES give it one by custom_jvp)
FORWARD_ONLY = {"while"}
NOT_DIFFERENTIABLE = {"pure_callback"}


def _derivative_params():
    for p in _record_cases():
        name, record = p.values
        if record.float_args and name not in NOT_DIFFERENTIABLE:   # something to differentiate
            yield p
    for p in _function_case_params():
        yield p


def _as_float(x):
    """``x`` as float64, or complex128 when it is complex."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _normal_like(rng, shape, dtype):
    """Standard normal of ``dtype`` (independent real and imaginary parts when complex)."""
    x = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.normal(size=shape)
    return x.astype(dtype)


def _pair(u, v):
    # <u, v> = Re(Σ u·v), no conjugation (docs/complex.md; np.vdot would conjugate u)
    return float(np.real(np.sum(_as_float(u) * _as_float(v))))


@pytest.mark.parametrize("name,case", list(_derivative_params()))
def test_batched_program_derivatives(name, case):
    prim = core.primitives[name]
    if isinstance(case, Case):
        fn, seed = case.fn, name + case.id + "ad"
        rng = np.random.default_rng(zlib.crc32(seed.encode()))
        samples = [[g(rng) for g in case.gens] for _ in range(B)]
    else:
        fn = _record_fn(prim, case)[0]
        seed = f"{name}-{RECORDS[name].index(case)}-ad"
        rng = np.random.default_rng(zlib.crc32(seed.encode()))
        samples = [case.make(rng, F64) for _ in range(B)]
    n = len(samples[0])
    is_float = [np.asarray(s).dtype.kind in "fc" for s in samples[0]]
    fidx = [i for i in range(n) if is_float[i]]
    masks = [(True,) * n] + ([tuple(j == i for j in range(n)) for i in range(n)] if n > 1 else [])
    for mask in masks:
        ops = [np.stack([s[i] for s in samples], 0) if m else samples[0][i]
               for i, m in enumerate(mask)]
        axes = tuple(0 if m else None for m in mask)
        tans = [_normal_like(rng, np.shape(ops[i]), np.asarray(ops[i]).dtype
                             if np.asarray(ops[i]).dtype.kind == "c" else np.float64)
                for i in fidx]

        def with_floats(args, fl):
            args = list(args)
            for i, v in zip(fidx, fl):
                args[i] = v
            return args

        def g(*fl):      # the batched function of the float operands
            return ad.vmap(fn, in_axes=axes)(*with_floats(ops, fl))

        def per_example_jvp(*a):
            args, ts = a[:n], a[n:]
            return ad.jvp(lambda *fl: fn(*with_floats(args, fl)),
                          tuple(args[i] for i in fidx), tuple(ts))
        fl = [ops[i] for i in fidx]
        # jvp of vmap == vmap of jvp
        out, t1 = ad.jvp(g, tuple(fl), tuple(tans))
        _, t2 = ad.vmap(per_example_jvp, in_axes=axes + tuple(axes[i] for i in fidx))(*ops, *tans)
        for a, b in zip(ad.tree_util.tree_leaves(t1), ad.tree_util.tree_leaves(t2)):
            np.testing.assert_allclose(_as_float(a), _as_float(b), rtol=1e-9, atol=1e-10)
        if name in FORWARD_ONLY and not isinstance(case, Case):
            continue
        # <ct, J t> == <J^T ct, t> for the batched function
        cts = ad.tree_util.tree_map(lambda o: _normal_like(
            rng, np.shape(o), np.asarray(o).dtype) if np.asarray(o).dtype.kind in "fc" else
            np.zeros(np.shape(o), np.asarray(o).dtype), out)
        back = ad.vjp(g, *fl)[1](cts)
        lhs = sum(_pair(c, t) for c, t in
                  zip(ad.tree_util.tree_leaves(cts), ad.tree_util.tree_leaves(t1)))
        rhs = sum(_pair(b, t) for b, t in zip(back, tans))
        tol = 1e-5 if any(np.asarray(o).dtype in (np.float32, np.complex64) for o in
                          ad.tree_util.tree_leaves(out)) else 1e-9
        np.testing.assert_allclose(lhs, rhs, rtol=tol, atol=tol, err_msg=f"mask={mask}")


def test_python_control_flow_on_a_mapped_value_explains_the_fix():
    from autodiff.errors import ConcretizationError

    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(ConcretizationError, match="Inside vmap.*anp.where") as e:
        ad.vmap(f)(np.ones((3, 2)))
    assert "test_vmap.py" in str(e.value) and str(e.value).count("Inside vmap") == 1
    with pytest.raises(ConcretizationError) as e:
        ad.vmap(ad.vmap(f))(np.ones((2, 3, 2)))
    assert str(e.value).count("Inside vmap") == 1


def test_shared_matrix_is_factored_once(rng):
    # a batch of right-hand sides against one matrix folds the batch into b's columns:
    # the batched program's solve still takes the unbatched (n, n) matrix
    A = rng.normal(size=(4, 4)) + 4 * np.eye(4)
    bs = rng.normal(size=(6, 4))
    for f in (lambda b: anp.linalg.solve(A, b),
              lambda b: P.triangular_solve(A, b[:, None], left_side=True, lower=True)[:, 0],
              lambda b: P.triangular_solve(A, b[None, :], left_side=False, lower=False)[0]):
        jaxpr = ad.make_jaxpr(ad.vmap(f))(bs)
        solves = [e for e in jaxpr.eqns if e.primitive.name in ("solve", "triangular_solve")]
        assert len(solves) == 1 and solves[0].invars[0].aval.shape == (4, 4)
        np.testing.assert_allclose(ad.vmap(f)(bs), np.stack([f(b) for b in bs]), rtol=1e-12)


def test_batched_window_of_a_shared_operand_does_not_copy_it(rng):
    x = rng.normal(size=(50, 3))
    starts = np.array([0, 7, 47, -3])
    f = lambda i: P.dynamic_slice(x, (i, np.int64(0)), (4, 3))
    jaxpr = ad.make_jaxpr(ad.vmap(f))(starts)
    assert all(v.aval.size < 4 * x.size for e in jaxpr.eqns for v in e.outvars)
    want = np.stack([x[min(max(s, 0), 46):min(max(s, 0), 46) + 4] for s in starts])
    np.testing.assert_array_equal(ad.vmap(f)(starts), want)
