package mesoswire_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/framing"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire/mesoswiretest"
)

func decoder(codec encoding.Codec, stream []byte) encoding.Decoder {
	return codec.NewDecoder(func() framing.Reader { return recordio.NewReader(bytes.NewReader(stream)) })
}

func capabilities(mi *mesos.MasterInfo) []mesos.MasterInfo_Capability_Type {
	var out []mesos.MasterInfo_Capability_Type
	for _, c := range mi.GetCapabilities() {
		out = append(out, c.Type)
	}
	return out
}

// A real 1.12 master's SUBSCRIBED names QUOTA_V2, which mesos-go's types
// do not know (mesos-facts.md): the JSON codec drops that value as
// protobuf would, and decodes the rest of the stream unchanged.
func TestJSONDecodesTheSchedulerRecording(t *testing.T) {
	dec := decoder(mesoswire.JSON, mesoswiretest.Recording(t, mesoswiretest.SchedulerSubscribe))
	var sub, hb, offers scheduler.Event
	for _, e := range []*scheduler.Event{&sub, &hb, &offers} {
		if err := dec.Decode(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := dec.Decode(&scheduler.Event{}); err != io.EOF {
		t.Fatalf("after three events: %v, want EOF", err)
	}
	s := sub.GetSubscribed()
	if sub.Type != scheduler.Event_SUBSCRIBED || s.GetFrameworkID().GetValue() != "5ee7c0de-0000-4000-8000-000000000001-0006" || s.GetHeartbeatIntervalSeconds() != 15 {
		t.Fatalf("SUBSCRIBED decoded as %+v", sub)
	}
	got := capabilities(s.GetMasterInfo())
	want := []mesos.MasterInfo_Capability_Type{mesos.MasterInfo_Capability_AGENT_UPDATE, mesos.MasterInfo_Capability_AGENT_DRAINING, mesos.MasterInfo_Capability_UNKNOWN}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("capabilities %v, want %v (QUOTA_V2 unknown)", got, want)
	}
	if mi := s.GetMasterInfo(); mi.GetVersion() != "1.12.0" || mi.GetAddress().GetPort() != 5150 {
		t.Errorf("master_info %+v", mi)
	}
	if hb.Type != scheduler.Event_HEARTBEAT {
		t.Errorf("second event %v, want HEARTBEAT", hb.Type)
	}
	list := offers.GetOffers().GetOffers()
	if offers.Type != scheduler.Event_OFFERS || len(list) != 1 {
		t.Fatalf("third event %+v", offers)
	}
	o := list[0]
	if o.AgentID.Value != "5ee7c0de-0000-4000-8000-000000000001-S0" || o.Hostname != "127.0.0.1" {
		t.Errorf("offer %+v", o)
	}
	if ports := o.Resources[0].GetRanges().GetRange(); o.Resources[0].Name != "ports" || len(ports) != 2 ||
		ports[0] != (mesos.Value_Range{Begin: 31000, End: 31237}) || ports[1] != (mesos.Value_Range{Begin: 31239, End: 32000}) {
		t.Errorf("ports %+v", o.Resources[0])
	}
	if cpus := o.Resources[1]; cpus.Name != "cpus" || cpus.GetScalar().GetValue() != 3.79 {
		t.Errorf("cpus %+v", cpus)
	}
	if o.Resources[0].GetAllocationInfo().GetRole() != "*" {
		t.Errorf("allocation_info %+v", o.Resources[0])
	}
	if len(o.Attributes) != 2 || o.Attributes[0].Name != "idc" || o.Attributes[0].GetText().GetValue() != "sz" {
		t.Errorf("attributes %+v", o.Attributes)
	}
}

func TestJSONDecodesTheExecutorRecording(t *testing.T) {
	dec := decoder(mesoswire.JSON, mesoswiretest.Recording(t, mesoswiretest.ExecutorSubscribe))
	var sub, launch executor.Event
	for _, e := range []*executor.Event{&sub, &launch} {
		if err := dec.Decode(e); err != nil {
			t.Fatal(err)
		}
	}
	s := sub.GetSubscribed()
	if s.ExecutorInfo.ExecutorID.Value != "demo_probe_0_1" || s.AgentInfo.GetID().GetValue() != "5ee7c0de-0000-4000-8000-000000000001-S0" ||
		!s.FrameworkInfo.GetCheckpoint() || s.GetContainerID().GetValue() != "c0c0c0c0-b4ad-405a-aa51-000000000001" {
		t.Fatalf("SUBSCRIBED decoded as %+v", s)
	}
	tasks := launch.GetLaunchGroup().GetTaskGroup().Tasks
	if launch.Type != executor.Event_LAUNCH_GROUP || len(tasks) != 1 || tasks[0].TaskID.Value != "demo_probe_0_1_0" ||
		tasks[0].GetKillPolicy().GetGracePeriod().GetNanoseconds() != 5e9 || len(tasks[0].Data) == 0 {
		t.Fatalf("LAUNCH_GROUP decoded as %+v", launch)
	}
}

// The same events in protobuf, with the capability the generated types
// do not know (QUOTA_V2 = 3 in Mesos 1.12's mesos.proto): protobuf keeps
// decoding.
func TestProtobufSkipsUnknownEnumValues(t *testing.T) {
	var sub scheduler.Event
	if err := decoder(mesoswire.JSON, mesoswiretest.Recording(t, mesoswiretest.SchedulerSubscribe)).Decode(&sub); err != nil {
		t.Fatal(err)
	}
	sub.Subscribed.MasterInfo.Capabilities[2].Type = 3
	frame, err := sub.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	if err := recordio.NewWriter(&stream).WriteFrame(frame); err != nil {
		t.Fatal(err)
	}
	var got scheduler.Event
	if err := decoder(mesoswire.Protobuf, stream.Bytes()).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.GetSubscribed().GetFrameworkID().GetValue() != "5ee7c0de-0000-4000-8000-000000000001-0006" || len(got.GetSubscribed().GetMasterInfo().GetCapabilities()) != 3 {
		t.Fatalf("decoded %+v", got)
	}
}

// Only unknown enum values are forgiven: a value of the wrong type is an
// error that keeps the frame, and the framework ID can still be read.
func TestUndecodableFramesKeepTheFrameworkID(t *testing.T) {
	jsonFrame := []byte(`{"type":"SUBSCRIBED","subscribed":{"framework_id":{"value":"fw-7"},"heartbeat_interval_seconds":"fifteen"}}`)
	var stream bytes.Buffer
	if err := recordio.NewWriter(&stream).WriteFrame(jsonFrame); err != nil {
		t.Fatal(err)
	}
	err := decoder(mesoswire.JSON, stream.Bytes()).Decode(&scheduler.Event{})
	var de *mesoswire.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("err %v, want a DecodeError", err)
	}
	if id := mesoswire.SubscribedFrameworkID(de); id != "fw-7" {
		t.Errorf("framework ID %q from JSON, want fw-7", id)
	}

	hb := 15.0
	ev := scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{FrameworkID: &mesos.FrameworkID{Value: "fw-8"}, HeartbeatIntervalSeconds: &hb}}
	frame, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	frame = append(frame, 0x1a, 0x05, 'x') // field 3, 5 bytes long, then only one
	stream.Reset()
	if err := recordio.NewWriter(&stream).WriteFrame(frame); err != nil {
		t.Fatal(err)
	}
	err = decoder(mesoswire.Protobuf, stream.Bytes()).Decode(&scheduler.Event{})
	if !errors.As(err, &de) {
		t.Fatalf("err %v, want a DecodeError", err)
	}
	if id := mesoswire.SubscribedFrameworkID(de); id != "fw-8" {
		t.Errorf("framework ID %q from protobuf, want fw-8", id)
	}
	if id := mesoswire.SubscribedFrameworkID(&mesoswire.DecodeError{Codec: mesoswire.NameJSON, Frame: []byte(`{"type":"OFFERS"}`)}); id != "" {
		t.Errorf("framework ID %q of a frame without one", id)
	}
}

// An optional enum with an unknown value stays unset; known values and
// unknown fields decode as encoding/json decodes them.
func TestUnmarshalJSONDropsOnlyUnknownEnumValues(t *testing.T) {
	var st mesos.TaskStatus
	err := mesoswire.UnmarshalJSON([]byte(`{"task_id":{"value":"t"},"state":"TASK_RUNNING","reason":"REASON_FROM_THE_FUTURE","source":"SOURCE_AGENT","new_field":{"x":1}}`), &st)
	if err != nil {
		t.Fatal(err)
	}
	if st.TaskID.Value != "t" || st.GetState() != mesos.TASK_RUNNING || st.Reason != nil || st.GetSource() != mesos.SOURCE_AGENT {
		t.Errorf("decoded %+v", st)
	}
	if err := mesoswire.UnmarshalJSON([]byte(`{"task_id":{"value":"t"},"state":"TASK_RUNNING","timestamp":"yesterday"}`), &st); err == nil {
		t.Error("a string timestamp decoded")
	}
	for _, name := range []string{mesoswire.NameProtobuf, mesoswire.NameJSON} {
		if c, err := mesoswire.ByName(name); err != nil || c.Name != name {
			t.Errorf("ByName(%q) = %v, %v", name, c.Name, err)
		}
	}
	if _, err := mesoswire.ByName("xml"); err == nil {
		t.Error("ByName(xml) succeeded")
	}
}

// An event over mesos-go's 4 MiB frame limit (an OFFERS event of thousands
// of agents) is decoded, by both codecs.
func TestDecodersReadFramesOverFourMiB(t *testing.T) {
	data := bytes.Repeat([]byte("o"), 5<<20)
	event := &scheduler.Event{Type: scheduler.Event_MESSAGE, Message: &scheduler.Event_Message{
		AgentID: mesos.AgentID{Value: "a"}, ExecutorID: mesos.ExecutorID{Value: "e"}, Data: data}}
	for _, codec := range []encoding.Codec{mesoswire.Protobuf, mesoswire.JSON} {
		var stream bytes.Buffer
		if err := codec.NewEncoder(func() framing.Writer { return recordio.NewWriter(&stream) }).Encode(event); err != nil {
			t.Fatal(err)
		}
		var got scheduler.Event
		if err := decoder(codec, stream.Bytes()).Decode(&got); err != nil || !bytes.Equal(got.GetMessage().GetData(), data) {
			t.Errorf("%s: a %d-byte event: %v", codec.Name, stream.Len(), err)
		}
	}
}
