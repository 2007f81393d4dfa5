#!/usr/bin/env bash
# The Python half of the test suite (the README's test command runs `cargo test` first): the
# bindings' tests and the notebooks in a virtual environment kept in the repository (.venv,
# gitignored; created when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="$PWD/.venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# uv installs the packages (pip took a minute)
[ -x "$VENV/bin/uv" ] || "$VENV/bin/python" -m pip install -q --disable-pip-version-check uv
"$VENV/bin/uv" pip install -q --python "$VENV/bin/python" \
    maturin pytest nbclient nbconvert ipykernel matplotlib numpy "dask[distributed]" "mujoco[sysid]==4.0.0"

# the extension, installed into .venv, with the dev profile: it reuses every crate `cargo test`
# compiled (the same settings and features), so only the bindings compile here
(cd python && VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" maturin develop --profile dev)

"$VENV/bin/python" -m pytest -q python/tests

# every notebook top to bottom, two at a time (a cell error fails); the committed outputs are
# left untouched
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
notebook() {
    local nb="$1" start=$SECONDS
    if (cd notebooks && MPLBACKEND=Agg "$VENV/bin/jupyter" nbconvert --to notebook --execute \
        --ExecutePreprocessor.timeout=600 --output-dir "$out" "$(basename "$nb")" \
        >"$out/$(basename "$nb").log" 2>&1); then
        echo "notebook ok: $nb ($((SECONDS - start)) s)"
    else
        echo "notebook failed: $nb"
        tail -30 "$out/$(basename "$nb").log"
        return 1
    fi
}
export -f notebook
export VENV out
shopt -s nullglob
nbs=(notebooks/*.ipynb)
[ ${#nbs[@]} -eq 0 ] || printf '%s\n' "${nbs[@]}" | xargs -P 2 -I{} bash -c 'notebook "$1"' _ {}
