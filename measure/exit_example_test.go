package measure_test

import (
	"fmt"
	"os"

	"github.com/hmbtrace/hmbtrace/measure"
)

// A program that would end through os.Exit, or log.Fatal, ends through
// measure.Exit or measure.Fatal instead, which write the trace first: the
// deferred Close would not run. Not run here, as it ends the process.
func ExampleExit() {
	m, err := measure.Start(measure.Config{}) // HMB_* variables win over the literal
	if err != nil {
		measure.Fatal(err) // log.Fatal, once the running measurements' traces are written
	}
	defer m.Close() // for the normal return; os.Exit would skip it
	solve := m.Region("solve")
	loc := m.Location("main")
	loc.Enter(solve)
	if diverged := true; diverged {
		measure.Exit(3) // solve ends here, the trace is written, then os.Exit(3)
	}
	loc.Leave(solve)
}

// The environment wins over the code's Config, as a job script's
// `export HMB_ENABLE=0` turns off a program that starts with a literal;
// IgnoreEnv takes the literal as it is.
func ExampleConfig_environment() {
	dir, _ := os.MkdirTemp("", "hmbtrace-example")
	defer os.RemoveAll(dir)
	old, had := os.LookupEnv("HMB_ENABLE")
	os.Setenv("HMB_ENABLE", "0") // as the job script did
	defer func() {
		if had {
			os.Setenv("HMB_ENABLE", old)
		} else {
			os.Unsetenv("HMB_ENABLE")
		}
	}()

	m, err := measure.Start(measure.Config{Output: dir, BufferSize: 1 << 20})
	if err != nil {
		panic(err)
	}
	fmt.Println("Config{...}:", m.Enabled())
	m.Close()

	m, err = measure.Start(measure.Config{Output: dir, BufferSize: 1 << 20, IgnoreEnv: true})
	if err != nil {
		panic(err)
	}
	fmt.Println("Config{..., IgnoreEnv: true}:", m.Enabled())
	m.Close()
	// Output:
	// Config{...}: false
	// Config{..., IgnoreEnv: true}: true
}
