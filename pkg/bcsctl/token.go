package bcsctl

import (
	"fmt"
	"path/filepath"
	"strings"
)

// tokenSource is where the bearer token bcsctl sends came from, or
// where it looked for one and found none: what a 401 adds to the API's
// answer. It never holds the token.
type tokenSource struct {
	// from is "--token", "$BCS_TOKEN" or the token file's path; ""
	// when no token is sent.
	from string
	// looked are the token files looked for in vain.
	looked []string
	// offMachine: no token file was looked for, the API being on
	// another machine.
	offMachine bool
	// noDir: the working directory could not be read (removed).
	noDir error
}

// findTokenFile looks for DefaultTokenFile in dir and each directory
// above it, as git looks for .git: bcsctl run anywhere in the checkout
// finds the token `make run` wrote at its top. It returns the token, the
// file it came from, and the files it looked at in vain.
func findTokenFile(dir string, readFile func(string) ([]byte, error)) (token, path string, looked []string) {
	dir = filepath.Clean(dir)
	for {
		path := filepath.Join(dir, DefaultTokenFile)
		data, err := readFile(path)
		if token := strings.TrimSpace(string(data)); err == nil && token != "" {
			return token, path, looked
		}
		looked = append(looked, path)
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", looked
		}
		dir = parent
	}
}

// hint says, after a 401, which token bcsctl sent, or where it looked
// for one and how to give one.
func (s tokenSource) hint() string {
	if s.from != "" {
		where := "of " + s.from
		if s.from != "--token" && s.from != "$BCS_TOKEN" {
			where = "in " + s.from
		}
		return "bcsctl sent the token " + where + "; give another with --token TOKEN or $BCS_TOKEN"
	}
	var b strings.Builder
	b.WriteString("bcsctl sent no token: --token and $BCS_TOKEN are not set")
	switch {
	case s.offMachine:
		b.WriteString(", and it sends the token file of `make run` only to an API on this machine")
	case s.noDir != nil:
		fmt.Fprintf(&b, ", and it could not look for %s: %v", DefaultTokenFile, s.noDir)
	default:
		b.WriteString(", and none of these files exists:")
		for _, path := range s.looked {
			b.WriteString("\n  " + path)
		}
	}
	b.WriteString("\ngive one with --token TOKEN, or export BCS_TOKEN=$(cat DATA/admin.token), DATA the data directory of\n" +
		"bcs-scheduler --dev (bcs-data at the top of the checkout, where `make run` runs; its log names the file)")
	return b.String()
}
