package api

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Operator carries out operator requests on a task group: "restart" and
// "reload" (sent to the executor), "reschedule" (kill and place
// elsewhere), "stop" (kill, keep it defined, relaunch nothing) and
// "start" (place a stopped instance again).
type Operator interface {
	Operate(ctx context.Context, taskGroupID, op string) error
	// Drift queues the moves a drift asks for.
	Drift(ctx context.Context, req DriftRequest) error
	// Message sends msg to the executor of the running task group
	// taskGroupID, for its task named task (a container or process name
	// or a task ID; "" for the only one), and returns the executor's
	// answer. It waits msg.Timeout and a margin: errdefs.ErrTimeout past
	// that.
	Message(ctx context.Context, taskGroupID, task string, msg proto.Message) (*proto.MessageResult, error)
}

var taskGroupOps = map[string]bool{"restart": true, "reload": true, "reschedule": true, "stop": true, "start": true}

// operateTaskGroup answers 202: the result shows on the instance (GET the
// application) once the executor or Mesos answered.
func (s *Server) operateTaskGroup(w http.ResponseWriter, r *http.Request) error {
	id, op := r.PathValue("id"), r.PathValue("op")
	if !taskGroupOps[op] {
		return &httpError{http.StatusNotFound, "NotFound", fmt.Sprintf("no operation %q (want restart, reload, reschedule, stop or start)", op)}
	}
	if op == "stop" || op == "start" {
		if err := s.stoppable(r.Context(), id, op); err != nil {
			return err
		}
	}
	if s.cfg.Operator == nil {
		return fmt.Errorf("no scheduler runs in this replica: %w", errdefs.ErrUnavailable)
	}
	if err := s.cfg.Operator.Operate(r.Context(), id, op); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"taskGroupID": id, "operation": op})
	return nil
}

// stoppable refuses to stop or start an instance of a daemonset (it
// follows the agents) or of a dependency pod (it follows its users), and
// to start one of a stopped application (its start starts them all).
func (s *Server) stoppable(ctx context.Context, id, op string) error {
	tg, err := registry.ParseID(id)
	if err != nil {
		return fmt.Errorf("task group %q: %w", id, errdefs.ErrNotFound)
	}
	app, err := s.cfg.Registry.GetApp(ctx, tg.Namespace, tg.App)
	if err != nil {
		return err
	}
	switch {
	case app.Kind == manifest.KindDaemonset:
		return fmt.Errorf("daemonset %s/%s runs on every eligible agent: cordon the agent to keep its instance off it: %w",
			app.Namespace, app.Name, errdefs.ErrInvalidArgument)
	case app.DependencyPod != nil:
		return fmt.Errorf("%s/%s is a dependency pod of depends %s: it runs while its users do: %w",
			app.Namespace, app.Name, app.DependencyPod.Depends(), errdefs.ErrConflict)
	case op == "start" && app.Stopped:
		return fmt.Errorf("%s %s/%s is stopped: start it (POST …/%s/%s/start) to start its instances: %w",
			app.Kind, app.Namespace, app.Name, app.Namespace, app.Name, errdefs.ErrConflict)
	}
	return nil
}

// The bounds of a message's timeout: without one the executors' own
// default; more than the maximum holds a request (and the command) too
// long to be anything but a mistake.
const (
	defaultMessageTimeout = time.Minute
	maxMessageTimeout     = 10 * time.Minute
)

// messageBody is the body of a route that sends the executor a message.
type messageBody interface {
	// target is the task the message is for, and the timeout.
	target() *apiv1.TaskRequest
	// message is what to send, or every problem with the body.
	message() (proto.Message, field.ErrorList)
}

// messageRoutes are the routes that send the executor a message, each
// with a fresh body: its apiv1 request, with the checks that make it a
// message.
var messageRoutes = map[string]func() messageBody{
	"exec":      func() messageBody { return &execRequest{} },
	"signal":    func() messageBody { return &signalRequest{} },
	"env":       func() messageBody { return &envRequest{} },
	"files":     func() messageBody { return &filesRequest{} },
	"resources": func() messageBody { return &resourcesRequest{} },
}

// taskTimeout is the request's timeout, or its default.
func taskTimeout(t *apiv1.TaskRequest) (time.Duration, field.ErrorList) {
	d, err := t.Timeout.Parse()
	switch {
	case err != nil:
		return 0, field.ErrorList{field.Invalid("timeout", "%v", err)}
	case t.Timeout == "":
		return defaultMessageTimeout, nil
	case d <= 0 || d > maxMessageTimeout:
		return 0, field.ErrorList{field.Invalid("timeout", "%s: want more than 0s and at most %s", d, maxMessageTimeout)}
	}
	return d, nil
}

// execRequest, signalRequest, envRequest, filesRequest and
// resourcesRequest are apiv1's bodies, each with the checks that make it
// a message.
type execRequest struct{ apiv1.ExecRequest }

func (b *execRequest) target() *apiv1.TaskRequest { return &b.TaskRequest }

func (b *execRequest) message() (proto.Message, field.ErrorList) {
	var errs field.ErrorList
	if len(b.Command) == 0 || b.Command[0] == "" {
		errs = append(errs, field.Required("command"))
	}
	errs = append(errs, envNames(b.Env)...)
	if b.WorkingDir != "" && !path.IsAbs(b.WorkingDir) {
		errs = append(errs, field.Invalid("workingDir", "%q: want an absolute path", b.WorkingDir))
	}
	return proto.Message{Type: proto.MessageExec, Command: b.Command, Env: b.Env, User: b.User,
		WorkingDir: b.WorkingDir, Privileged: b.Privileged}, errs
}

// envNames checks the names of env, a body's "env".
func envNames(env []proto.EnvVar) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			errs = append(errs, field.Invalid(field.Path("env").Index(i).Child("name"), "%q: want a name without '='", e.Name))
		}
	}
	return errs
}

type signalRequest struct{ apiv1.SignalRequest }

func (b *signalRequest) target() *apiv1.TaskRequest { return &b.TaskRequest }

func (b *signalRequest) message() (proto.Message, field.ErrorList) {
	if b.Signal == "" {
		return proto.Message{}, field.ErrorList{field.Required("signal")}
	}
	sig, err := manifest.ParseSignal(string(b.Signal))
	if err != nil {
		return proto.Message{}, field.ErrorList{field.Invalid("signal", "unknown signal %q (want a name such as SIGHUP, or a number)", b.Signal)}
	}
	return proto.Message{Type: proto.MessageSignal, Signal: int(sig)}, nil
}

type envRequest struct{ apiv1.EnvRequest }

func (b *envRequest) target() *apiv1.TaskRequest { return &b.TaskRequest }

func (b *envRequest) message() (proto.Message, field.ErrorList) {
	if len(b.Env) == 0 {
		return proto.Message{}, field.ErrorList{field.Required("env")}
	}
	return proto.Message{Type: proto.MessageUpdateEnv, Env: b.Env}, envNames(b.Env)
}

type filesRequest struct{ apiv1.FilesRequest }

func (b *filesRequest) target() *apiv1.TaskRequest { return &b.TaskRequest }

func (b *filesRequest) message() (proto.Message, field.ErrorList) {
	if b.File == nil {
		return proto.Message{}, field.ErrorList{field.Required("file")}
	}
	if p := b.File.Path; !path.IsAbs(p) || path.Clean(p) == "/" {
		return proto.Message{}, field.ErrorList{field.Invalid("file.path", "%q: want an absolute file path", p)}
	}
	return proto.Message{Type: proto.MessageUpdateFile, File: b.File}, nil
}

type resourcesRequest struct{ apiv1.ResourcesRequest }

func (b *resourcesRequest) target() *apiv1.TaskRequest { return &b.TaskRequest }

func (b *resourcesRequest) message() (proto.Message, field.ErrorList) {
	res := b.Resources
	if res == nil {
		return proto.Message{}, field.ErrorList{field.Required("resources")}
	}
	var errs field.ErrorList
	p := field.Path("resources")
	if res.CPUs < 0 {
		errs = append(errs, field.Invalid(p.Child("cpus"), "%v: must be ≥ 0", res.CPUs))
	}
	if res.MemMB < 0 {
		errs = append(errs, field.Invalid(p.Child("memMB"), "%v: must be ≥ 0", res.MemMB))
	}
	// Only cpu and memory change in place.
	if res.PinCPUs {
		errs = append(errs, field.Invalid(p.Child("pinCPUs"), "cannot change in place"))
	}
	return proto.Message{Type: proto.MessageUpdateResources, Resources: res}, errs
}

// messageTaskGroup sends the executor of task group {id} the message of
// the body and answers with the executor's answer.
func (s *Server) messageTaskGroup(newBody func() messageBody) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		data, err := s.readBody(r)
		if err != nil {
			return err
		}
		body := newBody()
		if err := strictjson.Decode(data, body); err != nil {
			return err
		}
		msg, errs := body.message()
		timeout, terrs := taskTimeout(body.target())
		errs = append(errs, terrs...)
		id := r.PathValue("id")
		if msg.Type == proto.MessageExec {
			tg, err := registry.ParseID(id)
			if err != nil {
				return fmt.Errorf("task group %q: %w", id, errdefs.ErrNotFound)
			}
			own, err := s.namespaceUID(r.Context(), tg.Namespace)
			if err != nil {
				return err
			}
			errs = append(errs, s.cfg.Admission.Exec("", tg.Namespace, msg.User, msg.Privileged, own)...)
		}
		if len(errs) > 0 {
			return errs
		}
		if s.cfg.Operator == nil {
			return fmt.Errorf("no scheduler runs in this replica: %w", errdefs.ErrUnavailable)
		}
		msg.Timeout = timeout
		res, err := s.cfg.Operator.Message(r.Context(), id, body.target().Task, msg)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, MessageReply{TaskGroupID: id, Task: res.TaskID, Type: res.Type, OK: res.OK,
			Output: res.Output, Truncated: res.Truncated, ExitCode: res.ExitCode, Error: res.Error})
		return nil
	}
}
