#!/usr/bin/env bash
# What scripts/monitoring-check.sh needs on the host: Prometheus (Debian's prometheus: the server and promtool) and curl;
# with --screenshot also a headless Chromium (Debian's chromium) for the picture of DL4J's training UI.
# Installs what is missing with apt-get (needs root). The Debian package starts a Prometheus service on :9090 where
# services run; the check starts its own on another port and stops only that one.
set -euo pipefail
PACKAGES=()
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || PACKAGES+=(prometheus)
command -v curl >/dev/null 2>&1 || PACKAGES+=(curl)
command -v python3 >/dev/null 2>&1 || PACKAGES+=(python3)
if [ "${1:-}" = "--screenshot" ] && ! command -v chromium >/dev/null 2>&1; then
    PACKAGES+=(chromium)
fi
[ ${#PACKAGES[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != "0" ]; then
    echo "install-monitoring: missing ${PACKAGES[*]}; run as root or install: apt-get install -y ${PACKAGES[*]}" >&2
    exit 1
fi
echo "Installing ${PACKAGES[*]} ..." >&2
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
