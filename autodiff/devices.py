"""Where arrays live and when they are ready.

Computation on the CPU backends is synchronous: when a function returns, its results
are computed. ``block_until_ready`` is there for code written for JAX's asynchronous
dispatch (benchmarks that wait before stopping a clock); it returns its argument.

``ad.devices()`` lists the devices of the available backends (this module is callable:
``ad.devices`` is both the module and that function). ``ad.device_put(x, "cuda")``
returns :class:`CudaArray` s (numba-cuda device arrays; docs/cuda.md), which
``jit(..., backend="cuda")`` reads in place and returns; ``np.asarray`` brings one back.
Elsewhere (``anp`` functions called eagerly, ``grad`` and the other transforms outside
``jit``) a device array is copied to the host first and the result is a numpy value.

>>> import numpy as np, autodiff as ad
>>> ad.block_until_ready({"w": np.ones(2)})
{'w': array([1., 1.])}
>>> ad.devices()[0]
CpuDevice(id=0)
"""
import importlib.util
import operator
import sys
import types

import numpy as np

from .api_util import FOREIGN_ARRAYS
from .config import config
from .core import Tracer, user_source
from .errors import UnsupportedError
from .tree_util import tree_leaves, tree_map

# numba-cuda (backends.numba_cuda, backends.cuda_runtime, numba.cuda) is imported inside the
# functions that need a GPU: it is an optional, heavy dependency

__all__ = ["block_until_ready", "device_put", "device_get", "devices", "CudaArray",
           "CpuDevice", "CudaDevice", "is_foreign_cuda"]


class CpuDevice:
    """The host (every CPU backend computes here)."""
    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id=0):
        self.id = id

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __eq__(self, other):
        return isinstance(other, CpuDevice) and other.id == self.id

    def __hash__(self):
        return hash(("cpu", self.id))


class CudaDevice:
    """A CUDA GPU (or numba-cuda's simulator of one: ``device_kind`` says which)."""
    platform = "cuda"

    def __init__(self, id, device_kind):
        self.id, self.device_kind = id, device_kind

    def __repr__(self):
        return f"CudaDevice(id={self.id}, device_kind={self.device_kind!r})"

    def __eq__(self, other):
        return isinstance(other, CudaDevice) and other.id == self.id

    def __hash__(self):
        return hash(("cuda", self.id))


def _cuda_devices():
    """The CUDA devices, or ``[]`` (numba.cuda is imported only if numba-cuda is there)."""
    if importlib.util.find_spec("numba_cuda") is None:
        return []
    from .backends.numba_cuda import available
    ok, why = available()
    if not ok:
        return []
    from .backends.cuda_math import cuda      # the kernels' compiler (numba-cuda by default)
    if "simulator" in why:
        return [CudaDevice(0, "CUDA simulator")]
    out = []
    for i, d in enumerate(cuda.gpus):
        name = d.name
        out.append(CudaDevice(i, name.decode() if isinstance(name, bytes) else str(name)))
    return out


def devices(backend=None):
    """The devices of the available backends: the host first, then CUDA GPUs (or the
    CUDA simulator when ``NUMBA_ENABLE_CUDASIM=1``). ``backend="cpu"`` or ``"cuda"``
    lists one kind; asking for ``"cuda"`` where it is missing raises ``UnsupportedError``
    saying what is missing.

    >>> import autodiff as ad
    >>> ad.devices("cpu")
    [CpuDevice(id=0)]
    """
    if backend in ("cpu", "host"):
        return [CpuDevice(0)]
    if backend in ("cuda", "gpu"):
        found = _cuda_devices()
        if not found:
            _require_cuda()
        return found
    if backend is not None:
        raise ValueError(f"devices: unknown backend {backend!r}; choose 'cpu' or 'cuda'")
    return [CpuDevice(0)] + _cuda_devices()



def device_count(backend=None):
    """How many devices ``backend`` has (JAX's ``jax.device_count()``); by default the
    backend ``jit`` uses (``config.default_backend``; the interpreter runs on the host).

    >>> import autodiff as ad
    >>> ad.device_count("cpu")
    1
    """
    if backend is None:
        backend = config.default_backend
        backend = "cpu" if backend == "interpret" else backend
    return len(devices(backend))


def local_device_count(backend=None):
    """JAX's ``jax.local_device_count()``: every device is local (one process).

    >>> import autodiff as ad
    >>> ad.local_device_count("cpu")
    1
    """
    return device_count(backend)


def default_backend():
    """The backend ``jit`` uses when none is named (``config.default_backend``; JAX's
    ``jax.default_backend()``).

    >>> import autodiff as ad
    >>> ad.default_backend()
    'cpu'
    """
    return config.default_backend


def process_index():
    """JAX's ``jax.process_index()``: 0, autodiff runs in one process.

    >>> import autodiff as ad
    >>> ad.process_index(), ad.process_count()
    (0, 1)
    """
    return 0


def process_count():
    """JAX's ``jax.process_count()``: 1 (see :func:`process_index`).

    >>> import autodiff as ad
    >>> ad.process_count()
    1
    """
    return 1


def _require_cuda():
    if importlib.util.find_spec("numba_cuda") is None:
        raise UnsupportedError("device 'cuda' needs numba-cuda, which is not installed "
                               "(pip install 'autodiff-numba[cuda]')", source=user_source())
    from .backends.numba_cuda import require_available
    require_available(source=user_source())


#: ``cuda_runtime.reclaim``, once the CUDA backend is loaded: a result buffer its pool made
#: goes back to the pool when the last CudaArray holding it is dropped
RECLAIM = []


class CudaArray:
    """An array in CUDA device memory (a numba-cuda device array inside).

    What ``ad.device_put(x, "cuda")`` and ``jit(..., backend="cuda")`` return. It has
    ``shape``, ``dtype``, ``ndim``, ``size``; ``np.asarray(a)`` (or ``a.copy_to_host()``)
    copies it to the host; ``__cuda_array_interface__`` hands it to CuPy and numba-cuda
    without a copy (on a GPU). Any other use (``anp`` functions, transforms outside jit,
    indexing, arithmetic) works on a host copy and returns numpy values.
    """

    __slots__ = ("_dev", "_shape")
    _autodiff_device = "cuda"
    __array_priority__ = 100

    def __init__(self, dev, shape=None):
        self._dev = dev
        # a rank-0 result stays in its 1-element buffer: ``shape=()`` (a reshape of a
        # numba-cuda array makes a new array object, tens of microseconds on the host)
        self._shape = shape

    def __del__(self):
        if RECLAIM:
            d = self._dev
            if sys.getrefcount(d) <= 3:      # this slot, d and the argument: no one else
                try:
                    RECLAIM[0](d)
                except Exception:  # noqa: BLE001 - a finalizer (also at exit) never raises
                    pass

    @property
    def shape(self):
        """The array's shape (a tuple)."""
        return tuple(self._dev.shape) if self._shape is None else self._shape

    @property
    def ndim(self):
        """Its number of dimensions."""
        return len(self.shape)

    @property
    def size(self):
        """Its number of elements."""
        return int(self._dev.size)

    @property
    def dtype(self):
        """Its numpy dtype."""
        return self._dev.dtype

    @property
    def device(self):
        """The :class:`CudaDevice` holding it."""
        return CudaDevice(0, "cuda")

    @property
    def __cuda_array_interface__(self):
        cai = self._dev.__cuda_array_interface__
        if self._shape is not None:
            cai = dict(cai, shape=self._shape, strides=None)
        return cai

    def copy_to_host(self):
        """A numpy copy of the array (what ``np.asarray`` returns)."""
        return np.asarray(self._dev.copy_to_host()).reshape(self.shape)

    def __array__(self, dtype=None, copy=None):
        a = self.copy_to_host()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __autodiff_array__(self):
        return self.copy_to_host()

    @staticmethod
    def __autodiff_wrap__(x):
        return x

    def block_until_ready(self):
        """Wait for the device's queued work (JAX's name); returns the array."""
        from .backends.cuda_math import cuda
        cuda.synchronize()
        return self

    def __repr__(self):
        return f"CudaArray({self.copy_to_host()!r})"

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, idx):
        return self.copy_to_host()[idx]

    def __float__(self):
        return float(self.copy_to_host())

    def __int__(self):
        return int(self.copy_to_host())

    def __bool__(self):
        return bool(self.copy_to_host())

    def __iter__(self):
        return iter(self.copy_to_host())


def _host_op(name):
    op = getattr(operator, name)

    def fn(self, other):
        return op(self.copy_to_host(), other.copy_to_host() if isinstance(other, CudaArray)
                  else other)

    def rfn(self, other):
        return op(other, self.copy_to_host())
    return fn, rfn


for _n in ("add", "sub", "mul", "truediv", "floordiv", "pow", "mod", "matmul", "lt", "le",
           "gt", "ge", "eq", "ne"):
    _f, _r = _host_op(_n)
    setattr(CudaArray, f"__{_n}__", _f)
    if _n not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(CudaArray, f"__r{_n}__", _r)
CudaArray.__neg__ = lambda self: -self.copy_to_host()
CudaArray.__hash__ = None

_HOST = (None, "cpu", "host")


def block_until_ready(tree):
    """Wait until every array in ``tree`` is computed (leaves with their own
    ``block_until_ready``, such as device arrays, are waited for); returns ``tree``."""
    for leaf in tree_leaves(tree):
        wait = getattr(leaf, "block_until_ready", None)
        if callable(wait):
            wait()
    return tree


def _is_host(device):
    if isinstance(device, str) or device is None:
        return device in _HOST
    kind = getattr(device, "platform", None) or getattr(device, "device_kind", None)
    return isinstance(kind, str) and kind.lower() in ("cpu", "host")


def _to_array(x):
    if isinstance(x, (np.ndarray, Tracer)):
        return x
    conv = getattr(x, "__autodiff_array__", None)
    if conv is not None:
        return conv()
    if is_foreign_cuda(x):
        return host_copy(x)
    return np.asarray(x)


def host_copy(x):
    """A numpy copy of ``x``, a CUDA array of another library (:func:`is_foreign_cuda`):
    through numba-cuda where it is installed, else the library's own ``get()`` (CuPy) or
    ``cpu()`` (PyTorch)."""
    if importlib.util.find_spec("numba_cuda") is not None:
        return adopt(x).copy_to_host()
    if callable(getattr(x, "get", None)):
        return np.asarray(x.get())
    if callable(getattr(x, "cpu", None)):
        return np.asarray(x.cpu())
    _require_cuda()            # raises: says numba-cuda is missing and how to install it


def is_foreign_cuda(x):
    """Whether ``x`` is an array in CUDA device memory made by another library: a CuPy
    array, a PyTorch CUDA tensor, a numba-cuda device array (anything with
    ``__cuda_array_interface__``, or numba-cuda's simulated device arrays).

    >>> import numpy as np
    >>> from autodiff.devices import is_foreign_cuda
    >>> is_foreign_cuda(np.ones(2))
    False
    """
    t = type(x)
    if t is np.ndarray or t is CudaArray or isinstance(x, (np.ndarray, np.generic, Tracer)):
        return False
    return (hasattr(x, "__cuda_array_interface__")
            or (t.__module__.startswith("numba") and hasattr(x, "copy_to_host")))


def _foreign_host_copy(x):
    return host_copy(x) if is_foreign_cuda(x) else None


FOREIGN_ARRAYS.append(_foreign_host_copy)      # transforms outside jit: a host copy


def adopt(x):
    """A :class:`CudaArray` of ``x``, a CUDA array of another library
    (:func:`is_foreign_cuda`), without a copy where ``x`` is C-contiguous
    (``cuda_runtime.adopt``): ``jit(backend="cuda")`` reads it in place, and
    ``np.asarray`` of the result copies it to the host. Needs numba-cuda."""
    _require_cuda()
    from .backends.cuda_runtime import adopt as _adopt
    return CudaArray(_adopt(x))


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Put the arrays of pytree ``x`` on ``device``. On the CPU (``None``, ``"cpu"``, a CPU
    device object) arrays already live there: arrays and traced values come back as they
    are (no copy), numbers and lists become numpy arrays. On ``"cuda"`` (``"gpu"``,
    ``"cuda:0"``, a :class:`CudaDevice`) each array leaf is copied to the device and
    becomes a :class:`CudaArray` (needs numba-cuda and a GPU, or the simulator; else
    ``UnsupportedError`` says what is missing); a CUDA array of another library (CuPy,
    PyTorch, numba-cuda) becomes one without a copy, and on the host it is copied back.
    JAX's ``src``, ``donate`` and ``may_alias`` are accepted and change nothing here.

    >>> import numpy as np, autodiff as ad
    >>> x = np.ones(2)
    >>> ad.device_put(x) is x, ad.device_put({"n": 3})
    (True, {'n': array(3)})
    """
    if _is_cuda(device):
        _require_cuda()
        from .backends.cuda_runtime import to_device

        def put(leaf):
            if isinstance(leaf, (CudaArray, Tracer)):
                return leaf
            if is_foreign_cuda(leaf):            # CuPy, PyTorch, numba-cuda: no copy
                return adopt(leaf)
            return CudaArray(to_device(np.ascontiguousarray(_to_array(leaf))))
        return tree_map(put, x)
    if not _is_host(device):
        raise UnsupportedError(f"device_put: device {device!r} is not available; the "
                               f"devices are None or 'cpu' (the host) and 'cuda' (with "
                               f"numba-cuda and a GPU or its simulator)",
                               source=user_source())
    return tree_map(_to_array, x)


def _is_cuda(device):
    if isinstance(device, CudaDevice):
        return True
    return isinstance(device, str) and (device in ("cuda", "gpu") or device.startswith("cuda:"))


def device_get(x):
    """Arrays of pytree ``x`` as numpy values (JAX's ``device_get``): the identity for
    numpy arrays, which is what autodiff computes with on the CPU.

    >>> import numpy as np, autodiff as ad
    >>> ad.device_get([np.ones(1)])
    [array([1.])]
    """
    return tree_map(_to_array, x)


class _DevicesModule(types.ModuleType):
    """``ad.devices`` is this module and, called, :func:`devices` (JAX's ``jax.devices()``)."""

    def __call__(self, backend=None):
        return devices(backend)


sys.modules[__name__].__class__ = _DevicesModule
