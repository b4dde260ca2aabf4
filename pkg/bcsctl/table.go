package bcsctl

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
)

// none stands for an empty cell, as kubectl writes it.
const none = "<none>"

// column is one column of a table of T.
type column[T any] struct {
	header string
	value  func(T) string
	// wide columns show with -o wide only.
	wide bool
}

// table is rows of cells under a header, printed aligned.
type table struct {
	header []string
	rows   [][]string
}

// tableOf lays out items in cols; namespace, when not nil, adds a first
// NAMESPACE column (-A).
func tableOf[T any](items []T, cols []column[T], wide bool, namespace func(T) string) *table {
	if namespace != nil {
		cols = append([]column[T]{{header: "NAMESPACE", value: namespace}}, cols...)
	}
	t := &table{}
	for _, c := range cols {
		if !c.wide || wide {
			t.header = append(t.header, c.header)
		}
	}
	for _, item := range items {
		var row []string
		for _, c := range cols {
			if !c.wide || wide {
				row = append(row, cell(c.value(item)))
			}
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// prefix puts prefix before every cell of the column headed header.
func (t *table) prefix(header, prefix string) {
	i := slices.Index(t.header, header)
	if i < 0 {
		return
	}
	for _, row := range t.rows {
		row[i] = prefix + row[i]
	}
}

func cell(s string) string {
	if s == "" {
		return none
	}
	// A tab or newline would break the alignment.
	return strings.NewReplacer("\t", " ", "\n", " ").Replace(s)
}

// write prints the table with columns three spaces apart; an indent
// prefixes every line (a table inside describe).
func (t *table) write(w io.Writer, indent string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	for _, row := range append([][]string{t.header}, t.rows...) {
		if _, err := fmt.Fprintln(tw, indent+strings.Join(row, "\t")); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// age is how long ago t was, in kubectl's short form: 45s, 3m20s, 17m,
// 5h3m, 20h, 3d4h, 40d, 2y; <unknown> for a zero time.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return shortDuration(now.Sub(t))
}

func shortDuration(d time.Duration) string {
	switch s := int64(d.Round(time.Second) / time.Second); {
	case s < 0:
		return "0s"
	case s < 120:
		return fmt.Sprintf("%ds", s)
	case s < 10*60:
		if s%60 == 0 {
			return fmt.Sprintf("%dm", s/60)
		}
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 3*3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 8*3600:
		if m := s / 60 % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", s/3600, m)
		}
		return fmt.Sprintf("%dh", s/3600)
	case s < 48*3600:
		return fmt.Sprintf("%dh", s/3600)
	case s < 8*86400:
		if h := s / 3600 % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", s/86400, h)
		}
		return fmt.Sprintf("%dd", s/86400)
	case s < 2*365*86400:
		return fmt.Sprintf("%dd", s/86400)
	default:
		return fmt.Sprintf("%dy", s/(365*86400))
	}
}

// taskState shows a Mesos task state as a word ("TASK_RUNNING" →
// "Running"); an instance with none is Pending.
func taskState(s string) string {
	if s == "" {
		return "Pending"
	}
	return title(strings.TrimPrefix(s, "TASK_"))
}

// instanceState is an instance's state as a word: Stopped when the
// operator stopped it (its last task's state says only that it was
// killed), else its task state's.
func instanceState(i apiv1.InstanceView) string {
	if i.Stopped {
		return "Stopped"
	}
	return taskState(i.State)
}

// title writes an upper-case or lower-case word list as one capitalised
// word: "GONE_BY_OPERATOR" → "GoneByOperator", "draining" → "Draining".
func title(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(strings.ToLower(s), "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// optBool shows an optional verdict: <none> when there is none.
func optBool(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// portList shows ports as name:port, sorted by name.
func portList(ports map[string]uint32) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(ports)) {
		parts = append(parts, fmt.Sprintf("%s:%d", name, ports[name]))
	}
	return strings.Join(parts, ",")
}

// number shows a float without noise (0.6000000000000001 → 0.6).
func number(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 32)
}

// pendingSummary says why an instance finds no agent, as the scheduler's
// message does: "0/3 agents fit: hostname UNIQUE 2, cordoned 1".
func pendingSummary(p *apiv1.Pending) string {
	if p == nil {
		return ""
	}
	s := fmt.Sprintf("%d/%d agents fit", p.Fit, p.Agents)
	var reasons []string
	for _, r := range p.Reasons {
		reasons = append(reasons, fmt.Sprintf("%s %d", r.Reason, r.Count))
	}
	if len(reasons) > 0 {
		s += ": " + strings.Join(reasons, ", ")
	}
	return s
}
