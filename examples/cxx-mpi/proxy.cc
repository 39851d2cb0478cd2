// cxx-mpi: a small C++ MPI code shaped like the proxy applications
// hmbtrace is meant for (LULESH and its kind): a mesh class whose small
// inline accessors are called in the hot loops, STL containers, a halo
// exchange and a global reduction per step. No hmbtrace call in it: build
// it with hmbtrace-instrument (see the Makefile).
//
//   mpirun -np 2 ./cxx-mpi [elements per rank] [steps]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <vector>

// Mesh holds one rank's slab of a 1-D mesh with a ghost node at each end.
class Mesh {
public:
	explicit Mesh(int n) : m_x(n + 2), m_xd(n + 2), m_e(n + 2), m_p(n + 2), m_n(n)
	{
		for (int i = 0; i < n + 2; i++) {
			m_x[i] = i;
			m_xd[i] = std::sin(0.01 * i);
			m_e[i] = 1.0;
		}
	}
	// The accessors a real code calls millions of times: inlined by the
	// compiler, instrumented by -finstrument-functions all the same.
	double &x(int i) { return m_x[i]; }
	double &xd(int i) { return m_xd[i]; }
	double &e(int i) { return m_e[i]; }
	double &p(int i) { return m_p[i]; }
	int size() const { return m_n; }

private:
	std::vector<double> m_x, m_xd, m_e, m_p;
	int m_n;
};

static void calc_pressure(Mesh &m)
{
	for (int i = 1; i <= m.size(); i++)
		m.p(i) = 0.4 * m.e(i) / std::max(1e-9, m.x(i + 1) - m.x(i - 1));
}

static void calc_velocity(Mesh &m, double dt)
{
	for (int i = 1; i <= m.size(); i++)
		m.xd(i) -= dt * (m.p(i + 1) - m.p(i - 1));
}

static void calc_position(Mesh &m, double dt)
{
	for (int i = 1; i <= m.size(); i++)
		m.x(i) += dt * m.xd(i);
}

static void calc_energy(Mesh &m, double dt)
{
	for (int i = 1; i <= m.size(); i++)
		m.e(i) = std::max(0.0, m.e(i) - dt * m.p(i) * (m.xd(i + 1) - m.xd(i - 1)));
}

// exchange_halo sends the boundary pressures to the neighbours in a ring.
static void exchange_halo(Mesh &m, int rank, int np)
{
	int left = (rank + np - 1) % np, right = (rank + 1) % np;
	double out[2] = {m.p(1), m.p(m.size())}, in[2];
	MPI_Sendrecv(&out[1], 1, MPI_DOUBLE, right, 1, &in[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Sendrecv(&out[0], 1, MPI_DOUBLE, left, 2, &in[1], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	m.p(0) = in[0];
	m.p(m.size() + 1) = in[1];
}

static double total_energy(Mesh &m)
{
	double local = 0, global = 0;
	for (int i = 1; i <= m.size(); i++)
		local += m.e(i);
	MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return global;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int n = argc > 1 ? std::atoi(argv[1]) : 20000;
	int steps = argc > 2 ? std::atoi(argv[2]) : 100;
	Mesh m(n);
	std::map<std::string, double> seconds;
	std::vector<double> history;
	const double dt = 1e-4;
	MPI_Barrier(MPI_COMM_WORLD);
	double start = MPI_Wtime();
	for (int s = 0; s < steps; s++) {
		double t0 = MPI_Wtime();
		calc_pressure(m);
		exchange_halo(m, rank, np);
		calc_velocity(m, dt);
		calc_position(m, dt);
		calc_energy(m, dt);
		double t1 = MPI_Wtime();
		seconds["compute"] += t1 - t0;
		if (s % 10 == 0)
			history.push_back(total_energy(m));
		seconds["reduce"] += MPI_Wtime() - t1;
	}
	double loop = MPI_Wtime() - start;
	double e = total_energy(m);
	if (rank == 0) {
		// The time steps alone, without MPI's start and the trace's writing.
		std::printf("cxx-mpi: loop %.6f s\n", loop);
		std::printf("cxx-mpi: ranks=%d elements=%d steps=%d energy=%.6e samples=%zu\n", np, n, steps, e, history.size());
		for (const auto &kv : seconds)
			std::printf("cxx-mpi: %s %.3f s\n", kv.first.c_str(), kv.second);
	}
	MPI_Finalize();
	return 0;
}
