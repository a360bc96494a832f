#!/bin/sh
# Refreshes the GraphiQL playground's assets in graph/playground/assets from the npm registry,
# at the pinned versions below, and records their versions and SHA-256 sums in VERSIONS.
# The binary embeds these files (go:embed), so /playground works with no internet access.
#
# GraphiQL's UMD build expects React and ReactDOM as globals; React 19 no longer ships UMD
# builds, so React stays on 18 until GraphiQL's own ESM build is adopted.
#
# Usage: scripts/update-playground.sh   (needs npm and tar; run from anywhere in the repo)
set -eu

GRAPHIQL_VERSION=4.1.2
REACT_VERSION=18.3.1
# The graphql-transport-ws client GraphiQL runs subscriptions with (its wsClient option); the
# same version as cmd/creditd/testdata/graphql-ws, which the browser test installs.
GRAPHQL_WS_VERSION=6.4.2

root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/graph/playground/assets
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fetch() { # package@version: download and unpack the registry tarball into $work/<package>
	name=${1%@*}
	mkdir -p "$work/$name"
	(cd "$work" && npm pack --silent "$1" >/dev/null)
	tar -xzf "$work/$name-${1##*@}.tgz" -C "$work/$name" --strip-components=1
}

fetch "graphiql@$GRAPHIQL_VERSION"
fetch "react@$REACT_VERSION"
fetch "react-dom@$REACT_VERSION"
fetch "graphql-ws@$GRAPHQL_WS_VERSION"

cp "$work/graphiql/graphiql.min.js" "$dest/graphiql.min.js"
cp "$work/graphiql/graphiql.min.css" "$dest/graphiql.min.css"
cp "$work/graphiql/LICENSE" "$dest/LICENSE.graphiql"
cp "$work/react/umd/react.production.min.js" "$dest/react.production.min.js"
cp "$work/react/LICENSE" "$dest/LICENSE.react"
cp "$work/react-dom/umd/react-dom.production.min.js" "$dest/react-dom.production.min.js"
cp "$work/graphql-ws/umd/graphql-ws.min.js" "$dest/graphql-ws.min.js"
cp "$work/graphql-ws/LICENSE.md" "$dest/LICENSE.graphql-ws"

# The bundles end with a source map comment; the maps are not shipped, so drop the comment
# to keep browsers from asking for them.
for f in graphiql.min.js graphiql.min.css react.production.min.js react-dom.production.min.js graphql-ws.min.js; do
	sed -i -e '/^\/[/*][#@] sourceMappingURL=/d' "$dest/$f"
done

{
	echo "# Written by scripts/update-playground.sh; do not edit."
	echo "graphiql $GRAPHIQL_VERSION"
	echo "react $REACT_VERSION"
	echo "react-dom $REACT_VERSION"
	echo "graphql-ws $GRAPHQL_WS_VERSION"
	echo
	(cd "$dest" && sha256sum graphiql.min.js graphiql.min.css react.production.min.js react-dom.production.min.js graphql-ws.min.js)
} >"$dest/VERSIONS"

echo "playground assets updated in $dest"
