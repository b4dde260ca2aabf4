package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
)

// writeAppView answers v as writeJSON does, to the byte, its instances
// written by appendInstanceView: dashboards poll the full view of every
// application, a thousand instances each, and the reflecting encoder and
// the indenter took most of the time of each read.
func writeAppView(w http.ResponseWriter, status int, v AppView) {
	instances := v.Status.Instances
	if instances == nil {
		writeJSON(w, status, v)
		return
	}
	v.Status.Instances = []apiv1.InstanceView{}
	writeJSONFilled(w, status, v, appInstancesMarker, appStatusMarker, appInstanceDepth, func(_ int, body []byte) []byte {
		// A running instance is about 700 bytes: grown once, not ten
		// times.
		body = slices.Grow(body, 700*len(instances))
		for i := range instances {
			body = appendInstanceView(newline(append(body, ','), "  ", appInstanceDepth), &instances[i], appInstanceDepth)
		}
		return body
	})
}

// appInstanceDepth is the depth of an instance in the view of an
// application: {"status": {"instances": [{…}]}}.
const appInstanceDepth = 3

var (
	appStatusMarker    = []byte(lines[:1+2] + `"status": {`)
	appInstancesMarker = []byte(lines[:1+2*(appInstanceDepth-1)] + `"instances": []`)
)

// instanceFields appends an instance's fields as the encoder writes them,
// each after the one before.
type instanceFields struct {
	dst   []byte
	depth int // the instance's
	n     int // fields written
}

func (f *instanceFields) name(name string) {
	if f.n > 0 {
		f.dst = append(f.dst, ',')
	}
	f.n++
	f.dst = append(append(append(newline(f.dst, "  ", f.depth+1), '"'), name...), `": `...)
}

func (f *instanceFields) str(name, s string, omitEmpty bool) {
	if s != "" || !omitEmpty {
		f.name(name)
		f.dst = appendJSONString(f.dst, s)
	}
}

func (f *instanceFields) int(name string, i int64) {
	f.name(name)
	f.dst = strconv.AppendInt(f.dst, i, 10)
}

func (f *instanceFields) bool(name string, b, omitEmpty bool) {
	if b || !omitEmpty {
		f.name(name)
		f.dst = strconv.AppendBool(f.dst, b)
	}
}

func (f *instanceFields) boolPtr(name string, b *bool) {
	if b != nil {
		f.bool(name, *b, false)
	}
}

// value appends v, when shown, as the encoder and the indenter write it:
// the rare parts of an instance (moves, updates, checks, pending).
func (f *instanceFields) value(name string, v any, shown bool) {
	if !shown {
		return
	}
	compact, err := json.Marshal(v)
	if err != nil {
		compact = []byte("null") // none of an instance's parts fails to encode
	}
	f.name(name)
	f.dst = indentJSONAt(f.dst, compact, "  ", f.depth+1)
}

// appendInstanceView appends v as the encoder writes it, indented by
// two spaces at depth.
func appendInstanceView(dst []byte, v *apiv1.InstanceView, depth int) []byte {
	f := &instanceFields{dst: append(dst, '{'), depth: depth}
	f.int("id", int64(v.ID))
	f.str("taskGroupID", v.TaskGroupID, false)
	f.str("previousTaskGroupID", v.PreviousTaskGroupID, true)
	f.str("state", v.State, false)
	f.bool("stopped", v.Stopped, true)
	f.str("phase", v.Phase, false)
	f.name("revision")
	f.dst = strconv.AppendUint(f.dst, v.Revision, 10)
	f.bool("ready", v.Ready, false)
	f.str("agent", v.Agent, true)
	f.str("host", v.Host, true)
	f.str("hostIP", v.HostIP, true)
	if len(v.Ports) > 0 {
		f.name("ports")
		f.dst = appendPorts(f.dst, v.Ports, depth+1)
	}
	f.boolPtr("healthy", v.Healthy)
	f.boolPtr("remoteHealthy", v.RemoteHealthy)
	f.str("remoteMessage", v.RemoteMessage, true)
	f.value("remoteChecks", v.RemoteChecks, len(v.RemoteChecks) > 0)
	f.int("restarts", int64(v.Restarts))
	f.str("message", v.Message, true)
	f.value("update", v.Update, v.Update != nil)
	f.value("preDelete", v.PreDelete, v.PreDelete != nil)
	f.value("move", v.Move, v.Move != nil)
	f.value("pending", v.Pending, v.Pending != nil)
	if len(v.Tasks) > 0 {
		f.name("tasks")
		f.dst = append(f.dst, '[')
		for i := range v.Tasks {
			if i > 0 {
				f.dst = append(f.dst, ',')
			}
			f.dst = appendTaskView(newline(f.dst, "  ", depth+2), &v.Tasks[i], depth+2)
		}
		f.dst = append(newline(f.dst, "  ", depth+1), ']')
	}
	f.value("allocated", v.Allocated, v.Allocated != nil)
	return append(newline(f.dst, "  ", depth), '}')
}

func appendTaskView(dst []byte, t *apiv1.TaskView, depth int) []byte {
	f := &instanceFields{dst: append(dst, '{'), depth: depth}
	f.str("name", t.Name, false)
	f.str("id", t.ID, false)
	f.str("state", t.State, false)
	f.boolPtr("healthy", t.Healthy)
	f.str("message", t.Message, true)
	f.value("container", t.Container, t.Container != nil)
	f.value("process", t.Process, t.Process != nil)
	return append(newline(f.dst, "  ", depth), '}')
}

// appendPorts appends ports, not empty, by name as the encoder sorts them.
func appendPorts(dst []byte, ports map[string]uint32, depth int) []byte {
	names := make([]string, 0, len(ports))
	for name := range ports {
		names = append(names, name)
	}
	slices.Sort(names)
	dst = append(dst, '{')
	for i, name := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(newline(dst, "  ", depth+1), name), ": "...)
		dst = strconv.AppendUint(dst, uint64(ports[name]), 10)
	}
	return append(newline(dst, "  ", depth), '}')
}
