// Package heaptest measures a test's live heap, for the tests and
// benchmarks that bound the bytes a structure holds per element.
package heaptest
