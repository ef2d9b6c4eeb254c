"""csrc/kernels/hd_math.h (the arithmetic the CPU and GPU kernels share) compiles as plain C
with gcc -Wall -Werror and gives numpy's / MXNet's values."""
import shutil
import subprocess

import numpy as np
import pytest

from ._emu import shared_include


PROG = r"""
#include "kernels/hd_math.h"
#include <stdio.h>
int main(void) {
  double a[] = {5.5, -5.5, 5.5, -5.5, 3.0, 7.0};
  double b[] = {2.0, 2.0, -2.0, -2.0, 0.0, 3.5};
  for (int i = 0; i < 6; i++) printf("%.17g\n", mxc_hd_mod(a[i], b[i]));
  printf("%d %d %d\n", mxc_hd_d2i32(1e20), (int)mxc_hd_d2i8(300.0), (int)mxc_hd_d2u8(-1.7));
  printf("%d %d\n", (int)mxc_hd_div_i32(7, 0), (int)mxc_hd_mod_i32(-7, 3));
  printf("%.17g %.17g %.17g\n", mxc_hd_rint(2.5), mxc_hd_rint(-2.5), mxc_hd_rint(3.5));
  mxc_hd_u32x4 r = mxc_hd_philox(0, 0, 0);
  printf("%u %u %u %u\n", r.w[0], r.w[1], r.w[2], r.w[3]);
  double m = 0.5, v = 0.25;
  double w = mxc_hd_adam_d(1.0, 0.3, &m, &v, 0.01, 0.9, 0.999, 1e-8, 0.1, 1.0, -1.0);
  printf("%.17g %.17g %.17g\n", w, m, v);
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")
def test_shared_math_in_c(tmp_path):
    src = tmp_path / "t.c"
    src.write_text(PROG)
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
                    "-I" + shared_include(), str(src), "-o", str(exe), "-lm"],
                   check=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    mods = [float(x) for x in lines[:6]]
    # MXNet's mod = numpy's floor mod, and 0 for a zero divisor
    np.testing.assert_array_equal(mods[:4], np.mod([5.5, -5.5, 5.5, -5.5], [2.0, 2.0, -2.0, -2.0]))
    assert mods[4] == 0.0 and mods[5] == np.mod(7.0, 3.5)
    assert lines[6].split() == ["-2147483648", "44", "255"]   # int8(300.0) = 44, uint8(-1.7) = 255
    assert lines[7].split() == ["0", "2"]
    assert [float(x) for x in lines[8].split()] == [2.0, -3.0, 3.0]
    # Philox4x32-10 known-answer vector (Random123: counter 0, key 0)
    assert [int(x) for x in lines[9].split()] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    g = 0.3 * 1.0 + 1.0 * 0.1
    m = 0.9 * 0.5 + (1 - 0.9) * g
    v = 0.999 * 0.25 + (1 - 0.999) * g * g
    w = 1.0 - 0.01 * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose([float(x) for x in lines[10].split()], [w, m, v], rtol=1e-15)
