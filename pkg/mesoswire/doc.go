// Package mesoswire holds the encodings bcs speaks on the Mesos v1 HTTP
// APIs, for the scheduler and both executors alike.
//
// Mesos keeps adding enum values (a 1.12 master announces the capability
// QUOTA_V2, which mesos-go's generated types do not know). Protobuf, the
// default media type, skips what it does not know, as Mesos intends. The
// JSON codec here does the same: an enum value the generated types do not
// know is dropped, the way protobuf drops it, instead of failing the whole
// event — and with it the subscription. Unknown fields were always ignored.
//
// A frame that cannot be decoded at all comes back as a *DecodeError that
// keeps the frame, so a scheduler can still read the framework ID of a
// SUBSCRIBED it cannot otherwise understand (SubscribedFrameworkID) and
// subscribe again as the same framework.
//
// Both decoders read frames up to MaxFrameSize, past mesos-go's own 4 MiB:
// a master's OFFERS event for thousands of agents is larger.
//
// It must not import other bcs-mesos packages.
package mesoswire
