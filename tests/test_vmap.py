"""vmap: every primitive's batching rule against a Python loop over the batch, and the API.

The registry test builds example operands for every primitive in
``autodiff.core.primitives`` (the ``CASES`` table below), batches each subset of
the operands along every axis position (unbatched operands mixed in), and checks
``vmap`` against stacking the primitive's ``impl`` applied to each example. A
primitive missing from the table, or one with operands but no batch rule, fails.
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

B = 3          # batch size used by the registry test

# ---------------------------------------------------------------------------
# operand generators: each returns one example's operand (fresh random values)
# ---------------------------------------------------------------------------


def f64(*shape, lo=-2.0, hi=2.0):
    return lambda r: r.uniform(lo, hi, shape)


def pos(*shape):
    return f64(*shape, lo=0.5, hi=2.0)


def unit(*shape):
    return f64(*shape, lo=-0.9, hi=0.9)


def boolean(*shape):
    return lambda r: r.uniform(size=shape) < 0.5


def ints(*shape, lo=-3, hi=6, dtype=np.int64):
    return lambda r: r.integers(lo, hi, shape).astype(dtype)


def scalar_int(lo, hi):
    return lambda r: np.int64(r.integers(lo, hi))


def spd(*shape):
    def g(r):
        a = r.normal(size=shape)
        return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    return g


def well_conditioned(*shape):
    return lambda r: r.normal(size=shape) + 3 * np.eye(shape[-1])


def sym(*shape):
    def g(r):
        a = r.normal(size=shape)
        return a + np.swapaxes(a, -1, -2)
    return g


def with_inf(*shape):
    def g(r):
        x = r.uniform(-2, 2, shape)
        x.flat[0] = np.inf
        return x
    return g


def const(v):
    return lambda r: np.asarray(v)


class Case:
    """A function of operands exercising ``prim`` and a generator per operand."""

    def __init__(self, gens, params=None, fn=None, id=""):
        self.gens = gens
        self.params = params or {}
        self.fn = fn
        self.id = id

    def function(self, prim):
        if self.fn is not None:
            return self.fn
        params = self.params
        return lambda *ops: prim.bind(*ops, **params)


def bind_case(*gens, id="", **params):
    return Case(list(gens), params, id=id)


UNARY_DOMAINS = {
    "log": pos, "log1p": pos, "sqrt": pos, "rsqrt": pos, "asin": unit, "acos": unit,
    "atanh": unit, "acosh": lambda *s: f64(*s, lo=1.1, hi=3.0),
}
UNARY = ["neg", "sign", "floor", "ceil", "round", "exp", "exp2", "log", "log1p", "expm1", "tanh",
         "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
         "atanh", "sqrt", "rsqrt", "cbrt", "abs", "stop_gradient"]
BINARY_FLOAT = ["add", "sub", "mul", "div", "pow", "max", "min", "atan2", "mod", "floor_divide",
                "eq", "ne", "lt", "le", "gt", "ge"]
BINARY_DOMAINS = {"div": (f64, pos), "pow": (pos, f64), "mod": (f64, pos),
                  "floor_divide": (f64, pos)}


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


def _cases():
    c = {}
    for name in UNARY:
        g = UNARY_DOMAINS.get(name, f64)
        c[name] = [bind_case(g(3, 2)), bind_case(g(), id="rank0")]
    c["is_finite"] = [bind_case(with_inf(3, 2))]
    c["not"] = [bind_case(boolean(3, 2)), bind_case(ints(4))]
    c["integer_pow"] = [bind_case(f64(3, 2), y=3), bind_case(pos(4), y=-2), bind_case(f64(3), y=0)]
    for name in BINARY_FLOAT:
        gx, gy = BINARY_DOMAINS.get(name, (f64, f64))
        c[name] = [bind_case(gx(3, 2), gy(3, 2)),
                   bind_case(gx(3, 2), gy(), id="rank0_y"),
                   bind_case(gx(), gy(4), id="rank0_x")]
    for name in ["and", "or", "xor"]:
        c[name] = [bind_case(boolean(3, 2), boolean(3, 2)), bind_case(ints(4), ints()),
                   bind_case(boolean(), boolean(2, 2), id="rank0_x")]
    c["select"] = [bind_case(boolean(3, 2), f64(3, 2), f64(3, 2)),
                   bind_case(boolean(), f64(4), f64(4), id="scalar_pred"),
                   bind_case(boolean(4), f64(), f64(4), id="scalar_true"),
                   bind_case(boolean(2, 2), f64(), f64(), id="scalar_branches")]
    c["convert_element_type"] = [bind_case(f64(3, 2), new_dtype=np.dtype(np.int32)),
                                 bind_case(f64(4), new_dtype=np.dtype(np.float32)),
                                 bind_case(ints(4), new_dtype=np.dtype(np.float64))]
    for name in ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]:
        c[name] = [bind_case(f64(3, 2, 2), axes=(1,)), bind_case(f64(3, 2), axes=(0, 1)),
                   bind_case(f64(3, 4, 2), axes=(0, 2))]
    for name in ["reduce_and", "reduce_or"]:
        c[name] = [bind_case(boolean(3, 2), axes=(0,)), bind_case(boolean(3, 2, 2), axes=(0, 2))]
    for name in ["argmax", "argmin"]:
        c[name] = [bind_case(f64(3, 4), axis=1, index_dtype=np.dtype(np.int64)),
                   bind_case(f64(3, 4), axis=0, index_dtype=np.dtype(np.int32))]
    c["broadcast_in_dim"] = [bind_case(f64(3), shape=(2, 3), broadcast_dimensions=(1,)),
                             bind_case(f64(3, 1), shape=(3, 4), broadcast_dimensions=(0, 1)),
                             bind_case(f64(), shape=(2,), broadcast_dimensions=(), id="rank0")]
    c["reshape"] = [bind_case(f64(3, 2), new_sizes=(6,)), bind_case(f64(6), new_sizes=(2, 1, 3))]
    c["transpose"] = [bind_case(f64(2, 3, 4), permutation=(2, 0, 1)),
                      bind_case(f64(2, 3), permutation=(1, 0))]
    c["squeeze"] = [bind_case(f64(3, 1), dimensions=(1,)), bind_case(f64(1, 2, 1), dimensions=(0, 2))]
    c["expand_dims"] = [bind_case(f64(3), dimensions=(0,)), bind_case(f64(3, 2), dimensions=(1, 3))]
    c["concatenate"] = [bind_case(f64(2, 3), f64(1, 3), dimension=0),
                        bind_case(f64(2, 3), f64(2, 1), f64(2, 2), dimension=1)]
    c["pad"] = [bind_case(f64(3, 2), f64(), padding_config=((1, 2, 0), (0, 1, 1))),
                bind_case(f64(4, 3), f64(), padding_config=((-1, 1, 0), (1, -1, 2)), id="negative"),
                bind_case(f64(3), const(-np.inf), padding_config=((2, 1, 1),), id="inf_value"),
                bind_case(ints(3, 2), ints(), padding_config=((1, 0, 0), (0, 1, 0)), id="int")]
    c["slice"] = [bind_case(f64(5, 4), start_indices=(1, 0), limit_indices=(4, 3), strides=(2, 1)),
                  bind_case(f64(6), start_indices=(1,), limit_indices=(6,), strides=(3,))]
    c["rev"] = [bind_case(f64(3, 2), dimensions=(0,)), bind_case(f64(3, 2), dimensions=(0, 1))]
    c["dynamic_slice"] = [bind_case(f64(5, 4), scalar_int(-2, 6), scalar_int(0, 3),
                                    slice_sizes=(2, 3))]
    c["dynamic_update_slice"] = [bind_case(f64(5, 4), f64(2, 3), scalar_int(-2, 6),
                                           scalar_int(0, 3))]
    c["gather"] = [bind_case(f64(5, 4), ints(3, 1, lo=-5, hi=5)),
                   bind_case(f64(5, 4, 2), ints(2, 3, 2, lo=0, hi=4)),
                   bind_case(f64(5), ints(1, lo=0, hi=5))]
    for name in ["scatter_add", "scatter"]:
        c[name] = [bind_case(f64(5, 4), ints(3, 1, lo=0, hi=5), f64(3, 4)),
                   bind_case(f64(5, 4), ints(2, 2, lo=0, hi=4), f64(2))]
    c["dot_general"] = [
        bind_case(f64(3, 4), f64(4, 2), dimension_numbers=(((1,), (0,)), ((), ()))),
        bind_case(f64(4), f64(4), dimension_numbers=(((0,), (0,)), ((), ())), id="vdot"),
        bind_case(f64(2, 3, 4), f64(2, 4, 5), dimension_numbers=(((2,), (1,)), ((0,), (0,))),
                  id="bmm"),
        bind_case(f64(3, 2, 4), f64(4, 3, 2), dimension_numbers=(((0, 2), (1, 0)), ((), ())),
                  id="two_contract"),
        bind_case(f64(3), f64(2), dimension_numbers=(((), ()), ((), ())), id="outer"),
        bind_case(f64(4, 2, 3), f64(3, 2), dimension_numbers=(((2,), (0,)), ((1,), (1,))),
                  id="batch_not_leading")]
    for name in ["cumsum", "cumprod", "cummax", "cummin"]:
        c[name] = [bind_case(f64(4, 3), axis=0, reverse=False),
                   bind_case(f64(4, 3), axis=1, reverse=True)]
    for name in ["sort", "argsort"]:
        c[name] = [bind_case(f64(4, 3), dimension=0), bind_case(f64(4, 3), dimension=1)]
    c["iota"] = []        # no operands: never batched (see test_registry_covered)
    c["cholesky"] = [bind_case(spd(3, 3)), bind_case(spd(2, 3, 3), id="stack")]
    c["triangular_solve"] = [
        bind_case(well_conditioned(3, 3), f64(3, 2), left_side=ls, lower=lo, transpose_a=tr,
                  unit_diagonal=ud, id=f"{ls}{lo}{tr}{ud}")
        for ls, lo, tr, ud in [(True, True, False, False), (True, False, True, False),
                               (True, True, True, True)]] + [
        bind_case(well_conditioned(3, 3), f64(2, 3), left_side=False, lower=True,
                  transpose_a=False, unit_diagonal=False, id="right")]
    c["solve"] = [bind_case(well_conditioned(3, 3), f64(3, 2)),
                  bind_case(well_conditioned(2, 3, 3), f64(2, 3, 1), id="stack")]
    c["slogdet"] = [bind_case(well_conditioned(3, 3))]
    c["eigh"] = [bind_case(sym(3, 3))]
    # call-like primitives: built through the user-level API that emits them
    c["custom_jvp_call"] = [Case([f64(3), f64(3)], fn=_softplus)]
    c["custom_vjp_call"] = [Case([f64(3), f64(3)], fn=_sin_mul)]
    c["custom_lin"] = [Case([f64(3), f64(3), f64(3)],
                            fn=lambda x, y, t: ad.jvp(lambda a: _sin_mul(a, y), (x,), (t,))[1])]
    # host code, batched by each vmap_method (one call per element, or one call); a
    # custom_jvp gives it the derivatives (both modes) the derivative tests need
    c["pure_callback"] = [Case([f64(3), f64(3)], id=m, fn=_host_sin_mul(m))
                          for m in ("sequential", "expand_dims", "broadcast_all")]
    # one call per batch element (tests/test_debug_callback.py counts them)
    c["debug_callback"] = [Case([f64(3)], fn=lambda x: (ad.debug.callback(lambda v: None, x),
                                                         anp.sin(x))[1])]
    return c


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


CASES = _cases()

# Call-like primitives owned by other engineers (control flow, remat, names): they are
# added concurrently and bring their own batching tests.
OWNED_ELSEWHERE = {"cond", "while", "scan", "remat", "name"}

# ---------------------------------------------------------------------------
# the loop oracle
# ---------------------------------------------------------------------------


def _configs(ranks, rng, limit=48):
    """(batched mask, in_axes) pairs: every non-empty subset of operands, every axis position."""
    n = len(ranks)
    out = []
    for mask in itertools.product([False, True], repeat=n):
        if not any(mask):
            continue
        choices = [range(r + 1) if m else [None] for r, m in zip(ranks, mask)]
        combos = list(itertools.product(*choices))
        if len(combos) > limit:
            idx = rng.choice(len(combos), limit, replace=False)
            combos = [combos[i] for i in sorted(idx)]
        out.extend((mask, c) for c in combos)
    return out


def _stack_outputs(outs, multiple):
    if multiple:
        return [np.stack([o[i] for o in outs]) for i in range(len(outs[0]))]
    return np.stack(outs)


def _assert_close(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _case_params():
    for name in sorted(CASES):
        for i, case in enumerate(CASES[name]):
            yield pytest.param(name, case, id=f"{name}-{case.id or i}")


def test_registry_covered():
    """Every registered primitive has batching cases and (if it has operands) a batch rule."""
    missing_cases = sorted(set(core.primitives) - set(CASES) - OWNED_ELSEWHERE)
    assert not missing_cases, f"primitives without batching cases in CASES: {missing_cases}"
    no_rule = sorted(n for n, p in core.primitives.items()
                     if p.batch is None and n not in OWNED_ELSEWHERE and CASES.get(n))
    assert not no_rule, f"primitives without a batch rule: {no_rule}"
    empty = sorted(n for n in CASES if not CASES[n] and n in core.primitives)
    assert empty == ["iota"], f"only nullary primitives may have no cases: {empty}"


@pytest.mark.parametrize("name,case", list(_case_params()))
def test_batch_rule_matches_loop(name, case):
    prim = core.primitives[name]
    fn = case.function(prim)
    rng = np.random.default_rng(zlib.crc32((name + case.id).encode()))
    samples = [[g(rng) for g in case.gens] for _ in range(B)]
    ranks = [np.ndim(s) for s in samples[0]]
    if case.fn is not None:
        # the case must really exercise the primitive
        jaxpr = ad.make_jaxpr(fn)(*samples[0])
        assert _uses(jaxpr.jaxpr, name), f"case for {name} does not emit it:\n{jaxpr}"
    checked_abstract = set()
    for mask, axes in _configs(ranks, rng):
        expected = []
        for b in range(B):
            ops = [samples[b][i] if m else samples[0][i] for i, m in enumerate(mask)]
            expected.append(np.asarray(fn(*ops)) if not prim.multiple_results or case.fn
                            else [np.asarray(o) for o in fn(*ops)])
        multiple = isinstance(expected[0], (list, tuple))
        want = _stack_outputs(expected, multiple) if multiple else [_stack_outputs(expected, False)]
        batched_ops = []
        for i, (m, ax) in enumerate(zip(mask, axes)):
            if m:
                batched_ops.append(np.stack([samples[b][i] for b in range(B)], axis=ax))
            else:
                batched_ops.append(samples[0][i])
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
    with pytest.raises(ShapeError, match=r"argument 0 has size 3.*argument 1 has size 4") as e:
        ad.vmap(lambda a, b: a + b)(np.ones((3, 2)), np.ones((4, 2)))
    assert "test_vmap.py" in str(e.value)            # the user's line
    with pytest.raises(ShapeError, match="axis_size=5"):
        ad.vmap(lambda a: a, axis_size=5)(np.ones(3))


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

def _float_case_params():
    for p in _case_params():
        name, case = p.values
        r = np.random.default_rng(0)
        if not any(np.asarray(g(r)).dtype.kind == "f" for g in case.gens):
            continue           # nothing to differentiate
        yield p


def _as_float(x):
    return np.asarray(x, dtype=np.float64)


@pytest.mark.parametrize("name,case", list(_float_case_params()))
def test_batched_program_derivatives(name, case):
    prim = core.primitives[name]
    fn = case.function(prim)
    rng = np.random.default_rng(zlib.crc32((name + case.id + "ad").encode()))
    samples = [[g(rng) for g in case.gens] for _ in range(B)]
    n = len(samples[0])
    is_float = [np.asarray(s).dtype.kind == "f" for s in samples[0]]
    fidx = [i for i in range(n) if is_float[i]]
    masks = [(True,) * n] + ([tuple(j == i for j in range(n)) for i in range(n)] if n > 1 else [])
    for mask in masks:
        ops = [np.stack([s[i] for s in samples], 0) if m else samples[0][i]
               for i, m in enumerate(mask)]
        axes = tuple(0 if m else None for m in mask)
        tans = [rng.normal(size=np.shape(ops[i])) for i in fidx]

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
        # <ct, J t> == <J^T ct, t> for the batched function
        cts = ad.tree_util.tree_map(lambda o: rng.normal(size=np.shape(o)).astype(
            np.asarray(o).dtype) if np.asarray(o).dtype.kind == "f" else
            np.zeros(np.shape(o), np.asarray(o).dtype), out)
        back = ad.vjp(g, *fl)[1](cts)
        lhs = sum(np.vdot(_as_float(c), _as_float(t)) for c, t in
                  zip(ad.tree_util.tree_leaves(cts), ad.tree_util.tree_leaves(t1)))
        rhs = sum(np.vdot(_as_float(b), t) for b, t in zip(back, tans))
        tol = 1e-5 if any(np.asarray(o).dtype == np.float32 for o in
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
