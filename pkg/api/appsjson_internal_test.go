package api

import (
	"bytes"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
)

// The view of an application written with appendInstanceView is the
// encoder's to the byte: instances with every field set (each nested
// part too, strings the encoder escapes, ports it sorts), with none set,
// and some between.
func TestAppViewAsTheEncoderWritesIt(t *testing.T) {
	var full apiv1.InstanceView
	fill(reflect.ValueOf(&full).Elem(), 0)
	partial := apiv1.InstanceView{ID: 3, TaskGroupID: "ns.app.3.1", State: "TASK_RUNNING", Phase: "Running", Ready: true,
		Ports: map[string]uint32{"http": 31000}, Tasks: []apiv1.TaskView{{Name: "svr", ID: "t", State: "TASK_RUNNING"}}}
	stopped := true
	partial.Healthy = &stopped
	for _, instances := range [][]apiv1.InstanceView{nil, {}, {{}}, {full}, {partial, {}, full, partial}} {
		v := AppView{Namespace: "ns", Name: "app", Spec: []byte(`{"spec":{"instances":[]}}`), CreatedAt: time.Unix(1764331200, 5).UTC(),
			Status: AppStatus{State: "Running", Instances: instances, Counts: &InstanceCounts{Running: 2}}}
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		writeJSON(want, 200, v)
		writeAppView(got, 200, v)
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Fatalf("%d instances:\n%s\nwant as the encoder writes it:\n%s", len(instances), got.Body, want.Body)
		}
	}
}

// fill sets every field of v, and of what it points to, to a value the
// encoder shows.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(`a "<q&>"\ ü` + v.Type().Name())
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(-7)
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		v.SetUint(7)
	case reflect.Float64:
		v.SetFloat(0.1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		if depth < 4 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), depth+1)
		}
	case reflect.Slice:
		if depth < 4 && v.Type().Elem().Kind() != reflect.Uint8 {
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
			fill(v.Index(0), depth+1)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for _, k := range []string{"zeta", "alpha", "<b>"} {
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, depth+1)
			v.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 28, 12, 0, 0, 123, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}
