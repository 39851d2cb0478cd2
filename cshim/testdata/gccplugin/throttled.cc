// throttled: a C++ program of LULESH's shape for hmbtrace's GCC plugin. A
// Domain holds its fields in std::vector and hands them out through small
// accessors, which a big kernel calls in its loops; here they are kept out
// of line (noipa: nor merged), as LULESH's are in kernels GCC declines to inline
// into, so each is a region, throttled after its first calls. A small
// function that throws now and then is left by exceptions while throttled.
// It prints each function's calls ("calls NAME N"), then the result, which
// is the same with and without tracing.
//
//   throttled [ELEMENTS [STEPS]]
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#define OUT __attribute__((noipa))

typedef double Real_t;
typedef int Index_t;

// The calls each function made, counted outside it (the counts are not
// what is measured).
static unsigned long n_x, n_fx, n_xd, n_nodelist, n_check, n_throws;

class Domain {
public:
	explicit Domain(Index_t n) : m_x(n), m_fx(n), m_xd(n), m_nodelist(8 * n) {}
	OUT Real_t &x(Index_t i) { return m_x[i]; }
	OUT Real_t &fx(Index_t i) { return m_fx[i]; }
	OUT Real_t &xd(Index_t i) { return m_xd[i]; }
	OUT Index_t *nodelist(Index_t i) { return &m_nodelist[8 * i]; }
	Index_t numElem() const { return static_cast<Index_t>(m_x.size()); }

private:
	std::vector<Real_t> m_x, m_fx, m_xd;
	std::vector<Index_t> m_nodelist;
};

// check throws for every 1000th element: a throttled function left by an
// exception.
OUT void check(Index_t i)
{
	if (i % 1000 == 999)
		throw std::range_error("element");
}

OUT Real_t kernel(Domain &d)
{
	Real_t s = 0;
	Index_t n = d.numElem();
	for (Index_t i = 0; i < n; i++) {
		const Index_t *nl = d.nodelist(i);
		n_nodelist++;
		Real_t f = 0;
		for (int k = 0; k < 8; k++) {
			f += d.x(nl[k]);
			n_x++;
		}
		d.fx(i) = f / 8;
		d.xd(i) += d.fx(i);
		n_fx += 2;
		n_xd++;
		s += d.xd(i);
		n_xd++;
		try {
			n_check++;
			check(i);
		} catch (const std::range_error &) {
			n_throws++;
		}
	}
	return s;
}

int main(int argc, char **argv)
{
	Index_t n = argc > 1 ? atoi(argv[1]) : 10000;
	int steps = argc > 2 ? atoi(argv[2]) : 10;
	Domain d(n);
	for (Index_t i = 0; i < n; i++) {
		Index_t *nl = d.nodelist(i);
		n_nodelist++;
		for (int k = 0; k < 8; k++)
			nl[k] = (i + k) % n;
		d.x(i) = i % 7;
		n_x++;
	}
	Real_t s = 0;
	for (int t = 0; t < steps; t++)
		s += kernel(d);
	printf("calls Domain::x(int) %lu\n", n_x);
	printf("calls Domain::fx(int) %lu\n", n_fx);
	printf("calls Domain::xd(int) %lu\n", n_xd);
	printf("calls Domain::nodelist(int) %lu\n", n_nodelist);
	printf("calls check(int) %lu\n", n_check);
	printf("throws %lu\n", n_throws);
	printf("result %.6g\n", s);
	return 0;
}
