// Package shape holds the tests that keep the code in the shape a reader
// can take in: no production function longer than 100 lines (a
// function that long does several things that want names of their own),
// and no comment that cites an issue number (a reader of the code has no
// issue tracker: a comment says why, in its own words). They parse every
// .go file of the module but node_modules, testdata and .git. The package
// has no code of its own; nothing imports it.
package shape
