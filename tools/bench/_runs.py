"""What the side-by-side benchmarks share: running one (model, implementation) in a fresh
interpreter and reading its JSON lines, and the ratio lines quoted from them."""
import json
import statistics
import subprocess
import sys


def run_child(script, argv, python, results, label, env=None):
    """`python script argv` in a fresh interpreter (no thread pool carries over); its lines are
    echoed and each figure's value appended to results[(figure, impl)] in run order. A failed
    child prints one error line named by `label`."""
    proc = subprocess.run([python, script] + argv, capture_output=True, text=True, env=env)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    for line in proc.stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "value" in r:
            results.setdefault((r["figure"], r["impl"]), []).append(r["value"])
    if proc.returncode != 0:
        print(json.dumps({"figure": label, "error": proc.stderr[-800:]}), flush=True)


def print_ratio(figure, a, b):
    """One ratio line: run r of `a` over run r of `b`, which ran next to it (a peer that ran
    once divides every repeat), and their median, the figure to quote on a shared machine."""
    pairs = [x / y for x, y in zip(a, b)] if len(b) > 1 else [x / b[0] for x in a]
    print(json.dumps({"figure": figure, "impl": "ratio", "pairs": [round(r, 3) for r in pairs],
                      "value": round(statistics.median(pairs), 3), "unit": "median ratio"}),
          flush=True)
