package hook

import (
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Phase is the phase of a measurement, a metric or a run (seed 003).
type Phase string

// The phases. A run is Pending until its first measurement, Running
// until every metric ended; it ends Successful, Failed, Error,
// Inconclusive or Terminated (stopped on request).
const (
	Pending      Phase = "Pending"
	Running      Phase = "Running"
	Successful   Phase = "Successful"
	Failed       Phase = "Failed"
	Error        Phase = "Error"
	Inconclusive Phase = "Inconclusive"
	Terminated   Phase = "Terminated"
)

// Completed reports whether p ends a run or a metric.
func (p Phase) Completed() bool {
	switch p {
	case Successful, Failed, Error, Inconclusive, Terminated:
		return true
	}
	return false
}

// RunSpec is what a hook run does: a template's metrics with the run's
// arguments.
type RunSpec struct {
	TemplateName string             `json:"templateName"`
	Args         []manifest.HookArg `json:"args,omitempty"`
	// Metrics are the template's, copied when the run starts, so that a
	// later change of the template does not change a run under way.
	Metrics []manifest.HookMetric `json:"metrics,omitempty"`
	// Owner is who waits for the run's phase; nil for a run made by hand.
	Owner *Owner `json:"owner,omitempty"`
	// Terminate stops the run: no more measurements, phase Terminated
	// unless it ended already.
	Terminate bool `json:"terminate,omitempty"`
}

// OwnerKind says what waits for a run.
type OwnerKind string

// The owners of runs.
const (
	// OwnerCanaryStep is a canary hook step of an application's rollout.
	OwnerCanaryStep OwnerKind = "CanaryStep"
	// OwnerPreDelete is an instance that may be deleted or updated only
	// once the run succeeds (PreDeleteHook).
	OwnerPreDelete OwnerKind = "PreDelete"
)

// Owner names what waits for a run.
type Owner struct {
	Kind OwnerKind `json:"kind"`
	// App is the application's name (in the run's namespace).
	App string `json:"app"`
	// Revision is the application version the run is for.
	Revision uint64 `json:"revision"`
	// Step and Seq name the canary step and its wait.
	Step int `json:"step,omitempty"`
	Seq  int `json:"seq,omitempty"`
	// Instance and TaskGroupID name the instance of a PreDeleteHook.
	Instance    int    `json:"instance,omitempty"`
	TaskGroupID string `json:"taskGroupID,omitempty"`
}

// RunStatus is what a run measured and concluded.
type RunStatus struct {
	Phase Phase `json:"phase"`
	// Message says why a run ended as it did: the metric and the
	// measurement that decided it.
	Message       string         `json:"message,omitempty"`
	StartedAt     time.Time      `json:"startedAt,omitzero"`
	FinishedAt    time.Time      `json:"finishedAt,omitzero"`
	MetricResults []MetricResult `json:"metricResults,omitempty"`
}

// MetricResult is one metric's measurements and counts.
type MetricResult struct {
	Name  string `json:"name"`
	Phase Phase  `json:"phase"`
	// Message says what decided the phase.
	Message string `json:"message,omitempty"`
	// Count is how many measurements gave a value (Successful, Failed
	// and Inconclusive): the ones the metric's count counts. An error is
	// retried instead (Argo Rollouts), counted in Error and
	// ConsecutiveError.
	Count            int `json:"count"`
	Successful       int `json:"successful"`
	Failed           int `json:"failed"`
	Inconclusive     int `json:"inconclusive"`
	Error            int `json:"error"`
	ConsecutiveError int `json:"consecutiveError"`
	// Measurements are the latest MaxMeasurements, oldest first.
	Measurements []Measurement `json:"measurements,omitempty"`
}

// MaxMeasurements is how many measurements a metric keeps (the latest).
const MaxMeasurements = 10

// Measurement is one call of a metric's provider, judged.
type Measurement struct {
	Value      string    `json:"value,omitempty"`
	Phase      Phase     `json:"phase"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// Message says why it failed or erred ("asInt(result) < 30 is false
	// for 45", "GET http://…: connection refused").
	Message string `json:"message,omitempty"`
}
