"""Jacobians and Hessians (``jacfwd``, ``jacrev``, ``jacobian``, ``hessian``, ``hvp``),
vectorized over the basis with ``vmap``: never a Python loop over its columns.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.jacfwd(lambda x: anp.sin(x) * 2.0)(np.zeros(2))
array([[2., 0.],
       [0., 2.]])
"""
import functools
from typing import Any, Callable, ParamSpec, Sequence, Union

import numpy as np

from . import primitives as P
from .api import Linearized, grad, jvp
from .api_util import (Transformed, argnums_split, as_array, aux_fun, check_complex, outputs,
                       split_aux_tree, trace_fun)
from .batching import vmap
from .core import get_aval, is_inexact_dtype, user_source
from .errors import ConcretizationError, DTypeError, UnsupportedError
from .transforms.jvp import jvp_eval
from .transforms.partial_eval import dce_closed
from .tree_util import tree_flatten, tree_structure, tree_unflatten
from .tree_util import PyTreeDef
from .dtypes import float0_zeros

__all__ = ["jacfwd", "jacrev", "jacobian", "hessian", "hvp"]

_P = ParamSpec("_P")
_Argnums = Union[int, Sequence[int]]

# ----------------------------------------------------------------------------
# Jacobians and Hessians: vectorized over the basis, never a Python loop
# ----------------------------------------------------------------------------

def _std_basis(flat_avals, dtype):
    """The identity, split per leaf: leaf ``i`` gets shape ``(n, *leaf_shape)``, n = total size."""
    sizes = [a.size for a in flat_avals]
    n = int(sum(sizes))
    eye = np.eye(n, dtype=dtype)
    out, start = [], 0
    for a, s in zip(flat_avals, sizes):
        out.append(eye[:, start:start + s].reshape((n,) + a.shape).astype(a.dtype))
        start += s
    return out, n


def _map_basis(fn, basis, n):
    """``vmap(fn)`` over the ``n`` basis vectors (leading axis of each leaf of ``basis``).
    One vector, or a map ``vmap`` cannot batch (custom rules running numpy or scipy on
    their values, as autograd's primitives do), is a loop over the vectors instead."""
    def loop():
        got = [fn(*[b[k] for b in basis]) for k in range(n)]
        return [P.concatenate([P.reshape(g[j], (1,) + tuple(P.shape_of(g[j]))) for g in got], 0)
                for j in range(len(got[0]))]
    if n == 1:
        return loop()
    try:
        return vmap(fn, in_axes=(0,) * len(basis), axis_size=n)(*basis)
    except (ConcretizationError, UnsupportedError) as err:   # a rule that needs values
        try:
            return loop()
        except Exception:
            raise err from None


def _jac_dtype(avals):
    dts = [a.dtype for a in avals if is_inexact_dtype(a.dtype)]
    return np.result_type(*dts) if dts else np.float64


def _check_float_inputs(flat, who):
    for x in flat:
        if not is_inexact_dtype(P.dtype_of(x)):
            raise DTypeError(f"{who} requires float inputs, got {P.dtype_of(x)}; pass floats "
                             f"or leave integer arguments out of argnums", source=user_source())


def _dyn_split(fun, args, kwargs, argnums):
    """``(dyn, f)``: the differentiated arguments (one, or a tuple for tuple argnums) and
    ``f(dyn)`` calling ``fun`` with them substituted."""
    single = isinstance(argnums, (int, np.integer))
    nums = argnums_split(args, argnums)
    dyn = args[nums[0]] if single else tuple(args[i] for i in nums)

    def f(d):
        full = list(args)
        for i, a in zip(nums, (d,) if single else d):
            full[i] = a
        return fun(*full, **kwargs)
    return dyn, f


def _float_tangents(touts, dtype):
    """Output tangents, with zeros of the Jacobian's float dtype for int/bool outputs
    (so forward and reverse mode agree: their derivative is zero, and a float)."""
    return [P.instantiate(t) if is_inexact_dtype(P.dtype_of(t)) else
            P.full(P.shape_of(t), 0, dtype) for t in touts]


def _fwd_blocks(batched, in_avals):
    """Forward mode: ``batched`` is ``(n_in, *out_shape)`` -> one block per input leaf,
    ``out_shape + in_shape``."""
    out_shape = tuple(P.shape_of(batched)[1:])
    blocks, start = [], 0
    for a in in_avals:
        blk = batched[start:start + a.size] if len(in_avals) > 1 else batched
        start += a.size
        blk = P.reshape(blk, a.shape + out_shape)
        nd_in = len(a.shape)
        blk = P.transpose(blk, tuple(range(nd_in, nd_in + len(out_shape))) + tuple(range(nd_in)))
        blocks.append(blk)
    return blocks


def _rev_blocks(rows, out_avals):
    """Reverse mode: ``rows`` has one ``(n_out, *in_shape)`` array per input leaf -> per
    output leaf, one block per input leaf, ``out_shape + in_shape``."""
    per_out, start = [], 0
    for oa in out_avals:
        blocks = []
        for r in rows:
            blk = r[start:start + oa.size] if len(out_avals) > 1 else r
            blocks.append(P.reshape(blk, oa.shape + tuple(P.shape_of(r)[1:])))
        per_out.append(blocks)
        start += oa.size
    return per_out


def _jac_tree(per_out, in_tree, out_tree):
    """JAX's nesting: the output structure outside, the input structure inside."""
    return tree_unflatten(out_tree, [tree_unflatten(in_tree, row) for row in per_out])


def jacfwd(fun: Callable[_P, Any], argnums: _Argnums = 0,
           has_aux: bool = False, *, holomorphic: bool = False) -> Callable[_P, Any]:
    """Jacobian by forward mode: ``vmap`` of ``jvp`` over the input basis (one batched program).

    Each output leaf gets ``out.shape + in.shape``; pytree inputs and outputs nest as
    in JAX (output structure outside, input structure inside); tuple ``argnums``
    gives a tuple per output; ``has_aux`` returns ``(jacobian, aux)``. Cheapest when
    inputs are fewer than outputs.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    >>> ad.jacfwd(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0)
    (np.float64(3.0), np.float64(2.0))
    """
    @functools.wraps(fun)
    def jac(*args, **kwargs):
        dyn, f = _dyn_split(fun, args, kwargs, argnums)
        flat, in_tree = tree_flatten(dyn)
        flat = [as_array(x) for x in flat]
        _check_float_inputs(flat, "jacfwd")
        in_avals = [get_aval(x).strip_weak() for x in flat]
        check_complex("jacfwd", holomorphic, [a.dtype for a in in_avals], real_in=True)
        # trace once (concretely when the inputs are concrete, so Python control flow on
        # values works), drop dead code, then push the whole input basis through one jvp
        closed, out_tree = trace_fun(aux_fun(f, has_aux), flat,
                                     PyTreeDef(tuple, None, (in_tree,)), name="jacfwd",
                                     differentiated=True)
        closed = dce_closed(closed)
        out_tree, aux_tree, n_out = split_aux_tree(out_tree, has_aux)
        if holomorphic:
            check_complex("jacfwd", True, out_dtypes=[v.aval.dtype for v in
                                                      closed.jaxpr.outvars[:n_out]])
        jdt = _jac_dtype(in_avals)
        basis, n = _std_basis(in_avals, jdt)

        def push(*ts):
            outs, touts = jvp_eval(closed.jaxpr, closed.consts, flat, list(ts))
            return _float_tangents(touts[:n_out], jdt), outs[n_out:]

        # aux comes from the primal computation: the same for every basis vector
        tangents, aux = vmap(push, in_axes=(0,) * len(basis), out_axes=(0, None),
                             axis_size=n)(*basis)
        per_out = [_fwd_blocks(b, in_avals) for b in tangents]
        jac_tree = _jac_tree(per_out, in_tree, out_tree)
        if has_aux:
            return outputs(jac_tree), outputs(tree_unflatten(aux_tree, aux))
        return outputs(jac_tree)
    return Transformed(jac, jacfwd, fun, dict(argnums=argnums, has_aux=has_aux,
                                              holomorphic=holomorphic))


def _jac_linearized(fun, argnums, has_aux, mode, who, allow_int=False, holomorphic=False):
    """Jacobian from one linearization: ``vmap`` of the transposed linear map over the
    output basis (``mode="rev"``), or with ``"auto"`` of the linear map over the input
    basis instead when that basis is no larger. ``allow_int``: integer input leaves are
    held fixed and get ``float0`` blocks (JAX's jacrev)."""
    @functools.wraps(fun)
    def jac(*args, **kwargs):
        dyn, f = _dyn_split(fun, args, kwargs, argnums)
        flat, in_tree = tree_flatten(dyn)
        flat = [as_array(x) for x in flat]
        ints = [k for k, x in enumerate(flat) if not is_inexact_dtype(P.dtype_of(x))]
        if not (allow_int and ints):
            _check_float_inputs(flat, who)
        all_flat = flat
        if ints and allow_int:
            flat = [x for k, x in enumerate(all_flat) if k not in ints]
            f_all = f

            def f(*floats):
                it = iter(floats)
                return f_all(tree_unflatten(in_tree, [x if k in ints else next(it)
                                                      for k, x in enumerate(all_flat)]))
            lin = Linearized(f, flat, tree_structure(tuple(flat)), has_aux)
        else:
            lin = Linearized(f, flat, PyTreeDef(tuple, None, (in_tree,)), has_aux)
        out_avals, in_avals = lin.out_avals, lin.in_avals
        n_in = sum(a.size for a in in_avals)
        n_out = sum(a.size for a in out_avals)
        in_dts, out_dts = [a.dtype for a in in_avals], [a.dtype for a in out_avals]
        if mode == "auto" and not holomorphic:
            # complex inputs need the reverse mode, complex outputs the forward mode
            cin, cout = (any(np.dtype(d).kind == "c" for d in ds) for ds in (in_dts, out_dts))
            fwd = (n_in <= n_out or cout) and not cin
        else:
            fwd = mode == "auto" and n_in <= n_out
        check_complex(who, holomorphic, in_dts, out_dts, real_in=fwd, real_out=not fwd)
        if fwd:
            jdt = _jac_dtype(in_avals)
            basis, _ = _std_basis(in_avals, jdt)
            cols = _map_basis(lambda *ts: _float_tangents(lin.forward(list(ts)), jdt),
                              basis, n_in)
            per_out = [_fwd_blocks(c, in_avals) for c in cols]
        else:
            basis, _ = _std_basis(out_avals, _jac_dtype(out_avals))

            def pull(*cts):
                return lin.backward([P.convert(c, a.dtype) for c, a in zip(cts, out_avals)])

            rows = _map_basis(pull, basis, n_out)
            per_out = _rev_blocks(rows, out_avals)
        if ints and allow_int:
            blocks = []
            for oa, row in zip(out_avals, per_out):
                it = iter(row)
                blocks.append([float0_zeros(oa.shape + P.shape_of(x)) if k in ints else next(it)
                               for k, x in enumerate(all_flat)])
            per_out = blocks
        jac_tree = _jac_tree(per_out, in_tree, lin.out_tree)
        if has_aux:
            return outputs(jac_tree), outputs(lin.aux())
        return outputs(jac_tree)
    return Transformed(jac, jacrev if mode == "rev" else jacobian, fun,
                       dict(argnums=argnums, has_aux=has_aux, holomorphic=holomorphic))


def jacrev(fun: Callable[_P, Any], argnums: _Argnums = 0,
           has_aux: bool = False, *, allow_int: bool = False,
           holomorphic: bool = False) -> Callable[_P, Any]:
    """Jacobian by reverse mode: ``vmap`` of the (reusable) ``vjp`` over the output basis.
    ``allow_int=True``: integer inputs get ``ad.dtypes.float0`` blocks, as in JAX.
    Complex inputs of a real-valued function give JAX's rows (``grad``'s convention);
    ``holomorphic=True`` gives ``df_i/dz_j`` of a holomorphic function (docs/complex.md).

    One linearization, then one batched backward pass: the number of equations does
    not grow with the output size. Results are shaped and nested as for :func:`jacfwd`.
    Cheapest when outputs are fewer than inputs.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jacrev(lambda x: anp.sin(x))(np.zeros(2))
    array([[1., 0.],
           [0., 1.]])
    >>> J = ad.jacrev(lambda p: {"s": anp.sum(p["w"] * p["b"])})({"w": np.ones(2), "b": 2.0})
    >>> J["s"]["w"], J["s"]["b"]
    (array([2., 2.]), np.float64(2.0))
    """
    return _jac_linearized(fun, argnums, has_aux, "rev", "jacrev", allow_int, holomorphic)


def jacobian(fun: Callable[_P, Any], argnums: _Argnums = 0,
             has_aux: bool = False, *, holomorphic: bool = False) -> Callable[_P, Any]:
    """Jacobian, by forward mode when the inputs are no larger than the outputs, else reverse.

    The function is linearized once (Python control flow on values works, as in
    ``grad``); then the linear map is batched over the smaller of the input and
    output bases.

    >>> import numpy as np, autodiff as ad
    >>> f = lambda x: np.array([1.0, 0.0]) * x[0] + np.array([0.0, 1.0]) * x[1] * x[2]
    >>> ad.jacobian(f)(np.array([1.0, 2.0, 3.0]))
    array([[1., 0., 0.],
           [0., 3., 2.]])
    """
    return _jac_linearized(fun, argnums, has_aux, "auto", "jacobian", holomorphic=holomorphic)


def hessian(fun: Callable[_P, Any], argnums: _Argnums = 0,
            has_aux: bool = False, *, holomorphic: bool = False) -> Callable[_P, Any]:
    """``jacfwd(jacrev(fun))``: forward-over-reverse, vectorized over both bases.

    Pytree inputs give nested blocks ``H[i][j]`` of shape ``out + in_i + in_j``.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.hessian(lambda x: anp.sum(x ** 2))(np.ones(2))
    array([[2., 0.],
           [0., 2.]])
    """
    h = jacfwd(jacrev(fun, argnums, has_aux, holomorphic=holomorphic), argnums, has_aux,
               holomorphic=holomorphic)
    return Transformed(h, hessian, fun, dict(argnums=argnums, has_aux=has_aux,
                                             holomorphic=holomorphic))


def hvp(fun: Callable[..., Any], x: Any, v: Any) -> Any:
    """Hessian-vector product ``H(x)·v`` by forward-over-reverse, without forming H.

    ``x`` and ``v`` have the same structure (arrays or pytrees); costs about two
    gradient evaluations.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.hvp(lambda x: anp.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    array([6., 0.])
    """
    return jvp(grad(fun), (x,), (v,))[1]
