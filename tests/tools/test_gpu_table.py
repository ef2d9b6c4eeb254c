"""tools/bench/gpu_table.py: the GPU speed table's ratios point the right way for times and
rates, targets are judged, and errored figures keep their message."""
import importlib.util
import json
import os

# the checkout: beside the tests, or where tools/run_tests.sh copied them from
REPO = (os.environ.get("MXC_SOURCE_TREE")
        or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _mod():
    spec = importlib.util.spec_from_file_location(
        "_gpu_table", os.path.join(REPO, "tools", "bench", "gpu_table.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_ratios_targets_and_errors(tmp_path):
    recs = [{"bench": "chain_1000_small_adds", "impl": "mxc", "unit": "us/op", "value": 12.0},
            {"bench": "chain_1000_small_adds", "impl": "torch", "unit": "us/op", "value": 10.0},
            {"bench": "sum_16M_f32", "impl": "mxc", "unit": "GB/s", "value": 3800.0},
            {"bench": "sum_16M_f32", "impl": "torch", "unit": "GB/s", "value": 4000.0},
            {"bench": "conv3x3_64_32x32_b32_fwdbwd", "impl": "mxc", "unit": "ms",
             "error": "MXNetError: Convolution: no GPU kernel"},
            {"bench": "conv3x3_64_32x32_b32_fwdbwd", "impl": "torch", "unit": "ms", "value": 0.4}]
    p = tmp_path / "b.jsonl"
    p.write_text("noise line\n" + "\n".join(json.dumps(r) for r in recs) + "\n")
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[2:-1]]
            for r in _mod().table(_mod().read([str(p)])).splitlines()[2:]}
    # a time: torch / mxc = 10 / 12; a rate: mxc / torch = 0.95
    assert rows["chain_1000_small_adds"][2:] == ["0.83x", ">= 1.00x", "MISS"]
    assert rows["sum_16M_f32"][2:] == ["0.95x", ">= 0.90x", "ok"]
    assert "no GPU kernel" in rows["conv3x3_64_32x32_b32_fwdbwd"][0]
    assert rows["conv3x3_64_32x32_b32_fwdbwd"][3] == ">= 1.00x"
    assert rows["conv3x3_64_32x32_b32_fwdbwd"][4] == ""


def test_limit_rows_say_ok_only_at_or_under_the_limit(tmp_path):
    """process_compiles_fp32 (the second process's NVRTC compiles + cuDNN plan builds) has no
    peer: its target is an absolute 0."""
    m = _mod()
    for value, verdict in ((0, "ok"), (3, "MISS")):
        p = tmp_path / ("c%d.jsonl" % value)
        p.write_text(json.dumps({"bench": "process_compiles_fp32", "impl": "mxc",
                                 "unit": "compiles + plan builds", "value": value,
                                 "nvrtc": value, "plans_built": 0, "plans_disk": 20}) + "\n")
        (row,) = [r for r in m.table(m.read([str(p)])).splitlines()
                  if r.startswith("| process_compiles_fp32 ")]
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[4:] == ["<= 0", verdict], row
        assert "plans_disk=20" in cells[1]
