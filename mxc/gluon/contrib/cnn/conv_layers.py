"""DeformableConvolution (Dai et al. 2017): a 2-D convolution whose sampling grid is shifted per
output position by offsets that an ordinary convolution of the same geometry predicts from the
input; ModulatedDeformableConvolution (Zhu et al. 2018, DCNv2): the same convolution also
predicts a mask in (0, 2) that scales every tap. Parameters are named as in MXNet 1.9.1
(offset_weight, offset_bias, deformable_conv_weight, deformable_conv_bias), so saved parameters
load here and there."""
from ....base import numeric_types
from ...block import HybridBlock
from ...nn import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(value, name):
    if isinstance(value, numeric_types):
        return (int(value),) * 2
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError("DeformableConvolution: %s must be an int or 2 ints, got %r"
                         % (name, value))
    return value


class DeformableConvolution(HybridBlock):
    """2-D deformable convolution v1.

    Parameters
    ----------
    channels : int
    kernel_size, strides, padding, dilation : int or 2 ints
    groups : int, default 1
    num_deformable_group : int, default 1
        Groups of input channels that share one set of offsets.
    layout : 'NCHW' or 'NHWC'
    use_bias : bool, default True
    in_channels : int, default 0 (inferred at the first forward)
    activation : str, optional
    weight_initializer, bias_initializer : optional
    offset_weight_initializer, offset_bias_initializer : default 'zeros' (a plain convolution
        until training moves the offsets)
    offset_use_bias : bool, default True
    adj : optional, passed to both operators when given
    """

    _offset_per_tap = 2         # (y, x) per kernel tap and deformable group

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout='NCHW',
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer='zeros', offset_weight_initializer='zeros',
                 offset_bias_initializer='zeros', offset_use_bias=True,
                 op_name='DeformableConvolution', adj=None, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if layout not in ('NCHW', 'NHWC'):
            raise ValueError("DeformableConvolution: only 'NCHW' and 'NHWC' layouts are "
                             "supported, got %r" % (layout,))
        kernel = _pair(kernel_size, 'kernel_size')
        common = {'kernel': kernel, 'stride': _pair(strides, 'strides'),
                  'dilate': _pair(dilation, 'dilation'), 'pad': _pair(padding, 'padding'),
                  'num_group': groups, 'layout': layout}
        if adj is not None:
            common['adj'] = adj
        offset_channels = self._offset_per_tap * kernel[0] * kernel[1] * num_deformable_group
        self._channels = channels
        self._in_channels = in_channels
        self._op_name = op_name
        self._kwargs_offset = dict(common, num_filter=offset_channels,
                                   no_bias=not offset_use_bias)
        self._kwargs_deformable_conv = dict(common, num_filter=channels,
                                            num_deformable_group=num_deformable_group,
                                            no_bias=not use_bias)
        per_group = in_channels // groups if in_channels else 0
        if layout == 'NCHW':
            offset_shape = (offset_channels, per_group) + kernel
        else:
            offset_shape = (offset_channels,) + kernel + (per_group,)
        with self.name_scope():
            self.offset_weight = self.params.get('offset_weight', shape=offset_shape,
                                                 init=offset_weight_initializer,
                                                 allow_deferred_init=True)
            self.offset_bias = self.params.get(
                'offset_bias', shape=(offset_channels,), init=offset_bias_initializer,
                allow_deferred_init=True) if offset_use_bias else None
            # MXNet's weight shape is (channels, in/groups, kh, kw) for both layouts
            self.deformable_conv_weight = self.params.get(
                'deformable_conv_weight', shape=(channels, per_group) + kernel,
                init=weight_initializer, allow_deferred_init=True)
            self.deformable_conv_bias = self.params.get(
                'deformable_conv_bias', shape=(channels,), init=bias_initializer,
                allow_deferred_init=True) if use_bias else None
            self.act = Activation(activation, prefix=activation + '_') if activation else None

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset_args = [x, offset_weight] + ([offset_bias] if offset_bias is not None else [])
        offset = F.Convolution(*offset_args, cudnn_off=True, **self._kwargs_offset)
        extra = {} if deformable_conv_bias is None else {'bias': deformable_conv_bias}
        out = self._deformable(F, x, offset, deformable_conv_weight, extra)
        return self.act(out) if self.act is not None else out

    def _deformable(self, F, x, offset, weight, extra):
        return F.contrib.DeformableConvolution(data=x, offset=offset, weight=weight, name='fwd',
                                               **extra, **self._kwargs_deformable_conv)

    def _alias(self):
        return 'deformable_conv'

    def __repr__(self):
        k = self._kwargs_deformable_conv
        shape = self.deformable_conv_weight.shape
        return '%s(%s -> %s, kernel_size=%s, stride=%s)' % (
            type(self).__name__, shape[1] or None, shape[0], k['kernel'], k['stride'])


class ModulatedDeformableConvolution(DeformableConvolution):
    """2-D modulated deformable convolution (DCNv2): the offset convolution gives 3 values per
    tap and deformable group, the (y, x) offsets and a mask ``2 * sigmoid(m)``. Parameters as
    DeformableConvolution (``op_name`` defaults to 'ModulatedDeformableConvolution')."""

    _offset_per_tap = 3

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout='NCHW',
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer='zeros', offset_weight_initializer='zeros',
                 offset_bias_initializer='zeros', offset_use_bias=True,
                 op_name='ModulatedDeformableConvolution', adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, op_name, adj, prefix, params)
        kh, kw = self._kwargs_deformable_conv['kernel']
        self._offset_split = 2 * kh * kw * num_deformable_group

    def _deformable(self, F, x, offset, weight, extra):
        offset_t = F.slice_axis(offset, axis=1, begin=0, end=self._offset_split)
        mask = F.sigmoid(F.slice_axis(offset, axis=1, begin=self._offset_split, end=None)) * 2
        return F.contrib.ModulatedDeformableConvolution(
            data=x, offset=offset_t, mask=mask, weight=weight, name='fwd', **extra,
            **self._kwargs_deformable_conv)

    def _alias(self):
        return 'modulated_deformable_conv'
