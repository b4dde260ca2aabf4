package devcluster_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/httpcli"

	"github.com/bcs-mesos/bcs-mesos/internal/testpki"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster/devclustertest"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Principals of the secured clusters' credentials file.
const (
	principal      = "bcs"
	secret         = "s3cret-of-bcs"
	otherPrincipal = "ops"
	otherSecret    = "s3cret-of-ops"
)

// securedCluster is a dev cluster serving HTTPS only, with every realm
// authenticating against a credentials file of two principals; client
// trusts its CA.
func securedCluster(t *testing.T) (c *devcluster.Cluster, client *http.Client, ca *testpki.CA) {
	t.Helper()
	ca = testpki.NewCA(t, "mesos CA")
	server := ca.Issue(t, "mesos")
	creds := filepath.Join(t.TempDir(), "credentials.json")
	data := `{"credentials":[{"principal":"` + principal + `","secret":"` + secret + `"},{"principal":"` + otherPrincipal + `","secret":"` + otherSecret + `"}]}`
	if err := os.WriteFile(creds, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	c = startCluster(t, func(cfg *devcluster.Config) {
		cfg.SSLCertFile, cfg.SSLKeyFile, cfg.SSLCAFile = server.CertFile, server.KeyFile, ca.CertFile
		cfg.Credentials = creds
		cfg.AuthenticateHTTPFrameworks, cfg.AuthenticateHTTPReadwrite, cfg.AuthenticateHTTPReadonly = true, true, true
		cfg.ExecutorMode = devcluster.ExecutorProcess
		cfg.Agents = []devcluster.AgentSpec{{Hostname: "secure-1"}}
	})
	client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}, Timeout: 10 * time.Second}
	return c, client, ca
}

type answer struct {
	status    int
	challenge string // WWW-Authenticate
	body      string // the first line
	streamID  string
}

// request sends a JSON body (nil: GET) as user:password ("" sends no
// credential) and reads the answer's first line.
func request(t *testing.T, client *http.Client, url, user, password, body string, header ...string) answer {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(io.LimitReader(resp.Body, 64<<10))
	line, _ := r.ReadString('\n')
	if resp.Header.Get("Mesos-Stream-Id") != "" {
		// An event stream (RecordIO): its first record, after its length.
		n, _ := strconv.Atoi(strings.TrimSpace(line))
		record := make([]byte, n)
		_, _ = io.ReadFull(r, record)
		line = string(record)
	}
	return answer{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), strings.TrimSpace(line), resp.Header.Get("Mesos-Stream-Id")}
}

// The secured dev cluster answers as a Mesos 1.12 master with
// LIBPROCESS_SSL_ENABLED and --authenticate_http_frameworks
// --http_framework_authenticators=basic --authenticate_http_readwrite
// --authenticate_http_readonly does (src/master/http.cpp,
// 3rdparty/libprocess/src/authenticator.cpp): only HTTPS; every endpoint
// but /health wants a Basic credential of its realm, 401 with the
// challenge otherwise; a framework takes the authenticated principal,
// another principal in FrameworkInfo or on a later call is a 400;
// changing a framework's principal is an ERROR event.
func TestSecuredMasterAndAgents(t *testing.T) {
	c, client, _ := securedCluster(t)
	master := c.MasterURL()
	if !strings.HasPrefix(master, "https://") {
		t.Fatalf("MasterURL %s, want https://", master)
	}
	subscribe := func(principalInInfo, id string) string {
		info := map[string]any{"user": "root", "name": "secure-test", "failover_timeout": 60}
		call := map[string]any{"type": "SUBSCRIBE", "subscribe": map[string]any{"framework_info": info}}
		if principalInInfo != "" {
			info["principal"] = principalInInfo
		}
		if id != "" {
			info["id"] = map[string]string{"value": id}
			call["framework_id"] = map[string]string{"value": id}
		}
		b, _ := json.Marshal(call)
		return string(b)
	}
	schedulerAPI, operatorAPI := master+"/api/v1/scheduler", master+"/api/v1"
	getAgents := `{"type":"GET_AGENTS"}`
	agentEndpoint, err := c.AgentEndpoint(c.Agents()[0])
	if err != nil {
		t.Fatal(err)
	}
	filesAPI := "https://" + agentEndpoint + "/files/read?path=/nowhere&offset=0&length=1"

	for _, tc := range []struct {
		name, url, user, password, body string
		want                            answer
	}{
		{"scheduler API without a credential", schedulerAPI, "", "", subscribe("", ""),
			answer{status: 401, challenge: `Basic realm="mesos-master-scheduler"`, body: "401 Unauthorized."}},
		{"scheduler API with a wrong secret", schedulerAPI, principal, "guess", subscribe("", ""),
			answer{status: 401, challenge: `Basic realm="mesos-master-scheduler"`, body: "401 Unauthorized."}},
		{"scheduler API with an unknown principal", schedulerAPI, "mallory", secret, subscribe("", ""),
			answer{status: 401, challenge: `Basic realm="mesos-master-scheduler"`, body: "401 Unauthorized."}},
		{"FrameworkInfo names another principal", schedulerAPI, principal, secret, subscribe(otherPrincipal, ""),
			answer{status: 400, body: "Failed to validate scheduler::Call: Authenticated principal 'bcs' does not match principal 'ops' set in `FrameworkInfo`"}},
		{"operator API without a credential", operatorAPI, "", "", getAgents,
			answer{status: 401, challenge: `Basic realm="mesos-master-readwrite"`, body: "401 Unauthorized."}},
		{"operator API with a credential", operatorAPI, principal, secret, getAgents, answer{status: 200, body: `{"get_agents":{"agents":[{"active":true`}},
		{"master state without a credential", master + "/master/state", "", "", "",
			answer{status: 401, challenge: `Basic realm="mesos-master-readonly"`, body: "401 Unauthorized."}},
		{"master tasks without a credential", master + "/master/tasks", "", "", "",
			answer{status: 401, challenge: `Basic realm="mesos-master-readonly"`, body: "401 Unauthorized."}},
		{"master frameworks without a credential", master + "/frameworks", "", "", "",
			answer{status: 401, challenge: `Basic realm="mesos-master-readonly"`, body: "401 Unauthorized."}},
		{"master tasks with a credential", master + "/tasks", principal, secret, "", answer{status: 200, body: `{"tasks":[]}`}},
		{"master frameworks with a credential", master + "/master/frameworks", principal, secret, "",
			answer{status: 200, body: `{"completed_frameworks":[],"frameworks":[],"unregistered_frameworks":[]}`}},
		{"agent files API without a credential", filesAPI, "", "", "",
			answer{status: 401, challenge: `Basic realm="mesos-agent-readonly"`, body: "401 Unauthorized."}},
		{"agent files API with a credential", filesAPI, principal, secret, "", answer{status: 404}},
		{"health needs none", master + "/health", "", "", "", answer{status: 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := request(t, client, tc.url, tc.user, tc.password, tc.body)
			if got.status != tc.want.status || got.challenge != tc.want.challenge || !strings.HasPrefix(got.body, tc.want.body) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}

	// Plain HTTP reaches nothing: there is no downgrade.
	if plain := request(t, http.DefaultClient, strings.Replace(schedulerAPI, "https://", "http://", 1), principal, secret, subscribe("", "")); plain.status != 400 ||
		plain.body != "Client sent an HTTP request to an HTTPS server." {
		t.Errorf("plain HTTP to the master: %+v, want it refused", plain)
	}

	// A framework without a principal takes the authenticated one; a
	// call of another principal is refused; so is a subscription
	// changing it.
	f := devclustertest.SubscribeOver(t, master, "secure-test", []httpcli.ConfigOpt{
		httpcli.TLSConfig(client.Transport.(*http.Transport).TLSClientConfig), httpcli.BasicAuth(principal, secret)})
	var state struct {
		Frameworks []struct{ ID, Principal string }
	}
	stateAnswer := requestJSON(t, client, master+"/master/state", principal, secret, &state)
	if stateAnswer != 200 || len(state.Frameworks) != 1 || state.Frameworks[0].ID != f.ID || state.Frameworks[0].Principal != principal {
		t.Errorf("master state %d %+v, want framework %s with principal %q", stateAnswer, state, f.ID, principal)
	}
	streamID := request(t, client, schedulerAPI, principal, secret, subscribe("", f.ID)).streamID
	revive := `{"type":"REVIVE","framework_id":{"value":"` + f.ID + `"}}`
	if got := request(t, client, schedulerAPI, otherPrincipal, otherSecret, revive, "Mesos-Stream-Id", streamID); got.status != 400 ||
		got.body != "Authenticated principal 'ops' does not match principal 'bcs' set in `FrameworkInfo`" {
		t.Errorf("REVIVE as another principal: %+v, want 400", got)
	}
	if got := request(t, client, schedulerAPI, otherPrincipal, otherSecret, subscribe("", f.ID)); got.status != 200 ||
		!strings.Contains(got.body, `"type":"ERROR"`) || !strings.Contains(got.body, "Changing framework's principal is not allowed.") {
		t.Errorf("SUBSCRIBE as another principal: %+v, want an ERROR event", got)
	}
}

func requestJSON(t *testing.T, client *http.Client, url, user, password string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.SetBasicAuth(user, password)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(v)
	return resp.StatusCode
}

// Like the master, which refuses to start: an authenticating realm
// without credentials, a certificate without its key.
func TestSecurityConfigRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg  devcluster.Config
		says string
	}{
		"authentication without credentials": {devcluster.Config{AuthenticateHTTPFrameworks: true},
			"no credentials provided for the default 'basic' HTTP authenticator for realm 'mesos-master-scheduler'"},
		"certificate without key": {devcluster.Config{SSLCertFile: "/etc/cert.pem"}, "ssl_cert_file and ssl_key_file go together"},
		"CA without certificate":  {devcluster.Config{SSLCAFile: "/etc/ca.pem"}, "ssl_ca_file needs ssl_cert_file"},
		"credentials not JSON": {devcluster.Config{Credentials: writeTemp(t, "bcs s3cret\n"), AuthenticateHTTPFrameworks: true},
			"invalid json format"},
	} {
		t.Run(name, func(t *testing.T) {
			tc.cfg.ListenAddr, tc.cfg.NoAgents = "127.0.0.1:0", true
			c, err := devcluster.Start(context.Background(), tc.cfg)
			if err == nil {
				c.Stop()
			}
			if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Start = %v, want %v saying %q", err, errdefs.ErrInvalidArgument, tc.says)
			}
		})
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
