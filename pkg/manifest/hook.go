package manifest

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// HookTemplate is kind "hooktemplate" (seed 003, bcs-hook-operator): the
// checks a hook run makes — web calls or Prometheus queries, each judged
// by its conditions — and the arguments they take. Canary hook steps and
// PreDeleteHook run them.
type HookTemplate struct {
	APIVersion string           `json:"apiVersion"`
	KindName   string           `json:"kind"`
	Metadata   ObjectMeta       `json:"metadata"`
	Spec       HookTemplateSpec `json:"spec"`
}

// Kind implements Object.
func (*HookTemplate) Kind() Kind { return KindHookTemplate }

// Default sets the default namespace.
func (h *HookTemplate) Default() { h.Metadata.Default() }

func (h *HookTemplate) normalize() { h.Metadata.normalize() }

// HookTemplateSpec is a hook template's "spec".
type HookTemplateSpec struct {
	// Args are the arguments the metrics use as {{ args.NAME }}; one
	// without a value must be given by the run.
	Args    []HookArg    `json:"args,omitempty"`
	Metrics []HookMetric `json:"metrics"`
}

// HookMetric is one check of a hook (seed 003): Count calls Interval
// apart (none: one call; Interval alone: until the run is stopped), each
// measurement judged by the conditions, the metric judged by the limits.
type HookMetric struct {
	Name         string   `json:"name"`
	Count        int      `json:"count,omitempty"`
	Interval     Duration `json:"interval,omitempty"`
	InitialDelay Duration `json:"initialDelay,omitempty"`
	// SuccessCondition and FailureCondition are expressions over result
	// (expr-lang: asInt(result) < 30, result == "ok", len(result) > 0).
	SuccessCondition string `json:"successCondition,omitempty"`
	FailureCondition string `json:"failureCondition,omitempty"`
	// FailureLimit is how many failed measurements the metric survives
	// (default 0); InconclusiveLimit likewise; SuccessfulLimit ends the
	// metric Successful once reached; ConsecutiveErrorLimit is how many
	// errors in a row it survives (default 4).
	FailureLimit          int          `json:"failureLimit"`
	SuccessfulLimit       int          `json:"successfulLimit,omitempty"`
	InconclusiveLimit     int          `json:"inconclusiveLimit,omitempty"`
	ConsecutiveErrorLimit *int         `json:"consecutiveErrorLimit,omitempty"`
	Provider              HookProvider `json:"provider"`
}

// DefaultConsecutiveErrorLimit is Argo Rollouts' and seed 003's default.
const DefaultConsecutiveErrorLimit = 4

// ErrorLimit returns the consecutive error limit with its default.
func (m HookMetric) ErrorLimit() int {
	if m.ConsecutiveErrorLimit == nil {
		return DefaultConsecutiveErrorLimit
	}
	return *m.ConsecutiveErrorLimit
}

// HookProvider is where a metric's value comes from: exactly one is set.
type HookProvider struct {
	Web        *WebProvider        `json:"web,omitempty"`
	Prometheus *PrometheusProvider `json:"prometheus,omitempty"`
}

// WebProvider calls a URL; the result is the body, or the value its
// jsonPath ("{$.age}", Kubernetes JSONPath) selects.
type WebProvider struct {
	URL            string       `json:"url"`
	Method         string       `json:"method,omitempty"` // GET (default) or POST
	Headers        []HookHeader `json:"headers,omitempty"`
	Body           string       `json:"body,omitempty"`
	JSONPath       string       `json:"jsonPath,omitempty"`
	TimeoutSeconds int          `json:"timeoutSeconds,omitempty"` // default 10
	// Insecure skips TLS verification.
	Insecure bool `json:"insecure,omitempty"`
}

// HookHeader is one header of a web call.
type HookHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// PrometheusProvider runs an instant query; the result is its value (a
// number, or a list for a vector of several samples).
type PrometheusProvider struct {
	Address string `json:"address"`
	Query   string `json:"query"`
}

// HookTemplates looks up hook templates; a Resolver that implements it
// lets validation check a manifest's hooks.
type HookTemplates interface {
	HookTemplate(namespace, name string) (*HookTemplate, bool)
}

// The arguments the scheduler gives the hook runs it makes, besides the
// template's defaults and the step's args: every run gets
// Namespace, AppName and Revision (a canary step's also StableRevision);
// a PreDeleteHook's run also the instance: PodName (its task group ID),
// InstanceID, HostIP and PodIP (the agent's address, where its ports
// answer) and Port.<name> for each of its ports.
const (
	ArgNamespace      = "Namespace"
	ArgAppName        = "AppName"
	ArgRevision       = "Revision"
	ArgStableRevision = "StableRevision"
	ArgPodName        = "PodName"
	ArgInstanceID     = "InstanceID"
	ArgHostIP         = "HostIP"
	ArgPodIP          = "PodIP"
	ArgPortPrefix     = "Port."
)

// SchedulerArg reports whether the scheduler gives argument name.
func SchedulerArg(name string) bool {
	switch name {
	case ArgNamespace, ArgAppName, ArgRevision, ArgStableRevision, ArgPodName, ArgInstanceID, ArgHostIP, ArgPodIP:
		return true
	}
	return strings.HasPrefix(name, ArgPortPrefix)
}

// Duration is a Go duration string ("60s", "2m").
type Duration string

// Parse reads d; "" is zero.
func (d Duration) Parse() (time.Duration, error) {
	if d == "" {
		return 0, nil
	}
	v, err := time.ParseDuration(string(d))
	if err != nil || v < 0 {
		return 0, fmt.Errorf("want a duration such as \"30s\" or \"2m\", got %q", string(d))
	}
	return v, nil
}

// argRef finds {{ args.NAME }} in a hook's strings.
var argRef = regexp.MustCompile(`\{\{\s*args\.([A-Za-z0-9_.-]+)\s*\}\}`)

// ArgNames returns the arguments s refers to, in order.
func ArgNames(s string) []string {
	var names []string
	for _, m := range argRef.FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	return names
}

// RenderArgs replaces every {{ args.NAME }} in s by its value; an
// argument without one is an error naming it.
func RenderArgs(s string, args map[string]string) (string, error) {
	var missing []string
	out := argRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := argRef.FindStringSubmatch(ref)[1]
		v, ok := args[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no value for %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// Validate implements Object. Conditions and jsonPath are checked by the
// hook engine (pkg/hook), which owns their languages.
func (h *HookTemplate) Validate(Resolver) field.ErrorList {
	v := newValidator(nil, h.Metadata.Namespace)
	v.meta("metadata", h.Metadata)
	declared := map[string]bool{}
	for i, a := range h.Spec.Args {
		ap := field.Path("spec.args").Index(i).Child("name")
		switch {
		case a.Name == "":
			v.required(ap)
		case declared[a.Name]:
			v.invalid(ap, "duplicate argument %q", a.Name)
		case !argName.MatchString(a.Name):
			v.invalid(ap, "letters, digits, '_', '.' and '-', got %q", a.Name)
		}
		declared[a.Name] = true
	}
	mp := field.Path("spec.metrics")
	if len(h.Spec.Metrics) == 0 {
		v.required(mp)
	}
	names := map[string]bool{}
	for i, m := range h.Spec.Metrics {
		v.hookMetric(mp.Index(i), m, names, declared)
	}
	return v.errs
}

var argName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

func (v *validator) hookMetric(p field.Path, m HookMetric, names, args map[string]bool) {
	switch {
	case m.Name == "":
		v.required(p.Child("name"))
	case names[m.Name]:
		v.invalid(p.Child("name"), "duplicate metric %q", m.Name)
	}
	names[m.Name] = true
	v.nonNegative(p.Child("count"), m.Count)
	interval, err := m.Interval.Parse()
	if err != nil {
		v.invalid(p.Child("interval"), "%v", err)
	}
	if _, err := m.InitialDelay.Parse(); err != nil {
		v.invalid(p.Child("initialDelay"), "%v", err)
	}
	// Seed 003: "如果 count 大于 1,必须配置 interval".
	if m.Count > 1 && interval == 0 && err == nil {
		v.invalid(p.Child("interval"), "required when count is greater than 1 (count %d)", m.Count)
	}
	v.nonNegative(p.Child("failureLimit"), m.FailureLimit)
	v.nonNegative(p.Child("successfulLimit"), m.SuccessfulLimit)
	v.nonNegative(p.Child("inconclusiveLimit"), m.InconclusiveLimit)
	if m.ConsecutiveErrorLimit != nil {
		v.nonNegative(p.Child("consecutiveErrorLimit"), *m.ConsecutiveErrorLimit)
	}
	pp := p.Child("provider")
	web, prom := m.Provider.Web, m.Provider.Prometheus
	switch {
	case web == nil && prom == nil, web != nil && prom != nil:
		v.invalid(pp, "exactly one of web and prometheus")
	case web != nil:
		wp := pp.Child("web")
		if web.URL == "" {
			v.required(wp.Child("url"))
		}
		if web.Method != "" {
			oneOf(v, wp.Child("method"), web.Method, "GET", "POST")
		}
		v.nonNegative(wp.Child("timeoutSeconds"), web.TimeoutSeconds)
		v.argRefs(wp.Child("url"), web.URL, args)
		v.argRefs(wp.Child("body"), web.Body, args)
		for j, h := range web.Headers {
			hp := wp.Child("headers").Index(j)
			if h.Key == "" {
				v.required(hp.Child("key"))
			}
			v.argRefs(hp.Child("value"), h.Value, args)
		}
	case prom != nil:
		pr := pp.Child("prometheus")
		if prom.Address == "" {
			v.required(pr.Child("address"))
		}
		if prom.Query == "" {
			v.required(pr.Child("query"))
		}
		v.argRefs(pr.Child("address"), prom.Address, args)
		v.argRefs(pr.Child("query"), prom.Query, args)
	}
}

// argRefs checks that s refers only to declared arguments.
func (v *validator) argRefs(p field.Path, s string, args map[string]bool) {
	for _, name := range ArgNames(s) {
		if !args[name] {
			v.invalid(p, "{{ args.%s }}: no argument %q in spec.args", name, name)
		}
	}
}

// HookArgProblems lists what is wrong with the arguments a run of
// template t is given, at path at: an argument t does not declare, or one
// it declares without a value and args do not give. provided names the
// arguments the caller fills in itself (the scheduler's); nil: none.
func HookArgProblems(t *HookTemplate, args []HookArg, at field.Path, provided func(name string) bool) field.ErrorList {
	var errs field.ErrorList
	declared, given := map[string]bool{}, map[string]bool{}
	for _, a := range t.Spec.Args {
		declared[a.Name] = true
	}
	for i, a := range args {
		if !declared[a.Name] {
			errs = append(errs, field.Invalid(at.Child("args").Index(i).Child("name"), "hook template %s has no argument %q", t.Metadata.Name, a.Name))
		}
		given[a.Name] = true
	}
	for _, a := range t.Spec.Args {
		if a.Value == "" && !given[a.Name] && (provided == nil || !provided(a.Name)) {
			errs = append(errs, field.Invalid(at.Child("args"), "hook template %s needs a value for argument %q", t.Metadata.Name, a.Name))
		}
	}
	return errs
}
