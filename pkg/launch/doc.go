// Package launch turns an application version (kind application or
// process) into what the scheduler needs to run its instances: the
// placement requirements for pkg/offer, and for each instance the
// executor task specs (proto.TaskSpec) with the manifest's variables
// expanded for that instance, its host ports, environment, configmap and
// secret items, health checks, kill grace period and resources.
//
// A Template is compiled once per version and is immutable; Instance never
// changes it (the original leaked instance 0's values into the stored spec).
//
// It must not import Mesos, HTTP or storage packages.
package launch
