package shape_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxFuncLines bounds a production function, counted from its func line
// to its closing brace.
const maxFuncLines = 100

// issueRef finds a comment citing an issue of the tracker: the word
// issue or issues followed by a number ("#" optional), or a number after
// a "#" that starts a word. A "#" inside a word (another project's
// tracker, as golang/go#22315) or before anything but digits is not one.
// The citation is the submatch that matched.
var issueRef = regexp.MustCompile(`(?i)\b(issues?\s+#?\d+)|(?:^|[\s(\[,])(#\d+)\b`)

// citations returns the start and end of each issue citation in text.
func citations(text string) [][2]int {
	var out [][2]int
	for _, m := range issueRef.FindAllStringSubmatchIndex(text, -1) {
		if m[2] >= 0 {
			out = append(out, [2]int{m[2], m[3]})
		} else {
			out = append(out, [2]int{m[4], m[5]})
		}
	}
	return out
}

// file is one parsed .go file of the module, named relative to its root.
type file struct {
	name string
	fset *token.FileSet
	ast  *ast.File
}

// moduleFiles parses every .go file of the module, comments included.
func moduleFiles(t *testing.T) []file {
	t.Helper()
	root := filepath.Join("..", "..")
	var files []file
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, file{name: filepath.ToSlash(rel), fset: fset, ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 300 {
		t.Fatalf("parsed only %d files: is the walk rooted at the module?", len(files))
	}
	return files
}

// No production function is over maxFuncLines lines: a long function is
// several steps that want names of their own (tests are exempt: a table
// of cases reads well long).
func TestFunctionsAreShort(t *testing.T) {
	for _, f := range moduleFiles(t) {
		if strings.HasSuffix(f.name, "_test.go") {
			continue
		}
		for _, decl := range f.ast.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := f.fset.Position(fn.Pos()).Line, f.fset.Position(fn.End()).Line
			if n := end - start + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines long (at most %d): split it into named steps", f.name, start, fn.Name.Name, n, maxFuncLines)
			}
		}
	}
}

// No comment, in production code or tests, cites an issue number: the
// reader of the code has no tracker, so a comment says the why itself. A
// comment group is read whole, as a citation may wrap onto the next line.
func TestCommentsCiteNoIssue(t *testing.T) {
	for _, f := range moduleFiles(t) {
		for _, group := range f.ast.Comments {
			var lines []string // the group's source lines, comment markers dropped
			for _, c := range group.List {
				text := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*"), "*/")
				lines = append(lines, strings.Split(text, "\n")...)
			}
			text := strings.Join(lines, "\n")
			for _, m := range citations(text) {
				line := strings.Count(text[:m[0]], "\n")
				t.Errorf("%s:%d: comment cites %q: say why without the number: %s", f.name, f.fset.Position(group.Pos()).Line+line,
					strings.Join(strings.Fields(text[m[0]:m[1]]), " "), strings.TrimSpace(lines[line]))
			}
		}
	}
}

// What the pattern takes for a citation, and the ordinary words and
// other trackers' references it leaves alone.
func TestIssueRefPattern(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"a deployment of processes (issue 13).", []string{"issue 13"}},
		{"Issue 15: cordon by hostname", []string{"Issue 15"}},
		{"issues 12 and 13 asked for it", []string{"issues 12"}},
		{"the fix of the (issue\n18: pidFile) bug", []string{"issue\n18"}},
		{"see #33 and (#34)", []string{"#33", "#34"}},
		{"issue #7", []string{"issue #7"}},
		{"Issue makes a certificate for cn", nil},
		{`Issue: "AES-GCM with a random nonce"`, nil},
		{"the issue's bound of 30 s", nil},
		{"written while golang/go#22315 holds", nil},
		{"tissue 5, color #fff, #! and a#1", nil},
		{"the 2nd issue, 3 issues", nil},
	} {
		var got []string
		for _, m := range citations(c.text) {
			got = append(got, c.text[m[0]:m[1]])
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("citations(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
