// Package strictjson decodes JSON into Go structs the way a manifest API
// should: strictly, and reporting every problem at once.
//
// Compared with encoding/json, Decode
//   - matches object keys exactly against a field's json tag name or one of
//     the spellings its `alias:"A,B"` tag lists, never case-insensitively, so
//     a typo such as "imagePulPolicy" is an error instead of a silent default;
//   - reports unknown and duplicate fields, wrong JSON types and out-of-range
//     numbers as a field.ErrorList, each error under the full path of the
//     offending value ("spec.template.spec.containers[0].imagePulPolicy:
//     unknown field");
//   - reads numbers as json.Number, so integers are exact and an integer
//     field given 1.5 is an error;
//   - reports broken JSON with its line, column and byte offset
//     (CheckSyntax alone checks that, for a reader of part of a document);
//   - calls Default() on a struct (see Defaulter) before filling it from an
//     object, so absent fields keep their defaults while explicit zeros stay.
//
// Supported Go types: structs (embedded structs without a json tag promote
// their fields), pointers, slices ([]byte from a base64 string, as
// encoding/json writes it), maps with string keys, string, bool,
// int*, uint*, float*, empty interfaces, and every type whose pointer
// implements json.Unmarshaler (json.RawMessage among them).
//
// The package owns decoding only. It must not import any bcs-mesos package
// but field and errdefs, and no HTTP, storage or Mesos code.
package strictjson
