"""The README's main job keeps working: the tour runs to the end (it asserts its own results)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tests._core.test_cuda_fake import fake_lib, run  # noqa: F401  (the fake driver fixture)
from tests.ops.cuda._emulated_gpu import emu_cache  # noqa: F401

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


@pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="examples/ is not next to the tests")
def test_quickstart_runs():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "quickstart.py")],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "quickstart OK" in out.stdout


def _run_example(name, *args, timeout=600):
    pytest.importorskip("sklearn", reason="the digits examples read scikit-learn's bundled data")
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return out.stdout


@pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="examples/ is not next to the tests")
def test_train_digits_gluon_reaches_97_percent(tmp_path):
    # the README's main job: im2rec -> ImageRecordIter -> hybridized CNN -> export -> imports
    stdout = _run_example("train_digits_gluon.py", "--workdir", str(tmp_path))
    assert "train_digits_gluon OK" in stdout
    accs = [float(line.split("held-out accuracy ")[1].split(",")[0])
            for line in stdout.splitlines() if line.startswith("epoch ")]
    assert accs and accs[-1] >= 0.97
    assert (tmp_path / "digits_train.rec").exists()


@pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="examples/ is not next to the tests")
def test_train_digits_module_resumes(tmp_path):
    stdout = _run_example("train_digits_module.py", "--workdir", str(tmp_path))
    assert "train_digits_module OK" in stdout
    assert (tmp_path / "digits-module-0006.states").exists()


@pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="examples/ is not next to the tests")
def test_train_digits_dist_on_two_workers(tmp_path):
    # the README's distributed command: 2 workers over dist_sync reach the 1-process bar with
    # identical weights (the example asserts both on every worker)
    pytest.importorskip("sklearn", reason="the digits examples read scikit-learn's bundled data")
    pytest.importorskip("mpi4py", reason="dist_sync needs mxc's 'dist' extra")
    env = dict(os.environ, MXC_KVSTORE_TIMEOUT="120")
    out = subprocess.run([sys.executable, "-m", "mxc.tools.launch", "-n", "2", sys.executable,
                          os.path.join(EXAMPLES, "train_digits_dist.py"), "--workdir",
                          str(tmp_path)], capture_output=True, text=True, timeout=900, env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert out.stdout.count("train_digits_dist OK") == 2
    assert "[0] " in out.stdout and "[1] " in out.stdout


def _import_example(name):
    import importlib
    sys.path.insert(0, EXAMPLES)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(EXAMPLES)


@pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="examples/ is not next to the tests")
def test_gpu_flag_parsing_and_the_cpu_fallback():
    import io
    import mxc as mx
    ex = _import_example("train_resnet_cifar")
    a = ex.parse_args([])
    assert (a.gpu, a.batch_size, a.steps, a.model) == (False, 128, 100, "resnet18_v1")
    a = ex.parse_args(["--gpu", "--steps", "7", "--batch-size", "32"])
    assert (a.gpu, a.steps, a.batch_size) == (True, 7, 32)
    for bad in (["--steps", "0"], ["--model", "vgg11"]):
        with pytest.raises(SystemExit):
            ex.parse_args(bad)
    device = _import_example("device")
    out = io.StringIO()
    assert device.pick_context(False, out) == mx.cpu() and out.getvalue() == ""
    ctx = device.pick_context(True, out)
    if mx.context.num_gpus() > 0:
        assert ctx == mx.gpu(0) and out.getvalue() == ""
    else:
        assert ctx == mx.cpu()
        assert "--gpu: no usable GPU" in out.getvalue() and "on the CPU" in out.getvalue()


@pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="examples/ is not next to the tests")
def test_resnet_example_trains_on_the_cpu_when_no_gpu():
    # --gpu without a driver: the message, then the CPU path end to end (a few small steps)
    env = dict(os.environ, MXC_LIBCUDA="/nonexistent/libcuda.so.1")
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "train_resnet_cifar.py"),
                          "--gpu", "--steps", "4", "--batch-size", "4"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert "--gpu: no usable GPU" in out.stderr and "/nonexistent/libcuda.so.1" in out.stderr
    assert "on cpu(0)" in out.stdout and "train_resnet_cifar OK" in out.stdout
    assert "samples/s on cpu(0)" in out.stdout


_EMULATED_JOB = '''
    import sys
    sys.path.insert(0, %(examples)r)
    import train_digits_gluon as ex
    from tests.ops.cuda import _emulated_gpu
    from mxc.ops.cuda import loader
    _emulated_gpu.install(%(cache)r)
    families, kernel = set(), loader.kernel
    loader.kernel = lambda family, name, device_id=0: (families.add(family) or
                                                       kernel(family, name, device_id))
    ex.main(["--epochs", "2", "--gpu", "--workdir", %(workdir)r])
    print("families", " ".join(sorted(families)))
    print("graph launches", lib.fake_stat(15))
'''


@pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="examples/ is not next to the tests")
def test_train_digits_gluon_on_an_emulated_gpu(fake_lib, emu_cache, tmp_path):  # noqa: F811
    # the README's main job with --gpu, on the fake driver with every kernel it launches
    # compiled from its CUDA C by g++ (block reductions included: the metric's argmax, the
    # loss) and the GEMMs in numpy (tests/ops/cuda/_emulated_gpu.py): two epochs reach the
    # example's own bar, and the exported model re-imported on the GPU scores the same; then
    # again with its static graph's steps captured as CUDA graphs and replayed
    # (MXNET_ENABLE_CUDA_GRAPHS=1): the same accuracies to the last digit
    pytest.importorskip("sklearn", reason="the digits examples read scikit-learn's bundled data")
    if shutil.which("g++") is None:
        pytest.skip("g++ is needed to compile the kernels")
    runs = []
    for graphs in ("0", "1"):
        out = run(_EMULATED_JOB % dict(examples=EXAMPLES, cache=emu_cache,
                                       workdir=str(tmp_path / graphs)),
                  fake_lib, MXNET_ENABLE_CUDA_GRAPHS=graphs)
        assert "training on gpu(0)" in out and "train_digits_gluon OK" in out, out[-2000:]
        runs.append(out)
    # convolution, BatchNorm, pooling, dropout, the loss, adam, the metric's argmax
    families = runs[0].split("families ")[1].split()
    assert {"convolution", "normalization", "pooling", "random", "softmax", "optimizer_ops",
            "reduce"} <= set(families), families
    epochs = [[line.rsplit(",", 1)[0] for line in out.splitlines() if line.startswith("epoch ")]
              for out in runs]
    accs = [float(line.split("held-out accuracy ")[1]) for line in epochs[0]]
    assert len(accs) == 2 and accs[-1] >= 0.97, accs
    assert epochs[1] == epochs[0]
    launches = [int(out.split("graph launches ")[1].split()[0]) for out in runs]
    assert launches[0] == 0 and launches[1] > 50, launches


_EMULATED_RESNET = '''
    import runpy, sys
    from tests.ops.cuda import _emulated_gpu
    _emulated_gpu.install(%(cache)r)
    sys.argv = ["train_resnet_cifar.py", "--gpu", "--steps", "4", "--batch-size", "4"]
    runpy.run_path(%(script)r, run_name="__main__")
    print("graph launches", lib.fake_stat(15))
'''


@pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="examples/ is not next to the tests")
def test_resnet_example_on_an_emulated_gpu_with_cuda_graphs(fake_lib, emu_cache):  # noqa: F811
    # the ResNet-18 example on CIFAR-shaped data with --gpu on the emulated GPU, its static
    # graph's steps replayed as CUDA graphs: the losses of the same steps on the CPU
    if shutil.which("g++") is None:
        pytest.skip("g++ is needed to compile the kernels")
    script = os.path.join(EXAMPLES, "train_resnet_cifar.py")
    cpu = subprocess.run([sys.executable, script, "--steps", "4", "--batch-size", "4"],
                         capture_output=True, text=True, timeout=300)
    assert cpu.returncode == 0, cpu.stderr[-2000:]
    gpu = run(_EMULATED_RESNET % dict(cache=emu_cache, script=script), fake_lib,
              MXNET_ENABLE_CUDA_GRAPHS=1)
    assert "on gpu(0)" in gpu and "train_resnet_cifar OK" in gpu, gpu[-2000:]

    def losses(out):
        return [float(v) for v in out.split("loss ")[-1].split(",")[0].split(" -> ")]
    # batch 4 through 3x3 BatchNorms: rounding differences grow a little in 4 steps
    # (measured: 2.7561 -> 3.8650 on the CPU, 3.8635 here)
    np.testing.assert_allclose(losses(gpu), losses(cpu.stdout), rtol=2e-3)
    assert int(gpu.split("graph launches ")[1].split()[0]) > 0
