"""Writes tests/data/sparse_golden.npz and tests/data/sparse_mxnet.params with real MXNet 1.9.1:

    /work/mxnet-oracle/bin/python tests/data/make_sparse_golden.py

The .params file holds csr, row_sparse (some rows, no rows) and dense entries as MXNet's
mx.nd.save writes them; the npz holds their dense values and the inputs/outputs of the sparse
operators (dot with csr and row_sparse, elementwise, unaries, sum, retain, lazy optimizer
updates, the row_sparse gradient of dot(csr, w), Embedding's sparse gradient and row_sparse
weight)."""
import os

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(7)


def sparse_dense(shape, density, rows_only=False):
    a = rng.uniform(-1, 1, size=shape).astype(np.float32)
    if rows_only:
        a[rng.rand(shape[0]) > density] = 0
    else:
        a[rng.rand(*shape) > density] = 0
    return a


out = {}
# ---- .params with sparse entries
c = sparse_dense((5, 7), 0.3)
r = sparse_dense((6, 3), 0.5, rows_only=True)
r[1] = 0
r[2] = 1.5
d = rng.uniform(size=(2, 3)).astype(np.float32)
arrays = {"csr": mx.nd.array(c).tostype("csr"), "rsp": mx.nd.array(r).tostype("row_sparse"),
          "rsp_empty": mx.nd.zeros((4, 2), stype="row_sparse"),
          "csr64": mx.nd.array(c, dtype="float64").tostype("csr"), "dense": mx.nd.array(d)}
mx.nd.save(os.path.join(HERE, "sparse_mxnet.params"), arrays)
for k, v in arrays.items():
    out["params_" + k] = v.asnumpy()

# ---- dot
A = sparse_dense((6, 8), 0.3)
B = rng.uniform(-1, 1, size=(8, 4)).astype(np.float32)
Bt = rng.uniform(-1, 1, size=(6, 4)).astype(np.float32)
R = sparse_dense((8, 4), 0.5, rows_only=True)
csr = mx.nd.array(A).tostype("csr")
out["dot_A"], out["dot_B"], out["dot_Bt"], out["dot_R"] = A, B, Bt, R
y = mx.nd.dot(csr, mx.nd.array(B))
out["dot_csr_dns"], out["dot_csr_dns_stype"] = y.asnumpy(), np.array(y.stype)
y = mx.nd.dot(csr, mx.nd.array(Bt), transpose_a=True)
out["dot_csrT_dns"], out["dot_csrT_dns_stype"] = y.asnumpy(), np.array(y.stype)
y = mx.nd.dot(mx.nd.array(A), mx.nd.array(R).tostype("row_sparse"))
out["dot_dns_rsp"], out["dot_dns_rsp_stype"] = y.asnumpy(), np.array(y.stype)
y = mx.nd.dot(csr, mx.nd.array(R).tostype("row_sparse"))
out["dot_csr_rsp"], out["dot_csr_rsp_stype"] = y.asnumpy(), np.array(y.stype)

# ---- elementwise and unaries
X = sparse_dense((5, 4), 0.5, rows_only=True)
Y = sparse_dense((5, 4), 0.5, rows_only=True)
out["ew_X"], out["ew_Y"] = X, Y
xr, yr = mx.nd.array(X).tostype("row_sparse"), mx.nd.array(Y).tostype("row_sparse")
for name, f in (("add", mx.nd.elemwise_add), ("sub", mx.nd.elemwise_sub),
                ("mul", mx.nd.elemwise_mul)):
    z = f(xr, yr)
    out[f"ew_{name}_rsp"], out[f"ew_{name}_rsp_stype"] = z.asnumpy(), np.array(z.stype)
    z = f(xr, mx.nd.array(Y))
    out[f"ew_{name}_rsp_dns"], out[f"ew_{name}_rsp_dns_stype"] = z.asnumpy(), np.array(z.stype)
xc, yc = mx.nd.array(X).tostype("csr"), mx.nd.array(Y).tostype("csr")
for name, f in (("add", mx.nd.elemwise_add), ("mul", mx.nd.elemwise_mul)):
    z = f(xc, yc)
    out[f"ew_{name}_csr"], out[f"ew_{name}_csr_stype"] = z.asnumpy(), np.array(z.stype)
for name in ("abs", "square", "sign", "relu", "negative"):
    z = getattr(mx.nd, name)(xr)
    out[f"un_{name}"], out[f"un_{name}_stype"] = z.asnumpy(), np.array(z.stype)
z = mx.nd.sqrt(mx.nd.abs(xc))
out["un_sqrt_csr"], out["un_sqrt_csr_stype"] = z.asnumpy(), np.array(z.stype)
z = xr * 3
out["mul_scalar"], out["mul_scalar_stype"] = z.asnumpy(), np.array(z.stype)
for ax in (0, 1):
    out[f"sum_csr_{ax}"] = mx.nd.sum(xc, axis=ax).asnumpy()
    out[f"mean_csr_{ax}"] = mx.nd.mean(xc, axis=ax).asnumpy()
keep = np.array([0, 2, 3], dtype=np.int64)
z = mx.nd.sparse.retain(xr, mx.nd.array(keep, dtype="int64"))
out["retain_idx"], out["retain"], out["retain_rows"] = keep, z.asnumpy(), z.indices.asnumpy()

# ---- lazy optimizer updates: row_sparse grad with some rows
W = rng.uniform(-1, 1, size=(6, 3)).astype(np.float32)
G = sparse_dense((6, 3), 0.5, rows_only=True)
G[0] = 0.7
S1 = rng.uniform(0, 1, size=(6, 3)).astype(np.float32)
S2 = rng.uniform(0, 1, size=(6, 3)).astype(np.float32)
out["opt_W"], out["opt_G"], out["opt_S1"], out["opt_S2"] = W, G, S1, S2
g = mx.nd.array(G).tostype("row_sparse")


def run(name, nstate, suffix="", sstype="default", wstype="row_sparse", **kw):
    w = mx.nd.array(W).tostype(wstype)
    st = [mx.nd.array(s).tostype(sstype) for s in (S1, S2)[:nstate]]
    getattr(mx.nd, name)(w, g, *st, out=w, **kw)
    out[f"opt_{name}{suffix}_w"] = w.asnumpy()
    for i, s in enumerate(st):
        out[f"opt_{name}{suffix}_s{i}"] = s.asnumpy()


run("sgd_update", 0, lr=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=0.3)
run("sgd_mom_update", 1, lr=0.1, momentum=0.9, wd=0.01)
run("adam_update", 2, lr=0.01, wd=0.01, beta1=0.9, beta2=0.99, epsilon=1e-6)
run("ftrl_update", 2, lr=0.1, lamda1=0.01, beta=1.0, wd=0.01)
run("ftrl_update", 2, "_rsp", "row_sparse", lr=0.1, lamda1=0.01, beta=1.0, wd=0.01)
run("sgd_update", 0, "_dns", wstype="default", lr=0.1, wd=0.01)
run("sgd_update", 0, "_nolazy", lr=0.1, wd=0.01, lazy_update=False)
run("adam_update", 2, "_dns", wstype="default", lr=0.01, wd=0.01, beta1=0.9, beta2=0.99,
    epsilon=1e-6)
run("adam_update", 2, "_nolazy", wstype="default", lr=0.01, wd=0.01, beta1=0.9, beta2=0.99,
    epsilon=1e-6, lazy_update=False)
run("sgd_mom_update", 1, "_rsp", "row_sparse", lr=0.1, momentum=0.9, wd=0.01)
w = mx.nd.array(W).tostype("row_sparse")
h = mx.nd.array(S1).tostype("row_sparse")
mx.nd.sparse.adagrad_update(w, g, h, out=w, lr=0.1, epsilon=1e-7)
out["opt_adagrad_w"], out["opt_adagrad_s0"] = w.asnumpy(), h.asnumpy()

# ---- autograd: dot(csr, w) with a row_sparse gradient
w = mx.nd.array(B)
w.attach_grad(stype="row_sparse")
with mx.autograd.record():
    y = mx.nd.dot(csr, w)
y.backward()
out["ag_dot_grad"], out["ag_dot_grad_stype"] = w.grad.asnumpy(), np.array(w.grad.stype)

# ---- Embedding: sparse_grad=True gives a row_sparse weight gradient; a row_sparse weight reads
# zeros for the rows it does not hold (contrib.SparseEmbedding); sum of row_sparse along axes
E = rng.uniform(-1, 1, size=(10, 3)).astype(np.float32)
ed = np.array([[1, 3], [3, 9], [0, 4]], dtype=np.float32)
eg = rng.uniform(-1, 1, size=(3, 2, 3)).astype(np.float32)
out["emb_W"], out["emb_data"], out["emb_ograd"] = E, ed, eg
w = mx.nd.array(E)
w.attach_grad(stype="row_sparse")
with mx.autograd.record():
    y = mx.nd.Embedding(mx.nd.array(ed), w, input_dim=10, output_dim=3, sparse_grad=True)
y.backward(mx.nd.array(eg))
out["emb_out"] = y.asnumpy()
out["emb_grad"], out["emb_grad_stype"] = w.grad.asnumpy(), np.array(w.grad.stype)
out["emb_grad_rows"] = w.grad.indices.asnumpy()
ER = E.copy()
ER[[3, 4, 7]] = 0
y = mx.nd.contrib.SparseEmbedding(mx.nd.array(ed), mx.nd.array(ER).tostype("row_sparse"),
                                  input_dim=10, output_dim=3)
out["emb_rsp_W"], out["emb_rsp_out"], out["emb_rsp_out_stype"] = ER, y.asnumpy(), np.array(y.stype)
for ax in (0, 1):
    out[f"sum_rsp_{ax}"] = mx.nd.sum(xr, axis=ax).asnumpy()
    out[f"mean_rsp_{ax}"] = mx.nd.mean(xr, axis=ax).asnumpy()

np.savez_compressed(os.path.join(HERE, "sparse_golden.npz"), **out)
print("wrote", len(out), "arrays")
