package manifest

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// Kind names a manifest kind. Manifests may spell it in any case ("Command").
type Kind string

// The kinds Parse understands.
const (
	KindApplication Kind = "application"
	KindDeployment  Kind = "deployment"
	KindProcess     Kind = "process"
	KindConfigMap   Kind = "configmap"
	KindSecret      Kind = "secret"
	KindService     Kind = "service"
	KindCommand     Kind = "command"
	// KindHookTemplate is seed 003's HookTemplate.
	KindHookTemplate Kind = "hooktemplate"
	// KindDepends is seed 002's Dependency: a pod template deployed next
	// to the instances of the applications that name it.
	KindDepends Kind = "depends"
	// KindDaemonset is the original's daemonset: one instance on every
	// agent its constraint admits.
	KindDaemonset Kind = "daemonset"
	// KindAutoscaler sizes a workload from its metrics (HPA v2).
	KindAutoscaler Kind = "autoscaler"
)

// DefaultNamespace is the namespace of a manifest that names none (seed 000).
const DefaultNamespace = "defaultGroup"

// Object is one parsed manifest: *Application, *Deployment, *Daemonset,
// *Process, *ConfigMap, *Secret, *Service, *Command, *HookTemplate,
// *Depends or *Autoscaler.
type Object interface {
	// Kind is the canonical kind, whatever case the manifest used.
	Kind() Kind
	// Validate reports every problem of the manifest. References to
	// configmaps and secrets are checked against r; a nil r skips them.
	Validate(r Resolver) field.ErrorList
}

var (
	_ Object = (*Application)(nil)
	_ Object = (*Deployment)(nil)
	_ Object = (*Daemonset)(nil)
	_ Object = (*Process)(nil)
	_ Object = (*ConfigMap)(nil)
	_ Object = (*Secret)(nil)
	_ Object = (*Service)(nil)
	_ Object = (*Command)(nil)
	_ Object = (*HookTemplate)(nil)
	_ Object = (*Depends)(nil)
	_ Object = (*Autoscaler)(nil)
)

// Resolver looks up the configmaps and secrets a manifest references, in
// the manifest's namespace.
type Resolver interface {
	ConfigMap(namespace, name string) (*ConfigMap, bool)
	Secret(namespace, name string) (*Secret, bool)
}

// Parse decodes one manifest of any kind, dispatching on its "kind", and
// applies the defaults. The error is a field.ErrorList (class
// errdefs.ErrInvalidArgument) holding every decoding problem. When the JSON
// is well formed and the kind known, the partly decoded object comes back
// with the error, so a caller can report validation problems too.
func Parse(data []byte) (Object, error) {
	var head map[string]json.RawMessage
	if err := strictjson.Decode(data, &head); err != nil {
		return nil, err
	}
	raw, ok := head["kind"]
	if !ok {
		return nil, field.ErrorList{field.Required("kind")}
	}
	var kind string
	if err := json.Unmarshal(raw, &kind); err != nil {
		return nil, field.ErrorList{field.Invalid("kind", "want a string")}
	}
	var obj interface {
		Object
		normalize()
	}
	switch Kind(strings.ToLower(kind)) {
	case KindApplication:
		obj = &Application{}
	case KindDeployment:
		obj = &Deployment{}
	case KindDaemonset:
		obj = &Daemonset{}
	case KindProcess:
		obj = &Process{}
	case KindConfigMap:
		obj = &ConfigMap{}
	case KindSecret:
		obj = &Secret{}
	case KindService:
		obj = &Service{}
	case KindCommand:
		obj = &Command{}
	case KindHookTemplate:
		obj = &HookTemplate{}
	case KindDepends:
		obj = &Depends{}
	case KindAutoscaler:
		obj = &Autoscaler{}
	default:
		return nil, field.ErrorList{field.Invalid("kind", "unknown kind %q (want one of %s)", kind, kindList())}
	}
	err := strictjson.Decode(data, obj)
	obj.normalize()
	return obj, err
}

func kindList() string {
	kinds := []string{string(KindApplication), string(KindDeployment), string(KindDaemonset), string(KindProcess),
		string(KindConfigMap), string(KindSecret), string(KindService), string(KindCommand), string(KindHookTemplate), string(KindDepends),
		string(KindAutoscaler)}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}

// ObjectMeta is a manifest's "metadata".
type ObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Default sets the seed 000 default namespace.
func (m *ObjectMeta) Default() { m.Namespace = DefaultNamespace }

func (m *ObjectMeta) normalize() {
	if m.Namespace == "" {
		m.Namespace = DefaultNamespace
	}
}

// TemplateMeta is the "metadata" of a pod template: labels for the task
// groups, and in deployments the name and namespace of the application the
// deployment creates.
type TemplateMeta struct {
	Name      string            `json:"name,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// RestartPolicyType is restartPolicy.policy.
type RestartPolicyType string

// Seed 000: "policy: Never, Always or OnFailure (default OnFailure)".
const (
	RestartNever     RestartPolicyType = "Never"
	RestartAlways    RestartPolicyType = "Always"
	RestartOnFailure RestartPolicyType = "OnFailure"
)

// RestartPolicy is a manifest's "restartPolicy" (seed 000): whether and how
// fast a failed (OnFailure) or also lost (Always) instance is rescheduled.
type RestartPolicy struct {
	Policy RestartPolicyType `json:"policy"`
	// Interval is the delay in seconds before the first restart.
	Interval int `json:"interval"`
	// Backoff adds seconds per further failure: interval 5, backoff 10
	// restart after 5s, 15s, 25s.
	Backoff int `json:"backoff"`
	// MaxTimes bounds restarts; 0 is unlimited.
	MaxTimes int `json:"maxtimes"`
}

// Default sets policy OnFailure; interval, backoff and maxtimes default to 0.
func (r *RestartPolicy) Default() { *r = RestartPolicy{Policy: RestartOnFailure} }

// KillPolicy is a manifest's "killPolicy".
type KillPolicy struct {
	// GracePeriod is the wait in seconds before a forced kill (default 1).
	GracePeriod int `json:"gracePeriod"`
}

// Default sets the seed 000 grace period of 1 second.
func (k *KillPolicy) Default() { k.GracePeriod = 1 }

// PullPolicy is imagePullPolicy (containers) or uris[].pullPolicy
// (processes).
type PullPolicy string

// Seed 000: "Always: pull every time; IfNotPresent: pull when missing
// locally (default)".
const (
	PullAlways       PullPolicy = "Always"
	PullIfNotPresent PullPolicy = "IfNotPresent"
)

// sortedKeys returns the keys of m in order, for deterministic errors.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// InstancesOf returns the instance count (spec.instance) of a workload:
// an application, a process or a deployment, and 0 for a daemonset, whose
// agents decide it; ok is false for any other kind.
func InstancesOf(obj Object) (instances int, ok bool) {
	switch m := obj.(type) {
	case *Daemonset:
		return 0, true
	case *Application:
		return m.Spec.Instance, true
	case *Process:
		return m.Spec.Instance, true
	case *Deployment:
		return m.Spec.Instance, true
	}
	return 0, false
}

// MetaOf returns the metadata of obj; ok is false for kinds without any
// (command).
func MetaOf(obj Object) (meta ObjectMeta, ok bool) {
	switch m := obj.(type) {
	case *Application:
		return m.Metadata, true
	case *Process:
		return m.Metadata, true
	case *Deployment:
		return m.Metadata, true
	case *Daemonset:
		return m.Metadata, true
	case *ConfigMap:
		return m.Metadata, true
	case *Secret:
		return m.Metadata, true
	case *Service:
		return m.Metadata, true
	case *HookTemplate:
		return m.Metadata, true
	case *Depends:
		return m.Metadata, true
	case *Autoscaler:
		return m.Metadata, true
	}
	return ObjectMeta{}, false
}
