"""The complex-number examples (issue 16) run at a small size, pass their own checks and
write their figures (matplotlib's Agg backend: no window). Each example asserts its own
accuracy (gradients against central differences, the soliton, eigvalsh); these tests
check the returned numbers again against closed forms."""
import pathlib
import runpy

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
PNG = b"\x89PNG\r\n\x1a\n"


def _example(name):
    return runpy.run_path(str(EXAMPLES / f"{name}.py"))


@pytest.fixture(scope="module")
def nls():
    return _example("nls_split_step")


@pytest.fixture(scope="module")
def spin():
    return _example("spin_chain_ground_state")


def test_nls_example_runs_and_plots(nls, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    figure = tmp_path / "nls.png"
    r = nls["main"](points=128, steps=50, iterations=8, figure=str(figure), use_jit=False)
    assert figure.read_bytes()[:8] == PNG and figure.stat().st_size > 5000
    assert str(figure) in capsys.readouterr().out
    assert r["soliton_error"] < (2.0 / 50) ** 2
    assert abs(r["directional"] - r["fd"]) < 1e-6 * abs(r["fd"])
    assert np.all(np.diff(r["losses"]) < 0) and r["losses"][-1] < 0.1 * r["losses"][0]


def test_nls_soliton_is_second_order_in_dt(nls):
    # Strang splitting: halving dt divides the soliton's error by 4 (the grid's part is
    # negligible at 128 points on [-20, 20), not at 64); values from the example's own solver
    e = [nls["soliton_error"](128, 40.0, 1.0, n, nls["split_step"]) for n in (10, 20)]
    assert 3.8 < e[0] / e[1] < 4.2, e


def test_nls_step_conserves_mass(nls):
    # both sub-flows conserve ∫|u|² exactly (a unitary multiplier in Fourier space, a
    # phase in real space): a check of the solver that does not use the soliton
    x, k = nls["grid"](64, 40.0)
    u0 = (1.2 / np.cosh(x)) * np.exp(0.3j * x)
    u = np.asarray(nls["split_step"](u0, k, 0.05, 20))
    np.testing.assert_allclose(np.sum(np.abs(u) ** 2), np.sum(np.abs(u0) ** 2), rtol=1e-12)
    assert np.max(np.abs(u - u0)) > 1e-2                # and it did move


def test_spin_chain_example_reaches_the_exact_ground_energy(spin, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    figure = tmp_path / "spin.png"
    e, e0 = spin["main"](sites=6, steps=120, figure=str(figure), use_jit=False)
    assert figure.read_bytes()[:8] == PNG and figure.stat().st_size > 5000
    assert str(figure) in capsys.readouterr().out
    assert 0 <= e - e0 < 1e-8


def test_spin_chain_gradient_is_jax_convention(spin):
    # grad of the Rayleigh quotient is conj(dE/dRe + i dE/dIm) = 2 conj((H - E) psi) / |psi|²
    H, _ = spin["hamiltonian"](4)
    rng = np.random.default_rng(3)
    psi = rng.standard_normal(16) + 1j * rng.standard_normal(16)
    g = np.asarray(spin["check_gradient"](psi, H))
    n2 = np.vdot(psi, psi).real
    E = np.vdot(psi, H @ psi).real / n2
    np.testing.assert_allclose(g, 2 * np.conj(H @ psi - E * psi) / n2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(H, H.conj().T)             # Hermitian
    assert np.abs(H.imag).max() > 0.5                     # and complex (the DM term)


@pytest.mark.slow
def test_examples_compiled(nls, spin):
    # the examples' point is jit: their jitted steps compile and give the interpreter's
    # numbers (Numba compile of the NLS gradient's fori_loop: several seconds)
    import autodiff as ad
    from jit_util import assert_compiled
    x, k = nls["grid"](64, 40.0)
    a = np.exp(-x ** 2 / 2)
    target = np.abs(np.asarray(nls["split_step"](1.1 * a, k, 0.05, 10))) ** 2
    args = (a, target, k, 0.05, 10, 40.0 / 64)
    loss_grad = ad.value_and_grad(nls["intensity_loss"])
    value, g = assert_compiled(ad.jit(loss_grad, static_argnums=(4,)), *args)
    ref_value, ref_g = loss_grad(*args)
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(g, ref_g, rtol=1e-10, atol=1e-14)
    H, bound = spin["hamiltonian"](4)
    psi = np.linspace(1.0, 2.0, 16) * np.exp(1j * np.arange(16.0))
    psi1, e = assert_compiled(ad.jit(spin["descent_step"]), psi, H, 1.0 / bound)
    ref_psi1, ref_e = spin["descent_step"](psi, H, 1.0 / bound)
    np.testing.assert_allclose(psi1, ref_psi1, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(e, ref_e, rtol=1e-13)
