package autoscale

import (
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// BoundsAt returns the bounds in force at now. A window is open at now
// when, in its zone, its next end comes before its next start (KEDA's
// cron scaler): from each start until the end that follows. An open
// window's minReplicas and maxReplicas replace the spec's, so a window
// can raise or lower either; of several open windows the largest of each
// wins. The maximum is raised to the minimum if a window's minimum
// passes it.
func BoundsAt(spec Spec, now time.Time) manifest.ScaleBounds {
	b := manifest.ScaleBounds{Min: spec.Min, Max: spec.Max}
	windowMin, windowMax := -1, -1
	for _, w := range spec.Windows {
		end := w.End.Next(now)
		if !end.Before(w.Start.Next(now)) {
			continue
		}
		b.Windows = append(b.Windows, manifest.ActiveWindow{Name: w.Name, Until: end})
		if w.Min != nil {
			windowMin = max(windowMin, *w.Min)
		}
		if w.Max != nil {
			windowMax = max(windowMax, *w.Max)
		}
	}
	if windowMin >= 0 {
		b.Min = windowMin
	}
	if windowMax >= 0 {
		b.Max = windowMax
	}
	b.Max = max(b.Max, b.Min)
	return b
}
