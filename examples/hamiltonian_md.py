"""Hamiltonian molecular dynamics: a Lennard-Jones cluster, forces from ``ad.grad``, a
velocity-Verlet integrator compiled with ``ad.jit``.

    python examples/hamiltonian_md.py [--particles 36] [--steps 4000] [--figure PATH]

(The figure goes to ``examples/out/hamiltonian_md.png``, ignored by git, unless ``--figure``
names another path.)

H(q, p) = |p|²/2 + U(q), with U the Lennard-Jones energy 4 Σ_{i<j} (r⁻¹² - r⁻⁶) (reduced
units, unit masses). The force is ``-ad.grad(U)``: no hand-written derivative. Velocity
Verlet is symplectic, so the total energy does not drift, only oscillates at O(dt²); the
whole trajectory is one ``lax.scan`` inside ``ad.jit``, one kernel. The script checks the
force against central differences, the conservation of energy and momentum, and plots
the energies and the particle paths. Needs matplotlib for the figure.
"""
import argparse
import pathlib

import numpy as np

import autodiff as ad
import autodiff.numpy as anp

# figures go here unless --figure says otherwise (ignored by git, made on demand)
OUT = pathlib.Path(__file__).resolve().parent / "out"


def lj_energy(q):
    n = q.shape[0]
    d = q[:, None, :] - q[None, :, :]
    eye = anp.eye(n)
    r2 = anp.sum(d ** 2, axis=-1) + eye          # the diagonal is masked out below
    inv6 = (1.0 / r2) ** 3
    return 2.0 * anp.sum((1.0 - eye) * (inv6 ** 2 - inv6))    # 4 * (sum over i<j)


force = ad.grad(lambda q: -lj_energy(q))


def hamiltonian(q, p):
    return 0.5 * anp.sum(p ** 2) + lj_energy(q)


def simulate(q, p, dt, steps):
    def step(carry, _):
        q, p, f = carry
        p_half = p + 0.5 * dt * f
        q = q + dt * p_half
        f = force(q)
        p = p_half + 0.5 * dt * f
        return (q, p, f), (q, 0.5 * anp.sum(p ** 2), lj_energy(q))
    (q, p, _), (path, kinetic, potential) = ad.lax.scan(step, (q, p, force(q)), None,
                                                        length=steps)
    return q, p, path, kinetic, potential


def initial_state(n_side, seed=0, temperature=0.05):
    rng = np.random.default_rng(seed)
    spacing = 2 ** (1 / 6)                       # the pair potential's minimum
    g = np.arange(n_side) * spacing
    q = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    q = q + 0.02 * rng.standard_normal(q.shape)
    p = np.sqrt(temperature) * rng.standard_normal(q.shape)
    return q, p - p.mean(0)                      # zero total momentum


def plot(dt, path, kinetic, potential, path_file):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = dt * np.arange(1, len(kinetic) + 1)
    fig, (a, b) = plt.subplots(1, 2, figsize=(9.0, 3.8), dpi=90)
    a.plot(t, kinetic, label="kinetic")
    a.plot(t, potential, label="potential")
    a.plot(t, kinetic + potential, "k", label="total")
    a.set_xlabel("t")
    a.set_title("energies (velocity Verlet, jit)")
    a.legend(fontsize=8)
    for i in range(path.shape[1]):
        b.plot(path[:, i, 0], path[:, i, 1], lw=0.6)
    b.plot(path[-1, :, 0], path[-1, :, 1], "ko", ms=4)
    b.set_aspect("equal")
    b.set_title(f"{path.shape[1]} Lennard-Jones particles")
    fig.tight_layout()
    pathlib.Path(path_file).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path_file)
    plt.close(fig)


def main(n_side=6, steps=4000, dt=0.004, figure=str(OUT / "hamiltonian_md.png"),
         log=print, use_jit=True):
    q0, p0 = initial_state(n_side)

    # the force is -dU/dq: check one component against central differences
    e = np.zeros_like(q0)
    e[1, 0] = 1e-6
    fd = -(lj_energy(q0 + e) - lj_energy(q0 - e)) / 2e-6
    assert np.isclose(force(q0)[1, 0], fd, rtol=1e-6, atol=1e-8)

    run = ad.jit(simulate, static_argnums=(2, 3)) if use_jit else simulate
    q, p, path, kinetic, potential = run(q0, p0, dt, steps)
    kinetic, potential = np.asarray(kinetic), np.asarray(potential)
    e0 = float(hamiltonian(q0, p0))
    total = kinetic + potential
    drift = float(np.max(np.abs(total - e0)) / np.abs(e0))
    momentum = float(np.max(np.abs(np.asarray(p).sum(0))))
    log(f"{q0.shape[0]} particles, {steps} steps of dt={dt}: energy {e0:.5f}, max relative "
        f"deviation {drift:.1e}; total momentum {momentum:.1e}")
    assert drift < 1e-3 and momentum < 1e-10
    if use_jit:
        # the compiled trajectory is the interpreted one (its first 10 steps)
        q_ref = ad.jit(simulate, static_argnums=(2, 3), backend="interpret")(q0, p0, dt, 10)[0]
        assert np.allclose(np.asarray(path)[9], q_ref, rtol=1e-10, atol=1e-12)
    if figure:
        plot(dt, np.asarray(path), kinetic, potential, figure)
        log(f"wrote {figure}")
    return drift


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--particles", type=int, default=36, help="a square number")
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--figure", default=str(OUT / "hamiltonian_md.png"))
    args = ap.parse_args()
    main(int(round(np.sqrt(args.particles))), args.steps, figure=args.figure)
