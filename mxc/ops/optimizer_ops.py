"""Optimizer update operators with MXNet 1.9.1's names, parameters and formulas: sgd_update,
sgd_mom_update, nag_mom_update, adam_update, rmsprop_update, rmspropalex_update, ftrl_update,
ftml_update, signsgd_update, signum_update, lamb_update_phase1/2, _sparse_adagrad_update,
_adamw_update, their mixed-precision forms (mp_*: float16 weights with float32 master copies and
states) and the multi-tensor forms (multi_*, preloaded_multi_*, _multi_*adamw_update).

Each update is one fused kernel pass per parameter (mxc/ops/cpu/optimizer_ops.pyx,
csrc/kernels/optimizer_ops.h). The weight output is normally the weight itself (``out=weight``,
as MXNet's Python optimizers call them; declared in ``inplace``); states (mom, mean, var, n, z,
weight32, ...) are inputs updated in place (``mutate``), so they are pushed as kernel outputs
too. No operator here has a gradient: MXNet registers none (``differentiable=False``).

MXNet's float parameters are C floats: every one is rounded to float32 before it reaches a
kernel (FTML's epsilon is a double in MXNet and stays one). Arrays are dense: the row_sparse
(lazy) forms are the dense ones with every row present, and lazy_update is accepted and has no
effect.
"""
import math
import struct

import numpy as np

from . import services
from .params import Param
from .registry import OpDef, register, kernel_forward

_FLOATS = ("float16", "float32", "float64")
_MAX_INPLACE = 64        # multi-tensor ops: weight i may be written in place for i < this


_F32 = struct.Struct("f")


def _f32(v):
    # the float32 rounding of v as a Python float; struct rounds as np.float32 does (to nearest
    # even) and costs a third of it, which counts on the per-step update path
    try:
        return _F32.unpack(_F32.pack(v))[0]
    except OverflowError:            # beyond float32's range: inf of the sign, as numpy gives
        return float(np.float32(v))


_ROUNDED = {}     # a tuple of floats -> its float32 roundings (learning rates change rarely)


def _floats(op, name, v, n):
    """The n float32 values of a Tuple<float> attribute (parsed by its "floats" Param kind)."""
    if len(v) != n:
        raise ValueError(f"{op}: parameter '{name}' has {len(v)} values, num_weights is {n}")
    try:
        return _ROUNDED[v]
    except (KeyError, TypeError):      # TypeError: a list, not a tuple (unhashable)
        pass
    t = tuple(_f32(x) for x in v)
    if isinstance(v, tuple):
        if len(_ROUNDED) >= 256:       # a schedule that changes every step: keep it bounded
            _ROUNDED.clear()
        _ROUNDED[v] = t
    return t


# ---- shape and dtype inference -------------------------------------------------------------

def _dt(d):
    return d if isinstance(d, np.dtype) else np.dtype(d)


_FLOAT32 = np.dtype(np.float32)
_NAMED = {}      # (names...) -> frozenset of their dtypes: membership without dtype.name


def _dtype_set(names):
    got = _NAMED.get(names)
    if got is None:
        got = _NAMED[names] = frozenset(np.dtype(n) for n in names)
    return got


def _check(op, shapes, dtypes, names, fp32=(), weight_dtypes=_FLOATS, base=0):
    """Every input has the weight's shape; inputs not in fp32 have the weight's dtype, those in
    fp32 are float32. Returns the weight's (shape, dtype)."""
    ws, wd = tuple(shapes[base]), _dt(dtypes[base])
    if wd not in _dtype_set(weight_dtypes):
        raise ValueError(f"{op}: {names[0]} has dtype {wd.name}; expected one of {weight_dtypes}")
    for k in range(len(names)):
        s, d = tuple(shapes[base + k]), _dt(dtypes[base + k])
        if s != ws:
            raise ValueError(f"{op}: {names[k]} has shape {s}, {names[0]} has shape {ws}")
        want = _FLOAT32 if k in fp32 else wd
        if d != want:
            raise ValueError(f"{op}: {names[k]} has dtype {d.name}, expected {want.name}")
    return ws, wd


def _infer_single(op, names, fp32=(), weight_dtypes=_FLOATS, out_dtype=None):
    def infer(attrs, shapes, dtypes):
        if len(shapes) != len(names):
            raise ValueError(f"{op}: takes {len(names)} inputs ({', '.join(names)}), got {len(shapes)}")
        ws, wd = _check(op, shapes, dtypes, names, fp32, weight_dtypes)
        return [ws], [np.dtype(out_dtype) if out_dtype else wd]
    return infer


# ---- forwards -----------------------------------------------------------------------------

def _rounded(names):
    # MXNet's float parameters are C floats: each reaches the kernel rounded to float32
    def rounded(a, i, o):
        return [_f32(a[n]) for n in names]
    return rounded


def _exact(name):
    return lambda a, i, o: float(a[name])


def _f32_fill(floats, **fill):
    """fill= for float slots read from the attributes of the same name, rounded to float32 (as
    MXNet's C floats; one function per run of such slots: this runs per weight per step), but
    those given in `fill`."""
    out, run = dict(fill), []
    for n in tuple(floats) + (None,):
        if n is not None and n not in fill:
            run.append(n)
            continue
        if run:
            out[tuple(run)] = _rounded(tuple(run))
            run = []
    return out


def _single_forward(kname, mutate, floats, ints=None, fill=None, name=None):
    """Push kernel `kname` reading every input and writing [out] + the mutated inputs; the
    kernel's float slots `floats` (and integer slots `ints`) in the C kernel's order (see
    csrc/kernels/optimizer_ops.h), read by name from the attributes (floats rounded to float32)
    unless `fill` computes them."""
    fill = _f32_fill(floats, **(fill or {}))
    fwd = kernel_forward("optimizer_ops", "opt:" + kname, name=name, ints=ints or (),
                         floats=floats, fill=fill)

    def forward(attrs, inputs, outputs):
        fwd(attrs, inputs, [outputs[0]] + [inputs[k] for k in mutate])
    return forward


# ---- common parameters -------------------------------------------------------------------

def _lr():
    return Param("lr", float, required=True, doc="Learning rate")


_WD = Param("wd", float, 0.0, doc="Weight decay")
_RS = Param("rescale_grad", float, 1.0, doc="Rescale gradient to grad = rescale_grad*grad.")
_CG = Param("clip_gradient", float, -1.0,
            doc="Clip gradient to [-clip_gradient, clip_gradient]; negative turns clipping off.")
_LAZY = Param("lazy_update", bool, True, doc="Lazy update for row_sparse gradients (no effect on "
                                             "dense arrays).")
_MOM = Param("momentum", float, 0.0, doc="The decay rate of momentum estimates at each epoch.")

_SGD_PARAMS = (_lr(), _WD, _RS, _CG, _LAZY)
_SGDMOM_PARAMS = (_lr(), _MOM, _WD, _RS, _CG, _LAZY)
_NAG_PARAMS = (_lr(), _MOM, _WD, _RS, _CG)


def _reg(name, inputs, params, kname, mutate, floats, ints=None, fill=None, aliases=(), fp32=(),
         weight_dtypes=_FLOATS, out_dtype=None, doc=""):
    register(OpDef(name, aliases=aliases, inputs=inputs, params=params,
                   infer=_infer_single(name, inputs, fp32, weight_dtypes, out_dtype),
                   forward=_single_forward(kname, mutate, floats, ints, fill, name),
                   inplace=((0, 0),) if out_dtype is None else (), mutate=mutate, doc=doc,
                   differentiable=False))


_SGD_F = ("lr", "wd", "rescale_grad", "clip_gradient")
_MSGD_F = ("lr", "wd", "momentum", "rescale_grad", "clip_gradient")
# momentum SGD's integer slots: whether there is a mom state, and the index of this weight's
# lr / wd in the preloaded arrays (the last two inputs) or -1 (lr and wd are float slots)
_MSGD_I = ("has_mom", "preloaded")
_MSGD_FILL = {"has_mom": lambda a, i, o: 1, "preloaded": lambda a, i, o: -1}


_reg("sgd_update", ("weight", "grad"), _SGD_PARAMS, "sgd", (), _SGD_F,
     aliases=("_sparse_sgd_update",),
     doc="SGD: weight = (1 - lr*wd)*weight - lr*clip(rescale_grad*grad).")
_reg("sgd_mom_update", ("weight", "grad", "mom"), _SGDMOM_PARAMS, "msgd", (2,), _MSGD_F,
     ints=_MSGD_I, fill=_MSGD_FILL, aliases=("_sparse_sgd_mom_update",),
     doc="Momentum SGD: mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); "
         "weight += mom.")
_reg("mp_sgd_update", ("weight", "grad", "weight32"), _SGD_PARAMS, "mp_sgd", (2,), _SGD_F,
     fp32=(2,), doc="sgd_update on the float32 master copy weight32; weight gets its cast.")
_reg("mp_sgd_mom_update", ("weight", "grad", "mom", "weight32"), _SGDMOM_PARAMS, "mp_msgd",
     (2, 3), _MSGD_F, ints=_MSGD_I, fill=_MSGD_FILL, fp32=(2, 3),
     doc="sgd_mom_update on the float32 master copy weight32 with a float32 mom.")
_reg("nag_mom_update", ("weight", "grad", "mom"), _NAG_PARAMS, "nag", (2,), _MSGD_F,
     doc="Nesterov momentum SGD.")
_reg("mp_nag_mom_update", ("weight", "grad", "mom", "weight32"), _NAG_PARAMS, "mp_nag", (2, 3),
     _MSGD_F, fp32=(2, 3), doc="nag_mom_update on the float32 master copy weight32.")

_reg("ftml_update", ("weight", "grad", "d", "v", "z"),
     (_lr(), Param("beta1", float, 0.6), Param("beta2", float, 0.999),
      Param("epsilon", float, 1e-8), Param("t", int, required=True), _WD, _RS,
      Param("clip_grad", float, -1.0)),
     "ftml", (2, 3, 4),
     ("lr", "beta1", "beta2", "epsilon", "t", "wd", "rescale_grad", "clip_grad"),
     fill={"epsilon": _exact("epsilon"), "t": _exact("t")},      # a double and an int in MXNet
     doc="FTML (Follow the Moving Leader) update.")

_reg("adam_update", ("weight", "grad", "mean", "var"),
     (_lr(), Param("beta1", float, 0.9), Param("beta2", float, 0.999),
      Param("epsilon", float, 1e-8), _WD, _RS, _CG, _LAZY),
     "adam", (2, 3),
     ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient"),
     aliases=("_sparse_adam_update",),
     doc="Adam: mean, var updated in place; weight -= lr*mean/(sqrt(var) + epsilon).")

_reg("rmsprop_update", ("weight", "grad", "n"),
     (_lr(), Param("gamma1", float, 0.95), Param("epsilon", float, 1e-8), _WD, _RS, _CG,
      Param("clip_weights", float, -1.0)),
     "rmsprop", (2,),
     ("lr", "gamma1", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights"),
     doc="RMSProp (Tieleman & Hinton).")

_reg("rmspropalex_update", ("weight", "grad", "n", "g", "delta"),
     (_lr(), Param("gamma1", float, 0.95), Param("gamma2", float, 0.9),
      Param("epsilon", float, 1e-8), _WD, _RS, _CG, Param("clip_weights", float, -1.0)),
     "rmspropalex", (2, 3, 4),
     ("lr", "gamma1", "gamma2", "epsilon", "wd", "rescale_grad", "clip_gradient",
      "clip_weights"),
     doc="RMSProp as in Graves (2013), with momentum.")

_reg("ftrl_update", ("weight", "grad", "z", "n"),
     (_lr(), Param("lamda1", float, 0.01), Param("beta", float, 1.0), _WD, _RS, _CG),
     "ftrl", (2, 3),
     ("lr", "lamda1", "beta", "wd", "rescale_grad", "clip_gradient"),
     aliases=("_sparse_ftrl_update",), doc="FTRL-Proximal update.")

_reg("signsgd_update", ("weight", "grad"), (_lr(), _WD, _RS, _CG), "signsgd", (),
     ("lr", "wd"),
     doc="signSGD: weight = (1 - lr*wd)*weight - lr*sign(grad).")

_reg("signum_update", ("weight", "grad", "mom"),
     (_lr(), _MOM, _WD, _RS, _CG, Param("wd_lh", float, 0.0)), "signum", (2,),
     ("lr", "momentum", "wd", "rescale_grad", "clip_gradient", "wd_lh"),
     doc="Signum: sign of the momentum.")


# ---- LAMB ---------------------------------------------------------------------------------

_LAMB1_PARAMS = (Param("beta1", float, 0.9), Param("beta2", float, 0.999),
                 Param("epsilon", float, 1e-6), Param("t", int, required=True),
                 Param("bias_correction", bool, True), Param("wd", float, required=True), _RS, _CG)


def _power_t(beta):
    # beta^t: MXNet's std::pow(float, int) is a double pow, then stored in the compute type
    return lambda a, i, o: math.pow(_f32(a[beta]), a["t"])


_LAMB1_F = ("beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient", "beta1_t",
            "beta2_t")
_LAMB1_FILL = {"beta1_t": _power_t("beta1"), "beta2_t": _power_t("beta2"),
               "bias_correction": lambda a, i, o: int(a["bias_correction"])}


_reg("lamb_update_phase1", ("weight", "grad", "mean", "var"), _LAMB1_PARAMS, "lamb1", (2, 3),
     _LAMB1_F, ints=("bias_correction",), fill=_LAMB1_FILL,
     doc="LAMB phase 1: updates mean and var in place; returns the direction g.")
_reg("mp_lamb_update_phase1", ("weight", "grad", "mean", "var", "weight32"), _LAMB1_PARAMS,
     "mp_lamb1", (2, 3), _LAMB1_F, ints=("bias_correction",), fill=_LAMB1_FILL, fp32=(2, 3, 4),
     weight_dtypes=("float16",), out_dtype="float32",
     doc="lamb_update_phase1 for float16 weights with float32 states and master copy.")

_LAMB2_PARAMS = (_lr(), Param("lower_bound", float, -1.0), Param("upper_bound", float, -1.0))


def _lamb2_infer(op, mp):
    names = ("weight", "g", "r1", "r2") + (("weight32",) if mp else ())

    def infer(attrs, shapes, dtypes):
        if len(shapes) != len(names):
            raise ValueError(f"{op}: takes {len(names)} inputs ({', '.join(names)}), got {len(shapes)}")
        ws, wd = tuple(shapes[0]), _dt(dtypes[0])
        if wd.name not in _FLOATS:
            raise ValueError(f"{op}: weight has dtype {wd.name}; expected one of {_FLOATS}")
        for k in (1, 4) if mp else (1,):
            if tuple(shapes[k]) != ws:
                raise ValueError(f"{op}: {names[k]} has shape {tuple(shapes[k])}, weight has shape {ws}")
        for k in (2, 3):
            if len(shapes[k]) == 0 or shapes[k][0] != 1:
                raise ValueError(f"{op}: {names[k]} must have shape (1,), got {tuple(shapes[k])}")
        for k in range(1, len(names)):
            want = np.dtype(np.float32) if mp else wd
            if _dt(dtypes[k]) != want:
                raise ValueError(f"{op}: {names[k]} has dtype {_dt(dtypes[k]).name}, expected {want.name}")
        return [ws], [wd]
    return infer


for _name, _mp in (("lamb_update_phase2", False), ("mp_lamb_update_phase2", True)):
    register(OpDef(_name, inputs=("weight", "g", "r1", "r2") + (("weight32",) if _mp else ()),
                   differentiable=False,
                   params=_LAMB2_PARAMS, infer=_lamb2_infer(_name, _mp),
                   forward=_single_forward("mp_lamb2" if _mp else "lamb2", (),
                                           ("lr", "lower_bound", "upper_bound"), name=_name),
                   inplace=((0, 0),), mutate=(4,) if _mp else (),
                   doc="LAMB phase 2: weight -= lr * r1/r2 * g (trust ratio from the norms r1 of "
                       "the weight and r2 of g; r1 clipped to [lower_bound, upper_bound])."))


# ---- AdaGrad ------------------------------------------------------------------------------

def _adagrad_infer(attrs, shapes, dtypes):
    if attrs["wd"] != 0:
        raise ValueError("_sparse_adagrad_update: sparse adagrad_update does not support wd")
    return _infer_single("_sparse_adagrad_update", ("weight", "grad", "history"))(attrs, shapes, dtypes)


register(OpDef("_sparse_adagrad_update", inputs=("weight", "grad", "history"), differentiable=False,
               params=(_lr(), Param("epsilon", float, 1e-7), _WD, _RS, _CG),
               infer=_adagrad_infer,
               forward=_single_forward("adagrad", (2,),
                                       ("lr", "epsilon", "rescale_grad", "clip_gradient"),
                                       name="_sparse_adagrad_update"),
               inplace=((0, 0),), mutate=(2,),
               doc="AdaGrad (MXNet's row_sparse update; here on dense arrays, every row present): "
                   "history += g^2; weight -= lr*g/sqrt(history + epsilon)."))


# ---- AdamW (contrib) ----------------------------------------------------------------------

_ADAMW_PARAMS = (_lr(), Param("beta1", float, 0.9), Param("beta2", float, 0.999),
                 Param("epsilon", float, 1e-8), _WD, Param("eta", float, required=True), _CG)


_ADAMW_F = ("lr", "beta1", "beta2", "epsilon", "wd", "eta", "clip_gradient")
# multi: 1 for the multi-tensor forms (MXNet's _multi_adamw skips on a non-finite scale only)
_ADAMW_I = ("multi",)


def _adamw_infer(op, mp):
    names = ("weight", "grad", "mean", "var") + (("weight32",) if mp else ())

    def infer(attrs, shapes, dtypes):
        if len(shapes) != len(names) + 1:
            raise ValueError(f"{op}: takes {len(names) + 1} inputs ({', '.join(names)}, "
                             f"rescale_grad), got {len(shapes)}")
        ws, wd = _check(op, shapes, dtypes, names, (2, 3, 4) if mp else ())
        if _dt(dtypes[-1]) != np.float32 or int(np.prod(shapes[-1])) < 1:
            raise ValueError(f"{op}: rescale_grad must be a float32 array of at least one "
                             f"element, got {_dt(dtypes[-1]).name} {tuple(shapes[-1])}")
        return [ws], [wd]
    return infer


for _name, _mp in (("_adamw_update", False), ("_mp_adamw_update", True)):
    _ins = ("weight", "grad", "mean", "var") + (("weight32",) if _mp else ()) + ("rescale_grad",)
    register(OpDef(_name, inputs=_ins, params=_ADAMW_PARAMS, infer=_adamw_infer(_name, _mp),
                   differentiable=False,
                   forward=_single_forward("mp_adamw" if _mp else "adamw",
                                           (2, 3, 4) if _mp else (2, 3), _ADAMW_F, _ADAMW_I,
                                           {"multi": lambda a, i, o: 0}, name=_name),
                   inplace=((0, 0),), mutate=(2, 3, 4) if _mp else (2, 3),
                   doc="AdamW: decoupled weight decay, "
                       "weight -= eta*(lr*mean/(sqrt(var) + epsilon) + wd*weight); the update is "
                       "skipped when rescale_grad (an array) is NaN, inf or 0."))


# ---- multi-tensor forms -------------------------------------------------------------------
# One kernel pass per weight (MXNet runs one kernel over all of them; the values are the same).

def _multi_infer(op, stride, fp32, extra, tuples):
    """extra: trailing inputs after the per-weight groups ("lrs_wds" or "scale" or None)."""
    n_extra = {"lrs_wds": 2, "scale": 1, None: 0}[extra]
    seen = {}       # (shapes, dtypes) -> result: a training loop asks the same every step

    def infer(attrs, shapes, dtypes):
        n = attrs["num_weights"]
        if n < 1:
            raise ValueError(f"{op}: num_weights must be at least 1, got {n}")
        if len(shapes) != stride * n + n_extra:
            raise ValueError(f"{op}: num_weights={n} needs {stride * n + n_extra} inputs, "
                             f"got {len(shapes)}")
        for t in tuples:
            _floats(op, t, attrs[t], n)     # its length (the roundings are remembered)
        key = (tuple(map(tuple, shapes)), tuple(dtypes))
        got = seen.get(key)
        if got is None:
            got = seen[key] = _multi_check(shapes, dtypes, n)
            if len(seen) > 64:
                seen.clear()
        return list(got[0]), list(got[1])

    def _multi_check(shapes, dtypes, n):
        out_s, out_d = [], []
        names = _multi_names(stride, fp32)
        for i in range(n):
            s, d = _check(op, shapes, dtypes, _Suffixed(names, i), fp32, _FLOATS, base=stride * i)
            out_s.append(s)
            out_d.append(d)
        if extra == "lrs_wds":
            for k, nm in ((stride * n, "lrs"), (stride * n + 1, "wds")):
                if int(np.prod(shapes[k])) != n or _dt(dtypes[k]) != np.float32:
                    raise ValueError(f"{op}: {nm} must be a float32 array of num_weights={n} "
                                     f"values, got {_dt(dtypes[k]).name} {tuple(shapes[k])}")
        if extra == "scale" and (_dt(dtypes[-1]) != np.float32 or int(np.prod(shapes[-1])) < 1):
            raise ValueError(f"{op}: rescale_grad must be a float32 array, got "
                             f"{_dt(dtypes[-1]).name} {tuple(shapes[-1])}")
        return tuple(out_s), tuple(out_d)
    return infer


class _Suffixed:
    """names[k] + "_i", made only when an error message asks for it (enumerate, [0])."""
    __slots__ = ("names", "i")

    def __init__(self, names, i):
        self.names, self.i = names, i

    def __getitem__(self, k):
        return f"{self.names[k]}_{self.i}"

    def __len__(self):
        return len(self.names)


def _multi_names(stride, fp32):
    if stride == 5:
        return ("weight", "grad", "mean", "var", "weight32")
    if stride == 4 and 3 in fp32 and 2 in fp32:
        return ("weight", "grad", "mom", "weight32")
    if stride == 4:
        return ("weight", "grad", "mean", "var")
    if stride == 3:
        return ("weight", "grad", "weight32") if 2 in fp32 else ("weight", "grad", "mom")
    return ("weight", "grad")


def _multi_sgd_forward(op, stride, mp, has_mom, preloaded):
    # one kernel push per weight, each with its own learning rate and weight decay
    push = kernel_forward("optimizer_ops", "opt:mp_msgd" if mp else "opt:msgd", name=op)

    def forward(a, inputs, outputs):
        n = a["num_weights"]
        lrs = wds = None
        if not preloaded:
            lrs, wds = _floats(op, "lrs", a["lrs"], n), _floats(op, "wds", a["wds"], n)
        mo = _f32(a.get("momentum", 0.0))
        rs, cg = _f32(a["rescale_grad"]), _f32(a["clip_gradient"])
        tail = list(inputs[stride * n:])
        for i in range(n):
            grp = list(inputs[stride * i: stride * (i + 1)])
            slots = {"lr": lrs[i] if lrs else 0.0, "wd": wds[i] if wds else 0.0, "momentum": mo,
                     "rescale_grad": rs, "clip_gradient": cg, "has_mom": 1 if has_mom else 0,
                     "preloaded": i if preloaded else -1}
            push(slots, grp + tail, [outputs[i]] + grp[2:])
    return forward


def _multi_adamw_forward(op, stride, mp):
    push = kernel_forward("optimizer_ops", "opt:mp_adamw" if mp else "opt:adamw", name=op)

    def forward(a, inputs, outputs):
        n = a["num_weights"]
        lrs, wds, etas = (_floats(op, k, a[k], n) for k in ("lrs", "wds", "etas"))
        b1, b2, eps, cg = (_f32(a[k]) for k in ("beta1", "beta2", "epsilon", "clip_gradient"))
        scale = inputs[-1]
        for i in range(n):
            grp = list(inputs[stride * i: stride * (i + 1)])
            push({"lr": lrs[i], "beta1": b1, "beta2": b2, "epsilon": eps, "wd": wds[i],
                  "eta": etas[i], "clip_gradient": cg, "multi": 1},
                 grp + [scale], [outputs[i]] + grp[2:])
    return forward


_NUMW = Param("num_weights", int, 1, doc="Number of updated weights.")
_LRS = Param("lrs", "floats", required=True, doc="Learning rates (a tuple of floats).")
_WDS = Param("wds", "floats", required=True, doc="Weight decays (a tuple of floats).")


def _reg_multi(name, stride, params, forward, fp32=(), extra=None, tuples=("lrs", "wds"), doc=""):
    register(OpDef(name, inputs=(), variadic="num_weights", params=params, differentiable=False,
                   num_outputs=lambda a: a["num_weights"],
                   infer=_multi_infer(name, stride, fp32, extra, tuples), forward=forward,
                   inplace=tuple((stride * i, i) for i in range(_MAX_INPLACE)), doc=doc))


for _name, _stride, _mp, _mom, _pre in (
        ("multi_sgd_update", 2, False, False, False),
        ("multi_sgd_mom_update", 3, False, True, False),
        ("multi_mp_sgd_update", 3, True, False, False),
        ("multi_mp_sgd_mom_update", 4, True, True, False),
        ("preloaded_multi_sgd_update", 2, False, False, True),
        ("preloaded_multi_sgd_mom_update", 3, False, True, True),
        ("preloaded_multi_mp_sgd_update", 3, True, False, True),
        ("preloaded_multi_mp_sgd_mom_update", 4, True, True, True)):
    _fp = tuple(range(2, _stride)) if _mp else ()
    _params = (() if _pre else (_LRS, _WDS)) + ((_MOM,) if _mom else ()) + (_RS, _CG, _NUMW)
    _reg_multi(_name, _stride, _params, _multi_sgd_forward(_name, _stride, _mp, _mom, _pre),
               fp32=_fp, extra="lrs_wds" if _pre else None, tuples=() if _pre else ("lrs", "wds"),
               doc="Momentum SGD on num_weights (weight, grad[, mom][, weight32]) groups"
                   + (", learning rates and weight decays in the last two (float32) inputs"
                      if _pre else "") + ": mom = momentum*mom - lr*wd*w - lr*clip(rescale_grad*g);"
                   " w += mom.")

_MADAMW_PARAMS = (_LRS, Param("beta1", float, 0.9), Param("beta2", float, 0.999),
                  Param("epsilon", float, 1e-8), _WDS,
                  Param("etas", "floats", required=True, doc="Learning rate schedule multipliers."),
                  _CG, _NUMW)
for _name, _stride, _mp in (("_multi_adamw_update", 4, False), ("_multi_mp_adamw_update", 5, True)):
    _reg_multi(_name, _stride, _MADAMW_PARAMS, _multi_adamw_forward(_name, _stride, _mp),
               fp32=(2, 3, 4) if _mp else (), extra="scale", tuples=("lrs", "wds", "etas"),
               doc="AdamW on num_weights (weight, grad, mean, var[, weight32]) groups; the last "
                   "input is rescale_grad (skips the update when NaN, inf or 0).")


# ---- LARS helpers, reset_arrays, group AdaGrad ----------------------------------------------
# Written as a few kernel pushes of existing operators per array (not yet one fused kernel).

def _nd():
    return services.ndarray


def _no_grad(F, attrs, inputs, outputs, out_grads):
    """No gradient flows through these helpers (MXNet does not differentiate them either)."""
    return [None] * len(inputs)


def _f32_dtypes(op, dtypes, what):
    for k, d in enumerate(dtypes):
        if _dt(d).name not in _FLOATS:
            raise ValueError(f"{op}: {what} {k} has dtype {_dt(d).name}; expected a float dtype")


def _multi_sum_sq_infer(attrs, shapes, dtypes):
    n = attrs["num_arrays"]
    if n < 1 or len(shapes) != n:
        raise ValueError(f"multi_sum_sq: num_arrays={n} but {len(shapes)} arrays given")
    _f32_dtypes("multi_sum_sq", dtypes, "array")
    for k, d in enumerate(dtypes):
        if _dt(d) != _dt(dtypes[0]):
            raise ValueError(f"multi_sum_sq: every array must have one dtype; array_0 is "
                             f"{_dt(dtypes[0]).name}, array_{k} is {_dt(d).name}")
    return [(n,)], [np.dtype(np.float32)]


def _multi_sum_sq_forward(attrs, inputs, outputs):
    nd = _nd()
    out = outputs[0]
    for k, x in enumerate(inputs):
        xf = x if x.dtype == np.float32 else nd.cast(x, dtype="float32")
        nd.sum(nd.square(xf.reshape((-1,))), axis=0, keepdims=True, out=out[k:k + 1])


register(OpDef("multi_sum_sq", inputs=(), variadic="num_arrays", differentiable=False,
               params=(Param("num_arrays", int, required=True, doc="number of input arrays."),),
               infer=_multi_sum_sq_infer, forward=_multi_sum_sq_forward, grad=_no_grad,
               doc="The sum of squares of each of num_arrays arrays, as a float32 array of "
                   "num_arrays values (computed in float32)."))


def _multi_lars_infer(attrs, shapes, dtypes):
    names = ("lrs", "weights_sum_sq", "grads_sum_sq", "wds")
    if len(shapes) != 4:
        raise ValueError(f"multi_lars: takes 4 inputs ({', '.join(names)}), got {len(shapes)}")
    s0 = tuple(shapes[0])
    for nm, s, d in zip(names, shapes, dtypes):
        if tuple(s) != s0 or len(s0) != 1:
            raise ValueError(f"multi_lars: {nm} has shape {tuple(s)}; every input must be 1-D "
                             f"with the shape of lrs {s0}")
        if _dt(d) != np.float32:
            raise ValueError(f"multi_lars: {nm} has dtype {_dt(d).name}, expected float32")
    return [s0], [np.dtype(np.float32)]


def _multi_lars_forward(attrs, inputs, outputs):
    nd = _nd()
    lrs, wss, gss, wds = inputs
    eta, eps, rs = (_f32(attrs[k]) for k in ("eta", "eps", "rescale_grad"))
    w_norm = nd.sqrt(wss)
    g_norm = nd.sqrt(gss)
    lars = lrs * eta * w_norm / (g_norm * rs + wds * w_norm + eps)
    valid = nd.broadcast_logical_and(w_norm > 0, gss > 0)
    nd.where(valid, lars, lrs, out=outputs[0])


register(OpDef("multi_lars", inputs=("lrs", "weights_sum_sq", "grads_sum_sq", "wds"),
               differentiable=False,
               params=(Param("eta", float, required=True, doc="LARS coefficient eta."),
                       Param("eps", float, required=True, doc="Small value added to the "
                             "denominator."),
                       Param("rescale_grad", float, 1.0, doc="Gradient rescale factor.")),
               infer=_multi_lars_infer, forward=_multi_lars_forward, grad=_no_grad,
               doc="LARS learning rates: lr*eta*|w|/(|g|*rescale_grad + wd*|w| + eps) where both "
                   "norms are positive, else lr (norms from the sums of squares given)."))


def _reset_infer(attrs, shapes, dtypes):
    n = attrs["num_arrays"]
    if len(shapes) != n:
        raise ValueError(f"reset_arrays: num_arrays={n} but {len(shapes)} arrays given")
    return [], []


def _reset_forward(attrs, inputs, outputs):
    for x in inputs:
        x[:] = 0


register(OpDef("reset_arrays", inputs=(), variadic="num_arrays", differentiable=False,
               params=(Param("num_arrays", int, required=True, doc="number of input arrays."),),
               infer=_reset_infer, forward=_reset_forward, num_outputs=0, grad=_no_grad,
               mutate=tuple(range(_MAX_INPLACE)),
               doc="Sets every one of num_arrays arrays to zero in place (no outputs)."))


def _group_adagrad_infer(attrs, shapes, dtypes):
    op = "_contrib_group_adagrad_update"
    if len(shapes) != 3:
        raise ValueError(f"{op}: takes 3 inputs (weight, grad, history), got {len(shapes)}")
    ws, gs, hs = (tuple(s) for s in shapes)
    if gs != ws:
        raise ValueError(f"{op}: grad has shape {gs}, weight has shape {ws}")
    if len(ws) < 1 or hs != (ws[0], 1) and hs != (ws[0],):
        raise ValueError(f"{op}: history must have shape ({ws[0] if ws else '?'}, 1), got {hs}")
    _f32_dtypes(op, dtypes, "input")
    return [ws], [_dt(dtypes[0])]


def _group_adagrad_forward(attrs, inputs, outputs):
    nd = _nd()
    w, g, h = inputs
    lr, rs, cg, eps = (_f32(attrs[k]) for k in ("lr", "rescale_grad", "clip_gradient", "epsilon"))
    g = g * rs
    if cg >= 0:
        g = nd.clip(g, -cg, cg)
    g2 = nd.reshape(g, (g.shape[0], -1))
    h2 = nd.reshape(h, (h.shape[0], 1)) + nd.mean(nd.square(g2), axis=1, keepdims=True)
    nd._copyto(nd.reshape(h2, h.shape), out=h)
    upd = nd.broadcast_div(g2, nd.sqrt(h2 + eps)) * lr
    res = nd.reshape(w, (w.shape[0], -1)) - upd
    nd._copyto(nd.reshape(res, w.shape), out=outputs[0])


register(OpDef("_contrib_group_adagrad_update", inputs=("weight", "grad", "history"),
               differentiable=False,
               params=(_lr(), _RS, _CG, Param("epsilon", float, 1e-5,
                                             doc="Epsilon for numerical stability")),
               infer=_group_adagrad_infer, forward=_group_adagrad_forward,
               inplace=((0, 0),), mutate=(2,),
               doc="Group AdaGrad: history += mean(g^2 over each row); "
                   "weight -= lr*g/sqrt(history + epsilon) (g = clip(rescale_grad*grad))."))


def _square_sum(F, attrs, x):
    axis = attrs["axis"]
    return F.sum(F.square(x), axis=axis, keepdims=attrs["keepdims"], exclude=attrs["exclude"])


def _square_sum_grad(F, attrs, inputs, outputs, out_grads):
    """d/dx sum(x^2) = 2x times the output gradient broadcast back over the reduced axes (one
    node, so a row_sparse input's sparse implementation is differentiated too)."""
    x, og = inputs[0], out_grads[0]
    nd = len(x.shape)
    axis = attrs["axis"]
    axes = set(range(nd)) if axis is None or axis == () else {a % nd for a in axis}
    if attrs["exclude"]:
        axes = set(range(nd)) - axes
    if not attrs["keepdims"]:
        og = og.reshape(tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return [F.broadcast_mul(x * 2, og)]


register(OpDef("_square_sum", params=(Param("axis", "shape_opt", None, optional=True),
                                      Param("keepdims", bool, False),
                                      Param("exclude", bool, False)),
               composite=_square_sum, grad=_square_sum_grad,
               doc="sum(square(data), axis) (MXNet's helper for row_sparse norms)."))
