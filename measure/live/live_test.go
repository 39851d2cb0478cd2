package live

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/hmbtrace/hmbtrace/measure"
)

// running starts a measurement with a goroutine that records until the
// test ends, and returns once the goroutine has done an iteration: its
// location exists.
func running(t *testing.T) (*measure.Measurement, *httptest.Server) {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "live", CallPaths: true, BufferSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	step := m.Phase("step")
	work, inner := m.Region("work"), m.Region("inner")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	first := make(chan struct{})
	go func() {
		defer wg.Done()
		loc := m.Location("worker")
		for n := 0; !stop.Load(); n++ {
			if n == 1 {
				close(first)
			}
			loc.Enter(step)
			loc.Enter(work)
			for i := 0; i < 10; i++ {
				loc.Enter(inner)
				loc.Leave(inner)
			}
			loc.Leave(work)
			loc.Leave(step)
		}
	}()
	<-first
	srv := httptest.NewServer(http.StripPrefix("/debug/hmb", Handler(m)))
	t.Cleanup(func() {
		srv.Close()
		stop.Store(true)
		wg.Wait()
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m, srv
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestProfileEndpoint(t *testing.T) {
	_, srv := running(t)
	code, body := get(t, srv.URL+"/debug/hmb/profile")
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	p, err := profile.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, s := range p.Sample {
		var names []string
		for _, l := range s.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		paths[strings.Join(names, "<")] = true
	}
	if !paths["inner<work<step"] {
		t.Errorf("call paths %v lack inner<work<step", paths)
	}
}

// TestPhasesAndStats checks the phase and stats views. A location shows
// its phase series once it has published one, at the end of an iteration
// after a request asked: a request waits publishWait for that, which a
// goroutine not scheduled meanwhile (under -race, on a busy machine)
// misses. So the test asks until the worker's series is there.
func TestPhasesAndStats(t *testing.T) {
	_, srv := running(t)
	var ph PhasesJSON
	for try := 0; ; try++ {
		code, body := get(t, srv.URL+"/debug/hmb/phases")
		ph = PhasesJSON{}
		if code != 200 || json.Unmarshal(body, &ph) != nil {
			t.Fatalf("phases: %d %s", code, body)
		}
		if len(ph.Locations) > 0 || try == 200 {
			break
		}
	}
	if ph.Region != "step" || len(ph.Locations) != 1 || ph.Locations[0].Name != "worker" || ph.Locations[0].Iterations == 0 {
		t.Fatalf("phases %+v", ph)
	}
	var st StatsJSON
	code, body := get(t, srv.URL+"/debug/hmb/stats")
	if code != 200 || json.Unmarshal(body, &st) != nil || st.Bins == 0 || len(st.Locations) != 1 {
		t.Fatalf("stats: %d %s", code, body)
	}
}

func TestControl(t *testing.T) {
	m, srv := running(t)
	url := srv.URL + "/debug/hmb/control"
	if code, body := post(t, url, `{"min_duration":"2us"}`); code != 200 {
		t.Errorf("min_duration: %d %s", code, body)
	}
	if d := m.LiveMinDuration(); d < 1900 || d > 2100 {
		t.Errorf("duration filter %v after the request, want 2µs", d)
	}
	if code, body := post(t, url, `{"close_depth":3}`); code != 200 {
		t.Errorf("close_depth: %d %s", code, body)
	}
	red := m.Reductions()
	if len(red) == 0 || red[len(red)-1].Depth != 3 {
		t.Errorf("reductions %+v, want depth 3 closed", red)
	}
	for _, c := range []struct {
		body string
		code int
	}{
		{`{"min_duration":"soon"}`, 400},
		{`{"min_duration":"-1s"}`, 400},
		{`{"close_depth":1}`, 400},
		{`{"close_depth":3,"min_duration":"1us"}`, 400},
		{`{}`, 400},
		{`{"reboot":true}`, 400},
		{`not json`, 400},
		{`{"min_duration":"1us"} {"close_depth":4}`, 400},
		{`{"min_duration":"` + strings.Repeat("9", 5000) + `"}`, 413},
	} {
		if code, body := post(t, url, c.body); code != c.code {
			t.Errorf("POST %.40q: %d %s, want %d", c.body, code, body, c.code)
		}
	}
	if code, _ := get(t, url); code != 405 {
		t.Errorf("GET control: %d, want 405", code)
	}
	if code, _ := post(t, srv.URL+"/debug/hmb/profile", "{}"); code != 405 {
		t.Errorf("POST profile: %d, want 405", code)
	}
}

// do sends one request to the test server with the given headers.
func do(t *testing.T, method, url, body string, hdr map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestCrossSite plays a web page the user visits while the program runs: a
// simple cross-site POST (text/plain needs no preflight), a request through
// a rebound DNS name, and one from a foreign origin are all refused, and
// none of them changes the measurement.
func TestCrossSite(t *testing.T) {
	m, srv := running(t)
	url := srv.URL + "/debug/hmb/control"
	jsonType := map[string]string{"Content-Type": "application/json"}
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"text/plain", map[string]string{"Content-Type": "text/plain"}, 415},
		{"form", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"no type", map[string]string{}, 415},
		{"rebound host", map[string]string{"Content-Type": "application/json", "Host": "evil.example:80"}, 403},
		{"foreign origin", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, 403},
		{"null origin", map[string]string{"Content-Type": "application/json", "Origin": "null"}, 403},
	} {
		if code := do(t, "POST", url, `{"close_depth":3}`, c.hdr); code != c.want {
			t.Errorf("%s: status %d, want %d", c.name, code, c.want)
		}
	}
	if code := do(t, "GET", srv.URL+"/debug/hmb/stats", "", map[string]string{"Host": "attacker.example"}); code != 403 {
		t.Errorf("GET stats through a rebound name: %d, want 403", code)
	}
	if red := m.Reductions(); len(red) != 0 {
		t.Fatalf("a refused request closed depths: %+v", red)
	}
	for _, host := range []string{"localhost", "127.0.0.1:1", "[::1]:8080"} {
		hdr := map[string]string{"Host": host, "Content-Type": "application/json; charset=utf-8"}
		if code := do(t, "POST", url, `{"min_duration":"1us"}`, hdr); code != 200 {
			t.Errorf("Host %s: status %d, want 200", host, code)
		}
	}
	if code := do(t, "POST", url, `{"close_depth":3}`, jsonType); code != 200 {
		t.Errorf("a local JSON request: %d, want 200", code)
	}
}

// TestToken checks the handler other hosts reach: only the token admits.
func TestToken(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "token", BufferSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	srv := httptest.NewServer(TokenHandler(m, "s3cret"))
	defer srv.Close()
	remote := map[string]string{"Host": "node17:7070"}
	if code := do(t, "GET", srv.URL+"/stats", "", remote); code != 401 {
		t.Errorf("no token: %d, want 401", code)
	}
	if code := do(t, "GET", srv.URL+"/stats?token=wrong", "", remote); code != 401 {
		t.Errorf("wrong token: %d, want 401", code)
	}
	if code := do(t, "GET", srv.URL+"/stats?token=s3cret", "", remote); code != 200 {
		t.Errorf("token in the query: %d, want 200", code)
	}
	hdr := map[string]string{"Host": "node17:7070", "Authorization": "Bearer s3cret", "Content-Type": "application/json"}
	if code := do(t, "POST", srv.URL+"/control", `{"min_duration":"1us"}`, hdr); code != 200 {
		t.Errorf("token in the header: %d, want 200", code)
	}
}

// TestPublicNeedsOptIn: a view other hosts reach is an error at Start
// unless HMB_LISTEN_PUBLIC allows it; then it asks for its token.
func TestPublicNeedsOptIn(t *testing.T) {
	cfg := measure.Config{Output: t.TempDir(), Name: "public", Listen: "0.0.0.0:0", IgnoreEnv: true}
	if m, err := measure.Start(cfg); err == nil || !strings.Contains(err.Error(), "HMB_LISTEN_PUBLIC=1") {
		if m != nil {
			m.Close()
		}
		t.Fatalf("Start on 0.0.0.0 without the opt-in: %v", err)
	}
	cfg.ListenPublic = true
	m, err := measure.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	srv, url, err := Listen(m, "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.Contains(url, "?token=") {
		t.Errorf("URL of a public view %q has no token", url)
	}
}
