"""``ad.lax``'s named-axis collectives, under JAX's names: they compute across the batch of an
enclosing ``vmap(f, axis_name=...)``.

Each takes ``axis_name`` (a name, or a tuple of names for the reductions, ``all_gather`` and
``axis_index``) and applies to every leaf of a pytree. A name no enclosing ``vmap`` binds
raises ``NameError`` at the call. ``axis_index_groups`` is not supported under ``vmap`` (JAX
refuses it there too). The primitives and their rules are in
:mod:`autodiff.primitives.collectives`; how they are resolved is in ``docs/design.md``
("Named axes").

>>> import numpy as np, autodiff as ad
>>> def standardize(x):                  # per-example code that needs batch statistics
...     m = ad.lax.pmean(x, "batch")
...     return (x - m) / ad.lax.pmean((x - m) ** 2, "batch") ** 0.5
>>> ad.vmap(standardize, axis_name="batch")(np.array([0.0, 0.0, 2.0, 2.0]))
array([-1., -1.,  1.,  1.])
"""
import math

import numpy as np

from . import numpy as anp
from .core import Tracer
from .errors import UnsupportedError
from .named_axes import axis_names, frame_of
from .primitives import collectives as C
from .tree_util import tree_map

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "pshuffle", "pbroadcast", "all_to_all", "pswapaxes", "axis_index", "axis_size",
           "pvary"]


def _no_groups(caller, axis_index_groups):
    if axis_index_groups is not None:
        raise UnsupportedError(f"{caller}: axis_index_groups is not supported under vmap "
                               f"(as in JAX); compute the groups' statistics with anp "
                               f"reductions over the batch instead")


def _frames(axis_name, caller):
    names = axis_names(axis_name)
    return [frame_of(n, caller) for n in names]


def _reduce(prim, caller, x, axis_name, scale):
    frames = _frames(axis_name, caller)

    def leaf(v):
        v = anp.asarray(v)
        if v.dtype == np.bool_:
            v = v.astype(np.int32)        # JAX sums booleans as int32
        # axes whose vmap is inside the value's trace see a constant: reduced at once
        inner = [f for f in frames if not _varies(v, f)]
        names = tuple(f.name for f in frames if _varies(v, f))
        if inner and scale:
            v = v * np.asarray(math.prod(f.size for f in inner), v.dtype)
        if not names:
            return v
        return prim.bind(v, axes=names)
    return tree_map(leaf, x)


def _varies(v, frame):
    """Whether ``v`` may differ along ``frame``'s axis: it is a tracer of that vmap's trace
    or of one inside it (anything else is the same for every element)."""
    return isinstance(v, Tracer) and v._trace.level >= frame.level


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of ``x`` over the elements of the named ``vmap`` axis (or axes), the same
    value for every element. Booleans are summed as int32, as in JAX.

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: x / ad.lax.psum(x, "i"), axis_name="i")(np.arange(4.0))
    array([0.        , 0.16666667, 0.33333333, 0.5       ])
    """
    _no_groups("lax.psum", axis_index_groups)
    return _reduce(C.psum_p, "lax.psum", x, axis_name, scale=True)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of ``x`` over the elements of the named axis (or axes).

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: ad.lax.pmean(x, "i"), axis_name="i")(np.arange(4.0))
    array([1.5, 1.5, 1.5, 1.5])
    """
    _no_groups("lax.pmean", axis_index_groups)
    n = axis_size(axis_name)
    return tree_map(lambda s: anp.true_divide(s, n),
                    _reduce(C.psum_p, "lax.pmean", x, axis_name, scale=True))


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of ``x`` over the elements of the named axis (or axes); its gradient is
    shared equally among tied elements, as ``anp.max``'s is.

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: ad.lax.pmax(x, "i"), axis_name="i")(np.array([1.0, 3.0, 2.0]))
    array([3., 3., 3.])
    """
    _no_groups("lax.pmax", axis_index_groups)
    return _reduce(C.pmax_p, "lax.pmax", x, axis_name, scale=False)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of ``x`` over the elements of the named axis (or axes).

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: ad.lax.pmin(x, "i"), axis_name="i")(np.array([1.0, 3.0, 2.0]))
    array([1., 1., 1.])
    """
    _no_groups("lax.pmin", axis_index_groups)
    return _reduce(C.pmin_p, "lax.pmin", x, axis_name, scale=False)


def axis_size(axis_name):
    """The number of elements of the named ``vmap`` axis (the product, for a tuple of names).

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: x * ad.lax.axis_size("i"), axis_name="i")(np.ones(3))
    array([3., 3., 3.])
    """
    return math.prod(f.size for f in _frames(axis_name, "lax.axis_size"))


def axis_index(axis_name):
    """This element's position along the named ``vmap`` axis, an int32 scalar; for a tuple
    of names, the row-major position over them (the first name the slowest).

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: x * ad.lax.axis_index("i"), axis_name="i")(np.ones(3))
    array([0., 1., 2.])
    """
    frames = _frames(axis_name, "lax.axis_index")
    out = None
    for f in frames:
        out = f.index if out is None else out * np.int32(f.size) + f.index
    return out


def _one_frame(axis_name, caller):
    names = axis_names(axis_name)
    if len(names) != 1:
        raise UnsupportedError(f"{caller} takes one axis name here, got {names!r}; nest the "
                               f"calls, one name each")
    return frame_of(names[0], caller)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every element's ``x`` stacked along a new axis ``axis`` (concatenated along ``axis``
    with ``tiled=True``), the same value for every element. For a tuple of names the
    gathered axis runs over them row-major (the first name the slowest).

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: ad.lax.all_gather(x, "i"), axis_name="i")(np.arange(2.0))
    array([[0., 1.],
           [0., 1.]])
    """
    _no_groups("lax.all_gather", axis_index_groups)
    frames = _frames(axis_name, "lax.all_gather")

    def leaf(v):
        v = anp.asarray(v)
        nd = v.ndim
        if not -(nd + (0 if tiled else 1)) <= axis < nd + (0 if tiled else 1):
            raise ValueError(f"lax.all_gather: axis={axis} is out of range for an operand "
                             f"of rank {nd}" + (" with tiled=True" if tiled else ""))
        ax = axis % (nd if tiled else nd + 1)
        out = v
        for f in reversed(frames):                 # the last name varies fastest
            out = C.all_gather_p.bind(C.at_axis_level(f, out), axes=(f.name,), axis=ax,
                                      tiled=False, size=f.size)
        if len(frames) > 1:                        # the gathered axes merged into one
            s = out.shape
            out = anp.reshape(out, s[:ax] + (-1,) + s[ax + len(frames):])
        if tiled:
            s = out.shape
            out = anp.reshape(out, s[:ax] + (s[ax] * s[ax + 1],) + s[ax + 2:])
        return out
    return tree_map(leaf, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``psum(x, axis_name)[axis_index(axis_name)]`` along ``scatter_dimension``, without the
    whole sum: element ``b`` keeps the ``b``-th slice of the sum (the ``b``-th block of
    ``size // n`` with ``tiled=True``). The transpose of :func:`all_gather`.

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: ad.lax.psum_scatter(x, "i"), axis_name="i")(np.eye(2) * 3)
    array([3., 3.])
    """
    _no_groups("lax.psum_scatter", axis_index_groups)
    f = _one_frame(axis_name, "lax.psum_scatter")

    def leaf(v):
        v = anp.asarray(v)
        if v.ndim == 0:
            raise ValueError("lax.psum_scatter needs an operand of rank 1 or more")
        sd = int(scatter_dimension)
        if not -v.ndim <= sd < v.ndim:
            raise ValueError(f"lax.psum_scatter: scatter_dimension={sd} is out of range for "
                             f"an operand of rank {v.ndim}")
        return C.psum_scatter_p.bind(C.at_axis_level(f, v), axes=(f.name,),
                                     scatter_dimension=sd % v.ndim, tiled=bool(tiled), size=f.size)
    return tree_map(leaf, x)


def ppermute(x, axis_name, perm):
    """Element ``src``'s ``x`` sent to element ``dst`` for each pair ``(src, dst)`` of
    ``perm``; an element no pair sends to receives zeros. Sources and destinations must each
    be distinct.

    >>> import numpy as np, autodiff as ad
    >>> shift = lambda x: ad.lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 0)])
    >>> ad.vmap(shift, axis_name="i")(np.array([10.0, 20.0, 30.0]))
    array([30., 10., 20.])
    """
    f = _one_frame(axis_name, "lax.ppermute")
    pairs = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    bad = [p for p in srcs + dsts if not 0 <= p < f.size]
    if bad:
        raise ValueError(f"lax.ppermute: perm {list(perm)} names element {bad[0]}, outside "
                         f"the axis {f.name!r} of size {f.size}")
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"lax.ppermute: perm {list(perm)} repeats a source or a "
                         f"destination; each must appear at most once")
    return tree_map(lambda v: C.ppermute_p.bind(C.at_axis_level(f, anp.asarray(v)),
                                                axes=(f.name,), perm=pairs, size=f.size), x)


def pshuffle(x, axis_name, perm):
    """Element ``b`` receives element ``perm[b]``'s ``x`` (``perm`` a permutation of the
    axis), a :func:`ppermute`.

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: ad.lax.pshuffle(x, "i", [2, 0, 1]), axis_name="i")(
    ...     np.array([10.0, 20.0, 30.0]))
    array([30., 10., 20.])
    """
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"lax.pshuffle: {perm} is not a permutation of range({len(perm)})")
    return ppermute(x, axis_name, [(p, b) for b, p in enumerate(perm)])


def pbroadcast(x, axis_name, source):
    """Element ``source``'s ``x`` given to every element of the axis.

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: ad.lax.pbroadcast(x, "i", 1), axis_name="i")(np.arange(3.0))
    array([1., 1., 1.])
    """
    f = _one_frame(axis_name, "lax.pbroadcast")
    if not 0 <= int(source) < f.size:
        raise ValueError(f"lax.pbroadcast: source {source} is outside the axis {f.name!r} "
                         f"of size {f.size}")
    return tree_map(lambda v: all_gather(v, axis_name)[int(source)], x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Element ``b`` receives the ``b``-th slice along ``split_axis`` of every element's
    ``x``, stacked along a new axis ``concat_axis`` of the result, element ``j``'s slice at
    position ``j`` (``tiled=True``: ``split_axis`` is cut into as many blocks as the axis has
    elements, and the blocks are concatenated along ``concat_axis``). Without ``tiled`` the
    size of ``split_axis`` must be the axis size. A tuple of names acts as one axis over
    them, row-major (the first name the slowest), as in JAX.

    >>> import numpy as np, autodiff as ad
    >>> x = np.arange(4.0).reshape(2, 2)                 # element b holds row b
    >>> ad.vmap(lambda r: ad.lax.all_to_all(r, "i", 0, 0), axis_name="i")(x)
    array([[0., 2.],
           [1., 3.]])
    """
    _no_groups("lax.all_to_all", axis_index_groups)
    frames = _frames(axis_name, "lax.all_to_all")
    names = tuple(f.name for f in frames)        # several: one axis, the first slowest
    n = math.prod(f.size for f in frames)

    def leaf(v):
        v = anp.asarray(v)
        nd = v.ndim
        if not -nd <= split_axis < nd:
            raise ValueError(f"lax.all_to_all: split_axis={split_axis} is out of range for "
                             f"an operand of rank {nd}")
        sa = split_axis % nd
        if not -nd <= concat_axis < nd:
            raise ValueError(f"lax.all_to_all: concat_axis={concat_axis} is out of range for "
                             f"a result of rank {nd}")
        ca = concat_axis % nd
        s = v.shape
        if tiled:
            if s[sa] % n:
                raise ValueError(f"lax.all_to_all(tiled=True): dimension {sa} of shape {s} "
                                 f"is not a multiple of the axis size {n}")
            v = anp.reshape(v, s[:sa] + (n, s[sa] // n) + s[sa + 1:])
        elif s[sa] != n:
            raise ValueError(f"lax.all_to_all: dimension {sa} of shape {s} must equal the "
                             f"axis size {n} (or pass tiled=True)")
        every = all_gather(v, names)                   # [j, ...]: element j's blocks
        mine = anp.take(every, axis_index(names), axis=sa + 1)      # block b of each
        out = anp.moveaxis(mine, 0, ca)
        if tiled:                                      # the blocks joined along concat_axis
            t = out.shape
            out = anp.reshape(out, t[:ca] + (t[ca] * t[ca + 1],) + t[ca + 2:])
        return out
    return tree_map(leaf, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """The named axis swapped with positional ``axis``: :func:`all_to_all` with
    ``split_axis = concat_axis = axis``.

    >>> import numpy as np, autodiff as ad
    >>> x = np.arange(4.0).reshape(2, 2)
    >>> ad.vmap(lambda r: ad.lax.pswapaxes(r, "i", 0), axis_name="i")(x)
    array([[0., 2.],
           [1., 3.]])
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pvary(x, axis_name):
    """``x`` unchanged: JAX marks a value as varying over a ``shard_map`` axis with it;
    under ``vmap`` every value may vary, so there is nothing to mark.

    >>> import numpy as np, autodiff as ad
    >>> ad.vmap(lambda x: ad.lax.pvary(x, "i"), axis_name="i")(np.arange(2.0))
    array([0., 1.])
    """
    _frames(axis_name, "lax.pvary")
    return x
