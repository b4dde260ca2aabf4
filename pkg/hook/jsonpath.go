package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// parseJSONPath parses a web metric's jsonPath, Kubernetes' JSONPath
// template form: "{$.age}", "{.items[0].status}".
func parseJSONPath(path string) (*jsonpath.JSONPath, error) {
	p := jsonpath.New("jsonPath")
	if err := p.Parse(path); err != nil {
		return nil, err
	}
	return p, nil
}

// JSONPath selects the value path names in a JSON body, as text: {$.age}
// on {"name":"bryan","male":"yes","age":45} gives "45". Numbers keep the
// text they have in the body; a key that is not there is an error. An
// error never quotes the body: what a hook calls answers for others too.
func JSONPath(body []byte, path string) (string, error) {
	p, err := parseJSONPath(path)
	if err != nil {
		return "", fmt.Errorf("jsonPath %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		at := ""
		if syntax := (*json.SyntaxError)(nil); errors.As(err, &syntax) {
			at = fmt.Sprintf(" (at byte %d)", syntax.Offset)
		}
		return "", fmt.Errorf("jsonPath %s: the body (%d bytes) is not JSON%s", path, len(body), at)
	}
	var out bytes.Buffer
	if err := p.Execute(&out, doc); err != nil {
		return "", fmt.Errorf("jsonPath %s: %s", path, pathError(err, len(body)))
	}
	return out.String(), nil
}

// pathError is why a path selects nothing, as the JSONPath library says
// it when its message names only the path ("height is not found", an
// index out of bounds); others may quote the document (a filter's
// "<value> is not array or slice"), and are told without it.
func pathError(err error, size int) string {
	msg := err.Error()
	if strings.HasSuffix(msg, " is not found") || strings.HasPrefix(msg, "array index out of bounds") {
		return msg
	}
	return fmt.Sprintf("it does not apply to the body (%d bytes)", size)
}
