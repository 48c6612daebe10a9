#!/usr/bin/env bash
# Re-fetch the dashboard's chart library (uPlot, MIT) at its pinned version from the npm registry and
# copy its minified build and LICENSE into the package. The files are committed: the dashboard must work
# on machines without internet (no CDN), and `pip install .` must not need npm.
set -euo pipefail
UPLOT_VERSION=1.6.32
here=$(cd "$(dirname "$0")/.." && pwd)
dest="$here/src/vnetbench/dashboard/static/vendor"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "uplot@$UPLOT_VERSION" >/dev/null && tar -xzf "uplot-$UPLOT_VERSION.tgz")
mkdir -p "$dest"
cp "$work/package/dist/uPlot.iife.min.js" "$dest/uPlot.iife.min.js"
cp "$work/package/dist/uPlot.min.css" "$dest/uPlot.min.css"
cp "$work/package/LICENSE" "$dest/uPlot.LICENSE"
echo "uplot $UPLOT_VERSION" >"$dest/VERSIONS"
echo "vendored uPlot $UPLOT_VERSION into $dest"
