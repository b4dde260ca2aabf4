package bcsctl

import "github.com/bcs-mesos/bcs-mesos/pkg/apiv1"

// The tests name the API's types as bcsctl once declared them.
type (
	appView     = apiv1.AppView
	agentView   = apiv1.AgentView
	hookRunView = apiv1.HookRun
	versionView = apiv1.AppVersion
	planView    = apiv1.Plan
	condition   = apiv1.Condition
)
