package schedulerd

import (
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// The controller is told why a workload cannot be scaled rather than
// handed a fleet it would scale wrongly; a workload it can scale comes
// with the record the view was read with, which its scale writes
// against.
func TestFleetOf(t *testing.T) {
	view := func(change func(*scheduler.FleetView)) scheduler.FleetView {
		v := scheduler.FleetView{App: scheduler.AppRef{Namespace: "ns-a", Name: "game"}, Found: true, Kind: manifest.KindDeployment,
			Replicas: 2, State: registry.AppRunning, Record: &registry.App{Namespace: "ns-a", Name: "game", Instances: 2, Revision: 41},
			Instances: []scheduler.FleetInstance{{ID: 0, TaskGroupID: "g0", Ready: true, RunningSince: time.Unix(100, 0), CPUs: 0.5, MemMB: 64,
				HostIP: "10.0.0.7", Ports: registry.HostPorts{{Name: "http", Port: 31000}}},
				{ID: 2, TaskGroupID: "g2", Allocated: true}}}
		change(&v)
		return v
	}
	for _, tc := range []struct {
		name    string
		change  func(*scheduler.FleetView)
		problem string
	}{
		{"not found", func(v *scheduler.FleetView) { *v = scheduler.FleetView{App: v.App} }, "workload ns-a/game not found"},
		{"a daemonset", func(v *scheduler.FleetView) { v.Kind = manifest.KindDaemonset }, "ns-a/game is a daemonset"},
		{"being deleted", func(v *scheduler.FleetView) { v.State = registry.AppDeleting }, "ns-a/game is being deleted"},
		{"stopped", func(v *scheduler.FleetView) { v.Stopped = true }, "ns-a/game is stopped; start it to scale it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fleetOf(view(tc.change))
			if !strings.HasPrefix(f.Problem, tc.problem) || f.App != nil || len(f.Instances) != 0 {
				t.Errorf("fleet %+v; want only the problem %q", f, tc.problem)
			}
		})
	}
	f := fleetOf(view(func(*scheduler.FleetView) {}))
	if f.Problem != "" || f.Replicas != 2 || f.App == nil || f.App.Revision != 41 || len(f.Instances) != 2 {
		t.Fatalf("fleet %+v; want 2 replicas, 2 instances and the record at 41", f)
	}
	if i := f.Instances[0]; i.TaskGroupID != "g0" || !i.Ready || i.RunningSince != time.Unix(100, 0) || i.CPUs != 0.5 || i.MemMB != 64 ||
		i.HostIP != "10.0.0.7" || len(i.Ports) != 1 || i.Ports[0].Port != 31000 {
		t.Errorf("instance 0: %+v", i)
	}
	if i := f.Instances[1]; i.ID != 2 || !i.Allocated || i.Ready {
		t.Errorf("instance 2: %+v", i)
	}
}
