package hookrun

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// defaultTimeout bounds a call whose metric sets none (the web
// provider's timeoutSeconds default; Prometheus has no setting).
const defaultTimeout = 10 * time.Second

// maxBodyBytes bounds the body of a web call the runner reads.
const maxBodyBytes = 1 << 20

// measure calls metric's provider once, with args, under policy (the
// run's namespace's), and judges the value.
func (r *Runner) measure(ctx context.Context, policy *egress.Policy, metric manifest.HookMetric, args []manifest.HookArg) hook.Measurement {
	startedAt := r.cfg.Clock.Now().UTC()
	var value any
	provider, errs := hook.RenderProvider(field.Path("provider"), metric.Provider, args)
	err := errs.ToError()
	if err == nil {
		value, err = Call(ctx, policy, provider)
	}
	return hook.Measure(metric, value, err, startedAt, r.cfg.Clock.Now().UTC())
}

// Call calls provider once under policy (the caller's namespace's): a
// web call or a Prometheus instant query, whose value is what callWeb
// or queryPrometheus make of the answer. A hook's measurement and an
// autoscaler's reading both come from here.
func Call(ctx context.Context, policy *egress.Policy, provider manifest.HookProvider) (any, error) {
	switch {
	case provider.Web != nil:
		return callWeb(ctx, policy, provider.Web)
	case provider.Prometheus != nil:
		return queryPrometheus(ctx, policy, provider.Prometheus)
	}
	return nil, errors.New("the provider names neither web nor prometheus")
}

// callWeb makes a web metric's call under policy, following redirects it
// lets through; the value is the body, or the text its jsonPath selects.
// An answer other than 2xx is an error naming its status, never quoting
// its body.
func callWeb(ctx context.Context, policy *egress.Policy, web *manifest.WebProvider) (any, error) {
	timeout := defaultTimeout
	if web.TimeoutSeconds > 0 {
		timeout = time.Duration(web.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	method := cmp.Or(web.Method, http.MethodGet)
	var body io.Reader
	if web.Body != "" {
		body = strings.NewReader(web.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, web.URL, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, web.URL, err)
	}
	for _, h := range web.Headers {
		req.Header.Add(h.Key, h.Value)
	}
	// Hook bodies are JSON (Argo Rollouts' jsonBody), unless a header
	// says otherwise.
	if web.Body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	call := fmt.Sprintf("%s %s", method, req.URL.Redacted())
	options := egress.ClientOptions{FollowRedirects: true}
	if web.Insecure {
		options.TLS = &tls.Config{InsecureSkipVerify: true} // the metric asked for it
	}
	resp, err := policy.Client(options).Do(req)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%s: no answer within %s (timeoutSeconds)", call, timeout)
	}
	if err != nil {
		if urlErr := (*url.Error)(nil); errors.As(err, &urlErr) {
			err = urlErr.Err // call names the method and URL already
		}
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: reading the body: %w", call, err)
	case len(data) > maxBodyBytes:
		return nil, fmt.Errorf("%s: the body is larger than %d bytes", call, maxBodyBytes)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, fmt.Errorf("%s: %s", call, resp.Status)
	case web.JSONPath == "":
		return string(data), nil
	}
	value, err := hook.JSONPath(data, web.JSONPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	return value, nil
}

// queryPrometheus runs a Prometheus metric's instant query under policy,
// at Prometheus's own now. The value: a float64 for a scalar or one
// sample, a []float64 for several samples (empty for none), a string for
// a string.
func queryPrometheus(ctx context.Context, policy *egress.Policy, prom *manifest.PrometheusProvider) (any, error) {
	value, err := instantQuery(ctx, policy, prom)
	if err != nil {
		return nil, err
	}
	switch v := value.(type) {
	case *model.Scalar:
		return float64(v.Value), nil
	case model.Vector:
		if len(v) == 1 {
			return float64(v[0].Value), nil
		}
		samples := make([]float64, len(v))
		for i, s := range v {
			samples[i] = float64(s.Value)
		}
		return samples, nil
	case *model.String:
		return v.Value, nil
	}
	return nil, wrongType(prom, value.Type(), "an instant vector or a scalar")
}

// Sample is one series of an instant vector: its labels and its value.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// QuerySamples runs prom's instant query under policy and returns its
// samples with their labels, for values per series (an autoscaler's
// value per instance, told apart by a label). A query whose result is
// not an instant vector is an error.
func QuerySamples(ctx context.Context, policy *egress.Policy, prom *manifest.PrometheusProvider) ([]Sample, error) {
	value, err := instantQuery(ctx, policy, prom)
	if err != nil {
		return nil, err
	}
	vector, ok := value.(model.Vector)
	if !ok {
		return nil, wrongType(prom, value.Type(), "an instant vector")
	}
	samples := make([]Sample, len(vector))
	for i, s := range vector {
		labels := make(map[string]string, len(s.Metric))
		for name, v := range s.Metric {
			labels[string(name)] = string(v)
		}
		samples[i] = Sample{Labels: labels, Value: float64(s.Value)}
	}
	return samples, nil
}

// instantQuery runs prom's query under policy at Prometheus's own now.
func instantQuery(ctx context.Context, policy *egress.Policy, prom *manifest.PrometheusProvider) (model.Value, error) {
	ctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	client, err := promapi.NewClient(promapi.Config{Address: prom.Address, Client: policy.Client(egress.ClientOptions{FollowRedirects: true})})
	if err != nil {
		return nil, fmt.Errorf("prometheus address %s: %w", prom.Address, err)
	}
	value, _, _, err := promv1.NewAPI(client).Query(ctx, prom.Query, time.Time{})
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("prometheus %s: query %s: no answer within %s", prom.Address, prom.Query, defaultTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: query %s: %w", prom.Address, prom.Query, err)
	}
	return value, nil
}

func wrongType(prom *manifest.PrometheusProvider, got model.ValueType, want string) error {
	return fmt.Errorf("prometheus %s: query %s gave a %s, want %s (a range selector such as x[5m] needs a function: rate(x[5m]))",
		prom.Address, prom.Query, got, want)
}
