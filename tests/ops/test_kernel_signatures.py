"""Kernel signatures (registry.Kernel): each kernel's attribute slots are declared once by name,
and the C kernel tables (csrc/kernels/*.h) and the CUDA kernels (mxc/ops/cuda/*.cu) are
checked against the declarations here, so the three cannot drift apart by position.

The C side is read after the preprocessor (gcc -E): for each table entry of a declared kernel,
the literal slot indices its function (and the functions it names) reads, c->fattr[k] or a copy
x->f[k] (minus the slots the kernel fills itself from its inputs), must need no more slots than
are declared, and a declaration must not hold more slots than the kernel reads (reads guarded
by ``nfattr > k ?`` or ``&&`` are optional). Runs (slots named "x*", as long as the data has dims) are
read in loops, so only their fixed slots are checked."""
import os
import re
import shutil
import subprocess

import pytest

import mxc  # noqa: F401  (registers every operator, and so every kernel)
from mxc.ops import registry

from .cuda._emu import cu_parameters

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CSRC = os.path.join(ROOT, "csrc")
HAVE_SOURCES = os.path.isdir(os.path.join(CSRC, "kernels")) and shutil.which("gcc") is not None


# ---- the C side ------------------------------------------------------------------------------
def _header_of(family):
    with open(os.path.join(ROOT, "mxc", "ops", "cpu", family + ".pyx")) as f:
        return re.search(r'cdef extern from "kernels/([^"]+)"', f.read()).group(1)


_TEXT = {}


def _preprocessed(header):
    if header not in _TEXT:
        out = subprocess.run(["gcc", "-E", "-P", "-I", CSRC, os.path.join(CSRC, "kernels", header)],
                             check=True, capture_output=True, text=True).stdout
        text = out.replace('" "', "")          # "unary:" "exp" -> "unary:exp"
        bodies = {}
        for m in re.finditer(r"\b(\w+)\s*\([^;{}()]*\)\s*\{", text):
            if m.group(1) in ("if", "for", "while", "switch"):
                continue
            i, depth = m.end(), 1
            while depth:
                depth += (text[i] == "{") - (text[i] == "}")
                i += 1
            bodies[m.group(1)] = text[m.end():i]
        entries = {}
        for name, fn in re.findall(r'\{\s*"([^"]+)"\s*,[^{}]*?(\w+)\s*\}', text):
            entries.setdefault(name, set()).add(fn)
        _TEXT[header] = (bodies, entries)
    return _TEXT[header]


def slots_read(bodies, fn):
    """{"iattr"/"fattr": (required indices, optional indices)} C kernel `fn` reads."""
    seen, todo = set(), [fn]
    req = {"iattr": set(), "fattr": set()}
    opt = {"iattr": set(), "fattr": set()}
    own = {"iattr": set(), "fattr": set()}
    which = {"i": "iattr", "f": "fattr"}
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        b = bodies.get(f, "")
        for m in re.finditer(r"n(iattr|fattr)\s*>\s*(\d+)\s*(?:\?|&&)\s*\w+->\1\[(\d+)\]", b):
            opt[m.group(1)].add(int(m.group(3)))
        for m in re.finditer(r"\b(?:c|call)->(iattr|fattr)\[(\d+)\]", b):
            req[m.group(1)].add(int(m.group(2)))
        for m in re.finditer(r"\bx(?:->|\.)(i|f)\[(\d+)\](\s*=(?!=))?", b):
            (own if m.group(3) else req)[which[m.group(1)]].add(int(m.group(2)))
        for alias, kind in re.findall(r"\b(\w+)\s*=\s*(?:c|call)->(iattr|fattr)\s*;", b):
            req[kind] |= {int(k) for k in re.findall(r"\b%s\[(\d+)\]" % alias, b)}
        # a local copy filled in a loop: f[k] = k < c->nfattr ? c->fattr[k] : 0.0
        for alias, _, kind in re.findall(r"\b(\w+)\[(\w+)\]\s*=\s*[^;]*?\b(?:c|call)->"
                                         r"(iattr|fattr)\[\2\]", b):
            # (not its declaration, double f[8])
            req[kind] |= {int(k) for k in re.findall(r"(?<!double )(?<!int64_t )\b%s\[(\d+)\]"
                                                     % alias, b)}
        todo += [g for g in set(re.findall(r"\b(\w+)\b", b)) if g in bodies and g not in seen]
    return {k: (req[k] - opt[k] - own[k], opt[k] - own[k]) for k in req}


def signature_errors(kern):
    """What is wrong between Kernel `kern` and its C table entries (a list of messages)."""
    bodies, entries = _preprocessed(_header_of(kern.family))
    fns = entries.get(kern.name)
    if not fns:
        return [f"{kern.family}/{kern.name}: no entry in the C kernel table"]
    errors = []
    for kind, names in (("iattr", kern.ints or ()), ("fattr", kern.floats or ())):
        fixed = [n for n in names if not n.endswith("*")]
        runs = len(fixed) < len(names)
        for fn in sorted(fns):
            req, opt = slots_read(bodies, fn)[kind]
            need = max(req, default=-1) + 1
            most = max(req | opt, default=-1) + 1
            # a run's values are read in loops: only its fixed slots are counted then
            if (not need <= len(names) <= most) if not runs else len(fixed) > most:
                errors.append(f"{kern.family}/{kern.name}: declares {kind} {names}; the C "
                              f"kernel {fn} reads {sorted(req)} (optional {sorted(opt)})")
                break
    return errors


def _declared():
    return [k for k in registry.kernels() if k.declared()]


@pytest.mark.skipif(not HAVE_SOURCES, reason="needs csrc/ and gcc (a source tree)")
def test_every_declared_kernel_matches_its_c_table_entries():
    kernels = _declared()
    assert len(kernels) > 150
    errors = [e for k in kernels for e in signature_errors(k)]
    assert errors == []


@pytest.mark.skipif(not HAVE_SOURCES, reason="needs csrc/ and gcc (a source tree)")
def test_the_c_check_finds_a_slot_too_many_or_missing():
    sgd = registry.declared_kernel("optimizer_ops", "opt:sgd")
    assert sgd.floats == ("lr", "wd", "rescale_grad", "clip_gradient")
    short = registry.Kernel("optimizer_ops", "opt:sgd", ints=(), floats=sgd.floats[:3])
    long = registry.Kernel("optimizer_ops", "opt:sgd", ints=(), floats=sgd.floats + ("x",))
    assert signature_errors(short) and signature_errors(long)
    assert signature_errors(registry.Kernel("softmax", "softmax", ints=("a",), floats=("t",)))
    assert signature_errors(registry.Kernel("elemwise", "no_such_kernel", ints=(), floats=()))


# ---- the CUDA side ---------------------------------------------------------------------------
# the .cu spells some float slots short (its arithmetic reads better so)
_SHORT = {"rescale_grad": "rs", "clip_gradient": "cg", "clip_grad": "cg", "momentum": "mo",
          "beta1": "b1", "beta2": "b2", "epsilon": "eps", "gamma1": "g1", "gamma2": "g2",
          "clip_weights": "cw", "lamda1": "l1", "wd_lh": "wdlh", "beta1_t": "b1t",
          "beta2_t": "b2t", "lower_bound": "lb", "upper_bound": "ub"}


def test_optimizer_cu_kernels_take_the_declared_floats_in_order():
    from mxc.ops.cuda.optimizer_ops import updates_of
    kernels = [k for k in _declared() if k.family == "optimizer_ops"]
    assert len(kernels) == 20
    for k in kernels:
        params = cu_parameters("optimizer_ops", "mxc_%s_update" % updates_of(k.name[4:]))
        doubles = [n for t, n in params if t == "double"]
        assert doubles == [_SHORT.get(f, f) for f in k.floats], k.name


def test_a_misordered_float_is_found():
    params = cu_parameters("optimizer_ops", "mxc_adam_update")
    swapped = ("lr", "beta2", "beta1", "epsilon", "wd", "rescale_grad", "clip_gradient")
    assert [n for t, n in params if t == "double"] != [_SHORT.get(f, f) for f in swapped]


# ---- slots by name -------------------------------------------------------------------------------
def test_slots_read_by_name_and_runs():
    k = registry.Kernel("t", "k", ints=("axis", "begin*", "step*"), floats=("lr",))
    ia = k.ints_of((1, 10, 20, 30, 2, 2, 2))
    assert ia.axis == 1 and ia.begin == (10, 20, 30) and ia.step == (2, 2, 2)
    assert k.floats_of((0.5,)).lr == 0.5 and ia == (1, 10, 20, 30, 2, 2, 2)
    with pytest.raises(AttributeError, match="no slot 'axes'"):
        ia.axes
    with pytest.raises(TypeError, match="runs"):
        registry.Kernel("t", "k", ints=("begin*", "axis"))


def test_a_kernel_is_declared_once():
    registry.kernel("test_family", "k1", ints=("a",), floats=())
    registry.kernel("test_family", "k1", ints=("a",), floats=())      # the same again: fine
    with pytest.raises(TypeError, match="declared twice"):
        registry.kernel("test_family", "k1", ints=("b",), floats=())
    with pytest.raises(TypeError, match="fill names no slot"):
        registry.kernel_forward("elemwise", "clip", fill={"a_max": None, "lo": None})
    registry._KERNELS.pop(("test_family", "k1"))


def test_kernel_forward_fills_slots_by_name():
    fwd = registry.kernel_forward("optimizer_ops", "opt:msgd")
    k = fwd.kernel
    assert k.ints == ("has_mom", "preloaded")
    fill = registry._filler(k, {"has_mom": lambda a, i, o: 1})
    attrs = {"lr": 0.5, "wd": 0.25, "momentum": 0.9, "rescale_grad": 2.0, "clip_gradient": -1.0,
             "preloaded": 3}
    assert fill(attrs, [], []) == ((1, 3), (0.5, 0.25, 0.9, 2.0, -1.0))
