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


def complex_dtype(dt):
    """The complex dtype that goes with the test's float dtype: float32 -> complex64,
    float64 -> complex128."""
    return np.dtype(np.complex64 if np.dtype(dt) == np.float32 else np.complex128)


class Z(A):
    """A random complex array: real and imaginary parts uniform in [lo, hi) (``im_lo``,
    ``im_hi`` for the imaginary part when given), of the complex dtype that goes with the
    test's float dtype (``complex_dtype``); ``values=`` fixes it. It counts as an inexact
    operand: the suites differentiate along it (in both real directions) like a float one."""

    def __init__(self, *shape, lo=-2.0, hi=2.0, im_lo=None, im_hi=None, values=None):
        super().__init__(*shape, lo=lo, hi=hi, values=values)
        self.kind = "c"
        self.im_lo = lo if im_lo is None else im_lo
        self.im_hi = hi if im_hi is None else im_hi

    def make(self, rng, dt):
        if self.values is not None:
            return np.asarray(self.values, dtype=complex_dtype(dt))
        x = rng.uniform(self.lo, self.hi, self.shape) \
            + 1j * rng.uniform(self.im_lo, self.im_hi, self.shape)
        return np.asarray(self.shape_up(x), dtype=complex_dtype(dt))

    def shape_up(self, x):
        return x

    @property
    def is_float(self):
        return True


class HermitianPD(Z):
    """A Hermitian positive definite (stack of) complex matrices ``X Xᴴ + n I``."""

    def shape_up(self, x):
        return x @ np.conj(np.swapaxes(x, -1, -2)) + self.shape[-1] * np.eye(self.shape[-1])


class Hermitian(Z):
    """A Hermitian indefinite complex matrix ``X + Xᴴ``."""

    def shape_up(self, x):
        return x + np.conj(np.swapaxes(x, -1, -2))


class WellConditionedC(Z):
    """A general complex matrix ``X + 3 I``, far from singular."""

    def shape_up(self, x):
        return x + 3 * np.eye(self.shape[-1])


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
sample("logsumexp", [A(2, 3, 4)], axes=(1,))
sample("logsumexp", [A(2, 3, 4, lo=-30, hi=30)], axes=(0, 2))
sample("logsumexp", [A(3)], axes=(0,))
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
sample("roll", [A(2, 3)], shift=2, axis=1)
sample("roll", [A(4, 2, 3)], shift=1, axis=0)
sample("roll", [I(3, 4)], shift=3, axis=1)
sample("dynamic_slice", [A(4, 5), C(1), C(3)], slice_sizes=(2, 2))
sample("dynamic_slice", [A(4, 5), C(-1), C(9)], slice_sizes=(2, 3))          # clamped
sample("dynamic_update_slice", [A(4, 5), A(2, 2), C(1), C(2)])
sample("dynamic_update_slice", [A(4), A(2), C(7, np.int32)])
sample("gather", [A(4, 3), C([[0], [3], [0]])])
sample("gather", [A(4, 3), C([[[0, 1], [3, 2]]])])
sample("index_gather", [A(4, 3), C([0, 3, -1])])
sample("index_gather", [A(4, 3, 2), C([[0, -1], [3, 2]]), C([[1, 0], [2, -3]], np.int32)])
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
sample("index_gather", [A(5, 4), I(3, 2, lo=-5, hi=5), I(3, 2, lo=-4, hi=4)])   # negative
sample("index_gather", [A(5), I(lo=0, hi=5)])                                   # rank-0
sample("index_gather", [A(200, 2), C([0, -2, 100], np.int8)])      # int8 into 200 rows
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
# complex operands (docs/complex.md): every primitive numpy defines on complex input,
# complex64 under float32 and complex128 under float64 (Z). Appended so the records above
# keep their indices. Domains keep away from branch cuts (log, sqrt, the inverse
# trigonometric functions cut the real axis outside (-1, 1) or the imaginary one outside
# (-i, i)), where finite differences across the cut would not apply.
# ---------------------------------------------------------------------------------------

for _n, _lo, _hi, _ilo, _ihi in [
        ("exp", -2, 2, -2, 2), ("exp2", -2, 2, -2, 2), ("log", 0.3, 3, -2, 2),
        ("log1p", -0.5, 3, -2, 2), ("expm1", -2, 2, -2, 2), ("tanh", -1, 1, -0.7, 0.7),
        ("logistic", -2, 2, -1, 1), ("sin", -2, 2, -1, 1), ("cos", -2, 2, -1, 1),
        ("tan", -1, 1, -1, 1), ("asin", -0.9, 0.9, -1, 1), ("acos", -0.9, 0.9, -1, 1),
        ("atan", -2, 2, -0.8, 0.8), ("sinh", -2, 2, -1, 1), ("cosh", -2, 2, -1, 1),
        ("asinh", -2, 2, -0.8, 0.8), ("acosh", 0.5, 3, 0.3, 2), ("atanh", -0.9, 0.9, -1, 1),
        ("sqrt", 0.3, 3, -2, 2), ("rsqrt", 0.3, 3, -2, 2), ("abs", -2, 2, 0.3, 2),
        ("neg", -2, 2, -2, 2), ("sign", -2, 2, 0.3, 2), ("round", -3, 3, -3, 3),
        ("is_finite", -2, 2, -2, 2), ("stop_gradient", -2, 2, -2, 2)]:
    sample(_n, [Z(2, 3, lo=_lo, hi=_hi, im_lo=_ilo, im_hi=_ihi)])
sample("is_finite", [Z(values=[1 + 2j, np.inf + 0j, 1 + 1j * np.inf, np.nan + 1j])])
sample("sign", [Z(values=[0j, 3 - 4j, -2j])], fd=False)      # sign(0) = 0
sample("abs", [Z(values=[3 + 4j, -1j])])
for _y in (3, 2, 0, -2):
    sample("integer_pow", [Z(2, 3, lo=0.5, hi=2)], y=_y)
for _n, _lo, _hi in [("add", -2, 2), ("sub", -2, 2), ("mul", -2, 2), ("div", 0.5, 2),
                     ("pow", 0.5, 2), ("eq", -2, 2), ("ne", -2, 2)]:
    sample(_n, [Z(2, 3, lo=_lo, hi=_hi), Z(2, 3, lo=_lo, hi=_hi)])
    sample(_n, [Z(lo=_lo, hi=_hi), Z(3, lo=_lo, hi=_hi)])
sample("eq", [Z(values=[1 + 1j, 2j, 3]), Z(values=[1 + 1j, 2, 3])])
# max/min and the order comparisons: numpy's lexicographic order (ties in the real part
# decided by the imaginary part)
for _n in ["max", "min", "lt", "le", "gt", "ge"]:
    sample(_n, [Z(2, 3), Z(2, 3)])
    sample(_n, [Z(values=[1 + 2j, 1 - 1j, 3, 2j]), Z(values=[1 + 1j, 1 + 0j, -3j, 2j])],
           fd=False)
sample("select", [B(2, 3), Z(2, 3), Z(2, 3)])
sample("select", [B(3), Z(), Z(3)])
sample("convert_element_type", [Z(2, 3)], new_dtype=np.dtype(np.complex64))
sample("convert_element_type", [Z(2, 3)], new_dtype=np.dtype(np.complex128))
sample("convert_element_type", [A(2, 3)], new_dtype=np.dtype(np.complex128))
sample("convert_element_type", [Z(2, 3)], new_dtype=np.dtype(np.float64))  # numpy's real part
for _n in ["real", "imag", "conj"]:
    sample(_n, [Z(2, 3)])
    sample(_n, [Z()])
sample("complex", [A(2, 3), A(2, 3)])
sample("complex", [A(2, 3), A()])
sample("complex", [A(), A(3)])

# numpy orders complex numbers lexicographically (real part, then imaginary part): max,
# min, argmax, sort and the running maximum follow it. Samples with repeated real parts
# make the imaginary part decide (where the real part is tied, moving it reorders, so
# finite differences do not apply: fd=False keeps them to the exact identities).
_TIES = [[1 + 2j, 1 - 1j, -1 + 3j, 1 + 0.5j], [0.5j, -0.5j, 2 - 1j, 2 + 1j]]
for _n in ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]:
    sample(_n, [Z(2, 3, 4, lo=0.5, hi=1.5)], axes=(1,))
    sample(_n, [Z(3, 2, lo=0.5, hi=1.5)], axes=(0, 1))
for _n in ["reduce_max", "reduce_min"]:
    sample(_n, [Z(values=_TIES)], axes=(1,), fd=False)
for _n in ["argmax", "argmin"]:
    sample(_n, [Z(2, 3)], axis=1, index_dtype=np.dtype(np.int64))
    sample(_n, [Z(values=_TIES)], axis=1, index_dtype=np.dtype(np.int64))
sample("broadcast_in_dim", [Z(2, 1)], shape=(2, 4, 3), broadcast_dimensions=(0, 2))
sample("reshape", [Z(2, 3)], new_sizes=(3, 2))
sample("transpose", [Z(2, 3, 4)], permutation=(2, 0, 1))
sample("squeeze", [Z(2, 1, 3)], dimensions=(1,))
sample("expand_dims", [Z(2, 3)], dimensions=(0, 2))
sample("concatenate", [Z(2, 3), Z(2, 1)], dimension=1)
sample("pad", [Z(2, 3), Z()], padding_config=((1, 2, 0), (0, 1, 2)))
sample("pad", [Z(4), Z()], padding_config=((-1, 2, 1),))
sample("slice", [Z(4, 5)], start_indices=(1, 0), limit_indices=(4, 5), strides=(2, 2))
sample("rev", [Z(2, 3)], dimensions=(1,))
sample("roll", [Z(2, 3)], shift=1, axis=1)
sample("dynamic_slice", [Z(4, 5), C(1), C(3)], slice_sizes=(2, 2))
sample("dynamic_update_slice", [Z(4, 5), Z(2, 2), C(1), C(2)])
sample("gather", [Z(4, 3), C([[0], [3], [0]])])
sample("index_gather", [Z(4, 3), C([0, 3, -1]), C([2, 0, 1])])
sample("scatter_add", [Z(4, 3), C([[0], [3], [0]]), Z(3, 3)])
sample("scatter", [Z(4, 3), C([[2], [0], [2]]), Z(3, 3)])
sample("dot_general", [Z(2, 3), Z(3, 4)], dimension_numbers=(((1,), (0,)), ((), ())))
sample("dot_general", [Z(5, 2, 3), Z(5, 3)], dimension_numbers=(((2,), (1,)), ((0,), (0,))))
sample("dot_general", [Z(4), Z(4)], dimension_numbers=(((0,), (0,)), ((), ())))
for _n in ["cumsum", "cumprod", "cummax", "cummin"]:
    sample(_n, [Z(2, 4, lo=0.5, hi=1.5)], axis=1, reverse=False)
    sample(_n, [Z(3, 2, lo=0.5, hi=1.5)], axis=0, reverse=True)
for _n in ["cummax", "cummin"]:
    sample(_n, [Z(values=_TIES)], axis=1, reverse=False, fd=False)
sample("sort", [Z(2, 4)], dimension=1)
sample("sort", [Z(values=_TIES)], dimension=1, fd=False)
sample("argsort", [Z(values=_TIES)], dimension=1)
sample("argsort", [Z(3, 2)], dimension=0)
sample("cholesky", [HermitianPD(3, 3)])
sample("cholesky", [HermitianPD(2, 3, 3)])
for _l, _t in [(True, False), (False, True)]:
    sample("triangular_solve", [WellConditionedC(3, 3), Z(3, 2)], left_side=True, lower=_l,
           transpose_a=_t, unit_diagonal=False)
sample("triangular_solve", [WellConditionedC(3, 3), Z(2, 3)], left_side=False, lower=True,
       transpose_a=False, unit_diagonal=False)
sample("solve", [WellConditionedC(3, 3), Z(3, 2)])
sample("solve", [WellConditionedC(2, 3, 3), Z(2, 3, 1)])
sample("slogdet", [WellConditionedC(3, 3)])
sample("eigh", [HermitianPD(3, 3)])
sample("eigh", [Hermitian(3, 3)])
# the discrete Fourier transform (autodiff/primitives/fft.py) on the trailing axes: even
# and odd lengths (the Nyquist bin of rfft/irfft exists for even ones only), one and two axes
sample("fft", [Z(2, 4)], fft_type="FFT", fft_lengths=(4,))
sample("fft", [Z(3, 2, 3)], fft_type="IFFT", fft_lengths=(2, 3))
sample("fft", [A(2, 6)], fft_type="RFFT", fft_lengths=(6,))
sample("fft", [A(3, 5)], fft_type="RFFT", fft_lengths=(3, 5))
sample("fft", [Z(2, 4)], fft_type="IRFFT", fft_lengths=(6,))
sample("fft", [Z(3, 3)], fft_type="IRFFT", fft_lengths=(3, 5))


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

# the name the primitive tests have always used
SAMPLES = RECORDS
