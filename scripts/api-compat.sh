#!/usr/bin/env bash
# API compatibility (contract §19): compares the GraphQL schema (schema.graphqls) and the OpenAPI
# document (docs/openapi.yaml) with those of the newest release in CHANGELOG.md, kept in
# api/baseline/<version>/, and fails on a breaking change. Both tools are pinned: GraphQL
# Inspector by api/compat/package-lock.json (installed with npm ci once, then run offline with
# npx), oasdiff by the version below (go run: through the Go module proxy once, then from the
# module cache).
#
# GraphQL Inspector: its "breaking" changes fail; its "dangerous" ones (a new enum value, a new
# union member, a new optional argument) are printed and pass, as §19 allows them.
#
# oasdiff `breaking`: its errors AND its warnings fail, because §19 forbids what oasdiff only
# warns about (a removed query parameter is a warning to oasdiff). One kind of change it calls an
# error is compatible by §19 and passes here: a new event type, which /v1/events and
# /v1/events/{id} show as a new member of their oneOf and a new value OtherEvent's `type` is not
# (the document tells clients to expect unknown types: x-unknown-event-types). Those changes are
# printed and marked as allowed. So is a new error code: the error table grows with new
# operations (409 export_in_progress came with GET /v1/export), the schema's `code` enum is shared
# by every operation, and docs/errors.md tells clients to treat a code they do not know by its
# HTTP status, as Stripe's error codes are documented to grow. Nothing else is filtered.
#
# A deliberate break is a new release made in one commit: see CHANGELOG.md's top. So that a
# release cannot hide a break, the newest release's baseline is also compared with the one
# before when both have the same major version.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

OASDIFF=github.com/oasdiff/oasdiff@v1.37.0

# The releases are CHANGELOG.md's "## [X.Y.Z]" headings, newest first ("Unreleased" is not one).
mapfile -t releases < <(sed -n 's/^## \[\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)\].*/\1/p' CHANGELOG.md)
if [[ ${#releases[@]} -eq 0 ]]; then
	echo "api-compat: CHANGELOG.md names no release (a heading '## [X.Y.Z] - date')" >&2
	exit 1
fi
release="${releases[0]}"
for f in schema.graphqls openapi.yaml; do
	if [[ ! -f "api/baseline/$release/$f" ]]; then
		echo "api-compat: api/baseline/$release/$f is missing: the baseline of release $release (CHANGELOG.md)" >&2
		exit 1
	fi
done

if [[ ! -x api/compat/node_modules/.bin/graphql-inspector ]]; then
	(cd api/compat && npm ci --no-audit --no-fund --loglevel=error)
fi

# One change of oasdiff's singleline output a line: "error at FILE, in API GET /v1/... <what>
# [check-id]. <why>". These are a new event type's.
new_event_type='^(error|warning) at [^,]*, in API GET /v1/events(/\{id\})? (added `#/components/schemas/[A-Za-z]+Event` to the [^[]*`oneOf` list .*\[response-(body|property)-one-of-added\]|added the new `[a-z_.]+` enum value to the `([a-z/]*/)?oneOf\[#/components/schemas/OtherEvent\]/type/not` response property .*\[response-property-enum-value-added\])'

# A new value of the shared error code enum (`error/code`), on any operation and status.
new_error_code='^(error|warning) at [^,]*, in API [A-Z]+ /v1/[^ ]* added the new `[a-z_]+` enum value to the `error/code` response property .*\[response-property-enum-value-added\]'

# compare OLD_SCHEMA NEW_SCHEMA OLD_OPENAPI NEW_OPENAPI WHAT: prints both tools' findings and
# returns 1 when the new ones break the old.
compare() {
	local broken=0 changes line
	echo "-- GraphQL: $1 -> $2 (GraphQL Inspector)"
	if ! (cd api/compat && npx --offline graphql-inspector diff "../../$1" "../../$2"); then
		echo "api-compat: the GraphQL schema breaks $5 (above)" >&2
		broken=1
	fi
	echo "-- REST: $3 -> $4 (oasdiff)"
	# (set -e does not apply inside a function called as a condition: check oasdiff ran.)
	if ! changes="$(go run "$OASDIFF" breaking "$3" "$4" --format singleline --color never)"; then
		echo "api-compat: oasdiff could not compare $3 and $4" >&2
		return 1
	fi
	local rest_broken=0
	while IFS= read -r line; do
		[[ -z "$line" ]] && continue
		if [[ "$line" =~ ^(error|warning)\ at ]]; then
			if [[ "$line" =~ $new_event_type ]]; then
				echo "allowed (a new event type, §19): $line"
			elif [[ "$line" =~ $new_error_code ]]; then
				echo "allowed (a new error code, docs/errors.md): $line"
			else
				echo "BREAKING: $line"
				rest_broken=1
			fi
		else
			echo "$line"
		fi
	done <<<"$changes"
	if [[ $rest_broken -ne 0 ]]; then
		echo "api-compat: the OpenAPI document breaks $5 (above)" >&2
		broken=1
	fi
	return $broken
}

echo "comparing with release $release (api/baseline/$release)"
if ! compare "api/baseline/$release/schema.graphqls" schema.graphqls "api/baseline/$release/openapi.yaml" docs/openapi.yaml "release $release's"; then
	echo "A deliberate break is a new release in one commit: CHANGELOG.md says how." >&2
	exit 1
fi
echo "no breaking change against release $release"

# A release that breaks the one before must be a new major version (a deliberate break).
previous="${releases[1]:-}"
if [[ -n "$previous" && -f "api/baseline/$previous/schema.graphqls" && "${release%%.*}" == "${previous%%.*}" ]]; then
	echo "comparing release $release with release $previous: the same major version must not break"
	if ! compare "api/baseline/$previous/schema.graphqls" "api/baseline/$release/schema.graphqls" "api/baseline/$previous/openapi.yaml" "api/baseline/$release/openapi.yaml" "release $previous's"; then
		echo "api-compat: release $release breaks release $previous: a break needs a new major version (CHANGELOG.md)" >&2
		exit 1
	fi
fi
