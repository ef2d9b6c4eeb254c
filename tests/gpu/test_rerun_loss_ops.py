"""tests/ops/test_loss_ops.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_loss_ops import *  # noqa: F401,F403
