#!/bin/sh
# mpi_ablate.sh: where the time the MPI wrappers add to a blocking call
# goes, by taking their work out step by step, in interleaved runs (each
# round runs every variant once, in an order that rotates, so that a
# change of the machine's load hits them alike).
#
#   cshim/bench/mpi_ablate.sh BUILD [rounds [trips [self-rounds]]]
#
# BUILD is a build directory of `make -C cshim cshim bench-mpi-binary
# BUILD=...`; the script builds libhmbtrace-mpi again from this source tree
# at each level of HMBMPI_ABLATE (cshim/mpi/mpi_internal.h) into
# BUILD/ablate/<variant>, and runs BUILD/bench/pingpong against each with
# LD_LIBRARY_PATH. Defaults: 10 rounds, 200000 round trips, 10000 sends to
# self (best of 30). The variants:
#
#   plain   pingpong_plain, no wrappers
#   off     the whole wrappers, HMB_ENABLE=0: PMPI only, after one test
#   clock   the wrappers read the clock before and after the PMPI call
#   record  ... and record the call's region (hmb_mpi_call), no message
#   full    ... and its message: status, rank, matrix line, message event
#
# Per round it prints the ping-pong's ns per round trip (pingpong.c
# times each one, the mean of the middle half) and selfsend's best ns per send and receive, per
# variant; at the end, per variant, the median over the rounds and the
# added ns per MPI call: the median of the per-round differences to plain
# (4 calls per round trip, 2 per send and receive to self).
set -eu
build=$(cd "$1" && pwd)
rounds=${2:-10} trips=${3:-200000} self=${4:-10000}
src=$(cd "$(dirname "$0")/.." && pwd)
out=${TMPDIR:-/tmp}/mpi_ablate.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
fortran=""
for d in $(mpicc --showme:libdirs 2>/dev/null); do
	if [ -e "$d/libmpi_mpifh.so" ]; then fortran="-DHMBMPI_FORTRAN=1 -L$d -lmpi_mpifh"; fi
done
variants="plain off clock record full"
for v in clock record full; do
	case $v in clock) level=1 ;; record) level=2 ;; full) level=0 ;; esac
	dir=$build/ablate/$v
	mkdir -p "$dir"
	ln -sf "$build/lib/libhmbtrace.so" "$dir/libhmbtrace.so"
	# shellcheck disable=SC2086 # $fortran is a list of flags
	mpicc -O2 -g -shared -fPIC -fvisibility=hidden -Wl,-soname,libhmbtrace-mpi.so -DHMBMPI_ABLATE=$level \
		-I"$src/lib" -I"$src/mpi" -o "$dir/libhmbtrace-mpi.so" \
		"$src/mpi/hmbtrace_mpi.c" "$src/mpi/rma.c" "$src/mpi/wrappers_gen.c" "$src/mpi/fortran_gen.c" \
		-L"$build/lib" -Wl,-rpath,'$ORIGIN' -lhmbtrace $fortran
done
run() { # run variant np program args...: the number of its result line
	v=$1 np=$2 prog=$3
	shift 3
	case $v in
	plain) bin=$build/bench/${prog}_plain lib=$build/lib env=HMB_OUTPUT=$out ;;
	off) bin=$build/bench/$prog lib=$build/lib env=HMB_ENABLE=0 ;;
	*) bin=$build/bench/$prog lib=$build/ablate/$v env=HMB_OUTPUT=$out ;;
	esac
	env "$env" LD_LIBRARY_PATH="$lib" mpirun --allow-run-as-root -x LD_LIBRARY_PATH -x "${env%%=*}" -np "$np" \
		"$bin" "$@" | awk '$3 == "ns" { print $2 }'
}
echo "round variant pingpong_ns selfsend_ns"
i=0
while [ "$i" -lt "$rounds" ]; do
	# Rotate the order: round i starts with variant i mod 5.
	set -- $variants
	k=0
	while [ "$k" -lt $((i % 5)) ]; do
		first=$1
		shift
		set -- "$@" "$first"
		k=$((k + 1))
	done
	for v in "$@"; do
		pp=$(run "$v" 2 pingpong "$trips")
		ss=$(run "$v" 1 selfsend "$self" 30)
		echo "$i $v $pp $ss"
	done
	i=$((i + 1))
done | tee "$out/rounds"
awk -v variants="$variants" '
{ pp[$2, $1] = $3; ss[$2, $1] = $4; if ($1 + 1 > n) n = $1 + 1 }
function median(a,    i, j, t) {
	for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
	nv = split(variants, v, " ")
	printf "medians over %d rounds: variant, ping-pong ns/round trip, added ns/call; to self ns/send+recv, added ns/call\n", n
	for (k = 1; k <= nv; k++) {
		m = 0
		for (r = 0; r < n; r++) { m++; a[m] = pp[v[k], r] }
		p = median(a)
		m = 0
		for (r = 0; r < n; r++) { m++; a[m] = (pp[v[k], r] - pp["plain", r]) / 4 }
		dp = median(a)
		m = 0
		for (r = 0; r < n; r++) { m++; a[m] = ss[v[k], r] }
		s = median(a)
		m = 0
		for (r = 0; r < n; r++) { m++; a[m] = (ss[v[k], r] - ss["plain", r]) / 2 }
		ds = median(a)
		printf "%-7s %8.1f %+7.1f   %7.1f %+7.1f\n", v[k], p, dp, s, ds
	}
}' "$out/rounds"
