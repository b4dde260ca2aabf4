package schedulerd_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A standby serves reads from its own read view, and a read there right
// after a write to the leader sees it: the view waits for etcd's
// revision, whichever replica took the write.
func TestStandbyServesReadsFromItsView(t *testing.T) {
	etcd, cluster := startEtcdAndCluster(t)
	keyFile := filepath.Join(t.TempDir(), "secret.key")
	replica := func() *replica {
		return startReplicaWith(t, map[string]any{"Etcd": etcd.Endpoints()[0], "Master": cluster.MasterURL(), "DataDir": t.TempDir(), "KeyFile": keyFile})
	}
	leader, follower := whoLeads(t, replica(), replica())
	post(t, "http://"+leader.addr+"/v1/apps", app)
	for i := range 30 {
		resp, err := client.Post("http://"+leader.addr+"/v1/apps/ns-a/game/scale", "application/json", strings.NewReader(fmt.Sprintf(`{"instances":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("scale to %d: %d", i, resp.StatusCode)
		}
		var v struct{ Instances int }
		if code := getJSON(t, "http://"+follower.addr+"/v1/apps/ns-a/game?summary=true", &v); code != http.StatusOK || v.Instances != i {
			t.Fatalf("the standby answered %d, %d instances, right after the leader scaled to %d", code, v.Instances, i)
		}
	}
	metrics := standbyMetrics(t, follower.addr)
	if etcdReads := regexp.MustCompile(`bcs_api_reads_total\{from="etcd"\} \d+`).FindString(metrics); etcdReads != "" {
		t.Errorf("the standby read etcd: %s", etcdReads)
	}
	if !strings.Contains(metrics, `bcs_api_reads_total{from="view"} 30`) {
		t.Errorf("the standby's metrics do not count 30 reads from its view:\n%s", regexp.MustCompile(`(?m)^bcs_api_reads.*$`).FindAllString(metrics, -1))
	}
}

func standbyMetrics(t *testing.T, addr string) string {
	t.Helper()
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
