"""How jitted and transformed functions travel to other processes (Dask, Ray, joblib).

A jitted or transformed function is sent as *what it was built from* -- the user's
function and the transform's options -- never as its caches or compiled code. The
receiving process rebuilds it and, on the first call, traces again and compiles (or loads
the kernel from the disk cache, ``ad.config.cache_dir``, when another process compiled
it before).

How the user's function itself travels is the pickler's business:

* ``cloudpickle`` (what Dask, Ray and loky use) sends lambdas, closures and functions of
  ``__main__`` by value and functions of importable modules by reference;
* plain ``pickle`` (``multiprocessing``, ``concurrent.futures``) sends functions by
  reference only, so it works where the function is importable by name.

A function decorated at module level (``@ad.jit def loss``) is itself the module's
attribute; it travels by reference (the receiver imports the module and finds its own
jitted copy) unless it lives in ``__main__``, where it travels by value through
cloudpickle (installed with the ``distributed`` extra), which a Dask worker needs.

>>> import pickle, numpy as np, autodiff as ad, autodiff.numpy as anp
>>> g = pickle.loads(pickle.dumps(ad.jit(ad.grad(anp.sum))))
>>> g(np.ones(2))
array([1., 1.])
"""
import sys

__all__ = ["reduce_transformed", "rebuild"]


def _lookup(module, qualname):
    mod = sys.modules.get(module)
    if mod is None:
        return None
    obj = mod
    for part in qualname.split("."):
        if part == "<locals>":
            return None
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _by_value(fun):
    """``fun`` as bytes of cloudpickle, loadable by plain pickle (``rebuild_function``)."""
    try:
        import cloudpickle
    except ImportError:
        return None
    return cloudpickle.dumps(fun)


def _loads_function(data):
    import cloudpickle  # noqa: F401  (pickle.loads needs its reconstructors importable)
    import pickle
    return pickle.loads(data)


def rebuild(make, fun, args, kwargs):
    """Unpickling side: ``make(fun, *args, **kwargs)``; ``fun`` may come as cloudpickle bytes."""
    if isinstance(fun, bytes):
        fun = _loads_function(fun)
    return make(fun, *args, **kwargs)


def reduce_transformed(obj, make, fun, args=(), kwargs=None):
    """``__reduce__`` of a function-like object built as ``make(fun, *args, **kwargs)``.

    By reference when ``obj`` is what its module's attribute of that name holds (it was
    decorated at module level) and the module is importable; otherwise by its recipe.
    """
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    kwargs = dict(kwargs or {})
    if module and qualname and _lookup(module, qualname) is obj:
        if module != "__main__":
            return qualname
        # ``__main__`` differs between processes (a Dask worker's is not the user's script):
        # the underlying function goes by value. ``fun`` is itself reachable only through
        # ``obj`` (the decorator replaced it), so plain pickle could not send it by name.
        data = _by_value(fun)
        if data is not None:
            return (rebuild, (make, data, tuple(args), kwargs))
        return qualname          # no cloudpickle: a spawned child re-imports __main__
    return (rebuild, (make, fun, tuple(args), kwargs))

