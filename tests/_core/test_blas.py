"""mxc._core.blas: the BLAS library the CPU kernels call, and how its thread pool is set up."""
import os
import subprocess
import sys

from mxc._core import blas

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _timeout_after_import(env_value):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if env_value is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = env_value
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", "import os, mxc._core.blas; "
                          "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_idle_pool_threads_sleep_soon_unless_the_user_says_otherwise():
    # set before OpenBLAS loads (it reads the variable once, at load)
    assert _timeout_after_import(None) == "16"
    assert _timeout_after_import("24") == "24"


def test_thread_count_round_trip():
    before = blas.get_num_threads()
    try:
        blas.set_num_threads(1)
        assert blas.get_num_threads() == 1
        blas.set_num_threads(0)             # clamped to one thread, never zero
        assert blas.get_num_threads() == 1
    finally:
        blas.set_num_threads(before)
    assert blas.get_num_threads() == before


def test_config_names_openblas():
    assert "OpenBLAS" in blas.config()
