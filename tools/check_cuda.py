"""Compile every CUDA kernel of mxc (mxc/ops/cuda/*.cu) for sm_80 and sm_90 through NVRTC,
without a GPU or a driver, and fail on:
- any compile error or warning in NVRTC's log,
- any register spill (ptxas spill stores/loads > 0),
- a stack frame (local memory) above --stack-budget bytes per thread (default 0: every kernel
  here keeps its arrays in registers; a dynamically indexed local array shows up as stack).

Needs: cupy-cuda13x, nvidia-cuda-nvrtc, nvidia-cuda-runtime (cuda_fp16.h), and mxc importable
(built in place or installed): the kernel names come from its operator registry.

    python tools/check_cuda.py [--arch 80 90] [--family elemwise ...] [--jobs N] [--json out.json]

Prints one line per (family, arch) and a JSON summary line; exit status 1 on any failure.
"""
import argparse
import importlib.util
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_loader():
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    spec = importlib.util.spec_from_file_location(
        "_mxc_cuda_loader", os.path.join(ROOT, "mxc", "ops", "cuda", "loader.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _compile(job):
    fam, arch = job
    t0 = time.time()
    try:
        log, stats = load_loader().compile_family(fam, arch)
    except Exception as e:  # compile error: the message carries NVRTC's log
        return fam, arch, None, str(e), time.time() - t0
    return fam, arch, stats, log, time.time() - t0


def check(archs, families, stack_budget, out=sys.stdout, jobs=1):
    failures, summary = [], {}
    work = [(f, a) for a in archs for f in families]
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(jobs) as ex:
            results = list(ex.map(_compile, work))
    else:
        results = map(_compile, work)
    for fam, arch, stats, log, seconds in results:
        if stats is None:
            failures.append("%s sm_%d: %s" % (fam, arch, log))
            print("FAIL %s sm_%d: compile error" % (fam, arch), file=out)
            continue
        warnings = [ln for ln in log.splitlines() if "warning" in ln.lower()]
        bad = []
        for name, st in stats.items():
            if st["spill_st"] or st["spill_ld"]:
                bad.append("%s spills %d/%d bytes" % (name, st["spill_st"], st["spill_ld"]))
            if st["stack"] > stack_budget:
                bad.append("%s stack %d bytes > %d" % (name, st["stack"], stack_budget))
        for w in warnings:
            failures.append("%s sm_%d: %s" % (fam, arch, w))
        for b in bad:
            failures.append("%s sm_%d: %s" % (fam, arch, b))
        regs = [st["regs"] for st in stats.values()]
        summary["%s/sm_%d" % (fam, arch)] = {
            "kernels": len(stats), "max_regs": max(regs), "mean_regs": sum(regs) / len(regs),
            "spills": sum(st["spill_st"] + st["spill_ld"] for st in stats.values()),
            "max_stack": max(st["stack"] for st in stats.values()),
            "warnings": len(warnings), "seconds": round(seconds, 1)}
        s = summary["%s/sm_%d" % (fam, arch)]
        print("%s %s sm_%d: %d kernels, regs max %d mean %.0f, spills %d, stack max %d, "
              "warnings %d (%.1fs)" % ("ok  " if not (warnings or bad) else "FAIL", fam, arch,
                                       s["kernels"], s["max_regs"], s["mean_regs"],
                                       s["spills"], s["max_stack"], s["warnings"],
                                       s["seconds"]), file=out)
    return failures, summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", type=int, nargs="+", default=[80, 90])
    ap.add_argument("--family", nargs="+", default=None)
    ap.add_argument("--stack-budget", type=int, default=0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="compile (family, arch) pairs in this many processes")
    a = ap.parse_args(argv)
    L = load_loader()
    fams = a.family or list(L.FAMILIES)
    # the largest families first, so parallel jobs finish together
    order = ["elemwise", "gather", "reduce", "broadcast", "ordering", "optimizer_ops"]
    fams.sort(key=lambda f: order.index(f) if f in order else len(order))
    failures, summary = check(a.arch, fams, a.stack_budget, jobs=a.jobs)
    print(json.dumps({"check": "cuda_compile", "failures": len(failures), "families": summary}))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"failures": failures, "summary": summary}, f, indent=1)
    for fl in failures[:50]:
        print("  " + fl)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
