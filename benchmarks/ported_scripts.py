"""Scripts people port from autograd: ``ad.grad`` without jit against autograd (HIPS).

    python benchmarks/ported_scripts.py [--calls 20] [--quick] [--only hmm,fluid,gmm,wing]

Four small scientific workloads, each written once against a numpy-like module ``m`` (and
that library's ``logsumexp``), so ``make_x(autodiff.numpy)`` and ``make_x(autograd.numpy)``
run the same Python code; one row each, one "call" being:

  HMM EM        - 3 EM iterations of a discrete hidden Markov model (3 states, 4 symbols,
                  50 observations); each E-step is ``value_and_grad`` of the log-likelihood
                  (forward algorithm in log space, ``logsumexp``, a Python loop over time)
                  with respect to the log-parameters, whose gradient is the expected
                  counts; the M-step normalizes them (plain numpy);
  fluid         - ``grad`` of a final-state loss with respect to the initial velocity field
                  (2 x 16 x 16) of a smoke simulation: 4 time steps of semi-Lagrangian
                  advection (bilinear interpolation at integer indices computed from the
                  traced positions, ``m.floor(...).astype(int)`` and ``f[i0, j0]``) and a
                  pressure projection by 10 Jacobi iterations;
  GMM           - 5 gradient-descent steps on the negative log-likelihood of a 2-D Gaussian
                  mixture (3 components, diagonal log-scales, log-weights, 200 points,
                  ``logsumexp``), each ``value_and_grad`` over a dict of 3 parameter arrays;
  wing          - ``grad`` of a drag-like loss (velocity squared summed over the boundary of
                  a smooth obstacle mask) with respect to (inflow speed, wing thickness,
                  angle of attack): the fluid step of the row above on a 16 x 24 channel
                  with the inflow imposed on the left column and the velocity damped
                  inside the mask (a sigmoid of an elliptical signed distance) each step.

Both libraries retrace on every call (no jit); autodiff reuses the transformed programs of
a trace with the structure of an earlier one. Results are checked equal (rtol 1e-10).
Reported: the best of 5 batches of ``--calls`` calls, in process CPU time (robust to other
jobs on the machine), per call; ratio = autodiff / autograd, goal <= 1 on every row. A row
that fails under autodiff is timed under autograd alone and marked ``FAILED``.
"""
import argparse
import traceback

import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff.scipy.special import logsumexp as ad_logsumexp


# ----------------------------------------------------------------------------
# 1. HMM EM
# ----------------------------------------------------------------------------

def make_hmm(m, logsumexp):
    """log p(obs) by the forward algorithm in log space. Differentiated with respect to the
    (normalized) log-parameters it gives the expected initial-state, transition and
    emission counts (the E-step)."""
    def loglik(log_params, obs):
        log_pi, log_A, log_B = log_params
        alpha = log_pi + log_B[:, obs[0]]
        for t in range(1, len(obs)):
            alpha = logsumexp(alpha[:, None] + log_A, axis=0) + log_B[:, obs[t]]
        return logsumexp(alpha)
    return loglik


def hmm_args():
    rng = np.random.default_rng(0)
    pi = rng.dirichlet(np.ones(3))
    A = rng.dirichlet(np.ones(3), size=3)
    B = rng.dirichlet(np.ones(4), size=3)
    obs = [int(o) for o in rng.integers(0, 4, size=50)]
    return (np.log(pi), np.log(A), np.log(B)), obs


def em_iterations(value_and_grad, n_iter=3):
    def run(log_params, obs):
        lls = []
        for _ in range(n_iter):
            ll, counts = value_and_grad(log_params, obs)        # E-step
            lls.append(ll)
            pi, A, B = (np.asarray(c) for c in counts)          # M-step
            log_params = (np.log(pi / pi.sum()),
                          np.log(A / A.sum(axis=1, keepdims=True)),
                          np.log(B / B.sum(axis=1, keepdims=True)))
        return np.array(lls), log_params
    return run


# ----------------------------------------------------------------------------
# 2. fluid simulation (shared by 4.)
# ----------------------------------------------------------------------------

def make_fluid_ops(m):
    def roll_lap(p):
        return (m.roll(p, 1, axis=0) + m.roll(p, -1, axis=0)
                + m.roll(p, 1, axis=1) + m.roll(p, -1, axis=1))

    def project(vx, vy, n_jacobi=10):
        """Remove the divergence: solve lap p = div v by Jacobi sweeps, v -= grad p."""
        div = -0.5 * (m.roll(vx, -1, axis=0) - m.roll(vx, 1, axis=0)
                      + m.roll(vy, -1, axis=1) - m.roll(vy, 1, axis=1))
        p = m.zeros(vx.shape)
        for _ in range(n_jacobi):
            p = (div + roll_lap(p)) / 4.0
        vx = vx - 0.5 * (m.roll(p, -1, axis=0) - m.roll(p, 1, axis=0))
        vy = vy - 0.5 * (m.roll(p, -1, axis=1) - m.roll(p, 1, axis=1))
        return vx, vy

    def advect(f, vx, vy, dt=1.0):
        """Semi-Lagrangian: f at each cell centre traced back along v, bilinear in the
        four neighbours of the departure point (integer indices from traced positions)."""
        rows, cols = f.shape
        ii, jj = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        x = m.clip(ii - dt * vx, 0.0, rows - 1.001)
        y = m.clip(jj - dt * vy, 0.0, cols - 1.001)
        i0 = m.floor(x).astype(int)
        j0 = m.floor(y).astype(int)
        i1 = i0 + 1
        j1 = j0 + 1
        s = x - i0
        t = y - j0
        return ((1 - s) * ((1 - t) * f[i0, j0] + t * f[i0, j1])
                + s * ((1 - t) * f[i1, j0] + t * f[i1, j1]))

    def step(vx, vy, smoke):
        vx, vy = project(vx, vy)
        vx, vy = advect(vx, vx, vy), advect(vy, vx, vy)
        smoke = advect(smoke, vx, vy)
        return vx, vy, smoke

    return project, advect, step


def make_fluid(m, n_steps=4):
    project, advect, step = make_fluid_ops(m)

    def loss(v0, smoke0, target):
        vx, vy, smoke = v0[0], v0[1], smoke0
        for _ in range(n_steps):
            vx, vy, smoke = step(vx, vy, smoke)
        return m.sum((smoke - target) ** 2)
    return loss


def fluid_args(n=16):
    rng = np.random.default_rng(1)
    ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    v0 = 0.8 * np.stack([np.sin(2 * np.pi * jj / n), np.cos(2 * np.pi * ii / n)])
    v0 += 0.1 * rng.normal(size=v0.shape)
    smoke0 = np.exp(-((ii - n / 3) ** 2 + (jj - n / 2) ** 2) / 8.0)
    target = np.exp(-((ii - 2 * n / 3) ** 2 + (jj - n / 2) ** 2) / 8.0)
    return v0, smoke0, target


# ----------------------------------------------------------------------------
# 3. GMM
# ----------------------------------------------------------------------------

def make_gmm(m, logsumexp):
    def nll(p, x):
        log_w = p["log_w"] - logsumexp(p["log_w"])
        z = (x[:, None, :] - p["mu"][None, :, :]) / m.exp(p["log_sigma"])[None, :, :]
        log_comp = (-0.5 * m.sum(z ** 2, axis=2) - m.sum(p["log_sigma"], axis=1)
                    - np.log(2 * np.pi))
        return -m.mean(logsumexp(log_comp + log_w, axis=1))
    return nll


def gmm_args():
    rng = np.random.default_rng(2)
    centres = np.array([[-2.0, 0.0], [2.0, 1.0], [0.0, -2.5]])
    x = np.concatenate([c + rng.normal(scale=s, size=(n, 2))
                        for c, s, n in zip(centres, (0.6, 0.8, 0.5), (80, 70, 50))])
    p = {"mu": rng.normal(size=(3, 2)), "log_sigma": np.zeros((3, 2)),
         "log_w": np.zeros(3)}
    return p, x


def descent(value_and_grad, n_steps=5, lr=0.5):
    def run(p, x):
        losses = []
        for _ in range(n_steps):
            v, g = value_and_grad(p, x)
            losses.append(v)
            p = {k: p[k] - lr * np.asarray(g[k]) for k in p}
        return np.array(losses), p
    return run


# ----------------------------------------------------------------------------
# 4. wing / obstacle flow
# ----------------------------------------------------------------------------

def make_wing(m, n_steps=4, shape=(16, 24)):
    project, advect, _ = make_fluid_ops(m)
    rows, cols = shape
    ii, jj = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    inlet = (jj == 0).astype(float)
    ci, cj = rows / 2 - 0.5, cols / 3

    def loss(theta):
        speed, thickness, angle = theta[0], theta[1], theta[2]
        # an ellipse (chord 8 cells) rotated by the angle of attack: smooth signed distance
        c, s = m.cos(angle), m.sin(angle)
        u = (jj - cj) * c + (ii - ci) * s
        w = -(jj - cj) * s + (ii - ci) * c
        sdf = m.sqrt((u / 4.0) ** 2 + (w / thickness) ** 2 + 1e-12) - 1.0
        mask = 1.0 / (1.0 + m.exp(sdf / 0.15))              # sigmoid(-sdf / eps)
        fluid = 1.0 - mask
        boundary = 4.0 * mask * fluid
        vx = m.zeros(shape)                                 # vx along rows, vy along cols
        vy = speed * fluid
        drag = 0.0
        for _ in range(n_steps):
            vy = vy * (1 - inlet) + speed * inlet
            vx, vy = vx * fluid, vy * fluid
            vx, vy = project(vx, vy)
            vx, vy = advect(vx, vx, vy), advect(vy, vx, vy)
            drag = drag + m.sum(boundary * (vx ** 2 + vy ** 2))
        return drag
    return loss


def wing_args():
    return (np.array([1.0, 1.2, 0.15]),)


# ----------------------------------------------------------------------------
# driver
# ----------------------------------------------------------------------------

# the timing of grad_vs_autograd.py (best of batches, process CPU time), shared
from grad_vs_autograd import per_call  # noqa: E402


def _close(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    else:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-13)


def build_rows(agnp, ag_lse, autograd):
    """(label, calls multiplier, autodiff call, autograd call or None, args)."""
    have = autograd is not None
    rows = {}
    lp, obs = hmm_args()
    rows["hmm"] = ("HMM EM (3 iters)", 1,
                   em_iterations(ad.value_and_grad(make_hmm(anp, ad_logsumexp))),
                   em_iterations(autograd.value_and_grad(make_hmm(agnp, ag_lse)))
                   if have else None, (lp, obs))
    rows["fluid"] = ("fluid 16x16, 4 steps", 1, ad.grad(make_fluid(anp)),
                     autograd.grad(make_fluid(agnp)) if have else None, fluid_args())
    rows["gmm"] = ("GMM (5 GD steps)", 2,
                   descent(ad.value_and_grad(make_gmm(anp, ad_logsumexp))),
                   descent(autograd.value_and_grad(make_gmm(agnp, ag_lse)))
                   if have else None, gmm_args())
    rows["wing"] = ("wing 16x24, 4 steps", 1, ad.grad(make_wing(anp)),
                    autograd.grad(make_wing(agnp)) if have else None, wing_args())
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="half the calls (a smoke run)")
    ap.add_argument("--only", default="hmm,fluid,gmm,wing",
                    help="comma-separated rows: hmm, fluid, gmm, wing")
    args = ap.parse_args()
    calls = max(1, args.calls // 2) if args.quick else args.calls
    try:
        import autograd
        import autograd.numpy as agnp
        from autograd.scipy.special import logsumexp as ag_lse
    except ImportError:
        autograd = agnp = ag_lse = None
        print("autograd is not installed (pip install autograd): timing autodiff alone")

    rows = build_rows(agnp, ag_lse, autograd)
    print(f"grad without jit, best of 5 x {calls} calls (GMM: x2), CPU time, per call")
    head = f"  {'workload':24s} {'autodiff':>12s}"
    if autograd:
        head += f" {'autograd':>12s}  ratio (goal <= 1)"
    print(head)
    for key in args.only.split(","):
        label, mult, g_ad, g_ag, a = rows[key.strip()]
        n_calls = calls * mult
        failure = None
        try:
            out_ad = g_ad(*a)
            if g_ag is not None:
                _close(out_ad, g_ag(*a))
        except Exception as e:                  # noqa: BLE001 - reported, row goes on
            failure = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            traceback.print_exc()
        if failure is None:
            t_ad = per_call(g_ad, a, n_calls)
            line = f"  {label:24s} {t_ad * 1e6:9.0f} us"
            if g_ag is not None:
                t_ag = per_call(g_ag, a, n_calls)
                line += f" {t_ag * 1e6:9.0f} us  {t_ad / t_ag:.2f}"
        else:
            line = f"  {label:24s} {'FAILED':>12s}"
            if g_ag is not None:
                line += f" {per_call(g_ag, a, n_calls) * 1e6:9.0f} us  -"
            line += f"   (autodiff: {failure})"
        print(line, flush=True)


if __name__ == "__main__":
    main()
