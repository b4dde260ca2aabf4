package hook

import (
	"bytes"
	"encoding/json"
	"fmt"

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
// text they have in the body; a key that is not there is an error.
func JSONPath(body []byte, path string) (string, error) {
	p, err := parseJSONPath(path)
	if err != nil {
		return "", fmt.Errorf("jsonPath %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return "", fmt.Errorf("jsonPath %s: the body is not JSON: %w (body %s)", path, err, shorten(string(body)))
	}
	var out bytes.Buffer
	if err := p.Execute(&out, doc); err != nil {
		return "", fmt.Errorf("jsonPath %s: %w (body %s)", path, err, shorten(string(body)))
	}
	return out.String(), nil
}
