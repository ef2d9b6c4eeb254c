"""tests/ops/test_softmax.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_softmax import *  # noqa: F401,F403
