"""``mx.lr_scheduler``: learning-rate schedules with MXNet 1.9.1's classes and semantics.

A scheduler is called with ``num_update`` (the largest number of updates any weight has had)
and returns the learning rate. Every schedule may start with a warmup of ``warmup_steps``
updates: linear from ``warmup_begin_lr`` to ``base_lr``, or constant at ``warmup_begin_lr``.
Factor and MultiFactor schedules are stateful (they walk forward from the last step they saw,
so resuming from a later ``num_update`` catches up), as MXNet's are.
"""
import logging
from math import cos, pi

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


class LRScheduler:
    """Base class: warmup handling; subclasses give the schedule after warmup."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        if not isinstance(warmup_steps, int):
            raise TypeError(f"warmup_steps must be an int, got {warmup_steps!r}")
        if warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0")
        if warmup_begin_lr > base_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr")
        if warmup_mode not in ("linear", "constant"):
            raise ValueError("Supports only linear and constant modes of warmup")
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        if num_update >= self.warmup_steps:
            raise ValueError(f"update {num_update} is past the {self.warmup_steps} warmup steps")
        if self.warmup_mode == "constant":
            return self.warmup_begin_lr
        frac = float(num_update) / float(self.warmup_steps)
        return self.warmup_begin_lr + (self.warmup_final_lr - self.warmup_begin_lr) * frac

    def __call__(self, num_update):
        raise NotImplementedError("an LRScheduler subclass defines __call__")


class FactorScheduler(LRScheduler):
    """base_lr * factor ** (number of completed `step`s), never below `stop_factor_lr`."""

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr = max(self.base_lr * self.factor, self.stop_factor_lr)
            logging.info("Update[%d]: learning rate is now %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by `factor` after each update count in the increasing list `step`."""

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or not step:
            raise ValueError("step must be a non-empty list of update counts")
        for i, s in enumerate(step):
            if i and s <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list")
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            logging.info("Update[%d]: learning rate is now %0.5e", num_update, self.base_lr)
        return self.base_lr


class PolyScheduler(LRScheduler):
    """final_lr + (base_lr - final_lr) * (1 - t / T) ** pwr after warmup (t counted from the
    end of warmup, T = max_update - warmup_steps); constant after max_update."""

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int) or max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.power = pwr
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            frac = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * (1 - frac) ** self.power
        return self.base_lr


class CosineScheduler(LRScheduler):
    """final_lr + (base_lr - final_lr) * (1 + cos(pi * t / T)) / 2 after warmup; constant after
    max_update."""

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int) or max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            frac = (num_update - self.warmup_steps) / self.max_steps
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                (1 + cos(pi * frac)) / 2
        return self.base_lr
