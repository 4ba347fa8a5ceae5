#!/usr/bin/env bash
# Installs the data the tests and the demo read: Fashion-MNIST from Debian's package
# dataset-fashion-mnist (gzipped IDX files in /usr/share/datasets/fashion-mnist).
set -euo pipefail
DIR=/usr/share/datasets/fashion-mnist
if [ -f "$DIR/train-images-idx3-ubyte.gz" ] && [ -f "$DIR/t10k-labels-idx1-ubyte.gz" ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "Fashion-MNIST is missing in $DIR and this user cannot install it: run 'apt-get install dataset-fashion-mnist' as root." >&2
        exit 1
    fi
fi
echo "Installing Fashion-MNIST (Debian package dataset-fashion-mnist) ..." >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq dataset-fashion-mnist >/dev/null
