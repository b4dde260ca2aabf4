package bcsctl

import "testing"

// The dev token of ./bcs-data goes unasked only to an API on this
// machine: a --server elsewhere gets no token bcsctl was not given.
func TestDevTokenOnlyToThisMachine(t *testing.T) {
	for server, want := range map[string]bool{
		DefaultServer:                 true,
		"localhost:8080":              true,
		"https://[::1]:8443":          true,
		"http://127.0.0.2:8080":       true,
		"http://10.0.0.9:8080":        false,
		"https://bcs.example.com":     false,
		"http://localhost.evil.com:1": false,
		"::bad::":                     false,
	} {
		if got := onThisMachine(server); got != want {
			t.Errorf("onThisMachine(%q) = %v, want %v", server, got, want)
		}
	}
}
