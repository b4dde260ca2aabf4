package manifest

import (
	"reflect"
	"slices"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// CredentialFields are the JSON names of the fields that hold passwords:
// a container's image pull password, a process package's download
// password, a remote configmap item's password. They are redacted in what
// is shown and sealed at rest (pkg/store's SealedMembers, which a registry
// test holds to this list).
var CredentialFields = []string{"imagePullPasswd", "pwd", "remotePasswd"}

// Redacted stands for a password in what is shown of a manifest.
const Redacted = "***"

func isCredential(p field.Path) bool {
	return slices.Contains(CredentialFields, string(p)[strings.LastIndexByte(string(p), '.')+1:])
}

// RedactCredentials returns a deep copy of obj in which every password set
// is Redacted: what may be shown of a stored manifest to someone who
// reads state, not secrets.
func RedactCredentials(obj Object) Object {
	return rewriteObject(obj, func(p field.Path, s string) string {
		if s != "" && isCredential(p) {
			return Redacted
		}
		return s
	})
}

// KeepCredentials returns a copy of obj in which each Redacted password
// (a manifest read back from the API and sent again) is the password at
// the same place of old, the stored manifest; old may be nil (a create).
// A Redacted password old has none for is an error naming the field.
func KeepCredentials(obj, old Object) (Object, error) {
	stored := map[field.Path]string{}
	if old != nil {
		rewriteObject(old, func(p field.Path, s string) string {
			if isCredential(p) {
				stored[p] = s
			}
			return s
		})
	}
	var errs field.ErrorList
	out := rewriteObject(obj, func(p field.Path, s string) string {
		if s != Redacted || !isCredential(p) {
			return s
		}
		if password, ok := stored[p]; ok && password != "" {
			return password
		}
		errs = append(errs, field.Invalid(p, "%q stands for a password shown redacted, and there is none stored here to keep: send the password", Redacted))
		return s
	})
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

func rewriteObject(obj Object, fn stringRewriter) Object {
	return rewrite(reflect.ValueOf(obj).Elem(), "", fn).Addr().Interface().(Object)
}
