package launch

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Template is one compiled application version.
type Template struct {
	Kind      manifest.Kind // application (containers) or process
	Namespace string
	Name      string
	Version   uint64
	// Hash identifies what the instances run (see TemplateHash).
	Hash string
	// RestartGeneration is the revision's: a template that differs from
	// an instance's only by it restarts the instance with nothing to
	// change.
	RestartGeneration int
	// Req is what every instance needs from an agent.
	Req           *offer.Requirements
	RestartPolicy manifest.RestartPolicy
	KillGrace     time.Duration
	// Stateful instances stay on their agent through drains and drifts
	// unless forced.
	Stateful bool
	// RemoteChecks are the REMOTE_HTTP and REMOTE_TCP checks the scheduler
	// runs itself, with the task they belong to.
	RemoteChecks []RemoteCheck
	// Depends are the depends objects whose pods run next to every
	// instance, their namespaces filled in.
	Depends     []manifest.DependsRef
	tasks       []task
	network     manifest.NetworkMode
	networkType string
}

// RemoteCheck is a scheduler-side health check of one task.
type RemoteCheck struct {
	Task  int
	Check manifest.HealthCheck
}

// Name tells the check apart from the instance's others: its type and
// what it probes ("REMOTE_HTTP http_port /check", "REMOTE_TCP 8080").
func (rc RemoteCheck) Name() string {
	target := ""
	switch {
	case rc.Check.HTTP != nil:
		target = cmp.Or(rc.Check.HTTP.PortName, strconv.Itoa(rc.Check.HTTP.Port)) + " " + cmp.Or(rc.Check.HTTP.Path, "/")
	case rc.Check.TCP != nil:
		target = cmp.Or(rc.Check.TCP.PortName, strconv.Itoa(rc.Check.TCP.Port))
	}
	return strings.TrimSpace(string(rc.Check.Type) + " " + target)
}

// InstanceAddress is where clients reach a running instance.
type InstanceAddress struct {
	// HostIP is its agent's address.
	HostIP string
	// PodIP is the pod's own address (CNI and USER networks): the
	// network container's as the container executor reports it; ""
	// while unknown.
	PodIP string
	// HostPorts are the host ports it took, by port name.
	HostPorts map[string]uint32
}

// RemoteProbe is a remote check resolved against one instance.
type RemoteProbe struct {
	// Check is the REMOTE_* check as an HTTP or TCP check, its port the
	// one probed (0 when none resolves).
	Check proto.HealthCheck
	// Host is the address probed; "" when the instance has none.
	Host string
}

// Address is "host:port", what the check probes.
func (p RemoteProbe) Address() string {
	return net.JoinHostPort(p.Host, strconv.Itoa(p.Check.Port))
}

// RemoteProbes returns the REMOTE_HTTP and REMOTE_TCP checks as HTTP and
// TCP checks against the address a client of the instance uses, by its
// network: a pod of its own (CNI, USER) on the pod's IP, portName being
// the container port; BRIDGE on its agent at the host port docker
// publishes; HOST and processes on the agent, where they listen. A port
// given as a number is probed as it is on that address. A check without
// an address or port is returned with Host "" or port 0, which the
// prober reports as a failure naming what is missing.
func (t *Template) RemoteProbes(addr InstanceAddress) []RemoteProbe {
	host, ports := addr.HostIP, addr.HostPorts
	switch {
	case t.Kind == manifest.KindProcess:
	case strings.EqualFold(t.networkType, "cni"), t.network == manifest.NetworkUser:
		host, ports = addr.PodIP, t.containerPorts()
	case t.network == manifest.NetworkNone:
		host = ""
	}
	var out []RemoteProbe
	for _, rc := range t.RemoteChecks {
		hc := rc.Check
		pc := proto.HealthCheck{
			DelaySeconds: float64(hc.DelaySeconds), IntervalSeconds: float64(hc.IntervalSeconds),
			TimeoutSeconds: float64(hc.TimeoutSeconds), GracePeriodSeconds: float64(hc.GracePeriodSeconds),
			ConsecutiveFailures: hc.ConsecutiveFailures,
		}
		port, name := 0, ""
		switch hc.Type {
		case manifest.CheckRemoteHTTP:
			pc.Type, pc.Scheme, pc.Path, pc.Headers = string(manifest.CheckHTTP), hc.HTTP.Scheme, hc.HTTP.Path, hc.HTTP.Headers
			port, name = hc.HTTP.Port, hc.HTTP.PortName
		case manifest.CheckRemoteTCP:
			pc.Type = string(manifest.CheckTCP)
			port, name = hc.TCP.Port, hc.TCP.PortName
		}
		if port <= 0 {
			port = int(ports[name])
		}
		pc.Port, pc.PortName = port, name
		out = append(out, RemoteProbe{Check: pc, Host: host})
	}
	return out
}

// containerPorts are the ports the containers listen on, by name.
func (t *Template) containerPorts() map[string]uint32 {
	ports := map[string]uint32{}
	for _, tk := range t.tasks {
		for _, p := range tk.ports {
			ports[p.name] = uint32(p.containerPort)
		}
	}
	return ports
}

// task is one container or process of the template.
type task struct {
	name      string
	resources proto.Resources
	ports     []port
	process   *manifest.ProcessSpec
	container *manifest.Container
	checks    bool // it has executor-side health checks
}

// port is one port of a task; request indexes Req.Ports when the scheduler
// allocates a host port for it, else -1.
type port struct {
	name          string
	containerPort int
	hostPort      int
	protocol      string
	request       int
}

// Revision names what Compile compiles: an application version and its
// restart generation (a rolling restart makes a new template of the same
// spec).
type Revision struct {
	Version           uint64
	RestartGeneration int
}

// Compile prepares a validated application, process or deployment
// manifest (a deployment runs its template).
func Compile(obj manifest.Object, rev Revision) (*Template, error) {
	meta, ok := manifest.MetaOf(obj)
	if !ok {
		return nil, fmt.Errorf("kind %q cannot run: %w", obj.Kind(), errdefs.ErrInvalidArgument)
	}
	obj, err := manifest.Workload(obj)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, errdefs.ErrInvalidArgument)
	}
	hash, err := TemplateHash(obj, rev.RestartGeneration)
	if err != nil {
		return nil, err
	}
	t := &Template{Kind: obj.Kind(), Namespace: meta.Namespace, Name: meta.Name, Version: rev.Version, Hash: hash,
		RestartGeneration: rev.RestartGeneration, Depends: manifest.DependsOf(obj)}
	var cons *constraint.Constraint
	switch m := obj.(type) {
	case *manifest.Process:
		t.RestartPolicy, cons, t.Stateful = m.RestartPolicy, m.Constraint, m.Stateful
		t.KillGrace = time.Duration(m.KillPolicy.GracePeriod) * time.Second
		for i := range m.Spec.Template.Spec.Processes {
			p := &m.Spec.Template.Spec.Processes[i]
			tk := task{name: p.ProcName, process: p}
			for _, pp := range p.Ports {
				tk.ports = append(tk.ports, port{name: pp.Name, hostPort: pp.HostPort, protocol: pp.Protocol})
			}
			if err := t.addTask(tk, p.Resources, p.HealthChecks); err != nil {
				return nil, err
			}
		}
	case *manifest.Application:
		t.RestartPolicy, cons, t.Stateful = m.RestartPolicy, m.Constraint, m.Stateful
		t.KillGrace = time.Duration(m.KillPolicy.GracePeriod) * time.Second
		spec := &m.Spec.Template.Spec
		t.network, t.networkType = spec.NetworkMode, spec.NetworkType
		for i := range spec.Containers {
			c := &spec.Containers[i]
			tk := task{name: fmt.Sprintf("container-%d", i), container: c}
			for _, cp := range c.Ports {
				tk.ports = append(tk.ports, port{name: cp.Name, containerPort: cp.ContainerPort, hostPort: cp.HostPort, protocol: cp.Protocol})
			}
			if err := t.addTask(tk, c.Resources, c.HealthChecks); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("kind %q cannot run: %w", obj.Kind(), errdefs.ErrInvalidArgument)
	}
	if cons != nil && len(cons.IntersectionItems) > 0 {
		compiled, err := constraint.Compile(cons)
		if err != nil {
			return nil, err
		}
		t.Req.Constraint = compiled
	}
	for k, v := range meta.Labels {
		t.Req.Labels = append(t.Req.Labels, k+":"+v)
	}
	return t, nil
}

// TemplateHash identifies what the instances of a workload manifest run:
// its pod template, constraint and kill policy, and the restart
// generation. The instance count, the restart policy, the metadata, the
// update strategy and the depends references (their pods run beside the
// instance, not in it) are left out: changing them updates no instance.
func TemplateHash(workload manifest.Object, restartGeneration int) (string, error) {
	var part struct {
		Kind              manifest.Kind          `json:"kind"`
		KillPolicy        manifest.KillPolicy    `json:"killPolicy"`
		Constraint        *constraint.Constraint `json:"constraint,omitempty"`
		Template          any                    `json:"template"`
		RestartGeneration int                    `json:"restartGeneration,omitempty"`
	}
	part.Kind, part.RestartGeneration = workload.Kind(), restartGeneration
	switch m := workload.(type) {
	case *manifest.Application:
		tmpl := m.Spec.Template
		tmpl.Spec.Depends = nil
		part.KillPolicy, part.Constraint, part.Template = m.KillPolicy, m.Constraint, tmpl
	case *manifest.Process:
		tmpl := m.Spec.Template
		tmpl.Spec.Depends = nil
		part.KillPolicy, part.Constraint, part.Template = m.KillPolicy, m.Constraint, tmpl
	default:
		return "", fmt.Errorf("kind %q has no pod template: %w", workload.Kind(), errdefs.ErrInvalidArgument)
	}
	data, err := json.Marshal(part)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]), nil
}

// NetworkProcess is the Network of processes: the agent's.
const NetworkProcess = "process"

// Network names how instances are networked: NetworkProcess, or the
// containers' mode and type. An in-place update keeps the task group's
// network, so it needs the same.
func (t *Template) Network() string {
	if t.Kind == manifest.KindProcess {
		return NetworkProcess
	}
	return string(t.network) + "/" + strings.ToLower(t.networkType)
}

// TaskHasChecks reports whether task i has health checks the executor
// runs: it is ready only once they pass.
func (t *Template) TaskHasChecks(i int) bool { return t.tasks[i].checks }

// addTask adds a task, its resources to the requirements and its host
// ports to the port requests.
func (t *Template) addTask(tk task, res manifest.Resources, checks []manifest.HealthCheck) error {
	if t.Req == nil {
		t.Req = &offer.Requirements{App: t.Namespace + "/" + t.Name}
	}
	var err error
	tk.resources, err = resources(res)
	if err != nil {
		return err
	}
	tk.resources.PinCPUs = tk.container != nil && tk.container.Cpuset
	t.Req.Resources.CPUs += tk.resources.CPUs
	t.Req.Resources.Mem += tk.resources.MemMB
	for i := range tk.ports {
		p := &tk.ports[i]
		p.request = -1
		switch {
		case tk.process != nil, t.network == manifest.NetworkBridge:
			// Processes share the agent's network; BRIDGE maps hostPort.
			p.request = len(t.Req.Ports)
			t.Req.Ports = append(t.Req.Ports, offer.PortRequest{Name: p.name, HostPort: uint32(p.hostPort)})
		case t.network == manifest.NetworkHost:
			// HOST mode listens on containerPort itself; 0 is allocated.
			p.request = len(t.Req.Ports)
			t.Req.Ports = append(t.Req.Ports, offer.PortRequest{Name: p.name, HostPort: uint32(p.containerPort)})
		}
	}
	for _, hc := range checks {
		if hc.Type == manifest.CheckRemoteHTTP || hc.Type == manifest.CheckRemoteTCP {
			t.RemoteChecks = append(t.RemoteChecks, RemoteCheck{Task: len(t.tasks), Check: hc})
		}
	}
	tk.checks = len(executorChecks(checks)) > 0
	t.tasks = append(t.tasks, tk)
	return nil
}

// resources reads a task's resources: what it takes from an offer
// (manifest.Resources.Taken), and its bounded limits.
func resources(res manifest.Resources) (proto.Resources, error) {
	var out proto.Resources
	limCPU, err := res.Limits.CPU.Parse()
	if err != nil {
		return out, err
	}
	limMem, err := res.Limits.Memory.Parse()
	if err != nil {
		return out, err
	}
	take, err := res.Taken()
	out.CPULimit, out.MemLimitMB, out.CPUs, out.MemMB = bounded(limCPU), bounded(limMem), take.CPUs, take.MemMB
	return out, err
}

func bounded(a manifest.Amount) float64 {
	if !a.Set || a.Unlimited {
		return 0
	}
	return a.Value()
}

// Tasks returns how many tasks an instance has.
func (t *Template) Tasks() int { return len(t.tasks) }

// TaskResources returns the scalar resources task i takes from an offer.
func (t *Template) TaskResources(i int) (cpus, memMB float64) {
	return t.tasks[i].resources.CPUs, t.tasks[i].resources.MemMB
}

// TaskHostPorts returns the host ports task i takes, given the ports the
// matcher assigned to the instance (one per Req.Ports entry).
func (t *Template) TaskHostPorts(i int, assigned []offer.AssignedPort) []uint32 {
	var out []uint32
	for _, p := range t.tasks[i].ports {
		if p.request >= 0 {
			out = append(out, assigned[p.request].Port)
		}
	}
	return out
}

// Instance is what varies per launch of an instance.
type Instance struct {
	Index       int
	TaskGroupID string
	HostIP      string
	Ports       []offer.AssignedPort // from the placement, one per Req.Ports entry
	WorkBaseDir string
	RunBaseDir  string
	// SchedulerURL is ${scheduler_url}.
	SchedulerURL string
	// Identity is the namespace's identity on the agents, which every
	// task carries; nil for none.
	Identity *proto.Identity
	// Egress is the egress policy of the template's namespace, which every
	// task spec carries (shared, not copied); nil: none.
	Egress *proto.Egress
}

// Specs returns the executor task specs of one instance: manifest
// variables expanded, host ports filled in, configmap and secret items
// resolved against r.
func (t *Template) Specs(inst Instance, r manifest.Resolver) ([]*proto.TaskSpec, error) {
	ports := map[string]uint32{}
	for _, tk := range t.tasks {
		for _, p := range tk.ports {
			switch {
			case p.request >= 0:
				ports[p.name] = inst.Ports[p.request].Port
			default:
				ports[p.name] = uint32(p.containerPort)
			}
		}
	}
	vars := manifest.Instance{
		Namespace: t.Namespace, Name: t.Name, Index: inst.Index, HostIP: inst.HostIP, Ports: ports,
		WorkBaseDir: inst.WorkBaseDir, RunBaseDir: inst.RunBaseDir, SchedulerURL: inst.SchedulerURL,
		TaskGroupID: inst.TaskGroupID, TaskGroupName: fmt.Sprintf("%s.%s.%d", t.Namespace, t.Name, inst.Index),
	}
	specs := make([]*proto.TaskSpec, len(t.tasks))
	for i, tk := range t.tasks {
		spec := &proto.TaskSpec{
			Instance: proto.Instance{Namespace: t.Namespace, App: t.Name, Index: inst.Index,
				TaskGroupID: inst.TaskGroupID, Version: t.Version},
			Name:                   tk.name,
			KillGracePeriodSeconds: t.KillGrace.Seconds(),
			Resources:              tk.resources,
			Identity:               inst.Identity,
			Egress:                 inst.Egress,
		}
		for _, p := range tk.ports {
			pp := proto.Port{Name: p.name, ContainerPort: p.containerPort, Protocol: strings.ToLower(p.protocol)}
			if p.request >= 0 {
				pp.HostPort = int(inst.Ports[p.request].Port)
			}
			if tk.process != nil || t.network == manifest.NetworkHost {
				pp.ContainerPort = pp.HostPort
			}
			spec.Ports = append(spec.Ports, pp)
		}
		var err error
		switch {
		case tk.process != nil:
			err = t.processSpec(spec, *tk.process, vars, r)
		default:
			err = t.containerSpec(spec, *tk.container, vars, r)
		}
		if err != nil {
			return nil, fmt.Errorf("instance %d task %s: %w", inst.Index, tk.name, err)
		}
		specs[i] = spec
	}
	return specs, nil
}

func (t *Template) processSpec(spec *proto.TaskSpec, p manifest.ProcessSpec, vars manifest.Instance, r manifest.Resolver) error {
	p, err := manifest.ExpandProcess(p, vars)
	if err != nil {
		return err
	}
	ps := &proto.ProcessSpec{
		ProcName: p.ProcName, User: p.User, WorkPath: p.WorkPath, PidFile: p.PidFile,
		StartCmd: p.StartCmd, StartGracePeriod: float64(p.StartGracePeriod),
		StopCmd: p.StopCmd, ReloadCmd: p.ReloadCmd, RestartCmd: p.RestartCmd,
		WorkBaseDir: vars.WorkBaseDir, RunBaseDir: vars.RunBaseDir,
	}
	for _, u := range p.URIs {
		ps.URIs = append(ps.URIs, proto.URI{Value: u.Value, User: u.User, Password: u.Pwd,
			PullPolicy: string(u.PullPolicy), OutputDir: u.OutputDir})
	}
	spec.Process = ps
	for _, e := range p.Env {
		spec.Env = append(spec.Env, proto.EnvVar{Name: e.Name, Value: e.Value})
	}
	spec.HealthChecks = executorChecks(p.HealthChecks)
	return injectData(spec, vars.Namespace, p.ConfigMaps, p.Secrets, r)
}

func (t *Template) containerSpec(spec *proto.TaskSpec, c manifest.Container, vars manifest.Instance, r manifest.Resolver) error {
	c, err := manifest.ExpandContainer(c, vars)
	if err != nil {
		return err
	}
	cs := &proto.ContainerSpec{
		Image: c.Image, PullPolicy: string(c.ImagePullPolicy), PullUser: c.ImagePullUser, PullPassword: c.ImagePullPasswd,
		Command: c.Command, Args: c.Args, Privileged: c.Privileged, Hostname: c.Hostname,
		NetworkMode: string(t.network), NetworkType: t.networkType,
	}
	for _, p := range c.Parameters {
		cs.Parameters = append(cs.Parameters, proto.Parameter{Key: p.Key, Value: p.Value})
	}
	for _, v := range c.Volumes {
		cs.Volumes = append(cs.Volumes, proto.Volume{HostPath: v.Volume.HostPath, MountPath: v.Volume.MountPath, ReadOnly: v.Volume.ReadOnly})
	}
	spec.Container = cs
	for _, e := range c.Env {
		value := e.Value
		if e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil {
			value = resourceField(spec.Resources, e.ValueFrom.ResourceFieldRef.Resource)
		}
		spec.Env = append(spec.Env, proto.EnvVar{Name: e.Name, Value: value})
	}
	spec.HealthChecks = executorChecks(c.HealthChecks)
	return injectData(spec, vars.Namespace, c.ConfigMaps, c.Secrets, r)
}

// resourceField is the value of an env valueFrom.resourceFieldRef.
func resourceField(res proto.Resources, name string) string {
	format := func(v float64) string { return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".") }
	switch name {
	case "requests.cpu":
		return format(res.CPUs)
	case "requests.memory":
		return format(res.MemMB)
	case "limits.cpu":
		return format(res.CPULimit)
	case "limits.memory":
		return format(res.MemLimitMB)
	}
	return ""
}

// executorChecks keeps the checks the executor runs (not REMOTE_*).
func executorChecks(checks []manifest.HealthCheck) []proto.HealthCheck {
	var out []proto.HealthCheck
	for _, hc := range checks {
		pc := proto.HealthCheck{
			Type: string(hc.Type), DelaySeconds: float64(hc.DelaySeconds), IntervalSeconds: float64(hc.IntervalSeconds),
			TimeoutSeconds: float64(hc.TimeoutSeconds), GracePeriodSeconds: float64(hc.GracePeriodSeconds),
			ConsecutiveFailures: hc.ConsecutiveFailures,
		}
		switch hc.Type {
		case manifest.CheckHTTP:
			pc.Port, pc.PortName, pc.Scheme, pc.Path, pc.Headers = hc.HTTP.Port, hc.HTTP.PortName, hc.HTTP.Scheme, hc.HTTP.Path, hc.HTTP.Headers
		case manifest.CheckTCP:
			pc.Port, pc.PortName = hc.TCP.Port, hc.TCP.PortName
		case manifest.CheckCommand:
			pc.Command = hc.Command.Value
		default:
			continue
		}
		out = append(out, pc)
	}
	return out
}

// MissingReference is a configmap or secret a launch needs that does not
// exist, or lacks an item: the launch can succeed once it is written.
type MissingReference struct {
	Kind      manifest.Kind // KindConfigMap or KindSecret
	Namespace string
	Name      string
	Item      string // the missing item; "" when the object is missing
}

// Ref names the configmap or secret: "configmap ns/name".
func (m *MissingReference) Ref() string { return string(m.Kind) + " " + m.Namespace + "/" + m.Name }

func (m *MissingReference) Error() string {
	if m.Item != "" {
		return fmt.Sprintf("%s has no item %q: %v", m.Ref(), m.Item, errdefs.ErrNotFound)
	}
	return fmt.Sprintf("%s: %v", m.Ref(), errdefs.ErrNotFound)
}

func (m *MissingReference) Unwrap() error { return errdefs.ErrNotFound }

// injectData resolves configmap and secret items into env and files.
func injectData(spec *proto.TaskSpec, namespace string, cms []manifest.ConfigMapRef, secrets []manifest.SecretRef, r manifest.Resolver) error {
	for _, ref := range cms {
		cm, ok := r.ConfigMap(namespace, ref.Name)
		missing := &MissingReference{Kind: manifest.KindConfigMap, Namespace: namespace, Name: ref.Name}
		if !ok {
			return missing
		}
		for _, item := range ref.Items {
			data, ok := cm.Datas[item.DataKey]
			if ok && data.Type != manifest.ConfigDataFile {
				spec.Remote = append(spec.Remote, remoteItem(missing.Ref(), item, data))
				continue
			}
			if err := injectItem(spec, missing, item.DataKey, data.Content, ok, item.Type, item.KeyOrPath, item.ReadOnly, item.User); err != nil {
				return err
			}
		}
	}
	for _, ref := range secrets {
		s, ok := r.Secret(namespace, ref.SecretName)
		missing := &MissingReference{Kind: manifest.KindSecret, Namespace: namespace, Name: ref.SecretName}
		if !ok {
			return missing
		}
		for _, item := range ref.Items {
			data, ok := s.Datas[item.DataKey]
			// A secret's file is for its owner to read, never to change.
			if err := injectItem(spec, missing, item.DataKey, data.Content, ok, item.Type, item.KeyOrPath, true, item.User); err != nil {
				return err
			}
		}
	}
	return nil
}

// remoteItem is a configmap item the executor fetches (types http,
// https, ftp) and injects as item says; source names the configmap.
func remoteItem(source string, item manifest.ConfigMapItem, data manifest.ConfigMapData) proto.RemoteItem {
	r := proto.RemoteItem{Source: fmt.Sprintf("%s item %q", source, item.DataKey), Type: data.Type, URL: data.Content,
		User: data.RemoteUser, Password: data.RemotePasswd}
	if item.Type == manifest.ItemEnv {
		r.Env = item.KeyOrPath
	} else {
		r.File = &proto.File{Path: item.KeyOrPath, ReadOnly: item.ReadOnly, User: item.User}
	}
	return r
}

// injectItem decodes one item's base64 content into an env var or a file;
// source names the object it comes from.
func injectItem(spec *proto.TaskSpec, source *MissingReference, key, content string, found bool, typ, keyOrPath string, readOnly bool, user string) error {
	if !found {
		missing := *source
		missing.Item = key
		return &missing
	}
	decoded, err := base64.StdEncoding.DecodeString(content)
	if err != nil {
		return fmt.Errorf("%s item %q: content is not base64: %w", source.Ref(), key, errdefs.ErrInvalidArgument)
	}
	if typ == manifest.ItemEnv {
		spec.Env = append(spec.Env, proto.EnvVar{Name: keyOrPath, Value: string(decoded)})
		return nil
	}
	spec.Files = append(spec.Files, proto.File{Path: keyOrPath, Content: decoded, ReadOnly: readOnly, User: user})
	return nil
}
