"""Convolutional recurrent cells of MXNet 1.9.1 (Shi et al. 2015, "Convolutional LSTM Network"):
the RNN/LSTM/GRU recurrences with the input-to-hidden and hidden-to-hidden products replaced by
convolutions, in 1, 2 and 3 spatial dimensions.

The hidden-to-hidden convolution is padded to keep the state's spatial size (hence odd
``h2h_kernel`` only); the state's spatial size is the input convolution's output size, known
from ``input_shape`` (a 0 there is filled at the first forward, as MXNet does)."""
from ....base import numeric_types
from ...rnn import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]

_DEFAULT_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _conv_out_size(dimensions, kernels, pads, dilations):
    # 0 stays 0: an unknown input size gives an unknown state size
    return tuple(x + 2 * p - d * (k - 1) if x else 0
                 for x, k, p, d in zip(dimensions, kernels, pads, dilations))


class _BaseConvRNNCell(HybridRecurrentCell):
    """Shared parameters and the two convolutions; subclasses set ``_dims`` (1, 2, 3),
    ``_gate_names`` and the recurrence in ``hybrid_forward``."""

    _dims = None
    _gate_names = ()

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=0,
                 i2h_dilate=1, h2h_dilate=1, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout=None, activation="tanh",
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        dims = self._dims
        conv_layout = conv_layout or _DEFAULT_LAYOUT[dims]
        if len(conv_layout) != dims + 2 or conv_layout.find("C") not in (1, dims + 1):
            raise ValueError("%s: conv_layout %r is not a %dD layout with channels second or "
                             "last" % (type(self).__name__, conv_layout, dims))
        if len(input_shape) != dims + 1:
            raise ValueError("%s: input_shape %r must have %d entries (channels and %d spatial "
                             "sizes, without batch)" % (type(self).__name__, tuple(input_shape),
                                                        dims + 1, dims))
        specs = {"i2h_kernel": i2h_kernel, "i2h_pad": i2h_pad, "i2h_dilate": i2h_dilate,
                 "h2h_kernel": h2h_kernel, "h2h_dilate": h2h_dilate}
        for name, spec in specs.items():
            if isinstance(spec, numeric_types):
                specs[name] = (int(spec),) * dims
            elif len(spec) == dims:
                specs[name] = tuple(int(s) for s in spec)
            else:
                raise ValueError("For %dD convolution, the convolution settings can only be "
                                 "either int or list/tuple of length %d (%s=%r)"
                                 % (dims, dims, name, spec))
        if any(k % 2 == 0 for k in specs["h2h_kernel"]):
            raise ValueError("Only support odd number, get h2h_kernel= %s" % str(h2h_kernel))
        self._hidden_channels = hidden_channels
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation
        self._i2h_kernel = specs["i2h_kernel"]
        self._i2h_pad = specs["i2h_pad"]
        self._i2h_dilate = specs["i2h_dilate"]
        self._h2h_kernel = specs["h2h_kernel"]
        self._h2h_dilate = specs["h2h_dilate"]
        self._stride = (1,) * dims
        # "same" padding for the recurrent convolution
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        self._channel_axis = conv_layout.find("C")
        channels_first = self._channel_axis == 1
        in_channels = input_shape[0] if channels_first else input_shape[-1]
        spatial = tuple(input_shape[1:]) if channels_first else tuple(input_shape[:-1])
        out_size = _conv_out_size(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate)
        total = hidden_channels * len(self._gate_names)
        if channels_first:
            i2h_shape = (total, in_channels) + self._i2h_kernel
            h2h_shape = (total, hidden_channels) + self._h2h_kernel
            self._state_shape = (hidden_channels,) + out_size
        else:
            i2h_shape = (total,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (total,) + self._h2h_kernel + (hidden_channels,)
            self._state_shape = out_size + (hidden_channels,)
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(total,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(total,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        info = {"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
        return [dict(info) for _ in range(self._num_states)]

    _num_states = 1

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        act = ", %s" % (self._activation,) if self._activation is not None else ""
        return "%s(%s -> %s%s, %s)" % (type(self).__name__, in_channels or None, shape[0],
                                       act, self._conv_layout)

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                      prefix):
        num_filter = self._hidden_channels * len(self._gate_names)
        i2h = F.Convolution(data=inputs, num_filter=num_filter, kernel=self._i2h_kernel,
                            stride=self._stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                            weight=i2h_weight, bias=i2h_bias, layout=self._conv_layout,
                            name=prefix + "i2h")
        h2h = F.Convolution(data=states[0], num_filter=num_filter, kernel=self._h2h_kernel,
                            stride=self._stride, pad=self._h2h_pad, dilate=self._h2h_dilate,
                            weight=h2h_weight, bias=h2h_bias, layout=self._conv_layout,
                            name=prefix + "h2h")
        return i2h, h2h


class _ConvRNNCell(_BaseConvRNNCell):
    r""":math:`h_t = act(W_i \ast x_t + R_i \ast h_{t-1} + b_i)`"""
    _gate_names = ("",)

    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    """The LSTM recurrence (gates i, f, c, o stacked along the channel axis); states (h, c)."""
    _gate_names = ("_i", "_f", "_c", "_o")
    _num_states = 2

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, axis=self._channel_axis,
                               name=prefix + "slice")
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = self._get_activation(F, gates[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    """The GRU recurrence (reset, update and candidate parts stacked along the channels)."""
    _gate_names = ("_r", "_z", "_o")

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, axis=self._channel_axis,
                                           name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, axis=self._channel_axis,
                                           name=prefix + "h2h_slice")
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        candidate = self._get_activation(F, i2h + reset_gate * h2h, self._activation,
                                         name=prefix + "h_act")
        next_h = F.elemwise_add((1. - update_gate) * candidate, update_gate * states[0],
                                name=prefix + "out")
        return next_h, [next_h]


# Each public cell fixes the number of spatial dimensions (and with it the default layout:
# NCW, NCHW, NCDHW); arguments are those of _BaseConvRNNCell.__init__, in MXNet's order.
class Conv1DRNNCell(_ConvRNNCell):
    """1D convolutional RNN cell; input_shape is (C, W) for layout 'NCW'."""
    _dims = 1


class Conv2DRNNCell(_ConvRNNCell):
    """2D convolutional RNN cell; input_shape is (C, H, W) for layout 'NCHW'."""
    _dims = 2


class Conv3DRNNCell(_ConvRNNCell):
    """3D convolutional RNN cell; input_shape is (C, D, H, W) for layout 'NCDHW'."""
    _dims = 3


class Conv1DLSTMCell(_ConvLSTMCell):
    """1D convolutional LSTM cell; input_shape is (C, W) for layout 'NCW'."""
    _dims = 1


class Conv2DLSTMCell(_ConvLSTMCell):
    """2D convolutional LSTM cell; input_shape is (C, H, W) for layout 'NCHW'."""
    _dims = 2


class Conv3DLSTMCell(_ConvLSTMCell):
    """3D convolutional LSTM cell; input_shape is (C, D, H, W) for layout 'NCDHW'."""
    _dims = 3


class Conv1DGRUCell(_ConvGRUCell):
    """1D convolutional GRU cell; input_shape is (C, W) for layout 'NCW'."""
    _dims = 1


class Conv2DGRUCell(_ConvGRUCell):
    """2D convolutional GRU cell; input_shape is (C, H, W) for layout 'NCHW'."""
    _dims = 2


class Conv3DGRUCell(_ConvGRUCell):
    """3D convolutional GRU cell; input_shape is (C, D, H, W) for layout 'NCDHW'."""
    _dims = 3
