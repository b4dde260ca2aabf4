package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// commandParallelism bounds the executors a command talks to at once.
const commandParallelism = 16

// runCommand runs a command manifest's command in every task of the
// running instances of its target (or of the task groups it names), as
// exec would, and answers once each has answered.
func (s *Server) runCommand(w http.ResponseWriter, r *http.Request) error {
	obj, err := s.parse(r, manifest.KindCommand)
	if err != nil {
		return err
	}
	spec := obj.(*manifest.Command).Spec
	target := spec.CommandTargetRef
	app, err := s.cfg.Registry.GetApp(r.Context(), target.Namespace, target.Name)
	if err != nil {
		return err
	}
	wantDeployment := strings.EqualFold(target.Kind, string(manifest.KindDeployment))
	if wantDeployment != deploymentRoutes.serves(app.Kind) {
		return fmt.Errorf("%s/%s is a %s, not a %s: %w", target.Namespace, target.Name, app.Kind, target.Kind, errdefs.ErrNotFound)
	}
	groups, err := s.cfg.Registry.TaskGroups(r.Context(), target.Namespace, target.Name)
	if err != nil {
		return err
	}
	groups, err = chosenTaskGroups(groups, spec.TaskGroups)
	if err != nil {
		return err
	}
	if s.cfg.Operator == nil {
		return fmt.Errorf("no scheduler runs in this replica: %w", errdefs.ErrUnavailable)
	}
	msg := commandMessage(spec)
	view := CommandView{Target: target, Command: spec.Command, Results: []CommandResult{}}
	for _, tg := range groups {
		for _, task := range tg.Tasks {
			view.Results = append(view.Results, CommandResult{Instance: tg.Index,
				MessageReply: MessageReply{TaskGroupID: tg.ID, Task: task.ID, Type: proto.MessageExec}})
			if tg.State != "TASK_RUNNING" || task.State != "TASK_RUNNING" {
				view.Results[len(view.Results)-1].Error = fmt.Sprintf("not running (%s)", task.State)
			}
		}
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, commandParallelism)
	for i := range view.Results {
		result := &view.Results[i]
		if result.Error != "" {
			continue
		}
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			res, err := s.cfg.Operator.Message(r.Context(), result.TaskGroupID, result.Task, msg)
			if err != nil {
				result.Error = err.Error()
				return
			}
			result.OK, result.Output, result.Truncated, result.ExitCode, result.Error = res.OK, res.Output, res.Truncated, res.ExitCode, res.Error
		})
	}
	wg.Wait()
	sortResults(view.Results)
	writeJSON(w, http.StatusOK, view)
	return nil
}

// chosenTaskGroups is groups narrowed to the IDs named (none: all); an ID
// that is not one of them is a 400 naming it.
func chosenTaskGroups(groups []*registry.TaskGroup, ids []string) ([]*registry.TaskGroup, error) {
	if len(ids) == 0 {
		return groups, nil
	}
	byID := map[string]*registry.TaskGroup{}
	for _, tg := range groups {
		byID[tg.ID] = tg
	}
	var chosen []*registry.TaskGroup
	var errs field.ErrorList
	for i, id := range ids {
		tg, ok := byID[id]
		if !ok {
			errs = append(errs, field.Invalid(field.Path("spec.taskgroups").Index(i), "%q is not a task group of the target", id))
			continue
		}
		chosen = append(chosen, tg)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return chosen, nil
}

// commandMessage is the exec message of a command's spec.
func commandMessage(spec manifest.CommandSpec) proto.Message {
	msg := proto.Message{Type: proto.MessageExec, Command: spec.Command, User: spec.User,
		WorkingDir: spec.WorkingDir, Privileged: spec.Privileged, Timeout: defaultMessageTimeout}
	for _, kv := range spec.Env {
		name, value, _ := strings.Cut(kv, "=")
		msg.Env = append(msg.Env, proto.EnvVar{Name: name, Value: value})
	}
	return msg
}

func sortResults(results []CommandResult) {
	slices.SortFunc(results, func(a, b CommandResult) int {
		if a.Instance != b.Instance {
			return a.Instance - b.Instance
		}
		return strings.Compare(a.Task, b.Task)
	})
}
