#!/usr/bin/env bash
# The test command the README gives: runs the suite against the installed mxc.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$(mktemp -d)"
cp -r "$here/tests" "$here/examples" .
python -m pytest tests -q -p no:cacheprovider "$@"
