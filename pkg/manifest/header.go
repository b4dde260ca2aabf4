package manifest

import "github.com/bcs-mesos/bcs-mesos/pkg/constraint"

// WorkloadHeader is what every manifest that runs instances (application,
// process, deployment, daemonset) says before its spec: what it is, its
// name, and how its instances are restarted, killed and placed. Embedded
// without a json tag, its fields are the manifest's own top-level fields,
// for encoding/json and strictjson alike, in this order.
type WorkloadHeader struct {
	APIVersion    string                 `json:"apiVersion"`
	KindName      string                 `json:"kind"`
	Metadata      ObjectMeta             `json:"metadata"`
	RestartPolicy RestartPolicy          `json:"restartPolicy"`
	KillPolicy    KillPolicy             `json:"killPolicy"`
	Constraint    *constraint.Constraint `json:"constraint,omitempty"`
}

// Default sets the defaults of the header's structs; promoted, it is the
// workload's own Default (strictjson calls it before decoding the
// manifest), as no workload's spec has defaults of its own at that level.
func (h *WorkloadHeader) Default() {
	h.Metadata.Default()
	h.RestartPolicy.Default()
	h.KillPolicy.Default()
}

// as returns the header of the workload of kind that h's manifest runs as
// (a deployment's application, a daemonset's deployment).
func (h WorkloadHeader) as(kind Kind) WorkloadHeader {
	h.KindName = string(kind)
	return h
}
