// Package tlsfiles turns PEM files into crypto/tls settings: the server
// side of bcs-scheduler's API (Server), the client side of its
// connections to etcd and Mesos and of an executor's to its agent
// (Client), and a pool of CA certificates (CertPool).
//
// Errors name the files, never their contents. It must not import other
// bcs-mesos packages except pkg/errdefs.
package tlsfiles
