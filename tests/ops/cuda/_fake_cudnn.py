"""A stand-in for the cuDNN frontend's Python module (``cudnn``) that records every call made
on it, for tests/ops/cuda/test_cudnn_plans.py, test_cudnn_conv.py, test_cudnn_norm.py and the
convolution and BatchNorm emulations: graphs, tensors and plans are plain records;
a "serialized" graph is the JSON of the calls that built it, and deserializing one replays
nothing (a real deserialize does not rebuild either). Nothing runs."""
import contextlib
import json
import types


class _Enum:
    def __init__(self, name, *members):
        for m in members:
            setattr(self, m, "%s.%s" % (name, m))


data_type = _Enum("data_type", "FLOAT", "HALF", "BFLOAT16", "DOUBLE")
heur_mode = _Enum("heur_mode", "A", "B", "FALLBACK")
build_plan_policy = _Enum("build_plan_policy", "ALL", "HEURISTICS_CHOICE")
numerical_note = _Enum("numerical_note", "TENSOR_CORE", "DOWN_CONVERT_INPUTS")
scalar_type = _Enum("scalar_type", "COMPILE_TIME_CONST", "RUNTIME_PARAM")


class FakeTensor:
    def __init__(self, graph, name, attrs):
        self.graph, self.name, self.attrs = graph, name, dict(attrs)

    def _set(self, what, value):
        self.graph.log.append(("tensor.%s" % what, self.name, value))
        self.attrs[what] = value
        return self

    def set_uid(self, uid):
        return self._set("uid", uid)

    def set_output(self, v):
        return self._set("output", v)

    def set_dim(self, v):
        return self._set("dim", list(v))

    def set_stride(self, v):
        return self._set("stride", list(v))

    def set_data_type(self, v):
        return self._set("data_type", v)


class FakeGraph:
    """pygraph: every call appended to `log` (and to the module's `calls`)."""
    plans_offered = 3

    def __init__(self, module, **kw):
        self.module, self.log, self.plans = module, [], []
        self.deserialized = None
        self._rec("pygraph", kw)

    def _rec(self, name, *args):
        entry = (name,) + tuple(args)
        self.log.append(entry)
        self.module.calls.append(entry)

    def tensor(self, name, dim, stride, data_type):
        self._rec("tensor", name, list(dim), list(stride), data_type)
        return FakeTensor(self, name, dict(dim=dim, stride=stride, data_type=data_type))

    def _conv(self, kind, **kw):
        args = {k: (v.name if isinstance(v, FakeTensor) else v) for k, v in kw.items()}
        self._rec(kind, args)
        return FakeTensor(self, kind + "_out", {})

    def conv_fprop(self, image, weight, **kw):
        return self._conv("conv_fprop", image=image, weight=weight, **kw)

    def conv_dgrad(self, loss, filter, **kw):
        return self._conv("conv_dgrad", loss=loss, filter=filter, **kw)

    def conv_wgrad(self, image, loss, **kw):
        return self._conv("conv_wgrad", image=image, loss=loss, **kw)

    def tensor_scalar(self, value, scalar_type, name=""):
        self._rec("tensor_scalar", value, scalar_type)
        return FakeTensor(self, "scalar%d" % len(self.log), dict(value=value))

    def _op(self, kind, outputs, **kw):
        """An operation recorded with its operands by name; its outputs named kind_<output>."""
        args = {k: (v.name if isinstance(v, FakeTensor) else v) for k, v in kw.items()}
        self._rec(kind, args)
        outs = [FakeTensor(self, "%s_%s" % (kind, o), {}) for o in outputs]
        return outs[0] if len(outs) == 1 else outs

    def batchnorm(self, input, scale, bias, epsilon, **kw):
        # as the frontend: five outputs, the running statistics' None without their inputs
        y, mean, inv = self._op("batchnorm", ("Y", "mean", "inv_var"), input=input,
                                scale=scale, bias=bias, epsilon=epsilon, **kw)
        return [y, mean, inv, None, None]

    def batchnorm_inference(self, input, mean, inv_variance, scale, bias, **kw):
        return self._op("batchnorm_inference", ("Y",), input=input, mean=mean,
                        inv_variance=inv_variance, scale=scale, bias=bias, **kw)

    def batchnorm_backward(self, grad, input, scale, mean, inv_variance, **kw):
        return self._op("batchnorm_backward", ("DX", "DScale", "DBias"), grad=grad, input=input,
                        scale=scale, mean=mean, inv_variance=inv_variance, **kw)

    def relu(self, input, **kw):
        return self._op("relu", ("Y",), input=input, **kw)

    def validate(self):
        self._rec("validate")

    def build_operation_graph(self):
        self._rec("build_operation_graph")

    def create_execution_plans(self, modes):
        self._rec("create_execution_plans", list(modes))
        self.plans = [("engine%d" % i, {"knob": i}) for i in range(self.plans_offered)]

    def create_execution_plan(self, engine, knobs):
        self._rec("create_execution_plan", engine, knobs)
        self.plans = [(engine, knobs)]

    def deselect_numeric_notes(self, notes):
        self._rec("deselect_numeric_notes", list(notes))

    def deselect_workspace_greater_than(self, limit):
        self._rec("deselect_workspace_greater_than", limit)

    def check_support(self):
        self._rec("check_support")
        x = [e for e in self.log if e[0] == "tensor"][0][2]
        if tuple(x) in self.module.unsupported:
            raise self.module.cudnnGraphNotSupportedError("no engine for %s" % (x,))

    def build_plans(self, policy=None):
        self._rec("build_plans", policy)

    def get_execution_plan_count(self):
        return len(self.plans)

    def get_engine_and_knobs_at_index(self, i):
        return self.plans[i]

    def get_workspace_size(self):
        return 4096

    def serialize(self):
        self._rec("serialize")
        return json.dumps([list(map(str, e)) for e in self.log]).encode()

    def deserialize(self, handle, data):
        self._rec("deserialize", handle)
        self.deserialized = json.loads(data.decode())     # a bad file raises, as cuDNN would

    def execute(self, pointers, workspace, handle=None):
        self._rec("execute", dict(pointers), workspace, handle)


class cudnnGraphNotSupportedError(Exception):
    pass


def make():
    """A fresh fake module (its `calls` list records everything; graphs whose first tensor
    has a shape in `unsupported` fail check_support as cuDNN does for a graph no engine runs)."""
    m = types.SimpleNamespace(data_type=data_type, heur_mode=heur_mode,
                              build_plan_policy=build_plan_policy, numerical_note=numerical_note,
                              scalar_type=scalar_type,
                              cudnnGraphNotSupportedError=cudnnGraphNotSupportedError,
                              calls=[], unsupported=set())
    m.pygraph = lambda **kw: FakeGraph(m, **kw)

    def create_handle():
        h = "handle%d" % sum(1 for c in m.calls if c[0] == "create_handle")
        m.calls.append(("create_handle", h))
        return h

    def set_stream(handle, stream):
        m.calls.append(("set_stream", handle, stream))
    m.create_handle, m.set_stream = create_handle, set_stream
    return m


STREAM = 0x5150         # what the tests' engine stream handle reads


@contextlib.contextmanager
def installed(monkeypatch, plan_dir):
    """A fresh fake standing for ``cudnn`` in mxc/ops/cuda/cudnn_plans.py, plans under
    plan_dir, the engine's stream of every device reading STREAM; the real module probed again
    after."""
    from mxc.ops.cuda import cudnn_plans
    fake = make()
    monkeypatch.setenv("MXC_CUDNN_PLAN_DIR", str(plan_dir))
    monkeypatch.setattr(cudnn_plans, "_stream", lambda dev: STREAM)
    cudnn_plans.use_frontend(fake)
    try:
        yield fake
    finally:
        cudnn_plans.use_frontend(None, probe=True)
