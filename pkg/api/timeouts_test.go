package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// slowOperator answers a message after wait, or fails when the request's
// context ends first.
type slowOperator struct {
	fakeOperator
	wait time.Duration
}

func (o *slowOperator) Message(ctx context.Context, taskGroupID, task string, msg proto.Message) (*proto.MessageResult, error) {
	select {
	case <-time.After(o.wait):
		return &proto.MessageResult{Type: msg.Type, OK: true, Output: "done\n"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// A request must arrive within Timeouts.Request. Many
// clients trickling bodies (a read-only token is enough) are each
// answered 408 and cut at the deadline while others are answered at once;
// the deadline does not cut what comes after a body: an exec that takes
// longer than it, or an event stream.
func TestTricklingBodiesAreCut(t *testing.T) {
	const body = 500 * time.Millisecond
	op := &slowOperator{wait: 3 * body}
	e, _ := newAuthEnv(t, 0, func(c *api.Config) {
		c.Operator, c.Events.Heartbeat = op, 100*time.Millisecond
		c.Timeouts = api.Timeouts{Header: time.Second, Request: body, Idle: 10 * time.Second, Write: body}
	})
	apiServer := e.server.Config.Handler.(*api.Server)
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = apiServer.HTTPServer(apiServer)
	srv.Start()
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")

	const trickling = 50
	type outcome struct {
		status, message string
		after           time.Duration
	}
	outcomes := make(chan outcome, trickling)
	var wg sync.WaitGroup
	for range trickling {
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				outcomes <- outcome{status: err.Error()}
				return
			}
			defer conn.Close()
			start := time.Now()
			fmt.Fprintf(conn, "POST /v1/apps HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", readerToken)
			go func() { // a byte every 50 ms, until the server hangs up
				for {
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
			_ = conn.SetReadDeadline(time.Now().Add(10 * body))
			reader := bufio.NewReader(conn)
			status, _ := reader.ReadString('\n')
			rest, _ := io.ReadAll(reader) // until the server closes
			outcomes <- outcome{strings.TrimSpace(status), string(rest), time.Since(start)}
		})
	}
	time.Sleep(body / 2)
	start := time.Now()
	if resp, err := http.Get(srv.URL + "/healthz"); err != nil || resp.StatusCode != http.StatusOK || time.Since(start) > body/2 {
		t.Errorf("another client while %d trickle: %v %v after %s", trickling, resp, err, time.Since(start))
	}
	wg.Wait()
	close(outcomes)
	for o := range outcomes {
		if o.status != "HTTP/1.1 408 Request Timeout" || !strings.Contains(o.message, "the request's body did not arrive in time: a request is read within 500ms") ||
			o.after < body/2 || o.after > 4*body {
			t.Errorf("a trickling client: %q %q, cut after %s; want a 408 and the connection closed after about %s", o.status, o.message, o.after, body)
		}
	}

	// A body that arrived: the handler may take longer than the deadline,
	// and an exec longer than a write may.
	req, _ := http.NewRequest("POST", srv.URL+"/v1/taskgroups/"+messagedGroup+"/exec", strings.NewReader(`{"command":["sleep","1"]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(reply), "done") {
		t.Errorf("an exec longer than the body deadline: %d %s", resp.StatusCode, reply)
	}

	// A stream outlives it.
	stream := openEvents(t, http.DefaultClient, srv.URL+"/v1/events", bearer(readerToken)...)
	stream.start()
	time.Sleep(3 * body)
	recordAgent(t, e, "after-the-deadline")
	if got := stream.until(isAgent("after-the-deadline")); len(got) == 0 {
		t.Error("the stream ended")
	}
}

// electionFor is a Leadership whose replica leads once an election that
// takes its duration ended; start begins one.
type electionFor struct {
	mu       sync.Mutex
	duration time.Duration
	ends     time.Time
}

func (e *electionFor) start() {
	e.mu.Lock()
	e.ends = time.Now().Add(e.duration)
	e.mu.Unlock()
}

func (e *electionFor) Leader() (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return "", time.Now().After(e.ends)
}

// A write shares one deadline, Timeouts.Write (1 s here), from its
// arrival: the wait for a leader (an election of 400 ms under way) and
// the store requests it makes (an application's manifest reads its
// namespace's configmaps, secrets, hook templates and depends before it
// is stored). With etcd away it is a 503 within Write, though each store
// request may take 2 s.
func TestWriteAnsweredWithinTheWriteTimeout(t *testing.T) {
	reg, stopEtcd := registryOnOwnEtcd(t)
	const write = time.Second
	election := &electionFor{duration: 400 * time.Millisecond}
	e, _ := newAuthEnv(t, 0, func(c *api.Config) {
		c.Registry, c.Leadership = reg, election
		c.Timeouts = api.DefaultTimeouts
		c.Timeouts.Write = write
	})
	stopEtcd()
	for _, w := range []struct {
		path string
		body any
	}{{"/v1/apps", process("web", "demo")}, {"/v1/configmaps", configMap("cm", "demo")}} {
		election.start()
		start := time.Now()
		errorOf(t, e.call(t, "POST", w.path, w.body, bearer(adminToken)...), http.StatusServiceUnavailable, "Unavailable")
		if took := time.Since(start); took < write || took > write+time.Second/4 {
			t.Errorf("POST %s answered after %s, want the write timeout, %s", w.path, took.Round(time.Millisecond), write)
		}
	}
}
