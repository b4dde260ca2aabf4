package bcsctl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	yamlv4 "go.yaml.in/yaml/v4"
	"sigs.k8s.io/yaml"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// manifestDoc is one manifest read from a file: JSON as the API takes
// it, and the object it names.
type manifestDoc struct {
	// source says where it came from: "examples/process.json",
	// "fleet.yaml (document 2)".
	source                string
	data                  []byte
	kind, namespace, name string
}

// readManifests reads the manifests of files: JSON or YAML files (YAML
// may hold several documents separated by ---), every .json, .yaml and
// .yml file of a directory, or stdin for "-".
func readManifests(files []string, stdin io.Reader) ([]manifestDoc, error) {
	var docs []manifestDoc
	for _, f := range files {
		if f == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("reading stdin: %w", err)
			}
			more, err := parseManifests("stdin", data, !isJSON(data))
			if err != nil {
				return nil, err
			}
			docs = append(docs, more...)
			continue
		}
		info, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		paths := []string{f}
		if info.IsDir() {
			entries, err := os.ReadDir(f)
			if err != nil {
				return nil, err
			}
			paths = nil
			for _, e := range entries {
				if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".json" || ext == ".yaml" || ext == ".yml") {
					paths = append(paths, filepath.Join(f, e.Name()))
				}
			}
			if len(paths) == 0 {
				return nil, fmt.Errorf("%s: no .json, .yaml or .yml files", f)
			}
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			ext := filepath.Ext(p)
			more, err := parseManifests(p, data, ext == ".yaml" || ext == ".yml" || ext != ".json" && !isJSON(data))
			if err != nil {
				return nil, err
			}
			docs = append(docs, more...)
		}
	}
	return docs, nil
}

func isJSON(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))
}

// parseManifests reads the manifests of one file.
func parseManifests(source string, data []byte, isYAML bool) ([]manifestDoc, error) {
	if !isYAML {
		doc, err := manifestOf(source, data)
		return []manifestDoc{doc}, err
	}
	var docs []manifestDoc
	parts := yamlDocuments(data)
	for i, part := range parts {
		src := source
		if len(parts) > 1 {
			src = fmt.Sprintf("%s (document %d)", source, i+1)
		}
		data, err := yaml.YAMLToJSONStrict(part.data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src, yamlError(part, err))
		}
		if bytes.Equal(data, []byte("null")) {
			continue // an empty document
		}
		doc, err := manifestOf(src, data)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no manifest in it", source)
	}
	return docs, nil
}

// yamlDocument is one document of a YAML stream and the line of the
// stream it begins at.
type yamlDocument struct {
	data []byte
	line int
}

// yamlDocuments splits a YAML stream at its "---" lines.
func yamlDocuments(data []byte) []yamlDocument {
	var docs []yamlDocument
	cur := yamlDocument{line: 1}
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if t := bytes.TrimRight(line, " \t\r\n"); bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			docs, cur = append(docs, cur), yamlDocument{line: n + 1}
			continue
		}
		cur.data = append(cur.data, line...)
	}
	return append(docs, cur)
}

// yamlError says where a YAML document breaks, by line and column of
// its stream: the parser that converts YAML to JSON says only the line,
// so a second parser, which knows the column, reads the document again.
// Where the two disagree, the converter's error stands.
func yamlError(doc yamlDocument, convertErr error) error {
	var mark yamlv4.Mark
	var message string
	var one *yamlv4.LoadError
	var many *yamlv4.LoadErrors
	var v any
	switch err := yamlv4.Unmarshal(doc.data, &v); {
	case errors.As(err, &one):
		mark, message = one.Mark, one.Message
	case errors.As(err, &many) && len(many.Errors) > 0:
		mark, message = many.Errors[0].Mark, many.Errors[0].Message
	}
	if mark.Line == 0 {
		return convertErr
	}
	return fmt.Errorf("invalid YAML at line %d, column %d: %s", doc.line+mark.Line-1, mark.Column, message)
}

// manifestOf reads what names the object of a JSON manifest; the
// server checks the rest. Broken JSON is refused here, saying where, as
// the server would.
func manifestOf(source string, data []byte) (manifestDoc, error) {
	if err := strictjson.CheckSyntax(data); err != nil {
		return manifestDoc{}, fmt.Errorf("%s: %w", source, err)
	}
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return manifestDoc{}, fmt.Errorf("%s: not a manifest: %w", source, err)
	}
	if head.Kind == "" {
		return manifestDoc{}, fmt.Errorf("%s: kind: required", source)
	}
	return manifestDoc{source: source, data: data, kind: strings.ToLower(head.Kind), namespace: head.Metadata.Namespace, name: head.Metadata.Name}, nil
}

// resourceOfKind returns the resource serving a manifest kind.
func resourceOfKind(kind string) (*resource, error) {
	switch kind {
	case "application", "process":
		return resourceNamed("apps")
	case "deployment":
		return resourceNamed("deployments")
	case "daemonset":
		return resourceNamed("daemonsets")
	case "configmap", "secret", "hooktemplate", "depends", "service", "autoscaler":
		return resourceNamed(kind)
	}
	return nil, fmt.Errorf("kind %q: bcs-scheduler serves application, process, deployment, daemonset, configmap, secret, hooktemplate, depends, service and autoscaler", kind)
}

// inNamespace gives a manifest without a namespace the one of -n, when
// -n was given; a manifest naming another namespace than -n is refused,
// as kubectl does.
func (c *cli) inNamespace(cmd *cobra.Command, doc *manifestDoc) error {
	explicit := cmd.Flags().Changed("namespace")
	switch {
	case doc.namespace == "" && explicit:
		var m map[string]any
		if err := json.Unmarshal(doc.data, &m); err != nil {
			return err
		}
		meta, _ := m["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			m["metadata"] = meta
		}
		meta["namespace"] = c.namespace
		data, err := json.Marshal(m)
		if err != nil {
			return err
		}
		doc.data, doc.namespace = data, c.namespace
	case doc.namespace == "":
		doc.namespace = defaultNamespace
	case explicit && doc.namespace != c.namespace:
		return usageErrorf("%s: its namespace %q is not --namespace %q", doc.source, doc.namespace, c.namespace)
	}
	return nil
}

func (c *cli) applyCommand() *cobra.Command { return c.manifestsCommand(false) }

// createCommand is kubectl's create -f: apply that only creates, and
// is refused for an object that exists.
func (c *cli) createCommand() *cobra.Command { return c.manifestsCommand(true) }

// manifestsCommand is apply, or with createOnly create.
func (c *cli) manifestsCommand(createOnly bool) *cobra.Command {
	var files []string
	var dryRun bool
	var out writeOutput
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR|-",
		Short: "Create or update the objects of manifests (JSON or YAML)",
		Long: "Create the objects the manifests describe, or update those that exist (a new revision, rolled\n" +
			"out by the strategy); an object whose manifest did not change is left alone. FILE is a JSON or\n" +
			"YAML file (YAML may hold several documents), DIR every .json, .yaml and .yml file in it, - stdin.\n" +
			"--dry-run shows the plan of applications and deployments (what would be placed, updated or\n" +
			"killed, and why an instance would stay pending) and changes nothing. Each object is a line\n" +
			"(\"process demo/gamesvr created\"); -o json|yaml prints what the API answered instead.",
		Example: "  bcsctl apply -f examples/process.json\n  bcsctl apply -f manifests/\n  jq '.spec.instance = 5' examples/process.json | bcsctl apply -f -",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return usageErrorf("give the manifests with -f FILE, DIR or -")
			}
			docs, err := readManifests(files, c.env.In)
			if err != nil {
				return err
			}
			failed := false
			for i := range docs {
				if err := c.apply(cmd, &docs[i], dryRun, createOnly, &out); err != nil {
					var usage *usageError
					if errors.As(err, &usage) {
						return err
					}
					fmt.Fprintf(c.env.Err, "error: %s: %v\n", docs[i].source, err)
					failed = true
				}
			}
			if failed {
				return &exitError{exitFailure}
			}
			return nil
		},
	}
	if createOnly {
		cmd.Use = "create -f FILE|DIR|-"
		cmd.Short = "Create the objects of manifests (JSON or YAML); one that exists is an error"
		cmd.Long = "Create the objects the manifests describe, as apply does, but never update one: an object that\n" +
			"exists already is an error (exit code 1), the others are created. -o json|yaml prints what the\n" +
			"API answered instead of a line per object."
		cmd.Example = "  bcsctl create -f examples/deployment.json"
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "a manifest file, a directory of them, or - for stdin (repeatable)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what would be done; change nothing")
	out.add(cmd)
	return cmd
}

// apply creates or (unless createOnly) updates the object of one
// manifest and says which.
func (c *cli) apply(cmd *cobra.Command, doc *manifestDoc, dryRun, createOnly bool, out *writeOutput) error {
	ctx := cmd.Context()
	r, err := resourceOfKind(doc.kind)
	if err != nil {
		return err
	}
	if err := c.inNamespace(cmd, doc); err != nil {
		return err
	}
	workload := r.workload
	action, method, path := "created", http.MethodPost, pathOf(r.path)
	if doc.name != "" && !createOnly {
		var current struct {
			Spec json.RawMessage `json:"spec"`
		}
		raw, err := c.client.get(ctx, pathOf(r.path, doc.namespace, doc.name), nil, &current)
		switch {
		case notFound(err):
		case err != nil:
			return err
		case doc.kind != "secret" && sameManifest(doc.data, current.Spec):
			// Secrets come back without their values: always sent.
			return out.done(c.env.Out, raw, "%s %s/%s unchanged%s", doc.kind, doc.namespace, doc.name, dryRunNote(dryRun))
		default:
			action, method, path = "configured", http.MethodPut, pathOf(r.path, doc.namespace, doc.name)
		}
	}
	switch {
	case dryRun && workload:
		var plan apiv1.Plan
		raw, err := c.client.call(ctx, method, path, url.Values{"dryRun": {"true"}}, doc.data, &plan)
		if err != nil {
			return err
		}
		if err := out.done(c.env.Out, raw, "%s %s/%s %s (dry run)", doc.kind, doc.namespace, doc.name, action); err != nil || out.raw() {
			return err
		}
		return writePlan(c.env.Out, plan, "  ")
	case dryRun && r.name == "autoscalers":
		var plan apiv1.AutoscalerView
		raw, err := c.client.call(ctx, method, path, url.Values{"dryRun": {"true"}}, doc.data, &plan)
		if err != nil {
			return err
		}
		if err := out.done(c.env.Out, raw, "%s %s/%s %s (dry run)", doc.kind, doc.namespace, doc.name, action); err != nil || out.raw() {
			return err
		}
		writeAutoscalerPlan(c.env.Out, plan)
		return nil
	case dryRun:
		return out.done(c.env.Out, doc.data, "%s %s/%s %s (dry run, not checked by the server)", doc.kind, doc.namespace, doc.name, action)
	}
	answer, err := c.client.call(ctx, method, path, nil, doc.data, nil)
	if err != nil {
		return err
	}
	return out.done(c.env.Out, answer, "%s %s/%s %s", doc.kind, doc.namespace, doc.name, action)
}

func dryRunNote(dryRun bool) string {
	if dryRun {
		return " (dry run)"
	}
	return ""
}

// sameManifest reports whether a manifest is the one stored: the server
// stores a manifest as pkg/manifest reads it (defaults filled in), so
// the local one is read the same way before comparing.
func sameManifest(local, stored json.RawMessage) bool {
	obj, err := manifest.Parse(local)
	if err != nil {
		return false // the server will say what is wrong with it
	}
	canonical, err := json.Marshal(obj)
	if err != nil {
		return false
	}
	var a, b any
	if json.Unmarshal(canonical, &a) != nil || json.Unmarshal(stored, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// plan prints what applying doc would do: a workload's plan, or the
// decision an autoscaler would make now.
func (c *cli) plan(ctx context.Context, doc manifestDoc, out outputFlag) error {
	var plan apiv1.Plan
	var decision apiv1.AutoscalerView
	var answer any = &plan
	if doc.kind == "autoscaler" {
		answer = &decision
	}
	raw, err := c.client.call(ctx, http.MethodPost, "/v1/plan", nil, doc.data, answer)
	if err != nil {
		return fmt.Errorf("%s: %w", doc.source, err)
	}
	switch {
	case out.raw():
		return printRaw(c.env.Out, out.format, raw)
	case doc.kind == "autoscaler":
		fmt.Fprintf(c.env.Out, "autoscaler %s/%s\n", decision.Namespace, decision.Name)
		writeAutoscalerPlan(c.env.Out, decision)
		return nil
	}
	fmt.Fprintln(c.env.Out, planHeading(plan))
	return writePlan(c.env.Out, plan, "  ")
}

func (c *cli) planCommand() *cobra.Command {
	var files []string
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "plan -f FILE|DIR|-",
		Short: "Show what applying manifests would do, changing nothing",
		Long: "Show what applying application, process or deployment manifests would do against the\n" +
			"cluster as it is: which instances would be placed where, kept, updated (and how) or killed,\n" +
			"and why an instance would find no agent; for an autoscaler, the decision it would make now.\n" +
			"Nothing is stored or launched.",
		Example: "  bcsctl plan -f examples/deployment.json",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return usageErrorf("give the manifests with -f FILE, DIR or -")
			}
			docs, err := readManifests(files, c.env.In)
			if err != nil {
				return err
			}
			for i := range docs {
				if err := c.inNamespace(cmd, &docs[i]); err != nil {
					return err
				}
				if err := c.plan(cmd.Context(), docs[i], out); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "a manifest file, a directory of them, or - for stdin (repeatable)")
	out.add(cmd, "json", "yaml")
	return cmd
}

// planHeading names a plan's workload and what would happen to it.
func planHeading(p apiv1.Plan) string {
	s := fmt.Sprintf("%s %s/%s: %s", p.Kind, p.Namespace, p.Name, p.Action)
	if p.CurrentVersion > 0 {
		s += fmt.Sprintf(" (current revision %d)", p.CurrentVersion)
	}
	return s
}

// writePlan shows a plan's instances, summary, rollout and warnings.
func writePlan(w io.Writer, p apiv1.Plan, indent string) error {
	if len(p.Instances) > 0 {
		t := tableOf(p.Instances, []column[apiv1.PlanInstance]{
			{header: "INSTANCE", value: func(i apiv1.PlanInstance) string { return strconv.Itoa(i.Index) }},
			{header: "ACTION", value: func(i apiv1.PlanInstance) string {
				if i.Surge {
					return i.Action + " (surge)"
				}
				return i.Action
			}},
			{header: "AGENT", value: func(i apiv1.PlanInstance) string { return i.Hostname }},
			{header: "REVISION", value: func(i apiv1.PlanInstance) string { return strconv.FormatUint(i.Revision, 10) }},
			{header: "UPDATE", value: func(i apiv1.PlanInstance) string { return i.UpdateMode }},
			{header: "WHY", value: func(i apiv1.PlanInstance) string {
				if i.Pending != nil {
					return "pending: " + pendingSummary(i.Pending)
				}
				return i.Message
			}},
		}, false, nil)
		if err := t.write(w, indent); err != nil {
			return err
		}
	}
	s := p.Summary
	var counts []string
	for _, c := range []struct {
		n    int
		what string
	}{{s.Place, "place"}, {s.Keep, "keep"}, {s.Update, "update"}, {s.Recreate, "recreate"}, {s.Kill, "kill"}, {s.Pending, "pending"}} {
		if c.n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	fmt.Fprintf(w, "%sSummary: %s\n", indent, cmp.Or(strings.Join(counts, ", "), "no instance"))
	if ro := p.Rollout; ro != nil {
		fmt.Fprintf(w, "%sRollout: %s: %s\n", indent, ro.Phase, ro.Message)
	}
	for _, warning := range p.Warnings {
		fmt.Fprintf(w, "%sWarning: %s\n", indent, warning)
	}
	return nil
}
