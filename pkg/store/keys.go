package store

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Kind is the first segment of a key: the kind of object stored under it.
type Kind string

// The kinds of object bcs-scheduler stores; doc.go shows the full layout.
const (
	KindApplication  Kind = "apps"
	KindAppVersion   Kind = "appversions"
	KindTaskGroup    Kind = "taskgroups"
	KindTask         Kind = "tasks"
	KindRollout      Kind = "rollouts"
	KindHookTemplate Kind = "hooktemplates"
	KindHookRun      Kind = "hookruns"
	KindConfigMap    Kind = "configmaps"
	KindSecret       Kind = "secrets"
	KindService      Kind = "services"
	KindDepends      Kind = "depends"
	KindAgent        Kind = "agents"
	KindSweep        Kind = "sweeps"
	// KindAgentSettings are the operator's settings of an agent (cordon,
	// taints, drain), by hostname: they outlive the agent's Mesos ID.
	KindAgentSettings Kind = "agentsettings"
	// KindAllocation marks an instance allocated (a game session runs on
	// it): kept from scale-downs and rollouts until released.
	KindAllocation Kind = "allocations"
	// KindAllocationEpoch is rewritten by every allocation of an
	// application's instances: a scale-down checks this one key, not
	// one per instance it removes, to know none was allocated since read.
	KindAllocationEpoch Kind = "allocationepochs"
)

// The notify callbacks (as shown), their URLs (sealed: they may hold
// credentials) and the notifications with their deliveries.
const (
	KindNotifyCallback Kind = "notifycallbacks"
	KindNotifyTarget   Kind = "notifytargets"
	KindNotification   Kind = "notifications"
)

// The namespaces' own uids on the agents, both ways: a namespace's uid,
// and the namespace a uid was given to, created together once.
const (
	KindNamespaceUID Kind = "namespaceuids"
	KindUID          Kind = "uids"
)

// The autoscalers (manifest objects, API-written), their status (written
// by the leader's controller) and the index of the workloads they scale,
// one autoscaler per workload.
const (
	KindAutoscaler       Kind = "autoscalers"
	KindAutoscalerStatus Kind = "autoscalerstatus"
	KindAutoscaleTarget  Kind = "autoscaletargets"
)

// KindAudit is the audit log of the API's writes.
const KindAudit Kind = "audit"

// FrameworkIDKey holds the Mesos framework ID the scheduler re-registers with.
const FrameworkIDKey = "framework/id"

// EnginePrefix holds the engine's settings; EngineKey its mode (running,
// maintenance, stopped), EngineConfigKey the configuration values set at
// run time over the flags'.
const (
	EnginePrefix    = "engine/"
	EngineKey       = EnginePrefix + "mode"
	EngineConfigKey = EnginePrefix + "config"
)

// segmentsPerKind is how many segments follow the kind in an object key.
var segmentsPerKind = map[Kind]int{
	KindApplication:     2, // <namespace>/<name>
	KindAppVersion:      3, // <namespace>/<name>/<seq>
	KindTaskGroup:       3, // <namespace>/<app>/<taskgroup id>
	KindTask:            4, // <namespace>/<app>/<taskgroup id>/<task id>
	KindRollout:         2, // <namespace>/<name>
	KindHookTemplate:    2, // <namespace>/<name>
	KindHookRun:         2, // <namespace>/<name>
	KindConfigMap:       2, // <namespace>/<name>
	KindSecret:          2, // <namespace>/<name>
	KindService:         2, // <namespace>/<name>
	KindDepends:         2, // <namespace>/<name>
	KindAgent:           1, // <agent id>
	KindSweep:           1, // <agent id>
	KindAgentSettings:   1, // <hostname>
	KindAllocation:      3, // <namespace>/<app>/<instance id>
	KindAllocationEpoch: 2, // <namespace>/<app>

	KindNotifyCallback: 1, // <callback id>
	KindNotifyTarget:   1, // <callback id>
	KindNotification:   1, // <notification id>
	KindAudit:          1, // <entry id>
	KindNamespaceUID:   1, // <namespace>
	KindUID:            1, // <uid>

	// Autoscalers.
	KindAutoscaler:       2, // <namespace>/<name>
	KindAutoscalerStatus: 2, // <namespace>/<name>
	KindAutoscaleTarget:  2, // <namespace>/<workload name>
}

// maxSegmentLen bounds one segment; Mesos task IDs are long but well below it.
const maxSegmentLen = 253

// ValidateSegment reports whether s can be one segment of a key: 1 to 253
// characters from [A-Za-z0-9._-], and not "." or "..". The set covers
// namespaces, application names and Mesos IDs (agent, task, framework IDs)
// while keeping "/" reserved as the separator.
func ValidateSegment(s string) error {
	if s == "" {
		return fmt.Errorf("key segment is empty: %w", errdefs.ErrInvalidArgument)
	}
	if len(s) > maxSegmentLen {
		return fmt.Errorf("key segment %q is longer than %d characters: %w", s, maxSegmentLen, errdefs.ErrInvalidArgument)
	}
	if s == "." || s == ".." {
		return fmt.Errorf("key segment %q is not allowed: %w", s, errdefs.ErrInvalidArgument)
	}
	for _, r := range s {
		if !isSegmentRune(r) {
			return fmt.Errorf("key segment %q: character %q is not one of [A-Za-z0-9._-]: %w", s, r, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}

func isSegmentRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

// Key returns the key of one object of kind, e.g.
// Key(KindApplication, "default", "web") is "apps/default/web". It fails
// with errdefs.ErrInvalidArgument for an unknown kind, the wrong number of
// segments, or an invalid segment.
func Key(kind Kind, segments ...string) (string, error) {
	want, ok := segmentsPerKind[kind]
	if !ok {
		return "", fmt.Errorf("unknown key kind %q: %w", kind, errdefs.ErrInvalidArgument)
	}
	if len(segments) != want {
		return "", fmt.Errorf("key of kind %q needs %d segments, got %d: %w", kind, want, len(segments), errdefs.ErrInvalidArgument)
	}
	return join(kind, segments, false)
}

// Prefix returns the list prefix of the objects of kind under the given
// leading segments, always ending in "/": Prefix(KindApplication) is
// "apps/", Prefix(KindTaskGroup, "default", "web") is
// "taskgroups/default/web/". It takes fewer segments than Key does.
func Prefix(kind Kind, segments ...string) (string, error) {
	want, ok := segmentsPerKind[kind]
	if !ok {
		return "", fmt.Errorf("unknown key kind %q: %w", kind, errdefs.ErrInvalidArgument)
	}
	if len(segments) >= want {
		return "", fmt.Errorf("prefix of kind %q takes fewer than %d segments, got %d: %w", kind, want, len(segments), errdefs.ErrInvalidArgument)
	}
	return join(kind, segments, true)
}

func join(kind Kind, segments []string, trailingSlash bool) (string, error) {
	var b strings.Builder
	b.WriteString(string(kind))
	for _, s := range segments {
		if err := ValidateSegment(s); err != nil {
			return "", err
		}
		b.WriteByte('/')
		b.WriteString(s)
	}
	if trailingSlash {
		b.WriteByte('/')
	}
	return b.String(), nil
}

// appVersionSeqWidth zero-pads sequence numbers so that lexical key order
// (the order List returns) is numeric order; it fits any uint64.
const appVersionSeqWidth = 20

// AppVersionKey returns the key of version seq in an application's history,
// e.g. "appversions/default/web/00000000000000000003".
func AppVersionKey(namespace, name string, seq uint64) (string, error) {
	return Key(KindAppVersion, namespace, name, fmt.Sprintf("%0*d", appVersionSeqWidth, seq))
}

// AppVersionSeq parses the sequence number back out of an AppVersionKey.
func AppVersionSeq(key string) (uint64, error) {
	segments := strings.Split(key, "/")
	if len(segments) != 4 || segments[0] != string(KindAppVersion) {
		return 0, fmt.Errorf("key %q is not an application version key: %w", key, errdefs.ErrInvalidArgument)
	}
	seq, err := strconv.ParseUint(segments[3], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("key %q: version %q is not a number: %w", key, segments[3], errdefs.ErrInvalidArgument)
	}
	return seq, nil
}

// validateKey checks the shape every stored key must have, whatever its
// kind: segments valid by ValidateSegment, no leading, trailing or double "/".
func validateKey(key string) error {
	if key == "" {
		return fmt.Errorf("key is empty: %w", errdefs.ErrInvalidArgument)
	}
	for _, s := range strings.Split(key, "/") {
		if err := ValidateSegment(s); err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
	}
	return nil
}

// validateListPrefix accepts "" (everything) or a valid key followed by "/".
// Requiring the trailing "/" keeps List("apps/ns") from also returning
// "apps/ns2/…".
func validateListPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	trimmed, ok := strings.CutSuffix(prefix, "/")
	if !ok {
		return fmt.Errorf("list prefix %q must end in \"/\": %w", prefix, errdefs.ErrInvalidArgument)
	}
	if err := validateKey(trimmed); err != nil {
		return fmt.Errorf("list prefix %q: %w", prefix, err)
	}
	return nil
}

// isSecretKey reports whether key's value is sealed at rest: secrets, and
// callback URLs, which may carry credentials.
func isSecretKey(key string) bool {
	return strings.HasPrefix(key, string(KindSecret)+"/") || strings.HasPrefix(key, string(KindNotifyTarget)+"/")
}
