#!/bin/sh
# openmp_ab.sh: what two builds of the OpenMP adapter add to clang's
# constructs (libomp, OMPT), beside libomp's own cost with a tool attached
# (the null tool, openmp_nulltool.c), for 2 threads.
#
#   cshim/bench/openmp_ab.sh time BEFORE-LIBDIR [rounds [n]]
#   cshim/bench/openmp_ab.sh callgrind BEFORE-LIBDIR [runs]
#
# BEFORE-LIBDIR holds an older libhmbtrace-omp.so and libhmbtrace.so; the
# current ones are build/lib's (make -C cshim bench-omp-binary first).
#
# time: interleaved rounds (default 10) of openmp_bench (n constructs, the
# best of 5 batches; default 20000) plain, with the null tool, traced with
# BEFORE-LIBDIR's libraries and with build/lib's; at the end, per construct,
# the median and the minimum over the rounds of the added time per event of
# the adapter's (8 per parallel region, 4 per barrier, 6 per task) over the
# C probe's event of the traced run of the same round.
#
# callgrind: openmp_constructs built the same four ways, each run with 1000
# and 3000 constructs under callgrind (passive waits, KMP_BLOCKTIME=0), per
# construct the difference over 2000 in instructions of all threads, split
# into libomp, libc and the loader, the C probes (libhmbtrace's hmb_*
# functions), the adapter (libhmbtrace-omp) and Go (the rest of
# libhmbtrace: its runtime and the trace's writing at exit, which vary
# between runs). libomp's part varies by a few hundred between runs: take
# the median of several (default 3).
set -eu
mode=$1 before=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=$root/build/bench/openmp_bench_clang
lib=$root/build/lib
out=${TMPDIR:-/tmp}/openmp_ab.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
for f in "$bench" "${bench}_plain" "${bench}_null" "$lib/libhmbtrace-omp.so" "$before/libhmbtrace-omp.so" "$before/libhmbtrace.so"; do
	[ -e "$f" ] || { echo "openmp_ab.sh: $f: not found (make -C cshim bench-omp-binary; BEFORE-LIBDIR of an older build)" >&2; exit 1; }
done
export OMP_NUM_THREADS=2 HMB_OUTPUT=$out/trace

case $mode in
time)
	rounds=${3:-10} n=${4:-20000}
	# One line per round: the ns of a parallel region, a barrier and a task, and the C probe's
	# ns per event, of plain, null, before and after.
	ns() { "$@" "$n" | awk '{ print $3, $6, $9, $12 }'; }
	i=0
	while [ "$i" -lt "$rounds" ]; do
		echo "$i $(ns "${bench}_plain") $(ns "${bench}_null") $(ns env LD_LIBRARY_PATH="$before" "$bench") $(ns "$bench")"
		i=$((i + 1))
	done | tee "$out/rounds"
	awk '{
		n = NR
		split("8 4 6", ev, " ")
		for (c = 1; c <= 3; c++) {
			p = $(1 + c)
			d["null", c, n] = ($(5 + c) - p) / ev[c] / $17
			d["before", c, n] = ($(9 + c) - p) / ev[c] / $13
			d["after", c, n] = ($(13 + c) - p) / ev[c] / $17
		}
	}
	function sorted(s, c,    i, j, t) {
		for (i = 1; i <= n; i++) a[i] = d[s, c, i]
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	}
	END {
		split("parallel region,barrier,task", name, ",")
		for (c = 1; c <= 3; c++) {
			line = sprintf("%s, added per event over a C probe event, median (minimum) over %d rounds:", name[c], n)
			split("null before after", subj, " ")
			for (s = 1; s <= 3; s++) {
				sorted(subj[s], c)
				med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
				line = line sprintf(" %s %.2f (%.2f)", subj[s], med, a[1])
			}
			print line
		}
	}' "$out/rounds"
	;;
callgrind)
	runs=${3:-3}
	src=$root/cshim/bench
	cc="clang -O2 -gdwarf-4 -fopenmp" # valgrind 3.19 does not read clang 14's DWARF 5
	$cc -o "$out/plain" "$src/openmp_constructs.c"
	$cc -o "$out/null" "$src/openmp_constructs.c" "$src/openmp_nulltool.c"
	$cc -o "$out/traced" "$src/openmp_constructs.c" -L"$lib" -Wl,-rpath,"$lib" -Wl,--no-as-needed -lhmbtrace-omp -lhmbtrace
	# selfcost FILE: "object-part instructions" per line, self cost (a call's inclusive cost skipped).
	selfcost() {
		awk '
		/^ob=/ { match($0, /^ob=\([0-9]+\)/); id = substr($0, 4, RLENGTH - 3); nm = substr($0, RLENGTH + 2)
			if (nm != "") obn[id] = nm; ob = obn[id]; next }
		/^cob=/ { match($0, /^cob=\([0-9]+\)/); id = substr($0, 5, RLENGTH - 4); nm = substr($0, RLENGTH + 2)
			if (nm != "") obn[id] = nm; next }
		/^fn=/ { match($0, /^fn=\([0-9]+\)/); id = substr($0, 4, RLENGTH - 3); nm = substr($0, RLENGTH + 2)
			if (nm != "") fnn[id] = nm; fn = fnn[id]; next }
		/^cfn=/ { match($0, /^cfn=\([0-9]+\)/); id = substr($0, 5, RLENGTH - 4); nm = substr($0, RLENGTH + 2)
			if (nm != "") fnn[id] = nm; next }
		/^calls=/ { skip = 1; next }
		/^[0-9+*-]/ { if (skip) { skip = 0; next }
			if (ob ~ /libomp/) part = "libomp"
			else if (ob ~ /libc\.so|ld-linux/) part = "libc+ld"
			else if (ob ~ /libhmbtrace-omp/) part = "adapter"
			else if (ob ~ /libhmbtrace\.so/) part = fn ~ /^hmb_/ ? "probes" : "go"
			else part = "program"
			cost[part] += $2 }
		END { for (p in cost) print p, cost[p] }' "$1"
	}
	r=0
	while [ "$r" -lt "$runs" ]; do
		for what in 0 1 2; do
			for s in plain null before after; do
				bin=$out/$s llp=
				case $s in before) bin=$out/traced llp=$before ;; after) bin=$out/traced ;; esac
				for n in 1000 3000; do
					LD_LIBRARY_PATH=$llp GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off OMP_WAIT_POLICY=passive KMP_BLOCKTIME=0 \
						valgrind --tool=callgrind --callgrind-out-file="$out/cg.$n" "$bin" "$what" "$n" >/dev/null 2>"$out/err" ||
						{ cat "$out/err" >&2; exit 1; }
					selfcost "$out/cg.$n" >"$out/self.$n"
				done
				awk -v run="$r" -v what="$what" -v s="$s" 'NR == FNR { a[$1] = $2; next } { b[$1] = $2 }
				END { split("parallel region,barrier,task", name, ",")
					line = sprintf("run %d, %s, %s, instructions per construct:", run, name[what + 1], s)
					split("libomp libc+ld probes adapter go program", parts, " ")
					for (i = 1; i <= 6; i++) { d = (b[parts[i]] - a[parts[i]]) / 2000; total += d; line = line sprintf(" %s %.0f", parts[i], d) }
					print line sprintf(" total %.0f", total) }' "$out/self.1000" "$out/self.3000"
			done
		done
		r=$((r + 1))
	done
	;;
*)
	echo "usage: openmp_ab.sh time|callgrind BEFORE-LIBDIR [rounds [n] | runs]" >&2
	exit 2
	;;
esac
