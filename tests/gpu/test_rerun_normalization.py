"""tests/ops/test_normalization.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_normalization import *  # noqa: F401,F403
