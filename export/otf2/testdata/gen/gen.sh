#!/bin/sh
# Rebuilds the golden archives in ../golden from gen.c with libotf2.
# Needs the Debian packages gcc and libotf2-trace-dev. Run from anywhere:
#   sh export/otf2/testdata/gen/gen.sh     (or: go generate ./export/otf2)
# The large scenarios are stored as deterministic .tar.gz files.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
golden="$here/../golden"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046 # otf2-config prints several flags
gcc -std=gnu11 -O2 -Wall -Wextra -o "$tmp/gen" "$here/gen.c" $(otf2-config --cflags --ldflags --libs)
mkdir -p "$golden"
for s in single locations metrics mpi mpinb intercomm attic threads tasks; do
	rm -rf "${golden:?}/$s"
	"$tmp/gen" "$s" "$golden/$s"
done
for s in multichunk manydefs; do
	"$tmp/gen" "$s" "$tmp/$s"
	tar -C "$tmp/$s" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . | gzip -9n >"$golden/$s.tar.gz"
done
