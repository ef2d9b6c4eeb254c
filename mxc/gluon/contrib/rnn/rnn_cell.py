"""Contrib cells of MXNet 1.9.1: VariationalDropoutCell (Gal & Ghahramani 2016: one dropout
mask per sequence, reused at every step), LSTMPCell (an LSTM whose output is projected) and
dynamic_unroll (a cell run over time with ``contrib.foreach``: one graph node, any length)."""
from ....base import _as_list
from ...rnn.rnn_cell import (BidirectionalCell, HybridRecurrentCell, ModifierCell,
                             SequentialRNNCell, _format_sequence, _get_begin_state, _is_tensor,
                             _mask_sequence_variable_length)

__all__ = ["VariationalDropoutCell", "LSTMPCell"]     # dynamic_unroll: by module, as MXNet


class VariationalDropoutCell(ModifierCell):
    """Dropout on the inputs, the first state (h) and the outputs of `base_cell`, with one
    mask per unroll shared by all steps.

    Parameters
    ----------
    base_cell : RecurrentCell
    drop_inputs, drop_states, drop_outputs : float, default 0.
    """

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise AssertionError("BidirectionalCell doesn't support variational state dropout. "
                                 "Please add VariationalDropoutCell to the cells underneath "
                                 "instead.")
        if drop_states and isinstance(base_cell, SequentialRNNCell) and \
                getattr(base_cell, "_bidirectional", False):
            raise AssertionError("Bidirectional SequentialRNNCell doesn't support variational "
                                 "state dropout. Please add VariationalDropoutCell to the cells "
                                 "underneath instead.")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _mask(self, F, like, p):
        return F.Dropout(F.ones_like(like), p=p)

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = self._mask(F, states[0], self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = self._mask(F, inputs, self.drop_inputs)
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self.drop_states_mask     # h is always the first state
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        out, next_states = self.base_cell(inputs, states)
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = self._mask(F, out, self.drop_outputs)
        if self.drop_outputs:
            out = out * self.drop_outputs_mask
        return out, next_states

    def __repr__(self):
        return "%s(p_out = %s, p_state = %s)" % (self.__class__.__name__, self.drop_outputs,
                                                 self.drop_states)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        # without state dropout the input and output masks apply to whole sequences at once
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, states, layout,
                                                    merge_outputs=True,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        if merge_outputs is None:
            merge_outputs = _is_tensor(outputs)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    r"""LSTM with a projection (Sak et al. 2014): :math:`r_t = W_{hr} (o_t \odot \tanh(c_t))`
    is both the output and the recurrent state.

    Parameters
    ----------
    hidden_size : int
    projection_size : int
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : optional
    i2h_bias_initializer, h2h_bias_initializer : default 'zeros'
    input_size : int, default 0
    prefix, params : optional
    """

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        g = 4 * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(g, projection_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstmp"

    def __repr__(self):
        shape = self.i2h_weight.shape
        return "%s(%s -> %s -> %s)" % (self.__class__.__name__,
                                       shape[1] if shape[1] else None, shape[0],
                                       self.h2r_weight.shape[0])

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        prefix = "t%d_" % self._counter
        n = 4 * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + "h2h")
        sl = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + "slice")
        g_in = F.Activation(sl[0], act_type="sigmoid", name=prefix + "i")
        g_forget = F.Activation(sl[1], act_type="sigmoid", name=prefix + "f")
        g_cand = F.Activation(sl[2], act_type="tanh", name=prefix + "c")
        g_out = F.Activation(sl[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(g_forget * states[1], g_in * g_cand, name=prefix + "state")
        hidden = F.elemwise_mul(g_out, F.Activation(next_c, act_type="tanh"),
                                name=prefix + "hidden")
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size,
                                  weight=h2r_weight, no_bias=True, name=prefix + "out")
        return next_r, [next_r, next_c]



def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """Runs `cell` over the time axis of `inputs` with ``F.contrib.foreach``.

    Parameters
    ----------
    cell : RecurrentCell
    inputs : NDArray or Symbol, (T, N, ...) for layout 'TNC' or (N, T, ...) for 'NTC'
    begin_state : list of NDArray or Symbol
    drop_inputs, drop_outputs : float, default 0
        Dropout rates, one mask over the whole time axis.
    layout : str, default 'TNC'
    valid_length : NDArray or Symbol of shape (N,), optional
        Per-sequence lengths: the states stop changing after a sequence's last step and
        the outputs past it are zero.

    Returns
    -------
    outputs : NDArray or Symbol (same layout as `inputs`)
    states : list of NDArray or Symbol
    """
    inputs, axis, F, _ = _format_sequence(0, inputs, layout, True)
    axes = None
    if axis != 0:          # foreach iterates over axis 0
        axes = list(range(len(layout)))
        axes[0], axes[axis] = axes[axis], axes[0]
        inputs = F.transpose(inputs, axes=axes)
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(0,))
    states = list(_as_list(begin_state))
    if valid_length is None:
        def loop_body(step_in, step_states):
            return cell(step_in, step_states)
    else:
        # the step number rides along as an extra state; a finished sequence keeps its state
        states.append(F.zeros((1,)))

        def loop_body(step_in, step_states):
            cell_states, step = step_states[:-1], step_states[-1]
            out, new_states = cell(step_in, cell_states)
            running = F.broadcast_greater(valid_length, step)
            new_states = [F.where(running, new, old)
                          for new, old in zip(_as_list(new_states), cell_states)]
            return out, new_states + [step + 1]
    outputs, states = F.contrib.foreach(loop_body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(0,))
    if axes is not None:
        outputs = F.transpose(outputs, axes=axes)
    if valid_length is None:
        return outputs, states
    outputs = F.SequenceMask(outputs, sequence_length=valid_length, use_sequence_length=True,
                             axis=axis)
    return outputs, states[:-1]
