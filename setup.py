"""Build mxc's Cython extensions.

Every ``mxc/**/*.pyx`` is an extension (one module per file, so adding an operator family is
adding a file). Flags: ``-O3`` and OpenMP when ``-fopenmp`` compiles and links here
(``MXC_NO_OPENMP=1`` opts out); ``MXC_DEBUG=1`` turns Cython's bounds checks back on;
``MXC_BUILD_ONLY=pattern[,pattern]`` builds only the modules whose dotted name contains a
pattern (handy while working on one module).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py as _build_py
from setuptools.command.build_ext import build_ext as _build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def openmp_flags():
    """Return (compile, link) flags for OpenMP, or empty lists when the compiler lacks it."""
    if os.environ.get("MXC_NO_OPENMP") == "1":
        return [], []
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    cc = cc.split()[0]
    if shutil.which(cc) is None:
        return [], []
    src = "#include <omp.h>\nint main(void){int n=0;\n#pragma omp parallel reduction(+:n)\nn+=1;\nreturn n>0?0:1;}\n"
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, "probe.c")
        with open(c, "w") as f:
            f.write(src)
        ok = subprocess.call([cc, "-fopenmp", c, "-o", os.path.join(tmp, "probe")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0
    return (["-fopenmp"], ["-fopenmp"]) if ok else ([], [])


_INCLUDE = re.compile(r'(?:cdef extern from|#include)\s+"([^"]+\.h)"')


def header_deps(path, seen=None):
    """Headers under csrc/ that `path` includes, followed transitively."""
    seen = set() if seen is None else seen
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for inc in _INCLUDE.findall(text):
        h = os.path.join("csrc", inc)
        if os.path.exists(h) and h not in seen:
            seen.add(h)
            header_deps(h, seen)
    return seen


def extensions():
    omp_c, omp_l = openmp_flags()
    only = [p for p in os.environ.get("MXC_BUILD_ONLY", "").split(",") if p]
    exts = []
    for path in sorted(glob.glob(os.path.join("mxc", "**", "*.pyx"), recursive=True)):
        name = path[:-4].replace(os.sep, ".")
        if only and not any(p in name for p in only):
            continue
        exts.append(Extension(
            name, [path],
            include_dirs=[numpy.get_include(), os.path.join(HERE, "csrc")],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
            # -fno-math-errno: sqrtf and friends never set errno, so loops with them vectorise;
            # -fno-trapping-math: nothing reads the FP exception flags, so loops with selects
            # between float results (the float16 conversions) vectorise too. Neither changes a
            # value (no reassociation); gcc still contracts multiply-adds where a target clone
            # has FMA (docs/architecture.md, float16 on the CPU).
            extra_compile_args=["-O3", "-fno-math-errno", "-fno-trapping-math",
                                "-Wno-unused-function"] + omp_c,
            extra_link_args=omp_l,
        ))
    debug = os.environ.get("MXC_DEBUG") == "1"
    # kernels live in headers: a changed header rebuilds exactly the modules that include it
    # (csrc/mxc/ holds the contracts that .pxd files declare: every module depends on them)
    contracts = set(glob.glob(os.path.join("csrc", "mxc", "*.h")))
    for e in exts:
        e.depends = sorted(header_deps(e.sources[0]) | contracts)
    return cythonize(
        exts,
        nthreads=int(os.environ.get("MXC_BUILD_JOBS", os.cpu_count() or 1)),
        compiler_directives={
            "language_level": 3,
            "boundscheck": debug,
            "wraparound": debug,
            "cdivision": not debug,
            "initializedcheck": debug,
            "embedsignature": True,
        },
        compile_time_env={"MXC_HAVE_OPENMP": bool(omp_c)},
    )


class build_ext(_build_ext):
    """Compiles the extensions side by side (MXC_BUILD_JOBS, default every core): pip passes no
    -j, and one after another the 30-odd modules took 190-220 s of a 16-core GPU machine's
    15-minute lease."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = int(os.environ.get("MXC_BUILD_JOBS", os.cpu_count() or 1))


def cuda_shared_headers():
    """The csrc/ headers that the CUDA sources include (arithmetic shared by the CPU and CUDA
    kernels: hd_math.h, rnn_cell_math.h...), followed transitively, and half.h (the CPU's
    float16, which the kernel tests' CUDA emulation header uses for __half)."""
    deps = {os.path.join("csrc", "kernels", "half.h")}
    for path in glob.glob(os.path.join("mxc", "ops", "cuda", "**", "*.cu*"), recursive=True):
        header_deps(path, deps)
    return sorted(deps)


class build_py(_build_py):
    """Also ships the csrc/ headers the CUDA sources include inside the package, under
    mxc/ops/cuda/include/shared/, where mxc/ops/cuda/loader.py finds them in an installed mxc."""

    def run(self):
        super().run()
        shared = os.path.join(self.build_lib, "mxc", "ops", "cuda", "include", "shared")
        for h in cuda_shared_headers():
            dst = os.path.join(shared, os.path.relpath(h, "csrc"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(os.path.join(HERE, h), dst)


setup(ext_modules=extensions(), cmdclass={"build_py": build_py, "build_ext": build_ext})
