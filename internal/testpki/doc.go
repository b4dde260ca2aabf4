// Package testpki makes throwaway certificate authorities and the
// certificates they sign (crypto/x509, ECDSA P-256, valid for an hour, for
// 127.0.0.1 and localhost) as PEM files in a test's temporary directory,
// for tests of TLS between real components: etcd, the dev cluster,
// bcs-scheduler.
//
// It is test support: production code must not import it, and it must
// not import other bcs-mesos packages.
package testpki
