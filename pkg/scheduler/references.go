package scheduler

import (
	"errors"

	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// references are the configmaps and secrets launches inject, and the
// depends objects dependency pods run, as the driver last fed them
// (Restore, ObjectChanged, ObjectRemoved): launches read them without
// I/O, and an instance waiting for one learns when it is written.
type references struct {
	configMaps map[string]*manifest.ConfigMap // by "namespace/name"
	secrets    map[string]*manifest.Secret
	depends    map[string]*manifest.Depends
	// unreadable are the secrets whose values the driver could not read
	// (SecretUnreadable), by reference ("secret ns/name"), with why.
	unreadable map[string]string
}

var _ manifest.Resolver = (*references)(nil)

func newReferences() *references {
	return &references{configMaps: map[string]*manifest.ConfigMap{}, secrets: map[string]*manifest.Secret{},
		depends: map[string]*manifest.Depends{}, unreadable: map[string]string{}}
}

func (r *references) ConfigMap(namespace, name string) (*manifest.ConfigMap, bool) {
	cm, ok := r.configMaps[namespace+"/"+name]
	return cm, ok
}

func (r *references) Secret(namespace, name string) (*manifest.Secret, bool) {
	s, ok := r.secrets[namespace+"/"+name]
	return s, ok
}

// put stores a configmap, secret or depends object and returns the
// reference a launch waits for ("configmap ns/name"; "" for the others).
func (r *references) put(obj manifest.Object) string {
	switch o := obj.(type) {
	case *manifest.ConfigMap:
		r.configMaps[o.Metadata.Namespace+"/"+o.Metadata.Name] = o
		return refName(manifest.KindConfigMap, o.Metadata.Namespace, o.Metadata.Name)
	case *manifest.Secret:
		r.secrets[o.Metadata.Namespace+"/"+o.Metadata.Name] = o
		ref := refName(manifest.KindSecret, o.Metadata.Namespace, o.Metadata.Name)
		delete(r.unreadable, ref)
		return ref
	case *manifest.Depends:
		r.depends[o.Metadata.Namespace+"/"+o.Metadata.Name] = o
	}
	return ""
}

func (r *references) remove(kind manifest.Kind, namespace, name string) {
	switch kind {
	case manifest.KindConfigMap:
		delete(r.configMaps, namespace+"/"+name)
	case manifest.KindSecret:
		delete(r.secrets, namespace+"/"+name)
		delete(r.unreadable, refName(kind, namespace, name))
	case manifest.KindDepends:
		delete(r.depends, namespace+"/"+name)
	}
}

// refName is how launch.MissingReference names a configmap or secret.
func refName(kind manifest.Kind, namespace, name string) string {
	return (&launch.MissingReference{Kind: kind, Namespace: namespace, Name: name}).Ref()
}

// objectChanged takes a written configmap or secret; instances waiting
// for it try again.
func (c *Core) objectChanged(obj manifest.Object) {
	ref := c.refs.put(obj)
	if ref == "" {
		return
	}
	for _, a := range c.sortedApps() {
		for _, inst := range a.sortedInstances() {
			if inst.rec.WaitingFor == ref {
				c.stopWaiting(inst, ref+" was written")
			}
		}
	}
}

// secretUnreadable takes a secret whose values the driver cannot read
// now (its backend is unreachable): launches that take it wait, saying
// why, until the driver reads it (ObjectChanged); the values known before
// are dropped, as the record changed.
func (c *Core) secretUnreadable(in SecretUnreadable) {
	c.refs.remove(manifest.KindSecret, in.Namespace, in.Name)
	ref := refName(manifest.KindSecret, in.Namespace, in.Name)
	c.refs.unreadable[ref] = in.Reason
	for _, a := range c.sortedApps() {
		for _, inst := range a.sortedInstances() {
			if inst.rec.WaitingFor == ref {
				inst.rec.Message = waitingMessage(ref, in.Reason)
				c.persist(inst)
			}
		}
	}
}

// waitingMessage says why a launch waits for a secret that cannot be read.
func waitingMessage(ref, reason string) string {
	return "waiting for " + ref + ": its values cannot be read, retrying: " + reason
}

// launchBlocked handles a launch that failed; a missing configmap or
// secret, or its namespace's identity, leaves the instance Pending until
// it is written (or the application changes), anything else fails it.
func (c *Core) launchBlocked(inst *instance, err error) {
	var noIdentity *missingIdentity
	if errors.As(err, &noIdentity) {
		inst.rec.WaitingFor, inst.rec.Pending = noIdentity.ref(), nil
		inst.rec.Message = "waiting for " + noIdentity.Error()
		c.persist(inst)
		return
	}
	var missing *launch.MissingReference
	if errors.As(err, &missing) {
		inst.rec.WaitingFor, inst.rec.Pending = missing.Ref(), nil
		inst.rec.Message = "waiting for " + missing.Error()
		if reason, ok := c.refs.unreadable[missing.Ref()]; ok {
			inst.rec.Message = waitingMessage(missing.Ref(), reason)
		}
		c.persist(inst)
		return
	}
	c.setPhase(inst, PhaseLaunched)
	c.setPhase(inst, PhaseFailed)
	inst.rec.Message = "cannot launch: " + err.Error()
	c.persist(inst)
}

// stopWaiting makes a waiting instance launchable again after the restart
// policy's delay; nothing ran, so it does not count as a restart.
func (c *Core) stopWaiting(inst *instance, why string) {
	p := inst.app.tmplPolicy()
	inst.rec.WaitingFor = ""
	inst.rec.NotBefore = c.now.Add(restartDelay(p, inst.rec.Restarts))
	inst.rec.Message = "launching again: " + why
	c.persist(inst)
}

// retryAfterChange gives the instances that could not launch or failed
// for good another chance when their application changed.
func (c *Core) retryAfterChange(a *app) {
	for _, inst := range a.sortedInstances() {
		switch {
		case inst.rec.WaitingFor != "":
			inst.rec.WaitingFor, inst.rec.NotBefore = "", c.now
			inst.rec.Message = "launching again: the application changed"
			c.persist(inst)
		case inst.phase() == PhaseFailed:
			c.setPhase(inst, PhasePending)
			inst.rec.Restarts, inst.rec.NotBefore = 0, c.now
			inst.rec.Message = "launching again: the application changed"
			c.persist(inst)
		}
	}
}
