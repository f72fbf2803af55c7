#!/usr/bin/env bash
# The project's test command (README, .ci/run): set up, then vet, format
# check, every test, and a short run of every fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PATH:/usr/local/go/bin"

# The seven PRM revisions live in the shared folder beside the repository.
if [ -z "${CXRAY_PRM_HISTORY:-}" ]; then
	for d in ../shared/prm-history; do
		if ls "$d"/hca-ext-rev*.adb >/dev/null 2>&1; then export CXRAY_PRM_HISTORY="$(cd "$d" && pwd)"; break; fi
	done
fi
echo "test: PRM history: ${CXRAY_PRM_HISTORY:-not found (those tests will skip)}"

# -d emu keeps its state between commands under $XDG_STATE_HOME: the tests
# get a fresh one, never the state of this machine's user.
XDG_STATE_HOME="$(mktemp -d)"
export XDG_STATE_HOME
trap 'rm -rf "$XDG_STATE_HOME"' EXIT

# Every stage runs, whatever the ones before it did, so that one failure
# never hides another (a loaded run once stopped at the first failure and
# never ran -race, the flock test or the fuzz targets); the failures are
# listed at the end, and the script exits 1 if there was any.
failed=()
stage() {
	local name=$1; shift
	echo "test: $name"
	if ! "$@"; then
		echo "test: FAILED: $name" >&2
		failed+=("$name")
	fi
}

stage "go vet" go vet ./...
stage "go vet, the crash-hook build (-tags cxray_crashhook)" go vet -tags cxray_crashhook ./nvconf ./cli
gofmt_check() {
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
	if [ -n "$unformatted" ]; then echo "gofmt needed on: $unformatted" >&2; return 1; fi
}
stage "gofmt" gofmt_check
stage "deadcode (scripts/deadcode.sh: nothing unreachable apart from scripts/deadcode.allow)" bash scripts/deadcode.sh

cross() {
	local target=$1
	GOOS="${target%/*}" GOARCH="${target#*/}" CGO_ENABLED=0 go build ./... &&
		GOOS="${target%/*}" GOARCH="${target#*/}" CGO_ENABLED=0 go build -o /dev/null ./cmd/cxray &&
		{ [ "$target" = linux/amd64 ] || GOOS="${target%/*}" GOARCH="${target#*/}" CGO_ENABLED=0 go vet ./...; }
}
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64; do
	stage "cross build and vet: $target (one static binary)" cross "$target"
done

# The default 10-minute bound per package is too tight for cli and
# conformance on a loaded machine (cli took 4 min on an idle CI run).
stage "go test" go test -count=1 -timeout 45m ./...
deploytest() { (cd tools/deploytest && go vet ./... && go test -count=1 ./...); }
stage "deployment (tools/deploytest: the Kubernetes base decoded into the API's types, the container image under podman)" deploytest
stage "go test -race (the concurrent parts)" go test -race -count=1 ./access/... ./adapter ./emu/optics ./emu/state ./feature/exporter ./feature/monitor
stage "the emulator state's flock locks (macOS, BSDs), here on Linux" go test -count=1 -tags cxray_flock ./emu/state

fuzztime="${FUZZTIME:-10s}"
fuzz_one() {
	local pkg=$1 target=$2 log
	log=$(mktemp)
	if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1; then rm -f "$log"; return 0; fi
	# Go before 1.27 can fail a fuzz run at the -fuzztime boundary
	# with a bare "context deadline exceeded" and no input
	# (golang/go#75804). Only that exact failure is run once more;
	# a written failing input or any other error fails at once.
	if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written\|panic:\|_test.go:[0-9]' "$log"; then
		echo "fuzz: $target stopped at the fuzztime boundary without an input (golang/go#75804); running it again"
		if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1; then rm -f "$log"; return 0; fi
	fi
	cat "$log"
	rm -f "$log"
	return 1
}
echo "test: fuzz targets, $fuzztime each"
for pkg in $(go list ./...); do
	for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
		stage "fuzz: $pkg $target" fuzz_one "$pkg" "$target"
	done
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "test: ${#failed[@]} stage(s) failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "test: all passed"
