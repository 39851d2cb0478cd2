// table.cc: a shared library with a static object whose constructor calls
// instrumented code. It does not link libhmbtrace, so the dynamic loader may
// run its constructor before the library's: its probes run before the
// measurement starts, and the trace must place them before it.
#include <cmath>
#include <vector>

__attribute__((noinline)) double table_entry(int i)
{
	double s = 0;
	for (int k = 0; k < 20000; k++)
		s += std::sqrt(double(i + k));
	return s;
}

struct Table {
	std::vector<double> v;
	Table()
	{
		for (int i = 0; i < 2000; i++)
			v.push_back(table_entry(i));
	}
};

static Table table;

double table_sum()
{
	double s = 0;
	for (double x : table.v)
		s += x;
	return s;
}
