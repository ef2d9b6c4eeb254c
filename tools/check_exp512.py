"""Exhaustive accuracy check of mxc's float32 exp kernel: every one of the 2^32 float32 inputs
against exp computed in float64 (correctly rounded to float32 up to double rounding), reporting
the largest error in float32 ulps and the special cases. About two minutes on two cores.

    python tools/check_exp512.py
"""
import sys

import numpy as np

from mxc._core.opcall import run_on_numpy
from mxc.ops.cpu.elemwise import KERNELS


def main():
    k = KERNELS["unary:exp"][0]
    worst = 0.0
    worst_x = None
    bad_special = 0
    step = 1 << 26
    for start in range(0, 1 << 32, step):
        x = np.arange(start, start + step, dtype=np.uint64).astype(np.uint32).view(np.float32)
        y = np.empty_like(x)
        run_on_numpy(k, [x], [y], nthreads=2)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            ref64 = np.exp(x.astype(np.float64))
            ref = ref64.astype(np.float32)
        nan = np.isnan(x)
        bad_special += int(np.count_nonzero(~np.isnan(y[nan])))
        fin = ~nan & np.isfinite(ref) & (ref != 0)
        # error in ulps of the float32 result
        ulp = np.spacing(np.abs(ref[fin])).astype(np.float64)
        err = np.abs(y[fin].astype(np.float64) - ref64[fin]) / ulp
        i = int(np.argmax(err)) if err.size else 0
        if err.size and err[i] > worst:
            worst, worst_x = float(err[i]), float(x[fin][i])
        edge = ~nan & ~fin
        bad_special += int(np.count_nonzero(y[edge] != ref[edge]))
    print(f"max error {worst:.3f} ulp at x={worst_x!r}; special-case mismatches: {bad_special}")
    return 0 if worst <= 1.0 and bad_special == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
