import os

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """A seeded generator; the seed is printed when the test fails (MXC_TEST_SEED overrides)."""
    seed = int(os.environ.get("MXC_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
    print(f"MXC_TEST_SEED={seed}")
    return np.random.default_rng(seed)
