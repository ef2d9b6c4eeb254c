"""tests/ndarray/test_ndarray.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ndarray.test_ndarray import *  # noqa: F401,F403
