"""tests/ops/test_dot.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_dot import *  # noqa: F401,F403
