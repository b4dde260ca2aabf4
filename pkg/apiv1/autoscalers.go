package apiv1

import (
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// AutoscalerView is an autoscaler as the API returns it: its manifest
// (credentials redacted, as every manifest is shown) and the status the
// leading scheduler last wrote, absent before its first decision.
type AutoscalerView struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Revision is the spec's; a dry run's is 0 (nothing stored).
	Revision  int64                      `json:"revision"`
	Spec      manifest.Autoscaler        `json:"spec"`
	Status    *manifest.AutoscalerStatus `json:"status,omitempty"`
	CreatedAt time.Time                  `json:"createdAt,omitzero"`
	UpdatedAt time.Time                  `json:"updatedAt,omitzero"`
}
