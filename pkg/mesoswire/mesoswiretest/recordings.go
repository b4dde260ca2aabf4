package mesoswiretest

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gogo/protobuf/proto"
	"github.com/mesos/mesos-go/api/v1/lib/recordio"

	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
)

// The recordings.
const (
	SchedulerSubscribe = "mesos-1.12-scheduler-subscribe.recordio" // SUBSCRIBED, HEARTBEAT, OFFERS
	ExecutorSubscribe  = "mesos-1.12-executor-subscribe.recordio"  // SUBSCRIBED, LAUNCH_GROUP
)

// Recording returns a recording as it came off the wire.
func Recording(t testing.TB, name string) []byte {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "..", "testdata", "mesos-1.12", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Message is a mesos-go generated event type (a pointer).
type Message[E any] interface {
	*E
	proto.Message
}

// Protobuf returns a recording transcoded to protobuf, each event decoded
// with mesoswire's JSON and passed to edit (which may be nil) first.
func Protobuf[E any, PE Message[E]](t testing.TB, name string, edit func(PE)) []byte {
	t.Helper()
	r := recordio.NewReader(bytes.NewReader(Recording(t, name)))
	var out bytes.Buffer
	w := recordio.NewWriter(&out)
	for {
		frame, err := r.ReadFrame()
		if err == io.EOF {
			return out.Bytes()
		}
		if err != nil {
			t.Fatal(err)
		}
		e := PE(new(E))
		if err := mesoswire.UnmarshalJSON(frame, e); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(e)
		}
		pb, err := proto.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(pb); err != nil {
			t.Fatal(err)
		}
	}
}
