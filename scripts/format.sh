#!/usr/bin/env bash
# The one formatter: Debian 12's clang-format 14 (install-deps.sh installs clang-format-14; other
# versions format a few constructs differently, so the check names the version it needs).
#   scripts/format.sh          rewrite every C++ file in place (make format)
#   scripts/format.sh --check  list what differs and fail (make format-check; .ci/run runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
tool=clang-format-14
command -v "$tool" >/dev/null || { echo "format: $tool is required (scripts/install-deps.sh)" >&2; exit 2; }
mapfile -t files < <(git ls-files -- src include tests bench fuzz | grep -E '\.(cpp|hpp)$')
if [[ ${1:-} == --check ]]; then
  if ! "$tool" --dry-run -Werror "${files[@]}" 2>/tmp/punctual-format.$$; then
    grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error)' /tmp/punctual-format.$$ | cut -d: -f1 | sort -u | sed 's/^/format: differs: /' >&2
    rm -f /tmp/punctual-format.$$
    echo "format: run make format" >&2
    exit 1
  fi
  rm -f /tmp/punctual-format.$$
  echo "format: ${#files[@]} files match .clang-format"
else
  "$tool" -i "${files[@]}"
fi
