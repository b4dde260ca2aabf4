// Package runtimetest is the conformance suite every executor.Runtime
// (processes, Docker pods) must pass: the same lifecycle rules checked
// against each implementation (STYLE 8).
//
// It imports testing, pkg/executor and proto only; production code must
// not import it.
package runtimetest
