package bcsctl

import (
	"encoding/json"
	"time"
)

// The API's objects as bcsctl reads them: the fields it shows. Fields
// the server adds are ignored here and still printed by -o json|yaml.

// appView is an application, process or deployment (GET /v1/apps/…,
// /v1/deployments/…).
type appView struct {
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Kind      string          `json:"kind"`
	Version   uint64          `json:"version"`
	Instances int             `json:"instances"`
	Spec      json.RawMessage `json:"spec"`
	Status    appStatus       `json:"status"`
	// DependencyPod marks the pod the scheduler runs for a depends
	// object.
	DependencyPod *struct {
		DependsNamespace string `json:"dependsNamespace"`
		DependsName      string `json:"dependsName"`
		Node             string `json:"node"`
		Users            int    `json:"users"`
	} `json:"dependencyPod"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

type appStatus struct {
	State     string         `json:"state"`
	Message   string         `json:"message"`
	Instances []instanceView `json:"instances"`
	Rollout   *rolloutView   `json:"rollout"`
}

// rolloutView is an application's rollout (seed 004's status).
type rolloutView struct {
	Phase           string      `json:"phase"`
	Message         string      `json:"message"`
	Replicas        int         `json:"replicas"`
	Updated         int         `json:"updated"`
	UpdatedReady    int         `json:"updatedReady"`
	Ready           int         `json:"ready"`
	Total           int         `json:"total"`
	CurrentRevision uint64      `json:"currentRevision"`
	UpdateRevision  uint64      `json:"updateRevision"`
	CurrentStep     int         `json:"currentStepIndex"`
	Steps           int         `json:"steps"`
	Partition       int         `json:"partition"`
	Paused          bool        `json:"paused"`
	MaxUnavailable  int         `json:"maxUnavailable"`
	MaxSurge        int         `json:"maxSurge"`
	Conditions      []condition `json:"conditions"`
	Cause           string      `json:"cause"`
	RolledBackTo    uint64      `json:"rolledBackTo"`
	Aborted         bool        `json:"aborted"`
	AbortReason     string      `json:"abortReason"`
	Wait            *struct {
		Kind    string    `json:"kind"`
		Step    int       `json:"step"`
		Since   time.Time `json:"since"`
		Until   time.Time `json:"until"`
		Message string    `json:"message"`
	} `json:"wait"`
}

type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// instanceView is one instance of an application.
type instanceView struct {
	ID            int               `json:"id"`
	TaskGroupID   string            `json:"taskGroupID"`
	State         string            `json:"state"`
	Stopped       bool              `json:"stopped"`
	Revision      uint64            `json:"revision"`
	Ready         bool              `json:"ready"`
	Agent         string            `json:"agent"`
	Host          string            `json:"host"`
	HostIP        string            `json:"hostIP"`
	Ports         map[string]uint32 `json:"ports"`
	Healthy       *bool             `json:"healthy"`
	RemoteHealthy *bool             `json:"remoteHealthy"`
	RemoteChecks  []struct {
		Name    string `json:"name"`
		Address string `json:"address"`
		Healthy bool   `json:"healthy"`
		Message string `json:"message"`
	} `json:"remoteChecks"`
	Restarts int    `json:"restarts"`
	Message  string `json:"message"`
	Update   *struct {
		Version uint64    `json:"version"`
		Mode    string    `json:"mode"`
		Since   time.Time `json:"since"`
		Message string    `json:"message"`
		Error   string    `json:"error"`
	} `json:"update"`
	PreDelete *struct {
		Reason  string    `json:"reason"`
		Run     string    `json:"run"`
		Attempt int       `json:"attempt"`
		Since   time.Time `json:"since"`
		Message string    `json:"message"`
	} `json:"preDelete"`
	Move *struct {
		Reason    string        `json:"reason"`
		FromHost  string        `json:"fromHost"`
		ToHost    string        `json:"toHost"`
		Since     time.Time     `json:"since"`
		Successor *instanceView `json:"successor"`
	} `json:"move"`
	// Pending says why the instance is not placed: the matcher's
	// verdict over every known agent.
	Pending *pendingView `json:"pending"`
	// Tasks are its containers or processes as their executor reports
	// them.
	Tasks []taskView `json:"tasks"`
}

// pendingView is why an instance (or a plan's placement) finds no agent.
type pendingView struct {
	Fit     int `json:"fit"`
	Agents  int `json:"agents"`
	Reasons []struct {
		Reason string `json:"reason"`
		Count  int    `json:"count"`
	} `json:"reasons"`
	LastEvaluated time.Time `json:"lastEvaluated"`
}

type taskView struct {
	Name      string `json:"name"`
	ID        string `json:"id"`
	State     string `json:"state"`
	Healthy   *bool  `json:"healthy"`
	Message   string `json:"message"`
	Container *struct {
		ID        string `json:"id"`
		Pid       int    `json:"pid"`
		Status    string `json:"status"`
		ExitCode  *int   `json:"exitCode"`
		IPAddress string `json:"ipAddress"`
	} `json:"container"`
	Process *struct {
		Pid      int    `json:"pid"`
		ExitCode *int   `json:"exitCode"`
		WorkPath string `json:"workPath"`
	} `json:"process"`
}

// versionView is one entry of an application's history.
type versionView struct {
	Version      uint64          `json:"version"`
	Spec         json.RawMessage `json:"spec"`
	Cause        string          `json:"cause"`
	RolledBackTo uint64          `json:"rolledBackTo"`
	CreatedAt    time.Time       `json:"createdAt"`
}

// agentView is an agent (GET /v1/agents).
type agentView struct {
	ID          string            `json:"id"`
	Hostname    string            `json:"hostname"`
	Attributes  map[string]string `json:"attributes"`
	LastSeen    *time.Time        `json:"lastSeen"`
	Schedulable bool              `json:"schedulable"`
	Cordoned    bool              `json:"cordoned"`
	Taints      []string          `json:"taints"`
	Reason      string            `json:"reason"`
	Drain       *struct {
		Since     time.Time `json:"since"`
		Force     bool      `json:"force"`
		State     string    `json:"state"`
		Remaining int       `json:"remaining"`
		Moving    []string  `json:"moving"`
		Blocked   []struct {
			Instance string `json:"instance"`
			Why      string `json:"why"`
		} `json:"blocked"`
		Kept []string `json:"kept"`
	} `json:"drain"`
	Evictions []struct {
		Instance string    `json:"instance"`
		At       time.Time `json:"at"`
	} `json:"evictions"`
	Master *struct {
		Active      bool   `json:"active"`
		Deactivated bool   `json:"deactivated"`
		Drain       string `json:"drain"`
		Total       struct {
			CPUs   float64 `json:"cpus"`
			MemMB  float64 `json:"memMB"`
			DiskMB float64 `json:"diskMB"`
			Ports  int     `json:"ports"`
		} `json:"total"`
	} `json:"master"`
	Maintenance *struct {
		Start  time.Time `json:"start"`
		End    time.Time `json:"end"`
		Answer string    `json:"answer"`
	} `json:"maintenance"`
	Used struct {
		CPUs  float64 `json:"cpus"`
		MemMB float64 `json:"memMB"`
	} `json:"used"`
	Instances []struct {
		App       string `json:"app"`
		Index     int    `json:"index"`
		ID        string `json:"taskGroupID"`
		Phase     string `json:"phase"`
		Successor bool   `json:"successor"`
		Move      string `json:"move"`
	} `json:"instances"`
	// Others counts the instances of namespaces the caller may not
	// read, which the server does not name.
	Others int `json:"others"`
}

// hookRunView is a hook run (GET /v1/hookruns).
type hookRunView struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Spec      struct {
		TemplateName string `json:"templateName"`
		Args         []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"args"`
		Owner *struct {
			Kind        string `json:"kind"`
			App         string `json:"app"`
			Revision    uint64 `json:"revision"`
			Step        int    `json:"step"`
			Instance    int    `json:"instance"`
			TaskGroupID string `json:"taskGroupID"`
		} `json:"owner"`
		Terminate bool `json:"terminate"`
	} `json:"spec"`
	Status struct {
		Phase         string    `json:"phase"`
		Message       string    `json:"message"`
		StartedAt     time.Time `json:"startedAt"`
		FinishedAt    time.Time `json:"finishedAt"`
		MetricResults []struct {
			Name         string `json:"name"`
			Phase        string `json:"phase"`
			Message      string `json:"message"`
			Count        int    `json:"count"`
			Successful   int    `json:"successful"`
			Failed       int    `json:"failed"`
			Inconclusive int    `json:"inconclusive"`
			Error        int    `json:"error"`
			Measurements []struct {
				Value      string    `json:"value"`
				Phase      string    `json:"phase"`
				StartedAt  time.Time `json:"startedAt"`
				FinishedAt time.Time `json:"finishedAt"`
				Message    string    `json:"message"`
			} `json:"measurements"`
		} `json:"metricResults"`
	} `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
}

// objectView is a configmap, secret, hook template or depends object.
type objectView struct {
	Kind      string          `json:"kind"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Spec      json.RawMessage `json:"spec"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
	// Status is a depends object's.
	Status *struct {
		ReferencedBy []string `json:"referencedBy"`
		Pods         []struct {
			Node      string `json:"node"`
			State     string `json:"state"`
			Users     int    `json:"users"`
			TaskState string `json:"taskState"`
		} `json:"pods"`
	} `json:"status"`
}

// notificationView is one notification of the delivery log.
type notificationView struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	Namespace   string    `json:"namespace"`
	App         string    `json:"app"`
	Instance    int       `json:"instance"`
	TaskGroupID string    `json:"taskGroupID"`
	Host        string    `json:"host"`
	Time        time.Time `json:"time"`
	Message     string    `json:"message"`
	State       string    `json:"state"`
	TaskState   string    `json:"taskState"`
	Deliveries  []struct {
		URL      string `json:"url"`
		State    string `json:"state"`
		Attempts int    `json:"attempts"`
	} `json:"deliveries"`
}

// notifyView is a registered notify callback.
type notifyView struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"createdAt"`
}

// eventView is one message of the event stream (GET /v1/events).
type eventView struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Action    string `json:"action"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Revision is the etcd revision of the change (the ID's first part),
	// not an application's revision.
	Revision int64 `json:"revision"`
	// Time is when the change was written; zero for a delete.
	Time   time.Time       `json:"time"`
	Object json.RawMessage `json:"object"`
	// Message is a reset's or an overflow's.
	Message string `json:"message"`
	// data is the event as the stream sent it.
	data string
}

// planView is what POST /v1/plan (and ?dryRun=true) answers: what a
// manifest would do to the cluster, nothing stored or launched.
type planView struct {
	Kind           string         `json:"kind"`
	Namespace      string         `json:"namespace"`
	Name           string         `json:"name"`
	Action         string         `json:"action"`
	CurrentVersion uint64         `json:"currentVersion"`
	Instances      []planInstance `json:"instances"`
	Summary        struct {
		Place    int `json:"place"`
		Keep     int `json:"keep"`
		Update   int `json:"update"`
		Recreate int `json:"recreate"`
		Kill     int `json:"kill"`
		Pending  int `json:"pending"`
	} `json:"summary"`
	Rollout *struct {
		Phase   string `json:"phase"`
		Message string `json:"message"`
	} `json:"rollout"`
	Warnings []string `json:"warnings"`
}

// planInstance is what a plan does to one instance.
type planInstance struct {
	Index      int          `json:"index"`
	Action     string       `json:"action"`
	Hostname   string       `json:"hostname"`
	Revision   uint64       `json:"revision"`
	UpdateMode string       `json:"updateMode"`
	Surge      bool         `json:"surge"`
	Message    string       `json:"message"`
	Pending    *pendingView `json:"pending"`
}

// taskGroupResult is the executor's answer to exec or signal.
type taskGroupResult struct {
	TaskGroupID string `json:"taskGroupID"`
	Task        string `json:"task"`
	Type        string `json:"type"`
	OK          bool   `json:"ok"`
	Output      string `json:"output"`
	ExitCode    int    `json:"exitCode"`
	Error       string `json:"error"`
	// Truncated: the output is the first part of what the command wrote.
	Truncated bool `json:"truncated"`
}
