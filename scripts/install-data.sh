#!/usr/bin/env bash
# Installs the data the tests and the demo read: Fashion-MNIST from Debian's package
# dataset-fashion-mnist (gzipped IDX files in /usr/share/datasets/fashion-mnist).
#
# Safe when several processes start at once (e.g. the workers of a job on a fresh host): the first takes a lock and
# installs, the others wait for it and find the files. Without root (and without password-less sudo) it installs
# nothing and says how to get the data: the Debian package, or --data-dir with the files somewhere else.
# DLION_FASHION_MNIST_DIR overrides where the files are looked for (tests); DLION_DATA_LOCK the lock file.
set -euo pipefail
DIR="${DLION_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}"
LOCK="${DLION_DATA_LOCK:-${TMPDIR:-/tmp}/dlion-install-data.lock}"

present() {
    [ -f "$DIR/train-images-idx3-ubyte.gz" ] && [ -f "$DIR/train-labels-idx1-ubyte.gz" ] \
        && [ -f "$DIR/t10k-images-idx3-ubyte.gz" ] && [ -f "$DIR/t10k-labels-idx1-ubyte.gz" ]
}

if present; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "Fashion-MNIST is missing in $DIR, and this user ($(id -un)) cannot install it (not root, no password-less sudo)." >&2
        echo "Either install the Debian package as root:  apt-get install dataset-fashion-mnist" >&2
        echo "or put the four IDX files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz," >&2
        echo "t10k-labels-idx1-ubyte.gz) in a directory of your own and give it to the command with --data-dir DIR." >&2
        exit 1
    fi
fi

# one installer at a time; the others wait for it (at most 10 minutes) and find the files
exec 9>>"$LOCK"
if ! flock -w 600 9; then
    echo "Fashion-MNIST: waited 600 s for another installer (lock $LOCK); giving up." >&2
    exit 1
fi
if present; then
    exit 0
fi
echo "Installing Fashion-MNIST (Debian package dataset-fashion-mnist) ..." >&2
# apt's own locks may be held by the system (unattended upgrades): wait for them rather than fail
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq dataset-fashion-mnist >/dev/null
if ! present; then
    echo "Fashion-MNIST: the package dataset-fashion-mnist is installed but $DIR has no IDX files; use --data-dir DIR." >&2
    exit 1
fi
