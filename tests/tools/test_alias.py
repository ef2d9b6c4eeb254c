"""mxc-alias (mxc/tools/alias.py, mxc/mxnet_alias.py): `import mxnet` resolves to mxc after
install into a scratch site directory, every submodule import client libraries use works, the
versions differ as they should, a real MXNet is never shadowed silently, remove undoes install.
Each check runs in a fresh Python whose path holds only the scratch site and this checkout."""
import os
import subprocess
import sys
import textwrap

import pytest

from mxc.tools import alias

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# import lines of GluonNLP 0.10.0 and GluonCV 0.10.0 (and the mxnet.base/util names the issue
# lists) that need something beyond `import mxnet`
CLIENT_IMPORTS = """
from mxnet import registry
from mxnet.base import NDArrayHandle, py_str
from mxnet.base import _LIB, check_call, c_str, c_array, mx_uint, SymbolHandle
from mxnet.base import _as_list, numeric_types, string_types, integer_types
from mxnet.util import _NumpyArrayScope, _NumpyShapeScope, is_np_array
from mxnet.gluon.data.dataloader import ForkingPickler, _as_in_context
from mxnet.gluon.data.dataloader import default_mp_batchify_fn, default_batchify_fn
from mxnet.gluon.data.dataloader import DataLoader, _MultiWorkerIter
from mxnet.gluon.utils import download, check_sha1, _get_repo_file_url, replace_file
from mxnet.gluon.model_zoo.model_store import get_model_file
from mxnet.gluon.model_zoo import vision as models
from mxnet.gluon.loss import Loss, _apply_weighting, _reshape_like
from mxnet.gluon.contrib.nn import HybridConcurrent, Identity, SyncBatchNorm
from mxnet.gluon.contrib.rnn import LSTMPCell
from mxnet.gluon.data.vision import transforms, CIFAR10, ImageFolderDataset
from mxnet.image.image import _get_interp_method
from mxnet.metric import Accuracy, F1, MCC, PearsonCorrelation, CompositeEvalMetric
from mxnet.metric import EvalMetric, check_label_shapes
from mxnet.ndarray.contrib import adamw_update, mp_adamw_update
from mxnet.optimizer import Optimizer, register
from mxnet.contrib import amp
from mxnet.io import DataBatch, DataIter, ImageRecordIter
from mxnet.symbol import Symbol
from mxnet.context import cpu
import mxnet.ndarray.sparse
from mxnet.gluon import nn, rnn, contrib, Block, HybridBlock, ParameterDict
"""


def _python(site, code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([site, REPO]))
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=site,
                          capture_output=True, text=True, timeout=120)


def test_install_import_remove(tmp_path):
    site = str(tmp_path / "site")
    pkg = alias.install(site)
    assert pkg == os.path.join(site, "mxnet") and os.path.isfile(os.path.join(pkg, "__init__.py"))
    assert alias.install(site) == pkg           # installing again refreshes, no error
    res = _python(site, textwrap.dedent("""
        import warnings
        warnings.simplefilter("error")
        import mxnet as mx, mxc
        assert mx.__version__ == "1.9.1", mx.__version__
        assert mxc.__version__ != "1.9.1" and mxc.__version__ == mxc.__version__.strip()
        from mxnet.gluon import nn
        import mxnet.ndarray.sparse
        assert nn is mxc.gluon.nn and mx.ndarray.sparse is mxc.ndarray.sparse
        assert mx.nd.NDArray is mxc.nd.NDArray and mx.sym.Symbol is mxc.symbol.Symbol
        # a module keeps its own spec under the second name
        assert mxnet.ndarray.sparse.__spec__.name == "mxc.ndarray.sparse"
        assert mx.np.ones((2,)).shape == (2,)        # lazy submodules through __getattr__
        assert "gluon" in dir(mx)
        try:
            import mxnet.not_a_module
        except ModuleNotFoundError as err:
            assert "mxnet.not_a_module" in str(err)
        else:
            raise AssertionError("mxnet.not_a_module imported")
        net = nn.Dense(3, in_units=2)
        net.initialize()
        assert net(mx.nd.ones((4, 2))).shape == (4, 3)
    """) + CLIENT_IMPORTS)
    assert res.returncode == 0, res.stderr
    assert alias.status().startswith("import mxnet:")
    assert alias.remove(site) == pkg
    assert not os.path.exists(pkg)
    res = _python(site, "import mxnet")
    assert res.returncode != 0 and "No module named 'mxnet'" in res.stderr


def test_cli_and_refusals(tmp_path, capsys):
    site, real = str(tmp_path / "site"), str(tmp_path / "real")
    os.makedirs(os.path.join(real, "mxnet"))
    with open(os.path.join(real, "mxnet", "__init__.py"), "w") as f:
        f.write("__version__ = '1.9.1'\n")
    # a real MXNet in the target: neither install nor remove touch it
    assert alias.main(["install", "--target", real]) == 1
    assert "not the mxc alias" in capsys.readouterr().err
    assert alias.main(["remove", "--target", real]) == 1
    assert "not removed" in capsys.readouterr().err
    assert os.path.isfile(os.path.join(real, "mxnet", "__init__.py"))
    # a real MXNet elsewhere on the path: install refuses, naming it
    sys.path.insert(0, real)
    try:
        assert alias.main(["install", "--target", site]) == 1
        err = capsys.readouterr().err
        assert "a real MXNet is installed" in err and os.path.join(real, "mxnet") in err
    finally:
        sys.path.remove(real)
    assert not os.path.exists(os.path.join(site, "mxnet"))
    assert alias.main(["install", "--target", site]) == 0
    # a real MXNet later on the path than the alias: the alias warns that it shadows it
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([site, REPO, real]))
    res = subprocess.run([sys.executable, "-c", "import mxnet; print(mxnet.__version__)"],
                         env=env, cwd=site, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "1.9.1"
    assert "shadows another mxnet package" in res.stderr and real in res.stderr
    # files the alias did not write: remove refuses
    open(os.path.join(site, "mxnet", "extra.py"), "w").close()
    assert alias.main(["remove", "--target", site]) == 1
    assert "extra.py" in capsys.readouterr().err
    os.remove(os.path.join(site, "mxnet", "extra.py"))
    assert alias.main(["remove", "--target", site]) == 0
    assert not os.path.exists(os.path.join(site, "mxnet"))
    with pytest.raises(alias.AliasError, match="no mxc alias"):
        alias.remove(site)
