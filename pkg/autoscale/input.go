package autoscale

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Input is everything one decision reads.
type Input struct {
	Now  time.Time
	Spec Spec
	// Revision is the spec's stored revision (the record's
	// ObservedRevision).
	Revision int64
	// Record is the last decision's record, as stored; zero for a new
	// autoscaler.
	Record manifest.AutoscalerStatus
	Target Target
	// Instances are the target's instances: the wanted ones and those
	// still going.
	Instances []Instance
	// Readings are the prometheus and web metrics' values, one per such
	// metric in spec order.
	Readings []Reading
	// UsageInterval is how often instances report their use (default
	// 15 s): a sample older than two intervals is missing, an instance
	// running for less than one has no rate yet.
	UsageInterval time.Duration
	// UsageReportsSince is when the target's usage reports were turned
	// on, if lately; zero when long ago or not known. A resource metric
	// without a sample within firstReportsWithin of it is waiting for the
	// first reports rather than missing them.
	UsageReportsSince time.Time
	// OrderProblem says why the scale-down order's values could not be
	// read: a scale-down waits for the next round.
	OrderProblem string
}

// Target is the workload as the scheduler has it.
type Target struct {
	// Problem says why the target cannot be scaled (not found, being
	// deleted, a daemonset); empty when it can.
	Problem string
	// Replicas is its wanted instance count.
	Replicas int
}

// Instance is one instance of the target.
type Instance struct {
	ID int
	// Ready: running and passing its readiness checks.
	Ready bool
	// Going: being removed (a scale-down's PreDeleteHook, a kill).
	Going     bool
	Allocated bool
	// RunningSince is when it started running; zero when it is not.
	RunningSince time.Time
	// Usage is its latest use; nil when none was reported.
	Usage *Usage
	// Request is what it requests of each resource, its limit where a
	// task requests nothing.
	Request Resources
}

// Resources are amounts of cpu (cores) and memory (MB).
type Resources struct {
	CPU   float64
	MemMB float64
}

// Usage is an instance's use over its last report interval.
type Usage struct {
	Resources
	At time.Time
}

// Reading is a prometheus or web metric's value, or why there is none.
type Reading struct {
	Value float64
	Err   string
}

// ReadingOf turns a provider's result into a reading: a number; a vector
// of samples summed (as HPA sums an external metric's series); a string
// parsed as a number (a web body or the text its jsonPath selects).
func ReadingOf(result any, err error) Reading {
	if err != nil {
		return Reading{Err: err.Error()}
	}
	var v float64
	switch r := result.(type) {
	case float64:
		v = r
	case int:
		v = float64(r)
	case []float64:
		if len(r) == 0 {
			return Reading{Err: "the query returned no samples"}
		}
		for _, s := range r {
			v += s
		}
	case string:
		f, perr := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if perr != nil {
			return Reading{Err: fmt.Sprintf("want a number, got %q", shorten(r))}
		}
		v = f
	default:
		return Reading{Err: fmt.Sprintf("want a number, got %T", result)}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Reading{Err: fmt.Sprintf("want a number, got %v", v)}
	}
	return Reading{Value: v}
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
