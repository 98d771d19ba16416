"""Where arrays live and when they are ready.

Computation on the CPU backends is synchronous: when a function returns, its results
are computed. ``block_until_ready`` is there for code written for JAX's asynchronous
dispatch (benchmarks that wait before stopping a clock); it returns its argument.

>>> import numpy as np, autodiff as ad
>>> ad.block_until_ready({"w": np.ones(2)})
{'w': array([1., 1.])}
"""
from .tree_util import tree_leaves, tree_map

__all__ = ["block_until_ready", "device_put", "device_get"]

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
    if device in _HOST:
        return True
    kind = getattr(device, "platform", None) or getattr(device, "device_kind", None)
    return isinstance(kind, str) and kind.lower() in ("cpu", "host")


def _to_array(x):
    import numpy as np
    from .core import Tracer
    if isinstance(x, (np.ndarray, Tracer)):
        return x
    conv = getattr(x, "__autodiff_array__", None)
    return conv() if conv is not None else np.asarray(x)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Put the arrays of pytree ``x`` on ``device``. On the CPU (``None``, ``"cpu"``, a CPU
    device object) arrays already live there: arrays and traced values come back as they
    are (no copy), numbers and lists become numpy arrays. JAX's ``src``, ``donate`` and
    ``may_alias`` are accepted and change nothing here.

    >>> import numpy as np, autodiff as ad
    >>> x = np.ones(2)
    >>> ad.device_put(x) is x, ad.device_put({"n": 3})
    (True, {'n': array(3)})
    """
    if not _is_host(device):
        from .core import user_source
        from .errors import UnsupportedError
        raise UnsupportedError(f"device_put: device {device!r} is not available; this "
                               f"build computes on the CPU (device None or 'cpu')",
                               source=user_source())
    return tree_map(_to_array, x)


def device_get(x):
    """Arrays of pytree ``x`` as numpy values (JAX's ``device_get``): the identity for
    numpy arrays, which is what autodiff computes with on the CPU.

    >>> import numpy as np, autodiff as ad
    >>> ad.device_get([np.ones(1)])
    [array([1.])]
    """
    return tree_map(_to_array, x)
