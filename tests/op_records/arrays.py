"""The rows of the array primitives: reductions, shapes, indexing, dot, cumulative and
sorting, linear algebra and the Fourier transform (autodiff/primitives/reductions.py,
shape.py, indexing.py, dot.py, cumulative.py, linalg.py, fft.py); their records, then
their flags (see the package's docstring)."""
import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff import primitives as P
from autodiff.core import primitives

from . import (A, B, C, I, NO_DERIVATIVE, Cuda, HermitianPD, Hermitian, Jet, Special, Sym,
               WellConditioned, WellConditionedC, Z, M, declare, idx, sample, spd, u, x3,
               xs3, y3)

F64, F32 = np.float64, np.float32

# ---------------------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------------------

for _n in ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]:
    sample(_n, [A(2, 3, 4, lo=0.5, hi=2)], axes=(1,))
    sample(_n, [A(2, 3, 4, lo=0.5, hi=2)], axes=(0, 2))
    sample(_n, [A(3, lo=0.5, hi=2)], axes=(0,))
sample("reduce_prod", [A(values=[[1.5, 0.0, 2.0], [0.0, 0.0, 3.0]])], axes=(1,))
sample("logsumexp", [A(2, 3, 4)], axes=(1,))
sample("logsumexp", [A(2, 3, 4, lo=-30, hi=30)], axes=(0, 2))
sample("logsumexp", [A(3)], axes=(0,))
for _n in ["reduce_and", "reduce_or"]:
    sample(_n, [B(2, 3)], axes=(1,))
for _n in ["argmax", "argmin"]:
    sample(_n, [A(2, 3)], axis=1, index_dtype=np.dtype(np.int64))
    sample(_n, [A(4)], axis=0, index_dtype=np.dtype(np.int32))

sample("broadcast_in_dim", [A(3)], shape=(2, 3), broadcast_dimensions=(1,))
sample("broadcast_in_dim", [A(2, 1)], shape=(2, 4, 3), broadcast_dimensions=(0, 2))
sample("broadcast_in_dim", [A()], shape=(2, 2), broadcast_dimensions=())
sample("reshape", [A(2, 3)], new_sizes=(3, 2))
sample("reshape", [A(2, 3)], new_sizes=(6,))
sample("transpose", [A(2, 3, 4)], permutation=(2, 0, 1))
sample("squeeze", [A(2, 1, 3, 1)], dimensions=(1, 3))
sample("expand_dims", [A(2, 3)], dimensions=(0, 2))
sample("concatenate", [A(2, 3), A(2, 1), A(2, 2)], dimension=1)
sample("pad", [A(2, 3), A()], padding_config=((1, 2, 0), (0, 1, 2)))
sample("pad", [A(4), A()], padding_config=((-1, 2, 1),))
sample("slice", [A(4, 5)], start_indices=(1, 0), limit_indices=(4, 5), strides=(2, 2))
sample("slice", [A(5)], start_indices=(1,), limit_indices=(3,), strides=(1,))
sample("rev", [A(2, 3)], dimensions=(1,))
sample("rev", [A(2, 3)], dimensions=(0, 1))
sample("roll", [A(2, 3)], shift=2, axis=1)
sample("roll", [A(4, 2, 3)], shift=1, axis=0)
sample("roll", [I(3, 4)], shift=3, axis=1)
sample("dynamic_slice", [A(4, 5), C(1), C(3)], slice_sizes=(2, 2))
sample("dynamic_slice", [A(4, 5), C(-1), C(9)], slice_sizes=(2, 3))          # clamped
sample("dynamic_update_slice", [A(4, 5), A(2, 2), C(1), C(2)])
sample("dynamic_update_slice", [A(4), A(2), C(7, np.int32)])
sample("gather", [A(4, 3), C([[0], [3], [0]])])
sample("gather", [A(4, 3), C([[[0, 1], [3, 2]]])])
sample("index_gather", [A(4, 3), C([0, 3, -1])])
sample("index_gather", [A(4, 3, 2), C([[0, -1], [3, 2]]), C([[1, 0], [2, -3]], np.int32)])
sample("scatter_add", [A(4, 3), C([[0], [3], [0]]), A(3, 3)])
sample("scatter", [A(4, 3), C([[2], [0]]), A(2, 3)])
sample("scatter", [A(4, 3), C([[1, 2], [3, 0]]), A(2)])
sample("scatter", [A(4, 3), C([[2], [0], [2]]), A(3, 3)])      # repeated: the last one wins
sample("scatter_add", [A(5), C([[1], [1], [4], [1]]), A(4)])
sample("dot_general", [A(2, 3), A(3, 4)], dimension_numbers=(((1,), (0,)), ((), ())))
sample("dot_general", [A(5, 2, 3), A(5, 3)], dimension_numbers=(((2,), (1,)), ((0,), (0,))))
sample("dot_general", [A(3, 2), A(4, 3)], dimension_numbers=(((0,), (1,)), ((), ())))
sample("dot_general", [A(2), A(3)], dimension_numbers=(((), ()), ((), ())))
sample("dot_general", [A(2, 3, 4), A(4, 2, 3)],
       dimension_numbers=(((1, 2), (2, 0)), ((), ())))
for _n in ["cumsum", "cumprod", "cummax", "cummin"]:
    sample(_n, [A(2, 4, lo=0.5, hi=2)], axis=1, reverse=False)
    sample(_n, [A(3, 2, lo=0.5, hi=2)], axis=0, reverse=True)
sample("cumprod", [A(values=[1.5, 0.0, 2.0, -1.0])], axis=0, reverse=False)
sample("sort", [A(2, 4)], dimension=1)
sample("sort", [A(3, 2)], dimension=0)
sample("argsort", [A(2, 4)], dimension=1)
sample("iota", [], dtype=np.dtype(np.int64), shape=(2, 3), dimension=1)
sample("iota", [], dtype=np.dtype(np.float32), shape=(4,), dimension=0)
sample("cholesky", [A(3, 3, spd=True)])
sample("cholesky", [A(2, 3, 3, spd=True)])
for _l in (True, False):
    for _t in (True, False):
        sample("triangular_solve", [A(3, 3, spd=True), A(3, 2)], left_side=True, lower=_l,
               transpose_a=_t, unit_diagonal=False)
sample("triangular_solve", [A(3, 3, spd=True), A(2, 3)], left_side=False, lower=True,
       transpose_a=False, unit_diagonal=True)
sample("triangular_solve", [A(2, 3, 3, spd=True), A(2, 3, 1)], left_side=True, lower=False,
       transpose_a=False, unit_diagonal=False)
sample("solve", [A(3, 3, spd=True), A(3, 2)])
sample("solve", [A(2, 3, 3, spd=True), A(2, 3, 1)])
sample("slogdet", [A(3, 3, lo=-1, hi=1)])
sample("slogdet", [A(2, 2, 2, spd=True)])
sample("eigh", [A(3, 3, spd=True)])
sample("eigh", [A(2, 3, 3, spd=True)])

# more shapes and values (first written for the batching tests): integer operands,
# random (batched) indices, non-symmetric and indefinite matrices, contractions whose
# batch dimension is not leading; appended so the records above keep their indices
for _n in ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]:
    sample(_n, [A(3, 2, lo=0.5, hi=2)], axes=(0, 1))
for _n in ["reduce_and", "reduce_or"]:
    sample(_n, [B(3, 2)], axes=(0,))
    sample(_n, [B(3, 2, 2)], axes=(0, 2))
for _n in ["argmax", "argmin"]:
    sample(_n, [A(3, 4)], axis=0, index_dtype=np.dtype(np.int32))
sample("broadcast_in_dim", [A(3, 1)], shape=(3, 4), broadcast_dimensions=(0, 1))
sample("reshape", [A(6)], new_sizes=(2, 1, 3))
sample("transpose", [A(2, 3)], permutation=(1, 0))
sample("squeeze", [A(1, 2, 1)], dimensions=(0, 2))
sample("expand_dims", [A(3)], dimensions=(0,))
sample("expand_dims", [A(3, 2)], dimensions=(1, 3))
sample("concatenate", [A(2, 3), A(1, 3)], dimension=0)
sample("pad", [A(4, 3), A()], padding_config=((-1, 1, 0), (1, -1, 2)))
sample("pad", [A(3), A(values=-np.inf)], fd=False, padding_config=((2, 1, 1),))
sample("pad", [I(3, 2, lo=-3, hi=6), I(lo=-3, hi=6)], padding_config=((1, 0, 0), (0, 1, 0)))
sample("slice", [A(6)], start_indices=(1,), limit_indices=(6,), strides=(3,))
sample("dynamic_slice", [A(5, 4), I(lo=-2, hi=6), I(lo=0, hi=3)], slice_sizes=(2, 3))
sample("dynamic_update_slice", [A(5, 4), A(2, 3), I(lo=-2, hi=6), I(lo=0, hi=3)])
sample("gather", [A(5, 4), I(3, 1, lo=-5, hi=5)])                 # negative indices
sample("gather", [A(5, 4, 2), I(2, 3, 2, lo=0, hi=4)])
sample("gather", [A(5), I(1, lo=0, hi=5)])
sample("index_gather", [A(5, 4), I(3, 2, lo=-5, hi=5), I(3, 2, lo=-4, hi=4)])   # negative
sample("index_gather", [A(5), I(lo=0, hi=5)])                                   # rank-0
sample("index_gather", [A(200, 2), C([0, -2, 100], np.int8)])      # int8 into 200 rows
for _n in ["scatter_add", "scatter"]:
    sample(_n, [A(5, 4), I(3, 1, lo=0, hi=5), A(3, 4)])
    sample(_n, [A(5, 4), I(2, 2, lo=0, hi=4), A(2)])
    # mode="drop": rows outside the array (past either end, negative) write nothing
    sample(_n, [A(5, 4), C([[0], [7], [-1], [2], [5]]), A(5, 4)], mode="drop")
    sample(_n, [A(4, 3), C([[1, 2], [4, 0], [3, -1], [0, 3], [1, 2]]), A(5)], mode="drop")
for _n in ["scatter_mul", "scatter_min", "scatter_max"]:
    sample(_n, [A(5, 4), C([[0], [3], [0], [1]]), A(4, 4)])     # repeated: both combine
    sample(_n, [A(4, 3), C([[1, 2], [3, 0], [1, 2]]), A(3)])
    sample(_n, [A(5), C([[1], [7], [1], [-1], [4]]), A(5)], mode="drop")
sample("scatter_mul", [A(4), C([[1], [1], [1], [2]]), A(values=[0.0, 1.5, -2.0, 0.0])],
       mode="drop")                                              # zero updates: exact
sample("dot_general", [A(4), A(4)], dimension_numbers=(((0,), (0,)), ((), ())))
sample("dot_general", [A(2, 3, 4), A(2, 4, 5)], dimension_numbers=(((2,), (1,)), ((0,), (0,))))
sample("dot_general", [A(4, 2, 3), A(3, 2)], dimension_numbers=(((2,), (0,)), ((1,), (1,))))
for _n in ["cumsum", "cumprod", "cummax", "cummin"]:
    sample(_n, [A(4, 3)], axis=0, reverse=False)                    # negative values too
    sample(_n, [A(4, 3)], axis=1, reverse=True)
sample("argsort", [A(4, 3)], dimension=0)
for _ls, _lo, _tr, _ud in [(True, True, False, False), (True, False, True, False),
                           (True, True, True, True)]:
    sample("triangular_solve", [WellConditioned(3, 3), A(3, 2)], left_side=_ls, lower=_lo,
           transpose_a=_tr, unit_diagonal=_ud)
sample("triangular_solve", [WellConditioned(3, 3), A(2, 3)], left_side=False, lower=True,
       transpose_a=False, unit_diagonal=False)
sample("solve", [WellConditioned(3, 3), A(3, 2)])
sample("solve", [WellConditioned(2, 3, 3), A(2, 3, 1)])
sample("slogdet", [WellConditioned(3, 3)])
sample("eigh", [Sym(3, 3)])

# complex operands (docs/complex.md), complex64 under float32 and complex128 under float64
# (Z); appended so the records above keep their indices.
# numpy orders complex numbers lexicographically (real part, then imaginary part): max,
# min, argmax, sort and the running maximum follow it. Samples with repeated real parts
# make the imaginary part decide (where the real part is tied, moving it reorders, so
# finite differences do not apply: fd=False keeps them to the exact identities).
_TIES = [[1 + 2j, 1 - 1j, -1 + 3j, 1 + 0.5j], [0.5j, -0.5j, 2 - 1j, 2 + 1j]]
for _n in ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]:
    sample(_n, [Z(2, 3, 4, lo=0.5, hi=1.5)], axes=(1,))
    sample(_n, [Z(3, 2, lo=0.5, hi=1.5)], axes=(0, 1))
for _n in ["reduce_max", "reduce_min"]:
    sample(_n, [Z(values=_TIES)], axes=(1,), fd=False)
for _n in ["argmax", "argmin"]:
    sample(_n, [Z(2, 3)], axis=1, index_dtype=np.dtype(np.int64))
    sample(_n, [Z(values=_TIES)], axis=1, index_dtype=np.dtype(np.int64))
sample("broadcast_in_dim", [Z(2, 1)], shape=(2, 4, 3), broadcast_dimensions=(0, 2))
sample("reshape", [Z(2, 3)], new_sizes=(3, 2))
sample("transpose", [Z(2, 3, 4)], permutation=(2, 0, 1))
sample("squeeze", [Z(2, 1, 3)], dimensions=(1,))
sample("expand_dims", [Z(2, 3)], dimensions=(0, 2))
sample("concatenate", [Z(2, 3), Z(2, 1)], dimension=1)
sample("pad", [Z(2, 3), Z()], padding_config=((1, 2, 0), (0, 1, 2)))
sample("pad", [Z(4), Z()], padding_config=((-1, 2, 1),))
sample("slice", [Z(4, 5)], start_indices=(1, 0), limit_indices=(4, 5), strides=(2, 2))
sample("rev", [Z(2, 3)], dimensions=(1,))
sample("roll", [Z(2, 3)], shift=1, axis=1)
sample("dynamic_slice", [Z(4, 5), C(1), C(3)], slice_sizes=(2, 2))
sample("dynamic_update_slice", [Z(4, 5), Z(2, 2), C(1), C(2)])
sample("gather", [Z(4, 3), C([[0], [3], [0]])])
sample("index_gather", [Z(4, 3), C([0, 3, -1]), C([2, 0, 1])])
sample("scatter_add", [Z(4, 3), C([[0], [3], [0]]), Z(3, 3)])
sample("scatter", [Z(4, 3), C([[2], [0], [2]]), Z(3, 3)])
sample("scatter_mul", [Z(4, 3), C([[2], [0], [2]]), Z(3, 3)])
sample("dot_general", [Z(2, 3), Z(3, 4)], dimension_numbers=(((1,), (0,)), ((), ())))
sample("dot_general", [Z(5, 2, 3), Z(5, 3)], dimension_numbers=(((2,), (1,)), ((0,), (0,))))
sample("dot_general", [Z(4), Z(4)], dimension_numbers=(((0,), (0,)), ((), ())))
for _n in ["cumsum", "cumprod", "cummax", "cummin"]:
    sample(_n, [Z(2, 4, lo=0.5, hi=1.5)], axis=1, reverse=False)
    sample(_n, [Z(3, 2, lo=0.5, hi=1.5)], axis=0, reverse=True)
for _n in ["cummax", "cummin"]:
    sample(_n, [Z(values=_TIES)], axis=1, reverse=False, fd=False)
sample("sort", [Z(2, 4)], dimension=1)
sample("sort", [Z(values=_TIES)], dimension=1, fd=False)
sample("argsort", [Z(values=_TIES)], dimension=1)
sample("argsort", [Z(3, 2)], dimension=0)
sample("cholesky", [HermitianPD(3, 3)])
sample("cholesky", [HermitianPD(2, 3, 3)])
for _l, _t in [(True, False), (False, True)]:
    sample("triangular_solve", [WellConditionedC(3, 3), Z(3, 2)], left_side=True, lower=_l,
           transpose_a=_t, unit_diagonal=False)
sample("triangular_solve", [WellConditionedC(3, 3), Z(2, 3)], left_side=False, lower=True,
       transpose_a=False, unit_diagonal=False)
sample("solve", [WellConditionedC(3, 3), Z(3, 2)])
sample("solve", [WellConditionedC(2, 3, 3), Z(2, 3, 1)])
sample("slogdet", [WellConditionedC(3, 3)])
sample("eigh", [HermitianPD(3, 3)])
sample("eigh", [Hermitian(3, 3)])
# the discrete Fourier transform (autodiff/primitives/fft.py) on the trailing axes: even
# and odd lengths (the Nyquist bin of rfft/irfft exists for even ones only), one and two axes
sample("fft", [Z(2, 4)], fft_type="FFT", fft_lengths=(4,))
sample("fft", [Z(3, 2, 3)], fft_type="IFFT", fft_lengths=(2, 3))
sample("fft", [A(2, 6)], fft_type="RFFT", fft_lengths=(6,))
sample("fft", [A(3, 5)], fft_type="RFFT", fft_lengths=(3, 5))
sample("fft", [Z(2, 4)], fft_type="IRFFT", fft_lengths=(6,))
sample("fft", [Z(3, 3)], fft_type="IRFFT", fft_lengths=(3, 5))
# qr and svd (LAPACK geqrf + orgqr/ungqr, gesdd): tall, wide, square, batched, both modes
sample("qr", [A(4, 3)], full=False)
sample("qr", [A(3, 4)], full=False)
sample("qr", [A(2, 4, 3)], full=True)
sample("qr", [A(3, 3)], full=True)
sample("qr", [Z(4, 3)], full=False)
sample("svd", [A(4, 3)], compute_uv=True)
sample("svd", [A(2, 3, 4)], compute_uv=True)
sample("svd", [A(3, 3)], compute_uv=False)
sample("svd", [Z(3, 2)], compute_uv=True)


# ---------------------------------------------------------------------------------------
# flags
# ---------------------------------------------------------------------------------------

_x34, _x5 = u((3, 4)), u((5,), seed=3)
STRUCTURAL = "structural: moves values"

# reductions: the special values' table reduces over the last axis of the (n², 2) matrix
# of all pairs of special values
for _n, _jet, _ref in [
        ("reduce_sum", Jet(lambda x: anp.sum(anp.sin(x)), x3), lambda m: np.sum(m, axis=1)),
        ("reduce_max", Jet(anp.max, xs3), lambda m: np.max(m, axis=1)),
        ("reduce_min", Jet(anp.min, xs3), lambda m: np.min(m, axis=1)),
        ("reduce_prod", Jet(lambda x: anp.prod(anp.stack([x, x * x, x + 1.0, x, x])), xs3),
         lambda m: np.prod(m, axis=1))]:
    _prim = primitives[_n]
    _xx = u((3, 40), F64, 0.5, 1.5)
    _xx[1, 3] = np.nan if _n in ("reduce_max", "reduce_min") else _xx[1, 3]
    declare(_n, jet=_jet, special=Special("reduce", _ref, axes=(1,)),
            cuda=Cuda(lambda x, y, prim=_prim: (prim.bind(x, axes=(1,)), prim.bind(x, axes=(0,)),
                                                prim.bind(x, axes=(0, 1)),
                                                prim.bind(y, axes=(0,)),
                                                prim.bind(anp.exp(x), axes=(1,))),
                      (_xx, u((7,), F32, 0.5, 1.5))),
            jit="test_reductions")
for _n in ("reduce_and", "reduce_or"):
    _prim = primitives[_n]
    declare(_n, jet=NO_DERIVATIVE, special="bool",
            cuda=Cuda(lambda b, prim=_prim: (prim.bind(b, axes=(1,)), prim.bind(b, axes=(0, 1))),
                      (_x34 > -1.0,)),
            jit="test_bool_reductions")
for _n, _ref in [("argmax", lambda m: np.argmax(m, axis=1)),
                 ("argmin", lambda m: np.argmin(m, axis=1))]:
    _prim = primitives[_n]
    declare(_n, jet=NO_DERIVATIVE,
            special=Special("reduce", _ref, axis=1, index_dtype=np.dtype(np.int64)),
            cuda=Cuda(lambda x, prim=_prim: (
                prim.bind(x, axis=1, index_dtype=np.dtype(np.int64)),
                prim.bind(x, axis=0, index_dtype=np.dtype(np.int32))),
                (np.array([[1.0, 3.0, 3.0, -1.0], [np.nan, 2.0, np.nan, 0.0],
                           [2.0, 2.0, 1.0, 5.0]]),)),
            jit="test_argmax_argmin")
declare("logsumexp", jet=Jet(lambda x: anp.logsumexp(anp.sin(x) * x), x3),
        special="a composite of the reductions and exp/log above: its special values "
                "against scipy in tests/test_scipy.py::test_logsumexp_primitive",
        cuda="inlined before lowering (a composite of max, exp, sum and log: their cases)",
        jit="inlined; its jit cases (vs scipy): tests/test_scipy.py")

# shapes
declare("iota", jet=NO_DERIVATIVE, special=STRUCTURAL,
        cuda=Cuda(lambda x: x + anp.arange(4.0) + anp.arange(3)[:, None], (_x34,),
                  contains=False),
        jit="test_iota")
declare("broadcast_in_dim", jet=Jet(lambda x: anp.broadcast_to(x, (2, 3)) * x, x3),
        special=STRUCTURAL,
        cuda=Cuda(lambda v, s: (P.broadcast_in_dim(v, (3, 4), (1,)) * 2.0,
                                P.broadcast_in_dim(v, (2, 4), (1,)),
                                P.broadcast_in_dim(s, (2, 2), ()) + 1.0),
                  (u((4,)), np.float64(2.0)), contains=False),
        jit="test_broadcast_in_dim")
_VIEWS = Cuda(lambda x, y: (P.transpose(x, (1, 0)), anp.exp(P.transpose(x, (1, 0))) + 1.0,
                            P.rev(x, (0,)), P.rev(y, (0, 2)) * 2.0,
                            P.slice_op(x, (1, 0), (3, 4), (1, 2)), P.transpose(y, (2, 0, 1))),
              (_x34, u((2, 3, 2), F32)))
_RESHAPES = Cuda(lambda x: (P.reshape(x, (12,)), anp.sin(P.reshape(x, (12,))) * 2.0,
                            P.reshape(x.T, (4, 3)), P.squeeze(x[:1], (0,)),
                            P.expand_dims(x, (0, 2)) + 1.0, P.reshape(x[:1, :1], ())),
                 (_x34,))
for _n, _jet, _cuda, _jit in [
        ("reshape", Jet(lambda x: anp.reshape(x, (3, 1)) * 2.0, x3), _RESHAPES,
         "test_reshape_squeeze_expand_dims"),
        ("transpose", Jet(lambda x: anp.transpose(anp.outer(x, x + 1)), x3), _VIEWS,
         "test_transpose_rev_slice"),
        ("squeeze", Jet(lambda x: anp.squeeze(anp.exp(x).reshape(1, 3)), x3), _RESHAPES,
         "test_reshape_squeeze_expand_dims"),
        ("expand_dims", Jet(lambda x: anp.expand_dims(x, 0), x3), _RESHAPES,
         "test_reshape_squeeze_expand_dims"),
        ("slice", Jet(lambda x: x[1:3] * x[0:2], x3), _VIEWS, "test_transpose_rev_slice"),
        ("rev", Jet(lambda x: x[::-1] * x, x3), _VIEWS, "test_transpose_rev_slice"),
        ("roll", Jet(lambda x: anp.roll(x, 1) * x, x3),
         Cuda(lambda x, y: (P.roll(x, 1, 0) + P.roll(x, 3, 1) - 2.0 * x,
                            P.roll(P.rev(y, (1,)), 1, 2), P.roll(x.T, 2, 0) * 2.0),
              (u((5, 6)), u((2, 3, 4), F32))), "test_roll"),
        ("concatenate", Jet(lambda x, y: anp.concatenate([x, anp.sin(y)]), x3, y3),
         Cuda(lambda x, y: (P.concatenate([x, y], 0), P.concatenate([x, x], 1) * 2.0),
              (_x34, u((2, 4)))), "test_concatenate_pad"),
        ("pad", Jet(lambda x: ad.lax.pad(x, 0.5, [(1, 2, 1)]), x3),
         Cuda(lambda x: (P.pad(x, np.float64(-1.0), ((1, 2, 0), (0, 1, 1))),
                         P.pad(x, np.float64(0.0), ((-1, 1, 0), (2, -1, 2)))), (_x34,)),
         "test_concatenate_pad")]:
    declare(_n, jet=_jet, special=STRUCTURAL, cuda=_cuda, jit=_jit)

# indexing
_GATHER_SCATTER = Cuda(lambda x, i, up, i1, u1: (P.gather(x, i), P.scatter_add_p.bind(x, i, up),
                                                 P.scatter_p.bind(x, i1, u1),
                                                 P.gather(x, i1) * 2.0,
                                                 # rows with -1, 7 and -9 dropped
                                                 P.scatter_add_p.bind(x, i, up, mode="drop"),
                                                 P.scatter_p.bind(x, i, up, mode="drop")),
                       (u((4, 3)), np.array([[0, 1], [3, 2], [-1, 0], [7, -9]]), u((4,)),
                        np.array([[2], [0]]), u((2, 3))))
_DYNAMIC = Cuda(lambda x, i, j, up: (P.dynamic_slice(x, (i, j), (2, 2)),
                                     P.dynamic_update_slice(x, up, (i, j))),
                (u((4, 5)), np.int64(1), np.int32(9), u((2, 3))))
for _n, _jet, _cuda, _jit in [
        ("dynamic_slice", Jet(lambda x: ad.lax.dynamic_slice(x, (np.int64(1),), (2,)), x3),
         _DYNAMIC, "test_dynamic_slice_update"),
        ("dynamic_update_slice",
         Jet(lambda x, y: ad.lax.dynamic_update_slice(x, y[:2] * y[:2], (np.int64(1),)), x3, y3),
         _DYNAMIC, "test_dynamic_slice_update"),
        ("gather", Jet(lambda x: P.gather(x, idx[:, None]) * x, x3), _GATHER_SCATTER,
         "test_gather_scatter"),
        ("index_gather", Jet(lambda x: x[idx] * x, x3),
         Cuda(lambda x, i, j: (P.index_gather(x, [i, j]), x[i] * 2.0),
              (u((4, 3)), np.array([0, 3, -1, 7, -9]), np.array([2, -1, 0, 1, 5], np.int32))),
         "test_index_gather"),
        ("scatter", Jet(lambda x, y: x.at[np.array([2, 0])].set(y[:2] * y[1:]), x3, y3),
         _GATHER_SCATTER, "test_gather_scatter"),
        ("scatter_add", Jet(lambda x, y: x.at[idx].add(y * y), x3, y3), _GATHER_SCATTER,
         "test_gather_scatter")]:
    declare(_n, jet=_jet, special=STRUCTURAL, cuda=_cuda, jit=_jit)
_SCATTER_COMBINE = Cuda(lambda x, i, up: (
    P.scatter_mul_p.bind(x, i, up), P.scatter_min_p.bind(x, i, up),
    P.scatter_max_p.bind(x, i, up), P.scatter_max_p.bind(x, i, up, mode="drop"),
    P.scatter_min_p.bind(x, i, up, mode="drop"), P.scatter_mul_p.bind(x, i, up, mode="drop")),
    (u((4, 3)), np.array([[0], [3], [0], [7], [-1]]), u((5, 3))))
for _n, _jet in [("scatter_mul", Jet(lambda x, y: x.at[idx].multiply(y * y), x3, y3)),
                 ("scatter_max", Jet(lambda x, y: x.at[idx].max(y * 2.0), x3, y3)),
                 ("scatter_min", Jet(lambda x, y: x.at[idx].min(y * 0.5), x3, y3))]:
    declare(_n, jet=_jet, special="combines as numpy's multiply/maximum/minimum.at: "
            "NaN and ties in tests/test_jit_lowering.py", cuda=_SCATTER_COMBINE,
            jit="test_scatter_combining")

# dot
_mm = P.dot_general
declare("dot_general", jet=Jet(lambda a, x: anp.dot(a * a, x) + a @ a @ x, M, x3),
        special="linear algebra: tests/test_linalg*.py",
        cuda=Cuda(lambda a, b, c_, d, v: (
            _mm(a, b, (((1,), (0,)), ((), ()))), _mm(a, c_, (((1,), (1,)), ((), ()))),
            _mm(b, a, (((0,), (1,)), ((), ()))), _mm(d, d, (((2,), (1,)), ((0,), (0,)))),
            _mm(v, v, (((0,), (0,)), ((), ()))),
            _mm(a.astype(F32), b.astype(F32), (((1,), (0,)), ((), ()))),
            _mm(a.astype(np.int64), b.astype(np.int64), (((1,), (0,)), ((), ()))),
            _mm(d, d, (((1,), (2,)), ((0,), (0,))))),
            (u((3, 5)), u((5, 6), seed=1), u((2, 5), seed=2), u((2, 3, 3), seed=4), _x5),
            contains=False, rtol=1e-10),
        jit="test_dot_general")

# cumulative reductions and sorting
for _n, _jet, _ref in [
        ("cumsum", Jet(lambda x: anp.cumsum(anp.sin(x)), x3), lambda m: np.cumsum(m, axis=1)),
        ("cumprod", Jet(lambda x: anp.cumprod(anp.concatenate([x, x * x, x + 0.5])), xs3),
         lambda m: np.cumprod(m, axis=1)),
        ("cummax", Jet(lambda x: ad.lax.cummax(x, 0), xs3),
         lambda m: np.maximum.accumulate(m, axis=1)),
        ("cummin", Jet(lambda x: ad.lax.cummin(x, 0, reverse=True), xs3),
         lambda m: np.minimum.accumulate(m, axis=1))]:
    _prim = primitives[_n]
    _xc = u((3, 4), F64, 0.5, 1.5)
    _xc[1, 1] = np.nan
    declare(_n, jet=_jet, special=Special("reduce", _ref, axis=1, reverse=False),
            cuda=Cuda(lambda x, y, prim=_prim: (prim.bind(x, axis=0, reverse=False),
                                                prim.bind(x, axis=1, reverse=True),
                                                prim.bind(y, axis=0, reverse=True)),
                      (_xc, u((5,), F32, 0.5, 1.5))),
            jit="test_cumulative")
_srt = np.array([[3.0, 1.0, np.nan, 2.0], [0.0, -0.0, 5.0, 5.0]])
declare("sort", jet=Jet(lambda x: anp.sort(anp.sin(x)), xs3),
        special=Special("reduce", lambda m: np.sort(m, axis=1), dimension=1),
        cuda=Cuda(lambda x: (P.sort_p.bind(x, dimension=1), P.sort_p.bind(x, dimension=0)),
                  (_srt,)),
        jit="test_sort")
declare("argsort", jet=NO_DERIVATIVE,
        special=Special("reduce", lambda m: np.argsort(m, axis=1, kind="stable"), dimension=1),
        cuda=Cuda(lambda x: P.argsort_p.bind(x, dimension=1), (_srt,)),
        jit="test_sort")

# linear algebra: one CUDA program for the five
_LINALG = Cuda(lambda a, b, c_: (P.cholesky_p.bind(a), P.solve_p.bind(a, b), P.slogdet_p.bind(a),
                                 P.eigh_p.bind(a)[0], P.cholesky_p.bind(c_),
                                 P.triangular_solve(a, b, left_side=True, lower=True,
                                                    transpose_a=False, unit_diagonal=False),
                                 P.triangular_solve(a, P.transpose(b, (0, 2, 1)), left_side=False,
                                                    lower=False, transpose_a=True,
                                                    unit_diagonal=True)),
               (spd(3, (2,)), u((2, 3, 2)), spd(4)), rtol=1e-9, atol=1e-9)
for _n, _jet, _jit in [
        ("solve", Jet(lambda a, b: anp.linalg.solve(a, b), M, x3),
         "test_cholesky_solve_slogdet_eigh"),
        ("triangular_solve", Jet(lambda a, b: ad.scipy.linalg.solve_triangular(a, b, lower=True)
                                 + ad.scipy.linalg.solve_triangular(a, b, lower=False, trans=1),
                                 M, x3), "test_triangular_solve"),
        ("cholesky", Jet(lambda a: anp.linalg.cholesky(a @ a.T), M),
         "test_cholesky_solve_slogdet_eigh"),
        ("slogdet", Jet(lambda a: anp.linalg.slogdet(a)[1], M), "test_cholesky_solve_slogdet_eigh"),
        ("eigh", Jet(lambda a: anp.concatenate([anp.linalg.eigh(a)[0],
                                                anp.linalg.eigh(a)[1].ravel()]), M),
         "test_cholesky_solve_slogdet_eigh")]:
    declare(_n, jet=_jet, special="linear algebra: tests/test_linalg*.py", cuda=_LINALG, jit=_jit)

# qr and svd: the kernels call LAPACK (geqrf + orgqr/ungqr, gesdd); on CUDA they run on the
# host between the kernels
_T43 = u((4, 3), seed=5)
declare("qr", jet=Jet(lambda a: anp.concatenate([anp.linalg.qr(a)[0].ravel(),
                                                 anp.linalg.qr(a.T)[1].ravel()]), _T43),
        special="linear algebra: tests/test_linalg_lapack_jit.py",
        cuda=Cuda(lambda a: (P.qr_p.bind(a, full=False)[1], P.qr_p.bind(a, full=True)[0]),
                  (u((2, 4, 3), seed=6),), rtol=1e-9, atol=1e-9),
        jit="test_qr_svd_match_numpy (tests/test_linalg_lapack_jit.py)")
declare("svd", jet=Jet(lambda a: anp.linalg.svd(a, compute_uv=False), _T43),
        special="linear algebra: tests/test_linalg_lapack_jit.py",
        cuda=Cuda(lambda a: P.svd_p.bind(a, compute_uv=False)[0], (u((2, 4, 3), seed=6),),
                  rtol=1e-9, atol=1e-9),
        jit="test_qr_svd_match_numpy (tests/test_linalg_lapack_jit.py)")

# the Fourier transform: linear (fft_p); a product of spectra makes the jet case nonlinear
# (a circular convolution); on CUDA it runs on the host between the kernels (numpy's rule)
declare("fft", jet=Jet(lambda x: anp.fft.irfft(anp.fft.rfft(anp.sin(x)) * anp.fft.rfft(x), n=3)
                       + anp.real(anp.fft.ifft(anp.fft.fft(x * x))), x3),
        special="transforms: tests/test_fft.py",
        cuda=Cuda(lambda x: anp.fft.irfft(anp.fft.rfft(anp.sin(x)) * 0.5, n=4) + x, (_x34,)),
        jit="its jit cases (compiled, vs numpy and JAX): tests/test_fft.py")
