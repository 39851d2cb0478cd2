// Package live serves a running measurement over HTTP, in the manner of
// net/http/pprof: the current call-path profile as a pprof protobuf (so
// `go tool pprof http://HOST/debug/hmb/profile` works), the phase series and
// the buffer's statistics as JSON, and a control request that changes the
// duration filter or closes a calling depth while the program runs (the on-line
// access interface of Knüpfer et al. and Oleynik, chapter 5). Importing it lets
// HMB_LISTEN start the server from the environment; Handler mounts it
// anywhere. The probes never wait for it.
//
// The view can change the measurement, so it answers only requests that
// cannot come from a web page the user happens to visit: a Host header
// naming this machine's loopback interface (a rebound DNS name is refused),
// no foreign Origin, and control requests only as application/json, which a
// browser never sends cross-site without a preflight that this server does
// not grant. Served on another interface, every request must also carry the
// token printed at start.
package live

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/loopback"
	"github.com/hmbtrace/hmbtrace/internal/measureinternal"
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
	measureinternal.Of[*measure.Location, *measure.Measurement]().RegisterLive(func(m *measure.Measurement, addr string) (io.Closer, error) {
		srv, url, err := Listen(m, addr)
		if err == nil {
			fmt.Fprintf(os.Stderr, "hmbtrace: live view at %s\n", url)
		}
		return srv, err
	})
}

// Listen serves Handler(m) under Prefix at addr (see measure.ListenAddress
// for what a bare port means) and returns the server and its URL. On a
// loopback address the URL is the view's; on any other it carries a token
// made for this server (TokenHandler), which every request must present.
func Listen(m *measure.Measurement, addr string) (*http.Server, string, error) {
	a, err := measure.ListenAddress(addr)
	if err != nil {
		return nil, "", err
	}
	host, _, err := net.SplitHostPort(a)
	if err != nil {
		return nil, "", err
	}
	token := ""
	if !loopback.Host(host) {
		if token, err = newToken(); err != nil {
			return nil, "", err
		}
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.Handle(Prefix, http.StripPrefix(strings.TrimSuffix(Prefix, "/"), TokenHandler(m, token)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 16 << 10}
	go srv.Serve(ln)
	u := "http://" + ln.Addr().String() + Prefix
	if token != "" {
		u += "?token=" + token
	}
	return srv, u, nil
}

// newToken returns 128 random bits in hex.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("live view token: %v", err)
	}
	return hex.EncodeToString(b), nil
}

// Handler serves m's live view: / lists the endpoints, /profile (pprof),
// /phases and /stats (JSON), and /control (POST JSON). It answers only
// requests addressed to a loopback host (see the package doc).
func Handler(m *measure.Measurement) http.Handler { return TokenHandler(m, "") }

// TokenHandler is Handler for a server that other hosts reach: a request
// must carry token, as "Authorization: Bearer TOKEN" or a "token" query
// parameter, whatever its Host. An empty token means Handler's rule.
func TokenHandler(m *measure.Measurement, token string) http.Handler {
	h := &handler{m: m}
	mux := http.NewServeMux()
	mux.HandleFunc("/", h.index)
	mux.HandleFunc("/profile", h.get(h.profile))
	mux.HandleFunc("/phases", h.get(h.phases))
	mux.HandleFunc("/stats", h.get(h.stats))
	mux.HandleFunc("/control", h.control)
	return guard{token: token, next: mux}
}

// guard admits the requests the package doc describes.
type guard struct {
	token string
	next  http.Handler
}

func (g guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.token != "" {
		given := r.URL.Query().Get("token")
		if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			given = a
		}
		if subtle.ConstantTimeCompare([]byte(given), []byte(g.token)) != 1 {
			http.Error(w, "forbidden: this live view needs the token it printed at start", http.StatusUnauthorized)
			return
		}
	} else if host := hostOnly(r.Host); !loopback.Host(host) {
		http.Error(w, fmt.Sprintf("forbidden: Host %q is not a loopback name; the live view answers only requests addressed to this machine", r.Host), http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Host != r.Host && !(g.token == "" && loopback.Host(hostOnly(u.Host)))) {
			http.Error(w, fmt.Sprintf("forbidden: cross-origin request from %q", o), http.StatusForbidden)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// hostOnly strips the port from a Host header.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
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
	// A browser sends text/plain, form and multipart bodies cross-site
	// without asking; application/json needs a preflight we never grant.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, fmt.Sprintf("unsupported media type %q: POST application/json", r.Header.Get("Content-Type")), http.StatusUnsupportedMediaType)
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
