package proto_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/proto"
)

func TestTaskSpecRoundTrip(t *testing.T) {
	spec := &proto.TaskSpec{
		Instance: proto.Instance{Namespace: "ns-a", App: "gamesvc", Index: 2, TaskGroupID: "tg", Version: 3},
		Name:     "gamesvr",
		Process:  &proto.ProcessSpec{ProcName: "gamesvr", WorkPath: "/w", PidFile: "/p", StartCmd: "./start.sh"},
		Ports:    []proto.Port{{Name: "http", HostPort: 31000}},
		Files:    []proto.File{{Path: "/etc/x.conf", Content: []byte("secret\x00bytes")}},
	}
	data, err := spec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := proto.DecodeTaskSpec(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, spec) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, spec)
	}
}

func TestDecodeRefusesUnknownVersionAndAmbiguousSpecs(t *testing.T) {
	cases := map[string]string{
		`{"version":"bcs/v2","process":{}}`:                `version "bcs/v2", this build reads "bcs/v1"`,
		`{"process":{}}`:                                   `version "", this build reads "bcs/v1"`,
		`{"version":"bcs/v1","name":"x"}`:                  `exactly one of container, process and sweep`,
		`{"version":"bcs/v1","process":{},"container":{}}`: `exactly one of container, process and sweep`,
		`{"version":"bcs/v1","process":{},"sweep":{}}`:     `exactly one of container, process and sweep`,
		`{"version":`: `unexpected end of JSON input`,
	}
	for data, want := range cases {
		if _, err := proto.DecodeTaskSpec([]byte(data)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", data, err, want)
		}
	}
	if spec, err := proto.DecodeTaskSpec([]byte(`{"version":"bcs/v1","name":"sweep","sweep":{"reason":"r"}}`)); err != nil || spec.Sweep.Reason != "r" {
		t.Errorf("sweep spec: %+v, %v", spec, err)
	}
}

func TestMessageRoundTrip(t *testing.T) {
	m := &proto.Message{ID: "m1", Type: proto.MessageExec, TaskID: "t", Command: []string{"ls", "/"}}
	data, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := proto.DecodeMessage(data)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("got %+v, %v", got, err)
	}
	r := &proto.MessageResult{ID: "m1", Type: proto.MessageExec, OK: true, Output: "bin\n"}
	data, _ = r.Encode()
	if back, err := proto.DecodeMessageResult(data); err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("result %+v, %v", back, err)
	}
}

// An exec's output is bounded: the first MaxOutputBytes bytes are kept,
// the rest dropped and said so; every write is taken whole, so the
// command never sees a short write.
func TestOutputBufferKeepsTheBeginning(t *testing.T) {
	var b proto.OutputBuffer
	chunk := strings.Repeat("x", 1000)
	for written := len(chunk); written <= proto.MaxOutputBytes-500; written += len(chunk) {
		if n, err := b.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if b.Truncated() {
		t.Fatalf("truncated at %d bytes", len(b.String()))
	}
	if n, err := b.Write([]byte(strings.Repeat("y", 2000))); n != 2000 || err != nil {
		t.Fatalf("Write past the bound = %d, %v; want all taken", n, err)
	}
	b.Write([]byte("z"))
	out := b.String()
	if len(out) != proto.MaxOutputBytes || !b.Truncated() || strings.Contains(out, "z") || !strings.HasSuffix(out, "y") {
		t.Errorf("kept %d bytes ending %q, truncated %v; want the first %d", len(out), out[len(out)-3:], b.Truncated(), proto.MaxOutputBytes)
	}
}

// Usage reports travel beside MessageResults in the executor's messages:
// the type tells them apart, and a report round-trips.
func TestUsageReportRoundTripAndTag(t *testing.T) {
	at := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	r := &proto.UsageReport{TaskGroupID: "tg", Tasks: []proto.TaskUsage{{TaskID: "t", CPUNanos: 1_500_000_000, MemBytes: 4 << 20, At: at}}}
	data, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, ok, err := proto.DecodeUsageReport(data)
	if !ok || err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip %+v, %v, %v; want %+v", back, ok, err, r)
	}
	result, _ := (&proto.MessageResult{ID: "m", Type: proto.MessageExec, OK: true}).Encode()
	for _, other := range [][]byte{result, []byte("{"), nil} {
		if r, ok, err := proto.DecodeUsageReport(other); ok || err != nil || r != nil {
			t.Errorf("%q taken for a usage report: %+v, %v", other, r, err)
		}
	}
	if _, ok, err := proto.DecodeUsageReport([]byte(`{"version":"bcs/v2","type":"usage"}`)); !ok || err == nil || !strings.Contains(err.Error(), `usage report of version "bcs/v2", this build reads "bcs/v1"`) {
		t.Errorf("a report of another version: %v, %v", ok, err)
	}
}

// The usage interval is a field old readers ignore (the version stays):
// an executor from before it runs the spec without reports, and one
// that knows it reports nothing for a spec without it. A reader of this
// version ignores fields it does not know, as old ones ignore this one.
func TestUsageIntervalIsCompatible(t *testing.T) {
	spec := &proto.TaskSpec{Name: "gamesvr", Process: &proto.ProcessSpec{ProcName: "gamesvr"}, UsageIntervalSeconds: 15}
	data, _ := spec.Encode()
	var old struct {
		Version string          `json:"version"`
		Process json.RawMessage `json:"process"`
	}
	if err := json.Unmarshal(data, &old); err != nil || old.Version != proto.Version {
		t.Errorf("an old reader: %+v, %v", old, err)
	}
	got, err := proto.DecodeTaskSpec([]byte(`{"version":"bcs/v1","name":"x","process":{},"someFutureField":{"a":1}}`))
	if err != nil || got.UsageIntervalSeconds != 0 {
		t.Errorf("a spec without the interval, with a field unknown here: %+v, %v; want no reports", got, err)
	}
	if back, err := proto.DecodeTaskSpec(data); err != nil || back.UsageIntervalSeconds != 15 {
		t.Errorf("interval %v, %v", back.UsageIntervalSeconds, err)
	}
	if bytes.Contains(mustEncode(t, &proto.TaskSpec{Name: "x", Process: &proto.ProcessSpec{}}), []byte("usageInterval")) {
		t.Error("a spec without reports carries the field: old executors' logs would show it for nothing")
	}
}

func mustEncode(t *testing.T, spec *proto.TaskSpec) []byte {
	t.Helper()
	data, err := spec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A usage interval is 0 (none) or at least MinUsageInterval; anything
// else is refused naming the field.
func TestUsageIntervalBounds(t *testing.T) {
	for _, tc := range []struct {
		seconds float64
		want    time.Duration
		err     string
	}{
		{0, 0, ""},
		{15, 15 * time.Second, ""},
		{0.1, 100 * time.Millisecond, ""},
		{0.05, 0, "usageIntervalSeconds 0.05: want 0 (no usage reports) or at least 0.1 seconds"},
		{-1, 0, "usageIntervalSeconds -1: want 0"},
		{math.NaN(), 0, "usageIntervalSeconds NaN"},
		{math.Inf(1), 0, "usageIntervalSeconds +Inf"},
		{1e300, 0, "usageIntervalSeconds 1e+300"},
	} {
		got, err := proto.UsageInterval("usageIntervalSeconds", tc.seconds)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("UsageInterval(%v) = %v, %v; want %v, %q", tc.seconds, got, err, tc.want, tc.err)
		}
	}
	_, err := proto.DecodeTaskSpec([]byte(`{"version":"bcs/v1","name":"x","process":{},"usageIntervalSeconds":-5}`))
	if err == nil || !strings.Contains(err.Error(), `task spec "x": usageIntervalSeconds -5`) {
		t.Errorf("DecodeTaskSpec with a negative interval: %v", err)
	}
}
