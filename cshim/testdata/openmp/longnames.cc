// longnames.cc: four parallel constructs in one function whose C++ name,
// demangled, runs to kilobytes (a template over a long list of standard
// library types). Each construct is a region of its own: GCC tells their
// outlined bodies apart only by the end of the name ("[clone ._omp_fn.2]").
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

template <typename... T>
struct Pack {
};

using Str = std::string;
using Row = std::map<Str, std::vector<std::pair<Str, std::set<Str>>>>;
using Big = Pack<Row, std::unordered_map<Str, Row>, std::vector<Row>>;

template <typename Tag>
__attribute__((noinline)) double compute(const Tag &, std::vector<double> &v)
{
	double a = 0, b = 0, c = 0, d = 0;
	const int n = static_cast<int>(v.size());
#pragma omp parallel reduction(+ : a)
	{
#pragma omp for schedule(dynamic, 50)
		for (int i = 0; i < n; i++) {
			a += v[i];
		}
	}
#pragma omp parallel reduction(+ : b)
	{
#pragma omp for schedule(dynamic, 50)
		for (int i = 0; i < n; i++) {
			b += 2 * v[i];
		}
	}
#pragma omp parallel reduction(+ : c)
	{
#pragma omp for schedule(dynamic, 50)
		for (int i = 0; i < n; i++) {
			c += 3 * v[i];
		}
	}
#pragma omp parallel reduction(+ : d)
	{
#pragma omp for schedule(dynamic, 50)
		for (int i = 0; i < n; i++) {
			d += 4 * v[i];
		}
	}
	return a + b + c + d;
}

int main()
{
	std::vector<double> v(1000);
	for (int i = 0; i < 1000; i++) {
		v[i] = i;
	}
	double s = 0;
	for (int r = 0; r < 3; r++) {
		s += compute(Big{}, v);
	}
	std::printf("sum %.0f\n", s); // 3 rounds of 10 * 499500
	return 0;
}
