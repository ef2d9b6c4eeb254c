"""What the emulation tests share: mxc's kernel loader (its `source()` gives the text NVRTC
compiles) and g++ building that text against emu/cuda_fp16.h into a library to call. They use
the mxc under test (installed or built in place), so its shipped .cu files and headers."""
import ctypes
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def cuda_loader():
    from mxc.ops.cuda import loader
    return loader


def shared_include():
    """The directory holding kernels/hd_math.h: csrc/ in a source tree, a copy in the package."""
    for d in cuda_loader()._shared_dirs():
        if os.path.isfile(os.path.join(d, "kernels", "hd_math.h")):
            return d
    raise FileNotFoundError("kernels/hd_math.h is neither in csrc/ nor shipped with mxc")


def build(tmp_path_factory, name, text):
    """Compile C++ `text` (kernel sources + extern "C" wrappers) with the emulation header."""
    d = tmp_path_factory.mktemp("emu" + name)
    src, so = d / (name + ".cpp"), d / (name + ".so")
    src.write_text(text)
    subprocess.run(["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-w",
                    "-I" + os.path.join(HERE, "emu"), "-I" + shared_include(),
                    str(src), "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))
