package manifest

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// CredentialFields are the JSON names of the string fields that hold
// passwords: a container's image pull password, a process package's
// download password, a remote configmap item's password.
// CredentialMaps are those of the lists whose every value is a
// credential: an HTTP check's headers (a map) and a hook web metric's
// (a list of key and value), an Authorization header, an API key. Both
// are redacted in what is shown and sealed at rest (pkg/store's
// SealedMembers and SealedMapMembers, which a registry test holds to
// these lists).
var (
	CredentialFields = []string{"imagePullPasswd", "pwd", "remotePasswd"}
	CredentialMaps   = []string{"headers"}
)

// Redacted stands for a credential in what is shown of a manifest.
const Redacted = "***"

// credentialSite is where a credential of a manifest is sent: a kept
// credential goes nowhere else.
type credentialSite struct {
	// to is where it goes: a URL's scheme, host and port, an image's
	// registry, a check's scheme and port; a header's also under which
	// name.
	to string
	// by names what says so, for the message.
	by string
}

// credentialSites returns every credential field of obj, set or not, by
// path, each with where its credential is sent.
func credentialSites(obj Object) map[field.Path]credentialSite {
	sites := map[field.Path]credentialSite{}
	visitStructs(reflect.ValueOf(obj).Elem(), "", func(p field.Path, v any) {
		switch h := v.(type) {
		case URI:
			sites[p.Child("pwd")] = credentialSite{origin(h.Value), p.Child("value").String() + "'s scheme, host and port"}
		case Container:
			sites[p.Child("imagePullPasswd")] = credentialSite{imageRegistry(h.Image), p.Child("image").String() + "'s registry"}
		case ConfigMapData:
			sites[p.Child("remotePasswd")] = credentialSite{origin(h.Content), p.Child("content").String() + "'s scheme, host and port"}
		case HTTPCheck:
			port := fmt.Sprint(h.Port)
			if h.Port <= 0 {
				port = h.PortName
			}
			for name := range h.Headers {
				sites[p.Child("headers").Key(name)] = credentialSite{h.Scheme + " port " + port, p.String() + "'s scheme and port"}
			}
		case WebProvider:
			// A list: a header is known by its place, so its name is
			// part of where it goes (headers reordered are sent again).
			for i, header := range h.Headers {
				hp := p.Child("headers").Index(i)
				sites[hp.Child("value")] = credentialSite{origin(h.URL) + " as " + strings.ToLower(header.Key),
					p.Child("url").String() + "'s scheme, host and port, or " + hp.Child("key").String()}
			}
		}
	})
	return sites
}

// origin is where an address leads: its scheme, host and port, without
// its user information. Of one that is not an absolute URL (a variable,
// "${scheduler_url}/files/game.tgz", a hook's argument,
// "http://{{ args.PodIP }}:8080/ready", or what validation refuses), what
// comes before its path, as written.
func origin(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return strings.ToLower(u.Scheme + "://" + u.Host)
	}
	scheme, rest, found := strings.Cut(raw, "://")
	if !found {
		scheme, rest = "", raw
	} else {
		scheme += "://"
	}
	authority := rest[:strings.IndexAny(rest+"/", "/?#")]
	return scheme + authority[strings.LastIndexByte(authority, '@')+1:]
}

// imageRegistry is the registry an image reference pulls from, as docker
// reads one: its first component when it looks like a host, else
// Docker Hub.
func imageRegistry(image string) string {
	first, _, found := strings.Cut(image, "/")
	if !found || !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "docker.io"
	}
	return strings.ToLower(first)
}

// RedactCredentials returns a deep copy of obj in which every credential
// set is Redacted: what may be shown of a stored manifest to someone who
// reads state, not secrets.
func RedactCredentials(obj Object) Object {
	sites := credentialSites(obj)
	return rewriteObject(obj, func(p field.Path, s string) string {
		if _, ok := sites[p]; ok && s != "" {
			return Redacted
		}
		return s
	})
}

// KeepCredentials returns a copy of obj in which each Redacted credential
// (a manifest read back from the API and sent again) is the credential at
// the same place of old, the stored manifest; old may be nil (a create).
// A Redacted credential old has none for, or that would now be sent
// elsewhere (another host, registry or port), is an error naming the
// field: the credential is sent again, or not at all.
func KeepCredentials(obj, old Object) (Object, error) {
	stored := map[field.Path]string{}
	oldSites := map[field.Path]credentialSite{}
	if old != nil {
		oldSites = credentialSites(old)
		rewriteObject(old, func(p field.Path, s string) string {
			if _, ok := oldSites[p]; ok {
				stored[p] = s
			}
			return s
		})
	}
	sites := credentialSites(obj)
	var errs field.ErrorList
	out := rewriteObject(obj, func(p field.Path, s string) string {
		site, ok := sites[p]
		if s != Redacted || !ok {
			return s
		}
		credential := stored[p]
		switch was := oldSites[p]; {
		case credential == "":
			errs = append(errs, field.Invalid(p, "%q stands for a credential shown redacted, and there is none stored here to keep: send it", Redacted))
		case was.to != site.to:
			errs = append(errs, field.Invalid(p, "%q keeps the stored credential only where it was sent before: %s changed (%s, was %s): send the credential again",
				Redacted, site.by, site.to, was.to))
		}
		return credential
	})
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// RedactHookMetrics returns a copy of metrics (a hook run's, copied from
// its template) with their credentials Redacted, as RedactCredentials
// shows the template's.
func RedactHookMetrics(metrics []HookMetric) []HookMetric {
	shown := RedactCredentials(&HookTemplate{Spec: HookTemplateSpec{Metrics: metrics}})
	return shown.(*HookTemplate).Spec.Metrics
}

func rewriteObject(obj Object, fn stringRewriter) Object {
	return rewrite(reflect.ValueOf(obj).Elem(), "", fn).Addr().Interface().(Object)
}
