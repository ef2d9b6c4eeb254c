"""The symbolic recurrent cells of MXNet 1.x (``mx.rnn``): each builds an mx.sym graph.

A cell is called for one time step, ``output, states = cell(inputs, states)``, or unrolled
over a sequence with ``unroll(length, inputs, begin_state, layout, merge_outputs)``. Weights are
symbol variables held in an :class:`RNNParams` container, named ``<prefix><i2h|h2h>_<weight|bias>``
as MXNet 1.9.1 names them, so checkpoints written by MXNet bind here unchanged. Node names
(``<prefix>t<step>_...``) follow 1.9.1 too, which makes ``list_outputs()`` identical.
"""
import functools
import json
import warnings

from .. import ndarray
from .. import symbol
from ..base import MXNetError

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell", "BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_NUMBERS = (int, float)


def _init_attr(kind, **kwargs):
    """The ``__init__`` attribute string MXNet's Initializer.dumps() writes for ``kind``."""
    return json.dumps([kind, kwargs])


def _concat_lists(lists):
    out = []
    for x in lists:
        out.extend(x)
    return out


def _cells_state_info(cells):
    return _concat_lists(c.state_info for c in cells)


def _cells_begin_state(cells, **kwargs):
    return _concat_lists(c.begin_state(**kwargs) for c in cells)


def _cells_unpack_weights(cells, args):
    for c in cells:
        args = c.unpack_weights(args)
    return args


def _cells_pack_weights(cells, args):
    for c in cells:
        args = c.pack_weights(args)
    return args


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """Turn `inputs` into one merged symbol (merge=True) or a list of per-step symbols
    (merge=False); None leaves it as it is. Returns (inputs, time axis of `layout`)."""
    if inputs is None:
        raise ValueError("unroll(inputs=None) is not supported: create the input variables "
                         "outside unroll and pass them in")
    axis = layout.find("T")
    if axis < 0:
        raise ValueError("layout %r has no time axis 'T'" % (layout,))
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError("unroll does not take a grouped symbol as inputs; pass "
                                 "list(inputs) or one symbol with a time axis")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ValueError("unroll(length=%d) got %d input steps" % (length, len(inputs)))
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(x, axis=axis) for x in inputs],
                                   dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """Holds a cell's weight variables by name (prefix + name), for sharing between cells."""

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable `prefix + name`, created on first use (`kwargs` go to
        symbol.Variable)."""
        full = self._prefix + name
        var = self._params.get(full)
        if var is None:
            var = self._params[full] = symbol.Variable(full, **kwargs)
        return var


class BaseRNNCell:
    """Base class of the symbolic cells.

    Parameters
    ----------
    prefix : str
        Prefix of the names of the nodes (and of the weights when `params` is None).
    params : RNNParams or None
        Container to share weights with other cells; a new one when None.
    """

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step counters (called by unroll) before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for c in getattr(self, "_cells", ()):
            c.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError()

    @property
    def params(self):
        """The cell's RNNParams."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        raise NotImplementedError()

    @property
    def state_shape(self):
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def _check_not_modified(self):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. DropoutCell) the base "
                                 "cell cannot be called directly. Call the modifier cell instead.")

    def begin_state(self, func=symbol.zeros, **kwargs):
        """Symbols for the initial states: ``func(name=..., shape=..., __layout__=...)``
        for each state (symbol.zeros by default; symbol.Variable to feed them)."""
        self._check_not_modified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name="%sbegin_state_%d" % (self._prefix, self._init_counter),
                               **kwargs))
        return states

    def unpack_weights(self, args):
        """Split the gate-stacked i2h/h2h weights and biases in `args` (name -> NDArray) into
        one array per gate (``<prefix>i2h_i_weight`` ...). Returns a new dict."""
        args = dict(args)
        gates = self._gate_names
        if not gates:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop("%s%s_weight" % (self._prefix, group))
            bias = args.pop("%s%s_bias" % (self._prefix, group))
            for j, gate in enumerate(gates):
                rows = slice(j * h, (j + 1) * h)
                args["%s%s%s_weight" % (self._prefix, group, gate)] = weight[rows].copy()
                args["%s%s%s_bias" % (self._prefix, group, gate)] = bias[rows].copy()
        return args

    def pack_weights(self, args):
        """The inverse of unpack_weights: stack the per-gate arrays again."""
        args = dict(args)
        gates = self._gate_names
        if not gates:
            return args
        for group in ("i2h", "h2h"):
            ws = [args.pop("%s%s%s_weight" % (self._prefix, group, g)) for g in gates]
            bs = [args.pop("%s%s%s_bias" % (self._prefix, group, g)) for g in gates]
            args["%s%s_weight" % (self._prefix, group)] = ndarray.concatenate(ws)
            args["%s%s_bias" % (self._prefix, group)] = ndarray.concatenate(bs)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Unroll the cell over `length` steps.

        `inputs` is one symbol with a time axis (as `layout` says) or a list of per-step
        symbols. Returns (outputs, states): outputs merged into one symbol when
        `merge_outputs` is True, a list when False, whichever is at hand when None.
        """
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for t in range(length):
            out, states = self(inputs[t], states)
            outputs.append(out)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class RNNCell(BaseRNNCell):
    """Elman cell: ``h' = act(W_i x + b_i + W_h h + b_h)``.

    Parameters
    ----------
    num_hidden : int
    activation : str or callable, default 'tanh'
    prefix : str, default 'rnn_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name="%si2h" % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name="%sh2h" % name)
        out = self._get_activation(i2h + h2h, self._activation, name="%sout" % name)
        return out, [out]


class LSTMCell(BaseRNNCell):
    """LSTM cell (gates i, f, c, o stacked in that order in the weights).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'lstm_'
    params : RNNParams or None
    forget_bias : float, default 1.0
        Added to the forget gate's bias by the i2h bias's LSTMBias initializer.
    """

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias",
                                   init=_init_attr("lstmbias", forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"},
                {"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        h = self._num_hidden
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=4 * h, name="%si2h" % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=4 * h, name="%sh2h" % name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name="%sslice" % name)
        g_in = symbol.Activation(gates[0], act_type="sigmoid", name="%si" % name)
        g_forget = symbol.Activation(gates[1], act_type="sigmoid", name="%sf" % name)
        g_cand = symbol.Activation(gates[2], act_type="tanh", name="%sc" % name)
        g_out = symbol.Activation(gates[3], act_type="sigmoid", name="%so" % name)
        next_c = symbol._internal._plus(g_forget * states[1], g_in * g_cand,
                                        name="%sstate" % name)
        next_h = symbol._internal._mul(g_out, symbol.Activation(next_c, act_type="tanh"),
                                       name="%sout" % name)
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """GRU cell in cuDNN's form (gates r, z, o): the reset gate scales ``W_h h + b_h``.

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'gru_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        h = self._num_hidden
        prev = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=3 * h, name="%s_i2h" % name)
        h2h = symbol.FullyConnected(data=prev, weight=self._hW, bias=self._hB,
                                    num_hidden=3 * h, name="%s_h2h" % name)
        i_r, i_z, i_n = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
        h_r, h_z, h_n = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
        reset = symbol.Activation(i_r + h_r, act_type="sigmoid", name="%s_r_act" % name)
        update = symbol.Activation(i_z + h_z, act_type="sigmoid", name="%s_z_act" % name)
        cand = symbol.Activation(i_n + reset * h_n, act_type="tanh", name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update) * cand, update * prev,
                                        name="%sout" % name)
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """All layers and steps in one RNN operator (MXNet's packed ``parameters`` vector).

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}, default 'lstm'
    bidirectional : bool, default False
    dropout : float, default 0.
    get_next_state : bool, default False
        Also return the final states.
    forget_bias : float, default 1.0
    prefix : str, default '<mode>_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if mode not in ("rnn_relu", "rnn_tanh", "lstm", "gru"):
            raise ValueError("FusedRNNCell: mode must be one of 'rnn_relu', 'rnn_tanh', "
                             "'lstm', 'gru', got %r" % (mode,))
        if prefix is None:
            prefix = "%s_" % mode
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        init = _init_attr("fusedrnn", init=None, num_hidden=num_hidden, num_layers=num_layers,
                          mode=mode, bidirectional=bidirectional, forget_bias=forget_bias)
        self._parameter = self.params.get("parameters", init=init)

    @property
    def state_info(self):
        b = 2 if self._bidirectional else 1
        n = 2 if self._mode == "lstm" else 1
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"}
                for _ in range(n)]

    @property
    def _gate_names(self):
        return {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
                "gru": ["_r", "_z", "_o"]}[self._mode]

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _slice_weights(self, arr, li, lh):
        """Views of the packed vector `arr` as the per-layer, per-direction, per-gate arrays."""
        out = {}
        pre = self._prefix
        gates = self._gate_names
        dirs = self._directions
        b = len(dirs)
        m = len(gates)
        need = sum(b * m * lh * ((li if layer == 0 else b * lh) + lh + 2)
                   for layer in range(self._num_layers))
        if need != arr.size:
            raise MXNetError("FusedRNNCell %r: the packed parameter vector has %d elements, "
                             "this configuration (input size %d) needs %d"
                             % (pre, arr.size, li, need))
        p = 0
        for layer in range(self._num_layers):
            n_in = li if layer == 0 else b * lh
            for d in dirs:
                for g in gates:
                    out["%s%s%d_i2h%s_weight" % (pre, d, layer, g)] = \
                        arr[p:p + lh * n_in].reshape((lh, n_in))
                    p += lh * n_in
                for g in gates:
                    out["%s%s%d_h2h%s_weight" % (pre, d, layer, g)] = \
                        arr[p:p + lh * lh].reshape((lh, lh))
                    p += lh * lh
        for layer in range(self._num_layers):
            for d in dirs:
                for group in ("i2h", "h2h"):
                    for g in gates:
                        out["%s%s%d_%s%s_bias" % (pre, d, layer, group, g)] = arr[p:p + lh]
                        p += lh
        return out

    def unpack_weights(self, args):
        args = dict(args)
        arr = args.pop(self._parameter.name)
        b = len(self._directions)
        m = self._num_gates
        h = self._num_hidden
        num_input = arr.size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2
        for name, a in self._slice_weights(arr, num_input, h).items():
            args[name] = a.copy()
        return args

    def pack_weights(self, args):
        args = dict(args)
        b = len(self._directions)
        m = self._num_gates
        h = self._num_hidden
        w0 = args["%sl0_i2h%s_weight" % (self._prefix, self._gate_names[0])]
        num_input = w0.shape[1]
        total = ((num_input + h + 2) * h * m * b
                 + (self._num_layers - 1) * m * h * (h + b * h + 2) * b)
        arr = ndarray.zeros((total,), ctx=w0.context, dtype=w0.dtype)
        for name, view in self._slice_weights(arr, num_input, h).items():
            view[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for "
                          "faster speed")
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise ValueError("FusedRNNCell: unsupported layout %r" % (layout,))
        states = self.begin_state() if begin_state is None else begin_state
        if self._mode == "lstm":
            skw = {"state": states[0], "state_cell": states[1]}
        else:
            skw = {"state": states[0]}
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + "rnn", **skw)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n = 2 if self._mode == "lstm" else 1
            states = [rnn[1 + k] for k in range(n)]
            for s in states:
                s._set_attr(__layout__="LNC")
            outputs = rnn[0]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a SequentialRNNCell of step cells (weights named as
        unpack_weights names them)."""
        h = self._num_hidden
        make = {"rnn_relu": lambda p: RNNCell(h, activation="relu", prefix=p),
                "rnn_tanh": lambda p: RNNCell(h, activation="tanh", prefix=p),
                "lstm": lambda p: LSTMCell(h, prefix=p),
                "gru": lambda p: GRUCell(h, prefix=p)}[self._mode]
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make("%sl%d_" % (self._prefix, i)),
                                            make("%sr%d_" % (self._prefix, i)),
                                            output_prefix="%sbi_l%d_" % (self._prefix, i)))
            else:
                stack.add(make("%sl%d_" % (self._prefix, i)))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix="%s_dropout%d_" % (self._prefix, i)))
        return stack


class SequentialRNNCell(BaseRNNCell):
    """A stack of cells: each one's output is the next one's input.

    Parameters
    ----------
    params : RNNParams or None
    """

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append `cell` to the stack."""
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise AssertionError("Either specify params for SequentialRNNCell or child "
                                     "cells, not both.")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return _cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise AssertionError("a SequentialRNNCell holding a BidirectionalCell cannot "
                                     "be stepped; use unroll")
            n = len(cell.state_info)
            inputs, st = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(st)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        n_cells = len(self._cells)
        if begin_state is None:
            begin_state = self.begin_state()
        p = 0
        next_states = []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, st = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n],
                                     layout=layout,
                                     merge_outputs=None if i < n_cells - 1 else merge_outputs)
            p += n
            next_states.extend(st)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the input (no state).

    Parameters
    ----------
    dropout : float
    prefix : str, default 'dropout_'
    params : RNNParams or None
    """

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        if not isinstance(dropout, _NUMBERS):
            raise AssertionError("dropout probability must be a number")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Base of the cells that wrap another cell (`base_cell`), which must then not be used
    directly."""

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        self._check_not_modified()
        init_sym = kwargs.pop("func", init_sym)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016) on a cell's outputs and states.

    Parameters
    ----------
    base_cell : BaseRNNCell
    zoneout_outputs : float, default 0.
    zoneout_states : float, default 0.
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, FusedRNNCell):
            raise AssertionError("FusedRNNCell doesn't support zoneout. Please unfuse first.")
        if isinstance(base_cell, BidirectionalCell):
            raise AssertionError("BidirectionalCell doesn't support zoneout since it doesn't "
                                 "support step. Please add ZoneoutCell to the cells underneath "
                                 "instead.")
        if isinstance(base_cell, SequentialRNNCell) and getattr(base_cell, "_bidirectional",
                                                                False):
            raise AssertionError("Bidirectional SequentialRNNCell doesn't support zoneout. "
                                 "Please add ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        p_out, p_st = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output = (symbol.where(mask(p_out, next_output), next_output, prev)
                  if p_out != 0. else next_output)
        if p_st != 0.:
            states = [symbol.where(mask(p_st, new), new, old)
                      for new, old in zip(next_states, states)]
        else:
            states = next_states
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Output = base cell's output + input (Wu et al. 2016)."""

    def __init__(self, base_cell):
        super().__init__(base_cell)

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name="%s_plus_residual" % output.name)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs,
                                          name="%s_plus_residual" % outputs.name)
        else:
            outputs = [symbol.elemwise_add(o, x, name="%s_plus_residual" % o.name)
                       for o, x in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(BaseRNNCell):
    """Runs `l_cell` forward and `r_cell` backward in time and concatenates their outputs.

    Parameters
    ----------
    l_cell, r_cell : BaseRNNCell
    params : RNNParams or None
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            if not (l_cell._own_params and r_cell._own_params):
                raise AssertionError("Either specify params for BidirectionalCell or child "
                                     "cells, not both.")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return _cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        nl = len(l_cell.state_info)
        l_out, l_st = l_cell.unroll(length, inputs=inputs, begin_state=states[:nl],
                                    layout=layout, merge_outputs=merge_outputs)
        r_out, r_st = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                    begin_state=states[nl:], layout=layout,
                                    merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, symbol.Symbol) and isinstance(r_out, symbol.Symbol)
            if not merge_outputs:
                if isinstance(l_out, symbol.Symbol):
                    l_out = list(symbol.SliceChannel(l_out, axis=axis, num_outputs=length,
                                                     squeeze_axis=1))
                if isinstance(r_out, symbol.Symbol):
                    r_out = list(symbol.SliceChannel(r_out, axis=axis, num_outputs=length,
                                                     squeeze_axis=1))
        if merge_outputs:
            outputs = symbol.Concat(l_out, symbol.reverse(r_out, axis=axis), dim=2,
                                    name="%sout" % self._output_prefix)
        else:
            r_out = list(reversed(r_out))
            outputs = [symbol.Concat(lo, ro, dim=1, name="%st%d" % (self._output_prefix, i))
                       for i, (lo, ro) in enumerate(zip(l_out, r_out))]
        return outputs, [l_st, r_st]


class BaseConvRNNCell(BaseRNNCell):
    """Base of the convolutional cells: i2h and h2h are Convolutions; the state has the
    shape the i2h convolution gives `input_shape`."""

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                 i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, activation, prefix="", params=None,
                 conv_layout="NCHW"):
        super().__init__(prefix=prefix, params=params)
        if not (h2h_kernel[0] % 2 == 1 and h2h_kernel[1] % 2 == 1):
            raise AssertionError("Only support odd number, get h2h_kernel= %s" % (h2h_kernel,))
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2,
                         h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        data = symbol.Variable("data")
        probe = symbol.Convolution(data=data, num_filter=num_hidden, kernel=i2h_kernel,
                                   stride=i2h_stride, pad=i2h_pad, dilate=i2h_dilate,
                                   layout=conv_layout)
        shape = probe.infer_shape(data=input_shape)[1][0]
        self._state_shape = (0,) + tuple(shape[1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout},
                {"shape": self._state_shape, "__layout__": self._conv_layout}]

    def _conv_forward(self, inputs, states, name):
        nf = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name="%si2h" % name, data=inputs, num_filter=nf,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate, weight=self._iW,
                                 bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name="%sh2h" % name, data=states[0], num_filter=nf,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract class for convolutional RNN")


_DEFAULT_CONV_ACT = functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


class ConvRNNCell(BaseConvRNNCell):
    """Convolutional Elman cell. Parameters as BaseConvRNNCell; prefix 'ConvRNN_'."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=_DEFAULT_CONV_ACT, prefix="ConvRNN_", params=None,
                 conv_layout="NCHW"):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix=prefix, params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ("",)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        out = self._get_activation(i2h + h2h, self._activation, name="%sout" % name)
        return out, [out]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM (Shi et al. 2015); prefix 'ConvLSTM_'."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=_DEFAULT_CONV_ACT, prefix="ConvLSTM_", params=None,
                 conv_layout="NCHW"):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix=prefix, params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4,
                                    axis=self._conv_layout.find("C"), name="%sslice" % name)
        g_in = symbol.Activation(gates[0], act_type="sigmoid", name="%si" % name)
        g_forget = symbol.Activation(gates[1], act_type="sigmoid", name="%sf" % name)
        g_cand = self._get_activation(gates[2], self._activation, name="%sc" % name)
        g_out = symbol.Activation(gates[3], act_type="sigmoid", name="%so" % name)
        next_c = symbol._internal._plus(g_forget * states[1], g_in * g_cand,
                                        name="%sstate" % name)
        next_h = symbol._internal._mul(g_out, self._get_activation(next_c, self._activation),
                                       name="%sout" % name)
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU; prefix 'ConvGRU_'."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=_DEFAULT_CONV_ACT, prefix="ConvGRU_", params=None,
                 conv_layout="NCHW"):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix=prefix, params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        i_r, i_z, i_n = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
        h_r, h_z, h_n = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
        reset = symbol.Activation(i_r + h_r, act_type="sigmoid", name="%s_r_act" % name)
        update = symbol.Activation(i_z + h_z, act_type="sigmoid", name="%s_z_act" % name)
        cand = self._get_activation(i_n + reset * h_n, self._activation, name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update) * cand, update * states[0],
                                        name="%sout" % name)
        return next_h, [next_h]
