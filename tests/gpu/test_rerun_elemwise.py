"""tests/ops/test_elemwise.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_elemwise import *  # noqa: F401,F403
