package main

// writeBack does nothing: Windows has no call that writes back every file
// system, and the section that uses it (a C++ code built through
// hmbtrace-instrument) needs Linux anyway.
func writeBack() {}
