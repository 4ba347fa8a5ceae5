#!/usr/bin/env bash
# What scripts/netlab.sh needs on the host: iproute2 (ip, tc) and python3 (the link report); with --gloo also PyTorch
# (Debian's python3-torch for /usr/bin/python3, ~1 GB), for the gloo baselines. Installs what is missing with apt-get (needs root).
set -euo pipefail
PACKAGES=()
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || PACKAGES+=(iproute2)
command -v python3 >/dev/null 2>&1 || PACKAGES+=(python3)
if [ "${1:-}" = "--gloo" ] && ! /usr/bin/python3 -c 'import torch.distributed' >/dev/null 2>&1; then
    PACKAGES+=(python3-torch)
fi
[ ${#PACKAGES[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != "0" ]; then
    echo "install-netlab: missing ${PACKAGES[*]}; run as root or install: apt-get install -y ${PACKAGES[*]}" >&2
    exit 1
fi
echo "Installing ${PACKAGES[*]} ..." >&2
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
