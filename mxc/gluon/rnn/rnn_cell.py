"""Gluon's recurrent cells (MXNet 1.9.1's ``gluon.rnn``): one time step per call, or
``unroll(length, inputs, begin_state, layout, merge_outputs, valid_length)`` over a sequence,
on NDArrays (imperative or hybridized) or on Symbols.

Parameter and node names are 1.9.1's (``<prefix>i2h_weight``; ``<prefix>t<step>_out``), so
``list_outputs()`` of an unrolled graph, ``collect_params()`` keys and saved files agree with
MXNet.
"""
from ... import ndarray, symbol
from ...base import _as_list
from ..block import Block, HybridBlock
from ..utils import _indent

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]

_TENSORS = (ndarray.NDArray, symbol.Symbol)
_NUMBERS = (int, float)


def _is_tensor(x):
    return isinstance(x, _TENSORS)


def _make_state(func, name, info):
    """func(name=..., **info); creators that take no name or layout attribute (plain NDArray
    creators) get only the real arguments."""
    try:
        return func(name=name, **info)
    except TypeError:
        kw = {k: v for k, v in info.items() if not (k.startswith("__") and k.endswith("__"))}
        return func(**kw)


def _cells_state_info(cells, batch_size):
    out = []
    for c in cells:
        out.extend(c.state_info(batch_size))
    return out


def _cells_begin_state(cells, **kwargs):
    out = []
    for c in cells:
        out.extend(c.begin_state(**kwargs))
    return out


def _get_begin_state(cell, F, begin_state, inputs, batch_size):
    if begin_state is not None:
        return begin_state
    if F is ndarray:
        first = inputs if _is_tensor(inputs) else inputs[0]
        # the states take the inputs' dtype (MXNet made float32 states for any input)
        with first.context:
            return cell.begin_state(func=F.zeros, batch_size=batch_size, dtype=first.dtype)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """Inputs as one tensor with a time axis (merge=True), a list of steps (merge=False), or
    as given (None). Returns (inputs, time axis, F, batch size (0 for symbols))."""
    if inputs is None:
        raise ValueError("unroll(inputs=None) is not supported: create the input variables "
                         "outside unroll and pass them in")
    axis = layout.find("T")
    batch_axis = layout.find("N")
    if axis < 0 or batch_axis < 0:
        raise ValueError("layout must contain 'T' and 'N', got %r" % (layout,))
    batch_size = 0
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        F = symbol
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError("unroll does not take a grouped symbol as inputs; pass "
                                 "list(inputs) or one symbol with a time axis")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    elif isinstance(inputs, ndarray.NDArray):
        F = ndarray
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            steps = inputs.shape[in_axis]
            if length is not None and length != steps:
                raise ValueError("unroll(length=%d) got inputs with %d steps on axis %d "
                                 "(layout %s)" % (length, steps, in_axis, layout))
            inputs = _as_list(ndarray.split(inputs, axis=in_axis, num_outputs=steps,
                                            squeeze_axis=1))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ValueError("unroll(length=%d) got %d input steps" % (length, len(inputs)))
        if isinstance(inputs[0], symbol.Symbol):
            F = symbol
        else:
            F = ndarray
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if _is_tensor(inputs) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    if valid_length is None:
        raise ValueError("valid_length is required here")
    if not _is_tensor(data):
        data = F.stack(*data, axis=time_axis)
    out = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                         axis=time_axis)
    if not merge:
        out = _split_steps(F, out, length, time_axis)
    return out


def _split_steps(F, data, length, axis):
    """`data` split into `length` steps along `axis`, as a list (a grouped Symbol iterates
    into its outputs; one NDArray step comes back alone)."""
    parts = F.split(data, num_outputs=length, axis=axis, squeeze_axis=True)
    return list(parts) if isinstance(parts, (list, tuple, symbol.Symbol)) else [parts]


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    F = symbol if isinstance(sequences[0], symbol.Symbol) else ndarray
    if valid_length is None:
        return list(reversed(sequences))
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    return _split_steps(F, rev, unroll_step, 0)


class RecurrentCell(Block):
    """Base class of the recurrent cells.

    Parameters
    ----------
    prefix : str, optional
    params : ParameterDict, optional
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step counters before unrolling again."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """Shape and layout of each state, as a list of dicts."""
        raise NotImplementedError()

    def _check_not_modified(self):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. ZoneoutCell) the base "
                                 "cell cannot be called directly. Call the modifier cell instead.")

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """Initial states: ``func(name=..., shape=..., **kwargs)`` per state
        (mx.nd.zeros by default; mx.sym.zeros / mx.sym.var for graphs)."""
        self._check_not_modified()
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(_make_state(func, "%sbegin_state_%d" % (self._prefix,
                                                                  self._init_counter), info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll over `length` steps.

        inputs: a tensor with a time axis (`layout` 'NTC' or 'TNC') or a list of `length`
        tensors (batch, features). valid_length: optional (batch,) lengths; steps past an
        item's length give zero output and the states of its last valid step are returned.
        Returns (outputs, states); outputs merged into one tensor when merge_outputs is True,
        a list when False, as given when None.
        """
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        outputs = []
        all_states = []
        for t in range(length):
            out, states = self(inputs[t], states)
            outputs.append(out)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*steps, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for steps in zip(*all_states)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        named = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                 "softsign": F.softsign}.get(activation) if isinstance(activation, str) else None
        if named is not None:
            return named(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        try:
            from ..nn import LeakyReLU
        except ImportError:
            LeakyReLU = None
        if LeakyReLU is not None and isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One step: returns (output, new states)."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell that can be hybridized."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


def _mapping(weight):
    shape = weight.shape
    return "{0} -> {1}".format(shape[1] if shape[1] else None, shape[0])


class _GatedCell(HybridRecurrentCell):
    """Shared constructor of RNNCell/LSTMCell/GRUCell: four deferred parameters."""
    _NGATES = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        g = self._NGATES * hidden_size
        self._hidden_size = hidden_size
        self._input_size = input_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(g, hidden_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def __repr__(self):
        return "%s(%s)" % (self.__class__.__name__, _mapping(self.i2h_weight))


class RNNCell(_GatedCell):
    r"""Elman RNN cell: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
    activation : str or Block, default 'tanh'
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0 (inferred from the first input)
    prefix : str, optional
    params : ParameterDict, optional
    """

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        self._activation = activation
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return "rnn"

    def __repr__(self):
        return "%s(%s, %s)" % (self.__class__.__name__, _mapping(self.i2h_weight),
                               self._activation)

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias,
                               num_hidden=self._hidden_size, name=prefix + "i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias,
                               num_hidden=self._hidden_size, name=prefix + "h2h")
        pre = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        out = self._get_activation(F, pre, self._activation, name=prefix + "out")
        return out, [out]


class LSTMCell(_GatedCell):
    r"""LSTM cell; gates i, f, c (candidate), o stacked in that order in the weights.

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0
    prefix : str, optional
    params : ParameterDict, optional
    activation : str, default 'tanh'
        For the candidate and the cell output.
    recurrent_activation : str, default 'sigmoid'
        For the i, f, o gates.
    """
    _NGATES = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        n = 4 * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + "h2h")
        gates = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        sl = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice")
        rec, act = self._recurrent_activation, self._activation
        g_in = self._get_activation(F, sl[0], rec, name=prefix + "i")
        g_forget = self._get_activation(F, sl[1], rec, name=prefix + "f")
        g_cand = self._get_activation(F, sl[2], act, name=prefix + "c")
        g_out = self._get_activation(F, sl[3], rec, name=prefix + "o")
        next_c = F.elemwise_add(F.elemwise_mul(g_forget, states[1], name=prefix + "mul0"),
                                F.elemwise_mul(g_in, g_cand, name=prefix + "mul1"),
                                name=prefix + "state")
        next_h = F.elemwise_mul(g_out, F.Activation(next_c, act_type=act,
                                                    name=prefix + "activation0"),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    r"""GRU cell in cuDNN's form (gates r, z, n): the reset gate scales
    :math:`W_{hn} h + b_{hn}`; :math:`h_t = (1 - z) n + z h_{t-1}`.

    Parameters as RNNCell, without `activation`.
    """
    _NGATES = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        prev = states[0]
        n = 3 * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=prev, weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + "h2h")
        i_r, i_z, i_n = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h_r, h_z, h_n = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset = F.Activation(F.elemwise_add(i_r, h_r, name=prefix + "plus0"),
                             act_type="sigmoid", name=prefix + "r_act")
        update = F.Activation(F.elemwise_add(i_z, h_z, name=prefix + "plus1"),
                              act_type="sigmoid", name=prefix + "z_act")
        cand = F.Activation(F.elemwise_add(i_n, F.elemwise_mul(reset, h_n, name=prefix + "mul0"),
                                           name=prefix + "plus2"),
                            act_type="tanh", name=prefix + "h_act")
        # (mx.nd's creators take no name; the graph node gets 1.9.1's)
        ones = (F.ones_like(update, name=prefix + "ones_like0") if F is symbol
                else F.ones_like(update))
        next_h = F.elemwise_add(
            F.elemwise_mul(F.elemwise_sub(ones, update, name=prefix + "minus0"), cand,
                           name=prefix + "mul1"),
            F.elemwise_mul(update, prev, name=prefix + "mul20"),
            name=prefix + "out")
        return next_h, [next_h]


class _SequentialMixin:
    """Stacking shared by SequentialRNNCell and HybridSequentialRNNCell."""

    def __repr__(self):
        body = "\n".join("({i}): {m}".format(i=i, m=_indent(repr(m), 2))
                         for i, m in self._children.items())
        return "%s(\n%s\n)" % (self.__class__.__name__, body)

    def add(self, cell):
        """Append `cell` to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return _cells_begin_state(self._children.values(), **kwargs)

    def _step(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        cells = list(self._children.values())
        if any(isinstance(c, BidirectionalCell) for c in cells):
            raise AssertionError("a sequential cell holding a BidirectionalCell cannot be "
                                 "stepped; use unroll")
        for cell in cells:
            n = len(cell.state_info())
            inputs, st = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(st)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        n_cells = len(self._children)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        p = 0
        next_states = []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            inputs, st = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n],
                                     layout=layout,
                                     merge_outputs=None if i < n_cells - 1 else merge_outputs,
                                     valid_length=valid_length)
            p += n
            next_states.extend(st)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_SequentialMixin, RecurrentCell):
    """A stack of cells (each one's output feeds the next)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def __call__(self, inputs, states):
        return self._step(inputs, states)

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


class HybridSequentialRNNCell(_SequentialMixin, HybridRecurrentCell):
    """A stack of hybridizable cells; can itself live inside a HybridBlock."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def __call__(self, inputs, states):
        return self._step(inputs, states)

    def hybrid_forward(self, F, inputs, states):
        return self._step(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the input; no state.

    Parameters
    ----------
    rate : float
    axes : tuple of int, default ()
        Axes along which the mask is shared.
    prefix, params : optional
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if not isinstance(rate, _NUMBERS):
            raise AssertionError("rate must be a number")
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return "%s(rate=%s, axes=%s)" % (self.__class__.__name__, self._rate, self._axes)

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name="t%d_fwd" % self._counter)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if _is_tensor(inputs):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base of the cells that wrap a cell (`base_cell`), which is then used only through the
    modifier."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise AssertionError("Cell %s is already modified. One cell cannot be modified "
                                 "twice" % base_cell.name)
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=ndarray.zeros, **kwargs):
        # (MXNet defaulted to symbol.zeros here, unlike every other gluon cell)
        self._check_not_modified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return "%s(%s)" % (self.__class__.__name__, self.base_cell)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): each unit keeps its previous output / state with
    probability `zoneout_outputs` / `zoneout_states` in training.

    Parameters
    ----------
    base_cell : RecurrentCell
    zoneout_outputs : float, default 0.
    zoneout_states : float, default 0.
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
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
        self._prev_output = None

    def __repr__(self):
        return "%s(p_out=%s, p_state=%s, %s)" % (self.__class__.__name__, self.zoneout_outputs,
                                                 self.zoneout_states, self.base_cell)

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        p_out, p_st = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return F.Dropout(F.ones_like(like), p=p)

        prev = self._prev_output
        if prev is None:
            prev = F.zeros_like(next_output)
        output = (F.where(mask(p_out, next_output), next_output, prev)
                  if p_out != 0. else next_output)
        if p_st != 0.:
            states = [F.where(mask(p_st, new), new, old) for new, old in zip(next_states, states)]
        else:
            states = next_states
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Output = base cell's output + input (Wu et al. 2016)."""

    def __init__(self, base_cell):
        super().__init__(base_cell)

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, name="t%d_fwd" % self._counter)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = _is_tensor(outputs)
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis,
                                                    merge_outputs)
        if merge_outputs:
            outputs = F.elemwise_add(outputs, inputs)
        else:
            outputs = [F.elemwise_add(o, x) for o, x in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(HybridRecurrentCell):
    """Runs `l_cell` forward and `r_cell` backward in time; outputs concatenated on the
    feature axis.

    Parameters
    ----------
    l_cell, r_cell : RecurrentCell
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self):
        return "%s(forward=%s, backward=%s)" % (self.__class__.__name__,
                                                self._children["l_cell"],
                                                self._children["r_cell"])

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = list(_reverse_sequences(inputs, length, valid_length))
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children.values()
        nl = len(l_cell.state_info(batch_size))
        l_out, l_st = l_cell.unroll(length, inputs=inputs, begin_state=states[:nl],
                                    layout=layout, merge_outputs=merge_outputs,
                                    valid_length=valid_length)
        r_out, r_st = r_cell.unroll(length, inputs=reversed_inputs, begin_state=states[nl:],
                                    layout=layout, merge_outputs=False,
                                    valid_length=valid_length)
        r_out = _reverse_sequences(r_out, length, valid_length)
        if merge_outputs is None:
            merge_outputs = _is_tensor(l_out)
            l_out, _, _, _ = _format_sequence(None, l_out, layout, merge_outputs)
            r_out, _, _, _ = _format_sequence(None, r_out, layout, merge_outputs)
        if merge_outputs:
            if not _is_tensor(r_out):
                r_out = F.stack(*r_out, axis=axis)
            outputs = F.concat(l_out, r_out, dim=2, name="%sout" % self._output_prefix)
        else:
            outputs = [F.concat(lo, ro, dim=1, name="%st%d" % (self._output_prefix, i))
                       for i, (lo, ro) in enumerate(zip(l_out, r_out))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, l_st + r_st
