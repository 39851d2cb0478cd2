package loopback

import "testing"

func TestHost(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.3.2.1": true, "::1": true,
		"0.0.0.0": false, "evil.example": false, "10.0.0.1": false, "": false, "localhost.evil": false,
	} {
		if got := Host(h); got != want {
			t.Errorf("Host(%q) = %v, want %v", h, got, want)
		}
	}
}
