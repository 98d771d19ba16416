"""docs/adding_a_primitive.md, run: new elementwise primitives from their declarations.

``example_log2`` is the declaration that added the library's ``log2`` (its impl a numpy
function): one ``_unary`` line and its jvp, no backend record, and every transform and
backend works from them (the tests below, and its row in ``tests/op_records/``: samples,
derivatives to second order, batching, jit records and lowering, jet, special values and
the CUDA simulator).

The worked example there adds ``softplus`` to ``autodiff/primitives/elementwise.py`` (its
impl, abstract value and batching from ``_unary``, its derivative from ``defjvp``) and one
lowering record to the Numba-CPU backend. ``tests/example_primitive.py`` makes the same
two declarations under another name, ``example_softplus``; ``tests/conftest.py`` imports
it, so the example is a registered primitive for the whole session and its row in
``tests/op_records/`` puts it through every registry-wide suite (samples, derivatives,
batching, jit records and lowering, jet, special values, CUDA), as a library primitive.
Nothing is removed at teardown. This file checks that every transform then works: grad
and jvp against the closed form, second derivatives against finite differences, vmap
against a loop, jit compiled and equal to numpy, and jet (Taylor mode, from the rule it
derives from the jvp) against nested jvps.
"""
import numpy as np
import pytest

import autodiff as ad
from autodiff import primitives as P
from autodiff.core import primitives
from autodiff.backends import numba_cpu
from autodiff.backends.plan import LOWERINGS
from autodiff.transforms.jet import jet_rules, rule_for

from example_primitive import LOG2, NAME, log2, softplus_impl as _softplus_impl
from jit_util import assert_compiled
from op_records import ROWS, Elementwise, Jet, Special


@pytest.fixture
def example_softplus_p():
    return primitives[NAME]


def softplus(x):
    return primitives[NAME].bind(x)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


X = np.array([-3.0, -0.5, 0.0, 0.7, 4.0])


def test_declarations_give_every_rule(example_softplus_p):
    p = example_softplus_p
    assert callable(p.impl) and callable(p.abstract_eval) and callable(p.jvp)
    assert callable(p.batch) and p.vectorized
    assert LOWERINGS[NAME].kind == "elementwise"
    assert p not in jet_rules and rule_for(p) is not None      # derived, not hand-written


def test_the_example_is_registered_and_has_a_row_in_every_suite():
    # registered before the cpu backend loaded: lowered like the library's own primitives
    assert NAME in numba_cpu.LOWERED_PRIMITIVES
    row = ROWS[NAME]
    assert len(row.records) == 2 and isinstance(row.jet_case(), Jet)
    assert isinstance(row.special, Special) and isinstance(row.jit, Elementwise)
    assert row.cuda                     # a case, or the reason there is none


def test_grad_and_jvp_match_the_closed_form():
    g = ad.grad(lambda x: softplus(x).sum())(X)
    np.testing.assert_allclose(g, _sigmoid(X), rtol=1e-14)
    _, t = ad.jvp(softplus, (X,), (np.full_like(X, 2.0),))
    np.testing.assert_allclose(t, 2.0 * _sigmoid(X), rtol=1e-14)


def test_second_order_against_finite_differences():
    ad.check_grads(lambda x: softplus(x) * x, (X,), order=2, modes=("fwd", "rev"))


def test_vmap_matches_a_loop():
    xs = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    out = ad.vmap(softplus, in_axes=1)(xs)
    np.testing.assert_allclose(out, np.stack([_softplus_impl(xs[:, j]) for j in range(4)]),
                               rtol=1e-15)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-14), (np.float32, 1e-6)])
def test_jit_compiles_the_record(dtype, tol):
    f = ad.jit(lambda x: softplus(x) * 2.0)
    x = X.astype(dtype)
    out = assert_compiled(f, x)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, 2.0 * _softplus_impl(x), rtol=tol)
    assert "log1p" in f.lower(x).as_text()


def test_jet_from_the_derived_rule_matches_nested_jvps():
    x0, v = 0.3, 1.0
    _, (c1, c2, c3) = ad.jet(softplus, (x0,), ((v, 0.0, 0.0),))

    def d(f):
        return lambda x: ad.jvp(f, (x,), (1.0,))[1]
    np.testing.assert_allclose([c1, c2, c3], [d(softplus)(x0), d(d(softplus))(x0),
                                              d(d(d(softplus)))(x0)], rtol=1e-12)


def test_derived_rule_agrees_with_a_hand_written_one(monkeypatch):
    # sin has a hand-written rule; without it, the derived rule gives the same series
    want = ad.jet(P.sin, (0.4,), ((1.0, 0.5, -0.25, 0.1),))
    monkeypatch.delitem(jet_rules, P.sin_p)
    got = ad.jet(P.sin, (0.4,), ((1.0, 0.5, -0.25, 0.1),))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-15)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-13)


# ---------------------------------------------------------------------------------------
# the one-line kind: log2's declaration, no backend record
# ---------------------------------------------------------------------------------------

REPO = __import__("pathlib").Path(__file__).resolve().parent.parent
Y = np.array([0.3, 0.5, 1.0, 2.0, 7.5])


def test_one_line_primitive_is_named_by_no_backend():
    p = primitives[LOG2]
    assert p.lowering.numpy_name == "log2" and p.lowering.kind == "elementwise"
    assert LOWERINGS[LOG2].expr is None                    # derived from the facts
    for path in list((REPO / "backends").glob("*.py")) + list((REPO / "autodiff").rglob("*.py")):
        assert LOG2 not in path.read_text(), path
    assert LOG2 in numba_cpu.LOWERED_PRIMITIVES


def test_one_line_primitive_derivatives():
    g = ad.grad(lambda x: log2(x).sum())(Y)
    np.testing.assert_allclose(g, 1.0 / (Y * np.log(2.0)), rtol=1e-14)
    _, t = ad.jvp(log2, (Y,), (np.full_like(Y, 3.0),))
    np.testing.assert_allclose(t, 3.0 / (Y * np.log(2.0)), rtol=1e-14)
    ad.check_grads(lambda x: log2(x) * x, (Y,), order=2, modes=("fwd", "rev"))
    h = ad.hessian(lambda x: log2(x).sum())(Y)             # -1/(x² ln 2) on the diagonal
    np.testing.assert_allclose(np.diag(h), -1.0 / (Y ** 2 * np.log(2.0)), rtol=1e-13)


def test_one_line_primitive_vmap_and_jet():
    ys = np.linspace(0.5, 3.0, 12).reshape(3, 4)
    np.testing.assert_array_equal(ad.vmap(log2, in_axes=1)(ys), np.log2(ys).T)
    _, (c1, c2, c3) = ad.jet(log2, (1.5,), ((1.0, 0.0, 0.0),))
    k = 1.0 / np.log(2.0)                                  # d^n log2 = (-1)^(n-1) (n-1)! / (x^n ln 2)
    np.testing.assert_allclose([c1, c2, c3], [k / 1.5, -k / 1.5 ** 2, 2 * k / 1.5 ** 3],
                               rtol=1e-13)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 0.0), (np.float32, 2e-7)])
def test_one_line_primitive_compiles_from_the_numpy_name(dtype, tol):
    f = ad.jit(lambda x: log2(x) * 2.0)
    x = Y.astype(dtype)
    out = assert_compiled(f, x)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, 2.0 * np.log2(x), rtol=tol)
    assert "log2" in f.lower(x).as_text()


def test_one_line_primitive_has_a_row_in_every_suite():
    row = ROWS[LOG2]
    assert len(row.records) == 2 and isinstance(row.jet_case(), Jet)
    assert isinstance(row.special, Special) and row.special.ref is np.log2
    assert isinstance(row.jit, Elementwise) and isinstance(row.cuda, Elementwise)
    assert isinstance(ROWS[NAME].cuda, Elementwise)       # softplus's CUDA record is tested
