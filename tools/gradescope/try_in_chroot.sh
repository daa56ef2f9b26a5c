#!/usr/bin/env bash
# Try the Gradescope autograder for real, on a fresh Ubuntu 22.04 (Gradescope's base image),
# before uploading it:
#
#     sudo tools/gradescope/try_in_chroot.sh build/autograder.zip NOTEBOOK.ipynb [...]
#
# What it builds, in $WORK (default /var/tmp/minigraph-gradescope; nothing outside it):
#   base/    Ubuntu jammy, minimal (debootstrap from $MIRROR), made once: 20 s here, 130 MB
#   image/   base/ + the zip unpacked in /autograder/source + `setup.sh` run in it, as
#            Gradescope builds the autograder's image: made again for each run of this script,
#            1.5 min here (apt and pip download Python, numpy, Jupyter...), 1.8 GB
#   runs/    each NOTEBOOK graded twice, each time in a fresh copy of image/ (an overlay) with
#            the notebook in /autograder/submission, by `run_autograder` as root (5-8 s each):
#              sandbox     root with every capability: the grader's bubblewrap sandbox works
#              no-sandbox  root with only Docker's default capabilities (no CAP_SYS_ADMIN):
#                          bubblewrap cannot make namespaces, so run_autograder grades with
#                          --no-sandbox, the notebook running as a user with no rights
#            and prints each score, keeping results.json as runs/MODE-NOTEBOOK.json.
# What it proves: setup.sh installs everything the grader needs on a bare Ubuntu 22.04 and
# run_autograder writes Gradescope's results.json there, with and without namespaces. What it
# does not: Gradescope's own harness (its Docker image has more packages than debootstrap's
# minimal one, and its seccomp profile is not reproduced; dropping CAP_SYS_ADMIN is what
# makes bubblewrap refuse here).
#
# Needs root, debootstrap, python3 and Ubuntu's archive key, KEYRING (Ubuntu has it; Debian 12
# has not: unpack jammy's ubuntu-keyring .deb, check that its 2018 key's fingerprint is
# F6EC B376 2474 EDA9 D21B 7022 8719 20D1 991B C93C, and give its ubuntu-archive-keyring.gpg).
# Behind a proxy that re-signs HTTPS, PIP_CERT (its CA bundle) is copied into the image for pip.
# Not part of `make test`: it downloads an operating system.
set -euo pipefail
zip="$(realpath "${1:?usage: try_in_chroot.sh AUTOGRADER.zip NOTEBOOK.ipynb [...]}")"; shift
[ $# -gt 0 ] || { echo "name at least one notebook to grade" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run as root (sudo): it makes a chroot" >&2; exit 2; }
WORK="${WORK:-/var/tmp/minigraph-gradescope}"
SUITE="${SUITE:-jammy}"
MIRROR="${MIRROR:-http://archive.ubuntu.com/ubuntu}"
KEYRING="${KEYRING:-/usr/share/keyrings/ubuntu-archive-keyring.gpg}"
# Docker's default capabilities: what a root process in a Gradescope container has at most
DOCKER_CAPS="-all,+chown,+dac_override,+fsetid,+fowner,+mknod,+net_raw,+setgid,+setuid,+setfcap"
DOCKER_CAPS+=",+setpcap,+net_bind_service,+sys_chroot,+kill,+audit_write"
mkdir -p "$WORK/runs"

# in_root ROOT UPPER CAPS CMD...: CMD as root in ROOT (made a mount point: bubblewrap pivots
# its root), with /proc, /dev and /sys, in mount and PID namespaces of this command alone.
# With UPPER, ROOT is the lower layer of an overlay whose changes go to UPPER (ROOT unchanged).
in_root() {
    unshare --mount --propagation private --pid --fork sh -euc '
        root=$1 upper=$2 caps=$3; shift 3
        if [ -n "$upper" ]; then
            mkdir -p "$upper/data" "$upper/work" "$upper/root"
            mount -t overlay overlay -o "lowerdir=$root,upperdir=$upper/data,workdir=$upper/work" "$upper/root"
            root=$upper/root
        else
            mount --bind "$root" "$root"
        fi
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mount -t sysfs -o ro sysfs "$root/sys"
        exec setpriv --inh-caps=-all --bounding-set="$caps" \
            chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            HOME=/root LANG=C.UTF-8 ${PIP_CERT:+PIP_CERT=/etc/pip-ca.crt} "$@"' \
        sh "$@"
}

if [ ! -e "$WORK/base/.complete" ]; then
    echo "== debootstrap $SUITE into $WORK/base"
    rm -rf "$WORK/base"
    debootstrap --variant=minbase --keyring="$KEYRING" "$SUITE" "$WORK/base" "$MIRROR"
    # the archive's sections as in Ubuntu's Docker image (graphviz is in universe)
    for suite in "$SUITE" "$SUITE-updates" "$SUITE-security"; do
        echo "deb $MIRROR $suite main restricted universe multiverse"
    done > "$WORK/base/etc/apt/sources.list"
    touch "$WORK/base/.complete"
fi

echo "== image: $(basename "$zip") unpacked in /autograder/source, then setup.sh"
rm -rf "$WORK/image"
cp -a "$WORK/base" "$WORK/image"
mkdir -p "$WORK/image/autograder/source"
python3 -m zipfile -e "$zip" "$WORK/image/autograder/source"
cp /etc/resolv.conf "$WORK/image/etc/resolv.conf"
if [ -n "${PIP_CERT:-}" ]; then cp "$PIP_CERT" "$WORK/image/etc/pip-ca.crt"; fi
start=$SECONDS
in_root "$WORK/image" "" +all bash -c 'cd /autograder/source && bash ./setup.sh'
echo "setup.sh took $((SECONDS - start)) s"

for notebook in "$@"; do
    for mode in sandbox no-sandbox; do
        name="$mode-$(basename "$notebook" .ipynb)"
        run="$WORK/runs/$name"
        rm -rf "$run" "$run.json" && mkdir -p "$run/data/autograder/submission"
        cp "$notebook" "$run/data/autograder/submission/"
        if [ "$mode" = sandbox ]; then caps=+all; else caps=$DOCKER_CAPS; fi
        echo "== $name"
        start=$SECONDS
        # as Gradescope does: run_autograder is copied to /autograder and run from there
        in_root "$WORK/image" "$run" "$caps" bash -c \
            'cp /autograder/source/run_autograder /autograder/ && cd /autograder && bash ./run_autograder' \
            > "$run/stdout" 2>&1 || true
        echo "graded in $((SECONDS - start)) s"
        if ! cp "$run/data/autograder/results/results.json" "$WORK/runs/$name.json"; then
            tail -n 20 "$run/stdout"
            continue
        fi
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["output"])' "$WORK/runs/$name.json"
    done
done
