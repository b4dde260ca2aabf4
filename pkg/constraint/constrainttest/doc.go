// Package constrainttest builds constraints fluently for tests and
// simulations, and holds a plain map-backed constraint.State:
//
//	c := constrainttest.New().Unique("hostname").MaxPer("idc", 5).Build()
//
// Only tests and benchmark harnesses import it.
package constrainttest
