#!/usr/bin/env bash
# The Python half of the test suite (the README's test command runs `cargo test` first): the
# bindings' tests and the notebooks in a virtual environment kept in the repository (.venv,
# gitignored; created when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="$PWD/.venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# uv installs the packages (pip itself took a minute of the test run's twenty)
[ -x "$VENV/bin/uv" ] || "$VENV/bin/python" -m pip install -q --disable-pip-version-check uv
"$VENV/bin/uv" pip install -q --python "$VENV/bin/python" \
    maturin pytest nbclient nbconvert ipykernel matplotlib numpy "dask[distributed]" "mujoco[sysid]==4.0.0"

# the extension, with the fast-compiling `python` profile (no fat LTO), installed into .venv
(cd python && VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" maturin develop --profile python)

"$VENV/bin/python" -m pytest -q python/tests

# every notebook top to bottom (a cell error fails); the committed outputs are left untouched
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for nb in notebooks/*.ipynb; do
    [ -e "$nb" ] || continue
    start=$SECONDS
    (cd notebooks && MPLBACKEND=Agg "$VENV/bin/jupyter" nbconvert --to notebook --execute \
        --ExecutePreprocessor.timeout=600 --output-dir "$out" "$(basename "$nb")" >/dev/null 2>&1) \
        || { echo "notebook failed: $nb"; (cd notebooks && "$VENV/bin/jupyter" nbconvert \
             --to notebook --execute --output-dir "$out" "$(basename "$nb")" 2>&1 | tail -30); exit 1; }
    echo "notebook ok: $nb ($((SECONDS - start)) s)"
done
