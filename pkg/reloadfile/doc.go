// Package reloadfile keeps the parsed content of a file an operator may
// replace while the process runs — a token file, a credentials file —
// and reads it again when it changes, so rotating a credential needs no
// restart.
//
// A change is a different size or modification time, checked (one stat)
// each time the content is asked for. A file that goes missing or fails
// to parse after the first read keeps its last good content; the error
// is reported once per change of the file, never with the content.
//
// It must not import any package of bcs-mesos.
package reloadfile
