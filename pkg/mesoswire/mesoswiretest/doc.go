// Package mesoswiretest gives tests the recordings of a real Mesos 1.12
// (testdata/mesos-1.12): as recorded (RecordIO of JSON), or transcoded to
// protobuf with the events edited first.
//
// It is test support: production code must not import it, and it must not
// import other bcs-mesos packages but mesoswire.
package mesoswiretest
