package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Task group and task IDs are readable and parse without splitting on
// dots: fields are joined by '_', which neither namespaces nor application
// names may contain (pkg/manifest), so names with dots stay intact.
//
//	task group: <namespace>_<app>_<index>_<launch>
//	task:       <namespace>_<app>_<index>_<launch>_<task>
//
// launch counts the launches of the instance, so every launch has fresh
// IDs; the task group ID is also the executor ID.
const idSeparator = "_"

// TaskGroupID returns the ID of launch number launch of an instance.
func TaskGroupID(namespace, app string, index, launch int) string {
	return strings.Join([]string{namespace, app, strconv.Itoa(index), strconv.Itoa(launch)}, idSeparator)
}

// TaskID returns the ID of task number task of a task group.
func TaskID(taskGroupID string, task int) string {
	return taskGroupID + idSeparator + strconv.Itoa(task)
}

// ParsedID is a task group or task ID taken apart.
type ParsedID struct {
	Namespace string
	App       string
	Index     int
	Launch    int
	Task      int // -1 for a task group ID
}

// ParseID parses a task group ID or a task ID.
func ParseID(id string) (ParsedID, error) {
	parts := strings.Split(id, idSeparator)
	if len(parts) != 4 && len(parts) != 5 {
		return ParsedID{}, fmt.Errorf("id %q: want namespace_app_index_launch[_task]", id)
	}
	p := ParsedID{Namespace: parts[0], App: parts[1], Task: -1}
	nums := []*int{&p.Index, &p.Launch, &p.Task}
	for i, s := range parts[2:] {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || p.Namespace == "" || p.App == "" {
			return ParsedID{}, fmt.Errorf("id %q: want namespace_app_index_launch[_task]", id)
		}
		*nums[i] = n
	}
	return p, nil
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
