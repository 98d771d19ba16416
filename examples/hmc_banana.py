"""Hamiltonian Monte Carlo on a 2-D banana density: ``jit`` + ``lax.scan`` + ``ad.random``.

    python examples/hmc_banana.py [--chains 8] [--samples 3000] [--leapfrog 8] [--step 0.6]

The target: x₁ ~ N(0, 2²), x₂ | x₁ ~ N(x₁²/4, 1), a curved ridge whose moments are known:
E[x₁] = 0, Var x₁ = 4, E[x₂] = 1, Var x₂ = 1 + Var(x₁²)/16 = 3. Each HMC transition
draws a momentum with ``ad.random.normal``, runs a leapfrog trajectory with the gradient
of the log density (``ad.grad``) in a ``lax.fori_loop``, and accepts with a Metropolis
test on ``ad.random.uniform``; ``lax.scan`` runs the chain, ``vmap`` runs independent
chains from split keys, and ``jit`` compiles the whole sampler once. The script checks
the sample moments against the exact ones and that the acceptance rate is healthy.
"""
import argparse

import numpy as np

import autodiff as ad
import autodiff.numpy as anp


def log_density(q):
    x1, x2 = q[0], q[1]
    return -x1 ** 2 / 8.0 - 0.5 * (x2 - x1 ** 2 / 4.0) ** 2


def hmc_chain(key, q0, n_samples, n_leapfrog, step):
    grad_logp = ad.grad(log_density)

    def leapfrog(_, state):
        q, p = state
        p = p + 0.5 * step * grad_logp(q)
        q = q + step * p
        p = p + 0.5 * step * grad_logp(q)
        return q, p

    def transition(carry, _):
        q, key = carry
        key, k_mom, k_acc = ad.random.split(key, 3)
        p0 = ad.random.normal(k_mom, (2,))
        q1, p1 = ad.lax.fori_loop(0, n_leapfrog, leapfrog, (q, p0))
        log_ratio = (log_density(q1) - 0.5 * anp.sum(p1 ** 2)) - (log_density(q) - 0.5 * anp.sum(p0 ** 2))
        accept = anp.log(ad.random.uniform(k_acc)) < log_ratio
        q_next = anp.where(accept, q1, q)
        return (q_next, key), (q_next, accept)

    _, (qs, acc) = ad.lax.scan(transition, (q0, key), None, length=n_samples)
    return qs, acc


def run(chains, n_samples, n_leapfrog, step, seed=0):
    sampler = ad.jit(lambda keys, q0: ad.vmap(
        lambda k, q: hmc_chain(k, q, n_samples, n_leapfrog, step))(keys, q0))
    keys = ad.random.split(ad.random.key(seed), chains)
    q0 = np.zeros((chains, 2))
    return sampler(keys, q0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, default=8)
    ap.add_argument("--samples", type=int, default=3000)
    ap.add_argument("--leapfrog", type=int, default=8)
    ap.add_argument("--step", type=float, default=0.6)
    args = ap.parse_args(argv)
    qs, acc = run(args.chains, args.samples, args.leapfrog, args.step)
    burn = args.samples // 5
    s = np.asarray(qs)[:, burn:].reshape(-1, 2)
    rate = float(np.mean(acc))
    mean, var = s.mean(0), s.var(0)
    print(f"acceptance {rate:.3f}; {len(s)} draws from {args.chains} chains")
    print(f"E[x1] {mean[0]:+.3f} (0)   Var x1 {var[0]:.3f} (4)")
    print(f"E[x2] {mean[1]:+.3f} (1)   Var x2 {var[1]:.3f} (3)")
    assert 0.6 < rate < 0.995, "acceptance rate out of the healthy range: step size?"
    assert abs(mean[0]) < 0.15 and abs(mean[1] - 1.0) < 0.15, "sample means off"
    assert abs(var[0] - 4.0) < 0.5 and abs(var[1] - 3.0) < 0.6, "sample variances off"
    print("ok: HMC reproduces the banana's moments")


if __name__ == "__main__":
    main()
