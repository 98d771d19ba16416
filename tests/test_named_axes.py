"""Named vmap axes and the collectives of ``ad.lax`` (``docs/design.md``, "Named axes").

Every collective is checked against the same computation written with numpy over the whole
batch, concretely and under ``jit``; derivatives of the batched functions against central
differences; ``vmap`` of ``grad`` against JAX's convention (``psum`` transposes to ``psum``);
the programs that hold a collective (scan, cond, while bodies, jit, checkpoint) and the
errors a user meets.
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import core, lax
from autodiff.errors import ShapeError, UnsupportedError

RNG = np.random.default_rng(7)
N = 4


def _fd_jacobian(f, x, eps=1e-6):
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append(((f(x + e) - f(x - e)) / (2 * eps)).ravel())
    return np.stack(cols, axis=1)


def _check_everywhere(per_example, reference, x, **vmap_kw):
    """The named vmap of ``per_example`` equals ``reference(x)`` (numpy over the batch),
    eagerly and under jit; its Jacobian (both modes, and under jit) equals the central
    differences of ``reference``."""
    f = ad.vmap(per_example, axis_name="i", **vmap_kw)
    want = reference(x)
    np.testing.assert_allclose(f(x), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ad.jit(f)(x), want, rtol=1e-12, atol=1e-12)
    jac = _fd_jacobian(reference, x)
    for j in (ad.jacrev(f)(x), ad.jacfwd(f)(x), ad.jit(ad.jacrev(f))(x)):
        np.testing.assert_allclose(np.reshape(j, jac.shape), jac, rtol=1e-6, atol=1e-7)


def test_psum_pmean_against_numpy_with_derivatives():
    x = RNG.normal(size=(N, 3))
    _check_everywhere(lambda v: anp.sin(v) * lax.psum(v ** 2, "i"),
                      lambda x: np.sin(x) * np.sum(x ** 2, axis=0), x)
    _check_everywhere(lambda v: (v - lax.pmean(v, "i")) / lax.pmean(v * v, "i"),
                      lambda x: (x - x.mean(0)) / (x * x).mean(0), x)


def test_pmax_pmin_share_the_gradient_among_ties():
    x = RNG.normal(size=(N, 3))
    _check_everywhere(lambda v: v * lax.pmax(v, "i") + lax.pmin(v ** 3, "i"),
                      lambda x: x * x.max(0) + (x ** 3).min(0), x)
    tied = np.array([1.0, 3.0, 3.0, 2.0])
    g = ad.grad(lambda x: anp.sum(ad.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(x)))
    np.testing.assert_allclose(g(tied), [0.0, 2.0, 2.0, 0.0])    # N outputs, shared by 2
    g = ad.grad(lambda x: anp.sum(ad.vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(x)))
    np.testing.assert_allclose(g(np.array([1.0, 1.0, 5.0, 1.0])), [4 / 3, 4 / 3, 0, 4 / 3])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_all_gather_against_numpy(axis):
    x = RNG.normal(size=(N, 2, 3))
    _check_everywhere(lambda v: lax.all_gather(v, "i", axis=axis) * v[0, 0],
                      lambda x: np.stack([np.stack(list(x), axis=axis)] * N) *
                      x[:, 0, 0].reshape((N,) + (1,) * 3), x)


def test_all_gather_tiled_and_psum_scatter_are_each_others_transpose():
    x = RNG.normal(size=(N, 2, 3))
    _check_everywhere(lambda v: anp.tanh(lax.all_gather(v, "i", axis=1, tiled=True)),
                      lambda x: np.stack([np.tanh(np.concatenate(list(x), axis=1))] * N), x)
    y = RNG.normal(size=(N, 3, N))
    _check_everywhere(lambda v: lax.psum_scatter(v ** 2, "i", scatter_dimension=1),
                      lambda y: np.moveaxis((y ** 2).sum(0), 1, 0), y)
    z = RNG.normal(size=(N, 2 * N, 3))
    _check_everywhere(lambda v: lax.psum_scatter(anp.exp(v), "i", tiled=True),
                      lambda z: np.exp(z).sum(0).reshape(N, 2, 3), z)
    # the linear maps: <all_gather(u), w> = <u, psum_scatter(w)> summed over the batch
    u, w = RNG.normal(size=(N, 3)), RNG.normal(size=(N, N, 3))
    gathered = ad.vmap(lambda a: lax.all_gather(a, "i"), axis_name="i")(u)
    scattered = ad.vmap(lambda b: lax.psum_scatter(b, "i"), axis_name="i")(w)
    np.testing.assert_allclose(np.sum(gathered * w), np.sum(u * scattered))


def test_ppermute_pshuffle_pbroadcast():
    x = RNG.normal(size=(N, 2))
    ring = [(k, (k + 1) % N) for k in range(N)]
    _check_everywhere(lambda v: anp.sin(lax.ppermute(v, "i", ring)) * v,
                      lambda x: np.sin(np.roll(x, 1, axis=0)) * x, x)
    partial = [(0, 2), (3, 1)]                    # elements 0 and 3 receive nothing: zeros

    def ref(x):
        out = np.zeros_like(x)
        out[2], out[1] = x[0], x[3]
        return out * x + x
    _check_everywhere(lambda v: lax.ppermute(v, "i", partial) * v + v, ref, x)
    perm = [2, 0, 3, 1]
    _check_everywhere(lambda v: lax.pshuffle(v ** 3, "i", perm), lambda x: x[perm] ** 3, x)
    _check_everywhere(lambda v: v * lax.pbroadcast(v, "i", 2), lambda x: x * x[2], x)


@pytest.mark.parametrize("tiled", [False, True])
def test_all_to_all_and_pswapaxes(tiled):
    k = 2 if tiled else 1
    x = RNG.normal(size=(N, 3, N * k, 2))

    def ref(x):
        out = []
        for b in range(N):
            blocks = [x[j][:, b * k:(b + 1) * k] for j in range(N)]
            out.append(np.concatenate(blocks, axis=2) if tiled else
                       np.stack([c[:, 0] for c in blocks], axis=2))
        return np.stack(out) ** 2
    _check_everywhere(lambda v: lax.all_to_all(v, "i", 1, 2, tiled=tiled) ** 2, ref, x)
    y = RNG.normal(size=(N, N, 3))
    _check_everywhere(lambda v: lax.pswapaxes(v, "i", 0), lambda y: np.swapaxes(y, 0, 1), y)


def test_axis_index_and_axis_size():
    x = np.ones(N)
    f = ad.vmap(lambda v: v * lax.axis_index("i") + lax.axis_size("i"), axis_name="i")
    np.testing.assert_array_equal(f(x), np.arange(N) + N)
    np.testing.assert_array_equal(ad.jit(f)(x), np.arange(N) + N)
    assert ad.vmap(lambda v: lax.axis_index("i"), axis_name="i")(x).dtype == np.int32


def test_nested_names_and_tuples_of_names():
    x = RNG.normal(size=(3, N))
    inner = ad.vmap(lambda v: (lax.psum(v, "rows"), lax.psum(v, ("rows", "cols")),
                               lax.axis_index(("rows", "cols")),
                               lax.all_gather(v, ("rows", "cols"))), axis_name="cols")
    by_rows, total, index, gathered = ad.vmap(inner, axis_name="rows")(x)
    np.testing.assert_allclose(by_rows, np.broadcast_to(x.sum(0), x.shape))
    np.testing.assert_allclose(total, np.full(x.shape, x.sum()))
    np.testing.assert_array_equal(index, np.arange(x.size).reshape(x.shape))
    np.testing.assert_allclose(gathered[1, 2], x.ravel())
    # a value that does not vary along the inner axis: summed N times at once
    f = ad.vmap(lambda r: ad.vmap(lambda v: lax.psum(anp.sum(r), "c") + 0 * v,
                                  axis_name="c")(r), axis_name="r")
    np.testing.assert_allclose(f(x), np.broadcast_to(N * x.sum(1, keepdims=True), x.shape))


def test_vmap_of_grad_follows_jax_psum_transpose():
    # per-example grad of psum(x**2): the cotangent of every element's output is summed
    x = RNG.normal(size=N)
    g = ad.vmap(ad.grad(lambda v: lax.psum(v ** 2, "i")), axis_name="i")(x)
    np.testing.assert_allclose(g, 2 * N * x)
    # and pmean's: the mean's transpose is a mean, so the per-example grad is 2 x
    g = ad.vmap(ad.grad(lambda v: lax.pmean(v ** 2, "i")), axis_name="i")(x)
    np.testing.assert_allclose(g, 2 * x)


def test_unmapped_arguments_and_out_axes_none():
    x = RNG.normal(size=N)
    f = ad.vmap(lambda v, w: lax.psum(w * v, "i"), in_axes=(0, None), axis_name="i",
                out_axes=None)
    np.testing.assert_allclose(f(x, 2.5), 2.5 * x.sum())
    g = ad.grad(lambda w: f(x, w))
    np.testing.assert_allclose(g(2.5), x.sum())
    # psum of a constant, of an argument that is not mapped, of a boolean (as int32)
    h = ad.vmap(lambda v, w: (lax.psum(2.0, "i"), lax.psum(w, "i"), lax.psum(v > 0, "i")),
                in_axes=(0, None), axis_name="i")
    two, ws, positive = h(x, 3.0)
    np.testing.assert_allclose(two, np.full(N, 2.0 * N))
    np.testing.assert_allclose(ws, np.full(N, 3.0 * N))
    assert positive.dtype == np.int32 and (positive == np.sum(x > 0)).all()


def test_collectives_inside_loops_and_branches():
    # the loop's operands are not batched, yet its body sums across the batch
    f = ad.vmap(lambda v: lax.scan(lambda c, _: (lax.psum(c, "i"), None), 1.0, None,
                                   length=3)[0] + v, axis_name="i")
    np.testing.assert_allclose(f(np.zeros(N)), np.full(N, float(N) ** 3))
    f = ad.vmap(lambda v: lax.while_loop(lambda c: c < 100, lambda c: lax.psum(c, "i"), 1.0)
                + v, axis_name="i")
    np.testing.assert_allclose(f(np.zeros(N)), np.full(N, 256.0))
    f = ad.vmap(lambda v: lax.cond(v > 0, lambda c: lax.psum(c, "i"), lambda c: -c, v),
                axis_name="i")
    x = np.array([1.0, -2.0, 3.0, -4.0])
    np.testing.assert_allclose(f(x), np.where(x > 0, x.sum(), -x))

    def step(c, v):
        c = c + lax.pmean(v * c, "i")
        return c, c
    x = RNG.normal(size=(N, 5))
    run = ad.vmap(lambda xs: lax.scan(step, 1.0, xs)[1], axis_name="i")

    def ref(x):
        c, out = 1.0, []
        for t in range(x.shape[1]):
            c = c + np.mean(x[:, t] * c)
            out.append(c)
        return np.broadcast_to(np.array(out), x.shape)
    _check_everywhere(lambda xs: lax.scan(step, 1.0, xs)[1], ref, x)
    np.testing.assert_allclose(ad.vmap(ad.checkpoint(lambda xs: lax.scan(step, 1.0, xs)[1]),
                                       axis_name="i")(x), run(x))


def test_higher_order_and_jet():
    x = np.array([0.5, -1.0, 2.0])

    def total(x):
        return anp.sum(ad.vmap(lambda v: anp.sum(lax.all_gather(v, "i") ** 3) * v,
                               axis_name="i")(x))
    s1 = x.sum()
    want = 3 * x[:, None] ** 2 + 3 * x[None, :] ** 2 + np.diag(6 * x * s1)
    np.testing.assert_allclose(ad.hessian(total)(x), want)
    from autodiff.experimental.jet import jet
    f = ad.vmap(lambda v: anp.sin(v) * lax.psum(v * v, "i"), axis_name="i")
    _, (d1, d2) = jet(f, (x,), ((np.ones(3), np.zeros(3)),))
    s, c, q = np.sin(x), np.cos(x), np.sum(x * x)
    p1 = 2 * np.sum(x)
    np.testing.assert_allclose(d1, c * q + s * p1)
    np.testing.assert_allclose(d2, -s * q + 2 * c * p1 + s * 2 * len(x))


def test_jit_inside_vmap_is_kept_per_axis_size():
    h = ad.jit(lambda v: v * lax.axis_size("i") + lax.all_gather(v, "i")[0])
    for n in (2, 3):
        x = np.arange(1.0, n + 1)
        np.testing.assert_allclose(ad.vmap(h, axis_name="i")(x), x * n + 1.0)
    with pytest.raises(NameError, match="unbound axis name 'i'"):
        ad.vmap(h, axis_name="k")(np.ones(2))


def test_errors_name_the_line_and_the_fix():
    with pytest.raises(NameError, match=r"unbound axis name 'k' \(at .*test_named_axes.py"):
        ad.vmap(lambda v: lax.psum(v, "k"), axis_name="i")(np.ones(3))
    with pytest.raises(NameError, match=r"axis names in scope here are \[\]"):
        lax.pmean(np.ones(3), "i")
    with pytest.raises(UnsupportedError, match="axis_index_groups"):
        ad.vmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1]]), axis_name="i")(
            np.ones(2))
    with pytest.raises(ValueError, match="repeats a source or a destination"):
        ad.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]), axis_name="i")(np.ones(2))
    with pytest.raises(ValueError, match="outside the axis 'i' of size 2"):
        ad.vmap(lambda v: lax.ppermute(v, "i", [(0, 2)]), axis_name="i")(np.ones(2))
    with pytest.raises(ShapeError, match="must equal the axis size 3"):
        ad.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(np.ones((3, 2)))


def test_collectives_stay_out_of_the_registry_and_never_run_alone():
    from autodiff.primitives import collectives as C
    names = {"psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute"}
    assert names <= set(core.collective_primitives) and not names & set(core.primitives)
    with pytest.raises(UnsupportedError, match="outside the vmap that names it"):
        C.psum_p.bind(np.ones(2), axes=("i",))
    # a jaxpr that holds one is resolved by the vmap: what it hands on lowers on the CPU
    f = ad.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")
    assert "psum" not in str(ad.make_jaxpr(f)(np.ones(3)))


def test_pmap_runs_data_parallel_code_on_one_machine():
    # JAX's data-parallel step: per-shard gradients averaged with pmean
    rng = np.random.default_rng(3)
    xs, ys = rng.normal(size=(N, 5, 3)), rng.normal(size=(N, 5))
    w = rng.normal(size=3)

    def step(w, x, y):
        g = ad.grad(lambda w: anp.mean((x @ w - y) ** 2))(w)
        return w - 0.1 * lax.pmean(g, "devices")
    out = ad.pmap(step, "devices", in_axes=(None, 0, 0))(w, xs, ys)
    grads = [2 * x.T @ (x @ w - y) / len(y) for x, y in zip(xs, ys)]
    np.testing.assert_allclose(out, np.broadcast_to(w - 0.1 * np.mean(grads, 0), (N, 3)))
    # static arguments are broadcast unmapped and select their own program
    f = ad.pmap(lambda x, n: x * n + lax.axis_index("i"), axis_name="i",
                static_broadcasted_argnums=1)
    np.testing.assert_allclose(f(np.ones(3), 2), [2.0, 3.0, 4.0])
    np.testing.assert_allclose(f(np.ones(3), 5), [5.0, 6.0, 7.0])
