"""The fuzz harness in CI: every seed and every crash the fuzzer ever found replays through its
target (a refusal is MXNetError or ValueError, anything else fails), and, where atheris is
installed, each target is fuzzed for a moment from its seeds."""
import importlib.util
import os
import subprocess
import sys

import pytest

from tests.fuzz import targets

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _inputs(target):
    for kind in ("corpus", "crashes"):
        d = os.path.join(HERE, kind, target)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                yield f"{kind}/{target}/{name}", os.path.join(d, name)


INPUTS = [(t, label, path) for t in sorted(targets.TARGETS) for label, path in _inputs(t)]


def test_every_target_has_seeds():
    assert {t for t, _, _ in INPUTS} == set(targets.TARGETS)


@pytest.mark.parametrize("target,label,path", INPUTS, ids=[i[1] for i in INPUTS])
def test_input_replays(target, label, path, tmp_path, monkeypatch):
    monkeypatch.setattr(targets, "SCRATCH", str(tmp_path))
    with open(path, "rb") as f:
        data = f.read()
    targets.run(target, data)
    if label.startswith("corpus/"):
        targets.TARGETS[target](data)       # a seed is a good input: it parses without error


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris not installed")
@pytest.mark.parametrize("target", sorted(targets.TARGETS))
def test_fuzz_briefly(target, tmp_path):
    crashes = tmp_path / "crashes"
    p = subprocess.run([sys.executable, "-m", "tests.fuzz", "--target", target, "--seconds", "1",
                        "--crashes", str(crashes)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Done" in p.stderr and not os.listdir(crashes), p.stderr[-3000:]
