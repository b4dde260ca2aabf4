// Package field names places in a manifest and collects validation problems
// against them, so that a user sees every problem at once, each as
// "field path: message" (e.g. "spec.instance: must be ≥ 0").
//
// It must not import any other bcs-mesos package except errdefs.
package field
