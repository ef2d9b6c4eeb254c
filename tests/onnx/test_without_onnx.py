"""Without the onnx package, mx.onnx still imports and says what to install when used."""
import sys

import pytest

import mxc as mx


def test_missing_onnx_package_is_named(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnx", None)   # `import onnx` now raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'mxc\[onnx\]'"):
        mx.onnx.export_model(mx.sym.relu(mx.sym.var("data")), {}, [(1, 2)],
                             onnx_file_path=str(tmp_path / "m.onnx"))
    with pytest.raises(ImportError, match="onnx"):
        mx.contrib.onnx.import_model(str(tmp_path / "m.onnx"))
    assert not (tmp_path / "m.onnx").exists()
