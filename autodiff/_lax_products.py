"""``jax.lax``'s products and convolutions: ``dot``, ``dot_general``, ``batch_matmul``,
``ragged_dot``, ``ragged_dot_general``, ``conv_general_dilated`` (feature and batch groups,
dilations, layouts by dimension numbers) and its relatives (``conv``, ``conv_transpose``,
the patch and local convolutions), each a composition of ``dot_general`` contractions.

>>> import numpy as np, autodiff as ad
>>> ad.lax.dot_general(np.ones((2, 3)), np.ones((3, 4)), (((1,), (0,)), ((), ()))).shape
(2, 4)
"""
import builtins
import collections
import dataclasses

import numpy as np

from . import numpy as anp
from . import primitives as P
from .core import Tracer
from .errors import ShapeError, UnsupportedError
from .numpy._precision import check_precision
from ._lax_structure import as_dtype, pad, padding_pairs

__all__ = ["dot", "dot_general", "batch_matmul", "ragged_dot", "ragged_dot_general",
           "RaggedDotDimensionNumbers", "conv_general_dilated", "conv",
           "conv_with_general_padding", "ConvDimensionNumbers", "conv_dimension_numbers",
           "conv_transpose", "conv_general_dilated_patches", "conv_general_dilated_local"]


def _preferred(lhs, rhs, preferred_element_type):
    """``lhs`` and ``rhs`` as arrays, both cast to ``preferred_element_type`` when one is given
    (the product is computed, and returned, in that dtype, as JAX's)."""
    x, y = anp.asarray(lhs), anp.asarray(rhs)
    if preferred_element_type is None:
        return x, y
    dt = as_dtype(preferred_element_type)
    return anp.astype(x, dt), anp.astype(y, dt)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Matrix or vector product of ``lhs`` and ``rhs`` (``numpy.dot``); ``precision`` is
    accepted for JAX's signature (float64 stays float64); ``preferred_element_type`` is the
    dtype the product is computed and returned in.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.dot(np.ones(2, np.float32), np.ones(2, np.float32),
    ...            preferred_element_type=np.float64).dtype
    dtype('float64')
    """
    return anp.dot(*_preferred(lhs, rhs, preferred_element_type))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """JAX's ``dot_general``: ``dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``; result dims are batch, lhs free, rhs free."""
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = _preferred(lhs, rhs, preferred_element_type)
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if not isinstance(x, Tracer) and not isinstance(y, Tracer):
        dt = anp.result_type(x, y)
        return np.asarray(P.dot_general_p.impl(np.asarray(x, dt), np.asarray(y, dt), dimension_numbers=dn))
    x, y = [anp.astype(v, anp.result_type(x, y)) for v in (x, y)]
    return P.dot_general(x, y, dn)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over equal leading batch dimensions: ``lhs[..., m, k] @ rhs[..., k, n]``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.batch_matmul(np.ones((2, 1, 3)), np.ones((2, 3, 1))).ravel()
    array([3., 3.])
    """
    check_precision(precision)
    lhs, rhs = anp.asarray(lhs), anp.asarray(rhs)
    if anp.ndim(lhs) < 2 or anp.shape(lhs)[:-2] != anp.shape(rhs)[:-2] or anp.ndim(lhs) != anp.ndim(rhs):
        raise ShapeError(f"batch_matmul: needs equal batch dimensions, got shapes "
                         f"{anp.shape(lhs)} and {anp.shape(rhs)}")
    return anp.matmul(lhs, rhs)

# ----------------------------------------------------------------------------
# convolution
# ----------------------------------------------------------------------------

def conv_specs(dimension_numbers, nd):
    """(lhs, rhs, out) permutations to N C spatial..., O I spatial..., N C spatial...."""
    if dimension_numbers is None:
        r = tuple(range(nd))
        return r, r, r
    if hasattr(dimension_numbers, "lhs_spec"):
        return (tuple(dimension_numbers.lhs_spec), tuple(dimension_numbers.rhs_spec),
                tuple(dimension_numbers.out_spec))
    lhs, rhs, out = dimension_numbers
    if isinstance(lhs, str):
        def perm(spec, first, second):
            spatial = [i for i, c in enumerate(spec) if c not in (first, second)]
            if isinstance(spec, str) and spec.isalpha() and first in spec and second in spec:
                # spatial order: JAX takes the rhs spec's order of spatial letters
                return (spec.index(first), spec.index(second)) + tuple(spatial)
            raise ValueError(f"conv: bad dimension spec {spec!r}")
        lp, rp, op = perm(lhs, "N", "C"), perm(rhs, "O", "I"), perm(out, "N", "C")
        # match spatial letters by the rhs order
        rs = [c for c in rhs if c not in "OI"]
        lp = lp[:2] + tuple(lhs.index(c) for c in rs)
        op = op[:2] + tuple(out.index(c) for c in rs)
        return lp, rp, op
    return tuple(lhs), tuple(rhs), tuple(out)


def _group_counts(feature_group_count, batch_group_count):
    # JAX's shape rule: both positive, at most one of them above 1
    G, B = int(feature_group_count), int(batch_group_count)
    if G < 1:
        raise ValueError(f"conv_general_dilated: feature_group_count must be a positive "
                         f"integer, got {feature_group_count}")
    if B < 1:
        raise ValueError(f"conv_general_dilated: batch_group_count must be a positive "
                         f"integer, got {batch_group_count}")
    if G > 1 and B > 1:
        raise ValueError(f"conv_general_dilated: at most one of batch_group_count and "
                         f"feature_group_count may be > 1, got batch_group_count={B} and "
                         f"feature_group_count={G}")
    return G, B


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """N-dimensional convolution (cross-correlation, as in JAX/XLA) with strides,
    padding (``'VALID'``, ``'SAME'``, pairs), input (transposed-conv) and kernel
    dilation, feature groups, and layouts as ``dimension_numbers`` strings
    (``("NHWC", "HWIO", "NHWC")``) or index triples. Built as one ``dot_general`` per
    kernel offset over strided views, so it differentiates, vmaps and jits.

    >>> import numpy as np, autodiff as ad
    >>> x = np.arange(5.0).reshape(1, 1, 5)            # N C W
    >>> w = np.array([1.0, 0.0, -1.0]).reshape(1, 1, 3) # O I W
    >>> ad.lax.conv_general_dilated(x, w, (1,), "VALID")
    array([[[-2., -2., -2.]]])

    ``batch_group_count=B`` (XLA's batch groups, what the kernel gradient of a grouped
    convolution is): the lhs batch splits into ``B`` consecutive groups of ``N / B`` and
    the output features into ``B`` consecutive groups of ``O / B``; output feature group
    ``g`` sees only lhs batch group ``g``, and the output batch is ``N / B``.

    >>> x = np.arange(4.0).reshape(2, 1, 2)            # batch group 0: x[0], group 1: x[1]
    >>> w = np.ones((2, 1, 1))                         # one output feature per group
    >>> ad.lax.conv_general_dilated(x, w, (1,), "VALID", batch_group_count=2)
    array([[[0., 1.],
            [2., 3.]]])
    """
    x, w = _preferred(lhs, rhs, preferred_element_type)
    dt = anp.result_type(x, w)
    x, w = anp.astype(x, dt), anp.astype(w, dt)
    nd = anp.ndim(x)
    ns = nd - 2
    lp, rp, op = conv_specs(dimension_numbers, nd)
    x = anp.transpose(x, lp)                      # N C S...
    w = anp.transpose(w, rp)                      # O I K...
    strides = tuple(window_strides) if window_strides else (1,) * ns
    ldil = tuple(lhs_dilation or (1,) * ns)
    rdil = tuple(rhs_dilation or (1,) * ns)
    N, C = anp.shape(x)[:2]
    O, I = anp.shape(w)[:2]
    G, B = _group_counts(feature_group_count, batch_group_count)
    if C != I * G or O % G:
        raise ShapeError(f"conv_general_dilated: lhs has {C} features, rhs expects {I} per group "
                         f"× {G} groups with {O} outputs")
    if N % B or O % B:
        raise ShapeError(f"conv_general_dilated: batch_group_count={B} must divide the lhs "
                         f"batch size ({N}) and the rhs output features ({O})")
    ksz = tuple(anp.shape(w)[2:])
    dil_shape = tuple((n - 1) * d + 1 if n else 0 for n, d in zip(anp.shape(x)[2:], ldil))
    pads = padding_pairs(padding, dil_shape, ksz, strides, rdil)
    if builtins.any(p != (0, 0) for p in pads) or builtins.any(d != 1 for d in ldil):
        x = pad(x, 0.0, [(0, 0, 0), (0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(pads, ldil)])
    sp = anp.shape(x)[2:]
    out_sp = tuple(builtins.max((n - ((k - 1) * d + 1)) // s + 1, 0) for n, k, d, s in zip(sp, ksz, rdil, strides))
    # groups: x[N, G, I, S...], w[G, O/G, I, K...]
    if B > 1:
        # batch groups: lhs batch is group-major [B, N/B]; each group is one "feature group"
        # of all C features, seen by the output features of the same group
        N, G, I = N // B, B, C
        xg = anp.transpose(anp.reshape(x, (G, N, C) + tuple(sp)), (1, 0) + tuple(range(2, 3 + ns)))
    else:
        xg = anp.reshape(x, (N, G, I) + tuple(sp))
    wg = anp.reshape(w, (G, O // G, I) + ksz)
    acc = None
    for off in np.ndindex(*ksz):
        idx = (builtins.slice(None),) * 3 + tuple(
            builtins.slice(o * d, o * d + (m - 1) * s + 1, s) for o, d, m, s in zip(off, rdil, out_sp, strides))
        view = xg[idx]                                               # N G I out...
        tap = wg[(builtins.slice(None),) * 3 + tuple(off)]          # G O/G I
        # contract I, batch G: result G N out... O/G
        term = dot_general(view, tap, (((2,), (2,)), ((1,), (0,))))
        acc = term if acc is None else anp.add(acc, term)
    if acc is None:
        raise ShapeError("conv_general_dilated: empty kernel")
    # acc: G, N, out..., O/G  ->  N, G*O/G, out...
    perm = (1, 0, ns + 2) + tuple(range(2, 2 + ns))
    out = anp.reshape(anp.transpose(acc, perm), (N, O) + out_sp)
    inv = tuple(np.argsort(op))
    return anp.transpose(out, inv)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` with NC... / OI... layouts and no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv_general_dilated`` with explicit ``padding`` and dilations, JAX's older spelling;
    ``precision`` has no effect."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                preferred_element_type=preferred_element_type)


# ----------------------------------------------------------------------------
# ----------------------------------------------------------------------------
# convolutions
# ----------------------------------------------------------------------------

class ConvDimensionNumbers(collections.namedtuple("ConvDimensionNumbers",
                                                  ["lhs_spec", "rhs_spec", "out_spec"])):
    """Layouts of a convolution as dimension-index tuples: ``lhs_spec = (batch, feature,
    spatial...)``, ``rhs_spec = (out feature, in feature, spatial...)``, ``out_spec`` like
    ``lhs_spec`` (JAX's ``lax.ConvDimensionNumbers``)."""
    __slots__ = ()


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """:class:`ConvDimensionNumbers` from ``None`` (NC.../OI.../NC...), strings such as
    ``("NHWC", "HWIO", "NHWC")`` or index tuples.

    >>> import autodiff as ad
    >>> ad.lax.conv_dimension_numbers((1, 5, 5, 3), (2, 2, 3, 8), ("NHWC", "HWIO", "NHWC"))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise ShapeError(f"conv_dimension_numbers: lhs and rhs need the same rank, got "
                         f"{len(lhs_shape)} and {len(rhs_shape)}")
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    return ConvDimensionNumbers(*conv_specs(dimension_numbers, nd))


def _conv_transpose_pads(k, s, padding):
    # the padding of the dilated-input convolution that is the gradient of a strided one
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + builtins.max(k - s, 0)
        pad_a = k - 1
    else:
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or pairs, got {padding!r}")
    return pad_a, pad_len - pad_a


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """Transposed ("deconvolution") convolution, as JAX's: a convolution of the input
    dilated by ``strides``, padded so that ``'SAME'`` multiplies spatial sizes by the
    strides; ``transpose_kernel=True`` flips the kernel and swaps its feature axes (the
    exact gradient of ``conv_general_dilated``). Layouts default to N C spatial... /
    O I spatial... / N C spatial..., as ``conv_general_dilated``'s.

    >>> import numpy as np, autodiff as ad
    >>> x = np.ones((1, 1, 3)); w = np.ones((1, 1, 2))
    >>> ad.lax.conv_transpose(x, w, (2,), "SAME").shape
    (1, 1, 6)
    """
    x, w = anp.asarray(lhs), anp.asarray(rhs)
    nd = anp.ndim(x)
    ns = nd - 2
    dn = conv_dimension_numbers(anp.shape(x), anp.shape(w), dimension_numbers)
    kshape = [anp.shape(w)[d] for d in dn.rhs_spec[2:]]
    rdil = tuple(rhs_dilation or (1,) * ns)
    kd = [(k - 1) * d + 1 for k, d in zip(kshape, rdil)]
    if isinstance(padding, str):
        pads = [_conv_transpose_pads(k, s, padding.upper()) for k, s in zip(kd, strides)]
    else:
        pads = [tuple(p) for p in padding]
    if transpose_kernel:
        w = anp.flip(w, axis=tuple(dn.rhs_spec[2:]))
        spec = list(dn.rhs_spec)
        spec[0], spec[1] = spec[1], spec[0]
        dn = ConvDimensionNumbers(dn.lhs_spec, tuple(spec), dn.out_spec)
    return conv_general_dilated(x, w, (1,) * ns, pads, lhs_dilation=tuple(strides),
                                rhs_dilation=rdil, dimension_numbers=dn, precision=precision)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a kernel of spatial ``filter_shape`` would see,
    as features: output feature ``c · prod(filter_shape) + p`` is input feature ``c`` at
    filter position ``p`` (row-major), as JAX's. A convolution with a one-hot kernel, so
    it differentiates and jits.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.conv_general_dilated_patches(np.arange(4.0).reshape(1, 1, 4), (2,), (1,), "VALID")
    array([[[0., 1., 2.],
            [1., 2., 3.]]])
    """
    x = anp.asarray(lhs)
    nd = anp.ndim(x)
    dn = conv_dimension_numbers(anp.shape(x), anp.shape(x), dimension_numbers)
    C = anp.shape(x)[dn.lhs_spec[1]]
    fs = tuple(int(f) for f in filter_shape)
    P = int(np.prod(fs))
    eye = np.eye(C * P, dtype=np.dtype(anp.result_type(x)) if np.dtype(anp.result_type(x)).kind in "fc"
                 else np.float64)
    w = eye.reshape((C * P, C) + fs)                 # O I spatial..., one-hot
    # the kernel is built in O I spatial order; read it with the rhs spec of this layout
    rhs_spec = tuple(range(nd))
    odn = ConvDimensionNumbers(dn.lhs_spec, rhs_spec, dn.out_spec)
    return conv_general_dilated(x, w, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, dimension_numbers=odn,
                                precision=precision)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """Locally connected ("unshared") convolution: every output position has its own
    kernel. ``rhs`` has, in ``dimension_numbers``' rhs layout, the output features, the
    input features times ``prod(filter_shape)`` (c-major, as the patches), and the output's
    spatial sizes: ``out[n, o, s] = Σ_k patches[n, k, s] · rhs[o, k, s]``.

    >>> import numpy as np, autodiff as ad
    >>> x = np.arange(4.0).reshape(1, 1, 4)
    >>> w = np.ones((1, 2, 3))                        # O, I·2, output width 3
    >>> ad.lax.conv_general_dilated_local(x, w, (1,), "VALID", (2,))
    array([[[1., 3., 5.]]])
    """
    x, w = anp.asarray(lhs), anp.asarray(rhs)
    dn = conv_dimension_numbers(anp.shape(x), anp.shape(w), dimension_numbers)
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation,
                                           ConvDimensionNumbers(dn.lhs_spec, dn.rhs_spec, dn.lhs_spec),
                                           precision)
    p = anp.transpose(patches, dn.lhs_spec)          # N K S...
    k = anp.transpose(w, dn.rhs_spec)                # O K S...
    out = anp.sum(anp.multiply(anp.expand_dims(p, 1), anp.expand_dims(k, 0)), axis=2)  # N O S...
    return anp.transpose(out, tuple(np.argsort(dn.out_spec)))


_GROUP_OFFSET_MSG = ("{}: Unimplemented group_offset support. (JAX raises the same: "
                     "group_offset is accepted by its signature but no rule implements it)")


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None):
    """Grouped matrix product (mixture-of-experts layers): rows of ``lhs[m, k]`` come in
    consecutive groups of ``group_sizes[g]`` rows, and group ``g`` is multiplied by
    ``rhs[g, k, n]``; rows past the groups give zeros. A masked ``einsum``, so it
    differentiates in ``lhs`` and ``rhs``.

    >>> import numpy as np, autodiff as ad
    >>> lhs = np.ones((3, 2)); rhs = np.stack([np.eye(2), 2 * np.eye(2)])
    >>> ad.lax.ragged_dot(lhs, rhs, np.array([1, 2]))
    array([[1., 1.],
           [2., 2.],
           [2., 2.]])
    """
    if group_offset is not None:
        raise UnsupportedError(_GROUP_OFFSET_MSG.format("ragged_dot"))
    check_precision(precision)
    a, b = anp.asarray(lhs), anp.asarray(rhs)
    m, g = anp.shape(a)[0], anp.shape(b)[0]
    ends = anp.cumulative_sum(anp.astype(anp.asarray(group_sizes), np.int64))
    starts = anp.subtract(ends, anp.astype(anp.asarray(group_sizes), np.int64))
    rows = anp.reshape(anp.arange(m), (m, 1))
    onehot = anp.logical_and(anp.greater_equal(rows, starts), anp.less(rows, ends))   # m, g
    dt = anp.result_type(a, b)
    per_group = anp.einsum("mk,gkn->gmn", a, b)
    return anp.einsum("mg,gmn->mn", anp.astype(onehot, dt), per_group)


@dataclasses.dataclass(frozen=True, init=False)
class RaggedDotDimensionNumbers:
    """The dimensions of a :func:`ragged_dot_general` (JAX's ``lax.RaggedDotDimensionNumbers``):
    ``dot_dimension_numbers`` as ``dot_general``'s ``((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``, the one ``lhs_ragged_dimensions`` entry, and the
    ``rhs_group_dimensions`` (one when the ragged dimension is a free lhs dimension, none
    otherwise).

    >>> import autodiff as ad
    >>> ad.lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0]).rhs_group_dimensions
    (0,)
    """
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        dn = tuple(tuple(tuple(int(d) for d in dims) for dims in pair)
                   for pair in dot_dimension_numbers)
        object.__setattr__(self, "dot_dimension_numbers", dn)
        ints = lambda dims: tuple(int(d) for d in dims)
        object.__setattr__(self, "lhs_ragged_dimensions", ints(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", ints(rhs_group_dimensions))


def _ragged_prefix(mode, rank, ragged, batch, contract):
    # the dims of an operand that group_sizes is indexed by before its group axis
    if mode == "batch":
        return list(batch[:batch.index(ragged)])
    if mode == "contracting":
        return list(batch) + list(contract[:contract.index(ragged)])
    free = [d for d in range(rank) if d not in contract and d not in batch]
    return list(batch) + free[:free.index(ragged)]


def _ragged_to_dense(x, dim, gs, prefix):
    """``[g, x...]``: copy ``g`` of ``x`` keeps, along ``dim``, only group ``g``'s rows; the
    group sizes ``gs[prefix sizes..., g]`` may differ along the ``prefix`` dims of ``x``."""
    shape = anp.shape(x)
    ends = anp.cumsum(gs, axis=-1)
    starts = anp.subtract(ends, gs)
    k = len(prefix)
    order = [int(i) for i in np.argsort(prefix)] if k else []
    perm = (k,) + tuple(order)                       # group axis first, prefix dims sorted
    bshape = (anp.shape(gs)[-1],) + tuple(shape[d] if d in prefix else 1
                                           for d in range(len(shape)))
    starts = anp.reshape(anp.transpose(starts, perm), bshape)
    ends = anp.reshape(anp.transpose(ends, perm), bshape)
    pos = anp.reshape(anp.arange(shape[dim]), (1,) + tuple(
        shape[d] if d == dim else 1 for d in range(len(shape))))
    mask = anp.logical_and(anp.less_equal(starts, pos), anp.less(pos, ends))
    return anp.where(mask, anp.expand_dims(x, 0), anp.zeros((), anp.result_type(x)))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None):
    """JAX's ``ragged_dot_general``: a ``dot_general`` whose lhs ``ragged`` dimension is cut
    into consecutive groups of ``group_sizes[..., g]`` entries (entries past the groups count
    as zeros). Three modes, by what the ragged dimension is:

    - a free lhs dimension ``m``: group ``g``'s rows meet the ``rhs`` slice ``g`` of its
      group dimension (``ragged_dot``'s mixture of experts); the result is ``dot_general``'s
      without the group dimension;
    - a contracting dimension ``k``: one product per group, each summing over its own
      stretch of ``k``; the result has a leading axis of size ``g``;
    - a batch dimension: a plain ``dot_general`` (the groups do not change the result).

    ``group_sizes`` is ``[g]`` or, with the batch dims and the dims outer to the ragged one
    in front, ``[b..., x..., g]``. Masked copies and ``dot_general``, so it differentiates,
    jits and vmaps. ``group_offset`` raises :class:`~autodiff.errors.UnsupportedError`, as
    JAX raises ``NotImplementedError`` for it.

    >>> import numpy as np, autodiff as ad
    >>> dn = ad.lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    >>> ad.lax.ragged_dot_general(np.ones((1, 3)), np.ones((3, 2)), np.array([1, 2]), dn)
    array([[[1., 1.]],
    <BLANKLINE>
           [[2., 2.]]])
    """
    if group_offset is not None:
        raise UnsupportedError(_GROUP_OFFSET_MSG.format("ragged_dot_general"))
    check_precision(precision)
    dn = ragged_dot_dimension_numbers
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError(f"ragged_dot_general: ragged_dot_dimension_numbers must be a "
                        f"RaggedDotDimensionNumbers, got {type(dn).__name__}")
    a, b, gs = anp.asarray(lhs), anp.asarray(rhs), anp.asarray(group_sizes)
    if not np.issubdtype(np.dtype(anp.result_type(gs)), np.integer):
        raise TypeError(f"ragged_dot_general requires integer group_sizes, got "
                        f"{np.dtype(anp.result_type(gs))}")
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    lnd, rnd = anp.ndim(a), anp.ndim(b)
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension, got "
                        f"{dn.lhs_ragged_dimensions}")
    ragged = dn.lhs_ragged_dimensions[0]
    if not 0 <= ragged < lnd:
        raise TypeError(f"ragged_dot_general: lhs ragged dimension {ragged} is out of range "
                        f"for lhs of rank {lnd}")
    mode = "contracting" if ragged in lc else "batch" if ragged in lb else "free"
    if anp.ndim(gs) == 0:
        raise TypeError("ragged_dot_general: group_sizes needs rank >= 1")
    lpre = _ragged_prefix(mode, lnd, ragged, lb, lc)
    ng = anp.shape(gs)[-1]
    want = tuple(anp.shape(a)[d] for d in lpre) + (ng,)
    if anp.ndim(gs) == 1:
        gs = anp.broadcast_to(gs, want)
    elif tuple(anp.shape(gs)) != want:
        raise TypeError(f"ragged_dot_general: expected group_sizes of shape {want}, got "
                        f"{tuple(anp.shape(gs))}")
    gdims = dn.rhs_group_dimensions
    if mode != "free" and gdims:
        raise TypeError("ragged_dot_general requires zero rhs group dimensions when the lhs "
                        "ragged dimension is contracting or batch")
    gs = anp.astype(gs, np.int64)
    inc = lambda dims: [d + 1 for d in dims]
    if mode == "batch":
        return dot_general(a, b, dn.dot_dimension_numbers)
    if mode == "contracting":
        rragged = rc[list(lc).index(ragged)]
        rpre = _ragged_prefix(mode, rnd, rragged, rb, rc)
        return dot_general(_ragged_to_dense(a, ragged, gs, lpre),
                           _ragged_to_dense(b, rragged, gs, rpre),
                           ((inc(lc), inc(rc)), ([0] + inc(lb), [0] + inc(rb))))
    if len(gdims) != 1:
        raise TypeError("ragged_dot_general requires exactly one rhs group dimension when the "
                        "lhs ragged dimension is a free dimension")
    g = gdims[0]
    if not 0 <= g < rnd or g in rb or g in rc:
        raise TypeError(f"ragged_dot_general: rhs group dimension {g} must be a free dimension "
                        f"of rhs (rank {rnd})")
    if anp.shape(b)[g] != ng:
        raise TypeError(f"ragged_dot_general: expected rhs group dimension size {ng}, got "
                        f"{anp.shape(b)[g]}")
    return dot_general(_ragged_to_dense(a, ragged, gs, lpre), b,
                       ((inc(lc) + [0], list(rc) + [g]), (inc(lb), list(rb))))
