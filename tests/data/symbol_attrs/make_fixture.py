"""Record MXNet 1.9.1's serialisation of the operators in cases.py: for each case, the op name
and the attrs that ``tojson`` writes for the node the call made. Run with real MXNet:

    /path/to/mxnet-1.9.1/bin/python tests/data/symbol_attrs/make_fixture.py

It writes mxnet_attrs.json beside this file (temporary name, then renamed)."""
import json
import os
import sys

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cases import CASES  # noqa: E402


def main():
    out = {}
    for cid, path, nin, kwargs_src in CASES:
        fn = mx.sym
        for part in path.split("."):
            fn = getattr(fn, part)
        args = [mx.sym.var(f"x{i}") for i in range(nin)]
        try:
            sym = fn(*args, name="op", **eval(kwargs_src, {"np": np}))
        except Exception as err:    # noqa: BLE001  (recorded: mxc must refuse it too)
            out[cid] = {"error": type(err).__name__}
            continue
        node = [n for n in json.loads(sym.tojson())["nodes"] if n["name"] == "op"][0]
        out[cid] = {"op": node["op"], "attrs": node.get("attrs", {})}
    tmp = os.path.join(HERE, "mxnet_attrs.json.tmp")
    with open(tmp, "w") as f:
        json.dump({"mxnet": mx.__version__, "cases": out}, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(HERE, "mxnet_attrs.json"))


if __name__ == "__main__":
    main()
