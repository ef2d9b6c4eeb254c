"""tests/ops/test_upsampling.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_upsampling import *  # noqa: F401,F403
