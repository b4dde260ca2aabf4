package mesoswire

import (
	"fmt"

	"github.com/gogo/protobuf/proto"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	mesosjson "github.com/mesos/mesos-go/api/v1/lib/encoding/json"
	mesosproto "github.com/mesos/mesos-go/api/v1/lib/encoding/proto"
)

// Names of the encodings, as flags spell them.
const (
	NameProtobuf = codecs.NameProtobuf
	NameJSON     = codecs.NameJSON
)

// Protobuf is the application/x-protobuf codec; unknown enum values and
// fields are skipped by design. Frames that fail to decode come back as
// *DecodeError.
var Protobuf = encoding.Codec{
	Name:       NameProtobuf,
	Type:       codecs.MediaTypeProtobuf,
	NewEncoder: mesosproto.NewEncoder,
	NewDecoder: func(s encoding.Source) encoding.Decoder {
		return newDecoder(s, func(frame []byte, u encoding.Unmarshaler) error {
			return proto.Unmarshal(frame, u.(proto.Message))
		}, NameProtobuf)
	},
}

// JSON is the application/json codec: mesos-go's, except that decoding
// drops enum values the generated types do not know (see UnmarshalJSON).
var JSON = encoding.Codec{
	Name:       NameJSON,
	Type:       codecs.MediaTypeJSON,
	NewEncoder: mesosjson.NewEncoder,
	NewDecoder: func(s encoding.Source) encoding.Decoder {
		return newDecoder(s, func(frame []byte, u encoding.Unmarshaler) error {
			return UnmarshalJSON(frame, u)
		}, NameJSON)
	},
}

// ByName returns the codec a flag names: "protobuf" or "json".
func ByName(name string) (encoding.Codec, error) {
	switch name {
	case NameProtobuf:
		return Protobuf, nil
	case NameJSON:
		return JSON, nil
	}
	return encoding.Codec{}, fmt.Errorf("encoding %q: want %s or %s", name, NameProtobuf, NameJSON)
}

// MaxFrameSize bounds a frame of an event stream. mesos-go's RecordIO
// reader allows 4 MiB, but a master sends the offers of every agent it
// allocates at once in one OFFERS event, which passes that at thousands
// of agents: the scheduler's subscription ended at each one ("bufio.Scanner:
// token too long") while nothing launched. The reader's buffer grows to the
// largest frame read.
const MaxFrameSize = 256 << 20

// DecodeError is a frame that was read whole but could not be decoded.
type DecodeError struct {
	Codec string // NameProtobuf or NameJSON
	Frame []byte // a copy: the reader reuses its buffer
	Err   error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("undecodable %s frame of %d bytes: %v", e.Codec, len(e.Frame), e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

func newDecoder(s encoding.Source, unmarshal func([]byte, encoding.Unmarshaler) error, codec string) encoding.Decoder {
	r := s()
	if scanner, ok := r.(interface{ Buffer(buf []byte, max int) }); ok {
		// mesos-go's RecordIO reader, a bufio.Scanner not yet read from.
		scanner.Buffer(make([]byte, 0, 64<<10), MaxFrameSize)
	}
	return encoding.DecoderFunc(func(u encoding.Unmarshaler) error {
		frame, err := r.ReadFrame()
		if err != nil {
			return err // framing and I/O errors: the stream is broken
		}
		if err := unmarshal(frame, u); err != nil {
			return &DecodeError{Codec: codec, Frame: append([]byte(nil), frame...), Err: err}
		}
		return nil
	})
}
