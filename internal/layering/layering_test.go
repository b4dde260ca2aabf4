package layering_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/bcs-mesos/bcs-mesos/"

// rule is what one package may import, as its doc.go says.
type rule struct {
	// only lists the bcs-mesos packages it may import (module-relative);
	// nil allows any.
	only []string
	// forbid are import path prefixes it must not use.
	forbid []string
}

var (
	mesosClient = []string{"github.com/mesos/mesos-go/api/v1/lib/httpcli", "github.com/mesos/mesos-go/api/v1/lib/scheduler"}
	mesosAll    = []string{"github.com/mesos/mesos-go"}
	httpAll     = []string{"net/http"}
	storage     = []string{"go.etcd.io", module + "pkg/store"}
	docker      = []string{"github.com/fsouza/go-dockerclient"}
	none        = []string{}
)

func join(lists ...[]string) []string { return slices.Concat(lists...) }

// rules mirrors the "must not import" sentence of each doc.go.
var rules = map[string]rule{
	"pkg/admission":               {only: []string{"pkg/manifest", "pkg/field", "pkg/confine", "pkg/dockerparam", "pkg/identity", "pkg/strictjson", "pkg/errdefs", "pkg/egress"}, forbid: join(mesosAll, httpAll, storage)},
	"pkg/api":                     {forbid: mesosAll},
	"pkg/apiv1":                   {only: []string{"pkg/manifest", "pkg/rollout", "proto"}, forbid: join(mesosAll, httpAll, storage)},
	"pkg/autoscale":               {only: []string{"pkg/manifest", "pkg/field", "pkg/hook"}, forbid: join(mesosAll, httpAll, storage)},
	"pkg/autoscaler":              {forbid: join(mesosAll, []string{module + "pkg/scheduler", module + "pkg/api"})},
	"pkg/auth":                    {only: []string{"pkg/manifest", "pkg/errdefs", "pkg/reloadfile"}, forbid: join(mesosAll, storage)},
	"pkg/bcsctl":                  {only: []string{"pkg/apiv1", "pkg/manifest", "pkg/constraint", "pkg/strictjson"}, forbid: join(mesosAll, storage)},
	"pkg/changefeed":              {only: []string{"pkg/store", "pkg/errdefs"}, forbid: join(mesosAll, httpAll)},
	"pkg/readview":                {only: []string{"pkg/store", "pkg/changefeed", "pkg/errdefs"}, forbid: join(mesosAll, httpAll)},
	"pkg/confine":                 {only: none},
	"pkg/console":                 {only: []string{"pkg/auth"}, forbid: join(mesosAll, storage)},
	"pkg/constraint":              {only: []string{"pkg/field", "pkg/errdefs"}, forbid: join(mesosAll, httpAll, storage)},
	"pkg/devcluster":              {only: []string{"pkg/errdefs"}},
	"pkg/dockerparam":             {only: none, forbid: join(mesosAll, docker, httpAll)},
	"pkg/egress":                  {only: []string{"proto", "pkg/errdefs"}, forbid: join(mesosAll, storage)},
	"pkg/errdefs":                 {only: none},
	"pkg/executor":                {only: []string{"proto", "pkg/errdefs", "pkg/mesoswire", "pkg/taskstate", "pkg/tlsfiles"}},
	"pkg/field":                   {only: []string{"pkg/errdefs"}},
	"pkg/healthcheck":             {only: []string{"proto", "pkg/errdefs"}, forbid: join(mesosAll, docker)},
	"pkg/identity":                {only: none},
	"pkg/launch":                  {forbid: join(mesosAll, httpAll, storage)},
	"pkg/manifest":                {only: []string{"pkg/field", "pkg/errdefs", "pkg/constraint", "pkg/strictjson", "pkg/dockerparam", "pkg/confine"}, forbid: join(mesosAll, httpAll, storage)},
	"pkg/manifest/manifesttest":   {only: []string{"pkg/manifest", "pkg/constraint"}},
	"pkg/mesosconn":               {only: []string{"pkg/errdefs"}, forbid: mesosAll},
	"pkg/mesosfiles":              {only: []string{"pkg/errdefs"}, forbid: mesosAll},
	"pkg/mesosoperator":           {only: []string{"pkg/mesoswire", "pkg/errdefs", "pkg/offer", "pkg/constraint"}},
	"pkg/mesoswire":               {only: none},
	"pkg/mesoswire/mesoswiretest": {only: []string{"pkg/mesoswire"}},
	"pkg/numa":                    {only: []string{"pkg/errdefs"}, forbid: join(mesosAll, docker)},
	"pkg/offer":                   {only: []string{"pkg/constraint", "pkg/errdefs"}, forbid: join(mesosAll, httpAll, storage)},
	"pkg/pod":                     {only: []string{"proto", "pkg/errdefs", "pkg/taskstate", "pkg/dockerparam", "pkg/identity", "pkg/remotefile"}, forbid: mesosAll},
	"pkg/podruntime":              {only: []string{"proto", "pkg/errdefs", "pkg/executor", "pkg/healthcheck", "pkg/pod", "pkg/remotefile", "pkg/egress", "pkg/taskstate"}},
	"pkg/process":                 {only: []string{"proto", "pkg/errdefs", "pkg/executor", "pkg/healthcheck", "pkg/remotefile", "pkg/taskstate", "pkg/confine", "pkg/egress", "pkg/identity"}, forbid: mesosClient},
	"pkg/registry":                {forbid: join(mesosAll, httpAll)},
	"pkg/reloadfile":              {only: none},
	"pkg/remotefile":              {only: []string{"proto", "pkg/errdefs", "pkg/egress"}, forbid: mesosAll},
	"pkg/rollout":                 {only: []string{"pkg/manifest"}, forbid: join(mesosAll, httpAll, storage)},
	"pkg/hook":                    {only: []string{"pkg/manifest", "pkg/field", "pkg/errdefs"}, forbid: join(mesosAll, httpAll, storage)},
	"pkg/hookrun":                 {forbid: join(mesosAll, []string{module + "pkg/scheduler", module + "pkg/api"})},
	"pkg/plan":                    {forbid: join(mesosAll, httpAll, []string{module + "pkg/scheduler", module + "pkg/api"})},
	"pkg/notify":                  {forbid: join(mesosAll, []string{module + "pkg/scheduler", module + "pkg/api"})},
	"pkg/scheduler":               {forbid: join(httpAll, []string{module + "pkg/api"})},
	"pkg/scheduler/schedulertest": {forbid: join(httpAll, storage, mesosClient[:1])},
	"pkg/store":                   {only: []string{"pkg/errdefs"}, forbid: join(mesosAll, httpAll)},
	"pkg/store/storetest":         {only: []string{"pkg/errdefs", "pkg/store"}, forbid: join(mesosAll, httpAll)},
	"pkg/simexec":                 {only: []string{"pkg/devcluster", "proto"}},
	"pkg/strictjson":              {only: []string{"pkg/field", "pkg/errdefs"}, forbid: join(mesosAll, httpAll, storage)},
	"proto":                       {only: none},
	"pkg/taskstate":               {only: []string{"pkg/errdefs"}, forbid: join(mesosAll, docker, httpAll)},
	"pkg/tlsfiles":                {only: []string{"pkg/errdefs"}},
	"pkg/vaultsecrets":            {only: []string{"pkg/registry", "pkg/manifest", "pkg/errdefs", "pkg/reloadfile"}, forbid: join(mesosAll, storage)},
	"pkg/vaulttest":               {only: none},
	"internal/testlog":            {only: none},
	"internal/browsertest":        {only: none},
	"internal/testpki":            {only: none},
}

// testSupport are packages for tests only; devcluster serves tests and
// bcs-scheduler --dev.
var testSupport = map[string][]string{
	"pkg/constraint/constrainttest":        nil,
	"pkg/devcluster/devclustertest":        nil,
	"pkg/devcluster/internal/testexecutor": nil,
	"pkg/executor/runtimetest":             nil,
	"pkg/manifest/manifesttest":            nil,
	"pkg/offer/offertest":                  {"pkg/constraint/constrainttest"},
	"pkg/pod/podtest":                      nil,
	"pkg/mesoswire/mesoswiretest":          nil,
	"pkg/scheduler/schedulertest":          nil,
	"internal/testlog":                     nil,
	"internal/browsertest":                 nil,
	"internal/testpki":                     nil,
	"pkg/store/storetest":                  nil,
	"pkg/vaulttest":                        nil,
	"pkg/devcluster":                       {"pkg/schedulerd", "cmd/bcs-scheduler", "cmd/devcluster", "pkg/simexec"},
}

type pkgInfo struct {
	ImportPath string
	Dir        string
	Name       string
	Imports    []string
}

func packages(t *testing.T) []pkgInfo {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkgInfo
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// Every import rule a doc.go states holds, every package has a doc.go,
// and test support stays out of production code: the layers stay what
// the doc.go files say they are.
func TestImportRulesHold(t *testing.T) {
	pkgs := packages(t)
	seen := map[string]bool{}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module)
		seen[rel] = true
		doc, err := os.ReadFile(filepath.Join(p.Dir, "doc.go"))
		if err != nil {
			t.Errorf("%s has no doc.go", rel)
			continue
		}
		r, ok := rules[rel]
		if ok && !strings.Contains(strings.ToLower(string(doc)), "must not import") {
			t.Errorf("%s: the test has an import rule its doc.go does not state", rel)
		}
		if !ok && strings.Contains(string(doc), "must not import") && p.Name != "main" {
			t.Errorf("%s: its doc.go states an import rule this test does not check; add it to rules", rel)
		}
		for _, imp := range p.Imports {
			if ok {
				if dep, isOurs := strings.CutPrefix(imp, module); isOurs && r.only != nil && !slices.Contains(r.only, dep) {
					t.Errorf("%s imports %s; its doc.go allows only %v", rel, dep, r.only)
				}
				for _, f := range r.forbid {
					if imp == f || strings.HasPrefix(imp, strings.TrimSuffix(f, "/")+"/") {
						t.Errorf("%s imports %s, which its doc.go forbids", rel, imp)
					}
				}
			}
			if dep, isOurs := strings.CutPrefix(imp, module); isOurs {
				if allowed, support := testSupport[dep]; support && !strings.HasSuffix(rel, "test") && !slices.Contains(allowed, rel) &&
					!strings.HasPrefix(rel, dep+"/") && !strings.HasPrefix(rel, "e2e") {
					t.Errorf("%s imports %s, which is for tests only", rel, dep)
				}
			}
		}
	}
	for rel := range rules {
		if !seen[rel] {
			t.Errorf("rules name %s, which is no package", rel)
		}
	}
}
