package devcluster

import (
	"math"
	"time"
)

// Stats count what the cluster did since it started, and how many tasks
// run, for benchmarks and tests that measure a scheduler against it
// (Cluster.Stats).
type Stats struct {
	// TasksLaunched counts the tasks of valid LAUNCH and LAUNCH_GROUP
	// operations handed to agents.
	TasksLaunched int64
	// TasksRunning is how many tasks are in TASK_RUNNING now.
	TasksRunning int64
	// KillsReceived counts frameworks' KILL calls, known task or not.
	KillsReceived int64
	// StatusUpdates counts the agents' status updates sent to frameworks,
	// each once however often it was sent.
	StatusUpdates int64
	// StatusUpdatesResent counts sends of an update after its first: its
	// acknowledgement did not come before the retry timer fired, or the
	// framework subscribed again.
	StatusUpdatesResent int64
	// AckLatency is the time from an update's first sending to the
	// framework's ACKNOWLEDGE of it, over every acknowledged update.
	AckLatency LatencyHistogram
}

// Latency buckets: latencyBucketsPerOctave per doubling from 1µs, the
// last one holding everything from about an hour on.
const (
	latencyBucketsPerOctave = 8
	latencyBuckets          = 32*latencyBucketsPerOctave + 1
	latencyBase             = time.Microsecond
)

// LatencyHistogram counts durations in buckets about 9% wide, enough to
// tell a percentile within that much while taking constant memory.
type LatencyHistogram struct {
	counts [latencyBuckets]int64
	total  int64
}

// Count is how many durations were observed.
func (h *LatencyHistogram) Count() int64 { return h.total }

func (h *LatencyHistogram) observe(d time.Duration) {
	i := 0
	if d > latencyBase {
		i = min(int(math.Ceil(latencyBucketsPerOctave*math.Log2(float64(d)/float64(latencyBase)))), latencyBuckets-1)
	}
	h.counts[i]++
	h.total++
}

// Quantile is the upper bound of the bucket holding the q-quantile (0 ≤ q
// ≤ 1) of the observed durations; 0 when none were observed.
func (h *LatencyHistogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := max(int64(math.Ceil(q*float64(h.total))), 1)
	var seen int64
	for i, n := range h.counts {
		if seen += n; seen >= rank {
			return time.Duration(float64(latencyBase) * math.Exp2(float64(i)/latencyBucketsPerOctave))
		}
	}
	return time.Duration(float64(latencyBase) * math.Exp2(float64(latencyBuckets-1)/latencyBucketsPerOctave))
}
