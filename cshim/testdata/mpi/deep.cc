// deep.cc: a C++ MPI code whose communication sits deep in its call tree,
// below six levels of its own regions, with a wide compute tree beside it.
// Run with a small buffer, the compute levels must be shed first and every
// MPI region, message and collective kept. It prints each message it makes
// ("send <to> <tag> <bytes>", "recv <from> <tag> <bytes>") for the test to
// compare with the trace.
#include <mpi.h>
#include <hmbtrace.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// Scope enters a region for the lifetime of a block.
class Scope {
public:
	explicit Scope(uint32_t r) : r_(r) { hmb_enter(r_); }
	~Scope() { hmb_leave(r_); }
	Scope(const Scope &) = delete;
	Scope &operator=(const Scope &) = delete;

private:
	uint32_t r_;
};

struct Regions {
	uint32_t level[8]; // level[d]: the region entered at depth d + 1
	uint32_t kernel[8];
	uint32_t exchange;
};

Regions regions()
{
	Regions r;
	for (int d = 0; d < 8; d++) {
		r.level[d] = hmb_region(("level " + std::to_string(d + 1)).c_str());
		r.kernel[d] = hmb_region(("kernel " + std::to_string(d)).c_str());
	}
	r.exchange = hmb_region("exchange");
	return r;
}

// kernel is a binary compute tree d levels deep: many short calls.
double kernel(const Regions &r, int d, double x)
{
	Scope s(r.kernel[d % 8]);
	if (d == 0) {
		return std::sin(x);
	}
	return kernel(r, d - 1, x * 0.5) + kernel(r, d - 1, x + 1.0);
}

struct Halo {
	int rank, size;
	std::vector<double> out, in;
	long sends = 0;
};

// exchange passes the halo around the ring and sums a residual: a
// Sendrecv, then an Isend/Irecv pair completed by Waitall, then an
// Allreduce.
double exchange(const Regions &r, Halo &h, int iter)
{
	Scope s(r.exchange);
	const int right = (h.rank + 1) % h.size, left = (h.rank + h.size - 1) % h.size;
	const int n = static_cast<int>(h.out.size());
	const int bytes = n * static_cast<int>(sizeof(double));
	MPI_Sendrecv(h.out.data(), n, MPI_DOUBLE, right, iter, h.in.data(), n, MPI_DOUBLE, left, iter,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	std::printf("send %d %d %d\nrecv %d %d %d\n", right, iter, bytes, left, iter, bytes);
	MPI_Request req[2];
	MPI_Irecv(h.in.data(), n / 2, MPI_DOUBLE, right, 100000 + iter, MPI_COMM_WORLD, &req[0]);
	MPI_Isend(h.out.data(), n / 2, MPI_DOUBLE, left, 100000 + iter, MPI_COMM_WORLD, &req[1]);
	MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
	std::printf("send %d %d %d\nrecv %d %d %d\n", left, 100000 + iter, bytes / 2, right, 100000 + iter, bytes / 2);
	double local = h.in[0], global = 0;
	MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return global;
}

// level descends through the code's own layers to depth 6, where each
// step computes and communicates.
double level(const Regions &r, Halo &h, int d, int iter)
{
	Scope s(r.level[d - 1]);
	if (d < 6) {
		return level(r, h, d + 1, iter);
	}
	double x = kernel(r, 7, iter);
	for (double &v : h.out) {
		v = x + h.rank;
	}
	return exchange(r, h, iter);
}

} // namespace

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	Halo h;
	MPI_Comm_rank(MPI_COMM_WORLD, &h.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &h.size);
	h.out.assign(64, 0.0);
	h.in.assign(64, 0.0);
	const int iters = argc > 1 ? std::atoi(argv[1]) : 200;
	const Regions r = regions();
	double sum = 0;
	for (int i = 0; i < iters; i++) {
		sum += level(r, h, 1, i);
	}
	std::fprintf(stderr, "%s", std::isfinite(sum) ? "" : "residual not finite\n");
	MPI_Finalize();
	return 0;
}
