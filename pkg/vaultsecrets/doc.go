// Package vaultsecrets keeps the item values of secrets on HashiCorp
// Vault's KV version 2 secrets engine (bcs-scheduler --secret-backend
// vault): one Vault secret per bcs secret, at <prefix>/<namespace>/<name>
// in the mount, its item names as keys and their base64 contents as
// values. It implements registry.SecretValues; etcd keeps the secret's
// record without values and the Vault version it points to.
//
// Errors are errdefs classes: a path or version Vault does not have (or
// has deleted) is ErrNotFound; anything else — Vault unreachable, a 5xx,
// a refused token — is ErrUnavailable, which callers retry. Values never
// appear in errors or logs.
//
// It talks to Vault through github.com/hashicorp/vault/api only, and
// must not import Mesos or the store; of bcs-mesos it imports only
// registry (the interface it implements), manifest, errdefs and
// reloadfile (the token file).
package vaultsecrets
