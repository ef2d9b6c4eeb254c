"""tools/api_coverage.py: mxc keeps at least the committed share of MXNet 1.9.1's public names
(tools/api_coverage_floor.json, per module), and the measurement itself is right."""
import importlib.util
import json
import os

import pytest

# the checkout: beside the tests, or where tools/run_tests.sh copied them from
ROOT = (os.environ.get("MXC_SOURCE_TREE")
        or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
_spec = importlib.util.spec_from_file_location(
    "api_coverage", os.path.join(ROOT, "tools", "api_coverage.py"))
api_coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_coverage)


@pytest.fixture(scope="module")
def result():
    return api_coverage.coverage()


def test_coverage_does_not_fall_below_the_committed_floor(result):
    with open(api_coverage.FLOOR) as f:
        floor = json.load(f)
    assert set(floor) == set(result), "the floor and the name lists cover other modules"
    fell = {path: (len(result[path][0]), n, result[path][1][:10])
            for path, n in floor.items() if len(result[path][0]) < n}
    assert not fell, "coverage fell (present, floor, some missing names): %r" % fell
    present, total = api_coverage.totals(result)
    assert present >= sum(floor.values()) and present / total > 0.8


def test_name_lists_are_mxnet_191():
    with open(api_coverage.NAMES) as f:
        data = json.load(f)
    assert data["mxnet_version"] == "1.9.1"
    mods = data["modules"]
    assert {"mx", "mx.nd", "mx.gluon.nn", "mx.np", "mx.contrib.text"} <= set(mods)
    # imports of the stdlib and numpy are not MXNet's API; its operators are
    assert "Convolution" in mods["mx.nd"] and "Dense" in mods["mx.gluon.nn"]
    assert "namedtuple" not in mods["mx.io"] and "np" not in mods["mx.nd"]


def test_measurement_counts_missing_names_and_modules():
    got = api_coverage.coverage({"mx.gluon.contrib.rnn": ["Conv2DLSTMCell", "NoSuchCell"],
                                 "mx.no_such_module": ["x"],
                                 "mx.nd": ["zeros", "no_such_op"]})
    assert got["mx.gluon.contrib.rnn"] == (["Conv2DLSTMCell"], ["NoSuchCell"])
    assert got["mx.no_such_module"] == ([], ["x"])
    assert got["mx.nd"] == (["zeros"], ["no_such_op"])
    assert api_coverage.totals(got) == (2, 5)
