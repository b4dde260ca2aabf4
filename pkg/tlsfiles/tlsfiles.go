package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// CertPool returns the CA certificates of file (PEM).
func CertPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it: %w", file, errdefs.ErrInvalidArgument)
	}
	return pool, nil
}

// Server is a server's TLS: the certificate (chain) and key it shows,
// and with clientCAFile the client certificates those CAs signed,
// verified when a client sends one: a client without one may still
// authenticate otherwise (a bearer token).
func Server(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile == "" {
		return cfg, nil
	}
	if cfg.ClientCAs, err = CertPool(clientCAFile); err != nil {
		return nil, err
	}
	cfg.ClientAuth = tls.VerifyClientCertIfGiven
	return cfg, nil
}

// Client is a client's TLS: servers are verified by the CAs of caFile,
// or by the system's without one; certFile and keyFile, when given, are
// the client certificate it shows.
func Client(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		var err error
		if cfg.RootCAs, err = CertPool(caFile); err != nil {
			return nil, err
		}
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
