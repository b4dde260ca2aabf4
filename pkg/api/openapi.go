package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// routeDoc describes one route in GET /openapi.json. Bodies and replies
// are Go values whose types give the schema, or shapes built of them
// (listOf, fieldsOf, anyOf).
type routeDoc struct {
	summary string
	body    any
	// bodyOptional: the route also runs without a body.
	bodyOptional bool
	// ops, for a pattern ending in {op}, are the operations it takes, each
	// with its body (nil: none): the document lists each as its own path.
	ops     map[string]any
	replies map[int]any
	// text is the media type of a reply that is not JSON.
	text string
}

// describedRoute is a route as s.handle registered it.
type describedRoute struct {
	pattern string
	params  []string
}

// listShape is {"key": [item…], "next": cursor}, the API's list shape.
type listShape struct {
	key  string
	item any
}

func listOf(key string, item any) listShape { return listShape{key, item} }

// fieldsShape is an object of the named fields, each always present.
type fieldsShape []namedValue

type namedValue struct {
	name  string
	value any
}

func fieldsOf(nameValues ...any) fieldsShape {
	var f fieldsShape
	for i := 0; i+1 < len(nameValues); i += 2 {
		f = append(f, namedValue{nameValues[i].(string), nameValues[i+1]})
	}
	return f
}

// anyOfShape is a body of any of the values' types.
type anyOfShape []any

func anyOf(values ...any) anyOfShape { return values }

// anyJSON is a reply of any JSON value.
type anyJSON struct{}

// routeDocs describes every route routes registers, by pattern.
func routeDocs() map[string]routeDoc {
	docs := map[string]routeDoc{}
	for _, describe := range []func(map[string]routeDoc){workloadDocs, objectDocs, autoscalerDocs, taskDocs, clusterDocs} {
		describe(docs)
	}
	return docs
}

// workloadDocs describes the routes of applications, deployments and
// daemonsets.
func workloadDocs(docs map[string]routeDoc) {
	for _, wl := range workloadRoutes {
		base := "/v1/" + wl.path
		var body any = manifest.Deployment{}
		scale := "Scale an " + wl.noun()
		switch wl.path {
		case appRoutes.path:
			body = anyOf(manifest.Application{}, manifest.Process{})
		case daemonsetRoutes.path:
			body, scale = manifest.Daemonset{}, "Refused with 400: a daemonset runs one instance on every agent its constraint admits"
		}
		docs["POST "+base] = routeDoc{summary: "Create an " + wl.noun() + " from its manifest (?dryRun=true: 200 with its plan, nothing stored)", body: body,
			replies: map[int]any{http.StatusCreated: apiv1.AppView{}, http.StatusOK: apiv1.Plan{}}}
		docs["GET "+base] = routeDoc{summary: "List the " + wl.list + " (?summary=true: their instances counted, not listed)", replies: map[int]any{http.StatusOK: listOf(wl.list, apiv1.AppView{})}}
		docs["GET "+base+"/{ns}/{name}"] = routeDoc{summary: "Get an " + wl.noun() + " with its instances and rollout (?summary=true: the instances counted, not listed)",
			replies: map[int]any{http.StatusOK: apiv1.AppView{}}}
		docs["PUT "+base+"/{ns}/{name}"] = routeDoc{summary: "Update an " + wl.noun() + " (a new version, rolled out by its strategy; ?dryRun=true: its plan, nothing stored)",
			body: body, replies: map[int]any{http.StatusOK: anyOf(apiv1.AppView{}, apiv1.Plan{})}}
		docs["DELETE "+base+"/{ns}/{name}"] = routeDoc{summary: "Delete an " + wl.noun() + " (its instances through their PreDeleteHook unless force)",
			replies: map[int]any{http.StatusAccepted: anyOf(apiv1.AppView{}, apiv1.DeletedReply{})}}
		docs["POST "+base+"/{ns}/{name}/scale"] = routeDoc{summary: scale, body: apiv1.ScaleRequest{},
			replies: map[int]any{http.StatusAccepted: apiv1.AppView{}}}
		docs["GET "+base+"/{ns}/{name}/instances"] = routeDoc{summary: "List an " + wl.noun() + "'s instances by ID, a page at a time",
			replies: map[int]any{http.StatusOK: listOf("instances", apiv1.InstanceView{})}}
		docs["POST "+base+"/{ns}/{name}/instances/{id}/allocate"] = routeDoc{summary: "Allocate an " + wl.noun() + "'s running instance to the caller " +
			"(a game session runs on it: scale-downs and rollouts keep it until released); 409 when it is being removed, not running, or allocated by another",
			body: apiv1.AllocateRequest{}, bodyOptional: true, replies: map[int]any{http.StatusOK: apiv1.AllocationView{}}}
		docs["POST "+base+"/{ns}/{name}/instances/{id}/release"] = routeDoc{summary: "Release an instance allocated through the API; 404 when it is not allocated",
			replies: map[int]any{http.StatusOK: apiv1.AllocationView{}}}
		docs["GET "+base+"/{ns}/{name}/versions"] = routeDoc{summary: "List an " + wl.noun() + "'s stored versions",
			replies: map[int]any{http.StatusOK: listOf("versions", apiv1.AppVersion{})}}
		docs["POST "+base+"/{ns}/{name}/{op}"] = routeDoc{summary: "Operate on an " + wl.noun() + "'s rollout, or stop or start all its instances",
			ops: rolloutOpBodies(), replies: map[int]any{http.StatusAccepted: apiv1.AppView{}}}
	}
}

// objectDocs describes the routes of configmaps, secrets, services, hook
// templates, depends objects and hook runs.
func objectDocs(docs map[string]routeDoc) {
	for _, k := range append(slices.Clone(objectKinds), dependsKind) {
		// A depends object is read with who uses it and its pods.
		body, view := objectManifest(k.kind), any(apiv1.ObjectView{})
		if k == dependsKind {
			view = apiv1.DependsView{}
		}
		docs["POST /v1/"+k.path] = routeDoc{summary: "Create a " + string(k.kind), body: body, replies: map[int]any{http.StatusCreated: apiv1.ObjectView{}}}
		docs["GET /v1/"+k.path] = routeDoc{summary: "List the " + k.path, replies: map[int]any{http.StatusOK: listOf(k.path, view)}}
		docs["GET /v1/"+k.path+"/{ns}/{name}"] = routeDoc{summary: "Get a " + string(k.kind), replies: map[int]any{http.StatusOK: view}}
		docs["PUT /v1/"+k.path+"/{ns}/{name}"] = routeDoc{summary: "Replace a " + string(k.kind), body: body, replies: map[int]any{http.StatusOK: apiv1.ObjectView{}}}
		docs["DELETE /v1/"+k.path+"/{ns}/{name}"] = routeDoc{summary: "Delete a " + string(k.kind), replies: map[int]any{http.StatusNoContent: nil}}
	}
	seedDepends := "seed 002's route for depends objects, named by ?name= and ?namespace="
	docs["POST /api/depends"] = routeDoc{summary: "Create a depends object (" + seedDepends + ")", body: manifest.Depends{},
		replies: map[int]any{http.StatusCreated: apiv1.ObjectView{}}}
	docs["GET /api/depends"] = routeDoc{summary: "Get a depends object (" + seedDepends + ")", replies: map[int]any{http.StatusOK: apiv1.DependsView{}}}
	docs["PUT /api/depends"] = routeDoc{summary: "Replace a depends object (" + seedDepends + ")", body: manifest.Depends{},
		replies: map[int]any{http.StatusOK: apiv1.ObjectView{}}}
	docs["DELETE /api/depends"] = routeDoc{summary: "Delete a depends object (" + seedDepends + ")", replies: map[int]any{http.StatusNoContent: nil}}
	docs["POST /v1/hookruns"] = routeDoc{summary: "Run a hook template", body: apiv1.HookRunRequest{}, replies: map[int]any{http.StatusCreated: apiv1.HookRun{}}}
	docs["GET /v1/hookruns"] = routeDoc{summary: "List hook runs", replies: map[int]any{http.StatusOK: listOf("hookruns", apiv1.HookRun{})}}
	docs["GET /v1/hookruns/{ns}/{name}"] = routeDoc{summary: "Get a hook run with its measurements", replies: map[int]any{http.StatusOK: apiv1.HookRun{}}}
	docs["POST /v1/hookruns/{ns}/{name}/terminate"] = routeDoc{summary: "Terminate a hook run", replies: map[int]any{http.StatusAccepted: apiv1.HookRun{}}}
}

// autoscalerDocs describes the routes of autoscalers.
func autoscalerDocs(docs map[string]routeDoc) {
	base := "/v1/" + autoscalersPath
	view := apiv1.AutoscalerView{}
	docs["POST "+base] = routeDoc{summary: "Create an autoscaler (?dryRun=true: 200 with the decision it would make, nothing stored)", body: manifest.Autoscaler{},
		replies: map[int]any{http.StatusCreated: view, http.StatusOK: view}}
	docs["GET "+base] = routeDoc{summary: "List the autoscalers with their status", replies: map[int]any{http.StatusOK: listOf(autoscalersPath, view)}}
	docs["GET "+base+"/{ns}/{name}"] = routeDoc{summary: "Get an autoscaler: its spec and the status the leader last wrote", replies: map[int]any{http.StatusOK: view}}
	docs["PUT "+base+"/{ns}/{name}"] = routeDoc{summary: "Replace an autoscaler (?dryRun=true: the decision it would make, nothing stored)", body: manifest.Autoscaler{},
		replies: map[int]any{http.StatusOK: view}}
	docs["DELETE "+base+"/{ns}/{name}"] = routeDoc{summary: "Delete an autoscaler with its status; its workload keeps its size", replies: map[int]any{http.StatusNoContent: nil}}
	docs["POST "+base+"/{ns}/{name}/pause"] = routeDoc{summary: "Pause an autoscaler: it decides and reports, never scales", replies: map[int]any{http.StatusOK: view}}
	docs["POST "+base+"/{ns}/{name}/resume"] = routeDoc{summary: "Resume a paused autoscaler", replies: map[int]any{http.StatusOK: view}}
}

// taskDocs describes the routes that reach instances: commands,
// operations and messages, logs, and plans of where they would go.
func taskDocs(docs map[string]routeDoc) {
	docs["POST /v1/commands"] = routeDoc{summary: "Run a command (the original's kind command) in every task of an application's or deployment's running instances; each task's answer",
		body: manifest.Command{}, replies: map[int]any{http.StatusOK: apiv1.CommandView{}}}
	docs["POST /v1/taskgroups/{id}/{op}"] = routeDoc{summary: "Restart, reload, reschedule, stop or start an instance (its task group)",
		ops: noBodies(taskGroupOps), replies: map[int]any{http.StatusAccepted: fieldsOf("taskGroupID", "", "operation", "")}}
	for op, summary := range map[string]string{
		"exec":      "Run a command in a task and answer its output and exit code",
		"signal":    "Send a signal to a task's main process",
		"env":       "Replace environment variables of a task (a container is re-created, a process gets them at its next start)",
		"files":     "Write a file into a task's container",
		"resources": "Change a task's cpu and memory limits in place",
	} {
		docs["POST /v1/taskgroups/{id}/"+op] = routeDoc{summary: summary + " (the executor's answer; 504 when none came in time)",
			body: messageRoutes[op](), replies: map[int]any{http.StatusOK: apiv1.MessageReply{}}}
	}
	docs["POST /v1/plan"] = routeDoc{summary: "What creating or updating a workload from its manifest would do on the cluster, or the decision an autoscaler would make; nothing stored or launched",
		body: anyOf(manifest.Application{}, manifest.Process{}, manifest.Deployment{}, manifest.Autoscaler{}), replies: map[int]any{http.StatusOK: anyOf(apiv1.Plan{}, apiv1.AutoscalerView{})}}
	docs["GET /v1/taskgroups/{id}/logs"] = routeDoc{summary: "Read a task's stdout or stderr from its sandbox through its agent's files API: " +
		"the last ?tail= bytes, then with ?follow=true what it writes next (502 when the agent cannot be reached)",
		text: "text/plain", replies: map[int]any{http.StatusOK: ""}}
}

// clusterDocs describes the routes of notifications, agents, the engine
// and the server itself.
func clusterDocs(docs map[string]routeDoc) {
	docs["GET /v1/notifies"] = routeDoc{summary: "List the notification callbacks", replies: map[int]any{http.StatusOK: listOf("notifies", apiv1.NotifyCallback{})}}
	docs["POST /v1/notifies"] = routeDoc{summary: "Register a notification callback", body: apiv1.NotifyRequest{}, bodyOptional: true,
		replies: map[int]any{http.StatusAccepted: apiv1.NotifyCallback{}}}
	docs["DELETE /v1/notifies"] = routeDoc{summary: "Remove a notification callback, named by ?callback=",
		replies: map[int]any{http.StatusAccepted: fieldsOf("id", "", "url", "")}}
	docs["GET /v1/notifications"] = routeDoc{summary: "List notifications, newest first, a page at a time",
		replies: map[int]any{http.StatusOK: apiv1.NotificationPage{}}}
	docs["GET /v1/notifications/{id}"] = routeDoc{summary: "Get a notification with its deliveries", replies: map[int]any{http.StatusOK: apiv1.NotificationView{}}}
	docs["GET /v1/agents"] = routeDoc{summary: "List the agents with their settings and instances (those of namespaces the caller may not read counted, not named; ?summary=true: all counted)", replies: map[int]any{http.StatusOK: listOf("agents", apiv1.AgentView{})}}
	docs["GET /v1/agents/{agent}"] = routeDoc{summary: "Get an agent by ID or hostname (?summary=true: its instances counted, not listed)", replies: map[int]any{http.StatusOK: apiv1.AgentView{}}}
	docs["POST /v1/agents/{agent}/drift"] = routeDoc{summary: "Move instances off an agent, place before kill", body: apiv1.DriftRequest{}, bodyOptional: true,
		replies: map[int]any{http.StatusAccepted: fieldsOf("drift", apiv1.DriftRequest{}, "from", "")}}
	docs["POST /v1/agents/{agent}/{op}"] = routeDoc{summary: "Cordon, uncordon, drain or undrain an agent", bodyOptional: true,
		ops: map[string]any{"cordon": apiv1.AgentRequest{}, "drain": apiv1.AgentRequest{}, "uncordon": apiv1.AgentRequest{}, "undrain": apiv1.AgentRequest{}}, replies: map[int]any{http.StatusOK: apiv1.AgentView{}}}
	docs["PUT /v1/agents/{agent}/{op}"] = routeDoc{summary: "Replace an agent's taints", ops: map[string]any{"taints": apiv1.AgentRequest{}}, replies: map[int]any{http.StatusOK: apiv1.AgentView{}}}
	docs["GET /v1/engine"] = routeDoc{summary: "Get the engine's mode", replies: map[int]any{http.StatusOK: apiv1.Engine{}}}
	docs["PUT /v1/engine"] = routeDoc{summary: "Set the engine's mode (running, maintenance, stopped)", body: apiv1.EngineRequest{},
		replies: map[int]any{http.StatusOK: apiv1.Engine{}}}
	docs["GET /v1/engine/config"] = routeDoc{summary: "Get the engine's configuration: the flags' values and those set at run time over them",
		replies: map[int]any{http.StatusOK: apiv1.EngineConfigView{}}}
	docs["PATCH /v1/engine/config"] = routeDoc{summary: "Change the engine's configuration at run time (a JSON merge patch; null gives a value back to its flag)",
		body: apiv1.EngineConfigRequest{}, replies: map[int]any{http.StatusOK: apiv1.EngineConfigView{}}}
	docs["GET /api/engine/config"] = routeDoc{summary: "Seed 002's engine config: as GET /v1/engine/config",
		replies: map[int]any{http.StatusOK: apiv1.EngineConfigView{}}}
	docs["PATCH /api/engine/config"] = routeDoc{summary: "Seed 002's engine config: as PATCH /v1/engine/config",
		body: apiv1.EngineConfigRequest{}, replies: map[int]any{http.StatusOK: apiv1.EngineConfigView{}}}
	docs["GET /v1/events"] = routeDoc{summary: "Stream every change as Server-Sent Events; ?type= takes one or more of " + strings.Join(eventTypes, ", ") +
		"; ?workload= (with ?namespace=) keeps a workload's own and its instances', allocations' and rollout's", text: "text/event-stream",
		replies: map[int]any{http.StatusOK: ""}}
	docs["GET /v1/audit"] = routeDoc{summary: "The audit log of writes (who, role, route, namespace and name, status, error code), newest first, a page at a time",
		replies: map[int]any{http.StatusOK: apiv1.AuditPage{}}}
	docs["GET /v1/leader"] = routeDoc{summary: "Which replica leads", replies: map[int]any{http.StatusOK: fieldsOf("leader", "", "self", false)}}
	docs["GET /healthz"] = routeDoc{summary: "Whether this replica can serve", replies: map[int]any{http.StatusOK: fieldsOf("status", "")}}
	docs["GET /metrics"] = routeDoc{summary: "Prometheus metrics", text: "text/plain", replies: map[int]any{http.StatusOK: ""}}
	docs["GET /files/"] = routeDoc{summary: "Files for agents to fetch (packages, executors) when --files-dir is set", text: "application/octet-stream",
		replies: map[int]any{http.StatusOK: ""}}
	docs["GET /openapi.json"] = routeDoc{summary: "This document", replies: map[int]any{http.StatusOK: anyJSON{}}}
}

// rolloutOpBodies are the rollout operations: only rollback takes a body.
func rolloutOpBodies() map[string]any {
	ops := noBodies(rolloutOps)
	ops["rollback"] = apiv1.RollbackRequest{}
	return ops
}

// noBodies lists operations that take no body.
func noBodies[V any](ops map[string]V) map[string]any {
	out := map[string]any{}
	for op := range ops {
		out[op] = nil
	}
	return out
}

func (wl workloads) noun() string { return strings.TrimSuffix(wl.path, "s") }

// objectManifest is the manifest type of a kind of object.
func objectManifest(kind manifest.Kind) any {
	switch kind {
	case manifest.KindConfigMap:
		return manifest.ConfigMap{}
	case manifest.KindSecret:
		return manifest.Secret{}
	case manifest.KindHookTemplate:
		return manifest.HookTemplate{}
	case manifest.KindService:
		return manifest.Service{}
	default:
		return manifest.Depends{}
	}
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// openAPI builds the document of routes: every route must be described
// (a route added without its doc panics at start, like a bad mux pattern).
func openAPI(routes []describedRoute) *openapi3.T {
	docs := routeDocs()
	doc := &openapi3.T{
		OpenAPI: "3.0.3",
		Info: &openapi3.Info{Title: "bcs-scheduler API", Version: "v1",
			Description: "The REST API of bcs-scheduler. Errors share one shape (ErrorBody); " +
				"a query parameter a route does not take is a 400."},
		Paths:      openapi3.NewPaths(),
		Components: &openapi3.Components{Schemas: openapi3.Schemas{}},
	}
	b := schemaBuilder{schemas: doc.Components.Schemas, gen: openapi3gen.NewGenerator(
		openapi3gen.SchemaCustomizer(customizeSchema),
		openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true}),
		openapi3gen.CreateTypeNameGenerator(func(t reflect.Type) string { return exportedName(t.Name()) }))}
	errorRef := b.schema(apiv1.ErrorBody{})
	for _, rt := range routes {
		d, ok := docs[rt.pattern]
		if !ok {
			panic(fmt.Sprintf("api: route %q has no description in routeDocs", rt.pattern))
		}
		method, path, _ := strings.Cut(rt.pattern, " ")
		bodies := map[string]any{path: d.body}
		if d.ops != nil {
			bodies = map[string]any{}
			for op, body := range d.ops {
				bodies[strings.TrimSuffix(path, "{op}")+op] = body
			}
		}
		for _, p := range slices.Sorted(maps.Keys(bodies)) {
			op := openapi3.NewOperation()
			op.Summary, op.OperationID = d.summary, operationID(method, p)
			for _, name := range pathParam.FindAllStringSubmatch(p, -1) {
				op.AddParameter(openapi3.NewPathParameter(name[1]).WithSchema(openapi3.NewStringSchema()))
			}
			for _, q := range rt.params {
				op.AddParameter(openapi3.NewQueryParameter(q).WithSchema(openapi3.NewStringSchema()))
			}
			if body := bodies[p]; body != nil {
				op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
					WithRequired(!d.bodyOptional).WithJSONSchemaRef(b.schema(body))}
			}
			op.Responses = openapi3.NewResponses()
			for status, reply := range d.replies {
				resp := openapi3.NewResponse().WithDescription(http.StatusText(status))
				switch {
				case reply == nil:
				case d.text != "":
					resp.WithContent(openapi3.NewContentWithSchema(openapi3.NewStringSchema(), []string{d.text}))
				default:
					resp.WithJSONSchemaRef(b.schema(reply))
				}
				op.AddResponse(status, resp)
			}
			op.Responses.Set("default", &openapi3.ResponseRef{Value: openapi3.NewResponse().
				WithDescription("An error: 400 for bad input (each field named), 401 without a known bearer token, 403 when the caller's role does not allow it, 404, 409, 503 …").WithJSONSchemaRef(errorRef)})
			doc.AddOperation(p, method, op)
		}
	}
	return doc
}

func operationID(method, path string) string {
	words := []string{strings.ToLower(method)}
	for _, part := range strings.Split(path, "/") {
		part = strings.Trim(part, "{}")
		if part != "" && part != "v1" {
			words = append(words, exportedName(part))
		}
	}
	return strings.Join(words, "")
}

func exportedName(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// schemaBuilder makes the schemas of bodies and replies; named Go types
// become components.
type schemaBuilder struct {
	gen     *openapi3gen.Generator
	schemas openapi3.Schemas
}

func (b schemaBuilder) schema(v any) *openapi3.SchemaRef {
	switch v := v.(type) {
	case listShape:
		list := openapi3.NewArraySchema()
		list.Items = b.schema(v.item)
		next := openapi3.NewStringSchema()
		next.Description = "Present when ?limit= cut the list: the ?after= of the next page."
		return openapi3.NewObjectSchema().WithPropertyRef(v.key, list.NewRef()).WithProperty("next", next).WithRequired([]string{v.key}).NewRef()
	case fieldsShape:
		s := openapi3.NewObjectSchema()
		for _, f := range v {
			s.WithPropertyRef(f.name, b.schema(f.value))
			s.Required = append(s.Required, f.name)
		}
		return s.NewRef()
	case anyOfShape:
		s := &openapi3.Schema{}
		for _, o := range v {
			s.AnyOf = append(s.AnyOf, b.schema(o))
		}
		return s.NewRef()
	case anyJSON:
		return (&openapi3.Schema{}).NewRef()
	}
	ref, err := b.gen.NewSchemaRefForValue(v, b.schemas)
	if err != nil {
		panic(fmt.Sprintf("api: schema of %T: %v", v, err))
	}
	return ref
}

var (
	rawMessageType   = reflect.TypeFor[json.RawMessage]()
	intOrPercentType = reflect.TypeFor[manifest.IntOrPercent]()
	durationType     = reflect.TypeFor[time.Duration]()
	engineDuration   = reflect.TypeFor[apiv1.Duration]()
	manifestPkg      = reflect.TypeFor[manifest.Application]().PkgPath()
)

// customizeSchema says what the Go types cannot: embedded JSON is any
// JSON, a count may be a percentage, a duration is in nanoseconds, and
// what Go encodes as null may be null.
func customizeSchema(_ string, t reflect.Type, tag reflect.StructTag, s *openapi3.Schema) error {
	switch t {
	case rawMessageType:
		*s = openapi3.Schema{}
	case intOrPercentType:
		// Properties, though empty, keep it a named component.
		*s = openapi3.Schema{Description: "a count (2) or a percentage (\"25%\")", Properties: openapi3.Schemas{},
			AnyOf: openapi3.SchemaRefs{openapi3.NewIntegerSchema().NewRef(), openapi3.NewStringSchema().WithPattern(`^[0-9]+%$`).NewRef()}}
	case durationType:
		s.Description = "nanoseconds"
	case engineDuration:
		*s = *openapi3.NewStringSchema().WithPattern(`^([0-9.]+(ns|us|µs|ms|s|m|h))+$`)
		s.Description = "a duration, as Go writes it: \"30s\", \"1h30m\""
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
		if !omitted(tag) {
			s.Nullable = true
		}
	case reflect.Struct:
		// What the API answers always has its fields but the optional
		// ones; what it is sent (manifests, requests) is documented by
		// the field, each optional unless its description says.
		if t.PkgPath() == manifestPkg || strings.HasSuffix(t.Name(), "Request") {
			break
		}
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" && s.Properties[name] != nil && !omitted(f.Tag) && !slices.Contains(s.Required, name) {
				s.Required = append(s.Required, name)
			}
		}
	}
	return nil
}

// omitted: a field with this tag may be absent from JSON.
func omitted(tag reflect.StructTag) bool {
	_, opts, _ := strings.Cut(tag.Get("json"), ",")
	return strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
}

// openAPIHandler serves the document, encoded once.
func openAPIHandler(doc *openapi3.T) handlerFunc {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("api: encoding the OpenAPI document: %v", err))
	}
	return func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		_, err := w.Write(data)
		return err
	}
}
