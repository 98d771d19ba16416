"""The backend seam (autodiff/jit_runtime.py, ``Backend``): jit runs whatever record is
registered under a name and reads every decision from the record, never from the name."""
import ast
import pathlib

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import UnsupportedDTypeError, UnsupportedError
from autodiff.jit_runtime import (BACKENDS, Backend, get_backend, interpreted_entry,
                                  register_backend)

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def registered():
    """register_backend for one test; the records it added are removed after."""
    added = []

    def reg(b):
        added.append(b.name)
        return register_backend(b)
    yield reg
    for n in added:
        BACKENDS.pop(n, None)


def f(x, y):
    return anp.sum(anp.sin(x) * y) + 2.0 * x[0]


def test_the_three_builtin_backends_are_records():
    assert list(BACKENDS)[:3] == ["cpu", "interpret", "cuda"]
    assert get_backend("cpu").tiered and get_backend("cpu").lower is not None
    assert get_backend("interpret").lower is None and not get_backend("interpret").tiered
    cuda = get_backend("cuda")
    assert cuda.device_arrays and cuda.require is not None and cuda.lower is not None


def test_a_registered_backend_runs_through_its_record(registered):
    calls = []

    def entry(closed, out_tree, leaf_keys, dynamic):
        calls.append(([e.primitive.name for e in closed.jaxpr.eqns], leaf_keys, dynamic))
        return interpreted_entry(closed, out_tree)
    registered(Backend("traced-interpreter", "test", entry=entry))
    x, y = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.25, -2.0])
    g = ad.jit(f, backend="traced-interpreter")
    want = np.sum(np.sin(x) * y) + 2.0 * x[0]
    assert g(x, y) == pytest.approx(want, rel=1e-15)
    assert g(x, y) == pytest.approx(want, rel=1e-15)          # a cache hit: no new entry
    assert len(calls) == 1
    prims, keys, dynamic = calls[0]
    assert "sin" in prims and "reduce_sum" in prims
    assert keys == [((3,), np.dtype(np.float64))] * 2
    assert dynamic is None                                     # no lower(): nothing sized
    # jit of grad composes through the same record
    gx = ad.jit(ad.grad(f), backend="traced-interpreter")(x, y)
    np.testing.assert_allclose(gx, np.cos(x) * y + np.array([2.0, 0.0, 0.0]), rtol=1e-14)
    assert len(calls) == 2
    # lower() of a backend without a lowering: the jaxpr, no source
    low = g.lower(x, y)
    assert low.source is None and "sin" in str(low.jaxpr)


def test_a_backend_with_a_lowering_is_asked_for_it(registered):
    seen = []
    cpu = get_backend("cpu")

    def lower(closed, dynamic):
        seen.append(dynamic)
        return cpu.lower(closed, dynamic)
    registered(Backend("lowering-only", "test", lower=lower,
                       entry=lambda closed, out_tree, keys, dynamic:
                       interpreted_entry(closed, out_tree)))
    x, y = np.ones(4), np.arange(4.0)
    low = ad.jit(f, backend="lowering-only").lower(x, y)
    assert seen == [frozenset()]                               # specialized on first sight
    assert "sin" in low.source and low.jaxpr is not None
    # no compile in the record: lower(...).compile() builds the entry with ``entry``
    np.testing.assert_allclose(low.compile()(x, y), f(x, y), rtol=1e-14)


def test_lowered_compile_runs_the_records_compile(registered):
    """``jitted.lower(...).compile()`` hands the lowered program to the record's
    ``compile`` (it used to pick the CPU or CUDA path by the program's class name)."""
    cpu = get_backend("cpu")
    compiled = []

    def compile_(closed, out_tree, keys, prog):
        compiled.append(prog)
        return cpu.compile(closed, out_tree, keys, prog)
    registered(Backend("compiling", "test", lower=cpu.lower, compile=compile_,
                       entry=lambda closed, out_tree, keys, dynamic:
                       interpreted_entry(closed, out_tree)))
    x, y = np.linspace(0, 1, 4), np.arange(4.0)
    low = ad.jit(f, backend="compiling").lower(x, y)
    c = low.compile()
    assert compiled == [low.program]
    np.testing.assert_allclose(c(x, y), f(x, y), rtol=1e-14)
    assert get_backend("interpret").compile is None and get_backend("cuda").compile


def test_require_runs_where_jit_is_called(registered):
    def require(source):
        raise UnsupportedError("this machine has no frobnicator", source=source)
    registered(Backend("needs-frobnicator", "test", require=require,
                       entry=lambda *a: pytest.fail("never reached")))
    with pytest.raises(UnsupportedError, match="frobnicator") as info:
        ad.jit(f, backend="needs-frobnicator")
    assert "test_backend_seam.py" in str(info.value)           # names the user's line


def test_an_unsupported_dtype_falls_back_to_the_interpreter(registered, caplog):
    def entry(closed, out_tree, keys, dynamic):
        raise UnsupportedDTypeError("no float32 kernels here")
    registered(Backend("float64-only", "test", entry=entry))
    x = np.linspace(0, 1, 5, dtype=np.float32)
    g = ad.jit(lambda x: anp.sum(x * x), backend="float64-only")
    with caplog.at_level("WARNING", logger="autodiff.jit"):
        r = g(x)
    assert r == pytest.approx(float(np.sum(x * x)), rel=1e-6)
    assert "no float32 kernels here" in caplog.text
    assert g._entry_for(x).reason == "no float32 kernels here"


def test_device_arrays_reach_only_a_backend_that_takes_them(registered):
    class Dev:
        """A stand-in device array: numpy converts it, a device backend takes it as is."""
        _autodiff_device = "fake"
        shape, dtype = (3,), np.dtype(np.float64)

        def __array__(self, dtype=None, copy=None):
            return np.array([1.0, 2.0, 3.0])
    got = []

    def entry(closed, out_tree, keys, dynamic):
        def call(*leaves):
            got.append(type(leaves[0]))
            return interpreted_entry(closed, out_tree).call(*leaves)
        return interpreted_entry(closed, out_tree).__class__(call, closed, out_tree)
    registered(Backend("host", "test", entry=entry))
    registered(Backend("device", "test", entry=entry, device_arrays=True))
    h = ad.jit(lambda x: anp.sum(x), backend="host")(Dev())
    d = ad.jit(lambda x: anp.sum(x), backend="device")(Dev())
    assert h == d == 6.0
    assert got == [np.ndarray, Dev]


def test_unknown_names_are_typed_errors():
    with pytest.raises(ValueError, match=r"unknown backend 'tpu'.*'cpu', 'interpret', 'cuda'"):
        ad.jit(f, backend="tpu")
    g = ad.jit(lambda x: x + 1.0)
    try:
        ad.config.update("default_backend", "tpu")
        with pytest.raises(ValueError, match="config.default_backend: unknown backend 'tpu'"):
            g(1.0)
    finally:
        ad.config.update("default_backend", "cpu")
    assert g(1.0) == 2.0
    with pytest.raises(TypeError, match="expects a Backend"):
        register_backend("cpu")
    with pytest.raises(TypeError, match="entry must be callable"):
        Backend("x", "test", entry=None)


def test_jit_never_compares_a_backend_name():
    """The seam's rule: autodiff/jit.py and the runtime's ``Lowered`` decide from the
    record (tiered, lower, device_arrays, require, compile), so no comparison in them
    names a backend or a program's class."""
    names = {"cpu", "interpret", "cuda", "Program", "CudaProgram"}
    jit_tree = ast.parse((ROOT / "autodiff" / "jit.py").read_text())
    runtime = ast.parse((ROOT / "autodiff" / "jit_runtime.py").read_text())
    lowered = next(n for n in runtime.body if isinstance(n, ast.ClassDef) and n.name == "Lowered")
    found = []
    for tree in (jit_tree, lowered):
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                for c in [node.left] + node.comparators:
                    elts = c.elts if isinstance(c, (ast.Tuple, ast.List, ast.Set)) else [c]
                    found += [(node.lineno, e.value) for e in elts
                              if isinstance(e, ast.Constant) and e.value in names]
    assert found == []


# ---------------------------------------------------------------------------------
# The kernel plan (backends/kernel_plan.py): records the emitters render
# ---------------------------------------------------------------------------------

def _plan_case(x, w):
    t = anp.reshape(anp.tanh(x).T, (-1,))          # a transpose then a reshape that moves
    small = x[0, :2] * 3.0                          # a tiny value: scalars, unrolled
    return anp.sum(anp.reshape(t, x.shape) @ w) + anp.sum(small * small), x @ w


def test_the_plan_is_records_that_the_emitter_renders():
    from autodiff.backends.kernel_plan import (KernelPlan, Opaque, ReduceGroups, Reshape,
                                               Unrolled)
    x, w = np.linspace(-1, 1, 12).reshape(3, 4), np.linspace(0, 1, 20).reshape(4, 5)
    low = ad.jit(_plan_case).lower(x, w)
    plan = low.plan
    assert isinstance(plan, KernelPlan)
    stmts = plan.entry + [st for c in plan.nests for st in c.post]
    kinds = [type(st) for st in stmts]
    assert kinds.count(Opaque) == 2 and Reshape in kinds, kinds      # two products
    assert Unrolled in kinds and ReduceGroups in kinds, kinds
    assert all(st.lines is None for st in stmts)    # nothing was written while planning
    dots = [st for st in stmts if isinstance(st, Opaque)]
    assert {st.eqn.primitive.name for st in dots} == {"dot_general"}
    assert all(r[0] == "array" for st in dots for r in st.refs)
    # the results: the loss a scalar, the product an array the caller gets
    assert plan.outputs[0][0] == "scalar" and plan.outputs[1][0] == "array"
    # every statement's text is in the source, in the plan's order
    text = low.source
    at = 0
    for st in stmts:
        at = text.index(f"= {st.eqn.primitive.name}", at) + 1     # ValueError: not there
    lines = plan.describe().splitlines()
    assert any(ln.startswith("nest ") for ln in lines)
    assert sum("opaque dot_general" in ln for ln in lines) == 2
    got = ad.jit(_plan_case)(x, w)
    want = _plan_case(x, w)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_plans_are_data_and_programs_pickle_without_them():
    # a plan is records all the way down (views are IndexMap dataclasses, not closures):
    # it pickles and compares; the compile worker sends programs back without theirs
    import pickle
    from autodiff.backends.kernel_plan import Composed, Reverse, Transpose
    low = ad.jit(lambda x: anp.sum(anp.tanh(x).T[::-1] * x[::-1].T)).lower(np.ones((4, 3)))
    views = [loc[2] for loc in low.plan.loc.values() if loc[0] == "view"]
    assert Transpose((1, 0)) in views and Composed(Reverse(frozenset({0}), ("3", "4")),
                                                   Transpose((1, 0))) in views, views
    back = pickle.loads(pickle.dumps(low.plan))
    assert back.describe() == low.plan.describe()
    assert [loc[2] for loc in back.loc.values() if loc[0] == "view"] == views
    from autodiff.backends.numba_cpu import lower
    from autodiff.transforms.passes import run_pipeline
    x, w = np.ones((3, 4)), np.ones((4, 5))
    prog = lower(run_pipeline(ad.make_jaxpr(_plan_case)(x, w)))
    assert prog.plan is not None and prog.plan.nests
    back = pickle.loads(pickle.dumps(prog))
    assert back.plan is None and back.source == prog.source
    assert ad.jit(_plan_case, backend="interpret").lower(x, w).plan is None
