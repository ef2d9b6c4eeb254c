"""Sparse benchmarks (issue 9): dot(csr, dense) at 1% density, 10k x 10k by 10k x 128, and a
lazy sgd_update on a 1M x 64 weight with a row_sparse gradient holding 1% of the rows.
mxc against scipy.sparse / numpy and PyTorch (torch.sparse) in the same run; with
--peer-python (MXNet 1.9.1's interpreter, /work/mxnet-oracle/bin/python by default when it
exists) MXNet runs the same figures in a subprocess.
One JSON line per figure: {"figure", "impl", "value", "unit"} (best of N, milliseconds)."""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

M, K, N, DENS = 10000, 10000, 128, 0.01
ROWS, COLS, FRAC = 1000000, 64, 0.01


def best(fn, n):
    fn()
    t = []
    for _ in range(n):
        s = time.perf_counter()
        fn()
        t.append(time.perf_counter() - s)
    return min(t) * 1e3


def emit(fig, impl, v):
    print(json.dumps({"figure": fig, "impl": impl, "value": round(v, 3), "unit": "ms"}),
          flush=True)


def data():
    rng = np.random.RandomState(0)
    nnz = int(M * K * DENS)
    rows = np.sort(rng.randint(0, M, nnz))
    cols = rng.randint(0, K, nnz)
    vals = rng.rand(nnz).astype(np.float32)
    rhs = rng.rand(K, N).astype(np.float32)
    gidx = np.sort(rng.choice(ROWS, int(ROWS * FRAC), replace=False)).astype(np.int64)
    gval = rng.rand(gidx.size, COLS).astype(np.float32)
    return rows, cols, vals, rhs, gidx, gval


def run_mxnet_like(mx, n, impl):
    rows, cols, vals, rhs, gidx, gval = data()
    import scipy.sparse as sps
    m = sps.csr_matrix((vals, (rows, cols)), shape=(M, K))
    m.sum_duplicates()
    csr = mx.nd.sparse.csr_matrix((m.data, m.indices, m.indptr), shape=(M, K))
    b = mx.nd.array(rhs)
    emit("dot_csr_dense_10k_1pct_x128", impl, best(lambda: mx.nd.dot(csr, b).wait_to_read(), n))
    w = mx.nd.zeros((ROWS, COLS))
    g = mx.nd.sparse.row_sparse_array((gval, gidx), shape=(ROWS, COLS))
    w.wait_to_read()
    emit("lazy_sgd_1Mx64_1pct_rows", impl,
         best(lambda: mx.nd.sgd_update(w, g, out=w, lr=0.1, wd=0.0).wait_to_read(), n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=10)
    oracle = "/work/mxnet-oracle/bin/python"
    ap.add_argument("--peer-python", default=oracle if os.path.exists(oracle) else None,
                    help="MXNet 1.9.1's interpreter (default: %(default)s); '' skips MXNet")
    ap.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.peer:
        import mxnet as mx
        run_mxnet_like(mx, a.n, "mxnet")
        return
    import mxc as mx
    run_mxnet_like(mx, a.n, "mxc")
    rows, cols, vals, rhs, gidx, gval = data()
    import scipy.sparse as sps
    m = sps.csr_matrix((vals, (rows, cols)), shape=(M, K))
    m.sum_duplicates()
    emit("dot_csr_dense_10k_1pct_x128", "scipy", best(lambda: m @ rhs, a.n))
    w = np.zeros((ROWS, COLS), np.float32)

    def np_sgd():
        w[gidx] -= 0.1 * gval
    emit("lazy_sgd_1Mx64_1pct_rows", "numpy", best(np_sgd, a.n))
    try:
        import torch
        t = torch.sparse_csr_tensor(torch.from_numpy(m.indptr.astype(np.int64)),
                                    torch.from_numpy(m.indices.astype(np.int64)),
                                    torch.from_numpy(m.data), size=(M, K))
        tr = torch.from_numpy(rhs)
        emit("dot_csr_dense_10k_1pct_x128", "torch", best(lambda: t @ tr, a.n))
        tw = torch.zeros(ROWS, COLS)
        ti, tg = torch.from_numpy(gidx), torch.from_numpy(gval)
        emit("lazy_sgd_1Mx64_1pct_rows", "torch",
             best(lambda: tw.index_add_(0, ti, tg, alpha=-0.1), a.n))
    except ImportError:
        pass
    if a.peer_python:
        sys.stdout.flush()
        subprocess.run([a.peer_python, __file__, "--peer", "-n", str(a.n)], check=False)


if __name__ == "__main__":
    main()
