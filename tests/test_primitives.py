"""The primitive registry, enumerated: every primitive has its rules, and they agree.

For each primitive of ``autodiff.core.primitives``:

* ``impl`` and ``abstract_eval`` exist, and ``abstract_eval`` predicts exactly the
  shape and dtype ``impl`` produces (float32 and float64, several parameter sets);
* ``check_grads(order=2, modes=("fwd", "rev"))`` passes for the differentiable ones;
  non-differentiable ones (comparisons, rounding, indices) give zero tangents;
* linear primitives satisfy the transpose identity ``<ct, L t> == <Lᵀ ct, t>``.

Complex records (``Z`` operands, docs/complex.md) go through the same checks:
``check_grads`` moves each complex operand in both real directions (by ``eps`` and by
``i·eps``), and the transpose identity pairs ``<u, v> = Re(Σ u·v)`` with random complex
vectors. Their derivative checks run at complex128 only (complex64 adds nothing the
float32 records do not check).

Sample inputs come from the one table of op records, ``tests/op_records/`` (shared
with the vmap and jit-lowering tests). A primitive of the core modules without records
fails ``test_core_primitives_have_samples``: adding a primitive means adding a row
there. Primitives of other modules (control flow, checkpointing) get theirs from
tracing a use of their public API.
"""
import numpy as np
import pytest

import autodiff as ad
from autodiff import primitives as P
from autodiff import custom_derivatives as CD
from autodiff.core import Primitive, ShapedArray, Zero, get_aval, primitives
from autodiff.transforms.transpose import backward_pass
from autodiff.core import Jaxpr, Var, Eqn

from op_records import A, FLOATS, RECORDS as SAMPLES, Z


# reverse mode is not defined for an unbounded while loop (as in JAX)
GRAD_MODES = {"while": ("fwd",),
              # opaque host code has no derivative of its own (custom_vjp gives it one:
              # tests/test_ported_gaps.py); its jvp raises UnsupportedError, tested there
              "pure_callback": (),
              "debug_callback": ()}      # no results, nothing to differentiate

CORE_MODULES = (P, CD)


def _core_prims():
    names = set()
    for mod in CORE_MODULES:
        names |= {v.name for v in vars(mod).values() if isinstance(v, Primitive)}
    return names


def _is_float_arg(a):
    return isinstance(a, A) and a.is_float


def _make(args, rng, dt):
    return [a.make(rng, dt) for a in args]


ALL = sorted(primitives)
WITH_SAMPLES = [(n, i) for n in ALL for i in range(len(SAMPLES.get(n, [])))]


def test_core_primitives_have_samples():
    missing = sorted(n for n in _core_prims() if n not in SAMPLES)
    assert not missing, f"primitives without records in tests/op_records/: {missing}"


def test_every_registered_primitive_has_samples():
    missing = sorted(n for n in primitives if n not in SAMPLES)
    assert not missing, (f"primitives without samples: {missing}; add records (or a "
                         f"traced use of the public API to _other_samples) in tests/op_records/")


@pytest.mark.parametrize("name", ALL)
def test_every_primitive_has_rules(name):
    p = primitives[name]
    assert p.name == name
    assert callable(p.impl), f"{name} has no impl"
    assert callable(p.abstract_eval), f"{name} has no abstract_eval"
    assert callable(p.jvp), f"{name} has no jvp rule (use defjvp_zero for constant ones)"
    if p.is_linear:
        assert callable(p.transpose), f"linear primitive {name} has no transpose rule"


def _check_avals(p, avals, outs):
    outs = outs if p.multiple_results else [outs]
    avals = avals if p.multiple_results else [avals]
    assert len(outs) == len(avals)
    for a, o in zip(avals, outs):
        o = np.asarray(o)
        assert isinstance(a, ShapedArray)
        assert a.shape == o.shape, f"{p.name}: abstract_eval says {a}, impl gives {o.shape}"
        assert a.dtype == o.dtype, f"{p.name}: abstract_eval says {a}, impl gives {o.dtype}"


@pytest.mark.parametrize("dt", FLOATS, ids=["f32", "f64"])
@pytest.mark.parametrize("name,i", WITH_SAMPLES, ids=[f"{n}-{i}" for n, i in WITH_SAMPLES])
def test_abstract_eval_agrees_with_impl(name, i, dt):
    p = primitives[name]
    args, params = SAMPLES[name][i].args, SAMPLES[name][i].params(dt)
    xs = _make(args, np.random.default_rng(i), dt)
    with np.errstate(all="ignore"):
        out = p.impl(*xs, **params)
    avals = p.abstract_eval(*[get_aval(x) for x in xs], **params)
    _check_avals(p, avals, out)
    # binding concretely runs impl; binding abstractly records an equation of that type
    closed = ad.make_jaxpr(lambda *ys: p.bind(*ys, **params))(*xs)
    ad.core.typecheck_jaxpr(closed.jaxpr)


def _diff_samples():
    out = []
    for n, i in WITH_SAMPLES:
        p = primitives[n]
        args, params = SAMPLES[n][i].args, SAMPLES[n][i].params()
        if not SAMPLES[n][i].fd:
            continue           # values where finite differences do not apply (infinities)
        if not p.differentiable or not any(_is_float_arg(a) for a in args):
            continue
        if n == "stop_gradient":
            continue
        if "new_dtype" in params and np.dtype(params["new_dtype"]).kind not in "fc":
            continue
        out.append((n, i))
    return out


DIFF = _diff_samples()


def _eigh_projectors(outs):
    # a complex eigenvector is defined up to its phase (LAPACK fixes none, the jvp takes
    # Im diag(Vᴴ dV) = 0): the derivative is checked on the gauge-invariant eigenvalues and
    # projectors v_k v_kᴴ (entries v[i, k]·conj(v[j, k]))
    w, v = outs
    if ad.numpy.iscomplexobj(v):
        v = v[..., :, None, :] * ad.numpy.conj(v[..., None, :, :])
    return [w, v]


def _svd_pairs(outs):
    # complex singular vectors share a phase per pair (u_k, v_k): checked through s and the
    # invariant products u[i, k]·Vᴴ[k, j]
    if len(outs) == 3 and ad.numpy.iscomplexobj(outs[0]):
        u, s, vt = outs
        return [s, u[..., :, :, None] * vt[..., None, :, :]]
    return outs


def _qr_complement(outs):
    # a complete Q of a tall matrix: its last m - n columns are a basis of the complement of
    # the range that the algorithm picks; checked through the projector Q₂ Q₂ᴴ
    q, r = outs
    m, n = r.shape[-2:]
    if q.shape[-1] == m and m > n:
        q2 = q[..., :, n:]
        return [q[..., :, :n], q2 @ ad.numpy.conj(ad.numpy.swapaxes(q2, -1, -2)), r]
    return outs


#: primitives whose outputs are checked through a function of them (gauge freedom)
GAUGE_INVARIANT = {"eigh": _eigh_projectors, "svd": _svd_pairs, "qr": _qr_complement}


def _float_fun(p, args, params, xs):
    fpos = [k for k, a in enumerate(args) if _is_float_arg(a)]
    post = GAUGE_INVARIANT.get(p.name, lambda outs: outs)

    def f(*fs):
        full = list(xs)
        for k, v in zip(fpos, fs):
            full[k] = v
        out = p.bind(*full, **params)
        return post(list(out)) if p.multiple_results else out
    return f, [xs[k] for k in fpos]


def _is_complex(record):
    return any(isinstance(a, Z) for a in record.args)


# complex records are differentiated at complex128 only
DIFF_DT = [(n, i, dt) for n, i in DIFF for dt in FLOATS
           if dt == np.float64 or not _is_complex(SAMPLES[n][i])]


@pytest.mark.parametrize("name,i,dt", DIFF_DT, ids=[
    f"{n}-{i}-{'f32' if dt == np.float32 else 'f64'}" for n, i, dt in DIFF_DT])
def test_check_grads_primitive(name, i, dt):
    p = primitives[name]
    args, params = SAMPLES[name][i].args, SAMPLES[name][i].params(dt)
    xs = _make(args, np.random.default_rng(10 + i), dt)
    f, fxs = _float_fun(p, args, params, xs)
    out_dts = [a.dtype for a in ad.make_jaxpr(f)(*fxs).out_avals]
    modes = GRAD_MODES.get(name, ("fwd", "rev"))
    if dt == np.float64 and all(d in (np.float64, np.complex128) for d in out_dts):
        ad.check_grads(f, fxs, order=2, modes=modes)
    else:
        ad.check_grads(f, fxs, order=2, modes=modes, eps=1e-3, atol=5e-2, rtol=5e-2)


NONDIFF = [(n, i) for n, i in WITH_SAMPLES
           if (not primitives[n].differentiable or n == "stop_gradient")]


@pytest.mark.parametrize("name,i", NONDIFF, ids=[f"{n}-{i}" for n, i in NONDIFF])
def test_nondifferentiable_primitives_have_zero_tangents(name, i):
    p = primitives[name]
    args, params = SAMPLES[name][i].args, SAMPLES[name][i].params()
    xs = _make(args, np.random.default_rng(i), np.float64)
    ts = [np.ones_like(x, dtype=np.float64) if x.dtype.kind == "f" else
          np.full_like(x, 1 - 1j) if x.dtype.kind == "c" else Zero(get_aval(x)) for x in xs]
    out, tout = p.jvp(xs, ts, **params)
    for t in (tout if p.multiple_results else [tout]):
        assert isinstance(t, Zero) or not np.any(np.asarray(t)), name


LINEAR = [(n, i) for n, i in WITH_SAMPLES if primitives[n].is_linear and primitives[n].transpose
          and any(_is_float_arg(a) for a in SAMPLES[n][i].args)
          and SAMPLES[n][i].params().get("new_dtype", np.dtype("f")).kind in "fc"]


def _linear_operands(name, n_args, params):
    if name == "linear_solve":        # the operator's and solvers' constants, then b
        return range(n_args - params["counts"][3], n_args)
    if name == "custom_lin":          # residuals, consts, primals, then the tangents
        n_t = (n_args - params["num_res"] - params["num_consts"]) // 2
        return range(n_args - n_t, n_args)
    declared = primitives[name].linear_argnums      # from deflinear/deftranspose(argnums=)
    return range(n_args) if declared is None else declared


def _randn(rng, shape, dtype):
    """Standard normal, with a standard normal imaginary part for a complex ``dtype``."""
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else x


def _pair(u, v):
    # <u, v> = Re(Σ u·v), no conjugation: the pairing of the transpose rules
    return float(np.real(np.sum(np.asarray(u) * np.asarray(v))))


@pytest.mark.parametrize("name,i", LINEAR, ids=[f"{n}-{i}" for n, i in LINEAR])
def test_transpose_identity(name, i):
    # for each float (or complex) operand the primitive is linear in: <ct, L t> = <Lᵀ ct, t>
    p = primitives[name]
    args, params = SAMPLES[name][i].args, SAMPLES[name][i].params()
    rng = np.random.default_rng(i)
    xs = _make(args, rng, np.float64)
    checked = 0
    for k in _linear_operands(name, len(args), params):
        if not _is_float_arg(args[k]):
            continue
        invars = [Var(get_aval(x)) for x in xs]
        out = p.abstract_eval(*[v.aval for v in invars], **params)
        outs = out if p.multiple_results else [out]
        outvars = [Var(o) for o in outs]
        j = Jaxpr([], invars, outvars, [Eqn(p, invars, outvars, params)])
        t = _randn(rng, xs[k].shape, xs[k].dtype)
        cts = [_randn(rng, o.shape, o.dtype) for o in outs]
        linear = [m == k for m in range(len(xs))]
        try:
            got = backward_pass(j, [], linear, [None if m == k else x for m, x in enumerate(xs)],
                                cts)
        except AssertionError:
            continue           # not linear in this operand (e.g. the divisor of div)
        # L t is the derivative along operand k: the jvp with every other tangent zero
        ts = [t if m == k else Zero(get_aval(x).strip_weak()) for m, x in enumerate(xs)]
        _, lt = p.jvp(xs, ts, **params)
        lts = lt if p.multiple_results else [lt]
        lts = [np.zeros(o.shape) if isinstance(l, Zero) else l for l, o in zip(lts, outs)]
        lhs = sum(_pair(c, l) for c, l in zip(cts, lts))
        ct_k = got[k]
        ct_k = np.zeros_like(t) if isinstance(ct_k, Zero) else np.asarray(ct_k)
        assert ct_k.shape == t.shape
        tol = 1e-10 if all(o.dtype in (np.float64, np.complex128) for o in outs) else 1e-6
        np.testing.assert_allclose(_pair(ct_k, t), lhs, rtol=tol, atol=tol)
        checked += 1
    assert checked, f"{name}: no operand was checked"
