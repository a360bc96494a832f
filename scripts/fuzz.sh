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

# fuzz_one DIR NAME LOG runs one target as described above; its output goes to LOG.
fuzz_one() {
	local dir="$1" name="$2" log="$3" started="" pid
	# setsid: go test and its workers get their own process group, so SIGINT reaches them all.
	setsid go test -run '^$' -fuzz "^${name}\$" -fuzztime "$((baseline_limit + each))s" "${dir}" >"$log" 2>&1 &
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
	# An interrupted go test exits 1 even when the fuzzing ended well; its output tells.
	wait "$pid" || true
	if grep -qE '^(--- FAIL|FAIL)' "$log" || ! grep -qE '^(ok|PASS)' "$log"; then
		return 1
	fi
	if [[ -z "$started" ]]; then
		echo "warning: ${name} spent its whole time (${baseline_limit}s) on baseline coverage and never fuzzed" >&2
	fi
}

for t in "${targets[@]}"; do
	read -r dir name <<<"$t"
	log="$(mktemp)"
	if ! fuzz_one "$dir" "$name" "$log"; then
		cat "$log"
		rm -f "$log"
		echo "FAIL ${name} (${dir}): the failing input is in ${dir#./}/testdata/fuzz/${name}/" >&2
		exit 1
	fi
	printf 'ok  %-22s %-14s %s\n' "$name" "$dir" "$(awk -f scripts/fuzz-summary.awk "$log")"
	rm -f "$log"
done
