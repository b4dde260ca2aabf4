package apiv1

import (
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// HookRunRequest is POST /v1/hookruns: a run of a template made by hand.
type HookRunRequest struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   manifest.ObjectMeta `json:"metadata"`
	Spec       struct {
		TemplateName string             `json:"templateName"`
		Args         []manifest.HookArg `json:"args,omitempty"`
	} `json:"spec"`
}

// HookRun is a hook run as GET /v1/hookruns shows it: the stored run.
type HookRun struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Spec      RunSpec   `json:"spec"`
	Status    RunStatus `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
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

// Owner names what waits for a run.
type Owner struct {
	// Kind is CanaryStep or PreDelete.
	Kind string `json:"kind"`
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
	// Phase is Pending, Running, Successful, Failed, Error,
	// Inconclusive or Terminated.
	Phase string `json:"phase"`
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
	Phase string `json:"phase"`
	// Message says what decided the phase.
	Message string `json:"message,omitempty"`
	// Count is how many measurements gave a value (Successful, Failed
	// and Inconclusive); an error is retried instead, counted in Error
	// and ConsecutiveError.
	Count            int `json:"count"`
	Successful       int `json:"successful"`
	Failed           int `json:"failed"`
	Inconclusive     int `json:"inconclusive"`
	Error            int `json:"error"`
	ConsecutiveError int `json:"consecutiveError"`
	// Measurements are the latest ones, oldest first.
	Measurements []Measurement `json:"measurements,omitempty"`
}

// Measurement is one call of a metric's provider, judged.
type Measurement struct {
	Value      string    `json:"value,omitempty"`
	Phase      string    `json:"phase"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// Message says why it failed or erred.
	Message string `json:"message,omitempty"`
}
