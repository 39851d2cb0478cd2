// dropped.cc: functions nothing calls, which -ffunction-sections and
// --gc-sections drop. GNU ld leaves their line sequences in the unit,
// starting at address 0, and this one is long enough (some 8 KB of code)
// to reach over the code of a PIE, which starts at 0x1000.
#define R4(x) x x x x
#define R256(x) R4(R4(R4(R4(x))))

double unused_scale(volatile double *p)
{
	R256(p[0] += p[1] * 0.5; p[1] -= p[0];)
	return p[0];
}
