package manifest

import (
	"reflect"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// credentialFields are the JSON names of the fields that hold passwords:
// a container's image pull password, a process package's download
// password, a remote configmap item's password.
var credentialFields = map[string]bool{"imagePullPasswd": true, "pwd": true, "remotePasswd": true}

// WithoutCredentials returns a deep copy of obj with every password
// emptied (and so omitted from its JSON): what may be shown of a stored
// manifest to someone who reads state, not secrets.
func WithoutCredentials(obj Object) Object {
	out := rewrite(reflect.ValueOf(obj).Elem(), "", func(p field.Path, s string) string {
		if credentialFields[string(p)[strings.LastIndexByte(string(p), '.')+1:]] {
			return ""
		}
		return s
	})
	return out.Addr().Interface().(Object)
}
