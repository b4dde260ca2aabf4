package manifest

import (
	"path"
	"reflect"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// Instance is what the variables of one instance (pod) resolve to.
type Instance struct {
	// Namespace and Name are the manifest's metadata.namespace and
	// metadata.name: ${namespace} and ${processname}, ${bcs.namespace} and
	// ${bcs.appname}.
	Namespace string
	Name      string
	// Index is the pod index: ${instanceid}, ${bcs.instanceid}.
	Index int
	// HostIP is the agent's address: ${hostip}, ${bcs.hostip}.
	HostIP string
	// Ports maps every port name of the pod to its port, random ones
	// included: ${ports.<name>}, ${bcs.ports.<name>}.
	Ports map[string]uint32
	// WorkBaseDir and RunBaseDir are the directories the executor gives a
	// process pod: ${work_base_dir}, ${run_base_dir}.
	WorkBaseDir string
	RunBaseDir  string
	// SchedulerURL is the address of the scheduler's API, which also
	// serves packages under /files/: ${scheduler_url}.
	SchedulerURL string
	// TaskGroupID and TaskGroupName name the task group of a container:
	// ${bcs.taskgroupid}, ${bcs.taskgroupname}.
	TaskGroupID   string
	TaskGroupName string
}

// ExpandProcess returns a deep copy of spec with the variables of every
// string replaced for inst (seed 000: ${namespace}, ${processname},
// ${instanceid}, ${hostip}, ${ports.<name>}, ${work_base_dir},
// ${run_base_dir}, ${workPath}, ${pidFile}; and bcs's ${scheduler_url}). ${workPath} and ${pidFile} are
// the expanded workPath and pidFile, which may refer to each other but not
// in a cycle. pidFile and uris[].outputDir must be absolute once expanded.
// The error is a field.ErrorList with paths relative to the process
// ("startCmd: unknown variable ..."). spec itself is never changed.
func ExpandProcess(spec ProcessSpec, inst Instance) (ProcessSpec, error) {
	out, errs := expandProcess(&spec, inst, "")
	if len(errs) > 0 {
		return ProcessSpec{}, errs
	}
	return out, nil
}

// ExpandContainer returns a deep copy of c with the ${bcs.*} variables of
// its env values replaced for inst. The container executor's own
// variables (ExecutorVariables, ${PORT_<name>} of c's ports) are left for
// it to replace at launch with what the container sees (its CNI address
// is known only then). The error is a field.ErrorList with paths
// relative to the container ("env[1].value: ..."). c itself is never
// changed.
func ExpandContainer(c Container, inst Instance) (Container, error) {
	out, errs := expandContainer(&c, inst, "")
	if len(errs) > 0 {
		return Container{}, errs
	}
	return out, nil
}

// Bounds of expansion: variables referring to one another (${workPath}
// may hold ${pidFile} many times, and a command ${workPath} many times)
// multiply a small manifest into gigabytes. No command line or path needs
// more than MaxExpandedField bytes; a whole process or container no more
// than MaxExpandedTotal.
const (
	MaxExpandedField = 64 << 10
	MaxExpandedTotal = 1 << 20
)

// Process variables referring to other fields of the process.
const (
	varWorkPath = "workPath"
	varPidFile  = "pidFile"
)

// ExecutorVariables are the variables the container executor sets in
// every container and replaces in its env values at launch (seed 001),
// besides ExecutorPortPrefix<name> for each named port of the container:
// HOST (the CNI address, else the agent's), BCS_NODE_ADDR (the agent's),
// BCS_POD_ID and BCS_CNI_NAME (the CNI interface; empty in CNM modes).
var ExecutorVariables = []string{"HOST", "BCS_NODE_ADDR", "BCS_POD_ID", "BCS_CNI_NAME"}

// ExecutorPortPrefix starts the executor's variable of a named port: its
// host port, else its container port.
const ExecutorPortPrefix = "PORT_"

// The variables an unknown one's error lists, as a manifest writes them.
var (
	processVariables = "${namespace}, ${processname}, ${instanceid}, ${hostip}, ${ports.<name>}, " +
		"${work_base_dir}, ${run_base_dir}, ${scheduler_url}, ${workPath}, ${pidFile}"
	containerVariables = "${bcs.namespace}, ${bcs.appname}, ${bcs.instanceid}, ${bcs.hostip}, ${bcs.ports.<name>}, " +
		"${bcs.taskgroupid}, ${bcs.taskgroupname}, and the container executor's ${" + strings.Join(ExecutorVariables, "}, ${") +
		"}, ${" + ExecutorPortPrefix + "<name>}"
)

func expandProcess(spec *ProcessSpec, inst Instance, base field.Path) (ProcessSpec, field.ErrorList) {
	e := &expander{
		vars: map[string]string{
			"namespace":     inst.Namespace,
			"processname":   inst.Name,
			"instanceid":    strconv.Itoa(inst.Index),
			"hostip":        inst.HostIP,
			"work_base_dir": inst.WorkBaseDir,
			"run_base_dir":  inst.RunBaseDir,
			"scheduler_url": inst.SchedulerURL,
		},
		portPrefix: "ports.",
		ports:      inst.Ports,
		known:      "a process knows " + processVariables,
		refs: map[string]*fieldRef{
			varWorkPath: {raw: spec.WorkPath, path: base.Child("workPath")},
			varPidFile:  {raw: spec.PidFile, path: base.Child("pidFile")},
		},
	}
	// Resolve the two referable fields first, so their own problems are
	// reported once, at their own paths.
	e.resolve(varWorkPath, nil)
	e.resolve(varPidFile, nil)
	out := rewrite(reflect.ValueOf(*spec), base, func(p field.Path, s string) string {
		for _, r := range e.refs {
			if p == r.path {
				return r.value
			}
		}
		return e.expand(p, s, nil)
	}).Interface().(ProcessSpec)

	if pid := e.refs[varPidFile]; spec.PidFile != "" && !pid.failed && !e.failedAt(pid.path) && !path.IsAbs(pid.value) {
		e.fail(pid.path, "must be an absolute path once expanded, got %q", pid.value)
	}
	for i, u := range out.URIs {
		p := base.Child("uris").Index(i).Child("outputDir")
		if u.OutputDir != "" && !path.IsAbs(u.OutputDir) && !e.failedAt(p) {
			e.fail(p, "must be an absolute path once expanded, got %q", u.OutputDir)
		}
	}
	return out, e.errs
}

func expandContainer(c *Container, inst Instance, base field.Path) (Container, field.ErrorList) {
	e := &expander{
		vars: map[string]string{
			"bcs.namespace":     inst.Namespace,
			"bcs.appname":       inst.Name,
			"bcs.instanceid":    strconv.Itoa(inst.Index),
			"bcs.hostip":        inst.HostIP,
			"bcs.taskgroupid":   inst.TaskGroupID,
			"bcs.taskgroupname": inst.TaskGroupName,
		},
		portPrefix: "bcs.ports.",
		ports:      inst.Ports,
		known:      "a container's env knows " + containerVariables,
		executor:   map[string]bool{},
	}
	for _, name := range ExecutorVariables {
		e.executor[name] = true
	}
	for _, p := range c.Ports {
		e.executor[ExecutorPortPrefix+p.Name] = true
	}
	out := rewrite(reflect.ValueOf(*c), base, nil).Interface().(Container)
	for i := range out.Env {
		out.Env[i].Value = e.expand(base.Child("env").Index(i).Child("value"), out.Env[i].Value, nil)
	}
	return out, e.errs
}

// fieldRef is a field other fields may refer to as a variable.
type fieldRef struct {
	raw    string
	path   field.Path
	value  string
	done   bool
	failed bool
}

// expander replaces ${name} references in strings.
type expander struct {
	vars       map[string]string
	portPrefix string
	ports      map[string]uint32
	// known lists the variables, for the error naming an unknown one.
	known string
	// executor are the variables left as written for the executor.
	executor   map[string]bool
	refs       map[string]*fieldRef
	cycleFound bool
	// total is what expansion has produced so far; tooBig says
	// MaxExpandedTotal was passed (reported once).
	total  int
	tooBig bool
	errs   field.ErrorList
}

func (e *expander) fail(p field.Path, format string, args ...any) {
	e.errs = append(e.errs, field.Invalid(p, format, args...))
}

func (e *expander) failedAt(p field.Path) bool {
	for _, err := range e.errs {
		if err.Path == p {
			return true
		}
	}
	return false
}

// expand replaces every ${name} of s, which sits at p. stack lists the
// referable fields being resolved, to catch cycles.
func (e *expander) expand(p field.Path, s string, stack []string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			e.total += b.Len()
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			e.fail(p, "unterminated variable reference %q", s[i:])
			b.WriteString(s[i:])
			return b.String()
		}
		name := s[i+2 : i+2+j]
		v := e.lookup(p, name, stack)
		if !e.withinBounds(p, b.Len()+len(v)) {
			return ""
		}
		b.WriteString(v)
		s = s[i+2+j+1:]
	}
}

// withinBounds counts n more bytes of expansion at p and reports whether
// they stay within MaxExpandedField and MaxExpandedTotal; it fails p when
// they do not.
func (e *expander) withinBounds(p field.Path, n int) bool {
	switch {
	case e.tooBig:
		return false
	case n > MaxExpandedField:
		e.fail(p, "expands to more than %d bytes (variables referring to each other multiply)", MaxExpandedField)
	case e.total+n > MaxExpandedTotal:
		e.tooBig = true
		e.fail(p, "the variables of the whole spec expand to more than %d bytes", MaxExpandedTotal)
	default:
		return true
	}
	return false
}

func (e *expander) lookup(p field.Path, name string, stack []string) string {
	ref := "${" + name + "}"
	if _, ok := e.refs[name]; ok {
		return e.resolve(name, stack)
	}
	if v, ok := e.vars[name]; ok {
		return v
	}
	if e.executor[name] {
		return ref
	}
	if port, ok := strings.CutPrefix(name, ExecutorPortPrefix); ok && e.executor != nil {
		e.fail(p, "unknown variable %q: the container has no port named %q", ref, port)
		return ref
	}
	if port, ok := strings.CutPrefix(name, e.portPrefix); ok {
		if v, ok := e.ports[port]; ok {
			return strconv.FormatUint(uint64(v), 10)
		}
		e.fail(p, "unknown variable %q: no port named %q", ref, port)
		return ref
	}
	e.fail(p, "unknown variable %q; %s", ref, e.known)
	return ref
}

// resolve returns the expanded value of the referable field name.
func (e *expander) resolve(name string, stack []string) string {
	r := e.refs[name]
	if r.done {
		return r.value
	}
	for i, s := range stack {
		if s != name {
			continue
		}
		cycle := make([]string, 0, len(stack)-i+1)
		for _, n := range append(stack[i:len(stack):len(stack)], name) {
			cycle = append(cycle, "${"+n+"}")
			e.refs[n].failed = true
		}
		if !e.cycleFound {
			e.cycleFound = true
			e.fail(e.refs[stack[i]].path, "variables refer to each other in a cycle: %s", strings.Join(cycle, " → "))
		}
		return ""
	}
	inner := append(stack[:len(stack):len(stack)], name)
	v := e.expand(r.path, r.raw, inner)
	r.value, r.done = v, true
	return v
}
