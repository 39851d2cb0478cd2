#!/bin/sh
# mpi_ab.sh: what two builds of libhmbtrace-mpi add to an MPI call, in
# interleaved runs (a shared machine's load moves between runs; each round
# times every variant once, so that a change of load hits them alike).
#
#   cshim/bench/mpi_ab.sh A-build B-build [rounds [trips [self-rounds]]]
#
# A-build and B-build are build directories of `make -C cshim cshim
# bench-mpi-binary BUILD=...` (bench/pingpong, bench/selfsend, each with
# its _plain twin); defaults: 12 rounds, 200000 round trips, 10000 sends
# to self (best of 30). Per round it prints the ping-pong's ns per round
# trip (plain, A, B; 2 ranks) and selfsend's ns per send and receive
# (plain, A, B; 1 rank); at the end, the median over the rounds of each,
# and of the added ns per MPI call (traced minus plain of the same round,
# over the calls: 4 per round trip, 2 per send and receive to self).
set -eu
a=$1 b=$2 rounds=${3:-12} trips=${4:-200000} self=${5:-10000}
out=${TMPDIR:-/tmp}/mpi_ab.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
run() { # run np binary args...: the number of its result line
	np=$1
	shift
	HMB_OUTPUT=$out mpirun --allow-run-as-root -x HMB_OUTPUT -np "$np" "$@" | awk '$3 == "ns" { print $2 }'
}
echo "round pp_plain pp_A pp_B self_plain self_A self_B"
i=0
while [ "$i" -lt "$rounds" ]; do
	pp=$(run 2 "$a/bench/pingpong_plain" "$trips")
	ppa=$(run 2 "$a/bench/pingpong" "$trips")
	ppb=$(run 2 "$b/bench/pingpong" "$trips")
	sp=$(run 1 "$a/bench/selfsend_plain" "$self" 30)
	sa=$(run 1 "$a/bench/selfsend" "$self" 30)
	sb=$(run 1 "$b/bench/selfsend" "$self" 30)
	echo "$i $pp $ppa $ppb $sp $sa $sb"
	i=$((i + 1))
done | tee "$out/rounds"
awk 'NR >= 1 {
	for (c = 2; c <= 7; c++) v[c, NR] = $c
	d[1, NR] = ($3 - $2) / 4; d[2, NR] = ($4 - $2) / 4
	d[3, NR] = ($6 - $5) / 2; d[4, NR] = ($7 - $5) / 2
	n = NR
}
function median(arr, col,    i, j, t, a) {
	for (i = 1; i <= n; i++) a[i] = arr[col, i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	printf "median over %d rounds: ping-pong ns/round trip plain %.0f A %.0f B %.0f; to self ns/send+recv plain %.1f A %.1f B %.1f\n",
		n, median(v, 2), median(v, 3), median(v, 4), median(v, 5), median(v, 6), median(v, 7)
	printf "added ns per MPI call (median of per-round differences): ping-pong A %.0f B %.0f; to self A %.1f B %.1f\n",
		median(d, 1), median(d, 2), median(d, 3), median(d, 4)
}' "$out/rounds"
