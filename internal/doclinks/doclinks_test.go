package doclinks_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	link    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	fence   = regexp.MustCompile("(?ms)^```.*?^```")
)

// anchor is GitHub's anchor of a heading: lower case, punctuation but
// hyphens dropped, spaces as hyphens.
func anchor(title string) string {
	title = strings.ToLower(strings.TrimSpace(title))
	title = regexp.MustCompile(`[^\p{L}\p{N}\- _]`).ReplaceAllString(title, "")
	return strings.ReplaceAll(title, " ", "-")
}

// anchors are the headings of a page, outside its code blocks.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(data), ""), -1) {
		out[anchor(m[1])] = true
	}
	return out
}

// Every relative link of every page leads to a file of the repository,
// and its anchor to a heading there: the README's reference moved to
// docs/, and a link left behind points nowhere.
func TestLinksLead(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, p := range []string{"README.md", "SECURITY.md", "deploy/mesos/README.md", "proto/README.md"} {
		pages = append(pages, filepath.Join(root, p))
	}
	if len(pages) < 8 {
		t.Fatalf("found only %v", pages)
	}
	links := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(string(data), ""), -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue
			}
			links++
			path, frag, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), path)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: link %q: no such file", page, target)
					continue
				}
			}
			if frag != "" && !anchors(t, file)[frag] {
				t.Errorf("%s: link %q: %s has no heading #%s", page, target, file, frag)
			}
		}
	}
	if links < 20 {
		t.Errorf("only %d relative links checked", links)
	}
}
