#!/usr/bin/env bash
# Set up everything a developer, a user rehearsing on the lab, or CI needs, idempotently:
#   1. system packages (apt) the lab, the test cluster and the sanity tests need;
#   2. the Python toolchain pinned in requirements-dev.txt, in .venv;
#   3. the dependency collections, offline (Galaxy is not reachable from our build machines):
#      taken out of the `ansible` community wheel on PyPI into .collections/;
#   4. .collections/ansible_collections/gpu_tray/cluster -> this checkout.
# Users who can reach Galaxy use `ansible-galaxy collection install -r requirements.yml` instead of step 3.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

: "${GPU_TRAY_CACHE:=/var/cache/gpu-tray-cluster}"
ANSIBLE_WHEEL_VERSION=12.3.0
COLLECTIONS=(kubernetes/core community/general ansible/posix ansible/utils awx/awx)
# chromium: tests/cluster renders the validation report (report.html) in headless Chromium
# openssl: the lab BMCs' certificates (lab CA)
# docker-registry: the OCI registry tests/cluster/test_bundle_vendor.py serves charts from on loopback (helm pull oci://)
APT_PACKAGES=(debootstrap systemd-container socat openssh-client iproute2 shellcheck rsync git chromium docker-registry openssl)

log() { printf '[setup] %s\n' "$*"; }

apt_missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || apt_missing+=("$p")
done
if [ "${#apt_missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    log "missing system packages (need root to install): ${apt_missing[*]}"; exit 1
  fi
  log "apt-get install ${apt_missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null
fi

stamp=.venv/.requirements.sha256
want=$(sha256sum requirements-dev.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "creating .venv from requirements-dev.txt"
  python3 -m venv .venv
  .venv/bin/pip install -q -U pip
  .venv/bin/pip install -q -r requirements-dev.txt
  echo "$want" > "$stamp"
else
  log ".venv is up to date"
fi

wheel_dir="$GPU_TRAY_CACHE/wheels"
mkdir -p "$wheel_dir"
wheel=$(find "$wheel_dir" -maxdepth 1 -name "ansible-$ANSIBLE_WHEEL_VERSION-*.whl" | head -n1)
if [ -z "$wheel" ]; then
  log "downloading the ansible $ANSIBLE_WHEEL_VERSION wheel (dependency collections)"
  .venv/bin/pip download -q --no-deps -d "$wheel_dir" "ansible==$ANSIBLE_WHEEL_VERSION"
  wheel=$(find "$wheel_dir" -maxdepth 1 -name "ansible-$ANSIBLE_WHEEL_VERSION-*.whl" | head -n1)
fi
# the stamp names the collection list too, so adding one re-extracts
coll_stamp=.collections/.from-ansible-$ANSIBLE_WHEEL_VERSION-$(echo "${COLLECTIONS[*]}" | sha256sum | cut -c1-12)
if [ ! -f "$coll_stamp" ]; then
  log "extracting ${COLLECTIONS[*]} from $(basename "$wheel")"
  rm -rf .collections.tmp && mkdir -p .collections.tmp
  .venv/bin/python - "$wheel" .collections.tmp "${COLLECTIONS[@]}" <<'PY'
import sys, zipfile
wheel, dest, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
prefixes = tuple("ansible_collections/%s/" % c for c in wanted)
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefixes)]
    for c in wanted:
        if not any(n.startswith("ansible_collections/%s/" % c) for n in names):
            sys.exit("collection %s not found in %s" % (c, wheel))
    z.extractall(dest, names)
PY
  # the extracted MANIFEST.json / FILES.json come with them, so ansible-galaxy lists them as installed
  # swapped in by two renames (not rm + mv), so commands running meanwhile see it gone for an instant at most
  mkdir -p .collections.tmp/ansible_collections/gpu_tray
  ln -sfn ../../.. .collections.tmp/ansible_collections/gpu_tray/cluster
  rm -rf .collections.old && { [ ! -e .collections ] || mv .collections .collections.old; }
  mv .collections.tmp .collections && rm -rf .collections.old
  touch "$coll_stamp"
fi
mkdir -p .collections/ansible_collections/gpu_tray
ln -sfn ../../.. .collections/ansible_collections/gpu_tray/cluster
log "collections: $(.venv/bin/python tools/ansible_env.py --root "$here" --only collections -- .venv/bin/ansible-galaxy collection list 2>/dev/null | grep -cE '^(ansible|awx|community|kubernetes|gpu_tray)\.') found in .collections"
log "done. Activate with: . .venv/bin/activate"
