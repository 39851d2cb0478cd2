// Inline functions and templates of a header: GCC emits each in a COMDAT
// section group of its own, so they get line sequences of their own.
#include <stdexcept>
#include <string>
#include <vector>

template <typename T>
struct Scaled {
	T factor;
	T apply(T x) const { return x * factor + offset(x); }
	static T offset(T x) { return x > 100 ? x / 7 : x - 5; }
};

inline std::vector<double> ramp(int n)
{
	std::vector<double> v;
	for (int i = 0; i < n; i++) {
		v.push_back(i * 0.5);
	}
	return v;
}

template <typename T>
T checked_sum(const std::vector<T> &v)
{
	T s = 0;
	for (const T &x : v) {
		if (__builtin_expect(x < 0, 0)) {
			throw std::runtime_error("negative value " + std::to_string(x));
		}
		s += x;
	}
	return s;
}
