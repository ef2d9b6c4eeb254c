"""Which operators MXNet 1.9.1 registers without FGradient, among those mxc implements
(tests/data/nograd/ops.json, read by tests/executor/test_nograd.py).

Run in two steps: the mxc python lists mxc's operators, the MXNet python probes each:
    PYTHONPATH=. python tests/data/make_nograd_ops.py list /tmp/mxc_ops.json
    /path/to/mxnet/python tests/data/make_nograd_ops.py probe /tmp/mxc_ops.json
The probe builds the operator on variables (required parameters filled with small values) and
simple_binds it with grad_req='write' and no shapes: nnvm's Gradient pass runs before shape
inference, so an operator without FGradient fails with its message and any other gets past it.
Operators that MXNet cannot build on variables this way are left out (listed as "unprobed"),
as are _backward_* operators (mxc uses them inside gradients). MXNet crashes on a few
(reset_arrays, _foreach): run the probe again until it ends, it resumes."""
import json
import os
import re
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nograd", "ops.json")


def list_ops(path):
    from mxc.ops import registry
    ops = {op.name: {"inputs": list(op.inputs), "variadic": op.variadic}
           for op in registry.all_ops() if not op.name.startswith("_backward")}
    with open(path, "w") as f:
        json.dump(ops, f)


def _value(t):
    t = t.lower()
    if "tuple" in t:
        return (0.1,) if "float" in t else (1,)
    if "int" in t:
        return 1
    if "float" in t or "double" in t:
        return 0.1
    if "bool" in t:
        return False
    return "x"


def _find(mx, name):
    mods = (mx.sym, mx.sym._internal, mx.sym.contrib, mx.sym.random, mx.sym.linalg,
            mx.sym.image, mx.sym.sparse)
    for mod in mods:
        if hasattr(mod, name):
            return getattr(mod, name)
    for pre, mod in (("_contrib_", mx.sym.contrib), ("_random_", mx.sym.random),
                     ("_linalg_", mx.sym.linalg), ("_image_", mx.sym.image)):
        if name.startswith(pre) and hasattr(mod, name[len(pre):]):
            return getattr(mod, name[len(pre):])
    return None


def _build(mx, f):
    doc = f.__doc__ or ""
    inputs = re.findall(r"^(\w+) : (?:Symbol|NDArray)(\[\])?", doc, re.M)
    kw = {}
    for _ in range(8):
        try:
            if any(star for _, star in inputs):
                return f(mx.sym.var("v0"), mx.sym.var("v1"), **kw)
            return f(**{n: mx.sym.var(n) for n, _ in inputs}, **kw)
        except Exception as e:      # noqa: BLE001  (MXNet raises several kinds)
            m = re.search(r"Required parameter (\w+) of (.+?) is not presented", str(e))
            if not m:
                return None
            kw[m.group(1)] = _value(m.group(2))
    return None


def probe(path):
    import mxnet as mx
    ops = json.load(open(path))
    state = path + ".probe"
    res = json.load(open(state)) if os.path.exists(state) else {}
    for name in sorted(ops):
        if name in res:
            continue
        res[name] = "crashed"
        json.dump(res, open(state, "w"))
        f = _find(mx, name)
        s = _build(mx, f) if f is not None else None
        if s is None or not s.list_arguments():
            res[name] = "unprobed"
            continue
        try:
            s.simple_bind(mx.cpu(), grad_req="write")
            res[name] = "gradient"
        except Exception as e:      # noqa: BLE001
            res[name] = "no FGradient" if "FGradient" in str(e) else "gradient"
    json.dump(res, open(state, "w"))
    out = {"no_fgradient": sorted(k for k, v in res.items() if v == "no FGradient"),
           "with_fgradient": sorted(k for k, v in res.items() if v == "gradient")}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    {"list": list_ops, "probe": probe}[sys.argv[1]](sys.argv[2])
