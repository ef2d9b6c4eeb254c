"""mxc/_core/opcall.pyx: every kernel runs through run_call, which caps OpenMP threads in a
forked child."""

_FORK_SCRIPT = """
import os, signal, sys
try:
    import torch  # its own OpenMP runtime is loaded too: the case that hung NDArray operators
    torch.ones(3).sum()
except ImportError:
    pass
import mxc as mx
a = mx.nd.ones((400, 400))
mx.nd.dot(a, a).wait_to_read()          # the parent's thread pools are up
(a * 2).wait_to_read()
mx.nd.relu(a).wait_to_read()
for _ in range(4):                      # a stale pool hangs often, not always: fork a few times
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)                # a hang ends the child with SIGALRM
        ok = (mx.nd.dot(a, a).asnumpy()[0, 0] == 400 and (a * 2).asnumpy().sum() == 320000
              and mx.nd.relu(a).asnumpy().sum() == 160000)
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        sys.exit(10 + status % 100)
"""


def test_a_forked_child_runs_parallel_kernels_without_hanging():
    # libgomp's and OpenBLAS's thread pools do not survive fork (MXNet #15690): a forked child
    # must compute on one thread (registry kernels, NDArray operators, BLAS) instead of waiting
    # forever for the parent's pool. A fresh interpreter, so the suite's state does not matter.
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _FORK_SCRIPT], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
