// Package vaulttest is an in-test HashiCorp Vault: a real HTTP server on
// 127.0.0.1 that serves the KV version 2 secrets engine endpoints the
// scheduler's Vault backend uses (data read/write/delete, metadata
// read/delete), with their versions, soft deletes, response envelope,
// 404 shapes and X-Vault-Token check, as Vault 1.x documents them. No
// Vault server can be installed where the tests run.
//
// It must not import any package of bcs-mesos; it serves tests only.
package vaulttest
