// Package examples holds the quick-start manifests of the README
// (process.json, application.json, deployment.json, depends.json,
// daemonset.json, autoscaler.json for the deployment) and the
// example game server they run (gamesvr). Its test checks that the
// manifests parse and validate.
package examples
