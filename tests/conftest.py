import os
import tempfile

# one BLAS thread: on 2 cores OpenBLAS threads fight Numba and each other (seen: 200x200 solve
# taking 0.4 s instead of 2 ms under load); must be set before numpy loads BLAS
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np
import pytest

# keep the disk cache of compiled kernels out of the user's home during tests
os.environ.setdefault("AUTODIFF_CACHE_DIR", tempfile.mkdtemp(prefix="autodiff-test-cache-"))

import autodiff as ad  # noqa: E402

# the worked example of docs/adding_a_primitive.md is a registered primitive for the whole
# session (declared before any backend loads), tested by every registry-wide suite through
# its row in tests/op_records/
import example_primitive  # noqa: E402,F401

# Tests of jitted code check the compiled kernels, so the first call of a signature waits
# for its kernel here. Background compilation (the default for users) has its own tests,
# which switch it on with the ``background_compile`` fixture.
ad.config.update("jit_background_compile", False)


@pytest.fixture
def background_compile():
    ad.config.update("jit_background_compile", True)
    try:
        yield
    finally:
        ad.wait_for_compiles(120)
        ad.config.update("jit_background_compile", False)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def numba_path():
    """jit without the direct LLVM tier (backends/llvm_cpu.py, config ``jit_llvm_tier``):
    for tests of the Numba path's mechanics, which programs that tier takes never reach."""
    old = ad.config.jit_llvm_tier
    ad.config.update("jit_llvm_tier", False)
    try:
        yield
    finally:
        ad.config.update("jit_llvm_tier", old)
