"""Symbol JSON against files real MXNet 1.9.1 wrote (tests/data/make_symbol_golden.py), both
directions: graphs built here serialize byte-for-byte as MXNet's; MXNet's files load, round-trip
and run here with MXNet's results; files written here were loaded and run by MXNet (its results
are in the npz)."""
import importlib.util
import json
import os

import numpy as np
import pytest

import mxc as mx

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
SYM = os.path.join(DATA, "symbol")
GOLD = np.load(os.path.join(DATA, "symbol_golden.npz"))


def _script():
    spec = importlib.util.spec_from_file_location("make_symbol_golden",
                                                  os.path.join(DATA, "make_symbol_golden.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _script()
NAMES = sorted(GEN.GRAPHS)


def _read(name):
    with open(os.path.join(SYM, name)) as f:
        return f.read()


@pytest.mark.parametrize("name", NAMES)
def test_built_here_serializes_as_mxnet(name):
    with mx.name.NameManager():
        sym, _ = GEN.GRAPHS[name]()
    assert sym.tojson() == _read(f"{name}-symbol.json")
    # the committed mxc-written file (MXNet loaded and ran it) is what mxc writes today
    assert sym.tojson() == _read(f"mxc_{name}-symbol.json")


@pytest.mark.parametrize("name", NAMES + ["resnet18_v1", "legacy_000800-upgraded"])
def test_mxnet_file_round_trips(name):
    text = _read(f"{name}-symbol.json")
    assert mx.sym.load_json(text).tojson() == text


def _run(sym, key, rtol=1e-4, atol=1e-5):
    args = {n: mx.nd.array(GOLD[f"{key}:arg:{n}"]) for n in sym.list_arguments()}
    aux = {n: mx.nd.array(GOLD[f"{key}:auxin:{n}"]) for n in sym.list_auxiliary_states()}
    grads = {n: mx.nd.zeros(a.shape) for n, a in args.items()}
    ex = sym.bind(mx.cpu(), args, args_grad=grads, aux_states=aux)
    outs = ex.forward(is_train=True)
    ogs = [mx.nd.array(GOLD[f"{key}:ograd{i}"]) for i in range(len(outs))]
    ex.backward(ogs)
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), GOLD[f"{key}:out{i}"], rtol=rtol, atol=atol)
    for n, g in ex.grad_dict.items():
        np.testing.assert_allclose(g.asnumpy(), GOLD[f"{key}:grad:{n}"], rtol=rtol, atol=atol,
                                   err_msg=n)
    for n, a in ex.aux_dict.items():
        np.testing.assert_allclose(a.asnumpy(), GOLD[f"{key}:auxout:{n}"], rtol=rtol, atol=atol,
                                   err_msg=n)


@pytest.mark.parametrize("name", NAMES)
def test_mxnet_file_runs_as_in_mxnet(name):
    sym = mx.sym.load(os.path.join(SYM, f"{name}-symbol.json"))
    assert sym.list_arguments() == list(GOLD[f"{name}:arguments"])
    assert sym.list_outputs() == list(GOLD[f"{name}:outputs"])
    assert sym.list_auxiliary_states() == list(GOLD[f"{name}:aux"])
    _run(sym, name)


@pytest.mark.parametrize("name", NAMES)
def test_file_written_here_ran_in_mxnet(name):
    key = "mxc_" + name
    sym = mx.sym.load(os.path.join(SYM, f"{key}-symbol.json"))
    assert sym.list_arguments() == list(GOLD[f"{key}:arguments"])
    _run(sym, key)


def test_resnet18_v1_from_the_model_zoo():
    sym = mx.sym.load(os.path.join(SYM, "resnet18_v1-symbol.json"))
    assert sym.list_arguments() == list(GOLD["resnet18_v1:arguments"])
    assert sym.list_auxiliary_states() == list(GOLD["resnet18_v1:aux"])
    arg_shapes, out_shapes, _ = sym.infer_shape(data=(1, 3, 32, 32))
    assert [list(s) for s in arg_shapes] == json.loads(str(GOLD["resnet18_v1:arg_shapes"]))
    assert [list(s) for s in out_shapes] == json.loads(str(GOLD["resnet18_v1:out_shapes"]))


def test_legacy_08_file_is_upgraded_as_mxnet_does():
    sym = mx.sym.load(os.path.join(SYM, "legacy_000800-symbol.json"))
    assert sym.tojson() == _read("legacy_000800-upgraded-symbol.json")
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert sym.attr_dict()["fc_weight"]["__lr_mult__"] == "2"
