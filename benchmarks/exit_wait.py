"""A short jitted script's whole-process time: the background compile in a worker process
against a thread of the script's own process (issue 31, "exit never waits").

    python benchmarks/exit_wait.py                  # both modes, cold and warm cache, 3 runs
    python benchmarks/exit_wait.py --runs 5 --steps 50

The script (run in a fresh process each time) trains a small MLP (16-64-64-1, batch 128)
for ``--steps`` steps of ``jit(value_and_grad)`` plus a plain-numpy evaluation, then ends.
Columns: seconds from the process start to the script's last line ("work"), from the
last line to the process's end ("exit"), and the whole ("total", measured outside).
"cold": an empty ``AUTODIFF_CACHE_DIR`` (every kernel compiles); "warm": the cache the cold
run of that mode left (in worker mode the worker finished the kernel after the cold
script ended, so the warm run loads it).

Modes: ``worker`` (the default, ``jit_compile_process=True``) and ``thread``
(``AUTODIFF_JIT_COMPILE_PROCESS=0``: the kernel compiles in the script's process, sharing
its GIL, and an exit waits for a compile in flight, up to 10 s).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

SCRIPT = textwrap.dedent("""
    import sys, time
    import numpy as np
    import autodiff as ad, autodiff.numpy as anp
    steps = int(sys.argv[1])
    rng = np.random.default_rng(0)
    sizes = [16, 64, 64, 1]
    params = [(rng.standard_normal((a, b)) / np.sqrt(a), np.zeros(b))
              for a, b in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((128, 16)); y = np.sin(x.sum(1, keepdims=True))
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = anp.tanh(h @ w + b)
        w, b = params[-1]
        return anp.mean((h @ w + b - y) ** 2)
    step = ad.jit(ad.value_and_grad(loss))
    for i in range(steps):
        l, g = step(params, x, y)
        params = [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, g)]
    print("LAST", repr(time.time()), repr(float(l)), step.cache_info().compiled, flush=True)
""")


def one(mode, cache, steps):
    env = dict(os.environ, AUTODIFF_CACHE_DIR=cache,
               AUTODIFF_JIT_COMPILE_PROCESS="1" if mode == "worker" else "0")
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(steps)], env=env,
                         capture_output=True, text=True, timeout=600)
    t1 = time.time()
    if out.returncode:
        raise SystemExit(out.stderr)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("LAST")][0].split()
    last = float(line[1])
    return last - t0, t1 - last, t1 - t0, int(line[3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=50)
    a = ap.parse_args()
    rows = {}
    for _ in range(a.runs):
        for mode in ("thread", "worker"):
            cache = tempfile.mkdtemp(prefix="autodiff-exit-")
            rows.setdefault((mode, "cold"), []).append(one(mode, cache, a.steps))
            time.sleep(0.5)
            if mode == "worker":        # the worker may still be finishing the kernel
                time.sleep(20)
            rows.setdefault((mode, "warm"), []).append(one(mode, cache, a.steps))
    print(f"short script: {a.steps} steps of jit(value_and_grad) of a 16-64-64-1 MLP, "
          f"medians of {a.runs} fresh processes (seconds)")
    print("| mode | cache | work | exit | total | compiled kernels used |")
    print("|---|---|---|---|---|---|")
    for (mode, cache), rs in rows.items():
        med = [statistics.median(r[k] for r in rs) for k in range(3)]
        used = max(r[3] for r in rs)
        print(f"| {mode} | {cache} | {med[0]:.2f} | {med[1]:.2f} | {med[2]:.2f} | {used} |")


if __name__ == "__main__":
    main()
