// Package manifesttest provides valid manifests with every default set, for
// tests to change one field at a time, and an in-memory Resolver.
//
// It is for tests only: it must not import anything beyond manifest,
// constraint and the standard library.
package manifesttest
