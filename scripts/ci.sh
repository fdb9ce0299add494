#!/usr/bin/env bash
# The full check: formatting, Rust tests, Python package + tests, every example config.
# Run from anywhere: `bash scripts/ci.sh`. CI runs it through .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"

echo "== cargo fmt --check"
cargo fmt --all --check

echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings

echo "== cargo doc (warnings are errors)"
# Private items too: the engine's parts (engine/*) are crate-private and documented.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --exclude flitsim-py --no-deps --document-private-items --quiet

echo "== cargo test (Rust crates, no Python)"
cargo test --workspace --exclude flitsim-py

echo "== pip install '.[test]' (release build of the extension)"
"$PYTHON" -m pip install --quiet '.[test]'

# pyenv only puts a newly installed console script on PATH after a rehash.
if command -v pyenv > /dev/null 2>&1; then
    pyenv rehash || true
fi

echo "== pytest tests/python, and the doctests of the installed package"
"$PYTHON" -m pytest tests/python -q
(cd "$(mktemp -d)" && "$PYTHON" -m pytest --doctest-modules --pyargs flitsim -q -p no:cacheprovider)

echo "== ruff check (lint of the Python package and tests)"
"$PYTHON" -m ruff check python tests/python

echo "== stubtest: python/flitsim/_core.pyi against the compiled module"
(cd "$(mktemp -d)" && "$PYTHON" -m mypy.stubtest flitsim._core)

echo "== README.md's bash commands (reduced run lengths; skips listed in the script)"
"$PYTHON" scripts/readme_commands.py

echo "== smoke-run examples/*.toml"
shopt -s nullglob
examples=(examples/*.toml)
if [ "${#examples[@]}" -eq 0 ]; then
    echo "error: no examples/*.toml to run" >&2
    exit 1
fi
for file in "${examples[@]}"; do
    echo "   $file"
    flitsim run "$file" --set run.warmup=500 --set run.measure=1000 --json > /dev/null
done
echo "== all checks passed (${#examples[@]} examples)"
