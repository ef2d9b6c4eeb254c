"""What the emulation tests share: mxc's kernel loader (its `source()` gives the text NVRTC
compiles) and g++ building that text against emu/cuda_fp16.h into a library to call. They use
the mxc under test (installed or built in place), so its shipped .cu files and headers."""
import ctypes
import hashlib
import os
import re
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


def emulation_command():
    """g++ building kernel sources + extern "C" wrappers with the emulation header into a
    shared library (the source and -o OUT follow). -U_FORTIFY_SOURCE: the fortified longjmp
    refuses the jumps between a block's thread stacks (emu/mxc_emu_threads.h)."""
    return ["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-w", "-U_FORTIFY_SOURCE",
            "-I" + os.path.join(HERE, "emu"), "-I" + shared_include()]


def emulation_fingerprint():
    """A hash of the emulation headers (not part of a kernel's text: a library cached by its
    text must be rebuilt when they change)."""
    h = hashlib.sha1()
    d = os.path.join(HERE, "emu")
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            h.update(name.encode() + f.read())
    return h.hexdigest()[:16]


def build(tmp_path_factory, name, text):
    """Compile C++ `text` with the emulation header; the loaded library."""
    d = tmp_path_factory.mktemp("emu" + name)
    src, so = d / (name + ".cpp"), d / (name + ".so")
    src.write_text(text)
    subprocess.run(emulation_command() + [str(src), "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))


# ---- a CPU stand-in for the device launcher: any launch dict of launch_spec -------------------
# g++ compiles a family's source plus one wrapper per name expression: the wrapper runs the
# kernel as every thread of (grid, block) (mxc_emu::run: a block's threads meet at barriers),
# unpacking its arguments from an array of pointers by the parameter types the compiler deduces
# from the template instance, so the launch's (kind, value) list is passed exactly as the
# device launcher packs it. A wrapper returns NULL, or what went wrong (a deadlock, say).
PACKED = r"""
#include <cstdint>
#include <utility>
#include <type_traits>
template <class P> static P mxc_emu_untag(P v) {   // the fake driver's device addresses
  if constexpr (std::is_pointer<P>::value)
    return (P)((uintptr_t)v & ~((uintptr_t)1 << 62));
  else
    return v;
}
template <class... P, std::size_t... I>
static void mxc_emu_call(void (*f)(P...), void **a, std::index_sequence<I...>) {
  f(mxc_emu_untag(*(typename std::remove_reference<P>::type *)a[I])...);
}
template <class... P> static void mxc_emu_packed(void (*f)(P...), void **a) {
  mxc_emu_call(f, a, std::index_sequence_for<P...>{});
}
"""


def packed_wrapper(cname, name):
    """extern "C" const char *cname(grid, block, args): kernel `name` over a launch."""
    return ('extern "C" const char *%s(unsigned g, unsigned b, void **a) { return mxc_emu::run('
            'g, b, [&] { mxc_emu_packed(%s, a); }); }' % (cname, name))


class Launcher:
    """Runs launch dicts of one or more families' kernels on the CPU."""

    def __init__(self, tmp_path_factory, tag, names_by_family):
        L = cuda_loader()
        srcs, wrappers, self.fn_of = [], [], {}
        for i, (family, names) in enumerate(sorted(names_by_family.items())):
            src = L.source(family)
            # every family repeats "using namespace mxc;" after common.cuh: keep the first text
            # whole, the others from that line on (their own helpers come after it)
            srcs.append(src if i == 0 else src.split("using namespace mxc;", 1)[1])
            for name in names:
                cname = "k%d" % len(self.fn_of)
                self.fn_of[(family, name)] = cname
                wrappers.append(packed_wrapper(cname, name))
        self.lib = build(tmp_path_factory, tag, "\n".join(srcs) + PACKED + "\n".join(wrappers))
        for cname in self.fn_of.values():
            getattr(self.lib, cname).restype = ctypes.c_char_p

    def run(self, launch, inputs, outputs, ws=None, grid=None, block=None):
        keep, ptrs = [], []
        for kind, v in launch["args"]:
            if kind in ("in", "out"):
                arr = (inputs if kind == "in" else outputs)[v]
                val = ctypes.c_void_p(arr.ctypes.data)
            elif kind == "ws":
                val = ctypes.c_void_p(ws.ctypes.data + int(v))
            elif kind == "ptr":
                val = ctypes.c_void_p(int(v) or None)
            elif kind == "bytes":
                val = ctypes.create_string_buffer(bytes(v), len(v))
            else:
                val = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "u8": ctypes.c_uint8,
                       "u16": ctypes.c_uint16, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64,
                       "f32": ctypes.c_float, "f64": ctypes.c_double}[kind](v)
            keep.append(val)
            ptrs.append(ctypes.cast(ctypes.pointer(val), ctypes.c_void_p)
                        if kind != "bytes" else ctypes.cast(val, ctypes.c_void_p))
        arr = (ctypes.c_void_p * max(1, len(ptrs)))(*ptrs)
        fn = getattr(self.lib, self.fn_of[(launch["family"], launch["name"])])
        err = fn(ctypes.c_uint(grid or launch["grid"][0]),
                 ctypes.c_uint(block or launch["block"][0]), arr)
        if err:
            raise RuntimeError("%s: %s" % (launch["name"], err.decode()))

    def run_spec(self, spec, inputs, outputs, grid=None, block=None):
        return run_spec(spec, inputs, outputs,
                        lambda launch, ws: self.run(launch, inputs, outputs, ws, grid, block))


def run_spec(spec, inputs, outputs, run_launch):
    """Every launch of a spec in order through ``run_launch(launch, workspace)``, with a zeroed
    workspace of the spec's size (and the spec's check first, with numpy: returns its message,
    or None after the launches), as the device worker runs them."""
    import numpy as np
    check = spec.get("check")
    if check is not None:
        msg = check(np, inputs)
        if msg:
            return msg
    ws = np.zeros(max(8, int(spec.get("workspace", 0))), np.uint8)
    for launch in spec.get("launches", [spec]):
        run_launch(launch, ws)
    return None


def cu_parameters(family, template):
    """[(type, name)] of `template`'s parameters in mxc/ops/cuda/<family>.cu."""
    from mxc.ops.cuda import loader
    m = re.search(r"__global__\s+void\s+%s\s*\(([^)]*)\)" % re.escape(template),
                  loader.source(family))
    assert m, f"{template} is not a kernel of {family}.cu"
    out = []
    for p in m.group(1).split(","):
        p = " ".join(p.split())
        name = re.search(r"(\w+)$", p).group(1)
        out.append((p[:-len(name)].strip(), name))
    return out
