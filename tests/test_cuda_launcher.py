"""Launches bound once per argument types (``backends/cuda_launcher.py``) pass the driver
exactly what numba-cuda's own launch passes.

There is no GPU here, so numba-cuda runs for real up to its driver call, which
:func:`stub_driver` replaces by a recorder, over device arrays whose pointers are made up
and never read (:func:`fake_args`). Each case launches a kernel through numba-cuda's whole
path (``k[grid, block](*args)``: typing, overload lookup, ``_prepare_args``, launch
configuration) and through a :class:`BoundKernel` (its first launch, which binds, and a
later one), and compares the three calls the driver would have received. The kernels
here are numba-cuda ``_Kernel`` objects with their argument types set by hand, since
compiling one needs NVVM (the ``ptx`` extra); ``gpu_check.py --ptx`` (CI's PTX step) runs
the same comparison over every kernel the CUDA backend generates, compiled by NVVM.

numba-cuda is imported without the simulator, so the cases run in a subprocess of their
own (this module's ``__main__``), whatever the suite's environment.
"""
import contextlib
import ctypes
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


# ------------------------------------------------------------------ shared with gpu_check

class _Module:
    initialized = True


class _Cufunc:
    """A kernel's function in the (absent) current context: one per code library, so a
    launch of the wrong overload is seen."""

    def __init__(self):
        self.kernel, self.module = object(), _Module()


@contextlib.contextmanager
def stub_driver(cc=(9, 0)):
    """numba-cuda with no driver: kernels compile for ``cc`` and bind to no context, and
    each launch appends ``(stream, config, kernel, *params)`` (what numba-cuda hands the
    driver through ``cuda.core.launch``) to the list this yields."""
    from numba.cuda import codegen, dispatcher
    lib = codegen.CUDACodeLibrary
    saved = (dispatcher.launch, dispatcher.get_current_device, lib.get_cufunc,
             lib._ensure_cc)
    calls = []

    def get_cufunc(self):
        f = self.__dict__.get("_stub_cufunc")
        if f is None:
            f = self.__dict__["_stub_cufunc"] = _Cufunc()
        return f

    class _Device:
        compute_capability = cc
        id = 0

    dispatcher.launch = lambda *a: calls.append(a)
    dispatcher.get_current_device = lambda: _Device
    lib.get_cufunc = get_cufunc
    lib._ensure_cc = lambda self, c: c or (*cc, "a" if cc >= (9, 0) else "")
    try:
        yield calls
    finally:
        (dispatcher.launch, dispatcher.get_current_device, lib.get_cufunc,
         lib._ensure_cc) = saved


def fake_args(sig, strided=False):
    """Arguments of numba types ``sig``: device arrays over made-up pointers, numbers.
    ``None`` where a type is not one this makes."""
    from numba.cuda import types as t
    from numba.cuda.cudadrv import devicearray, driver
    from numba.cuda.np.numpy_support import as_dtype
    out = []
    for i, ty in enumerate(sig):
        if isinstance(ty, t.Array):
            dt = as_dtype(ty.dtype)
            shape = tuple(2 + k for k in range(ty.ndim))
            order = shape[::-1] if ty.layout != "F" else shape
            strides, acc = [], dt.itemsize * (2 if ty.layout == "A" or strided else 1)
            for n in order:
                strides.append(acc)
                acc *= n
            strides = tuple(strides[::-1]) if ty.layout != "F" else tuple(strides)
            mem = driver.MemoryPointer(None, 0x7F0000000000 + (i << 24), acc)
            out.append(devicearray.DeviceNDArray(shape, strides, dt, gpu_data=mem))
        elif isinstance(ty, t.UniTuple) and ty.dtype == t.int64:
            out.append(tuple(range(3, 3 + ty.count)))
        elif ty == t.int64:
            out.append(7)
        elif ty == t.float64:
            out.append(1.25)
        elif ty == t.boolean:
            out.append(True)
        elif ty == t.complex128:
            out.append(1.5 - 2j)
        elif isinstance(ty, (t.Integer, t.Float, t.Complex)):
            out.append(np.dtype(str(ty)).type(3))
        else:
            return None
    return out


def driver_call(call):
    """A recorded driver call as plain values: stream handle, grid, block, shared memory,
    cooperative, kernel, then each parameter (ctypes ones as (type, value))."""
    stream, cfg, kernel, *params = call
    return ((int(stream.handle), cfg.grid, cfg.block, cfg.shmem_size, cfg.is_cooperative,
             id(kernel))
            + tuple((type(p).__name__, p.value) if isinstance(p, ctypes._SimpleCData)
                    else (type(p).__name__, p) for p in params))


def launch_both(dispatcher, grid, block, args):
    """``(numba-cuda's call, the bound first call, the bound second call)``, each as
    :func:`driver_call`, and the binding; inside :func:`stub_driver`."""
    from numba.cuda import dispatcher as nd
    from autodiff.backends.cuda_launcher import BoundKernel
    calls = []
    saved = nd.launch
    nd.launch = lambda *a: calls.append(a)
    try:
        dispatcher[grid, block](*args)
        bk = BoundKernel(dispatcher)
        bk[grid, block](*args)
        bk[grid, block](*args)
    finally:
        nd.launch = saved
    assert len(calls) == 3, calls
    binding = next(iter(bk.bindings.values()))
    return [driver_call(c) for c in calls], binding


# --------------------------------------------------------------------------- the cases

def _kernel_for(argtypes):
    """A numba-cuda ``_Kernel`` taking ``argtypes``, without compiling one (no NVVM)."""
    from numba.cuda import dispatcher as nd

    class _Lib:
        def __init__(self):
            self.cufunc = _Cufunc()

        def get_cufunc(self):
            return self.cufunc

    from numba.cuda import types as t
    k = object.__new__(nd._Kernel)
    k.signature = t.void(*argtypes)
    k.extensions, k.debug, k.cooperative = [], False, False
    k.launch_config_sensitive = False
    k._codelibrary = _Lib()
    return k


def _dispatcher(n):
    """A real numba-cuda dispatcher of ``n`` parameters whose ``compile`` makes
    :func:`_kernel_for` kernels (one per signature, as numba-cuda keeps them)."""
    from numba import cuda
    src = f"def k({', '.join(f'a{i}' for i in range(n))}):\n    pass\n"
    ns = {}
    exec(src, ns)
    d = cuda.jit(ns["k"])
    made = {}

    def compile(sig):
        sig = tuple(sig)
        if sig not in made:
            made[sig] = _kernel_for(sig)
        return made[sig]
    d.compile = compile
    d.made = made
    return d


def case_parameters_agree_with_numba_cuda():
    """Arrays of every dtype the backend uses, ranks 1-3, C, F and strided layouts,
    numbers of each kind, tuples: the bound launches pass what numba-cuda passes."""
    import warnings
    from numba.cuda import types as t
    warnings.simplefilter("ignore")              # numba-cuda's small-grid warning
    dts = (t.float64, t.float32, t.int64, t.int32, t.uint8, t.boolean, t.complex128)
    sigs = []
    for dt in dts:
        for nd, lay in ((1, "C"), (2, "C"), (3, "C"), (2, "F"), (1, "A"), (2, "A")):
            sigs.append((t.Array(dt, nd, lay), t.Array(dt, 1, "C"), t.float64, t.int64))
    sigs += [(t.Array(t.float64, 1, "C"), t.boolean, t.float32, t.int32, t.uint16,
              t.UniTuple(t.int64, 3)),
             (t.Array(t.complex64, 2, "C"), t.complex128, t.complex64, t.int8),
             tuple(t.Array(t.float64, 2, "C") for _ in range(8))]
    fast = 0
    with stub_driver():
        for sig in sigs:
            args = fake_args(sig)
            assert args is not None, sig
            d = _dispatcher(len(sig))
            for grid, block in ((4, 256), ((3, 2), (16, 16)), ((5, 1, 2), 32)):
                (theirs, first, second), b = launch_both(d, grid, block, args)
                assert first == theirs, (sig, first, theirs)
                assert second == theirs, (sig, second, theirs)
                assert b.kernel is d.made[tuple(sig)]
                fast += b.fast
    assert fast == 3 * len(sigs), fast               # every case binds the short path


def case_other_arguments_take_numba_cudas_path():
    """What the short path does not know goes through numba-cuda's own launch: a tuple of
    mixed numbers, an int past int64, a rank-0 array; and every launch with the config
    off."""
    import warnings
    from numba.cuda import types as t
    from numba.cuda.cudadrv import devicearray, driver
    import autodiff as ad
    from autodiff.backends.cuda_launcher import BoundKernel, param
    warnings.simplefilter("ignore")
    assert param((1, 2.0)) is None and param(1 << 64) is None
    assert param("x") is None
    mem = driver.MemoryPointer(None, 0x7F0000000000, 8)
    r0 = devicearray.DeviceNDArray((), (), np.dtype(np.float64), gpu_data=mem)
    assert param(r0) is None and param(r0) is None       # kept as "not ours"
    with stub_driver() as calls:
        d = _dispatcher(2)
        bk = BoundKernel(d)
        for args in ((r0, (1, 2.0)), (r0, 1 << 63)):
            d[2, 32](*args)
            bk[2, 32](*args)
            assert driver_call(calls[-1]) == driver_call(calls[-2])
        assert not bk.bindings                    # numba-cuda's dispatcher launched them
        a = fake_args((t.Array(t.float64, 1, "C"), t.float64))
        ad.config.update("jit_cuda_bound_launches", False)
        try:
            bk[2, 32](*a)
        finally:
            ad.config.update("jit_cuda_bound_launches", True)
        assert not bk.bindings
        bk[2, 32](*a)
        assert len(bk.bindings) == 1
        d[2, 32](*a)
        assert driver_call(calls[-1]) == driver_call(calls[-2])


def case_a_new_layout_at_a_call_site_binds_anew():
    """The same call site given a strided array after a contiguous one launches the
    overload for the strided type (a 'C' kernel must never read a strided array)."""
    import warnings
    from numba.cuda import types as t
    from autodiff.backends.cuda_launcher import BoundKernel
    warnings.simplefilter("ignore")
    with stub_driver() as calls:
        d = _dispatcher(1)
        bk = BoundKernel(d)
        c = fake_args((t.Array(t.float64, 2, "C"),))
        s = fake_args((t.Array(t.float64, 2, "C"),), strided=True)
        for args in (c, s, c, s):
            d[4, 32](*args)
            bk[4, 32](*args)
            assert driver_call(calls[-1]) == driver_call(calls[-2])
        assert sorted(k[0].layout for k in bk.bindings) == ["A", "C"]
        assert calls[-1][2] is d.made[(t.Array(t.float64, 2, "A"),)]._codelibrary.cufunc.kernel


def case_a_disagreeing_binding_launches_numba_cudas_way():
    """A kernel with an argument extension (which may rewrite arguments) launches through
    numba-cuda's own path: the short path is only kept when nothing can change what numba-cuda
    would pass."""
    import warnings
    from numba.cuda import types as t
    from autodiff.backends.cuda_launcher import BoundKernel
    warnings.simplefilter("ignore")

    class Doubling:
        def prepare_args(self, ty, val, stream=0, retr=None):
            return ty, (val * 2 if isinstance(val, float) else val)
    with stub_driver() as calls:
        d = _dispatcher(2)
        a = fake_args((t.Array(t.float64, 1, "C"), t.float64))
        k = d.compile((t.Array(t.float64, 1, "C"), t.float64))
        k.extensions = [Doubling()]
        d[2, 32](*a)
        bk = BoundKernel(d)
        bk[2, 32](*a)
        bk[2, 32](*a)
        assert not next(iter(bk.bindings.values())).fast
        assert driver_call(calls[-1]) == driver_call(calls[-3])
        assert driver_call(calls[-1])[-1] == ("c_double", 2.5)


def case_a_packing_that_differs_is_never_used():
    """The first launch of a binding compares the short path's packing with numba-cuda's
    own: made to differ (an array's shape and strides swapped), the binding launches
    numba-cuda's way and the driver still gets numba-cuda's parameters."""
    import warnings
    from numba.cuda import types as t
    from autodiff.backends import cuda_launcher as cl
    warnings.simplefilter("ignore")
    right = cl._array_param

    def swapped(a, nb):
        typ, p = right(a, nb)
        return typ, p[:5] + tuple(a.strides) + tuple(a.shape)
    cl._array_param = swapped
    try:
        with stub_driver():
            d = _dispatcher(2)
            a = fake_args((t.Array(t.float64, 2, "C"), t.float64))
            (theirs, first, second), b = launch_both(d, 4, 32, a)
    finally:
        cl._array_param = right
    assert not b.fast
    assert first == theirs and second == theirs


def case_types_numba_cuda_names_otherwise_take_its_path():
    """Where numba-cuda would type an argument otherwise than this module does (made so
    here: a float called float32), the binding compiles nothing and every launch is
    numba-cuda's own, with numba-cuda's overload."""
    import warnings
    from numba.cuda import types as t
    from autodiff.backends import cuda_launcher as cl
    warnings.simplefilter("ignore")
    a = fake_args((t.Array(t.float64, 1, "C"), t.float64))
    right = cl.param

    def wrong(x):
        got = right(x)
        return (t.float32, got[1]) if type(x) is float else got
    cl.param = wrong
    try:
        with stub_driver():
            d = _dispatcher(2)
            (theirs, first, second), b = launch_both(d, 4, 32, a)
    finally:
        cl.param = right
    assert not b.fast and b.kernel is None
    assert list(d.made) == [(t.Array(t.float64, 1, "C"), t.float64)]
    assert first == theirs and second == theirs


def case_generated_modules_bind_their_kernels():
    """A program's module loaded on a GPU (no simulator) has its kernels bound, and
    counting launches wraps the bound kernels, then puts them back."""
    import autodiff as ad
    import autodiff.numpy as anp
    from autodiff.backends import numba_cuda
    from autodiff.backends.cuda_launcher import BoundKernel
    from autodiff.backends.cuda_runtime import count_launches, _Counted
    closed = ad.make_jaxpr(lambda x: anp.sum(anp.sin(x) * x))(np.ones(50))
    mod = numba_cuda.load(numba_cuda.lower(closed).source)
    names = [n for n in vars(mod) if n.startswith("_k") and n[2:].isdigit()]
    assert names and all(isinstance(getattr(mod, n), BoundKernel) for n in names)
    k = getattr(mod, names[0])
    assert k.py_func is k.dispatcher.py_func
    with count_launches():
        assert isinstance(getattr(mod, names[0]), _Counted)
        assert getattr(mod, names[0]).wrapped_kernel is k
    assert getattr(mod, names[0]) is k


CASES = [v for n, v in sorted(globals().items()) if n.startswith("case_")]


def test_bound_launches_pass_the_driver_what_numba_cuda_passes(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["AUTODIFF_CACHE_DIR"] = str(tmp_path)
    r = subprocess.run([sys.executable, os.path.join(HERE, "test_cuda_launcher.py")],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == [c.__name__ for c in CASES], r.stdout


if __name__ == "__main__":
    for case in CASES:
        case()
        print(case.__name__, flush=True)
