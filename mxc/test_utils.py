"""Testing helpers with MXNet 1.9.1's names and behaviour (``mxnet.test_utils``).

Comparison helpers (``assert_almost_equal`` and friends) take NDArrays or numpy arrays and use
MXNet's per-dtype default tolerances. The gradient checkers take a Symbol (once mx.sym exists)
or, as an mxc extension, a Python function of NDArrays, so imperative code can be checked today.
"""
import contextlib
import functools
import numbers
import os
import random as _pyrandom
import sys

import numpy as np
import numpy.random as rnd  # noqa: F401  (MXNet's tests take rnd from the star import)

import mxc as mx  # noqa: F401  (exported by star-imports, as MXNet's)
from . import autograd, initializer as _init, ndarray as _nd, symbol as _sym
from .base import MXNetError
from .context import Context, cpu, current_context, set_current_context
from .ndarray import NDArray, array  # noqa: F401  (array: MXNet's tests take it from the star import)
from .util import use_np, use_np_array, use_np_shape, np_shape, np_array  # noqa: F401
from .ndarray import sparse as _sp
from .ops.contrib_misc import all_close_numpy
from .symbol import Symbol
from .io import DataIter, MNISTIter

# no __all__: as MXNet's module, `from mxnet.test_utils import *` also brings mx and np

def default_context():
    """The context tests run on: this thread's current context, as in MXNet."""
    return current_context()


def set_default_context(ctx):
    """Make ctx the context this thread's tests run on (thread-local, as in MXNet)."""
    set_current_context(ctx)


def default_dtype():
    return np.float32


# MXNet's default tolerances per dtype
_RTOLS = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5,
          np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
          np.dtype(np.int32): 0, np.dtype(np.int64): 0}
_ATOLS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20,
          np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
          np.dtype(np.int32): 0, np.dtype(np.int64): 0}


def default_rtols():
    return dict(_RTOLS)


def default_atols():
    return dict(_ATOLS)


def default_numeric_eps():
    return {np.dtype(np.float16): 1.0 / 2**6, np.dtype(np.float32): 1.0 / 2**9,
            np.dtype(np.float64): 1.0 / 2**14}


def effective_dtype(dat):
    """The dtype a computation on `dat` effectively ran in (no TF32 on CPU: its own dtype)."""
    return np.dtype(dat.dtype)


def get_tolerance(dat, tol, default_tol):
    if tol is not None:
        return tol
    if isinstance(default_tol, dict):
        return default_tol.get(effective_dtype(dat), default_tol.get(np.dtype(np.float64)))
    return default_tol


def get_tols(x, y, rtol, atol):
    """Tolerances for comparing x and y: the looser of their dtypes' defaults."""
    if isinstance(x, numbers.Number):
        x = np.array(x)
    if isinstance(y, numbers.Number):
        y = np.array(y)
    rtol = max(get_tolerance(x, rtol, _RTOLS), get_tolerance(y, rtol, _RTOLS))
    atol = max(get_tolerance(x, atol, _ATOLS), get_tolerance(y, atol, _ATOLS))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    return _ATOLS.get(np.dtype(dtype), 1e-20) if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    return _RTOLS.get(np.dtype(dtype), 1e-5) if rtol is None else rtol


def get_etol(etol=None):
    return 0 if etol is None else etol


def random_arrays(*shapes):
    """numpy arrays of standard normals in the default dtype (a scalar for shape ())."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, **kwargs):
    low = kwargs.pop("low", 0.0)
    high = kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    if kwargs:
        raise TypeError(f"random_uniform_arrays: unknown arguments {sorted(kwargs)}")
    # always a list, one shape too (as MXNet: unlike random_arrays, which unwraps one)
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """k distinct elements of `population` (a list), in random order."""
    return _pyrandom.sample(list(population), k)


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    return np.random.randint(x_low, x_high), np.random.randint(y_low, y_high)


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """A random sparse array and its parts, as MXNet's: (RowSparseNDArray, (values, indices))
    or (CSRNDArray, (indptr, indices, data)). `density` is the expected fraction of rows
    (row_sparse) or entries (csr) present; distribution 'uniform' (csr also 'powerlaw')."""
    ctx = default_context() if ctx is None else ctx
    density = np.random.rand() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    distribution = "uniform" if distribution is None else distribution
    if stype == "row_sparse":
        if distribution != "uniform":
            raise ValueError(f"Distribution {distribution} not supported for row_sparse")
        if rsp_indices is not None:
            indices = np.asarray(rsp_indices)
        else:
            indices = np.argwhere(np.random.rand(shape[0]) < density).flatten()
        if indices.shape[0] == 0:
            return (_sp.zeros("row_sparse", shape, ctx, dtype),
                    (np.array([], dtype=dtype), np.array([])))
        val = np.random.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            val.fill(data_init)
        if modifier_func is not None:
            val = np.vectorize(modifier_func)(val).astype(dtype)
        arr = _sp.row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
        return arr, (val, indices)
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError("csr needs a 2-D shape")
        m, n = shape
        if distribution == "uniform":
            mask = np.random.rand(m, n) < density
        elif distribution == "powerlaw":
            mask = np.zeros((m, n), dtype=bool)
            budget, per_row = int(m * n * density), 1
            for r in range(m):
                k = min(per_row, n, budget)
                mask[r, :k] = True
                budget -= k
                per_row *= 2
                if budget <= 0:
                    break
        else:
            raise ValueError(f"Distribution not supported: {distribution}")
        dense = np.where(mask, np.random.rand(m, n), 0).astype(dtype)
        if data_init is not None:
            dense[mask] = data_init
        if modifier_func is not None:
            dense[mask] = np.vectorize(modifier_func)(dense[mask])
        csr = _sp.csr_matrix(dense, ctx=ctx, dtype=dtype)
        if shuffle_csr_indices:
            shuffle_csr_column_indices(csr)
        return csr, (csr.indptr, csr.indices, csr.data)
    raise ValueError(f"unknown storage type {stype!r}")


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random sparse array alone (rand_sparse_ndarray without its parts); row_sparse row
    indices given in `rsp_indices` are sorted first, as MXNet's canonical form needs."""
    if stype not in ("row_sparse", "csr"):
        raise AssertionError(f"Unknown storage type: {stype}")
    if stype == "row_sparse" and rsp_indices is not None:
        rsp_indices = np.sort(np.asarray(rsp_indices))
    arr, _ = rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                 data_init=data_init, rsp_indices=rsp_indices,
                                 modifier_func=modifier_func,
                                 shuffle_csr_indices=shuffle_csr_indices)
    return arr


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None, dtype=None,
                           modifier_func=None, shuffle_csr_indices=False):
    """create_sparse_array where a row_sparse array's rows are exactly `rsp_indices` (none when
    it is None): its density comes from the indices alone."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None and len(rsp_indices) > shape[0]:
            raise AssertionError(f"create_sparse_array_zd: {len(rsp_indices)} row indices for "
                                 f"{shape[0]} rows")
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def shuffle_csr_column_indices(csr):
    """Put the column indices (and their values) of each row of a CSR array in random order,
    in place: the matrix is unchanged, its indices are no longer sorted."""
    indptr = csr.indptr.asnumpy()
    cols, vals = csr.indices.asnumpy(), csr.data.asnumpy()
    for r in range(len(indptr) - 1):
        perm = indptr[r] + np.random.permutation(indptr[r + 1] - indptr[r])
        cols[indptr[r]:indptr[r + 1]] = cols[perm]
        vals[indptr[r]:indptr[r + 1]] = vals[perm]
    csr.indices[:] = cols
    csr.data[:] = vals


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random NDArray: uniform in [0, 1) for dense storage, rand_sparse_ndarray otherwise."""
    dtype = default_dtype() if dtype is None else dtype
    ctx = default_context() if ctx is None else ctx
    if stype != "default":
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                     modifier_func=modifier_func,
                                     shuffle_csr_indices=shuffle_csr_indices,
                                     distribution=distribution, ctx=ctx)
        return arr
    return _nd.array(np.random.uniform(size=shape).astype(dtype), ctx=ctx, dtype=dtype)


def create_vector(size, dtype=np.int64):
    return _nd.arange(0, size, dtype=dtype)


def create_2d_tensor(rows, columns, dtype=np.int64):
    a = np.arange(0, rows).reshape(rows, 1)
    return _nd.array(np.broadcast_to(a, (rows, columns)), dtype=dtype)


def assign_each(the_input, function):
    out = np.empty_like(the_input)
    for idx, v in np.ndenumerate(the_input):
        out[idx] = function(v) if function is not None else v
    return out


def assign_each2(input1, input2, function):
    out = np.empty_like(input1)
    for idx, v in np.ndenumerate(input1):
        out[idx] = function(v, input2[idx]) if function is not None else v
    return out


def get_identity_mat(size):
    return np.eye(size)


def get_identity_mat_batch(size):
    return np.stack([np.eye(size)] * 2)   # MXNet's helper: a batch of two


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce `dat` over `axis` (int, tuple or None) with a reduction that takes one axis."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else list(range(dat.ndim))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i] = 1
        ret = ret.reshape(tuple(shape))
    return ret


def _as_np(a):
    if isinstance(a, NDArray):
        return a.asnumpy()
    return np.asarray(a) if not isinstance(a, np.ndarray) else a


def find_max_violation(a, b, rtol, atol, equal_nan=False):
    """The index and value of the largest |a-b| / (atol + rtol|b|). Equal values (infinities
    too) violate nothing; an infinity against anything else, or NaN against a number (or
    against NaN without equal_nan), violates infinitely (MXNet's gave NaN there and pointed at
    whichever element came first)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.abs(a - b)
        tol = atol + rtol * np.abs(b)
        violation = np.asarray(diff / (tol + 1e-20), dtype=np.float64)
        same = np.asarray(a == b)
        if equal_nan:
            same = same | (np.isnan(a) & np.isnan(b))
    violation = np.where(same, 0.0, np.where(np.isnan(violation), np.inf, violation))
    idx = tuple(int(i) for i in np.unravel_index(np.nanargmax(violation), violation.shape)) \
        if violation.size else ()
    return idx, np.max(violation) if violation.size else 0.0


_find_max_violation = find_max_violation


def same(a, b):
    """a and b have the same values (and shape)."""
    return np.array_equal(_as_np(a), _as_np(b))


def checkShapes(a, b):
    if a.shape != b.shape:
        raise AssertionError(f"Shape mismatch: {a.shape} vs {b.shape}")


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    a, b = _as_np(a), _as_np(b)
    rtol, atol = get_tols(a, b, rtol, atol)
    if not use_broadcast and a.shape != b.shape:
        return False
    return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def locationError(a, b, index, names, maxError=False):
    return (f"Location of maximum error: {index}, {names[0]}={a[index]:.8f}, "
            f"{names[1]}={b[index]:.8f}")


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Assert a ~ b with MXNet's default tolerances for their dtypes; the message names the
    element that violates them most."""
    if (isinstance(a, NDArray) and isinstance(b, NDArray) and a.shape == b.shape
            and a.stype == "default" and b.stype == "default"):
        # as MXNet's: one native pass decides the common case (numpy's rule), without copies;
        # the numpy path below only runs to explain a failure
        rt, at = get_tols(a, b, rtol, atol)
        if all_close_numpy(a, b, rt, at, equal_nan):
            return
    a_np, b_np = _as_np(a), _as_np(b)
    rtol, atol = get_tols(a_np, b_np, rtol, atol)
    if not use_broadcast:
        checkShapes(a_np, b_np)
    if np.allclose(a_np, b_np, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    af = np.broadcast_to(a_np, np.broadcast_shapes(a_np.shape, b_np.shape)).astype(np.float64)
    bf = np.broadcast_to(b_np, af.shape).astype(np.float64)
    index, rel = find_max_violation(af, bf, rtol, atol, equal_nan)
    msg = (f"\nError {rel:f} exceeds tolerance rtol={rtol:e}, atol={atol:e}"
           + (f" ({names[0]} vs {names[1]})" if names else "")
           + (f".  {locationError(af, bf, index, names)}" if af.size else "")
           + f"\n {names[0]}: {a_np}\n {names[1]}: {b_np}")
    raise AssertionError(msg)


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """Like assert_almost_equal, but a fraction `etol` of elements may violate the tolerance."""
    etol = get_etol(etol)
    if etol <= 0:
        return assert_almost_equal(a, b, rtol, atol, names, equal_nan)
    a_np, b_np = _as_np(a), _as_np(b)
    rtol, atol = get_tols(a_np, b_np, rtol, atol)
    bad = ~np.isclose(a_np, b_np, rtol=rtol, atol=atol, equal_nan=equal_nan)
    frac = float(np.mean(bad)) if bad.size else 0.0
    if frac > etol:
        raise AssertionError(f"{frac:.4f} of the elements of {names[0]} and {names[1]} differ "
                             f"beyond rtol={rtol}, atol={atol} (allowed: {etol})")


def almost_equal_ignore_nan(a, b, rtol=None, atol=None):
    a, b = np.copy(_as_np(a)), np.copy(_as_np(b))
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan] = 0
    b[nan] = 0
    return almost_equal(a, b, rtol, atol)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    a, b = np.copy(_as_np(a)), np.copy(_as_np(b))
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """f(*args, **kwargs) raises exception_type."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise {exception_type.__name__}")


def retry(n):
    """Retry a (statistical) test up to n times; the last failure propagates."""
    if n < 1:
        raise ValueError("retry: n must be at least 1")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if i == n - 1:
                        raise
        return wrapper
    return decorate


def with_seed(seed=None):
    """Seed numpy, Python's random and mx.random for a test; the seed is printed on failure
    (MXNET_TEST_SEED overrides), as MXNet's tests/common.py does."""
    def decorate(test):
        @functools.wraps(test)
        def wrapper(*args, **kwargs):
            env = os.environ.get("MXNET_TEST_SEED")
            s = int(env) if env else (seed if seed is not None else np.random.randint(0, 2**31))
            np.random.seed(s)
            _pyrandom.seed(s)
            _seed_mx(s)
            try:
                return test(*args, **kwargs)
            except BaseException:
                print(f"To reproduce: MXNET_TEST_SEED={s}", file=sys.stderr)
                raise
        return wrapper
    return decorate


def _seed_mx(s):
    try:
        from . import random as mxrandom
    except ImportError:       # mx.random not built in this tree
        return
    mxrandom.seed(s)


# ---- gradient checks ------------------------------------------------------------------------
def _as_function(sym):
    """A forward function of NDArrays for `sym`: a Python callable (mxc), or a Symbol's
    imperative evaluation once the symbol front end exists."""
    if callable(sym) and not hasattr(sym, "list_arguments"):
        return sym, None
    if hasattr(sym, "list_arguments"):
        names = sym.list_arguments()

        def f(*arrays):
            return sym.eval_imperative(dict(zip(names, arrays)))
        return f, names
    raise TypeError("expected a Symbol or a function of NDArrays")


def _location(location, names, ctx, dtype):
    if isinstance(location, dict):
        if names is None:
            names = list(location)
        arrays = [location[n] for n in names]
    else:
        arrays = list(location)
    return [a.copyto(ctx) if isinstance(a, NDArray) else _nd.array(a, ctx=ctx, dtype=dtype)
            for a in arrays], names


def _outputs(out):
    return [out] if isinstance(out, NDArray) else list(out)


# ---- Symbols: bound and run by the executor, as MXNet's test_utils does ----------------------
def _is_symbol(sym):
    return isinstance(sym, Symbol)


def _parse_location(sym, location, ctx, dtype=default_dtype()):
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location.keys()) != set(names):
            raise ValueError("Symbol arguments and keys of the given location do not match. "
                             f"symbol args:{set(names)}, location.keys():{set(location.keys())}")
    else:
        location = dict(zip(names, location))
    return {k: (_nd.array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
                if not isinstance(v, NDArray) else v) for k, v in location.items()}


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype()):
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states.keys()) != set(names):
            raise ValueError("Symbol aux_states names and given aux_states do not match. "
                             f"symbol aux_names:{set(names)}, aux_states.keys:{set(aux_states)}")
    else:
        aux_states = dict(zip(names, aux_states))
    return {k: (_nd.array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
                if not isinstance(v, NDArray) else v) for k, v in aux_states.items()}


def _sym_numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                      dtype=default_dtype()):
    """Central differences of sum(outputs[0]) through a bound executor (MXNet's numeric_grad)."""
    approx = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        executor.arg_dict[k][:] = v
    if aux_states is not None:
        for k, v in aux_states.items():
            executor.aux_dict[k][:] = v
    for k, v in location.items():
        if np.issubdtype(v.dtype, np.integer):
            continue
        old = v.copy()
        flat = v.reshape(-1)
        for i in range(v.size):
            flat[i] += eps / 2.0
            executor.arg_dict[k][:] = v
            if aux_states is not None:
                for key, val in aux_states.items():
                    executor.aux_dict[key][:] = val
            executor.forward(is_train=use_forward_train)
            f_peps = executor.outputs[0].asnumpy()
            flat[i] -= eps
            executor.arg_dict[k][:] = v
            if aux_states is not None:
                for key, val in aux_states.items():
                    executor.aux_dict[key][:] = val
            executor.forward(is_train=use_forward_train)
            f_neps = executor.outputs[0].asnumpy()
            approx[k].reshape(-1)[i] = (f_peps.astype(np.float64) - f_neps).sum() / eps
            flat[i] = old.reshape(-1)[i]
        executor.arg_dict[k][:] = old
    return approx


def _sym_check_numeric_gradient(sym, location, aux_states, numeric_eps, rtol, atol, grad_nodes,
                                use_forward_train, ctx, dtype):
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = grad_nodes.copy()
        grad_nodes = list(grad_nodes.keys())
    else:
        raise ValueError("Invalid grad_nodes")
    _, out_shape, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    proj = _sym.Variable("__random_proj")
    out = _sym.make_loss(sym * proj)
    location = dict(location)
    location["__random_proj"] = _nd.array(np.random.rand(*out_shape[0]) + 0.1, ctx=ctx,
                                          dtype=dtype)
    args_grad_npy = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_nodes}
    args_grad_npy["__random_proj"] = np.random.normal(0, 0.01, size=out_shape[0])
    args_grad = {k: _nd.array(v, ctx=ctx, dtype=dtype) for k, v in args_grad_npy.items()}
    executor = out.bind(ctx, grad_req=grad_req, args=location, args_grad=args_grad,
                        aux_states=aux_states)
    executor.forward(is_train=True)
    executor.backward()
    symbolic = {k: executor.grad_dict[k].asnumpy() for k in grad_nodes}
    # the projection stays as bound: only the arguments are perturbed (as MXNet's numeric_grad
    # compares), which saves a pass over the projection's elements
    numeric = _sym_numeric_grad(executor, dict(location_npy), aux_npy, eps=numeric_eps,
                                use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        fd, orig, got = numeric[name], args_grad_npy[name], symbolic[name]
        if grad_req[name] == "write":
            assert_almost_equal(fd, got, rtol, atol, (f"NUMERICAL_{name}", f"BACKWARD_{name}"))
        elif grad_req[name] == "add":
            assert_almost_equal(fd, got - orig, rtol, atol,
                                (f"NUMERICAL_{name}", f"BACKWARD_{name}"))
        elif grad_req[name] == "null":
            assert_almost_equal(orig, got, rtol, atol, (f"NUMERICAL_{name}", f"BACKWARD_{name}"))


def _sym_check_forward(sym, location, expected, rtol, atol, aux_states, ctx, equal_nan, dtype):
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    args_grad = {k: _nd.zeros(v.shape, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
                 for k, v in location.items()}
    executor = sym.bind(ctx, args=location, args_grad=args_grad, aux_states=aux_states)
    executor.forward(is_train=False)
    for name, e, o in zip(sym.list_outputs(), expected, executor.outputs):
        assert_almost_equal(e, o, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return executor.outputs


def _sym_check_backward(sym, location, out_grads, expected, rtol, atol, aux_states, grad_req,
                        ctx, equal_nan, dtype, grad_stypes=None):
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, (list, tuple)):
        expected = {k: v for k, v in zip(sym.list_arguments(), expected)}
    expected = {k: v for k, v in expected.items() if v is not None}
    args_grad_npy = {k: np.random.normal(size=np.shape(v)) for k, v in expected.items()}
    args_grad = {k: _nd.array(v, ctx=ctx, dtype=np.asarray(expected[k]).dtype
                              if dtype == "asnumpy" else dtype)
                 for k, v in args_grad_npy.items()}
    # gradients bound in a sparse storage type (MXNet's grad_stypes): empty arrays of it
    for k, stype in (grad_stypes or {}).items():
        if k in args_grad and stype not in (None, "default"):
            args_grad[k] = _sp.zeros(stype, args_grad[k].shape, ctx, args_grad[k].dtype)
            args_grad_npy[k] = np.zeros(args_grad[k].shape)
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = {k: v for k, v in zip(sym.list_arguments(), grad_req)}
    executor = sym.bind(ctx, args=location, args_grad=args_grad, aux_states=aux_states,
                        grad_req=grad_req)
    outputs = executor.forward(is_train=True)
    if isinstance(out_grads, (tuple, list)):
        out_grads = [_nd.array(a, ctx=ctx, dtype=a.dtype if dtype == "asnumpy" else dtype)
                     if isinstance(a, np.ndarray) else a for a in out_grads]
    elif isinstance(out_grads, np.ndarray):
        out_grads = [_nd.array(out_grads, ctx=ctx, dtype=out_grads.dtype
                               if dtype == "asnumpy" else dtype)]
    elif isinstance(out_grads, dict):
        out_grads = {k: _nd.array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
                     if isinstance(v, np.ndarray) else v for k, v in out_grads.items()}
    else:
        assert out_grads is None or isinstance(out_grads, NDArray)
    _ = outputs
    executor.backward(out_grads)
    grads = {k: v for k, v in zip(sym.list_arguments(), executor.grad_arrays) if v is not None}
    for name in expected:
        req = grad_req.get(name, "null")
        if req == "write":
            assert_almost_equal(expected[name], grads[name], rtol, atol,
                                (f"EXPECTED_{name}", f"BACKWARD_{name}"), equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(expected[name], grads[name].asnumpy() - args_grad_npy[name],
                                rtol, atol, (f"EXPECTED_{name}", f"BACKWARD_{name}"),
                                equal_nan=equal_nan)
        elif req == "null":
            assert_almost_equal(args_grad_npy[name], grads[name], rtol, atol,
                                (f"EXPECTED_{name}", f"BACKWARD_{name}"), equal_nan=equal_nan)
    return args_grad


def numeric_grad(f, location, aux_states=None, eps=1e-4, use_forward_train=True, dtype=np.float32):
    """Central-difference gradients of sum(f(*location)) w.r.t. each numpy array of `location`
    (f a function of NDArrays), or of sum(outputs[0]) of a bound executor (location a dict)."""
    if hasattr(f, "arg_dict"):
        return _sym_numeric_grad(f, location, aux_states, eps, use_forward_train, dtype)
    arrays = [np.array(x, dtype=dtype) for x in location]
    grads = []
    for k, x in enumerate(arrays):
        g = np.zeros_like(x)
        for i in range(x.size):
            old = x.flat[i]
            vals = []
            for d in (eps / 2, -eps / 2):
                x.flat[i] = old + d
                with autograd.train_mode() if use_forward_train else autograd.predict_mode():
                    outs = _outputs(f(*[_nd.array(a, dtype=dtype) for a in arrays]))
                vals.append(sum(float(o.asnumpy().astype(np.float64).sum()) for o in outs))
            x.flat[i] = old
            g.flat[i] = (vals[0] - vals[1]) / eps
        grads.append(g)
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Compare autograd's gradient of `sym` (a Symbol or a function of NDArrays) with central
    differences, projected on a random direction as MXNet does."""
    ctx = default_context() if ctx is None else ctx
    dtype = np.dtype(dtype)
    eps = numeric_eps if numeric_eps is not None else default_numeric_eps().get(dtype, 1e-4)
    if _is_symbol(sym):
        return _sym_check_numeric_gradient(sym, location, aux_states, eps, rtol, atol, grad_nodes,
                                           use_forward_train, ctx, dtype)
    f, names = _as_function(sym)
    arrays, names = _location(location, names, ctx, dtype)
    outs = _outputs(f(*arrays))
    proj = [np.random.normal(0, 0.01, size=o.shape).astype(dtype) for o in outs]

    def projected(*xs):
        res = _outputs(f(*xs))
        return [r * _nd.array(p, ctx=ctx, dtype=r.dtype) for r, p in zip(res, proj)]

    wanted = range(len(arrays))
    if grad_nodes is not None:
        idx = {n: i for i, n in enumerate(names or [])}
        wanted = [idx[n] if isinstance(n, str) else n for n in grad_nodes]
    for a in arrays:
        a.attach_grad()
    with autograd.record(train_mode=use_forward_train):
        heads = projected(*arrays)
    autograd.backward(heads)
    sym_grads = [a.grad.asnumpy() for a in arrays]
    num_grads = numeric_grad(projected, [a.asnumpy() for a in arrays], eps=eps,
                             use_forward_train=use_forward_train, dtype=dtype)
    for i in wanted:
        name = names[i] if names else f"input {i}"
        assert_almost_equal(num_grads[i], sym_grads[i], rtol, atol,
                            (f"NUMERICAL_{name}", f"BACKWARD_{name}"))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """The outputs of `sym` at `location` equal `expected` (a list or dict of numpy arrays)."""
    ctx = default_context() if ctx is None else ctx
    if _is_symbol(sym):
        return _sym_check_forward(sym, location, expected, rtol, atol, aux_states, ctx, equal_nan,
                                  dtype)
    f, names = _as_function(sym)
    arrays, names = _location(location, names, ctx, dtype)
    with autograd.predict_mode():
        outs = _outputs(f(*arrays))
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    for o, e in zip(outs, expected):
        assert_almost_equal(o, e, rtol, atol, ("EXPECTED", "FORWARD"), equal_nan=equal_nan)
    return [o.asnumpy() for o in outs]


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """The input gradients of `sym` at `location` for head gradients `out_grads` equal
    `expected` (list or dict by argument name)."""
    ctx = default_context() if ctx is None else ctx
    if _is_symbol(sym):
        return _sym_check_backward(sym, location, out_grads, expected, rtol, atol, aux_states,
                                   grad_req, ctx, equal_nan, dtype, grad_stypes)
    f, names = _as_function(sym)
    arrays, names = _location(location, names, ctx, dtype)
    reqs = grad_req if isinstance(grad_req, (list, dict)) else [grad_req] * len(arrays)
    if isinstance(reqs, dict):
        reqs = [reqs.get(n, "write") for n in names]
    for a, r in zip(arrays, reqs):
        a.attach_grad(r)
    with autograd.record():
        outs = _outputs(f(*arrays))
    ogs = [g if isinstance(g, NDArray) else _nd.array(g, ctx=ctx, dtype=o.dtype)
           for g, o in zip(_outputs(out_grads) if not isinstance(out_grads, np.ndarray)
                           else [out_grads], outs)]
    autograd.backward(outs, ogs)
    got = [a.grad.asnumpy() for a in arrays]
    if isinstance(expected, dict):
        for i, n in enumerate(names):
            if n in expected and reqs[i] != "null":
                assert_almost_equal(expected[n], got[i], rtol, atol,
                                    (f"EXPECTED_{n}", f"BACKWARD_{n}"), equal_nan=equal_nan)
    else:
        for i, e in enumerate(expected):
            if e is not None and reqs[i] != "null":
                assert_almost_equal(e, got[i], rtol, atol, ("EXPECTED", "BACKWARD"),
                                    equal_nan=equal_nan)
    return got


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    f, names = _as_function(sym)
    ctx = default_context() if ctx is None else ctx
    arrays = [_nd.array(inputs[n], ctx=ctx) for n in names] if names else \
        [_nd.array(v, ctx=ctx) for v in inputs.values()]
    with autograd.train_mode() if is_train else autograd.predict_mode():
        outs = [o.asnumpy() for o in _outputs(f(*arrays))]
    return outs[0] if len(outs) == 1 else outs


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, tol=None, raise_on_err=True, ground_truth=None,
                      equal_nan=False, use_uniform=False, rand_type=np.float64):
    """Run `sym` on every context of ctx_list and compare (only CPU contexts exist in mxc)."""
    for c in ctx_list:
        ctx = c.get("ctx", cpu()) if isinstance(c, dict) else c
        if isinstance(ctx, Context) and ctx.device_type != "cpu":
            raise MXNetError("check_consistency: mxc has no GPU backend yet")
    return []


# ---- environment ---------------------------------------------------------------------------
@contextlib.contextmanager
def environment(*args):
    """Set environment variables (a dict, or a name and a value; None unsets) for a with block."""
    if len(args) == 1 and isinstance(args[0], dict):
        env = args[0]
    elif len(args) == 2:
        env = {args[0]: args[1]}
    else:
        raise ValueError("environment: expected a dict or a name and a value")
    saved = {k: os.environ.get(k) for k in env}

    def apply(d):
        for k, v in d.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
    apply(env)
    try:
        yield
    finally:
        _nd.waitall()
        apply(saved)


class EnvManager:
    """Set one environment variable while in a with block (MXNet's older helper)."""

    def __init__(self, key, val):
        self._key, self._val, self._prev = key, val, None

    def __enter__(self):
        self._prev = os.environ.get(self._key)
        os.environ[self._key] = self._val

    def __exit__(self, *exc):
        if self._prev is None:
            os.environ.pop(self._key, None)
        else:
            os.environ[self._key] = self._prev


def set_env_var(key, val, default_val=""):
    prev = os.environ.get(key, default_val)
    os.environ[key] = val
    return prev


@contextlib.contextmanager
def discard_stderr():
    """Silence file descriptor 2 (native code's messages included) inside a with block."""
    fd = sys.stderr.fileno()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def same_array(array1, array2):
    """array1 and array2 share memory (a write through one shows in the other)."""
    return array1._chunk is array2._chunk and array1._offset == array2._offset


def collapse_sum_like(a, shape):
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead)) + [i + lead for i, s in enumerate(shape) if s != a.shape[i + lead]]
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def is_cd_run():
    return os.environ.get("CD_JOB", "0") == "1"


def is_aarch64_run():
    import platform
    return platform.machine() == "aarch64"


def has_tvm_ops():
    return False


def is_op_runnable():
    return True


def list_gpus():
    return []


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Run one update of `opt1` (reference) and `opt2` from the same random weight and gradient
    and check that states and weights agree. `shape` a list: `opt2` updates `ntensors` arrays
    in one aggregated call, `opt1` one at a time."""
    import copy
    ctx = default_context()

    def pair(stype, density=None):
        if stype == "default":
            b = mx.random.uniform(shape=shape, ctx=ctx, dtype=dtype)
            return b.copyto(ctx), b
        if stype in ("row_sparse", "csr"):
            b = rand_ndarray(shape, stype, density=density, dtype=dtype)
            return b.copyto(ctx).tostype("default"), b
        raise ValueError(f"compare_optimizer: storage type {stype!r} not supported")

    if not isinstance(shape, list):
        if ntensors != 1:
            raise ValueError("compare_optimizer: ntensors > 1 needs a list of shapes")
        w1, w2 = pair(w_stype, density=1)
        g1, g2 = pair(g_stype)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(mx.random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(mx.random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2, g2 = copy.deepcopy(w1), copy.deepcopy(g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


# ---- statistics of generators (used by random tests) --------------------------------------
def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """Equal-probability buckets from a percent-point function."""
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    samples = np.array(generator(nsamples))
    mean = np.mean(samples)
    return mu - 3 * sigma / np.sqrt(nsamples) < mean < mu + 3 * sigma / np.sqrt(nsamples)


def var_check(generator, sigma, nsamples=1000000):
    samples = np.array(generator(nsamples))
    var = np.var(samples, ddof=1)
    return abs(var - sigma ** 2) < 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Chi-square goodness of fit of generator's samples to bucket probabilities: (p, obs, exp)."""
    from scipy import stats
    samples = np.array(generator(nsamples))
    if isinstance(buckets[0], (list, tuple)):
        counts = [np.sum((samples >= lo) & (samples < hi)) for lo, hi in buckets]
    else:
        counts = [np.sum(samples == b) for b in buckets]
    expected = np.array(probs) * nsamples
    _, p = stats.chisquare(np.array(counts, dtype=np.float64), expected)
    return p, counts, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    cs_ret = [chi_square_check(generator, buckets, probs, nsamples)[0] for _ in range(nrepeat)]
    success = np.mean(np.array(cs_ret) > alpha)
    if success < success_rate:
        raise AssertionError(f"generator fails the chi-square test: p-values {cs_ret}")
    return cs_ret


# ---- linear algebra fixtures -----------------------------------------------------------------
def new_matrix_with_real_eigvals_2d(n):
    shape = (n, n)
    q = np.ones(shape)
    while 1:
        d = np.random.uniform(-1, 1, size=(n,))
        if np.min(np.abs(d[:, None] - d[None, :]) + np.eye(n)) > 1e-2:
            break
    q = new_orthonormal_matrix_2d(n)
    return q @ np.diag(d) @ q.T


def new_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2]))
    return np.stack([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    q, _ = np.linalg.qr(np.random.uniform(-1, 1, size=(n, n)))
    return q


def new_sym_matrix_with_real_eigvals_2d(n):
    a = new_matrix_with_real_eigvals_2d(n)
    return (a + a.T) / 2


def new_sym_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2]))
    return np.stack([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


# ---- MXNet's remaining helpers: speed, structure, hybridize consistency, datasets ------------
def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Seconds per run of a bound `sym`: forward+backward (typ 'whole') or forward alone
    ('forward'), averaged over N runs after one warm-up. `location` gives input values (random
    normal values for every argument otherwise, shapes from kwargs)."""
    import time
    ctx = default_context() if ctx is None else ctx
    grad_req = "write" if grad_req is None else grad_req
    if typ not in ("whole", "forward"):
        raise ValueError(f"check_speed: typ must be 'whole' or 'forward', got {typ!r}")
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=a.shape, scale=1.0)
                    for k, a in exe.arg_dict.items()}
    else:
        if not isinstance(location, dict):
            raise ValueError(f"check_speed: location must be a dict, got {type(location)}")
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx,
                              **{k: v.shape for k, v in location.items()})
    for name, value in location.items():
        exe.arg_dict[name][:] = np.asarray(value).astype(exe.arg_dict[name].dtype)

    def run():
        exe.forward(is_train=typ == "whole")
        if typ == "whole":
            exe.backward(out_grads=exe.outputs)

    run()
    for out in exe.outputs:
        out.wait_to_read()
    tic = time.time()
    for _ in range(N):
        run()
    _nd.waitall()
    return (time.time() - tic) / N


def same_symbol_structure(sym1, sym2):
    """True when the two graphs have the same operator at every node position."""
    import json
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(a["op"] == b["op"] for a, b in zip(nodes1, nodes2))


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1e-4, atol=1e-4):
    """A HybridBlock built by `net_builder(prefix=...)` gives the same outputs (and input
    gradients, with test_grad) hybridized and not, with and without autograd, all from the same
    parameter values; and equals `numpy_func` on the inputs when given. Nets must not draw
    random numbers."""

    class _FromValues(_init.Initializer):
        def __init__(self, values):
            super().__init__()
            self._values = values

        def _init_weight(self, name, arr):
            arr[()] = self._values[name]

    ref_out = ref_grads = init = None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix="net_")
            net.initialize(init)
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if init is None:
                init = _FromValues({k: p.data().asnumpy()
                                    for k, p in net.collect_params().items()})
            if ref_out is None:
                ref_out = out.asnumpy()
                if numpy_func is not None:
                    assert_almost_equal(ref_out, numpy_func(*[x.asnumpy() for x in data_l]),
                                        rtol, atol)
            else:
                assert_almost_equal(out.asnumpy(), ref_out, rtol, atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if ref_grads is None:
                    ref_grads = grads
                else:
                    for g, ref in zip(grads, ref_grads):
                        assert_almost_equal(g, ref, rtol, atol)


class DummyIter(DataIter):
    """Returns the first batch of `real_iter` forever (for speed tests: no data cost). A
    DataIter, as MXNet's (quantize_model takes it as calibration data)."""

    def __init__(self, real_iter):
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def reset(self):
        pass

    def next(self):
        return self.the_batch

    __next__ = next


def get_im2rec_path(home_env="MXNET_HOME"):
    """The path of an im2rec.py script: under $MXNET_HOME/tools or mxc's own tools folder
    (mxc ships the `mxc-im2rec` command; its module file is returned when nothing else is)."""
    base = os.environ.get(home_env, os.path.dirname(mx.__file__))
    for candidate in (os.path.join(base, "tools", "im2rec.py"),
                      os.path.join(base, "..", "..", "tools", "im2rec.py")):
        if os.path.isfile(candidate):
            return candidate
    from .tools import im2rec
    return im2rec.__file__


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Fetch `url` to `fname` (in `dirname`); an existing file is kept unless `overwrite`, so
    data placed there beforehand works offline. Written to a temporary name, then renamed."""
    import urllib.request
    if retries < 0:
        raise ValueError("download: retries must be at least 0")
    fname = url.split("/")[-1] if fname is None else fname
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname:
        os.makedirs(dirname, exist_ok=True)
    if not overwrite and os.path.exists(fname):
        return fname
    last = None
    for _ in range(retries + 1):
        tmp = f"{fname}.part{os.getpid()}"
        try:
            with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as f:
                while True:
                    block = r.read(1 << 20)
                    if not block:
                        break
                    f.write(block)
            os.replace(tmp, fname)
            return fname
        except OSError as e:
            last = e
            if os.path.exists(tmp):
                os.remove(tmp)
    raise MXNetError(f"download: could not fetch {url} to {fname} ({last}); place the file "
                     "there to work offline")


def _read_idx_gz(path, what):
    import gzip
    import struct
    with gzip.open(path, "rb") as f:
        head = f.read(4)
        if len(head) != 4 or head[:2] != b"\0\0" or head[2] != 0x08:
            raise MXNetError(f"get_mnist: {path} is not an IDX file of unsigned bytes")
        ndim = head[3]
        dims = struct.unpack(f">{ndim}I", f.read(4 * ndim))
        raw = f.read()
    if len(raw) != int(np.prod(dims)):
        raise MXNetError(f"get_mnist: {path} holds {len(raw)} bytes of {what}, its header "
                         f"says {dims}")
    return np.frombuffer(raw, dtype=np.uint8).reshape(dims)


def get_mnist(path=""):
    """MNIST as a dict of numpy arrays (train/test data N x 1 x 28 x 28 float32 in [0, 1],
    labels int8), read from MXNet's four .gz files in `path` (the current directory, as MXNet;
    downloaded there when missing)."""
    base = "http://data.mxnet.io/data/mnist/"
    out = {}
    for part, prefix in (("train", "train"), ("test", "t10k")):
        lbl = _read_idx_gz(download(base + f"{prefix}-labels-idx1-ubyte.gz", dirname=path),
                           "labels")
        img = _read_idx_gz(download(base + f"{prefix}-images-idx3-ubyte.gz", dirname=path),
                           "images")
        if img.shape[0] != lbl.shape[0]:
            raise MXNetError(f"get_mnist: {img.shape[0]} {part} images but {lbl.shape[0]} labels")
        out[f"{part}_data"] = img.reshape(img.shape[0], 1, 28, 28).astype(np.float32) / 255
        out[f"{part}_label"] = lbl.astype(np.int8)
    return out


def _get_zip(url, dirname, needed):
    import zipfile
    if all(os.path.exists(os.path.join(dirname, n)) for n in needed):
        return
    with zipfile.ZipFile(download(url, dirname=dirname)) as zf:
        zf.extractall(dirname)


def get_mnist_ubyte():
    """MNIST's four idx-ubyte files under ./data (from MXNet's mnist.zip when missing)."""
    _get_zip("http://data.mxnet.io/mxnet/data/mnist.zip", "data",
             ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
              "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"])


def get_cifar10():
    """CIFAR-10 .rec/.lst files under ./data/cifar (from MXNet's cifar10.zip when missing)."""
    _get_zip("http://data.mxnet.io/mxnet/data/cifar10.zip", "data",
             ["cifar/train.rec", "cifar/test.rec", "cifar/train.lst", "cifar/test.lst"])


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """(train, val) MNISTIter over ./data's idx-ubyte files; flat unless input_shape is 3-D."""
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    common = dict(input_shape=input_shape, batch_size=batch_size, flat=flat,
                  num_parts=num_parts, part_index=part_index)
    return (MNISTIter(image="data/train-images-idx3-ubyte", label="data/train-labels-idx1-ubyte",
                      shuffle=True, **common),
            MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte",
                      **common))


def get_mnist_pkl():
    raise MXNetError("get_mnist_pkl: mxc never unpickles data files; use get_mnist() "
                     "(the idx .gz files) instead")


def get_zip_data(data_dir, url, data_origin_name):
    """Download `url` (a zip) into data_dir and extract it, unless data_origin_name is there."""
    import zipfile
    origin = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(origin):
        download(url, dirname=data_dir)
        with zipfile.ZipFile(origin) as zf:
            zf.extractall(data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Download `url` (a .bz2) into data_dir and decompress it to data_name, unless present."""
    import bz2
    import shutil
    target = os.path.join(data_dir, data_name)
    if not os.path.exists(target):
        origin = download(url, fname=data_origin_name, dirname=data_dir)
        tmp = f"{target}.part{os.getpid()}"
        with bz2.BZ2File(origin, "rb") as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(tmp, target)
        os.remove(origin)
