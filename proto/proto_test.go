package proto_test

import (
	"reflect"
	"strings"
	"testing"

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
