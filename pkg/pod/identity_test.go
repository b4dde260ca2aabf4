package pod

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// A container of a namespace with an identity runs as the
// namespace's uid:gid unless its image's user (root, for the test image)
// or its "user" parameter is allowed by the namespace's policy; its
// configmap and secret files are that uid's, 0600 and 0400; its
// pod-private volume is that uid's too. A "user" the policy refuses — the
// uid of another namespace, root — fails the pod, naming it.
func TestContainerRunsAsItsNamespace(t *testing.T) {
	c := podtest.Docker(t)
	const probe = "id -u; id -g; stat -c '%u %a' /etc/app/secret.conf /etc/app/game.conf /data; echo x > /data/out && echo wrote"
	for _, tt := range []struct {
		name  string
		users []string
		param string
		want  string // the probe's output
	}{
		{"the namespace's uid", nil, "", "20001\n20001\n20001 400\n20001 600\n20001 755\nwrote\n"},
		{"the image's root, allowed", []string{"root"}, "", "0\n0\n0 400\n0 600\n0 755\nwrote\n"},
		{"an allowed user", []string{"*"}, "nobody", "65534\n65534\n65534 400\n65534 600\n65534 755\nwrote\n"},
		{"root under *: the namespace's uid", []string{"*"}, "", "20001\n20001\n20001 400\n20001 600\n20001 755\nwrote\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, c)
			task := containerTask("main", "exec sleep 100000")
			task.Spec.Identity = &proto.Identity{UID: 20001, GID: 20001, Users: tt.users, Range: "20000-29999"}
			if tt.param != "" {
				task.Spec.Container.Parameters = []proto.Parameter{{Key: "user", Value: tt.param}}
			}
			task.Spec.Container.Volumes = []proto.Volume{{MountPath: "/data"}}
			task.Spec.Files = []proto.File{
				{Path: "/etc/app/secret.conf", Content: []byte("s"), ReadOnly: true},
				{Path: "/etc/app/game.conf", Content: []byte("c")},
			}
			p, _ := startInspected(t, c, cfg, task)
			out, err := p.Exec(ctxT(t, 30*time.Second), task.ID, ExecRequest{Command: []string{"sh", "-c", probe}})
			if err != nil || out.Output != tt.want {
				t.Errorf("in the container: %q %v, want %q", out.Output, err, tt.want)
			}
			host := filepath.Join(cfg.SandboxDir, "volumes", cfg.PodID, "data")
			info, err := os.Stat(host)
			if err != nil {
				t.Fatal(err)
			}
			if uid := info.Sys().(*syscall.Stat_t).Uid; tt.want[:strings.IndexByte(tt.want, '\n')] != strconv.Itoa(int(uid)) {
				t.Errorf("the pod volume on the host is uid %d's", uid)
			}
		})
	}
	for _, tt := range []struct{ param, want string }{
		{"20002", "id 20002 belongs to another namespace"},
		{"0:0", "running as root is not allowed"},
	} {
		cfg := testConfig(t, c)
		task := containerTask("main", "exec sleep 100000")
		task.Spec.Identity = &proto.Identity{UID: 20001, GID: 20001, Users: []string{"*"}, Range: "20000-29999"}
		task.Spec.Container.Parameters = []proto.Parameter{{Key: "user", Value: tt.param}}
		p, err := New(cfg, []Task{task})
		if err != nil {
			t.Fatal(err)
		}
		err = p.Start(ctxT(t, time.Minute))
		_ = p.Kill(context.Background(), syscall.SIGKILL, 0)
		if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("user %q: %v, want refused saying %q", tt.param, err, tt.want)
		}
	}
}
