package manifest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// FuzzManifest parses, validates and expands arbitrary input, seeded with
// the reference files: nothing may panic, and every validation error names
// a field.
func FuzzManifest(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"kind": "process", "spec": {"template": {"spec": {"processes": [{"workPath": "${pidFile}", "pidFile": "${workPath}"}]}}}}`))
	f.Add([]byte(`{"kind": "application", "spec": {"template": {"spec": {"containers": [{"env": [{"name": "a", "value": "${bcs.ports.x"}]}]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := manifest.Parse(data)
		if err != nil {
			return
		}
		for _, e := range obj.Validate(manifesttest.NewResolver()) {
			if e.Path == "" {
				t.Fatalf("validation error without a path: %q", e.Message)
			}
		}
		inst := manifest.Instance{Namespace: "ns", Name: "n", Ports: map[string]uint32{"http_port": 1}, WorkBaseDir: "/w", RunBaseDir: "/r"}
		switch o := obj.(type) {
		case *manifest.Process:
			for _, p := range o.Spec.Template.Spec.Processes {
				_, _ = manifest.ExpandProcess(p, inst)
			}
		case *manifest.Application:
			for _, c := range o.Spec.Template.Spec.Containers {
				_, _ = manifest.ExpandContainer(c, inst)
			}
		}
	})
}
