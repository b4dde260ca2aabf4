package admission

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/bcs-mesos/bcs-mesos/pkg/confine"
	"github.com/bcs-mesos/bcs-mesos/pkg/dockerparam"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// AnyUser in Rules.Users admits every user but root, which is admitted
// only when named, and the uids of other namespaces, never admitted.
const AnyUser = identity.AnyUser

// Policy is the admission policy: the rules of each namespace it names,
// Default for the others.
type Policy struct {
	Default    Rules            `json:"default"`
	Namespaces map[string]Rules `json:"namespaces,omitempty"`
}

// Rules say what the workloads of a namespace may do on agents. The zero
// value is the strictest: processes and containers run as the
// namespace's own uid only, containers are not privileged, keep to their
// own network and mount no host path.
type Rules struct {
	// Users a process may name in "user" (and its configmap and secret
	// files as their owner), a container in its "user" docker parameter,
	// and a container image as its user, besides none (the namespace's
	// own uid): names, numeric ids, AnyUser for every one but root, and
	// "root" to admit root (by name or uid 0). A uid of --namespace-uids
	// other than the namespace's own is never admitted.
	Users []string `json:"users,omitempty"`
	// Privileged admits privileged containers and privileged commands.
	Privileged bool `json:"privileged,omitempty"`
	// HostNetwork admits containers on the host's network: networkMode
	// HOST, or the docker network "host" in a "net" parameter.
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// HostPaths are the host directories containers may mount (a volume's
	// hostPath inside one of them); none by default.
	HostPaths []string `json:"hostPaths,omitempty"`
	// Egress are the exceptions to the egress policy of what is fetched on
	// the namespace's behalf (hooks, remote configmap items, packages;
	// default's also notify callbacks): networks, addresses, address:port
	// or name:port (pkg/egress). None by default: loopback, link-local and
	// the cluster's control plane are refused.
	Egress []string `json:"egress,omitempty"`
}

// Default is the policy without a policy file, for every namespace:
// processes and containers run as the namespace's own uid, containers
// are not privileged, keep to their own network and mount no host path.
func Default() Policy { return Policy{} }

// Dev is the policy of bcs-scheduler --dev without a policy file: the
// default one, and containers may use the host's network, as tests on
// one machine do.
func Dev() Policy {
	p := Default()
	p.Default.HostNetwork = true
	return p
}

// LoadFile reads a policy from a JSON or YAML file. Unknown fields are
// refused, naming them.
func LoadFile(path string) (Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Policy{}, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return Policy{}, fmt.Errorf("%s: %v: %w", path, err, errdefs.ErrInvalidArgument)
	}
	var p Policy
	if err := strictjson.Decode(js, &p); err != nil {
		return Policy{}, fmt.Errorf("%s: %w", path, err)
	}
	if errs := p.validate(); len(errs) > 0 {
		return Policy{}, fmt.Errorf("%s: %w", path, errs.ToError())
	}
	return p, nil
}

func (p Policy) validate() field.ErrorList {
	var errs field.ErrorList
	check := func(fp field.Path, r Rules) {
		for i, dir := range r.HostPaths {
			if !strings.HasPrefix(dir, "/") {
				errs = append(errs, field.Invalid(fp.Child("hostPaths").Index(i), "want an absolute path, got %q", dir))
			}
		}
		for i, entry := range r.Egress {
			if err := egress.CheckAllowed(entry); err != nil {
				errs = append(errs, field.Invalid(fp.Child("egress").Index(i), "%q: %v", entry, err))
			}
		}
	}
	check("default", p.Default)
	for _, ns := range sortedKeys(p.Namespaces) {
		check(field.Path("namespaces").Key(ns), p.Namespaces[ns])
	}
	return errs
}

// RulesFor are the rules of namespace.
func (p Policy) RulesFor(namespace string) Rules {
	if r, ok := p.Namespaces[namespace]; ok {
		return r
	}
	return p.Default
}

// Checker checks manifests against a policy and the scheduler's package
// directories.
type Checker struct {
	Policy Policy
	// PackageDirs are the directories file:// packages may come from,
	// the process executors' --package-dirs; none refuses file://.
	PackageDirs []string
	// NamespaceUIDs is --namespace-uids: its uids are the namespaces'
	// own, each refused to every other namespace. Zero: identities off.
	NamespaceUIDs identity.Range
}

// Check returns what obj may not do in its namespace, whose own uid is
// own (0: it has none yet), each problem at its field; nil for kinds that
// run nothing. A nil Checker admits everything.
func (c *Checker) Check(obj manifest.Object, own uint32) field.ErrorList {
	if c == nil {
		return nil
	}
	meta, _ := manifest.MetaOf(obj)
	namespace := meta.Namespace
	if cmd, ok := obj.(*manifest.Command); ok {
		namespace = cmd.Spec.CommandTargetRef.Namespace
	}
	a := c.admitter(namespace, own)
	const spec = field.Path("spec.template.spec")
	switch m := obj.(type) {
	case *manifest.Application:
		a.pod(spec, &m.Spec.Template.Spec)
	case *manifest.Process:
		a.processes(spec.Child("processes"), m.Spec.Template.Spec.Processes)
	case *manifest.Deployment:
		a.template(spec, &m.Spec.Template.Spec)
	case *manifest.Daemonset:
		a.template(spec, &m.Spec.Template.Spec)
	case *manifest.Depends:
		a.template(spec, &m.Spec.Template.Spec)
	case *manifest.Command:
		a.exec("spec", m.Spec.User, m.Spec.Privileged)
	}
	return a.errs
}

// Exec returns what running a command in a running task of namespace,
// whose own uid is own (0: none yet), may not do: run privileged, or as a
// user the namespace's processes may not run as ("": the task's own
// user). user and privileged are the fields under p. Every route that
// runs a command in a task checks it here: a command manifest (Check) and
// a task group's exec. A nil Checker admits everything.
func (c *Checker) Exec(p field.Path, namespace, user string, privileged bool, own uint32) field.ErrorList {
	if c == nil {
		return nil
	}
	a := c.admitter(namespace, own)
	a.exec(p, user, privileged)
	return a.errs
}

func (c *Checker) admitter(namespace string, own uint32) *admitter {
	rules := c.Policy.RulesFor(namespace)
	return &admitter{rules: rules, users: identity.Rule{Users: rules.Users, Own: own, Range: c.NamespaceUIDs},
		namespace: namespace, packageDirs: c.PackageDirs}
}

// admitter collects the refusals of one manifest.
type admitter struct {
	rules       Rules
	users       identity.Rule
	namespace   string
	packageDirs []string
	errs        field.ErrorList
}

func (a *admitter) refuse(p field.Path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	a.errs = append(a.errs, field.Invalid(p, "%s in namespace %q (admission policy)", msg, a.namespace))
}

func (a *admitter) template(p field.Path, s *manifest.DeploymentTemplateSpec) {
	a.processes(p.Child("processes"), s.Processes)
	if len(s.Containers) > 0 {
		a.pod(p, &s.PodSpec)
	}
}

func (a *admitter) processes(p field.Path, procs []manifest.ProcessSpec) {
	for i, proc := range procs {
		pp := p.Index(i)
		a.user(pp.Child("user"), proc.User)
		for j, ref := range proc.ConfigMaps {
			for k, item := range ref.Items {
				a.user(pp.Child("configmaps").Index(j).Child("items").Index(k).Child("user"), item.User)
			}
		}
		for j, ref := range proc.Secrets {
			for k, item := range ref.Items {
				a.user(pp.Child("secrets").Index(j).Child("items").Index(k).Child("user"), item.User)
			}
		}
		for j, uri := range proc.URIs {
			path, ok := strings.CutPrefix(uri.Value, "file://")
			if !ok {
				continue
			}
			if err := confine.Check(path, a.packageDirs...); err != nil {
				a.errs = append(a.errs, field.Invalid(pp.Child("uris").Index(j).Child("value"),
					"file:// packages come from the scheduler's --package-dirs only: %v", err))
			}
		}
	}
}

// user refuses a user at p the namespace may not name: for a process, a
// container or a command in a task ("" is the namespace's own uid, or a
// command's task's own user).
func (a *admitter) user(p field.Path, user string) {
	if err := a.users.Check(user); err != nil {
		a.refuse(p, "%v", err)
	}
}

// exec checks a command run in a running task (docker exec in a
// container): the user rule of processes, and privileged only where the
// namespace's containers may be.
func (a *admitter) exec(p field.Path, user string, privileged bool) {
	a.user(p.Child("user"), user)
	if privileged && !a.rules.Privileged {
		a.refuse(p.Child("privileged"), "privileged commands are not allowed")
	}
}

func (a *admitter) pod(p field.Path, s *manifest.PodSpec) {
	hostNetwork := strings.EqualFold(string(s.NetworkMode), string(manifest.NetworkHost)) && !strings.EqualFold(s.NetworkType, "cni")
	if hostNetwork && !a.rules.HostNetwork {
		a.refuse(p.Child("networkMode"), "the host's network is not allowed")
	}
	for i, c := range s.Containers {
		cp := p.Child("containers").Index(i)
		if c.Privileged && !a.rules.Privileged {
			a.refuse(cp.Child("privileged"), "privileged containers are not allowed")
		}
		for j, prm := range c.Parameters {
			vp := cp.Child("parameters").Index(j).Child("value")
			switch dockerparam.Normalize(prm.Key) {
			case "net":
				if strings.EqualFold(prm.Value, "host") && !a.rules.HostNetwork {
					a.refuse(vp, "the host's network is not allowed")
				}
			case "user":
				a.user(vp, prm.Value)
			}
		}
		for j, v := range c.Volumes {
			host := v.Volume.HostPath
			if host == "" {
				continue
			}
			if err := confine.Check(host, a.rules.HostPaths...); err != nil {
				a.refuse(cp.Child("volumes").Index(j).Child("volume").Child("hostPath"), "host path %q is not allowed (allowed: %s)", host, allowedPaths(a.rules.HostPaths))
			}
		}
	}
}

func allowedPaths(dirs []string) string {
	if len(dirs) == 0 {
		return "none"
	}
	return strings.Join(dirs, ", ")
}

func sortedKeys(m map[string]Rules) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
