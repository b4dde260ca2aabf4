package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// callbackServer is a notify receiver: it records every POST and answers
// 503 while refusing, 200 otherwise.
type callbackServer struct {
	*httptest.Server
	refusing atomic.Bool
	mu       sync.Mutex
	posts    []callbackPost
}

type callbackPost struct {
	id, token string
	notice    struct {
		Type        string `json:"type"`
		App         string `json:"app"`
		TaskGroupID string `json:"taskGroupID"`
		Message     string `json:"message"`
	}
	status int
}

func newCallbackServer(t *testing.T) *callbackServer {
	cb := &callbackServer{}
	cb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := callbackPost{id: r.Header.Get("X-BCS-Event-ID"), token: r.URL.Query().Get("token"), status: http.StatusOK}
		if err := json.NewDecoder(r.Body).Decode(&p.notice); err != nil {
			t.Errorf("callback body: %v", err)
		}
		if cb.refusing.Load() {
			p.status = http.StatusServiceUnavailable
		}
		cb.mu.Lock()
		cb.posts = append(cb.posts, p)
		cb.mu.Unlock()
		w.WriteHeader(p.status)
	}))
	t.Cleanup(cb.Close)
	return cb
}

// accepted returns the posts answered 200, as "type app launch" lines,
// and how many times each event ID was answered 200.
func (cb *callbackServer) accepted() (events []string, perID map[string]int) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	perID = map[string]int{}
	for _, p := range cb.posts {
		if p.status == http.StatusOK {
			events = append(events, p.notice.Type+" "+p.notice.TaskGroupID)
			perID[p.id]++
		}
	}
	slices.Sort(events)
	return events, perID
}

type notificationView struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	TaskGroupID string `json:"taskGroupID"`
	State       string `json:"state"`
	Deliveries  []struct {
		URL      string `json:"url"`
		Attempts int    `json:"attempts"`
	} `json:"deliveries"`
}

func (s *system) notifications(query string) []notificationView {
	s.t.Helper()
	code, body := s.call("GET", "/v1/notifications"+query, nil)
	var page struct{ Notifications []notificationView }
	if err := json.Unmarshal(body, &page); code != 200 || err != nil {
		s.t.Fatalf("GET /v1/notifications%s: %d %s", query, code, body)
	}
	return page.Notifications
}

// A callback server receives exit, missing and flapping events exactly
// once each, even across a scheduler kill -9. An instance goes
// missing (its agent removed), one exits (its process killed), one
// flaps (its start command exits at once: 4 launches, 3 restarts, more
// than --notify-flapping-restarts=2); the callback refuses them all until
// bcs-scheduler was killed -9 and started again; then each arrives once.
func TestNotificationsOnceAcrossSchedulerCrash(t *testing.T) {
	cb := newCallbackServer(t)
	cb.refusing.Store(true)
	s := startSystem(t, "--notify-flapping-restarts=2", "--notify-max-backoff=2s", "--notify-max-attempts=1000",
		allowEgress(t, strings.TrimPrefix(cb.URL, "http://")))
	callback := cb.URL + "/bcs?token=s3cr3t"
	code, body := s.call("POST", "/v1/notifies", []byte(fmt.Sprintf(`{"callback": %q}`, callback)))
	if code != http.StatusAccepted || strings.Contains(string(body), "s3cr3t") {
		t.Fatalf("POST /v1/notifies: %d %s; want 202 without the token", code, body)
	}

	app := func(name, startCmd string, restart map[string]any) {
		m := s.manifest("process.json", func(m map[string]any) {
			m["metadata"].(map[string]any)["name"] = name
			m["spec"].(map[string]any)["instance"] = 1
			m["restartPolicy"] = restart
			delete(m, "constraint")
			proc := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
			if startCmd != "" {
				proc["startCmd"] = startCmd
				delete(proc, "healthChecks")
			}
		})
		if code, body := s.call("POST", "/v1/apps", m); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	never := map[string]any{"policy": "Never"}

	// missing: the agent of its one instance is taken away.
	app("lost", "", never)
	lost := s.running("demo", "lost", 1)[0]
	resp, err := http.Post("http://"+s.control+"/agents/"+lost.Agent+"/remove", "", nil)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("remove agent %s: %v %v", lost.Agent, resp, err)
	}
	resp.Body.Close()

	// exit: its game server is killed.
	app("exiter", "", never)
	exiter := s.running("demo", "exiter", 1)[0]
	if err := syscall.Kill(pidOf(t, s.runPath(exiter.Host, "demo.exiter.0", "gamesvr.pid")), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	// flapping: it cannot start; relaunched at once, 3 times at most.
	app("flappy", "exit 3", map[string]any{"policy": "Always", "interval": 0, "maxtimes": 3})
	// Its launches' IDs carry the application's incarnation.
	incarnation := ""
	s.eventually("flappy's first launch", func() (bool, string) {
		v, _ := s.app("demo", "flappy")
		for _, inst := range v.Status.Instances {
			_, incarnation, _ = strings.Cut(inst.TaskGroupID, ".")
		}
		return incarnation != "", fmt.Sprintf("%+v", v.Status.Instances)
	})
	flappy := func(launch int) string { return fmt.Sprintf("demo_flappy_0_%d.%s", launch, incarnation) }
	want := []string{"exit " + exiter.TaskGroupID, "exit " + flappy(1), "exit " + flappy(2), "exit " + flappy(3), "exit " + flappy(4),
		"flapping " + flappy(3), "missing " + lost.TaskGroupID}
	slices.Sort(want)

	// Every notice stored, tried and refused: none delivered yet.
	s.eventually("7 notifications tried", func() (bool, string) {
		var got []string
		tried := 0
		for _, n := range s.notifications("?namespace=demo") {
			got = append(got, n.Type+" "+n.TaskGroupID)
			if n.State == "pending" && len(n.Deliveries) == 1 && n.Deliveries[0].Attempts > 0 {
				tried++
			}
			if len(n.Deliveries) == 1 && strings.Contains(n.Deliveries[0].URL, "s3cr3t") {
				t.Fatalf("the delivery log shows the token: %+v", n)
			}
		}
		slices.Sort(got)
		return slices.Equal(got, want) && tried == len(want), fmt.Sprintf("%v (%d tried)", got, tried)
	})
	if events, _ := cb.accepted(); len(events) != 0 {
		t.Fatalf("accepted while refusing: %v", events)
	}

	s.killScheduler()
	cb.refusing.Store(false)
	s.startScheduler()

	s.eventually("every notification delivered", func() (bool, string) {
		delivered := s.notifications("?namespace=demo&state=delivered")
		return len(delivered) == len(want), fmt.Sprintf("%d delivered", len(delivered))
	})
	events, perID := cb.accepted()
	if !slices.Equal(events, want) {
		t.Errorf("the callback accepted %v, want %v", events, want)
	}
	for id, n := range perID {
		if n != 1 {
			t.Errorf("event %s accepted %d times", id, n)
		}
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for _, p := range cb.posts {
		if p.token != "s3cr3t" {
			t.Errorf("a post came without the callback URL's token: %+v", p)
		}
	}
}
