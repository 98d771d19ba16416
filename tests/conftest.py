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


@pytest.fixture
def rng():
    return np.random.default_rng(0)
