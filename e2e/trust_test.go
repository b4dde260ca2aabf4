package e2e_test

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/internal/testpki"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// Trust: bcs-scheduler reaches the etcd binary over TLS with a
// client certificate (--client-cert-auth), and the dev cluster's master
// and agents over HTTPS only, authenticating as a framework (as Mesos
// with LIBPROCESS_SSL_ENABLED, --authenticate_http_frameworks,
// --authenticate_http_readwrite, --authenticate_http_readonly). With a
// wrong secret it says the master refused principal "bcs" and keeps
// trying with its backoff; once the secret file holds the right one it
// subscribes, runs a process application (its executor speaking HTTPS
// to its agent) and reads its log through the agent's files API. Its
// log holds no secret and no private key.
func TestSecuredEtcdAndMesos(t *testing.T) {
	const wrongSecret, rightSecret = "wrong-e2e-secret-71c3", "right-e2e-secret-0a9f"
	ca := testpki.NewCA(t, "bcs e2e CA")
	etcdServer, etcdClient, mesos := ca.Issue(t, "etcd"), ca.Issue(t, "bcs-scheduler"), ca.Issue(t, "mesos")
	clientCert, err := tls.LoadX509KeyPair(etcdClient.CertFile, etcdClient.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	etcd := storetest.StartEtcdBinaryTLS(t, storetest.EtcdTLS{CertFile: etcdServer.CertFile, KeyFile: etcdServer.KeyFile, ClientCAFile: ca.CertFile,
		Client: &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{clientCert}}})
	secrets := t.TempDir()
	credentials, secretFile := filepath.Join(secrets, "credentials.json"), filepath.Join(secrets, "mesos.secret")
	write := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(credentials, `{"credentials":[{"principal":"bcs","secret":"`+rightSecret+`"}]}`)
	write(secretFile, wrongSecret+"\n")

	s := startSystemWith(t, func(c map[string]any) {
		c["ssl_cert_file"], c["ssl_key_file"], c["ssl_ca_file"] = mesos.CertFile, mesos.KeyFile, ca.CertFile
		c["credentials"] = credentials
		c["authenticate_http_frameworks"], c["authenticate_http_readwrite"], c["authenticate_http_readonly"] = true, true, true
	}, "--etcd-endpoints", etcd.Endpoints()[0], "--etcd-cacert", ca.CertFile, "--etcd-cert", etcdClient.CertFile, "--etcd-key", etcdClient.KeyFile,
		"--mesos-cacert", ca.CertFile, "--mesos-principal", "bcs", "--mesos-secret-file", secretFile)
	if !strings.HasPrefix(s.master, "https://") {
		t.Fatalf("master %s, want https://", s.master)
	}
	schedulerLog := func() string {
		data, err := os.ReadFile(filepath.Join(s.dir, "bcs-scheduler.log"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	refused := regexp.MustCompile(`mesos subscription ended .*refused the credential of principal \\"bcs\\".* retry_in=(\S+)`)
	s.eventuallyWithin(60*time.Second, "two refused subscriptions in the log", func() (bool, string) {
		return len(refused.FindAllString(schedulerLog(), -1)) >= 2, schedulerLog()
	})
	if retries := refused.FindAllStringSubmatch(schedulerLog(), -1); retries[0][1] != "500ms" || retries[1][1] != "1s" {
		t.Errorf("retried in %s then %s, want the backoff: 500ms then 1s", retries[0][1], retries[1][1])
	}
	if s.scheduler.ProcessState != nil {
		t.Fatalf("bcs-scheduler exited: %v", s.scheduler.ProcessState)
	}

	write(secretFile, rightSecret+"\n")
	if code, body := s.call("POST", "/v1/apps", []byte(tickerProcess)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	process := s.running("logs", "ticker", 1)[0]
	s.eventually("the process's stdout through the agent's files API", func() (bool, string) {
		code, body := s.call("GET", "/v1/taskgroups/"+process.TaskGroupID+"/logs?task=ticker", nil)
		return code == 200 && strings.HasPrefix(string(body), "tick 1\n"), fmt.Sprintf("%d %q", code, body)
	})

	log := schedulerLog()
	for what, secret := range map[string]string{"the wrong secret": wrongSecret, "the right secret": rightSecret} {
		if strings.Contains(log, secret) {
			t.Errorf("the scheduler's log holds %s", what)
		}
	}
	for _, keyFile := range []string{etcdClient.KeyFile, mesos.KeyFile} {
		key, err := os.ReadFile(keyFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(key), "\n") {
			if !strings.HasPrefix(line, "-----") && len(line) > 16 && strings.Contains(log, line) {
				t.Errorf("the scheduler's log holds a line of the private key %s", keyFile)
			}
		}
	}
	if strings.Contains(log, "PRIVATE KEY") {
		t.Errorf("the scheduler's log mentions a PRIVATE KEY")
	}
}
