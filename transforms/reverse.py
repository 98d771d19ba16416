"""Reverse mode, assembled once: linearize a jaxpr, then transpose its linear part.

Every reverse-mode user (``ad.linearize``/``vjp``/``grad``, the tape's ``backward``,
checkpointing's residual inspection) builds its program here, from the three passes:

1. :func:`~autodiff.transforms.jvp.jvp_jaxpr`: ``(inputs, tangents) -> (outs, out tangents)``;
2. :func:`~autodiff.transforms.partial_eval.partial_eval_jaxpr`: the primal part
   ``known: inputs -> (outs, residuals)`` and the linear part
   ``unknown: (residuals, tangents) -> out tangents``;
3. :func:`~autodiff.transforms.transpose.backward_pass` /
   :func:`~autodiff.transforms.transpose.transpose_jaxpr`: cotangents of the tangents.

Control-flow and remat rules transpose their own linear bodies with ``backward_pass``
(that is their transpose rule, not a second pipeline).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.transforms.reverse import linearize_jaxpr, backward
>>> cj = ad.make_jaxpr(lambda x: anp.sin(x) * x)(np.ones(2))
>>> lin = linearize_jaxpr(cj, [True])
>>> outs_res = ad.core.eval_jaxpr(lin.known.jaxpr, lin.known.consts, np.ones(2))
>>> outs, residuals = outs_res[:lin.n_out], outs_res[lin.n_out:]
>>> ct, = backward(lin, residuals, [np.ones(2)])
>>> np.allclose(ct, np.cos(1.0) + np.sin(1.0))
True
"""
from ..core import ClosedJaxpr, Jaxpr
from .jvp import jvp_jaxpr
from .partial_eval import dce_closed, partial_eval_jaxpr
from .transpose import backward_pass, transpose_jaxpr

__all__ = ["Linearized", "linearize_jaxpr", "backward", "vjp_jaxpr"]


class Linearized:
    """A jaxpr split for reverse mode.

    ``known``: ``inputs... -> (outs..., residuals...)``; ``unknown``: ``(residuals...,
    tangents...) -> out tangents``, linear in the tangents; ``n_out`` outputs, ``n_res``
    residuals, ``n_t`` tangent inputs (one per nonzero input).
    """

    __slots__ = ("known", "unknown", "n_out", "n_res", "n_t")

    def __init__(self, known, unknown, n_out, n_res, n_t):
        self.known, self.unknown = known, unknown
        self.n_out, self.n_res, self.n_t = n_out, n_res, n_t

    @property
    def linear(self):
        """``linear`` flags of ``unknown``'s inputs (residuals, then tangents)."""
        return [False] * self.n_res + [True] * self.n_t


def linearize_jaxpr(closed, nonzeros, num_tangent_outs=None):
    """Split ``closed`` for reverse mode: jvp, then partial evaluation (see the module).

    ``nonzeros[i]`` marks the inputs that get a tangent. Only the first
    ``num_tangent_outs`` outputs (all when ``None``) get an output tangent: the rest (aux
    outputs) are primal only.
    """
    n_out = len(closed.jaxpr.outvars)
    jc, _ = jvp_jaxpr(closed, list(nonzeros), instantiate=True)
    if num_tangent_outs is not None and num_tangent_outs < n_out:
        jj = jc.jaxpr
        keep = list(jj.outvars[:n_out]) + list(jj.outvars[n_out:n_out + num_tangent_outs])
        jc = ClosedJaxpr(Jaxpr(jj.constvars, jj.invars, keep, jj.eqns), jc.consts)
    n_t = sum(bool(nz) for nz in nonzeros)
    known, unknown, n_res = partial_eval_jaxpr(
        jc, [False] * len(nonzeros) + [True] * n_t, n_out)
    return Linearized(known, unknown, n_out, n_res, n_t)


def backward(lin, residuals, cts):
    """Cotangents of the tangent inputs (``Zero`` where none flows), from the residuals
    ``known`` returned and one cotangent per output tangent; evaluated with ``bind`` (values
    compute, tracers record)."""
    cts_in = backward_pass(lin.unknown.jaxpr, lin.unknown.consts, lin.linear,
                           list(residuals) + [None] * lin.n_t, list(cts))
    return cts_in[lin.n_res:]


def vjp_jaxpr(lin):
    """``(residuals..., out cotangents...) -> tangent-input cotangents`` as a ClosedJaxpr
    (dead code removed)."""
    return dce_closed(transpose_jaxpr(lin.unknown, lin.linear))
