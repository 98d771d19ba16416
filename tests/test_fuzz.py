"""A random-program differential fuzzer (hypothesis).

A program is a straight line of ``anp`` calls over two inputs ``x``, ``y`` of one shape
(0- and 1-sized dimensions included) and one dtype (float64, float32, or int64, int32,
uint8, bool with the integer operations); every value it makes has that
shape or the shape with a last dimension of 1 (``keepdims`` reductions), so any two
combine. Each program runs

* eagerly on numpy values (numpy's own functions: the reference),
* traced and interpreted (``jit(backend="interpret")``),
* compiled (``jit``; in the short run for about one program in ten, drawn with the
  program, so the suite compiles a bounded number of kernels),
* under ``vmap`` (two stacked copies of the inputs),
* under ``value_and_grad`` (its forward value), with the gradient checked against central
  finite differences for programs of smooth operations on finite float64 data,
* and against JAX when it is installed (the ``bench`` extra), in the long run.

Inputs are salted with nan, ±inf, ±0, subnormals and huge values. A program for which
numpy raises must raise the same builtin error class in every mode.

Short run: ``SHORT`` programs. The ``slow`` test adds ``LONG`` programs, every one also
jitted and checked against JAX (when installed); CI runs it with the default of 25
(the suite's time budget), the long run is the documented command

    AUTODIFF_FUZZ_EXAMPLES=2000 python3 -m pytest -q -s -p no:cacheprovider -m slow tests/test_fuzz.py

which prints the counts (programs, checks per mode) at the end.
"""
import collections
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import autodiff as ad
import autodiff.numpy as anp

SHORT = 300
LONG = int(os.environ.get("AUTODIFF_FUZZ_EXAMPLES", "25"))
SHAPES = [(), (1,), (0,), (3,), (2, 3), (1, 3), (2, 0), (3, 1)]
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -1e-310, 1e300, -1e300, 1e-300]
COUNTS = collections.Counter()


def _k(f):
    """keepdims reductions over the last axis (identity on 0-d values)."""
    return lambda a: f(a, axis=-1, keepdims=True) if np.ndim(a) else f(a)


# name -> (arity, anp function, smooth: differentiable everywhere on finite data)
OPS = {
    "sin": (1, anp.sin, True), "cos": (1, anp.cos, True), "tanh": (1, anp.tanh, True),
    "exp": (1, anp.exp, True), "square": (1, anp.square, True),
    "negative": (1, anp.negative, True), "sigmoid": (1, ad.nn.sigmoid, True),
    "softplus": (1, lambda a: anp.logaddexp(a, 0.0), True),
    "abs": (1, anp.abs, False), "sqrt": (1, anp.sqrt, False), "log": (1, anp.log, False),
    "log1p": (1, anp.log1p, False), "sign": (1, anp.sign, False),
    "floor": (1, anp.floor, False), "reciprocal": (1, anp.reciprocal, False),
    "arctan": (1, anp.arctan, True), "expm1": (1, anp.expm1, True),
    "flip": (1, lambda a: anp.flip(a, -1) if np.ndim(a) else a, True),
    "cumsum": (1, lambda a: anp.cumsum(a, -1) if np.ndim(a) else a, True),
    "sort": (1, lambda a: anp.sort(a, -1) if np.ndim(a) else a, False),
    "sum": (1, _k(anp.sum), True), "mean": (1, _k(anp.mean), True),
    "max": (1, _k(anp.max), False), "min": (1, _k(anp.min), False),
    "std": (1, _k(anp.std), False), "norm": (1, _k(anp.linalg.norm), False),
    "logsumexp": (1, _k(anp.logsumexp), True), "median": (1, _k(anp.median), False),
    "prod": (1, _k(anp.prod), True),
    "add": (2, anp.add, True), "subtract": (2, anp.subtract, True),
    "multiply": (2, anp.multiply, True), "divide": (2, anp.divide, False),
    "maximum": (2, anp.maximum, False), "minimum": (2, anp.minimum, False),
    "hypot": (2, anp.hypot, False), "arctan2": (2, anp.arctan2, False),
    "logaddexp": (2, anp.logaddexp, True), "fmod": (2, anp.fmod, False),
    "power": (2, lambda a, b: anp.power(anp.abs(a), b), False),
    "where": (2, lambda a, b: anp.where(a > b, a, b), False),
    "scale": (2, lambda a, b: a * 0.5 + b * 2.0, True),
    "clip": (1, lambda a: anp.clip(a, -1.0, 1.0), False), "var": (1, _k(anp.var), True),
    "softmax": (1, lambda a: anp.softmax(a, axis=-1) if np.ndim(a) else a, True),
    "cumprod": (1, lambda a: anp.cumprod(a, -1) if np.ndim(a) else a, True),
    "quantile": (1, lambda a: anp.quantile(a, 0.3, axis=-1, keepdims=True) if np.ndim(a) else a,
                 False),
    "inner": (2, lambda a, b: anp.sum(a * b, axis=-1, keepdims=True) if np.ndim(a * b) else a * b,
              True),
}
NAMES = sorted(OPS)
# integer and bool programs: the operations numpy defines there (no transcendentals)
INT_NAMES = sorted(["add", "subtract", "multiply", "maximum", "minimum", "abs", "negative", "sum",
                    "cumsum", "sort", "flip", "max", "min", "where", "sign", "square", "prod",
                    "inner", "clip", "scale", "mean", "std", "median", "divide", "fmod", "floor"])
DTYPES = [np.float64, np.float32, np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_]
DISCONTINUOUS = {"floor", "sign", "fmod"}


def _jnp_ops():
    import jax.numpy as jnp
    from jax import nn
    from jax.scipy.special import logsumexp

    def k(f):
        return lambda a: f(a, axis=-1, keepdims=True) if a.ndim else f(a)
    return {
        "sin": jnp.sin, "cos": jnp.cos, "tanh": jnp.tanh, "exp": jnp.exp, "square": jnp.square,
        "negative": jnp.negative, "sigmoid": nn.sigmoid, "softplus": lambda a: jnp.logaddexp(a, 0.0),
        "abs": jnp.abs, "sqrt": jnp.sqrt, "log": jnp.log, "log1p": jnp.log1p, "sign": jnp.sign,
        "floor": jnp.floor, "reciprocal": jnp.reciprocal, "arctan": jnp.arctan,
        "expm1": jnp.expm1, "flip": lambda a: jnp.flip(a, -1) if a.ndim else a,
        "cumsum": lambda a: jnp.cumsum(a, -1) if a.ndim else a,
        "sort": lambda a: jnp.sort(a, -1) if a.ndim else a, "sum": k(jnp.sum),
        "mean": k(jnp.mean), "max": k(jnp.max), "min": k(jnp.min), "std": k(jnp.std),
        "norm": k(jnp.linalg.norm), "logsumexp": k(logsumexp), "median": k(jnp.median),
        "prod": k(jnp.prod), "add": jnp.add, "subtract": jnp.subtract,
        "multiply": jnp.multiply, "divide": jnp.divide, "maximum": jnp.maximum,
        "minimum": jnp.minimum, "hypot": jnp.hypot, "arctan2": jnp.arctan2,
        "logaddexp": jnp.logaddexp, "fmod": jnp.fmod,
        "power": lambda a, b: jnp.power(jnp.abs(a), b),
        "where": lambda a, b: jnp.where(a > b, a, b), "scale": lambda a, b: a * 0.5 + b * 2.0,
        "clip": lambda a: jnp.clip(a, -1.0, 1.0), "var": k(jnp.var),
        "softmax": lambda a: nn.softmax(a, axis=-1) if a.ndim else a,
        "cumprod": lambda a: jnp.cumprod(a, -1) if a.ndim else a,
        "quantile": lambda a: jnp.quantile(a, 0.3, axis=-1, keepdims=True) if a.ndim else a,
        "inner": lambda a, b: jnp.sum(a * b, axis=-1, keepdims=True) if (a * b).ndim else a * b,
    }


class Program:
    """``steps``: (op name, argument indices into the values so far: x, y, results...)."""

    def __init__(self, steps, shape, dtype):
        self.steps, self.shape, self.dtype = steps, shape, dtype

    def run(self, x, y, ops=None, values=None):
        ops = ops or {n: f for n, (_, f, _) in OPS.items()}
        env = [x, y]
        for name, args in self.steps:
            env.append(ops[name](*[env[i] for i in args]))
        if values is not None:
            values.extend(env)
        return env[-1]

    def smooth(self):
        return all(OPS[n][2] for n, _ in self.steps)

    def continuous(self):
        # finite differences cannot see the derivative of a step (floor, sign) or of a
        # sawtooth whose period may be below the step h (fmod by a subnormal)
        return not any(n in DISCONTINUOUS for n, _ in self.steps)

    def __repr__(self):
        body = "; ".join(f"v{k + 2} = {n}({', '.join(f'v{i}' for i in a)})"
                         for k, (n, a) in enumerate(self.steps))
        return f"Program[{self.shape} {np.dtype(self.dtype).name}: {body}]"


@st.composite
def programs(draw):
    shape = draw(st.sampled_from(SHAPES))
    dtype = draw(st.sampled_from(DTYPES))
    floating = np.dtype(dtype).kind == "f"
    steps = []
    for k in range(draw(st.integers(1, 5))):
        name = draw(st.sampled_from(NAMES if floating else INT_NAMES))
        arity = OPS[name][0]
        steps.append((name, tuple(draw(st.integers(0, k + 1)) for _ in range(arity))))
    salted = draw(st.booleans()) and floating
    use_jit = draw(st.integers(0, 9)) == 0     # about one program in ten also compiles
    size = int(np.prod(shape))

    def values():
        if not floating:
            return np.array(draw(st.lists(st.integers(-5, 200), min_size=size, max_size=size)),
                            dtype=np.int64).reshape(shape).astype(dtype)
        normal = st.floats(-2.0, 2.0, allow_nan=False, width=32)
        elem = st.one_of(normal, st.sampled_from(SPECIALS)) if salted else normal
        return np.array(draw(st.lists(elem, min_size=size, max_size=size)),
                        dtype=np.float64).reshape(shape).astype(dtype)
    with np.errstate(over="ignore"):
        x, y, x2, y2 = values(), values(), values(), values()
    return Program(steps, shape, dtype), x, y, x2, y2, salted, use_jit


def _scalar(v):
    return anp.sum(v * 1.0)


def _eager(prog, x, y):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return np.asarray(prog.run(x, y)), None
        except (ValueError, TypeError, IndexError, FloatingPointError, ZeroDivisionError) as e:
            return None, e


def _close(got, want, dtype, what, prog, rtol=None):
    got = np.asarray(got)
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs numpy {want.shape}: {prog}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs numpy {want.dtype}: {prog}"
    nan_bad = np.isnan(got) != np.isnan(want)
    inf_bad = (np.isposinf(got) != np.isposinf(want)) | (np.isneginf(got) != np.isneginf(want))
    rtol = rtol or (1e-9 if dtype == np.float64 else 2e-4)
    fin = np.isfinite(got) & np.isfinite(want)
    scale = np.max(np.abs(want[fin]), initial=1.0)
    err = np.abs(got[fin].astype(np.float64) - want[fin].astype(np.float64))
    close = err <= rtol * (np.abs(want[fin]) + scale * 1e-3)
    assert not nan_bad.any() and not inf_bad.any() and close.all(), \
        f"{what} differs from numpy: got {got!r}, numpy {want!r}: {prog}"


def check_program(prog, x, y, x2, y2, salted, use_jit, jit_all=False, with_jax=False):
    COUNTS["programs"] += 1
    want, err = _eager(prog, x, y)
    fn = lambda a, b: prog.run(a, b)  # noqa: E731
    modes = {"traced": ad.jit(fn, backend="interpret")}
    if jit_all or use_jit:
        modes["jit"] = ad.jit(fn)
    if np.dtype(prog.dtype).kind == "f":      # grad of an integer function is a DTypeError
        modes["grad"] = lambda a, b: ad.value_and_grad(lambda u, v: _scalar(fn(u, v)))(a, b)[0]
    for mode, f in modes.items():
        COUNTS[f"checks_{mode}"] += 1
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if err is not None:
                with pytest.raises(_builtin(err)):
                    f(x, y)
                continue
            got = f(x, y)
        if mode == "grad":
            if want.dtype.kind == "f" and not np.isnan(want).any():
                w = np.sum(want.astype(np.float64))
                if np.isfinite(w) and (np.isfinite(want).all() or not salted):
                    _close(np.asarray(got), np.asarray(np.sum(want * 1.0), want.dtype),
                           prog.dtype, "value_and_grad value", prog, rtol=1e-6 if
                           prog.dtype == np.float64 else 1e-3)
            continue
        _close(got, want, prog.dtype, mode, prog)
    if err is None and prog.shape != ():
        _check_vmap(prog, fn, x, y, x2, y2, want)
    if err is None and not salted and prog.dtype == np.float64 and prog.continuous():
        _check_fd(prog, fn, x, y)
    if with_jax and err is None and np.dtype(prog.dtype).kind == "f":
        _check_jax(prog, x, y, want)


def _builtin(e):
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return Exception


def _check_vmap(prog, fn, x, y, x2, y2, want):
    COUNTS["checks_vmap"] += 1
    want2, err2 = _eager(prog, x2, y2)
    if err2 is not None:
        return
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = ad.vmap(fn)(np.stack([x, x2]), np.stack([y, y2]))
    _close(np.asarray(got)[0], want, prog.dtype, "vmap[0]", prog)
    _close(np.asarray(got)[1], want2, prog.dtype, "vmap[1]", prog)


def _check_fd(prog, fn, x, y):
    if x.size == 0:
        return
    COUNTS["checks_fd"] += 1
    f = lambda a, b: float(np.sum(np.asarray(prog.run(a, b), np.float64)))  # noqa: E731
    env = []
    with np.errstate(all="ignore"):
        prog.run(x, y, values=env)
    if not all(np.isfinite(v).all() for v in env):
        return          # an infinite intermediate (1/0, exp overflow): d is 0·inf there
    both = np.concatenate([x.ravel(), y.ravel()])
    if not prog.smooth() and np.unique(both).size < both.size:
        return          # ties: max, sort, median share the gradient there (API convention 5)
    gx, gy = ad.grad(lambda u, v: _scalar(fn(u, v)), argnums=(0, 1))(x, y)
    h = 1e-6
    f0 = f(x, y)
    for g, which in ((gx, 0), (gy, 1)):
        for i in np.ndindex(x.shape):
            a, b = x.copy(), y.copy()
            tgt = a if which == 0 else b
            tgt[i] += h
            up = f(a, b)
            tgt[i] -= 2 * h
            down = f(a, b)
            fd = (up - down) / (2 * h)
            if not (np.isfinite(fd) and abs(fd) < 1e4):
                continue            # a singularity within h (arctan2 at the origin, 1/x near 0)
            # a kink (abs, max, sort, clip, ...) within h: one-sided slopes disagree; the
            # smooth programs have none, so for them every component is checked
            if not prog.smooth() and abs((up - f0) - (f0 - down)) > 1e-4 * h * (1 + abs(fd)):
                continue
            COUNTS["fd_components"] += 1
            assert abs(np.asarray(g)[i] - fd) <= 1e-5 * (1 + abs(fd)), \
                f"grad wrt arg {which} at {i}: {np.asarray(g)[i]} vs finite differences {fd}: {prog}"


def _check_jax(prog, x, y, want):
    try:
        import jax
    except ImportError:
        return
    jax.config.update("jax_enable_x64", True)
    tiny = np.finfo(prog.dtype).tiny
    if any(np.any((v != 0) & (np.abs(v) < tiny)) for v in (x, y)):
        return                       # XLA on CPU flushes subnormal inputs to zero; numpy does not
    if any(n == "sign" for n, _ in prog.steps) or any(np.any((v == 0) & np.signbit(v))
                                                       for v in (x, y)):
        return                       # JAX's sign(-0.) is -0.0 and its cumsum drops -0.; numpy's not
    COUNTS["checks_jax"] += 1
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            got = np.asarray(prog.run(jax.numpy.asarray(x), jax.numpy.asarray(y), _jnp_ops()))
        except Exception:  # noqa: BLE001 - JAX refuses some empty inputs numpy accepts
            return
    if got.dtype != want.dtype:
        return                       # JAX's promotion of Python scalars differs; values below
    # JAX's own transcendentals are up to ~7 ulp, and it flushes subnormals: values only where
    # both are finite and normal; NaN / inf placement must agree
    if np.any(np.abs(want[np.isfinite(want) & (want != 0)]) < np.finfo(want.dtype).tiny * 1e6):
        return
    _close(got, want, prog.dtype, "jax", prog, rtol=1e-7 if prog.dtype == np.float64 else 1e-3)


_settings = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=SHORT, **_settings)
@given(programs())
def test_fuzz_short(case):
    check_program(*case)


@pytest.mark.slow
@settings(max_examples=LONG, **_settings)
@given(programs())
def test_fuzz_long(case):
    check_program(*case, jit_all=True, with_jax=True)


def teardown_module():
    if COUNTS:
        print("\nfuzz counts:", dict(sorted(COUNTS.items())))
