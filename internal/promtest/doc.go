// Package promtest runs a real Prometheus for tests — Debian's
// /usr/bin/prometheus, which scripts/test-deps installs — scraping
// exporters every second, and serves a registry as such an exporter.
package promtest
