"""tests/ops/test_convolution.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_convolution import *  # noqa: F401,F403
