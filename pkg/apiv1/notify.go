package apiv1

import "time"

// NotifyRequest is the body of POST /v1/notifies: the query's callback,
// and the notice types it takes (every type when none).
type NotifyRequest struct {
	Callback string   `json:"callback"`
	Events   []string `json:"events,omitempty"`
}

// NotifyCallback is a registered notification callback; its URL is
// always redacted.
type NotifyCallback struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Events are the notice types it takes; empty takes every type.
	Events    []string  `json:"events,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// NotificationView is a notification with the sum of its deliveries as
// its state (pending, delivered, failed); the notice's own state (the
// Mesos task state that made it) is shown as taskState.
type NotificationView struct {
	*Notification
	State     string `json:"state"`
	TaskState string `json:"taskState,omitempty"`
}

// Notification is a notice and its deliveries.
type Notification struct {
	Notice
	// Addressed: Deliveries lists every callback that was registered when
	// the notice was made and takes its type.
	Addressed  bool       `json:"addressed"`
	Deliveries []Delivery `json:"deliveries"`
}

// Notice is what happened to an instance (seed 002's notifyController: a
// pod exited, went missing, started without an IP, restarted too often).
type Notice struct {
	// ID is unique and begins with the UTC time, so IDs sort by time;
	// receivers deduplicate on it (X-BCS-Event-ID).
	ID          string `json:"id"`
	Type        string `json:"type"`
	Namespace   string `json:"namespace"`
	App         string `json:"app"`
	Instance    int    `json:"instance"`
	TaskGroupID string `json:"taskGroupID"`
	AgentID     string `json:"agentID,omitempty"`
	Host        string `json:"host,omitempty"`
	// State is the Mesos task state that made it, if one did.
	State   string    `json:"state,omitempty"`
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
}

// Delivery is the delivery of a notice to one callback.
type Delivery struct {
	Callback string `json:"callback"` // the callback's ID
	URL      string `json:"url"`      // its URL, redacted
	// State is Pending, Delivered, Failed or Cancelled.
	State string `json:"state"`
	// Attempts counts the POSTs begun.
	Attempts    int       `json:"attempts"`
	LastAttempt time.Time `json:"lastAttempt,omitempty"`
	NextAttempt time.Time `json:"nextAttempt,omitempty"`
	LastStatus  int       `json:"lastStatus,omitempty"` // HTTP status of the last answer
	LastError   string    `json:"lastError,omitempty"`
	DeliveredAt time.Time `json:"deliveredAt,omitempty"`
}

// NotificationPage is a page of GET /v1/notifications.
type NotificationPage struct {
	Notifications []NotificationView `json:"notifications"`
	// Next is the ?before= of the next page; absent on the last.
	Next string `json:"next,omitempty"`
}
