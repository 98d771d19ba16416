"""One table of op records: sample inputs for every primitive, shared by the tests.

``RECORDS[name]`` is the list of records of primitive ``name``: each holds argument
makers (``A``, ``I``, ``B``, ``C`` and the matrix makers below: ``make(rng, dtype)``
builds the operand, float ones in the test's float dtype) and the primitive's
parameters (a ``DTypeParams`` when they depend on that dtype: call primitives carry
jaxprs). Three suites read it:

* ``tests/test_primitives.py``: abstract_eval against impl, check_grads, zero tangents
  of non-differentiable primitives, the transpose identity of linear ones;
* ``tests/test_vmap.py``: each record's batch rule against a Python loop of ``impl``;
* ``tests/test_jit_lowering.py``: jit(backend="cpu") of each record against the
  interpreter, the records of one primitive family compiled as one program.

Adding a primitive means adding its records here; every suite fails for a registered
primitive without one. Primitives of other modules (custom derivatives, control flow,
checkpointing, callbacks) get theirs from tracing a use of their public API.

>>> sorted(RECORDS)[:3]
['abs', 'acos', 'acosh']
>>> r = RECORDS["dot_general"][0]
>>> [x.shape for x in r.make(np.random.default_rng(0), np.float64)]
[(2, 3), (3, 4)]
"""
import numpy as np

import autodiff as ad
import autodiff.numpy as anp

from test_numpy import A

FLOATS = [np.float32, np.float64]


def I(*shape, lo=0, hi=3):
    """A random integer (int64) array in [lo, hi)."""
    return A(*shape, kind="i", lo=lo, hi=hi)


def B(*shape):
    """A random boolean array."""
    return A(*shape, kind="b")


def C(value, dtype=np.int64):
    """A fixed (integer) array argument."""
    return A(values=value, dtype=dtype)


class _Matrix(A):
    """A float (stack of) square matrices from standard normal entries, then ``shape_up``."""

    def make(self, rng, dt):
        return np.asarray(self.shape_up(rng.standard_normal(self.shape)), dtype=dt)


class WellConditioned(_Matrix):
    """A general (non-symmetric) matrix ``N + 3 I``: far from singular, any triangle."""

    def shape_up(self, x):
        return x + 3 * np.eye(self.shape[-1])


class Sym(_Matrix):
    """A symmetric indefinite matrix ``N + Nᵀ``."""

    def shape_up(self, x):
        return x + np.swapaxes(x, -1, -2)


class WithInf(A):
    """A random float array whose first element is +inf."""

    def make(self, rng, dt):
        x = rng.uniform(self.lo, self.hi, self.shape)
        x.flat[0] = np.inf
        return np.asarray(x, dtype=dt)


class DTypeParams(dict):
    """Parameters that depend on the sample's float dtype (call primitives carry jaxprs)."""

    def __init__(self, make):
        super().__init__(make(np.float64))
        self.make = make


class Record:
    """One sample use of a primitive: its argument makers and parameters.

    ``fd=False`` marks values where finite differences do not apply (infinities): the
    derivative checks against finite differences leave the record out, exact identities
    (jvp against vjp) keep it.
    """

    def __init__(self, name, args, params, fd=True):
        self.name, self.args, self._params, self.fd = name, list(args), params, fd

    def params(self, dt=np.float64):
        p = self._params
        return p.make(dt) if isinstance(p, DTypeParams) else p

    def make(self, rng, dt):
        return [a.make(rng, dt) for a in self.args]

    @property
    def float_args(self):
        """Positions of the float operands."""
        return [k for k, a in enumerate(self.args) if isinstance(a, A) and a.is_float]

    def __repr__(self):
        return f"Record({self.name}, {[getattr(a, 'shape', a) for a in self.args]})"


RECORDS = {}


def sample(name, args, fd=True, **params):
    RECORDS.setdefault(name, []).append(Record(name, args, params, fd))


def record_params():
    """(name, index) of every record, in registry order."""
    return [(n, i) for n in sorted(RECORDS) for i in range(len(RECORDS[n]))]


# ---------------------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------------------

for _n, _lo, _hi in [("exp", -2, 2), ("exp2", -2, 2), ("log", 0.3, 3), ("log1p", -0.5, 3),
                     ("expm1", -2, 2), ("tanh", -2, 2), ("logistic", -3, 3), ("sin", -2, 2),
                     ("cos", -2, 2), ("tan", -1.2, 1.2), ("asin", -0.9, 0.9),
                     ("acos", -0.9, 0.9), ("atan", -2, 2), ("sinh", -2, 2), ("cosh", -2, 2),
                     ("asinh", -2, 2), ("acosh", 1.2, 3), ("atanh", -0.9, 0.9),
                     ("sqrt", 0.3, 3), ("rsqrt", 0.3, 3), ("cbrt", 0.3, 3), ("abs", 0.3, 2),
                     ("neg", -2, 2), ("sign", -2, 2), ("floor", -3, 3), ("ceil", -3, 3),
                     ("round", -3, 3), ("is_finite", -2, 2), ("stop_gradient", -2, 2)]:
    sample(_n, [A(2, 3, lo=_lo, hi=_hi)])
    sample(_n, [A(lo=_lo, hi=_hi)])
sample("abs", [I(4, lo=-3, hi=3)])
sample("neg", [I(4, lo=-3, hi=3)])
sample("not", [B(2, 3)])
sample("not", [I(3, lo=-3, hi=3)])
for _y in (3, 2, 1, 0, -2):
    sample("integer_pow", [A(2, 3, lo=0.5, hi=2)], y=_y)
sample("integer_pow", [I(3, lo=-3, hi=3)], y=3)

for _n, _lo, _hi in [("add", -2, 2), ("sub", -2, 2), ("mul", -2, 2), ("div", 0.5, 2),
                     ("pow", 0.5, 2), ("max", -2, 2), ("min", -2, 2), ("atan2", 0.3, 2),
                     ("mod", 0.5, 3), ("floor_divide", 0.5, 3), ("eq", -2, 2), ("ne", -2, 2),
                     ("lt", -2, 2), ("le", -2, 2), ("gt", -2, 2), ("ge", -2, 2)]:
    sample(_n, [A(2, 3, lo=_lo, hi=_hi), A(2, 3, lo=_lo, hi=_hi)])
    sample(_n, [A(2, 3, lo=_lo, hi=_hi), A(lo=_lo, hi=_hi)])       # rank-0 operands broadcast
    sample(_n, [A(lo=_lo, hi=_hi), A(3, lo=_lo, hi=_hi)])
for _n in ["and", "or", "xor"]:
    sample(_n, [B(2, 3), B(2, 3)])
    sample(_n, [I(3, hi=8), I(3, hi=8)])
sample("add", [I(3), I(3)])
sample("select", [B(2, 3), A(2, 3), A(2, 3)])
sample("select", [B(), A(3), A(3)])
sample("select", [B(3), A(), A(3)])
sample("convert_element_type", [A(2, 3)], new_dtype=np.dtype(np.float32))
sample("convert_element_type", [A(2, 3)], new_dtype=np.dtype(np.float64))
sample("convert_element_type", [A(3, lo=-3, hi=3)], new_dtype=np.dtype(np.int64))
sample("convert_element_type", [I(3)], new_dtype=np.dtype(np.float64))

# ---------------------------------------------------------------------------------------
# reductions, shapes, indexing, dot, cumulative and sorting, linalg
# ---------------------------------------------------------------------------------------

for _n in ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]:
    sample(_n, [A(2, 3, 4, lo=0.5, hi=2)], axes=(1,))
    sample(_n, [A(2, 3, 4, lo=0.5, hi=2)], axes=(0, 2))
    sample(_n, [A(3, lo=0.5, hi=2)], axes=(0,))
sample("reduce_prod", [A(values=[[1.5, 0.0, 2.0], [0.0, 0.0, 3.0]])], axes=(1,))
for _n in ["reduce_and", "reduce_or"]:
    sample(_n, [B(2, 3)], axes=(1,))
for _n in ["argmax", "argmin"]:
    sample(_n, [A(2, 3)], axis=1, index_dtype=np.dtype(np.int64))
    sample(_n, [A(4)], axis=0, index_dtype=np.dtype(np.int32))

sample("broadcast_in_dim", [A(3)], shape=(2, 3), broadcast_dimensions=(1,))
sample("broadcast_in_dim", [A(2, 1)], shape=(2, 4, 3), broadcast_dimensions=(0, 2))
sample("broadcast_in_dim", [A()], shape=(2, 2), broadcast_dimensions=())
sample("reshape", [A(2, 3)], new_sizes=(3, 2))
sample("reshape", [A(2, 3)], new_sizes=(6,))
sample("transpose", [A(2, 3, 4)], permutation=(2, 0, 1))
sample("squeeze", [A(2, 1, 3, 1)], dimensions=(1, 3))
sample("expand_dims", [A(2, 3)], dimensions=(0, 2))
sample("concatenate", [A(2, 3), A(2, 1), A(2, 2)], dimension=1)
sample("pad", [A(2, 3), A()], padding_config=((1, 2, 0), (0, 1, 2)))
sample("pad", [A(4), A()], padding_config=((-1, 2, 1),))
sample("slice", [A(4, 5)], start_indices=(1, 0), limit_indices=(4, 5), strides=(2, 2))
sample("slice", [A(5)], start_indices=(1,), limit_indices=(3,), strides=(1,))
sample("rev", [A(2, 3)], dimensions=(1,))
sample("rev", [A(2, 3)], dimensions=(0, 1))
sample("dynamic_slice", [A(4, 5), C(1), C(3)], slice_sizes=(2, 2))
sample("dynamic_slice", [A(4, 5), C(-1), C(9)], slice_sizes=(2, 3))          # clamped
sample("dynamic_update_slice", [A(4, 5), A(2, 2), C(1), C(2)])
sample("dynamic_update_slice", [A(4), A(2), C(7, np.int32)])
sample("gather", [A(4, 3), C([[0], [3], [0]])])
sample("gather", [A(4, 3), C([[[0, 1], [3, 2]]])])
sample("scatter_add", [A(4, 3), C([[0], [3], [0]]), A(3, 3)])
sample("scatter", [A(4, 3), C([[2], [0]]), A(2, 3)])
sample("scatter", [A(4, 3), C([[1, 2], [3, 0]]), A(2)])
sample("scatter", [A(4, 3), C([[2], [0], [2]]), A(3, 3)])      # repeated: the last one wins
sample("scatter_add", [A(5), C([[1], [1], [4], [1]]), A(4)])
sample("dot_general", [A(2, 3), A(3, 4)], dimension_numbers=(((1,), (0,)), ((), ())))
sample("dot_general", [A(5, 2, 3), A(5, 3)], dimension_numbers=(((2,), (1,)), ((0,), (0,))))
sample("dot_general", [A(3, 2), A(4, 3)], dimension_numbers=(((0,), (1,)), ((), ())))
sample("dot_general", [A(2), A(3)], dimension_numbers=(((), ()), ((), ())))
sample("dot_general", [A(2, 3, 4), A(4, 2, 3)],
       dimension_numbers=(((1, 2), (2, 0)), ((), ())))
for _n in ["cumsum", "cumprod", "cummax", "cummin"]:
    sample(_n, [A(2, 4, lo=0.5, hi=2)], axis=1, reverse=False)
    sample(_n, [A(3, 2, lo=0.5, hi=2)], axis=0, reverse=True)
sample("cumprod", [A(values=[1.5, 0.0, 2.0, -1.0])], axis=0, reverse=False)
sample("sort", [A(2, 4)], dimension=1)
sample("sort", [A(3, 2)], dimension=0)
sample("argsort", [A(2, 4)], dimension=1)
sample("iota", [], dtype=np.dtype(np.int64), shape=(2, 3), dimension=1)
sample("iota", [], dtype=np.dtype(np.float32), shape=(4,), dimension=0)
sample("cholesky", [A(3, 3, spd=True)])
sample("cholesky", [A(2, 3, 3, spd=True)])
for _l in (True, False):
    for _t in (True, False):
        sample("triangular_solve", [A(3, 3, spd=True), A(3, 2)], left_side=True, lower=_l,
               transpose_a=_t, unit_diagonal=False)
sample("triangular_solve", [A(3, 3, spd=True), A(2, 3)], left_side=False, lower=True,
       transpose_a=False, unit_diagonal=True)
sample("triangular_solve", [A(2, 3, 3, spd=True), A(2, 3, 1)], left_side=True, lower=False,
       transpose_a=False, unit_diagonal=False)
sample("solve", [A(3, 3, spd=True), A(3, 2)])
sample("solve", [A(2, 3, 3, spd=True), A(2, 3, 1)])
sample("slogdet", [A(3, 3, lo=-1, hi=1)])
sample("slogdet", [A(2, 2, 2, spd=True)])
sample("eigh", [A(3, 3, spd=True)])
sample("eigh", [A(2, 3, 3, spd=True)])

# ---------------------------------------------------------------------------------------
# more shapes and values (first written for the batching tests): infinities, integer
# operands, random (batched) indices, non-symmetric and indefinite matrices, contractions
# whose batch dimension is not leading; appended so the records above keep their indices
# ---------------------------------------------------------------------------------------

sample("is_finite", [WithInf(3, 2)])
for _n in ["and", "or", "xor"]:
    sample(_n, [I(4, lo=-3, hi=6), I(lo=-3, hi=6)])
    sample(_n, [B(), B(2, 2)])
sample("select", [B(2, 2), A(), A()])
sample("convert_element_type", [A(3, 2)], new_dtype=np.dtype(np.int32))
for _n in ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]:
    sample(_n, [A(3, 2, lo=0.5, hi=2)], axes=(0, 1))
for _n in ["reduce_and", "reduce_or"]:
    sample(_n, [B(3, 2)], axes=(0,))
    sample(_n, [B(3, 2, 2)], axes=(0, 2))
for _n in ["argmax", "argmin"]:
    sample(_n, [A(3, 4)], axis=0, index_dtype=np.dtype(np.int32))
sample("broadcast_in_dim", [A(3, 1)], shape=(3, 4), broadcast_dimensions=(0, 1))
sample("reshape", [A(6)], new_sizes=(2, 1, 3))
sample("transpose", [A(2, 3)], permutation=(1, 0))
sample("squeeze", [A(1, 2, 1)], dimensions=(0, 2))
sample("expand_dims", [A(3)], dimensions=(0,))
sample("expand_dims", [A(3, 2)], dimensions=(1, 3))
sample("concatenate", [A(2, 3), A(1, 3)], dimension=0)
sample("pad", [A(4, 3), A()], padding_config=((-1, 1, 0), (1, -1, 2)))
sample("pad", [A(3), A(values=-np.inf)], fd=False, padding_config=((2, 1, 1),))
sample("pad", [I(3, 2, lo=-3, hi=6), I(lo=-3, hi=6)], padding_config=((1, 0, 0), (0, 1, 0)))
sample("slice", [A(6)], start_indices=(1,), limit_indices=(6,), strides=(3,))
sample("dynamic_slice", [A(5, 4), I(lo=-2, hi=6), I(lo=0, hi=3)], slice_sizes=(2, 3))
sample("dynamic_update_slice", [A(5, 4), A(2, 3), I(lo=-2, hi=6), I(lo=0, hi=3)])
sample("gather", [A(5, 4), I(3, 1, lo=-5, hi=5)])                 # negative indices
sample("gather", [A(5, 4, 2), I(2, 3, 2, lo=0, hi=4)])
sample("gather", [A(5), I(1, lo=0, hi=5)])
for _n in ["scatter_add", "scatter"]:
    sample(_n, [A(5, 4), I(3, 1, lo=0, hi=5), A(3, 4)])
    sample(_n, [A(5, 4), I(2, 2, lo=0, hi=4), A(2)])
sample("dot_general", [A(4), A(4)], dimension_numbers=(((0,), (0,)), ((), ())))
sample("dot_general", [A(2, 3, 4), A(2, 4, 5)], dimension_numbers=(((2,), (1,)), ((0,), (0,))))
sample("dot_general", [A(4, 2, 3), A(3, 2)], dimension_numbers=(((2,), (0,)), ((1,), (1,))))
for _n in ["cumsum", "cumprod", "cummax", "cummin"]:
    sample(_n, [A(4, 3)], axis=0, reverse=False)                    # negative values too
    sample(_n, [A(4, 3)], axis=1, reverse=True)
sample("argsort", [A(4, 3)], dimension=0)
for _ls, _lo, _tr, _ud in [(True, True, False, False), (True, False, True, False),
                           (True, True, True, True)]:
    sample("triangular_solve", [WellConditioned(3, 3), A(3, 2)], left_side=_ls, lower=_lo,
           transpose_a=_tr, unit_diagonal=_ud)
sample("triangular_solve", [WellConditioned(3, 3), A(2, 3)], left_side=False, lower=True,
       transpose_a=False, unit_diagonal=False)
sample("solve", [WellConditioned(3, 3), A(3, 2)])
sample("solve", [WellConditioned(2, 3, 3), A(2, 3, 1)])
sample("slogdet", [WellConditioned(3, 3)])
sample("eigh", [Sym(3, 3)])


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
    RECORDS["custom_jvp_call"] = [Record("custom_jvp_call", [A(2), A(2)], DTypeParams(
        lambda dt: _call_eqn(_cj, "custom_jvp_call", x(dt), x(dt))))]
    RECORDS["custom_vjp_call"] = [Record("custom_vjp_call", [A(2), A(2)], DTypeParams(
        lambda dt: _call_eqn(_cv, "custom_vjp_call", x(dt), x(dt))))]
    # residuals (exp(x), y) consistent with the primal inputs (x, y), then the tangents
    xv, yv = [0.3, 1.2], [1.5, -0.5]
    RECORDS["custom_lin"] = [Record("custom_lin", [
        A(values=np.exp(xv)), A(values=yv), A(values=xv), A(values=yv), A(2), A(2)],
        DTypeParams(_custom_lin_params))]


_custom_samples()


# ---------------------------------------------------------------------------------------
# primitives of other modules (control flow, checkpointing, callbacks): a record is the
# equation a use of the public API records, with its operands' values at an example input
# ---------------------------------------------------------------------------------------

def _eqn_sample(prim_name, fun, *example):
    def find(dt):
        args = [np.asarray(a, dt) if np.asarray(a).dtype.kind == "f" else a for a in example]
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
    # float operands random (dtype from the test), the rest (indices, counters) as recorded
    makers = [A(*np.shape(v)) if np.asarray(v).dtype.kind == "f"
              else A(values=np.asarray(v), dtype=np.asarray(v).dtype) for v in ins]
    RECORDS.setdefault(prim_name, []).append(
        Record(prim_name, makers, DTypeParams(lambda dt: find(dt)[1])))


#: the values debug_callback's records passed to the host (their calls are counted in
#: tests/test_debug_callback.py; the jit test here checks the compiled program made them)
DEBUG_SEEN = []


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
    # no results
    _eqn_sample("debug_callback",
                lambda a: (ad.debug.callback(DEBUG_SEEN.append, a), a * 2.0)[1], x)


_other_samples()

# the name the primitive tests have always used
SAMPLES = RECORDS
