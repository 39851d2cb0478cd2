// tasks.cc - C++ tasks for the adapter's tests: firstprivate objects that
// the compiler copies with a copy function (GOMP_task's cpyfn), over-aligned
// ones, and undeferred tasks (if(0)). It calls no omp_* function, so a link
// with --as-needed drops libgomp, which the adapter then loads itself.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

struct Work {
	std::string name;
	std::vector<int> values;
	alignas(128) double scale;
	Work() : name("work"), values(100, 1), scale(2.5) {}
};

int main()
{
	long total = 0;
#pragma omp parallel
#pragma omp single
	{
		for (int i = 0; i < 50; i++) {
			Work w;
			w.values[0] = i;
#pragma omp task firstprivate(w) shared(total)
			{
				long s = 0;
				for (int x : w.values) {
					s += x;
				}
				if (w.name != "work" || w.scale != 2.5 || (reinterpret_cast<std::uintptr_t>(&w.scale) & 127) != 0) {
					std::abort();
				}
#pragma omp atomic
				total += s;
			}
#pragma omp task if (0) firstprivate(w) shared(total)
			{
#pragma omp atomic
				total += w.values[0];
			}
		}
	}
	std::printf("total %ld\n", total);
	return 0;
}
