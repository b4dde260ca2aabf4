package hook

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// A measured value, the result of a condition, is typed by its provider:
//   - web: a string, the text the jsonPath selected or the whole body;
//   - Prometheus: a float64 for a scalar or a vector of one sample, a
//     []float64 for a vector of several samples, an empty []float64 for
//     none (len(result) == 0 tells), a string for a string result.
//
// asInt and asFloat turn a number or a numeric string into a number, so
// the seed's asInt(result) < 30 reads a web value and a Prometheus one.

// conditionEnv is what a condition sees.
type conditionEnv struct {
	Result any `expr:"result"`
}

// conditionOptions are the language of conditions: expr-lang with
// result, asInt and asFloat, yielding a bool.
var conditionOptions = []expr.Option{
	expr.Env(conditionEnv{}),
	expr.AsBool(),
	expr.Function("asInt", func(params ...any) (any, error) { return asInt(params[0]) }, new(func(any) int)),
	expr.Function("asFloat", func(params ...any) (any, error) { return asFloat(params[0]) }, new(func(any) float64)),
}

// compileCondition compiles a condition, with an error of one line.
func compileCondition(condition string) (*vm.Program, error) {
	program, err := expr.Compile(condition, conditionOptions...)
	return program, exprError(err)
}

// evaluate runs condition on result.
func evaluate(condition string, result any) (bool, error) {
	c, err := CompileCondition(condition)
	if err != nil {
		return false, err
	}
	return c.Holds(result)
}

// Condition is a compiled condition, for a caller that judges many values
// by one (an autoscaler's allocatedCondition, once per instance): the
// compilation costs far more than a run. It may be run from several
// goroutines.
type Condition struct{ program *vm.Program }

// CompileCondition compiles a condition in the language of hook
// conditions, with an error of one line.
func CompileCondition(condition string) (*Condition, error) {
	program, err := compileCondition(condition)
	if err != nil {
		return nil, err
	}
	return &Condition{program: program}, nil
}

// Holds runs c on result.
func (c *Condition) Holds(result any) (bool, error) {
	out, err := expr.Run(c.program, conditionEnv{Result: result})
	if err != nil {
		return false, exprError(err)
	}
	return out.(bool), nil // AsBool: a bool, or Run's error
}

// exprError drops expr's multi-line source snippet, which a status
// message and a field error cannot show, keeping the column.
func exprError(err error) error {
	var fileErr *file.Error
	if !errors.As(err, &fileErr) {
		return err
	}
	if fileErr.Snippet == "" {
		return errors.New(fileErr.Message)
	}
	return fmt.Errorf("%s (column %d)", fileErr.Message, fileErr.Column+1)
}

// asInt is Argo Rollouts' asInt: a float (Prometheus values are floats)
// is truncated toward zero; a string is parsed, as an integer or else as
// a float.
func asInt(v any) (int, error) {
	switch v := v.(type) {
	case int:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("asInt: %v is not a number", v)
		}
		return int(v), nil
	case string:
		s := strings.TrimSpace(v)
		if n, err := strconv.Atoi(s); err == nil {
			return n, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return asInt(f)
		}
		return 0, fmt.Errorf("asInt: %q is not a number", shorten(v))
	}
	return 0, notANumber("asInt", v)
}

// asFloat turns a number or a numeric string into a float64.
func asFloat(v any) (float64, error) {
	switch v := v.(type) {
	case int:
		return float64(v), nil
	case float64:
		return v, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, fmt.Errorf("asFloat: %q is not a number", shorten(v))
		}
		return f, nil
	}
	return 0, notANumber("asFloat", v)
}

func notANumber(fn string, v any) error {
	if list, ok := v.([]float64); ok {
		return fmt.Errorf("%s: the value is a list of %d samples, not one number (len(result) and all(result, # < 30) read lists)", fn, len(list))
	}
	return fmt.Errorf("%s: want a number or a numeric string, got %T %s", fn, v, formatValue(v))
}

// Judge judges a measured value by the metric's conditions, as Argo
// Rollouts does: no condition → Successful; a success condition alone →
// Successful when true, else Failed; a failure condition alone → Failed
// when true, else Successful; both → Failed when the failure condition
// holds, Successful when the success condition does, else Inconclusive.
// A condition that cannot be evaluated gives Error. The message says
// which condition decided, and on what value.
func Judge(m manifest.HookMetric, result any) (Phase, string) {
	success, failure := m.SuccessCondition, m.FailureCondition
	var succeeded, failed bool
	if failure != "" {
		ok, err := evaluate(failure, result)
		if err != nil {
			return Error, fmt.Sprintf("failureCondition %s: %v (value %s)", failure, err, shorten(formatValue(result)))
		}
		failed = ok
	}
	if success != "" {
		ok, err := evaluate(success, result)
		if err != nil {
			return Error, fmt.Sprintf("successCondition %s: %v (value %s)", success, err, shorten(formatValue(result)))
		}
		succeeded = ok
	}
	value := shorten(formatValue(result))
	switch {
	case failed:
		return Failed, fmt.Sprintf("failureCondition %s is true for %s", failure, value)
	case success == "" || succeeded:
		return Successful, ""
	case failure == "":
		return Failed, fmt.Sprintf("successCondition %s is false for %s", success, value)
	default:
		return Inconclusive, fmt.Sprintf("neither successCondition %s nor failureCondition %s is true for %s", success, failure, value)
	}
}

// Measure makes the measurement of one provider call: err (the call
// failed) gives Error with err's message, a value is judged.
func Measure(m manifest.HookMetric, result any, err error, startedAt, finishedAt time.Time) Measurement {
	out := Measurement{StartedAt: startedAt, FinishedAt: finishedAt}
	if err != nil {
		out.Phase, out.Message = Error, truncate(err.Error(), MaxValueBytes)
		return out
	}
	out.Value = truncate(formatValue(result), MaxValueBytes)
	out.Phase, out.Message = Judge(m, result)
	return out
}

// MaxValueBytes bounds the value a measurement keeps, and the message of
// an erring call (which may quote the body): a body read without a
// jsonPath can be large, and a run record holds ten measurements of each
// metric.
const MaxValueBytes = 1024

// formatValue writes a measured value as a measurement keeps it: a
// string as it is, a number in its shortest form ("45", "0.25"), a list
// as [1, 2].
func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []float64:
		parts := make([]string, len(v))
		for i, f := range v {
			parts[i] = formatValue(f)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// shorten keeps a value quoted in a message readable.
func shorten(s string) string { return truncate(s, 120) }

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) { // never split a character
		cut--
	}
	return s[:cut] + "…"
}
