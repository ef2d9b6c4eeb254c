#!/usr/bin/env bash
# The test command the README gives: runs the suite against the installed mxc.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$(mktemp -d)"
cp -r "$here/tests" "$here/examples" .
# tests that read the sources themselves (tests/test_layers.py) find the checkout here
export MXC_SOURCE_TREE="$here"
python -m pytest tests -q -p no:cacheprovider "$@"
