import os

import numpy as np
import pytest

# kernels keep the thread count the test expects: the watcher that narrows it while other
# processes compete for the cores (mxc/_core/threads.py) would make results and thread-count
# assertions depend on the machine's load; tests/_core/test_threads.py tests it on its own
os.environ.setdefault("MXC_FOLLOW_LOAD", "0")
# downloads (datasets, pretrained models) go to a port nothing listens on: refused at once, so no
# test reaches the internet or waits on it; tests that download serve their files locally
os.environ["MXNET_GLUON_REPO"] = "http://127.0.0.1:9/"


@pytest.fixture
def rng(request):
    """A seeded generator; the seed is printed when the test fails (MXC_TEST_SEED overrides)."""
    seed = int(os.environ.get("MXC_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
    print(f"MXC_TEST_SEED={seed}")
    return np.random.default_rng(seed)
