#!/usr/bin/env bash
# Runs every fuzz target of the module (each `func FuzzXxx` in a _test.go file) for a bounded
# time, one after the other: FUZZ_BUDGET (default 90s) shared equally, at least 5 s each and,
# with the default budget, at most 15 s each, so CI spends at most 90 s fuzzing. A target that finds a failing input stops the script; go test writes the
# input to testdata/fuzz/<FuzzName>/ beside the test, where it becomes a seed once committed.
# `go test ./...` already runs every target's seeds (f.Add and testdata) as plain tests.
#
# A target's share counts from the moment it starts fuzzing, not from its start: before that,
# go test runs every seed and cached input once to gather baseline coverage, which for the
# HTTP targets with hundreds of seeds takes longer than a 12 s share (with -fuzztime alone they
# never fuzzed at all). So the script lets go test run, waits for its first "execs:" line, and
# after the share stops it the way Ctrl-C would (SIGINT to its process group), which go test
# treats as a normal end. A baseline that has not finished after BASELINE_LIMIT (default 180s)
# ends the target with a warning.
#
# Each package is built once for all its targets: `go test -c -fuzz` builds the test binary with
# the coverage instrumentation fuzzing needs, and the script runs it once per target from the
# package's directory with the flags go test would pass (-test.fuzz, -test.fuzzcachedir in Go's
# cache, -test.timeout), so a failing input lands in the same testdata/fuzz/ and the corpus
# cache is the same. (`go test -fuzz` would build and link the instrumented binary again for
# every target: five times for reliability's.)
#
#   scripts/fuzz.sh                  # every target
#   scripts/fuzz.sh FuzzGraphQL      # the targets whose name matches
#   FUZZ_BUDGET=10m scripts/fuzz.sh  # a longer session
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

budget="${FUZZ_BUDGET:-90s}"
filter="${1:-}"

# "package-dir FuzzName" for every fuzz target.
mapfile -t targets < <(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . |
	sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)$#\1 \2#' | sort | grep -E " .*${filter}" || true)
if [[ ${#targets[@]} -eq 0 ]]; then
	echo "no fuzz targets match '${filter}'" >&2
	exit 1
fi

to_seconds() { # 90s, 2m, 1h → seconds
	local v="$1"
	case "$v" in
	*h) echo $((${v%h} * 3600)) ;;
	*m) echo $((${v%m} * 60)) ;;
	*s) echo "${v%s}" ;;
	*) echo "$v" ;;
	esac
}
each=$(($(to_seconds "$budget") / ${#targets[@]}))
if [[ -z "${FUZZ_BUDGET:-}" ]]; then
	((each > 15)) && each=15
fi
((each < 5)) && each=5
echo "fuzzing ${#targets[@]} targets for ${each}s each"

baseline_limit="$(to_seconds "${BASELINE_LIMIT:-180s}")"

bin_dir="$(mktemp -d)"
trap 'rm -rf "$bin_dir"' EXIT
fuzz_cache="$(go env GOCACHE)/fuzz"

# fuzz_one DIR NAME BIN PKG LOG runs one target of DIR's test binary BIN (package PKG) as
# described above; its output goes to LOG.
fuzz_one() {
	local dir="$1" name="$2" bin="$3" pkg="$4" log="$5" started="" pid
	# setsid: the test binary and its workers get their own process group, so SIGINT reaches
	# them all.
	(cd "$dir" && exec setsid "$bin" -test.run '^$' -test.fuzz "^${name}\$" -test.fuzztime "$((baseline_limit + each))s" \
		-test.fuzzcachedir "${fuzz_cache}/${pkg}" -test.timeout 10m0s -test.paniconexit0) >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [[ -z "$started" ]] && grep -q '^fuzz: elapsed: .*, execs: ' "$log"; then
			started=$SECONDS
		fi
		if [[ -n "$started" ]] && ((SECONDS - started >= each)); then
			kill -INT -- "-$pid" 2>/dev/null || true
			break
		fi
		sleep 1
	done
	# The exit status of an interrupted run says nothing of the fuzzing; its output tells.
	wait "$pid" || true
	if grep -qE '^(--- FAIL|FAIL)' "$log" || ! grep -qE '^(ok|PASS)' "$log"; then
		return 1
	fi
	if [[ -z "$started" ]]; then
		echo "warning: ${name} spent its whole time (${baseline_limit}s) on baseline coverage and never fuzzed" >&2
	fi
}

# build DIR builds DIR's instrumented test binary into bin_dir, once, and sets bin and pkg (its
# import path) to it.
declare -A built
build() {
	local dir="$1" start=$SECONDS
	bin="${bin_dir}/$(echo "${dir#./}" | tr / _).test"
	pkg="$(go list -f '{{.ImportPath}}' "$dir")"
	if [[ -z "${built[$dir]:-}" ]]; then
		# -fuzz makes go test build with instrumentation; which targets it names does not matter.
		go test -c -fuzz . -o "$bin" "$dir"
		printf 'built %s with coverage instrumentation in %ds\n' "$dir" $((SECONDS - start))
		built[$dir]=1
	fi
}

for t in "${targets[@]}"; do
	read -r dir name <<<"$t"
	build "$dir"
	log="$(mktemp)"
	if ! fuzz_one "$dir" "$name" "$bin" "$pkg" "$log"; then
		cat "$log"
		rm -f "$log"
		echo "FAIL ${name} (${dir}): the failing input is in ${dir#./}/testdata/fuzz/${name}/" >&2
		exit 1
	fi
	printf 'ok  %-22s %-14s %s\n' "$name" "$dir" "$(awk -f scripts/fuzz-summary.awk "$log")"
	rm -f "$log"
done
