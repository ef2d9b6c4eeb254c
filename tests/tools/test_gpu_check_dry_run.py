"""The parts of tools/gpu_check.sh that a lent GPU runs, checked without one: the script parses
(bash -n), and bench_gpu_train.py runs its whole mxc code path (a ResNet-18 training step,
hybridized with static graphs, SGD momentum; AMP float16 with loss scaling) on the fake CUDA
driver of tests/_core with no-op kernels and the tests' fake cuDNN frontend (tools/bench/
_fake_gpu.py): its figures mean nothing, but a typo or an operator without a GPU launch fails
here. A second process on the same plan directory builds no plan (the "no compile on the hot
path" figure). The PyTorch peer's hand-written ResNets (for machines without torchvision) have
torchvision's parameter counts."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests._core.test_cuda_fake import fake_lib  # noqa: F401  (the fake driver fixture)

REPO = (os.environ.get("MXC_SOURCE_TREE")
        or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BENCH = os.path.join(REPO, "tools", "bench")
# the directory holding this `tests` package (the bench imports tests.ops.cuda._fake_cudnn): the
# source tree, or run_tests.sh's copy beside an installed mxc, which must not be shadowed by a
# source tree without built extensions
TESTS_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if not os.path.isfile(os.path.join(BENCH, "bench_gpu_train.py")):
    pytest.skip("tools/ is not beside these tests", allow_module_level=True)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not found")
def test_gpu_check_parses():
    subprocess.run(["bash", "-n", os.path.join(REPO, "tools", "gpu_check.sh")], check=True)


def _bench(lib, plans, *args):
    env = dict(os.environ, MXC_LIBCUDA=lib, MXC_BENCH_FAKE_GPU="1", MXC_BENCH_FAKE_CUDNN="1",
               MXC_CUDNN_PLAN_DIR=str(plans),
               PYTHONPATH=os.pathsep.join([TESTS_PARENT, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, os.path.join(BENCH, "bench_gpu_train.py"), "--smoke",
                        "--nets", "resnet18_cifar_b128", *args], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    recs = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            recs[(rec["bench"], rec["impl"])] = rec
    return recs


def test_train_bench_on_the_fake_driver(fake_lib, tmp_path):  # noqa: F811
    first = _bench(fake_lib, tmp_path / "plans")
    assert "value" in first[("resnet18_cifar_b128_train", "mxc")], first
    built = first[("process_compiles_fp32", "mxc")]
    assert built["plans_built"] > 0 and built["value"] == built["plans_built"], built
    second = _bench(fake_lib, tmp_path / "plans")
    again = second[("process_compiles_fp32", "mxc")]
    assert (again["value"], again["plans_built"]) == (0, 0), again
    assert again["plans_disk"] == built["plans_built"], (built, again)
    for precision in ("amp_fp16", "amp_bf16"):     # a process each (AMP initialises once)
        amp = _bench(fake_lib, tmp_path / "plans", "--precision", precision)
        assert "value" in amp[(f"resnet18_cifar_b128_train_{precision}", "mxc")], amp


def test_torch_resnets_without_torchvision():
    torch = pytest.importorskip("torch")
    sys.path.insert(0, BENCH)
    try:
        import bench_gpu_train
    finally:
        sys.path.remove(BENCH)
    import builtins
    real_import = builtins.__import__

    def no_torchvision(name, *a, **k):
        if name == "torchvision":
            raise ImportError(name)
        return real_import(name, *a, **k)
    builtins.__import__ = no_torchvision
    try:
        # torchvision's resnet18 / resnet50 with 1000 classes
        for depth, count in ((18, 11689512), (50, 25557032)):
            net = bench_gpu_train.torch_resnet(torch, depth, 1000)
            assert sum(p.numel() for p in net.parameters()) == count, depth
        out = bench_gpu_train.torch_resnet(torch, 18, 10)(torch.zeros(2, 3, 32, 32))
        assert tuple(out.shape) == (2, 10)
    finally:
        builtins.__import__ = real_import
