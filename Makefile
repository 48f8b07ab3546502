# gpu_tray.cluster — one entry point for developers, users rehearsing on the lab, and CI.
#   make setup      venv + dependency collections (offline, from the ansible wheel) + apt packages
#   make lab        setup, boot the rehearsal lab, run the site playbook against it, print the report path
#   make test       every test layer (units, lint, sanity, lab, molecule, test cluster) in one pytest run
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV        := .venv
BIN         := $(CURDIR)/$(VENV)/bin
PLATFORM    ?= nvke-gb200
TRAYS       ?= 4
FAULTS      ?=
export GPU_TRAY_CACHE ?= /var/cache/gpu-tray-cluster
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_HOME := $(CURDIR)/.ansible
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.collections
export MOLECULE_GLOB := molecule/*/molecule.yml
export PATH := $(BIN):$(PATH)
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help setup lint sanity units test build clean
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

test: setup
	bash tools/run-tests.sh

clean:
	rm -rf build .pytest_cache .hypothesis .ansible
