// Package proto is the contract between bcs-scheduler and its executors:
// what travels in Mesos TaskInfo.data (TaskSpec), in framework messages
// both ways (Message, MessageResult) and in TaskStatus.data (ContainerInfo,
// ProcessInfo). README.md documents the format.
//
// The format is JSON with a version field. Mesos carries these bytes
// opaquely; JSON keeps them readable in agent logs and /master/state, and
// the version lets an executor refuse a spec it does not understand.
//
// It must not import any other bcs-mesos package: the executors depend on
// it and on nothing of the scheduler.
package proto
