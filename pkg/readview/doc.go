// Package readview holds, in memory, the store keys the REST API's reads
// serve, fed by the store's change feed: every scheduler replica (leader
// and standbys) answers reads without listing etcd and without competing
// with the scheduler's writes.
//
// A read that must see every write acknowledged before it (read your
// writes) asks Fresh: it reads etcd's current revision with one cheap
// request and waits, bounded, until the view has applied it; on timeout
// the caller reads etcd itself. When the feed cannot replay (etcd
// compacted its history), the view lists its prefixes again.
//
// A reader may keep, per key directory, a value derived from its entries
// (EachDir): made at the first read after the directory changed, kept
// until it changes again, so that a read of the whole fleet redoes only
// the work of what changed since the last.
//
// It holds keys and bytes; it owns no record types. It must not import
// HTTP or Mesos packages, nor any bcs-mesos package but store, changefeed
// and errdefs.
package readview
