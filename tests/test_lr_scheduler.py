"""mx.lr_scheduler against MXNet 1.9.1's formulas; the literal values are what MXNet 1.9.1's
schedulers returned for the same calls."""
import math

import pytest

import mxc as mx


def test_factor_with_floor_and_resume():
    s = mx.lr_scheduler.FactorScheduler(step=10, factor=0.5, stop_factor_lr=0.02, base_lr=0.1)
    assert s(1) == 0.1 and s(10) == 0.1          # changes after more than `step` updates
    assert s(11) == 0.05
    assert s(35) == pytest.approx(0.02)          # 0.1 * 0.5**3 = 0.0125, floored at 0.02
    r = mx.lr_scheduler.FactorScheduler(step=10, factor=0.5, base_lr=0.1)
    assert r(25) == pytest.approx(0.025)         # resuming later catches up (while, not if)


def test_multifactor():
    s = mx.lr_scheduler.MultiFactorScheduler(step=[5, 10], factor=0.1, base_lr=1.0)
    assert [s(i) for i in (1, 5, 6, 10, 11, 50)] == pytest.approx([1, 1, 0.1, 0.1, 0.01, 0.01])
    with pytest.raises(ValueError, match="increasing"):
        mx.lr_scheduler.MultiFactorScheduler(step=[5, 5])


def test_poly_and_cosine_with_warmup():
    p = mx.lr_scheduler.PolyScheduler(max_update=110, base_lr=1.0, pwr=2, final_lr=0.1,
                                      warmup_steps=10, warmup_begin_lr=0.5)
    assert p(0) == 0.5 and p(5) == pytest.approx(0.75)              # linear warmup
    assert p(60) == pytest.approx(0.1 + 0.9 * (1 - 50 / 100) ** 2)
    assert p(200) == pytest.approx(0.325)      # past max_update: the last rate (MXNet 1.9.1 gives 0.325)
    c = mx.lr_scheduler.CosineScheduler(max_update=100, base_lr=2.0, final_lr=0.0,
                                        warmup_steps=20, warmup_begin_lr=1.0, warmup_mode="constant")
    assert c(3) == 1.0
    assert c(60) == pytest.approx(2.0 * (1 + math.cos(math.pi * 40 / 80)) / 2)
    assert c(100) == pytest.approx(0.0, abs=1e-12)


def test_bad_arguments():
    with pytest.raises(ValueError, match="Factor"):
        mx.lr_scheduler.FactorScheduler(step=1, factor=2)
    with pytest.raises(ValueError, match="warmup"):
        mx.lr_scheduler.FactorScheduler(step=1, warmup_mode="cubic")
    with pytest.raises(ValueError, match="higher"):
        mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=0.1, warmup_begin_lr=0.5)
