package schedulerd

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// recorder makes components that log their starts and stops.
type recorder struct{ log []string }

// component starts, failing with startErr, and stops failing with
// stopErr; noStop makes it one with nothing to stop.
func (r *recorder) component(name string, startErr, stopErr error, noStop bool) component {
	return component{name: name, start: func(context.Context) (func() error, error) {
		r.log = append(r.log, "start "+name)
		if startErr != nil {
			return nil, startErr
		}
		if noStop {
			return nil, nil
		}
		return func() error {
			r.log = append(r.log, "stop "+name)
			return stopErr
		}, nil
	}}
}

func (r *recorder) want(t *testing.T, want ...string) {
	t.Helper()
	if !slices.Equal(r.log, want) {
		t.Errorf("log:\n  %s\nwant:\n  %s", strings.Join(r.log, "\n  "), strings.Join(want, "\n  "))
	}
	r.log = nil
}

// The process's components start in dependency order (the store before
// the API that reads it) and stop in reverse (the API stops answering
// before the store closes), each once.
func TestLifecycleStartsInOrderStopsInReverse(t *testing.T) {
	var r recorder
	var l lifecycle
	if err := l.start(context.Background(),
		r.component("store", nil, nil, false), r.component("debug", nil, nil, true),
		r.component("api", nil, nil, false), r.component("leadership", nil, nil, false),
	); err != nil {
		t.Fatal(err)
	}
	r.want(t, "start store", "start debug", "start api", "start leadership")
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	r.want(t, "stop leadership", "stop api", "stop store")
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	r.want(t)
}

// A component that fails to start leaves the process as it found it:
// those started stop in reverse, those after it never start, and its
// error comes back as it is, for the caller to tell (a start cut short by
// SIGTERM, say) by its class.
func TestLifecycleFailedStartStopsTheStartedInReverse(t *testing.T) {
	var r recorder
	var l lifecycle
	failed := errors.New("address in use")
	err := l.start(context.Background(),
		r.component("store", nil, nil, false), r.component("cluster", nil, nil, false),
		r.component("api", failed, nil, false), r.component("leadership", nil, nil, false),
	)
	if err != failed {
		t.Errorf("start: %v, want the failed component's error as it is", err)
	}
	r.want(t, "start store", "start cluster", "start api", "stop cluster", "stop store")
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	r.want(t)

	// Errors of those stops come with it.
	closeFailed := errors.New("etcd client: close failed")
	err = l.start(context.Background(), r.component("store", nil, closeFailed, false), r.component("api", failed, nil, false))
	if !errors.Is(err, failed) || !errors.Is(err, closeFailed) || !strings.Contains(err.Error(), "stopping store: ") {
		t.Errorf("start: %v, want both errors", err)
	}
	r.want(t, "start store", "start api", "stop store")
}

// One component failing to stop does not keep the others running: every
// one stops and their errors come back joined, each naming its component.
func TestLifecycleStopJoinsErrors(t *testing.T) {
	var r recorder
	var l lifecycle
	apiErr, storeErr := errors.New("deadline exceeded"), errors.New("close failed")
	if err := l.start(context.Background(),
		r.component("store", nil, storeErr, false), r.component("cluster", nil, nil, false), r.component("api", nil, apiErr, false),
	); err != nil {
		t.Fatal(err)
	}
	r.log = nil
	err := l.stop()
	r.want(t, "stop api", "stop cluster", "stop store")
	if !errors.Is(err, apiErr) || !errors.Is(err, storeErr) {
		t.Fatalf("stop: %v, want both errors", err)
	}
	if want := "stopping api: deadline exceeded\nstopping store: close failed"; err.Error() != want {
		t.Errorf("stop: %q, want %q", err, want)
	}
}
