"""``jax.lax`` for autodiff: structured control flow and the operators under JAX's names.

Structured control flow (``autodiff._lax_control_flow``): ``cond``, ``switch``,
``while_loop``, ``fori_loop``, ``scan``, ``map``.

Each is one primitive carrying its bodies as sub-jaxprs, so a loop costs one
equation in the IR however many times it runs, and every transform sees it:

* ``cond``  -- ``cond[branches](index, *operands)``; branch ``index`` runs
  (0 is the false branch of :func:`cond`, as in JAX).
* ``while`` -- ``while[cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
  max_steps](*cond_consts, *body_consts, *init)``.
* ``scan``  -- ``scan[jaxpr, num_consts, num_carry, length, reverse](*consts,
  *init_carry, *xs)``; the body maps ``consts, carry, x-slices -> carry, y-slices``
  and the outputs are the final carry and the stacked ys.

Sub-jaxprs are :class:`~autodiff.core.ClosedJaxpr` s without constants: values a
body closes over (outer tracers, numpy arrays) become leading operands.

Rules: forward mode for all three; reverse mode for ``cond`` and ``scan``
(partial evaluation splits a scan into a primal scan that also emits the
residuals as extra stacked outputs, and a linear scan that reads them; the
transpose of a linear scan is a scan in the other direction over the
transposed body), and for ``while`` when it is bounded (``max_steps=N``: the
loop becomes a scan of ``N`` steps whose body is ``cond(pred, body, identity)``).
vmap: a batched predicate turns ``cond`` into a ``select`` of its branches and
makes ``while`` run until every lane is done.

The operators, by job, each a composition of ``autodiff.numpy`` so that every transform
and ``jit`` handle it: elementwise and special functions (``_lax_elementwise``), bits
(``_lax_bits``), structure (``_lax_structure``), reductions, windows, scans and sorts
(``_lax_reductions``), products and convolutions (``_lax_products``), gather and scatter
(``_lax_gather_scatter``), implicit solves (``_lax_solves``) and ``fft`` (``_lax_fft``).
The named-axis collectives (``psum``, ``pmean``, ``all_gather``, ``axis_index``, ...) work
inside ``vmap(f, axis_name=...)`` (``_lax_collectives``).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> def cumulative(xs):
...     return ad.lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)[1]
>>> cumulative(np.arange(4.0))
array([0., 1., 3., 6.])
>>> ad.grad(lambda xs: anp.sum(cumulative(xs)))(np.arange(4.0))
array([4., 3., 2., 1.])
"""
from . import (_lax_bits, _lax_collectives, _lax_elementwise, _lax_fft, _lax_gather_scatter,
               _lax_products, _lax_reductions, _lax_solves, _lax_structure)
from . import numpy as _anp
from . import primitives as _P
from ._lax_control_flow import (cond, switch, while_loop, fori_loop, scan, select,  # noqa: F401
                                cond_p, while_p, scan_p, dynamic_slice, dynamic_update_slice,
                                stop_gradient)
from .api import vmap as _vmap
from .numpy._precision import Precision  # noqa: F401
from .tree_util import tree_flatten as _tree_flatten, tree_map as _tree_map

# ``map`` is public (ad.lax.map) but left out of ``*`` imports: it would shadow the builtin
__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "select",
           "cond_p", "while_p", "scan_p", "dynamic_slice", "dynamic_update_slice", "stop_gradient",
           "Precision"]

# names that would shadow builtins (max, min, ...) are served by __getattr__, so they stay
# out of ``from autodiff.lax import *``
_SHADOWING = {"max": _lax_elementwise, "min": _lax_elementwise, "abs": _lax_elementwise,
              "pow": _lax_elementwise, "round": _lax_elementwise, "complex": _lax_elementwise,
              "slice": _lax_structure}
for _mod in (_lax_elementwise, _lax_structure, _lax_reductions, _lax_products, _lax_solves,
             _lax_bits, _lax_gather_scatter, _lax_fft, _lax_collectives):
    for _name in _mod.__all__:
        if _name not in _SHADOWING:
            globals().setdefault(_name, getattr(_mod, _name))
    __all__ += [n for n in _mod.__all__ if n not in _SHADOWING and n not in __all__]
del _name, _mod


# ``map`` lives here rather than in _lax_control_flow: it stays out of ``__all__`` (it would
# shadow the builtin), and the API pages show a module's own definitions and its exports
def map(f, xs, *, batch_size=None):
    """``stack([f(x) for x in xs])`` as a ``scan`` (one equation, any length).
    ``batch_size=b``: ``f`` is vmapped over blocks of ``b`` and the scan runs over the
    blocks (a remainder block is vmapped on its own), as in JAX.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.map(lambda x: x ** 2, np.arange(3.0))
    array([0., 1., 4.])
    >>> ad.lax.map(lambda x: x ** 2, np.arange(5.0), batch_size=2)
    array([ 0.,  1.,  4.,  9., 16.])
    """
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    vmap, anp, tree_map = _vmap, _anp, _tree_map
    leaves = _tree_flatten(xs)[0]
    n = _P.shape_of(leaves[0])[0]
    b = int(batch_size)
    nb, rest = divmod(n, b) if b > 0 else (0, n)
    parts = []
    if nb:
        blocks = tree_map(lambda x: anp.reshape(x[:nb * b], (nb, b) + tuple(_P.shape_of(x)[1:])), xs)
        ys = scan(lambda c, xb: (c, vmap(f)(xb)), (), blocks)[1]
        parts.append(tree_map(lambda y: anp.reshape(y, (nb * b,) + tuple(_P.shape_of(y)[2:])), ys))
    if rest:
        parts.append(vmap(f)(tree_map(lambda x: x[nb * b:], xs)))
    if len(parts) == 1:
        return parts[0]
    return tree_map(lambda a, c: anp.concatenate([a, c], axis=0), parts[0], parts[1])


def stack(operands, axis=0):
    """Join arrays of one shape along a new axis ``axis`` (``jax.lax.stack``).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.stack([np.array([1, 2]), np.array([3, 4])], axis=1)
    array([[1, 3],
           [2, 4]])
    """
    return _anp.stack(list(operands), axis=axis)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple (``jax.lax.unstack``); a scalar
    raises ValueError.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.unstack(np.array([[1, 2], [3, 4]]), axis=1)
    (array([1, 3]), array([2, 4]))
    """
    if _anp.ndim(x) == 0:
        raise ValueError(f"unstack requires arrays with rank > 0, however a scalar array "
                         f"of shape {tuple(_anp.shape(x))} was passed.")
    return tuple(_anp.unstack(x, axis=axis))


__all__ += ["stack", "unstack"]


# ``jax.lax.linalg``: ``ad.lax.linalg.eigh``, ``from autodiff.lax.linalg import ...`` (lax is a
# module, so the submodule is registered by hand, as ``os.path`` is)
from . import _lax_linalg as linalg  # noqa: E402
__import__("sys").modules[__name__ + ".linalg"] = linalg


def __getattr__(name):
    if name in _SHADOWING:
        return getattr(_SHADOWING[name], name)
    raise AttributeError(f"module 'autodiff.lax' has no attribute {name!r}")
