// Package live serves a running measurement over HTTP, in the manner of
// net/http/pprof: the current call-path profile as a pprof protobuf (so
// `go tool pprof http://HOST/debug/hmb/profile` works), the phase series and
// the buffer's statistics as JSON, and a control request that changes the
// duration filter or closes a calling depth while the program runs (the on-line
// access interface of Knüpfer et al. and Oleynik, chapter 5). Importing it lets
// HMB_LISTEN start the server from the environment; Handler mounts it
// anywhere. The probes never wait for it.
package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Prefix is where Listen mounts the handler.
const Prefix = "/debug/hmb/"

// maxRequest bounds a control request's body.
const maxRequest = 4 << 10

// publishWait is how long a request waits for the locations to publish.
const publishWait = 50 * time.Millisecond

func init() {
	measure.RegisterLive(func(m *measure.Measurement, addr string) (io.Closer, error) {
		srv, url, err := Listen(m, addr)
		if err == nil {
			fmt.Fprintf(os.Stderr, "hmbtrace: live view at %s\n", url)
		}
		return srv, err
	})
}

// Listen serves Handler(m) under Prefix at addr (see measure.ListenAddress
// for what a bare port means) and returns the server and its URL.
func Listen(m *measure.Measurement, addr string) (*http.Server, string, error) {
	a, err := measure.ListenAddress(addr)
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.Handle(Prefix, http.StripPrefix(strings.TrimSuffix(Prefix, "/"), Handler(m)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 16 << 10}
	go srv.Serve(ln)
	return srv, "http://" + ln.Addr().String() + Prefix, nil
}

// Handler serves m's live view: / lists the endpoints, /profile (pprof),
// /phases and /stats (JSON), and /control (POST JSON).
func Handler(m *measure.Measurement) http.Handler {
	h := &handler{m: m}
	mux := http.NewServeMux()
	mux.HandleFunc("/", h.index)
	mux.HandleFunc("/profile", h.get(h.profile))
	mux.HandleFunc("/phases", h.get(h.phases))
	mux.HandleFunc("/stats", h.get(h.stats))
	mux.HandleFunc("/control", h.control)
	return mux
}

type handler struct{ m *measure.Measurement }

func (h *handler) index(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" && r.URL.Path != "" {
		http.NotFound(w, r)
		return
	}
	fmt.Fprint(w, `hmbtrace live view
  profile   the call-path profile so far, pprof protobuf: go tool pprof URL/profile
  phases    the dynamic phase profile, JSON
  stats     the buffer's statistics, JSON
  control   POST {"min_duration":"2us"} or {"close_depth":5}
`)
}

// get wraps a read-only endpoint.
func (h *handler) get(f func(w http.ResponseWriter, t *tracefile.Trace)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		f(w, h.m.Live(publishWait))
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// Control is the body of a control request; one field at a time.
type Control struct {
	MinDuration *string `json:"min_duration,omitempty"` // e.g. "2us"; "0" turns the filter off
	CloseDepth  *int    `json:"close_depth,omitempty"`  // close this depth and deeper ones
}

func (h *handler) control(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed: POST a JSON object", http.StatusMethodNotAllowed)
		return
	}
	body := http.MaxBytesReader(w, r.Body, maxRequest)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	var c Control
	if err := dec.Decode(&c); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request larger than %d bytes", maxRequest), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "malformed request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if dec.More() {
		http.Error(w, "malformed request: more than one JSON value", http.StatusBadRequest)
		return
	}
	switch {
	case c.MinDuration != nil && c.CloseDepth != nil, c.MinDuration == nil && c.CloseDepth == nil:
		http.Error(w, "want exactly one of min_duration and close_depth", http.StatusBadRequest)
	case c.MinDuration != nil:
		d, err := time.ParseDuration(*c.MinDuration)
		if *c.MinDuration == "0" {
			d, err = 0, nil
		}
		if err == nil {
			err = h.m.SetMinDuration(d)
		}
		if err != nil {
			http.Error(w, "min_duration: "+err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]string{"min_duration": d.String()})
	default:
		if err := h.m.CloseDepth(*c.CloseDepth); err != nil {
			http.Error(w, "close_depth: "+err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]int{"closed_from_depth": *c.CloseDepth})
	}
}
