"""Cheap values recomputed by the loop nest that reads them, against storing them: before
and after ``Planner.recompute_in`` in one run (the CPU target's flag toggled), with numpy.

    python benchmarks/recompute_across_nests.py

Normalizations over a 4096 x 256 float64 batch: the centred value ``x - mean`` is read by
the nest computing the variance and by the one writing the result; stored, it costs a write
and a read of 8 MB, more than the arithmetic. Prints a markdown table of medians.
"""
import time, statistics, numpy as np, autodiff as ad, autodiff.numpy as anp
from autodiff.backends.numba_cpu_emitter import CpuFunction
ad.config.update("jit_background_compile", False)
rng = np.random.default_rng(0)
x = rng.normal(size=(4096, 256)); g = rng.normal(size=256)
def batchnorm(x, g):
    m = anp.mean(x, axis=0); v = anp.mean((x - m) ** 2, axis=0)
    return anp.tanh((x - m) / anp.sqrt(v + 1e-5) * g)
def layernorm(x, g):
    m = anp.mean(x, axis=-1, keepdims=True); c = x - m
    return c / anp.sqrt(anp.mean(c * c, axis=-1, keepdims=True) + 1e-5) * g
def softmax(x, g):
    z = x * g - anp.max(x * g, axis=-1, keepdims=True)
    e = anp.exp(z)
    return e / anp.sum(e, axis=-1, keepdims=True)
def np_batchnorm(x, g):
    m = x.mean(0); v = ((x - m) ** 2).mean(0); return np.tanh((x - m) / np.sqrt(v + 1e-5) * g)
def np_layernorm(x, g):
    m = x.mean(-1, keepdims=True); c = x - m
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * g
def np_softmax(x, g):
    z = x * g - (x * g).max(-1, keepdims=True); e = np.exp(z); return e / e.sum(-1, keepdims=True)
def med(f, reps=40):
    f(x, g); ts = []
    for _ in range(reps):
        t = time.perf_counter(); f(x, g); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3
rows = []
for name, f, nf in (("batchnorm", batchnorm, np_batchnorm), ("layernorm", layernorm, np_layernorm),
                    ("softmax", softmax, np_softmax),
                    ("grad batchnorm", ad.grad(lambda x, g: anp.sum(batchnorm(x, g) ** 2), 1), None)):
    t = {}
    for flag in (False, True):
        CpuFunction.RECOMPUTE_ACROSS_NESTS = flag
        t[flag] = med(ad.jit(f))
    rows.append((name, t[False], t[True], med(nf) if nf else float("nan")))
print("| program (4096 x 256 f64) | stored ms | recomputed ms | numpy ms |")
print("|---|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]:.2f} | {r[2]:.2f} | {r[3]:.2f} |")
