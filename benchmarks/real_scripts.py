"""Real scripts, whole process: un-jitted, jitted the way a user would, and JAX (issue 31).

    python benchmarks/real_scripts.py                       # all five, one run each
    python benchmarks/real_scripts.py --only rnn,gmm --runs 3 --timeout 120
    python benchmarks/real_scripts.py --python /path/to/venv/bin/python   # JAX lives there

Five small programs in the style of public examples, each a complete script (the text
templates below) run in a FRESH process with its own empty ``AUTODIFF_CACHE_DIR``
(``tempfile.mkdtemp``), in three variants:

  un-jitted  - autodiff as written: ``ad.value_and_grad`` / ``ad.grad`` / ``ad.jvp``, no jit;
  jitted     - the same text with the step / loss functions wrapped in ``ad.jit`` (the only
               change: every ``{jit}`` in a template becomes ``ad.jit`` instead of nothing);
  JAX        - the same text against ``jax`` / ``jax.numpy`` (``jax.jit``, x64 enabled), run
               by ``--python`` (default: this interpreter); "n/a" where JAX does not import.

Scripts:

  rnn   - character-level vanilla tanh RNN (hidden 32, vocabulary 20 from a fixed short
          text, sequences of 20 unrolled in Python), 30 SGD steps of ``value_and_grad`` of
          the cross-entropy (log-softmax by ``logsumexp``);
  lstm  - an LSTM (hidden 16, same text, 20 steps unrolled), 20 Adam steps (Adam in numpy);
  gmm   - a 2-D Gaussian mixture (3 components, diagonal scales, 300 points) fitted by
          ``scipy.optimize.minimize(method="Newton-CG", jac=True, hessp=...)`` on a flat
          parameter vector of 15; the Hessian-vector product is ``jvp`` of ``grad``;
          ``maxiter=20``;
  hmm   - EM of a discrete HMM (3 states, 4 symbols, 100 observations, 10 iterations); the
          E-step is ``value_and_grad`` of the forward-algorithm log-likelihood in log space
          (``logsumexp``, a Python loop over time), the M-step normalizes the counts;
  fluid - a semi-Lagrangian fluid (velocity 2 x 16 x 16, 4 steps of advection with
          bilinear interpolation at floor indices and a 10-iteration Jacobi pressure
          projection) optimised through its simulation: 10 gradient steps on the initial
          velocity so that the advected smoke reaches a target.

Timing: whole-process wall time, from just before the subprocess starts to its end, measured
by this (parent) process; each script also prints ``LAST <time.time()>`` as its last line,
so a cell reads ``total (work / exit)``: work = process start to the last line, exit = the
last line to the process's end. ``--runs N`` reports the median of N runs (each number's
median separately). Each script prints its final loss; the variants are checked to agree
(rtol 1e-6) and a mismatch is reported under the table, not raised. Goal (issue 31): jitted
<= 1.5x un-jitted and <= JAX on every row.

The subprocesses inherit this process's environment (PYTHONPATH included, so
``PYTHONPATH=/old/checkout python benchmarks/real_scripts.py`` measures another version).
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

AD_HEADER = """\
import time, sys
import numpy as np
import autodiff as ad, autodiff.numpy as anp
from autodiff.scipy.special import logsumexp
"""

JAX_HEADER = """\
import time, sys
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as anp
from jax.scipy.special import logsumexp
ad = jax
"""

FOOTER = """
print("LOSS", repr(float(final_loss)))
print("LAST", repr(time.time()), flush=True)
"""

TEXT_DATA = '''
text = "the cat sat on the mat. a dog ran to the cat, the big cat ran up a tree!"
chars = sorted(set(text))
V = len(chars)
idx = np.array([chars.index(c) for c in text])
onehot = np.eye(V)[idx]                                  # (len(text), V)
T = 20

def batch(i):
    s = (7 * i) % (len(text) - T - 1)
    return onehot[s:s + T], onehot[s + 1:s + T + 1]     # inputs, next-character targets
'''

SCRIPTS = {}

# ----------------------------------------------------------------------------------------
SCRIPTS["rnn"] = ("char-RNN (h 32, T 20, 30 SGD)", TEXT_DATA + '''
H = 32
rng = np.random.default_rng(0)
params = {"Wxh": 0.1 * rng.standard_normal((V, H)), "Whh": 0.1 * rng.standard_normal((H, H)),
          "bh": np.zeros(H), "Why": 0.1 * rng.standard_normal((H, V)), "by": np.zeros(V)}

def loss(params, xs, ys):
    h = anp.zeros(H)
    total = 0.0
    for t in range(T):
        h = anp.tanh(xs[t] @ params["Wxh"] + h @ params["Whh"] + params["bh"])
        logits = h @ params["Why"] + params["by"]
        total = total - anp.sum(ys[t] * (logits - logsumexp(logits)))
    return total / T

step = {jit}(ad.value_and_grad(loss))
lr = 0.5
for i in range(30):
    xs, ys = batch(i)
    l, g = step(params, xs, ys)
    params = {k: params[k] - lr * np.asarray(g[k]) for k in params}
    if i % 10 == 0:
        print("step", i, "loss", float(l))
final_loss = l
''')

# ----------------------------------------------------------------------------------------
SCRIPTS["lstm"] = ("LSTM (h 16, T 20, 20 Adam)", TEXT_DATA + '''
H = 16
rng = np.random.default_rng(1)
params = {"W": 0.1 * rng.standard_normal((V + H, 4 * H)), "b": np.zeros(4 * H),
          "Wy": 0.1 * rng.standard_normal((H, V)), "by": np.zeros(V)}

def sigmoid(z):
    return 0.5 * (anp.tanh(0.5 * z) + 1.0)

def loss(params, xs, ys):
    h = anp.zeros(H)
    c = anp.zeros(H)
    total = 0.0
    for t in range(T):
        z = anp.concatenate([xs[t], h]) @ params["W"] + params["b"]
        i, f, o, u = z[:H], z[H:2 * H], z[2 * H:3 * H], z[3 * H:]
        c = sigmoid(f) * c + sigmoid(i) * anp.tanh(u)
        h = sigmoid(o) * anp.tanh(c)
        logits = h @ params["Wy"] + params["by"]
        total = total - anp.sum(ys[t] * (logits - logsumexp(logits)))
    return total / T

step = {jit}(ad.value_and_grad(loss))
m = {k: np.zeros_like(v) for k, v in params.items()}
s = {k: np.zeros_like(v) for k, v in params.items()}
lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
for i in range(20):
    xs, ys = batch(i)
    l, g = step(params, xs, ys)
    for k in params:
        gk = np.asarray(g[k])
        m[k] = b1 * m[k] + (1 - b1) * gk
        s[k] = b2 * s[k] + (1 - b2) * gk ** 2
        mhat, shat = m[k] / (1 - b1 ** (i + 1)), s[k] / (1 - b2 ** (i + 1))
        params[k] = params[k] - lr * mhat / (np.sqrt(shat) + eps)
    if i % 5 == 0:
        print("step", i, "loss", float(l))
final_loss = l
''')

# ----------------------------------------------------------------------------------------
SCRIPTS["gmm"] = ("GMM Newton-CG (300 pts, 20 it)", '''
from scipy.optimize import minimize

K, D = 3, 2
rng = np.random.default_rng(2)
centres = np.array([[-2.0, 0.0], [2.0, 1.0], [0.0, -2.5]])
x = np.concatenate([c + rng.normal(scale=sd, size=(n, D))
                    for c, sd, n in zip(centres, (0.6, 0.8, 0.5), (120, 100, 80))])

def unpack(theta):
    mu = theta[:K * D].reshape(K, D)
    log_sigma = theta[K * D:2 * K * D].reshape(K, D)
    log_w = theta[2 * K * D:]
    return mu, log_sigma, log_w

def nll(theta):
    mu, log_sigma, log_w = unpack(theta)
    log_w = log_w - logsumexp(log_w)
    z = (x[:, None, :] - mu[None, :, :]) / anp.exp(log_sigma)[None, :, :]
    log_comp = -0.5 * anp.sum(z ** 2, axis=2) - anp.sum(log_sigma, axis=1) - np.log(2 * np.pi)
    return -anp.mean(logsumexp(log_comp + log_w, axis=1))

value_and_grad = {jit}(ad.value_and_grad(nll))
hvp = {jit}(lambda theta, v: ad.jvp(ad.grad(nll), (theta,), (v,))[1])

def fun(theta):
    v, g = value_and_grad(theta)
    return float(v), np.asarray(g)

def hessp(theta, v):
    return np.asarray(hvp(theta, v))

theta0 = np.concatenate([rng.normal(size=K * D), np.zeros(K * D), np.zeros(K)])
res = minimize(fun, theta0, jac=True, hessp=hessp, method="Newton-CG",
               options={"maxiter": 20})
print("nit", res.nit, "nfev", res.nfev, "nhev", res.nhev)
final_loss = res.fun
''')

# ----------------------------------------------------------------------------------------
SCRIPTS["hmm"] = ("HMM EM (3x4, 100 obs, 10 it)", '''
rng = np.random.default_rng(0)
S, M, N = 3, 4, 100
obs = rng.integers(0, M, size=N)

def loglik(log_params):
    log_pi, log_A, log_B = log_params
    alpha = log_pi + log_B[:, obs[0]]
    for t in range(1, N):
        alpha = logsumexp(alpha[:, None] + log_A, axis=0) + log_B[:, obs[t]]
    return logsumexp(alpha)

e_step = {jit}(ad.value_and_grad(loglik))
log_params = (np.log(rng.dirichlet(np.ones(S))), np.log(rng.dirichlet(np.ones(S), size=S)),
              np.log(rng.dirichlet(np.ones(M), size=S)))
for it in range(10):
    ll, counts = e_step(log_params)                      # expected counts
    pi, A, B = (np.asarray(c) for c in counts)
    log_params = (np.log(pi / pi.sum()), np.log(A / A.sum(axis=1, keepdims=True)),
                  np.log(B / B.sum(axis=1, keepdims=True)))
    print("iter", it, "loglik", float(ll))
final_loss = -ll
''')

# ----------------------------------------------------------------------------------------
SCRIPTS["fluid"] = ("fluid 2x16x16, 4 steps, 10 GD", '''
n = 16
ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")

def project(vx, vy, n_jacobi=10):
    div = -0.5 * (anp.roll(vx, -1, axis=0) - anp.roll(vx, 1, axis=0)
                  + anp.roll(vy, -1, axis=1) - anp.roll(vy, 1, axis=1))
    p = anp.zeros(vx.shape)
    for _ in range(n_jacobi):
        p = (div + anp.roll(p, 1, axis=0) + anp.roll(p, -1, axis=0)
             + anp.roll(p, 1, axis=1) + anp.roll(p, -1, axis=1)) / 4.0
    vx = vx - 0.5 * (anp.roll(p, -1, axis=0) - anp.roll(p, 1, axis=0))
    vy = vy - 0.5 * (anp.roll(p, -1, axis=1) - anp.roll(p, 1, axis=1))
    return vx, vy

def advect(f, vx, vy, dt=1.0):
    x = anp.clip(ii - dt * vx, 0.0, n - 1.001)
    y = anp.clip(jj - dt * vy, 0.0, n - 1.001)
    i0 = anp.floor(x).astype(int)
    j0 = anp.floor(y).astype(int)
    i1, j1 = i0 + 1, j0 + 1
    s, t = x - i0, y - j0
    return ((1 - s) * ((1 - t) * f[i0, j0] + t * f[i0, j1])
            + s * ((1 - t) * f[i1, j0] + t * f[i1, j1]))

def simulate(v0, smoke, n_steps=4):
    vx, vy = v0[0], v0[1]
    for _ in range(n_steps):
        vx, vy = project(vx, vy)
        vx, vy = advect(vx, vx, vy), advect(vy, vx, vy)
        smoke = advect(smoke, vx, vy)
    return smoke

def loss(v0, smoke0, target):
    return anp.sum((simulate(v0, smoke0) - target) ** 2)

rng = np.random.default_rng(1)
v0 = 0.8 * np.stack([np.sin(2 * np.pi * jj / n), np.cos(2 * np.pi * ii / n)])
v0 = v0 + 0.1 * rng.normal(size=v0.shape)
smoke0 = np.exp(-((ii - n / 3) ** 2 + (jj - n / 2) ** 2) / 8.0)
target = np.exp(-((ii - 2 * n / 3) ** 2 + (jj - n / 2) ** 2) / 8.0)

step = {jit}(ad.value_and_grad(loss))
lr = 0.02
for i in range(10):
    l, g = step(v0, smoke0, target)
    v0 = v0 - lr * np.asarray(g)
    print("step", i, "loss", float(l))
final_loss = l
''')


def script_text(key, variant):
    """The complete program of one script in one variant ("nojit", "jit", "jax")."""
    body = SCRIPTS[key][1].replace("{jit}", "" if variant == "nojit" else "ad.jit")
    header = JAX_HEADER if variant == "jax" else AD_HEADER
    return header + textwrap.dedent(body) + FOOTER


def run_once(key, variant, python, timeout):
    """One fresh process: (total, work, exit, loss) or a string saying why not."""
    cache = tempfile.mkdtemp(prefix="autodiff-real-")
    env = dict(os.environ, AUTODIFF_CACHE_DIR=cache)
    t0 = time.time()
    # cwd: the empty cache folder, so that ``-c``'s sys.path[0] (the working directory) does
    # not shadow PYTHONPATH with a checkout's ``autodiff/`` folder
    proc = subprocess.Popen([python, "-c", script_text(key, variant)], env=env, cwd=cache,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:                                    # the script and any worker it started
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        shutil.rmtree(cache, ignore_errors=True)
        return "timeout"
    t1 = time.time()
    shutil.rmtree(cache, ignore_errors=True)
    if proc.returncode:
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        return "error: " + (lines[-1] if lines else f"exit status {proc.returncode}")
    last = loss = None
    for ln in out.splitlines():
        if ln.startswith("LAST "):
            last = float(ln.split()[1])
        elif ln.startswith("LOSS "):
            loss = float(ln.split()[1])
    if last is None:
        return "error: no LAST line"
    return t1 - t0, last - t0, t1 - last, loss


def measure(key, variant, python, timeout, runs):
    """Median over ``runs`` of (total, work, exit), the last loss, or a failure string."""
    results = []
    for _ in range(runs):
        r = run_once(key, variant, python, timeout)
        if isinstance(r, str):
            return r
        results.append(r)
    med = tuple(statistics.median(r[i] for r in results) for i in range(3))
    return med + (results[-1][3],)


def imported_from(python, module):
    """Where ``module`` imports from in a subprocess run as the scripts are (or None)."""
    cwd = tempfile.mkdtemp(prefix="autodiff-real-")
    try:
        r = subprocess.run([python, "-c", f"import {module}; print({module}.__file__)"],
                           capture_output=True, text=True, timeout=120, cwd=cwd)
        return r.stdout.strip() if r.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        shutil.rmtree(cwd, ignore_errors=True)


def jax_available(python):
    try:
        r = subprocess.run([python, "-c", "import jax"], capture_output=True, timeout=120)
        return r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(SCRIPTS),
                    help="comma-separated scripts: " + ", ".join(SCRIPTS))
    ap.add_argument("--runs", type=int, default=1, help="median of N runs (default 1)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter for the JAX variant (default: this one)")
    ap.add_argument("--show", metavar="SCRIPT:VARIANT",
                    help="print one script's text (variant nojit, jit or jax) and exit")
    a = ap.parse_args()
    if a.show:
        key, variant = a.show.split(":")
        print(script_text(key, variant))
        return
    keys = [k.strip() for k in a.only.split(",") if k.strip()]
    for k in keys:
        if k not in SCRIPTS:
            raise SystemExit(f"unknown script {k!r}; choose from {', '.join(SCRIPTS)}")
    print(f"autodiff under test: {imported_from(sys.executable, 'autodiff')}")
    have_jax = jax_available(a.python)
    if not have_jax:
        print(f"jax does not import under {a.python}: JAX column n/a")

    def fmt(r, split=False):
        if r is None:
            return "n/a"
        if r == "timeout":
            return f"> {a.timeout:g}"
        if isinstance(r, str):
            return "error"
        return f"{r[0]:.2f} ({r[1]:.2f} / {r[2]:.2f})" if split else f"{r[0]:.2f}"

    def ratio(x, y):
        if isinstance(x, tuple) and isinstance(y, tuple):
            return f"{x[0] / y[0]:.2f}×"
        if x == "timeout" and isinstance(y, tuple):
            return f"> {a.timeout / y[0]:.1f}×"
        return "—"

    print(f"whole process, fresh process and empty cache per run, median of {a.runs}; "
          f"cells: total s (work / exit)", flush=True)
    rows, notes = [], []
    for k in keys:
        label = SCRIPTS[k][0]
        res = {}
        for variant in ("nojit", "jit", "jax"):
            if variant == "jax" and not have_jax:
                res[variant] = None
                continue
            python = a.python if variant == "jax" else sys.executable
            res[variant] = measure(k, variant, python, a.timeout, a.runs)
            print(f"  {k:6s} {variant:6s} {fmt(res[variant], True)}", flush=True)
        for variant, r in res.items():
            if isinstance(r, str) and r != "timeout":
                notes.append(f"{k} {variant}: {r}")
        losses = {v: r[3] for v, r in res.items() if isinstance(r, tuple) and r[3] is not None}
        if "nojit" in losses:
            ref = losses["nojit"]
            for v, x in losses.items():
                if abs(x - ref) > 1e-6 * max(abs(ref), 1e-300):
                    notes.append(f"{k}: final loss mismatch: {v} {x!r} vs un-jitted {ref!r}")
        rows.append(f"| {label} | {fmt(res['nojit'], True)} | {fmt(res['jit'], True)} | "
                    f"{ratio(res['jit'], res['nojit'])} | {fmt(res['jax'], True)} | "
                    f"{ratio(res['jit'], res['jax'])} |")
    print()
    print("| script | un-jitted s (work / exit) | jitted s (work / exit) | jitted / un-jitted | "
          "JAX s (work / exit) | jitted / JAX |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(r)
    if notes:
        print()
        for n in notes:
            print("- " + n)
    else:
        print("\nfinal losses agree (rtol 1e-6) across the variants that ran")


if __name__ == "__main__":
    main()
