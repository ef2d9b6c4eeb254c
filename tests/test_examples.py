"""The README's main job keeps working: the tour runs to the end (it asserts its own results)."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


@pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="examples/ is not next to the tests")
def test_quickstart_runs():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "quickstart.py")],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "quickstart OK" in out.stdout
