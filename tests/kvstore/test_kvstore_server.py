"""mx.kv.KVStoreServer: mxc's distributed KVStore has no server processes (every MPI rank is a
worker), so building one, or importing mxc as DMLC_ROLE=server, fails with a clear error."""
import os
import subprocess
import sys

import pytest

import mxc as mx
from mxc.base import MXNetError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_kvstore_server_is_a_clear_error():
    with pytest.raises(MXNetError, match="no server or scheduler processes"):
        mx.kv.KVStoreServer(mx.kv.create("local"))


def test_server_role_process_fails_at_import():
    env = dict(os.environ, DMLC_ROLE="server", PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-c", "import mxc"], env=env, cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = p.stdout.decode("utf-8", "replace")
    assert p.returncode != 0, out
    assert "DMLC_ROLE=server" in out and "every MPI rank is a worker" in out, out
