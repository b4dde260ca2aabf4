package store

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// SealedMembers are the JSON object members whose string values are
// sealed at rest wherever a stored value has them: the names manifests
// give their passwords (a container's imagePullPasswd, a package's pwd, a
// remote configmap item's remotePasswd; pkg/registry checks that they are
// pkg/manifest's credential fields). The rest of the value stays readable
// JSON, so etcdctl still shows an application; only the password is
// ciphertext.
var SealedMembers = []string{"imagePullPasswd", "pwd", "remotePasswd"}

// SealedMapMembers are the JSON object members whose value is a list of
// credentials, each sealed as a SealedMembers string is while its name
// stays readable (pkg/manifest's CredentialMaps). The list is an object
// of name → credential (an HTTP check's headers: the name Authorization,
// the token sealed), or an array of {"key", "value"} objects whose
// "value" is the credential (a hook web metric's headers).
var SealedMapMembers = []string{"headers"}

// sealedPrefix begins a sealed member's string: the Sealer's output in
// base64. A stored member without it is a password written in clear by an
// older release; it is read as it is and sealed at its next write.
const sealedPrefix = "bcs-sealed:"

// sealMembers seals the non-empty SealedMembers strings of value (and the
// credentials of SealedMapMembers lists), bound to key and the member's
// name. What is sealed is the string's JSON literal, escapes and all, so
// that openMembers gives back the value byte for byte.
func (s *Store) sealMembers(key string, value []byte) ([]byte, error) {
	return rewriteMembers(value, func(name string, literal []byte, _ string) ([]byte, error) {
		if string(literal) == `""` {
			return literal, nil
		}
		if s.sealer == nil {
			return nil, fmt.Errorf("key %q has a %q to seal and the store has no Sealer: %w", key, name, errdefs.ErrInvalidArgument)
		}
		return sealMember(s.sealer, key, name, literal)
	})
}

// sealMember returns the sealed member's string: literal sealed by sealer.
func sealMember(sealer *Sealer, key, name string, literal []byte) ([]byte, error) {
	sealed, err := sealer.Seal(literal, memberData(key, name))
	if err != nil {
		return nil, err
	}
	return json.Marshal(sealedPrefix + base64.StdEncoding.EncodeToString(sealed))
}

// openMembers reverses sealMembers.
func (s *Store) openMembers(key string, value []byte) ([]byte, error) {
	return rewriteMembers(value, func(name string, literal []byte, text string) ([]byte, error) {
		sealed, ok, err := sealedMember(key, name, text)
		if !ok || err != nil {
			return literal, err
		}
		if s.sealer == nil {
			return nil, fmt.Errorf("key %q has a sealed %q and the store has no Sealer: %w", key, name, errdefs.ErrInvalidArgument)
		}
		return openMember(s.sealer, key, name, sealed)
	})
}

// sealedMember returns the Sealer output a member's text holds, or false
// when the member is in clear.
func sealedMember(key, name, text string) ([]byte, bool, error) {
	encoded, ok := strings.CutPrefix(text, sealedPrefix)
	if !ok {
		return nil, false, nil
	}
	sealed, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, true, fmt.Errorf("key %q: sealed %q is not base64: %w", key, name, ErrCannotUnseal)
	}
	return sealed, true, nil
}

// openMember returns the string literal a member's sealed bytes hold.
func openMember(sealer *Sealer, key, name string, sealed []byte) ([]byte, error) {
	opened, err := sealer.Open(sealed, memberData(key, name))
	if err != nil {
		return nil, fmt.Errorf("key %q: %q: %w", key, name, err)
	}
	return opened, nil
}

func memberData(key, name string) []byte { return []byte(key + "#" + name) }

// rewriteMembers returns value with the string literal of every
// SealedMembers member, and every credential of a SealedMapMembers list,
// at any depth, replaced by what fn makes of it (fn gets the member's
// name, the literal and its text); everything else is kept byte for
// byte. A value that is not JSON, or names no such member, is returned as
// it is.
func rewriteMembers(value []byte, fn func(name string, literal []byte, text string) ([]byte, error)) ([]byte, error) {
	if !mentionsSealedMember(value) {
		return value, nil
	}
	type span struct {
		start, end int // the string literal's bytes
		name, text string
	}
	// A frame is an object or array being read. Of a SealedMapMembers
	// list, the name is in values (an object: its string values are
	// sealed) or pairs (an array); pair marks an object of a pairs
	// array, whose "value" is sealed.
	type frame struct {
		object, wantName    bool
		values, pairs, pair string
	}
	var spans []span
	var stack []frame
	// sealAs is the name a string that comes next is sealed under (a
	// SealedMembers member, a pair's "value"); list is the
	// SealedMapMembers member whose object or array comes next.
	sealAs, list := "", ""
	dec := json.NewDecoder(bytes.NewReader(value))
	for {
		before := int(dec.InputOffset())
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return value, nil // not JSON: nothing of ours to seal
		}
		var top *frame
		if n := len(stack); n > 0 {
			top = &stack[n-1]
		}
		if delim, ok := tok.(json.Delim); ok {
			if delim == '}' || delim == ']' {
				stack = stack[:len(stack)-1]
			} else {
				if top != nil && top.object {
					top.wantName = true // after this value, the next member
				}
				f := frame{object: delim == '{', wantName: delim == '{'}
				switch {
				case list != "" && f.object:
					f.values = list
				case list != "":
					f.pairs = list
				case top != nil && top.pairs != "" && f.object:
					f.pair = top.pairs
				}
				stack = append(stack, f)
			}
			sealAs, list = "", ""
			continue
		}
		if top != nil && top.object && top.wantName {
			top.wantName = false
			switch name, _ := tok.(string); {
			case isSealedMember(name):
				sealAs = name
			case isSealedMapMember(name):
				list = name
			case top.pair != "" && name == "value":
				sealAs = top.pair
			}
			continue
		}
		if top != nil && top.object {
			top.wantName = true
		}
		name := sealAs
		if name == "" && top != nil {
			name = top.values
		}
		if text, ok := tok.(string); ok && name != "" {
			end := int(dec.InputOffset())
			start := before + bytes.IndexByte(value[before:end], '"')
			spans = append(spans, span{start: start, end: end, name: name, text: text})
		}
		sealAs, list = "", ""
	}
	if len(spans) == 0 {
		return value, nil
	}
	out := make([]byte, 0, len(value)+len(spans)*64)
	last := 0
	for _, sp := range spans {
		replaced, err := fn(sp.name, value[sp.start:sp.end], sp.text)
		if err != nil {
			return nil, err
		}
		out = append(append(out, value[last:sp.start]...), replaced...)
		last = sp.end
	}
	return append(out, value[last:]...), nil
}

func isSealedMember(name string) bool { return slices.Contains(SealedMembers, name) }

func isSealedMapMember(name string) bool { return slices.Contains(SealedMapMembers, name) }

// mentionsSealedMember is the cheap test that spares most values (task
// groups, agents) the JSON walk.
func mentionsSealedMember(value []byte) bool {
	for _, m := range slices.Concat(SealedMembers, SealedMapMembers) {
		if bytes.Contains(value, []byte(`"`+m+`"`)) {
			return true
		}
	}
	return false
}
