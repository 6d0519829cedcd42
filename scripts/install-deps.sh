#!/usr/bin/env bash
# Installs Zepp's build and test dependencies from Debian 12's archive (run as root).
# python3-torch (1.13, CPU) is for the torch tensor interface and zepp.torch's gloo tests; with its
# 169 packages it added 7 min 50 s to this script on the shared 2-core machine (download included).
# python3-setuptools, -wheel, -pip and -venv: `pip install --no-build-isolation ./python` and
# scripts/pip-check.sh (python/README.md).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  cmake ninja-build g++ pkg-config make \
  libsimdjson-dev libcsv-dev libcli11-dev liblemon-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev \
  libsimgrid-dev libopenmpi-dev openmpi-bin libopenblas-dev \
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev \
  gnuplot-nox pybind11-dev python3-dev python3-numpy python3-pytest \
  python3-torch python3-setuptools python3-wheel python3-pip python3-venv >/dev/null
