package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// writeJSON answers v as indented JSON. It marshals v compactly and
// indents that itself, as json.Encoder with SetIndent("", "  ") would to
// the byte: the encoder's indenter scans every byte through a state
// machine, and took half the time of a 100,000-instance answer.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	compact, indented := getBuffer(), getBuffer()
	defer putBuffer(compact)
	defer putBuffer(indented)
	if err := json.NewEncoder(compact).Encode(v); err != nil {
		return
	}
	indent(indented, compact.Bytes())
	_, _ = w.Write(indented.Bytes())
}

// writeJSONFilled answers v as writeJSON does, to the byte, its long
// lists written by fill instead of the reflecting encoder and the
// indenter: v holds each of them empty, on a line that ends with marker
// (after the first line that ends with after, when set), and fill(i,
// dst) appends the elements of the i-th, each after a comma, indented at
// depth (the lists' depth plus one). The answer is written as it is
// made, a chunk at a time: one of a fleet would be tens of MB, made
// again for every read.
func writeJSONFilled(w http.ResponseWriter, status int, v any, marker, after []byte, depth int, fill func(i int, dst []byte) []byte) {
	compact, indented, chunk := getBuffer(), getBuffer(), getBuffer()
	defer putBuffer(compact)
	defer putBuffer(indented)
	defer putBuffer(chunk)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(compact).Encode(v); err != nil {
		return
	}
	indent(indented, compact.Bytes())
	rest, out := indented.Bytes(), chunk.AvailableBuffer()
	write := func(final bool) {
		if final || len(out) >= chunkBytes {
			_, _ = w.Write(out)
			out = out[:0]
		}
	}
	if len(after) > 0 {
		at := bytes.Index(rest, after) + len(after)
		out, rest = append(out, rest[:at]...), rest[at:]
	}
	// The marker is on a line of its own: a string holding it would
	// hold its quotes escaped and no newline.
	for i := 0; ; i++ {
		at := bytes.Index(rest, marker)
		if at < 0 {
			break
		}
		at += len(marker) - len("[]")
		out, rest = append(out, rest[:at]...), rest[at+len("[]"):]
		start := len(out)
		if out = fill(i, out); len(out) == start {
			out = append(out, "[]"...)
		} else {
			out[start] = '[' // the first element's comma
			out = append(newline(out, "  ", depth-1), ']')
		}
		write(false)
	}
	out = append(out, rest...)
	write(true)
}

// chunkBytes is about how much writeJSONFilled writes at a time.
const chunkBytes = 256 << 10

// indent writes compact to dst indented by two spaces, dst grown first
// to about its size: a large answer grew it many times.
func indent(dst *bytes.Buffer, compact []byte) {
	dst.Grow(2 * len(compact))
	dst.Write(indentJSON(dst.AvailableBuffer(), compact, "  "))
}

// indentJSON appends src, valid JSON as json.Marshal writes it (no
// whitespace but after the value), to dst indented as json.Indent(dst,
// src, "", indent) does.
func indentJSON(dst, src []byte, indent string) []byte {
	return indentJSONAt(dst, src, indent, 0)
}

// indentJSONAt is indentJSON for a value at depth.
func indentJSONAt(dst, src []byte, indent string, depth int) []byte {
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1]) // empty: {} and [] stay on their line
				i++
				continue
			}
			depth++
			dst = newline(dst, indent, depth)
		case '}', ']':
			depth--
			dst = newline(dst, indent, depth)
			dst = append(dst, c)
		case ',':
			dst = newline(append(dst, c), indent, depth)
		case ':':
			dst = append(dst, ':', ' ')
		default:
			end := i + 1
			for end < len(src) && !structural(src[end]) {
				end++
			}
			dst = append(dst, src[i:end]...)
			i = end - 1
		}
	}
	return dst
}

// stringEnd is the index after the closing quote of the string that
// opens at src[start].
func stringEnd(src []byte, start int) int {
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(src)
}

func structural(c byte) bool {
	switch c {
	case '"', '{', '}', '[', ']', ',', ':':
		return true
	}
	return false
}

// newline appends a newline and depth indents: one copy of a prefix of
// lines for the depths answers have.
func newline(dst []byte, indent string, depth int) []byte {
	if n := 1 + depth*len(indent); indent == "  " && n <= len(lines) {
		return append(dst, lines[:n]...)
	}
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, indent...)
	}
	return dst
}

// lines is a newline and 32 indents of two spaces.
var lines = "\n" + strings.Repeat("  ", 32)

// buffers are the answers' buffers, kept for the next answer unless
// large: one agents' view of a fleet would otherwise hold tens of MB.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const keptBufferBytes = 1 << 20

func getBuffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > keptBufferBytes {
		return
	}
	b.Reset()
	buffers.Put(b)
}
