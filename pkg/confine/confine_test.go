package confine_test

import (
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/confine"
)

func TestCheck(t *testing.T) {
	dirs := confine.InstanceDirs("/data/bcs/work", "/data/bcs/run", "demo", "gamesvr", 2)
	if dirs[0] != "/data/bcs/work/demo.gamesvr.2" || dirs[1] != "/data/bcs/run/demo.gamesvr.2" {
		t.Fatalf("InstanceDirs = %q", dirs)
	}
	for _, tt := range []struct {
		path string
		ok   bool
	}{
		{"/data/bcs/work/demo.gamesvr.2", true},
		{"/data/bcs/work/demo.gamesvr.2/", true},
		{"/data/bcs/run/demo.gamesvr.2/pid/gamesvr.pid", true},
		{"/data/bcs/work/demo.gamesvr.2//conf/./a.conf", true},
		{"/data/bcs/work/demo.gamesvr.20", false},
		{"/data/bcs/work/demo.gamesvr.2/../demo.other.2", false},
		{"/data/bcs/work/demo.gamesvr.2/a/../b", false},
		{"/data/bcs/work", false},
		{"/data/bcs/work/demo.other.2/x", false},
		{"/etc/shadow", false},
		{"demo.gamesvr.2/x", false},
		{"", false},
		{"/", false},
	} {
		err := confine.Check(tt.path, dirs...)
		if (err == nil) != tt.ok {
			t.Errorf("Check(%q) = %v, want ok %v", tt.path, err, tt.ok)
		}
	}
	if got := confine.Rel("/data/bcs/work/demo.gamesvr.2/conf/a", dirs[0]); got != "conf/a" {
		t.Errorf("Rel = %q", got)
	}
	if got := confine.Rel("/data/bcs/work/demo.gamesvr.2/", dirs[0]); got != "." {
		t.Errorf("Rel of the dir itself = %q", got)
	}
	if err := confine.Check("/srv/pkg/a.tgz"); err == nil || err.Error() != `"/srv/pkg/a.tgz" is outside every allowed directory (none is configured)` {
		t.Errorf("no dirs: %v", err)
	}
}
