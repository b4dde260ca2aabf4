package bcsctl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	sse "github.com/tmaxmax/go-sse"
)

// eventView is one message of the event stream (GET /v1/events).
type eventView struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Action    string `json:"action"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Revision is the etcd revision of the change (the ID's first part),
	// not an application's revision.
	Revision int64 `json:"revision"`
	// Time is when the change was written; zero for a delete.
	Time   time.Time       `json:"time"`
	Object json.RawMessage `json:"object"`
	// Message is a reset's or an overflow's.
	Message string `json:"message"`
	// data is the event as the stream sent it.
	data string
}

// eventWindow is how many store revisions back "recent" events reach:
// the event stream replays the history after a revision, and every
// write of the store is one.
const eventWindow = 2000

// replayIdle ends a replay of recent events that the stream has
// finished: the newest revision may be a write the stream does not
// show (a configmap, a version record), so no event marks the end.
const replayIdle = 300 * time.Millisecond

// eventStream reads GET /v1/events.
type eventStream struct {
	client *apiClient
	query  url.Values // type, namespace
}

// head returns the stream's current position: the ID it opens with.
func (s *eventStream) head(ctx context.Context) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, err := s.client.stream(ctx, "/v1/events", s.query)
	if err != nil {
		return "", err
	}
	defer body.Close()
	for ev, err := range sse.Read(body, nil) {
		if err != nil {
			return "", err
		}
		return ev.LastEventID, nil
	}
	return "", fmt.Errorf("the event stream closed before it said where it starts")
}

// revisionOf reads the revision of an event ID ("1234.2" or "1234").
func revisionOf(id string) int64 {
	rev, _ := strconv.ParseInt(strings.Split(id, ".")[0], 10, 64)
	return rev
}

// follow calls each for the events after lastID, until ctx ends, each
// returns false, the stream ends, or (untilID set) the stream passed
// untilID or went quiet.
func (s *eventStream) follow(ctx context.Context, lastID, untilID string, each func(eventView) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	query := url.Values{}
	for k, v := range s.query {
		query[k] = v
	}
	if lastID != "" {
		query.Set("lastEventId", lastID)
	}
	body, err := s.client.stream(ctx, "/v1/events", query)
	if err != nil {
		return err
	}
	defer body.Close()
	events := make(chan sse.Event)
	failed := make(chan error, 1)
	go func() {
		defer close(events)
		for ev, err := range sse.Read(body, &sse.ReadConfig{MaxEventSize: 16 << 20}) {
			if err != nil {
				failed <- err
				return
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	until := revisionOf(untilID)
	for {
		var idle <-chan time.Time
		if untilID != "" {
			idle = time.After(replayIdle)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-failed:
			return fmt.Errorf("the event stream: %w", err)
		case <-idle:
			return nil
		case ev, ok := <-events:
			if !ok {
				return io.EOF
			}
			if ev.Data == "" {
				continue // the opening position
			}
			var e eventView
			if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
				return fmt.Errorf("the event stream: unexpected event %q: %w", ev.Data, err)
			}
			e.data = ev.Data
			if e.Type == "" {
				e.Type = ev.Type
			}
			if e.ID == "" {
				e.ID = ev.LastEventID
			}
			if e.Revision == 0 {
				e.Revision = revisionOf(e.ID)
			}
			if untilID != "" && e.Revision > until {
				return nil
			}
			if !each(e) {
				return nil
			}
		}
	}
}

// recent returns the events of the last eventWindow revisions that
// match keeps, a repeated message of one object shown once.
func (s *eventStream) recent(ctx context.Context, keeps func(eventView) bool) ([]eventView, error) {
	head, err := s.head(ctx)
	if err != nil {
		return nil, err
	}
	from := max(0, revisionOf(head)-eventWindow)
	var out []eventView
	last := map[string]string{}
	err = s.follow(ctx, strconv.FormatInt(from, 10), head, func(e eventView) bool {
		if !keeps(e) {
			return true
		}
		key, msg := e.Type+" "+e.Namespace+"/"+e.Name, eventMessage(e)
		if last[key] != msg {
			last[key] = msg
			out = append(out, e)
		}
		return true
	})
	return out, err
}

// workloadEvents are the recent events of an application or one of its
// instances (index ≥ 0).
func (c *cli) workloadEvents(ctx context.Context, ns, app string, index int) ([]eventView, error) {
	s := &eventStream{client: c.client, query: url.Values{"namespace": {ns}, "type": {"app,deployment,instance,rollout"}}}
	return s.recent(ctx, func(e eventView) bool {
		if index >= 0 {
			return e.Name == fmt.Sprintf("%s/%d", app, index)
		}
		return e.Name == app || strings.HasPrefix(e.Name, app+"/")
	})
}

func (c *cli) eventsCommand() *cobra.Command {
	var watch, all, history bool
	var since time.Duration
	var types string
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show the recent changes of the namespace's objects; -w follows them from now",
		Long: "Show the recent changes of the namespace's objects, from the API's event stream\n" +
			"(GET /v1/events); with -w, print them as they happen from now on. --since 10m shows\n" +
			"those of the last ten minutes first, --all every one the store still keeps (etcd\n" +
			"compacts its history: an hour by default). EVENT is the change's place in the store's\n" +
			"history (its etcd revision), not an application's revision.",
		Example: "  bcsctl events -n demo\n  bcsctl events -w -A --type instance,rollout\n  bcsctl events -w --since 5m -n demo",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if since < 0 || since > 0 && history {
				return usageErrorf("--since takes a duration > 0, and not with --all")
			}
			query := url.Values{}
			if !all {
				query.Set("namespace", c.namespace)
			}
			if types != "" {
				query.Set("type", types)
			}
			s := &eventStream{client: c.client, query: query}
			print := c.eventPrinter(out.format, all)
			ctx := cmd.Context()
			head, err := s.head(ctx)
			if err != nil {
				return err
			}
			last := head
			each := func(e eventView) bool {
				print(e)
				last = e.ID
				return true
			}
			switch {
			case since > 0 || history:
				var cutoff time.Time
				if since > 0 {
					cutoff = c.env.Now().Add(-since)
				}
				from, err := s.historyStart(ctx, head, cutoff)
				if err != nil {
					return err
				}
				last = from
				err = s.follow(ctx, from, head, func(e eventView) bool {
					if e.Time.IsZero() || !e.Time.Before(cutoff) {
						each(e)
					}
					last = e.ID
					return true
				})
				if err != nil {
					return err
				}
			case !watch:
				return s.follow(ctx, strconv.FormatInt(max(0, revisionOf(head)-eventWindow), 10), head, each)
			}
			if !watch {
				return nil
			}
			// Followed until interrupted: a stream that ends (a server
			// restart, an overflow) is opened again where it left off.
			for {
				err := s.follow(ctx, last, "", each)
				if ctx.Err() != nil {
					return nil
				}
				fmt.Fprintf(c.env.Err, "the event stream ended (%v); reconnecting after event %s\n", err, last)
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(time.Second):
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "print events as they happen, from now on")
	cmd.Flags().DurationVar(&since, "since", 0, "first the events of this long ago on (10m, 1h); with -w, then the new ones")
	cmd.Flags().BoolVar(&history, "all", false, "first every event the store keeps; with -w, then the new ones")
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "the events of every namespace (and of agents and the engine)")
	cmd.Flags().StringVar(&types, "type", "", "only these event types, comma-separated (app, deployment, instance, rollout, hookrun, agent, …)")
	out.add(cmd, "json")
	return cmd
}

// historyStart finds where a replay of history begins: the oldest
// revision the store still keeps the changes after (etcd compacts
// older ones), or with a cutoff the newest one whose next event is not
// older than it. The stream says nothing of either directly, so it is
// read at revisions halfway between until they are found: a reset
// means compacted, the first event with a time says how old a revision
// is.
func (s *eventStream) historyStart(ctx context.Context, head string, cutoff time.Time) (string, error) {
	// tooOld reports whether the history after rev is gone, or older
	// than the cutoff.
	tooOld := func(rev int64) (bool, error) {
		old := false
		err := s.follow(ctx, strconv.FormatInt(rev, 10), head, func(e eventView) bool {
			switch {
			case e.Type == "reset":
				old = true
			case e.Time.IsZero():
				return true // a delete: its time is unknown
			default:
				old = e.Time.Before(cutoff)
			}
			return false
		})
		return old, err
	}
	lo, hi := int64(0), revisionOf(head)
	for lo < hi {
		mid := lo + (hi-lo)/2
		old, err := tooOld(mid)
		if err != nil {
			return "", err
		}
		if old {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return strconv.FormatInt(hi, 10), nil
}

// eventPrinter prints events one per line as they come: in columns of
// fixed width, or as the stream's JSON. AGE is how long ago the change
// was written; EVENT its ID, where it is in the store's history.
func (c *cli) eventPrinter(format string, all bool) func(eventView) {
	if format == "json" {
		return func(e eventView) { fmt.Fprintln(c.env.Out, e.data) }
	}
	const line = "%-8s %-12s %-13s %-30s %s\n"
	fmt.Fprintf(c.env.Out, line, "AGE", "EVENT", "TYPE", "OBJECT", "MESSAGE")
	return func(e eventView) {
		name := e.Name
		if all && e.Namespace != "" {
			name = e.Namespace + "/" + name
		}
		when := none
		if !e.Time.IsZero() {
			when = age(c.env.Now(), e.Time)
		}
		fmt.Fprintf(c.env.Out, line, when, e.ID, e.Type, cmp.Or(name, none), eventMessage(e))
	}
}
