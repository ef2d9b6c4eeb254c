"""What the emulation tests share: the source tree's kernel loader (its `source()` gives the text
NVRTC compiles) and g++ building that text against emu/cuda_fp16.h into a library to call."""
import ctypes
import importlib.util
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
_LOADER = None


def cuda_loader():
    """mxc/ops/cuda/loader.py of this source tree (not an installed mxc: the .cu files and
    csrc/ headers compiled here must be the ones under test)."""
    global _LOADER
    if _LOADER is None:
        spec = importlib.util.spec_from_file_location(
            "_mxc_cuda_loader", os.path.join(ROOT, "mxc", "ops", "cuda", "loader.py"))
        _LOADER = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_LOADER)
    return _LOADER


def build(tmp_path_factory, name, text):
    """Compile C++ `text` (kernel sources + extern "C" wrappers) with the emulation header."""
    d = tmp_path_factory.mktemp("emu" + name)
    src, so = d / (name + ".cpp"), d / (name + ".so")
    src.write_text(text)
    subprocess.run(["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-w",
                    "-I" + os.path.join(HERE, "emu"), "-I" + os.path.join(ROOT, "csrc"),
                    str(src), "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))
