"""``where=`` in reductions: numpy's numbers in every mode (eager, traced, jit, vmap), the
right gradients, and numpy's error where the mask cannot be honoured."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp

X = np.array([[1.0, -2.0, 3.0, 0.5],
              [4.0, 5.0, -6.0, 2.5],
              [0.25, 7.0, 1.5, -1.0]])
M = np.array([[True, False, True, True],
              [False, False, True, True],
              [True, True, False, True]])
XN = X.copy()
XN[0, 2] = np.nan
XN[2, 1] = np.nan

# (name, call, needs 'initial') — each call(mod, x, mask, axis) with mod numpy or anp
REDUCTIONS = {
    "sum": lambda m, x, w, ax: m.sum(x, axis=ax, where=w),
    "sum_initial": lambda m, x, w, ax: m.sum(x, axis=ax, where=w, initial=10.0),
    "prod": lambda m, x, w, ax: m.prod(x, axis=ax, where=w),
    "mean": lambda m, x, w, ax: m.mean(x, axis=ax, where=w),
    "var": lambda m, x, w, ax: m.var(x, axis=ax, where=w),
    "var_ddof": lambda m, x, w, ax: m.var(x, axis=ax, where=w, ddof=1),
    "std": lambda m, x, w, ax: m.std(x, axis=ax, where=w),
    "max": lambda m, x, w, ax: m.max(x, axis=ax, where=w, initial=0.0),
    "min": lambda m, x, w, ax: m.min(x, axis=ax, where=w, initial=0.0),
    "amax_big_initial": lambda m, x, w, ax: m.amax(x, axis=ax, where=w, initial=100.0),
    "all": lambda m, x, w, ax: m.all(x > 0, axis=ax, where=w),
    "any": lambda m, x, w, ax: m.any(x > 4, axis=ax, where=w),
    "nansum": lambda m, x, w, ax: m.nansum(m.where(np.isnan(XN), np.nan, x), axis=ax, where=w),
    "nanmean": lambda m, x, w, ax: m.nanmean(x + XN * 0, axis=ax, where=w),
    "nanmax": lambda m, x, w, ax: m.nanmax(x + XN * 0, axis=ax, where=w, initial=-50.0),
    "nanmin": lambda m, x, w, ax: m.nanmin(x + XN * 0, axis=ax, where=w, initial=50.0),
}
AXES = [None, 0, 1, (0, 1)]
CASES = [(n, ax) for n in REDUCTIONS for ax in AXES]


def _ref(name, ax):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(REDUCTIONS[name](np, X, M, ax))


@pytest.mark.parametrize("name,ax", CASES)
def test_eager_is_numpy(name, ax):
    with np.errstate(invalid="ignore", divide="ignore"):
        out = REDUCTIONS[name](anp, X, M, ax)
    np.testing.assert_allclose(out, _ref(name, ax), rtol=1e-14)


@pytest.mark.parametrize("name,ax", CASES)
def test_traced_is_numpy(name, ax):
    # the interpreter runs the traced IR: what jit and grad see, without compiling
    f = ad.jit(lambda x: REDUCTIONS[name](anp, x, M, ax), backend="interpret")
    np.testing.assert_allclose(f(X), _ref(name, ax), rtol=1e-13)


@pytest.mark.parametrize("name,ax", CASES)
def test_traced_mask_is_numpy(name, ax):
    f = ad.jit(lambda x, w: REDUCTIONS[name](anp, x, w, ax), backend="interpret")
    np.testing.assert_allclose(f(X, M), _ref(name, ax), rtol=1e-13)


@pytest.fixture(scope="module")
def jitted_all():
    """One compiled kernel computing every reduction (compiles once for the module)."""
    names = sorted(REDUCTIONS)

    def all_reductions(x, w):
        return tuple(REDUCTIONS[n](anp, x, w, ax) for n in names for ax in (None, 1))
    return names, ad.jit(all_reductions)


def test_jit_is_numpy(jitted_all):
    names, f = jitted_all
    outs = iter(f(X, M))
    for n in names:
        for ax in (None, 1):
            np.testing.assert_allclose(next(outs), _ref(n, ax), rtol=1e-13, err_msg=f"{n} axis={ax}")


def test_issue_examples():
    x, m = np.array([1.0, 2.0, 3.0]), np.array([True, False, True])
    assert ad.jit(lambda x: anp.sum(x, where=m))(x) == 4.0
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sum(x, where=m))(x), [1.0, 0.0, 1.0])
    assert ad.jit(lambda x: anp.max(x, where=m, initial=0))(np.array([3.0, 5.0, 1.0])) == 3.0
    assert ad.jit(lambda x: anp.mean(x, where=m), backend="interpret")(x) == 2.0


def test_vmap_over_masks():
    masks = np.array([[True, False, True, True], [False, True, True, False]])
    out = ad.vmap(lambda w: anp.mean(X[0], where=w))(masks)
    np.testing.assert_allclose(out, [np.mean(X[0], where=w) for w in masks], rtol=1e-14)


# ---------------------------------------------------------------- gradients
def test_grad_closed_forms():
    x = X[1]
    w = M[1] | np.array([True, False, False, False])       # [T, F, T, T]
    n = w.sum()
    mu = x[w].mean()
    np.testing.assert_allclose(ad.grad(lambda x: anp.mean(x, where=w))(x), w / n)
    np.testing.assert_allclose(ad.grad(lambda x: anp.var(x, where=w))(x),
                               2 * (x - mu) * w / n, rtol=1e-13)
    np.testing.assert_allclose(ad.grad(lambda x: anp.prod(x, where=w))(x),
                               np.where(w, np.prod(x[w]) / x, 0.0), rtol=1e-13)
    # the masked maximum is 4.0 (index 0), not the unmasked 5.0
    np.testing.assert_array_equal(ad.grad(lambda x: anp.max(x, where=w, initial=-10))(x),
                                  [1.0, 0.0, 0.0, 0.0])
    # initial wins: no gradient reaches x
    np.testing.assert_array_equal(ad.grad(lambda x: anp.max(x, where=w, initial=10))(x), np.zeros(4))


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "max", "min", "nansum"])
def test_grads_match_finite_differences(name):
    f = lambda x: REDUCTIONS[name](anp, x, M, 1)
    ad.check_grads(f, (X,), order=2, modes=("fwd", "rev"))


# ---------------------------------------------------------------- what cannot be honoured
@pytest.mark.parametrize("fn", [anp.max, anp.min, anp.amax, anp.nanmax])
def test_max_without_initial_raises_like_numpy(fn):
    with pytest.raises(ValueError, match="initial"):
        np.__dict__[fn.__name__ if fn.__name__ != "amax" else "max"](X, where=M)
    with pytest.raises(ValueError, match="initial"):
        ad.jit(lambda x: fn(x, where=M), backend="interpret")(X)


def test_full_true_mask_is_plain_reduction():
    f = ad.make_jaxpr(lambda x: anp.sum(x, where=True))
    assert "select" not in str(f(X))


@pytest.mark.parametrize("fn", [anp.sum, anp.prod, anp.max, anp.min, anp.all, anp.any, anp.mean,
                                anp.var, anp.std, anp.nansum, anp.nanmean, anp.nanmax, anp.nanmin])
def test_out_argument_raises_when_traced_and_works_eagerly(fn):
    buf = np.empty(())
    with pytest.raises(TypeError, match="out="):
        ad.jit(lambda x: fn(x, out=buf), backend="interpret")(X)
    name = fn.__name__
    if name in ("all", "any"):
        buf = np.empty((), bool)
    fn(X, out=buf)                                       # numpy's own, eagerly
    np.testing.assert_allclose(buf, getattr(np, name)(X))
