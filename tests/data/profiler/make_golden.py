"""Makes the golden aggregate tables of tests/test_profiler.py with real MXNet 1.9.1.

    /work/mxnet-oracle/bin/python tests/data/profiler/make_golden.py

Only user counters and markers are recorded (no operators, no C API, no memory): their values
are deterministic, so MXNet's table and JSON text can be compared byte for byte. The same
script runs under mxc (the test imports `scenario`).
"""
import json
import os
import sys


def scenario(mx, profiler, filename):
    profiler.set_config(profile_symbolic=True, aggregate_stats=True, filename=filename)
    profiler.set_state("run")
    dom = profiler.Domain("Golden")
    c = profiler.Counter(dom, "apples", 5)
    c += 3
    c -= 1
    big = dom.new_counter("bytes_seen")
    for v in (123456, 7, 4096000, 42):
        big.set_value(v)
    other = profiler.Counter(profiler.Domain("Another"), "z_counter")
    other.set_value(1000)
    other.increment(2500)
    other.decrement(1)
    profiler.Marker(dom, "here").mark("process")
    out = {}
    for sort_by in ("total", "avg", "min", "max", "count"):
        for asc in (False, True):
            key = f"{sort_by}-{'asc' if asc else 'desc'}"
            out["table-" + key] = profiler.dumps(sort_by=sort_by, ascending=asc)
            out["json-" + key] = profiler.dumps(format="json", sort_by=sort_by, ascending=asc)
    profiler.set_state("stop")
    return out


if __name__ == "__main__":
    import mxnet as mx
    from mxnet import profiler
    here = os.path.dirname(os.path.abspath(__file__))
    res = scenario(mx, profiler, os.path.join("/tmp", "golden_profile.json"))
    with open(os.path.join(here, "aggregate_golden.json"), "w") as f:
        json.dump({"mxnet": mx.__version__, "outputs": res}, f, indent=1, sort_keys=True)
    sys.stdout.write(res["table-total-desc"])
