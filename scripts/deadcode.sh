#!/usr/bin/env bash
# Fails on any function that nothing reaches from the binaries or the
# tests (golang.org/x/tools/cmd/deadcode -test), apart from the entries of
# scripts/deadcode.allow.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH)/bin"
command -v deadcode >/dev/null || { echo "deadcode: not installed; run scripts/setup.sh" >&2; exit 1; }
out=$(deadcode -test ./...)
allow=$(sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d' scripts/deadcode.allow)
left=$out
if [ -n "$allow" ] && [ -n "$out" ]; then
	left=$(grep -v -E -f <(printf '%s\n' "$allow") <<<"$out" || true)
fi
if [ -n "$left" ]; then
	printf '%s\n' "$left" >&2
	echo "deadcode: the functions above are reached by no binary and no test; delete them, or add an entry with its reason to scripts/deadcode.allow" >&2
	exit 1
fi
