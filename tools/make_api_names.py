"""Writes tools/api_names_mxnet191.json: the public names of MXNet 1.9.1's user-facing modules,
the reference tools/api_coverage.py measures mxc against.

Run once with the oracle's interpreter (real MXNet 1.9.1):
    /work/mxnet-oracle/bin/python tools/make_api_names.py

A module's public names are those of dir(module) without a leading underscore, less what the
module merely imported from elsewhere: other modules (stdlib, numpy, or mxnet's own
implementation modules, unless listed in MODULES themselves) and functions or classes of the
stdlib (namedtuple, ...) or numpy (except in mx.np/mx.npx, whose numpy dtypes are their API).
"""
import importlib
import json
import os
import sys
import types

import mxnet as mx

# user-facing modules, as users write them (mx.nd rather than mxnet.ndarray)
MODULES = [
    "mx", "mx.nd", "mx.nd.contrib", "mx.nd.linalg", "mx.nd.random", "mx.nd.sparse",
    "mx.nd.image", "mx.sym", "mx.sym.contrib", "mx.sym.linalg", "mx.sym.random",
    "mx.sym.sparse", "mx.sym.image", "mx.np", "mx.np.random", "mx.np.linalg", "mx.npx",
    "mx.autograd", "mx.io", "mx.image", "mx.recordio", "mx.gluon", "mx.gluon.nn",
    "mx.gluon.rnn", "mx.gluon.loss", "mx.gluon.data", "mx.gluon.data.vision",
    "mx.gluon.data.vision.transforms", "mx.gluon.model_zoo", "mx.gluon.model_zoo.vision",
    "mx.gluon.utils", "mx.gluon.contrib", "mx.gluon.contrib.nn", "mx.gluon.contrib.rnn",
    "mx.gluon.contrib.cnn", "mx.gluon.contrib.data", "mx.gluon.contrib.estimator",
    "mx.optimizer", "mx.lr_scheduler", "mx.metric", "mx.initializer", "mx.kvstore",
    "mx.module", "mx.model", "mx.callback", "mx.monitor", "mx.profiler", "mx.random",
    "mx.context", "mx.engine", "mx.executor", "mx.visualization", "mx.test_utils", "mx.util",
    "mx.base", "mx.operator", "mx.runtime", "mx.name", "mx.attribute", "mx.rnn",
    "mx.registry", "mx.rtc", "mx.library", "mx.onnx", "mx.contrib", "mx.contrib.autograd",
    "mx.contrib.amp", "mx.contrib.io", "mx.contrib.onnx", "mx.contrib.quantization",
    "mx.contrib.svrg_optimization", "mx.contrib.svrg_optimization.svrg_module",
    "mx.contrib.svrg_optimization.svrg_optimizer", "mx.contrib.tensorboard", "mx.contrib.text",
    "mx.contrib.text.embedding", "mx.contrib.text.vocab", "mx.contrib.text.utils",
]

_CANONICAL = {"mx": "mxnet", "nd": "ndarray", "sym": "symbol", "np": "numpy",
              "npx": "numpy_extension"}


def resolve(path):
    """The module `path` names: attribute by attribute from mxnet, importing when needed."""
    mod = mx
    parts = path.split(".")[1:]
    for i, part in enumerate(parts):
        nxt = getattr(mod, part, None)
        if not isinstance(nxt, types.ModuleType):
            name = ".".join(["mxnet"] + [_CANONICAL.get(p, p) for p in parts[:i + 1]])
            nxt = importlib.import_module(name)
        mod = nxt
    return mod


def foreign(value, allow_numpy):
    """A function or class the module imported from the stdlib or numpy. (MXNet's generated
    operator functions say __module__ 'ndarray' or 'symbol': theirs.)"""
    if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        return False
    root = (getattr(value, "__module__", None) or "").split(".")[0]
    if root == "numpy":
        return not allow_numpy
    return root in sys.stdlib_module_names and root != "builtins"


def public_names(path, mod):
    allow_numpy = path.startswith(("mx.np", "mx.npx"))
    names = []
    for n in dir(mod):
        if n.startswith("_"):
            continue
        v = getattr(mod, n, None)
        if isinstance(v, types.ModuleType):
            if "%s.%s" % (path, n) in MODULES:
                names.append(n)
            continue
        if foreign(v, allow_numpy):
            continue
        names.append(n)
    return sorted(names)


def main():
    out = {"mxnet_version": mx.__version__, "modules": {}}
    for path in MODULES:
        out["modules"][path] = public_names(path, resolve(path))
    dest = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api_names_mxnet191.json")
    tmp = dest + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")
    os.replace(tmp, dest)
    total = sum(len(v) for v in out["modules"].values())
    print("wrote %d names of %d modules to %s" % (total, len(MODULES), dest), file=sys.stderr)


if __name__ == "__main__":
    main()
