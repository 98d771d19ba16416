"""``einsum`` as a sequence of pairwise ``dot_general`` contractions (left to right).

Each operand first has its repeated indices reduced to a diagonal and indices
that appear nowhere else summed out; each pairwise step then contracts shared
indices that no later operand or the output needs, batching over the shared
indices that are still needed.
"""
import numpy as np

from .. import primitives as P
from ..errors import ShapeError
from ..core import user_source
from ._base import npfunc, promote, shape_of, asarray, dtype_of
from ._indexing import getitem


def _parse(subscripts, operands):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    ins = ins.split(",")
    if len(ins) != len(operands):
        raise ShapeError(f"einsum: {len(ins)} operand subscripts for {len(operands)} operands",
                         source=user_source())
    # ellipsis: give the broadcast dims private upper-case letters
    if any("..." in s for s in ins):
        used = set("".join(ins)) | set(out or "")
        free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
        n_ell = max(len(shape_of(op)) - (len(s) - 3) for s, op in zip(ins, operands) if "..." in s)
        ell = "".join(free[:n_ell])
        new = []
        for s, op in zip(ins, operands):
            if "..." in s:
                k = len(shape_of(op)) - (len(s) - 3)
                s = s.replace("...", ell[n_ell - k:])
            new.append(s)
        ins = new
        if out is not None:
            out = out.replace("...", ell)
        else:
            out = ell + "".join(sorted(c for c in set("".join(ins)) - set(ell)
                                       if "".join(ins).count(c) == 1))
    if out is None:
        allc = "".join(ins)
        out = "".join(sorted(c for c in set(allc) if allc.count(c) == 1))
    return ins, out


def _diag_and_sum(x, s, keep):
    """Take diagonals of repeated letters in ``s``; sum letters not in ``keep``."""
    while True:
        rep = next((c for c in s if s.count(c) > 1), None)
        if rep is None:
            break
        i = s.index(rep)
        j = s.index(rep, i + 1)
        n = shape_of(x)[i]
        x = P.transpose(x, [k for k in range(len(s)) if k not in (i, j)] + [i, j])
        s = "".join(c for k, c in enumerate(s) if k not in (i, j)) + rep
        idx = np.arange(n)
        x = getitem(x, (Ellipsis, idx, idx))
    axes = tuple(k for k, c in enumerate(s) if c not in keep)
    if axes:
        x = P.reduce_sum(x, axes)
        s = "".join(c for c in s if c in keep)
    return x, s


def _letter(i):
    if not 0 <= i < 52:
        raise ValueError(f"einsum: subscript {i} is out of range (0..51)")
    return "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[i]


def _sublist(s):
    return "".join("..." if x is Ellipsis else _letter(int(x)) for x in s)


def _from_sublists(args):
    """numpy's interleaved form ``einsum(op0, sub0, op1, sub1, ..., [sub_out])``."""
    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(ops) > len(subs):          # the trailing item is the output sublist
        out = ops.pop()
    spec = ",".join(_sublist(s) for s in subs)
    if out is not None:
        spec += "->" + _sublist(out)
    return spec, ops


def _numpy_optimize(optimize):
    """numpy's spelling of an ``optimize`` choice (opt_einsum's ``'auto'``/``'eager'``, which
    JAX accepts, are numpy's ``'greedy'``)."""
    if isinstance(optimize, str) and optimize not in ("greedy", "optimal"):
        return "greedy"
    return False if optimize is None else optimize


def _np_einsum(*operands, optimize=None, dtype=None, casting="safe", precision=None,
               preferred_element_type=None, out=None, order="K"):
    """numpy's ``einsum`` on plain operands, with JAX's extra keywords read."""
    dtype = dtype if preferred_element_type is None else preferred_element_type
    return np.einsum(*operands, optimize=_numpy_optimize(optimize), dtype=dtype,
                     casting=casting, out=out, order=order)


@npfunc(_np_einsum)
def einsum(subscripts, *operands, optimize=None, dtype=None, casting="safe", precision=None,
           preferred_element_type=None, out=None, order="K"):
    """``numpy.einsum``: explicit and implicit output, ``...`` with broadcasting, and the
    interleaved sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``; differentiable.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.einsum(np.eye(2), [0, 1], np.ones(2), [1], [0])
    array([1., 1.])

    ``optimize`` (any of numpy's or JAX's choices, or a path from ``einsum_path``) does not
    change the result: the contraction runs left to right. ``precision`` is accepted for
    JAX's signature (every product is exact float64/float32 arithmetic);
    ``preferred_element_type`` is the result dtype, like ``dtype``.
    """
    if out is not None:
        raise TypeError("einsum: the 'out' argument is not supported (arrays are immutable)")
    if preferred_element_type is not None:
        dtype = preferred_element_type
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts,) + tuple(operands))
    operands = promote(*[asarray(o) for o in operands])
    ins, out = _parse(subscripts, operands)
    sizes = {}
    for s, op in zip(ins, operands):
        if len(s) != len(shape_of(op)):
            raise ShapeError(f"einsum: subscripts {s!r} do not match operand shape {shape_of(op)}",
                             source=user_source())
        for c, d in zip(s, shape_of(op)):
            if sizes.get(c, d) != d and d != 1 and sizes.get(c) != 1:
                raise ShapeError(f"einsum: index {c!r} has sizes {sizes[c]} and {d}",
                                 source=user_source())
            # a size-1 dimension broadcasts to the other size, 0 included (max() would
            # turn a zero-size contraction into a size-1 one)
            sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]
    # broadcast size-1 dims
    ops = []
    for s, op in zip(ins, operands):
        target = tuple(sizes[c] for c in s)
        if shape_of(op) != target:
            op = P.broadcast_in_dim(op, target, tuple(range(len(s))))
        ops.append(op)
    terms = list(zip(ops, ins))
    # reduce each operand alone first
    for k, (x, s) in enumerate(terms):
        others = set(out) | set("".join(t for i, (_, t) in enumerate(terms) if i != k))
        terms[k] = _diag_and_sum(x, s, others)
    x, s = terms[0]
    for k in range(1, len(terms)):
        y, t = terms[k]
        later = set(out) | set("".join(u for _, u in terms[k + 1:]))
        shared = [c for c in s if c in t]
        batch = [c for c in shared if c in later]
        contract = [c for c in shared if c not in later]
        dn = ((tuple(s.index(c) for c in contract), tuple(t.index(c) for c in contract)),
              (tuple(s.index(c) for c in batch), tuple(t.index(c) for c in batch)))
        x = P.dot_general(x, y, dn)
        s = "".join(batch) + "".join(c for c in s if c not in shared) + \
            "".join(c for c in t if c not in shared)
    x, s = _diag_and_sum(x, s, set(out))
    perm = [s.index(c) for c in out]
    x = P.transpose(x, perm)
    if dtype is not None:
        x = P.convert(x, np.dtype(dtype))
    return x


@npfunc()
def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """``numpy.einsum_path`` from the operands' shapes (traced operands allowed); JAX's
    ``'auto'``/``'eager'`` strategies are numpy's ``'greedy'``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.einsum_path("ij,jk,kl->il", np.ones((2, 2)), np.ones((2, 5)), np.ones((5, 2)),
    ...                 optimize="greedy")[0]
    ['einsum_path', (1, 2), (0, 1)]
    """
    dummies = [np.empty(shape_of(o), dtype_of(o)) if not isinstance(o, (str, list)) else o
               for o in operands]
    return np.einsum_path(subscripts, *dummies, optimize=_numpy_optimize(optimize))
