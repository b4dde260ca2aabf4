package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Task group and task IDs are readable and parse without splitting on
// dots: fields are joined by '_', which neither namespaces nor application
// names may contain (pkg/manifest), so names with dots stay intact.
//
//	task group: <namespace>_<app>_<index>_<launch>.<incarnation>
//	task:       <namespace>_<app>_<index>_<launch>.<incarnation>_<task>
//
// launch counts the launches of the instance, so every launch has fresh
// IDs; incarnation tells apart the applications of one name deleted and
// created again, whose launch counts start again from 1 — Mesos asks that
// a framework never reuse a task ID (MESOS-2198). It is the application's
// creation time in milliseconds, base 36 (8 characters). IDs written
// before it existed (<launch> alone) still parse, with no incarnation:
// their tasks run on after an upgrade. The task group ID is also the
// executor ID.
const idSeparator = "_"

// incarnationSeparator joins a launch number and its incarnation.
const incarnationSeparator = "."

// Incarnation names the application created at createdAt among the
// others of its name; a record with no creation time has none.
func Incarnation(createdAt time.Time) string {
	if createdAt.IsZero() {
		return ""
	}
	return strconv.FormatInt(createdAt.UnixMilli(), 36)
}

// TaskGroupID returns the ID of launch number launch of an instance of
// the application incarnation.
func TaskGroupID(namespace, app, incarnation string, index, launch int) string {
	id := strings.Join([]string{namespace, app, strconv.Itoa(index), strconv.Itoa(launch)}, idSeparator)
	if incarnation != "" {
		id += incarnationSeparator + incarnation
	}
	return id
}

// TaskID returns the ID of task number task of a task group.
func TaskID(taskGroupID string, task int) string {
	return taskGroupID + idSeparator + strconv.Itoa(task)
}

// ParsedID is a task group or task ID taken apart.
type ParsedID struct {
	Namespace   string
	App         string
	Index       int
	Launch      int
	Incarnation string // "" in an ID written before incarnations
	Task        int    // -1 for a task group ID
}

// TaskGroupID is the ID of the task group p is or is a task of.
func (p ParsedID) TaskGroupID() string {
	return TaskGroupID(p.Namespace, p.App, p.Incarnation, p.Index, p.Launch)
}

// ParseID parses a task group ID or a task ID.
func ParseID(id string) (ParsedID, error) {
	bad := fmt.Errorf("id %q: want namespace_app_index_launch.incarnation[_task]", id)
	parts := strings.Split(id, idSeparator)
	if len(parts) != 4 && len(parts) != 5 {
		return ParsedID{}, bad
	}
	p := ParsedID{Namespace: parts[0], App: parts[1], Task: -1}
	launch, incarnation, dotted := strings.Cut(parts[3], incarnationSeparator)
	if p.Namespace == "" || p.App == "" || dotted && !isBase36(incarnation) {
		return ParsedID{}, bad
	}
	p.Incarnation, parts[3] = incarnation, launch
	nums := []*int{&p.Index, &p.Launch, &p.Task}
	for i, s := range parts[2:] {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return ParsedID{}, bad
		}
		*nums[i] = n
	}
	return p, nil
}

// isBase36 reports whether s is a non-empty run of digits and lower-case
// letters, as Incarnation writes.
func isBase36(s string) bool {
	return s != "" && strings.Trim(s, "0123456789abcdefghijklmnopqrstuvwxyz") == ""
}

// LaunchByID reads the instance one of whose launches — its current one,
// its move's successor or its previous one — has task group ID id, from
// the one record the ID names.
func (r *Registry) LaunchByID(ctx context.Context, id string) (instance, launch *TaskGroup, err error) {
	notFound := fmt.Errorf("task group %q (the taskGroupID of an instance): %w", id, errdefs.ErrNotFound)
	p, err := ParseID(id)
	if err != nil || p.Task != -1 {
		return nil, nil, notFound
	}
	instance, err = r.GetTaskGroup(ctx, p.Namespace, p.App, p.Index)
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil, nil, notFound
	}
	if err != nil {
		return nil, nil, err
	}
	if launch = instance.Launch(id); launch == nil {
		return nil, nil, notFound
	}
	return instance, launch, nil
}
