# gpu_tray.cluster — one entry point for developers, users rehearsing on the lab, and CI.
#   make setup      venv + dependency collections (offline, from the ansible wheel) + apt packages
#   make lab        setup, boot the rehearsal lab, run the site playbook against it, print the report path
#   make check      the loop before make test: the offline tests that name what git diff changed + lint of the changed files (CHECK_BASE=REV)
#   make test       every test layer (units, lint, sanity, lab, molecule, test cluster): lab+cluster and offline side by side
#   make matrix     per supported ansible-core (2.19/2.20/2.21): units, sanity, lab smoke; deprecations fail
#   make lab-up / lab-down / lab-status      the rehearsal lab alone (PLATFORM, TRAYS, FAULTS="name[@N] ...", BMC=0 without the trays' BMCs)
#   make cluster-up / cluster-down           the test Kubernetes cluster (kube-apiserver 1.20 + simulated kubelet)
#   make lab-reset / lab-bench               replace the lab; time 8-tray boots (prints seconds and ratios)
#   make test-vm                             prepare_trays.yml on 2 real qemu VM trays (lab/vm/vmlab; ~15 min; not in make test)
#   make vm-up / vm-down / vm-status         the VM lab alone (PLATFORM, VM_TRAYS=2; 1 vCPU + 1 GiB per VM)
#   make cluster-bench                       warm start-up of the test cluster vs its 30 s budget (ratios)
#   make stack-bench                         chart rollout: tiers vs one by one on the test cluster, tiers/components per recipe
#   make prep-bench                          preflight/prepare/rolling-reboot ratios on 8/16/64 lab trays (docs/performance.md)
#   make mutate                              plant bugs in the host and controller-side code, report the kill rate
#   make mutate-controller                   the controller-side part of make mutate only (filters, plugin_utils, cluster rules)
#   make mutate-yaml / mutate-strings        the YAML that decides behaviour / the string constants in Python, only
#   make lint / sanity / units / test-lab / molecule / test-cluster / test-upstream / build   single layers
#   make changelog                           fold changelogs/fragments into CHANGELOG.md/.rst (antsibull-changelog)
#   make docs                                collection reference (antsibull-docs + Sphinx) in build/docs
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV        := .venv
BIN         := $(CURDIR)/$(VENV)/bin
PLATFORM    ?= nvke-gb200
TRAYS       ?= 4
FAULTS      ?=
# the trays' BMCs (lab/lab bmc up: a Redfish emulator per tray); BMC=0 leaves them out
BMC         ?= 1
VM_TRAYS    ?= 2
export GPU_TRAY_CACHE ?= /var/cache/gpu-tray-cluster
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_HOME := $(CURDIR)/.ansible
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.collections
export MOLECULE_GLOB := molecule/*/molecule.yml
export PATH := $(BIN):$(PATH)
export PYTHONDONTWRITEBYTECODE := 1

REPORT_DIR  ?= $(CURDIR)/output/report
LAB         := $(CURDIR)/lab/lab
VMLAB       := $(CURDIR)/lab/vm/vmlab
FAULT_ARGS  := $(foreach f,$(FAULTS),--fault $(f))

.PHONY: help setup lint sanity units check test matrix build clean lab lab-up lab-down lab-status lab-reset lab-bench test-lab molecule test-cluster cluster-build cluster-up cluster-down cluster-bench prep-bench stack-bench
help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

setup:
	@bash tools/setup.sh

lint: setup
	yamllint -s .
	ansible-lint --offline --profile production

sanity: setup
	bash tools/sanity.sh

units: setup
	pytest tests/unit

build: setup
	ansible-galaxy collection build --force --output-path build .
	python3 tools/ee_requirements.py --build-dir build

test: setup
	bash tools/run-tests.sh

CHECK_BASE ?= HEAD
check: setup
	.venv/bin/python tools/check.py --base $(CHECK_BASE)

# MATRIX_ARGS="--cores 2.21.5 --steps units,lab" narrows it (tools/matrix.sh --help)
matrix: setup
	bash tools/matrix.sh $(MATRIX_ARGS)

lab-up: setup
	$(LAB) up --platform $(PLATFORM) --trays $(TRAYS) $(FAULT_ARGS)
	@if [ "$(BMC)" = 1 ]; then $(LAB) bmc up; fi

lab-down:
	$(LAB) down

lab-status:
	$(LAB) status

lab-reset: setup
	$(LAB) reset --platform $(PLATFORM) --trays $(TRAYS) $(FAULT_ARGS)

lab-bench:
	python3 lab/bench_boot.py --platform $(PLATFORM) --trays 8 --runs 2

test-lab: setup
	pytest -p no:cacheprovider tests/lab

molecule: setup
	molecule test -s lab_smoke

# Real kernel, GRUB and reboots (docs/lab.md "VM backend"); separate from make test/.ci/run (docs/testing.md).
# Installs qemu/mmdebstrap (apt) and builds the cached image on first use; prints its timings at the end.
.PHONY: test-vm vm-up vm-down vm-status
test-vm: setup
	$(VMLAB) deps
	pytest -p no:cacheprovider -rfEs tests/vm

vm-up: setup
	$(VMLAB) up --platform $(PLATFORM) --trays $(VM_TRAYS)

vm-down:
	$(VMLAB) down

vm-status:
	$(VMLAB) status

test-cluster: setup
	pytest -p no:cacheprovider tests/cluster

# the bundles against the real upstream charts and CRDs (../shared/upstream, or GPU_TRAY_UPSTREAM=<dir>)
.PHONY: test-upstream
test-upstream: setup
	pytest -p no:cacheprovider -rs tests/upstream

# The main job: the site playbook against the lab, exactly as against a rack. A failing preflight or validation is
# a result, not a crash: the reports say which tray failed which check and how to fix it.
# The lab has no Kubernetes cluster: phase 3 (chart stack) and the cluster phases of validation are skipped. In its
# place `lab sriov` plays the SR-IOV config daemon (writes sriov_numvfs as the recipe's SriovNetworkNodePolicies ask,
# nothing on rke2-vr200), then validate.yml runs its trays phase - where VF faults (pkey-limited-vf) show.
lab: lab-up
	rm -rf $(REPORT_DIR)
	ansible-playbook -i "$$($(LAB) inventory)" playbooks/site.yml -e gpu_tray_report_dir=$(REPORT_DIR) \
	  -e gpu_tray_stack_deploy=false -e gpu_tray_validate=false \
	  && $(LAB) sriov \
	  && ansible-playbook -i "$$($(LAB) inventory)" playbooks/validate.yml -e gpu_tray_report_dir=$(REPORT_DIR) \
	    -e '{"gpu_tray_validate_phases": ["trays"]}'; \
	  rc=$$?; echo; echo "Reports: $(REPORT_DIR)/preflight-summary.md, $(REPORT_DIR)/rolling-reboot.md," \
	    "$(REPORT_DIR)/validation/report.md (per-tray evidence in $(REPORT_DIR)/<tray>/)"; \
	  for f in preflight-summary.md rolling-reboot.md validation/report.md; do \
	    [ -f $(REPORT_DIR)/$$f ] && cat $(REPORT_DIR)/$$f; done; exit $$rc

cluster-build:
	bash tests/cluster/build.sh

cluster-up: setup cluster-build
	tests/cluster/kcluster up --platform $(PLATFORM) --nodes $(TRAYS)

cluster-down:
	tests/cluster/kcluster down

cluster-bench: setup cluster-build
	python3 tests/cluster/bench_startup.py --runs 3

# the test cluster under its lock (shared with the test sessions); the bench uses its own state dir and ports
stack-bench: setup cluster-build
	flock /var/lock/gpu-tray-kcluster.lock python3 tests/cluster/bench_stack.py

# Mutation check (tools/mutate.py; an evening on 2 cores, not part of make test/CI): one planted bug at a time,
# the unit tests must notice it. Below 90 % killed in any host parser or controller-side file fails (the host
# modules are reported); docs/testing.md keeps the figures.
MUTATE_UTILS   ?= $(addprefix plugins/module_utils/,cmdline.py common.py containerd.py hugepages.py judges.py mstconfig.py rdma.py tray.py)
MUTATE_MODULES ?= $(addprefix plugins/modules/,containerd_config.py hugepage_check.py ib_pkey_check.py kernel_cmdline.py nic_firmware.py rdma_facts.py tray_facts.py)
MUTATE_CONTROLLER ?= plugins/filter plugins/plugin_utils plugins/action \
	$(addprefix plugins/module_utils/,cluster_rules.py conformance.py kube.py nccl.py reboot_controllers.py resources.py)
# The YAML that decides behaviour (role defaults' default() literals and switches, argument-spec defaults and
# choices, the generated inventory spec, vars data, platform profiles, recipe data), run against the unit tests and
# the offline layers that read each file (quality, upstream, offline stack/NCCL); and the string constants that
# decide behaviour (labels, selectors, env names, file names, compared values) in the files named here.
# (the chart catalog, plugins/plugin_utils/stack_data/catalog.yml - chart versions and values, held against the real
# charts by tests/upstream - is left out: its 250 mutants cost a bundle render each; name it to run it.)
MUTATE_YAML ?= $(wildcard roles/*/defaults/main.yml roles/*/vars/*.yml roles/*/meta/argument_specs.yml) \
	plugins/plugin_utils/platforms plugins/plugin_utils/stack_data/recipes.yml
MUTATE_STRINGS ?= plugins/plugin_utils/nccl_launch.py plugins/plugin_utils/planners/imex.py \
	$(addprefix plugins/module_utils/,conformance.py kube.py)
MUTATE_JOBS ?= 1
.PHONY: mutate mutate-controller mutate-yaml mutate-strings
mutate: setup
	python3 tools/mutate.py --jobs $(MUTATE_JOBS) --fail-under 90 $(MUTATE_UTILS)
	python3 tools/mutate.py --jobs $(MUTATE_JOBS) --fail-under 90 $(MUTATE_CONTROLLER)
	python3 tools/mutate.py --jobs $(MUTATE_JOBS) $(MUTATE_MODULES)
	python3 tools/mutate.py --jobs $(MUTATE_JOBS) --fail-under 90 $(MUTATE_YAML)
	python3 tools/mutate.py --jobs $(MUTATE_JOBS) --fail-under 90 --strings $(MUTATE_STRINGS)

mutate-controller: setup
	python3 tools/mutate.py --jobs $(MUTATE_JOBS) --fail-under 90 $(MUTATE_CONTROLLER)

mutate-yaml: setup
	python3 tools/mutate.py --jobs $(MUTATE_JOBS) --fail-under 90 $(MUTATE_YAML)

mutate-strings: setup
	python3 tools/mutate.py --jobs $(MUTATE_JOBS) --fail-under 90 --strings $(MUTATE_STRINGS)

# a benchmark, not a test: takes the lab lock per phase, refuses to run while a lab is up
prep-bench: setup
	python3 tools/prep_bench.py

# Fragments are kept until the galaxy.yml version is tagged; new ones are folded into that version's entry.
.PHONY: changelog
changelog: setup
	antsibull-changelog lint
	antsibull-changelog release --reload-plugins --update-existing
	antsibull-changelog generate --refresh-fragments   # edited fragments too
	rm -f changelogs/.plugin-cache.yaml

.PHONY: docs
docs: setup
	bash tools/build-docs.sh

clean:
	rm -rf build .pytest_cache .hypothesis .ansible
