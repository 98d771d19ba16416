"""The worked examples of docs/adding_a_primitive.md, declared under names of their own:

* ``example_log2``: the declaration that added the library's ``log2`` (a primitive whose
  impl is a numpy function): one ``_unary`` line and its jvp, and no backend names it;
  each backend derives its text from the numpy function;
* ``example_softplus``: ``softplus(x) = log(1 + eˣ)``, whose impl is not a numpy function,
  so each backend it runs on has one record with its text (CPU and CUDA).

``tests/conftest.py`` imports this module, so the example belongs to the registry for the
whole test session, as a library primitive would, and stays there (nothing removes it at
teardown). Its row in ``tests/op_records/elementwise.py`` gives the registry-wide suites
its records and flags: test_primitives, test_vmap, test_jit_records and
test_derivative_loss run its records; test_jet, test_special_values, test_jit_lowering
and test_cuda_backend take it through its flags. ``tests/test_adding_a_primitive.py``
checks what the declarations give directly.

It is imported before any backend is: a lowering record is registered when its module
loads, as the library's own are (``backends/numba_cpu.py`` reads the registered records
once, at its import).
"""
import numpy as np

from autodiff import primitives as P
from autodiff.backends.numba_cuda_expressions import register_expression
from autodiff.backends.plan import register_elementwise
from autodiff.primitives.elementwise import _unary

NAME = "example_softplus"
LOG2 = "example_log2"

# --- the one-line kind: the declaration of log2 (autodiff/primitives/elementwise.py) -------
log2_p = _unary(LOG2, np.log2, cost=8, code_size=14)
P.defjvp(log2_p, lambda g, ans, x: P.div(g, P.mul(x, np.log(2.0).astype(P.dtype_of(x)))))
# ---------------------------------------------------------------------------------------------


def softplus_impl(x):
    x = np.asarray(x)
    return np.logaddexp(x, np.zeros((), x.dtype)).astype(x.dtype)


# --- the two declarations of the worked example --------------------------------------------
softplus_p = _unary(NAME, softplus_impl)
P.defjvp(softplus_p, lambda g, ans, x: P.mul(g, P.logistic_p.bind(x)))     # σ(x)

register_elementwise(
    NAME,
    lambda ctx, a: f"(max({a[0]}, {ctx.lit(0, ctx.out_dtype)}) + "
                   f"np.log1p(np.exp(-abs({a[0]}))))", cost=16)
register_expression(
    NAME,
    lambda ctx, a: f"(max({a[0]}, {ctx.lit(0, ctx.out_dtype)}) + "
                   f"«M».log1p(«M».exp(-abs({a[0]}))))")
# ---------------------------------------------------------------------------------------------


def softplus(x):
    return softplus_p.bind(x)


def log2(x):
    return log2_p.bind(x)
