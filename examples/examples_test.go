package examples_test

import (
	"os"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// The README's manifests must stay valid: a user copies them first.
func TestExamplesValidate(t *testing.T) {
	for _, file := range []string{"process.json", "application.json", "deployment.json", "depends.json", "daemonset.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := manifest.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if errs := obj.Validate(nil); len(errs) > 0 {
			t.Errorf("%s: %v", file, errs)
		}
	}
}
