#!/usr/bin/env bash
# The whole test suite (the README's test command, what CI runs): `cargo test`, with the Python
# extension building beside it (the two compiles leave each other's idle core busy), then the
# bindings' tests and the notebooks (python/test.sh).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p target
python/test.sh build >target/python-build.log 2>&1 &
build=$!
status=0
cargo test || status=$?
if ! wait "$build"; then
    echo "the Python extension's build failed:"
    tail -40 target/python-build.log
    exit 1
fi
tail -3 target/python-build.log
[ "$status" -eq 0 ] || exit "$status"
python/test.sh check
