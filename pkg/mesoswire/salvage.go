package mesoswire

import (
	"encoding/json"

	"google.golang.org/protobuf/encoding/protowire"
)

// SubscribedFrameworkID reads subscribed.framework_id.value from a frame of
// a scheduler event stream that did not decode as a whole; "" when the
// frame is no SUBSCRIBED or has no ID either. The master registers a new
// framework for every SUBSCRIBE without an ID, so a scheduler must learn
// its ID even from a SUBSCRIBED it cannot otherwise read.
func SubscribedFrameworkID(err *DecodeError) string {
	if err == nil {
		return ""
	}
	if err.Codec == NameJSON {
		var event struct {
			Subscribed struct {
				FrameworkID struct {
					Value string `json:"value"`
				} `json:"framework_id"`
			} `json:"subscribed"`
		}
		if json.Unmarshal(err.Frame, &event) != nil {
			return ""
		}
		return event.Subscribed.FrameworkID.Value
	}
	// scheduler.proto: Event.subscribed = 2, Subscribed.framework_id = 1,
	// FrameworkID.value = 1.
	subscribed := protoField(err.Frame, 2)
	return string(protoField(protoField(subscribed, 1), 1))
}

// protoField returns the last length-delimited field num of msg; nil when
// there is none or msg is malformed before it.
func protoField(msg []byte, num protowire.Number) []byte {
	var found []byte
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return found
		}
		msg = msg[l:]
		if n == num && typ == protowire.BytesType {
			v, vl := protowire.ConsumeBytes(msg)
			if vl < 0 {
				return found
			}
			found, msg = v, msg[vl:]
			continue
		}
		vl := protowire.ConsumeFieldValue(n, typ, msg)
		if vl < 0 {
			return found
		}
		msg = msg[vl:]
	}
	return found
}
