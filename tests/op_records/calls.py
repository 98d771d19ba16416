"""The rows of the primitives of other modules: custom derivatives' calls, control flow,
checkpointing and callbacks. Their records come from tracing a use of the public API;
then their flags (see the package's docstring)."""
import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax
from autodiff import primitives as P

from . import (A, Cuda, DTypeParams, Jet, Record, WellConditioned, Z, complex_dtype, declare, row,
               u, x3, xs3)

# ---------------------------------------------------------------------------------------
# call primitives of custom_derivatives: built by tracing a use of the public API
# ---------------------------------------------------------------------------------------

@ad.custom_jvp
def _cj(x, y):
    return anp.sin(x) * y


@_cj.defjvp
def _cj_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _cj(x, y), anp.cos(x) * y * tx + anp.sin(x) * ty


@ad.custom_vjp
def _cv(x, y):
    return anp.exp(x) * y


_cv.defvjp(lambda x, y: (_cv(x, y), (anp.exp(x), y)),
           lambda res, g: (res[0] * res[1] * g, res[0] * g))


def _call_eqn(fun, prim_name, *args):
    closed = ad.make_jaxpr(fun)(*args)
    eqn = next(e for e in closed.eqns if e.primitive.name == prim_name)
    return eqn.params


def _custom_lin_params(dt):
    x = np.array([0.3, 1.2], dt)
    lin = ad.make_jaxpr(lambda x, y, t: ad.jvp(_cv, (x, y), (t, t))[1])(x, x, x)
    return next(e for e in lin.eqns if e.primitive.name == "custom_lin").params


def _custom_samples():
    x = lambda dt: np.array([0.3, 1.2], dt)
    row("custom_jvp_call").records[:] = [Record("custom_jvp_call", [A(2), A(2)], DTypeParams(
        lambda dt: _call_eqn(_cj, "custom_jvp_call", x(dt), x(dt))))]
    row("custom_vjp_call").records[:] = [Record("custom_vjp_call", [A(2), A(2)], DTypeParams(
        lambda dt: _call_eqn(_cv, "custom_vjp_call", x(dt), x(dt))))]
    # residuals (exp(x), y) consistent with the primal inputs (x, y), then the tangents
    xv, yv = [0.3, 1.2], [1.5, -0.5]
    row("custom_lin").records[:] = [Record("custom_lin", [
        A(values=np.exp(xv)), A(values=yv), A(values=xv), A(values=yv), A(2), A(2)],
        DTypeParams(_custom_lin_params))]


_custom_samples()


# ---------------------------------------------------------------------------------------
# primitives of other modules (control flow, checkpointing, callbacks): a record is the
# equation a use of the public API records, with its operands' values at an example input
# ---------------------------------------------------------------------------------------

def _eqn_sample(prim_name, fun, *example):
    def find(dt):
        args = [np.asarray(a, dt) if np.asarray(a).dtype.kind == "f" else
                np.asarray(a, complex_dtype(dt)) if np.asarray(a).dtype.kind == "c" else a
                for a in example]
        closed = ad.make_jaxpr(fun)(*args)
        env = dict(zip(closed.jaxpr.constvars, closed.consts))
        env.update(zip(closed.jaxpr.invars, args))
        for e in closed.jaxpr.eqns:
            ins = [v.val if isinstance(v, ad.core.Literal) else env[v] for v in e.invars]
            if e.primitive.name == prim_name:
                return ins, e.params
            outs = e.primitive.impl(*ins, **e.params)
            env.update(zip(e.outvars, outs if e.primitive.multiple_results else [outs]))
        raise AssertionError(f"{prim_name} not recorded")

    ins, _ = find(np.float64)
    # float and complex operands random (dtype from the test), the rest (indices,
    # counters) as recorded
    makers = [A(*np.shape(v)) if np.asarray(v).dtype.kind == "f" else
              Z(*np.shape(v)) if np.asarray(v).dtype.kind == "c"
              else A(values=np.asarray(v), dtype=np.asarray(v).dtype) for v in ins]
    row(prim_name).records.append(
        Record(prim_name, makers, DTypeParams(lambda dt: find(dt)[1])))


#: the values debug_callback's records passed to the host (their calls are counted in
#: tests/test_debug_callback.py; the jit test here checks the compiled program made them)
DEBUG_SEEN = []


def _linear_solve_fn(m, b):
    # the solvers see the matrix only through the operator they are given
    dense = lambda op: ad.vmap(op)(anp.eye(anp.shape(b)[0], dtype=b.dtype)).T   # noqa: E731
    return lax.custom_linear_solve(lambda v: m @ v, b,
                                   lambda mv, r: anp.linalg.solve(dense(mv), r),
                                   transpose_solve=lambda vm, r: anp.linalg.solve(dense(vm), r))


class Fixed(A):
    """An operand kept at its recorded value (of the test's dtype) and never differentiated:
    a solver's own constants (the basis it applies the operator to), whose derivative is
    zero by design."""

    is_float = False


def _linear_solve_sample():
    # operands: the operator's matrix (random, well conditioned), the solvers' constants
    # as recorded, the right-hand side (random)
    m, b = np.array([[3.0, 0.5], [-0.4, 2.0]]), np.array([1.5, 0.5])

    def params(dt):
        closed = ad.make_jaxpr(_linear_solve_fn)(m.astype(dt), b.astype(dt))
        return next(e for e in closed.eqns if e.primitive.name == "linear_solve").params

    closed = ad.make_jaxpr(_linear_solve_fn)(m, b)
    env = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, (m, b)))
    e = next(e for e in closed.jaxpr.eqns if e.primitive.name == "linear_solve")
    n_m, n_s, n_t, nb = e.params["counts"]
    assert (n_m, nb) == (1, 1)
    fixed = [Fixed(values=np.asarray(env[v])) for v in e.invars[1:1 + n_s + n_t]]
    row("linear_solve").records[:] = [Record("linear_solve", [WellConditioned(2, 2)] + fixed
                                             + [A(2)], DTypeParams(params))]


_linear_solve_sample()


def _other_samples():
    x, y = np.array([0.3, -1.2]), np.array([1.5, 0.5])
    lax = ad.lax
    for pred in (1.0, -1.0):
        _eqn_sample("cond", lambda p, a, b: lax.cond(p > 0, lambda a, b: a * b,
                                                     lambda a, b: anp.sin(a) + b, a, b),
                    pred, x, y)
    _eqn_sample("cond", lambda a: lax.switch(2, [anp.sin, anp.cos, lambda v: v * v], a), x)
    _eqn_sample("scan", lambda c, xs: lax.scan(lambda c, v: (c * anp.sin(v), c + v), c, xs),
                x, np.array([[0.5, 1.0], [2.0, -1.0], [0.1, 0.2]]))
    # a counter carried next to the data: the trip count does not depend on float values
    _eqn_sample("while", lambda a: lax.while_loop(lambda c: c[0] < 3,
                                                  lambda c: (c[0] + 1, anp.sin(c[1]) * 1.5),
                                                  (0, a))[1], x)
    _eqn_sample("remat", ad.checkpoint(lambda a, b: anp.sin(a * b) * a), x, y)
    _eqn_sample("name", lambda a: ad.checkpoint_name(anp.sin(a), "h") * 2.0, x)
    _eqn_sample("pure_callback", lambda a: ad.pure_callback(
        np.sin, ad.ShapeDtypeStruct(a.shape, a.dtype), a) * 2.0, x)
    # each way vmap may call host code: once per element, or once on the stacked batch
    for method in ("sequential", "expand_dims", "broadcast_all"):
        _eqn_sample("pure_callback", lambda a, b, m=method: ad.pure_callback(
            lambda u, v: np.sin(u) * v, ad.ShapeDtypeStruct(a.shape, a.dtype), a, b,
            vmap_method=m), x, y)
    # complex values through the control flow: operands, carries and scanned slices
    zx, zy = np.array([0.3 + 1j, -1.2 - 0.5j]), np.array([1.5 - 0.2j, 0.5 + 0.7j])
    for pred in (1.0, -1.0):
        _eqn_sample("cond", lambda p, a, b: lax.cond(p > 0, lambda a, b: a * b,
                                                     lambda a, b: anp.sin(a) + anp.conj(b),
                                                     a, b), pred, zx, zy)
    _eqn_sample("scan", lambda c, xs: lax.scan(lambda c, v: (c * anp.exp(v), anp.real(c * v)),
                                               c, xs),
                zx, np.array([[0.5 + 0.1j, 1.0j], [0.2, -1.0 + 0.3j], [0.1j, 0.2]]))
    _eqn_sample("while", lambda a: lax.while_loop(lambda c: c[0] < 3,
                                                  lambda c: (c[0] + 1, anp.sin(c[1]) * (1 - 0.5j)),
                                                  (0, a))[1], zx)
    _eqn_sample("remat", ad.checkpoint(lambda a, b: anp.sin(a * b) * anp.conj(a)), zx, zy)
    # no results
    _eqn_sample("debug_callback",
                lambda a: (ad.debug.callback(DEBUG_SEEN.append, a), a * 2.0)[1], x)


_other_samples()


# ---------------------------------------------------------------------------------------
# flags
# ---------------------------------------------------------------------------------------

CALLS = "control flow / calls: their bodies are made of the primitives above"


# the jet cases' custom functions
@ad.custom_jvp
def softplus(x):
    return anp.log1p(anp.exp(x))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t * ad.nn.sigmoid(x)


@ad.custom_vjp
def cube(x):
    return x * x * x


cube.defvjp(lambda x: (cube(x), x), lambda x, g: (3 * x * x * g,))


def _while_fn(x):
    # x ↦ x·2^n where n = 3 steps (the loop's course depends on a counter only)
    _, y = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, anp.sin(c[1]) + c[1]),
                          (0, x))
    return y


def _scan_fn(x):
    def body(c, xi):
        c = anp.tanh(c * xi) + xi
        return c, c * c
    c, ys = lax.scan(body, x[0], x)
    return ys + c


# the CUDA cases' custom functions
@ad.custom_jvp
def _softplus_cuda(x):
    return anp.log1p(anp.exp(x))


@_softplus_cuda.defjvp
def _softplus_cuda_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus_cuda(x), t * P.logistic_p.bind(x)


@ad.custom_vjp
def _clipped(x):
    return anp.sin(x)


_clipped.defvjp(lambda x: (anp.sin(x), anp.cos(x)), lambda c, g: (anp.clip(g * c, -0.5, 0.5),))


def _remat_case(x):
    f = lambda y: anp.sum(ad.checkpoint(lambda z: anp.sin(ad.checkpoint_name(z * 2.0, "h")))(y))  # noqa: E731
    return f(x), ad.grad(f)(x)


_x5 = u((5,), seed=3)
_REMAT = Cuda(_remat_case, (_x5,))
declare("custom_jvp_call", jet=Jet(lambda x: softplus(x) + ad.scipy.special.erf(x), xs3),
        special=CALLS,
        cuda=Cuda(lambda x: (_softplus_cuda(x),
                             ad.grad(lambda y: anp.sum(_softplus_cuda(y)))(x)), (_x5,)),
        jit="test_custom_jvp_call")
declare("custom_vjp_call", jet=Jet(lambda x: cube(anp.sin(x)), x3), special=CALLS,
        cuda=Cuda(lambda x: (_clipped(x), ad.grad(lambda y: anp.sum(_clipped(y)))(x)), (_x5,)),
        jit="test_custom_vjp_call")
declare("custom_lin", jet=Jet(lambda x: ad.jvp(cube, (anp.sin(x),), (x,))[1], x3),
        special=CALLS,
        cuda=Cuda(lambda x, t: ad.jvp(_clipped, (x,), (t,)), (_x5, u((5,), seed=9))),
        jit="test_custom_lin")
declare("linear_solve", jet=Jet(lambda x: _linear_solve_fn(anp.diag(2.0 + x * x), anp.sin(x)),
                                 x3),
        special=CALLS,
        cuda=Cuda(_linear_solve_fn, (np.array([[3.0, 0.5], [-0.4, 2.0]]), _x5[:2])),
        jit="test_linear_solve")
declare("remat", jet=Jet(ad.checkpoint(lambda x: anp.sin(x) * x), x3), special=CALLS,
        cuda=_REMAT, jit="test_remat_and_name")
declare("name", jet=Jet(lambda x: ad.checkpoint_name(anp.exp(x), "e") * x, x3), special=CALLS,
        cuda=_REMAT, jit="test_remat_and_name")
declare("cond", jet=Jet(lambda x: lax.cond(x[0] > 0.0, anp.sin, lambda v: v * v, x), x3),
        special=CALLS,
        cuda=Cuda(lambda x, p: lax.cond(p > 0, lambda v: anp.sin(v), lambda v: v * 2.0, x),
                  (_x5, np.float64(1.0)), (_x5, np.float64(-1.0))),
        jit="test_control_flow")
declare("while", jet=Jet(_while_fn, x3), special=CALLS,
        cuda=Cuda(lambda x: lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 1.5),
                                           (0, x)), (_x5,)),
        jit="test_control_flow")
declare("scan", jet=Jet(_scan_fn, x3), special=CALLS,
        cuda=Cuda(lambda x, m: lax.scan(lambda cr, v: (cr + v, (cr * v, anp.sum(v))),
                                        0.0 * m[0], m), (_x5, u((3, 2)))),
        jit="test_control_flow")
declare("pure_callback",
        jet="opaque (host code): Taylor mode through it says to give it a custom_jvp "
            "(tests/test_jet.py::test_opaque_primitives_say_what_to_do)",
        special="calls the user's Python function",
        cuda=Cuda(lambda x: ad.pure_callback(lambda v: np.cos(v) * 2.0,
                                             ad.ShapeDtypeStruct(x.shape, x.dtype), x) + 1.0,
                  (_x5,)),
        jit="its jit cases (compiled, vs numpy): tests/test_ported_gaps.py")
declare("debug_callback",
        # a side effect on the primal, no results: the jet of the rest is unchanged
        jet=Jet(lambda x: (ad.debug.callback(lambda v: None, x), anp.sin(x))[1], x3),
        special="no results (calls the user's Python function)",
        cuda="tests/test_cuda_backend.py::test_debug_callback_runs_on_the_host_in_order",
        jit="its jit cases (calls counted, values seen): tests/test_debug_callback.py")
