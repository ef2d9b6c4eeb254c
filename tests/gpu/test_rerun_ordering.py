"""tests/ops/test_ordering.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_ordering import *  # noqa: F401,F403
