"""Shared helpers for the ONNX tests: random parameters, onnxruntime sessions, mxc forwards.

onnxruntime is the independent reference: an exported model must compute there what mxc
computes on the same symbol and parameters."""
import numpy as np
import pytest

import mxc as mx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def session(path):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3   # no warnings about the graph on stderr
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def run_onnx(path, feeds):
    sess = session(path)
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: feeds[n] for n in names})


def random_params(sym, data_shapes, rng):
    """Random values for every argument and auxiliary state of `sym` that is not data:
    variances and BatchNorm scales positive, so every layer moves its input."""
    arg_shapes, _, aux_shapes = sym.infer_shape(**data_shapes)
    arg_types, _, aux_types = sym.infer_type(**{n: np.float32 for n in data_shapes})
    params = {}
    for names, shapes, types in ((sym.list_arguments(), arg_shapes, arg_types),
                                 (sym.list_auxiliary_states(), aux_shapes, aux_types)):
        for name, shape, dtype in zip(names, shapes, types):
            if name in data_shapes:
                continue
            if name.endswith(("var", "gamma")):
                value = rng.uniform(0.5, 1.5, shape)
            else:
                value = rng.normal(0, 0.5, shape)
            params[name] = mx.nd.array(value, dtype=dtype)
    return params


def mx_forward(sym, params, feeds):
    """mxc's outputs for `sym` in inference."""
    aux_names = set(sym.list_auxiliary_states())
    args = {k: v for k, v in params.items() if k not in aux_names}
    args.update({k: mx.nd.array(v, dtype=v.dtype) for k, v in feeds.items()})
    aux = {k: v for k, v in params.items() if k in aux_names}
    ex = sym.bind(mx.cpu(), args, aux_states=aux, grad_req="null")
    return [o.asnumpy() for o in ex.forward(is_train=False)]


def assert_close(actual, expected, rtol=1e-4):
    """float32 tolerance relative to the output's scale (long sums reorder differently)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    scale = max(float(np.abs(expected).max()), 1e-6)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)
