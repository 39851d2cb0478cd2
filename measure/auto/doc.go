// Package auto is what code instrumented by hmbtrace-go calls: the probes
// it adds to every function, and the exits it redirects. It owns the
// measurement of a program that does not start one itself: Enter starts it
// from the environment (measure.ConfigFromEnv, so every HMB_* variable
// applies) at the program's first probe, and Close, which the rewrite
// defers first thing in main.main, writes the trace when main returns.
//
// A rewritten function begins with
//
//	defer auto.Enter(site).End()
//
// site being a package-level *measure.Site named after the function. The
// lane is the calling goroutine's, as for measure.StartRegion, so nothing
// is passed around.
//
// A program ends without returning from main through os.Exit and
// log.Fatal, log.Fatalf and log.Fatalln; in rewritten packages the rewrite
// replaces these by Exit, Fatal, Fatalf and Fatalln, which write the trace
// first. Not redirected: *log.Logger's Fatal methods, syscall.Exit,
// os.Exit reached through a dot import, and exits in packages that are not
// rewritten (a dependency's os.Exit, flag.Parse's on a bad flag). A panic
// that ends the program in the main goroutine runs main's deferred Close;
// one in another goroutine does not, and the trace is lost unless
// HMB_SURVIVE keeps the buffer in a file mapping, as for any program.
package auto
