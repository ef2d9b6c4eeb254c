"""tests/ops/test_fully_connected.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_fully_connected import *  # noqa: F401,F403
