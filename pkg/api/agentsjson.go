package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
)

// writeAgents answers a list of agents as writeList does, to the byte,
// their instances, most of a fleet's answer, written into it: by agent,
// those encoded already (each after a comma) then those of the views,
// written by appendAgentInstance.
func writeAgents(w http.ResponseWriter, views []*apiv1.AgentView, encoded map[string][][]byte, next string) {
	bare := make([]*apiv1.AgentView, len(views))
	listed := make([]*apiv1.AgentView, 0, len(views)) // those whose instances are listed, in order
	for i, v := range views {
		c := *v
		if c.Instances != nil {
			c.Instances = []apiv1.AgentInstance{}
			listed = append(listed, v)
		}
		bare[i] = &c
	}
	out := map[string]any{"agents": bare}
	if next != "" {
		out["next"] = next
	}
	writeJSONFilled(w, http.StatusOK, out, noInstances, nil, agentInstanceDepth, func(i int, body []byte) []byte {
		v := listed[i]
		for _, e := range encoded[v.Hostname] {
			body = append(body, e...)
		}
		for _, inst := range v.Instances {
			body = appendAgentInstance(newline(append(body, ','), "  ", agentInstanceDepth), inst, agentInstanceDepth)
		}
		return body
	})
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
