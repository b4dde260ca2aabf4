package devcluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Media types of the Mesos v1 HTTP APIs.
const (
	mediaJSON     = "application/json"
	mediaProtobuf = "application/x-protobuf"
	mediaRecordIO = "application/recordio"
)

// message is what the mesos-go generated (gogo protobuf) types implement:
// binary protobuf plus encoding/json through their struct tags and enum
// MarshalJSON methods, which is also how mesos-go's own JSON codec encodes.
type message interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// codec encodes one message in one media type.
type codec struct {
	mediaType string
}

func (c codec) encode(m message) ([]byte, error) {
	if c.mediaType == mediaProtobuf {
		return m.Marshal()
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return asMesosJSON(b)
}

func (c codec) decode(b []byte, m message) error {
	if c.mediaType == mediaProtobuf {
		return m.Unmarshal(b)
	}
	return json.Unmarshal(b, m)
}

// Master capabilities of Mesos 1.12 newer than mesos-go's generated types
// (mesos.proto MasterInfo.Capability.Type). mesos-go writes an enum value
// it does not know as its number; a real master writes the name.
const masterCapabilityQuotaV2 mesos.MasterInfo_Capability_Type = 3

var newerMasterCapabilityNames = map[string]string{"3": "QUOTA_V2"}

// asMesosJSON rewrites mesos-go's JSON of an event the way Mesos writes
// it: fields that are not set are left out (mesos-go writes null for an
// unset repeated or map field), and master capabilities newer than
// mesos-go carry their names.
func asMesosJSON(event []byte) ([]byte, error) {
	// Numbers stay as written: an int64 such as a TimeInfo's nanoseconds
	// does not survive a float64.
	dec := json.NewDecoder(bytes.NewReader(event))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	tree = withoutNulls(tree)
	if top, ok := tree.(map[string]any); ok {
		sub, _ := top["subscribed"].(map[string]any)
		info, _ := sub["master_info"].(map[string]any)
		caps, _ := info["capabilities"].([]any)
		for _, c := range caps {
			if m, ok := c.(map[string]any); ok {
				if name, ok := newerMasterCapabilityNames[fmt.Sprint(m["type"])]; ok {
					m["type"] = name
				}
			}
		}
	}
	return json.Marshal(tree)
}

func withoutNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if val == nil {
				delete(x, k)
				continue
			}
			x[k] = withoutNulls(val)
		}
	case []any:
		for i := range x {
			x[i] = withoutNulls(x[i])
		}
	}
	return v
}

// httpError is a status code and body the handler answers with, as Mesos
// does (text/plain body with the reason).
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s", e.code, e.msg) }

func writeHTTPError(w http.ResponseWriter, err *httpError) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(err.code)
	_, _ = io.WriteString(w, err.msg)
}

// decodeCall reads a call body in the request's Content-Type, answering like
// the Mesos master does for a missing or unsupported type or a bad body.
func decodeCall(r *http.Request, m message) (codec, *httpError) {
	if r.Method != http.MethodPost {
		return codec{}, &httpError{http.StatusMethodNotAllowed, "Expecting one of { 'POST' }, but received '" + r.Method + "'"}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return codec{}, &httpError{http.StatusBadRequest, "Expecting 'Content-Type' to be present"}
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != mediaJSON && mt != mediaProtobuf) {
		return codec{}, &httpError{http.StatusUnsupportedMediaType, "Expecting 'Content-Type' of " + mediaJSON + " or " + mediaProtobuf}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return codec{}, &httpError{http.StatusBadRequest, "Failed to read body: " + err.Error()}
	}
	c := codec{mediaType: mt}
	if err := c.decode(body, m); err != nil {
		if mt == mediaProtobuf {
			return codec{}, &httpError{http.StatusBadRequest, "Failed to parse body into Call protobuf"}
		}
		return codec{}, &httpError{http.StatusBadRequest, "Failed to convert JSON into Call protobuf: " + err.Error()}
	}
	return c, nil
}

// streamFormat is the negotiated shape of an event stream response.
type streamFormat struct {
	contentType string // Content-Type header of the response
	message     codec  // encoding of each record
}

// negotiateStream picks the response format of a streaming (SUBSCRIBE)
// reply from Accept, and Message-Accept when Accept asks for RecordIO.
// Mesos answers Content-Type application/json or application/x-protobuf
// with RecordIO framing; newer clients may ask for application/recordio.
func negotiateStream(r *http.Request) (streamFormat, *httpError) {
	accept := r.Header.Get("Accept")
	if accepts(accept, mediaRecordIO) && !acceptsWildcard(accept) {
		inner := r.Header.Get("Message-Accept")
		switch {
		case inner == "" || accepts(inner, mediaJSON):
			return streamFormat{contentType: mediaRecordIO, message: codec{mediaJSON}}, nil
		case accepts(inner, mediaProtobuf):
			return streamFormat{contentType: mediaRecordIO, message: codec{mediaProtobuf}}, nil
		}
		return streamFormat{}, &httpError{http.StatusNotAcceptable, "Expecting 'Message-Accept' to allow '" + mediaProtobuf + "' or '" + mediaJSON + "'"}
	}
	out, herr := negotiateResponse(r)
	if herr != nil {
		return streamFormat{}, herr
	}
	return streamFormat{contentType: out.mediaType, message: out}, nil
}

// negotiateResponse picks the encoding of a response from Accept: JSON
// when it allows JSON or is absent, else protobuf when it allows that.
func negotiateResponse(r *http.Request) (codec, *httpError) {
	accept := r.Header.Get("Accept")
	switch {
	case accept == "" || accepts(accept, mediaJSON):
		return codec{mediaJSON}, nil
	case accepts(accept, mediaProtobuf):
		return codec{mediaProtobuf}, nil
	}
	return codec{}, &httpError{http.StatusNotAcceptable, "Expecting 'Accept' to allow '" + mediaProtobuf + "' or '" + mediaJSON + "'"}
}

// accepts reports whether an Accept-style header value admits media type mt
// (exactly, through type/* or */*).
func accepts(header, mt string) bool {
	major := strings.SplitN(mt, "/", 2)[0]
	for _, part := range strings.Split(header, ",") {
		v := strings.TrimSpace(strings.SplitN(part, ";", 2)[0])
		if v == mt || v == "*/*" || v == major+"/*" {
			return true
		}
	}
	return false
}

func acceptsWildcard(header string) bool {
	for _, part := range strings.Split(header, ",") {
		if strings.TrimSpace(strings.SplitN(part, ";", 2)[0]) == "*/*" {
			return true
		}
	}
	return false
}

// recordWriter writes RecordIO records ("<len>\n<bytes>") and flushes each,
// so that a long-lived stream delivers events as they happen.
type recordWriter struct {
	w     io.Writer
	flush func()
	codec codec
}

func (rw *recordWriter) write(m message) error {
	b, err := rw.codec.encode(m)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(rw.w, "%d\n", len(b)); err != nil {
		return err
	}
	if _, err := rw.w.Write(b); err != nil {
		return err
	}
	rw.flush()
	return nil
}
