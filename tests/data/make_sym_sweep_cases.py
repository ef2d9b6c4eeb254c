"""Records one small call of every operator the operator tests make, for the sym-vs-nd sweep.

    cd <repo> && python tests/data/make_sym_sweep_cases.py [--keep-recorded]

Runs tests/ops (and tests/ndarray, which reach more operators) under pytest with a recorder
on the registry's run (every call that is not a C fast path) and on the C fast paths: the first call of each operator (backward
kernels aside) whose inputs are all dense, small (<= 4096 elements each) and float or integer is kept. Writes
tests/data/sym_sweep_cases.json (operator, attribute strings, input dtypes) and
sym_sweep_cases.npz (the inputs). tests/executor/test_sym_sweep.py runs every case through
``mx.nd`` + autograd and through ``mx.sym`` + ``bind`` and compares. Rerun it when operators
are added; nothing of MXNet is involved (the reference is mxc's own imperative path).

Operators no test calls in a recordable way (creation operators and samplers take no input
arrays; a few contrib operators are only called on large inputs) get the hand-written calls of
``extra_cases``, added when the recording lacks them. ``--keep-recorded`` skips the pytest run
and keeps the recorded cases of the existing files (for adding extra cases only).
"""
import json
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAX_ELEMENTS = 4096


class Recorder:
    def __init__(self):
        self.cases = {}

    def keep(self, op, attrs, inputs):
        from mxc.ops.params import attrs_to_strings
        if op.name in self.cases or not inputs or op.name.startswith("_backward_"):
            return            # backward kernels are reached through their forward's gradient
        if op.name == "Custom":
            return            # runs a Python operator a test registered (tests/ops/test_custom.py)
        arrays = []
        for x in inputs:
            if getattr(x, "_sparse", False) or x.size > MAX_ELEMENTS or x.size == 0:
                return
            if np.dtype(x.dtype).kind not in "fiub":
                return
            arrays.append(x.asnumpy().copy())
        try:
            strings = attrs_to_strings(attrs)
            json.dumps(strings)
        except (TypeError, ValueError):
            return
        # keep calls whose symbolic form takes the same inputs (an operator's forward may call
        # itself internally on part of its inputs)
        import mxc as mx
        names = [f"in{j}" for j in range(len(arrays))]
        try:
            sym = getattr(mx.sym, op.name)(*[mx.sym.var(n) for n in names], **strings)
            if sorted(sym.list_arguments() + sym.list_auxiliary_states()) != sorted(names):
                return
            sym.infer_shape(**{n: a.shape for n, a in zip(names, arrays)})
        except Exception:
            return
        self.cases[op.name] = (strings, arrays)

    def pytest_sessionstart(self, session):
        from mxc.ndarray import register
        from mxc._core import handle
        rec = self
        run = register.run

        def recording_run(op, inputs, attrs, out=None, ctx=None):
            result = run(op, inputs, attrs, out, ctx)
            try:
                rec.keep(op, attrs, inputs)
            except Exception:          # recording never changes what the tests see
                pass
            return result
        register.run = recording_run

        def wrap(name, nin):
            fast = getattr(handle, name)

            def recording(fk, *args):
                r = fast(fk, *args)
                if r is not None and getattr(fk, "op", None) is not None:
                    try:
                        attrs = dict(fk.attrs or {})
                        if name == "fast_scalar":
                            attrs["scalar"] = float(args[1])
                        rec.keep(fk.op, fk.op.parse(attrs), list(args[:nin]))
                    except Exception:
                        pass
                return r
            setattr(handle, name, recording)
        wrap("fast_unary", 1)
        wrap("fast_binary", 2)
        wrap("fast_scalar", 1)


def extra_cases():
    """{operator: (attributes, inputs)}: one small call each for operators the recording
    misses. Samplers are compared value for value: the sweep seeds both runs alike."""
    rng = np.random.RandomState(0)
    anchors = 3         # MultiProposal: len(scales) * len(ratios)

    def u(shape, dtype=np.float32, lo=-1.0, hi=1.0):
        return rng.uniform(lo, hi, shape).astype(dtype)
    shape = {"shape": (3, 4)}
    return {
        "_zeros": ({"shape": (2, 3)}, []),
        "_ones": ({"shape": (2, 3), "dtype": "float64"}, []),
        "_full": ({"shape": (2, 3), "value": 2.5}, []),
        "_arange": ({"start": 1, "stop": 7, "step": 2}, []),
        "_linspace": ({"start": 0, "stop": 1, "num": 5}, []),
        "_eye": ({"N": 3, "M": 4, "k": 1}, []),
        "_random_uniform": (dict(shape, low=-1, high=2), []),
        "_random_normal": (dict(shape, loc=1, scale=2), []),
        "_random_gamma": (dict(shape, alpha=2, beta=1), []),
        "_random_exponential": (dict(shape, lam=2), []),
        "_random_poisson": (dict(shape, lam=3), []),
        "_random_negative_binomial": (dict(shape, k=3, p=0.4), []),
        "_random_generalized_negative_binomial": (dict(shape, mu=2, alpha=0.5), []),
        "_random_randint": (dict(shape, low=0, high=9), []),
        "_sample_unique_zipfian": ({"range_max": 50, "shape": (3, 6)}, []),
        "_identity_with_attr_like_rhs": ({}, [u((2, 3)), u((2, 3))]),
        "_contrib_hawkesll": ({}, [u((2, 3), lo=0.5, hi=2.0), u((3,), lo=0.1, hi=0.5),
                                   u((3,), lo=0.5, hi=2.0), u((2, 3), lo=0.0, hi=1.0),
                                   u((2, 4), lo=0.1, hi=1.0),
                                   np.array([[0, 2, 1, 2], [1, 1, 0, 2]], np.int32),
                                   np.array([4, 3], np.float32), np.array([5.0, 5.0], np.float32)]),
        "_contrib_dequantize": ({"out_type": "float32"},
                                [rng.randint(0, 256, (3, 4)).astype(np.uint8),
                                 np.array([-1.0], np.float32), np.array([2.0], np.float32)]),
        "_contrib_PSROIPooling": ({"spatial_scale": 0.5, "output_dim": 2, "pooled_size": 2},
                                  [u((1, 8, 6, 6)),
                                   np.array([[0, 0, 0, 8, 8], [0, 2, 2, 10, 9]], np.float32)]),
        "_contrib_MultiProposal": ({"rpn_pre_nms_top_n": 20, "rpn_post_nms_top_n": 5,
                                    "rpn_min_size": 1, "scales": (2.0,),
                                    "ratios": (1.0, 2.0, 0.5), "feature_stride": 4},
                                   [u((2, 2 * anchors, 4, 4), lo=0.0),
                                    u((2, 4 * anchors, 4, 4), lo=-0.2, hi=0.2),
                                    np.array([[16, 16, 1], [16, 16, 1]], np.float32)]),
        "_contrib_box_nms": ({"id_index": 0, "overlap_thresh": 0.3},
                             [np.concatenate([rng.randint(0, 2, (2, 5, 1)),
                                              rng.uniform(0, 1, (2, 5, 1)),
                                              np.tile(rng.uniform(0, 2, (2, 5, 2)), 2)
                                              + np.array([0, 0, 1, 1])], -1).astype(np.float32)]),
        "_contrib_box_iou": ({"format": "center"}, [u((2, 3, 4), lo=0.5, hi=2),
                                                    u((5, 4), lo=0.5, hi=2)]),
        "_contrib_bipartite_matching": ({"threshold": 0.1}, [u((2, 4, 3), lo=0.0)]),
        "_contrib_box_encode": ({}, [np.array([[1, 0, 1], [1, 1, -1]], np.float32),
                                     np.array([[0, 1, 1], [1, 0, 0]], np.float32),
                                     np.tile(u((2, 3, 2), lo=0, hi=1), 2)
                                     + np.array([0, 0, 1, 1], np.float32),
                                     np.tile(u((2, 2, 2), lo=0, hi=1), 2)
                                     + np.array([0, 0, 2, 1], np.float32),
                                     np.zeros(4, np.float32), np.ones(4, np.float32)]),
        "_contrib_box_decode": ({"std0": 0.1, "std2": 0.2},
                                [u((2, 3, 4)), u((1, 3, 4), lo=0.5, hi=2)]),
        "_contrib_MultiBoxPrior": ({"sizes": (0.5, 0.2), "ratios": (1.0, 2.0)},
                                   [u((1, 2, 3, 4))]),
        "_contrib_gradientmultiplier": ({"scalar": 0.5}, [u((3, 4))]),
        "_contrib_ModulatedDeformableConvolution": (
            {"kernel": (2, 2), "pad": (1, 1), "num_filter": 2},
            [u((1, 2, 3, 3)), u((1, 8, 4, 4), lo=-1.5, hi=1.5), u((1, 4, 4, 4), lo=0.0),
             u((2, 2, 2, 2)), u((2,))]),
        "_random_pdf_uniform": ({}, [u((2, 3)), u((2,), lo=-3, hi=-2), u((2,), lo=2, hi=3)]),
        "_random_pdf_normal": ({"is_log": True}, [u((2, 3)), u((2,)), u((2,), lo=0.5, hi=2)]),
        "_random_pdf_gamma": ({}, [u((2, 3), lo=0.2, hi=2), u((2,), lo=0.5, hi=2),
                                   u((2,), lo=0.5, hi=2)]),
        "_random_pdf_exponential": ({}, [u((2, 3), lo=0.2, hi=2), u((2,), lo=0.5, hi=2)]),
        "_random_pdf_poisson": ({}, [rng.randint(0, 5, (2, 3)).astype(np.float32),
                                     u((2,), lo=0.5, hi=3)]),
        "_random_pdf_negative_binomial": ({}, [rng.randint(0, 5, (2, 3)).astype(np.float32),
                                               u((2,), lo=1, hi=3), u((2,), lo=0.2, hi=0.8)]),
        "_random_pdf_generalized_negative_binomial": (
            {}, [rng.randint(0, 5, (2, 3)).astype(np.float32), u((2,), lo=0.5, hi=2),
                 u((2,), lo=0.5, hi=2)]),
        "_random_pdf_dirichlet": ({"is_log": True}, [rng.dirichlet(np.ones(3), (2, 4))
                                                     .astype(np.float32),
                                                     u((2, 3), lo=0.5, hi=2)]),
        "mp_lamb_update_phase1": ({"t": 1, "wd": 0.01},
                                  [u((3, 4), np.float16), u((3, 4), np.float16),
                                   np.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32),
                                   u((3, 4))]),
        # added after the last full recording (a full rerun records it from test_elemwise.py)
        "erfinv": ({}, [u((3, 4), lo=-0.9, hi=0.9)]),
        "_contrib_MultiBoxTarget": ({"negative_mining_ratio": 2.0},
                                    [np.array([[[0.1, 0.1, 0.4, 0.4], [0.3, 0.2, 0.7, 0.6],
                                                [0.5, 0.5, 0.9, 0.8], [0.0, 0.6, 0.3, 0.9]]],
                                              np.float32),
                                     np.array([[[1, 0.2, 0.1, 0.5, 0.5], [-1] * 5],
                                               [[0, 0.5, 0.6, 0.9, 0.9], [2, 0, 0.5, 0.3, 1]]],
                                              np.float32),
                                     u((2, 3, 4))]),
        "_contrib_MultiBoxDetection": ({"threshold": 0.2},
                                       [np.round(u((2, 3, 4), lo=0, hi=1), 1),
                                        u((2, 16), lo=-0.5, hi=0.5),
                                        np.array([[[0.1, 0.1, 0.4, 0.4], [0.15, 0.1, 0.45, 0.4],
                                                   [0.5, 0.5, 0.9, 0.8], [0.0, 0.6, 0.3, 0.9]]],
                                                 np.float32)]),
        "_contrib_round_ste": ({}, [u((3, 4), lo=-3, hi=3)]),
        "_contrib_sign_ste": ({}, [u((3, 4))]),
        "_scatter_elemwise_div": ({}, [u((3, 4)), u((3, 4), lo=0.5, hi=2)]),
        "_scatter_plus_scalar": ({"scalar": 1.5}, [u((3, 4))]),
        "_scatter_minus_scalar": ({"scalar": 1.5}, [u((3, 4))]),
        "_contrib_ModulatedDeformableConvolution": (
            {"kernel": (2, 2), "num_filter": 2, "pad": (1, 1)},
            [u((1, 2, 3, 3)), u((1, 8, 4, 4), lo=-1.3, hi=1.3), u((1, 4, 4, 4), lo=0, hi=1),
             u((2, 2, 2, 2)), u((2,))]),
        # the int8 operators run through mx.sym by tests/ops/test_quantized_ops.py as well
        "_contrib_quantized_batch_norm": (
            {"min_calib_range": -2.0, "max_calib_range": 2.0},
            [rng.randint(-128, 128, (2, 3, 2, 2)).astype(np.int8), u((3,)), u((3,)), u((3,)),
             u((3,), lo=0.5, hi=2), np.array([-1.0], np.float32), np.array([1.5], np.float32)]),
        "_contrib_quantized_elemwise_mul": (
            {}, [rng.randint(-128, 128, (3, 4)).astype(np.int8),
                 rng.randint(-128, 128, (3, 4)).astype(np.int8), np.array([-1.0], np.float32),
                 np.array([1.0], np.float32), np.array([-2.0], np.float32),
                 np.array([0.5], np.float32)]),
        "_contrib_quantized_embedding": (
            {"input_dim": 5, "output_dim": 3},
            [rng.randint(0, 5, (2, 3)).astype(np.float32),
             rng.randint(-128, 128, (5, 3)).astype(np.int8), np.array([-1.0], np.float32),
             np.array([1.0], np.float32)]),
        # numpy-semantics arithmetic (composites): float, mixed int/bool/float operands
        "_npi_add": ({}, [u((3, 4)), u((4,))]),
        "_npi_subtract": ({}, [u((3, 4)), rng.randint(-3, 4, (3, 4)).astype(np.int32)]),
        "_npi_multiply": ({}, [u((2, 3)), rng.uniform(0, 1, (2, 3)) > 0.5]),
        "_npi_true_divide": ({}, [u((2, 3)), u((2, 3), lo=0.5, hi=2.0)]),
        "_npi_mod": ({}, [u((2, 3)), u((3,), lo=0.5, hi=2.0)]),
        "_npi_power": ({}, [u((2, 3), lo=0.5, hi=2.0), u((2, 3))]),
        "_npi_add_scalar": ({"scalar": 1.5, "is_int": False}, [u((2, 3))]),
        "_npi_subtract_scalar": ({"scalar": 0.5, "is_int": False},
                                 [rng.randint(-3, 4, (2, 3)).astype(np.int32)]),
        "_npi_rsubtract_scalar": ({"scalar": 2.0, "is_int": True}, [u((2, 3))]),
        "_npi_multiply_scalar": ({"scalar": 3.0, "is_int": True},
                                 [rng.uniform(0, 1, (2, 3)) > 0.5]),
        "_npi_true_divide_scalar": ({"scalar": 4.0, "is_int": True},
                                    [rng.randint(-3, 4, (2, 3)).astype(np.int32)]),
        "_npi_rtrue_divide_scalar": ({"scalar": 2.0, "is_int": False},
                                     [u((2, 3), lo=0.5, hi=2.0)]),
        "_npi_mod_scalar": ({"scalar": 0.75, "is_int": False}, [u((2, 3))]),
        "_npi_rmod_scalar": ({"scalar": 5.5, "is_int": False}, [u((2, 3), lo=0.5, hi=2.0)]),
        "_npi_power_scalar": ({"scalar": 3.0, "is_int": True}, [u((2, 3))]),
        "_npi_rpower_scalar": ({"scalar": 2.0, "is_int": False}, [u((2, 3))]),
    }


def _load_recorded():
    with open(os.path.join(HERE, "sym_sweep_cases.json")) as f:
        meta = json.load(f)
    npz = np.load(os.path.join(HERE, "sym_sweep_cases.npz"))
    return {c["op"]: (c["attrs"], [npz[f"c{i}_{j}"] for j in range(len(c["dtypes"]))])
            for i, c in enumerate(meta) if not c.get("extra")}


def main():
    sys.path.insert(0, ROOT)
    if "--keep-recorded" in sys.argv:
        cases = _load_recorded()
    else:
        rec = Recorder()
        pytest.main([os.path.join(ROOT, "tests", "ops"), os.path.join(ROOT, "tests", "ndarray"),
                     os.path.join(ROOT, "tests", "test_operator.py"),
                     "-q", "-p", "no:cacheprovider", "--deselect",
                     "tests/ops/test_shape.py::test_every_registered_op_is_tested"],
                    plugins=[rec])
        cases = dict(rec.cases)
    from mxc.ops import registry
    from mxc.ops.params import attrs_to_strings
    extra = set()
    for name, (attrs, inputs) in extra_cases().items():
        if name not in cases:
            op = registry.get(name)
            strings = {k: v for k, v in attrs_to_strings(op.parse(attrs)).items()
                       if not (k == "ctx" and v == "")}     # the default context
            cases[name] = (strings, inputs)
            extra.add(name)
    meta, arrays = [], {}
    for i, (name, (strings, inputs)) in enumerate(sorted(cases.items())):
        meta.append({"op": name, "attrs": strings,
                     "dtypes": [np.dtype(a.dtype).name for a in inputs]})
        if name in extra:
            meta[-1]["extra"] = True
        for j, a in enumerate(inputs):
            arrays[f"c{i}_{j}"] = a
    with open(os.path.join(HERE, "sym_sweep_cases.json"), "w") as f:
        json.dump(meta, f, indent=0, sort_keys=True)
    np.savez_compressed(os.path.join(HERE, "sym_sweep_cases.npz"), **arrays)
    print(f"{len(meta)} operators recorded")


if __name__ == "__main__":
    main()
