// sections.cc has a compilation unit whose line sequences are not in
// address order once linked, as GCC at -O2 makes them: main and the static
// constructor go to .text.startup, the unlikely parts of functions to
// .text.unlikely (hot/cold splitting), the header's inline functions and
// templates to COMDAT groups, and the linker places these sections in
// another order than the assembler wrote them.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "scale.h"

#ifdef WITH_DROPPED
// Here, not at the end: GCC gives the static constructor the unit's last line.
#include "dropped.cc"
#endif

static std::map<std::string, int> registry = {{"a", 1}, {"b", 2}};

__attribute__((noinline)) int lookup(const std::string &key)
{
	auto it = registry.find(key);
	if (__builtin_expect(it == registry.end(), 0)) {
		std::fprintf(stderr, "no key %s\n", key.c_str());
		std::abort();
	}
	return it->second;
}

__attribute__((noinline)) double work(int n)
{
	Scaled<double> s{1.5};
	Scaled<long> l{3};
	double sum = checked_sum(ramp(n)) + static_cast<double>(checked_sum(std::vector<long>{l.apply(n), 2}));
	for (int i = 0; i < n; i++) {
		sum += s.apply(i);
	}
	return sum;
}

__attribute__((cold, noinline)) void report(const char *what, double v)
{
	std::printf("%s %g\n", what, v);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 10;
	report("work", work(n) + lookup("a"));
	return 0;
}
