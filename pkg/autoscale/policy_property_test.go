package autoscale_test

import (
	"math/big"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Decide's rate policies against a slow reference over random scale
// histories (HPA v2 convertDesiredReplicasWithBehaviorRate): the
// reference replays the history to read the size the fleet had when each
// policy's period began, computes each policy's bound with exact
// rationals, and finds the limit by enumerating sizes: Max admits a size
// some policy allows, Min one every policy allows; Disabled admits none
// but the current size.
func TestPolicyArithmeticMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(35))
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 20000; i++ {
		up, down := randomRules(rng), randomRules(rng)
		spec := autoscale.Spec{Min: 0, Max: 1000, Metrics: []manifest.AutoscaleMetric{playersMetric}, Up: up, Down: down}
		current, ups, downs := randomHistory(rng, now)
		proposal := rng.Intn(3*current + 10)
		in := autoscale.Input{Now: now, Spec: spec, Target: autoscale.Target{Replicas: current},
			Record:   manifest.AutoscalerStatus{ScaleUp: ups, ScaleDown: downs},
			Readings: []autoscale.Reading{{Value: float64(proposal * 10)}}}
		if current == 0 {
			continue // from 0 no policy applies: covered by the scripts
		}
		for id := 0; id < current; id++ {
			in.Instances = append(in.Instances, autoscale.Instance{ID: id})
		}
		got := autoscale.Decide(in).Desired
		want := referenceDesired(spec, current, proposal, ups, downs, now)
		if got != want {
			t.Fatalf("case %d: current %d proposal %d up %+v down %+v\nscaleUp %v\nscaleDown %v\nDecide %d, reference %d",
				i, current, proposal, up, down, ups, downs, got, want)
		}
	}
}

// playersMetric proposes ceil(players / 10) with no tolerance.
var playersMetric = manifest.AutoscaleMetric{Type: manifest.MetricPrometheus, Name: "players",
	Prometheus: &manifest.PrometheusProvider{Address: "http://prom", Query: "sum(players)"}, TargetAverageValue: ptr(10.0)}

func ptr[T any](v T) *T { return &v }

func randomRules(rng *rand.Rand) autoscale.Rules {
	r := autoscale.Rules{Select: []manifest.SelectPolicy{manifest.SelectMax, manifest.SelectMin, manifest.SelectDisabled}[rng.Intn(3)]}
	for n := 1 + rng.Intn(3); n > 0; n-- {
		p := manifest.ScalePolicy{Type: manifest.PolicyPods, Value: 1 + rng.Intn(10), PeriodSeconds: []int{15, 30, 60, 300}[rng.Intn(4)]}
		if rng.Intn(2) == 0 {
			p.Type, p.Value = manifest.PolicyPercent, []int{1, 10, 33, 50, 100, 150, 200}[rng.Intn(7)]
		}
		r.Policies = append(r.Policies, p)
	}
	return r
}

// randomHistory walks a fleet's size through scale events on whole
// seconds of the last 400 s (so events fall exactly on period starts
// too) and returns the size now and the events.
func randomHistory(rng *rand.Rand, now time.Time) (int, []manifest.ScaleChange, []manifest.ScaleChange) {
	size := rng.Intn(60)
	var ups, downs []manifest.ScaleChange
	at := now.Add(-400 * time.Second)
	for n := rng.Intn(8); n > 0; n-- {
		at = at.Add(time.Duration(rng.Intn(60)) * time.Second)
		if at.After(now) {
			break
		}
		change := 1 + rng.Intn(15)
		if rng.Intn(2) == 0 && size >= change {
			size -= change
			downs = append(downs, manifest.ScaleChange{At: at, Change: change})
		} else {
			size += change
			ups = append(ups, manifest.ScaleChange{At: at, Change: change})
		}
	}
	return size, ups, downs
}

func referenceDesired(spec autoscale.Spec, current, proposal int, ups, downs []manifest.ScaleChange, now time.Time) int {
	switch {
	case proposal > current:
		return min(proposal, max(referenceLimit(spec.Up, true, current, ups, downs, now), current))
	case proposal < current:
		return max(proposal, min(referenceLimit(spec.Down, false, current, ups, downs, now), current))
	}
	return current
}

func referenceLimit(r autoscale.Rules, up bool, current int, ups, downs []manifest.ScaleChange, now time.Time) int {
	if r.Select == manifest.SelectDisabled {
		return current
	}
	var bounds []int
	for _, p := range r.Policies {
		start := sizeAt(now.Add(-time.Duration(p.PeriodSeconds)*time.Second), current, ups, downs)
		bounds = append(bounds, policyBound(p, up, start))
	}
	admits := func(size int) bool {
		allowed := func(b int) bool { return (up && size <= b) || (!up && size >= b) }
		if r.Select == manifest.SelectMin {
			return !slices.ContainsFunc(bounds, func(b int) bool { return !allowed(b) })
		}
		return slices.ContainsFunc(bounds, allowed)
	}
	if up {
		limit := -1 << 20
		for size := -500; size <= 2000; size++ {
			if admits(size) {
				limit = size
			}
		}
		return limit
	}
	for size := -500; size <= 2000; size++ {
		if admits(size) {
			return size
		}
	}
	return 1 << 20
}

// sizeAt replays the history backwards from now: the size just after
// every event at or before t.
func sizeAt(t time.Time, current int, ups, downs []manifest.ScaleChange) int {
	size := current
	for _, e := range ups {
		if e.At.After(t) {
			size -= e.Change
		}
	}
	for _, e := range downs {
		if e.At.After(t) {
			size += e.Change
		}
	}
	return size
}

// policyBound: Pods moves by its value; Percent multiplies, rounding up
// on the way up and truncating on the way down.
func policyBound(p manifest.ScalePolicy, up bool, start int) int {
	if p.Type == manifest.PolicyPods {
		if up {
			return start + p.Value
		}
		return start - p.Value
	}
	factor := big.NewRat(int64(100+p.Value), 100)
	if !up {
		factor = big.NewRat(int64(100-p.Value), 100)
	}
	x := new(big.Rat).Mul(big.NewRat(int64(start), 1), factor)
	q := new(big.Int).Quo(x.Num(), x.Denom()) // truncated toward zero
	if up && x.Sign() > 0 && !x.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return int(q.Int64())
}
