#!/usr/bin/env bash
# Installs Zepp's build and test dependencies from Debian 12's archive (run as root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  cmake ninja-build g++ pkg-config make \
  libsimdjson-dev libcsv-dev libcli11-dev liblemon-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev \
  libsimgrid-dev libopenmpi-dev openmpi-bin libopenblas-dev \
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev \
  gnuplot-nox pybind11-dev python3-dev python3-numpy python3-pytest >/dev/null
