package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unique"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/readview"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Viewed answers the reads the API serves from a read view of the store
// instead of etcd: what the Registry's methods of the same names answer,
// as of the revision the view reflects. Its records are shared by every
// reader and must not be changed.
type Viewed struct {
	view *readview.View
}

// viewedKinds are the kinds a Viewed reads, and how each is decoded.
var viewedKinds = map[store.Kind]func(value []byte, rev int64) (any, error){
	store.KindApplication:   decodeRecord[App],
	store.KindTaskGroup:     decodeRecord[TaskGroup],
	store.KindAllocation:    decodeRecord[Allocation],
	store.KindRollout:       decodeRecord[Rollout],
	store.KindAgent:         decodeRecord[Agent],
	store.KindAgentSettings: decodeRecord[AgentSettings],
}

// ViewConfig is cfg with the prefixes and decoder of the view a Viewed
// reads.
func ViewConfig(cfg readview.Config) readview.Config {
	cfg.Prefixes = nil
	for kind := range viewedKinds {
		cfg.Prefixes = append(cfg.Prefixes, string(kind)+"/")
	}
	cfg.Decode = func(key string, value []byte, rev int64) (any, error) {
		kind, _, _ := strings.Cut(key, "/")
		decode, ok := viewedKinds[store.Kind(kind)]
		if !ok {
			return nil, fmt.Errorf("no record kind %q", kind)
		}
		return decode(value, rev)
	}
	return cfg
}

// NewViewed reads view, which ViewConfig configured.
func NewViewed(view *readview.View) *Viewed { return &Viewed{view: view} }

// Fresh waits, at most wait, until the view reflects every write etcd
// had applied when it was called (readview.View.Fresh).
func (v *Viewed) Fresh(ctx context.Context, wait time.Duration) error {
	return v.view.Fresh(ctx, wait)
}

// Contents counts the changes the view applied (readview.View.Contents):
// an answer made of it holds while Contents stays.
func (v *Viewed) Contents() uint64 { return v.view.Contents() }

func decodeRecord[T any, P record[T]](value []byte, rev int64) (any, error) {
	p := P(new(T))
	if err := json.Unmarshal(value, p); err != nil {
		return nil, err
	}
	p.setRevision(rev)
	if g, ok := any(p).(*TaskGroup); ok {
		g.intern()
	}
	return p, nil
}

// intern makes g's strings that many task groups repeat (namespace,
// application, states, agent, host …) share one copy: the view holds
// every task group of the fleet, and each decoded its own.
func (g *TaskGroup) intern() {
	for _, s := range []*string{&g.Namespace, &g.App, &g.Node, &g.Template, &g.Network, &g.State, &g.Phase, &g.AgentID,
		&g.Host, &g.HostIP, &g.RemoteMessage, &g.Message, &g.Prefer, &g.KillReason, &g.WaitingFor} {
		*s = intern(*s)
	}
	internTasks(g.Tasks)
	if p := g.Previous; p != nil {
		p.AgentID, p.Host = intern(p.AgentID), intern(p.Host)
		internTasks(p.Tasks)
	}
	if m := g.Move; m != nil {
		m.Reason, m.FromHost, m.ToHost = intern(m.Reason), intern(m.FromHost), intern(m.ToHost)
		if m.Successor != nil {
			m.Successor.intern()
		}
	}
}

func internTasks(tasks []TaskRecord) {
	for i := range tasks {
		t := &tasks[i]
		t.Name, t.State, t.Message = intern(t.Name), intern(t.State), intern(t.Message)
	}
}

func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}

// viewedRecord is the record e holds; one the view could not decode is
// decoded again, for its error.
func viewedRecord[T any, P record[T]](key string, e readview.Entry) (P, error) {
	if p, ok := e.Record.(P); ok {
		return p, nil
	}
	p := P(new(T))
	if err := json.Unmarshal(e.Value, p); err != nil {
		return nil, fmt.Errorf("decode %q into %T: %w", key, p, err)
	}
	p.setRevision(e.Revision)
	return p, nil
}

func viewedGet[T any, P record[T]](v *readview.View, key string) (P, error) {
	e, err := v.Get(key)
	if err != nil {
		return nil, err
	}
	return viewedRecord[T, P](key, e)
}

func viewedList[T any, P record[T]](v *readview.View, prefix string) ([]P, error) {
	out := []P{}
	err := viewedEach[T](v, prefix, func(p P) error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func viewedEach[T any, P record[T]](v *readview.View, prefix string, fn func(P) error) error {
	for _, e := range v.Entries(prefix) {
		p, ok := e.Record.(P)
		if !ok {
			return undecoded[T, P](v, prefix)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// undecoded is the error of the first record under prefix the view
// could not decode, named by its key.
func undecoded[T any, P record[T]](v *readview.View, prefix string) error {
	for _, e := range v.List(prefix) {
		if _, err := viewedRecord[T, P](e.Key, e.Entry); err != nil {
			return err
		}
	}
	return fmt.Errorf("a record under %q changed as it was read: %w", prefix, errdefs.ErrUnavailable)
}

// GetApp is Registry.GetApp.
func (v *Viewed) GetApp(_ context.Context, namespace, name string) (*App, error) {
	key, err := store.Key(store.KindApplication, namespace, name)
	if err != nil {
		return nil, err
	}
	app, err := viewedGet[App](v.view, key)
	if err != nil {
		return nil, fmt.Errorf("application %s/%s: %w", namespace, name, err)
	}
	return app, nil
}

// ListApps is Registry.ListApps.
func (v *Viewed) ListApps(_ context.Context, namespace string) ([]*App, error) {
	prefix, err := kindPrefix(store.KindApplication, namespace)
	if err != nil {
		return nil, err
	}
	return viewedList[App](v.view, prefix)
}

// TaskGroups is Registry.TaskGroups.
func (v *Viewed) TaskGroups(_ context.Context, namespace, app string) ([]*TaskGroup, error) {
	prefix, err := store.Prefix(store.KindTaskGroup, namespace, app)
	if err != nil {
		return nil, err
	}
	return viewedList[TaskGroup](v.view, prefix)
}

// EachTaskGroup is Registry.EachTaskGroup.
func (v *Viewed) EachTaskGroup(_ context.Context, fn func(*TaskGroup) error) error {
	prefix, err := store.Prefix(store.KindTaskGroup)
	if err != nil {
		return err
	}
	return viewedEach[TaskGroup](v.view, prefix, fn)
}

// Allocations is Registry.Allocations.
func (v *Viewed) Allocations(_ context.Context, namespace, app string) ([]*Allocation, error) {
	prefix, err := allocationsPrefix(namespace, app)
	if err != nil {
		return nil, err
	}
	return viewedList[Allocation](v.view, prefix)
}

// GetRollout is Registry.GetRollout.
func (v *Viewed) GetRollout(_ context.Context, namespace, name string) (*Rollout, error) {
	key, err := store.Key(store.KindRollout, namespace, name)
	if err != nil {
		return nil, err
	}
	ro, err := viewedGet[Rollout](v.view, key)
	if err != nil {
		return nil, fmt.Errorf("rollout of %s/%s: %w", namespace, name, err)
	}
	return ro, nil
}

// ListAgents is Registry.ListAgents.
func (v *Viewed) ListAgents(context.Context) ([]*Agent, error) {
	prefix, err := store.Prefix(store.KindAgent)
	if err != nil {
		return nil, err
	}
	return viewedList[Agent](v.view, prefix)
}

// ListAgentSettings is Registry.ListAgentSettings.
func (v *Viewed) ListAgentSettings(context.Context) ([]*AgentSettings, error) {
	prefix, err := store.Prefix(store.KindAgentSettings)
	if err != nil {
		return nil, err
	}
	return viewedList[AgentSettings](v.view, prefix)
}

// EachAppTaskGroups returns, in key order, what derive made of each
// application's task groups (in key order, as EachTaskGroup reads them):
// made at the first call after they changed and kept until they change
// again, so that a read of the fleet works again only on the
// applications that changed. name names derive: every caller of one name
// passes the same function. The values are shared and must not be
// changed.
func (v *Viewed) EachAppTaskGroups(name string, derive func([]*TaskGroup) any) ([]any, error) {
	prefix, err := store.Prefix(store.KindTaskGroup)
	if err != nil {
		return nil, err
	}
	undecodable := false
	dirs := v.view.EachDir(prefix, name, func(entries []readview.Entry) any {
		groups := make([]*TaskGroup, len(entries))
		for i, e := range entries {
			g, ok := e.Record.(*TaskGroup)
			if !ok {
				return errUndecoded
			}
			groups[i] = g
		}
		return derive(groups)
	})
	out := make([]any, len(dirs))
	for i, d := range dirs {
		if d.Value == errUndecoded {
			undecodable = true
		}
		out[i] = d.Value
	}
	if undecodable {
		return nil, undecoded[TaskGroup](v.view, prefix)
	}
	return out, nil
}

// errUndecoded is what EachAppTaskGroups derives of a directory holding
// a record the view could not decode.
var errUndecoded = errors.New("undecoded")
