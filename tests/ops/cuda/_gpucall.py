"""What an operator's forward hands the GPU path, without a GPU: the operator runs with
stand-in arrays that say they live on gpu(0) (shape and dtype of real numpy arrays), and
``mxc.ops._gpu.forward`` is replaced by a recorder, so each kernel call comes back as
(name, attrs, inputs, outputs, family, kernel, iattr, fattr) over the numpy arrays: the exact
arguments ``launch_spec`` gets on a GPU, slots filled by the operator's own code."""
import numpy as np

from mxc._core.opcall import DTYPE_CODE
from mxc.ops import _gpu, registry


class _Ctx:
    device_typeid, device_id, device_type = 2, 0, "gpu"


class GpuStandIn:
    """A numpy array dressed as a gpu(0) NDArray for the operator's attribute code."""
    _ctx = _Ctx()

    def __init__(self, arr):
        self.arr = arr
        self.shape, self.dtype, self.ndim, self.size = arr.shape, arr.dtype.type, arr.ndim, arr.size
        self._dcode = DTYPE_CODE.get(arr.dtype, -1)     # (the bfloat16 rule reads it)

    @property
    def context(self):
        return self._ctx

    def reshape(self, shape):
        """A view (the operator reshapes an input for its kernel: _backward_Embedding)."""
        return GpuStandIn(self.arr.reshape(shape))


def kernel_calls(opname, inputs, outputs, **kwargs):
    """[(name, attrs, inputs, outputs, family, kernel, iattr, fattr)] that operator `opname`
    with attributes `kwargs` makes on the GPU for numpy `inputs` -> `outputs`."""
    op = registry.get(opname)
    a = op.parse(kwargs)
    calls = []

    def record(name, attrs, ins, outs, family=None, kernel=None, iattr=(), fattr=()):
        calls.append((name, attrs, [s.arr for s in ins], [s.arr for s in outs], family, kernel,
                      iattr, fattr))
    saved = _gpu.forward
    _gpu.forward = record
    try:
        op.forward(a, [GpuStandIn(np.asarray(x)) for x in inputs],
                   [GpuStandIn(y) for y in outputs])
    finally:
        _gpu.forward = saved
    return calls
