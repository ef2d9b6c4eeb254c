import pytest

from mxc import util


@pytest.fixture
def np_mode():
    """numpy shape + array semantics on for the test, off afterwards (whatever happened)."""
    util.set_np()
    try:
        yield
    finally:
        util.reset_np()
