#!/usr/bin/env bash
# cloud-init's own datasource code (the OpenStack and ConfigDrive parsers) for the tests of the
# metadata service and config drive (decision 0058). cloud-init is not published on PyPI, so
# its Debian package is unpacked (never installed: no services, no hooks) and put on the venv's
# path with a .pth file. Its Python dependencies come from the `test` extra.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if "$VENV/bin/python" -c 'import cloudinit.sources.helpers.openstack' 2>/dev/null; then
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download cloud-init >/dev/null 2>&1 || { apt-get update -qq && apt-get download cloud-init; })
dest="$(cd "$VENV" && pwd)/cloud-init-deb"
rm -rf "$dest"
mkdir -p "$dest"
dpkg-deb -x "$work"/cloud-init_*.deb "$work/x"
cp -r "$work/x/usr/lib/python3/dist-packages/." "$dest/"
echo "$dest" >"$site/cloud_init_deb.pth"
"$VENV/bin/python" -c 'import cloudinit.sources.helpers.openstack'
echo "cloud-init's Python package unpacked into $dest"
