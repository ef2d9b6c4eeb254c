"""tests/ops/test_dropout.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_dropout import *  # noqa: F401,F403
