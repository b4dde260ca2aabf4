// Package changefeed turns the store's history into a resumable feed of
// changes: every write of a key, in the order etcd applied them, each
// named by an ID — the etcd revision of its transaction and its position
// among the keys that transaction changed ("1234.2"). A reader that kept
// the last ID it handled follows on from exactly the next change, even
// inside a transaction it saw only part of.
//
// When the changes after a reader's position are gone (etcd compacted
// them, or the position is one this store never reached), the feed says
// so with a Reset change at the current revision instead of silently
// skipping: the reader lists the state again and reads on.
//
// It owns no record types: it moves keys and bytes; pkg/api decides which
// kinds are shown and how. It must not import HTTP or Mesos packages, nor
// any bcs-mesos package but store and errdefs.
package changefeed
