// Package e2e holds the black-box end-to-end suite: the real binaries
// (bcs-scheduler, the executors, the dev cluster) started as processes,
// driven only through the REST API and observed on the machine (processes,
// pid files, ports). make test runs it.
package e2e
