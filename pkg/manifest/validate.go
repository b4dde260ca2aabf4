package manifest

import (
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/confine"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/dockerparam"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// MinContainerMemoryMB is Docker's smallest memory limit (seed 001: "memory:
// at least 4M").
const MinContainerMemoryMB = 4

// MaxNameLength bounds names and namespaces (a DNS label).
const MaxNameLength = 63

var (
	// dnsLabel is the name rule; see the package documentation.
	dnsLabel = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	// portName: letters, digits, '_' and '-', so ${ports.<name>} reads well.
	portName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// envName is an environment variable name as Docker accepts it.
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
	// dataKey names a configmap or secret item ("bcs.conf", "config_two").
	dataKey = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	// dataObjectName names a configmap or secret ("mySecret"); see the
	// package documentation.
	dataObjectName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// Probe values variables resolve to when a manifest is validated, before
// any instance exists.
const (
	probeHostIP       = "127.0.0.1"
	probeWorkBaseDir  = "/work_base_dir"
	probeRunBaseDir   = "/run_base_dir"
	probeSchedulerURL = "http://127.0.0.1:8080"
	probeRandomPort   = 31000
)

// validator collects the problems of one manifest.
type validator struct {
	errs      field.ErrorList
	resolver  Resolver
	namespace string
}

func newValidator(r Resolver, namespace string) *validator {
	if namespace != DefaultNamespace && (len(namespace) > MaxNameLength || !dnsLabel.MatchString(namespace)) {
		r = nil // the namespace error says it all; lookups in it would only add noise
	}
	return &validator{resolver: r, namespace: namespace}
}

func (v *validator) invalid(p field.Path, format string, args ...any) {
	v.errs = append(v.errs, field.Invalid(p, format, args...))
}

func (v *validator) required(p field.Path) { v.errs = append(v.errs, field.Required(p)) }

func (v *validator) nonNegative(p field.Path, n int) {
	if n < 0 {
		v.invalid(p, "must be ≥ 0, got %d", n)
	}
}

// Bounds of counts and durations: beyond them a value is a mistake (an
// extra digit) or an attack (a million instances, a kill that waits a
// year), never a fleet's need.
const (
	// MaxInstances bounds an application's instance count.
	MaxInstances = 100_000
	// MaxTasks bounds the containers or processes of one pod.
	MaxTasks = 64
	// MaxWaitSeconds bounds a kill's grace period, a start's grace and
	// an in-place update's drain: an hour.
	MaxWaitSeconds = 3600
	// MaxIntervalSeconds bounds restart intervals and backoffs, health
	// check delays, intervals and grace, hook timeouts: a day.
	MaxIntervalSeconds = 86400
)

// atMostTasks checks a pod's count of containers or processes.
func (v *validator) atMostTasks(p field.Path, n int) {
	if n > MaxTasks {
		v.invalid(p, "at most %d in one pod, got %d", MaxTasks, n)
	}
}

// inRange checks 0 ≤ n ≤ max.
func (v *validator) inRange(p field.Path, n, max int) {
	v.nonNegative(p, n)
	if n > max {
		v.invalid(p, "must be at most %d, got %d", max, n)
	}
}

// oneOf checks that s is one of allowed; empty is "required".
func oneOf[T ~string](v *validator, p field.Path, s T, allowed ...T) {
	if s == "" {
		v.required(p)
		return
	}
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	v.invalid(p, "want one of %s, got %q", strings.Join(names, ", "), s)
}

// name checks a name against the DNS-label rule.
func (v *validator) name(p field.Path, s string) {
	switch {
	case s == "":
		v.required(p)
	case len(s) > MaxNameLength:
		v.invalid(p, "at most %d characters, got %d", MaxNameLength, len(s))
	case !dnsLabel.MatchString(s):
		v.invalid(p, "want lowercase letters, digits and '-', starting with a letter and ending with a letter or digit, got %q", s)
	}
}

// CheckNamespace says why ns cannot be a namespace, or nil: the rule of
// metadata.namespace, for namespaces named elsewhere (a token file).
func CheckNamespace(ns string) error {
	v := &validator{}
	v.namespaceName("namespace", ns)
	return v.errs.ToError()
}

// namespaceName is name, but also accepts the default namespace.
func (v *validator) namespaceName(p field.Path, s string) {
	if s != DefaultNamespace {
		v.name(p, s)
	}
}

func (v *validator) meta(p field.Path, m ObjectMeta) {
	v.name(p.Child("name"), m.Name)
	v.namespaceName(p.Child("namespace"), m.Namespace)
	v.labels(p, m.Labels)
}

func (v *validator) labels(p field.Path, labels map[string]string) {
	for _, k := range sortedKeys(labels) {
		if k == "" {
			v.invalid(p.Child("labels"), "empty label key")
		}
	}
}

// dataObjectMeta is meta for a configmap or secret, whose name follows
// dataObjectName.
func (v *validator) dataObjectMeta(p field.Path, m ObjectMeta) {
	np := p.Child("name")
	switch {
	case m.Name == "":
		v.required(np)
	case len(m.Name) > MaxNameLength:
		v.invalid(np, "at most %d characters, got %d", MaxNameLength, len(m.Name))
	case !dataObjectName.MatchString(m.Name):
		v.invalid(np, "want letters, digits, '.', '_' and '-', starting with a letter or digit, got %q", m.Name)
	}
	v.namespaceName(p.Child("namespace"), m.Namespace)
	v.labels(p, m.Labels)
}

func (v *validator) templateMeta(p field.Path, m TemplateMeta) {
	if m.Name != "" {
		v.name(p.Child("name"), m.Name)
	}
	if m.Namespace != "" {
		v.namespaceName(p.Child("namespace"), m.Namespace)
	}
}

func (v *validator) restartPolicy(p field.Path, r RestartPolicy) {
	oneOf(v, p.Child("policy"), r.Policy, RestartNever, RestartAlways, RestartOnFailure)
	v.inRange(p.Child("interval"), r.Interval, MaxIntervalSeconds)
	v.inRange(p.Child("backoff"), r.Backoff, MaxIntervalSeconds)
	v.nonNegative(p.Child("maxtimes"), r.MaxTimes)
}

func (v *validator) killPolicy(p field.Path, k KillPolicy) {
	v.inRange(p.Child("gracePeriod"), k.GracePeriod, MaxWaitSeconds)
}

func (v *validator) constraint(c *constraint.Constraint) {
	if c != nil {
		v.errs = append(v.errs, c.Validate("constraint")...)
	}
}

func (v *validator) resources(p field.Path, r Resources) {
	for _, list := range []struct {
		name string
		list ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		lp := p.Child(list.name)
		if _, err := list.list.CPU.Parse(); err != nil {
			v.invalid(lp.Child("cpu"), "%v", err)
		}
		if _, err := list.list.Memory.Parse(); err != nil {
			v.invalid(lp.Child("memory"), "%v", err)
		}
	}
}

// portTable checks port names and fixed host ports across a pod.
type portTable struct {
	names     map[string]field.Path
	hostPorts map[int]field.Path
	probe     map[string]uint32
}

func newPortTable() *portTable {
	return &portTable{names: map[string]field.Path{}, hostPorts: map[int]field.Path{}, probe: map[string]uint32{}}
}

// add records a port; a repeated name or fixed hostPort is an error.
func (t *portTable) add(v *validator, p field.Path, name, protocol string, hostPort int) {
	switch {
	case name == "":
		v.required(p.Child("name"))
	case !portName.MatchString(name):
		v.invalid(p.Child("name"), "want letters, digits, '_' and '-', got %q", name)
	default:
		if first, dup := t.names[name]; dup {
			v.invalid(p.Child("name"), "duplicate port name %q (also %s)", name, first)
		} else {
			t.names[name] = p
			t.probe[name] = probeRandomPort
		}
	}
	switch strings.ToLower(protocol) {
	case "http", "tcp", "udp":
	case "":
		v.required(p.Child("protocol"))
	default:
		v.invalid(p.Child("protocol"), "want http, tcp or udp, got %q", protocol)
	}
	if hostPort < 0 || hostPort > 65535 {
		v.invalid(p.Child("hostPort"), "must be between 0 (random) and 65535, got %d", hostPort)
	} else if hostPort > 0 {
		if first, dup := t.hostPorts[hostPort]; dup {
			v.invalid(p.Child("hostPort"), "duplicate hostPort %d (also %s)", hostPort, first)
		} else {
			t.hostPorts[hostPort] = p
		}
	}
}

// healthChecks checks the health checks of one container or process;
// ports holds its port names.
func (v *validator) healthChecks(p field.Path, checks []HealthCheck, ports map[string]bool) {
	if len(checks) > MaxHealthChecks {
		v.invalid(p, "at most %d health checks, got %d", MaxHealthChecks, len(checks))
	}
	local := -1
	seen := map[HealthCheckType]int{}
	for i, h := range checks {
		hp := p.Index(i)
		switch h.Type {
		case CheckHTTP, CheckTCP, CheckCommand:
			if local >= 0 {
				v.invalid(hp.Child("type"), "at most one of HTTP, TCP and COMMAND, and healthChecks[%d] is %s", local, checks[local].Type)
			} else {
				local = i
			}
		case CheckRemoteHTTP, CheckRemoteTCP:
			if j, dup := seen[h.Type]; dup {
				v.invalid(hp.Child("type"), "duplicate type %s (also healthChecks[%d])", h.Type, j)
			}
		default:
			oneOf(v, hp.Child("type"), h.Type, CheckHTTP, CheckTCP, CheckCommand, CheckRemoteHTTP, CheckRemoteTCP)
		}
		if _, dup := seen[h.Type]; !dup {
			seen[h.Type] = i
		}
		v.inRange(hp.Child("delaySeconds"), h.DelaySeconds, MaxIntervalSeconds)
		switch {
		case h.IntervalSeconds < 1:
			v.invalid(hp.Child("intervalSeconds"), "must be ≥ 1, got %d", h.IntervalSeconds)
		case h.IntervalSeconds > MaxIntervalSeconds:
			v.invalid(hp.Child("intervalSeconds"), "must be at most %d, got %d", MaxIntervalSeconds, h.IntervalSeconds)
		case h.TimeoutSeconds < 1:
			v.invalid(hp.Child("timeoutSeconds"), "must be ≥ 1, got %d", h.TimeoutSeconds)
		case h.TimeoutSeconds >= h.IntervalSeconds:
			v.invalid(hp.Child("timeoutSeconds"), "must be less than intervalSeconds (%d), got %d", h.IntervalSeconds, h.TimeoutSeconds)
		}
		v.nonNegative(hp.Child("consecutiveFailures"), h.ConsecutiveFailures)
		v.inRange(hp.Child("gracePeriodSeconds"), h.GracePeriodSeconds, MaxIntervalSeconds)
		switch h.Type {
		case CheckHTTP, CheckRemoteHTTP:
			if h.HTTP == nil {
				v.invalid(hp.Child("http"), "required for type %s", h.Type)
				break
			}
			v.checkPort(hp.Child("http"), h.HTTP.Port, h.HTTP.PortName, ports)
			if h.HTTP.Scheme != "http" && h.HTTP.Scheme != "https" {
				v.invalid(hp.Child("http").Child("scheme"), "want http or https, got %q", h.HTTP.Scheme)
			}
		case CheckTCP, CheckRemoteTCP:
			if h.TCP == nil {
				v.invalid(hp.Child("tcp"), "required for type %s", h.Type)
				break
			}
			v.checkPort(hp.Child("tcp"), h.TCP.Port, h.TCP.PortName, ports)
		case CheckCommand:
			switch {
			case h.Command == nil:
				v.invalid(hp.Child("command"), "required for type %s", h.Type)
			case strings.TrimSpace(h.Command.Value) == "":
				v.required(hp.Child("command").Child("value"))
			}
		}
	}
}

// checkPort: a port > 0 is used as is; otherwise portName must name a port
// of the task (seed 000).
func (v *validator) checkPort(p field.Path, port int, name string, ports map[string]bool) {
	switch {
	case port > 65535:
		v.invalid(p.Child("port"), "must be at most 65535, got %d", port)
	case port > 0:
	case name == "":
		v.invalid(p.Child("portName"), "required when port is not > 0")
	case !ports[name]:
		v.invalid(p.Child("portName"), "no port named %q", name)
	}
}

// item checks one configmap or secret item. A process's file items are
// on the host and checked once expanded (confined); a container's are
// absolute paths in the container.
func (v *validator) item(p field.Path, it refItem) {
	typ, key, keyOrPath := it.typ, it.dataKey, it.keyOrPath
	if key == "" {
		v.required(p.Child("dataKey"))
	}
	kp := p.Child("keyOrPath")
	switch typ {
	case ItemEnv:
		if keyOrPath == "" {
			v.invalid(kp, "required: the environment variable to set")
		} else if !envName.MatchString(keyOrPath) {
			v.invalid(kp, "want an environment variable name, got %q", keyOrPath)
		}
	case ItemFile:
		if keyOrPath == "" {
			v.invalid(kp, "required: the file to write")
		} else if !it.onHost && !path.IsAbs(keyOrPath) {
			v.invalid(kp, "want an absolute path, got %q", keyOrPath)
		}
	default:
		oneOf(v, p.Child("type"), typ, ItemEnv, ItemFile)
	}
}

func (v *validator) configMapRefs(p field.Path, refs []ConfigMapRef, onHost bool) {
	for i, ref := range refs {
		items := make([]refItem, len(ref.Items))
		for j, it := range ref.Items {
			items[j] = refItem{it.Type, it.DataKey, it.KeyOrPath, onHost}
		}
		v.dataRef(p.Index(i), "configmap", "name", ref.Name, items, func(name string) (func(string) bool, bool) {
			cm, ok := v.resolver.ConfigMap(v.namespace, name)
			return func(key string) bool { _, ok := cm.Datas[key]; return ok }, ok
		})
	}
}

func (v *validator) secretRefs(p field.Path, refs []SecretRef, onHost bool) {
	for i, ref := range refs {
		items := make([]refItem, len(ref.Items))
		for j, it := range ref.Items {
			items[j] = refItem{it.Type, it.DataKey, it.KeyOrPath, onHost}
		}
		v.dataRef(p.Index(i), "secret", "secretName", ref.SecretName, items, func(name string) (func(string) bool, bool) {
			s, ok := v.resolver.Secret(v.namespace, name)
			return func(key string) bool { _, ok := s.Datas[key]; return ok }, ok
		})
	}
}

// refItem is what validation reads of a configmap or secret item; onHost
// says it belongs to a process.
type refItem struct {
	typ, dataKey, keyOrPath string
	onHost                  bool
}

// dataRef checks one configmap or secret reference at rp: its name
// (field nameField) resolves through lookup, which returns whether the
// object holds a data key, and every item is well formed and names a key
// the object holds.
func (v *validator) dataRef(rp field.Path, kind, nameField, name string, items []refItem, lookup func(name string) (func(string) bool, bool)) {
	var has func(string) bool
	switch {
	case name == "":
		v.required(rp.Child(nameField))
	case v.resolver != nil:
		var ok bool
		if has, ok = lookup(name); !ok {
			has = nil
			v.invalid(rp.Child(nameField), "%s %q not found in namespace %q", kind, name, v.namespace)
		}
	}
	if len(items) == 0 {
		v.invalid(rp.Child("items"), "must hold at least one item")
	}
	for j, it := range items {
		ip := rp.Child("items").Index(j)
		v.item(ip, it)
		if has != nil && it.dataKey != "" && !has(it.dataKey) {
			v.invalid(ip.Child("dataKey"), "%s %q has no item %q", kind, name, it.dataKey)
		}
	}
}

// Validate implements Object.
func (a *Application) Validate(r Resolver) field.ErrorList {
	v := newValidator(r, a.Metadata.Namespace)
	v.meta("metadata", a.Metadata)
	v.restartPolicy("restartPolicy", a.RestartPolicy)
	v.killPolicy("killPolicy", a.KillPolicy)
	v.constraint(a.Constraint)
	v.inRange("spec.instance", a.Spec.Instance, MaxInstances)
	v.templateMeta("spec.template.metadata", a.Spec.Template.Metadata)
	v.podSpec("spec.template.spec", &a.Spec.Template.Spec, a.Metadata)
	return v.errs
}

// cniNetworkName is what libcni accepts as a network name.
var cniNetworkName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func (v *validator) podSpec(p field.Path, s *PodSpec, meta ObjectMeta) {
	if len(s.Containers) == 0 {
		v.required(p.Child("containers"))
	}
	v.atMostTasks(p.Child("containers"), len(s.Containers))
	if s.NetworkType != "" {
		oneOf(v, p.Child("networkType"), s.NetworkType, "cnm", "cni")
	}
	if strings.EqualFold(s.NetworkType, "cni") {
		// Seed 001: in CNI mode networkMode names the CNI network.
		if s.NetworkMode == "" {
			v.required(p.Child("networkMode"))
		} else if !cniNetworkName.MatchString(string(s.NetworkMode)) {
			v.invalid(p.Child("networkMode"), "a CNI network name of letters, digits, '.', '_' and '-', got %q", s.NetworkMode)
		}
	} else {
		oneOf(v, p.Child("networkMode"), s.NetworkMode, NetworkHost, NetworkBridge, NetworkNone, NetworkUser)
	}
	if s.NetLimit != nil {
		v.nonNegative(p.Child("netLimit").Child("egressLimit"), s.NetLimit.EgressLimit)
	}
	ports := newPortTable()
	params := make([]dockerparam.Options, len(s.Containers))
	for i := range s.Containers {
		params[i] = v.container(p.Child("containers").Index(i), &s.Containers[i], s.NetworkMode, ports)
	}
	if !strings.EqualFold(s.NetworkType, "cni") && s.NetworkMode == NetworkNone {
		v.unreachableChecks(p.Child("containers"), s.Containers)
	}
	if !strings.EqualFold(s.NetworkType, "cni") && slices.Contains([]NetworkMode{NetworkHost, NetworkBridge, NetworkNone, NetworkUser}, s.NetworkMode) {
		for i, o := range params {
			if i > 0 { // the pod's network is the first container's (seed 001)
				if params[0].Net == "" && s.NetworkMode == NetworkUser {
					continue // reported on the first
				}
				o.Net = params[0].Net
			}
			if _, err := o.NetworkMode(string(s.NetworkMode)); err != nil {
				v.invalid(p.Child("containers").Index(i).Child("parameters"), "%v", err)
			}
		}
	}
	probe := Instance{
		Namespace: meta.Namespace, Name: meta.Name, HostIP: probeHostIP, Ports: ports.probe,
		TaskGroupID: "probe", TaskGroupName: "probe",
	}
	for i := range s.Containers {
		_, errs := expandContainer(&s.Containers[i], probe, p.Child("containers").Index(i))
		v.errs = append(v.errs, errs...)
	}
	v.dependsRefs(p.Child("depends"), s.Depends)
}

// unreachableChecks refuses the checks that connect to a pod of
// networkMode NONE: it has no address anyone could connect to, so they
// could only fail once it runs.
func (v *validator) unreachableChecks(p field.Path, containers []Container) {
	for i, c := range containers {
		for j, h := range c.HealthChecks {
			switch h.Type {
			case CheckHTTP, CheckTCP, CheckRemoteHTTP, CheckRemoteTCP:
				v.invalid(p.Index(i).Child("healthChecks").Index(j),
					"type %s connects to the pod, and networkMode NONE gives it no address to connect to: use a COMMAND check, or a network mode with an address", h.Type)
			}
		}
	}
}

var envResources = []string{"requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}

// container checks c and returns its docker parameters, read by the
// executor's parser.
func (v *validator) container(p field.Path, c *Container, mode NetworkMode, ports *portTable) dockerparam.Options {
	if c.Type != "" {
		oneOf(v, p.Child("type"), c.Type, "DOCKER", "MESOS")
	}
	if c.Image == "" {
		v.required(p.Child("image"))
	}
	oneOf(v, p.Child("imagePullPolicy"), c.ImagePullPolicy, PullAlways, PullIfNotPresent)
	var params dockerparam.Options
	for i, param := range c.Parameters {
		pp := p.Child("parameters").Index(i)
		if param.Key == "" {
			v.required(pp.Child("key"))
		} else if err := params.Add(param.Key, param.Value); err != nil && !dockerparam.Known(param.Key) {
			v.invalid(pp.Child("key"), "docker parameter %q is %v", param.Key, err)
		} else if err != nil {
			v.invalid(pp.Child("value"), "%v", err)
		}
	}
	for i, env := range c.Env {
		ep := p.Child("env").Index(i)
		if env.Name == "" {
			v.required(ep.Child("name"))
		}
		if env.ValueFrom == nil {
			continue
		}
		fp := ep.Child("valueFrom")
		switch {
		case env.Value != "":
			v.invalid(fp, "cannot be combined with value")
		case env.ValueFrom.ResourceFieldRef == nil:
			v.required(fp.Child("resourceFieldRef"))
		default:
			oneOf(v, fp.Child("resourceFieldRef").Child("resource"), env.ValueFrom.ResourceFieldRef.Resource, envResources...)
		}
	}
	own := map[string]bool{}
	for i, port := range c.Ports {
		pp := p.Child("ports").Index(i)
		ports.add(v, pp, port.Name, port.Protocol, port.HostPort)
		own[port.Name] = true
		switch {
		case port.ContainerPort < 0 || port.ContainerPort > 65535:
			v.invalid(pp.Child("containerPort"), "must be between 0 and 65535, got %d", port.ContainerPort)
		case port.ContainerPort == 0 && mode != NetworkHost:
			v.invalid(pp.Child("containerPort"), "required: only HOST mode picks a random containerPort")
		}
	}
	v.healthChecks(p.Child("healthChecks"), c.HealthChecks, own)
	v.resources(p.Child("resources"), c.Resources)
	if mem, err := c.Resources.Limits.Memory.Parse(); err == nil && mem.Set && !mem.Unlimited && mem.Milli < MinContainerMemoryMB*1000 {
		v.invalid(p.Child("resources").Child("limits").Child("memory"), "must be at least %d (MB), Docker's minimum, got %s", MinContainerMemoryMB, c.Resources.Limits.Memory)
	}
	for i, vol := range c.Volumes {
		vp := p.Child("volumes").Index(i)
		if vol.Name == "" {
			v.required(vp.Child("name"))
		}
		v.absolutePath(vp.Child("volume").Child("hostPath"), vol.Volume.HostPath)
		v.absolutePath(vp.Child("volume").Child("mountPath"), vol.Volume.MountPath)
	}
	if c.Cpuset {
		v.cpuset(p.Child("resources"), c.Resources)
	}
	v.secretRefs(p.Child("secrets"), c.Secrets, false)
	v.configMapRefs(p.Child("configmaps"), c.ConfigMaps, false)
	return params
}

// cpuset checks the cores a pinned container asks for: a whole number,
// requests.cpu (what the scheduler reserves and the executor pins; the
// original's manifests give only it) or else limits.cpu; given both, they
// must agree.
func (v *validator) cpuset(p field.Path, r Resources) {
	limit, errL := r.Limits.CPU.Parse()
	request, errR := r.Requests.CPU.Parse()
	cores, coresField, given := request, p.Child("requests").Child("cpu"), r.Requests.CPU
	if !request.Set {
		cores, coresField, given = limit, p.Child("limits").Child("cpu"), r.Limits.CPU
	}
	switch {
	case errL != nil || errR != nil: // reported by resources
	case !cores.Set || cores.Unlimited || cores.Milli < 1000 || cores.Milli%1000 != 0:
		v.invalid(coresField, "cpuset pins whole cores: want a whole number of cores, at least 1, got %q", given)
	case request.Set && limit.Set && request.Milli != limit.Milli:
		v.invalid(p.Child("requests").Child("cpu"), "cpuset pins requests.cpu cores: limits.cpu (%s) must be unset or equal, got %q", r.Limits.CPU, r.Requests.CPU)
	}
}

func (v *validator) absolutePath(p field.Path, s string) {
	switch {
	case s == "":
		v.required(p)
	case !path.IsAbs(s):
		v.invalid(p, "want an absolute path, got %q", s)
	}
}

// Validate implements Object.
func (pr *Process) Validate(r Resolver) field.ErrorList {
	v := newValidator(r, pr.Metadata.Namespace)
	v.meta("metadata", pr.Metadata)
	v.restartPolicy("restartPolicy", pr.RestartPolicy)
	v.killPolicy("killPolicy", pr.KillPolicy)
	v.constraint(pr.Constraint)
	v.inRange("spec.instance", pr.Spec.Instance, MaxInstances)
	sp := field.Path("spec.template.spec.processes")
	procs := pr.Spec.Template.Spec.Processes
	if len(procs) == 0 {
		v.required(sp)
	}
	v.atMostTasks(sp, len(procs))
	ports := newPortTable()
	for i := range procs {
		for j, port := range procs[i].Ports {
			ports.add(v, sp.Index(i).Child("ports").Index(j), port.Name, port.Protocol, port.HostPort)
		}
	}
	probe := Instance{
		Namespace: pr.Metadata.Namespace, Name: pr.Metadata.Name, HostIP: probeHostIP, Ports: ports.probe,
		WorkBaseDir: probeWorkBaseDir, RunBaseDir: probeRunBaseDir, SchedulerURL: probeSchedulerURL,
	}
	for i := range procs {
		pp := sp.Index(i)
		v.process(pp, &procs[i])
		expanded, errs := expandProcess(&procs[i], probe, pp)
		v.errs = append(v.errs, errs...)
		v.uriSchemes(pp.Child("uris"), expanded.URIs, errs)
		v.confined(pp, &procs[i], &expanded, probe, errs)
	}
	v.dependsRefs("spec.template.spec.depends", pr.Spec.Template.Spec.Depends)
	return v.errs
}

// uriSchemes checks the scheme of each package URI once its variables
// (${scheduler_url}) are expanded; values that failed to expand are
// already reported.
func (v *validator) uriSchemes(p field.Path, uris []URI, expandErrs field.ErrorList) {
	for i, u := range uris {
		vp := p.Index(i).Child("value")
		if u.Value == "" || slices.ContainsFunc(expandErrs, func(e field.Error) bool { return e.Path == vp }) {
			continue
		}
		if !strings.HasPrefix(u.Value, "http://") && !strings.HasPrefix(u.Value, "https://") && !strings.HasPrefix(u.Value, "file://") {
			v.invalid(vp, "want an http://, https:// or file:// address, got %q", u.Value)
		}
	}
}

// instanceDirsText names the directories an instance owns, in the
// manifest's terms, for messages.
const instanceDirsText = "${work_base_dir}/${namespace}.${processname}.${instanceid} or ${run_base_dir}/${namespace}.${processname}.${instanceid}"

// confined checks that every path of a process that the executor creates
// or writes on the agent lies inside the instance's own directories once
// expanded for the probe instance: workPath, pidFile, uris[].outputDir
// and the keyOrPath of file items. raw is the manifest's process, for the
// message. A process whose variables did not expand is not checked: its
// paths are unknown, and the variables are reported.
func (v *validator) confined(p field.Path, raw, expanded *ProcessSpec, probe Instance, expandErrs field.ErrorList) {
	if len(expandErrs) > 0 {
		return
	}
	dirs := confine.InstanceDirs(probe.WorkBaseDir, probe.RunBaseDir, probe.Namespace, probe.Name, probe.Index)
	check := func(fp field.Path, rawValue, value string) {
		if value == "" {
			return
		}
		if confine.Check(value, dirs...) != nil {
			v.invalid(fp, "must lie inside the instance's own directories, %s, got %q", instanceDirsText, rawValue)
		}
	}
	check(p.Child("workPath"), raw.WorkPath, expanded.WorkPath)
	check(p.Child("pidFile"), raw.PidFile, expanded.PidFile)
	for i, u := range expanded.URIs {
		check(p.Child("uris").Index(i).Child("outputDir"), raw.URIs[i].OutputDir, u.OutputDir)
	}
	for i, ref := range expanded.Secrets {
		for j, it := range ref.Items {
			if it.Type == ItemFile {
				check(p.Child("secrets").Index(i).Child("items").Index(j).Child("keyOrPath"), raw.Secrets[i].Items[j].KeyOrPath, it.KeyOrPath)
			}
		}
	}
	for i, ref := range expanded.ConfigMaps {
		for j, it := range ref.Items {
			if it.Type == ItemFile {
				check(p.Child("configmaps").Index(i).Child("items").Index(j).Child("keyOrPath"), raw.ConfigMaps[i].Items[j].KeyOrPath, it.KeyOrPath)
			}
		}
	}
}

func (v *validator) process(p field.Path, proc *ProcessSpec) {
	if proc.ProcName == "" {
		v.required(p.Child("procName"))
	}
	if proc.WorkPath == "" {
		v.required(p.Child("workPath"))
	}
	if proc.PidFile == "" {
		v.required(p.Child("pidFile"))
	}
	if strings.TrimSpace(proc.StartCmd) == "" {
		v.required(p.Child("startCmd"))
	}
	v.inRange(p.Child("startGracePeriod"), proc.StartGracePeriod, MaxWaitSeconds)
	for i, u := range proc.URIs {
		up := p.Child("uris").Index(i)
		if u.Value == "" {
			v.required(up.Child("value")) // the scheme is checked once expanded
		}
		oneOf(v, up.Child("pullPolicy"), u.PullPolicy, PullAlways, PullIfNotPresent)
	}
	own := map[string]bool{}
	for _, port := range proc.Ports {
		own[port.Name] = true
	}
	v.healthChecks(p.Child("healthChecks"), proc.HealthChecks, own)
	v.resources(p.Child("resources"), proc.Resources)
	for i, env := range proc.Env {
		if env.Name == "" {
			v.required(p.Child("env").Index(i).Child("name"))
		}
	}
	v.secretRefs(p.Child("secrets"), proc.Secrets, true)
	v.configMapRefs(p.Child("configmaps"), proc.ConfigMaps, true)
}

// Validate implements Object.
func (c *ConfigMap) Validate(Resolver) field.ErrorList {
	v := newValidator(nil, c.Metadata.Namespace)
	v.dataObjectMeta("metadata", c.Metadata)
	dp := field.Path("datas")
	if len(c.Datas) == 0 {
		v.invalid(dp, "must hold at least one item")
	}
	for _, key := range sortedKeys(c.Datas) {
		d := c.Datas[key]
		kp := dp.Key(key)
		v.dataKey(kp, key)
		oneOf(v, kp.Child("type"), d.Type, ConfigDataFile, ConfigDataHTTP, ConfigDataHTTPS, ConfigDataFTP)
		switch d.Type {
		case ConfigDataHTTP, ConfigDataHTTPS, ConfigDataFTP:
			u, err := url.Parse(d.Content)
			switch {
			case err != nil || u.Scheme != d.Type || u.Host == "":
				v.invalid(kp.Child("content"), "want a %s:// address for type %s, got %q", d.Type, d.Type, redactURL(d.Content))
			case u.User != nil:
				v.invalid(kp.Child("content"), "credentials go in RemoteUser and remotePasswd, not in the address")
			}
		}
	}
	return v.errs
}

// redactURL is an address for a message: its password, if any, hidden.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if at := strings.LastIndex(raw, "@"); at >= 0 {
		return "***" + raw[at:]
	}
	return raw
}

func (v *validator) dataKey(p field.Path, key string) {
	if !dataKey.MatchString(key) {
		v.invalid(p, "item name wants letters, digits, '.', '_' and '-'")
	}
}

// Validate implements Object.
func (s *Secret) Validate(Resolver) field.ErrorList {
	v := newValidator(nil, s.Metadata.Namespace)
	v.dataObjectMeta("metadata", s.Metadata)
	dp := field.Path("datas")
	if len(s.Datas) == 0 {
		v.invalid(dp, "must hold at least one item")
	}
	for _, key := range sortedKeys(s.Datas) {
		kp := dp.Key(key)
		v.dataKey(kp, key)
		if s.Datas[key].Content == "" {
			v.required(kp.Child("content"))
		}
	}
	return v.errs
}

// Validate implements Object.
func (s *Service) Validate(Resolver) field.ErrorList {
	v := newValidator(nil, s.Metadata.Namespace)
	v.meta("metadata", s.Metadata)
	sp := field.Path("spec")
	if len(s.Spec.Selector) == 0 {
		v.required(sp.Child("selector"))
	}
	oneOf(v, sp.Child("type"), s.Spec.Type, ServiceClusterIP, ServiceNodePort, ServiceNone, ServiceIntegration)
	for i, ip := range s.Spec.ClusterIP {
		if net.ParseIP(ip) == nil {
			v.invalid(sp.Child("clusterIP").Index(i), "want an IP address, got %q", ip)
		}
	}
	names := map[string]int{}
	for i, port := range s.Spec.Ports {
		pp := sp.Child("ports").Index(i)
		if port.Name == "" {
			v.required(pp.Child("name"))
		} else if j, dup := names[port.Name]; dup {
			v.invalid(pp.Child("name"), "duplicate port name %q (also ports[%d])", port.Name, j)
		} else {
			names[port.Name] = i
		}
		switch strings.ToLower(port.Protocol) {
		case "http", "https", "tcp", "udp":
		case "":
			v.required(pp.Child("protocol"))
		default:
			v.invalid(pp.Child("protocol"), "want http, https, tcp or udp, got %q", port.Protocol)
		}
		v.portNumber(pp.Child("servicePort"), port.ServicePort)
		v.portNumber(pp.Child("targetPort"), port.TargetPort)
		if port.NodePort < 0 || port.NodePort > 65535 {
			v.invalid(pp.Child("nodePort"), "must be between 0 (none) and 65535, got %d", port.NodePort)
		}
	}
	return v.errs
}

func (v *validator) portNumber(p field.Path, port int) {
	if port < 1 || port > 65535 {
		v.invalid(p, "must be between 1 and 65535, got %d", port)
	}
}

// Validate implements Object.
func (c *Command) Validate(Resolver) field.ErrorList {
	v := newValidator(nil, c.Spec.CommandTargetRef.Namespace)
	sp := field.Path("spec")
	tp := sp.Child("commandTargetRef")
	switch kind := strings.ToLower(c.Spec.CommandTargetRef.Kind); kind {
	case string(KindDeployment), string(KindApplication):
	case "":
		v.required(tp.Child("kind"))
	default:
		v.invalid(tp.Child("kind"), "want Deployment or Application, got %q", c.Spec.CommandTargetRef.Kind)
	}
	v.name(tp.Child("name"), c.Spec.CommandTargetRef.Name)
	v.namespaceName(tp.Child("namespace"), c.Spec.CommandTargetRef.Namespace)
	for i, tg := range c.Spec.TaskGroups {
		if tg == "" {
			v.required(sp.Child("taskgroups").Index(i))
		}
	}
	if len(c.Spec.Command) == 0 || c.Spec.Command[0] == "" {
		v.required(sp.Child("command"))
	}
	for i, kv := range c.Spec.Env {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			v.invalid(sp.Child("env").Index(i), "want NAME=value, got %q", kv)
		}
	}
	if c.Spec.WorkingDir != "" && !path.IsAbs(c.Spec.WorkingDir) {
		v.invalid(sp.Child("workingDir"), "want an absolute path, got %q", c.Spec.WorkingDir)
	}
	v.nonNegative(sp.Child("reserveTime"), c.Spec.ReserveTime)
	return v.errs
}
