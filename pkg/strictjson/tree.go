package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// maxDepth bounds the nesting of objects and arrays, so hostile input cannot
// grow the parser's stack without limit.
const maxDepth = 512

// nodeKind is the JSON type of a parsed value.
type nodeKind int

const (
	kindNull nodeKind = iota
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
)

// describe names the kind as error messages do: "got a string".
func (k nodeKind) describe() string {
	switch k {
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	}
	return "null"
}

// node is one parsed JSON value. Objects keep their members in input order
// and keep duplicates, so the decoder can report them.
type node struct {
	kind    nodeKind
	text    string // kindString: the unescaped string; kindNumber: the literal
	boolean bool
	members []member
	elems   []*node
}

type member struct {
	key   string
	value *node
}

// CheckSyntax returns nil when data is one JSON document, else the
// error Decode reports for it: where the syntax breaks, by line, column
// and byte offset ("invalid JSON at line 2, column 27 (offset 46): …").
func CheckSyntax(data []byte) error {
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		return syntaxError(data, err)
	}
	return nil
}

// parse reads exactly one JSON value from data.
func parse(data []byte) (*node, error) {
	// encoding/json's scanner knows exactly where a syntax error sits; the
	// token stream built on it does not, so check the syntax first.
	if err := CheckSyntax(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &parser{dec: dec}
	n, err := p.value(0)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON at offset %d: %s", dec.InputOffset(), strings.TrimPrefix(err.Error(), "json: "))
	}
	return n, nil
}

type parser struct {
	dec *json.Decoder
}

func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nesting deeper than %d levels", maxDepth)
	}
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case bool:
		return &node{kind: kindBool, boolean: t}, nil
	case json.Number:
		return &node{kind: kindNumber, text: string(t)}, nil
	case string:
		return &node{kind: kindString, text: t}, nil
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: kindObject}
			for p.dec.More() {
				keyTok, err := p.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := keyTok.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{key: key, value: v})
			}
			if _, err := p.dec.Token(); err != nil { // '}'
				return nil, err
			}
			return n, nil
		case '[':
			n := &node{kind: kindArray}
			for p.dec.More() {
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
			if _, err := p.dec.Token(); err != nil { // ']'
				return nil, err
			}
			return n, nil
		}
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// syntaxError turns encoding/json's complaint into a message naming the
// line, column and byte offset (0-based) of the offending byte.
func syntaxError(data []byte, err error) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("invalid JSON: empty input")
	}
	offset := int64(len(data))
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
		if strings.HasPrefix(se.Error(), "invalid character") && offset > 0 {
			offset-- // Offset counts the bytes read, the bad one included
		}
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if msg == "unexpected end of JSON input" {
		msg = "unexpected end of input"
	}
	line, col := position(data, offset)
	return fmt.Errorf("invalid JSON at line %d, column %d (offset %d): %s", line, col, offset, msg)
}

// position converts a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// encode writes n back as compact JSON, for json.Unmarshaler fields.
func encode(buf *bytes.Buffer, n *node) {
	switch n.kind {
	case kindNull:
		buf.WriteString("null")
	case kindBool:
		if n.boolean {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case kindNumber:
		buf.WriteString(n.text)
	case kindString:
		writeString(buf, n.text)
	case kindObject:
		buf.WriteByte('{')
		for i, m := range n.members {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, m.key)
			buf.WriteByte(':')
			encode(buf, m.value)
		}
		buf.WriteByte('}')
	case kindArray:
		buf.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				buf.WriteByte(',')
			}
			encode(buf, e)
		}
		buf.WriteByte(']')
	}
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // marshalling a string cannot fail
	buf.Write(b)
}

// generic converts n into the values encoding/json stores in an interface:
// map[string]any, []any, string, json.Number, bool and nil.
func generic(n *node) any {
	switch n.kind {
	case kindBool:
		return n.boolean
	case kindNumber:
		return json.Number(n.text)
	case kindString:
		return n.text
	case kindObject:
		m := make(map[string]any, len(n.members))
		for _, mem := range n.members {
			m[mem.key] = generic(mem.value)
		}
		return m
	case kindArray:
		s := make([]any, len(n.elems))
		for i, e := range n.elems {
			s[i] = generic(e)
		}
		return s
	}
	return nil
}
