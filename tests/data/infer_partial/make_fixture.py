"""Record MXNet 1.9.1's answers for the cases in cases.py into mxnet_infer.json (temporary
name, then renamed). Run with real MXNet:

    /path/to/mxnet-1.9.1/bin/python tests/data/infer_partial/make_fixture.py
"""
import json
import os
import sys
import warnings

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cases import build, run  # noqa: E402


def main():
    warnings.simplefilter("ignore")
    legacy, np_shape = build(mx)
    out = {k: run(mx, s, shapes) for k, (s, shapes) in legacy.items()}
    with mx.np_shape(True):
        legacy, np_shape = build(mx)
        out.update({k: run(mx, s, shapes) for k, (s, shapes) in np_shape.items()})
    tmp = os.path.join(HERE, "mxnet_infer.json.tmp")
    with open(tmp, "w") as f:
        json.dump({"mxnet": mx.__version__, "cases": out}, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(HERE, "mxnet_infer.json"))


if __name__ == "__main__":
    main()
