"""What ``import mxc`` sets up for the process (mxc/__init__.py)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _policy_after_import(env_extra):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(env_extra)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    code = ("import os, mxc; "
            "print(os.environ.get('OMP_WAIT_POLICY'), os.environ.get('GOMP_SPINCOUNT'))")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True, timeout=120).stdout.strip()


@pytest.mark.parametrize("env_extra,expected", [
    ({}, "None 3000"),                                # the default: a short spin, then sleep
    ({"OMP_WAIT_POLICY": "PASSIVE"}, "PASSIVE None"), # the user's choice stands
    ({"GOMP_SPINCOUNT": "100000"}, "None 100000"),    # so does a spin count
])
def test_openmp_wait_policy(env_extra, expected):
    assert _policy_after_import(env_extra) == expected
