"""Writes tests/data/conv_golden.npz: Convolution, Deconvolution, Pooling and UpSampling cases
computed by real MXNet 1.9.1 (forward outputs and input gradients for a random head gradient).

Run with the MXNet oracle's interpreter:
    /work/mxnet-oracle/bin/python tests/data/make_conv_golden.py
Every case runs twice, in two processes: with MXNet's default CPU build path (MKLDNN) and with
MKLDNN switched off (MXNET_MKLDNN_ENABLED=0: the reference loops of src/operator/nn). Cases that
MKLDNN cannot run (Deconvolution with target_shape: "could not create a descriptor", after which
the process keeps failing) are run natively only. Each stored case i has ``{i}/op``,
``{i}/params`` (JSON), ``{i}/mode`` ("mkldnn" or "native"), ``{i}/in{k}``, ``{i}/out``,
``{i}/head`` and ``{i}/grad{k}`` (float32 arrays)."""
import json
import os
import subprocess
import sys

import mxnet as mx
import numpy as np

rng = np.random.default_rng(20261123)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def ties(*shape):
    """Small integers: many equal values inside one pooling window."""
    return rng.integers(0, 3, size=shape).astype(np.float32)


CASES = [
    # Convolution
    ("Convolution", [r(2, 4, 6, 5), r(6, 2, 3, 3), r(6)],
     dict(kernel=(3, 3), stride=(2, 1), pad=(1, 1), dilate=(1, 2), num_filter=6, num_group=2)),
    ("Convolution", [r(2, 3, 9), r(4, 3, 3)],
     dict(kernel=(3,), stride=(2,), pad=(1,), num_filter=4, no_bias=True)),
    ("Convolution", [r(1, 2, 4, 5, 4), r(3, 2, 2, 3, 2), r(3)],
     dict(kernel=(2, 3, 2), stride=(1, 2, 1), pad=(1, 0, 1), num_filter=3)),
    ("Convolution", [r(2, 8, 4, 4), r(4, 8, 1, 1), r(4)], dict(kernel=(1, 1), num_filter=4)),
    ("Convolution", [r(2, 3, 7, 7), r(5, 3, 3, 3), r(5)],
     dict(kernel=(3, 3), stride=(2, 2), num_filter=5)),
    # Deconvolution
    ("Deconvolution", [r(2, 4, 3, 4), r(4, 3, 3, 3), r(3)],
     dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 0), num_filter=3, no_bias=False)),
    ("Deconvolution", [r(2, 3, 5), r(3, 2, 3)],
     dict(kernel=(3,), stride=(2,), pad=(1,), num_filter=2)),
    ("Deconvolution", [r(1, 4, 4, 4), r(4, 1, 3, 3)],
     dict(kernel=(3, 3), dilate=(2, 2), num_filter=2, num_group=2)),
    ("Deconvolution", [r(1, 2, 2, 3, 2), r(2, 2, 2, 2, 2), r(2)],
     dict(kernel=(2, 2, 2), stride=(2, 1, 2), num_filter=2, no_bias=False)),
    # Pooling
    ("Pooling", [r(2, 3, 6, 6)], dict(kernel=(2, 2), stride=(2, 2), pool_type="max")),
    ("Pooling", [r(2, 3, 7, 6)], dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")),
    ("Pooling", [ties(2, 2, 5, 5)], dict(kernel=(3, 3), stride=(1, 1), pool_type="max")),
    ("Pooling", [r(2, 3, 7, 6)], dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
    ("Pooling", [r(2, 3, 7, 6)], dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                                     count_include_pad=False)),
    ("Pooling", [r(1, 2, 7, 7)], dict(kernel=(3, 3), stride=(2, 2), pool_type="avg",
                                     pooling_convention="full")),
    ("Pooling", [r(1, 2, 6, 7)], dict(kernel=(2, 3), stride=(2, 2), pool_type="max",
                                     pooling_convention="full")),
    ("Pooling", [r(2, 3, 6, 5)], dict(kernel=(2, 2), stride=(1, 2), pool_type="sum")),
    ("Pooling", [r(2, 3, 6, 5)], dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)),
    ("Pooling", [np.abs(r(2, 3, 6, 5)) + 0.5], dict(kernel=(3, 2), stride=(2, 2), pool_type="lp",
                                                     p_value=3)),
    ("Pooling", [r(2, 3, 6, 5)], dict(kernel=(2, 2), stride=(2, 1), pool_type="lp", p_value=1)),
    ("Pooling", [r(2, 4, 5, 6)], dict(global_pool=True, pool_type="avg")),
    ("Pooling", [r(2, 4, 5, 6)], dict(kernel=(1, 1), global_pool=True, pool_type="max")),
    ("Pooling", [r(2, 3, 9)], dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="max")),
    ("Pooling", [r(2, 3, 9)], dict(kernel=(3,), stride=(2,), pool_type="avg")),
    ("Pooling", [r(1, 2, 4, 5, 6)], dict(kernel=(2, 2, 3), stride=(2, 1, 2), pool_type="avg")),
    ("Pooling", [r(1, 2, 4, 5, 6)], dict(kernel=(2, 3, 2), stride=(1, 2, 2), pad=(1, 1, 0),
                                        pool_type="max")),
    ("Pooling", [r(2, 6, 5, 3)], dict(kernel=(3, 2), stride=(2, 2), pool_type="max",
                                     layout="NHWC")),
    ("Pooling", [r(2, 6, 5, 3)], dict(kernel=(3, 2), stride=(2, 1), pad=(1, 0), pool_type="avg",
                                     layout="NHWC")),
    # UpSampling
    ("UpSampling", [r(2, 3, 3, 4)], dict(scale=2, sample_type="nearest")),
    ("UpSampling", [r(1, 2, 2, 3), r(1, 1, 4, 6)], dict(scale=2, sample_type="nearest")),
    ("UpSampling", [r(1, 2, 2, 3), r(1, 2, 4, 6)],
     dict(scale=2, sample_type="nearest", multi_input_mode="sum")),
    ("UpSampling", [r(2, 3, 3, 4), r(3, 1, 4, 4)],
     dict(scale=2, sample_type="bilinear", num_filter=3)),
    ("UpSampling", [r(1, 2, 3, 3), r(2, 1, 5, 5)],
     dict(scale=3, sample_type="bilinear", num_filter=2)),
]
NATIVE_ONLY = [
    ("Deconvolution", [r(1, 2, 3, 3), r(2, 2, 4, 4)],
     dict(kernel=(4, 4), stride=(2, 2), target_shape=(6, 6), num_filter=2)),
    ("Deconvolution", [r(1, 2, 3, 3), r(2, 2, 3, 3), r(2)],
     dict(kernel=(3, 3), stride=(2, 2), target_shape=(6, 5), num_filter=2, no_bias=False)),
]


def run(op, inputs, params):
    xs = [mx.nd.array(x, dtype=np.float32) for x in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, op)(*xs, **params)
    head = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(mx.nd.array(head))
    return y.asnumpy(), head, [x.grad.asnumpy() for x in xs]


def compute(mode, path):
    """Run the cases in this process (MKLDNN on or off as the environment says) into `path`."""
    cases = CASES + (NATIVE_ONLY if mode == "native" else [])
    data = {}
    i = 0
    for op, inputs, params in cases:
        try:
            out, head, grads = run(op, inputs, params)
        except mx.base.MXNetError as e:       # MXNet cannot run this case: leave it out
            print(f"{mode}: skipped {op} {params}: {str(e).splitlines()[0][:120]}")
            continue
        data[f"{i}/op"] = np.array(op)
        data[f"{i}/params"] = np.array(json.dumps(params))
        data[f"{i}/mode"] = np.array(mode)
        for k, x in enumerate(inputs):
            data[f"{i}/in{k}"] = x
            data[f"{i}/grad{k}"] = grads[k]
        data[f"{i}/out"] = out
        data[f"{i}/head"] = head
        i += 1
    data["count"] = np.array(i)
    np.savez(path, **data)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    merged, n = {}, 0
    for mode in ("mkldnn", "native"):
        tmp = os.path.join(here, f"_conv_golden_{mode}.npz")
        env = dict(os.environ, MXNET_MKLDNN_ENABLED="1" if mode == "mkldnn" else "0")
        subprocess.check_call([sys.executable, os.path.abspath(__file__), mode, tmp], env=env)
        with np.load(tmp) as f:
            for i in range(int(f["count"])):
                for key in f.files:
                    if key.startswith(f"{i}/"):
                        merged[f"{n}/" + key.split("/", 1)[1]] = f[key]
                n += 1
        os.remove(tmp)
    merged["count"] = np.array(n)
    path = os.path.join(here, "conv_golden.npz")
    np.savez_compressed(path, **merged)
    print(f"wrote {n} cases to {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        compute(sys.argv[1], sys.argv[2])
    else:
        main()
