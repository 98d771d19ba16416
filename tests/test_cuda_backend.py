"""The CUDA backend (backends/numba_cuda.py) agrees with the interpreter and the CPU backend.

There is no GPU in CI: these tests run the kernels in numba-cuda's simulator. The
simulator must be switched on (``NUMBA_ENABLE_CUDASIM=1``) before ``numba.cuda`` is first
imported, and a process cannot switch back, so a normal suite run (no variable set)
collects one driver test here that reruns this file in a subprocess with the variable
set; other test files never see the simulator. Two more subprocess tests check the
optional dependency: a CPU jit never imports ``numba.cuda``, and ``backend="cuda"``
without a GPU and without the simulator raises ``UnsupportedError`` saying what is
missing. Sizes are tiny: the simulator runs each CUDA thread as a Python thread.
"""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

IN_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import autodiff as ad  # noqa: E402
import autodiff.numpy as anp  # noqa: E402
from autodiff import lax  # noqa: E402
from autodiff import primitives as P  # noqa: E402
from autodiff.core import ClosedJaxpr, Jaxpr, primitives  # noqa: E402
from op_records import ROWS, Cuda, Elementwise, spd as _spd  # noqa: E402

F64, F32 = np.float64, np.float32


def u(shape, dtype=F64, lo=-2.0, hi=2.0, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(dtype)


def _prims_in(jaxpr, acc):
    for e in jaxpr.eqns:
        acc.add(e.primitive.name)
        for p in e.params.values():
            for q in (p if isinstance(p, tuple) else (p,)):
                if isinstance(q, ClosedJaxpr):
                    _prims_in(q.jaxpr, acc)
                elif isinstance(q, Jaxpr):
                    _prims_in(q, acc)
    return acc


def _tol(dt, rtol, atol):
    if np.dtype(dt) in (np.float32, np.complex64):
        return dict(rtol=rtol or 2e-5, atol=atol or 2e-5)
    return dict(rtol=rtol or 1e-11, atol=atol or 1e-12)


def check(fn, arg_sets, name=None, rtol=None, atol=None):
    """jit(fn, backend="cuda") == the interpreter, leaf by leaf (dtype, shape, values)."""
    jf = ad.jit(fn, backend="cuda")
    ref = ad.jit(fn, backend="interpret")
    if name is not None:
        found = _prims_in(ad.make_jaxpr(fn)(*arg_sets[0]).jaxpr, set())
        assert name in found, f"case for {name} does not produce it: {sorted(found)}"
    for args in arg_sets:
        got, want = jf(*args), ref(*args)
        gl, wl = ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)
        assert len(gl) == len(wl)
        for g, w in zip(gl, wl):
            assert isinstance(g, ad.devices.CudaArray), type(g)
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape, g.dtype)
            if w.dtype.kind in "fc":
                np.testing.assert_allclose(g, w, err_msg=str(name), **_tol(w.dtype, rtol, atol))
            else:
                np.testing.assert_array_equal(g, w, err_msg=str(name))
    return jf


def _kernels_both_compilers_take(src):
    """Whether a program's kernels avoid what numba-cuda-mlir 0.6.0 rejects and the
    simulator runs (gpu_check.py --ptx --compiler numba-cuda-mlir found both): an
    array's ``reshape`` in a kernel (typed with its source's rank) and a shared array
    declared in a device function (an internal MLIR check)."""
    kind = decorated = None
    for ln in src.split("\n"):
        if ln.startswith("@cuda.jit"):
            decorated = "device" if "device=True" in ln else "kernel"
        elif ln.startswith("def "):
            kind, decorated = decorated, None     # a kernel, a device function, the host's
        elif ln and not ln[0].isspace() and not ln.startswith("#"):
            kind = None                  # a top-level statement: the function ended
        elif kind and ".reshape(" in ln:
            return False
        elif kind == "device" and "cuda.shared.array" in ln:
            return False
    return True


@pytest.fixture(autouse=True)
def _sources_both_compilers_take(monkeypatch):
    """Every program a test loads has kernels numba-cuda-mlir takes too (the simulator
    runs what it rejects; gpu_check.py --ptx --compiler numba-cuda-mlir compiles them)."""
    if not IN_SIMULATOR:
        yield
        return
    from autodiff.backends import numba_cuda
    load = numba_cuda.load

    def checked(source):
        assert _kernels_both_compilers_take(source), source
        return load(source)
    monkeypatch.setattr(numba_cuda, "load", checked)
    yield


# ---------------------------------------------------------------------------------
# one case per primitive: the ``cuda=`` flags of the op records' rows (tests/op_records/),
# and the records of the lowering registry (LOWERINGS) that are no primitive's
# ---------------------------------------------------------------------------------

def _unary(name, flag):
    prim = primitives[name]
    lo, hi = flag.lo, flag.hi
    x = u((3, 4), F64, lo, hi)
    if flag.halves:
        x[0, :4] = [0.5, 1.5, -2.5, -0.0]
    return (lambda x, y: (prim.bind(x), prim.bind(y))), [(x, u((5,), F32, lo, hi, 1))]


def _binary(name, flag):
    prim = primitives[name]
    x, y = u((3, 4), F64, flag.lo, flag.hi, 1), u((3, 4), F64, flag.lo, flag.hi, 2)
    if flag.nonzero:
        y[np.abs(y) < 0.1] = 0.5
    y[0, :2] = x[0, :2]
    return (lambda x, y, s, z: (prim.bind(x, y), prim.bind(x, P.broadcast_in_dim(s, x.shape, ())),
                                prim.bind(z, z[::-1]))), \
        [(x, y, np.float64(1.5), y[:2].astype(F32))]


def _bitwise(name):
    prim = primitives[name]
    b = np.array([True, False, True, False])
    return (lambda b, c, i, j: (prim.bind(b, c), prim.bind(i, j))), \
        [(b, b[::-1].copy(), np.array([3, 5, 6, 0]), np.array([1, 4, 7, 2]))]


def _case(fn, *sets, name=None, **kw):
    return dict(fn=fn, sets=list(sets), name=name, kw=kw)


def _cases():
    c = {}
    for n, r in sorted(ROWS.items()):
        flag = r.cuda
        if isinstance(flag, Cuda):
            c[n] = _case(flag.fn, *flag.sets, name=n if flag.contains else None, **flag.tol)
        elif isinstance(flag, Elementwise) and flag.bitwise:
            fn, sets = _bitwise(n)
            c[n] = _case(fn, *sets, name=n)
        elif isinstance(flag, Elementwise):
            fn, sets = (_unary if len(r.records[0].args) == 1 else _binary)(n, flag)
            c[n] = _case(fn, *sets, name=n, rtol=flag.rtol)
    return c


CASES = _cases() if IN_SIMULATOR else {}
if IN_SIMULATOR:
    from autodiff.backends.cuda_math import cuda as _sim_cuda
# records without a registry case: where they are covered instead
NOT_TRACEABLE = {"_copy": "an internal copy the planner inserts, covered by every case",
                 **{n: r.cuda for n, r in ROWS.items() if isinstance(r.cuda, str)}}


def _registry():
    from autodiff.backends import numba_cpu
    return sorted(set(numba_cpu.LOWERINGS) | set(ROWS))


@pytest.mark.parametrize("name", _registry())
def test_registry_primitive_agrees_with_interpreter(name):
    if name in NOT_TRACEABLE:
        assert NOT_TRACEABLE[name]
        return
    assert name in CASES, f"primitive {name!r} has no case for the cuda backend"
    case = CASES[name]
    check(case["fn"], case["sets"], name=case["name"], **case["kw"])


def test_kernel_parameters_are_never_builtins():
    """What a kernel reads and does not define is a parameter, except the module's globals.
    A builtin taken for a parameter (``complex`` of the ``complex`` primitive was) is passed
    as a Python class: the simulator runs it, the real compiler refuses the launch ("Cannot
    determine Numba type of <class 'type'>": issue 32). Every registry case's kernels."""
    import ast
    import builtins
    bad = {}
    for name, case in sorted(CASES.items()):
        try:
            src = ad.jit(case["fn"], backend="cuda").lower(*case["sets"][0]).source
        except ad.errors.UnsupportedError:
            continue                          # a program the interpreter runs: no kernels
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("_k"):
                got = [a.arg for a in node.args.args if hasattr(builtins, a.arg)]
                if got:
                    bad[name] = got
    assert not bad, bad


def test_host_calls_are_the_listed_ones_and_each_is_tested():
    """Every opaque primitive the emitter does not write as device code falls back to one
    host call (numpy on a host copy); each has its registry case above."""
    from autodiff.backends import numba_cuda as nc
    assert nc.HOST_CALLS == frozenset({"debug_callback", "pure_callback"}), \
        sorted(nc.HOST_CALLS)
    for n in nc.HOST_CALLS - {"debug_callback"}:
        assert n in CASES
    f = ad.jit(lambda x: ad.pure_callback(np.sort, ad.ShapeDtypeStruct(x.shape, x.dtype),
                                          x * 2.0) + 1.0, backend="cuda")
    src = f.lower(u((4,))).source
    assert "_rt.host_call(_E[0]" in src
    np.testing.assert_allclose(np.asarray(f(np.array([3.0, 1.0, 2.0, 0.0]))), [1, 3, 5, 7])


def test_sorts_are_kernels_in_numpys_order(monkeypatch):
    """``sort`` and ``argsort`` are one kernel (a thread per element writes it at its
    rank in the lane: smaller elements, and equal ones earlier), stable, NaN last, -0.0
    equal to 0.0 as in numpy, on any axis, for floats, integers and booleans, and inside
    a device loop (a scan sorting its carry: one launch whatever the steps; it was a host
    loop of a host call per step). A lane longer than ``SORT_LANE_MAX`` sorts in the
    library (``_rt.sort``: CuPy's stable sort on a GPU, numpy on the host here), and so
    does a complex one (numpy's order of its NaNs)."""
    from autodiff.backends import numba_cuda_statements as st
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 9))
    x[1, 3] = x[1, 5] = x[4, 0] = np.nan
    x[2, :4] = 0.0
    x[2, 1] = -0.0
    x[3] = np.round(x[3])
    fs = [lambda x: anp.sort(x), lambda x: anp.argsort(x), lambda x: anp.sort(x, axis=0),
          lambda x: anp.argsort(x, axis=0), lambda x: anp.sort((anp.nan_to_num(x) * 3).astype(anp.int32)),
          lambda x: anp.argsort(x > 0), lambda x: anp.sort(x.astype(anp.float32), axis=0),
          ad.grad(lambda x: anp.sum(anp.sort(anp.nan_to_num(x)) * anp.arange(9.0)))]
    for f in fs:
        g = ad.jit(f, backend="cuda")
        assert "host_call" not in g.lower(x).source and "_rt.sort" not in g.lower(x).source
        got, want = np.asarray(g(x)), np.asarray(ad.jit(f, backend="interpret")(x))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(ad.jit(anp.argsort, backend="cuda")(x[2])),
                                  np.argsort(x[2], kind="stable"))

    def sorts(h0, xs):
        def body(h, x):
            h = anp.sort(anp.tanh(h * 1.5 + x))
            return h, anp.argsort(h - x)[0]
        h, ys = lax.scan(body, h0, xs)
        return anp.sum(h * anp.arange(6.0)) + anp.sum(ys)
    _one_device_loop(sorts, u((6,), seed=1), 1)
    _one_device_loop(ad.grad(sorts, argnums=(0, 1)), u((6,), seed=1), 1)
    monkeypatch.setattr(st, "SORT_LANE_MAX", 4)
    for f, a in ((lambda x: anp.argsort(x, axis=0) + 1, x), (anp.sort, x[1]),
                 (anp.sort, x[2] + 1j * x[1])):
        g = ad.jit(f, backend="cuda")
        assert "_rt.sort(" in g.lower(a).source
        np.testing.assert_array_equal(np.asarray(g(a)), ad.jit(f, backend="interpret")(a))


def test_debug_callback_runs_on_the_host_in_order():
    seen = []
    f = ad.jit(lambda x: (ad.debug.callback(lambda v: seen.append(np.asarray(v).sum()), x),
                          x * 2.0)[1], backend="cuda")
    out = f(np.arange(3.0))
    assert seen == [3.0]
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 4.0])


# ---------------------------------------------------------------------------------
# kernels: strategies, views, dtypes, device arrays
# ---------------------------------------------------------------------------------

def jax_softmax(x):
    z = x - anp.max(x, axis=-1, keepdims=True)
    return anp.exp(z) / anp.sum(anp.exp(z), axis=-1, keepdims=True)


def test_reduction_strategies_all_agree():
    """grid (all to one value), block (one block per kept element), rows (a group of
    threads per kept element), serial (short rows, or several axis sets in one nest)
    kernels, float64 and float32 (summed in float64)."""
    from autodiff.backends import numba_cuda as nc
    fns = {"grid": (lambda x: anp.sum(anp.exp(x) * 2.0), (5, 70)),
           "block": (lambda x: anp.max(anp.sin(x), axis=1), (5, 70)),
           "serial": (lambda x: (anp.sum(x * x, axis=0), anp.mean(x, axis=1), anp.min(x)),
                      (5, 70)),
           "column": (lambda x: anp.sum(anp.tanh(x), axis=0), (3, 130)),
           # many rows, the innermost axis kept: tiles of columns x chunks of rows
           "split": (lambda x: (anp.sum(anp.tanh(x), axis=0), anp.max(x, axis=0),
                                anp.sum(x > 0, axis=0), anp.sum(x * 2.0, axis=(0, 1))),
                     (300, 70)),
           "split 3-d": (lambda x: anp.mean(x * x, axis=(0, 1)), (9, 20, 45)),
           # rows shorter than a block: a group of _rt.ROW_GROUP threads (a warp) per row
           "rows": (lambda x: (anp.max(anp.sin(x), axis=1), anp.sum(x * x, axis=-1),
                               anp.sum(x > 0.5, axis=1)), (37, 20)),
           "rows 3-d": (lambda x: anp.prod(1.0 + 0.1 * x, axis=(1, 2)), (13, 3, 5)),
           "rows softmax": (lambda x: jax_softmax(x), (11, 9))}
    for strategy, (f, shape) in fns.items():
        for dt in (F64, F32):
            check(f, [(u(shape, dt),)])
        src = ad.jit(f, backend="cuda").lower(u(shape)).source
        if strategy == "column":        # the innermost axis kept: a thread per column
            assert "serial kernel" in src and "block kernel" not in src
            continue
        if strategy.startswith("split"):
            assert "split kernel" in src and "_rt.split_chunks(" in src, src
            continue
        if strategy.startswith("rows"):
            assert "rows kernel" in src and (          # (or a small program's one block)
                "_rt.group_blocks(" in src or "[1, _TPB]" in src), src
            continue
        assert f"{strategy} kernel" in src, src
        if strategy != "serial":
            assert "cuda.shared.array(_TPB" in src and "cuda.syncthreads()" in src
        assert "shfl" not in src
    assert nc.HOST_CALLS.isdisjoint({"reduce_sum", "dot_general", "scan"})


def test_device_arrays_in_and_out():
    x = np.linspace(-1.0, 1.0, 7)
    d = ad.device_put(x, "cuda")
    assert isinstance(d, ad.devices.CudaArray) and d.shape == (7,) and d.dtype == F64
    np.testing.assert_array_equal(np.asarray(d), x)
    f = ad.jit(lambda v: anp.tanh(v) * 2.0, backend="cuda")
    r = f(d)
    assert isinstance(r, ad.devices.CudaArray)
    np.testing.assert_allclose(np.asarray(f(r)), np.tanh(np.tanh(x) * 2.0) * 2.0, rtol=1e-12)
    assert f.cache_info().misses == 1           # device and numpy arguments: one signature
    np.testing.assert_allclose(np.asarray(f(x)), np.tanh(x) * 2.0, rtol=1e-12)
    assert f.cache_info().misses == 1 and f.cache_info().size == 1

    def slow(*a):
        raise AssertionError("a device array's warm call took the slow path")
    f._call_slow = slow        # warm calls with device arrays take jit's fast path
    np.testing.assert_allclose(np.asarray(f(d)), np.tanh(x) * 2.0, rtol=1e-12)
    del f._call_slow
    g = ad.jit(lambda v, k: anp.sum(v * k))     # the CPU backend: copied to the host
    assert float(g(d, 2.0)) == pytest.approx(float(np.sum(x * 2.0)))
    assert float(g(x, 2.0)) == pytest.approx(float(np.sum(x * 2.0)))
    assert g.cache_info().misses == 1
    # eager anp and transforms accept device arrays (on a host copy)
    np.testing.assert_allclose(anp.sin(d), np.sin(x))
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(v ** 2))(d), 2 * x)
    assert ad.block_until_ready(r) is r
    assert ad.device_get({"r": d})["r"].tolist() == x.tolist()
    # a rank-0 result is its 1-element device buffer, not a reshape of it (a new
    # numba-cuda array object: tens of microseconds on a GPU's host, every call)
    s = ad.jit(lambda v: anp.sum(v * v), backend="cuda")(d)
    assert s.shape == () and s.ndim == 0 and s._dev.shape == (1,)
    assert float(s) == pytest.approx(float(np.sum(x * x))) and np.asarray(s).shape == ()
    np.testing.assert_allclose(np.asarray(f(s)), np.tanh(float(s)) * 2.0, rtol=1e-12)
    assert [dv.platform for dv in ad.devices()] == ["cpu", "cuda"]
    assert ad.devices("cuda")[0].device_kind == "CUDA simulator"


class _ForeignArray:
    """A CUDA array of another library (CuPy's, PyTorch's) as jit sees one: shape, dtype
    and ``__cuda_array_interface__`` naming the stream it was made on, nothing numpy can
    read (``np.asarray`` of a CuPy array raises). ``dev`` is the simulator's device array
    holding its data, which the stand-in for numba-cuda's ``as_cuda_array`` returns."""
    __array__ = None

    def __init__(self, dev, stream):
        self.dev, self.shape, self.dtype = dev, dev.shape, dev.dtype
        self.__cuda_array_interface__ = {"shape": dev.shape, "typestr": dev.dtype.str,
                                         "data": (1 << 20, False), "version": 3,
                                         "strides": None, "stream": stream}


def test_cuda_arrays_of_other_libraries_are_read_in_place(monkeypatch):
    from numba import cuda
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    from autodiff.backends import cuda_runtime as rt
    synced = []

    def as_cuda_array(o, sync):
        synced.append(sync)
        return o.dev
    monkeypatch.setattr(rt, "_as_cuda_array", as_cuda_array)
    x, y = u((3, 4)), u((3, 4), seed=1)

    def f(a, b):
        return anp.sum(anp.tanh(a) * b, axis=0) + a[0]
    want = np.sum(np.tanh(x) * y, axis=0) + x[0]
    jf, cpu = ad.jit(f, backend="cuda"), ad.jit(f)
    for stream, sync in ((1, False), (None, False), (2, False), (0x7F00, True)):
        a, b = _ForeignArray(cuda.to_device(x), stream), _ForeignArray(cuda.to_device(y), 1)
        del synced[:]
        with monkeypatch.context() as m:       # on the device: no host copy of either
            m.setattr(FakeCUDAArray, "copy_to_host", _no_host_copy)
            r = jf(a, b)
        # a default stream is ordered with the kernels; a stream of the user's own is
        # waited for before they read the array
        assert synced == [sync, False]
        assert isinstance(r, ad.devices.CudaArray)
        np.testing.assert_allclose(np.asarray(r), want, rtol=1e-12)
        # host backends, eager transforms and device_get copy it to the host
        np.testing.assert_allclose(cpu(a, b), want, rtol=1e-12)
        np.testing.assert_allclose(ad.grad(lambda v: anp.sum(v ** 3))(a), 3 * x ** 2,
                                   rtol=1e-12)
        np.testing.assert_array_equal(ad.device_get([a])[0], x)
    assert jf.cache_info().misses == 1 and cpu.cache_info().misses == 1

    def slow(*args):
        raise AssertionError("a warm call with CUDA arrays of another library took the "
                             "slow path")
    jf._call_slow = slow           # warm calls take jit's fast path (the interface's key)
    np.testing.assert_allclose(np.asarray(jf(a, b)), want, rtol=1e-12)
    del jf._call_slow
    d = ad.device_put({"a": a}, "cuda")["a"]            # no copy: the same device memory
    assert isinstance(d, ad.devices.CudaArray) and d._dev is a.dev
    # numba-cuda's own device arrays are read in place too (they were copied to the host
    # and back on every call); a strided one is made C-contiguous once
    dx = cuda.to_device(x)
    with monkeypatch.context() as m:
        m.setattr(FakeCUDAArray, "copy_to_host", _no_host_copy)
        r = jf(dx, cuda.to_device(y))
    np.testing.assert_allclose(np.asarray(r), want, rtol=1e-12)
    strided = cuda.to_device(np.arange(24.0).reshape(4, 6))[:, ::2]
    np.testing.assert_array_equal(
        np.asarray(ad.jit(lambda v: v * 2.0, backend="cuda")(strided)),
        np.arange(24.0).reshape(4, 6)[:, ::2] * 2.0)


def _no_host_copy(self, *a, **k):
    raise AssertionError("a device argument was copied to the host")


def test_buffers_are_freed_at_last_use():
    f = ad.jit(lambda x: anp.sum(anp.sort(anp.exp(x)) * 2.0) + anp.sum(x), backend="cuda")
    src = f.lower(u((6,))).source
    host = src.split("def kernel(")[1]
    assert "del " in host
    np.testing.assert_allclose(float(np.asarray(f(u((6,))))),
                               np.sum(np.sort(np.exp(u((6,)))) * 2.0) + np.sum(u((6,))))


def test_the_pool_reuses_dead_buffers_and_never_an_output():
    from autodiff.backends import cuda_runtime as rt

    def mlp(p, x, y):
        (W1, b1), (W2, b2) = p
        h = anp.tanh(x @ W1 + b1)
        return anp.mean((h @ W2 + b2 - y) ** 2)
    p = [(u((6, 8), seed=1), u((8,), seed=2)), (u((8, 3), seed=3), u((3,), seed=4))]
    x, y = u((5, 6), seed=5), u((5, 3), seed=6)
    f = ad.jit(ad.value_and_grad(mlp), backend="cuda")
    src = f.lower(p, x, y).source
    assert "_rt.give(" in src
    rt.release_pool()
    first = f(p, x, y)
    before = rt.pool_info()
    second = f(p, 2.0 * x, y)
    after = rt.pool_info()
    # the second call allocates its five results and nothing else
    assert after["allocated"] - before["allocated"] == 5
    assert after["reused"] - before["reused"] >= 5
    # results are never pooled: the first call's still hold their values
    for got, want in ((first, ad.value_and_grad(mlp)(p, x, y)),
                      (second, ad.value_and_grad(mlp)(p, 2.0 * x, y))):
        for g, w in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-11, atol=1e-12)
    assert {id(a) for a in ad.tree_util.tree_leaves(first)}.isdisjoint(
        id(a) for a in ad.tree_util.tree_leaves(second))


def test_a_buffer_another_name_reaches_is_not_pooled():
    def f(x):
        e = anp.exp(x) * 2.0
        return e.reshape(2, 3), anp.sum(anp.sort(e.T.reshape(-1)))   # views and a host call
    g = ad.jit(f, backend="cuda")
    xs = [u((3, 2), seed=s) for s in range(3)]
    outs = [g(x) for x in xs]
    for x, (a, b) in zip(xs, outs):
        np.testing.assert_allclose(np.asarray(a), (np.exp(x) * 2.0).reshape(2, 3), rtol=1e-12)
        np.testing.assert_allclose(float(np.asarray(b)), np.sum(np.exp(x) * 2.0), rtol=1e-12)


def _host_loops():
    """Loops whose bodies hold a matrix product (a library call: host loops), with carries
    the body makes, passes through unchanged, and returns again as a per-step output."""
    def rnn(h0, W, xs):
        def step(c, x):
            h, g, k = c
            h = anp.tanh(h @ W + x * g)
            return (h, h * 0.5 + 0.5, k), (h * 2.0, h)   # h: a carry and an output
        (h, g, k), (ys, hs) = lax.scan(step, (h0, h0, W), xs)
        return anp.sum(h) + anp.sum(g) + anp.sum(ys * hs) + anp.sum(k)

    def wl(h0, W, n):
        def body(c):
            return anp.tanh(c[0] @ W) + 0.1, c[1] * 1.5, c[2] + 1
        h, s, _ = lax.while_loop(lambda c: c[2] < n, body, (h0, h0, 0))
        return anp.sum(h * s)

    def wl_view(h0, W, n):        # r: a view of the old h, so h's buffer is kept a step
        def body(c):
            return anp.tanh(c[0] @ W) + 0.1, c[1] * 1.5, c[0].reshape(-1), c[3] + 1
        h, s, r, _ = lax.while_loop(lambda c: c[3] < n, body, (h0, h0, h0.reshape(-1), 0))
        return anp.sum(h * s) + anp.sum(r * r[::-1])
    return rnn, wl, wl_view


@pytest.fixture
def products_on_the_host():
    """Host loops: a matrix product in a loop body stays a cuBLAS call (the tests' bodies
    are small enough for a device loop otherwise: ``dots_as_nests``)."""
    old = ad.config.jit_cuda_loop_products
    ad.config.update("jit_cuda_loop_products", False)
    yield
    ad.config.update("jit_cuda_loop_products", old)


def _cond_loss(h0, W, xs):
    """A scan host loop with a ``cond`` on a carried loss."""
    def step(c, x):
        h, loss = c
        h = anp.tanh(h @ W + x)
        loss = lax.cond(loss > 0.5, lambda v: v * 0.5, lambda v: v + anp.sum(h * h), loss)
        return (h, loss), loss
    return lax.scan(step, (h0, 0.0), xs)


@pytest.mark.usefixtures("products_on_the_host")
def test_host_loops_allocate_nothing_per_step():
    """A host loop gives a step's outputs and the carries it replaced back to the pool
    (``_rt.give``): a warm call allocates as much at 2 steps as at 5, and the values, with
    carries passed through, returned twice and kept as views, are the interpreter's (the
    gradient holds the forward scan, with residuals, and the reverse one)."""
    from autodiff.backends import cuda_runtime as rt
    rnn, wl, wl_view = _host_loops()
    h0, W = u((2, 3), seed=1), u((3, 3), seed=2) * 0.3

    cond_loss = _cond_loss         # its cond's index and operand are read as elements
    fns = [(ad.grad(rnn, argnums=(0, 1)), lambda T: (h0, W, u((T, 2, 3), seed=T))),
           (wl, lambda T: (h0, W, T)), (wl_view, lambda T: (h0, W, T)),
           (cond_loss, lambda T: (h0, W, u((T, 2, 3), seed=T)))]
    for fn, args in fns:
        g = ad.jit(fn, backend="cuda", static_argnums=(2,) if fn in (wl, wl_view) else ())
        assert "_rt.give(_old" in g.lower(*args(2)).source
        allocated = []
        for T in (2, 5):
            rt.release_pool()     # what other tests left there: the warm call refills it
            g(*args(T))
            before = rt.pool_info()["allocated"]
            got = g(*args(T))
            allocated.append(rt.pool_info()["allocated"] - before)
            for a, b in zip(ad.tree_util.tree_leaves(got),
                            ad.tree_util.tree_leaves(fn(*args(T)))):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11,
                                           atol=1e-12)
        if fn is wl_view:         # h's buffer is new each step; s's is still recycled
            assert allocated[1] - allocated[0] == 3, allocated
        else:
            assert allocated[0] == allocated[1], (fn, allocated)


def _host_reads(fn, args):
    """Element reads of device values by the host (not by kernel threads) during a warm
    call of ``fn``, and its result."""
    import threading
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    fn(*args)
    reads, getitem = [], FakeCUDAArray.__getitem__

    def counted(self, key):
        got = getitem(self, key)
        if np.ndim(got) == 0 and threading.current_thread() is threading.main_thread():
            reads.append(key)
        return got
    FakeCUDAArray.__getitem__ = counted
    try:
        got = fn(*args)
    finally:
        FakeCUDAArray.__getitem__ = getitem
    return len(reads), got


@pytest.mark.usefixtures("products_on_the_host")
def test_host_loop_scalars_stay_on_the_device():
    """A host loop's rank-0 values that the body computes on the device stay there: a
    per-step output (a loss per step, next to a matrix product) is copied into its stack
    on the device (``_rt.set_elem``), and a carry computed from arrays (an accumulated
    loss, and what is computed from it) is a 1-element device buffer from step to step
    (``device_carries``). The host reads no device value inside the loop (it used to
    read each, waiting for every launch before it), and a warm call allocates as much at
    2 steps as at 5. A value computed from host scalars alone (a counter, a per-step
    scalar read from one host copy) stays a host value. A ``while`` host loop keeps its
    carries so too (its predicate function takes them where they are)."""
    from autodiff.backends import cuda_runtime as rt
    W = u((3, 3), seed=2) * 0.3

    def f(h0, xs):
        def step(c, xt):
            h, loss, scale, i = c
            x, t = xt
            h = anp.tanh(h @ W + x * t)
            loss = loss + anp.sum(h * h) * scale
            # per step: a loss and an element (device values), and a host value (from t)
            return (h, loss, scale * 0.5 + loss * 0.01, i + 1), \
                (anp.sum(h * h), x[0] * 2.0, t * 3.0)
        ts = anp.linspace(0.5, 1.0, xs.shape[0])
        (h, loss, scale, n), (losses, firsts, ts3) = lax.scan(step, (h0, 0.0, 1.0, 0),
                                                              (xs, ts))
        return (anp.sum(h) + anp.sum(losses * anp.arange(losses.shape[0])) + loss * scale,
                losses, firsts, ts3, n)

    h0 = u((3,), seed=1)
    src = ad.jit(f, backend="cuda").lower(h0, u((2, 3), seed=2)).source
    # the loss per step is written into its stack by the reduction's kernel, the element
    # (read from a slice of xs) by the one-thread kernel computing x[0] * 2.0
    assert "_rt.set_elem(" not in src and "_rt.to_device(_yh" in src
    assert "_YS0[_step] = " in src and "_YS1[_step] = " in src
    assert src.count("_DC = _rt.scalar_buffer(") == 2          # loss and scale; not i
    loss_grad = ad.grad(lambda h0, xs: f(h0, xs)[0])
    for fn in (f, loss_grad):
        g = ad.jit(fn, backend="cuda")
        allocated, counts, got = [], [], None
        for T in (2, 5):
            xs = u((T, 3), seed=T)
            del got                 # (results dropped go back to the pool)
            g(h0, xs)
            g(h0, xs)
            before = rt.pool_info()["allocated"]
            n, got = _host_reads(g, (h0, xs))
            counts.append(n)
            allocated.append(rt.pool_info()["allocated"] - before)
            for a, b in zip(ad.tree_util.tree_leaves(got),
                            ad.tree_util.tree_leaves(fn(h0, xs))):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12,
                                           atol=1e-13)
        assert counts[0] == counts[1], (fn, counts)     # no device value read per step
        assert allocated[1] - allocated[0] == 0, (fn, allocated)

    def wl(h0, n):                # a while host loop: the same for its carries
        def body(c):
            h, err, acc, i = c
            h2 = anp.tanh(h @ W) + 0.1
            return h2, anp.sum(anp.abs(h2 - h)), acc + anp.sum(h2) * err, i + 1
        h, err, acc, i = lax.while_loop(lambda c: c[3] < n, body, (h0, 1.0, 0.0, 0))
        return anp.sum(h) + acc, err, i
    g = ad.jit(wl, backend="cuda", static_argnums=(1,))
    assert g.lower(h0, 2).source.count("_DC = _rt.scalar_buffer(") == 2      # err, acc
    counts = []
    for T in (2, 5):
        n, got = _host_reads(g, (h0, T))
        counts.append(n)
        for a, b in zip(got, wl(h0, T)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    assert counts[0] == counts[1], counts


def _stack_slices_and_copies(fn, args):
    """Per warm call of ``fn``: the device arrays the host slices (``X[t]``: an array
    object each on hardware) and the device-to-device copies it starts, counting the
    host's own calls only: not those inside numba-cuda's simulator, nor the views that
    ``_rt.matmul`` makes of its operands (CuPy's on hardware; the simulator has no CuPy,
    and its tiled kernel's path reshapes and slices numba-cuda arrays)."""
    import threading
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    fn(*args)
    got, main = {"slices": 0, "copies": 0}, threading.main_thread()
    getitem, copy = FakeCUDAArray.__getitem__, FakeCUDAArray.copy_to_device

    def ours():
        if threading.current_thread() is not main:
            return False
        caller = sys._getframe(2).f_code
        frame, inside = sys._getframe(2), set()
        while frame is not None and len(inside) < 4:
            inside.add(frame.f_code.co_name)
            frame = frame.f_back
        return "matmul" not in inside and "/numba/" not in caller.co_filename

    def counted_getitem(self, key):
        out = getitem(self, key)
        if np.ndim(out) and ours():
            got["slices"] += 1
        return out

    def counted_copy(self, *a, **kw):
        if ours():
            got["copies"] += 1
        return copy(self, *a, **kw)
    FakeCUDAArray.__getitem__, FakeCUDAArray.copy_to_device = counted_getitem, counted_copy
    try:
        fn(*args)
    finally:
        FakeCUDAArray.__getitem__, FakeCUDAArray.copy_to_device = getitem, copy
    return got


@pytest.mark.usefixtures("products_on_the_host")
def test_host_loops_read_and_write_stack_rows_in_place():
    """A host loop's body reads its step's slice of ``xs`` from the whole stack at the
    step index (its kernels index the stack; ``_rt.matmul`` takes a row), and its loop
    nests write its per-step outputs (elementwise values, a rank-0 loss) into the
    caller's stacks: the host slices no stack and copies nothing per step (it made a
    device array object per slice and started a copy per output). Readers that need an
    array of their own (a sort, a result passed through) still get a slice, and the
    values agree either way: forward and gradient, reversed, float32, xs read through
    views and by products with and without a permutation."""
    W = u((6, 6), seed=3) * 0.3
    V = u((3, 5, 4), seed=4)

    def rnn(h0, xs, reverse=False):
        Wd = W.astype(h0.dtype)

        def step(h, x):
            h = anp.tanh(Wd @ h + x[::-1] * 0.5)
            return h, (anp.sum(h * h), h * 2.0, h)
        h, (ls, hs, hh) = lax.scan(step, h0, xs, reverse=reverse)
        return anp.sum(ls * anp.arange(ls.shape[0])) + anp.sum(h) + anp.sum(hs ** 2 * hh)

    def views(h0, xs):                     # xs of (T, 2, 6): a transposed row, a product
        def step(h, x):
            h = anp.tanh(h + x.T[:, 0] + x[1] * anp.sum(x @ W, axis=0))
            return h, anp.max(x, axis=0) + h
        h, ys = lax.scan(step, h0, xs)
        return anp.sum(h) + anp.sum(ys * ys)

    def permuted(h0, xs):                 # xs of (T, 4, 3, 5): a product that permutes
        def step(h, x):
            y = anp.einsum("abc,bcd->bad", x, V)
            return h + anp.sum(y), x[0, 0] * h
        h, ys = lax.scan(step, h0, xs)
        return h + anp.sum(ys)

    def sorted_(h0, xs):                  # a host call (an FFT) reads xs: a slice of its own
        def step(h, x):
            return h + anp.sum(x * h), anp.real(anp.fft.fft(x[0, 0])) * h
        h, ys = lax.scan(step, h0, xs)
        return h + anp.sum(ys)

    h0 = u((6,), seed=1) * 0.1
    cases = [(rnn, h0, lambda T: u((T, 6), seed=T), True),
             (lambda h0, xs: rnn(h0, xs, True), h0, lambda T: u((T, 6), seed=T), True),
             (views, h0, lambda T: u((T, 2, 6), seed=T), True),
             (permuted, 0.5, lambda T: u((T, 4, 3, 5), seed=T), True),
             (sorted_, 0.5, lambda T: u((T, 4, 3, 5), seed=T), False)]
    for f, a0, xs_of, in_place in cases:
        src = ad.jit(f, backend="cuda").lower(a0, xs_of(2)).source
        assert "_step" in src, f
        for fn in (f, ad.grad(f, argnums=(0, 1))):
            g = ad.jit(fn, backend="cuda")
            counts = []
            for T in (2, 5):
                xs = xs_of(T)
                counts.append(_stack_slices_and_copies(g, (a0, xs)))
                for a, b in zip(ad.tree_util.tree_leaves(g(a0, xs)),
                                ad.tree_util.tree_leaves(fn(a0, xs))):
                    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11,
                                               atol=1e-12)
            if in_place:
                assert counts[0] == counts[1], (f, fn, counts)       # nothing per step
    src = ad.jit(views, backend="cuda").lower(h0, u((2, 2, 6))).source
    assert "rows=(" in src and "_rt.set_row(" not in src
    src = ad.jit(permuted, backend="cuda").lower(0.5, u((2, 4, 3, 5))).source
    assert ", (1, 0, 2), _step)" in src                    # the row, permuted for cuBLAS
    src = ad.jit(sorted_, backend="cuda").lower(0.5, u((2, 4, 3, 5))).source
    assert "_step" in src and "[_t" in src          # the FFT's operand: a slice of its own
    f32 = ad.jit(ad.grad(rnn, argnums=(0, 1)), backend="cuda")
    for a, b in zip(f32(h0.astype(np.float32), u((4, 6), F32)),
                    ad.grad(rnn, argnums=(0, 1))(h0.astype(np.float32), u((4, 6), F32))):
        assert a.dtype == np.float32
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)


@pytest.mark.usefixtures("products_on_the_host")
def test_per_step_scalars_that_kernels_read_stay_on_the_device():
    """A host loop's per-step scalars (``xs`` of shape (T,): time steps, the cotangents
    of per-step losses in a gradient) that only kernels read are read there, as
    ``X[step]``: the host copies no stack to itself (it did once per call, waiting for
    every launch before it). One the host needs (a dynamic index) still comes from a
    host copy, and the values agree."""
    import threading
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    W = u((4, 4), seed=3) * 0.4

    def rnn(h0, xs, dts):
        def step(h, xt):
            x, dt = xt
            h = h + dt * anp.tanh(W @ h + x)
            return h, anp.sum(h * h)
        h, ls = lax.scan(step, h0, (xs, dts))
        return anp.sum(ls * anp.linspace(1.0, 2.0, ls.shape[0])) + anp.sum(h)

    def indexed(h0, xs, dts):
        def step(h, k):
            return anp.tanh(W @ h + xs[k]), h[0]
        h, firsts = lax.scan(step, h0, anp.arange(xs.shape[0])[::-1])
        return anp.sum(h) + anp.sum(firsts * dts)

    h0, xs, dts = u((4,), seed=1), u((5, 4), seed=2), u((5,), F64, 0.1, 0.2, seed=4)
    for f, on_device in ((rnn, True), (indexed, False)):
        for fn in (f, ad.grad(f, argnums=(0, 1, 2))):
            g = ad.jit(fn, backend="cuda")
            assert ("_rt.host_view(" not in g.lower(h0, xs, dts).source) == on_device
            g(h0, xs, dts)
            reads, copy = [], FakeCUDAArray.copy_to_host

            def counted(self, *a, **kw):
                if threading.current_thread() is threading.main_thread():
                    reads.append(self.shape)
                return copy(self, *a, **kw)
            FakeCUDAArray.copy_to_host = counted
            try:
                got = g(h0, xs, dts)
            finally:
                FakeCUDAArray.copy_to_host = copy
            assert (not reads) == on_device, (f, fn, reads)
            for a, b in zip(ad.tree_util.tree_leaves(got),
                            ad.tree_util.tree_leaves(fn(h0, xs, dts))):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12,
                                           atol=1e-13)


@pytest.mark.usefixtures("products_on_the_host")
def test_host_loop_updates_write_their_carries_in_place():
    """A host loop's ``ys = ys.at[i].set(v)`` (a scatter) or ``dynamic_update_slice`` on
    a carry writes into the carry's buffer, which the loop owns (``donated_params``):
    no copy of ``ys`` per step (it was a new buffer and a copy of all of it each step:
    quadratic in the steps). The loop copies the initial carry once, so the caller's
    array (here one already on the device) is unchanged. Where the old value is read
    after the update, two carries are returned as one buffer, or a carry returns a
    constant, the update copies as before, and every value agrees, gradients too."""
    W = u((5, 5), seed=3) * 0.3

    def fill(h0, ys0, xs):                       # scatter: ys.at[i].set
        def body(i, c):
            h, ys = c
            h = anp.tanh(W @ h + xs[i])
            return h, ys.at[i].set(h * 2.0)
        h, ys = lax.fori_loop(0, xs.shape[0], body, (h0, ys0))
        return anp.sum(h) + anp.sum(ys ** 2), ys

    def dus(h0, ys0, xs):                        # dynamic_update_slice
        def body(i, c):
            h, ys = c
            h = anp.tanh(W @ h + xs[i])
            return h, lax.dynamic_update_slice(ys, h[None] * 3.0, (i, 0))
        h, ys = lax.fori_loop(0, xs.shape[0], body, (h0, ys0))
        return anp.sum(h * ys[-1]), ys

    def read_after(h0, ys0, xs):                # the old ys is read after the update
        def body(i, c):
            h, ys = c
            new = ys.at[i].set(W @ h)
            return anp.tanh(h + anp.sum(ys, axis=0) * 0.1 + xs[i]), new
        h, ys = lax.fori_loop(0, xs.shape[0], body, (h0, ys0))
        return anp.sum(h), ys

    def twice(h0, ys0, xs):                     # both carries one buffer after step 0
        def body(i, c):
            h, a, b = c
            h = anp.tanh(W @ h + xs[i])
            a = a.at[i].set(h + b[i])
            return h, a, a
        h, a, b = lax.fori_loop(0, xs.shape[0], body, (h0, ys0, ys0 * 2.0))
        return anp.sum(h), a + b * 0.5

    def wfill(h0, ys0, xs):                     # a while loop: Lanczos-like vectors
        def body(c):
            k, h, ys = c
            h = anp.tanh(W @ h + xs[k])
            return k + 1, h / anp.sqrt(anp.sum(h * h)), anp.at(ys)[k].set(h)
        k, h, ys = lax.while_loop(lambda c: c[0] < xs.shape[0], body, (0, h0, ys0),
                                  max_steps=xs.shape[0])
        return anp.sum(h) + anp.sum(ys), ys

    C = u((4, 5), seed=9)

    def constant(h0, ys0, xs):          # the updated carry's next value is a constant
        def body(i, c):
            h, ys = c
            new = ys.at[i].set(W @ h)
            return anp.tanh(h + anp.sum(new, axis=0) * 0.1 + xs[i]), anp.asarray(C)
        h, ys = lax.fori_loop(0, xs.shape[0], body, (h0, ys0))
        return anp.sum(h), ys

    h0, xs = u((5,), seed=1), u((4, 5), seed=2)
    for f, in_place in ((fill, True), (dus, True), (wfill, True), (read_after, False),
                        (twice, False), (constant, False)):
        ys0 = ad.device_put(u((4, 5), seed=5), "cuda")
        kept = np.asarray(ys0).copy()
        g = ad.jit(f, backend="cuda")
        src = g.lower(h0, ys0, xs).source
        body = src.split("\ndef _scan" if f is not wfill else "\ndef _body")[1].split(
            "\ndef ")[0]
        assert ("_rt.dcopy(" not in body) == in_place, (f, body)
        for _ in range(2):
            got = g(h0, ys0, xs)
            for a, b in zip(got, f(h0, np.asarray(ys0), xs)):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12,
                                           atol=1e-13)
            np.testing.assert_array_equal(np.asarray(ys0), kept)   # the caller's array
        gr = ad.grad(lambda h0, ys0, xs, f=f: f(h0, ys0, xs)[0] + anp.sum(
            f(h0, ys0, xs)[1] * C), argnums=(0, 1, 2))
        for a, b in zip(ad.jit(gr, backend="cuda")(h0, ys0, xs), gr(h0, np.asarray(ys0), xs)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-12)
        np.testing.assert_array_equal(np.asarray(ys0), kept)


@pytest.mark.usefixtures("products_on_the_host")
def test_host_loops_with_nested_control_flow_agree():
    """Host loops (a matrix product in each body) whose rank-0 carries stay on the device,
    around other control flow: a nested scan with its own carried sum, a ``cond`` on a
    carried loss (its index read on the host; the branch-index temporary once took the
    name of a kernel, ``_k1``, and the call of that kernel failed), an int carry computed
    by ``argmax`` and used as an index, carries that swap places, ``fori_loop``, and a
    ``while`` of zero and three trips; values and gradients against the interpreter."""
    W = u((3, 3), seed=2) * 0.2

    def nested(h0, xs):
        def outer(c, x):
            h, loss = c

            def inner(ci, _):
                hh, l2 = ci
                hh = anp.tanh(hh @ W + x)
                return (hh, l2 + anp.sum(hh)), anp.max(hh)
            (h, l2), ms = lax.scan(inner, (h, loss * 0.5), None, length=3)
            return (h, loss + l2 + anp.sum(ms)), l2
        (h, loss), ls = lax.scan(outer, (h0, 0.0), xs)
        return anp.sum(h) + loss, ls

    def with_cond(h0, xs):
        return _cond_loss(h0, W, xs)

    def dyn_index(h0, xs):
        def step(c, x):
            h, k = c
            h = anp.tanh(h @ W + x)
            k = anp.argmax(h)
            return (h, k), h[k] + xs[k % xs.shape[0], 0]
        return lax.scan(step, (h0, 0), xs)

    def swapped(h0, xs):
        def step(c, x):
            h, a, b = c
            h = anp.tanh(h @ W + x)
            return (h, b, a + anp.sum(h)), a
        return lax.scan(step, (h0, 1.0, 2.0), xs)

    def fori(h0):
        return lax.fori_loop(0, 4, lambda i, c: (anp.tanh(c[0] @ W) * (i + 1),
                                                 c[1] + anp.sum(c[0])), (h0, 0.0))

    def trips(h0, n):
        return lax.while_loop(lambda c: c[2] < n, lambda c: (anp.tanh(c[0] @ W),
                                                             c[1] + anp.sum(c[0]), c[2] + 1),
                              (h0, 0.0, 0))

    h0, xs = u((3,), seed=1) * 0.5, u((4, 3), seed=3) * 0.5
    cases = [(nested, (h0, xs)), (with_cond, (h0, xs)), (dyn_index, (h0, xs)),
             (swapped, (h0, xs)), (fori, (h0,)),
             (ad.grad(lambda h0, xs: nested(h0, xs)[0]), (h0, xs)),
             (ad.grad(lambda h0, xs: with_cond(h0, xs)[0][1]), (h0, xs)),
             (ad.grad(lambda h0, xs: anp.sum(swapped(h0, xs)[1])), (h0, xs))]
    for fn, args in cases:
        assert "_DC = " in ad.jit(fn, backend="cuda").lower(*args).source   # device carries
        _interp_agrees(fn, *args)
    for n in (0, 3):
        _interp_agrees(lambda h0: trips(h0, n), h0)


def test_gathers_and_scatters_of_computed_arrays_agree():
    """A gather reads its operand in one branch of an ``if`` (the other makes zeros for
    an empty operand); where that read was the operand's last use, the buffer's ``del``
    went between the branches and the module did not compile (``SyntaxError`` for
    ``anp.cumsum(x)[idx]``: ``free_at_last_use`` now ends an ``if`` statement after its
    ``else``). Gathers, scatters, sorts and cumulative sums of computed arrays, in a scan
    host loop, their gradients, float32 and complex, against the interpreter."""
    rng = np.random.default_rng(0)
    for n in (5, 33):
        x = rng.uniform(-1, 1, n)
        idx = rng.integers(0, n, size=7)
        M = rng.uniform(-1, 1, (n, n)) * 0.1
        _interp_agrees(lambda x: anp.cumsum(x)[idx], x)
        _interp_agrees(lambda x: anp.cumsum(anp.sort(x))[idx] * x[idx[::-1]], x)
        _interp_agrees(lambda x: anp.cumsum(anp.sort(x))[idx] * x[idx[::-1]],
                       x.astype(np.float32), rtol=1e-5, atol=1e-6)
        _interp_agrees(lambda x: x.at[idx].add(anp.tanh(x[idx])) - anp.cumprod(1 + 0.01 * x),
                       x)
        _interp_agrees(ad.grad(lambda x: anp.sum(x.at[idx].add(anp.tanh(x[idx])) ** 2)), x)

        def scan_g(x):
            def body(c, i):
                c = c.at[i].set(anp.tanh(c @ M)[i]) + anp.cumsum(c)[::-1] * 0.01
                return c, anp.sort(c)[0]
            return lax.scan(body, x, idx)
        _interp_agrees(scan_g, x)
        _interp_agrees(ad.grad(lambda x: anp.sum(scan_g(x)[1]) + anp.sum(scan_g(x)[0])), x)
        z = x + 1j * rng.uniform(-1, 1, n)
        _interp_agrees(lambda z: anp.cumsum(z * 2.0)[idx] + anp.sum(anp.exp(z) * anp.conj(z)),
                       z)


def test_the_pool_keeps_within_its_bounds_and_each_thread_its_own():
    import threading
    from autodiff.backends import cuda_runtime as rt
    rt.release_pool()
    bufs = [rt.empty((4,), F64) for _ in range(rt.POOL_PER_SHAPE + 2)]
    rt.give(*bufs)
    assert rt.pool_info()["kept_buffers"] == rt.POOL_PER_SHAPE
    assert rt.empty((4,), F64) is bufs[rt.POOL_PER_SHAPE - 1]     # last in, first out
    assert rt.empty((4,), F32) is not None and rt.pool_info()["kept_buffers"] == \
        rt.POOL_PER_SHAPE - 1                                       # another dtype: new
    seen = []
    t = threading.Thread(target=lambda: seen.append(rt.pool_info()["kept_buffers"]))
    t.start()
    t.join()
    assert seen == [0]
    old = rt.POOL_BYTES
    try:
        rt.release_pool()
        rt.POOL_BYTES = 100
        rt.give(rt.empty((10,), F64), rt.empty((10,), F64))         # 80 bytes each
        assert rt.pool_info()["kept_bytes"] == 80
    finally:
        rt.POOL_BYTES = old
        rt.release_pool()
    assert rt.pool_info()["kept_bytes"] == 0


def test_dynamic_shapes_reuse_the_program_and_static_argnums():
    f = ad.jit(lambda x, k: anp.sum(anp.sin(x) * k, axis=-1), backend="cuda", static_argnums=1)
    for n in (3, 5, 8):
        x = u((2, n))
        np.testing.assert_allclose(np.asarray(f(x, 2.0)), np.sum(np.sin(x) * 2.0, -1),
                                   rtol=1e-12)
    assert f.cache_info().misses == 3
    low = f.lower(u((2, 9)), 2.0)
    assert "slot_i64(_sz" in low.source         # a dynamic dimension after a change


# ---------------------------------------------------------------------------------
# transforms under jit(backend="cuda") agree with the CPU backend
# ---------------------------------------------------------------------------------

def _agree(f, *args, rtol=1e-10, atol=1e-12):
    cpu = ad.jit(f)(*args)
    gpu = ad.jit(f, backend="cuda")(*args)
    for a, b in zip(ad.tree_util.tree_leaves(cpu), ad.tree_util.tree_leaves(gpu)):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=rtol, atol=atol)


def _f(x):
    return anp.sum(anp.tanh(x) * anp.sin(x) + anp.exp(-x * x))


def test_grad_agrees_with_cpu():
    _agree(ad.grad(_f), u((50,)))
    # float32: the CPU's own vectorized exp/tanh (<= 2 ulp) vs numpy's here
    _agree(ad.grad(_f), u((9,), F32), rtol=1e-5, atol=1e-6)


def test_vmap_agrees_with_cpu():
    _agree(ad.vmap(lambda v: anp.dot(v, v) + anp.sum(anp.cos(v))), u((4, 3)))


def test_hessian_agrees_with_cpu():
    _agree(ad.hessian(lambda v: anp.sum(anp.sin(v) * v[::-1]) ** 2), u((5,)))


def _rk4_step(y, k, h):
    """One RK4 step of y' = -k y + sin(y)."""
    f = lambda y: -k * y + anp.sin(y)        # noqa: E731
    k1 = f(y)
    k2 = f(y + h / 2 * k1)
    k3 = f(y + h / 2 * k2)
    k4 = f(y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _rk4_loss(y0, k):
    def step(y, _):
        y = _rk4_step(y, k, 0.1)
        return y, anp.sum(y)
    y, ys = lax.scan(step, y0, None, length=6)
    return anp.sum(y * y) + anp.sum(ys)


def test_scan_and_its_gradient_agree_with_cpu():
    _agree(_rk4_loss, u((3,)), 0.7)
    _agree(ad.grad(_rk4_loss, argnums=(0, 1)), u((3,)), 0.7)


def _mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = anp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logp = logits - ad.nn.logsumexp(logits, axis=1, keepdims=True)
    return -anp.mean(anp.sum(logp * y, axis=1))


def test_mlp_value_and_grad_agrees_with_cpu():
    rng = np.random.default_rng(1)
    params = ((rng.normal(size=(6, 8)) * 0.3, np.zeros(8)), (rng.normal(size=(8, 3)) * 0.3, np.zeros(3)))
    x = rng.normal(size=(5, 6))
    y = np.eye(3)[rng.integers(0, 3, size=5)]
    _agree(ad.value_and_grad(_mlp_loss), params, x, y)


def _launches(fn, *args):
    """Kernel launches of one call of ``fn`` (compiled by a first call), and its result."""
    from autodiff.backends.cuda_runtime import count_launches
    ad.block_until_ready(fn(*args))
    with count_launches() as n:
        out = ad.block_until_ready(fn(*args))
    return n.total, out


def test_launches_per_call_within_budget():
    """Issue 32's launch budget, counted: f 1, grad f 1, hessian <= 3 (each result checked
    against numpy's own computation, so a fused kernel that drops work cannot pass)."""
    x = u((300,))
    want = np.sum(np.tanh(x) * np.sin(x) + np.exp(-x * x))
    n, got = _launches(ad.jit(_f, backend="cuda"), x)
    np.testing.assert_allclose(float(np.asarray(got)), want, rtol=1e-12)
    assert n == 1
    n, got = _launches(ad.jit(ad.grad(_f), backend="cuda"), x)
    np.testing.assert_allclose(np.asarray(got), np.cos(x) * np.tanh(x) + np.sin(x) / np.cosh(x) ** 2
                               - 2 * x * np.exp(-x * x), rtol=1e-10, atol=1e-12)
    assert n == 1
    n, got = _launches(ad.jit(ad.hessian(_f), backend="cuda"), x[:6])
    np.testing.assert_allclose(np.asarray(got), np.asarray(ad.hessian(_f)(x[:6])), rtol=1e-10,
                               atol=1e-12)
    assert n <= 3


def _rk4_states(steps):
    def loss(y0, k):
        y, _ = lax.scan(lambda y, _: (_rk4_step(y, k, 0.05), None), y0, None, length=steps)
        return anp.sum(y * y)
    return loss


@pytest.mark.parametrize("steps", [3, 11])
def test_rk4_scan_grad_is_at_most_four_launches_whatever_the_steps(steps):
    """The scans run as device loops (every step in one kernel): the launches of the
    gradient do not grow with the step count, and it agrees with the interpreter."""
    y0 = u((40,))
    g = ad.grad(_rk4_states(steps), argnums=(0, 1))
    n, got = _launches(ad.jit(g, backend="cuda"), y0, 0.7)
    want = ad.jit(g, backend="interpret")(y0, 0.7)
    for a, b in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-13)
    assert n <= 4


@pytest.mark.parametrize("one_block_max", [None, 8])
def test_mlp_value_and_grad_is_at_most_eight_launches(monkeypatch, one_block_max):
    """Five products (the fallback matmul kernel here; cuBLAS calls on a GPU with CuPy)
    and three kernels: the bias-and-tanh epilogue, the per-row logsumexp chain with the
    mean's sum, the column sums of the bias gradients. At a batch too large for one
    block (``ONE_BLOCK_MAX`` lowered, as at a batch of 4096) the logsumexp chain is still
    one kernel: its row maximum, the per-row clamp, the row sum of exponentials, its
    log and the gradient's row sums run as steps of one row loop
    (``cuda_launches._row_local``; 12 launches before)."""
    from autodiff.backends import cuda_launches
    if one_block_max is not None:
        monkeypatch.setattr(cuda_launches, "ONE_BLOCK_MAX", one_block_max)
    rng = np.random.default_rng(3)
    params = ((rng.normal(size=(6, 12)) * 0.3, rng.normal(size=12) * 0.1),
              (rng.normal(size=(12, 10)) * 0.3, rng.normal(size=10) * 0.1))
    x = rng.normal(size=(9, 6))
    y = np.eye(10)[rng.integers(0, 10, size=9)]   # 10 classes: a row reduction per sample
    vg = ad.value_and_grad(_mlp_loss)
    g = ad.jit(vg, backend="cuda")
    if one_block_max is not None:
        assert "_k0[1, _TPB]" not in g.lower(params, x, y).source
    n, got = _launches(g, params, x, y)
    want = vg(params, x, y)
    for a, b in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-13)
    assert n <= 8


def test_row_local_chains_run_in_one_row_loop(monkeypatch):
    """A layer norm (a row mean, then the row variance of the centred values, then the
    normalized values), a 3-D one, an attention softmax, and their gradients, at sizes
    where one block does not take the whole program (``ONE_BLOCK_MAX`` lowered): each
    chain of row reductions and per-row maps is one kernel, a block or a group of lanes
    per row stepping through the chain, maps over the rows' elements included
    (``cuda_launches._row_local``). Launches before -> now in the simulator: layer norm
    5 -> 2, its gradient 9 -> 3, the 3-D one's 10 -> 4, attention 7 -> 5 and 14 -> 9.
    Values against the interpreter."""
    from autodiff.backends import cuda_launches
    monkeypatch.setattr(cuda_launches, "ONE_BLOCK_MAX", 8)

    def layernorm(x, g, b):
        m = anp.mean(x, axis=-1, keepdims=True)
        v = anp.mean((x - m) ** 2, axis=-1, keepdims=True)
        return anp.sum(((x - m) / anp.sqrt(v + 1e-5) * g + b) ** 2)

    def layernorm3(x, g, b):
        v = anp.var(x, axis=-1, keepdims=True)
        return anp.sum(anp.tanh((x - anp.mean(x, axis=-1, keepdims=True))
                                / anp.sqrt(v + 1e-5) * g + b))

    def attention(q, k):
        s = q @ k.T / 8.0
        p = anp.exp(s - anp.max(s, axis=1, keepdims=True))
        return anp.sum((p / anp.sum(p, axis=1, keepdims=True)) @ k)
    rng = np.random.default_rng(0)
    g, b = rng.normal(size=40), rng.normal(size=40)
    x2, x3 = rng.normal(size=(70, 40)), rng.normal(size=(3, 23, 40))
    q, k = rng.normal(size=(50, 8)), rng.normal(size=(45, 8))
    for f, args, budget in [(layernorm, (x2, g, b), 2),
                            (ad.grad(layernorm, argnums=(0, 1, 2)), (x2, g, b), 3),
                            (layernorm3, (x3, g, b), 2),
                            (ad.grad(layernorm3, argnums=(0, 1)), (x3, g, b), 4),
                            (attention, (q, k), 5),
                            (ad.grad(attention, argnums=(0, 1)), (q, k), 9)]:
        n, got = _launches(ad.jit(f, backend="cuda"), *args)
        want = ad.jit(f, backend="interpret")(*args)
        for a, w in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(w), rtol=1e-10, atol=1e-12)
        assert n <= budget, (f, n)


def _interp_agrees(f, *args, rtol=1e-11, atol=1e-13):
    got = ad.jit(f, backend="cuda")(*args)
    want = ad.jit(f, backend="interpret")(*args)
    for a, b in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def _one_launch(f, *args):
    n, _ = _launches(ad.jit(f, backend="cuda"), *args)
    return n


def test_loop_bodies_with_matrix_products_run_on_the_device():
    """A scan or while body whose matrix products are small (an RNN's ``W @ h``, a
    vector-matrix product, a batched or outer product, complex, float32) runs as one
    device loop: each product a broadcast multiply and a row sum in the loop's kernel
    (``dots_as_nests``), where each was a cuBLAS call and every step a few launches from
    the host. The launches per call do not grow with the steps, and values and gradients
    agree. A product too large for one block's loop nest, or the option switched off,
    keeps a host loop."""
    W = u((6, 6), seed=3) * 0.3
    V = u((6, 4), seed=4) * 0.3

    def rnn(h0, xs):
        Wd, Vd = W.astype(h0.dtype), V.astype(h0.dtype)

        def step(h, x):
            h = anp.tanh(Wd @ h + x @ Vd.T)
            return h, (anp.sum(h * h), h @ Wd)
        h, (ls, hw) = lax.scan(step, h0, xs)
        return anp.sum(ls) + anp.sum(h) + anp.sum(hw * hw)

    def batched(h0, xs):                       # (B, n) @ (n, n), an einsum with a batch axis
        def step(h, x):
            hb = anp.tanh((h[None, :] * np.array([[1.0], [0.5]])) @ W + x[:2, None] * 0.1)
            o = anp.sum(anp.outer(h, x) * 0.01, axis=1)             # no contraction
            return hb[0] + anp.einsum("bi,bi->i", hb, hb) * 0.01 + o, hb.sum()
        h, s = lax.scan(step, h0, xs)
        return anp.sum(h) + anp.sum(s)

    def power(h0, xs):                          # a while loop until a count
        def body(c):
            k, v = c
            w = W @ v + xs[0].sum() * 0.0
            return k + 1, w / anp.sqrt(anp.sum(w * w))
        k, v = lax.while_loop(lambda c: c[0] < 4, body, (0, h0), max_steps=4)
        return anp.sum(v * (W @ v))

    h0 = u((6,), seed=1) * 0.5
    # (the gradient of a bounded while is a scan over a cond: a host loop, products or not)
    for f, fns in ((rnn, 2), (batched, 2), (power, 1)):
        for fn in (f, ad.grad(f, argnums=(0, 1)))[:fns]:
            counts = []
            for T in (3, 7):
                xs = u((T, 4), seed=T)
                g = ad.jit(fn, backend="cuda", dynamic_shapes=False)  # a program per length
                src = g.lower(h0, xs).source            # no host loop's function
                assert "def _scan" not in src and "def _body" not in src, (f, fn)
                n, got = _launches(g, h0, xs)
                counts.append(n)
                for a, b in zip(ad.tree_util.tree_leaves(got),
                                ad.tree_util.tree_leaves(fn(h0, xs))):
                    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11,
                                               atol=1e-12)
            assert counts[0] == counts[1] and counts[0] <= 6, (f, fn, counts)
    g32 = ad.jit(ad.grad(rnn, argnums=(0, 1)), backend="cuda")
    for a, b in zip(g32(h0.astype(F32), u((4, 4), F32)),
                    ad.grad(rnn, argnums=(0, 1))(h0.astype(F32), u((4, 4), F32))):
        assert a.dtype == F32
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=3e-5, atol=1e-6)
    Wc = W + 1j * W.T

    def crnn(h0, xs):
        def step(h, x):
            h = anp.tanh(Wc @ h + x[:6 - 2].sum())
            return h, anp.sum(anp.abs(h) ** 2)
        return lax.scan(step, h0, xs)
    hc = h0 + 0.5j * h0
    assert "_rt.matmul(" not in ad.jit(crnn, backend="cuda").lower(hc, u((3, 4))).source
    _interp_agrees(crnn, hc, u((3, 4)))
    big = u((260, 260), seed=5) * 0.01              # 260 x 260 > LOOP_MAX: cuBLAS per step

    def large(h0, xs):
        return lax.scan(lambda h, x: (anp.tanh(big @ h + x.sum()), None), h0, xs)[0]
    assert "_rt.matmul(" in ad.jit(large, backend="cuda").lower(u((260,)), u((3, 4))).source
    old = ad.config.jit_cuda_loop_products
    ad.config.update("jit_cuda_loop_products", False)
    try:
        assert "_rt.matmul(" in ad.jit(rnn, backend="cuda").lower(h0, u((3, 4))).source
    finally:
        ad.config.update("jit_cuda_loop_products", old)


# the branch not taken divides by zero (a bounded while's padded steps): the simulator's
# threads warn, the select drops the value
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_loop_bodies_with_a_cond_run_on_the_device():
    """A ``cond`` or ``switch`` in a scan body (a piecewise step; and the reverse loop of
    a bounded while_loop's gradient, a scan over a cond) computes its branches and
    selects (``conds_as_selects``), so the loop is one device loop: its launches do not
    grow with the steps, where each step was a few launches and a read of the index
    back from the device. Values and gradients agree with the interpreter, the switch
    index clamped as cond clamps it; a branch with a loop of its own keeps a host loop."""
    W = u((6, 6), seed=3) * 0.3

    def piece(h0, xs):
        def step(h, x):
            h = lax.cond(x[0] > 0, lambda h: anp.tanh(W @ h) * 2.0, lambda h: h - x[1], h)
            return h, anp.sum(h)
        h, s = lax.scan(step, h0, xs)
        return anp.sum(h) + anp.sum(s)

    def switch(h0, xs):                   # index -2..3 for three branches: clamped
        def step(c, x):
            h, n = c
            i = (x[0] * 3.0).astype(np.int32)
            h, k, z = lax.switch(i, [lambda h: (anp.sin(h), 1, 0.5),
                                     lambda h: (h, 2, anp.sum(h)),
                                     lambda h: (h * x[2], 3, 0.0)], h)
            return (h, n + k), z
        (h, n), zs = lax.scan(step, (h0, 0), xs)
        return anp.sum(h) + anp.sum(zs) + n

    def power(h0, steps):                 # its gradient: a scan over a cond
        def f(h0, xs):
            def body(c):
                k, v = c
                w = W @ v + xs[0].sum() * 0.0
                return k + 1, w / anp.sqrt(anp.sum(w * w))
            k, v = lax.while_loop(lambda c: c[0] < steps - 1, body, (0, h0),
                                  max_steps=steps)
            return anp.sum(v * (W @ v))
        return f

    h0 = u((6,), seed=1) * 0.5
    cases = [(piece, lambda T: u((T, 6), seed=T)),
             (ad.grad(piece, argnums=(0, 1)), lambda T: u((T, 6), seed=T)),
             (switch, lambda T: u((T, 6), seed=T, lo=-0.9, hi=1.2)),
             (ad.grad(lambda h0, xs: switch(h0, xs)), lambda T: u((T, 6), seed=T, lo=-0.9,
                                                                  hi=1.2))]
    for f, xs in cases:
        counts = []
        for T in (3, 8):
            g = ad.jit(f, backend="cuda", dynamic_shapes=False)      # a program per length
            src = g.lower(h0, xs(T)).source
            assert "def _scan" not in src and "def _body" not in src, f
            n, got = _launches(g, h0, xs(T))
            counts.append(n)
            want = ad.jit(f, backend="interpret")(h0, xs(T))
            for a, b in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11,
                                           atol=1e-12)
        assert counts[0] == counts[1] and counts[0] <= 3, (f, counts)
    counts = []
    for steps in (3, 8):
        g = ad.grad(power(h0, steps), argnums=(0, 1))
        n, got = _launches(ad.jit(g, backend="cuda"), h0, u((2, 6)))
        counts.append(n)
        want = ad.jit(g, backend="interpret")(h0, u((2, 6)))
        for a, b in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-12)
    assert counts[0] == counts[1], counts

    def looped(h0, xs):                   # a loop in a branch: the cond stays
        def step(h, x):
            h = lax.cond(x[0] > 0, lambda h: lax.fori_loop(0, 2, lambda i, v: v * 0.5, h),
                         lambda h: h + 1.0, h)
            return h, None
        return lax.scan(step, h0, xs)[0]
    assert "def _scan" in ad.jit(looped, backend="cuda").lower(h0, u((3, 6))).source
    _interp_agrees(looped, h0, u((3, 6)))


def _one_device_loop(f, h0, budget):
    """``f(h0, xs)`` at 3 and 8 steps (``xs`` of shape (T, 6)) runs its loops on the
    device (no host loop's function, no host call), in launches that do not grow with the
    steps and stay within ``budget``; values agree with the interpreter; the kernels are
    ones both compilers take."""
    counts = []
    for T in (3, 8):
        xs = u((T, 6), seed=T)
        g = ad.jit(f, backend="cuda", dynamic_shapes=False)   # each length specialized
        src = g.lower(h0, xs).source
        assert not any(s in src for s in ("def _scan", "def _body", "host_call")), f
        assert _kernels_both_compilers_take(src), src
        n, got = _launches(g, h0, xs)
        counts.append(n)
        want = ad.jit(f, backend="interpret")(h0, xs)
        for a, b in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-12)
    assert counts[0] == counts[1] and counts[0] <= budget, (f, counts)


def test_loop_bodies_with_dynamic_indexing_run_on_the_device():
    """A loop body that indexes at its step (``xs[i]`` in a ``fori_loop``, a row written
    with ``dynamic_update_slice`` or ``.at[i].set``, starts out of range) is one device
    loop: the kernels clamp the starts themselves (``_kernel_starts``; the host read
    each start back from the device) and an update's copy is a launch of the loop's
    kernel. So is the gradient, which updates its cotangent at the step's row. Launches
    do not grow with the steps; values agree with the interpreter."""
    W = u((6, 6), seed=3) * 0.3

    def reads(h0, xs):
        def body(i, h):
            return anp.tanh(W @ h + xs[i] * xs[xs.shape[0] - 1 - i])
        return anp.sum(lax.fori_loop(0, xs.shape[0], body, h0))

    def fills(h0, xs):
        def body(i, c):
            h, ys = c
            h = anp.tanh(W @ h + xs[i])
            ys = lax.dynamic_update_slice(ys, (h * 2.0)[None], (i, 0))
            ys = lax.dynamic_update_slice(ys, (h[:2] + 1.0)[None], (i + 5, 3))  # clamped
            return h, ys + lax.dynamic_slice(ys, (i - 9, 0), (xs.shape[0], 6)) * 0.1
        h, ys = lax.fori_loop(0, xs.shape[0], body, (h0, anp.zeros_like(xs)))
        return anp.sum(h) + anp.sum(ys * ys)

    def fills_at(h0, xs):                  # ys.at[i].set: a scatter through reshapes
        def body(i, c):
            h, ys = c
            h = anp.tanh(W @ h + xs[i])
            return h, ys.at[i].set(h * 2.0)
        h, ys = lax.fori_loop(0, xs.shape[0], body, (h0, anp.zeros_like(xs)))
        return anp.sum(h) + anp.sum(ys * ys)

    h0 = u((6,), seed=1) * 0.5
    for f in (reads, ad.grad(reads, argnums=(0, 1)), fills, ad.grad(fills, argnums=(0, 1)),
              fills_at, ad.grad(fills_at, argnums=(0, 1))):
        _one_device_loop(f, h0, 3)
    # .at updates of carries (a flat scatter through reshapes of the carry: views the
    # loop's kernel makes), per-step outputs that view a carry, and carries that swap
    # places through reshapes (a host loop: no in-place copy between them)
    xs = u((4, 18), seed=7)
    a = u((3, 6), seed=8)
    views = [
        lambda a, xs: lax.scan(lambda c, x: (c.at[1].set(x[:6] * 2.0), c.reshape(18)), a, xs),
        lambda a, xs: lax.scan(lambda c, x: ((c[0].at[2].add(x[:6]), c[1].at[0].set(c[0][1])),
                                             c[1].reshape(18)), (a, a * 2.0), xs),
        lambda a, xs: lax.scan(lambda c, x: (c.reshape(18).reshape(3, 6) * 0.5, x.sum()), a, xs),
        lambda a, xs: lax.fori_loop(0, 3, lambda i, c: (c[1].reshape(3, 6), c[0].reshape(18)),
                                    (a, xs[0])),
    ]
    views.append(ad.grad(lambda a, xs: anp.sum(views[0](a, xs)[1] ** 2), argnums=(0, 1)))
    for k, f in enumerate(views):
        src = ad.jit(f, backend="cuda").lower(a, xs).source
        assert ("def _scan" in src) == (k == 3), k
        _interp_agrees(f, a, xs)
    # a start a kernel computed is clamped in the kernel that slices
    top = lambda h, xs: anp.sum(xs[anp.argmax(h) + 4]) + lax.dynamic_slice(   # noqa: E731
        h, (anp.argmin(h) - 2,), (2,)).sum()
    _interp_agrees(top, h0, u((5, 6)))


def test_argmax_of_a_vector_is_a_kernel_and_keeps_loops_on_the_device():
    """``argmax``/``argmin`` of a whole vector (one index) is a one-thread kernel leaving
    the index in a 1-element device buffer, as a rank-0 gather does; it was a host call,
    which made a loop around it a host loop (the decoding below: 22 launches, now 1).
    numpy's rules: the first extreme wins, the first NaN wins over everything."""
    vecs = [np.array([0.3, -1.0, 2.0, 0.5, 2.0, 1.0]), np.array([1.0, np.nan, 3.0, np.nan]),
            np.array([-0.0, 0.0, -np.inf, -np.inf]), np.array([3, 9, -2, 9, -2]),
            np.array([False, True, True]), u((9,), seed=4).astype(np.float32)]
    for v in vecs:
        for fn in (anp.argmax, anp.argmin, lambda v: v[anp.argmax(v)] * 2 + v[anp.argmin(v)]):
            src = ad.jit(fn, backend="cuda").lower(v).source
            assert "host_call" not in src and "_rt.empty((1,)" in src
            _interp_agrees(fn, v)

    W = u((5, 5), seed=6) * 0.4

    def decode(h0, E):
        def step(h, _):
            h = anp.tanh(W @ h + 0.1)
            k = anp.argmax(h)                # the greedy token, fed back as an embedding
            return h + E[k], (k, h[k], anp.argmin(h))
        h, (ks, best, worst) = lax.scan(step, h0, None, length=7)
        return anp.sum(h * h) + anp.sum(best), ks, worst
    h0, E = u((5,), seed=7), u((5, 5), seed=8) * 0.3
    for fn in (decode, ad.grad(lambda h0, E: decode(h0, E)[0], argnums=(0, 1))):
        assert _one_launch(fn, h0, E) == 1
        _interp_agrees(fn, h0, E)


def test_argmax_of_long_lanes_runs_in_parallel_in_numpys_order():
    """``argmax``/``argmin`` over lanes of at least ``_rt.ROW_GROUP`` elements run a group
    of threads per lane (``rows``: a warp on a GPU), a block per lane (``block``) or, for
    one long lane, every block over it with the last block combining (``grid``); each
    thread keeps the first extreme of its elements with its index and a tree combines the
    pairs in numpy's order (a NaN first, then the extreme, then the smaller index). Ties,
    NaNs, +-0, infinities and every real dtype agree with numpy, in every strategy, fused
    with the elementwise work before it and inside a device loop."""
    from autodiff.backends.cuda_runtime import ROW_GROUP, TPB
    from autodiff.backends.numba_cuda_statements import _argext_strategy
    assert [_argext_strategy(1, 3 * TPB), _argext_strategy(5, TPB),
            _argext_strategy(5, ROW_GROUP), _argext_strategy(5, ROW_GROUP - 1)] == [
        "grid", "block", "rows", "serial"]
    rng = np.random.default_rng(3)
    shapes = [((3 * TPB + 5,), 0, "grid"), ((1, 2 * TPB), 1, "grid"), ((3, TPB + 7), 1, "block"),
              ((TPB + 3, 2), 0, "block"), ((4, ROW_GROUP + 3), 1, "rows"),
              ((2, 2 * ROW_GROUP + 1, 3), 1, "rows"), ((5, ROW_GROUP - 1), 1, "serial")]
    marks = {"grid": "_PJ[cuda.blockIdx.x]", "block": "_rt.row_blocks(",
             "rows": "_rt.group_blocks(", "serial": "for _k in range(1, "}
    for shape, axis, strat in shapes:
        for dt in (np.float64, np.float32, np.int64, np.int32, np.bool_):
            x = rng.normal(size=shape)
            if dt == np.bool_:
                x = x > 1.0
            elif np.dtype(dt).kind == "i":
                x = np.rint(x * 2).astype(dt)            # many ties
            else:
                x = np.round(x, 1).astype(dt)            # ties too
                if dt == np.float64:
                    flat = x.reshape(-1)
                    flat[[1, -2]] = np.nan                # the first NaN wins
                    flat[[4, 5]] = [np.inf, -np.inf]
                    flat[[6, 7]] = [-0.0, 0.0]
            for fn in (anp.argmax, anp.argmin):
                f = (lambda v, fn=fn: fn(v, axis=axis))
                lo = ad.jit(f, backend="cuda").lower(x)
                assert "host_call" not in lo.source
                assert marks[strat] in lo.source
                got = np.asarray(ad.jit(f, backend="cuda")(x))
                np.testing.assert_array_equal(got, fn(x, axis=axis))
                assert got.dtype == np.int64
    # all NaN, all equal, one element past a block: the first index
    for x in (np.full(TPB + 1, np.nan), np.zeros(2 * TPB), np.r_[np.zeros(TPB), 1.0]):
        for fn in (anp.argmax, anp.argmin):
            assert int(ad.jit(fn, backend="cuda")(x)) == int(fn(x))
    # fused with its producer (one launch), and in a scan (one device loop)
    x = u((2 * TPB,), seed=5)
    f = lambda v: anp.argmax(anp.sin(v) * 2.0 - v)    # noqa: E731
    assert _one_launch(f, x) == 1
    _interp_agrees(f, x)
    W = u((2 * TPB,), seed=6)

    def decode(h0):
        def step(h, _):
            h = anp.tanh(h * W + 0.1)
            k = anp.argmax(h)
            return anp.roll(h, 1) * 0.9, (k, h[k], anp.argmin(h.reshape(4, -1), axis=1))
        h, ys = lax.scan(step, h0, None, length=5)
        return anp.sum(h), ys
    assert _one_launch(decode, x) == 1
    _interp_agrees(decode, x)


def test_cumulative_ops_of_long_lanes_run_on_a_block():
    """A cumulative primitive over a lane of at least ``CUMULATIVE_BLOCK_MIN`` elements
    runs on a block per lane: each thread's chunk combined, the chunks' totals combined in
    order, each chunk walked again from the total before it. It was one thread walking
    the lane. cumsum, cumprod, cummax, cummin, either direction, int32, float32, any axis,
    a gradient, in a device loop: values agree with the interpreter (sums to rounding: the
    chunks' sums are associated differently from one running sum)."""
    from autodiff.backends.numba_cuda_statements import CUMULATIVE_BLOCK_MIN as m
    rng = np.random.default_rng(4)
    for shape, axis in [((m + 37,), 0), ((3, m + 1), 1), ((m + 5, 2), 0), ((2, m, 3), 1)]:
        x = rng.uniform(0.5, 1.5, size=shape)
        fs = [lambda v: anp.cumsum(v, axis=axis), lambda v: anp.cumprod(v ** 0.01, axis=axis),
              lambda v: lax.cummax(anp.sin(v * 40), axis=axis),
              lambda v: lax.cummin(v, axis=axis, reverse=True),
              lambda v: lax.cumsum(v, axis=axis, reverse=True),
              lambda v: anp.cumsum((v * 7).astype(np.int32), axis=axis),
              lambda v: anp.cumsum(v.astype(np.float32), axis=axis),
              ad.grad(lambda v: anp.sum(anp.sin(anp.cumsum(v, axis=axis))))]
        for f in fs:
            g = ad.jit(f, backend="cuda")
            assert "_ct in range(1, " in g.lower(x).source
            got, want = np.asarray(g(x)), np.asarray(ad.jit(f, backend="interpret")(x))
            assert got.dtype == want.dtype
            tol = 2e-6 if want.dtype == np.float32 else 1e-11
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    xs = rng.normal(size=(4, m))

    def walk(h0, xs):                        # a cumulative sum in a scan's body
        def step(h, x):
            c = anp.cumsum(h * x)
            return anp.tanh(c / m), c[-1]
        return lax.scan(step, h0, xs)
    assert _one_launch(walk, xs[0], xs) == 1
    _interp_agrees(walk, xs[0], xs, rtol=1e-10, atol=1e-11)


def test_a_long_single_lane_is_scanned_over_the_grid(monkeypatch):
    """One lane of at least ``CUMULATIVE_GRID_MIN`` elements (outside device loops) is
    scanned over several blocks in two launches: each segment's total and, by the last
    block, each segment's starting total; then each segment from its start. Values agree
    with the interpreter in every direction and dtype, with the default segments and with
    more segments than the simulator's grid has blocks (a block takes several)."""
    from autodiff.backends import numba_cuda_statements as st
    rng = np.random.default_rng(8)
    n = st.CUMULATIVE_GRID_MIN + 7
    x = rng.uniform(0.5, 1.5, size=n)
    fs = [anp.cumsum, lambda v: lax.cummax(anp.sin(v * 40), reverse=True),
          lambda v: anp.cumprod(v ** 1e-3), lambda v: anp.cumsum((v * 7).astype(np.int32)),
          ad.grad(lambda v: anp.sum(anp.cumsum(v) * anp.cos(v)))]
    for segments in (None, 5):
        if segments:
            monkeypatch.setattr(st, "_cumulative_segments", lambda n: segments)
        for f in fs:
            g = ad.jit(f, backend="cuda")
            assert "_PF[_b]" in g.lower(x).source
            if f is anp.cumsum:
                assert _one_launch(f, x) == 2
            got, want = np.asarray(g(x)), np.asarray(ad.jit(f, backend="interpret")(x))
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-9)


def test_loop_bodies_with_scalar_elements_and_constant_carries_run_on_the_device():
    """A loop body that writes or reads one element at its step (``v.at[i].set(s)`` of a
    1-D carry, with a rank-0 update; its gradient reads ``v[i]``, a rank-0 gather) or
    whose carry comes back as a literal or a loop constant is one device loop: the
    kernels read and write rank-0 values in device buffers (they were host calls, a host
    loop of 16 launches for 7 steps, 30 for the gradient). Launches do not grow with the
    steps; values agree with the interpreter."""
    W = u((6, 6), seed=3) * 0.3

    def losses(h0, xs):
        def body(i, c):
            h, v = c
            h = anp.tanh(W @ h + xs[i])
            return h, v.at[i].set(anp.sum(h * h)).at[xs.shape[0] - 1 - i].add(h[0])
        h, v = lax.fori_loop(0, xs.shape[0], body, (h0, anp.zeros(xs.shape[0])))
        return anp.sum(h) + anp.sum(v * v) + v[2] * v[xs.shape[0] - 1]

    def constant_carries(h0, xs):
        s = anp.sum(h0)

        def body(c, x):
            h, a, b = c
            return (anp.tanh(W @ h + x * s) * a, 1.5, s * 2.0), h[0] * s + b
        (h, a, b), ys = lax.scan(body, (h0, 0.5, 0.0), xs)
        return anp.sum(h) + a + b + anp.sum(ys)

    def elements(h0, xs):                  # per-step outputs: elements of the body's arrays
        def body(h, x):
            h2 = anp.tanh(W @ h + x)
            return h2, (anp.cumsum(h2 - x)[2], h2[4] * h[0])
        h, (a, b) = lax.scan(body, h0, xs)
        return anp.sum(h) + anp.sum(a * b)

    h0 = u((6,), seed=1) * 0.5
    for f in (losses, ad.grad(losses, argnums=(0, 1)), constant_carries,
              ad.grad(constant_carries, argnums=(0, 1)), elements,
              ad.grad(elements, argnums=(0, 1))):
        _one_device_loop(f, h0, 2)
    # a carry that comes back as an element of another carry reads that carry's old
    # value, which the other's in-place copy could overwrite first: a host loop
    swap = lambda h0, xs: lax.scan(                                          # noqa: E731
        lambda c, x: ((anp.tanh(c[0] + x), c[0][2]), c[1]), (h0, 0.0), xs)
    xs = u((4, 6), seed=2)
    assert "def _scan" in ad.jit(swap, backend="cuda").lower(h0, xs).source
    _interp_agrees(swap, h0, xs)


def test_loop_bodies_with_many_scalars_stay_within_the_kernel_parameters(monkeypatch):
    """A loop body of many rank-0 temporaries (``.at`` updates at computed indices,
    gathered elements, scalar carries) keeps its device loop: the temporaries are
    elements of one scratch array per dtype (``_scratch``: each was a kernel parameter,
    and the body past 56 of them a host loop), and with CUDA >= 12.1 a kernel takes
    32 kB of parameters (the gradient's per-step residuals: 96). Values against the
    interpreter."""
    from autodiff.backends import cuda_runtime as rt

    def f(h0, xs):
        def body(i, c):
            h, v, M, a, b = c
            k = i % 5
            v = v.at[k].multiply(h[5 - k]).at[k].multiply(v[-k - 1] * h[-k]).at[-k].min(1.5)
            v = v.at[(k + 2) % 6].add(h[k] * a).at[i % 3].set(v[(i + 1) % 6] - b)
            h = anp.tanh(h * 0.9 + xs[i] * v[k])
            M = M.at[k, i % 2].add(v[0] * h[1])
            return h, v, M, a * 1.01 + h[2], b + v[k]
        h, v, M, a, b = lax.fori_loop(0, xs.shape[0], body,
                                      (h0, h0 * 0.5, anp.zeros((6, 2)), 0.3, 0.1))
        return anp.sum(h) + anp.sum(v * v) + anp.sum(M) + a * b
    h0 = u((6,), seed=1) * 0.5
    src = ad.jit(f, backend="cuda").lower(h0, u((3, 6))).source
    assert "_S_FLOAT64[" in src and "_S_INT64[" in src
    _one_device_loop(ad.grad(f, argnums=(0, 1)), h0, 5)
    monkeypatch.setattr(rt, "LOOP_PARAMS", 56)           # a 4 kB GPU: the forward fits
    _one_device_loop(f, h0, 2)


def test_real_loop_bodies_stay_on_the_device():
    """Three things real programs do that made host loops (a helper porting 59 of them):
    a dot product's gradient is a product with a scalar (now a multiply, where it was a
    host call: an RNN's ``dot(v, h)`` readout, 201 launches at 40 steps); an ODE step
    reading a parameter's element (``th[1]``, a constant element the kernel now reads;
    the host read it every step); and a body of many reductions (their shared arrays
    now one set the body's launches take in turn: 23 declared -> 4). Each, and its
    gradient, one device loop agreeing with the interpreter."""
    v = u((6,), seed=4)

    def readout(h0, xs):
        def body(h, x):
            h = anp.tanh(h * 0.8 + x)
            return h, anp.dot(v, h)
        h, ys = lax.scan(body, h0, xs)
        return anp.sum(ys * ys) + h @ h

    def ode(h0, xs):                        # the parameters: elements of an argument
        def step(y, x):
            y = y + 0.1 * (-y * h0[1] + anp.roll(y, 1) * h0[0] + x[0] * h0[2])
            return y, y[0]
        y, ys = lax.scan(step, h0 * 2.0, xs)
        return anp.sum(y) + anp.sum(ys * ys)

    def reductions(h0, xs):
        def body(h, x):
            for _ in range(6):                        # six dependent reductions a step
                h = anp.tanh(h * (1.0 + 0.1 * anp.sum(h * x) / (1.0 + anp.max(anp.abs(h)))))
            return h, anp.sum(h)
        h, ys = lax.scan(body, h0, xs)
        return anp.sum(h) + anp.sum(ys)
    h0 = u((6,), seed=1) * 0.5
    for f in (readout, ode, reductions):
        _one_device_loop(f, h0, 3)
        _one_device_loop(ad.grad(f, argnums=(0, 1)), h0, 4)
    src = ad.jit(reductions, backend="cuda").lower(h0, u((3, 6))).source
    assert src.count("cuda.shared.array(_TPB") <= 8
    x = u((5,))
    g = ad.jit(ad.grad(lambda x: x @ x + anp.dot(x[1], x) @ x), backend="cuda")
    assert "host_call" not in g.lower(x).source
    np.testing.assert_allclose(np.asarray(g(x)), 2 * x + 2 * x[1] * x + (x @ x) * np.eye(5)[1],
                               rtol=1e-12)


def while_in_scan(h0, xs):
    """A bounded ``while_loop`` in a ``scan``'s body (also a gpu_check real-size check)."""
    def body(h, x):
        hh, k = lax.while_loop(lambda c: (c[1] < 3) & (anp.sum(c[0] ** 2) > 1e-3),
                               lambda c: (c[0] * 0.5 + x * 0.1, c[1] + 1), (h, 0),
                               max_steps=5)
        return anp.tanh(hh), anp.sum(hh) + k
    h, ys = lax.scan(body, h0, xs)
    return anp.sum(h) + anp.sum(ys)


def test_a_while_inside_a_scan_is_one_device_loop():
    """A bounded ``while_loop`` in a ``scan``'s body (an adaptive ODE solver's steps
    between output times: odeint) runs inside the scan's device loop, forward and
    gradient: the while's buffers were named with a lower-case prefix the enclosing
    body refused, so the scan was a host loop (odeint's ``value_and_grad``, simulator:
    135 launches -> 13)."""
    h0 = u((6,), seed=1)
    _one_device_loop(while_in_scan, h0, 2)
    _one_device_loop(ad.grad(while_in_scan, argnums=(0, 1)), h0, 4)


def test_matrix_shaped_sums_run_as_matrix_products(monkeypatch):
    """A sum of a broadcast product that is a matrix product (``(A[:, :, None] *
    B[None]).sum(1)``, batched, transposed, keepdims, complex, float32, and the
    gradient's own such sums) over more than ``LOOP_MAX`` products runs as one
    (``nests_as_dots``: cuBLAS on a GPU, the fallback matmul kernel here), not as a loop
    nest reading both operands once per result; values agree with the interpreter. A
    matrix-vector sum, a small one and a product read again stay loop nests. (One case at
    the real threshold; the others at a lower one, so the simulator runs small
    products.)"""
    from autodiff.backends import cuda_launches
    mm = lambda A, B: anp.sum(A[:, :, None] * B[None], axis=1)            # noqa: E731

    def runs_as_product(f, args):
        g = ad.jit(f, backend="cuda")
        assert "_rt.matmul(" in g.lower(*args).source, f
        n, got = _launches(g, *args)
        want = ad.jit(f, backend="interpret")(*args)
        f32 = args[0].dtype == F32
        for a, b in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_allclose(np.asarray(a), np.asarray(b),
                                       rtol=2e-5 if f32 else 1e-11, atol=1e-5 if f32 else 1e-11)
    A, B = u((41, 40), seed=1), u((40, 41), seed=2)
    assert 41 * 40 * 41 > cuda_launches.LOOP_MAX
    runs_as_product(mm, (A, B))
    monkeypatch.setattr(cuda_launches, "LOOP_MAX", 300)
    A, B = u((9, 8), seed=1), u((8, 9), seed=2)                         # 648 products
    Ab, Bb = u((2, 9, 8), seed=3), u((2, 8, 9), seed=4)
    for f, args in [
        (lambda A, B: anp.sum(A[None, :, :] * B.T[:, None, :], axis=2), (A, B)),  # (n, m)
        (lambda A, B: anp.sum(A[..., None] * B[:, None], axis=2), (Ab, Bb)),       # batch
        (lambda A, B: anp.sum(B[None] * A[:, :, None], axis=1, keepdims=True), (A, B)),
        (mm, (A + 0.5j * B.T, B - 0.25j * A.T)),
        (lambda A, B: anp.sin(mm(A, B)), (A.astype(F32), B.astype(F32))),
        (ad.grad(lambda A, B: anp.sum(anp.sin(mm(A, B))), argnums=(0, 1)), (A, B)),
    ]:
        runs_as_product(f, args)
    x = u((8,), seed=5)
    for f, args in [(lambda A, x: anp.sum(A * x[None, :], axis=1), (u((60, 8)), x)),
                    (mm, (A[:4], B[:, :4])),                             # 4 x 8 x 4
                    (lambda A, B: (lambda p: anp.sum(p, axis=1) + anp.sum(p))(
                        A[:, :, None] * B[None]), (A, B))]:              # the product twice
        assert "_rt.matmul(" not in ad.jit(f, backend="cuda").lower(*args).source
        _interp_agrees(f, *args)


def test_device_loops_stay_device_loops_after_a_new_length():
    """jit generalizes a scan's length once a call brings a new one (its size is then
    read at run time); the loop body's other sizes stay constants (the caller knows
    them: ``Planner.param_dynamic``), so the loop is still one launch, where it became a
    host loop of a few launches per step; so is the gradient's reverse loop, whose
    carry starts from a constant the caller folded into a broadcast (a size of its own
    making: not a run-time size for the body). Values agree at every length; a scan
    whose rows change size too keeps a host loop, and agrees."""
    W = u((5, 5), seed=3) * 0.4

    def rnn(h0, xs):
        def step(h, x):
            h = anp.tanh(W @ h + x)
            return h, anp.sum(h * h)
        h, ls = lax.scan(step, h0, xs)
        return anp.sum(ls) + anp.sum(h), ls

    h0 = u((5,), seed=1)
    loss_grad = ad.grad(lambda h0, xs: rnn(h0, xs)[0], argnums=(0, 1))
    for fn in (rnn, loss_grad):
        g = ad.jit(fn, backend="cuda")
        counts = []
        for T in (3, 5, 8):
            xs = u((T, 5), seed=T)
            n, got = _launches(g, h0, xs)
            counts.append(n)
            for a, b in zip(got, fn(h0, xs)):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12,
                                           atol=1e-13)
        src = g.lower(h0, u((8, 5))).source
        assert "slot_i64(_sz" in src and "def _scan" not in src, src
        assert counts[1] == counts[2] <= 4, (fn, counts)

    def rows(h0, xs):                          # the row's size is a run-time size too
        return lax.scan(lambda h, x: (h * 0.5 + anp.sum(x), anp.sum(x * x)), h0, xs)
    g = ad.jit(rows, backend="cuda")
    for shape in ((3, 4), (5, 6), (4, 7)):
        xs = u(shape, seed=shape[1])
        for a, b in zip(g(0.5, xs), rows(0.5, xs)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-13)


def test_device_loop_carries_stacks_and_reverses():
    x0, xs = u((7,)), u((5, 7), seed=2)
    w = u((7,), seed=3)

    def f(c0, xs, w):
        def body(c, x):                       # array ys: carry-in, a new value; xs rows
            c2 = anp.tanh(c * w + x)
            return c2, (c, c2 * 2.0 - x)
        c, (a, b) = lax.scan(body, c0, xs, reverse=True)
        return c, a, b
    _interp_agrees(f, x0, xs, w)
    assert _one_launch(f, x0, xs, w) == 1

    def g(c0, d0, xs):                        # a carry passed through unchanged
        def body(cd, x):
            c, d = cd
            return (c + x * d, d), c * 1.0
        return lax.scan(body, (c0, d0), xs)
    _interp_agrees(g, x0, w, xs)


def test_device_loop_body_with_reductions_and_rows():
    """A body with a full reduction (a grid section: its ticket taken every step by the
    loop's one block) and a row reduction, over a matrix carry."""
    m0 = u((6, 9))

    def f(m):
        def body(m, _):
            s = anp.sum(m * m)
            r = anp.max(m, axis=1, keepdims=True)
            m2 = anp.sin(m - r) + 0.01 * s
            return m2, anp.mean(m2, axis=0)
        return lax.scan(body, m, None, length=4)
    _interp_agrees(f, m0)
    _interp_agrees(ad.grad(lambda m: anp.sum(f(m)[1] ** 2)), m0)
    assert _one_launch(f, m0) == 1
    # column means over 100 rows: a split reduction (its chunk count sizes its partials)
    g = lambda m: lax.scan(lambda m, _: (anp.tanh(m - anp.mean(m, axis=0)),   # noqa: E731
                                         anp.sum(m, axis=0)), m, None, length=3)
    m1 = u((100, 20), seed=5)
    assert "_rt.split_chunks(" in ad.jit(g, backend="cuda").lower(m1).source
    _interp_agrees(g, m1)
    assert _one_launch(g, m1) == 1


def test_device_loop_scalar_carries_slices_and_outputs():
    """Rank-0 carries (fori_loop's counter), per-step scalars in and out, and a scalar
    carry read after the loop: 1-element device buffers in one launch."""
    x = u((8,))
    f = lambda x: lax.fori_loop(0, 5, lambda i, c: anp.sin(c) * 0.5 + i, x)   # noqa: E731
    _interp_agrees(f, x)
    assert _one_launch(f, x) == 1
    _interp_agrees(ad.grad(lambda x: anp.sum(f(x))), x)
    ts = np.arange(4.0) * 0.25
    g = lambda x: lax.scan(lambda c, t: (c * t + anp.sum(c), anp.max(c) * t), x, ts)  # noqa: E731
    _interp_agrees(g, x)
    assert _one_launch(g, x) == 1

    def h(x, s):
        def body(cs, _):
            c, s = cs
            return (c * 0.9 + s, s * 0.5 + anp.mean(c)), s
        (c, s), ss = lax.scan(body, (x, s), None, length=6)
        return c * s, ss
    _interp_agrees(h, x, 0.3)


def test_while_loops_run_on_the_device():
    """A while_loop whose predicate and body are kernels is one launch: the block reads
    the predicate itself each step (the host reads nothing per step), with array and
    scalar carries, a reduction in the predicate, and max_steps-free convergence loops."""
    a = u((8,), lo=0.1, hi=2.0)

    def newton(a):                          # sqrt by Newton's method, until converged
        def cond(c):
            y, it = c
            return (anp.max(anp.abs(y * y - a)) > 1e-12) & (it < 50)

        def body(c):
            y, it = c
            return 0.5 * (y + a / y), it + 1
        return lax.while_loop(cond, body, (a, 0))
    _interp_agrees(newton, a)
    assert _one_launch(newton, a) == 1
    y, it = ad.jit(newton, backend="cuda")(a)
    np.testing.assert_allclose(np.asarray(y), np.sqrt(a), rtol=1e-12)
    assert 3 <= int(np.asarray(it)) < 50
    # a fori_loop with a traced trip count is a while loop
    f = lambda x, n: lax.fori_loop(0, n, lambda i, c: anp.sin(c) * 0.5 + i, x)   # noqa: E731
    _interp_agrees(f, a, 4)
    assert _one_launch(f, a, 4) == 1


def test_scan_bodies_a_kernel_cannot_run_stay_host_loops_and_agree():
    a = u((5, 5))
    # a matrix product in the body (a library call), a rank-0 per-step output, carries
    # swapping places: each keeps the host loop, with the same results
    _interp_agrees(lambda c: lax.scan(lambda c, _: (anp.tanh(a @ c), anp.sum(c)), c, None,
                                      length=3), u((5,)))
    _interp_agrees(lambda p, q: lax.scan(lambda pq, _: ((pq[1], pq[0] + 1.0), pq[0]), (p, q),
                                         None, length=3), u((4,)), u((4,), seed=1))


def test_nested_scans_and_fusion_switched_off_agree():
    x = u((8,))

    def f(x):
        def outer(c, _):
            inner, _ = lax.scan(lambda d, _: (anp.cos(d) * 0.9 + c, None), c, None, length=3)
            return inner, anp.max(inner)
        return lax.scan(outer, x, None, length=4)
    _interp_agrees(f, x)
    old = ad.config.jit_cuda_fuse_launches
    ad.config.update("jit_cuda_fuse_launches", False)
    try:
        _interp_agrees(f, x)
        n = _one_launch(_f, x)
    finally:
        ad.config.update("jit_cuda_fuse_launches", old)
    assert n == 1               # a one-launch grid reduction does not depend on the pass


def test_fusion_keeps_dependencies_between_large_nests():
    """Above the one-block size, a nest that reads another's elements elsewhere (a
    reversed read, a neighbour) is its own launch after the first; both agree with numpy."""
    x = u((5000,))

    def f(x):
        y = anp.exp(x) * 0.5
        z = y[::-1] + anp.roll(y, 1)
        return anp.sum(z * x), z
    n, got = _launches(ad.jit(f, backend="cuda"), x)
    y = np.exp(x) * 0.5
    z = y[::-1] + np.roll(y, 1)
    np.testing.assert_allclose(np.asarray(got[1]), z, rtol=1e-13)
    np.testing.assert_allclose(float(np.asarray(got[0])), np.sum(z * x), rtol=1e-12)
    assert n >= 2


def test_the_launch_example_of_docs_cuda_md_runs(capsys):
    import re as _re
    text = open(os.path.join(ROOT, "docs", "cuda.md"), encoding="utf-8").read()
    block = _re.search(r"```python no-run\n(import os\n.*?count_launches.*?)```", text,
                       _re.S).group(1)
    exec(compile(block, "docs/cuda.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "1"


def _host_launches(source):
    """Launch statements (kernels and matrix products) of the top host function of a
    lowered program, and whether any host function loops."""
    import re as _re
    fns = _re.split(r"\n(?=def )", source)
    top = next(f for f in fns if f.startswith("def kernel("))
    loops = any(_re.search(r"\n    +for ", f) for f in fns if "_sz" in f.split("\n")[0])
    return len(_re.findall(r"_k\d+\[", top)) + top.count("_rt.matmul("), loops


def test_issue32_rows_at_h200_sizes_lower_within_the_launch_budget(monkeypatch):
    """The gpu_check rows at the sizes of the H200 table, lowered (not run: the
    simulator would take hours) with a GPU's launch geometry (256 threads a block, a
    warp of 32 per short row): the same budgets, and no host loop anywhere."""
    from autodiff.backends import cuda_runtime as rt
    for name, value in (("TPB", 256), ("ROW_GROUP", 32), ("ROWS_PER_BLOCK", 8),
                        ("MAX_BLOCKS", 1056)):
        monkeypatch.setattr(rt, name, value)
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, 1_000_000)
    params = ((rng.normal(size=(784, 2048)) * 0.03, np.zeros(2048)),
              (rng.normal(size=(2048, 10)) * 0.03, np.zeros(10)))
    xb = rng.normal(size=(4096, 784))
    yb = np.eye(10)[rng.integers(0, 10, size=4096)]
    rows = [(_f, (x,), 1), (ad.grad(_f), (x,), 1),
            (ad.value_and_grad(_mlp_loss), (params, xb, yb), 8),
            (ad.hessian(_f), (x[:1000],), 3),
            (ad.grad(_rk4_states(200), argnums=(0, 1)), (x[:1000], 0.7), 4)]
    # rows of 100 and 768: a group of lanes, and a block, per row (cuda_launches._row_local:
    # 12 and 9 launches before)
    params100 = ((params[0][0][:, :512], np.zeros(512)),
                 (rng.normal(size=(512, 100)) * 0.03, np.zeros(100)))
    y100 = np.eye(100)[rng.integers(0, 100, size=4096)]

    def layernorm(v):
        c = v - anp.mean(v, axis=-1, keepdims=True)
        return anp.sum(anp.tanh(c / anp.sqrt(anp.mean(c * c, axis=-1, keepdims=True))))
    rows += [(ad.value_and_grad(_mlp_loss), (params100, xb, y100), 8),
             (ad.grad(layernorm), (x[:4096 * 768 // 4].reshape(1024, 768),), 3)]
    for fn, args, budget in rows:
        n, loops = _host_launches(ad.jit(fn, backend="cuda").lower(*args).source)
        assert n <= budget and not loops, (fn, n, loops)


_OPS = [
    ("sin", 1, lambda a: anp.sin(a)), ("tanh", 1, lambda a: anp.tanh(a) * 1.5),
    ("gauss", 1, lambda a: anp.exp(-a * a)), ("rev0", 1, lambda a: a[::-1]),
    ("rev1", 1, lambda a: a[:, ::-1]), ("roll", 1, lambda a: anp.roll(a, 3, axis=1)),
    ("colsum", 1, lambda a: a - anp.mean(a, axis=0, keepdims=True)),
    ("rowmax", 1, lambda a: a - anp.max(a, axis=1, keepdims=True)),
    ("norm", 1, lambda a: a / (1.0 + anp.sqrt(anp.sum(a * a)))),
    ("mul", 2, lambda a, b: a * b), ("add", 2, lambda a, b: a + 0.5 * b),
    ("where", 2, lambda a, b: anp.where(a > b, a, b)),
]


def _random_program(rng, depth=6):
    """A random chain of the operations above (each reading one or two earlier values);
    returns it, with its outputs: the last value, its column sums and its total."""
    picks = [(_OPS[k], [int(rng.integers(0, i + 1)) for _ in range(2)])
             for i, k in enumerate(rng.integers(0, len(_OPS), size=depth))]

    def prog(x):
        vals = [x]
        for (name, arity, fn), srcs in picks:
            vals.append(fn(*[vals[j] for j in srcs[:arity]]))
        last = vals[-1]
        return last, anp.sum(last, axis=0), anp.sum(last * vals[len(vals) // 2])
    return prog, [p[0][0] for p in picks]


@pytest.mark.parametrize("shape", [(6, 7), (64, 70)])
def test_random_programs_agree_with_the_interpreter(shape):
    """Random chains of elementwise maps, reversed and rolled reads, row/column/full
    reductions and broadcasts back: fused launches (one block for the small shape, several
    blocks and every merge rule for the large one) agree with the interpreter."""
    rng = np.random.default_rng(11)
    x = u(shape, seed=2)
    for trial in range(3):                # the third once caught a race in the pass
        prog, names = _random_program(rng)
        got = ad.jit(prog, backend="cuda")(x)
        want = ad.jit(prog, backend="interpret")(x)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-10,
                                       err_msg=f"{shape} {names}")


def test_random_scan_bodies_agree():
    """The same random programs as scan bodies (device loops), and the gradients through
    them (reverse device loops), against the interpreter."""
    rng = np.random.default_rng(5)
    x = u((40, 30), seed=3)
    for trial in range(1):
        prog, names = _random_program(rng, depth=5)

        def f(x, prog=prog):
            def body(c, _):
                last, cols, tot = prog(c)
                return anp.tanh(last), (cols, tot)
            return lax.scan(body, x, None, length=3)
        g = ad.grad(lambda x, f=f: anp.sum(f(x)[1][0]) + anp.sum(f(x)[0] ** 2))
        _interp_agrees(f, x, rtol=1e-10, atol=1e-10)
        _interp_agrees(g, x, rtol=1e-10, atol=1e-10)
        assert _one_launch(f, x) == 1, names


@pytest.mark.usefixtures("products_on_the_host")
def test_random_host_loop_bodies_agree():
    """The random programs as bodies of host loops (a matrix product in each step) with
    rank-0 carries computed from them (kept on the device) and per-step scalars, and the
    gradients through them, against the interpreter."""
    rng = np.random.default_rng(7)
    x = u((6, 7), seed=3) * 0.5
    M = u((7, 7), seed=4) * 0.2
    for trial in range(3):
        prog, names = _random_program(rng, depth=4)

        def f(x, prog=prog):
            def body(c, t):
                h, s, k = c
                last, cols, tot = prog(h)
                s = s * 0.5 + tot * t          # a carry from a reduction: device
                return (anp.tanh(last @ M) + s * 1e-3, s, k + 1), (tot, s * k)
            return lax.scan(body, (x, 0.0, 0), anp.linspace(0.1, 0.3, 3))
        g = ad.grad(lambda x, f=f: f(x)[0][1] + anp.sum(f(x)[1][0]) + anp.sum(f(x)[0][0]))
        assert "_DC = " in ad.jit(f, backend="cuda").lower(x).source, names
        _interp_agrees(f, x, rtol=1e-10, atol=1e-10)
        _interp_agrees(g, x, rtol=1e-10, atol=1e-10)


def test_launch_counter_sees_runtime_kernels_and_profiles():
    from autodiff.backends.cuda_runtime import count_launches
    a, b = u((3, 4)), u((4, 2), seed=1)
    f = ad.jit(lambda a, b: anp.tanh(a @ b), backend="cuda")
    f(a, b)
    with count_launches(profile=True) as n:
        got = np.asarray(f(a, b))
    np.testing.assert_allclose(got, np.tanh(a @ b), rtol=1e-12)
    names = [r[0] for r in n.records]
    assert n.total == 2 and names[0] == "matmul_tiled" and names[1].startswith("_k"), n.records
    assert all(r[3] is not None and r[3] >= 0 for r in n.records)
    f(a, b)                       # outside the block: nothing counted, the kernels unwrapped
    assert n.total == 2


def test_matmul_fallback_kernel_tiles_and_batches():
    """The tiled shared-memory matmul (no CuPy here) on sizes that are not tile multiples,
    transposed operands (flags) and a batch."""
    from autodiff.backends import cuda_runtime as rt
    assert rt.cupy() is None
    a, b = u((2, 5, 7)), u((2, 7, 3), seed=1)
    f = ad.jit(lambda a, b: (anp.matmul(a, b), anp.matmul(anp.swapaxes(a, 1, 2)[:, :, :5],
                                                          b[:, :5])), backend="cuda")
    r1, r2 = f(a, b)
    np.testing.assert_allclose(np.asarray(r1), a @ b, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(r2), np.swapaxes(a, 1, 2)[:, :, :5] @ b[:, :5],
                               rtol=1e-12)


def test_the_cublas_branch_views_operands_of_any_rank(monkeypatch):
    """rt.matmul's CuPy branch (no CuPy here: numpy stands in for its array API, over the
    simulator's arrays' memory) with the operands as programs pass them: unreshaped, of
    any rank, transposed by flag, batched."""
    import types
    from autodiff.backends import cuda_runtime as rt
    calls = []

    def matmul(a, b, out):
        calls.append((a.shape, b.shape, out.shape))
        np.matmul(a, b, out=out)
    fake = types.SimpleNamespace(asarray=lambda a: getattr(a, "_ary", a), matmul=matmul)
    monkeypatch.setattr(rt, "_CUPY", [fake])
    a, b = u((2, 5, 7)), u((2, 7, 3), seed=1)
    w, x = u((4, 3, 2), seed=2), u((6, 3), seed=3)
    f = ad.jit(lambda a, b, w, x: (a @ b, anp.swapaxes(a, 1, 2) @ a,
                                   anp.tensordot(x, w, axes=([1], [1])), x @ x.T),
               backend="cuda")
    r = [np.asarray(t) for t in f(a, b, w, x)]
    np.testing.assert_allclose(r[0], a @ b, rtol=1e-12)
    np.testing.assert_allclose(r[1], np.swapaxes(a, 1, 2) @ a, rtol=1e-12)
    np.testing.assert_allclose(r[2], np.tensordot(x, w, axes=([1], [1])), rtol=1e-12)
    np.testing.assert_allclose(r[3], x @ x.T, rtol=1e-12)
    assert (1, 6, 6) in [c[2] for c in calls] and len(calls) == 4


def test_cupy_results_on_the_default_streams_are_not_waited_for(monkeypatch):
    """rt._cp_out takes a CuPy result without numba-cuda's host wait when CuPy worked on a
    default stream (ordered with numba-cuda's launches), and waits for a stream of the
    user's own (numpy stands in for CuPy; the interface is written out by hand)."""
    import types
    from autodiff.backends import cuda_runtime as rt

    class Result:
        def __init__(self, stream):
            self.ndim, self.stream = 2, stream

        @property
        def __cuda_array_interface__(self):
            return {"shape": (2, 2), "typestr": "<f8", "data": (0, False), "version": 3,
                    "stream": self.stream}
    fake = types.SimpleNamespace(asarray=lambda o, dtype=None: o,
                                 ascontiguousarray=lambda o: o)
    waits = []
    monkeypatch.setattr(rt.cuda, "as_cuda_array", lambda o, sync=True: waits.append(sync),
                        raising=False)            # the simulator has none
    for stream in (None, 1, 2, 0x7F00DEAD):
        rt._cp_out(fake, Result(stream), np.float64)
    assert waits == [False, False, False, True]


def test_products_read_a_transposed_operand_in_place():
    """A product of a transpose (``x @ w.T``, ``a.T @ a``, batched transposes, the
    gradient of ``x @ w.T``) passes the array itself, the transpose folded into the
    product's operand order (cuBLAS's transpose flags, or one permute where the order
    needs it), where the transpose was first copied by a kernel. Values against the
    interpreter."""
    rng = np.random.default_rng(8)
    a, w = rng.normal(size=(5, 7)), rng.normal(size=(4, 7))
    t, v = rng.normal(size=(2, 3, 7)), rng.normal(size=(7, 3, 2))
    for f, args in [(lambda a, w: a @ w.T, (a, w)), (lambda a, w: a.T @ a + w[0, 0], (a, w)),
                    (lambda t, v: anp.matmul(anp.transpose(t, (0, 2, 1)), t), (t, v)),
                    (lambda t, v: anp.matmul(anp.transpose(v, (2, 0, 1)),
                                             anp.transpose(v, (2, 1, 0))), (t, v)),
                    (ad.grad(lambda a, w: anp.sum(anp.tanh(a @ w.T) ** 2), argnums=(0, 1)),
                     (a, w))]:
        g = ad.jit(f, backend="cuda")
        src = g.lower(*args).source
        assert "# copy" not in src, src
        want = ad.jit(f, backend="interpret")(*args)
        for x, y in zip(ad.tree_util.tree_leaves(g(*args)), ad.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-12, atol=1e-12)


def test_complex_products_and_scalar_products_stay_on_the_device():
    """A complex dot_general runs on the device (cuBLAS with CuPy, else the tiled kernel
    accumulating in complex128); a rank-0 product stays a 1-element device buffer read by
    the kernels after it (no copy back to the host)."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(2, 5, 3)) + 1j * rng.normal(size=(2, 5, 3))
    b = rng.normal(size=(2, 3, 4)) + 1j * rng.normal(size=(2, 3, 4))
    f = lambda a, b: (anp.matmul(a, b), anp.exp(a[0] @ b[0]) * 0.5)   # noqa: E731
    for dt, tol in ((np.complex128, 1e-12), (np.complex64, 1e-5)):
        n, got = _launches(ad.jit(f, backend="cuda"), a.astype(dt), b.astype(dt))
        assert n >= 2                     # the products ran as launches, not interpreted
        want = f(a.astype(dt), b.astype(dt))
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == dt
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)
    v = u((7,))
    g = lambda v: anp.tanh(v * anp.dot(v, v))                         # noqa: E731
    prog = ad.jit(g, backend="cuda").lower(v).source
    assert "_DOT[0]" in prog and "to_host_scalar" not in prog
    np.testing.assert_allclose(np.asarray(ad.jit(g, backend="cuda")(v)),
                               np.tanh(v * np.dot(v, v)), rtol=1e-13)


class _NumpyAsCupy:
    """numpy standing in for CuPy's array API over the simulator's arrays' memory (what
    ``cuda_runtime``'s library calls use: ``asarray``, ``linalg``, ``fft``, ``sort``, ...),
    with CuPy's stable sorts."""

    def __getattr__(self, name):
        if name == "asarray":
            return lambda a, dtype=None: np.asarray(getattr(a, "_ary", a), dtype)
        if name in ("sort", "argsort"):
            return lambda a, axis=-1: getattr(np, name)(a, axis=axis, kind="stable")
        return getattr(np, name)


def test_library_calls_through_cupy_agree_with_the_interpreter(monkeypatch):
    """The CuPy branches of ``cuda_runtime`` (cuSOLVER, cuFFT, CuPy's sort: numpy stands
    in for CuPy here, so what is checked is how each primitive's parameters become the
    library's arguments): factorizations and solves, every FFT kind over one and two
    axes with odd and even lengths, float32 and float64, sorts of long lanes, and their
    gradients, against the interpreter; each runs as a library call, not a host call."""
    from autodiff.backends import cuda_runtime as rt
    from autodiff.backends import numba_cuda_statements as st
    monkeypatch.setattr(rt, "_CUPY", [_NumpyAsCupy()])
    monkeypatch.setattr(rt, "_cp_out", lambda cp, o, dtype: rt._back(np.asarray(o), dtype))
    monkeypatch.setattr(st, "SORT_LANE_MAX", 4)
    monkeypatch.setattr(st.small_linalg, "SMALL_N", 0)     # solves in the library too
    fft, sort = anp.fft, anp.sort
    a, x = _spd(4), u((3, 6), seed=2)
    cases = [
        (lambda a, x: anp.linalg.solve(a, x[0, :4]) + anp.linalg.slogdet(a)[1], (a, x)),
        (lambda a, x: anp.linalg.cholesky(a) @ anp.linalg.eigh(a)[1] * anp.linalg.eigh(a)[0],
         (a, x)),
        (lambda a, x: anp.linalg.qr(a + x[:, :4].sum())[1], (a, x)),
        (lambda x: anp.abs(fft.fft(x)) + fft.ifft(x * 1j).imag, (x,)),
        (lambda x: anp.abs(fft.rfft(x[:, :5])).sum() + fft.irfft(fft.rfft(x)).sum(), (x,)),
        (lambda x: fft.irfft(fft.rfft(x[:, :5]), n=5) * 2.0, (x,)),
        (lambda x: anp.abs(fft.fft2(x)) + fft.irfft2(fft.rfft2(x), s=x.shape), (x,)),
        (lambda x: sort(x, axis=1) + anp.argsort(x[0])[None], (x,)),
    ]
    for f, args in cases:
        fs = [f, ad.grad(lambda *a, f=f: anp.sum(anp.sin(f(*a))))]
        if f is cases[3][0]:
            fs.append(lambda x, f=f: f(x.astype(np.float32)))
        for fn in fs:
            g = ad.jit(fn, backend="cuda")
            src = g.lower(*args).source
            assert "host_call" not in src, fn
            want = ad.jit(fn, backend="interpret")(*args)
            tol = 1e-5 if np.asarray(want).dtype == np.float32 else 1e-10
            np.testing.assert_allclose(np.asarray(g(*args)), np.asarray(want), rtol=tol,
                                       atol=tol)


def test_complex_scatter_adds_and_linear_algebra_compile(monkeypatch):
    """A complex ``scatter_add`` (the gradient of a complex gather) adds its real and
    imaginary parts atomically in the result seen as floats, and complex linear algebra
    is a library call (cuSOLVER through CuPy, numpy standing in here, else the host): the
    program compiles, where either kept it on the interpreter. Values against the
    interpreter, complex128 and complex64, with repeated indices."""
    from autodiff.backends import cuda_runtime as rt
    rng = np.random.default_rng(5)
    z = rng.normal(size=(4, 3)) + 1j * rng.normal(size=(4, 3))
    idx = np.array([0, 2, 0, 3, 3, 3])
    B = rng.normal(size=(3, 3))
    A = _spd(3) * 3 + 1j * (B - B.T)                    # Hermitian positive definite
    fs = [(ad.grad(lambda z: anp.sum(anp.abs(z[idx] * z[idx[::-1]]) ** 2)), (z,), "_RI"),
          (lambda z: z.at[idx, 1].add(z[idx, 0] * 1j), (z,), "_RI"),
          (lambda A, z: anp.linalg.solve(A, z[:3]) + anp.linalg.eigh(A)[1],
           (A, z), "_rt.linalg("),
          (ad.grad(lambda A, z: anp.real(anp.sum(anp.linalg.solve(A, z[:3]) ** 2))),
           (A, z), "_rt.linalg(")]
    # rank 1: an index, not a 1-tuple (numba-cuda 0.30 cannot lower a 1-tuple index of a
    # 1-D array in an atomic; the simulator takes it; gpu_check --ptx compiles both)
    src = ad.jit(fs[0][0], backend="cuda").lower(z[:, 0]).source
    assert re.search(r"cuda\.atomic\.add\(\w+_RI, 2 \* _g0 \+ 1, _u\.imag\)", src), src
    for cupy in (None, _NumpyAsCupy()):
        monkeypatch.setattr(rt, "_CUPY", [cupy])
        monkeypatch.setattr(rt, "_cp_out", lambda cp, o, dtype: rt._back(np.asarray(o), dtype))
        for f, args, mark in fs:
            for dt, tol in ((np.complex128, 1e-10), (np.complex64, 2e-4)):
                a = [x.astype(dt) for x in args]
                g = ad.jit(f, backend="cuda")
                assert mark in g.lower(*a).source
                got, want = g(*a), ad.jit(f, backend="interpret")(*a)
                assert np.asarray(got).dtype == np.asarray(want).dtype
                np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol,
                                           atol=tol)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_scatter_adds_of_dtypes_without_atomics_are_kernels():
    """``.at[i].add`` of bool, int8, int16, uint8 (no CUDA atomics) is a kernel whose
    threads walk the index rows in order (as a scatter that sets), with numpy's results:
    integers wrap, bools or. It was a host call (a host loop in a loop body)."""
    idx = np.array([0, 2, 0, 3, 3, 3, -1])
    for dt in (np.int8, np.int16, np.uint8, np.bool_):
        x, upd = (np.arange(8) * 37 % 11).astype(dt), (np.arange(7) * 50).astype(dt)
        f = lambda x, u: x.at[idx].add(u)                                  # noqa: E731
        g = ad.jit(f, backend="cuda")
        assert "host_call" not in g.lower(x, upd).source
        got, want = np.asarray(g(x, upd)), np.asarray(ad.jit(f, backend="interpret")(x, upd))
        assert got.dtype == want.dtype == dt
        np.testing.assert_array_equal(got, want)
    x2 = (np.arange(12).reshape(4, 3) % 5).astype(np.int8)
    _interp_agrees(lambda x: x.at[np.array([1, 1, 2])].add(x[:3] * 9), x2)


def test_factorizations_fall_back_to_host_lapack_without_cupy(monkeypatch):
    from autodiff.backends import cuda_runtime as rt
    from autodiff.backends import numba_cuda_linalg
    assert rt.cupy() is None
    monkeypatch.setattr(numba_cuda_linalg, "SMALL_N", 0)       # not the small kernels
    a = _spd(3)
    f = ad.jit(lambda a, b: anp.linalg.solve(a, b) + anp.linalg.slogdet(a)[1], backend="cuda")
    assert "_rt.linalg(_E[" in f.lower(a, u((3,))).source
    np.testing.assert_allclose(np.asarray(f(a, u((3,)))),
                               np.linalg.solve(a, u((3,))) + np.linalg.slogdet(a)[1], rtol=1e-12)


def test_small_solves_and_factorizations_are_kernels_agreeing_with_lapack():
    """``solve``, ``slogdet`` (and ``det``), ``cholesky`` and ``triangular_solve`` of real
    matrices up to ``SMALL_N`` on a side are kernels of a block per system (``numba_cuda_linalg``),
    batched, float64 and float32, every flag of a triangular solve on either side, and
    agree with LAPACK (the interpreter); a singular system or a matrix that is not
    positive definite gives NaN for that matrix alone, as on the CPU. Larger ones and
    complex ones are library calls."""
    from autodiff.backends.numba_cuda_linalg import SMALL_N
    from autodiff.primitives.linalg import triangular_solve
    rng = np.random.default_rng(11)
    for batch, n, k in [((), 1, 1), ((), 3, 2), ((2,), 5, 1), ((2, 3), 4, 3), ((), 9, 4)]:
        A = rng.normal(size=batch + (n, n)) + n * np.eye(n)
        B = rng.normal(size=batch + (n, k))
        S = A @ np.swapaxes(A, -1, -2)
        fs = [(anp.linalg.solve, (A, B)), (anp.linalg.cholesky, (S,)),
              (lambda a: tuple(anp.linalg.slogdet(a)), (A - n * np.eye(n),)),
              (anp.linalg.det, (A,))]
        for left in ((True, False) if n in (3, 5) else ()):    # (every flag, two shapes)
            b = B if left else np.swapaxes(B, -1, -2)
            for lower in (True, False):
                for trans in (False, True):
                    for unit in (False, True):
                        fs.append((lambda a, b, kw=dict(left_side=left, lower=lower,
                                                        transpose_a=trans,
                                                        unit_diagonal=unit):
                                   triangular_solve(a, b, **kw), (A, b)))
        for f, args in fs:
            for dt, tol in ((np.float64, 1e-11), (np.float32, 2e-5)):
                a = [x.astype(dt) for x in args]
                g = ad.jit(f, backend="cuda", dynamic_shapes=False)    # a kernel per size
                src = g.lower(*a).source
                assert "_rt.linalg(" not in src and "cuda.shared.array((" in src
                got, want = np.asarray(g(*a)), np.asarray(ad.jit(f, backend="interpret")(*a))
                assert got.dtype == want.dtype == dt
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # slogdet: numpy's (0, -inf) for a singular matrix, a NaN pivot keeps the sign
    M = np.stack([np.eye(3) * 2.0, np.zeros((3, 3)), -np.eye(3), np.full((3, 3), np.nan)])
    sign, logdet = ad.jit(anp.linalg.slogdet, backend="cuda")(M)
    np.testing.assert_array_equal(np.asarray(sign), [1.0, 0.0, -1.0, 1.0])
    np.testing.assert_allclose(np.asarray(logdet), [3 * np.log(2.0), -np.inf, 0.0, np.nan])
    # pivoting: general matrices, one with a zero first element
    A = rng.normal(size=(6, 7, 7))
    A[0, 0, 0] = 0.0
    _interp_agrees(anp.linalg.solve, A, rng.normal(size=(6, 7, 3)), rtol=1e-9, atol=1e-11)
    A = rng.normal(size=(2, 4, 4)) + 4 * np.eye(4)
    A[1] = 0.0                                       # singular: a zero pivot
    B = rng.normal(size=(2, 4, 2))
    got = np.asarray(ad.jit(anp.linalg.solve, backend="cuda")(A, B))
    assert np.isnan(got[1]).all() and np.isfinite(got[0]).all()
    np.testing.assert_allclose(got[0], np.linalg.solve(A[0], B[0]), rtol=1e-11)
    S = np.stack([np.eye(4) * 2.0, -np.eye(4), np.diag([1.0, 1.0, np.nan, 1.0])])
    got = np.asarray(ad.jit(anp.linalg.cholesky, backend="cuda")(S))
    np.testing.assert_allclose(got[0], np.eye(4) * np.sqrt(2.0), rtol=1e-15)
    assert np.isnan(got[1:]).all()
    big = _spd(SMALL_N + 1)
    for f, args in [(anp.linalg.solve, (big, big[:, :2])), (anp.linalg.cholesky, (big,)),
                    (anp.linalg.solve, (A[0] * (1 + 1j), B[0] * 1j))]:
        assert "_rt.linalg(" in ad.jit(f, backend="cuda").lower(*args).source
        _interp_agrees(f, *args, rtol=1e-9, atol=1e-11)


def test_a_kalman_filter_scan_is_one_device_loop():
    """A Kalman filter's log likelihood (``cholesky``, ``triangular_solve`` and ``solve``
    each step) and its gradient run as device loops: their launches do not grow with the
    steps (20 steps: 302 and 763 launches when each factorization was a library call, a
    host loop); values and gradients agree with the interpreter."""
    from autodiff.primitives.linalg import triangular_solve
    rng = np.random.default_rng(12)
    n = 4
    F, H = np.eye(n) * 0.9 + 0.05, rng.normal(size=(2, n))

    def loglik(q, ys):
        def step(c, y):
            m, P = c
            m, P = F @ m, F @ P @ F.T + np.eye(n) * q
            S = H @ P @ H.T + np.eye(2) * 0.2
            L = anp.linalg.cholesky(S)
            r = y - H @ m
            a = triangular_solve(L, r[:, None], left_side=True, lower=True)
            K = anp.linalg.solve(S, H @ P).T
            return (m + K @ r, P - K @ H @ P), (-0.5 * anp.sum(a * a)
                                                - anp.sum(anp.log(anp.diagonal(L))))
        return anp.sum(lax.scan(step, (anp.zeros(n), anp.eye(n)), ys)[1])
    ys = rng.normal(size=(9, 2))
    counts = [_one_launch(loglik, 0.3, ys[:4]), _one_launch(loglik, 0.3, ys)]
    vg = ad.value_and_grad(loglik)
    counts.append(_one_launch(vg, 0.3, ys))
    assert counts[0] == counts[1] and max(counts) <= 5, counts
    for f in (loglik, vg):
        _interp_agrees(f, 0.3, ys, rtol=1e-10, atol=1e-12)


def test_program_module_is_written_once_and_loaded_from_the_disk_cache():
    from autodiff.backends import numba_cuda as nc
    prog = ad.jit(lambda x: anp.cos(x) * 3.0, backend="cuda").lower(u((4,))).program
    mod = nc.load(prog.source)
    assert mod.__file__.endswith(".py") and os.sep + "cuda" + os.sep in mod.__file__
    key = nc._module_key(prog.source)
    del nc._MODULES[key]
    before = nc.STATS["from_disk"]
    again = nc.load(prog.source)
    assert nc.STATS["from_disk"] == before + 1 and again.__file__ == mod.__file__
    np.testing.assert_allclose(np.asarray(nc.entry(prog)(np.ones(4))[0]), np.cos(1.0) * 3.0)


def test_dropped_results_go_back_to_the_pool_and_held_ones_stay():
    from autodiff.backends import cuda_runtime as rt
    f = ad.jit(lambda x: anp.sum(anp.sin(x)) * 2.0, backend="cuda")
    g = ad.jit(lambda x: anp.cos(x) * 3.0, backend="cuda")
    x = u((50,))
    f(x), g(x)
    made = rt.pool_info()["allocated"]
    for i in range(12):                         # results dropped at once: reused
        assert float(f(x + i)) == pytest.approx(np.sum(np.sin(x + i)) * 2.0, rel=1e-12)
        np.testing.assert_allclose(np.asarray(g(x + i)), np.cos(x + i) * 3.0, rtol=1e-12)
    assert rt.pool_info()["allocated"] == made  # (it was one more per result per call)
    held = [g(x + i) for i in range(4)] + [f(x + i) for i in range(4)]
    for i in range(4):                          # held results are never handed out again
        np.testing.assert_allclose(np.asarray(held[i]), np.cos(x + i) * 3.0, rtol=1e-12)
        assert float(held[4 + i]) == pytest.approx(np.sum(np.sin(x + i)) * 2.0, rel=1e-12)
    view = held[0]._dev[10:20]                  # a view of a result's memory keeps it
    del held[0]
    for i in range(3):
        g(x + 7.0 + i)
    np.testing.assert_allclose(view.copy_to_host(), np.cos(x[10:20]) * 3.0, rtol=1e-12)
    ad.config.update("jit_cuda_reuse_results", False)    # the switch: results new again
    try:
        rt.release_pool()
        made = rt.pool_info()["allocated"]
        for i in range(3):
            g(x + i)
        assert rt.pool_info()["allocated"] == made + 3
    finally:
        ad.config.update("jit_cuda_reuse_results", True)


def test_program_modules_run_only_the_checked_source(tmp_path):
    # the module was imported with Python's loader, which runs a .pyc from cuda/__pycache__
    # when its stamp matches the source's mtime and size (the text compared was not what
    # ran), and <cache_dir>/cuda itself was never trust-checked
    import importlib.util
    from importlib import _bootstrap_external
    from autodiff.backends import numba_cuda as nc
    from autodiff.backends.cache_files import UnsafeCacheWarning
    old = ad.config.cache_dir
    ad.config.update("cache_dir", str(tmp_path / "cache"))
    try:
        prog = ad.jit(lambda x: anp.sin(x) * 5.0, backend="cuda").lower(u((4,))).program
        key = nc._module_key(prog.source)
        nc._MODULES.pop(key, None)
        path = nc.load(prog.source).__file__
        assert path == str(tmp_path / "cache" / "cuda" / f"c_{key}.py")
        planted = compile("raise RuntimeError('planted')", path, "exec")
        st = os.stat(path)
        pyc = importlib.util.cache_from_source(path)
        os.makedirs(os.path.dirname(pyc), mode=0o700, exist_ok=True)
        with open(pyc, "wb") as f:
            f.write(_bootstrap_external._code_to_timestamp_pyc(planted, st.st_mtime, st.st_size))
        os.chmod(pyc, 0o600)
        nc._MODULES.pop(key)
        assert nc.load(prog.source).__file__ == path            # the .pyc never runs
        with open(path, "a") as f:                               # other text, same name
            f.write("raise RuntimeError('planted')\n")
        nc._MODULES.pop(key)
        assert getattr(nc.load(prog.source), "__file__", None) is None   # in memory
        os.chmod(os.path.dirname(path), 0o770)                   # a group-writable cuda/
        nc._MODULES.pop(key)
        with pytest.warns(UnsafeCacheWarning, match="cuda"):
            assert getattr(nc.load(prog.source), "__file__", None) is None
        np.testing.assert_allclose(np.asarray(nc.entry(prog)(np.ones(4))[0]), np.sin(1.0) * 5.0)
    finally:
        ad.config.update("cache_dir", old)


def test_a_dtype_without_kernels_runs_on_the_interpreter():
    f = ad.jit(lambda x: x * 2.0, backend="cuda")
    x = np.ones(3, np.float16)
    np.testing.assert_array_equal(np.asarray(f(x)), x * 2.0)
    assert f.cache_info().compiled == 0 and f.cache_info().size == 1


def test_lower_then_compile_installs_the_entry():
    f = ad.jit(lambda x: anp.sum(x * x), backend="cuda")
    low = f.lower(u((6,)))
    assert "def kernel(" in low.as_text() and "@cuda.jit" in low.source
    g = low.compile()
    assert float(np.asarray(g(np.arange(6.0)))) == 55.0
    assert f.cache_info().size == 1


# ---------------------------------------------------------------------------------
# the optional dependency (subprocesses without the simulator)
# ---------------------------------------------------------------------------------

def _run(code, sim):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    if sim:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=600)


def _test_cpu_install_never_imports_numba_cuda():
    r = _run("""
        import sys, numpy as np, autodiff as ad, autodiff.numpy as anp
        ad.config.update("jit_background_compile", False)
        f = ad.jit(lambda x: anp.sum(anp.exp(x)))
        assert abs(float(f(np.zeros(3))) - 3.0) < 1e-12
        ad.device_put(np.ones(2)); ad.devices("cpu")
        bad = sorted(m for m in sys.modules if m.startswith(("numba.cuda", "numba_cuda", "cupy")))
        print("IMPORTED", bad)
        try:
            ad.jit(lambda x: x, backend="cuda")
        except ad.errors.UnsupportedError as e:
            print("ERROR", e)
        import importlib.util                  # as if numba-cuda were not installed
        real = importlib.util.find_spec
        importlib.util.find_spec = lambda n, *a: None if n == "numba_cuda" else real(n, *a)
        for call in (lambda: ad.jit(lambda x: x, backend="cuda"),
                     lambda: ad.device_put(np.ones(2), "cuda"), lambda: ad.devices("cuda")):
            try:
                call()
            except ad.errors.UnsupportedError as e:
                print("MISSING", e)
        print("DEVICES", ad.devices())
        """, sim=False)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "IMPORTED []" in r.stdout, r.stdout
    # no GPU here and no simulator: the error says what is missing and how to get it
    assert "ERROR" in r.stdout and "GPU" in r.stdout and "NUMBA_ENABLE_CUDASIM=1" in r.stdout
    assert r.stdout.count("MISSING") == 3 and r.stdout.count("pip install 'autodiff-numba[cuda]'") == 3
    assert "DEVICES [CpuDevice(id=0)]" in r.stdout


# numpy 2.5 removed numpy.row_stack (this machine's numpy still has it: take it away, from
# __all__ too, as numpy 2.5 has neither); numba-cuda 0.30.4 overloads it when its CUDA target
# first loads (backends/cuda_math.py:_import_numba_cuda works around that)
_NO_ROW_STACK = """
        import numpy
        del numpy.row_stack
        if "row_stack" in numpy.__all__:
            numpy.__all__.remove("row_stack")
        assert not hasattr(numpy, "row_stack")
"""                                         # indented as the code that follows it


def _test_cuda_backend_runs_where_numpy_has_no_row_stack():
    # the simulator: jit and jit(grad) of a program end to end
    r = _run(_NO_ROW_STACK + """
        import numpy as np, autodiff as ad, autodiff.numpy as anp
        ad.config.update("jit_background_compile", False)
        f = lambda x: anp.sum(anp.tanh(x) * anp.sin(x) + anp.exp(-x * x))
        x = np.linspace(-2.0, 2.0, 50)
        v = float(np.asarray(ad.jit(f, backend="cuda")(x)))
        g = np.asarray(ad.jit(ad.grad(f), backend="cuda")(x))
        want_g = (np.cos(x) * np.tanh(x) + np.sin(x) / np.cosh(x) ** 2
                  - 2 * x * np.exp(-x * x))
        np.testing.assert_allclose(v, np.sum(np.tanh(x) * np.sin(x) + np.exp(-x * x)),
                                   rtol=1e-12)
        np.testing.assert_allclose(g, want_g, rtol=1e-10, atol=1e-12)
        print("ROW_STACK", hasattr(numpy, "row_stack"))
        """, sim=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "ROW_STACK False" in r.stdout, r.stdout
    # the real CUDA target (no GPU needed): the registries it loads lazily at its first
    # compile, which is where numba-cuda's overload(np.row_stack) raised AttributeError
    r = _run(_NO_ROW_STACK + """
        import autodiff as ad, autodiff.numpy as anp
        try:
            ad.jit(lambda x: anp.sum(x), backend="cuda")     # imports numba.cuda
        except ad.errors.UnsupportedError:
            pass                                            # no GPU here: expected
        from numba.cuda.descriptor import cuda_target
        cuda_target.typing_context.refresh()
        cuda_target.target_context.refresh()
        print("ROW_STACK", hasattr(numpy, "row_stack"))
        """, sim=False)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "ROW_STACK False" in r.stdout, r.stdout


def test_plan_statements_with_rank0_results_are_written_while_planning():
    """The CUDA target's one departure from a plan rendered after planning: a statement
    with a rank-0 result (here a dot product, kept in a 1-element device buffer) is
    written while planning, since where its value lives decides how its readers are
    planned; every other statement is rendered from its record afterwards."""
    from autodiff.backends.kernel_plan import Opaque
    x, m = u((9,), seed=3), u((4, 9), seed=4)
    f = lambda x, m: anp.dot(x, x) * (m @ x)        # noqa: E731
    low = ad.jit(f, backend="cuda").lower(x, m)
    stmts = [st for st in low.plan.entry + [s for c in low.plan.nests for s in c.post]
             if isinstance(st, Opaque)]
    by_rank = {len(st.eqn.outvars[0].aval.shape): st for st in stmts}
    assert set(by_rank) == {0, 1}
    assert by_rank[0].lines is not None and any("_rt.matmul" in ln for ln in by_rank[0].lines
                                                if isinstance(ln, str))
    assert by_rank[1].lines is None
    assert low.plan.loc[by_rank[0].eqn.outvars[0]][2].endswith("_DOT[0]")  # on the device
    np.testing.assert_allclose(np.asarray(ad.jit(f, backend="cuda")(x, m)), f(x, m),
                               rtol=1e-12)


def test_lower_then_compile_runs_the_lowered_program():
    """``jitted.lower(x).compile()`` on the CUDA backend: its record's ``compile`` builds
    the entry of that very program, which the jitted function then uses."""
    x = u((7,), seed=11)
    f = ad.jit(lambda x: anp.sum(anp.tanh(x) * x), backend="cuda")
    c = f.lower(x).compile()
    np.testing.assert_allclose(float(np.asarray(c(x))), float(np.sum(np.tanh(x) * x)),
                               rtol=1e-12)
    assert f.cache_info().size == 1


def test_simulator_barriers_do_not_poll():
    """backends/cuda_simulator.py: numba-cuda's simulator released a block's barriers by
    polling its threads in a loop without pause (``is_alive()`` on each, over and over);
    the replacement sleeps until a thread reaches a barrier or ends. The barrier rule is
    upstream's (every live thread at it, ``syncthreads_count`` through it), an error in
    one thread is raised with its indices instead of hanging the others, and no thread is
    polled."""
    import threading
    from numba.cuda.simulator import kernel as sim_kernel
    from autodiff.backends import cuda_simulator
    assert cuda_simulator.installed()

    @_sim_cuda.jit            # a module global: the simulator swaps kernels' globals only
    def tree(x, out, count):
        sh = _sim_cuda.shared.array(8, np.float64)
        t = _sim_cuda.threadIdx.x
        i = _sim_cuda.blockIdx.x * 8 + t
        sh[t] = x[i]
        for _ in range(3):                     # a barrier in a loop, as a device loop has
            _sim_cuda.syncthreads()
            s = 4
            while s > 0:
                if t < s:
                    sh[t] += sh[t + s]
                _sim_cuda.syncthreads()
                s //= 2
            if t == 0:
                out[_sim_cuda.blockIdx.x] += sh[0]
            _sim_cuda.syncthreads()
            sh[t] = x[i]
        c = _sim_cuda.syncthreads_count(x[i] > 0)
        if t == 0:
            count[_sim_cuda.blockIdx.x] = c
        if t >= 5:
            return                            # threads that end early leave the barrier
        _sim_cuda.syncthreads()

    x = u((24,), seed=9)
    out, count = np.zeros(3), np.zeros(3, np.int64)
    calls = []
    is_alive = threading.Thread.is_alive
    threading.Thread.is_alive = lambda self: (                 # the block's threads only
        calls.append(1) if isinstance(self, sim_kernel.BlockThread) else None) or is_alive(self)
    try:
        tree[3, 8](x, out, count)
        assert not calls                      # nothing polled
        upstream = sim_kernel.BlockManager.run
        sim_kernel.BlockManager.run = cuda_simulator._UPSTREAM["run"]
        try:
            out2, count2 = np.zeros(3), np.zeros(3, np.int64)
            tree[3, 8](x, out2, count2)
        finally:
            sim_kernel.BlockManager.run = upstream
        assert len(calls) > 24                # upstream: every thread, again and again
    finally:
        threading.Thread.is_alive = is_alive
    np.testing.assert_allclose(out, 3 * x.reshape(3, 8).sum(axis=1), rtol=1e-13)
    np.testing.assert_array_equal(count, (x.reshape(3, 8) > 0).sum(axis=1))
    np.testing.assert_allclose(out2, out, rtol=1e-13)
    np.testing.assert_array_equal(count2, count)

    @_sim_cuda.jit
    def bad(x):
        sh = _sim_cuda.shared.array(4, np.float64)
        t = _sim_cuda.threadIdx.x
        sh[t] = x[10 if t == 1 else t]          # thread 1 alone reads past the end
        _sim_cuda.syncthreads()

    with pytest.raises(IndexError, match=r"tid=\[1, 0, 0\]"):
        bad[1, 4](np.ones(5))


def test_simulator_kernels_make_inf_and_nan_without_warnings():
    # a GPU (and Numba's CPU kernels) makes them silently; the simulator's kernel threads
    # warned once per thread and operation (numpy scalars), outside the call's errstate
    import warnings
    f = ad.jit(lambda x: (anp.sum(x / x) + anp.log(x), 1.0 / x), backend="cuda")
    x = np.array([0.0, -0.0, 2.0])
    f(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = f(x)
    with np.errstate(all="ignore"):
        want = (np.sum(x / x) + np.log(x), 1.0 / x)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.asarray(a), b)


def test_simulator_shared_arrays_are_one_per_block(monkeypatch):
    """backends/cuda_simulator.py: numba-cuda's simulator makes a block's shared array
    when the first thread asks for it, looking its call site up in a dict and storing
    the new array after; a thread switched to in between made a second array, so the
    block's "shared" memory was two arrays. Making the array slow (a sleep inside
    ``np.empty``) switches threads there every time: upstream's allocation gives a sum
    over a shared array that misses what the other threads wrote; the locked one gives
    every thread's value. (Run with ``sys.setswitchinterval(1e-6)``, the CUDA tests
    failed 10 times on this alone.)"""
    import time
    from numba.cuda.simulator import kernelapi
    from autodiff.backends import cuda_simulator

    def total(out):
        sh = _sim_cuda.shared.array(8, np.float64)
        t = _sim_cuda.threadIdx.x
        sh[t] = t + 1.0
        _sim_cuda.syncthreads()
        if t == 0:
            s = 0.0
            for k in range(8):
                s += sh[k]
            out[0] = s

    empty = np.empty

    def slow_empty(*a, **k):
        time.sleep(0.05)                      # (longer than starting the threads)
        r = empty(*a, **k)
        r.fill(np.nan)                        # (not memory a freed array left as it was)
        return r
    monkeypatch.setattr(np, "empty", slow_empty)
    out = np.zeros(1)
    _sim_cuda.jit(total)[1, 8](out)           # (a kernel keeps its arrays: a new one each)
    assert out[0] == 36.0
    monkeypatch.setattr(kernelapi.FakeCUDAShared, "array", cuda_simulator._UPSTREAM["shared"])
    out = np.zeros(1)
    _sim_cuda.jit(total)[1, 8](out)
    assert np.isnan(out[0])                   # upstream: thread 0 summed an array of its own


def test_kernels_agree_whatever_the_scheduling(monkeypatch):
    """The simulator runs a block's threads as Python threads, which the interpreter
    switches every 5 ms: a kernel missing a barrier (a thread reading shared memory
    before another wrote it) mostly passes there. Switched every microsecond, threads
    interleave within a statement, so such a race shows. And it runs a launch's blocks
    one at a time in index order, which hides a kernel depending on that order, or
    whose blocks race with each other; here they also run last first
    (``cuda_simulator.reversed_blocks``) and all at once, as on a GPU
    (``concurrent_blocks``). The kernels with the most barriers and blocks (every
    reduction strategy, row loops, device loops with a nested while, a hessian) agree
    with the interpreter each way; the whole of both CUDA test files did too (the
    simulator's shared-array race above was all it found)."""
    from autodiff.backends import cuda_launches, cuda_simulator

    def order_of_blocks():
        order = []

        @_sim_cuda.jit
        def blocks(flag, seen):
            t, b = _sim_cuda.threadIdx.x, _sim_cuda.blockIdx.x
            if t == 0 and b == 0:             # waits a while for block 1's flag: in
                for _ in range(20000):        # index order only blocks run at once see it
                    if flag[0] == 1:
                        seen[0] = 1
                        break
            if t == 0:
                order.append(b)
                if b == 1:
                    flag[0] = 1
        seen = np.zeros(1, np.int64)
        blocks[3, 2](np.zeros(1, np.int64), seen)
        return order, seen[0]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        assert order_of_blocks() == ([0, 1, 2], 0)
        _agree_whatever_the_scheduling(monkeypatch, cuda_launches)
        with cuda_simulator.reversed_blocks():
            assert order_of_blocks() == ([2, 1, 0], 1)     # block 1 ran before 0
            _agree_whatever_the_scheduling(monkeypatch, cuda_launches)
        with cuda_simulator.concurrent_blocks():
            assert order_of_blocks()[1] == 1
            _agree_whatever_the_scheduling(monkeypatch, cuda_launches)
    finally:
        sys.setswitchinterval(old)


def _agree_whatever_the_scheduling(monkeypatch, cuda_launches):
    def layernorm(v, g):
        m = anp.mean(v, axis=-1, keepdims=True)
        c = v - m
        return anp.sum(anp.tanh(c / anp.sqrt(anp.mean(c * c, axis=-1, keepdims=True) + 1e-5)
                                * g))
    test_reduction_strategies_all_agree()
    test_hessian_agrees_with_cpu()
    check(ad.value_and_grad(while_in_scan, argnums=(0, 1)),
          [(u((6,), seed=1), u((3, 6), seed=2))])
    with monkeypatch.context() as m:           # row loops: a block, a group of lanes a row
        m.setattr(cuda_launches, "ONE_BLOCK_MAX", 8)
        check(ad.grad(layernorm, argnums=(0, 1)), [(u((6, 40)), u((40,), seed=1)),
                                                  (u((12, 6)), u((6,), seed=1))])


def _test_cuda_backend_in_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        "-p", "no:randomly", os.path.abspath(__file__)],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert r.returncode == 0, (r.stdout[-6000:] + r.stderr[-3000:])
    assert " passed" in r.stdout and "failed" not in r.stdout, r.stdout[-2000:]


if not IN_SIMULATOR:
    # the simulator tests above run in the subprocess of the driver below
    for _name in [n for n in list(globals()) if n.startswith("test_")]:
        del globals()[_name]
    test_cpu_install_never_imports_numba_cuda = _test_cpu_install_never_imports_numba_cuda
    test_cuda_backend_in_simulator = _test_cuda_backend_in_simulator
    test_cuda_backend_runs_where_numpy_has_no_row_stack = (
        _test_cuda_backend_runs_where_numpy_has_no_row_stack)

