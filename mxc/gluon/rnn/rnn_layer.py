"""Gluon's fused recurrent layers (MXNet 1.9.1's ``gluon.rnn.RNN/LSTM/GRU``): every layer,
direction and step in one ``RNN`` operator.

Parameters are registered per layer and direction as 1.9.1 names them (``l0_i2h_weight``,
``l0_h2h_weight``, ``l0_i2h_bias``, ``l0_h2h_bias``, ``r0_...`` for the reverse direction,
``l0_h2r_weight`` with an LSTM projection) and packed at run time, weights first then biases,
into the operator's single parameter vector. Same weights give the same outputs as the
unrolled cells (``_unfuse()``).
"""
import re

from ... import ndarray, symbol
from ...util import is_np_array
from ..block import HybridBlock
from . import rnn_cell

__all__ = ["RNN", "LSTM", "GRU"]

_TENSORS = (ndarray.NDArray, symbol.Symbol)


class _RNNLayer(HybridBlock):
    """The shared implementation of RNN, LSTM and GRU."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise AssertionError("Invalid layout %s; must be one of ['TNC' or 'NTC']" % layout)
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]

        ng, ni, nh = self._gates, input_size, hidden_size
        nr = self._projection_size or nh     # what the recurrent input of a layer has
        for i in range(num_layers):
            for j in ("l", "r")[:self._dir]:
                self._register_param("%s%d_i2h_weight" % (j, i), (ng * nh, ni),
                                     i2h_weight_initializer, dtype)
                self._register_param("%s%d_h2h_weight" % (j, i), (ng * nh, nr),
                                     h2h_weight_initializer, dtype)
                self._register_param("%s%d_i2h_bias" % (j, i), (ng * nh,),
                                     i2h_bias_initializer, dtype)
                self._register_param("%s%d_h2h_bias" % (j, i), (ng * nh,),
                                     h2h_bias_initializer, dtype)
                if self._projection_size:
                    self._register_param("%s%d_h2r_weight" % (j, i), (nr, nh),
                                         h2r_weight_initializer, dtype)
            ni = nr * self._dir

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True, dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = "%s(%s, %s" % (self.__class__.__name__, self._mapping(), self._layout)
        if self._num_layers != 1:
            s += ", num_layers=%d" % self._num_layers
        if self._dropout != 0:
            s += ", dropout=%s" % self._dropout
        if self._dir == 2:
            s += ", bidirectional"
        return s + ")"

    def _mapping(self):
        shape = self.l0_i2h_weight.shape
        return "{0} -> {1}".format(shape[1] if shape[1] else None, shape[0] // self._gates)

    def _collect_params_with_prefix(self, prefix=""):
        # save_parameters names of MXNet's older unfused layers:
        # "_unfused.<layer>.<l|r>_cell.<i2h|h2h|h2r>_<weight|bias>"
        if prefix:
            prefix += "."
        pattern = re.compile(r"(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)\Z")
        matches = {k: pattern.match(k) for k in self._reg_params}
        bidirectional = any(m.group(1) == "r" for m in matches.values())
        ret = {}
        for key, val in self._reg_params.items():
            d, layer, g, t = matches[key].groups()
            if bidirectional:
                name = "_unfused.%s.%s_cell.%s_%s" % (layer, d, g, t)
            else:
                name = "_unfused.%s.%s_%s" % (layer, g, t)
            ret[prefix + name] = val
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def _unfuse(self):
        """The same network as a HybridSequentialRNNCell of step cells sharing these
        Parameters."""
        if self._projection_size:
            raise AssertionError("_unfuse does not support projection layer yet!")
        if self._lstm_state_clip_min or self._lstm_state_clip_max:
            raise AssertionError("_unfuse does not support state clipping yet!")
        h = self._hidden_size

        def get_cell(**kwargs):
            if self._mode == "rnn_relu":
                return rnn_cell.RNNCell(h, activation="relu", **kwargs)
            if self._mode == "rnn_tanh":
                return rnn_cell.RNNCell(h, activation="tanh", **kwargs)
            if self._mode == "lstm":
                return rnn_cell.LSTMCell(h, **kwargs)
            return rnn_cell.GRUCell(h, **kwargs)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {"input_size": ni,
                          "i2h_weight_initializer": self._i2h_weight_initializer,
                          "h2h_weight_initializer": self._h2h_weight_initializer,
                          "i2h_bias_initializer": self._i2h_bias_initializer,
                          "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(get_cell(prefix="l%d_" % i, **kwargs),
                                                         get_cell(prefix="r%d_" % i, **kwargs)))
                else:
                    stack.add(get_cell(prefix="l%d_" % i, **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = h * self._dir
        return stack

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """Initial states: ``func(name=..., shape=..., dtype=..., **kwargs)`` for each state
        (zeros by default). batch_size is needed for NDArrays."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            state = rnn_cell._make_state(func, "%sh0_%d" % (self.prefix, i), info)
            if is_np_array():
                state = state.as_np_ndarray()
            states.append(state)
        return states

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        skip = states is None
        if self.skip_states is not None and skip != self.skip_states:
            # the traced graph returns the states or not: retrace when that changes
            # (MXNet kept the first graph and returned the wrong structure)
            self._clear_cached_op()
        self.skip_states = skip
        if states is None:
            if isinstance(inputs, ndarray.NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, _TENSORS):
            states = [states]
        if self._use_sequence_length:
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def _input_dim(self, inputs):
        shape = getattr(inputs, "shape", None)
        if shape is None or len(shape) != 3:
            raise ValueError("%s: inputs must be 3-D (%s), got shape %s"
                             % (self.name, self._layout, shape))
        return shape[2]

    def infer_shape(self, inputs, *args):
        """Complete the input size of the first layer's i2h weights from `inputs`."""
        ni = self._input_dim(inputs)
        ng, nh = self._gates, self._hidden_size
        for j in ("l", "r")[:self._dir]:
            p = getattr(self, "%s0_i2h_weight" % j)
            if p.shape is None or 0 in tuple(p.shape) or p.shape[1] != ni:
                if p.shape is not None and p.shape[1] not in (0, ni):
                    raise ValueError("%s: input size %d does not match the parameter %s of "
                                     "shape %s" % (self.name, ni, p.name, p.shape))
                p.shape = (ng * nh, ni)

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info["shape"]:
                    raise ValueError("Invalid recurrent state shape. Expecting %s, got %s."
                                     % (str(info["shape"]), str(state.shape)))
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        return out[0] if self.skip_states else out

    def _forward_kernel(self, F, inputs, states, sequence_length, **kwargs):
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        groups = ("i2h", "h2h", "h2r") if self._projection_size else ("i2h", "h2h")
        flat = []
        for t in ("weight", "bias"):
            for layer in range(self._num_layers):
                for d in ("l", "r")[:self._dir]:
                    for g in groups:
                        if g == "h2r" and t == "bias":
                            continue
                        flat.append(kwargs["%s%d_%s_%s" % (d, layer, g, t)].reshape(-1))
        concat = getattr(F._internal, "_rnn_param_concat", None)
        params = concat(*flat, dim=0) if concat is not None else F.concat(*flat, dim=0)
        rnn_args = list(states)
        if self._use_sequence_length:
            rnn_args.append(sequence_length)
        rnn = F.RNN(inputs, params, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2, p=self._dropout,
                    state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        if self._mode == "lstm":
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs, states


class RNN(_RNNLayer):
    r"""Multi-layer Elman RNN, :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    activation : {'relu', 'tanh'}, default 'relu'
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout on the outputs of every layer but the last (training only).
    bidirectional : bool, default False
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0 (inferred from the first input)
    dtype : str, default 'float32'
    prefix, params : optional

    Called as ``layer(data)`` -> output, or ``layer(data, states)`` -> (output, states), with
    states of shape (num_layers * directions, batch, hidden_size).
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None,
                         False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]


class LSTM(_RNNLayer):
    r"""Multi-layer LSTM (gates i, f, g, o), optionally with a projection of the hidden state
    (LSTMP, `projection_size`) and cell-state clipping.

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
    bidirectional : bool, default False
    input_size : int, default 0
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    projection_size : int, optional
    h2r_weight_initializer : str or Initializer, optional
    state_clip_min, state_clip_max : float, optional (together)
    state_clip_nan : bool, default False
    dtype : str, default 'float32'
    prefix, params : optional

    States: [h, c], each (num_layers * directions, batch, hidden_size) (h has
    projection_size features with a projection).
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        n = self._num_layers * self._dir
        h_size = self._projection_size or self._hidden_size
        return [{"shape": (n, batch_size, h_size), "__layout__": "LNC", "dtype": self._dtype},
                {"shape": (n, batch_size, self._hidden_size), "__layout__": "LNC",
                 "dtype": self._dtype}]


class GRU(_RNNLayer):
    r"""Multi-layer GRU in cuDNN's form: :math:`n_t = \tanh(W_{in} x_t + b_{in} + r_t
    (W_{hn} h_{t-1} + b_{hn}))`, :math:`h_t = (1 - z_t) n_t + z_t h_{t-1}`.

    Parameters as RNN, without `activation`.
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype,
                         **kwargs)

    def state_info(self, batch_size=0):
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]
