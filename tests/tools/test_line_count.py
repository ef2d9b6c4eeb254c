"""tools/line_count.py: per-package line counts on a small tree with known counts."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "line_count.py")
if not os.path.isfile(TOOL):
    pytest.skip("tools/line_count.py is not beside these tests (CI runs it on its own)",
                allow_module_level=True)
_spec = importlib.util.spec_from_file_location("line_count", TOOL)
line_count = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(line_count)


def _write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_counts_code_lines_per_package(tmp_path, capsys):
    # 5 lines: blank, comment, docstring, code -> 3 code lines
    _write(tmp_path, "mxc/gluon/nn/a.py", '"""doc"""\n\n# note\nx = 1\n    # indented note\ny = 2\n')
    _write(tmp_path, "mxc/gluon/b.py", "z = 3\n")
    _write(tmp_path, "mxc/base.py", "a = 1\n\n")
    _write(tmp_path, "mxc/ops/cpu/k.pyx", "# cython\ncdef int f():\n    return 1\n")
    _write(tmp_path, "mxc/ops/cpu/k.c", "int generated;\n" * 50)     # a build output: skipped
    _write(tmp_path, "csrc/kernels/k.h",
           "/* licence\n   more */\nint a; // note\n// only a comment\nint b; /* c */ int c;\n"
           "/* x */\n\n#define Y 1\n")
    _write(tmp_path, "tests/gluon/test_x.py", "def test_x():\n    assert True\n")
    _write(tmp_path, "tests/conftest.py", "import os\n")
    _write(tmp_path, "docs/readme.md", "not counted\n")
    assert line_count.main([str(tmp_path)]) == 0
    rows = {}
    for line in capsys.readouterr().out.splitlines()[1:]:
        *name, files, lines, code = line.split()
        rows[" ".join(name)] = [files, lines, code]
    assert rows == {
        "mxc/*": ["1", "2", "1"],
        "mxc/gluon": ["2", "7", "4"],
        "mxc/ops": ["1", "3", "2"],
        "mxc/ total": ["4", "12", "7"],
        "csrc/kernels": ["1", "8", "3"],
        "csrc/ total": ["1", "8", "3"],
        "tests/*": ["1", "1", "1"],
        "tests/gluon": ["1", "2", "2"],
        "tests/ total": ["2", "3", "3"],
    }
    assert line_count.main(["--depth", "2", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "mxc/gluon/nn " in out and "mxc/ops/cpu " in out


def test_counts_the_repository():
    # the real tree: every area reports, and mxc/ holds the most code
    totals = {}
    for rel in line_count.tracked_files(ROOT):
        n, code = line_count.count(open(os.path.join(ROOT, rel), encoding="utf-8").read(),
                                   os.path.splitext(rel)[1])
        assert 0 <= code <= n
        area = rel.split("/")[0]
        totals[area] = totals.get(area, 0) + code
    assert set(totals) == {"mxc", "csrc", "tests"}
    assert totals["mxc"] > totals["csrc"] > 0
