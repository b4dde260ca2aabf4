package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// writeAgents answers a list of agents as writeList does, to the byte,
// a chunk at a time: each agent's object as object encodes it but for
// its instances, most of a fleet's answer, written into it: by agent,
// those encoded already (each after a comma) then those of the views,
// written by appendAgentInstance.
func writeAgents(w http.ResponseWriter, views []*apiv1.AgentView, encoded map[string][][]byte, next string, object func(*apiv1.AgentView) agentObject) {
	chunk := getBuffer()
	defer putBuffer(chunk)
	chunk.Grow(2 * chunkBytes)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	out := append(chunk.AvailableBuffer(), "{"+lines[:1+2]+`"agents": [`...)
	for i, v := range views {
		if i > 0 {
			out = append(out, ',')
		}
		o := object(v)
		out = append(newline(out, "  ", 2), o.head...)
		if o.listed {
			start := len(out)
			for _, e := range encoded[v.Hostname] {
				out = append(out, e...)
			}
			for _, inst := range v.Instances {
				out = appendAgentInstance(newline(append(out, ','), "  ", agentInstanceDepth), inst, agentInstanceDepth)
			}
			if len(out) == start {
				out = append(out, "[]"...)
			} else {
				out[start] = '[' // the first instance's comma
				out = append(newline(out, "  ", agentInstanceDepth-1), ']')
			}
		}
		out = append(out, o.tail...)
		if len(out) >= chunkBytes {
			_, _ = w.Write(out)
			out = out[:0]
		}
	}
	if len(views) > 0 {
		out = newline(out, "  ", 1)
	}
	out = append(out, ']')
	if next != "" {
		out = appendJSONString(append(newline(append(out, ','), "  ", 1), `"next": `...), next)
	}
	_, _ = w.Write(append(out, "\n}\n"...))
}

// agentObject is an agent's object in a list of agents, encoded: when
// listed, its instances' list goes between head and tail.
type agentObject struct {
	head, tail []byte
	listed     bool
}

// encodeAgentObject encodes v, its instances left out.
func encodeAgentObject(v *apiv1.AgentView) agentObject {
	bare := *v
	listed := bare.Instances != nil
	if listed {
		bare.Instances = []apiv1.AgentInstance{}
	}
	compact, err := json.Marshal(&bare)
	if err != nil { // an AgentView is strings, numbers and maps of strings
		panic(fmt.Sprintf("encode the view of agent %q: %v", v.Hostname, err))
	}
	encoded := indentJSONAt(make([]byte, 0, 2*len(compact)), compact, "  ", 2)
	if !listed {
		return agentObject{head: encoded}
	}
	at := bytes.Index(encoded, noInstances) + len(noInstances) - len("[]")
	return agentObject{head: encoded[:at:at], tail: encoded[at+len("[]"):], listed: true}
}

// agentObjects keeps the agents' objects of the lists the read view
// answered, each by what it was made of: an agent's fields are encoded
// again only when its records or its instances' sums change. The view's
// records are shared and never changed: a changed record is a new one.
type agentObjects struct {
	mu     sync.Mutex
	byHost map[string]keptAgentObject
}

type keptAgentObject struct {
	of     agentMadeOf
	object agentObject
}

// agentMadeOf is what an agent's object is made of in a join whose
// records are the read view's, on an agent neither draining nor tainted
// NoExecute (whose objects depend on the instances): its records, what
// the clock made of them, and its instances' sums.
type agentMadeOf struct {
	agent       *registry.Agent
	settings    *registry.AgentSettings
	schedulable bool
	used        apiv1.UsedView
	others      int
	listed      bool
}

// of is j's view v encoded, kept from an earlier join when made of the
// same.
func (k *agentObjects) of(j *agentJoin, v *apiv1.AgentView) agentObject {
	if v.Drain != nil || v.Evictions != nil {
		return encodeAgentObject(v)
	}
	rec := j.records[v.Hostname]
	made := agentMadeOf{agent: rec.agent, settings: rec.settings, schedulable: v.Schedulable, used: v.Used, others: v.Others, listed: v.Instances != nil}
	k.mu.Lock()
	kept, ok := k.byHost[v.Hostname]
	k.mu.Unlock()
	if ok && kept.of == made {
		return kept.object
	}
	o := encodeAgentObject(v)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.byHost == nil || len(k.byHost) > 2*len(j.all) { // agents gone: begin again
		k.byHost = map[string]keptAgentObject{}
	}
	k.byHost[v.Hostname] = keptAgentObject{of: made, object: o}
	return o
}

// agentInstanceDepth is the depth of an instance in a list of agents:
// {"agents": [{"instances": [{…}]}]}.
const agentInstanceDepth = 4

// noInstances is an agent's empty instances in a list of agents.
var noInstances = []byte(lines[:1+2*(agentInstanceDepth-1)] + `"instances": []`)

// appendAgentInstance appends in as the encoder writes it, indented by
// two spaces at depth.
func appendAgentInstance(dst []byte, in apiv1.AgentInstance, depth int) []byte {
	inner := lines[:1+2*(depth+1)]
	dst = append(append(append(dst, '{'), inner...), `"app": `...)
	dst = appendJSONString(dst, in.App)
	dst = append(append(append(dst, ','), inner...), `"index": `...)
	dst = strconv.AppendInt(dst, int64(in.Index), 10)
	dst = append(append(append(dst, ','), inner...), `"taskGroupID": `...)
	dst = appendJSONString(dst, in.ID)
	dst = append(append(append(dst, ','), inner...), `"phase": `...)
	dst = appendJSONString(dst, in.Phase)
	if in.Successor {
		dst = append(append(append(dst, ','), inner...), `"successor": true`...)
	}
	if in.Move != "" {
		dst = append(append(append(dst, ','), inner...), `"move": `...)
		dst = appendJSONString(dst, in.Move)
	}
	return append(append(dst, lines[:1+2*depth]...), '}')
}

// appendJSONString appends s quoted as the encoder does: printable ASCII
// as it is, anything else (quotes, backslashes, HTML's <, > and &,
// control and non-ASCII characters) escaped by the encoder itself.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s)
			return append(dst, quoted...)
		}
	}
	return append(append(append(dst, '"'), s...), '"')
}
