package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
)

// writeAgents answers a list of agents as writeList does, to the byte.
// Their instances, most of a fleet's answer, are written by
// appendAgentInstance into the list encoded without them: the
// reflecting encoder and the indenter took most of the time of 100,000
// instances.
func writeAgents(w http.ResponseWriter, views []*apiv1.AgentView, next string) {
	bare := make([]*apiv1.AgentView, len(views))
	for i, v := range views {
		c := *v
		if c.Instances != nil {
			c.Instances = []apiv1.AgentInstance{}
		}
		bare[i] = &c
	}
	out := map[string]any{"agents": bare}
	if next != "" {
		out["next"] = next
	}
	compact, indented, answer := getBuffer(), getBuffer(), getBuffer()
	defer putBuffer(compact)
	defer putBuffer(indented)
	defer putBuffer(answer)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if err := json.NewEncoder(compact).Encode(out); err != nil {
		return
	}
	rest := indentJSON(indented.AvailableBuffer(), compact.Bytes(), "  ")
	body := answer.AvailableBuffer()
	for _, v := range views {
		if v.Instances == nil {
			continue
		}
		// The field is on its own line at the agents' fields' depth;
		// a string holding it would hold its quotes escaped.
		at := bytes.Index(rest, noInstances) + len(noInstances) - len("]")
		body = append(body, rest[:at]...)
		rest = rest[at:]
		if len(v.Instances) == 0 {
			continue
		}
		for i, inst := range v.Instances {
			if i > 0 {
				body = append(body, ',')
			}
			body = appendAgentInstance(newline(body, "  ", agentInstanceDepth), inst, agentInstanceDepth)
		}
		body = newline(body, "  ", agentInstanceDepth-1)
	}
	body = append(body, rest...)
	_, _ = w.Write(body)
}

// agentInstanceDepth is the depth of an instance in a list of agents:
// {"agents": [{"instances": [{…}]}]}.
const agentInstanceDepth = 4

// noInstances is an agent's empty instances in a list of agents.
var noInstances = []byte(lines[:1+2*(agentInstanceDepth-1)] + `"instances": []`)

// appendAgentInstance appends in as the encoder writes it, indented by
// two spaces at depth.
func appendAgentInstance(dst []byte, in apiv1.AgentInstance, depth int) []byte {
	field := func(dst []byte, name string) []byte {
		return append(append(newline(dst, "  ", depth+1), name...), ": "...)
	}
	dst = appendJSONString(field(append(dst, '{'), `"app"`), in.App)
	dst = strconv.AppendInt(field(append(dst, ','), `"index"`), int64(in.Index), 10)
	dst = appendJSONString(field(append(dst, ','), `"taskGroupID"`), in.ID)
	dst = appendJSONString(field(append(dst, ','), `"phase"`), in.Phase)
	if in.Successor {
		dst = append(field(append(dst, ','), `"successor"`), "true"...)
	}
	if in.Move != "" {
		dst = appendJSONString(field(append(dst, ','), `"move"`), in.Move)
	}
	return append(newline(dst, "  ", depth), '}')
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
