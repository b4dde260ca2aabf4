package vaultsecrets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	vault "github.com/hashicorp/vault/api"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/reloadfile"
)

// Backend is the name of this backend in records and flags.
const Backend = "vault"

// Defaults of Config.
const (
	DefaultMount   = "secret"
	DefaultPrefix  = "bcs"
	DefaultTimeout = 10 * time.Second
)

// Config configures a Store; the flag each field comes from is named in
// its errors.
type Config struct {
	Addr      string // --vault-addr: http(s)://host:port
	TokenFile string // --vault-token-file: read at start, and again whenever it changes
	Mount     string // --vault-mount: the KV v2 engine's path; default "secret"
	Prefix    string // --vault-prefix: default "bcs"
	CACert    string // --vault-cacert: PEM file of the CA that signed Vault's certificate
	// Timeout of each request; default DefaultTimeout.
	Timeout time.Duration
}

// Store keeps secret values on Vault.
type Store struct {
	cfg    Config
	client *vault.Client
	token  *reloadfile.File[string]
}

var _ registry.SecretValues = (*Store)(nil)

// New checks cfg and reads the token file; it does not contact Vault.
func New(cfg Config) (*Store, error) {
	if cfg.Mount == "" {
		cfg.Mount = DefaultMount
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	cfg.Mount, cfg.Prefix = strings.Trim(cfg.Mount, "/"), strings.Trim(cfg.Prefix, "/")
	if cfg.Addr == "" {
		return nil, fmt.Errorf("--vault-addr is required with --secret-backend vault: %w", errdefs.ErrInvalidArgument)
	}
	if u, err := url.Parse(cfg.Addr); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--vault-addr %q: want http(s)://host:port: %w", cfg.Addr, errdefs.ErrInvalidArgument)
	}
	if cfg.TokenFile == "" {
		return nil, fmt.Errorf("--vault-token-file is required with --secret-backend vault: %w", errdefs.ErrInvalidArgument)
	}
	for flag, v := range map[string]string{"--vault-mount": cfg.Mount, "--vault-prefix": cfg.Prefix} {
		if v == "" || strings.Contains(v, "//") || strings.ContainsAny(v, "?#") {
			return nil, fmt.Errorf("%s %q: want a path such as \"secret\": %w", flag, v, errdefs.ErrInvalidArgument)
		}
	}
	vcfg := vault.DefaultConfig()
	vcfg.Address = cfg.Addr
	vcfg.Timeout = cfg.Timeout
	vcfg.MaxRetries = 0 // the scheduler retries, with its own backoff
	if cfg.CACert != "" {
		if _, err := os.Stat(cfg.CACert); err != nil {
			return nil, fmt.Errorf("--vault-cacert: %w", err)
		}
		if err := vcfg.ConfigureTLS(&vault.TLSConfig{CACert: cfg.CACert}); err != nil {
			return nil, fmt.Errorf("--vault-cacert %q: %w", cfg.CACert, err)
		}
	}
	client, err := vault.NewClient(vcfg)
	if err != nil {
		return nil, fmt.Errorf("vault client: %w", err)
	}
	// A token file that goes missing or empty later keeps the last
	// token: Vault says whether it still works.
	token, err := reloadfile.Load(cfg.TokenFile, func(data []byte) (string, error) {
		token := string(bytes.TrimSpace(data))
		if token == "" {
			return "", fmt.Errorf("--vault-token-file %q is empty: %w", cfg.TokenFile, errdefs.ErrInvalidArgument)
		}
		return token, nil
	}, nil)
	switch {
	case errors.Is(err, errdefs.ErrInvalidArgument):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("--vault-token-file: %w", err)
	}
	return &Store{cfg: cfg, client: client, token: token}, nil
}

// authorized is the client with the token file's current token.
func (s *Store) authorized() *vault.Client {
	s.client.SetToken(s.token.Get())
	return s.client
}

// path is where the values of the secret namespace/name live in the mount.
func (s *Store) path(namespace, name string) string {
	return s.cfg.Prefix + "/" + namespace + "/" + name
}

// Put writes the values of sec as a new version of its Vault secret.
func (s *Store) Put(ctx context.Context, sec *manifest.Secret) (*registry.ValuesRef, error) {
	path := s.path(sec.Metadata.Namespace, sec.Metadata.Name)
	data := make(map[string]any, len(sec.Datas))
	for item, d := range sec.Datas {
		data[item] = d.Content
	}
	written, err := s.authorized().KVv2(s.cfg.Mount).Put(ctx, path, data)
	if err != nil {
		return nil, s.classify(err, "writing", s.cfg.Mount, path)
	}
	if written.VersionMetadata == nil || written.VersionMetadata.Version == 0 {
		return nil, fmt.Errorf("vault %s/%s: the write returned no version: %w", s.cfg.Mount, path, errdefs.ErrUnavailable)
	}
	return &registry.ValuesRef{Backend: Backend, Mount: s.cfg.Mount, Path: path, Version: written.VersionMetadata.Version}, nil
}

// Get reads the version of the Vault secret that ref names.
func (s *Store) Get(ctx context.Context, ref registry.ValuesRef) (map[string]string, error) {
	if ref.Backend != Backend {
		return nil, fmt.Errorf("values on %q, not on vault: %w", ref.Backend, errdefs.ErrUnavailable)
	}
	read, err := s.authorized().KVv2(ref.Mount).GetVersion(ctx, ref.Path, ref.Version)
	if err != nil {
		return nil, s.classify(err, "reading", ref.Mount, ref.Path)
	}
	// A deleted version reads as metadata with no data.
	if read.Data == nil || (read.VersionMetadata != nil && (read.VersionMetadata.Destroyed || !read.VersionMetadata.DeletionTime.IsZero())) {
		return nil, fmt.Errorf("vault %s/%s version %d is deleted: %w", ref.Mount, ref.Path, ref.Version, errdefs.ErrNotFound)
	}
	values := make(map[string]string, len(read.Data))
	for item, v := range read.Data {
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("vault %s/%s version %d: item %q is a %T, not a string: %w", ref.Mount, ref.Path, ref.Version, item, v, errdefs.ErrInvalidArgument)
		}
		values[item] = str
	}
	return values, nil
}

// Delete removes the Vault secret at ref, its metadata and every version;
// one already gone is no error.
func (s *Store) Delete(ctx context.Context, ref registry.ValuesRef) error {
	if ref.Backend != Backend {
		return fmt.Errorf("values on %q, not on vault: %w", ref.Backend, errdefs.ErrUnavailable)
	}
	err := s.authorized().KVv2(ref.Mount).DeleteMetadata(ctx, ref.Path)
	if err = s.classify(err, "deleting", ref.Mount, ref.Path); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
		return err
	}
	return nil
}

// classify turns a client error into an errdefs class: NotFound for what
// Vault says it does not have, Unavailable for the rest (unreachable,
// 5xx, refused token), which is worth retrying.
func (s *Store) classify(err error, doing, mount, path string) error {
	if err == nil {
		return nil
	}
	where := mount + "/" + path
	if errors.Is(err, vault.ErrSecretNotFound) {
		return fmt.Errorf("vault %s: %w", where, errdefs.ErrNotFound)
	}
	var resp *vault.ResponseError
	if errors.As(err, &resp) {
		switch resp.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("vault %s: %w", where, errdefs.ErrNotFound)
		case http.StatusForbidden:
			return fmt.Errorf("%s vault %s: vault refused the token of --vault-token-file %s (permission denied): %w", doing, where, s.cfg.TokenFile, errdefs.ErrUnavailable)
		}
		return fmt.Errorf("%s vault %s: vault answered %d %s: %w", doing, where, resp.StatusCode, strings.Join(resp.Errors, "; "), errdefs.ErrUnavailable)
	}
	return fmt.Errorf("%s vault %s: vault at %s unreachable: %v: %w", doing, where, s.cfg.Addr, err, errdefs.ErrUnavailable)
}
