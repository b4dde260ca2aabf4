package examples_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// The README's manifests must stay valid: a user copies them first.
func TestExamplesValidate(t *testing.T) {
	for _, file := range []string{"process.json", "application.json", "deployment.json", "depends.json", "daemonset.json", "autoscaler.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(data); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}

// The autoscaler manifests docs/autoscaling.md shows in full (a json
// block of kind autoscaler) are accepted as the API accepts them: a
// reader copies them too.
func TestAutoscalingPageManifestsValidate(t *testing.T) {
	data, err := os.ReadFile("../docs/autoscaling.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?ms)^```json\n(.*?)^```").FindAllStringSubmatch(string(data), -1)
	checked := 0
	for _, b := range blocks {
		if !strings.Contains(b[1], `"kind": "autoscaler"`) {
			continue
		}
		checked++
		if err := validate([]byte(b[1])); err != nil {
			t.Errorf("docs/autoscaling.md's manifest %d: %v\n%s", checked, err, b[1])
		}
	}
	if checked == 0 {
		t.Fatal("docs/autoscaling.md shows no autoscaler manifest in a json block")
	}
}

// validate parses and validates a manifest as the API does: an
// autoscaler's hook languages (jsonPaths, allocatedCondition) too.
func validate(data []byte) error {
	obj, err := manifest.Parse(data)
	if err != nil {
		return err
	}
	errs := obj.Validate(nil)
	if a, ok := obj.(*manifest.Autoscaler); ok {
		errs = append(errs, autoscale.Check(a)...)
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
