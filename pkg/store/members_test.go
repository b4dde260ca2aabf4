package store

import (
	"bytes"
	"testing"
)

// Sealing the passwords of any value and opening them again gives the
// value back byte for byte, whatever the value (storetest checks that the
// passwords are sealed).
func FuzzSealedMembersRoundTrip(f *testing.F) {
	for _, seed := range []string{
		`{"spec":{"uris":[{"pwd":"hunter2"},{"pwd":""}]}}`,
		`{"imagePullPasswd":"a\"b\u003c","x":{"pwd":{"pwd":"deep"}},"pwd":[ "not", "ours" ]}`,
		` { "remotePasswd" : "spaced" , "pwd":null,"pwd":7 } `,
		`["pwd","pwd"]`,
		`{"pwd":"bcs-sealed:forged"}`,
		`{"http":{"headers":{"Authorization":"Bearer t0ken","X":"","Y":{"pwd":"deep"},"Z":["not","ours"]}},"headers":"not ours","h":{"headers":[{"value":"v"}]}}`,
		`{"web":{"headers":[{"key":"Authorization","value":"Bearer t0ken"},{"value":""},{"key":"k","value":{"pwd":"deep"}},"not ours",["value","v"]]},"headers":[]}`,
		`{"pwd":"unterminated`,
		`not json "pwd"`,
	} {
		f.Add([]byte(seed))
	}
	sealer, err := NewSealer(bytes.Repeat([]byte{7}, KeySize))
	if err != nil {
		f.Fatal(err)
	}
	s := &Store{sealer: sealer}
	f.Fuzz(func(t *testing.T, value []byte) {
		sealed, err := s.sealMembers("apps/ns/web", value)
		if err != nil {
			t.Fatalf("seal %q: %v", value, err)
		}
		opened, err := s.openMembers("apps/ns/web", sealed)
		if err != nil {
			t.Fatalf("open %q (sealed %q): %v", value, sealed, err)
		}
		if !bytes.Equal(opened, value) {
			t.Fatalf("round trip of %q gave %q", value, opened)
		}
	})
}

// The cost of sealing on every write: a value with no password (a task
// group) pays one scan for each member name; an application with one
// pays a JSON walk and a seal.
func BenchmarkSealMembers(b *testing.B) {
	sealer, err := NewSealer(bytes.Repeat([]byte{7}, KeySize))
	if err != nil {
		b.Fatal(err)
	}
	s := &Store{sealer: sealer}
	filler := bytes.Repeat([]byte(`{"name":"gamesvr","value":"--port=8080"},`), 100)
	for _, bc := range []struct{ name, value string }{
		{"without", `{"env":[` + string(filler) + `{}]}`},
		{"with", `{"env":[` + string(filler) + `{}],"uris":[{"pwd":"hunter2"}]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.value)))
			for b.Loop() {
				if _, err := s.sealMembers("apps/ns/web", []byte(bc.value)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
