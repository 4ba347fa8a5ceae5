#!/usr/bin/env bash
# What scripts/netlab.sh needs on the host: iproute2 (ip, tc). Installs it with apt-get when missing (needs root).
set -euo pipefail
if command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "install-netlab: iproute2 (ip, tc) is missing; run as root or install it: apt-get install -y iproute2" >&2
    exit 1
fi
echo "Installing iproute2 ..." >&2
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
