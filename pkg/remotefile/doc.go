// Package remotefile fetches what the executors download: the configmap
// items of type http, https and ftp a task spec carries (Fetcher), for
// both bcs-container-executor and bcs-process-executor, and the HTTP
// requests of the process executor's package fetcher (Get).
//
// Credentials go in request headers or the FTP login, never in a URL, an
// error, a log line or a file: messages name URLs with SafeURL.
//
// A task spec's egress policy (TaskSpec.Egress, pkg/egress) holds every
// connection its items make — HTTP redirects and FTP data connections
// too; a spec without one fetches as before.
//
// It must not import other bcs-mesos packages except proto, errdefs and
// egress.
package remotefile
