// Package storetest is the conformance suite every etcd a store.Store can
// run on must pass: Run exercises the whole store API (versioned CRUD,
// optimistic concurrency, atomic Apply, paginated List, Watch, sealed
// secrets) against one running etcd. store's own tests run it against the
// embedded etcd and against the etcd binary of the Debian etcd-server
// package, started by StartEtcdBinary.
//
// It is test support: it imports testing and must not be imported by
// production code. Like store, it must not import HTTP or Mesos packages.
package storetest
