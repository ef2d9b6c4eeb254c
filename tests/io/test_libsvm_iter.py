"""LibSVMIter against MXNet 1.9.1: batches (CSR data, dense or CSR labels), pad, index and the
round_batch epochs, whole files and byte-split parts (tests/data/libsvm/make_fixture.py wrote
the files and what MXNet made of them); bad lines are clear errors."""
import importlib.util
import json
import os

import numpy as np
import pytest

import mxc as mx

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "libsvm")
_spec = importlib.util.spec_from_file_location("_libsvm_fixture",
                                               os.path.join(HERE, "cases.py"))
_fixture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixture)
with open(os.path.join(HERE, "expected.json")) as _f:
    EXPECTED = json.load(_f)


@pytest.mark.parametrize("case", sorted(_fixture.CASES))
def test_batches_as_mxnet(case):
    kw = dict(_fixture.CASES[case])
    for key in ("data_libsvm", "label_libsvm"):
        if key in kw:
            kw[key] = os.path.join(HERE, kw[key])
    it = mx.io.LibSVMIter(**kw)
    want = EXPECTED[case]
    assert list(it.provide_data[0].shape) == want["provide_data"]
    assert list(it.provide_label[0].shape) == want["provide_label"]
    for ep, batches in enumerate(want["epochs"]):
        if ep:
            it.reset()
        got = list(it)
        assert len(got) == len(batches)
        for b, w in zip(got, batches):
            assert b.data[0].stype == "csr"
            assert b.label[0].stype == ("csr" if "label_libsvm" in kw else "default")
            np.testing.assert_array_equal(b.data[0].asnumpy(), np.array(w["data"], np.float32))
            np.testing.assert_array_equal(b.label[0].asnumpy(), np.array(w["label"], np.float32))
            assert b.pad == w["pad"] and [int(i) for i in b.index] == w["index"]


def test_bad_input(tmp_path):
    bad = tmp_path / "bad.t"
    bad.write_text("1.0 0:0.5\n-3.0 -1:0.6 1:2.4\n")
    with pytest.raises(mx.MXNetError, match="index -1 outside"):
        mx.io.LibSVMIter(data_libsvm=str(bad), data_shape=(3,), batch_size=1)
    bad.write_text("1.0 0:0.5\n2 qid:3 1:1\n")
    with pytest.raises(mx.MXNetError, match="line 2"):
        mx.io.LibSVMIter(data_libsvm=str(bad), data_shape=(3,), batch_size=1)
    bad.write_text("1 7:1\n")
    with pytest.raises(mx.MXNetError, match=r"index 7 outside \[0, 3\)"):
        mx.io.LibSVMIter(data_libsvm=str(bad), data_shape=(3,), batch_size=1)
    with pytest.raises(mx.MXNetError, match="cannot open"):
        mx.io.LibSVMIter(data_libsvm=str(tmp_path / "missing.t"), data_shape=(3,), batch_size=1)
    with pytest.raises(mx.MXNetError, match="round_batch"):
        mx.io.LibSVMIter(data_libsvm=os.path.join(HERE, "data.t"), data_shape=(3,),
                         batch_size=2, round_batch=False)
