"""Write small LibSVM files and record what MXNet 1.9.1's LibSVMIter makes of them into
expected.json (temporary name, then renamed): for each case, per batch the dense data, the
label (dense, or the CSR label densified), pad and index; two epochs. Run with real MXNet:

    /path/to/mxnet-1.9.1/bin/python tests/data/libsvm/make_fixture.py
"""
import json
import os
import sys

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cases import CASES, FILES  # noqa: E402


def main():
    for name, text in FILES.items():
        with open(os.path.join(HERE, name), "w") as f:
            f.write(text)
    out = {}
    for case, kw in CASES.items():
        kw = dict(kw, data_libsvm=os.path.join(HERE, kw["data_libsvm"]))
        if "label_libsvm" in kw:
            kw["label_libsvm"] = os.path.join(HERE, kw["label_libsvm"])
        it = mx.io.LibSVMIter(**kw)
        epochs = []
        for ep in range(2):
            if ep:
                it.reset()
            epochs.append([dict(data=b.data[0].asnumpy().tolist(),
                                label=b.label[0].asnumpy().tolist(), pad=b.pad,
                                index=[int(i) for i in b.index]) for b in it])
        out[case] = dict(epochs=epochs, provide_data=list(it.provide_data[0].shape),
                         provide_label=list(it.provide_label[0].shape))
    tmp = os.path.join(HERE, "expected.json.tmp")
    with open(tmp, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    os.replace(tmp, os.path.join(HERE, "expected.json"))


if __name__ == "__main__":
    main()
