"""numpy indexing on traced values, and functional updates (``x.at[idx].set(v)``).

Basic indexing (ints, slices, ``None``, ``...``) becomes ``slice``/``rev``/
``squeeze``/``expand_dims``; a traced integer becomes a ``dynamic_slice``;
integer and boolean arrays become one ``index_gather`` over the indexed axes, placed
where numpy places them (in place when the advanced indices are adjacent,
first otherwise). Boolean masks need concrete values (their result shape
depends on them).
"""
import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer
from ..primitives.control_flow import trace_body, while_p
from ..errors import ShapeError, ConcretizationError
from ..core import user_source
from ._base import npfunc, asarray, shape_of, normalize_axis, is_python_scalar


def _is_int_scalar(i):
    if isinstance(i, (bool, np.bool_)):
        return False
    if isinstance(i, (int, np.integer)):
        return True
    if isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype.kind in "iu":
        return True
    return False


def _is_traced_int_scalar(i):
    return isinstance(i, Tracer) and i.aval.shape == () and i.aval.dtype.kind in "iu"


def _as_index_array(i):
    """An integer index array (numpy or traced); boolean masks need concrete values."""
    if isinstance(i, (list, tuple)) and _has_tracer(i):
        i = asarray(i)          # a sequence holding traced scalars is one traced array
    if isinstance(i, Tracer):
        if i.aval.dtype == np.bool_:
            if i._trace.concrete and not i._trace.closed:
                return None, i.concrete_value("a boolean mask index")
            raise ConcretizationError(
                "boolean mask indexing of a traced value has a data-dependent shape. Use "
                "anp.where(mask, x, 0) or anp.sum(x * mask) instead.", source=user_source())
        if i.aval.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return i, None
    a = np.asarray(i)
    if a.dtype == np.bool_:
        return None, a
    if a.dtype.kind not in "iu":
        if a.size == 0:
            a = a.astype(np.int64)
        else:
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return a, None


class _Entries(list):
    """:func:`_expand_index`'s entries; ``ellipsis_at`` is where an ``...`` that stands for
    no axis was (numpy's placement of advanced indices counts it as a separator), or None."""
    ellipsis_at = None


class _TracedSliceError(ConcretizationError, IndexError):
    """A slice bound traced under ``jit`` (JAX raises ``IndexError`` here)."""


def _static_slice(s):
    """``s`` with traced bounds replaced by their values where the trace has them."""
    parts = (s.start, s.stop, s.step)
    if not any(isinstance(p, Tracer) for p in parts):
        return s
    vals = []
    for p in parts:
        if isinstance(p, Tracer):
            if not (p._trace.concrete and not p._trace.closed):
                raise _TracedSliceError(
                    "slice bounds of an index must be static: a traced start, stop or step "
                    "makes the result's shape depend on a value. For a window of fixed size "
                    "at a traced start use ad.lax.dynamic_slice_in_dim(x, start, size, axis) "
                    "(or ad.lax.dynamic_slice); to update one, "
                    "ad.lax.dynamic_update_slice_in_dim", source=user_source())
            p = int(p.concrete_value("a slice bound"))
        vals.append(p)
    return slice(*vals)


def _expand_index(idx, nd, shape=None):
    """Normalize to a list of entries; returns (entries, uses_advanced). With ``shape``,
    boolean masks are checked against the axes they index (numpy's ``IndexError``)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    entries = []
    masks = {}          # id of a mask's first entry -> the mask's shape
    for i in idx:
        if isinstance(i, slice):
            entries.append(_static_slice(i))
            continue
        if i is None or i is Ellipsis or _is_int_scalar(i) or _is_traced_int_scalar(i):
            entries.append(i)
            continue
        if isinstance(i, list) and \
                not any(isinstance(x, (list, Tracer, np.ndarray)) for x in i) and \
                any(isinstance(x, slice) or x is None or x is Ellipsis for x in i):
            raise IndexError("a list containing slices is not a valid index; use a tuple")
        arr, mask = _as_index_array(i)
        if mask is not None:
            if mask.ndim == 0:
                # a 0-d mask indexes no axis: a new axis of length 1 (True) or 0 (False)
                entries.append(("adv0", bool(mask)))
                continue
            # a boolean mask over k axes is k integer index arrays
            parts = [("adv", part.astype(np.int64)) for part in np.nonzero(mask)]
            masks[id(parts[0])] = mask.shape
            entries.extend(parts)
        else:
            entries.append(("adv", arr))
    n_ell = sum(1 for e in entries if e is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for e in entries if e is not None and e is not Ellipsis
               and not (isinstance(e, tuple) and e[0] == "adv0"))
    if used > nd:
        raise IndexError(f"too many indices for array: array is {nd}-dimensional, "
                         f"but {used} were indexed")
    out = _Entries()
    for e in entries:
        if e is Ellipsis:
            if nd == used:
                out.ellipsis_at = len(out)
            out.extend([slice(None)] * (nd - used))
        else:
            out.append(e)
    if n_ell == 0:
        out.extend([slice(None)] * (nd - used))
    if shape is not None and masks:
        axis = 0
        for e in out:
            if isinstance(e, tuple) and id(e) in masks:
                for k, m in enumerate(masks[id(e)]):
                    if m != shape[axis + k] and m != 0:      # (numpy lets an empty one by)
                        raise IndexError(
                            f"boolean index did not match indexed array along axis "
                            f"{axis + k}; size of axis is {shape[axis + k]} but size of "
                            f"corresponding boolean axis is {m}")
            if e is not None and not (isinstance(e, tuple) and e[0] == "adv0"):
                axis += 1
    adv = any(isinstance(e, tuple) for e in out)
    return out, adv


def getitem(x, idx):
    """``x[idx]`` with numpy's semantics for traced ``x`` (or traced indices)."""
    x = asarray(x)
    shape = shape_of(x)
    entries, adv = _expand_index(idx, len(shape), shape)
    if any(isinstance(e, tuple) and e[0] == "adv0" for e in entries):
        return _getitem_0d_mask(x, entries)
    if not adv:
        return _basic(x, entries)
    return _advanced(x, entries)


def _getitem_0d_mask(x, entries):
    """numpy's 0-d boolean index: an advanced index of length 1 (True) or 0 (False) into a
    new axis of length 1 at its place, broadcast and placed with the other advanced
    indices (integers among them)."""
    axes, out, axis = [], _Entries(), 0
    for e in entries:
        if isinstance(e, tuple) and e[0] == "adv0":
            axes.append(axis)
            e = ("adv", np.zeros(1 if e[1] else 0, np.int64))
        if e is not None:
            axis += 1
        out.append(e)
    out.ellipsis_at = getattr(entries, "ellipsis_at", None)
    return _advanced(P.expand_dims(x, tuple(axes)), out)


def _norm_static_int(i, n, axis):
    i = int(i)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i % n


def _dyn_index(i, n):
    """A traced scalar index, wrapped like numpy's negative indices (then clamped)."""
    i = P.convert(i, np.int64)
    return P.select(P.lt(i, P.scalar(0, np.int64)), P.add(i, P.scalar(n, np.int64)), i)


def _basic(x, entries):
    shape = shape_of(x)
    starts, limits, strides, rev, squeeze, dyn = [], [], [], [], [], []
    new_axes = []        # positions in the output where None inserts an axis
    out_pos = 0
    axis = 0
    for e in entries:
        if e is None:
            new_axes.append(out_pos)
            out_pos += 1
            continue
        n = shape[axis]
        if isinstance(e, slice):
            s, l, st = e.indices(n)
            if st > 0:
                starts.append(s)
                limits.append(max(s, l))
                strides.append(st)
            else:
                # a negative step: slice the mirrored range, then reverse
                cnt = len(range(s, l, st))
                if cnt == 0:
                    starts.append(0)
                    limits.append(0)
                    strides.append(1)
                else:
                    last = s + (cnt - 1) * st
                    starts.append(last)
                    limits.append(s + 1)
                    strides.append(-st)
                    rev.append(axis)
            out_pos += 1
        elif _is_traced_int_scalar(e):
            if n == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            starts.append(0)
            limits.append(n)
            strides.append(1)
            dyn.append((axis, e))
            squeeze.append(axis)
        else:
            i = _norm_static_int(e, n, axis)
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            squeeze.append(axis)
        axis += 1
    out = P.slice_op(x, starts, limits, strides)
    out = P.rev(out, rev)
    if dyn:
        sh = shape_of(out)
        dims = dict((a, i) for a, i in dyn)
        zero = P.scalar(0, np.int64)
        st = [_dyn_index(dims[a], sh[a]) if a in dims else zero for a in range(len(sh))]
        sizes = [1 if a in dims else sh[a] for a in range(len(sh))]
        out = P.dynamic_slice(out, st, sizes)
    out = P.squeeze(out, squeeze)
    if new_axes:
        out = P.expand_dims(out, new_axes)
    return out


def _advanced(x, entries):
    shape = shape_of(x)
    # 1. basic slicing on the non-advanced axes (keeping every axis)
    basic = []
    adv_axes, adv_idx = [], []
    positions = []      # entry position of each advanced index
    axis = 0
    for k, e in enumerate(entries):
        if e is None:
            continue
        if isinstance(e, tuple) or _is_int_scalar(e) or _is_traced_int_scalar(e):
            basic.append(slice(None))
            adv_axes.append(axis)
            if isinstance(e, tuple):
                arr = e[1]
            elif _is_traced_int_scalar(e):
                arr = e
            else:
                arr = np.asarray(_norm_static_int(e, shape[axis], axis), dtype=np.int64)
            adv_idx.append(arr)
            positions.append(k)
        else:
            basic.append(e)
        axis += 1
    y = _basic(x, basic)
    ysh = shape_of(y)
    # 2. the index arrays, broadcast together: one index_gather operand per indexed axis
    # (its index rule wraps negatives and clamps, as gather's in every backend:
    # numba_runtime.clip_index, so numpy's -1 needs no equations)
    bshape = tuple(np.broadcast_shapes(*[shape_of(a) for a in adv_idx]))
    if int(np.prod(bshape, dtype=np.int64)):
        for ax in adv_axes:
            if ysh[ax] == 0:
                # every index is out of bounds, traced ones too (numpy's error; a compiled
                # gather would read past an empty buffer)
                raise IndexError(f"index is out of bounds for axis {ax} with size 0: cannot "
                                 f"take a non-empty selection from an empty axis")
    cols = []
    for a, ax in zip(adv_idx, adv_axes):
        n = ysh[ax]
        if isinstance(a, Tracer):
            if a.aval.dtype.kind == "u":
                a = P.convert(a, np.int64)        # (the clamp's bounds are negative)
            sa = a.aval.shape
            if sa != bshape:
                a = P.broadcast_in_dim(a, bshape, tuple(range(len(bshape) - len(sa), len(bshape))))
        else:
            a = np.asarray(a, dtype=np.int64)
            if a.size and (a.max() >= n or a.min() < -n):
                bad = a.max() if a.max() >= n else a.min()
                raise IndexError(f"index {bad} is out of bounds for axis {ax} with size {n}")
            a = np.broadcast_to(np.where(a < 0, a + n, a), bshape)
        cols.append(a)
    # 3. advanced axes first, gather
    rest = [a for a in range(len(ysh)) if a not in adv_axes]
    y = P.transpose(y, adv_axes + rest)
    out = P.index_gather(y, cols)
    # 4. numpy's placement: adjacent advanced indices stay in place (an ``...`` standing for
    # no axis between two of them separates them, as in numpy)
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    ell = getattr(entries, "ellipsis_at", None)
    if ell is not None and positions[0] < ell <= positions[-1]:
        adjacent = False
    nb = len(bshape)
    # the output layout, None entries included
    layout = []      # sequence of "b" (broadcast block), "r" (rest dim), "n" (new axis)
    for k, e in enumerate(entries):
        if e is None:
            layout.append("n")
        elif isinstance(e, slice):
            layout.append("r")
        elif k == positions[0]:
            layout.append("b")
    if not adjacent:
        layout = ["b"] + [l for l in layout if l != "b"]
    # current out layout: b-block then rest dims in order
    perm = []
    rest_i = 0
    for l in layout:
        if l == "b":
            perm.extend(range(nb))
        elif l == "r":
            perm.append(nb + rest_i)
            rest_i += 1
    out = P.transpose(out, perm)
    none_pos, pos = [], 0
    for l in layout:
        if l == "n":
            none_pos.append(pos)
            pos += 1
        elif l == "b":
            pos += nb
        else:
            pos += 1
    if none_pos:
        out = P.expand_dims(out, none_pos)
    return out


def _np_take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
             indices_are_sorted=False, fill_value=None):
    """numpy's ``take`` on plain inputs; JAX's ``mode="fill"``/``fill_value=`` (numpy has
    neither) by the library's own rule."""
    if mode == "fill" or fill_value is not None:
        return _take_fill(np.asarray(a), indices, axis, fill_value)
    return np.take(a, indices, axis=axis, out=out, mode="raise" if mode is None else mode)


def _take_fill(a, indices, axis, fill_value):
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, len(shape_of(a)))
    return _AtRef(a, (slice(None),) * ax + (indices,)).get(mode="fill", fill_value=fill_value)


@npfunc(_np_take)
def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """``numpy.take`` with numpy's modes and JAX's: ``"raise"``/None (a concrete index out
    of bounds raises ``IndexError``; a traced one is clamped, as every traced read),
    ``"wrap"`` (modulo the axis' length), ``"clip"`` (into ``[0, n-1]``: negative indices
    clamp to 0, as in numpy and JAX), ``"fill"`` (JAX's: ``[-n, -1]`` wraps, the rest read
    ``fill_value``, NaN by default for floats).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> x = np.array([1.0, 2.0, 3.0])
    >>> ad.jit(lambda x, i: anp.take(x, i, mode="clip"))(x, np.array([-1, 1, 5]))
    array([1., 2., 3.])
    >>> anp.take(x, np.array([-1, 7]), mode="fill", fill_value=0.0)
    array([3., 0.])
    """
    if out is not None:
        raise TypeError("take: out= is not supported on traced values (results are new "
                        "arrays)")
    if mode not in (None, "raise", "wrap", "clip", "fill"):
        raise ValueError(f"take: mode must be one of 'raise', 'wrap', 'clip', 'fill', "
                         f"got {mode!r}")
    if mode == "fill" or fill_value is not None:
        return _take_fill(asarray(a), indices, axis, fill_value)
    a = asarray(a)
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, len(shape_of(a)))
    n = shape_of(a)[ax]
    if mode in ("wrap", "clip"):
        i = asarray(indices)
        if P.dtype_of(i).kind not in "iu":
            raise TypeError(f"take: indices must be integers, got {P.dtype_of(i)}")
        if n == 0:
            raise IndexError("take: cannot do a non-empty take from an empty axis")
        i = anp.mod(i, n) if mode == "wrap" else anp.clip(i, 0, n - 1)
        indices = i
    return getitem(a, (slice(None),) * ax + (indices,))


@npfunc(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=True):
    """``numpy.take_along_axis`` with JAX's ``mode`` for indices out of bounds: None or
    ``"promise_in_bounds"`` (a concrete one raises numpy's ``IndexError``, traced ones
    are clamped), ``"clip"`` (clamped into ``[0, n-1]``), ``"fill"``/``"drop"`` (those
    entries read ``fill_value``: NaN for inexact dtypes by default, as ``.at[].get``).
    ``wrap_negative_indices=False`` makes negative indices out of bounds too.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> x = np.array([10.0, 20.0, 30.0])
    >>> anp.take_along_axis(x, np.array([-1, 3]), axis=0, mode="fill", fill_value=0.0)
    array([30.,  0.])
    >>> ad.jit(lambda x, i: anp.take_along_axis(x, i, axis=0, mode="clip"))(x, np.array([5]))
    array([30.])
    """
    mode = _check_mode(mode)
    arr = asarray(arr)
    idx = asarray(indices)
    if P.dtype_of(idx).kind not in "iu":
        raise TypeError(f"take_along_axis indices must be of integer type, got "
                        f"{P.dtype_of(idx)}")
    if axis is None:
        if len(shape_of(idx)) != 1:
            raise ValueError("take_along_axis: when axis=None, `indices` must have a single "
                             "dimension")
        arr, axis = anp.ravel(arr), 0
    if len(shape_of(idx)) != len(shape_of(arr)):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    ax = normalize_axis(axis, len(shape_of(arr)))
    n = shape_of(arr)[ax]
    wrap = wrap_negative_indices
    if isinstance(idx, Tracer):
        idx = raw = P.convert(idx, np.int64)
        if wrap:
            idx = anp.where(anp.less(idx, 0), anp.add(idx, n), idx)
        ok = anp.logical_and(anp.greater_equal(idx, 0), anp.less(idx, n))
    else:
        idx = raw = np.asarray(idx, dtype=np.int64)
        if wrap:
            idx = np.where(idx < 0, idx + n, idx)
        ok = (idx >= 0) & (idx < n)
        if mode is None and not ok.all():
            bad = np.asarray(indices).astype(np.int64)[~ok].flat[0]
            raise IndexError(f"index {bad} is out of bounds for axis {ax} with size {n}")
    sh = np.broadcast_shapes(tuple(s if i != ax else 1 for i, s in enumerate(shape_of(arr))),
                             tuple(s if i != ax else 1 for i, s in enumerate(shape_of(idx))))
    tgt_idx = tuple(s if i != ax else shape_of(idx)[ax] for i, s in enumerate(sh))
    tgt_arr = tuple(s if i != ax else n for i, s in enumerate(sh))
    dt = P.dtype_of(arr)
    if n == 0:
        if int(np.prod(tgt_idx)) and mode != "fill":
            raise IndexError("take_along_axis: cannot take from an empty axis")
        fv = _fill_default(dt) if fill_value is None else fill_value
        return anp.full(tgt_idx, fv, dtype=dt)
    # (the primitive wraps [-n, -1] and clamps the rest, as every traced read with mode
    # None; the other modes hand it indices in [0, n-1])
    safe = raw if (mode is None and wrap) else anp.clip(idx, 0, n - 1)
    out = P.take_along_axis(anp.broadcast_to(arr, tgt_arr), anp.broadcast_to(safe, tgt_idx), ax)
    if mode == "fill":
        fv = _fill_default(dt) if fill_value is None else fill_value
        fv = P.convert(fv, dt) if isinstance(fv, Tracer) else np.asarray(fv, dtype=dt)
        out = anp.where(anp.broadcast_to(ok, tgt_idx), out, fv)
    return out


@npfunc(np.nonzero)
def nonzero(a, *, size=None, fill_value=None):
    """``numpy.nonzero``; with JAX's ``size=`` the result has that length (the first
    ``size`` nonzero positions, then ``fill_value``, 0 by default, or one per axis), so it
    traces under ``jit``.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda x: anp.nonzero(x, size=3, fill_value=-1))(np.array([0.0, 2.0, 5.0]))
    (array([ 1,  2, -1]),)
    """
    if size is not None:
        return _nonzero_sized(a, size, fill_value)
    if fill_value is not None:
        raise TypeError("nonzero: fill_value= needs size=")
    if isinstance(a, Tracer):
        if a._trace.concrete and not a._trace.closed:
            return np.nonzero(a.concrete_value("nonzero"))
        raise ConcretizationError("nonzero has a data-dependent output shape and cannot be "
                                  "traced under jit; pass size= (and fill_value=) to fix "
                                  "its length", source=user_source())
    return np.nonzero(a)


def _nonzero_sized(a, size, fill_value):
    """``nonzero(a)`` padded or cut to ``size`` positions: each nonzero element's rank
    among them (a cumulative sum) is where its flat position goes, by a scatter that drops
    ranks past ``size``; the places left over hold ``fill_value``."""
    a = asarray(a)
    sh = shape_of(a)
    if not sh:
        raise ValueError("nonzero: a 0-d array has no positions; use atleast_1d(a)")
    size = int(size)
    nd = len(sh)
    fills = tuple(fill_value) if isinstance(fill_value, (tuple, list)) else \
        (0 if fill_value is None else fill_value,) * nd
    if len(fills) != nd:
        raise ValueError(f"nonzero: fill_value has {len(fills)} entries for {nd} axes")
    n = int(np.prod(sh, dtype=np.int64))
    if not isinstance(a, Tracer):
        pos = np.flatnonzero(a)[:size]
        flat = np.concatenate([pos, np.full(size - pos.size, n, np.int64)]).astype(np.int64)
    else:
        hit = anp.ravel(anp.not_equal(a, 0)) if P.dtype_of(a) != np.bool_ else anp.ravel(a)
        rank = anp.cumsum(anp.astype(hit, np.int64)) - 1
        target = anp.where(hit, rank, size)
        flat = P.scatter_p.bind(np.full((size,), n, np.int64), anp.reshape(target, (n, 1)),
                                np.arange(n, dtype=np.int64), mode="drop")
    if n == 0:
        return tuple(anp.full((size,), f, dtype=np.int64) for f in fills)
    out, rest = [], flat
    for d in range(nd - 1, -1, -1):                  # unravel, the last axis first
        coord = anp.mod(rest, sh[d])
        rest = anp.floor_divide(rest, sh[d])
        out.append(anp.where(anp.equal(flat, n), anp.astype(anp.asarray(fills[d]), np.int64),
                             coord))
    return tuple(out[::-1])


@npfunc(np.argwhere)
def argwhere(a, *, size=None, fill_value=None):
    """``numpy.argwhere``; JAX's ``size=``/``fill_value=`` as :func:`nonzero`'s."""
    if size is None:
        return np.transpose(np.asarray(nonzero(a)))
    a = asarray(a)
    if not shape_of(a):
        a = anp.reshape(a, (1,))
    return anp.stack(nonzero(a, size=size, fill_value=fill_value), axis=-1)


@npfunc(np.flatnonzero)
def flatnonzero(a, *, size=None, fill_value=None):
    """``numpy.flatnonzero``; JAX's ``size=``/``fill_value=`` as :func:`nonzero`'s."""
    return nonzero(anp.ravel(a), size=size, fill_value=fill_value)[0]


# ----------------------------------------------------------------------------
# functional updates
# ----------------------------------------------------------------------------

def _flat_positions(shape, idx):
    """The flat positions ``idx`` selects: numpy's when the index is concrete (raising
    numpy's ``IndexError`` out of bounds); a traced index out of bounds selects position
    ``size``, one past the end, which a scatter's ``mode="drop"`` does not write (as JAX's
    scatters drop such updates; clamping one would write another element)."""
    size = int(np.prod(shape, dtype=np.int64))
    if not _has_tracer(idx):
        return np.arange(size, dtype=np.int64).reshape(shape)[idx]
    entries, adv = _expand_index(idx, len(shape))
    if not adv:
        return _basic_positions(shape, entries)
    lead = _leading_advanced(entries)
    if lead:
        return _advanced_positions(shape, entries[:lead])
    index, padded = _mode_index(shape, idx, "fill", traced_only=True)
    return getitem(_padded_positions(shape, padded), index)


def _wrapped(i, n):
    """A traced index into an axis of ``n``: ``(i as int64 with [-n, -1] wrapped, whether
    it is inside [0, n))``."""
    i = P.convert(i, np.int64)
    i = anp.where(anp.less(i, 0), anp.add(i, n), i)
    return i, anp.logical_and(anp.greater_equal(i, 0), anp.less(i, n))


def _basic_positions(shape, entries):
    """:func:`_flat_positions` of a basic index (slices, ``None``, integers, some traced):
    the positions of the slices as a constant of the result's size, plus the traced
    integers' offset, or ``size`` for all where one of them is out of bounds (no array of
    every position of the operand: ``ys.at[i].set(v)`` of a long ``ys`` stays cheap)."""
    size = int(np.prod(shape, dtype=np.int64))
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    grid, offset, ok, axis = np.zeros((), np.int64), None, None, 0
    for e in entries:
        if e is None:
            grid = grid[..., None]
            continue
        n, st = shape[axis], strides[axis]
        if isinstance(e, slice):
            grid = grid[..., None] + np.arange(*e.indices(n), dtype=np.int64) * st
        elif isinstance(e, Tracer):
            i, inside = _wrapped(e, n)
            ok = inside if ok is None else anp.logical_and(ok, inside)
            i = anp.multiply(i, st)
            offset = i if offset is None else anp.add(offset, i)
        else:
            i = int(e)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            grid = grid + (i % n) * st
        axis += 1
    pos = anp.add(grid, offset)
    return anp.where(ok, pos, np.full(grid.shape, size, np.int64))


def _leading_advanced(entries):
    """``k`` when ``entries`` are integer arrays or integers on the first ``k`` axes (an
    array among them) and whole axes after (``x.at[ids]``, ``x.at[ids, jds]``), else 0."""
    k = 0
    while k < len(entries) and (isinstance(entries[k], tuple) and entries[k][0] == "adv"
                                or _is_int_scalar(entries[k])
                                or _is_traced_int_scalar(entries[k])):
        k += 1
    rest = entries[k:]
    if not any(isinstance(e, tuple) for e in entries[:k]) or not all(
            isinstance(e, slice) and e == slice(None) for e in rest):
        return 0
    return k


def _advanced_positions(shape, lead):
    """:func:`_flat_positions` of integer indices ``lead`` on the leading axes (whole axes
    after): their broadcast flat offsets, plus the trailing block's positions, ``size``
    where a traced index is out of bounds (a concrete one raises numpy's ``IndexError``);
    no array of every position of the operand."""
    size = int(np.prod(shape, dtype=np.int64))
    k = len(lead)
    strides = [int(np.prod(shape[j + 1:], dtype=np.int64)) for j in range(len(shape))]
    offset, ok = np.zeros((), np.int64), None
    for j, e in enumerate(lead):
        i, n = e[1] if isinstance(e, tuple) else e, shape[j]
        if isinstance(i, Tracer):
            i, inside = _wrapped(i, n)
            ok = inside if ok is None else anp.logical_and(ok, inside)
        else:
            i = np.asarray(i, dtype=np.int64)
            if i.size and (i.min() < -n or i.max() >= n):
                bad = i[(i < -n) | (i >= n)].flat[0]
                raise IndexError(f"index {bad} is out of bounds for axis {j} with size {n}")
            i = np.where(i < 0, i + n, i)
        offset = anp.add(offset, anp.multiply(i, strides[j]))
    rest = tuple(shape[k:])
    block = np.arange(int(np.prod(rest, dtype=np.int64)), dtype=np.int64).reshape(rest)
    tail = (None,) * len(rest)
    pos = anp.add(offset[(Ellipsis,) + tail] if rest else offset, block)
    if ok is None:
        return pos
    ok = anp.broadcast_to(ok[(Ellipsis,) + tail] if rest else ok, anp.shape(pos))
    return anp.where(ok, pos, np.full(anp.shape(pos), size, np.int64))


def _padded_positions(shape, axes):
    """Flat positions of an array of ``shape``, each of ``axes`` one longer, the added
    places holding ``size`` (one past the end: a dropped update's scratch place)."""
    size = int(np.prod(shape, dtype=np.int64))
    if not axes:
        return np.arange(size, dtype=np.int64).reshape(shape)
    pad = [(0, 1) if a in axes else (0, 0) for a in range(len(shape))]
    return np.pad(np.arange(size, dtype=np.int64).reshape(shape), pad, constant_values=size)


def _has_tracer(idx):
    if isinstance(idx, Tracer):
        return True
    if isinstance(idx, (tuple, list)):
        return any(_has_tracer(i) for i in idx)
    if isinstance(idx, slice):
        return any(isinstance(i, Tracer) for i in (idx.start, idx.stop, idx.step))
    return False


class _AtIndexer:
    """``x.at[idx]``: functional updates returning a new array."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtRef(self.x, idx)


_MODES = (None, "promise_in_bounds", "clip", "drop", "fill")


def _check_mode(mode):
    if mode not in _MODES:
        raise ValueError(f".at[]: unknown mode {mode!r}; the valid modes are None, "
                         f"'promise_in_bounds', 'clip', 'drop' and 'fill'")
    return "fill" if mode == "drop" else (None if mode == "promise_in_bounds" else mode)


def _mode_index(shape, idx, mode, traced_only=False, wrap=True):
    """``(index, padded)``: ``idx`` with its integer indices (scalars and arrays, concrete
    or traced; ``traced_only``: the traced ones) rewritten for ``mode``, numpy's negative
    indices in ``[-n, -1]`` wrapped first (as JAX does; not with ``wrap=False``, JAX's
    ``wrap_negative_indices``): ``"clip"`` clamps them into ``[0, n-1]``; ``"fill"`` sends
    those out of bounds to ``n``, one past the end, and ``padded`` lists the axes where
    that can happen (the caller pads them by one)."""
    entries, _ = _expand_index(idx, len(shape), shape)
    index, padded, axis = [], [], 0
    for k, e in enumerate(entries):
        if k == getattr(entries, "ellipsis_at", None):
            index.append(Ellipsis)                   # (it stands for no axis)
        if e is None or isinstance(e, slice):
            index.append(e)
            axis += e is not None
            continue
        if isinstance(e, tuple) and e[0] == "adv0":          # a 0-d mask consumes no axis
            index.append(np.asarray(e[1]))
            continue
        i = e[1] if isinstance(e, tuple) else e
        n = shape[axis]
        if traced_only and not isinstance(i, Tracer):
            index.append(i)
            axis += 1
            continue
        if isinstance(i, Tracer):
            if wrap:
                i, inside = _wrapped(i, n)
            else:
                i = P.convert(i, np.int64)
                inside = anp.logical_and(anp.greater_equal(i, 0), anp.less(i, n))
            i = anp.clip(i, 0, max(n - 1, 0)) if mode == "clip" else anp.where(inside, i, n)
        else:
            i = np.asarray(i, dtype=np.int64)
            if wrap:
                i = np.where(i < 0, i + n, i)
            i = np.clip(i, 0, max(n - 1, 0)) if mode == "clip" else \
                np.where((i >= 0) & (i < n), i, n)
        if mode == "fill":
            padded.append(axis)
        index.append(i)
        axis += 1
    return tuple(index), padded


def _check_no_wrap(shape, idx):
    """numpy's ``IndexError`` for a concrete integer index outside ``[0, n)`` (the default
    mode with ``wrap_negative_indices=False``: a negative index is out of bounds)."""
    entries, _ = _expand_index(idx, len(shape), shape)
    axis = 0
    for e in entries:
        if e is None or (isinstance(e, tuple) and e[0] == "adv0"):
            continue
        i = e[1] if isinstance(e, tuple) else e
        if not isinstance(e, slice) and not isinstance(i, Tracer):
            i = np.asarray(i)
            n = shape[axis]
            if i.size and (i.min() < 0 or i.max() >= n):
                bad = i[(i < 0) | (i >= n)].flat[0]
                raise IndexError(f"index {bad} is out of bounds for axis {axis} with size "
                                 f"{n} (wrap_negative_indices=False)")
        axis += 1


def _fill_default(dt):
    """JAX's default ``fill_value`` of ``.get(mode="fill")``: NaN for inexact dtypes, the
    lowest signed integer, the highest unsigned one, True for booleans."""
    dt = np.dtype(dt)
    if dt.kind in "fc":
        return np.nan
    if dt.kind == "i":
        return np.iinfo(dt).min
    if dt.kind == "u":
        return np.iinfo(dt).max
    return True


class _AtRef:
    """``x.at[idx]``: ``.get``/``.set``/``.add``/... as JAX's ``jax.numpy.ndarray.at``.

    ``mode`` says what out-of-bounds indices do: ``None`` or ``"promise_in_bounds"`` (a
    concrete one raises numpy's ``IndexError``; traced ones are clamped on reads, and
    their updates dropped), ``"clip"`` (clamped into bounds after numpy's wrap of
    ``[-n, -1]``), ``"drop"``/``"fill"`` (updates dropped, reads give ``fill_value``:
    by default NaN for inexact dtypes, the lowest signed or highest unsigned integer,
    True for booleans). A dropped update or filled read has a zero gradient.
    ``indices_are_sorted`` and ``unique_indices`` are accepted hints.

    >>> import numpy as np, autodiff.numpy as anp
    >>> x = np.arange(3.0)
    >>> anp.at(x)[np.array([0, 5])].get(mode="fill", fill_value=-1.0)
    array([ 0., -1.])
    >>> anp.at(x)[np.array([0, 5])].set(9.0, mode="drop")
    array([9., 1., 2.])
    >>> anp.at(x)[np.array([-1, 7])].add(10.0, mode="clip")
    array([ 0.,  1., 22.])
    """

    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def _prep(self, v, mode=None, wrap=True):
        """``(shape, flat operand, positions as scatter indices, updates, scatter mode)``.

        A traced position out of bounds is ``size``, one past the end, and the scatter's
        mode ``"drop"`` writes nothing there (JAX's scatters drop such updates; the
        operand is not copied, so a loop's ``ys.at[i].set(v)`` of its carry still writes
        in place). ``mode`` "fill" (JAX's "drop"): out-of-bounds positions, concrete or
        traced, are ``size`` too; "clip": the indices are clamped first. ``wrap=False``
        (JAX's ``wrap_negative_indices``): negative indices are out of bounds."""
        mode = _check_mode(mode)
        x = asarray(self.x)
        sh = shape_of(x)
        idx = self.idx
        size = int(np.prod(sh, dtype=np.int64))
        if not wrap and mode is None:
            _check_no_wrap(sh, idx)
            mode = "fill"                 # traced indices outside [0, n) write nothing
        if mode == "fill":
            index, padded = _mode_index(sh, idx, "fill", wrap=wrap)
            pos = getitem(_padded_positions(sh, padded), index)
        else:
            if mode == "clip":
                idx, _ = _mode_index(sh, idx, "clip", wrap=wrap)
            pos = _flat_positions(sh, idx)
        v = asarray(v) if not is_python_scalar(v) else np.asarray(v, dtype=P.dtype_of(x))
        if P.dtype_of(v) != P.dtype_of(x):
            v = P.convert(v, P.dtype_of(x)) if isinstance(v, Tracer) else np.asarray(v).astype(P.dtype_of(x))
        try:
            v = anp.broadcast_to(v, shape_of(pos))
        except (ShapeError, ValueError):
            raise ShapeError(f".at[]: cannot broadcast update of shape {shape_of(v)} to the "
                             f"indexed shape {shape_of(pos)}", source=user_source()) from None
        flat = P.reshape(x, (size,))
        drop = isinstance(pos, Tracer) or (mode == "fill" and pos.size and pos.max() == size)
        if isinstance(pos, Tracer):
            pos = P.reshape(pos, tuple(shape_of(pos)) + (1,))
        else:
            pos = pos[..., None]
        return sh, flat, pos, v, "drop" if drop else "clip"

    def _result(self, flat, sh):
        """The updated flat array in the operand's shape."""
        return _out(P.reshape(flat, sh), self.x)

    def get(self, mode=None, fill_value=None, indices_are_sorted=False, unique_indices=False,
            *, wrap_negative_indices=True):
        """``x[idx]``, with ``mode`` and ``fill_value`` for out-of-bounds indices."""
        mode = _check_mode(mode)
        if not wrap_negative_indices and mode is None:
            _check_no_wrap(shape_of(self.x), self.idx)
            mode = "clip"                 # traced indices clamp, as numpy-wrapped ones do
        if mode is None:
            return getitem(self.x, self.idx)
        x = asarray(self.x)
        sh = shape_of(x)
        index, padded = _mode_index(sh, self.idx, mode, wrap=wrap_negative_indices)
        if padded:
            # one more slot on each axis an index may leave, holding fill_value (a constant:
            # a filled read has a zero gradient)
            dt = P.dtype_of(x)
            fv = _fill_default(dt) if fill_value is None else fill_value
            for a in padded:
                slab = tuple(1 if d == a else s for d, s in enumerate(shape_of(x)))
                if isinstance(fv, Tracer):
                    fill = anp.broadcast_to(P.convert(fv, dt), slab)
                else:
                    fill = np.full(slab, fv, dtype=dt)
                x = anp.concatenate([x, fill], axis=a)
        return getitem(x, index)

    def set(self, v, mode=None, indices_are_sorted=False, unique_indices=False, *,
            wrap_negative_indices=True):
        """``x[idx] = v`` as a new array (with repeated indices one of the writes wins)."""
        sh, flat, pidx, v, smode = self._prep(v, mode, wrap_negative_indices)
        return self._result(_scatter(P.scatter_p, flat, pidx, v, smode), sh)

    def apply(self, func, mode=None, indices_are_sorted=False, unique_indices=False, *,
              wrap_negative_indices=True):
        """``func.at(x, idx)`` for a unary ``func``: ``func`` applied to the indexed
        elements, as many times as each is indexed (JAX's ``scatter_apply``); the result
        is cast to ``x``'s dtype. Differentiable.

        >>> import numpy as np, autodiff.numpy as anp
        >>> anp.at(np.arange(4.0))[np.array([1, 3, 3])].apply(lambda v: v * 10)
        array([  0.,  10.,   2., 300.])
        """
        sh, flat, pidx, _, smode = self._prep(0, mode, wrap_negative_indices)
        size = shape_of(flat)[0]
        dt = P.dtype_of(flat)
        if isinstance(pidx, Tracer):
            times = 1 if unique_indices else int(np.prod(shape_of(pidx)[:-1], dtype=np.int64))
        else:
            p = pidx[..., 0].ravel()
            p = p[p < size]
            times = int(np.bincount(p).max()) if p.size else 0
        counts = None
        if times > 1:
            ones = np.ones(shape_of(pidx)[:-1], np.int64)
            counts = _scatter(P.scatter_add_p, np.zeros(size, np.int64), pidx, ones, smode)

        def once(y, k):
            g = P.gather(y, pidx)
            new = asarray(func(g))
            if P.dtype_of(new) != dt:
                new = P.convert(new, dt) if isinstance(new, Tracer) else \
                    np.asarray(new).astype(dt)
            new = anp.broadcast_to(new, shape_of(g))
            if counts is not None:        # only the places indexed more than k times
                new = anp.where(anp.greater(P.gather(counts, pidx), k), new, g)
            return _scatter(P.scatter_p, y, pidx, new, smode)

        if times <= 4:
            for k in range(times):
                flat = once(flat, k)
            return self._result(flat, sh)

        # a loop until the most repeated place is done (``times``, the number of updates,
        # bounds it: the bounded loop is reverse-differentiable)
        most = anp.max(counts)

        def more(k, y):
            return [anp.less(k, most)]

        def step(k, y):
            return [anp.add(k, np.int64(1)), once(y, k)]
        k0 = np.zeros((), np.int64)
        avals = [P.aval_of(k0), P.aval_of(flat)]
        cj, c_consts = trace_body(more, avals, "at_apply_cond")
        bj, b_consts = trace_body(step, avals, "at_apply")
        flat = while_p.bind(*c_consts, *b_consts, k0, flat, cond_jaxpr=cj, body_jaxpr=bj,
                            cond_nconsts=len(c_consts), body_nconsts=len(b_consts),
                            max_steps=times)[1]
        return self._result(flat, sh)

    def add(self, v, mode=None, indices_are_sorted=False, unique_indices=False, *,
            wrap_negative_indices=True):
        """``x[idx] += v`` as a new array (repeated indices accumulate)."""
        sh, flat, pidx, v, smode = self._prep(v, mode, wrap_negative_indices)
        return self._result(_scatter(P.scatter_add_p, flat, pidx, v, smode), sh)

    def subtract(self, v, mode=None, indices_are_sorted=False, unique_indices=False, *,
                 wrap_negative_indices=True):
        """``x[idx] -= v`` as a new array."""
        return self.add(anp.negative(v), mode=mode, wrap_negative_indices=wrap_negative_indices)

    def _combine(self, v, prim, mode, wrap):
        """Every update combined into its position by ``prim`` (a ``scatter_mul``/``min``/
        ``max``), repeated positions included, as JAX's scatters do."""
        sh, flat, pidx, v, smode = self._prep(v, mode, wrap)
        return self._result(_scatter(prim, flat, pidx, v, smode), sh)

    def _over_product(self, v, op, mode, wrap):
        """``op(x, p)``, ``p`` the product of the updates at each position (1 elsewhere),
        as JAX's ``divide`` and ``power`` are."""
        sh, flat, pidx, v, smode = self._prep(v, mode, wrap)
        ones = P.full(shape_of(flat), 1, P.dtype_of(flat))
        p = _scatter(P.scatter_mul_p, ones, pidx, v, smode)
        return _out(anp.reshape(op(flat, p), sh), self.x)

    def multiply(self, v, mode=None, indices_are_sorted=False, unique_indices=False, *,
                 wrap_negative_indices=True):
        """``x[idx] *= v`` as a new array (repeated indices multiply in every factor)."""
        return self._combine(v, P.scatter_mul_p, mode, wrap_negative_indices)

    mul = multiply

    def divide(self, v, mode=None, indices_are_sorted=False, unique_indices=False, *,
               wrap_negative_indices=True):
        """``x[idx] /= v`` as a new array."""
        return self._over_product(v, anp.divide, mode, wrap_negative_indices)

    def power(self, v, mode=None, indices_are_sorted=False, unique_indices=False, *,
              wrap_negative_indices=True):
        """``x[idx] **= v`` as a new array."""
        return self._over_product(v, anp.power, mode, wrap_negative_indices)

    def min(self, v, mode=None, indices_are_sorted=False, unique_indices=False, *,
            wrap_negative_indices=True):
        """``x[idx] = minimum(x[idx], v)`` as a new array."""
        return self._combine(v, P.scatter_min_p, mode, wrap_negative_indices)

    def max(self, v, mode=None, indices_are_sorted=False, unique_indices=False, *,
            wrap_negative_indices=True):
        """``x[idx] = maximum(x[idx], v)`` as a new array."""
        return self._combine(v, P.scatter_max_p, mode, wrap_negative_indices)


def _scatter(prim, flat, pidx, v, mode):
    """``prim`` (a scatter) of ``v`` at ``pidx``, with ``mode="drop"`` only when needed."""
    return prim.bind(flat, pidx, v, mode="drop") if mode == "drop" else prim.bind(flat, pidx, v)


def _out(res, like):
    if isinstance(res, np.ndarray) and res.ndim == 0:
        return res[()]
    return res


def at(x):
    """``anp.at(x)[idx].set(v)``: functional update of any array, concrete or traced.

    JAX's ``mode=`` says what out-of-bounds indices do: None or "promise_in_bounds"
    (concrete ones raise numpy's ``IndexError``), "clip" (clamped), "drop"/"fill"
    (updates dropped; ``.get`` reads ``fill_value``, NaN by default for floats).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.at(np.zeros(3))[1].set(5.0)
    array([0., 5., 0.])
    >>> anp.at(np.arange(3.0))[np.array([1, 3])].get(mode="fill", fill_value=0.0)
    array([1., 0.])
    """
    conv = getattr(x, "__autodiff_array__", None)
    if conv is not None:
        return _WrappedAt(x)
    return _AtIndexer(x)


class _WrappedAt:
    def __init__(self, v):
        self.v = v

    def __getitem__(self, idx):
        ref = _AtRef(self.v.__autodiff_array__(), idx)
        wrap = type(self.v).__autodiff_wrap__

        class R:
            def __getattr__(s, name):
                fn = getattr(ref, name)

                def call(*a, **kw):
                    a = [x.__autodiff_array__() if hasattr(x, "__autodiff_array__") else x for x in a]
                    return wrap(fn(*a, **kw))
                return call
        return R()
