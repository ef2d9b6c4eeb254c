"""Files written whole or not at all (mxc/_core/atomic_write.py): every writer that renames its
temporary into place (nd.save, Symbol.save, checkpoints, save_parameters, export, optimizer
states) leaves the old file when it is killed, and the next write of the same target removes
the dead writer's temporary. Killed for real: a child SIGKILLs itself in the middle of a write."""
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mxc as mx
from mxc._core import atomic_write

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _temporaries(directory):
    return sorted(n for n in os.listdir(directory) if ".tmp-" in n)


def _dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_names_and_stale_removal(tmp_path):
    target = str(tmp_path / "w.params")
    host = atomic_write._HOST
    dead = tmp_path / f".w.params.tmp-{host}-{_dead_pid()}-0"
    live = tmp_path / f".w.params.tmp-{host}-{os.getppid()}-3"         # a running process
    other_host = tmp_path / f".w.params.tmp-elsewhere{host}-{_dead_pid()}-0"
    mine_not_open = tmp_path / f".w.params.tmp-{host}-{os.getpid()}-999999"   # a reused pid
    other_target = tmp_path / f".v.params.tmp-{host}-{_dead_pid()}-0"
    for p in (dead, live, other_host, mine_not_open, other_target):
        p.write_bytes(b"left")
    tmp = atomic_write.temp_path(target)
    assert os.path.basename(tmp).startswith(f".w.params.tmp-{host}-{os.getpid()}-")
    assert sorted(_temporaries(tmp_path)) == sorted(
        p.name for p in (live, other_host, other_target))
    atomic_write.remove_stale(target)           # the open temporary (not yet written) is kept
    with open(tmp, "wb") as f:
        f.write(b"new")
    atomic_write.remove_stale(target)
    assert os.path.exists(tmp)
    atomic_write.commit(tmp, target)
    assert open(target, "rb").read() == b"new"


def test_permissions_of_the_old_file_are_kept(tmp_path):
    target = tmp_path / "p.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    atomic_write.write_bytes(str(target), [b"n", b"ew"])
    assert target.read_bytes() == b"new" and (os.stat(target).st_mode & 0o777) == 0o600
    assert _temporaries(tmp_path) == []


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")

    def parts():
        yield b"half"
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write.write_bytes(str(target), parts())
    assert target.read_bytes() == b"old" and _temporaries(tmp_path) == []


# each writer: (code writing `path` in the child, the files it writes, code writing it again here)
_SETUP = """
import mxc as mx, numpy as np
net = mx.gluon.nn.HybridSequential()
net.add(mx.gluon.nn.Dense(3, in_units=4))
net.initialize()
net.hybridize()
net(mx.nd.ones((2, 4)))
"""
WRITERS = {
    "nd.save": ("mx.nd.save(P + '.params', {'a': mx.nd.ones((512, 512))})", [".params"]),
    "Symbol.save": ("mx.sym.FullyConnected(mx.sym.var('d'), num_hidden=3).save(P + '-symbol.json')",
                    ["-symbol.json"]),
    "save_parameters": ("net.save_parameters(P + '.params')", [".params"]),
    "export": ("net.export(P)", ["-symbol.json", "-0000.params"]),
    "save_checkpoint": ("mx.model.save_checkpoint(P, 1, mx.sym.var('d') * 2, "
                        "{'w': mx.nd.ones((3,))}, {})", ["-symbol.json", "-0001.params"]),
    "Trainer.save_states": ("t = mx.gluon.Trainer(net.collect_params(), 'adam')\n"
                            "with mx.autograd.record():\n    y = net(mx.nd.ones((2, 4)))\n"
                            "y.backward()\nt.step(2)\nt.save_states(P + '.states')", [".states"]),
}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_writer_killed_before_its_rename_leaves_the_old_file(tmp_path, name):
    code, suffixes = WRITERS[name]
    prefix = str(tmp_path / "m")
    targets = [prefix + s for s in suffixes]
    for t in targets:
        with open(t, "wb") as f:
            f.write(b"the old file")
    # the child dies the moment its first temporary is complete (at the rename)
    child = textwrap.dedent(f"""
        import os, signal
        from mxc._core import atomic_write
        def die(tmp, target):
            assert os.path.getsize(tmp) > 0
            os.kill(os.getpid(), signal.SIGKILL)
        atomic_write.commit = die
    """) + _SETUP + f"P = {prefix!r}\n" + code + "\n"
    p = subprocess.run([sys.executable, "-c", child], cwd=ROOT, capture_output=True, timeout=120)
    assert p.returncode == -signal.SIGKILL, p.stderr.decode()[-2000:]
    for t in targets:
        assert open(t, "rb").read() == b"the old file"
    left = _temporaries(tmp_path)
    assert len(left) == 1 and left[0].startswith(".m")
    # the same write here: complete files, and the dead child's temporary is gone
    ns = {"P": prefix}
    exec(_SETUP + code, ns)                     # noqa: S102  (the test's own code)
    assert _temporaries(tmp_path) == []
    for t in targets:
        assert open(t, "rb").read() != b"the old file"


def test_nd_save_killed_mid_write_by_a_signal(tmp_path):
    """SIGKILL from outside while the child writes 64 MB to the file (not at a chosen point)."""
    target = str(tmp_path / "big.params")
    mx.nd.save(target, {"old": mx.nd.ones((2,))})
    child = textwrap.dedent(f"""
        import sys, mxc as mx
        a = mx.nd.ones((4096, 4096))
        a.wait_to_read()
        print("ready", flush=True)
        while True:
            mx.nd.save({target!r}, {{"a": a}})
    """)
    p = subprocess.Popen([sys.executable, "-c", child], cwd=ROOT, stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"ready"
    import time
    deadline = time.monotonic() + 60
    while not _temporaries(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.005)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    p.stdout.close()
    got = mx.nd.load(target)                    # the old file, or one whole new one
    assert list(got) in (["old"], ["a"])
    if list(got) == ["a"]:
        assert got["a"].shape == (4096, 4096) and float(got["a"].sum().asscalar()) == 4096 * 4096
    mx.nd.save(target, {"b": mx.nd.zeros((1,))})
    assert _temporaries(tmp_path) == []
    np.testing.assert_array_equal(mx.nd.load(target)["b"].asnumpy(), [0])
