// afterinline: what hmbtrace's GCC plugin must get right. Small inline
// accessors in a hot loop (inlined: no region), and out-of-line functions
// (noinline: regions) left by early returns, exceptions (caught here,
// passed through, through a destructor), recursion, tail calls and a
// noreturn function. The output is the same with and without tracing.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#define OUT __attribute__((noinline))

// A store the compiler must keep: no call below is folded away.
volatile int sink;

class Field {
public:
	explicit Field(int n) : v(n) {}
	double &at(int i) { return v[i]; }
	int size() const { return static_cast<int>(v.size()); }

private:
	std::vector<double> v;
};

OUT double smooth(Field &f)
{
	double s = 0;
	for (int i = 1; i < f.size() - 1; i++) {
		f.at(i) = 0.5 * (f.at(i - 1) + f.at(i + 1));
		s += f.at(i);
	}
	return s;
}

OUT int classify(int x)
{
	sink = x;
	if (x < 0)
		return -1;
	if (x == 0)
		return 0;
	return 1;
}

OUT void check(int x)
{
	sink = x;
	if (x % 3 == 0)
		throw std::runtime_error("multiple of 3");
}

OUT int guarded(int x)
{
	try {
		check(x);
		return 0;
	} catch (const std::runtime_error &) {
		return 1;
	}
}

OUT int unguarded(int x)
{
	check(x);
	sink = x;
	return x;
}

struct Guard {
	~Guard() { sink = 0; }
};

OUT int cleanup(int x)
{
	Guard g;
	check(x);
	return x;
}

OUT long fib(int n)
{
	sink = n;
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

OUT int count_down(int n, int acc)
{
	sink = n;
	if (n == 0)
		return acc;
	return count_down(n - 1, acc + 1);
}

[[noreturn]] OUT void fail(int code)
{
	sink = code;
	throw code;
}

OUT int calls_fail(int x)
{
	if (x > 0)
		fail(x);
	return 0;
}

__attribute__((noinline, no_instrument_function)) int hidden(int x)
{
	sink = x;
	return 2 * x;
}

int main(int argc, char **argv)
{
	// From the command line, so that no call is specialised on constants.
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	int steps = argc > 2 ? atoi(argv[2]) : 10;
	int depth = argc > 3 ? atoi(argv[3]) : 10;
	Field f(n);
	for (int i = 0; i < n; i++)
		f.at(i) = i % 7;
	double s = 0;
	for (int k = 0; k < steps; k++)
		s += smooth(f);
	int c = 0;
	for (int x = -2; x <= 2; x++)
		c += classify(x);
	int g = 0, u = 0, cl = 0;
	for (int x = 1; x <= 6; x++) {
		g += guarded(x);
		try {
			u += unguarded(x);
		} catch (const std::exception &) {
			u += 100;
		}
		try {
			cl += cleanup(x);
		} catch (...) {
			cl += 100;
		}
	}
	long fb = fib(depth);
	int cd = count_down(2 * depth, 0);
	int nr = 0;
	for (int x = 0; x < 3; x++) {
		try {
			nr += calls_fail(x);
		} catch (int v) {
			nr += v;
		}
	}
	printf("afterinline: s=%.6f c=%d g=%d u=%d cl=%d fib=%ld cd=%d nr=%d h=%d\n", s, c, g, u, cl, fb, cd, nr, hidden(depth));
	return 0;
}
