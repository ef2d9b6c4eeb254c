"""``mx.contrib.quantization``: INT8 models from float32 ones, as MXNet 1.9.1's
python/mxnet/contrib/quantization.py with its C++ graph pass (quantize_graph_pass.cc):

- ``quantize_model(sym, arg_params, aux_params, ...)``: rewrites the symbol (Convolution and
  FullyConnected become ``_contrib_quantized_*`` followed by ``_contrib_requantize``; relu
  Activation, max/avg Pooling, Flatten, Concat (dim > 0) and elemwise_add (requantized too)
  between them run on int8; ``_contrib_quantize_v2``
  before the first quantized node of a float value, ``_contrib_dequantize`` after the last),
  quantizes the weights and biases offline (``<name>_quantize``, ``_min``, ``_max``) and, with
  ``calib_mode`` 'naive' (the min/max of each layer's output over ``calib_data``) or 'entropy'
  (the threshold of least KL divergence between a layer's histogram and its quantization),
  writes the thresholds into the quantize/requantize nodes as ``min_calib_range`` /
  ``max_calib_range``.
- ``quantize_graph`` / ``calib_graph``: the same in two steps with a collector in between.
- ``quantize_net_v2`` / ``quantize_net``: a Gluon HybridBlock in, a quantized SymbolBlock out.

The rewritten graph is MXNet's without a subgraph backend (``MXNET_SUBGRAPH_BACKEND=NONE``):
MXNet's oneDNN build would also fuse operators (``_sg_mkldnn_conv``) first, which mxc does not
do. BatchNorm (int8 in its own calibrated range), elemwise_mul (requantized) and float32 Embedding
(int8 rows of an int8 weight; the indices stay float) are quantized as MXNet's oneDNN build does;
RNN stays float32.
"""
import logging
import os
import shutil
import tempfile
import warnings

import numpy as np

from .. import ndarray
from ..base import py_str
from ..context import Context, cpu
from ..io import DataBatch, DataDesc, DataIter
from ..module import Module
from ..ndarray import load as nd_load
from ..ndarray import save as nd_save
from ..ops import registry as _registry
from ..symbol import Symbol
from ..symbol import load as sym_load
from ..symbol.symbol import _Node, _topo

__all__ = ["quantize_model", "quantize_graph", "calib_graph", "quantize_net", "quantize_net_v2",
           "combine_histogram"]

_QUANTIZE = "_contrib_quantize_v2"
_DEQUANTIZE = "_contrib_dequantize"
_REQUANTIZE = "_contrib_requantize"


# ---- which operators are quantized (MXNet's FQuantizedOp / FQuantizable / FNeedRequantize) -------
def _quantized_form(node):
    """(quantized op name, must, needs requantize) for a node mxc can run on int8, else None."""
    op, a = node.op.name, node.parsed
    if op == "Convolution":
        layout = a.get("layout")
        if len(a["kernel"]) in (1, 2) and layout in (None, "NCW", "NCHW"):
            return "_contrib_quantized_conv", True, True
    elif op == "FullyConnected":
        return "_contrib_quantized_fully_connected", True, True
    elif op == "Activation" and a["act_type"] == "relu":
        return "_contrib_quantized_act", False, False
    elif op == "Pooling" and a["pool_type"] in ("max", "avg"):
        layout = a.get("layout")
        if layout is None or layout.startswith("NC"):
            return "_contrib_quantized_pooling", False, False
    elif op == "Flatten":
        return "_contrib_quantized_flatten", False, False
    elif op == "elemwise_add":
        return "_contrib_quantized_elemwise_add", False, True
    elif op == "Concat" and a["dim"] > 0:
        return "_contrib_quantized_concat", False, False
    elif op == "BatchNorm":
        return "_contrib_quantized_batch_norm", False, False
    elif op == "elemwise_mul":
        return "_contrib_quantized_elemwise_mul", False, True
    elif op == "Embedding" and a["dtype"] == "float32":
        return "_contrib_quantized_embedding", False, False
    return None


def _keeps_float(op_name, index):
    """Whether input `index` of a quantized `op_name` stays float32, without a quantize node or
    min/max inputs (MXNet's FAvoidQuantizeInput): BatchNorm's gamma, beta and statistics,
    Embedding's indices."""
    if op_name == "BatchNorm":
        return index != 0
    if op_name == "Embedding":
        return index == 0
    return False


# quantized operators calibrated on their own output (FNeedCalibrateOutput): the thresholds go
# into the operator's attributes rather than into a requantize node after it
_CALIBRATES_OUTPUT = frozenset(("_contrib_quantized_batch_norm",))


# operators MXNet registers with FListOutputNames (its nn operators, the legacy OperatorProperty
# ones, a few more): a quantize node after one is named after the output ("act_output_quantize"),
# after any other operator after the output's index ("exp0_0_quantize")
_LISTS_OUTPUT_NAMES = frozenset((
    "Activation", "BatchNorm", "Concat", "Convolution", "CTCLoss", "Deconvolution", "Dropout",
    "FullyConnected", "GroupNorm", "LayerNorm", "LRN", "Pooling", "softmax", "softmin",
    "SoftmaxActivation", "UpSampling", "LeakyReLU", "RNN", "SoftmaxOutput", "Custom",
    "elemwise_add", "make_loss", "_contrib_ROIAlign", "_contrib_RROIAlign", "_contrib_index_array",
    "_contrib_hawkesll", "_contrib_BatchNormWithReLU", "im2col", "col2im", "BatchNorm_v1",
    "BilinearSampler", "Correlation", "Crop", "GridGenerator", "IdentityAttachKLSparseReg",
    "InstanceNorm", "L2Normalization", "MakeLoss", "Pad", "ROIPooling", "SVMOutput",
    "SequenceLast", "SequenceMask", "SequenceReverse", "SliceChannel", "SpatialTransformer",
    "SwapAxis", "_contrib_DeformableConvolution", "_contrib_DeformablePSROIPooling",
    "_contrib_MultiBoxDetection", "_contrib_MultiBoxPrior", "_contrib_MultiBoxTarget",
    "_contrib_MultiProposal", "_contrib_PSROIPooling", "_contrib_Proposal",
    "_contrib_SyncBatchNorm", "_contrib_count_sketch", "_contrib_fft", "_contrib_ifft"))


def _output_name(node, index):
    """nnvm's GetOutputName: a variable's name, else "<node>_<output name>"."""
    return node.output_names()[index]


def _mark(nodes, excluded_names, excluded_ops, mode):
    """{id(node): quantized form} of the nodes to quantize (MarkQuantizedNodes)."""
    forms, must, support, users = {}, [], set(), {}
    for n in nodes:
        for e in n.inputs:
            users.setdefault(id(e[0]), []).append(n)
        if n.op is None or n.name in excluded_names or n.op.name in excluded_ops:
            continue
        form = _quantized_form(n)
        if form is None:
            continue
        forms[id(n)] = form
        (must.append(n) if form[1] else support.add(id(n)))
    if mode == "full":
        return forms
    if mode != "smart":
        raise ValueError(f"unrecognized quantize mode: {mode}")
    # smart: a supporting operator is quantized only between quantized operators, reached from
    # one through its inputs and from one through its outputs
    from_in, from_out = set(), set()
    for seen, step in ((from_in, lambda n: [e[0] for e in n.inputs]),
                       (from_out, lambda n: users.get(id(n), []))):
        queue = list(must)
        while queue:
            n = queue.pop()
            for m in step(n):
                if id(m) in support and id(m) not in seen:
                    seen.add(id(m))
                    queue.append(m)
    for i in support - (from_in & from_out):
        del forms[i]
    return forms


def _new(op_name, name, attrs, inputs):
    node = _Node(_registry.get(op_name), name, dict(attrs), list(inputs))
    return node


def _quantize_symbol(sym, ctx=None, excluded_symbols=None, excluded_operators=None,
                     offline_params=None, quantized_dtype="int8", quantize_mode="smart",
                     quantize_granularity="tensor-wise"):
    """(quantized Symbol, names of the float outputs to calibrate), as MXNet's QuantizeGraph.

    quantize_granularity 'channel-wise' rewrites the graph as 'tensor-wise' does: in MXNet 1.9.1
    only oneDNN's fused operators (_sg_mkldnn_conv, _sg_mkldnn_fully_connected, which mxc does
    not make) carry per-channel weight scales, so its graph and parameters are the same."""
    if (quantize_granularity == "channel-wise" and isinstance(ctx, Context)
            and ctx.device_type == "gpu"):
        raise ValueError("`channel-wise` quantization option is not supported yet by GPU, please "
                         "set quantize_granularity to `tensor-wise` when quantizing model.")
    src_nodes = _topo(sym._outputs)
    forms = _mark(src_nodes, set(excluded_symbols or ()), set(excluded_operators or ()),
                  quantize_mode)
    mirror, reverse, qentry = {}, {}, {}

    def dequantize(qnode, index, name):
        return _new(_DEQUANTIZE, name, {},
                    [(qnode, index, 0), (qnode, 1 + 2 * index, 0), (qnode, 2 + 2 * index, 0)])

    for node in src_nodes:
        if id(node) in forms:
            qop, _must, requant = forms[id(node)]
            new = _new(qop, "quantized_" + node.name, node.attrs, [])
            for i, e in enumerate(node.inputs):
                src, idx = e[0], e[1]
                m = mirror[id(src)]
                key = (id(src), idx)
                if _keeps_float(node.op.name, i):
                    new.inputs.append((m, idx, e[2]))
                elif id(src) not in forms:
                    if key not in qentry:
                        suffix = "" if m.op is None else (
                            src.output_names()[idx][len(src.name):]
                            if src.op.name in _LISTS_OUTPUT_NAMES else f"_{idx}")
                        q = _new(_QUANTIZE, src.name + suffix + "_quantize",
                                 {"out_type": quantized_dtype}, [(m, idx, 0)])
                        qentry[key] = q
                    new.inputs.append((qentry[key], 0, 0))
                elif m.op is not None and m.op.name == _DEQUANTIZE:
                    new.inputs.append((m.inputs[0][0], idx, 0))
                else:
                    new.inputs.append((m, idx, 0))
            for i, e in enumerate(node.inputs):
                src, idx = e[0], e[1]
                key = (id(src), idx)
                if _keeps_float(node.op.name, i):
                    continue
                if key in qentry:
                    new.inputs += [(qentry[key], 1, 0), (qentry[key], 2, 0)]
                else:
                    m = mirror[id(src)]
                    if m.op is not None and m.op.name == _DEQUANTIZE:
                        m = m.inputs[0][0]
                    new.inputs += [(m, 1 + 2 * idx, 0), (m, 2 + 2 * idx, 0)]
            if requant:
                new = _new(_REQUANTIZE, "requantize_" + node.name,
                           {"out_type": quantized_dtype}, [(new, 0, 0), (new, 1, 0), (new, 2, 0)])
        elif node.op is None:
            new = node
        else:
            new = _Node(node.op, node.name, dict(node.attrs), [], node.subgraphs)
            for e in node.inputs:
                src, idx = e[0], e[1]
                m = mirror[id(src)]
                key = (id(src), idx)
                if id(src) in forms and not (m.op is not None and m.op.name == _DEQUANTIZE):
                    d = dequantize(m, idx, src.name + "_dequantize")
                    new.inputs.append((d, 0, 0))
                    mirror[id(src)] = d
                    reverse[id(d)] = src
                elif key in qentry:
                    new.inputs.append((qentry[key].inputs[0][0], idx, e[2]))
                else:
                    new.inputs.append((m, idx, e[2]))
        mirror[id(node)] = new
        reverse[id(new)] = node
    heads = []
    for e in sym._outputs:
        src, idx = e[0], e[1]
        if id(src) in forms:
            m = mirror[id(src)]
            if m.op is not None and m.op.name == _DEQUANTIZE:
                m = m.inputs[0][0]
            heads.append((dequantize(m, idx, src.name + "_dequantize"), 0, 0))
        else:
            heads.append((mirror[id(src)], idx, e[2]))
    if offline_params:
        heads = _offline(heads, set(offline_params))
    calib = []
    for n in _topo(heads):
        if n.op is not None and n.op.name in _CALIBRATES_OUTPUT:
            calib.append(_output_name(reverse.get(id(n), n), 0))
            continue
        if n.op is None or n.op.name not in (_QUANTIZE, _REQUANTIZE):
            continue
        e = n.inputs[0]
        if id(n) in reverse:
            calib.append(_output_name(reverse[id(n)], e[1]))
        elif e[0].op is None:
            calib.append(e[0].name)
        elif id(e[0]) in reverse:
            calib.append(_output_name(reverse[id(e[0])], e[1]))
        else:
            raise ValueError(f"Can't find calibration node for {n.name}")
    return Symbol(heads), calib


def _offline(heads, offline):
    """Weights and biases quantized ahead of time: a quantize_v2 node of such a variable becomes
    variables <name>_quantize, _min and _max (MXNet's OfflineParams)."""
    made = {}
    for n in _topo(heads):
        for i, e in enumerate(n.inputs):
            q = e[0]
            if (q.op is not None and q.op.name == _QUANTIZE and q.inputs[0][0].op is None
                    and q.inputs[0][0].name in offline):
                key = (id(q), e[1])
                if key not in made:
                    made[key] = _Node(None, q.name + ("", "_min", "_max")[e[1]])
                n.inputs[i] = (made[key], 0, 0)
    return heads


def _calib_key(node, entry):
    name = _output_name(entry[0], entry[1])
    if entry[0].name.startswith("quantized_"):
        name = name[len("quantized_"):]
    return name


def _calibrate_quantized_sym(qsym, th_dict):
    """The thresholds written into the quantize/requantize nodes (SetCalibTableToQuantizedGraph)
    as MXNet's std::to_string of a float does ("%f")."""
    if not th_dict:
        return qsym
    heads = [(n, i, v) for n, i, v in qsym._outputs]
    copies = {}

    def copy(n):
        if n.op is None:
            return n
        c = copies.get(id(n))
        if c is None:
            c = _Node(n.op, n.name, dict(n.attrs), [], n.subgraphs)
            copies[id(n)] = c
            c.inputs = [(copy(e[0]), e[1], e[2]) for e in n.inputs]
        return c

    heads = [(copy(n), i, v) for n, i, v in heads]
    for n in _topo(heads):
        if n.op is None:
            continue
        if n.op.name in _CALIBRATES_OUTPUT:
            th = th_dict.get(_calib_key(n, (n, 0, 0)))
        elif n.op.name in (_QUANTIZE, _REQUANTIZE):
            th = th_dict.get(_calib_key(n, n.inputs[0]))
        else:
            continue
        if th is not None:
            n.attrs["min_calib_range"] = "%f" % np.float32(th[0])
            n.attrs["max_calib_range"] = "%f" % np.float32(th[1])
            n._parsed = None
    return Symbol(heads)


def _quantize_params(qsym, params, th_dict):
    """Weights and biases as int8 with their ranges (``<name>_quantize``, ``_min``, ``_max``),
    the other arguments unchanged, and the ``_min``/``_max`` inputs found in th_dict."""
    quantized = {}
    for name in qsym.list_arguments():
        if name.endswith(("weight_quantize", "bias_quantize")):
            original = name[:-len("_quantize")]
            param = params[original]
            val, vmin, vmax = ndarray.contrib.quantize(data=param, min_range=ndarray.min(param),
                                                       max_range=ndarray.max(param),
                                                       out_type="int8")
            quantized[name] = val
            quantized[name + "_min"] = vmin
            quantized[name + "_max"] = vmax
        elif name in params:
            quantized[name] = params[name]
        elif name.endswith(("_min", "_max")):
            output = name[:-len("_min")]
            if output in th_dict:
                quantized[name] = ndarray.array([th_dict[output][0 if name.endswith("_min")
                                                                 else 1]])
    return quantized


# ---- calibration ---------------------------------------------------------------------------------
def combine_histogram(old_hist, arr, new_min, new_max, new_th):
    """Collect layer histogram for arr and combine it with old histogram."""
    (old_hist, old_hist_edges, old_min, old_max, old_th) = old_hist
    if new_th <= old_th:
        hist, _ = np.histogram(arr, bins=len(old_hist), range=(-old_th, old_th))
        return (old_hist + hist, old_hist_edges, min(old_min, new_min), max(old_max, new_max),
                old_th)
    # a wider histogram around the old one, with bins of the old width
    old_num_bins = len(old_hist)
    old_step = 2 * old_th / old_num_bins
    half_increased_bins = int((new_th - old_th) // old_step + 1)
    new_num_bins = half_increased_bins * 2 + old_num_bins
    new_th = half_increased_bins * old_step + old_th
    hist, hist_edges = np.histogram(arr, bins=new_num_bins, range=(-new_th, new_th))
    hist[half_increased_bins:new_num_bins - half_increased_bins] += old_hist
    return (hist, hist_edges, min(old_min, new_min), max(old_max, new_max), new_th)


class _LayerHistogramCollector:
    """Histograms of layer outputs (8001 bins over [-max|x|, max|x|]) for entropy calibration."""

    def __init__(self, num_bins=8001, include_layer=None, logger=None):
        self.hist_dict = {}
        self.num_bins = num_bins
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        """Monitor callback: adds arr to the histogram of layer `name`."""
        name = py_str(name)
        if name not in self.include_layer or arr.size == 0:
            return
        arr = arr.copyto(cpu()).asnumpy()
        if self.logger:
            self.logger.debug("Collecting layer %s histogram of shape %s" % (name, arr.shape))
        min_range = np.min(arr)
        max_range = np.max(arr)
        th = max(abs(min_range), abs(max_range))
        if name in self.hist_dict:
            self.hist_dict[name] = combine_histogram(self.hist_dict[name], arr, min_range,
                                                     max_range, th)
        else:
            hist, hist_edges = np.histogram(arr, bins=self.num_bins, range=(-th, th))
            self.hist_dict[name] = (hist, hist_edges, min_range, max_range, th)


class _LayerOutputMinMaxCollector:
    """The min and max of each layer output, used as thresholds directly (naive calibration)."""

    def __init__(self, quantized_dtype, include_layer=None, logger=None):
        self.min_max_dict = {}
        self.quantized_dtype = quantized_dtype
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        """Monitor callback: widens layer `name`'s (min, max) by arr's."""
        name = py_str(name)
        if name not in self.include_layer or arr.size == 0:
            return
        min_range = ndarray.min(arr).asscalar()
        max_range = ndarray.max(arr).asscalar()
        if name in self.min_max_dict:
            cur = self.min_max_dict[name]
            self.min_max_dict[name] = (min(cur[0], min_range), max(cur[1], max_range))
        else:
            self.min_max_dict[name] = (min_range, max_range)
        if self.logger:
            self.logger.debug("Collecting layer %s min_range=%f, max_range=%f"
                              % (name, min_range, max_range))


def _collect_layer_statistics(mod, data, collector, max_num_examples=None, logger=None):
    if not isinstance(data, DataIter):
        raise ValueError("Only supports data as a type of DataIter, while received type %s"
                         % str(type(data)))
    mod._exec_group.execs[0].set_monitor_callback(collector.collect, monitor_all=True)
    num_batches = 0
    num_examples = 0
    for batch in data:
        mod.forward(data_batch=batch, is_train=False)
        num_batches += 1
        num_examples += data.batch_size
        if max_num_examples is not None and num_examples >= max_num_examples:
            break
    if logger is not None:
        logger.info("Collected statistics from %d batches with batch_size=%d"
                    % (num_batches, data.batch_size))
    return num_examples


def _collect_layer_output_min_max(mod, data, quantized_dtype, include_layer=None,
                                  max_num_examples=None, logger=None):
    collector = _LayerOutputMinMaxCollector(quantized_dtype=quantized_dtype,
                                            include_layer=include_layer, logger=logger)
    num_examples = _collect_layer_statistics(mod, data, collector, max_num_examples, logger)
    return collector.min_max_dict, num_examples


def _collect_layer_histogram(mod, data, include_layer=None, max_num_examples=None, logger=None):
    collector = _LayerHistogramCollector(include_layer=include_layer, logger=logger)
    num_examples = _collect_layer_statistics(mod, data, collector, max_num_examples, logger)
    return collector.hist_dict, num_examples


def _smooth_distribution(p, eps=0.0001):
    """p with its zeros raised to eps and the same mass taken off the non-zero entries."""
    is_zeros = (p == 0).astype(np.float32)
    is_nonzeros = (p != 0).astype(np.float32)
    n_zeros = is_zeros.sum()
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        raise ValueError("The discrete probability distribution is malformed. All entries are 0.")
    eps1 = eps * float(n_zeros) / float(n_nonzeros)
    assert eps1 < 1.0, "n_zeros=%d, n_nonzeros=%d, eps1=%f" % (n_zeros, n_nonzeros, eps1)
    hist = p.astype(np.float32)
    hist += eps * is_zeros + (-eps1) * is_nonzeros
    assert (hist <= 0).sum() == 0
    return hist


def _get_optimal_threshold(hist_data, quantized_dtype, num_quantized_bins=255):
    """(min, max, threshold, divergence) of one layer's histogram (_contrib_calibrate_entropy)."""
    (hist, hist_edges, min_val, max_val, _) = hist_data
    num_bins = len(hist)
    assert num_bins % 2 == 1
    if min_val >= 0 and quantized_dtype in ["auto", "uint8"]:
        # the negative bins are empty: uint8 spreads the levels over the positive half
        num_quantized_bins = num_quantized_bins * 2 + 1
    hist = ndarray.array(hist, ctx=cpu())
    hist_edges = ndarray.array(hist_edges, ctx=cpu())
    threshold, divergence = ndarray.contrib.calibrate_entropy(
        hist=hist, hist_edges=hist_edges, num_quantized_bins=num_quantized_bins)
    return min_val, max_val, threshold.asnumpy(), divergence.asnumpy()


def _get_optimal_thresholds(hist_dict, quantized_dtype, num_quantized_bins=255, logger=None):
    """{layer: (min, max) thresholds} of least KL divergence for every histogram."""
    assert isinstance(hist_dict, dict)
    if logger is not None:
        logger.info("Calculating optimal thresholds for quantization using KL divergence"
                    " with num_quantized_bins=%d" % num_quantized_bins)
    th_dict = {}
    for name in list(hist_dict.keys()):
        min_val, max_val, th, divergence = _get_optimal_threshold(
            hist_dict[name], quantized_dtype, num_quantized_bins=num_quantized_bins)
        if min_val >= 0 and quantized_dtype in ["auto", "uint8"]:
            th_dict[name] = (0, th)
        else:
            th_dict[name] = (-th, th)
        del hist_dict[name]
        if logger:
            logger.debug("layer=%s, min_val=%f, max_val=%f, th=%f, divergence=%f"
                         % (name, min_val, max_val, th, divergence))
    return th_dict


def _th_pair(v):
    return (float(np.asarray(v[0]).reshape(-1)[0]), float(np.asarray(v[1]).reshape(-1)[0]))


# ---- loading -------------------------------------------------------------------------------------
def _load_sym(sym, logger=None):
    """A Symbol, or the one in a symbol .json file."""
    if isinstance(sym, str):
        if logger:
            logger.info("Loading symbol from file %s" % sym)
        return sym_load(sym)
    if isinstance(sym, Symbol):
        return sym
    raise ValueError("_load_sym only accepts Symbol or path to the symbol file, while received "
                     "type %s" % str(type(sym)))


def _load_params(params, logger=None):
    """(arg_params, aux_params) from a .params file or a pair of dicts."""
    if isinstance(params, str):
        if logger:
            logger.info("Loading params from file %s" % params)
        arg_params, aux_params = {}, {}
        for k, v in nd_load(params).items():
            tp, name = k.split(":", 1)
            if tp == "arg":
                arg_params[name] = v
            if tp == "aux":
                aux_params[name] = v
        return arg_params, aux_params
    if isinstance(params, (tuple, list)) and len(params) == 2:
        return params[0], params[1]
    raise ValueError("Unsupported params provided. Must be either a path to the param file or"
                     " a pair of dictionaries representing arg_params and aux_params")


class _DataIterWrapper(DataIter):
    """A DataIter over any iterable of batches (a gluon DataLoader)."""

    def __init__(self, calib_data):
        self._data = calib_data
        try:
            calib_iter = iter(calib_data)
        except TypeError as e:
            raise TypeError("calib_data is not a valid iterator. {}".format(str(e)))
        data_example = next(calib_iter)
        data_example = list(data_example) if isinstance(data_example, (list, tuple)) \
            else [data_example]
        num_data = len(data_example)
        assert num_data > 0
        if len(data_example[0].shape) > 4:
            data_example[0] = data_example[0].reshape((-1,) + data_example[0].shape[2:])
        self.provide_data = [DataDesc(name="data", shape=data_example[0].shape)]
        self.provide_data += [DataDesc(name="data{}".format(i), shape=x.shape)
                              for i, x in enumerate(data_example[1:])]
        if num_data >= 3:
            self.provide_data = [DataDesc(name="data{}".format(i), shape=x.shape)
                                 for i, x in enumerate(data_example[0:])]
        self.batch_size = data_example[0].shape[0]
        self.reset()

    def reset(self):
        self._iter = iter(self._data)

    def next(self):
        next_data = next(self._iter)
        if len(next_data[0].shape) > 4:
            next_data[0] = next_data[0].reshape((-1,) + next_data[0].shape[2:])
        return DataBatch(data=next_data)


def _as_data_iter(calib_data):
    """(DataIter, provide_data) for a DataIter or any iterable of batches."""
    if isinstance(calib_data, DataIter):
        return calib_data, calib_data.provide_data
    calib_data = _DataIterWrapper(calib_data)
    return calib_data, calib_data.provide_data


# ---- the user API --------------------------------------------------------------------------------
def _check_common(excluded_sym_names, excluded_op_names, quantized_dtype, quantize_granularity):
    if excluded_sym_names is None:
        excluded_sym_names = []
    if not isinstance(excluded_sym_names, list):
        raise ValueError("excluded_sym_names must be a list of strings representing"
                         " the names of the symbols that will not be quantized,"
                         " while received type %s" % str(type(excluded_sym_names)))
    if excluded_op_names is None:
        excluded_op_names = []
    if not isinstance(excluded_op_names, list):
        raise ValueError("excluded_op_names must be a list of strings representing"
                         " the names of the operators that will not be quantized,"
                         " while received type %s" % str(type(excluded_op_names)))
    if quantized_dtype not in ("int8", "uint8", "auto"):
        raise ValueError("unknown quantized_dtype %s received,"
                         " expected `int8`, `uint8` or `auto`" % quantized_dtype)
    if quantize_granularity not in ("tensor-wise", "channel-wise"):
        raise ValueError("unkonwn quantize_granularity %s received,"
                         " expected `tensor-wise` or `channel-wise`." % quantize_granularity)
    return excluded_sym_names, excluded_op_names


def quantize_model(sym, arg_params, aux_params, data_names=("data",),
                   label_names=("softmax_label",), ctx=cpu(), excluded_sym_names=None,
                   excluded_op_names=None, calib_mode="entropy", calib_data=None,
                   num_calib_examples=None, quantized_dtype="int8", quantize_mode="smart",
                   quantize_granularity="tensor-wise", logger=None):
    """A quantized model (qsym, qarg_params, aux_params) from a float32 one, calibrated over
    calib_data with calib_mode 'naive' or 'entropy', or uncalibrated with 'none' (requantize
    then finds each layer's range at run time). See MXNet 1.9.1's documentation."""
    excluded_sym_names, excluded_op_names = _check_common(
        excluded_sym_names, excluded_op_names, quantized_dtype, quantize_granularity)
    if logger:
        logger.info("Quantizing symbol")
    qsym, calib_layer = _quantize_symbol(sym, ctx, excluded_symbols=excluded_sym_names,
                                         excluded_operators=excluded_op_names,
                                         offline_params=list(arg_params.keys()),
                                         quantized_dtype=quantized_dtype,
                                         quantize_mode=quantize_mode,
                                         quantize_granularity=quantize_granularity)
    th_dict = {}
    if calib_mode is not None and calib_mode != "none":
        if not isinstance(ctx, Context):
            raise ValueError("currently only supports single ctx, while received %s" % str(ctx))
        if calib_data is None:
            raise ValueError("calib_data must be provided when calib_mode=%s" % calib_mode)
        if not isinstance(calib_data, DataIter):
            raise ValueError("calib_data must be of DataIter type when calib_mode=%s,"
                             " while received type %s" % (calib_mode, str(type(calib_data))))
        if calib_mode not in ("naive", "entropy"):
            raise ValueError("unknown calibration mode %s received,"
                             " expected `none`, `naive`, or `entropy`" % calib_mode)
        mod = Module(symbol=sym, data_names=data_names, label_names=label_names, context=ctx)
        if len(calib_data.provide_label) > 0:
            mod.bind(for_training=False, data_shapes=calib_data.provide_data,
                     label_shapes=calib_data.provide_label)
        else:
            mod.bind(for_training=False, data_shapes=calib_data.provide_data)
        mod.set_params(arg_params, aux_params)
        if calib_mode == "entropy":
            hist_dict, num_examples = _collect_layer_histogram(
                mod, calib_data, include_layer=calib_layer, max_num_examples=num_calib_examples,
                logger=logger)
            if logger:
                logger.info("Collected layer outputs from FP32 model using %d examples"
                            % num_examples)
            th_dict = _get_optimal_thresholds(hist_dict, quantized_dtype, logger=logger)
        else:
            th_dict, num_examples = _collect_layer_output_min_max(
                mod, calib_data, quantized_dtype, include_layer=calib_layer,
                max_num_examples=num_calib_examples, logger=logger)
            if logger:
                logger.info("Collected layer output min/max values from FP32 model using %d "
                            "examples" % num_examples)
        th_dict = {k: _th_pair(v) for k, v in th_dict.items()}
        qsym = _calibrate_quantized_sym(qsym, th_dict)
    if logger:
        logger.info("Quantizing parameters")
    qarg_params = _quantize_params(qsym, arg_params, th_dict)
    return qsym, qarg_params, aux_params


def quantize_graph(sym, arg_params, aux_params, ctx=cpu(), excluded_sym_names=None,
                   excluded_op_names=None, calib_mode="entropy", quantized_dtype="int8",
                   quantize_mode="full", quantize_granularity="tensor-wise",
                   LayerOutputCollector=None, logger=None):
    """(qsym, qarg_params, aux_params, collector): the quantized graph, uncalibrated, and a
    collector for calib_mode to fill through an executor's monitor (then ``calib_graph``)."""
    excluded_sym_names, excluded_op_names = _check_common(
        excluded_sym_names, excluded_op_names, quantized_dtype, quantize_granularity)
    if not isinstance(ctx, Context):
        raise ValueError("currently only supports single ctx, while received %s" % str(ctx))
    if logger:
        logger.info("Quantizing graph")
    qsym, calib_layer = _quantize_symbol(sym, ctx, excluded_symbols=excluded_sym_names,
                                         excluded_operators=excluded_op_names,
                                         offline_params=list(arg_params.keys()),
                                         quantized_dtype=quantized_dtype,
                                         quantize_mode=quantize_mode,
                                         quantize_granularity=quantize_granularity)
    collector = None
    if calib_mode is not None and calib_mode != "none":
        if calib_mode == "entropy":
            collector = _LayerHistogramCollector(include_layer=calib_layer, logger=logger)
        elif calib_mode == "naive":
            collector = _LayerOutputMinMaxCollector(quantized_dtype=quantized_dtype,
                                                    include_layer=calib_layer, logger=logger)
        elif calib_mode == "customize" and LayerOutputCollector is not None:
            collector = LayerOutputCollector
        else:
            raise ValueError("unknown calibration mode %s received,"
                             " expected `none`, `naive`, `entropy` or `customize`" % calib_mode)
    qarg_params = _quantize_params(qsym, arg_params, {})
    return qsym, qarg_params, aux_params, collector


def calib_graph(qsym, arg_params, aux_params, collector, calib_mode="entropy",
                quantized_dtype="int8", logger=logging):
    """(qsym, qarg_params, aux_params) calibrated with a filled collector."""
    if calib_mode is None or calib_mode == "none":
        raise ValueError("please set calibration mode to naive or entropy.")
    if calib_mode == "entropy":
        if logger:
            logger.info("Calculating optimal thresholds for quantization")
        th_dict = _get_optimal_thresholds(collector.hist_dict, quantized_dtype, logger=logger)
    elif calib_mode in ("naive", "customize"):
        th_dict = collector.min_max_dict
    else:
        raise ValueError("unknown calibration mode %s received,"
                         " expected `none`, `naive`, `entropy` or `customize`" % calib_mode)
    th_dict = {k: _th_pair(v) for k, v in th_dict.items()}
    qsym = _calibrate_quantized_sym(qsym, th_dict)
    if logger:
        logger.info("Quantizing parameters")
    qarg_params = _quantize_params(qsym, arg_params, th_dict)
    return qsym, qarg_params, aux_params


def quantize_net_v2(network, quantized_dtype="auto", quantize_mode="full",
                    quantize_granularity="tensor-wise", exclude_layers=None,
                    exclude_layers_match=None, exclude_operators=None, calib_data=None,
                    data_shapes=None, calib_mode="none", num_calib_examples=None, ctx=cpu(),
                    LayerOutputCollector=None, logger=None):
    """A quantized SymbolBlock from a float32 HybridBlock, calibrated over calib_data (a DataIter
    or a DataLoader) with calib_mode 'naive' or 'entropy', or not at all with 'none'."""
    from ..gluon import SymbolBlock
    from ..model import load_checkpoint
    from ..symbol import var
    if logger:
        logger.info("Export HybridBlock")
    network.hybridize()
    if calib_data is not None:
        if isinstance(calib_data, DataIter):
            dshapes = calib_data.provide_data
        else:
            calib_data, dshapes = _as_data_iter(calib_data)
        if not data_shapes:
            data_shapes = dshapes
    if not data_shapes:
        raise ValueError("data_shapes required")
    data_nd = [ndarray.zeros(shape.shape) for shape in data_shapes]
    while True:
        try:
            network(*data_nd)
        except TypeError:
            del data_nd[-1]
            del calib_data.provide_data[-1]
            continue
        else:
            break
    tmpdir = tempfile.mkdtemp()
    try:
        prefix = os.path.join(tmpdir, "tmp")
        network.export(prefix, epoch=0)
        symnet, args, auxs = load_checkpoint(prefix, 0)
    finally:
        shutil.rmtree(tmpdir)
    exclude_layers = list(exclude_layers or [])
    for name_match in exclude_layers_match or []:
        for layers in list(symnet.get_internals()):
            if layers.name.find(name_match) != -1:
                exclude_layers.append(layers.name)
    if logger:
        logger.info("These layers have been excluded %s" % exclude_layers)
    exclude_operators = list(exclude_operators or [])
    if calib_mode is None or calib_mode == "none":
        # the int8 BatchNorm runs only in a calibrated range; MXNet's CPU build folds
        # BatchNorm into the fused convolution here (mxc does not fuse), so it stays float32
        exclude_operators.append("BatchNorm")
    qsym, qarg_params, aux_params, collector = quantize_graph(
        sym=symnet, arg_params=args, aux_params=auxs, ctx=ctx,
        excluded_sym_names=exclude_layers, excluded_op_names=exclude_operators,
        calib_mode=calib_mode, quantized_dtype=quantized_dtype, quantize_mode=quantize_mode,
        quantize_granularity=quantize_granularity, LayerOutputCollector=LayerOutputCollector,
        logger=logger)
    if calib_mode is not None and calib_mode != "none":
        if not isinstance(ctx, Context):
            raise ValueError("currently only supports single ctx, while received %s" % str(ctx))
        if calib_data is None:
            raise ValueError("calib_data must be provided when calib_mode=%s" % calib_mode)
        data_names = [pair[0] for pair in calib_data.provide_data]
        mod = Module(symbol=symnet, context=ctx, data_names=data_names, label_names=None)
        mod.bind(for_training=False, data_shapes=data_shapes)
        mod.set_params(args, auxs, allow_missing=False, force_init=True)
        num_examples = _collect_layer_statistics(mod, calib_data, collector,
                                                 num_calib_examples, logger)
        if logger:
            logger.info("Collected layer output values from FP32 model using %d examples"
                        % num_examples)
        qsym, qarg_params, aux_params = calib_graph(
            qsym=qsym, arg_params=args, aux_params=auxs, collector=collector,
            calib_mode=calib_mode, quantized_dtype=quantized_dtype, logger=logger)
    else:
        data_names = [pair[0] for pair in data_shapes]
    net = SymbolBlock(qsym, [var(name) for name in data_names])
    tmpdir = tempfile.mkdtemp()
    try:
        param_name = os.path.join(tmpdir, "tmpnet-quantized-0000.params")
        save_dict = {("arg:%s" % k): v.as_in_context(cpu()) for k, v in qarg_params.items()}
        save_dict.update({("aux:%s" % k): v.as_in_context(cpu()) for k, v in aux_params.items()})
        nd_save(param_name, save_dict)
        net.collect_params().load(param_name, cast_dtype=True, dtype_source="saved")
        net.collect_params().reset_ctx(ctx)
    finally:
        shutil.rmtree(tmpdir)
    return net


def quantize_net(network, quantized_dtype="auto", quantize_mode="full", exclude_layers=None,
                 exclude_layers_match=None, exclude_operators=None, calib_data=None,
                 data_shapes=None, calib_mode="none", num_calib_examples=None, ctx=cpu(),
                 logger=None):
    """quantize_net_v2 with tensor-wise granularity (deprecated in MXNet 1.9.1)."""
    warnings.warn("WARNING: This will be deprecated after MXNet 2.0, please use quantize_net_v2.")
    return quantize_net_v2(network=network, quantized_dtype=quantized_dtype,
                           quantize_mode=quantize_mode, quantize_granularity="tensor-wise",
                           exclude_layers=exclude_layers,
                           exclude_layers_match=exclude_layers_match,
                           exclude_operators=exclude_operators, calib_data=calib_data,
                           data_shapes=data_shapes, calib_mode=calib_mode,
                           num_calib_examples=num_calib_examples, ctx=ctx,
                           LayerOutputCollector=None, logger=logger)
