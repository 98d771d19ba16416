import os
import tempfile

import numpy as np
import pytest

# keep the disk cache of compiled kernels out of the user's home during tests
os.environ.setdefault("AUTODIFF_CACHE_DIR", tempfile.mkdtemp(prefix="autodiff-test-cache-"))


@pytest.fixture
def rng():
    return np.random.default_rng(0)
