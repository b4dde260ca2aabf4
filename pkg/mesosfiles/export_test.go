package mesosfiles

// Unquote is unquote, for tests.
var Unquote = unquote
