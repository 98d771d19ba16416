"""The op records: sample inputs for every primitive, and how each suite tests it.

A primitive's *row* holds its records and its flags. ``RECORDS[name]`` is the list of
records of primitive ``name``: each holds argument makers (``A``, ``I``, ``B``, ``C`` and
the matrix makers below: ``make(rng, dtype)`` builds the operand, float ones in the test's
float dtype) and the primitive's parameters (a ``DTypeParams`` when they depend on that
dtype: call primitives carry jaxprs). Three suites run every record:

* ``tests/test_primitives.py``: abstract_eval against impl, check_grads, zero tangents
  of non-differentiable primitives, the transpose identity of linear ones;
* ``tests/test_vmap.py``: each record's batch rule against a Python loop of ``impl``;
* ``tests/test_jit_records.py``: jit(backend="cpu") of each record against the
  interpreter, the records of one primitive family compiled as one program.

The flags (``declare(name, jet=..., special=..., cuda=..., jit=...)``) say how the suites
that test a primitive on inputs of their own take it. Each of those suites enumerates the
rows, so a row is the one place a primitive's tests are declared:

* ``jet=`` (``tests/test_jet.py``): a :class:`Jet` case (Taylor coefficients against
  nested jvps), ``True`` for the case derived from the row's first all-float record, or
  the reason there is none (no derivative, opaque);
* ``special=`` (``tests/test_special_values.py``): a :class:`Special` row (nan, ±inf, ±0
  and subnormal inputs against numpy, in every mode), or the reason it is exempt;
* ``cuda=`` (``tests/test_cuda_backend.py``, in numba-cuda's simulator): an
  :class:`Elementwise` flag for the generic elementwise program, a :class:`Cuda` case, or
  the reason there is none;
* ``jit=`` (``tests/test_jit_lowering.py``): an :class:`Elementwise` flag for the generic
  elementwise cases, else where the primitive's lowering cases are (a test of that file,
  or another file).

The rows are written by family, as the library's primitives are:
``op_records/elementwise.py``, ``op_records/arrays.py`` (reductions, shapes, indexing,
dot, cumulative and sorting, linear algebra, fft) and ``op_records/calls.py`` (custom
derivatives, control flow, checkpointing, callbacks: records from tracing a use of their
public API). Adding a primitive means adding its row; every suite fails for a registered
primitive without one.

>>> sorted(RECORDS)[:3]
['abs', 'acos', 'acosh']
>>> r = RECORDS["dot_general"][0]
>>> [x.shape for x in r.make(np.random.default_rng(0), np.float64)]
[(2, 3), (3, 4)]
>>> ROWS["sin"].special.ref is np.sin, ROWS["floor"].jet == NO_DERIVATIVE
(True, True)
"""
import numpy as np

import autodiff as ad

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


# ---------------------------------------------------------------------------------------
# the flags
# ---------------------------------------------------------------------------------------

EXACT, ULP4 = 0, 4          # a Special row's tolerance in ulps (0: bitwise, signed zeros)

#: the ``jet=`` reason of the primitives whose Taylor rule gives zero coefficients
NO_DERIVATIVE = ("no derivative: zero coefficients "
                 "(tests/test_jet.py::test_nondifferentiable_rules_give_zero_coefficients)")


class Jet:
    """``jet=``: ``ad.jet`` of ``f`` at ``args`` (a cubic input path through them) equals the
    derivatives from nesting ``jvp`` six times, to ``rtol`` relative; ``f`` must bind the
    row's primitive."""

    def __init__(self, f, *args, rtol=1e-10):
        self.f, self.args, self.rtol = f, list(args), rtol


class Special:
    """``special=``: a row of the special-value table ``table`` ("unary", "binary" or
    "reduce": over the last axis of the matrix of all pairs of special values): ``ref`` is
    numpy's function, ``ulps`` the tolerance of finite results (``EXACT``: bitwise, the
    sign of zero included), ``params`` the primitive's parameters."""

    def __init__(self, table, ref, ulps=EXACT, **params):
        assert table in ("unary", "binary", "reduce")
        self.table, self.ref, self.ulps, self.params = table, ref, ulps, params


class Elementwise:
    """``cuda=`` / ``jit=`` of an elementwise primitive: the suite's generic program of it,
    its float operands uniform in [``lo``, ``hi``); ``halves`` puts exact halves, integers
    and signed zeros first (rounding), ``nonzero`` keeps the second operand away from zero
    (division), ``rtol`` replaces the dtype's tolerance; ``bitwise``: bool and integer
    operands instead. The number of operands is the records'."""

    def __init__(self, lo=-3.0, hi=3.0, *, halves=False, nonzero=False, rtol=None,
                 bitwise=False):
        self.lo, self.hi, self.halves, self.nonzero = lo, hi, halves, nonzero
        self.rtol, self.bitwise = rtol, bitwise


BITWISE = Elementwise(bitwise=True)


class Cuda:
    """``cuda=``: ``jit(fn, backend="cuda")`` against the interpreter on each argument set
    of ``sets`` (leaf by leaf: dtype, shape, values to ``rtol``/``atol`` when given); with
    ``contains``, the first set's program must contain the row's primitive."""

    def __init__(self, fn, *sets, contains=True, **tol):
        self.fn, self.sets, self.contains, self.tol = fn, list(sets), contains, tol


class Row:
    """A primitive's records and flags (``None``: not declared)."""

    FLAGS = ("jet", "special", "cuda", "jit")

    def __init__(self, name):
        self.name, self.records = name, RECORDS.setdefault(name, [])
        self.jet = self.special = self.cuda = self.jit = None

    def jet_case(self):
        """The :class:`Jet` case (derived for ``jet=True``); ``None`` for a reason."""
        if self.jet is True:
            r = next(r for r in self.records
                     if r.args and len(r.float_args) == len(r.args)
                     and not any(isinstance(a, Z) for a in r.args))
            args, params = r.make(np.random.default_rng(0), np.float64), r.params()
            prim = ad.core.primitives[self.name]
            return Jet(lambda *xs: prim.bind(*xs, **params), *args)
        return self.jet if isinstance(self.jet, Jet) else None

    def __repr__(self):
        return f"Row({self.name}, {len(self.records)} records)"


# the fixed inputs of the jet cases (small vectors; a cubic path through them)
x3 = np.array([0.3, 0.55, 0.8])
xs3 = np.array([-0.7, 0.4, 1.3])          # mixed signs (abs, max, sort, …)
y3 = np.array([0.9, 0.2, 0.6])
big = np.array([1.3, 2.0, 1.7])           # acosh's domain
M = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
idx = np.array([2, 0, 2])
F64, F32 = np.float64, np.float32


def u(shape, dtype=F64, lo=-2.0, hi=2.0, seed=0):
    """A fixed uniform array (the cuda cases' inputs)."""
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(dtype)


def spd(n, batch=(), seed=0):
    """A fixed symmetric positive definite (stack of) matrix ``X Xᵀ + n I``."""
    a = np.random.default_rng(seed).normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


RECORDS = {}
ROWS = {}


def row(name):
    """The row of ``name`` (a new, empty one the first time)."""
    if name not in ROWS:
        ROWS[name] = Row(name)
    return ROWS[name]


def sample(name, args, fd=True, **params):
    """Append a record to ``name``'s row."""
    row(name).records.append(Record(name, args, params, fd))


def declare(name, **flags):
    """Set flags of ``name``'s row (each once)."""
    r = row(name)
    for k, v in flags.items():
        assert k in Row.FLAGS, f"unknown flag {k}="
        assert getattr(r, k) is None, f"{name}: {k}= declared twice"
        setattr(r, k, v)


def record_params():
    """(name, index) of every record, in registry order."""
    return [(n, i) for n in sorted(RECORDS) for i in range(len(RECORDS[n]))]


from . import elementwise, arrays, calls  # noqa: E402,F401  (the rows, by family)
from .calls import DEBUG_SEEN  # noqa: E402,F401

# the name the primitive tests have always used
SAMPLES = RECORDS
