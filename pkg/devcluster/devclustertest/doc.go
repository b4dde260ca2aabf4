// Package devclustertest is a minimal Mesos framework on mesos-go's own
// HTTP scheduler client, for tests that drive a dev cluster (or any Mesos
// master) directly: subscribe, wait for events, call, acknowledge.
//
// Only tests import it.
package devclustertest
