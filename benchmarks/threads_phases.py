"""Per-phase times of the jitted MLP value_and_grad (784-512-10, batch 256): its two big
GEMMs, the skinny ones and its elementwise nests (hand-written as the kernel has them) called
alone, 1 and 2 pool threads, interleaved rounds, on the machine as it is and with one core
busy (issue 34; benchmarks/RESULTS_threads.md).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 benchmarks/threads_phases.py
"""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import autodiff as ad
ad.config.update("jit_background_compile", False)
from autodiff.backends import blas_pool
from autodiff.backends.numba_runtime import matmul_into
from autodiff.backends.numba_math import tanh_f64
from numba import njit, prange
from jit_bench import mlp_data, deep_loss
params, x, y = mlp_data(256)
(w1, b1), (w2, b2) = params
f = ad.jit(ad.value_and_grad(deep_loss)); f(params, x, y)
blas_pool.ensure_started()

@njit(nogil=True, fastmath={'reassoc', 'contract'})
def tanh_nest(H, B, K, M):
    for i0 in range(256):
        for i1 in range(512):
            k = tanh_f64(H[i0, i1] + B[i1]); K[i0, i1] = k; M[i0, i1] = 1.0 - k * k

@njit(nogil=True, fastmath={'reassoc', 'contract'}, parallel=True)
def tanh_nest_par(H, B, K, M):
    for i0 in prange(256):
        for i1 in range(512):
            k = tanh_f64(H[i0, i1] + B[i1]); K[i0, i1] = k; M[i0, i1] = 1.0 - k * k

@njit(nogil=True, fastmath={'reassoc', 'contract'})
def bwd_nest(BE, M, BF, BG):
    BG[:] = 0.0
    for i0 in range(256):
        for i1 in range(512):
            bf = BE[i0, i1] * M[i0, i1]; BF[i0, i1] = bf; BG[i1] += bf

H = np.empty((256, 512)); K = np.empty_like(H); M = np.empty_like(H)
BF = np.empty_like(H); BG = np.empty(512); BH = np.empty((784, 512))
BB = np.random.default_rng(1).normal(size=(256, 10)); BE = np.empty((256, 512)); N = np.empty((256, 10))
phases = {
  "whole kernel": lambda: f(params, x, y),
  "gemm1 x@w1 (205 MF)": lambda: matmul_into(x, w1, H, np.int64(0)),
  "gemm bh x.T@bf (205 MF)": lambda: matmul_into(x, BF, BH, np.int64(1)),
  "small gemms x3": lambda: (matmul_into(K, w2, N, np.int64(0)), matmul_into(BB, w2, BE, np.int64(2)), matmul_into(K, BB, np.empty((512,10)), np.int64(1))),
  "tanh nest": lambda: tanh_nest(H, b1, K, M),
  "tanh nest prange": lambda: tanh_nest_par(H, b1, K, M),
  "bwd nest": lambda: bwd_nest(BE, M, BF, BG),
}
for fn in phases.values(): fn(); fn()

def run(cond, rounds=9, reps=20):
    res = {(k, t): [] for k in phases for t in (1, 2)}
    for _ in range(rounds):
        for t in (1, 2):
            blas_pool.set_threads(t, adaptive=False)
            for k, fn in phases.items():
                t0 = time.perf_counter()
                for _ in range(reps): fn()
                res[k, t].append((time.perf_counter() - t0) / reps)
    blas_pool.set_threads(ad.config.jit_blas_threads)
    print(f"{cond}: load {os.getloadavg()[0]:.2f}")
    for k in phases:
        a, b = statistics.median(res[k, 1]) * 1e3, statistics.median(res[k, 2]) * 1e3
        print(f"  {k:28s} 1 thread {a:7.3f} ms   2 threads {b:7.3f} ms")

run("quiet")
p = subprocess.Popen([sys.executable, "-c", "while True: pass"]); time.sleep(0.3)
try:
    run("busy")
finally:
    p.kill(); p.wait()
