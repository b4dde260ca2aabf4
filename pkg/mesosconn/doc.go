// Package mesosconn is how bcs-scheduler reaches Mesos: masters and agents
// over HTTPS, verified by the CAs of --mesos-cacert (or the system's), and
// the framework's credential, a principal and the file of its secret,
// sent as HTTP Basic authentication as a master with
// --authenticate_http_frameworks (and --authenticate_http_readwrite for
// the operator API) requires.
//
// The secret is read from its file at each use, so a rotated file takes
// effect at the next subscription or request, and it is kept nowhere
// else: Config holds only the file's name. Errors name the file and the
// principal, never the secret.
//
// It must not import Mesos packages or other bcs-mesos packages except
// pkg/errdefs.
package mesosconn
