"""DataParallelExecutorGroup: one executor per context, each running a slice of the batch
(MXNet 1.9.1's ``mxnet.module.executor_group``)."""
import logging
from collections import OrderedDict

import numpy as np

from .. import context as ctx
from .. import ndarray as nd
from ..io import DataDesc
from ..ndarray import NDArray
from ..symbol.symbol import DTYPE_MX_TO_NP

__all__ = ["DataParallelExecutorGroup"]


def _split_input_slice(batch_size, work_load_list):
    """Slices of ``range(batch_size)``, one per device, proportional to `work_load_list`."""
    total = sum(work_load_list)
    counts = [round(w * batch_size / total) for w in work_load_list]
    if sum(counts) < batch_size:
        counts[-1] += batch_size - sum(counts)
    slices, end = [], 0
    for n in counts:
        begin = int(min(end, batch_size))
        end = int(min(begin + n, batch_size))
        if begin >= end:
            raise ValueError(f"Too many slices: batch size {batch_size} cannot be split over "
                             f"{len(work_load_list)} devices with workload {work_load_list}; "
                             "some splits are empty.")
        slices.append(slice(begin, end))
    return slices


def _load_general(data, targets, major_axis):
    """Copy each source array into its targets: a whole array, a list per device, or
    (slice, array) pairs cut along the batch axis."""
    for src, dsts, axis in zip(data, targets, major_axis):
        if isinstance(dsts, NDArray):
            src.copyto(dsts)
        elif isinstance(src, (list, tuple)):
            for s, d in zip(src, dsts):
                s.copyto(d)
        else:
            for sl, dst in dsts:
                if axis >= 0 and (sl.start != 0 or src.shape[axis] != sl.stop):
                    if axis == 0:
                        src[sl.start:sl.stop].copyto(dst)
                    else:
                        nd.slice_axis(src, axis=axis, begin=sl.start, end=sl.stop).copyto(dst)
                else:
                    if not isinstance(src, NDArray):
                        src = nd.array(src, dtype=dst.dtype)
                    src.copyto(dst)


def _load_data(batch, targets, major_axis):
    if isinstance(batch, list):
        new_batch = [[b.data[i] for b in batch] for i in range(len(targets))]
        new_targets = [[dst for _, dst in t] for t in targets]
        _load_general(new_batch, new_targets, major_axis)
    else:
        _load_general(batch.data, targets, major_axis)


def _load_label(batch, targets, major_axis):
    if isinstance(batch, list):
        new_batch = [[b.label[i] for b in batch] for i in range(len(targets))]
        new_targets = [[dst for _, dst in t] for t in targets]
        _load_general(new_batch, new_targets, major_axis)
    else:
        _load_general(batch.label, targets, major_axis)


def _merge_multi_context(outputs, major_axis):
    """One array per output: the devices' pieces concatenated along the batch axis."""
    rets = []
    for tensors, axis in zip(outputs, major_axis):
        if axis >= 0 and len(tensors) > 1:
            first = tensors[0].context
            rets.append(nd.concat(*[t.as_in_context(first) for t in tensors], dim=axis))
        else:
            rets.append(tensors[0])
    return rets


def _prepare_group2ctxs(group2ctxs, ctx_len):
    """One ``{ctx_group: context}`` dict (or None) per device."""
    if group2ctxs is None:
        return [None] * ctx_len
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != ctx_len:
            raise ValueError(f"length of group2ctxs should be {ctx_len}, got {len(group2ctxs)}")
        return group2ctxs
    if isinstance(group2ctxs, dict):
        ret = [{} for _ in range(ctx_len)]
        for k, v in group2ctxs.items():
            if isinstance(v, ctx.Context):
                ctxs = [v] * ctx_len
            elif len(v) == 1:
                ctxs = list(v) * ctx_len
            else:
                if len(v) != ctx_len:
                    raise ValueError(f"length of group2ctxs[{k}] should be {ctx_len} or 1, "
                                     f"got {len(v)}")
                ctxs = v
            for i in range(ctx_len):
                ret[i][k] = ctxs[i]
        return ret
    raise TypeError("group2ctxs should be a list of dicts of str to context, or a dict of str "
                    "to a context or a list of contexts")


def _exec_bytes(exe):
    arrays = list(exe.arg_arrays) + [g for g in exe.grad_arrays if g is not None]
    arrays += list(exe.aux_arrays) + list(exe.outputs)
    total = 0
    for a in arrays:
        n = 1
        for d in a.shape:
            n *= d
        total += n * np.dtype(a.dtype).itemsize
    return total


class DataParallelExecutorGroup:
    """Executors of one symbol on several devices; each device runs a slice of the batch.

    Parameters
    ----------
    symbol : Symbol
    contexts : list of Context
    workload : list of number
        Relative share of the batch per device.
    data_shapes, label_shapes : list of DataDesc or (name, shape)
    param_names : list of str
    for_training : bool
    inputs_need_grad : bool
    shared_group : DataParallelExecutorGroup, optional
        Share parameter (and same-shaped data) arrays with this group (bucketing).
    logger : logging.Logger
    fixed_param_names : list of str, optional
    grad_req : str, list or dict
    state_names : list of str, optional
    group2ctxs : dict or list of dict, optional
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req="write", state_names=None, group2ctxs=None):
        self.param_names = param_names
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = contexts
        self.workload = workload if workload is not None else [1] * len(contexts)
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(contexts))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self._total_exec_bytes = 0
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        if not for_training:
            grad_req = "null"
        data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
        if label_shapes is not None:
            label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        data_names = [x.name for x in data_shapes]
        params = set(self.param_names)
        fixed = set(self.fixed_param_names)

        def default_req(k, req):
            if k in params:
                return "null" if k in fixed else req
            if k in data_names:
                return req if self.inputs_need_grad else "null"
            return "null"

        if isinstance(grad_req, str):
            self.grad_req = {k: default_req(k, grad_req) for k in self.arg_names}
        elif isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise ValueError(f"grad_req list has {len(grad_req)} entries for "
                                 f"{len(self.arg_names)} arguments {self.arg_names}")
            self.grad_req = dict(zip(self.arg_names, grad_req))
        elif isinstance(grad_req, dict):
            self.grad_req = {k: default_req(k, "write") for k in self.arg_names}
            self.grad_req.update(grad_req)
        else:
            raise ValueError("grad_req must be one of str, list, tuple, or dict.")

        if shared_group is not None:
            self.shared_data_arrays = shared_group.shared_data_arrays
        else:
            self.shared_data_arrays = [{} for _ in contexts]

        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self.data_arrays = None
        self.label_arrays = None
        self.param_arrays = None
        self.state_arrays = None
        self.grad_arrays = None
        self.aux_arrays = None
        self.input_grad_arrays = None
        self.data_shapes = None
        self.label_shapes = None
        self.data_names = None
        self.label_names = None
        self.data_layouts = None
        self.label_layouts = None
        self.output_names = self.symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [DataDesc.get_batch_axis(self.symbol[i].attr("__layout__"))
                               for i in range(self.num_outputs)]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def decide_slices(self, data_shapes):
        """The batch axis of each input; sets ``batch_size`` and the per-device ``slices``."""
        if not data_shapes:
            raise ValueError("decide_slices: no data shapes")
        major_axis = [DataDesc.get_batch_axis(x.layout) for x in data_shapes]
        for (name, shape), axis in zip(data_shapes, major_axis):
            if axis == -1:
                continue
            batch_size = shape[axis]
            if self.batch_size is not None:
                if batch_size != self.batch_size:
                    raise AssertionError(f"all data must have the same batch size: batch_size = "
                                         f"{self.batch_size}, but {name} has shape {shape}")
            else:
                self.batch_size = batch_size
                self.slices = _split_input_slice(self.batch_size, self.workload)
        return major_axis

    def _collect_arrays(self):
        execs = self.execs
        if self.slices:
            self.data_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(execs)]
                                for name, _ in self.data_shapes]
        else:
            self.data_arrays = [[(slice(i, i + 1), e.arg_dict[name])
                                 for i, e in enumerate(execs)] for name, _ in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in execs] for name in self.state_names]
        if self.label_shapes is not None:
            self.label_arrays = [[(self.slices[i], e.arg_dict[name])
                                  for i, e in enumerate(execs)] for name, _ in self.label_shapes]
        else:
            self.label_arrays = None
        params = set(self.param_names)
        self.param_arrays = [[e.arg_arrays[i] for e in execs]
                             for i, name in enumerate(self.arg_names) if name in params]
        if self.for_training:
            self.grad_arrays = [[e.grad_arrays[i] for e in execs]
                                for i, name in enumerate(self.arg_names) if name in params]
        else:
            self.grad_arrays = None
        if self.inputs_need_grad:
            self.input_grad_arrays = [[e.grad_arrays[self.arg_names.index(name)] for e in execs]
                                      for name, _ in self.data_shapes if name in self.arg_names]
        else:
            self.input_grad_arrays = None
        self.aux_arrays = [[e.aux_arrays[i] for e in execs] for i in range(len(self.aux_names))]

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind (or, with `reshape`, reshape) one executor per context."""
        if not reshape and self.execs:
            raise AssertionError("bind_exec: executors are already bound")
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)
        for i in range(len(self.contexts)):
            data_i = self._sliced_shape(data_shapes, i, self.data_layouts)
            label_i = (self._sliced_shape(label_shapes, i, self.label_layouts)
                       if label_shapes is not None else [])
            if reshape:
                shapes = {d.name: d.shape for d in data_i + label_i}
                self.execs[i] = self._default_execs[i].reshape(allow_up_sizing=True, **shapes)
                if getattr(self._default_execs[i], "_monitor", None) is not None:
                    self.execs[i].set_monitor_callback(self._default_execs[i]._monitor,
                                                       self._default_execs[i]._monitor_all)
            else:
                self.execs.append(self._bind_ith_exec(i, data_i, label_i, shared_group))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [d.name for d in self.data_shapes]
        if label_shapes is not None:
            self.label_names = [d.name for d in self.label_shapes]
        self._collect_arrays()

    def reshape(self, data_shapes, label_shapes):
        """Re-bind for new input shapes, sharing the parameters."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy the parameters into every executor."""
        for exe in self.execs:
            exe.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Copy the devices' average of each parameter into `arg_params`/`aux_params`."""
        for name, block in zip(self.param_names, self.param_arrays):
            self._average_into(block, arg_params[name])
        for name, block in zip(self.aux_names, self.aux_arrays):
            self._average_into(block, aux_params[name])

    @staticmethod
    def _average_into(block, dst):
        if len(block) == 1:
            src = block[0]
        else:
            src = block[0].copyto(ctx.cpu())
            for w in block[1:]:
                src = src + w.copyto(ctx.cpu())
            src = src / len(block)
        if src.dtype != dst.dtype:
            src = src.astype(dst.dtype)
        if src.stype != dst.stype:
            src = src.tostype(dst.stype)
        src.copyto(dst)

    def forward(self, data_batch, is_train=None):
        """Load the batch's slices into the executors and run them forward."""
        _load_data(data_batch, self.data_arrays, self.data_layouts)
        if is_train is None:
            is_train = self.for_training
        if self.label_arrays is not None:
            if isinstance(data_batch, list):
                if data_batch and data_batch[0].label:
                    _load_label(data_batch, self.label_arrays, self.label_layouts)
            elif data_batch.label:
                _load_label(data_batch, self.label_arrays, self.label_layouts)
        for exe in self.execs:
            exe.forward(is_train=is_train)

    def get_output_shapes(self):
        """[(name, shape)] of the merged outputs."""
        shapes = []
        for key, out, axis in zip(self.output_names, self.execs[0].outputs,
                                  self.output_layouts):
            shape = list(out.shape)
            if axis >= 0:
                shape[axis] = self.batch_size
            shapes.append((key, tuple(shape)))
        return shapes

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """Outputs [begin, end) of the last forward; merged over devices by default."""
        if end is None:
            end = self.num_outputs
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            outputs = _merge_multi_context(outputs, self.output_layouts[begin:end])
        return outputs

    def get_states(self, merge_multi_context=True):
        if merge_multi_context:
            raise AssertionError("merge_multi_context=True is not supported for get_states yet.")
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set the state arrays from [[state_dev1, state_dev2], ...] or to a scalar."""
        if states is not None:
            if value is not None:
                raise AssertionError("Only one of states & value can be specified.")
            _load_general(states, self.state_arrays, (0,) * len(states))
        else:
            if value is None:
                raise AssertionError("At least one of states & value must be specified.")
            for dsts in self.state_arrays:
                for dst in dsts:
                    dst[:] = value

    def get_input_grads(self, merge_multi_context=True):
        if not self.inputs_need_grad:
            raise AssertionError("get_input_grads: bind with inputs_need_grad=True")
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def backward(self, out_grads=None):
        """Backward on every device with the matching slice of `out_grads`."""
        if not self.for_training:
            raise AssertionError("re-bind with for_training=True to run backward")
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        for i, (exe, sl) in enumerate(zip(self.execs, self.slices)):
            mine = []
            for grad, axis in zip(out_grads, self.output_layouts):
                if axis >= 0 and len(self.execs) > 1:
                    piece = nd.slice_axis(grad, axis=axis, begin=sl.start, end=sl.stop)
                    mine.append(piece.as_in_context(self.contexts[i]))
                elif grad.context != self.contexts[i]:
                    mine.append(grad.copyto(self.contexts[i]))
                else:
                    mine.append(grad)
            exe.backward(out_grads=mine or None)

    def update_metric(self, eval_metric, labels, pre_sliced):
        """Update `eval_metric` with each device's outputs and its slice of `labels`."""
        for k, (exe, sl) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                labels_slice = labels[k]
            elif len(self.execs) == 1:
                labels_slice = labels
            else:
                labels_slice = []
                for label, axis in zip(labels, self.label_layouts):
                    if axis == 0:
                        labels_slice.append(label[sl])
                    elif axis > 0:
                        labels_slice.append(nd.slice_axis(label, axis=axis, begin=sl.start,
                                                          end=sl.stop))
                    else:
                        labels_slice.append(label)
            labels_ = OrderedDict(zip(self.label_names or [], labels_slice))
            preds = OrderedDict(zip(self.output_names, exe.outputs))
            eval_metric.update_dict(labels_, preds)

    def _bind_ith_exec(self, i, data_shapes, label_shapes, shared_group):
        shared_exec = None if shared_group is None else shared_group.execs[i]
        context = self.contexts[i]
        input_shapes = {d.name: d.shape for d in data_shapes}
        if label_shapes:
            input_shapes.update({d.name: d.shape for d in label_shapes})
        input_types = {d.name: d.dtype for d in data_shapes}
        attrs = self.symbol.attr_dict()
        for name in self.symbol.list_inputs():
            code = attrs.get(name, {}).get("__dtype__")
            if name in input_types and code is not None and code != "-1":
                input_types[name] = DTYPE_MX_TO_NP[int(code)]
        if label_shapes:
            input_types.update({d.name: d.dtype for d in label_shapes})
        exe = self.symbol.simple_bind(ctx=context, grad_req=self.grad_req,
                                      type_dict=input_types, shared_arg_names=self.param_names,
                                      shared_exec=shared_exec, group2ctx=self.group2ctxs[i],
                                      shared_buffer=self.shared_data_arrays[i], **input_shapes)
        self._total_exec_bytes += _exec_bytes(exe)
        return exe

    def _sliced_shape(self, shapes, i, major_axis):
        out = []
        for desc, axis in zip(shapes, major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            out.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return out

    def install_monitor(self, mon):
        for exe in self.execs:
            mon.install(exe)
