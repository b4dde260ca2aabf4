// Package layering holds the test that the import rule each package's
// doc.go states holds for the code: a rule in prose only is a wish.
//
// It has no code of its own; nothing imports it.
package layering
