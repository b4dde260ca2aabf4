package scheduler

import (
	"context"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// The driver feeds the core secrets with their values, read through
// registry.ResolveSecret from wherever they are kept. Values kept in the
// record need no I/O; values kept outside etcd (Vault) are read off the
// loop's goroutine, so a slow Vault never holds the loop. A read that
// fails is retried with backoff and, meanwhile, the core is told the
// secret cannot be read (SecretUnreadable): launches wait saying why,
// rather than finding the secret "not found".

// secretRead is the outcome of reading one stored secret's values.
type secretRead struct {
	rec     *registry.Object
	secret  *manifest.Secret
	err     error
	attempt int // 0 for the first read of this revision
}

// secretState is what the loop knows of a secret kept outside etcd: the
// revision of its record whose values are wanted (older reads are
// dropped), and the reason last fed to the core while they cannot be read.
type secretState struct {
	revision int64
	reason   string
}

// readSecret reads rec's values after delay and hands the outcome to out.
func (d *Driver) readSecret(ctx context.Context, rec *registry.Object, attempt int, delay time.Duration, out chan<- secretRead) {
	go func() {
		if delay > 0 {
			select {
			case <-d.cfg.Clock.After(delay):
			case <-ctx.Done():
				return
			}
		}
		secret, err := d.cfg.Registry.ResolveSecret(ctx, rec)
		select {
		case out <- secretRead{rec: rec, secret: secret, err: err, attempt: attempt}:
		case <-ctx.Done():
		}
	}()
}

// readSecrets reads the stored secrets at Restore, those kept outside etcd
// in parallel; it returns the secrets read, and an input for each that
// cannot be read (to step after Restore; they are retried).
func (d *Driver) readSecrets(ctx context.Context, recs []*registry.Object) (read []manifest.Object, unreadable []Input) {
	reads := make(chan secretRead, len(recs))
	for _, rec := range recs {
		if rec.Values != nil {
			d.secrets[rec.Namespace+"/"+rec.Name] = &secretState{revision: rec.Revision}
		}
		d.readSecret(ctx, rec, 0, 0, reads)
	}
	for range recs {
		var r secretRead
		select {
		case r = <-reads:
		case <-ctx.Done():
			return nil, nil
		}
		switch in := d.secretReadInput(ctx, r).(type) {
		case ObjectChanged:
			read = append(read, in.Object)
		case SecretUnreadable:
			unreadable = append(unreadable, in)
		}
	}
	return read, unreadable
}

// secretChanged takes a written secret record: its values are read now
// when the record holds them, else off the loop (nil input until then).
func (d *Driver) secretChanged(ctx context.Context, rec *registry.Object) Input {
	key := rec.Namespace + "/" + rec.Name
	if rec.Values == nil {
		delete(d.secrets, key)
		secret, err := d.cfg.Registry.ResolveSecret(ctx, rec)
		if err != nil {
			d.log.Error("stored secret", "namespace", rec.Namespace, "name", rec.Name, "err", err)
			return nil
		}
		return ObjectChanged{Object: secret}
	}
	st := d.secrets[key]
	if st == nil {
		st = &secretState{}
		d.secrets[key] = st
	}
	st.revision = rec.Revision
	d.readSecret(ctx, rec, 0, 0, d.secretReads)
	return nil
}

// forgetSecret drops a deleted secret: reads of it under way are ignored.
func (d *Driver) forgetSecret(namespace, name string) { delete(d.secrets, namespace+"/"+name) }

// secretReadInput turns a read into a core input: the secret, or that it
// cannot be read (once per reason), with a retry scheduled. Nil for a
// read of a revision no longer wanted, or a reason already fed.
func (d *Driver) secretReadInput(ctx context.Context, r secretRead) Input {
	key := r.rec.Namespace + "/" + r.rec.Name
	st := d.secrets[key]
	if r.rec.Values != nil && (st == nil || st.revision != r.rec.Revision) {
		return nil
	}
	if r.err == nil {
		if st != nil && st.reason != "" {
			d.log.Info("secret values read", "namespace", r.rec.Namespace, "name", r.rec.Name)
			st.reason = ""
		}
		return ObjectChanged{Object: r.secret}
	}
	if ctx.Err() != nil {
		return nil
	}
	if r.rec.Values == nil {
		d.log.Error("stored secret", "namespace", r.rec.Namespace, "name", r.rec.Name, "err", r.err)
		return nil
	}
	delay := secretRetryDelay(r.attempt, d.cfg.BackoffMax)
	d.log.Warn("secret values cannot be read; retrying", "namespace", r.rec.Namespace, "name", r.rec.Name,
		"attempt", r.attempt+1, "retry", delay, "err", r.err)
	d.readSecret(ctx, r.rec, r.attempt+1, delay, d.secretReads)
	if st.reason == r.err.Error() {
		return nil
	}
	st.reason = r.err.Error()
	return SecretUnreadable{Namespace: r.rec.Namespace, Name: r.rec.Name, Reason: st.reason}
}

// secretRetryDelay is the wait before read attempt+1: 1s, doubling, at
// most max.
func secretRetryDelay(attempt int, max time.Duration) time.Duration {
	delay := time.Second
	for range attempt {
		if delay *= 2; delay >= max {
			return max
		}
	}
	return min(delay, max)
}
