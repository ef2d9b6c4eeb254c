"""The GPU speed table of issues 11 and 24 from the JSON lines of bench_gpu.py,
bench_gpu_layers.py and bench_gpu_train.py (one run: mxc and PyTorch measured by the same
process; a figure in several files: the last file's).

    python tools/bench/gpu_table.py bench_gpu.jsonl [bench_gpu_layers.jsonl ...] > table.md

Each row: the figure, mxc's value, PyTorch's, mxc's speed relative to PyTorch's (higher is
better for mxc whatever the unit: a time's ratio is torch / mxc) and the issue's target for that
ratio with "ok" or "MISS"; a figure that errored shows the error. Runs without mxc or a GPU.
"""
import json
import sys

# figure -> (lower is better, target speed ratio mxc/torch or None)
TARGETS = {
    "chain_1000_small_adds": (True, 1.0),
    "one_op_then_host_read": (True, 1.0),
    "add_16M_f32": (False, 0.95), "mul_16M_f32": (False, 0.95),
    "exp_16M_f32": (False, 0.95), "relu_16M_f32": (False, 0.95),
    "sum_16M_f32": (False, 0.9),
    "dot_4096_fp32": (False, 0.95), "dot_4096_tf32": (False, 0.95),
    "h2d_pinned_64MiB": (False, 0.9), "d2h_pinned_64MiB": (False, 0.9),
    "conv3x3_64_32x32_b32_fwdbwd": (True, 1.0),
    "maxpool3x3s2_b32_fwdbwd": (True, None),
    "batchnorm_train_b32_fwdbwd": (True, None),
    "layernorm_512_fwdbwd": (True, None),
    "mlp_784_512_512_10_b128_step": (True, 2.0),     # mxc's step <= 0.5x PyTorch eager
    "resnet18_cifar_b128_train": (False, 1.0),
    "resnet18_cifar_b128_train_amp_fp16": (False, 1.0),
    "resnet18_cifar_b128_train_amp_bf16": (False, 1.0),
    "resnet50_224_b64_train": (False, 1.0),
    "resnet50_224_b64_train_amp_fp16": (False, 1.0),
    "resnet50_224_b64_train_amp_bf16": (False, 1.0),
}
# figure -> the most mxc's value may be (no peer): the second process of the same benchmarks
# compiles no kernel and builds no cuDNN plan (bench_gpu_train.py, run twice)
LIMITS = {"process_compiles_fp32": 0}


def read(paths):
    """{figure: {impl: record}} in first-seen order of figures."""
    out = {}
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if "bench" in rec and "impl" in rec:
                    out.setdefault(rec["bench"], {})[rec["impl"]] = rec
    return out


def _cell(rec):
    if rec is None:
        return "-"
    if "value" in rec:
        return "%.4g %s" % (rec["value"], rec.get("unit", ""))
    why = rec.get("error") or rec.get("skipped") or "?"
    return "n/a (%s)" % why.replace("|", "/")[:90]


def table(figures):
    rows = ["| figure | mxc | torch | mxc speed / torch | target | |",
            "|---|---|---|---|---|---|"]
    for name, by in figures.items():
        if name in ("device",):
            continue
        m, t = by.get("mxc"), by.get("torch")
        if name in LIMITS:
            ok = m is not None and m.get("value", 1e30) <= LIMITS[name]
            detail = ", ".join("%s=%s" % kv for kv in sorted(m.items())
                               if kv[0] not in ("bench", "impl", "unit", "value")) if m else ""
            rows.append("| %s | %s (%s) | | | <= %s | %s |" % (
                name, _cell(m), detail, LIMITS[name], "ok" if ok else "MISS"))
            continue
        lower, target = TARGETS.get(name, (None, None))
        ratio = verdict = ""
        if m and t and "value" in m and "value" in t and lower is not None and m["value"] > 0 \
                and t["value"] > 0:
            r = t["value"] / m["value"] if lower else m["value"] / t["value"]
            ratio = "%.2fx" % r
            if target is not None:
                verdict = "ok" if r >= target else "MISS"
        rows.append("| %s | %s | %s | %s | %s | %s |" % (
            name, _cell(m), _cell(t), ratio, ">= %.2fx" % target if target else "", verdict))
        for impl, rec in by.items():
            if impl not in ("mxc", "torch"):
                rows.append("| %s (%s) | %s | | | | |" % (name, impl, _cell(rec)))
    return "\n".join(rows)


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    figs = read(argv)
    dev = figs.get("device", {}).get("mxc")
    if dev:
        print("device: %s, driver %s\n" % (dev.get("name"), dev.get("driver")))
    print(table(figs))


if __name__ == "__main__":
    main(sys.argv[1:])
