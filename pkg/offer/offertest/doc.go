// Package offertest holds fixtures with valid defaults (Agent, Requirements)
// and a simulation harness that generates clusters and workloads — large
// and regular for benchmarks, small and random for property tests. Only
// tests and benchmarks import it.
package offertest
